//! Deriving the Structural Information for Each Expression: the Derivation Rules
//! SI-D-1..12, with `Δ` (Relax variables → StructInfo) and `Σ` (shape variables in
//! scope) as persistent maps, so each rule reads "extend the context, recurse".
//!
//! Extensions for the later draft's nodes: SI-D-13 (`PrimValue(e)` has
//! `PrimStructInfo(e.dtype)`) and SI-D-14 (`StringImm`, `DataTypeImm` have
//! `ObjectStructInfo`). Readings (proofs-notes/struct-info.md): a function's
//! FuncStructInfo is stored in Δ with its parameters' shape variables renamed apart
//! (S-7), SI-D-8.2.1 applies when the bound variable is annotated (S-8), and SI-D-8.3.3
//! warns when neither `S <<: Sv` nor `Sv <<: S` holds (S-9).

use super::auxiliary::{
    default_derive, erase_to_well_defined, get_shape_var_mapping, substitute_struct_info, unbound_shape_vars,
    ShapeVarMapping,
};
use super::prover::ShapeProver;
use super::relations::{check_compatibility, more_specific, unify_struct_info, Compat, SiEnv, Specific};
use crate::diagnostic::Diagnostic;
use crate::grammar::{
    BaseFunc, Binding, Call, DeriveFunc, Expr, ExprKind, Function, IRModule, PrimExpr, PrimVar, SeqExpr, StructInfo,
    StructInfoKind, Var,
};
use crate::ops::{Op, OpRef};
use crate::span::Span;
use crate::text::print_struct_info;
use crate::types::globals::{check_globals, GlobalRule, OpCallSite, OpCallSites};
use crate::types::purity::{resolve_purity, signature_purity, FnCx};
use std::collections::HashMap;

type Delta = imbl::HashMap<Var, StructInfo>;
type Sigma = imbl::HashSet<PrimVar>;

/// `Δ` and `Σ` at a program point.
#[derive(Clone, Default)]
struct Scope {
    delta: Delta,
    sigma: Sigma,
}

/// What the derivation found.
#[derive(Default)]
pub struct SinfoReport {
    pub diagnostics: Vec<Diagnostic>,
    /// Each binding's enclosing global function, variable and StructInfo `Δ[v]`, in
    /// program order within each function.
    pub bindings: Vec<(String, Var, StructInfo)>,
    /// Each global Relax function's FuncStructInfo, in module order.
    pub functions: Vec<(String, StructInfo)>,
    /// The StructInfo derived for each operator call (`FInferStructInfo`'s, or
    /// `ObjectStructInfo` where it failed), by the call's site: TY-7.1 erases it into
    /// the call's type.
    pub op_calls: HashMap<OpCallSite, StructInfo>,
}

impl SinfoReport {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.is_error())
    }
}

struct Deriver<'m> {
    module: &'m IRModule,
    prover: &'m dyn ShapeProver,
    globals: HashMap<String, StructInfo>,
    report: SinfoReport,
    /// The global function being derived.
    current: String,
    /// The sites of its operator calls, the keys of `report.op_calls`.
    op_call_sites: OpCallSites,
}

/// The values of a shape-typed variable, from its StructInfo in Δ.
fn shape_values(delta: &Delta, v: &Var) -> Option<Vec<PrimExpr>> {
    match delta.get(v).map(|s| &*s.kind) {
        Some(StructInfoKind::Shape { values: Some(vs), .. }) => Some(vs.clone()),
        _ => None,
    }
}

/// `FuncStructInfo(params, ret)` of a function's signature (SI-D-12.1, 12.2).
fn signature(f: &Function, ret: StructInfo, purity: bool) -> StructInfo {
    let params = f.params.iter().map(|p| p.annotation().cloned().unwrap_or_else(StructInfo::object)).collect();
    StructInfo::new(StructInfoKind::Func { params: Some(params), ret, derive_func: None, purity }, f.span)
}

/// The FuncStructInfo with the shape variables its parameters bind (those not in
/// `sigma`) replaced by fresh ones, so a call, even a recursive one from inside the
/// function, matches them anew (S-7).
fn rename_binders(si: &StructInfo, sigma: &Sigma) -> StructInfo {
    let StructInfoKind::Func { params: Some(ps), .. } = &*si.kind else { return si.clone() };
    let mut binders = Vec::new();
    ps.iter().for_each(|p| unbound_shape_vars(p, sigma, &mut binders));
    let m: ShapeVarMapping =
        binders.iter().map(|v| (v.id(), PrimExpr::var(&PrimVar::new(v.name(), v.dtype())))).collect();
    substitute_struct_info(si, &m)
}

