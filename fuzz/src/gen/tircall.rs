//! `R.call_tir` sites: the Relax side of the kernels of [`super::tir`]. Each site
//! chooses a kernel shape, the argument and result shapes in Relax dimensions (reusing
//! operands in scope where they fit), asks the kernel builder for the PrimFunc, and
//! writes the call with `out_sinfo` (and `tir_vars` for scalar parameters).
//!
//! Arguments of the narrow dtypes (`float16`, `int8`, `uint8`) are `R.astype` of a
//! wider tensor, and a narrow result is converted back with `R.astype`, so that no
//! tensor of those dtypes is bound (the rest of the generator does not make them).
//! The global's name says the kernel's shape (`tir_bcast3`, `tir_pool7`, ...), which
//! the statistics count.

use super::exprs::{call, dtype_attr, no};
use super::tir::pool::Window;
use super::tir::{
    self, kernels, EdgeKind, Ext, Kernel, KernelKind, Operand, ScalarArg, BOOL, F16, F32, F64, I32, I64, I8, NARROW, U8,
};
use super::ty::{Dim, Ty, NUMERIC};
use super::{Gen, Scope};
use spec_model::grammar::{BaseFunc, DataType, Expr, ExprKind, GlobalVar, PrimBinOp, PrimExpr};
use spec_model::ops::Op;
use spec_model::Span;
use std::rc::Rc;

const S: Span = Span::SYNTHETIC;

/// The kernel shapes, with the stem of their globals' names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Simple,
    Bcast,
    Tail,
    Reduce,
    Matmul,
    Pool,
    Transpose,
    Edge,
    /// An `Overflow` edge kernel near the dtype's bound (`tir::edge_kernel`'s `NearBound`).
    Bound,
    Oob,
}

/// The stem of a kernel's global name for each shape (what `fuzz-smoke` counts).
pub const KERNEL_STEMS: [&str; 14] = [
    "tir_k",
    "tir_partial",
    "tir_bcast",
    "tir_tail",
    "tir_reduce",
    "tir_matmul",
    "tir_pool",
    "tir_transpose",
    "tir_divzero",
    "tir_mindiv",
    "tir_overflow",
    "tir_nearbound",
    "tir_castrange",
    "tir_oob",
];

/// Extents of plain loops: mostly not multiples of 4 or 8 (a vector loop's scalar tail).
const TAILS: [i64; 14] = [1, 3, 5, 6, 7, 9, 11, 13, 15, 17, 19, 23, 31, 33];
const LARGE_TAILS: [i64; 8] = [63, 65, 100, 127, 129, 255, 257, 1000];

/// The Relax dimensions of one call, numbered for the kernel (equal dimensions share an id).
#[derive(Default)]
struct DimPool {
    dims: Vec<Dim>,
}

impl DimPool {
    fn ext(&mut self, d: &Dim) -> Ext {
        let id = match self.dims.iter().position(|x| x.same(d)) {
            Some(i) => i,
            None => {
                self.dims.push(d.clone());
                self.dims.len() - 1
            }
        };
        Ext { id, lit: d.as_lit(), hi: d.hi.max(1) }
    }
    fn op(&mut self, dims: &[Dim], dtype: DataType) -> Operand {
        Operand { dims: dims.iter().map(|d| self.ext(d)).collect(), dtype }
    }
    fn dim(&self, e: &Ext) -> Dim {
        self.dims.get(e.id).cloned().unwrap_or_else(|| Dim::lit(e.lit.unwrap_or(1)))
    }
}

/// The dtype a narrow tensor is made from and converted back to.
fn wide(d: DataType) -> DataType {
    match d {
        _ if d == F16 => F32,
        _ if NARROW.contains(&d) => I32,
        _ => d,
    }
}

