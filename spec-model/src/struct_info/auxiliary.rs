//! Auxiliary Procedures of StructInfo derivation: the built-in `derive_func`s,
//! `wrap_type`, `erase_to_well_defined`, `get_shape_var_mapping` and substitution.

use crate::grammar::{
    Call, DeriveFunc, Expr, ExprKind, PrimExpr, PrimExprKind, PrimVar, StructInfo, StructInfoKind, Type, Var,
};
use imbl::HashSet as PSet;
use std::collections::HashMap;

/// `default_derive`: the result of a packed-function call from its `sinfo_args` (the
/// later draft's StructInfo arguments replace `type_args`, so `wrap_type` is not needed):
/// none → `ObjectStructInfo`, one → it, several → their tuple.
pub fn default_derive(call: &Call) -> StructInfo {
    match call.sinfo_args.as_slice() {
        [] => StructInfo::object(),
        [one] => one.clone(),
        many => StructInfo::new(StructInfoKind::Tuple { fields: many.to_vec() }, crate::Span::SYNTHETIC),
    }
}

/// `empty_derive`: the weakest derivation, always `ObjectStructInfo`.
pub fn empty_derive(_call: &Call) -> StructInfo {
    StructInfo::object()
}

/// `wrap_type(t)`: the least specific StructInfo of a type.
pub fn wrap_type(t: &Type) -> StructInfo {
    let kind = match t {
        Type::Object => StructInfoKind::Object,
        Type::PackedFunc => StructInfoKind::Func {
            params: None,
            ret: StructInfo::object(),
            derive_func: Some(DeriveFunc::Default),
            purity: false,
        },
        Type::Func { arg_types, ret_type, pure } => StructInfoKind::Func {
            params: Some(arg_types.iter().map(wrap_type).collect()),
            ret: wrap_type(ret_type),
            derive_func: None,
            purity: *pure,
        },
        Type::Tuple(fields) => StructInfoKind::Tuple { fields: fields.iter().map(wrap_type).collect() },
        Type::Shape { ndim } => StructInfoKind::Shape { values: None, ndim: *ndim },
        Type::DynTensor { ndim, dtype } => StructInfoKind::Tensor { shape: None, dtype: *dtype, ndim: *ndim },
    };
    StructInfo::new(kind, crate::Span::SYNTHETIC)
}

fn all_in_scope(ds: &[PrimExpr], shapes: &PSet<PrimVar>) -> bool {
    ds.iter().all(|d| d.vars().iter().all(|v| shapes.contains(v)))
}

/// Shape variables a StructInfo would bind if matched: those standing alone in a
/// dimension and not in `scope` ("unbound shape variables").
pub fn unbound_shape_vars(s: &StructInfo, scope: &PSet<PrimVar>, out: &mut Vec<PrimVar>) {
    let mut push = |ds: &[PrimExpr]| {
        for d in ds {
            if let Some(v) = d.as_var() {
                if !scope.contains(v) && !out.contains(v) {
                    out.push(v.clone());
                }
            }
        }
    };
    match &*s.kind {
        StructInfoKind::Tensor { shape: Some(Expr { kind: ExprKind::ShapeExpr(ds), .. }), .. } => push(ds),
        StructInfoKind::Shape { values: Some(vs), .. } => push(vs),
        StructInfoKind::Prim { value: Some(v), .. } => push(std::slice::from_ref(v)),
        StructInfoKind::Tuple { fields } => fields.iter().for_each(|f| unbound_shape_vars(f, scope, out)),
        _ => {}
    }
}

/// The Relax variables in scope, as `erase_to_well_defined` consults them: a set, or
/// the domain of Δ.
pub trait VarScope {
    fn in_scope(&self, v: &Var) -> bool;
}

impl VarScope for PSet<Var> {
    fn in_scope(&self, v: &Var) -> bool {
        self.contains(v)
    }
}

impl VarScope for imbl::HashMap<Var, StructInfo> {
    fn in_scope(&self, v: &Var) -> bool {
        self.contains_key(v)
    }
}

