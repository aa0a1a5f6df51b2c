#![allow(dead_code, unused_imports)]
//! Elaboration: gives the Python-syntax tree its Relax meaning, resolving names to
//! variables (by identity), shape variables, globals and TIR buffers.
//!
//! Naming follows TVMScript: a name refers to its most recent binding in the
//! innermost enclosing scope; `if` branches and dataflow blocks open scopes; the
//! outputs of a dataflow block (`R.output(...)`) stay visible after it.

mod attrs;
mod constant;
pub(crate) mod prim;
mod relax_expr;
mod relax_fn;
pub(crate) mod sinfo;
pub(crate) mod tir;

use crate::grammar::tir::Buffer;
use crate::grammar::{BaseFunc, GlobalVar, IRModule, PrimVar, Var};
use crate::span::Span;
use crate::text::error::{ParseError, ParseResult};
use crate::text::py_ast::{PyExpr, PyExprKind, PyStmt, PyStmtKind};
use std::collections::HashMap;
use std::rc::Rc;

/// What a name can refer to.
#[derive(Clone, Debug)]
pub(crate) enum Entity {
    Relax(Var),
    Shape(PrimVar),
    Global(GlobalVar),
    Buffer(Buffer),
    /// The module's class name or `cls`: only `Name.f` is meaningful.
    Module,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GlobalKind {
    Relax,
    Tir,
}

/// Scoped name resolution shared by the Relax and TIR elaborators.
pub(crate) struct Scopes {
    pub(crate) frames: Vec<HashMap<String, Entity>>,
}

impl Scopes {
    fn new(base: HashMap<String, Entity>) -> Scopes {
        Scopes { frames: vec![base] }
    }
    pub(crate) fn push(&mut self) {
        self.frames.push(HashMap::new());
    }
    pub(crate) fn pop(&mut self) -> HashMap<String, Entity> {
        self.frames.pop().unwrap_or_default()
    }
    pub(crate) fn lookup(&self, name: &str) -> Option<&Entity> {
        self.frames.iter().rev().find_map(|f| f.get(name))
    }
    pub(crate) fn define(&mut self, name: &str, e: Entity) {
        if let Some(f) = self.frames.last_mut() {
            f.insert(name.to_string(), e);
        }
    }
    /// Every name visible now (for "did you mean" hints).
    fn visible_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.frames.iter().flat_map(|f| f.keys().cloned()).collect();
        v.sort();
        v.dedup();
        v
    }
}

/// Names of one Relax function body, for Python's rule that a name assigned anywhere
/// in a function is that function's own: a use not in scope refers to the binding of
/// that name later in the body (or, failing that, the last one before it, whose scope
/// has closed). Such programs break WF-1 or WF-3, and the checker says so with the
/// rule; the parser only reports names no binding of the function gives.
#[derive(Default)]
pub(crate) struct FnFrame {
    /// Every name the body binds (not counting nested functions' bodies).
    names: std::collections::HashSet<String>,
    /// Uses waiting for a later binding of their name, with the scope depth of the use.
    pending: HashMap<String, Vec<(Var, usize)>>,
    /// Provisional variable id -> the variable of the binding it turned out to mean.
    subst: HashMap<u64, Var>,
    /// Every provisional variable handed out, by id, with the scope depth of its use.
    provisional: HashMap<u64, (Var, usize)>,
    last_bound: HashMap<String, Var>,
}

/// State shared while elaborating one module.
pub(crate) struct Ctx {
    pub(crate) globals: HashMap<String, GlobalKind>,
    pub(crate) scopes: Scopes,
    pub(crate) fn_frames: Vec<FnFrame>,
}

impl Ctx {
    /// Starts a function body that binds `names`.
    pub(crate) fn enter_function(&mut self, names: std::collections::HashSet<String>) {
        self.fn_frames.push(FnFrame { names, ..FnFrame::default() });
    }

    /// Ends the innermost function body: the substitution that gives each use not in
    /// scope the variable its name is bound to.
    pub(crate) fn leave_function(&mut self) -> HashMap<u64, Var> {
        let Some(mut f) = self.fn_frames.pop() else { return HashMap::new() };
        for (name, provisionals) in std::mem::take(&mut f.pending) {
            if let Some(v) = f.last_bound.get(&name) {
                for (p, _) in provisionals {
                    f.subst.insert(p.id(), v.clone());
                }
            }
        }
        f.subst
    }

    /// The variable a name not in scope refers to, if a binding of an enclosing
    /// function's body gives that name.
    pub(crate) fn forward_ref(&mut self, name: &str, span: Span) -> Option<Var> {
        let depth = self.scopes.frames.len();
        let frame = self.fn_frames.iter_mut().rev().find(|f| f.names.contains(name))?;
        let waiting = frame.pending.entry(name.to_string()).or_default();
        if let Some((v, _)) = waiting.iter().find(|(_, d)| *d == depth) {
            return Some(v.clone());
        }
        let v = Var::new(name, None, span);
        frame.provisional.insert(v.id(), (v.clone(), depth));
        waiting.push((v.clone(), depth));
        Some(v)
    }

