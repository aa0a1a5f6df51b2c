//! Criteria on Relax variables: WF-1 (DataflowVars), WF-2 (bound exactly once),
//! WF-3 (bound before use), WF-10 (no capture of DataflowVars).

use crate::diagnostic::Diagnostic;
use crate::grammar::visit::walk_expr;
use crate::grammar::{Binding, Expr, ExprKind, Function, GlobalVar, IRModule, Var};
use crate::span::Span;
use imbl::HashSet as PSet;
use std::collections::{HashMap, HashSet};

/// Where a variable is bound.
struct Bind {
    var: Var,
    span: Span,
    /// Position in the program's pre-order, to tell "before" from "after".
    order: usize,
    is_param: bool,
    /// The DataflowBlock whose binding binds it directly, if any.
    block: Option<usize>,
}

/// A use of a variable.
struct Use {
    var: Var,
    span: Span,
    order: usize,
    /// Is the variable in scope here (Variable Scoping)?
    in_scope: bool,
    /// The DataflowBlocks that enclose the use.
    blocks: Vec<usize>,
    /// Does the use sit in the value of the binding of the same variable?
    in_own_binding: bool,
}

#[derive(Default)]
struct Facts {
    binds: Vec<Bind>,
    uses: Vec<Use>,
    globals: Vec<(GlobalVar, Span)>,
    order: usize,
    next_block: usize,
    /// Variables whose binding's value is being visited.
    binding_stack: Vec<u64>,
}

impl Facts {
    fn of(m: &IRModule) -> Facts {
        let mut f = Facts::default();
        for (_, func) in m.relax_functions() {
            f.function(func, PSet::new(), &[]);
        }
        f
    }

    fn tick(&mut self) -> usize {
        self.order += 1;
        self.order
    }

    fn bind(&mut self, var: &Var, span: Span, is_param: bool, block: Option<usize>) {
        let order = self.tick();
        self.binds.push(Bind { var: var.clone(), span, order, is_param, block });
    }

    fn function(&mut self, f: &Function, mut scope: PSet<u64>, blocks: &[usize]) {
        for p in &f.params {
            self.bind(p, p.span(), true, None);
            scope.insert(p.id());
        }
        self.expr(&f.body, &scope, blocks);
    }

    fn expr(&mut self, e: &Expr, scope: &PSet<u64>, blocks: &[usize]) {
        match &e.kind {
            ExprKind::Var(v) => {
                let order = self.tick();
                self.uses.push(Use {
                    var: v.clone(),
                    span: e.span,
                    order,
                    in_scope: scope.contains(&v.id()),
                    blocks: blocks.to_vec(),
                    in_own_binding: self.binding_stack.contains(&v.id()),
                });
            }
            ExprKind::GlobalVar(g) => self.globals.push((g.clone(), e.span)),
            ExprKind::SeqExpr(s) => {
                let mut scope = scope.clone();
                for block in &s.blocks {
                    let id = block.is_dataflow().then(|| {
                        self.next_block += 1;
                        self.next_block
                    });
                    let inner: Vec<usize> = blocks.iter().copied().chain(id).collect();
                    let mut dataflow_vars = Vec::new();
                    for b in &block.bindings {
                        let var = b.var();
                        self.binding_stack.extend(var.map(|v| v.id()));
                        match (b, var) {
                            // A function may refer to the variable it is bound to (recursion).
                            (Binding::VarBinding { value: Expr { kind: ExprKind::Function(f), .. }, .. }, Some(v)) => {
                                self.function(f, scope.update(v.id()), &inner)
                            }
                            _ => self.expr(b.value(), &scope, &inner),
                        }
                        if var.is_some() {
                            self.binding_stack.pop();
                        }
                        if let Some(v) = var {
                            self.bind(v, v.span(), false, id);
                            scope.insert(v.id());
                            if v.is_dataflow() {
                                dataflow_vars.push(v.id());
                            }
                        }
                    }
                    // DataflowVars leave scope at the end of their block.
                    if block.is_dataflow() {
                        for v in dataflow_vars {
                            scope.remove(&v);
                        }
                    }
                }
                self.expr(&s.body, &scope, blocks);
            }
            ExprKind::Function(f) => self.function(f, scope.clone(), blocks),
            ExprKind::If(i) => {
                self.expr(&i.cond, scope, blocks);
                self.expr(&i.true_branch, scope, blocks);
                self.expr(&i.false_branch, scope, blocks);
            }
            ExprKind::Call(c) => {
                self.expr(&c.op, scope, blocks);
                c.args.iter().for_each(|a| self.expr(a, scope, blocks));
            }
            ExprKind::Tuple(fs) => fs.iter().for_each(|x| self.expr(x, scope, blocks)),
            ExprKind::TupleGetItem { tuple_value, .. } => self.expr(tuple_value, scope, blocks),
            _ => {}
        }
    }

    fn first_bind(&self) -> HashMap<u64, &Bind> {
        let mut m = HashMap::new();
        for b in &self.binds {
            m.entry(b.var.id()).or_insert(b);
        }
        m
    }
}

