//! The criteria on arbitrary ASTs, most of them far from well-formed: none panics,
//! each reports only its own rule, and [`check_normal_form`] reports exactly what the
//! NF criteria report, each criterion's diagnostics in its own order.

mod common;

use common::corpus_files;
use quickcheck::{Arbitrary, Gen};
use spec_model::diagnostic::Diagnostic;
use spec_model::grammar::*;
use spec_model::normal_form::{self, check_normal_form};
use spec_model::text::parse_module;
use spec_model::well_formed::{self, check_well_formed};
use spec_model::Span;
use std::collections::BTreeSet;
use std::rc::Rc;

/// A diagnostic's code, message, label, span and secondary spans with their labels.
type Key = (String, String, String, u32, u32, Vec<(u32, u32, String)>);

/// What tells two diagnostics apart (`Span`'s own equality ignores positions).
fn key(ds: &[Diagnostic]) -> Vec<Key> {
    ds.iter()
        .map(|d| {
            let secondary = d.secondary.iter().map(|(s, l)| (s.lo, s.hi, l.clone())).collect();
            (d.code.clone(), d.message.clone(), d.label.clone(), d.span.lo, d.span.hi, secondary)
        })
        .collect()
}

/// Checks the properties on `m` and adds the rules reported to `seen`.
fn properties(m: &IRModule, what: &str, seen: &mut BTreeSet<String>) {
    for (rule, check) in well_formed::CRITERIA.iter().chain(normal_form::CRITERIA) {
        for d in check(m) {
            assert_eq!(d.code, *rule, "{what}: {rule} reported {d:?}");
            seen.insert(d.code);
        }
    }
    let all = check_normal_form(m);
    for (rule, check) in normal_form::CRITERIA {
        let of_rule: Vec<Diagnostic> = all.iter().filter(|d| d.code == *rule).cloned().collect();
        assert_eq!(key(&check(m)), key(&of_rule), "{what}: check_normal_form disagrees with {rule}");
    }
    assert_eq!(check_well_formed(m).len(), well_formed::CRITERIA.iter().map(|(_, c)| c(m).len()).sum::<usize>());
}

#[test]
fn corpus_programs() {
    let mut seen = BTreeSet::new();
    for (path, src) in corpus_files("") {
        if let Ok(m) = parse_module(&src) {
            properties(&m, &path.display().to_string(), &mut seen);
        }
    }
}

/// Builds arbitrary ASTs: any expression anywhere, annotations with shapes over a few
/// shape variables, variables used anywhere. Every node gets its own span, so a
/// difference in order or place shows.
struct Arb<'g> {
    g: &'g mut Gen,
    span: u32,
    shape_vars: Vec<PrimVar>,
    /// Every Relax variable made so far.
    vars: Vec<Var>,
}

