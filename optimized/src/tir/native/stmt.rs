//! Statements in native code (OP-call_tir): loops, stores, branches, blocks with
//! `T.where` and `T.init()`, scratch buffers and lets, in the interpreter's order of
//! evaluation and fuel ([`crate::tir::exec`]).

use super::gen::{flags, unsupported, DimV, Gen, R, V};
use super::ty::{within, Iv, Ty};
use super::{helpers, What};
use crate::dtype::DType;
use crate::error::ErrorKind;
use crate::tir::lower::assigned;
use crate::tir::lower::{Blk, Ex, ExKind, Slot, St, StKind};
use crate::tir::MAX_LOCAL_ELEMENTS;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, StackSlotData, StackSlotKind, Value};
use spec_model::grammar::DataType;
use spec_model::Span;

/// Scratch buffers of at most this many bytes, with constant shapes, live on the stack.
const STACK_BYTES: i64 = 256;

/// What the analysis knows, saved around a scope.
pub type Known = (
    std::collections::HashMap<Slot, Iv>,
    std::collections::HashMap<Slot, Slot>,
    std::collections::HashSet<Slot>,
    std::collections::HashSet<Slot>,
);

impl Gen<'_, '_> {
    pub fn stmts(&mut self, ss: &[St]) -> R<()> {
        ss.iter().try_for_each(|s| self.stmt(s))
    }

    fn known(&self) -> Known {
        (self.ivs.clone(), self.sym.clone(), self.defined.clone(), self.allocated.clone())
    }

    /// Restores what was known before a scope, forgetting what the scope may change.
    pub fn restore(&mut self, k: Known, changed: &std::collections::HashSet<Slot>) {
        (self.ivs, self.sym, self.defined, self.allocated) = k;
        self.forget(changed);
    }

    fn forget(&mut self, changed: &std::collections::HashSet<Slot>) {
        for s in changed {
            self.ivs.remove(s);
            self.sym.remove(s);
        }
        self.sym.retain(|_, s| !changed.contains(s));
    }

    fn stmt(&mut self, s: &St) -> R<()> {
        self.charge(1);
        match &s.kind {
            StKind::For { var, dt, begin, end, body } => self.for_loop(*var, *dt, begin, end, body, s.span),
            StKind::Store { buf, dt, indices, value } => {
                let v = self.expr(value)?;
                let v = self.cast(v, *dt, value.span)?;
                let addr = self.locate(*buf, indices, s.span)?;
                // Charges settle before memory changes, so that the state an error
                // leaves is the interpreter's.
                self.flush();
                self.store(*buf, addr, v);
                Ok(())
            }
            StKind::If { cond, then, other } => {
                let c = self.expr(cond)?;
                let c = self.truthy(c);
                self.flush();
                let (t, e, join) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
                self.b.ins().brif(c, t, &[], e, &[]);
                let before = self.known();
                let mut changed = assigned(then);
                changed.extend(assigned(other));
                for (blk, body) in [(t, then), (e, other)] {
                    self.b.switch_to_block(blk);
                    self.stmts(body)?;
                    self.flush();
                    self.b.ins().jump(join, &[]);
                    self.restore(before.clone(), &changed);
                }
                self.b.switch_to_block(join);
                Ok(())
            }
            StKind::Block(b) => self.block(b, s.span),
            StKind::Alloc { buf, dt, shape } => self.alloc(*buf, *dt, shape, s.span),
            StKind::Let { var, dt, value } => {
                let v = self.expr(value)?;
                let v = self.cast(v, *dt, value.span)?;
                self.bind(*var, v);
                Ok(())
            }
            StKind::Eval(e) => self.expr(e).map(|_| ()),
        }
    }

    /// Binds variable `slot` to `v` (already of its dtype).
    pub fn bind(&mut self, slot: Slot, v: V) {
        let Some(info) = self.vars[slot as usize] else { return };
        self.b.def_var(info.var, v.v);
        let one = self.b.ins().iconst(types::I64, 1);
        self.b.def_var(info.flag, one);
        self.defined.insert(slot);
        self.sym.remove(&slot);
        self.sym.retain(|_, s| *s != slot);
        match v.iv {
            Some(iv) => self.ivs.insert(slot, iv),
            None => self.ivs.remove(&slot),
        };
    }

