//! The static pipeline of `oracle check`: well-formedness, then normalization, then the
//! normal-form check of the normalized program (later issues add types and StructInfo).

use spec_model::diagnostic::Diagnostic;
use spec_model::grammar::IRModule;
use spec_model::normal_form::{check_normal_form, normalize};
use spec_model::rules::rule_summary;
use spec_model::well_formed::check_well_formed;

/// What checking a module found.
pub struct CheckReport {
    /// Errors and warnings, in pipeline order.
    pub diagnostics: Vec<Diagnostic>,
    /// The normalized module, when the program is well-formed and normalizes.
    pub normalized: Option<IRModule>,
}

impl CheckReport {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.is_error())
    }
}

/// Well-formedness (WF-1..18) on the program as written; if it holds, normalization
/// (NORM-5) and the normal-form criteria (NF-1..4) on its result. With `as_written`,
/// the normal-form criteria are also checked on the program as written.
pub fn check_module(m: &IRModule, as_written: bool) -> CheckReport {
    let mut diagnostics = check_well_formed(m);
    if as_written {
        diagnostics.extend(check_normal_form(m));
    }
    if diagnostics.iter().any(|d| d.is_error()) {
        return CheckReport { diagnostics, normalized: None };
    }
    match normalize(m) {
        Ok(n) => {
            // The normalizer's output must be in normal form; a violation here is a bug.
            diagnostics.extend(check_normal_form(&n));
            CheckReport { diagnostics, normalized: Some(n) }
        }
        Err(errors) => {
            diagnostics.extend(errors);
            CheckReport { diagnostics, normalized: None }
        }
    }
}

/// Renders a diagnostic with the source excerpt and the rule's one-line summary.
pub fn render_with_rule(d: &Diagnostic, file_name: &str, source: &str) -> String {
    let mut d = d.clone();
    if let Some(summary) = rule_summary(&d.code) {
        d.notes.push(format!("{}: {summary}", d.code));
    }
    d.render(file_name, source)
}
