#!/usr/bin/env bash
# Takes the "A search from an H200" pictures in docs/USER-GUIDE.md under Xvfb from the session in
# docs/sessions/h200-softmax-bf16.kforge (a 24-node bfloat16 softmax search run on an NVIDIA H200). It
# needs only the window: packaging/h200_screenshots.sh [BUILD_DIR, default build/dev].
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}"
session=docs/sessions/h200-softmax-bf16.kforge
sql() { python3 -c "import sqlite3,sys; print(sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True).execute(sys.argv[2]).fetchone()[0])" "$session" "$1"; }
shot() { # shot NAME ARGS...: one picture of the window
  local name="$1"; shift
  xvfb-run -a -s '-screen 0 1600x1000x24' "$build/app/kforge" "$session" "$@" --screenshot "docs/$name" --screenshot-after-ms 2000
}
best=$(sql "SELECT id FROM nodes WHERE status = 'accepted' ORDER BY speedup DESC LIMIT 1")
pipe=$(sql "SELECT id FROM nodes WHERE status = 'accepted' AND template = 'cuda.softmax.pipe' ORDER BY speedup DESC LIMIT 1")
cluster=$(sql "SELECT id FROM nodes WHERE status = 'accepted' AND template = 'cuda.softmax.cluster' ORDER BY speedup DESC LIMIT 1")
slow=$(sql "SELECT id FROM nodes WHERE status = 'not_faster' ORDER BY speedup DESC LIMIT 1")

shot guide-h200-tree.png --hover "$best" --panel compile-log
shot guide-h200-verdict.png --select "$best" --panel verdict
shot guide-h200-compare.png --compare "$best,$pipe,$cluster,$slow"
shot guide-h200-diff.png --select "$pipe" --diff-base "$best" --panel diff
echo "screenshots: docs/guide-h200-*.png (best #$best, pipe #$pipe, cluster #$cluster, not faster #$slow)"
