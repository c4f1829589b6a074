#!/usr/bin/env bash
# Builds kforge_<version>_<arch>.deb (worker included) and checks its metadata; with --check, also
# installs it, runs each program once and removes it again. Needs the build dependencies
# (packaging/install-deps.sh) and, for the checks, desktop-file-utils and appstream.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${KFORGE_DEB_BUILD:-build/deb}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKFORGE_BUILD_TESTS=OFF -DKFORGE_WERROR=ON
cmake --build "$build" -j "$(nproc)"
desktop-file-validate resources/org.kforge.kforge.desktop
appstreamcli validate --no-net resources/org.kforge.kforge.metainfo.xml
(cd "$build" && cpack -G DEB)
deb="$(ls "$build"/kforge_*.deb | head -n1)"
dpkg-deb -I "$deb"
dpkg-deb -c "$deb"
if [ "${1:-}" = "--check" ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get install -y "./$deb"
  trap '$SUDO apt-get remove -y kforge' EXIT
  kforge --version
  kforge-cli --help > /dev/null
  xvfb-run -a kforge --help > /dev/null
  dir="$(mktemp -d)"
  kforge-cli search --session "$dir/check.kforge" --nodes 2 --workers 1   # the installed worker and sandbox
  rm -rf "$dir"
fi
echo "deb: $deb"
