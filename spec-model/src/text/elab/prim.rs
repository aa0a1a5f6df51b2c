//! Shape expressions (`PrimExpr`) in Relax positions: dimensions, `R.prim_value`,
//! `R.shape`. Bare integer literals are `int64` (shapes are int64), bare floats
//! `float32`, `True`/`False` are `bool`; a bare literal beside a typed operand takes
//! that operand's dtype, as in TVMScript.

use super::{Ctx, Entity};
use crate::grammar::{DataType, FloatLit, PrimBinOp, PrimExpr, PrimExprKind, PrimVar, TypeCode};
use crate::span::Span;
use crate::text::error::{ParseError, ParseResult};
use crate::text::py_ast::{BinOp, BoolOp, CmpOp, PyExpr, PyExprKind, UnaryOp};
use crate::text::py_parser::parse_expression;

/// How unknown names in a shape expression are treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameMode {
    /// Every name must already be a shape variable in scope.
    Resolve,
    /// Inside a string dimension (`"n"`): an unknown name declares a fresh shape variable.
    Declare,
}

pub(crate) const RELAX_INT: DataType = DataType::INT64;
pub(crate) const DEFAULT_FLOAT: DataType = DataType::FLOAT32;

/// Does integer `v` fit in `dtype`, as the value of an `IntImm(value: int64)` (the
/// spec's grammar; TVM's IntImm holds an int64 too): a uint64 literal stops at 2^63 - 1.
pub(crate) fn int_fits(dtype: DataType, v: i128) -> bool {
    dtype.fits(v) && i64::try_from(v).is_ok()
}

/// Why integer literal `v` of `dtype` is refused ([`int_fits`] is false).
pub(crate) fn unfit(dtype: DataType, v: i128) -> String {
    if dtype.fits(v) {
        format!("{v} does not fit in the int64 an IntImm of {dtype} holds")
    } else {
        format!("{v} does not fit in {dtype}")
    }
}

