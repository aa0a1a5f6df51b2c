//! Calls of `layout_transform` with the type its rule derives: index maps that
//! permute the axes, split one axis by a constant (`a // c`, `a % c`, padded when
//! `c` does not divide it), or fuse an axis with a following constant one
//! (`a * B + b`).

use super::exprs::call;
use super::ty::{Dim, Ty};
use super::{Gen, Scope};
use spec_model::grammar::{AttrValue, Attrs, DataType, Expr, FloatLit, IndexMap, PrimBinOp, PrimExpr, PrimVar};
use spec_model::ops::Op;

impl Gen<'_, '_> {
    pub(super) fn layout_transform_call(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let (x, xd, dt) = self.operand(sc, |_| true, DataType::FLOAT32, 1);
        let r = xd.len();
        let params: Vec<PrimVar> = (0..r).map(|k| PrimVar::shape_var(format!("i{k}"))).collect();
        let p = |k: usize| PrimExpr::var(&params[k]);
        let lit = PrimExpr::int;
        let (results, out): (Vec<PrimExpr>, Vec<Dim>) = match self.pick(3) {
            0 => {
                let mut perm: Vec<usize> = (0..r).collect();
                for i in (1..r).rev() {
                    let j = self.pick(i + 1);
                    perm.swap(i, j);
                }
                (perm.iter().map(|&k| p(k)).collect(), perm.iter().map(|&k| xd[k].clone()).collect())
            }
            1 => {
                let a = self.pick(r);
                let c = self.range(2, 4);
                let mut results: Vec<PrimExpr> = (0..r).map(p).collect();
                let mut out = xd.clone();
                results[a] = PrimExpr::binary(PrimBinOp::FloorDiv, p(a), lit(c));
                // The rule's extent of `a // c`: ((n - 1) // c - 0) + 1, folded as it folds.
                let hi =
                    Dim::binary(PrimBinOp::FloorDiv, &Dim::binary(PrimBinOp::Sub, &xd[a], &Dim::lit(1)), &Dim::lit(c));
                out[a] = Dim::binary(PrimBinOp::Add, &hi, &Dim::lit(1));
                let at = if self.chance(1, 2) { r } else { a + 1 };
                results.insert(at, PrimExpr::binary(PrimBinOp::FloorMod, p(a), lit(c)));
                out.insert(at, Dim::lit(c));
                (results, out)
            }
            _ => {
                let a = (0..r.saturating_sub(1)).find(|&a| xd[a + 1].as_lit().is_some_and(|b| b >= 1))?;
                let b = xd[a + 1].as_lit().unwrap_or(1);
                let mut results: Vec<PrimExpr> = (0..r).map(p).collect();
                results[a] = PrimExpr::binary(PrimBinOp::Add, PrimExpr::binary(PrimBinOp::Mul, p(a), lit(b)), p(a + 1));
                results.remove(a + 1);
                // The rule's linear bound: (n - 1) * b + (b - 1) + 1 = n * b.
                let mut out = xd.clone();
                out[a] = Dim::binary(PrimBinOp::Mul, &xd[a], &Dim::lit(b));
                out.remove(a + 1);
                (results, out)
            }
        };
        if !self.fits(&out) {
            return None;
        }
        let mut attrs = Attrs::default();
        attrs.insert("index_map", AttrValue::IndexMap(IndexMap { params, results }));
        match self.pick(4) {
            0 if dt.is_float() => attrs.insert("pad_value", AttrValue::Float(FloatLit(self.range(-8, 8) as f64 / 2.0))),
            1 if !dt.is_bool() => attrs.insert("pad_value", AttrValue::Int(self.range(0, 9))),
            2 => attrs.insert("pad_value", AttrValue::None),
            _ => {}
        }
        Some((call(Expr::op(Op::LayoutTransform), vec![x], Vec::new(), attrs), Ty::tensor(out, dt)))
    }
}
