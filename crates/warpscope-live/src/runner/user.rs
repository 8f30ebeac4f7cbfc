//! A user kernel's point: its buffers filled as the SPEC says, kept pristine on the device and
//! copied over the working set before every launch (so in-place kernels see the same inputs each
//! time), timed like the bundled kernels, and, with `--check-against`, compared buffer by buffer
//! with another kernel of the file run once on the same inputs.

use cudarc::driver::sys::{CUfunction, CUmodule};

use super::{Lab, Launch, PointCtx};
use crate::error::LiveError;
use crate::gpu::{Arg, DeviceBuffer, Gpu};
use crate::reference::{Check, Rng};
use crate::results::PointResult;
use crate::user::spec::ArgSpec;
use crate::user::{Init, ScalarType, UserKernel, scalar_bits};

/// A user's compiled file: the kernel, the reference kernel, and NVRTC's log.
pub(crate) struct UserModule {
    /// The loaded module.
    pub(super) module: CUmodule,
    kernel: CUfunction,
    reference: Option<CUfunction>,
    /// NVRTC's log (warnings).
    pub(super) log: String,
}

/// Compiles the user's file and finds its kernels by the names NVRTC gives them.
pub(super) fn compile(gpu: &mut Gpu, user: &UserKernel) -> Result<UserModule, LiveError> {
    let mut names = vec![user.kernel.as_str()];
    if let Some(r) = &user.check_against {
        names.push(r);
    }
    let (module, lowered, log) = gpu.compile_with(
        &user.source,
        &user.file_name,
        &user.compile_options(),
        &names,
    )?;
    let function = |i: usize| -> Result<CUfunction, LiveError> {
        let symbol = lowered.get(i).cloned().flatten().ok_or_else(|| {
            LiveError::Plan(format!(
                "NVRTC compiled {} but found no __global__ function {:?} in it",
                user.file_name, names[i]
            ))
        })?;
        gpu.function(module, &symbol)
    };
    // The compiled functions have the last word on the parameters: the textual look cannot see
    // through macros and templates.
    let checked = |i: usize| -> Result<CUfunction, LiveError> {
        let f = function(i)?;
        let sizes = gpu.param_sizes(f)?;
        check_param_sizes(names[i], &sizes, &user.args).map_err(LiveError::Plan)?;
        Ok(f)
    };
    let kernel = checked(0)?;
    let reference = if names.len() > 1 {
        Some(checked(1)?)
    } else {
        None
    };
    Ok(UserModule {
        module,
        kernel,
        reference,
        log,
    })
}

/// Checks the compiled kernel's parameter sizes (from the driver) against the SPEC: a pointer
/// for every buffer, the scalar's own width for every value.
fn check_param_sizes(kernel: &str, sizes: &[usize], args: &[ArgSpec]) -> Result<(), String> {
    if sizes.len() != args.len() {
        return Err(format!(
            "the compiled {kernel} takes {} parameter(s) but --args describes {}",
            sizes.len(),
            args.len()
        ));
    }
    for (i, (&size, arg)) in sizes.iter().zip(args).enumerate() {
        let want = match arg {
            ArgSpec::Buffer { .. } => 8,
            ArgSpec::Scalar { ty, .. } => ty.bytes() as usize,
        };
        if size != want {
            return Err(format!(
                "parameter {} of the compiled {kernel} is {size} bytes but --args gives {} \
                 ({want} bytes)",
                i + 1,
                arg.text()
            ));
        }
    }
    Ok(())
}

/// The starting bytes of a buffer of `len` elements.
fn init_bytes(ty: ScalarType, init: &Init, len: u64, rng: &mut Rng) -> Vec<u8> {
    let len = len as usize;
    let values: Vec<f64> = match init {
        Init::Iota => (0..len).map(|i| i as f64).collect(),
        Init::Value(v) => vec![*v; len],
        Init::Rand => {
            let mut v = vec![0f32; len];
            let float = ty.is_float();
            let (lo, hi) = if float { (-1.0, 1.0) } else { (0.0, 100.0) };
            rng.fill(&mut v, lo, hi);
            v.into_iter()
                .map(|x| {
                    if float {
                        f64::from(x)
                    } else {
                        f64::from(x).floor()
                    }
                })
                .collect()
        }
    };
    let mut out = Vec::with_capacity(len * ty.bytes() as usize);
    for v in values {
        match ty {
            ScalarType::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
            ScalarType::F64 => out.extend_from_slice(&v.to_le_bytes()),
            ScalarType::I32 => out.extend_from_slice(&(v as i32).to_le_bytes()),
            ScalarType::U32 => out.extend_from_slice(&(v as u32).to_le_bytes()),
            ScalarType::I64 => out.extend_from_slice(&(v as i64).to_le_bytes()),
            ScalarType::U64 => out.extend_from_slice(&(v as u64).to_le_bytes()),
        }
    }
    out
}

