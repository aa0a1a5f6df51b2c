//! `eval(p) == eval(normalize(p))` over random well-formed programs (spec-model's
//! builder: nested SeqExprs, Ifs, closures applied in place, tuples, DataflowBlocks,
//! mostly out of normal form), and evaluation never panics. Static type checking is
//! not required: the outcome compared is a value or an error kind, on both sides.

#[allow(dead_code)]
#[path = "../../spec-model/tests/props/builder.rs"]
mod builder;
#[path = "../../spec-model/tests/common/mod.rs"]
mod common;

use builder::Builder;
use oracle::eval::run::{on_big_stack, outcome, same_outcome};
use oracle::eval::Limits;
use quickcheck::{Arbitrary, Gen};
use spec_model::normal_form::{check_normal_form, normalize};
use spec_model::text::{print_module, DEFAULT_WIDTH};

const CASES: u64 = 2_000;
const LIMITS: Limits = Limits { fuel: 100_000, max_depth: 200, memory: 256 << 20 };
const ARGS: &[&str] = &[
    "R.const([1.5, -2], \"float32\"), R.const(True, \"bool\")",
    "R.const([0, 3], \"float32\"), R.const(False, \"bool\")",
];

/// One seed: the program, its normalized form, and their outcomes on each argument
/// list; `Ok((out of normal form, runs that returned values))`.
fn check_seed(seed: u64) -> Result<(bool, usize), String> {
    let mut g = Gen::new(16);
    for _ in 0..(seed % 97) {
        let _ = u8::arbitrary(&mut g);
    }
    let m = Builder { g: &mut g, names: seed as usize }.module();
    let n = normalize(&m).map_err(|e| format!("normalize failed: {e:?}"))?;
    let mut values = 0;
    for args in ARGS {
        let call = format!("main({args})");
        let (a, b) = (outcome(&m, &call, LIMITS)?, outcome(&n, &call, LIMITS)?);
        values += usize::from(a.is_ok());
        same_outcome(&a, &b, 0.0)
            .map_err(|e| format!("{call}: {e}\n--- program\n{}", print_module(&m, DEFAULT_WIDTH)))?;
    }
    Ok((!check_normal_form(&m).is_empty(), values))
}

#[test]
fn normalization_preserves_the_meaning_of_random_programs() {
    let (not_normal, values) = on_big_stack(|| {
        let (mut not_normal, mut values) = (0u64, 0u64);
        for seed in 0..CASES {
            match check_seed(seed) {
                Ok((nn, v)) => {
                    not_normal += u64::from(nn);
                    values += v as u64;
                }
                Err(e) => panic!("seed {seed}: {e}"),
            }
        }
        (not_normal, values)
    })
    .expect("the evaluation thread starts");
    println!("{not_normal} of {CASES} programs out of normal form; {values} runs returned values");
    assert!(not_normal > CASES / 2, "the builder must mostly produce non-normal programs");
    assert!(values > CASES / 4, "too few runs returned a value ({values}): the test would prove little");
}
