//! Property tests of Types in Relax (quickcheck, ≥ 1,000 cases each): subtyping is
//! reflexive and transitive and agrees with the rules it is the closure of; `find_lub`
//! is an upper bound below every common upper bound found by search; `find_glb` is
//! symmetric and the greatest common lower bound found by search; `erase_struct_info`
//! inverts `wrap_type`. Unit tests show the spec text's counterexamples
//! (proofs-notes/invariants.md).

#[path = "props/gen.rs"]
mod gen;

use gen::{gen_type, qc, strengthen, weaken, AType, SmallType};
use quickcheck::{Arbitrary, Gen};
use spec_model::grammar::{DataType, Type};
use spec_model::struct_info::wrap_type;
use spec_model::types::{erase_struct_info, find_glb, find_lub, is_subtype};

/// A type, a chain of two random weakenings, and random subtypes of the first.
#[derive(Clone, Debug)]
struct Chain {
    t1: Type,
    t2: Type,
    t3: Type,
    below: Type,
}

impl Arbitrary for Chain {
    fn arbitrary(g: &mut Gen) -> Chain {
        let t1 = gen_type(g, 2);
        let t2 = weaken(g, &t1);
        let t3 = weaken(g, &t2);
        let below = strengthen(g, &t1);
        Chain { t1, t2, t3, below }
    }
}

/// Two types and candidate bounds: weakenings (upper) and strengthenings (lower) of each.
#[derive(Clone, Debug)]
struct Bounds {
    t1: Type,
    t2: Type,
    uppers: Vec<Type>,
    lowers: Vec<Type>,
}

impl Arbitrary for Bounds {
    fn arbitrary(g: &mut Gen) -> Bounds {
        let t1 = SmallType::arbitrary(g).0;
        // Half the time the second type is related to the first.
        let t2 = match u32::arbitrary(g) % 4 {
            0 => weaken(g, &t1),
            1 => strengthen(g, &t1),
            _ => SmallType::arbitrary(g).0,
        };
        let mut uppers = Vec::new();
        let mut lowers = Vec::new();
        for _ in 0..12 {
            uppers.push(weaken(g, &t1));
            uppers.push(weaken(g, &t2));
            lowers.push(strengthen(g, &t1));
            lowers.push(strengthen(g, &t2));
        }
        Bounds { t1, t2, uppers, lowers }
    }
}

#[test]
fn sub_1_reflexive() {
    fn prop(t: AType) -> bool {
        is_subtype(&t.0, &t.0)
    }
    qc().quickcheck(prop as fn(AType) -> bool);
}

#[test]
fn subtyping_agrees_with_the_rules_and_is_transitive() {
    // SUB-3..6 build t2 and t3 from t1; the closed form must accept each step and
    // (SUB-2) the composite, and every strengthening.
    fn prop(c: Chain) -> bool {
        is_subtype(&c.t1, &c.t2)
            && is_subtype(&c.t2, &c.t3)
            && is_subtype(&c.t1, &c.t3)
            && is_subtype(&c.below, &c.t1)
            && is_subtype(&c.below, &c.t3)
    }
    qc().quickcheck(prop as fn(Chain) -> bool);
}

#[test]
fn sub_2_transitive_on_random_triples() {
    fn prop(a: SmallType, b: SmallType, c: SmallType) -> bool {
        let (a, b, c) = (a.0, b.0, c.0);
        !(is_subtype(&a, &b) && is_subtype(&b, &c)) || is_subtype(&a, &c)
    }
    qc().quickcheck(prop as fn(SmallType, SmallType, SmallType) -> bool);
}

#[test]
fn subtyping_is_antisymmetric() {
    fn prop(a: SmallType, b: SmallType) -> bool {
        !(is_subtype(&a.0, &b.0) && is_subtype(&b.0, &a.0)) || a.0 == b.0
    }
    qc().quickcheck(prop as fn(SmallType, SmallType) -> bool);
}

