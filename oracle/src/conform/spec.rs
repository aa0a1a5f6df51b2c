//! The reference side of a conformance run: what the oracle says each request sent
//! for a corpus file must give (PROTOCOL.md "How outcomes are judged"), and the
//! judging of an implementation's reply against it.

use super::adapter::{clip, Reply};
use super::results::{OutcomeClass, Seen, Verdict};
use crate::check::check_module;
use crate::corpus::{parse_metadata, Expectation, DEFAULT_TOLERANCE};
use crate::engine::call_parts;
use crate::eval::literal::{print_value, values_equal};
use crate::eval::value::{PrimScalar, RuntimeError, Value};
use crate::eval::{Limits, Machine};
use conformance_protocol::{Action, Outcome, Response, WirePrim, WireValue};
use spec_model::grammar::IRModule;
use spec_model::text::parse_module;
use std::rc::Rc;

/// What the reference semantics says of one request.
pub enum SpecOutcome {
    Accepted,
    /// Rejected statically: the first error's rule and its message.
    Rejected {
        rule: String,
        message: String,
    },
    Value(Value),
    Error(RuntimeError),
}

impl SpecOutcome {
    pub fn seen(&self) -> Seen {
        match self {
            SpecOutcome::Accepted => Seen { outcome: OutcomeClass::Accepted, text: "accepted".into() },
            SpecOutcome::Rejected { rule, message } => {
                Seen { outcome: OutcomeClass::Rejected, text: format!("{rule}: {}", clip(message, 400)) }
            }
            SpecOutcome::Value(v) => Seen { outcome: OutcomeClass::Value, text: clip(&print_value(v), 2000) },
            SpecOutcome::Error(e) => Seen { outcome: OutcomeClass::RuntimeError, text: clip(&e.to_string(), 400) },
        }
    }
}

/// A request to send, and what it must give.
pub struct Planned {
    pub action: Action,
    /// The corpus's text of the call (`run`).
    pub call: Option<String>,
    pub entry: Option<String>,
    /// The arguments, or why they cannot be sent.
    pub args: Result<Vec<WireValue>, String>,
    pub spec: SpecOutcome,
}

/// A corpus file made ready to send.
pub struct FilePlan {
    pub rules: Vec<String>,
    pub description: String,
    pub tolerance: f64,
    /// The parsed program, when it parses.
    pub module: Option<IRModule>,
    /// Its normal form, when the oracle accepts it.
    pub normalized: Option<IRModule>,
    /// The file's step budget (`fuel:`), sent with its `run` requests in place of the
    /// default: the spec's outcomes are computed under it.
    pub fuel: Option<u64>,
    pub requests: Vec<Planned>,
}

/// The requests for `src`: a `check`, then (when the oracle accepts the program) a
/// `run` per `run:` line.
pub fn plan_file(src: &str) -> FilePlan {
    let md = parse_metadata(src).unwrap_or_default();
    let tolerance = md.tolerance.unwrap_or(DEFAULT_TOLERANCE);
    let mut plan = FilePlan {
        rules: md.rules.clone(),
        description: md.description.clone(),
        tolerance,
        module: None,
        normalized: None,
        fuel: md.fuel,
        requests: Vec::new(),
    };
    let check = |spec| Planned { action: Action::Check, call: None, entry: None, args: Ok(vec![]), spec };
    let m = match parse_module(src) {
        Ok(m) => m,
        Err(e) => {
            let d = &e.0;
            plan.requests.push(check(SpecOutcome::Rejected { rule: d.code.clone(), message: d.message.clone() }));
            return plan;
        }
    };
    let report = check_module(&m, false);
    plan.module = Some(m);
    if let Some(d) = report.diagnostics.iter().find(|d| d.is_error()) {
        plan.requests.push(check(SpecOutcome::Rejected { rule: d.code.clone(), message: d.message.clone() }));
        return plan;
    }
    plan.requests.push(check(SpecOutcome::Accepted));
    let Some(n) = report.normalized else { return plan };
    for e in &md.expectations {
        if let Expectation::RunValue { call, .. } | Expectation::RunError { call, .. } = e {
            // The spec's outcome under the file's fuel, which the request carries too
            // (the protocol has no memory budget: that stays the default here).
            let fuel = md.fuel.unwrap_or(spec_model::limits::current().fuel);
            let budgets = spec_model::limits::Budgets { fuel, ..spec_model::limits::current() };
            plan.requests.push(budgets.scope(|| plan_run(&n, call)));
        }
    }
    plan.normalized = Some(n);
    plan
}

