//! The recorded inputs of framework operators (Kineto `Input Dims`, `Input type` and, for
//! convolutions, `Concrete Inputs`), stored once per distinct combination: a CPU-operator
//! event's [`super::Events::detail`] is the index of its row in [`OpArgsTable`], so the
//! shapes cost no memory per event beyond the column every event already has.

/// The element type of an operator input, from Kineto's `Input type` text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dtype {
    /// `double`.
    F64,
    /// `float`.
    F32,
    /// `c10::Half`.
    F16,
    /// `c10::BFloat16`.
    Bf16,
    /// `c10::Float8_*` (any of the 8-bit float formats).
    Fp8,
    /// `long int`.
    I64,
    /// `int`.
    I32,
    /// `short int`.
    I16,
    /// `signed char`.
    I8,
    /// `unsigned char`.
    U8,
    /// `bool`.
    Bool,
    /// `c10::complex<c10::Half>`.
    C32,
    /// `c10::complex<float>`.
    C64,
    /// `c10::complex<double>`.
    C128,
    /// Not a tensor: `Scalar`, `ScalarList`, `TensorList`, an empty type, and any other type
    /// recorded without dimensions.
    NotTensor,
    /// A type warpscope does not know, recorded with dimensions (a tensor of unknown element
    /// size).
    Unknown,
}

impl Dtype {
    /// The type of Kineto's `Input type` text `text`, for an input recorded with `has_dims`
    /// (a non-empty `Input Dims` entry): a type name warpscope does not know is a tensor of
    /// unknown type with dimensions, and not a tensor without.
    pub fn from_kineto(text: &str, has_dims: bool) -> Self {
        let t = text.trim();
        match t {
            "double" => Self::F64,
            "float" => Self::F32,
            "c10::Half" => Self::F16,
            "c10::BFloat16" => Self::Bf16,
            "long int" | "long" | "int64_t" => Self::I64,
            "int" => Self::I32,
            "short int" | "short" => Self::I16,
            "signed char" => Self::I8,
            "unsigned char" => Self::U8,
            "bool" => Self::Bool,
            "c10::complex<c10::Half>" => Self::C32,
            "c10::complex<float>" => Self::C64,
            "c10::complex<double>" => Self::C128,
            _ if t.starts_with("c10::Float8_") => Self::Fp8,
            "" | "Scalar" | "ScalarList" | "TensorList" | "GenericList" | "Device" | "Layout"
            | "ScalarType" | "MemoryFormat" | "String" | "None" | "Stream" | "Generator" => {
                Self::NotTensor
            }
            _ if has_dims => Self::Unknown,
            _ => Self::NotTensor,
        }
    }

    /// Bytes per element, for tensor types.
    pub fn size_bytes(self) -> Option<u64> {
        Some(match self {
            Self::F64 | Self::I64 | Self::C64 => 8,
            Self::F32 | Self::I32 | Self::C32 => 4,
            Self::F16 | Self::Bf16 | Self::I16 => 2,
            Self::Fp8 | Self::I8 | Self::U8 | Self::Bool => 1,
            Self::C128 => 16,
            Self::NotTensor | Self::Unknown => return None,
        })
    }

    /// True for a tensor type (known or not).
    pub fn is_tensor(self) -> bool {
        self != Self::NotTensor
    }

    /// Stable name (`float32`, `bfloat16`, ...), as PyTorch spells the dtype.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::F64 => "float64",
            Self::F32 => "float32",
            Self::F16 => "float16",
            Self::Bf16 => "bfloat16",
            Self::Fp8 => "float8",
            Self::I64 => "int64",
            Self::I32 => "int32",
            Self::I16 => "int16",
            Self::I8 => "int8",
            Self::U8 => "uint8",
            Self::Bool => "bool",
            Self::C32 => "complex32",
            Self::C64 => "complex64",
            Self::C128 => "complex128",
            Self::NotTensor => "not_a_tensor",
            Self::Unknown => "unknown",
        }
    }
}

