#!/usr/bin/env bash
# Validates the deployment files (README, "Deploying at scale"), each with the tool that reads it:
#   - deploy/kubernetes (and batch/): kubernetes-validate --strict against Kubernetes 1.30.0, each
#     file and, where kubectl is installed, the kustomize output; then what the deployment relies
#     on (probes on /healthz and /readyz, ports, PORT, the non-root read-only security context, the
#     Indexed Job's --shard and the merge Job's shard count: scripts/deploy_check.py kube);
#   - deploy/systemd/innerpeace.service: `systemd-analyze verify` (no systemd as PID 1 needed; any
#     line it prints fails the check) and `systemd-analyze security --offline` at exposure 2.0 or
#     less;
#   - deploy/prometheus: `promtool check rules` on alerts.yaml, `promtool check config` on
#     prometheus.yml;
#   - compose.yaml and the Grafana dashboard: parsed, for the keys that matter;
# and, unless --fast:
#   - the settings (INNERPEACE_* variables) of the Kubernetes ConfigMap, compose.yaml and
#     innerpeace.env each start BINARY serve (on a free loopback port);
#   - every metric and label name in the dashboard's and the alerts' PromQL against the /metrics of
#     that server with the Kubernetes settings (a few requests so the histograms have series, one
#     scrape, SIGTERM);
#   - the Deployment's container settings (user, read-only root, capabilities, /tmp, env) run in
#     podman (skipped where podman cannot run): a card, no fontconfig error, exit 0 on SIGTERM;
#   - the systemd unit run by systemd as PID 1 in a podman container (skipped where podman cannot
#     run): it serves a card as a dynamic user, with no fontconfig error, and stops with success;
#   - the Indexed Job's own shell command run for shards 1/2 and 2/2 of 6 cards with BINARY, the
#     shard manifests merged with deploy/kubernetes/batch/merge-manifests.py, every image listed
#     once and matching its SHA-256, and the merged manifest the one an unsharded run writes;
#   - each check run on a broken copy (a misspelt field, a bad value, a metric name with a typo...)
#     to show that it fails there.
# A missing tool skips its check with one line; the script exits 1 if any check failed.
#
#   bash scripts/deploy-check.sh [--fast] [BINARY]      (BINARY: .build/debug/innerpeace)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
fast=false
if [ "${1:-}" = "--fast" ]; then fast=true; shift; fi
binary=$(realpath -m "${1:-.build/debug/innerpeace}")
KUBERNETES_VERSION=1.30.0
python=$repo/.build/pytools/bin/python
validate=$repo/.build/pytools/bin/kubernetes-validate
work=$(mktemp -d)
server_pid=""
container_name=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  if [ -n "$container_name" ]; then
    CONTAINERS_CONF="$work/containers.conf" podman --runtime "$(command -v runc)" rm -f "$container_name" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

failed=0
say() { echo "deploy-check: $*" >&2; }
run_check() { # NAME COMMAND...: runs a check on the repository's files
  local name=$1
  shift
  if "$@" >"$work/out" 2>&1; then
    say "ok: $name"
    sed 's/^/    /' "$work/out" >&2
  else
    cat "$work/out" >&2
    say "FAILED: $name"
    failed=$((failed + 1))
  fi
}
have_python() { [ -x "$python" ] && "$python" -c 'import yaml' 2>/dev/null; }

