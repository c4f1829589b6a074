#!/usr/bin/env bash
# Installs every Debian 12 package kforge needs to build, run and test. Idempotent: packages already
# present are left alone, so running it twice costs one apt-get call.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-base-dev-tools libqt6sql6-sqlite qt6-charts-dev qt6-networkauth-dev
  libqscintilla2-qt6-dev qtkeychain-qt6-dev libgl-dev dbus gnome-keyring
  libtorch-dev nlohmann-json3-dev libsqlite3-dev libcurl4-openssl-dev libdtl-dev
  xvfb xauth x11-apps imagemagick python3
  desktop-file-utils appstream
  python3-torch
  slurm-wlm munge openssh-server openssh-client
  bubblewrap libseccomp-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
