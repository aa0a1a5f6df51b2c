//! The variables a function literal uses from its surroundings: what its closure
//! captures (SEM-6). Relax variables used and not bound inside, and every shape
//! variable mentioned (the closure takes those bound where it is created).

use spec_model::grammar::{Binding, Expr, ExprKind, Function, PrimExpr, PrimVar, StructInfo, StructInfoKind, Var};
use std::collections::HashSet;

#[derive(Default)]
pub struct FreeVars {
    pub vars: Vec<Var>,
    pub shapes: Vec<PrimVar>,
    bound: HashSet<u64>,
    used: Vec<Var>,
    seen_shapes: HashSet<u64>,
}

impl FreeVars {
    /// Collects the free variables of `f` into `vars` and `shapes`.
    pub fn function(&mut self, f: &Function) {
        self.walk_function(f);
        let bound = &self.bound;
        let mut seen = HashSet::new();
        self.vars = self.used.iter().filter(|v| !bound.contains(&v.id()) && seen.insert(v.id())).cloned().collect();
    }

    fn walk_function(&mut self, f: &Function) {
        for p in &f.params {
            self.bound.insert(p.id());
            if let Some(a) = p.annotation() {
                self.sinfo(a);
            }
        }
        if let Some(r) = &f.ret_struct_info {
            self.sinfo(r);
        }
        self.expr(&f.body);
    }

    fn use_var(&mut self, v: &Var) {
        self.used.push(v.clone());
    }

    fn prim(&mut self, e: &PrimExpr) {
        e.for_each_var(&mut |v| {
            if self.seen_shapes.insert(v.id()) {
                self.shapes.push(v.clone());
            }
        });
    }

    fn sinfo(&mut self, s: &StructInfo) {
        match &*s.kind {
            StructInfoKind::Tensor { shape: Some(shape), .. } => match &shape.kind {
                ExprKind::Var(v) => self.use_var(v),
                ExprKind::ShapeExpr(ds) => ds.iter().for_each(|d| self.prim(d)),
                _ => {}
            },
            StructInfoKind::Shape { values: Some(vs), .. } => vs.iter().for_each(|d| self.prim(d)),
            StructInfoKind::Tuple { fields } => fields.iter().for_each(|f| self.sinfo(f)),
            StructInfoKind::Func { params, ret, .. } => {
                params.iter().flatten().for_each(|p| self.sinfo(p));
                self.sinfo(ret);
            }
            _ => {}
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Var(v) => self.use_var(v),
            ExprKind::Tuple(fs) => fs.iter().for_each(|f| self.expr(f)),
            ExprKind::TupleGetItem { tuple_value, .. } => self.expr(tuple_value),
            ExprKind::ShapeExpr(ds) => ds.iter().for_each(|d| self.prim(d)),
            ExprKind::PrimValue(p) => self.prim(p),
            ExprKind::Function(f) => self.walk_function(f),
            ExprKind::If(i) => {
                self.expr(&i.cond);
                self.expr(&i.true_branch);
                self.expr(&i.false_branch);
            }
            ExprKind::Call(c) => {
                self.expr(&c.op);
                c.args.iter().for_each(|a| self.expr(a));
                c.sinfo_args.iter().for_each(|s| self.sinfo(s));
            }
            ExprKind::SeqExpr(s) => {
                for b in s.blocks.iter().flat_map(|b| &b.bindings) {
                    if let Some(v) = b.var() {
                        self.bound.insert(v.id());
                        if let Some(a) = v.annotation() {
                            self.sinfo(a);
                        }
                    }
                    if let Binding::MatchCast { struct_info, .. } = b {
                        self.sinfo(struct_info);
                    }
                    self.expr(b.value());
                }
                self.expr(&s.body);
            }
            ExprKind::Constant(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::ExternFunc { .. }
            | ExprKind::Op(_)
            | ExprKind::StringImm(_)
            | ExprKind::DataTypeImm(_) => {}
        }
    }
}