impl Arb<'_> {
    fn sp(&mut self) -> Span {
        self.span += 2;
        Span::new(self.span as usize, self.span as usize + 1)
    }
    fn pick(&mut self, n: usize) -> usize {
        usize::arbitrary(self.g) % n.max(1)
    }
    fn dim(&mut self) -> PrimExpr {
        let k = self.pick(self.shape_vars.len());
        let v = PrimExpr::var(&self.shape_vars[k]).with_span(self.sp());
        let d = match self.pick(6) {
            0 => PrimExpr::int(self.pick(4) as i64),
            1 | 2 => v,
            3 => PrimExpr::binary(PrimBinOp::Add, v, PrimExpr::int(1)),
            4 => {
                let k2 = self.pick(self.shape_vars.len());
                let w = PrimExpr::var(&self.shape_vars[k2]).with_span(self.sp());
                PrimExpr::binary(PrimBinOp::Mul, v, w)
            }
            _ => PrimExpr::binary(PrimBinOp::Add, v.clone(), v),
        };
        d.with_span(self.sp())
    }
    /// Dimensions and an ndim, which sometimes does not match.
    fn dims(&mut self) -> (Vec<PrimExpr>, i64) {
        let n = self.pick(4);
        let ds: Vec<PrimExpr> = (0..n).map(|_| self.dim()).collect();
        let ndim = if self.pick(4) == 0 { self.pick(4) as i64 - 1 } else { n as i64 };
        (ds, ndim)
    }
    /// A variable to use: one made before (bound or not, in scope or not) or a fresh one.
    fn some_var(&mut self) -> Var {
        if self.vars.is_empty() || self.pick(6) == 0 {
            let v = Var::new(format!("v{}", self.vars.len()), None, self.sp());
            self.vars.push(v.clone());
            return v;
        }
        let k = self.pick(self.vars.len());
        self.vars[k].clone()
    }
    fn si(&mut self, depth: u32) -> StructInfo {
        let kind = match self.pick(if depth == 0 { 4 } else { 7 }) {
            0 | 1 => {
                let (ds, ndim) = self.dims();
                let shape = match self.pick(6) {
                    0 => None,
                    1 => Some(Expr::new(ExprKind::Var(self.some_var()), self.sp())),
                    2 => Some(Expr::new(ExprKind::StringImm("s".into()), self.sp())),
                    _ => Some(Expr::new(ExprKind::ShapeExpr(ds), self.sp())),
                };
                StructInfoKind::Tensor { shape, dtype: DataType::FLOAT32, ndim }
            }
            2 => {
                let (ds, ndim) = self.dims();
                StructInfoKind::Shape { values: (self.pick(5) != 0).then_some(ds), ndim }
            }
            3 => StructInfoKind::Object,
            4 | 5 => StructInfoKind::Tuple { fields: (0..self.pick(3)).map(|_| self.si(depth - 1)).collect() },
            _ => StructInfoKind::Func {
                params: (self.pick(4) != 0).then(|| (0..self.pick(3)).map(|_| self.si(depth - 1)).collect()),
                ret: self.si(depth - 1),
                derive_func: None,
                purity: true,
            },
        };
        StructInfo::new(kind, self.sp())
    }
    fn ann(&mut self) -> Option<StructInfo> {
        (self.pick(3) != 0).then(|| self.si(2))
    }
    /// A variable to bind: mostly a fresh one, sometimes one made before.
    fn new_var(&mut self) -> Var {
        if !self.vars.is_empty() && self.pick(8) == 0 {
            let k = self.pick(self.vars.len());
            return self.vars[k].clone();
        }
        let a = self.ann();
        let v = if self.pick(5) == 0 {
            Var::new_dataflow(format!("lv{}", self.vars.len()), a, self.sp())
        } else {
            Var::new(format!("v{}", self.vars.len()), a, self.sp())
        };
        self.vars.push(v.clone());
        v
    }
    fn function(&mut self, depth: u32) -> Function {
        let params = (0..self.pick(3)).map(|_| self.new_var()).collect();
        let ret_struct_info = self.ann();
        let body = self.expr(depth);
        Function { params, body, ret_struct_info, attrs: Attrs::default(), span: self.sp() }
    }
    fn seq(&mut self, depth: u32) -> SeqExpr {
        let blocks = (0..self.pick(4))
            .map(|_| {
                let kind = if self.pick(2) == 0 { BlockKind::Binding } else { BlockKind::DataflowBlock };
                let bindings = (0..self.pick(3))
                    .map(|_| {
                        let value = self.expr(depth);
                        if self.pick(3) == 0 {
                            let var = (self.pick(3) != 0).then(|| self.new_var());
                            let struct_info = self.si(2);
                            Binding::MatchCast { var, struct_info, value, span: self.sp() }
                        } else {
                            let var = self.new_var();
                            Binding::VarBinding { var, value, span: self.sp() }
                        }
                    })
                    .collect();
                BindingBlock { kind, bindings, span: self.sp() }
            })
            .collect();
        SeqExpr { blocks, body: self.expr(depth) }
    }
    fn expr(&mut self, depth: u32) -> Expr {
        let k = self.pick(if depth == 0 { 4 } else { 11 });
        let kind = match k {
            0 => ExprKind::Var(self.some_var()),
            1 => ExprKind::ShapeExpr(self.dims().0),
            2 => ExprKind::PrimValue(PrimExpr::int(1)),
            3 => ExprKind::Op(spec_model::ops::Op::Add.into()),
            4 => ExprKind::Tuple((0..self.pick(3)).map(|_| self.expr(depth - 1)).collect()),
            5 | 6 => ExprKind::Call(Box::new(Call {
                op: self.expr(depth - 1),
                args: (0..self.pick(3)).map(|_| self.expr(depth - 1)).collect(),
                sinfo_args: (0..self.pick(2)).map(|_| self.si(2)).collect(),
                attrs: Attrs::default(),
            })),
            7 => ExprKind::TupleGetItem { tuple_value: Box::new(self.expr(depth - 1)), index: 0 },
            8 => ExprKind::If(Box::new(If {
                cond: self.expr(depth - 1),
                true_branch: self.expr(depth - 1),
                false_branch: self.expr(depth - 1),
            })),
            9 => ExprKind::Function(Rc::new(self.function(depth - 1))),
            _ => ExprKind::SeqExpr(Box::new(self.seq(depth - 1))),
        };
        Expr::new(kind, self.sp())
    }
}

#[test]
fn random_programs() {
    let mut seen = BTreeSet::new();
    for size in [4, 8, 16] {
        for i in 0..1000 {
            let mut g = Gen::new(size);
            let fresh = usize::arbitrary(&mut g) % 3;
            let mut shape_vars = vec![PrimVar::shape_var("n"), PrimVar::shape_var("m")];
            shape_vars.extend((0..fresh).map(|i| PrimVar::shape_var(format!("k{i}"))));
            let mut r = Arb { g: &mut g, span: 0, shape_vars, vars: Vec::new() };
            let depth = 1 + r.pick(4) as u32;
            let functions = (0..1 + r.pick(2))
                .map(|i| (GlobalVar::new(format!("f{i}")), BaseFunc::Relax(Rc::new(r.function(depth)))))
                .collect();
            let m = IRModule { name: "M".into(), functions, attrs: Default::default(), span: Span::SYNTHETIC };
            properties(&m, &format!("random program {i} (size {size})"), &mut seen);
        }
    }
    // The programs reach every place the shape and normal-form criteria look at.
    for rule in ["WF-4", "WF-5", "WF-9", "WF-13", "WF-14", "NF-1", "NF-2", "NF-3", "NF-4"] {
        assert!(seen.contains(rule), "no random program violates {rule}");
    }
}
