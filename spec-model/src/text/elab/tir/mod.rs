//! TIR `@T.prim_func`s: buffer parameters (`T.Buffer` or `T.handle` + `T.match_buffer`),
//! loops, blocks with axes, reads/writes and `T.init()`, loads and stores, local
//! buffers, `if`, scalar lets and math intrinsics. Bare integer literals are `int32`
//! and floats `float32`, as in TVMScript; a bare literal beside a typed operand, or
//! stored into a buffer, takes that dtype.

mod expr;
mod stmt;

use super::attrs::{attr_dict, bind_args, expect_dtype as dtype_of, expect_int, expect_str};
use super::prim::{bare_literal as bare, is_bare_literal, parse_string_dim, t_dtype, Literal};
use super::relax_fn::shape_var_declaration as shape_var_decl;
use super::{Ctx, Entity, FnDef};
use crate::grammar::tir::{Buffer, BufferRegion, IterVar, PrimFunc, Stmt, TirExpr, TirExprKind, TirParam};
use crate::grammar::{AttrValue, Attrs, DataType, FloatLit, PrimVar, TypeCode};
use crate::span::Span;
use crate::text::error::{ParseError, ParseResult};
use crate::text::py_ast::{Keyword, PyExpr, PyExprKind, PyStmt, PyStmtKind};
use std::collections::HashSet;

pub(crate) const TIR_INT: DataType = DataType::INT32;
pub(crate) const TIR_FLOAT: DataType = DataType::FLOAT32;

/// A TIR function's statements being elaborated: the names in scope and the enclosing
/// loops. A nested scope is a copy ([`Tir::enter`]), dropped when it ends.
#[derive(Clone)]
struct Tir {
    ctx: Ctx,
    /// The `(begin, end)` of each enclosing loop variable, for `T.axis.remap`.
    loops: imbl::HashMap<u64, (TirExpr, TirExpr)>,
}

/// Pieces of a block collected while reading its statements.
#[derive(Default)]
struct BlockParts {
    iter_vars: Vec<IterVar>,
    reads: Vec<BufferRegion>,
    writes: Vec<BufferRegion>,
    predicate: Option<TirExpr>,
    init: Option<Vec<Stmt>>,
    annotations: std::collections::BTreeMap<String, AttrValue>,
}

pub(crate) fn prim_func(ctx: &Ctx, def: &PyStmt) -> ParseResult<PrimFunc> {
    let fndef = FnDef::of(def).expect("called on function definitions");
    let opts = fndef.decorator_options(super::PRIM_FUNC, &["private", "s_tir"])?;
    // TVM 0.27 names the block dialect `s_tir`; its other dialect, `tirx`, is not modeled.
    if opts.get("s_tir") == Some(&false) {
        let at = fndef
            .decorators
            .iter()
            .find(|d| super::decorator_is(d, super::PRIM_FUNC))
            .map_or(fndef.name_span, |d| d.span);
        return Err(ParseError::syntax("`s_tir=False` (TVM's `tirx` dialect) is not supported", at)
            .with_note("a `@T.prim_func` here is TVM's `s_tir` dialect: write `s_tir=True` or leave it out"));
    }
    let FnDef { name, params, returns, body, type_params, .. } = fndef;
    if let Some((t, span)) = type_params.first() {
        return Err(ParseError::syntax(
            format!("type parameter `{t}`: a TIR function declares its shape variables as `{t} = T.int64()`"),
            *span,
        ));
    }
    let private = opts.get("private").copied().unwrap_or(false);
    // `-> None`, as Relax's StructInfo-era tests write it, says what leaving it out says.
    if let Some(r) = returns.filter(|r| !matches!(r.kind, PyExprKind::NoneLit)) {
        return Err(ParseError::syntax("a TIR function here returns nothing; drop the `->` annotation", r.span)
            .with_note("`-> None` is accepted too"));
    }
    let mut t = Tir { ctx: ctx.enter(), loops: imbl::HashMap::new() };
    let body = super::unpack::split_declarations(body);
    let (params, body, mut attrs) = t.function(params, &body)?;
    if !private && attrs.get("global_symbol").is_none() {
        attrs.insert("global_symbol", AttrValue::Str(name.to_string()));
    }
    Ok(PrimFunc { params, body, attrs, span: def.span })
}

fn call_parts(e: &PyExpr) -> Option<(String, &[PyExpr], &[Keyword])> {
    match &e.kind {
        PyExprKind::Call { func, args, keywords } => Some((func.dotted_name()?, args, keywords)),
        _ => None,
    }
}

