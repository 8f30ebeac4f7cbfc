#!/usr/bin/env bash
# `warpscope live --batch` against Nsight Compute on a GPU machine, as quoted in the README: the
# register-blocked and Tensor Core GEMMs at 1024-4096 timed with CUDA events one launch per event
# pair (--batch 1, L2 flushed before each) and 20 (L2 warm after the first), CUPTI off, against
# ncu's gpu__time_duration.sum with its caches flushed (--cache-control all, ncu's default) and
# not (--cache-control none); then a batch of 2000 (more launches than CUDA's queue holds behind
# the stream hold), and the 4096 Tensor Core GEMM's per-sample times with the SM clock.
# Usage: scripts/live_batch_gpu.sh OUTDIR (BIN=path/to/warpscope).
set -uo pipefail
out=${1:-live-batch-results}
W=${BIN:-target/release/warpscope}
mkdir -p "$out"
log() { echo; echo "=== $*"; }
SWEEP=(sgemm --sizes 1024,2048,4096 --configs regblock,tensor --no-cupti --no-peaks --repeat 20)
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
for K in 1 20; do
  log "live ${SWEEP[*]} --batch $K --format csv"
  "$W" live "${SWEEP[@]}" --batch "$K" --format csv 2>/dev/null
done
for mode in "none 20" "all 1"; do
  set -- $mode
  log "ncu --clock-control none --cache-control $1 -k regex:sgemm_regblock|gemm_tensor_fp16 --metrics gpu__time_duration.sum live ${SWEEP[*]} --no-queue --warmup 1 --batch $2"
  ncu --clock-control none --cache-control "$1" --target-processes all \
    -k 'regex:sgemm_regblock|gemm_tensor_fp16' --metrics gpu__time_duration.sum --csv \
    "$W" live "${SWEEP[@]}" --no-queue --warmup 1 --batch "$2" >"$out/ncu_$1.csv" 2>"$out/ncu_$1.err"
  F="$out/ncu_$1.csv" python3 - <<'PY'
import csv, os, statistics, collections
rows = list(csv.reader(l for l in open(os.environ["F"]) if l.startswith('"')))
hdr = rows[0]; ki = hdr.index("Kernel Name"); vi = hdr.index("Metric Value"); gi = hdr.index("Grid Size")
d = collections.defaultdict(list)
for r in rows[1:]:
    d[(r[ki], r[gi])].append(float(r[vi].replace(",", "")))
for k, v in d.items():
    # Warm-ups and the check launch are a few of hundreds: the median is the timed launches'.
    print(k, "launches=%d" % len(v), "median ns %.0f" % statistics.median(v), "min %.0f" % min(v))
PY
done
log "a batch of 2000: no stream-hold timeout"
"$W" live sgemm --sizes 1024 --configs tensor --no-peaks --no-cupti --repeat 3 --warmup 0 --batch 2000 2>/dev/null
for K in 1 20; do
  log "tensor 4096 --batch $K: per-sample times and the SM clock (nvidia-smi every 5 ms)"
  nvidia-smi --query-gpu=clocks.sm --format=csv,noheader -lms 5 >"$out/smi_$K.txt" &
  smi=$!
  "$W" live sgemm --sizes 4096 --configs tensor --no-peaks --no-cupti --repeat 20 --batch "$K" \
    --format json 2>/dev/null >"$out/t4096_$K.json"
  kill "$smi"
  python3 -c "import json,sys; print('event_ns', json.load(open(sys.argv[1]))['points'][0]['event_ns'])" "$out/t4096_$K.json"
  sort "$out/smi_$K.txt" | uniq -c
done
} 2>&1 | tee "$out/log.txt"
