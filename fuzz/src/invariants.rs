//! The invariants every generated program must satisfy (checked by the fuzz targets,
//! `fuzz-smoke` and `cargo test`), and the differential check `diff_exec`.

use crate::program::Module;
use optimized::TirBackend;
use oracle::check::check_module;
use oracle::engine::compare::{compare, Tolerance, Verdict};
use oracle::engine::largest_tensor;
use oracle::eval::literal::{print_value, values_equal};
use oracle::eval::value::{ErrorKind, Value};
use oracle::eval::{Limits, Machine};
use spec_model::alpha::alpha_eq_module;
use spec_model::grammar::{BaseFunc, IRModule, NDArray};
use spec_model::normal_form::{check_normal_form, normalize};
use spec_model::text::{check_round_trip_in, Dialect};
use spec_model::well_formed::check_well_formed;
use spec_model::Span;

/// Floats in the two outcomes `diff_exec` compares may differ by this much (absolute;
/// equal infinities are equal); NaN equals NaN. The slack is for engines that
/// reassociate floating-point arithmetic.
pub const TOLERANCE: f64 = oracle::corpus::DEFAULT_TOLERANCE;

/// The fuel of one run: generated programs are small, so a run that needs more is
/// taken to be a generator bug (non-termination).
pub const FUEL: u64 = 5_000_000;

/// How a run ended: a value, or a run-time error of some kind.
pub type Outcome = Result<Value, ErrorKind>;

/// A broken invariant: which one, and what was seen.
#[derive(Debug)]
pub struct Violation {
    pub invariant: &'static str,
    pub detail: String,
}

fn violation(invariant: &'static str, detail: impl Into<String>) -> Violation {
    Violation { invariant, detail: detail.into() }
}

/// What checking one program found.
pub struct Checked {
    /// The outcome on the program as written.
    pub outcome: Outcome,
    /// The run-time rules fired (the oracle's trace), with repetitions.
    pub fired: Vec<String>,
    /// The normalized program.
    pub normalized: IRModule,
    /// How the optimized engine compared: agreement, or a resource ran out (poisoned).
    pub engine: Verdict,
}

/// Well-formed; normalization idempotent, its output in normal form; printing and
/// re-parsing gives the same program; StructInfo checking reports no error; the
/// oracle terminates within its fuel without panicking; and the normalized program
/// has the same outcome (`diff_exec`).
pub fn check_program(m: &Module) -> Result<Checked, Violation> {
    let normalized = check_static(m)?;
    let (outcome, fired) = check_eval(m)?;
    let (outcome_n, _) = run(&normalized, &m.entry, &m.inputs, false).map_err(|e| violation("oracle runs", e))?;
    if let Err(e) = same_outcome(&outcome, &outcome_n) {
        return Err(violation("diff_exec: as written vs normalized", e));
    }
    let engine = check_engine(m, &outcome)?.verdict;
    Ok(Checked { outcome, fired, normalized, engine })
}

/// `diff_exec`: the optimized engine on the program as written agrees with the oracle
/// (`oracle::engine::compare`): the same value (floats within the tolerance of a
/// reordered reduction) and the same printed lines, or the same error kind; a run that
/// exhausts a resource is poisoned, not compared.
pub fn check_engine(m: &Module, oracle: &Outcome) -> Result<EngineCheck, Violation> {
    // What the oracle printed, computed once for both backends, and only if needed.
    let oracle_printed = std::cell::OnceCell::new();
    let native = check_engine_with(m, oracle, &oracle_printed, TirBackend::Native)?;
    // A program calling PrimFuncs runs again with the engine's TIR interpreter, so that
    // both of its backends are judged (native code is the default, so the interpreter
    // would otherwise run only what the code generator declines).
    if m.ir.functions.iter().any(|(_, f)| matches!(f, BaseFunc::Tir(_))) {
        check_engine_with(m, oracle, &oracle_printed, TirBackend::Interpreter)?;
    }
    Ok(native)
}

/// What [`check_engine`] found besides agreement.
pub struct EngineCheck {
    /// Agreement, or a resource ran out (poisoned).
    pub verdict: Verdict,
    /// The PrimFuncs native code was asked for but the code generator declined, with
    /// why (fuzz-smoke and the mutation gate want none).
    pub interpreted: Vec<(String, String)>,
}

