//! The tables through a sink that keeps every value as text: the rows a time range keeps, and
//! what a sink that is not wanted gets.
#![allow(clippy::unwrap_used)]

use warpscope_core::model::{EventKind, EventRef, Flow, FlowKind, Format, GpuLane};
use warpscope_core::{Profile, ProfileBuilder, TimeRange, TrackKey};

use crate::sink::{Col, ColumnSink, ColumnType, RowScope};
use crate::{RunMeta, build_tables};

/// A sink that keeps column names and rows of text (`-` for a null).
struct Rows {
    wanted: bool,
    names: Vec<&'static str>,
    row: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Rows {
    fn new(wanted: bool) -> Self {
        Self {
            wanted,
            names: Vec::new(),
            row: Vec::new(),
            rows: Vec::new(),
        }
    }

    fn put(&mut self, c: Col, v: Option<String>) {
        if c.index().is_some() {
            self.row.push(v.unwrap_or_else(|| "-".to_string()));
        }
    }

    /// Column `name` of every row.
    fn column(&self, name: &str) -> Vec<&str> {
        let i = self.names.iter().position(|n| *n == name).unwrap();
        self.rows.iter().map(|r| r[i].as_str()).collect()
    }
}

impl ColumnSink for Rows {
    fn column(&mut self, name: &'static str, _ty: ColumnType, _optional: bool) -> Col {
        self.names.push(name);
        Col::at(self.names.len() - 1)
    }
    fn put_i64(&mut self, c: Col, v: Option<i64>) {
        self.put(c, v.map(|v| v.to_string()));
    }
    fn put_i32(&mut self, c: Col, v: Option<i32>) {
        self.put(c, v.map(|v| v.to_string()));
    }
    fn put_f64(&mut self, c: Col, v: Option<f64>) {
        self.put(c, v.map(|v| v.to_string()));
    }
    fn put_str(&mut self, c: Col, v: Option<&str>) {
        self.put(c, v.map(str::to_string));
    }
    fn end_row(&mut self) {
        self.rows.push(std::mem::take(&mut self.row));
    }
    fn wanted(&self) -> bool {
        self.wanted
    }
}

/// Kernels k0 [0, 10), k1 [20, 30), k2 [40, 50) and a zero-length k3 at 60 on one stream,
/// with launch flows k0 → k1 → k2 → k3 (events 0 to 3).
fn profile() -> Profile {
    let mut b = ProfileBuilder::new("range.json".into(), Format::ChromeJson);
    let gpu = b.track(TrackKey::Gpu {
        device: 0,
        context: 1,
        stream: 7,
        lane: GpuLane::Work,
    });
    for (i, start) in [0, 20, 40].into_iter().enumerate() {
        let name = b.intern(&format!("k{i}"));
        b.push(gpu, start, 10, name, EventKind::Kernel);
    }
    let k3 = b.intern("k3");
    b.push(gpu, 60, 0, k3, EventKind::Kernel);
    let mut p = b.finish();
    let at = |index| EventRef { track: 0, index };
    p.flows = (0..3)
        .map(|i| Flow {
            from: at(i),
            to: at(i + 1),
            kind: FlowKind::Other,
        })
        .collect();
    p
}

fn tables(p: &Profile, range: TimeRange, wanted: &[&str]) -> Vec<(&'static str, Rows)> {
    build_tables(p, RunMeta::default(), RowScope { range }, |t| {
        Rows::new(wanted.contains(&t))
    })
}

fn table<'a>(t: &'a [(&'static str, Rows)], name: &str) -> &'a Rows {
    &t.iter().find(|(n, _)| *n == name).unwrap().1
}

#[test]
fn a_range_keeps_the_events_that_touch_it_whole_and_their_flows() {
    let p = profile();
    let all = tables(&p, TimeRange::ALL, &["events", "kernels", "flows"]);
    assert_eq!(
        table(&all, "kernels").column("name"),
        ["k0", "k1", "k2", "k3"]
    );
    assert_eq!(table(&all, "flows").rows.len(), 3);

    // [25, 45): k1 started before it and k2 ends after it; both kept whole.
    let part = tables(&p, TimeRange::new(25, 45), &["events", "kernels", "flows"]);
    let k = table(&part, "kernels");
    assert_eq!(k.column("name"), ["k1", "k2"]);
    assert_eq!(k.column("event"), ["1", "2"]);
    assert_eq!(k.column("start_ns"), ["20", "40"]);
    assert_eq!(k.column("dur_ns"), ["10", "10"]);
    assert_eq!(table(&part, "events").column("event"), ["1", "2"]);
    // Only the flow whose two ends are kept.
    let f = table(&part, "flows");
    assert_eq!(f.column("from_event"), ["1"]);
    assert_eq!(f.column("to_event"), ["2"]);

    // A zero-length event is in a range when its start is: [60, 61) has k3, [50, 60) not.
    let at = tables(&p, TimeRange::new(60, 61), &["kernels"]);
    assert_eq!(table(&at, "kernels").column("name"), ["k3"]);
    let before = tables(&p, TimeRange::new(50, 60), &["kernels"]);
    assert!(table(&before, "kernels").rows.is_empty());
}

#[test]
fn a_table_not_wanted_has_its_columns_and_no_rows() {
    let p = profile();
    let t = tables(&p, TimeRange::ALL, &["kernels"]);
    let events = table(&t, "events");
    assert!(events.rows.is_empty());
    assert_eq!(
        events.names[..6],
        ["run", "rank", "event", "start_ns", "dur_ns", "name"]
    );
    assert_eq!(table(&t, "kernels").rows.len(), 4);
    assert!(table(&t, "flows").rows.is_empty());
    assert!(table(&t, "runs").rows.is_empty());
    let runs = tables(&p, TimeRange::ALL, &["runs"]);
    assert_eq!(table(&runs, "runs").column("events"), ["4"]);
}