/// The dimensions of one operator input.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dims {
    /// A shape: `[]` for a 0-dimensional tensor or an input that is not a tensor.
    Shape(Box<[i64]>),
    /// Dimensions that cannot be used: a negative or non-integer size, a product of sizes
    /// beyond i64, or a list of shapes (a `TensorList`).
    Invalid,
}

/// One input of an operator call.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpInput {
    /// Its element type.
    pub dtype: Dtype,
    /// Its dimensions.
    pub dims: Dims,
    /// Its value as integers, from `Concrete Inputs` (kept for convolutions only): `[2, 2]`
    /// for `"[2, 2]"`, `[1]` for `"1"` or `"True"`, `[1, 1, 0]` for
    /// `"[True, True, False]"`; `None` when empty or not integers.
    pub ints: Option<Box<[i64]>>,
}

impl OpInput {
    /// The shape of a tensor input with usable dimensions.
    pub fn shape(&self) -> Option<&[i64]> {
        match (&self.dims, self.dtype.is_tensor()) {
            (Dims::Shape(s), true) => Some(s),
            _ => None,
        }
    }

    /// Number of elements of a tensor input (1 for a 0-dimensional tensor).
    pub fn numel(&self) -> Option<i64> {
        self.shape()?
            .iter()
            .try_fold(1i64, |acc, &d| acc.checked_mul(d))
    }

    /// Size in bytes of a tensor input of known element type.
    pub fn size_bytes(&self) -> Option<u64> {
        let n = u64::try_from(self.numel()?).ok()?;
        n.checked_mul(self.dtype.size_bytes()?)
    }
}

/// The recorded inputs of one operator call.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct OpArgs {
    /// One entry per input, in the operator's argument order.
    pub inputs: Box<[OpInput]>,
    /// FLOPs the trace itself states for the call (a `flops` arg: older PyTorch profilers
    /// with `with_flops=True`, and warpscope's own live runs).
    pub flops: Option<u64>,
    /// Bytes the trace itself states for the call (a `bytes` arg, written by warpscope's live
    /// runs).
    pub bytes: Option<u64>,
}

impl OpArgs {
    /// Input `i`, if recorded.
    pub fn input(&self, i: usize) -> Option<&OpInput> {
        self.inputs.get(i)
    }

    /// The tensor inputs, in order.
    pub fn tensors(&self) -> impl Iterator<Item = &OpInput> {
        self.inputs.iter().filter(|i| i.dtype.is_tensor())
    }

    /// True when some input has dimensions that cannot be used ([`Dims::Invalid`]) although it
    /// is not a tensor list.
    pub fn has_invalid_dims(&self) -> bool {
        self.inputs.iter().any(|i| i.dims == Dims::Invalid)
    }

    /// True when some input is a tensor of a type warpscope does not know.
    pub fn has_unknown_dtype(&self) -> bool {
        self.inputs.iter().any(|i| i.dtype == Dtype::Unknown)
    }
}

/// The distinct [`OpArgs`] of a profile; CPU-operator events point into it through
/// [`super::Events::detail`] ([`crate::Profile::op_args`]).
#[derive(Clone, Debug, Default)]
pub struct OpArgsTable {
    /// The rows.
    pub rows: Vec<OpArgs>,
}

impl OpArgsTable {
    /// Row `i`.
    pub fn get(&self, i: usize) -> Option<&OpArgs> {
        self.rows.get(i)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when no operator recorded its inputs.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Approximate heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.rows.capacity() * std::mem::size_of::<OpArgs>()
            + self
                .rows
                .iter()
                .map(|r| {
                    r.inputs.len() * std::mem::size_of::<OpInput>()
                        + r.inputs
                            .iter()
                            .map(|i| {
                                let dims = match &i.dims {
                                    Dims::Shape(s) => s.len(),
                                    Dims::Invalid => 0,
                                };
                                (dims + i.ints.as_ref().map_or(0, |v| v.len())) * 8
                            })
                            .sum::<usize>()
                })
                .sum::<usize>()
    }
}
