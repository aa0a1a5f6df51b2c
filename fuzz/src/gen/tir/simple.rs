//! The first kernel family: one `T.grid` + `T.block` over inputs of one shape (shape
//! variables bound by `T.match_buffer`), elementwise or reducing the last axis with
//! `T.init()`, sometimes after a `T.alloc_buffer` stage; the body a random expression.

use super::expr::{input_bound, Gen, Leaf, MAX_DEPTH, SUM_CAP};
use super::{bin, block, int_lit, load, point, stmt, var, DTYPES, SP};
use arbitrary::Unstructured;
use spec_model::grammar::tir::{
    Block, Buffer, ForKind, IterKind, IterVar, PrimFunc, Stmt, StmtKind, TirExpr, TirParam,
};
use spec_model::grammar::{AttrValue, Attrs, DataType, PrimBinOp, PrimVar};

/// What a generated kernel computes, so the Relax call site can write `out_sinfo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelKind {
    /// Output has the same shape as every input (all inputs share one shape).
    Elementwise,
    /// Output drops the last axis of the (common) input shape: a reduction with T.init over the last axis. Needs rank >= 1.
    ReduceLast,
}

/// Loop variables and block axes over `dims` (`T.grid` + `T.axis.remap`), one per kind.
fn axes(dims: &[PrimVar], kinds: &[IterKind]) -> (Vec<PrimVar>, Vec<IterVar>) {
    let names = ["i", "j", "k"];
    let mut loops = Vec::new();
    let mut ivs = Vec::new();
    for (n, (d, &kind)) in dims.iter().zip(kinds).enumerate() {
        let lv = PrimVar::new(names[n % 3], d.dtype());
        let v = PrimVar::new(format!("v{}", names[n % 3]), d.dtype());
        ivs.push(IterVar { var: v, kind, begin: int_lit(0, d.dtype()), end: var(d), binding: var(&lv) });
        loops.push(lv);
    }
    (loops, ivs)
}

/// The block inside its loop nest (a rank-0 kernel has no loops); loop `skip_first`
/// starts at 1.
fn nest(loops: &[PrimVar], dims: &[PrimVar], block: Block, skip_first: Option<usize>) -> Stmt {
    let mut s = stmt(StmtKind::Block(Box::new(block)));
    for (n, (lv, d)) in loops.iter().zip(dims).enumerate().rev() {
        let (begin, end) = (int_lit(i64::from(skip_first == Some(n)), d.dtype()), var(d));
        s = stmt(StmtKind::For { var: lv.clone(), begin, end, kind: ForKind::Serial, body: vec![s] });
    }
    s
}

/// The inputs, read at `idx`.
fn input_leaves(inputs: &[Buffer], idx: &[TirExpr]) -> Vec<Leaf> {
    inputs.iter().map(|b| Leaf::load(b, idx, input_bound(b.dtype()))).collect()
}

/// Generates `@T.prim_func def <name>(...)` whose parameters are one handle per input
/// (all inputs of rank `rank`, sharing symbolic T.int64 dims bound by T.match_buffer, dtypes `in_dtypes`)
/// followed by one output handle of dtype `out_dtype` (shape per `kind`).
/// Never panics: a rank above 3 is taken as 3, and `ReduceLast` at rank 0 (nothing to
/// drop) as `Elementwise`. Run-time safety holds for the five dtypes of [`DTYPES`].
pub fn gen_prim_func(
    u: &mut Unstructured,
    name: &str,
    kind: KernelKind,
    rank: usize,
    in_dtypes: &[DataType],
    out_dtype: DataType,
) -> PrimFunc {
    gen_kernel(u, name, kind, rank, in_dtypes, out_dtype, false)
}

