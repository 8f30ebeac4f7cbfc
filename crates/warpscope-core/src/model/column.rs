//! A column of optional values for the side tables, free while no row has a value.

/// One optional value per row of a table that keeps its row count itself.
///
/// Nothing is stored while every row is `None`, so a field a format never fills costs nothing.
/// While every row that has a value has the same one (the process of every call in a
/// single-process export, say), that value is stored once. From the first differing value on,
/// the column holds one value per row (rows without a value hold a copy of a present one). A
/// column with values also keeps one bit per row saying which rows have one.
#[derive(Clone, Debug)]
pub(crate) struct OptColumn<T> {
    /// One value per row, once two different values were pushed; empty before.
    values: Vec<T>,
    /// Which rows have a value.
    present: Vec<u64>,
    /// The value every present row has, while `values` is empty.
    same: Option<T>,
}

impl<T> Default for OptColumn<T> {
    fn default() -> Self {
        Self {
            values: Vec::new(),
            present: Vec::new(),
            same: None,
        }
    }
}

impl<T: Copy + PartialEq> OptColumn<T> {
    /// Sets row `row`, the table's row count before this push: rows are pushed in order.
    pub(crate) fn push(&mut self, row: usize, value: Option<T>) {
        debug_assert!(self.values.is_empty() || self.values.len() == row);
        let Some(v) = value else {
            if let Some(&filler) = self.values.first() {
                self.values.push(filler);
            }
            return;
        };
        if self.values.is_empty() {
            match self.same {
                None => self.same = Some(v),
                Some(same) if same == v => {}
                Some(same) => {
                    // The first differing value: every row gets its own from here on.
                    self.values.reserve(row + 1);
                    self.values.resize(row, same);
                    self.values.push(v);
                    self.same = None;
                }
            }
        } else {
            self.values.push(v);
        }
        self.mark_present(row / 64, 1 << (row % 64));
    }

    /// Sets `bits` in word `word` of the presence bits, growing them to it.
    fn mark_present(&mut self, word: usize, bits: u64) {
        if self.present.len() <= word {
            self.present.resize(word + 1, 0);
        }
        self.present[word] |= bits;
    }

    /// The value of row `row`, if it has one.
    pub(crate) fn get(&self, row: usize) -> Option<T> {
        let word = *self.present.get(row / 64)?;
        if (word >> (row % 64)) & 1 == 1 {
            self.same.or_else(|| self.values.get(row).copied())
        } else {
            None
        }
    }

    /// Whether some row has a value.
    pub(crate) fn has_values(&self) -> bool {
        self.same.is_some() || !self.values.is_empty()
    }

