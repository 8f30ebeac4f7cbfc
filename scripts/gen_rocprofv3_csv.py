#!/usr/bin/env python3
"""Writes a big synthetic rocprofv3 run (kernel_trace.csv + hip_api_trace.csv, launches linked by
Correlation_Id) for timing the AMD CSV reader (docs/formats.md §14).

    python3 scripts/gen_rocprofv3_csv.py OUT_DIR [KERNELS]    (default 1,000,000 kernels)
"""

import os
import sys

KERNEL_HEAD = ('"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id",'
               '"Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp","LDS_Block_Size",'
               '"Scratch_Size","Arch_VGPR_Count","Accum_VGPR_Count","SGPR_Count","Workgroup_Size_X",'
               '"Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"\n')
API_HEAD = ('"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp",'
            '"End_Timestamp"\n')
NAMES = [
    "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB0_ISA942_IU1",
    "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16> >",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>",
    "attn_fwd",
]


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    os.makedirs(out, exist_ok=True)
    t = 1_000_000_000
    with open(os.path.join(out, "1_kernel_trace.csv"), "w") as k, \
            open(os.path.join(out, "1_hip_api_trace.csv"), "w") as a:
        k.write(KERNEL_HEAD)
        a.write(API_HEAD)
        for i in range(n):
            corr = i + 1
            a.write(f'"HIP_RUNTIME_API","hipLaunchKernel",7,7,{corr},{t},{t + 3000}\n')
            start = t + 9000
            dur = 2000 + (i * 7919) % 30000
            k.write(f'"KERNEL_DISPATCH",2,{i % 4},0,7,{corr},{i % 4},"{NAMES[i % 4]}",{corr},'
                    f'{start},{start + dur},4096,0,128,64,96,256,1,1,{256 * (1 + i % 300)},1,1\n')
            t += dur + 12000


if __name__ == "__main__":
    main()
