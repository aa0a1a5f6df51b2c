//! The rewrites of the egg back end. Each is an identity over the unbounded integers
//! that also preserves the domain (where no divisor is zero): both sides are defined
//! for exactly the same values of the variables. A rewrite that drops a subterm
//! (`a * 0 → 0`) therefore requires it to be total; one that removes a division needs
//! its divisor provably nonzero. proofs-notes/prover.md argues each; the unit tests
//! below check each side condition, and the property tests check the verdicts.

#[cfg(test)]
use crate::analysis::Interval;
use crate::analysis::{Facts, ShapeAnalysis};
use crate::lang::Shape;
use egg::{rewrite as rw, EGraph, Id, Rewrite, Subst, Var};

type EG = EGraph<Shape, ShapeAnalysis>;

fn var(name: &str) -> Var {
    name.parse().expect("a pattern variable literal")
}

fn facts<'a>(eg: &'a EG, s: &Subst, v: Var) -> &'a Facts {
    &eg[s[v]].data
}

/// `?v` is defined wherever its variables are.
fn total(v: &str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let v = var(v);
    move |eg, _, s| facts(eg, s, v).total
}

/// A total constant other than 0.
fn nonzero_const(f: &Facts) -> bool {
    f.total && f.constant.is_some_and(|c| c != 0)
}

/// `?v` is a (total) constant other than 0.
fn nonzero(v: &str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let v = var(v);
    move |eg, _, s| nonzero_const(facts(eg, s, v))
}

/// `?v` is a (total) constant other than 0, and `?t` is total.
fn nonzero_and_total(v: &str, t: &str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let (v, t) = (var(v), var(t));
    move |eg, _, s| nonzero_const(facts(eg, s, v)) && facts(eg, s, t).total
}

/// Every value of `?a` is at most every value of `?b`, and `?drop` is total.
fn below(a: &str, b: &str, drop: &str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let (a, b, drop) = (var(a), var(b), var(drop));
    move |eg, _, s| {
        let (x, y) = (facts(eg, s, a).range, facts(eg, s, b).range);
        x.hi.zip(y.lo).is_some_and(|(h, l)| h <= l) && facts(eg, s, drop).total
    }
}

/// `0 <= ?a < ?c` for a positive (total) constant `?c` (and `?a` total when `drop`).
fn small(a: &str, c: &str, drop: bool) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let (a, c) = (var(a), var(c));
    move |eg, _, s| {
        let (x, fc) = (facts(eg, s, a), facts(eg, s, c));
        let fits = fc.constant.is_some_and(|k| k > 0 && x.range.at_least(0) && x.range.at_most(k as i128 - 1));
        fits && fc.total && (!drop || x.total)
    }
}

/// `?a >= 0` and `?b >= 1`: truncating and floor division agree.
fn nonneg_over_pos(a: &str, b: &str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let (a, b) = (var(a), var(b));
    move |eg, _, s| facts(eg, s, a).range.at_least(0) && facts(eg, s, b).range.at_least(1)
}

/// `?b >= 1` and `?c >= 1`.
fn both_pos(b: &str, c: &str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let (b, c) = (var(b), var(c));
    move |eg, _, s| facts(eg, s, b).range.at_least(1) && facts(eg, s, c).range.at_least(1)
}

/// `?c` is the (total) constant 0, and `?drop` is total.
fn is_false(c: &str, drop: &str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let (c, drop) = (var(c), var(drop));
    move |eg, _, s| {
        let fc = facts(eg, s, c);
        fc.total && fc.constant == Some(0) && facts(eg, s, drop).total
    }
}

/// `?c` is a (total) constant other than 0, and `?drop` is total.
fn is_true(c: &str, drop: &str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let (c, drop) = (var(c), var(drop));
    move |eg, _, s| nonzero_const(facts(eg, s, c)) && facts(eg, s, drop).total
}

