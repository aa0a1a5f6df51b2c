//! The prover's time budgets are hard bounds on the caller: a query Z3 overruns
//! (libz3 answers the interrupt late on some nonlinear problems: the first query
//! below runs 6.5 s under a 300 ms budget when the caller waits for it) still returns
//! `Unknown` right after its budget, and the auto prover's Z3 gets no more than what is left of the module
//! budget. The slack allowed is wide: these check that the bound holds, not speed.

use prover::z3_prover::{wait_idle, GRACE};
use prover::{AutoProver, ShapeProver, Verdict, Z3Prover};
use spec_model::text::parse_prim_exprs;
use std::time::{Duration, Instant};

const SLACK: Duration = Duration::from_millis(1000);

/// The tests run one at a time: Z3 work is serialized in the process, so a query of one
/// test waiting behind the other's overrunning worker would spend its budget waiting.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn overrunning_query() -> Vec<spec_model::grammar::PrimExpr> {
    parse_prim_exprs(&["T.floormod(n * (n + 1) * (n + 2), 3)", "0"]).unwrap()
}

#[test]
fn a_z3_query_returns_within_its_budget() {
    let _serial = serial();
    wait_idle();
    let q = overrunning_query();
    let z = Z3Prover::new(300);
    let start = Instant::now();
    assert_eq!(z.compare(&q[0], &q[1], &[]), Verdict::Unknown);
    let took = start.elapsed();
    assert!(took < Duration::from_millis(300) + GRACE + SLACK, "took {took:?}");
    assert!(z.timed_out());
    // The worker left behind does not stop the next query from being answered.
    wait_idle();
    let easy = parse_prim_exprs(&["n * m // m", "n"]).unwrap();
    assert_eq!(z.compare(&easy[0], &easy[1], &[]), Verdict::Equal);
    assert!(!z.timed_out());
}

#[test]
fn the_auto_prover_gives_z3_only_what_is_left_of_the_module_budget() {
    let _serial = serial();
    wait_idle();
    // Neither equal nor unequal: egg gives up at once; Z3, waited for, runs 3.2 s
    // under a 1 s budget.
    let q = parse_prim_exprs(&["T.floormod(n * n, 4)", "T.floormod(n, 4)"]).unwrap();
    let mut p = AutoProver::default();
    p.module_budget = Duration::from_millis(1000);
    let start = Instant::now();
    let v = p.compare(&q[0], &q[1], &[]);
    let took = start.elapsed();
    assert_eq!(v, Verdict::Unknown);
    assert!(took < Duration::from_millis(1000) + GRACE + SLACK, "took {took:?}");
}
