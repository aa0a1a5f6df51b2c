//! The corpus runner (`oracle test`): reads each `.rx` file's metadata block and
//! checks its expectations. Expectations that need parts of the reference
//! semantics not built yet are reported as skipped, never as passed.

pub mod metadata;
pub mod report;

pub use metadata::{parse_metadata, Expectation, Metadata};

use crate::check::{check_module, sinfo_of};
use crate::engine::Engine;
use crate::eval::run::{check_run, on_big_stack, prepare};
use crate::eval::ErrorKind;
use spec_model::diagnostic::{line_col, Diagnostic};
use spec_model::grammar::IRModule;
use spec_model::normal_form::{check_normal_form, normalize};
use spec_model::rules::is_checked;
use spec_model::text::{
    check_round_trip, parse_module, parse_struct_info, print_module, print_struct_info, DEFAULT_WIDTH,
};
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Pass,
    Fail(String),
    Skip(String),
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Pass => write!(f, "pass"),
            Status::Fail(why) => write!(f, "fail: {why}"),
            Status::Skip(why) => write!(f, "skip: {why}"),
        }
    }
}

/// The outcome of one file: overall status and one status per expectation.
#[derive(Clone, Debug)]
pub struct FileReport {
    pub path: PathBuf,
    pub rules: Vec<String>,
    pub status: Status,
    pub expectations: Vec<(Expectation, Status)>,
    /// The rules evaluation fired (the `run:` lines' traces), for coverage.
    pub fired: Vec<String>,
    /// The `run:` lines and how many each engine passed.
    pub runs: RunTally,
}

/// How many `run:` lines a file has, and how many each engine passed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunTally {
    pub lines: usize,
    pub oracle: usize,
    pub optimized: usize,
}

/// How `oracle test` runs files.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// Store the outputs of `expect: normal-form` files instead of comparing them.
    pub bless: bool,
    /// Which engine runs the `run:` lines.
    pub engine: Engine,
    /// In the optimized engine, fail a PrimFunc that native code declines (the engine's
    /// own corpus and tests want every kernel covered; a user's file may not), unless
    /// the file's `x-interpreted: f, g` key names it.
    pub native_tir: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { bless: false, engine: Engine::Oracle, native_tir: false }
    }
}

/// The absolute tolerance for float results when a file gives none.
pub const DEFAULT_TOLERANCE: f64 = 1e-5;

const NEEDS_CHECKER: &str = "names a run-time rule; needs evaluation (`oracle eval`), not built yet";

/// Runs one corpus file (its `run:` lines in the oracle).
pub fn run_file(path: &Path) -> FileReport {
    run_file_with(path, RunOptions::default())
}

/// The file holding the expected normalized form of `path` (`expect: normal-form`).
pub fn normalized_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".normalized");
    PathBuf::from(p)
}

fn codes(ds: &[Diagnostic]) -> String {
    if ds.is_empty() {
        return "none".into();
    }
    ds.iter().map(|d| format!("{d}")).collect::<Vec<_>>().join("; ")
}

/// `expect: invalid RULE` / `warning RULE`, for a rule the model checks. A normal-form
/// rule is checked on the program as written (a parsed program is normalized before
/// anything else, so "invalid NF-n" means "not in normal form as written").
/// A diagnostic matches a rule by its code or by a note naming the rule that decided it
/// (`SI-CC-5.1: ...` under an `SI-D-8.2.3` error).
fn check_rule(m: &IRModule, rule: &str, want_error: bool) -> Status {
    let ds = if rule.starts_with("NF-") { check_normal_form(m) } else { check_module(m, false).diagnostics };
    let cause = format!("{rule}:");
    let hit = ds
        .iter()
        .any(|d| (d.code == rule || d.notes.iter().any(|n| n.starts_with(&cause))) && d.is_error() == want_error);
    if hit {
        Status::Pass
    } else {
        let kind = if want_error { "an error" } else { "a warning" };
        Status::Fail(format!("expected {kind} of rule {rule}; reported: {}", codes(&ds)))
    }
}

