#!/usr/bin/env bash
# Takes the LLM pictures in docs/ under Xvfb: the LLM tab of a node from the window's own llm search
# (tst_guillm's search against tests/llm_server.py, replaying tests/data/llm, on the CPU backend) and
# the Settings dialog with an LLM proposer picked. Needs a full build with tests:
# packaging/llm_screenshots.sh [BUILD_DIR, default build/ci].
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/ci}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sql() { python3 -c "import sqlite3,sys; print(sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True).execute(sys.argv[2]).fetchone()[0])" "$@"; }

session="$work/llm.kforge"
# The test's verdicts need a quiet machine (its replayed kernel must beat ATen by more than the noise);
# the pictures only need the session it wrote.
KFORGE_TEST_KEEP_SESSION="$session" QT_QPA_PLATFORM=offscreen "$build/tests/tst_guillm" llmSearchInTheWindow > "$work/test.log" \
  || { [ -f "$session" ] || { cat "$work/test.log"; exit 1; }; echo "llm_screenshots: tst_guillm failed; picturing its session anyway"; }
# The best correct node an LLM call made: accepted first.
node=$(sql "$session" "SELECT n.id FROM nodes n JOIN llm_calls c ON c.node_id = n.id WHERE n.status IN ('accepted', 'not_faster')
                       ORDER BY n.status = 'accepted' DESC, n.speedup DESC LIMIT 1")

# Settings and keys of this run only: a settings folder of its own, no keychain (none under Xvfb).
export XDG_CONFIG_HOME="$work/config"
mkdir -p "$XDG_CONFIG_HOME/kforge"
printf '[proposer]\nkind=llm\nprovider=openrouter\nmodel=deepseek/deepseek-chat\nbudget=5\n' > "$XDG_CONFIG_HOME/kforge/kforge.conf"
shot() { # shot NAME ARGS...
  local name="$1"; shift
  xvfb-run -a -s '-screen 0 1600x1000x24' "$build/app/kforge" "$@" --screenshot "docs/$name" --screenshot-after-ms 1500
}
shot guide-llm.png "$session" --select "$node" --panel llm
OPENROUTER_API_KEY=sk-or-v1-not-a-real-key shot guide-settings-llm.png "$session" --settings
echo "llm screenshots: docs/guide-llm.png (node $node), docs/guide-settings-llm.png"
