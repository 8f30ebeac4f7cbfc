//! Unit tests of the walk: the replay rule, actions, settings text.

use super::trace::{Totals, action_of};
use super::*;
use crate::model::MemoryAction;

#[test]
fn totals_are_replayed_back_from_the_end_state() {
    let trace = [
        (MemoryAction::SegmentAlloc, 100),
        (MemoryAction::Alloc, 10),
        (MemoryAction::Alloc, 20),
        (MemoryAction::FreeRequested, 10),
        (MemoryAction::Free, 10),
        (MemoryAction::Oom, 1000),
        (MemoryAction::SegmentFree, 50),
        (MemoryAction::Snapshot, 0),
    ];
    let mut net = Totals::default();
    for &(a, n) in &trace {
        net.apply(a, n);
    }
    // 5 bytes were allocated and 60 reserved before the trace began.
    let end = End {
        allocated: 25,
        reserved: 110,
        stated_allocated: 25,
    };
    let mut t = Totals::before(end, net);
    let mut after = Vec::new();
    for &(a, n) in &trace {
        t.apply(a, n);
        after.push((t.allocated, t.reserved));
    }
    assert_eq!(
        after,
        [
            (5, 160),
            (15, 160),
            (35, 160),
            (35, 160),
            (25, 160),
            (25, 160),
            (25, 110),
            (25, 110)
        ]
    );
}

#[test]
fn every_allocator_action_has_a_record_action() {
    for (a, m) in [
        ("alloc", MemoryAction::Alloc),
        ("free_requested", MemoryAction::FreeRequested),
        ("free_completed", MemoryAction::Free),
        ("segment_alloc", MemoryAction::SegmentAlloc),
        ("segment_map", MemoryAction::SegmentAlloc),
        ("segment_free", MemoryAction::SegmentFree),
        ("segment_unmap", MemoryAction::SegmentFree),
        ("oom", MemoryAction::Oom),
        ("snapshot", MemoryAction::Snapshot),
    ] {
        assert_eq!(action_of(a), Some(m), "{a}");
    }
    assert_eq!(action_of("workspace_snapshot"), None);
}

#[test]
fn settings_values_read_like_python() {
    // {"a": [1, "x", 0.5, None, True], "b": {"c": 2}}, protocol 4.
    let data = [
        0x80, 4, b'}', b'(', 0x8c, 1, b'a', b']', b'(', b'K', 1, 0x8c, 1, b'x', b'G', 0x3f, 0xe0,
        0, 0, 0, 0, 0, 0, b'N', 0x88, b'e', 0x8c, 1, b'b', b'}', 0x8c, 1, b'c', b'K', 2, b's',
        b'u', b'.',
    ];
    let pk = crate::import::pickle::parse(&data).unwrap();
    let mut b = ProfileBuilder::new("t".into(), crate::model::Format::TorchMemorySnapshot);
    let w = Walker::new(&pk, &mut b);
    let mut out = Vec::new();
    assert!(!w.settings("", pk.root(), 0, &mut out));
    assert_eq!(
        out,
        [
            ("a".to_string(), "[1, \"x\", 0.5, None, True]".to_string()),
            ("b.c".to_string(), "2".to_string())
        ]
    );
}