/// The rewrites.
pub fn rules() -> Vec<Rewrite<Shape, ShapeAnalysis>> {
    let mut rs: Vec<Rewrite<Shape, ShapeAnalysis>> = vec![
        // Commutativity (exact, same subterms).
        rw!("comm-add"; "(+ ?a ?b)" => "(+ ?b ?a)"),
        rw!("comm-mul"; "(* ?a ?b)" => "(* ?b ?a)"),
        rw!("comm-min"; "(min ?a ?b)" => "(min ?b ?a)"),
        rw!("comm-max"; "(max ?a ?b)" => "(max ?b ?a)"),
        rw!("comm-eq"; "(== ?a ?b)" => "(== ?b ?a)"),
        rw!("comm-ne"; "(!= ?a ?b)" => "(!= ?b ?a)"),
        rw!("comm-and"; "(and ?a ?b)" => "(and ?b ?a)"),
        rw!("comm-or"; "(or ?a ?b)" => "(or ?b ?a)"),
        // Identities and annihilators.
        rw!("add-0"; "(+ ?a 0)" => "?a"),
        rw!("mul-1"; "(* ?a 1)" => "?a"),
        rw!("mul-0"; "(* ?a 0)" => "0" if total("?a")),
        rw!("sub-self"; "(- ?a ?a)" => "0" if total("?a")),
        rw!("neg-neg"; "(* -1 (* -1 ?a))" => "?a"),
        rw!("min-self"; "(min ?a ?a)" => "?a"),
        rw!("max-self"; "(max ?a ?a)" => "?a"),
        rw!("and-self"; "(and ?a ?a)" => "?a"),
        rw!("or-self"; "(or ?a ?a)" => "?a"),
        rw!("not-not"; "(not (not ?a))" => "(!= ?a 0)"),
        rw!("ne-bool"; "(!= (< ?a ?b) 0)" => "(< ?a ?b)"),
        rw!("ne-bool-le"; "(!= (<= ?a ?b) 0)" => "(<= ?a ?b)"),
        // Min and max decided by the intervals.
        rw!("min-left"; "(min ?a ?b)" => "?a" if below("?a", "?b", "?b")),
        rw!("max-right"; "(max ?a ?b)" => "?b" if below("?a", "?b", "?a")),
        // Select.
        rw!("select-lt-min"; "(select (< ?a ?b) ?a ?b)" => "(min ?a ?b)"),
        rw!("select-le-min"; "(select (<= ?a ?b) ?a ?b)" => "(min ?a ?b)"),
        rw!("select-lt-max"; "(select (< ?a ?b) ?b ?a)" => "(max ?a ?b)"),
        rw!("select-le-max"; "(select (<= ?a ?b) ?b ?a)" => "(max ?a ?b)"),
        rw!("select-same"; "(select ?c ?a ?a)" => "?a" if total("?c")),
        rw!("select-not"; "(select (not ?c) ?a ?b)" => "(select ?c ?b ?a)"),
        rw!("select-true"; "(select ?c ?a ?b)" => "?a" if is_true("?c", "?b")),
        rw!("select-false"; "(select ?c ?a ?b)" => "?b" if is_false("?c", "?a")),
        // Comparisons.
        rw!("not-lt"; "(not (< ?a ?b))" => "(<= ?b ?a)"),
        rw!("not-le"; "(not (<= ?a ?b))" => "(< ?b ?a)"),
        rw!("not-eq"; "(not (== ?a ?b))" => "(!= ?a ?b)"),
        rw!("lt-diff"; "(< ?a ?b)" => "(< 0 (- ?b ?a))"),
        rw!("le-diff"; "(<= ?a ?b)" => "(<= 0 (- ?b ?a))"),
        rw!("eq-diff"; "(== ?a ?b)" => "(== 0 (- ?b ?a))"),
        // Division and modulo by a constant or positive divisor.
        rw!("fdiv-1"; "(fdiv ?a 1)" => "?a"),
        rw!("tdiv-1"; "(tdiv ?a 1)" => "?a"),
        rw!("fmod-1"; "(fmod ?a 1)" => "0" if total("?a")),
        rw!("tmod-1"; "(tmod ?a 1)" => "0" if total("?a")),
        rw!("fdiv-cancel"; "(fdiv (* ?a ?c) ?c)" => "?a" if nonzero("?c")),
        rw!("tdiv-cancel"; "(tdiv (* ?a ?c) ?c)" => "?a" if nonzero("?c")),
        rw!("fmod-mul"; "(fmod (* ?a ?c) ?c)" => "0" if nonzero_and_total("?c", "?a")),
        rw!("tmod-mul"; "(tmod (* ?a ?c) ?c)" => "0" if nonzero_and_total("?c", "?a")),
        rw!("fdiv-add-mul"; "(fdiv (+ ?a (* ?b ?c)) ?c)" => "(+ (fdiv ?a ?c) ?b)" if nonzero("?c")),
        rw!("fmod-add-mul"; "(fmod (+ ?a (* ?b ?c)) ?c)" => "(fmod ?a ?c)" if nonzero_and_total("?c", "?b")),
        rw!("div-mod"; "(+ (* (fdiv ?a ?c) ?c) (fmod ?a ?c))" => "?a" if nonzero("?c")),
        rw!("fdiv-small"; "(fdiv ?a ?c)" => "0" if small("?a", "?c", true)),
        rw!("fmod-small"; "(fmod ?a ?c)" => "?a" if small("?a", "?c", false)),
        rw!("tdiv-floor"; "(tdiv ?a ?b)" => "(fdiv ?a ?b)" if nonneg_over_pos("?a", "?b")),
        rw!("tmod-floor"; "(tmod ?a ?b)" => "(fmod ?a ?b)" if nonneg_over_pos("?a", "?b")),
        rw!("fdiv-fdiv"; "(fdiv (fdiv ?a ?b) ?c)" => "(fdiv ?a (* ?b ?c))" if both_pos("?b", "?c")),
    ];
    // Both directions (exact, same subterms, each evaluated on both sides).
    rs.extend(rw!("assoc-add"; "(+ ?a (+ ?b ?c))" <=> "(+ (+ ?a ?b) ?c)"));
    rs.extend(rw!("assoc-mul"; "(* ?a (* ?b ?c))" <=> "(* (* ?a ?b) ?c)"));
    rs.extend(rw!("sub-neg"; "(- ?a ?b)" <=> "(+ ?a (* -1 ?b))"));
    rs.extend(rw!("distribute"; "(* ?a (+ ?b ?c))" <=> "(+ (* ?a ?b) (* ?a ?c))"));
    rs.extend(rw!("min-plus"; "(+ (min ?a ?b) ?c)" <=> "(min (+ ?a ?c) (+ ?b ?c))"));
    rs.extend(rw!("max-plus"; "(+ (max ?a ?b) ?c)" <=> "(max (+ ?a ?c) (+ ?b ?c))"));
    rs.extend(rw!("neg-min"; "(* -1 (min ?a ?b))" <=> "(max (* -1 ?a) (* -1 ?b))"));
    rs.extend(rw!("assoc-min"; "(min ?a (min ?b ?c))" <=> "(min (min ?a ?b) ?c)"));
    rs.extend(rw!("assoc-max"; "(max ?a (max ?b ?c))" <=> "(max (max ?a ?b) ?c)"));
    rs
}

