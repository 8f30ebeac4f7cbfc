//! Which kernels run on Tensor Cores (AMD: matrix cores), and which are GEMMs or convolutions,
//! from their names.
//!
//! cuBLAS, cuDNN and CUTLASS name their kernels after the instructions and data types they use;
//! so do AMD's Tensile (rocBLAS, hipBLASLt: `MI32x32x8` is the MFMA instruction's shape) and
//! Composable Kernel (`xdl`, `ck_tile` GEMMs); the rules are in
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

/// Name parts that mean an AMD kernel issues matrix-core (MFMA, WMMA) instructions: the
/// instructions' names, Composable Kernel's XDL (`DeviceGemmXdl`, `xdlops`) kernels.
const MATRIX_CORE_MARKERS: &[&str] = &["mfma", "wmma", "xdlops", "_xdl", "gemmxdl", "gemm_xdl"];

/// Name parts of GEMM and convolution kernels (`cijk_` starts every Tensile GEMM).
const GEMM_OR_CONV_MARKERS: &[&str] = &[
    "gemm", "conv", "wgrad", "dgrad", "fprop", "winograd", "cutlass", "matmul", "xmma", "cijk_",
];

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
        && tensile_fp32(&lower)
}

/// False for a Tensile GEMM whose data type is not FP32: its name's fourth part is the type
/// code (`Cijk_Ailk_Bljk_SB_…`: `S` single, `D` double, `H` half, `B` bfloat16, `I8`…). True
/// for every other name.
fn tensile_fp32(lower: &str) -> bool {
    match lower.find("cijk_") {
        Some(at) => lower[at..]
            .split('_')
            .nth(3)
            .is_some_and(|t| t.starts_with('s')),
        None => true,
    }
}

/// [`uses_tensor_cores`] of a name already in lower case.
fn tensor_cores_lower(lower: &str) -> bool {
    if CUDA_CORE_MARKERS.iter().any(|m| lower.contains(m)) {
        return false;
    }
    TENSOR_CORE_MARKERS.iter().any(|m| lower.contains(m))
        || (lower.contains("xmma") && LOW_PRECISION_XMMA.iter().any(|m| lower.contains(m)))
        || matrix_cores_lower(lower)
}

/// True if a lower-case AMD kernel name says it runs on matrix cores: an MFMA or WMMA
/// instruction or CK XDL kernel by name, a Tensile kernel whose name carries the matrix
/// instruction's shape (`_MI32x32x8x1_`: rocBLAS and hipBLASLt write `MI` only for kernels that
/// use MFMA), or a Composable Kernel tile GEMM (`ck_tile::…Gemm…`, whose warp GEMMs are MFMA
/// on CDNA).
fn matrix_cores_lower(lower: &str) -> bool {
    MATRIX_CORE_MARKERS.iter().any(|m| lower.contains(m))
        || (lower.contains("cijk_") && has_mfma_shape(lower))
        || (lower.contains("ck_tile") && lower.contains("gemm"))
}

/// True if `lower` holds a Tensile MatrixInstruction token, `_mi<digits>x` (`_MI16x16x1_`,
/// `_MI32x32x2x1_`): Tensile writes it only for kernels built on MFMA instructions (the others
/// say `_MAC_`).
fn has_mfma_shape(lower: &str) -> bool {
    lower.match_indices("_mi").any(|(at, _)| {
        let rest = &lower.as_bytes()[at + 3..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        digits > 0 && rest.get(digits) == Some(&b'x')
    })
}

/// [`is_gemm_or_conv`] of a name already in lower case.
fn gemm_or_conv_lower(lower: &str) -> bool {
    GEMM_OR_CONV_MARKERS.iter().any(|m| lower.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Names from the AMD samples (rocBLAS/Tensile on gfx90a, Composable Kernel on gfx942) and
    /// from hipBLASLt and CK.
    #[test]
    fn amd_matrix_core_kernels_are_recognised() {
        let matrix = [
            "Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1_SN_1LDSB1_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASE_ASGT_ASLT_ASAE01_ASCE01_ASEM1_ISA90a_IU1",
            "Cijk_Alik_Bljk_HHS_BH_MT256x256x64_MI16x16x16x1_SN_GRVW8_ISA942",
            "void ck_tile::kentry<1, ck_tile::BatchedGemmKernel<ck_tile::GemmSpatiallyLocalTilePartitioner<ck_tile::TileGemmShape<ck_tile::sequence<256, 256, 64>>>>>(ck_tile::BatchedGemmKernelArgs)",
            "void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<_Float16>>(ck::Argument)",
            "my_gemm_mfma_f32_32x32x8f16_kernel",
            // Older Tensile writes three numbers (MI300X BERT sample); CK's xdlops pipelines.
            "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB0_AFC1",
            "ck::kernel_gemm_xdlops_v2r3<...>",
            "void ck::kernel_grouped_conv_fwd_xdl_cshuffle<...>",
        ];
        for name in matrix {
            assert!(uses_tensor_cores(name), "{name}");
            assert!(is_gemm_or_conv(name), "{name}");
            assert!(!is_fp32_gemm_off_tensor_cores(name), "{name}");
        }
        let plain = [
            // A Tensile kernel without a matrix instruction (`MT` is the macro tile, not `MI`).
            "Cijk_Ailk_Bljk_SB_MT64x64x8_SN_ISA90a",
            "__amd_rocclr_fillBufferAligned",
            "void at::native::modern::elementwise_kernel<at::native::AbsFunctor<float>>(int)",
            "Cijk_Ailk_Bljk_SB_MT128x64x16_MIX",
            "Cijk_Ailk_Bljk_SB_MT64x64x8_MAC_ISA906",
            "void at::native::vectorized_elementwise_kernel<4, at::native::mish_kernel_cuda>",
            "attn_fwd",
        ];
        for name in plain {
            assert!(!uses_tensor_cores(name), "{name}");
        }
        assert!(is_fp32_gemm_off_tensor_cores(plain[0]));
        assert!(!is_fp32_gemm_off_tensor_cores(
            "Cijk_Ailk_Bljk_HHS_BH_MT64x64x8_SN_ISA90a"
        ));
    }
}
