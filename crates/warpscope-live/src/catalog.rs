//! The bundled kernels: what each computes, its launch configurations, the unit of its size, and
//! the floating-point operations and the fewest bytes it must move, so that achieved GFLOP/s and
//! GB/s can be set against the device's peak.

use serde::{Deserialize, Serialize};

/// Which bundled kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelId {
    /// `c = a + b`.
    VectorAdd,
    /// `y = alpha * x + y`.
    Saxpy,
    /// Device-to-device copy: scalar, tuned (float4, grid-stride) and the driver's memcpy.
    Copy,
    /// Single-precision matrix product: naive, shared-memory tiled, cuBLAS.
    Sgemm,
    /// Sum of a vector.
    Reduce,
    /// Host-device copies from pageable and pinned memory.
    Transfer,
    /// Direct 2-D convolution forward (a CNN's first layer).
    Conv2d,
    /// A kernel of the user's own `.cu` file (`warpscope live --source`).
    User,
}

/// What a size counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeUnit {
    /// Number of `f32` elements.
    Floats,
    /// Side of square matrices (m = n = k).
    MatrixSide,
    /// Number of images in the batch.
    Images,
    /// Bytes.
    Bytes,
    /// The problem size N of a user kernel.
    N,
}

impl SizeUnit {
    /// Word used in tables and axis titles.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Floats => "floats",
            Self::MatrixSide => "m = n = k",
            Self::Images => "images",
            Self::Bytes => "bytes",
            Self::N => "N",
        }
    }
}

/// Which rate says how well a kernel did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Bytes moved per second, against the measured device-to-device bandwidth.
    Bandwidth,
    /// Floating-point operations per second, against the measured SGEMM rate.
    Flops,
}

/// Where a configuration runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// On the GPU.
    Gpu,
    /// On the CPU (the baseline).
    Cpu,
}

/// Which memory a configuration uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Memory {
    /// `cuMemAlloc` buffers with explicit copies.
    Device,
    /// Managed (unified) memory, no explicit copies: the kernel faults pages over.
    Unified,
    /// Ordinary (pageable) host memory.
    Pageable,
    /// Page-locked (pinned) host memory.
    Pinned,
    /// Plain host memory for a CPU run.
    Host,
}

impl Memory {
    /// Word used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Device => "device",
            Self::Unified => "unified",
            Self::Pageable => "pageable",
            Self::Pinned => "pinned",
            Self::Host => "host",
        }
    }
}

/// Which arithmetic a configuration's FLOPs run on: the compute ceiling of its roofline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Math {
    /// Plain FP32 (CUDA cores): the cuBLAS SGEMM ceiling.
    #[default]
    Fp32,
    /// TF32 on Tensor Cores: the cuBLAS TF32 GEMM ceiling.
    Tf32,
    /// FP16 inputs, FP32 accumulation on Tensor Cores: the cuBLAS FP16 GEMM ceiling.
    Fp16,
}

impl Math {
    /// Word used in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fp32 => "FP32",
            Self::Tf32 => "TF32 TC",
            Self::Fp16 => "FP16 TC",
        }
    }
}

/// One launch configuration of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigSpec {
    /// Name used on the command line and in tables (`grid-device`).
    pub name: &'static str,
    /// What it does, in a few words.
    pub summary: &'static str,
    /// GPU or CPU.
    pub target: Target,
    /// Memory kind.
    pub memory: Memory,
    /// Threads per block of a 1-D launch whose block size can be chosen freely (`--blocks`
    /// sweeps it); `None` where the kernel's indexing fixes the block.
    pub block: Option<u32>,
    /// The arithmetic its FLOPs run on.
    pub math: Math,
    /// Sizes must be a multiple of this (tiles without edge handling).
    pub size_multiple: u64,
}

impl ConfigSpec {
    /// The same configuration with a block size `--blocks` may change.
    const fn sweepable(mut self, threads: u32) -> Self {
        self.block = Some(threads);
        self
    }

    /// The same configuration running its FLOPs on `math`, for sizes that are multiples of
    /// `multiple`.
    const fn on(mut self, math: Math, multiple: u64) -> Self {
        self.math = math;
        self.size_multiple = multiple;
        self
    }
}

