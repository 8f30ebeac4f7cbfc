//! The GEMM ladder: naive, tiled, register-blocked and Tensor Core kernels against cuBLAS in
//! FP32, TF32 and FP16, each checked against the CPU reference with a tolerance that fits its
//! precision; and the Tensor Core ceilings of the roofline (cuBLAS with tensor-op math).

use crate::blas::{Blas, TensorMath};
use crate::error::LiveError;
use crate::gpu::{Arg, DeviceBuffer};
use crate::reference::{self, Check, TF32_TOL, f16_bits_to_f32, f32_to_f16_bits};
use crate::results::{PointResult, per_second};

use super::{Lab, Launch, PEAK_RUNS, PointCtx, ceil_div, floats, kernel_op};

/// A kernel of `sgemm.cu`: its function, the side of the block tile, threads per block.
fn ladder_kernel(config: &str) -> (&'static str, u64, (u32, u32, u32)) {
    match config {
        "naive" => ("sgemm_naive", 16, (16, 16, 1)),
        "regblock" => ("sgemm_regblock", 128, (256, 1, 1)),
        "tensor" => ("gemm_tensor_fp16", 128, (128, 1, 1)),
        _ => ("sgemm_tiled", 32, (32, 32, 1)),
    }
}

/// FP32 values rounded to halves: the bits to upload and the values they stand for.
fn to_halves(values: &[f32]) -> (Vec<u16>, Vec<f32>) {
    let bits: Vec<u16> = values.iter().map(|&v| f32_to_f16_bits(v)).collect();
    let back = bits.iter().map(|&h| f16_bits_to_f32(h)).collect();
    (bits, back)
}

