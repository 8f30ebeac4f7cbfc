//! Imports each file named on the command line and prints its event count and warnings (or
//! the error). For measuring importers under `/usr/bin/time -v`:
//! `cargo build --release -p warpscope-core --example import_one`.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use warpscope_core::{Progress, import_file};

fn main() -> ExitCode {
    let mut code = ExitCode::SUCCESS;
    for arg in std::env::args().skip(1) {
        let t = Instant::now();
        match import_file(Path::new(&arg), &Progress::new()) {
            Ok(p) => {
                println!("{arg}: {} events in {:.2?}", p.event_count(), t.elapsed());
                for w in &p.warnings {
                    let msg: String = w.message.chars().take(160).collect();
                    println!("  warning {} x{}: {msg}", w.code, w.count);
                }
            }
            Err(e) => {
                let msg: String = e.to_string().chars().take(300).collect();
                println!("{arg}: error after {:.2?}: {msg}", t.elapsed());
                code = ExitCode::FAILURE;
            }
        }
    }
    code
}
