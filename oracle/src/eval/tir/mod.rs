//! Running the TIR `PrimFunc` subset in destination-passing style, for OP-call_tir.
//!
//! The spec leaves TIR to TVM; this interpreter follows TVM's meaning of each construct
//! with the project's interpretations (DESIGN.md): integer arithmetic is exact and an
//! error when a result leaves its dtype (never wraps), division or modulo by zero is an
//! error, floats are IEEE in their dtype. Every error is a `RuntimeError` of rule
//! `OP-call_tir`; the interpreter never panics.
//!
//! * Parameters: a parameter with a buffer (`T.Buffer`, or `T.handle` + `T.match_buffer`)
//!   or a bare `T.handle` takes the next tensor; any other parameter the next scalar.
//!   A buffer's dtype and rank must be the tensor's; a dimension that is a bare variable
//!   not bound yet binds it (scalar parameters bind first, then buffers in order);
//!   every other dimension is evaluated afterwards and must equal the tensor's.
//! * Loops run sequentially from `begin` to `end` (evaluated once).
//! * A block binds its axes to their bindings; if its `T.where` predicate is false
//!   nothing else happens; otherwise every axis must lie in its domain, `T.init()` runs
//!   when every reduce axis is at the start of its domain (TVM's `LowerInitBlock`), and
//!   the body runs. `T.reads`/`T.writes` have no effect.
//! * `T.alloc_buffer` allocates a fresh zero-filled buffer each time it runs.
//! * A store converts the value to the buffer's dtype as `T.Cast` does (TVMScript's
//!   `BufferStore` inserts that cast); a `Let` converts to the variable's dtype.
//! * Fuel: one unit per executed statement and per loop iteration, and one per element
//!   of a local buffer allocated.

mod expr;
#[cfg(test)]
mod tests;

use crate::bail;
use crate::eval::memory::Tracked;
use crate::eval::value::{ErrorKind, EvalResult, RuntimeError, TensorRef};
use expr::{cast, fit, round_to, store_elem, supported, zeros, Fault, Val};
use spec_model::grammar::tir::{Block, Buffer, IterKind, PrimFunc, Stmt, StmtKind, TirExprKind, TirParam};
use spec_model::grammar::{DataType, NDArray};
use spec_model::Span;
use std::collections::HashMap;
use std::fmt::Display;
use std::rc::Rc;

const RULE: &str = "OP-call_tir";

/// Calls `f` in destination-passing style (OP-call_tir): `tensors` are bound, in order, to the
/// buffer parameters (inputs then outputs), `scalars` to the scalar (int) parameters, in order.
/// Symbolic buffer shapes bind their variables from the actual tensors' shapes (first
/// occurrence binds, later occurrences must agree); a rank/dtype/shape mismatch is an
/// `OpError` with rule `OP-call_tir`. Executes the body, mutating the output tensors.
/// `fuel` is decremented once per executed statement (and loop iteration); at 0 it returns
/// `FuelExhausted` (limit `LIMIT-fuel`). Out-of-bounds buffer access -> `OpError`.
pub fn run_prim_func(
    f: &PrimFunc,
    name: &str,
    tensors: &[TensorRef],
    scalars: &[i64],
    span: Span,
    fuel: &mut u64,
) -> EvalResult<()> {
    let mut m = Machine { name, span, fuel, vars: HashMap::new(), buffers: HashMap::new() };
    m.bind_params(&f.params, tensors, scalars)?;
    m.exec_stmts(&f.body)
}

/// A buffer in scope: its storage (shared with the caller's tensor for a parameter)
/// and its shape.
struct Slot {
    tensor: TensorRef,
    shape: Vec<u64>,
}

/// The interpreter's state during one call.
struct Machine<'a> {
    name: &'a str,
    /// The `call_tir` site, for errors not located in the PrimFunc.
    span: Span,
    fuel: &'a mut u64,
    /// Scalar variables (parameters, shape variables, loop variables, block axes, lets)
    /// by `PrimVar` id.
    vars: HashMap<u64, Val>,
    /// Buffers by `Buffer` id.
    buffers: HashMap<u64, Slot>,
}

