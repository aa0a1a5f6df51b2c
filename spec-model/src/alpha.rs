//! Alpha-equivalence: two programs are the same up to a consistent renaming of
//! variables, shape variables and buffers (names and spans are ignored; a variable's
//! kind and annotation are compared where it first occurs).

use crate::grammar::tir::{Buffer, PrimFunc, RegionDim, Stmt, StmtKind, TirExpr, TirExprKind};
use crate::grammar::{
    BaseFunc, Binding, BindingBlock, Expr, ExprKind, Function, IRModule, PrimExpr, PrimExprKind, PrimVar, StructInfo,
    StructInfoKind, Var,
};
use std::collections::HashMap;

/// `Ok(())` if `a` and `b` are alpha-equivalent, else a description of the first difference.
pub fn alpha_eq_module(a: &IRModule, b: &IRModule) -> Result<(), String> {
    let mut names_a: Vec<&str> = a.functions.iter().map(|(g, _)| g.name.as_str()).collect();
    let mut names_b: Vec<&str> = b.functions.iter().map(|(g, _)| g.name.as_str()).collect();
    names_a.sort();
    names_b.sort();
    if names_a != names_b {
        return Err(format!("different globals: {names_a:?} vs {names_b:?}"));
    }
    for (gv, fa) in &a.functions {
        let fb = b.get(&gv.name).ok_or_else(|| format!("missing {}", gv.name))?;
        let mut m = Alpha::default();
        let r = match (fa, fb) {
            (BaseFunc::Relax(x), BaseFunc::Relax(y)) => m.function(x, y),
            (BaseFunc::Tir(x), BaseFunc::Tir(y)) => m.prim_func(x, y),
            _ => Err("a Relax function vs a PrimFunc".into()),
        };
        r.map_err(|e| format!("in `{}`: {e}", gv.name))?;
    }
    Ok(())
}

/// Alpha-equivalence of two expressions (free variables must correspond one to one).
pub fn alpha_eq_expr(a: &Expr, b: &Expr) -> Result<(), String> {
    Alpha::default().expr(a, b)
}

type R = Result<(), String>;

fn check(ok: bool, what: impl FnOnce() -> String) -> R {
    if ok {
        Ok(())
    } else {
        Err(what())
    }
}

#[derive(Default)]
struct Bijection {
    fwd: HashMap<u64, u64>,
    rev: HashMap<u64, u64>,
}

impl Bijection {
    /// `Some(true)` if newly paired, `Some(false)` if already paired, `None` if inconsistent.
    fn pair(&mut self, a: u64, b: u64) -> Option<bool> {
        match (self.fwd.get(&a), self.rev.get(&b)) {
            (Some(x), Some(y)) if *x == b && *y == a => Some(false),
            (None, None) => {
                self.fwd.insert(a, b);
                self.rev.insert(b, a);
                Some(true)
            }
            _ => None,
        }
    }
}

#[derive(Default)]
struct Alpha {
    vars: Bijection,
    prims: Bijection,
    buffers: Bijection,
}

impl Alpha {
    fn var(&mut self, a: &Var, b: &Var) -> R {
        match self.vars.pair(a.id(), b.id()) {
            None => Err(format!("variable `{}` does not correspond to `{}`", a.name(), b.name())),
            Some(false) => Ok(()),
            Some(true) => {
                check(a.is_dataflow() == b.is_dataflow(), || format!("`{}`: Var vs DataflowVar", a.name()))?;
                match (a.annotation(), b.annotation()) {
                    (None, None) => Ok(()),
                    (Some(x), Some(y)) => self.sinfo(x, y).map_err(|e| format!("annotation of `{}`: {e}", a.name())),
                    _ => Err(format!("`{}`: annotated on one side only", a.name())),
                }
            }
        }
    }

    fn prim_var(&mut self, a: &PrimVar, b: &PrimVar) -> R {
        check(a.dtype() == b.dtype(), || {
            format!("shape variable `{}`: dtype {} vs {}", a.name(), a.dtype(), b.dtype())
        })?;
        match self.prims.pair(a.id(), b.id()) {
            None => Err(format!("shape variable `{}` does not correspond to `{}`", a.name(), b.name())),
            _ => Ok(()),
        }
    }

