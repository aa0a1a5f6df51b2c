//! Expressions in native code (OP-call_tir): TVM's operand promotion, exact integer
//! arithmetic checked in its dtype, floats rounded to their dtype, checked casts and
//! the intrinsics, as [`crate::tir::num`] defines them.

use super::gen::{unsupported, Gen, R, V};
use super::helpers as h;
use super::ty::{arith, within, Ty};
use super::What;
use crate::error::ErrorKind;
use crate::tir::lower::{Ex, ExKind};
use crate::tir::num::{promote, Num};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use spec_model::grammar::tir::Intrinsic;
use spec_model::grammar::{DataType, PrimBinOp};
use spec_model::Span;

const I64: Ty = Ty::Int { bits: 64, signed: true };
const BOOL: Ty = Ty::Int { bits: 1, signed: false };

impl Gen<'_, '_> {
    fn int(&mut self, x: i64) -> Value {
        self.b.ins().iconst(types::I64, x)
    }

    fn boolean(&mut self, c: Value) -> V {
        let v = self.b.ins().uextend(types::I64, c);
        V { v, dt: DataType::bool(), ty: BOOL, iv: Some((0, 1)) }
    }

    /// A placeholder after an unconditional error (the code is unreachable).
    fn dead(&mut self) -> V {
        let v = self.int(0);
        V { v, dt: DataType::INT64, ty: I64, iv: Some((0, 0)) }
    }

