//! PrimFuncs compiled to native code with Cranelift (OP-call_tir): what `R.call_tir`
//! runs in the engine. The meaning is the engine's TIR interpreter's ([`super::exec`],
//! proofs-notes/evaluation.md E-13), which stays as the slow path for the constructs
//! this backend declines ([`Unsupported`], counted by `fuzz-smoke`).
//!
//! A PrimFunc compiles once per module, from its lowered form, to a function
//! `fn(*mut Ctx) -> u32`. Parameters are bound by the host exactly as the interpreter
//! binds them ([`super::TirFunc`]); the native code gets the bound scalars, the buffers'
//! data pointers and dimensions, and its fuel in the [`Ctx`], and returns 0, or 1 with
//! the number of the error site that stopped it ([`Site`]) and up to three payloads.
//!
//! What makes it safe and exact:
//! * every buffer access is bounds-checked unless the interval analysis proves it in
//!   bounds from the loop ranges and the buffer's shape ([`ty`]); integer arithmetic is
//!   overflow-checked in its dtype unless proved to fit; a zero divisor is
//!   `DivisionByZero` before any machine division (never a SIGFPE);
//! * fuel is charged as the interpreter charges it (one unit per statement run, per loop
//!   iteration and per element of a `T.alloc_buffer`), with adjacent charges merged when
//!   nothing that can fail lies between them, so the first error is the interpreter's;
//! * after an error nothing of the call is observable (call_tir's outputs are
//!   discarded), so only which error comes first must match.

mod expr;
mod gen;
pub mod helpers;
mod stmt;
#[cfg(test)]
mod tests;
pub mod ty;
mod vector;

use super::lower::{Lowered, Slot};
use super::num::{Num, Val};
use crate::buffer::{Memory, OverBudget};
use crate::dtype::DType;
use crate::error::{Error, ErrorKind};
use crate::kernels::over_budget;
use crate::tensor::Tensor;
use cranelift_jit::JITModule;
use spec_model::grammar::tir::Intrinsic;
use spec_model::grammar::{DataType, PrimBinOp};
use spec_model::Span;
use std::cell::RefMut;
use std::rc::Rc;

/// What the code generator declines, and why (the interpreter runs the function).
#[derive(Clone, Debug)]
pub struct Unsupported(pub String);

/// The call's state shared with native code (`#[repr(C)]`: the code reads it at fixed
/// offsets, [`gen::off`]).
#[repr(C)]
pub struct Ctx {
    pub fuel: u64,
    pub site: u64,
    pub a: i64,
    pub b: i64,
    pub c: i64,
    /// Each variable slot's value at entry (its payload's bits: an integer's `i64`, a
    /// float's `f64`), for the slots parameters bind.
    pub vars: *const i64,
    /// Each buffer slot's data pointer at entry (null for scratch buffers).
    pub bufs: *const *mut u8,
    /// The dimensions of every parameter buffer, flattened.
    pub dims: *const i64,
    pub host: *mut Host,
}

/// What native code asks of the host: scratch buffers.
pub struct Host {
    pub memory: Rc<Memory>,
    pub locals: Vec<(u32, Tensor)>,
    pub locals_dtype: Vec<(u32, DType)>,
    pub reserved: Vec<(u32, crate::buffer::Reservation)>,
    pub over_budget: Option<OverBudget>,
}

/// Why the native code stopped at a site; payloads `a`, `b`, `c` from [`Ctx`].
#[derive(Clone, Debug)]
pub enum What {
    Fuel,
    /// An error whose message is fixed at compile time.
    Fixed(ErrorKind, String),
    /// `a` = the index, `b` = the extent.
    OutOfBounds {
        buf: Slot,
        dim: usize,
    },
    /// `a` = the dividend.
    DivisionByZero(PrimBinOp),
    /// `a`, `b` = the operands (integers; `unsigned`: by their bits as `u64`) of an
    /// operation whose exact result does not fit `dt`.
    Overflow {
        op: PrimBinOp,
        dt: DataType,
        unsigned: bool,
    },
    /// `a` = the shift amount of `op`, outside `[0, bits)` of `dt`.
    ShiftAmount {
        op: Intrinsic,
        dt: DataType,
        unsigned: bool,
    },
    /// `a`, `b` = the operand and amount of a left shift whose exact result does not fit `dt`.
    ShiftOverflow {
        dt: DataType,
        unsigned: bool,
    },
    /// A conversion to `to` that does not fit: `a` = the value (an integer, or an
    /// `f64`'s bits when `float`).
    Cast {
        to: DataType,
        float: bool,
        unsigned: bool,
    },
    /// `a` = the float value's bits.
    NotInteger {
        what: &'static str,
        dt: DataType,
    },
    /// `a` = the axis value, `b`, `c` = the domain.
    Domain {
        block: String,
        axis: Slot,
    },
    NotAllocated(Slot),
    /// `a` = the dimension.
    NegativeDim(Slot),
    TooLarge(Slot),
    /// The host's allocation failed (its error is in [`Host`]).
    Alloc,
    /// A variable read before any binding.
    Unbound(Slot),
}

