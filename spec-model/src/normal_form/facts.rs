//! The facts the normal-form criteria (NF-1..NF-4) are stated over: every expression
//! of a Relax function with the position it stands in, and every binding block of a
//! `SeqExpr` with the block before it. One walk collects them, in evaluation order
//! (an expression before its subexpressions, a block before its bindings' values).

use crate::grammar::{BaseFunc, BindingBlock, Expr, ExprKind, IRModule};

/// Where an expression stands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Position {
    /// The right-hand side of a binding (the `value` field).
    BindingValue,
    /// A subexpression of a Tuple, Call, TupleGetItem, or an If's condition.
    Subexpression,
    /// The `body` of a Function, or the `true_branch` or `false_branch` of an If.
    Body,
    /// The `body` of a SeqExpr.
    SeqExprBody,
}

/// One fact about a Relax function.
pub(super) enum Fact<'a> {
    /// An expression and the position it stands in.
    Expr(Position, &'a Expr),
    /// A binding block of a SeqExpr and the block just before it, if any.
    Block(&'a BindingBlock, Option<&'a BindingBlock>),
}

/// The facts of every Relax function of `m`, in walk order.
pub(super) fn facts(m: &IRModule) -> Vec<Fact<'_>> {
    let mut out = Vec::new();
    for (_, f) in &m.functions {
        if let BaseFunc::Relax(f) = f {
            expr(&f.body, Position::Body, &mut out);
        }
    }
    out
}

fn expr<'a>(e: &'a Expr, pos: Position, out: &mut Vec<Fact<'a>>) {
    out.push(Fact::Expr(pos, e));
    match &e.kind {
        ExprKind::SeqExpr(s) => {
            for (i, b) in s.blocks.iter().enumerate() {
                out.push(Fact::Block(b, i.checked_sub(1).and_then(|j| s.blocks.get(j))));
                b.bindings.iter().for_each(|binding| expr(binding.value(), Position::BindingValue, out));
            }
            expr(&s.body, Position::SeqExprBody, out);
        }
        ExprKind::Tuple(fields) => fields.iter().for_each(|f| expr(f, Position::Subexpression, out)),
        ExprKind::Call(c) => {
            expr(&c.op, Position::Subexpression, out);
            c.args.iter().for_each(|a| expr(a, Position::Subexpression, out));
        }
        ExprKind::TupleGetItem { tuple_value, .. } => expr(tuple_value, Position::Subexpression, out),
        ExprKind::If(i) => {
            expr(&i.cond, Position::Subexpression, out);
            expr(&i.true_branch, Position::Body, out);
            expr(&i.false_branch, Position::Body, out);
        }
        ExprKind::Function(f) => expr(&f.body, Position::Body, out),
        _ => {}
    }
}
