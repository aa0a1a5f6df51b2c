//! Normalization, following the spec's "general approach" (Normal Form section):
//!
//! 1. a function body that is not a `SeqExpr` is wrapped in one;
//! 2. a `SeqExpr`'s blocks are consolidated and a non-leaf body is bound to a fresh variable;
//! 3. nested non-leaf subexpressions are bound to fresh variables in the current
//!    scope, innermost first and left to right (the evaluation order);
//! 4. `If` branches are made `SeqExpr`s like function bodies;
//! 5. a `SeqExpr` bound in a binding is flattened into the current scope (rejected,
//!    `NORM-5`, when it holds an ordinary `BindingBlock` and the scope is a `DataflowBlock`).
//!
//! Fresh variables are `DataflowVar`s inside a `DataflowBlock` and `Var`s elsewhere;
//! their names (`lv`, `lv1`, ... and `gv`, `gv1`, ...) are not used anywhere in the module.

use super::is_leaf;
use crate::diagnostic::Diagnostic;
use crate::grammar::{
    BaseFunc, Binding, BindingBlock, BlockKind, Call, Expr, ExprKind, Function, IRModule, If, SeqExpr, Var,
};
use crate::span::Span;
use std::collections::HashSet;
use std::rc::Rc;

/// Normalizes every Relax function of `m`, or reports why the program is malformed.
pub fn normalize(m: &IRModule) -> Result<IRModule, Vec<Diagnostic>> {
    let mut n = Normalizer { used: names_in(m), errors: Vec::new() };
    let functions = m
        .functions
        .iter()
        .map(|(gv, f)| {
            let f = match f {
                BaseFunc::Relax(func) => BaseFunc::Relax(Rc::new(n.function(func))),
                BaseFunc::Tir(t) => BaseFunc::Tir(t.clone()),
            };
            (gv.clone(), f)
        })
        .collect();
    if n.errors.is_empty() {
        Ok(IRModule { name: m.name.clone(), functions, attrs: m.attrs.clone(), span: m.span })
    } else {
        Err(n.errors)
    }
}

/// Every name the module uses, so fresh names never clash with the user's.
fn names_in(m: &IRModule) -> HashSet<String> {
    let mut used: HashSet<String> = m.functions.iter().map(|(gv, _)| gv.name.clone()).collect();
    for (_, f) in m.relax_functions() {
        for p in &f.params {
            used.insert(p.name().to_string());
        }
        crate::grammar::visit::walk_expr(&f.body, &mut |e| match &e.kind {
            ExprKind::Var(v) => {
                used.insert(v.name().to_string());
            }
            ExprKind::SeqExpr(s) => {
                for b in s.blocks.iter().flat_map(|b| &b.bindings) {
                    if let Some(v) = b.var() {
                        used.insert(v.name().to_string());
                    }
                }
            }
            ExprKind::Function(f) => used.extend(f.params.iter().map(|p| p.name().to_string())),
            ExprKind::ShapeExpr(ds) => ds.iter().for_each(|d| {
                d.for_each_var(&mut |v| {
                    used.insert(v.name().to_string());
                })
            }),
            _ => {}
        });
    }
    used
}

struct Normalizer {
    used: HashSet<String>,
    errors: Vec<Diagnostic>,
}

/// The bindings being emitted for one `SeqExpr`: finished blocks and the open one.
struct Scope {
    blocks: Vec<BindingBlock>,
    kind: BlockKind,
    current: Vec<Binding>,
}

impl Scope {
    fn new() -> Scope {
        Scope { blocks: Vec::new(), kind: BlockKind::Binding, current: Vec::new() }
    }

    fn close(&mut self) {
        if !self.current.is_empty() {
            let bindings = std::mem::take(&mut self.current);
            let span = bindings[0].span().to(bindings[bindings.len() - 1].span());
            self.blocks.push(BindingBlock { kind: self.kind, bindings, span });
        }
    }

    /// Continues in a block of `kind` (a new one if the open block differs).
    fn switch_to(&mut self, kind: BlockKind) {
        if kind != self.kind {
            self.close();
            self.kind = kind;
        }
    }

    fn emit(&mut self, b: Binding) {
        self.current.push(b);
    }

    /// The blocks, consolidated: consecutive blocks of one kind merged, none empty (NF-4).
    fn finish(mut self) -> Vec<BindingBlock> {
        self.close();
        let mut out: Vec<BindingBlock> = Vec::new();
        for b in self.blocks {
            match out.last_mut() {
                Some(prev) if prev.kind == b.kind => {
                    prev.span = prev.span.to(b.span);
                    prev.bindings.extend(b.bindings);
                }
                _ => out.push(b),
            }
        }
        out
    }
}

impl Normalizer {
    fn fresh_name(&mut self, base: &str) -> String {
        let name = std::iter::once(base.to_string())
            .chain((1..).map(|i| format!("{base}{i}")))
            .find(|n| !self.used.contains(n))
            .unwrap_or_else(|| base.to_string());
        self.used.insert(name.clone());
        name
    }