/// A buffer parameter's annotation: `T.Buffer(shape, dtype)`, or the subscript form
/// Relax's StructInfo-era tests write, `T.Buffer[shape, dtype]` / `T.Buffer[shape]`;
/// its arguments either way.
fn buffer_annotation(ann: &PyExpr) -> Option<(&[PyExpr], &[Keyword])> {
    if let Some((n, args, keywords)) = call_parts(ann) {
        return (n == "T.Buffer").then_some((args, keywords));
    }
    let PyExprKind::Subscript { value, index } = &ann.kind else { return None };
    if value.dotted_name().as_deref() != Some("T.Buffer") {
        return None;
    }
    Some(match &index.kind {
        PyExprKind::Tuple(items) if items.len() == 2 && matches!(items[1].kind, PyExprKind::Str(_)) => {
            (&items[..], &[])
        }
        _ => (std::slice::from_ref(&**index), &[]),
    })
}

fn literal(lit: Literal, dtype: DataType, span: Span) -> ParseResult<TirExpr> {
    Ok(TirExpr::new(
        match lit {
            Literal::Int(i) if dtype.code == TypeCode::Float => {
                TirExprKind::FloatImm { value: FloatLit(i as f64), dtype }
            }
            Literal::Int(i) => {
                if !super::prim::int_fits(dtype, i) {
                    return Err(ParseError::syntax(super::prim::unfit(dtype, i), span));
                }
                TirExprKind::IntImm { value: i as i64, dtype }
            }
            Literal::Float(f) => TirExprKind::FloatImm { value: FloatLit(f), dtype },
        },
        span,
    ))
}

type FnParts = (Vec<TirParam>, Vec<Stmt>, Attrs);

impl Tir {
    /// A scope nested in this one.
    pub(super) fn enter(&self) -> Tir {
        Tir { ctx: self.ctx.enter(), loops: self.loops.clone() }
    }

    pub(super) fn function(&mut self, params: &[crate::text::py_ast::Param], body: &[PyStmt]) -> ParseResult<FnParts> {
        // First every parameter's variable (so buffer shapes may use scalar parameters),
        // then the buffers of `T.Buffer` annotations.
        let mut out: Vec<TirParam> = Vec::new();
        // The scalar parameters defined so far (a buffer or handle parameter's name
        // is defined after all of them).
        let mut scalars: HashSet<&str> = HashSet::new();
        for p in params {
            if let Some(d) = &p.default {
                return Err(ParseError::syntax("TIR parameters have no default values", d.span));
            }
            let Some(ann) = &p.annotation else {
                return Err(ParseError::syntax(
                    "a TIR parameter needs an annotation: `T.Buffer(...)`, `T.handle` or a scalar type like `T.int64`",
                    p.span,
                ));
            };
            if scalars.contains(p.name.as_str()) {
                return Err(ParseError::name(format!("parameter `{}` is declared twice", p.name), p.span));
            }
            let dtype = match ann.dotted().as_deref() {
                Some(["T", "handle"]) => DataType::handle(),
                Some(["T", d]) if t_dtype(d).is_some() => t_dtype(d).unwrap_or(TIR_INT),
                _ if buffer_annotation(ann).is_some() => DataType::handle(),
                _ => {
                    return Err(ParseError::syntax(
                        "expected `T.Buffer(shape, dtype)`, `T.handle` or a scalar type like `T.int64`",
                        ann.span,
                    ))
                }
            };
            let var = PrimVar::new(p.name.clone(), dtype);
            if dtype != DataType::handle() {
                self.ctx.define(&p.name, Entity::Shape(var.clone()));
                scalars.insert(&p.name);
            }
            out.push(TirParam { var, buffer: None });
        }
        for (p, param) in params.iter().zip(out.iter_mut()) {
            let Some(ann) = &p.annotation else { continue };
            if let Some((args, keywords)) = buffer_annotation(ann) {
                let buf = self.buffer_decl(&p.name, p.span, "T.Buffer", args, keywords, true)?;
                self.ctx.define(&p.name, Entity::Buffer(buf.clone()));
                param.buffer = Some(buf);
            } else if param.var.dtype() == DataType::handle() {
                self.ctx.define(&p.name, Entity::Shape(param.var.clone()));
            }
        }
        // The body's prelude: attributes, shape-variable declarations, match_buffer.
        let mut attrs = Attrs::default();
        let mut rest: Vec<&PyStmt> = Vec::new();
        for (i, s) in body.iter().enumerate() {
            match &s.kind {
                PyStmtKind::Expr(PyExpr { kind: PyExprKind::Str(_), .. }) if i == 0 => {}
                PyStmtKind::Expr(e) if call_parts(e).is_some_and(|(n, _, _)| n == "T.func_attr") => {
                    let Some((_, [PyExpr { kind: PyExprKind::Dict(items), .. }], [])) = call_parts(e) else {
                        return Err(ParseError::syntax("`T.func_attr` takes one dict", e.span));
                    };
                    for (k, v) in attr_dict(items)? {
                        if attrs.get(&k).is_some() {
                            return Err(ParseError::syntax(format!("function attribute `{k}` is given twice"), e.span));
                        }
                        attrs.insert(k, v);
                    }
                }
                PyStmtKind::Assign { target: PyExpr { kind: PyExprKind::Name(n), span: nspan }, value }
                    if shape_var_decl(value).is_some() =>
                {
                    let dtype = shape_var_decl(value).unwrap_or(DataType::INT64);
                    match self.ctx.lookup(n) {
                        Some(Entity::Shape(v)) if v.dtype() == dtype => {}
                        Some(_) => return Err(ParseError::name(format!("`{n}` is already defined"), *nspan)),
                        None => self.ctx.define(n, Entity::Shape(PrimVar::new(n.clone(), dtype))),
                    }
                }
                PyStmtKind::Assign { target: PyExpr { kind: PyExprKind::Name(n), span: nspan }, value }
                    if call_parts(value).is_some_and(|(c, _, _)| c == "T.match_buffer") =>
                {
                    let (_, args, keywords) = call_parts(value).unwrap_or_default();
                    let Some(handle) = args.first() else {
                        return Err(ParseError::syntax(
                            "`T.match_buffer(handle, shape, dtype)` needs a handle",
                            value.span,
                        ));
                    };
                    let PyExprKind::Name(h) = &handle.kind else {
                        return Err(ParseError::syntax("`T.match_buffer` matches a `T.handle` parameter", handle.span));
                    };
                    let Some(idx) = out.iter().position(|p| p.var.name() == h && p.var.dtype() == DataType::handle())
                    else {
                        return Err(ParseError::name(format!("`{h}` is not a `T.handle` parameter"), handle.span));
                    };
                    if out[idx].buffer.is_some() {
                        return Err(ParseError::syntax(format!("`{h}` already has a buffer"), handle.span));
                    }
                    let buf = self.buffer_decl(n, *nspan, "T.match_buffer", &args[1..], keywords, true)?;
                    self.ctx.define(n, Entity::Buffer(buf.clone()));
                    out[idx].buffer = Some(buf);
                }
                _ => rest.push(s),
            }
        }
        let mut parts = None;
        let stmts = self.stmts(&rest, &mut parts)?;
        Ok((out, stmts, attrs))
    }

