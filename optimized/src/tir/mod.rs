//! The engine's own executor for TIR `PrimFunc`s: what `R.call_tir` runs (OP-call_tir),
//! in destination-passing style.
//!
//! A PrimFunc is lowered once ([`TirFunc::compile`], [`lower`]): variables and buffers
//! become numbered slots, literals values; the machine ([`exec`]) then runs the
//! lowered tree on a frame of slots. The meaning is the reference interpreter's
//! (proofs-notes/evaluation.md, E-13), written afresh:
//!
//! * Buffer parameters (and bare handles) take the tensors in order, scalar parameters
//!   the scalars. A buffer's dtype and rank must be its tensor's; a dimension that is a
//!   variable not bound before binds from the tensor (scalar parameters first, then
//!   buffers in order); every other dimension is evaluated afterwards and must equal
//!   the tensor's. Any mismatch is an `OpError`.
//! * Loops run sequentially; blocks bind their axes, test `T.where`, check every axis
//!   against its domain, run `T.init()` when every reduce axis is at its domain start,
//!   then the body. `T.reads`/`T.writes` have no effect.
//! * Integer arithmetic is exact and `IntegerOverflow` outside the dtype; a zero divisor
//!   is `DivisionByZero`; an index out of bounds is an `OpError`; stores convert to the
//!   buffer's dtype as `T.Cast` does.
//! * Fuel (LIMIT-fuel): one unit per statement run, per loop iteration and per element
//!   of a `T.alloc_buffer`.
//! * Aliasing: the same tensor may back several parameters; every load and store
//!   borrows the tensor's storage only for that access, so writes through one buffer are
//!   seen through the others, as in the reference interpreter.
//!
//! Every error has rule `OP-call_tir` (fuel: `LIMIT-fuel`, memory: `LIMIT-memory`).

mod exec;
pub mod lower;
pub mod native;
pub mod num;
mod overwrite;
#[cfg(test)]
mod tests;

use crate::buffer::Memory;
use crate::error::{Error, ErrorKind, Result};
use crate::tensor::Tensor;
use lower::{Dim, Lowered};
use num::{fit, round_to, supported, Fault, Val};
use spec_model::Span;
use std::fmt::Display;
use std::rc::Rc;

const RULE: &str = "OP-call_tir";

/// Why a run stops: boxed, so that results on the hot path stay small.
type Stop = Box<Error>;
type R<T> = std::result::Result<T, Stop>;

/// The most elements a `T.alloc_buffer` may have (more is an `OpError`).
pub(crate) const MAX_LOCAL_ELEMENTS: u64 = 1 << 26;

/// A PrimFunc prepared once per module.
#[derive(Debug)]
pub struct TirFunc {
    name: String,
    low: Lowered,
    /// The native code, or why the interpreter runs this function.
    native: std::result::Result<native::NativeFunc, native::Unsupported>,
    /// Per tensor parameter: every successful run writes each element before reading it.
    overwritten: Box<[bool]>,
    backend: TirBackend,
}

/// How the engine runs a PrimFunc.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TirBackend {
    /// Native code where the code generator accepts the function, else the interpreter.
    #[default]
    Native,
    /// The interpreter for every function (to compare the two backends: the
    /// differential tester runs each `call_tir` program both ways).
    Interpreter,
}

impl TirBackend {
    /// The backend `RELAX_TIR` asks for: `interp` for the interpreter, else native.
    pub fn from_env() -> TirBackend {
        match std::env::var("RELAX_TIR") {
            Ok(v) if v == "interp" => TirBackend::Interpreter,
            _ => TirBackend::Native,
        }
    }
}

impl TirFunc {
    /// Lowers `f` (OP-call_tir) for `backend`. Never fails: anything malformed becomes a
    /// run-time `OpError` where the reference interpreter raises one.
    pub fn compile(f: &spec_model::grammar::PrimFunc, name: &str, backend: TirBackend) -> TirFunc {
        let low = lower::lower(f);
        let native = match backend {
            TirBackend::Native => native::compile(&low),
            TirBackend::Interpreter => Err(native::Unsupported("the interpreter was asked for".into())),
        };
        if let (Err(why), true) = (&native, std::env::var_os("RELAX_TIR_EXPLAIN").is_some()) {
            eprintln!("PrimFunc `{name}` is interpreted: {}", why.0);
        }
        let overwritten = overwrite::overwritten(&low);
        TirFunc { name: name.to_string(), low, native, overwritten, backend }
    }

