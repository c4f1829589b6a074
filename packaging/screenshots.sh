#!/usr/bin/env bash
# Takes the pictures in docs/ (README and docs/USER-GUIDE.md) from a real demo search under Xvfb:
# a 40-node CPU search on two workers, then one picture per panel. Needs a full build (worker
# included): packaging/screenshots.sh [BUILD_DIR, default build/dev].
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}"
app="$build/app"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
shot() { # shot NAME ARGS...: one picture of the window
  local name="$1"; shift
  xvfb-run -a -s '-screen 0 1600x1000x24' "$app/kforge" "$@" --screenshot "docs/$name" --screenshot-after-ms 1500
}
sql() { python3 -c "import sqlite3,sys; print(sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True).execute(sys.argv[2]).fetchone()[0])" "$@"; }

session="$work/demo.kforge"
"$app/kforge-cli" search --session "$session" --nodes 40 --workers 2 --worker "$app/kforge-worker" > /dev/null
best=$(sql "$session" "SELECT id FROM nodes WHERE status = 'accepted' ORDER BY speedup DESC LIMIT 1")
parent=$(sql "$session" "SELECT parent_id FROM nodes WHERE id = $best")
second=$(sql "$session" "SELECT id FROM nodes WHERE status = 'accepted' AND id <> $best ORDER BY speedup DESC LIMIT 1")
slow=$(sql "$session" "SELECT id FROM nodes WHERE status = 'not_faster' ORDER BY speedup DESC LIMIT 1")
wrong=$(sql "$session" "SELECT id FROM nodes WHERE status = 'incorrect' ORDER BY id LIMIT 1")
tmpl=$(sql "$session" "SELECT template FROM nodes WHERE id = $best")

shot screenshot-search.png "$session"
shot guide-hover.png "$session" --hover "$parent"
shot guide-filter.png "$session" --filter-status accepted --filter-hide
shot guide-filter-template.png "$session" --filter-template "$tmpl"
shot screenshot-diff.png "$session" --panel diff
shot guide-verdict.png "$session" --panel verdict
shot guide-verdict-incorrect.png "$session" --select "$wrong" --panel verdict
shot guide-compile-log.png "$session" --panel compile-log
shot guide-launch-plan.png "$session" --panel launch-plan
shot guide-parameters.png "$session" --panel parameters
shot guide-profile.png "$session" --panel profile
shot guide-compare.png "$session" --compare "$best,$second,$slow,$wrong"
shot guide-settings.png "$session" --settings

decided="$work/decided.kforge"
cp "$session" "$decided"
"$app/kforge-cli" decide --session "$decided" --node "$second" --reject \
  --reason "same template as #$best and slower: keep #$best" > /dev/null
shot screenshot-decision.png "$decided" --select "$second" --panel verdict

# A live search four seconds in.
xvfb-run -a -s '-screen 0 1600x1000x24' "$app/kforge" --demo "$work/live.kforge" --nodes 40 --workers 2 \
  --worker "$app/kforge-worker" --screenshot docs/screenshot-running.png --screenshot-after-ms 4000

# A 10,000-node session (kforge-gui-bench writes it) fitted to the window: the overview.
if [ -x "$build/ui/kforge-gui-bench" ]; then
  QT_QPA_PLATFORM=offscreen "$build/ui/kforge-gui-bench" --keep "$work/large.kforge" --frames 1 > /dev/null
  shot guide-overview.png "$work/large.kforge"
fi
echo "screenshots: docs/*.png from $session"
