//! FLOPs and bytes of one operator call from its name and recorded inputs: the formulas of
//! PyTorch's `torch.utils.flop_counter` for matrix products, convolutions (forward and
//! backward) and attention, and element counts for elementwise, normalisation, reduction and
//! copy operators (`docs/flops.md`, section 1). Every product is checked: a figure that would
//! overflow u64 is unknown, never wrapped.

use crate::model::{Dtype, OpArgs, OpInput};

/// What kind of work an operator does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// `mm`, `addmm`, `bmm`, `baddbmm`, `matmul`, `linear`, `_scaled_mm`.
    Matmul,
    /// Convolutions, forward and backward.
    Conv,
    /// Scaled-dot-product, flash and memory-efficient attention, forward and backward.
    Attention,
    /// One FLOP per output element (`add`, `mul`, `relu`, `threshold_backward`, ...).
    Elementwise,
    /// Batch, layer, group and RMS norm and softmax: a fixed number of FLOPs per element.
    Norm,
    /// `sum`, `mean`, `amax`, ...: one FLOP per input element.
    Reduction,
    /// `copy_`, `clone`, `fill_`, `zero_`: bytes, no FLOPs.
    Copy,
    /// An operator without a formula whose FLOPs the trace states (a `flops` arg).
    Recorded,
}

impl Family {
    /// Matrix products, convolutions and attention: the work `FlopCounterMode` counts, and
    /// the model FLOPs of MFU.
    pub fn is_model(self) -> bool {
        matches!(self, Self::Matmul | Self::Conv | Self::Attention)
    }

    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Matmul => "matmul",
            Self::Conv => "conv",
            Self::Attention => "attention",
            Self::Elementwise => "elementwise",
            Self::Norm => "norm",
            Self::Reduction => "reduction",
            Self::Copy => "copy",
            Self::Recorded => "recorded",
        }
    }
}

/// FLOPs per element of a normalisation or softmax, forward.
pub const NORM_FORWARD_FLOPS_PER_ELEMENT: u64 = 5;
/// FLOPs per element of a normalisation or softmax, backward.
pub const NORM_BACKWARD_FLOPS_PER_ELEMENT: u64 = 10;

/// The work of one operator call: known when the formula has every input it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    /// Its family.
    pub family: Family,
    /// FLOPs (multiply and add counted as two), `None` when unknown.
    pub flops: Option<u64>,
    /// Bytes read and written: the sizes of the tensor inputs and of the output, `None` when
    /// unknown.
    pub bytes: Option<u64>,
    /// The element type of its first floating-point tensor input.
    pub dtype: Option<Dtype>,
}

/// The family of operator `name` (`aten::mm`), if warpscope has a formula for it.
pub fn family_of(name: &str) -> Option<Family> {
    let op = name.strip_prefix("aten::")?;
    Some(match op {
        "mm" | "addmm" | "bmm" | "baddbmm" | "matmul" | "linear" | "_scaled_mm" => Family::Matmul,
        "conv1d"
        | "conv2d"
        | "conv3d"
        | "conv_transpose1d"
        | "conv_transpose2d"
        | "conv_transpose3d"
        | "convolution"
        | "_convolution"
        | "cudnn_convolution"
        | "cudnn_convolution_transpose"
        | "miopen_convolution"
        | "convolution_backward" => Family::Conv,
        _ if attention_layout(op).is_some() => Family::Attention,
        _ if ELEMENTWISE.contains(&op) => Family::Elementwise,
        _ if NORM_FORWARD.contains(&op) || NORM_BACKWARD.contains(&op) => Family::Norm,
        _ if REDUCTION.contains(&op) => Family::Reduction,
        "copy_" | "clone" | "fill_" | "zero_" => Family::Copy,
        _ => return None,
    })
}

