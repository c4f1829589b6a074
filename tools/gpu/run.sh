#!/usr/bin/env bash
# The one script for the GPU host: build the worker, the CLI, the GPU guard tests and the harness
# benchmark; run the guard tests, the benchmark and compute-sanitizer on two evaluations; write every
# log under $OUT (or ./gpu-out) and print a short summary last.
#
# The host has libtorch (from its Python), nvcc and the CUDA toolkit, but no Qt and no sqlite3.h: the
# headers come from Debian's libsqlite3-dev and nlohmann-json3-dev unpacked into .gpu/root on the
# development machine (tools/gpu/prepare.sh), carried along with the working tree (carry: [".gpu"]).
# compute-sanitizer runs with --report-api-errors no: the worker probes kernel parameters with
# cuFuncGetParamInfo until it fails, which memcheck would list as API errors.
#
# Usage: tools/gpu/run.sh [all|build|tests|bench|check|fused|templates|variants|study|placement|inductor|ncu|guardroom|session|workloads|sweep|kernelbench|profile|sanitizer]...   (default: all)
# (fused, study, placement, inductor, ncu, guardroom, session, workloads, sweep and kernelbench are run only when named)
# Output: $OUT/gpu-tests.log, $OUT/bench.log, and every log in $OUT/logs.tgz.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
final=${OUT:-$root/gpu-out}
mkdir -p "$final"
out=$(mktemp -d)  # the full logs; packed into $final/logs.tgz on exit
pack() {
  cp "$out/gpu-tests.log" "$out/bench.log" "$out/templates/templates-table.md" "$out/templates/check-templates.txt" "$final/" 2>/dev/null
  tar czf "$final/logs.tgz" -C "$out" --exclude='*.kforge' . ; }
trap pack EXIT
steps=${*:-all}
want() { [[ " $steps " == *" all "* || " $steps " == *" $1 "* ]]; }
asked() { [[ " $steps " == *" $1 "* ]]; }  # diagnostics, run only when named
summary=()
note() { summary+=("$1"); echo "== $1"; }

build=$root/build/gpu
jobs=$(nproc)

if want build || [[ ! -x $build/app/kforge-worker ]]; then
  {
    echo "host: $(uname -a)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
    command -v nvcc && nvcc --version | tail -1
    ls /usr/lib/x86_64-linux-gnu/libsqlite3* 2>&1
  } > "$out/env.log" 2>&1
  cat "$out/env.log"
  torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  pybin=$(dirname "$(python3 -c 'import sys; print(sys.executable)')")
  export PATH="$PATH:$pybin"
  cuda_root=/usr/local/cuda
  [[ -e $cuda_root/include/nvrtc.h ]] || cuda_root=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
  export PATH="$cuda_root/bin:$PATH" TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
  sqlite_lib=$(ls /usr/lib/x86_64-linux-gnu/libsqlite3.so.0 2>/dev/null || find / -name 'libsqlite3.so.0' -not -path '*/proc/*' 2>/dev/null | head -1)
  t0=$(date +%s)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKFORGE_BUILD_GUI=OFF -DKFORGE_BUILD_TESTS=OFF \
    -DCMAKE_PREFIX_PATH="$torch_prefix;$root/.gpu/root/usr" -Dnlohmann_json_DIR="$root/.gpu/root/usr/share/cmake/nlohmann_json" \
    -DSQLite3_INCLUDE_DIR="$root/.gpu/root/usr/include" -DSQLite3_LIBRARY="$sqlite_lib" \
    -DKFORGE_CUDA_ROOT="$cuda_root" -DCUDAToolkit_ROOT="$cuda_root" -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1
  rc=$?
  grep -E "kforge:|CUDA|Torch|Error|error" "$out/configure.log" | head -20
  if [[ $rc -ne 0 ]]; then tail -40 "$out/configure.log"; note "configure FAILED (configure.log)"; printf '%s\n' "${summary[@]}"; exit 1; fi
  ninja -C "$build" -j"$jobs" kforge-worker kforge-cli kforge-gpu-tests kforge-cuda-bench kforge-harness-passes-test > "$out/build.log" 2>&1
  rc=$?
  if [[ $rc -ne 0 ]]; then grep -E -A3 "error|FAILED" "$out/build.log" | head -60; note "build FAILED (build.log)"; printf '%s\n' "${summary[@]}"; exit 1; fi
  note "built in $(( $(date +%s) - t0 )) s"
fi

