//! Functions, SeqExprs, blocks and bindings: the program's structure.

use super::ty::{Dim, Ty, NUMERIC};
use super::{Gen, GlobalSig, Scope};
use spec_model::grammar::{
    AttrValue, Attrs, BaseFunc, Binding, BindingBlock, BlockKind, DataType, Expr, ExprKind, Function, GlobalVar, If,
    NDArray, PrimVar, SeqExpr, StructInfo, StructInfoKind, Var,
};
use spec_model::ops::Op;
use spec_model::Span;
use std::rc::Rc;

const S: Span = Span::SYNTHETIC;

/// What the body of a SeqExpr must be.
pub enum Want {
    /// A value of exactly this type.
    Ty(Ty),
    /// Any value but a closure whose type mentions only these shape variables (the
    /// ones that stay in scope after the SeqExpr).
    Visible(Vec<PrimVar>),
}

impl<'a> Gen<'a, '_> {
    /// The helpers, the recursive function and `main`, with `main`'s inputs.
    pub(super) fn program(&mut self) -> (Rc<Function>, Vec<NDArray>) {
        if self.cfg.features.globals {
            for _ in 0..self.pick(self.cfg.max_functions + 1) {
                if self.chance(1, 3) {
                    self.recursive_global();
                } else {
                    self.helper_global();
                }
            }
        }
        self.main()
    }

    /// Parameters of a function: tensors whose dimensions are fresh shape variables
    /// (bounded by `max_dim`), shared ones, or literals.
    fn params(&mut self, sc: &mut Scope, n: usize, prefix: &str) -> Vec<Var> {
        let mut vars = Vec::new();
        for _ in 0..n {
            let rank = self.pick(self.cfg.max_rank.min(3) + 1);
            let dtype = self.choose(&NUMERIC).unwrap_or(DataType::FLOAT32);
            let mut dims: Vec<Dim> = Vec::new();
            for _ in 0..rank {
                let d = match self.pick(4) {
                    1 | 2 if self.cfg.features.symbolic => {
                        let existing: Vec<(PrimVar, i64)> = sc.shape_vars.clone();
                        match self.choose(&existing) {
                            Some((v, hi)) if self.chance(1, 2) => Dim::var(&v, hi),
                            _ => Dim::var(&PrimVar::shape_var(self.name(prefix)), self.cfg.max_dim),
                        }
                    }
                    _ if self.cfg.large_tensors && self.chance(1, 3) => Dim::lit(self.large_dim()),
                    _ => Dim::lit(self.range(1, self.cfg.max_dim.min(3))),
                };
                if Ty::elems(&dims).saturating_mul(d.hi as u64) > self.cfg.max_tensor_elems {
                    break;
                }
                // A new shape variable is in scope only once a parameter binds it.
                if let Some(v) = d.e.as_var().filter(|v| !sc.shape_vars.iter().any(|(w, _)| w == *v)) {
                    sc.shape_vars.push((v.clone(), d.hi));
                }
                dims.push(d);
            }
            let ty = Ty::tensor(dims, dtype);
            let v = Var::new(self.name("p"), Some(ty.to_sinfo()), S);
            sc.vars.push((v.clone(), ty));
            vars.push(v);
        }
        vars
    }

    fn global(&mut self, name: &str, params: Vec<Var>, body: Expr, ret: Option<StructInfo>) -> Rc<Function> {
        let mut attrs = Attrs::default();
        attrs.insert("global_symbol", AttrValue::Str(name.to_string()));
        Rc::new(Function { params, body, ret_struct_info: ret, attrs, span: S })
    }

    /// A pure helper function: tensor parameters, a random body.
    fn helper_global(&mut self) {
        let name = self.name("f");
        let mut sc = Scope::default();
        let n = 1 + self.pick(2);
        let params = self.params(&mut sc, n, "n");
        let param_tys: Vec<Ty> = sc.vars.iter().map(|(_, t)| t.clone()).collect();
        let visible = sc.prim_vars();
        let (body, ret) = self.seq(&sc, Want::Visible(visible), true);
        let ann = self.chance(1, 2).then(|| ret.to_sinfo());
        let f = self.global(&name, params, body, ann);
        self.functions.push((GlobalVar::new(name.clone()), BaseFunc::Relax(f)));
        self.globals.push(GlobalSig { name, params: param_tys, ret, recursive: false });
    }

    /// A recursive function with a depth counter `c` (a rank-0 int64 tensor):
    /// `if c > 0: rec(step(x), c - 1) else: x`.
    fn recursive_global(&mut self) {
        let name = self.name("rec");
        let mut sc = Scope::default();
        let params = self.params(&mut sc, 1, "r");
        let x = params[0].clone();
        let x_ty = sc.vars[0].1.clone();
        let counter_ty = Ty::scalar(DataType::INT64);
        let c = Var::new(self.name("c"), Some(counter_ty.to_sinfo()), S);
        sc.vars.push((c.clone(), counter_ty.clone()));
        let zero = self.constant(DataType::INT64, &[], 0);
        let cond_v = Var::new(self.name("cond"), None, S);
        let cond = self.call_op(Op::Greater, vec![Expr::var(&c), zero], Attrs::default());
        // The recursive branch: some bindings, then a value of x's type, then the call.
        let mut then_sc = sc.clone();
        then_sc.depth += 1;
        let mut blocks = Vec::new();
        self.blocks(&mut then_sc, &mut blocks);
        let one = self.constant(DataType::INT64, &[], 1);
        let c1 = Var::new(self.name("c"), None, S);
        let step = self.expr_of(&x_ty, &then_sc, 2);
        let y = Var::new(self.name("y"), None, S);
        let call = Expr::new(
            ExprKind::Call(Box::new(spec_model::grammar::Call {
                op: Expr::new(ExprKind::GlobalVar(GlobalVar::new(name.clone())), S),
                args: vec![Expr::var(&y), Expr::var(&c1)],
                sinfo_args: Vec::new(),
                attrs: Attrs::default(),
            })),
            S,
        );
        let r = Var::new(self.name("r"), None, S);
        push_block(
            &mut blocks,
            block(
                BlockKind::Binding,
                vec![
                    bind(&c1, self.call_op(Op::Subtract, vec![Expr::var(&c), one], Attrs::default())),
                    bind(&y, step),
                    bind(&r, call),
                ],
            ),
        );
        let then_branch = seq(blocks, Expr::var(&r));
        let else_branch = seq(Vec::new(), Expr::var(&x));
        let if_ = Expr::new(
            ExprKind::If(Box::new(If {
                cond: Expr::var(&cond_v),
                true_branch: then_branch,
                false_branch: else_branch,
            })),
            S,
        );
        let out = Var::new(self.name("out"), None, S);
        let body = seq(vec![block(BlockKind::Binding, vec![bind(&cond_v, cond), bind(&out, if_)])], Expr::var(&out));
        // Declared pure: without the declaration the self-call, whose callee type comes
        // from the signature, counts as impure (TY-11.1), and so would every caller.
        let mut f = self.global(&name, vec![x, c], body, Some(x_ty.to_sinfo()));
        Rc::make_mut(&mut f).attrs.insert("pure", AttrValue::Bool(true));
        self.functions.push((GlobalVar::new(name.clone()), BaseFunc::Relax(f)));
        self.globals.push(GlobalSig { name, params: vec![x_ty.clone(), counter_ty], ret: x_ty, recursive: true });
    }

    /// `main`: tensor parameters whose shape variables get concrete values for the
    /// inputs; impure calls are allowed in its ordinary blocks.
    fn main(&mut self) -> (Rc<Function>, Vec<NDArray>) {
        let mut sc = Scope { impure_ok: true, ..Scope::default() };
        let n = 1 + self.pick(3);
        let params = self.params(&mut sc, n, "n");
        let inputs = self.inputs(&sc);
        let visible = sc.prim_vars();
        let (body, ret) = self.seq(&sc, Want::Visible(visible), true);
        let ann = self.chance(1, 3).then(|| ret.to_sinfo());
        (self.global("main", params, body, ann), inputs)
    }

    /// A SeqExpr: some blocks, then a body as `want` says. Shape variables bound inside
    /// stay inside. `keep_seq`: a function body or an If branch, which the text format
    /// always makes a SeqExpr (elsewhere a SeqExpr without blocks prints as its body).
    pub fn seq(&mut self, sc: &Scope, want: Want, keep_seq: bool) -> (Expr, Ty) {
        let mut inner = sc.clone();
        inner.depth += 1;
        // Sometimes a bare expression, which the normalizer must wrap (NF-3).
        if !keep_seq && self.chance(1, 8) {
            return self.seq_result(&inner, want);
        }
        let mut blocks = Vec::new();
        self.blocks(&mut inner, &mut blocks);
        let (body, ty) = self.seq_result(&inner, want);
        // A nested SeqExpr without blocks prints as its body alone.
        if blocks.is_empty() && !keep_seq {
            return (body, ty);
        }
        (seq(blocks, body), ty)
    }

    fn seq_result(&mut self, sc: &Scope, want: Want) -> (Expr, Ty) {
        match want {
            Want::Ty(t) => (self.expr_of(&t, sc, 1), t),
            Want::Visible(vars) => {
                // Not a closure: two runs' closures cannot be compared (F-6).
                let ok = sc.vars_where(|t| t.only_uses(&vars) && !matches!(t, Ty::Func { .. }));
                // Prefer recent values: they depend on more of the program.
                let recent = &ok[ok.len().saturating_sub(3)..];
                match self.choose(recent) {
                    Some((v, t)) if self.chance(3, 4) || ok.len() == 1 => (Expr::var(&v), t),
                    _ => match self.choose(&ok) {
                        Some((v, t)) => (Expr::var(&v), t),
                        None => (self.constant(DataType::FLOAT32, &[], 1), Ty::scalar(DataType::FLOAT32)),
                    },
                }
            }
        }
    }

    /// One to three blocks of bindings appended to `out`, extending `sc`. Two ordinary
    /// blocks are never adjacent and none is empty: the text format cannot tell such
    /// blocks apart (the parser makes maximal blocks), so printing would not round-trip.
    pub fn blocks(&mut self, sc: &mut Scope, out: &mut Vec<BindingBlock>) {
        let n = 1 + self.pick(3);
        for _ in 0..n {
            if self.budget == 0 {
                break;
            }
            let b = if self.cfg.features.dataflow && !sc.dataflow && self.chance(1, 3) {
                self.dataflow_block(sc)
            } else {
                let mut bs = Vec::new();
                for _ in 0..1 + self.pick(self.cfg.max_bindings) {
                    if self.budget == 0 {
                        break;
                    }
                    self.binding(sc, &mut bs, false);
                }
                block(BlockKind::Binding, bs)
            };
            push_block(out, b);
        }
    }

    /// A DataflowBlock: DataflowVars visible inside only, some outputs.
    fn dataflow_block(&mut self, sc: &mut Scope) -> BindingBlock {
        let mut inner = Scope { dataflow: true, impure_ok: false, ..sc.clone() };
        let mut bs = Vec::new();
        for _ in 0..1 + self.pick(self.cfg.max_bindings) {
            if self.budget == 0 {
                break;
            }
            let output = self.chance(1, 3);
            let before = inner.vars.len();
            if self.cfg.long_chains && self.chance(1, 3) {
                self.elementwise_chain(&mut inner, &mut bs, output);
            } else {
                self.binding(&mut inner, &mut bs, !output);
            }
            if output {
                sc.vars.extend(inner.vars[before..].iter().cloned());
            }
        }
        block(BlockKind::DataflowBlock, bs)
    }

    /// One binding: a value (VarBinding) or a match_cast, extending `sc`.
    fn binding(&mut self, sc: &mut Scope, out: &mut Vec<Binding>, dataflow_var: bool) {
        self.budget = self.budget.saturating_sub(1);
        let mk = |g: &mut Self, ann: Option<StructInfo>| {
            let name = g.name(if dataflow_var { "lv" } else { "v" });
            if dataflow_var {
                Var::new_dataflow(name, ann, S)
            } else {
                Var::new(name, ann, S)
            }
        };
        let castable = sc.vars_where(|t| !matches!(t, Ty::Func { .. }));
        if self.cfg.features.match_cast && !castable.is_empty() && self.chance(1, 8) {
            let (src, ty) = self.choose(&castable).expect("nonempty");
            let (target, new_ty, fresh) = self.cast_target(&ty, sc);
            let var = mk(self, None);
            out.push(Binding::MatchCast {
                var: Some(var.clone()),
                struct_info: target,
                value: Expr::var(&src),
                span: S,
            });
            sc.shape_vars.extend(fresh);
            sc.vars.push((var, new_ty));
            return;
        }
        let (value, ty) = self.value(sc);
        // A local function's variable is never annotated: the parser annotates it only
        // when the function calls itself, so an annotation would not round-trip.
        let is_fn = matches!(value.kind, ExprKind::Function(_));
        let ann = (!is_fn && self.cfg.features.annotations && self.chance(1, 3)).then(|| ty.to_sinfo());
        let var = mk(self, ann);
        out.push(bind(&var, value));
        sc.vars.push((var, ty));
    }

    /// The StructInfo a match_cast checks against: the value's own, with some
    /// dimensions replaced by fresh shape variables (which the cast binds), or erased to
    /// `Object`; with the failure switch, sometimes one that cannot match.
    fn cast_target(&mut self, ty: &Ty, sc: &Scope) -> (StructInfo, Ty, Vec<(PrimVar, i64)>) {
        let mut fresh = Vec::new();
        if self.cfg.features.match_cast_failures && self.chance(1, 4) {
            if let Ty::Tensor { dims, dtype } = ty {
                // A dimension one more than its bound never matches.
                let mut wrong = dims.clone();
                let other = if *dtype == DataType::FLOAT32 { DataType::INT32 } else { DataType::FLOAT32 };
                let new_dtype = if let Some(d) = wrong.first_mut() {
                    *d = Dim::lit(d.hi + 1);
                    *dtype
                } else {
                    other
                };
                let t = Ty::tensor(wrong, new_dtype);
                return (t.to_sinfo(), t, fresh);
            }
        }
        if self.chance(1, 6) {
            return (StructInfo::new(StructInfoKind::Object, S), Ty::Object, fresh);
        }
        if let Ty::Tensor { dims, dtype } = ty {
            // The shape given by a Shape variable holding the same dimensions (SI-MC-2.1).
            let shapes = sc.vars_where(|t| t.same(&Ty::Shape(dims.clone())));
            if let Some((s, _)) = self.choose(&shapes).filter(|_| self.chance(1, 2)) {
                let kind =
                    StructInfoKind::Tensor { shape: Some(Expr::var(&s)), dtype: *dtype, ndim: dims.len() as i64 };
                return (StructInfo::new(kind, S), ty.clone(), fresh);
            }
        }
        let mut fresh_dim = |g: &mut Self, d: &Dim| {
            if g.chance(1, 2) {
                let v = PrimVar::shape_var(g.name("m"));
                fresh.push((v.clone(), d.hi));
                Dim::var(&v, d.hi)
            } else {
                d.clone()
            }
        };
        let new_ty = match ty {
            // Shape values bind fresh shape variables too (SI-MC-3.1).
            Ty::Shape(dims) if self.cfg.features.symbolic && !sc.dataflow => {
                Ty::Shape(dims.iter().map(|d| fresh_dim(self, d)).collect())
            }
            Ty::Tensor { dims, dtype } if self.cfg.features.symbolic && !sc.dataflow => {
                Ty::tensor(dims.iter().map(|d| fresh_dim(self, d)).collect(), *dtype)
            }
            _ => ty.clone(),
        };
        (new_ty.to_sinfo(), new_ty, fresh)
    }
}

/// Appends `b` to `out`, merging it into a preceding ordinary block, dropping it if empty.
pub fn push_block(out: &mut Vec<BindingBlock>, b: BindingBlock) {
    match out.last_mut() {
        _ if b.bindings.is_empty() => {}
        Some(last) if !last.is_dataflow() && !b.is_dataflow() => last.bindings.extend(b.bindings),
        _ => out.push(b),
    }
}

pub fn bind(v: &Var, value: Expr) -> Binding {
    Binding::VarBinding { var: v.clone(), value, span: S }
}

pub fn block(kind: BlockKind, bindings: Vec<Binding>) -> BindingBlock {
    BindingBlock { kind, bindings, span: S }
}

pub fn seq(blocks: Vec<BindingBlock>, body: Expr) -> Expr {
    Expr::new(ExprKind::SeqExpr(Box::new(SeqExpr { blocks, body })), S)
}
