//! `R.const(value, dtype)`: nested Python lists to an `NDArray`.

use super::attrs::{expect_dtype, number, Number};
use crate::grammar::{DataType, NDArray, Scalar};
use crate::span::Span;
use crate::text::error::{ParseError, ParseResult};
use crate::text::num_array::NumArray;
use crate::text::py_ast::{PyExpr, PyExprKind};

/// Builds the constant from `value` (a scalar or nested lists), `dtype` (default:
/// `bool` for booleans, `float32` if any element is a float, else `int32`) and an
/// optional explicit `shape` (needed only when a dimension after a 0 is non-zero).
pub(crate) fn constant(
    value: &PyExpr,
    dtype: Option<&PyExpr>,
    shape: Option<&PyExpr>,
    call_span: Span,
) -> ParseResult<NDArray> {
    if let PyExprKind::NumArray(a) = &value.kind {
        return num_array_constant(a, value.span, dtype, shape);
    }
    let mut inferred_shape = Vec::new();
    let mut elems: Vec<(Scalar, Span)> = Vec::new();
    flatten(value, 0, &mut inferred_shape, &mut elems, crate::limits::current().constant_elements)?;
    let dtype = match dtype {
        Some(d) => expect_dtype(d)?,
        None => {
            if !elems.is_empty() && elems.iter().all(|(s, _)| matches!(s, Scalar::Bool(_))) {
                DataType::bool()
            } else if elems.iter().any(|(s, _)| matches!(s, Scalar::Float(_))) {
                DataType::float(32)
            } else {
                DataType::int(32)
            }
        }
    };
    let shape = match shape {
        None => inferred_shape,
        Some(s) => explicit_shape(s, elems.len())?,
    };
    let values: Vec<Scalar> = elems.iter().map(|(s, _)| *s).collect();
    NDArray::from_scalars(dtype, shape, &values).map_err(|msg| {
        // Point at the offending element when one is to blame.
        let span = elems
            .iter()
            .find(|(s, _)| {
                let mut probe = crate::grammar::TensorData::empty(dtype);
                probe.as_mut().is_some_and(|p| p.push(*s).is_err())
            })
            .map_or(call_span, |(_, sp)| *sp);
        ParseError::syntax(msg, span)
    })
}

/// A literal the lexer read whole: the same defaults and checks as the ordinary
/// path; an element that does not fit is named by its index.
fn num_array_constant(
    a: &NumArray,
    span: Span,
    dtype: Option<&PyExpr>,
    shape: Option<&PyExpr>,
) -> ParseResult<NDArray> {
    let dtype = match dtype {
        Some(d) => expect_dtype(d)?,
        None => a.default_dtype(),
    };
    let shape = match shape {
        None => a.shape.clone(),
        Some(s) => explicit_shape(s, a.len())?,
    };
    let data = a.to_tensor_data(dtype).map_err(|(i, msg)| ParseError::syntax(format!("element {i}: {msg}"), span))?;
    Ok(NDArray { dtype, shape, data })
}

/// `shape=`: a tuple of dimensions whose product is the literal's element count.
fn explicit_shape(s: &PyExpr, count: usize) -> ParseResult<Vec<u64>> {
    let dims = match &s.kind {
        PyExprKind::Tuple(d) | PyExprKind::List(d) => d,
        _ => return Err(ParseError::syntax("`shape=` expects a tuple of integers", s.span)),
    };
    let mut out = Vec::new();
    for d in dims {
        match number(d)? {
            Number::Int(i) if (0..=i64::MAX as i128).contains(&i) => out.push(i as u64),
            _ => return Err(ParseError::syntax("a dimension must be a non-negative integer", d.span)),
        }
    }
    let product = out.iter().try_fold(1u64, |a, d| a.checked_mul(*d));
    if product != Some(count as u64) {
        return Err(ParseError::syntax(
            format!(
                "`shape=` holds {} elements but the literal has {count}",
                product.map_or("too many".to_string(), |c| c.to_string()),
            ),
            s.span,
        ));
    }
    Ok(out)
}

/// LIMIT-constant: at most `max` elements.
fn flatten(e: &PyExpr, depth: usize, shape: &mut Vec<u64>, out: &mut Vec<(Scalar, Span)>, max: u64) -> ParseResult<()> {
    match &e.kind {
        PyExprKind::List(items) | PyExprKind::Tuple(items) => {
            let n = items.len() as u64;
            if shape.len() == depth {
                if out.is_empty() || depth == 0 {
                    shape.push(n);
                } else {
                    return Err(ParseError::syntax("the nested lists of a constant must be rectangular", e.span));
                }
            } else if shape.len() < depth || shape[depth] != n {
                return Err(ParseError::syntax(
                    format!("expected {} elements here, as in the first row", shape.get(depth).copied().unwrap_or(0)),
                    e.span,
                )
                .with_label("the nested lists of a constant must be rectangular"));
            }
            for item in items {
                flatten(item, depth + 1, shape, out, max)?;
            }
            if n == 0 && shape.len() > depth + 1 {
                return Err(ParseError::syntax("the nested lists of a constant must be rectangular", e.span));
            }
            Ok(())
        }
        _ => {
            if shape.len() != depth {
                return Err(ParseError::syntax("expected a list here, as in the first row", e.span)
                    .with_label("the nested lists of a constant must be rectangular"));
            }
            if out.len() as u64 >= max {
                let message = format!("a constant literal of more than {max} elements");
                return Err(ParseError::limit("LIMIT-constant", message, e.span));
            }
            out.push((scalar(e)?, e.span));
            Ok(())
        }
    }
}

fn scalar(e: &PyExpr) -> ParseResult<Scalar> {
    match &e.kind {
        PyExprKind::Bool(b) => Ok(Scalar::Bool(*b)),
        // `R.const("-inf", "float32")`, as TVM 0.27 prints a non-finite constant.
        PyExprKind::Str(s) => crate::text::num_array::special_float(s)
            .map(Scalar::Float)
            .ok_or_else(|| ParseError::syntax("a string constant is \"inf\", \"-inf\" or \"nan\"", e.span)),
        _ => match number(e)? {
            Number::Int(i) => Ok(Scalar::Int(i)),
            Number::Float(f) => Ok(Scalar::Float(f)),
        },
    }
}