    fn buffer(&mut self, a: &Buffer, b: &Buffer) -> R {
        match self.buffers.pair(a.id(), b.id()) {
            None => Err(format!("buffer `{}` does not correspond to `{}`", a.name(), b.name())),
            Some(false) => Ok(()),
            Some(true) => {
                check(a.dtype() == b.dtype() && a.scope() == b.scope(), || format!("buffer `{}` differs", a.name()))?;
                self.tir_list(a.shape(), b.shape())
            }
        }
    }

    fn function(&mut self, a: &Function, b: &Function) -> R {
        check(a.params.len() == b.params.len(), || "parameter count".into())?;
        for (x, y) in a.params.iter().zip(&b.params) {
            self.var(x, y)?;
        }
        match (&a.ret_struct_info, &b.ret_struct_info) {
            (None, None) => {}
            (Some(x), Some(y)) => self.sinfo(x, y).map_err(|e| format!("return annotation: {e}"))?,
            _ => return Err("return annotation on one side only".into()),
        }
        check(a.attrs == b.attrs, || format!("attributes {:?} vs {:?}", a.attrs, b.attrs))?;
        self.expr(&a.body, &b.body)
    }

    fn opt_expr(&mut self, a: &Option<Expr>, b: &Option<Expr>) -> R {
        match (a, b) {
            (None, None) => Ok(()),
            (Some(x), Some(y)) => self.expr(x, y),
            _ => Err("present on one side only".into()),
        }
    }

    fn exprs(&mut self, a: &[Expr], b: &[Expr]) -> R {
        check(a.len() == b.len(), || format!("{} vs {} expressions", a.len(), b.len()))?;
        a.iter().zip(b).try_for_each(|(x, y)| self.expr(x, y))
    }

    fn expr(&mut self, a: &Expr, b: &Expr) -> R {
        use ExprKind as K;
        match (&a.kind, &b.kind) {
            (K::Constant(x), K::Constant(y)) => check(x == y, || "different constants".into()),
            (K::Var(x), K::Var(y)) => self.var(x, y),
            (K::GlobalVar(x), K::GlobalVar(y)) => check(x == y, || format!("global {} vs {}", x.name, y.name)),
            (K::Tuple(x), K::Tuple(y)) => self.exprs(x, y),
            (K::SeqExpr(x), K::SeqExpr(y)) => {
                check(x.blocks.len() == y.blocks.len(), || format!("{} vs {} blocks", x.blocks.len(), y.blocks.len()))?;
                for (bx, by) in x.blocks.iter().zip(&y.blocks) {
                    self.block(bx, by)?;
                }
                self.expr(&x.body, &y.body)
            }
            (K::Function(x), K::Function(y)) => self.function(x, y),
            (K::If(x), K::If(y)) => {
                self.expr(&x.cond, &y.cond)?;
                self.expr(&x.true_branch, &y.true_branch)?;
                self.expr(&x.false_branch, &y.false_branch)
            }
            (K::ExternFunc { global_symbol: x }, K::ExternFunc { global_symbol: y }) => {
                check(x == y, || format!("extern {x} vs {y}"))
            }
            (K::Call(x), K::Call(y)) => {
                self.expr(&x.op, &y.op)?;
                self.exprs(&x.args, &y.args)?;
                self.sinfos(&x.sinfo_args, &y.sinfo_args)?;
                check(x.attrs == y.attrs, || format!("call attributes {:?} vs {:?}", x.attrs, y.attrs))
            }
            (K::ShapeExpr(x), K::ShapeExpr(y)) => self.prims(x, y),
            (K::TupleGetItem { tuple_value: x, index: i }, K::TupleGetItem { tuple_value: y, index: j }) => {
                check(i == j, || format!("index {i} vs {j}"))?;
                self.expr(x, y)
            }
            (K::Op(x), K::Op(y)) => check(x == y, || format!("op {x} vs {y}")),
            (K::PrimValue(x), K::PrimValue(y)) => self.prim(x, y),
            (K::StringImm(x), K::StringImm(y)) => check(x == y, || format!("string {x:?} vs {y:?}")),
            (K::DataTypeImm(x), K::DataTypeImm(y)) => check(x == y, || format!("dtype {x} vs {y}")),
            _ => Err(format!("different expressions: {} vs {}", kind_name(&a.kind), kind_name(&b.kind))),
        }
    }

