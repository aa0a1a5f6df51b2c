//! `IndexMap`: the index transformation `R.layout_transform` carries as its
//! `index_map` attribute, written `lambda i, j: (i // 4, j, i % 4)` (Relax's tests)
//! or `T.index_map(lambda i, j: ...)` (TVM 0.27's printer).

use super::{PrimExpr, PrimExprKind, PrimVar};
use std::collections::HashMap;

/// `lambda params: (results...)`: each result is an index expression over the
/// parameters (and shape variables in scope).
#[derive(Clone, Debug)]
pub struct IndexMap {
    pub params: Vec<PrimVar>,
    pub results: Vec<PrimExpr>,
}

impl IndexMap {
    /// `e` with parameter `params[k]` replaced by `to[k]`.
    pub fn rename(&self, e: &PrimExpr, to: &[PrimVar]) -> PrimExpr {
        let m: HashMap<u64, &PrimVar> = self.params.iter().map(|p| p.id()).zip(to).collect();
        rename(e, &m)
    }
}

fn rename(e: &PrimExpr, m: &HashMap<u64, &PrimVar>) -> PrimExpr {
    let r = |x: &PrimExpr| rename(x, m);
    let kind = match &*e.kind {
        PrimExprKind::Var(v) => match m.get(&v.id()) {
            Some(to) => PrimExprKind::Var((*to).clone()),
            None => return e.clone(),
        },
        PrimExprKind::Binary { op, a, b } => PrimExprKind::Binary { op: *op, a: r(a), b: r(b) },
        PrimExprKind::Not(a) => PrimExprKind::Not(r(a)),
        PrimExprKind::Select { cond, then_value, else_value } => {
            PrimExprKind::Select { cond: r(cond), then_value: r(then_value), else_value: r(else_value) }
        }
        PrimExprKind::Cast { dtype, value } => PrimExprKind::Cast { dtype: *dtype, value: r(value) },
        _ => return e.clone(),
    };
    PrimExpr::new(kind, e.span)
}

/// Equal up to the names of the parameters (alpha-equivalence), as TVM's structural
/// equality compares two index maps.
impl PartialEq for IndexMap {
    fn eq(&self, other: &Self) -> bool {
        self.params.len() == other.params.len()
            && self.results.len() == other.results.len()
            && self.params.iter().zip(&other.params).all(|(a, b)| a.dtype() == b.dtype())
            && other.results.iter().zip(&self.results).all(|(o, s)| other.rename(o, &self.params) == *s)
    }
}