/// Each conditional rewrite fires when its side condition holds and does not when it
/// fails. Where the condition protects the value (not only the domain), the negative
/// case names an assignment where the unconditional rewrite is wrong.
#[cfg(test)]
mod tests {
    use super::*;
    use egg::{RecExpr, Runner};

    /// Does rule `name` alone (with the analysis) put `lhs` and `rhs` in one class?
    fn fires(name: &str, lhs: &str, rhs: &str) -> bool {
        let rs: Vec<_> = rules().into_iter().filter(|r| r.name.as_str() == name).collect();
        assert_eq!(rs.len(), 1, "no rule {name}");
        let mut eg = EG::new(ShapeAnalysis::default());
        let parse = |s: &str| s.parse::<RecExpr<Shape>>().expect("test expression");
        let (a, b) = (eg.add_expr(&parse(lhs)), eg.add_expr(&parse(rhs)));
        let runner = Runner::default().with_egraph(eg).with_iter_limit(3).run(&rs);
        assert!(!runner.egraph.analysis.conflict);
        runner.egraph.find(a) == runner.egraph.find(b)
    }

    fn check(name: &str, pos: &[(&str, &str)], neg: &[(&str, &str)]) {
        for (l, r) in pos {
            assert!(fires(name, l, r), "{name} should rewrite {l} to {r}");
        }
        for (l, r) in neg {
            assert!(!fires(name, l, r), "{name} must not rewrite {l} to {r}");
        }
    }

    /// A partial term (undefined at n = 0) in place of a total one.
    const PARTIAL: &str = "(fdiv 1 n)";

    #[test]
    fn annihilators_need_a_total_operand() {
        check("mul-0", &[("(* n 0)", "0")], &[(&format!("(* {PARTIAL} 0)"), "0")]);
        check("sub-self", &[("(- (* n m) (* n m))", "0")], &[(&format!("(- {PARTIAL} {PARTIAL})"), "0")]);
        check("fmod-1", &[("(fmod n 1)", "0")], &[(&format!("(fmod {PARTIAL} 1)"), "0")]);
        check("tmod-1", &[("(tmod n 1)", "0")], &[(&format!("(tmod {PARTIAL} 1)"), "0")]);
    }

    #[test]
    fn min_max_need_ordered_intervals_and_a_total_dropped_side() {
        // min(n, 4) is not n at n = 5.
        let partial_nonneg = format!("(max 0 {PARTIAL})");
        check(
            "min-left",
            &[("(min (fmod n 4) 4)", "(fmod n 4)")],
            &[("(min n 4)", "n"), (&format!("(min 0 {partial_nonneg})"), "0")],
        );
        // max(n, 4) is not 4 at n = 5.
        check(
            "max-right",
            &[("(max (fmod n 4) 4)", "4")],
            &[("(max n 4)", "4"), (&format!("(max (* -1 (+ 1 {partial_nonneg})) 0)"), "0")],
        );
    }

