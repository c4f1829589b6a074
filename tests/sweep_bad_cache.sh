#!/usr/bin/env bash
# A --cache that does not read (a sweep killed while an older version wrote it, an edit gone wrong) is
# refused with its name, and left as it is: it used to be replaced by an empty cache, losing every
# measurement in it.
# Usage: sweep_bad_cache.sh PATH/TO/kforge-mcts-sweep-bench
set -u
cache=$(mktemp)
trap 'rm -f "$cache"' EXIT
printf '{"relu": {"cpu.relu.rows{\\"unroll\\":4}": 1.5' > "$cache"
before=$(md5sum < "$cache")
"$1" --backend cpu --families relu --seeds 1 --cache "$cache" 2>&1
rc=$?
[[ "$(md5sum < "$cache")" == "$before" ]] && echo "cache untouched, exit $rc" || echo "cache changed, exit $rc"
