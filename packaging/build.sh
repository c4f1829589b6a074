#!/usr/bin/env bash
# Configures and builds kforge with a CMake preset (default: dev). Idempotent; reuses the build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-dev}"
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$(nproc)"
