//! cuBLAS, the yardstick: FP32 SGEMM with default math, and GEMM with tensor-op math (TF32 on
//! FP32 data, FP16 inputs with FP32 accumulation) for the Tensor Core ceilings.

use cudarc::driver::sys::CUdeviceptr;

use crate::error::LiveError;
use crate::gpu::{Gpu, cublas_present};

/// The cuBLAS handle for the SGEMM yardstick.
pub(crate) struct Blas(cudarc::cublas::sys::cublasHandle_t);

impl Blas {
    /// Creates a handle bound to the lab's stream, or says why not.
    pub(crate) fn new(gpu: &Gpu) -> Result<Self, String> {
        if !cublas_present() {
            return Err("cuBLAS (libcublas.so) not found".into());
        }
        let mut handle = std::ptr::null_mut();
        // SAFETY: writes one handle; destroyed in Drop.
        let status = unsafe { cudarc::cublas::sys::cublasCreate_v2(&raw mut handle) };
        if status != cudarc::cublas::sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            return Err(format!("cublasCreate failed: {status:?}"));
        }
        let blas = Self(handle);
        // SAFETY: both handles are live; cuBLAS's stream type is the driver's CUstream.
        let status =
            unsafe { cudarc::cublas::sys::cublasSetStream_v2(handle, gpu.raw_stream().cast()) };
        if status != cudarc::cublas::sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            return Err(format!("cublasSetStream failed: {status:?}"));
        }
        Ok(blas)
    }

    /// Row-major `C = A * B` for `n x n` matrices (column-major cuBLAS computes Cᵀ = Bᵀ Aᵀ).
    pub(crate) fn sgemm(
        &self,
        a: CUdeviceptr,
        b: CUdeviceptr,
        c: CUdeviceptr,
        n: i32,
    ) -> Result<(), LiveError> {
        use cudarc::cublas::sys::{cublasOperation_t, cublasSgemm_v2, cublasStatus_t};
        let (alpha, beta) = (1.0f32, 0.0f32);
        // SAFETY: a, b and c are live device allocations of n*n floats; alpha and beta are
        // host scalars alive during the call (default host pointer mode).
        let status = unsafe {
            cublasSgemm_v2(
                self.0,
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                n,
                n,
                n,
                &raw const alpha,
                b as *const f32,
                n,
                a as *const f32,
                n,
                &raw const beta,
                c as *mut f32,
                n,
            )
        };
        if status == cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            Ok(())
        } else {
            Err(LiveError::Driver {
                call: "cublasSgemm".into(),
                message: format!("{status:?}"),
            })
        }
    }
}

/// The tensor-op GEMMs cuBLAS offers the lab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TensorMath {
    /// FP32 data, TF32 tensor-core math (`CUBLAS_COMPUTE_32F_FAST_TF32`).
    Tf32,
    /// FP16 A and B, FP32 C and accumulation (`CUBLAS_COMPUTE_32F`).
    Fp16,
}

impl Blas {
    /// Row-major `C = A * B` for `n x n` matrices with tensor-op math: A and B are FP32 for
    /// [`TensorMath::Tf32`], FP16 for [`TensorMath::Fp16`]; C is FP32.
    pub(crate) fn gemm_tensor(
        &self,
        math: TensorMath,
        a: CUdeviceptr,
        b: CUdeviceptr,
        c: CUdeviceptr,
        n: i32,
    ) -> Result<(), LiveError> {
        use cudarc::cublas::sys::{
            cublasComputeType_t, cublasGemmAlgo_t, cublasGemmEx, cublasOperation_t, cublasStatus_t,
            cudaDataType,
        };
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (input, compute) = match math {
            TensorMath::Tf32 => (
                cudaDataType::CUDA_R_32F,
                cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
            ),
            TensorMath::Fp16 => (
                cudaDataType::CUDA_R_16F,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
            ),
        };
        // SAFETY: a and b are live device allocations of n*n elements of `input`, c of n*n
        // floats; alpha and beta are FP32 host scalars (FP32 compute) alive during the call.
        let status = unsafe {
            cublasGemmEx(
                self.0,
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                n,
                n,
                n,
                (&raw const alpha).cast(),
                b as *const std::ffi::c_void,
                input,
                n,
                a as *const std::ffi::c_void,
                input,
                n,
                (&raw const beta).cast(),
                c as *mut std::ffi::c_void,
                cudaDataType::CUDA_R_32F,
                n,
                compute,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT_TENSOR_OP,
            )
        };
        if status == cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            Ok(())
        } else {
            Err(LiveError::Driver {
                call: format!("cublasGemmEx ({math:?})"),
                message: format!("{status:?}"),
            })
        }
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        if crate::context_abandoned() {
            // A kernel of the context may never end (see `Gpu`'s drop).
            return;
        }
        // SAFETY: created by cublasCreate, destroyed once.
        let _ = unsafe { cudarc::cublas::sys::cublasDestroy_v2(self.0) };
    }
}