    /// Records that a binding of the current function body gives `name` the variable `var`.
    pub(crate) fn bound(&mut self, name: &str, var: &Var) {
        // A use waits for a binding in its own scope or an enclosing one, not for one
        // inside a nested scope (an `if` branch's) that it could never see.
        let depth = self.scopes.frames.len();
        if let Some(f) = self.fn_frames.last_mut() {
            if let Some(waiting) = f.pending.get_mut(name) {
                waiting.retain(|(p, d)| {
                    if *d >= depth {
                        f.subst.insert(p.id(), var.clone());
                        false
                    } else {
                        true
                    }
                });
            }
            f.last_bound.insert(name.to_string(), var.clone());
        }
    }

    /// Takes back a binding of `name` that turned out not to be one (the last
    /// assignment of an `if` branch, whose value becomes the branch's body): the uses
    /// it resolved wait again for the next binding of the name.
    pub(crate) fn unbound(&mut self, name: &str, var: &Var) {
        if let Some(f) = self.fn_frames.last_mut() {
            let resolved: Vec<u64> = f.subst.iter().filter(|(_, v)| v.id() == var.id()).map(|(k, _)| *k).collect();
            for k in resolved {
                f.subst.remove(&k);
                if let Some(p) = f.provisional.get(&k) {
                    f.pending.entry(name.to_string()).or_default().push(p.clone());
                }
            }
            if f.last_bound.get(name).is_some_and(|v| v.id() == var.id()) {
                f.last_bound.remove(name);
            }
        }
    }

    pub(crate) fn unknown_name(&self, name: &str, span: Span) -> ParseError {
        let mut err = ParseError::name(format!("unknown name `{name}`"), span).with_label("not defined here");
        if let Some(best) = closest(name, &self.scopes.visible_names()) {
            err = err.with_note(format!("help: a name with a similar spelling exists: `{best}`"));
        }
        err
    }
}

/// The visible name closest in spelling to `name`, if any is close.
fn closest(name: &str, candidates: &[String]) -> Option<String> {
    fn dist(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                cur.push((prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
            }
            prev = cur;
        }
        prev[b.len()]
    }
    candidates
        .iter()
        .filter(|c| c.as_str() != "cls")
        .map(|c| (dist(name, c), c))
        .filter(|(d, c)| *d <= 2 && *d < c.chars().count().max(name.chars().count()))
        .min()
        .map(|(_, c)| c.clone())
}

/// The parts of a `def` statement.
pub(crate) struct FnDef<'a> {
    pub name: &'a str,
    pub name_span: Span,
    pub decorators: &'a [PyExpr],
    pub params: &'a [crate::text::py_ast::Param],
    pub returns: Option<&'a PyExpr>,
    pub body: &'a [PyStmt],
    pub span: Span,
}