    /// `T.Buffer(shape, dtype)`, `T.match_buffer(h, shape, dtype)`, `T.alloc_buffer(shape, dtype, scope=)`.
    pub(super) fn buffer_decl(
        &mut self,
        name: &str,
        span: Span,
        callee: &str,
        args: &[PyExpr],
        keywords: &[Keyword],
        declare_strings: bool,
    ) -> ParseResult<Buffer> {
        let a = bind_args(callee, span, &["shape", "dtype", "scope", "align", "offset_factor"], args, keywords)?;
        // `align=` / `offset_factor=` constrain where a buffer's data may start; a buffer
        // here always starts at element 0, which meets every such constraint, so they
        // are checked to be non-negative integers (0: no constraint) and not kept.
        for (what, e) in [("align", a[3]), ("offset_factor", a[4])] {
            if let Some(e) = e {
                if expect_int(e, what)? < 0 {
                    return Err(ParseError::syntax(format!("`{what}` must not be negative"), e.span));
                }
            }
        }
        let Some(shape_e) = a[0] else {
            return Err(ParseError::syntax(format!("`{callee}` needs a shape"), span));
        };
        let dims: Vec<&PyExpr> = match &shape_e.kind {
            PyExprKind::Tuple(ds) | PyExprKind::List(ds) => ds.iter().collect(),
            _ => vec![shape_e],
        };
        let mut shape = Vec::new();
        for d in dims {
            let e = match &d.kind {
                PyExprKind::Str(s) if declare_strings => {
                    let inner = parse_string_dim(s, d.span)?;
                    self.expr_declaring(&inner)?
                }
                _ => self.expr(d)?,
            };
            shape.push(e);
        }
        let dtype = match a[1] {
            Some(d) => dtype_of(d)?,
            None => TIR_FLOAT,
        };
        let scope = match a[2] {
            Some(s) => expect_str(s, "a storage scope")?,
            None => "global".to_string(),
        };
        Ok(Buffer::new(name, shape, dtype, scope, span))
    }

    /// An expression in which unknown names declare `int64` shape variables (string dimensions).
    pub(super) fn expr_declaring(&mut self, e: &PyExpr) -> ParseResult<TirExpr> {
        let mut names = Vec::new();
        collect_names(e, &mut names);
        for (n, _) in names {
            if self.ctx.lookup(&n).is_none() {
                self.ctx.define(&n, Entity::Shape(PrimVar::shape_var(n.clone())));
            }
        }
        self.expr(e)
    }
}

pub(super) fn collect_names(e: &PyExpr, out: &mut Vec<(String, Span)>) {
    match &e.kind {
        PyExprKind::Name(n) => out.push((n.clone(), e.span)),
        PyExprKind::Unary { operand, .. } => collect_names(operand, out),
        PyExprKind::Binary { left, right, .. }
        | PyExprKind::BoolOp { left, right, .. }
        | PyExprKind::Compare { left, right, .. } => {
            collect_names(left, out);
            collect_names(right, out);
        }
        PyExprKind::Call { args, .. } => args.iter().for_each(|a| collect_names(a, out)),
        _ => {}
    }
}