/// SI-D-1: derives the StructInfo of every global function (callees first), of every
/// binding, and of every operator call.
pub fn derive_struct_info(m: &IRModule, prover: &dyn ShapeProver) -> SinfoReport {
    let mut deriver = Deriver {
        module: m,
        prover,
        globals: HashMap::new(),
        report: SinfoReport::default(),
        current: String::new(),
        op_call_sites: OpCallSites::default(),
    };
    deriver.report.functions = check_globals(m, &mut deriver);
    deriver.report
}

impl GlobalRule for Deriver<'_> {
    type Judgement = StructInfo;

    fn declared(f: &BaseFunc) -> StructInfo {
        match f {
            BaseFunc::Relax(f) => {
                let ret = f.ret_struct_info.clone().unwrap_or_else(StructInfo::object);
                rename_binders(&signature(f, ret, signature_purity(f)), &Sigma::new())
            }
            BaseFunc::Tir(_) => StructInfo::object(),
        }
    }

    fn global_function(&mut self, name: &str, f: &Function) -> StructInfo {
        self.current = name.to_string();
        self.op_call_sites.start(name);
        let si = self.function(f, &Scope::default());
        rename_binders(&si, &Sigma::new())
    }

    fn globals(&mut self) -> &mut HashMap<String, StructInfo> {
        &mut self.globals
    }
}

