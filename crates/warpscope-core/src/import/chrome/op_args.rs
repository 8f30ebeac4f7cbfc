//! The recorded inputs of a Kineto operator (`Input Dims`, `Input type`, and for convolutions
//! `Concrete Inputs`), found in its args by key and read into an [`OpArgs`] once per distinct
//! text: most calls of a training step repeat the shapes of the step before.

use std::sync::LazyLock;

use memchr::memmem::Finder;

use crate::import::json::{self, Parser, Value};
use crate::model::{Dims, Dtype, OpArgs, OpInput};

static DIMS_KEY: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"Input Dims\""));
static TYPE_KEY: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"Input type\""));
static CONCRETE_KEY: LazyLock<Finder<'static>> =
    LazyLock::new(|| Finder::new(b"\"Concrete Inputs\""));
static FLOPS_KEY: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"flops\""));
static BYTES_KEY: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"bytes\""));

/// The raw array texts of an operator's recorded inputs, borrowed from its args.
pub(super) struct RawOpArgs<'a> {
    dims: &'a [u8],
    types: &'a [u8],
    concrete: &'a [u8],
    flops: &'a [u8],
    bytes: &'a [u8],
}

/// The value after `key` in `args`, if there is one.
fn value_after<'a>(args: &'a [u8], key: &Finder<'_>) -> Option<Value<'a>> {
    let at = key.find(args)? + key.needle().len();
    let mut p = Parser::new(&args[at..]);
    if !p.eat(b':') {
        return None;
    }
    p.value().ok()
}

/// The array after `key` in `args`, if there is one, found by its brackets alone (it is
/// parsed only the first time its text is seen).
fn array_after<'a>(args: &'a [u8], key: &Finder<'_>) -> Option<&'a [u8]> {
    let at = key.find(args)? + key.needle().len();
    let skip = |s: &'a [u8]| -> Option<&'a [u8]> {
        let first = s.iter().position(|b| !b.is_ascii_whitespace())?;
        Some(&s[first..])
    };
    let rest = skip(&args[at..])?;
    let rest = skip(rest.strip_prefix(b":")?)?;
    if rest.first() != Some(&b'[') {
        return None;
    }
    let end = json::container_end(rest)?;
    Some(&rest[..end])
}

/// The number after `key` in `args`, as its text.
fn number_after<'a>(args: &'a [u8], key: &Finder<'_>) -> Option<&'a [u8]> {
    match value_after(args, key)? {
        Value::Num(text) => Some(text),
        _ => None,
    }
}

/// The recorded inputs in `args`, when it has `Input Dims` or states its `flops`;
/// `Concrete Inputs` is kept only when `keep_concrete` (convolutions, whose stride, padding
/// and output mask are there).
pub(super) fn find(args: &[u8], keep_concrete: bool) -> Option<RawOpArgs<'_>> {
    let dims = array_after(args, &DIMS_KEY);
    // A stated `flops` counts only for operators without a formula (`docs/flops.md`), whose
    // shapes nothing reads: it is looked for only where there are none.
    let flops = if dims.is_some() {
        None
    } else {
        number_after(args, &FLOPS_KEY)
    };
    if dims.is_none() && flops.is_none() {
        return None;
    }
    let types = array_after(args, &TYPE_KEY).unwrap_or(b"[]");
    let concrete = if keep_concrete {
        array_after(args, &CONCRETE_KEY).unwrap_or(b"[]")
    } else {
        b"[]"
    };
    let bytes = if flops.is_some() {
        number_after(args, &BYTES_KEY).unwrap_or(b"")
    } else {
        b""
    };
    Some(RawOpArgs {
        dims: dims.unwrap_or(b"[]"),
        types,
        concrete,
        flops: flops.unwrap_or(b""),
        bytes,
    })
}

/// True for operators whose `Concrete Inputs` are kept: convolutions (`aten::conv2d`,
/// `aten::convolution_backward`, `aten::cudnn_convolution`).
pub(super) fn keeps_concrete(name: &str) -> bool {
    // A plain scan: operator names are short, and `str::contains` sets up a searcher per call.
    name.as_bytes().windows(4).any(|w| w == b"conv")
}