/// The values of a buffer's bytes.
fn values(ty: ScalarType, bytes: &[u8]) -> Vec<f64> {
    let w = ty.bytes() as usize;
    bytes
        .chunks_exact(w)
        .map(|c| {
            let mut b8 = [0u8; 8];
            b8[..w].copy_from_slice(c);
            let mut b4 = [0u8; 4];
            b4.copy_from_slice(&b8[..4]);
            match ty {
                ScalarType::F32 => f64::from(f32::from_le_bytes(b4)),
                ScalarType::F64 => f64::from_le_bytes(b8),
                ScalarType::I32 => f64::from(i32::from_le_bytes(b4)),
                ScalarType::U32 => f64::from(u32::from_le_bytes(b4)),
                ScalarType::I64 => i64::from_le_bytes(b8) as f64,
                ScalarType::U64 => u64::from_le_bytes(b8) as f64,
            }
        })
        .collect()
}

/// The tolerance of a comparison between two kernels' outputs: a few roundings for floats (the
/// two may sum in different orders), exact for integers.
fn tolerance(ty: ScalarType) -> f64 {
    match ty {
        ScalarType::F32 => 1e-5,
        ScalarType::F64 => 1e-12,
        _ => 0.0,
    }
}

/// Compares every buffer of the kernel's result with the reference's: the buffer with the worst
/// relative error against its tolerance decides (NaN never passes).
pub(crate) fn compare(
    args: &[ArgSpec],
    got: &[Option<Vec<u8>>],
    want: &[Option<Vec<u8>>],
) -> Check {
    let mut worst: Option<Check> = None;
    for ((arg, g), w) in args.iter().zip(got).zip(want) {
        let (ArgSpec::Buffer { ty, .. }, Some(g), Some(w)) = (arg, g, w) else {
            continue;
        };
        let (g, w) = (values(*ty, g), values(*ty, w));
        let (mut err2, mut ref2) = (0.0, 0.0);
        for (a, b) in g.iter().zip(&w) {
            let d = a - b;
            err2 += if d.is_nan() && a.is_nan() && b.is_nan() {
                0.0
            } else {
                d * d
            };
            ref2 += b * b;
        }
        let check = Check::new(err2, ref2, g.len() as u64, tolerance(*ty));
        let badness = |c: &Check| {
            if c.rel_error.is_nan() {
                f64::INFINITY
            } else {
                c.rel_error / c.tolerance.max(1e-300)
            }
        };
        if worst.as_ref().is_none_or(|w| badness(&check) > badness(w)) {
            worst = Some(check);
        }
    }
    worst.unwrap_or(Check::new(0.0, 0.0, 0, 0.0))
}

