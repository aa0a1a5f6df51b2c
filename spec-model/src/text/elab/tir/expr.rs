//! TIR expressions: literals with their dtypes, operators, loads and intrinsics.

use super::{bare, dtype_of, is_bare_literal, literal, Tir, TIR_FLOAT, TIR_INT};
use crate::grammar::tir::{Buffer, Intrinsic, TirExpr, TirExprKind};
use crate::grammar::{DataType, FloatLit, PrimBinOp, TypeCode};
use crate::span::Span;
use crate::text::elab::prim::{binary_form, coerced_literal_dtype, t_dtype, typed_literal, Literal};
use crate::text::elab::Entity;
use crate::text::error::{ParseError, ParseResult};
use crate::text::py_ast::{BinOp, Keyword, PyExpr, PyExprKind, UnaryOp};

impl Tir {
    /// Two expressions where a bare literal takes the other's dtype.
    pub(super) fn pair(&mut self, a: &PyExpr, b: &PyExpr) -> ParseResult<(TirExpr, TirExpr)> {
        match (is_bare_literal(a), is_bare_literal(b)) {
            (true, false) => {
                let y = self.expr(b)?;
                Ok((self.coerced(a, y.dtype())?, y))
            }
            (false, true) => {
                let x = self.expr(a)?;
                let y = self.coerced(b, x.dtype())?;
                Ok((x, y))
            }
            _ => Ok((self.expr(a)?, self.expr(b)?)),
        }
    }

    /// `e`, where a bare literal takes `dtype` (TVMScript's implicit conversion).
    pub(super) fn coerced(&mut self, e: &PyExpr, dtype: DataType) -> ParseResult<TirExpr> {
        if !is_bare_literal(e) {
            return self.expr(e);
        }
        let l = bare(e)?;
        let d = coerced_literal_dtype(matches!(l, Literal::Float(_)), dtype)
            .unwrap_or(if matches!(l, Literal::Float(_)) { TIR_FLOAT } else { TIR_INT });
        literal(l, d, e.span)
    }

    pub(super) fn buffer_ref(&mut self, e: &PyExpr) -> ParseResult<Buffer> {
        match &e.kind {
            PyExprKind::Name(n) => match self.ctx.lookup(n) {
                Some(Entity::Buffer(b)) => Ok(b.clone()),
                Some(_) => Err(ParseError::name(format!("`{n}` is not a buffer"), e.span)),
                None => Err(self.ctx.unknown_name(n, e.span)),
            },
            _ => Err(ParseError::syntax("expected a buffer name", e.span)),
        }
    }

    pub(super) fn indices(&mut self, index: &PyExpr) -> ParseResult<Vec<TirExpr>> {
        let items: Vec<&PyExpr> = match &index.kind {
            PyExprKind::Tuple(t) => t.iter().collect(),
            _ => vec![index],
        };
        items
            .into_iter()
            .map(|i| match i.kind {
                PyExprKind::Slice { .. } => {
                    Err(ParseError::syntax("a buffer element is indexed by expressions, not slices", i.span))
                }
                _ => self.expr(i),
            })
            .collect()
    }

