//! The relations between StructInfo: `check_compatibility` (SI-CC), "more specific"
//! `<<:` (SI-SP), and `unify_struct_info`, their least upper bound.
//!
//! Shape equalities are decided best-effort by a [`ShapeProver`]; purity is compared
//! like SUB-6.1 (an extension the spec's invariants need, proofs-notes/struct-info.md).

use super::auxiliary::{get_shape_var_mapping, substitute_struct_info};
use super::prover::{ShapeProver, Verdict};
use crate::grammar::{DeriveFunc, Expr, ExprKind, PrimExpr, PrimVar, StructInfo, StructInfoKind, Var};
use imbl::HashSet as PSet;

/// What the relations need from their context: a prover, the shape variables in
/// scope (Σ), and the known values of shape-typed Relax variables (from Δ).
pub struct SiEnv<'a> {
    pub prover: &'a dyn ShapeProver,
    pub shapes: PSet<PrimVar>,
    pub var_values: &'a dyn Fn(&Var) -> Option<Vec<PrimExpr>>,
}

impl SiEnv<'_> {
    fn scope(&self) -> Vec<PrimVar> {
        self.shapes.iter().cloned().collect()
    }

    /// Are two dimension lists equal, unequal, or unknown (pairwise, best effort)?
    pub fn compare_dims(&self, a: &[PrimExpr], b: &[PrimExpr]) -> Verdict {
        if a.len() != b.len() {
            return Verdict::NotEqual;
        }
        let scope = self.scope();
        let mut all_equal = true;
        for (x, y) in a.iter().zip(b) {
            match self.prover.compare(x, y, &scope) {
                Verdict::NotEqual => return Verdict::NotEqual,
                Verdict::Unknown => all_equal = false,
                Verdict::Equal => {}
            }
        }
        if all_equal {
            Verdict::Equal
        } else {
            Verdict::Unknown
        }
    }

    /// The dimensions a tensor's shape field denotes, when known.
    fn dims_of(&self, shape: &Expr) -> Option<Vec<PrimExpr>> {
        match &shape.kind {
            ExprKind::ShapeExpr(ds) => Some(ds.clone()),
            ExprKind::Var(v) => (self.var_values)(v),
            _ => None,
        }
    }

    /// Compares two tensor shape fields (ShapeExprs or variables, SI-CC-5.5/5.6).
    pub fn compare_shapes(&self, a: &Expr, b: &Expr) -> Verdict {
        if let (ExprKind::Var(x), ExprKind::Var(y)) = (&a.kind, &b.kind) {
            if x == y {
                return Verdict::Equal;
            }
        }
        match (self.dims_of(a), self.dims_of(b)) {
            (Some(x), Some(y)) => self.compare_dims(&x, &y),
            _ => Verdict::Unknown,
        }
    }
}

/// The three outcomes of `check_compatibility`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Compat {
    Compatible,
    PossiblyCompatible,
    Incompatible,
}

/// An outcome and, when not compatible, the SI-CC rule and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompatResult {
    pub outcome: Compat,
    pub rule: &'static str,
    pub reason: String,
}

impl CompatResult {
    fn ok() -> CompatResult {
        CompatResult { outcome: Compat::Compatible, rule: "", reason: String::new() }
    }
    fn possibly(rule: &'static str, reason: impl Into<String>) -> CompatResult {
        CompatResult { outcome: Compat::PossiblyCompatible, rule, reason: reason.into() }
    }
    fn no(rule: &'static str, reason: impl Into<String>) -> CompatResult {
        CompatResult { outcome: Compat::Incompatible, rule, reason: reason.into() }
    }
    /// The worse of two outcomes (for tuples and functions).
    fn and(self, other: CompatResult) -> CompatResult {
        if other.outcome > self.outcome {
            other
        } else {
            self
        }
    }
}

fn verdict_to_compat(v: Verdict, rule: &'static str, what: &str) -> CompatResult {
    match v {
        Verdict::Equal => CompatResult::ok(),
        Verdict::NotEqual => CompatResult::no(rule, format!("{what} are provably different")),
        Verdict::Unknown => CompatResult::possibly(rule, format!("{what} cannot be proven equal")),
    }
}

fn kind_name(s: &StructInfo) -> &'static str {
    match &*s.kind {
        StructInfoKind::Object => "Object",
        StructInfoKind::Prim { .. } => "Prim",
        StructInfoKind::Shape { .. } => "Shape",
        StructInfoKind::Tensor { .. } => "Tensor",
        StructInfoKind::Tuple { .. } => "Tuple",
        StructInfoKind::Func { .. } => "Callable",
    }
}