    #[test]
    fn select_rules_need_a_known_condition_and_total_dropped_parts() {
        check("select-same", &[("(select (< n m) k k)", "k")], &[(&format!("(select (< {PARTIAL} m) k k)"), "k")]);
        check(
            "select-true",
            &[("(select (< 0 (+ n 1)) n m)", "n")],
            &[("(select (< 1 (+ n 1)) n m)", "n"), (&format!("(select (< 0 (+ n 1)) n {PARTIAL})"), "n")],
        );
        check(
            "select-false",
            &[("(select (< (+ n 1) 0) n m)", "m")],
            &[("(select (< (+ n 1) 2) n m)", "m"), (&format!("(select (< (+ n 1) 0) {PARTIAL} m)"), "m")],
        );
    }

    #[test]
    fn cancellations_need_a_nonzero_constant_divisor() {
        // With m = 0 the left sides are undefined, the right sides are not.
        check("fdiv-cancel", &[("(fdiv (* n 4) 4)", "n"), ("(fdiv (* n -3) -3)", "n")], &[("(fdiv (* n m) m)", "n")]);
        check("tdiv-cancel", &[("(tdiv (* n 4) 4)", "n")], &[("(tdiv (* n m) m)", "n")]);
        check(
            "fmod-mul",
            &[("(fmod (* n 4) 4)", "0")],
            &[("(fmod (* n m) m)", "0"), (&format!("(fmod (* {PARTIAL} 4) 4)"), "0")],
        );
        check("tmod-mul", &[("(tmod (* n 4) 4)", "0")], &[("(tmod (* n m) m)", "0")]);
        check(
            "fdiv-add-mul",
            &[("(fdiv (+ n (* m 4)) 4)", "(+ (fdiv n 4) m)")],
            &[("(fdiv (+ n (* m k)) k)", "(+ (fdiv n k) m)")],
        );
        check(
            "fmod-add-mul",
            &[("(fmod (+ n (* m 4)) 4)", "(fmod n 4)")],
            &[("(fmod (+ n (* m k)) k)", "(fmod n k)"), (&format!("(fmod (+ n (* {PARTIAL} 4)) 4)"), "(fmod n 4)")],
        );
        check("div-mod", &[("(+ (* (fdiv n 4) 4) (fmod n 4))", "n")], &[("(+ (* (fdiv n m) m) (fmod n m))", "n")]);
    }

    #[test]
    fn small_dividends_need_a_known_range() {
        // n // 4 is not 0 at n = 4; n % 4 is not n at n = 4.
        let partial_small = format!("(max 0 (min 3 {PARTIAL}))");
        check(
            "fdiv-small",
            &[("(fdiv (fmod n 4) 4)", "0")],
            &[("(fdiv n 4)", "0"), ("(fdiv (fmod n 5) 4)", "0"), (&format!("(fdiv {partial_small} 4)"), "0")],
        );
        check("fmod-small", &[("(fmod (fmod n 3) 4)", "(fmod n 3)")], &[("(fmod n 4)", "n")]);
    }

    #[test]
    fn truncation_is_floor_only_for_nonnegative_over_positive() {
        // (0 - 5) / 2 = -2 but (0 - 5) // 2 = -3; 5 / -2 = -2 but 5 // -2 = -3.
        check(
            "tdiv-floor",
            &[("(tdiv n 4)", "(fdiv n 4)"), ("(tdiv n (+ m 1))", "(fdiv n (+ m 1))")],
            &[("(tdiv (- n 5) 2)", "(fdiv (- n 5) 2)"), ("(tdiv n -2)", "(fdiv n -2)"), ("(tdiv n m)", "(fdiv n m)")],
        );
        check(
            "tmod-floor",
            &[("(tmod n 4)", "(fmod n 4)")],
            &[("(tmod (- n 5) 2)", "(fmod (- n 5) 2)"), ("(tmod n -2)", "(fmod n -2)")],
        );
    }

    #[test]
    fn nested_floor_division_needs_positive_divisors() {
        // n = 5: (5 // -2) // -3 = 1 but 5 // 6 = 0.
        check(
            "fdiv-fdiv",
            &[("(fdiv (fdiv n 2) 3)", "(fdiv n (* 2 3))")],
            &[("(fdiv (fdiv n -2) -3)", "(fdiv n (* -2 -3))"), ("(fdiv (fdiv n m) 3)", "(fdiv n (* m 3))")],
        );
    }

    #[test]
    fn interval_products_never_wrap() {
        // 2^64 * 2^64 leaves i128's range; the product must be unbounded, not wrapped.
        let big = Interval { lo: Some(0), hi: Some(1 << 64) };
        let p = big.mul(big);
        assert!(p.lo == Some(0) && p.hi.is_none(), "{p:?}");
        let neg = Interval { lo: Some(-(1 << 90)), hi: Some(1 << 90) };
        assert_eq!(neg.mul(neg), Interval::ANY);
    }
}
