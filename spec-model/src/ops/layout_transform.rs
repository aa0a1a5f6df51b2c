//! `layout_transform` (TVM 0.27 `manipulate.cc`, `InferTypeLayoutTransform`): a
//! tensor re-indexed by an index map, `lambda i, j: (i // 4, j, i % 4)`.
//!
//! The result's shape is TVM's `IndexMap::MapShape`: each result expression's range
//! when parameter `k` ranges over `[0, dims[k])`, which must start at 0. The range is
//! found by interval arithmetic over the forms index maps are written in (sums,
//! differences, products and floor division by constants, `%` by a constant, `min`,
//! `max`); see `proofs-notes/operator-semantics.md` for where this and TVM's iterator
//! analysis could differ.

use super::infer::{dim_op, tensor_si, Infer};
use super::OpError;
use crate::grammar::{AttrValue, IndexMap, PrimBinOp, PrimExpr, PrimExprKind, StructInfo};
use crate::struct_info::prover::fold;

/// OP-layout_transform: `x` re-indexed by the attribute `index_map` (element at
/// index `i` moves to `index_map(i)`); positions no element maps to hold `pad_value`
/// (default 0). Derives a tensor of `x`'s dtype whose shape is [`map_shape`] of
/// `x`'s (only the rank, the map's result count, when `x`'s shape is unknown).
/// Errors: `x` not a tensor; `index_map` missing or not an index map; a rank other
/// than the map's parameter count; a map whose range cannot be bounded or does not
/// start at 0 (see [`map_shape`]); a float `pad_value` for an integer or boolean
/// tensor (TVM: the pad value's dtype must be the tensor's).
pub fn layout_transform(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let Some(AttrValue::IndexMap(m)) = cx.attr("index_map") else {
        return Err(cx.error("needs the attribute `index_map`, a lambda such as `lambda i, j: (j, i)`"));
    };
    if matches!(cx.attr("pad_value"), Some(AttrValue::Float(_))) && !x.dtype.is_void() && !x.dtype.is_float() {
        return Err(cx.error(format!("pad_value is a float, but the operand's dtype is {}", x.dtype)));
    }
    let rank = m.results.len() as i64;
    if x.ndim != -1 && x.ndim != m.params.len() as i64 {
        return Err(cx.error(format!(
            "the index map takes {} indices, but the operand has rank {}",
            m.params.len(),
            x.ndim
        )));
    }
    let dims = match &x.dims {
        Some(d) => Some(map_shape(m, d).map_err(|e| cx.error(e))?),
        None => {
            // Still refuse a map no shape could make valid.
            let probe: Vec<PrimExpr> = m.params.iter().map(|_| PrimExpr::int(1)).collect();
            map_shape(m, &probe).map_err(|e| cx.error(e))?;
            None
        }
    };
    Ok(tensor_si(dims, x.dtype, rank))
}

/// `IndexMap::MapShape`: the extent of each of `m`'s results when parameter `k`
/// ranges over `[0, dims[k])`. Err: a result mentions a name other than the map's
/// parameters; a form whose range is not bounded here (a product of two indices,
/// division or modulo by a non-constant or non-positive value, a comparison); a
/// range whose smallest value is not provably 0.
pub fn map_shape(m: &IndexMap, dims: &[PrimExpr]) -> Result<Vec<PrimExpr>, String> {
    if dims.len() != m.params.len() {
        return Err(format!("the index map takes {} indices, but the shape has {}", m.params.len(), dims.len()));
    }
    let mut out = Vec::with_capacity(m.results.len());
    for (i, r) in m.results.iter().enumerate() {
        let (lo, hi) = bounds(m, dims, r)?;
        if !lo.is_zero() {
            return Err(format!(
                "result {i} of the index map, `{}`, does not start at 0 (its smallest value is {})",
                super::infer::show(r),
                super::infer::show(&lo.expr())
            ));
        }
        out.push(hi.plus(1).ok_or("the result's shape overflows int64")?.expr());
    }
    Ok(out)
}

/// A bound as a linear form `Σ coef·atom + c`, so that `(n - 1) + 1` is `n` and
/// `(n - 1) * 3 + 2 + 1` is `n * 3`; an atom is a dimension or a floor division the
/// form cannot absorb.
#[derive(Clone, Debug)]
struct Lin {
    terms: Vec<(PrimExpr, i64)>,
    c: i64,
}

impl Lin {
    fn constant(c: i64) -> Lin {
        Lin { terms: Vec::new(), c }
    }

    fn of(e: &PrimExpr) -> Lin {
        match e.as_int() {
            Some(c) => Lin::constant(c),
            None => Lin { terms: vec![(e.clone(), 1)], c: 0 },
        }
    }

    fn is_zero(&self) -> bool {
        self.terms.is_empty() && self.c == 0
    }

    fn plus(mut self, k: i64) -> Option<Lin> {
        self.c = self.c.checked_add(k)?;
        Some(self)
    }

    fn add(mut self, o: &Lin, sign: i64) -> Option<Lin> {
        self.c = self.c.checked_add(o.c.checked_mul(sign)?)?;
        for (a, k) in &o.terms {
            let k = k.checked_mul(sign)?;
            match self.terms.iter_mut().find(|(b, _)| b == a) {
                Some((_, j)) => *j = j.checked_add(k)?,
                None => self.terms.push((a.clone(), k)),
            }
        }
        self.terms.retain(|(_, k)| *k != 0);
        Some(self)
    }

    fn scale(mut self, k: i64) -> Option<Lin> {
        if k == 0 {
            return Some(Lin::constant(0));
        }
        self.c = self.c.checked_mul(k)?;
        for (_, j) in &mut self.terms {
            *j = j.checked_mul(k)?;
        }
        Some(self)
    }

