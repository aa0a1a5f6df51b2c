//! Calls of the dimension manipulation and creation-like operators (`zeros_like`,
//! `ones_like`, `full_like`, `squeeze`, `expand_dims`, `flatten`, `flip`, `tril`,
//! `triu`, `tile`, `repeat`, `collapse_sum_like`) with the type their rules derive.

use super::exprs::{call, constant_expr, dtype_attr, no};
use super::ty::{scalar_for, Dim, Ty, NUMERIC};
use super::{Gen, Scope};
use spec_model::grammar::{AttrValue, Attrs, DataType, Expr, ExprKind, PrimBinOp, PrimExpr, PrimExprKind};
use spec_model::ops::Op;
use spec_model::Span;

const S: Span = Span::SYNTHETIC;

fn attr(name: &str, v: AttrValue) -> Attrs {
    let mut a = Attrs::default();
    a.insert(name, v);
    a
}

fn ints(xs: &[i64]) -> AttrValue {
    AttrValue::List(xs.iter().map(|&x| AttrValue::Int(x)).collect())
}

/// The product of dimensions, folded from 1 as the rules fold it.
fn product(ds: &[Dim]) -> Dim {
    ds.iter().fold(Dim::lit(1), |acc, d| Dim::binary(PrimBinOp::Mul, &acc, d))
}

/// An `int64` PrimValue literal.
fn prim(v: i64) -> Expr {
    Expr::new(ExprKind::PrimValue(PrimExpr::new(PrimExprKind::IntImm { value: v, dtype: DataType::INT64 }, S)), S)
}

impl Gen<'_, '_> {
    /// An axis index `a` of rank `r`, written negative half the time.
    fn written_axis(&mut self, a: usize, r: usize) -> i64 {
        a as i64 - if self.chance(1, 2) { r as i64 } else { 0 }
    }