    /// An integer-valued expression (`what`: for the error when it is a float).
    pub fn expr_int(&mut self, e: &Ex, what: &'static str) -> R<V> {
        let v = self.expr(e)?;
        if v.ty.is_u64() {
            return unsupported(format!("{what} of dtype uint64"));
        }
        if let Ty::Float { .. } = v.ty {
            let d = self.widen_f64(v.v, v.ty);
            let bits = self.b.ins().bitcast(types::I64, cranelift_codegen::ir::MemFlagsData::new(), d);
            self.fail(What::NotInteger { what, dt: v.dt }, e.span, [Some(bits), None, None]);
            let z = self.b.ins().iconst(types::I64, 0);
            return Ok(V { v: z, dt: DataType::INT64, ty: Ty::Int { bits: 64, signed: true }, iv: Some((0, 0)) });
        }
        Ok(v)
    }

    fn for_loop(&mut self, var: Slot, dt: DataType, begin: &Ex, end: &Ex, body: &[St], span: Span) -> R<()> {
        let b = self.expr_int(begin, "a loop start")?;
        let e = self.expr_int(end, "a loop end")?;
        self.flush();
        let before = self.known();
        let mut changed = assigned(body);
        changed.insert(var);
        self.forget(&changed);
        if let Some(plan) = self.vector_plan(var, body) {
            return self.vector_loop(var, dt, b, e, end, body, span, plan, before, changed);
        }
        self.scalar_loop(var, dt, b.v, &b, &e, end, body, span)?;
        self.restore(before, &changed);
        Ok(())
    }