impl Lab<'_> {
    /// One point of the GEMM ladder.
    pub(super) fn sgemm(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
    ) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let config = ctx.point.config.name;
        let (mut a_h, mut b_h) = (self.random(n * n, -1.0, 1.0), self.random(n * n, -1.0, 1.0));
        let halves = matches!(config, "tensor" | "cublas-fp16");
        // FP16 configurations get the inputs rounded to halves; the reference uses the rounded
        // values, so what is checked is the product and its FP32 accumulation.
        let (a, b) = if halves {
            let (a_bits, a_back) = to_halves(&a_h);
            let (b_bits, b_back) = to_halves(&b_h);
            (a_h, b_h) = (a_back, b_back);
            let a = self.gpu.alloc(2 * n * n)?;
            self.gpu.upload(&a, &a_bits)?;
            let b = self.gpu.alloc(2 * n * n)?;
            self.gpu.upload(&b, &b_bits)?;
            (a, b)
        } else {
            (self.upload_new(&a_h)?, self.upload_new(&b_h)?)
        };
        let c = self.gpu.alloc(floats(n * n))?;
        let (pa, pb, pc) = (a.ptr, b.ptr, c.ptr);
        let side = i32::try_from(n).map_err(|_| LiveError::Plan("matrix too large".into()))?;
        let poison = &mut |lab: &mut Self| lab.gpu.fill(pc, 0xff, floats(n * n));
        let mut tolerance = None;
        match config {
            "cublas" | "cublas-tf32" | "cublas-fp16" => {
                let blas = Blas::new(&self.gpu).map_err(LiveError::Plan)?;
                let math = match config {
                    "cublas-tf32" => Some(TensorMath::Tf32),
                    "cublas-fp16" => Some(TensorMath::Fp16),
                    _ => None,
                };
                if math == Some(TensorMath::Tf32) {
                    tolerance = Some(TF32_TOL);
                }
                let call = move |_: &crate::gpu::Gpu| match math {
                    Some(m) => blas.gemm_tensor(m, pa, pb, pc, side),
                    None => blas.sgemm(pa, pb, pc, side),
                };
                // One untimed call first: the handle's first call allocates its workspace.
                call(&self.gpu)?;
                self.gpu.sync()?;
                let api = if math.is_some() {
                    "cublasGemmEx"
                } else {
                    "cublasSgemm"
                };
                let desc = kernel_op(api, api, [0; 3], [0; 3]);
                self.repeat(ctx, result, &desc, poison, &call)?;
            }
            name => {
                let (fname, tile, block) = ladder_kernel(name);
                let f = self.function(ctx, fname)?;
                let g = ceil_div(n, tile);
                let launch = Launch {
                    f,
                    name: fname,
                    grid: (g, g, 1),
                    block,
                    args: vec![
                        Arg::Ptr(pa),
                        Arg::Ptr(pb),
                        Arg::Ptr(pc),
                        Arg::I32(side),
                        Arg::I32(side),
                        Arg::I32(side),
                    ],
                };
                self.repeat_launch(ctx, result, &launch, poison)?;
            }
        }
        let mut out = vec![0f32; (n * n) as usize];
        self.gpu.download(&mut out, &c)?;
        let tolerance = tolerance.unwrap_or(reference::ACCUMULATE_TOL);
        Ok(reference::check_gemm(
            &a_h, &b_h, &out, n as usize, self.seed, tolerance,
        ))
    }

    /// cuBLAS GEMM rates with tensor-op math at `n`³ (TF32 on FP32 data, FP16 inputs with FP32
    /// accumulation), median of 5 after 2 warm-ups: the Tensor Core ceilings of the roofline.
    pub(super) fn measure_tensor_peaks(
        &mut self,
        n: u64,
    ) -> Result<(Option<f64>, Option<f64>), LiveError> {
        let Ok(blas) = Blas::new(&self.gpu) else {
            for _ in 0..2 * PEAK_RUNS {
                self.progress.step();
            }
            return Ok((None, None));
        };
        let side = n as i32;
        let mut host = vec![0f32; (n * n) as usize];
        let mut rates = [None, None];
        for (slot, math) in [TensorMath::Tf32, TensorMath::Fp16].into_iter().enumerate() {
            let inputs: Vec<DeviceBuffer> = (0..2)
                .map(|_| -> Result<DeviceBuffer, LiveError> {
                    self.rng.fill(&mut host, -1.0, 1.0);
                    if math == TensorMath::Fp16 {
                        let (bits, _) = to_halves(&host);
                        let buf = self.gpu.alloc(2 * n * n)?;
                        self.gpu.upload(&buf, &bits)?;
                        Ok(buf)
                    } else {
                        self.upload_new(&host)
                    }
                })
                .collect::<Result<_, _>>()?;
            let c = self.gpu.alloc(floats(n * n))?;
            let (pa, pb, pc) = (inputs[0].ptr, inputs[1].ptr, c.ptr);
            blas.gemm_tensor(math, pa, pb, pc, side)?;
            self.gpu.sync()?;
            let label = format!("peak: cuBLAS GEMM {math:?} {n}");
            let op = kernel_op("cublasGemmEx", &label, [0; 3], [0; 3]);
            let t =
                self.peak_median_ns(&label, &op, |_| blas.gemm_tensor(math, pa, pb, pc, side))?;
            rates[slot] = per_second(2.0 * (n * n * n) as f64, t);
        }
        Ok((rates[0], rates[1]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rung_launches_its_own_kernel_and_shape() {
        assert_eq!(ladder_kernel("naive"), ("sgemm_naive", 16, (16, 16, 1)));
        assert_eq!(ladder_kernel("tiled"), ("sgemm_tiled", 32, (32, 32, 1)));
        assert_eq!(
            ladder_kernel("regblock"),
            ("sgemm_regblock", 128, (256, 1, 1))
        );
        assert_eq!(
            ladder_kernel("tensor"),
            ("gemm_tensor_fp16", 128, (128, 1, 1))
        );
        // Every kernel named here is in the bundled source.
        let src = include_str!("../../../../assets/kernels/sgemm.cu");
        for c in ["naive", "tiled", "regblock", "tensor"] {
            let name = ladder_kernel(c).0;
            assert!(src.contains(&format!("{name}(")), "{name}");
        }
    }
}
