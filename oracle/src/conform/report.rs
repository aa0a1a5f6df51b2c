//! The plain-text report of a run: the per-file list, the per-rule table and the
//! summary (the JSON results file and the HTML page carry the same data).

use super::results::{Counts, Results, Verdict};

fn counts_line(c: &Counts) -> String {
    format!("{} pass, {} fail, {} expected-fail, {} skip", c.pass, c.fail, c.expected_fail, c.skip)
}

fn percent(c: &Counts) -> String {
    let judged = c.pass + c.fail + c.expected_fail;
    if judged == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * c.pass as f64 / judged as f64)
    }
}

/// One line per file: verdict, path and, unless it passed, why.
pub fn file_list(r: &Results) -> String {
    let mut out = String::new();
    for f in &r.results {
        out.push_str(&format!("{:<13} {}", f.verdict.name().to_uppercase(), f.path));
        if f.verdict != Verdict::Pass && !f.why.is_empty() {
            out.push_str(&format!("  -- {}", f.why.replace('\n', " ")));
        }
        out.push('\n');
    }
    out
}

fn row(label: &str, width: usize, c: &Counts) -> String {
    format!("{label:<width$} {:>5} {:>5} {:>5} {:>5}  {}\n", c.pass, c.fail, c.expected_fail, c.skip, percent(c))
}

fn header(label: &str, width: usize) -> String {
    format!("{label:<width$} {:>5} {:>5} {:>5} {:>5}  rate\n", "pass", "fail", "xfail", "skip")
}

/// The per-rule table, in spec order, and the per-section one.
pub fn rule_table(r: &Results) -> String {
    let mut out = header("rule", 16);
    for x in &r.rules {
        out.push_str(&row(&x.rule, 16, &x.counts));
    }
    out.push('\n');
    out.push_str(&header("section", 24));
    for s in &r.sections {
        out.push_str(&row(&s.section, 24, &s.counts));
    }
    out
}

/// The closing summary.
pub fn summary(r: &Results) -> String {
    let i = &r.implementation;
    let mut out = format!(
        "{} ({} {}, dialect {}): {} files: {} ({} of judged files pass)\n",
        i.name,
        i.implementation,
        i.implementation_version,
        i.dialect,
        r.files.total(),
        counts_line(&r.files),
        percent(&r.files)
    );
    out.push_str(&format!(
        "run files: {} of {} pass ({})\n",
        r.run_files.pass,
        r.run_files.total(),
        percent(&r.run_files)
    ));
    let classes: Vec<String> = r.outcomes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    out.push_str(&format!("requests by outcome: {}\n", classes.join(", ")));
    if !r.new_failures.is_empty() {
        out.push_str(&format!("{} new failure(s) (not in the expected-failures file):\n", r.new_failures.len()));
        for p in &r.new_failures {
            out.push_str(&format!("  {p}\n"));
        }
    }
    if !r.fixed.is_empty() {
        out.push_str(&format!("{} listed failure(s) now pass (fixed; remove them from the list):\n", r.fixed.len()));
        for p in &r.fixed {
            out.push_str(&format!("  {p}\n"));
        }
    }
    out.push_str(&format!("{:.1} s\n", r.seconds));
    out
}
