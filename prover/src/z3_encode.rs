//! The Z3 encoding of a query: the expressions, and the conditions under which they
//! evaluate without error (see `z3_prover`).

use spec_model::grammar::{DataType, PrimBinOp, PrimExpr, PrimExprKind};
use spec_model::prim_eval::int_range;
use z3::ast::{Ast, Bool, Int};
use z3::Context;

/// A `PrimExpr` the Z3 worker thread can own (a `PrimVar` is reference-counted, so a
/// `PrimExpr` cannot cross threads): variables by id, and of each node what the
/// encoding reads.
pub(crate) enum Term {
    Var {
        id: u64,
        dtype: DataType,
    },
    Int {
        value: i64,
        dtype: DataType,
    },
    /// Floating point, or an integer operation on floats: no encoding.
    Float,
    Not(Box<Term>),
    Select(Box<[Term; 3]>),
    /// An integer or boolean cast of an integer or boolean.
    Cast {
        dtype: DataType,
        value: Box<Term>,
    },
    /// `dtype` is the operands' (the result's range for arithmetic).
    Binary {
        op: PrimBinOp,
        dtype: DataType,
        a: Box<Term>,
        b: Box<Term>,
    },
}

impl Term {
    pub(crate) fn of(e: &PrimExpr) -> Term {
        match &*e.kind {
            PrimExprKind::Var(v) => Term::Var { id: v.id(), dtype: v.dtype() },
            PrimExprKind::IntImm { value, dtype } => Term::Int { value: *value, dtype: *dtype },
            PrimExprKind::FloatImm { .. } => Term::Float,
            PrimExprKind::Not(a) => Term::Not(Box::new(Term::of(a))),
            PrimExprKind::Select { cond, then_value, else_value } => {
                Term::Select(Box::new([Term::of(cond), Term::of(then_value), Term::of(else_value)]))
            }
            PrimExprKind::Cast { dtype, value } if dtype.is_float() || value.dtype().is_float() => Term::Float,
            PrimExprKind::Cast { dtype, value } => Term::Cast { dtype: *dtype, value: Box::new(Term::of(value)) },
            PrimExprKind::Binary { a, b, .. } if a.dtype().is_float() || b.dtype().is_float() => Term::Float,
            PrimExprKind::Binary { op, a, b } => {
                Term::Binary { op: *op, dtype: a.dtype(), a: Box::new(Term::of(a)), b: Box::new(Term::of(b)) }
            }
        }
    }
}

/// An encoded subterm.
pub(crate) enum Val<'c> {
    I(Int<'c>),
    B(Bool<'c>),
}

pub(crate) struct Encoder<'c> {
    pub ctx: &'c Context,
    /// The conditions under which the expressions evaluate without error.
    pub defined: Vec<Bool<'c>>,
    /// With the dtypes' range conditions (the exact semantics), or without.
    pub bounded: bool,
}

fn big(ctx: &Context, v: i128) -> Int<'_> {
    match i64::try_from(v) {
        Ok(x) => Int::from_i64(ctx, x),
        Err(_) => Int::from_str(ctx, &v.to_string()).unwrap_or_else(|| Int::from_i64(ctx, 0)),
    }
}

