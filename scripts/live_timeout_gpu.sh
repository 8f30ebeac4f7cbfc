#!/usr/bin/env bash
# `warpscope live --timeout` on a GPU machine, as quoted in the README: a kernel that never ends
# (examples/hang.cu) fails its point at the limit and warpscope exits with 1, with the limit given
# and by default; a batch of 5000 launches of it (more than CUDA's launch queue holds) is ended by
# the backstop; a run killed mid-launch (what the viewer's Stop does) frees the GPU too; normal
# sweeps run right after each, and time the same as a binary from before the time limit (OLD,
# alternated with this one). Then the GPU tests, if a test binary is given (TESTS).
# Usage: scripts/live_timeout_gpu.sh OUTDIR (BIN=path/to/warpscope, OLD=older warpscope,
# EX=examples folder, TESTS=the warpscope-live gpu test binary).
set -uo pipefail
out=${1:-live-timeout-results}
W=${BIN:-target/release/warpscope}
EX=${EX:-examples}
mkdir -p "$out"
log() { echo; echo "=== $*"; }
now() { date +%s.%N; }
# Runs a command and says its exit status and wall time.
timed() {
  local t0 rc
  t0=$(now)
  "$@"
  rc=$?
  echo "--> exit status $rc after $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }') s"
}
gpu_apps() { nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | sed 's/^/compute app: /'; echo "(end of compute apps)"; }
HANG1=(live --source "$EX/hang.cu" --kernel wait_for_flag --args 'i32[N]=0 f32[N]=0 i32=N' --no-peaks)
HANG=("${HANG1[@]}" --sizes 1M,10M)
VEC=(live vector_add --configs grid-device --sizes 1M,100M --repeat 20 --no-peaks --format csv)
GEMM=(live sgemm --configs regblock,tensor --sizes 1024,4096 --repeat 20 --no-peaks --format csv)
normal() { "$1" "${VEC[@]}" 2>/dev/null; "$1" "${GEMM[@]}" 2>/dev/null; }
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv
if [ -n "${OLD:-}" ]; then
  for r in 1 2; do
    log "round $r: OLD"; normal "$OLD"
    log "round $r: NEW"; normal "$W"
  done
  log "NEW --timeout off"; "$W" "${VEC[@]}" --timeout off 2>/dev/null
fi
log "a kernel that never ends, --timeout 10"
timed "$W" "${HANG[@]}" --timeout 10 2>&1
gpu_apps
log "right after: normal sweeps"
timed normal "$W"
log "a kernel that never ends, the default limit (4 x the 5 s budget), CUPTI off, JSON"
timed "$W" "${HANG[@]}" --no-cupti --format json --out "$out/hang.json" 2>&1 | grep -E '"(config|size|error)"|warpscope|-->|^\['
gpu_apps
log "a batch of 5000 launches that never end, --timeout 2: the launch queue fills, the backstop ends the process"
timed "$W" "${HANG1[@]}" --sizes 1M --timeout 2 --batch 5000 --no-cupti 2>&1
gpu_apps
log "right after, a batch of 5000 launches that end, --timeout 2 (a full queue that moves: no backstop)"
timed "$W" "${VEC[@]}" --repeat 5 --timeout 2 --batch 5000 2>&1
log "killed with SIGKILL 8 s into a launch that never ends (the viewer's Stop)"
t0=$(now)
"$W" "${HANG[@]}" --timeout 600 2>&1 &
pid=$!
sleep 8
kill -9 "$pid"
wait "$pid"
echo "--> exit status $? after $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }') s"
gpu_apps
log "right after: normal sweeps"
timed normal "$W"
if [ -n "${TESTS:-}" ]; then
  log "GPU tests: $TESTS --ignored --test-threads=1"
  WARPSCOPE_EXAMPLES="$EX" timed "$TESTS" --ignored --test-threads=1 2>&1
fi
gpu_apps
} 2>&1 | tee "$out/log.txt"