    pub fn expr(&mut self, e: &Ex) -> R<V> {
        match &e.kind {
            ExKind::Const(c) => {
                let Some(ty) = Ty::of(c.dt) else { return unsupported(format!("a literal of dtype {}", c.dt)) };
                let (v, iv) = match c.n {
                    Num::I(i) => (self.int(i), Some((i.into(), i.into()))),
                    Num::U(u) => (self.int(u as i64), Some((u.into(), u.into()))),
                    Num::F(f) => (self.fconst(f, ty), None),
                };
                let v = if ty.is_float() && !matches!(c.n, Num::F(_)) { self.fconst(c.as_f64(), ty) } else { v };
                Ok(V { v, dt: c.dt, ty, iv: if ty.is_float() { None } else { iv } })
            }
            ExKind::Fail(f) => {
                self.fail(What::Fixed(f.kind, f.message.clone()), e.span, [None; 3]);
                Ok(self.dead())
            }
            ExKind::Var(s) => {
                let Some(info) = self.vars[*s as usize] else {
                    // Never bound anywhere: reading it is always an error.
                    self.fail(What::Unbound(*s), e.span, [None; 3]);
                    return Ok(self.dead());
                };
                if !self.defined.contains(s) {
                    let f = self.b.use_var(info.flag);
                    self.check(f, What::Unbound(*s), e.span, [None; 3]);
                }
                let v = self.b.use_var(info.var);
                let iv = self.ivs.get(s).copied().or(info.ty.range());
                Ok(V { v, dt: info.dt, ty: info.ty, iv })
            }
            ExKind::Bin(op, ab) => {
                let x = self.expr(&ab[0])?;
                let y = self.expr(&ab[1])?;
                self.binary(*op, x, y, e.span)
            }
            ExKind::Not(a) => {
                let x = self.expr(a)?;
                let t = self.truthy(x);
                let c = self.b.ins().icmp_imm_s(IntCC::Equal, t, 0);
                Ok(self.boolean(c))
            }
            ExKind::Select(cab) => {
                let c = self.expr(&cab[0])?;
                let c = self.truthy(c);
                let t = self.expr(&cab[1])?;
                let f = self.expr(&cab[2])?;
                let d = promote(t.dt, f.dt);
                if t.dt == d && f.dt == d {
                    let v = self.b.ins().select(c, t.v, f.v);
                    let iv = t.iv.zip(f.iv).map(|(a, b)| (a.0.min(b.0), a.1.max(b.1)));
                    return Ok(V { v, dt: d, ty: t.ty, iv });
                }
                // Only the chosen value is converted (its conversion can fail).
                self.choose(c, d, e.span, t, f)
            }
            ExKind::Cast(to, v) => {
                let x = self.expr(v)?;
                self.cast(x, *to, e.span)
            }
            ExKind::Load { buf, indices, .. } => {
                let addr = self.locate(*buf, indices, e.span)?;
                let v = self.load(*buf, addr);
                let dt = self.bufs[*buf as usize].as_ref().map(|b| b.dtype.data_type());
                let Some(dt) = dt else { return Ok(self.dead()) };
                let ty = Ty::of(dt).unwrap_or(I64);
                Ok(V { v, dt, ty, iv: ty.range() })
            }
            ExKind::IfThenElse(cab, with) => {
                let c = self.expr(&cab[0])?;
                let c = self.truthy(c);
                self.flush();
                let (tb, eb, join) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
                self.b.ins().brif(c, tb, &[], eb, &[]);
                let mut out: Option<(DataType, Ty)> = None;
                let mut ivs = Vec::new();
                for (k, blk) in [tb, eb].into_iter().enumerate() {
                    self.b.switch_to_block(blk);
                    let v = self.expr(&cab[k + 1])?;
                    let d = promote(v.dt, with[k]);
                    let v = self.cast(v, d, e.span)?;
                    match out {
                        Some((od, _)) if od != d => {
                            return unsupported("T.if_then_else whose dtype depends on the branch")
                        }
                        _ => out = Some((d, v.ty)),
                    }
                    if self.b.func.dfg.block_params(join).is_empty() {
                        self.b.append_block_param(join, v.ty.reg());
                    }
                    ivs.push(v.iv);
                    self.flush();
                    self.b.ins().jump(join, &[v.v.into()]);
                }
                self.b.switch_to_block(join);
                let (dt, ty) = out.unwrap_or((DataType::INT64, I64));
                let v = self.b.block_params(join)[0];
                let iv = match (ivs[0], ivs[1]) {
                    (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
                    _ => ty.range(),
                };
                Ok(V { v, dt, ty, iv })
            }
            ExKind::Pow(ab) => {
                let x = self.expr(&ab[0])?;
                let y = self.expr(&ab[1])?;
                let d = promote(x.dt, y.dt);
                let x = self.cast(x, d, e.span)?;
                let y = self.cast(y, d, e.span)?;
                match x.ty {
                    Ty::Float { bits: 64 } => {
                        let v = self.call1(h::pow64 as *const () as usize, &[types::F64; 2], types::F64, &[x.v, y.v]);
                        Ok(V { v, ..x })
                    }
                    Ty::Float { bits } => {
                        let mut v =
                            self.call1(h::pow32 as *const () as usize, &[types::F32; 2], types::F32, &[x.v, y.v]);
                        if bits == 16 {
                            v = self.f16_round32(v);
                        }
                        Ok(V { v, ..x })
                    }
                    Ty::Int { .. } => {
                        let m = format!("T.pow needs float arguments, got {d}");
                        self.fail(What::Fixed(ErrorKind::OpError, m), e.span, [None; 3]);
                        Ok(self.dead())
                    }
                }
            }
            ExKind::Bits(op, ab) => {
                let x = self.expr(&ab[0])?;
                let y = self.expr(&ab[1])?;
                self.bits(*op, x, y, e.span)
            }
            ExKind::Unary(op, a) => {
                let x = self.expr(a)?;
                self.unary(*op, x, e.span)
            }
        }
    }

    /// `T.bitwise_and/or/xor` and the shifts, as [`crate::tir::num::bitwise`]: on the
    /// registers' exact values (signed ones sign-extended, unsigned ones by their bits),
    /// so `& | ^` of values in the dtype stay in it; a shift amount is checked against
    /// `[0, bits)`; a left shift against the dtype (below 64 bits the product is exact
    /// in `i64`: |a| < 2^32 and k < 32; at 64 bits by shifting back).
    fn bits(&mut self, op: Intrinsic, x: V, y: V, span: Span) -> R<V> {
        let d = promote(x.dt, y.dt);
        let x = self.cast(x, d, span)?;
        let y = self.cast(y, d, span)?;
        let Ty::Int { bits, signed } = x.ty else {
            let m = format!("T.{} needs integer arguments, got {d}", op.name());
            self.fail(What::Fixed(ErrorKind::OpError, m), span, [None; 3]);
            return Ok(self.dead());
        };
        let range = x.ty.range();
        let (a, k) = (x.v, y.v);
        let v = match op {
            Intrinsic::BitwiseAnd => self.b.ins().band(a, k),
            Intrinsic::BitwiseOr => self.b.ins().bor(a, k),
            Intrinsic::BitwiseXor => self.b.ins().bxor(a, k),
            _ => {
                let unsigned = x.ty.is_u64();
                let in_range = if signed {
                    let lo = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, k, 0);
                    let hi = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, k, i64::from(bits));
                    self.b.ins().band(lo, hi)
                } else {
                    self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, k, i64::from(bits))
                };
                self.total_check(false);
                self.check(in_range, What::ShiftAmount { op, dt: d, unsigned }, span, [Some(k), None, None]);
                if op == Intrinsic::ShiftRight {
                    if signed {
                        self.b.ins().sshr(a, k)
                    } else {
                        self.b.ins().ushr(a, k)
                    }
                } else {
                    let r = self.b.ins().ishl(a, k);
                    let ok = if bits == 64 {
                        let back = if signed { self.b.ins().sshr(r, k) } else { self.b.ins().ushr(r, k) };
                        self.b.ins().icmp(IntCC::Equal, back, a)
                    } else {
                        self.fits(r, I64, x.ty)
                    };
                    self.total_check(false);
                    self.check(ok, What::ShiftOverflow { dt: d, unsigned }, span, [Some(a), Some(k), None]);
                    r
                }
            }
        };
        Ok(V { v, iv: range, ..x })
    }

    /// `c ? t : f` converted to `d`, converting only the side taken.
    fn choose(&mut self, c: Value, d: DataType, span: Span, t: V, f: V) -> R<V> {
        let Some(ty) = Ty::of(d) else { return unsupported(format!("a select of dtype {d}")) };
        self.flush();
        let (tb, eb, join) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.append_block_param(join, ty.reg());
        self.b.ins().brif(c, tb, &[], eb, &[]);
        let mut ivs = Vec::new();
        for (blk, v) in [(tb, t), (eb, f)] {
            self.b.switch_to_block(blk);
            let v = self.cast(v, d, span)?;
            ivs.push(v.iv);
            self.flush();
            self.b.ins().jump(join, &[v.v.into()]);
        }
        self.b.switch_to_block(join);
        let v = self.b.block_params(join)[0];
        let iv = ivs[0].zip(ivs[1]).map(|(a, b)| (a.0.min(b.0), a.1.max(b.1)));
        Ok(V { v, dt: d, ty, iv })
    }

    fn fconst(&mut self, f: f64, ty: Ty) -> Value {
        match ty {
            Ty::Float { bits: 64 } => self.b.ins().f64const(f),
            _ => self.b.ins().f32const(f as f32),
        }
    }

    /// A condition's truth as an `i8`: non-zero (NaN is non-zero).
    pub fn truthy(&mut self, x: V) -> Value {
        match x.ty {
            Ty::Int { .. } => self.b.ins().icmp_imm_s(IntCC::NotEqual, x.v, 0),
            Ty::Float { .. } => {
                let z = self.fconst(0.0, x.ty);
                self.b.ins().fcmp(FloatCC::NotEqual, x.v, z)
            }
        }
    }

    pub fn widen_f64(&mut self, v: Value, ty: Ty) -> Value {
        match ty {
            Ty::Float { bits: 64 } => v,
            Ty::Float { .. } => self.b.ins().fpromote(types::F64, v),
            Ty::Int { .. } if ty.is_u64() => self.b.ins().fcvt_from_uint(types::F64, v),
            Ty::Int { .. } => self.b.ins().fcvt_from_sint(types::F64, v),
        }
    }

    /// Whether the integer `v` (exact, of native type `from`) lies in `to`'s range.
    pub fn fits(&mut self, v: Value, from: Ty, to: Ty) -> Value {
        let Some((lo, hi)) = to.range() else { return self.b.ins().iconst(types::I8, 1) };
        let ins = self.b.ins();
        if from.is_u64() {
            // By its bits as u64: at most `hi` (every range starts at or below 0).
            return if to.is_u64() {
                ins.iconst(types::I8, 1)
            } else {
                ins.icmp_imm_u(IntCC::UnsignedLessThanOrEqual, v, hi as i64)
            };
        }
        if to.is_u64() {
            return ins.icmp_imm_s(IntCC::SignedGreaterThanOrEqual, v, 0);
        }
        let a = ins.icmp_imm_s(IntCC::SignedGreaterThanOrEqual, v, lo as i64);
        let b = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, v, hi as i64);
        self.b.ins().band(a, b)
    }

    /// `T.Cast(to, x)` and the conversion of stored, bound and promoted values.
    pub fn cast(&mut self, x: V, to: DataType, span: Span) -> R<V> {
        if x.dt == to {
            return Ok(x);
        }
        let Some(ty) = Ty::of(to) else {
            let m = format!("dtype {to} is not supported by TIR here");
            self.fail(What::Fixed(ErrorKind::OpError, m), span, [None; 3]);
            return Ok(self.dead());
        };
        if ty == BOOL {
            let t = self.truthy(x);
            return Ok(V { dt: to, ..self.boolean(t) });
        }
        let v = match (x.ty, ty) {
            (Ty::Int { .. }, Ty::Float { bits }) => {
                let unsigned = x.ty.is_u64();
                let v = match (bits, unsigned) {
                    (32, false) => self.b.ins().fcvt_from_sint(types::F32, x.v),
                    (32, true) => self.b.ins().fcvt_from_uint(types::F32, x.v),
                    (64, _) => self.widen_f64(x.v, x.ty),
                    _ => {
                        let d = self.widen_f64(x.v, x.ty);
                        self.call1(h::f16_round_f64 as *const () as usize, &[types::F64], types::F32, &[d])
                    }
                };
                return Ok(V { v, dt: to, ty, iv: None });
            }
            (Ty::Float { bits: from }, Ty::Float { bits }) => {
                let v = match (from, bits) {
                    (_, 64) => self.widen_f64(x.v, x.ty),
                    (64, 32) => self.b.ins().fdemote(types::F32, x.v),
                    (64, _) => self.call1(h::f16_round_f64 as *const () as usize, &[types::F64], types::F32, &[x.v]),
                    (16, 32) => x.v,
                    _ => self.f16_round32(x.v),
                };
                return Ok(V { v, dt: to, ty, iv: None });
            }
            (Ty::Float { .. }, Ty::Int { bits, signed }) => {
                let f = self.widen_f64(x.v, x.ty);
                let t = self.b.ins().trunc(f);
                let (lo, hi1) = match signed {
                    true => (-(2f64.powi(i32::from(bits) - 1)), 2f64.powi(i32::from(bits) - 1)),
                    false => (0.0, 2f64.powi(i32::from(bits))),
                };
                let lo = self.b.ins().f64const(lo);
                let hi1 = self.b.ins().f64const(hi1);
                let a = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, t, lo);
                let c = self.b.ins().fcmp(FloatCC::LessThan, t, hi1);
                let ok = self.b.ins().band(a, c);
                let bits_v = self.b.ins().bitcast(types::I64, MemFlagsData::new(), f);
                self.check(ok, What::Cast { to, float: true, unsigned: false }, span, [Some(bits_v), None, None]);
                let v = if ty.is_u64() {
                    self.b.ins().fcvt_to_uint(types::I64, t)
                } else {
                    self.b.ins().fcvt_to_sint(types::I64, t)
                };
                return Ok(V { v, dt: to, ty, iv: ty.range() });
            }
            (Ty::Int { .. }, Ty::Int { .. }) => x.v,
        };
        // Integer to integer: the value is unchanged and must fit.
        let range = ty.range().unwrap_or((0, 0));
        let proved = x.iv.is_some_and(|r| within(r, range));
        self.total_check(proved);
        if !proved {
            let ok = self.fits(v, x.ty, ty);
            let what = What::Cast { to, float: false, unsigned: x.ty.is_u64() };
            self.check(ok, what, span, [Some(v), None, None]);
        }
        let iv = x.iv.map(|r| (r.0.max(range.0), r.1.min(range.1)));
        Ok(V { v, dt: to, ty, iv: iv.or(Some(range)) })
    }

    fn binary(&mut self, op: PrimBinOp, x: V, y: V, span: Span) -> R<V> {
        use PrimBinOp::*;
        if let And | Or = op {
            let (a, b) = (self.truthy(x), self.truthy(y));
            let c = if op == And { self.b.ins().band(a, b) } else { self.b.ins().bor(a, b) };
            return Ok(self.boolean(c));
        }
        let (x, y) = if x.dt == y.dt {
            (x, y)
        } else {
            let d = promote(x.dt, y.dt);
            let x = self.cast(x, d, span)?;
            (x, self.cast(y, d, span)?)
        };
        match x.ty {
            Ty::Float { bits } => Ok(self.float_binary(op, x, y, bits)),
            Ty::Int { bits, signed } => self.int_binary(op, x, y, bits, signed, span),
        }
    }

    fn float_binary(&mut self, op: PrimBinOp, x: V, y: V, bits: u8) -> V {
        use PrimBinOp::*;
        let cmp = |cc| Some(cc);
        let cc = match op {
            Eq => cmp(FloatCC::Equal),
            Ne => cmp(FloatCC::NotEqual),
            Lt => cmp(FloatCC::LessThan),
            Le => cmp(FloatCC::LessThanOrEqual),
            Gt => cmp(FloatCC::GreaterThan),
            Ge => cmp(FloatCC::GreaterThanOrEqual),
            _ => None,
        };
        if let Some(cc) = cc {
            let c = self.b.ins().fcmp(cc, x.v, y.v);
            return self.boolean(c);
        }
        let (f, g) = (x.v, y.v);
        let r = match op {
            Add => self.b.ins().fadd(f, g),
            Sub => self.b.ins().fsub(f, g),
            Mul => self.b.ins().fmul(f, g),
            Div => self.b.ins().fdiv(f, g),
            Min | Max => {
                let cc = if op == Min { FloatCC::LessThan } else { FloatCC::GreaterThan };
                let c = self.b.ins().fcmp(cc, f, g);
                self.b.ins().select(c, f, g)
            }
            Mod => {
                let (a, b) = (self.widen_f64(f, x.ty), self.widen_f64(g, x.ty));
                let r = self.call1(h::fmod64 as *const () as usize, &[types::F64; 2], types::F64, &[a, b]);
                match bits {
                    64 => r,
                    32 => self.b.ins().fdemote(types::F32, r),
                    _ => self.call1(h::f16_round_f64 as *const () as usize, &[types::F64], types::F32, &[r]),
                }
            }
            FloorDiv | FloorMod => {
                let q = self.b.ins().fdiv(f, g);
                let q = if bits == 16 { self.f16_round32(q) } else { q };
                let q = self.b.ins().floor(q);
                if op == FloorDiv {
                    q
                } else {
                    let p = self.b.ins().fmul(q, g);
                    let p = if bits == 16 { self.f16_round32(p) } else { p };
                    self.b.ins().fsub(f, p)
                }
            }
            _ => f,
        };
        let r = if bits == 16 && !matches!(op, Min | Max | Mod | FloorDiv) { self.f16_round32(r) } else { r };
        V { v: r, ..x }
    }

    fn int_binary(&mut self, op: PrimBinOp, x: V, y: V, bits: u8, signed: bool, span: Span) -> R<V> {
        use PrimBinOp::*;
        let cc = |s: IntCC, u: IntCC| Some(if signed { s } else { u });
        let c = match op {
            Eq => Some(IntCC::Equal),
            Ne => Some(IntCC::NotEqual),
            Lt => cc(IntCC::SignedLessThan, IntCC::UnsignedLessThan),
            Le => cc(IntCC::SignedLessThanOrEqual, IntCC::UnsignedLessThanOrEqual),
            Gt => cc(IntCC::SignedGreaterThan, IntCC::UnsignedGreaterThan),
            Ge => cc(IntCC::SignedGreaterThanOrEqual, IntCC::UnsignedGreaterThanOrEqual),
            _ => None,
        };
        if let Some(c) = c {
            let r = self.b.ins().icmp(c, x.v, y.v);
            return Ok(self.boolean(r));
        }
        let range = x.ty.range().unwrap_or((0, 0));
        let iv = x.iv.zip(y.iv).and_then(|(a, b)| arith(op, a, b));
        let proved = iv.is_some_and(|r| within(r, range));
        let (a, b) = (x.v, y.v);
        let wide = bits == 64;
        let unsigned = !signed;
        let v = match op {
            Min | Max => {
                let c = match (op, signed) {
                    (Min, true) => IntCC::SignedLessThan,
                    (Min, false) => IntCC::UnsignedLessThan,
                    (_, true) => IntCC::SignedGreaterThan,
                    _ => IntCC::UnsignedGreaterThan,
                };
                let c = self.b.ins().icmp(c, a, b);
                return Ok(V { v: self.b.ins().select(c, a, b), iv: iv.or(x.ty.range()), ..x });
            }
            Add | Sub | Mul => {
                self.total_check(proved);
                if proved {
                    match op {
                        Add => self.b.ins().iadd(a, b),
                        Sub => self.b.ins().isub(a, b),
                        _ => self.b.ins().imul(a, b),
                    }
                } else if wide {
                    let ins = self.b.ins();
                    let (r, o) = match (op, signed) {
                        (Add, true) => ins.sadd_overflow(a, b),
                        (Add, false) => ins.uadd_overflow(a, b),
                        (Sub, true) => ins.ssub_overflow(a, b),
                        (Sub, false) => ins.usub_overflow(a, b),
                        (_, true) => ins.smul_overflow(a, b),
                        _ => ins.umul_overflow(a, b),
                    };
                    let ok = self.b.ins().icmp_imm_s(IntCC::Equal, o, 0);
                    self.check(ok, What::Overflow { op, dt: x.dt, unsigned }, span, [Some(a), Some(b), None]);
                    r
                } else {
                    // Operands within 32 bits: exact in i64 (an unsigned product by its bits).
                    let r = match op {
                        Add => self.b.ins().iadd(a, b),
                        Sub => self.b.ins().isub(a, b),
                        _ => self.b.ins().imul(a, b),
                    };
                    let ok = if unsigned {
                        self.b.ins().icmp_imm_u(IntCC::UnsignedLessThanOrEqual, r, range.1 as i64)
                    } else {
                        self.fits(r, I64, x.ty)
                    };
                    self.check(ok, What::Overflow { op, dt: x.dt, unsigned }, span, [Some(a), Some(b), None]);
                    r
                }
            }
            Div | Mod | FloorDiv | FloorMod => return Ok(self.division(op, x, y, span, iv, proved)),
            _ => return unsupported(format!("integer operator {}", op.spec_name())),
        };
        Ok(V { v, iv: if proved { iv } else { Some(range) }, ..x })
    }

    /// Integer division and remainder: zero divisor first, then `MIN / -1` (which
    /// must not reach the machine's division), then truncating or floored results.
    fn division(&mut self, op: PrimBinOp, x: V, y: V, span: Span, iv: Option<(i128, i128)>, proved: bool) -> V {
        use PrimBinOp::*;
        let (a, b) = (x.v, y.v);
        let Ty::Int { signed, .. } = x.ty else { return x };
        if y.iv.is_none_or(|r| r.0 <= 0 && r.1 >= 0) {
            let ok = self.b.ins().icmp_imm_s(IntCC::NotEqual, b, 0);
            self.check(ok, What::DivisionByZero(op), span, [Some(a), None, None]);
        }
        let range = x.ty.range().unwrap_or((0, 0));
        if !signed {
            let v = match op {
                Div | FloorDiv => self.b.ins().udiv(a, b),
                _ => self.b.ins().urem(a, b),
            };
            return V { v, iv: iv.or(Some(range)), ..x };
        }
        // Divisor -1: a negation (checked), remainder 0; else the machine's division.
        let minus1 = if y.iv.is_none_or(|r| r.0 <= -1 && r.1 >= -1) {
            Some(self.b.ins().icmp_imm_s(IntCC::Equal, b, -1))
        } else {
            None
        };
        let safe_b = match minus1 {
            Some(m) => {
                let one = self.int(1);
                self.b.ins().select(m, one, b)
            }
            None => b,
        };
        let q = self.b.ins().sdiv(a, safe_b);
        let r = self.b.ins().srem(a, safe_b);
        let v = match op {
            Div => q,
            Mod => r,
            _ => {
                // Floor: one step down where remainder and divisor differ in sign.
                let nz = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                let x_ = self.b.ins().bxor(r, safe_b);
                let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, x_, 0);
                let adj = self.b.ins().band(nz, neg);
                if op == FloorDiv {
                    let q1 = self.b.ins().iadd_imm_s(q, -1);
                    self.b.ins().select(adj, q1, q)
                } else {
                    let r1 = self.b.ins().iadd(r, safe_b);
                    self.b.ins().select(adj, r1, r)
                }
            }
        };
        let Some(m) = minus1 else { return V { v, iv: iv.or(Some(range)), ..x } };
        // a / -1 = -a, which overflows only at the dtype's minimum.
        let v = match op {
            Div | FloorDiv => {
                let at_min = self.b.ins().icmp_imm_s(IntCC::Equal, a, range.0 as i64);
                let bad = self.b.ins().band(m, at_min);
                let ok = self.b.ins().icmp_imm_s(IntCC::Equal, bad, 0);
                self.total_check(proved);
                self.check(ok, What::Overflow { op, dt: x.dt, unsigned: false }, span, [Some(a), Some(b), None]);
                let zero = self.int(0);
                let neg = self.b.ins().isub(zero, a);
                self.b.ins().select(m, neg, v)
            }
            _ => {
                let zero = self.int(0);
                self.b.ins().select(m, zero, v)
            }
        };
        V { v, iv: iv.or(Some(range)), ..x }
    }

    fn unary(&mut self, op: Intrinsic, x: V, span: Span) -> R<V> {
        use Intrinsic::*;
        match x.ty {
            Ty::Int { .. } => match op {
                Fabs => {
                    let range = x.ty.range().unwrap_or((0, 0));
                    if x.iv.is_some_and(|r| r.0 >= 0) || x.ty.range().is_some_and(|r| r.0 == 0) {
                        return Ok(x);
                    }
                    let neg = self.b.ins().ineg(x.v);
                    let is_neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, x.v, 0);
                    let v = self.b.ins().select(is_neg, neg, x.v);
                    let ok = self.b.ins().icmp_imm_s(IntCC::NotEqual, x.v, range.0 as i64);
                    let what = What::Cast { to: x.dt, float: false, unsigned: false };
                    self.check(ok, what, span, [Some(neg), None, None]);
                    Ok(V { v, iv: Some((0, range.1)), ..x })
                }
                Floor | Ceil | Round => Ok(x),
                BitwiseNot => {
                    // Sign-extended: `!a` is `-1 - a`; zero-extended below 64 bits: `max - a`.
                    let v = match x.ty {
                        Ty::Int { bits, signed: false } if bits < 64 => {
                            let max = x.ty.range().map_or(0, |r| r.1 as i64);
                            self.b.ins().bxor_imm_s(x.v, max)
                        }
                        _ => self.b.ins().bnot(x.v),
                    };
                    Ok(V { v, iv: x.ty.range(), ..x })
                }
                _ => {
                    let m = format!("T.{} needs a float argument, got {}", op.name(), x.dt);
                    self.fail(What::Fixed(ErrorKind::OpError, m), span, [None; 3]);
                    Ok(self.dead())
                }
            },
            Ty::Float { .. } if op.is_integer_only() => {
                let m = format!("T.{} needs an integer argument, got {}", op.name(), x.dt);
                self.fail(What::Fixed(ErrorKind::OpError, m), span, [None; 3]);
                Ok(self.dead())
            }
            Ty::Float { bits } => {
                let v = x.v;
                let t = x.ty.reg();
                let r = match op {
                    Sqrt => self.b.ins().sqrt(v),
                    Fabs => self.b.ins().fabs(v),
                    Floor => self.b.ins().floor(v),
                    Ceil => self.b.ins().ceil(v),
                    Round => self.b.ins().nearest(v),
                    Exp | Log | Tanh | Sigmoid | Rsqrt | Sin | Cos | Erf => {
                        let f = match (op, bits) {
                            (Exp, 64) => h::exp64 as *const () as usize,
                            (Log, 64) => h::log64 as *const () as usize,
                            (Tanh, 64) => h::tanh64 as *const () as usize,
                            (Rsqrt, 64) => h::rsqrt64 as *const () as usize,
                            (Sin, 64) => h::sin64 as *const () as usize,
                            (Cos, 64) => h::cos64 as *const () as usize,
                            (Erf, 64) => h::erf64 as *const () as usize,
                            (_, 64) => h::sigmoid64 as *const () as usize,
                            (Exp, _) => h::exp32 as *const () as usize,
                            (Log, _) => h::log32 as *const () as usize,
                            (Tanh, _) => h::tanh32 as *const () as usize,
                            (Rsqrt, _) => h::rsqrt32 as *const () as usize,
                            (Sin, _) => h::sin32 as *const () as usize,
                            (Cos, _) => h::cos32 as *const () as usize,
                            (Erf, _) => h::erf32 as *const () as usize,
                            _ => h::sigmoid32 as *const () as usize,
                        };
                        self.call1(f, &[t], t, &[v])
                    }
                    Pow | IfThenElse | BitwiseAnd | BitwiseOr | BitwiseXor | BitwiseNot | ShiftLeft | ShiftRight => v,
                };
                let r = if bits == 16 { self.f16_round32(r) } else { r };
                Ok(V { v: r, ..x })
            }
        }
    }
}