impl<'a> Gen<'a, '_> {
    /// `R.call_tir` of a generated kernel of a random shape.
    pub(super) fn call_tir(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let mut shapes = vec![
            (Shape::Bcast, 5),
            (Shape::Simple, 3),
            (Shape::Tail, 4),
            (Shape::Reduce, 4),
            (Shape::Matmul, 3),
            (Shape::Pool, 3),
            (Shape::Transpose, 3),
            (Shape::Edge, 4),
            (Shape::Bound, 4),
        ];
        if self.cfg.features.tir_oob {
            shapes.push((Shape::Oob, 3));
        }
        let total: usize = shapes.iter().map(|s| s.1).sum();
        let mut k = self.rotate(total);
        let mut shape = Shape::Bcast;
        for (s, w) in shapes {
            if k < w {
                shape = s;
                break;
            }
            k -= w;
        }
        let got = match shape {
            Shape::Simple => None,
            Shape::Bcast => self.tir_bcast(sc),
            Shape::Tail => self.tir_tail(sc),
            Shape::Reduce => self.tir_reduce(sc),
            Shape::Matmul => self.tir_matmul(sc),
            Shape::Pool => self.tir_pool(sc),
            Shape::Transpose => self.tir_transpose(sc),
            Shape::Edge => self.tir_edge(sc, None),
            Shape::Bound => self.tir_edge(sc, Some(EdgeKind::NearBound)),
            Shape::Oob => self.tir_oob(sc),
        };
        got.or_else(|| self.tir_simple(sc))
    }

    /// A number in `0..n`; once the bytes run out (when every choice is the first) it
    /// rotates with the name counter, so that every kernel shape still occurs (and the
    /// program is still a function of the bytes).
    fn rotate(&mut self, n: usize) -> usize {
        if self.u.is_empty() {
            self.next_name % n.max(1)
        } else {
            self.pick(n)
        }
    }

    /// An argument of `dims` and `dtype`: a narrow dtype through `R.astype`.
    fn tir_arg(&mut self, dims: &[Dim], dtype: DataType, sc: &Scope) -> Expr {
        let w = wide(dtype);
        let e = self.arg_of(&Ty::tensor(dims.to_vec(), w), sc);
        if w == dtype {
            e
        } else {
            call(Expr::op(Op::Astype), vec![e], Vec::new(), dtype_attr("dtype", dtype))
        }
    }

    /// Registers the kernel and writes the call (a narrow result converted back).
    fn tir_call(&mut self, stem: &str, k: Kernel, pool: &DimPool, args: Vec<Expr>, out: &Operand) -> (Expr, Ty) {
        let name = self.name(stem);
        let mut func = k.func;
        func.attrs.insert("global_symbol", spec_model::grammar::AttrValue::Str(name.clone()));
        let dims: Vec<Dim> = out.dims.iter().map(|e| pool.dim(e)).collect();
        let ty = Ty::tensor(dims.clone(), out.dtype);
        let values: Vec<PrimExpr> = k
            .scalars
            .iter()
            .map(|s| match s {
                ScalarArg::Dim(e, 0) => pool.dim(e).e,
                ScalarArg::Dim(e, c) => spec_model::ops::dim_op(PrimBinOp::Add, &pool.dim(e).e, &PrimExpr::int(*c)),
                ScalarArg::Lit(v) => PrimExpr::int(*v),
            })
            .collect();
        // TVM 0.27's form: literal scalars as PrimValues among the arguments, the
        // PrimFunc's scalar parameters moved to their positions (after the inputs).
        let as_prims = !values.is_empty() && values.iter().all(|v| v.as_int().is_some()) && self.chance(1, 2);
        let mut args = args;
        if as_prims {
            let is_scalar = |p: &spec_model::grammar::tir::TirParam| {
                p.buffer.is_none() && p.var.dtype() != spec_model::grammar::DataType::handle()
            };
            let (scalars, buffers): (Vec<_>, Vec<_>) = func.params.drain(..).partition(is_scalar);
            let n_in = args.len().min(buffers.len());
            func.params =
                buffers[..n_in].iter().cloned().chain(scalars).chain(buffers[n_in..].iter().cloned()).collect();
            args.extend(values.iter().map(|v| Expr::new(ExprKind::PrimValue(v.clone()), S)));
        }
        let callee = Expr::new(ExprKind::GlobalVar(GlobalVar::new(name.clone())), S);
        let mut call_args = vec![callee, Expr::new(ExprKind::Tuple(args), S)];
        if !values.is_empty() && !as_prims {
            call_args.push(Expr::new(ExprKind::ShapeExpr(values), S));
        }
        self.functions.push((GlobalVar::new(name), BaseFunc::Tir(Rc::new(func))));
        let e = call(Expr::op(Op::CallTir), call_args, vec![ty.to_sinfo()], no());
        let w = wide(out.dtype);
        if w == out.dtype {
            (e, ty)
        } else {
            let back = call(Expr::op(Op::Astype), vec![e], Vec::new(), dtype_attr("dtype", w));
            (back, Ty::tensor(dims, w))
        }
    }

    /// The first kernel family ([`tir::gen_prim_func`]) over inputs of one shape.
    fn tir_simple(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let (x, xd, dt) = self.operand(sc, |d| !d.is_bool(), F32, 0);
        if xd.len() > 3 {
            return None;
        }
        let kind = if !xd.is_empty() && self.chance(1, 3) { KernelKind::ReduceLast } else { KernelKind::Elementwise };
        let mut dtypes = vec![dt];
        let mut args = vec![x];
        for _ in 0..self.pick(3) {
            let d = self.choose(&NUMERIC)?;
            args.push(self.arg_of(&Ty::tensor(xd.clone(), d), sc));
            dtypes.push(d);
        }
        let out_dt = self.choose(&NUMERIC)?;
        // Now and then a kernel that leaves part of its output as allocated (zeros).
        let (name, f) = if !xd.is_empty() && self.chance(1, 3) {
            let name = self.name("tir_partial");
            let f = tir::gen_kernel(self.u, &name, kind, xd.len(), &dtypes, out_dt, true);
            (name, f)
        } else {
            let name = self.name("tir_k");
            (name.clone(), tir::gen_prim_func(self.u, &name, kind, xd.len(), &dtypes, out_dt))
        };
        self.functions.push((GlobalVar::new(name.clone()), BaseFunc::Tir(Rc::new(f))));
        let out = match kind {
            KernelKind::Elementwise => xd,
            KernelKind::ReduceLast => xd[..xd.len() - 1].to_vec(),
        };
        let ty = Ty::tensor(out, out_dt);
        let callee = Expr::new(ExprKind::GlobalVar(GlobalVar::new(name)), S);
        let tuple = Expr::new(ExprKind::Tuple(args), S);
        Some((call(Expr::op(Op::CallTir), vec![callee, tuple], vec![ty.to_sinfo()], no()), ty))
    }

    /// A narrow dtype now and then, else one of `wide_choices`.
    fn kernel_dtype(&mut self, wide_choices: &[DataType], narrow: &[DataType]) -> Option<DataType> {
        if !narrow.is_empty() && self.chance(1, 6) {
            self.choose(narrow)
        } else {
            self.choose(wide_choices)
        }
    }

    /// Elementwise with broadcasting: the output's shape from an operand (sometimes with
    /// a new leading dimension), each other input a suffix of it with some 1s.
    fn tir_bcast(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let (x, xd, dt) = self.operand(sc, |_| true, F32, 0);
        let mut out = xd.clone();
        if out.len() < self.cfg.max_rank.min(4) && self.chance(1, 3) {
            let d = self.new_dim(sc);
            out.insert(0, d);
            if !self.fits(&out) {
                out.remove(0);
            }
        }
        if out.len() > 4 {
            return None;
        }
        let all = [F32, F64, I32, I64, BOOL];
        let narrow = self.chance(1, 6);
        let in_dt = if narrow { self.choose(&NARROW)? } else { dt };
        let mut pool = DimPool::default();
        let mut ins = Vec::new();
        let mut args = Vec::new();
        // The operand itself (unless narrow), as its own shape: a suffix of the output's.
        if narrow {
            args.push(self.tir_arg(&xd, in_dt, sc));
        } else {
            args.push(x);
        }
        ins.push(pool.op(&xd, in_dt));
        for _ in 0..self.pick(3) {
            let start = self.pick(out.len() + 1);
            let dims: Vec<Dim> =
                out[start..].iter().map(|d| if self.chance(1, 3) { Dim::lit(1) } else { d.clone() }).collect();
            let d = if narrow || self.chance(2, 3) { in_dt } else { self.choose(&all)? };
            args.push(self.tir_arg(&dims, d, sc));
            ins.push(pool.op(&dims, d));
        }
        let out_dt = if narrow && self.chance(1, 2) { in_dt } else { self.choose(&all)? };
        let out_op = pool.op(&out, out_dt);
        let name_hint = "tir_bcast";
        let k = kernels::ewise(self.u, name_hint, &ins, &out_op, false);
        Some(self.tir_call(name_hint, k, &pool, args, &out_op))
    }

    /// Plain unit-stride loops whose extents are mostly not multiples of 4 or 8.
    fn tir_tail(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let rank = 1 + self.pick(3.min(self.cfg.max_rank.max(1)));
        let mut dims: Vec<Dim> = Vec::new();
        for k in 0..rank {
            let d = if k + 1 == rank || self.chance(1, 3) {
                let big = self.cfg.large_tensors && self.chance(1, 2);
                Dim::lit(if big { self.choose(&LARGE_TAILS)? } else { self.choose(&TAILS)? })
            } else {
                self.new_dim(sc)
            };
            dims.push(d);
        }
        while !dims.is_empty() && !self.fits(&dims) {
            dims.remove(0);
        }
        if dims.is_empty() {
            dims.push(Dim::lit(self.choose(&TAILS[..6])?));
        }
        let d = self.kernel_dtype(&[F32, F64, I32, F32, F64, I32, I64], &NARROW)?;
        let mut pool = DimPool::default();
        let mut ins = Vec::new();
        let mut args = Vec::new();
        for _ in 0..1 + self.pick(2) {
            args.push(self.tir_arg(&dims, d, sc));
            ins.push(pool.op(&dims, d));
        }
        let out = pool.op(&dims, d);
        let k = kernels::ewise(self.u, "tir_tail", &ins, &out, true);
        Some(self.tir_call("tir_tail", k, &pool, args, &out))
    }

    /// A reduction over some axes of an operand, keepdims or not.
    fn tir_reduce(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let (x, xd, dt) = self.operand(sc, |_| true, F32, 1);
        if xd.len() > 4 {
            return None;
        }
        let narrow = self.chance(1, 8);
        let in_dt = if narrow { self.choose(&NARROW)? } else { dt };
        let r = xd.len();
        let mut axes: Vec<usize> = (0..r).filter(|_| self.chance(1, 2)).collect();
        if axes.is_empty() {
            axes.push(self.pick(r));
        }
        let keepdims = self.chance(1, 3);
        let out_dt = match self.pick(4) {
            0 if in_dt.is_float() => self.choose(&[F32, F64])?,
            0 => self.choose(&[I64, F32])?,
            _ => in_dt,
        };
        let mut pool = DimPool::default();
        let arg = if narrow { self.tir_arg(&xd, in_dt, sc) } else { x };
        let input = pool.op(&xd, in_dt);
        let out: Vec<Ext> = (0..r)
            .filter_map(|i| match (axes.contains(&i), keepdims) {
                (false, _) => Some(input.dims[i]),
                (true, true) => Some(pool.ext(&Dim::lit(1))),
                (true, false) => None,
            })
            .collect();
        let out_op = Operand { dims: out, dtype: out_dt };
        let k = kernels::reduce(self.u, "tir_reduce", &input, &axes, keepdims, out_dt);
        Some(self.tir_call("tir_reduce", k, &pool, vec![arg], &out_op))
    }

    /// A small dimension for matmul and pooling: the operand's, or a new one.
    fn small_dim(&mut self, sc: &Scope, max: i64) -> Dim {
        let d = self.new_dim(sc);
        if d.hi <= max {
            d
        } else {
            Dim::lit(self.range(1, max.min(8)))
        }
    }

    /// `[b, m, k] x [b, k, n]` or `[.., m, k] x [k, n]`, small.
    fn tir_matmul(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let ok = |d: DataType| d == F32 || d == F64 || d == I32 || d == I64;
        let (x, xd, dt) = self.operand(sc, ok, F32, 2);
        let (x, xd) = if xd.len() <= 3 && xd.iter().all(|d| d.hi <= 16) {
            (x, xd)
        } else {
            let mut dims: Vec<Dim> = (0..2).map(|_| self.small_dim(sc, 16)).collect();
            if self.chance(1, 3) {
                dims.insert(0, self.small_dim(sc, 4));
            }
            (self.arg_of(&Ty::tensor(dims.clone(), dt), sc), dims)
        };
        let r = xd.len();
        let n = self.small_dim(sc, 16);
        let mut yd = if r == 3 && self.chance(1, 2) { vec![xd[0].clone()] } else { Vec::new() };
        yd.extend([xd[r - 1].clone(), n]);
        let work = Ty::elems(&xd).saturating_mul(yd[yd.len() - 1].hi as u64);
        if work > 4096 || !self.fits(&yd) {
            return None;
        }
        let y = self.arg_of(&Ty::tensor(yd.clone(), dt), sc);
        let mut pool = DimPool::default();
        let (a, b) = (pool.op(&xd, dt), pool.op(&yd, dt));
        let mut out = a.dims[..r - 1].to_vec();
        out.push(b.dims[b.dims.len() - 1]);
        let out = Operand { dims: out, dtype: dt };
        let k = kernels::matmul(self.u, "tir_matmul", &a, &b);
        Some(self.tir_call("tir_matmul", k, &pool, vec![x, y], &out))
    }

    /// A transpose of an operand of rank 2 to 4 (legalized `permute_dims`): the last
    /// two axes swapped, the axes rotated, or shuffled.
    fn tir_transpose(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let (x, xd, dt) = self.operand(sc, |_| true, F32, 2);
        let r = xd.len();
        if !(2..=4).contains(&r) {
            return None;
        }
        let mut perm: Vec<usize> = (0..r).collect();
        match self.pick(3) {
            0 => perm.swap(r - 2, r - 1),
            1 => perm.rotate_left(1),
            _ => {
                for k in (1..r).rev() {
                    let j = self.pick(k + 1);
                    perm.swap(k, j);
                }
            }
        }
        let out_dt = if self.chance(1, 4) { self.choose(&[F32, F64, I32, I64])? } else { dt };
        let mut pool = DimPool::default();
        let input = pool.op(&xd, dt);
        let out = Operand { dims: perm.iter().map(|&p| input.dims[p]).collect(), dtype: out_dt };
        let k = kernels::transpose(self.u, "tir_transpose", &input, &perm, out_dt);
        Some(self.tir_call("tir_transpose", k, &pool, vec![x], &out))
    }

    /// Max or average pooling over `[N, C, H, W]` with literal `H`, `W`.
    fn tir_pool(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let d = self.choose(&[F32, F64, I32, I64, F32])?;
        let n = self.small_dim(sc, 3);
        let c = if self.chance(1, 2) { self.small_dim(sc, 4) } else { Dim::lit(self.range(1, 3)) };
        let hmax = if self.cfg.large_tensors { 16 } else { 8 };
        let (h, w) = (self.range(2, hmax), self.range(2, hmax));
        let (kh, kw) = (self.range(1, 3), self.range(1, 3));
        let win = Window {
            kh,
            kw,
            sh: self.range(1, 2),
            sw: self.range(1, 2),
            ph: self.range(0, (kh - 1).min(1)),
            pw: self.range(0, (kw - 1).min(1)),
        };
        let (oh, ow) = win.out(h, w)?;
        let xd = vec![n.clone(), c.clone(), Dim::lit(h), Dim::lit(w)];
        let od = vec![n, c, Dim::lit(oh), Dim::lit(ow)];
        let work = Ty::elems(&od).saturating_mul((kh * kw) as u64);
        if !self.fits(&xd) || work > 4096 {
            return None;
        }
        let arg = self.arg_of(&Ty::tensor(xd.clone(), d), sc);
        let mut pool = DimPool::default();
        let (x, out) = (pool.op(&xd, d), pool.op(&od, d));
        let k = tir::pool::pool2d(self.u, "tir_pool", &x, &out, win);
        Some(self.tir_call("tir_pool", k, &pool, vec![arg], &out))
    }

    /// Dimensions for an elementwise kernel: an operand's (rank at least `min_rank`,
    /// at most 3), or new ones.
    fn kernel_dims(&mut self, sc: &Scope, min_rank: usize) -> Vec<Dim> {
        let fit = sc.vars_where(|t| matches!(t.as_tensor(), Some((ds, _)) if (min_rank..=3).contains(&ds.len())));
        if let Some((_, Ty::Tensor { dims, .. })) = self.choose(&fit) {
            if self.chance(3, 4) {
                return dims;
            }
        }
        let rank = min_rank + self.pick(3 - min_rank.min(2));
        let mut dims = self.new_dims(sc, rank);
        while dims.len() < min_rank {
            dims.push(Dim::lit(self.range(1, 3)));
        }
        dims
    }

    /// An integer kernel that may divide by zero or overflow on purpose (of `kind`, else
    /// of a kind in turn).
    fn tir_edge(&mut self, sc: &Scope, kind: Option<EdgeKind>) -> Option<(Expr, Ty)> {
        let kinds = [EdgeKind::DivZero, EdgeKind::MinDiv, EdgeKind::Overflow, EdgeKind::CastRange];
        let kind = kind.unwrap_or_else(|| kinds[self.rotate(kinds.len())]);
        let dims = self.kernel_dims(sc, 0);
        let (ins, out): (Vec<DataType>, DataType) = match kind {
            EdgeKind::DivZero | EdgeKind::MinDiv => {
                let d = self.choose(&[I32, I64, I8, I32])?;
                (vec![d, d], d)
            }
            EdgeKind::Overflow | EdgeKind::NearBound => {
                let d = self.choose(&[I32, I8, U8, I64, I32])?;
                (vec![d], d)
            }
            EdgeKind::CastRange => (vec![self.choose(&[F32, F64, F16])?], self.choose(&[I32, I8, U8, I64])?),
        };
        let mut pool = DimPool::default();
        let args: Vec<Expr> = ins.iter().map(|&d| self.tir_arg(&dims, d, sc)).collect();
        let ops: Vec<Operand> = ins.iter().map(|&d| pool.op(&dims, d)).collect();
        let out = pool.op(&dims, out);
        let stem = match kind {
            EdgeKind::DivZero => "tir_divzero",
            EdgeKind::MinDiv => "tir_mindiv",
            EdgeKind::Overflow => "tir_overflow",
            EdgeKind::NearBound => "tir_nearbound",
            EdgeKind::CastRange => "tir_castrange",
        };
        let k = tir::edge_kernel(self.u, stem, kind, &ops, &out);
        Some(self.tir_call(stem, k, &pool, args, &out))
    }

    /// A kernel with an out-of-bounds access (`Features::tir_oob`).
    fn tir_oob(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let dims = self.kernel_dims(sc, 1);
        let d = self.choose(&[F32, F64, I32, I64, BOOL])?;
        let out_dt = if self.chance(1, 2) { d } else { self.choose(&NUMERIC)? };
        let mut pool = DimPool::default();
        let mut args = Vec::new();
        let mut ins = Vec::new();
        for _ in 0..1 + self.pick(2) {
            args.push(self.tir_arg(&dims, d, sc));
            ins.push(pool.op(&dims, d));
        }
        let out = pool.op(&dims, out_dt);
        let k = tir::oob_kernel(self.u, "tir_oob", &ins, &out);
        Some(self.tir_call("tir_oob", k, &pool, args, &out))
    }
}