impl RawOpArgs<'_> {
    /// Writes into `k` (emptied first) the key the inputs are interned by: each text after
    /// its length (4 bytes, little-endian), read back by [`read_key`].
    pub(super) fn key_into(&self, k: &mut Vec<u8>) {
        k.clear();
        for part in [self.dims, self.types, self.concrete, self.flops, self.bytes] {
            // Args of more than 4 GiB cannot be: an event is at most `MAX_EVENT_BYTES`.
            let len = u32::try_from(part.len()).unwrap_or(u32::MAX);
            k.extend_from_slice(&len.to_le_bytes());
            k.extend_from_slice(part);
        }
    }

    /// The inputs, read.
    pub(super) fn parse(&self) -> OpArgs {
        let dims = elements(self.dims);
        let types = elements(self.types);
        let concrete = elements(self.concrete);
        let n = dims.len().max(types.len());
        let inputs = (0..n)
            .map(|i| {
                let d = dims
                    .get(i)
                    .map_or_else(|| Dims::Shape(Box::new([])), read_dims);
                let has_dims = matches!(&d, Dims::Shape(s) if !s.is_empty()) || d == Dims::Invalid;
                let dtype = match types.get(i) {
                    Some(Value::Str(s)) => Dtype::from_kineto(s, has_dims),
                    _ if has_dims => Dtype::Unknown,
                    _ => Dtype::NotTensor,
                };
                // A list of shapes (a tensor list) has no one shape.
                let d = if dtype == Dtype::NotTensor && d == Dims::Invalid {
                    Dims::Shape(Box::new([]))
                } else {
                    d
                };
                OpInput {
                    dtype,
                    dims: d,
                    ints: concrete.get(i).and_then(read_ints),
                }
            })
            .collect();
        let count = |text: &[u8]| json::int_from_text(text).and_then(|v| u64::try_from(v).ok());
        OpArgs {
            inputs,
            flops: count(self.flops),
            bytes: count(self.bytes),
        }
    }
}

/// The inputs whose key [`RawOpArgs::key_into`] wrote (no inputs for a key it did not).
pub(super) fn read_key(key: &[u8]) -> OpArgs {
    let mut parts = [&b""[..]; 5];
    let mut rest = key;
    for part in &mut parts {
        let Some((len, tail)) = rest.split_first_chunk::<4>() else {
            return OpArgs::default();
        };
        let len = usize::try_from(u32::from_le_bytes(*len)).unwrap_or(usize::MAX);
        let Some((text, tail)) = tail.split_at_checked(len) else {
            return OpArgs::default();
        };
        *part = text;
        rest = tail;
    }
    let [dims, types, concrete, flops, bytes] = parts;
    RawOpArgs {
        dims,
        types,
        concrete,
        flops,
        bytes,
    }
    .parse()
}

/// The elements of a JSON array text (what was read up to a syntax error).
fn elements(text: &[u8]) -> Vec<Value<'_>> {
    let mut out = Vec::new();
    let mut p = Parser::new(text);
    let _ = p.array(|p| {
        out.push(p.value()?);
        Ok(())
    });
    out
}

/// One `Input Dims` entry: a list of sizes, each an integer of 0 or more, whose product fits
/// in i64; anything else (a negative or fractional size, a nested list, an overflowing
/// product, not a list) is [`Dims::Invalid`].
fn read_dims(v: &Value<'_>) -> Dims {
    let Value::Array(text) = v else {
        return Dims::Invalid;
    };
    let mut sizes = Vec::new();
    let mut ok = true;
    let mut p = Parser::new(text);
    let parsed = p.array(|p| {
        match p.value()? {
            Value::Num(n) => match json::int_from_text(n) {
                Some(d) if d >= 0 => sizes.push(d),
                _ => ok = false,
            },
            _ => ok = false,
        }
        Ok(())
    });
    let fits = sizes
        .iter()
        .try_fold(1i64, |acc, &d| acc.checked_mul(d))
        .is_some();
    if parsed.is_ok() && ok && fits {
        Dims::Shape(sizes.into_boxed_slice())
    } else {
        Dims::Invalid
    }
}

