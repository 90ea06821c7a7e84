#!/usr/bin/env bash
# Every test: install missing system packages (and the browser-test tools), check formatting,
# build, run the Swift test suites (core, server, the built CLI end to end), check the deployment
# files (scripts/deploy-check.sh), then load the web page
# in headless Chromium against the running server, run schemathesis against it, then fuzzes each libFuzzer target for
# FUZZ_SECONDS (default 45 here) from its seed corpus (scripts/fuzz.sh).
#
# `bash scripts/test.sh --fast`: the inner loop. Lint, the page's script through `node --check`, the
# build, then every Swift test that needs nothing beyond its own process: the suites and tests
# tagged `.live` (loopback sockets), `.process` (child processes) or `.binary` (the built
# innerpeace) are skipped. The tagged ones are read from the test bundle itself (its test list
# with tags, as the swift-testing event stream gives it), so the skip list cannot drift from the
# tags; then the deployment files' static checks (scripts/deploy-check.sh --fast).
set -euo pipefail
cd "$(dirname "$0")/.."
fast=false
if [ "${1:-}" = "--fast" ]; then fast=true; fi
if $fast; then bash scripts/install-deps.sh; else bash scripts/install-deps.sh --with-test-tools; fi
if swift format --version >/dev/null 2>&1; then
  swift format lint --strict --recursive Package.swift Sources Tests Fuzz
fi
# The page's script is a resource file (Resources/page/page.js): it must at least parse.
if $fast && ! command -v node >/dev/null; then
  echo "innerpeace: no node: node --check of Resources/page/page.js skipped (install nodejs)" >&2
else
  node --check Resources/page/page.js
fi
swift build --build-tests
# A hang guard on each test run: Swift Testing's time limits end a hung test, and this ends a run
# that still cannot finish (a wait that ignores cancellation), with one line, long before CI's limit.
guarded() {
  local minutes=$1
  shift
  local status=0
  timeout --kill-after=30 "${minutes}m" "$@" || status=$?
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "innerpeace: a test run did not finish within $minutes minutes (a hang; the last test started above is it): $*" >&2
  fi
  return "$status"
}
if $fast; then
  skip=$(bash scripts/tagged-tests.sh live process binary)
  guarded 15 swift test --skip-build --skip "$skip"
  # The deployment files, statically (scripts/deploy-check.sh; tools it lacks are skipped).
  bash scripts/deploy-check.sh --fast
  exit 0
fi
guarded 25 swift test --skip-build
# The committed man page against a fresh one from the GenerateManual plugin (about 50 s once built).
bash scripts/man-page.sh --check
# AddressSanitizer over the renderer (one thread, and renderOne's two), the halo's SSE2 kernels, the decode of a
# photo's part (libjpeg's crop and skip), the WebP encoder (its C instrumented too),
# the render pool and the server, in a build folder of its own. The test bundle is run directly: `swift test --skip-build`
# does not find a sanitized build's description. Leak reports are off: Foundation's and
# fontconfig's process-lifetime caches would fill them; memory errors still fail the run.
swift build --build-tests --sanitize=address --scratch-path .build-address --disable-build-manifest-caching
ASAN_OPTIONS=detect_leaks=0 guarded 20 .build-address/debug/innerpeacePackageTests.xctest --testing-library swift-testing \
  --filter InnerPeaceServerTests --filter RenderTests --filter RenderOneTests --filter BlurKernelTests --filter PhotoPartTests \
  --filter WebPEncoderTests
# ThreadSanitizer over the same suites, in .build-thread. The locks they exercise are ones TSan can
# see: NSLock in the core, NIOLockedValueBox in the server (with this toolchain TSan cannot see
# Synchronization's `Mutex` and reports every access under it as a race: BENCHMARKS.md §4). The
# worker processes the server tests spawn are the plain build's. The one suppression file
# (scripts/tsan-suppressions.txt) hides only Swift's continuation hand-off, which the runtime
# does not tell TSan about.
swift build --build-tests --sanitize=thread --scratch-path .build-thread --disable-build-manifest-caching
TSAN_OPTIONS="suppressions=$PWD/scripts/tsan-suppressions.txt" \
  guarded 20 .build-thread/debug/innerpeacePackageTests.xctest --testing-library swift-testing \
  --filter InnerPeaceServerTests --filter RenderTests --filter RenderOneTests --filter BlurKernelTests --filter PhotoPartTests
# The deployment files: Kubernetes manifests, systemd unit, alert rules, Prometheus config, compose
# file, and the dashboard's and alerts' metric names against a running server; the Indexed Job's
# command and the shard merge for real; each check on a broken copy.
bash scripts/deploy-check.sh .build/debug/innerpeace
/usr/bin/python3 Tests/browser/page_test.py --binary .build/debug/innerpeace
# The PNG and WebP encoders' files at every preset through pngcheck (PNG), Pillow and Chromium
# (under 2 minutes each).
/usr/bin/python3 Tests/decoders/decoders_test.py --binary .build/debug/innerpeace
/usr/bin/python3 Tests/decoders/decoders_test.py --binary .build/debug/innerpeace --format webp
# CORS as a browser applies it: fetch() from a listed origin and from one not listed.
/usr/bin/python3 Tests/browser/cors_test.py --binary .build/debug/innerpeace
# Link previews as a link-preview parser reads them (metadata-parser, PyPI).
.build/pytools/bin/python Tests/pages/preview_test.py --binary .build/debug/innerpeace
# The calendar and Atom feeds, read by icalendar and feedparser (PyPI).
.build/pytools/bin/python Tests/feeds/feeds_test.py --binary .build/debug/innerpeace
# The longest accepted texts through nginx with its default proxy buffers: 200s, never 502.
/usr/bin/python3 Tests/proxy/nginx_test.py --binary .build/debug/innerpeace
# The container image (Dockerfile) built from local parts and run read-only as a non-root user
# with podman: health, readiness, a card of each format, the HEALTHCHECK, SIGTERM's drain (skipped
# with one line where podman cannot run).
bash scripts/container-test.sh
# The API contract: schemathesis, every check, against a live server (generation stops after 150 s).
CONTRACT_SECONDS="${CONTRACT_SECONDS:-180}" bash scripts/api-contract.sh .build/debug/innerpeace
FUZZ_SECONDS="${FUZZ_SECONDS:-45}" bash scripts/fuzz.sh
