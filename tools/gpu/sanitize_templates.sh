#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck on one guarded evaluation each of chosen template points
# (the list below: the kernels of the block reduction and cross entropy changes of 2026-12-04). After
# tools/gpu/run.sh build; prints a line per point and tool, and any invalid access or race reported.
set -u
B=$PWD/build/gpu; W=$B/app/kforge-worker; C=$B/app/kforge-cli
export KFORGE_CACHE_DIR=$(mktemp -d)
i=0
while read -r family shape dtype tid params; do
  i=$((i+1))
  "$C" templates --render "$tid" --params "$params" --family "$family" --shape "$shape" --dtype "$dtype" --launch-out /tmp/k$i.launch.json > /tmp/k$i.cu || { echo "render $i failed"; continue; }
  for tool in memcheck racecheck; do
    timeout 200 "$C" eval --backend cuda --source /tmp/k$i.cu --launch /tmp/k$i.launch.json --family "$family" --shape "$shape" --dtype "$dtype" \
      --samples 3 --worker "compute-sanitizer --tool $tool --report-api-errors no --print-limit 10 --log-file /tmp/san-$tool-$i.log $W" > /tmp/eval-$tool-$i.log 2>&1
    echo "$i $tool $family $shape $dtype $tid $params: rc=$? $(tail -1 /tmp/eval-$tool-$i.log | cut -c1-150) | $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san-$tool-$i.log* 2>/dev/null | sort | uniq -c | tr '\n' ' ')"
    grep -hE "Invalid|Race|hazard" /tmp/san-$tool-$i.log* 2>/dev/null | head -3
  done
done <<'LIST'
cross_entropy rows=2048,vocab=4096 float32 cuda.cross_entropy.two_pass {"block":256,"vec":4}
cross_entropy rows=64,vocab=50257 bfloat16 cuda.cross_entropy.two_pass {"block":1024,"vec":8}
softmax rows=64,cols=262144 float32 cuda.softmax.split {"block":512,"chunk":8192,"fast_exp":1}
log_softmax rows=256,cols=32000 bfloat16 cuda.log_softmax.pipe {"block":1024,"bps":1,"cl":1,"fast_exp":1,"fill":100,"regp":4,"stages":3}
softmax rows=64,cols=393216 float32 cuda.softmax.rowgroup {"block":256,"fast_exp":1,"minb":6,"split":48,"tma":0,"unroll":4,"vec":4}
softmax rows=256,cols=4096 bfloat16 cuda.softmax.cluster {"block":128,"cl":1,"fast_exp":1,"occ":0,"tma":1,"unroll":8,"vec":8}
LIST
