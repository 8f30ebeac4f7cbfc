//! Peak throughput per GPU model and precision, and memory bandwidth, each row with its source
//! (`docs/flops.md`, section 3); the precision a kernel runs in, from its name.

use serde::Serialize;

use crate::model::Dtype;

/// The arithmetic a kernel or operator runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// IEEE double.
    Fp64,
    /// IEEE single on the CUDA cores.
    Fp32,
    /// TensorFloat-32 on Tensor Cores (FP32 inputs, 10-bit mantissa).
    Tf32,
    /// IEEE half.
    Fp16,
    /// bfloat16.
    Bf16,
    /// 8-bit floats (E4M3, E5M2).
    Fp8,
}

impl Precision {
    /// Every precision, in table order.
    pub const ALL: [Self; 6] = [
        Self::Fp64,
        Self::Fp32,
        Self::Tf32,
        Self::Fp16,
        Self::Bf16,
        Self::Fp8,
    ];

    /// Stable name (`fp32`, `bf16`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fp64 => "fp64",
            Self::Fp32 => "fp32",
            Self::Tf32 => "tf32",
            Self::Fp16 => "fp16",
            Self::Bf16 => "bf16",
            Self::Fp8 => "fp8",
        }
    }

    /// The precision of floating-point data of type `dtype` (FP32 data is FP32 until a
    /// kernel's name says TF32).
    pub fn of_dtype(dtype: Dtype) -> Option<Self> {
        Some(match dtype {
            Dtype::F64 => Self::Fp64,
            Dtype::F32 => Self::Fp32,
            Dtype::F16 => Self::Fp16,
            Dtype::Bf16 => Self::Bf16,
            Dtype::Fp8 => Self::Fp8,
            _ => return None,
        })
    }
}

/// The precision a kernel's name states, for the matrix kernels whose names do (cuBLAS,
/// cuDNN, CUTLASS): `None` for any other name, whose precision comes from its operator.
pub fn precision_of_kernel(name: &str) -> Option<Precision> {
    let n = name.to_ascii_lowercase();
    let matrix = [
        "gemm", "xmma", "cutlass", "fprop", "dgrad", "wgrad", "cublas", "hmma",
    ]
    .iter()
    .any(|w| n.contains(w));
    if !matrix {
        return None;
    }
    if n.contains("e4m3") || n.contains("e5m2") || n.contains("fp8") {
        Some(Precision::Fp8)
    } else if n.contains("tf32") || n.contains("tensorop_s1688") || n.contains("tensorop_s1684") {
        // CUTLASS's SM80 tensor-op SGEMMs (`cutlass_80_tensorop_s1688gemm_…`): FP32 data on
        // the TF32 instructions (m16n8k8, m16n8k4), the name giving no other type.
        Some(Precision::Tf32)
    } else if n.contains("bf16") {
        Some(Precision::Bf16)
    } else if n.contains("f16")
        || n.contains("fp16")
        || n.contains("h884")
        || n.contains("h1688")
        || n.contains("h16816")
    {
        Some(Precision::Fp16)
    } else if n.contains("dgemm") || n.contains("f64") || n.contains("d884") {
        Some(Precision::Fp64)
    } else if n.contains("sgemm") || n.contains("ffma") || n.contains("f32") {
        Some(Precision::Fp32)
    } else {
        None
    }
}

/// One GPU model's dense peaks.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PeakRow {
    /// The model (`NVIDIA H100 SXM`).
    pub model: &'static str,
    /// Lower-case pieces that must all appear in the device name for the row to apply.
    #[serde(skip)]
    pub matches: &'static [&'static str],
    /// Dense TFLOP/s per precision, in [`Precision::ALL`] order; `None` where the part has
    /// no such arithmetic (or its vendor publishes no figure).
    pub tflops: [Option<f64>; 6],
    /// True when the vendor doubles the Tensor Core figures with 2:4 structured sparsity:
    /// the figures here are the dense ones, half of the sparse ones on the datasheet.
    pub sparsity_doubles: bool,
    /// Memory bandwidth in GB/s (10^9 bytes per second).
    pub memory_gbs: f64,
    /// Where the figures come from.
    pub source: &'static str,
}

impl PeakRow {
    /// Dense TFLOP/s at `p`.
    pub fn tflops_at(&self, p: Precision) -> Option<f64> {
        let i = Precision::ALL.iter().position(|&q| q == p)?;
        self.tflops[i]
    }
}

