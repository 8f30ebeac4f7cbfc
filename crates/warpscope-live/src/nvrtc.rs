//! NVRTC compilation with name expressions: a kernel is found by the name the user wrote, whether
//! it is `extern "C"` or a C++ function whose symbol is mangled, and the compiler's log comes back
//! whole (errors and warnings, with the file's own name and line numbers).

use std::ffi::{CStr, CString};

use cudarc::nvrtc::{result, sys};

use crate::error::LiveError;

/// A compiled program.
pub(crate) struct Compiled {
    /// PTX text, NUL-terminated.
    pub(crate) ptx: CString,
    /// The symbol of each name asked for, in order (`None`: NVRTC found no such function).
    pub(crate) lowered: Vec<Option<String>>,
    /// The compiler's log (warnings), empty when it wrote none.
    pub(crate) log: String,
}

fn text(chars: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).trim_end().to_string()
}

/// Compiles `source` (named `file` in the log) for `arch` with `options`, asking for the symbols
/// of `names`.
pub(crate) fn compile(
    source: &str,
    file: &str,
    arch: &str,
    options: &[String],
    names: &[&str],
) -> Result<Compiled, LiveError> {
    let fail = |log: String| LiveError::Compile {
        file: file.to_string(),
        arch: arch.to_string(),
        log,
    };
    let src = CString::new(source).map_err(|_| fail("the source holds a NUL byte".into()))?;
    let cname = CString::new(file).map_err(|_| fail("the file name holds a NUL byte".into()))?;
    let prog = result::create_program(&src, Some(&cname))
        .map_err(|e| fail(format!("nvrtcCreateProgram failed: {e:?}")))?;
    let out = compile_program(prog, arch, options, names, &fail);
    // SAFETY: `prog` was created above and is destroyed once, after its last use.
    let _ = unsafe { result::destroy_program(prog) };
    out
}

fn compile_program(
    prog: sys::nvrtcProgram,
    arch: &str,
    options: &[String],
    names: &[&str],
    fail: &dyn Fn(String) -> LiveError,
) -> Result<Compiled, LiveError> {
    let exprs: Vec<CString> = names
        .iter()
        .map(|n| CString::new(format!("&{n}")))
        .collect::<Result<_, _>>()
        .map_err(|_| fail("a kernel name holds a NUL byte".into()))?;
    for e in &exprs {
        // SAFETY: `prog` is live; `e` is NUL-terminated and outlives the compilation (NVRTC
        // copies it).
        unsafe { sys::nvrtcAddNameExpression(prog, e.as_ptr()) }
            .result()
            .map_err(|err| fail(format!("nvrtcAddNameExpression failed: {err:?}")))?;
    }
    let mut opts = vec![format!("--gpu-architecture={arch}")];
    opts.extend(options.iter().cloned());
    // SAFETY: `prog` is live.
    let compiled = unsafe { result::compile_program(prog, &opts) };
    // SAFETY: `prog` is live; the log exists after a compilation, failed or not.
    let log = unsafe { result::get_program_log(prog) }
        .map(|l| text(&l))
        .unwrap_or_default();
    if compiled.is_err() {
        return Err(fail(if log.is_empty() {
            format!("{compiled:?}")
        } else {
            log
        }));
    }
    let mut lowered = Vec::new();
    for e in &exprs {
        let mut name: *const std::ffi::c_char = std::ptr::null();
        // SAFETY: `prog` compiled with this name expression added; NVRTC owns the returned
        // string until the program is destroyed, and it is copied out at once.
        let found = unsafe { sys::nvrtcGetLoweredName(prog, e.as_ptr(), &raw mut name) }.result();
        lowered.push(match found {
            Ok(()) if !name.is_null() => {
                // SAFETY: NVRTC returned a NUL-terminated string it keeps alive (see above).
                Some(
                    unsafe { CStr::from_ptr(name) }
                        .to_string_lossy()
                        .into_owned(),
                )
            }
            _ => None,
        });
    }
    // SAFETY: `prog` compiled successfully.
    let ptx =
        unsafe { result::get_ptx(prog) }.map_err(|e| fail(format!("nvrtcGetPTX failed: {e:?}")))?;
    let ptx = CString::new(text(&ptx).into_bytes())
        .map_err(|_| fail("NVRTC returned PTX with a NUL byte".into()))?;
    Ok(Compiled { ptx, lowered, log })
}