/// `erase_to_well_defined(s, var_scope, shape_var_scope)`: `s` without the parts that
/// mention Relax variables or shape variables out of scope (erratum: the
/// ShapeStructInfo path returns `s` when nothing is out of scope).
pub fn erase_to_well_defined(s: &StructInfo, vars: &dyn VarScope, shapes: &PSet<PrimVar>) -> StructInfo {
    let kind = match &*s.kind {
        StructInfoKind::Prim { dtype, value: Some(v) } if !all_in_scope(std::slice::from_ref(v), shapes) => {
            StructInfoKind::Prim { dtype: *dtype, value: None }
        }
        StructInfoKind::Object | StructInfoKind::Prim { .. } => return s.clone(),
        StructInfoKind::Tensor { shape: Some(shape), dtype, ndim } => {
            let ok = match &shape.kind {
                ExprKind::Var(v) => vars.in_scope(v),
                ExprKind::ShapeExpr(ds) => all_in_scope(ds, shapes),
                _ => false,
            };
            if ok {
                return s.clone();
            }
            StructInfoKind::Tensor { shape: None, dtype: *dtype, ndim: *ndim }
        }
        StructInfoKind::Tensor { shape: None, .. } => return s.clone(),
        StructInfoKind::Shape { values: Some(vs), ndim } if !all_in_scope(vs, shapes) => {
            StructInfoKind::Shape { values: None, ndim: *ndim }
        }
        StructInfoKind::Shape { .. } => return s.clone(),
        StructInfoKind::Tuple { fields } => {
            StructInfoKind::Tuple { fields: fields.iter().map(|f| erase_to_well_defined(f, vars, shapes)).collect() }
        }
        StructInfoKind::Func { params: Some(ps), ret, derive_func, purity } => {
            // The parameters' unbound shape variables are in scope for the function type.
            // Erasing a parameter can remove the only dimension binding such a variable,
            // so the binders are recomputed from the erased parameters until they are
            // stable (erratum, proofs-notes/struct-info.md): otherwise the result could
            // mention a variable nothing binds. Binders only shrink, so this ends.
            let binders_of = |params: &[StructInfo]| {
                let mut out = Vec::new();
                params.iter().for_each(|p| unbound_shape_vars(p, shapes, &mut out));
                out
            };
            let mut binders = binders_of(ps);
            let (params, inner) = loop {
                let mut inner = shapes.clone();
                binders.iter().for_each(|v| {
                    inner.insert(v.clone());
                });
                let params: Vec<StructInfo> = ps.iter().map(|p| erase_to_well_defined(p, vars, &inner)).collect();
                let again = binders_of(&params);
                if again.len() == binders.len() {
                    break (params, inner);
                }
                binders = again;
            };
            StructInfoKind::Func {
                params: Some(params),
                ret: erase_to_well_defined(ret, vars, &inner),
                derive_func: derive_func.clone(),
                purity: *purity,
            }
        }
        StructInfoKind::Func { params: None, ret, derive_func, purity } => StructInfoKind::Func {
            params: None,
            ret: erase_to_well_defined(ret, vars, shapes),
            derive_func: derive_func.clone(),
            purity: *purity,
        },
    };
    StructInfo::new(kind, s.span)
}

/// A substitution of shape variables (by id) with expressions.
pub type ShapeVarMapping = HashMap<u64, PrimExpr>;

/// `get_shape_var_mapping(S1, S2)`: what the unbound shape variables of `S1` (those
/// alone in a dimension and not in `scope`) stand for in `S2` (erratum: the
/// ShapeStructInfo case maps to `S2.values[i]`, as the tensor case does).
pub fn get_shape_var_mapping(s1: &StructInfo, s2: &StructInfo, scope: &PSet<PrimVar>) -> ShapeVarMapping {
    let mut out = ShapeVarMapping::new();
    mapping_into(s1, s2, scope, &mut out);
    out
}

