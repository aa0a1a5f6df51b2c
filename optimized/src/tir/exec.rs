//! Running lowered statements and evaluating lowered expressions (OP-call_tir) on the
//! machine's frame; fuel per statement and loop iteration (LIMIT-fuel).

use super::lower::{Blk, Ex, ExKind, Slot, St, StKind};
use super::num::{binary, bitwise, cast, pow, promote, unary, Num, Val};
use super::{Machine, Stop, MAX_LOCAL_ELEMENTS, R};
use crate::buffer::Buffer;
use crate::dtype::{DType, Element};
use crate::error::{Error, ErrorKind};
use crate::kernels::over_budget;
use crate::tensor::Tensor;
use half::f16;
use spec_model::grammar::DataType;
use spec_model::Span;
use std::rc::Rc;

/// Why an element cannot be accessed.
enum Access {
    /// The storage is borrowed for writing elsewhere.
    Busy,
    /// The storage holds fewer elements than the shape says.
    Short,
}

fn get<T: Element>(b: &Buffer, n: usize, off: usize) -> std::result::Result<T, Access> {
    b.as_slice::<T>(n).get(off).copied().ok_or(Access::Short)
}

fn put<T: Element>(b: &mut Buffer, n: usize, off: usize, x: T) -> std::result::Result<(), Access> {
    *b.as_mut_slice::<T>(n).get_mut(off).ok_or(Access::Short)? = x;
    Ok(())
}

/// Element `off` of `t` as a payload (`bool` as 0 or 1).
fn load(t: &Tensor, off: usize) -> std::result::Result<Num, Access> {
    let n = t.numel();
    let b = t.data().ok_or(Access::Busy)?;
    Ok(match t.dtype() {
        DType::Bool => Num::I(i64::from(get::<u8>(&b, n, off)? != 0)),
        DType::U8 => Num::I(get::<u8>(&b, n, off)?.into()),
        DType::I8 => Num::I(get::<i8>(&b, n, off)?.into()),
        DType::I16 => Num::I(get::<i16>(&b, n, off)?.into()),
        DType::I32 => Num::I(get::<i32>(&b, n, off)?.into()),
        DType::I64 => Num::I(get::<i64>(&b, n, off)?),
        DType::U16 => Num::I(get::<u16>(&b, n, off)?.into()),
        DType::U32 => Num::I(get::<u32>(&b, n, off)?.into()),
        DType::U64 => Num::from_u64(get::<u64>(&b, n, off)?),
        DType::F16 => Num::F(get::<f16>(&b, n, off)?.to_f64()),
        DType::F32 => Num::F(get::<f32>(&b, n, off)?.into()),
        DType::F64 => Num::F(get::<f64>(&b, n, off)?),
    })
}

/// Writes `v`, already converted to `t`'s dtype, to element `off`. The integer
/// conversions cannot lose anything: the conversion checked that `v` fits.
fn store(t: &Tensor, off: usize, v: Val) -> std::result::Result<(), Access> {
    let n = t.numel();
    let mut b = t.data_mut().ok_or(Access::Busy)?;
    let b = &mut *b;
    let dtype = t.dtype();
    if dtype.is_float() || dtype.is_bool() {
        let f = v.as_f64();
        return match dtype {
            DType::F16 => put(b, n, off, crate::dtype::f16_of_f64(f)),
            DType::F32 => put(b, n, off, f as f32),
            DType::F64 => put(b, n, off, f),
            _ => put(b, n, off, u8::from(v.truthy())),
        };
    }
    // An integer dtype holds integer payloads only (a float converted first).
    let i = v.int_value().unwrap_or_default();
    match dtype {
        DType::I8 => put(b, n, off, i as i8),
        DType::I16 => put(b, n, off, i as i16),
        DType::I32 => put(b, n, off, i as i32),
        DType::I64 => put(b, n, off, i as i64),
        DType::U16 => put(b, n, off, i as u16),
        DType::U32 => put(b, n, off, i as u32),
        DType::U64 => put(b, n, off, i as u64),
        _ => put(b, n, off, i as u8),
    }
}

