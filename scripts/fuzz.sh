#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/Targets) with libFuzzer and AddressSanitizer into .build-fuzz
# (apart from the ordinary .build) and runs each for a bounded time from its seed corpus in
# Fuzz/Corpus. Fails on the first crash; the crashing input is kept in .build-fuzz/artifacts/
# (never in the repository). Inputs the fuzzer finds go to .build-fuzz/corpus/, so a later run
# starts from them.
#
#   FUZZ_SECONDS=60                       seconds per target (default 60)
#   FUZZ_TARGETS="text catalog images query encoder"  which targets, in this order (default: all five)
#
# A longer run of one target, for example the text path for an hour:
#   FUZZ_SECONDS=3600 FUZZ_TARGETS=text bash scripts/fuzz.sh
# Rerun one input without the fuzzer (an ordinary debug build replays files):
#   swift run FuzzText .build-fuzz/artifacts/text/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
targets="${FUZZ_TARGETS:-text catalog images query encoder}"
scratch=.build-fuzz

# -sanitize=fuzzer instruments the Swift modules for coverage and links libFuzzer; -DFUZZING makes
# the targets hand control to it. gold fails on libFuzzer's main, so the link uses lld. Each target
# is built as its own product (building everything would instrument SwiftNIO and Hummingbird too);
# SwiftPM's cached build description of one product fails the next ("unknown build
# description"), hence --disable-build-manifest-caching.
build=(-c debug --scratch-path "$scratch" --disable-build-manifest-caching
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld)
# The text target is built without AddressSanitizer, in a folder of its own: the C libraries it
# drives (Pango, HarfBuzz, FriBidi) are not instrumented, and a use after free inside one
# (FriBidi 1.0.8's in its run list, issue 17) reads intact memory under ASan's allocator, so the
# fuzzer never sees it; under glibc's allocator it segfaults at once. What ASan would add there is
# little: the text path's own code is Swift.
plain_build=(-c debug --scratch-path "$scratch-plain" --disable-build-manifest-caching
  -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld)

product() {
  case "$1" in
    text) echo FuzzText ;;
    catalog) echo FuzzCatalog ;;
    images) echo FuzzImages ;;
    query) echo FuzzQuery ;;
    encoder) echo FuzzEncoder ;;
    *) echo "unknown fuzz target '$1' (text, catalog, images, query, encoder)" >&2; exit 64 ;;
  esac
}

# Longest input per target: a quote is at most 20,000 bytes, but short inputs run faster and
# reach the same code; photos and catalogs get room for a real header and a few entries.
max_len() {
  case "$1" in
    text) echo 4096 ;;
    catalog) echo 8192 ;;
    images) echo 16384 ;;
    query) echo 4096 ;;
    encoder) echo 16384 ;;
  esac
}

mkdir -p "$scratch/logs"
for target in $targets; do
  echo "== building $(product "$target")"
  # The linker warns about every AddressSanitizer helper symbol; keep the log, show it on failure.
  flags=("${build[@]}")
  if [ "$target" = text ]; then flags=("${plain_build[@]}"); fi
  if ! swift build "${flags[@]}" --product "$(product "$target")" >"$scratch/logs/build-$target.log" 2>&1; then
    grep -v "Cannot export local symbol" "$scratch/logs/build-$target.log" | tail -40 >&2
    echo "FAILED: building $(product "$target")" >&2
    exit 1
  fi
done

bin="$(swift build "${build[@]}" --show-bin-path)"
plain_bin="$(swift build "${plain_build[@]}" --show-bin-path)"
failed=0

for target in $targets; do
  name="$(product "$target")"
  corpus="$scratch/corpus/$target"
  artifacts="$scratch/artifacts/$target"
  log="$scratch/logs/$target.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  echo "== $name: $seconds s from Fuzz/Corpus/$target (log: $log)"
  # Leaks are not reported (-detect_leaks=0): with leak detection on, the text target stops within
  # its first inputs on about 680 KB that libfontconfig allocated and LeakSanitizer counts as lost
  # (fontconfig frees its caches only in FcFini), though memory does not grow over a long run.
  # ASan still stops on any use after free, overflow or double free.
  dictionary=()
  if [ -f "Fuzz/Dictionaries/$target.dict" ]; then dictionary=(-dict="Fuzz/Dictionaries/$target.dict"); fi
  status=0
  SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=0" \
    "$([ "$target" = text ] && echo "$plain_bin" || echo "$bin")/$name" "$corpus" "Fuzz/Corpus/$target" \
    -max_total_time="$seconds" -max_len="$(max_len "$target")" -timeout=30 -rss_limit_mb=3072 \
    -detect_leaks=0 -print_final_stats=1 -artifact_prefix="$artifacts/" "${dictionary[@]}" >"$log" 2>&1 || status=$?
  grep -E "DONE|^stat::number_of_executed_units|^stat::average_exec_per_sec" "$log" || true
  if [ "$status" -ne 0 ]; then
    echo "FAILED: $name exited with $status; the input is in $artifacts/, details in $log" >&2
    grep -E "ERROR|Fatal error|assertion|SUMMARY" "$log" | head -5 >&2 || true
    failed=1
  fi
done
exit "$failed"
