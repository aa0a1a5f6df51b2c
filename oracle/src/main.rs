//! The `oracle` command line.

use clap::{Parser, Subcommand};
use oracle::corpus::{by_rule, collect_files, run_file, Status};
use spec_model::text::{parse_module, print_module, DEFAULT_WIDTH};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "oracle", version, about = "Executable reference semantics of the Relax IR")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a `.rx` file in canonical form (`-` reads standard input).
    Fmt {
        file: PathBuf,
        /// Line width.
        #[arg(long, default_value_t = DEFAULT_WIDTH)]
        width: usize,
    },
    /// Parse a `.rx` file and report `ok` or the first error.
    Parse { file: PathBuf },
    /// Run the corpus files under the given paths by their metadata blocks.
    Test {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Also print pass/fail/skip counts per rule ID.
        #[arg(long)]
        rules: bool,
    },
}

fn read_input(file: &PathBuf) -> Result<(String, String), String> {
    if file.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map_err(|e| format!("<stdin>: {e}"))?;
        Ok(("<stdin>".to_string(), s))
    } else {
        let s = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        Ok((file.display().to_string(), s))
    }
}

/// Reads and parses a file, or reports why not (on stderr) and fails.
fn load(file: &PathBuf) -> Result<(String, spec_model::grammar::IRModule), ExitCode> {
    let (name, src) = read_input(file).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::FAILURE
    })?;
    parse_module(&src).map(|m| (name.clone(), m)).map_err(|e| {
        eprint!("{}", e.render(&name, &src));
        ExitCode::FAILURE
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Fmt { file, width } => match load(&file) {
            Ok((_, m)) => {
                print!("{}", print_module(&m, width.max(20)));
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        Command::Parse { file } => match load(&file) {
            Ok((_, m)) => {
                let relax = m.relax_functions().count();
                let tir = m.prim_funcs().count();
                println!("ok: {relax} Relax function(s), {tir} TIR function(s)");
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        Command::Test { paths, rules } => {
            let files = match collect_files(&paths) {
                Ok(f) => f,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let reports: Vec<_> = files.iter().map(|f| run_file(f)).collect();
            let (mut pass, mut fail, mut skip) = (0, 0, 0);
            for r in &reports {
                match &r.status {
                    Status::Pass => {
                        pass += 1;
                        println!("pass {}", r.path.display());
                    }
                    Status::Fail(why) => {
                        fail += 1;
                        // One line per file; details (a rendered diagnostic) indented under it.
                        let mut lines = why.lines();
                        println!("FAIL {}: {}", r.path.display(), lines.next().unwrap_or_default());
                        for l in lines {
                            println!("    | {l}");
                        }
                    }
                    Status::Skip(why) => {
                        skip += 1;
                        println!("skip {}: {why}", r.path.display());
                    }
                }
            }
            if rules {
                println!("\n{:<24} {:>5} {:>5} {:>5}", "rule", "pass", "fail", "skip");
                for (rule, [p, f, s]) in by_rule(&reports) {
                    println!("{rule:<24} {p:>5} {f:>5} {s:>5}");
                }
            }
            println!("{pass} passed, {fail} failed, {skip} skipped");
            if fail > 0 {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
    }
}
