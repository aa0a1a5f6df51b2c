//! TIR `@T.prim_func`s: buffer parameters (`T.Buffer` or `T.handle` + `T.match_buffer`),
//! loops, blocks with axes, reads/writes and `T.init()`, loads and stores, local
//! buffers, `if`, scalar lets and math intrinsics. Bare integer literals are `int32`
//! and floats `float32`, as in TVMScript; a bare literal beside a typed operand, or
//! stored into a buffer, takes that dtype.

use super::attrs::{attr_dict, bind_args, expect_bool, expect_str};
use super::prim::{coerced_literal_dtype, parse_string_dim, t_dtype, typed_literal, Literal};
use super::{decorator_is, Ctx, Entity};
use crate::grammar::tir::{
    Block, Buffer, BufferRegion, ForKind, Intrinsic, IterKind, IterVar, PrimFunc, RegionDim, Stmt, StmtKind, TirExpr,
    TirExprKind, TirParam,
};
use crate::grammar::{AttrValue, Attrs, DataType, FloatLit, PrimBinOp, PrimVar, TypeCode};
use crate::span::Span;
use crate::text::error::{ParseError, ParseResult};
use crate::text::py_ast::{BinOp, BoolOp, CmpOp, Keyword, PyExpr, PyExprKind, PyStmt, PyStmtKind, UnaryOp};
use std::collections::HashMap;

pub(crate) const TIR_INT: DataType = DataType::INT32;
pub(crate) const TIR_FLOAT: DataType = DataType::FLOAT32;

struct Tir<'c> {
    ctx: &'c mut Ctx,
    /// The `(begin, end)` of each enclosing loop variable, for `T.axis.remap`.
    loops: HashMap<u64, (TirExpr, TirExpr)>,
}

/// Pieces of a block collected while reading its statements.
#[derive(Default)]
struct BlockParts {
    iter_vars: Vec<IterVar>,
    reads: Vec<BufferRegion>,
    writes: Vec<BufferRegion>,
    predicate: Option<TirExpr>,
    init: Option<Vec<Stmt>>,
}

pub(crate) fn prim_func(ctx: &mut Ctx, def: &PyStmt) -> ParseResult<PrimFunc> {
    let PyStmtKind::FunctionDef { name, name_span, decorators, params, returns, body } = &def.kind else {
        unreachable!("called on function definitions")
    };
    let mut private = false;
    let d = decorators
        .iter()
        .find(|d| decorator_is(d, super::PRIM_FUNC))
        .ok_or_else(|| ParseError::syntax("a TIR function must be decorated with `@T.prim_func`", *name_span))?;
    if let Some(other) = decorators.iter().find(|x| !std::ptr::eq(*x, d)) {
        return Err(ParseError::syntax("unexpected decorator", other.span));
    }
    if let PyExprKind::Call { args, keywords, .. } = &d.kind {
        if let Some(a) = args.first() {
            return Err(ParseError::syntax("`@T.prim_func` takes keyword arguments only", a.span));
        }
        for k in keywords {
            match k.name.as_str() {
                "private" => private = expect_bool(&k.value, "`private`")?,
                _ => return Err(ParseError::syntax(format!("`@T.prim_func` has no option `{}`", k.name), k.name_span)),
            }
        }
    }
    if let Some(r) = returns {
        return Err(ParseError::syntax("a TIR function here returns nothing; drop the `->` annotation", r.span));
    }
    ctx.scopes.push();
    let mut t = Tir { ctx, loops: HashMap::new() };
    let r = t.function(params, body);
    t.ctx.scopes.pop();
    let (params, body, mut attrs) = r?;
    if !private && attrs.get("global_symbol").is_none() {
        attrs.insert("global_symbol", AttrValue::Str(name.clone()));
    }
    Ok(PrimFunc { params, body, attrs, span: def.span })
}

fn call_parts(e: &PyExpr) -> Option<(String, &[PyExpr], &[Keyword])> {
    match &e.kind {
        PyExprKind::Call { func, args, keywords } => Some((func.dotted_name()?, args, keywords)),
        _ => None,
    }
}