# Each check takes the folder whose deploy/ and compose.yaml it reads.
kubernetes_files() {
  local root=$1 status=0
  # shellcheck disable=SC2046
  "$validate" --strict --quiet -k "$KUBERNETES_VERSION" $(find "$root/deploy/kubernetes" -name '*.yaml' \
    ! -name kustomization.yaml | sort) || status=1
  if ! command -v kubectl >/dev/null; then
    echo "no kubectl: the kustomize output is not checked, only each file"
  else
    for folder in deploy/kubernetes deploy/kubernetes/batch; do
      kubectl kustomize "$root/$folder" >"$work/kustomized.yaml" || return 1
      "$validate" --strict --quiet -k "$KUBERNETES_VERSION" "$work/kustomized.yaml" || status=1
    done
  fi
  "$python" scripts/deploy_check.py kube "$root" || status=1
  return $status
}
compose_settings() { server_starts_with "$1" compose; }
systemd_settings() { server_starts_with "$1" systemd; }
systemd_unit() {
  local root=$1 unit="$work/unit/innerpeace.service"
  mkdir -p "$work/unit"
  # verify wants ExecStart's program to exist: the binary checked here stands in for /opt/innerpeace.
  sed "s#/opt/innerpeace/innerpeace#$binary#" "$root/deploy/systemd/innerpeace.service" >"$unit"
  [ -x "$binary" ] || { printf '#!/bin/sh\n' >"$work/unit/innerpeace" && chmod +x "$work/unit/innerpeace" &&
    sed -i "s#$binary#$work/unit/innerpeace#" "$unit"; }
  local said
  said=$(systemd-analyze verify "$unit" 2>&1) || { echo "$said"; return 1; }
  [ -z "$said" ] || { echo "$said"; return 1; }
  systemd-analyze security --offline=true --threshold=20 --no-pager "$unit" | tail -1
}
# The unit run for real by systemd 252 as PID 1, in a podman container of its own (no network
# but its loopback): the container's root is a bare folder with this machine's /usr (systemd,
# curl, the libraries), the binary's folder and its Swift runtime mounted read-only. The unit
# (ExecStart pointed at BINARY) and innerpeace.env are installed and started; it must answer
# /healthz and a card on 127.0.0.1:8080 as a dynamic user other than root, with no fontconfig
# error in its journal, and stop with success on `systemctl stop`.
podman_runs() {
  command -v podman >/dev/null && command -v runc >/dev/null || return 1
  printf '[containers]\ndefault_ulimits = []\n' >"$work/containers.conf"
  CONTAINERS_CONF="$work/containers.conf" podman --runtime "$(command -v runc)" info >/dev/null 2>&1
}
# A container's root: a bare folder with this machine's /usr mounted over it (merged /usr: bin,
# lib and sbin are links into it) and the little of /etc that systemd, ps and fontconfig read.
bare_root() {
  local link
  rm -rf "$1" && mkdir -p "$1"/{etc,var/cache,var/lib,var/log,tmp,run,usr}
  for link in bin lib lib64 sbin; do ln -s "usr/$link" "$1/$link"; done
  cp -a /etc/passwd /etc/group /etc/nsswitch.conf /etc/fonts "$1/etc/"
  ln -s ../usr/lib/os-release "$1/etc/os-release"
  touch "$1/etc/machine-id"
}
# podman's -v arguments for BINARY's folder (its resource bundle) and the libraries it loads from
# outside /usr (a debug build's Swift runtime), read-only, one argument a line.
binary_mounts() {
  local folder
  for folder in "$(dirname "$binary")" $(ldd "$binary" | awk '$3 ~ /^\// { print $3 }' | xargs -n1 dirname |
    sort -u | grep -v -e '^/usr/' -e '^/lib'); do
    echo "-v"
    echo "$folder:$folder:ro"
  done
}
systemd_service() {
  local root=$1 name="innerpeace-deploy-check-$$" rootfs="$work/systemd-root" folder mounts=() link
  export CONTAINERS_CONF="$work/containers.conf"
  local podman=(podman --runtime "$(command -v runc)")
  bare_root "$rootfs"
  mkdir -p "$rootfs/etc/systemd/system" "$rootfs/etc/innerpeace"
  # The unit runs the binary from /opt/innerpeace, as installed: its own path may be under /tmp,
  # which the unit's PrivateTmp hides from the service.
  sed "s#/opt/innerpeace/innerpeace#/opt/innerpeace/${binary##*/}#" "$root/deploy/systemd/innerpeace.service" \
    >"$rootfs/etc/systemd/system/innerpeace.service"
  cp "$root/deploy/systemd/innerpeace.env" "$rootfs/etc/innerpeace/innerpeace.env"
  mapfile -t mounts < <(binary_mounts)
  mounts+=(-v "$(dirname "$binary"):/opt/innerpeace:ro")
  "${podman[@]}" run -d --name "$name" --systemd=always --network none -v /usr:/usr:ro "${mounts[@]}" \
    --rootfs "$rootfs" /lib/systemd/systemd >/dev/null || return 1
  container_name=$name
  local state="" status=0
  for _ in $(seq 100); do
    state=$("${podman[@]}" exec "$name" systemctl is-system-running 2>/dev/null || true)
    case $state in running | degraded) break ;; esac
    sleep 0.2
  done
  echo "systemd in the container: $state"
  "${podman[@]}" exec "$name" systemctl start innerpeace || status=1
  for _ in $(seq 150); do
    "${podman[@]}" exec "$name" curl -sf -o /dev/null http://127.0.0.1:8080/healthz && break
    "${podman[@]}" exec "$name" systemctl is-active -q innerpeace || break
    sleep 0.2
  done
  local card user
  card=$("${podman[@]}" exec "$name" curl -s -o /dev/null -w '%{http_code}' --max-time 60 \
    'http://127.0.0.1:8080/cards/1.png?w=320&h=200')
  user=$("${podman[@]}" exec "$name" sh -c 'ps -o user= -p "$(systemctl show -p MainPID --value innerpeace)"')
  echo "card: $card, user: $user"
  [ "$card" = 200 ] || status=1
  [ -n "$user" ] && [ "$user" != root ] || status=1
  if "${podman[@]}" exec "$name" journalctl -u innerpeace --no-pager | grep -i 'fontconfig'; then
    echo "fontconfig complained (above)"
    status=1
  fi
  "${podman[@]}" exec "$name" systemctl stop innerpeace
  local result
  result=$("${podman[@]}" exec "$name" systemctl show -p Result --value innerpeace)
  echo "stopped: $result"
  [ "$result" = success ] || status=1
  [ $status -eq 0 ] || "${podman[@]}" exec "$name" journalctl -u innerpeace --no-pager | tail -20
  "${podman[@]}" rm -f "$name" >/dev/null
  container_name=""
  return $status
}
# The Deployment's container as Kubernetes would run it, in podman: user 10001, read-only root, no
# capabilities, no privilege escalation, the emptyDir as a folder on /tmp (mode 0777, as an
# emptyDir's; this podman drops a tmpfs's mode), the ConfigMap's settings
# and the container's env (PORT, XDG_CACHE_HOME...), its args where BINARY knows them. It must
# answer /healthz and a card on port 8080 with no fontconfig error in its log, and exit 0 on SIGTERM.
kubernetes_container() {
  local root=$1 name="innerpeace-deploy-check-pod-$$" rootfs="$work/pod-root" mounts=() settings=() arguments=()
  export CONTAINERS_CONF="$work/containers.conf"
  local podman=(podman --runtime "$(command -v runc)")
  bare_root "$rootfs"
  rm -rf "$work/pod-tmp" && mkdir -p "$work/pod-tmp" && chmod 0777 "$work/pod-tmp"
  mapfile -t mounts < <(binary_mounts)
  mapfile -t settings < <("$python" scripts/deploy_check.py env "$root" pod | sed 's/^/--env=/')
  mapfile -t arguments < <("$python" scripts/deploy_check.py pod-args "$root")
  if ! "$binary" serve --help | grep -q -- '--metrics-address'; then
    echo "this binary has no --metrics-address: run without it"
    arguments=(serve)
  fi
  echo "${settings[*]} ${arguments[*]}"
  "${podman[@]}" run -d --name "$name" --network none --read-only --user 10001:10001 --cap-drop ALL \
    --security-opt no-new-privileges -v "$work/pod-tmp:/tmp" -v /usr:/usr:ro "${mounts[@]}" "${settings[@]}" \
    --rootfs "$rootfs" "$binary" "${arguments[@]}" >/dev/null || return 1
  container_name=$name
  local status=0
  for _ in $(seq 150); do
    "${podman[@]}" exec "$name" curl -sf -o /dev/null http://127.0.0.1:8080/healthz && break
    sleep 0.2
  done
  local card user
  card=$("${podman[@]}" exec "$name" curl -s -o /dev/null -w '%{http_code}' --max-time 60 \
    'http://127.0.0.1:8080/cards/1.png?w=320&h=200')
  user=$("${podman[@]}" exec "$name" id -u)
  echo "card: $card, user: $user"
  [ "$card" = 200 ] && [ "$user" = 10001 ] || status=1
  "${podman[@]}" stop -t 45 "$name" >/dev/null
  local code
  code=$("${podman[@]}" inspect -f '{{.State.ExitCode}}' "$name")
  echo "exit status after SIGTERM: $code"
  [ "$code" = 0 ] || status=1
  if "${podman[@]}" logs "$name" 2>&1 | grep -i 'fontconfig'; then
    echo "fontconfig complained (above)"
    status=1
  fi
  [ $status -eq 0 ] || "${podman[@]}" logs "$name" 2>&1 | tail -20
  "${podman[@]}" rm -f "$name" >/dev/null
  container_name=""
  return $status
}
prometheus_rules() { promtool check rules "$1/deploy/prometheus/alerts.yaml"; }
prometheus_config() { promtool check config "$1/deploy/prometheus/prometheus.yml"; }
compose_file() { "$python" scripts/deploy_check.py compose "$1"; }
dashboard_file() { "$python" scripts/deploy_check.py dashboard "$1"; }
metric_names() { "$python" scripts/deploy_check.py names "$1" "$work/metrics.txt"; }

