#!/usr/bin/env python3
"""Link previews, read as a chat app or a social network reads them: by `metadata_parser` (PyPI),
a link-preview parser written by others.

Starts `innerpeace serve` on a free loopback port, reads `/`, `/q/0`, `/q/today` and the page of a
quote with `<`, `&` and quotes in it, and checks the Open Graph and Twitter tags (title,
description = the share message, absolute and versioned og:image, width, height, alt, og:url,
twitter:card = summary_large_image); then fetches the og:image it found: a JPEG of 1200x630,
under 600 KB.

        .build/pytools/bin/python Tests/pages/preview_test.py --binary .build/debug/innerpeace

Prints one line per check and `N passed, M failed`; exits 1 if any check failed.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import warnings

import metadata_parser  # PyPI

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from testkit import Results, fetch, free_port, jpeg_size  # noqa: E402

warnings.filterwarnings("ignore")
results = Results()


def check(condition, name):
    results.check(name, condition)


def get(url, accept=None):
    status, headers, body = fetch(url, timeout=60, headers={"Accept": accept} if accept else None)
    if status >= 400:
        raise urllib.error.HTTPError(url, status, "", headers, None)
    return status, headers, body


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/debug/innerpeace")
    args = parser.parse_args()
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as catalog:
        # A catalog whose second quote is hostile to HTML, with the bundled photos.
        bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Resources")
        quotes = json.load(open(os.path.join(bundled, "quotes.json")))
        quotes.insert(1, {"text": 'Peace <b>is</b> "here" & now', "author": "A <Tag> & 'Co'"})
        for name in os.listdir(bundled):
            if name.endswith(".jpg") or name == "pictures.json":
                os.symlink(os.path.abspath(os.path.join(bundled, name)), os.path.join(catalog, name))
        json.dump(quotes, open(os.path.join(catalog, "quotes.json"), "w"), ensure_ascii=False)
        server = subprocess.Popen(
            [args.binary, "serve", "--port", str(port), "--in-process", "--catalog", catalog],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 60
            while time.time() < deadline:
                try:
                    get(origin + "/healthz")
                    break
                except OSError:
                    time.sleep(0.2)
            run(origin, quotes)
        finally:
            server.terminate()
            server.wait(timeout=30)
    return results.summary()


def run(origin, quotes):
    images = set()
    for path in ["/", "/q/0", "/q/today", "/q/1"]:
        status, headers, body = get(origin + path, accept="text/html")
        check(status == 200 and headers.get("Content-Type", "").startswith("text/html"), f"{path} is an HTML page")
        page = metadata_parser.MetadataParser(html=body.decode("utf-8"), search_head_only=True)
        og = page.parsed_result.metadata.get("og", {})
        twitter = page.parsed_result.metadata.get("twitter", {})
        check(og.get("title", "").startswith("Inner Peace"), f"{path} og:title {og.get('title')!r}")
        check(og.get("description"), f"{path} og:description is the share message")
        check(og.get("image:width") == "1200" and og.get("image:height") == "630", f"{path} og:image size 1200x630")
        check(og.get("image:alt") == og.get("description"), f"{path} og:image:alt is the quote")
        check(twitter.get("card") == "summary_large_image", f"{path} twitter:card summary_large_image")
        image = og.get("image", "")
        check(image.startswith(origin + "/cards/") and "v=" in image, f"{path} og:image absolute, versioned: {image}")
        check(og.get("url", "").startswith(origin + "/"), f"{path} og:url absolute: {og.get('url')}")
        if path == "/q/0":
            check(og.get("url") == origin + "/q/0", "/q/0 og:url is the page")
            q = quotes[0]
            check(q["text"] in og.get("description", ""), "/q/0 describes quote 0")
        if path == "/q/1":
            q = quotes[1]
            check(q["text"] in og.get("description", "") and q["author"] in og.get("description", ""),
                  "/q/1: text with < & \" ' comes back whole from the tags")
            check(b"<b>is</b>" not in body and b"<Tag>" not in body, "/q/1: the quote's markup is escaped")
        images.add(image)
    for image in sorted(images):
        status, headers, data = get(image)
        size = jpeg_size(data)
        check(status == 200 and headers.get("Content-Type") == "image/jpeg", f"og:image is a JPEG: {image}")
        check(size == (1200, 630), f"og:image is 1200x630 ({size})")
        check(len(data) < 600_000, f"og:image is under 600 KB ({len(data)} bytes)")
    status, headers, _ = get(origin + "/favicon.ico")
    check(status == 200 and headers.get("Content-Type") == "image/x-icon", "favicon.ico")
    try:
        get(origin + "/q/99999", accept="text/html")
        check(False, "/q/99999 is a 404")
    except urllib.error.HTTPError as error:
        check(error.code == 404 and (error.headers or {}).get("Content-Type", "").startswith("text/html"),
              "/q/99999 is an HTML 404 for a browser")


if __name__ == "__main__":
    sys.exit(main())
