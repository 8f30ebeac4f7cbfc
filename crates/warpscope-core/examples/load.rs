//! Loads each file given on the command line with `import_file` and prints what came out (or
//! the error) and how long it took. For measuring pathological inputs:
//! `cargo build --release -p warpscope-core --example load` then
//! `/usr/bin/time -v target/release/examples/load FILE...`.
#![allow(clippy::print_stdout, missing_docs)]

use std::path::Path;
use std::time::Instant;

use warpscope_core::{Progress, import_file};

fn main() {
    let mut failed = false;
    for arg in std::env::args().skip(1) {
        let t = Instant::now();
        match import_file(Path::new(&arg), &Progress::new()) {
            Ok(p) => {
                let mut warnings: Vec<String> = p
                    .warnings
                    .iter()
                    .take(8)
                    .map(|w| format!("{}×{}", w.code, w.count))
                    .collect();
                if p.warnings.len() > 8 {
                    warnings.push(format!("… {} more", p.warnings.len() - 8));
                }
                println!(
                    "{arg}: {} tracks, {} events, warnings [{}] in {:.3} s",
                    p.tracks.len(),
                    p.event_count(),
                    warnings.join(", "),
                    t.elapsed().as_secs_f64()
                );
            }
            Err(e) => {
                failed = true;
                println!(
                    "{arg}: error: {e} (after {:.3} s)",
                    t.elapsed().as_secs_f64()
                );
            }
        }
    }
    std::process::exit(i32::from(failed));
}
