//! The auto back end: syntactic, then egg, then Z3, the first decisive answer wins;
//! answers are cached by the canonical text of the pair (variables by identity).

use crate::egg_prover::EggProver;
use crate::z3_prover::Z3Prover;
use spec_model::grammar::{PrimExpr, PrimExprKind, PrimVar};
use spec_model::struct_info::{ShapeProver, SyntacticProver, Verdict};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write;

/// The canonical text of an expression: its structure, literals with dtypes, and
/// variables by identity (two variables may share a name).
pub fn canonical_key(e: &PrimExpr) -> String {
    fn go(e: &PrimExpr, out: &mut String) {
        match &*e.kind {
            PrimExprKind::Var(v) => {
                let _ = write!(out, "v{}", v.id());
            }
            PrimExprKind::IntImm { value, dtype } => {
                let _ = write!(out, "{value}:{dtype}");
            }
            PrimExprKind::FloatImm { value, dtype } => {
                let _ = write!(out, "f{:x}:{dtype}", value.0.to_bits());
            }
            PrimExprKind::Binary { op, a, b } => {
                let _ = write!(out, "({} ", op.spec_name());
                go(a, out);
                out.push(' ');
                go(b, out);
                out.push(')');
            }
            PrimExprKind::Not(a) => {
                out.push_str("(Not ");
                go(a, out);
                out.push(')');
            }
            PrimExprKind::Select { cond, then_value, else_value } => {
                out.push_str("(Select ");
                for x in [cond, then_value, else_value] {
                    go(x, out);
                    out.push(' ');
                }
                out.push(')');
            }
            PrimExprKind::Cast { dtype, value } => {
                let _ = write!(out, "(Cast {dtype} ");
                go(value, out);
                out.push(')');
            }
        }
    }
    let mut s = String::new();
    go(e, &mut s);
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
#[derive(Default)]
pub struct AutoProver {
    pub egg: EggProver,
    pub z3: Z3Prover,
    cache: RefCell<HashMap<(String, String), Verdict>>,
    last: RefCell<Option<DecidedBy>>,
}

impl AutoProver {
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
        // Equality is symmetric: one entry per unordered pair.
        let (a, b) = (canonical_key(lhs), canonical_key(rhs));
        let key = if a <= b { (a, b) } else { (b, a) };
        if let Some(v) = self.cache.borrow().get(&key) {
            *self.last.borrow_mut() = Some(DecidedBy::Cache);
            return *v;
        }
        let backends: [(&dyn ShapeProver, DecidedBy); 3] =
            [(&SyntacticProver, DecidedBy::Syntactic), (&self.egg, DecidedBy::Egg), (&self.z3, DecidedBy::Z3)];
        let mut answer = (Verdict::Unknown, DecidedBy::Nobody);
        for (p, by) in backends {
            let v = p.compare(lhs, rhs, scope);
            if v != Verdict::Unknown {
                answer = (v, by);
                break;
            }
        }
        self.cache.borrow_mut().insert(key, answer.0);
        *self.last.borrow_mut() = Some(answer.1);
        answer.0
    }
}
