//! Your own kernel: a `.cu` file, the name of a `__global__` function in it, and a SPEC of its
//! arguments. Everything that can be checked without a GPU is checked here, before the driver is
//! touched: the file, the kernel's name and parameter count (a textual look; NVRTC has the last
//! word), the SPEC, the launch shape and every size expression at every size, and the host memory
//! the buffers need.

pub mod expr;
pub mod spec;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::catalog::USER_MAX_N;
use crate::error::LiveError;
use expr::{Expr, Vars};
use spec::{ArgSpec, Param};

pub use spec::{Init, ScalarType};

/// The largest single buffer accepted, in bytes (64 GiB).
pub const MAX_BUFFER_BYTES: u64 = 64 << 30;

/// What the user typed (on the command line or in the GUI's form), as text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UserRequest {
    /// The `.cu` file.
    pub source: PathBuf,
    /// The `__global__` function to time.
    pub kernel: String,
    /// The argument SPEC.
    pub args: String,
    /// Grid in blocks (`N/256`, `(N+B-1)/B`, `64,64`); default: enough blocks to cover N.
    pub grid: Option<String>,
    /// Threads per block (`256`, `16x16`); default 256.
    pub block: Option<String>,
    /// `K=V` or `K` macros.
    pub defines: Vec<String>,
    /// Include folders.
    pub includes: Vec<PathBuf>,
    /// Bytes one launch must move, in N; default: every buffer once.
    pub bytes: Option<String>,
    /// Floating-point operations of one launch, in N; default none.
    pub flops: Option<String>,
    /// Another kernel of the same file, run on the same inputs, whose outputs must match.
    pub check_against: Option<String>,
}

/// A user kernel, read and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct UserKernel {
    /// The file.
    pub path: PathBuf,
    /// Its name, as NVRTC's log names it.
    pub file_name: String,
    /// Its text.
    pub source: String,
    /// The kernel.
    pub kernel: String,
    /// Its parameters, as the source declares them.
    pub params: Vec<Param>,
    /// What to pass.
    pub args: Vec<ArgSpec>,
    /// Grid dimensions in blocks (1 to 3), or `None` to cover N.
    pub grid: Option<Vec<Expr>>,
    /// Threads per block.
    pub block: (u32, u32, u32),
    /// `--block` as given (`None`: the default, 256).
    pub block_given: Option<String>,
    /// `-D` options.
    pub defines: Vec<String>,
    /// `-I` folders.
    pub includes: Vec<PathBuf>,
    /// Bytes of one launch.
    pub bytes: Option<Expr>,
    /// FLOPs of one launch.
    pub flops: Option<Expr>,
    /// The reference kernel.
    pub check_against: Option<String>,
}

/// What a user run records about its kernel (kept in the saved run).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UserInfo {
    /// The file it came from.
    pub file: String,
    /// The kernel's name.
    pub kernel: String,
    /// The SPEC, normalised.
    pub args: String,
    /// The reference kernel, if one was given.
    pub check_against: Option<String>,
    /// True when `--flops` was given (rates are then FLOP/s).
    pub has_flops: bool,
    /// NVRTC's log (warnings), if it wrote one.
    pub compile_log: String,
}

fn plan_err(text: impl Into<String>) -> LiveError {
    LiveError::Plan(text.into())
}

