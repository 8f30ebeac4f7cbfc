//! warpscope-core: the profile model, the importers and the analysis behind warpscope.
//!
//! No GUI and no CUDA here: this crate builds fast and is what the CLI, the viewer and the
//! tests share. Read a file with [`import_file`], then analyse the [`Profile`] with the
//! functions in [`analysis`].

pub mod analysis;
pub mod builder;
pub mod cupti_cbid;
pub mod demangle;
pub mod import;
pub mod model;
pub mod names;
pub mod parallel;
pub mod strings;
pub mod time;
pub mod units;
pub mod write;

pub use builder::ProfileBuilder;
pub use import::{
    ImportError, ImportTimings, Input, Progress, import_bytes, import_file, import_file_timed,
    import_timed,
};
pub use model::{EventKind, Profile, Track, TrackKey};
pub use strings::{StrId, StringTable};
pub use time::TimeRange;
