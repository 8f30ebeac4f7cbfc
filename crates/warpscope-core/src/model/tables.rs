//! The side tables of a profile: details of kernels, copies and API calls, stored by column.
//!
//! An event's `detail` is a row number in one of these tables. Rows are read back as the
//! plain structs of [`super::details`] ([`KernelTable::get`] gives a [`KernelInfo`]); inside,
//! a field no row has costs nothing, and a kernel's launch configuration, which a few hundred
//! distinct kernels repeat millions of times, is stored once and referred to by number. A
//! million kernels of an Nsight Systems export take 12 MB instead of 150. Where launches do not
//! repeat (a synthetic file), a kernel costs its packed configuration, 88 bytes, plus its ids.

use std::fmt;
use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use super::column::OptColumn;
use super::details::{ApiInfo, CopyInfo, CopyKind, KernelInfo, MemoryKind};
use crate::strings::StrId;

/// What kernels launched alike share: everything in [`KernelInfo`] but the ids of the launch,
/// packed: one bit per field says whether it is present. Floats are kept as bits, so every
/// value, NaN included, comes back as it went in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct LaunchConfig {
    grid: [u32; 3],
    block: [u32; 3],
    registers_per_thread: u32,
    scalar_registers: u32,
    accum_registers: u32,
    wave_size: u32,
    occupancy_pct: u32,
    blocks_per_sm: u32,
    warps_per_sm: u32,
    mangled_name: u32,
    process_group: u32,
    static_shared_bytes: u64,
    dynamic_shared_bytes: u64,
    shared_memory_bytes: u64,
    scratch_bytes: u64,
    present: u16,
}

const GRID: u16 = 1;
const BLOCK: u16 = 1 << 1;
const REGISTERS: u16 = 1 << 2;
const STATIC_SHARED: u16 = 1 << 3;
const DYNAMIC_SHARED: u16 = 1 << 4;
const SHARED: u16 = 1 << 5;
const OCCUPANCY: u16 = 1 << 6;
const BLOCKS_PER_SM: u16 = 1 << 7;
const WARPS_PER_SM: u16 = 1 << 8;
const MANGLED: u16 = 1 << 9;
const PROCESS_GROUP: u16 = 1 << 10;
const SCALAR_REGISTERS: u16 = 1 << 11;
const ACCUM_REGISTERS: u16 = 1 << 12;
const SCRATCH: u16 = 1 << 13;
const WAVE_SIZE: u16 = 1 << 14;

impl LaunchConfig {
    fn of(k: &KernelInfo) -> Self {
        let mut c = Self::default();
        let mut put = |bit: u16, present: bool| {
            if present {
                c.present |= bit;
            }
        };
        put(GRID, k.grid.is_some());
        put(BLOCK, k.block.is_some());
        put(REGISTERS, k.registers_per_thread.is_some());
        put(STATIC_SHARED, k.static_shared_bytes.is_some());
        put(DYNAMIC_SHARED, k.dynamic_shared_bytes.is_some());
        put(SHARED, k.shared_memory_bytes.is_some());
        put(OCCUPANCY, k.occupancy_pct.is_some());
        put(BLOCKS_PER_SM, k.blocks_per_sm.is_some());
        put(WARPS_PER_SM, k.warps_per_sm.is_some());
        put(MANGLED, k.mangled_name.is_some());
        put(PROCESS_GROUP, k.process_group.is_some());
        put(SCALAR_REGISTERS, k.scalar_registers.is_some());
        put(ACCUM_REGISTERS, k.accum_registers.is_some());
        put(SCRATCH, k.scratch_bytes.is_some());
        put(WAVE_SIZE, k.wave_size.is_some());
        c.grid = k.grid.unwrap_or_default();
        c.block = k.block.unwrap_or_default();
        c.registers_per_thread = k.registers_per_thread.unwrap_or(0);
        c.scalar_registers = k.scalar_registers.unwrap_or(0);
        c.accum_registers = k.accum_registers.unwrap_or(0);
        c.scratch_bytes = k.scratch_bytes.unwrap_or(0);
        c.wave_size = k.wave_size.unwrap_or(0);
        c.static_shared_bytes = k.static_shared_bytes.unwrap_or(0);
        c.dynamic_shared_bytes = k.dynamic_shared_bytes.unwrap_or(0);
        c.shared_memory_bytes = k.shared_memory_bytes.unwrap_or(0);
        c.occupancy_pct = k.occupancy_pct.map_or(0, f32::to_bits);
        c.blocks_per_sm = k.blocks_per_sm.map_or(0, f32::to_bits);
        c.warps_per_sm = k.warps_per_sm.map_or(0, f32::to_bits);
        c.mangled_name = k.mangled_name.map_or(0, |s| s.0);
        c.process_group = k.process_group.map_or(0, |s| s.0);
        c
    }

