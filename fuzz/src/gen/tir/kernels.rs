//! Kernels in the shapes TVM's legalization gives Relax operators: elementwise with
//! broadcasting (and plain loops with vector tails), reductions with `T.init()`, and
//! matmul. The caller chooses the shapes ([`Operand`]s over [`Ext`]s); these choose the
//! spelling (literal or symbolic dimensions, blocks or bare loops) and the bodies.

use super::expr::{Gen, Leaf, MAX_DEPTH, SUM_CAP};
use super::{
    ax_names, axes, bin, block, block_stmt, buffer_param, cast, finish, float_lit, gen, idx, load, max_value,
    min_value, mk, nest, nest_kinds, new_buffer, point, stmt, store, var, zero_one, Dims, Ext, Kernel, Operand,
    ScalarArg, F32, I64, NARROW,
};
use arbitrary::Unstructured;
use spec_model::grammar::tir::{Block, Buffer, ForKind, IterKind, IterVar, StmtKind, TirExpr, TirParam};
use spec_model::grammar::{DataType, PrimBinOp, PrimVar};

/// Lets expressions compute in the narrow dtypes that the operands use.
pub(super) fn allow_narrow(g: &mut Gen, ops: &[&Operand]) {
    for d in NARROW {
        if ops.iter().any(|o| o.dtype == d) && !g.dtypes.contains(&d) {
            g.dtypes.push(d);
        }
    }
}

/// The indices of a broadcast input at the output's `axis` variables: aligned at the
/// end; a dimension that is not the output's (a literal 1) is read at 0.
pub(super) fn bcast_index(input: &[Ext], out: &[Ext], axis: &[TirExpr]) -> Vec<TirExpr> {
    let skip = out.len().saturating_sub(input.len());
    input
        .iter()
        .enumerate()
        .map(|(j, e)| match (out.get(j + skip), axis.get(j + skip)) {
            (Some(o), Some(a)) if o.id == e.id => a.clone(),
            _ => idx(0),
        })
        .collect()
}

/// The input buffers `A0, A1, ...` and the output `Y`.
pub(super) fn io_buffers(dims: &Dims, ins: &[Operand], out: &Operand) -> (Vec<Buffer>, Buffer, Vec<TirParam>) {
    let inputs: Vec<Buffer> =
        ins.iter().enumerate().map(|(k, o)| new_buffer(format!("A{k}"), dims.shape(&o.dims), o.dtype)).collect();
    let y = new_buffer("Y", dims.shape(&out.dims), out.dtype);
    let params = inputs.iter().chain(std::iter::once(&y)).map(buffer_param).collect();
    (inputs, y, params)
}

