//! Lowering a `PrimFunc` once (OP-call_tir): every variable and buffer becomes a
//! numbered slot, literals become values (or the error evaluating them raises), and
//! what the interpreter would recompute on every evaluation (the static dtype of the
//! branch `T.if_then_else` does not take, which parameters bind which shape variables)
//! is computed here. The machine ([`super::exec`]) runs the result; a native backend
//! can lower the same tree.

use super::num::{cast, promote, Fault, Val};
use spec_model::grammar::tir::{Buffer, Intrinsic, IterKind, PrimFunc, Stmt, StmtKind, TirExpr, TirExprKind, TirParam};
use spec_model::grammar::{DataType, PrimBinOp, PrimVar};
use spec_model::Span;
use std::collections::{HashMap, HashSet};

/// A slot: the index of a variable or buffer in the machine's frame.
pub type Slot = u32;

/// A lowered expression and where it was written (for its errors).
#[derive(Debug)]
pub struct Ex {
    pub kind: ExKind,
    pub span: Span,
}

#[derive(Debug)]
pub enum ExKind {
    /// A literal, converted to its dtype.
    Const(Val),
    /// A literal whose conversion fails, or an intrinsic call of the wrong arity: the
    /// error comes when (if ever) it is evaluated.
    Fail(Fault),
    Var(Slot),
    Bin(PrimBinOp, Box<[Ex; 2]>),
    Not(Box<Ex>),
    /// `T.Select(c, a, b)`: all three evaluated.
    Select(Box<[Ex; 3]>),
    Cast(DataType, Box<Ex>),
    /// A load from a buffer of dtype `dt`.
    Load {
        buf: Slot,
        dt: DataType,
        indices: Box<[Ex]>,
    },
    /// `T.if_then_else(c, a, b)`: only the chosen side runs; it converts to its dtype
    /// promoted with the static dtype of the other side (`with[0]` for `a`).
    IfThenElse(Box<[Ex; 3]>, [DataType; 2]),
    Pow(Box<[Ex; 2]>),
    /// `T.bitwise_and/or/xor`, `T.shift_left/right`.
    Bits(Intrinsic, Box<[Ex; 2]>),
    Unary(Intrinsic, Box<Ex>),
}

/// A lowered statement: one unit of fuel each time it runs (LIMIT-fuel).
#[derive(Debug)]
pub struct St {
    pub kind: StKind,
    pub span: Span,
}

#[derive(Debug)]
pub enum StKind {
    For { var: Slot, dt: DataType, begin: Ex, end: Ex, body: Box<[St]> },
    Store { buf: Slot, dt: DataType, indices: Box<[Ex]>, value: Ex },
    If { cond: Ex, then: Box<[St]>, other: Box<[St]> },
    Block(Box<Blk>),
    Alloc { buf: Slot, dt: DataType, shape: Box<[Ex]> },
    Let { var: Slot, dt: DataType, value: Ex },
    Eval(Ex),
}

#[derive(Debug)]
pub struct Blk {
    pub name: String,
    pub axes: Box<[Axis]>,
    pub predicate: Option<Ex>,
    pub init: Option<Box<[St]>>,
    pub body: Box<[St]>,
}

/// A block axis: its variable, kind, domain `[begin, end)` and binding.
#[derive(Debug)]
pub struct Axis {
    pub var: Slot,
    pub dt: DataType,
    pub reduce: bool,
    pub begin: Ex,
    pub end: Ex,
    pub binding: Ex,
}

/// A scalar parameter.
#[derive(Debug)]
pub struct ScalarParam {
    pub var: Slot,
    pub dt: DataType,
}

/// A parameter that takes a tensor: a bare handle (`buffer: None`) takes it and binds
/// nothing.
#[derive(Debug)]
pub struct TensorParam {
    pub buffer: Option<BufParam>,
}

#[derive(Debug)]
pub struct BufParam {
    pub buf: Slot,
    pub dt: DataType,
    pub dims: Box<[Dim]>,
}

/// A dimension of a buffer parameter: a variable not bound before it binds from the
/// tensor; any other dimension is checked after every parameter is bound.
#[derive(Debug)]
pub enum Dim {
    Bind(Slot, DataType),
    Check(Ex),
}

/// The whole function, lowered.
#[derive(Debug)]
pub struct Lowered {
    pub scalars: Box<[ScalarParam]>,
    pub tensors: Box<[TensorParam]>,
    pub body: Box<[St]>,
    /// Names of the variable slots and buffer slots, for messages.
    pub var_names: Box<[String]>,
    pub buf_names: Box<[String]>,
}

