//! Calls of the sorting operators (`sort`, `argsort`, `topk`) with the type their
//! rules derive.

use super::exprs::call;
use super::ty::{Dim, Ty};
use super::{Gen, Scope};
use spec_model::grammar::{AttrValue, Attrs, DataType, Expr};
use spec_model::ops::Op;

impl Gen<'_, '_> {
    /// An index dtype for positions below `hi` (an axis of at most `hi` elements):
    /// `int32` and `int64` mostly, an 8-bit one when it holds them.
    fn index_dtype(&mut self, hi: i64) -> DataType {
        let small = [DataType::int(8), DataType::uint(8), DataType::uint(16)];
        match self.pick(6) {
            0 if hi <= 128 => self.choose(&small).unwrap_or(DataType::INT32),
            1 | 2 => DataType::INT64,
            _ => DataType::INT32,
        }
    }

    pub(super) fn sorting_call(&mut self, op: Op, sc: &Scope) -> Option<(Expr, Ty)> {
        let (x, xd, dt) = self.operand(sc, |_| true, DataType::FLOAT32, 1);
        let r = xd.len();
        let a = self.pick(r);
        let mut attrs = Attrs::default();
        if a != r - 1 || self.chance(1, 3) {
            let written = if self.chance(1, 2) { a as i64 - r as i64 } else { a as i64 };
            attrs.insert("axis", AttrValue::Int(written));
        }
        let order = if op == Op::Topk { "largest" } else { "descending" };
        if self.chance(1, 2) {
            let b = self.chance(1, 2);
            attrs.insert(order, AttrValue::Bool(b));
        }
        let idx = self.index_dtype(xd[a].hi);
        // TVM's Python API writes `dtype="int32"` out; absent it is the same here.
        if op != Op::Sort && (idx != DataType::INT32 || self.chance(1, 2)) {
            attrs.insert("dtype", AttrValue::Str(idx.to_string()));
        }
        let mk = |args: Vec<Expr>, attrs: Attrs| call(Expr::op(op), args, Vec::new(), attrs);
        Some(match op {
            Op::Sort => (mk(vec![x], attrs), Ty::tensor(xd, dt)),
            Op::Argsort => (mk(vec![x], attrs), Ty::tensor(xd, idx)),
            _ => {
                // k within the axis' least length (its literal, else 1: every generated
                // dimension is at least 1); 0 or negative means the whole axis.
                let least = xd[a].as_lit().unwrap_or(1);
                let k = match self.pick(5) {
                    0 => self.choose(&[0, -1]).unwrap_or(0),
                    _ => self.range(1, least),
                };
                if k != 1 || self.chance(1, 2) {
                    attrs.insert("k", AttrValue::Int(k));
                }
                let mut out = xd.clone();
                if k >= 1 {
                    out[a] = Dim::lit(k);
                }
                let ret = self.choose(&["both", "values", "indices"]).unwrap_or("both");
                if ret != "both" || self.chance(1, 2) {
                    attrs.insert("ret_type", AttrValue::Str(ret.into()));
                }
                let values = Ty::tensor(out.clone(), dt);
                let indices = Ty::tensor(out, idx);
                let ty = match ret {
                    "values" => values,
                    "indices" => indices,
                    _ => Ty::Tuple(vec![values, indices]),
                };
                (mk(vec![x], attrs), ty)
            }
        })
    }
}
