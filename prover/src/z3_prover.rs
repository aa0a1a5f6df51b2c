//! The Z3 back end. Each `PrimExpr` is encoded over mathematical integers with the
//! conditions under which it evaluates without error: every integer subterm lies in
//! its dtype's range (no overflow), every divisor is nonzero, every variable is in
//! `[0, max of its dtype]` (shape variables are `>= 0`). Floor and truncating division
//! are encoded exactly from Z3's Euclidean `div` (`z3_encode`). With `D` the
//! conjunction of both sides' conditions: `Equal` if `D ∧ lhs ≠ rhs` is unsatisfiable
//! (and `D` is satisfiable, so the answer is not vacuous); `NotEqual` if
//! `D ∧ lhs = rhs` is unsatisfiable (and `D` satisfiable); `Unknown` on a timeout,
//! Z3's `unknown`, or an expression with no encoding (floating point).
//!
//! The range conditions turn polynomial identities into hard nonlinear problems, so
//! each query is first asked without them (variables `>= 0`, divisors nonzero, no
//! upper bounds): an answer there is a stronger statement, true for the exact
//! semantics too, since a value computed without overflow is the mathematical one.
//! Only when that is inconclusive is the exact encoding asked.
//!
//! **The time budget is a hard bound.** Z3 runs on a worker thread; a watchdog
//! interrupts it at the query's deadline, and Z3's resource limit (`rlimit`) bounds
//! each check as well. libz3 does not always honour the interrupt at once (its
//! nonlinear arithmetic was seen running seconds past it), so the caller waits only
//! until the deadline plus [`GRACE`]: past that the query is `Unknown`, and the worker,
//! still busy, is left to finish on its own while the next query gets a new one.

