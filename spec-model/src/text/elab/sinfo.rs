//! StructInfo annotations: `R.Tensor`, `R.Shape`, `R.Prim`, `R.Object`, `R.Tuple`,
//! `R.Callable` (StructInfo-era TVMScript spellings).

use super::attrs::{bind_args, expect_bool, expect_dtype, expect_ndim, expect_str};
use super::prim::{prim_expr, NameMode};
use super::{Ctx, Entity};
use crate::grammar::{DataType, DeriveFunc, Expr, ExprKind, PrimExpr, StructInfo, StructInfoKind, Var};
use crate::span::Span;
use crate::text::error::{ParseError, ParseResult};
use crate::text::py_ast::{PyExpr, PyExprKind};

/// The StructInfo constructors under `R.`.
pub(crate) const SINFO_NAMES: &[&str] = &["Tensor", "Shape", "Prim", "Object", "Any", "Tuple", "Callable"];

/// A list of shape dimensions: `(n, 4)`, `[n, 4]`, `("n", 4)`.
fn dims(ctx: &mut Ctx, e: &PyExpr) -> ParseResult<Option<Vec<PrimExpr>>> {
    match &e.kind {
        PyExprKind::Tuple(items) | PyExprKind::List(items) => {
            Ok(Some(items.iter().map(|d| prim_expr(ctx, d, NameMode::Resolve)).collect::<ParseResult<_>>()?))
        }
        _ => Ok(None),
    }
}

/// The `ndim` the parser infers for a tensor whose shape is the Relax variable `v`:
/// the `ndim` of its `R.Shape` annotation, or -1. The printer writes `ndim=` exactly
/// when the real `ndim` differs from this.
pub fn ndim_of_shape_var(v: &Var) -> i64 {
    match v.annotation().map(|s| &*s.kind) {
        Some(StructInfoKind::Shape { ndim, .. }) => *ndim,
        _ => -1,
    }
}

/// Elaborates a StructInfo annotation.
pub(crate) fn struct_info(ctx: &mut Ctx, e: &PyExpr) -> ParseResult<StructInfo> {
    let span = e.span;
    if let PyExprKind::Tuple(fields) = &e.kind {
        let fields = fields.iter().map(|f| struct_info(ctx, f)).collect::<ParseResult<_>>()?;
        return Ok(StructInfo::new(StructInfoKind::Tuple { fields }, span));
    }
    let (head, args, keywords): (&PyExpr, &[PyExpr], &[crate::text::py_ast::Keyword]) = match &e.kind {
        PyExprKind::Call { func, args, keywords } => (func, args, keywords),
        _ => (e, &[], &[]),
    };
    let name = match head.dotted().as_deref() {
        Some(["R", n]) if SINFO_NAMES.contains(n) => n.to_string(),
        // `x.struct_info`: TVMScript evaluates it to the StructInfo of the variable `x`
        // (Relax's tests pass a parameter's as `sinfo_args=[x.struct_info]`); here it is
        // `x`'s annotation, which a parameter always has.
        Some([x, "struct_info"]) if !matches!(e.kind, PyExprKind::Call { .. }) => {
            return match ctx.lookup(x) {
                Some(Entity::Relax(v)) => v.annotation().cloned().ok_or_else(|| {
                    ParseError::syntax(
                        format!("`{x}.struct_info` needs `{x}` to be annotated (`{x}: R.Tensor(...) = ...`)"),
                        span,
                    )
                }),
                Some(_) => Err(ParseError::syntax(format!("`{x}` is not a Relax variable"), span)),
                None => Err(ctx.unknown_name(x, span)),
            };
        }
        // `T.int64`, `T.float32`: TVM 0.27 prints a primitive value's StructInfo (its
        // `PrimType`) so; it is `R.Prim("int64")`.
        Some(["T", d]) if !matches!(e.kind, PyExprKind::Call { .. }) && super::prim::t_dtype(d).is_some() => {
            let dtype = super::prim::t_dtype(d).unwrap_or(DataType::INT64);
            return Ok(StructInfo::new(StructInfoKind::Prim { dtype, value: None }, span));
        }
        _ => {
            return Err(ParseError::syntax(
                format!(
                    "expected a StructInfo (R.Tensor, R.Shape, R.Prim, R.Object, R.Tuple or R.Callable), found {}",
                    e.describe()
                ),
                span,
            ))
        }
    };
    let callee = format!("R.{name}");
    let kind = match name.as_str() {
        "Object" | "Any" => {
            bind_args(&callee, span, &[], args, keywords)?;
            StructInfoKind::Object
        }
        "Prim" => {
            let a = bind_args(&callee, span, &["dtype", "value"], args, keywords)?;
            // `R.Prim(value=n)` / `R.Prim(value="n * 2")`: a primitive value known as a
            // shape expression (TVM's extension; its dtype is the expression's).
            let value = match a[1] {
                None | Some(PyExpr { kind: PyExprKind::NoneLit, .. }) => None,
                Some(v) => {
                    let e = prim_expr(ctx, v, NameMode::Resolve)?;
                    if e.dtype().is_float() {
                        return Err(ParseError::syntax(
                            "`R.Prim(value=...)` holds an integer shape expression, not a float",
                            v.span,
                        ));
                    }
                    Some(e)
                }
            };
            let dtype = match (a[0], &value) {
                (Some(d), None) => expect_dtype(d)?,
                (Some(d), Some(v)) => {
                    let dtype = expect_dtype(d)?;
                    if dtype != v.dtype() {
                        return Err(ParseError::syntax(
                            format!("`R.Prim` of dtype {dtype} with a value of dtype {}", v.dtype()),
                            d.span,
                        ));
                    }
                    dtype
                }
                (None, Some(v)) => v.dtype(),
                (None, None) => {
                    return Err(ParseError::syntax(
                        "`R.Prim` needs a dtype or a value: `R.Prim(\"int64\")`, `R.Prim(value=n)`",
                        span,
                    ))
                }
            };
            StructInfoKind::Prim { dtype, value }
        }
        "Tensor" => tensor(ctx, &callee, span, args, keywords)?,
        "Shape" => {
            let a = bind_args(&callee, span, &["values", "ndim"], args, keywords)?;
            let values = match a[0] {
                None | Some(PyExpr { kind: PyExprKind::NoneLit, .. }) => None,
                Some(v) => Some(dims(ctx, v)?.ok_or_else(|| {
                    ParseError::syntax("`R.Shape` takes a list of dimensions: `R.Shape([n, 4])`", v.span)
                })?),
            };
            let ndim = match a[1] {
                Some(n) => expect_ndim(n)?,
                None => values.as_ref().map_or(-1, |v| v.len() as i64),
            };
            StructInfoKind::Shape { values, ndim }
        }
        "Tuple" => {
            if !keywords.is_empty() {
                return Err(ParseError::syntax("`R.Tuple` takes no keyword arguments", keywords[0].name_span));
            }
            let items: &[PyExpr] = match args {
                [PyExpr { kind: PyExprKind::List(items), .. }] => items,
                _ => args,
            };
            StructInfoKind::Tuple { fields: items.iter().map(|f| struct_info(ctx, f)).collect::<ParseResult<_>>()? }
        }
        "Callable" => {
            let a = bind_args(&callee, span, &["params", "ret", "purity", "derive_func"], args, keywords)?;
            let params = match a[0] {
                None | Some(PyExpr { kind: PyExprKind::NoneLit, .. }) => None,
                Some(PyExpr { kind: PyExprKind::Tuple(ps) | PyExprKind::List(ps), .. }) => {
                    Some(ps.iter().map(|p| struct_info(ctx, p)).collect::<ParseResult<Vec<_>>>()?)
                }
                Some(p) => Some(vec![struct_info(ctx, p)?]),
            };
            let ret = match a[1] {
                None | Some(PyExpr { kind: PyExprKind::NoneLit, .. }) => StructInfo::object(),
                Some(r) => struct_info(ctx, r)?,
            };
            // TVMScript's default: a callable with parameters is pure, an opaque one is not.
            let purity = match a[2] {
                Some(p) => expect_bool(p, "purity")?,
                None => params.is_some(),
            };
            let derive_func = match a[3] {
                None | Some(PyExpr { kind: PyExprKind::NoneLit, .. }) => None,
                Some(d) => Some(DeriveFunc::from_name(&expect_str(d, "a derive_func name")?)),
            };
            StructInfoKind::Func { params, ret, derive_func, purity }
        }
        _ => unreachable!("SINFO_NAMES is matched above"),
    };
    Ok(StructInfo::new(kind, span))
}

