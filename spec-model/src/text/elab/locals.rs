//! Python's rule for the names of a Relax function body: a name assigned anywhere in
//! the body is the function's own, so a use of it that is not in scope still refers to
//! one of the body's bindings of it. Such programs break WF-1 or WF-3, and the checker
//! says so with the rule; the parser only reports names that no binding of any
//! enclosing function gives.
//!
//! A pre-pass over the body's syntax, before the body is elaborated, lists its
//! bindings in the order elaboration makes them, with the depth of the scope each
//! binds in. The last assignment of an `if` branch or a `with R.seq_expr():` block is
//! not one (its value is the block's result; the `if` binds the name), unless it is a
//! `match_cast`. A use of `x` not in scope refers to the first binding of `x` made
//! after the statement holding the use starts, in a scope no deeper than the use's
//! (so not in an `if` branch nested below it); failing that, to the body's last
//! binding of `x`.
//!
//! The pre-pass also gives each binding whose syntax fixes its variable that variable.
//! The others (an annotated binding, whose annotation only elaboration in the
//! binding's own scope can build; a local function, whose variable has its signature
//! when it calls itself) get theirs when elaborated, and a use before them holds a
//! stand-in until the body ends.

use super::relax_fn::{dataflow_parts, is_call_to, is_docstring, new_var, shape_var_declaration, Place};
use super::{Ctx, Entity};
use crate::grammar::rewrite::replace_var_uses;
use crate::grammar::{Expr, Var};
use crate::span::Span;
use crate::text::py_ast::{PyExprKind, PyStmt, PyStmtKind};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

/// A statement's identity: its address (the syntax tree outlives elaboration).
fn key(s: &PyStmt) -> usize {
    s as *const PyStmt as usize
}

/// One binding of the body.
struct Site {
    /// How many of the body's bindings are made before it.
    order: usize,
    /// The statement that makes it.
    stmt: usize,
}

/// The bindings of one name, in the order they are made.
#[derive(Default)]
struct Sites {
    all: Vec<Site>,
    /// For each scope depth, the positions in `all` of the bindings made at that depth.
    by_depth: BTreeMap<usize, Vec<usize>>,
}

impl Sites {
    /// The first binding made at or after `order` in a scope of depth at most `depth`.
    fn next_visible(&self, order: usize, depth: usize) -> Option<&Site> {
        let first_at = |at: &Vec<usize>| at.get(at.partition_point(|&i| self.all[i].order < order)).copied();
        self.by_depth.range(..=depth).filter_map(|(_, at)| first_at(at)).min().map(|i| &self.all[i])
    }
}

/// The bindings of one Relax function body, found before it is elaborated.
pub(crate) struct Locals {
    /// Every name the body binds (not counting nested functions' bodies).
    names: HashSet<String>,
    /// For each statement, how many of the body's bindings are made before it starts.
    before: HashMap<usize, usize>,
    /// Each name's bindings.
    sites: HashMap<String, Sites>,
    /// The variable of each binding whose syntax fixes it (no annotation, not a function).
    vars: HashMap<usize, Var>,
    /// The variable each statement bound, as elaboration makes them.
    made: RefCell<HashMap<usize, Var>>,
    /// Stand-ins for those variables, given to uses that come before them.
    stand_ins: RefCell<HashMap<usize, Var>>,
    /// The variable of a name no binding of the body gives (the use stays unbound), one
    /// per scope depth.
    free: RefCell<HashMap<(String, usize), Var>>,
}

/// The innermost Relax function body being elaborated, and how far it has got.
#[derive(Clone)]
pub(crate) struct Frame {
    locals: Rc<Locals>,
    /// How many of the body's bindings precede the statement being elaborated.
    before: usize,
    /// The enclosing function's body, if this function is a local one.
    outer: Option<Rc<Frame>>,
}

impl Ctx {
    /// Starts elaborating a function body: its bindings are found first.
    pub(crate) fn begin_body(&mut self, body: &[PyStmt]) {
        let locals = Locals::of(body, self);
        let outer = self.body.take().map(Rc::new);
        self.body = Some(Frame { locals: Rc::new(locals), before: 0, outer });
    }

    /// Marks that statement `s` of the innermost body is being elaborated.
    pub(crate) fn at(&mut self, s: &PyStmt) {
        if let Some(f) = &mut self.body {
            if let Some(n) = f.locals.before.get(&key(s)) {
                f.before = *n;
            }
        }
    }

    /// The variable the pre-pass gave the binding statement `s` makes, if its syntax fixes it.
    pub(crate) fn planned_var(&self, s: &PyStmt) -> Option<Var> {
        self.body.as_ref()?.locals.vars.get(&key(s)).cloned()
    }

    /// Records the variable statement `s` of the innermost body bound.
    pub(crate) fn made(&self, s: &PyStmt, var: &Var) {
        if let Some(f) = &self.body {
            f.locals.made.borrow_mut().insert(key(s), var.clone());
        }
    }