    /// Of the bounds, overflow and domain checks native code would make, how many the
    /// interval analysis proved (and left out), and how many there are.
    pub fn checks_proved(&self) -> Option<(u32, u32)> {
        self.native.as_ref().ok().map(|n| {
            let (proved, kept) = n.checks_elided;
            (proved, proved + kept)
        })
    }

    /// The backend this function was compiled for.
    pub fn backend(&self) -> TirBackend {
        self.backend
    }

    /// Why this function is interpreted, if it is.
    pub fn interpreted_because(&self) -> Option<&str> {
        self.native.as_ref().err().map(|u| u.0.as_str())
    }

    /// Whether tensor parameter `i` may start with unspecified contents: every run that
    /// succeeds writes each of its elements before reading it (so `call_tir` need not
    /// zero-fill that output).
    pub fn overwrites(&self, i: usize) -> bool {
        self.overwritten.get(i).copied().unwrap_or(false)
    }

    /// The lowered form (for a native backend).
    pub fn lowered(&self) -> &Lowered {
        &self.low
    }

    /// Runs on `tensors` (buffer parameters in order: inputs then outputs) and `scalars`
    /// (the scalar parameters, call_tir's tir_vars), spending `fuel` (one unit per
    /// statement executed and per loop iteration, and per element of an alloc_buffer;
    /// `FuelExhausted`, LIMIT-fuel, when it runs out), allocating scratch buffers from
    /// `memory`. Errors have rule OP-call_tir.
    pub fn run(
        &self,
        tensors: &[Rc<Tensor>],
        scalars: &[i64],
        fuel: &mut u64,
        span: Span,
        memory: &Rc<Memory>,
    ) -> Result<()> {
        let mut m = Machine {
            f: self,
            span,
            fuel,
            memory,
            vars: vec![None; self.low.var_names.len()],
            bufs: vec![None; self.low.buf_names.len()],
            axes: Vec::new(),
        };
        m.bind(tensors, scalars).map_err(|e| *e)?;
        if let Ok(code) = &self.native {
            let frame = native::Frame { vars: std::mem::take(&mut m.vars), bufs: std::mem::take(&mut m.bufs) };
            let name = &self.name;
            let error = |kind, at: Span, message: String| {
                Box::new(Error::new(kind, RULE, format!("in PrimFunc `{name}`: {message}"), at))
            };
            if let Some(r) = code.run(&self.low, &frame, m.fuel, memory, &error, span, name) {
                crate::stats::record(crate::stats::Counter::TirNative);
                return r.map_err(|e| *e);
            }
            (m.vars, m.bufs) = (frame.vars, frame.bufs);
        }
        crate::stats::record(match self.backend {
            TirBackend::Native => crate::stats::Counter::TirInterpreted,
            TirBackend::Interpreter => crate::stats::Counter::TirInterpretedOnRequest,
        });
        m.exec_all(&self.low.body).map_err(|e| *e)
    }
}

/// One call's state: the frame of variable and buffer slots.
struct Machine<'a> {
    f: &'a TirFunc,
    /// The `call_tir` site, for errors not located in the PrimFunc.
    span: Span,
    fuel: &'a mut u64,
    memory: &'a Rc<Memory>,
    /// Scalar variables by slot; `None` until bound (a binding outlives its scope, as
    /// in the reference interpreter).
    vars: Vec<Option<Val>>,
    /// Buffers by slot: a parameter's tensor or a local buffer's storage.
    bufs: Vec<Option<Rc<Tensor>>>,
    /// Scratch for a block's axis values (reused, so a block allocates nothing).
    axes: Vec<i128>,
}

