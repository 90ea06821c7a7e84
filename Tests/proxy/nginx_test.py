#!/usr/bin/env python3
"""Cards through nginx with its default proxy buffers: every response's header block must fit in
the 4 KiB nginx keeps for it (a larger one is a 502).

Makes a catalog in a temporary folder whose quotes are the longest the catalog accepts (5,000
characters of CJK, of emoji, of English words) and whose one picture has a long non-ASCII name,
starts `innerpeace serve` on it (in-process renders), and nginx as an unprivileged reverse proxy in
front of it on another free loopback port (`nginx -p DIR -c nginx.conf -e error.log -g 'daemon off;'`,
no buffer settings: the defaults). Then, through nginx, checks that each quote's card under
/cards, /random (each quote by seed), /today and /card (the longest English text nginx's own
8 KiB request line admits) answers 200 with an image, not 502, and that each header block the
server sent is under 4,096 bytes.

        python3 Tests/proxy/nginx_test.py --binary .build/debug/innerpeace

Prints one line per check and `N passed, M failed`; exits 1 if any check failed. Every wait is
bounded (server and nginx start within 60 s, each request within 120 s).
"""

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from testkit import Results, free_port  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The longest texts a catalog accepts: 5,000 characters (and at most 20,000 bytes).
CJK = ("静かな湖に映る月の光、心の平和。" * 400)[:5000]
EMOJI = ("\U0001F33F\U0001F30A\U0001F319\U0001F54A\U0001F9D8" * 1000)[:5000]
ENGLISH = ("Breathe in peace and let the quiet morning settle every restless thought. " * 80)[:5000].rstrip()
PICTURE = "静" * 80 + ".jpg"  # 243 bytes of UTF-8: 729 once percent-encoded


def request(port, path, timeout=120):
    """(status, raw header block size, headers, body) of a GET on 127.0.0.1:port."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        headers = response.getheaders()
        block = len("HTTP/1.1 %d %s\r\n" % (response.status, response.reason))
        block += sum(len(name) + 2 + len(value.encode("latin-1", "replace")) + 2 for name, value in headers) + 2
        return response.status, block, dict(headers), body
    finally:
        connection.close()


def wait_for(port, process, what, results):
    deadline = time.monotonic() + 60
    while True:
        try:
            status, _, _, _ = request(port, "/healthz", timeout=2)
            if status == 200:
                return True
        except OSError:
            pass
        if time.monotonic() > deadline or process.poll() is not None:
            results.check("%s starts" % what, False)
            return False
        time.sleep(0.2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    args = parser.parse_args()
    results = Results()
    work = tempfile.mkdtemp(prefix="innerpeace-nginx-")
    catalog = os.path.join(work, "catalog")
    os.makedirs(catalog)
    quotes = [{"text": CJK, "author": "佚名"}, {"text": EMOJI, "author": ""}, {"text": ENGLISH, "author": "Anonymous"}]
    with open(os.path.join(catalog, "quotes.json"), "w", encoding="utf-8") as handle:
        json.dump(quotes, handle, ensure_ascii=False)
    with open(os.path.join(catalog, "pictures.json"), "w", encoding="utf-8") as handle:
        json.dump([PICTURE], handle, ensure_ascii=False)
    shutil.copyfile(os.path.join(ROOT, "Resources", "aqua.jpg"), os.path.join(catalog, PICTURE))

    upstream = free_port()
    port = free_port()
    prefix = os.path.join(work, "nginx")
    os.makedirs(prefix)
    with open(os.path.join(prefix, "nginx.conf"), "w") as handle:
        # No buffer settings: proxy_buffer_size stays at its default, one memory page (4 KiB).
        handle.write("""
worker_processes 1;
pid %(prefix)s/nginx.pid;
error_log %(prefix)s/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path %(prefix)s/body;
  proxy_temp_path %(prefix)s/proxy;
  fastcgi_temp_path %(prefix)s/fastcgi;
  uwsgi_temp_path %(prefix)s/uwsgi;
  scgi_temp_path %(prefix)s/scgi;
  server {
    listen 127.0.0.1:%(port)d;
    location / {
      proxy_pass http://127.0.0.1:%(upstream)d;
      proxy_http_version 1.1;
      proxy_read_timeout 120s;
    }
  }
}
""" % {"prefix": prefix, "port": port, "upstream": upstream})

    server = subprocess.Popen(
        [args.binary, "serve", "--port", str(upstream), "--in-process", "--concurrency", "2",
         "--catalog", catalog, "--public-url", "http://127.0.0.1:%d" % port],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proxy = None
    try:
        if not wait_for(upstream, server, "the server", results):
            return results.summary()
        proxy = subprocess.Popen(
            [args.nginx, "-p", prefix, "-c", os.path.join(prefix, "nginx.conf"), "-e",
             os.path.join(prefix, "error.log"), "-g", "daemon off;"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if not wait_for(port, proxy, "nginx", results):
            return results.summary()

        english = ENGLISH
        # nginx's own limit on a request line is 8 KiB: the longest English text that fits.
        while len("/card.png?text=" + urllib.parse.quote(english, safe="")) > 8000:
            english = english[:-100]
        paths = []
        for index, name in enumerate(["CJK", "emoji", "English"]):
            paths.append(("/cards/%d.png (%s, 5,000 characters)" % (index, name), "/cards/%d.png" % index))
            paths.append(("/cards/%d.jpg?picture= (%s)" % (index, name),
                          "/cards/%d.jpg?picture=%s" % (index, urllib.parse.quote(PICTURE, safe=""))))
        for seed in range(12):
            paths.append(("/random.webp?seed=%d" % seed, "/random.webp?seed=%d" % seed))
        paths.append(("/today.png", "/today.png"))
        paths.append(("/card.png (English, %d characters)" % len(english),
                      "/card.png?text=" + urllib.parse.quote(english, safe="")))
        for name, path in paths:
            try:
                status, block, headers, body = request(port, path)
            except OSError as error:
                results.check("%s through nginx" % name, False, str(error))
                continue
            results.check("%s through nginx: 200 with an image, header block %d bytes < 4096" % (name, block),
                          status == 200 and headers.get("Content-Type", "").startswith("image/")
                          and len(body) > 0 and block < 4096,
                          "status %d, %d bytes of headers" % (status, block))
            results.check("%s: every header is ASCII" % name,
                          all(value.isascii() for value in headers.values()), str(headers))
    finally:
        for process in (proxy, server):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        shutil.rmtree(work, ignore_errors=True)
    return results.summary()


if __name__ == "__main__":
    sys.exit(main())
