//! The formulas on hand-worked shapes (the numbers are worked out in the comments).

use super::*;
use crate::model::Dims;

/// An input: a tensor of `dtype` and `dims`, or a non-tensor with integer value `ints`.
fn t(dtype: Dtype, dims: &[i64]) -> OpInput {
    OpInput {
        dtype,
        dims: Dims::Shape(dims.into()),
        ints: None,
    }
}

fn ints(v: &[i64]) -> OpInput {
    OpInput {
        dtype: Dtype::NotTensor,
        dims: Dims::Shape(Box::new([])),
        ints: Some(v.into()),
    }
}

fn none() -> OpInput {
    OpInput {
        dtype: Dtype::NotTensor,
        dims: Dims::Shape(Box::new([])),
        ints: None,
    }
}

fn args(inputs: Vec<OpInput>) -> OpArgs {
    OpArgs {
        inputs: inputs.into(),
        flops: None,
        bytes: None,
    }
}

const F: Dtype = Dtype::F32;

#[test]
fn matrix_products_count_two_flops_per_multiply_add() {
    // 32×2048 @ 2048×1000: 2·32·2048·1000 = 131 072 000; bytes (32·2048 + 2048·1000 +
    // 1000 + 32·1000)·4.
    let a = args(vec![
        t(F, &[1000]),
        t(F, &[32, 2048]),
        t(F, &[2048, 1000]),
        none(),
        none(),
    ]);
    let w = work("aten::addmm", &a).expect("addmm has a formula");
    assert_eq!(w.family, Family::Matmul);
    assert_eq!(w.flops, Some(131_072_000));
    assert_eq!(
        w.bytes,
        Some((32 * 2048 + 2048 * 1000 + 1000 + 32 * 1000) * 4)
    );
    let mm = args(vec![t(F, &[32, 1000]), t(F, &[1000, 2048])]);
    assert_eq!(
        work("aten::mm", &mm).and_then(|w| w.flops),
        Some(131_072_000)
    );
    // linear: x [4, 8, 16], w [32, 16] → 2·32·16·32.
    let lin = args(vec![t(F, &[4, 8, 16]), t(F, &[32, 16]), t(F, &[32])]);
    assert_eq!(
        work("aten::linear", &lin).and_then(|w| w.flops),
        Some(2 * 32 * 16 * 32)
    );
    // bmm [3, 4, 5] @ [3, 5, 6] → 2·3·4·5·6 = 720; matmul broadcasts [2, 1, 4, 5] @ [3, 5, 6].
    let bmm = args(vec![t(F, &[3, 4, 5]), t(F, &[3, 5, 6])]);
    assert_eq!(work("aten::bmm", &bmm).and_then(|w| w.flops), Some(720));
    let mat = args(vec![t(F, &[2, 1, 4, 5]), t(F, &[3, 5, 6])]);
    assert_eq!(
        work("aten::matmul", &mat).and_then(|w| w.flops),
        Some(2 * 6 * 4 * 5 * 6)
    );
}

#[test]
fn convolution_forward_works_out_the_output_size() {
    // ResNet-50's first layer: [32, 3, 224, 224] * [64, 3, 7, 7], stride 2, padding 3 →
    // [32, 64, 112, 112]; 32·112·112·7·7·64·3·2 = 7 552 892 928.
    let a = args(vec![
        t(F, &[32, 3, 224, 224]),
        t(F, &[64, 3, 7, 7]),
        none(),
        ints(&[2, 2]),
        ints(&[3, 3]),
        ints(&[1, 1]),
        ints(&[1]),
    ]);
    let w = work("aten::conv2d", &a).expect("conv2d has a formula");
    assert_eq!(w.flops, Some(7_552_892_928));
    let out = 32 * 64 * 112 * 112;
    assert_eq!(
        w.bytes,
        Some((32 * 3 * 224 * 224 + 64 * 3 * 7 * 7 + out) * 4)
    );
    // cudnn_convolution has padding before stride.
    let c = args(vec![
        t(F, &[32, 3, 224, 224]),
        t(F, &[64, 3, 7, 7]),
        ints(&[3, 3]),
        ints(&[2, 2]),
        ints(&[1, 1]),
        ints(&[1]),
    ]);
    assert_eq!(
        work("aten::cudnn_convolution", &c).and_then(|w| w.flops),
        Some(7_552_892_928)
    );
    // Without `Concrete Inputs` (older traces) the output size is unknown.
    let bare = args(vec![t(F, &[32, 3, 224, 224]), t(F, &[64, 3, 7, 7]), none()]);
    let w = work("aten::conv2d", &bare).expect("still a convolution");
    assert_eq!((w.flops, w.bytes), (None, None));
}