impl Deriver<'_> {
    fn with_env<R>(&self, scope: &Scope, f: impl FnOnce(&SiEnv) -> R) -> R {
        let lookup = |v: &Var| shape_values(&scope.delta, v);
        let env = SiEnv { prover: self.prover, shapes: scope.sigma.clone(), var_values: &lookup };
        f(&env)
    }

    fn error(&mut self, rule: &str, message: impl Into<String>, span: Span) {
        self.report.diagnostics.push(Diagnostic::error(rule, message, span));
    }

    fn warn(&mut self, rule: &str, message: impl Into<String>, span: Span) {
        self.report.diagnostics.push(Diagnostic::warning(rule, message, span));
    }

    /// Reports `check_compatibility(actual, expected)`: an error if incompatible, a
    /// warning if only possibly compatible. Returns the outcome.
    fn compat(
        &mut self,
        rule: &str,
        actual: &StructInfo,
        expected: &StructInfo,
        scope: &Scope,
        what: &str,
        span: Span,
    ) -> Compat {
        let r = self.with_env(scope, |env| check_compatibility(actual, expected, env));
        let message = |relation: &str| {
            format!("{what}: {} is {relation} {}", print_struct_info(actual), print_struct_info(expected))
        };
        let d = match r.outcome {
            Compat::Compatible => return r.outcome,
            Compat::PossiblyCompatible => Diagnostic::warning(rule, message("only possibly compatible with"), span),
            Compat::Incompatible => Diagnostic::error(rule, message("incompatible with"), span),
        };
        // The check_compatibility rule that decided, as a note the corpus can name.
        self.report.diagnostics.push(d.with_note(format!("{}: {}", r.rule, r.reason)));
        r.outcome
    }

    /// The StructInfo of `e` under `scope` (SI-D-2..14).
    fn expr(&mut self, e: &Expr, scope: &Scope, fcx: &mut FnCx) -> StructInfo {
        let span = e.span;
        let mk = |k: StructInfoKind| StructInfo::new(k, span);
        match &e.kind {
            // SI-D-2
            ExprKind::Var(v) => match scope.delta.get(v) {
                Some(s) => s.clone(),
                None => {
                    self.error("SI-D-2", format!("`{}` has no StructInfo here (it is not in scope)", v.name()), span);
                    StructInfo::object()
                }
            },
            ExprKind::GlobalVar(gv) => match self.globals.get(&gv.name) {
                Some(s) => s.clone(),
                None => {
                    self.error("SI-D-2", format!("the module has no function `{}`", gv.name), span);
                    StructInfo::object()
                }
            },
            // SI-D-3
            ExprKind::Constant(data) => {
                let dims = data.shape.iter().map(|&d| PrimExpr::int(d.min(i64::MAX as u64) as i64)).collect();
                mk(StructInfoKind::Tensor {
                    shape: Some(Expr::new(ExprKind::ShapeExpr(dims), span)),
                    dtype: data.dtype,
                    ndim: data.shape.len() as i64,
                })
            }
            // SI-D-4
            ExprKind::Tuple(fields) => {
                mk(StructInfoKind::Tuple { fields: fields.iter().map(|field| self.expr(field, scope, fcx)).collect() })
            }
            // SI-D-5
            ExprKind::ShapeExpr(values) => {
                mk(StructInfoKind::Shape { values: Some(values.clone()), ndim: values.len() as i64 })
            }
            // SI-D-6
            ExprKind::If(i) => {
                self.expr(&i.cond, scope, fcx);
                let s_t = self.expr(&i.true_branch, scope, fcx);
                let s_f = self.expr(&i.false_branch, scope, fcx);
                self.with_env(scope, |env| unify_struct_info(&s_t, &s_f, env))
            }
            ExprKind::SeqExpr(seq) => self.seq_expr(seq, scope, fcx),
            ExprKind::Function(f) => self.function(f, scope),
            // SI-D-9
            ExprKind::TupleGetItem { tuple_value, index } => {
                let st = self.expr(tuple_value, scope, fcx);
                match &*st.kind {
                    StructInfoKind::Tuple { fields } => {
                        match usize::try_from(*index).ok().and_then(|i| fields.get(i)) {
                            Some(field) => field.clone(),
                            None => {
                                let n = fields.len();
                                self.error(
                                    "SI-D-9",
                                    format!("index {index} is out of range for a tuple of {n} fields"),
                                    span,
                                );
                                StructInfo::object()
                            }
                        }
                    }
                    _ => {
                        self.error("SI-D-9", format!("indexing a non-tuple: {}", print_struct_info(&st)), span);
                        StructInfo::object()
                    }
                }
            }
            // SI-D-10
            ExprKind::ExternFunc { .. } => mk(StructInfoKind::Func {
                params: None,
                ret: StructInfo::object(),
                derive_func: Some(DeriveFunc::Default),
                purity: false,
            }),
            // An operator call's StructInfo is kept by its site for TY-7.1.
            ExprKind::Call(c) if matches!(c.op.kind, ExprKind::Op(_)) => {
                let site = self.op_call_sites.next();
                let si = self.call(e, c, scope, fcx);
                self.report.op_calls.insert(site, si.clone());
                si
            }
            ExprKind::Call(c) => self.call(e, c, scope, fcx),
            // SI-D-13, SI-D-14 (later draft)
            ExprKind::PrimValue(p) => mk(StructInfoKind::Prim { dtype: p.dtype(), value: None }),
            ExprKind::StringImm(_) | ExprKind::DataTypeImm(_) | ExprKind::Op(_) => StructInfo::object(),
        }
    }

    /// SI-D-7: a SeqExpr's bindings extend Δ and Σ; its body's StructInfo is erased to
    /// what is well defined in the enclosing scope.
    fn seq_expr(&mut self, seq: &SeqExpr, scope: &Scope, fcx: &mut FnCx) -> StructInfo {
        let mut inner = scope.clone();
        for block in &seq.blocks {
            for b in &block.bindings {
                self.binding(b, &mut inner, fcx);
            }
            if block.is_dataflow() {
                // SI-D-7.1.2: DataflowVars leave Δ at the block's end.
                for v in block.bindings.iter().filter_map(|b| b.var()).filter(|v| v.is_dataflow()) {
                    inner.delta.remove(v);
                }
            }
        }
        let s = self.expr(&seq.body, &inner, fcx);
        // SI-D-7.3, 7.4
        erase_to_well_defined(&s, &scope.delta, &scope.sigma)
    }

    /// LIMIT-sinfo: `si`, or `Object` (and an error) when it is beyond the budget.
    fn within_budget(&mut self, si: StructInfo, var: &Var, span: Span) -> StructInfo {
        match crate::limits::struct_info_within_budget(&si) {
            Ok(()) => si,
            Err(why) => {
                let d = Diagnostic::error(
                    "LIMIT-sinfo",
                    format!("the StructInfo derived for `{}` {why}", var.name()),
                    span,
                );
                self.report.diagnostics.push(d.with_note(crate::limits::raise_hint("LIMIT-sinfo")));
                StructInfo::object()
            }
        }
    }

    /// SI-D-8.2 and SI-D-8.3: one binding updates Δ (and Σ for MatchCast).
    fn binding(&mut self, b: &Binding, scope: &mut Scope, fcx: &mut FnCx) {
        match b {
            Binding::VarBinding { var, value, span } => {
                let si = match (&value.kind, var.annotation()) {
                    // SI-D-8.2.1: a function literal may call itself through `var`.
                    (ExprKind::Function(f), Some(sv)) => {
                        let sv = rename_binders(sv, &scope.sigma);
                        let mut with_self = scope.clone();
                        with_self.delta.insert(var.clone(), sv.clone());
                        let se = self.function(f, &with_self);
                        self.compat(
                            "SI-D-8.2.1",
                            &se,
                            &sv,
                            scope,
                            &format!("the function bound to `{}`", var.name()),
                            *span,
                        );
                        sv
                    }
                    (_, annotation) => {
                        let se = self.expr(value, scope, fcx);
                        let se = self.within_budget(se, var, *span);
                        match annotation {
                            // SI-D-8.2.3
                            Some(sv) => {
                                let what = format!("the value bound to `{}`", var.name());
                                let outcome = self.compat("SI-D-8.2.3", &se, sv, scope, &what, *span);
                                let stricter = self.with_env(scope, |env| {
                                    more_specific(sv, &se, env) != Specific::No
                                        && more_specific(&se, sv, env) == Specific::No
                                });
                                if outcome == Compat::Compatible && stricter {
                                    self.warn(
                                        "SI-D-8.2.3",
                                        format!(
                                            "the annotation {} of `{}` is more specific than its value's {}",
                                            print_struct_info(sv),
                                            var.name(),
                                            print_struct_info(&se)
                                        ),
                                        *span,
                                    );
                                }
                                sv.clone()
                            }
                            // SI-D-8.2.4
                            None => match &value.kind {
                                ExprKind::Function(_) => rename_binders(&se, &scope.sigma),
                                _ => se,
                            },
                        }
                    }
                };
                scope.delta.insert(var.clone(), si.clone());
                self.report.bindings.push((self.current.clone(), var.clone(), si));
            }
            Binding::MatchCast { var, struct_info: s, value, span } => {
                // SI-D-8.3.1, 8.3.2
                let sv = self.expr(value, scope, fcx);
                let mut new = Vec::new();
                unbound_shape_vars(s, &scope.sigma, &mut new);
                for v in new {
                    scope.sigma.insert(v);
                }
                // SI-D-8.3.3 (S-9: warn when neither direction holds)
                let (down, up) = self.with_env(scope, |env| (more_specific(s, &sv, env), more_specific(&sv, s, env)));
                if down == Specific::No && up == Specific::No {
                    self.warn(
                        "SI-D-8.3.3",
                        format!(
                            "match_cast of a value with {} to {} always fails at run time",
                            print_struct_info(&sv),
                            print_struct_info(s)
                        ),
                        *span,
                    );
                }
                let Some(var) = var else { return };
                let si = match var.annotation() {
                    // SI-D-8.3.4
                    Some(ann) => {
                        let what = format!("the annotation of `{}` against the cast's", var.name());
                        self.compat("SI-D-8.3.4", s, ann, scope, &what, *span);
                        ann.clone()
                    }
                    // SI-D-8.3.5
                    None => s.clone(),
                };
                scope.delta.insert(var.clone(), si.clone());
                self.report.bindings.push((self.current.clone(), var.clone(), si));
            }
        }
    }

    /// SI-D-11: a call.
    fn call(&mut self, e: &Expr, c: &Call, scope: &Scope, fcx: &mut FnCx) -> StructInfo {
        let span = e.span;
        // SI-D-11.1: an operator's FInferStructInfo.
        if let ExprKind::Op(op) = &c.op.kind {
            let args: Vec<StructInfo> = c.args.iter().map(|a| self.expr(a, scope, fcx)).collect();
            fcx.note_call(c, None, span);
            let OpRef::Registered(op) = op else {
                self.warn("SI-D-11.1", format!("`{op}` is not a registered operator; its result is Object"), span);
                return StructInfo::object();
            };
            return self.run_infer(op.def(), e, c, &args, scope);
        }
        let sf = self.expr(&c.op, scope, fcx);
        let args: Vec<StructInfo> = c.args.iter().map(|a| self.expr(a, scope, fcx)).collect();
        let StructInfoKind::Func { params, ret, derive_func, purity } = &*sf.kind else {
            // SI-D-11.2.1
            self.error(
                "SI-D-11.2.1",
                format!("calling a value that is not a function: {}", print_struct_info(&sf)),
                span,
            );
            return StructInfo::object();
        };
        fcx.note_call(c, params.as_ref().map(|_| *purity), span);
        let Some(params) = params else {
            // SI-D-11.2.2: the derive_func macro decides.
            return match (derive_func, &c.op.kind) {
                // A call of an ExternFunc is `call_packed` (its attributes are checked there).
                (_, ExprKind::ExternFunc { .. }) => self.run_infer(Op::CallPacked.def(), e, c, &args, scope),
                (Some(DeriveFunc::Default), _) => default_derive(c),
                (Some(DeriveFunc::Empty), _) => StructInfo::object(),
                (Some(DeriveFunc::Named(n)), _) => {
                    let msg = format!("no derive_func `{n}` is built in; its result is Object (as empty_derive)");
                    self.warn("SI-D-11.2.2", msg, span);
                    StructInfo::object()
                }
                (None, _) => StructInfo::object(),
            };
        };
        // SI-D-11.2.3
        if params.len() != args.len() {
            let msg = format!("the function takes {} arguments, {} given", params.len(), args.len());
            self.error("SI-D-11.2.3", msg, span);
            return StructInfo::object();
        }
        // SI-D-11.2.4: beta-reduce the parameters' shape variables.
        let mut m = ShapeVarMapping::new();
        for (p, a) in params.iter().zip(&args) {
            for (k, v) in get_shape_var_mapping(p, a, &scope.sigma) {
                m.entry(k).or_insert(v);
            }
        }
        let params: Vec<StructInfo> = params.iter().map(|p| substitute_struct_info(p, &m)).collect();
        let ret = substitute_struct_info(ret, &m);
        // SI-D-11.2.5
        for (i, (p, a)) in params.iter().zip(&args).enumerate() {
            self.compat("SI-D-11.2.5", a, p, scope, &format!("argument {i}"), c.args[i].span);
        }
        // SI-D-11.2.6
        erase_to_well_defined(&ret, &scope.delta, &scope.sigma)
    }

    fn run_infer(
        &mut self,
        def: &crate::ops::OpDef,
        e: &Expr,
        c: &Call,
        args: &[StructInfo],
        scope: &Scope,
    ) -> StructInfo {
        let module = self.module;
        let r = self.with_env(scope, |env| crate::ops::infer_struct_info(def, c, args, env, Some(module), e.span));
        match r {
            Ok(inferred) => {
                self.report.diagnostics.extend(inferred.warnings);
                inferred.struct_info
            }
            Err(d) => {
                self.report.diagnostics.push(*d);
                StructInfo::object()
            }
        }
    }

    /// SI-D-12: a function's FuncStructInfo; its body is checked against the return
    /// annotation. `scope` holds what the function may capture.
    fn function(&mut self, f: &Function, scope: &Scope) -> StructInfo {
        // SI-D-12.1, 12.3
        let mut inner = scope.clone();
        let mut params = Vec::new();
        for p in &f.params {
            let si = p.annotation().cloned().unwrap_or_else(StructInfo::object);
            let mut new = Vec::new();
            unbound_shape_vars(&si, &inner.sigma, &mut new);
            for v in new {
                inner.sigma.insert(v);
            }
            inner.delta.insert(p.clone(), si.clone());
            params.push(si);
        }
        let sr = f.ret_struct_info.clone().unwrap_or_else(StructInfo::object);
        // SI-D-12.4
        let mut fcx = FnCx::default();
        let sb = self.expr(&f.body, &inner, &mut fcx);
        // SI-D-12.5
        self.compat("SI-D-12.5", &sb, &sr, &inner, "the function body against the return annotation", f.body.span);
        // SI-D-12.6
        let ret = match &f.ret_struct_info {
            Some(r) => r.clone(),
            None => erase_to_well_defined(&sb, &inner.delta, &inner.sigma),
        };
        let (purity, _) = resolve_purity(f, fcx.impure.as_ref(), f.span);
        StructInfo::new(StructInfoKind::Func { params: Some(params), ret, derive_func: None, purity }, f.span)
    }
}