/// Largest `--source` file read: a CUDA source is kilobytes, and reading `/dev/zero` or a
/// wrong multi-gigabyte file whole would fill the memory before NVRTC could refuse it.
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// The text of a `.cu` file, or why it cannot be had (a file that is not UTF-8, or one larger
/// than [`MAX_SOURCE_BYTES`], says so).
pub fn read_source(path: &Path) -> Result<String, String> {
    use std::io::Read as _;
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(format!(
            "cannot read {}: it is larger than {} MiB, too large for a CUDA source",
            path.display(),
            MAX_SOURCE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|_| {
        format!(
            "cannot read {}: it is not UTF-8 text (save the source as UTF-8)",
            path.display()
        )
    })
}

/// Parses `256`, `16x16` or `8x8x4`.
pub fn parse_block(text: &str) -> Result<(u32, u32, u32), String> {
    let dims: Vec<&str> = text.split(['x', 'X', ',']).map(str::trim).collect();
    let mut v = [1u32; 3];
    if dims.is_empty() || dims.len() > 3 {
        return Err(format!(
            "cannot read block {text:?}: use 256, 16x16 or 8x8x4"
        ));
    }
    for (slot, d) in v.iter_mut().zip(&dims) {
        *slot = d
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("cannot read block {text:?}: use 256, 16x16 or 8x8x4"))?;
    }
    let threads = u64::from(v[0]) * u64::from(v[1]) * u64::from(v[2]);
    if threads > 1024 || v[2] > 64 {
        return Err(format!(
            "block {text} has {threads} threads; CUDA allows at most 1024 per block (and z ≤ 64)"
        ));
    }
    Ok((v[0], v[1], v[2]))
}

/// Parses `--blocks 32,64,128`: threads per block (1-D), each from 1 to 1024.
pub fn parse_blocks(text: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let n: u32 = item
            .parse()
            .map_err(|_| format!("cannot read block size {item:?} in --blocks {text:?}"))?;
        if !(1..=1024).contains(&n) {
            return Err(format!(
                "block size {n} is out of range: CUDA allows 1 to 1024 threads per block"
            ));
        }
        if !out.contains(&n) {
            out.push(n);
        }
    }
    if out.is_empty() {
        return Err("--blocks is empty: give block sizes like 32,64,128,256,512,1024".into());
    }
    out.sort_unstable();
    Ok(out)
}

/// The folder a source file lies in (`.` for a bare file name): where `#include "x.cuh"` beside
/// it is found.
pub fn source_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

impl UserKernel {
    /// Reads and checks a request: everything but what needs a GPU.
    pub fn from_request(req: &UserRequest) -> Result<Self, LiveError> {
        let path = &req.source;
        let source = read_source(path).map_err(plan_err)?;
        Self::from_source(req, path, source)
    }