    /// A call of one of this family's operators and the type its rule derives; `None`
    /// when the call would not fit here.
    pub(super) fn manipulate_dims_call(&mut self, op: Op, sc: &Scope) -> Option<(Expr, Ty)> {
        let any = |_: DataType| true;
        let num = |d: DataType| !d.is_bool();
        let this = op;
        let op = |args: Vec<Expr>, attrs: Attrs| call(Expr::op(this), args, Vec::new(), attrs);
        Some(match this {
            Op::ZerosLike | Op::OnesLike => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 0);
                let (attrs, to) = match self.pick(3) {
                    0 => {
                        let to =
                            self.choose(&[DataType::FLOAT32, DataType::INT32, DataType::BOOL, DataType::float(16)])?;
                        (dtype_attr("dtype", to), to)
                    }
                    _ => (no(), dt),
                };
                (op(vec![x], attrs), Ty::tensor(xd, to))
            }
            Op::FullLike => {
                let (x, xd, dt) = self.operand(sc, num, DataType::FLOAT32, 0);
                let fill_dt = self.choose(&NUMERIC)?;
                let fill = constant_expr(fill_dt, &[], &[scalar_for(fill_dt, self.range(-4, 4))]);
                let (attrs, to) = if self.chance(1, 2) {
                    let to = self.choose(&NUMERIC)?;
                    (dtype_attr("dtype", to), to)
                } else {
                    (no(), dt)
                };
                (op(vec![x, fill], attrs), Ty::tensor(xd, to))
            }
            Op::Squeeze => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 0);
                let r = xd.len();
                let ones: Vec<usize> = (0..r).filter(|&i| xd[i].as_lit() == Some(1)).collect();
                let all_literal = xd.iter().all(|d| d.as_lit().is_some());
                let (attrs, removed): (Attrs, Vec<usize>) = match self.pick(3) {
                    0 if all_literal => {
                        let a = if self.chance(1, 2) { attr("axis", AttrValue::None) } else { no() };
                        (a, ones)
                    }
                    _ if !ones.is_empty() => {
                        let chosen: Vec<usize> = ones.iter().copied().filter(|_| self.chance(2, 3)).collect();
                        let written: Vec<i64> = chosen.iter().map(|&a| self.written_axis(a, r)).collect();
                        let v = if written.len() == 1 && self.chance(1, 2) {
                            AttrValue::Int(written[0])
                        } else {
                            ints(&written)
                        };
                        (attr("axis", v), chosen)
                    }
                    _ => (attr("axis", ints(&[])), Vec::new()),
                };
                let out = (0..r).filter(|i| !removed.contains(i)).map(|i| xd[i].clone()).collect();
                (op(vec![x], attrs), Ty::tensor(out, dt))
            }
            Op::ExpandDims => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 0);
                let k = 1 + self.pick(2);
                let n = xd.len() + k;
                if n > self.cfg.max_rank {
                    return None;
                }
                let mut at: Vec<usize> = Vec::new();
                // A repeated draw takes the next free axis: redrawing never ends once the
                // generator's bytes run out (every pick is then 0).
                while at.len() < k {
                    let mut a = self.pick(n);
                    while at.contains(&a) {
                        a = (a + 1) % n;
                    }
                    at.push(a);
                }
                let written: Vec<i64> = at.iter().map(|&a| self.written_axis(a, n)).collect();
                let mut rest = xd.iter();
                let out =
                    (0..n).map(
                        |i| if at.contains(&i) { Dim::lit(1) } else { rest.next().cloned().unwrap_or(Dim::lit(1)) },
                    );
                let v = if k == 1 && self.chance(1, 2) { AttrValue::Int(written[0]) } else { ints(&written) };
                (op(vec![x], attr("axis", v)), Ty::tensor(out.collect(), dt))
            }
            Op::Flatten => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 0);
                let out = if xd.len() == 1 { xd } else { vec![product(&xd)] };
                (op(vec![x], no()), Ty::tensor(out, dt))
            }
            Op::Flip => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 1);
                let a = self.pick(xd.len());
                let axis = self.written_axis(a, xd.len());
                (op(vec![x], attr("axis", AttrValue::Int(axis))), Ty::tensor(xd, dt))
            }
            Op::Tril | Op::Triu => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 2);
                let k = self.range(-3, 3);
                (op(vec![x, prim(k)], no()), Ty::tensor(xd, dt))
            }
            Op::Tile => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 0);
                let l = self.pick(xd.len() + 2).min(self.cfg.max_rank);
                let reps: Vec<i64> = (0..l).map(|_| self.range(1, 3)).collect();
                let n = l.max(xd.len());
                let out: Vec<Dim> = (0..n)
                    .map(|i| {
                        let d = (i + xd.len()).checked_sub(n).map(|j| &xd[j]);
                        let r = (i + l).checked_sub(n).map(|j| reps[j]);
                        match (d, r) {
                            (Some(d), Some(r)) => Dim::binary(PrimBinOp::Mul, d, &Dim::lit(r)),
                            (Some(d), None) => d.clone(),
                            (None, Some(r)) => Dim::lit(r),
                            (None, None) => Dim::lit(1),
                        }
                    })
                    .collect();
                if !self.fits(&out) {
                    return None;
                }
                let v = if l == 1 && self.chance(1, 2) { AttrValue::Int(reps[0]) } else { ints(&reps) };
                (op(vec![x], attr("repeats", v)), Ty::tensor(out, dt))
            }
            Op::Repeat => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 0);
                let r = self.range(1, 3);
                let mut attrs = attr("repeats", AttrValue::Int(r));
                let out = if xd.is_empty() || self.chance(1, 4) {
                    if self.chance(1, 2) {
                        attrs.insert("axis", AttrValue::None);
                    }
                    vec![Dim::binary(PrimBinOp::Mul, &product(&xd), &Dim::lit(r))]
                } else {
                    let a = self.pick(xd.len());
                    let written = self.written_axis(a, xd.len());
                    attrs.insert("axis", AttrValue::Int(written));
                    let mut o = xd.clone();
                    o[a] = Dim::binary(PrimBinOp::Mul, &xd[a], &Dim::lit(r));
                    o
                };
                if !self.fits(&out) {
                    return None;
                }
                (op(vec![x], attrs), Ty::tensor(out, dt))
            }
            Op::CollapseSumLike => {
                let (x, xd, dt) = self.operand(sc, num, DataType::FLOAT32, 0);
                let drop = self.pick(xd.len() + 1);
                let td: Vec<Dim> =
                    xd[drop..].iter().map(|d| if self.chance(1, 3) { Dim::lit(1) } else { d.clone() }).collect();
                let target_dt = if self.chance(1, 4) { self.choose(&NUMERIC)? } else { dt };
                let target = self.arg_of(&Ty::tensor(td.clone(), target_dt), sc);
                (op(vec![x, target], no()), Ty::tensor(td, dt))
            }
            _ => return None,
        })
    }
}
