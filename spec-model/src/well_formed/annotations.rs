//! Criteria on annotation contents and scalar data: WF-15 (FuncStructInfo), WF-16
//! (PrimValue), WF-17 (PrimStructInfo), WF-18 (DataType).

use crate::diagnostic::Diagnostic;
use crate::grammar::visit::walk_expr;
use crate::grammar::{
    Binding, DataType, ExprKind, IRModule, PrimExpr, PrimExprKind, StructInfo, StructInfoKind, TypeCode,
};
use crate::span::Span;

/// Calls `f` on every StructInfo of the module's Relax functions (parameter, binding,
/// MatchCast, return and `sinfo_args` annotations) and on every StructInfo nested in one.
fn for_each_struct_info(m: &IRModule, f: &mut dyn FnMut(&StructInfo)) {
    fn nested(s: &StructInfo, f: &mut dyn FnMut(&StructInfo)) {
        f(s);
        match &*s.kind {
            StructInfoKind::Tuple { fields } => fields.iter().for_each(|x| nested(x, f)),
            StructInfoKind::Func { params, ret, .. } => {
                params.iter().flatten().for_each(|p| nested(p, f));
                nested(ret, f);
            }
            _ => {}
        }
    }
    for (_, func) in m.relax_functions() {
        func.params.iter().filter_map(|p| p.annotation()).for_each(|a| nested(a, f));
        if let Some(r) = &func.ret_struct_info {
            nested(r, f);
        }
        walk_expr(&func.body, &mut |e| match &e.kind {
            ExprKind::Function(g) => {
                g.params.iter().filter_map(|p| p.annotation()).for_each(|a| nested(a, f));
                if let Some(r) = &g.ret_struct_info {
                    nested(r, f);
                }
            }
            ExprKind::SeqExpr(s) => {
                for b in s.blocks.iter().flat_map(|b| &b.bindings) {
                    if let Some(a) = b.var().and_then(|v| v.annotation()) {
                        nested(a, f);
                    }
                    if let Binding::MatchCast { struct_info, .. } = b {
                        nested(struct_info, f);
                    }
                }
            }
            ExprKind::Call(c) => c.sinfo_args.iter().for_each(|s| nested(s, f)),
            _ => {}
        });
    }
}

/// WF-15: a FuncStructInfo defines exactly one of `params` and `derive_func`.
pub fn wf15_func_struct_info_params_or_derive(m: &IRModule) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for_each_struct_info(m, &mut |s| {
        if let StructInfoKind::Func { params, derive_func, .. } = &*s.kind {
            let msg = match (params.is_some(), derive_func.is_some()) {
                (true, true) => "a FuncStructInfo defines both params and derive_func",
                (false, false) => "a FuncStructInfo defines neither params nor derive_func",
                _ => return,
            };
            out.push(Diagnostic::error("WF-15", msg, s.span).with_label("exactly one of them must be defined"));
        }
    });
    out
}

/// WF-16: a PrimValue holds an IntImm or a FloatImm with one lane.
pub fn wf16_prim_value_contents(m: &IRModule) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (_, func) in m.relax_functions() {
        walk_expr(&func.body, &mut |e| {
            let ExprKind::PrimValue(p) = &e.kind else { return };
            match &*p.kind {
                PrimExprKind::IntImm { dtype, .. } | PrimExprKind::FloatImm { dtype, .. } if dtype.lanes == 1 => {}
                PrimExprKind::IntImm { .. } | PrimExprKind::FloatImm { .. } => out.push(
                    Diagnostic::error("WF-16", "a PrimValue's literal has more than one lane", e.span)
                        .with_label("PrimValues hold scalars"),
                ),
                _ => out.push(
                    Diagnostic::error("WF-16", "a PrimValue holds an expression, not an IntImm or FloatImm", p.span)
                        .with_label("only an integer or float literal may be a PrimValue"),
                ),
            }
        });
    }
    out
}