/// `expect-sinfo: NAME STRUCTINFO`: compares canonical printed forms.
fn check_sinfo(m: &IRModule, name: &str, expected: &str) -> Status {
    let want = match parse_struct_info(expected) {
        Ok(s) => print_struct_info(&s),
        Err(e) => return Status::Fail(format!("`expect-sinfo: {name} {expected}` does not parse: {e}")),
    };
    let report = check_module(m, false);
    let Some(sinfo) = &report.sinfo else {
        return Status::Fail(format!("no StructInfo was derived: {}", codes(&report.diagnostics)));
    };
    match sinfo_of(sinfo, name) {
        None => Status::Fail(format!("no function or binding named `{name}`")),
        Some(got) if print_struct_info(got) == want => Status::Pass,
        Some(got) => Status::Fail(format!("`{name}` has StructInfo {}, expected {want}", print_struct_info(got))),
    }
}

fn check_normal_form_expectation(path: &Path, m: &IRModule, bless: bool) -> Status {
    let report = check_module(m, false);
    let Some(n) = report.normalized else {
        return Status::Fail(format!("does not normalize: {}", codes(&report.diagnostics)));
    };
    let errors: Vec<Diagnostic> = report.diagnostics.into_iter().filter(|d| d.is_error()).collect();
    if !errors.is_empty() {
        return Status::Fail(format!("the normalized program is not in normal form: {}", codes(&errors)));
    }
    let text = print_module(&n, DEFAULT_WIDTH);
    let again = normalize(&n).map(|n2| print_module(&n2, DEFAULT_WIDTH));
    if again.as_deref() != Ok(text.as_str()) {
        return Status::Fail("normalizing the normalized program changes it (not idempotent)".into());
    }
    let expected_path = normalized_path(path);
    if bless {
        return match std::fs::write(&expected_path, &text) {
            Ok(()) => Status::Pass,
            Err(e) => Status::Fail(format!("cannot write {}: {e}", expected_path.display())),
        };
    }
    match std::fs::read_to_string(&expected_path) {
        Ok(expected) if expected == text => Status::Pass,
        Ok(expected) => Status::Fail(format!(
            "the normalized form differs from {}:\n--- expected\n{expected}--- got\n{text}",
            expected_path.display()
        )),
        Err(_) => Status::Fail(format!(
            "no expected output {}; run `oracle test --bless {}` to store it",
            expected_path.display(),
            path.display()
        )),
    }
}

/// The file's module, parsed and checked once for all its `run:` lines (and both engines).
type Prepared = std::cell::OnceCell<Result<IRModule, String>>;

/// Runs `f` under the file's memory and fuel budgets (`memory:`, `fuel:`), which hold
/// for its run lines in every engine (and nothing else).
fn with_budgets<R>(md: &Metadata, f: impl FnOnce() -> R) -> R {
    if md.memory.is_none() && md.fuel.is_none() {
        return f();
    }
    let current = spec_model::limits::current();
    let memory = md.memory.unwrap_or(current.memory);
    let fuel = md.fuel.unwrap_or(current.fuel);
    spec_model::limits::Budgets { memory, fuel, ..current }.scope(f)
}

/// Runs one corpus file's `run:` line (`call`, expecting `expect`) in the engines of
/// `options.engine`: pass when each passes; the tally counts each engine's passes.
fn run_line(
    (file_name, src, prepared): (&str, &str, &Prepared),
    call: &str,
    expect: Result<&str, ErrorKind>,
    tol: f64,
    options: RunOptions,
    interpreted: &[String],
    report: &mut FileReport,
) -> Status {
    let engine = options.engine;
    report.runs.lines += 1;
    let prepared = prepared.get_or_init(|| prepare(file_name, src));
    let mut failures = Vec::new();
    if engine != Engine::Optimized {
        let (status, trace) = check_run(prepared, call, expect, tol);
        report.fired.extend(trace);
        match status {
            Ok(()) => report.runs.oracle += 1,
            Err(why) => failures.push(if engine == Engine::Both { format!("oracle: {why}") } else { why }),
        }
    }
    if engine != Engine::Oracle {
        let native_tir = options.native_tir.then_some(interpreted);
        match crate::engine::check_run(prepared, call, expect, tol, native_tir) {
            Ok(()) => report.runs.optimized += 1,
            Err(why) => failures.push(format!("optimized engine: {why}")),
        }
    }
    if failures.is_empty() {
        Status::Pass
    } else {
        Status::Fail(failures.join("; "))
    }
}

