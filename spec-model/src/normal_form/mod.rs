//! The spec's **Normal Form** section: the criteria NF-1..NF-4 ([`check_normal_form`])
//! and the normalization procedure ([`normalize`]).

mod facts;
mod normalize;

pub use normalize::normalize;

use crate::diagnostic::Diagnostic;
use crate::grammar::{Expr, ExprKind, IRModule};
use facts::{facts, Fact, Position};

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

/// A normal-form criterion, checked at one fact.
type Check = fn(&Fact) -> Vec<Diagnostic>;

/// Checks NF-1..NF-4 on every Relax function of `m`; one diagnostic per violation, in
/// walk order (the criteria's diagnostics interleaved as their places come).
pub fn check_normal_form(m: &IRModule) -> Vec<Diagnostic> {
    let checks: [Check; 4] = [nf1, nf2, nf3, nf4];
    facts(m).iter().flat_map(|fact| checks.iter().flat_map(move |check| check(fact))).collect()
}

/// The violations of one criterion, in walk order.
fn violations(m: &IRModule, check: Check) -> Vec<Diagnostic> {
    facts(m).iter().flat_map(check).collect()
}

/// NF-1: within a SeqExpr, a binding's value is a leaf expression or a non-leaf
/// expression whose subexpressions are all leaves (and, as normalization makes it,
/// a SeqExpr's body is a leaf).
pub fn nf1_flat_binding_values(m: &IRModule) -> Vec<Diagnostic> {
    violations(m, nf1)
}

/// NF-2: SeqExprs appear only as the body of a Function or a branch of an If.
pub fn nf2_seq_expr_positions(m: &IRModule) -> Vec<Diagnostic> {
    violations(m, nf2)
}

/// NF-3: the body of a Function and the branches of an If are SeqExprs.
pub fn nf3_bodies_are_seq_exprs(m: &IRModule) -> Vec<Diagnostic> {
    violations(m, nf3)
}

/// NF-4: a SeqExpr's binding blocks are consolidated and none is empty.
pub fn nf4_blocks_consolidated(m: &IRModule) -> Vec<Diagnostic> {
    violations(m, nf4)
}

/// Every normal-form criterion, in the spec's order.
pub const CRITERIA: &[crate::well_formed::Criterion] = &[
    ("NF-1", nf1_flat_binding_values),
    ("NF-2", nf2_seq_expr_positions),
    ("NF-3", nf3_bodies_are_seq_exprs),
    ("NF-4", nf4_blocks_consolidated),
];

/// NF-1 at one fact: "non-leaf expressions used as subexpressions must be bound to
/// variables", and a SeqExpr's body is a leaf (the normalization's step 2). A binding's
/// value may be a non-leaf: only its subexpressions are checked.
fn nf1(fact: &Fact) -> Vec<Diagnostic> {
    let (message, e) = match *fact {
        Fact::Expr(Position::Subexpression, e) if nested_non_leaf(e) => {
            (format!("{} is nested where a leaf expression is required", describe(e)), e)
        }
        Fact::Expr(Position::SeqExprBody, e) if nested_non_leaf(e) => {
            (format!("the body of a SeqExpr is {}, not a leaf expression", describe(e)), e)
        }
        _ => return Vec::new(),
    };
    vec![Diagnostic::error("NF-1", message, e.span).with_label("bind this to a variable first")]
}

/// Is `e` a non-leaf that NF-1 reports where it stands? A Tuple is judged by its
/// fields, which are subexpressions themselves; a misplaced SeqExpr is NF-2's.
fn nested_non_leaf(e: &Expr) -> bool {
    !is_leaf(e) && !matches!(e.kind, ExprKind::Tuple(_) | ExprKind::SeqExpr(_))
}

/// NF-2 at one fact: a SeqExpr stands only in the body of a Function or a branch of an If.
fn nf2(fact: &Fact) -> Vec<Diagnostic> {
    match *fact {
        Fact::Expr(pos, e) if pos != Position::Body && is_seq_expr(e) => {
            vec![Diagnostic::error("NF-2", "a SeqExpr may appear only as a function body or an If branch", e.span)
                .with_label("nested SeqExpr")]
        }
        _ => Vec::new(),
    }
}

/// NF-3 at one fact: the body of a Function and the branches of an If must be SeqExprs.
fn nf3(fact: &Fact) -> Vec<Diagnostic> {
    match *fact {
        Fact::Expr(Position::Body, e) if !is_seq_expr(e) => vec![Diagnostic::error(
            "NF-3",
            format!("{} is a function body or If branch but not a SeqExpr", describe(e)),
            e.span,
        )
        .with_label("wrap this in a SeqExpr")],
        _ => Vec::new(),
    }
}

/// NF-4 at one fact: "empty BindingBlocks should be dropped", and a block of the same
/// kind as the one before it should be combined with it.
fn nf4(fact: &Fact) -> Vec<Diagnostic> {
    let Fact::Block(b, previous) = *fact else { return Vec::new() };
    let mut out = Vec::new();
    if b.bindings.is_empty() {
        out.push(Diagnostic::error("NF-4", "an empty binding block", b.span).with_label("drop empty blocks"));
    }
    if let Some(p) = previous.filter(|p| p.kind == b.kind) {
        let kind = if b.is_dataflow() { "DataflowBlock" } else { "BindingBlock" };
        out.push(
            Diagnostic::error("NF-4", format!("two consecutive {kind}s are not consolidated"), b.span)
                .with_secondary(p.span, "the previous block")
                .with_label("merge with the previous block"),
        );
    }
    out
}

fn is_seq_expr(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::SeqExpr(_))
}

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