    /// Step 3: `e` as a leaf, binding it to a fresh variable in `sc` if it is not one.
    fn leaf(&mut self, e: &Expr, sc: &mut Scope) -> Expr {
        let r = self.rhs(e, sc);
        if is_leaf(&r) {
            return r;
        }
        self.bind_fresh(r, sc)
    }

    fn bind_fresh(&mut self, value: Expr, sc: &mut Scope) -> Expr {
        let span = value.span;
        let var = if sc.kind == BlockKind::DataflowBlock {
            Var::new_dataflow(self.fresh_name("lv"), None, span)
        } else {
            Var::new(self.fresh_name("gv"), None, span)
        };
        sc.emit(Binding::VarBinding { var: var.clone(), value, span });
        Expr::new(ExprKind::Var(var), span)
    }

    fn function(&mut self, f: &Function) -> Function {
        Function { body: self.body(&f.body), ..f.clone() }
    }

    /// Steps 1, 2 and 4: a function body or If branch as a normalized `SeqExpr`.
    fn body(&mut self, e: &Expr) -> Expr {
        let mut sc = Scope::new();
        let body = match &e.kind {
            ExprKind::SeqExpr(s) => {
                for block in &s.blocks {
                    sc.switch_to(block.kind);
                    for b in &block.bindings {
                        self.binding(b, &mut sc);
                    }
                }
                &s.body
            }
            _ => e,
        };
        // The body is evaluated after every block: what it needs bound goes in an
        // ordinary block (a DataflowVar would be used outside its block, WF-1).
        sc.switch_to(BlockKind::Binding);
        let body = self.rhs(body, &mut sc);
        let body = if is_leaf(&body) { body } else { self.bind_fresh(body, &mut sc) };
        let span = e.span;
        Expr::new(ExprKind::SeqExpr(Box::new(SeqExpr { blocks: sc.finish(), body })), span)
    }

    fn binding(&mut self, b: &Binding, sc: &mut Scope) {
        match b {
            Binding::VarBinding { var, value, span } => {
                let value = self.rhs(value, sc);
                sc.emit(Binding::VarBinding { var: var.clone(), value, span: *span });
            }
            Binding::MatchCast { var, struct_info, value, span } => {
                let value = self.rhs(value, sc);
                sc.emit(Binding::MatchCast { var: var.clone(), struct_info: struct_info.clone(), value, span: *span });
            }
        }
    }

    /// `e` in right-hand-side form: a leaf, or a non-leaf whose subexpressions are leaves.
    fn rhs(&mut self, e: &Expr, sc: &mut Scope) -> Expr {
        let kind = match &e.kind {
            ExprKind::Tuple(fields) => ExprKind::Tuple(fields.iter().map(|f| self.leaf(f, sc)).collect()),
            ExprKind::Call(c) => {
                let op = self.leaf(&c.op, sc);
                let args = c.args.iter().map(|a| self.leaf(a, sc)).collect();
                ExprKind::Call(Box::new(Call { op, args, sinfo_args: c.sinfo_args.clone(), attrs: c.attrs.clone() }))
            }
            ExprKind::TupleGetItem { tuple_value, index } => {
                ExprKind::TupleGetItem { tuple_value: Box::new(self.leaf(tuple_value, sc)), index: *index }
            }
            ExprKind::If(i) => {
                let cond = self.leaf(&i.cond, sc);
                ExprKind::If(Box::new(If {
                    cond,
                    true_branch: self.body(&i.true_branch),
                    false_branch: self.body(&i.false_branch),
                }))
            }
            ExprKind::Function(f) => ExprKind::Function(Rc::new(self.function(f))),
            ExprKind::SeqExpr(s) => return self.flatten(s, e.span, sc),
            _ => return e.clone(),
        };
        Expr::new(kind, e.span)
    }

    /// Step 5: the bindings of a nested `SeqExpr` join the current scope, and its body
    /// takes its place.
    fn flatten(&mut self, s: &SeqExpr, span: Span, sc: &mut Scope) -> Expr {
        let outer = sc.kind;
        for block in &s.blocks {
            if outer == BlockKind::DataflowBlock && block.kind == BlockKind::Binding {
                self.errors.push(
                    Diagnostic::error(
                        "NORM-5",
                        "a SeqExpr bound inside a DataflowBlock holds an ordinary BindingBlock",
                        block.span,
                    )
                    .with_secondary(span, "this SeqExpr is flattened into the DataflowBlock")
                    .with_label("an ordinary binding block cannot join a DataflowBlock"),
                );
                continue;
            }
            sc.switch_to(block.kind);
            for b in &block.bindings {
                self.binding(b, sc);
            }
        }
        sc.switch_to(outer);
        self.rhs(&s.body, sc)
    }
}