    /// The loop's iterations from `from` (within `[b, e)`) to `e`, one at a time.
    #[allow(clippy::too_many_arguments)]
    pub fn scalar_loop(
        &mut self,
        var: Slot,
        dt: DataType,
        from: Value,
        b: &V,
        e: &V,
        end: &Ex,
        body: &[St],
        span: Span,
    ) -> R<()> {
        let i = self.b.declare_var(types::I64);
        self.b.def_var(i, from);
        let (header, inner, done) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        let iv = self.b.use_var(i);
        let go = self.b.ins().icmp(IntCC::SignedLessThan, iv, e.v);
        self.b.ins().brif(go, inner, &[], done, &[]);
        self.b.switch_to_block(inner);
        self.charge(1);
        self.loop_var(var, dt, iv, b, e, end, span)?;
        self.stmts(body)?;
        self.flush();
        let next = self.b.ins().iadd_imm_s(iv, 1);
        self.b.def_var(i, next);
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// Binds a loop variable to the counter `i` in `[b, e)`, checked to fit its dtype.
    #[allow(clippy::too_many_arguments)]
    pub fn loop_var(&mut self, var: Slot, dt: DataType, i: Value, b: &V, e: &V, end: &Ex, span: Span) -> R<()> {
        let Some(ty) = Ty::of(dt) else { return unsupported("a loop variable without storage") };
        let range = (b.iv.map_or(i64::MIN.into(), |x| x.0), e.iv.map_or(i64::MAX.into(), |x| x.1 - 1));
        self.total_check(false);
        if !ty.range().is_some_and(|r| within(range, r)) {
            let ok = self.fits(i, Ty::Int { bits: 64, signed: true }, ty);
            self.check(ok, What::Cast { to: dt, float: false, unsigned: false }, span, [Some(i), None, None]);
        } else {
            self.total_check(true);
        }
        self.bind(var, V { v: i, dt, ty, iv: Some(range) });
        if let (ExKind::Var(s), true) = (&end.kind, range.0 >= 0) {
            if self.invariant.contains(s) {
                self.sym.insert(var, *s);
            }
        }
        Ok(())
    }

    /// Counts a check, proved (elided) or not.
    pub fn total_check(&mut self, elided: bool) {
        if elided {
            self.checks.0 += 1;
        } else {
            self.checks.1 += 1;
        }
    }

    fn block(&mut self, blk: &Blk, span: Span) -> R<()> {
        let mut xs = Vec::new();
        for ax in blk.axes.iter() {
            let v = self.expr(&ax.binding)?;
            let sym = match ax.binding.kind {
                ExKind::Var(w) => self.sym.get(&w).copied(),
                _ => None,
            };
            let v = self.cast(v, ax.dt, ax.binding.span)?;
            if v.ty.is_float() {
                let name = &self.low.var_names[ax.var as usize];
                let m = format!("block `{}`: axis `{name}` must be an integer", blk.name);
                self.fail(What::Fixed(ErrorKind::OpError, m), ax.binding.span, [None; 3]);
            }
            self.bind(ax.var, v);
            if let Some(s) = sym {
                self.sym.insert(ax.var, s);
            }
            xs.push(v);
        }
        let skip = self.b.create_block();
        if let Some(p) = &blk.predicate {
            let c = self.expr(p)?;
            let c = self.truthy(c);
            self.flush();
            let go = self.b.create_block();
            self.b.ins().brif(c, go, &[], skip, &[]);
            self.b.switch_to_block(go);
        }
        let before = self.known();
        let mut start: Option<Value> = None;
        for (ax, x) in blk.axes.iter().zip(&xs) {
            let lo = self.expr_int(&ax.begin, "an axis domain")?;
            let hi = self.expr_int(&ax.end, "an axis domain")?;
            let sym_ok = matches!(ax.end.kind, ExKind::Var(s) if self.sym.get(&ax.var) == Some(&s));
            let (xl, xh) = x.iv.unwrap_or((i64::MIN.into(), i64::MAX.into()));
            let (ll, lh) = lo.iv.unwrap_or((i64::MIN.into(), i64::MAX.into()));
            let (hl, hh) = hi.iv.unwrap_or((i64::MIN.into(), i64::MAX.into()));
            let proved = xl >= lh && (xh < hl || sym_ok);
            self.total_check(proved);
            if !proved {
                let a = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, x.v, lo.v);
                let c = self.b.ins().icmp(IntCC::SignedLessThan, x.v, hi.v);
                let ok = self.b.ins().band(a, c);
                let what = What::Domain { block: blk.name.clone(), axis: ax.var };
                self.check(ok, what, span, [Some(x.v), Some(lo.v), Some(hi.v)]);
                let r = (xl.max(ll), xh.min(hh - 1));
                self.ivs.insert(ax.var, r);
                if let ExKind::Var(s) = ax.end.kind {
                    if self.invariant.contains(&s) && r.0 >= 0 {
                        self.sym.insert(ax.var, s);
                    }
                }
            }
            if ax.reduce {
                let at = self.b.ins().icmp(IntCC::Equal, x.v, lo.v);
                start = Some(match start {
                    Some(s) => self.b.ins().band(s, at),
                    None => at,
                });
            }
        }
        if let Some(init) = &blk.init {
            match start {
                None => self.stmts(init)?,
                Some(c) => {
                    self.flush();
                    let (run, after) = (self.b.create_block(), self.b.create_block());
                    self.b.ins().brif(c, run, &[], after, &[]);
                    self.b.switch_to_block(run);
                    let k = self.known();
                    self.stmts(init)?;
                    self.flush();
                    self.b.ins().jump(after, &[]);
                    self.restore(k, &assigned(init));
                    self.b.switch_to_block(after);
                }
            }
        }
        self.stmts(&blk.body)?;
        self.flush();
        self.b.ins().jump(skip, &[]);
        self.b.switch_to_block(skip);
        let mut changed = assigned(&blk.body);
        if let Some(i) = &blk.init {
            changed.extend(assigned(i));
        }
        // The axes stay bound (`before` was taken after binding them), but in their
        // domains only if the check ran.
        self.restore(before, &changed);
        if blk.predicate.is_some() {
            for a in blk.axes.iter() {
                self.ivs.remove(&a.var);
                self.sym.remove(&a.var);
            }
        }
        Ok(())
    }

