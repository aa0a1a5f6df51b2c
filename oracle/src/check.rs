//! `oracle check`: the static pipeline (`spec_model::check`) with the auto prover, and
//! how its findings are shown.

use prover::AutoProver;
pub use spec_model::check::{check_module_with, CheckReport};
use spec_model::diagnostic::Diagnostic;
use spec_model::grammar::{IRModule, StructInfo, Var};
use spec_model::rules::rule_summary;
use spec_model::struct_info::SinfoReport;
use spec_model::text::print_struct_info;
use std::cell::RefCell;

thread_local! {
    /// The default prover, shared by every check on this thread so its cache is too
    /// (a Z3 context is not `Send`).
    static AUTO: RefCell<AutoProver> = RefCell::new(AutoProver::default());
}

/// [`check_module_with`] and the auto prover (syntactic, egg, Z3), under the budgets
/// in force.
pub fn check_module(m: &IRModule, as_written: bool) -> CheckReport {
    AUTO.with(|p| {
        let mut p = p.borrow_mut();
        p.apply_budgets(&spec_model::limits::current());
        p.start_module();
        check_module_with(m, as_written, &*p)
    })
}

/// Renders a diagnostic with the source excerpt and the rule's one-line summary.
pub fn render_with_rule(d: &Diagnostic, file_name: &str, source: &str) -> String {
    let mut d = d.clone();
    if let Some(summary) = rule_summary(&d.code) {
        d.notes.push(format!("{}: {summary}", d.code));
    }
    d.render(file_name, source)
}

/// The errors among `diagnostics`, rendered with their rules (the first
/// `Budgets::diagnostics` of them, then a count).
pub fn render_errors(diagnostics: &[Diagnostic], file_name: &str, source: &str) -> String {
    let errors: Vec<Diagnostic> = diagnostics.iter().filter(|d| d.is_error()).cloned().collect();
    spec_model::diagnostic::render_capped(&errors, |d| render_with_rule(d, file_name, source))
}

/// The derived StructInfo of every global function and, under it, of every binding
/// in it (nested functions' bindings included), in `.rx` syntax.
pub fn show_sinfo(sinfo: &SinfoReport) -> String {
    let mut out = String::new();
    if sinfo.functions.is_empty() {
        out.push_str("(no Relax functions)\n");
    }
    for (name, si) in &sinfo.functions {
        out.push_str(&format!("@{name}: {}\n", print_struct_info(si)));
        for (_, v, s) in sinfo.bindings.iter().filter(|(f, _, _)| f == name) {
            out.push_str(&format!("    {}: {}\n", v.name(), print_struct_info(s)));
        }
    }
    out
}

/// The StructInfo derived for `name`: a global function's, else the last binding of
/// a variable so named (`expect-sinfo`).
pub fn sinfo_of<'r>(sinfo: &'r SinfoReport, name: &str) -> Option<&'r StructInfo> {
    let global = name.strip_prefix('@').unwrap_or(name);
    if let Some((_, s)) = sinfo.functions.iter().find(|(n, _)| n == global) {
        return Some(s);
    }
    sinfo.bindings.iter().rev().find(|(_, v, _): &&(String, Var, StructInfo)| v.name() == name).map(|(_, _, s)| s)
}