worker=$build/app/kforge-worker
export KFORGE_CACHE_DIR=$(mktemp -d)
# The host has no bubblewrap package; tools/gpu/prepare.sh carries Debian's for the CPU sandbox.
[[ -x $root/.gpu/root/usr/bin/bwrap ]] && export KFORGE_BWRAP=$root/.gpu/root/usr/bin/bwrap

if want tests; then
  t0=$(date +%s)
  timeout 240 "$build/worker/kforge-gpu-tests" --log "$out/verdicts.jsonl" 2>&1 | tee "$out/gpu-tests.log"
  note "guard tests: $(tail -1 "$out/gpu-tests.log") ($(( $(date +%s) - t0 )) s)"
  cp /tmp/kforge-gpu-tests-*/worker-0.log "$out/worker-tests.log" 2>/dev/null
  # The one-pass harness kernels against the libtorch passes that define them, and their time.
  t0=$(date +%s)
  timeout 240 "$build/worker/kforge-harness-passes-test" > "$out/harness-passes.log" 2>&1
  cp "$out/harness-passes.log" "$final/" 2>/dev/null
  note "harness passes: rc=$? $(tail -1 "$out/harness-passes.log") ($(( $(date +%s) - t0 )) s)"
  summary+=("$(grep -E '^(FAIL|TIME)' "$out/harness-passes.log" | head -20)")
fi

