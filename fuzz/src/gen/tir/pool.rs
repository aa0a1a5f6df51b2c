//! 2-D pooling over NCHW input, as TVM's `pad` + `pool_max`/`pool_sum` + `pool_avg`
//! kernels write it: padding through `T.if_then_else` bounds tests, either in a separate
//! stage into a `T.alloc_buffer` or inline in the window's read; the window a reduce
//! block with `T.init()`.

use super::expr::Gen;
use super::kernels::{ewise, io_buffers};
use super::{
    ax_names, axes, bin, block, block_stmt, cast, finish, float_lit, gen, idx, load, min_value, mk, nest, new_buffer,
    point, stmt, store, var, zero_one, Dims, Kernel, Operand,
};
use arbitrary::Unstructured;
use spec_model::grammar::tir::{Buffer, Intrinsic, IterKind, StmtKind, TirExpr, TirExprKind};
use spec_model::grammar::PrimBinOp;

/// A pooling window: kernel size, stride and padding (on both sides) per axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub kh: i64,
    pub kw: i64,
    pub sh: i64,
    pub sw: i64,
    pub ph: i64,
    pub pw: i64,
}

impl Window {
    /// The output height and width over an `h` x `w` input; `None` when the window does
    /// not fit or padding is not smaller than the kernel (a window all padding).
    pub fn out(&self, h: i64, w: i64) -> Option<(i64, i64)> {
        let ok = |n: i64, k: i64, s: i64, p: i64| k >= 1 && s >= 1 && p >= 0 && p < k && n + 2 * p >= k;
        if !ok(h, self.kh, self.sh, self.ph) || !ok(w, self.kw, self.sw, self.pw) {
            return None;
        }
        Some(((h + 2 * self.ph - self.kh) / self.sh + 1, (w + 2 * self.pw - self.kw) / self.sw + 1))
    }
}

/// `e + c` (folded when `e` is a literal).
fn plus(e: &TirExpr, c: i64) -> TirExpr {
    match &*e.kind {
        TirExprKind::IntImm { value, dtype } => super::int_lit(value + c, *dtype),
        _ if c == 0 => e.clone(),
        _ if c < 0 => bin(PrimBinOp::Sub, e.clone(), idx(-c)),
        _ => bin(PrimBinOp::Add, e.clone(), idx(c)),
    }
}

fn and(a: Option<TirExpr>, b: TirExpr) -> TirExpr {
    match a {
        Some(a) => bin(PrimBinOp::And, a, b),
        None => b,
    }
}

/// `p <= x < n + p` for the padded coordinate `x` (nothing when `p` is 0).
fn in_bounds(cond: Option<TirExpr>, x: &TirExpr, n: &TirExpr, p: i64) -> Option<TirExpr> {
    if p == 0 {
        return cond;
    }
    let c = bin(PrimBinOp::And, bin(PrimBinOp::Le, idx(p), x.clone()), bin(PrimBinOp::Lt, x.clone(), plus(n, p)));
    Some(and(cond, c))
}

/// `T.if_then_else(cond, A[.., h - ph, w - pw], pad)` at padded coordinates `h`, `w`.
fn padded_read(
    a: &Buffer,
    nc: &[TirExpr],
    h: &TirExpr,
    w: &TirExpr,
    dims: (&TirExpr, &TirExpr),
    win: &Window,
    pad: TirExpr,
) -> TirExpr {
    let cond = in_bounds(in_bounds(None, h, dims.0, win.ph), w, dims.1, win.pw);
    let mut ix = nc.to_vec();
    ix.push(plus(h, -win.ph));
    ix.push(plus(w, -win.pw));
    let read = load(a, &ix);
    match cond {
        Some(c) => mk(TirExprKind::Call { op: Intrinsic::IfThenElse, args: vec![c, read, pad] }),
        None => read,
    }
}