fn check_engine_with(
    m: &Module,
    oracle: &Outcome,
    oracle_printed: &std::cell::OnceCell<Vec<String>>,
    tir: TirBackend,
) -> Result<EngineCheck, Violation> {
    let native = tir == TirBackend::Native;
    let (runs, values, printed_output) = if native {
        (
            "engine runs",
            "diff_exec: oracle vs optimized engine",
            "diff_exec: oracle vs optimized engine (printed output)",
        )
    } else {
        (
            "engine runs (TIR interpreted)",
            "diff_exec: oracle vs optimized engine (TIR interpreted)",
            "diff_exec: oracle vs optimized engine (TIR interpreted, printed output)",
        )
    };
    let run = run_engine(m, tir).map_err(|e| violation(runs, e))?;
    let engine = run.outcome;
    // Sums over an intermediate tensor (a reduction whose result is printed, or feeds a
    // small result) are reassociated too: the tolerance grows with the largest tensor
    // the run made, which its byte count bounds.
    let mut elements = m.inputs.iter().map(|a| a.data.len()).max().unwrap_or(0).max(run.largest_tensor_bytes);
    for o in [oracle, &engine].into_iter().flatten() {
        elements = elements.max(largest_tensor(o));
    }
    let verdict = compare(oracle, &engine, Tolerance::for_elements(elements));
    if let Verdict::Differ(why) = &verdict {
        let detail = format!("{why}: oracle {}, engine {}", show(oracle), run.error.unwrap_or_else(|| show(&engine)));
        return Err(violation(values, detail));
    }
    if verdict == Verdict::Agree {
        let oracle_printed = oracle_printed.get_or_init(|| run_printed(&m.ir, &m.entry, &m.inputs).1);
        if !oracle::engine::compare::printed_agree(oracle_printed, &run.printed, Tolerance::for_elements(elements)) {
            let detail = format!("printed {oracle_printed:?} vs {:?}", run.printed);
            return Err(violation(printed_output, detail));
        }
    }
    Ok(EngineCheck { verdict, interpreted: run.interpreted })
}

/// One run in the optimized engine.
pub struct EngineRun {
    /// The outcome, as the oracle's values.
    pub outcome: Outcome,
    pub printed: Vec<String>,
    /// The error in full.
    pub error: Option<String>,
    /// The bytes of the largest tensor it allocated.
    pub largest_tensor_bytes: usize,
    /// PrimFuncs interpreted although native code was asked for, and why.
    pub interpreted: Vec<(String, String)>,
}

/// Runs `entry` on the inputs in the optimized engine, its PrimFuncs on `tir`.
pub fn run_engine(m: &Module, tir: TirBackend) -> Result<EngineRun, String> {
    let exe = optimized::Engine::compile_with(&m.ir, tir).map_err(|e| e.to_string())?;
    let interpreted = exe.interpreted_prim_funcs();
    let memory = optimized::Memory::new(usize::MAX);
    let args = m
        .inputs
        .iter()
        .map(|a| optimized::Tensor::from_ndarray(a, &memory).ok().flatten().map(optimized::Value::tensor))
        .collect::<Option<Vec<_>>>()
        .ok_or("an input has no engine tensor")?;
    // Two threads from 64 elements on, so that generated tensors cross the splitting
    // of every threaded kernel (the split is where its bugs would be); outputs a kernel
    // promises to overwrite start scribbled over, so an element it skips cannot pass for zero.
    let limits =
        optimized::Limits { fuel: FUEL, threads: 2, parallel_min: 64, scribble: true, ..optimized::Limits::default() };
    let o = exe.run(&m.entry, &args, limits).map_err(|e| e.to_string())?;
    let outcome = match &o.result {
        Ok(v) => Ok(oracle::engine::convert::to_oracle(v)
            .unwrap_or_else(|| Value::Object(optimized::machine::print::print_value(&exe, v).into()))),
        Err(e) => Err(oracle::engine::runtime_error(e).kind),
    };
    Ok(EngineRun {
        outcome,
        printed: o.printed,
        error: o.result.err().map(|e| e.to_string()),
        largest_tensor_bytes: o.largest_tensor_bytes,
        interpreted,
    })
}

fn errors(ds: Vec<spec_model::diagnostic::Diagnostic>) -> Vec<String> {
    ds.iter().filter(|d| d.is_error()).map(|d| format!("{}: {}", d.code, d.message)).collect()
}

/// Printing (in each dialect) and re-parsing gives the same program, printed the same way.
pub fn check_print_parse(m: &Module) -> Result<(), Violation> {
    for d in Dialect::ALL {
        check_round_trip_in(&m.ir, d).map_err(|e| violation("print-parse round trip", format!("{d}: {e}")))?;
    }
    Ok(())
}