    /// Appends `other_rows` rows of `other` after this column's `rows` rows. Appended to a
    /// column of no rows, `other` is taken as it is (no copy).
    pub(crate) fn append(&mut self, rows: usize, other: OptColumn<T>, other_rows: usize) {
        if rows == 0 {
            *self = other;
            return;
        }
        if !self.has_values() && !other.has_values() {
            return;
        }
        if self.values.is_empty() {
            for row in 0..other_rows {
                self.push(rows + row, other.get(row));
            }
            return;
        }
        // A column with a value per row already: what `push` would do row by row, at once
        // (which row of `values` an absent row copies does not matter: `get` never reads it).
        debug_assert_eq!(self.values.len(), rows);
        if other.values.len() == other_rows {
            self.values.extend_from_slice(&other.values);
        } else {
            let filler = other.same.unwrap_or(self.values[0]);
            self.values.resize(rows + other_rows, filler);
        }
        let (base, shift) = (rows / 64, rows % 64);
        for (w, &word) in other.present.iter().enumerate() {
            if word == 0 {
                continue;
            }
            self.mark_present(base + w, word << shift);
            // The bits shifted past the word, when the rows do not start on a word.
            if shift != 0 && word >> (64 - shift) != 0 {
                self.mark_present(base + w + 1, word >> (64 - shift));
            }
        }
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.values.capacity() * std::mem::size_of::<T>() + self.present.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::OptColumn;

    fn column(values: &[Option<u64>]) -> OptColumn<u64> {
        let mut c = OptColumn::default();
        for (row, &v) in values.iter().enumerate() {
            c.push(row, v);
        }
        c
    }

    #[test]
    fn an_empty_column_stores_nothing() {
        let c = column(&[None; 1000]);
        assert!(!c.has_values());
        assert_eq!(c.heap_bytes(), 0);
        assert_eq!(c.get(999), None);
    }

    #[test]
    fn values_come_back_where_they_were_put() {
        let rows: Vec<Option<u64>> = (0..200u64)
            .map(|i| (i % 3 == 1 || i == 130).then_some(i * 7))
            .collect();
        let c = column(&rows);
        for (row, &want) in rows.iter().enumerate() {
            assert_eq!(c.get(row), want, "row {row}");
        }
        assert_eq!(c.get(200), None);
    }

    #[test]
    fn a_column_of_one_value_stores_it_once_until_another_comes() {
        let mut rows: Vec<Option<u64>> = (0..1000u64).map(|i| (i % 5 != 0).then_some(7)).collect();
        let c = column(&rows);
        assert!(c.has_values());
        assert!(c.heap_bytes() <= 16 * 8, "{} bytes", c.heap_bytes());
        for (row, &want) in rows.iter().enumerate() {
            assert_eq!(c.get(row), want, "row {row}");
        }
        // A second value late in the column: every row keeps what it had.
        rows.push(Some(8));
        rows.push(None);
        rows.push(Some(7));
        let c = column(&rows);
        for (row, &want) in rows.iter().enumerate() {
            assert_eq!(c.get(row), want, "row {row}");
        }
    }

    #[test]
    fn append_keeps_both_halves() {
        let a_rows = [None, None, Some(5)];
        let b_rows = [Some(1), None, Some(u64::MAX)];
        let same = [Some(5), None, Some(5)];
        for (first, second) in [
            (&a_rows[..], &b_rows[..]),
            (&a_rows[..], &same[..]),
            (&same[..], &b_rows[..]),
            (&same[..], &same[..]),
            (&[None, None][..], &b_rows[..]),
            (&a_rows[..], &[None, None][..]),
            (&[None][..], &[None][..]),
        ] {
            let mut a = column(first);
            let b = column(second);
            a.append(first.len(), b, second.len());
            let all: Vec<Option<u64>> = first.iter().chain(second).copied().collect();
            for (row, &want) in all.iter().enumerate() {
                assert_eq!(a.get(row), want, "row {row} of {first:?} + {second:?}");
            }
        }
    }

    #[test]
    fn append_gives_what_pushing_row_by_row_gives() {
        // Columns of every kind (empty, one value, a value per row), of lengths around the
        // 64-row words, appended at every kind of offset.
        let kinds = |n: usize, seed: u64| -> Vec<Vec<Option<u64>>> {
            vec![
                vec![None; n],
                (0..n).map(|i| (i % 3 != 0).then_some(7)).collect(),
                (0..n as u64)
                    .map(|i| (!(i * seed).is_multiple_of(5)).then_some(i * seed % 11))
                    .collect(),
            ]
        };
        for (a_len, b_len) in [(1, 1), (63, 70), (64, 64), (100, 3), (130, 200)] {
            for a in kinds(a_len, 7) {
                for b in kinds(b_len, 13) {
                    let mut joined = column(&a);
                    joined.append(a.len(), column(&b), b.len());
                    let all: Vec<Option<u64>> = a.iter().chain(&b).copied().collect();
                    let expected = column(&all);
                    for (row, &value) in all.iter().enumerate() {
                        assert_eq!(joined.get(row), value, "row {row} of {a_len}+{b_len}");
                    }
                    assert_eq!(joined.has_values(), expected.has_values());
                    assert_eq!(joined.get(all.len()), None);
                }
            }
        }
    }
}