#[derive(Clone, Debug)]
pub struct Site {
    pub what: What,
    pub span: Span,
}

/// A compiled PrimFunc and the tables its host needs.
pub struct NativeFunc {
    module: Option<JITModule>,
    entry: unsafe extern "C" fn(*mut Ctx) -> u32,
    sites: Vec<Site>,
    /// Offset of each parameter buffer slot's dimensions in [`Ctx::dims`].
    dim_offsets: Vec<(Slot, usize)>,
    locals: Vec<(u32, DType)>,
    /// Statically proved bounds checks and overflow checks, out of all (for reports).
    pub checks_elided: (u32, u32),
}

impl std::fmt::Debug for NativeFunc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NativeFunc({} sites)", self.sites.len())
    }
}

impl Drop for NativeFunc {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // Safety: `entry` points into `m` and dies with `self`; nothing else does.
            unsafe { m.free_memory() };
        }
    }
}

/// Compiles `low`; declines what it cannot compile exactly.
pub fn compile(low: &Lowered) -> Result<NativeFunc, Unsupported> {
    gen::compile(low)
}

/// A frame bound by the host: variable payloads by slot, tensors by buffer slot.
pub struct Frame {
    pub vars: Vec<Option<Val>>,
    pub bufs: Vec<Option<Rc<Tensor>>>,
}

/// The outcome of [`NativeFunc::run`]: `None` when the call needs the interpreter
/// (a tensor's storage is shared in a way native pointers cannot take).
pub type RunResult = Option<Result<(), Box<Error>>>;

