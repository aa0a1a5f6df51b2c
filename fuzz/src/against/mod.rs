//! Differential testing of another implementation (`fuzz-smoke --against NAME=CMD`,
//! `fuzz-reduce --keep against:CMD`): a program goes through the implementation's
//! adapter (conformance/PROTOCOL.md) and each answer is judged against the oracle,
//! exactly as `oracle conform` judges corpus files.

use crate::stats::Stats;
use conformance_protocol::Request;
use oracle::conform::adapter::{clip, Adapter};
use oracle::conform::results::{Seen, Verdict};
use oracle::conform::spec::{judge, plan_file, seen};
use oracle::eval::run::on_big_stack;
use spec_model::grammar::IRModule;
use std::time::Duration;

/// A disagreement between the implementation and the oracle on one request.
#[derive(Clone, Debug)]
pub struct Divergence {
    /// `action: spec-outcome[rule or kind] -> implementation-outcome`: what stays the
    /// same while a reduction shrinks the program.
    pub base: String,
    pub action: String,
    pub call: Option<String>,
    pub spec: Seen,
    pub implementation: Seen,
    pub why: String,
}

/// An implementation under test: its adapter, kept running across programs.
pub struct Against {
    pub adapter: Adapter,
    pub timeout: Duration,
    next_id: u64,
}

impl Against {
    pub fn new(command: &str, timeout: Duration) -> Against {
        Against { adapter: Adapter::new(command), timeout, next_id: 0 }
    }

    /// The implementation's name and version, from its handshake (starting it if needed).
    pub fn describe(&mut self) -> Result<String, String> {
        if self.adapter.handshake.is_none() {
            self.adapter.start()?;
        }
        let h = self.adapter.handshake.as_ref().ok_or("no handshake")?;
        Ok(format!("{} {} (dialect {})", h.implementation, h.implementation_version, h.dialect))
    }

    /// Sends the corpus-format program `file` (a `check`, and a `run` per `run:` line)
    /// and returns the requests on which the implementation and the oracle disagree.
    pub fn divergences(&mut self, name: &str, file: &str) -> Vec<Divergence> {
        let timeout = self.timeout;
        let first_id = self.next_id;
        let adapter = &mut self.adapter;
        let name = name.to_string();
        let file = file.to_string();
        let found = on_big_stack(move || {
            let plan = plan_file(&file);
            let dialect = adapter.handshake.as_ref().map(|h| h.dialect.clone()).unwrap_or_else(|| "rx".into());
            let Ok(program) = oracle::conform::program_in(&dialect, &file, &plan) else { return (Vec::new(), 0) };
            let mut out = Vec::new();
            let mut sent = 0;
            for p in &plan.requests {
                let Ok(args) = &p.args else { continue };
                let req = Request {
                    id: first_id + sent,
                    action: p.action,
                    name: name.clone(),
                    program: program.clone(),
                    entry: p.entry.clone(),
                    args: args.clone(),
                    fuel: None,
                };
                sent += 1;
                let reply = adapter.request(&req, timeout);
                let (verdict, why) = judge(p, &reply, plan.tolerance);
                if verdict != Verdict::Fail {
                    continue;
                }
                let spec = p.spec.seen();
                let implementation = seen(&reply);
                out.push(Divergence {
                    base: base_signature(p.action.name(), &spec, &implementation),
                    action: p.action.name().into(),
                    call: p.call.clone(),
                    spec,
                    implementation,
                    why,
                });
            }
            (out, sent)
        });
        let (out, sent) = found.unwrap_or_default();
        self.next_id += sent + 1;
        out
    }
}

/// The signature kept during reduction: the action, the spec's outcome class with its
/// rule (a rejection) or error kind, and the implementation's outcome class.
fn base_signature(action: &str, spec: &Seen, implementation: &Seen) -> String {
    let tag = match spec.outcome.name() {
        "rejected" | "runtime-error" => {
            let word = spec.text.split([':', ' ', ']']).find(|w| !w.is_empty()).unwrap_or("");
            let word = word.trim_start_matches("error[");
            format!("[{word}]")
        }
        _ => String::new(),
    };
    format!(
        "{action}: {}{tag} -> {}{}",
        spec.outcome.name(),
        implementation.outcome.name(),
        message_key(implementation)
    )
}

/// The gist of the implementation's message, so that two causes of one outcome class
/// ("fails to build: local functions" and "fails to build: bool comparison") are two
/// kinds: the start of its text, without long numbers (ids, addresses, values) and
/// without what an adapter appends after `stderr:`.
fn message_key(implementation: &Seen) -> String {
    let o = implementation.outcome.name();
    if !matches!(o, "rejected" | "runtime-error" | "crash" | "protocol-error") {
        return String::new();
    }
    let text = implementation.text.split("stderr:").next().unwrap_or("");
    let mut key = String::new();
    let mut digits = String::new();
    for c in text.chars().take(120) {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        if !digits.is_empty() {
            key.push('N');
            digits.clear();
        }
        key.push(if c.is_whitespace() { ' ' } else { c });
    }
    let key: String = key.chars().take(70).collect();
    format!(" ({})", key.trim())
}

/// The full signature of a reduced divergence: the base and the operators the reduced
/// program still calls (two divergences of one kind on different operators are two).
pub fn signature(base: &str, reduced: &IRModule) -> String {
    let mut stats = Stats::default();
    stats.add_program(reduced);
    let ops: Vec<&str> = stats.ops.keys().map(|o| o.name()).collect();
    if ops.is_empty() {
        base.to_string()
    } else {
        format!("{base} on {}", ops.join("+"))
    }
}

/// A file name for a signature.
pub fn slug(signature: &str) -> String {
    let mut s: String =
        signature.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    clip(s.trim_matches('-'), 100).trim_end_matches('…').to_string()
}
pub mod campaign;
