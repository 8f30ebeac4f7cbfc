//! The [`ActivityIndex`] of each open profile, built on the first range selected on it and kept
//! in egui's memory, so the range header and the tables of a dragged range read prefix sums
//! instead of scanning the events every frame.

use std::sync::Arc;

use warpscope_core::Profile;
use warpscope_core::analysis::range_index::ActivityIndex;

use crate::ProfileKey;

/// How many profiles keep their index (the tabs of a comparison).
const KEPT: usize = 8;

/// The indexes built so far, most recently used last.
#[derive(Clone, Default)]
struct Indexes(Vec<(ProfileKey, Arc<ActivityIndex>)>);

/// The index of `profile`, built now if it has none yet.
pub fn activity_index(ctx: &egui::Context, profile: &Profile) -> Arc<ActivityIndex> {
    let id = egui::Id::unique("warpscope-activity-index");
    let key = ProfileKey::of(profile);
    let mut kept = ctx.data(|d| d.get_temp::<Indexes>(id)).unwrap_or_default();
    if let Some(pos) = kept.0.iter().position(|(k, _)| *k == key) {
        let index = Arc::clone(&kept.0[pos].1);
        if pos + 1 != kept.0.len() {
            let entry = kept.0.remove(pos);
            kept.0.push(entry);
            ctx.data_mut(|d| d.insert_temp(id, kept));
        }
        return index;
    }
    let index = Arc::new(ActivityIndex::new(profile));
    kept.0.push((key, Arc::clone(&index)));
    if kept.0.len() > KEPT {
        kept.0.remove(0);
    }
    ctx.data_mut(|d| d.insert_temp(id, kept));
    index
}