/// Slot numbering, by `PrimVar` and `Buffer` identity.
#[derive(Default)]
struct Lower {
    vars: HashMap<u64, Slot>,
    var_names: Vec<String>,
    bufs: HashMap<u64, Slot>,
    buf_names: Vec<String>,
}

/// Lowers `f`; never fails (what cannot run becomes an error at run time).
pub fn lower(f: &PrimFunc) -> Lowered {
    let mut l = Lower::default();
    // Scalar parameters first, then buffers in order: a bare-variable dimension binds
    // when nothing bound its variable before (statically known: binding runs in order).
    let is_scalar = |p: &&TirParam| p.buffer.is_none() && p.var.dtype() != DataType::handle();
    let (mut scalars, mut tensors) = (Vec::new(), Vec::new());
    let mut bound = HashSet::new();
    for p in f.params.iter().filter(is_scalar) {
        scalars.push(ScalarParam { var: l.var(&p.var), dt: p.var.dtype() });
        bound.insert(p.var.id());
    }
    for p in f.params.iter().filter(|p| !is_scalar(p)) {
        let buffer = p.buffer.as_ref().map(|b| {
            let dims = b
                .shape()
                .iter()
                .map(|d| match &*d.kind {
                    TirExprKind::Var(v) if bound.insert(v.id()) => Dim::Bind(l.var(v), v.dtype()),
                    _ => Dim::Check(l.expr(d).0),
                })
                .collect();
            BufParam { buf: l.buf(b), dt: b.dtype(), dims }
        });
        tensors.push(TensorParam { buffer });
    }
    let body = l.stmts(&f.body);
    Lowered {
        scalars: scalars.into(),
        tensors: tensors.into(),
        body,
        var_names: l.var_names.into(),
        buf_names: l.buf_names.into(),
    }
}

impl Lower {
    fn var(&mut self, v: &PrimVar) -> Slot {
        let next = self.var_names.len() as Slot;
        *self.vars.entry(v.id()).or_insert_with(|| {
            self.var_names.push(v.name().to_string());
            next
        })
    }

    fn buf(&mut self, b: &Buffer) -> Slot {
        let next = self.buf_names.len() as Slot;
        *self.bufs.entry(b.id()).or_insert_with(|| {
            self.buf_names.push(b.name().to_string());
            next
        })
    }

    fn stmts(&mut self, ss: &[Stmt]) -> Box<[St]> {
        ss.iter().map(|s| self.stmt(s)).collect()
    }

    fn exprs(&mut self, es: &[TirExpr]) -> Box<[Ex]> {
        es.iter().map(|e| self.expr(e).0).collect()
    }

    fn stmt(&mut self, s: &Stmt) -> St {
        let kind = match &s.kind {
            StmtKind::For { var, begin, end, body, .. } => StKind::For {
                var: self.var(var),
                dt: var.dtype(),
                begin: self.expr(begin).0,
                end: self.expr(end).0,
                body: self.stmts(body),
            },
            StmtKind::BufferStore { buffer, indices, value } => StKind::Store {
                buf: self.buf(buffer),
                dt: buffer.dtype(),
                indices: self.exprs(indices),
                value: self.expr(value).0,
            },
            StmtKind::IfThenElse { cond, then_body, else_body } => {
                StKind::If { cond: self.expr(cond).0, then: self.stmts(then_body), other: self.stmts(else_body) }
            }
            StmtKind::Block(b) => {
                let axes = b
                    .iter_vars
                    .iter()
                    .map(|iv| Axis {
                        var: self.var(&iv.var),
                        dt: iv.var.dtype(),
                        reduce: iv.kind == IterKind::Reduce,
                        begin: self.expr(&iv.begin).0,
                        end: self.expr(&iv.end).0,
                        binding: self.expr(&iv.binding).0,
                    })
                    .collect();
                StKind::Block(Box::new(Blk {
                    name: b.name.clone(),
                    axes,
                    predicate: b.predicate.as_ref().map(|p| self.expr(p).0),
                    init: b.init.as_ref().map(|i| self.stmts(i)),
                    body: self.stmts(&b.body),
                }))
            }
            StmtKind::AllocBuffer(b) => StKind::Alloc { buf: self.buf(b), dt: b.dtype(), shape: self.exprs(b.shape()) },
            StmtKind::Let { var, value } => {
                StKind::Let { var: self.var(var), dt: var.dtype(), value: self.expr(value).0 }
            }
            StmtKind::Evaluate(e) => StKind::Eval(self.expr(e).0),
        };
        St { kind, span: s.span }
    }

