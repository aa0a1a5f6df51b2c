//! Criteria on shape variables and annotation shapes: WF-4 (return annotation scope),
//! WF-5 (shape variables bound before use), WF-9 (ndim in variable annotations),
//! WF-13 (TensorStructInfo shapes), WF-14 (ShapeStructInfo values).
//!
//! One walk keeps the shape variables in scope (Σ) and the Relax variables in scope,
//! and files each problem under the criterion that governs the place it occurs:
//! a parameter annotation and a MatchCast (WF-5), a return annotation (WF-4), any
//! other annotation (WF-13 / WF-14); ndim mismatches in a variable's annotation are
//! WF-9's, elsewhere WF-13's / WF-14's (proofs-notes/well-formedness.md).

use crate::diagnostic::Diagnostic;
use crate::grammar::{Binding, Expr, ExprKind, Function, IRModule, PrimExpr, PrimVar, StructInfo, StructInfoKind};
use crate::span::Span;
use imbl::HashSet as PSet;

/// Where an annotation stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A function parameter's annotation: its bare dimensions bind shape variables.
    Param,
    /// A function's return annotation.
    Return,
    /// A binding variable's annotation.
    VarAnnotation,
    /// A MatchCast's StructInfo: a new shape variable alone in a dimension binds it.
    MatchCast,
    /// A call's `sinfo_args`.
    SinfoArg,
    /// A ShapeExpr computed by the program (not an annotation).
    Value,
}

#[derive(Clone)]
struct Scope {
    shapes: PSet<u64>,
    vars: PSet<u64>,
}

#[derive(Default)]
struct Walk {
    out: Vec<Diagnostic>,
}

/// The shape variables a parameter or MatchCast annotation binds: those standing
/// alone as a dimension (WF-5), outside nested FuncStructInfo (which binds its own).
fn bare_dims(s: &StructInfo, out: &mut Vec<PrimVar>) {
    match &*s.kind {
        StructInfoKind::Tensor { shape: Some(Expr { kind: ExprKind::ShapeExpr(ds), .. }), .. } => {
            out.extend(ds.iter().filter_map(|d| d.as_var().cloned()))
        }
        StructInfoKind::Shape { values: Some(vs), .. } => out.extend(vs.iter().filter_map(|d| d.as_var().cloned())),
        StructInfoKind::Tuple { fields } => fields.iter().for_each(|f| bare_dims(f, out)),
        _ => {}
    }
}

impl Walk {
    fn error(&mut self, rule: &str, msg: String, span: Span, label: &str) {
        self.out.push(Diagnostic::error(rule, msg, span).with_label(label));
    }

    /// Shape variables of `dims` not in scope. In a MatchCast, a bare new variable is
    /// bound here (left to right), so later dimensions may use it.
    fn dims(&mut self, dims: &[PrimExpr], role: Role, sc: &mut Scope, unbound_rule: &str) {
        for d in dims {
            if role == Role::MatchCast {
                if let Some(v) = d.as_var() {
                    sc.shapes.insert(v.id());
                    continue;
                }
            }
            for v in d.vars() {
                if !sc.shapes.contains(&v.id()) {
                    let (rule, why) = match role {
                        Role::Return => (
                            "WF-4",
                            "a return annotation uses only shape variables from the outer scope or the parameters",
                        ),
                        Role::Param | Role::MatchCast => {
                            ("WF-5", "only a dimension consisting of the variable alone binds it")
                        }
                        Role::Value => ("WF-5", "bind it with a parameter's annotation or a MatchCast before using it"),
                        _ => (unbound_rule, "not in scope at this annotation"),
                    };
                    self.error(rule, format!("shape variable `{}` is not bound here", v.name()), d.span, why);
                }
            }
        }
    }

    /// Checks one annotation in the given role and scope (MatchCast roles extend `sc`).
    fn annotation(&mut self, s: &StructInfo, role: Role, sc: &mut Scope) {
        let ndim_rule = |tensor: bool| match role {
            Role::Param | Role::VarAnnotation => "WF-9",
            _ if tensor => "WF-13",
            _ => "WF-14",
        };
        match &*s.kind {
            StructInfoKind::Tensor { shape: Some(shape), ndim, .. } => match &shape.kind {
                ExprKind::ShapeExpr(ds) => {
                    self.dims(ds, role, sc, "WF-13");
                    if *ndim != ds.len() as i64 {
                        self.error(
                            ndim_rule(true),
                            format!("ndim is {ndim} but the shape has {} dimensions", ds.len()),
                            s.span,
                            "ndim must match the shape",
                        );
                    }
                }
                ExprKind::Var(v) => {
                    if !sc.vars.contains(&v.id()) {
                        self.error(
                            "WF-13",
                            format!("the shape variable `{}` of this tensor annotation is not in scope", v.name()),
                            shape.span,
                            "a shape given by a variable needs that variable in scope",
                        );
                    }
                }
                _ => self.error(
                    "WF-13",
                    "a tensor annotation's shape must be a Var or a ShapeExpr".into(),
                    shape.span,
                    "not a Var or ShapeExpr",
                ),
            },
            StructInfoKind::Shape { values: Some(vs), ndim } => {
                self.dims(vs, role, sc, "WF-14");
                if *ndim != vs.len() as i64 {
                    self.error(
                        ndim_rule(false),
                        format!("ndim is {ndim} but there are {} values", vs.len()),
                        s.span,
                        "ndim must match the values",
                    );
                }
            }
            StructInfoKind::Tuple { fields } => fields.iter().for_each(|f| self.annotation(f, role, sc)),
            StructInfoKind::Func { params, ret, .. } => {
                // A FuncStructInfo binds the shape variables its parameters introduce
                // (as erase_to_well_defined reads it), for its own return only.
                let mut inner = sc.clone();
                let mut bound = Vec::new();
                params.iter().flatten().for_each(|p| bare_dims(p, &mut bound));
                for v in bound {
                    inner.shapes.insert(v.id());
                }
                let role = if role == Role::MatchCast { Role::SinfoArg } else { role };
                params.iter().flatten().for_each(|p| self.annotation(p, role, &mut inner));
                self.annotation(ret, role, &mut inner);
            }
            _ => {}
        }
    }

