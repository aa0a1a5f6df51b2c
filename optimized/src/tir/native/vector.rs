//! Vectorized innermost loops: a loop whose body is one store (or one block of
//! spatial axes around one store) of a unit-stride elementwise value over `float32`,
//! `float64` or `int32` runs four (`float64`: two) iterations per SIMD instruction.
//!
//! The vector path is taken only when, checked once before the loop, nothing in the
//! whole range can fail: every index in bounds, every axis in its domain, the loop
//! variable in its dtype, the stored buffer's storage distinct from every buffer
//! read (or read only at the same element), and the fuel of every iteration
//! available (charged at once). Anything else, and the tail, runs the scalar loop,
//! which reports the first error exactly where the interpreter does. An `int32`
//! addition that overflows in some lane leaves the vector path before storing that
//! chunk; the scalar loop then finds the overflow.

use super::gen::{flags, Gen, R, V};
use super::helpers;
use super::stmt::Known;
use super::ty::Ty;
use crate::dtype::DType;
use crate::tir::lower::{Ex, ExKind, Slot, St, StKind};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, Endianness, InstBuilder, MemFlagsData, Type, Value};
use spec_model::grammar::tir::Intrinsic;
use spec_model::grammar::{DataType, PrimBinOp};
use spec_model::Span;
use std::collections::{HashMap, HashSet};

/// The one store of a vectorizable loop and what its indices and axes are.
pub struct Plan<'s> {
    buf: Slot,
    indices: &'s [Ex],
    value: &'s Ex,
    /// Variables that step with the loop: the loop variable and axes bound to it.
    lanes: HashSet<Slot>,
    /// Axes bound to a loop-invariant variable, and axes bound to the loop variable,
    /// with their domains.
    axes: Vec<(Slot, Option<Slot>, &'s Ex, &'s Ex, DataType)>,
    /// Fuel per iteration: the iteration, the block, the store.
    cost: i64,
    dtype: DType,
}

/// A buffer access in the loop: its slot and indices.
type Access<'s> = (Slot, &'s [Ex]);

