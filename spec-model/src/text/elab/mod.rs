//! Elaboration: gives the Python-syntax tree its Relax meaning, resolving names to
//! variables (by identity), shape variables, globals and TIR buffers.
//!
//! Naming follows TVMScript: a name refers to its most recent binding in the
//! innermost enclosing scope; `if` branches and dataflow blocks open scopes; the
//! outputs of a dataflow block (`R.output(...)`) stay visible after it. As in Python,
//! a name assigned anywhere in a Relax function body is the function's own (`locals`).

mod attrs;
mod constant;
mod locals;
pub(crate) mod prim;
mod relax_expr;
mod relax_fn;
pub(crate) mod sinfo;
pub(crate) mod tir;
mod unpack;

use super::error::{ParseError, ParseResult};
use super::py_ast::{PyExpr, PyExprKind, PyStmt, PyStmtKind};
use crate::grammar::tir::Buffer;
use crate::grammar::{Attrs, BaseFunc, GlobalVar, IRModule, PrimVar, Var};
use crate::span::Span;
use std::collections::{HashMap, HashSet};
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

/// What names mean where an expression or statement is elaborated, shared by the
/// Relax and TIR elaborators. The scope is a persistent map: a nested scope starts as
/// a copy of its parent ([`Ctx::enter`]) and ends by being dropped.
#[derive(Clone)]
pub(crate) struct Ctx {
    pub(crate) globals: Rc<HashMap<String, GlobalKind>>,
    /// Names are shared strings: a persistent map copies its entries on write.
    scope: imbl::HashMap<Rc<str>, Entity>,
    /// How many scopes enclose this one, counting the module's: the rule for uses of a
    /// name before its binding compares the depths of the use and the binding.
    depth: usize,
    /// The innermost Relax function body being elaborated, if any.
    body: Option<locals::Frame>,
    /// Module-level `m = TypeVar("m")` names (TVM 0.27's printer under Python 3.11):
    /// each function whose signature mentions one gets an `int64` shape variable of it.
    pub(crate) type_vars: Rc<HashSet<String>>,
}

impl Ctx {
    fn new(globals: HashMap<String, GlobalKind>, base: HashMap<String, Entity>) -> Ctx {
        let scope = base.into_iter().map(|(n, e)| (Rc::from(n), e)).collect();
        Ctx { globals: Rc::new(globals), scope, depth: 1, body: None, type_vars: Rc::default() }
    }

