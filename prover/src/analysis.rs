//! The e-class analysis of the egg back end: constant folding, an interval of the
//! values, and totality (defined wherever its variables are: no division by a
//! possibly-zero divisor).
//!
//! Soundness invariant (proofs-notes/prover.md): every e-node of a class denotes the
//! same partial function over the unbounded integers, with the same domain (where no
//! divisor is zero); `constant = Some(c)` means its value is `c` wherever it is
//! defined; the interval contains its value wherever it is defined.

use crate::lang::Shape;
use egg::{Analysis, DidMerge, EGraph, Id, Symbol};
use spec_model::prim_eval::{floor_div, floor_mod};
use std::collections::HashMap;

/// Bounds beyond this are treated as unbounded (keeps i128 arithmetic exact).
const LIMIT: i128 = 1 << 100;

/// A closed interval; `None` is unbounded on that side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub lo: Option<i128>,
    pub hi: Option<i128>,
}

/// A bound kept only within `LIMIT` (`i128::MIN` has no `abs`: compare unsigned).
fn clamp(v: Option<i128>) -> Option<i128> {
    v.filter(|x| x.unsigned_abs() <= LIMIT as u128)
}

impl Interval {
    pub const ANY: Interval = Interval { lo: None, hi: None };
    pub const BOOL: Interval = Interval { lo: Some(0), hi: Some(1) };

    pub fn exact(v: i128) -> Interval {
        Interval { lo: clamp(Some(v)), hi: clamp(Some(v)) }
    }

    fn new(lo: Option<i128>, hi: Option<i128>) -> Interval {
        Interval { lo: clamp(lo), hi: clamp(hi) }
    }

    /// Every value `>= v`.
    pub fn at_least(&self, v: i128) -> bool {
        self.lo.is_some_and(|l| l >= v)
    }

    /// Every value `<= v`.
    pub fn at_most(&self, v: i128) -> bool {
        self.hi.is_some_and(|h| h <= v)
    }

    pub fn excludes(&self, v: i128) -> bool {
        self.lo.is_some_and(|l| l > v) || self.hi.is_some_and(|h| h < v)
    }

    fn add(self, o: Interval) -> Interval {
        let f = |a: Option<i128>, b: Option<i128>| Some(a? + b?);
        Interval::new(f(self.lo, o.lo), f(self.hi, o.hi))
    }

    fn neg(self) -> Interval {
        Interval::new(self.hi.map(|h| -h), self.lo.map(|l| -l))
    }

    pub(crate) fn mul(self, o: Interval) -> Interval {
        // Checked products: a bound whose product leaves i128 is unbounded (a wrapped
        // bound would be unsound). With an unbounded side, only the sign-determined
        // cases are kept.
        let m = |x: i128, y: i128| x.checked_mul(y);
        if let (Some(a), Some(b), Some(c), Some(d)) = (self.lo, self.hi, o.lo, o.hi) {
            if let (Some(p), Some(q), Some(r), Some(t)) = (m(a, c), m(a, d), m(b, c), m(b, d)) {
                let ps = [p, q, r, t];
                return Interval::new(ps.iter().min().copied(), ps.iter().max().copied());
            }
        }
        match (self.lo, self.hi, o.lo, o.hi) {
            (Some(a), hi1, Some(c), hi2) if a >= 0 && c >= 0 => {
                let hi = match (hi1, hi2) {
                    (Some(0), _) | (_, Some(0)) => Some(0),
                    (Some(b), Some(d)) => m(b, d),
                    _ => None,
                };
                Interval::new(m(a, c), hi)
            }
            _ => Interval::ANY,
        }
    }

    fn union(self, o: Interval) -> Interval {
        let lo = match (self.lo, o.lo) {
            (Some(a), Some(b)) => Some(a.min(b)),
            _ => None,
        };
        let hi = match (self.hi, o.hi) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        Interval { lo, hi }
    }

    fn intersect(self, o: Interval) -> Interval {
        let lo = match (self.lo, o.lo) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let hi = match (self.hi, o.hi) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Interval { lo, hi }
    }

    /// `a ÷ b` for a divisor that is at least 1 (floor or truncating division agree
    /// in monotonicity); unbounded otherwise.
    fn div(self, o: Interval, floor: bool) -> Interval {
        let d = |x: i128, y: i128| if floor { floor_div(x, y) } else { x / y };
        match (self.lo, self.hi, o.lo, o.hi) {
            (Some(a), Some(b), Some(c), Some(e)) if c >= 1 => {
                let qs = [d(a, c), d(a, e), d(b, c), d(b, e)];
                Interval::new(qs.iter().min().copied(), qs.iter().max().copied())
            }
            (Some(a), hi, Some(c), _) if a >= 0 && c >= 1 => Interval::new(Some(0), hi.map(|h| d(h, c))),
            _ => Interval::ANY,
        }
    }