    /// The variable a name not in scope refers to, if a binding of an enclosing
    /// function's body gives that name.
    pub(crate) fn forward_ref(&self, name: &str, span: Span) -> Option<Var> {
        let mut frame = self.body.as_ref()?;
        while !frame.locals.names.contains(name) {
            frame = frame.outer.as_deref()?;
        }
        let locals = &frame.locals;
        let sites = locals.sites.get(name);
        let site = sites.and_then(|ss| ss.next_visible(frame.before, self.depth));
        let Some(site) = site.or_else(|| sites.and_then(|ss| ss.all.last())) else {
            let mut free = locals.free.borrow_mut();
            return Some(
                free.entry((name.to_string(), self.depth)).or_insert_with(|| Var::new(name, None, span)).clone(),
            );
        };
        if let Some(v) = locals.vars.get(&site.stmt).or(locals.made.borrow().get(&site.stmt)) {
            return Some(v.clone());
        }
        let mut stand_ins = locals.stand_ins.borrow_mut();
        Some(stand_ins.entry(site.stmt).or_insert_with(|| Var::new(name, None, span)).clone())
    }

    /// Ends the innermost body `body`: uses that came before a binding whose variable
    /// its syntax does not fix get that variable.
    pub(crate) fn end_body(&self, body: Expr) -> Expr {
        let Some(f) = &self.body else { return body };
        let made = f.locals.made.borrow();
        let subst: HashMap<u64, Var> = f
            .locals
            .stand_ins
            .borrow()
            .iter()
            .filter_map(|(stmt, stand_in)| Some((stand_in.id(), made.get(stmt)?.clone())))
            .collect();
        if subst.is_empty() {
            return body;
        }
        replace_var_uses(&body, &subst)
    }
}

impl Locals {
    fn of(body: &[PyStmt], ctx: &Ctx) -> Locals {
        let mut names = HashSet::new();
        bound_names(body, &mut names);
        let mut plan = Plan { before: HashMap::new(), sites: HashMap::new(), vars: HashMap::new(), count: 0 };
        let mut modules = Modules { start: ctx, own: imbl::HashMap::new() };
        for s in body {
            plan.statement(s, ctx.depth, Place::Ordinary, false, &mut modules);
        }
        Locals {
            names,
            before: plan.before,
            sites: plan.sites,
            vars: plan.vars,
            made: RefCell::default(),
            stand_ins: RefCell::default(),
            free: RefCell::default(),
        }
    }
}

/// The names a function body's statements bind (Python's function-local names),
/// not counting the bodies of nested functions.
fn bound_names(stmts: &[PyStmt], out: &mut HashSet<String>) {
    for s in stmts {
        match &s.kind {
            PyStmtKind::Assign { target, value } if shape_var_declaration(value).is_none() => {
                if let PyExprKind::Name(n) = &target.kind {
                    out.insert(n.clone());
                }
            }
            PyStmtKind::AnnAssign { target, .. } => {
                if let PyExprKind::Name(n) = &target.kind {
                    out.insert(n.clone());
                }
            }
            PyStmtKind::FunctionDef { name, .. } => {
                out.insert(name.clone());
            }
            PyStmtKind::If { body, orelse, .. } => {
                bound_names(body, out);
                bound_names(orelse, out);
            }
            PyStmtKind::With { body, .. } => bound_names(body, out),
            _ => {}
        }
    }
}

/// Which names mean the module (`cls = Module` makes another), as the pre-pass goes:
/// the scope at the body's start, overridden by what the body defines since.
#[derive(Clone)]
struct Modules<'c> {
    start: &'c Ctx,
    own: imbl::HashMap<String, bool>,
}

impl Modules<'_> {
    fn is_module(&self, name: &str) -> bool {
        match self.own.get(name) {
            Some(m) => *m,
            None => matches!(self.start.lookup(name), Some(Entity::Module)),
        }
    }
    fn set(&mut self, name: &str, module: bool) {
        if self.is_module(name) != module {
            self.own.insert(name.to_string(), module);
        }
    }
}

struct Plan {
    before: HashMap<usize, usize>,
    sites: HashMap<String, Sites>,
    vars: HashMap<usize, Var>,
    /// Bindings found so far.
    count: usize,
}

impl Plan {
    fn site(&mut self, name: &str, depth: usize, s: &PyStmt, var: Option<Var>) {
        if !self.sites.contains_key(name) {
            self.sites.insert(name.to_string(), Sites::default());
        }
        let Some(sites) = self.sites.get_mut(name) else { return };
        sites.by_depth.entry(depth).or_default().push(sites.all.len());
        sites.all.push(Site { order: self.count, stmt: key(s) });
        if let Some(v) = var {
            self.vars.insert(key(s), v);
        }
        self.count += 1;
    }