    /// Checks a request whose source text is already in hand (the GUI's dropped file).
    pub fn from_source(req: &UserRequest, path: &Path, source: String) -> Result<Self, LiveError> {
        let file_name = path
            .file_name()
            .map_or_else(|| "kernel.cu".into(), |n| n.to_string_lossy().into_owned());
        let kernels = spec::kernels_in(&source);
        let find = |name: &str| -> Result<Vec<Param>, LiveError> {
            let name = name.trim();
            if name.is_empty() {
                return Err(plan_err("name the kernel to run (--kernel NAME)"));
            }
            kernels
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, p)| p.clone())
                .ok_or_else(|| {
                    let found: Vec<_> = kernels.iter().map(|(n, _)| n.as_str()).collect();
                    plan_err(if found.is_empty() {
                        format!(
                            "{} defines no __global__ function, so there is no kernel {name:?} \
                             to run",
                            path.display()
                        )
                    } else {
                        format!(
                            "{} has no __global__ function {name:?}; it has: {}",
                            path.display(),
                            found.join(", ")
                        )
                    })
                })
        };
        let params = find(&req.kernel)?;
        let args = spec::parse_args(&req.args).map_err(plan_err)?;
        spec::match_signature(req.kernel.trim(), &params, &args).map_err(plan_err)?;
        if let Some(other) = &req.check_against {
            let other_params = find(other)?;
            spec::match_signature(other.trim(), &other_params, &args)
                .map_err(|e| plan_err(format!("--check-against {}: {e}", other.trim())))?;
            if other.trim() == req.kernel.trim() {
                return Err(plan_err(
                    "--check-against names the kernel itself: give another kernel of the file",
                ));
            }
        }
        let grid = match &req.grid {
            None => None,
            Some(text) if text.trim().is_empty() => None,
            Some(text) => {
                let dims: Vec<Expr> = text
                    .split(',')
                    .map(|d| Expr::parse(d).map_err(|e| plan_err(format!("--grid: {e}"))))
                    .collect::<Result<_, _>>()?;
                if dims.len() > 3 {
                    return Err(plan_err(format!(
                        "--grid {text:?} has {} dimensions; a grid has 1 to 3",
                        dims.len()
                    )));
                }
                Some(dims)
            }
        };
        let block_given = req
            .block
            .as_ref()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        let block = match &block_given {
            Some(t) => parse_block(t).map_err(plan_err)?,
            None => (256, 1, 1),
        };
        let expr = |what: &str, t: &Option<String>| -> Result<Option<Expr>, LiveError> {
            match t {
                Some(t) if !t.trim().is_empty() => Expr::parse(t)
                    .map(Some)
                    .map_err(|e| plan_err(format!("{what}: {e}"))),
                _ => Ok(None),
            }
        };
        let bytes = expr("--bytes", &req.bytes)?;
        let flops = expr("--flops", &req.flops)?;
        let mut defines = Vec::new();
        for d in &req.defines {
            let name = d.split('=').next().unwrap_or_default().trim();
            let identifier = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !identifier {
                return Err(plan_err(format!(
                    "--define {d:?}: use NAME or NAME=VALUE (a C identifier before the '=')"
                )));
            }
            defines.push(d.trim().to_string());
        }
        for dir in &req.includes {
            if !dir.is_dir() {
                return Err(plan_err(format!(
                    "--include {}: no such folder",
                    dir.display()
                )));
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            file_name,
            source,
            kernel: req.kernel.trim().to_string(),
            params,
            args,
            grid,
            block,
            block_given,
            defines,
            includes: req.includes.clone(),
            bytes,
            flops,
            check_against: req.check_against.as_ref().map(|s| s.trim().to_string()),
        })
    }

    /// What `N` and `B` stand for at size `n` with the point's block (`threads` when sweeping
    /// block sizes): B is the block's threads in x, as in `--grid`.
    pub fn vars(&self, n: u64, threads: Option<u32>) -> Vars {
        Vars {
            n,
            b: u64::from(self.block_for(threads).0),
        }
    }

    /// The block of a point: the kernel's own, or `threads` in x when sweeping block sizes.
    pub fn block_for(&self, threads: Option<u32>) -> (u32, u32, u32) {
        threads.map_or(self.block, |t| (t, 1, 1))
    }

    /// The grid at size `n` with block `block`.
    pub fn grid_at(&self, n: u64, block: (u32, u32, u32)) -> Result<(u32, u32, u32), LiveError> {
        let b = u64::from(block.0);
        let threads = b * u64::from(block.1) * u64::from(block.2);
        let dims = match &self.grid {
            None => vec![n.div_ceil(threads).max(1)],
            Some(exprs) => exprs
                .iter()
                .map(|e| {
                    e.eval_u64(Vars { n, b })
                        .map_err(|m| plan_err(format!("--grid: {m}")))
                })
                .collect::<Result<Vec<_>, _>>()?,
        };
        let limits = [(1u64 << 31) - 1, 65_535, 65_535];
        let mut g = [1u32; 3];
        for (i, &d) in dims.iter().enumerate() {
            if d == 0 || d > limits[i] {
                return Err(plan_err(format!(
                    "the grid's {} dimension is {d} blocks at N = {n}; CUDA allows 1 to {}",
                    ["x", "y", "z"][i],
                    limits[i]
                )));
            }
            g[i] = d as u32;
        }
        Ok((g[0], g[1], g[2]))
    }

    /// Element count of every buffer argument at a point (scalars give `None`).
    pub fn buffer_lens(&self, vars: Vars) -> Result<Vec<Option<u64>>, LiveError> {
        let n = vars.n;
        self.args
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                ArgSpec::Buffer { ty, len, .. } => {
                    let l = len
                        .eval_u64(vars)
                        .map_err(|m| plan_err(format!("argument {}: {m}", i + 1)))?;
                    if l == 0 {
                        return Err(plan_err(format!(
                            "argument {} ({}) has no elements at N = {n}",
                            i + 1,
                            a.text()
                        )));
                    }
                    match l.checked_mul(ty.bytes()) {
                        Some(b) if b <= MAX_BUFFER_BYTES => Ok(Some(l)),
                        _ => Err(plan_err(format!(
                            "argument {} ({}) needs more than {} GiB at N = {n}",
                            i + 1,
                            a.text(),
                            MAX_BUFFER_BYTES >> 30
                        ))),
                    }
                }
                ArgSpec::Scalar { .. } => Ok(None),
            })
            .collect()
    }

    /// Bytes of all buffers at a point.
    pub fn buffer_bytes(&self, vars: Vars) -> Result<u64, LiveError> {
        let lens = self.buffer_lens(vars)?;
        Ok(self
            .args
            .iter()
            .zip(lens)
            .filter_map(|(a, l)| match a {
                ArgSpec::Buffer { ty, .. } => l.map(|l| l * ty.bytes()),
                ArgSpec::Scalar { .. } => None,
            })
            .sum())
    }

    /// Host memory a point needs: each buffer's starting contents, the result read back and
    /// the reference's result.
    pub fn host_bytes(&self, vars: Vars) -> Result<u64, LiveError> {
        Ok(self.buffer_bytes(vars)?.saturating_mul(3))
    }

    /// The work of one launch at a point: `--flops` and `--bytes`, or every buffer once.
    pub fn work(&self, vars: Vars) -> Result<crate::catalog::Work, LiveError> {
        let bytes = match &self.bytes {
            Some(e) => e
                .eval_f64(vars)
                .map_err(|m| plan_err(format!("--bytes: {m}")))?,
            None => self.buffer_bytes(vars)? as f64,
        };
        let flops = match &self.flops {
            Some(e) => e
                .eval_f64(vars)
                .map_err(|m| plan_err(format!("--flops: {m}")))?,
            None => 0.0,
        };
        Ok(crate::catalog::Work { flops, bytes })
    }

    /// Checks every expression at every size and block size before anything runs.
    pub fn validate(&self, sizes: &[u64], blocks: &[u32]) -> Result<(), LiveError> {
        if let (Some(given), false) = (&self.block_given, blocks.is_empty()) {
            return Err(plan_err(format!(
                "--block {given} and --blocks cannot go together: --blocks sweeps 1-D blocks of \
                 that many threads (leave --block out)"
            )));
        }
        let blocks: Vec<Option<u32>> = if blocks.is_empty() {
            vec![None]
        } else {
            blocks.iter().map(|&b| Some(b)).collect()
        };
        for &n in sizes {
            if n == 0 || n > USER_MAX_N {
                return Err(plan_err(format!(
                    "size {n} is out of range: N goes from 1 to 2^40"
                )));
            }
            // B can appear anywhere: check every expression at every block size.
            for &b in &blocks {
                let vars = self.vars(n, b);
                self.buffer_lens(vars)?;
                self.work(vars)?;
                self.grid_at(n, self.block_for(b))?;
                for (i, a) in self.args.iter().enumerate() {
                    if let ArgSpec::Scalar { ty, value } = a {
                        scalar_bits(*ty, value, vars).map_err(|m| {
                            plan_err(format!("argument {} ({}): {m}", i + 1, a.text()))
                        })?;
                    }
                }
            }
        }
        Ok(())
    }

    /// What a saved run keeps about the kernel.
    pub fn info(&self, compile_log: String) -> UserInfo {
        UserInfo {
            file: self.path.display().to_string(),
            kernel: self.kernel.clone(),
            args: self
                .args
                .iter()
                .map(ArgSpec::text)
                .collect::<Vec<_>>()
                .join(" "),
            check_against: self.check_against.clone(),
            has_flops: self.flops.is_some(),
            compile_log,
        }
    }

    /// NVRTC options beyond the architecture: defines, the file's own folder (so `#include
    /// "x.cuh"` beside it works, as with nvcc), then the include folders.
    pub fn compile_options(&self) -> Vec<String> {
        let mut opts: Vec<String> = self.defines.iter().map(|d| format!("-D{d}")).collect();
        let own = source_dir(&self.path);
        opts.push(format!("-I{}", own.display()));
        for dir in &self.includes {
            opts.push(format!("-I{}", dir.display()));
        }
        opts
    }
}