#[test]
fn convolution_backward_follows_the_output_mask() {
    // grad_out [32, 2048, 7, 7], input [32, 512, 7, 7], weight [2048, 512, 1, 1]: each
    // gradient is 32·7·7·2048·512·2 = 3 288 334 336.
    let each = 32 * 7 * 7 * 2048 * 512 * 2u64;
    let make = |mask: &[i64]| {
        args(vec![
            t(F, &[32, 2048, 7, 7]),
            t(F, &[32, 512, 7, 7]),
            t(F, &[2048, 512, 1, 1]),
            ints(&[0]),
            ints(&[1, 1]),
            ints(&[0, 0]),
            ints(&[1, 1]),
            ints(&[0]),
            ints(&[0, 0]),
            ints(&[1]),
            ints(mask),
        ])
    };
    let both = work("aten::convolution_backward", &make(&[1, 1, 0])).expect("formula");
    assert_eq!(both.flops, Some(2 * each));
    // The first layer's input needs no gradient: only the weight's.
    let weight_only = work("aten::convolution_backward", &make(&[0, 1, 0])).expect("formula");
    assert_eq!(weight_only.flops, Some(each));
}

#[test]
fn attention_forward_and_backward() {
    // q, k, v [2, 8, 128, 64]: forward 2·16·128·128·64 · 2 = 67 108 864; backward 2.5× that.
    let q = t(Dtype::Bf16, &[2, 8, 128, 64]);
    let fwd = args(vec![q.clone(), q.clone(), q.clone()]);
    let f = work("aten::_scaled_dot_product_flash_attention", &fwd).expect("formula");
    assert_eq!(f.family, Family::Attention);
    assert_eq!(f.flops, Some(67_108_864));
    let bwd = args(vec![q.clone(), q.clone(), q.clone(), q]);
    let b = work("aten::_scaled_dot_product_flash_attention_backward", &bwd).expect("formula");
    assert_eq!(b.flops, Some(67_108_864 / 2 * 5));
    // _flash_attention_forward lays out [batch, seq, heads, dim].
    let q2 = t(Dtype::Bf16, &[2, 128, 8, 64]);
    let fa = args(vec![q2.clone(), q2.clone(), q2]);
    assert_eq!(
        work("aten::_flash_attention_forward", &fa).and_then(|w| w.flops),
        Some(67_108_864)
    );
}

#[test]
fn elementwise_norm_and_copies_count_elements() {
    // add of [32, 1, 4] and [8, 1]: broadcast [32, 8, 4], 1024 elements.
    let add = args(vec![t(F, &[32, 1, 4]), t(F, &[8, 1]), none()]);
    let w = work("aten::add", &add).expect("formula");
    assert_eq!(w.flops, Some(1024));
    assert_eq!(w.bytes, Some((128 + 8 + 1024) * 4));
    let bn = args(vec![t(Dtype::Bf16, &[4, 8]), t(F, &[8])]);
    assert_eq!(
        work("aten::native_batch_norm", &bn).and_then(|w| w.flops),
        Some(32 * NORM_FORWARD_FLOPS_PER_ELEMENT)
    );
    let cp = args(vec![t(Dtype::Bf16, &[10]), t(F, &[10]), none()]);
    let c = work("aten::copy_", &cp).expect("formula");
    assert_eq!((c.flops, c.bytes), (Some(0), Some(20 + 40)));
    assert!(work("aten::max_pool2d", &cp).is_none());
    assert!(work("ConvolutionBackward0", &cp).is_none());
}

#[test]
fn overflowing_or_unusable_shapes_are_unknown() {
    let huge = 1i64 << 40;
    let mm = args(vec![t(F, &[huge, huge]), t(F, &[huge, 2])]);
    let w = work("aten::mm", &mm).expect("mm");
    assert_eq!(w.flops, None);
    let bad = args(vec![
        OpInput {
            dtype: F,
            dims: Dims::Invalid,
            ints: None,
        },
        t(F, &[2, 2]),
    ]);
    assert_eq!(work("aten::mm", &bad).and_then(|w| w.flops), None);
    let unknown = args(vec![t(Dtype::Unknown, &[2, 2]), t(F, &[2, 2])]);
    assert_eq!(work("aten::mm", &unknown).and_then(|w| w.flops), None);
    // Shapes that do not multiply or broadcast.
    let wrong = args(vec![t(F, &[2, 3, 4]), t(F, &[4])]);
    assert_eq!(work("aten::mm", &wrong).and_then(|w| w.flops), None);
    let clash = args(vec![t(F, &[3]), t(F, &[4])]);
    assert_eq!(work("aten::mul", &clash).and_then(|w| w.flops), None);
}
