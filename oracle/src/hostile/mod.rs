//! The hostile-input suite: inputs built to grow in every direction a user can push
//! ([`cases`]), each run through the `oracle` commands under a timeout and with its
//! peak memory measured. Every run must end cleanly: success, or a typed error
//! (`error[...]`) with exit code 1 or 2; never a signal (a native stack overflow or
//! an allocation failure aborts), a hang, a peak above the memory budget or
//! unbounded output. `fmt`'s output must parse again (the round trip).
//!
//! Run by `oracle/tests/hostile.rs` at small sizes and by `cargo run --release -p
//! oracle --bin hostile-suite` at every size up to 10^6.

pub mod cases;

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub use cases::{Case, Class, CLASSES};

/// What a run may spend.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub timeout: Duration,
    /// The peak resident memory allowed, in bytes.
    pub memory: u64,
    /// The output (stdout and stderr together) allowed, in bytes, beyond
    /// `OUTPUT_PER_INPUT_BYTE` bytes per byte of the case's files: `fmt` prints a
    /// large program again, while output that multiplies the input is unbounded.
    pub output: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget { timeout: Duration::from_secs(30), memory: 2 << 30, output: 16 << 20 }
    }
}

/// Output allowed per byte of input, on top of `Budget::output`.
pub const OUTPUT_PER_INPUT_BYTE: u64 = 4;

/// How one command ended.
#[derive(Clone, Debug)]
pub struct Run {
    pub command: String,
    pub verdict: Verdict,
    pub seconds: f64,
    pub peak_bytes: u64,
    /// The first line of the error output (or of the output), for the report.
    pub first_line: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Exit 0.
    Ok,
    /// Exit 1 or 2 with a typed error; the tag (`limit`, `syntax`, `WF-3`...).
    Error(String),
    /// Exit 1 or 2 without `error[...]` in the output.
    Untyped(i32),
    /// Any other exit code.
    BadExit(i32),
    /// Killed by a signal (a stack overflow or allocation failure aborts).
    Signal(i32),
    Hang,
    Memory,
    Output,
    /// Exit 0 on an input that is wrong.
    Accepted,
    /// `fmt` printed text that `parse` rejects.
    RoundTrip(String),
}

impl Verdict {
    pub fn is_clean(&self) -> bool {
        matches!(self, Verdict::Ok | Verdict::Error(_))
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Ok => write!(f, "ok"),
            Verdict::Error(tag) => write!(f, "error[{tag}]"),
            Verdict::Untyped(c) => write!(f, "UNTYPED ERROR (exit {c})"),
            Verdict::BadExit(c) => write!(f, "EXIT {c}"),
            Verdict::Signal(s) => write!(f, "SIGNAL {s}"),
            Verdict::Hang => write!(f, "HANG"),
            Verdict::Memory => write!(f, "MEMORY"),
            Verdict::Output => write!(f, "UNBOUNDED OUTPUT"),
            Verdict::Accepted => write!(f, "ACCEPTED (an error is due)"),
            Verdict::RoundTrip(why) => write!(f, "ROUND TRIP: {why}"),
        }
    }
}

/// Writes the case's files into `dir` and runs each command with `oracle` at `bin`.
pub fn run_case(bin: &Path, case: &Case, dir: &Path, budget: Budget) -> std::io::Result<Vec<Run>> {
    for (name, bytes) in &case.files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, bytes)?;
    }
    for (name, target) in &case.links {
        let _ = std::fs::remove_file(dir.join(name));
        std::os::unix::fs::symlink(target, dir.join(name))?;
    }
    let input: u64 = case.files.iter().map(|(_, b)| b.len() as u64).sum();
    let budget = Budget { output: budget.output.saturating_add(input.saturating_mul(OUTPUT_PER_INPUT_BYTE)), ..budget };
    let mut runs = Vec::new();
    for args in &case.commands {
        let (mut run, out) = run_one(bin, args, dir, budget)?;
        if case.must_fail && run.verdict == Verdict::Ok {
            run.verdict = Verdict::Accepted;
        }
        let round_trip = args[0] == "fmt" && run.verdict == Verdict::Ok;
        runs.push(run);
        if round_trip {
            std::fs::write(dir.join("fmt-out.rx"), &out.stdout)?;
            let (mut again, _) = run_one(bin, &["parse".into(), "fmt-out.rx".into()], dir, budget)?;
            if let Verdict::Error(_) = again.verdict {
                again.verdict = Verdict::RoundTrip(again.first_line.clone());
            }
            again.command = "fmt | parse".into();
            runs.push(again);
        }
    }
    Ok(runs)
}

