#!/usr/bin/env bash
# Builds the container image (Dockerfile) from local parts and runs it as an operator would:
# read-only root file system, non-root user, PORT on a loopback port; checks /healthz, /readyz, a
# card of each format (decoded), the user, the read-only root, the HEALTHCHECK, then SIGTERM during
# a slow download (the answer completes, exit 0, the "stopped" line), and prints the image's size.
#
# No registry can be pulled here, so: the Debian 12 base is made with debootstrap from the mirror
# apt already uses and imported into podman (it stands for both swift:6.3.1-bookworm, with the
# toolchain of this machine bind-mounted at /opt/swift, and debian:bookworm-slim); the build reaches
# the Swift packages through the same git url.insteadOf mirror as the host's SwiftPM. Cached between
# runs under ${XDG_CACHE_HOME:-$HOME/.cache}/innerpeace-container: the base tarball (keyed by its
# recipe and mirror, made again after 7 days), the downloaded .debs, and the build folder (keyed by
# the toolchain's version and the base). Where podman cannot run, one line says why and it exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
started=$SECONDS
trap 'echo "innerpeace: container test FAILED: scripts/container-test.sh line $LINENO: $BASH_COMMAND" >&2' ERR

skip() {
  echo "innerpeace: container test skipped: $*"
  exit 0
}

command -v podman >/dev/null || skip "podman is not installed (bash scripts/install-deps.sh --with-test-tools)"
[ "$(id -u)" -eq 0 ] || skip "not root (the test runs podman as root, with runc)"
runc=$(command -v runc || true)
[ -n "$runc" ] || skip "runc is not installed (bash scripts/install-deps.sh --with-test-tools)"
command -v debootstrap >/dev/null || skip "debootstrap is not installed (bash scripts/install-deps.sh --with-test-tools)"
swift_dir=${INNERPEACE_SWIFT_DIR:-/opt/swift}
[ -x "$swift_dir/usr/bin/swift" ] || skip "no Swift toolchain at $swift_dir (set INNERPEACE_SWIFT_DIR)"

# The Debian mirror apt uses (deb822 URIs: or a one-line deb entry), and its security archive.
apt_uris=$( (cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null || true) |
  sed -n -e 's/^URIs:[[:space:]]*//p' -e 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\).*/\2/p')
mirror=$(grep -E '/debian/?$' <<<"$apt_uris" | head -1 || true)
security=$(grep -E '/debian-security/?$' <<<"$apt_uris" | head -1 || true)
[ -n "$mirror" ] || skip "no Debian mirror in /etc/apt/sources.list*"
mirror=${mirror%/}
security=${security%/}

# The Swift package mirror: git's url.<local folder>.insteadOf https://github.com/ (system or global).
package_mirror=$(git config --get-regexp '^url\..*\.insteadof$' 2>/dev/null |
  awk '$2 == "https://github.com/" { sub(/^url\./, "", $1); sub(/\.insteadof$/, "", $1); print $1; exit }')
[ -n "$package_mirror" ] && [ -d "$package_mirror" ] ||
  skip "no local Swift package mirror (git config url.<folder>.insteadOf https://github.com/)"

export CONTAINERS_CONF="$root/deploy/container/containers.conf"
podman=(podman --runtime "$runc")
"${podman[@]}" info >/dev/null 2>&1 ||
  skip "podman cannot run here: $("${podman[@]}" info 2>&1 | grep -m1 -i error || echo 'podman info failed')"

cache=${XDG_CACHE_HOME:-$HOME/.cache}/innerpeace-container
mkdir -p "$cache/apt-archives/partial"

# The base: Debian 12 minbase from the mirror, with its updates and security archive for apt, and
# slimmed as debian:bookworm-slim is (no documentation, manual pages or translations, now or from
# later installs), so the image's size is the one the public base gives.
base_recipe="2 bookworm minbase slim $mirror $security"
base_key=$(sha256sum <<<"$base_recipe" | cut -c1-12)
base_tar="$cache/base-bookworm-$base_key.tar"
base_image="localhost/innerpeace-base:bookworm-$base_key"
if [ -f "$base_tar" ] && [ -n "$(find "$base_tar" -mtime +7)" ]; then
  echo "innerpeace: the cached base is over 7 days old: making it again"
  rm -f "$base_tar"
  "${podman[@]}" rmi -f "$base_image" >/dev/null 2>&1 || true
