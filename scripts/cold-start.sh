#!/usr/bin/env bash
# Cold start of `innerpeace render` (issue 21, item 3): the whole command against the pycairo +
# Pango peer, alternated in one hyperfine run, then where one cold render's time goes, step by step.
#
#   bash scripts/cold-start.sh                 # .build/release/innerpeace, 15 runs
#   RUNS=21 BEFORE=/path/to/old/innerpeace bash scripts/cold-start.sh
#
# 1. hyperfine -N, warm-up 3: the peer (../shared/bench/peers/pangocairo_card.py, its og job with
#    the medium quote) and `innerpeace render --out card.png` (a fixed seed and picture), and
#    BEFORE's render when given; medians and the ratio to the peer. hyperfine runs each command's
#    runs together: 1b runs the commands in turn, round by round, so a drifting load is shared.
# 2. perf stat: CPU time and page faults of `innerpeace --version` (process start, dynamic linking,
#    Swift runtime, argument parsing) and of the render; the dynamic loader's own time
#    (LD_DEBUG=statistics, cycles at the CPU's clock).
# 3. The steps of one cold render, from uprobes (perf probe, needs root): the median time from
#    exec to the entry (and, for some, the return) of each step's function, on the card's thread
#    ("main") or another ("other": the photo is read, checked and decoded on a second thread while
#    the fonts load and the text is fitted, CardRenderer.renderOne; the PNG encoder's second band).
# 4. Instructions, not seconds (valgrind's callgrind; skipped without valgrind): one render of the
#    card, and of BEFORE's when given, counted per step (a function and everything it calls, on
#    any thread). The counts repeat to about 0.1 % run to run whatever else the machine is doing,
#    so a change of a step shows even when the timings above are lost in the noise. callgrind
#    cannot read the release build's DWARF, so it runs a copy with the debug sections stripped
#    (the symbols stay).
# CARD_ARGS replaces the card's options (default: a zoomed aqua card, which decodes twice);
# `CARD_ARGS= bash scripts/cold-start.sh` times the issue's own command, a random card each run.
# Bounded: every loop runs RUNS times. Leaves no probe behind.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-15}
BIN=${BIN:-$PWD/.build/release/innerpeace}
PEERS=${PEERS:-$PWD/../shared/bench/peers}
OUT=$(mktemp -d /tmp/innerpeace-cold.XXXXXX)
trap 'perf probe -q -d "*:step_*" 2>/dev/null || true; rm -rf "$OUT"' EXIT
# shellcheck disable=SC2206
CARD=(render --out "$OUT/card.png" ${CARD_ARGS---seed 3 --quote 2 --picture aqua.jpg})

echo "load: $(uptime)"
QUOTE=$(grep -P '^medium\t' "$PEERS/fixtures/quotes.txt" | cut -f3)
PEER_PY=/tmp/innerpeace-peers/venv/bin/python
[ -x "$PEER_PY" ] || bash "$PEERS/setup.sh" >/dev/null
cat >"$OUT/peer.sh" <<EOF
#!/bin/sh
exec $PEER_PY $PEERS/pangocairo_card.py $PEERS/fixtures/background.jpg "$QUOTE" "Bench Fixture" 1200 630 $OUT/peer.png
EOF
chmod +x "$OUT/peer.sh"

echo "== 1. whole command, alternated (hyperfine -N, $RUNS runs)"
commands=("$OUT/peer.sh" "$BIN ${CARD[*]}")
[ -n "${BEFORE:-}" ] && commands+=("$BEFORE ${CARD[*]}")
hyperfine -N -w 3 -r "$RUNS" --style none --export-json "$OUT/h.json" "${commands[@]}" >/dev/null 2>"$OUT/h.err"
python3 - "$OUT/h.json" <<'EOF'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
peer = results[0]["median"]
for r in results:
    print(f"  {r['median'] * 1000:7.1f} ms median  {r['min'] * 1000:7.1f} min  "
          f"{r['median'] / peer:6.3f}x peer  {r['command'][:90]}")
EOF

echo "== 1b. the same commands in turn, round by round ($RUNS rounds; wall, CPU time, page faults; medians)"
python3 - "$RUNS" "${commands[@]}" <<'EOF'
import os, statistics, subprocess, sys, time
runs, commands = int(sys.argv[1]), sys.argv[2:]
wall, cpu, faults = [[] for _ in commands], [[] for _ in commands], [[] for _ in commands]
for _ in range(runs):
    for index, command in enumerate(commands):
        start = time.perf_counter()
        child = subprocess.Popen(command.split(), stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        wall[index].append((time.perf_counter() - start) * 1000)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"failed: {command}")
        cpu[index].append((usage.ru_utime + usage.ru_stime) * 1000)
        faults[index].append(usage.ru_minflt + usage.ru_majflt)