/// A bundled kernel.
#[derive(Clone, Copy, Debug)]
pub struct KernelSpec {
    /// Which kernel.
    pub id: KernelId,
    /// Name used on the command line (`vector_add`).
    pub name: &'static str,
    /// What it computes.
    pub summary: &'static str,
    /// The CUDA source (from `assets/kernels/`), if the kernel has one.
    pub source: Option<&'static str>,
    /// File name of that source.
    pub source_file: Option<&'static str>,
    /// What a size counts.
    pub size_unit: SizeUnit,
    /// Sizes of the default sweep.
    pub default_sizes: &'static [u64],
    /// Largest size accepted.
    pub max_size: u64,
    /// Launch configurations; the default sweep runs them all.
    pub configs: &'static [ConfigSpec],
    /// The rate that says how well it did.
    pub metric: Metric,
}

/// Work one run of a kernel does at a size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Work {
    /// Floating-point operations.
    pub flops: f64,
    /// The fewest bytes it must move through device memory (each input read once, each output
    /// written once), or across the bus for host-device copies.
    pub bytes: f64,
}

const fn gpu(name: &'static str, summary: &'static str, memory: Memory) -> ConfigSpec {
    ConfigSpec {
        name,
        summary,
        target: Target::Gpu,
        memory,
        block: None,
        math: Math::Fp32,
        size_multiple: 1,
    }
}

/// The largest problem size a user kernel accepts (2⁴⁰).
pub const USER_MAX_N: u64 = 1 << 40;
/// Default sizes of a user kernel's sweep.
pub const USER_DEFAULT_SIZES: &[u64] = &[1_000_000, 10_000_000, 100_000_000];

/// The entry a user kernel runs under (`warpscope live --source`): not in [`CATALOG`]; the
/// kernel itself travels in the plan.
pub static USER_KERNEL: KernelSpec = KernelSpec {
    id: KernelId::User,
    name: "user",
    summary: "a kernel of your own .cu file",
    source: None,
    source_file: None,
    size_unit: SizeUnit::N,
    default_sizes: USER_DEFAULT_SIZES,
    max_size: USER_MAX_N,
    configs: &[gpu("user", "your launch shape", Memory::Device).sweepable(256)],
    metric: Metric::Bandwidth,
};

const M: u64 = 1_000_000;

