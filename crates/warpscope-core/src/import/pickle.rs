//! A reader of plain-data Python pickles (protocols 0 to 5, as `pickle.dumps` writes them for
//! dicts, lists, tuples, sets, strings, bytes, numbers, booleans and `None`): what
//! `torch.cuda.memory._dump_snapshot` writes.
//!
//! It runs the pickle machine without running Python: every opcode that would name or call
//! Python code (`GLOBAL`, `STACK_GLOBAL`, `REDUCE`, `BUILD`, `INST`, `OBJ`, `NEWOBJ`,
//! `NEWOBJ_EX`, `PERSID`, `BINPERSID`, `EXT1/2/4`) is refused with an error naming it and its
//! byte offset.
//!
//! Values live in arenas ([`Pickle`]) and refer to each other by index, so a memo reference
//! (`BINGET`) is the same object, not a copy, as in Python: the quarter of a million references
//! to shared stack-frame lists of a snapshot cost nothing, and a reader can tell that two
//! places hold the same list (equal [`Value`]s). Like Python's, the graph may be cyclic (a list
//! appended to itself); whoever walks it must bound the depth.
//!
//! Hostile input is an error, never a panic or a huge allocation: lengths are checked against
//! the bytes left before anything is allocated, memo indices are checked, integers are bounded
//! ([`MAX_LONG_BYTES`]), and so is the nesting of `MARK`s ([`MAX_MARK_DEPTH`]).
//!
//! Where it is more lenient than Python: dict keys may be any value (lists included), a key
//! stored twice is kept twice ([`Pickle::get`] finds the last, which is the one Python keeps),
//! bytes after `STOP` are ignored (and counted), invalid UTF-8 in strings is replaced
//! (and counted). Protocol 0 text strings (`STRING`, `UNICODE`) and out-of-band buffers
//! (`NEXT_BUFFER`) are not read.

/// The most nested `MARK`s a pickle may have open at once.
pub const MAX_MARK_DEPTH: usize = 1024;

/// The largest integer read, in bytes of its two's-complement form (`LONG4` can say up to
/// 4 GiB).
pub const MAX_LONG_BYTES: usize = 1024;

/// The longest line of a protocol 0 text opcode (`INT`, `LONG`, `FLOAT`, `GET`, `PUT`).
pub(crate) const MAX_TEXT_LINE: usize = 64;

/// One value of a pickle. Scalars are held inline; strings, bytes, big integers and containers
/// are indices into the arenas of their [`Pickle`], so equal indices are the same object.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// `None`.
    None,
    /// `True` or `False`.
    Bool(bool),
    /// An integer that fits an `i64`.
    Int(i64),
    /// A larger integer: index into the big-integer arena ([`Pickle::bigint_le`]).
    BigInt(u32),
    /// A float.
    Float(f64),
    /// A `str`: index into the string arena ([`Pickle::str`]).
    Str(u32),
    /// A `bytes` or `bytearray`: index into the bytes arena ([`Pickle::bytes`]).
    Bytes(u32),
    /// A list: index into the sequence arena ([`Pickle::items`]).
    List(u32),
    /// A tuple: index into the sequence arena.
    Tuple(u32),
    /// A set: index into the sequence arena.
    Set(u32),
    /// A frozenset: index into the sequence arena.
    FrozenSet(u32),
    /// A dict: index into the dict arena ([`Pickle::dict`]).
    Dict(u32),
}

impl Value {
    /// Python's name of the value's type (`dict`, `list`, `str`, ...).
    pub fn type_name(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::Bool(_) => "bool",
            Self::Int(_) | Self::BigInt(_) => "int",
            Self::Float(_) => "float",
            Self::Str(_) => "str",
            Self::Bytes(_) => "bytes",
            Self::List(_) => "list",
            Self::Tuple(_) => "tuple",
            Self::Set(_) => "set",
            Self::FrozenSet(_) => "frozenset",
            Self::Dict(_) => "dict",
        }
    }
}

/// A pickle read into memory: the root value and the arenas its values point into.
#[derive(Debug)]
pub struct Pickle {
    pub(crate) root: Packed,
    pub(crate) protocol: u8,
    pub(crate) strs: Vec<Box<str>>,
    pub(crate) bytes: Vec<Box<[u8]>>,
    pub(crate) bigints: Vec<Box<[u8]>>,
    pub(crate) wide_ints: Vec<i64>,
    pub(crate) floats: Vec<f64>,
    pub(crate) seqs: Arena<Packed>,
    pub(crate) dicts: Arena<(Packed, Packed)>,
    pub(crate) lossy_strings: u64,
    pub(crate) trailing_bytes: u64,
}

