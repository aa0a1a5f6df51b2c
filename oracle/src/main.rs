//! The `oracle` command line.

use clap::{Parser, Subcommand};
use oracle::check::{check_module, check_module_with, render_with_rule};
use oracle::corpus::{collect_files, report, run_file_with};
use prover::{Backend, ShapeProver};
use spec_model::diagnostic::render_capped;
use spec_model::text::{parse_module, print_module, print_module_in, Dialect, DEFAULT_WIDTH};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "oracle", version, about = "Executable reference semantics of the Relax IR")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    budgets: oracle::budget_args::BudgetArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Print a `.rx` file in canonical form (`-` reads standard input).
    Fmt {
        file: PathBuf,
        /// Line width.
        #[arg(long, default_value_t = DEFAULT_WIDTH)]
        width: usize,
        /// The vocabulary to write: `rx` (the spec's) or `tvm-0.27` (what Apache TVM 0.27's
        /// TVMScript parser reads).
        #[arg(long, default_value_t = Dialect::Rx)]
        dialect: Dialect,
    },
    /// Parse a `.rx` file and report `ok` or the first error.
    Parse { file: PathBuf },
    /// Check a program: well-formedness, normalization, normal form, types and StructInfo.
    /// Errors exit non-zero; warnings do not.
    Check {
        file: PathBuf,
        /// Also report where the program as written is not in normal form (NF-1..4).
        #[arg(long)]
        as_written: bool,
        /// Print every function's FuncStructInfo and every binding's derived StructInfo.
        #[arg(long)]
        show_sinfo: bool,
        /// The back end deciding shape equalities: syntactic, egg, z3 or auto.
        #[arg(long, default_value = "auto")]
        prover: Backend,
    },
    /// Decide whether two shape expressions are equal under every assignment of their
    /// free variables (int64 shape variables, >= 0): prints `equal`, `not-equal` or
    /// `unknown`.
    Prove {
        /// The left-hand side, e.g. `(n + 1) * (n - 1)`.
        lhs: String,
        /// The right-hand side, e.g. `n * n - 1`.
        rhs: String,
        /// The back end: syntactic, egg, z3 or auto.
        #[arg(long, default_value = "auto")]
        prover: Backend,
        /// Also print (on stderr) which back end decided and how long it took.
        #[arg(long)]
        verbose: bool,
    },
    /// Evaluate a function of a program (after static checks): prints the result as an
    /// `.rx` literal, or `error[KIND] (RULE): message` and exits 1.
    Eval(EvalArgs),
    /// Print the normalized form of a well-formed program.
    Normalize {
        file: PathBuf,
        /// Line width.
        #[arg(long, default_value_t = DEFAULT_WIDTH)]
        width: usize,
    },
    /// Run the corpus files under the given paths by their metadata blocks.
    Test {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Also print pass/fail/skip counts per rule ID.
        #[arg(long)]
        rules: bool,
        /// Store the outputs of `expect: normal-form` files instead of comparing them.
        #[arg(long)]
        bless: bool,
        /// The engine that runs the `run:` lines: the oracle, the optimized engine, or
        /// both (the report then shows them side by side per directory).
        #[arg(long, value_enum, default_value = "oracle")]
        engine: oracle::engine::Engine,
    },
    /// Check other implementations against the spec: run corpus files through each
    /// implementation's adapter (conformance/PROTOCOL.md) and judge every answer
    /// against the oracle. Writes, per implementation, DIR/NAME/{files.txt, rules.txt,
    /// results.json, index.html}; exits 1 on a failure not in its expected-failures file.
    Conform(ConformArgs),
}

#[derive(clap::Args)]
struct ConformArgs {
    /// The corpus files or directories.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// An implementation: NAME=CMD, CMD starting its adapter (run by `sh -c`). Repeatable.
    #[arg(long = "impl", value_name = "NAME=CMD", required = true)]
    implementations: Vec<String>,
    /// Adapter processes at once (default: the machine's cores).
    #[arg(short = 'j', long)]
    jobs: Option<usize>,
    /// Seconds an adapter may take to answer one request before it is killed.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Where the reports go (one directory per implementation).
    #[arg(long, default_value = "target/conform")]
    out: PathBuf,
    /// The expected failures (default: conformance/NAME/expected-failures.txt); only
    /// with one --impl.
    #[arg(long)]
    expected: Option<PathBuf>,
    /// Rewrite the expected-failures file to list exactly this run's failures.
    #[arg(long)]
    update_expected: bool,
    /// Also print the per-rule table.
    #[arg(long)]
    rules: bool,
    /// Print only the summary (not every file that did not pass).
    #[arg(long)]
    quiet: bool,
}

