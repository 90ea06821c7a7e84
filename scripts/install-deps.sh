#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages innerpeace builds and renders with, if any are missing.
# Idempotent and quick when everything is there. Needs root or sudo only when installing.
set -euo pipefail

PACKAGES=(
  pkg-config
  libcairo2-dev libpango1.0-dev libfontconfig-dev   # drawing and text layout
  libturbojpeg0-dev libwebp-dev libdeflate-dev      # JPEG in and out, WebP out, PNG compression
  libjpeg62-turbo-dev                               # the part of a photo a card shows (libjpeg's crop and skip)
  libpng-dev                                        # PNG in, row by row
  libavif-dev                                       # AVIF out (libavif 0.11 with libaom; its runtime package is libavif15)
  liblcms2-dev                                      # photos' colour profiles to sRGB (LittleCMS 2)
  libhyphen-dev                                     # hyphenation of long words (libhyphen)
  hyphen-en-us hyphen-de hyphen-fr hyphen-es hyphen-it hyphen-nl hyphen-pt-pt hyphen-pl hyphen-hu hyphen-ru hyphen-uk hyphen-el  # its patterns
  fonts-dejavu-core fonts-noto-core                 # serif companions: Arabic, Urdu, Hebrew, Indic, SE Asian, Georgian, ...
  fonts-noto-cjk fonts-noto-color-emoji             # fallback: Chinese, Japanese, Korean, colour emoji
)
if [ "${1:-}" = "--with-test-tools" ]; then
  # The page's browser test (Chromium over DevTools) and the iCalendar check, with Debian's python3.
  # bsdutils: `script`, the pseudo-terminal the command-line tests draw progress bars and tables on.
  # nginx: the reverse proxy the header-size test (Tests/proxy/nginx_test.py) sends cards through.
  # nodejs: `node --check` of the page's script (Resources/page/page.js).
  # time: GNU time, the peak memory of a command-line run (Tests/InnerPeaceCLITests/LargePictureTests).
  # Two font packages with private-use glyphs, so the suite always runs beside fonts it does not
  # bundle (Glyphicons maps U+E010, as LibreOffice's OpenSymbol does).
  PACKAGES+=(chromium python3 python3-websocket python3-icalendar python3-venv bsdutils nginx nodejs time)
  PACKAGES+=(fonts-glyphicons-halflings fonts-font-awesome)
  # The deployment files' checks (scripts/deploy-check.sh): promtool (in Debian's prometheus) for the
  # alert rules and prometheus.yml, systemd-analyze for the unit; curl to scrape a server's /metrics.
  PACKAGES+=(prometheus systemd curl)
  # The container test (scripts/container-test.sh): podman as root with the runc runtime, and
  # debootstrap to make its Debian 12 base from the mirror apt uses (no registry is reachable).
  PACKAGES+=(podman runc debootstrap)
  # The PNG and WebP encoders' files in other decoders (Tests/decoders/decoders_test.py): pngcheck,
  # and Pillow with numpy for the reference pixels.
  PACKAGES+=(pngcheck python3-pil python3-numpy)
fi

# Python test tools from PyPI, pinned, in one virtualenv (.build/pytools) made with the python3 on
# PATH: schemathesis for the API contract (scripts/api-contract.sh); icalendar and feedparser for the
# subscribable feeds (Tests/feeds/feeds_test.py); metadata-parser for the link previews
# (Tests/pages/preview_test.py); kubernetes-validate for the Kubernetes manifests
# (scripts/deploy-check.sh; it brings PyYAML, which the other deployment checks read with).
PY_TEST_PACKAGES=(
  schemathesis==4.32.5
  icalendar==7.3.0
  feedparser==6.0.14
  metadata-parser==2.0.0
  kubernetes-validate==1.37.0
)

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "innerpeace: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "innerpeace: run as root or install sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO="sudo"
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ "${1:-}" = "--with-test-tools" ]; then
  cd "$(dirname "$0")/.."
  [ -x .build/pytools/bin/python ] || python3 -m venv .build/pytools
  wanted=()
  for requirement in "${PY_TEST_PACKAGES[@]}"; do
    # pip show fails for a package not installed yet: that is "none", not an error.
    installed=$( (.build/pytools/bin/python -m pip show "${requirement%%==*}" 2>/dev/null || true) | sed -n 's/^Version: //p')
    [ "$installed" = "${requirement##*==}" ] || wanted+=("$requirement")
  done
  if [ ${#wanted[@]} -gt 0 ]; then
    echo "innerpeace: installing ${wanted[*]} into .build/pytools" >&2
    .build/pytools/bin/pip install -q "${wanted[@]}"
  fi
fi
