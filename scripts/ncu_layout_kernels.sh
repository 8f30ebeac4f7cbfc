#!/bin/bash
# What cuDNN's layout kernels compute, read from the hardware counters with Nsight Compute:
# one FP32 convolution (ResNet-50's 3x3, 64 channels, batch 32) forward and backward under
# `ncu`, every kernel's floating-point instructions (FFMA, FADD, FMUL; DFMA...) and tensor-pipe
# instructions. docs/flops.md section 4 gives `nchwToNhwc`/`nhwcToNchw`/`init_device_workspace`
# kernels none of their operator's FLOPs: their counts should be 0 where the convolution's
# GEMM kernels' are not. Run on the GPU machine:
#     bash scripts/ncu_layout_kernels.sh OUT_DIR
# Writes OUT_DIR/ncu_layout_kernels.csv (ncu's raw CSV) and OUT_DIR/ncu_metrics.txt (the
# metric names this ncu knows that were asked for).
set -euo pipefail
out=${1:?usage: ncu_layout_kernels.sh OUT_DIR}
mkdir -p "$out"
work=$(mktemp -d)
cat > "$work/conv.py" <<'PY'
import torch
torch.backends.cudnn.benchmark = False
x = torch.randn(32, 64, 56, 56, device="cuda", requires_grad=True)
w = torch.randn(64, 64, 3, 3, device="cuda", requires_grad=True)
for _ in range(2):
    y = torch.nn.functional.conv2d(x, w, padding=1)
    y.sum().backward()
torch.cuda.synchronize()
PY
# The metrics of this ncu: FP32/FP64/FP16 instruction counts and tensor-pipe instructions.
ncu --query-metrics 2>/dev/null | awk '{print $1}' > "$work/all.txt" || true
want=""
for m in smsp__sass_thread_inst_executed_op_ffma_pred_on smsp__sass_thread_inst_executed_op_fadd_pred_on \
         smsp__sass_thread_inst_executed_op_fmul_pred_on smsp__sass_thread_inst_executed_op_dfma_pred_on \
         smsp__sass_thread_inst_executed_op_hfma_pred_on sm__inst_executed_pipe_tensor \
         sm__inst_executed_pipe_tensor_op_hmma sm__inst_executed_pipe_tensor_op_gmma \
         smsp__inst_executed_pipe_tensor_op_hmma smsp__inst_executed_pipe_tensor_op_gmma \
         dram__bytes_read dram__bytes_write gpu__time_duration; do
    if grep -qx "$m" "$work/all.txt"; then want="$want,$m.sum"; fi
done
want=${want#,}
if [ -z "$want" ]; then
    # The query gave nothing usable: the names ncu 2025 documents for Hopper.
    want=smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,sm__inst_executed_pipe_tensor.sum,gpu__time_duration.sum
fi
head -c 4000 "$work/all.txt" > "$out/ncu_query_head.txt"
echo "$want" | tr ',' '\n' > "$out/ncu_metrics.txt"
ncu --clock-control none --metrics "$want" --csv --page raw python3 "$work/conv.py" \
    > "$out/ncu_layout_kernels.csv" 2> "$out/ncu_stderr.txt"
wc -l "$out/ncu_layout_kernels.csv"