    fn block(&mut self, a: &BindingBlock, b: &BindingBlock) -> R {
        check(a.kind == b.kind, || "BindingBlock vs DataflowBlock".into())?;
        check(a.bindings.len() == b.bindings.len(), || {
            format!("{} vs {} bindings", a.bindings.len(), b.bindings.len())
        })?;
        for (x, y) in a.bindings.iter().zip(&b.bindings) {
            match (x, y) {
                (Binding::VarBinding { var: v, value: e, .. }, Binding::VarBinding { var: w, value: f, .. }) => {
                    self.var(v, w)?;
                    self.expr(e, f).map_err(|err| format!("binding of `{}`: {err}", v.name()))?;
                }
                (
                    Binding::MatchCast { var: v, struct_info: s, value: e, .. },
                    Binding::MatchCast { var: w, struct_info: t, value: f, .. },
                ) => {
                    match (v, w) {
                        (None, None) => {}
                        (Some(v), Some(w)) => self.var(v, w)?,
                        _ => return Err("MatchCast variable on one side only".into()),
                    }
                    self.expr(e, f)?;
                    self.sinfo(s, t)?;
                }
                _ => return Err("VarBinding vs MatchCast".into()),
            }
        }
        Ok(())
    }

    fn sinfos(&mut self, a: &[StructInfo], b: &[StructInfo]) -> R {
        check(a.len() == b.len(), || "StructInfo count".into())?;
        a.iter().zip(b).try_for_each(|(x, y)| self.sinfo(x, y))
    }

    fn sinfo(&mut self, a: &StructInfo, b: &StructInfo) -> R {
        use StructInfoKind as S;
        match (&*a.kind, &*b.kind) {
            (S::Object, S::Object) => Ok(()),
            (S::Prim { dtype: x, value: v }, S::Prim { dtype: y, value: w }) => {
                check(x == y, || "Prim dtype".into())?;
                match (v, w) {
                    (None, None) => Ok(()),
                    (Some(v), Some(w)) => self.prims(std::slice::from_ref(v), std::slice::from_ref(w)),
                    _ => Err("Prim value on one side only".into()),
                }
            }
            (S::Shape { values: x, ndim: n }, S::Shape { values: y, ndim: m }) => {
                check(n == m, || format!("Shape ndim {n} vs {m}"))?;
                match (x, y) {
                    (None, None) => Ok(()),
                    (Some(x), Some(y)) => self.prims(x, y),
                    _ => Err("Shape values on one side only".into()),
                }
            }
            (S::Tensor { shape: x, dtype: d, ndim: n }, S::Tensor { shape: y, dtype: e, ndim: m }) => {
                check(n == m && d == e, || format!("Tensor ndim/dtype {n},{d} vs {m},{e}"))?;
                self.opt_expr(x, y).map_err(|e| format!("Tensor shape: {e}"))
            }
            (S::Tuple { fields: x }, S::Tuple { fields: y }) => self.sinfos(x, y),
            (
                S::Func { params: p, ret: r, derive_func: d, purity: u },
                S::Func { params: q, ret: s, derive_func: e, purity: v },
            ) => {
                check(d == e && u == v, || "Callable derive_func/purity".into())?;
                match (p, q) {
                    (None, None) => {}
                    (Some(p), Some(q)) => self.sinfos(p, q)?,
                    _ => return Err("Callable params on one side only".into()),
                }
                self.sinfo(r, s)
            }
            _ => Err("different StructInfo kinds".into()),
        }
    }

    fn prims(&mut self, a: &[PrimExpr], b: &[PrimExpr]) -> R {
        check(a.len() == b.len(), || format!("{} vs {} dimensions", a.len(), b.len()))?;
        a.iter().zip(b).try_for_each(|(x, y)| self.prim(x, y))
    }