#[derive(clap::Args)]
struct EvalArgs {
    file: PathBuf,
    /// The global function to call.
    #[arg(long, default_value = "main")]
    entry: String,
    /// The arguments, as `.rx` literals (`R.const([[1, 2]], "int32")`, `R.shape([2, 3])`,
    /// tuples, `R.prim_value(3)`, `R.str("x")`) or `@path.npy`.
    args: Vec<String>,
    /// Also write the result's tensors as `.npy` files in this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print each rule ID as it fires (on stderr).
    #[arg(long)]
    trace: bool,
    /// The engine: the reference interpreter (`oracle`), the optimized engine
    /// (`optimized`), or both, reporting whether they agree.
    #[arg(long, value_enum, default_value = "oracle")]
    engine: oracle::engine::Engine,
    /// The threads a kernel of the optimized engine may use (default: RELAX_THREADS, or 1).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// Time the call: parse, check and compile once (each timed), run it --warmup times,
    /// then N times, and print the times per call on stderr (`bench:` lines, the last
    /// one JSON); the last call's result prints as usual. One engine at a time.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    bench: Option<u64>,
    /// Untimed calls before the timed ones of --bench.
    #[arg(long, default_value_t = 3, requires = "bench")]
    warmup: u64,
    /// Do not print the result value (a 16M-element tensor prints as 400 MB of text);
    /// errors, printed lines and --out are unchanged.
    #[arg(long)]
    quiet: bool,
}

/// Reads a file (or standard input) as text: `Err` is the error, rendered (an
/// unreadable file is `error[io]`, bytes that are not UTF-8 `error[syntax]` at the
/// first of them).
fn read_input(file: &PathBuf) -> Result<(String, String), String> {
    let (name, bytes) = if file.as_os_str() == "-" {
        let mut b = Vec::new();
        std::io::stdin().read_to_end(&mut b).map_err(|e| format!("error[io]: <stdin>: {e}\n"))?;
        ("<stdin>".to_string(), b)
    } else {
        let b = std::fs::read(file).map_err(|e| format!("error[io]: {}: {e}\n", file.display()))?;
        (file.display().to_string(), b)
    };
    match String::from_utf8(bytes) {
        Ok(s) => Ok((name, s)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let text = String::from_utf8_lossy(&bytes);
            let d = spec_model::text::ParseError::syntax(
                format!("the file is not UTF-8 text: byte 0x{:02x} cannot start or continue a character", bytes[at]),
                spec_model::Span::new(at, at + 1),
            );
            Err(d.render(&name, &text))
        }
    }
}

/// A parsed file: its name, its text and its module.
struct Loaded {
    name: String,
    src: String,
    module: spec_model::grammar::IRModule,
}

/// Reads and parses a file, or reports why not (on stderr) and fails.
fn load(file: &PathBuf) -> Result<Loaded, ExitCode> {
    let (name, src) = read_input(file).map_err(|e| {
        eprint!("{e}");
        ExitCode::FAILURE
    })?;
    match parse_module(&src) {
        Ok(module) => Ok(Loaded { name, src, module }),
        Err(e) => {
            eprint!("{}", e.render(&name, &src));
            Err(ExitCode::FAILURE)
        }
    }
}

/// Prints the diagnostics with their rules' summaries and a count; fails on errors.
fn report(l: &Loaded, diagnostics: &[spec_model::diagnostic::Diagnostic]) -> ExitCode {
    eprint!("{}", render_capped(diagnostics, |d| render_with_rule(d, &l.name, &l.src)));
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    if errors > 0 {
        eprintln!("{}: {errors} error(s), {warnings} warning(s)", l.name);
        ExitCode::FAILURE
    } else {
        if warnings > 0 {
            eprintln!("{}: {warnings} warning(s)", l.name);
        }
        ExitCode::SUCCESS
    }
}