/// Elementwise operators (without `aten::`): one FLOP per output element.
pub const ELEMENTWISE: &[&str] = &[
    "add",
    "add_",
    "sub",
    "sub_",
    "rsub",
    "mul",
    "mul_",
    "div",
    "div_",
    "neg",
    "neg_",
    "abs",
    "exp",
    "exp_",
    "log",
    "sqrt",
    "sqrt_",
    "rsqrt",
    "pow",
    "pow_",
    "reciprocal",
    "relu",
    "relu_",
    "clamp",
    "clamp_",
    "clamp_min",
    "clamp_min_",
    "clamp_max",
    "clamp_max_",
    "threshold",
    "threshold_",
    "threshold_backward",
    "gelu",
    "gelu_",
    "gelu_backward",
    "silu",
    "silu_",
    "silu_backward",
    "sigmoid",
    "sigmoid_",
    "sigmoid_backward",
    "tanh",
    "tanh_",
    "tanh_backward",
    "hardtanh",
    "hardtanh_",
    "hardtanh_backward",
    "leaky_relu",
    "leaky_relu_",
    "where",
    "addcmul",
    "addcmul_",
    "addcdiv",
    "addcdiv_",
    "lerp",
    "lerp_",
    "maximum",
    "minimum",
    "masked_fill",
    "masked_fill_",
];

/// Normalisations and softmax, forward: [`NORM_FORWARD_FLOPS_PER_ELEMENT`] per element of the
/// first input.
pub const NORM_FORWARD: &[&str] = &[
    "batch_norm",
    "native_batch_norm",
    "cudnn_batch_norm",
    "miopen_batch_norm",
    "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training",
    "layer_norm",
    "native_layer_norm",
    "group_norm",
    "native_group_norm",
    "rms_norm",
    "_fused_rms_norm",
    "softmax",
    "_softmax",
    "log_softmax",
    "_log_softmax",
];

/// Normalisations and softmax, backward: [`NORM_BACKWARD_FLOPS_PER_ELEMENT`] per element of
/// the first input (the gradient of the output).
pub const NORM_BACKWARD: &[&str] = &[
    "native_batch_norm_backward",
    "cudnn_batch_norm_backward",
    "miopen_batch_norm_backward",
    "native_layer_norm_backward",
    "native_group_norm_backward",
    "_fused_rms_norm_backward",
    "_softmax_backward_data",
    "_log_softmax_backward_data",
];

/// Reductions: one FLOP per element of the first input.
pub const REDUCTION: &[&str] = &["sum", "mean", "amax", "amin", "norm", "linalg_vector_norm"];

/// The work of a call of `name` with `args`, if warpscope has a formula for the operator or
/// the trace states the call's FLOPs (the formula wins where both exist).
pub fn work(name: &str, args: &OpArgs) -> Option<Work> {
    let Some(family) = family_of(name) else {
        return args.flops.map(|flops| Work {
            family: Family::Recorded,
            flops: Some(flops),
            bytes: args.bytes,
            dtype: None,
        });
    };
    let op = name.strip_prefix("aten::").unwrap_or(name);
    let dtype = args
        .tensors()
        .map(|t| t.dtype)
        .find(|d| {
            matches!(
                d,
                Dtype::F64 | Dtype::F32 | Dtype::F16 | Dtype::Bf16 | Dtype::Fp8
            )
        })
        .or_else(|| args.tensors().map(|t| t.dtype).next());
    // A tensor input of unknown type or unusable dimensions makes the call unknown.
    let usable = !args.has_invalid_dims() && !args.has_unknown_dtype();
    let figures = if usable {
        match family {
            Family::Matmul => matmul(op, args),
            Family::Conv => conv(op, args),
            Family::Attention => attention(op, args),
            Family::Elementwise => elementwise(args),
            Family::Norm => norm(op, args),
            Family::Reduction => reduction(args),
            Family::Copy => copy(op, args),
            Family::Recorded => None,
        }
    } else {
        None
    };
    let (flops, bytes) = match figures {
        Some((f, b)) => (f, b),
        None => (None, None),
    };
    Some(Work {
        family,
        flops,
        bytes,
        dtype,
    })
}