    pub(super) fn expr(&mut self, e: &PyExpr) -> ParseResult<TirExpr> {
        let span = e.span;
        // `&`, `|`, `^`, `<<`, `>>`: TVM's printer writes the bitwise intrinsics so.
        if let PyExprKind::Binary { op, left, right } = &e.kind {
            let bitwise = match op {
                BinOp::BitAnd => Some(Intrinsic::BitwiseAnd),
                BinOp::BitOr => Some(Intrinsic::BitwiseOr),
                BinOp::BitXor => Some(Intrinsic::BitwiseXor),
                BinOp::LShift => Some(Intrinsic::ShiftLeft),
                BinOp::RShift => Some(Intrinsic::ShiftRight),
                _ => None,
            };
            if let Some(op) = bitwise {
                let (a, b) = self.pair(left, right)?;
                return integer_call(op, vec![a, b], span);
            }
        }
        if let Some((op, l, r)) = binary_form(e)? {
            let (a, b) = self.pair(l, r)?;
            return Ok(TirExpr::new(TirExprKind::Binary { op, a, b }, span));
        }
        let kind = match &e.kind {
            PyExprKind::Int(_) | PyExprKind::Float(_) => {
                let l = bare(e)?;
                return literal(l, if matches!(l, Literal::Float(_)) { TIR_FLOAT } else { TIR_INT }, span);
            }
            PyExprKind::Bool(b) => TirExprKind::IntImm { value: *b as i64, dtype: DataType::bool() },
            PyExprKind::Name(n) => match self.ctx.lookup(n) {
                Some(Entity::Shape(v)) => TirExprKind::Var(v.clone()),
                Some(Entity::Buffer(_)) => {
                    return Err(ParseError::name(format!("`{n}` is a buffer; read an element with `{n}[i]`"), span))
                }
                Some(_) => return Err(ParseError::name(format!("`{n}` is not a TIR value"), span)),
                None => return Err(self.ctx.unknown_name(n, span)),
            },
            PyExprKind::Subscript { value, index } => {
                let buffer = self.buffer_ref(value)?;
                TirExprKind::BufferLoad { buffer, indices: self.indices(index)? }
            }
            PyExprKind::Unary { op, operand } => match op {
                UnaryOp::Neg if is_bare_literal(operand) => {
                    let l = bare(e)?;
                    return literal(l, if matches!(l, Literal::Float(_)) { TIR_FLOAT } else { TIR_INT }, span);
                }
                UnaryOp::Neg => {
                    let x = self.expr(operand)?;
                    match &*x.kind {
                        TirExprKind::IntImm { value, dtype } if value.checked_neg().is_some() => {
                            TirExprKind::IntImm { value: -value, dtype: *dtype }
                        }
                        TirExprKind::FloatImm { value, dtype } => {
                            TirExprKind::FloatImm { value: FloatLit(-value.0), dtype: *dtype }
                        }
                        _ => TirExprKind::Binary {
                            op: PrimBinOp::Sub,
                            a: literal(Literal::Int(0), x.dtype(), span)?,
                            b: x,
                        },
                    }
                }
                UnaryOp::Pos => return self.expr(operand),
                UnaryOp::Not => TirExprKind::Not(self.expr(operand)?),
                UnaryOp::Invert => return integer_call(Intrinsic::BitwiseNot, vec![self.expr(operand)?], span),
            },
            PyExprKind::Call { func, args, keywords } => return self.call(func, args, keywords, span),
            _ => return Err(ParseError::syntax(format!("{} is not a TIR expression", e.describe()), span)),
        };
        Ok(TirExpr::new(kind, span))
    }