    /// The statements of an `if` branch or a `with R.seq_expr():` block, whose last
    /// assignment is the block's result.
    fn block(&mut self, stmts: &[PyStmt], depth: usize, modules: &Modules) {
        let mut modules = modules.clone();
        for (i, s) in stmts.iter().enumerate() {
            self.statement(s, depth, Place::Ordinary, i + 1 == stmts.len(), &mut modules);
        }
    }

    /// Statement `s`, elaborated in a scope of depth `depth`; `result` if it ends a block
    /// whose result it assigns.
    fn statement(&mut self, s: &PyStmt, depth: usize, place: Place, result: bool, modules: &mut Modules) {
        self.before.insert(key(s), self.count);
        match &s.kind {
            PyStmtKind::Assign { target, value } => {
                let PyExprKind::Name(n) = &target.kind else { return };
                if shape_var_declaration(value).is_some() {
                    return modules.set(n, false);
                }
                if matches!(&value.kind, PyExprKind::Name(m) if modules.is_module(m)) {
                    return modules.set(n, true);
                }
                modules.set(n, false);
                if !result || is_call_to(value, "R.match_cast") {
                    self.site(n, depth, s, Some(new_var(n, None, target.span, place)));
                }
            }
            PyStmtKind::AnnAssign { target, value: Some(value), .. } => {
                let PyExprKind::Name(n) = &target.kind else { return };
                modules.set(n, false);
                if !result || is_call_to(value, "R.match_cast") {
                    self.site(n, depth, s, None);
                }
            }
            PyStmtKind::If { body, orelse, .. } => {
                self.block(body, depth + 1, modules);
                self.block(orelse, depth + 1, modules);
                let plain = plain_result(body) && plain_result(orelse);
                self.result_binding(s, body, plain, depth, place, result, modules);
            }
            PyStmtKind::With { context, body, .. } if is_call_to(context, "R.seq_expr") => {
                self.block(body, depth + 1, modules);
                self.result_binding(s, body, plain_result(body), depth, place, result, modules);
            }
            PyStmtKind::With { context, body, .. } if is_call_to(context, "R.dataflow") => {
                let (stmts, outputs, output_at) = dataflow_parts(body).unwrap_or((body, Vec::new(), HashSet::new()));
                let mut inner = modules.clone();
                for (i, t) in stmts.iter().enumerate() {
                    self.statement(t, depth + 1, Place::Dataflow { output: output_at.contains(&i) }, false, &mut inner);
                }
                for (n, _) in outputs {
                    modules.set(n, inner.is_module(n));
                }
            }
            PyStmtKind::FunctionDef { name, .. } => {
                modules.set(name, false);
                if !result {
                    self.site(name, depth, s, None);
                }
            }
            _ => {}
        }
    }

    /// The binding an `if` or `with R.seq_expr():` statement makes of the name its
    /// (first) block's last statement assigns.
    #[allow(clippy::too_many_arguments)]
    fn result_binding(
        &mut self,
        s: &PyStmt,
        block: &[PyStmt],
        plain: bool,
        depth: usize,
        place: Place,
        result: bool,
        modules: &mut Modules,
    ) {
        let (Some(last), Some(name)) = (block.last(), result_name(block)) else { return };
        modules.set(name, false);
        if !result {
            self.site(name, depth, s, plain.then(|| new_var(name, None, last.span, place)));
        }
    }
}

/// The name a block's last statement assigns as the block's result.
fn result_name(stmts: &[PyStmt]) -> Option<&str> {
    match &stmts.last()?.kind {
        PyStmtKind::Assign { target, value } if shape_var_declaration(value).is_none() => match &target.kind {
            PyExprKind::Name(n) => Some(n),
            _ => None,
        },
        PyStmtKind::AnnAssign { target, value: Some(_), .. } => match &target.kind {
            PyExprKind::Name(n) => Some(n),
            _ => None,
        },
        PyStmtKind::FunctionDef { name, .. } => Some(name),
        PyStmtKind::If { body, .. } => result_name(body),
        PyStmtKind::With { context, body, .. } if is_call_to(context, "R.seq_expr") => result_name(body),
        // An expression evaluated for its effect binds `_`.
        PyStmtKind::Expr(e) if !is_call_to(e, "R.match_cast") && !is_docstring(stmts.last()?) => Some("_"),
        _ => None,
    }
}

/// Is the variable of a block's result sure to have no annotation? (A local function's
/// has its signature when the function calls itself.)
fn plain_result(stmts: &[PyStmt]) -> bool {
    match stmts.last().map(|s| &s.kind) {
        Some(PyStmtKind::AnnAssign { value: Some(v), .. }) => is_call_to(v, "R.match_cast"),
        Some(PyStmtKind::FunctionDef { .. }) => false,
        Some(PyStmtKind::If { body, orelse, .. }) => plain_result(body) && plain_result(orelse),
        Some(PyStmtKind::With { context, body, .. }) if is_call_to(context, "R.seq_expr") => plain_result(body),
        _ => true,
    }
}
