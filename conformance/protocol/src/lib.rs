//! The adapter protocol of `conformance/PROTOCOL.md` (relax-conformance/1): the
//! handshake, requests, responses and the value encoding, as Rust types with their
//! JSON forms. The runner (`oracle conform`, `fuzz-smoke --against`) and the adapters
//! written in Rust use it; an adapter in another language follows PROTOCOL.md.

mod value;

pub use value::{WirePrim, WireValue};

use serde::{Deserialize, Serialize};

/// The protocol's name in the handshake.
pub const PROTOCOL: &str = "relax-conformance";
/// The protocol's major version.
pub const VERSION: u32 = 1;

/// The first line an adapter writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Handshake {
    pub protocol: String,
    pub version: u32,
    pub implementation: String,
    pub implementation_version: String,
    /// `rx` or `tvm-0.27`.
    pub dialect: String,
    pub actions: Vec<String>,
}

impl Handshake {
    pub fn new(implementation: &str, implementation_version: &str, dialect: &str) -> Handshake {
        Handshake {
            protocol: PROTOCOL.into(),
            version: VERSION,
            implementation: implementation.into(),
            implementation_version: implementation_version.into(),
            dialect: dialect.into(),
            actions: vec!["check".into(), "run".into()],
        }
    }

    /// Why the runner cannot speak to this adapter, if it cannot.
    pub fn refusal(&self) -> Option<String> {
        if self.protocol != PROTOCOL {
            return Some(format!("the handshake names protocol `{}`, not `{PROTOCOL}`", self.protocol));
        }
        if self.version != VERSION {
            return Some(format!("the adapter speaks version {}, the runner {VERSION}", self.version));
        }
        None
    }
}

/// What a request asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Check,
    Run,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::Check => "check",
            Action::Run => "run",
        }
    }
}

/// A request line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: u64,
    pub action: Action,
    pub name: String,
    pub program: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<WireValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel: Option<u64>,
}

/// The adapter's outcome classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Accepted,
    Rejected,
    Value,
    RuntimeError,
    Unsupported,
}

/// A response line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub id: u64,
    pub outcome: Outcome,
    /// The implementation's message (`rejected`, `runtime-error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Why the request cannot be expressed (`unsupported`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<WireValue>,
    /// The spec rule ID of a rejection, when the implementation knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The spec error kind of a run-time error, when the implementation knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed: Option<Vec<String>>,
}

impl Response {
    fn bare(id: u64, outcome: Outcome) -> Response {
        Response { id, outcome, message: None, reason: None, value: None, rule: None, kind: None, printed: None }
    }

    pub fn accepted(id: u64) -> Response {
        Response::bare(id, Outcome::Accepted)
    }

    pub fn rejected(id: u64, message: String, rule: Option<String>) -> Response {
        Response { message: Some(message), rule, ..Response::bare(id, Outcome::Rejected) }
    }

    pub fn value(id: u64, value: WireValue, printed: Vec<String>) -> Response {
        Response { value: Some(value), printed: Some(printed), ..Response::bare(id, Outcome::Value) }
    }

    pub fn runtime_error(id: u64, message: String, kind: Option<String>, printed: Vec<String>) -> Response {
        Response { message: Some(message), kind, printed: Some(printed), ..Response::bare(id, Outcome::RuntimeError) }
    }

    pub fn unsupported(id: u64, reason: String) -> Response {
        Response { reason: Some(reason), ..Response::bare(id, Outcome::Unsupported) }
    }

    /// Why this is not a well-formed answer to request `id`, if it is not.
    pub fn malformed(&self, id: u64) -> Option<String> {
        if self.id != id {
            return Some(format!("the answer has id {}, the request {id}", self.id));
        }
        if self.outcome == Outcome::Value && self.value.is_none() {
            return Some("a `value` outcome without a value".into());
        }
        None
    }
}

/// One JSON line (no newline inside: JSON strings escape theirs).
pub fn to_line<T: Serialize>(t: &T) -> String {
    serde_json::to_string(t).unwrap_or_else(|e| format!("{{\"unserializable\": \"{e}\"}}"))
}

/// Reads one line as `T`.
pub fn from_line<T: for<'de> Deserialize<'de>>(line: &str) -> Result<T, String> {
    serde_json::from_str(line.trim_end()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;
