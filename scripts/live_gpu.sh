#!/usr/bin/env bash
# The live lab's measurements on a GPU machine, as reported in the README and the closing notes:
# every bundled kernel's default sweep (saved as Chrome trace JSON), then Nsight Compute's
# gpu__time_duration.sum for the kernels longer than 50 us, to set CUDA-event and CUPTI times
# against it. Usage: scripts/live_gpu.sh [quick|full] OUTDIR (BIN=path/to/warpscope).
set -uo pipefail
mode=${1:-full}
out=${2:-live-results}
bin=${BIN:-target/release/warpscope}
mkdir -p "$out"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu \
  --format=csv >"$out/gpu.csv" 2>&1
cat "$out/gpu.csv"
"$bin" live --list >"$out/list.txt" || echo "live --list failed"

run() { # name, then the arguments of `warpscope live`
  local name=$1
  shift
  echo "== warpscope live $*"
  "$bin" live "$@" >"$out/$name.txt" 2>"$out/$name.log"
  echo "exit $?"
  cat "$out/$name.txt"
  tail -n 3 "$out/$name.log"
}

if [ "$mode" = quick ]; then
  run quick_vector_add vector_add --sizes 1M,5M --repeat 3 --budget 1
  run quick_vector_add_nocupti vector_add --sizes 1M --configs grid-device,grid-unified,cpu --no-cupti --no-peaks
  run quick_saxpy saxpy --sizes 1M,10M --no-peaks
  run quick_copy copy --sizes 1M,100M --no-peaks
  run quick_sgemm sgemm --sizes 256,1024 --no-peaks
  run quick_reduce reduce --sizes 1M,100M --no-peaks
  run quick_transfer transfer --sizes 1Mi,64Mi --no-peaks
  run quick_conv2d conv2d --sizes 100,1000 --no-peaks
else
  run vector_add vector_add --out "$out/live_vector_add_h100.json.gz"
  for k in saxpy copy sgemm reduce transfer conv2d; do
    run "$k" "$k" --out "$out/live_$k.json.gz"
  done
fi

# Nsight Compute on the same kernels, CUPTI off (ncu profiles through it), clocks as found.
if command -v ncu >/dev/null; then
  ncu_run() {
    local name=$1
    shift
    echo "== ncu: warpscope live $*"
    ncu --clock-control none --metrics gpu__time_duration.sum --csv \
      --log-file "$out/ncu_$name.csv" "$bin" live "$@" --no-cupti --no-peaks --no-queue --warmup 1 \
      >"$out/ncu_$name.txt" 2>&1
    echo "exit $?"
    cat "$out/ncu_$name.txt" | tail -n 20
  }
  ncu_run vector_add vector_add --sizes 10M,100M --configs 1x256-device,grid-device --repeat 3
  ncu_run copy copy --sizes 100M,250M --configs scalar,vec4 --repeat 3
  ncu_run sgemm sgemm --sizes 1024,2048 --configs naive,tiled --repeat 3
  ncu_run reduce reduce --sizes 100M --repeat 3
  ncu_run saxpy saxpy --sizes 100M --repeat 3
  ncu_run conv2d conv2d --sizes 1000,10000 --repeat 3
fi
tar czf "$out.tgz" -C "$out" . && echo "packed $out.tgz"
