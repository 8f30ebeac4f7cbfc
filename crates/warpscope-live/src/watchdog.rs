//! The live lab's time limit (`--timeout`). A kernel that never ends cannot be cancelled from the
//! host inside its CUDA context, and the context cannot be destroyed while it runs: every wait
//! for the GPU polls with a deadline instead, and once a deadline passes the context is
//! *abandoned* (nothing more is synchronised, freed or destroyed in it, since each of those
//! calls would wait for the kernel) and the process must end to free the GPU, through
//! [`exit_now`]. A backstop thread ([`Watchdog`]) ends the process itself when the host stays
//! blocked inside a CUDA call well past the limit (a full launch queue behind the kernel).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{LiveError, format_limit_ns};

/// The shortest default time limit per launch, in seconds.
pub const MIN_DEFAULT_TIMEOUT_S: f64 = 10.0;
/// The default limit is this many times the per-point budget (`--budget`).
pub const TIMEOUT_BUDGETS: f64 = 4.0;
/// How long past its deadline the backstop lets the host stay blocked in a CUDA call before it
/// ends the process (the main thread's own polling answers at the deadline itself).
pub(crate) const BACKSTOP_GRACE_NS: u64 = 5_000_000_000;
/// How often the backstop looks at the clock.
const BACKSTOP_POLL: Duration = Duration::from_millis(50);

/// Set once a wait ran past its time limit: the context has a kernel that may never end.
static ABANDONED: AtomicBool = AtomicBool::new(false);

/// The default time limit per launch, in seconds, for a per-point budget of `budget_s`:
/// [`TIMEOUT_BUDGETS`] budgets, at least [`MIN_DEFAULT_TIMEOUT_S`] (20 s for the default 5 s
/// budget). One launch may legitimately outlast the budget (a point is then timed once: a
/// one-thread `vector_add` over 100 M floats takes 6.8 s on an H100), so the limit leaves room.
pub fn default_timeout_s(budget_s: f64) -> f64 {
    let scaled = TIMEOUT_BUDGETS * budget_s;
    if scaled.is_finite() && scaled > MIN_DEFAULT_TIMEOUT_S {
        scaled
    } else {
        MIN_DEFAULT_TIMEOUT_S
    }
}

/// Nanoseconds of a time limit given in seconds, or why it is not one (it must be a positive
/// number of seconds, at most a day).
pub fn timeout_ns(seconds: f64) -> Result<u64, String> {
    if !seconds.is_finite() || seconds <= 0.0 || seconds > 86_400.0 {
        return Err(format!(
            "the time limit must be a positive number of seconds, at most 86400 (a day); got \
             {seconds}"
        ));
    }
    // At least 1 ns; exact enough for any limit a person types.
    Ok(((seconds * 1e9).round() as u64).max(1))
}

/// True once a kernel of this process ran past its time limit: its CUDA context is abandoned and
/// only ending the process (see [`exit_now`]) frees the GPU.
pub fn context_abandoned() -> bool {
    ABANDONED.load(Ordering::SeqCst)
}

/// Marks the context abandoned (see [`context_abandoned`]).
pub(crate) fn abandon() {
    ABANDONED.store(true, Ordering::SeqCst);
}

/// Ends the process at once with `code`, after flushing stdout and stderr, without running exit
/// handlers or destructors: the CUDA driver's and CUPTI's teardown would wait for a kernel that
/// never ends. Ending the process is what stops that kernel and frees the GPU.
pub fn exit_now(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    unsafe extern "C" {
        fn _exit(status: std::ffi::c_int) -> !;
    }
    // SAFETY: `_exit` (POSIX) takes a plain int, never returns and touches no Rust state; the
    // buffered output was flushed above, and nothing else needs to run before the process ends.
    unsafe { _exit(code) }
}

