//! The optimized engine (`optimized`, which shares no code with the interpreter) behind
//! `oracle eval --engine` and `oracle test --engine`: a call runs there, its arguments
//! and result converted between the two engines' values ([`convert`]).

pub mod compare;
pub mod convert;

use crate::eval::run::expected_outcome;
use crate::eval::value::{ErrorKind, RuntimeError, Value};
use crate::eval::{Limits, Machine, Scope};
use spec_model::grammar::{ExprKind, IRModule};
use spec_model::text::parse_expr_in_module;

/// Which engine runs a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// The reference interpreter.
    Oracle,
    /// The optimized engine.
    Optimized,
    /// Both, comparing their outcomes.
    Both,
}

/// A call's outcome in the optimized engine, in the oracle's terms.
pub struct Outcome {
    /// The value (a closure, which has no oracle counterpart, as an opaque object named
    /// after it), or the error.
    pub result: Result<Value, RuntimeError>,
    /// The value as the engine prints it (an `.rx` literal).
    pub shown: Option<String>,
    pub printed: Vec<String>,
    /// The bytes of the largest tensor the run allocated.
    pub largest_tensor_bytes: usize,
    /// The PrimFuncs native code was asked for but the code generator declined, and why.
    pub interpreted: Vec<(String, String)>,
}

/// An engine error as the oracle's (the kinds have the same names).
pub fn runtime_error(e: &optimized::Error) -> RuntimeError {
    let kind = ErrorKind::from_name(e.kind.name()).unwrap_or(ErrorKind::Crash);
    RuntimeError::new(kind, e.rule, e.message.clone(), e.span)
}

/// The callee and the arguments of a call written in `.rx` (`main(R.const(...), ...)`);
/// the arguments are evaluated by the oracle in the module's global scope.
pub fn call_parts(m: &IRModule, call: &str) -> Result<(String, Vec<Value>), String> {
    let e = parse_expr_in_module(m, call).map_err(|e| format!("`{call}`: {}", e.0.message))?;
    let ExprKind::Call(c) = &e.kind else { return Err(format!("`{call}` is not a call")) };
    let ExprKind::GlobalVar(gv) = &c.op.kind else {
        return Err(format!("`{call}` does not call a global function"));
    };
    let mut mach = Machine::new(m, Limits::default());
    let mut args = Vec::with_capacity(c.args.len());
    for a in &c.args {
        args.push(mach.eval(a, &Scope::default()).map_err(|e| format!("an argument of `{call}`: {e}"))?);
    }
    Ok((gv.name.clone(), args))
}

/// Runs `entry(args)` in the optimized engine on `m` (a module the checker accepted).
pub fn run(m: &IRModule, entry: &str, args: &[Value], limits: optimized::Limits) -> Result<Outcome, String> {
    run_with(m, entry, args, limits, optimized::TirBackend::from_env())
}

