//! Ring normal forms: the egg back end's fast path. A `Shape` expression built from
//! `+ - *` and literals is a polynomial over its *atoms* (variables, and every other
//! subterm — divisions, min/max, selects, comparisons — keyed by its operator and its
//! operands' normal forms). Two sides whose difference is the zero polynomial are equal
//! wherever both are defined; a difference that is a nonzero constant, or a nonzero
//! constant plus monomials over variables (which are `>= 0`) with coefficients of the
//! same sign, is never zero. proofs-notes/prover.md (P-3) has the argument.

use crate::lang::Shape;
use egg::{Id, Language, RecExpr};
use std::collections::{BTreeMap, HashMap};

/// Expansion is abandoned beyond this many monomials (e.g. a high power of a sum).
const MAX_TERMS: usize = 256;

/// A monomial: atom indices in ascending order, with multiplicity.
type Mono = Vec<u32>;

/// A polynomial with integer coefficients (no zero coefficients stored).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Poly(BTreeMap<Mono, i128>);

impl Poly {
    fn constant(c: i128) -> Poly {
        let mut p = Poly::default();
        if c != 0 {
            p.0.insert(Vec::new(), c);
        }
        p
    }

    fn atom(a: u32) -> Poly {
        Poly(BTreeMap::from([(vec![a], 1)]))
    }

    fn add_term(&mut self, m: Mono, c: i128) -> Option<()> {
        let e = self.0.entry(m.clone()).or_insert(0);
        *e = e.checked_add(c)?;
        if *e == 0 {
            self.0.remove(&m);
        }
        Some(())
    }

    /// `self + k * other`.
    fn add_scaled(&self, other: &Poly, k: i128) -> Option<Poly> {
        let mut r = self.clone();
        for (m, c) in &other.0 {
            r.add_term(m.clone(), c.checked_mul(k)?)?;
        }
        (r.0.len() <= MAX_TERMS).then_some(r)
    }

    fn mul(&self, other: &Poly) -> Option<Poly> {
        let mut r = Poly::default();
        for (m1, c1) in &self.0 {
            for (m2, c2) in &other.0 {
                let mut m: Mono = m1.iter().chain(m2).copied().collect();
                m.sort_unstable();
                r.add_term(m, c1.checked_mul(*c2)?)?;
                if r.0.len() > MAX_TERMS {
                    return None;
                }
            }
        }
        Some(r)
    }

    /// The constant term.
    pub fn constant_term(&self) -> i128 {
        self.0.get(&Vec::new()).copied().unwrap_or(0)
    }

    pub fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn key(&self) -> String {
        let mut s = String::from("[");
        for (m, c) in &self.0 {
            s.push_str(&format!("{c}{m:?}"));
        }
        s.push(']');
        s
    }
}

/// Normal forms of every node of a `RecExpr` (children before parents, as egg stores
/// them, so one pass in order suffices and nothing recurses).
pub struct Normalizer {
    polys: Vec<Option<Poly>>,
    /// Whether each atom is a variable (so `>= 0`).
    atom_is_var: Vec<bool>,
}

impl Normalizer {
    pub fn new(expr: &RecExpr<Shape>) -> Normalizer {
        let mut atoms: HashMap<String, u32> = HashMap::new();
        let mut atom_is_var = Vec::new();
        let mut polys: Vec<Option<Poly>> = Vec::with_capacity(expr.as_ref().len());
        for node in expr.as_ref() {
            let kid = |i: &Id| polys[usize::from(*i)].as_ref();
            let p = match node {
                Shape::Num(c) => Some(Poly::constant(i128::from(*c))),
                Shape::Add([a, b]) => kid(a).zip(kid(b)).and_then(|(x, y)| x.add_scaled(y, 1)),
                Shape::Sub([a, b]) => kid(a).zip(kid(b)).and_then(|(x, y)| x.add_scaled(y, -1)),
                Shape::Mul([a, b]) => kid(a).zip(kid(b)).and_then(|(x, y)| x.mul(y)),
                other => {
                    // An atom: the operator and its operands' normal forms (an operand
                    // without one makes the atom unnameable, and the node gets none).
                    let mut key = match other {
                        Shape::Var(s) => format!("var {s}"),
                        _ => other.to_string(),
                    };
                    let mut named = true;
                    for c in other.children() {
                        match kid(c) {
                            Some(p) => key.push_str(&p.key()),
                            None => named = false,
                        }
                    }
                    named.then(|| {
                        let next = atoms.len() as u32;
                        let a = *atoms.entry(key).or_insert_with(|| {
                            atom_is_var.push(matches!(other, Shape::Var(_)));
                            next
                        });
                        Poly::atom(a)
                    })
                }
            };
            polys.push(p);
        }
        Normalizer { polys, atom_is_var }
    }

