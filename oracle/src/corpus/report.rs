//! What `oracle test` prints: a line per file (a failure's details indented under
//! it), with `--rules` the pass/fail/skip counts per rule ID and the run-time rules'
//! coverage, then the evaluation coverage and the totals.

use super::{by_rule, run_coverage, FileReport, Status};
use crate::engine::Engine;
use std::collections::BTreeMap;

/// The `run:` lines each engine passed, per directory, side by side.
fn engines_table(reports: &[FileReport], engine: Engine) -> Vec<String> {
    let mut by_dir: BTreeMap<String, [usize; 3]> = BTreeMap::new();
    for r in reports.iter().filter(|r| r.runs.lines > 0) {
        let dir = r.path.parent().map_or(String::new(), |p| p.display().to_string());
        let t = by_dir.entry(dir).or_default();
        t[0] += r.runs.lines;
        t[1] += r.runs.oracle;
        t[2] += r.runs.optimized;
    }
    let total = by_dir.values().fold([0; 3], |a, t| [a[0] + t[0], a[1] + t[1], a[2] + t[2]]);
    let cell = |n: usize, on: bool| if on { n.to_string() } else { "-".to_string() };
    let (oracle, optimized) = (engine != Engine::Optimized, engine != Engine::Oracle);
    let mut lines = vec![format!("{:<32} {:>9} {:>8} {:>10}", "run: lines passed", "lines", "oracle", "optimized")];
    for (dir, t) in by_dir.iter().chain(std::iter::once((&"total".to_string(), &total))) {
        lines.push(format!("{dir:<32} {:>9} {:>8} {:>10}", t[0], cell(t[1], oracle), cell(t[2], optimized)));
    }
    lines
}

/// The report of `reports`, one line each; `rules` adds the per-rule tables; with the
/// optimized engine, the `run:` lines each engine passed per directory.
pub fn render(reports: &[FileReport], rules: bool, engine: Engine) -> String {
    let mut lines = Vec::new();
    let (mut pass, mut fail, mut skip) = (0, 0, 0);
    for r in reports {
        match &r.status {
            Status::Pass => {
                pass += 1;
                lines.push(format!("pass {}", r.path.display()));
            }
            Status::Fail(why) => {
                fail += 1;
                // One line per file; details (a rendered diagnostic) indented under it.
                let mut why = why.lines();
                lines.push(format!("FAIL {}: {}", r.path.display(), why.next().unwrap_or_default()));
                lines.extend(why.map(|l| format!("    | {l}")));
            }
            Status::Skip(why) => {
                skip += 1;
                lines.push(format!("skip {}: {why}", r.path.display()));
            }
        }
    }
    if rules {
        lines.push(String::new());
        lines.push(format!("{:<24} {:>5} {:>5} {:>5}", "rule", "pass", "fail", "skip"));
        for (rule, [p, f, s]) in by_rule(reports) {
            lines.push(format!("{rule:<24} {p:>5} {f:>5} {s:>5}"));
        }
    }
    let coverage = run_coverage(reports);
    if rules {
        lines.push(String::new());
        lines.push(format!("{:<24} {:>5}", "run-time rule", "files"));
        for (rule, n) in &coverage {
            lines.push(format!("{rule:<24} {n:>5}"));
        }
    }
    let missing: Vec<&str> = coverage.iter().filter(|(_, n)| *n == 0).map(|(r, _)| r.as_str()).collect();
    lines.push(format!(
        "evaluation coverage: {} of {} run-time rules and operators exercised by run: lines{}",
        coverage.len() - missing.len(),
        coverage.len(),
        if missing.is_empty() { String::new() } else { format!("; not exercised: {}", missing.join(", ")) }
    ));
    if engine != Engine::Oracle {
        lines.push(String::new());
        lines.extend(engines_table(reports, engine));
    }
    lines.push(format!("{pass} passed, {fail} failed, {skip} skipped"));
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Whether any file failed (`oracle test` then exits with a failure).
pub fn any_failed(reports: &[FileReport]) -> bool {
    reports.iter().any(|r| matches!(r.status, Status::Fail(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn file(name: &str, status: Status) -> FileReport {
        FileReport {
            path: PathBuf::from(name),
            rules: vec!["TY-2".into()],
            status,
            expectations: Vec::new(),
            fired: Vec::new(),
            runs: Default::default(),
        }
    }

    #[test]
    fn a_line_per_file_details_indented_and_the_totals() {
        let reports = [
            file("a.rx", Status::Pass),
            file("b.rx", Status::Fail("first\nsecond".into())),
            file("c.rx", Status::Skip("later".into())),
        ];
        let text = render(&reports, true, Engine::Oracle);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[..4], ["pass a.rx", "FAIL b.rx: first", "    | second", "skip c.rx: later"]);
        assert!(lines.contains(&"TY-2                         1     1     1"), "{text}");
        assert_eq!(lines.last(), Some(&"1 passed, 1 failed, 1 skipped"));
        assert!(any_failed(&reports));
        assert!(!render(&reports[..1], false, Engine::Oracle).contains("TY-2"));
    }
}
