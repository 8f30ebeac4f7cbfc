//! Storage of the containers of a pickle: the items of all of them in one vector, each
//! container a range of it, so that a million small dicts cost no million allocations.
//!
//! A container is filled where the pickle says (`APPENDS`, `SETITEMS`), in batches of up to a
//! thousand items, and other containers may be filled between two batches of one. A batch for
//! the container whose range ends the vector extends it in place; any other moves that
//! container to a vector of its own ("spilled") once, where later batches go.

/// Marks a spilled container in [`Span::start`].
const SPILLED: u32 = u32::MAX;

/// Where a container's items are: `flat[start..start + len]`, or `spilled[len]`.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u32,
    len: u32,
}

/// Containers of items of type `T`.
#[derive(Debug)]
pub(crate) struct Arena<T> {
    spans: Vec<Span>,
    flat: Vec<T>,
    spilled: Vec<Vec<T>>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Self {
            spans: Vec::new(),
            flat: Vec::new(),
            spilled: Vec::new(),
        }
    }
}

impl<T: Copy> Arena<T> {
    /// A new container holding `items`; `None` past 2^32 containers or items.
    pub(crate) fn push(&mut self, items: impl ExactSizeIterator<Item = T>) -> Option<u32> {
        let id = u32::try_from(self.spans.len()).ok()?;
        let start = u32::try_from(self.flat.len()).ok()?;
        let len = u32::try_from(items.len()).ok()?;
        start.checked_add(len).filter(|&end| end < SPILLED)?;
        self.flat.extend(items);
        self.spans.push(Span { start, len });
        Some(id)
    }

    /// Appends `items` to container `id`; `None` past 2^32 items or for an unknown id.
    pub(crate) fn extend(
        &mut self,
        id: u32,
        items: impl ExactSizeIterator<Item = T>,
    ) -> Option<()> {
        let n = items.len();
        let flat_len = self.flat.len();
        let span = self.spans.get_mut(id as usize)?;
        if span.start == SPILLED {
            self.spilled.get_mut(span.len as usize)?.extend(items);
            return Some(());
        }
        let (start, len) = (span.start as usize, span.len as usize);
        if len == 0 || start + len == flat_len {
            // Empty, or the last range: place or grow it at the end.
            let new_start = if len == 0 { flat_len } else { start };
            let end = u32::try_from(flat_len + n).ok().filter(|&e| e < SPILLED)?;
            span.start = u32::try_from(new_start).ok()?;
            span.len = end - span.start;
            self.flat.extend(items);
            return Some(());
        }
        let mut own = Vec::with_capacity(len + n);
        own.extend_from_slice(self.flat.get(start..start + len)?);
        own.extend(items);
        *span = Span {
            start: SPILLED,
            len: u32::try_from(self.spilled.len()).ok()?,
        };
        self.spilled.push(own);
        Some(())
    }

    /// The items of container `id`.
    pub(crate) fn get(&self, id: u32) -> Option<&[T]> {
        let span = self.spans.get(id as usize)?;
        if span.start == SPILLED {
            return self.spilled.get(span.len as usize).map(Vec::as_slice);
        }
        self.flat
            .get(span.start as usize..span.start as usize + span.len as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_grow_in_place_or_spill_once() {
        let mut a = Arena::<u8>::default();
        let x = a.push([1, 2].into_iter()).unwrap();
        let e = a.push(std::iter::empty()).unwrap();
        a.extend(x, [3].into_iter()).unwrap();
        // `e` is empty: placed at the end.
        a.extend(e, [9].into_iter()).unwrap();
        // `x` no longer ends the vector: spilled.
        a.extend(x, [4].into_iter()).unwrap();
        a.extend(x, [5].into_iter()).unwrap();
        a.extend(e, [8].into_iter()).unwrap();
        assert_eq!(a.get(x), Some(&[1, 2, 3, 4, 5][..]));
        assert_eq!(a.get(e), Some(&[9, 8][..]));
        assert_eq!(a.spilled.len(), 1);
        assert_eq!(a.get(7), None);
    }
}