use crate::z3_encode::{Encoder, Term, Val};
use spec_model::grammar::{PrimExpr, PrimVar};
use spec_model::struct_info::{ShapeProver, Verdict};
use std::cell::{Cell, RefCell};
use std::mem::ManuallyDrop;
use std::sync::{mpsc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use z3::ast::{Ast, Bool};
use z3::{Config, Context, Params, SatResult, Solver};

/// How long past its deadline a caller waits for Z3's answer.
pub const GRACE: Duration = Duration::from_millis(50);

/// The Z3 back end, with a per-query timeout (shared by the query's checks).
pub struct Z3Prover {
    pub timeout_ms: u32,
    /// Z3's resource limit per check (deterministic, unlike the timeout; about a
    /// second of work on the reference machine).
    pub rlimit: u32,
    /// The highest polynomial degree Z3 is asked about (LIMIT-prover, see [`degree`]):
    /// nonlinear integer arithmetic of high degree (`n0 * ... * n23 % (m0 * ... * m23 +
    /// 1)`) keeps libz3 in preprocessing where it ignores the interrupt for tens of
    /// seconds; such a query is `Unknown` at once rather than after its full budget.
    pub max_degree: u32,
    /// The worker thread and its context, started on the first query and replaced
    /// when one overruns.
    worker: RefCell<Option<Worker>>,
    /// The worker thread's stack (it encodes recursively, as deep as the nesting budget).
    stack: usize,
    timed_out: Cell<bool>,
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
        let b = spec_model::limits::current();
        let max_degree = spec_model::limits::Budgets::DEFAULT.z3_degree;
        Z3Prover {
            timeout_ms,
            rlimit: 2_000_000,
            max_degree,
            worker: RefCell::new(None),
            stack: b.stack_bytes(),
            timed_out: Cell::new(false),
        }
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

/// Waits until no Z3 work is running in the process, such as a worker left to finish
/// a query past its deadline (its resource limit ends it within seconds). The next
/// query's budget would otherwise be spent waiting for it: the benchmark calls this
/// between queries so that each is timed on its own.
pub fn wait_idle() {
    drop(z3_lock());
}

/// One query for the worker.
struct Job {
    lhs: Term,
    rhs: Term,
    deadline: Instant,
    rlimit: u32,
}

/// A thread that owns a Z3 context and answers jobs in order.
struct Worker {
    jobs: mpsc::Sender<Job>,
    answers: mpsc::Receiver<Verdict>,
}

impl Worker {
    fn start(stack: usize) -> Option<Worker> {
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let (answer_tx, answers) = mpsc::channel();
        let body = move || {
            // No Z3 `timeout` (here or per check): libz3 4.8.12's timer thread can
            // deadlock with the check it times (seen in fuzz-smoke, proofs-notes/prover.md
            // P-8); the watchdog's interrupt and the resource limit bound each check.
            let mut ctx = {
                let _guard = z3_lock();
                ManuallyDrop::new(Context::new(&Config::new()))
            };
            for job in job_rx {
                let verdict = {
                    let _guard = z3_lock();
                    answer(&ctx, &job)
                };
                if answer_tx.send(verdict).is_err() {
                    break;
                }
            }
            let _guard = z3_lock();
            // SAFETY: `ctx` is dropped exactly once, here, and never used afterwards.
            unsafe { ManuallyDrop::drop(&mut ctx) }
        };
        std::thread::Builder::new().name("z3".into()).stack_size(stack).spawn(body).ok()?;
        Some(Worker { jobs, answers })
    }
}

/// Both rounds of a query, within its deadline.
fn answer(ctx: &Context, job: &Job) -> Verdict {
    match decide(ctx, job, false) {
        Verdict::Unknown => decide(ctx, job, true),
        v => v,
    }
}

/// One round: with or without the range conditions.
fn decide(ctx: &Context, job: &Job, bounded: bool) -> Verdict {
    let mut enc = Encoder { ctx, defined: Vec::new(), bounded };
    let (Some(l), Some(r)) = (enc.encode(&job.lhs), enc.encode(&job.rhs)) else { return Verdict::Unknown };
    let same = match (l, r) {
        (Val::B(p), Val::B(q)) => p._eq(&q),
        (l, r) => {
            let (p, q) = (enc.as_int(l), enc.as_int(r));
            p._eq(&q)
        }
    };
    let defined = Bool::and(ctx, &enc.defined.iter().collect::<Vec<_>>());
    let differ = same.not();
    let check = |assertions: &[&Bool]| check(ctx, assertions, job);
    match check(&[&defined, &differ]) {
        // Not vacuous only if some assignment makes both sides evaluate.
        SatResult::Unsat => match check(&[&defined]) {
            SatResult::Sat => Verdict::Equal,
            _ => Verdict::Unknown,
        },
        // A model of `D ∧ lhs ≠ rhs` exists, so `D` is satisfiable.
        SatResult::Sat => match check(&[&defined, &same]) {
            SatResult::Unsat => Verdict::NotEqual,
            _ => Verdict::Unknown,
        },
        SatResult::Unknown => Verdict::Unknown,
    }
}

/// Checks satisfiability within the job's deadline: a watchdog thread interrupts the
/// context when the time is up (Z3's own `timeout` parameter is not used: it is not
/// always honoured on nonlinear problems, and its timer thread can deadlock, P-8).
fn check(ctx: &Context, assertions: &[&Bool], job: &Job) -> SatResult {
    let Some(limit) = job.deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
        return SatResult::Unknown;
    };
    let solver = Solver::new(ctx);
    let mut params = Params::new(ctx);
    params.set_u32("rlimit", job.rlimit);
    solver.set_params(&params);
    for a in assertions {
        solver.assert(a);
    }
    let handle = ctx.handle();
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

/// The degree of `e` as a polynomial, counting a division or modulo as the product of
/// its sides (Z3 encodes `a % b` through `a = q * b + r`). Saturates.
pub fn degree(e: &PrimExpr) -> u32 {
    use spec_model::grammar::PrimBinOp::*;
    use spec_model::grammar::PrimExprKind;
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

impl Z3Prover {
    /// [`ShapeProver::compare`] within `budget` instead of `timeout_ms` (the auto
    /// prover passes what is left of its module budget when that is less).
    pub fn compare_within(&self, lhs: &PrimExpr, rhs: &PrimExpr, budget: Duration) -> Verdict {
        self.timed_out.set(false);
        if degree(lhs).max(degree(rhs)) > self.max_degree {
            return Verdict::Unknown;
        }
        // One time budget for the whole query, shared by its checks.
        let start = Instant::now();
        let job = Job { lhs: Term::of(lhs), rhs: Term::of(rhs), deadline: start + budget, rlimit: self.rlimit };
        let mut slot = self.worker.borrow_mut();
        if slot.is_none() {
            *slot = Worker::start(self.stack);
        }
        let Some(worker) = slot.as_ref() else { return Verdict::Unknown };
        if worker.jobs.send(job).is_err() {
            *slot = None;
            return Verdict::Unknown;
        }
        let verdict = match worker.answers.recv_timeout((budget + GRACE).saturating_sub(start.elapsed())) {
            Ok(v) => v,
            Err(_) => {
                // Still busy past the deadline (or gone): leave it, start afresh next time.
                *slot = None;
                Verdict::Unknown
            }
        };
        self.timed_out.set(verdict == Verdict::Unknown && start.elapsed() >= budget);
        verdict
    }

    /// Whether the last query ended `Unknown` because its time ran out (another
    /// time might decide it), rather than because Z3 could not decide it.
    pub fn timed_out(&self) -> bool {
        self.timed_out.get()
    }
}

impl ShapeProver for Z3Prover {
    fn compare(&self, lhs: &PrimExpr, rhs: &PrimExpr, _scope: &[PrimVar]) -> Verdict {
        self.compare_within(lhs, rhs, Duration::from_millis(u64::from(self.timeout_ms)))
    }
}