    fn modulo(self, o: Interval, floor: bool) -> Interval {
        match (o.lo, o.hi) {
            (Some(c), hi) if c >= 1 => {
                let top = hi.map(|h| h - 1);
                if floor || self.at_least(0) {
                    let top = match (top, self.hi) {
                        (Some(t), Some(h)) if self.at_least(0) => Some(t.min(h)),
                        (t, _) => t,
                    };
                    Interval::new(Some(0), top)
                } else {
                    Interval::new(top.map(|t| -t), top)
                }
            }
            _ => Interval::ANY,
        }
    }
}

/// What the analysis knows about an e-class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    pub constant: Option<i64>,
    pub range: Interval,
    pub total: bool,
}

/// The analysis; `ranges` gives each variable's range, `conflict` records a merge of
/// classes with different constants (a soundness bug: the verdict is then `Unknown`).
#[derive(Default)]
pub struct ShapeAnalysis {
    pub ranges: HashMap<Symbol, (i128, i128)>,
    pub conflict: bool,
}

fn fit(v: i128) -> Option<i64> {
    i64::try_from(v).ok()
}

fn bool_fact(b: Option<bool>, total: bool) -> Facts {
    match b {
        Some(v) => Facts { constant: Some(v as i64), range: Interval::exact(v as i128), total },
        None => Facts { constant: None, range: Interval::BOOL, total },
    }
}

impl Analysis<Shape> for ShapeAnalysis {
    type Data = Facts;

    fn make(egraph: &mut EGraph<Shape, Self>, enode: &Shape) -> Facts {
        let f = |i: &Id| egraph[*i].data.clone();
        let binop = |a: &Id, b: &Id| (f(a), f(b));
        match enode {
            Shape::Num(n) => Facts { constant: Some(*n), range: Interval::exact(*n as i128), total: true },
            Shape::Var(s) => {
                let (lo, hi) = egraph.analysis.ranges.get(s).copied().unwrap_or((0, i64::MAX as i128));
                Facts { constant: None, range: Interval::new(Some(lo), Some(hi)), total: true }
            }
            Shape::Add([a, b]) | Shape::Sub([a, b]) | Shape::Mul([a, b]) => {
                let (x, y) = binop(a, b);
                let (constant, range) = match enode {
                    Shape::Add(_) => {
                        (x.constant.zip(y.constant).and_then(|(p, q)| p.checked_add(q)), x.range.add(y.range))
                    }
                    Shape::Sub(_) => {
                        (x.constant.zip(y.constant).and_then(|(p, q)| p.checked_sub(q)), x.range.add(y.range.neg()))
                    }
                    _ => (x.constant.zip(y.constant).and_then(|(p, q)| p.checked_mul(q)), x.range.mul(y.range)),
                };
                let range = constant.map_or(range, |c| Interval::exact(c as i128));
                Facts { constant, range, total: x.total && y.total }
            }
            Shape::TDiv([a, b]) | Shape::TMod([a, b]) | Shape::FDiv([a, b]) | Shape::FMod([a, b]) => {
                let (x, y) = binop(a, b);
                let floor = matches!(enode, Shape::FDiv(_) | Shape::FMod(_));
                let is_div = matches!(enode, Shape::TDiv(_) | Shape::FDiv(_));
                let constant = match (x.constant, y.constant) {
                    (Some(p), Some(q)) if q != 0 => {
                        let (p, q) = (p as i128, q as i128);
                        fit(match (is_div, floor) {
                            (true, true) => floor_div(p, q),
                            (true, false) => p / q,
                            (false, true) => floor_mod(p, q),
                            (false, false) => p % q,
                        })
                    }
                    _ => None,
                };
                let range = if is_div { x.range.div(y.range, floor) } else { x.range.modulo(y.range, floor) };
                let range = constant.map_or(range, |c| Interval::exact(c as i128));
                Facts { constant, range, total: x.total && y.total && y.range.excludes(0) }
            }
            Shape::Min([a, b]) | Shape::Max([a, b]) => {
                let (x, y) = binop(a, b);
                let is_min = matches!(enode, Shape::Min(_));
                // Both bounds needed on the side that can grow; either suffices on the other.
                let both = |p: Option<i128>, q: Option<i128>, f: fn(i128, i128) -> i128| Some(f(p?, q?));
                let either = |p: Option<i128>, q: Option<i128>, f: fn(i128, i128) -> i128| match (p, q) {
                    (Some(p), Some(q)) => Some(f(p, q)),
                    (p, q) => p.or(q),
                };
                let (lo, hi) = if is_min {
                    (both(x.range.lo, y.range.lo, i128::min), either(x.range.hi, y.range.hi, i128::min))
                } else {
                    (either(x.range.lo, y.range.lo, i128::max), both(x.range.hi, y.range.hi, i128::max))
                };
                let range = Interval::new(lo, hi);
                let constant = x.constant.zip(y.constant).map(|(p, q)| if is_min { p.min(q) } else { p.max(q) });
                let range = constant.map_or(range, |c| Interval::exact(c as i128));
                Facts { constant, range, total: x.total && y.total }
            }
            Shape::Eq([a, b]) | Shape::Ne([a, b]) | Shape::Lt([a, b]) | Shape::Le([a, b]) => {
                let (x, y) = binop(a, b);
                let (rx, ry) = (x.range, y.range);
                let value = match enode {
                    Shape::Lt(_) if rx.hi.zip(ry.lo).is_some_and(|(h, l)| h < l) => Some(true),
                    Shape::Lt(_) if rx.lo.zip(ry.hi).is_some_and(|(l, h)| l >= h) => Some(false),
                    Shape::Le(_) if rx.hi.zip(ry.lo).is_some_and(|(h, l)| h <= l) => Some(true),
                    Shape::Le(_) if rx.lo.zip(ry.hi).is_some_and(|(l, h)| l > h) => Some(false),
                    Shape::Eq(_) | Shape::Ne(_) => {
                        let disjoint = rx.hi.zip(ry.lo).is_some_and(|(h, l)| h < l)
                            || ry.hi.zip(rx.lo).is_some_and(|(h, l)| h < l);
                        let eq = match (x.constant, y.constant) {
                            (Some(p), Some(q)) => Some(p == q),
                            _ if disjoint => Some(false),
                            _ => None,
                        };
                        if matches!(enode, Shape::Eq(_)) {
                            eq
                        } else {
                            eq.map(|e| !e)
                        }
                    }
                    _ => None,
                };
                bool_fact(value, x.total && y.total)
            }
            Shape::And([a, b]) | Shape::Or([a, b]) => {
                let (x, y) = binop(a, b);
                let value = x.constant.zip(y.constant).map(|(p, q)| {
                    if matches!(enode, Shape::And(_)) {
                        p != 0 && q != 0
                    } else {
                        p != 0 || q != 0
                    }
                });
                bool_fact(value, x.total && y.total)
            }
            Shape::Not(a) => {
                let x = f(a);
                bool_fact(x.constant.map(|c| c == 0), x.total)
            }
            Shape::Select([c, t, e]) => {
                let (fc, ft, fe) = (f(c), f(t), f(e));
                let total = fc.total && ft.total && fe.total;
                match fc.constant {
                    Some(0) => Facts { total, ..fe },
                    Some(_) => Facts { total, ..ft },
                    None => {
                        let constant = ft.constant.filter(|k| Some(*k) == fe.constant);
                        Facts { constant, range: ft.range.union(fe.range), total }
                    }
                }
            }
        }
    }

