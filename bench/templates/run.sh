#!/usr/bin/env bash
# The template benchmark on a CUDA host: every template verified on every dtype, then for each case a
# kforge search (cuda backend) beside eager PyTorch and torch.compile, joined into one table.
# Usage: bench/templates/run.sh BUILD_DIR OUT_DIR [NODES]
# KFORGE_CASES names another cases file (cases-models.json: shapes of real models); KFORGE_SKIP_CHECK=1
# leaves out the guard sweep over every template (the check step runs it on its own).
set -uo pipefail
build="$1"; out="$2"; nodes="${3:-24}"
here="$(cd "$(dirname "$0")" && pwd)"
cases="${KFORGE_CASES:-$here/cases.json}"
cli="$build/app/kforge-cli"
worker="$build/app/kforge-worker"
mkdir -p "$out"

if [[ "${KFORGE_SKIP_CHECK:-0}" != 1 ]]; then
  echo "== every CUDA template's default point through the guard, fp32/fp16/bf16"
  "$cli" check-templates --backend cuda --worker "$worker" > "$out/check-templates.txt" 2>&1
  tail -1 "$out/check-templates.txt"; grep -E "^FAIL" "$out/check-templates.txt" | head -20
fi

echo "== eager and torch.compile"
python3 "$here/eager_compile.py" "$cases" > "$out/eager.jsonl" 2> "$out/eager.err" || tail -5 "$out/eager.err"

echo "== kforge searches ($nodes nodes each)"
: > "$out/kforge-best.jsonl"
python3 - "$cases" <<'PY' > "$out/cases.txt"
import json, sys
for c in json.load(open(sys.argv[1])):
    print(c["family"], ",".join(f"{k}={v}" for k, v in c["shape"].items()), c["dtype"], json.dumps(c))
PY
i=0
while read -r family shape dtype json; do
  i=$((i + 1))
  session="$out/search-$i.kforge"
  rm -f "$session"
  timeout 300 "$cli" search --backend cuda --family "$family" --shape "$shape" --dtype "$dtype" --nodes "$nodes" \
      --samples 30 --session "$session" --worker "$worker" > "$out/search-$i.log" 2>&1
  tail -1 "$out/search-$i.log"
  best=$("$cli" show --session "$session" --best 2>/dev/null | head -1)
  python3 -c 'import json,sys; b=json.loads(sys.argv[1] or "{}"); b["case"]=json.loads(sys.argv[2]); print(json.dumps(b))' "$best" "$json" >> "$out/kforge-best.jsonl"
done < "$out/cases.txt"

python3 "$here/summarize.py" "$out/eager.jsonl" "$out/kforge-best.jsonl" | tee "$out/templates-table.md"
