//! Type Checking Rules TY-1..11, with `Γ` (variables → types) a persistent map.
//!
//! TY-7.1 erases the StructInfo an operator's `FInferStructInfo` gives the call; that
//! needs the arguments' StructInfo, so type checking runs after StructInfo derivation
//! and reads the results it recorded ([`SinfoReport::op_calls`]) by each call's site
//! ([`OpCallSite`](super::OpCallSite)). An operator call the derivation rejected (its
//! error is already reported) has type `ObjectType`.

use super::globals::{check_globals, GlobalRule, OpCallSites};
use super::purity::{call_purity, resolve_purity, signature_purity, FnCx};
use super::subtype::{erase_struct_info, find_lub, is_subtype, type_name};
use crate::diagnostic::Diagnostic;
use crate::grammar::{BaseFunc, Binding, Call, Expr, ExprKind, Function, IRModule, SeqExpr, Type, Var};
use crate::span::Span;
use crate::struct_info::default_derive;
use crate::struct_info::SinfoReport;
use std::collections::HashMap;

type Gamma = imbl::HashMap<Var, Type>;

/// What type checking found.
#[derive(Default)]
pub struct TypeReport {
    pub diagnostics: Vec<Diagnostic>,
    /// Each global Relax function's type, in module order.
    pub functions: Vec<(String, Type)>,
    /// Each binding's variable and its type `Γ[v]`, in checking order.
    pub bindings: Vec<(Var, Type)>,
}

struct Checker<'m> {
    globals: HashMap<String, Type>,
    sinfo: &'m SinfoReport,
    /// The sites of the current global function's operator calls, to read `sinfo.op_calls`.
    op_call_sites: OpCallSites,
    diagnostics: Vec<Diagnostic>,
    bindings: Vec<(Var, Type)>,
}

fn annotation_type(v: &Var) -> Option<Type> {
    v.annotation().map(erase_struct_info)
}

/// TY-1: type checks the module one global function at a time (callees first), with
/// `Γ` prepopulated with the annotated types of the globals.
pub fn check_types(m: &IRModule, sinfo: &SinfoReport) -> TypeReport {
    let mut checker = Checker {
        globals: HashMap::new(),
        sinfo,
        op_call_sites: OpCallSites::default(),
        diagnostics: Vec::new(),
        bindings: Vec::new(),
    };
    let functions = check_globals(m, &mut checker);
    TypeReport { diagnostics: checker.diagnostics, functions, bindings: checker.bindings }
}

impl GlobalRule for Checker<'_> {
    type Judgement = Type;

    fn declared(f: &BaseFunc) -> Type {
        match f {
            BaseFunc::Relax(f) => {
                let ret = f.ret_struct_info.as_ref().map_or(Type::Object, erase_struct_info);
                signature_type(f, ret, signature_purity(f))
            }
            // PrimFuncs evaluate to objects opaque to Relax (Program Entry Point).
            BaseFunc::Tir(_) => Type::Object,
        }
    }

    fn global_function(&mut self, name: &str, f: &Function) -> Type {
        self.op_call_sites.start(name);
        self.function(f, &Gamma::new())
    }

    fn globals(&mut self) -> &mut HashMap<String, Type> {
        &mut self.globals
    }
}

/// `FuncType([T1, ..., Tn], ret, pure)` from the parameters' annotations.
fn signature_type(f: &Function, ret: Type, pure: bool) -> Type {
    let arg_types = f.params.iter().map(|p| annotation_type(p).unwrap_or(Type::Object)).collect();
    Type::Func { arg_types, ret_type: Box::new(ret), pure }
}

