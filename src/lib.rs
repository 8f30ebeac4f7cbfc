//! The warpscope application: the command line and the desktop app, as a library so that the
//! binary (`main.rs`) and the end-to-end tests drive the same code.

pub mod app;
pub mod cli;
pub mod compare;
pub mod export;
pub mod gui;
pub mod live;
pub mod load;
pub mod output;
mod report;

#[cfg(target_os = "linux")]
pub use warpscope_ui::ensure_runtime_dir;

/// The text of a panic's payload (`panic!("...")` gives a `&str` or a `String`), for messages
/// that turn a bug into a line the user can read and report.
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// An import warning in one line, with how many times it happened.
pub fn warning_text(w: &warpscope_core::model::Warning) -> String {
    if w.count > 1 {
        format!("{} ({} times)", w.message, w.count)
    } else {
        w.message.clone()
    }
}

/// An error and its causes as one line, `outer: cause: cause`, leaving out a cause whose text the
/// line already holds (library errors often repeat their source in their own message, and
/// printing the chain would say it twice).
pub fn error_text(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let e =
            anyhow::Error::new(io).context("x.json: cannot read file: No such file or directory");
        assert_eq!(
            error_text(&e),
            "x.json: cannot read file: No such file or directory"
        );
        let e = anyhow::anyhow!("disk full").context("cannot write out.png");
        assert_eq!(error_text(&e), "cannot write out.png: disk full");
    }
}
