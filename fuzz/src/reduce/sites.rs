//! Where the reducer can edit a module: every `SeqExpr` (with the variables in scope
//! where it starts) and every expression, visited in a fixed pre-order so that an edit
//! can name its place by an index and be replayed on a fresh copy of the module.

use spec_model::grammar::{BaseFunc, Binding, Expr, ExprKind, IRModule, SeqExpr, StructInfo, Var};
use std::collections::HashSet;
use std::rc::Rc;

/// One `SeqExpr` handed to a visitor.
pub struct SeqSite<'a> {
    /// The pre-order index of this `SeqExpr` in the module.
    pub index: usize,
    pub seq: &'a mut SeqExpr,
    /// The variables in scope where the `SeqExpr` starts (parameters of the enclosing
    /// functions, earlier bindings of the enclosing `SeqExpr`s), innermost last.
    pub scope: &'a [Var],
    /// The enclosing function's return annotation, when this `SeqExpr` is a function body.
    pub ret: Option<&'a mut Option<StructInfo>>,
}

/// The mutable value of a binding.
pub fn value_mut(b: &mut Binding) -> &mut Expr {
    match b {
        Binding::VarBinding { value, .. } | Binding::MatchCast { value, .. } => value,
    }
}

struct SeqWalker<'f> {
    next: usize,
    scope: Vec<Var>,
    f: &'f mut dyn FnMut(SeqSite<'_>) -> bool,
}

impl SeqWalker<'_> {
    /// Returns `true` when the visitor asked to stop.
    fn seq(&mut self, seq: &mut SeqExpr, ret: Option<&mut Option<StructInfo>>) -> bool {
        let index = self.next;
        self.next += 1;
        if (self.f)(SeqSite { index, seq, scope: &self.scope, ret }) {
            return true;
        }
        let base = self.scope.len();
        for block in &mut seq.blocks {
            let block_base = self.scope.len();
            for b in &mut block.bindings {
                if self.expr(value_mut(b)) {
                    return true;
                }
                if let Some(v) = b.var() {
                    self.scope.push(v.clone());
                }
            }
            if block.is_dataflow() {
                // Dataflow variables do not outlive their block.
                let kept: Vec<Var> = self.scope.drain(block_base..).filter(|v| !v.is_dataflow()).collect();
                self.scope.extend(kept);
            }
        }
        let stop = self.expr(&mut seq.body);
        self.scope.truncate(base);
        stop
    }

    fn expr(&mut self, e: &mut Expr) -> bool {
        match &mut e.kind {
            ExprKind::SeqExpr(seq) => self.seq(seq, None),
            ExprKind::Function(func) => {
                let func = Rc::make_mut(func);
                let base = self.scope.len();
                self.scope.extend(func.params.iter().cloned());
                let stop = match &mut func.body.kind {
                    ExprKind::SeqExpr(seq) => self.seq(seq, Some(&mut func.ret_struct_info)),
                    _ => self.expr(&mut func.body),
                };
                self.scope.truncate(base);
                stop
            }
            ExprKind::If(i) => {
                self.expr(&mut i.cond) || self.expr(&mut i.true_branch) || self.expr(&mut i.false_branch)
            }
            ExprKind::Call(c) => {
                if self.expr(&mut c.op) {
                    return true;
                }
                c.args.iter_mut().any(|a| self.expr(a))
            }
            ExprKind::Tuple(fs) => fs.iter_mut().any(|x| self.expr(x)),
            ExprKind::TupleGetItem { tuple_value, .. } => self.expr(tuple_value),
            _ => false,
        }
    }
}

/// Calls `f` on every `SeqExpr` of the module's Relax functions, in pre-order (a
/// `SeqExpr` before those nested in its bindings and body), until `f` returns `true`.
/// Functions are copied on write, so `f` may edit what it is given.
pub fn visit_seqs(m: &mut IRModule, f: &mut dyn FnMut(SeqSite<'_>) -> bool) {
    let mut w = SeqWalker { next: 0, scope: Vec::new(), f };
    for (_, base) in &mut m.functions {
        let BaseFunc::Relax(func) = base else { continue };
        let mut body = Expr::new(ExprKind::Function(func.clone()), func.span);
        let stop = w.expr(&mut body);
        if let ExprKind::Function(edited) = body.kind {
            *func = edited;
        }
        if stop {
            return;
        }
    }
}

/// One expression handed to a visitor.
pub struct ExprSite<'a> {
    pub index: usize,
    pub expr: &'a mut Expr,
}

struct ExprWalker<'f> {
    next: usize,
    f: &'f mut dyn FnMut(ExprSite<'_>) -> bool,
}

impl ExprWalker<'_> {
    fn expr(&mut self, e: &mut Expr) -> bool {
        let index = self.next;
        self.next += 1;
        if (self.f)(ExprSite { index, expr: e }) {
            return true;
        }
        match &mut e.kind {
            ExprKind::SeqExpr(seq) => {
                for b in seq.blocks.iter_mut().flat_map(|b| &mut b.bindings) {
                    if self.expr(value_mut(b)) {
                        return true;
                    }
                }
                self.expr(&mut seq.body)
            }
            ExprKind::Function(func) => self.expr(&mut Rc::make_mut(func).body),
            ExprKind::If(i) => {
                self.expr(&mut i.cond) || self.expr(&mut i.true_branch) || self.expr(&mut i.false_branch)
            }
            ExprKind::Call(c) => c.args.iter_mut().any(|a| self.expr(a)),
            ExprKind::Tuple(fs) => fs.iter_mut().any(|x| self.expr(x)),
            ExprKind::TupleGetItem { tuple_value, .. } => self.expr(tuple_value),
            _ => false,
        }
    }
}

/// Calls `f` on every expression of the module's Relax functions (bodies, binding
/// values and everything inside them; not call operators), in pre-order, until `f`
/// returns `true`.
pub fn visit_exprs(m: &mut IRModule, f: &mut dyn FnMut(ExprSite<'_>) -> bool) {
    let mut w = ExprWalker { next: 0, f };
    for (_, base) in &mut m.functions {
        let BaseFunc::Relax(func) = base else { continue };
        if w.expr(&mut Rc::make_mut(func).body) {
            return;
        }
    }
}

/// The ids of every variable used (not bound) anywhere in the module.
pub fn used_vars(m: &IRModule) -> HashSet<u64> {
    let mut used = HashSet::new();
    for (_, f) in m.relax_functions() {
        spec_model::grammar::visit::walk_expr(&f.body, &mut |e| {
            if let ExprKind::Var(v) = &e.kind {
                used.insert(v.id());
            }
        });
    }
    used
}

/// Drops empty binding blocks and merges adjacent blocks of the same kind, everywhere.
pub fn tidy_blocks(m: &mut IRModule) {
    visit_seqs(m, &mut |site| {
        let mut blocks: Vec<spec_model::grammar::BindingBlock> = Vec::new();
        for b in site.seq.blocks.drain(..) {
            if b.bindings.is_empty() {
                continue;
            }
            match blocks.last_mut() {
                Some(last) if last.kind == b.kind => last.bindings.extend(b.bindings),
                _ => blocks.push(b),
            }
        }
        site.seq.blocks = blocks;
        false
    });
}

/// How many bindings the module's Relax functions hold (nested ones included).
pub fn count_bindings(m: &IRModule) -> usize {
    let mut m = m.clone();
    let mut n = 0;
    visit_seqs(&mut m, &mut |site| {
        n += site.seq.blocks.iter().map(|b| b.bindings.len()).sum::<usize>();
        false
    });
    n
}
