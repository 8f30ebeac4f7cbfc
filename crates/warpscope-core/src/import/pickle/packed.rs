//! Values as the arenas store them: 8 bytes each ([`Packed`]), half of a [`Value`], since a
//! snapshot of a million trace entries holds eight million dict items. The low 4 bits are the
//! kind, the rest an integer of up to 60 bits inline or an index into an arena; floats and
//! integers that do not fit 60 bits live in arenas of their own.

use super::{Pickle, Value};

pub(crate) const T_NONE: u8 = 0;
pub(crate) const T_BOOL: u8 = 1;
pub(crate) const T_INT: u8 = 2;
pub(crate) const T_WIDE: u8 = 3;
pub(crate) const T_BIG: u8 = 4;
pub(crate) const T_FLOAT: u8 = 5;
pub(crate) const T_STR: u8 = 6;
pub(crate) const T_BYTES: u8 = 7;
pub(crate) const T_LIST: u8 = 8;
pub(crate) const T_TUPLE: u8 = 9;
pub(crate) const T_SET: u8 = 10;
pub(crate) const T_FROZENSET: u8 = 11;
pub(crate) const T_DICT: u8 = 12;

/// Integers held inline: 60-bit two's complement.
const INLINE_MIN: i64 = -(1 << 59);
const INLINE_MAX: i64 = (1 << 59) - 1;

/// A value in 8 bytes: kind in the low 4 bits, payload above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Packed(u64);

impl Packed {
    pub(crate) const NONE: Packed = Packed(T_NONE as u64);

    /// A value of kind `tag` whose payload is an arena index.
    pub(crate) fn at(tag: u8, index: u32) -> Packed {
        Packed((u64::from(index) << 4) | u64::from(tag))
    }

    pub(crate) fn bool(b: bool) -> Packed {
        Packed((u64::from(b) << 4) | u64::from(T_BOOL))
    }

    /// An integer held inline, if it fits 60 bits.
    pub(crate) fn small_int(i: i64) -> Option<Packed> {
        (INLINE_MIN..=INLINE_MAX)
            .contains(&i)
            .then(|| Packed(((i as u64) << 4) | u64::from(T_INT)))
    }

    #[inline]
    pub(crate) fn tag(self) -> u8 {
        (self.0 & 0xf) as u8
    }

    /// The arena index of a value that has one.
    #[inline]
    pub(crate) fn index(self) -> u32 {
        (self.0 >> 4) as u32
    }

    fn inline_int(self) -> i64 {
        // An arithmetic shift brings the sign back.
        (self.0 as i64) >> 4
    }
}

impl Pickle {
    /// The public form of a stored value.
    #[inline]
    pub(crate) fn value(&self, p: Packed) -> Value {
        let i = p.index();
        match p.tag() {
            T_BOOL => Value::Bool(i != 0),
            T_INT => Value::Int(p.inline_int()),
            T_WIDE => Value::Int(self.wide_ints.get(i as usize).copied().unwrap_or(0)),
            T_BIG => Value::BigInt(i),
            T_FLOAT => Value::Float(self.floats.get(i as usize).copied().unwrap_or(0.0)),
            T_STR => Value::Str(i),
            T_BYTES => Value::Bytes(i),
            T_LIST => Value::List(i),
            T_TUPLE => Value::Tuple(i),
            T_SET => Value::Set(i),
            T_FROZENSET => Value::FrozenSet(i),
            T_DICT => Value::Dict(i),
            _ => Value::None,
        }
    }
}

impl Pickle {
    /// The stored (key, value) pairs of a dict, for readers that look at most keys only.
    #[inline]
    pub(crate) fn dict_raw(&self, v: Value) -> Option<&[(Packed, Packed)]> {
        let Value::Dict(i) = v else { return None };
        self.dicts.get(i)
    }

    /// A stored non-negative integer as `u64` ([`Pickle::u64`]).
    #[inline]
    pub(crate) fn u64_of(&self, p: Packed) -> Option<u64> {
        if p.tag() == T_INT {
            return u64::try_from(p.inline_int()).ok();
        }
        self.u64(self.value(p))
    }

    /// A stored integer as `i64` ([`Pickle::int`]).
    #[inline]
    pub(crate) fn i64_of(&self, p: Packed) -> Option<i64> {
        if p.tag() == T_INT {
            return Some(p.inline_int());
        }
        self.int(self.value(p))
    }

    /// The arena index of a stored string.
    #[inline]
    pub(crate) fn str_index(p: Packed) -> Option<u32> {
        (p.tag() == T_STR).then(|| p.index())
    }
}

/// The items of a list, tuple, set or frozenset ([`Pickle::items`]).
#[derive(Clone, Debug)]
pub struct Items<'a> {
    pub(crate) pk: &'a Pickle,
    pub(crate) raw: std::slice::Iter<'a, Packed>,
}

impl Iterator for Items<'_> {
    type Item = Value;

    #[inline]
    fn next(&mut self) -> Option<Value> {
        self.raw.next().map(|&p| self.pk.value(p))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.raw.size_hint()
    }
}

impl DoubleEndedIterator for Items<'_> {
    fn next_back(&mut self) -> Option<Value> {
        self.raw.next_back().map(|&p| self.pk.value(p))
    }
}

impl ExactSizeIterator for Items<'_> {}

/// The (key, value) pairs of a dict, in insertion order ([`Pickle::dict`]).
#[derive(Clone, Debug)]
pub struct Pairs<'a> {
    pub(crate) pk: &'a Pickle,
    pub(crate) raw: std::slice::Iter<'a, (Packed, Packed)>,
}

impl Iterator for Pairs<'_> {
    type Item = (Value, Value);

    #[inline]
    fn next(&mut self) -> Option<(Value, Value)> {
        self.raw
            .next()
            .map(|&(k, v)| (self.pk.value(k), self.pk.value(v)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.raw.size_hint()
    }
}

impl DoubleEndedIterator for Pairs<'_> {
    fn next_back(&mut self) -> Option<(Value, Value)> {
        self.raw
            .next_back()
            .map(|&(k, v)| (self.pk.value(k), self.pk.value(v)))
    }
}

impl ExactSizeIterator for Pairs<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_pack_inline_up_to_60_bits() {
        let pk = Pickle::default();
        for i in [0, 1, -1, INLINE_MIN, INLINE_MAX, 139_929_262_751_744] {
            assert_eq!(pk.value(Packed::small_int(i).unwrap()), Value::Int(i));
        }
        assert_eq!(Packed::small_int(INLINE_MAX + 1), None);
        assert_eq!(Packed::small_int(INLINE_MIN - 1), None);
        assert_eq!(pk.value(Packed::bool(true)), Value::Bool(true));
        assert_eq!(pk.value(Packed::NONE), Value::None);
        assert_eq!(
            pk.value(Packed::at(T_DICT, u32::MAX)),
            Value::Dict(u32::MAX)
        );
    }
}
