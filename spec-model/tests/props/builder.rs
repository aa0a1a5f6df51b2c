//! A builder of random well-formed Relax programs, mostly out of normal form (shared
//! by spec-model's normalization properties and the oracle's
//! normalization-preserves-meaning test).

use crate::common::{bind, block, op_call as call, seq, S};
use quickcheck::{Arbitrary, Gen};
use spec_model::grammar::*;
use std::rc::Rc;

/// Builds random well-formed programs over tensor parameters. `dataflow` marks a
/// DataflowBlock context (no If, no nested ordinary blocks, no closures there).
pub struct Builder<'g> {
    pub g: &'g mut Gen,
    pub names: usize,
}

impl Builder<'_> {
    fn pick(&mut self, n: usize) -> usize {
        usize::arbitrary(self.g) % n.max(1)
    }

    fn name(&mut self) -> String {
        self.names = self.names.wrapping_add(1);
        let stem = *self.g.choose(&["x", "lv", "gv", "t", "y"]).unwrap();
        format!("{stem}{}", self.names % 4)
    }

    /// An expression over the variables in `scope`.
    fn expr(&mut self, scope: &[Var], depth: u32, dataflow: bool) -> Expr {
        let leaf = depth == 0 || self.pick(4) == 0;
        if leaf || scope.is_empty() {
            return match (self.pick(3), scope.is_empty()) {
                (0, _) | (_, true) => Expr::new(
                    ExprKind::Constant(Rc::new(
                        NDArray::from_scalars(DataType::FLOAT32, vec![2], &[Scalar::Float(1.0), Scalar::Float(2.0)])
                            .unwrap(),
                    )),
                    S,
                ),
                _ => Expr::var(&scope[self.pick(scope.len())]),
            };
        }
        match self.pick(if dataflow { 5 } else { 8 }) {
            0 | 1 => {
                let op = *self.g.choose(&["add", "multiply", "subtract"]).unwrap();
                let (a, b) = (self.expr(scope, depth - 1, dataflow), self.expr(scope, depth - 1, dataflow));
                call(op, vec![a, b])
            }
            2 => call("negative", vec![self.expr(scope, depth - 1, dataflow)]),
            3 => {
                let t = Expr::new(
                    ExprKind::Tuple(vec![self.expr(scope, depth - 1, dataflow), self.expr(scope, depth - 1, dataflow)]),
                    S,
                );
                Expr::new(ExprKind::TupleGetItem { tuple_value: Box::new(t), index: self.pick(2) as i64 }, S)
            }
            4 => self.nested_seq(scope, depth - 1, dataflow),
            5 => {
                let cond = self.expr(scope, 0, false);
                let t = self.branch(scope, depth - 1);
                let f = self.branch(scope, depth - 1);
                let i = Expr::new(ExprKind::If(Box::new(If { cond, true_branch: t, false_branch: f })), S);
                // Branches give tensors; keep the condition a variable or constant as written.
                i
            }
            6 => self.nested_seq(scope, depth - 1, false),
            _ => {
                // A closure applied right away: captures the outer scope.
                let p = Var::new(self.name(), None, S);
                let mut inner = scope.to_vec();
                inner.push(p.clone());
                let body = self.branch(&inner, depth - 1);
                let f = Function { params: vec![p], body, ret_struct_info: None, attrs: Attrs::default(), span: S };
                let arg = self.expr(scope, 0, false);
                Expr::new(
                    ExprKind::Call(Box::new(Call {
                        op: Expr::new(ExprKind::Function(Rc::new(f)), S),
                        args: vec![arg],
                        sinfo_args: Vec::new(),
                        attrs: Attrs::default(),
                    })),
                    S,
                )
            }
        }
    }

    /// A function body or branch: a SeqExpr, or (not yet normal) a bare expression.
    fn branch(&mut self, scope: &[Var], depth: u32) -> Expr {
        if self.pick(3) == 0 {
            self.expr(scope, depth, false)
        } else {
            self.seq_body(scope, depth)
        }
    }

    /// A SeqExpr nested as a value. In a dataflow context it may hold only dataflow
    /// bindings whose variables stay inside (its body is then an outer value).
    fn nested_seq(&mut self, scope: &[Var], depth: u32, dataflow: bool) -> Expr {
        if dataflow {
            let e = self.expr(scope, depth, true);
            return seq(Vec::new(), e);
        }
        self.seq_body(scope, depth)
    }

    fn seq_body(&mut self, scope: &[Var], depth: u32) -> Expr {
        let mut scope = scope.to_vec();
        let mut blocks = Vec::new();
        for _ in 0..self.pick(3) {
            if self.pick(2) == 0 {
                let mut bs = Vec::new();
                for _ in 0..1 + self.pick(3) {
                    let e = self.expr(&scope, depth, false);
                    let v = Var::new(self.name(), None, S);
                    bs.push(bind(&v, e));
                    scope.push(v);
                }
                blocks.push(block(BlockKind::Binding, bs));
            } else {
                // A dataflow block: DataflowVars visible only inside, some outputs.
                let mut inner = scope.clone();
                let mut bs = Vec::new();
                for _ in 0..1 + self.pick(3) {
                    let e = self.expr(&inner, depth, true);
                    let output = self.pick(2) == 0;
                    let v =
                        if output { Var::new(self.name(), None, S) } else { Var::new_dataflow(self.name(), None, S) };
                    bs.push(bind(&v, e));
                    inner.push(v.clone());
                    if output {
                        scope.push(v);
                    }
                }
                blocks.push(block(BlockKind::DataflowBlock, bs));
            }
        }
        let body = self.expr(&scope, depth, false);
        seq(blocks, body)
    }

    /// `main(x, c)` with a random body (parameters unannotated).
    pub fn module(&mut self) -> IRModule {
        let x = Var::new("x", None, S);
        let c = Var::new("c", None, S);
        let body = self.seq_body(&[x.clone(), c.clone()], 3);
        let mut attrs = Attrs::default();
        attrs.insert("global_symbol", AttrValue::Str("main".into()));
        let f = Function { params: vec![x, c], body, ret_struct_info: None, attrs, span: S };
        IRModule {
            name: "Module".into(),
            functions: vec![(GlobalVar::new("main"), BaseFunc::Relax(Rc::new(f)))],
            attrs: Default::default(),
            span: S,
        }
    }
}