impl Machine<'_> {
    pub(super) fn exec_all(&mut self, ss: &[St]) -> R<()> {
        ss.iter().try_for_each(|s| self.exec(s))
    }

    fn exec(&mut self, s: &St) -> R<()> {
        self.charge(1)?;
        match &s.kind {
            StKind::For { var, dt, begin, end, body } => {
                let b = self.eval_int(begin, "a loop start")?;
                let e = self.eval_int(end, "a loop end")?;
                let mut i = b;
                while i < e {
                    self.charge(1)?;
                    let v = self.at(s.span, super::num::fit(i, *dt))?;
                    self.vars[*var as usize] = Some(v);
                    self.exec_all(body)?;
                    i += 1;
                }
                Ok(())
            }
            StKind::Store { buf, dt, indices, value } => {
                let v = self.eval(value)?;
                let v = self.at(value.span, cast(v, *dt))?;
                let (t, off) = self.locate(*buf, indices, s.span)?;
                store(t, off, v).map_err(|a| self.access(a, *buf, s.span))
            }
            StKind::If { cond, then, other } => {
                let c = self.eval(cond)?.truthy();
                self.exec_all(if c { then } else { other })
            }
            StKind::Block(b) => self.block(b, s.span),
            StKind::Alloc { buf, dt, shape } => self.alloc(*buf, *dt, shape, s.span),
            StKind::Let { var, dt, value } => {
                let v = self.eval(value)?;
                let v = self.at(value.span, cast(v, *dt))?;
                self.vars[*var as usize] = Some(v);
                Ok(())
            }
            StKind::Eval(e) => self.eval(e).map(|_| ()),
        }
    }

    /// A block: axes bound, `T.where`, the domain check, `T.init()` when every reduce
    /// axis is at the start of its domain (TVM's `LowerInitBlock`), then the body.
    fn block(&mut self, b: &Blk, span: Span) -> R<()> {
        let mut xs = std::mem::take(&mut self.axes);
        xs.clear();
        for ax in b.axes.iter() {
            let v = self.eval(&ax.binding)?;
            let v = self.at(ax.binding.span, cast(v, ax.dt))?;
            let Some(x) = v.int_value() else {
                let name = &self.f.low.var_names[ax.var as usize];
                let message = format!("block `{}`: axis `{name}` must be an integer", b.name);
                return Err(self.error(ErrorKind::OpError, ax.binding.span, message));
            };
            self.vars[ax.var as usize] = Some(v);
            xs.push(x);
        }
        if let Some(p) = &b.predicate {
            if !self.eval(p)?.truthy() {
                self.axes = xs;
                return Ok(());
            }
        }
        let mut reduce_start = true;
        for (ax, &x) in b.axes.iter().zip(&xs) {
            let lo = self.eval_int(&ax.begin, "an axis domain")?;
            let hi = self.eval_int(&ax.end, "an axis domain")?;
            if x < lo || x >= hi {
                let name = &self.f.low.var_names[ax.var as usize];
                let message = format!("block `{}`: axis `{name}` = {x} is outside its domain [{lo}, {hi})", b.name);
                return Err(self.error(ErrorKind::OpError, span, message));
            }
            reduce_start &= !ax.reduce || x == lo;
        }
        self.axes = xs;
        if let (Some(init), true) = (&b.init, reduce_start) {
            self.exec_all(init)?;
        }
        self.exec_all(&b.body)
    }

    /// `T.alloc_buffer`: fresh zero-filled storage each time it runs, one unit of fuel
    /// per element, at most [`MAX_LOCAL_ELEMENTS`].
    fn alloc(&mut self, buf: Slot, dt: DataType, shape: &[Ex], span: Span) -> R<()> {
        let f = self.f;
        let name = &f.low.buf_names[buf as usize];
        let mut dims = Vec::with_capacity(shape.len());
        for d in shape {
            let x = self.eval_int(d, "a buffer dimension")?;
            if x < 0 {
                let message = format!("buffer `{name}` has a negative dimension {x}");
                return Err(self.error(ErrorKind::OpError, d.span, message));
            }
            // Beyond u64 (impossible: values fit their dtype) counts as too large.
            dims.push(u64::try_from(x).unwrap_or(u64::MAX));
        }
        let count = dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).filter(|&c| c <= MAX_LOCAL_ELEMENTS);
        let Some(count) = count else {
            // A resource limit (LIMIT-memory), as the oracle's: not a meaning.
            let message =
                format!("buffer `{name}` of shape {dims:?} is too large (at most {MAX_LOCAL_ELEMENTS} elements)");
            let at = if span.is_synthetic() { self.span } else { span };
            return Err(Box::new(Error::new(ErrorKind::MemoryExhausted, "LIMIT-memory", message, at)));
        };
        self.charge(count)?;
        let Some(d) = DType::of(dt) else {
            let message = format!("buffer `{name}` has dtype {dt}, which has no storage");
            return Err(self.error(ErrorKind::OpError, span, message));
        };
        let at = if span.is_synthetic() { self.span } else { span };
        let t = Tensor::zeros(d, &dims, self.memory).map_err(|e| Box::new(over_budget(e, at)))?;
        self.bufs[buf as usize] = Some(Rc::new(t));
        Ok(())
    }

    fn access(&self, a: Access, buf: Slot, span: Span) -> Stop {
        let name = &self.f.low.buf_names[buf as usize];
        let message = match a {
            Access::Busy => format!("buffer `{name}` is busy"),
            Access::Short => format!("buffer `{name}`'s storage is smaller than its shape"),
        };
        self.error(ErrorKind::OpError, span, message)
    }

    /// The tensor of buffer `buf` and the row-major offset of `indices` in it. Indices
    /// are evaluated and checked one at a time (out of bounds: `OpError`).
    fn locate(&self, buf: Slot, indices: &[Ex], span: Span) -> R<(&Tensor, usize)> {
        let name = &self.f.low.buf_names[buf as usize];
        let Some(t) = &self.bufs[buf as usize] else {
            return Err(self.error(ErrorKind::OpError, span, format!("buffer `{name}` is not allocated")));
        };
        let shape = t.shape();
        if indices.len() != shape.len() {
            let message =
                format!("buffer `{name}` has rank {} but is indexed with {} indices", shape.len(), indices.len());
            return Err(self.error(ErrorKind::OpError, span, message));
        }
        let mut off = 0usize;
        for (k, (ix, &dim)) in indices.iter().zip(shape).enumerate() {
            let i = self.eval_int(ix, "a buffer index")?;
            if i < 0 || i >= i128::from(dim) {
                let message = format!("index {i} is out of bounds for dimension {k} of buffer `{name}` (extent {dim})");
                return Err(self.error(ErrorKind::OpError, ix.span, message));
            }
            // In bounds, so below the element count, which fits `usize`.
            let (dim, i) = (usize::try_from(dim).unwrap_or(usize::MAX), usize::try_from(i).unwrap_or(usize::MAX));
            off = off.saturating_mul(dim).saturating_add(i);
        }
        Ok((t, off))
    }

    /// Evaluates `e` in the current frame.
    pub(super) fn eval(&self, e: &Ex) -> R<Val> {
        match &e.kind {
            ExKind::Const(v) => Ok(*v),
            ExKind::Fail(f) => Err(self.fault(e.span, f)),
            ExKind::Var(s) => self.vars[*s as usize].ok_or_else(|| {
                let message = format!("variable `{}` has no value", self.f.low.var_names[*s as usize]);
                self.error(ErrorKind::OpError, e.span, message)
            }),
            ExKind::Bin(op, ab) => {
                let x = self.eval(&ab[0])?;
                let y = self.eval(&ab[1])?;
                self.at(e.span, binary(*op, x, y))
            }
            ExKind::Not(a) => Ok(Val::bool(!self.eval(a)?.truthy())),
            ExKind::Select(cab) => {
                let c = self.eval(&cab[0])?.truthy();
                let t = self.eval(&cab[1])?;
                let f = self.eval(&cab[2])?;
                self.at(e.span, cast(if c { t } else { f }, promote(t.dt, f.dt)))
            }
            ExKind::Cast(to, v) => {
                let v = self.eval(v)?;
                self.at(e.span, cast(v, *to))
            }
            ExKind::Load { buf, dt, indices } => {
                let (t, off) = self.locate(*buf, indices, e.span)?;
                let n = load(t, off).map_err(|a| self.access(a, *buf, e.span))?;
                Ok(Val { n, dt: *dt })
            }
            ExKind::IfThenElse(cab, with) => {
                let k = if self.eval(&cab[0])?.truthy() { 0 } else { 1 };
                let v = self.eval(&cab[k + 1])?;
                self.at(e.span, cast(v, promote(v.dt, with[k])))
            }
            ExKind::Pow(ab) => {
                let x = self.eval(&ab[0])?;
                let y = self.eval(&ab[1])?;
                self.at(e.span, pow(x, y))
            }
            ExKind::Bits(op, ab) => {
                let x = self.eval(&ab[0])?;
                let y = self.eval(&ab[1])?;
                self.at(e.span, bitwise(*op, x, y))
            }
            ExKind::Unary(op, a) => {
                let x = self.eval(a)?;
                self.at(e.span, unary(*op, x))
            }
        }
    }
}
