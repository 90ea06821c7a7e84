#!/usr/bin/env bash
# From a fresh clone: install missing system packages, build innerpeace (release), render card.png.
# Extra arguments go to `innerpeace render`, e.g. bash scripts/card.sh --preset classic --seed 7
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build -c release --product innerpeace
.build/release/innerpeace render --out card.png "$@"
echo "wrote $(pwd)/card.png"