/// Every bundled kernel, in the order `warpscope live --list` shows them.
pub static CATALOG: &[KernelSpec] = &[
    KernelSpec {
        id: KernelId::VectorAdd,
        name: "vector_add",
        summary: "c = a + b over K million floats: one thread, one block of 256, a full grid; \
                  device or unified memory; and the same add on the CPU",
        source: Some(include_str!("../../../assets/kernels/vector_add.cu")),
        source_file: Some("vector_add.cu"),
        size_unit: SizeUnit::Floats,
        default_sizes: &[M, 5 * M, 10 * M, 50 * M, 100 * M],
        max_size: 2_000 * M,
        configs: &[
            gpu(
                "1x1-device",
                "<<<1, 1>>>, cuMemAlloc + copies",
                Memory::Device,
            ),
            gpu(
                "1x256-device",
                "<<<1, 256>>>, cuMemAlloc + copies",
                Memory::Device,
            ),
            gpu(
                "grid-device",
                "<<<n/256, 256>>>, cuMemAlloc + copies",
                Memory::Device,
            )
            .sweepable(256),
            gpu("1x1-unified", "<<<1, 1>>>, managed memory", Memory::Unified),
            gpu(
                "1x256-unified",
                "<<<1, 256>>>, managed memory",
                Memory::Unified,
            ),
            gpu(
                "grid-unified",
                "<<<n/256, 256>>>, managed memory",
                Memory::Unified,
            )
            .sweepable(256),
            ConfigSpec {
                name: "cpu",
                summary: "one CPU thread, the same loop",
                target: Target::Cpu,
                memory: Memory::Host,
                block: None,
                math: Math::Fp32,
                size_multiple: 1,
            },
        ],
        metric: Metric::Bandwidth,
    },
    KernelSpec {
        id: KernelId::Saxpy,
        name: "saxpy",
        summary: "y = alpha * x + y over K million floats, full grid",
        source: Some(include_str!("../../../assets/kernels/saxpy.cu")),
        source_file: Some("saxpy.cu"),
        size_unit: SizeUnit::Floats,
        default_sizes: &[M, 10 * M, 100 * M],
        max_size: 2_000 * M,
        configs: &[gpu("grid", "<<<n/256, 256>>>", Memory::Device).sweepable(256)],
        metric: Metric::Bandwidth,
    },
    KernelSpec {
        id: KernelId::Copy,
        name: "copy",
        summary: "device-to-device copy: scalar kernel, bandwidth-tuned kernel (float4, \
                  grid-stride, 4 loads in flight) and the driver's cuMemcpyDtoD",
        source: Some(include_str!("../../../assets/kernels/copy.cu")),
        source_file: Some("copy.cu"),
        size_unit: SizeUnit::Floats,
        default_sizes: &[M, 10 * M, 100 * M, 250 * M],
        max_size: 4_000 * M,
        configs: &[
            gpu(
                "scalar",
                "one float per thread and step, full grid",
                Memory::Device,
            )
            .sweepable(256),
            gpu(
                "vec4",
                "float4 loads, 4 in flight, grid-stride, 8 blocks of 256 per SM",
                Memory::Device,
            )
            .sweepable(256),
            gpu(
                "memcpy",
                "cuMemcpyDtoDAsync (the yardstick)",
                Memory::Device,
            ),
        ],
        metric: Metric::Bandwidth,
    },
    KernelSpec {
        id: KernelId::Sgemm,
        name: "sgemm",
        summary: "C = A * B, square matrices, the GEMM ladder: naive, 32x32 shared-memory tiles, \
                  register-blocked 128x128 tiles, Tensor Cores (FP16 in, FP32 accumulate), and \
                  cuBLAS in FP32, TF32 and FP16 as the yardsticks",
        source: Some(include_str!("../../../assets/kernels/sgemm.cu")),
        source_file: Some("sgemm.cu"),
        size_unit: SizeUnit::MatrixSide,
        default_sizes: &[512, 1024, 2048, 4096],
        max_size: 16_384,
        configs: &[
            gpu(
                "naive",
                "one thread per element of C, 16x16 blocks",
                Memory::Device,
            ),
            gpu("tiled", "32x32 tiles through shared memory", Memory::Device),
            gpu(
                "regblock",
                "128x128 block tiles, 8x8 per thread in registers, float4 loads, double-buffered \
                 shared memory (sizes: multiples of 128)",
                Memory::Device,
            )
            .on(Math::Fp32, 128),
            gpu(
                "tensor",
                "Tensor Cores via mma.sync m16n8k16: FP16 A and B, FP32 accumulate, 128x128 \
                 tiles, 4 warps of 64x64, 3-stage cp.async pipeline, swizzled shared memory \
                 (sizes: multiples of 128)",
                Memory::Device,
            )
            .on(Math::Fp16, 128),
            gpu("cublas", "cublasSgemm, default (FP32) math", Memory::Device),
            gpu(
                "cublas-tf32",
                "cublasGemmEx, FP32 data, TF32 tensor-op math",
                Memory::Device,
            )
            .on(Math::Tf32, 1),
            gpu(
                "cublas-fp16",
                "cublasGemmEx, FP16 A and B, FP32 accumulate, tensor-op math",
                Memory::Device,
            )
            .on(Math::Fp16, 1),
        ],
        metric: Metric::Flops,
    },
    KernelSpec {
        id: KernelId::Reduce,
        name: "reduce",
        summary: "sum of K million floats: warp shuffles, one atomic per block",
        source: Some(include_str!("../../../assets/kernels/reduce.cu")),
        source_file: Some("reduce.cu"),
        size_unit: SizeUnit::Floats,
        default_sizes: &[M, 10 * M, 100 * M],
        max_size: 2_000 * M,
        configs: &[gpu(
            "grid",
            "8 blocks of 256 per SM, grid-stride",
            Memory::Device,
        )
        .sweepable(256)],
        metric: Metric::Bandwidth,
    },
    KernelSpec {
        id: KernelId::Transfer,
        name: "transfer",
        summary: "host<->device copies from pageable and pinned memory: bandwidth by size",
        source: None,
        source_file: None,
        size_unit: SizeUnit::Bytes,
        default_sizes: &[1 << 16, 1 << 20, 1 << 24, 1 << 28],
        max_size: 1 << 34,
        configs: &[
            gpu(
                "h2d-pageable",
                "cuMemcpyHtoD from malloc'd memory",
                Memory::Pageable,
            ),
            gpu(
                "h2d-pinned",
                "cuMemcpyHtoDAsync from cuMemHostAlloc'd memory",
                Memory::Pinned,
            ),
            gpu(
                "d2h-pageable",
                "cuMemcpyDtoH to malloc'd memory",
                Memory::Pageable,
            ),
            gpu(
                "d2h-pinned",
                "cuMemcpyDtoHAsync to cuMemHostAlloc'd memory",
                Memory::Pinned,
            ),
        ],
        metric: Metric::Bandwidth,
    },
    KernelSpec {
        id: KernelId::Conv2d,
        name: "conv2d",
        summary: "direct 2-D convolution forward: 3x32x32 images, 64 filters of 5x5, padding 2 \
                  (a CNN's first layer), at batch 100, 1000, 10000",
        source: Some(include_str!("../../../assets/kernels/conv2d.cu")),
        source_file: Some("conv2d.cu"),
        size_unit: SizeUnit::Images,
        default_sizes: &[100, 1_000, 10_000],
        max_size: 50_000,
        configs: &[gpu("direct", "one thread per output element", Memory::Device).sweepable(256)],
        metric: Metric::Flops,
    },
];