fi
if [ ! -f "$base_tar" ]; then
  echo "innerpeace: making the Debian 12 base with debootstrap from $mirror"
  rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
  trap 'rm -rf "$rootfs"' EXIT
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror/" >"$cache/debootstrap.log" 2>&1 ||
    {
      tail -5 "$cache/debootstrap.log"
      echo "innerpeace: container test FAILED: debootstrap (log: $cache/debootstrap.log)"
      exit 1
    }
  {
    echo "deb $mirror bookworm main"
    echo "deb $mirror bookworm-updates main"
    [ -z "$security" ] || echo "deb $security bookworm-security main"
  } >"$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
EOF
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  rm -rf "$rootfs"/usr/share/{info,linda,lintian/overrides,locale,man,groff}/*
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -cf "$base_tar.part" . && mv "$base_tar.part" "$base_tar"
  rm -rf "$rootfs"
  trap - EXIT
fi
if ! "${podman[@]}" image exists "$base_image"; then
  # Bases of other recipes (or older ones) go; this one comes from its tarball.
  for old in $("${podman[@]}" images --format '{{.Repository}}:{{.Tag}}' localhost/innerpeace-base); do
    "${podman[@]}" rmi "$old" >/dev/null 2>&1 || true
  done
  find "$cache" -maxdepth 1 -name 'base-bookworm-*.tar' -not -name "${base_tar##*/}" -delete
  "${podman[@]}" import --quiet "$base_tar" "$base_image" >/dev/null
fi

# The builder's packages that the swift image has and a bare Debian lacks: the toolchain's own
# (as swift.org lists them for Debian 12) and git for the packages.
toolchain_packages="binutils ca-certificates git gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev \
libncurses-dev libpython3-dev libsqlite3-0 libstdc++-12-dev libxml2-dev libz3-dev tzdata unzip zlib1g-dev"
toolchain_version=$("$swift_dir/usr/bin/swift" --version 2>/dev/null | head -1)
# The build folder is SwiftPM's to keep current (it rebuilds what changed, headers included); its
# key changes with the toolchain, the Debian release and mirror, and the builder's packages.
build_key=$(sha256sum <<<"$toolchain_version bookworm $mirror $security $toolchain_packages" | cut -c1-12)
build_cache="$cache/build-$build_key"
mkdir -p "$build_cache"
# Only the mirror's url lines, for the build's git (SwiftPM clones through it).
git config --get-regexp '^url\..*\.insteadof$' | while read -r key value; do
  printf '[url "%s"]\n\tinsteadOf = %s\n' "$(sed -e 's/^url\.//' -e 's/\.insteadof$//' <<<"$key")" "$value"
done >"$cache/gitconfig"