if want bench; then
  t0=$(date +%s)
  rm -rf /tmp/kforge-workers-*
  mkdir -p "$out/bench-workers"
  timeout 240 "$build/worker/kforge-cuda-bench" --json "$out/bench.json" --dump "$out/controls" --log-dir "$out/bench-workers" 2>&1 | tee "$out/bench.log"
  grep -h "kforge-worker: cuda" "$out"/bench-workers/*.log > "$out/bench-phases.log" 2>/dev/null
  note "bench phases (median of each, ms): $(python3 tools/gpu/phase_medians.py "$out/bench-phases.log" 2>&1 | tail -1)"
  note "bench: $(grep -E '^throughput' "$out/bench.log") ($(( $(date +%s) - t0 )) s)"
  note "bench: $(grep -E '^median NVRTC' "$out/bench.log")"
  note "bench: $(grep -E "^same .* kernels with the 100 ms" "$out/bench.log")"
  timeout 120 python3 tools/gpu/controls_crosscheck.py "$out/controls" > "$out/crosscheck.log" 2>&1
  note "controls timed outside kforge (tools/gpu/controls_crosscheck.py):"
  summary+=("$(grep -E '^\|' "$out/crosscheck.log" || tail -5 "$out/crosscheck.log")")
fi

if want check; then
  # Only the guard sweep over every CUDA template, family and dtype (part of the templates step); with
  # KFORGE_CHECK_FAMILIES, over those families only.
  if [[ -n ${KFORGE_CHECK_FAMILIES:-} ]]; then
    for family in $KFORGE_CHECK_FAMILIES; do
      timeout 120 "$build/app/kforge-cli" check-templates --backend cuda --family "$family" --worker "$worker" >> "$out/check-templates.log" 2>&1
      note "check-templates $family: $(tail -1 "$out/check-templates.log")"
    done
    grep -E "^FAIL" "$out/check-templates.log" | head -20
  else
    timeout 300 "$build/app/kforge-cli" check-templates --backend cuda --worker "$worker" > "$out/check-templates.log" 2>&1
    grep -E "^FAIL" "$out/check-templates.log" | head -20
    note "check-templates: $(tail -1 "$out/check-templates.log")"
  fi
  cp "$out/check-templates.log" "$final/" 2>/dev/null
fi

if asked fused; then
  # A fused card at real models' shapes (bench/problems/<KFORGE_FUSED_DIR>, default rotary; each problem's
  # header names its family and shape): the guard sweep of that family, a template search per shape (the
  # kernel against the chain eager PyTorch runs, in the worker), and the same chain eager and under
  # torch.compile in one Python process.
  t0=$(date +%s)
  dir=${KFORGE_FUSED_DIR:-rotary}; f=$out/fused-$dir; mkdir -p "$f"
  for family in $(grep -ho -- '--family [a-z_]*' bench/problems/$dir/*.py | cut -d' ' -f2 | sort -u); do
    timeout 120 "$build/app/kforge-cli" check-templates --backend cuda --family "$family" --worker "$worker" > "$f/check-$family.log" 2>&1
    grep -E "^FAIL" "$f/check-$family.log" | head; note "check-templates $family: $(tail -1 "$f/check-$family.log")"
  done
  timeout 200 python3 python/kforge_compile_time.py bench/problems/$dir/*.py --device cuda --out-dir "$f/compile" > "$f/compile.log" 2>&1
  note "eager and torch.compile: rc=$?"; tail -12 "$f/compile.log"
  for p in bench/problems/$dir/*.py; do
    shape=$(grep -ho -- '--shape [a-z0-9=,]*' "$p" | cut -d' ' -f2); dt=$(grep -ho 'torch\.\(bfloat16\|float16\|float32\)$' "$p" | head -1 | cut -d. -f2)
    name=$(basename "$p" .py); family=$(grep -ho -- '--family [a-z_]*' "$p" | cut -d' ' -f2)
    timeout 150 "$build/app/kforge-cli" search --family "$family" --shape "$shape" --dtype "$dt" --backend cuda --nodes ${KFORGE_FUSED_NODES:-6} \
      --samples 20 --no-lessons --session "$f/$name.kforge" --worker "$worker" > "$f/search-$name.log" 2>&1
    note "search $name ($shape $dt): rc=$? $(grep -E '^done' "$f/search-$name.log" | cut -c1-160)"
    grep -E "^node " "$f/search-$name.log" | cut -c1-170
  done
  cp -r "$f" "$final/" 2>/dev/null
  note "fused ($(( $(date +%s) - t0 )) s)"
fi

if want templates; then
  # The offline generator: every CUDA template through the guard on every dtype, then a search per
  # benchmark case beside eager PyTorch and torch.compile (bench/templates/run.sh).
  t0=$(date +%s)
  bash bench/templates/run.sh "$build" "$out/templates" "${KFORGE_TEMPLATE_NODES:-20}" 2>&1 | tee "$out/templates.log"
  note "templates: $(tail -1 "$out/templates/check-templates.txt" 2>/dev/null) ($(( $(date +%s) - t0 )) s)"
fi

if want variants; then
  # Chosen template points, one guarded evaluation each (bench/templates/variants.sh).
  t0=$(date +%s)
  bash bench/templates/variants.sh "$build" "$out/variants" "${KFORGE_VARIANTS:-bench/templates/variants-cluster.jsonl}" 2>&1 | tee "$out/variants.log"
  cp "$out/variants.log" "$final/"
  note "variants: $(grep -c ': accepted\|: not_faster\|: rejected\|: incorrect' "$out/variants.log") evaluated ($(( $(date +%s) - t0 )) s)"
fi

if asked study; then
  # How the L2 flush method moves the times of memory-bound kernels (tools/gpu/flush_study.py).
  t0=$(date +%s)
  timeout 300 python3 tools/gpu/flush_study.py > "$out/flush-study.log" 2>&1
  cp "$out/flush-study.log" "$final/"
  note "flush study ($(( $(date +%s) - t0 )) s):"
  summary+=("$(grep -E '^\|' "$out/flush-study.log" || tail -5 "$out/flush-study.log")")
fi

if asked placement; then
  timeout 200 python3 tools/gpu/placement_study.py > "$out/placement.log" 2>&1
  cp "$out/placement.log" "$final/"
  note "placement study:"
  summary+=("$(cat "$out/placement.log")")
fi

if asked inductor; then
  # Ours beside torch.compile's kernels in one timer (tools/gpu/inductor_study.py), Inductor's sources,
  # Nsight Compute on both, and how many clusters the GPU co-schedules (tools/gpu/cluster_probe.cu).
  t0=$(date +%s)
  nvcc -arch=sm_90 -o "$out/cluster_probe" tools/gpu/cluster_probe.cu && "$out/cluster_probe" > "$out/cluster-probe.log" 2>&1
  mkdir -p "$out/study-kernels" "$final/inductor"
  # KFORGE_STUDY_DIR: kernels already rendered (and perhaps edited by hand) instead of the list.
  [[ -n ${KFORGE_STUDY_DIR:-} ]] && cp "$KFORGE_STUDY_DIR"/* "$out/study-kernels/"
  i=0
  [[ -z ${KFORGE_STUDY_DIR:-} ]] && while IFS= read -r line; do
    [[ -z $line || $line == \#* ]] && continue
    i=$((i + 1))
    read -r case_ family shape dtype tid params < <(python3 -c 'import json,sys; v=json.loads(sys.argv[1]); print(v["case"], v["family"], v["shape"], v["dtype"], v["template"], json.dumps(v["params"], separators=(",",":")))' "$line")
    "$build/app/kforge-cli" templates --render "$tid" --params "$params" --family "$family" --shape "$shape" --dtype "$dtype" \
      --launch-out "$out/study-kernels/$case_-$i.launch.json" > "$out/study-kernels/$case_-$i.cu"
    echo "$case_-$i: $tid $params"
  done < "${KFORGE_STUDY:-bench/templates/study-inductor.jsonl}" > "$final/inductor/kernels.txt"
  timeout 400 python3 tools/gpu/inductor_study.py "$final/inductor" --kernels "$out/study-kernels" > "$out/study.log" 2>&1
  cp "$out/study.log" "$final/inductor/"
  timeout 300 ncu --profile-from-start off --clock-control none -k regex:'^(triton|kf_)' \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
    python3 tools/gpu/inductor_study.py "$out/inductor-profile" --profile --kernels "$out/study-kernels" > "$final/inductor/ncu.log" 2>&1
  tar czf "$final/inductor.tgz" -C "$final" inductor && rm -rf "$final/inductor"
  note "inductor study ($(( $(date +%s) - t0 )) s):"
  summary+=("$(head -12 "$out/cluster-probe.log")" "$(grep -E '^\||error|skipped' "$out/study.log")")
fi

if asked ncu; then
  # Nsight Compute on the kernels the variants step rendered: DRAM bytes and throughput, occupancy,
  # top stalls of one launch each (the candidate's first benchmark launch after verification).
  t0=$(date +%s)
  for src in "$out"/variants/v*.cu; do
    [[ -e $src ]] || continue
    i=$(basename "$src" .cu); line=$(grep -v '^#' "${KFORGE_VARIANTS:-bench/templates/variants-cluster.jsonl}" | sed -n "${i#v}p")
    read -r family shape dtype < <(python3 -c 'import json,sys; v=json.loads(sys.argv[1]); print(v["family"], v["shape"], v["dtype"])' "$line")
    timeout 240 ncu --target-processes all --clock-control none -k regex:'^kf_(rows|cluster|pipe|eltwise|reduce|group_norm|split|cumsum|ce_|rowgroup$)' -s 10 -c 1 \
      --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__registers_per_thread,smsp__average_warp_latency_issue_stalled_long_scoreboard,smsp__average_warp_latency_issue_stalled_barrier,smsp__average_warp_latency_issue_stalled_sleeping,smsp__average_warp_latency_issue_stalled_membar,smsp__average_warp_latency_issue_stalled_lg_throttle,smsp__average_warp_latency_issue_stalled_drain,sm__cycles_active.avg \
      "$build/app/kforge-cli" eval --backend cuda --source "$src" --launch "$out/variants/$i.launch.json" --family "$family" \
      --shape "$shape" --dtype "$dtype" --samples 5 --worker "$worker" > "$out/ncu-$i.log" 2>&1
    echo "== $i $line"; grep -E '^\s+(gpu__|dram__|sm__|launch__|smsp__)|^    [A-Z][A-Za-z ]+ +[a-z%/]' "$out/ncu-$i.log"
  done | tee "$out/ncu.log"
  cp "$out/ncu.log" "$final/"
  note "ncu on the variants ($(( $(date +%s) - t0 )) s)"
fi

if asked guardroom; then
  # The float64 guard on real sizes: a long-row float32 cumsum (summation order alone once failed every
  # candidate) and a 7.5 GB-per-tensor group norm (the harness's copies once ran the GPU out of memory).
  t0=$(date +%s)
  cases=${KFORGE_GUARDROOM:-"cumsum rows=16384,cols=65536 6;group_norm n=112,c=64,hw=262144,groups=8 3"}
  IFS=';' read -ra specs <<< "$cases"
  for spec in "${specs[@]}"; do
    read -r family shape nodes <<< "$spec"
    ses="$out/guardroom-$family.kforge"; rm -f "$ses"
    s0=$(date +%s)
    mkdir -p "$out/guardroom-workers-$family"
    KFORGE_WORKER_VERBOSE=1 KFORGE_WORKER_LOG_DIR="$out/guardroom-workers-$family" \
    timeout 220 "$build/app/kforge-cli" search --backend cuda --family "$family" --shape "$shape" --dtype float32 --nodes "$nodes" \
      --deadline-ms 150000 --session "$ses" --worker "$worker" > "$out/guardroom-$family.log" 2>&1
    echo "== $family $shape: search rc=$? in $(( $(date +%s) - s0 )) s"; tail -4 "$out/guardroom-$family.log"
    "$build/app/kforge-cli" show --session "$ses" > "$out/guardroom-$family-show.txt" 2>&1; head -30 "$out/guardroom-$family-show.txt"
    "$build/app/kforge-cli" show --session "$ses" --best 2>&1 | head -3
    python3 tools/gpu/dump_reasons.py "$ses" 2>&1 | cut -c1-700
    grep -h "kforge-worker: cuda" "$out/guardroom-workers-$family"/*.log 2>/dev/null | cut -c1-400
  done | tee "$out/guardroom.log"
  cp "$out/guardroom.log" "$final/"
  note "guard room searches ($(( $(date +%s) - t0 )) s)"
fi

if asked sweep; then
  # MCTS against an exhaustive sweep of each CUDA template family (at most 12 points per family: each
  # parameter cut to evenly spaced values, the seed's kept), replayed with 10 seeds (bench/mcts_sweep_bench.cpp);
  # then the time from `kforge-cli search` to its first accepted softmax kernel (bench/RESULTS-search.md).
  t0=$(date +%s)
  ninja -C "$build" -j"$jobs" kforge-mcts-sweep-bench > "$out/build-sweep.log" 2>&1 || { grep -E -A3 "error|FAILED" "$out/build-sweep.log" | head -30; note "sweep bench build FAILED"; }
  # The committed H200 cache (bench/mcts-sweep-h200.json) is the start: families it holds are replayed,
  # not swept again, so a run cut short by its limit is continued by the next one. KFORGE_SWEEP_CACHE_IN
  # names another start (a file holding {} sweeps everything again, after the kernels changed).
  cache_in=${KFORGE_SWEEP_CACHE_IN:-$root/bench/mcts-sweep-h200.json}
  [[ -f $cache_in ]] && cp "$cache_in" "$final/sweep-cache.json"
  sweep_args=(--backend cuda --max-points ${KFORGE_SWEEP_POINTS:-12} --seeds 10 --samples 10 --cache "$final/sweep-cache.json" --worker "$worker")
  mkdir -p "$out/sweep-workers"
  KFORGE_WORKER_VERBOSE=1 KFORGE_WORKER_LOG_DIR="$out/sweep-workers" \
  timeout ${KFORGE_SWEEP_TIMEOUT:-300} "$build/app/kforge-mcts-sweep-bench" "${sweep_args[@]}" > "$out/sweep.md" 2> "$out/sweep.err"
  rc=$?
  tail -c 3000 "$out"/sweep-workers/*.log > "$final/sweep-workers-tail.log" 2>/dev/null
  note "sweep: rc=$rc in $(( $(date +%s) - t0 )) s: $(tail -1 "$out/sweep.md")"
  summary+=("$(cat "$out/sweep.md")")
  cp "$out/sweep.md" "$out/sweep.err" "$final/"
  # KFORGE_SWEEP_SHAPE (k=v,...): the families swept again at that shape, and lessons carried both ways.
  if [[ -n ${KFORGE_SWEEP_SHAPE:-} ]]; then
    s0=$(date +%s)
    timeout ${KFORGE_SWEEP_TIMEOUT:-300} "$build/app/kforge-mcts-sweep-bench" "${sweep_args[@]}" --shape "$KFORGE_SWEEP_SHAPE" --lessons-at default \
      > "$final/sweep-shape.md" 2> "$final/sweep-shape.err"
    note "sweep at $KFORGE_SWEEP_SHAPE, lessons from the default shape: rc=$? in $(( $(date +%s) - s0 )) s: $(tail -1 "$final/sweep-shape.md")"
    timeout 60 "$build/app/kforge-mcts-sweep-bench" "${sweep_args[@]}" --lessons-at "$KFORGE_SWEEP_SHAPE" > "$final/sweep-lessons.md" 2>> "$final/sweep-shape.err"
    note "lessons from $KFORGE_SWEEP_SHAPE at the default shape: $(tail -1 "$final/sweep-lessons.md")"
  fi
  rm -f "$out/first.kforge"; s0=$(date +%s.%N)
  timeout 200 "$build/app/kforge-cli" search --backend cuda --family softmax --shape rows=4096,cols=4096 --nodes 8 --no-lessons \
    --session "$out/first.kforge" --worker "$worker" 2>&1 | while IFS= read -r line; do echo "$(date +%s.%N) $line"; done > "$out/first-accept.log"
  first=$(awk '$2 == "node" && $5 == "accepted" {print $1; exit}' "$out/first-accept.log")
  note "time to the first accepted softmax kernel (kforge-cli search --backend cuda, 4096x4096 float32): $(python3 -c "print('%.1f s' % ($first - $s0))" 2>/dev/null || echo none)"
fi

if asked workloads; then
  # Real models in, packs out: the built-in decoder block and diffusion block at the H200 sizes,
  # profiled with device events, their operators searched with the templates (a campaign), the
  # decoder's kernels exported as a pack and run in the model beside eager, and the guard check's cost.
  t0=$(date +%s)
  ninja -C "$build" -j"$jobs" kforge_runtime kforge-pack-guard-bench > "$out/build-runtime.log" 2>&1 || { grep -E -A3 "error|FAILED" "$out/build-runtime.log" | head -30; note "runtime build FAILED"; }
  w=$out/workloads; mkdir -p "$w"
  K=$build/app/kforge-cli
  (
    cd "$w" || exit 1
    # KFORGE_IMPORT_MODELS: models written as KernelBench-style problems under bench/problems/models (names
    # without .py), imported and profiled as the built-in ones are; name them in KFORGE_CAMPAIGNS to search them.
    if [[ -n ${KFORGE_IMPORT_MODELS:-} ]]; then
      mkdir -p imported
      for m in $KFORGE_IMPORT_MODELS; do cp "$root/bench/problems/models/$m.py" imported/; done
      timeout 150 "$K" import imported --out . --python python3 > import-models.log 2>&1; echo "== import models: rc=$?"; tail -3 import-models.log
      for m in $KFORGE_IMPORT_MODELS; do
        timeout 120 "$K" profile $m.json --device cuda --worker "$worker" > profile-$m.log 2>&1
        echo "== profile $m: rc=$?"; grep -E "profiled on|^ +[0-9]+ |fused|native" profile-$m.log | head -24 | cut -c1-220
      done
    fi
    for m in ${KFORGE_MODELS-decoder diffusion}; do
      "$K" model $m --preset=h200 --out $m.json --worker "$worker" > model-$m.log 2>&1 || tail -5 model-$m.log
      s0=$(date +%s)
      timeout 120 "$K" profile $m.json --device cuda --trace $m.trace.json --worker "$worker" > profile-$m.log 2>&1
      echo "== profile $m: rc=$? in $(( $(date +%s) - s0 )) s"; grep -E "profiled on|^ +[0-9]+ " profile-$m.log | head -14
    done
    s0=$(date +%s)
    for m in ${KFORGE_CAMPAIGNS-decoder}; do
      s0=$(date +%s)
      timeout 330 "$K" campaign --workload $m.json --backend cuda --nodes ${KFORGE_CAMPAIGN_NODES:-20} --worker "$worker" \
        --session $m.kforge --no-lessons > campaign-$m.log 2>&1
      echo "== campaign $m: rc=$? in $(( $(date +%s) - s0 )) s"; grep -vE "^node " campaign-$m.log | grep -vE "no template family" | head -30
      grep -E "^node " campaign-$m.log | head -40 | cut -c1-160
      timeout 120 "$K" export $m.kforge --out $m-pack --arch sm_90 > export-$m.log 2>&1
      echo "== export $m: rc=$?"; tail -8 export-$m.log
      s0=$(date +%s)
      timeout 240 "$K" run $m.json --pack $m-pack --compare --iters 10 --json compare-$m.json --worker "$worker" > compare-$m.log 2>&1
      echo "== run --compare $m: rc=$? in $(( $(date +%s) - s0 )) s"; tail -25 compare-$m.log
      # KFORGE_WORKLOAD_LEAN=1 (a short lease): skip TorchScript's own executor and the profile with the pack.
      if [[ -z ${KFORGE_WORKLOAD_LEAN:-} ]]; then
        timeout 240 "$K" run $m.json --pack $m-pack --compare --iters 10 --executor default --json compare-default-$m.json --worker "$worker" > compare-default-$m.log 2>&1
        echo "== run --compare --executor default $m: rc=$?"; head -4 compare-default-$m.log
        # The model profiled again with the pack: what each operator costs inside the model with it.
        timeout 120 "$K" profile $m.json --pack $m-pack --device cuda --worker "$worker" > profile-pack-$m.log 2>&1
        echo "== profile --pack $m: rc=$?"; head -24 profile-pack-$m.log | cut -c1-200
      fi
      # Eager (the model rebuilt from its source), eager with the pack, torch.compile: one process, interleaved.
      timeout 300 python3 "$root/python/kforge_model_time.py" $m.json --pack $m-pack --runtime "$build/runtime/libkforge_runtime.so" \
        --device cuda --iters 10 --out time-$m.json > time-$m.log 2>&1
      echo "== eager / eager+pack / torch.compile $m: rc=$?"
      python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print({k: (r[k]['median_ms'], r[k]['min_ms'], r[k]['max_ms']) for k in ('eager','eager_pack','compile') if isinstance(r.get(k), dict) and 'median_ms' in r[k]}, 'compile_s', r.get('compile_seconds'), 'counters', r.get('counters'), 'pack_max_diff', r.get('pack_max_diff'), r.get('why',''), r.get('compile',''))" time-$m.json 2>&1 | tail -3
    done
    pack=$(ls -d *-pack 2>/dev/null | head -1)
    [[ -n $pack ]] && timeout 120 "$build/runtime/kforge-pack-guard-bench" "$pack" > guard-bench.log 2>&1
    echo "== guard check cost (rc=$?)"; tail -8 guard-bench.log
    timeout 60 python3 -c "import torch,sys; torch.ops.load_library(sys.argv[1]); torch.ops.kforge.load_pack(sys.argv[2]); print('python', torch.__version__, 'loaded the pack:', torch.ops.kforge.counters())" \
      "$build/runtime/libkforge_runtime.so" "$pack" 2>&1 | tail -3
    if [[ -n ${KFORGE_FASTP:-} ]]; then
      # KernelBench-style problems, each one card, searched and set beside eager and torch.compile.
      # KFORGE_PROBLEMS: files or globs under bench/problems (default: its top level, *.py).
      mkdir -p problems
      (cd "$root/bench/problems" && cp ${KFORGE_PROBLEMS:-*.py} "$w/problems/")
      s0=$(date +%s)
      timeout 150 "$K" import problems --python python3 > import.log 2>&1; echo "== import: rc=$?"; tail -4 import.log
      timeout 420 "$K" fastp problems --backend cuda --nodes ${KFORGE_FASTP_NODES:-8} --out problems-fastp --python python3 --worker "$worker" > fastp.log 2>&1
      echo "== fastp: rc=$? in $(( $(date +%s) - s0 )) s"; tail -30 fastp.log; cat problems-fastp.md 2>/dev/null | head -40
    fi
    rm -f decoder.pt diffusion.pt *.samples.pt
  ) 2>&1 | tee "$out/workloads.log"
  cp "$out/workloads.log" "$final/"
  note "workloads ($(( $(date +%s) - t0 )) s)"
fi

if asked kernelbench; then
  # KernelBench level 1's memory-bound problems at KernelBench's shapes (bench/problems/kernelbench), each
  # imported on the GPU as one problem, searched with the templates (a screen of one node per fitting
  # family, then --nodes for the families that compute the forward) and set beside eager and torch.compile.
  # KFORGE_PROBLEMS: globs under bench/problems/kernelbench (default: all of them).
  t0=$(date +%s)
  kb=$out/kernelbench; mkdir -p "$kb"
  (cd "$root/bench/problems/kernelbench" && cp ${KFORGE_PROBLEMS:-*.py} "$kb/")
  s0=$(date +%s)
  # Written straight into $final: a run cut short by its time limit keeps what it finished.
  timeout ${KFORGE_IMPORT_TIMEOUT:-300} "$build/app/kforge-cli" import "$kb" --python python3 --jobs ${KFORGE_IMPORT_JOBS:-3} > "$final/kb-import.log" 2>&1
  note "kernelbench import: rc=$? in $(( $(date +%s) - s0 )) s: $(tail -1 "$final/kb-import.log")"
  grep -E "FAILED|Error|error" "$final/kb-import.log" | head -10
  # torch.compile's times for every problem in one Python process (torch and its compiler start once),
  # before the searches and never beside them, so neither disturbs the other's timing.
  s0=$(date +%s)
  timeout ${KFORGE_COMPILE_TIMEOUT:-300} python3 "$root/python/kforge_compile_time.py" "$kb"/*.py --device cuda --out-dir "$final/kb-compile" > "$final/kb-compile.log" 2>&1
  note "kernelbench torch.compile times: rc=$? in $(( $(date +%s) - s0 )) s, $(grep -c '"available": true' "$final/kb-compile.log") measured"
  mkdir -p "$out/kb-workers"
  KFORGE_WORKER_VERBOSE=1 KFORGE_WORKER_LOG_DIR="$out/kb-workers" \
  timeout ${KFORGE_FASTP_TIMEOUT:-420} "$build/app/kforge-cli" fastp "$kb" --backend cuda --nodes ${KFORGE_FASTP_NODES:-8} \
    --samples ${KFORGE_FASTP_SAMPLES:-30} --out "$final/kernelbench-fastp" --session "$final/kernelbench.kforge" --python python3 \
    --compile-times "$final/kb-compile" --worker "$worker" > "$final/kb-fastp.log" 2>&1
  note "kernelbench fastp: rc=$? in $(( $(date +%s) - t0 )) s"
  grep -h "kforge-worker: cuda" "$out"/kb-workers/*.log 2>/dev/null | cut -c1-400 > "$final/kb-phases.log"
  note "kernelbench evaluation phases (median of each, ms): $(python3 tools/gpu/phase_medians.py "$final/kb-phases.log" 2>&1 | tail -1)"
  grep -E "^  [0-9a-z_]+: (correct|no correct)" "$final/kb-fastp.log" | head -60
  summary+=("$(cat "$final/kernelbench-fastp.md" 2>/dev/null | head -70)")
fi

if asked session; then
  # A real search kept whole, for the inspector's pictures: bfloat16 softmax rows, 24 nodes.
  ses="$final/h200-softmax-bf16.kforge"; rm -f "$ses"
  timeout 200 "$build/app/kforge-cli" search --backend cuda --family softmax --shape rows=16384,cols=4096 --dtype bfloat16 --nodes 24 \
    --session "$ses" --worker "$worker" > "$out/session-search.log" 2>&1
  sqlite3 "$ses" "PRAGMA wal_checkpoint(TRUNCATE);" 2>/dev/null || python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA wal_checkpoint(TRUNCATE)"); c.close()' "$ses"
  rm -f "$ses-wal" "$ses-shm"
  note "session for the inspector: $(tail -1 "$out/session-search.log")"
fi

if want profile; then
  # Profile on demand: a short search, then Nsight Compute on its best node; the report lands on the node.
  t0=$(date +%s)
  ses="$out/profile.kforge"
  rm -f "$ses"
  "$build/app/kforge-cli" search --backend cuda --family softmax --shape rows=16384,cols=4096 --dtype float32 --nodes 6 \
    --session "$ses" --worker "$worker" > "$out/profile-search.log" 2>&1
  node=$("$build/app/kforge-cli" show --session "$ses" --best | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["best"]["node"])')
  timeout 300 "$build/app/kforge-cli" profile --session "$ses" --node "$node" --worker "$worker" 2>&1 | tee "$out/profile.log"
  note "profile of node $node: $(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print("memory", p["memory_throughput_pct"], "% compute", p["compute_throughput_pct"], "% occupancy", p["achieved_occupancy_pct"], "% stalls", [s["reason"] for s in p["top_stalls"]])' "$out/profile.log" 2>&1 | tail -1) ($(( $(date +%s) - t0 )) s)"
  # A cpu node cannot be profiled, and says why.
  "$build/app/kforge-cli" profile --session "$ses" --node 1 --worker "$worker" > "$out/profile-root.log" 2>&1
  note "profiling the baseline root: $(tail -1 "$out/profile-root.log")"
  cp "$out/profile.log" "$final/" 2>/dev/null
fi

if want sanitizer; then
  # The worker under compute-sanitizer, its report in a file (the protocol owns stdout).
  if command -v compute-sanitizer > /dev/null; then
    for run in "memcheck|correct warp-per-row softmax, float32" "racecheck|shared-memory race"; do
      tool=${run%%|*}; case_=${run#*|}
      timeout 120 "$build/worker/kforge-gpu-tests" --only "$case_" \
        --worker "compute-sanitizer --tool $tool --report-api-errors no --print-limit 20 --log-file $out/sanitizer-$tool.log '$worker'" \
        > "$out/sanitizer-$tool-run.log" 2>&1
      note "compute-sanitizer $tool on '$case_': $(tail -1 "$out/sanitizer-$tool-run.log"); report: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' "$out/sanitizer-$tool.log" | tail -2 | tr '\n' ' ')"
    done
  else
    note "compute-sanitizer not found"
  fi
fi

echo
echo "================ summary ================"
printf '%s\n' "${summary[@]}"
grep -E "^(PASS|FAIL)" "$out/gpu-tests.log" 2>/dev/null | awk '{print $1}' | sort | uniq -c
grep -E "^\|" "$out/bench.log" 2>/dev/null
