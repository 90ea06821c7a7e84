#!/usr/bin/env bash
# Prints a regular expression for `swift test --skip` (or --filter) matching every Swift test or
# suite that carries one of the tags named as arguments (`live process binary`), read from the
# built test bundle: its test list with each test's tags, from swift-testing's event stream (whose
# tags are an experimental field in Swift 6.3, `tags` from 6.4). Run after `swift build --build-tests`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: $0 TAG..." >&2; exit 64; }
bundle="$(swift build --show-bin-path)/innerpeacePackageTests.xctest"
[ -x "$bundle" ] || { echo "tagged-tests: no $bundle: run swift build --build-tests first" >&2; exit 1; }
events=$(mktemp)
trap 'rm -f "$events"' EXIT
"$bundle" --testing-library swift-testing --list-tests --event-stream-output-path "$events" \
  --experimental-event-stream-version 99 >/dev/null
python3 - "$events" "$@" <<'PY'
import json, re, sys
path, wanted = sys.argv[1], {"." + tag for tag in sys.argv[2:]}
ids = []
for line in open(path, encoding="utf-8"):
    record = json.loads(line)
    if record.get("kind") != "test":
        continue
    test = record["payload"]
    if set(test.get("tags") or test.get("_tags") or []) & wanted:
        ids.append(test["id"])
if not ids:
    sys.exit("tagged-tests: no test carries " + ", ".join(sorted(wanted)) + ": has the event stream changed?")
# An id is Module.Suite, or Module.Suite/function()/File.swift:line:column for a test function;
# swift test matches each expression against the ids of the tests and their suites.
print("|".join("^" + re.escape(test_id) + "(/|$)" for test_id in sorted(ids)))
PY