/// What a command printed: stdout up to the output budget.
struct Output {
    stdout: Vec<u8>,
}

/// The tag of the first `error[TAG]` in the text.
fn error_tag(text: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(text);
    let at = text.find("error[")?;
    let rest = &text[at + 6..];
    Some(rest[..rest.find(']')?].to_string())
}

fn run_one(bin: &Path, args: &[String], dir: &Path, budget: Budget) -> std::io::Result<(Run, Output)> {
    let mut cmd = Command::new(bin);
    cmd.args(args).current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // A safety net for the machine, well above the budget: the verdict comes from
    // the peak measured, this only stops a runaway before it takes everything.
    let cap = budget.memory.saturating_mul(4).max(8 << 30);
    // SAFETY: setrlimit is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit { rlim_cur: cap, rlim_max: cap };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let keep = budget.output as usize;
    let readers = [
        child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>),
        child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .map(|s| s.map(|s| std::thread::spawn(move || drain(s, keep))));
    let pid = child.id() as libc::pid_t;
    let (status, rusage, hung) = wait_with_timeout(pid, budget.timeout);
    // The child is reaped by wait4; `Child` must not wait for it again.
    std::mem::forget(child);
    let [out, err] = readers.map(|r| r.and_then(|h| h.join().ok()).unwrap_or_default());
    let seconds = start.elapsed().as_secs_f64();
    let peak_bytes = rusage.ru_maxrss.max(0) as u64 * 1024;
    let status = std::process::ExitStatus::from_raw(status);
    let verdict = if hung {
        Verdict::Hang
    } else if let Some(sig) = status.signal() {
        Verdict::Signal(sig)
    } else if peak_bytes > budget.memory {
        Verdict::Memory
    } else {
        match status.code().unwrap_or(-1) {
            0 => Verdict::Ok,
            c @ (1 | 2) => Verdict::Untyped(c),
            c => Verdict::BadExit(c),
        }
    };
    let shown = if err.0.is_empty() { &out.0 } else { &err.0 };
    let first_line = String::from_utf8_lossy(&shown[..shown.len().min(400)]).lines().next().unwrap_or("").to_string();
    let verdict = match verdict {
        _ if out.1 + err.1 > budget.output => Verdict::Output,
        Verdict::Untyped(code) => {
            error_tag(&err.0).or_else(|| error_tag(&out.0)).map_or(Verdict::Untyped(code), Verdict::Error)
        }
        v => v,
    };
    let output = Output { stdout: out.0 };
    let command = describe(args);
    Ok((Run { command, verdict, seconds, peak_bytes, first_line }, output))
}

/// Reads everything, keeping the first `keep` bytes; returns them and the total.
fn drain(mut r: impl Read, keep: usize) -> (Vec<u8>, u64) {
    let (mut kept, mut total, mut buf) = (Vec::new(), 0u64, vec![0u8; 1 << 16]);
    while let Ok(k) = r.read(&mut buf) {
        if k == 0 {
            break;
        }
        total += k as u64;
        let room = keep.saturating_sub(kept.len()).min(k);
        kept.extend_from_slice(&buf[..room]);
    }
    (kept, total)
}

/// Waits for the child, killing it after `timeout`; its status and resource usage.
fn wait_with_timeout(pid: libc::pid_t, timeout: Duration) -> (i32, libc::rusage, bool) {
    let start = Instant::now();
    let mut hung = false;
    loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 writes only through the two valid pointers given.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid || r < 0 {
            return (status, usage, hung);
        }
        if !hung && start.elapsed() > timeout {
            hung = true;
            // SAFETY: the child is ours and not yet reaped, so the pid is still its.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A command line for the report, long arguments cut short.
fn describe(args: &[String]) -> String {
    args.iter()
        .map(|a| if a.len() > 40 { format!("{:?}…", a.chars().take(30).collect::<String>()) } else { format!("{a:?}") })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A scratch directory for one case (removed and made again).
pub fn scratch(root: &Path, case: &Case) -> std::io::Result<PathBuf> {
    let dir = root.join(format!("{}-{}", case.class, case.size));
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