impl Machine<'_> {
    fn error(&self, kind: ErrorKind, span: Span, message: impl Display) -> RuntimeError {
        let span = if span.is_synthetic() { self.span } else { span };
        RuntimeError::new(kind, RULE, format!("in PrimFunc `{}`: {message}", self.name), span)
    }

    fn at<T>(&self, span: Span, r: Result<T, Fault>) -> EvalResult<T> {
        r.map_err(|f| self.error(f.kind, span, f.message))
    }

    fn mismatch(&self, message: impl Display) -> RuntimeError {
        self.error(ErrorKind::OpError, self.span, message)
    }

    /// Spends `n` units of fuel, or fails with `FuelExhausted` if fewer are left.
    fn charge(&mut self, n: u64) -> EvalResult<()> {
        if *self.fuel < n {
            *self.fuel = 0;
            bail!(
                ErrorKind::FuelExhausted,
                "LIMIT-fuel",
                self.span,
                "out of fuel while running PrimFunc `{}`",
                self.name
            );
        }
        *self.fuel -= n;
        Ok(())
    }

    /// Binds the parameters: scalars, then buffers (bare-variable dimensions bind in
    /// order), then checks every other dimension against the tensors' shapes.
    fn bind_params(&mut self, params: &[TirParam], tensors: &[TensorRef], scalars: &[i64]) -> EvalResult<()> {
        let (tensor_params, scalar_params): (Vec<&TirParam>, Vec<&TirParam>) =
            params.iter().partition(|p| p.buffer.is_some() || p.var.dtype() == DataType::handle());
        if tensor_params.len() != tensors.len() || scalar_params.len() != scalars.len() {
            return Err(self.mismatch(format!(
                "it takes {} buffers and {} scalars, but the call passes {} tensors and {} scalars",
                tensor_params.len(),
                scalar_params.len(),
                tensors.len(),
                scalars.len()
            )));
        }
        for (p, &s) in scalar_params.iter().zip(scalars) {
            let d = p.var.dtype();
            let v = if !supported(d) {
                None
            } else if d.is_float() {
                Some(Val::Float(round_to(s as f64, d), d))
            } else if d.is_bool() {
                (s == 0 || s == 1).then_some(Val::bool(s == 1))
            } else {
                fit(s as i128, d).ok()
            };
            let Some(v) = v else {
                return Err(self.mismatch(format!("scalar {s} cannot be passed to parameter `{}: {d}`", p.var.name())));
            };
            self.vars.insert(p.var.id(), v);
        }
        let mut later: Vec<(usize, &Buffer, usize, u64)> = Vec::new();
        for (j, (p, t)) in tensor_params.iter().zip(tensors).enumerate() {
            let Some(buf) = &p.buffer else { continue };
            let (dtype, shape) = match t.try_borrow() {
                Ok(a) => (a.dtype, a.shape.clone()),
                Err(_) => return Err(self.mismatch(format!("tensor {j} is busy"))),
            };
            if dtype != buf.dtype() {
                return Err(self.mismatch(format!(
                    "tensor {j} has dtype {dtype} but buffer `{}` has dtype {}",
                    buf.name(),
                    buf.dtype()
                )));
            }
            if shape.len() != buf.shape().len() {
                return Err(self.mismatch(format!(
                    "tensor {j} has rank {} but buffer `{}` has rank {}",
                    shape.len(),
                    buf.name(),
                    buf.shape().len()
                )));
            }
            for (k, (dim, &actual)) in buf.shape().iter().zip(&shape).enumerate() {
                match &*dim.kind {
                    TirExprKind::Var(v) if !self.vars.contains_key(&v.id()) => {
                        let d = v.dtype();
                        match fit(actual as i128, d) {
                            Ok(x) if d.is_int() || d.is_uint() => {
                                self.vars.insert(v.id(), x);
                            }
                            _ => {
                                return Err(self.mismatch(format!(
                                    "dimension {k} of tensor {j} ({actual}) cannot bind `{}: {d}` of buffer `{}`",
                                    v.name(),
                                    buf.name()
                                )))
                            }
                        }
                    }
                    _ => later.push((j, buf, k, actual)),
                }
            }
            self.buffers.insert(buf.id(), Slot { tensor: t.clone(), shape });
        }
        for (j, buf, k, actual) in later {
            let dim = &buf.shape()[k];
            let expected = self.eval_int(dim, "a buffer dimension")?;
            if expected != actual as i128 {
                return Err(self.mismatch(format!(
                    "dimension {k} of buffer `{}` is {expected} but tensor {j} has {actual}",
                    buf.name()
                )));
            }
        }
        Ok(())
    }

    fn exec_stmts(&mut self, stmts: &[Stmt]) -> EvalResult<()> {
        stmts.iter().try_for_each(|s| self.exec(s))
    }

    fn exec(&mut self, s: &Stmt) -> EvalResult<()> {
        self.charge(1)?;
        match &s.kind {
            StmtKind::For { var, begin, end, body, .. } => {
                let b = self.eval_int(begin, "a loop start")?;
                let e = self.eval_int(end, "a loop end")?;
                let mut i = b;
                while i < e {
                    self.charge(1)?;
                    let v = self.at(s.span, fit(i, var.dtype()))?;
                    self.vars.insert(var.id(), v);
                    self.exec_stmts(body)?;
                    i += 1;
                }
                Ok(())
            }
            StmtKind::BufferStore { buffer, indices, value } => {
                let v = self.eval(value)?;
                let v = self.at(value.span, cast(v, buffer.dtype()))?;
                let (slot, off) = self.locate(buffer, indices, s.span)?;
                let Ok(mut a) = slot.tensor.try_borrow_mut() else {
                    return Err(self.error(ErrorKind::OpError, s.span, format!("buffer `{}` is busy", buffer.name())));
                };
                if off >= a.data.len() {
                    return Err(self.error(
                        ErrorKind::OpError,
                        s.span,
                        format!("buffer `{}`'s storage is smaller than its shape", buffer.name()),
                    ));
                }
                store_elem(&mut a.data, off, v);
                Ok(())
            }
            StmtKind::IfThenElse { cond, then_body, else_body } => {
                let c = self.eval(cond)?.truthy();
                self.exec_stmts(if c { then_body } else { else_body })
            }
            StmtKind::Block(b) => self.block(b, s.span),
            StmtKind::AllocBuffer(buf) => self.alloc(buf, s.span),
            StmtKind::Let { var, value } => {
                let v = self.eval(value)?;
                let v = self.at(value.span, cast(v, var.dtype()))?;
                self.vars.insert(var.id(), v);
                Ok(())
            }
            StmtKind::Evaluate(e) => self.eval(e).map(|_| ()),
        }
    }

    /// A block: axes, predicate, domain check, `T.init()` at the start of every reduce
    /// axis, body.
    fn block(&mut self, b: &Block, span: Span) -> EvalResult<()> {
        let mut values = Vec::with_capacity(b.iter_vars.len());
        for iv in &b.iter_vars {
            let v = self.eval(&iv.binding)?;
            let v = self.at(iv.binding.span, cast(v, iv.var.dtype()))?;
            let Val::Int(x, _) = v else {
                return Err(self.error(
                    ErrorKind::OpError,
                    iv.binding.span,
                    format!("block `{}`: axis `{}` must be an integer", b.name, iv.var.name()),
                ));
            };
            self.vars.insert(iv.var.id(), v);
            values.push(x);
        }
        if let Some(p) = &b.predicate {
            if !self.eval(p)?.truthy() {
                return Ok(());
            }
        }
        let mut reduce_start = true;
        for (iv, &x) in b.iter_vars.iter().zip(&values) {
            let lo = self.eval_int(&iv.begin, "an axis domain")?;
            let hi = self.eval_int(&iv.end, "an axis domain")?;
            if x < lo || x >= hi {
                return Err(self.error(
                    ErrorKind::OpError,
                    span,
                    format!("block `{}`: axis `{}` = {x} is outside its domain [{lo}, {hi})", b.name, iv.var.name()),
                ));
            }
            if iv.kind == IterKind::Reduce && x != lo {
                reduce_start = false;
            }
        }
        if let (Some(init), true) = (&b.init, reduce_start) {
            self.exec_stmts(init)?;
        }
        self.exec_stmts(&b.body)
    }

    /// `T.alloc_buffer`: a fresh zero-filled buffer (one unit of fuel per element).
    fn alloc(&mut self, buf: &Buffer, span: Span) -> EvalResult<()> {
        let mut shape = Vec::with_capacity(buf.shape().len());
        for d in buf.shape() {
            let x = self.eval_int(d, "a buffer dimension")?;
            if x < 0 {
                return Err(self.error(
                    ErrorKind::OpError,
                    d.span,
                    format!("buffer `{}` has a negative dimension {x}", buf.name()),
                ));
            }
            shape.push(x as u64);
        }
        let count = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d)).unwrap_or(u64::MAX);
        // A resource limit (LIMIT-memory), not a meaning: the differential tester skips it.
        let at = if span.is_synthetic() { self.span } else { span };
        let what = || format!("in PrimFunc `{}`: buffer `{}` of shape {shape:?}", self.name, buf.name());
        crate::eval::memory::reserve(count, buf.dtype(), what, at)?;
        self.charge(count)?;
        let Some(data) = zeros(buf.dtype(), count as usize) else {
            return Err(self.error(
                ErrorKind::OpError,
                span,
                format!("buffer `{}` has dtype {}, which has no storage", buf.name(), buf.dtype()),
            ));
        };
        let tensor = Rc::new(Tracked::new(NDArray { dtype: buf.dtype(), shape: shape.clone(), data }));
        self.buffers.insert(buf.id(), Slot { tensor, shape });
        Ok(())
    }
}