/// An elementwise kernel: `out` from `ins` broadcast to its shape (each input's
/// dimensions a suffix of `out`'s, some replaced by a literal 1). Written as TVM's
/// legalization does (`T.grid` + one block) or, with `plain`, also as bare loops with
/// stores (some loops `T.vectorized`/`T.unroll`/`T.parallel`, a let, the outer extent
/// sometimes a scalar parameter) or with the innermost axis split by 4 or 8 and a
/// `T.where` tail.
pub fn ewise(u: &mut Unstructured, name: &str, ins: &[Operand], out: &Operand, plain: bool) -> Kernel {
    let mut g = gen(u);
    let ops: Vec<&Operand> = ins.iter().chain(std::iter::once(out)).collect();
    allow_narrow(&mut g, &ops);
    let dims = Dims::new(&mut g, ops.iter().flat_map(|o| o.dims.iter()));
    let (inputs, y, mut params) = io_buffers(&dims, ins, out);
    let rank = out.dims.len();
    let extents = dims.shape(&out.dims);
    let names = ax_names("ax", rank);
    let style = match (plain, g.pick(if plain { 6 } else { 4 })) {
        (true, 0 | 1) | (false, 0) => 1,
        (true, 2 | 3) if rank > 0 => 2,
        _ => 0,
    };
    let depth = [1, 1, 2, MAX_DEPTH][g.pick(4)];
    let mut scalars = Vec::new();
    let body = match style {
        // Bare loops: `Y[i, j] = ...` with the loop variables as indices.
        1 => {
            let loops: Vec<PrimVar> = names.iter().map(|n| PrimVar::new(n.as_str(), I64)).collect();
            let ix: Vec<TirExpr> = loops.iter().map(var).collect();
            g.leaves =
                inputs.iter().zip(ins).map(|(b, o)| Leaf::input(b, &bcast_index(&o.dims, &out.dims, &ix))).collect();
            let mut stmts = Vec::new();
            if g.coin(1, 3) {
                let d = g.dtype(&[F32, out.dtype]);
                let t = PrimVar::new("t", d);
                let ex = g.expr(d, 2);
                stmts.push(stmt(StmtKind::Let { var: t.clone(), value: ex.e }));
                g.leaves.push(Leaf::scalar(var(&t), ex.iv));
            }
            let ex = g.body(out.dtype, depth);
            stmts.push(store(&y, &ix, ex.e));
            let mut kinds = vec![ForKind::Serial; rank];
            if rank > 0 && g.coin(1, 3) {
                kinds[rank - 1] = g.choose(&[ForKind::Vectorized, ForKind::Unroll], ForKind::Serial);
            }
            if rank > 1 && g.coin(1, 4) {
                // A GPU-scheduled kernel binds its outer loop to a thread axis.
                kinds[0] = g.choose(
                    &[ForKind::Parallel, ForKind::ThreadBinding("blockIdx.x"), ForKind::ThreadBinding("threadIdx.x")],
                    ForKind::Parallel,
                );
            }
            let mut ext = extents.clone();
            if plain && rank > 0 && g.coin(1, 3) {
                // The outer extent passed as a scalar (call_tir's tir_vars).
                let s = PrimVar::new("s0", I64);
                params.push(TirParam { var: s.clone(), buffer: None });
                scalars.push(ScalarArg::Dim(out.dims[0], 0));
                ext[0] = var(&s);
            }
            nest_kinds(&loops, &ext, &kinds, stmts)
        }
        // The innermost axis split by a factor, the tail masked with `T.where`.
        2 => {
            let f = g.choose(&[4i64, 8, 4, 3], 4);
            let e = extents[rank - 1].clone();
            let outer = match out.dims[rank - 1].lit {
                Some(v) if matches!(*e.kind, spec_model::grammar::tir::TirExprKind::IntImm { .. }) => {
                    idx((v + f - 1) / f)
                }
                _ => bin(PrimBinOp::FloorDiv, bin(PrimBinOp::Add, e.clone(), idx(f - 1)), idx(f)),
            };
            let mut loop_names = names[..rank - 1].to_vec();
            loop_names.push(format!("ax{}_0", rank - 1));
            loop_names.push(format!("ax{}_1", rank - 1));
            let loops: Vec<PrimVar> = loop_names.iter().map(|n| PrimVar::new(n.as_str(), I64)).collect();
            let mut loop_ext = extents[..rank - 1].to_vec();
            loop_ext.push(outer);
            loop_ext.push(idx(f));
            let fused = bin(PrimBinOp::Add, bin(PrimBinOp::Mul, var(&loops[rank - 1]), idx(f)), var(&loops[rank]));
            let mut ivs: Vec<IterVar> = Vec::new();
            for (k, n) in names.iter().enumerate() {
                let binding = if k + 1 == rank { fused.clone() } else { var(&loops[k]) };
                let v = PrimVar::new(format!("v_{n}"), I64);
                ivs.push(IterVar { var: v, kind: IterKind::Spatial, begin: idx(0), end: extents[k].clone(), binding });
            }
            let ax: Vec<TirExpr> = ivs.iter().map(|iv| var(&iv.var)).collect();
            g.leaves =
                inputs.iter().zip(ins).map(|(b, o)| Leaf::input(b, &bcast_index(&o.dims, &out.dims, &ax))).collect();
            let ex = g.body(out.dtype, depth);
            let reads = g.take_reads();
            let mut b = block("T_split", ivs, reads, vec![point(&y, &ax)], vec![store(&y, &ax, ex.e)]);
            b.predicate = Some(bin(PrimBinOp::Lt, fused, e));
            nest_kinds(&loops, &loop_ext, &[], vec![block_stmt(b)])
        }
        // TVM's legalization: `T.grid` and one block with `T.axis.remap`.
        _ => {
            let (loops, ivs) = axes(&names, &extents, &vec![IterKind::Spatial; rank]);
            let ax: Vec<TirExpr> = ivs.iter().map(|iv| var(&iv.var)).collect();
            g.leaves =
                inputs.iter().zip(ins).map(|(b, o)| Leaf::input(b, &bcast_index(&o.dims, &out.dims, &ax))).collect();
            let ex = g.body(out.dtype, depth);
            let mut reads = g.take_reads();
            let mut writes = vec![point(&y, &ax)];
            if g.coin(1, 4) {
                reads.clear();
                writes.clear();
            }
            let b = block("T_ewise", ivs, reads, writes, vec![store(&y, &ax, ex.e)]);
            vec![nest(&loops, &extents, block_stmt(b))]
        }
    };
    Kernel { func: finish(name, params, body), scalars }
}