fn plan_run(m: &IRModule, call: &str) -> Planned {
    let planned = |entry, args, spec| Planned { action: Action::Run, call: Some(call.to_string()), entry, args, spec };
    let (entry, args) = match call_parts(m, call) {
        Ok(p) => p,
        Err(e) => {
            let err =
                RuntimeError::new(crate::eval::ErrorKind::Crash, "corpus", e.clone(), spec_model::Span::SYNTHETIC);
            return planned(None, Err(e), SpecOutcome::Error(err));
        }
    };
    let wire = args.iter().map(to_wire).collect::<Result<Vec<_>, _>>();
    let mut mach = Machine::new(m, Limits::default());
    let spec = match mach.global(&entry).cloned() {
        Some(f) => match mach.apply(&f, args, spec_model::Span::SYNTHETIC) {
            Ok(v) => SpecOutcome::Value(v),
            Err(e) => SpecOutcome::Error(e),
        },
        None => SpecOutcome::Error(RuntimeError::new(
            crate::eval::ErrorKind::Crash,
            "TY-2",
            format!("no function `{entry}`"),
            spec_model::Span::SYNTHETIC,
        )),
    };
    planned(Some(entry), wire, spec)
}

/// An oracle value as a protocol argument.
pub fn to_wire(v: &Value) -> Result<WireValue, String> {
    Ok(match v {
        Value::Tensor(t) => WireValue::Tensor(t.borrow().clone()),
        Value::Tuple(fs) => WireValue::Tuple(fs.iter().map(to_wire).collect::<Result<_, _>>()?),
        Value::Shape(s) => WireValue::Shape(s.to_vec()),
        Value::Prim(p) => WireValue::Prim(match *p {
            PrimScalar::Int(i, d) => WirePrim::Int(i, d),
            PrimScalar::Float(f, d) => WirePrim::Float(f, d),
            PrimScalar::Bool(b) => WirePrim::Bool(b),
        }),
        Value::Str(s) => WireValue::Str(s.to_string()),
        Value::DataType(d) => WireValue::DType(*d),
        Value::Closure(c) if c.captured.is_empty() && c.self_var.is_none() => WireValue::Global(c.name.clone()),
        Value::PrimFunc(name, _) => WireValue::Global(name.to_string()),
        Value::Null => WireValue::Null,
        other => return Err(format!("{} cannot be sent as an argument", other.kind())),
    })
}

/// A protocol value as an oracle value (for comparing and printing); an opaque value
/// becomes an `Object` named after it.
pub fn from_wire(w: &WireValue) -> Value {
    match w {
        WireValue::Tensor(a) => Value::tensor(a.clone()),
        WireValue::Shape(s) => Value::Shape(Rc::new(s.clone())),
        WireValue::Prim(p) => Value::Prim(match *p {
            WirePrim::Int(i, d) => PrimScalar::Int(i, d),
            WirePrim::Float(f, d) => PrimScalar::Float(f, d),
            WirePrim::Bool(b) => PrimScalar::Bool(b),
        }),
        WireValue::Tuple(fs) => Value::Tuple(Rc::new(fs.iter().map(from_wire).collect())),
        WireValue::Str(s) => Value::Str(s.as_str().into()),
        WireValue::DType(d) => Value::DataType(*d),
        WireValue::Global(g) => Value::Object(format!("global {g}").into()),
        WireValue::Opaque(o) => Value::Object(o.as_str().into()),
        WireValue::Null => Value::Null,
    }
}

/// Whether the implementation's value is the oracle's: tensors, shapes, strings and
/// dtypes exactly (floats within `tol`); a prim value by its number (an implementation
/// may not know a returned scalar's dtype: TVM's VM hands back Python numbers); an
/// opaque value stands for any function or object.
pub fn agrees(spec: &Value, got: &WireValue, tol: f64) -> bool {
    match (spec, got) {
        (Value::Tuple(xs), WireValue::Tuple(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| agrees(x, y, tol))
        }
        (Value::Closure(_) | Value::PackedFunc(_) | Value::PrimFunc(..) | Value::Object(_), WireValue::Opaque(_)) => {
            true
        }
        (Value::Prim(x), WireValue::Prim(y)) => match (*x, *y) {
            (PrimScalar::Int(a, _), WirePrim::Int(b, _)) => a == b,
            (PrimScalar::Bool(a), WirePrim::Bool(b)) => a == b,
            (PrimScalar::Float(a, d), WirePrim::Float(b, _)) => {
                values_equal(&Value::Prim(PrimScalar::Float(a, d)), &Value::Prim(PrimScalar::Float(b, d)), tol)
            }
            _ => false,
        },
        _ => values_equal(spec, &from_wire(got), tol),
    }
}

