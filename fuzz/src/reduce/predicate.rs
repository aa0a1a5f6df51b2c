//! The failure a reduction must keep (`--keep PREDICATE`), and its evaluation on a
//! candidate program. Everything that parses, checks or runs a candidate happens on a
//! large-stack thread under `catch_unwind`, so a panicking candidate is a verdict, never
//! a crash of the reducer.

use oracle::check::check_module;
use oracle::eval::literal::print_value;
use oracle::eval::run::{on_big_stack, outcome, same_outcome};
use oracle::eval::Limits;
use oracle::eval::{ErrorKind, Value};
use spec_model::grammar::IRModule;
use spec_model::text::parse_module;
use std::any::Any;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::process::{Command, Stdio};

/// What must stay true of every candidate.
#[derive(Clone, Debug, PartialEq)]
pub enum Predicate {
    /// `diff-exec`: checks clean, and the outcome on the module as written differs from
    /// the outcome on the normalized module.
    DiffExec,
    /// `diff-engine`: checks clean, and the optimized engine disagrees with the oracle
    /// (a poisoned run does not count).
    DiffEngine,
    /// `error=KIND`: checks clean, and the run ends in that run-time error.
    Error(ErrorKind),
    /// `value`: checks clean, and the run returns a value.
    Value,
    /// `check=RULE`: static checking reports a diagnostic (error or warning) of RULE.
    Check(String),
    /// `panic` or `panic=TEXT`: parsing, checking, normalization or evaluation panics
    /// (with a message containing TEXT).
    Panic(Option<String>),
    /// `cmd:SHELL`: `sh -c SHELL reduce CANDIDATE` exits with status 0.
    Cmd(String),
    /// `against:CMD`: the implementation whose adapter `sh -c CMD` starts diverges from
    /// the oracle on the candidate, in the way it diverges on the input (the same
    /// action and outcome classes: `against::Divergence::base`).
    Against(String),
}

impl Predicate {
    /// Reads `diff-exec`, `error=KIND`, `value`, `check=RULE`, `panic[=TEXT]`, `cmd:SHELL`.
    pub fn parse(s: &str) -> Result<Predicate, String> {
        if let Some(cmd) = s.strip_prefix("cmd:") {
            if cmd.trim().is_empty() {
                return Err("`cmd:` needs a shell command, e.g. `cmd:grep -q multiply \"$1\"`".into());
            }
            return Ok(Predicate::Cmd(cmd.to_string()));
        }
        if let Some(cmd) = s.strip_prefix("against:") {
            if cmd.trim().is_empty() {
                return Err("`against:` needs the command that starts an adapter (conformance/PROTOCOL.md)".into());
            }
            return Ok(Predicate::Against(cmd.to_string()));
        }
        let (key, arg) = match s.split_once('=') {
            Some((k, a)) => (k.trim(), Some(a.trim())),
            None => (s.trim(), None),
        };
        match (key, arg) {
            ("diff-exec", None) => Ok(Predicate::DiffExec),
            ("diff-engine", None) => Ok(Predicate::DiffEngine),
            ("value", None) => Ok(Predicate::Value),
            ("panic", None) => Ok(Predicate::Panic(None)),
            ("panic", Some(text)) if !text.is_empty() => Ok(Predicate::Panic(Some(text.to_string()))),
            ("error", Some(kind)) => ErrorKind::from_name(kind).map(Predicate::Error).ok_or_else(|| {
                let kinds: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
                format!("`{kind}` is not a run-time error kind ({})", kinds.join(", "))
            }),
            ("check", Some(rule)) if !rule.is_empty() => Ok(Predicate::Check(rule.to_string())),
            _ => Err(format!(
                "unknown predicate `{s}` (expected diff-exec, diff-engine, error=KIND, value, check=RULE, panic, panic=TEXT cmd:SHELL or against:CMD)"
            )),
        }
    }

    /// Does the predicate evaluate a `run:` call?
    pub fn needs_run(&self) -> bool {
        matches!(self, Predicate::DiffExec | Predicate::DiffEngine | Predicate::Error(_) | Predicate::Value)
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::DiffExec => write!(f, "diff-exec"),
            Predicate::DiffEngine => write!(f, "diff-engine"),
            Predicate::Error(k) => write!(f, "error={k}"),
            Predicate::Value => write!(f, "value"),
            Predicate::Check(r) => write!(f, "check={r}"),
            Predicate::Panic(None) => write!(f, "panic"),
            Predicate::Panic(Some(t)) => write!(f, "panic={t}"),
            Predicate::Cmd(c) => write!(f, "cmd:{c}"),
            Predicate::Against(c) => write!(f, "against:{c}"),
        }
    }
}

