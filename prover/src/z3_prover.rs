//! The Z3 back end. Each `PrimExpr` is encoded over mathematical integers with the
//! conditions under which it evaluates without error: every integer subterm lies in
//! its dtype's range (no overflow), every divisor is nonzero, every variable is in
//! `[0, max of its dtype]` (shape variables are `>= 0`). Floor and truncating division
//! are encoded exactly from Z3's Euclidean `div`. With `D` the conjunction of both
//! sides' conditions: `Equal` if `D ∧ lhs ≠ rhs` is unsatisfiable (and `D` is
//! satisfiable, so the answer is not vacuous); `NotEqual` if `D ∧ lhs = rhs` is
//! unsatisfiable (and `D` satisfiable); `Unknown` on a timeout, Z3's `unknown`, or an
//! expression with no encoding (floating point).
//!
//! The range conditions turn polynomial identities into hard nonlinear problems, so
//! each query is first asked without them (variables `>= 0`, divisors nonzero, no
//! upper bounds): an answer there is a stronger statement, true for the exact
//! semantics too, since a value computed without overflow is the mathematical one.
//! Only when that is inconclusive is the exact encoding asked. Each check is bounded
//! by Z3's deterministic resource limit (`rlimit`) and a timeout.

use spec_model::grammar::{DataType, PrimBinOp, PrimExpr, PrimExprKind, PrimVar};
use spec_model::prim_eval::int_range;
use spec_model::struct_info::{ShapeProver, Verdict};
use std::mem::ManuallyDrop;
use std::sync::{mpsc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use z3::ast::{Ast, Bool, Int};
use z3::{Config, Context, Params, SatResult, Solver};

/// The Z3 back end, with a per-query timeout (shared by the query's checks).
pub struct Z3Prover {
    /// Dropped under [`Z3_LOCK`] (see there).
    ctx: ManuallyDrop<Context>,
    pub timeout_ms: u32,
    /// Z3's resource limit per check (deterministic, unlike the timeout; about a
    /// second of work on the reference machine).
    pub rlimit: u32,
    /// The highest polynomial degree Z3 is asked about (LIMIT-prover, see [`degree`]):
    /// nonlinear integer arithmetic of high degree (`n0 * ... * n23 % (m0 * ... * m23 +
    /// 1)`) keeps libz3 in preprocessing where it ignores the interrupt for tens of
    /// seconds, so the wall-clock bound would not hold; such a query is `Unknown` at once.
    pub max_degree: u32,
}

/// The budgets in force (`spec_model::limits::current`): `prover_query_ms` and
/// `z3_degree`.
impl Default for Z3Prover {
    fn default() -> Self {
        let b = spec_model::limits::current();
        let mut z = Z3Prover::new(u32::try_from(b.prover_query_ms).unwrap_or(u32::MAX));
        z.max_degree = b.z3_degree;
        z
    }
}

impl Z3Prover {
    pub fn new(timeout_ms: u32) -> Z3Prover {
        // No Z3 `timeout` (here or per check): libz3 4.8.12's timer thread can deadlock
        // with the check it times (seen in fuzz-smoke, proofs-notes/prover.md P-8); the
        // watchdog's interrupt and the resource limit bound each check instead.
        let cfg = Config::new();
        let _guard = z3_lock();
        let max_degree = spec_model::limits::Budgets::DEFAULT.z3_degree;
        Z3Prover { ctx: ManuallyDrop::new(Context::new(&cfg)), timeout_ms, rlimit: 2_000_000, max_degree }
    }
}

/// Serializes all use of Z3 in the process. The `z3` crate 0.10 takes a global mutex
/// of its own in some calls (e.g. dropping `Params`) while libz3 4.8.12 takes internal
/// locks, and two threads with two contexts deadlocked on that lock order (seen in
/// the parallel corpus test). The watchdog's `interrupt` does not take this lock.
static Z3_LOCK: Mutex<()> = Mutex::new(());

fn z3_lock() -> MutexGuard<'static, ()> {
    // A panic while holding the lock leaves no Z3 state half-updated that matters here.
    Z3_LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

impl Drop for Z3Prover {
    fn drop(&mut self) {
        let _guard = z3_lock();
        // SAFETY: `ctx` is dropped exactly once, here, and never used afterwards.
        unsafe { ManuallyDrop::drop(&mut self.ctx) }
    }
}

/// An encoded subterm.
enum Val<'c> {
    I(Int<'c>),
    B(Bool<'c>),
}

struct Encoder<'c> {
    ctx: &'c Context,
    /// The conditions under which the expressions evaluate without error.
    defined: Vec<Bool<'c>>,
    /// With the dtypes' range conditions (the exact semantics), or without.
    bounded: bool,
}

fn big(ctx: &Context, v: i128) -> Int<'_> {
    match i64::try_from(v) {
        Ok(x) => Int::from_i64(ctx, x),
        Err(_) => Int::from_str(ctx, &v.to_string()).unwrap_or_else(|| Int::from_i64(ctx, 0)),
    }
}