    fn function(&mut self, f: &Function, outer: &Scope) {
        // The signature binds every shape variable standing alone in a parameter's
        // annotation, for the whole signature and body (proofs-notes/well-formedness.md, W-5).
        let mut sc = outer.clone();
        let mut bound = Vec::new();
        f.params.iter().filter_map(|p| p.annotation()).for_each(|a| bare_dims(a, &mut bound));
        for v in bound {
            sc.shapes.insert(v.id());
        }
        for p in &f.params {
            if let Some(a) = p.annotation() {
                self.annotation(a, Role::Param, &mut sc.clone());
            }
            sc.vars.insert(p.id());
        }
        if let Some(r) = &f.ret_struct_info {
            self.annotation(r, Role::Return, &mut sc.clone());
        }
        self.expr(&f.body, &sc);
    }

    fn expr(&mut self, e: &Expr, sc: &Scope) {
        match &e.kind {
            ExprKind::ShapeExpr(ds) => self.dims(ds, Role::Value, &mut sc.clone(), "WF-5"),
            ExprKind::SeqExpr(s) => {
                let mut sc = sc.clone();
                for b in s.blocks.iter().flat_map(|b| &b.bindings) {
                    match b {
                        Binding::VarBinding { var, value, .. } => {
                            let mut inner = sc.clone();
                            if matches!(value.kind, ExprKind::Function(_)) {
                                inner.vars.insert(var.id());
                            }
                            self.expr(value, &inner);
                        }
                        Binding::MatchCast { struct_info, value, .. } => {
                            self.expr(value, &sc);
                            self.annotation(struct_info, Role::MatchCast, &mut sc);
                        }
                    }
                    if let Some(v) = b.var() {
                        sc.vars.insert(v.id());
                        if let Some(a) = v.annotation() {
                            self.annotation(a, Role::VarAnnotation, &mut sc.clone());
                        }
                    }
                }
                self.expr(&s.body, &sc);
            }
            ExprKind::Function(f) => self.function(f, sc),
            ExprKind::If(i) => {
                self.expr(&i.cond, sc);
                self.expr(&i.true_branch, sc);
                self.expr(&i.false_branch, sc);
            }
            ExprKind::Call(c) => {
                self.expr(&c.op, sc);
                c.args.iter().for_each(|a| self.expr(a, sc));
                for s in &c.sinfo_args {
                    self.annotation(s, Role::SinfoArg, &mut sc.clone());
                }
            }
            ExprKind::Tuple(fs) => fs.iter().for_each(|x| self.expr(x, sc)),
            ExprKind::TupleGetItem { tuple_value, .. } => self.expr(tuple_value, sc),
            _ => {}
        }
    }
}

/// Runs the walk over every Relax function and keeps the diagnostics of one rule.
fn diagnostics(m: &IRModule, rule: &str) -> Vec<Diagnostic> {
    let mut w = Walk::default();
    let top = Scope { shapes: PSet::new(), vars: PSet::new() };
    for (_, f) in m.relax_functions() {
        w.function(f, &top);
    }
    w.out.into_iter().filter(|d| d.code == rule).collect()
}

/// WF-4: a function's return annotation uses only shape variables in scope where the
/// function is defined or bound by its parameters' annotations.
pub fn wf4_return_annotation_shape_vars(m: &IRModule) -> Vec<Diagnostic> {
    diagnostics(m, "WF-4")
}

/// WF-5: shape variables appear in ShapeExprs, parameter annotations and MatchCasts
/// only once bound; only a dimension consisting of the variable alone, in a parameter
/// annotation or a MatchCast, binds it.
pub fn wf5_shape_vars_bound_before_use(m: &IRModule) -> Vec<Diagnostic> {
    diagnostics(m, "WF-5")
}

/// WF-9: in a variable's annotation (parameter or binding), every TensorStructInfo's
/// and ShapeStructInfo's ndim matches the number of dimensions of its shape or values.
pub fn wf9_annotation_ndim(m: &IRModule) -> Vec<Diagnostic> {
    diagnostics(m, "WF-9")
}

/// WF-13: a TensorStructInfo's shape is a Var in scope or a ShapeExpr over shape
/// variables in scope, with as many dimensions as ndim (annotations other than a
/// parameter's, a return's or a MatchCast's, whose scoping WF-5 and WF-4 govern).
pub fn wf13_tensor_shape_annotations(m: &IRModule) -> Vec<Diagnostic> {
    diagnostics(m, "WF-13")
}

/// WF-14: a ShapeStructInfo's values use only shape variables in scope, and ndim is
/// their number (same places as WF-13).
pub fn wf14_shape_values_annotations(m: &IRModule) -> Vec<Diagnostic> {
    diagnostics(m, "WF-14")
}