/// `check_compatibility(S1, S2)`: is `S1` accepted where `S2` is expected?
/// SI-CC-1..6, plus SI-CC-7 for `PrimStructInfo` and purity in SI-CC-6.4.
pub fn check_compatibility(s1: &StructInfo, s2: &StructInfo, env: &SiEnv) -> CompatResult {
    use StructInfoKind as K;
    match (&*s1.kind, &*s2.kind) {
        // SI-CC-1
        (_, K::Object) => CompatResult::ok(),
        // SI-CC-3
        (K::Tuple { fields: f1 }, K::Tuple { fields: f2 }) => {
            if f1.len() != f2.len() {
                return CompatResult::no("SI-CC-3.1", format!("tuples of {} and {} fields", f1.len(), f2.len()));
            }
            f1.iter().zip(f2).fold(CompatResult::ok(), |acc, (a, b)| acc.and(check_compatibility(a, b, env)))
        }
        // SI-CC-4
        (K::Shape { values: v1, ndim: n1 }, K::Shape { values: v2, ndim: n2 }) => {
            if *n2 == -1 {
                return CompatResult::ok();
            }
            if n1 != n2 {
                return CompatResult::no("SI-CC-4.2", format!("a shape of ndim {n1} where ndim {n2} is expected"));
            }
            match (v1, v2) {
                (_, None) => CompatResult::ok(),
                (None, Some(_)) => CompatResult::possibly("SI-CC-4.4", "the shape's values are unknown"),
                (Some(a), Some(b)) => verdict_to_compat(env.compare_dims(a, b), "SI-CC-4.5", "the shape values"),
            }
        }
        // SI-CC-5
        (K::Tensor { shape: sh1, dtype: d1, ndim: n1 }, K::Tensor { shape: sh2, dtype: d2, ndim: n2 }) => {
            if !d2.is_void() && d1 != d2 {
                return CompatResult::no("SI-CC-5.1", format!("dtype {d1} where {d2} is expected"));
            }
            if *n2 != -1 && n1 != n2 {
                return CompatResult::no("SI-CC-5.2", format!("ndim {n1} where ndim {n2} is expected"));
            }
            match (sh1, sh2) {
                (_, None) => CompatResult::ok(),
                (None, Some(_)) => CompatResult::possibly("SI-CC-5.4", "the tensor's shape is unknown"),
                (Some(a), Some(b)) => {
                    let rule = if matches!(a.kind, ExprKind::Var(_)) || matches!(b.kind, ExprKind::Var(_)) {
                        "SI-CC-5.5"
                    } else {
                        "SI-CC-5.6"
                    };
                    verdict_to_compat(env.compare_shapes(a, b), rule, "the shapes")
                }
            }
        }
        // SI-CC-6
        (
            K::Func { params: p1, ret: r1, derive_func: df1, purity: u1 },
            K::Func { params: p2, ret: r2, derive_func: df2, purity: u2 },
        ) => {
            if *u2 && !*u1 {
                return CompatResult::no("SI-CC-6.4", "an impure function where a pure one is expected");
            }
            match (p1, p2) {
                (None, None) => {
                    if df1 == df2 {
                        CompatResult::ok()
                    } else {
                        CompatResult::possibly("SI-CC-6.2", "packed functions with different derive_funcs")
                    }
                }
                (Some(p1), Some(p2)) => {
                    if p1.len() != p2.len() {
                        return CompatResult::no(
                            "SI-CC-6.3.1",
                            format!("{} parameters where {} are expected", p1.len(), p2.len()),
                        );
                    }
                    // Bind the unbound shape variables of S1's parameters to S2's (6.3.2).
                    let mut m = super::auxiliary::ShapeVarMapping::new();
                    for (a, b) in p1.iter().zip(p2) {
                        for (k, v) in get_shape_var_mapping(a, b, &env.shapes) {
                            m.entry(k).or_insert(v);
                        }
                    }
                    let s1 = substitute_struct_info(s1, &m);
                    let K::Func { params: Some(p1), ret: r1, .. } = &*s1.kind else {
                        unreachable!("substitution keeps the kind")
                    };
                    // Contravariant parameters, covariant result (6.3.3).
                    let mut acc = CompatResult::ok();
                    for (a, b) in p1.iter().zip(p2) {
                        acc = acc.and(check_compatibility(b, a, env));
                    }
                    acc.and(check_compatibility(r1, r2, env))
                }
                _ => {
                    let _ = r1;
                    CompatResult::no("SI-CC-6.1", "a closure and a packed function")
                }
            }
        }
        // SI-CC-7 (later draft): PrimStructInfo of the same dtype. With TVM's values
        // (S-prim-value) the values compare as one dimension of a shape does.
        (K::Prim { dtype: d1, value: v1 }, K::Prim { dtype: d2, value: v2 }) => {
            if d1 != d2 {
                return CompatResult::no("SI-CC-7", format!("a {d1} value where {d2} is expected"));
            }
            match (v1, v2) {
                (_, None) => CompatResult::ok(),
                (None, Some(_)) => CompatResult::possibly("SI-CC-7", "a primitive value not known statically"),
                (Some(a), Some(b)) => verdict_to_compat(
                    env.compare_dims(std::slice::from_ref(a), std::slice::from_ref(b)),
                    "SI-CC-7",
                    "the primitive values",
                ),
            }
        }
        // SI-CC-2
        _ => CompatResult::no("SI-CC-2", format!("{} where {} is expected", kind_name(s1), kind_name(s2))),
    }
}

