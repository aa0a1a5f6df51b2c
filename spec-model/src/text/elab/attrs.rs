//! Python literals as attribute values and small argument helpers.

use crate::grammar::{AttrValue, DataType, FloatLit};
use crate::text::error::{ParseError, ParseResult};
use crate::text::py_ast::{PyExpr, PyExprKind, UnaryOp};
use std::collections::BTreeMap;

/// An attribute value: `None`, booleans, integers, floats, strings, and lists,
/// tuples or string-keyed dicts of those.
pub(crate) fn attr_value(e: &PyExpr) -> ParseResult<AttrValue> {
    Ok(match &e.kind {
        PyExprKind::NoneLit => AttrValue::None,
        // `format=R.str("...")`, as TVM 0.27 prints a string attribute.
        PyExprKind::Call { func, args, keywords }
            if matches!(func.dotted_name().as_deref(), Some("R.str" | "R.string_imm")) && keywords.is_empty() =>
        {
            match &args[..] {
                [PyExpr { kind: PyExprKind::Str(s), .. }] => AttrValue::Str(s.clone()),
                _ => return Err(ParseError::syntax("`R.str` takes one string", e.span)),
            }
        }
        PyExprKind::Bool(b) => AttrValue::Bool(*b),
        // `T.bool(True)`, `T.int32(4)`, `T.float32(0)`: TIR immediates as Relax's tests and
        // TVM's printer write attribute values; kept as the plain literal of their kind.
        PyExprKind::Call { func, args, keywords } if typed_literal_dtype(func).is_some() => {
            let dtype = typed_literal_dtype(func).unwrap_or(DataType::bool());
            let [arg] = &args[..] else {
                return Err(ParseError::syntax(format!("`T.{dtype}` takes one literal"), e.span));
            };
            if !keywords.is_empty() {
                return Err(ParseError::syntax(format!("`T.{dtype}` takes no keyword arguments"), e.span));
            }
            typed_literal(dtype, arg)?
        }
        PyExprKind::Int(_)
        | PyExprKind::Unary { op: UnaryOp::Neg, .. }
        | PyExprKind::Float(_)
        | PyExprKind::Call { .. } => match number(e)? {
            Number::Int(i) => AttrValue::Int(
                i64::try_from(i).map_err(|_| ParseError::syntax("this integer does not fit in 64 bits", e.span))?,
            ),
            Number::Float(f) => AttrValue::Float(FloatLit(f)),
        },
        PyExprKind::Str(s) => AttrValue::Str(s.clone()),
        PyExprKind::List(items) | PyExprKind::Tuple(items) => {
            AttrValue::List(items.iter().map(attr_value).collect::<ParseResult<_>>()?)
        }
        PyExprKind::Dict(items) => AttrValue::Dict(attr_dict(items)?),
        _ => {
            return Err(ParseError::syntax(
                format!("expected an attribute value (a literal, list or dict), found {}", e.describe()),
                e.span,
            ))
        }
    })
}

/// The dtype `T.<dtype>` names when `func` is such a spelling.
fn typed_literal_dtype(func: &PyExpr) -> Option<DataType> {
    let name = func.dotted_name()?;
    let dtype = name.strip_prefix("T.")?;
    DataType::parse(dtype).filter(|d| d.lanes == 1 && (d.is_int() || d.is_uint() || d.is_float()))
}

/// The value of `T.<dtype>(literal)`: a boolean for `bool`, an integer for integer
/// dtypes, a float for float dtypes; a literal of the wrong kind is an error.
fn typed_literal(dtype: DataType, arg: &PyExpr) -> ParseResult<AttrValue> {
    let wrong = || ParseError::syntax(format!("`T.{dtype}(...)` needs a {dtype} literal"), arg.span);
    if dtype.is_bool() {
        return match &arg.kind {
            PyExprKind::Bool(b) => Ok(AttrValue::Bool(*b)),
            PyExprKind::Int(Some(i)) if *i == 0 || *i == 1 => Ok(AttrValue::Bool(*i == 1)),
            _ => Err(wrong()),
        };
    }
    match (number(arg).map_err(|_| wrong())?, dtype.is_float()) {
        (Number::Int(i), false) => Ok(AttrValue::Int(
            i64::try_from(i).map_err(|_| ParseError::syntax("this integer does not fit in 64 bits", arg.span))?,
        )),
        (Number::Int(i), true) => Ok(AttrValue::Float(FloatLit(i as f64))),
        (Number::Float(f), true) => Ok(AttrValue::Float(FloatLit(f))),
        (Number::Float(_), false) => Err(wrong()),
    }
}

pub(crate) fn attr_dict(items: &[(PyExpr, PyExpr)]) -> ParseResult<BTreeMap<String, AttrValue>> {
    let mut out = BTreeMap::new();
    for (k, v) in items {
        let PyExprKind::Str(key) = &k.kind else {
            return Err(ParseError::syntax("attribute names must be strings", k.span));
        };
        if out.insert(key.clone(), attr_value(v)?).is_some() {
            return Err(ParseError::syntax(format!("attribute `{key}` is given twice"), k.span));
        }
    }
    Ok(out)
}