const fn row(
    model: &'static str,
    matches: &'static [&'static str],
    tflops: [Option<f64>; 6],
    sparsity_doubles: bool,
    memory_gbs: f64,
    source: &'static str,
) -> PeakRow {
    PeakRow {
        model,
        matches,
        tflops,
        sparsity_doubles,
        memory_gbs,
        source,
    }
}

/// The peaks table, most specific rows first (the first row whose pieces all appear in the
/// device name wins). Tensor Core figures are dense (without sparsity).
pub const PEAKS: &[PeakRow] = &[
    // [fp64, fp32, tf32, fp16, bf16, fp8]
    row(
        "NVIDIA B200",
        &["b200"],
        [
            Some(37.0),
            Some(75.0),
            Some(1125.0),
            Some(2250.0),
            Some(2250.0),
            Some(4500.0),
        ],
        true,
        7700.0,
        "NVIDIA HGX B200 datasheet (2024), per GPU: the 8-GPU figures / 8, sparse Tensor Core figures halved",
    ),
    row(
        "NVIDIA H200",
        &["h200"],
        [
            Some(34.0),
            Some(67.0),
            Some(494.5),
            Some(989.5),
            Some(989.5),
            Some(1979.0),
        ],
        true,
        4800.0,
        "NVIDIA H200 Tensor Core GPU datasheet (2024), H200 SXM, sparse figures halved",
    ),
    row(
        "NVIDIA H100 PCIe",
        &["h100", "pcie"],
        [
            Some(26.0),
            Some(51.0),
            Some(378.0),
            Some(756.0),
            Some(756.0),
            Some(1513.0),
        ],
        true,
        2000.0,
        "NVIDIA H100 Tensor Core GPU datasheet (2023), H100 PCIe, sparse figures halved",
    ),
    row(
        "NVIDIA H100 NVL",
        &["h100", "nvl"],
        [
            Some(30.0),
            Some(60.0),
            Some(417.5),
            Some(835.5),
            Some(835.5),
            Some(1670.5),
        ],
        true,
        3900.0,
        "NVIDIA H100 Tensor Core GPU datasheet (2023), H100 NVL, sparse figures halved",
    ),
    row(
        "NVIDIA H100 SXM",
        &["h100"],
        [
            Some(34.0),
            Some(67.0),
            Some(494.5),
            Some(989.5),
            Some(989.5),
            Some(1979.0),
        ],
        true,
        3350.0,
        "NVIDIA H100 Tensor Core GPU datasheet (2023), H100 SXM, sparse figures halved",
    ),
    row(
        "NVIDIA A100 80GB PCIe",
        &["a100", "80gb", "pcie"],
        [
            Some(9.7),
            Some(19.5),
            Some(156.0),
            Some(312.0),
            Some(312.0),
            None,
        ],
        true,
        1935.0,
        "NVIDIA A100 Tensor Core GPU datasheet (2021), A100 80GB PCIe",
    ),
    row(
        "NVIDIA A100 80GB SXM",
        &["a100", "80gb"],
        [
            Some(9.7),
            Some(19.5),
            Some(156.0),
            Some(312.0),
            Some(312.0),
            None,
        ],
        true,
        2039.0,
        "NVIDIA A100 Tensor Core GPU datasheet (2021), A100 80GB SXM",
    ),
    row(
        "NVIDIA A100 40GB",
        &["a100"],
        [
            Some(9.7),
            Some(19.5),
            Some(156.0),
            Some(312.0),
            Some(312.0),
            None,
        ],
        true,
        1555.0,
        "NVIDIA A100 Tensor Core GPU datasheet (2021), A100 40GB (PCIe and SXM)",
    ),
    row(
        "NVIDIA L40S",
        &["l40s"],
        [
            None,
            Some(91.6),
            Some(183.0),
            Some(362.05),
            Some(362.05),
            Some(733.0),
        ],
        true,
        864.0,
        "NVIDIA L40S datasheet (2023), sparse figures halved",
    ),
    row(
        "NVIDIA L4",
        &["l4"],
        [
            None,
            Some(30.3),
            Some(60.0),
            Some(121.0),
            Some(121.0),
            Some(242.5),
        ],
        true,
        300.0,
        "NVIDIA L4 Tensor Core GPU datasheet (2023), sparse figures halved",
    ),
    row(
        "NVIDIA A10",
        &["a10"],
        [None, Some(31.2), Some(62.5), Some(125.0), Some(125.0), None],
        true,
        600.0,
        "NVIDIA A10 Tensor Core GPU datasheet (2021), sparse figures halved",
    ),
    row(
        "NVIDIA T4",
        &["t4"],
        [None, Some(8.1), None, Some(65.0), None, None],
        false,
        320.0,
        "NVIDIA T4 Tensor Core GPU datasheet (2019)",
    ),
    row(
        "NVIDIA V100 PCIe",
        &["v100", "pcie"],
        [Some(7.0), Some(14.0), None, Some(112.0), None, None],
        false,
        900.0,
        "NVIDIA Tesla V100 datasheet (2020), V100 PCIe",
    ),
    row(
        "NVIDIA V100 SXM2",
        &["v100"],
        [Some(7.8), Some(15.7), None, Some(125.0), None, None],
        false,
        900.0,
        "NVIDIA Tesla V100 datasheet (2020), V100 SXM2",
    ),
    row(
        "AMD Instinct MI300X",
        &["mi300x"],
        [
            Some(81.7),
            Some(163.4),
            Some(653.7),
            Some(1307.4),
            Some(1307.4),
            Some(2614.9),
        ],
        true,
        5300.0,
        "AMD Instinct MI300X data sheet (2023): FP64/FP32 matrix, dense",
    ),
    row(
        "AMD Instinct MI300A",
        &["mi300a"],
        [
            Some(61.3),
            Some(122.6),
            Some(490.3),
            Some(980.6),
            Some(980.6),
            Some(1961.2),
        ],
        true,
        5300.0,
        "AMD Instinct MI300A data sheet (2023): FP64/FP32 matrix, dense",
    ),
    row(
        "AMD Instinct MI250X",
        &["mi250x"],
        [Some(95.7), Some(95.7), None, Some(383.0), Some(383.0), None],
        false,
        3276.8,
        "AMD Instinct MI250X data sheet (2021): FP64/FP32 matrix",
    ),
    row(
        "AMD Instinct MI250",
        &["mi250"],
        [Some(90.5), Some(90.5), None, Some(362.1), Some(362.1), None],
        false,
        3276.8,
        "AMD Instinct MI250 data sheet (2021): FP64/FP32 matrix",
    ),
    row(
        "NVIDIA TITAN V",
        &["titan v"],
        [Some(7.45), Some(14.9), None, Some(110.0), None, None],
        false,
        652.8,
        "NVIDIA TITAN V product page (2017)",
    ),
    row(
        "NVIDIA TITAN Xp",
        &["titan xp"],
        [Some(0.38), Some(12.1), None, None, None, None],
        false,
        547.7,
        "NVIDIA TITAN Xp product page (2017)",
    ),
    row(
        "NVIDIA TITAN X (Pascal)",
        &["titan x"],
        [Some(0.34), Some(11.0), None, None, None, None],
        false,
        480.0,
        "NVIDIA TITAN X (Pascal) product page (2016)",
    ),
    row(
        "NVIDIA GeForce RTX 4060 Ti",
        &["4060 ti"],
        [
            None,
            Some(22.1),
            Some(22.1),
            Some(88.4),
            Some(88.4),
            Some(176.8),
        ],
        true,
        288.0,
        "NVIDIA Ada GPU architecture whitepaper (2023), RTX 4060 Ti, FP16 accumulate, dense",
    ),
    row(
        "NVIDIA GeForce RTX 3060",
        &["3060"],
        [None, Some(12.7), Some(12.7), Some(50.8), Some(50.8), None],
        true,
        360.0,
        "NVIDIA Ampere GA102 whitepaper (2021) scaled to the RTX 3060's 28 SMs at 1.78 GHz, FP16 accumulate, dense",
    ),
    row(
        "NVIDIA GeForce GTX 1070",
        &["1070"],
        [Some(0.2), Some(6.5), None, None, None, None],
        false,
        256.0,
        "NVIDIA GeForce GTX 1070 product page (2016)",
    ),
    row(
        "Tesla K80",
        &["k80"],
        [Some(1.45), Some(4.37), None, None, None, None],
        false,
        240.0,
        "NVIDIA Tesla K80 datasheet (2014), per GPU of the board, boost clock",
    ),
    row(
        "NVIDIA Jetson Nano",
        &["tegra x1"],
        [None, Some(0.236), None, Some(0.472), None, None],
        false,
        25.6,
        "NVIDIA Jetson Nano module datasheet (2019)",
    ),
];

