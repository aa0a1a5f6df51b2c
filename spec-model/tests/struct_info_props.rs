//! Property tests of the relations between StructInfo (quickcheck, ≥ 1,000 cases
//! each), for the invariants the spec states: `<<:` maps into `<:` under
//! `erase_struct_info`; `check_compatibility` compatible or possibly compatible
//! implies `erase(S1) <: erase(S2)`; `unify_struct_info` is an upper bound under
//! `<<:`. Unit tests show where the spec's own text violates them, and the
//! non-transitivity of `<<:` with "possibly equal" shapes (proofs-notes/invariants.md).

#[path = "props/gen.rs"]
mod gen;

use gen::{gen_si, qc, sstrengthen, sweaken, vars, with_env, ASinfo, SmallSinfo};
use quickcheck::{Arbitrary, Gen, QuickCheck};
use spec_model::grammar::{DataType, Expr, ExprKind, PrimExpr, StructInfo, StructInfoKind};
use spec_model::struct_info::{
    check_compatibility, erase_to_well_defined, is_more_specific, more_specific, unify_struct_info, Compat, Specific,
};
use spec_model::types::{erase_struct_info, is_subtype};
use spec_model::Span;

/// A StructInfo, two successive weakenings under `<<:`, and a strengthening.
#[derive(Clone, Debug)]
struct Chain {
    s1: StructInfo,
    s2: StructInfo,
    s3: StructInfo,
    below: StructInfo,
}

impl Arbitrary for Chain {
    fn arbitrary(g: &mut Gen) -> Chain {
        let s1 = gen_si(g, 2);
        let s2 = sweaken(g, &s1);
        let s3 = sweaken(g, &s2);
        let below = sstrengthen(g, &s1);
        Chain { s1, s2, s3, below }
    }
}

/// A pair that is often related (one a weakening or strengthening of the other).
#[derive(Clone, Debug)]
struct Pair(StructInfo, StructInfo, bool);

impl Arbitrary for Pair {
    fn arbitrary(g: &mut Gen) -> Pair {
        let a = SmallSinfo::arbitrary(g).0;
        let b = match u32::arbitrary(g) % 4 {
            0 => sweaken(g, &a),
            1 => sstrengthen(g, &a),
            2 => gen_si(g, 1),
            _ => SmallSinfo::arbitrary(g).0,
        };
        Pair(a, b, bool::arbitrary(g))
    }
}

fn definitely(a: &StructInfo, b: &StructInfo) -> bool {
    with_env(true, |env| more_specific(a, b, env) == Specific::Yes)
}

#[test]
fn si_sp_1_reflexive() {
    fn prop(s: ASinfo) -> bool {
        definitely(&s.0, &s.0)
    }
    qc().quickcheck(prop as fn(ASinfo) -> bool);
}

#[test]
fn more_specific_agrees_with_the_rules_and_is_transitive_when_definite() {
    // SI-SP-3..8 build s2 and s3 from s1; definite `<<:` (shapes provably equal)
    // accepts each step and the composite (SI-SP-2).
    fn prop(c: Chain) -> bool {
        definitely(&c.s1, &c.s2)
            && definitely(&c.s2, &c.s3)
            && definitely(&c.s1, &c.s3)
            && definitely(&c.below, &c.s1)
            && definitely(&c.below, &c.s3)
    }
    qc().quickcheck(prop as fn(Chain) -> bool);
}

#[test]
fn erase_maps_more_specific_into_subtyping() {
    // "if S1 <<: S2 holds, then erase_struct_info(S1) <: erase_struct_info(S2)"
    fn prop(p: Pair) -> bool {
        let holds = with_env(p.2, |env| is_more_specific(&p.0, &p.1, env));
        !holds || is_subtype(&erase_struct_info(&p.0), &erase_struct_info(&p.1))
    }
    qc().quickcheck(prop as fn(Pair) -> bool);
}

#[test]
fn compatibility_implies_subtyping_of_erasures() {
    // "if check_compatibility(S1, S2) returns compatible or possibly compatible,
    // erase_struct_info(S1) <: erase_struct_info(S2) should hold"
    fn prop(p: Pair) -> bool {
        let c = with_env(p.2, |env| check_compatibility(&p.0, &p.1, env));
        c.outcome == Compat::Incompatible || is_subtype(&erase_struct_info(&p.0), &erase_struct_info(&p.1))
    }
    qc().quickcheck(prop as fn(Pair) -> bool);
}