impl<'a> FnDef<'a> {
    pub(crate) fn of(s: &'a PyStmt) -> Option<FnDef<'a>> {
        match &s.kind {
            PyStmtKind::FunctionDef { name, name_span, decorators, params, returns, body } => Some(FnDef {
                name,
                name_span: *name_span,
                decorators,
                params,
                returns: returns.as_ref(),
                body,
                span: s.span,
            }),
            _ => None,
        }
    }

    /// The boolean options of the decorator named by one of `paths` (`@R.function(pure=False)`),
    /// which must be the only decorator; options outside `allowed` are errors.
    pub(crate) fn decorator_options(&self, paths: &[&str], allowed: &[&str]) -> ParseResult<HashMap<String, bool>> {
        let shown = paths[0];
        let Some(d) = self.decorators.iter().find(|d| decorator_is(d, paths)) else {
            return Err(ParseError::syntax(format!("this function must be decorated with `@{shown}`"), self.name_span));
        };
        if let Some(other) = self.decorators.iter().find(|x| !std::ptr::eq(*x, d)) {
            return Err(ParseError::syntax("unexpected decorator", other.span));
        }
        let mut out = HashMap::new();
        if let PyExprKind::Call { args, keywords, .. } = &d.kind {
            if let Some(a) = args.first() {
                return Err(ParseError::syntax(format!("`@{shown}` takes keyword arguments only"), a.span));
            }
            for k in keywords {
                if !allowed.contains(&k.name.as_str()) {
                    return Err(ParseError::syntax(format!("`@{shown}` has no option `{}`", k.name), k.name_span)
                        .with_note(format!("its options are: {}", allowed.join(", "))));
                }
                out.insert(k.name.clone(), attrs::expect_bool(&k.value, &format!("`{}`", k.name))?);
            }
        }
        Ok(out)
    }
}

/// Is this expression a decorator naming `path` (`R.function` or `R.function(...)`)?
pub(crate) fn decorator_is(d: &PyExpr, paths: &[&str]) -> bool {
    let target = match &d.kind {
        PyExprKind::Call { func, .. } => func,
        _ => d,
    };
    target.dotted_name().is_some_and(|n| paths.contains(&n.as_str()))
}

const RELAX_FUNCTION: &[&str] = &["R.function", "relax.function", "tvm.script.relax.function"];
const PRIM_FUNC: &[&str] = &["T.prim_func", "tir.prim_func", "tvm.script.tir.prim_func"];
const IR_MODULE: &[&str] = &["I.ir_module", "tvm.script.ir_module", "ir_module"];

fn function_kind(decorators: &[PyExpr], name_span: Span) -> ParseResult<GlobalKind> {
    if decorators.iter().any(|d| decorator_is(d, RELAX_FUNCTION)) {
        Ok(GlobalKind::Relax)
    } else if decorators.iter().any(|d| decorator_is(d, PRIM_FUNC)) {
        Ok(GlobalKind::Tir)
    } else {
        Err(ParseError::syntax("a function here must be decorated with `@R.function` or `@T.prim_func`", name_span))
    }
}

fn is_docstring(s: &PyStmt) -> bool {
    matches!(&s.kind, PyStmtKind::Expr(PyExpr { kind: PyExprKind::Str(_), .. }))
}

/// Elaborates a parsed file: one `@I.ir_module class`, or top-level functions
/// (a module holding them).
pub(crate) fn elaborate_file(stmts: &[PyStmt]) -> ParseResult<IRModule> {
    let mut class: Option<(&str, Span, &[PyStmt], Span)> = None;
    let mut funcs: Vec<&PyStmt> = Vec::new();
    for s in stmts {
        match &s.kind {
            PyStmtKind::Import { .. } | PyStmtKind::Pass => {}
            _ if is_docstring(s) => {}
            PyStmtKind::ClassDef { name, name_span, decorators, body, .. } => {
                if !decorators.iter().any(|d| decorator_is(d, IR_MODULE)) {
                    return Err(ParseError::syntax("a module class must be decorated with `@I.ir_module`", *name_span));
                }
                if let Some((_, first, _, _)) = class {
                    return Err(ParseError::syntax("a file holds one module", *name_span)
                        .with_secondary(first, "the first module"));
                }
                class = Some((name, *name_span, body, s.span));
            }
            PyStmtKind::FunctionDef { .. } => funcs.push(s),
            _ => {
                return Err(ParseError::syntax(
                    "expected `@I.ir_module class ...` or a decorated function at the top level",
                    s.span,
                ))
            }
        }
    }
    match class {
        Some((name, name_span, body, span)) => {
            if let Some(f) = funcs.first() {
                return Err(ParseError::syntax("functions outside the module class", f.span)
                    .with_secondary(name_span, "the module"));
            }
            let mut members = Vec::new();
            for s in body {
                match &s.kind {
                    PyStmtKind::FunctionDef { .. } => members.push(s),
                    PyStmtKind::Pass => {}
                    _ if is_docstring(s) => {}
                    _ => return Err(ParseError::syntax("a module class holds only decorated functions", s.span)),
                }
            }
            elaborate_module(name, Some(name), &members, span)
        }
        None => {
            if funcs.is_empty() {
                return Err(ParseError::syntax(
                    "the file defines no module: expected `@I.ir_module class ...` or a decorated function",
                    Span::new(0, 0),
                ));
            }
            let span = funcs[0].span.to(funcs[funcs.len() - 1].span);
            elaborate_module("Module", None, &funcs, span)
        }
    }
}

fn elaborate_module(name: &str, class_name: Option<&str>, defs: &[&PyStmt], span: Span) -> ParseResult<IRModule> {
    // All globals are visible to each other (Variable Scoping, rule 1).
    let mut globals = HashMap::new();
    let mut base = HashMap::new();
    let mut first_def: HashMap<&str, Span> = HashMap::new();
    for d in defs {
        let PyStmtKind::FunctionDef { name, name_span, decorators, .. } = &d.kind else {
            continue;
        };
        if let Some(prev) = first_def.get(name.as_str()) {
            return Err(ParseError::name(format!("the module defines `{name}` twice"), *name_span)
                .with_secondary(*prev, "first defined here"));
        }
        first_def.insert(name, *name_span);
        globals.insert(name.clone(), function_kind(decorators, *name_span)?);
        base.insert(name.clone(), Entity::Global(GlobalVar::new(name.clone())));
    }
    base.insert("cls".to_string(), Entity::Module);
    if let Some(c) = class_name {
        base.insert(c.to_string(), Entity::Module);
    }
    let mut ctx = Ctx { globals, scopes: Scopes::new(base), fn_frames: Vec::new() };
    let mut functions = Vec::new();
    for d in defs {
        let PyStmtKind::FunctionDef { name, .. } = &d.kind else {
            continue;
        };
        let f = match ctx.globals[name.as_str()] {
            GlobalKind::Relax => BaseFunc::Relax(Rc::new(relax_fn::global_function(&mut ctx, d)?)),
            GlobalKind::Tir => BaseFunc::Tir(Rc::new(tir::prim_func(&mut ctx, d)?)),
        };
        functions.push((GlobalVar::new(name.clone()), f));
    }
    Ok(IRModule { name: name.to_string(), functions, span })
}

/// Elaborates a standalone expression against a module's globals (corpus `run:` lines).
pub(crate) fn elaborate_expr_in_module(module: &IRModule, e: &PyExpr) -> ParseResult<crate::grammar::Expr> {
    let mut globals = HashMap::new();
    let mut base = HashMap::new();
    for (gv, f) in &module.functions {
        let kind = match f {
            BaseFunc::Relax(_) => GlobalKind::Relax,
            BaseFunc::Tir(_) => GlobalKind::Tir,
        };
        globals.insert(gv.name.clone(), kind);
        base.insert(gv.name.clone(), Entity::Global(gv.clone()));
    }
    base.insert("cls".to_string(), Entity::Module);
    base.insert(module.name.clone(), Entity::Module);
    let mut ctx = Ctx { globals, scopes: Scopes::new(base), fn_frames: Vec::new() };
    ctx.scopes.push();
    relax_expr::standalone_expr(&mut ctx, e)
}

pub use sinfo::ndim_of_shape_var;

/// Elaborates standalone shape expressions (`oracle prove`): a free name is an `int64`
/// shape variable, the same one wherever the name recurs.
pub(crate) fn elaborate_prim_exprs(es: &[PyExpr]) -> ParseResult<Vec<crate::grammar::PrimExpr>> {
    let mut ctx = Ctx { globals: HashMap::new(), scopes: Scopes::new(HashMap::new()), fn_frames: Vec::new() };
    ctx.scopes.push();
    es.iter().map(|e| prim::prim_expr(&mut ctx, e, prim::NameMode::Declare)).collect()
}

/// Elaborates a standalone StructInfo (a corpus `expect-sinfo:` line): every free name
/// is a shape variable, except a name given as a tensor's shape (`R.Tensor(s, ...)`),
/// which is a shape-typed Relax variable.
pub(crate) fn elaborate_struct_info(e: &PyExpr) -> ParseResult<crate::grammar::StructInfo> {
    fn names(e: &PyExpr, shapes: &mut Vec<String>, relax: &mut Vec<String>) {
        match &e.kind {
            PyExprKind::Name(n) if !shapes.contains(n) => shapes.push(n.clone()),
            // `R.Tensor`: the namespace is not a shape variable.
            PyExprKind::Attribute { .. } => {}
            PyExprKind::Call { func, args, keywords } => {
                if func.dotted_name().as_deref() == Some("R.Tensor") {
                    if let Some(PyExprKind::Name(n)) = args.first().map(|a| &a.kind) {
                        relax.push(n.clone());
                    }
                }
                names(func, shapes, relax);
                args.iter().for_each(|a| names(a, shapes, relax));
                keywords.iter().for_each(|k| names(&k.value, shapes, relax));
            }
            PyExprKind::Tuple(xs) | PyExprKind::List(xs) => xs.iter().for_each(|x| names(x, shapes, relax)),
            PyExprKind::Unary { operand, .. } => names(operand, shapes, relax),
            PyExprKind::Binary { left, right, .. } => {
                names(left, shapes, relax);
                names(right, shapes, relax);
            }
            _ => {}
        }
    }
    let (mut free, mut relax) = (Vec::new(), Vec::new());
    names(e, &mut free, &mut relax);
    let mut ctx = Ctx { globals: HashMap::new(), scopes: Scopes::new(HashMap::new()), fn_frames: Vec::new() };
    ctx.scopes.push();
    for n in free {
        let entity = if relax.contains(&n) {
            let shape = crate::grammar::StructInfo::new(
                crate::grammar::StructInfoKind::Shape { values: None, ndim: -1 },
                crate::Span::SYNTHETIC,
            );
            Entity::Relax(crate::grammar::Var::new(n.clone(), Some(shape), crate::Span::SYNTHETIC))
        } else {
            Entity::Shape(crate::grammar::PrimVar::shape_var(n.clone()))
        };
        ctx.scopes.define(&n, entity);
    }
    sinfo::struct_info(&mut ctx, e)
}