/// A transpose (TVM's legalized `permute_dims`): output axis `k` is input axis
/// `perm[k]`, so `Y[v0, .., vr] = f(X[..])` reads the input across its rows, through
/// one block (`T_transpose`) or bare loops; `f` is the identity or a random expression.
pub fn transpose(u: &mut Unstructured, name: &str, input: &Operand, perm: &[usize], out_dtype: DataType) -> Kernel {
    let mut g = gen(u);
    let out = Operand { dims: perm.iter().filter_map(|&p| input.dims.get(p).copied()).collect(), dtype: out_dtype };
    allow_narrow(&mut g, &[input, &out]);
    let dims = Dims::new(&mut g, input.dims.iter().chain(&out.dims));
    let (inputs, y, params) = io_buffers(&dims, std::slice::from_ref(input), &out);
    let rank = out.dims.len();
    let extents = dims.shape(&out.dims);
    let (loops, ivs) = axes(&ax_names("ax", rank), &extents, &vec![IterKind::Spatial; rank]);
    let blocks = g.coin(2, 3);
    let ax: Vec<TirExpr> =
        if blocks { ivs.iter().map(|iv| var(&iv.var)).collect() } else { loops.iter().map(var).collect() };
    let mut in_ix = vec![idx(0); input.dims.len()];
    for (k, &p) in perm.iter().enumerate() {
        if let (Some(slot), Some(a)) = (in_ix.get_mut(p), ax.get(k)) {
            *slot = a.clone();
        }
    }
    g.leaves = vec![Leaf::input(&inputs[0], &in_ix)];
    let value = if g.coin(1, 2) { g.leaf(out_dtype).e } else { g.body(out_dtype, 2).e };
    let body = if blocks {
        let reads = g.take_reads();
        let b = block("T_transpose", ivs, reads, vec![point(&y, &ax)], vec![store(&y, &ax, value)]);
        vec![nest(&loops, &extents, block_stmt(b))]
    } else {
        nest_kinds(&loops, &extents, &[], vec![store(&y, &ax, value)])
    };
    Kernel { func: finish(name, params, body), scalars: Vec::new() }
}

/// How a reduction combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Red {
    Sum,
    Prod,
    Max,
    Min,
    All,
    Any,
    /// A sum, then a second stage scaling by the reciprocal of the count.
    Mean,
}

