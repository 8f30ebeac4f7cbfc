#!/usr/bin/env bash
# The FLOPs checks that need a GPU (docs/flops.md, section 8), in one run on the GPU machine:
# FlopCounterMode against profiled ResNet-50 steps (scripts/flops_crosscheck.py gpu), and the
# live lab's GEMM ladder saved as a profile and read back by `warpscope roofline`.
# Usage: scripts/flops_gpu.sh OUTDIR (BIN=path/to/warpscope, release build).
set -uo pipefail
out=${1:?usage: scripts/flops_gpu.sh OUTDIR}
bin=${BIN:-target/release/warpscope}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv

echo "== FlopCounterMode and profiled steps"
python3 scripts/flops_crosscheck.py gpu "$out" 2>&1 | tail -n 20

echo "== live sgemm ladder, saved and read back"
"$bin" live sgemm --sizes 1024,4096 --out "$out/live_sgemm.json.gz" --format json \
  >"$out/live_sgemm_results.json" 2>/tmp/live_sgemm.log
echo "live exit $?"
tail -n 3 /tmp/live_sgemm.log
"$bin" roofline "$out/live_sgemm.json.gz" --format json >"$out/live_sgemm_roofline.json"
echo "roofline exit $?"
"$bin" roofline "$out/live_sgemm.json.gz" --top 30 | head -n 45