/// Max pooling (any numeric dtype) or average pooling (float32/64; counting the padding or
/// not) of `x` (`[N, C, H, W]`, `H` and `W` known) into `out` (`[N, C, OH, OW]` with
/// [`Window::out`]). Anything else gives a copy kernel (never from the Relax side).
pub fn pool2d(u: &mut Unstructured, name: &str, x: &Operand, out: &Operand, win: Window) -> Kernel {
    let fits = x.dims.len() == 4
        && out.dims.len() == 4
        && x.dtype == out.dtype
        && x.dims[..2] == out.dims[..2]
        && matches!((x.dims[2].lit, x.dims[3].lit), (Some(h), Some(w))
            if win.out(h, w) == Some((out.dims[2].lit.unwrap_or(-1), out.dims[3].lit.unwrap_or(-1))));
    if !fits {
        return ewise(u, name, std::slice::from_ref(x), x, false);
    }
    let mut g: Gen = gen(u);
    let d = x.dtype;
    let avg = d.is_float() && d.bits >= 32 && g.coin(1, 2);
    let dims = Dims::new(&mut g, x.dims.iter().chain(&out.dims));
    let (inputs, y, params) = io_buffers(&dims, std::slice::from_ref(x), out);
    let a = &inputs[0];
    let (n, c, h, w) = (dims.get(&x.dims[0]), dims.get(&x.dims[1]), dims.get(&x.dims[2]), dims.get(&x.dims[3]));
    let pad_value = if avg { zero_one(0, d) } else { min_value(d) };
    let padded = win.ph > 0 || win.pw > 0;
    let mut body = Vec::new();

    // The pad stage (TVM's `pad_temp`), or none (inline padding, or no padding at all).
    let pad_stage = padded && g.coin(1, 2);
    let src = if pad_stage {
        let shape = vec![n.clone(), c.clone(), plus(&h, 2 * win.ph), plus(&w, 2 * win.pw)];
        let pad = new_buffer("pad_temp", shape.clone(), d);
        let (loops, ivs) = axes(&ax_names("i", 4), &shape, &[IterKind::Spatial; 4]);
        let v: Vec<TirExpr> = ivs.iter().map(|iv| var(&iv.var)).collect();
        let value = padded_read(a, &v[..2], &v[2], &v[3], (&h, &w), &win, pad_value.clone());
        let b = block("pad_temp", ivs, vec![], vec![point(&pad, &v)], vec![store(&pad, &v, value)]);
        body.push(stmt(StmtKind::AllocBuffer(pad.clone())));
        body.push(nest(&loops, &shape, block_stmt(b)));
        Some(pad)
    } else {
        None
    };

    // The window: a reduce block over (kh, kw) with T.init.
    let acc = if avg { new_buffer("pool_sum", y.shape().to_vec(), d) } else { y.clone() };
    let mut names = ax_names("ax", 4);
    names.extend(["rv0".to_string(), "rv1".to_string()]);
    let mut extents = y.shape().to_vec();
    extents.extend([idx(win.kh), idx(win.kw)]);
    let mut kinds = vec![IterKind::Spatial; 4];
    kinds.extend([IterKind::Reduce; 2]);
    let (loops, ivs) = axes(&names, &extents, &kinds);
    let v: Vec<TirExpr> = ivs.iter().map(|iv| var(&iv.var)).collect();
    let hh = bin(PrimBinOp::Add, bin(PrimBinOp::Mul, v[2].clone(), idx(win.sh)), v[4].clone());
    let ww = bin(PrimBinOp::Add, bin(PrimBinOp::Mul, v[3].clone(), idx(win.sw)), v[5].clone());
    let elem = match &src {
        Some(pad) => load(pad, &[v[0].clone(), v[1].clone(), hh, ww]),
        None => padded_read(a, &v[..2], &hh, &ww, (&h, &w), &win, pad_value.clone()),
    };
    let out_ix = &v[..4];
    let op = if avg { PrimBinOp::Add } else { PrimBinOp::Max };
    let update = store(&acc, out_ix, bin(op, load(&acc, out_ix), elem));
    let mut b = block(if avg { "pool_sum" } else { "pool_max" }, ivs, vec![], vec![point(&acc, out_ix)], vec![update]);
    b.init = Some(vec![store(&acc, out_ix, pad_value)]);
    body.push(nest(&loops, &extents, block_stmt(b)));

    if avg {
        // `pool_avg = pool_sum * (1 / count)`: the full window (count_include_pad), or
        // the part inside the input, `T.pow(count, -1)` (no float division in TVMScript's
        // spelling here).
        let (loops, ivs) = axes(&ax_names("ax", 4), y.shape(), &[IterKind::Spatial; 4]);
        let v: Vec<TirExpr> = ivs.iter().map(|iv| var(&iv.var)).collect();
        let sum = load(&acc, &v);
        let value = if !padded || g.coin(1, 2) {
            let r = 1.0 / (win.kh * win.kw) as f64;
            bin(PrimBinOp::Mul, sum, float_lit(if d.bits == 64 { r } else { r as f32 as f64 }, d))
        } else {
            // rows: min(oh * sh - ph + kh, H) - max(oh * sh - ph, 0); columns alike.
            let span = |o: &TirExpr, s: i64, p: i64, k: i64, n: &TirExpr| {
                let start = plus(&bin(PrimBinOp::Mul, o.clone(), idx(s)), -p);
                bin(PrimBinOp::Sub, bin(PrimBinOp::Min, plus(&start, k), n.clone()), bin(PrimBinOp::Max, start, idx(0)))
            };
            let count =
                bin(PrimBinOp::Mul, span(&v[2], win.sh, win.ph, win.kh, &h), span(&v[3], win.sw, win.pw, win.kw, &w));
            let recip = mk(TirExprKind::Call { op: Intrinsic::Pow, args: vec![cast(d, count), float_lit(-1.0, d)] });
            bin(PrimBinOp::Mul, sum, recip)
        };
        let b2 = block("pool_avg", ivs, vec![point(&acc, &v)], vec![point(&y, &v)], vec![store(&y, &v, value)]);
        body.insert(0, stmt(StmtKind::AllocBuffer(acc)));
        body.push(nest(&loops, y.shape(), block_stmt(b2)));
    }
    Kernel { func: finish(name, params, body), scalars: Vec::new() }
}