/// The row for a device named `name` (case is ignored), if the table has one.
pub fn peak_row(name: &str) -> Option<&'static PeakRow> {
    let n = name.to_ascii_lowercase();
    PEAKS
        .iter()
        .find(|r| r.matches.iter().all(|m| n.contains(m)))
}

/// Peaks the user gives for parts or clocks the table lacks (`--peak-tflops`, `--peak-gbs`, or
/// typed in the viewer's Roofline view): they replace the table's for every device and
/// precision. Build one with [`PeakOverride::checked`] or [`PeakOverride::parse`], which refuse
/// what is not a peak.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PeakOverride {
    /// Peak TFLOP/s for every precision.
    pub tflops: Option<f64>,
    /// Memory bandwidth in GB/s.
    pub gbs: Option<f64>,
}

/// One of the two figures of a [`PeakOverride`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeakFigure {
    /// Peak TFLOP/s (`--peak-tflops`).
    Tflops,
    /// Memory bandwidth in GB/s (`--peak-gbs`).
    Gbs,
}

impl PeakFigure {
    /// The command-line flag that gives it.
    pub fn flag(self) -> &'static str {
        match self {
            Self::Tflops => "--peak-tflops",
            Self::Gbs => "--peak-gbs",
        }
    }
}

/// Why a peak the user gave is refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PeakError {
    /// Zero, negative, infinite or NaN.
    #[error("{} must be a number greater than 0", .0.flag())]
    NotPositive(PeakFigure),
    /// Text that is not a number.
    #[error("{} must be a number greater than 0, not {text:?}", .figure.flag())]
    NotANumber {
        /// The figure.
        figure: PeakFigure,
        /// What was given.
        text: String,
    },
}