/// The answer to `S1 <<: S2` ("S1 is more specific than S2").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Specific {
    Yes,
    /// Holds if some shapes that cannot be proven equal are equal.
    Possibly,
    No,
}

fn worse(a: Specific, b: Specific) -> Specific {
    a.max(b)
}

fn from_verdict(v: Verdict) -> Specific {
    match v {
        Verdict::Equal => Specific::Yes,
        Verdict::Unknown => Specific::Possibly,
        Verdict::NotEqual => Specific::No,
    }
}

/// `S1 <<: S2` as the spec defines it (SI-SP-1..7): shapes may be "definitely or
/// possibly" equal, so `Possibly` counts as holding.
pub fn is_more_specific(s1: &StructInfo, s2: &StructInfo, env: &SiEnv) -> bool {
    more_specific(s1, s2, env) != Specific::No
}

/// `S1 <<: S2`, three-valued (SI-SP-1..7, SI-SP-8 for PrimStructInfo, purity as SUB-6.1).
pub fn more_specific(s1: &StructInfo, s2: &StructInfo, env: &SiEnv) -> Specific {
    use StructInfoKind as K;
    // SI-SP-1 (reflexivity)
    if s1 == s2 {
        return Specific::Yes;
    }
    match (&*s1.kind, &*s2.kind) {
        // SI-SP-3
        (_, K::Object) => Specific::Yes,
        // SI-SP-4 (and its transitive closure)
        (K::Tensor { shape: sh1, dtype: d1, ndim: n1 }, K::Tensor { shape: sh2, dtype: d2, ndim: n2 }) => {
            if !(d2.is_void() || d1 == d2) || !(*n2 == -1 || n1 == n2) {
                return Specific::No;
            }
            match (sh1, sh2) {
                (_, None) => Specific::Yes,
                (None, Some(_)) => Specific::No,
                (Some(a), Some(b)) => from_verdict(env.compare_shapes(a, b)),
            }
        }
        // SI-SP-5
        (K::Shape { values: v1, ndim: n1 }, K::Shape { values: v2, ndim: n2 }) => {
            if !(*n2 == -1 || n1 == n2) {
                return Specific::No;
            }
            match (v1, v2) {
                (_, None) => Specific::Yes,
                (None, Some(_)) => Specific::No,
                (Some(a), Some(b)) => from_verdict(env.compare_dims(a, b)),
            }
        }
        // SI-SP-6
        (K::Tuple { fields: f1 }, K::Tuple { fields: f2 }) => {
            if f1.len() != f2.len() {
                return Specific::No;
            }
            f1.iter().zip(f2).fold(Specific::Yes, |acc, (a, b)| worse(acc, more_specific(a, b, env)))
        }
        // SI-SP-7
        (
            K::Func { params: p1, ret: r1, derive_func: df1, purity: u1 },
            K::Func { params: p2, ret: r2, derive_func: df2, purity: u2 },
        ) => {
            if *u2 && !*u1 {
                return Specific::No;
            }
            match (p1, p2) {
                (None, None) => {
                    // 7.1: anything is more specific than the empty derivation; 7.2 otherwise.
                    let weakest = *df2 == Some(DeriveFunc::Empty) && matches!(&*r2.kind, K::Object);
                    if weakest || df1 == df2 {
                        Specific::Yes
                    } else {
                        Specific::No
                    }
                }
                (Some(p1), Some(p2)) => {
                    if p1.len() != p2.len() {
                        return Specific::No;
                    }
                    let params =
                        p1.iter().zip(p2).fold(Specific::Yes, |acc, (a, b)| worse(acc, more_specific(b, a, env)));
                    worse(params, more_specific(r1, r2, env))
                }
                _ => Specific::No,
            }
        }
        // SI-SP-8 (later draft); values as one shape dimension (S-prim-value).
        (K::Prim { dtype: d1, value: v1 }, K::Prim { dtype: d2, value: v2 }) => {
            if d1 != d2 {
                return Specific::No;
            }
            match (v1, v2) {
                (_, None) => Specific::Yes,
                (None, Some(_)) => Specific::No,
                (Some(a), Some(b)) => match env.compare_dims(std::slice::from_ref(a), std::slice::from_ref(b)) {
                    Verdict::Equal => Specific::Yes,
                    Verdict::NotEqual => Specific::No,
                    Verdict::Unknown => Specific::Possibly,
                },
            }
        }
        _ => Specific::No,
    }
}

