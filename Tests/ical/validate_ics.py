#!/usr/bin/env python3
"""Validates an `innerpeace schedule` calendar with a real iCalendar parser.

    python3 Tests/ical/validate_ics.py FILE.ics --days N --tz ZONE --hour H \
        [--base-url URL | --no-url] [--quotes quotes.json]

Parses FILE with the `icalendar` package (pip install icalendar) and checks the RFC 5545
framing (CRLF line ends, lines of at most 75 octets, valid UTF-8), the calendar's VERSION and
PRODID, and that there are exactly N VEVENTs, each with UID, DTSTAMP, DTSTART, SUMMARY
"Inner Peace", a DESCRIPTION and (with --base-url) URL {base}/q/{index}; that each UID is
innerpeace-daily-{local date of DTSTART}@innerpeace (the same day, the same UID); that the starts
are at H:00 local time in ZONE on N consecutive days, the first within a day of DTSTAMP; that
descriptions and UIDs never repeat; and, with --quotes (the output of `innerpeace quotes
--json`), that each description is the share message of the quote its URL names.

Prints one line per failed check and a final "P passed, F failed" line; exits 0 only when
nothing failed, 1 when a check failed, 2 when the file cannot be read or parsed.
"""

import argparse
import datetime
import json
import re
import sys

try:
    import icalendar
except ImportError:  # pragma: no cover - reported to the caller
    print("icalendar is not installed: pip install icalendar", file=sys.stderr)
    sys.exit(3)


def zone_for(name):
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    except ImportError:  # Python < 3.9
        import pytz

        return pytz.timezone(name)


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, condition, message):
        if condition:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL: " + message)
        return condition


