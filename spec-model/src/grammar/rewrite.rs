//! Rebuilding expressions with some variable uses replaced.

use super::{Binding, BindingBlock, Call, Expr, ExprKind, Function, If, SeqExpr, Var};
use std::collections::HashMap;
use std::rc::Rc;

/// `e` with every use of a variable whose id is in `map` replaced by the mapped
/// variable (binding positions and annotations are left alone).
pub fn replace_var_uses(e: &Expr, map: &HashMap<u64, Var>) -> Expr {
    if map.is_empty() {
        return e.clone();
    }
    let r = |x: &Expr| replace_var_uses(x, map);
    let kind = match &e.kind {
        ExprKind::Var(v) => ExprKind::Var(map.get(&v.id()).cloned().unwrap_or_else(|| v.clone())),
        ExprKind::Tuple(fs) => ExprKind::Tuple(fs.iter().map(r).collect()),
        ExprKind::SeqExpr(seq) => ExprKind::SeqExpr(Box::new(SeqExpr {
            blocks: seq
                .blocks
                .iter()
                .map(|b| BindingBlock {
                    kind: b.kind,
                    bindings: b.bindings.iter().map(|x| replace_in_binding(x, map)).collect(),
                    span: b.span,
                })
                .collect(),
            body: r(&seq.body),
        })),
        ExprKind::Function(f) => ExprKind::Function(Rc::new(Function { body: r(&f.body), ..(**f).clone() })),
        ExprKind::If(i) => ExprKind::If(Box::new(If {
            cond: r(&i.cond),
            true_branch: r(&i.true_branch),
            false_branch: r(&i.false_branch),
        })),
        ExprKind::Call(c) => ExprKind::Call(Box::new(Call {
            op: r(&c.op),
            args: c.args.iter().map(r).collect(),
            sinfo_args: c.sinfo_args.clone(),
            attrs: c.attrs.clone(),
        })),
        ExprKind::TupleGetItem { tuple_value, index } => {
            ExprKind::TupleGetItem { tuple_value: Box::new(r(tuple_value)), index: *index }
        }
        other => other.clone(),
    };
    Expr::new(kind, e.span)
}

fn replace_in_binding(b: &Binding, map: &HashMap<u64, Var>) -> Binding {
    match b {
        Binding::VarBinding { var, value, span } => {
            Binding::VarBinding { var: var.clone(), value: replace_var_uses(value, map), span: *span }
        }
        Binding::MatchCast { var, struct_info, value, span } => Binding::MatchCast {
            var: var.clone(),
            struct_info: struct_info.clone(),
            value: replace_var_uses(value, map),
            span: *span,
        },
    }
}
