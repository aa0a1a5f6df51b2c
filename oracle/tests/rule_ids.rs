//! Every rule-ID literal in `spec-model` and `oracle` names a rule of `rules.rs` (or a
//! limit, or a registered operator's `OP-` rule), cited in full: `grep` for an ID finds
//! every place that raises it, and no diagnostic names a rule the tables do not know.

use spec_model::ops::Op;
use spec_model::rules::{LIMITS, RULES, RUNTIME_RULES};
use std::path::{Path, PathBuf};

/// The families of rule IDs (DESIGN.md, "Rule IDs").
const PREFIXES: &[&str] =
    &["NF", "NORM", "WF", "SUB", "TY", "SI", "SI-MC", "SI-CC", "SI-SP", "SI-D", "SEM", "OP", "LIMIT"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The contents of the plain (not raw) string literals of `src`, with their line numbers.
fn string_literals(src: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let (mut line, mut chars) = (1, src.chars().peekable());
    let mut prev = ' ';
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            // A character literal such as '"' is not the start of a string.
            '\'' if chars.peek() == Some(&'"') => {
                chars.next();
            }
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                        break;
                    }
                }
            }
            '"' if prev != 'r' && prev != '#' => {
                let mut lit = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => lit.extend(chars.next()),
                        '"' => break,
                        '\n' => {
                            line += 1;
                            lit.push(c);
                        }
                        _ => lit.push(c),
                    }
                }
                out.push((line, lit));
            }
            _ => {}
        }
        prev = c;
    }
    out
}

/// Is `s` written like a rule ID (a family, or a family and a number or name)?
fn looks_like_rule_id(s: &str) -> bool {
    PREFIXES.iter().any(|p| {
        s == *p
            || s.strip_prefix(p).and_then(|rest| rest.strip_prefix('-')).is_some_and(|rest| {
                !rest.is_empty()
                    && !rest.ends_with('-')
                    && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
                    && (rest.starts_with(|c: char| c.is_ascii_digit()) || *p == "OP" || *p == "LIMIT")
            })
    })
}

fn known(id: &str) -> bool {
    RULES.iter().chain(RUNTIME_RULES).chain(LIMITS).any(|(r, _)| *r == id)
        || Op::ALL.iter().any(|op| op.def().rule == id)
}

#[test]
fn every_rule_id_literal_is_a_rule() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for crate_src in ["spec-model/src", "oracle/src"] {
        rust_files(&root.join(crate_src), &mut files);
    }
    let mut unknown = Vec::new();
    let mut seen = 0;
    for f in &files {
        let src = std::fs::read_to_string(f).expect("readable");
        for (line, lit) in string_literals(&src) {
            if looks_like_rule_id(&lit) {
                seen += 1;
                if !known(&lit) {
                    unknown.push(format!("{}:{line}: \"{lit}\"", f.strip_prefix(&root).unwrap_or(f).display()));
                }
            }
        }
    }
    assert!(unknown.is_empty(), "rule IDs that no rule table has:\n{}", unknown.join("\n"));
    // The scan must see the rule IDs (a broken scanner would pass vacuously).
    assert!(seen > 300, "only {seen} rule-ID literals found");
}

#[test]
fn the_scanner_flags_abbreviated_and_unknown_ids() {
    assert!(looks_like_rule_id("SEM") && !known("SEM"));
    assert!(looks_like_rule_id("WF-99") && !known("WF-99"));
    assert!(looks_like_rule_id("OP-frobnicate") && !known("OP-frobnicate"));
    assert!(looks_like_rule_id("SI-D-11.1") && known("SI-D-11.1"));
    assert!(!looks_like_rule_id("SEM-") && !looks_like_rule_id("OP-{short}") && !looks_like_rule_id("float32"));
    let lits = string_literals("let a = \"WF-3\"; // \"NF-9\"\nlet b = '\"'; let c = \"x\\\"y\";");
    assert_eq!(lits, vec![(1, "WF-3".to_string()), (2, "x\"y".to_string())]);
}