/// `T.int64()` (no arguments): a shape-variable declaration.
fn shape_var_decl(e: &PyExpr) -> Option<DataType> {
    match call_parts(e) {
        Some((name, [], [])) => name.strip_prefix("T.").and_then(t_dtype),
        _ => None,
    }
}

fn is_bare_literal(e: &PyExpr) -> bool {
    match &e.kind {
        PyExprKind::Int(_) | PyExprKind::Float(_) => true,
        PyExprKind::Unary { op: UnaryOp::Neg | UnaryOp::Pos, operand } => is_bare_literal(operand),
        _ => false,
    }
}

fn literal(lit: Literal, dtype: DataType, span: Span) -> ParseResult<TirExpr> {
    Ok(TirExpr::new(
        match lit {
            Literal::Int(i) if dtype.code == TypeCode::Float => {
                TirExprKind::FloatImm { value: FloatLit(i as f64), dtype }
            }
            Literal::Int(i) => {
                if !super::prim::int_fits(dtype, i) {
                    return Err(ParseError::syntax(format!("{i} does not fit in {dtype}"), span));
                }
                TirExprKind::IntImm { value: i as i64, dtype }
            }
            Literal::Float(f) => TirExprKind::FloatImm { value: FloatLit(f), dtype },
        },
        span,
    ))
}

fn bare(e: &PyExpr) -> ParseResult<Literal> {
    Ok(match super::attrs::number(e)? {
        super::attrs::Number::Int(i) => Literal::Int(i),
        super::attrs::Number::Float(f) => Literal::Float(f),
    })
}

fn dtype_of(e: &PyExpr) -> ParseResult<DataType> {
    let s = expect_str(e, "a dtype")?;
    DataType::parse(&s).ok_or_else(|| ParseError::syntax(format!("unknown dtype `{s}`"), e.span))
}

type FnParts = (Vec<TirParam>, Vec<Stmt>, Attrs);