/// What the backstop prints before it ends the process.
pub(crate) fn backstop_message(limit_ns: u64) -> String {
    format!(
        "{}; the host stayed blocked in a CUDA call for {} past that, so the process was \
         ended and the sweep's results are lost",
        LiveError::Timeout {
            what: "the kernel".into(),
            limit_ns,
        },
        format_limit_ns(BACKSTOP_GRACE_NS)
    )
}

/// State shared with the backstop thread.
struct Shared {
    origin: Instant,
    /// Nanoseconds from `origin` after which the process is ended; 0 when disarmed.
    deadline_ns: AtomicU64,
    /// The time limit the armed wait has, for the message.
    limit_ns: AtomicU64,
    stop: AtomicBool,
}

impl Shared {
    fn now_ns(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// A thread that calls its action when an armed deadline passes without being disarmed: the
/// host was stuck in a call that no polling can interrupt. Arming and disarming are two atomic
/// stores, cheap enough for every launch.
pub(crate) struct Watchdog {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// The process's backstop: prints [`backstop_message`] and ends the process with 1.
    pub(crate) fn ending_the_process() -> Self {
        Self::start(|limit_ns| {
            eprintln!("warpscope: error: {}", backstop_message(limit_ns));
            exit_now(1);
        })
    }

    /// Starts the thread; `on_expiry` gets the armed wait's time limit.
    pub(crate) fn start(on_expiry: impl FnOnce(u64) + Send + 'static) -> Self {
        let shared = Arc::new(Shared {
            origin: Instant::now(),
            deadline_ns: AtomicU64::new(0),
            limit_ns: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        });
        let thread = std::thread::Builder::new()
            .name("warpscope-live-watchdog".into())
            .spawn({
                let shared = Arc::clone(&shared);
                move || {
                    while !shared.stop.load(Ordering::SeqCst) {
                        std::thread::park_timeout(BACKSTOP_POLL);
                        let deadline = shared.deadline_ns.load(Ordering::SeqCst);
                        if deadline != 0
                            && shared.now_ns() > deadline
                            && !shared.stop.load(Ordering::SeqCst)
                        {
                            on_expiry(shared.limit_ns.load(Ordering::SeqCst));
                            return;
                        }
                    }
                }
            })
            .ok();
        Self { shared, thread }
    }

    /// Arms the backstop for a wait of up to `wait_ns` (its time limit `limit_ns`, for the
    /// message): it fires [`BACKSTOP_GRACE_NS`] after that unless the returned guard was
    /// dropped first.
    #[must_use = "the backstop is disarmed when the guard is dropped"]
    pub(crate) fn arm(&self, wait_ns: u64, limit_ns: u64) -> Armed {
        self.shared.limit_ns.store(limit_ns, Ordering::SeqCst);
        let armed = Armed(Arc::clone(&self.shared));
        armed.rearm(wait_ns);
        armed
    }
}

/// An armed [`Watchdog`]; dropping it disarms it (the wait is over, however it ended).
pub(crate) struct Armed(Arc<Shared>);

impl Armed {
    /// Moves the deadline to [`BACKSTOP_GRACE_NS`] after a wait of `wait_ns` from now (a batch's
    /// next launch call, which blocks while CUDA's launch queue is full).
    pub(crate) fn rearm(&self, wait_ns: u64) {
        let deadline = self
            .0
            .now_ns()
            .saturating_add(wait_ns)
            .saturating_add(BACKSTOP_GRACE_NS)
            .max(1);
        self.0.deadline_ns.store(deadline, Ordering::SeqCst);
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        self.0.deadline_ns.store(0, Ordering::SeqCst);
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn the_default_limit_is_four_budgets_and_at_least_ten_seconds() {
        assert_eq!(default_timeout_s(5.0), 20.0);
        assert_eq!(default_timeout_s(30.0), 120.0);
        assert_eq!(default_timeout_s(1.0), 10.0);
        assert_eq!(default_timeout_s(0.01), 10.0);
        assert_eq!(default_timeout_s(f64::NAN), 10.0);
        assert_eq!(default_timeout_s(f64::INFINITY), 10.0);
    }

    #[test]
    fn a_limit_is_a_positive_number_of_seconds() {
        assert_eq!(timeout_ns(10.0), Ok(10_000_000_000));
        assert_eq!(timeout_ns(0.25), Ok(250_000_000));
        assert_eq!(timeout_ns(1e-12), Ok(1));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 86_401.0] {
            let err = timeout_ns(bad).unwrap_err();
            assert!(err.starts_with("the time limit must be"), "{err}");
        }
    }

    #[test]
    fn the_timeout_message_names_the_limit() {
        let e = |ns| {
            LiveError::Timeout {
                what: "the kernel".into(),
                limit_ns: ns,
            }
            .to_string()
        };
        assert_eq!(
            e(10_000_000_000),
            "the kernel did not finish within 10 s; it was stopped"
        );
        assert_eq!(
            e(2_500_000_000),
            "the kernel did not finish within 2.5 s; it was stopped"
        );
        assert_eq!(
            e(500_000_000),
            "the kernel did not finish within 500 ms; it was stopped"
        );
        assert!(backstop_message(20_000_000_000).starts_with(
            "the kernel did not finish within 20 s; it was stopped; the host stayed blocked \
                 in a CUDA call for 5 s past that"
        ));
        let timeout = LiveError::Timeout {
            what: "the kernel".into(),
            limit_ns: 1,
        };
        assert!(timeout.ends_the_context() && !timeout.is_sticky());
        assert!(LiveError::Abandoned.ends_the_context());
        assert!(!LiveError::Cancelled.ends_the_context());
    }

    #[test]
    fn a_deadline_that_passes_fires_and_a_disarmed_one_does_not() {
        let (tx, rx) = channel();
        let dog = Watchdog::start(move |limit| {
            let _ = tx.send(limit);
        });
        // Disarmed at once: nothing happens, however long it waits.
        drop(dog.arm(0, 7));
        assert_eq!(dog.shared.deadline_ns.load(Ordering::SeqCst), 0);
        // Armed far in the future: nothing happens either.
        let armed = dog.arm(3_600_000_000_000, 8);
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        drop(armed);
        // A deadline already past (set directly, without the grace): fires, with its limit.
        dog.shared
            .deadline_ns
            .store(dog.shared.now_ns().max(1), Ordering::SeqCst);
        dog.shared.limit_ns.store(9, Ordering::SeqCst);
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(9));
        drop(dog);
    }

    /// Set in the process that [`the_backstop_ends_a_stuck_process_with_1`] starts.
    const STUCK_CHILD: &str = "WARPSCOPE_WATCHDOG_STUCK_CHILD";

    #[test]
    fn the_backstop_ends_a_stuck_process_with_1() {
        if std::env::var_os(STUCK_CHILD).is_some() {
            // The child: armed for a 1 ns wait, then stuck (as in a CUDA call that never
            // returns) far longer than the grace.
            let dog = Watchdog::ending_the_process();
            let _armed = dog.arm(1, 2_000_000_000);
            std::thread::sleep(Duration::from_secs(120));
            return;
        }
        let name = "watchdog::tests::the_backstop_ends_a_stuck_process_with_1";
        let start = Instant::now();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name, "--test-threads=1", "--nocapture"])
            .env(STUCK_CHILD, "1")
            .output()
            .unwrap();
        let took = start.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(
                "warpscope: error: the kernel did not finish within 2 s; it was stopped; the \
                 host stayed blocked"
            ),
            "{stderr}"
        );
        // The grace (5 s) and a little, far from the child's 120 s.
        assert!(took < Duration::from_secs(60), "{took:?}");
    }

    #[test]
    fn dropping_the_watchdog_stops_its_thread_quickly() {
        let dog = Watchdog::start(|_| panic!("must not fire"));
        let armed = dog.arm(3_600_000_000_000, 1);
        let start = Instant::now();
        drop(dog);
        drop(armed);
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}
