//! Calls of the unary math and activation operators (issue 19): `erf` … `nn.silu`
//! keep their operand's type (`isnan`/`isinf` give `bool`), `nn.leakyrelu` takes an
//! `alpha`, `clip` two PrimValue bounds (integers, or `T.float64` numbers).

use super::exprs::{call, no};
use super::ty::Ty;
use super::{Gen, Scope};
use spec_model::grammar::{AttrValue, Attrs, DataType, Expr, ExprKind, FloatLit, PrimExpr, PrimExprKind};
use spec_model::ops::Op;
use spec_model::Span;

const S: Span = Span::SYNTHETIC;

fn prim(kind: PrimExprKind) -> Expr {
    Expr::new(ExprKind::PrimValue(PrimExpr::new(kind, S)), S)
}

impl Gen<'_, '_> {
    /// A call of `op`, one of this family's, with an operand from `sc` (or a new one).
    pub(super) fn unary_math_call(&mut self, op: Op, sc: &Scope) -> Option<(Expr, Ty)> {
        let float = |d: DataType| d.is_float();
        let num = |d: DataType| !d.is_bool();
        let any = |_: DataType| true;
        let mk = |args: Vec<Expr>, attrs: Attrs| call(Expr::op(op), args, Vec::new(), attrs);
        Some(match op {
            Op::Erf | Op::Rsqrt | Op::Sin | Op::Cos | Op::Gelu | Op::GeluTanh | Op::Silu => {
                let (a, ad, dt) = self.operand(sc, float, DataType::FLOAT32, 0);
                (mk(vec![a], no()), Ty::tensor(ad, dt))
            }
            Op::Floor | Op::Ceil | Op::Round | Op::Sign | Op::Square => {
                // Mostly floats (where these compute something); integers and bool too.
                let (ok, default): (fn(DataType) -> bool, DataType) = match self.pick(4) {
                    0 => (any, DataType::INT32),
                    1 => (num, DataType::INT64),
                    _ => (float, DataType::FLOAT32),
                };
                let (a, ad, dt) = self.operand(sc, ok, default, 0);
                (mk(vec![a], no()), Ty::tensor(ad, dt))
            }
            Op::IsNan | Op::IsInf => {
                let ok: fn(DataType) -> bool = if self.chance(1, 4) { any } else { float };
                let (a, ad, _) = self.operand(sc, ok, DataType::FLOAT32, 0);
                (mk(vec![a], no()), Ty::tensor(ad, DataType::BOOL))
            }
            Op::LeakyRelu => {
                let (a, ad, dt) = self.operand(sc, float, DataType::FLOAT32, 0);
                let mut attrs = no();
                match self.pick(4) {
                    0 => {}
                    1 => attrs.insert("alpha", AttrValue::Int(self.range(-2, 2))),
                    _ => {
                        let alpha = self.choose(&[0.01, 0.2, 0.1, -0.5, 1.5, 0.0])?;
                        attrs.insert("alpha", AttrValue::Float(FloatLit(alpha)));
                    }
                }
                (mk(vec![a], attrs), Ty::tensor(ad, dt))
            }
            Op::Clip => {
                let (a, ad, dt) = self.operand(sc, num, DataType::FLOAT32, 0);
                let lo = self.range(-4, 2);
                let hi = lo + self.range(0, 6);
                // Now and then the bounds the wrong way round (`min` wins, as in TVM).
                let (lo, hi) = if self.chance(1, 10) { (hi, lo) } else { (lo, hi) };
                let bound = |g: &mut Self, v: i64| {
                    if g.chance(1, 2) {
                        prim(PrimExprKind::IntImm { value: v, dtype: DataType::INT64 })
                    } else {
                        let f = v as f64 + g.choose(&[0.0, 0.5, 0.25, -0.75]).unwrap_or(0.0);
                        prim(PrimExprKind::FloatImm { value: FloatLit(f), dtype: DataType::float(64) })
                    }
                };
                let (l, h) = (bound(self, lo), bound(self, hi));
                (mk(vec![a, l, h], no()), Ty::tensor(ad, dt))
            }
            _ => return None,
        })
    }
}