fn tensor(
    ctx: &mut Ctx,
    callee: &str,
    span: Span,
    args: &[PyExpr],
    keywords: &[crate::text::py_ast::Keyword],
) -> ParseResult<StructInfoKind> {
    let a = bind_args(callee, span, &["shape", "dtype", "ndim"], args, keywords)?;
    let (mut shape_arg, mut dtype_arg_e) = (a[0], a[1]);
    // `R.Tensor("float32")`: a lone string is the dtype, as in TVMScript.
    if let (Some(PyExpr { kind: PyExprKind::Str(_), .. }), None) = (shape_arg, dtype_arg_e) {
        dtype_arg_e = shape_arg.take();
    }
    let dtype = match dtype_arg_e {
        Some(d) => expect_dtype(d)?,
        None => DataType::void(),
    };
    let mut inferred_ndim = -1;
    let shape = match shape_arg {
        None | Some(PyExpr { kind: PyExprKind::NoneLit, .. }) => None,
        Some(s) => {
            if let Some(ds) = dims(ctx, s)? {
                inferred_ndim = ds.len() as i64;
                Some(Expr::new(ExprKind::ShapeExpr(ds), s.span))
            } else if let PyExprKind::Name(n) = &s.kind {
                match ctx.lookup(n) {
                    Some(Entity::Relax(v)) => {
                        inferred_ndim = ndim_of_shape_var(v);
                        Some(Expr::new(ExprKind::Var(v.clone()), s.span))
                    }
                    Some(_) => {
                        return Err(ParseError::name(
                            format!("a tensor's shape is a tuple of dimensions or a Relax variable; `{n}` is neither"),
                            s.span,
                        ))
                    }
                    None => return Err(ctx.unknown_name(n, s.span)),
                }
            } else if let PyExprKind::Call { func, args, keywords } = &s.kind {
                if func.dotted_name().as_deref() != Some("R.shape") || !keywords.is_empty() || args.len() != 1 {
                    return Err(ParseError::syntax("expected a shape: `(n, 4)` or a shape variable", s.span));
                }
                let ds = dims(ctx, &args[0])?
                    .ok_or_else(|| ParseError::syntax("`R.shape` takes a list of dimensions", args[0].span))?;
                inferred_ndim = ds.len() as i64;
                Some(Expr::new(ExprKind::ShapeExpr(ds), s.span))
            } else {
                return Err(ParseError::syntax(
                    format!("expected a shape (a tuple of dimensions or a shape variable), found {}", s.describe()),
                    s.span,
                ));
            }
        }
    };
    let ndim = match a[2] {
        Some(n) => expect_ndim(n)?,
        None => inferred_ndim,
    };
    Ok(StructInfoKind::Tensor { shape, dtype, ndim })
}
