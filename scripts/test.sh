#!/usr/bin/env bash
# Every test: install missing system packages (and the browser-test tools), check formatting,
# build, run the Swift test suites (core, server, the built CLI end to end), then load the web page
# in headless Chromium against the running server, then fuzzes each libFuzzer target for
# FUZZ_SECONDS (default 60) from its seed corpus (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --with-test-tools
if swift format --version >/dev/null 2>&1; then
  swift format lint --strict --recursive Package.swift Sources Tests Fuzz
fi
swift build --build-tests
swift test --skip-build
# AddressSanitizer over the renderer, the render pool and the server, in a build folder of its own.
# The test bundle is run directly: `swift test --skip-build` does not find a sanitized build's
# description. Leak reports are off: Foundation's and fontconfig's process-lifetime caches would
# fill them; memory errors still fail the run. The one test that bounds a slow download by
# wall-clock time (25 s) is left to the plain run: under ASan on a loaded machine it took 32 s.
# ThreadSanitizer (`--sanitize=thread`, same command) is not run here yet: with this toolchain it
# cannot see Synchronization's `Mutex` (a 20-line program that only increments a Mutex<Int> from
# many threads is reported as a race), so it reports CardCache's locked state (BENCHMARKS.md §4).
swift build --build-tests --sanitize=address --scratch-path .build-address --disable-build-manifest-caching
ASAN_OPTIONS=detect_leaks=0 .build-address/debug/innerpeacePackageTests.xctest --testing-library swift-testing \
  --filter InnerPeaceServerTests --filter RenderTests --skip shutdownFinishesWhatItAccepted
/usr/bin/python3 Tests/browser/page_test.py --binary .build/debug/innerpeace
bash scripts/fuzz.sh