# BINARY serve on a free loopback port with the settings of ROOT's deploy file SOURCE (kubernetes: the
# ConfigMap; compose: the service's environment; systemd: innerpeace.env), less the address ones,
# which the command line replaces. Waits on its "listening" line (text or JSON), polled at most 300
# times, and sets $port; fails, with the server's log, if it exits first.
start_server() { # ROOT SOURCE
  local settings=()
  mapfile -t settings < <("$python" scripts/deploy_check.py env "$1" "$2")
  echo "settings from $2: ${settings[*]}"
  env "${settings[@]}" "$binary" serve --host 127.0.0.1 --port 0 2>"$work/server.log" >/dev/null &
  server_pid=$!
  port=""
  for _ in $(seq 300); do
    port=$(grep -o 'listening[^0-9]*127\.0\.0\.1:[0-9]*' "$work/server.log" | head -1 | sed 's/.*://')
    [ -n "$port" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$work/server.log"
  server_pid=""
  return 1
}
stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" || true
  server_pid=""
}
# The server with the Kubernetes settings: a few requests (a render of each format, a cache hit,
# a 404), one scrape of /metrics into $work/metrics.txt, then SIGTERM.
scrape_server() {
  start_server "$repo" kubernetes || return 1
  local path
  for path in /healthz /cards/1.png /cards/1.png '/cards/2.jpg?w=320&h=200' /cards/3.webp /quotes /no-such-page; do
    curl -s -o /dev/null --max-time 60 "http://127.0.0.1:$port$path"
  done
  curl -sf --max-time 10 "http://127.0.0.1:$port/metrics" >"$work/metrics.txt"
  stop_server
  grep -q '^http_request_duration_seconds_bucket' "$work/metrics.txt"
}
# The settings of compose.yaml or the systemd env file start the server (a value it would refuse
# stops start-up with a line naming the variable).
server_starts_with() { # ROOT SOURCE
  start_server "$1" "$2" || return 1
  curl -sf -o /dev/null --max-time 10 "http://127.0.0.1:$port/healthz"
  local status=$?
  stop_server
  return $status
}
compose_settings() { server_starts_with "$1" compose; }
systemd_settings() { server_starts_with "$1" systemd; }