/// The implementation's side of a reply, for the report.
pub fn seen(reply: &Reply) -> Seen {
    let (outcome, text) = match reply {
        Reply::Answer(r) => answer_seen(r),
        Reply::Crash(why) => (OutcomeClass::Crash, why.clone()),
        Reply::Timeout => (OutcomeClass::Timeout, "no answer in time".into()),
        Reply::ProtocolError(why) => (OutcomeClass::ProtocolError, why.clone()),
    };
    Seen { outcome, text: clip(&text, 2000) }
}

fn answer_seen(r: &Response) -> (OutcomeClass, String) {
    let msg = || r.message.clone().unwrap_or_default();
    let with = |tag: &Option<String>, m: String| match tag {
        Some(t) => format!("{t}: {m}"),
        None => m,
    };
    match r.outcome {
        Outcome::Accepted => (OutcomeClass::Accepted, "accepted".into()),
        Outcome::Rejected => (OutcomeClass::Rejected, with(&r.rule, msg())),
        Outcome::Value => {
            let text = r.value.as_ref().map(|v| print_value(&from_wire(v))).unwrap_or_default();
            (OutcomeClass::Value, text)
        }
        Outcome::RuntimeError => (OutcomeClass::RuntimeError, with(&r.kind, msg())),
        Outcome::Unsupported => (OutcomeClass::Unsupported, r.reason.clone().unwrap_or_default()),
    }
}

/// The verdict on one reply, and why it is not a pass.
pub fn judge(p: &Planned, reply: &Reply, tol: f64) -> (Verdict, String) {
    let fail = |why: String| (Verdict::Fail, why);
    let exhausted = matches!(&p.spec, SpecOutcome::Error(e) if e.kind.is_resource());
    let r = match reply {
        Reply::Answer(r) => r,
        Reply::Timeout if exhausted => return (Verdict::Pass, String::new()),
        other => {
            let s = seen(other);
            return fail(format!("{}: {}", s.outcome.name(), clip(&s.text, 300)));
        }
    };
    if r.outcome == Outcome::Unsupported {
        return (Verdict::Skip, format!("unsupported: {}", r.reason.clone().unwrap_or_default()));
    }
    // The oracle stopped at a limit, not at the program's meaning: a value computed past
    // it cannot be judged (proofs-notes/conformance.md C-5).
    if exhausted && r.outcome == Outcome::Value {
        return (Verdict::Skip, "the oracle ran out of its limits; a value past them has no verdict".into());
    }
    let got = answer_seen(r).0;
    match (&p.spec, r.outcome) {
        (SpecOutcome::Accepted, Outcome::Accepted) => (Verdict::Pass, String::new()),
        (SpecOutcome::Rejected { rule, .. }, Outcome::Rejected) => match &r.rule {
            Some(theirs) if theirs != rule => fail(format!("rejected for rule {theirs}; the spec's rule is {rule}")),
            _ => (Verdict::Pass, String::new()),
        },
        (SpecOutcome::Value(v), Outcome::Value) => match &r.value {
            Some(w) if agrees(v, w, tol) => (Verdict::Pass, String::new()),
            Some(w) => {
                fail(format!("expected {}, got {}", clip(&print_value(v), 300), clip(&print_value(&from_wire(w)), 300)))
            }
            None => fail("a value outcome without a value".into()),
        },
        (SpecOutcome::Error(e), Outcome::RuntimeError) => match &r.kind {
            Some(k) if k != e.kind.name() && !exhausted => {
                fail(format!("run-time error of kind {k}; the spec's is {}", e.kind.name()))
            }
            _ => (Verdict::Pass, String::new()),
        },
        (spec, _) => {
            let want = spec.seen();
            fail(format!(
                "expected {} ({}), got {}{}",
                want.outcome.name(),
                clip(&want.text, 200),
                got.name(),
                r.message.as_deref().map(|m| format!(": {}", clip(m, 300))).unwrap_or_default()
            ))
        }
    }
}
