//! Calls of the element indexing operators (`gather_elements`, `scatter_elements`)
//! with the type their rules derive. The indices are constants: along the axis any
//! count of positions within the axis' least length (negative ones too), rarely one
//! out of range (a run-time error); along the other axes no longer than `data`.

use super::exprs::{call, constant_expr};
use super::ty::{Dim, Ty};
use super::{Gen, Scope};
use spec_model::grammar::{AttrValue, Attrs, DataType, Expr, Scalar};
use spec_model::ops::Op;

impl Gen<'_, '_> {
    /// A constant indices tensor for `data` of dimensions `xd` along axis `a`, of an
    /// integer dtype (`unsigned` ones too when allowed), and its dimensions.
    fn element_indices(&mut self, xd: &[Dim], a: usize, unsigned: bool) -> (Expr, Vec<Dim>) {
        let shape: Vec<u64> = xd
            .iter()
            .enumerate()
            .map(|(j, d)| match d.as_lit() {
                _ if j == a => self.range(1, 3) as u64,
                Some(n) if self.chance(1, 2) => n.min(4) as u64,
                Some(n) => self.range(1, n.min(3)) as u64,
                None => 1,
            })
            .collect();
        let count: u64 = shape.iter().product();
        let mut dts = vec![DataType::INT64, DataType::INT32];
        if unsigned && xd[a].hi < 250 {
            dts.push(DataType::uint(8));
        }
        let dt = self.choose(&dts).unwrap_or(DataType::INT64);
        // Positions every run has: the literal length, else 1 (each dimension is at least 1).
        let least = xd[a].as_lit().unwrap_or(1);
        let bad = self.chance(1, 40);
        let lo = if dt.is_uint() { 0 } else { -least };
        let values: Vec<Scalar> = (0..count)
            .map(|_| {
                let v = if bad { xd[a].hi.max(least) + self.range(0, 2) } else { self.range(lo, least - 1) };
                Scalar::Int(v as i128)
            })
            .collect();
        let dims = shape.iter().map(|&k| Dim::lit(k as i64)).collect();
        (constant_expr(dt, &shape, &values), dims)
    }

    pub(super) fn index_call(&mut self, op: Op, sc: &Scope) -> Option<(Expr, Ty)> {
        let (x, xd, dt) = self.operand(sc, |_| true, DataType::FLOAT32, 1);
        let r = xd.len();
        let a = self.pick(r);
        let mut attrs = Attrs::default();
        if a != 0 || self.chance(1, 2) {
            let written = if self.chance(1, 2) { a as i64 - r as i64 } else { a as i64 };
            attrs.insert("axis", AttrValue::Int(written));
        }
        let mk = |args: Vec<Expr>, attrs: Attrs| call(Expr::op(op), args, Vec::new(), attrs);
        Some(if op == Op::GatherElements {
            let (idx, id) = self.element_indices(&xd, a, false);
            (mk(vec![x, idx], attrs), Ty::tensor(id, dt))
        } else {
            let (idx, id) = self.element_indices(&xd, a, true);
            let updates = self.arg_of(&Ty::tensor(id, dt), sc);
            let reduction = self.choose(&["update", "update", "add", "mul", "mean", "max", "min"])?;
            if reduction != "update" || self.chance(1, 3) {
                attrs.insert("reduction", AttrValue::Str(reduction.into()));
            }
            (mk(vec![x, idx, updates], attrs), Ty::tensor(xd, dt))
        })
    }
}