/// (FLOPs, bytes) of a formula; either may be unknown.
type Figures = (Option<u64>, Option<u64>);

fn u(v: i64) -> Option<u64> {
    u64::try_from(v).ok()
}

/// Product of sizes as u64, `None` on overflow.
fn prod(dims: &[i64]) -> Option<u64> {
    dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(u(d)?))
}

/// Product of factors, `None` on overflow.
fn mul_all(factors: &[u64]) -> Option<u64> {
    factors.iter().try_fold(1u64, |acc, &f| acc.checked_mul(f))
}

fn shape(args: &OpArgs, i: usize) -> Option<&[i64]> {
    args.input(i)?.shape()
}

/// Sum of the sizes of the tensor inputs plus `out_elements` of the first tensor's type.
fn bytes_with_output(args: &OpArgs, out_elements: Option<u64>) -> Option<u64> {
    let mut total = 0u64;
    for t in args.tensors() {
        total = total.checked_add(t.size_bytes()?)?;
    }
    if let Some(n) = out_elements {
        let size = args.tensors().next()?.dtype.size_bytes()?;
        total = total.checked_add(n.checked_mul(size)?)?;
    }
    Some(total)
}

/// `[m, k] @ [k, n]` as (m, k, n).
fn mat(a: &[i64], b: &[i64]) -> Option<(u64, u64, u64)> {
    match (a, b) {
        ([m, k], [_, n]) => Some((u(*m)?, u(*k)?, u(*n)?)),
        _ => None,
    }
}

fn matmul(op: &str, args: &OpArgs) -> Option<Figures> {
    let (batch, m, k, n) = match op {
        "mm" | "_scaled_mm" => {
            let (m, k, n) = mat(shape(args, 0)?, shape(args, 1)?)?;
            (1, m, k, n)
        }
        "addmm" => {
            let (m, k, n) = mat(shape(args, 1)?, shape(args, 2)?)?;
            (1, m, k, n)
        }
        "bmm" | "baddbmm" => {
            let at = usize::from(op == "baddbmm");
            match (shape(args, at)?, shape(args, at + 1)?) {
                ([b, m, k], [_, _, n]) => (u(*b)?, u(*m)?, u(*k)?, u(*n)?),
                _ => return None,
            }
        }
        "linear" => {
            let x = shape(args, 0)?;
            let w = shape(args, 1)?;
            let (k, rows) = x.split_last()?;
            let n = match w {
                [n, _] => u(*n)?,
                [_] => 1,
                _ => return None,
            };
            (1, prod(rows)?, u(*k)?, n)
        }
        "matmul" => matmul_general(shape(args, 0)?, shape(args, 1)?)?,
        _ => return None,
    };
    let flops = mul_all(&[2, batch, m, k, n])?;
    let out = mul_all(&[batch, m, n])?;
    Some((Some(flops), bytes_with_output(args, Some(out))))
}

/// `torch.matmul` of shapes `a` and `b`: (batch, m, k, n), a vector taken as one row or
/// column and the batch dimensions broadcast.
fn matmul_general(a: &[i64], b: &[i64]) -> Option<(u64, u64, u64, u64)> {
    let (m, k, a_batch) = match a {
        [] => return None,
        [k] => (1, u(*k)?, &[][..]),
        [rest @ .., m, k] => (u(*m)?, u(*k)?, rest),
    };
    let (n, b_batch) = match b {
        [] => return None,
        [_] => (1, &[][..]),
        [rest @ .., _, n] => (u(*n)?, rest),
    };
    let batch = prod(&broadcast(a_batch, b_batch)?)?;
    Some((batch, m, k, n))
}

