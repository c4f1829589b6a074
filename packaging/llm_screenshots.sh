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
KFORGE_TEST_KEEP_SESSION="$session" QT_QPA_PLATFORM=offscreen "$build/tests/tst_guillm" llmSearchInTheWindow > "$work/test.log" \
  || { cat "$work/test.log"; exit 1; }
node=$(sql "$session" "SELECT n.id FROM nodes n JOIN llm_calls c ON c.node_id = n.id WHERE n.status = 'accepted' ORDER BY n.speedup DESC LIMIT 1")

# Settings and keys of this run only: a settings folder of its own, no keychain (none under Xvfb).
export XDG_CONFIG_HOME="$work/config"
mkdir -p "$XDG_CONFIG_HOME/kforge"
printf '[proposer]\nkind=llm\nprovider=openrouter\nmodel=deepseek/deepseek-chat\nbudget=5\n' > "$XDG_CONFIG_HOME/kforge/kforge.conf"
shot() { # shot NAME ARGS...
  local name="$1"; shift
  xvfb-run -a -s '-screen 0 1600x1000x24' "$build/app/kforge" "$@" --screenshot "docs/$name" --screenshot-after-ms 1500
}
shot guide-llm.png "$session" --select "$node" --panel llm
OPENROUTER_API_KEY=sk-or-v1-not-a-real-key shot guide-settings-llm.png --settings
echo "llm screenshots: docs/guide-llm.png (node $node), docs/guide-settings-llm.png"
