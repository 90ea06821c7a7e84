#!/usr/bin/env python3
"""CORS in a real browser: a page on another origin reads cards and quotes with fetch().

Starts a static page on a free loopback port (its origin `http://127.0.0.1:PAGE`), then
`innerpeace serve --cors-origin http://127.0.0.1:PAGE` on another port, and headless Chromium
(driven over the DevTools protocol, as page_test.py does). From the listed origin, fetch()
reads a card with an `If-None-Match` header (so the browser sends a real preflight first), its
ETag and Content-Location, a 304 on revalidation, a quote's JSON and a 404's JSON error. From an
origin not listed (`http://localhost:PAGE`, another origin for the browser) the same fetch() is
refused by the browser (TypeError), as it is with CORS off.

        python3 Tests/browser/cors_test.py --binary .build/debug/innerpeace

Prints one line per check and ends with `N passed, M failed`; exits 1 if any check failed.
"""

import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from page_test import CDP, CDPError, LineReader, find_chromium, run_checks, stop  # noqa: E402

BUDGET_SECONDS = 90.0

# Runs in the page; returns what the page could read.
READ_JS = """
(async (base) => {
  const out = {};
  try {
    const card = await fetch(base + "/cards/0.png?w=240&h=200", {headers: {"If-None-Match": '"nothing"'}});
    out.status = card.status;
    out.etag = card.headers.get("ETag");
    out.location = card.headers.get("Content-Location");
    out.bytes = (await card.arrayBuffer()).byteLength;
    const again = await fetch(base + "/cards/0.png?w=240&h=200", {headers: {"If-None-Match": out.etag}, cache: "no-store"});
    out.revalidated = again.status;
    const quote = await (await fetch(base + "/quotes/0")).json();
    out.quoteIndex = quote.index;
    const missing = await fetch(base + "/cards/999999.png");
    out.missingStatus = missing.status;
    out.missingMessage = (await missing.json()).error.message;
  } catch (error) {
    out.error = String(error);
  }
  return out;
})(%s)
"""


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the handler's name
        body = b"<!doctype html><title>another site</title><p>a page of another origin"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def run(args, results, deadline, children):
    page_server = children["page"] = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=page_server.serve_forever, daemon=True).start()
    page_port = page_server.server_address[1]
    listed = "http://127.0.0.1:%d" % page_port

    server = children["server"] = subprocess.Popen(
        [os.path.abspath(args.binary), "serve", "--host", "127.0.0.1", "--port", "0", "--in-process",
         "--cors-origin", listed],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    server_out = children["server_out"] = LineReader(server.stdout)
    server_out.start()
    match = server_out.wait_for(r"listening on http://127\.0\.0\.1:(\d+)", deadline.left(30))
    if not results.check("the server starts and names its port", match is not None, "no 'listening on' line"):
        return
    base = "http://127.0.0.1:%s" % match.group(1)

    chromium = find_chromium()
    if not results.check("chromium is on PATH", chromium is not None, "apt-get install -y chromium"):
        return
    profile = children["profile"] = tempfile.mkdtemp(prefix="innerpeace-chromium-")
    browser = children["browser"] = subprocess.Popen(
        [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--remote-debugging-port=0", "--user-data-dir=" + profile, "about:blank"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )
    browser_err = children["browser_err"] = LineReader(browser.stderr)
    browser_err.start()
    match = browser_err.wait_for(r"DevTools listening on (ws://\S+)", deadline.left(20))
    if not results.check("chromium starts with DevTools", match is not None, "no 'DevTools listening' line"):
        return
    cdp = children["cdp"] = CDP(match.group(1), timeout=max(1.0, deadline.left(10)))
    target = cdp.call("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
    cdp.session = cdp.call("Target.attachToTarget", {"targetId": target, "flatten": True}, browser=True)["sessionId"]
    for method in ("Page.enable", "Runtime.enable", "Log.enable"):
        cdp.call(method)

    def read_from(origin):
        cdp.call("Page.navigate", {"url": origin + "/"})
        ok = False
        while deadline.left(1) > 0 and not ok:
            try:
                ok = cdp.evaluate("document.readyState === 'complete' && location.origin === %s" % json.dumps(origin))
            except CDPError:
                ok = False
            if not ok:
                time.sleep(0.05)
        return cdp.evaluate(READ_JS % json.dumps(base), timeout=max(1.0, deadline.left(30))) or {}

    seen = read_from(listed)
    results.check("a listed origin reads a card after a preflight", seen.get("status") == 200 and seen.get("bytes", 0) > 0, str(seen))
    results.check("it reads ETag and Content-Location", bool(seen.get("etag")) and bool(seen.get("location")), str(seen))
    results.check("its revalidation is a readable 304", seen.get("revalidated") == 304, str(seen))
    results.check("it reads a quote's JSON", seen.get("quoteIndex") == 0, str(seen))
    results.check(
        "it reads a 404's JSON error",
        seen.get("missingStatus") == 404 and "999999" in (seen.get("missingMessage") or ""), str(seen))

    refused = read_from("http://localhost:%d" % page_port)
    results.check(
        "an origin not listed cannot read a card", "TypeError" in (refused.get("error") or "") and "status" not in refused,
        str(refused))


def main():
    return run_checks(run, BUDGET_SECONDS, __doc__.splitlines()[0])

if __name__ == "__main__":
    sys.exit(main())
