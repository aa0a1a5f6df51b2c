//! An implementation's adapter as a subprocess (PROTOCOL.md "Lifetime"): started with
//! `sh -c CMD`, spoken to in JSON lines, restarted after it crashes, hangs or talks
//! garbage, so that no adapter failure stops a run.

use conformance_protocol::{from_line, to_line, Handshake, Request, Response};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long an adapter may take to start and write its handshake (TVM imports LLVM).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest line read from an adapter (a 16M-element float64 tensor in base64 is
/// ~180 MB); a longer one is a protocol error, not an exhausted memory.
pub const MAX_LINE_BYTES: usize = 1 << 28;
/// How much of an adapter's standard error is kept, for the report.
const STDERR_KEEP: usize = 4096;

/// What became of one request.
#[derive(Debug)]
pub enum Reply {
    Answer(Box<Response>),
    /// The adapter died or closed its output before answering; its last stderr.
    Crash(String),
    Timeout,
    /// The answer was not a response to this request.
    ProtocolError(String),
}

/// A running adapter process.
struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Result<String, String>>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
}

impl Process {
    fn spawn(command: &str) -> Result<Process, String> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start `{command}`: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let stderr_pipe = child.stderr.take().ok_or("no stderr")?;
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut buf = Vec::new();
                match r.by_ref().take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut buf) {
                    Ok(0) => break,
                    Ok(_) if buf.len() > MAX_LINE_BYTES => {
                        let _ = tx.send(Err(format!("a line of over {MAX_LINE_BYTES} bytes")));
                        break;
                    }
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf).into_owned();
                        if tx.send(Ok(line)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                        break;
                    }
                }
            }
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let keep = stderr.clone();
        std::thread::spawn(move || {
            let mut r = stderr_pipe;
            let mut buf = [0u8; 4096];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut k) = keep.lock() {
                    k.extend(&buf[..n]);
                    let excess = k.len().saturating_sub(STDERR_KEEP);
                    k.drain(..excess);
                }
            }
        });
        Ok(Process { child, stdin, lines, stderr })
    }

    fn read_line(&mut self, timeout: Duration) -> Result<String, Reply> {
        match self.lines.recv_timeout(timeout) {
            Ok(Ok(line)) => Ok(line),
            Ok(Err(e)) => Err(Reply::ProtocolError(e)),
            Err(RecvTimeoutError::Timeout) => Err(Reply::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(Reply::Crash(self.death())),
        }
    }

    /// How the process ended, and the end of what it wrote on stderr.
    fn death(&mut self) -> String {
        // The reader saw end of file; give the process a moment to be reaped.
        let mut status = None;
        for _ in 0..50 {
            if let Ok(Some(s)) = self.child.try_wait() {
                status = Some(s);
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let tail = self.stderr_tail();
        match status {
            Some(s) => format!("the adapter {}; stderr: {tail}", describe_exit(s)),
            None => format!("the adapter closed its output; stderr: {tail}"),
        }
    }

    fn stderr_tail(&self) -> String {
        let bytes: Vec<u8> = self.stderr.lock().map(|k| k.iter().copied().collect()).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(3)..].join(" | ")
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a process ended, naming the signal that killed it (directly, or as `sh -c`
/// reports it: status 128 + N).
fn describe_exit(s: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    let signal = s.signal().or_else(|| s.code().filter(|c| (129..160).contains(c)).map(|c| c - 128));
    let name = |n: i32| match n {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        _ => "a signal",
    };
    match signal {
        Some(n) => format!("was killed by {} ({n})", name(n)),
        None => format!("exited ({s})"),
    }
}

/// An adapter the runner talks to: restarted as needed.
pub struct Adapter {
    command: String,
    process: Option<Process>,
    /// The handshake of the current (or last) process.
    pub handshake: Option<Handshake>,
    /// Why the last start failed, if it did.
    pub start_error: Option<String>,
    /// How many times the process was (re)started.
    pub starts: usize,
}

impl Adapter {
    pub fn new(command: &str) -> Adapter {
        Adapter { command: command.to_string(), process: None, handshake: None, start_error: None, starts: 0 }
    }

    /// Starts the process and reads its handshake (one retry).
    pub fn start(&mut self) -> Result<&Handshake, String> {
        let mut last = String::new();
        for _ in 0..2 {
            self.stop();
            self.starts += 1;
            match self.try_start() {
                Ok(()) => {
                    self.start_error = None;
                    return self.handshake.as_ref().ok_or_else(|| "no handshake".to_string());
                }
                Err(e) => last = e,
            }
        }
        self.start_error = Some(last.clone());
        Err(last)
    }

    fn try_start(&mut self) -> Result<(), String> {
        let mut p = Process::spawn(&self.command)?;
        let line = match p.read_line(HANDSHAKE_TIMEOUT) {
            Ok(l) => l,
            Err(r) => {
                let why = match r {
                    Reply::Timeout => format!("no handshake within {} s", HANDSHAKE_TIMEOUT.as_secs()),
                    Reply::Crash(c) => format!("no handshake: {c}"),
                    Reply::ProtocolError(e) => e,
                    Reply::Answer(_) => "no handshake".into(),
                };
                p.kill();
                return Err(why);
            }
        };
        let h: Handshake = match from_line(&line) {
            Ok(h) => h,
            Err(e) => {
                p.kill();
                return Err(format!("the handshake is not one: {e}: `{}`", clip(&line, 200)));
            }
        };
        if let Some(why) = h.refusal() {
            p.kill();
            return Err(why);
        }
        self.handshake = Some(h);
        self.process = Some(p);
        Ok(())
    }

    /// Sends `req` and waits at most `timeout` for its answer. After anything but an
    /// answer, the process is killed; the next request starts a new one.
    pub fn request(&mut self, req: &Request, timeout: Duration) -> Reply {
        if self.process.is_none() {
            if let Err(e) = self.start() {
                return Reply::ProtocolError(format!("the adapter does not start: {e}"));
            }
        }
        let Some(p) = self.process.as_mut() else { return Reply::ProtocolError("no adapter".into()) };
        let line = to_line(req);
        if writeln!(p.stdin, "{line}").and_then(|_| p.stdin.flush()).is_err() {
            let why = p.death();
            self.stop();
            return Reply::Crash(why);
        }
        let reply = match p.read_line(timeout) {
            Ok(line) => match from_line::<Response>(&line) {
                Ok(r) => match r.malformed(req.id) {
                    None => Reply::Answer(Box::new(r)),
                    Some(why) => Reply::ProtocolError(why),
                },
                Err(e) => Reply::ProtocolError(format!("{e}: `{}`", clip(line.trim_end(), 200))),
            },
            Err(r) => r,
        };
        if !matches!(reply, Reply::Answer(_)) {
            self.stop();
        }
        reply
    }

    /// Kills the process (closing its input first would let it finish a request).
    pub fn stop(&mut self) {
        if let Some(mut p) = self.process.take() {
            p.kill();
        }
    }

    /// Ends the process politely: closes its input and waits a moment.
    pub fn finish(&mut self) {
        if let Some(p) = self.process.take() {
            let Process { mut child, stdin, .. } = p;
            drop(stdin);
            for _ in 0..100 {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Adapter {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `s` cut to `n` characters.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n).collect::<String>() + "…"
    }
}