/// The broadcast of two shapes, `None` when they do not broadcast.
fn broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let n = a.len().max(b.len());
    let at = |s: &[i64], i: usize| -> i64 {
        let pad = n - s.len();
        if i < pad { 1 } else { s[i - pad] }
    };
    (0..n)
        .map(|i| {
            let (x, y) = (at(a, i), at(b, i));
            match (x, y) {
                _ if x == y => Some(x),
                (1, _) => Some(y),
                (_, 1) => Some(x),
                _ => None,
            }
        })
        .collect()
}

/// Per spatial dimension, the integer list at input `i` (one value stands for all).
fn spatial(args: &OpArgs, i: usize, dims: usize) -> Option<Vec<i64>> {
    let v = args.input(i)?.ints.as_deref()?;
    match v.len() {
        1 => Some(vec![v[0]; dims]),
        n if n == dims => Some(v.to_vec()),
        _ => None,
    }
}

fn int_at(args: &OpArgs, i: usize) -> Option<i64> {
    match args.input(i)?.ints.as_deref()? {
        [v] => Some(*v),
        _ => None,
    }
}

/// Where a convolution's parameters are among its inputs.
struct ConvLayout {
    stride: usize,
    padding: usize,
    dilation: usize,
    /// `Some(i)`: input `i` says whether it is transposed; `None`: not transposed...
    transposed: Option<usize>,
    /// ...unless this says it always is.
    always_transposed: bool,
    output_padding: Option<usize>,
    groups: usize,
}

fn conv_layout(op: &str) -> Option<ConvLayout> {
    let plain = |transposed| ConvLayout {
        stride: 3,
        padding: 4,
        dilation: 5,
        transposed: None,
        always_transposed: transposed,
        output_padding: None,
        groups: 6,
    };
    Some(match op {
        "conv1d" | "conv2d" | "conv3d" => plain(false),
        "conv_transpose1d" | "conv_transpose2d" | "conv_transpose3d" => ConvLayout {
            output_padding: Some(5),
            groups: 6,
            dilation: 7,
            ..plain(true)
        },
        "convolution" | "_convolution" => ConvLayout {
            transposed: Some(6),
            output_padding: Some(7),
            groups: 8,
            ..plain(false)
        },
        "cudnn_convolution" => ConvLayout {
            padding: 2,
            stride: 3,
            dilation: 4,
            groups: 5,
            ..plain(false)
        },
        "cudnn_convolution_transpose" => ConvLayout {
            padding: 2,
            output_padding: Some(3),
            stride: 4,
            dilation: 5,
            groups: 6,
            ..plain(true)
        },
        "miopen_convolution" => ConvLayout {
            padding: 3,
            stride: 4,
            dilation: 5,
            groups: 6,
            ..plain(false)
        },
        _ => return None,
    })
}

/// `flop_counter.conv_flop_count`: batch × the spatial size (of the input when transposed, of
/// the output otherwise) × the filter size × both channel counts of the weight × 2.
fn conv_flop_count(x: &[i64], w: &[i64], out: &[i64], transposed: bool) -> Option<u64> {
    let batch = u(*x.first()?)?;
    let conv_shape = if transposed {
        x.get(2..)?
    } else {
        out.get(2..)?
    };
    let [c_out, c_in, filter @ ..] = w else {
        return None;
    };
    mul_all(&[
        prod(conv_shape)?,
        prod(filter)?,
        batch,
        u(*c_out)?,
        u(*c_in)?,
        2,
    ])
}