# The Indexed Job's command, as a pod with JOB_COMPLETION_INDEX 0 and then 1 would run it (two
# shards of six cards, one worker each), then the merge, checked against the same run unsharded.
indexed_job() {
  local command
  command=$("$python" scripts/deploy_check.py job-command "$repo" "$binary" "$work/cards" 2)
  echo "$command"
  JOB_COMPLETION_INDEX=0 /bin/sh -c "$command" || return 1
  JOB_COMPLETION_INDEX=1 /bin/sh -c "$command" || return 1
  "$python" deploy/kubernetes/batch/merge-manifests.py "$work/cards" 2 || return 1
  "$binary" batch --out-dir "$work/whole" --jobs 1 --quiet --count 6 || return 1
  "$python" scripts/deploy_check.py batch "$work/cards" 2 "$work/whole" || return 1
  # The merge refuses a missing shard and an image listed by two shards; the check after it, a
  # card whose bytes differ from the manifest.
  rm -rf "$work/broken-cards" && cp -R "$work/cards" "$work/broken-cards"
  rm "$work/broken-cards/manifest-2-of-2.json"
  if "$python" deploy/kubernetes/batch/merge-manifests.py "$work/broken-cards" 2; then
    echo "merge-manifests.py merged without shard 2"
    return 1
  fi
  cp "$work/cards/manifest-1-of-2.json" "$work/broken-cards/manifest-2-of-2.json"
  sed -i 's|"shard" : "1/2"|"shard" : "2/2"|; s|"shard": "1/2"|"shard": "2/2"|' "$work/broken-cards/manifest-2-of-2.json"
  if "$python" deploy/kubernetes/batch/merge-manifests.py "$work/broken-cards" 2; then
    echo "merge-manifests.py merged shard 1's images twice"
    return 1
  fi
  rm -rf "$work/broken-cards" && cp -R "$work/cards" "$work/broken-cards"
  printf 'x' >>"$work/broken-cards/0003-og.png"
  if "$python" scripts/deploy_check.py batch "$work/broken-cards" 2; then
    echo "a damaged card passed the check"
    return 1
  fi
}