    pub(super) fn call(
        &mut self,
        func: &PyExpr,
        args: &[PyExpr],
        keywords: &[Keyword],
        span: Span,
    ) -> ParseResult<TirExpr> {
        let name = func.dotted_name().unwrap_or_default();
        let Some(t) = name.strip_prefix("T.") else {
            return Err(ParseError::syntax(format!("`{name}` is not a TIR function"), func.span));
        };
        let arity = |n: usize| -> ParseResult<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(ParseError::syntax(format!("`{name}` takes {n} argument(s), {} given", args.len()), span))
            }
        };
        // `T.abs` is TVM's name for the absolute value of ints and floats alike.
        let t = if t == "abs" { "fabs" } else { t };
        // `dtype=` on a math intrinsic (Relax's StructInfo-era tests write it) states
        // the result's dtype, which must be the one TIR gives the call.
        let mut stated = None;
        for k in keywords {
            if k.name != "dtype" || Intrinsic::from_name(t).is_none() || stated.is_some() {
                let what = if Intrinsic::from_name(t).is_some() {
                    "no keyword arguments but `dtype=`"
                } else {
                    "no keyword arguments"
                };
                return Err(ParseError::syntax(format!("`{name}` takes {what}"), k.name_span));
            }
            stated = Some((dtype_of(&k.value)?, k.value.span));
        }
        if t == "max_value" || t == "min_value" {
            arity(1)?;
            return limit_value(t == "max_value", dtype_of(&args[0])?, span);
        }
        if t == "isnan" {
            // `T.isnan(x)` is `x != x` (true exactly for NaN); an integer is never NaN.
            arity(1)?;
            let x = self.expr(&args[0])?;
            let kind = if x.dtype().is_float() {
                TirExprKind::Binary { op: PrimBinOp::Ne, a: x.clone(), b: x }
            } else {
                TirExprKind::IntImm { value: 0, dtype: DataType::bool() }
            };
            return Ok(TirExpr::new(kind, span));
        }
        let kind = if t == "Select" {
            arity(3)?;
            TirExprKind::Select {
                cond: self.expr(&args[0])?,
                then_value: self.expr(&args[1])?,
                else_value: self.expr(&args[2])?,
            }
        } else if t == "Cast" {
            arity(2)?;
            TirExprKind::Cast { dtype: dtype_of(&args[0])?, value: self.expr(&args[1])? }
        } else if let Some(op) = Intrinsic::from_name(t) {
            arity(op.arity())?;
            let args = match op {
                Intrinsic::IfThenElse => {
                    let c = self.expr(&args[0])?;
                    let (a, b) = self.pair(&args[1], &args[2])?;
                    vec![c, a, b]
                }
                Intrinsic::Pow => {
                    let (a, b) = self.pair(&args[0], &args[1])?;
                    vec![a, b]
                }
                op if op.is_bitwise_binary() => {
                    let (a, b) = self.pair(&args[0], &args[1])?;
                    vec![a, b]
                }
                _ => args.iter().map(|a| self.expr(a)).collect::<ParseResult<_>>()?,
            };
            if op.is_integer_only() {
                let e = integer_call(op, args, span)?;
                if let Some((d, at)) = stated.filter(|(d, _)| *d != e.dtype()) {
                    return Err(ParseError::syntax(
                        format!("`dtype=\"{d}\"` but `{name}` here gives {}", e.dtype()),
                        at,
                    ));
                }
                return Ok(e);
            }
            TirExprKind::Call { op, args }
        } else if let Some(dtype) = t_dtype(t) {
            if args.is_empty() {
                return Err(ParseError::syntax(
                    format!("`{name}()` declares a variable and must be assigned to a name: `n = {name}()`"),
                    span,
                ));
            }
            arity(1)?;
            match typed_literal(dtype, &args[0])? {
                Some(l) => return literal(l, dtype, span),
                None => TirExprKind::Cast { dtype, value: self.expr(&args[0])? },
            }
        } else {
            let known: Vec<&str> = Intrinsic::ALL.iter().map(|i| i.name()).collect();
            return Err(ParseError::syntax(format!("`{name}` is not a TIR function this subset knows"), func.span)
                .with_note(format!("known: T.min, T.max, T.truncdiv, T.truncmod, T.Div, T.Mod, T.floordiv, T.floormod, T.Select, T.Cast, T.<dtype>(...), T.abs, T.isnan, T.max_value, T.min_value, T.{}", known.join(", T."))));
        };
        let e = TirExpr::new(kind, span);
        if let Some((d, at)) = stated.filter(|(d, _)| *d != e.dtype()) {
            return Err(ParseError::syntax(format!("`dtype=\"{d}\"` but `{name}` here gives {}", e.dtype()), at));
        }
        Ok(e)
    }
}

/// A call of a bitwise intrinsic. Its operands must be integers (or `bool`), as TVM's
/// `bitwise_and` and shifts require ("only applicable to integer types"); like every
/// intrinsic's operand dtype, that is checked when the call runs (`OpError`), so that
/// every TIR AST prints to text that reads back.
fn integer_call(op: Intrinsic, args: Vec<TirExpr>, span: Span) -> ParseResult<TirExpr> {
    Ok(TirExpr::new(TirExprKind::Call { op, args }, span))
}

/// `T.max_value(dtype)` / `T.min_value(dtype)`: the largest / smallest value of the
/// dtype, as a literal (the lowest finite value for floats, as in TVM).
fn limit_value(max: bool, dtype: DataType, span: Span) -> ParseResult<TirExpr> {
    let float_max = match (dtype.code, dtype.bits) {
        (TypeCode::Float, 16) => Some(65504.0),
        (TypeCode::Float, 32) => Some(f64::from(f32::MAX)),
        (TypeCode::Float, 64) => Some(f64::MAX),
        _ => None,
    };
    if let Some(m) = float_max.filter(|_| dtype.lanes == 1) {
        return literal(Literal::Float(if max { m } else { -m }), dtype, span);
    }
    if dtype.lanes == 1 && !dtype.is_bool() && matches!(dtype.code, TypeCode::Int | TypeCode::UInt) {
        let (lo, hi) = crate::prim_eval::int_range(dtype);
        return literal(Literal::Int(if max { hi } else { lo }), dtype, span);
    }
    Err(ParseError::syntax(format!("{dtype} has no {} value here", if max { "max" } else { "min" }), span))
}
