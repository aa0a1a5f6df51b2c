//! Calls of the statistics and normalization operators (`prod`, `argmax`, `argmin`,
//! `variance`, `std`, `cumsum`, `nn.log_softmax`, `nn.layer_norm`, `nn.rms_norm`,
//! `nn.group_norm`, `nn.batch_norm`, `nn.dropout`) with the type their rules derive.

use super::exprs::{call, no};
use super::ty::{Dim, Ty};
use super::{Gen, Scope};
use spec_model::grammar::{AttrValue, Attrs, DataType, Expr, PrimBinOp};
use spec_model::ops::Op;

fn ints(xs: &[i64]) -> AttrValue {
    AttrValue::List(xs.iter().map(|&x| AttrValue::Int(x)).collect())
}

impl Gen<'_, '_> {
    /// A random axis of a rank-`r` tensor, negative half the time.
    fn some_axis(&mut self, r: usize) -> (usize, i64) {
        let a = self.pick(r);
        (a, if self.chance(1, 2) { a as i64 - r as i64 } else { a as i64 })
    }

    /// `epsilon` (and, for the norms with them, `center`/`scale`) now and then.
    fn norm_attrs(&mut self, attrs: &mut Attrs, center_scale: bool) {
        if self.chance(1, 2) {
            attrs.insert("epsilon", AttrValue::Float(ordered(self.choose(&[1e-5, 1e-3, 0.5, 0.0]).unwrap_or(1e-5))));
        }
        if center_scale {
            for name in ["center", "scale"] {
                if self.chance(1, 3) {
                    let b = self.chance(1, 2);
                    attrs.insert(name, AttrValue::Bool(b));
                }
            }
        }
    }

