//! `fuzz-reduce FILE --keep PREDICATE [-o OUT]`: shrinks a failing corpus-format program
//! while the failure persists and writes the reduced program (default `FILE.reduced.rx`).
//! Exit status 0 when a reduced program was written, 2 for bad input.

use clap::Parser;
use fuzz::reduce::{reduce_quietly, Options, Predicate};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "fuzz-reduce", about = "Shrink a failing .rx program while the failure persists")]
struct Cli {
    /// The program: a .rx file in the corpus format (metadata block with a `# run:` line).
    file: PathBuf,
    /// The failure to keep: diff-exec, diff-engine, error=KIND, value, check=RULE, panic, panic=TEXT,
    /// cmd:SHELL (run as `sh -c SHELL reduce CANDIDATE`; exit status 0 = keep), or
    /// against:CMD (the implementation whose adapter CMD starts diverges from the oracle
    /// as on the input; conformance/PROTOCOL.md).
    #[arg(long, value_name = "PREDICATE")]
    keep: String,
    /// Where to write the reduced program (default: FILE with `.reduced.rx` for `.rx`).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,
    /// The most predicate evaluations to spend.
    #[arg(long, default_value_t = 5_000)]
    max_evals: usize,
    /// Which `run:` line of the file to evaluate (1-based).
    #[arg(long, default_value_t = 1)]
    run: usize,
    /// A call to evaluate instead of the file's `run:` line, e.g. 'main(R.const(1, "int32"))'.
    #[arg(long)]
    call: Option<String>,
    /// Print each accepted reduction step on stderr.
    #[arg(short, long)]
    verbose: bool,
    #[command(flatten)]
    budgets: oracle::budget_args::BudgetArgs,
}

fn bad(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("fuzz-reduce: {msg}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    // The input meets the budgets `oracle` would hold it to (the same flags).
    oracle::budget_args::run_under(cli.budgets.budgets(), move || reduce(cli)).unwrap_or_else(bad)
}

fn reduce(cli: Cli) -> ExitCode {
    let pred = match Predicate::parse(&cli.keep) {
        Ok(p) => p,
        Err(e) => return bad(e),
    };
    let src = match std::fs::read_to_string(&cli.file) {
        Ok(s) => s,
        Err(e) => return bad(format!("cannot read {}: {e}", cli.file.display())),
    };
    let opts =
        Options { max_evals: cli.max_evals, run: cli.run, call: cli.call, verbose: cli.verbose, ..Options::default() };
    let report = match reduce_quietly(&src, &pred, &opts) {
        Ok(r) => r,
        Err(e) => return bad(format!("{}: {e}", cli.file.display())),
    };
    let out = cli.output.unwrap_or_else(|| cli.file.with_extension("reduced.rx"));
    if let Err(e) = std::fs::write(&out, &report.output) {
        return bad(format!("cannot write {}: {e}", out.display()));
    }
    println!("before: {}", report.before);
    println!("after:  {}", report.after);
    let cap = if report.cap_hit { " (the budget ran out before a fixed point; --max-evals raises it)" } else { "" };
    println!("{} predicate evaluations in {} rounds{cap}", report.evals, report.rounds);
    for n in &report.notes {
        println!("note: {n}");
    }
    println!("wrote {}", out.display());
    ExitCode::SUCCESS
}