/// The static invariants; returns the normalized program.
pub fn check_static(m: &Module) -> Result<IRModule, Violation> {
    let wf = errors(check_well_formed(&m.ir));
    if !wf.is_empty() {
        return Err(violation("well-formed", wf.join("\n")));
    }
    check_print_parse(m)?;
    let normalized = normalize(&m.ir).map_err(|e| violation("normalizes", errors(e).join("\n")))?;
    let nf = check_normal_form(&normalized);
    if !nf.is_empty() {
        return Err(violation("normal form", errors(nf).join("\n")));
    }
    let again = normalize(&normalized).map_err(|e| violation("normalization idempotent", errors(e).join("\n")))?;
    alpha_eq_module(&normalized, &again).map_err(|e| violation("normalization idempotent", e))?;
    let si = errors(check_module(&m.ir, false).diagnostics);
    if !si.is_empty() {
        return Err(violation("StructInfo check", si.join("\n")));
    }
    Ok(normalized)
}

/// The oracle ends within its fuel and call depth, without an error a checked program
/// cannot raise (`Crash`): the outcome and the rules fired.
pub fn check_eval(m: &Module) -> Result<(Outcome, Vec<String>), Violation> {
    let (outcome, fired) = run(&m.ir, &m.entry, &m.inputs, true).map_err(|e| violation("oracle runs", e))?;
    match &outcome {
        Err(k @ (ErrorKind::FuelExhausted | ErrorKind::StackExhausted)) => {
            Err(violation("oracle terminates", format!("the run ended in {k}")))
        }
        Err(ErrorKind::Crash) => Err(violation("no Crash", "the oracle raised Crash on a checked program")),
        _ => Ok((outcome, fired)),
    }
}

/// What the oracle's run of `entry` on `inputs` printed, with its outcome.
fn run_printed(m: &IRModule, entry: &str, inputs: &[NDArray]) -> (Option<Outcome>, Vec<String>) {
    let mut mach = Machine::new(m, Limits { fuel: FUEL, ..Limits::default() });
    let Some(f) = mach.global(entry).cloned() else { return (None, Vec::new()) };
    let args = inputs.iter().map(|a| Value::tensor(a.clone())).collect();
    let r = mach.apply(&f, args, Span::SYNTHETIC).map_err(|e| e.kind);
    (Some(r), mach.printed)
}

/// Runs `entry` on fresh copies of `inputs` (packed functions may mutate arguments);
/// the outcome and, with `trace`, the rules fired. Runs on the caller's stack: a
/// generated program nests at most `Config::max_depth` expressions and calls at most
/// a few functions deep, far below what the default stack holds.
pub fn run(m: &IRModule, entry: &str, inputs: &[NDArray], trace: bool) -> Result<(Outcome, Vec<String>), String> {
    {
        let mut mach = Machine::new(m, Limits { fuel: FUEL, ..Limits::default() });
        if trace {
            mach.trace = Some(Vec::new());
        }
        let f = mach.global(entry).cloned().ok_or_else(|| format!("no function `{entry}`"))?;
        let args = inputs.iter().map(|a| Value::tensor(a.clone())).collect();
        let r = mach.apply(&f, args, Span::SYNTHETIC).map_err(|e| e.kind);
        Ok((r, mach.trace.unwrap_or_default()))
    }
}

/// The `diff_exec` comparison: equal values (integers and bools bitwise, floats within
/// [`TOLERANCE`], NaN equal to NaN; two closures count as equal, since functions cannot
/// be compared) or the same error kind. A `Crash` on either side is a bug there, never
/// agreement, even when both sides crash.
pub fn same_outcome(a: &Outcome, b: &Outcome) -> Result<(), String> {
    let agree = match (a, b) {
        (Err(ErrorKind::Crash), _) | (_, Err(ErrorKind::Crash)) => false,
        (Ok(x), Ok(y)) => equal(x, y),
        (Err(x), Err(y)) => x == y,
        _ => false,
    };
    if agree {
        Ok(())
    } else {
        Err(format!("{} vs {}", show(a), show(b)))
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Closure(_), Value::Closure(_)) => true,
        (Value::Tuple(x), Value::Tuple(y)) => x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| equal(p, q)),
        _ => values_equal(a, b, TOLERANCE),
    }
}

/// An outcome as text: the value as an `.rx` literal, or `error KIND`.
pub fn show(o: &Outcome) -> String {
    match o {
        Ok(v) => print_value(v),
        Err(k) => format!("error {k}"),
    }
}
