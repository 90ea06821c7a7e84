#!/usr/bin/env bash
# The cost of rendering in worker processes: warm og PNG renders through `innerpeace serve` with
# worker processes (the default) against --in-process, with wrk on loopback. Bounded: every wrk
# run has a fixed duration, and each server is stopped after its runs.
#
#   bash scripts/bench-isolation.sh                 # release build, 3 runs of 10 s per scenario
#   RUNS=5 DURATION=5 bash scripts/bench-isolation.sh
#
# Every request is GET /cards/0.png with --cache-mb 0, so each one renders the same og card
# (1200x630, about 0.9 MB) from the cached background: the warm render, the card's copy from the
# worker to the server, and the HTTP response. Scenarios: 1 connection (latency: the difference
# of the p50s is the whole cost of the worker round trip) and 4 connections (throughput, both
# render slots busy). It prints the median of the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
RUNS=${RUNS:-3}
PORT=${PORT:-18191}
command -v wrk >/dev/null || { echo "bench-isolation: install wrk (apt-get install wrk)" >&2; exit 1; }
BIN=${BIN:-.build/release/innerpeace}
[ -x "$BIN" ] || swift build -c release --static-swift-stdlib --product innerpeace >/dev/null
WORK=$(mktemp -d)
SERVER=
trap '[ -n "$SERVER" ] && kill $SERVER 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT

cat > "$WORK/report.lua" <<'LUA'
function done(summary, latency, requests)
  io.write(string.format("%.1f %.2f %.2f %d\n", summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.timeout))
end
LUA

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for mode in processes in-process; do
  flags=(--port "$PORT" --cache-mb 0 --concurrency 2)
  [ "$mode" = in-process ] && flags+=(--in-process)
  LOG_LEVEL=warning "$BIN" serve "${flags[@]}" 2>"$WORK/server.log" &
  SERVER=$!
  for _ in $(seq 100); do grep -q listening "$WORK/server.log" && break; sleep 0.1; done
  for _ in $(seq 20); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/cards/0.png"; done
  for connections in 1 4; do
    : > "$WORK/runs"
    for _ in $(seq "$RUNS"); do
      wrk -t 1 -c "$connections" -d "${DURATION}s" -s "$WORK/report.lua" "http://127.0.0.1:$PORT/cards/0.png" \
        | tail -1 >> "$WORK/runs"
    done
    rps=$(cut -d' ' -f1 < "$WORK/runs" | median)
    p50=$(cut -d' ' -f2 < "$WORK/runs" | median)
    p99=$(cut -d' ' -f3 < "$WORK/runs" | median)
    errors=$(awk '{ s += $4 } END { print s }' "$WORK/runs")
    echo "$mode, $connections connection(s): ${rps} requests/s, p50 ${p50} ms, p99 ${p99} ms (median of $RUNS x ${DURATION} s; non-2xx or socket errors: $errors)"
  done
  rss=$(awk '/VmHWM/ { print $2 }' "/proc/$SERVER/status")
  workers=$(awk -v p="$SERVER" '$4 == p { print $1 }' /proc/[0-9]*/stat 2>/dev/null | tr '\n' ' ')
  worker_rss=0
  for w in $workers; do worker_rss=$((worker_rss + $(awk '/VmHWM/ { print $2 }' "/proc/$w/status"))); done
  echo "$mode: server peak RSS $((rss / 1024)) MB, workers' peak RSS $((worker_rss / 1024)) MB in total"
  kill -TERM "$SERVER"; wait "$SERVER" || true
  SERVER=
done
