//! Soundness of every back end (quickcheck): whenever a back end answers `Equal` or
//! `NotEqual` for a random pair of shape expressions over 2-3 variables, evaluating
//! both sides (spec-model's `eval_prim`, the semantics of proofs-notes/prover.md) on
//! many assignments — 0, 1, 2, small, large and near-overflow values — never
//! contradicts it. Egg and Z3 never contradict each other. 2,000 cases per back end.
//! Z3 runs with a smaller budget than its default (1 s, rlimit 100,000) to keep
//! `cargo test` short; soundness does not depend on the budget.

use prover::{AutoProver, EggProver, ShapeProver, SyntacticProver, Verdict, Z3Prover};
use quickcheck::{Arbitrary, Gen, QuickCheck};
use spec_model::grammar::{PrimBinOp, PrimExpr, PrimExprKind, PrimVar};
use spec_model::prim_eval::{eval_prim, PrimValue};
use spec_model::Span;
use std::sync::atomic::{AtomicUsize, Ordering};

const CASES: u64 = 2_000;

thread_local! {
    static VARS: Vec<PrimVar> = vec![PrimVar::shape_var("n"), PrimVar::shape_var("m"), PrimVar::shape_var("k")];
}

fn vars() -> Vec<PrimVar> {
    VARS.with(|v| v.clone())
}

const CONSTS: &[i64] = &[0, 1, 2, 3, 4, 7, -1, -2, 1 << 31, 1 << 62, i64::MAX];
/// Values each variable takes when checking a verdict.
const VALUES: &[i64] = &[0, 1, 2, 3, 7, (1 << 31) - 1, 1 << 32, 1 << 62, i64::MAX - 1, i64::MAX];

fn bin(op: PrimBinOp, a: PrimExpr, b: PrimExpr) -> PrimExpr {
    PrimExpr::binary(op, a, b)
}

fn gen_expr(g: &mut Gen, depth: u32, nvars: usize) -> PrimExpr {
    let vs = vars();
    if depth == 0 || u32::arbitrary(g) % 4 == 0 {
        return if bool::arbitrary(g) {
            PrimExpr::var(&vs[usize::arbitrary(g) % nvars])
        } else {
            PrimExpr::int(*g.choose(CONSTS).expect("non-empty"))
        };
    }
    let (a, b) = (gen_expr(g, depth - 1, nvars), gen_expr(g, depth - 1, nvars));
    use PrimBinOp::*;
    match u32::arbitrary(g) % 12 {
        0 | 1 => bin(Add, a, b),
        2 => bin(Sub, a, b),
        3 | 4 => bin(Mul, a, b),
        5 => bin(FloorDiv, a, b),
        6 => bin(FloorMod, a, b),
        7 => bin(Div, a, b),
        8 => bin(Mod, a, b),
        9 => bin(Min, a, b),
        10 => bin(Max, a, b),
        _ => {
            let op = *g.choose(&[Lt, Le, Eq]).expect("non-empty");
            let cond = bin(op, a.clone(), b.clone());
            let (t, f) = if bool::arbitrary(g) { (a, b) } else { (b, a) };
            PrimExpr::new(PrimExprKind::Select { cond, then_value: t, else_value: f }, Span::SYNTHETIC)
        }
    }
}

/// An expression equal to `e` over the integers, by a random identity.
fn transform(g: &mut Gen, e: &PrimExpr) -> PrimExpr {
    use PrimBinOp::*;
    let c = PrimExpr::int(*g.choose(&[1, 2, 3, 4]).expect("non-empty"));
    match u32::arbitrary(g) % 6 {
        0 => match &*e.kind {
            PrimExprKind::Binary { op: op @ (Add | Mul | Min | Max), a, b } => bin(*op, b.clone(), a.clone()),
            _ => bin(Add, e.clone(), PrimExpr::int(0)),
        },
        1 => bin(FloorDiv, bin(Mul, e.clone(), c.clone()), c),
        2 => bin(Sub, bin(Add, e.clone(), c.clone()), c),
        3 => match &*e.kind {
            PrimExprKind::Binary { op: Mul, a, b } => match &*b.kind {
                PrimExprKind::Binary { op: Add, a: x, b: y } => {
                    bin(Add, bin(Mul, a.clone(), x.clone()), bin(Mul, a.clone(), y.clone()))
                }
                _ => bin(Mul, b.clone(), a.clone()),
            },
            _ => bin(Mul, e.clone(), PrimExpr::int(1)),
        },
        4 => bin(Max, e.clone(), e.clone()),
        _ => e.clone(),
    }
}

/// A pair of expressions: independent, equal by an identity, or off by a constant.
#[derive(Clone, Debug)]
struct Pair(PrimExpr, PrimExpr);

impl Arbitrary for Pair {
    fn arbitrary(g: &mut Gen) -> Pair {
        let nvars = 2 + usize::arbitrary(g) % 2;
        let a = gen_expr(g, 3, nvars);
        let b = match u32::arbitrary(g) % 4 {
            0 => gen_expr(g, 3, nvars),
            1 => transform(g, &a),
            2 => bin(PrimBinOp::Add, transform(g, &a), PrimExpr::int(*g.choose(&[1, -1, 5]).expect("x"))),
            _ => {
                let once = transform(g, &a);
                transform(g, &once)
            }
        };
        Pair(a, b)
    }
}