/// One `Concrete Inputs` entry as integers: `"[2, 2]"`, `"1"`, `"True"`,
/// `"[True, False]"`; `None` for anything else.
fn read_ints(v: &Value<'_>) -> Option<Box<[i64]>> {
    let Value::Str(s) = v else { return None };
    let t = s.trim();
    let word = |w: &str| -> Option<i64> {
        match w.trim() {
            "True" | "true" => Some(1),
            "False" | "false" => Some(0),
            other => other.parse().ok(),
        }
    };
    if let Some(inner) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        if inner.trim().is_empty() {
            return Some(Box::new([]));
        }
        inner
            .split(',')
            .map(word)
            .collect::<Option<Vec<_>>>()
            .map(Vec::into_boxed_slice)
    } else if t.is_empty() {
        None
    } else {
        word(t).map(|v| Box::new([v]) as Box<[i64]>)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_dims_types_and_concrete_inputs() {
        let args = br#"{"External id": 8, "Concrete Inputs": ["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "1"], "Input type": ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar"], "Input Strides": [[150528, 50176, 224, 1], [147, 49, 7, 1], [], [], [], [], []], "Input Dims": [[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []], "Ev Idx": 4885}"#;
        let raw = find(args, true).expect("has dims");
        let a = raw.parse();
        let mut key = Vec::new();
        raw.key_into(&mut key);
        assert_eq!(read_key(&key), a, "the key reads back as the args");
        assert_eq!(read_key(&key[..key.len() - 1]), OpArgs::default());
        assert_eq!(a.inputs.len(), 7);
        assert_eq!(a.inputs[0].dtype, Dtype::F32);
        assert_eq!(a.inputs[0].shape(), Some(&[32, 3, 224, 224][..]));
        assert_eq!(a.inputs[2].dtype, Dtype::NotTensor);
        assert_eq!(a.inputs[3].ints.as_deref(), Some(&[2, 2][..]));
        assert_eq!(a.inputs[6].ints.as_deref(), Some(&[1][..]));
        assert_eq!(a.inputs[1].size_bytes(), Some(64 * 3 * 7 * 7 * 4));
    }

    #[test]
    fn bad_dims_are_invalid_never_a_panic() {
        let args = br#"{"Input type": ["float", "float", "c10::Weird", "TensorList"], "Input Dims": [[-1, 4], [9223372036854775807, 2], [3], [[1, 2], [3]]]}"#;
        let a = find(args, false).expect("has dims").parse();
        assert_eq!(a.inputs[0].dims, Dims::Invalid);
        assert_eq!(a.inputs[1].dims, Dims::Invalid);
        assert_eq!(a.inputs[2].dtype, Dtype::Unknown);
        assert_eq!(a.inputs[3].dtype, Dtype::NotTensor);
        assert!(a.has_invalid_dims());
        assert!(a.has_unknown_dtype());
        assert_eq!(a.inputs[2].size_bytes(), None);
    }

    #[test]
    fn boolean_lists_read_as_integers() {
        assert_eq!(
            read_ints(&Value::Str("[True, True, False]".into())).as_deref(),
            Some(&[1, 1, 0][..])
        );
        assert_eq!(read_ints(&Value::Str("0.5".into())), None);
        assert!(find(br#"{"Input type": ["float"]}"#, false).is_none());
        // A call that states its FLOPs (older PyTorch, warpscope's live runs).
        let a = find(br#"{"flops": 2147483648, "bytes": 12582912}"#, false)
            .expect("states its FLOPs")
            .parse();
        assert_eq!((a.flops, a.bytes), (Some(2_147_483_648), Some(12_582_912)));
        assert!(a.inputs.is_empty());
    }
}