impl NativeFunc {
    /// Runs on a bound frame. `error` builds an `OP-call_tir` error at a span.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        low: &Lowered,
        frame: &Frame,
        fuel: &mut u64,
        memory: &Rc<Memory>,
        error: &dyn Fn(ErrorKind, Span, String) -> Box<Error>,
        call_span: Span,
        name: &str,
    ) -> RunResult {
        let vars: Vec<i64> = frame
            .vars
            .iter()
            .map(|v| match v.map(|v| v.n) {
                Some(Num::I(i)) => i,
                Some(Num::U(u)) => u as i64,
                Some(Num::F(f)) => f.to_bits() as i64,
                None => 0,
            })
            .collect();
        // One mutable borrow per distinct tensor: parameters that share a tensor share
        // its pointer, so writes through one are seen through the others.
        let mut guards: Vec<(*const Tensor, RefMut<'_, crate::buffer::Buffer>)> = Vec::new();
        let mut ptrs = vec![std::ptr::null_mut::<u8>(); frame.bufs.len()];
        for (slot, t) in frame.bufs.iter().enumerate() {
            let Some(t) = t else { continue };
            let key = Rc::as_ptr(t);
            if let Some((_, g)) = guards.iter_mut().find(|(k, _)| *k == key) {
                ptrs[slot] = g.bytes_mut().as_mut_ptr();
                continue;
            }
            let mut g = t.data_mut()?;
            let need = (t.numel() as u64).checked_mul(helpers::elem_size(t.dtype()) as u64)?;
            if (g.len_bytes() as u64) < need {
                return None;
            }
            ptrs[slot] = g.bytes_mut().as_mut_ptr();
            guards.push((key, g));
        }
        let mut dims = Vec::new();
        for &(slot, off) in &self.dim_offsets {
            let t = frame.bufs[slot as usize].as_ref()?;
            dims.resize(off, 0);
            dims.extend(t.shape().iter().map(|&d| d as i64));
        }
        let mut host = Host {
            memory: memory.clone(),
            locals: Vec::new(),
            locals_dtype: self.locals.clone(),
            reserved: Vec::new(),
            over_budget: None,
        };
        let mut ctx = Ctx {
            fuel: *fuel,
            site: 0,
            a: 0,
            b: 0,
            c: 0,
            vars: vars.as_ptr(),
            bufs: ptrs.as_ptr(),
            dims: dims.as_ptr(),
            host: &mut host,
        };
        // Safety: the code was generated for this function's frame layout; every pointer
        // in `ctx` lives until the call returns, and every access it makes is checked
        // against the dimensions it was given (or proved within them).
        let status = unsafe { (self.entry)(&mut ctx) };
        *fuel = ctx.fuel;
        drop(guards);
        if status == 0 {
            return Some(Ok(()));
        }
        let site = &self.sites[ctx.site as usize];
        Some(Err(self.error(low, site, &ctx, &mut host, error, call_span, name)))
    }

    #[allow(clippy::too_many_arguments)]
    fn error(
        &self,
        low: &Lowered,
        site: &Site,
        ctx: &Ctx,
        host: &mut Host,
        error: &dyn Fn(ErrorKind, Span, String) -> Box<Error>,
        call_span: Span,
        name: &str,
    ) -> Box<Error> {
        let at = if site.span.is_synthetic() { call_span } else { site.span };
        let (a, b, c) = (ctx.a, ctx.b, ctx.c);
        let buf = |s: &Slot| &low.buf_names[*s as usize];
        let (kind, message) = match &site.what {
            What::Fuel => {
                let message = format!("out of fuel while running PrimFunc `{name}`");
                return Box::new(Error::new(ErrorKind::FuelExhausted, "LIMIT-fuel", message, call_span));
            }
            What::Alloc => {
                let e = host.over_budget.take().unwrap_or(OverBudget { requested: None, live: 0, limit: 0 });
                return Box::new(over_budget(e, at));
            }
            What::TooLarge(s) => {
                let message =
                    format!("buffer `{}` is too large (at most {} elements)", buf(s), super::MAX_LOCAL_ELEMENTS);
                return Box::new(Error::new(ErrorKind::MemoryExhausted, "LIMIT-memory", message, at));
            }
            What::Fixed(kind, m) => (*kind, m.clone()),
            What::OutOfBounds { buf: s, dim } => (
                ErrorKind::OpError,
                format!("index {a} is out of bounds for dimension {dim} of buffer `{}` (extent {})", buf(s), b as u64),
            ),
            What::DivisionByZero(op) => (ErrorKind::DivisionByZero, format!("{} of {a} by zero", op.spec_name())),
            What::Overflow { op, dt, unsigned } => {
                let (x, y) =
                    if *unsigned { (i128::from(a as u64), i128::from(b as u64)) } else { (a.into(), b.into()) };
                let exact = match op {
                    PrimBinOp::Add => (x + y).to_string(),
                    PrimBinOp::Sub => (x - y).to_string(),
                    // Two uint64 factors may pass i128 (not u128: both are below 2^64).
                    PrimBinOp::Mul => x
                        .checked_mul(y)
                        .map_or_else(|| (x.unsigned_abs() * y.unsigned_abs()).to_string(), |p| p.to_string()),
                    // The one division that overflows: the minimum by -1.
                    _ => (-x).to_string(),
                };
                (ErrorKind::IntegerOverflow, format!("{exact} does not fit in {dt}"))
            }
            What::ShiftAmount { op, dt, unsigned } => {
                let k = if *unsigned { i128::from(a as u64) } else { a.into() };
                let m = format!("T.{} by {k}: the shift amount must lie in [0, {}) for {dt}", op.name(), dt.bits);
                (ErrorKind::OpError, m)
            }
            What::ShiftOverflow { dt, unsigned } => {
                let x = if *unsigned { i128::from(a as u64) } else { a.into() };
                // The amount passed its check: below 64.
                (ErrorKind::IntegerOverflow, format!("{} does not fit in {dt}", x * (1i128 << (b as u64 & 63))))
            }
            What::Cast { to, float, unsigned } => {
                let v = if *float {
                    // As the interpreter words it: the truncated integer when it is one.
                    let f = f64::from_bits(a as u64);
                    let t = f.trunc();
                    if t.is_finite() && t.abs() < (1u128 << 100) as f64 {
                        (t as i128).to_string()
                    } else {
                        f.to_string()
                    }
                } else if *unsigned {
                    (a as u64).to_string()
                } else {
                    a.to_string()
                };
                (ErrorKind::IntegerOverflow, format!("{v} does not fit in {to}"))
            }
            What::NotInteger { what, dt } => {
                (ErrorKind::OpError, format!("{what} must be an integer, got {} ({dt})", f64::from_bits(a as u64)))
            }
            What::Domain { block, axis } => (
                ErrorKind::OpError,
                format!(
                    "block `{block}`: axis `{}` = {a} is outside its domain [{b}, {c})",
                    low.var_names[*axis as usize]
                ),
            ),
            What::NotAllocated(s) => (ErrorKind::OpError, format!("buffer `{}` is not allocated", buf(s))),
            What::NegativeDim(s) => (ErrorKind::OpError, format!("buffer `{}` has a negative dimension {a}", buf(s))),
            What::Unbound(v) => (ErrorKind::OpError, format!("variable `{}` has no value", low.var_names[*v as usize])),
        };
        error(kind, at, message)
    }
}
