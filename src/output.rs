//! How the CLI prints its reports: the `--format` choice shared by every command and the
//! report modules (kept apart from `cli` so that the reports do not depend on the command line).

use clap::ValueEnum;

/// How tables are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Aligned text, like nvprof.
    Table,
    /// Comma-separated values, one row per line, times in ns.
    Csv,
    /// JSON, a stable contract for scripts.
    Json,
}