    /// The normal form of node `id`, if it has one.
    pub fn poly(&self, id: Id) -> Option<&Poly> {
        self.polys[usize::from(id)].as_ref()
    }

    /// `Some(true)`: `d` is 0 wherever defined; `Some(false)`: never 0 where defined.
    pub fn zero(&self, d: &Poly) -> Option<bool> {
        if d.is_zero() {
            return Some(true);
        }
        let c = d.constant_term();
        if c == 0 {
            return None;
        }
        // c + Σ k·m with every m over variables (>= 0) and every k of c's sign: |d| >= |c|.
        let same_sign = d.0.iter().all(|(m, k)| {
            m.is_empty() || (k.signum() == c.signum() && m.iter().all(|a| self.atom_is_var[*a as usize]))
        });
        same_sign.then_some(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verdict of the normal forms on `lhs - rhs`, both given as s-expressions.
    fn zero(lhs: &str, rhs: &str) -> Option<bool> {
        let e: RecExpr<Shape> = format!("(- {lhs} {rhs})").parse().expect("test expression");
        let n = Normalizer::new(&e);
        let root = Id::from(e.as_ref().len() - 1);
        n.poly(root).and_then(|p| n.zero(p))
    }

    #[test]
    fn ring_identities_are_equal() {
        assert_eq!(zero("(* (+ n 1) (- n 1))", "(- (* n n) 1)"), Some(true));
        assert_eq!(zero("(* (* n n) m)", "(* m (* n n))"), Some(true));
        assert_eq!(zero("(* (+ n m) (+ n m))", "(+ (+ (* n n) (* 2 (* n m))) (* m m))"), Some(true));
        // Atoms compare by their operands' normal forms.
        assert_eq!(zero("(fdiv (+ n m) 4)", "(fdiv (+ m n) 4)"), Some(true));
    }

    #[test]
    fn constant_and_same_sign_differences_are_never_zero() {
        assert_eq!(zero("(+ n 1)", "n"), Some(false));
        assert_eq!(zero("(+ (* n n) 5)", "0"), Some(false));
        assert_eq!(zero("0", "(+ (* 3 (* n m)) 2)"), Some(false));
    }

    #[test]
    fn mixed_signs_and_non_variable_atoms_are_undecided() {
        // n - m + 1 is 0 at m = n + 1.
        assert_eq!(zero("(+ n 1)", "m"), None);
        // Only variables are known to be >= 0: min(0 - n, 0) + 1 is 0 at n = 1.
        assert_eq!(zero("(+ (min (- 0 n) 0) 1)", "0"), None);
        assert_eq!(zero("(* n n)", "n"), None);
    }

    #[test]
    fn huge_expansions_are_abandoned_not_computed() {
        // (n + m + k + 1)^8 has 165 monomials; its square has far more than MAX_TERMS.
        let s = "(+ (+ (+ n m) k) 1)";
        let p2 = format!("(* {s} {s})");
        let p4 = format!("(* {p2} {p2})");
        let p8 = format!("(* {p4} {p4})");
        let p16 = format!("(* {p8} {p8})");
        assert_eq!(zero(&p16, "0"), None);
    }

    #[test]
    fn coefficient_overflow_is_abandoned() {
        let big = i64::MAX;
        let e = format!("(* (* (* {big} {big}) (* {big} {big})) n)");
        assert_eq!(zero(&e, "0"), None);
    }
}
