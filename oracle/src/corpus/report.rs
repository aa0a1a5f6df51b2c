//! What `oracle test` prints: a line per file (a failure's details indented under
//! it), with `--rules` the pass/fail/skip counts per rule ID and the run-time rules'
//! coverage, then the evaluation coverage and the totals.

use super::{by_rule, run_coverage, FileReport, Status};

/// The report of `reports`, one line each; `rules` adds the per-rule tables.
pub fn render(reports: &[FileReport], rules: bool) -> String {
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
        }
    }

    #[test]
    fn a_line_per_file_details_indented_and_the_totals() {
        let reports = [
            file("a.rx", Status::Pass),
            file("b.rx", Status::Fail("first\nsecond".into())),
            file("c.rx", Status::Skip("later".into())),
        ];
        let text = render(&reports, true);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[..4], ["pass a.rx", "FAIL b.rx: first", "    | second", "skip c.rx: later"]);
        assert!(lines.contains(&"TY-2                         1     1     1"), "{text}");
        assert_eq!(lines.last(), Some(&"1 passed, 1 failed, 1 skipped"));
        assert!(any_failed(&reports));
        assert!(!render(&reports[..1], false).contains("TY-2"));
    }
}