    fn merge(&mut self, to: &mut Facts, from: Facts) -> DidMerge {
        let before = to.clone();
        let constant = match (to.constant, from.constant) {
            (Some(a), Some(b)) if a != b => {
                self.conflict = true;
                Some(a)
            }
            (a, b) => a.or(b),
        };
        let merged = Facts { constant, range: to.range.intersect(from.range), total: to.total || from.total };
        // A total class has values (every variable's range is nonempty), so an empty
        // interval means an unsound fact somewhere: refuse to decide.
        if merged.total && merged.range.lo.zip(merged.range.hi).is_some_and(|(l, h)| l > h) {
            self.conflict = true;
        }
        let did = DidMerge(merged != before, merged != from);
        *to = merged;
        did
    }

    fn modify(egraph: &mut EGraph<Shape, Self>, id: Id) {
        // A constant class that is total (defined everywhere) gets its literal; a class
        // defined only somewhere must not join the literal, defined everywhere.
        let facts = &egraph[id].data;
        if let (Some(c), true) = (facts.constant, facts.total) {
            let lit = egraph.add(Shape::Num(c));
            egraph.union(id, lit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A product can be exactly `i128::MIN` (`-2^63 * 2^64`), which has no `abs`: it
    /// must be dropped as out of range, and its negation must not overflow (found by
    /// `cargo fuzz run diff_exec`).
    #[test]
    fn the_most_negative_product_is_dropped_not_negated() {
        let p = Interval::exact(-(1i128 << 63)).mul(Interval::exact(1i128 << 64));
        assert_eq!(p, Interval::ANY);
        assert_eq!(p.neg(), Interval::ANY);
        let q = Interval::new(Some(i128::MIN), Some(i128::MAX));
        assert_eq!(q.neg().add(q), Interval::ANY);
    }
}