    /// The lowered expression and its static dtype: the dtype evaluation gives it,
    /// except that an asymmetric promotion in a `T.if_then_else` is taken then-first
    /// (this static dtype is what the other side of a `T.if_then_else` promotes with).
    fn expr(&mut self, e: &TirExpr) -> (Ex, DataType) {
        let (kind, dt) = match &*e.kind {
            TirExprKind::Var(v) => (ExKind::Var(self.var(v)), v.dtype()),
            TirExprKind::IntImm { value, dtype } => {
                let v = if dtype.is_bool() {
                    Ok(Val::bool(*value != 0))
                } else {
                    cast(Val::int((*value).into(), DataType::INT64), *dtype)
                };
                (literal(v), *dtype)
            }
            TirExprKind::FloatImm { value, dtype } => {
                (literal(cast(Val::float(value.0, DataType::float(64)), *dtype)), *dtype)
            }
            TirExprKind::Binary { op, a, b } => {
                let ((a, da), (b, db)) = (self.expr(a), self.expr(b));
                let dt = if op.is_comparison() || op.is_logical() { DataType::bool() } else { promote(da, db) };
                (ExKind::Bin(*op, Box::new([a, b])), dt)
            }
            TirExprKind::Not(a) => (ExKind::Not(Box::new(self.expr(a).0)), DataType::bool()),
            TirExprKind::Select { cond, then_value, else_value } => {
                let c = self.expr(cond).0;
                let ((a, da), (b, db)) = (self.expr(then_value), self.expr(else_value));
                (ExKind::Select(Box::new([c, a, b])), promote(da, db))
            }
            TirExprKind::Cast { dtype, value } => (ExKind::Cast(*dtype, Box::new(self.expr(value).0)), *dtype),
            TirExprKind::BufferLoad { buffer, indices } => {
                let kind = ExKind::Load { buf: self.buf(buffer), dt: buffer.dtype(), indices: self.exprs(indices) };
                (kind, buffer.dtype())
            }
            TirExprKind::Call { op, args } => self.call(*op, args),
        };
        (Ex { kind, span: e.span }, dt)
    }

    fn call(&mut self, op: Intrinsic, args: &[TirExpr]) -> (ExKind, DataType) {
        match (op, args) {
            (Intrinsic::IfThenElse, [c, a, b]) => {
                let c = self.expr(c).0;
                let ((a, da), (b, db)) = (self.expr(a), self.expr(b));
                (ExKind::IfThenElse(Box::new([c, a, b]), [db, da]), promote(da, db))
            }
            (Intrinsic::Pow, [a, b]) => {
                let ((a, da), (b, db)) = (self.expr(a), self.expr(b));
                (ExKind::Pow(Box::new([a, b])), promote(da, db))
            }
            (op, [a, b]) if op.is_bitwise_binary() => {
                let ((a, da), (b, db)) = (self.expr(a), self.expr(b));
                (ExKind::Bits(op, Box::new([a, b])), promote(da, db))
            }
            (op, _) if op.arity() != 1 => {
                let f = Fault::op(format!("T.{} takes {} arguments, {} given", op.name(), op.arity(), args.len()));
                (ExKind::Fail(*f), DataType::void())
            }
            (_, [a]) => {
                let (a, da) = self.expr(a);
                (ExKind::Unary(op, Box::new(a)), da)
            }
            _ => {
                let f = Fault::op(format!("T.{} takes one argument, {} given", op.name(), args.len()));
                // The first argument's dtype, as for a call of the right arity.
                let dt = args.first().map_or(DataType::void(), |a| self.expr(a).1);
                (ExKind::Fail(*f), dt)
            }
        }
    }
}

/// Every statement, nested ones included.
pub fn walk<'s>(ss: &'s [St], f: &mut dyn FnMut(&'s St)) {
    for s in ss {
        f(s);
        match &s.kind {
            StKind::For { body, .. } => walk(body, f),
            StKind::If { then, other, .. } => {
                walk(then, f);
                walk(other, f);
            }
            StKind::Block(b) => {
                if let Some(i) = &b.init {
                    walk(i, f);
                }
                walk(&b.body, f);
            }
            _ => {}
        }
    }
}

/// The variable slots statements bind (loop variables, lets, block axes).
pub fn assigned(ss: &[St]) -> HashSet<Slot> {
    let mut out = HashSet::new();
    walk(ss, &mut |s| match &s.kind {
        StKind::For { var, .. } | StKind::Let { var, .. } => {
            out.insert(*var);
        }
        StKind::Block(b) => out.extend(b.axes.iter().map(|a| a.var)),
        _ => {}
    });
    out
}

fn literal(v: Result<Val, Box<Fault>>) -> ExKind {
    match v {
        Ok(v) => ExKind::Const(v),
        Err(f) => ExKind::Fail(*f),
    }
}