peer = statistics.median(wall[0])
for index, command in enumerate(commands):
    median = statistics.median(wall[index])
    print(f"  {median:7.1f} ms median  {statistics.median(cpu[index]):6.1f} ms CPU  "
          f"{statistics.median(faults[index]):6.0f} faults  {median / peer:6.3f}x peer  {command[:70]}")
EOF

echo "== 2. CPU time and page faults (perf stat -r $RUNS)"
for args in "--version" "${CARD[*]}"; do
  # shellcheck disable=SC2086
  perf stat -x, -e task-clock,page-faults -r "$RUNS" "$BIN" $args 2>"$OUT/stat" >/dev/null
  awk -F, -v what="$args" '/task-clock/ { ms = $1 } /page-faults/ { pf = $1 }
    END { printf "  %7.2f ms CPU  %6d page faults  innerpeace %s\n", ms, pf, substr(what, 1, 60) }' "$OUT/stat"
done
MHZ=$(awk -F: '/cpu MHz/ { print $2; exit }' /proc/cpuinfo)
for _ in $(seq "$RUNS"); do
  LD_DEBUG=statistics "$BIN" --version 2>&1 >/dev/null | awk '/total startup time in dynamic loader/ { print $(NF-1) }'
done | sort -n | awk -v mhz="$MHZ" '{ v[NR] = $1 } END { printf "  %7.2f ms dynamic loader (median of %d, %s MHz)\n", v[int((NR + 1) / 2)] / mhz / 1000, NR, mhz }'

