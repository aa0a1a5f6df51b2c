//! Writing a candidate as a corpus file: the input's `rules`, `description` and
//! `tolerance`, expectations stating what the candidate does now, then the printed
//! module.

use super::predicate::{guarded, is_literal, Predicate};
use oracle::check::check_module;
use oracle::corpus::Metadata;
use oracle::eval::literal::print_value;
use oracle::eval::run::outcome;
use oracle::eval::Limits;
use spec_model::normal_form::check_normal_form;
use spec_model::rules::is_checked;
use spec_model::text::parse_module;

/// `text` (pretty-printed, possibly over several lines) on one line: line breaks and
/// indentation become one space, or nothing next to a bracket; a trailing comma before
/// `]`, or before the `)` of a call, is dropped (a tuple's is kept: `(x,)`).
pub fn one_line(text: &str) -> String {
    let mut joined = String::new();
    for piece in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let glue = match (joined.chars().last(), piece.chars().next()) {
            (None, _) | (Some('(' | '['), _) | (_, Some(')' | ']')) => "",
            _ => " ",
        };
        joined.push_str(glue);
        joined.push_str(piece);
    }
    // Drop trailing commas, outside string literals.
    let chars: Vec<char> = joined.chars().collect();
    let mut out = String::with_capacity(joined.len());
    let mut calls: Vec<bool> = Vec::new();
    let mut in_str = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_str {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 1;
            } else if c == '"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' => calls.push(out.chars().last().is_some_and(|p| p.is_alphanumeric() || p == '_' || p == '.')),
            '[' => calls.push(true),
            ')' | ']' => {
                let droppable = calls.pop().unwrap_or(false);
                if droppable && out.ends_with(',') {
                    out.pop();
                }
            }
            _ => {}
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The metadata lines (without the `# ---` fences) stating what `text` does: static
/// errors as `expect: invalid RULE` (then no `run:`), warnings as `expect: warning RULE`,
/// and the `run:` call with `expect: VALUE` or `expect: error KIND`.
fn expectations(text: &str, call: Option<&str>, pred: &Predicate) -> Vec<String> {
    let text = text.to_string();
    let call = call.map(str::to_string);
    let nf_rule = match pred {
        Predicate::Check(r) if r.starts_with("NF-") => Some(r.clone()),
        _ => None,
    };
    let lines = guarded(move || {
        let Ok(m) = parse_module(&text) else { return vec!["expect: parse-error".to_string()] };
        let report = check_module(&m, false);
        let mut out: Vec<String> = Vec::new();
        fn push(out: &mut Vec<String>, line: String) {
            if !out.contains(&line) {
                out.push(line);
            }
        }
        if nf_rule.is_some() {
            for d in check_normal_form(&m).iter().filter(|d| d.is_error() && is_checked(&d.code)) {
                push(&mut out, format!("expect: invalid {}", d.code));
            }
        }
        for d in report.diagnostics.iter().filter(|d| is_checked(&d.code)) {
            let what = if d.is_error() { "invalid" } else { "warning" };
            push(&mut out, format!("expect: {what} {}", d.code));
        }
        if report.has_errors() {
            if out.is_empty() {
                push(&mut out, "expect: parse".to_string());
            }
            return out;
        }
        push(&mut out, "expect: valid".to_string());
        let (Some(call), Some(n)) = (call, report.normalized) else { return out };
        match outcome(&n, &call, Limits::default()) {
            Ok(Ok(v)) if is_literal(&v) => {
                out.push(format!("run: {call}"));
                out.push(format!("expect: {}", one_line(&print_value(&v))));
            }
            Ok(Err(kind)) => {
                out.push(format!("run: {call}"));
                out.push(format!("expect: error {kind}"));
            }
            // A closure or an object: no literal states it, so no `run:` line.
            Ok(Ok(_)) | Err(_) => {}
        }
        out
    });
    lines.unwrap_or_else(|_| vec!["expect: parse".to_string()])
}

/// The corpus file for a candidate: metadata block, blank line, printed module.
pub fn render_file(md: &Metadata, text: &str, call: Option<&str>, pred: &Predicate) -> String {
    let mut out = String::from("# ---\n");
    if !md.rules.is_empty() {
        out.push_str(&format!("# rules: [{}]\n", md.rules.join(", ")));
    }
    if !md.description.is_empty() {
        out.push_str(&format!("# description: {}\n", md.description));
    }
    if let Some(t) = md.tolerance {
        out.push_str(&format!("# tolerance: {t:e}\n"));
    }
    for line in expectations(text, call, pred) {
        out.push_str(&format!("# {line}\n"));
    }
    for (k, v) in &md.extra {
        out.push_str(&format!("# {k}: {}\n", one_line(v)));
    }
    out.push_str("# ---\n");
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out
}
