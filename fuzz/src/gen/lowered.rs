//! Calls of the lowered-memory operators (issue 19): `builtin.alloc_tensor`, planned
//! storages and the tensors placed in them (`memory.*`, `vm.*`), the kills,
//! `vm.call_tir_dyn` (a generated `call_tir` rewritten to its lowered form) and
//! `call_builtin_with_ctx`. The allocations are pure; the rest only where impure calls
//! are allowed (the caller filters on the table's purity).

use super::exprs::{call, no};
use super::ty::{shape_expr, Dim, Ty, NUMERIC};
use super::{Gen, Scope};
use spec_model::grammar::{DataType, Expr, ExprKind, PrimBinOp, PrimExpr, StructInfoKind};
use spec_model::ops::{dim_op, Op};
use spec_model::Span;

const S: Span = Span::SYNTHETIC;

fn prim(v: i64) -> Expr {
    Expr::new(ExprKind::PrimValue(PrimExpr::int(v)), S)
}

fn dtype(d: DataType) -> Expr {
    Expr::new(ExprKind::DataTypeImm(d), S)
}

fn string(s: &str) -> Expr {
    Expr::new(ExprKind::StringImm(s.into()), S)
}

fn extern_(s: &str) -> Expr {
    Expr::new(ExprKind::ExternFunc { global_symbol: s.into() }, S)
}

/// The dtypes allocated: the numeric ones, and now and then a narrow one or bool.
const EXTRA: [DataType; 3] = [DataType::uint(8), DataType::float(16), DataType::BOOL];

/// Bytes per element as the lowered-memory rules count them (E-16).
fn width(d: DataType) -> i64 {
    if d.is_bool() {
        1
    } else {
        (i64::from(d.bits) * i64::from(d.lanes) + 7) / 8
    }
}

impl Gen<'_, '_> {
    fn alloc_dtype(&mut self) -> DataType {
        if self.chance(1, 5) {
            self.choose(&EXTRA).unwrap_or(DataType::FLOAT32)
        } else {
            self.choose(&NUMERIC).unwrap_or(DataType::FLOAT32)
        }
    }

    /// Dimensions for a new tensor (within the generator's size bound).
    fn alloc_dims(&mut self, sc: &Scope) -> Vec<Dim> {
        let rank = self.pick(4);
        let dims = self.new_dims(sc, rank);
        if self.fits(&dims) {
            dims
        } else {
            vec![Dim::lit(2)]
        }
    }

    /// A storage allocation of `bytes` bytes (`memory.` or `vm.alloc_storage`).
    fn storage_of(&mut self, bytes: PrimExpr, vm: bool) -> Expr {
        let size = Expr::new(ExprKind::ShapeExpr(vec![bytes]), S);
        let st = if self.chance(1, 2) { DataType::uint(8) } else { DataType::FLOAT32 };
        if vm {
            call(Expr::op(Op::VmAllocStorage), vec![size, prim(0), dtype(st), string("global")], Vec::new(), no())
        } else {
            call(Expr::op(Op::MemoryAllocStorage), vec![size, prim(0), string("global"), dtype(st)], Vec::new(), no())
        }
    }

    /// A tensor placed in a fresh storage that (nearly always) holds it.
    fn on_storage(&mut self, sc: &Scope, which: Op) -> (Expr, Ty) {
        let (dims, dt) = (self.alloc_dims(sc), self.alloc_dtype());
        let offset = [0, 4, 8, 16][self.pick(4)];
        let elems = dims.iter().fold(PrimExpr::int(width(dt)), |acc, d| dim_op(PrimBinOp::Mul, &acc, &d.e));
        let slack = match self.pick(16) {
            0 => -1, // one byte short: the run-time fit check fails (OpError)
            1 => 0,
            _ => self.pick(9) as i64,
        };
        let bytes = dim_op(PrimBinOp::Add, &elems, &PrimExpr::int(offset + slack));
        let storage = self.storage_of(bytes, which == Op::VmAllocTensor);
        let args = vec![storage, prim(offset), shape_expr(&dims), dtype(dt), prim(0)];
        (call(Expr::op(which), args, Vec::new(), no()), Ty::tensor(dims, dt))
    }

