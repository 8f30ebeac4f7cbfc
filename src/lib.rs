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

/// Wayland and Mesa's Vulkan drivers print `error: XDG_RUNTIME_DIR is invalid or not set` (four
/// times) on starts that succeed when the variable is missing (containers, `su`, ssh sessions).
/// Gives them a private directory instead (`$TMPDIR/warpscope-runtime-$USER`, mode 0700), unless
/// `XDG_RUNTIME_DIR` already names a directory. `main` calls it first thing; the GUI tests call
/// it before their first window.
///
/// # Safety
///
/// It may set an environment variable: no other thread may read or write the environment
/// while it runs (call it before starting threads, or while every thread that would is
/// waiting for it).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub unsafe fn ensure_runtime_dir() {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let usable = |d: &std::path::Path| d.is_dir();
    if std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| usable(std::path::Path::new(&d))) {
        return;
    }
    let user = std::env::var("USER").unwrap_or_else(|_| "user".to_string());
    let dir = std::env::temp_dir().join(format!("warpscope-runtime-{user}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    // Only a directory of ours that nobody else can enter will do.
    let ours = std::fs::metadata(&dir).is_ok_and(|m| m.is_dir() && m.mode() & 0o077 == 0);
    if ours {
        // SAFETY: the caller guarantees that nothing else reads or writes the environment now.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
    }
}

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
