//! Erasing structural information into types, subtyping (SUB-1..6), and the least
//! upper / greatest lower bounds of types (`find_lub`, `find_glb`).

use crate::grammar::{DataType, StructInfo, StructInfoKind, Type};

/// Erasing Structural Information into Types. `PrimStructInfo` (later draft) erases to
/// `ObjectType`, the pseudocode's fall-through; a `FuncStructInfo` keeps its purity
/// (the spec's pseudocode writes `pure=False` with a TODO; proofs-notes/types.md, T-1).
pub fn erase_struct_info(si: &StructInfo) -> Type {
    match &*si.kind {
        StructInfoKind::Tensor { ndim, dtype, .. } => Type::DynTensor { ndim: *ndim, dtype: *dtype },
        StructInfoKind::Shape { ndim, .. } => Type::Shape { ndim: *ndim },
        StructInfoKind::Tuple { fields } => Type::Tuple(fields.iter().map(erase_struct_info).collect()),
        StructInfoKind::Func { params: None, .. } => Type::PackedFunc,
        StructInfoKind::Func { params: Some(ps), ret, purity, .. } => Type::Func {
            arg_types: ps.iter().map(erase_struct_info).collect(),
            ret_type: Box::new(erase_struct_info(ret)),
            pure: *purity,
        },
        StructInfoKind::Object | StructInfoKind::Prim { .. } => Type::Object,
    }
}

/// `T1 <: T2` (Rules for Subtyping). The relation is the reflexive (SUB-1), transitive
/// (SUB-2) closure of: SUB-3 (everything `<: ObjectType`), SUB-4 (tensors: a known
/// ndim or dtype may be forgotten), SUB-5 (tuples, fieldwise), SUB-6 (functions: pure
/// `<:` impure; contravariant arguments, covariant result). The closure is computed
/// directly: for tensors, `(n1, d1) <: (n2, d2)` iff `n2 ∈ {-1, n1}` and `d2 ∈ {Void, d1}`.
pub fn is_subtype(t1: &Type, t2: &Type) -> bool {
    match (t1, t2) {
        // SUB-1, SUB-3
        (_, Type::Object) => true,
        (Type::DynTensor { ndim: n1, dtype: d1 }, Type::DynTensor { ndim: n2, dtype: d2 }) => {
            // SUB-4.1, SUB-4.2, SUB-4.3 and their transitive closure
            (*n2 == -1 || n1 == n2) && (d2.is_void() || d1 == d2)
        }
        (Type::Shape { ndim: n1 }, Type::Shape { ndim: n2 }) => *n2 == -1 || n1 == n2,
        // SUB-5
        (Type::Tuple(f1), Type::Tuple(f2)) => f1.len() == f2.len() && f1.iter().zip(f2).all(|(a, b)| is_subtype(a, b)),
        // SUB-6.1 (purity) and SUB-6.2 (variance)
        (
            Type::Func { arg_types: a1, ret_type: r1, pure: p1 },
            Type::Func { arg_types: a2, ret_type: r2, pure: p2 },
        ) => {
            (*p1 || !*p2)
                && a1.len() == a2.len()
                && a1.iter().zip(a2).all(|(x1, x2)| is_subtype(x2, x1))
                && is_subtype(r1, r2)
        }
        (Type::PackedFunc, Type::PackedFunc) => true,
        _ => false,
    }
}