#[test]
fn compatibility_is_reflexive() {
    fn prop(s: ASinfo, scoped: bool) -> bool {
        with_env(scoped, |env| check_compatibility(&s.0, &s.0, env)).outcome == Compat::Compatible
    }
    qc().quickcheck(prop as fn(ASinfo, bool) -> bool);
}

#[test]
fn more_specific_implies_compatible_or_possibly() {
    // A StructInfo more specific than the expected one is accepted where it is expected.
    fn prop(c: Chain) -> bool {
        with_env(true, |env| check_compatibility(&c.s1, &c.s3, env)).outcome != Compat::Incompatible
    }
    qc().quickcheck(prop as fn(Chain) -> bool);
}

#[test]
fn compatible_implies_more_specific() {
    // So SI-D-8.2.3's "annotation more specific than the value" warning can fire only
    // where check_compatibility already says "possibly compatible".
    fn prop(p: Pair) -> bool {
        with_env(p.2, |env| {
            check_compatibility(&p.0, &p.1, env).outcome != Compat::Compatible || is_more_specific(&p.0, &p.1, env)
        })
    }
    qc().quickcheck(prop as fn(Pair) -> bool);
}

#[test]
fn unify_is_an_upper_bound() {
    fn prop(p: Pair) -> bool {
        with_env(p.2, |env| {
            let u = unify_struct_info(&p.0, &p.1, env);
            more_specific(&p.0, &u, env) == Specific::Yes && more_specific(&p.1, &u, env) == Specific::Yes
        })
    }
    qc().quickcheck(prop as fn(Pair) -> bool);
}

#[test]
fn unify_is_idempotent() {
    fn prop(s: ASinfo) -> bool {
        with_env(true, |env| unify_struct_info(&s.0, &s.0, env)) == s.0
    }
    qc().quickcheck(prop as fn(ASinfo) -> bool);
}

/// Whether `s` mentions a shape variable outside `scope` (not counting a function's
/// own parameter binders).
fn mentions_out_of_scope(s: &StructInfo, scope: &imbl::HashSet<spec_model::grammar::PrimVar>) -> bool {
    let dims_out =
        |ds: &[PrimExpr], scope: &imbl::HashSet<_>| ds.iter().any(|d| d.vars().iter().any(|v| !scope.contains(v)));
    match &*s.kind {
        StructInfoKind::Tensor { shape: Some(Expr { kind: ExprKind::ShapeExpr(ds), .. }), .. } => dims_out(ds, scope),
        StructInfoKind::Shape { values: Some(vs), .. } => dims_out(vs, scope),
        StructInfoKind::Tuple { fields } => fields.iter().any(|f| mentions_out_of_scope(f, scope)),
        StructInfoKind::Func { params, ret, .. } => {
            let mut inner = scope.clone();
            let mut binders = Vec::new();
            for p in params.iter().flatten() {
                spec_model::struct_info::auxiliary::unbound_shape_vars(p, scope, &mut binders);
            }
            binders.into_iter().for_each(|v| {
                inner.insert(v);
            });
            params.iter().flatten().any(|p| mentions_out_of_scope(p, &inner)) || mentions_out_of_scope(ret, &inner)
        }
        _ => false,
    }
}

fn has_func(s: &StructInfo) -> bool {
    match &*s.kind {
        StructInfoKind::Func { .. } => true,
        StructInfoKind::Tuple { fields } => fields.iter().any(has_func),
        _ => false,
    }
}

#[test]
fn erase_to_well_defined_is_well_defined_and_more_general() {
    fn prop(s: ASinfo, keep_n: bool) -> bool {
        let vs = vars();
        let scope: imbl::HashSet<_> =
            if keep_n { std::iter::once(vs[0].clone()).collect() } else { Default::default() };
        let no_vars: imbl::HashSet<spec_model::grammar::Var> = Default::default();
        let e = erase_to_well_defined(&s.0, &no_vars, &scope);
        let general = has_func(&s.0) || with_env(false, |env| more_specific(&s.0, &e, env) == Specific::Yes);
        !mentions_out_of_scope(&e, &scope) && general
    }
    // Cheap, and the failing shapes are rare: more cases.
    QuickCheck::new().tests(20_000).max_tests(40_000).quickcheck(prop as fn(ASinfo, bool) -> bool);
}

// ---------------------------------------------------------------- the spec text's counterexamples