impl Checker<'_> {
    fn error(&mut self, rule: &str, message: impl Into<String>, span: Span) {
        self.diagnostics.push(Diagnostic::error(rule, message, span));
    }

    /// The type of `e` under `Γ` (TY-2..10).
    fn expr(&mut self, e: &Expr, gamma: &Gamma, fcx: &mut FnCx) -> Type {
        let span = e.span;
        match &e.kind {
            // TY-2
            ExprKind::Var(v) => gamma.get(v).cloned().unwrap_or_else(|| {
                self.error("TY-2", format!("`{}` has no type here (it is not in scope)", v.name()), span);
                Type::Object
            }),
            ExprKind::GlobalVar(gv) => self.globals.get(&gv.name).cloned().unwrap_or_else(|| {
                self.error("TY-2", format!("the module has no function `{}`", gv.name), span);
                Type::Object
            }),
            // TY-3
            ExprKind::Constant(data) => Type::DynTensor { ndim: data.shape.len() as i64, dtype: data.dtype },
            // TY-4
            ExprKind::ShapeExpr(ds) => Type::Shape { ndim: ds.len() as i64 },
            // TY-5
            ExprKind::Tuple(fields) => Type::Tuple(fields.iter().map(|field| self.expr(field, gamma, fcx)).collect()),
            // TY-6
            ExprKind::ExternFunc { .. } => Type::PackedFunc,
            ExprKind::Call(c) => self.call(e, c, gamma, fcx),
            // TY-8
            ExprKind::If(i) => {
                let tc = self.expr(&i.cond, gamma, fcx);
                let want = Type::DynTensor { ndim: 0, dtype: crate::grammar::DataType::bool() };
                if tc != want {
                    self.error(
                        "TY-8",
                        format!("the condition of an If must have type {}, not {}", type_name(&want), type_name(&tc)),
                        i.cond.span,
                    );
                }
                let tt = self.expr(&i.true_branch, gamma, fcx);
                let tf = self.expr(&i.false_branch, gamma, fcx);
                find_lub(&tt, &tf)
            }
            // TY-9
            ExprKind::TupleGetItem { tuple_value, index } => {
                let t = self.expr(tuple_value, gamma, fcx);
                match &t {
                    Type::Tuple(fs) if usize::try_from(*index).is_ok_and(|i| i < fs.len()) => {
                        fs[*index as usize].clone()
                    }
                    _ => {
                        let msg = format!(
                            "`[{index}]` needs a tuple type with more than {index} fields, not {}",
                            type_name(&t)
                        );
                        self.error("TY-9", msg, span);
                        Type::Object
                    }
                }
            }
            ExprKind::SeqExpr(s) => self.seq_expr(s, gamma, fcx),
            ExprKind::Function(f) => self.function(f, gamma),
            // PrimValue, StringImm, DataTypeImm: their StructInfo erases to ObjectType.
            ExprKind::PrimValue(_) | ExprKind::StringImm(_) | ExprKind::DataTypeImm(_) | ExprKind::Op(_) => {
                Type::Object
            }
        }
    }

    /// TY-7: a call.
    fn call(&mut self, e: &Expr, c: &Call, gamma: &Gamma, fcx: &mut FnCx) -> Type {
        let span = e.span;
        // TY-7.1: an operator's FInferStructInfo, erased.
        if let ExprKind::Op(_) = &c.op.kind {
            let site = self.op_call_sites.next();
            c.args.iter().for_each(|a| {
                self.expr(a, gamma, fcx);
            });
            fcx.note_call(c, None, span);
            return self.sinfo.op_calls.get(&site).map_or(Type::Object, erase_struct_info);
        }
        let tf = self.expr(&c.op, gamma, fcx);
        let targs: Vec<Type> = c.args.iter().map(|a| self.expr(a, gamma, fcx)).collect();
        match &tf {
            // TY-7.2: a packed function's result comes from the StructInfo arguments.
            Type::PackedFunc => {
                fcx.note_call(c, None, span);
                erase_struct_info(&default_derive(c))
            }
            // TY-7.3
            Type::Func { arg_types, ret_type, pure } => {
                fcx.note_call(c, Some(*pure), span);
                if arg_types.len() != targs.len() {
                    let msg = format!("the function takes {} arguments, {} given", arg_types.len(), targs.len());
                    self.error("TY-7.3", msg, span);
                } else {
                    for (i, (want, got)) in arg_types.iter().zip(&targs).enumerate() {
                        if !is_subtype(got, want) {
                            let msg = format!(
                                "argument {i} has type {}, not a subtype of the parameter's {}{}",
                                type_name(got),
                                type_name(want),
                                if is_subtype(want, got) { " (a match_cast is required)" } else { "" }
                            );
                            self.error("TY-7.3", msg, c.args[i].span);
                        }
                    }
                }
                (**ret_type).clone()
            }
            _ => {
                fcx.note_call(c, None, span);
                self.error("TY-7.3", format!("calling a value of type {}, not a function", type_name(&tf)), span);
                Type::Object
            }
        }
    }

    /// TY-10: a SeqExpr. `Γ` is extended by the bindings and restored afterwards (the
    /// caller's map is untouched).
    fn seq_expr(&mut self, seq: &SeqExpr, gamma: &Gamma, fcx: &mut FnCx) -> Type {
        let mut gamma = gamma.clone();
        for block in &seq.blocks {
            for b in &block.bindings {
                if block.is_dataflow() {
                    self.dataflow_purity(b, &gamma);
                }
                self.binding(b, &mut gamma, fcx);
            }
            // TY-10.2: DataflowVars leave Γ at the block's end.
            if block.is_dataflow() {
                for v in block.bindings.iter().filter_map(|b| b.var()).filter(|v| v.is_dataflow()) {
                    gamma.remove(v);
                }
            }
        }
        // TY-10.3
        self.expr(&seq.body, &gamma, fcx)
    }

    /// TY-10.1.1: a binding in a DataflowBlock may not perform an impure call.
    fn dataflow_purity(&mut self, b: &Binding, gamma: &Gamma) {
        let ExprKind::Call(c) = &b.value().kind else { return };
        let callee_pure = match &c.op.kind {
            ExprKind::Var(v) => gamma.get(v).and_then(func_purity),
            ExprKind::GlobalVar(gv) => self.globals.get(&gv.name).and_then(func_purity),
            _ => None,
        };
        if let Err(why) = call_purity(c, callee_pure) {
            let d = Diagnostic::error("TY-10.1.1", "an impure call inside a DataflowBlock", b.value().span)
                .with_label(why)
                .with_note("DataflowBlocks hold only pure computations; move the call out of `R.dataflow()`");
            self.diagnostics.push(d);
        }
    }

    /// TY-10.1.2 (VarBinding) and TY-10.1.3 (MatchCast).
    fn binding(&mut self, b: &Binding, gamma: &mut Gamma, fcx: &mut FnCx) {
        match b {
            Binding::VarBinding { var, value, span } => {
                let annotated = annotation_type(var);
                let t_value = match (&value.kind, &annotated) {
                    // A function literal may call itself: its variable is in Γ first.
                    (ExprKind::Function(f), Some(t)) => {
                        let mut with_self = gamma.clone();
                        with_self.insert(var.clone(), t.clone());
                        self.function(f, &with_self)
                    }
                    _ => self.expr(value, gamma, fcx),
                };
                // LIMIT-sinfo (reported once, by StructInfo derivation, at the same place).
                let t_value = if crate::limits::type_within_budget(&t_value).is_ok() { t_value } else { Type::Object };
                let t = match annotated {
                    None => t_value,
                    Some(t) => {
                        if !is_subtype(&t_value, &t) {
                            let why = if is_subtype(&t, &t_value) {
                                "is more general than the annotation: a match_cast is required"
                            } else {
                                "is unrelated to the annotation"
                            };
                            let msg = format!(
                                "`{}` is annotated {} but its value has type {}, which {why}",
                                var.name(),
                                type_name(&t),
                                type_name(&t_value)
                            );
                            self.error("TY-10.1.2", msg, *span);
                        }
                        t
                    }
                };
                self.bindings.push((var.clone(), t.clone()));
                gamma.insert(var.clone(), t);
            }
            Binding::MatchCast { var, struct_info, value, span } => {
                // TY-10.1.3.1, 10.1.3.2
                let t1 = self.expr(value, gamma, fcx);
                let t2 = erase_struct_info(struct_info);
                // TY-10.1.3.3
                if !is_subtype(&t1, &t2) && !is_subtype(&t2, &t1) {
                    let msg = format!(
                        "match_cast of a value of type {} to {} always fails at run time",
                        type_name(&t1),
                        type_name(&t2)
                    );
                    self.diagnostics.push(Diagnostic::warning("TY-10.1.3.3", msg, *span));
                }
                let Some(var) = var else { return };
                // TY-10.1.3.4, 10.1.3.5, 10.1.3.6
                let t = match annotation_type(var) {
                    Some(t) => {
                        if !is_subtype(&t2, &t) {
                            let msg = format!(
                                "`{}` is annotated {}, not a supertype of the cast's {}",
                                var.name(),
                                type_name(&t),
                                type_name(&t2)
                            );
                            self.error("TY-10.1.3.5", msg, *span);
                        }
                        t
                    }
                    None => t2,
                };
                self.bindings.push((var.clone(), t.clone()));
                gamma.insert(var.clone(), t);
            }
        }
    }

    /// TY-11: a function's type. Nested functions check their own purity; their calls
    /// do not count toward the enclosing function's (proofs-notes/types.md, T-5).
    fn function(&mut self, f: &Function, gamma: &Gamma) -> Type {
        let mut gamma = gamma.clone();
        let mut arg_types = Vec::new();
        for p in &f.params {
            let t = match annotation_type(p) {
                Some(t) => t,
                None => {
                    let msg = format!("parameter `{}` has no annotation; every parameter must be annotated", p.name());
                    self.error("TY-11", msg, p.span());
                    Type::Object
                }
            };
            // TY-11.2
            gamma.insert(p.clone(), t.clone());
            arg_types.push(t);
        }
        let mut fcx = FnCx::default();
        let t_body = self.expr(&f.body, &gamma, &mut fcx);
        // TY-11.2.1 .. 11.2.3
        let (pure, diags) = resolve_purity(f, fcx.impure.as_ref(), f.span);
        self.diagnostics.extend(diags);
        // TY-11.2.4
        let ret = match &f.ret_struct_info {
            None => t_body,
            Some(r) => {
                let tr = erase_struct_info(r);
                if !is_subtype(&t_body, &tr) {
                    let why = if is_subtype(&tr, &t_body) {
                        "is more general than the return annotation: a match_cast is required in the body"
                    } else {
                        "is unrelated to the return annotation"
                    };
                    let msg = format!("the body has type {}, which {why} {}", type_name(&t_body), type_name(&tr));
                    self.error("TY-11.2.4", msg, f.body.span);
                }
                tr
            }
        };
        Type::Func { arg_types, ret_type: Box::new(ret), pure }
    }
}

/// The purity of a function type (`None` for anything else).
fn func_purity(t: &Type) -> Option<bool> {
    match t {
        Type::Func { pure, .. } => Some(*pure),
        _ => None,
    }
}
