//! The auto back end: syntactic, then egg, then Z3, the first decisive answer wins;
//! answers are cached by the canonical text of the pair (variables renamed by first
//! occurrence).

use crate::egg_prover::EggProver;
use crate::z3_prover::Z3Prover;
use spec_model::grammar::{PrimExpr, PrimExprKind, PrimVar};
use spec_model::struct_info::{ShapeProver, SyntacticProver, Verdict};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt::Write;
use std::time::{Duration, Instant};

/// The canonical text of a pair: structure, literals with their dtypes, variables
/// numbered by first occurrence (with their dtypes). Renaming variables consistently
/// on both sides cannot change a verdict, so alpha-equivalent pairs share an entry.
pub fn canonical_key(lhs: &PrimExpr, rhs: &PrimExpr) -> String {
    fn go(e: &PrimExpr, names: &mut HashMap<u64, usize>, out: &mut String) {
        match &*e.kind {
            PrimExprKind::Var(v) => {
                let next = names.len();
                let i = *names.entry(v.id()).or_insert(next);
                let _ = write!(out, "v{i}:{}", v.dtype());
            }
            PrimExprKind::IntImm { value, dtype } => {
                let _ = write!(out, "{value}:{dtype}");
            }
            PrimExprKind::FloatImm { value, dtype } => {
                let _ = write!(out, "f{:x}:{dtype}", value.0.to_bits());
            }
            PrimExprKind::Binary { op, a, b } => {
                let _ = write!(out, "({} ", op.spec_name());
                go(a, names, out);
                out.push(' ');
                go(b, names, out);
                out.push(')');
            }
            PrimExprKind::Not(a) => {
                out.push_str("(Not ");
                go(a, names, out);
                out.push(')');
            }
            PrimExprKind::Select { cond, then_value, else_value } => {
                out.push_str("(Select");
                for x in [cond, then_value, else_value] {
                    out.push(' ');
                    go(x, names, out);
                }
                out.push(')');
            }
            PrimExprKind::Cast { dtype, value } => {
                let _ = write!(out, "(Cast {dtype} ");
                go(value, names, out);
                out.push(')');
            }
        }
    }
    let (mut names, mut s) = (HashMap::new(), String::new());
    go(lhs, &mut names, &mut s);
    s.push_str(" == ");
    go(rhs, &mut names, &mut s);
    s
}

/// Which back end answered, for statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecidedBy {
    Cache,
    Syntactic,
    Egg,
    Z3,
    Nobody,
}

/// Syntactic, then egg, then Z3, with a cache.
pub struct AutoProver {
    pub egg: EggProver,
    pub z3: Z3Prover,
    /// The time egg and Z3 may spend between two calls of [`AutoProver::start_module`]
    /// (LIMIT-prover); after it, only the syntactic back end answers (the rest are
    /// `Unknown`).
    pub module_budget: Duration,
    spent: Cell<Duration>,
    cache: RefCell<HashMap<String, Verdict>>,
    last: RefCell<Option<DecidedBy>>,
}

impl Default for AutoProver {
    fn default() -> Self {
        AutoProver::with(EggProver::default(), Z3Prover::default())
    }
}

impl AutoProver {
    /// An auto prover over the given back ends, with the module budget in force
    /// (`spec_model::limits::current().prover_module_ms`).
    pub fn with(egg: EggProver, z3: Z3Prover) -> AutoProver {
        AutoProver {
            egg,
            z3,
            module_budget: Duration::from_millis(spec_model::limits::current().prover_module_ms),
            spent: Cell::default(),
            cache: RefCell::default(),
            last: RefCell::default(),
        }
    }

    /// A new module: its queries get the whole module budget again.
    pub fn start_module(&self) {
        self.spent.set(Duration::ZERO);
    }

    /// Takes the prover budgets of `b` (LIMIT-prover): per module, per Z3 query, and
    /// the highest degree Z3 is asked about. Cached answers stay (a budget only turns
    /// answers into `Unknown`, and those are not cached).
    pub fn apply_budgets(&mut self, b: &spec_model::limits::Budgets) {
        self.module_budget = Duration::from_millis(b.prover_module_ms);
        self.z3.timeout_ms = u32::try_from(b.prover_query_ms).unwrap_or(u32::MAX);
        self.z3.max_degree = b.z3_degree;
    }

    /// Which back end decided the last query.
    pub fn last_decided_by(&self) -> Option<DecidedBy> {
        *self.last.borrow()
    }

    /// Forgets every cached answer.
    pub fn clear_cache(&self) {
        self.cache.borrow_mut().clear();
    }
}

