#!/usr/bin/env bash
# The API contract: schemathesis (pinned in install-deps.sh's PY_TEST_PACKAGES) with every check
# against a live `innerpeace serve` on a free loopback port, using the document the server serves
# (Resources/openapi.yaml). Bounded: CONTRACT_EXAMPLES cases per operation (default 30) and
# CONTRACT_SECONDS of wall-clock time (default 240). Fails on any failure.
# Usage: scripts/api-contract.sh [path/to/innerpeace]   (default .build/debug/innerpeace)
set -euo pipefail
cd "$(dirname "$0")/.."
exec .build/pytools/bin/python Tests/contract/run_contract.py --binary "${1:-.build/debug/innerpeace}" \
  --max-examples "${CONTRACT_EXAMPLES:-30}" --seconds "${CONTRACT_SECONDS:-240}"