/// `oracle prove`: parses both sides (free names are shared shape variables) and asks
/// the back end.
fn prove(lhs: &str, rhs: &str, backend: Backend, verbose: bool) -> ExitCode {
    // Each side alone first, so a syntax error points into the right one.
    for (name, src) in [("LHS", lhs), ("RHS", rhs)] {
        if let Err(e) = spec_model::text::parse_prim_exprs(&[src]) {
            eprint!("{}", e.render(name, src));
            return ExitCode::FAILURE;
        }
    }
    let es = match spec_model::text::parse_prim_exprs(&[lhs, rhs]) {
        Ok(es) => es,
        Err(e) => {
            eprintln!("error[{}]: {}", e.0.code, e.0.message);
            return ExitCode::FAILURE;
        }
    };
    let start = std::time::Instant::now();
    let (verdict, by) = match backend {
        Backend::Auto => {
            let p = prover::AutoProver::default();
            let v = p.compare(&es[0], &es[1], &[]);
            (v, p.last_decided_by().map_or("nobody".to_string(), |b| format!("{b:?}").to_lowercase()))
        }
        b => (b.prover().compare(&es[0], &es[1], &[]), b.name().to_string()),
    };
    if verbose {
        eprintln!("decided by {by} in {:.3} ms", start.elapsed().as_secs_f64() * 1e3);
    }
    println!("{}", verdict_word(verdict));
    ExitCode::SUCCESS
}

/// Prints one engine's run: what it printed, its trace, then its value (stdout) or
/// its error (stderr); whether it returned a value.
fn show_run(run: &oracle::eval::run::RunText, name: &str, src: &str, label: Option<&str>, quiet: bool) -> bool {
    let prefix = label.map_or(String::new(), |l| format!("{l}: "));
    for line in &run.printed {
        println!("{prefix}{line}");
    }
    for rule in &run.trace {
        eprintln!("trace: {rule}");
    }
    match &run.result {
        Ok(v) => {
            if !quiet {
                println!("{prefix}{v}");
            }
            true
        }
        Err(e) => {
            eprintln!("{prefix}{e}");
            if let Some((l, c)) = spec_model::diagnostic::line_col(src, e.span) {
                eprintln!("  --> {name}:{l}:{c}");
            }
            false
        }
    }
}

