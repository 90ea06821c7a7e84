#!/usr/bin/env bash
# From a fresh clone: install missing system packages, build innerpeace (release), render card.png.
# Extra arguments go to `innerpeace render`, e.g. bash scripts/card.sh --preset classic --seed 7
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The Swift standard library and Foundation linked in: a third less start-up time for every
# command (BENCHMARKS.md, "Cold start"). Every release build here uses the same flag, so that
# release builds with and without it do not rebuild each other.
swift build -c release --static-swift-stdlib --product innerpeace
.build/release/innerpeace render --out card.png "$@"
echo "wrote $(pwd)/card.png"
