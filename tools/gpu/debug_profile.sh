#!/usr/bin/env bash
# Diagnoses a profile request on the GPU host: builds the request for a session's node, runs the worker
# on it directly (stderr visible) and, if it dies, under cuda-gdb for a backtrace.
# Usage: tools/gpu/debug_profile.sh BUILD_DIR SESSION NODE OUT_DIR
set -uo pipefail
build=$1; ses=$2; node=$3; out=$4
python3 - "$ses" "$node" > "$out/req.json" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1]); node = int(sys.argv[2])
op, = db.execute("SELECT operator_id FROM nodes WHERE id=?", (node,)).fetchone()
card, = db.execute("SELECT card_json FROM operators WHERE id=?", (op,)).fetchone()
backend, code, launch = db.execute("SELECT backend, code, launch_json FROM sources WHERE node_id=?", (node,)).fetchone()
print(json.dumps({"id": 1, "type": "profile", "card": json.loads(card),
                  "candidate": {"backend": backend, "source": code, "launch": json.loads(launch)}}))
PY
timeout 200 "$build/app/kforge-worker" < "$out/req.json" > "$out/reply.json" 2> "$out/worker-stderr.log"
echo "worker exit: $?"; head -c 1500 "$out/reply.json"; echo; tail -20 "$out/worker-stderr.log"
if ! grep -q '"type":"profile"' "$out/reply.json"; then
  timeout 200 cuda-gdb -q -batch -ex "run < $out/req.json > $out/gdb-reply.json" -ex "bt 25" -ex "info threads" --args "$build/app/kforge-worker" > "$out/gdb.log" 2>&1
  grep -E "^#|signal|SIG" "$out/gdb.log" | head -40
fi