impl Default for Pickle {
    fn default() -> Self {
        Self {
            root: Packed::NONE,
            protocol: 0,
            strs: Vec::new(),
            bytes: Vec::new(),
            bigints: Vec::new(),
            wide_ints: Vec::new(),
            floats: Vec::new(),
            seqs: Arena::default(),
            dicts: Arena::default(),
            lossy_strings: 0,
            trailing_bytes: 0,
        }
    }
}

impl Pickle {
    /// The value the pickle stores (what `pickle.loads` returns).
    pub fn root(&self) -> Value {
        self.value(self.root)
    }

    /// The highest protocol the pickle declared (`PROTO`), 0 if none.
    pub fn protocol(&self) -> u8 {
        self.protocol
    }

    /// Strings whose invalid UTF-8 was replaced with U+FFFD.
    pub fn lossy_strings(&self) -> u64 {
        self.lossy_strings
    }

    /// Bytes after the `STOP` opcode (ignored, as Python does).
    pub fn trailing_bytes(&self) -> u64 {
        self.trailing_bytes
    }

    /// The text of a `str` value.
    pub fn str(&self, v: Value) -> Option<&str> {
        match v {
            Value::Str(i) => self.strs.get(i as usize).map(|s| &**s),
            _ => None,
        }
    }

    /// The content of a `bytes` value.
    pub fn bytes(&self, v: Value) -> Option<&[u8]> {
        match v {
            Value::Bytes(i) => self.bytes.get(i as usize).map(|b| &**b),
            _ => None,
        }
    }

    /// The little-endian two's-complement bytes of a big integer.
    pub fn bigint_le(&self, v: Value) -> Option<&[u8]> {
        match v {
            Value::BigInt(i) => self.bigints.get(i as usize).map(|b| &**b),
            _ => None,
        }
    }

    /// An integer value as `i64` (not `bool`, not floats).
    pub fn int(&self, v: Value) -> Option<i64> {
        match v {
            Value::Int(i) => Some(i),
            _ => None,
        }
    }

    /// A non-negative integer value as `u64`, big integers up to 2^64 - 1 included.
    pub fn u64(&self, v: Value) -> Option<u64> {
        match v {
            Value::Int(i) => u64::try_from(i).ok(),
            Value::BigInt(_) => {
                let b = self.bigint_le(v)?;
                let (low, high) = b.split_at(b.len().min(8));
                if high.iter().any(|&x| x != 0) {
                    return None;
                }
                let mut le = [0u8; 8];
                le[..low.len()].copy_from_slice(low);
                Some(u64::from_le_bytes(le))
            }
            _ => None,
        }
    }

    /// The items of a list, tuple, set or frozenset.
    pub fn items(&self, v: Value) -> Option<Items<'_>> {
        let raw = match v {
            Value::List(i) | Value::Tuple(i) | Value::Set(i) | Value::FrozenSet(i) => {
                self.seqs.get(i)?
            }
            _ => return None,
        };
        Some(Items {
            pk: self,
            raw: raw.iter(),
        })
    }

    /// The (key, value) pairs of a dict, in insertion order.
    pub fn dict(&self, v: Value) -> Option<Pairs<'_>> {
        let Value::Dict(i) = v else { return None };
        Some(Pairs {
            pk: self,
            raw: self.dicts.get(i)?.iter(),
        })
    }

    /// The value of the `str` key `key` in a dict (the last one if the pickle stored it twice,
    /// as Python keeps the last).
    pub fn get(&self, dict: Value, key: &str) -> Option<Value> {
        self.dict(dict)?
            .rev()
            .find(|&(k, _)| self.str(k) == Some(key))
            .map(|(_, v)| v)
    }

    /// The decimal text of an integer value, big or not.
    pub fn int_text(&self, v: Value) -> Option<String> {
        match v {
            Value::Int(i) => Some(i.to_string()),
            Value::BigInt(_) => self.bigint_le(v).map(bigint_decimal),
            _ => None,
        }
    }
}

