#!/usr/bin/env bash
# Takes the pictures in docs/ (README and docs/USER-GUIDE.md) under Xvfb.
#
# The inspector's pictures come from a shipped session, docs/sessions/cpu-softmax-demo.kforge (a real
# 80-node CPU search of the demo workload's softmax on one worker, 13 accepted, 50 not faster and 15
# incorrect candidates), so they do not depend on how busy this machine is: on a loaded machine a fresh demo search may accept no
# node at all (timings too noisy to clear the noise band). The live-search pictures come from a demo
# search run now. The dark pictures (docs/guide-dark-*.png) are the same panels with --palette dark.
#
#   packaging/screenshots.sh [BUILD_DIR, default build/dev]
# KFORGE_WORKER: the worker command for the live pictures (default BUILD_DIR/app/kforge-worker);
# KFORGE_CLI: a kforge-cli for decide and the campaign's workload (default BUILD_DIR/app/kforge-cli).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}"
app="$build/app"
worker="${KFORGE_WORKER:-$app/kforge-worker}"
cli="${KFORGE_CLI:-$app/kforge-cli}"
session=docs/sessions/cpu-softmax-demo.kforge
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The settings the pictures show are the defaults, not this user's.
export XDG_CONFIG_HOME="$work/config"
shot() { # shot NAME ARGS...: one picture of the window
  local name="$1"; shift
  # KFORGE_WORKER would show as the Settings' default worker: the pictures pass --worker where one is needed.
  env -u KFORGE_WORKER xvfb-run -a -s '-screen 0 1600x1000x24' "$app/kforge" "$@" --screenshot "docs/$name" \
    --screenshot-after-ms 1500 > /dev/null
  echo "docs/$name"
}
sql() { python3 -c "import sqlite3,sys; print(sqlite3.connect('file:' + sys.argv[1] + '?mode=ro&immutable=1', uri=True).execute(sys.argv[2]).fetchone()[0])" "$@"; }
need() { # need SQL WHAT: the shipped session must have it, or the pictures would say nothing
  local n; n=$(sql "$session" "$1")
  [ "$n" -gt 0 ] || { echo "screenshots: $session has no $2" >&2; exit 1; }
}

# Read-only copies: opening the shipped file must not leave -wal or -shm files beside it.
cp "$session" "$work/demo.kforge"
inspect="$work/demo.kforge"
need "SELECT count(*) FROM nodes WHERE status = 'accepted'" "accepted node"
need "SELECT count(*) FROM nodes WHERE status = 'not_faster'" "node that is not faster"
need "SELECT count(*) FROM nodes WHERE status = 'incorrect'" "incorrect node"
best=$(sql "$inspect" "SELECT id FROM nodes WHERE status = 'accepted' ORDER BY speedup DESC LIMIT 1")
parent=$(sql "$inspect" "SELECT parent_id FROM nodes WHERE id = $best")
second=$(sql "$inspect" "SELECT id FROM nodes WHERE status = 'accepted' AND id <> $best ORDER BY speedup DESC LIMIT 1")
slow=$(sql "$inspect" "SELECT id FROM nodes WHERE status = 'not_faster' ORDER BY speedup DESC LIMIT 1")
wrong=$(sql "$inspect" "SELECT id FROM nodes WHERE status = 'incorrect' ORDER BY id LIMIT 1")
tmpl=$(sql "$inspect" "SELECT template FROM nodes WHERE id = $best")

pictures() { # pictures PREFIX ARGS...: every panel of the inspector
  local p="$1"; shift
  shot "${p}search.png" "$inspect" "$@"
  shot "${p}hover.png" "$inspect" --hover "$parent" "$@"
  shot "${p}filter.png" "$inspect" --filter-status accepted --filter-hide "$@"
  shot "${p}filter-template.png" "$inspect" --filter-template "$tmpl" "$@"
  shot "${p}diff.png" "$inspect" --panel diff "$@"
  shot "${p}verdict.png" "$inspect" --panel verdict "$@"
  shot "${p}verdict-incorrect.png" "$inspect" --select "$wrong" --panel verdict "$@"
  shot "${p}compile-log.png" "$inspect" --panel compile-log "$@"
  shot "${p}launch-plan.png" "$inspect" --panel launch-plan "$@"
  shot "${p}parameters.png" "$inspect" --panel parameters "$@"
  shot "${p}profile.png" "$inspect" --panel profile "$@"
  shot "${p}compare.png" "$inspect" --compare "$best,$second,$slow,$wrong" "$@"
  shot "${p}settings.png" "$inspect" --settings "$@"
}
pictures guide- --palette light
# The older names the README links.
mv docs/guide-search.png docs/screenshot-search.png
mv docs/guide-diff.png docs/screenshot-diff.png

decided="$work/decided.kforge"
cp "$session" "$decided"
"$cli" decide --session "$decided" --node "$second" --reject \
  --reason "same template as #$best and slower: keep #$best" > /dev/null
shot screenshot-decision.png "$decided" --select "$second" --panel verdict --palette light

# A campaign's plan: the built-in decoder block profiled on the CPU, where Debian's python3-torch is.
if "$cli" model decoder --out "$work/decoder.json" > /dev/null 2>&1 &&
   "$cli" profile "$work/decoder.json" --device cpu --worker "$worker" > /dev/null 2>&1; then
  shot guide-campaign-plan.png --campaign "$work/decoder.json" --worker "$worker" --nodes 24 --palette light
  "$cli" campaign --workload "$work/decoder.json" --nodes 12 --samples 10 --no-lessons --worker "$worker" \
    --session "$work/decoder.campaign.kforge" > /dev/null
  shot guide-campaign.png "$work/decoder.campaign.kforge" --palette light
else
  echo "screenshots: no profiled workload (kforge-cli profile needs the worker and torch); campaign pictures kept" >&2
fi

# A live search four seconds in: the only picture that needs this machine's timings.
xvfb-run -a -s '-screen 0 1600x1000x24' "$app/kforge" --demo "$work/live.kforge" --nodes 40 --workers 2 \
  --worker "$worker" --palette light --screenshot docs/screenshot-running.png --screenshot-after-ms 4000 > /dev/null
echo docs/screenshot-running.png

# A 10,000-node session (kforge-gui-bench writes it) fitted to the window: the overview.
if [ -x "$build/ui/kforge-gui-bench" ]; then
  QT_QPA_PLATFORM=offscreen "$build/ui/kforge-gui-bench" --keep "$work/large.kforge" --frames 1 > /dev/null
  shot guide-overview.png "$work/large.kforge" --palette light
fi

# The same panels on a dark palette, and the timeline.
pictures guide-dark- --palette dark
if [ -f "$work/decoder.json" ]; then
  shot guide-dark-campaign.png "$work/decoder.campaign.kforge" --palette dark
  shot guide-dark-timeline.png --workload "$work/decoder.json" --palette dark
fi
echo "screenshots: docs/*.png from $session"