impl PeakOverride {
    /// The override of `tflops` and `gbs` (each `None`: the table's), refused unless each given
    /// figure is a finite number greater than 0.
    pub fn checked(tflops: Option<f64>, gbs: Option<f64>) -> Result<Self, PeakError> {
        for (v, figure) in [(tflops, PeakFigure::Tflops), (gbs, PeakFigure::Gbs)] {
            if v.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
                return Err(PeakError::NotPositive(figure));
            }
        }
        Ok(Self { tflops, gbs })
    }

    /// The override typed as text (`"400"`, `" 2e3 "`; empty or blank: the table's figure),
    /// checked as [`PeakOverride::checked`] does.
    pub fn parse(tflops: &str, gbs: &str) -> Result<Self, PeakError> {
        let number = |text: &str, figure: PeakFigure| -> Result<Option<f64>, PeakError> {
            let t = text.trim();
            if t.is_empty() {
                return Ok(None);
            }
            t.parse::<f64>()
                .map(Some)
                .map_err(|_| PeakError::NotANumber {
                    figure,
                    text: t.to_string(),
                })
        };
        Self::checked(
            number(tflops, PeakFigure::Tflops)?,
            number(gbs, PeakFigure::Gbs)?,
        )
    }

    /// True when the user gave either figure.
    pub fn is_set(&self) -> bool {
        self.tflops.is_some() || self.gbs.is_some()
    }
}

/// The peaks used for one device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DevicePeaks {
    /// The table's row, when the device's name picks one.
    pub row: Option<PeakRow>,
    /// The user's override.
    #[serde(skip)]
    pub over: PeakOverride,
}

impl DevicePeaks {
    /// The peaks of the device named `name`.
    pub fn of(name: &str, over: PeakOverride) -> Self {
        Self {
            row: peak_row(name).copied(),
            over,
        }
    }

    /// Peak FLOP/s at `p`: the override, else the table's.
    pub fn flops_per_s(&self, p: Precision) -> Option<f64> {
        let t = self.over.tflops.or_else(|| self.row?.tflops_at(p))?;
        Some(t * 1e12)
    }

    /// Peak bytes per second: the override, else the table's.
    pub fn bytes_per_s(&self) -> Option<f64> {
        Some(self.over.gbs.or_else(|| self.row.map(|r| r.memory_gbs))? * 1e9)
    }

