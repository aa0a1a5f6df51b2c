//! The facts the shape criteria (WF-4, WF-5, WF-9, WF-13, WF-14) are stated over:
//! every shape written in a Relax function, that is the `shape` of a TensorStructInfo
//! or the `values` of a ShapeStructInfo in an annotation, or a ShapeExpr value, with
//! the role of the annotation, the Relax variables in scope there, and each use of a
//! shape variable in its dimensions with the shape variables (Σ) in scope at that use.
//!
//! One walk collects them in program order. It keeps Σ as the spec scopes it: a
//! function's parameter annotations bind the shape variables standing alone in their
//! dimensions, for the whole signature and body; a MatchCast binds them left to right,
//! for its own later dimensions and the rest of its SeqExpr (proofs-notes/well-formedness.md).

use crate::grammar::{Binding, Expr, ExprKind, Function, IRModule, PrimExpr, PrimVar, StructInfo, StructInfoKind, Var};
use crate::span::Span;
use imbl::HashSet as PSet;

/// Where an annotation stands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// A function parameter's annotation: its bare dimensions bind shape variables.
    Param,
    /// A function's return annotation.
    Return,
    /// A binding variable's annotation.
    VarAnnotation,
    /// A MatchCast's StructInfo: a new shape variable alone in a dimension binds it.
    MatchCast,
    /// A call's `sinfo_args`; also the parts of a FuncStructInfo inside a MatchCast,
    /// which bind nothing.
    SinfoArg,
    /// A ShapeExpr computed by the program (not an annotation).
    Value,
}

/// A shape written in the program, and where.
pub(super) struct ShapeSite<'a> {
    pub role: Role,
    pub form: Form<'a>,
    /// The shape variables its dimensions use, left to right (those a MatchCast binds
    /// are not uses).
    pub uses: Vec<ShapeVarUse>,
    /// The Relax variables in scope there.
    pub vars: PSet<u64>,
}

/// What a shape is written as.
pub(super) enum Form<'a> {
    /// A TensorStructInfo whose `shape` is a ShapeExpr of `dims` dimensions.
    TensorDims { si: &'a StructInfo, ndim: i64, dims: usize },
    /// A TensorStructInfo whose `shape` is a Relax variable.
    TensorVar { shape: &'a Expr, var: &'a Var },
    /// A TensorStructInfo whose `shape` is any other expression.
    TensorOther { shape: &'a Expr },
    /// A ShapeStructInfo with `values` values.
    ShapeValues { si: &'a StructInfo, ndim: i64, values: usize },
    /// A ShapeExpr value.
    ShapeExpr,
    /// A PrimStructInfo with a value (`R.Prim(value=n)`, S-prim-value): one dimension.
    PrimValue,
}

/// A shape variable used in a dimension.
pub(super) struct ShapeVarUse {
    pub var: PrimVar,
    /// The dimension it occurs in.
    pub dim: Span,
    /// The shape variables in scope there.
    pub shapes: PSet<u64>,
}

impl ShapeSite<'_> {
    /// Is it a TensorStructInfo's shape?
    pub fn is_tensor(&self) -> bool {
        matches!(self.form, Form::TensorDims { .. } | Form::TensorVar { .. } | Form::TensorOther { .. })
    }

    /// The uses of shape variables that are not in scope.
    pub fn unbound_uses(&self) -> impl Iterator<Item = &ShapeVarUse> {
        self.uses.iter().filter(|u| !u.shapes.contains(&u.var.id()))
    }
}

/// Every shape written in the Relax functions of `m`, in program order.
pub(super) fn shape_sites(m: &IRModule) -> Vec<ShapeSite<'_>> {
    let mut w = Walk { sites: Vec::new() };
    let top = Scope { shapes: PSet::new(), vars: PSet::new() };
    for (_, f) in m.relax_functions() {
        w.function(f, &top);
    }
    w.sites
}

#[derive(Clone)]
struct Scope {
    shapes: PSet<u64>,
    vars: PSet<u64>,
}

struct Walk<'a> {
    sites: Vec<ShapeSite<'a>>,
}

/// The shape variables a parameter or MatchCast annotation binds: those standing
/// alone as a dimension (WF-5), outside nested FuncStructInfo (which binds its own).
fn bare_dims(s: &StructInfo, out: &mut Vec<PrimVar>) {
    match &*s.kind {
        StructInfoKind::Tensor { shape: Some(Expr { kind: ExprKind::ShapeExpr(ds), .. }), .. } => {
            out.extend(ds.iter().filter_map(|d| d.as_var().cloned()))
        }
        StructInfoKind::Shape { values: Some(vs), .. } => out.extend(vs.iter().filter_map(|d| d.as_var().cloned())),
        StructInfoKind::Prim { value: Some(v), .. } => out.extend(v.as_var().cloned()),
        StructInfoKind::Tuple { fields } => fields.iter().for_each(|f| bare_dims(f, out)),
        _ => {}
    }
}

/// The uses in `dims`. In a MatchCast, a bare new variable is bound here (left to
/// right), so later dimensions may use it.
fn dims(dims: &[PrimExpr], role: Role, sc: &mut Scope) -> Vec<ShapeVarUse> {
    let mut uses = Vec::new();
    for d in dims {
        match d.as_var() {
            Some(v) if role == Role::MatchCast => {
                sc.shapes.insert(v.id());
            }
            _ => {
                uses.extend(d.vars().into_iter().map(|var| ShapeVarUse { var, dim: d.span, shapes: sc.shapes.clone() }))
            }
        }
    }
    uses
}

impl<'a> Walk<'a> {
    fn site(&mut self, role: Role, form: Form<'a>, uses: Vec<ShapeVarUse>, sc: &Scope) {
        self.sites.push(ShapeSite { role, form, uses, vars: sc.vars.clone() });
    }

    /// One annotation in the given role and scope (a MatchCast extends `sc`).
    fn annotation(&mut self, s: &'a StructInfo, role: Role, sc: &mut Scope) {
        match &*s.kind {
            StructInfoKind::Tensor { shape: Some(shape), ndim, .. } => match &shape.kind {
                ExprKind::ShapeExpr(ds) => {
                    let uses = dims(ds, role, sc);
                    self.site(role, Form::TensorDims { si: s, ndim: *ndim, dims: ds.len() }, uses, sc);
                }
                ExprKind::Var(var) => self.site(role, Form::TensorVar { shape, var }, Vec::new(), sc),
                _ => self.site(role, Form::TensorOther { shape }, Vec::new(), sc),
            },
            StructInfoKind::Shape { values: Some(vs), ndim } => {
                let uses = dims(vs, role, sc);
                self.site(role, Form::ShapeValues { si: s, ndim: *ndim, values: vs.len() }, uses, sc);
            }
            StructInfoKind::Prim { value: Some(v), .. } => {
                let uses = dims(std::slice::from_ref(v), role, sc);
                self.site(role, Form::PrimValue, uses, sc);
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

    fn function(&mut self, f: &'a Function, outer: &Scope) {
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

    fn expr(&mut self, e: &'a Expr, sc: &Scope) {
        match &e.kind {
            ExprKind::ShapeExpr(ds) => {
                let uses = dims(ds, Role::Value, &mut sc.clone());
                self.site(Role::Value, Form::ShapeExpr, uses, sc);
            }
            ExprKind::SeqExpr(s) => {
                let mut sc = sc.clone();
                for b in s.blocks.iter().flat_map(|b| &b.bindings) {
                    match b {
                        Binding::VarBinding { var, value, .. } => {
                            // A function may refer to the variable it is bound to.
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
