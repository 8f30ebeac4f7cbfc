#!/usr/bin/env bash
# Live lab 2.0's measurements on a GPU machine, as quoted in the README: your own kernel (SAXPY,
# a buggy one caught by --check-against, one that faults), block-size sweeps with occupancy and
# CUPTI's cost, the GEMM ladder with the roofline, streaming kernels on the roofline, and Nsight
# Compute's gpu__time_duration.sum for the two new GEMMs against CUDA events with CUPTI off.
# Usage: scripts/live2_gpu.sh OUTDIR (BIN=path/to/warpscope, EXAMPLES=path/to/examples).
set -uo pipefail
out=${1:-live2-results}
W=${BIN:-target/release/warpscope}
E=${EXAMPLES:-examples}
SPEC='f32=2.5 f32[N]=rand f32[N]=rand i32=N'
mkdir -p "$out"
log() { echo; echo "=== $*"; }
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
log "live --source $E/saxpy.cu --kernel saxpy --args '$SPEC' --sizes 1M,10M,100M --flops 2*N --bytes 12*N --cupti-cost --roofline"
"$W" live --source "$E/saxpy.cu" --kernel saxpy --args "$SPEC" --sizes 1M,10M,100M --flops '2*N' --bytes '12*N' --cupti-cost --roofline 2>/dev/null
log "live --source $E/saxpy.cu --kernel saxpy_grid_stride --args '$SPEC' --grid 1056 --sizes 100M --bytes 12*N --no-peaks"
"$W" live --source "$E/saxpy.cu" --kernel saxpy_grid_stride --args "$SPEC" --grid 1056 --sizes 100M --bytes '12*N' --no-peaks 2>/dev/null
log "live --source $E/saxpy_buggy.cu --kernel saxpy_buggy --args '$SPEC' --check-against saxpy_ref --sizes 1M,100M --no-peaks"
"$W" live --source "$E/saxpy_buggy.cu" --kernel saxpy_buggy --args "$SPEC" --check-against saxpy_ref --sizes 1M,100M --no-peaks 2>&1 | grep -v '^\['
log "live --source $E/saxpy_buggy.cu --kernel saxpy_fault --args '$SPEC' --sizes 1M,10M --no-peaks"
"$W" live --source "$E/saxpy_buggy.cu" --kernel saxpy_fault --args "$SPEC" --sizes 1M,10M --no-peaks 2>&1 | grep -v '^\['
log "live --source $E/saxpy.cu --kernel saxpy --args '$SPEC' --sizes 100M --blocks 32,64,128,256,512,1024 --bytes 12*N --no-peaks"
"$W" live --source "$E/saxpy.cu" --kernel saxpy --args "$SPEC" --sizes 100M --blocks 32,64,128,256,512,1024 --bytes '12*N' --no-peaks --out "$out/saxpy_blocks.json.gz" 2>/dev/null
log "live copy --configs scalar,vec4 --sizes 100M --blocks 32,64,128,256,512,1024 --cupti-cost"
"$W" live copy --configs scalar,vec4 --sizes 100M --blocks 32,64,128,256,512,1024 --cupti-cost 2>/dev/null
log "live sgemm --sizes 1024,2048,4096 --roofline"
"$W" live sgemm --sizes 1024,2048,4096 --roofline --out "$out/sgemm_ladder.json.gz" 2>/dev/null
for k in "vector_add --configs grid-device --sizes 100M" "reduce --sizes 100M" "conv2d --sizes 10000"; do
  log "live $k --roofline"
  # shellcheck disable=SC2086
  "$W" live $k --roofline 2>/dev/null | sed -n '/^Roofline/,$p'
done
log "CUDA events, CUPTI off: live sgemm --sizes 1024,2048,4096 --configs regblock,tensor --no-cupti --no-peaks --repeat 20 --format csv"
"$W" live sgemm --sizes 1024,2048,4096 --configs regblock,tensor --no-cupti --no-peaks --repeat 20 --format csv 2>/dev/null
log "ncu --clock-control none -k regex:sgemm_regblock|gemm_tensor_fp16 --metrics gpu__time_duration.sum (the same sweep, --no-queue)"
ncu --clock-control none --target-processes all -k 'regex:sgemm_regblock|gemm_tensor_fp16' \
  --metrics gpu__time_duration.sum --csv "$W" live sgemm --sizes 1024,2048,4096 \
  --configs regblock,tensor --no-cupti --no-peaks --no-queue --repeat 20 --warmup 1 \
  >"$out/ncu.csv" 2>"$out/ncu.err"
OUT="$out" python3 - <<'PY'
import csv, os, statistics, collections
rows = list(csv.reader(l for l in open(os.environ["OUT"] + "/ncu.csv") if l.startswith('"')))
hdr = rows[0]; ki = hdr.index("Kernel Name"); vi = hdr.index("Metric Value"); gi = hdr.index("Grid Size")
d = collections.defaultdict(list)
for r in rows[1:]:
    d[(r[ki], r[gi])].append(float(r[vi].replace(",", "")))
for k, v in d.items():
    # the first size of each configuration carries its warm-up launch
    print(k, "launches=%d" % len(v), "median of timed ns", statistics.median(v[1:] if k[1] == "(8, 8, 1)" else v))
PY
} 2>&1 | tee "$out/log.txt"
