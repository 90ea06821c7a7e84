#!/usr/bin/env bash
# The man page, docs/man/innerpeace.1, made from the command line's own definitions (every
# subcommand, option, default and help text) by swift-argument-parser's GenerateManual plugin,
# which builds offline from the package mirror like the rest. The plugin builds the package's
# products (debug here: the build the tests already made) and runs `innerpeace
# --experimental-dump-help` through its `generate-manual` tool.
# Usage: scripts/man-page.sh           regenerate docs/man/innerpeace.1
#        scripts/man-page.sh --check   fail when the committed page differs from a fresh one
#                                      (its .Dd date line aside)
set -euo pipefail
cd "$(dirname "$0")/.."
page=docs/man/innerpeace.1
swift package plugin generate-manual --configuration debug --date "$(date -u +%F)" \
  --authors "the innerpeace authors" >/dev/null
generated=.build/plugins/GenerateManual/outputs/InnerPeaceCLI/innerpeace.1
[ -f "$generated" ] || { echo "man-page: the plugin wrote no $generated" >&2; exit 1; }
if [ "${1:-}" = "--check" ]; then
  if ! diff <(grep -v '^\.Dd ' "$page") <(grep -v '^\.Dd ' "$generated") >&2; then
    echo "man-page: $page is not current: run bash scripts/man-page.sh and commit it" >&2
    exit 1
  fi
  echo "man-page: $page is current"
else
  mkdir -p docs/man
  cp "$generated" "$page"
  echo "man-page: wrote $page"
fi