# A copy of the deploy files with one change: sed EXPRESSION on FILE (relative to the copy).
broken_copy() {
  rm -rf "$work/broken" && mkdir -p "$work/broken"
  cp -R deploy compose.yaml "$work/broken/"
  sed -i "$2" "$work/broken/$1"
  cmp -s "$1" "$work/broken/$1" && { say "the change '$2' left $1 as it was"; return 1; }
  return 0
}
must_fail() { # DESCRIPTION FILE SED CHECK: the check must fail on the broken copy
  if ! broken_copy "$2" "$3"; then failed=$((failed + 1)); return; fi
  if "$4" "$work/broken" >"$work/out" 2>&1; then
    say "FAILED: $1 was not caught by $4"
    failed=$((failed + 1))
  else
    say "ok: $1 is caught by $4"
  fi
}

if ! have_python; then
  say "skipped every check: no .build/pytools with PyYAML (bash scripts/install-deps.sh --with-test-tools)"
  exit 0
fi
if [ -x "$validate" ]; then
  run_check "Kubernetes manifests (kubernetes-validate --strict, Kubernetes $KUBERNETES_VERSION)" kubernetes_files "$repo"
else
  say "skipped the Kubernetes manifests: no kubernetes-validate in .build/pytools (install-deps.sh --with-test-tools)"
fi
if command -v systemd-analyze >/dev/null; then
  run_check "systemd unit (systemd-analyze verify, security)" systemd_unit "$repo"
else
  say "skipped the systemd unit: no systemd-analyze (apt-get install systemd)"
fi
if command -v promtool >/dev/null; then
  run_check "alert rules (promtool check rules)" prometheus_rules "$repo"
  run_check "prometheus.yml (promtool check config)" prometheus_config "$repo"
else
  say "skipped the Prometheus files: no promtool (apt-get install prometheus)"
fi
run_check "compose.yaml" compose_file "$repo"
run_check "Grafana dashboard" dashboard_file "$repo"

if $fast; then
  say "--fast: the metric names against a running server, the Indexed Job's run and the broken copies are left out"
elif [ ! -x "$binary" ]; then
  say "skipped the metric names and the Indexed Job: no $binary (swift build)"