pub(crate) enum Number {
    Int(i128),
    Float(f64),
}

/// A numeric literal, possibly negated (`-3`, `-1.5`, `- -2`), including the
/// non-finite floats `float("nan")`, `float("inf")` and `float("-inf")`.
pub(crate) fn number(e: &PyExpr) -> ParseResult<Number> {
    match &e.kind {
        PyExprKind::Call { func, args, keywords } if func.dotted_name().as_deref() == Some("float") => {
            let bad = || ParseError::syntax("expected float(\"nan\"), float(\"inf\") or float(\"-inf\")", e.span);
            match (args.as_slice(), keywords.is_empty()) {
                ([PyExpr { kind: PyExprKind::Str(s), .. }], true) => {
                    crate::text::num_array::special_float(s).map(Number::Float).ok_or_else(bad)
                }
                _ => Err(bad()),
            }
        }
        PyExprKind::Int(Some(i)) => Ok(Number::Int(*i)),
        PyExprKind::Int(None) => Err(ParseError::syntax("this integer literal is too large", e.span)),
        PyExprKind::Float(f) => Ok(Number::Float(*f)),
        PyExprKind::Unary { op: UnaryOp::Neg, operand } => Ok(match number(operand)? {
            Number::Int(i) => Number::Int(-i),
            Number::Float(f) => Number::Float(-f),
        }),
        PyExprKind::Unary { op: UnaryOp::Pos, operand } => number(operand),
        _ => Err(ParseError::syntax(format!("expected a number, found {}", e.describe()), e.span)),
    }
}

pub(crate) fn expect_str(e: &PyExpr, what: &str) -> ParseResult<String> {
    match &e.kind {
        PyExprKind::Str(s) => Ok(s.clone()),
        _ => Err(ParseError::syntax(format!("expected {what} (a string), found {}", e.describe()), e.span)),
    }
}

/// A dtype written as a string, `"float32"`.
pub(crate) fn expect_dtype(e: &PyExpr) -> ParseResult<crate::grammar::DataType> {
    let s = expect_str(e, "a dtype")?;
    crate::grammar::DataType::parse(&s).ok_or_else(|| ParseError::syntax(format!("unknown dtype `{s}`"), e.span))
}

pub(crate) fn expect_bool(e: &PyExpr, what: &str) -> ParseResult<bool> {
    match &e.kind {
        PyExprKind::Bool(b) => Ok(*b),
        _ => Err(ParseError::syntax(format!("expected {what} (True or False), found {}", e.describe()), e.span)),
    }
}

pub(crate) fn expect_int(e: &PyExpr, what: &str) -> ParseResult<i64> {
    match number(e) {
        Ok(Number::Int(i)) => {
            i64::try_from(i).map_err(|_| ParseError::syntax(format!("{what} does not fit in 64 bits"), e.span))
        }
        _ => Err(ParseError::syntax(format!("expected {what} (an integer), found {}", e.describe()), e.span)),
    }
}

/// An `ndim`: a rank (0 or more) or -1 for an unknown rank. The grammar's `ndim: int`
/// gives no meaning to the other negative numbers, so they are refused where they are
/// written (proofs-notes/interpretations.md, I-ndim).
pub(crate) fn expect_ndim(e: &PyExpr) -> ParseResult<i64> {
    let n = expect_int(e, "ndim")?;
    if n < -1 {
        return Err(ParseError::syntax(
            format!("ndim is a rank (0 or more) or -1 for an unknown rank, not {n}"),
            e.span,
        ));
    }
    Ok(n)
}

/// Checks a call's arguments against named formals: returns, for each formal in
/// order, the argument given positionally or by keyword. Unknown keywords, too many
/// positionals and duplicates are errors that name the callee.
pub(crate) fn bind_args<'e>(
    callee: &str,
    call_span: crate::span::Span,
    formals: &[&str],
    args: &'e [PyExpr],
    keywords: &'e [crate::text::py_ast::Keyword],
) -> ParseResult<Vec<Option<&'e PyExpr>>> {
    let mut out: Vec<Option<&PyExpr>> = vec![None; formals.len()];
    if args.len() > formals.len() {
        return Err(ParseError::syntax(
            format!("`{callee}` takes at most {} positional argument(s), {} given", formals.len(), args.len()),
            args[formals.len()].span,
        ));
    }
    for (i, a) in args.iter().enumerate() {
        out[i] = Some(a);
    }
    for k in keywords {
        let Some(i) = formals.iter().position(|f| *f == k.name) else {
            return Err(ParseError::syntax(format!("`{callee}` has no parameter `{}`", k.name), k.name_span)
                .with_note(format!("its parameters are: {}", formals.join(", "))));
        };
        if out[i].is_some() {
            return Err(ParseError::syntax(format!("`{}` is given twice in `{callee}`", k.name), k.name_span));
        }
        out[i] = Some(&k.value);
    }
    let _ = call_span;
    Ok(out)
}