    fn alloc(&mut self, buf: Slot, dt: DataType, shape: &[Ex], span: Span) -> R<()> {
        let mut dims = Vec::new();
        for d in shape {
            let x = self.expr_int(d, "a buffer dimension")?;
            if x.iv.is_none_or(|r| r.0 < 0) {
                let ok = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, x.v, 0);
                self.check(ok, What::NegativeDim(buf), d.span, [Some(x.v), None, None]);
            }
            dims.push(x);
        }
        let consts: Option<Vec<u64>> =
            dims.iter().map(|d| d.iv.filter(|r| r.0 == r.1).and_then(|r| u64::try_from(r.0).ok())).collect();
        let count = match &consts {
            Some(c) => match c.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).filter(|&n| n <= MAX_LOCAL_ELEMENTS) {
                Some(n) => self.b.ins().iconst(types::I64, n as i64),
                None => {
                    self.fail(What::TooLarge(buf), span, [None; 3]);
                    self.b.ins().iconst(types::I64, 0)
                }
            },
            None => {
                let mut n = self.b.ins().iconst(types::I64, 1);
                let mut bad = self.b.ins().iconst(types::I8, 0);
                for d in &dims {
                    let (p, o) = self.b.ins().umul_overflow(n, d.v);
                    bad = self.b.ins().bor(bad, o);
                    n = p;
                }
                let big = self.b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, n, MAX_LOCAL_ELEMENTS as i64);
                let bad = self.b.ins().bor(bad, big);
                let ok = self.b.ins().icmp_imm_s(IntCC::Equal, bad, 0);
                self.check(ok, What::TooLarge(buf), span, [None; 3]);
                n
            }
        };
        self.charge_value(count);
        let Some(dtype) = DType::of(dt) else {
            let name = &self.low.buf_names[buf as usize];
            let m = format!("buffer `{name}` has dtype {dt}, which has no storage");
            self.fail(What::Fixed(ErrorKind::OpError, m), span, [None; 3]);
            return Ok(());
        };
        let Some(info) = self.bufs[buf as usize].as_ref() else { return unsupported("an unknown scratch buffer") };
        let (data, dvars) = (info.data, info.dims.clone());
        let size = helpers::elem_size(dtype);
        let stack_bytes = consts.as_ref().and_then(|c| c.iter().try_fold(size as u64, |n, &d| n.checked_mul(d)));
        let ptr = match stack_bytes.filter(|&n| n <= STACK_BYTES as u64) {
            Some(n) => {
                let host = self.host();
                let s = self.b.ins().iconst(types::I32, i64::from(buf));
                let bytes = self.b.ins().iconst(types::I64, n as i64);
                let t = types::I64;
                let f = helpers::reserve as *const () as usize;
                let r = self.call1(f, &[t, types::I32, t], types::I32, &[host, s, bytes]);
                let ok = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                self.check(ok, What::Alloc, span, [None; 3]);
                let words = n.div_ceil(8).max(1) as u32;
                let slot =
                    self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, words * 8, 3));
                let z = self.b.ins().iconst(types::I64, 0);
                for w in 0..words {
                    self.b.ins().stack_store(types::I64, z, slot, (w * 8) as i32);
                }
                self.b.ins().stack_addr(types::I64, slot, 0)
            }
            None => {
                let words = dims.len().max(1) as u32;
                let slot =
                    self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, words * 8, 3));
                for (k, d) in dims.iter().enumerate() {
                    self.b.ins().stack_store(types::I64, d.v, slot, (k * 8) as i32);
                }
                let dp = self.b.ins().stack_addr(types::I64, slot, 0);
                let host = self.host();
                let s = self.b.ins().iconst(types::I32, i64::from(buf));
                let r = self.b.ins().iconst(types::I32, dims.len() as i64);
                let t = types::I64;
                let p = self.call1(
                    helpers::alloc as *const () as usize,
                    &[t, types::I32, t, types::I32],
                    t,
                    &[host, s, dp, r],
                );
                let ok = self.b.ins().icmp_imm_s(IntCC::NotEqual, p, 0);
                self.check(ok, What::Alloc, span, [None; 3]);
                p
            }
        };
        self.b.def_var(data, ptr);
        for (d, x) in dvars.iter().zip(&dims) {
            if let DimV::Dyn { var, .. } = d {
                self.b.def_var(*var, x.v);
            }
        }
        self.allocated.insert(buf);
        Ok(())
    }

    /// The address of element `indices` of buffer `buf`, every index checked (or
    /// proved) in bounds, in the interpreter's order.
    pub fn locate(&mut self, buf: Slot, indices: &[Ex], span: Span) -> R<Value> {
        let Some(info) = self.bufs[buf as usize].as_ref() else {
            let m = format!("buffer `{}` is not allocated", self.low.buf_names[buf as usize]);
            self.fail(What::Fixed(ErrorKind::OpError, m), span, [None; 3]);
            return Ok(self.b.ins().iconst(types::I64, 0));
        };
        let (data, dims, dtype) = (info.data, info.dims.clone(), info.dtype);
        let base = self.b.use_var(data);
        if !self.allocated.contains(&buf) {
            let ok = self.b.ins().icmp_imm_s(IntCC::NotEqual, base, 0);
            self.check(ok, What::NotAllocated(buf), span, [None; 3]);
        }
        if indices.len() != dims.len() {
            let name = &self.low.buf_names[buf as usize];
            let m = format!("buffer `{name}` has rank {} but is indexed with {} indices", dims.len(), indices.len());
            self.fail(What::Fixed(ErrorKind::OpError, m), span, [None; 3]);
            return Ok(base);
        }
        let mut off: Option<Value> = None;
        for (k, (ix, d)) in indices.iter().zip(&dims).enumerate() {
            let i = self.expr_int(ix, "a buffer index")?;
            let dv = self.dim_value(*d);
            if !self.in_bounds(ix, &i, d) {
                let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, i.v, dv);
                self.check(ok, What::OutOfBounds { buf, dim: k }, ix.span, [Some(i.v), Some(dv), None]);
            }
            off = Some(match off {
                None => i.v,
                Some(o) => {
                    let m = self.b.ins().imul(o, dv);
                    self.b.ins().iadd(m, i.v)
                }
            });
        }
        let off = off.unwrap_or_else(|| self.b.ins().iconst(types::I64, 0));
        let bytes = self.b.ins().imul_imm_s(off, helpers::elem_size(dtype));
        Ok(self.b.ins().iadd(base, bytes))
    }

    /// Whether index `i` (expression `ix`) is proved within dimension `d`.
    fn in_bounds(&mut self, ix: &Ex, i: &V, d: &DimV) -> bool {
        let lo_ok = i.iv.is_some_and(|r| r.0 >= 0);
        let proved = lo_ok
            && match *d {
                DimV::Const(c) => i.iv.is_some_and(|r| r.1 < i128::from(c)),
                DimV::Dyn { sym: Some(s), .. } => matches!(ix.kind, ExKind::Var(v) if self.sym.get(&v) == Some(&s)),
                DimV::Dyn { .. } => false,
            };
        self.total_check(proved);
        proved
    }

    /// Stores `v` (of the buffer's dtype) at `addr`.
    pub fn store(&mut self, buf: Slot, addr: Value, v: V) {
        let Some(dtype) = self.bufs[buf as usize].as_ref().map(|b| b.dtype) else { return };
        let fl = flags();
        let ins = self.b.ins();
        match dtype {
            DType::Bool | DType::I8 | DType::U8 => {
                ins.istore8(fl, v.v, addr, 0);
            }
            DType::I16 | DType::U16 => {
                ins.istore16(fl, v.v, addr, 0);
            }
            DType::I32 | DType::U32 => {
                ins.istore32(fl, v.v, addr, 0);
            }
            DType::I64 | DType::U64 | DType::F32 | DType::F64 => {
                ins.store(fl, v.v, addr, 0);
            }
            DType::F16 => {
                let bits = self.call1(helpers::f16_store as *const () as usize, &[types::F32], types::I32, &[v.v]);
                self.b.ins().istore16(fl, bits, addr, 0);
            }
        }
    }

    /// Loads the element at `addr` of buffer `buf`.
    pub fn load(&mut self, buf: Slot, addr: Value) -> Value {
        let dtype = self.bufs[buf as usize].as_ref().map_or(DType::I64, |b| b.dtype);
        let fl = flags();
        let t = types::I64;
        let ins = self.b.ins();
        match dtype {
            DType::Bool | DType::U8 => ins.uload8(t, fl, addr, 0),
            DType::I8 => ins.sload8(t, fl, addr, 0),
            DType::I16 => ins.sload16(t, fl, addr, 0),
            DType::U16 => ins.uload16(t, fl, addr, 0),
            DType::I32 => ins.sload32(fl, addr, 0),
            DType::U32 => ins.uload32(fl, addr, 0),
            DType::I64 | DType::U64 => ins.load(t, fl, addr, 0),
            DType::F32 => ins.load(types::F32, fl, addr, 0),
            DType::F64 => ins.load(types::F64, fl, addr, 0),
            DType::F16 => {
                let bits = ins.uload16(types::I32, fl, addr, 0);
                self.call1(helpers::f16_load as *const () as usize, &[types::I32], types::F32, &[bits])
            }
        }
    }
}