else
  run_check "compose.yaml's settings start the server" compose_settings "$repo"
  run_check "innerpeace.env's settings start the server" systemd_settings "$repo"
  if run_check "the server with the Kubernetes settings: /metrics after a few requests" scrape_server; then
    run_check "metric and label names of the dashboard and the alerts" metric_names "$repo"
  fi
  run_check "the Indexed Job's command for shards 1/2 and 2/2, merged" indexed_job
  if podman_runs; then
    run_check "the Deployment's container settings, run in podman" kubernetes_container "$repo"
  else
    say "skipped the Deployment's container run: podman (with runc) cannot run here"
  fi
  if ! command -v systemd-analyze >/dev/null; then
    say "skipped the systemd unit's run: no systemd"
  elif podman_runs; then
    run_check "the systemd unit run by systemd in a container" systemd_service "$repo"
  else
    say "skipped the systemd unit's run: podman (with runc) cannot run here"
  fi
  # Each check fails on a copy with one mistake.
  [ -x "$validate" ] && must_fail "a misspelt securityContext field" deploy/kubernetes/deployment.yaml \
    's/readOnlyRootFilesystem: true/readOnlyRootFilsystem: true/' kubernetes_files
  [ -x "$validate" ] && must_fail "replicas: two" deploy/kubernetes/deployment.yaml 's/replicas: 2/replicas: two/' kubernetes_files
  [ -x "$validate" ] && must_fail "readiness probe on /healthz" deploy/kubernetes/deployment.yaml \
    's|path: /readyz|path: /healthz|' kubernetes_files
  [ -x "$validate" ] && must_fail "fontconfig's cache off the emptyDir" deploy/kubernetes/deployment.yaml \
    's|mountPath: /tmp|mountPath: /scratch|' kubernetes_files
  [ -x "$validate" ] && must_fail "a Job that is not Indexed" deploy/kubernetes/batch/job.yaml \
    's/completionMode: Indexed/completionMode: NonIndexed/' kubernetes_files
  command -v systemd-analyze >/dev/null && must_fail "ProtectSystem=strikt" deploy/systemd/innerpeace.service \
    's/ProtectSystem=strict/ProtectSystem=strikt/' systemd_unit
  command -v systemd-analyze >/dev/null && must_fail "the unit's hardening left out" deploy/systemd/innerpeace.service \
    '/^\(Protect\|Private\|Restrict\|SystemCall\|Capability\|NoNewPriv\|MemoryDeny\|Lock\|DynamicUser\)/d' systemd_unit
  if command -v systemd-analyze >/dev/null && podman_runs; then
    must_fail "a unit without its fontconfig cache directory" deploy/systemd/innerpeace.service \
      '/^CacheDirectory=/d; /^Environment=XDG_CACHE_HOME/d' systemd_service
  fi
  command -v promtool >/dev/null && must_fail "an alert expression that does not parse" deploy/prometheus/alerts.yaml \
    's/innerpeace_render_workers == 0/innerpeace_render_workers == = 0/' prometheus_rules
  command -v promtool >/dev/null && must_fail "a scrape interval of 15x" deploy/prometheus/prometheus.yml \
    's/scrape_interval: 15s/scrape_interval: 15x/' prometheus_config
  must_fail "a cache size the server refuses in innerpeace.env" deploy/systemd/innerpeace.env \
    's/INNERPEACE_CACHE_MB=32/INNERPEACE_CACHE_MB=3x2/' systemd_settings
  must_fail "compose without read_only" compose.yaml 's/read_only: true/read_only: false/' compose_file
  must_fail "the dashboard's data source replaced" deploy/grafana/innerpeace-dashboard.json \
    '0,/"uid": "${DS_PROMETHEUS}"/s//"uid": "prometheus"/' dashboard_file
  if [ -s "$work/metrics.txt" ]; then
    must_fail "a metric name with a typo in the dashboard" deploy/grafana/innerpeace-dashboard.json \
      's/innerpeace_renders_in_flight/innerpeace_render_in_flight/' metric_names
    must_fail "a metric name with a typo in an alert" deploy/prometheus/alerts.yaml \
      's/innerpeace_requests_rejected_total/innerpeace_request_rejected_total/' metric_names
    must_fail "a label the server does not export" deploy/grafana/innerpeace-dashboard.json \
      's/sum by (route, status)/sum by (handler, status)/' metric_names
  fi
fi
if [ "$failed" -gt 0 ]; then
  say "$failed check(s) failed"
  exit 1
fi
say "every check passed"