/// Decimal text of a little-endian two's-complement integer.
fn bigint_decimal(le: &[u8]) -> String {
    let negative = le.last().is_some_and(|&b| b & 0x80 != 0);
    // Magnitude, little-endian.
    let mut mag: Vec<u8> = le.to_vec();
    if negative {
        let mut carry = true;
        for b in &mut mag {
            *b = !*b;
            if carry {
                let (s, c) = b.overflowing_add(1);
                *b = s;
                carry = c;
            }
        }
    }
    // Repeated division by 10^9, most significant byte first.
    let mut digits: Vec<u32> = Vec::new();
    let mut be: Vec<u8> = mag.into_iter().rev().skip_while(|&b| b == 0).collect();
    while !be.is_empty() {
        let mut rem: u64 = 0;
        let mut next = Vec::with_capacity(be.len());
        for &b in &be {
            let cur = (rem << 8) | u64::from(b);
            let q = cur / 1_000_000_000;
            rem = cur % 1_000_000_000;
            if !(next.is_empty() && q == 0) {
                next.push(u8::try_from(q).unwrap_or(u8::MAX));
            }
        }
        digits.push(u32::try_from(rem).unwrap_or(0));
        be = next;
    }
    let mut s = String::from(if negative { "-" } else { "" });
    match digits.split_last() {
        None => s.push('0'),
        Some((top, rest)) => {
            s.push_str(&top.to_string());
            for d in rest.iter().rev() {
                s.push_str(&format!("{d:09}"));
            }
        }
    }
    s
}

/// Why a pickle could not be read, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("byte {offset}: {kind}")]
pub struct PickleError {
    /// Offset of the opcode at fault (the end of the input for [`PickleErrorKind::NoStop`]).
    pub offset: u64,
    /// What is wrong.
    pub kind: PickleErrorKind,
}

/// What is wrong with a pickle.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PickleErrorKind {
    /// The input ends inside an opcode's argument (a file cut short).
    #[error("the pickle ends inside {opcode} (the file is cut short)")]
    Truncated {
        /// The opcode.
        opcode: &'static str,
    },
    /// The input ends before the `STOP` opcode (a file cut short).
    #[error("the pickle ends before its STOP opcode (the file is cut short)")]
    NoStop,
    /// An opcode that would name or call Python code.
    #[error(
        "opcode {opcode} ({code:#04x}) would {what}; warpscope reads only plain-data pickles \
         (dicts, lists, strings, numbers)"
    )]
    Refused {
        /// The opcode's name.
        opcode: &'static str,
        /// Its byte.
        code: u8,
        /// What Python would do.
        what: &'static str,
    },
    /// A valid opcode that this reader does not read.
    #[error("opcode {opcode} ({code:#04x}) is not read by warpscope ({why})")]
    Unsupported {
        /// The opcode's name.
        opcode: &'static str,
        /// Its byte.
        code: u8,
        /// Why.
        why: &'static str,
    },
    /// A byte that is no pickle opcode.
    #[error("unknown opcode {0:#04x}")]
    UnknownOpcode(u8),
    /// A `PROTO` above 5.
    #[error("unsupported pickle protocol {0}")]
    Protocol(u8),
    /// An opcode found the stack empty.
    #[error("{opcode} needs a value on the stack, but the stack is empty")]
    StackUnderflow {
        /// The opcode.
        opcode: &'static str,
    },
    /// An opcode that works on the items since the last `MARK` found none.
    #[error("{opcode} needs a MARK, but there is none")]
    NoMark {
        /// The opcode.
        opcode: &'static str,
    },
    /// Too many nested `MARK`s.
    #[error("more than {MAX_MARK_DEPTH} nested MARKs")]
    TooDeep,
    /// A memo read of an index never stored.
    #[error("{opcode} reads memo entry {index}, which was never stored")]
    MemoMissing {
        /// The opcode.
        opcode: &'static str,
        /// The index.
        index: u64,
    },
    /// An integer larger than [`MAX_LONG_BYTES`].
    #[error(
        "{opcode}: an integer of {bytes} bytes is larger than warpscope reads ({MAX_LONG_BYTES})"
    )]
    IntTooLarge {
        /// The opcode.
        opcode: &'static str,
        /// Its size in bytes (or digits for the text forms).
        bytes: u64,
    },
    /// An opcode applied to a value of the wrong type (`APPEND` to a dict).
    #[error("{opcode} on a {found}; it needs a {expected}")]
    WrongType {
        /// The opcode.
        opcode: &'static str,
        /// The type found.
        found: &'static str,
        /// The type needed.
        expected: &'static str,
    },
    /// A malformed argument (bad text of `INT`, an odd number of `SETITEMS` items, a
    /// negative length).
    #[error("{opcode}: {what}")]
    BadArgument {
        /// The opcode.
        opcode: &'static str,
        /// What is wrong.
        what: String,
    },
    /// More values than the arenas can index (over 4 billion).
    #[error("more than 2^32 values of one kind")]
    TooManyValues,
}