/// WF-17: a PrimStructInfo's dtype is an `Int`, `UInt` or `Float` type.
pub fn wf17_prim_struct_info_dtype(m: &IRModule) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for_each_struct_info(m, &mut |s| {
        if let StructInfoKind::Prim { dtype, .. } = &*s.kind {
            if !matches!(dtype.code, TypeCode::Int | TypeCode::UInt | TypeCode::Float) {
                out.push(
                    Diagnostic::error("WF-17", format!("R.Prim with dtype {dtype}"), s.span)
                        .with_label("a PrimStructInfo's dtype is an Int, UInt or Float type"),
                );
            }
        }
    });
    out
}

/// Is `d` a DataType the later draft allows (WF-18)?
pub fn valid_data_type(d: DataType) -> bool {
    match d.code {
        TypeCode::Int | TypeCode::UInt => d.lanes == 1 && matches!(d.bits, 1 | 8 | 16 | 32 | 64),
        TypeCode::Float => d.lanes == 1 && matches!(d.bits, 16 | 32 | 64),
        TypeCode::Handle => d.bits == 64 && d.lanes == 0,
    }
}

/// WF-18: every DataType (of tensors, PrimStructInfo, DataTypeImm, constants and the
/// scalar expressions of shapes and PrimValues) has 1 lane and a supported bit width
/// for Int/UInt/Float, and is Void (`Handle(64, 0)`) otherwise.
pub fn wf18_data_types(m: &IRModule) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let check = |d: DataType, span: Span, out: &mut Vec<Diagnostic>| {
        if !valid_data_type(d) {
            out.push(Diagnostic::error("WF-18", format!("the data type {d} is not supported"), span).with_label(
                "Int/UInt take 1, 8, 16, 32 or 64 bits, Float 16, 32 or 64, one lane; handles only as void",
            ));
        }
    };
    fn prim_dtypes(p: &PrimExpr, f: &mut dyn FnMut(DataType, Span)) {
        match &*p.kind {
            PrimExprKind::Var(v) => f(v.dtype(), p.span),
            PrimExprKind::IntImm { dtype, .. } | PrimExprKind::FloatImm { dtype, .. } => f(*dtype, p.span),
            PrimExprKind::Binary { a, b, .. } => {
                prim_dtypes(a, f);
                prim_dtypes(b, f);
            }
            PrimExprKind::Not(a) => prim_dtypes(a, f),
            PrimExprKind::Cast { dtype, value } => {
                f(*dtype, p.span);
                prim_dtypes(value, f);
            }
            PrimExprKind::Select { cond, then_value, else_value } => {
                prim_dtypes(cond, f);
                prim_dtypes(then_value, f);
                prim_dtypes(else_value, f);
            }
        }
    }
    for_each_struct_info(m, &mut |s| match &*s.kind {
        StructInfoKind::Tensor { dtype, shape, .. } => {
            check(*dtype, s.span, &mut out);
            if let Some(crate::grammar::Expr { kind: ExprKind::ShapeExpr(ds), .. }) = shape {
                ds.iter().for_each(|d| prim_dtypes(d, &mut |t, sp| check(t, sp, &mut out)));
            }
        }
        StructInfoKind::Prim { dtype, .. }
            if matches!(dtype.code, TypeCode::Int | TypeCode::UInt | TypeCode::Float) =>
        {
            check(*dtype, s.span, &mut out)
        }
        StructInfoKind::Shape { values: Some(vs), .. } => {
            vs.iter().for_each(|d| prim_dtypes(d, &mut |t, sp| check(t, sp, &mut out)))
        }
        _ => {}
    });
    for (_, func) in m.relax_functions() {
        walk_expr(&func.body, &mut |e| match &e.kind {
            ExprKind::DataTypeImm(d) => check(*d, e.span, &mut out),
            ExprKind::Constant(a) => check(a.dtype, e.span, &mut out),
            ExprKind::ShapeExpr(ds) => ds.iter().for_each(|d| prim_dtypes(d, &mut |t, sp| check(t, sp, &mut out))),
            ExprKind::PrimValue(p) => prim_dtypes(p, &mut |t, sp| check(t, sp, &mut out)),
            _ => {}
        });
    }
    out
}
