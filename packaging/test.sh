#!/usr/bin/env bash
# Installs dependencies, builds with warnings as errors, and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
bash packaging/build.sh ci
ctest --preset ci