def text(value):
    """A property's value as plain text (icalendar's vText is a str subclass)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return str(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--days", type=int, required=True)
    parser.add_argument("--tz", required=True)
    parser.add_argument("--hour", type=int, default=10)
    urls = parser.add_mutually_exclusive_group()
    urls.add_argument("--base-url")
    urls.add_argument("--no-url", action="store_true", help="events must have no URL")
    parser.add_argument("--quotes", help="JSON from `innerpeace quotes --json`")
    parser.add_argument(
        "--from-today", action="store_true", help="the first event is on DTSTAMP's local date (a feed), past or not"
    )
    parser.add_argument(
        "--quote-of-the-day", action="store_true", help="each day's quote of the day: quotes may repeat"
    )
    args = parser.parse_args()

    checks = Checks()
    try:
        with open(args.file, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        print("cannot read %s: %s" % (args.file, error))
        return 2

    # Framing, on the raw octets: icalendar is lenient about all of this.
    checks.check(raw.endswith(b"\r\n"), "the file does not end with CRLF")
    physical = raw.split(b"\r\n")
    if physical and physical[-1] == b"":
        physical = physical[:-1]
    for number, line in enumerate(physical, 1):
        checks.check(b"\n" not in line and b"\r" not in line, "line %d has a bare CR or LF" % number)
        checks.check(len(line) <= 75, "line %d has %d octets (more than 75)" % (number, len(line)))
        try:
            line.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            valid = False
        checks.check(valid, "line %d is not valid UTF-8 on its own (a fold split a character)" % number)
    checks.check(bool(physical) and physical[0] == b"BEGIN:VCALENDAR", "the file does not start with BEGIN:VCALENDAR")

    try:
        calendar = icalendar.Calendar.from_ical(raw)
    except Exception as error:  # the parser's own exceptions vary by version
        print("FAIL: icalendar cannot parse %s: %s" % (args.file, error))
        print("%d passed, %d failed" % (checks.passed, checks.failed + 1))
        return 2

    for component in calendar.walk():
        errors = getattr(component, "errors", None) or []
        checks.check(not errors, "%s has parse errors: %s" % (component.name, errors))

    checks.check(calendar.name == "VCALENDAR", "the top component is %s" % calendar.name)
    checks.check(text(calendar.get("VERSION")) == "2.0", "VERSION is %r" % text(calendar.get("VERSION")))
    prodid = text(calendar.get("PRODID"))
    checks.check(bool(prodid), "no PRODID")

    events = list(calendar.walk("VEVENT"))
    checks.check(len(events) == args.days, "%d VEVENTs, expected %d" % (len(events), args.days))

    zone = zone_for(args.tz)
    base = args.base_url.rstrip("/") if args.base_url else None
    url_pattern = re.compile(r"^" + re.escape(base) + r"/q/(\d+)$") if base else None
    quotes = None
    if args.quotes:
        with open(args.quotes, encoding="utf-8") as handle:
            quotes = {entry["index"]: entry for entry in json.load(handle)}

    starts = []
    descriptions = []
    uids = []
    for number, event in enumerate(events, 1):
        for name in ("UID", "DTSTAMP", "DTSTART", "SUMMARY", "DESCRIPTION"):
            checks.check(event.get(name) is not None, "event %d has no %s" % (number, name))
        uid = text(event.get("UID"))
        uids.append(uid)
        checks.check(bool(uid), "event %d has an empty UID" % number)
        summary = text(event.get("SUMMARY"))
        checks.check(summary == "Inner Peace", "event %d SUMMARY is %r" % (number, summary))
        description = text(event.get("DESCRIPTION"))
        descriptions.append(description)
        checks.check(bool(description and description.strip()), "event %d has an empty DESCRIPTION" % number)
        checks.check(
            event.get("DTEND") is None or event.get("DURATION") is None, "event %d has both DTEND and DURATION" % number
        )

        start = event.decoded("DTSTART") if event.get("DTSTART") is not None else None
        stamp = event.decoded("DTSTAMP") if event.get("DTSTAMP") is not None else None
        is_time = isinstance(start, datetime.datetime)
        checks.check(is_time, "event %d DTSTART is not a date-time: %r" % (number, start))
        if is_time:
            checks.check(start.tzinfo is not None, "event %d DTSTART is a floating time" % number)
            if start.tzinfo is not None:
                local = start.astimezone(zone)
                starts.append(local)
                expected_uid = "innerpeace-daily-%s@innerpeace" % local.date().isoformat()
                checks.check(uid == expected_uid, "event %d UID %r is not %r" % (number, uid, expected_uid))
                checks.check(
                    (local.hour, local.minute, local.second) == (args.hour, 0, 0),
                    "event %d starts at %s in %s, not %02d:00:00" % (number, local.isoformat(), args.tz, args.hour),
                )
                if number == 1 and args.from_today and isinstance(stamp, datetime.datetime) and stamp.tzinfo is not None:
                    checks.check(
                        local.date() == stamp.astimezone(zone).date(),
                        "the first event (%s) is not on DTSTAMP's local date (%s)" % (local, stamp.astimezone(zone)),
                    )
                elif number == 1 and isinstance(stamp, datetime.datetime) and stamp.tzinfo is not None:
                    ahead = start - stamp
                    checks.check(
                        datetime.timedelta(0) < ahead <= datetime.timedelta(hours=25),
                        "the first event (%s) is not within a day after DTSTAMP (%s)" % (start, stamp),
                    )

        url = text(event.get("URL"))
        if args.no_url:
            checks.check(url is None, "event %d has a URL without --base-url: %s" % (number, url))
        if url_pattern:
            match = url_pattern.match(url or "")
            checks.check(match is not None, "event %d URL %r is not %s/q/{index}" % (number, url, base))
            if match and quotes is not None:
                entry = quotes.get(int(match.group(1)))
                checks.check(entry is not None, "event %d links quote %s, not in the catalog" % (number, match.group(1)))
                if entry is not None:
                    checks.check(
                        description == entry["shareMessage"],
                        "event %d DESCRIPTION %r is not quote %s's share message %r"
                        % (number, description, match.group(1), entry["shareMessage"]),
                    )
        elif quotes is not None:
            messages = {entry["shareMessage"] for entry in quotes.values()}
            checks.check(description in messages, "event %d DESCRIPTION is no catalog quote: %r" % (number, description))

        for alarm in event.walk("VALARM"):
            action = text(alarm.get("ACTION"))
            checks.check(action is not None, "event %d has a VALARM without ACTION" % number)
            checks.check(alarm.get("TRIGGER") is not None, "event %d has a VALARM without TRIGGER" % number)
            if action == "DISPLAY":
                checks.check(alarm.get("DESCRIPTION") is not None, "event %d has a DISPLAY VALARM without DESCRIPTION" % number)

    for number in range(1, len(starts)):
        gap = (starts[number].date() - starts[number - 1].date()).days
        checks.check(gap == 1, "event %d is %d days after event %d (expected consecutive days)" % (number + 1, gap, number))
    if not args.quote_of_the_day:
        checks.check(len(set(descriptions)) == len(descriptions), "descriptions repeat")
    checks.check(len(set(uids)) == len(uids), "UIDs repeat")

    print("%d passed, %d failed" % (checks.passed, checks.failed))
    return 0 if checks.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
