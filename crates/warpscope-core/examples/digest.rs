//! Prints one line per profile named on the command line: its event and flow counts and a
//! digest of everything in it (every column of every track, flows, side tables, warnings,
//! strings), read through its `Debug` form. Two builds that import a file to the same
//! profile print the same line: to check that a change to the importers or to
//! `ProfileBuilder::finish` leaves every profile as it was (also with `WARPSCOPE_THREADS=1`),
//!
//! ```text
//! cargo build --release -p warpscope-core --example digest
//! cp target/release/examples/digest /tmp/digest-before   # then make the change, build again
//! diff <(/tmp/digest-before FILE...) <(target/release/examples/digest FILE...)
//! ```

use std::fmt::Write as _;
use std::hash::Hasher as _;
use std::path::PathBuf;
use std::process::ExitCode;

use warpscope_core::{Progress, import_file};

/// Feeds what is written to it to a hasher, so that the `Debug` form of a profile of millions
/// of events is digested without being held in memory.
struct Digest(std::collections::hash_map::DefaultHasher);

impl std::fmt::Write for Digest {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.write(s.as_bytes());
        Ok(())
    }
}

fn main() -> ExitCode {
    let files: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    if files.is_empty() {
        eprintln!("usage: digest FILE...");
        return ExitCode::from(2);
    }
    let mut code = ExitCode::SUCCESS;
    for path in &files {
        match import_file(path, &Progress::new()) {
            Ok(profile) => {
                let mut digest = Digest(std::collections::hash_map::DefaultHasher::new());
                if write!(digest, "{profile:?}").is_err() {
                    eprintln!("{}: the profile could not be written", path.display());
                    code = ExitCode::FAILURE;
                    continue;
                }
                println!(
                    "{}: events={} flows={} digest={:016x}",
                    path.display(),
                    profile.event_count(),
                    profile.flows.len(),
                    digest.0.finish()
                );
            }
            Err(e) => println!("{}: error: {e}", path.display()),
        }
    }
    code
}
