//! Inputs of the entry function: each shape variable gets a value in `1..=max_dim`,
//! and each tensor small elements (so that arithmetic stays far from overflow).

use super::ty::{scalar_for, Ty};
use super::{Gen, Scope};
use spec_model::grammar::{NDArray, PrimExprKind, Scalar};
use std::collections::HashMap;

impl<'a> Gen<'a, '_> {
    /// One array per parameter of `main` (the parameters are `sc.vars`).
    pub(super) fn inputs(&mut self, sc: &Scope) -> Vec<NDArray> {
        let mut values = HashMap::new();
        for (v, hi) in &sc.shape_vars {
            let x = self.range(1, *hi);
            values.insert(v.clone(), x);
        }
        let mut out = Vec::new();
        for (_, ty) in &sc.vars {
            let Ty::Tensor { dims, dtype } = ty else { continue };
            let shape: Vec<u64> = dims
                .iter()
                .map(|d| match &*d.e.kind {
                    PrimExprKind::Var(v) => values.get(v).copied().unwrap_or(1) as u64,
                    _ => d.as_lit().unwrap_or(1) as u64,
                })
                .collect();
            let n: u64 = shape.iter().product();
            let elems: Vec<Scalar> = (0..n).map(|_| scalar_for(*dtype, self.range(-6, 6))).collect();
            let arr = NDArray::from_scalars(*dtype, shape, &elems).expect("small values fit every generated dtype");
            out.push(arr);
        }
        out
    }
}