/// The text of a panic's payload.
pub fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".to_string()
    }
}

/// Runs `f` on a large-stack thread, catching panics: `Err(message)` if it panicked
/// (or the thread could not start).
pub fn guarded<T: Send>(f: impl FnOnce() -> T + Send) -> Result<T, String> {
    on_big_stack(|| catch_unwind(AssertUnwindSafe(f)).map_err(|p| format!("panic: {}", panic_message(&*p))))
        .and_then(|r| r)
}

/// Does a diagnostic list name `rule` (as its code, or as a note naming the rule that
/// decided it, like the corpus runner's `expect: invalid RULE`)?
pub fn names_rule(ds: &[spec_model::diagnostic::Diagnostic], rule: &str) -> bool {
    let cause = format!("{rule}:");
    ds.iter().any(|d| d.code == rule || d.notes.iter().any(|n| n.starts_with(&cause)))
}

/// The outcome of `call` on the checked, normalized module; `None` if the program is
/// refused statically or the call does not parse.
fn checked_outcome(m: &IRModule, call: &str) -> Option<(IRModule, Result<Value, ErrorKind>)> {
    let report = check_module(m, false);
    if report.has_errors() {
        return None;
    }
    let n = report.normalized?;
    let o = outcome(&n, call, Limits::default()).ok()?;
    Some((n, o))
}

/// Is a value stated by an `.rx` literal (not a closure, object, null or function)?
pub fn is_literal(v: &Value) -> bool {
    !print_value(v).contains('<')
}

/// Evaluates an in-process predicate (every kind but `cmd:`) on a printed candidate.
pub fn holds_in_process(pred: &Predicate, text: &str, call: Option<&str>, tol: f64) -> bool {
    let text = text.to_string();
    let call = call.map(str::to_string);
    let pred = pred.clone();
    let r = on_big_stack(move || {
        let run = || -> bool {
            let Ok(m) = parse_module(&text) else { return false };
            match &pred {
                Predicate::Check(rule) => names_rule(&check_module(&m, rule.starts_with("NF-")).diagnostics, rule),
                Predicate::Error(kind) => {
                    let Some(call) = &call else { return false };
                    matches!(checked_outcome(&m, call), Some((_, Err(k))) if k == *kind)
                }
                Predicate::Value => {
                    let Some(call) = &call else { return false };
                    matches!(checked_outcome(&m, call), Some((_, Ok(_))))
                }
                Predicate::DiffExec => {
                    let Some(call) = &call else { return false };
                    let Some((_, normalized)) = checked_outcome(&m, call) else { return false };
                    let Ok(written) = outcome(&m, call, Limits::default()) else { return false };
                    same_outcome(&written, &normalized, tol).is_err()
                }
                Predicate::DiffEngine => {
                    let Some(call) = &call else { return false };
                    let Some((n, _)) = checked_outcome(&m, call) else { return false };
                    matches!(
                        oracle::engine::compare_call(&n, call, Limits::default()),
                        Ok(oracle::engine::compare::Verdict::Differ(_))
                    )
                }
                Predicate::Panic(_) => {
                    // Everything the pipeline does, so that a panic anywhere shows.
                    if let Some(call) = &call {
                        if checked_outcome(&m, call).is_some() {
                            let _ = outcome(&m, call, Limits::default());
                        }
                    }
                    false
                }
                Predicate::Cmd(_) | Predicate::Against(_) => false,
            }
        };
        match catch_unwind(AssertUnwindSafe(run)) {
            Ok(b) => b,
            Err(p) => match &pred {
                Predicate::Panic(None) => true,
                Predicate::Panic(Some(t)) => panic_message(&*p).contains(t.as_str()),
                _ => false,
            },
        }
    });
    r.unwrap_or(false)
}

/// Runs `sh -c CMD reduce PATH`; does it exit with status 0?
pub fn holds_cmd(cmd: &str, path: &Path) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .arg("reduce")
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