/// A scalar's value at a point, as the bits the launch passes (8 bytes, little end first).
/// Integer scalars are computed exactly in whole numbers (C's integer division) and must fit
/// their type; float scalars in real numbers.
pub(crate) fn scalar_bits(ty: ScalarType, value: &Expr, vars: Vars) -> Result<u64, String> {
    if ty.is_float() {
        let v = value.eval_f64(vars)?;
        spec::check_value(ty, v)?;
        return Ok(match ty {
            ScalarType::F32 => u64::from((v as f32).to_bits()),
            _ => v.to_bits(),
        });
    }
    let v = value.eval_int(vars)?;
    let fits = |ok: bool| -> Result<(), String> {
        if ok {
            Ok(())
        } else {
            Err(format!("{v} does not fit in {}", ty.as_str()))
        }
    };
    Ok(match ty {
        ScalarType::I32 => {
            let x = i32::try_from(v);
            fits(x.is_ok())?;
            u64::from(x.unwrap_or_default().cast_unsigned())
        }
        ScalarType::U32 => {
            let x = u32::try_from(v);
            fits(x.is_ok())?;
            u64::from(x.unwrap_or_default())
        }
        ScalarType::I64 => {
            let x = i64::try_from(v);
            fits(x.is_ok())?;
            x.unwrap_or_default().cast_unsigned()
        }
        _ => {
            let x = u64::try_from(v);
            fits(x.is_ok())?;
            x.unwrap_or_default()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(args: &str) -> UserRequest {
        UserRequest {
            source: PathBuf::from("saxpy.cu"),
            kernel: "saxpy".into(),
            args: args.into(),
            ..Default::default()
        }
    }

    const SRC: &str = "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {}\n\
                       extern \"C\" __global__ void saxpy_ref(float a, const float *x, float *y, int n) {}\n";

    fn kernel(req: &UserRequest) -> Result<UserKernel, LiveError> {
        UserKernel::from_source(req, Path::new("saxpy.cu"), SRC.into())
    }

    #[test]
    fn a_request_becomes_a_checked_kernel() {
        let mut req = request("f32=2.5 f32[N]=rand f32[N]=rand i32=N");
        req.check_against = Some("saxpy_ref".into());
        let k = kernel(&req).unwrap();
        assert_eq!(k.block, (256, 1, 1));
        assert_eq!(k.grid_at(1000, k.block).unwrap(), (4, 1, 1));
        assert_eq!(k.grid_at(1000, k.block_for(Some(128))).unwrap(), (8, 1, 1));
        assert_eq!(
            k.buffer_lens(k.vars(10, None)).unwrap(),
            [None, Some(10), Some(10), None]
        );
        // Every buffer once: x and y, 4 bytes each.
        assert_eq!(k.work(k.vars(1000, None)).unwrap().bytes, 8000.0);
        assert_eq!(
            k.info(String::new()).args,
            "f32=2.5 f32[N]=rand f32[N]=rand i32=N"
        );
        k.validate(&[1, 1_000_000], &[32, 1024]).unwrap();
        // The file's own folder is on the include path, before --include.
        let mut r = req.clone();
        r.includes = vec![PathBuf::from("/usr")];
        let k = UserKernel::from_source(&r, Path::new("/src/k/saxpy.cu"), SRC.into()).unwrap();
        assert_eq!(k.compile_options(), ["-I/src/k", "-I/usr"]);
        assert_eq!(kernel(&req).unwrap().compile_options(), ["-I."]);
    }

    #[test]
    fn every_mistake_is_one_message() {
        let base = "f32=2.5 f32[N]=rand f32[N]=rand i32=N";
        let msg = |req: UserRequest| kernel(&req).unwrap_err().to_string();
        let mut r = request(base);
        r.kernel = "sax".into();
        assert_eq!(
            msg(r),
            "saxpy.cu has no __global__ function \"sax\"; it has: saxpy, saxpy_ref"
        );
        assert!(msg(request("f32=2.5 f32[N]=rand")).contains("takes 4 parameter(s)"));
        let mut r = request(base);
        r.check_against = Some("saxpy".into());
        assert!(msg(r).contains("names the kernel itself"));
        let mut r = request(base);
        r.block = Some("64x32".into());
        assert!(msg(r).contains("2048 threads"));
        let mut r = request(base);
        r.grid = Some("N/".into());
        assert!(msg(r).starts_with("--grid: "));
        for bad in ["=3", "É=2", "2X=1", "A-B"] {
            let mut r = request(base);
            r.defines = vec![bad.into()];
            assert_eq!(
                msg(r),
                format!("--define {bad:?}: use NAME or NAME=VALUE (a C identifier before the '=')")
            );
        }
        let mut r = request(base);
        r.defines = vec!["_OK=É".into(), "X1".into()];
        assert!(kernel(&r).is_ok());
        let mut r = request(base);
        r.block = Some("16x16".into());
        let err = kernel(&r)
            .unwrap()
            .validate(&[1000], &[64, 128])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--block 16x16 and --blocks cannot go together: --blocks sweeps 1-D blocks of that \
             many threads (leave --block out)"
        );
        let mut r = request(base);
        r.includes = vec![PathBuf::from("/no/such/include")];
        assert_eq!(msg(r), "--include /no/such/include: no such folder");
        let err = UserKernel::from_request(&UserRequest {
            source: PathBuf::from("/no/such/file.cu"),
            ..request(base)
        })
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("cannot read /no/such/file.cu: "), "{err}");
        let latin = std::env::temp_dir().join(format!("warpscope-latin-{}.cu", std::process::id()));
        std::fs::write(&latin, b"\xe9\xe8 __global__ void k(int n) {}").unwrap();
        let err = read_source(&latin).unwrap_err();
        std::fs::remove_file(&latin).unwrap();
        assert_eq!(
            err,
            format!(
                "cannot read {}: it is not UTF-8 text (save the source as UTF-8)",
                latin.display()
            )
        );
        // An endless file used to be read until the memory ran out.
        #[cfg(unix)]
        assert_eq!(
            read_source(Path::new("/dev/zero")).unwrap_err(),
            "cannot read /dev/zero: it is larger than 16 MiB, too large for a CUDA source"
        );
    }

    #[test]
    fn sizes_are_checked_at_every_point() {
        let k = kernel(&request("f32=2.5 f32[N*N]=rand f32[N]=rand i32=N")).unwrap();
        let err = k.validate(&[1 << 20], &[]).unwrap_err().to_string();
        assert!(
            err.contains("needs more than 64 GiB at N = 1048576"),
            "{err}"
        );
        let err = k.validate(&[0], &[]).unwrap_err().to_string();
        assert!(err.contains("out of range"), "{err}");
        // i32=N overflows past 2^31.
        let k = kernel(&request("f32=2.5 f32[N/1024]=rand f32[N/1024]=rand i32=N")).unwrap();
        let err = k.validate(&[1 << 32], &[]).unwrap_err().to_string();
        assert!(err.contains("does not fit in i32"), "{err}");
        let k = kernel(&request("f32=2.5 f32[N-10]=rand f32[N]=rand i32=N")).unwrap();
        let err = k.validate(&[5], &[]).unwrap_err().to_string();
        assert!(err.contains("cannot be computed at N = 5"), "{err}");
        let mut r = request("f32=2.5 f32[N]=rand f32[N]=rand i32=N");
        r.grid = Some("N".into());
        let k = kernel(&r).unwrap();
        let err = k.validate(&[1 << 32], &[]).unwrap_err().to_string();
        assert!(err.contains("the grid's x dimension"), "{err}");
    }

    #[test]
    fn blocks_parse() {
        assert_eq!(parse_blocks("256, 32,64,32").unwrap(), [32, 64, 256]);
        assert!(parse_blocks("0").unwrap_err().contains("1 to 1024"));
        assert!(parse_blocks("2048").unwrap_err().contains("1 to 1024"));
        assert!(parse_blocks("a").unwrap_err().contains("cannot read"));
        assert_eq!(parse_block("16x16").unwrap(), (16, 16, 1));
        assert!(parse_block("0").is_err());
    }

    #[test]
    fn scalars_become_launch_bits() {
        let at = |n| Vars { n, b: 256 };
        let bits = |ty, text: &str, n| scalar_bits(ty, &Expr::parse(text).unwrap(), at(n));
        assert_eq!(
            bits(ScalarType::F32, "2.5", 0),
            Ok(u64::from(2.5f32.to_bits()))
        );
        assert_eq!(
            bits(ScalarType::F32, "-2.5", 0),
            Ok(u64::from((-2.5f32).to_bits()))
        );
        assert_eq!(bits(ScalarType::I32, "N", 7), Ok(7));
        // C's integer division, not 333.33.
        assert_eq!(bits(ScalarType::I32, "N/3", 1000), Ok(333));
        assert_eq!(
            bits(ScalarType::I32, "-N", 5),
            Ok(u64::from((-5i32).cast_unsigned()))
        );
        assert_eq!(bits(ScalarType::I32, "B", 1), Ok(256));
        // Exact past 2^53.
        assert_eq!(
            bits(ScalarType::U64, "9007199254740993", 0),
            Ok(9_007_199_254_740_993)
        );
        assert_eq!(
            bits(ScalarType::I64, "N*N*N+1", 1 << 20),
            Ok((1u64 << 60) + 1)
        );
        assert_eq!(
            bits(ScalarType::U32, "2.5", 0).unwrap_err(),
            "2.5 cannot be computed at N = 0, B = 256: it has a fraction (lengths, grids and \
             integers take whole numbers)"
        );
        assert_eq!(
            bits(ScalarType::U32, "-1", 0).unwrap_err(),
            "-1 does not fit in u32"
        );
        assert_eq!(
            bits(ScalarType::F32, "1e39", 0).unwrap_err(),
            "1000000000000000000000000000000000000000 does not fit in f32"
        );
    }

    #[test]
    fn b_is_the_points_block_size_everywhere() {
        let mut r = request("f32=2.5 f32[(N+B-1)/B]=0 f32[N]=rand i32=B");
        r.bytes = Some("N*B".into());
        let k = kernel(&r).unwrap();
        let v = k.vars(1000, Some(128));
        assert_eq!(k.buffer_lens(v).unwrap(), [None, Some(8), Some(1000), None]);
        assert_eq!(k.work(v).unwrap().bytes, 128_000.0);
        assert_eq!(k.work(k.vars(1000, None)).unwrap().bytes, 256_000.0);
        k.validate(&[1000], &[32, 1024]).unwrap();
        // Checked at every block size of the sweep.
        let k = kernel(&request("f32=2.5 f32[N-B]=0 f32[N]=rand i32=N")).unwrap();
        k.validate(&[1000], &[64, 512]).unwrap();
        let err = k.validate(&[1000], &[64, 1024]).unwrap_err().to_string();
        assert_eq!(
            err,
            "argument 2: N-B cannot be computed at N = 1000, B = 1024: it is negative (-24)"
        );
    }
}