/// Every assignment of the variables from `VALUES` where both sides evaluate.
fn outcomes(p: &Pair) -> Vec<(PrimValue, PrimValue)> {
    let vs = vars();
    let mut out = Vec::new();
    for &x in VALUES {
        for &y in VALUES {
            for &z in &[0, 1, 5, i64::MAX] {
                let env = |v: &PrimVar| {
                    let i = vs.iter().position(|w| w == v)?;
                    Some([x, y, z][i])
                };
                if let (Ok(a), Ok(b)) = (eval_prim(&p.0, &env), eval_prim(&p.1, &env)) {
                    out.push((a, b));
                }
            }
        }
    }
    out
}

fn same(a: PrimValue, b: PrimValue) -> bool {
    let int = |v: PrimValue| match v {
        PrimValue::Int(i) => Some(i),
        PrimValue::Bool(b) => Some(b as i64),
        PrimValue::Float(_) => None,
    };
    int(a) == int(b)
}

/// Does the verdict agree with every evaluation?
fn consistent(v: Verdict, p: &Pair) -> bool {
    match v {
        Verdict::Equal => outcomes(p).iter().all(|(a, b)| same(*a, *b)),
        Verdict::NotEqual => outcomes(p).iter().all(|(a, b)| !same(*a, *b)),
        Verdict::Unknown => true,
    }
}

fn check_backend(p: &dyn ShapeProver, decided: &AtomicUsize, pair: &Pair) -> bool {
    check_verdict("", p.compare(&pair.0, &pair.1, &[]), decided, pair)
}

/// Counts a decisive verdict and checks it against evaluation.
fn check_verdict(who: &str, v: Verdict, decided: &AtomicUsize, pair: &Pair) -> bool {
    if v != Verdict::Unknown {
        decided.fetch_add(1, Ordering::Relaxed);
    }
    let ok = consistent(v, pair);
    if !ok {
        eprintln!(
            "unsound {who}: {} vs {}: {v:?}",
            spec_model::text::print_prim_expr(&pair.0),
            spec_model::text::print_prim_expr(&pair.1)
        );
    }
    ok
}

macro_rules! soundness_test {
    ($name:ident, $make:expr, $min_decided:expr) => {
        #[test]
        fn $name() {
            static DECIDED: AtomicUsize = AtomicUsize::new(0);
            thread_local! { static P: Box<dyn ShapeProver> = Box::new($make); }
            fn prop(pair: Pair) -> bool {
                P.with(|p| check_backend(p.as_ref(), &DECIDED, &pair))
            }
            QuickCheck::new().tests(CASES).max_tests(CASES * 2).quickcheck(prop as fn(Pair) -> bool);
            let d = DECIDED.load(Ordering::Relaxed);
            println!("{} decided {d} of {CASES}", stringify!($name));
            // The pairs are built so that a good share is decidable.
            assert!(d >= $min_decided, "only {d} decided");
        }
    };
}

fn fast_z3() -> Z3Prover {
    let mut z = Z3Prover::new(1_000);
    z.rlimit = 100_000;
    z
}

soundness_test!(syntactic_is_sound, SyntacticProver, 100);
soundness_test!(auto_is_sound, AutoProver::with(EggProver::default(), fast_z3()), 400);

/// Egg and Z3 on the same pairs: each sound, and never contradicting each other (one
/// test, so each pair is decided once per back end).
#[test]
fn egg_and_z3_are_sound_and_never_contradict() {
    static EGG: AtomicUsize = AtomicUsize::new(0);
    static Z3: AtomicUsize = AtomicUsize::new(0);
    thread_local! { static EZ: (EggProver, Z3Prover) = (EggProver::default(), fast_z3()); }
    fn prop(pair: Pair) -> bool {
        EZ.with(|(e, z)| {
            let (a, b) = (e.compare(&pair.0, &pair.1, &[]), z.compare(&pair.0, &pair.1, &[]));
            let sound = check_verdict("egg", a, &EGG, &pair) & check_verdict("z3", b, &Z3, &pair);
            let agree = a == Verdict::Unknown || b == Verdict::Unknown || a == b;
            if !agree {
                eprintln!(
                    "egg {a:?}, z3 {b:?}: {} vs {}",
                    spec_model::text::print_prim_expr(&pair.0),
                    spec_model::text::print_prim_expr(&pair.1)
                );
            }
            sound && agree
        })
    }
    QuickCheck::new().tests(CASES).max_tests(CASES * 2).quickcheck(prop as fn(Pair) -> bool);
    let (e, z) = (EGG.load(Ordering::Relaxed), Z3.load(Ordering::Relaxed));
    println!("egg decided {e} of {CASES}, z3 decided {z} of {CASES}");
    assert!(e >= 400 && z >= 400, "egg {e}, z3 {z}");
}