    pub(super) fn statistics_call(&mut self, op: Op, sc: &Scope) -> Option<(Expr, Ty)> {
        let num = |d: DataType| !d.is_bool();
        let float = |d: DataType| d.is_float();
        let mk = |args: Vec<Expr>, attrs: Attrs| call(Expr::op(op), args, Vec::new(), attrs);
        Some(match op {
            Op::Prod | Op::Variance | Op::Std => {
                let (x, xd, dt) = if op == Op::Std {
                    self.operand(sc, float, DataType::FLOAT32, 0)
                } else {
                    self.operand(sc, num, DataType::FLOAT32, 0)
                };
                let r = xd.len();
                let axes: Option<Vec<usize>> = match self.pick(3) {
                    _ if r == 0 => None,
                    0 => None,
                    1 => Some(vec![self.pick(r)]),
                    _ => Some((0..r).filter(|_| self.chance(1, 2)).collect()),
                };
                let keep = self.chance(1, 2);
                let mut attrs = no();
                if let Some(list) = &axes {
                    attrs.insert("axis", ints(&list.iter().map(|&i| i as i64).collect::<Vec<_>>()));
                }
                attrs.insert("keepdims", AttrValue::Bool(keep));
                let reduced = |i: usize| axes.as_ref().is_none_or(|l| l.contains(&i));
                let out = (0..r)
                    .filter_map(|i| match (reduced(i), keep) {
                        (false, _) => Some(xd[i].clone()),
                        (true, true) => Some(Dim::lit(1)),
                        (true, false) => None,
                    })
                    .collect();
                (mk(vec![x], attrs), Ty::tensor(out, dt))
            }
            Op::Argmax | Op::Argmin => {
                let (x, xd, _) = self.operand(sc, |_| true, DataType::FLOAT32, 0);
                let r = xd.len();
                let axis = if r > 0 && self.chance(2, 3) { Some(self.some_axis(r)) } else { None };
                let keep = self.chance(1, 2);
                let mut attrs = no();
                if let Some((_, a)) = axis {
                    attrs.insert("axis", AttrValue::Int(a));
                }
                if keep || self.chance(1, 2) {
                    attrs.insert("keepdims", AttrValue::Bool(keep));
                }
                let out = (0..r)
                    .filter_map(|i| match (axis.is_none_or(|(a, _)| a == i), keep) {
                        (false, _) => Some(xd[i].clone()),
                        (true, true) => Some(Dim::lit(1)),
                        (true, false) => None,
                    })
                    .collect();
                (mk(vec![x], attrs), Ty::tensor(out, DataType::INT64))
            }
            Op::Cumsum => {
                let (x, xd, dt) = self.operand(sc, num, DataType::FLOAT32, 0);
                let mut attrs = no();
                let axis = if !xd.is_empty() && self.chance(2, 3) { Some(self.some_axis(xd.len()).1) } else { None };
                if let Some(a) = axis {
                    attrs.insert("axis", AttrValue::Int(a));
                }
                // Floats convert only to floats (NaN has no integer).
                let to = if self.chance(1, 3) {
                    let fl = [DataType::FLOAT32, DataType::float(64)];
                    let all = [DataType::FLOAT32, DataType::float(64), DataType::INT32, DataType::INT64];
                    let to = self.choose(if dt.is_float() { &fl[..] } else { &all[..] })?;
                    attrs.insert("dtype", AttrValue::Str(to.to_string()));
                    to
                } else {
                    dt
                };
                if self.chance(1, 2) {
                    let e = self.chance(1, 2);
                    attrs.insert("exclusive", AttrValue::Bool(e));
                }
                let out = match axis {
                    Some(_) => xd,
                    None => vec![xd.iter().fold(Dim::lit(1), |acc, d| Dim::binary(PrimBinOp::Mul, &acc, d))],
                };
                (mk(vec![x], attrs), Ty::tensor(out, to))
            }
            Op::LogSoftmax => {
                let (x, xd, dt) = self.operand(sc, float, DataType::FLOAT32, 1);
                let attrs =
                    if self.chance(1, 2) { attr1("axis", AttrValue::Int(self.some_axis(xd.len()).1)) } else { no() };
                (mk(vec![x], attrs), Ty::tensor(xd, dt))
            }
            Op::LayerNorm | Op::RmsNorm => {
                let (x, xd, dt) = self.operand(sc, float, DataType::FLOAT32, 1);
                let r = xd.len();
                // Trailing axes mostly (the usual layout), any distinct ones sometimes.
                let axes: Vec<usize> = if self.chance(2, 3) {
                    (r - 1 - self.pick(r.min(2))..r).collect()
                } else {
                    let mut a: Vec<usize> = (0..r).filter(|_| self.chance(1, 2)).collect();
                    if a.is_empty() {
                        a.push(self.pick(r));
                    }
                    a
                };
                let mut attrs = no();
                let written: Vec<i64> =
                    axes.iter().map(|&a| if self.chance(1, 3) { a as i64 - r as i64 } else { a as i64 }).collect();
                if op == Op::LayerNorm || written != [r as i64 - 1] || self.chance(1, 2) {
                    attrs.insert("axes", ints(&written));
                }
                self.norm_attrs(&mut attrs, op == Op::LayerNorm);
                let pd: Vec<Dim> = axes.iter().map(|&a| xd[a].clone()).collect();
                let mut args = vec![x];
                for _ in 0..if op == Op::LayerNorm { 2 } else { 1 } {
                    args.push(self.arg_of(&Ty::tensor(pd.clone(), dt), sc));
                }
                (mk(args, attrs), Ty::tensor(xd, dt))
            }
            Op::GroupNorm => {
                let (x, xd, dt) = self.operand(sc, float, DataType::FLOAT32, 2);
                let r = xd.len();
                let c = self.pick(r);
                let groups = match xd[c].as_lit() {
                    Some(n) => {
                        let divisors: Vec<i64> = (1..=n).filter(|g| n % g == 0).collect();
                        self.choose(&divisors)?
                    }
                    None => 1,
                };
                let axes: Vec<i64> =
                    (0..r).filter(|&i| i != c && i > 0 && self.chance(2, 3)).map(|i| i as i64).collect();
                let mut attrs = no();
                attrs.insert("num_groups", AttrValue::Int(groups));
                attrs.insert(
                    "channel_axis",
                    AttrValue::Int(if self.chance(1, 2) { c as i64 - r as i64 } else { c as i64 }),
                );
                attrs.insert("axes", ints(&axes));
                self.norm_attrs(&mut attrs, true);
                let pd = vec![xd[c].clone()];
                let g = self.arg_of(&Ty::tensor(pd.clone(), dt), sc);
                let b = self.arg_of(&Ty::tensor(pd, dt), sc);
                (mk(vec![x, g, b], attrs), Ty::tensor(xd, dt))
            }
            Op::BatchNorm => {
                let (x, xd, dt) = self.operand(sc, float, DataType::FLOAT32, 1);
                let (a, written) = self.some_axis(xd.len());
                let mut attrs = attr1("axis", AttrValue::Int(written));
                self.norm_attrs(&mut attrs, true);
                if self.chance(2, 3) {
                    let t = self.chance(1, 2);
                    attrs.insert("training", AttrValue::Bool(t));
                }
                if self.chance(1, 3) {
                    attrs.insert(
                        "momentum",
                        AttrValue::Float(ordered(self.choose(&[0.1, 0.5, 1.0, 0.0]).unwrap_or(0.1))),
                    );
                }
                let pty = Ty::tensor(vec![xd[a].clone()], dt);
                let mut args = vec![x];
                for _ in 0..4 {
                    args.push(self.arg_of(&pty, sc));
                }
                (mk(args, attrs), Ty::Tuple(vec![Ty::tensor(xd, dt), pty.clone(), pty]))
            }
            Op::Dropout => {
                let (x, xd, dt) = self.operand(sc, |_| true, DataType::FLOAT32, 0);
                let attrs = if self.chance(1, 2) { attr1("rate", AttrValue::Float(ordered(0.25))) } else { no() };
                let t = Ty::tensor(xd, dt);
                (mk(vec![x], attrs), Ty::Tuple(vec![t.clone(), t]))
            }
            _ => return None,
        })
    }
}

fn attr1(name: &str, v: AttrValue) -> Attrs {
    let mut a = Attrs::default();
    a.insert(name, v);
    a
}

fn ordered(x: f64) -> spec_model::grammar::FloatLit {
    spec_model::grammar::FloatLit(x)
}