/// WF-1: DataflowVars are bound only inside DataflowBlocks and used only inside the
/// DataflowBlock that binds them.
pub fn wf1_dataflow_vars(m: &IRModule) -> Vec<Diagnostic> {
    let facts = Facts::of(m);
    let mut out = Vec::new();
    for b in facts.binds.iter().filter(|b| b.var.is_dataflow() && b.block.is_none()) {
        let what = if b.is_param { "a function parameter" } else { "bound outside a DataflowBlock" };
        out.push(
            Diagnostic::error("WF-1", format!("DataflowVar `{}` is {what}", b.var.name()), b.span)
                .with_label("DataflowVars can be bound only inside DataflowBlocks"),
        );
    }
    let first = facts.first_bind();
    for u in facts.uses.iter().filter(|u| u.var.is_dataflow()) {
        let Some(Bind { block: Some(block), span, .. }) = first.get(&u.var.id()) else { continue };
        if !u.blocks.contains(block) {
            out.push(
                Diagnostic::error(
                    "WF-1",
                    format!("DataflowVar `{}` is used outside the DataflowBlock that binds it", u.var.name()),
                    u.span,
                )
                .with_secondary(*span, "bound here, in a DataflowBlock")
                .with_label("used outside its block"),
            );
        }
    }
    out
}

/// WF-2: every variable used is a parameter or bound by exactly one binding, and
/// occurs in its own binding's value only when that binding defines a function.
/// Global variables must name functions of the module.
pub fn wf2_bound_exactly_once(m: &IRModule) -> Vec<Diagnostic> {
    let facts = Facts::of(m);
    let mut out = Vec::new();
    let mut seen: HashMap<u64, Span> = HashMap::new();
    for b in &facts.binds {
        if let Some(first) = seen.get(&b.var.id()) {
            out.push(
                Diagnostic::error("WF-2", format!("`{}` is bound more than once", b.var.name()), b.span)
                    .with_secondary(*first, "first bound here")
                    .with_label("a variable is bound exactly once"),
            );
        } else {
            seen.insert(b.var.id(), b.span);
        }
    }
    let mut reported: HashSet<u64> = HashSet::new();
    for u in &facts.uses {
        if !seen.contains_key(&u.var.id()) && reported.insert(u.var.id()) {
            out.push(
                Diagnostic::error("WF-2", format!("`{}` is used but never bound", u.var.name()), u.span)
                    .with_label("not a parameter and on the left of no binding"),
            );
        } else if u.in_own_binding && !u.in_scope {
            out.push(
                Diagnostic::error(
                    "WF-2",
                    format!(
                        "`{}` occurs in the value of its own binding, which does not define a function",
                        u.var.name()
                    ),
                    u.span,
                )
                .with_secondary(seen.get(&u.var.id()).copied().unwrap_or(u.span), "the binding")
                .with_label("only a function may refer to the variable it is bound to"),
            );
        }
    }
    for (g, span) in &facts.globals {
        if m.get(&g.name).is_none() {
            out.push(
                Diagnostic::error("WF-2", format!("global `{}` is not a function of the module", g.name), *span)
                    .with_label("no such global"),
            );
        }
    }
    out
}

/// WF-3: a variable is used only where its binding is in scope: never before it is
/// bound, nor after the `SeqExpr` (or `If` branch) that binds it. DataflowVars used
/// after their block are WF-1's.
pub fn wf3_bound_before_use(m: &IRModule) -> Vec<Diagnostic> {
    let facts = Facts::of(m);
    let first = facts.first_bind();
    let mut out = Vec::new();
    for u in facts.uses.iter().filter(|u| !u.in_scope && !u.in_own_binding) {
        let Some(b) = first.get(&u.var.id()) else { continue };
        let before = b.order > u.order;
        if u.var.is_dataflow() && !before {
            continue;
        }
        let msg = if before {
            format!("`{}` is used before it is bound", u.var.name())
        } else {
            format!("`{}` is used outside the scope of its binding", u.var.name())
        };
        out.push(
            Diagnostic::error("WF-3", msg, u.span).with_secondary(b.span, "bound here").with_label("not in scope here"),
        );
    }
    out
}

/// WF-10: a function defined inside a DataflowBlock does not use DataflowVars from
/// the outer scope in its body (DataflowVars are not captured by closures).
pub fn wf10_no_dataflow_capture(m: &IRModule) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (_, f) in m.relax_functions() {
        walk_expr(&f.body, &mut |e| {
            let ExprKind::SeqExpr(s) = &e.kind else { return };
            for b in s.blocks.iter().filter(|b| b.is_dataflow()).flat_map(|b| &b.bindings) {
                walk_expr(b.value(), &mut |x| {
                    if let ExprKind::Function(func) = &x.kind {
                        captured_dataflow_vars(func, x.span, &mut out);
                    }
                });
            }
        });
    }
    out
}

fn captured_dataflow_vars(f: &Function, span: Span, out: &mut Vec<Diagnostic>) {
    let mut bound: HashSet<u64> = f.params.iter().map(|p| p.id()).collect();
    walk_expr(&f.body, &mut |e| match &e.kind {
        ExprKind::SeqExpr(s) => {
            bound.extend(s.blocks.iter().flat_map(|b| &b.bindings).filter_map(|b| b.var()).map(|v| v.id()))
        }
        ExprKind::Function(g) => bound.extend(g.params.iter().map(|p| p.id())),
        _ => {}
    });
    let mut reported = HashSet::new();
    walk_expr(&f.body, &mut |e| {
        if let ExprKind::Var(v) = &e.kind {
            if v.is_dataflow() && !bound.contains(&v.id()) && reported.insert((v.id(), e.span.lo)) {
                out.push(
                    Diagnostic::error(
                        "WF-10",
                        format!("a function defined in a DataflowBlock uses the outer DataflowVar `{}`", v.name()),
                        e.span,
                    )
                    .with_secondary(span, "the function")
                    .with_label("DataflowVars are not captured by closures"),
                );
            }
        }
    });
}
