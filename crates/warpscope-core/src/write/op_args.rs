//! The recorded inputs of a CPU operator as Kineto writes them in its `args` (`Input Dims`,
//! `Input type`, `Concrete Inputs`) and the FLOPs and bytes a call states (`flops`,
//! `bytes`), so that a saved profile keeps what `docs/flops.md` reads.

use crate::model::{Dims, Dtype, OpArgs};

/// Kineto's `Input type` text of `d` (an empty text for an argument that is not a tensor).
fn kineto_type(d: Dtype) -> &'static str {
    match d {
        Dtype::F64 => "double",
        Dtype::F32 => "float",
        Dtype::F16 => "c10::Half",
        Dtype::Bf16 => "c10::BFloat16",
        Dtype::Fp8 => "c10::Float8_e4m3fn",
        Dtype::I64 => "long int",
        Dtype::I32 => "int",
        Dtype::I16 => "short int",
        Dtype::I8 => "signed char",
        Dtype::U8 => "unsigned char",
        Dtype::Bool => "bool",
        Dtype::C32 => "c10::complex<c10::Half>",
        Dtype::C64 => "c10::complex<float>",
        Dtype::C128 => "c10::complex<double>",
        Dtype::NotTensor => "",
        Dtype::Unknown => "unknown",
    }
}

fn list(values: &[i64]) -> String {
    let items: Vec<String> = values.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// The args members of `a`: (key, JSON value text). Unusable dimensions are written as
/// `null`, which reads back as unusable.
pub(super) fn members(a: &OpArgs) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if !a.inputs.is_empty() {
        let dims: Vec<String> = a
            .inputs
            .iter()
            .map(|i| match &i.dims {
                Dims::Shape(s) => list(s),
                Dims::Invalid => "null".to_string(),
            })
            .collect();
        let types: Vec<String> = a
            .inputs
            .iter()
            .map(|i| format!("\"{}\"", kineto_type(i.dtype)))
            .collect();
        out.push(("Input Dims", format!("[{}]", dims.join(", "))));
        out.push(("Input type", format!("[{}]", types.join(", "))));
        if a.inputs.iter().any(|i| i.ints.is_some()) {
            let concrete: Vec<String> = a
                .inputs
                .iter()
                .map(|i| match i.ints.as_deref() {
                    Some([v]) => format!("\"{v}\""),
                    Some(v) => format!("\"{}\"", list(v)),
                    None => "\"\"".to_string(),
                })
                .collect();
            out.push(("Concrete Inputs", format!("[{}]", concrete.join(", "))));
        }
    }
    if let Some(f) = a.flops {
        out.push(("flops", f.to_string()));
    }
    if let Some(b) = a.bytes {
        out.push(("bytes", b.to_string()));
    }
    out
}
