//! Running a program: static checks first (an ill-formed program is refused with its
//! diagnostics), then evaluation of a call on the normalized module, on a thread with
//! a large stack so that the call-depth limit, not the native stack, bounds recursion.

use super::literal::{print_value, values_equal};
use super::machine::{Limits, Machine, Scope};
use super::value::{ErrorKind, RuntimeError, Value};
use crate::check::{check_module, render_errors};
use spec_model::grammar::IRModule;
use spec_model::text::{parse_expr_in_module, parse_module};

/// The native stack of an evaluation thread. A Relax call nests a bounded number of
/// native frames (expression nesting is limited by the parser), so this bounds the
/// call depth that fits; `Limits::max_depth` is capped by [`MAX_DEPTH`].
const STACK_BYTES: usize = 1 << 29;

/// The largest call depth allowed (fits [`STACK_BYTES`] with a wide margin).
pub const MAX_DEPTH: usize = 10_000;

thread_local! {
    /// On an evaluation thread: the address of a local near the base of its stack.
    static BIG_STACK_BASE: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` on a thread with a large stack (an error if the system refuses the thread).
/// Already on such a thread, with most of its stack unused, `f` runs there: nested
/// runs (a corpus file's checks and `run:` lines) share the thread's prover and cache.
pub fn on_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> Result<T, String> {
    let here = 0u8;
    let here = std::ptr::addr_of!(here) as usize;
    if BIG_STACK_BASE.get().is_some_and(|base| base.abs_diff(here) < STACK_BYTES / 8) {
        return Ok(f());
    }
    // The caller's budgets, scoped ones included, hold on the new thread too.
    let budgets = spec_model::limits::current();
    std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn_scoped(s, || {
                let base = 0u8;
                BIG_STACK_BASE.set(Some(std::ptr::addr_of!(base) as usize));
                budgets.scope(f)
            })
            .map_err(|e| format!("cannot start the evaluation thread: {e}"))?;
        Ok(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
}

/// Parses and checks `src`; returns the normalized module or the rendered errors.
pub fn prepare(name: &str, src: &str) -> Result<IRModule, String> {
    let m = parse_module(src).map_err(|e| e.render(name, src))?;
    let report = check_module(&m, false);
    if report.has_errors() {
        return Err(render_errors(&report.diagnostics, name, src));
    }
    report.normalized.ok_or_else(|| format!("{name}: the program does not normalize"))
}

/// Evaluates the `.rx` expression `src` (e.g. `main(R.const([1, 2], "int32"))`) in the
/// module's global scope.
pub fn eval_text(mach: &mut Machine, src: &str) -> Result<Result<Value, RuntimeError>, String> {
    let e = parse_expr_in_module(mach.module, src)
        .map_err(|e| format!("error[{}]: {} (in `{}`)", e.0.code, e.0.message, excerpt(src, e.0.span.lo as usize)))?;
    Ok(mach.eval(&e, &Scope::default()))
}

/// Up to 60 characters of `src` around byte `at`: an argument may be megabytes long.
pub fn excerpt(src: &str, at: usize) -> String {
    let chars: Vec<(usize, char)> = src.char_indices().collect();
    let here = chars.iter().position(|&(i, _)| i >= at).unwrap_or(chars.len());
    let (from, to) = (here.saturating_sub(30), (here + 30).min(chars.len()));
    let cut: String = chars[from..to].iter().map(|&(_, c)| c).collect();
    format!("{}{cut}{}", if from > 0 { "…" } else { "" }, if to < chars.len() { "…" } else { "" })
}

/// What a run printed and returned, as text (crosses threads).
pub struct RunText {
    /// The value as an `.rx` literal, or the error.
    pub result: Result<String, RuntimeError>,
    pub printed: Vec<String>,
    pub trace: Vec<String>,
}

pub(crate) fn limits_capped(l: Limits) -> Limits {
    Limits { max_depth: l.max_depth.min(MAX_DEPTH), ..l }
}

/// Writes the tensors of `v` as `.npy` files under `dir`: `result.npy` for a tensor,
/// `result_0.npy`, `result_1_0.npy`, ... for tuple fields; returns the paths.
pub fn write_tensors(v: &Value, dir: &std::path::Path, stem: &str) -> Result<Vec<String>, String> {
    match v {
        Value::Tensor(t) => {
            let path = dir.join(format!("{stem}.npy"));
            let bytes = super::npy::write_npy(&t.borrow())?;
            std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(vec![path.display().to_string()])
        }
        Value::Tuple(vs) => {
            let mut out = Vec::new();
            for (i, f) in vs.iter().enumerate() {
                out.extend(write_tensors(f, dir, &format!("{stem}_{i}"))?);
            }
            Ok(out)
        }
        _ => Ok(Vec::new()),
    }
}

/// An argument of `oracle eval`: an `.rx` literal, or an array read from an `.npy` file
/// (it becomes a tensor as it is, without a round trip through text).
pub enum Arg {
    Literal(String),
    Array(spec_model::grammar::NDArray),
}

/// What `oracle eval` found: each engine's run, and with both, whether they agree.
pub struct EvalReport {
    pub oracle: Option<RunText>,
    pub engine: Option<RunText>,
    /// With both engines: agreement, or why not (poisoned runs agree on nothing).
    pub verdict: Option<crate::engine::compare::Verdict>,
}

/// The values of `args` (literals evaluated in the module's global scope).
pub(crate) fn arg_values(m: &IRModule, args: &[Arg]) -> Result<Vec<Value>, String> {
    let mut mach = Machine::new(m, Limits::default());
    args.iter()
        .map(|a| match a {
            Arg::Array(arr) => Ok(Value::tensor(arr.clone())),
            Arg::Literal(text) => match eval_text(&mut mach, text)? {
                Ok(v) => Ok(v),
                Err(e) => Err(format!("{e} (in the argument `{}`)", excerpt(text, 0))),
            },
        })
        .collect()
}

/// The entry is a name looked up among the module's functions, never source text.
pub(crate) fn no_function(name: &str, entry: &str) -> String {
    format!("error[name]: {name}: the module has no function `{}`", excerpt(&entry.escape_debug().to_string(), 0))
}

/// How `oracle eval` runs a call.
#[derive(Clone, Copy)]
pub struct EvalOptions<'a> {
    pub engine: crate::engine::Engine,
    pub limits: Limits,
    /// The optimized engine's `Limits::threads`.
    pub threads: usize,
    /// Record the rules the oracle fires.
    pub trace: bool,
    /// Write the result's tensors as `.npy` files in this directory.
    pub out: Option<&'a std::path::Path>,
}

/// Checks `src` and calls `entry` on `args` in the chosen engine(s); with `out`, writes
/// the result's tensors there as `.npy` (the oracle's when both run).
pub fn run_eval(name: &str, src: &str, entry: &str, args: &[Arg], options: EvalOptions) -> Result<EvalReport, String> {
    let EvalOptions { engine, limits, threads, trace, out } = options;
    use crate::engine::{compare, Engine};
    on_big_stack(|| {
        let m = prepare(name, src)?;
        let limits = limits_capped(limits);
        let mut report = EvalReport { oracle: None, engine: None, verdict: None };
        let mut results = Vec::new();
        // A sum over an intermediate tensor is reassociated too: its bytes widen the tolerance.
        let mut largest = 1 << 20;
        if engine != Engine::Optimized {
            let values = arg_values(&m, args)?;
            let mut mach = Machine::new(&m, limits);
            if trace {
                mach.trace = Some(Vec::new());
            }
            let f = mach.global(entry).cloned().ok_or_else(|| no_function(name, entry))?;
            let r = mach.apply(&f, values, spec_model::Span::SYNTHETIC);
            report.oracle = Some(RunText {
                result: r.as_ref().map(print_value).map_err(Clone::clone),
                printed: mach.printed,
                trace: mach.trace.unwrap_or_default(),
            });
            results.push(r);
        }
        if engine != Engine::Oracle {
            let values = arg_values(&m, args)?;
            // Comparing the two: scribble over what the engine's kernels promise to overwrite.
            let scribble = engine == Engine::Both;
            let limits = optimized::Limits { threads, scribble, ..crate::engine::limits(limits) };
            let o = crate::engine::run(&m, entry, &values, limits)?;
            largest = largest.max(o.largest_tensor_bytes);
            report.engine = Some(RunText {
                result: o.shown.clone().ok_or(()).or_else(|_| o.result.clone().map(|v| print_value(&v))),
                printed: o.printed,
                trace: Vec::new(),
            });
            results.push(o.result);
        }
        if let [a, b] = results.as_slice() {
            let (a, b) = (a.clone().map_err(|e| e.kind), b.clone().map_err(|e| e.kind));
            report.verdict = Some(compare::compare(&a, &b, compare::Tolerance::for_elements(largest)));
        }
        if let (Some(dir), Some(Ok(v))) = (out, results.first()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            write_tensors(v, dir, "result")?;
        }
        Ok(report)
    })?
}

/// What a corpus `run:`/`expect:` pair found on `prepared` (the file's module, parsed
/// and checked once for all its lines, or why it is refused): `Ok(())` or why not, and
/// the rules fired. Runs on the caller's stack (the corpus runner gives each file a
/// big one).
pub fn check_run(
    prepared: &Result<IRModule, String>,
    call: &str,
    expect: Result<&str, ErrorKind>,
    tol: f64,
) -> (Result<(), String>, Vec<String>) {
    let m = match prepared {
        Ok(m) => m,
        Err(e) => return (Err(format!("the program is refused:\n{e}")), Vec::new()),
    };
    let mut mach = Machine::new(m, Limits::default());
    mach.trace = Some(Vec::new());
    let got = match eval_text(&mut mach, call) {
        Ok(r) => r,
        Err(e) => return (Err(format!("run: {e}")), Vec::new()),
    };
    let verdict = expected_outcome(m, got, expect, tol);
    (verdict, mach.trace.unwrap_or_default())
}

/// Whether an outcome `got` of a run on `m` is the expected value (an `.rx` literal,
/// equal within `tol`) or error kind (either engine's run, in the oracle's values).
pub fn expected_outcome(
    m: &IRModule,
    got: Result<Value, RuntimeError>,
    expect: Result<&str, ErrorKind>,
    tol: f64,
) -> Result<(), String> {
    match (got, expect) {
        (Ok(v), Ok(want)) => {
            let mut mach = Machine::new(m, Limits::default());
            match eval_text(&mut mach, want) {
                Ok(Ok(w)) if values_equal(&v, &w, tol) => Ok(()),
                Ok(Ok(w)) => Err(format!("expected {}, got {}", print_value(&w), print_value(&v))),
                Ok(Err(e)) => Err(format!("the expected value does not evaluate: {e}")),
                Err(e) => Err(format!("expect: {e}")),
            }
        }
        (Ok(v), Err(kind)) => Err(format!("expected error {kind}, got {}", print_value(&v))),
        (Err(e), Err(kind)) if e.kind == kind => Ok(()),
        (Err(e), _) => Err(format!("unexpected {e}")),
    }
}

/// The outcome of `call` on `m`: its value or its error kind (what the differential
/// tester compares).
pub fn outcome(m: &IRModule, call: &str, limits: Limits) -> Result<Result<Value, ErrorKind>, String> {
    let mut mach = Machine::new(m, limits);
    Ok(eval_text(&mut mach, call)?.map_err(|e| e.kind))
}

/// Do two outcomes agree: equal values (floats within `tol`) or the same error kind?
/// A `Crash` is a bug, never agreement.
pub fn same_outcome(a: &Result<Value, ErrorKind>, b: &Result<Value, ErrorKind>, tol: f64) -> Result<(), String> {
    match (a, b) {
        (Err(ErrorKind::Crash), _) | (_, Err(ErrorKind::Crash)) => Err("a run crashed (a bug)".into()),
        (Ok(x), Ok(y)) if values_equal(x, y, tol) => Ok(()),
        (Err(x), Err(y)) if x == y => Ok(()),
        _ => {
            let show = |o: &Result<Value, ErrorKind>| o.as_ref().map_or_else(|k| format!("error {k}"), print_value);
            Err(format!("as written {}, normalized {}", show(a), show(b)))
        }
    }
}

/// Normalization preserves meaning: evaluating `call` on the module as written and on
/// its normalized form gives equal values (floats within `tol`) or the same error kind.
/// `Ok(())` when they agree (or the program is refused statically, so has no meaning).
pub fn check_normalization_preserves(name: &str, src: &str, call: &str, tol: f64) -> Result<(), String> {
    on_big_stack(|| {
        let Ok(written) = parse_module(src) else { return Ok(()) };
        let Ok(normalized) = prepare(name, src) else { return Ok(()) };
        let a = outcome(&written, call, Limits::default())?;
        let b = outcome(&normalized, call, Limits::default())?;
        same_outcome(&a, &b, tol)
    })?
}
