//! The per-rule and per-section tables of a run: the corpus is a rule-coverage
//! matrix, so each file's verdict counts for every rule it names, in spec order.

use super::count;
use super::expected::ExpectedFailures;
use super::results::{Counts, FileResult, Implementation, Results, RuleRow, SectionRow, Verdict};
use spec_model::rules::{rule_summary, RULES, RUNTIME_RULES};
use std::collections::BTreeMap;

/// The spec's sections, in the spec's order, with the rule-ID prefixes they own.
pub const SECTIONS: &[(&str, &[&str])] = &[
    ("Normal Form", &["NF-", "NORM-"]),
    ("Well-Formedness", &["WF-"]),
    ("Subtyping", &["SUB-"]),
    ("Type Checking", &["TY-"]),
    ("MatchCast", &["SI-MC-"]),
    ("Checking Compatibility", &["SI-CC-"]),
    ("Unification", &["SI-SP-"]),
    ("StructInfo Derivation", &["SI-D-"]),
    ("Evaluation", &["SEM-"]),
    ("Operators", &["OP-"]),
];

/// The section a rule ID belongs to ("Other" for none).
pub fn section_of(rule: &str) -> &'static str {
    SECTIONS.iter().find(|(_, ps)| ps.iter().any(|p| rule.starts_with(p))).map(|(s, _)| *s).unwrap_or("Other")
}

/// A file's section: its first rule's.
pub fn section_of_rules(rules: &[String]) -> &'static str {
    rules.first().map(|r| section_of(r)).unwrap_or("Other")
}

/// Where a rule sorts: the spec's rules in `RULES` order, then run-time rules, then
/// operators by name, then anything else by name.
fn rule_key(rule: &str) -> (usize, usize, String) {
    if let Some(i) = RULES.iter().position(|(r, _)| *r == rule) {
        return (0, i, String::new());
    }
    if let Some(i) = RUNTIME_RULES.iter().position(|(r, _)| *r == rule) {
        return (1, i, String::new());
    }
    let section = SECTIONS.iter().position(|(s, _)| *s == section_of(rule)).unwrap_or(SECTIONS.len());
    (2, section, rule.to_string())
}

/// The tables, the totals and the expectation-file comparison of a run.
pub fn summarize(
    implementation: Implementation,
    results: Vec<FileResult>,
    expected: &ExpectedFailures,
    seconds: f64,
) -> Results {
    let mut by_rule: BTreeMap<String, (Counts, Vec<String>)> = BTreeMap::new();
    let mut by_section: BTreeMap<&'static str, Counts> = BTreeMap::new();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    for f in &results {
        for r in &f.rules {
            let e = by_rule.entry(r.clone()).or_default();
            e.0.add(f.verdict);
            if f.verdict != Verdict::Pass {
                e.1.push(f.path.clone());
            }
        }
        by_section.entry(section_of_rules(&f.rules)).or_default().add(f.verdict);
        for q in &f.requests {
            *outcomes.entry(q.implementation.outcome.name().to_string()).or_default() += 1;
        }
    }
    let mut rules: Vec<RuleRow> = by_rule
        .into_iter()
        .map(|(rule, (counts, failing))| RuleRow {
            section: section_of(&rule).into(),
            summary: rule_summary(&rule).unwrap_or_default().to_string(),
            rule,
            counts,
            failing,
        })
        .collect();
    rules.sort_by_key(|r| rule_key(&r.rule));
    let order = |s: &str| SECTIONS.iter().position(|(n, _)| *n == s).unwrap_or(SECTIONS.len());
    let mut sections: Vec<SectionRow> =
        by_section.into_iter().map(|(s, counts)| SectionRow { section: s.into(), counts }).collect();
    sections.sort_by_key(|s| order(&s.section));
    let new_failures = results.iter().filter(|f| f.verdict == Verdict::Fail).map(|f| f.path.clone()).collect();
    let fixed = results
        .iter()
        .filter(|f| f.verdict == Verdict::Pass && expected.contains(&f.path))
        .map(|f| f.path.clone())
        .collect();
    let run_files = count(results.iter().filter(|f| f.requests.iter().any(|q| q.action == "run")));
    Results {
        protocol: conformance_protocol::VERSION,
        implementation,
        paths: Vec::new(),
        files: count(&results),
        run_files,
        outcomes,
        new_failures,
        fixed,
        rules,
        sections,
        results,
        seconds,
    }
}
