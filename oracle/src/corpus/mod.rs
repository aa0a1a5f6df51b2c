//! The corpus runner (`oracle test`): reads each `.rx` file's metadata block and
//! checks its expectations. Expectations that need parts of the reference
//! semantics not built yet are reported as skipped, never as passed.

pub mod metadata;

pub use metadata::{parse_metadata, Expectation, Metadata};

use spec_model::diagnostic::line_col;
use spec_model::text::{check_round_trip, parse_expr_in_module, parse_module};
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
}

const NEEDS_CHECKER: &str = "needs static checking (well-formedness, types, StructInfo), not built yet";
const NEEDS_EVAL: &str = "needs evaluation (`oracle eval`), not built yet";

/// Runs one corpus file.
pub fn run_file(path: &Path) -> FileReport {
    let mut report =
        FileReport { path: path.to_path_buf(), rules: Vec::new(), status: Status::Pass, expectations: Vec::new() };
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
                Expectation::Invalid(_) | Expectation::Warning(_) => Status::Skip(NEEDS_CHECKER.into()),
                Expectation::RunError { call, .. } => match parse_expr_in_module(m, call) {
                    Ok(_) => Status::Skip(NEEDS_EVAL.into()),
                    Err(e) => Status::Fail(format!("`run: {call}` does not parse: {e}")),
                },
                Expectation::RunValue { call, value } => {
                    match (parse_expr_in_module(m, call), parse_expr_in_module(m, value)) {
                        (Ok(_), Ok(_)) => Status::Skip(NEEDS_EVAL.into()),
                        (Err(e), _) => Status::Fail(format!("`run: {call}` does not parse: {e}")),
                        (_, Err(e)) => Status::Fail(format!("`expect: {value}` does not parse: {e}")),
                    }
                }
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

/// The `.rx` files under `paths` (files as given, directories recursively), sorted.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let p = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            if p.is_dir() {
                walk(&p, out)?;
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
