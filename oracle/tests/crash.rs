//! `Crash`: what the evaluator raises where a checked program cannot go (E-14). The
//! programs below parse but break a well-formedness criterion, so only an evaluator
//! run without the checker reaches the state; a checked program never does.

use oracle::eval::run::{eval_text, same_outcome};
use oracle::eval::{ErrorKind, Limits, Machine};
use spec_model::text::parse_module;
use spec_model::well_formed::check_well_formed;

fn crash_of(src: &str, broken: &str) -> (ErrorKind, String) {
    let m = parse_module(src).expect("parses");
    assert!(check_well_formed(&m).iter().any(|d| d.code == broken), "the program must break {broken}");
    let mut mach = Machine::new(&m, Limits::default());
    match eval_text(&mut mach, r#"main(R.const([1, 2], "int32"))"#).expect("the call parses") {
        Err(e) => (e.kind, e.rule),
        Ok(_) => panic!("the run must crash"),
    }
}

#[test]
fn a_variable_without_a_value_crashes() {
    let src = include_str!("fixtures/unbound_variable.rx");
    assert_eq!(crash_of(src, "WF-3"), (ErrorKind::Crash, "WF-3".to_string()));
}

#[test]
fn an_op_evaluated_as_a_value_crashes() {
    let src = r#"
@R.function
def main(x: R.Tensor((2,), "int32")):
    y = R.add
    return y
"#;
    assert_eq!(crash_of(src, "WF-8"), (ErrorKind::Crash, "WF-8".to_string()));
}

#[test]
fn two_crashes_never_agree() {
    let crash = Err(ErrorKind::Crash);
    assert!(same_outcome(&crash, &crash, 0.0).is_err());
    assert!(same_outcome(&crash, &Err(ErrorKind::OpError), 0.0).is_err());
    assert!(same_outcome(&Err(ErrorKind::OpError), &Err(ErrorKind::OpError), 0.0).is_ok());
}
