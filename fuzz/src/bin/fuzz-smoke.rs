//! `fuzz-smoke`: the fuzz targets' checks on N generated programs, without libFuzzer
//! (runs on any toolchain; `.ci/run` runs it). Prints programs/s and what was covered;
//! exits 1 if any invariant broke, writing each failing program under `--out`.

use clap::Parser;
use fuzz::invariants::check_program;
use fuzz::stats::Stats;
use fuzz::{program_with, seed_bytes, write_failure};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser)]
#[command(about = "Generate N programs and check every invariant on each (no libFuzzer needed)")]
struct Args {
    /// How many programs.
    #[arg(long, default_value_t = 2000)]
    iters: u64,
    /// The first seed; program i uses seed S + i.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where failing programs are written (corpus-format .rx files).
    #[arg(long, default_value = "fuzz-failures")]
    out: PathBuf,
    /// Fail unless every operator and at least this share (percent) of AST node kinds
    /// was generated.
    #[arg(long, default_value_t = 95.0)]
    min_node_share: f64,
    /// Print each seed before checking it (to find a seed that hangs).
    #[arg(long)]
    verbose: bool,
    /// Some tensors with dimensions of 17 to 300 (vector tails, threading thresholds).
    #[arg(long)]
    large_tensors: bool,
    /// Chains of elementwise float operators in dataflow blocks (fusion, in-place reuse).
    #[arg(long)]
    long_chains: bool,
    /// Accept `call_tir` kernels that the engine ran in its TIR interpreter rather than
    /// as native code (by default any such run fails the check, once the engine counts
    /// call_tir runs at all), and do not require the native TIR counters to fire.
    #[arg(long)]
    allow_interpreted: bool,
    /// Check another implementation instead of the optimized engine: NAME=CMD, CMD
    /// starting its adapter (conformance/PROTOCOL.md). Each divergence is reduced,
    /// deduplicated by its signature and written under OUT/against-NAME/.
    #[arg(long, value_name = "NAME=CMD")]
    against: Option<String>,
    /// With --against: stop after this many seconds.
    #[arg(long, requires = "against")]
    seconds: Option<u64>,
    /// With --against: seconds an adapter may take per request.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// With --against: predicate evaluations per reduction.
    #[arg(long, default_value_t = 300)]
    reduce_evals: usize,
    /// With --against: reductions per kind of divergence.
    #[arg(long, default_value_t = 3)]
    reductions_per_kind: usize,
    #[command(flatten)]
    budgets: oracle::budget_args::BudgetArgs,
}

fn against(args: &Args, spec: &str) -> i32 {
    let Some((name, command)) = spec.split_once('=').filter(|(n, c)| !n.is_empty() && !c.is_empty()) else {
        eprintln!("--against takes NAME=CMD, not `{spec}`");
        return 2;
    };
    let campaign = fuzz::against::campaign::Campaign {
        name: name.into(),
        command: command.into(),
        seed: args.seed,
        iters: args.iters,
        budget: args.seconds.map(std::time::Duration::from_secs),
        timeout: std::time::Duration::from_secs(args.timeout.max(1)),
        reduce_evals: args.reduce_evals,
        reductions_per_kind: args.reductions_per_kind,
        out: args.out.join(format!("against-{name}")),
        large_tensors: args.large_tensors,
        long_chains: args.long_chains,
    };
    match campaign.run() {
        Ok(f) => {
            println!(
                "{} programs in {:.0} s against {name}: {} diverging ({} requests); {} distinct divergences",
                f.programs,
                f.seconds,
                f.diverging_programs,
                f.requests_diverging,
                f.distinct.len()
            );
            println!("kinds (programs showing each):");
            for (k, n) in &f.kinds {
                println!("  {n:>5}  {k}");
            }
            println!("distinct divergences (reduced):");
            for (sig, path) in &f.distinct {
                println!("  {sig}\n      {}", path.display());
            }
            0
        }
        Err(e) => {
            eprintln!("fuzz-smoke --against {name}: {e}");
            2
        }
    }
}

