//! Which kernels run on Tensor Cores (on AMD GPUs: Matrix Cores, the MFMA instructions), and
//! which are GEMMs or convolutions, from their names.
//!
//! cuBLAS, cuDNN and CUTLASS name their kernels after the instructions and data types they use,
//! and so do AMD's Tensile (rocBLAS, hipBLASLt) and Composable Kernel; the rules are in
//! `docs/occupancy.md#tensor-cores`. Names are compared in lower case.

/// Name parts that mean the kernel issues Tensor Core instructions: the MMA instruction families
/// (`hmma`, `imma`, `wgmma`/`gmma`...), CUTLASS's `tensorop` operator class, TF32 math, and the
/// MMA shapes in cuBLAS/cuDNN kernel names (`s1688`, `h16816`, `i8816`).
const TENSOR_CORE_MARKERS: &[&str] = &[
    "hmma", "imma", "bmma", "dmma", "qmma", "gmma", "tensorop", "tf32", "s1688", "s16816", "h1688",
    "h16816", "h884", "s884", "i8816", "i16832",
];

/// Half, bfloat16, int8 and fp8 operand types in cuDNN's `xmma` kernel names
/// (`sm90_xmma_wgrad_..._f16f16_f16f32_f32`): their xmma kernels always use Tensor Cores.
const LOW_PRECISION_XMMA: &[&str] = &["f16f16", "bf16bf16", "i8i8", "e4m3", "e5m2"];

/// Name parts that mean the kernel runs on the ordinary FP32 pipes even though it comes from a
/// Tensor Core library (`cutlass_80_simt_sgemm`, `sm80_xmma_gemm_..._ffma`).
const CUDA_CORE_MARKERS: &[&str] = &["simt", "ffma"];

/// Name parts of GEMM and convolution kernels (`cijk_` starts every Tensile GEMM: C = sum over
/// k of A and B, indices i, j).
const GEMM_OR_CONV_MARKERS: &[&str] = &[
    "gemm", "conv", "wgrad", "dgrad", "fprop", "winograd", "cutlass", "matmul", "xmma", "cijk_",
];

/// Name parts that mean an AMD kernel issues MFMA (Matrix Core) instructions: the instruction
/// itself, and Composable Kernel's `xdlops` / `_xdl_` pipelines.
const MFMA_MARKERS: &[&str] = &["mfma", "xdlops", "_xdl_"];

/// True for a Tensile kernel name holding a MatrixInstruction token (`_MI16x16x1_`,
/// `_MI32x32x2x1_`): Tensile writes it only for kernels built on MFMA instructions (the others
/// say `_MAC_`).
fn tensile_matrix_instruction(lower: &str) -> bool {
    lower.starts_with("cijk_")
        && lower.match_indices("_mi").any(|(at, _)| {
            let rest = &lower.as_bytes()[at + 3..];
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            digits > 0 && rest.get(digits) == Some(&b'x')
        })
}

/// Name parts of double-precision or half-precision kernels (not FP32).
const NOT_FP32_MARKERS: &[&str] = &["dgemm", "double", "f64", "__half", "half", "f16", "bf16"];

/// True if a kernel with this name runs on Tensor Cores.
pub fn uses_tensor_cores(name: &str) -> bool {
    tensor_cores_lower(&name.to_ascii_lowercase())
}

/// True if a kernel with this name is a matrix multiplication or a convolution.
pub fn is_gemm_or_conv(name: &str) -> bool {
    gemm_or_conv_lower(&name.to_ascii_lowercase())
}

/// True for a GEMM or convolution that runs in FP32 on the CUDA cores: the work TF32 or AMP
/// would move onto Tensor Cores.
pub fn is_fp32_gemm_off_tensor_cores(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    gemm_or_conv_lower(&lower)
        && !tensor_cores_lower(&lower)
        && !NOT_FP32_MARKERS.iter().any(|m| lower.contains(m))
}

/// [`uses_tensor_cores`] of a name already in lower case.
fn tensor_cores_lower(lower: &str) -> bool {
    if CUDA_CORE_MARKERS.iter().any(|m| lower.contains(m)) {
        return false;
    }
    TENSOR_CORE_MARKERS.iter().any(|m| lower.contains(m))
        || (lower.contains("xmma") && LOW_PRECISION_XMMA.iter().any(|m| lower.contains(m)))
        || MFMA_MARKERS.iter().any(|m| lower.contains(m))
        || tensile_matrix_instruction(lower)
}

/// [`is_gemm_or_conv`] of a name already in lower case.
fn gemm_or_conv_lower(lower: &str) -> bool {
    GEMM_OR_CONV_MARKERS.iter().any(|m| lower.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names from the AMD samples (MI300X, MI250) and AMD's libraries.
    #[test]
    fn amd_matrix_core_kernels_are_recognised() {
        let mfma = [
            "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB0_AFC1",
            "Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1_SN_1LDSB1_APM1_ISA90a_IU1",
            "ck::kernel_gemm_xdlops_v2r3<...>",
            "void ck::kernel_grouped_conv_fwd_xdl_cshuffle<...>",
        ];
        for name in mfma {
            assert!(uses_tensor_cores(name), "{name}");
            assert!(is_gemm_or_conv(name), "{name}");
        }
        // Tensile without a MatrixInstruction (MAC) and names that merely contain `_mi`.
        for name in [
            "Cijk_Ailk_Bljk_SB_MT64x64x8_MAC_ISA906",
            "void at::native::vectorized_elementwise_kernel<4, at::native::mish_kernel_cuda>",
            "attn_fwd",
        ] {
            assert!(!uses_tensor_cores(name), "{name}");
        }
    }

    /// Names from the samples (H100, PyTorch 2.x, cuDNN 9) and from cuBLAS/CUTLASS.
    #[test]
    fn names_in_the_samples_are_classified() {
        let tensor = [
            "sm90_xmma_wgrad_indexed_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize64x64x64_warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn",
            "sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32",
            "sm80_xmma_fprop_implicit_gemm_indexed_wo_smem_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x32x16",
            "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4>(Params)",
            "volta_h884gemm_64x64_ldg8_nn",
            "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn",
            "void cutlass::Kernel<cutlass_75_wmma_tensorop_h161616gemm_32x32_128x2_tn_align8>(Params)",
            "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        ];
        for name in tensor {
            assert!(uses_tensor_cores(name), "{name}");
            assert!(is_gemm_or_conv(name), "{name}");
            assert!(!is_fp32_gemm_off_tensor_cores(name), "{name}");
        }
        let fp32_gemm = [
            "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(Params)",
            "sm80_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
            "volta_sgemm_128x64_nn",
            "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int)",
        ];
        for name in fp32_gemm {
            assert!(!uses_tensor_cores(name), "{name}");
            assert!(is_fp32_gemm_off_tensor_cores(name), "{name}");
        }
        let other = [
            "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::Half>>(int)",
            "void cudnn::bn_bw_1C11_kernel_new<__half, float, float2, 128, true, 1>(float)",
            "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(float)",
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)",
        ];
        for name in other {
            assert!(!uses_tensor_cores(name), "{name}");
            assert!(!is_fp32_gemm_off_tensor_cores(name), "{name}");
        }
    }
}
