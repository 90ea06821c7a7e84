#!/usr/bin/env bash
# Warm og card latency over HTTP and uncached throughput of `innerpeace serve`, for one or more
# release binaries alternated round by round (so that every binary sees the same load), on
# loopback with wrk. Bounded: every wrk run has a fixed duration, every server is stopped.
#
#   bash scripts/service-latency.sh [-r ROUNDS] [-d SECONDS] BIN [BIN...]
#
# Per round and binary:
#   warm:      GET /cards/63.png?picture=aqua.jpg (the card `innerpeace-bench stages` times in
#              process as "warm PNG") with --cache-mb 0, 1 connection: every request renders the
#              card, its photo already decoded and scaled in the worker's background cache.
#              Prints wrk's p50, and the medians of the server's own log: the request (from its
#              first byte to its last byte written) and the worker's render.
#   uncached:  scripts/loadtest.sh's scenario 2 (a new seed each request, --cache-mb 0,
#              4 connections, --max-renders-per-client 2 --max-queued-per-client 4), after 2 s of
#              the same to warm the workers up: cards/s, the renders behind the cards (the
#              server's /metrics: each card should have its own), and the CPU time of the render
#              workers and of the server per render (/proc's ticks, 10 ms each, over the run).
set -euo pipefail
source "$(dirname "$0")/random-cards.sh"
ROUNDS=3
SECONDS_PER_RUN=10
while getopts "r:d:" option; do
  case $option in
    r) ROUNDS=$OPTARG ;;
    d) SECONDS_PER_RUN=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-r ROUNDS] [-d SECONDS] BIN [BIN...]" >&2; exit 2; }
command -v wrk >/dev/null || { echo "service-latency: install wrk (apt-get install wrk)" >&2; exit 1; }
PORT=${PORT:-18191}
WORK=$(mktemp -d)
SERVER=
trap '[ -n "$SERVER" ] && kill $SERVER 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT

cat > "$WORK/p50.lua" <<'LUA'
function done(summary, latency, requests)
  local ok = summary.requests - summary.errors.status - summary.errors.read - summary.errors.connect
  io.write(string.format("p50_ms=%.2f requests_per_s=%.1f ok=%d non2xx=%d\n", latency:percentile(50) / 1000,
    summary.requests / (summary.duration / 1e6), ok, summary.errors.status))
end
LUA
{
  random_cards_lua
  cat <<'LUA'
function done(summary, latency, requests)
  local cards = summary.requests - summary.errors.status
  io.write(string.format("cards_per_s=%.1f p50_ms=%.2f non2xx=%d\n", cards / (summary.duration / 1e6),
    latency:percentile(50) / 1000, summary.errors.status))
end
LUA
} > "$WORK/random.lua"

start_server() {
  local bin=$1
  shift
  "$bin" serve --port "$PORT" --log-format json "$@" 2>"$WORK/server.log" &
  SERVER=$!
  for _ in $(seq 1 200); do
    curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "service-latency: $bin did not start" >&2
  cat "$WORK/server.log" >&2
  exit 1
}
stop_server() {
  kill -TERM "$SERVER"
  wait "$SERVER" || true
  SERVER=
}
# The "ms" of the JSON log lines on standard input whose message is $1 (and status, if any, 200).
log_ms() {
  python3 -c '
import json, sys
for line in sys.stdin:
    try:
        entry = json.loads(line)
    except ValueError:
        continue
    if entry.get("message") == sys.argv[1] and str(entry.get("status", 200)) == "200" and "ms" in entry:
        print(entry["ms"])
' "$1"
}
# The CPU ticks (user and system, 1/100 s) of the processes given, summed.
ticks() {
  local total=0 pid
  for pid in "$@"; do total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0))); done
  echo "$total"
}
# The median of the numbers on standard input.
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2); else print "-" }'; }

for round in $(seq 1 "$ROUNDS"); do
  for bin in "$@"; do
    start_server "$bin" --cache-mb 0 --log-level debug --concurrency 1
    URL="http://127.0.0.1:$PORT/cards/63.png?picture=aqua.jpg"
    for _ in 1 2 3; do curl -fsS -o /dev/null "$URL"; done
    : >"$WORK/server.log"
    warm=$(wrk -t1 -c1 -d"${SECONDS_PER_RUN}s" --latency -s "$WORK/p50.lua" "$URL" | grep p50_ms)
    request_ms=$(log_ms request <"$WORK/server.log" | median)
    render_ms=$(log_ms render <"$WORK/server.log" | median)
    stop_server
    start_server "$bin" --cache-mb 0 --max-renders-per-client 2 --max-queued-per-client 4
    wrk -t2 -c4 -d2s -s "$WORK/random.lua" "http://127.0.0.1:$PORT" >/dev/null
    mapfile -t workers < <(pgrep -P "$SERVER")
    read -r renders_before cards_before < <(render_counts "$PORT")
    server_before=$(ticks "$SERVER")
    workers_before=$(ticks "${workers[@]}")
    uncached=$(wrk -t2 -c4 -d"${SECONDS_PER_RUN}s" -s "$WORK/random.lua" "http://127.0.0.1:$PORT" | grep cards_per_s)
    read -r renders cards < <(render_counts "$PORT")
    uncached="$uncached renders=$((renders - renders_before)) cards=$((cards - cards_before)) $(awk \
      -v n=$((renders - renders_before)) -v s=$(($(ticks "$SERVER") - server_before)) -v w=$(($(ticks "${workers[@]}") - workers_before)) \
      'BEGIN { if (n > 0) printf "workers_ms_per_render=%.2f server_ms_per_render=%.2f", w * 10 / n, s * 10 / n }')"
    stop_server
    echo "round=$round bin=$bin warm: $warm server_request_ms=$request_ms worker_render_ms=$render_ms | uncached: $uncached | load: $(cut -d' ' -f1-3 /proc/loadavg)"
  done
done
