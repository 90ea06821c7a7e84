#!/usr/bin/env python3
"""The subscribable feeds, read by parsers written by others: `/calendar.ics` with `icalendar`
(through Tests/ical/validate_ics.py) and `/feed.xml` with `feedparser`, both from PyPI.

Starts `innerpeace serve` on a free loopback port (in-process renders, 127.0.0.1 allowed, Europe/Paris, reminders at
8:00), then checks that
- the calendar is a valid iCalendar of 14 daily events from today at 8:00 in Paris, each UID its
  local date, each URL the quote's page; two fetches give the same UIDs (and bytes);
- the Atom feed parses without errors (feedparser's `bozo` is 0), has 7 entries, newest first,
  each with a unique id, a title and summary (the share message), a link to the quote's page, and
  a JPEG enclosure; the first enclosure serves a 1200x630 JPEG, sent immutable;
- each entry's page link answers 200 with HTML.

        .build/pytools/bin/python Tests/feeds/feeds_test.py --binary .build/debug/innerpeace

Prints one line per check and `N passed, M failed`; exits 1 if any check failed.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import feedparser  # noqa: E402  (PyPI)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from testkit import Results, fetch, free_port, jpeg_size  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VALIDATOR = os.path.join(ROOT, "Tests", "ical", "validate_ics.py")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    args = parser.parse_args()
    results = Results()
    port = free_port()
    server = subprocess.Popen(
        [args.binary, "serve", "--port", str(port), "--in-process", "--concurrency", "2",
         "--time-zone", "Europe/Paris", "--reminder-hour", "8",
         # A checked origin: the cards its feeds link are then cached publicly, as in production.
         "--allowed-host", "127.0.0.1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = "http://127.0.0.1:%d" % port
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                fetch(base + "/healthz", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    print("FAIL - the server did not start")
                    print("0 passed, 1 failed")
                    return 1
                time.sleep(0.2)

        # The calendar.
        status, headers, body = fetch(base + "/calendar.ics")
        results.check("calendar answers 200 text/calendar", status == 200
                      and headers.get("Content-Type", "").startswith("text/calendar"), str(headers))
        with tempfile.NamedTemporaryFile(suffix=".ics", delete=False) as handle:
            handle.write(body)
            path = handle.name
        check = subprocess.run(
            [sys.executable, VALIDATOR, path, "--days", "14", "--tz", "Europe/Paris", "--hour", "8",
             "--base-url", base, "--from-today", "--quote-of-the-day"],
            capture_output=True, text=True, timeout=60)
        os.unlink(path)
        results.check("icalendar validates it (14 days from today at 8:00 Paris, UIDs by date, quote pages)",
                      check.returncode == 0, check.stdout + check.stderr)
        _, _, again = fetch(base + "/calendar.ics")
        uids = re.findall(rb"UID:([^\r]+)", body)
        results.check("a second fetch gives the same UIDs and bytes", uids == re.findall(rb"UID:([^\r]+)", again)
                      and body == again and len(uids) == 14)

        # The Atom feed.
        status, headers, body = fetch(base + "/feed.xml")
        results.check("feed answers 200 application/atom+xml", status == 200
                      and headers.get("Content-Type", "").startswith("application/atom+xml"), str(headers))
        feed = feedparser.parse(body)
        results.check("feedparser reads it without errors", feed.bozo == 0, repr(feed.get("bozo_exception")))
        results.check("it is Atom 1.0", feed.version == "atom10", feed.version)
        entries = feed.entries
        results.check("7 entries", len(entries) == 7, str(len(entries)))
        ids = [entry.get("id") for entry in entries]
        results.check("entry ids are unique", len(set(ids)) == len(ids), str(ids))
        dates = [entry.get("updated_parsed") for entry in entries]
        results.check("newest first", dates == sorted(dates, reverse=True))
        for number, entry in enumerate(entries, 1):
            results.check("entry %d has a title and a summary" % number,
                          bool(entry.get("title")) and entry.get("summary") == entry.get("title"))
            page = entry.get("link", "")
            results.check("entry %d links its quote page" % number, re.match(re.escape(base) + r"/q/\d+$", page),
                          page)
            enclosures = [link for link in entry.get("links", []) if link.get("rel") == "enclosure"]
            results.check("entry %d has one JPEG enclosure" % number,
                          len(enclosures) == 1 and enclosures[0].get("type") == "image/jpeg", str(enclosures))
        if entries:
            image = [link for link in entries[0].links if link.get("rel") == "enclosure"][0]["href"]
            status, headers, data = fetch(image)
            results.check("the first enclosure is a 1200x630 JPEG", status == 200 and jpeg_size(data) == (1200, 630),
                          "%s %s" % (status, jpeg_size(data)))
            results.check("the enclosure is sent immutable",
                          headers.get("Cache-Control") == "public, max-age=31536000, immutable",
                          headers.get("Cache-Control"))
            status, headers, _ = fetch(entries[0].link)
            results.check("the first entry's page answers HTML", status == 200
                          and headers.get("Content-Type", "").startswith("text/html"), str(status))
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    return results.summary()


if __name__ == "__main__":
    sys.exit(main())