impl Gen<'_, '_> {
    /// The plan for vectorizing the loop over `var` with body `body`, if it qualifies.
    pub fn vector_plan<'s>(&self, var: Slot, body: &'s [St]) -> Option<Plan<'s>> {
        let (store, axes_src, cost) = match body {
            [St { kind: StKind::Block(b), .. }] if b.predicate.is_none() && b.init.is_none() => match &*b.body {
                [s] => (s, Some(&b.axes), 3),
                _ => return None,
            },
            [s] => (s, None, 2),
            _ => return None,
        };
        let StKind::Store { buf, dt, indices, value } = &store.kind else { return None };
        let dtype = DType::of(*dt)?;

        if !matches!(dtype, DType::F32 | DType::F64 | DType::I32) || self.bufs.get(*buf as usize)?.is_none() {
            return None;
        }
        let mut lanes = HashSet::from([var]);
        let mut axes = Vec::new();
        for ax in axes_src.iter().flat_map(|a| a.iter()) {
            // An axis of another integer dtype: its values must fit it (checked before).
            let int = Ty::of(ax.dt).is_some_and(|t| matches!(t, Ty::Int { .. }) && !t.is_u64());
            if ax.reduce || !int {
                return None;
            }
            let ExKind::Var(w) = ax.binding.kind else { return None };
            if w == var {
                lanes.insert(ax.var);
                axes.push((ax.var, None, &ax.begin, &ax.end, ax.dt));
            } else if self.invariant_var(w, var, body) {
                axes.push((ax.var, Some(w), &ax.begin, &ax.end, ax.dt));
            } else {
                return None;
            }
            if !self.simple_int(&ax.begin, var, body) || !self.simple_int(&ax.end, var, body) {
                return None;
            }
        }
        let plan = Plan { buf: *buf, indices, value, lanes, axes, cost, dtype };
        let mut accesses = vec![(plan.buf, plan.indices)];
        if !self.vector_expr_ok(value, dtype, &plan, var, body, &mut accesses) {
            return None;
        }
        // The store's last index steps with the loop (unit stride).
        if !accesses.iter().all(|(_, ix)| self.access_ok(ix, &plan, var, body)) {
            return None;
        }
        match indices.last().map(|e| &e.kind) {
            Some(ExKind::Var(l)) if plan.lanes.contains(l) => Some(plan),
            _ => None,
        }
    }

    /// A variable the loop does not change, bound before it, of an integer dtype.
    fn invariant_var(&self, w: Slot, var: Slot, body: &[St]) -> bool {
        self.invariant_var_any(w, var, body)
            && self.vars[w as usize].is_some_and(|i| matches!(i.ty, Ty::Int { .. }) && !i.ty.is_u64())
    }

    fn simple_int(&self, e: &Ex, var: Slot, body: &[St]) -> bool {
        match e.kind {
            ExKind::Const(c) => c.int_value().is_some_and(|i| i64::try_from(i).is_ok()),
            ExKind::Var(w) => self.invariant_var(w, var, body),
            _ => false,
        }
    }

    /// Every index but the last invariant and simple; the last a lane or invariant.
    fn access_ok(&self, ix: &[Ex], plan: &Plan, var: Slot, body: &[St]) -> bool {
        let invariant = |e: &Ex| match e.kind {
            ExKind::Var(w) if plan.axes.iter().any(|a| a.0 == w && a.1.is_some()) => true,
            _ => self.simple_int(e, var, body),
        };
        let Some((last, rest)) = ix.split_last() else { return false };
        rest.iter().all(invariant)
            && (invariant(last) || matches!(last.kind, ExKind::Var(l) if plan.lanes.contains(&l)))
    }

    /// Whether `e` is an elementwise expression of dtype `d` the vector code covers.
    #[allow(clippy::too_many_arguments)]
    fn vector_expr_ok<'s>(
        &self,
        e: &'s Ex,
        d: DType,
        plan: &Plan,
        var: Slot,
        body: &[St],
        accesses: &mut Vec<Access<'s>>,
    ) -> bool {
        let float = d != DType::I32;
        match &e.kind {
            ExKind::Const(c) => DType::of(c.dt) == Some(d),
            ExKind::Var(w) => {
                self.vars[*w as usize].is_some_and(|i| DType::of(i.dt) == Some(d))
                    && self.invariant_var_any(*w, var, body)
            }
            ExKind::Load { buf, dt, indices } => {
                if DType::of(*dt) != Some(d) || self.bufs.get(*buf as usize).is_none_or(|b| b.is_none()) {
                    return false;
                }
                // The stored buffer read elsewhere than the stored element: the order of
                // reads and writes would change.
                if *buf == plan.buf && !same_indices(indices, plan.indices) {
                    return false;
                }
                accesses.push((*buf, indices));
                true
            }
            ExKind::Bin(op, ab) => {
                use PrimBinOp::*;
                let allowed = match op {
                    Add | Sub | Min | Max => true,
                    Mul | Div => float,
                    _ => false,
                };
                allowed
                    && ab.iter().all(|x| self.vector_expr_ok(x, d, plan, var, body, accesses))
                    && ab.iter().all(|x| self.static_dtype(x) == Some(d))
            }
            // int32 `& | ^`: lane-wise on the bits, never out of the dtype.
            ExKind::Bits(op, ab) => {
                use Intrinsic::*;
                !float
                    && matches!(op, BitwiseAnd | BitwiseOr | BitwiseXor)
                    && ab.iter().all(|x| self.vector_expr_ok(x, d, plan, var, body, accesses))
                    && ab.iter().all(|x| self.static_dtype(x) == Some(d))
            }
            ExKind::Unary(op, a) => {
                use Intrinsic::*;
                float
                    && matches!(op, Fabs | Sqrt | Floor | Ceil | Round)
                    && self.vector_expr_ok(a, d, plan, var, body, accesses)
            }
            _ => false,
        }
    }

    /// A variable the loop does not change, bound before it.
    fn invariant_var_any(&self, w: Slot, var: Slot, body: &[St]) -> bool {
        w != var
            && self.defined.contains(&w)
            && !crate::tir::lower::assigned(body).contains(&w)
            && self.vars[w as usize].is_some()
    }

    fn static_dtype(&self, e: &Ex) -> Option<DType> {
        match &e.kind {
            ExKind::Const(c) => DType::of(c.dt),
            ExKind::Var(w) => DType::of(self.vars[*w as usize]?.dt),
            ExKind::Load { dt, .. } => DType::of(*dt),
            ExKind::Bin(_, ab) | ExKind::Bits(_, ab) => {
                let d = self.static_dtype(&ab[0])?;
                (self.static_dtype(&ab[1])? == d).then_some(d)
            }
            ExKind::Unary(_, a) => self.static_dtype(a),
            _ => None,
        }
    }

    /// The loop over `var` from `b` to `e`: the vector path when `plan` applies and its
    /// run-time conditions hold, then the scalar loop for the rest.
    #[allow(clippy::too_many_arguments)]
    pub fn vector_loop(
        &mut self,
        var: Slot,
        dt: DataType,
        b: V,
        e: V,
        end: &Ex,
        body: &[St],
        span: Span,
        plan: Plan,
        before: Known,
        changed: HashSet<Slot>,
    ) -> R<()> {
        let start = self.b.declare_var(types::I64);
        self.b.def_var(start, b.v);
        self.lane_slots = plan.lanes.clone();
        self.vector_end = Some(e.v);
        self.vector_cost = plan.cost;
        let scalar = self.b.create_block();
        let (vt, lanes) = match plan.dtype {
            DType::F64 => (types::F64X2, 2i64),
            DType::F32 => (types::F32X4, 4),
            _ => (types::I32X4, 4),
        };
        // Run-time conditions: a non-empty range, the loop variable in its dtype, axes
        // in their domains, accesses in bounds, no overlap, and the fuel.
        let mut safe = self.b.ins().icmp(IntCC::SignedLessThan, b.v, e.v);
        let ty = Ty::of(dt).unwrap_or(Ty::Int { bits: 64, signed: true });
        let last = self.b.ins().iadd_imm_s(e.v, -1);
        for x in [b.v, last] {
            let ok = self.fits(x, Ty::Int { bits: 64, signed: true }, ty);
            safe = self.b.ins().band(safe, ok);
        }
        let mut axis_value = HashMap::new();
        let i64t = Ty::Int { bits: 64, signed: true };
        for &(axis, bound, lo, hi, adt) in &plan.axes {
            let lo = self.simple_value(lo);
            let hi = self.simple_value(hi);
            let aty = Ty::of(adt).unwrap_or(i64t);
            let ok = match bound {
                Some(w) => {
                    let w = self.b.use_var(self.vars[w as usize].map_or(self.fuel, |i| i.var));
                    axis_value.insert(axis, w);
                    let a = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, w, lo);
                    let c = self.b.ins().icmp(IntCC::SignedLessThan, w, hi);
                    let f = self.fits(w, i64t, aty);
                    let ac = self.b.ins().band(a, c);
                    self.b.ins().band(ac, f)
                }
                None => {
                    let a = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, b.v, lo);
                    let c = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, e.v, hi);
                    let f1 = self.fits(b.v, i64t, aty);
                    let f2 = self.fits(last, i64t, aty);
                    let ac = self.b.ins().band(a, c);
                    let ff = self.b.ins().band(f1, f2);
                    self.b.ins().band(ac, ff)
                }
            };
            safe = self.b.ins().band(safe, ok);
        }
        let mut accesses = vec![(plan.buf, plan.indices)];
        let mut tmp = Vec::new();
        collect_loads(plan.value, &mut tmp);
        accesses.extend(tmp);
        let mut rows = HashMap::new();
        for (k, (buf, ix)) in accesses.iter().enumerate() {
            let (ok, row) = self.row_of(*buf, ix, &plan, &axis_value, b.v, e.v);
            safe = self.b.ins().band(safe, ok);
            rows.insert(k, row);
        }
        let store_ptr = self.buf_ptr(plan.buf);
        for (buf, _) in accesses.iter().skip(1) {
            if *buf != plan.buf {
                let p = self.buf_ptr(*buf);
                let ok = self.b.ins().icmp(IntCC::NotEqual, p, store_ptr);
                safe = self.b.ins().band(safe, ok);
            }
        }
        let (pre, head, vbody, vdone) =
            (self.b.create_block(), self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.ins().brif(safe, pre, &[], scalar, &[]);
        // The fuel of every iteration at once.
        self.b.switch_to_block(pre);
        let ext = self.b.ins().isub(e.v, b.v);
        let cost = self.b.ins().iconst(types::I64, plan.cost);
        let (total, over) = self.b.ins().umul_overflow(ext, cost);
        let fuel = self.b.use_var(self.fuel);
        let enough = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, fuel, total);
        let no_over = self.b.ins().icmp_imm_s(IntCC::Equal, over, 0);
        let go = self.b.ins().band(enough, no_over);
        let charged = self.b.create_block();
        self.b.ins().brif(go, charged, &[], scalar, &[]);
        self.b.switch_to_block(charged);
        let left = self.b.ins().isub(fuel, total);
        self.b.def_var(self.fuel, left);
        self.call(helpers::vector_loop_entered as *const () as usize, &[], &[], &[]);
        // Loop-invariant parts, once: each lane access's row address, each broadcast
        // read's value.
        let size = helpers::elem_size(plan.dtype);
        let mut ptrs = HashMap::new();
        for (k, (buf, ix)) in accesses.iter().enumerate() {
            let zero = self.b.ins().iconst(types::I64, 0);
            let row = self.lane_addr(*buf, rows[&k], zero, size);
            let lane = matches!(ix.last().map(|x| &x.kind), Some(ExKind::Var(l)) if plan.lanes.contains(l));
            let v = if lane {
                row
            } else {
                let s = self.b.ins().load(vt.lane_type(), flags(), row, 0);
                self.b.ins().splat(vt, s)
            };
            ptrs.insert(k, v);
        }
        let i = self.b.declare_var(types::I64);
        self.b.def_var(i, b.v);
        self.b.ins().jump(head, &[]);
        // Two chunks per trip, then at most one more.
        self.b.switch_to_block(head);
        let iv = self.b.use_var(i);
        let next2 = self.b.ins().iadd_imm_s(iv, 2 * lanes);
        let fits2 = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, next2, e.v);
        let (one, one_body) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(fits2, vbody, &[], one, &[]);
        self.b.switch_to_block(vbody);
        let second = self.b.ins().iadd_imm_s(iv, lanes);
        for at in [iv, second] {
            self.chunk(&plan, vt, at, size, &ptrs, &axis_value, scalar, start)?;
        }
        self.b.def_var(i, next2);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(one);
        let next1 = self.b.ins().iadd_imm_s(iv, lanes);
        let fits1 = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, next1, e.v);
        self.b.ins().brif(fits1, one_body, &[], vdone, &[]);
        self.b.switch_to_block(one_body);
        self.chunk(&plan, vt, iv, size, &ptrs, &axis_value, scalar, start)?;
        self.b.def_var(i, next1);
        self.b.ins().jump(vdone, &[]);
        self.b.switch_to_block(vdone);
        let iv = self.b.use_var(i);
        // The rest (and any overflowing chunk) in the scalar loop, its fuel given back.
        self.b.def_var(start, iv);
        self.refund(iv, e.v, plan.cost);
        // After at least one chunk the loop variable and the axes hold the last
        // iteration's values, as after the scalar loop.
        let ran = self.b.ins().icmp(IntCC::SignedGreaterThan, iv, b.v);
        let last_i = self.b.ins().iadd_imm_s(iv, -1);
        let mut bound: Vec<(Slot, Value)> = plan.lanes.iter().map(|&l| (l, last_i)).collect();
        bound.extend(plan.axes.iter().filter_map(|a| Some((a.0, *axis_value.get(&a.0)?))));
        for (slot, v) in bound {
            let Some(info) = self.vars[slot as usize] else { continue };
            let old = self.b.use_var(info.var);
            let new = self.b.ins().select(ran, v, old);
            self.b.def_var(info.var, new);
            let old = self.b.use_var(info.flag);
            let one = self.b.ins().iconst(types::I64, 1);
            let new = self.b.ins().select(ran, one, old);
            self.b.def_var(info.flag, new);
        }
        self.b.ins().jump(scalar, &[]);
        self.b.switch_to_block(scalar);
        let from = self.b.use_var(start);
        self.scalar_loop(var, dt, from, &b, &e, end, body, span)?;
        self.restore(before, &changed);
        Ok(())
    }

    fn refund(&mut self, i: Value, e: Value, cost: i64) {
        let rest = self.b.ins().isub(e, i);
        let back = self.b.ins().imul_imm_s(rest, cost);
        let f = self.b.use_var(self.fuel);
        let f = self.b.ins().iadd(f, back);
        self.b.def_var(self.fuel, f);
    }

    fn simple_value(&mut self, e: &Ex) -> Value {
        match e.kind {
            ExKind::Var(w) => {
                let v = self.vars[w as usize].map_or(self.fuel, |i| i.var);
                self.b.use_var(v)
            }
            ExKind::Const(c) => self.b.ins().iconst(types::I64, c.int_value().unwrap_or_default() as i64),
            _ => self.b.ins().iconst(types::I64, 0),
        }
    }

    /// The value of an invariant index (an axis bound outside the lanes, a variable
    /// or a literal).
    fn index_value(&mut self, e: &Ex, axis_value: &HashMap<Slot, Value>) -> Value {
        match e.kind {
            ExKind::Var(w) if axis_value.contains_key(&w) => axis_value[&w],
            _ => self.simple_value(e),
        }
    }

    fn buf_ptr(&mut self, buf: Slot) -> Value {
        let data = self.bufs[buf as usize].as_ref().map_or(self.fuel, |b| b.data);
        self.b.use_var(data)
    }

    /// Whether the access stays in bounds over `[b, e)`, and the element offset of its
    /// row (the element at lane index 0; for a broadcast access, the element itself).
    fn row_of(
        &mut self,
        buf: Slot,
        ix: &[Ex],
        plan: &Plan,
        axis_value: &HashMap<Slot, Value>,
        b: Value,
        e: Value,
    ) -> (Value, Value) {
        let dims = self.bufs[buf as usize].as_ref().map(|x| x.dims.clone()).unwrap_or_default();
        let mut ok = self.b.ins().iconst(types::I8, i64::from(ix.len() == dims.len()));
        let allocated = self.allocated.contains(&buf);
        if !allocated {
            let p = self.buf_ptr(buf);
            let nz = self.b.ins().icmp_imm_s(IntCC::NotEqual, p, 0);
            ok = self.b.ins().band(ok, nz);
        }
        let mut off = self.b.ins().iconst(types::I64, 0);
        for (k, (x, d)) in ix.iter().zip(&dims).enumerate() {
            let dv = self.dim_value(*d);
            let lane = matches!(x.kind, ExKind::Var(l) if plan.lanes.contains(&l));
            let (idx, in_b) = if lane {
                let lo = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, b, 0);
                let hi = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, e, dv);
                (self.b.ins().iconst(types::I64, 0), self.b.ins().band(lo, hi))
            } else {
                let v = self.index_value(x, axis_value);
                (v, self.b.ins().icmp(IntCC::UnsignedLessThan, v, dv))
            };
            ok = self.b.ins().band(ok, in_b);
            let m = if k == 0 { off } else { self.b.ins().imul(off, dv) };
            off = self.b.ins().iadd(m, idx);
        }
        (ok, off)
    }

    fn lane_addr(&mut self, buf: Slot, row: Value, i: Value, size: i64) -> Value {
        let base = self.buf_ptr(buf);
        let el = self.b.ins().iadd(row, i);
        let bytes = self.b.ins().imul_imm_s(el, size);
        self.b.ins().iadd(base, bytes)
    }

    /// Lanes `i..i + L`: the value, then the store.
    #[allow(clippy::too_many_arguments)]
    fn chunk(
        &mut self,
        plan: &Plan,
        vt: Type,
        i: Value,
        size: i64,
        ptrs: &HashMap<usize, Value>,
        axis_value: &HashMap<Slot, Value>,
        bail: cranelift_codegen::ir::Block,
        start: cranelift_frontend::Variable,
    ) -> R<()> {
        let off = self.b.ins().imul_imm_s(i, size);
        let mut k = 1;
        let value = self.vector_value(plan.value, vt, i, off, ptrs, &mut k, axis_value, bail, start)?;
        let addr = self.b.ins().iadd(ptrs[&0], off);
        self.b.ins().store(flags(), value, addr, 0);
        Ok(())
    }

    /// The vector of `e` for lanes `i..i + L` (`off`: lane `i`'s byte offset in a row);
    /// loads are numbered in the order [`collect_loads`] found them (`k`, from 1).
    #[allow(clippy::too_many_arguments)]
    fn vector_value(
        &mut self,
        e: &Ex,
        vt: Type,
        i: Value,
        off: Value,
        ptrs: &HashMap<usize, Value>,
        k: &mut usize,
        axis_value: &HashMap<Slot, Value>,
        bail: cranelift_codegen::ir::Block,
        start: cranelift_frontend::Variable,
    ) -> R<Value> {
        let lane_t = vt.lane_type();
        Ok(match &e.kind {
            ExKind::Const(c) => {
                let s = match lane_t {
                    types::F32 => self.b.ins().f32const(c.as_f64() as f32),
                    types::F64 => self.b.ins().f64const(c.as_f64()),
                    _ => self.b.ins().iconst(types::I32, c.int_value().unwrap_or_default() as i64),
                };
                self.b.ins().splat(vt, s)
            }
            ExKind::Var(w) => {
                let v = self.vars[*w as usize].map_or(self.fuel, |x| x.var);
                let s = self.b.use_var(v);
                let s = if lane_t == types::I32 { self.b.ins().ireduce(types::I32, s) } else { s };
                self.b.ins().splat(vt, s)
            }
            ExKind::Load { indices, .. } => {
                let p = ptrs[k];
                *k += 1;
                let lane =
                    matches!(indices.last().map(|x| &x.kind), Some(ExKind::Var(l)) if self.is_lane(*l, axis_value));
                if lane {
                    let addr = self.b.ins().iadd(p, off);
                    self.b.ins().load(vt, flags(), addr, 0)
                } else {
                    p
                }
            }
            ExKind::Bin(op, ab) => {
                let x = self.vector_value(&ab[0], vt, i, off, ptrs, k, axis_value, bail, start)?;
                let y = self.vector_value(&ab[1], vt, i, off, ptrs, k, axis_value, bail, start)?;
                self.vector_binary(*op, x, y, vt, i, bail, start)
            }
            ExKind::Bits(op, ab) => {
                let x = self.vector_value(&ab[0], vt, i, off, ptrs, k, axis_value, bail, start)?;
                let y = self.vector_value(&ab[1], vt, i, off, ptrs, k, axis_value, bail, start)?;
                let ins = self.b.ins();
                match op {
                    Intrinsic::BitwiseAnd => ins.band(x, y),
                    Intrinsic::BitwiseOr => ins.bor(x, y),
                    Intrinsic::BitwiseXor => ins.bxor(x, y),
                    _ => return super::gen::unsupported("a vector shift"),
                }
            }
            ExKind::Unary(op, a) => {
                let x = self.vector_value(a, vt, i, off, ptrs, k, axis_value, bail, start)?;
                let ins = self.b.ins();
                match op {
                    Intrinsic::Fabs => ins.fabs(x),
                    Intrinsic::Sqrt => ins.sqrt(x),
                    Intrinsic::Floor => ins.floor(x),
                    Intrinsic::Ceil => ins.ceil(x),
                    _ => ins.nearest(x),
                }
            }
            _ => return super::gen::unsupported("a vector expression"),
        })
    }

    fn is_lane(&self, l: Slot, axis_value: &HashMap<Slot, Value>) -> bool {
        !axis_value.contains_key(&l) && self.lane_slots.contains(&l)
    }

    #[allow(clippy::too_many_arguments)]
    fn vector_binary(
        &mut self,
        op: PrimBinOp,
        x: Value,
        y: Value,
        vt: Type,
        i: Value,
        bail: cranelift_codegen::ir::Block,
        start: cranelift_frontend::Variable,
    ) -> Value {
        use PrimBinOp::*;
        let float = vt != types::I32X4;
        let ins = self.b.ins();
        match (op, float) {
            (Add, true) => ins.fadd(x, y),
            (Sub, true) => ins.fsub(x, y),
            (Mul, _) => ins.fmul(x, y),
            (Div, _) => ins.fdiv(x, y),
            (Min, true) | (Max, true) => {
                let cc = if op == Min { FloatCC::LessThan } else { FloatCC::GreaterThan };
                let m = ins.fcmp(cc, x, y);
                let little = MemFlagsData::new().with_endianness(Endianness::Little);
                let m = self.b.ins().bitcast(vt, little, m);
                self.b.ins().bitselect(m, x, y)
            }
            (Min, false) => ins.smin(x, y),
            (Max, false) => ins.smax(x, y),
            _ => {
                // int32 + or -: a lane whose sign disagrees with both operands' (for -,
                // with the first's and against the second's) overflowed.
                let r = if op == Add { ins.iadd(x, y) } else { ins.isub(x, y) };
                let a = self.b.ins().bxor(x, r);
                let b = if op == Add { self.b.ins().bxor(y, r) } else { self.b.ins().bxor(x, y) };
                let ov = self.b.ins().band(a, b);
                let signs = self.b.ins().vhigh_bits(types::I32, ov);
                let fine = self.b.ins().icmp_imm_s(IntCC::Equal, signs, 0);
                let cont = self.b.create_block();
                let out = self.b.create_block();
                self.b.set_cold_block(out);
                self.b.ins().brif(fine, cont, &[], out, &[]);
                self.b.switch_to_block(out);
                self.b.def_var(start, i);
                let e = self.vector_end.unwrap_or(i);
                self.refund(i, e, self.vector_cost);
                self.b.ins().jump(bail, &[]);
                self.b.switch_to_block(cont);
                r
            }
        }
    }
}

fn same_indices(a: &[Ex], b: &[Ex]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (&x.kind, &y.kind) {
            (ExKind::Var(p), ExKind::Var(q)) => p == q,
            (ExKind::Const(p), ExKind::Const(q)) => p == q,
            _ => false,
        })
}

/// The loads of `e`, left to right (the order [`Gen::vector_value`] visits them).
fn collect_loads<'s>(e: &'s Ex, out: &mut Vec<Access<'s>>) {
    match &e.kind {
        ExKind::Load { buf, indices, .. } => out.push((*buf, indices)),
        ExKind::Bin(_, ab) | ExKind::Bits(_, ab) => ab.iter().for_each(|x| collect_loads(x, out)),
        ExKind::Unary(_, a) => collect_loads(a, out),
        _ => {}
    }
}