    fn prim(&mut self, a: &PrimExpr, b: &PrimExpr) -> R {
        use PrimExprKind as P;
        match (&*a.kind, &*b.kind) {
            (P::Var(x), P::Var(y)) => self.prim_var(x, y),
            (P::IntImm { value: x, dtype: d }, P::IntImm { value: y, dtype: e }) => {
                check(x == y && d == e, || format!("{x}:{d} vs {y}:{e}"))
            }
            (P::FloatImm { value: x, dtype: d }, P::FloatImm { value: y, dtype: e }) => {
                check(x == y && d == e, || format!("{}:{d} vs {}:{e}", x.0, y.0))
            }
            (P::Binary { op: o, a: x1, b: x2 }, P::Binary { op: p, a: y1, b: y2 }) => {
                check(o == p, || format!("{} vs {}", o.spec_name(), p.spec_name()))?;
                self.prim(x1, y1)?;
                self.prim(x2, y2)
            }
            (P::Not(x), P::Not(y)) => self.prim(x, y),
            (
                P::Select { cond: c, then_value: t, else_value: e },
                P::Select { cond: d, then_value: u, else_value: f },
            ) => {
                self.prim(c, d)?;
                self.prim(t, u)?;
                self.prim(e, f)
            }
            (P::Cast { dtype: d, value: x }, P::Cast { dtype: e, value: y }) => {
                check(d == e, || "Cast dtype".into())?;
                self.prim(x, y)
            }
            _ => Err("different shape expressions".into()),
        }
    }

    // ----- TIR -----

    fn prim_func(&mut self, a: &PrimFunc, b: &PrimFunc) -> R {
        check(a.params.len() == b.params.len(), || "parameter count".into())?;
        for (x, y) in a.params.iter().zip(&b.params) {
            self.prim_var(&x.var, &y.var)?;
            match (&x.buffer, &y.buffer) {
                (None, None) => {}
                (Some(p), Some(q)) => self.buffer(p, q)?,
                _ => return Err(format!("parameter `{}`: buffer on one side only", x.var.name())),
            }
        }
        check(a.attrs == b.attrs, || format!("attributes {:?} vs {:?}", a.attrs, b.attrs))?;
        self.stmts(&a.body, &b.body)
    }

    fn stmts(&mut self, a: &[Stmt], b: &[Stmt]) -> R {
        check(a.len() == b.len(), || format!("{} vs {} statements", a.len(), b.len()))?;
        a.iter().zip(b).try_for_each(|(x, y)| self.stmt(x, y))
    }

    fn stmt(&mut self, a: &Stmt, b: &Stmt) -> R {
        use StmtKind as S;
        match (&a.kind, &b.kind) {
            (
                S::For { var: v, begin: b1, end: e1, kind: k1, body: s1 },
                S::For { var: w, begin: b2, end: e2, kind: k2, body: s2 },
            ) => {
                check(k1 == k2, || "loop kind".into())?;
                self.tir(b1, b2)?;
                self.tir(e1, e2)?;
                self.prim_var(v, w)?;
                self.stmts(s1, s2)
            }
            (
                S::BufferStore { buffer: x, indices: i, value: v },
                S::BufferStore { buffer: y, indices: j, value: w },
            ) => {
                self.buffer(x, y)?;
                self.tir_list(i, j)?;
                self.tir(v, w)
            }
            (
                S::IfThenElse { cond: c, then_body: t, else_body: e },
                S::IfThenElse { cond: d, then_body: u, else_body: f },
            ) => {
                self.tir(c, d)?;
                self.stmts(t, u)?;
                self.stmts(e, f)
            }
            (S::Block(x), S::Block(y)) => {
                check(x.name == y.name, || format!("block {} vs {}", x.name, y.name))?;
                check(x.iter_vars.len() == y.iter_vars.len(), || "axis count".into())?;
                for (p, q) in x.iter_vars.iter().zip(&y.iter_vars) {
                    check(p.kind == q.kind, || "axis kind".into())?;
                    self.tir(&p.begin, &q.begin)?;
                    self.tir(&p.end, &q.end)?;
                    self.tir(&p.binding, &q.binding)?;
                    self.prim_var(&p.var, &q.var)?;
                }
                for (rs, ss) in [(&x.reads, &y.reads), (&x.writes, &y.writes)] {
                    check(rs.len() == ss.len(), || "region count".into())?;
                    for (r, s) in rs.iter().zip(ss) {
                        self.buffer(&r.buffer, &s.buffer)?;
                        check(r.region.len() == s.region.len(), || "region rank".into())?;
                        for (d, e) in r.region.iter().zip(&s.region) {
                            match (d, e) {
                                (RegionDim::Point(p), RegionDim::Point(q)) => self.tir(p, q)?,
                                (RegionDim::Range { begin: b1, end: e1 }, RegionDim::Range { begin: b2, end: e2 }) => {
                                    self.tir(b1, b2)?;
                                    self.tir(e1, e2)?;
                                }
                                _ => return Err("region point vs range".into()),
                            }
                        }
                    }
                }
                match (&x.predicate, &y.predicate) {
                    (None, None) => {}
                    (Some(p), Some(q)) => self.tir(p, q)?,
                    _ => return Err("predicate on one side only".into()),
                }
                match (&x.init, &y.init) {
                    (None, None) => {}
                    (Some(p), Some(q)) => self.stmts(p, q)?,
                    _ => return Err("init on one side only".into()),
                }
                check(x.annotations == y.annotations, || "block annotations".into())?;
                self.stmts(&x.body, &y.body)
            }
            (S::AllocBuffer(x), S::AllocBuffer(y)) => self.buffer(x, y),
            (S::Let { var: v, value: x }, S::Let { var: w, value: y }) => {
                self.tir(x, y)?;
                self.prim_var(v, w)
            }
            (S::Evaluate(x), S::Evaluate(y)) => self.tir(x, y),
            _ => Err("different TIR statements".into()),
        }
    }