impl ShapeProver for AutoProver {
    fn compare(&self, lhs: &PrimExpr, rhs: &PrimExpr, scope: &[PrimVar]) -> Verdict {
        let key = canonical_key(lhs, rhs);
        if let Some(v) = self.cache.borrow().get(&key) {
            *self.last.borrow_mut() = Some(DecidedBy::Cache);
            return *v;
        }
        let mut answer = (Verdict::Unknown, DecidedBy::Nobody);
        for by in [DecidedBy::Syntactic, DecidedBy::Egg, DecidedBy::Z3] {
            let left = self.module_budget.saturating_sub(self.spent.get());
            if by != DecidedBy::Syntactic && left.is_zero() {
                // Not cached: the next module may have the time to decide it.
                *self.last.borrow_mut() = Some(DecidedBy::Nobody);
                return Verdict::Unknown;
            }
            let start = Instant::now();
            let v = match by {
                DecidedBy::Syntactic => SyntacticProver.compare(lhs, rhs, scope),
                DecidedBy::Egg => self.egg.compare(lhs, rhs, scope),
                // Z3 within what is left of the module budget: the bound stays hard.
                _ => self.z3.compare_within(lhs, rhs, left.min(Duration::from_millis(u64::from(self.z3.timeout_ms)))),
            };
            if by != DecidedBy::Syntactic {
                self.spent.set(self.spent.get() + start.elapsed());
            }
            if v != Verdict::Unknown {
                answer = (v, by);
                break;
            }
        }
        if answer.0 == Verdict::Unknown && self.z3.timed_out() {
            // Not cached either: with more time, or Z3 not busy, it may be decided.
            *self.last.borrow_mut() = Some(DecidedBy::Nobody);
            return Verdict::Unknown;
        }
        // Equality is symmetric: the swapped pair gets the answer too.
        let mut cache = self.cache.borrow_mut();
        cache.insert(canonical_key(rhs, lhs), answer.0);
        cache.insert(key, answer.0);
        *self.last.borrow_mut() = Some(answer.1);
        answer.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec_model::text::parse_prim_exprs;

    #[test]
    fn alpha_equivalent_and_swapped_pairs_hit_the_cache() {
        let p = AutoProver::default();
        let a = parse_prim_exprs(&["(n + 1) * (n - 1)", "n * n - 1"]).unwrap();
        assert_eq!(p.compare(&a[0], &a[1], &[]), Verdict::Equal);
        assert_ne!(p.last_decided_by(), Some(DecidedBy::Cache));
        // The same pair over other variables, and swapped.
        let b = parse_prim_exprs(&["(m + 1) * (m - 1)", "m * m - 1"]).unwrap();
        assert_eq!(p.compare(&b[0], &b[1], &[]), Verdict::Equal);
        assert_eq!(p.last_decided_by(), Some(DecidedBy::Cache));
        assert_eq!(p.compare(&b[1], &b[0], &[]), Verdict::Equal);
        assert_eq!(p.last_decided_by(), Some(DecidedBy::Cache));
        // Not alpha-equivalent: two variables where the first pair had one.
        let c = parse_prim_exprs(&["(n + 1) * (m - 1)", "n * m - 1"]).unwrap();
        // (n + 1) * (m - 1) - (n * m - 1) = m - n: zero exactly when n = m.
        assert_eq!(p.compare(&c[0], &c[1], &[]), Verdict::Unknown);
        assert_ne!(p.last_decided_by(), Some(DecidedBy::Cache));
    }

    #[test]
    fn the_prover_budgets_are_taken_from_budgets() {
        use spec_model::limits::Budgets;
        let tight = Budgets { prover_module_ms: 0, prover_query_ms: 7, z3_degree: 1, ..Budgets::DEFAULT };
        let p = tight.scope(AutoProver::default);
        assert_eq!((p.module_budget, p.z3.timeout_ms, p.z3.max_degree), (Duration::ZERO, 7, 1));
        // No module time: only the syntactic back end answers (LIMIT-prover).
        let e = parse_prim_exprs(&["(n + 1) * (n - 1)", "n * n - 1"]).unwrap();
        assert_eq!(p.compare(&e[0], &e[1], &[]), Verdict::Unknown);
        // Degree 2 is beyond a Z3 degree budget of 1.
        assert_eq!(p.z3.compare(&e[0], &e[1], &[]), Verdict::Unknown);
        let mut p = p;
        p.apply_budgets(&Budgets::DEFAULT);
        p.start_module();
        assert_eq!(p.compare(&e[0], &e[1], &[]), Verdict::Equal);
    }
}
