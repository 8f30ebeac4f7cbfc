//! Interned strings: every event name, category and thread name is stored once per profile and
//! referred to by a 4-byte [`StrId`].

use std::sync::Arc;

use rustc_hash::FxHashMap;

/// Index of an interned string in a [`StringTable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize)]
pub struct StrId(pub u32);

/// A set of unique strings with stable ids. Id 0 is always the empty string.
#[derive(Clone, Debug)]
pub struct StringTable {
    strings: Vec<Arc<str>>,
    ids: FxHashMap<Arc<str>, StrId>,
}

impl Default for StringTable {
    fn default() -> Self {
        let mut table = Self {
            strings: Vec::new(),
            ids: FxHashMap::default(),
        };
        table.intern("");
        table
    }
}

impl StringTable {
    /// Returns the id of `s`, adding it if it is new.
    pub fn intern(&mut self, s: &str) -> StrId {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = StrId(u32::try_from(self.strings.len()).unwrap_or(u32::MAX));
        let shared: Arc<str> = Arc::from(s);
        self.strings.push(Arc::clone(&shared));
        self.ids.insert(shared, id);
        id
    }

    /// Returns the id of `s` if it was interned.
    pub fn find(&self, s: &str) -> Option<StrId> {
        self.ids.get(s).copied()
    }

    /// The text of `id` (the empty string for an unknown id).
    pub fn get(&self, id: StrId) -> &str {
        self.strings.get(id.0 as usize).map_or("", |s| s)
    }

    /// Number of distinct strings, the empty string included.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// True when only the empty string is present.
    pub fn is_empty(&self) -> bool {
        self.strings.len() <= 1
    }

    /// Approximate heap bytes used by the table.
    pub fn heap_bytes(&self) -> usize {
        self.strings.iter().map(|s| s.len() + 16).sum::<usize>() * 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable_and_deduplicated() {
        let mut t = StringTable::default();
        let a = t.intern("aten::mm");
        let b = t.intern("cudaLaunchKernel");
        assert_eq!(t.intern("aten::mm"), a);
        assert_ne!(a, b);
        assert_eq!(t.get(a), "aten::mm");
        assert_eq!(t.get(StrId(0)), "");
        assert_eq!(t.find("cudaLaunchKernel"), Some(b));
        assert_eq!(t.len(), 3);
    }
}
