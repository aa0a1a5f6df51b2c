//! Pre-order traversal of Relax expressions (bindings, branches and nested
//! function bodies included).

use super::{Expr, ExprKind};

/// Calls `f` on `e` and on every expression inside it, parents before children,
/// left to right (the spec's evaluation order).
pub fn walk_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    walk(e, f, true);
}

/// Like [`walk_expr`], without entering the bodies of nested functions (which run
/// when called, not where they are defined).
pub fn walk_expr_shallow(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    walk(e, f, false);
}

fn walk(e: &Expr, f: &mut dyn FnMut(&Expr), into_functions: bool) {
    let go = |x: &Expr, f: &mut dyn FnMut(&Expr)| walk(x, f, into_functions);
    f(e);
    match &e.kind {
        ExprKind::Constant(_)
        | ExprKind::Var(_)
        | ExprKind::GlobalVar(_)
        | ExprKind::ExternFunc { .. }
        | ExprKind::ShapeExpr(_)
        | ExprKind::Op(_)
        | ExprKind::PrimValue(_)
        | ExprKind::StringImm(_)
        | ExprKind::DataTypeImm(_) => {}
        ExprKind::Tuple(fields) => fields.iter().for_each(|x| go(x, f)),
        ExprKind::SeqExpr(seq) => {
            for b in seq.blocks.iter().flat_map(|block| &block.bindings) {
                go(b.value(), f);
            }
            go(&seq.body, f);
        }
        ExprKind::Function(func) => {
            if into_functions {
                go(&func.body, f)
            }
        }
        ExprKind::If(i) => {
            go(&i.cond, f);
            go(&i.true_branch, f);
            go(&i.false_branch, f);
        }
        ExprKind::Call(c) => {
            go(&c.op, f);
            c.args.iter().for_each(|x| go(x, f));
        }
        ExprKind::TupleGetItem { tuple_value, .. } => go(tuple_value, f),
    }
}
