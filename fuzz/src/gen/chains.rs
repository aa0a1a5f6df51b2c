//! Long chains of elementwise float operators (`Config::long_chains`): each binding
//! applies an operator to the previous one's result, which nothing else uses, so the
//! optimized engine fuses the chain into one pass and may write it in place; the
//! other operands are same-shape values, scalars or trailing-dimension tensors that
//! broadcast, in either operand position.

use super::funcs::bind;
use super::ty::{Dim, Ty};
use super::{Gen, Scope};
use crate::gen::exprs::no;
use spec_model::grammar::{Binding, DataType, Expr, Var};
use spec_model::ops::Op;
use spec_model::Span;

const UNARY: [Op; 7] = [Op::Negative, Op::Abs, Op::Relu, Op::Exp, Op::Sqrt, Op::Tanh, Op::Sigmoid];
const BINARY: [Op; 6] = [Op::Add, Op::Subtract, Op::Multiply, Op::Divide, Op::Maximum, Op::Minimum];

impl Gen<'_, '_> {
    /// Binds a chain of 3 to 10 operators into `out`; only its last variable enters the
    /// scope (as a non-dataflow output when `output`).
    pub(super) fn elementwise_chain(&mut self, sc: &mut Scope, out: &mut Vec<Binding>, output: bool) {
        let is_float = |t: &Ty| matches!(t, Ty::Tensor { dtype, .. } if *dtype == DataType::FLOAT32 || *dtype == DataType::float(64));
        let floats = sc.vars_where(is_float);
        let (mut prev, ty) = match self.choose(&floats) {
            Some((v, t)) if self.chance(3, 4) => (Expr::var(&v), t),
            _ => {
                let dtype = if self.chance(1, 4) { DataType::float(64) } else { DataType::FLOAT32 };
                let rank = 1 + self.pick(3);
                let ty = Ty::tensor(self.new_dims(sc, rank), dtype);
                (self.expr_of(&ty, sc, 0), ty)
            }
        };
        let Ty::Tensor { dims, dtype } = ty.clone() else { return };
        let n = 3 + self.pick(8);
        for i in 0..n {
            self.budget = self.budget.saturating_sub(1);
            let value = if self.chance(1, 3) {
                let op = self.choose(&UNARY).unwrap_or(Op::Relu);
                self.call_op(op, vec![prev], no())
            } else {
                let op = self.choose(&BINARY).unwrap_or(Op::Add);
                let other = self.broadcast_operand(&dims, dtype, sc);
                let args = if self.chance(1, 2) { vec![prev, other] } else { vec![other, prev] };
                self.call_op(op, args, no())
            };
            let last = i + 1 == n;
            let var = if last && output {
                Var::new(self.name("v"), None, Span::SYNTHETIC)
            } else {
                Var::new_dataflow(self.name("lv"), None, Span::SYNTHETIC)
            };
            out.push(bind(&var, value));
            prev = Expr::var(&var);
            if last {
                sc.vars.push((var, ty.clone()));
            }
        }
    }

    /// An operand that broadcasts to `dims`: one of the same shape, a scalar, or the
    /// trailing dimensions.
    fn broadcast_operand(&mut self, dims: &[Dim], dtype: DataType, sc: &Scope) -> Expr {
        let shape: Vec<Dim> = match self.pick(3) {
            0 => Vec::new(),
            1 if !dims.is_empty() => {
                let from = self.pick(dims.len());
                dims[from..].to_vec()
            }
            _ => dims.to_vec(),
        };
        self.expr_of(&Ty::tensor(shape, dtype), sc, 0)
    }
}