/// Shape of the bundled convolution (input channels, output channels, image side, filter side).
pub(crate) const CONV: (u64, u64, u64, u64) = (3, 64, 32, 5);

/// The kernel called `name`.
pub fn kernel(name: &str) -> Option<&'static KernelSpec> {
    CATALOG.iter().find(|k| k.name == name)
}

impl KernelSpec {
    /// The configuration called `name`.
    pub fn config(&self, name: &str) -> Option<&'static ConfigSpec> {
        self.configs.iter().find(|c| c.name == name)
    }

    /// Names of the configurations, comma-separated.
    pub fn config_names(&self) -> String {
        self.configs
            .iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The work one run of `config` does at `size`: as [`KernelSpec::work`], with A and B read
    /// as 2-byte halves where the configuration takes FP16 inputs.
    pub fn config_work(&self, config: &ConfigSpec, size: u64) -> Work {
        let mut w = self.work(size);
        if self.id == KernelId::Sgemm && config.math == Math::Fp16 {
            let n = size as f64;
            w.bytes = (2.0 + 2.0 + 4.0) * n * n;
        }
        w
    }

    /// The work one run does at `size`.
    pub fn work(&self, size: u64) -> Work {
        let n = size as f64;
        let f = 4.0; // bytes per float
        let (flops, bytes) = match self.id {
            KernelId::VectorAdd => (n, 3.0 * f * n),
            KernelId::Saxpy => (2.0 * n, 3.0 * f * n),
            KernelId::Copy => (0.0, 2.0 * f * n),
            KernelId::Sgemm => (2.0 * n * n * n, 3.0 * f * n * n),
            KernelId::Reduce => (n, f * n),
            KernelId::Transfer | KernelId::User => (0.0, n),
            KernelId::Conv2d => {
                // Nominal FLOPs, every tap counted (zero padding included), as convolution
                // rates are usually quoted: at 32x32 with padding 2 about 7% more than the
                // multiply-adds executed.
                let (cin, cout, side, ks) = CONV;
                let (cin, cout, side, ks) = (cin as f64, cout as f64, side as f64, ks as f64);
                let outputs = n * cout * side * side;
                let flops = 2.0 * outputs * cin * ks * ks;
                let bytes = f * (n * cin * side * side + cout * cin * ks * ks + cout + outputs);
                (flops, bytes)
            }
        };
        Work { flops, bytes }
    }

    /// Bytes of host memory one point needs at most (inputs, the result read back, copies).
    pub fn host_bytes(&self, size: u64) -> u64 {
        match self.id {
            KernelId::Transfer => 3 * size,
            _ => self.device_bytes(size),
        }
    }

    /// Bytes of device memory one point needs (all buffers at once).
    pub fn device_bytes(&self, size: u64) -> u64 {
        match self.id {
            // saxpy keeps a pristine y beside x and y.
            KernelId::VectorAdd | KernelId::Saxpy => 12 * size,
            KernelId::Copy => 8 * size,
            // A, B and C, and A and B again as halves for the FP16 configurations.
            KernelId::Sgemm => 16 * size * size,
            KernelId::Reduce => 4 * size + 4,
            KernelId::Transfer | KernelId::User => size,
            KernelId::Conv2d => self.work(size).bytes as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_configs_found() {
        for (i, k) in CATALOG.iter().enumerate() {
            assert!(
                CATALOG[i + 1..].iter().all(|o| o.name != k.name),
                "{}",
                k.name
            );
            assert_eq!(kernel(k.name).map(|s| s.id), Some(k.id));
            for c in k.configs {
                assert_eq!(k.config(c.name), Some(c));
            }
            assert!(!k.default_sizes.is_empty());
            assert!(k.default_sizes.iter().all(|&s| s <= k.max_size));
            assert_eq!(k.source.is_some(), k.source_file.is_some());
        }
        assert!(kernel("nope").is_none());
        assert!(kernel("vector_add").is_some_and(|k| k.config("gpu").is_none()));
    }

    #[test]
    fn vector_add_has_three_shapes_in_both_memories_and_a_cpu_run() {
        let k = kernel("vector_add").unwrap();
        let names: Vec<_> = k.configs.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "1x1-device",
                "1x256-device",
                "grid-device",
                "1x1-unified",
                "1x256-unified",
                "grid-unified",
                "cpu"
            ]
        );
        assert_eq!(k.default_sizes, &[M, 5 * M, 10 * M, 50 * M, 100 * M]);
    }

    #[test]
    fn flop_and_byte_accounting() {
        let w = kernel("vector_add").unwrap().work(10 * M);
        assert_eq!((w.flops, w.bytes), (1e7, 1.2e8));
        let w = kernel("saxpy").unwrap().work(M);
        assert_eq!((w.flops, w.bytes), (2e6, 1.2e7));
        let w = kernel("copy").unwrap().work(M);
        assert_eq!((w.flops, w.bytes), (0.0, 8e6));
        // 2 m n k for the product, A and B read once, C written once.
        let w = kernel("sgemm").unwrap().work(1024);
        assert_eq!(w.flops, 2.0 * 1024f64.powi(3));
        assert_eq!(w.bytes, 12.0 * 1024.0 * 1024.0);
        let w = kernel("reduce").unwrap().work(M);
        assert_eq!((w.flops, w.bytes), (1e6, 4e6));
        let w = kernel("transfer").unwrap().work(1 << 20);
        assert_eq!((w.flops, w.bytes), (0.0, 1_048_576.0));
        // 100 images: 100 x 64 x 32 x 32 outputs, 3 x 5 x 5 multiply-adds each.
        let w = kernel("conv2d").unwrap().work(100);
        assert_eq!(w.flops, 2.0 * 100.0 * 64.0 * 1024.0 * 75.0);
        let input = 100.0 * 3.0 * 1024.0;
        let weights = 64.0 * 75.0 + 64.0;
        let output = 100.0 * 64.0 * 1024.0;
        assert_eq!(w.bytes, 4.0 * (input + weights + output));
    }

    #[test]
    fn memory_needed_per_point() {
        // vector_add holds a, b and c on the device and their host copies.
        let k = kernel("vector_add").unwrap();
        assert_eq!(k.device_bytes(100 * M), 1_200_000_000);
        assert_eq!(k.host_bytes(100 * M), 1_200_000_000);
        // saxpy keeps a pristine y on the device, and x, y and the result on the host.
        let k = kernel("saxpy").unwrap();
        assert_eq!(
            (k.device_bytes(M), k.host_bytes(M)),
            (12_000_000, 12_000_000)
        );
        // A transfer holds the pattern, the host buffer and the bytes read back.
        let k = kernel("transfer").unwrap();
        assert_eq!(k.host_bytes(1 << 30), 3 << 30);
    }
}
