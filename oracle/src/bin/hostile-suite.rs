//! `hostile`: the hostile-input suite in full (oracle::hostile). Builds every class of
//! hostile input at sizes 10^2, 10^3, ... up to `--max-size`, runs each `oracle`
//! command on it under a timeout, and reports every run that does not end cleanly
//! (exit 1 when there is one).
//!
//!     cargo build --release -p oracle && cargo run --release -p oracle --bin hostile-suite

use clap::Parser;
use oracle::hostile::{run_case, scratch, Budget, CLASSES};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(about = "Run the hostile-input suite against the oracle command line")]
struct Args {
    /// The smallest size (a power of ten).
    #[arg(long, default_value_t = 100)]
    min_size: u64,
    /// The largest size.
    #[arg(long, default_value_t = 1_000_000)]
    max_size: u64,
    /// Only these classes (repeatable); `--list` names them.
    #[arg(long)]
    class: Vec<String>,
    /// Print the classes and exit.
    #[arg(long)]
    list: bool,
    /// Seconds a command may run.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// The peak resident memory a command may reach, in MiB.
    #[arg(long, default_value_t = 2048)]
    memory_mb: u64,
    /// The `oracle` binary (default: the one built beside this program).
    #[arg(long)]
    bin: Option<PathBuf>,
    /// The scratch directory for the inputs.
    #[arg(long, default_value = "target/hostile")]
    dir: PathBuf,
    /// Print every run, not only the ones that fail.
    #[arg(long)]
    verbose: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.list {
        for c in CLASSES {
            println!("{:<24} {}", c.name, c.what);
        }
        return ExitCode::SUCCESS;
    }
    let bin = args.bin.clone().unwrap_or_else(|| {
        let me = std::env::current_exe().expect("the path of this program");
        me.with_file_name("oracle")
    });
    if !bin.exists() {
        eprintln!("error[usage]: no oracle binary at {} (build it: cargo build --release -p oracle)", bin.display());
        return ExitCode::from(2);
    }
    if let Some(bad) = args.class.iter().find(|c| !CLASSES.iter().any(|k| k.name == c.as_str())) {
        eprintln!("error[usage]: no class `{bad}` (--list names them)");
        return ExitCode::from(2);
    }
    let budget =
        Budget { timeout: Duration::from_secs(args.timeout), memory: args.memory_mb << 20, ..Budget::default() };
    let (mut runs, mut failed) = (0, Vec::new());
    let mut worst = (0.0f64, 0u64);
    for class in CLASSES.iter().filter(|c| args.class.is_empty() || args.class.iter().any(|k| k == c.name)) {
        let mut size = args.min_size.max(1);
        while size <= args.max_size {
            let case = class.case(size);
            let outcome = scratch(&args.dir, &case).and_then(|dir| run_case(&bin, &case, &dir, budget));
            let results = match outcome {
                Ok(r) => r,
                Err(e) => {
                    failed.push(format!("{:<24} {:>8} could not run: {e}", class.name, size));
                    println!("{}", failed.last().expect("just pushed"));
                    size = size.saturating_mul(10);
                    continue;
                }
            };
            for r in results {
                runs += 1;
                worst = (worst.0.max(r.seconds), worst.1.max(r.peak_bytes));
                let line = format!(
                    "{:<24} {:>8} {:<40} {:<28} {:>6.2} s {:>6} MiB  {}",
                    class.name,
                    size,
                    r.command,
                    r.verdict.to_string(),
                    r.seconds,
                    r.peak_bytes >> 20,
                    if r.verdict.is_clean() && !args.verbose { String::new() } else { r.first_line.clone() }
                );
                if !r.verdict.is_clean() {
                    failed.push(line.clone());
                }
                if args.verbose || !r.verdict.is_clean() {
                    println!("{line}");
                }
            }
            eprintln!("{} at {size}: done", class.name);
            size = size.saturating_mul(10);
        }
    }
    println!("\n{runs} runs, {} not clean; slowest {:.1} s, largest peak {} MiB", failed.len(), worst.0, worst.1 >> 20);
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
