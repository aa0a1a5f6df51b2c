//! The identities and a few basics, on every back end.

use prover::{AutoProver, EggProver, ShapeProver, SyntacticProver, Verdict, Z3Prover};
use spec_model::text::parse_prim_exprs;

fn verdict(p: &dyn ShapeProver, lhs: &str, rhs: &str) -> Verdict {
    let es = parse_prim_exprs(&[lhs, rhs]).unwrap_or_else(|e| panic!("{lhs} / {rhs}: {e}"));
    p.compare(&es[0], &es[1], &[])
}

const CASES: &[(&str, &str, Verdict)] = &[
    ("(n + 1) * (n - 1)", "n * n - 1", Verdict::Equal),
    ("n * n * m", "m * n * n", Verdict::Equal),
    ("T.Select(n < m, n, m)", "T.min(n, m)", Verdict::Equal),
    ("n + 1", "n", Verdict::NotEqual),
    ("n * 2", "2 * n", Verdict::Equal),
    ("(n * 4) // 4", "n", Verdict::Equal),
    ("(n * 4 + 3) % 4", "3", Verdict::Equal),
    ("n // 1", "n", Verdict::Equal),
    ("n", "m", Verdict::Unknown),
    ("n * n + 1", "0", Verdict::NotEqual),
    ("T.max(n, 0)", "n", Verdict::Equal),
];

fn run(p: &dyn ShapeProver, name: &str, expect_all: bool) {
    for (l, r, want) in CASES {
        let got = verdict(p, l, r);
        if expect_all {
            assert_eq!(got, *want, "{name}: {l} vs {r}");
        } else {
            assert!(got == *want || got == Verdict::Unknown, "{name}: {l} vs {r}: {got:?}, expected {want:?}");
        }
    }
}

#[test]
fn z3_decides_the_examples() {
    run(&Z3Prover::default(), "z3", true);
}

#[test]
fn egg_decides_the_examples() {
    run(&EggProver::default(), "egg", true);
}

#[test]
fn auto_decides_the_examples() {
    run(&AutoProver::default(), "auto", true);
}

#[test]
fn syntactic_is_sound_on_the_examples() {
    run(&SyntacticProver, "syntactic", false);
}

/// Found by the soundness property: an interval product that wrapped around i128 made
/// egg answer `NotEqual`, but with m = 1 and n <= 4 both sides are 2147483648.
#[test]
fn regression_wrapped_interval_product() {
    let (l, r) = ("2147483648", "9223372036854775807 % 2147483648 - 3 * 1 + T.Select(4 <= n, n, 4) * m");
    for p in [&EggProver::default() as &dyn ShapeProver, &AutoProver::default()] {
        assert_eq!(verdict(p, l, r), Verdict::Unknown);
    }
}
