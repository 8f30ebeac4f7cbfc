//! The roofline: every measured point placed by its arithmetic intensity (FLOPs over the fewest
//! bytes it must move, from the kernel's accounting) against ceilings measured in the same run:
//! the device-to-device copy's bandwidth, and the compute rate of the arithmetic its FLOPs run
//! on (cuBLAS SGEMM for FP32, cuBLAS GEMM with tensor-op math for TF32 and FP16). The roof at
//! an intensity I is min(I × bandwidth, compute); a point below the ridge (I × bandwidth <
//! compute) is memory-bound, above it compute-bound.

use serde::{Deserialize, Serialize};

use crate::catalog::{KernelId, Math, Target};
use crate::results::{LiveRun, PointResult};

/// Which ceiling bounds a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Left of the ridge: DRAM bandwidth.
    Memory,
    /// Right of the ridge: the arithmetic's rate.
    Compute,
}

/// A point on the roofline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RooflinePoint {
    /// FLOPs per byte.
    pub intensity: f64,
    /// Achieved FLOP/s.
    pub flops_per_s: f64,
    /// The roof at this intensity, FLOP/s.
    pub roof_flops_per_s: f64,
    /// Achieved over the roof, in percent.
    pub percent_of_roof: f64,
    /// Which ceiling the roof is at this intensity.
    pub bound: Bound,
    /// The arithmetic whose ceiling applies.
    pub math: Math,
}

/// The roof at `intensity` under `bandwidth` (bytes/s) and `compute` (FLOP/s).
pub fn roof(intensity: f64, bandwidth: f64, compute: f64) -> (f64, Bound) {
    let memory = intensity * bandwidth;
    if memory < compute {
        (memory, Bound::Memory)
    } else {
        (compute, Bound::Compute)
    }
}

impl LiveRun {
    /// Where `point` sits on the roofline: `None` for points without FLOPs (copies), CPU runs,
    /// host-device transfers (their bytes cross the bus, not DRAM), failed points, or when a
    /// ceiling was not measured.
    pub fn roofline(&self, point: &PointResult) -> Option<RooflinePoint> {
        if point.target != Target::Gpu
            || point.error.is_some()
            || self.spec().is_some_and(|k| k.id == KernelId::Transfer)
            || point.work.flops <= 0.0
            || point.work.bytes <= 0.0
        {
            return None;
        }
        let flops_per_s = point.flops_per_s()?;
        let bandwidth = self.peaks.d2d_bytes_per_s?;
        let compute = self.peaks.compute(point.math)?;
        let intensity = point.work.flops / point.work.bytes;
        let (roof_flops_per_s, bound) = roof(intensity, bandwidth, compute);
        Some(RooflinePoint {
            intensity,
            flops_per_s,
            roof_flops_per_s,
            percent_of_roof: 100.0 * flops_per_s / roof_flops_per_s,
            bound,
            math: point.math,
        })
    }

