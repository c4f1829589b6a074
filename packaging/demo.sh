#!/usr/bin/env bash
# Installs dependencies, builds, and opens kforge on the built-in demo workload with a live search
# using the offline template generator. Without a display it runs under Xvfb and saves a screenshot.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
bash packaging/build.sh dev
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec ./build/dev/app/kforge --demo "$@"
fi
echo "demo: no display found; running under Xvfb and saving docs/screenshot-demo.png after 30 s"
exec xvfb-run -a -s "-screen 0 1600x1000x24" ./build/dev/app/kforge --demo \
  --screenshot docs/screenshot-demo.png --screenshot-after-ms 30000 "$@"
