//! TIR statements: loops, blocks and their axes, regions, stores, lets.

use super::{call_parts, literal, shape_var_decl, BlockParts, Tir};
use crate::grammar::tir::{Block, BufferRegion, ForKind, IterKind, IterVar, RegionDim, Stmt, StmtKind, TirExprKind};
use crate::grammar::PrimVar;
use crate::span::Span;
use crate::text::elab::attrs::{bind_args, expect_str};
use crate::text::elab::prim::{t_dtype, Literal};
use crate::text::elab::Entity;
use crate::text::error::{ParseError, ParseResult};
use crate::text::py_ast::{Keyword, PyExpr, PyExprKind, PyStmt, PyStmtKind};

impl Tir {
    /// Statements in a scope of their own.
    pub(super) fn stmts(&self, stmts: &[&PyStmt], block: &mut Option<BlockParts>) -> ParseResult<Vec<Stmt>> {
        let mut inner = self.enter();
        let mut out = Vec::new();
        for s in stmts {
            if let Some(st) = inner.stmt(s, block)? {
                out.push(st);
            }
        }
        Ok(out)
    }

    pub(super) fn body(&self, stmts: &[PyStmt]) -> ParseResult<Vec<Stmt>> {
        let refs: Vec<&PyStmt> = stmts.iter().collect();
        self.stmts(&refs, &mut None)
    }

    pub(super) fn stmt(&mut self, s: &PyStmt, block: &mut Option<BlockParts>) -> ParseResult<Option<Stmt>> {
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
                    "T.block_attr" | "T.sblock_attr" => {
                        let (Some(p), [PyExpr { kind: PyExprKind::Dict(items), .. }], []) =
                            (block.as_mut(), args, keywords)
                        else {
                            return Err(ParseError::syntax(
                                "`T.block_attr` takes one dict, directly inside a block",
                                span,
                            ));
                        };
                        for (k, v) in crate::text::elab::attrs::attr_dict(items)? {
                            if p.annotations.insert(k.clone(), v).is_some() {
                                return Err(ParseError::syntax(format!("block attribute `{k}` is given twice"), span));
                            }
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

    pub(super) fn assign(
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
                    self.ctx.define(iv.var.name(), Entity::Shape(iv.var.clone()));
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
                    // `T.sblock_alloc_buffer`: TVM 0.27's name inside a block; the buffer
                    // lives as long as the block either way.
                    if call == "T.alloc_buffer" || call == "T.sblock_alloc_buffer" {
                        let buf = self.buffer_decl(n, target.span, "T.alloc_buffer", args, keywords, false)?;
                        self.ctx.define(n, Entity::Buffer(buf.clone()));
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
                            match self.ctx.lookup(n) {
                                Some(Entity::Shape(v)) if v.dtype() == dtype => {}
                                Some(_) => {
                                    return Err(ParseError::name(format!("`{n}` is already defined"), target.span))
                                }
                                None => self.ctx.define(n, Entity::Shape(PrimVar::new(n.clone(), dtype))),
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
                self.ctx.define(n, Entity::Shape(var.clone()));
                Ok(Some(Stmt { kind: StmtKind::Let { var, value }, span }))
            }
            _ => Err(ParseError::syntax(format!("cannot assign to {}", target.describe()), target.span)),
        }
    }

    pub(super) fn axes(
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

    pub(super) fn block(
        &mut self,
        args: &[PyExpr],
        keywords: &[Keyword],
        body: &[PyStmt],
        span: Span,
    ) -> ParseResult<Block> {
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
            annotations: p.annotations,
        })
    }

    pub(super) fn for_loop(
        &mut self,
        target: &PyExpr,
        iter: &PyExpr,
        body: &[PyStmt],
        span: Span,
    ) -> ParseResult<Stmt> {
        let Some((name, args, keywords)) = call_parts(iter) else {
            return Err(ParseError::syntax("expected `range(...)`, `T.serial(...)` or `T.grid(...)`", iter.span));
        };
        // `T.thread_binding(n, thread="threadIdx.x")` is the one range with a keyword.
        let mut thread = None;
        for k in keywords {
            if name != "T.thread_binding" || k.name != "thread" || thread.is_some() {
                return Err(ParseError::syntax(
                    "loop ranges take no keyword arguments (but `thread=` on `T.thread_binding`)",
                    k.name_span,
                ));
            }
            let tag = expect_str(&k.value, "a thread axis")?;
            let Some(tag) = crate::grammar::tir::THREAD_TAGS.iter().copied().find(|t| *t == tag) else {
                return Err(ParseError::syntax(format!("`{tag}` is not a thread axis"), k.value.span)
                    .with_note(format!("thread axes: {}", crate::grammar::tir::THREAD_TAGS.join(", "))));
            };
            thread = Some(tag);
        }
        if name == "T.thread_binding" && thread.is_none() {
            return Err(ParseError::syntax("`T.thread_binding` needs `thread=\"...\"`", iter.span));
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
            "range" | "T.serial" | "T.parallel" | "T.unroll" | "T.vectorized" | "T.thread_binding" => {
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
                    "T.thread_binding" => ForKind::ThreadBinding(thread.unwrap_or("blockIdx.x")),
                    _ => ForKind::Serial,
                }
            }
            _ => return Err(ParseError::syntax(format!("`{name}` is not a loop range"), iter.span)),
        };
        // The loop variables are in a scope of their own, around the body's.
        let mut scope = self.enter();
        let mut vars = Vec::new();
        for (t, (b, e)) in targets.iter().zip(&ranges) {
            let PyExprKind::Name(n) = &t.kind else {
                return Err(ParseError::syntax("a loop variable is a name", t.span));
            };
            let v = PrimVar::new(n.clone(), e.dtype());
            scope.ctx.define(n, Entity::Shape(v.clone()));
            scope.loops.insert(v.id(), (b.clone(), e.clone()));
            vars.push(v);
        }
        let mut inner = scope.body(body)?;
        for (v, (b, e)) in vars.into_iter().zip(ranges).rev() {
            let s = Stmt { kind: StmtKind::For { var: v, begin: b, end: e, kind, body: inner }, span };
            inner = vec![s];
        }
        Ok(inner.pop().expect("at least one loop"))
    }

    /// `A[i, 0:4]` in `T.reads` / `T.writes`.
    pub(super) fn region(&mut self, e: &PyExpr) -> ParseResult<BufferRegion> {
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
}