/// Runs one corpus file; with `bless`, stores the outputs of `expect: normal-form`.
pub fn run_file_with(path: &Path, options: RunOptions) -> FileReport {
    // One thread with a big stack per file (evaluation and checking recurse with the
    // program), so that its checks share one prover, and its cache, too.
    on_big_stack(|| run_file_here(path, options)).unwrap_or_else(|e| FileReport {
        path: path.to_path_buf(),
        rules: Vec::new(),
        status: Status::Fail(e),
        expectations: Vec::new(),
        fired: Vec::new(),
        runs: RunTally::default(),
    })
}

fn run_file_here(path: &Path, options: RunOptions) -> FileReport {
    let bless = options.bless;
    let mut report = FileReport {
        path: path.to_path_buf(),
        rules: Vec::new(),
        status: Status::Pass,
        expectations: Vec::new(),
        fired: Vec::new(),
        runs: RunTally::default(),
    };
    let src = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) => {
            report.status = Status::Fail(format!("cannot read: {e}"));
            return report;
        }
    };
    let md = match parse_metadata(&src) {
        Ok(md) => md,
        Err(e) => {
            report.status = Status::Fail(format!("bad metadata: {e}"));
            return report;
        }
    };
    report.rules = md.rules.clone();
    let file_name = path.display().to_string();
    let parsed = parse_module(&src);
    let prepared = Prepared::new();
    let tol = md.tolerance.unwrap_or(DEFAULT_TOLERANCE);
    let interpreted = md.interpreted();
    for exp in &md.expectations {
        let status = match (exp, &parsed) {
            (Expectation::ParseError { code, at }, Ok(_)) => {
                Status::Fail(format!("expected a parse error{}, but the file parses", describe_error(code, at)))
            }
            (Expectation::ParseError { code, at }, Err(e)) => {
                let d = e.diagnostic();
                let got_at = line_col(&src, d.span);
                if code.as_ref().is_some_and(|c| *c != d.code) {
                    Status::Fail(format!(
                        "expected a `{}` error, got: {}",
                        code.as_deref().unwrap_or(""),
                        e.render(&file_name, &src)
                    ))
                } else if at.is_some() && got_at != *at {
                    Status::Fail(format!(
                        "expected the error at {}, got it at {}: {}",
                        at.map_or(String::new(), |(l, c)| format!("{l}:{c}")),
                        got_at.map_or("no position".into(), |(l, c)| format!("{l}:{c}")),
                        e.render(&file_name, &src)
                    ))
                } else {
                    Status::Pass
                }
            }
            (_, Err(e)) => Status::Fail(format!("does not parse:\n{}", e.render(&file_name, &src))),
            (_, Ok(m)) => match exp {
                Expectation::Parse => match check_round_trip(m) {
                    Ok(_) => Status::Pass,
                    Err(e) => Status::Fail(format!("round trip: {e}")),
                },
                Expectation::Invalid(rule) if is_checked(rule) => check_rule(m, rule, true),
                Expectation::Warning(rule) if is_checked(rule) => check_rule(m, rule, false),
                Expectation::NoWarning(rule) if is_checked(rule) => match check_rule(m, rule, false) {
                    Status::Pass => Status::Fail(format!("expected no warning of rule {rule}, but there is one")),
                    _ => Status::Pass,
                },
                Expectation::Invalid(r) | Expectation::Warning(r) | Expectation::NoWarning(r)
                    if r.starts_with("SEM-") || r.starts_with("SI-MC-") =>
                {
                    Status::Skip(NEEDS_CHECKER.into())
                }
                Expectation::Invalid(r) | Expectation::Warning(r) | Expectation::NoWarning(r) => {
                    Status::Fail(format!("`{r}` is not a rule ID the model knows (see spec-model/src/rules.rs)"))
                }
                Expectation::Valid => {
                    let report = check_module(m, false);
                    let errors: Vec<Diagnostic> = report.diagnostics.into_iter().filter(|d| d.is_error()).collect();
                    if errors.is_empty() {
                        Status::Pass
                    } else {
                        Status::Fail(format!("expected no error; reported: {}", codes(&errors)))
                    }
                }
                Expectation::NormalForm => check_normal_form_expectation(path, m, bless),
                Expectation::Sinfo { name, sinfo } => check_sinfo(m, name, sinfo),
                Expectation::InNormalForm => {
                    let nf = check_normal_form(m);
                    if nf.is_empty() {
                        Status::Pass
                    } else {
                        Status::Fail(format!("not in normal form as written: {}", codes(&nf)))
                    }
                }
                Expectation::RunError { call, kind } => match ErrorKind::from_name(kind) {
                    Some(ErrorKind::Crash) => Status::Fail(
                        "`expect: error Crash`: a checked program never crashes; Crash is a bug, never an expectation"
                            .into(),
                    ),
                    Some(k) => with_budgets(&md, || {
                        run_line((&file_name, &src, &prepared), call, Err(k), tol, options, &interpreted, &mut report)
                    }),
                    None => Status::Fail(format!(
                        "`expect: error {kind}`: not an error kind ({})",
                        ErrorKind::ALL.map(|k| k.name()).join(", ")
                    )),
                },
                Expectation::RunValue { call, value } => with_budgets(&md, || {
                    run_line((&file_name, &src, &prepared), call, Ok(value), tol, options, &interpreted, &mut report)
                }),
                Expectation::ParseError { .. } => unreachable!("handled above"),
            },
        };
        report.expectations.push((exp.clone(), status));
    }
    // Every file that parses must also round-trip, whatever else it expects.
    if let Ok(m) = &parsed {
        if !md.expectations.contains(&Expectation::Parse) {
            if let Err(e) = check_round_trip(m) {
                report.expectations.push((Expectation::Parse, Status::Fail(format!("round trip: {e}"))));
            }
        }
    }
    report.status = overall(&report.expectations);
    report
}

