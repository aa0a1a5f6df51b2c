//! Criteria on calls and control flow: WF-6 (what a DataflowBlock may not contain),
//! WF-7 (recursive functions are annotated), WF-8 (`Op` only as a callee).
//!
//! Recursion is read from the call graph: a function calls another when its body
//! (not counting nested functions' bodies) holds a `Call` whose callee names it: a
//! `GlobalVar`, or the variable a local function is bound to. Calls through other
//! values (closures passed around) cannot be resolved statically and are not edges.

use crate::diagnostic::Diagnostic;
use crate::grammar::visit::walk_expr_shallow;
use crate::grammar::{Binding, Expr, ExprKind, Function, IRModule};
use crate::span::Span;
use std::collections::HashMap;

/// A function of the program: a global (by name) or a local one (by the id of the
/// variable it is bound to, or a fresh id for an anonymous function literal).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum FnId {
    Global(String),
    Local(u64),
    Anonymous(usize),
}

struct Node<'m> {
    id: FnId,
    func: &'m Function,
    span: Span,
    calls: Vec<(FnId, Span)>,
}

struct CallGraph<'m> {
    nodes: Vec<Node<'m>>,
    /// The strongly connected component of each node.
    scc: Vec<usize>,
    /// Nodes on a cycle: in a component of two or more, or calling themselves.
    recursive: Vec<bool>,
}

impl<'m> CallGraph<'m> {
    fn of(m: &'m IRModule) -> CallGraph<'m> {
        let mut nodes = Vec::new();
        let mut anon = 0;
        for (gv, f) in m.relax_functions() {
            collect(FnId::Global(gv.name.clone()), f, f.span, &mut nodes, &mut anon);
        }
        let index: HashMap<FnId, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id.clone(), i)).collect();
        for n in nodes.iter_mut() {
            let mut calls = Vec::new();
            walk_expr_shallow(&n.func.body, &mut |e| {
                if let ExprKind::Call(c) = &e.kind {
                    if let Some(target) = callee(&c.op) {
                        if index.contains_key(&target) {
                            calls.push((target, e.span));
                        }
                    }
                }
            });
            n.calls = calls;
        }
        let edges: Vec<Vec<usize>> = nodes.iter().map(|n| n.calls.iter().map(|(t, _)| index[t]).collect()).collect();
        let scc = tarjan(&edges);
        let mut size = HashMap::new();
        for c in &scc {
            *size.entry(*c).or_insert(0) += 1;
        }
        let recursive = (0..nodes.len()).map(|i| size[&scc[i]] > 1 || edges[i].contains(&i)).collect();
        CallGraph { nodes, scc, recursive }
    }

    fn index(&self, id: &FnId) -> Option<usize> {
        self.nodes.iter().position(|n| &n.id == id)
    }
}

/// The module's global Relax functions, each after the globals it refers to (calls or
/// any other use of their `GlobalVar`, in nested functions too) except along cycles:
/// Tarjan's algorithm completes a component only after every component it reaches, so
/// component numbers order referees first. The type checker (TY-1) and the StructInfo
/// derivation (SI-D-1) check globals in this order, so a caller sees the checked type
/// of a callee without a return annotation.
pub fn globals_callee_first(m: &IRModule) -> Vec<String> {
    let names: Vec<&String> = m.relax_functions().map(|(gv, _)| &gv.name).collect();
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let edges: Vec<Vec<usize>> = m
        .relax_functions()
        .map(|(_, f)| {
            let mut out = Vec::new();
            crate::grammar::visit::walk_expr(&f.body, &mut |e| {
                if let ExprKind::GlobalVar(g) = &e.kind {
                    if let Some(&j) = index.get(g.name.as_str()) {
                        out.push(j);
                    }
                }
            });
            out
        })
        .collect();
    let comp = tarjan(&edges);
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&i| comp[i]);
    order.into_iter().map(|i| names[i].clone()).collect()
}

/// The function a callee expression names, if it names one directly.
fn callee(op: &Expr) -> Option<FnId> {
    match &op.kind {
        ExprKind::GlobalVar(g) => Some(FnId::Global(g.name.clone())),
        ExprKind::Var(v) => Some(FnId::Local(v.id())),
        _ => None,
    }
}

/// Adds `f` and every function nested in it as nodes.
fn collect<'m>(id: FnId, f: &'m Function, span: Span, nodes: &mut Vec<Node<'m>>, anon: &mut usize) {
    nodes.push(Node { id, func: f, span, calls: Vec::new() });
    let mut found: Vec<(FnId, &'m Function, Span)> = Vec::new();
    find_nested(&f.body, &mut found, anon);
    for (id, g, sp) in found {
        collect(id, g, sp, nodes, anon);
    }
}