fn si(kind: StructInfoKind) -> StructInfo {
    StructInfo::new(kind, Span::SYNTHETIC)
}

fn tensor(dims: &[PrimExpr], dtype: DataType) -> StructInfo {
    let shape = Expr::new(ExprKind::ShapeExpr(dims.to_vec()), Span::SYNTHETIC);
    si(StructInfoKind::Tensor { shape: Some(shape), dtype, ndim: dims.len() as i64 })
}

fn shape(dims: &[PrimExpr]) -> StructInfo {
    si(StructInfoKind::Shape { values: Some(dims.to_vec()), ndim: dims.len() as i64 })
}

/// `<<:` with "possibly equal" shapes (SI-SP-4.4) is not transitive, contrary to SI-SP-2:
/// `(4,) <<: (m,)` and `(m,) <<: (5,)` hold (m may be 4, or 5), `(4,) <<: (5,)` does not.
#[test]
fn counterexample_more_specific_not_transitive() {
    let m = PrimExpr::var(&vars()[1]);
    let (four, sym, five) = (
        tensor(&[PrimExpr::int(4)], DataType::FLOAT32),
        tensor(&[m], DataType::FLOAT32),
        tensor(&[PrimExpr::int(5)], DataType::FLOAT32),
    );
    with_env(true, |env| {
        assert!(is_more_specific(&four, &sym, env));
        assert!(is_more_specific(&sym, &five, env));
        assert!(!is_more_specific(&four, &five, env));
    });
}

/// unify_struct_info's pseudocode returns `S1` when `S2` is ObjectStructInfo: for
/// `S1 = Tensor` that is not an upper bound of `S2 = Object` (Object <<: Tensor fails).
#[test]
fn counterexample_unify_with_object() {
    let t = tensor(&[PrimExpr::int(2)], DataType::FLOAT32);
    let object = StructInfo::object();
    with_env(true, |env| {
        let literal = t.clone();
        assert!(!is_more_specific(&object, &literal, env), "the literal result is not above Object");
        assert_eq!(unify_struct_info(&t, &object, env), object);
    });
}

/// The shape case's «if S2.values is defined: return S2» returns `S2 = (4,)` for
/// `S1 = (3,)`, which is not above `S1`.
#[test]
fn counterexample_unify_shape_values() {
    let (s1, s2) = (shape(&[PrimExpr::int(3)]), shape(&[PrimExpr::int(4)]));
    with_env(true, |env| {
        assert!(!is_more_specific(&s1, &s2, env), "the literal result is not above S1");
        let u = unify_struct_info(&s1, &s2, env);
        assert!(is_more_specific(&s1, &u, env) && is_more_specific(&s2, &u, env));
        assert_eq!(u, si(StructInfoKind::Shape { values: None, ndim: 1 }));
    });
}

/// The tensor case returns `S1` when the shapes are proven equal, even with different
/// dtypes: `Tensor((2,), f32)` is not above `Tensor((2,), i32)`.
#[test]
fn counterexample_unify_tensor_dtype() {
    let (s1, s2) = (tensor(&[PrimExpr::int(2)], DataType::FLOAT32), tensor(&[PrimExpr::int(2)], DataType::INT32));
    with_env(true, |env| {
        assert!(!is_more_specific(&s2, &s1, env), "the literal result is not above S2");
        let u = unify_struct_info(&s1, &s2, env);
        assert_eq!(u, tensor(&[PrimExpr::int(2)], DataType::void()));
    });
}

/// check_compatibility as written ignores purity: an impure function where a pure one
/// is expected would be compatible, yet its type is not a subtype (SUB-6.1). SI-CC-6.4
/// makes it incompatible, restoring the invariant.
#[test]
fn counterexample_compatibility_ignores_purity() {
    let t = tensor(&[PrimExpr::int(2)], DataType::FLOAT32);
    let f =
        |purity| si(StructInfoKind::Func { params: Some(vec![t.clone()]), ret: t.clone(), derive_func: None, purity });
    let (impure, pure) = (f(false), f(true));
    assert!(!is_subtype(&erase_struct_info(&impure), &erase_struct_info(&pure)));
    with_env(true, |env| {
        // Ignoring purity, as the text does, the two are identical: compatible.
        assert_eq!(check_compatibility(&pure, &pure, env).outcome, Compat::Compatible);
        let c = check_compatibility(&impure, &pure, env);
        assert_eq!((c.outcome, c.rule), (Compat::Incompatible, "SI-CC-6.4"));
    });
}