fn mapping_into(s1: &StructInfo, s2: &StructInfo, scope: &PSet<PrimVar>, out: &mut ShapeVarMapping) {
    let mut dims = |a: &[PrimExpr], b: &[PrimExpr]| {
        if a.len() == b.len() {
            for (x, y) in a.iter().zip(b) {
                if let Some(v) = x.as_var() {
                    if !scope.contains(v) {
                        out.entry(v.id()).or_insert_with(|| y.clone());
                    }
                }
            }
        }
    };
    match (&*s1.kind, &*s2.kind) {
        (StructInfoKind::Tuple { fields: f1 }, StructInfoKind::Tuple { fields: f2 }) if f1.len() == f2.len() => {
            f1.iter().zip(f2).for_each(|(a, b)| mapping_into(a, b, scope, out))
        }
        // The return field is not a binding position.
        (StructInfoKind::Func { params: Some(p1), .. }, StructInfoKind::Func { params: Some(p2), .. })
            if p1.len() == p2.len() =>
        {
            p1.iter().zip(p2).for_each(|(a, b)| mapping_into(a, b, scope, out))
        }
        (StructInfoKind::Shape { values: Some(v1), .. }, StructInfoKind::Shape { values: Some(v2), .. }) => {
            dims(v1, v2)
        }
        (StructInfoKind::Prim { value: Some(v1), .. }, StructInfoKind::Prim { value: Some(v2), .. }) => {
            dims(std::slice::from_ref(v1), std::slice::from_ref(v2))
        }
        (
            StructInfoKind::Tensor { shape: Some(Expr { kind: ExprKind::ShapeExpr(d1), .. }), .. },
            StructInfoKind::Tensor { shape: Some(Expr { kind: ExprKind::ShapeExpr(d2), .. }), .. },
        ) => dims(d1, d2),
        _ => {}
    }
}

/// `e` with shape variables replaced by their mapping.
pub fn substitute_prim(e: &PrimExpr, m: &ShapeVarMapping) -> PrimExpr {
    if m.is_empty() {
        return e.clone();
    }
    let r = |x: &PrimExpr| substitute_prim(x, m);
    let kind = match &*e.kind {
        PrimExprKind::Var(v) => return m.get(&v.id()).cloned().unwrap_or_else(|| e.clone()),
        PrimExprKind::Binary { op, a, b } => PrimExprKind::Binary { op: *op, a: r(a), b: r(b) },
        PrimExprKind::Not(a) => PrimExprKind::Not(r(a)),
        PrimExprKind::Select { cond, then_value, else_value } => {
            PrimExprKind::Select { cond: r(cond), then_value: r(then_value), else_value: r(else_value) }
        }
        PrimExprKind::Cast { dtype, value } => PrimExprKind::Cast { dtype: *dtype, value: r(value) },
        _ => return e.clone(),
    };
    PrimExpr::new(kind, e.span)
}

/// `s` with shape variables replaced by their mapping (in shapes, values, and
/// nested StructInfo).
pub fn substitute_struct_info(s: &StructInfo, m: &ShapeVarMapping) -> StructInfo {
    if m.is_empty() {
        return s.clone();
    }
    let r = |x: &StructInfo| substitute_struct_info(x, m);
    let kind = match &*s.kind {
        StructInfoKind::Tensor { shape: Some(Expr { kind: ExprKind::ShapeExpr(ds), span }), dtype, ndim } => {
            StructInfoKind::Tensor {
                shape: Some(Expr::new(ExprKind::ShapeExpr(ds.iter().map(|d| substitute_prim(d, m)).collect()), *span)),
                dtype: *dtype,
                ndim: *ndim,
            }
        }
        StructInfoKind::Shape { values: Some(vs), ndim } => {
            StructInfoKind::Shape { values: Some(vs.iter().map(|d| substitute_prim(d, m)).collect()), ndim: *ndim }
        }
        StructInfoKind::Prim { dtype, value: Some(v) } => {
            StructInfoKind::Prim { dtype: *dtype, value: Some(substitute_prim(v, m)) }
        }
        StructInfoKind::Tuple { fields } => StructInfoKind::Tuple { fields: fields.iter().map(r).collect() },
        StructInfoKind::Func { params, ret, derive_func, purity } => StructInfoKind::Func {
            params: params.as_ref().map(|ps| ps.iter().map(r).collect()),
            ret: r(ret),
            derive_func: derive_func.clone(),
            purity: *purity,
        },
        _ => return s.clone(),
    };
    StructInfo::new(kind, s.span)
}
