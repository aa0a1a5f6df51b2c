//! The reduction passes, coarse to fine. Each proposes candidates to
//! [`Reducer::try_candidate`], which keeps one only if it is smaller, prints and
//! re-parses to itself, and still satisfies the predicate. Each returns whether it
//! changed the program.

use super::inputs::{shrink_literal, simpler_values};
use super::sites::{tidy_blocks, value_mut, visit_exprs, visit_seqs, SeqSite};
use super::Reducer;
use spec_model::grammar::rewrite::replace_var_uses;
use spec_model::grammar::{BaseFunc, Binding, BindingBlock, Expr, ExprKind, IRModule, SeqExpr, StructInfo, Var};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// A pass: its name (for `--verbose`) and what it does.
pub type Pass = (&'static str, fn(&mut Reducer) -> bool);

/// The passes in the order one round runs them.
pub const PASSES: &[Pass] = &[
    ("remove-functions", remove_functions),
    ("replace-bodies", replace_bodies),
    ("remove-bindings", remove_bindings),
    ("rewrite-bindings", rewrite_bindings),
    ("simplify-exprs", simplify_exprs),
    ("tidy-blocks", tidy),
    ("shrink-inputs", shrink_inputs),
];

/// Applies `edit` to the `SeqExpr` numbered `index` of a copy of the current module.
fn edit_seq(r: &Reducer, index: usize, edit: &mut dyn FnMut(SeqSite<'_>)) -> IRModule {
    let mut m = r.module.clone();
    let mut edit = Some(edit);
    visit_seqs(&mut m, &mut |site| {
        if site.index == index {
            if let Some(e) = edit.take() {
                e(site);
            }
            return true;
        }
        false
    });
    m
}

/// Removes global functions other than the entry (PrimFuncs included), last first.
fn remove_functions(r: &mut Reducer) -> bool {
    let mut progress = false;
    let mut i = r.module.functions.len();
    while i > 0 {
        i -= 1;
        if i >= r.module.functions.len() || Some(&r.module.functions[i].0.name) == r.entry.as_ref() {
            continue;
        }
        let mut m = r.module.clone();
        m.functions.remove(i);
        progress |= r.try_candidate(m, r.call.clone());
    }
    progress
}

/// The variables a `SeqExpr`'s body may name: those in scope at its start (when it is a
/// function body) and those its bindings bind, outside dataflow blocks.
fn body_vars(site: &SeqSite<'_>) -> Vec<Var> {
    let mut vs: Vec<Var> = if site.ret.is_some() { site.scope.to_vec() } else { Vec::new() };
    for b in site.seq.blocks.iter().flat_map(|b| &b.bindings) {
        vs.extend(b.var().filter(|v| !v.is_dataflow()).cloned());
    }
    vs
}

/// Replaces a `SeqExpr`'s body by an earlier variable, earliest first (a function
/// body also loses its return annotation, which the new body may not meet).
fn replace_bodies(r: &mut Reducer) -> bool {
    let mut progress = false;
    let mut index = 0;
    loop {
        let mut found: Option<(Vec<Var>, Option<Var>)> = None;
        let mut m = r.module.clone();
        visit_seqs(&mut m, &mut |site| {
            if site.index == index {
                found = Some((body_vars(&site), site.seq.body.as_var().cloned()));
                return true;
            }
            false
        });
        let Some((vars, current)) = found else { return progress };
        let others = vars.into_iter().filter(|v| Some(v) != current.as_ref());
        let changed = first_kept(r, others, |r, v| {
            edit_seq(r, index, &mut |site| {
                site.seq.body = Expr::var(&v);
                if let Some(ret) = site.ret {
                    *ret = None;
                }
            })
        });
        progress |= changed;
        if !changed {
            index += 1;
        }
        if r.cap_hit {
            return progress;
        }
    }
}

/// Tries the candidate `make` builds from each item in order (same run call) and keeps
/// the first one that still fails; whether one was kept.
fn first_kept<T>(
    r: &mut Reducer,
    items: impl IntoIterator<Item = T>,
    mut make: impl FnMut(&Reducer, T) -> IRModule,
) -> bool {
    for item in items {
        let m = make(r, item);
        if r.try_candidate(m, r.call.clone()) {
            return true;
        }
    }
    false
}

/// Every binding: (SeqExpr index, block, position).
fn binding_sites(r: &Reducer) -> Vec<(usize, usize, usize)> {
    let mut m = r.module.clone();
    let mut out = Vec::new();
    visit_seqs(&mut m, &mut |site| {
        for (bi, block) in site.seq.blocks.iter().enumerate() {
            out.extend((0..block.bindings.len()).map(|i| (site.index, bi, i)));
        }
        false
    });
    out
}

/// Drops empty blocks of one `SeqExpr` and merges its adjacent blocks of one kind.
fn tidy_seq(seq: &mut SeqExpr) {
    let mut blocks: Vec<BindingBlock> = Vec::new();
    for b in seq.blocks.drain(..) {
        match blocks.last_mut() {
            _ if b.bindings.is_empty() => {}
            Some(last) if last.kind == b.kind => last.bindings.extend(b.bindings),
            _ => blocks.push(b),
        }
    }
    seq.blocks = blocks;
}

/// The module without the given bindings.
fn without_bindings(r: &Reducer, sites: &[(usize, usize, usize)]) -> IRModule {
    let mut by_seq: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
    for &(s, b, i) in sites {
        by_seq.entry(s).or_default().push((b, i));
    }
    let mut m = r.module.clone();
    // Later SeqExprs first: removing a binding renumbers only the SeqExprs inside it.
    for (s, mut positions) in by_seq.into_iter().rev() {
        positions.sort_unstable_by(|a, b| b.cmp(a));
        visit_seqs(&mut m, &mut |site| {
            if site.index != s {
                return false;
            }
            for &(b, i) in &positions {
                site.seq.blocks[b].bindings.remove(i);
            }
            tidy_seq(site.seq);
            true
        });
    }
    m
}

/// Removes bindings: halves of all of them, then quarters, ..., then one at a time,
/// each sweep from the last binding back (later bindings use earlier ones).
fn remove_bindings(r: &mut Reducer) -> bool {
    let mut progress = false;
    let mut chunk = binding_sites(r).len().div_ceil(2).max(1);
    loop {
        let mut sites = binding_sites(r);
        let mut end = sites.len();
        while end > 0 && !r.cap_hit {
            let start = end.saturating_sub(chunk);
            let m = without_bindings(r, &sites[start..end]);
            if r.try_candidate(m, r.call.clone()) {
                progress = true;
                sites = binding_sites(r);
            }
            end = start.min(sites.len());
        }
        if chunk == 1 || r.cap_hit {
            return progress;
        }
        chunk = chunk.div_ceil(2);
    }
}

/// The printed StructInfo of `v`, from the checker (or its annotation).
fn sinfo_text(sinfo: &HashMap<u64, String>, v: &Var) -> Option<String> {
    sinfo.get(&v.id()).cloned().or_else(|| v.annotation().map(spec_model::text::print_struct_info))
}

/// One way to rewrite a binding.
enum BindingEdit {
    /// Replace an `If` by one of its branches (`true` for the true branch), splicing a
    /// `SeqExpr` branch's bindings in before the binding.
    Branch(bool),
    /// `x = y` (or `x = R.match_cast(y, ...)`): drop the binding, use `y` for `x`.
    Substitute(Var, Var),
    /// `x = R.match_cast(e, S)` becomes `x = e`.
    DropCast,
    /// The value becomes another variable in scope.
    UseVar(Var),
}

fn binding_edits(b: &Binding, scope: &[Var], sinfo: &HashMap<u64, String>) -> Vec<BindingEdit> {
    let mut out = Vec::new();
    let value = b.value();
    if let ExprKind::If(_) = &value.kind {
        out.push(BindingEdit::Branch(true));
        out.push(BindingEdit::Branch(false));
    }
    if let (Some(x), Some(y)) = (b.var(), value.as_var()) {
        out.push(BindingEdit::Substitute(x.clone(), y.clone()));
    }
    if let Binding::MatchCast { var: Some(_), .. } = b {
        out.push(BindingEdit::DropCast);
    }
    if let (Some(x), None) = (b.var(), value.as_var()) {
        let want = sinfo_text(sinfo, x);
        let same: Vec<&Var> =
            scope.iter().filter(|v| want.is_some() && sinfo_text(sinfo, v) == want && !v.is_dataflow()).collect();
        let pick: Vec<&Var> = if !same.is_empty() { same } else { scope.iter().rev().take(3).collect() };
        out.extend(pick.into_iter().map(|v| BindingEdit::UseVar(v.clone())));
    }
    out
}

fn apply_binding_edit(site: SeqSite<'_>, bi: usize, i: usize, edit: &BindingEdit) {
    let seq = site.seq;
    match edit {
        BindingEdit::Branch(which) => {
            let binding = &mut seq.blocks[bi].bindings[i];
            let ExprKind::If(cond) = &value_mut(binding).kind else { return };
            let branch = if *which { cond.true_branch.clone() } else { cond.false_branch.clone() };
            let ExprKind::SeqExpr(inner) = branch.kind else {
                *value_mut(binding) = branch;
                return;
            };
            let inner = *inner;
            *value_mut(binding) = inner.body;
            let block = &mut seq.blocks[bi];
            let rest: Vec<Binding> = block.bindings.drain(i..).collect();
            let (kind, span) = (block.kind, block.span);
            let tail = BindingBlock { kind, bindings: rest, span };
            let mut blocks: Vec<BindingBlock> = seq.blocks.drain(bi + 1..).collect();
            blocks.insert(0, tail);
            seq.blocks.extend(inner.blocks);
            seq.blocks.extend(blocks);
            tidy_seq(seq);
        }
        BindingEdit::Substitute(..) => {
            seq.blocks[bi].bindings.remove(i);
            tidy_seq(seq);
        }
        BindingEdit::DropCast => {
            let b = &mut seq.blocks[bi].bindings[i];
            if let Binding::MatchCast { var: Some(var), value, span, .. } = b {
                *b = Binding::VarBinding { var: var.clone(), value: value.clone(), span: *span };
            }
        }
        BindingEdit::UseVar(v) => *value_mut(&mut seq.blocks[bi].bindings[i]) = Expr::var(v),
    }
}

/// Every use of `x` in the module becomes `y`.
fn substitute(m: &mut IRModule, x: &Var, y: &Var) {
    let map: HashMap<u64, Var> = [(x.id(), y.clone())].into();
    for (_, f) in &mut m.functions {
        if let BaseFunc::Relax(func) = f {
            let func = Rc::make_mut(func);
            func.body = replace_var_uses(&func.body, &map);
        }
    }
}

/// Rewrites one binding at a time: an `If` by a branch, an alias by its target,
/// a match_cast by its value, the value by another variable in scope (of the same
/// StructInfo when the checker derived it).
fn rewrite_bindings(r: &mut Reducer) -> bool {
    let mut progress = false;
    let mut n = 0;
    while !r.cap_hit {
        let sinfo = r.sinfo_map();
        // Find binding number n with the variables in scope before it.
        let mut found: Option<(usize, usize, usize, Vec<BindingEdit>)> = None;
        let mut count = 0;
        let mut m = r.module.clone();
        visit_seqs(&mut m, &mut |site| {
            let mut scope: Vec<Var> = site.scope.to_vec();
            for (bi, block) in site.seq.blocks.iter().enumerate() {
                let block_base = scope.len();
                for (i, b) in block.bindings.iter().enumerate() {
                    if count == n {
                        found = Some((site.index, bi, i, binding_edits(b, &scope, &sinfo)));
                        return true;
                    }
                    count += 1;
                    scope.extend(b.var().cloned());
                }
                if block.is_dataflow() {
                    let kept: Vec<Var> = scope.drain(block_base..).filter(|v| !v.is_dataflow()).collect();
                    scope.extend(kept);
                }
            }
            false
        });
        let Some((s, bi, i, edits)) = found else { break };
        let changed = first_kept(r, edits, |r, edit| {
            let mut m = edit_seq(r, s, &mut |site| apply_binding_edit(site, bi, i, &edit));
            if let BindingEdit::Substitute(x, y) = &edit {
                substitute(&mut m, x, y);
            }
            m
        });
        progress |= changed;
        if !changed {
            n += 1;
        }
    }
    progress
}

/// Smaller expressions that could stand for `e`: its operands, a tuple or shape without
/// one field, an `If`'s branches, a constant with simpler elements.
fn smaller_exprs(e: &Expr) -> Vec<Expr> {
    let mut out = Vec::new();
    match &e.kind {
        ExprKind::Call(c) => out.extend(c.args.iter().cloned()),
        ExprKind::Tuple(fs) => {
            out.extend(fs.iter().cloned());
            for j in 0..fs.len() {
                let mut rest = fs.clone();
                rest.remove(j);
                out.push(Expr::new(ExprKind::Tuple(rest), e.span));
            }
        }
        ExprKind::TupleGetItem { tuple_value, .. } => out.push((**tuple_value).clone()),
        ExprKind::If(i) => {
            for b in [&i.true_branch, &i.false_branch] {
                match &b.kind {
                    ExprKind::SeqExpr(seq) if seq.blocks.is_empty() => out.push(seq.body.clone()),
                    ExprKind::SeqExpr(_) => {}
                    _ => out.push(b.clone()),
                }
            }
        }
        ExprKind::SeqExpr(seq) if seq.blocks.is_empty() => out.push(seq.body.clone()),
        ExprKind::ShapeExpr(dims) => {
            for j in 0..dims.len() {
                let mut rest = dims.clone();
                rest.remove(j);
                out.push(Expr::new(ExprKind::ShapeExpr(rest), e.span));
            }
        }
        ExprKind::Constant(a) => {
            out.extend(simpler_values(a).into_iter().map(|b| Expr::new(ExprKind::Constant(Rc::new(b)), e.span)))
        }
        _ => {}
    }
    out
}

/// Replaces an expression anywhere (outermost first) by a smaller one.
fn simplify_exprs(r: &mut Reducer) -> bool {
    let mut progress = false;
    let mut index = 0;
    while !r.cap_hit {
        let mut found: Option<Vec<Expr>> = None;
        let mut m = r.module.clone();
        visit_exprs(&mut m, &mut |site| {
            if site.index == index {
                found = Some(smaller_exprs(site.expr));
                return true;
            }
            false
        });
        let Some(cands) = found else { break };
        let changed = first_kept(r, cands, |r, c| {
            let mut m = r.module.clone();
            let mut c = Some(c);
            visit_exprs(&mut m, &mut |site| {
                if site.index == index {
                    *site.expr = c.take().expect("one replacement");
                    return true;
                }
                false
            });
            m
        });
        progress |= changed;
        if !changed {
            index += 1;
        }
    }
    progress
}

/// Drops empty blocks and merges adjacent blocks of one kind everywhere.
fn tidy(r: &mut Reducer) -> bool {
    let mut m = r.module.clone();
    tidy_blocks(&mut m);
    r.try_candidate(m, r.call.clone())
}

/// The entry parameters' annotations.
fn param_annotations(r: &Reducer) -> Vec<Option<StructInfo>> {
    let Some(BaseFunc::Relax(f)) = r.entry.as_deref().and_then(|e| r.module.get(e)) else { return Vec::new() };
    f.params.iter().map(|p| p.annotation().cloned()).collect()
}

/// Shrinks the `run:` call's arguments: fewer elements along symbolic dimensions,
/// simpler element values.
fn shrink_inputs(r: &mut Reducer) -> bool {
    let anns = param_annotations(r);
    let mut progress = false;
    let mut j = 0;
    while !r.cap_hit {
        let Some(current) = r.call.clone() else { break };
        let ExprKind::Call(call) = &current.kind else { break };
        let Some(arg) = call.args.get(j) else { break };
        let mut changed = false;
        for cand in shrink_literal(arg, anns.get(j).and_then(Option::as_ref)) {
            let mut c = (**call).clone();
            c.args[j] = cand;
            let call = Expr::new(ExprKind::Call(Box::new(c)), current.span);
            if r.try_candidate(r.module.clone(), Some(call)) {
                changed = true;
                break;
            }
        }
        progress |= changed;
        if !changed {
            j += 1;
        }
    }
    progress
}