    fn tir_list(&mut self, a: &[TirExpr], b: &[TirExpr]) -> R {
        check(a.len() == b.len(), || "TIR expression count".into())?;
        a.iter().zip(b).try_for_each(|(x, y)| self.tir(x, y))
    }

    fn tir(&mut self, a: &TirExpr, b: &TirExpr) -> R {
        use TirExprKind as T;
        match (&*a.kind, &*b.kind) {
            (T::Var(x), T::Var(y)) => self.prim_var(x, y),
            (T::IntImm { value: x, dtype: d }, T::IntImm { value: y, dtype: e }) => {
                check(x == y && d == e, || format!("{x}:{d} vs {y}:{e}"))
            }
            (T::FloatImm { value: x, dtype: d }, T::FloatImm { value: y, dtype: e }) => {
                check(x == y && d == e, || format!("{}:{d} vs {}:{e}", x.0, y.0))
            }
            (T::Binary { op: o, a: x1, b: x2 }, T::Binary { op: p, a: y1, b: y2 }) => {
                check(o == p, || format!("{} vs {}", o.spec_name(), p.spec_name()))?;
                self.tir(x1, y1)?;
                self.tir(x2, y2)
            }
            (T::Not(x), T::Not(y)) => self.tir(x, y),
            (
                T::Select { cond: c, then_value: t, else_value: e },
                T::Select { cond: d, then_value: u, else_value: f },
            ) => {
                self.tir(c, d)?;
                self.tir(t, u)?;
                self.tir(e, f)
            }
            (T::Cast { dtype: d, value: x }, T::Cast { dtype: e, value: y }) => {
                check(d == e, || "Cast dtype".into())?;
                self.tir(x, y)
            }
            (T::BufferLoad { buffer: x, indices: i }, T::BufferLoad { buffer: y, indices: j }) => {
                self.buffer(x, y)?;
                self.tir_list(i, j)
            }
            (T::Call { op: o, args: x }, T::Call { op: p, args: y }) => {
                check(o == p, || format!("{} vs {}", o.name(), p.name()))?;
                self.tir_list(x, y)
            }
            _ => Err("different TIR expressions".into()),
        }
    }
}

fn kind_name(k: &ExprKind) -> &'static str {
    match k {
        ExprKind::Constant(_) => "Constant",
        ExprKind::Var(_) => "Var",
        ExprKind::GlobalVar(_) => "GlobalVar",
        ExprKind::Tuple(_) => "Tuple",
        ExprKind::SeqExpr(_) => "SeqExpr",
        ExprKind::Function(_) => "Function",
        ExprKind::If(_) => "If",
        ExprKind::ExternFunc { .. } => "ExternFunc",
        ExprKind::Call(_) => "Call",
        ExprKind::ShapeExpr(_) => "ShapeExpr",
        ExprKind::TupleGetItem { .. } => "TupleGetItem",
        ExprKind::Op(_) => "Op",
        ExprKind::PrimValue(_) => "PrimValue",
        ExprKind::StringImm(_) => "StringImm",
        ExprKind::DataTypeImm(_) => "DataTypeImm",
    }
}