fn main() {
    let args = Args::parse();
    // Generated programs meet the budgets `oracle` would hold them to (the same flags).
    spec_model::limits::set_process_budgets(args.budgets.budgets());
    if let Some(spec) = args.against.clone() {
        std::process::exit(against(&args, &spec));
    }
    let mut stats = Stats::default();
    let fired_before = optimized::stats::snapshot();
    let mut failures = 0usize;
    let start = Instant::now();
    std::panic::set_hook(Box::new(|_| {}));
    for i in 0..args.iters {
        let seed = args.seed.wrapping_add(i);
        if args.verbose {
            eprintln!("seed {seed}");
        }
        let data = seed_bytes(seed);
        // Odd seeds draw their configuration from the bytes (swarm testing).
        let m = program_with(&data, seed % 2 == 1, |c| {
            c.large_tensors |= args.large_tensors && seed % 4 < 2;
            c.long_chains |= args.long_chains;
        });
        stats.add_program(&m.ir);
        let result = catch_unwind(AssertUnwindSafe(|| check_program(&m))).unwrap_or_else(|p| {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
            Err(fuzz::invariants::Violation { invariant: "no panic", detail: msg.unwrap_or_default() })
        });
        match result {
            Ok(c) => {
                stats.add_run(&c.outcome, &c.fired);
                stats.add_engine(&c.engine);
            }
            Err(v) => {
                failures += 1;
                let path = write_failure(&args.out, &format!("seed-{seed}"), &m, &v);
                let at = path.map(|p| p.display().to_string()).unwrap_or_else(|e| format!("(not written: {e})"));
                let first = v.detail.lines().next().unwrap_or("");
                eprintln!("seed {seed}: {} broken: {first}\n  program: {at}", v.invariant);
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{} programs in {secs:.1} s: {:.0} programs/s; {failures} failures",
        args.iters,
        args.iters as f64 / secs.max(1e-9)
    );
    print!("{}", stats.render());
    // What the engine's optimizations did over these programs: one never fired is one the
    // run could not have found a bug in.
    use optimized::stats::Counter;
    println!("engine optimizations fired:");
    let fired: Vec<(Counter, u64)> = optimized::stats::snapshot()
        .into_iter()
        .zip(fired_before)
        .map(|((c, n), (_, before))| (c, n.saturating_sub(before)))
        .collect();
    for (c, n) in &fired {
        println!("  {:<32} {n}", c.name());
    }
    let count = |which: Counter| fired.iter().find(|(c, _)| *c == which).map_or(0, |(_, n)| *n);
    let (native, interpreted) = (count(Counter::TirNative), count(Counter::TirInterpreted));
    println!("call_tir runs: {native} native, {interpreted} interpreted");
    let mut never = Vec::new();
    for (c, n) in &fired {
        // Interpreted call_tir runs should be none, not some.
        if *n == 0 && *c != Counter::TirInterpreted {
            never.push(c.name());
        }
    }
    let kinds = fuzz::stats::NODE_KINDS.len();
    let share = 100.0 * (kinds - stats.missing_nodes().len()) as f64 / kinds as f64;
    let mut ok = failures == 0;
    if share < args.min_node_share {
        eprintln!("only {share:.0}% of AST node kinds generated (want {}%)", args.min_node_share);
        ok = false;
    }
    if args.iters >= 500 && !stats.missing_ops().is_empty() {
        eprintln!("operators never generated: {:?}", stats.missing_ops());
        ok = false;
    }
    if args.iters >= 2000 && !stats.missing_intrinsics().is_empty() {
        eprintln!("TIR intrinsics never generated: {:?}", stats.missing_intrinsics());
        ok = false;
    }
    if interpreted > 0 && !args.allow_interpreted {
        eprintln!(
            "{interpreted} call_tir runs fell back to the engine's TIR interpreter (want every kernel native; \
             RELAX_TIR_EXPLAIN=1 says why, --allow-interpreted accepts them)"
        );
        ok = false;
    }
    if args.large_tensors && args.long_chains && args.iters >= 500 && !never.is_empty() {
        eprintln!("engine optimizations that never fired: {never:?}");
        ok = false;
    }
    std::process::exit(if ok { 0 } else { 1 });
}