impl<'c> Encoder<'c> {
    fn int(&self, v: i64) -> Int<'c> {
        Int::from_i64(self.ctx, v)
    }

    fn as_int(&self, v: Val<'c>) -> Int<'c> {
        match v {
            Val::I(i) => i,
            Val::B(b) => b.ite(&self.int(1), &self.int(0)),
        }
    }

    fn as_bool(&self, v: Val<'c>) -> Bool<'c> {
        match v {
            Val::B(b) => b,
            Val::I(i) => i._eq(&self.int(0)).not(),
        }
    }

    /// `t` within the range of `dtype`, as a definedness condition.
    fn in_range(&mut self, t: &Int<'c>, dtype: DataType) {
        if !self.bounded {
            return;
        }
        let (lo, hi) = int_range(dtype);
        self.defined.push(t.ge(&big(self.ctx, lo)));
        self.defined.push(t.le(&big(self.ctx, hi)));
    }

    /// `floor(a / b)` from Euclidean division: for `b > 0` they agree; for `b < 0`,
    /// `floor(a / b) = floor(-a / -b)`.
    fn floor_div(&self, a: &Int<'c>, b: &Int<'c>) -> Int<'c> {
        let pos = b.gt(&self.int(0));
        pos.ite(&a.div(b), &a.unary_minus().div(&b.unary_minus()))
    }

    /// `trunc(a / b)`: the quotient of the magnitudes, negated when the signs differ.
    fn trunc_div(&self, a: &Int<'c>, b: &Int<'c>) -> Int<'c> {
        let zero = self.int(0);
        let (a_nonneg, b_pos) = (a.ge(&zero), b.gt(&zero));
        let q_pp = a.div(b);
        let q_pn = a.div(&b.unary_minus()).unary_minus();
        let q_np = a.unary_minus().div(b).unary_minus();
        let q_nn = a.unary_minus().div(&b.unary_minus());
        a_nonneg.ite(&b_pos.ite(&q_pp, &q_pn), &b_pos.ite(&q_np, &q_nn))
    }

    fn encode(&mut self, e: &PrimExpr) -> Option<Val<'c>> {
        let ctx = self.ctx;
        Some(match &*e.kind {
            PrimExprKind::Var(v) if v.dtype().is_bool() => Val::B(Bool::new_const(ctx, format!("v{}", v.id()))),
            PrimExprKind::Var(v) => {
                let x = Int::new_const(ctx, format!("v{}", v.id()));
                self.defined.push(x.ge(&self.int(0)));
                self.in_range(&x, v.dtype());
                Val::I(x)
            }
            PrimExprKind::IntImm { value, dtype } if dtype.is_bool() => Val::B(Bool::from_bool(ctx, *value != 0)),
            PrimExprKind::IntImm { value, .. } => Val::I(self.int(*value)),
            PrimExprKind::FloatImm { .. } => return None,
            PrimExprKind::Not(a) => {
                let x = self.encode(a)?;
                Val::B(self.as_bool(x).not())
            }
            PrimExprKind::Select { cond, then_value, else_value } => {
                let c = self.encode(cond)?;
                let c = self.as_bool(c);
                match (self.encode(then_value)?, self.encode(else_value)?) {
                    (Val::B(t), Val::B(f)) => Val::B(c.ite(&t, &f)),
                    (t, f) => {
                        let (t, f) = (self.as_int(t), self.as_int(f));
                        Val::I(c.ite(&t, &f))
                    }
                }
            }
            PrimExprKind::Cast { dtype, value } => {
                if dtype.is_float() || value.dtype().is_float() {
                    return None;
                }
                let x = self.encode(value)?;
                if dtype.is_bool() {
                    Val::B(self.as_bool(x))
                } else {
                    let x = self.as_int(x);
                    self.in_range(&x, *dtype);
                    Val::I(x)
                }
            }
            PrimExprKind::Binary { op, a, b } => {
                if a.dtype().is_float() || b.dtype().is_float() {
                    return None;
                }
                let (x, y) = (self.encode(a)?, self.encode(b)?);
                return self.binary(*op, x, y, a.dtype());
            }
        })
    }

    fn binary(&mut self, op: PrimBinOp, x: Val<'c>, y: Val<'c>, dtype: DataType) -> Option<Val<'c>> {
        use PrimBinOp::*;
        let ctx = self.ctx;
        if matches!(op, And | Or) {
            let (p, q) = (self.as_bool(x), self.as_bool(y));
            return Some(Val::B(if op == And { Bool::and(ctx, &[&p, &q]) } else { Bool::or(ctx, &[&p, &q]) }));
        }
        let (p, q) = (self.as_int(x), self.as_int(y));
        let cmp = match op {
            Eq => Some(p._eq(&q)),
            Ne => Some(p._eq(&q).not()),
            Lt => Some(p.lt(&q)),
            Le => Some(p.le(&q)),
            Gt => Some(p.gt(&q)),
            Ge => Some(p.ge(&q)),
            _ => None,
        };
        if let Some(c) = cmp {
            return Some(Val::B(c));
        }
        if matches!(op, Div | Mod | FloorDiv | FloorMod) {
            self.defined.push(q._eq(&self.int(0)).not());
        }
        let r = match op {
            Add => Int::add(ctx, &[&p, &q]),
            Sub => Int::sub(ctx, &[&p, &q]),
            Mul => Int::mul(ctx, &[&p, &q]),
            FloorDiv => self.floor_div(&p, &q),
            FloorMod => Int::sub(ctx, &[&p, &Int::mul(ctx, &[&q, &self.floor_div(&p, &q)])]),
            Div => self.trunc_div(&p, &q),
            Mod => Int::sub(ctx, &[&p, &Int::mul(ctx, &[&q, &self.trunc_div(&p, &q)])]),
            Min => p.le(&q).ite(&p, &q),
            Max => p.ge(&q).ite(&p, &q),
            _ => return None,
        };
        self.in_range(&r, dtype);
        Some(Val::I(r))
    }
}