/// erase_to_well_defined under a function's parameters weakens the parameter, which
/// makes the function StructInfo more specific, not less: `(k + 1,) -> ()` erases
/// to `(ndim=1) -> ()`, and `Callable([(k+1,)]) <<: Callable([ndim=1])` fails (SI-SP-7.3
/// is contravariant). The invariant "S <<: erase_to_well_defined(S)" holds only outside
/// parameters.
#[test]
fn counterexample_erase_under_parameters() {
    let k = PrimExpr::var(&vars()[0]);
    let param =
        tensor(&[PrimExpr::binary(spec_model::grammar::PrimBinOp::Add, k, PrimExpr::int(1))], DataType::FLOAT32);
    let f = si(StructInfoKind::Func {
        params: Some(vec![param]),
        ret: si(StructInfoKind::Tuple { fields: vec![] }),
        derive_func: None,
        purity: true,
    });
    let no_vars: imbl::HashSet<spec_model::grammar::Var> = Default::default();
    let e = erase_to_well_defined(&f, &no_vars, &Default::default());
    with_env(false, |env| {
        assert!(!is_more_specific(&f, &e, env));
        assert!(is_more_specific(&e, &f, env));
    });
}

/// erase_to_well_defined's pseudocode adds the parameters' unbound shape variables to
/// the scope, then erases each parameter: erasing `(m, k + 1)` (k out of scope) removes
/// the only dimension binding `m`, yet the return `(m + 1,)` keeps `m`, now bound by
/// nothing. The model recomputes the binders from the erased parameters until stable.
#[test]
fn counterexample_erase_unbinds_a_return_variable() {
    let (k, m) = (PrimExpr::var(&vars()[0]), PrimExpr::var(&vars()[1]));
    let add1 = |e: PrimExpr| PrimExpr::binary(spec_model::grammar::PrimBinOp::Add, e, PrimExpr::int(1));
    let f = si(StructInfoKind::Func {
        params: Some(vec![tensor(&[m.clone(), add1(k)], DataType::FLOAT32)]),
        ret: tensor(&[add1(m)], DataType::FLOAT32),
        derive_func: None,
        purity: true,
    });
    let no_vars: imbl::HashSet<spec_model::grammar::Var> = Default::default();
    let e = erase_to_well_defined(&f, &no_vars, &Default::default());
    assert!(!mentions_out_of_scope(&e, &Default::default()), "{}", spec_model::text::print_struct_info(&e));
    let StructInfoKind::Func { ret, .. } = &*e.kind else { panic!("a function") };
    assert_eq!(ret, &si(StructInfoKind::Tensor { shape: None, dtype: DataType::FLOAT32, ndim: 1 }));
}

/// erase_to_well_defined's `ShapeStructInfo` path has no `return` when nothing is out
/// of scope (pseudocode.md line 182): the shape itself is meant.
#[test]
fn erratum_erase_to_well_defined_returns_the_shape() {
    let n = PrimExpr::var(&vars()[0]);
    let s = shape(&[n, PrimExpr::int(2)]);
    let scope: imbl::HashSet<_> = vars().into_iter().collect();
    let no_vars: imbl::HashSet<spec_model::grammar::Var> = Default::default();
    assert_eq!(erase_to_well_defined(&s, &no_vars, &scope), s);
    // Out of scope: the values are dropped, the rank kept.
    let e = erase_to_well_defined(&s, &no_vars, &Default::default());
    assert_eq!(e, si(StructInfoKind::Shape { values: None, ndim: 2 }));
}

/// get_shape_var_mapping's shape case maps `S1.values[i]` to itself (pseudocode.md line
/// 232); the tensor case maps it to `S2`'s value, which is meant: `n ↦ 3`.
#[test]
fn erratum_get_shape_var_mapping_maps_shapes_to_s2() {
    let n = vars()[0].clone();
    let (s1, s2) = (shape(&[PrimExpr::var(&n)]), shape(&[PrimExpr::int(3)]));
    let m = spec_model::struct_info::get_shape_var_mapping(&s1, &s2, &Default::default());
    assert_eq!(m.get(&n.id()), Some(&PrimExpr::int(3)));
    // A variable in scope is not a binder: no mapping.
    let scope: imbl::HashSet<_> = std::iter::once(n).collect();
    assert!(spec_model::struct_info::get_shape_var_mapping(&s1, &s2, &scope).is_empty());
}
