//! The warpscope application: the command line and the desktop app, as a library so that the
//! binary (`main.rs`) and the end-to-end tests drive the same code.

pub mod app;
pub mod cli;
pub mod compare;
pub mod gui;
pub mod live;
mod report;

/// The text of a panic's payload (`panic!("...")` gives a `&str` or a `String`), for messages
/// that turn a bug into a line the user can read and report.
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}