/// `oracle eval`.
fn eval(a: &EvalArgs) -> ExitCode {
    use oracle::engine::compare::Verdict;
    use oracle::eval::run::Arg;
    let (name, src) = match read_input(&a.file) {
        Ok(x) => x,
        Err(e) => {
            eprint!("{e}");
            return ExitCode::FAILURE;
        }
    };
    if a.bench.is_some() && (a.engine == oracle::engine::Engine::Both || a.trace) {
        eprintln!(
            "error[usage]: --bench times one engine without tracing: use --engine optimized or --engine oracle \
             (once per engine to compare them), without --trace"
        );
        return ExitCode::from(2);
    }
    // `@path.npy` arguments are read straight into tensors.
    let mut values = Vec::with_capacity(a.args.len());
    for arg in &a.args {
        match arg.strip_prefix('@') {
            Some(path) => {
                match std::fs::read(path).map_err(|e| e.to_string()).and_then(|b| oracle::eval::npy::read_npy(&b)) {
                    Ok(arr) => values.push(Arg::Array(arr)),
                    Err(e) => {
                        eprintln!("error[io]: {path}: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            None => values.push(Arg::Literal(arg.clone())),
        }
    }
    let limits = oracle::eval::Limits::default();
    let threads = a.threads.map_or_else(optimized::threads_from_env, |t| t as usize);
    if let Some(iters) = a.bench {
        let config = oracle::eval::bench::BenchConfig {
            engine: a.engine,
            limits,
            iters: iters as usize,
            warmup: a.warmup as usize,
            threads,
            show_result: !a.quiet,
        };
        return match oracle::eval::bench::run_bench(&name, &src, &a.entry, &values, config, a.out.as_deref()) {
            Ok(r) => {
                let ok = show_run(&r.last, &name, &src, None, a.quiet);
                eprint!("{}", r.render());
                if ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                }
            }
            Err(e) => {
                eprint!("{e}");
                if !e.ends_with('\n') {
                    eprintln!();
                }
                ExitCode::FAILURE
            }
        };
    }
    let options =
        oracle::eval::run::EvalOptions { engine: a.engine, limits, threads, trace: a.trace, out: a.out.as_deref() };
    let report = match oracle::eval::run::run_eval(&name, &src, &a.entry, &values, options) {
        Ok(r) => r,
        Err(e) => {
            eprint!("{e}");
            if !e.ends_with('\n') {
                eprintln!();
            }
            return ExitCode::FAILURE;
        }
    };
    let ok = match (&report.oracle, &report.engine, &report.verdict) {
        (Some(o), Some(e), Some(verdict)) => match verdict {
            Verdict::Agree => {
                eprintln!("agree: the oracle and the optimized engine");
                show_run(o, &name, &src, None, a.quiet)
            }
            Verdict::Poisoned(k) => {
                eprintln!("poisoned: a run ended in {k}, so the engines are not compared");
                show_run(o, &name, &src, Some("oracle"), a.quiet) & show_run(e, &name, &src, Some("optimized"), a.quiet)
            }
            Verdict::Differ(why) => {
                eprintln!("DISAGREE: {why}");
                show_run(o, &name, &src, Some("oracle"), a.quiet);
                show_run(e, &name, &src, Some("optimized"), a.quiet);
                false
            }
        },
        (Some(r), _, _) | (_, Some(r), _) => show_run(r, &name, &src, None, a.quiet),
        _ => false,
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn conform(a: &ConformArgs) -> ExitCode {
    use oracle::conform::{self, expected::ExpectedFailures, report, results::Verdict};
    let files = match collect_files(&a.paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error[io]: {e}");
            return ExitCode::FAILURE;
        }
    };
    if a.expected.is_some() && a.implementations.len() > 1 {
        eprintln!("error[usage]: --expected names one implementation's file; give one --impl");
        return ExitCode::from(2);
    }
    let jobs = a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let options = conform::Options {
        jobs: jobs.max(1),
        timeout: std::time::Duration::from_secs(a.timeout.max(1)),
        ..conform::Options::default()
    };
    let mut code = ExitCode::SUCCESS;
    for spec in &a.implementations {
        let Some((name, command)) = spec.split_once('=').filter(|(n, c)| !n.is_empty() && !c.is_empty()) else {
            eprintln!("error[usage]: --impl takes NAME=CMD, not `{spec}`");
            return ExitCode::from(2);
        };
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            eprintln!("error[usage]: an implementation's name is letters, digits, `-`, `_` and `.`: `{name}`");
            return ExitCode::from(2);
        }
        let list_path =
            a.expected.clone().unwrap_or_else(|| PathBuf::from(format!("conformance/{name}/expected-failures.txt")));
        let expected = match ExpectedFailures::read(&list_path) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("error[io]: {e}");
                return ExitCode::FAILURE;
            }
        };
        eprintln!("{name}: {} files through `{command}`, {} at a time", files.len(), options.jobs);
        let mut results = conform::run(name, command, &files, &expected, &options);
        results.paths = a.paths.iter().map(|p| conform::shown_path(p)).collect();
        if !a.quiet {
            let failing: String = report::file_list(&results)
                .lines()
                .filter(|l| !l.starts_with("PASS"))
                .map(|l| format!("{l}\n"))
                .collect();
            print!("{failing}");
        }
        if a.rules {
            print!("{}", report::rule_table(&results));
        }
        print!("{}", report::summary(&results));
        let dir = a.out.join(name);
        if let Err(e) = write_reports(&dir, &results) {
            eprintln!("error[io]: {e}");
            code = ExitCode::FAILURE;
        } else {
            println!("reports: {}/{{files.txt, rules.txt, results.json, index.html}}", dir.display());
        }
        if a.update_expected {
            let failing: Vec<(String, String)> = results
                .results
                .iter()
                .filter(|f| matches!(f.verdict, Verdict::Fail | Verdict::ExpectedFail))
                .map(|f| (f.path.clone(), f.why.clone()))
                .collect();
            let text = expected.render(name, &failing);
            let written = list_path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|_| std::fs::write(&list_path, text));
            match written {
                Ok(()) => println!("wrote {} ({} entries)", list_path.display(), failing.len()),
                Err(e) => {
                    eprintln!("error[io]: {}: {e}", list_path.display());
                    code = ExitCode::FAILURE;
                }
            }
        } else if !results.new_failures.is_empty() {
            code = ExitCode::FAILURE;
        }
        if results.implementation.implementation.is_empty() {
            eprintln!("error[conform]: the adapter of {name} never completed its handshake");
            code = ExitCode::FAILURE;
        }
    }
    code
}

