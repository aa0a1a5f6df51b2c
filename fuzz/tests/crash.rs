//! `diff_exec` treats `Crash` (an error no checked program can raise) as a bug on the
//! side that raised it, never as "same error" (DESIGN.md, "Errors are values").

use fuzz::invariants::{check_eval, same_outcome};
use fuzz::Module;
use oracle::eval::ErrorKind;
use spec_model::grammar::{NDArray, Scalar};
use spec_model::text::parse_module;

#[test]
fn a_crash_on_either_side_is_a_mismatch() {
    let crash = Err(ErrorKind::Crash);
    assert!(same_outcome(&crash, &crash).is_err(), "two crashes must not agree");
    assert!(same_outcome(&crash, &Err(ErrorKind::OpError)).is_err());
    assert!(same_outcome(&Err(ErrorKind::OpError), &crash).is_err());
    assert!(same_outcome(&Err(ErrorKind::OpError), &Err(ErrorKind::OpError)).is_ok());
}

#[test]
fn an_oracle_crash_breaks_an_invariant() {
    // Breaks WF-3, so the evaluator, run without the checker, reaches an unbound variable.
    let ir = parse_module(include_str!("../../oracle/tests/fixtures/unbound_variable.rx")).expect("parses");
    let x = NDArray::from_scalars(spec_model::grammar::DataType::INT32, vec![2], &[Scalar::Int(1), Scalar::Int(2)]);
    let m = Module { ir, entry: "main".into(), inputs: vec![x.expect("an array")] };
    let Err(v) = check_eval(&m) else { panic!("the oracle crashed: an invariant must break") };
    assert_eq!(v.invariant, "no Crash", "{}", v.detail);
}
