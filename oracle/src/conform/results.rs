//! What a conformance run found (`oracle conform`): per request, per file, per rule,
//! and the summary. The JSON results file and the HTML page are both made from these.

use serde::{Deserialize, Serialize};

/// The implementation under test, as its adapter's handshake names it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Implementation {
    /// The name given on the command line (`--impl NAME=CMD`).
    pub name: String,
    /// The command that starts its adapter.
    pub command: String,
    /// From the handshake (empty when the handshake failed).
    pub implementation: String,
    pub implementation_version: String,
    pub dialect: String,
}

/// The outcome classes of PROTOCOL.md: the adapter's five and the runner's three.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutcomeClass {
    Accepted,
    Rejected,
    Value,
    RuntimeError,
    Unsupported,
    Crash,
    Timeout,
    ProtocolError,
}

impl OutcomeClass {
    pub fn name(self) -> &'static str {
        match self {
            OutcomeClass::Accepted => "accepted",
            OutcomeClass::Rejected => "rejected",
            OutcomeClass::Value => "value",
            OutcomeClass::RuntimeError => "runtime-error",
            OutcomeClass::Unsupported => "unsupported",
            OutcomeClass::Crash => "crash",
            OutcomeClass::Timeout => "timeout",
            OutcomeClass::ProtocolError => "protocol-error",
        }
    }
}

/// One side's outcome of a request: its class and a one-line text (the value as an
/// `.rx` literal, the message, or the error kind and message).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Seen {
    pub outcome: OutcomeClass,
    pub text: String,
}

/// A verdict: for a request, a file or a rule's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Pass,
    Fail,
    Skip,
    /// A failure listed in the implementation's `expected-failures.txt`.
    ExpectedFail,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Skip => "skip",
            Verdict::ExpectedFail => "expected-fail",
        }
    }
}

/// One request sent for a file, and how it was judged.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RequestResult {
    /// `check` or `run`.
    pub action: String,
    /// For `run`: the call as the corpus writes it (`main(R.const(...))`).
    pub call: Option<String>,
    /// What the reference semantics (the oracle) says.
    pub spec: Seen,
    /// What the implementation did.
    pub implementation: Seen,
    /// `pass`, `fail` or `skip` (never `expected-fail`: that is per file).
    pub verdict: Verdict,
    /// Why it failed or was skipped (empty on a pass).
    pub why: String,
    /// Milliseconds between sending the request and reading the answer.
    pub millis: u64,
}

/// One corpus file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileResult {
    /// As given on the command line, `/`-separated (`corpus/eval/sem_10_seq.rx`).
    pub path: String,
    /// The spec section the file belongs to (its rules' first ID's section, e.g.
    /// "Well-Formedness"; see `sections`).
    pub section: String,
    pub rules: Vec<String>,
    pub description: String,
    pub verdict: Verdict,
    /// The first failing request's reason, or the skip's.
    pub why: String,
    pub requests: Vec<RequestResult>,
    /// The file's text, and the text sent (different when the dialect is not `rx`).
    pub program: String,
    pub sent: String,
}

/// Pass/fail/skip counts (of files).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
    pub expected_fail: usize,
}

impl Counts {
    pub fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Pass => self.pass += 1,
            Verdict::Fail => self.fail += 1,
            Verdict::Skip => self.skip += 1,
            Verdict::ExpectedFail => self.expected_fail += 1,
        }
    }

    pub fn total(&self) -> usize {
        self.pass + self.fail + self.skip + self.expected_fail
    }
}

/// A rule's row: the files that name it, counted by verdict.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RuleRow {
    pub rule: String,
    pub section: String,
    /// The rule's one-line summary from the spec.
    pub summary: String,
    pub counts: Counts,
    /// The files naming the rule that did not pass (paths).
    pub failing: Vec<String>,
}

/// A section's row (the README's pass rate per spec section).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SectionRow {
    pub section: String,
    pub counts: Counts,
}

/// The whole run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Results {
    /// The protocol version spoken (`1`).
    pub protocol: u32,
    pub implementation: Implementation,
    /// The paths given on the command line.
    pub paths: Vec<String>,
    /// Files counted by verdict, and `run:` files (those with a run request) likewise.
    pub files: Counts,
    pub run_files: Counts,
    /// Requests by the implementation's outcome class, e.g. `{"crash": 2}`.
    pub outcomes: std::collections::BTreeMap<String, usize>,
    /// Failures not in `expected-failures.txt` (paths), and listed files that passed.
    pub new_failures: Vec<String>,
    pub fixed: Vec<String>,
    /// Rules in spec order (then `OP-` rules by name), sections in spec order.
    pub rules: Vec<RuleRow>,
    pub sections: Vec<SectionRow>,
    pub results: Vec<FileResult>,
    /// Seconds the run took.
    pub seconds: f64,
}