/// A reduction of `input` over `axes` (indices into its dimensions, at least one) with
/// `T.init()`, keeping the reduced dimensions as 1 with `keepdims`: loops over the
/// kept axes then the reduced ones, one block `T.axis.remap("S..R..")`, as TVM's
/// legalization of sum/prod/max/min/mean writes it. The output has `out_dtype`.
pub fn reduce(
    u: &mut Unstructured,
    name: &str,
    input: &Operand,
    axes_: &[usize],
    keepdims: bool,
    out_dtype: DataType,
) -> Kernel {
    let mut g = gen(u);
    let mut axes_: Vec<usize> = axes_.iter().copied().filter(|&a| a < input.dims.len()).collect();
    axes_.dedup();
    let axes_ = &axes_[..];
    let out_dims: Vec<Ext> = (0..input.dims.len())
        .filter_map(|i| match (axes_.contains(&i), keepdims) {
            (false, _) => Some(input.dims[i]),
            (true, true) => Some(Ext { id: usize::MAX, lit: Some(1), hi: 1 }),
            (true, false) => None,
        })
        .collect();
    let out = Operand { dims: out_dims, dtype: out_dtype };
    allow_narrow(&mut g, &[input, &out]);
    let dims = Dims::new(&mut g, input.dims.iter().chain(&out.dims));
    let (inputs, y, params) = io_buffers(&dims, std::slice::from_ref(input), &out);
    let a = &inputs[0];

    let count_hi: i64 = axes_.iter().map(|&i| input.dims.get(i).map_or(1, |e| e.hi)).product();
    let count_lit: Option<i64> = axes_.iter().map(|&i| input.dims.get(i).and_then(|e| e.lit)).product();
    let d = out_dtype;
    let narrow_int = (d.is_int() || d.is_uint()) && d.bits < 32;
    let mut ops = vec![Red::Max, Red::Min];
    if d.is_bool() {
        ops = vec![Red::All, Red::Any];
    } else if d.is_float() {
        ops.extend([Red::Sum, Red::Sum, Red::Prod]);
        if count_lit.is_some() && d.bits >= 32 {
            ops.push(Red::Mean);
        }
    } else if !narrow_int {
        ops.extend([Red::Sum, Red::Sum]);
        if count_hi <= 10 && input.dtype == d {
            ops.push(Red::Prod);
        }
    }
    let op = g.choose(&ops, Red::Max);

    // Loops: kept axes in order, then the reduced ones.
    let kept: Vec<usize> = (0..input.dims.len()).filter(|i| !axes_.contains(i)).collect();
    let order: Vec<usize> = kept.iter().chain(axes_.iter()).copied().collect();
    let names: Vec<String> =
        order.iter().map(|&i| if axes_.contains(&i) { format!("k{i}") } else { format!("ax{i}") }).collect();
    let extents: Vec<TirExpr> = order.iter().map(|&i| dims.get(&input.dims[i])).collect();
    let kinds: Vec<IterKind> =
        order.iter().map(|i| if axes_.contains(i) { IterKind::Reduce } else { IterKind::Spatial }).collect();
    let (loops, ivs) = axes(&names, &extents, &kinds);
    // Bare loops, as a lowered reduction: the loop variables index directly.
    let bare = op != Red::Mean && g.coin(1, 3);
    let axis_of = |i: usize| {
        order.iter().position(|&o| o == i).map_or_else(|| idx(0), |p| var(if bare { &loops[p] } else { &ivs[p].var }))
    };
    let in_ix: Vec<TirExpr> = (0..input.dims.len()).map(axis_of).collect();
    let out_ix: Vec<TirExpr> = (0..input.dims.len())
        .filter_map(|i| match (axes_.contains(&i), keepdims) {
            (false, _) => Some(axis_of(i)),
            (true, true) => Some(idx(0)),
            (true, false) => None,
        })
        .collect();

    // The accumulator: the output, or a local buffer for a mean.
    let acc = if op == Red::Mean { new_buffer("A_red", y.shape().to_vec(), d) } else { y.clone() };
    use PrimBinOp::*;
    let (bop, start) = match op {
        Red::Sum | Red::Mean => (Add, zero_one(0, d)),
        Red::Prod => (Mul, zero_one(1, d)),
        Red::Max => (Max, min_value(d)),
        Red::Min => (Min, max_value(d)),
        Red::All => (And, zero_one(1, d)),
        Red::Any => (Or, zero_one(0, d)),
    };
    // The element: the input as it is (a legalized reduction), or an expression over it
    // (a fused one), converted to the accumulator's dtype.
    let elem = if g.coin(1, 2) || op == Red::Prod {
        let e = load(a, &in_ix);
        if input.dtype == d {
            e
        } else if d.is_float() || d.is_bool() || input.dtype.is_bool() {
            cast(d, e)
        } else if input.dtype.is_float() {
            super::expr::clamp_cast(e, d).e
        } else {
            // Integers into an integer accumulator: in range by the input bound.
            cast(d, e)
        }
    } else {
        g.leaves = vec![Leaf::input(a, &in_ix)];
        if bop == Add && !d.is_float() {
            g.cap = SUM_CAP;
        }
        g.expr(d, 2).e
    };
    if bare {
        // Zero the output, then accumulate into it (reduced loops innermost, or
        // outermost so that the kept ones vectorize). A sum may skip the zeroing and
        // accumulate into call_tir's zeros (C-9).
        let mut body = Vec::new();
        if !(matches!(op, Red::Sum | Red::Any) && g.coin(1, 3)) {
            let zl: Vec<PrimVar> =
                ax_names("z", out.dims.len()).iter().map(|n| PrimVar::new(n.as_str(), I64)).collect();
            let zix: Vec<TirExpr> = zl.iter().map(var).collect();
            body.extend(nest_kinds(&zl, y.shape(), &[], vec![store(&y, &zix, start)]));
        }
        let update = store(&y, &out_ix, bin(bop, load(&y, &out_ix), elem));
        let (mut lo, mut ext) = (loops, extents);
        if g.coin(1, 2) && !kept.is_empty() {
            lo.rotate_left(kept.len());
            ext.rotate_left(kept.len());
        }
        body.extend(nest_kinds(&lo, &ext, &[], vec![update]));
        return Kernel { func: finish(name, params, body), scalars: Vec::new() };
    }
    let update = store(&acc, &out_ix, bin(bop, load(&acc, &out_ix), elem));
    let init = store(&acc, &out_ix, start);
    let mut b =
        block(&format!("{}_red", a.name()), ivs, vec![point(a, &in_ix)], vec![point(&acc, &out_ix)], vec![update]);
    b.init = Some(vec![init]);
    if g.coin(1, 4) {
        b.reads.clear();
        b.writes.clear();
    }
    let mut body = vec![nest(&loops, &extents, block_stmt(b))];
    if op == Red::Mean {
        // `Y = A_red * (1 / count)`, the reciprocal exact in the dtype's printing.
        let recip = 1.0 / count_lit.unwrap_or(1).max(1) as f64;
        let recip = if d.bits == 64 { recip } else { recip as f32 as f64 };
        let names = ax_names("ax", out.dims.len());
        let (loops, ivs) = axes(&names, y.shape(), &vec![IterKind::Spatial; out.dims.len()]);
        let ax: Vec<TirExpr> = ivs.iter().map(|iv| var(&iv.var)).collect();
        let value = bin(Mul, load(&acc, &ax), float_lit(recip, d));
        let b2 = block("T_divide", ivs, vec![point(&acc, &ax)], vec![point(&y, &ax)], vec![store(&y, &ax, value)]);
        body.insert(0, stmt(StmtKind::AllocBuffer(acc)));
        body.push(nest(&loops, y.shape(), block_stmt(b2)));
    }
    Kernel { func: finish(name, params, body), scalars: Vec::new() }
}