    /// A scope nested in this one.
    pub(crate) fn enter(&self) -> Ctx {
        Ctx { depth: self.depth + 1, ..self.clone() }
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<&Entity> {
        self.scope.get(name)
    }

    pub(crate) fn define(&mut self, name: &str, e: Entity) {
        self.scope.insert(Rc::from(name), e);
    }

    pub(crate) fn unknown_name(&self, name: &str, span: Span) -> ParseError {
        let mut err = ParseError::name(format!("unknown name `{name}`"), span).with_label("not defined here");
        let visible: Vec<String> = self.scope.keys().map(|n| n.to_string()).collect();
        if let Some(best) = closest(name, &visible) {
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
    pub type_params: &'a [(String, Span)],
    pub params: &'a [crate::text::py_ast::Param],
    pub returns: Option<&'a PyExpr>,
    pub body: &'a [PyStmt],
    pub span: Span,
}

impl<'a> FnDef<'a> {
    pub(crate) fn of(s: &'a PyStmt) -> Option<FnDef<'a>> {
        match &s.kind {
            PyStmtKind::FunctionDef { name, name_span, decorators, type_params, params, returns, body } => {
                Some(FnDef {
                    name,
                    name_span: *name_span,
                    decorators,
                    type_params,
                    params,
                    returns: returns.as_ref(),
                    body,
                    span: s.span,
                })
            }
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
    let mut type_vars = HashSet::new();
    for s in stmts {
        match &s.kind {
            PyStmtKind::Import { .. } | PyStmtKind::Pass => {}
            PyStmtKind::Assign { target, value } if relax_fn::is_call_to(value, "TypeVar") => {
                type_vars.insert(type_var_declaration(target, value)?);
            }
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
            let mut attrs = None;
            for s in body {
                match &s.kind {
                    PyStmtKind::FunctionDef { .. } => members.push(s),
                    PyStmtKind::Pass => {}
                    _ if is_docstring(s) => {}
                    PyStmtKind::Expr(e) if relax_fn::is_call_to(e, "I.module_attrs") => {
                        if attrs.is_some() {
                            return Err(ParseError::syntax("`I.module_attrs` is given twice", s.span));
                        }
                        attrs = Some(module_attrs(e)?);
                    }
                    // Virtual devices (TVM's later `VDevice`) are outside the spec's IRModule.
                    PyStmtKind::Expr(e) if relax_fn::is_call_to(e, "I.module_global_infos") => {
                        return Err(ParseError::syntax(
                            "`I.module_global_infos` (virtual devices) is not part of the spec's IRModule, \
                             which has no devices: remove it and the device names in `R.Tensor(..., \"cuda\")` annotations",
                            s.span,
                        ))
                    }
                    _ => {
                        return Err(ParseError::syntax(
                            "a module class holds only decorated functions and `I.module_attrs({...})`",
                            s.span,
                        ))
                    }
                }
            }
            let mut m = elaborate_module(name, Some(name), &members, span, type_vars)?;
            m.attrs = attrs.unwrap_or_default();
            Ok(m)
        }
        None => {
            if funcs.is_empty() {
                return Err(ParseError::syntax(
                    "the file defines no module: expected `@I.ir_module class ...` or a decorated function",
                    Span::new(0, 0),
                ));
            }
            let span = funcs[0].span.to(funcs[funcs.len() - 1].span);
            elaborate_module("Module", None, &funcs, span, type_vars)
        }
    }
}

/// `I.module_attrs({"key": value, ...})`: the module's attributes.
fn module_attrs(e: &PyExpr) -> ParseResult<Attrs> {
    match &e.kind {
        PyExprKind::Call { args, keywords, .. } if keywords.is_empty() => match &args[..] {
            [PyExpr { kind: PyExprKind::Dict(items), .. }] => Ok(Attrs(attrs::attr_dict(items)?)),
            _ => Err(ParseError::syntax("`I.module_attrs` takes one dict of attributes", e.span)),
        },
        _ => Err(ParseError::syntax("`I.module_attrs` takes one dict of attributes", e.span)),
    }
}

/// `m = TypeVar("m")`: the name, which must be the string.
fn type_var_declaration(target: &PyExpr, value: &PyExpr) -> ParseResult<String> {
    let PyExprKind::Call { args, keywords, .. } = &value.kind else { unreachable!("is_call_to") };
    match (&target.kind, &args[..], &keywords[..]) {
        (PyExprKind::Name(n), [PyExpr { kind: PyExprKind::Str(s), .. }], []) if n == s => Ok(n.clone()),
        _ => Err(ParseError::syntax("a symbolic shape variable is declared as `m = TypeVar(\"m\")`", value.span)),
    }
}

fn elaborate_module(
    name: &str,
    class_name: Option<&str>,
    defs: &[&PyStmt],
    span: Span,
    type_vars: HashSet<String>,
) -> ParseResult<IRModule> {
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
    let mut ctx = Ctx::new(globals, base);
    ctx.type_vars = Rc::new(type_vars);
    let mut functions = Vec::new();
    for d in defs {
        let PyStmtKind::FunctionDef { name, .. } = &d.kind else {
            continue;
        };
        let f = match ctx.globals[name.as_str()] {
            GlobalKind::Relax => BaseFunc::Relax(Rc::new(relax_fn::global_function(&ctx, d)?)),
            GlobalKind::Tir => BaseFunc::Tir(Rc::new(tir::prim_func(&ctx, d)?)),
        };
        functions.push((GlobalVar::new(name.clone()), f));
    }
    Ok(IRModule { name: name.to_string(), functions, attrs: Attrs::default(), span })
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
    let mut ctx = Ctx::new(globals, base).enter();
    relax_expr::standalone_expr(&mut ctx, e)
}

pub use sinfo::ndim_of_shape_var;

/// Elaborates standalone shape expressions (`oracle prove`): a free name is an `int64`
/// shape variable, the same one wherever the name recurs.
pub(crate) fn elaborate_prim_exprs(es: &[PyExpr]) -> ParseResult<Vec<crate::grammar::PrimExpr>> {
    let mut ctx = Ctx::new(HashMap::new(), HashMap::new()).enter();
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
    let mut ctx = Ctx::new(HashMap::new(), HashMap::new()).enter();
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
        ctx.define(&n, entity);
    }
    sinfo::struct_info(&mut ctx, e)
}