    /// A call of a lowered-memory operator, or `None` when it has no operands here.
    pub(super) fn lowered_call(&mut self, op: Op, sc: &Scope) -> Option<(Expr, Ty)> {
        let unit = Ty::Tuple(Vec::new());
        Some(match op {
            Op::BuiltinAllocTensor => {
                let (dims, dt) = (self.alloc_dims(sc), self.alloc_dtype());
                let args = vec![shape_expr(&dims), dtype(dt), prim(0), string("global")];
                (call(Expr::op(op), args, Vec::new(), no()), Ty::tensor(dims, dt))
            }
            Op::MemoryAllocStorage | Op::VmAllocStorage => {
                let bytes = PrimExpr::int(self.pick(65) as i64);
                (self.storage_of(bytes, op == Op::VmAllocStorage), Ty::Object)
            }
            Op::MemoryAllocTensor | Op::VmAllocTensor => self.on_storage(sc, op),
            Op::MemoryKillStorage => {
                let objects = sc.vars_where(|t| matches!(t, Ty::Object));
                let st = match self.choose(&objects) {
                    Some((v, _)) if self.chance(1, 2) => Expr::var(&v),
                    _ => {
                        let bytes = PrimExpr::int(self.pick(33) as i64);
                        self.storage_of(bytes, false)
                    }
                };
                (call(Expr::op(op), vec![st], Vec::new(), no()), unit)
            }
            Op::MemoryKillTensor => {
                let (x, _, _) = self.operand(sc, |_| true, DataType::FLOAT32, 0);
                (call(Expr::op(op), vec![x], Vec::new(), no()), unit)
            }
            Op::VmKillObject => {
                let vals = sc.vars_where(|t| !matches!(t, Ty::Func { .. }));
                let x = match self.choose(&vals) {
                    Some((v, _)) => Expr::var(&v),
                    None => self.operand(sc, |_| true, DataType::FLOAT32, 0).0,
                };
                (call(Expr::op(op), vec![x], Vec::new(), no()), unit)
            }
            Op::VmCallTirDyn => return self.call_tir_dyn(sc),
            Op::CallBuiltinWithCtx => {
                if self.chance(1, 2) {
                    let (x, xd, dt) = self.operand(sc, |_| true, DataType::FLOAT32, 0);
                    let ty = Ty::tensor(xd, dt);
                    let args = vec![extern_("vm.builtin.copy"), Expr::new(ExprKind::Tuple(vec![x]), S)];
                    (call(Expr::op(op), args, vec![ty.to_sinfo()], no()), ty)
                } else {
                    let size = Expr::new(ExprKind::ShapeExpr(vec![PrimExpr::int(self.pick(65) as i64)]), S);
                    let fields = vec![size, prim(0), dtype(DataType::uint(8))];
                    let args = vec![extern_("vm.builtin.alloc_storage"), Expr::new(ExprKind::Tuple(fields), S)];
                    (call(Expr::op(op), args, vec![Ty::Object.to_sinfo()], no()), Ty::Object)
                }
            }
            _ => return None,
        })
    }

    /// A generated `call_tir` in its lowered form: the outputs allocated with
    /// `builtin.alloc_tensor`, the PrimFunc called by `vm.call_tir_dyn` with the scalar
    /// arguments (PrimValues, then `tir_vars`) as the trailing shape. The result is `()`.
    fn call_tir_dyn(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let (mut e, _) = self.call_tir(sc)?;
        // A narrow result comes back converted (`astype(call_tir(..))`): the call inside.
        loop {
            let ExprKind::Call(c) = &e.kind else { return None };
            match &c.op.kind {
                ExprKind::Op(o) if o.registered() == Some(Op::Astype) => e = c.args.first()?.clone(),
                ExprKind::Op(o) if o.registered() == Some(Op::CallTir) => break,
                _ => return None,
            }
        }
        let ExprKind::Call(c) = &e.kind else { return None };
        let callee = c.args.first()?.clone();
        let ExprKind::Tuple(fields) = &c.args.get(1)?.kind else { return None };
        let (mut tensors, mut scalars) = (Vec::new(), Vec::new());
        for f in fields {
            match &f.kind {
                ExprKind::PrimValue(p) => scalars.push(p.clone()),
                _ => tensors.push(f.clone()),
            }
        }
        if let Some(ExprKind::ShapeExpr(vs)) = c.args.get(2).map(|a| &a.kind) {
            scalars.extend(vs.iter().cloned());
        }
        let out = c.sinfo_args.first()?;
        let outs = match &*out.kind {
            StructInfoKind::Tuple { fields } => fields.clone(),
            _ => vec![out.clone()],
        };
        for o in &outs {
            let StructInfoKind::Tensor { shape: Some(shape), dtype: dt, .. } = &*o.kind else { return None };
            let args = vec![shape.clone(), dtype(*dt), prim(0), string("global")];
            tensors.push(call(Expr::op(Op::BuiltinAllocTensor), args, Vec::new(), no()));
        }
        tensors.push(Expr::new(ExprKind::ShapeExpr(scalars), S));
        let args = vec![callee, Expr::new(ExprKind::Tuple(tensors), S)];
        Some((call(Expr::op(Op::VmCallTirDyn), args, Vec::new(), no()), Ty::Tuple(Vec::new())))
    }
}