fn conv(op: &str, args: &OpArgs) -> Option<Figures> {
    if op == "convolution_backward" {
        return conv_backward(args);
    }
    let layout = conv_layout(op)?;
    let x = shape(args, 0)?;
    let w = shape(args, 1)?;
    let dims = x
        .len()
        .checked_sub(2)
        .filter(|&d| d > 0 && w.len() == d + 2)?;
    let transposed = match layout.transposed {
        Some(i) => int_at(args, i)? != 0,
        None => layout.always_transposed,
    };
    let stride = spatial(args, layout.stride, dims)?;
    let padding = spatial(args, layout.padding, dims)?;
    let dilation = spatial(args, layout.dilation, dims)?;
    let output_padding = match layout.output_padding {
        Some(i) if transposed => spatial(args, i, dims)?,
        _ => vec![0; dims],
    };
    let groups = int_at(args, layout.groups)?;
    let mut out = Vec::with_capacity(dims + 2);
    out.push(x[0]);
    out.push(if transposed {
        w[1].checked_mul(groups)?
    } else {
        w[0]
    });
    for d in 0..dims {
        let (i, k) = (x[d + 2], w[d + 2]);
        let span = dilation[d].checked_mul(k.checked_sub(1)?)?;
        let size = if transposed {
            (i - 1)
                .checked_mul(stride[d])?
                .checked_sub(2i64.checked_mul(padding[d])?)?
                .checked_add(span)?
                .checked_add(output_padding[d])?
                .checked_add(1)?
        } else {
            if stride[d] <= 0 {
                return None;
            }
            i.checked_add(2i64.checked_mul(padding[d])?)?
                .checked_sub(span)?
                .checked_sub(1)?
                .div_euclid(stride[d])
                .checked_add(1)?
        };
        if size < 0 {
            return None;
        }
        out.push(size);
    }
    let flops = conv_flop_count(x, w, &out, transposed)?;
    Some((Some(flops), bytes_with_output(args, Some(prod(&out)?))))
}

/// `flop_counter.conv_backward_flop`: the gradient of the input when the output mask asks
/// for it, plus that of the weight; the bias gradient costs nothing.
fn conv_backward(args: &OpArgs) -> Option<Figures> {
    let grad_out = shape(args, 0)?;
    let x = shape(args, 1)?;
    let w = shape(args, 2)?;
    let transposed = int_at(args, 7)? != 0;
    let mask = args.input(10)?.ints.as_deref()?;
    let wants = |i: usize| mask.get(i).is_some_and(|&v| v != 0);
    let t = |s: &[i64]| -> Option<Vec<i64>> {
        let mut v = s.to_vec();
        if v.len() < 2 {
            return None;
        }
        v.swap(0, 1);
        Some(v)
    };
    let mut flops = 0u64;
    let mut out_elements = 0u64;
    if wants(0) {
        flops = flops.checked_add(conv_flop_count(grad_out, w, x, !transposed)?)?;
        out_elements = out_elements.checked_add(prod(x)?)?;
    }
    if wants(1) {
        let f = if transposed {
            conv_flop_count(&t(grad_out)?, &t(x)?, &t(w)?, false)?
        } else {
            conv_flop_count(&t(x)?, &t(grad_out)?, &t(w)?, false)?
        };
        flops = flops.checked_add(f)?;
        out_elements = out_elements.checked_add(prod(w)?)?;
    }
    if wants(2) {
        out_elements = out_elements.checked_add(u(*grad_out.get(1)?)?)?;
    }
    Some((Some(flops), bytes_with_output(args, Some(out_elements))))
}

/// Where the attention operator `op` has (query, key, value) and whether they are laid out
/// `[batch, heads, seq, dim]` (`false`: `[batch, seq, heads, dim]`); the backward ones have
/// the output's gradient first.
fn attention_layout(op: &str) -> Option<(usize, bool, bool)> {
    // (first of query/key/value, heads before sequence, backward)
    Some(match op {
        "scaled_dot_product_attention"
        | "_scaled_dot_product_flash_attention"
        | "_scaled_dot_product_efficient_attention"
        | "_scaled_dot_product_cudnn_attention" => (0, true, false),
        "_flash_attention_forward" | "_efficient_attention_forward" => (0, false, false),
        "_scaled_dot_product_flash_attention_backward"
        | "_scaled_dot_product_efficient_attention_backward"
        | "_scaled_dot_product_cudnn_attention_backward" => (1, true, true),
        "_flash_attention_backward" | "_efficient_attention_backward" => (1, false, true),
        _ => return None,
    })
}