    /// The fields as a [`KernelInfo`] without the launch's ids.
    fn info(&self) -> KernelInfo {
        let has = |bit: u16| self.present & bit != 0;
        KernelInfo {
            grid: has(GRID).then_some(self.grid),
            block: has(BLOCK).then_some(self.block),
            registers_per_thread: has(REGISTERS).then_some(self.registers_per_thread),
            scalar_registers: has(SCALAR_REGISTERS).then_some(self.scalar_registers),
            accum_registers: has(ACCUM_REGISTERS).then_some(self.accum_registers),
            scratch_bytes: has(SCRATCH).then_some(self.scratch_bytes),
            wave_size: has(WAVE_SIZE).then_some(self.wave_size),
            static_shared_bytes: has(STATIC_SHARED).then_some(self.static_shared_bytes),
            dynamic_shared_bytes: has(DYNAMIC_SHARED).then_some(self.dynamic_shared_bytes),
            shared_memory_bytes: has(SHARED).then_some(self.shared_memory_bytes),
            occupancy_pct: has(OCCUPANCY).then_some(f32::from_bits(self.occupancy_pct)),
            blocks_per_sm: has(BLOCKS_PER_SM).then_some(f32::from_bits(self.blocks_per_sm)),
            warps_per_sm: has(WARPS_PER_SM).then_some(f32::from_bits(self.warps_per_sm)),
            correlation: None,
            external_id: None,
            mangled_name: has(MANGLED).then_some(StrId(self.mangled_name)),
            process_group: has(PROCESS_GROUP).then_some(StrId(self.process_group)),
        }
    }

    fn hash64(&self) -> u64 {
        let mut h = FxHasher::default();
        self.hash(&mut h);
        h.finish()
    }
}

/// Every this many rows the kernel table checks that launch configurations repeat: where more
/// than half of the rows so far brought a new one, it stops looking them up (the lookup map
/// would cost more than it saves) and stores one per row.
const DEDUP_CHECK_ROWS: usize = 1 << 16;

/// Launch details of every kernel, one row per kernel event.
#[derive(Clone, Default)]
pub struct KernelTable {
    /// Each distinct launch configuration once.
    configs: Vec<LaunchConfig>,
    /// The number in `configs` of a configuration, by its hash: the map holds 12 bytes per
    /// configuration, not a copy of it, which matters when nearly every launch differs.
    by_hash: FxHashMap<u64, u32>,
    /// Configurations whose hash is taken by another one (64-bit hashes: hardly ever).
    collided: FxHashMap<LaunchConfig, u32>,
    /// False once the rows showed that launches hardly repeat (see [`DEDUP_CHECK_ROWS`]):
    /// from then on each row stores its own configuration and the maps are gone.
    no_dedup: bool,
    /// Per row: its configuration.
    config: Vec<u32>,
    correlation: OptColumn<u64>,
    external_id: OptColumn<u64>,
}

