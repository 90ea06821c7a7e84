#!/usr/bin/env bash
# Proves the render-fault triggers of the crash-isolation tests (INNERPEACE_FAULT_*, see
# Sources/InnerPeaceServer/Workers/RenderWorker.swift) are compiled out of release builds: builds the
# release binary and fails if any trigger name is in its bytes. The debug binary, for contrast,
# must have them (else this check could not fail).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --product innerpeace >/dev/null
if grep -a -q INNERPEACE_FAULT_ .build/release/innerpeace; then
  echo "check-release-faults: a fault trigger is in the release binary" >&2
  exit 1
fi
if [ -x .build/debug/innerpeace ] && ! grep -a -q INNERPEACE_FAULT_ .build/debug/innerpeace; then
  echo "check-release-faults: no trigger in the debug binary either: this check is looking for the wrong name" >&2
  exit 1
fi
echo "check-release-faults: no fault trigger in .build/release/innerpeace"