impl<'c> Tir<'c> {
    fn function(&mut self, params: &[crate::text::py_ast::Param], body: &[PyStmt]) -> ParseResult<FnParts> {
        // First every parameter's variable (so buffer shapes may use scalar parameters),
        // then the buffers of `T.Buffer` annotations.
        let mut out: Vec<TirParam> = Vec::new();
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
            if self.ctx.scopes.frames.last().is_some_and(|f| f.contains_key(&p.name)) {
                return Err(ParseError::name(format!("parameter `{}` is declared twice", p.name), p.span));
            }
            let dtype = match ann.dotted().as_deref() {
                Some(["T", "handle"]) => DataType::handle(),
                Some(["T", d]) if t_dtype(d).is_some() => t_dtype(d).unwrap_or(TIR_INT),
                _ if matches!(call_parts(ann), Some((ref n, _, _)) if n == "T.Buffer") => DataType::handle(),
                _ => {
                    return Err(ParseError::syntax(
                        "expected `T.Buffer(shape, dtype)`, `T.handle` or a scalar type like `T.int64`",
                        ann.span,
                    ))
                }
            };
            let var = PrimVar::new(p.name.clone(), dtype);
            if dtype != DataType::handle() {
                self.ctx.scopes.define(&p.name, Entity::Shape(var.clone()));
            }
            out.push(TirParam { var, buffer: None });
        }
        for (p, param) in params.iter().zip(out.iter_mut()) {
            let Some(ann) = &p.annotation else { continue };
            if let Some((n, args, keywords)) = call_parts(ann) {
                if n == "T.Buffer" {
                    let buf = self.buffer_decl(&p.name, p.span, "T.Buffer", args, keywords, true)?;
                    self.ctx.scopes.define(&p.name, Entity::Buffer(buf.clone()));
                    param.buffer = Some(buf);
                }
            } else if param.var.dtype() == DataType::handle() {
                self.ctx.scopes.define(&p.name, Entity::Shape(param.var.clone()));
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
                    match self.ctx.scopes.lookup(n) {
                        Some(Entity::Shape(v)) if v.dtype() == dtype => {}
                        Some(_) => return Err(ParseError::name(format!("`{n}` is already defined"), *nspan)),
                        None => self.ctx.scopes.define(n, Entity::Shape(PrimVar::new(n.clone(), dtype))),
                    }
                }
                PyStmtKind::Assign { target: PyExpr { kind: PyExprKind::Name(n), span: nspan }, value }
                    if call_parts(value).is_some_and(|(c, _, _)| c == "T.match_buffer") =>
                {
                    let (_, args, keywords) = call_parts(value).unwrap_or_default_parts();
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
                    self.ctx.scopes.define(n, Entity::Buffer(buf.clone()));
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
    fn buffer_decl(
        &mut self,
        name: &str,
        span: Span,
        callee: &str,
        args: &[PyExpr],
        keywords: &[Keyword],
        declare_strings: bool,
    ) -> ParseResult<Buffer> {
        let a = bind_args(callee, span, &["shape", "dtype", "scope"], args, keywords)?;
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
    fn expr_declaring(&mut self, e: &PyExpr) -> ParseResult<TirExpr> {
        let mut names = Vec::new();
        collect_names(e, &mut names);
        for (n, _) in names {
            if self.ctx.scopes.lookup(&n).is_none() {
                self.ctx.scopes.define(&n, Entity::Shape(PrimVar::shape_var(n.clone())));
            }
        }
        self.expr(e)
    }

    fn stmts(&mut self, stmts: &[&PyStmt], block: &mut Option<BlockParts>) -> ParseResult<Vec<Stmt>> {
        self.ctx.scopes.push();
        let mut out = Vec::new();
        let r = (|| {
            for s in stmts {
                if let Some(st) = self.stmt(s, block)? {
                    out.push(st);
                }
            }
            Ok(())
        })();
        self.ctx.scopes.pop();
        r.map(|_| out)
    }

    fn body(&mut self, stmts: &[PyStmt]) -> ParseResult<Vec<Stmt>> {
        let refs: Vec<&PyStmt> = stmts.iter().collect();
        self.stmts(&refs, &mut None)
    }

    fn stmt(&mut self, s: &PyStmt, block: &mut Option<BlockParts>) -> ParseResult<Option<Stmt>> {
        let span = s.span;
        let kind = match &s.kind {
            PyStmtKind::For { target, iter, body } => return self.for_loop(target, iter, body, span).map(Some),
            PyStmtKind::If { test, body, orelse } => StmtKind::IfThenElse {
                cond: self.expr(test)?,
                then_body: self.body(body)?,
                else_body: self.body(orelse)?,
            },
            PyStmtKind::With { context, target, body } => {
                if let Some(t) = target {
                    return Err(ParseError::syntax("this `with` binds no name", t.span));
                }
                let (name, args, keywords) = call_parts(context).ok_or_else(|| {
                    ParseError::syntax("expected `with T.block(\"name\"):` or `with T.init():`", context.span)
                })?;
                match name.as_str() {
                    "T.block" | "T.sblock" => {
                        StmtKind::Block(Box::new(self.block(args, keywords, body, context.span)?))
                    }
                    "T.init" => {
                        let Some(parts) = block.as_mut() else {
                            return Err(ParseError::syntax("`T.init()` belongs directly inside a block", context.span));
                        };
                        if parts.init.is_some() {
                            return Err(ParseError::syntax("a block has one `T.init()`", context.span));
                        }
                        parts.init = Some(self.body(body)?);
                        return Ok(None);
                    }
                    _ => {
                        return Err(ParseError::syntax(
                            "expected `with T.block(\"name\"):` or `with T.init():`",
                            context.span,
                        ))
                    }
                }
            }
            PyStmtKind::Assign { target, value } => return self.assign(target, None, value, span, block),
            PyStmtKind::AnnAssign { target, annotation, value: Some(value) } => {
                return self.assign(target, Some(annotation), value, span, block)
            }
            PyStmtKind::AnnAssign { value: None, .. } => {
                return Err(ParseError::syntax("an annotated name needs a value", span))
            }
            PyStmtKind::AugAssign { target, op, value } => {
                let PyExprKind::Subscript { .. } = &target.kind else {
                    return Err(ParseError::syntax("augmented assignment works on buffer elements: `A[i] += x`", span));
                };
                let sum = PyExpr {
                    kind: PyExprKind::Binary {
                        op: *op,
                        left: Box::new(target.clone()),
                        right: Box::new(value.clone()),
                    },
                    span,
                };
                return self.assign(target, None, &sum, span, block);
            }
            PyStmtKind::Expr(e) => {
                if matches!(e.kind, PyExprKind::Str(_)) {
                    return Ok(None);
                }
                let Some((name, args, keywords)) = call_parts(e) else {
                    return Err(ParseError::syntax("this expression statement has no effect", span));
                };
                match name.as_str() {
                    "T.reads" | "T.writes" | "T.where" => {
                        if block.is_none() {
                            return Err(ParseError::syntax(format!("`{name}` belongs directly inside a block"), span));
                        }
                        if let Some(k) = keywords.first() {
                            return Err(ParseError::syntax(
                                format!("`{name}` takes no keyword arguments"),
                                k.name_span,
                            ));
                        }
                        if name == "T.where" {
                            let [c] = args else {
                                return Err(ParseError::syntax("`T.where` takes one condition", span));
                            };
                            let c = self.expr(c)?;
                            if let Some(p) = block.as_mut() {
                                p.predicate = Some(c);
                            }
                            return Ok(None);
                        }
                        let items: Vec<&PyExpr> = match args {
                            [PyExpr { kind: PyExprKind::List(items) | PyExprKind::Tuple(items), .. }] => {
                                items.iter().collect()
                            }
                            _ => args.iter().collect(),
                        };
                        let regions = items.into_iter().map(|it| self.region(it)).collect::<ParseResult<Vec<_>>>()?;
                        if let Some(p) = block.as_mut() {
                            if name == "T.reads" { &mut p.reads } else { &mut p.writes }.extend(regions);
                        }
                        return Ok(None);
                    }
                    "T.evaluate" => {
                        let [x] = args else {
                            return Err(ParseError::syntax("`T.evaluate` takes one expression", span));
                        };
                        StmtKind::Evaluate(self.expr(x)?)
                    }
                    _ => return Err(ParseError::syntax(format!("`{name}(...)` is not a TIR statement"), span)),
                }
            }
            PyStmtKind::Pass => return Ok(None),
            PyStmtKind::Return(_) => {
                return Err(ParseError::syntax(
                    "a TIR function writes its outputs to buffers; `return` is not supported",
                    span,
                ))
            }
            PyStmtKind::FunctionDef { .. } | PyStmtKind::ClassDef { .. } | PyStmtKind::Import { .. } => {
                return Err(ParseError::syntax("this statement cannot appear in a TIR function", span))
            }
        };
        Ok(Some(Stmt { kind, span }))
    }

    fn assign(
        &mut self,
        target: &PyExpr,
        ann: Option<&PyExpr>,
        value: &PyExpr,
        span: Span,
        block: &mut Option<BlockParts>,
    ) -> ParseResult<Option<Stmt>> {
        // Block axes: `vi = T.axis.spatial(dom, i)`, `vi, vj = T.axis.remap("SS", [i, j])`.
        if let Some((name, args, keywords)) = call_parts(value) {
            if let Some(axis) = name.strip_prefix("T.axis.") {
                let Some(parts) = block.as_mut() else {
                    return Err(ParseError::syntax("block axes are declared directly inside a block", span));
                };
                let mut new = self.axes(axis, target, args, keywords, value.span)?;
                for iv in &new {
                    self.ctx.scopes.define(iv.var.name(), Entity::Shape(iv.var.clone()));
                }
                parts.iter_vars.append(&mut new);
                return Ok(None);
            }
        }
        match &target.kind {
            PyExprKind::Subscript { value: buf, index } => {
                let buffer = self.buffer_ref(buf)?;
                let indices = self.indices(index)?;
                let value = self.coerced(value, buffer.dtype())?;
                Ok(Some(Stmt { kind: StmtKind::BufferStore { buffer, indices, value }, span }))
            }
            PyExprKind::Name(n) => {
                if let Some((call, args, keywords)) = call_parts(value) {
                    if call == "T.alloc_buffer" {
                        let buf = self.buffer_decl(n, target.span, "T.alloc_buffer", args, keywords, false)?;
                        self.ctx.scopes.define(n, Entity::Buffer(buf.clone()));
                        return Ok(Some(Stmt { kind: StmtKind::AllocBuffer(buf), span }));
                    }
                    if call == "T.match_buffer" {
                        return Err(ParseError::syntax(
                            "`T.match_buffer` belongs at the top of the function body",
                            span,
                        ));
                    }
                    if let Some(dtype) = shape_var_decl(value) {
                        {
                            // `n = T.int64()`: names or declares a shape variable.
                            match self.ctx.scopes.lookup(n) {
                                Some(Entity::Shape(v)) if v.dtype() == dtype => {}
                                Some(_) => {
                                    return Err(ParseError::name(format!("`{n}` is already defined"), target.span))
                                }
                                None => self.ctx.scopes.define(n, Entity::Shape(PrimVar::new(n.clone(), dtype))),
                            }
                            return Ok(None);
                        }
                    }
                }
                let value = match ann {
                    Some(a) => {
                        let dtype = match a.dotted().as_deref() {
                            Some(["T", d]) => t_dtype(d),
                            _ => None,
                        }
                        .ok_or_else(|| ParseError::syntax("expected a scalar type like `T.float32`", a.span))?;
                        let v = self.coerced(value, dtype)?;
                        if v.dtype() != dtype {
                            return Err(ParseError::syntax(
                                format!("the value has dtype {}, not the annotated {dtype}; use T.Cast", v.dtype()),
                                value.span,
                            ));
                        }
                        v
                    }
                    None => self.expr(value)?,
                };
                let var = PrimVar::new(n.clone(), value.dtype());
                self.ctx.scopes.define(n, Entity::Shape(var.clone()));
                Ok(Some(Stmt { kind: StmtKind::Let { var, value }, span }))
            }
            _ => Err(ParseError::syntax(format!("cannot assign to {}", target.describe()), target.span)),
        }
    }

    fn axes(
        &mut self,
        axis: &str,
        target: &PyExpr,
        args: &[PyExpr],
        keywords: &[Keyword],
        span: Span,
    ) -> ParseResult<Vec<IterVar>> {
        if let Some(k) = keywords.first() {
            return Err(ParseError::syntax("block axes take no keyword arguments", k.name_span));
        }
        let kind_of = |c: &str| match c {
            "spatial" | "S" => Some(IterKind::Spatial),
            "reduce" | "R" => Some(IterKind::Reduce),
            _ => None,
        };
        if axis == "remap" {
            let [kinds, vars] = args else {
                return Err(ParseError::syntax("`T.axis.remap(\"SR\", [i, k])` takes kinds and loop variables", span));
            };
            let kinds = expect_str(kinds, "axis kinds like \"SR\"")?;
            let (PyExprKind::List(vars) | PyExprKind::Tuple(vars)) = &vars.kind else {
                return Err(ParseError::syntax("expected a list of loop variables", vars.span));
            };
            let names: Vec<&PyExpr> = match &target.kind {
                PyExprKind::Tuple(t) => t.iter().collect(),
                _ => vec![target],
            };
            if kinds.chars().count() != vars.len() || names.len() != vars.len() {
                return Err(ParseError::syntax(
                    "`T.axis.remap` needs one kind letter and one name per loop variable",
                    span,
                ));
            }
            let mut out = Vec::new();
            for ((c, v), n) in kinds.chars().zip(vars).zip(names) {
                let kind = kind_of(&c.to_string())
                    .ok_or_else(|| ParseError::syntax(format!("axis kind `{c}` is not S or R"), span))?;
                let binding = self.expr(v)?;
                let TirExprKind::Var(lv) = &*binding.kind else {
                    return Err(ParseError::syntax("`T.axis.remap` takes loop variables", v.span));
                };
                let Some((begin, end)) = self.loops.get(&lv.id()).cloned() else {
                    return Err(ParseError::syntax(
                        format!("`{}` is not an enclosing loop variable", lv.name()),
                        v.span,
                    ));
                };
                let PyExprKind::Name(name) = &n.kind else {
                    return Err(ParseError::syntax("expected a name", n.span));
                };
                out.push(IterVar { var: PrimVar::new(name.clone(), binding.dtype()), kind, begin, end, binding });
            }
            return Ok(out);
        }
        let kind = kind_of(axis)
            .ok_or_else(|| ParseError::syntax(format!("`T.axis.{axis}` is not spatial, reduce or remap"), span))?;
        let PyExprKind::Name(name) = &target.kind else {
            return Err(ParseError::syntax("expected a name for the block axis", target.span));
        };
        let [dom, binding] = args else {
            return Err(ParseError::syntax("`T.axis.spatial(dom, binding)` takes a domain and a binding", span));
        };
        let binding = self.expr(binding)?;
        let dt = binding.dtype();
        let (begin, end) = match &dom.kind {
            PyExprKind::Tuple(be) if be.len() == 2 => (self.coerced(&be[0], dt)?, self.coerced(&be[1], dt)?),
            _ => (literal(Literal::Int(0), dt, dom.span)?, self.coerced(dom, dt)?),
        };
        Ok(vec![IterVar { var: PrimVar::new(name.clone(), dt), kind, begin, end, binding }])
    }

    fn block(&mut self, args: &[PyExpr], keywords: &[Keyword], body: &[PyStmt], span: Span) -> ParseResult<Block> {
        let a = bind_args("T.block", span, &["name"], args, keywords)?;
        let name = match a[0] {
            Some(n) => expect_str(n, "the block's name")?,
            None => String::new(),
        };
        let mut parts = Some(BlockParts::default());
        let refs: Vec<&PyStmt> = body.iter().collect();
        let stmts = self.stmts(&refs, &mut parts)?;
        let p = parts.unwrap_or_default();
        Ok(Block {
            name,
            iter_vars: p.iter_vars,
            reads: p.reads,
            writes: p.writes,
            predicate: p.predicate,
            init: p.init,
            body: stmts,
        })
    }

    fn for_loop(&mut self, target: &PyExpr, iter: &PyExpr, body: &[PyStmt], span: Span) -> ParseResult<Stmt> {
        let Some((name, args, keywords)) = call_parts(iter) else {
            return Err(ParseError::syntax("expected `range(...)`, `T.serial(...)` or `T.grid(...)`", iter.span));
        };
        if let Some(k) = keywords.first() {
            return Err(ParseError::syntax("loop ranges take no keyword arguments", k.name_span));
        }
        let targets: Vec<&PyExpr> = match &target.kind {
            PyExprKind::Tuple(t) => t.iter().collect(),
            _ => vec![target],
        };
        let mut ranges = Vec::new();
        let kind = match name.as_str() {
            "T.grid" => {
                if args.len() != targets.len() || args.is_empty() {
                    return Err(ParseError::syntax("`T.grid` needs one extent per loop variable", iter.span));
                }
                for a in args {
                    let end = self.expr(a)?;
                    ranges.push((literal(Literal::Int(0), end.dtype(), a.span)?, end));
                }
                ForKind::Serial
            }
            "range" | "T.serial" | "T.parallel" | "T.unroll" | "T.vectorized" => {
                if targets.len() != 1 {
                    return Err(ParseError::syntax("this loop has one variable", target.span));
                }
                let (begin, end) = match args {
                    [e] => {
                        let end = self.expr(e)?;
                        (literal(Literal::Int(0), end.dtype(), e.span)?, end)
                    }
                    [b, e] => self.pair(b, e)?,
                    _ => {
                        return Err(ParseError::syntax(
                            format!("`{name}` takes an extent or a begin and an end"),
                            iter.span,
                        ))
                    }
                };
                ranges.push((begin, end));
                match name.as_str() {
                    "T.parallel" => ForKind::Parallel,
                    "T.unroll" => ForKind::Unroll,
                    "T.vectorized" => ForKind::Vectorized,
                    _ => ForKind::Serial,
                }
            }
            _ => return Err(ParseError::syntax(format!("`{name}` is not a loop range"), iter.span)),
        };
        self.ctx.scopes.push();
        let r = (|| {
            let mut vars = Vec::new();
            for (t, (b, e)) in targets.iter().zip(&ranges) {
                let PyExprKind::Name(n) = &t.kind else {
                    return Err(ParseError::syntax("a loop variable is a name", t.span));
                };
                let v = PrimVar::new(n.clone(), e.dtype());
                self.ctx.scopes.define(n, Entity::Shape(v.clone()));
                self.loops.insert(v.id(), (b.clone(), e.clone()));
                vars.push(v);
            }
            let mut inner = self.body(body)?;
            for (v, (b, e)) in vars.into_iter().zip(ranges).rev() {
                let s = Stmt { kind: StmtKind::For { var: v, begin: b, end: e, kind, body: inner }, span };
                inner = vec![s];
            }
            Ok(inner.pop().expect("at least one loop"))
        })();
        self.ctx.scopes.pop();
        r
    }

    /// Two expressions where a bare literal takes the other's dtype.
    fn pair(&mut self, a: &PyExpr, b: &PyExpr) -> ParseResult<(TirExpr, TirExpr)> {
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
    fn coerced(&mut self, e: &PyExpr, dtype: DataType) -> ParseResult<TirExpr> {
        if !is_bare_literal(e) {
            return self.expr(e);
        }
        let l = bare(e)?;
        let d = coerced_literal_dtype(matches!(l, Literal::Float(_)), dtype)
            .unwrap_or(if matches!(l, Literal::Float(_)) { TIR_FLOAT } else { TIR_INT });
        literal(l, d, e.span)
    }

    fn buffer_ref(&mut self, e: &PyExpr) -> ParseResult<Buffer> {
        match &e.kind {
            PyExprKind::Name(n) => match self.ctx.scopes.lookup(n) {
                Some(Entity::Buffer(b)) => Ok(b.clone()),
                Some(_) => Err(ParseError::name(format!("`{n}` is not a buffer"), e.span)),
                None => Err(self.ctx.unknown_name(n, e.span)),
            },
            _ => Err(ParseError::syntax("expected a buffer name", e.span)),
        }
    }

    fn indices(&mut self, index: &PyExpr) -> ParseResult<Vec<TirExpr>> {
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

    /// `A[i, 0:4]` in `T.reads` / `T.writes`.
    fn region(&mut self, e: &PyExpr) -> ParseResult<BufferRegion> {
        let (buffer, index) = match &e.kind {
            PyExprKind::Subscript { value, index } => (self.buffer_ref(value)?, Some(&**index)),
            PyExprKind::Name(_) => (self.buffer_ref(e)?, None),
            _ => return Err(ParseError::syntax("expected a buffer region like `A[i, 0:4]`", e.span)),
        };
        let mut region = Vec::new();
        if let Some(index) = index {
            let items: Vec<&PyExpr> = match &index.kind {
                PyExprKind::Tuple(t) => t.iter().collect(),
                _ => vec![index],
            };
            for it in items {
                region.push(match &it.kind {
                    PyExprKind::Slice { lower: Some(l), upper: Some(u), step: None } => {
                        let (begin, end) = self.pair(l, u)?;
                        RegionDim::Range { begin, end }
                    }
                    PyExprKind::Slice { .. } => {
                        return Err(ParseError::syntax("a region slice is `begin:end`", it.span))
                    }
                    _ => RegionDim::Point(self.expr(it)?),
                });
            }
        }
        Ok(BufferRegion { buffer, region, span: e.span })
    }

    fn expr(&mut self, e: &PyExpr) -> ParseResult<TirExpr> {
        let span = e.span;
        let kind = match &e.kind {
            PyExprKind::Int(_) | PyExprKind::Float(_) => {
                let l = bare(e)?;
                return literal(l, if matches!(l, Literal::Float(_)) { TIR_FLOAT } else { TIR_INT }, span);
            }
            PyExprKind::Bool(b) => TirExprKind::IntImm { value: *b as i64, dtype: DataType::bool() },
            PyExprKind::Name(n) => match self.ctx.scopes.lookup(n) {
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
                UnaryOp::Invert => return Err(ParseError::syntax("`~` is not supported in TIR here", span)),
            },
            PyExprKind::Binary { op, left, right } => {
                let op = match op {
                    BinOp::Add => PrimBinOp::Add,
                    BinOp::Sub => PrimBinOp::Sub,
                    BinOp::Mul => PrimBinOp::Mul,
                    BinOp::Div => PrimBinOp::Div,
                    BinOp::FloorDiv => PrimBinOp::FloorDiv,
                    BinOp::Mod => PrimBinOp::FloorMod,
                    _ => return Err(ParseError::syntax("this operator is not supported in TIR here", span)),
                };
                let (a, b) = self.pair(left, right)?;
                TirExprKind::Binary { op, a, b }
            }
            PyExprKind::BoolOp { op, left, right } => {
                let (a, b) = self.pair(left, right)?;
                TirExprKind::Binary { op: if *op == BoolOp::And { PrimBinOp::And } else { PrimBinOp::Or }, a, b }
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
                let (a, b) = self.pair(left, right)?;
                TirExprKind::Binary { op, a, b }
            }
            PyExprKind::Call { func, args, keywords } => return self.call(func, args, keywords, span),
            _ => return Err(ParseError::syntax(format!("{} is not a TIR expression", e.describe()), span)),
        };
        Ok(TirExpr::new(kind, span))
    }

    fn call(&mut self, func: &PyExpr, args: &[PyExpr], keywords: &[Keyword], span: Span) -> ParseResult<TirExpr> {
        let name = func.dotted_name().unwrap_or_default();
        let Some(t) = name.strip_prefix("T.") else {
            return Err(ParseError::syntax(format!("`{name}` is not a TIR function"), func.span));
        };
        if let Some(k) = keywords.first() {
            return Err(ParseError::syntax(format!("`{name}` takes no keyword arguments"), k.name_span));
        }
        let arity = |n: usize| -> ParseResult<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(ParseError::syntax(format!("`{name}` takes {n} argument(s), {} given", args.len()), span))
            }
        };
        let binop = match t {
            "min" => Some(PrimBinOp::Min),
            "max" => Some(PrimBinOp::Max),
            "truncdiv" => Some(PrimBinOp::Div),
            "truncmod" => Some(PrimBinOp::Mod),
            "floordiv" => Some(PrimBinOp::FloorDiv),
            "floormod" => Some(PrimBinOp::FloorMod),
            _ => None,
        };
        let kind = if let Some(op) = binop {
            arity(2)?;
            let (a, b) = self.pair(&args[0], &args[1])?;
            TirExprKind::Binary { op, a, b }
        } else if t == "Select" {
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
                _ => args.iter().map(|a| self.expr(a)).collect::<ParseResult<_>>()?,
            };
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
                .with_note(format!("known: T.min, T.max, T.truncdiv, T.truncmod, T.floordiv, T.floormod, T.Select, T.Cast, T.<dtype>(...), T.{}", known.join(", T."))));
        };
        Ok(TirExpr::new(kind, span))
    }
}

fn collect_names(e: &PyExpr, out: &mut Vec<(String, Span)>) {
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

trait DefaultParts<'a> {
    fn unwrap_or_default_parts(self) -> (String, &'a [PyExpr], &'a [Keyword]);
}
impl<'a> DefaultParts<'a> for Option<(String, &'a [PyExpr], &'a [Keyword])> {
    fn unwrap_or_default_parts(self) -> (String, &'a [PyExpr], &'a [Keyword]) {
        self.unwrap_or((String::new(), &[], &[]))
    }
}
