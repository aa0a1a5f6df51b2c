//! The benchmark suite (`prover::suite`): every label agrees with evaluation, no back
//! end answers unsoundly, and the auto back end (what `oracle prove` and `oracle
//! check` use) decides every query Z3 decides.

use prover::suite::{Truth, SUITE};
use prover::{AutoProver, Backend, ShapeProver, Verdict, Z3Prover};
use spec_model::grammar::{PrimExpr, PrimVar};
use spec_model::prim_eval::{eval_prim, PrimValue};
use spec_model::text::parse_prim_exprs;
use std::collections::BTreeSet;

fn parse(lhs: &str, rhs: &str) -> (PrimExpr, PrimExpr) {
    let es = parse_prim_exprs(&[lhs, rhs]).unwrap_or_else(|e| panic!("{lhs} / {rhs}: {}", e.0.message));
    (es[0].clone(), es[1].clone())
}

fn free_vars(e: &PrimExpr, out: &mut Vec<PrimVar>) {
    for v in e.vars() {
        if !out.contains(&v) {
            out.push(v)
        }
    }
}

fn as_int(v: PrimValue) -> Option<i64> {
    match v {
        PrimValue::Int(i) => Some(i),
        PrimValue::Bool(b) => Some(b as i64),
        PrimValue::Float(_) => None,
    }
}

/// Evaluates both sides on every assignment of values from `0..=12` and a few large
/// values; returns (some assignment made them equal, some made them differ).
fn witnesses(lhs: &PrimExpr, rhs: &PrimExpr) -> (bool, bool) {
    let mut vars = Vec::new();
    free_vars(lhs, &mut vars);
    free_vars(rhs, &mut vars);
    let values: Vec<i64> = (0..=12).chain([1 << 31, (1 << 62) - 1, 1 << 62, i64::MAX]).collect();
    let (mut equal, mut differ) = (false, false);
    let mut idx = vec![0usize; vars.len()];
    loop {
        let env = |v: &PrimVar| Some(values[idx[vars.iter().position(|w| w == v)?]]);
        if let (Ok(a), Ok(b)) = (eval_prim(lhs, &env), eval_prim(rhs, &env)) {
            if as_int(a) == as_int(b) {
                equal = true;
            } else {
                differ = true;
            }
        }
        // The next assignment (odometer order).
        let mut i = 0;
        loop {
            if i == idx.len() {
                return (equal, differ);
            }
            idx[i] += 1;
            if idx[i] < values.len() {
                break;
            }
            idx[i] = 0;
            i += 1;
        }
    }
}

#[test]
fn the_suite_is_large_enough_and_every_label_agrees_with_evaluation() {
    assert!(SUITE.len() >= 60);
    let categories: BTreeSet<_> = SUITE.iter().map(|q| q.category).collect();
    assert!(categories.len() >= 5, "{categories:?}");
    for q in SUITE {
        let (l, r) = parse(q.lhs, q.rhs);
        let (equal, differ) = witnesses(&l, &r);
        let ok = match q.truth {
            Truth::Equal => equal && !differ,
            Truth::NotEqual => differ && !equal,
            Truth::Neither => equal && differ,
        };
        assert!(
            ok,
            "{} vs {} labelled {:?}: equal somewhere {equal}, different somewhere {differ}",
            q.lhs, q.rhs, q.truth
        );
    }
}

#[test]
fn no_back_end_answers_unsoundly_and_auto_decides_what_z3_decides() {
    let z3 = Z3Prover::default();
    let auto = AutoProver::default();
    let others: Vec<(Backend, Box<dyn ShapeProver>)> =
        [Backend::Syntactic, Backend::Egg].into_iter().map(|b| (b, b.prover())).collect();
    let mut decided_by_auto = 0;
    for q in SUITE {
        let (l, r) = parse(q.lhs, q.rhs);
        for (b, p) in &others {
            let v = p.compare(&l, &r, &[]);
            assert!(q.truth.admits(v), "{} answered {v:?} on {} vs {} ({:?})", b.name(), q.lhs, q.rhs, q.truth);
        }
        let start = std::time::Instant::now();
        let vz = z3.compare(&l, &r, &[]);
        let z3_time = start.elapsed();
        assert!(q.truth.admits(vz), "z3 answered {vz:?} on {} vs {}", q.lhs, q.rhs);
        auto.clear_cache();
        auto.start_module();
        let va = auto.compare(&l, &r, &[]);
        assert!(q.truth.admits(va), "auto answered {va:?} on {} vs {}", q.lhs, q.rhs);
        // Z3 has a time budget: an answer found in the second half of it may be missed
        // by another run on a busy machine.
        let comfortably = z3_time.as_millis() < u128::from(z3.timeout_ms / 2);
        if vz != Verdict::Unknown && comfortably {
            assert_eq!(va, vz, "auto must decide what z3 decides: {} vs {}", q.lhs, q.rhs);
        }
        decided_by_auto += usize::from(va != Verdict::Unknown);
    }
    let decidable = SUITE.iter().filter(|q| q.truth.decidable()).count();
    println!("auto decided {decided_by_auto} of {decidable} decidable queries");
}