echo "== 3. steps of one cold render (uprobes, median of $RUNS)"
# Marks at the entry (and, for the steps marked "r", the return) of each step's function, on
# whichever thread runs it: the card's own thread ("main") or another ("other": the photo's read
# and decode, the PNG encoder's second band). Each line is the median time from exec to that
# mark, in order. A function a release build inlined is left out, by name.
LIB=/usr/lib/x86_64-linux-gnu
steps=(
  "main:$BIN:InnerPeaceCLI_main"
  "catalog:$BIN:\$s13InnerPeaceCLI14CatalogOptionsV4load:r"
  "fcinit:$LIB/libfontconfig.so.1:FcInit:r"
  "decode-whole:$LIB/libturbojpeg.so.0:tjDecompress2:r"
  "decode-part:$BIN:innerpeace_jpeg_decode_part:r"
  "fit:$BIN:\$s10InnerPeace10TextFitterV3fit"
  "scale:$BIN:\$s10InnerPeace16BackgroundScalerO5cover"
  "halo:$BIN:\$s10InnerPeace8HaloTextO4draw_8geometry"
  "encode:$BIN:innerpeace_png_encode:r"
  "write:$BIN:\$s13InnerPeaceCLI12OutputTargetV5write"
)
perf probe -x "$BIN" --funcs --no-demangle --filter '*' >"$OUT/funcs" 2>/dev/null
for step in "${steps[@]}"; do
  IFS=: read -r name object prefix returns <<<"$step"
  symbol=$prefix
  if [ "$object" = "$BIN" ]; then symbol=$(grep -F -m1 "$prefix" "$OUT/funcs" || true); fi
  [ -n "$symbol" ] || { echo "  ($name: no function $prefix)"; continue; }
  event=step_${name//-/_}
  perf probe -q -x "$object" -a "$event=$symbol" 2>/dev/null || { echo "  ($name: no probe on $symbol)"; continue; }
  if [ "$returns" = r ]; then perf probe -q -x "$object" -a "${event}_end=$symbol%return" 2>/dev/null || true; fi
done
events=()
for event in $(perf probe -l 2>/dev/null | awk '$1 ~ /:step_/ { print $1 }'); do events+=(-e "$event"); done
cat >"$OUT/loop.sh" <<EOF
#!/bin/sh
for i in \$(seq $RUNS); do $BIN ${CARD[*]}; done
EOF
chmod +x "$OUT/loop.sh"
perf record -q -o "$OUT/perf.data" -e sched:sched_process_exec -e sched:sched_process_exit "${events[@]}" \
  "$OUT/loop.sh" >/dev/null 2>"$OUT/record.err" || { echo "  perf record failed:"; cat "$OUT/record.err"; }
perf script -i "$OUT/perf.data" -F comm,pid,tid,time,event 2>/dev/null | python3 -c '
import collections, statistics, sys
# A line: the thread name (it may hold spaces), pid/tid, time, event.
runs = collections.defaultdict(list)
for line in sys.stdin:
    parts = line.split()
    at = next((k for k, part in enumerate(parts) if "/" in part and part.replace("/", "").isdigit()), None)
    if at is None or len(parts) < at + 3:
        continue
    pid, tid = parts[at].split("/")
    event = parts[at + 2].rstrip(":").split(":")[-1]
    runs[pid].append((float(parts[at + 1].rstrip(":")), tid, event, " ".join(parts[:at])))
marks = collections.defaultdict(list)
for events in runs.values():
    events.sort()
    # The renders only: not the loop`s shell, nor seq.
    execs = [(time, tid) for time, tid, event, comm in events if event == "sched_process_exec" and comm == sys.argv[1]]
    if not execs:
        continue
    start, main = execs[0]
    seen, last = collections.Counter(), {}
    for time, tid, event, _ in events:
        if event == "sched_process_exec" or (event == "sched_process_exit" and tid != main):
            continue
        # A function entered twice at once (a thunk and its body) is one mark.
        if time - last.get((event, tid), -1) < 20e-6:
            continue
        last[(event, tid)] = time
        seen[event] += 1
        marks[(event, seen[event], "main" if tid == main else "other")].append((time - start) * 1000)
complete = max((len(times) for times in marks.values()), default=0)
for (event, nth, thread), times in sorted(marks.items(), key=lambda item: statistics.median(item[1])):
    if len(times) * 2 < complete:
        continue
    name = event.removeprefix("step_").removesuffix("__return").replace("_end", " returns")
    name = "exit" if event == "sched_process_exit" else name
    name = name.replace("_", "-") + (f" ({nth})" if nth > 1 else "")
    print(f"  {statistics.median(times):7.2f} ms  {thread:5}  {name}")
' "$(basename "$BIN" | cut -c1-15)"

echo "== 4. instructions of one cold render, per step (callgrind)"
if ! command -v valgrind >/dev/null; then
  echo "  (valgrind not installed: skipped)"
  exit 0
fi
count_steps() { # $1: the binary; prints the steps' counts
  mkdir -p "$OUT/cg"
  cp "$1" "$OUT/cg/innerpeace" && strip --strip-debug "$OUT/cg/innerpeace"
  ln -sfn "$(dirname "$1")/innerpeace_InnerPeaceResources.resources" "$OUT/cg/"
  valgrind --tool=callgrind --callgrind-out-file="$OUT/cg/out" "$OUT/cg/innerpeace" "${CARD[@]}" 2>/dev/null
  callgrind_annotate --inclusive=yes --threshold=100 "$OUT/cg/out" 2>/dev/null | python3 -c '
import re, sys
steps = [
    ("the whole process", "PROGRAM TOTALS"),
    ("dynamic loader: loading, relocating", "_dl_start"),
    ("shared library constructors", "_dl_init"),
    ("argument parsing (ArgumentParser)", "$s14ArgumentParser15ParsableCommandPAAE11parseAsRoot"),
    ("catalog load and checks", "$s13InnerPeaceCLI14CatalogOptionsV4load"),
    ("fonts: FcInit", "FcInit"),
    ("photo decode, whole (TurboJPEG)", "tjDecompress2"),
    ("photo decode, part shown (libjpeg)", "innerpeace_jpeg_decode_part"),
    ("the card on its thread: fit, scale, halo, text, encode", "$s10InnerPeace12CardRendererC6render33_"),
    ("  of which the halo and text", "$s10InnerPeace8HaloTextO4draw_8geometry"),
    ("PNG encode, the bands on both threads", "run_band_worker"),
    ("write", "$s13InnerPeaceCLI12OutputTargetV5write"),
    ("Swift conformance scans (all steps)", "swift_conformsToProtocolMaybeInstantiateSuperclasses(swift::TargetMetadata<swift::InProcess> const*, swift::TargetProtocolDescriptor<swift::InProcess> const*, bool)::$_2::operator()"),
]
found = {}
for line in sys.stdin:
    match = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$", line)
    if not match:
        continue
    count, name = int(match.group(1).replace(",", "")), match.group(2)
    name = name.split(":", 1)[1] if name.startswith("???:") or ".c:" in name.split(" ")[0] else name
    for label, prefix in steps:
        if name.startswith(prefix) and "\x27" not in name.split(" ")[0]:
            found[label] = max(found.get(label, 0), count)
for label, _ in steps:
    if label in found:
        print(f"  {found[label] / 1e6:8.1f} M  {label}")
'
}
echo "  $BIN"
count_steps "$BIN"
if [ -n "${BEFORE:-}" ]; then
  echo "  BEFORE: $BEFORE"
  count_steps "$BEFORE"
fi