impl Machine<'_> {
    fn error(&self, kind: ErrorKind, span: Span, message: impl Display) -> Stop {
        let span = if span.is_synthetic() { self.span } else { span };
        Box::new(Error::new(kind, RULE, format!("in PrimFunc `{}`: {message}", self.f.name), span))
    }

    fn fault(&self, span: Span, f: &Fault) -> Stop {
        self.error(f.kind, span, &f.message)
    }

    fn at<T>(&self, span: Span, r: std::result::Result<T, Box<Fault>>) -> R<T> {
        r.map_err(|f| self.fault(span, &f))
    }

    fn mismatch(&self, message: impl Display) -> Stop {
        self.error(ErrorKind::OpError, self.span, message)
    }

    /// Spends `n` units of fuel, or fails with `FuelExhausted` (LIMIT-fuel), leaving none.
    fn charge(&mut self, n: u64) -> R<()> {
        match self.fuel.checked_sub(n) {
            Some(left) => {
                *self.fuel = left;
                Ok(())
            }
            None => {
                *self.fuel = 0;
                let message = format!("out of fuel while running PrimFunc `{}`", self.f.name);
                Err(Box::new(Error::new(ErrorKind::FuelExhausted, "LIMIT-fuel", message, self.span)))
            }
        }
    }

    /// Binds the parameters (OP-call_tir): scalars, then buffers (their unbound
    /// variable dimensions in order), then checks every other dimension.
    fn bind(&mut self, tensors: &[Rc<Tensor>], scalars: &[i64]) -> R<()> {
        let low = &self.f.low;
        if low.tensors.len() != tensors.len() || low.scalars.len() != scalars.len() {
            return Err(self.mismatch(format!(
                "it takes {} buffers and {} scalars, but the call passes {} tensors and {} scalars",
                low.tensors.len(),
                low.scalars.len(),
                tensors.len(),
                scalars.len()
            )));
        }
        for (p, &s) in low.scalars.iter().zip(scalars) {
            let d = p.dt;
            let v = if !supported(d) {
                None
            } else if d.is_float() {
                Some(Val::float(round_to(s as f64, d), d))
            } else if d.is_bool() {
                (s == 0 || s == 1).then(|| Val::bool(s == 1))
            } else {
                fit(s.into(), d).ok()
            };
            let Some(v) = v else {
                let name = &low.var_names[p.var as usize];
                return Err(self.mismatch(format!("scalar {s} cannot be passed to parameter `{name}: {d}`")));
            };
            self.vars[p.var as usize] = Some(v);
        }
        for (j, (p, t)) in low.tensors.iter().zip(tensors).enumerate() {
            let Some(b) = &p.buffer else { continue };
            let name = &low.buf_names[b.buf as usize];
            if t.data().is_none() {
                return Err(self.mismatch(format!("tensor {j} is busy")));
            }
            if t.dtype().data_type() != b.dt {
                return Err(self.mismatch(format!(
                    "tensor {j} has dtype {} but buffer `{name}` has dtype {}",
                    t.dtype(),
                    b.dt
                )));
            }
            if t.rank() != b.dims.len() {
                return Err(self.mismatch(format!(
                    "tensor {j} has rank {} but buffer `{name}` has rank {}",
                    t.rank(),
                    b.dims.len()
                )));
            }
            for (k, (dim, &actual)) in b.dims.iter().zip(t.shape()).enumerate() {
                let Dim::Bind(var, d) = *dim else { continue };
                match fit(actual.into(), d) {
                    Ok(x) if d.is_int() || d.is_uint() => self.vars[var as usize] = Some(x),
                    _ => {
                        return Err(self.mismatch(format!(
                            "dimension {k} of tensor {j} ({actual}) cannot bind `{}: {d}` of buffer `{name}`",
                            low.var_names[var as usize]
                        )))
                    }
                }
            }
            self.bufs[b.buf as usize] = Some(t.clone());
        }
        for (j, (p, t)) in low.tensors.iter().zip(tensors).enumerate() {
            let Some(b) = &p.buffer else { continue };
            for (k, (dim, &actual)) in b.dims.iter().zip(t.shape()).enumerate() {
                let Dim::Check(e) = dim else { continue };
                let expected = self.eval_int(e, "a buffer dimension")?;
                if expected != i128::from(actual) {
                    let name = &low.buf_names[b.buf as usize];
                    return Err(self.mismatch(format!(
                        "dimension {k} of buffer `{name}` is {expected} but tensor {j} has {actual}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// A value that must be an integer (a bound, an index, a dimension).
    #[inline]
    fn eval_int(&self, e: &lower::Ex, what: &str) -> R<i128> {
        // A bound variable (a loop index, an axis) or a literal is the common case.
        let quick = match e.kind {
            lower::ExKind::Var(s) => self.vars[s as usize],
            lower::ExKind::Const(v) => Some(v),
            _ => None,
        };
        match quick.and_then(Val::int_value) {
            Some(i) => Ok(i),
            None => self.eval_int_slow(e, what),
        }
    }

    fn eval_int_slow(&self, e: &lower::Ex, what: &str) -> R<i128> {
        let v = self.eval(e)?;
        v.int_value().ok_or_else(|| {
            let message = format!("{what} must be an integer, got {} ({})", v.as_f64(), v.dt);
            self.error(ErrorKind::OpError, e.span, message)
        })
    }
}
