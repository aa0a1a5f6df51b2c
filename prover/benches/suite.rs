//! The prover benchmark: every query of `prover::suite::SUITE` on every back end.
//! Prints, per back end, the share of decidable queries decided, the number of unsound
//! answers (must be 0), and the p50/p99 latency per query; the auto back end is timed
//! on the cache-miss path (its cache is cleared before every query). Then the same per
//! category, the queries each back end leaves undecided, and its three slowest.
//!
//! `cargo bench -p prover` (add `-- --reps N` for more repetitions per query).

use prover::suite::{Query, SUITE};
use prover::{AutoProver, Backend, ShapeProver, Verdict};
use spec_model::grammar::PrimExpr;
use spec_model::text::parse_prim_exprs;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

struct Outcome {
    verdict: Verdict,
    /// The median over the repetitions.
    latency: Duration,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// Times `compare` on one query: `reps` repetitions (one if the first takes over
/// 100 ms), median latency.
fn run(prover: &dyn ShapeProver, before: &dyn Fn(), pair: &(PrimExpr, PrimExpr), reps: usize) -> Outcome {
    let mut times = Vec::new();
    let mut verdict = Verdict::Unknown;
    for i in 0..reps {
        before();
        let t = Instant::now();
        let v = prover.compare(&pair.0, &pair.1, &[]);
        times.push(t.elapsed());
        // Deterministic back ends give one answer; a time-limited one may not, and
        // the first is reported.
        if i == 0 {
            verdict = v;
        }
        if times[0] > Duration::from_millis(100) {
            break;
        }
    }
    times.sort();
    Outcome { verdict, latency: times[times.len() / 2] }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let reps = args.iter().position(|a| a == "--reps").and_then(|i| args.get(i + 1)?.parse().ok()).unwrap_or(5);
    let pairs: Vec<(PrimExpr, PrimExpr)> = SUITE
        .iter()
        .map(|q| {
            let es = parse_prim_exprs(&[q.lhs, q.rhs]).expect("suite queries parse");
            (es[0].clone(), es[1].clone())
        })
        .collect();
    let decidable = SUITE.iter().filter(|q| q.truth.decidable()).count();
    println!("{} queries ({} decidable), {} repetitions each\n", SUITE.len(), decidable, reps);
    println!("| back end | decided | unsound | p50 (ms) | p99 (ms) | max (ms) |");
    println!("|---|---|---|---|---|---|");
    let mut per_category: BTreeMap<&str, Vec<(Backend, usize, usize)>> = BTreeMap::new();
    let mut undecided: Vec<(Backend, Vec<&Query>)> = Vec::new();
    let mut slowest: Vec<(Backend, Vec<(&Query, Duration)>)> = Vec::new();
    for backend in Backend::ALL {
        let auto = AutoProver::default();
        let boxed = backend.prover();
        let (prover, before): (&dyn ShapeProver, Box<dyn Fn()>) = match backend {
            Backend::Auto => (
                &auto,
                Box::new(|| {
                    prover::z3_prover::wait_idle();
                    auto.clear_cache();
                    auto.start_module();
                }),
            ),
            _ => (boxed.as_ref(), Box::new(prover::z3_prover::wait_idle)),
        };
        let outcomes: Vec<Outcome> = pairs.iter().map(|p| run(prover, before.as_ref(), p, reps)).collect();
        let decided = outcomes.iter().filter(|o| o.verdict != Verdict::Unknown).count();
        let unsound: Vec<&Query> =
            SUITE.iter().zip(&outcomes).filter(|(q, o)| !q.truth.admits(o.verdict)).map(|(q, _)| q).collect();
        let mut lat: Vec<Duration> = outcomes.iter().map(|o| o.latency).collect();
        lat.sort();
        println!(
            "| {} | {}/{} ({:.0}%) | {} | {} | {} | {} |",
            backend.name(),
            decided,
            decidable,
            100.0 * decided as f64 / decidable as f64,
            unsound.len(),
            ms(percentile(&lat, 0.5)),
            ms(percentile(&lat, 0.99)),
            ms(*lat.last().unwrap_or(&Duration::ZERO)),
        );
        for q in &unsound {
            eprintln!("UNSOUND: {} answered on {} vs {} ({:?})", backend.name(), q.lhs, q.rhs, q.truth);
        }
        for (q, o) in SUITE.iter().zip(&outcomes) {
            let e = per_category.entry(q.category).or_default();
            if e.last().is_none_or(|(b, _, _)| *b != backend) {
                e.push((backend, 0, 0));
            }
            let last = e.last_mut().expect("pushed");
            last.1 += usize::from(o.verdict != Verdict::Unknown);
            last.2 += usize::from(q.truth.decidable());
        }
        let left: Vec<&Query> = SUITE
            .iter()
            .zip(&outcomes)
            .filter(|(q, o)| q.truth.decidable() && o.verdict == Verdict::Unknown)
            .map(|(q, _)| q)
            .collect();
        undecided.push((backend, left));
        let mut by_time: Vec<(&Query, Duration)> = SUITE.iter().zip(&outcomes).map(|(q, o)| (q, o.latency)).collect();
        by_time.sort_by_key(|b| std::cmp::Reverse(b.1));
        by_time.truncate(3);
        slowest.push((backend, by_time));
    }
    println!("\n| category | queries | {} |", Backend::ALL.map(|b| b.name()).join(" | "));
    println!("|---|---|{}", "---|".repeat(Backend::ALL.len()));
    for (cat, rows) in &per_category {
        let n = SUITE.iter().filter(|q| q.category == *cat).count();
        let cells: Vec<String> = rows.iter().map(|(_, d, t)| format!("{d}/{t}")).collect();
        println!("| {cat} | {n} | {} |", cells.join(" | "));
    }
    println!();
    for (b, left) in undecided {
        let names: Vec<String> = left.iter().map(|q| format!("`{} == {}`", q.lhs, q.rhs)).collect();
        println!("{} leaves undecided: {}", b.name(), if names.is_empty() { "none".into() } else { names.join(", ") });
    }
    println!();
    for (b, qs) in slowest {
        let names: Vec<String> = qs.iter().map(|(q, d)| format!("`{} == {}` {} ms", q.lhs, q.rhs, ms(*d))).collect();
        println!("{} slowest: {}", b.name(), names.join(", "));
    }
}