/// `find_glb(T1, T2)`: the greatest lower bound, if any (pseudocode with its errata
/// fixed: the `==` that should assign, and the missing `!= -1` / `!= Void` guards).
pub fn find_glb(t1: &Type, t2: &Type) -> Option<Type> {
    if t1 == t2 {
        return Some(t2.clone());
    }
    match (t1, t2) {
        (Type::Object, _) => Some(t2.clone()),
        (_, Type::Object) => Some(t1.clone()),
        (Type::Shape { ndim: n1 }, Type::Shape { ndim: n2 }) => {
            let ndim = if *n1 == -1 { *n2 } else { *n1 };
            if ndim != -1 && *n2 != -1 && *n2 != ndim {
                return None;
            }
            Some(Type::Shape { ndim })
        }
        (Type::DynTensor { ndim: n1, dtype: d1 }, Type::DynTensor { ndim: n2, dtype: d2 }) => {
            let ndim = if *n1 == -1 { *n2 } else { *n1 };
            let dtype = if d1.is_void() { *d2 } else { *d1 };
            if ndim != -1 && *n2 != -1 && *n2 != ndim {
                return None;
            }
            if !dtype.is_void() && !d2.is_void() && *d2 != dtype {
                return None;
            }
            Some(Type::DynTensor { ndim, dtype })
        }
        (Type::Tuple(f1), Type::Tuple(f2)) => {
            if f1.len() != f2.len() {
                return None;
            }
            Some(Type::Tuple(f1.iter().zip(f2).map(|(a, b)| find_glb(a, b)).collect::<Option<_>>()?))
        }
        (
            Type::Func { arg_types: a1, ret_type: r1, pure: p1 },
            Type::Func { arg_types: a2, ret_type: r2, pure: p2 },
        ) => {
            // «if they are not both pure or both impure: return None» would lose the
            // bound FuncType(pure) that both are above; the GLB of a pure and an impure
            // function type is pure (proofs-notes/types.md, T-3).
            let pure = *p1 || *p2;
            if a1.len() != a2.len() {
                return None;
            }
            let args = a1.iter().zip(a2).map(|(x, y)| find_lub(x, y)).collect();
            let ret = find_glb(r1, r2)?;
            Some(Type::Func { arg_types: args, ret_type: Box::new(ret), pure })
        }
        _ => None,
    }
}

/// `find_lub(T1, T2)`: the least upper bound (always exists: `ObjectType` is above all).
pub fn find_lub(t1: &Type, t2: &Type) -> Type {
    if t1 == t2 {
        return t1.clone();
    }
    match (t1, t2) {
        (Type::Object, _) | (_, Type::Object) => Type::Object,
        (Type::Shape { ndim: n1 }, Type::Shape { ndim: n2 }) => Type::Shape { ndim: if n1 == n2 { *n1 } else { -1 } },
        (Type::DynTensor { ndim: n1, dtype: d1 }, Type::DynTensor { ndim: n2, dtype: d2 }) => Type::DynTensor {
            ndim: if n1 == n2 { *n1 } else { -1 },
            dtype: if d1 == d2 { *d1 } else { DataType::void() },
        },
        (Type::Tuple(f1), Type::Tuple(f2)) => {
            if f1.len() != f2.len() {
                return Type::Object;
            }
            Type::Tuple(f1.iter().zip(f2).map(|(a, b)| find_lub(a, b)).collect())
        }
        (
            Type::Func { arg_types: a1, ret_type: r1, pure: p1 },
            Type::Func { arg_types: a2, ret_type: r2, pure: p2 },
        ) => {
            if a1.len() != a2.len() {
                return Type::Object;
            }
            let mut args = Vec::new();
            for (x, y) in a1.iter().zip(a2) {
                match find_glb(x, y) {
                    Some(g) => args.push(g),
                    None => return Type::Object,
                }
            }
            Type::Func { arg_types: args, ret_type: Box::new(find_lub(r1, r2)), pure: *p1 && *p2 }
        }
        _ => Type::Object,
    }
}

/// The type's spelling in messages (`Tensor(ndim=2, float32)`, `Tuple(...)`).
pub fn type_name(t: &Type) -> String {
    match t {
        Type::DynTensor { ndim, dtype } => {
            let d = if dtype.is_void() { "?".to_string() } else { dtype.to_string() };
            let n = if *ndim == -1 { "?".to_string() } else { ndim.to_string() };
            format!("Tensor(ndim={n}, dtype={d})")
        }
        Type::Shape { ndim } => format!("Shape(ndim={ndim})"),
        Type::Object => "Object".into(),
        Type::Tuple(fs) => format!("Tuple({})", fs.iter().map(type_name).collect::<Vec<_>>().join(", ")),
        Type::Func { arg_types, ret_type, pure } => format!(
            "{}Callable(({}) -> {})",
            if *pure { "" } else { "impure " },
            arg_types.iter().map(type_name).collect::<Vec<_>>().join(", "),
            type_name(ret_type)
        ),
        Type::PackedFunc => "PackedFunc".into(),
    }
}
