//! Criteria on shape variables and annotation shapes: WF-4 (return annotation scope),
//! WF-5 (shape variables bound before use), WF-9 (ndim in variable annotations),
//! WF-13 (TensorStructInfo shapes), WF-14 (ShapeStructInfo values).
//!
//! Each criterion is a query over the shapes the program writes ([`shape_sites`]).
//! Every unbound shape variable falls under the criterion governing the place it
//! occurs: a parameter annotation, a MatchCast or a ShapeExpr (WF-5), a return
//! annotation (WF-4), any other annotation (WF-13 / WF-14); ndim mismatches in a
//! variable's annotation are WF-9's, elsewhere WF-13's / WF-14's
//! (proofs-notes/well-formedness.md).

use super::shape_facts::{shape_sites, Form, Role, ShapeSite, ShapeVarUse};
use crate::diagnostic::Diagnostic;
use crate::grammar::IRModule;

/// WF-4: a function's return annotation uses only shape variables in scope where the
/// function is defined or bound by its parameters' annotations.
pub fn wf4_return_annotation_shape_vars(m: &IRModule) -> Vec<Diagnostic> {
    let why = "a return annotation uses only shape variables from the outer scope or the parameters";
    let sites = shape_sites(m);
    let returns = sites.iter().filter(|s| s.role == Role::Return);
    returns.flat_map(|s| s.unbound_uses()).map(|u| not_bound("WF-4", u, why)).collect()
}

/// WF-5: shape variables appear in ShapeExprs, parameter annotations and MatchCasts
/// only once bound; only a dimension consisting of the variable alone, in a parameter
/// annotation or a MatchCast, binds it.
pub fn wf5_shape_vars_bound_before_use(m: &IRModule) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for site in &shape_sites(m) {
        let why = match site.role {
            Role::Param | Role::MatchCast => "only a dimension consisting of the variable alone binds it",
            Role::Value => "bind it with a parameter's annotation or a MatchCast before using it",
            _ => continue,
        };
        out.extend(site.unbound_uses().map(|u| not_bound("WF-5", u, why)));
    }
    out
}

/// WF-9: in a variable's annotation (parameter or binding), every TensorStructInfo's
/// and ShapeStructInfo's ndim matches the number of dimensions of its shape or values.
pub fn wf9_annotation_ndim(m: &IRModule) -> Vec<Diagnostic> {
    let sites = shape_sites(m);
    let of_variables = sites.iter().filter(|s| annotates_a_variable(s.role));
    of_variables.filter_map(|s| ndim_mismatch("WF-9", s)).collect()
}

/// WF-13: a TensorStructInfo's shape is a Var in scope or a ShapeExpr over shape
/// variables in scope, with as many dimensions as ndim (annotations other than a
/// parameter's, a return's or a MatchCast's, whose scoping WF-5 and WF-4 govern).
pub fn wf13_tensor_shape_annotations(m: &IRModule) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for site in shape_sites(m).iter().filter(|s| s.is_tensor()) {
        if matches!(site.role, Role::VarAnnotation | Role::SinfoArg) {
            out.extend(site.unbound_uses().map(|u| not_bound("WF-13", u, "not in scope at this annotation")));
        }
        match site.form {
            Form::TensorVar { shape, var } if !site.vars.contains(&var.id()) => out.push(
                Diagnostic::error(
                    "WF-13",
                    format!("the shape variable `{}` of this tensor annotation is not in scope", var.name()),
                    shape.span,
                )
                .with_label("a shape given by a variable needs that variable in scope"),
            ),
            Form::TensorOther { shape } => out.push(
                Diagnostic::error("WF-13", "a tensor annotation's shape must be a Var or a ShapeExpr", shape.span)
                    .with_label("not a Var or ShapeExpr"),
            ),
            _ => {}
        }
        if !annotates_a_variable(site.role) {
            out.extend(ndim_mismatch("WF-13", site));
        }
    }
    out
}

/// WF-14: a ShapeStructInfo's values use only shape variables in scope, and ndim is
/// their number (same places as WF-13).
pub fn wf14_shape_values_annotations(m: &IRModule) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for site in shape_sites(m).iter().filter(|s| matches!(s.form, Form::ShapeValues { .. })) {
        if matches!(site.role, Role::VarAnnotation | Role::SinfoArg) {
            out.extend(site.unbound_uses().map(|u| not_bound("WF-14", u, "not in scope at this annotation")));
        }
        if !annotates_a_variable(site.role) {
            out.extend(ndim_mismatch("WF-14", site));
        }
    }
    out
}

/// Is this the annotation of a variable, a parameter or a binding's (WF-9)?
fn annotates_a_variable(role: Role) -> bool {
    matches!(role, Role::Param | Role::VarAnnotation)
}

fn not_bound(rule: &str, u: &ShapeVarUse, why: &str) -> Diagnostic {
    Diagnostic::error(rule, format!("shape variable `{}` is not bound here", u.var.name()), u.dim).with_label(why)
}

/// The error for a TensorStructInfo or ShapeStructInfo whose ndim is not its number
/// of dimensions, if it is one.
fn ndim_mismatch(rule: &str, site: &ShapeSite) -> Option<Diagnostic> {
    let (si, message, label) = match site.form {
        Form::TensorDims { si, ndim, dims } if ndim != dims as i64 => {
            (si, format!("ndim is {ndim} but the shape has {dims} dimensions"), "ndim must match the shape")
        }
        Form::ShapeValues { si, ndim, values } if ndim != values as i64 => {
            (si, format!("ndim is {ndim} but there are {values} values"), "ndim must match the values")
        }
        _ => return None,
    };
    Some(Diagnostic::error(rule, message, si.span).with_label(label))
}