/// `T.int64(5)`, `T.float32(1)`, `T.bool(True)`: a literal of an explicit dtype.
pub(crate) fn typed_literal(dtype: DataType, e: &PyExpr) -> ParseResult<Option<Literal>> {
    let v = match &e.kind {
        PyExprKind::Bool(b) => Literal::Int(*b as i128),
        _ => match super::attrs::number(e) {
            Ok(super::attrs::Number::Int(i)) => Literal::Int(i),
            Ok(super::attrs::Number::Float(f)) => Literal::Float(f),
            Err(_) => return Ok(None),
        },
    };
    Ok(Some(match (v, dtype.code) {
        (Literal::Int(i), TypeCode::Float) => Literal::Float(i as f64),
        (Literal::Int(i), _) => {
            if !int_fits(dtype, i) {
                return Err(ParseError::syntax(unfit(dtype, i), e.span));
            }
            Literal::Int(i)
        }
        (Literal::Float(f), TypeCode::Float) => Literal::Float(f),
        (Literal::Float(_), _) => {
            return Err(ParseError::syntax(format!("a float literal cannot have dtype {dtype}"), e.span))
        }
    }))
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Literal {
    Int(i128),
    Float(f64),
}

/// The dtype a bare literal takes beside an operand of dtype `other` (TVMScript's
/// implicit conversion): the operand's dtype when the kinds agree, a float when an
/// integer literal meets a float operand.
pub(crate) fn coerced_literal_dtype(lit_is_float: bool, other: DataType) -> Option<DataType> {
    match (lit_is_float, other.code) {
        (_, TypeCode::Float) => Some(other),
        (false, TypeCode::Int | TypeCode::UInt) if !other.is_bool() => Some(other),
        _ => None,
    }
}

/// Maps a dtype named after `T.` (`T.int64`, `T.float32`, `T.bool`) to the dtype.
pub(crate) fn t_dtype(name: &str) -> Option<DataType> {
    if name == "handle" {
        return None;
    }
    DataType::parse(name).filter(|d| !d.is_void())
}

pub(crate) fn is_bare_literal(e: &PyExpr) -> bool {
    match &e.kind {
        PyExprKind::Int(_) | PyExprKind::Float(_) => true,
        PyExprKind::Unary { op: UnaryOp::Neg | UnaryOp::Pos, operand } => is_bare_literal(operand),
        _ => false,
    }
}

fn literal_expr(lit: Literal, dtype: DataType, span: Span) -> ParseResult<PrimExpr> {
    Ok(PrimExpr::new(
        match lit {
            Literal::Int(i) if dtype.code == TypeCode::Float => {
                PrimExprKind::FloatImm { value: FloatLit(i as f64), dtype }
            }
            Literal::Int(i) => {
                if !int_fits(dtype, i) {
                    return Err(ParseError::syntax(unfit(dtype, i), span));
                }
                PrimExprKind::IntImm { value: i as i64, dtype }
            }
            Literal::Float(f) => PrimExprKind::FloatImm { value: FloatLit(f), dtype },
        },
        span,
    ))
}

pub(crate) fn bare_literal(e: &PyExpr) -> ParseResult<Literal> {
    Ok(match super::attrs::number(e)? {
        super::attrs::Number::Int(i) => Literal::Int(i),
        super::attrs::Number::Float(f) => Literal::Float(f),
    })
}

/// Shifts every span of a sub-expression parsed from a string literal so that it
/// points into the file (the string's text starts one byte after its quote).
fn shift(e: &mut PyExpr, by: u32) {
    fn sh(s: &mut Span, by: u32) {
        if !s.is_synthetic() {
            s.lo = s.lo.saturating_add(by);
            s.hi = s.hi.saturating_add(by);
        }
    }
    sh(&mut e.span, by);
    match &mut e.kind {
        PyExprKind::Attribute { value, attr_span, .. } => {
            sh(attr_span, by);
            shift(value, by);
        }
        PyExprKind::Call { func, args, keywords } => {
            shift(func, by);
            args.iter_mut().for_each(|a| shift(a, by));
            keywords.iter_mut().for_each(|k| {
                sh(&mut k.name_span, by);
                shift(&mut k.value, by)
            });
        }
        PyExprKind::Subscript { value, index } => {
            shift(value, by);
            shift(index, by);
        }
        PyExprKind::Slice { lower, upper, step } => {
            for x in [lower, upper, step].into_iter().flatten() {
                shift(x, by);
            }
        }
        PyExprKind::Tuple(v) | PyExprKind::List(v) => v.iter_mut().for_each(|a| shift(a, by)),
        PyExprKind::Dict(v) => v.iter_mut().for_each(|(a, b)| {
            shift(a, by);
            shift(b, by)
        }),
        PyExprKind::Unary { operand, .. } => shift(operand, by),
        PyExprKind::Binary { left, right, .. }
        | PyExprKind::BoolOp { left, right, .. }
        | PyExprKind::Compare { left, right, .. } => {
            shift(left, by);
            shift(right, by);
        }
        _ => {}
    }
}

/// Parses the text of a string dimension (`"n"`, `"n * 2"`) as a Python expression.
pub(crate) fn parse_string_dim(s: &str, span: Span) -> ParseResult<PyExpr> {
    let mut inner = parse_expression(s).map_err(|mut err| {
        err.0.span = span;
        err.0.message = format!("in the string dimension {s:?}: {}", err.0.message);
        err
    })?;
    shift(&mut inner, span.lo.saturating_add(1));
    Ok(inner)
}

/// The scalar binary operation `e` writes, if any: `a + b`, `a and b`, `a < b`,
/// `T.min(a, b)`, `T.truncdiv(a, b)`, ... (shared by shape and TIR expressions).
pub(crate) fn binary_form(e: &PyExpr) -> ParseResult<Option<(PrimBinOp, &PyExpr, &PyExpr)>> {
    Ok(match &e.kind {
        PyExprKind::Binary { op, left, right } => {
            let op = match op {
                BinOp::Add => PrimBinOp::Add,
                BinOp::Sub => PrimBinOp::Sub,
                BinOp::Mul => PrimBinOp::Mul,
                BinOp::Div => PrimBinOp::Div,
                BinOp::FloorDiv => PrimBinOp::FloorDiv,
                BinOp::Mod => PrimBinOp::FloorMod,
                _ => return Err(ParseError::syntax("this operator is not a scalar operation here", e.span)),
            };
            Some((op, left, right))
        }
        PyExprKind::BoolOp { op, left, right } => {
            Some((if *op == BoolOp::And { PrimBinOp::And } else { PrimBinOp::Or }, left, right))
        }
        PyExprKind::Compare { op, left, right } => {
            let op = match op {
                CmpOp::Eq => PrimBinOp::Eq,
                CmpOp::NotEq => PrimBinOp::Ne,
                CmpOp::Lt => PrimBinOp::Lt,
                CmpOp::LtE => PrimBinOp::Le,
                CmpOp::Gt => PrimBinOp::Gt,
                CmpOp::GtE => PrimBinOp::Ge,
            };
            Some((op, left, right))
        }
        PyExprKind::Call { func, args, keywords } => {
            let name = func.dotted_name().unwrap_or_default();
            let op = match name.as_str() {
                "T.min" => PrimBinOp::Min,
                "T.max" => PrimBinOp::Max,
                // `T.Div` / `T.Mod`: the TIR node names, which TVM prints for its own `Div`.
                "T.truncdiv" | "T.Div" => PrimBinOp::Div,
                "T.truncmod" | "T.Mod" => PrimBinOp::Mod,
                "T.floordiv" => PrimBinOp::FloorDiv,
                "T.floormod" => PrimBinOp::FloorMod,
                _ => return Ok(None),
            };
            if let Some(k) = keywords.first() {
                return Err(ParseError::syntax(format!("`{name}` takes no keyword arguments"), k.name_span));
            }
            match args.as_slice() {
                [a, b] => Some((op, a, b)),
                _ => {
                    return Err(ParseError::syntax(
                        format!("`{name}` takes 2 argument(s), {} given", args.len()),
                        e.span,
                    ))
                }
            }
        }
        _ => None,
    })
}

/// Elaborates a shape expression.
pub(crate) fn prim_expr(ctx: &mut Ctx, e: &PyExpr, mode: NameMode) -> ParseResult<PrimExpr> {
    let span = e.span;
    if let Some((op, l, r)) = binary_form(e)? {
        return binary(ctx, op, l, r, span, mode);
    }
    let kind = match &e.kind {
        PyExprKind::Int(_) | PyExprKind::Float(_) => {
            let lit = bare_literal(e)?;
            let dtype = if matches!(lit, Literal::Float(_)) { DEFAULT_FLOAT } else { RELAX_INT };
            return literal_expr(lit, dtype, span);
        }
        PyExprKind::Bool(b) => PrimExprKind::IntImm { value: *b as i64, dtype: DataType::bool() },
        PyExprKind::Str(s) => {
            let inner = parse_string_dim(s, span)?;
            return prim_expr(ctx, &inner, NameMode::Declare);
        }
        PyExprKind::Name(n) => match ctx.lookup(n) {
            Some(Entity::Shape(v)) => PrimExprKind::Var(v.clone()),
            Some(Entity::Relax(_)) => {
                return Err(ParseError::name(
                    format!("`{n}` is a Relax variable, but a shape expression needs a shape variable"),
                    span,
                ))
            }
            Some(_) => return Err(ParseError::name(format!("`{n}` is not a shape variable"), span)),
            None if mode == NameMode::Declare => {
                let v = PrimVar::shape_var(n.clone());
                ctx.define(n, Entity::Shape(v.clone()));
                PrimExprKind::Var(v)
            }
            None => return Err(ctx.unknown_name(n, span)),
        },
        PyExprKind::Unary { op, operand } => match op {
            UnaryOp::Neg if is_bare_literal(operand) => return prim_expr(ctx, &negate_literal(e)?, mode),
            UnaryOp::Neg => {
                let x = prim_expr(ctx, operand, mode)?;
                if let PrimExprKind::IntImm { value, dtype } = &*x.kind {
                    if let Some(n) = value.checked_neg() {
                        return Ok(PrimExpr::new(PrimExprKind::IntImm { value: n, dtype: *dtype }, span));
                    }
                }
                if let PrimExprKind::FloatImm { value, dtype } = &*x.kind {
                    return Ok(PrimExpr::new(
                        PrimExprKind::FloatImm { value: FloatLit(-value.0), dtype: *dtype },
                        span,
                    ));
                }
                let zero = literal_expr(Literal::Int(0), x.dtype(), span)?;
                PrimExprKind::Binary { op: PrimBinOp::Sub, a: zero, b: x }
            }
            UnaryOp::Pos => return prim_expr(ctx, operand, mode),
            UnaryOp::Not => PrimExprKind::Not(prim_expr(ctx, operand, mode)?),
            UnaryOp::Invert => return Err(ParseError::syntax("`~` is not a shape operation", span)),
        },
        PyExprKind::Call { func, args, keywords } => {
            let name = func.dotted_name().unwrap_or_default();
            let Some(t) = name.strip_prefix("T.") else {
                return Err(ParseError::syntax(format!("expected a shape expression, found {}", e.describe()), span));
            };
            if !keywords.is_empty() {
                return Err(ParseError::syntax(format!("`{name}` takes no keyword arguments"), keywords[0].name_span));
            }
            let arity = |n: usize| -> ParseResult<()> {
                if args.len() == n {
                    Ok(())
                } else {
                    Err(ParseError::syntax(format!("`{name}` takes {n} argument(s), {} given", args.len()), span))
                }
            };
            match t {
                "Select" => {
                    arity(3)?;
                    PrimExprKind::Select {
                        cond: prim_expr(ctx, &args[0], mode)?,
                        then_value: prim_expr(ctx, &args[1], mode)?,
                        else_value: prim_expr(ctx, &args[2], mode)?,
                    }
                }
                "Cast" => {
                    arity(2)?;
                    let d = super::attrs::expect_str(&args[0], "a dtype")?;
                    let dtype = DataType::parse(&d)
                        .ok_or_else(|| ParseError::syntax(format!("unknown dtype `{d}`"), args[0].span))?;
                    PrimExprKind::Cast { dtype, value: prim_expr(ctx, &args[1], mode)? }
                }
                _ => {
                    let Some(dtype) = t_dtype(t) else {
                        return Err(ParseError::syntax(format!("`{name}` is not a shape operation"), func.span));
                    };
                    if args.is_empty() {
                        return Err(ParseError::syntax(
                            format!(
                                "`{name}()` declares a shape variable and must be assigned to a name: `n = {name}()`"
                            ),
                            span,
                        ));
                    }
                    arity(1)?;
                    match typed_literal(dtype, &args[0])? {
                        Some(lit) => return literal_expr(lit, dtype, span),
                        None => PrimExprKind::Cast { dtype, value: prim_expr(ctx, &args[0], mode)? },
                    }
                }
            }
        }
        _ => return Err(ParseError::syntax(format!("expected a shape expression, found {}", e.describe()), span)),
    };
    Ok(PrimExpr::new(kind, span))
}

fn negate_literal(e: &PyExpr) -> ParseResult<PyExpr> {
    // -(literal) folds into the literal, so that printing `-3` parses back to IntImm(-3).
    let kind = match super::attrs::number(e)? {
        super::attrs::Number::Int(i) => PyExprKind::Int(Some(i)),
        super::attrs::Number::Float(f) => PyExprKind::Float(f),
    };
    Ok(PyExpr { kind, span: e.span })
}

fn binary(ctx: &mut Ctx, op: PrimBinOp, l: &PyExpr, r: &PyExpr, span: Span, mode: NameMode) -> ParseResult<PrimExpr> {
    let (a, b) = match (is_bare_literal(l), is_bare_literal(r)) {
        (true, false) => {
            let b = prim_expr(ctx, r, mode)?;
            (coerce(l, b.dtype())?, b)
        }
        (false, true) => {
            let a = prim_expr(ctx, l, mode)?;
            let b = coerce(r, a.dtype())?;
            (a, b)
        }
        _ => (prim_expr(ctx, l, mode)?, prim_expr(ctx, r, mode)?),
    };
    Ok(PrimExpr::new(PrimExprKind::Binary { op, a, b }, span))
}

fn coerce(lit: &PyExpr, other: DataType) -> ParseResult<PrimExpr> {
    let l = bare_literal(lit)?;
    let dtype = coerced_literal_dtype(matches!(l, Literal::Float(_)), other)
        .unwrap_or(if matches!(l, Literal::Float(_)) { DEFAULT_FLOAT } else { RELAX_INT });
    literal_expr(l, dtype, lit.span)
}