/// The functions defined directly in `e` (not inside other nested functions).
fn find_nested<'m>(e: &'m Expr, out: &mut Vec<(FnId, &'m Function, Span)>, anon: &mut usize) {
    match &e.kind {
        ExprKind::Function(g) => {
            *anon += 1;
            out.push((FnId::Anonymous(*anon), g, e.span));
        }
        ExprKind::SeqExpr(s) => {
            for b in s.blocks.iter().flat_map(|b| &b.bindings) {
                match (b, &b.value().kind) {
                    (Binding::VarBinding { var, value, .. }, ExprKind::Function(g)) => {
                        out.push((FnId::Local(var.id()), g, value.span))
                    }
                    _ => find_nested(b.value(), out, anon),
                }
            }
            find_nested(&s.body, out, anon);
        }
        ExprKind::Tuple(fs) => fs.iter().for_each(|x| find_nested(x, out, anon)),
        ExprKind::If(i) => {
            find_nested(&i.cond, out, anon);
            find_nested(&i.true_branch, out, anon);
            find_nested(&i.false_branch, out, anon);
        }
        ExprKind::Call(c) => {
            find_nested(&c.op, out, anon);
            c.args.iter().for_each(|a| find_nested(a, out, anon));
        }
        ExprKind::TupleGetItem { tuple_value, .. } => find_nested(tuple_value, out, anon),
        _ => {}
    }
}

/// Tarjan's algorithm, iteratively (no recursion depth limit): the component of each node.
fn tarjan(edges: &[Vec<usize>]) -> Vec<usize> {
    let n = edges.len();
    let (mut index, mut low, mut on_stack) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut comp, mut stack, mut next, mut next_comp) = (vec![usize::MAX; n], Vec::new(), 0, 0);
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some((v, i)) = work.pop() {
            if i == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = edges[v].get(i) {
                work.push((v, i + 1));
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp[w] = next_comp;
                    if w == v {
                        break;
                    }
                }
                next_comp += 1;
            }
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
        }
    }
    comp
}

/// WF-6: a DataflowBlock contains no recursive call to the current function, no call
/// to a function mutually recursive with it, and no `If` (nested function bodies are
/// checked as their own functions).
pub fn wf6_dataflow_block_constructs(m: &IRModule) -> Vec<Diagnostic> {
    let g = CallGraph::of(m);
    let mut out = Vec::new();
    for (i, n) in g.nodes.iter().enumerate() {
        walk_expr_shallow(&n.func.body, &mut |e| {
            let ExprKind::SeqExpr(s) = &e.kind else { return };
            for b in s.blocks.iter().filter(|b| b.is_dataflow()).flat_map(|b| &b.bindings) {
                walk_expr_shallow(b.value(), &mut |x| match &x.kind {
                    ExprKind::If(_) => out.push(
                        Diagnostic::error("WF-6", "an If inside a DataflowBlock", x.span)
                            .with_label("DataflowBlocks are free of control flow"),
                    ),
                    ExprKind::Call(c) => {
                        let Some(j) = callee(&c.op).and_then(|t| g.index(&t)) else { return };
                        if j == i {
                            out.push(
                                Diagnostic::error(
                                    "WF-6",
                                    "a recursive call of the current function inside a DataflowBlock",
                                    x.span,
                                )
                                .with_label("recursion is control flow"),
                            );
                        } else if g.scc[j] == g.scc[i] {
                            out.push(
                                Diagnostic::error(
                                    "WF-6",
                                    "a call of a function mutually recursive with the current one inside a DataflowBlock",
                                    x.span,
                                )
                                .with_secondary(g.nodes[j].span, "mutually recursive with the current function")
                                .with_label("recursion is control flow"),
                            );
                        }
                    }
                    _ => {}
                });
            }
        });
    }
    out
}

/// WF-7: a function that calls itself, or is mutually recursive with other functions,
/// has a return annotation.
pub fn wf7_recursive_functions_annotated(m: &IRModule) -> Vec<Diagnostic> {
    let g = CallGraph::of(m);
    let mut out = Vec::new();
    for (i, n) in g.nodes.iter().enumerate() {
        if g.recursive[i] && n.func.ret_struct_info.is_none() {
            let name = match &n.id {
                FnId::Global(s) => format!("`{s}`"),
                _ => "this local function".into(),
            };
            let call = n.calls.first().map(|(_, sp)| *sp);
            let mut d = Diagnostic::error("WF-7", format!("{name} is recursive but has no return annotation"), n.span)
                .with_label("add `-> StructInfo` to the signature");
            if let Some(sp) = call {
                d = d.with_secondary(sp, "a call on the cycle");
            }
            out.push(d);
        }
    }
    out
}

/// WF-8: an `Op` appears only as the callee of a `Call`.
pub fn wf8_op_only_as_callee(m: &IRModule) -> Vec<Diagnostic> {
    fn walk(e: &Expr, callee: bool, out: &mut Vec<Diagnostic>) {
        match &e.kind {
            ExprKind::Op(name) if !callee => out.push(
                Diagnostic::error("WF-8", format!("the operator `{name}` is used as a value"), e.span)
                    .with_label("an Op may appear only as the callee of a Call"),
            ),
            ExprKind::Call(c) => {
                walk(&c.op, true, out);
                c.args.iter().for_each(|a| walk(a, false, out));
            }
            ExprKind::Tuple(fs) => fs.iter().for_each(|x| walk(x, false, out)),
            ExprKind::SeqExpr(s) => {
                for b in s.blocks.iter().flat_map(|b| &b.bindings) {
                    walk(b.value(), false, out);
                }
                walk(&s.body, false, out);
            }
            ExprKind::Function(f) => walk(&f.body, false, out),
            ExprKind::If(i) => {
                walk(&i.cond, false, out);
                walk(&i.true_branch, false, out);
                walk(&i.false_branch, false, out);
            }
            ExprKind::TupleGetItem { tuple_value, .. } => walk(tuple_value, false, out),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (_, f) in m.relax_functions() {
        walk(&f.body, false, &mut out);
    }
    out
}