/// [`run`] with the PrimFuncs on `tir`.
pub fn run_with(
    m: &IRModule,
    entry: &str,
    args: &[Value],
    limits: optimized::Limits,
    tir: optimized::TirBackend,
) -> Result<Outcome, String> {
    let exe = optimized::Engine::compile_with(m, tir).map_err(|e| e.to_string())?;
    let memory = optimized::Memory::new(usize::MAX);
    let global = |name: &str| exe.global(name);
    let args = args
        .iter()
        .map(|a| {
            convert::from_oracle_with(a, &memory, &global).ok_or_else(|| format!("{} has no engine value", a.kind()))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let o = exe.run(entry, &args, limits).map_err(|e| e.to_string())?;
    let shown = o.result.as_ref().ok().map(|v| optimized::machine::print::print_value(&exe, v));
    let result = match &o.result {
        Ok(v) => Ok(convert::to_oracle(v).unwrap_or_else(|| Value::Object(shown.clone().unwrap_or_default().into()))),
        Err(e) => Err(runtime_error(e)),
    };
    let interpreted = exe.interpreted_prim_funcs();
    Ok(Outcome { result, shown, printed: o.printed, largest_tensor_bytes: o.largest_tensor_bytes, interpreted })
}

/// The engine's limits matching the oracle's.
pub fn limits(l: Limits) -> optimized::Limits {
    optimized::Limits { fuel: l.fuel, max_depth: l.max_depth, memory: l.memory, ..optimized::Limits::default() }
}

/// What a corpus `run:`/`expect:` pair finds in the optimized engine on `prepared`
/// (the file's checked module, or why it is refused): `Ok(())` or why not. The
/// expected value is evaluated by the oracle (it is a literal).
/// With `native_tir: Some(allowed)`, a PrimFunc the code generator declines is a
/// failure too unless `allowed` names it (the corpus's kernels are ones native code
/// must cover, but for those a file's `x-interpreted` key names: kernels native code
/// declines by design, such as a float loop variable).
pub fn check_run(
    prepared: &Result<IRModule, String>,
    call: &str,
    expect: Result<&str, ErrorKind>,
    tol: f64,
    native_tir: Option<&[String]>,
) -> Result<(), String> {
    let m = prepared.as_ref().map_err(|e| format!("the program is refused:\n{e}"))?;
    let (entry, args) = call_parts(m, call)?;
    // Buffers a kernel promises to overwrite start as 0xFF bytes, so one it leaves
    // partly unwritten cannot pass on a pooled zero; kernels split across two threads
    // from 64 output elements on (as in the fuzz invariants), so that the corpus's
    // small tensors cross the splitting code too.
    let limits = optimized::Limits { scribble: true, threads: 2, parallel_min: 64, ..optimized::Limits::default() };
    // PrimFuncs run both as native code and in the engine's TIR interpreter, so that
    // the corpus judges both backends.
    let has_tir = m.functions.iter().any(|(_, f)| matches!(f, spec_model::grammar::BaseFunc::Tir(_)));
    let native = run(m, &entry, &args, limits)?;
    if let Some(allowed) = native_tir {
        if let Some((name, why)) = native.interpreted.iter().find(|(n, _)| !allowed.contains(n)) {
            return Err(format!("PrimFunc `{name}` falls back to the interpreter: {why}"));
        }
        // A name the code generator does not decline would exempt nothing, and would
        // hide a report that lists too little.
        if let Some(stale) = allowed.iter().find(|a| !native.interpreted.iter().any(|(n, _)| n == *a)) {
            return Err(format!(
                "x-interpreted names `{stale}`, which is not a PrimFunc native code declines (a stale key)"
            ));
        }
    }
    expected_outcome(m, native.result, expect, tol)?;
    // Again split across three threads: a split in three has a middle part, which a
    // split in two lacks (a part's bounds computed wrongly there alone show here).
    let three = optimized::Limits { threads: 3, ..limits };
    let got = run(m, &entry, &args, three)?.result;
    expected_outcome(m, got, expect, tol).map_err(|e| format!("split across three threads: {e}"))?;
    if has_tir {
        let got = run_with(m, &entry, &args, limits, optimized::TirBackend::Interpreter)?.result;
        expected_outcome(m, got, expect, tol).map_err(|e| format!("with the TIR interpreted: {e}"))?;
    }
    Ok(())
}

/// Runs `call` (an `.rx` call of a global) on `m` in both engines and compares the
/// outcomes (`compare`), the tolerance scaled by the largest tensor involved (or made).
pub fn compare_call(m: &IRModule, call: &str, limits: Limits) -> Result<compare::Verdict, String> {
    let (entry, args) = call_parts(m, call)?;
    let mut mach = Machine::new(m, limits);
    let f = mach.global(&entry).cloned().ok_or_else(|| format!("no function `{entry}`"))?;
    let copies = args.iter().map(deep_copy).collect();
    let oracle = mach.apply(&f, copies, spec_model::Span::SYNTHETIC).map_err(|e| e.kind);
    let ran = run(m, &entry, &args, self::limits(limits))?;
    let engine = ran.result.map_err(|e| e.kind);
    // A sum over an intermediate tensor is reassociated too: its bytes bound its length.
    let elements = args.iter().chain(oracle.iter()).chain(engine.iter()).map(largest_tensor).max().unwrap_or(0);
    let elements = elements.max(ran.largest_tensor_bytes);
    Ok(compare::compare(&oracle, &engine, compare::Tolerance::for_elements(elements)))
}

/// A value with new tensors (a packed function may write an argument in place).
fn deep_copy(v: &Value) -> Value {
    match v {
        Value::Tensor(t) => Value::tensor(t.borrow().clone()),
        Value::Tuple(fs) => Value::Tuple(std::rc::Rc::new(fs.iter().map(deep_copy).collect())),
        other => other.clone(),
    }
}

/// The largest element count of a tensor in `v`.
pub fn largest_tensor(v: &Value) -> usize {
    match v {
        Value::Tensor(t) => t.borrow().data.len(),
        Value::Tuple(fs) => fs.iter().map(largest_tensor).max().unwrap_or(0),
        _ => 0,
    }
}