    /// Where the figures come from, for the user.
    pub fn source(&self) -> String {
        match (self.over.tflops, self.over.gbs, self.row) {
            (Some(_), Some(_), _) => "--peak-tflops and --peak-gbs".to_string(),
            (Some(_), None, Some(r)) => format!("--peak-tflops; bandwidth: {}", r.source),
            (None, Some(_), Some(r)) => format!("{}; bandwidth: --peak-gbs", r.source),
            (None, None, Some(r)) => r.source.to_string(),
            (Some(_), None, None) => "--peak-tflops (no bandwidth known)".to_string(),
            (None, Some(_), None) => "--peak-gbs (no FLOP/s peak known)".to_string(),
            (None, None, None) => {
                "unknown device: not in the peaks table (give --peak-tflops and --peak-gbs)"
                    .to_string()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_pick_their_rows() {
        let model = |n: &str| peak_row(n).map(|r| r.model);
        assert_eq!(model("NVIDIA H200"), Some("NVIDIA H200"));
        assert_eq!(model("NVIDIA H100 80GB HBM3"), Some("NVIDIA H100 SXM"));
        assert_eq!(model("NVIDIA H100 PCIe"), Some("NVIDIA H100 PCIe"));
        assert_eq!(model("NVIDIA A100-SXM4-80GB"), Some("NVIDIA A100 80GB SXM"));
        assert_eq!(model("NVIDIA A100-SXM4-40GB"), Some("NVIDIA A100 40GB"));
        assert_eq!(model("Tesla V100-SXM2-16GB"), Some("NVIDIA V100 SXM2"));
        assert_eq!(model("NVIDIA L4"), Some("NVIDIA L4"));
        assert_eq!(model("NVIDIA L40S"), Some("NVIDIA L40S"));
        assert_eq!(model("AMD Instinct MI300X"), Some("AMD Instinct MI300X"));
        assert_eq!(model("TITAN Xp"), Some("NVIDIA TITAN Xp"));
        assert_eq!(model("Radeon 780M"), None);
    }

    #[test]
    fn overrides_replace_the_table_and_unknown_devices_say_so() {
        let h200 = DevicePeaks::of("NVIDIA H200", PeakOverride::default());
        assert_eq!(h200.flops_per_s(Precision::Bf16), Some(989.5e12));
        assert_eq!(h200.bytes_per_s(), Some(4800e9));
        let over = PeakOverride {
            tflops: Some(100.0),
            gbs: None,
        };
        let mine = DevicePeaks::of("Mystery GPU", over);
        assert_eq!(mine.flops_per_s(Precision::Fp32), Some(100e12));
        assert_eq!(mine.bytes_per_s(), None);
        let unknown = DevicePeaks::of("Mystery GPU", PeakOverride::default());
        assert!(unknown.source().starts_with("unknown device"));
        assert_eq!(unknown.flops_per_s(Precision::Fp32), None);
    }

    #[test]
    fn overrides_are_numbers_greater_than_zero() {
        let both = PeakOverride::checked(Some(400.0), Some(2000.0));
        assert_eq!(
            both,
            Ok(PeakOverride {
                tflops: Some(400.0),
                gbs: Some(2000.0)
            })
        );
        for bad in [0.0, -5.0, f64::NAN, f64::INFINITY] {
            let e = PeakOverride::checked(Some(bad), None).unwrap_err();
            assert_eq!(
                e.to_string(),
                "--peak-tflops must be a number greater than 0"
            );
            let e = PeakOverride::checked(None, Some(bad)).unwrap_err();
            assert_eq!(e.to_string(), "--peak-gbs must be a number greater than 0");
        }
        // Typed text: blank is the table's figure, anything else must be a number.
        assert_eq!(
            PeakOverride::parse(" 400 ", ""),
            Ok(PeakOverride {
                tflops: Some(400.0),
                gbs: None
            })
        );
        assert_eq!(PeakOverride::parse("", "  "), Ok(PeakOverride::default()));
        assert!(!PeakOverride::default().is_set());
        assert_eq!(
            PeakOverride::parse("fast", "").unwrap_err().to_string(),
            "--peak-tflops must be a number greater than 0, not \"fast\""
        );
        assert_eq!(
            PeakOverride::parse("400", "-1").unwrap_err().to_string(),
            "--peak-gbs must be a number greater than 0"
        );
    }

    #[test]
    fn kernel_names_state_their_precision() {
        let p = precision_of_kernel;
        assert_eq!(
            p("sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc"),
            Some(Precision::Tf32)
        );
        assert_eq!(
            p("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc"),
            Some(Precision::Bf16)
        );
        assert_eq!(
            p("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma"),
            Some(Precision::Fp32)
        );
        // CUTLASS's SM80 tensor-op SGEMM: FP32 data on TF32 instructions.
        assert_eq!(
            p(
                "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)"
            ),
            Some(Precision::Tf32)
        );
        // FP16 inputs accumulated in FP32 (`s16816`) are FP16 work.
        assert_eq!(
            p("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn"),
            Some(Precision::Fp16)
        );
        assert_eq!(
            p("void at::native::vectorized_elementwise_kernel<4, float>"),
            None
        );
    }
}