impl Z3Prover {
    /// Checks satisfiability within the timeout: a watchdog thread interrupts the
    /// context when the time is up (Z3's own `timeout` parameter is not used: it is not
    /// always honoured on nonlinear problems, and its timer thread can deadlock, P-8).
    fn check(&self, assertions: &[&Bool], deadline: Instant) -> SatResult {
        let Some(limit) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
            return SatResult::Unknown;
        };
        let solver = Solver::new(&self.ctx);
        let mut params = Params::new(&self.ctx);
        params.set_u32("rlimit", self.rlimit);
        solver.set_params(&params);
        for a in assertions {
            solver.assert(a);
        }
        let handle = self.ctx.handle();
        std::thread::scope(|s| {
            let (done, finished) = mpsc::channel::<()>();
            s.spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(limit) {
                    handle.interrupt();
                }
            });
            let r = solver.check();
            let _ = done.send(());
            r
        })
    }
}

impl Z3Prover {
    /// One round: with or without the range conditions.
    fn decide(&self, lhs: &PrimExpr, rhs: &PrimExpr, bounded: bool, deadline: Instant) -> Verdict {
        let mut enc = Encoder { ctx: &self.ctx, defined: Vec::new(), bounded };
        let (Some(l), Some(r)) = (enc.encode(lhs), enc.encode(rhs)) else { return Verdict::Unknown };
        let same = match (l, r) {
            (Val::B(p), Val::B(q)) => p._eq(&q),
            (l, r) => {
                let (p, q) = (enc.as_int(l), enc.as_int(r));
                p._eq(&q)
            }
        };
        let defined = Bool::and(&self.ctx, &enc.defined.iter().collect::<Vec<_>>());
        let differ = same.not();
        match self.check(&[&defined, &differ], deadline) {
            // Not vacuous only if some assignment makes both sides evaluate.
            SatResult::Unsat => match self.check(&[&defined], deadline) {
                SatResult::Sat => Verdict::Equal,
                _ => Verdict::Unknown,
            },
            // A model of `D ∧ lhs ≠ rhs` exists, so `D` is satisfiable.
            SatResult::Sat => match self.check(&[&defined, &same], deadline) {
                SatResult::Unsat => Verdict::NotEqual,
                _ => Verdict::Unknown,
            },
            SatResult::Unknown => Verdict::Unknown,
        }
    }
}

/// The degree of `e` as a polynomial, counting a division or modulo as the product of
/// its sides (Z3 encodes `a % b` through `a = q * b + r`). Saturates.
pub fn degree(e: &PrimExpr) -> u32 {
    use spec_model::grammar::PrimBinOp::*;
    match &*e.kind {
        PrimExprKind::Var(_) => 1,
        PrimExprKind::IntImm { .. } | PrimExprKind::FloatImm { .. } => 0,
        PrimExprKind::Binary { op: Mul | Div | Mod | FloorDiv | FloorMod, a, b } => degree(a).saturating_add(degree(b)),
        PrimExprKind::Binary { a, b, .. } => degree(a).max(degree(b)),
        PrimExprKind::Not(a) | PrimExprKind::Cast { value: a, .. } => degree(a),
        PrimExprKind::Select { cond, then_value, else_value } => {
            degree(cond).max(degree(then_value)).max(degree(else_value))
        }
    }
}

impl ShapeProver for Z3Prover {
    fn compare(&self, lhs: &PrimExpr, rhs: &PrimExpr, _scope: &[PrimVar]) -> Verdict {
        if degree(lhs).max(degree(rhs)) > self.max_degree {
            return Verdict::Unknown;
        }
        let _guard = z3_lock();
        // One time budget for the whole query, shared by its checks.
        let deadline = Instant::now() + Duration::from_millis(u64::from(self.timeout_ms));
        match self.decide(lhs, rhs, false, deadline) {
            Verdict::Unknown => self.decide(lhs, rhs, true, deadline),
            v => v,
        }
    }
}