fn describe_error(code: &Option<String>, at: &Option<(usize, usize)>) -> String {
    let mut s = String::new();
    if let Some(c) = code {
        s.push_str(&format!(" ({c})"));
    }
    if let Some((l, c)) = at {
        s.push_str(&format!(" at {l}:{c}"));
    }
    s
}

/// Fail if any expectation failed, else skip if any was skipped, else pass.
fn overall(results: &[(Expectation, Status)]) -> Status {
    let mut skip = None;
    for (e, s) in results {
        match s {
            Status::Fail(why) => return Status::Fail(format!("[{e}] {why}")),
            Status::Skip(why) if skip.is_none() => skip = Some(format!("[{e}] {why}")),
            _ => {}
        }
    }
    skip.map_or(Status::Pass, Status::Skip)
}

/// The `.rx` files under `paths` (files as given, directories recursively without
/// following links to directories), sorted.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            let p = entry.path();
            // Links to directories are not followed: two links to `.` would walk forever.
            let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
            if p.is_dir() && !is_link {
                walk(&p, out)?;
            } else if p.is_dir() {
                continue;
            } else if p.extension().is_some_and(|x| x == "rx") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(format!("{}: no such file or directory", p.display()));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Pass/fail/skip counts per rule ID, for the coverage table.
pub fn by_rule(reports: &[FileReport]) -> Vec<(String, [usize; 3])> {
    let mut m: std::collections::BTreeMap<String, [usize; 3]> = Default::default();
    for r in reports {
        let i = match r.status {
            Status::Pass => 0,
            Status::Fail(_) => 1,
            Status::Skip(_) => 2,
        };
        for rule in &r.rules {
            m.entry(rule.clone()).or_default()[i] += 1;
        }
    }
    m.into_iter().collect()
}

/// Rule coverage of evaluation: for every run-time rule (SEM-*, SI-MC-*) and every
/// registered operator, how many files' `run:` lines fired it (from the trace).
pub fn run_coverage(reports: &[FileReport]) -> Vec<(String, usize)> {
    let runtime = spec_model::rules::RUNTIME_RULES.iter().map(|(r, _)| r.to_string());
    let ops = spec_model::ops::REGISTRY.iter().map(|d| d.rule.to_string());
    runtime
        .chain(ops)
        .map(|rule| {
            let n = reports.iter().filter(|r| r.fired.contains(&rule)).count();
            (rule, n)
        })
        .collect()
}