/// Reads a pickle held whole in memory.
///
/// # Errors
/// [`PickleError`] for a cut, malformed or hostile pickle, and for one that names Python code.
pub fn parse(data: &[u8]) -> Result<Pickle, PickleError> {
    machine::run(data)
}

/// The little-endian two's-complement bytes of a decimal integer (ASCII digits, at most
/// [`MAX_TEXT_LINE`] of them).
pub(crate) fn decimal_le(digits: &str, negative: bool) -> Vec<u8> {
    let mut le: Vec<u8> = Vec::new();
    for d in digits.bytes() {
        let mut carry = u32::from(d - b'0');
        for b in &mut le {
            let v = u32::from(*b) * 10 + carry;
            *b = (v & 0xff) as u8;
            carry = v >> 8;
        }
        while carry > 0 {
            le.push((carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    // Room for the sign bit.
    le.push(0);
    if negative {
        let mut carry = true;
        for b in &mut le {
            *b = !*b;
            if carry {
                let (s, c) = b.overflowing_add(1);
                *b = s;
                carry = c;
            }
        }
    }
    le
}

/// The name `pickletools` gives an opcode byte.
pub fn opcode_name(code: u8) -> &'static str {
    match code {
        b'(' => "MARK",
        b'.' => "STOP",
        b'0' => "POP",
        b'1' => "POP_MARK",
        b'2' => "DUP",
        b'F' => "FLOAT",
        b'I' => "INT",
        b'J' => "BININT",
        b'K' => "BININT1",
        b'L' => "LONG",
        b'M' => "BININT2",
        b'N' => "NONE",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        b'R' => "REDUCE",
        b'S' => "STRING",
        b'T' => "BINSTRING",
        b'U' => "SHORT_BINSTRING",
        b'V' => "UNICODE",
        b'X' => "BINUNICODE",
        b'a' => "APPEND",
        b'b' => "BUILD",
        b'c' => "GLOBAL",
        b'd' => "DICT",
        b'}' => "EMPTY_DICT",
        b'e' => "APPENDS",
        b'g' => "GET",
        b'h' => "BINGET",
        b'i' => "INST",
        b'j' => "LONG_BINGET",
        b'l' => "LIST",
        b']' => "EMPTY_LIST",
        b'o' => "OBJ",
        b'p' => "PUT",
        b'q' => "BINPUT",
        b'r' => "LONG_BINPUT",
        b's' => "SETITEM",
        b't' => "TUPLE",
        b')' => "EMPTY_TUPLE",
        b'u' => "SETITEMS",
        b'G' => "BINFLOAT",
        b'B' => "BINBYTES",
        b'C' => "SHORT_BINBYTES",
        0x80 => "PROTO",
        0x81 => "NEWOBJ",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        0x85 => "TUPLE1",
        0x86 => "TUPLE2",
        0x87 => "TUPLE3",
        0x88 => "NEWTRUE",
        0x89 => "NEWFALSE",
        0x8a => "LONG1",
        0x8b => "LONG4",
        0x8c => "SHORT_BINUNICODE",
        0x8d => "BINUNICODE8",
        0x8e => "BINBYTES8",
        0x8f => "EMPTY_SET",
        0x90 => "ADDITEMS",
        0x91 => "FROZENSET",
        0x92 => "NEWOBJ_EX",
        0x93 => "STACK_GLOBAL",
        0x94 => "MEMOIZE",
        0x95 => "FRAME",
        0x96 => "BYTEARRAY8",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => "an unknown opcode",
    }
}

/// `repr`-like text of a float as Python writes it (`0.0`, `1e-05`, `1.5e+16`, `inf`, `nan`).
pub fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    // Shortest round-trip digits and exponent, from Rust's `{:e}` (`1.2345e-5`).
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exp) {
        // Fixed notation with at least one digit after the point.
        let point = exp + 1; // digits before the point
        let s = if point <= 0 {
            format!("0.{}{}", "0".repeat(point.unsigned_abs() as usize), digits)
        } else {
            let point = point as usize;
            if digits.len() > point {
                format!("{}.{}", &digits[..point], &digits[point..])
            } else {
                format!("{}{}.0", digits, "0".repeat(point - digits.len()))
            }
        };
        format!("{sign}{s}")
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{first}{frac}e{esign}{:02}", exp.unsigned_abs())
    }
}

mod arena;
mod machine;
mod packed;

use arena::Arena;
use packed::Packed;
pub use packed::{Items, Pairs};

#[cfg(test)]
mod tests;
