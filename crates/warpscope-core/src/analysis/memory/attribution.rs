//! Which operator made each allocation.
//!
//! A record of a profile with CPU threads (Kineto) belongs to the innermost CPU operator
//! (`EventKind::CpuOp`: `aten::empty`, `aten::conv2d`) of its thread that contains its time;
//! step and profiler annotations (`ProfilerStep#3`, also where older traces record it as an
//! operator), Python frames and runtime calls are not operators and are passed through. A snapshot has no threads: its record belongs to the
//! outermost ATen operator of its stack (`at::_ops::convolution_backward::call` gives
//! `aten::convolution_backward`), else to its innermost Python frame (`step (train.py:22)`).
//! In an Nsight Systems export the operators are the NVTX ranges of the thread that made the
//! CUDA call. See `docs/memory.md`.

use rustc_hash::FxHashMap;

use crate::builder::enclosing_event;
use crate::model::memory::{NO_STACK, NO_TRACK};
use crate::model::{EventKind, EventRef, MemorySource, NO_PARENT, Profile};

/// Steps, which older traces record as operators, are not operators.
const STEP_PREFIX: &str = "ProfilerStep#";

/// The operator of records with none: no thread, no operator around them, no usable stack.
pub const NO_OPERATOR: &str = "(no operator)";

/// Operators interned for one report: names, and for each record its chain of operators.
#[derive(Clone, Debug, Default)]
pub struct Attribution {
    /// Distinct operator names; index 0 is [`NO_OPERATOR`].
    pub names: Vec<String>,
    /// For each record, its operators from the innermost outwards (indices into `names`):
    /// `chains[starts[i]..starts[i + 1]]`, never empty (at least [`NO_OPERATOR`]).
    chains: Vec<u32>,
    starts: Vec<u32>,
    /// For each record, its innermost operator's event on the timeline, if it has one.
    events: Vec<Option<EventRef>>,
    /// True when the operators are NVTX ranges (Nsight Systems), whose names say nothing
    /// reliable about forward or backward.
    pub(super) nvtx_ranges: bool,
}

impl Attribution {
    /// The innermost operator of record `i` (index into `names`).
    pub fn innermost(&self, i: usize) -> u32 {
        self.chain(i).first().copied().unwrap_or(0)
    }

    /// Every operator of record `i`, innermost first.
    pub fn chain(&self, i: usize) -> &[u32] {
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => self.chains.get(a as usize..b as usize).unwrap_or_default(),
            _ => &[],
        }
    }

    /// The event of record `i`'s innermost operator (on its thread's track), if it has one.
    pub fn operator_event(&self, i: usize) -> Option<EventRef> {
        self.events.get(i).copied().flatten()
    }

    /// The name of operator `id`.
    pub fn name(&self, id: u32) -> &str {
        self.names
            .get(id as usize)
            .map_or(NO_OPERATOR, String::as_str)
    }

    /// The operators of record `i` as `outer > ... > inner`.
    pub fn stack_text(&self, i: usize) -> String {
        let mut names: Vec<&str> = self.chain(i).iter().map(|&o| self.name(o)).collect();
        names.reverse();
        names.join(" > ")
    }
}

/// Works out the operators of every memory record of `profile`.
pub fn attribute(profile: &Profile) -> Attribution {
    let ev = &profile.memory.events;
    // Nsight Systems and rocprofv3 record no framework operators: their NVTX (ROCTx) ranges
    // stand for them.
    let nvtx_ranges = matches!(
        profile.memory.source,
        MemorySource::Nsys | MemorySource::Rocpd
    );
    let mut out = Attribution {
        names: vec![NO_OPERATOR.to_string()],
        chains: Vec::with_capacity(ev.len()),
        starts: Vec::with_capacity(ev.len() + 1),
        events: Vec::with_capacity(ev.len()),
        nvtx_ranges,
    };
    let mut ids: FxHashMap<String, u32> = FxHashMap::default();
    let mut intern = |names: &mut Vec<String>, name: &str| -> u32 {
        if let Some(&id) = ids.get(name) {
            return id;
        }
        let id = u32::try_from(names.len()).unwrap_or(0);
        names.push(name.to_string());
        ids.insert(name.to_string(), id);
        id
    };
    // Operators found from a stack, by stack: records share stacks.
    let mut by_stack: FxHashMap<u32, u32> = FxHashMap::default();
    out.starts.push(0);
    for i in 0..ev.len() {
        let before = out.chains.len();
        let mut innermost: Option<EventRef> = None;
        let track = ev.track[i];
        if track != NO_TRACK
            && let Some(t) = profile.tracks.get(track as usize)
        {
            let e = &t.events;
            let mut at = enclosing_event(e, ev.time_ns[i]);
            while let Some(j) = at {
                let j = j as usize;
                let operator = if nvtx_ranges {
                    // NVTX ranges; a mark (no duration) contains nothing.
                    e.kind[j] == EventKind::Nvtx && e.dur_ns[j] > 0
                } else {
                    // Kineto before 1.9 recorded steps as operators.
                    e.kind[j] == EventKind::CpuOp
                        && !profile.str(e.name[j]).starts_with(STEP_PREFIX)
                };
                if operator {
                    let id = intern(&mut out.names, profile.str(e.name[j]));
                    out.chains.push(id);
                    innermost = innermost.or(Some(EventRef {
                        track,
                        index: u32::try_from(j).unwrap_or(u32::MAX),
                    }));
                }
                at = Some(e.parent[j]).filter(|&p| p != NO_PARENT);
            }
        } else if ev.stack[i] != NO_STACK {
            let id = match by_stack.get(&ev.stack[i]) {
                Some(&id) => id,
                None => {
                    let id = match stack_operator(profile, ev.stack[i]) {
                        Some(name) => intern(&mut out.names, &name),
                        None => 0,
                    };
                    by_stack.insert(ev.stack[i], id);
                    id
                }
            };
            if id != 0 {
                out.chains.push(id);
            }
        }
        if out.chains.len() == before {
            out.chains.push(0);
        }
        out.events.push(innermost);
        out.starts
            .push(u32::try_from(out.chains.len()).unwrap_or(u32::MAX));
    }
    out
}

/// The operator a snapshot stack names: its outermost `at::_ops::NAME::call` frame as
/// `aten::NAME`, else its innermost Python frame as `function (file.py:line)`.
pub fn stack_operator(profile: &Profile, stack: u32) -> Option<String> {
    let frames: Vec<_> = profile.memory.stacks.frames_of(stack).collect();
    let aten = frames.iter().rev().find_map(|f| {
        let name = profile.str(f.name);
        let rest = name.strip_prefix("at::_ops::")?;
        let op = rest.strip_suffix("::call").or_else(|| {
            // `at::_ops::NAME::call(args...)`: the frame names carry their signature.
            let end = rest.find("::call(")?;
            Some(&rest[..end])
        })?;
        Some(format!("aten::{op}"))
    });
    aten.or_else(|| {
        frames.iter().find_map(|f| {
            let file = profile.str(f.filename);
            file.ends_with(".py").then(|| {
                let base = file.rsplit('/').next().unwrap_or(file);
                format!("{} ({base}:{})", profile.str(f.name), f.line)
            })
        })
    })
}
