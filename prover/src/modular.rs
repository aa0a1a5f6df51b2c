//! Residues: the egg back end's second fast path, for disequalities no rewrite reaches
//! (parity, squares modulo 4). Reduction modulo `k` is a ring homomorphism ℤ → ℤ/k, so
//! if `lhs - rhs` is nonzero modulo `k` under every assignment of residues to the
//! variables, the sides differ wherever both are defined (`NotEqual`). Only `+ - *`,
//! literals, variables and `floormod` by a positive literal dividing `k` (whose value
//! is determined by the residue modulo `k`) are supported; anything else gives up.
//! proofs-notes/prover.md (P-3) has the argument.

use crate::lang::Shape;
use egg::{Id, RecExpr};

/// The moduli tried (besides the least common multiple of the `floormod` divisors).
const MODULI: &[i64] = &[2, 3, 4, 5, 8, 9];

/// At most this many residue assignments per modulus.
const MAX_ASSIGNMENTS: i64 = 4096;

/// Residues of every node under one assignment, or `None` if a node is unsupported.
fn residues(expr: &RecExpr<Shape>, k: i64, vars: &[egg::Symbol], assignment: &[i64]) -> Option<Vec<i64>> {
    let nodes = expr.as_ref();
    let mut r: Vec<i64> = Vec::with_capacity(nodes.len());
    for node in nodes {
        let at = |i: &Id| r[usize::from(*i)];
        let v = match node {
            Shape::Num(c) => c.rem_euclid(k),
            Shape::Var(s) => assignment[vars.iter().position(|v| v == s)?],
            Shape::Add([a, b]) => (at(a) + at(b)).rem_euclid(k),
            Shape::Sub([a, b]) => (at(a) - at(b)).rem_euclid(k),
            Shape::Mul([a, b]) => (at(a) * at(b)).rem_euclid(k),
            Shape::FMod([a, b]) => match nodes[usize::from(*b)] {
                Shape::Num(c) if c > 0 && k % c == 0 => at(a) % c,
                _ => return None,
            },
            _ => return None,
        };
        r.push(v);
    }
    Some(r)
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `true` when, for some modulus `k` to try, `holds` is true of the nodes' residues
/// under every assignment of residues modulo `k` to the variables.
fn for_some_modulus_always(expr: &RecExpr<Shape>, holds: impl Fn(&[i64]) -> bool) -> bool {
    let Some((ks, vars)) = moduli_and_vars(expr) else { return false };
    ks.into_iter().any(|k| {
        let Some(total) = u32::try_from(vars.len()).ok().and_then(|n| k.checked_pow(n)) else { return false };
        if total > MAX_ASSIGNMENTS {
            return false;
        }
        (0..total).all(|code| {
            let assignment: Vec<i64> = (0..vars.len()).map(|i| (code / k.pow(i as u32)) % k).collect();
            residues(expr, k, &vars, &assignment).is_some_and(|r| holds(&r))
        })
    })
}

/// `true` when `d` (a node of `expr`) is nonzero modulo some `k` under every residue
/// assignment: then `d` is never 0 where defined.
pub fn never_zero_mod(expr: &RecExpr<Shape>, d: Id) -> bool {
    for_some_modulus_always(expr, |r| r[usize::from(d)] != 0)
}

/// `true` when the nodes `a` and `b` of `expr` are equal wherever defined because
/// their values are determined by residues: built by `+ - *` from literals and
/// `floormod`s by literals dividing some `k` (a `floormod`'s value is its argument's
/// residue, which the variables' residues modulo `k` determine), and equal under every
/// assignment of residues. E.g. `n * (n + 1) % 2 == 0`.
pub fn always_equal_mod(expr: &RecExpr<Shape>, a: Id, b: Id) -> bool {
    for_some_modulus_always(expr, |r| {
        let exact = exact_values(expr.as_ref(), r);
        matches!((exact[usize::from(a)], exact[usize::from(b)]), (Some(x), Some(y)) if x == y)
    })
}

/// The moduli to try for `expr`: the fixed ones and the least common multiple of its
/// `floormod` divisors, each with the variables; `None` when a divisor is not a
/// small positive literal.
fn moduli_and_vars(expr: &RecExpr<Shape>) -> Option<(Vec<i64>, Vec<egg::Symbol>)> {
    let nodes = expr.as_ref();
    let (mut vars, mut lcm) = (Vec::new(), 1i64);
    for node in nodes {
        match node {
            Shape::Var(s) if !vars.contains(s) => vars.push(*s),
            Shape::FMod([_, b]) => match nodes[usize::from(*b)] {
                Shape::Num(c) if c > 0 && c <= 64 => {
                    lcm = lcm / gcd(lcm, c) * c;
                    if lcm > 64 {
                        return None;
                    }
                }
                _ => return None,
            },
            _ => {}
        }
    }
    let ks = MODULI.iter().copied().chain((lcm > 1).then_some(lcm)).filter(|k| k % lcm == 0).collect();
    Some((ks, vars))
}

/// The integer value of each node whose value the residues `r` determine exactly:
/// literals, `floormod`s (their value is their residue) and `+ - *` of such nodes.
fn exact_values(nodes: &[Shape], r: &[i64]) -> Vec<Option<i64>> {
    let mut exact: Vec<Option<i64>> = Vec::with_capacity(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        let at = |x: &Id| exact[usize::from(*x)];
        let v = match node {
            Shape::Num(c) => Some(*c),
            Shape::FMod(_) => Some(r[i]),
            Shape::Add([x, y]) => at(x).zip(at(y)).and_then(|(x, y)| x.checked_add(y)),
            Shape::Sub([x, y]) => at(x).zip(at(y)).and_then(|(x, y)| x.checked_sub(y)),
            Shape::Mul([x, y]) => at(x).zip(at(y)).and_then(|(x, y)| x.checked_mul(y)),
            _ => None,
        };
        exact.push(v);
    }
    exact
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never_zero(lhs: &str, rhs: &str) -> bool {
        let e: RecExpr<Shape> = format!("(- {lhs} {rhs})").parse().expect("test expression");
        let root = Id::from(e.as_ref().len() - 1);
        never_zero_mod(&e, root)
    }

    #[test]
    fn parity_and_squares_are_decided() {
        assert!(never_zero("(+ (* 2 n) 1)", "(* 2 m)"));
        assert!(never_zero("(* n (+ n 1))", "(+ (* 2 m) 1)"));
        assert!(never_zero("(fmod (* n n) 4)", "2"));
        assert!(never_zero("(* 3 n)", "(+ (* 3 m) 1)"));
    }

    #[test]
    fn satisfiable_equations_are_not() {
        // 2n = m at m = 2n; n*n = 2n + 3 at n = 3; n % 4 = 2 at n = 2.
        assert!(!never_zero("(* 2 n)", "m"));
        assert!(!never_zero("(* n n)", "(+ (* 2 n) 3)"));
        assert!(!never_zero("(fmod n 4)", "2"));
        assert!(!never_zero("n", "(+ n 0)"));
    }

    fn always_equal(lhs: &str, rhs: &str) -> bool {
        let e: RecExpr<Shape> = format!("(- {lhs} {rhs})").parse().expect("test expression");
        let root = e.as_ref().len() - 1;
        let Shape::Sub([a, b]) = e.as_ref()[root] else { panic!("a difference") };
        always_equal_mod(&e, a, b)
    }

    #[test]
    fn residues_decide_equalities_too() {
        // A product of consecutive integers is even; a square is 0 or 1 modulo 4, so
        // its residue modulo 2 equals the residue of the square modulo 4 modulo 2.
        assert!(always_equal("(fmod (* n (+ n 1)) 2)", "0"));
        assert!(always_equal("(fmod (* n (* (+ n 1) (+ n 2))) 3)", "0"));
        assert!(always_equal("(fmod (fmod (* n n) 4) 2)", "(fmod n 2)"));
        assert!(always_equal("(* 2 (fmod (* n (+ n 1)) 2))", "0"));
        // Equal residues do not make equal values: n and n + 2 agree modulo 2 only.
        assert!(!always_equal("n", "(+ n 2)"));
        assert!(!always_equal("(fmod (* n n) 4)", "0"));
        assert!(!always_equal("(fmod (* n n) 4)", "(fmod n 4)"));
    }

    #[test]
    fn unsupported_operators_give_up() {
        // Floor division is not determined by residues; neither is truncating modulo
        // (the dividend's sign is unknown) nor a variable modulus.
        assert!(!never_zero("(fdiv (+ (* 2 n) 1) 1)", "(* 2 m)"));
        assert!(!never_zero("(tmod (+ (* 2 n) 1) 2)", "0"));
        assert!(!never_zero("(fmod (+ (* 2 n) 1) m)", "0"));
    }
}