#[test]
fn find_lub_is_the_least_upper_bound() {
    fn prop(b: Bounds) -> bool {
        let lub = find_lub(&b.t1, &b.t2);
        let upper = is_subtype(&b.t1, &lub) && is_subtype(&b.t2, &lub);
        let least =
            b.uppers.iter().filter(|u| is_subtype(&b.t1, u) && is_subtype(&b.t2, u)).all(|u| is_subtype(&lub, u));
        upper && least && find_lub(&b.t2, &b.t1) == lub
    }
    qc().quickcheck(prop as fn(Bounds) -> bool);
}

#[test]
fn find_glb_is_symmetric_and_the_greatest_lower_bound() {
    fn prop(b: Bounds) -> bool {
        let glb = find_glb(&b.t1, &b.t2);
        if glb != find_glb(&b.t2, &b.t1) {
            return false;
        }
        let common: Vec<&Type> = b.lowers.iter().filter(|l| is_subtype(l, &b.t1) && is_subtype(l, &b.t2)).collect();
        match glb {
            Some(g) => is_subtype(&g, &b.t1) && is_subtype(&g, &b.t2) && common.iter().all(|l| is_subtype(l, &g)),
            // No GLB: the search finds no common lower bound either.
            None => common.is_empty(),
        }
    }
    qc().quickcheck(prop as fn(Bounds) -> bool);
}

#[test]
fn erase_struct_info_inverts_wrap_type() {
    fn prop(t: AType) -> bool {
        erase_struct_info(&wrap_type(&t.0)) == t.0
    }
    qc().quickcheck(prop as fn(AType) -> bool);
}

// ---------------------------------------------------------------- the spec text's counterexamples

fn func(arg: Type, ret: Type, pure: bool) -> Type {
    Type::Func { arg_types: vec![arg], ret_type: Box::new(ret), pure }
}

/// ERRATUM in find_glb: «`ret_ndim == T2.ndim`» is a comparison, so read literally
/// `find_glb(ShapeType(-1), ShapeType(2))` is `ShapeType(-1)`, which is not below
/// `ShapeType(2)`. The assignment gives `ShapeType(2)`.
#[test]
fn counterexample_find_glb_comparison_typo() {
    let (a, b) = (Type::Shape { ndim: -1 }, Type::Shape { ndim: 2 });
    let literal = Type::Shape { ndim: -1 };
    assert!(!is_subtype(&literal, &b), "the literal reading is not a lower bound");
    assert_eq!(find_glb(&a, &b), Some(Type::Shape { ndim: 2 }));
}

/// find_glb's «if they are not both pure or both impure: return None»: yet the pure
/// function type is below both (SUB-6.1), so a GLB exists. T-3 returns it.
#[test]
fn counterexample_find_glb_mixed_purity() {
    let t = Type::DynTensor { ndim: 1, dtype: DataType::FLOAT32 };
    let pure = func(t.clone(), t.clone(), true);
    let impure = func(t.clone(), t.clone(), false);
    assert!(is_subtype(&pure, &pure) && is_subtype(&pure, &impure), "pure is a common lower bound");
    assert_eq!(find_glb(&pure, &impure), Some(pure.clone()));
    assert_eq!(find_lub(&pure, &impure), impure);
}

/// erase_struct_info's pseudocode erases every FuncStructInfo to `pure=False`: then
/// `erase(wrap_type(T))` is not `T` for a pure function type, and a closure annotated
/// `R.Callable(..., purity=True)` could never be called in a DataflowBlock. T-1 keeps
/// the purity.
#[test]
fn counterexample_erase_drops_purity() {
    let t = Type::DynTensor { ndim: 1, dtype: DataType::FLOAT32 };
    let pure = func(t.clone(), t.clone(), true);
    let literal = func(t.clone(), t, false);
    assert!(!is_subtype(&literal, &pure), "the literal erasure is not a subtype of the wrapped type");
    assert_eq!(erase_struct_info(&wrap_type(&pure)), pure);
}
