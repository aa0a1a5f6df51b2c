//! The static pipeline of `oracle check`, and of every implementation checked against
//! it: well-formedness, then normalization, then the normal-form check of the
//! normalized program, then StructInfo derivation and type checking (which reads the
//! StructInfo of operator calls, TY-7.1).

use crate::diagnostic::Diagnostic;
use crate::grammar::IRModule;
use crate::normal_form::{check_normal_form, normalize};
use crate::struct_info::{derive_struct_info, ShapeProver, SinfoReport};
use crate::types::{check_types, TypeReport};
use crate::well_formed::check_well_formed;

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
