#!/usr/bin/env bash
# Evaluates chosen points of chosen templates on a CUDA host, one `kforge-cli eval` each (the full guard,
# then the interleaved benchmark against ATen), and prints one line per point: the time, the fraction of
# the copy-bandwidth floor and the speedup. For tuning seeds and tuning spaces by hand, beside the search.
# Usage: bench/templates/variants.sh BUILD_DIR OUT_DIR VARIANTS.jsonl
#   each line: {"family":"softmax","shape":"rows=16384,cols=4096","dtype":"bfloat16",
#               "template":"cuda.softmax.cluster","params":{...}}
#   or, to time a kernel as it was rendered elsewhere (another commit's template, for an A/B in one
#   run), "source":"file.cu" with its launch plan beside it as file.launch.json, instead of params.
# KFORGE_VARIANT_ROUNDS=N runs the whole list N times in turn, so that A/B pairs interleave.
set -uo pipefail
build="$1"; out="$2"; list="$3"
rounds="${KFORGE_VARIANT_ROUNDS:-1}"
cli="$build/app/kforge-cli"
worker="$build/app/kforge-worker"
mkdir -p "$out"
i=0
for _ in $(seq "$rounds"); do cat "$list"; done | while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  i=$((i + 1))
  # The last field is the point's parameters, or the path of a pre-rendered source.
  read -r family shape dtype tid params < <(python3 -c 'import json,sys; v=json.loads(sys.argv[1]); print(v["family"], v["shape"], v["dtype"], v["template"], json.dumps(v["params"], separators=(",",":")) if "params" in v else v["source"])' "$line")
  src="$out/v$i.cu"; plan="$out/v$i.launch.json"
  if [[ $line == *'"source"'* ]]; then
    cp "$params" "$src" 2>/dev/null && cp "${params%.cu}.launch.json" "$plan" 2>/dev/null || { echo "$family $shape $dtype $params: no such source or plan"; continue; }
  elif ! "$cli" templates --render "$tid" --params "$params" --family "$family" --shape "$shape" --dtype "$dtype" \
      --launch-out "$plan" > "$src" 2> "$out/v$i.err"; then
    echo "$family $shape $dtype $tid $params: render failed: $(tail -1 "$out/v$i.err")"; continue
  fi
  timeout 180 "$cli" eval --backend cuda --source "$src" --launch "$plan" --family "$family" --shape "$shape" --dtype "$dtype" \
      --samples 30 --worker "$worker" > "$out/v$i.json" 2> "$out/v$i.err"
  python3 - "$out/v$i.json" "$family $shape $dtype $tid $params" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"{sys.argv[2]}: no verdict ({e})"); sys.exit()
c = v.get("candidate", {}).get("median_us"); b = v.get("baseline", {}).get("median_us"); r = v.get("roofline_us", 0)
reasons = ",".join(x["code"] for x in v.get("reasons", []))
if c:
    print(f"{sys.argv[2]}: {v['status']} {c:.1f} us, {100 * r / c:.0f}% of copy BW, {b / c:.2f}x ATen {reasons}")
else:
    print(f"{sys.argv[2]}: {v.get('status')} {reasons} {v.get('reasons', [{}])[0].get('message', '')[:300]}")
PY
done
