//! The CPU-operators table (`warpscope summary`'s `ops`, [`cpu_ops`]) as a table of columns:
//! not one of the Parquet export's [`crate::TABLES`] (it is a ranked aggregate, not records),
//! but declared here beside them so that every writer of tables shares one list.

use warpscope_core::analysis::cpu_ops;
use warpscope_core::{Profile, TimeRange};

use crate::sink::ColumnSink;

/// The operators of `p` over `range`, one row per name in [`cpu_ops`]'s order (total time,
/// longest first): `name`, `calls`, `self_ns`, `total_ns`, `gpu_ns`, `gpu_self_ns`.
pub fn cpu_ops_table<S: ColumnSink>(p: &Profile, range: TimeRange, mut t: S) -> S {
    let name = t.str("name", false);
    let calls = t.i64("calls", false);
    let self_ns = t.i64("self_ns", false);
    let total_ns = t.i64("total_ns", false);
    let gpu_ns = t.i64("gpu_ns", false);
    let gpu_self_ns = t.i64("gpu_self_ns", false);
    if !t.wanted() {
        return t;
    }
    for row in cpu_ops(p, range) {
        t.put_str(name, Some(&row.name));
        t.put_i64(calls, Some(i64::try_from(row.calls).unwrap_or(i64::MAX)));
        t.put_i64(self_ns, Some(row.self_ns));
        t.put_i64(total_ns, Some(row.total_ns));
        t.put_i64(gpu_ns, Some(row.gpu_ns));
        t.put_i64(gpu_self_ns, Some(row.gpu_self_ns));
        t.end_row();
    }
    t
}