/// `unify_struct_info(S1, S2)`: the least upper bound of two StructInfos under `<<:`,
/// used for the branches of an `If` (SI-D-6). Errata adopted: an argument that is
/// `ObjectStructInfo` gives `ObjectStructInfo`; a ShapeStructInfo without values wins
/// the shape case; the tensor result carries the unified dtype; purity is joined.
pub fn unify_struct_info(s1: &StructInfo, s2: &StructInfo, env: &SiEnv) -> StructInfo {
    use StructInfoKind as K;
    let span = s1.span;
    let mk = |k: K| StructInfo::new(k, span);
    match (&*s1.kind, &*s2.kind) {
        (K::Object, _) | (_, K::Object) => StructInfo::object(),
        (K::Shape { values: v1, ndim: n1 }, K::Shape { values: v2, ndim: n2 }) => {
            if *n1 == -1 {
                return s1.clone();
            }
            if *n2 == -1 {
                return s2.clone();
            }
            if n1 != n2 {
                return mk(K::Shape { values: None, ndim: -1 });
            }
            match (v1, v2) {
                (None, _) => s1.clone(),
                (_, None) => s2.clone(),
                (Some(a), Some(b)) => {
                    if env.compare_dims(a, b) == Verdict::Equal {
                        s1.clone()
                    } else {
                        mk(K::Shape { values: None, ndim: *n1 })
                    }
                }
            }
        }
        (K::Tensor { shape: sh1, dtype: d1, ndim: n1 }, K::Tensor { shape: sh2, dtype: d2, ndim: n2 }) => {
            let ndim = if n1 == n2 { *n1 } else { -1 };
            let dtype = if d1 == d2 { *d1 } else { crate::grammar::DataType::void() };
            let shape = match (sh1, sh2) {
                (Some(a), Some(b)) if *n1 != -1 && n1 == n2 && env.compare_shapes(a, b) == Verdict::Equal => {
                    Some(a.clone())
                }
                _ => None,
            };
            mk(K::Tensor { shape, dtype, ndim })
        }
        (K::Tuple { fields: f1 }, K::Tuple { fields: f2 }) => {
            if f1.len() != f2.len() {
                return StructInfo::object();
            }
            mk(K::Tuple { fields: f1.iter().zip(f2).map(|(a, b)| unify_struct_info(a, b, env)).collect() })
        }
        (
            K::Func { params: p1, ret: r1, derive_func: df1, purity: u1 },
            K::Func { params: p2, ret: r2, derive_func: df2, purity: u2 },
        ) => {
            let purity = *u1 && *u2;
            match (p1, p2) {
                (None, None) => {
                    if df1 == df2 {
                        mk(K::Func { params: None, ret: r1.clone(), derive_func: df1.clone(), purity })
                    } else {
                        mk(K::Func {
                            params: None,
                            ret: StructInfo::object(),
                            derive_func: Some(DeriveFunc::Empty),
                            purity,
                        })
                    }
                }
                (Some(p1), Some(p2)) => {
                    if p1.len() != p2.len() {
                        return StructInfo::object();
                    }
                    let mut params = Vec::new();
                    for (a, b) in p1.iter().zip(p2) {
                        // The parameters must be judged equal (see the GLB of FuncTypes).
                        let u = unify_struct_info(a, b, env);
                        if is_more_specific(&u, a, env) && is_more_specific(&u, b, env) {
                            params.push(u);
                        } else {
                            return StructInfo::object();
                        }
                    }
                    mk(K::Func { params: Some(params), ret: unify_struct_info(r1, r2, env), derive_func: None, purity })
                }
                _ => StructInfo::object(),
            }
        }
        (K::Prim { dtype: d1, value: v1 }, K::Prim { dtype: d2, value: v2 }) if d1 == d2 => {
            let same = match (v1, v2) {
                (Some(a), Some(b)) => {
                    env.compare_dims(std::slice::from_ref(a), std::slice::from_ref(b)) == Verdict::Equal
                }
                _ => false,
            };
            if same {
                s1.clone()
            } else {
                mk(K::Prim { dtype: *d1, value: None })
            }
        }
        _ => StructInfo::object(),
    }
}