/// The per-file list, the rule table, the JSON results and the HTML page in `dir`.
fn write_reports(dir: &std::path::Path, r: &oracle::conform::results::Results) -> Result<(), String> {
    use oracle::conform::report;
    let json = serde_json::to_string_pretty(r).map_err(|e| e.to_string())?;
    let write = |file: &str, text: &str| {
        std::fs::write(dir.join(file), text).map_err(|e| format!("{}: {e}", dir.join(file).display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    write("files.txt", &report::file_list(r))?;
    write("rules.txt", &report::rule_table(r))?;
    write("results.json", &json)?;
    write("index.html", &oracle::conform::html::render_html(r))
}

fn verdict_word(v: prover::Verdict) -> &'static str {
    match v {
        prover::Verdict::Equal => "equal",
        prover::Verdict::NotEqual => "not-equal",
        prover::Verdict::Unknown => "unknown",
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match oracle::budget_args::run_under(cli.budgets.budgets(), move || command(cli.command)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

fn command(command: Command) -> ExitCode {
    match command {
        Command::Fmt { file, width, dialect } => match load(&file) {
            Ok(l) => {
                print!("{}", print_module_in(&l.module, width.max(20), dialect));
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        Command::Check { file, as_written, show_sinfo, prover } => match load(&file) {
            Ok(l) => {
                let r = check_module_with(&l.module, as_written, prover.prover().as_ref());
                let code = report(&l, &r.diagnostics);
                if show_sinfo {
                    match &r.sinfo {
                        Some(s) => print!("{}", oracle::check::show_sinfo(s)),
                        None => eprintln!("{}: no StructInfo derived (the program is not well-formed)", l.name),
                    }
                }
                if code == ExitCode::SUCCESS {
                    println!("ok: {} is well-formed, normalizes, and type and StructInfo checks pass", l.name);
                }
                code
            }
            Err(code) => code,
        },
        Command::Normalize { file, width } => match load(&file) {
            Ok(l) => {
                let r = check_module(&l.module, false);
                match (&r.normalized, r.has_errors()) {
                    (Some(n), false) => {
                        report(&l, &r.diagnostics);
                        print!("{}", print_module(n, width.max(20)));
                        ExitCode::SUCCESS
                    }
                    _ => report(&l, &r.diagnostics),
                }
            }
            Err(code) => code,
        },
        Command::Eval(a) => eval(&a),
        Command::Conform(a) => conform(&a),
        Command::Prove { lhs, rhs, prover, verbose } => prove(&lhs, &rhs, prover, verbose),
        Command::Parse { file } => match load(&file) {
            Ok(l) => {
                let m = &l.module;
                let relax = m.relax_functions().count();
                let tir = m.prim_funcs().count();
                println!("ok: {relax} Relax function(s), {tir} TIR function(s)");
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        Command::Test { paths, rules, bless, engine } => {
            let files = match collect_files(&paths) {
                Ok(f) => f,
                Err(e) => {
                    eprintln!("error[io]: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let options = oracle::corpus::RunOptions { bless, engine, native_tir: false };
            // One evaluation thread for every file, so that one prover (and its cache)
            // serves them all.
            let all = || files.iter().map(|f| run_file_with(f, options)).collect::<Vec<_>>();
            let reports = match oracle::eval::run::on_big_stack(all) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("error[io]: {e}");
                    return ExitCode::FAILURE;
                }
            };
            print!("{}", report::render(&reports, rules, engine));
            if report::any_failed(&reports) {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
    }
}