/// The `R.call_tir` call of a site: the expression itself, or under the `R.astype` of a
/// narrow result.
fn call_tir_site(e: &mut Expr) -> Option<&mut spec_model::grammar::Call> {
    let is =
        |c: &spec_model::grammar::Call, op: Op| matches!(&c.op.kind, ExprKind::Op(o) if o.registered() == Some(op));
    let top = matches!(&e.kind, ExprKind::Call(c) if is(c, Op::CallTir));
    let ExprKind::Call(c) = &mut e.kind else { return None };
    if top {
        return Some(c);
    }
    match c.args.first_mut().map(|a| &mut a.kind) {
        Some(ExprKind::Call(inner)) if is(inner, Op::CallTir) => Some(inner),
        _ => None,
    }
}

impl Gen<'_, '_> {
    /// `R.call_tir_inplace` and `R.call_tir_with_grad`: a generated `R.call_tir` site
    /// rewritten. In place: a new argument of the output's StructInfo goes into the
    /// argument tuple at a random position `p`, the PrimFunc's output buffer moves to
    /// that parameter position (the parameters are the arguments in order, then the
    /// fresh outputs, then `tir_vars`), and `inplace_indices=[p]`; the output starts with
    /// the argument's contents instead of zeros. With a gradient: the same call with a
    /// `te_grad_name` and, now and then, `te_grad_kwargs`.
    pub(super) fn call_tir_variant(&mut self, which: Op, sc: &Scope) -> Option<(Expr, Ty)> {
        let (mut e, ty) = self.call_tir(sc)?;
        let Ty::Tensor { dims, .. } = &ty else { return None };
        let dims = dims.clone();
        let out_dtype = {
            let c = call_tir_site(&mut e)?;
            match c.sinfo_args.first().map(|s| &*s.kind) {
                Some(spec_model::grammar::StructInfoKind::Tensor { dtype, .. }) => *dtype,
                _ => return None,
            }
        };
        match which {
            Op::CallTirInplace => {
                let arg = self.tir_arg(&dims, out_dtype, sc);
                let n = {
                    let c = call_tir_site(&mut e)?;
                    let Some(ExprKind::Tuple(xs)) = c.args.get(1).map(|a| &a.kind) else { return None };
                    xs.len()
                };
                let p = self.pick(n + 1);
                let c = call_tir_site(&mut e)?;
                let ExprKind::GlobalVar(gv) = &c.args[0].kind else { return None };
                let name = gv.name.clone();
                let (_, BaseFunc::Tir(f)) = self.functions.iter_mut().rev().find(|(g, _)| g.name == name)? else {
                    return None;
                };
                let f = Rc::make_mut(f);
                if f.params.len() <= n {
                    return None;
                }
                let out = f.params.remove(n);
                f.params.insert(p, out);
                let Some(ExprKind::Tuple(xs)) = c.args.get_mut(1).map(|a| &mut a.kind) else { return None };
                xs.insert(p, arg);
                c.op = Expr::op(Op::CallTirInplace);
                let ix = spec_model::grammar::AttrValue::List(vec![spec_model::grammar::AttrValue::Int(p as i64)]);
                c.attrs.insert("inplace_indices", ix);
            }
            _ => {
                use spec_model::grammar::AttrValue;
                let grad = format!("{}_grad", self.name("te"));
                let kwargs = if self.chance(1, 2) {
                    let mut m = std::collections::BTreeMap::new();
                    m.insert("k".to_string(), AttrValue::Float(spec_model::grammar::FloatLit(2.0)));
                    if self.chance(1, 2) {
                        m.insert("axes".to_string(), AttrValue::List(vec![AttrValue::Int(0), AttrValue::Int(-1)]));
                    }
                    Some(AttrValue::Dict(m))
                } else {
                    None
                };
                let c = call_tir_site(&mut e)?;
                c.op = Expr::op(Op::CallTirWithGrad);
                c.attrs.insert("te_grad_name", AttrValue::Str(grad));
                if let Some(k) = kwargs {
                    c.attrs.insert("te_grad_kwargs", k);
                }
            }
        }
        Some((e, ty))
    }
}
