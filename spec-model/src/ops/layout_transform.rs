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
        if lo.as_int() != Some(0) {
            return Err(format!(
                "result {i} of the index map, `{}`, does not start at 0 (its smallest value is {})",
                super::infer::show(r),
                super::infer::show(&lo)
            ));
        }
        out.push(fold(&dim_op(PrimBinOp::Add, &dim_op(PrimBinOp::Sub, &hi, &lo), &PrimExpr::int(1))));
    }
    Ok(out)
}

/// The smallest and largest value of `e` (constant-folded), by interval arithmetic.
fn bounds(m: &IndexMap, dims: &[PrimExpr], e: &PrimExpr) -> Result<(PrimExpr, PrimExpr), String> {
    let b = |x: &PrimExpr| bounds(m, dims, x);
    let op = |o, a: &PrimExpr, c: &PrimExpr| fold(&dim_op(o, a, c));
    let unsupported = |why: &str| format!("cannot bound the index expression `{}`: {why}", super::infer::show(e));
    Ok(match &*e.kind {
        PrimExprKind::IntImm { value, dtype } if !dtype.is_bool() => (PrimExpr::int(*value), PrimExpr::int(*value)),
        PrimExprKind::Var(v) => {
            let Some(k) = m.params.iter().position(|p| p == v) else {
                return Err(unsupported(&format!("`{}` is not a parameter of the index map", v.name())));
            };
            (PrimExpr::int(0), op(PrimBinOp::Sub, &dims[k], &PrimExpr::int(1)))
        }
        PrimExprKind::Cast { dtype, value } if dtype.is_int() => b(value)?,
        PrimExprKind::Binary { op: o, a, b: c } => {
            let (la, ha) = b(a)?;
            match o {
                PrimBinOp::Add => {
                    let (lc, hc) = b(c)?;
                    (op(PrimBinOp::Add, &la, &lc), op(PrimBinOp::Add, &ha, &hc))
                }
                PrimBinOp::Sub => {
                    let (lc, hc) = b(c)?;
                    (op(PrimBinOp::Sub, &la, &hc), op(PrimBinOp::Sub, &ha, &lc))
                }
                PrimBinOp::Min | PrimBinOp::Max => {
                    let (lc, hc) = b(c)?;
                    (op(*o, &la, &lc), op(*o, &ha, &hc))
                }
                PrimBinOp::Mul => {
                    let (k, (lo, hi)) = match (a.as_int(), c.as_int()) {
                        (_, Some(k)) => (k, (la, ha)),
                        (Some(k), None) => (k, b(c)?),
                        (None, None) => return Err(unsupported("a product needs a constant factor")),
                    };
                    let (x, y) = (op(PrimBinOp::Mul, &lo, &PrimExpr::int(k)), op(PrimBinOp::Mul, &hi, &PrimExpr::int(k)));
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
                    if truncating && la.as_int().is_none_or(|v| v < 0) {
                        return Err(unsupported("truncating division needs a non-negative dividend; write `//` or `%`"));
                    }
                    if matches!(o, PrimBinOp::FloorDiv | PrimBinOp::Div) {
                        (op(PrimBinOp::FloorDiv, &la, &PrimExpr::int(k)), op(PrimBinOp::FloorDiv, &ha, &PrimExpr::int(k)))
                    } else {
                        // Not narrowed when the dividend is smaller than `k`: the range
                        // must not depend on the dimensions' values, or a symbolic shape
                        // and the run-time shape would disagree.
                        (PrimExpr::int(0), PrimExpr::int(k - 1))
                    }
                }
                _ => return Err(unsupported("comparisons and logic are not index arithmetic")),
            }
        }
        _ => return Err(unsupported("not index arithmetic")),
    })
}