impl Lab<'_> {
    /// One point of a user kernel.
    pub(super) fn user_point(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
    ) -> Result<Option<Check>, LiveError> {
        let (Some(user), Some(module)) = (ctx.plan.user.as_deref(), ctx.user) else {
            return Err(LiveError::Plan("no user kernel in the plan".into()));
        };
        let n = ctx.point.size;
        let vars = user.vars(n, ctx.point.block);
        let lens = user.buffer_lens(vars)?;
        let mut start: Vec<Option<Vec<u8>>> = Vec::new();
        for (arg, len) in user.args.iter().zip(&lens) {
            start.push(match (arg, len) {
                (ArgSpec::Buffer { ty, init, .. }, Some(len)) => {
                    Some(init_bytes(*ty, init, *len, &mut self.rng))
                }
                _ => None,
            });
        }
        let mut pristine: Vec<Option<DeviceBuffer>> = Vec::new();
        let mut working: Vec<Option<DeviceBuffer>> = Vec::new();
        let mut args = Vec::new();
        for (i, arg) in user.args.iter().enumerate() {
            match (arg, &start[i]) {
                (ArgSpec::Buffer { .. }, Some(bytes)) => {
                    let p = self.gpu.alloc(bytes.len() as u64)?;
                    self.gpu.upload(&p, bytes)?;
                    let w = self.gpu.alloc(bytes.len() as u64)?;
                    args.push(Arg::Ptr(w.ptr));
                    pristine.push(Some(p));
                    working.push(Some(w));
                }
                (ArgSpec::Scalar { ty, value }, _) => {
                    let bits = scalar_bits(*ty, value, vars).map_err(LiveError::Plan)?;
                    args.push(if ty.bytes() == 4 {
                        Arg::U32(bits as u32)
                    } else {
                        Arg::U64(bits)
                    });
                    pristine.push(None);
                    working.push(None);
                }
                (ArgSpec::Buffer { .. }, None) => {
                    return Err(LiveError::Plan("a buffer without contents".into()));
                }
            }
        }
        let pairs: Vec<(u64, u64, u64)> = pristine
            .iter()
            .zip(&working)
            .filter_map(|(p, w)| Some((w.as_ref()?.ptr, p.as_ref()?.ptr, p.as_ref()?.bytes)))
            .collect();
        let mut restore = |lab: &mut Self| -> Result<(), LiveError> {
            for &(dst, src, bytes) in &pairs {
                lab.gpu.copy_d2d(dst, src, bytes)?;
            }
            Ok(())
        };
        let block = user.block_for(ctx.point.block);
        let grid = user.grid_at(n, block)?;
        let launch = Launch {
            f: module.kernel,
            name: &user.kernel,
            grid,
            block,
            args,
        };
        self.repeat_launch(ctx, result, &launch, &mut restore)?;
        let Some(reference) = module.reference else {
            return Ok(None);
        };
        let got = self.read_back(&working)?;
        restore(self)?;
        self.gpu.launch(reference, grid, block, &launch.args)?;
        self.gpu.sync()?;
        let want = self.read_back(&working)?;
        Ok(Some(compare(&user.args, &got, &want)))
    }

    fn read_back(&self, bufs: &[Option<DeviceBuffer>]) -> Result<Vec<Option<Vec<u8>>>, LiveError> {
        self.gpu.sync()?;
        bufs.iter()
            .map(|b| {
                b.as_ref()
                    .map(|b| {
                        let mut out = vec![0u8; b.bytes as usize];
                        self.gpu.download(&mut out, b).map(|()| out)
                    })
                    .transpose()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user::spec::parse_args;

    #[test]
    fn the_compiled_parameter_sizes_must_match_the_spec() {
        let args = parse_args("f32=2 f32[N]=rand i64=N").unwrap();
        assert_eq!(check_param_sizes("k", &[4, 8, 8], &args), Ok(()));
        assert_eq!(
            check_param_sizes("k", &[8, 8, 8], &args).unwrap_err(),
            "parameter 1 of the compiled k is 8 bytes but --args gives f32=2 (4 bytes)"
        );
        assert_eq!(
            check_param_sizes("k", &[4, 8], &args).unwrap_err(),
            "the compiled k takes 2 parameter(s) but --args describes 3"
        );
    }

    #[test]
    fn buffers_start_as_the_spec_says() {
        let mut rng = Rng::new(7);
        let iota = values(
            ScalarType::I32,
            &init_bytes(ScalarType::I32, &Init::Iota, 4, &mut rng),
        );
        assert_eq!(iota, [0.0, 1.0, 2.0, 3.0]);
        let v = values(
            ScalarType::F64,
            &init_bytes(ScalarType::F64, &Init::Value(1.5), 3, &mut rng),
        );
        assert_eq!(v, [1.5; 3]);
        let r = values(
            ScalarType::F32,
            &init_bytes(ScalarType::F32, &Init::Rand, 1000, &mut rng),
        );
        assert!(r.iter().all(|x| (-1.0..1.0).contains(x)));
        assert!(r.iter().any(|&x| x < -0.5) && r.iter().any(|&x| x > 0.5));
        let r = values(
            ScalarType::U32,
            &init_bytes(ScalarType::U32, &Init::Rand, 1000, &mut rng),
        );
        assert!(
            r.iter()
                .all(|x| x.fract() == 0.0 && (0.0..100.0).contains(x))
        );
    }

    #[test]
    fn two_kernels_outputs_compare_buffer_by_buffer() {
        let args = parse_args("f32=2 f32[N]=rand i32[N]=0 i32=N").unwrap();
        let f = |v: &[f32]| Some(v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
        let i = |v: &[i32]| Some(v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
        let want = vec![None, f(&[1.0, 2.0, 3.0]), i(&[1, 2, 3]), None];
        let same = compare(&args, &want, &want);
        assert!(same.ok && same.rel_error == 0.0 && same.compared == 3);
        // An off-by-one in the integer output fails exactly.
        let wrong = vec![None, f(&[1.0, 2.0, 3.0]), i(&[1, 2, 4]), None];
        let c = compare(&args, &wrong, &want);
        assert!(!c.ok, "{c:?}");
        assert_eq!(c.tolerance, 0.0);
        // A float a rounding away passes; NaN never does.
        let close = vec![None, f(&[1.0, 2.0, 3.000_000_2]), i(&[1, 2, 3]), None];
        assert!(compare(&args, &close, &want).ok);
        let nan = vec![None, f(&[1.0, f32::NAN, 3.0]), i(&[1, 2, 3]), None];
        assert!(!compare(&args, &nan, &want).ok);
    }
}
