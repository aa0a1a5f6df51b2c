//! The spec's **Normal Form** section: the criteria NF-1..NF-4 ([`check_normal_form`])
//! and the normalization procedure ([`normalize`]).

mod normalize;

pub use normalize::normalize;

use crate::diagnostic::Diagnostic;
use crate::grammar::{BaseFunc, Expr, ExprKind, IRModule, SeqExpr};

/// Leaf expressions (NF-1): variables (`Var`, `DataflowVar`, `GlobalVar`), `Constant`,
/// `ShapeExpr`, `PrimValue`, `StringImm`, `DataTypeImm`, and a `Tuple` whose fields are
/// leaves. `Op` and `ExternFunc` also count as leaves: they name built-ins, and an `Op`
/// may only ever stand as a callee (WF-8), so it could never be bound to a variable
/// (proofs-notes/normal-form.md, N-1).
pub fn is_leaf(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Var(_)
        | ExprKind::GlobalVar(_)
        | ExprKind::Constant(_)
        | ExprKind::ShapeExpr(_)
        | ExprKind::PrimValue(_)
        | ExprKind::StringImm(_)
        | ExprKind::DataTypeImm(_)
        | ExprKind::Op(_)
        | ExprKind::ExternFunc { .. } => true,
        ExprKind::Tuple(fields) => fields.iter().all(is_leaf),
        _ => false,
    }
}

/// Where an expression stands, for the normal-form criteria.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pos {
    /// A binding's right-hand side: a leaf, or a non-leaf whose subexpressions are leaves.
    Rhs,
    /// A subexpression of a non-leaf expression, or a SeqExpr's body: must be a leaf.
    Leaf,
    /// A Function's body or an If's branch: must be a SeqExpr (NF-3).
    Body,
}

/// Checks NF-1..NF-4 on every Relax function of `m`; one diagnostic per violation.
pub fn check_normal_form(m: &IRModule) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (_, f) in &m.functions {
        if let BaseFunc::Relax(f) = f {
            expr(&f.body, Pos::Body, &mut out);
        }
    }
    out
}

/// The violations of one criterion (the criteria share one walk over the program).
fn criterion(m: &IRModule, rule: &str) -> Vec<Diagnostic> {
    check_normal_form(m).into_iter().filter(|d| d.code == rule).collect()
}

/// NF-1: within a SeqExpr, a binding's value is a leaf expression or a non-leaf
/// expression whose subexpressions are all leaves (and, as normalization makes it,
/// a SeqExpr's body is a leaf).
pub fn nf1_flat_binding_values(m: &IRModule) -> Vec<Diagnostic> {
    criterion(m, "NF-1")
}

/// NF-2: SeqExprs appear only as the body of a Function or a branch of an If.
pub fn nf2_seq_expr_positions(m: &IRModule) -> Vec<Diagnostic> {
    criterion(m, "NF-2")
}

/// NF-3: the body of a Function and the branches of an If are SeqExprs.
pub fn nf3_bodies_are_seq_exprs(m: &IRModule) -> Vec<Diagnostic> {
    criterion(m, "NF-3")
}

/// NF-4: a SeqExpr's binding blocks are consolidated and none is empty.
pub fn nf4_blocks_consolidated(m: &IRModule) -> Vec<Diagnostic> {
    criterion(m, "NF-4")
}

/// Every normal-form criterion, in the spec's order.
pub const CRITERIA: &[crate::well_formed::Criterion] = &[
    ("NF-1", nf1_flat_binding_values),
    ("NF-2", nf2_seq_expr_positions),
    ("NF-3", nf3_bodies_are_seq_exprs),
    ("NF-4", nf4_blocks_consolidated),
];

fn describe(e: &Expr) -> &'static str {
    match &e.kind {
        ExprKind::Call(_) => "a call",
        ExprKind::If(_) => "an If",
        ExprKind::Function(_) => "a function",
        ExprKind::TupleGetItem { .. } => "a tuple projection",
        ExprKind::SeqExpr(_) => "a SeqExpr",
        ExprKind::Tuple(_) => "a tuple with a non-leaf field",
        _ => "this expression",
    }
}

fn expr(e: &Expr, pos: Pos, out: &mut Vec<Diagnostic>) {
    match (pos, &e.kind) {
        (Pos::Body, ExprKind::SeqExpr(s)) => return seq(s, out),
        (Pos::Body, _) => {
            out.push(
                Diagnostic::error(
                    "NF-3",
                    format!("{} is a function body or If branch but not a SeqExpr", describe(e)),
                    e.span,
                )
                .with_label("wrap this in a SeqExpr"),
            );
        }
        (_, ExprKind::SeqExpr(s)) => {
            out.push(
                Diagnostic::error("NF-2", "a SeqExpr may appear only as a function body or an If branch", e.span)
                    .with_label("nested SeqExpr"),
            );
            return seq(s, out);
        }
        (Pos::Leaf, ExprKind::Tuple(fields)) => {
            // A tuple is a leaf when its fields are; report the fields that are not.
            return fields.iter().for_each(|f| expr(f, Pos::Leaf, out));
        }
        (Pos::Leaf, _) if !is_leaf(e) => {
            out.push(
                Diagnostic::error(
                    "NF-1",
                    format!("{} is nested where a leaf expression is required", describe(e)),
                    e.span,
                )
                .with_label("bind this to a variable first"),
            );
        }
        _ => {}
    }
    // The subexpressions of a non-leaf expression must be leaves.
    match &e.kind {
        ExprKind::Tuple(fields) => fields.iter().for_each(|f| expr(f, Pos::Leaf, out)),
        ExprKind::Call(c) => {
            expr(&c.op, Pos::Leaf, out);
            c.args.iter().for_each(|a| expr(a, Pos::Leaf, out));
        }
        ExprKind::TupleGetItem { tuple_value, .. } => expr(tuple_value, Pos::Leaf, out),
        ExprKind::If(i) => {
            expr(&i.cond, Pos::Leaf, out);
            expr(&i.true_branch, Pos::Body, out);
            expr(&i.false_branch, Pos::Body, out);
        }
        ExprKind::Function(f) => expr(&f.body, Pos::Body, out),
        _ => {}
    }
}

fn seq(s: &SeqExpr, out: &mut Vec<Diagnostic>) {
    for (i, b) in s.blocks.iter().enumerate() {
        if b.bindings.is_empty() {
            out.push(Diagnostic::error("NF-4", "an empty binding block", b.span).with_label("drop empty blocks"));
        }
        if i > 0 && s.blocks[i - 1].kind == b.kind {
            let kind = if b.is_dataflow() { "DataflowBlock" } else { "BindingBlock" };
            out.push(
                Diagnostic::error("NF-4", format!("two consecutive {kind}s are not consolidated"), b.span)
                    .with_secondary(s.blocks[i - 1].span, "the previous block")
                    .with_label("merge with the previous block"),
            );
        }
        for binding in &b.bindings {
            expr(binding.value(), Pos::Rhs, out);
        }
    }
    // The body is a leaf: normalization binds a non-leaf body (the spec's step 2).
    if !matches!(s.body.kind, ExprKind::Tuple(_)) && !is_leaf(&s.body) && !matches!(s.body.kind, ExprKind::SeqExpr(_)) {
        out.push(
            Diagnostic::error(
                "NF-1",
                format!("the body of a SeqExpr is {}, not a leaf expression", describe(&s.body)),
                s.body.span,
            )
            .with_label("bind this to a variable first"),
        );
        return expr(&s.body, Pos::Rhs, out);
    }
    expr(&s.body, Pos::Leaf, out);
}
