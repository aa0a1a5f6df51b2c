//! The static pipeline of `oracle check`: well-formedness, then normalization, then the
//! normal-form check of the normalized program, then StructInfo derivation and type
//! checking (which reads the StructInfo of operator calls, TY-7.1).

use prover::AutoProver;
use spec_model::diagnostic::Diagnostic;
use spec_model::grammar::{IRModule, StructInfo, Var};
use spec_model::normal_form::{check_normal_form, normalize};
use spec_model::rules::rule_summary;
use spec_model::struct_info::{derive_struct_info, ShapeProver, SinfoReport};
use spec_model::text::print_struct_info;
use spec_model::types::{check_types, TypeReport};
use spec_model::well_formed::check_well_formed;

/// What checking a module found.
pub struct CheckReport {
    /// Errors and warnings, in pipeline order.
    pub diagnostics: Vec<Diagnostic>,
    /// The normalized module, when the program is well-formed and normalizes.
    pub normalized: Option<IRModule>,
    /// The derived StructInfo, when the normalized program is in normal form.
    pub sinfo: Option<SinfoReport>,
    /// The types, likewise.
    pub types: Option<TypeReport>,
}

impl CheckReport {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.is_error())
    }
}

thread_local! {
    /// The default prover, shared by every check on this thread so its cache is too
    /// (a Z3 context is not `Send`).
    static AUTO: AutoProver = AutoProver::default();
}

/// [`check_module_with`] and the auto prover (syntactic, egg, Z3).
pub fn check_module(m: &IRModule, as_written: bool) -> CheckReport {
    AUTO.with(|p| check_module_with(m, as_written, p))
}

/// Well-formedness (WF-1..18) on the program as written; if it holds, normalization
/// (NORM-5) and the normal-form criteria (NF-1..4) on its result; if those hold,
/// StructInfo derivation (SI-D, SI-CC, OP-*) and type checking (TY, SUB) on it. With
/// `as_written`, the normal-form criteria are also checked on the program as written.
pub fn check_module_with(m: &IRModule, as_written: bool, prover: &dyn ShapeProver) -> CheckReport {
    let mut diagnostics = check_well_formed(m);
    if as_written {
        diagnostics.extend(check_normal_form(m));
    }
    let mut report = CheckReport { diagnostics: Vec::new(), normalized: None, sinfo: None, types: None };
    if diagnostics.iter().any(|d| d.is_error()) {
        report.diagnostics = diagnostics;
        return report;
    }
    let n = match normalize(m) {
        Ok(n) => n,
        Err(errors) => {
            diagnostics.extend(errors);
            report.diagnostics = diagnostics;
            return report;
        }
    };
    // The normalizer's output must be in normal form; a violation here is a bug.
    let nf = check_normal_form(&n);
    let in_normal_form = nf.is_empty();
    diagnostics.extend(nf);
    if in_normal_form {
        let sinfo = derive_struct_info(&n, prover);
        let types = check_types(&n, &sinfo);
        // Types first where both passes speak about one place: the spec states them first.
        let mut semantic: Vec<Diagnostic> = types.diagnostics.iter().chain(&sinfo.diagnostics).cloned().collect();
        semantic.sort_by_key(|d| d.span.lo);
        diagnostics.extend(semantic);
        report.sinfo = Some(sinfo);
        report.types = Some(types);
    }
    report.normalized = Some(n);
    report.diagnostics = diagnostics;
    report
}

/// Renders a diagnostic with the source excerpt and the rule's one-line summary.
pub fn render_with_rule(d: &Diagnostic, file_name: &str, source: &str) -> String {
    let mut d = d.clone();
    if let Some(summary) = rule_summary(&d.code) {
        d.notes.push(format!("{}: {summary}", d.code));
    }
    d.render(file_name, source)
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
