//! `layout_transform`: each element moved to where the index map sends its index.
//! Plain loops: every input index is mapped with the spec model's `PrimExpr`
//! evaluator, one element at a time.

use super::elem::convert_scalar;
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, Value};
use spec_model::grammar::{AttrValue, PrimExpr, Scalar};
use spec_model::ops::map_shape;
use spec_model::prim_eval::{eval_prim, PrimEvalError, PrimValue};

/// OP-layout_transform: the result has shape `map_shape(index_map, x.shape)`; the
/// element of `x` at index `i` is at `index_map(i)`, and every position no index maps
/// to holds `pad_value` (default 0), converted to `x`'s dtype as OP-astype converts.
/// Errors (`OpError`): `x` not a tensor; no index map; `x`'s rank not the map's
/// parameter count; the shape not mappable (`map_shape`); an index mapped outside the
/// result's shape, or two indices mapped to the same position (the map must be
/// injective); index arithmetic overflowing `int64`; a pad value that does not convert.
pub(crate) fn layout_transform(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let x = cx.tensor(&args[0], "the operand")?;
    let Some(AttrValue::IndexMap(m)) = cx.attr("index_map") else {
        return Err(cx.error("needs the attribute `index_map`"));
    };
    if x.ndim() != m.params.len() {
        return Err(cx.error(format!(
            "the index map takes {} indices, but the operand has rank {}",
            m.params.len(),
            x.ndim()
        )));
    }
    let dims: Vec<PrimExpr> = x.shape.iter().map(|&d| PrimExpr::int(d as i64)).collect();
    let extents = map_shape(m, &dims).map_err(|e| cx.error(e))?;
    let mut out_shape = Vec::with_capacity(extents.len());
    for e in &extents {
        match e.as_int().and_then(|v| u64::try_from(v).ok()) {
            Some(v) => out_shape.push(v),
            None => return Err(cx.error("the result's shape overflows int64")),
        }
    }
    let n = cx.numel(&out_shape)?;
    let pad = match cx.attr("pad_value") {
        // A number, read as the float it names (as OP-nn.pad reads its pad value).
        None | Some(AttrValue::None) => Scalar::Float(0.0),
        Some(AttrValue::Int(i)) => Scalar::Float(*i as f64),
        Some(AttrValue::Float(f)) => Scalar::Float(f.0),
        Some(_) => return Err(cx.error("attribute `pad_value` must be None or a number")),
    };
    let pad = convert_scalar(pad, x.dtype).map_err(|e| cx.error(format!("pad_value: {e}")))?;
    // source[o]: the input element at output position `o`.
    let mut source: Vec<Option<usize>> = vec![None; n];
    let mut index = vec![0u64; x.ndim()];
    for flat in 0..x.data.len() {
        let mut rest = flat as u64;
        for k in (0..x.ndim()).rev() {
            index[k] = rest % x.shape[k];
            rest /= x.shape[k];
        }
        let env = |v: &spec_model::grammar::PrimVar| m.params.iter().position(|p| p == v).map(|k| index[k] as i64);
        let mut o = 0u64;
        for (k, r) in m.results.iter().enumerate() {
            let at = match eval_prim(r, &env) {
                Ok(PrimValue::Int(v)) => v,
                Ok(_) => return Err(cx.error(format!("result {k} of the index map is not an integer"))),
                Err(PrimEvalError::IntegerOverflow) => {
                    return Err(
                        cx.error(format!("index {index:?}: result {k} of the index map overflows its integer dtype"))
                    )
                }
                Err(e) => return Err(cx.error(format!("index {index:?}: result {k} of the index map: {e:?}"))),
            };
            if at < 0 || at as u64 >= out_shape[k] {
                return Err(cx.error(format!(
                    "index {index:?} maps to {at} in result {k}, outside the result's extent {}",
                    out_shape[k]
                )));
            }
            o = o * out_shape[k] + at as u64;
        }
        let slot = &mut source[o as usize];
        if let Some(prev) = slot {
            return Err(cx.error(format!(
                "the index map is not injective: input elements {prev} and {flat} (row-major) both map to position {o}"
            )));
        }
        *slot = Some(flat);
    }
    let mut data = cx.storage(x.dtype)?;
    data.reserve(n);
    for s in source {
        data.push(s.map_or(pad, |i| x.data.get(i))).map_err(|e| cx.error(e))?;
    }
    Ok(tensor_value(x.dtype, out_shape, data))
}
