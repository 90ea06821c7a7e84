#!/usr/bin/env bash
# Every test: install missing system packages, check formatting, build, run the Swift test suites
# (core and the built CLI end to end).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if swift format --version >/dev/null 2>&1; then
  swift format lint --strict --recursive Package.swift Sources Tests
fi
swift build --build-tests
swift test --skip-build