/// A matrix product `A[.., m, k] x B[.., k, n]` (B 2-D or batched like A) into
/// `[.., m, n]` of A's dtype: the reduce axis `k` with `T.init()` in one block (TVM's
/// `matmul`), or bare loops that zero then accumulate, sometimes followed by an
/// epilogue stage (relu or a shift) through a local buffer.
pub fn matmul(u: &mut Unstructured, name: &str, a: &Operand, b: &Operand) -> Kernel {
    let mut g = gen(u);
    let d = a.dtype;
    let ra = a.dims.len();
    let rb = b.dims.len();
    if ra < 2 || rb < 2 {
        // Not a matmul shape: an elementwise copy keeps the kernel valid.
        return ewise(g.u, name, std::slice::from_ref(a), a, false);
    }
    let mut out_dims = a.dims[..ra - 1].to_vec();
    out_dims.push(b.dims[rb - 1]);
    let out = Operand { dims: out_dims, dtype: d };
    let dims = Dims::new(&mut g, a.dims.iter().chain(&b.dims).chain(&out.dims));
    let (inputs, y, params) = io_buffers(&dims, &[a.clone(), b.clone()], &out);
    let (ba, bb) = (&inputs[0], &inputs[1]);
    let batch = ra - 2;
    let mut names = ax_names("b", batch);
    names.extend(["i".to_string(), "j".to_string(), "k".to_string()]);
    let mut extents = dims.shape(&a.dims[..ra - 1]);
    extents.push(dims.get(&b.dims[rb - 1]));
    extents.push(dims.get(&a.dims[ra - 1]));
    let mut kinds = vec![IterKind::Spatial; batch + 2];
    kinds.push(IterKind::Reduce);
    let epilogue = g.coin(1, 4);
    let acc = if epilogue { new_buffer("matmul", y.shape().to_vec(), d) } else { y.clone() };
    let mut body = Vec::new();
    if g.coin(2, 3) {
        let (loops, ivs) = axes(&names, &extents, &kinds);
        let v: Vec<TirExpr> = ivs.iter().map(|iv| var(&iv.var)).collect();
        let (a_ix, b_ix, c_ix) = matmul_indices(&v, batch, rb == ra);
        let prod = bin(PrimBinOp::Mul, load(ba, &a_ix), load(bb, &b_ix));
        let update = store(&acc, &c_ix, bin(PrimBinOp::Add, load(&acc, &c_ix), prod));
        let reads = vec![point(ba, &a_ix), point(bb, &b_ix)];
        let mut blk = block("matmul", ivs, reads, vec![point(&acc, &c_ix)], vec![update]);
        blk.init = Some(vec![store(&acc, &c_ix, zero_one(0, d))]);
        body.push(nest(&loops, &extents, block_stmt(blk)));
    } else {
        // for b.., i, j: C = 0; for k: C = C + A * B
        let loops: Vec<PrimVar> = names.iter().map(|n| PrimVar::new(n.as_str(), I64)).collect();
        let v: Vec<TirExpr> = loops.iter().map(var).collect();
        let (a_ix, b_ix, c_ix) = matmul_indices(&v, batch, rb == ra);
        let prod = bin(PrimBinOp::Mul, load(ba, &a_ix), load(bb, &b_ix));
        let update = store(&acc, &c_ix, bin(PrimBinOp::Add, load(&acc, &c_ix), prod));
        let kind = g.choose(&[ForKind::Serial, ForKind::Serial, ForKind::Unroll], ForKind::Serial);
        let inner = stmt(StmtKind::For {
            var: loops[batch + 2].clone(),
            begin: idx(0),
            end: extents[batch + 2].clone(),
            kind,
            body: vec![update],
        });
        let zero = store(&acc, &c_ix, zero_one(0, d));
        body.extend(nest_kinds(&loops[..batch + 2], &extents[..batch + 2], &[], vec![zero, inner]));
    }
    if epilogue {
        let names = ax_names("ax", out.dims.len());
        let (loops, ivs) = axes(&names, y.shape(), &vec![IterKind::Spatial; out.dims.len()]);
        let ax: Vec<TirExpr> = ivs.iter().map(|iv| var(&iv.var)).collect();
        let x = load(&acc, &ax);
        let value = match g.pick(3) {
            0 => bin(PrimBinOp::Max, x, zero_one(0, d)),
            1 => bin(PrimBinOp::Add, x, zero_one(1, d)),
            _ => mk(spec_model::grammar::tir::TirExprKind::Select {
                cond: bin(PrimBinOp::Lt, x.clone(), zero_one(0, d)),
                then_value: bin(PrimBinOp::Sub, zero_one(0, d), x.clone()),
                else_value: x,
            }),
        };
        let b2: Block =
            block("T_epilogue", ivs, vec![point(&acc, &ax)], vec![point(&y, &ax)], vec![store(&y, &ax, value)]);
        body.insert(0, stmt(StmtKind::AllocBuffer(acc)));
        body.push(nest(&loops, y.shape(), block_stmt(b2)));
    }
    Kernel { func: finish(name, params, body), scalars: Vec::new() }
}

/// The indices of `A[b.., i, k]`, `B[b.., k, j]` (without the batch axes when `B` is
/// not batched) and `C[b.., i, j]` over the variables `v` = `b.., i, j, k`.
fn matmul_indices(v: &[TirExpr], batch: usize, b_batched: bool) -> (Vec<TirExpr>, Vec<TirExpr>, Vec<TirExpr>) {
    let (bi, i, j, k) = (&v[..batch], &v[batch], &v[batch + 1], &v[batch + 2]);
    let with = |pre: &[TirExpr], x: &TirExpr, y: &TirExpr| {
        let mut ix = pre.to_vec();
        ix.extend([x.clone(), y.clone()]);
        ix
    };
    (with(bi, i, k), with(if b_batched { bi } else { &[] }, k, j), with(bi, i, j))
}
