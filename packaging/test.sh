#!/usr/bin/env bash
# Installs dependencies, builds with warnings as errors, and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
bash packaging/build.sh ci
# A one-node Slurm cluster and an sshd on loopback, so workers are also tested through srun and ssh.
if [ "$(id -u)" -eq 0 ]; then
  if conf=$(bash tools/ci/start-local-slurm.sh); then
    export SLURM_CONF="$conf" KFORGE_TEST_SRUN="srun --quiet -N1 -n1"
  fi
  if prefix=$(bash tools/ci/start-local-sshd.sh); then
    export KFORGE_TEST_SSH="$prefix"
  fi
else
  echo "test: not root, so no local Slurm or sshd; the srun and ssh transport tests will skip"
fi
ctest --preset ci