impl KernelTable {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.config.len()
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.config.is_empty()
    }

    /// Adds a row.
    pub fn push(&mut self, info: KernelInfo) {
        let row = self.len();
        let id = self.config_id(LaunchConfig::of(&info));
        self.config.push(id);
        self.correlation.push(row, info.correlation);
        self.external_id.push(row, info.external_id);
    }

    fn config_id(&mut self, config: LaunchConfig) -> u32 {
        let rows = self.config.len();
        if !self.no_dedup
            && rows > 0
            && rows.is_multiple_of(DEDUP_CHECK_ROWS)
            && self.configs.len() * 2 > rows
        {
            self.no_dedup = true;
            self.by_hash = FxHashMap::default();
            self.collided = FxHashMap::default();
        }
        if self.no_dedup {
            self.configs.push(config);
            return u32::try_from(self.configs.len() - 1).unwrap_or(u32::MAX);
        }
        self.config_id_hashed(config, config.hash64())
    }

    fn config_id_hashed(&mut self, config: LaunchConfig, hash: u64) -> u32 {
        let next = u32::try_from(self.configs.len()).unwrap_or(u32::MAX);
        let id = *self.by_hash.entry(hash).or_insert(next);
        if self.configs.get(id as usize) == Some(&config) {
            return id;
        }
        let id = if id == next {
            next
        } else {
            *self.collided.entry(config).or_insert(next)
        };
        if id == next {
            self.configs.push(config);
        }
        id
    }

    /// Row `row`, if there is one.
    pub fn get(&self, row: usize) -> Option<KernelInfo> {
        let config = self.configs.get(*self.config.get(row)? as usize)?;
        Some(KernelInfo {
            correlation: self.correlation.get(row),
            external_id: self.external_id.get(row),
            ..config.info()
        })
    }

    /// The correlation id of row `row`, without building the whole row.
    pub fn correlation(&self, row: usize) -> Option<u64> {
        self.correlation.get(row)
    }

    /// Whether some row has a correlation id.
    pub fn has_correlations(&self) -> bool {
        self.correlation.has_values()
    }

    /// All rows in order.
    pub fn iter(&self) -> impl Iterator<Item = KernelInfo> + '_ {
        (0..self.len()).filter_map(|row| self.get(row))
    }

    /// Appends the rows of `other`, its string ids passed through `string`.
    pub fn append(&mut self, other: KernelTable, string: impl Fn(StrId) -> StrId) {
        let ids: Vec<u32> = other
            .configs
            .iter()
            .map(|c| {
                let mut info = c.info();
                info.mangled_name = info.mangled_name.map(&string);
                info.process_group = info.process_group.map(&string);
                self.config_id(LaunchConfig::of(&info))
            })
            .collect();
        let rows = self.len();
        self.config
            .extend(other.config.iter().map(|&c| ids[c as usize]));
        let n = other.len();
        self.correlation.append(rows, other.correlation, n);
        self.external_id.append(rows, other.external_id, n);
    }

    /// Number of distinct launch configurations.
    pub fn config_count(&self) -> usize {
        self.configs.len()
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.configs.capacity() * std::mem::size_of::<LaunchConfig>()
            + self.by_hash.capacity() * 13
            + self.collided.capacity() * (std::mem::size_of::<LaunchConfig>() + 5)
            + self.config.capacity() * 4
            + self.correlation.heap_bytes()
            + self.external_id.heap_bytes()
    }
}

impl fmt::Debug for KernelTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl FromIterator<KernelInfo> for KernelTable {
    fn from_iter<I: IntoIterator<Item = KernelInfo>>(iter: I) -> Self {
        let mut table = Self::default();
        for info in iter {
            table.push(info);
        }
        table
    }
}

/// Details of every copy, set and unified-memory transfer, one row per event.
#[derive(Clone, Default)]
pub struct CopyTable {
    kind: Vec<CopyKind>,
    bytes: OptColumn<u64>,
    src_kind: OptColumn<MemoryKind>,
    dst_kind: OptColumn<MemoryKind>,
    correlation: OptColumn<u64>,
    external_id: OptColumn<u64>,
}

impl CopyTable {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.kind.len()
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.kind.is_empty()
    }

    /// Adds a row.
    pub fn push(&mut self, info: CopyInfo) {
        let row = self.len();
        self.kind.push(info.kind);
        self.bytes.push(row, info.bytes);
        self.src_kind.push(row, info.src_kind);
        self.dst_kind.push(row, info.dst_kind);
        self.correlation.push(row, info.correlation);
        self.external_id.push(row, info.external_id);
    }

    /// Row `row`, if there is one.
    pub fn get(&self, row: usize) -> Option<CopyInfo> {
        Some(CopyInfo {
            kind: *self.kind.get(row)?,
            bytes: self.bytes.get(row),
            src_kind: self.src_kind.get(row),
            dst_kind: self.dst_kind.get(row),
            correlation: self.correlation.get(row),
            external_id: self.external_id.get(row),
        })
    }

    /// The kind of row `row`, without building the whole row.
    pub fn kind(&self, row: usize) -> Option<CopyKind> {
        self.kind.get(row).copied()
    }

    /// The correlation id of row `row`, without building the whole row.
    pub fn correlation(&self, row: usize) -> Option<u64> {
        self.correlation.get(row)
    }

    /// Whether some row has a correlation id.
    pub fn has_correlations(&self) -> bool {
        self.correlation.has_values()
    }

    /// All rows in order.
    pub fn iter(&self) -> impl Iterator<Item = CopyInfo> + '_ {
        (0..self.len()).filter_map(|row| self.get(row))
    }

    /// Appends the rows of `other`.
    pub fn append(&mut self, other: CopyTable) {
        let (rows, n) = (self.len(), other.len());
        if rows == 0 {
            *self = other;
            return;
        }
        self.kind.extend_from_slice(&other.kind);
        self.bytes.append(rows, other.bytes, n);
        self.src_kind.append(rows, other.src_kind, n);
        self.dst_kind.append(rows, other.dst_kind, n);
        self.correlation.append(rows, other.correlation, n);
        self.external_id.append(rows, other.external_id, n);
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.kind.capacity()
            + self.bytes.heap_bytes()
            + self.src_kind.heap_bytes()
            + self.dst_kind.heap_bytes()
            + self.correlation.heap_bytes()
            + self.external_id.heap_bytes()
    }
}