/// (batch × heads, sequence, dim) of an attention input.
fn bsd(s: &[i64], heads_first: bool) -> Option<(u64, u64, u64)> {
    match s {
        [b, h, sq, d] if heads_first => Some((u(*b)?.checked_mul(u(*h)?)?, u(*sq)?, u(*d)?)),
        [b, sq, h, d] if !heads_first => Some((u(*b)?.checked_mul(u(*h)?)?, u(*sq)?, u(*d)?)),
        // `scaled_dot_product_attention` takes any batch dimensions before (seq, dim).
        [batch @ .., sq, d] if heads_first && batch.len() != 2 => {
            Some((prod(batch)?, u(*sq)?, u(*d)?))
        }
        _ => None,
    }
}

fn attention(op: &str, args: &OpArgs) -> Option<Figures> {
    let (first, heads_first, backward) = attention_layout(op)?;
    let (bh, s_q, d_q) = bsd(shape(args, first)?, heads_first)?;
    let (_, s_k, _) = bsd(shape(args, first + 1)?, heads_first)?;
    let (_, _, d_v) = bsd(shape(args, first + 2)?, heads_first)?;
    let qk = mul_all(&[2, bh, s_q, s_k, d_q])?;
    let sv = mul_all(&[2, bh, s_q, s_k, d_v])?;
    let (flops, out) = if backward {
        // Recompute the scores, then the gradients of the scores, v, q and k.
        let f = qk.checked_mul(3)?.checked_add(sv.checked_mul(2)?)?;
        let grads = [first, first + 1, first + 2]
            .iter()
            .map(|&i| prod(shape(args, i)?))
            .try_fold(0u64, |acc, n| acc.checked_add(n?))?;
        (f, grads)
    } else {
        (qk.checked_add(sv)?, mul_all(&[bh, s_q, d_v])?)
    };
    // Only the query, key, value (and the output's gradient) are read: masks, outputs and
    // statistics passed to the backward are left out of the bytes.
    let mut read = 0u64;
    for i in 0..first + 3 {
        read = read.checked_add(args.input(i)?.size_bytes()?)?;
    }
    let size = args.input(first)?.dtype.size_bytes()?;
    Some((Some(flops), read.checked_add(out.checked_mul(size)?)))
}

/// The broadcast shape of the tensor inputs.
fn broadcast_all(args: &OpArgs) -> Option<Vec<i64>> {
    let mut out: Vec<i64> = Vec::new();
    let mut any = false;
    for t in args.tensors() {
        out = broadcast(&out, t.shape()?)?;
        any = true;
    }
    any.then_some(out)
}

fn elementwise(args: &OpArgs) -> Option<Figures> {
    let n = prod(&broadcast_all(args)?)?;
    Some((Some(n), bytes_with_output(args, Some(n))))
}

fn first_numel(args: &OpArgs) -> Option<u64> {
    u(first_tensor(args)?.numel()?)
}

fn first_tensor(args: &OpArgs) -> Option<&OpInput> {
    args.tensors().next()
}

fn norm(op: &str, args: &OpArgs) -> Option<Figures> {
    let n = first_numel(args)?;
    let per = if NORM_BACKWARD.contains(&op) {
        NORM_BACKWARD_FLOPS_PER_ELEMENT
    } else {
        NORM_FORWARD_FLOPS_PER_ELEMENT
    };
    Some((n.checked_mul(per), bytes_with_output(args, Some(n))))
}

fn reduction(args: &OpArgs) -> Option<Figures> {
    let n = first_numel(args)?;
    Some((Some(n), bytes_with_output(args, None)))
}

fn copy(op: &str, args: &OpArgs) -> Option<Figures> {
    // `clone` writes a new tensor; the others write into their first input, which is already
    // counted among the inputs.
    let out = if op == "clone" {
        Some(first_numel(args)?)
    } else {
        None
    };
    Some((Some(0), bytes_with_output(args, out)))
}

#[cfg(test)]
mod tests;