    /// `floor(self / k)`, exact when every coefficient divides; otherwise a new atom.
    fn floor_div(self, k: i64) -> Lin {
        if self.c % k == 0 && self.terms.iter().all(|(_, j)| j % k == 0) {
            return Lin { terms: self.terms.into_iter().map(|(a, j)| (a, j / k)).collect(), c: self.c / k };
        }
        if self.terms.is_empty() {
            return Lin::constant(self.c.div_euclid(k));
        }
        Lin::of(&dim_op(PrimBinOp::FloorDiv, &self.expr(), &PrimExpr::int(k)))
    }

    /// `min`/`max` of two forms: their difference's sign when it is a constant,
    /// otherwise an atom.
    fn extreme(self, o: Lin, max: bool) -> Lin {
        if let Some(d) = self.clone().add(&o, -1).filter(|d| d.terms.is_empty()) {
            return if (d.c >= 0) == max { self } else { o };
        }
        let op = if max { PrimBinOp::Max } else { PrimBinOp::Min };
        Lin::of(&fold(&dim_op(op, &self.expr(), &o.expr())))
    }

    fn expr(&self) -> PrimExpr {
        let mut acc: Option<PrimExpr> = None;
        for (a, k) in &self.terms {
            let (t, neg) = match k {
                1 => (a.clone(), false),
                -1 => (a.clone(), true),
                k if *k < 0 => (dim_op(PrimBinOp::Mul, a, &PrimExpr::int(-k)), true),
                k => (dim_op(PrimBinOp::Mul, a, &PrimExpr::int(*k)), false),
            };
            acc = Some(match (acc, neg) {
                (None, false) => t,
                (None, true) => dim_op(PrimBinOp::Sub, &PrimExpr::int(0), &t),
                (Some(s), false) => dim_op(PrimBinOp::Add, &s, &t),
                (Some(s), true) => dim_op(PrimBinOp::Sub, &s, &t),
            });
        }
        match acc {
            None => PrimExpr::int(self.c),
            Some(s) if self.c < 0 => dim_op(PrimBinOp::Sub, &s, &PrimExpr::int(self.c.unsigned_abs() as i64)),
            Some(s) => dim_op(PrimBinOp::Add, &s, &PrimExpr::int(self.c)),
        }
    }
}

/// The smallest and largest value of `e`, by interval arithmetic.
fn bounds(m: &IndexMap, dims: &[PrimExpr], e: &PrimExpr) -> Result<(Lin, Lin), String> {
    let b = |x: &PrimExpr| bounds(m, dims, x);
    let unsupported = |why: &str| format!("cannot bound the index expression `{}`: {why}", super::infer::show(e));
    let overflow = || unsupported("its bounds overflow int64");
    Ok(match &*e.kind {
        PrimExprKind::IntImm { value, dtype } if !dtype.is_bool() => (Lin::constant(*value), Lin::constant(*value)),
        PrimExprKind::Var(v) => {
            let Some(k) = m.params.iter().position(|p| p == v) else {
                return Err(unsupported(&format!("`{}` is not a parameter of the index map", v.name())));
            };
            (Lin::constant(0), Lin::of(&fold(&dims[k])).plus(-1).ok_or_else(overflow)?)
        }
        PrimExprKind::Cast { dtype, value } if dtype.is_int() => b(value)?,
        PrimExprKind::Binary { op: o, a, b: c } => {
            let (la, ha) = b(a)?;
            match o {
                PrimBinOp::Add | PrimBinOp::Sub => {
                    let (lc, hc) = b(c)?;
                    let (x, y) = if *o == PrimBinOp::Add {
                        (la.add(&lc, 1), ha.add(&hc, 1))
                    } else {
                        (la.add(&hc, -1), ha.add(&lc, -1))
                    };
                    (x.ok_or_else(overflow)?, y.ok_or_else(overflow)?)
                }
                PrimBinOp::Min | PrimBinOp::Max => {
                    let (lc, hc) = b(c)?;
                    let max = *o == PrimBinOp::Max;
                    (la.extreme(lc, max), ha.extreme(hc, max))
                }
                PrimBinOp::Mul => {
                    let (k, (lo, hi)) = match (a.as_int(), c.as_int()) {
                        (_, Some(k)) => (k, (la, ha)),
                        (Some(k), None) => (k, b(c)?),
                        (None, None) => return Err(unsupported("a product needs a constant factor")),
                    };
                    let (x, y) = (lo.scale(k).ok_or_else(overflow)?, hi.scale(k).ok_or_else(overflow)?);
                    if k >= 0 {
                        (x, y)
                    } else {
                        (y, x)
                    }
                }
                PrimBinOp::FloorDiv | PrimBinOp::Div | PrimBinOp::FloorMod | PrimBinOp::Mod => {
                    let Some(k) = c.as_int().filter(|&k| k > 0) else {
                        return Err(unsupported("division and modulo need a positive constant divisor"));
                    };
                    let truncating = matches!(o, PrimBinOp::Div | PrimBinOp::Mod);
                    if truncating && !(la.terms.is_empty() && la.c >= 0) {
                        return Err(unsupported(
                            "truncating division needs a non-negative dividend; write `//` or `%`",
                        ));
                    }
                    if matches!(o, PrimBinOp::FloorDiv | PrimBinOp::Div) {
                        (la.floor_div(k), ha.floor_div(k))
                    } else {
                        // Not narrowed when the dividend is smaller than `k`: the range
                        // must not depend on the dimensions' values, or a symbolic shape
                        // and the run-time shape would disagree.
                        (Lin::constant(0), Lin::constant(k - 1))
                    }
                }
                _ => return Err(unsupported("comparisons and logic are not index arithmetic")),
            }
        }
        _ => return Err(unsupported("not index arithmetic")),
    })
}