impl fmt::Debug for CopyTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl FromIterator<CopyInfo> for CopyTable {
    fn from_iter<I: IntoIterator<Item = CopyInfo>>(iter: I) -> Self {
        let mut table = Self::default();
        for info in iter {
            table.push(info);
        }
        table
    }
}

/// Details of every API call, one row per API event.
#[derive(Clone, Default)]
pub struct ApiTable {
    len: usize,
    correlation: OptColumn<u64>,
    cbid: OptColumn<u32>,
    external_id: OptColumn<u64>,
}

impl ApiTable {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds a row.
    pub fn push(&mut self, info: ApiInfo) {
        let row = self.len;
        self.correlation.push(row, info.correlation);
        self.cbid.push(row, info.cbid);
        self.external_id.push(row, info.external_id);
        self.len += 1;
    }

    /// Row `row`, if there is one.
    pub fn get(&self, row: usize) -> Option<ApiInfo> {
        (row < self.len).then(|| ApiInfo {
            correlation: self.correlation.get(row),
            cbid: self.cbid.get(row),
            external_id: self.external_id.get(row),
        })
    }

    /// The correlation id of row `row`, without building the whole row.
    pub fn correlation(&self, row: usize) -> Option<u64> {
        self.correlation.get(row)
    }

    /// Whether some row has a correlation id.
    pub fn has_correlations(&self) -> bool {
        self.correlation.has_values()
    }

    /// All rows in order.
    pub fn iter(&self) -> impl Iterator<Item = ApiInfo> + '_ {
        (0..self.len).filter_map(|row| self.get(row))
    }

    /// Appends the rows of `other`.
    pub fn append(&mut self, other: ApiTable) {
        let (rows, n) = (self.len, other.len);
        self.correlation.append(rows, other.correlation, n);
        self.cbid.append(rows, other.cbid, n);
        self.external_id.append(rows, other.external_id, n);
        self.len += n;
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.correlation.heap_bytes() + self.cbid.heap_bytes() + self.external_id.heap_bytes()
    }
}