    /// The ridge point of `math`: the intensity where the bandwidth roof meets the compute
    /// ceiling, FLOPs per byte.
    pub fn ridge(&self, math: Math) -> Option<f64> {
        Some(self.peaks.compute(math)? / self.peaks.d2d_bytes_per_s?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Memory, SizeUnit, kernel};
    use crate::gpu::DeviceFacts;
    use crate::results::Peaks;

    fn run(kernel_name: &str, points: Vec<PointResult>) -> LiveRun {
        LiveRun {
            kernel: kernel_name.into(),
            size_unit: SizeUnit::Floats,
            device: DeviceFacts::default(),
            peaks: Peaks {
                d2d_bytes_per_s: Some(4e12),
                sgemm_flops_per_s: Some(50e12),
                tf32_flops_per_s: Some(400e12),
                fp16_flops_per_s: Some(800e12),
            },
            cupti: false,
            cupti_note: None,
            warmup: 0,
            points,
            warnings: Vec::new(),
            user: None,
            batch: 1,
        }
    }

    fn point(kernel_name: &str, config: &str, size: u64, ns: i64) -> PointResult {
        let k = kernel(kernel_name).unwrap();
        let c = k.config(config).unwrap();
        PointResult {
            config: config.into(),
            target: c.target,
            memory: Memory::Device,
            size,
            work: k.config_work(c, size),
            planned: 1,
            event_ns: vec![ns],
            cupti_ns: Vec::new(),
            check: None,
            block: None,
            resources: None,
            occupancy: None,
            math: c.math,
            cupti_off_ns: Vec::new(),
            error: None,
            batch: 1,
        }
    }

    #[test]
    fn a_streaming_kernel_is_memory_bound_and_a_big_gemm_compute_bound() {
        // vector_add: 1 FLOP per 12 bytes. 100 M floats in 400 us = 3 TB/s = 0.25 TFLOP/s,
        // under a roof of 4 TB/s / 12 = 0.333 TFLOP/s: 75%.
        let r = run(
            "vector_add",
            vec![point("vector_add", "grid-device", 100_000_000, 400_000)],
        );
        let p = r.roofline(&r.points[0]).unwrap();
        assert!((p.intensity - 1.0 / 12.0).abs() < 1e-12);
        assert_eq!(p.bound, Bound::Memory);
        assert!(
            (p.percent_of_roof - 75.0).abs() < 1e-9,
            "{}",
            p.percent_of_roof
        );
        // SGEMM 4096 FP32: 2 n^3 / 12 n^2 = 683 FLOP/byte, far right of the 12.5 ridge.
        // 137.4 GFLOP in 3.436 ms = 40 TFLOP/s = 80% of the 50 TFLOP/s ceiling.
        let r = run(
            "sgemm",
            vec![
                point("sgemm", "regblock", 4096, 3_436_000),
                point("sgemm", "tensor", 4096, 343_600),
            ],
        );
        let p = r.roofline(&r.points[0]).unwrap();
        assert_eq!((p.bound, p.math), (Bound::Compute, Math::Fp32));
        assert!(
            (p.percent_of_roof - 80.0).abs() < 0.1,
            "{}",
            p.percent_of_roof
        );
        // The Tensor Core rung is held to the FP16 ceiling (and reads 8 bytes per element).
        let p = r.roofline(&r.points[1]).unwrap();
        assert_eq!(p.math, Math::Fp16);
        assert!((p.intensity - 2.0 * 4096.0 / 8.0).abs() < 1e-9);
        assert!(
            (p.percent_of_roof - 50.0).abs() < 0.1,
            "{}",
            p.percent_of_roof
        );
        assert_eq!(r.ridge(Math::Fp32), Some(12.5));
    }

    #[test]
    fn a_user_kernels_gflops_are_a_share_of_its_roof() {
        // SAXPY given --flops 2*N --bytes 12*N: 100 M floats in 400 us moves 3 TB/s, 0.5
        // TFLOP/s, under a memory roof of 4 TB/s x 1/6 = 0.667 TFLOP/s: 75%, not 1% of FP32.
        let mut p = point("vector_add", "grid-device", 100_000_000, 400_000);
        p.config = "saxpy".into();
        p.work = crate::catalog::Work {
            flops: 2e8,
            bytes: 1.2e9,
        };
        let mut r = run("saxpy", vec![p]);
        r.size_unit = SizeUnit::N;
        r.user = Some(crate::user::UserInfo {
            kernel: "saxpy".into(),
            has_flops: true,
            ..Default::default()
        });
        assert_eq!(r.rate_unit(), "GFLOP/s");
        let (gflops, pct) = r.rate(&r.points[0]).unwrap();
        assert!((gflops - 500.0).abs() < 1e-9, "{gflops}");
        assert!((pct.unwrap() - 75.0).abs() < 1e-9, "{pct:?}");
    }

    #[test]
    fn points_without_flops_or_off_the_gpu_have_no_place() {
        let r = run("copy", vec![point("copy", "scalar", 1_000_000, 1_000)]);
        assert_eq!(r.roofline(&r.points[0]), None);
        let r = run(
            "vector_add",
            vec![point("vector_add", "cpu", 1_000_000, 1_000)],
        );
        assert_eq!(r.roofline(&r.points[0]), None);
        let mut failed = point("vector_add", "grid-device", 1_000_000, 1_000);
        failed.error = Some("fault".into());
        let r = run("vector_add", vec![failed]);
        assert_eq!(r.roofline(&r.points[0]), None);
    }
}
