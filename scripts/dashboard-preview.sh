#!/usr/bin/env bash
# Looks at the Grafana dashboard's panels and the alert rules against a running service, on
# loopback only: starts BINARY serve (one worker, a queue of one, so a burst sheds load with 503s; a debug build's fault trigger
# crashes a worker now and then)
# and Debian's Prometheus scraping it every second with deploy/prometheus/alerts.yaml loaded, sends
# a small bounded load (about 200 requests: cached and uncached cards of each format, bursts of 8
# renders at once, 404s, /quotes), evaluates every panel's queries over the load and every alert's
# expression through Prometheus' HTTP API (each must return data), and draws every panel's series
# into OUT_DIR/dashboard.png (matplotlib, in .build/pytools). Stops both processes at the end.
# Not part of scripts/test.sh (about a minute and a half); scripts/deploy-check.sh checks the names.
#
#   bash scripts/dashboard-preview.sh [BINARY] [OUT_DIR]     (.build/debug/innerpeace, .build/dashboard-preview)
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(realpath -m "${1:-.build/debug/innerpeace}")
out=$(realpath -m "${2:-.build/dashboard-preview}")
python=.build/pytools/bin/python
command -v prometheus >/dev/null || { echo "dashboard-preview: no prometheus (apt-get install prometheus)" >&2; exit 1; }
[ -x "$binary" ] || { echo "dashboard-preview: no $binary (swift build)" >&2; exit 1; }
[ -x "$python" ] || python3 -m venv .build/pytools
"$python" -c 'import matplotlib, yaml' 2>/dev/null || .build/pytools/bin/pip install -q matplotlib pyyaml
mkdir -p "$out"
work=$(mktemp -d)
server_pid="" prometheus_pid=""
cleanup() {
  for pid in $server_pid $prometheus_pid; do kill "$pid" 2>/dev/null || true; done
  for pid in $server_pid $prometheus_pid; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { # FILE PATTERN PID: polls FILE for PATTERN, at most 300 times 0.1 s, while PID lives
  for _ in $(seq 300); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || break
    sleep 0.1
  done
  cat "$1" >&2
  return 1
}

# A debug build's fault trigger (compiled out of release builds): a card whose text is
# preview-fault kills its worker, so the failure panels and the 5xx alert have something to show.
INNERPEACE_FAULT_TRAP_TEXT=preview-fault \
  "$binary" serve --host 127.0.0.1 --port 0 --concurrency 1 --queue 1 --max-queued-per-client 1 \
  2>"$work/server.log" >/dev/null &
server_pid=$!
# Its "listening" line, in the text or the JSON log format.
wait_for "$work/server.log" 'listening[^0-9]*127\.0\.0\.1:[0-9]' "$server_pid"
port=$(grep -o 'listening[^0-9]*127\.0\.0\.1:[0-9]*' "$work/server.log" | head -1 | sed 's/.*://')
prometheus_port=$(free_port)
cp deploy/prometheus/alerts.yaml "$work/alerts.yaml"
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [alerts.yaml]
scrape_configs:
  - job_name: innerpeace
    static_configs:
      - targets: ["127.0.0.1:$port"]
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$prometheus_port" 2>"$work/prometheus.log" &
prometheus_pid=$!
wait_for "$work/prometheus.log" 'Server is ready to receive web requests' "$prometheus_pid"
base="http://127.0.0.1:$port"
start=$(date +%s)
get() { curl -s -o /dev/null --max-time 60 "$base$1" || true; }
# The load: 12 rounds, each a few cached and uncached cards, a burst of 8 uncached renders at once
# (one worker, a queue of one: most are 503s), a 404 and /quotes, and every fourth round a card that
# crashes its worker (a 500). About 200 requests in all.
for round in $(seq 12); do
  get /cards/1.png
  get /cards/1.png
  get "/cards/$round.jpg?w=$((300 + round * 10))&h=200"
  get "/cards/$((round + 20)).webp"
  get /quotes
  get /no-such-page
  seq 8 | xargs -P 8 -I{} curl -s -o /dev/null --max-time 60 "$base/cards/$((round + 40)).png?w=$((200 + round)){}&h=200" || true
  if [ $((round % 4)) -eq 0 ]; then get /card.png?text=preview-fault; fi
  for _ in $(seq 5); do get /healthz; done
  sleep 1
done
# Waits (polled, at most 100 times) for a scrape taken two seconds after the last request.
end=$(($(date +%s) + 2))
for _ in $(seq 100); do
  scraped=$(curl -s "http://127.0.0.1:$prometheus_port/api/v1/query?query=timestamp(up)" |
    "$python" -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(int(float(r[0]["value"][1])) if r else 0)')
  [ "$scraped" -ge "$end" ] && break
  sleep 0.2
done
"$python" scripts/dashboard_preview.py "http://127.0.0.1:$prometheus_port" "$start" "$end" "$out" | tee "$out/queries.txt"
status=${PIPESTATUS[0]}
echo "dashboard-preview: $out/dashboard.png ($((end - start)) s of load)" >&2
exit "$status"