impl fmt::Debug for ApiTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl FromIterator<ApiInfo> for ApiTable {
    fn from_iter<I: IntoIterator<Item = ApiInfo>>(iter: I) -> Self {
        let mut table = Self::default();
        for info in iter {
            table.push(info);
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(i: u32) -> KernelInfo {
        KernelInfo {
            grid: Some([i % 3 + 1, 1, 1]),
            block: i.is_multiple_of(2).then_some([256, 1, 1]),
            registers_per_thread: Some(32),
            occupancy_pct: i.is_multiple_of(5).then_some(f32::NAN),
            blocks_per_sm: Some(-0.0),
            correlation: (i != 7).then_some(u64::from(i) * 11),
            external_id: (i > 3).then_some(u64::from(i)),
            mangled_name: i.is_multiple_of(4).then_some(StrId(i % 8)),
            scalar_registers: i.is_multiple_of(3).then_some(96),
            accum_registers: (i % 3 == 1).then_some(i % 2 * 128),
            scratch_bytes: i.is_multiple_of(6).then_some(1 << 33),
            wave_size: (i % 3 != 2).then_some(64),
            ..KernelInfo::default()
        }
    }

    fn same(a: &KernelInfo, b: &KernelInfo) -> bool {
        // NaN is not equal to itself; compare the bits of the floats.
        let bits = |k: &KernelInfo| {
            (
                k.occupancy_pct.map(f32::to_bits),
                k.blocks_per_sm.map(f32::to_bits),
                k.warps_per_sm.map(f32::to_bits),
            )
        };
        let plain = |k: &KernelInfo| KernelInfo {
            occupancy_pct: None,
            blocks_per_sm: None,
            warps_per_sm: None,
            ..*k
        };
        bits(a) == bits(b) && plain(a) == plain(b)
    }

    #[test]
    fn kernels_come_back_as_they_went_in_and_share_configurations() {
        let rows: Vec<KernelInfo> = (0..100).map(kernel).collect();
        let table: KernelTable = rows.iter().copied().collect();
        assert_eq!(table.len(), 100);
        for (i, want) in rows.iter().enumerate() {
            let got = table.get(i).expect("row");
            assert!(same(&got, want), "row {i}: {got:?} != {want:?}");
        }
        assert!(table.get(100).is_none());
        // grid 3 × block 2 × occupancy 2 × mangled name (None or 0 or 4) → at most 36.
        assert!(table.config_count() <= 36, "{}", table.config_count());
    }

    #[test]
    fn configurations_whose_hashes_collide_stay_apart() {
        let mut table = KernelTable::default();
        let configs: Vec<LaunchConfig> = (0..4).map(|i| LaunchConfig::of(&kernel(i))).collect();
        let ids: Vec<u32> = [0, 1, 2, 1, 0, 3]
            .iter()
            .map(|&i| table.config_id_hashed(configs[i], 42))
            .collect();
        assert_eq!(ids, [0, 1, 2, 1, 0, 3]);
        assert_eq!(table.configs, configs);
    }

    #[test]
    fn launches_that_never_repeat_stop_the_lookup_and_still_read_back() {
        let distinct = |i: u32| KernelInfo {
            grid: Some([i, 1, 1]),
            correlation: Some(u64::from(i)),
            ..KernelInfo::default()
        };
        let n = u32::try_from(DEDUP_CHECK_ROWS).unwrap() * 2 + 5;
        let mut table: KernelTable = (0..n).map(distinct).collect();
        assert!(table.no_dedup);
        assert_eq!(table.by_hash.capacity(), 0);
        table.append((0..3).map(distinct).collect(), |s| s);
        assert_eq!(table.len(), n as usize + 3);
        for i in 0..n {
            assert_eq!(table.get(i as usize), Some(distinct(i)), "row {i}");
        }
        assert_eq!(table.get(n as usize + 2), Some(distinct(2)));

        // Repeating launches keep one configuration each.
        let repeating: KernelTable = (0..n).map(|i| distinct(i % 10)).collect();
        assert!(!repeating.no_dedup);
        assert_eq!(repeating.config_count(), 10);
    }

    #[test]
    fn appended_kernels_map_their_strings() {
        let first: KernelTable = (0..10).map(kernel).collect();
        let second: KernelTable = (10..30).map(kernel).collect();
        let mut all = first;
        all.append(second, |s| StrId(s.0 + 100));
        assert_eq!(all.len(), 30);
        for i in 0..30u32 {
            let mut want = kernel(i);
            if i >= 10 {
                want.mangled_name = want.mangled_name.map(|s| StrId(s.0 + 100));
            }
            let got = all.get(i as usize).expect("row");
            assert!(same(&got, &want), "row {i}: {got:?} != {want:?}");
        }
    }

    #[test]
    fn copies_and_api_calls_come_back_as_they_went_in() {
        let copies: Vec<CopyInfo> = (0..70u64)
            .map(|i| CopyInfo {
                kind: if i % 2 == 0 {
                    CopyKind::HtoD
                } else {
                    CopyKind::Memset
                },
                bytes: (i % 3 != 0).then_some(i << 40),
                src_kind: (i == 65).then_some(MemoryKind::Pinned),
                dst_kind: None,
                correlation: Some(i),
                external_id: (i > 60).then_some(i),
            })
            .collect();
        let mut table: CopyTable = copies[..30].iter().copied().collect();
        table.append(copies[30..].iter().copied().collect());
        assert_eq!(table.iter().collect::<Vec<_>>(), copies);

        let calls: Vec<ApiInfo> = (0..70u64)
            .map(|i| ApiInfo {
                correlation: (i % 7 != 0).then_some(i),
                cbid: (i < 5).then_some(211),
                external_id: None,
            })
            .collect();
        let mut table: ApiTable = calls[..64].iter().copied().collect();
        table.append(calls[64..].iter().copied().collect());
        assert_eq!(table.iter().collect::<Vec<_>>(), calls);
        assert_eq!(table.len(), 70);
    }
}
