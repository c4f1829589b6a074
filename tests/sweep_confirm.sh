#!/usr/bin/env bash
# The sweep's --confirm on the CPU: every point within 10% of a family's best (by candidate time) is
# measured N more times and cached as a list (the sweep's measurement first, each with its candidate
# median under "#candidate_us"), points below that band keep one number, and a
# replay of that cache with no worker reads the lists back (nothing measured again).
# Usage: sweep_confirm.sh PATH/TO/kforge-mcts-sweep-bench
set -u
cache=$(mktemp)
trap 'rm -f "$cache"' EXIT
echo '{}' > "$cache"
"$1" --backend cpu --families relu,sum --seeds 2 --samples 3 --confirm 2 --cache "$cache" > /dev/null 2>&1 || { echo "sweep failed"; exit 1; }
python3 - "$cache" <<'PY' || exit 1
import json, statistics, sys
cache = json.load(open(sys.argv[1]))
for family in ("relu", "sum"):
    points = cache[family]
    # The CPU ranks by candidate time: each measurement's candidate median is kept beside its speedup,
    # and a point's value is the family's baseline time (the median of speedup x candidate median)
    # over its candidates' median.
    times = cache["#candidate_us"][family]
    runs = {k: (v if isinstance(v, list) else [v]) for k, v in points.items()}
    for k, r in runs.items():
        if len(times[k]) != len(r):
            sys.exit(f"{family} {k}: {len(r)} speedups but {len(times[k])} candidate times")
    baseline = statistics.median(s * t for k, r in runs.items() for s, t in zip(r, times[k]) if s > 0 and t > 0)
    def value_of(k):
        r, t = runs[k], times[k]
        own = [baseline / c if s > 0 else 0 for s, c in zip(r, t)]
        own = own[1:] if len(own) > 1 else own
        return 0 if min(own) <= 0 else statistics.median(own)
    value = {k: value_of(k) for k in points}
    best = max(value.values())
    for k, v in points.items():
        confirmed = isinstance(v, list)
        # A point may enter the band and leave it again as the best is re-measured: then it has fewer.
        if confirmed and not 2 <= len(v) <= 3:
            sys.exit(f"{family} {k}: {len(v)} measurements, not the sweep's and at most 2 more")
        if value[k] > 0 and value[k] * 1.10 >= best and not (confirmed and len(v) == 3):
            sys.exit(f"{family} {k}: {v} is within 10% of the best {best} but was not confirmed twice")
    if not any(isinstance(v, list) for v in points.values()):
        sys.exit(f"{family}: nothing confirmed")
print("confirmed as asked")
PY
before=$(md5sum < "$cache")
"$1" --backend cpu --families relu,sum --seeds 2 --worker /nonexistent --cache "$cache" > /dev/null 2>&1 || { echo "the replay of a confirmed cache failed"; exit 1; }
[[ "$(md5sum < "$cache")" == "$before" ]] || { echo "the replay changed the cache"; exit 1; }
echo "replayed from the cache"
