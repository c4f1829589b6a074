#!/usr/bin/env bash
# A CUDA sweep where the worker has no CUDA backend (a machine without a GPU): the family must be
# reported as not replayed and nothing written to the cache, where each point had been cached as a
# failed kernel (0.0) and read as one by every later replay.
# Usage: sweep_no_device.sh PATH/TO/kforge-mcts-sweep-bench
set -u
cache=$(mktemp)
trap 'rm -f "$cache"' EXIT
echo '{}' > "$cache"
"$1" --backend cuda --families relu --seeds 1 --cache "$cache" 2>&1
if [[ "$(tr -d '[:space:]' < "$cache")" == "{}" ]]; then echo "cache untouched"; else echo "cache written:"; cat "$cache"; fi
