//! Inputs at and beyond the parser's limits give errors, not stack overflows,
//! even on a test thread's default 2 MiB stack.

use spec_model::text::parse_module;

fn func(body_expr: &str) -> String {
    format!("@R.function\ndef main(x: R.Tensor((2,), \"float32\")):\n    y = {body_expr}\n    return y\n")
}

fn nested(open: &str, close: &str, inner: &str, depth: usize) -> String {
    format!("{}{}{}", open.repeat(depth), inner, close.repeat(depth))
}

#[test]
fn deep_nesting_just_under_the_limit_parses() {
    for (open, close) in [("(", ")"), ("R.negative(", ")"), ("(", ",)")] {
        let src = func(&nested(open, close, "x", 95));
        let r = parse_module(&src);
        assert!(r.is_ok(), "{open}: {:?}", r.err());
        // And it prints and re-parses.
        spec_model::text::check_round_trip(&r.unwrap()).unwrap();
    }
}

#[test]
fn deep_nesting_beyond_the_limit_is_a_limit_error() {
    for (open, close) in [("(", ")"), ("R.negative(", ")"), ("[", "]"), ("-", "")] {
        for depth in [150, 10_000, 200_000] {
            let src = func(&nested(open, close, "x", depth));
            let err = parse_module(&src).expect_err("too deep");
            assert_eq!(err.diagnostic().code, "limit", "{open} x {depth}: {err}");
        }
    }
}

#[test]
fn deep_statement_nesting_is_a_limit_error() {
    let mut src = String::from("@R.function\ndef main(c: R.Tensor((), \"bool\")):\n");
    for d in 1..150 {
        src.push_str(&"    ".repeat(d));
        src.push_str("if c:\n");
    }
    src.push_str(&"    ".repeat(150));
    src.push_str("y = c\n");
    let err = parse_module(&src).expect_err("too deep");
    assert_eq!(err.diagnostic().code, "limit", "{err}");
}

#[test]
fn huge_constant_shapes_and_literals_are_errors() {
    for e in [
        "R.const([1], \"int32\", shape=(1000000000, 1000000000))",
        "R.const(99999999999999999999999999999999999999999999, \"int64\")",
        "R.const(300, \"uint8\")",
        "R.const(-1, \"uint64\")",
        "R.shape([99999999999999999999])",
    ] {
        let err = parse_module(&func(e)).expect_err(e);
        assert_eq!(err.diagnostic().code, "syntax", "{e}: {err}");
    }
}

#[test]
fn operator_and_postfix_chains_count_as_nesting() {
    // Each operator of a chain nests the tree one level deeper, as brackets do.
    for (item, sep) in [("x", " + "), ("x", " * "), ("x", " - ")] {
        let chain = |n: usize| vec![item; n].join(sep);
        let ok = parse_module(&func(&chain(90))).expect("90 terms are within the limit");
        // What fmt prints of it (nested R.add calls) parses again.
        spec_model::text::check_round_trip(&ok).unwrap();
        for n in [150, 100_000] {
            let err = parse_module(&func(&chain(n))).expect_err("too long a chain");
            assert_eq!(err.diagnostic().code, "limit", "{sep} x {n}: {err}");
        }
    }
    for (head, link) in [("x", "(x)"), ("(x,)", "[0]"), ("x", ".a")] {
        for n in [150, 100_000] {
            let err = parse_module(&func(&format!("{head}{}", link.repeat(n)))).expect_err("too long a chain");
            assert_eq!(err.diagnostic().code, "limit", "{link} x {n}: {err}");
        }
    }
}

#[test]
fn a_block_of_too_many_statements_is_a_limit_error() {
    let max = spec_model::limits::Budgets::DEFAULT.statements;
    let body = |n: usize| "    y = x\n".repeat(n);
    let src = |n: usize| format!("@R.function\ndef main(x: R.Tensor((2,), \"float32\")):\n{}    return x\n", body(n));
    assert!(parse_module(&src(max - 1)).is_ok());
    let err = parse_module(&src(max + 1)).expect_err("too many statements");
    assert_eq!(err.diagnostic().code, "limit", "{err}");
}