image="localhost/innerpeace:container-test-$$"
container="innerpeace-container-test-$$"
cleanup() {
  "${podman[@]}" rm -f -t 0 "$container" >/dev/null 2>&1 || true
  "${podman[@]}" rmi -f "$image" >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "innerpeace: building the image (Swift: $toolchain_version)"
build_started=$SECONDS
"${podman[@]}" build --format docker --network=host --layers --quiet \
  --build-arg BUILDER_IMAGE="$base_image" --build-arg RUNTIME_IMAGE="$base_image" \
  --build-arg BUILDER_PACKAGES="$toolchain_packages" \
  -v "$swift_dir:/opt/swift:ro" -v "$package_mirror:$package_mirror:ro" -v "$cache/gitconfig:/etc/gitconfig:ro" \
  -v "$build_cache:/src/.build" -v "$cache/apt-archives:/var/cache/apt/archives" \
  -t "$image" -f Dockerfile . >"$cache/build.log" 2>&1 ||
  {
    tail -30 "$cache/build.log"
    echo "innerpeace: container test FAILED: podman build (log: $cache/build.log)"
    exit 1
  }
echo "innerpeace: built in $((SECONDS - build_started)) s"
# Podman keeps each build's first stage as an unnamed image, its layer cache: the newest one stays,
# those of earlier runs go (images are listed newest first).
"${podman[@]}" images -q --filter dangling=true --filter since="$base_image" | tail -n +2 |
  xargs -r "${podman[@]}" rmi >/dev/null 2>&1 || true

# A free loopback port; the container shares the host's network but listens on 127.0.0.1 only.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# --health-interval=disable: no systemd timer (podman still says it has no systemd to ask: in
# run.log); `podman healthcheck run` runs the image's HEALTHCHECK below.
"${podman[@]}" run -d --name "$container" --read-only --tmpfs /tmp:rw,size=64m,mode=1777 --network=host \
  --health-interval=disable -e PORT="$port" -e INNERPEACE_HOST=127.0.0.1 -e INNERPEACE_CONCURRENCY=2 \
  "$image" >/dev/null 2>"$cache/run.log" || {
  cat "$cache/run.log"
  echo "innerpeace: container test FAILED: podman run"
  exit 1
}

# Ready: the "listening on" line, read as the log comes (the 120 s timeout is a hang guard), then
# `innerpeace health --ready` tried a bounded number of times (`health` where the build has no
# /readyz yet: it answers 404).
exec {log}< <(timeout 120 "${podman[@]}" logs -f "$container" 2>&1)
log_reader=$!
if ! grep -m1 -q "listening on http://127.0.0.1:$port" <&"$log"; then
  "${podman[@]}" logs "$container" 2>&1 | tail -20
  echo "innerpeace: container test FAILED: no 'listening on' line"
  exit 1
fi
kill "$log_reader" 2>/dev/null || true
exec {log}<&-
probe=(/app/innerpeace health --ready)
for attempt in $(seq 1 100); do
  answer=$("${podman[@]}" exec "$container" "${probe[@]}" 2>&1) && break
  if [[ "$answer" == *"not ready: 404 "* ]]; then
    echo "note: this build has no /readyz (readiness not merged yet): waiting on /healthz"
    probe=(/app/innerpeace health)
  fi
  [ "$attempt" -lt 100 ] || {
    echo "$answer"
    echo "innerpeace: container test FAILED: ${probe[*]} never succeeded"
    exit 1
  }
done
echo "ok: ready after $attempt tries of ${probe[*]}: $answer"

python3 scripts/container-check.py "$port" cards

uid=$("${podman[@]}" exec "$container" sh -c 'grep ^Uid: /proc/1/status' | awk '{ print $2, $3, $4, $5 }')
[ "$uid" = "10001 10001 10001 10001" ] || {
  echo "innerpeace: container test FAILED: the service runs as uid $uid"
  exit 1
}
echo "ok: the service runs as uid 10001 ($("${podman[@]}" exec "$container" id -un)), not root"

[ "$("${podman[@]}" inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$container")" = true ] &&
  ! "${podman[@]}" exec "$container" sh -c 'echo x > /app/written' 2>/dev/null &&
  "${podman[@]}" exec "$container" sh -c 'echo x > /tmp/written' || {
  echo "innerpeace: container test FAILED: the root file system is writable (or /tmp is not)"
  exit 1
}
echo "ok: the root file system is read-only (a write to /app fails; /tmp is a tmpfs)"

health=$("${podman[@]}" healthcheck run "$container" 2>&1) || {
  echo "innerpeace: container test FAILED: podman healthcheck run: $health"
  exit 1
}
echo "ok: the image's HEALTHCHECK ($("${podman[@]}" image inspect --format '{{json .HealthCheck.Test}}' "$image")) passes: ${health:-healthy}"

python3 scripts/container-check.py "$port" drain "${podman[@]}" kill -s TERM "$container"
status=$(timeout 60 "${podman[@]}" wait "$container")
logs=$("${podman[@]}" logs "$container" 2>&1)
# The service's last record, in its text (logfmt) or JSON log format.
[ "$status" = 0 ] && grep -Eq '(^| )msg=stopped( |$)|"message":"stopped"' <<<"$logs" || {
  tail -20 <<<"$logs"
  echo "innerpeace: container test FAILED: after SIGTERM: exit $status, 'stopped' line: $(grep -c stopped <<<"$logs")"
  exit 1
}
echo "ok: drained after SIGTERM: exit 0 and the 'stopped' line"

size=$("${podman[@]}" image inspect --format '{{.Size}}' "$image")
echo "innerpeace: image size $((size / 1000000)) MB ($size bytes); the container test took $((SECONDS - started)) s"
