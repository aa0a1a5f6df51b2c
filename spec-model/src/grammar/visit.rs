//! Pre-order traversal of Relax expressions (bindings, branches and nested
//! function bodies included).

use super::{Binding, Expr, ExprKind};

/// Calls `f` on `e` and on every expression inside it, parents before children,
/// left to right (the spec's evaluation order).
pub fn walk_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
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
        ExprKind::Tuple(fields) => fields.iter().for_each(|x| walk_expr(x, f)),
        ExprKind::SeqExpr(seq) => {
            for block in &seq.blocks {
                for b in &block.bindings {
                    walk_binding(b, f);
                }
            }
            walk_expr(&seq.body, f);
        }
        ExprKind::Function(func) => walk_expr(&func.body, f),
        ExprKind::If(i) => {
            walk_expr(&i.cond, f);
            walk_expr(&i.true_branch, f);
            walk_expr(&i.false_branch, f);
        }
        ExprKind::Call(c) => {
            walk_expr(&c.op, f);
            c.args.iter().for_each(|x| walk_expr(x, f));
        }
        ExprKind::TupleGetItem { tuple_value, .. } => walk_expr(tuple_value, f),
    }
}

pub fn walk_binding(b: &Binding, f: &mut dyn FnMut(&Expr)) {
    walk_expr(b.value(), f);
}