/// As [`gen_prim_func`]; with `partial`, the main nest leaves some of the output
/// unwritten (it keeps the zeros `call_tir` allocated, C-9): one loop starts at 1, or
/// `T.where` skips the last index or the odd ones of one axis. On the reduce axis, a
/// loop from 1 never runs `T.init()`, so the update reads those zeros; elsewhere the
/// store may add to the element it overwrites (`Y[i] = Y[i] + e`). An engine that
/// skips zero-filling an output must prove the kernel writes all of it.
pub fn gen_kernel(
    u: &mut Unstructured,
    name: &str,
    kind: KernelKind,
    rank: usize,
    in_dtypes: &[DataType],
    out_dtype: DataType,
    partial: bool,
) -> PrimFunc {
    let rank = rank.min(3);
    let reduce = kind == KernelKind::ReduceLast && rank > 0;
    let dims: Vec<PrimVar> = ["n", "m", "p"][..rank].iter().map(|n| PrimVar::shape_var(*n)).collect();
    let out_dims = &dims[..if reduce { rank - 1 } else { rank }];
    let shape = |ds: &[PrimVar]| ds.iter().map(var).collect::<Vec<_>>();
    let buffer = |n: String, ds: &[PrimVar], d: DataType| Buffer::new(n, shape(ds), d, "global".to_string(), SP);

    let mut params = Vec::new();
    let mut inputs = Vec::new();
    for (k, &d) in in_dtypes.iter().enumerate() {
        let b = buffer(format!("A{k}"), &dims, d);
        params.push(TirParam { var: PrimVar::new(format!("a{k}"), DataType::handle()), buffer: Some(b.clone()) });
        inputs.push(b);
    }
    let out = buffer("Y".to_string(), out_dims, out_dtype);
    params.push(TirParam { var: PrimVar::new("y", DataType::handle()), buffer: Some(out.clone()) });

    let mut g = Gen::new(u);
    let mut body = Vec::new();

    // Optional first stage: `tmp = T.alloc_buffer(input shape)` filled elementwise.
    let mut stage = None;
    if g.coin(1, 3) {
        let d = g.dtype(&DTYPES);
        let tmp = buffer("tmp".to_string(), &dims, d);
        let (loops, ivs) = axes(&dims, &vec![IterKind::Spatial; rank]);
        let idx: Vec<TirExpr> = ivs.iter().map(|iv| var(&iv.var)).collect();
        g.leaves = input_leaves(&inputs, &idx);
        let ex = g.expr(d, 2);
        let store = stmt(StmtKind::BufferStore { buffer: tmp.clone(), indices: idx.clone(), value: ex.e });
        let reads = g.take_reads();
        body.push(stmt(StmtKind::AllocBuffer(tmp.clone())));
        body.push(nest(&loops, &dims, block("stage", ivs, reads, vec![point(&tmp, &idx)], vec![store]), None));
        stage = Some((tmp, ex.iv));
    }

    // The main block over the output (and, for a reduction, the last input axis).
    let mut kinds = vec![IterKind::Spatial; out_dims.len()];
    if reduce {
        kinds.push(IterKind::Reduce);
    }
    let (loops, ivs) = axes(&dims, &kinds);
    let idx: Vec<TirExpr> = ivs.iter().map(|iv| var(&iv.var)).collect();
    let out_idx = &idx[..out_dims.len()];
    g.leaves = input_leaves(&inputs, &idx);
    if let Some((tmp, iv)) = stage {
        g.leaves.push(Leaf::load(&tmp, &idx, iv));
    }
    let write = vec![point(&out, out_idx)];
    let (mut skip_first, mut predicate, mut accumulate) = (None, None, false);
    if partial && rank > 0 {
        let p = g.pick(rank);
        let (v, d, dt) = (var(&ivs[p].var), var(&dims[p]), dims[p].dtype());
        match g.pick(4) {
            0 => skip_first = Some(p),
            // Every element written, but only after its zero is read.
            3 if !reduce => accumulate = true,
            3 => skip_first = Some(p),
            1 => predicate = Some(bin(PrimBinOp::Lt, v, bin(PrimBinOp::Sub, d, int_lit(1, dt)))),
            _ => {
                let odd = bin(PrimBinOp::FloorMod, v, int_lit(2, dt));
                predicate = Some(bin(PrimBinOp::Eq, odd, int_lit(0, dt)));
            }
        }
    }
    let mut main = if reduce {
        use PrimBinOp::*;
        let op = if out_dtype.is_bool() { [And, Or][g.pick(2)] } else { [Add, Max, Min][g.pick(3)] };
        if op == Add && !out_dtype.is_float() {
            g.cap = SUM_CAP;
        }
        let start = g.literal(out_dtype).e;
        let elem = g.expr(out_dtype, MAX_DEPTH).e;
        let acc = bin(op, load(&out, out_idx), elem);
        let update = stmt(StmtKind::BufferStore { buffer: out.clone(), indices: out_idx.to_vec(), value: acc });
        let init = stmt(StmtKind::BufferStore { buffer: out.clone(), indices: out_idx.to_vec(), value: start });
        let reads = g.take_reads();
        Block { init: Some(vec![init]), ..block("reduce", ivs, reads, write, vec![update]) }
    } else {
        let ex = g.expr(out_dtype, MAX_DEPTH);
        let value = if accumulate {
            let op = if out_dtype.is_bool() { PrimBinOp::Or } else { PrimBinOp::Add };
            bin(op, load(&out, out_idx), ex.e)
        } else {
            ex.e
        };
        let store = stmt(StmtKind::BufferStore { buffer: out.clone(), indices: out_idx.to_vec(), value });
        let mut reads = g.take_reads();
        if accumulate {
            reads.push(point(&out, out_idx));
        }
        block("compute", ivs, reads, write, vec![store])
    };
    if g.coin(1, 4) {
        // `T.reads`/`T.writes` are optional in TVMScript.
        main.reads.clear();
        main.writes.clear();
    }
    main.predicate = predicate;
    body.push(nest(&loops, &dims, main, skip_first));
    let body = if body.len() > 1 {
        let root = block("root", vec![], vec![], vec![], body);
        vec![stmt(StmtKind::Block(Box::new(root)))]
    } else {
        body
    };
    let mut attrs = Attrs::default();
    attrs.insert("global_symbol", AttrValue::Str(name.to_string()));
    PrimFunc { params, body, attrs, span: SP }
}