impl<'c> Encoder<'c> {
    fn int(&self, v: i64) -> Int<'c> {
        Int::from_i64(self.ctx, v)
    }

    pub fn as_int(&self, v: Val<'c>) -> Int<'c> {
        match v {
            Val::I(i) => i,
            Val::B(b) => b.ite(&self.int(1), &self.int(0)),
        }
    }

    fn as_bool(&self, v: Val<'c>) -> Bool<'c> {
        match v {
            Val::B(b) => b,
            Val::I(i) => i._eq(&self.int(0)).not(),
        }
    }

    /// `t` within the range of `dtype`, as a definedness condition.
    fn in_range(&mut self, t: &Int<'c>, dtype: DataType) {
        if !self.bounded {
            return;
        }
        let (lo, hi) = int_range(dtype);
        self.defined.push(t.ge(&big(self.ctx, lo)));
        self.defined.push(t.le(&big(self.ctx, hi)));
    }

    /// `floor(a / b)` from Euclidean division: for `b > 0` they agree; for `b < 0`,
    /// `floor(a / b) = floor(-a / -b)`.
    fn floor_div(&self, a: &Int<'c>, b: &Int<'c>) -> Int<'c> {
        let pos = b.gt(&self.int(0));
        pos.ite(&a.div(b), &a.unary_minus().div(&b.unary_minus()))
    }

    /// `trunc(a / b)`: the quotient of the magnitudes, negated when the signs differ.
    fn trunc_div(&self, a: &Int<'c>, b: &Int<'c>) -> Int<'c> {
        let zero = self.int(0);
        let (a_nonneg, b_pos) = (a.ge(&zero), b.gt(&zero));
        let q_pp = a.div(b);
        let q_pn = a.div(&b.unary_minus()).unary_minus();
        let q_np = a.unary_minus().div(b).unary_minus();
        let q_nn = a.unary_minus().div(&b.unary_minus());
        a_nonneg.ite(&b_pos.ite(&q_pp, &q_pn), &b_pos.ite(&q_np, &q_nn))
    }

    pub fn encode(&mut self, e: &Term) -> Option<Val<'c>> {
        let ctx = self.ctx;
        Some(match e {
            Term::Var { id, dtype } if dtype.is_bool() => Val::B(Bool::new_const(ctx, format!("v{id}"))),
            Term::Var { id, dtype } => {
                let x = Int::new_const(ctx, format!("v{id}"));
                self.defined.push(x.ge(&self.int(0)));
                self.in_range(&x, *dtype);
                Val::I(x)
            }
            Term::Int { value, dtype } if dtype.is_bool() => Val::B(Bool::from_bool(ctx, *value != 0)),
            Term::Int { value, .. } => Val::I(self.int(*value)),
            Term::Float => return None,
            Term::Not(a) => {
                let x = self.encode(a)?;
                Val::B(self.as_bool(x).not())
            }
            Term::Select(parts) => {
                let [cond, then_value, else_value] = &**parts;
                let c = self.encode(cond)?;
                let c = self.as_bool(c);
                match (self.encode(then_value)?, self.encode(else_value)?) {
                    (Val::B(t), Val::B(f)) => Val::B(c.ite(&t, &f)),
                    (t, f) => {
                        let (t, f) = (self.as_int(t), self.as_int(f));
                        Val::I(c.ite(&t, &f))
                    }
                }
            }
            Term::Cast { dtype, value } => {
                let x = self.encode(value)?;
                if dtype.is_bool() {
                    Val::B(self.as_bool(x))
                } else {
                    let x = self.as_int(x);
                    self.in_range(&x, *dtype);
                    Val::I(x)
                }
            }
            Term::Binary { op, dtype, a, b } => {
                let (x, y) = (self.encode(a)?, self.encode(b)?);
                return self.binary(*op, x, y, *dtype);
            }
        })
    }

    fn binary(&mut self, op: PrimBinOp, x: Val<'c>, y: Val<'c>, dtype: DataType) -> Option<Val<'c>> {
        use PrimBinOp::*;
        let ctx = self.ctx;
        if matches!(op, And | Or) {
            let (p, q) = (self.as_bool(x), self.as_bool(y));
            return Some(Val::B(if op == And { Bool::and(ctx, &[&p, &q]) } else { Bool::or(ctx, &[&p, &q]) }));
        }
        let (p, q) = (self.as_int(x), self.as_int(y));
        let cmp = match op {
            Eq => Some(p._eq(&q)),
            Ne => Some(p._eq(&q).not()),
            Lt => Some(p.lt(&q)),
            Le => Some(p.le(&q)),
            Gt => Some(p.gt(&q)),
            Ge => Some(p.ge(&q)),
            _ => None,
        };
        if let Some(c) = cmp {
            return Some(Val::B(c));
        }
        if matches!(op, Div | Mod | FloorDiv | FloorMod) {
            self.defined.push(q._eq(&self.int(0)).not());
        }
        let r = match op {
            Add => Int::add(ctx, &[&p, &q]),
            Sub => Int::sub(ctx, &[&p, &q]),
            Mul => Int::mul(ctx, &[&p, &q]),
            FloorDiv => self.floor_div(&p, &q),
            FloorMod => Int::sub(ctx, &[&p, &Int::mul(ctx, &[&q, &self.floor_div(&p, &q)])]),
            Div => self.trunc_div(&p, &q),
            Mod => Int::sub(ctx, &[&p, &Int::mul(ctx, &[&q, &self.trunc_div(&p, &q)])]),
            Min => p.le(&q).ite(&p, &q),
            Max => p.ge(&q).ite(&p, &q),
            _ => return None,
        };
        self.in_range(&r, dtype);
        Some(Val::I(r))
    }
}
