//! Kernels that fail at run time on purpose, each with one error kind: integer
//! division by divisors from the data (`DivisionByZero`), arithmetic and float-to-int
//! casts that leave the dtype, `MIN // -1` (`IntegerOverflow`), and, behind
//! `Features::tir_oob`, buffer accesses one past the end or at -1 and block axes
//! outside their domain (`OpError`). Whether the error happens usually depends on the
//! data; some variants guard it (`T.if_then_else` or `if` evaluate one side only), and
//! some guard it with `T.Select`, which evaluates both sides, so the error still happens.

use super::bounds;
use super::expr::{clamp_cast, Gen};
use super::kernels::{ewise, io_buffers};
use super::{
    ax_names, bin, block, block_stmt, cast, finish, float_lit, gen, idx, int_lit, load, max_value, min_value, mk,
    nest_kinds, point, stmt, store, var, Dims, Kernel, Operand, ScalarArg, I64,
};
use arbitrary::Unstructured;
use spec_model::grammar::tir::{Buffer, Intrinsic, IterKind, IterVar, Stmt, StmtKind, TirExpr, TirExprKind, TirParam};
use spec_model::grammar::{DataType, PrimBinOp, PrimVar};

/// Which run-time error an edge kernel may raise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// `A op B` with `op` one of `//`, `%`, `T.truncdiv`, `T.truncmod` and `B` from the
    /// data (zero happens): `DivisionByZero`. Inputs: two integer tensors of the output's dtype.
    DivZero,
    /// `MIN op min(B, -1)`: `IntegerOverflow` for the divisions, none for the modulos.
    MinDiv,
    /// `A * big`, `A + (MAX - c)`, `A - (MIN + c)`: `IntegerOverflow`. Input: one
    /// integer tensor of the output's dtype.
    Overflow,
    /// Functions of an index shifted to the dtype's bound ([`bounds`]), combined by
    /// `T.max`/`T.min`: `IntegerOverflow` exactly when one is pushed past it. Input: as
    /// `Overflow`'s.
    NearBound,
    /// `T.Cast(int, f(A))` of a float `A` scaled, or through `log`/`sqrt`/`exp`:
    /// NaN, infinities or out-of-range values, `IntegerOverflow`. Input: one float
    /// tensor; the output an integer dtype.
    CastRange,
}

/// Loops over `extents` around `body(indices)`: `T.grid` + one block, or bare loops.
fn elementwise_nest(
    g: &mut Gen,
    name: &str,
    extents: &[TirExpr],
    body: impl FnOnce(&[TirExpr]) -> Vec<Stmt>,
) -> Vec<Stmt> {
    let rank = extents.len();
    let names = ax_names("ax", rank);
    if g.coin(1, 2) {
        let (loops, ivs) = super::axes(&names, extents, &vec![IterKind::Spatial; rank]);
        let ax: Vec<TirExpr> = ivs.iter().map(|iv| var(&iv.var)).collect();
        let b = block(name, ivs, vec![], vec![], body(&ax));
        nest_kinds(&loops, extents, &[], vec![block_stmt(b)])
    } else {
        let loops: Vec<PrimVar> = names.iter().map(|n| PrimVar::new(n.as_str(), I64)).collect();
        let ix: Vec<TirExpr> = loops.iter().map(var).collect();
        nest_kinds(&loops, extents, &[], body(&ix))
    }
}

/// `e` as dtype `d`: unchanged, cast, or (float to integer) clamped first.
fn conv(e: TirExpr, d: DataType) -> TirExpr {
    let s = e.dtype();
    if s == d {
        e
    } else if s.is_float() && !d.is_float() && !d.is_bool() {
        clamp_cast(e, d).e
    } else {
        cast(d, e)
    }
}

fn if_then_else(c: TirExpr, a: TirExpr, b: TirExpr) -> TirExpr {
    mk(TirExprKind::Call { op: Intrinsic::IfThenElse, args: vec![c, a, b] })
}

/// A literal of `d` near `v` (floats exact).
fn lit(v: i64, d: DataType) -> TirExpr {
    if d.is_float() {
        float_lit(v as f64, d)
    } else {
        int_lit(v, d)
    }
}

/// An elementwise kernel over `ins` (the output's shape) that may raise the error of
/// `kind`; see [`EdgeKind`] for the operands each expects (others are converted).
pub fn edge_kernel(u: &mut Unstructured, name: &str, kind: EdgeKind, ins: &[Operand], out: &Operand) -> Kernel {
    if ins.is_empty() || ins.iter().any(|o| o.dims != out.dims) {
        return ewise(u, name, ins, out, false);
    }
    let mut g = gen(u);
    let dims = Dims::new(&mut g, out.dims.iter());
    let (inputs, y, params) = io_buffers(&dims, ins, out);
    let extents = dims.shape(&out.dims);
    let d = out.dtype;
    let int_d = if d.is_int() || d.is_uint() { d } else { DataType::INT32 };
    let variant = g.pick(6);
    let op = g.choose(&[PrimBinOp::FloorDiv, PrimBinOp::FloorMod, PrimBinOp::Div, PrimBinOp::Mod], PrimBinOp::FloorDiv);
    let c = g.int(0, 6);
    let block_name = format!("T_{}", format!("{kind:?}").to_lowercase());
    let b0 = inputs[0].clone();
    let b1: Buffer = inputs.get(1).cloned().unwrap_or_else(|| b0.clone());
    // Near the bound: over the longest axis, one to three plans, whose values the
    // store combines with T.max/T.min (each may overflow on its own).
    let ext = |e: &super::Ext| e.lit.unwrap_or(e.hi);
    let axis = (0..out.dims.len()).max_by_key(|&k| (ext(&out.dims[k]), k));
    let imax = axis.map_or(0, |k| ext(&out.dims[k]) - 1).max(0);
    let near: Vec<bounds::Plan> = match kind {
        EdgeKind::NearBound => (0..g.int(1, 3)).filter_map(|_| bounds::plan(&mut g, int_d, imax)).collect(),
        _ => Vec::new(),
    };
    let body = elementwise_nest(&mut g, &block_name, &extents, |ix| {
        let x = conv(load(&b0, ix), int_d);
        let yv = conv(load(&b1, ix), int_d);
        let value = match kind {
            EdgeKind::DivZero => {
                let nonzero = bin(PrimBinOp::Ne, yv.clone(), int_lit(0, int_d));
                let q = bin(op, x.clone(), yv.clone());
                match variant {
                    0 | 1 => q,
                    2 => bin(op, x, bin(PrimBinOp::Sub, yv, int_lit(c.min(3), int_d))),
                    // Guarded: only the chosen side runs.
                    3 => if_then_else(nonzero, q, int_lit(0, int_d)),
                    // "Guarded" with T.Select: both sides run, the error stays.
                    4 => mk(TirExprKind::Select { cond: nonzero, then_value: q, else_value: int_lit(0, int_d) }),
                    _ => {
                        // An `if` statement guards the store.
                        let then_body = vec![store(&y, ix, q)];
                        let else_body = vec![store(&y, ix, int_lit(0, int_d))];
                        return vec![stmt(StmtKind::IfThenElse { cond: nonzero, then_body, else_body })];
                    }
                }
            }
            EdgeKind::MinDiv => {
                let m = mk(TirExprKind::Select {
                    cond: bin(PrimBinOp::Lt, x.clone(), int_lit(c.min(3), int_d)),
                    then_value: min_value(int_d),
                    else_value: x,
                });
                let divisor =
                    if variant < 2 { int_lit(-1, int_d) } else { bin(PrimBinOp::Min, yv, int_lit(-1, int_d)) };
                bin(op, m, divisor)
            }
            EdgeKind::NearBound if !near.is_empty() => {
                let i = axis.and_then(|k| ix.get(k)).cloned().unwrap_or_else(|| idx(0));
                let mut values = near.iter().map(|&p| bounds::near_bound(p, int_d, imax, i.clone(), yv.clone()));
                let first = values.next().unwrap_or(x);
                values
                    .enumerate()
                    .fold(first, |acc, (k, v)| bin(if k % 2 == 0 { PrimBinOp::Max } else { PrimBinOp::Min }, acc, v))
            }
            // (An index too long for the dtype: the plain overflow instead.)
            EdgeKind::Overflow | EdgeKind::NearBound => {
                let (lo, hi) = spec_model::prim_eval::int_range(int_d);
                let big = match int_d.bits {
                    8 if int_d.is_uint() => 60,
                    8 => 25,
                    16 => 6000,
                    32 => 500_000_000,
                    _ => 2_000_000_000_000_000_000,
                };
                match variant {
                    0 | 1 => bin(PrimBinOp::Mul, x, int_lit(big, int_d)),
                    2 | 3 => bin(PrimBinOp::Add, x, int_lit((hi - c as i128).min(i64::MAX as i128) as i64, int_d)),
                    4 => bin(PrimBinOp::Sub, x, int_lit((lo + c as i128).max(i64::MIN as i128) as i64, int_d)),
                    // Guarded by a bounds test on the data: no error.
                    _ => {
                        let small = bin(PrimBinOp::Lt, x.clone(), int_lit(4, int_d));
                        let small = if int_d.is_uint() {
                            small
                        } else {
                            bin(PrimBinOp::And, small, bin(PrimBinOp::Gt, x.clone(), int_lit(-4, int_d)))
                        };
                        if_then_else(small, bin(PrimBinOp::Mul, x, int_lit(big, int_d)), max_value(int_d))
                    }
                }
            }
            EdgeKind::CastRange => {
                let f = load(&b0, ix);
                let fd = f.dtype();
                let f = if fd.is_float() { f } else { cast(DataType::FLOAT32, f) };
                let fd = f.dtype();
                let call = |op: Intrinsic, a: TirExpr| mk(TirExprKind::Call { op, args: vec![a] });
                let scale: f64 = match (int_d.bits, int_d.is_uint()) {
                    (8, true) => 1.0,
                    (8, false) => 40.0,
                    (16, _) => 10000.0,
                    (32, _) => 1e9,
                    _ => 4e18,
                };
                let scale = if fd.bits == 16 { scale.min(60000.0) } else { scale };
                let inner = match variant {
                    0 | 1 => bin(PrimBinOp::Mul, f, float_lit(scale, fd)),
                    2 => call(Intrinsic::Log, f),
                    3 => call(Intrinsic::Sqrt, f),
                    4 => call(Intrinsic::Exp, bin(PrimBinOp::Mul, f, float_lit(30.0, fd))),
                    // Guarded: NaN and large values never reach the cast.
                    _ => {
                        let ok = bin(
                            PrimBinOp::And,
                            bin(PrimBinOp::Eq, f.clone(), f.clone()),
                            bin(PrimBinOp::Lt, call(Intrinsic::Fabs, f.clone()), float_lit(100.0, fd)),
                        );
                        let v = if int_d.is_uint() { call(Intrinsic::Fabs, f) } else { f };
                        return vec![store(&y, ix, if_then_else(ok, cast(int_d, v), int_lit(0, int_d)))];
                    }
                };
                cast(int_d, inner)
            }
        };
        vec![store(&y, ix, value)]
    });
    Kernel { func: finish(name, params, body), scalars: Vec::new() }
}

/// An elementwise kernel over `ins` (1 or 2, the output's shape, rank at least 1) with
/// an access out of bounds: a load at `i + 1` or `i - 1` or at the extent (sometimes
/// behind a data-dependent `T.if_then_else` or `if`, or in a `T.Select`, which evaluates
/// it anyway), a store at `i + 1`, a loop one longer than the buffer (its extent a
/// scalar parameter), or a split loop whose `T.where` is missing. Any error is `OpError`.
pub fn oob_kernel(u: &mut Unstructured, name: &str, ins: &[Operand], out: &Operand) -> Kernel {
    if ins.is_empty() || out.dims.is_empty() || ins.iter().any(|o| o.dims != out.dims) {
        return ewise(u, name, ins, out, false);
    }
    let mut g = gen(u);
    let dims = Dims::new(&mut g, out.dims.iter());
    let (inputs, y, mut params) = io_buffers(&dims, ins, out);
    let mut extents = dims.shape(&out.dims);
    let rank = extents.len();
    let last = rank - 1;
    let d = out.dtype;
    let a = inputs[0].clone();
    let ad = a.dtype();
    let variant = g.pick(9);
    let mut scalars = Vec::new();
    let threshold = lit(g.int(0, 4), if ad.is_bool() { DataType::INT32 } else { ad });
    let cond_at = |ix: &[TirExpr]| {
        let x = load(&a, ix);
        if ad.is_bool() {
            x
        } else {
            bin(PrimBinOp::Gt, x, threshold.clone())
        }
    };
    let shifted = |ix: &[TirExpr], by: TirExpr| {
        let mut v = ix.to_vec();
        v[last] = by;
        v
    };
    let last_extent = extents[last].clone();
    if variant == 7 {
        // The innermost loop runs to a scalar parameter passed as the extent + 1.
        let s = PrimVar::new("s0", I64);
        params.push(TirParam { var: s.clone(), buffer: None });
        scalars.push(ScalarArg::Dim(out.dims[last], 1));
        extents[last] = var(&s);
    }
    if variant == 8 {
        // A split innermost axis without its `T.where`: the axis leaves its domain
        // unless the extent is a multiple of the factor.
        let f = g.choose(&[3i64, 4, 8], 4);
        let e = last_extent.clone();
        let outer = bin(PrimBinOp::FloorDiv, bin(PrimBinOp::Add, e.clone(), idx(f - 1)), idx(f));
        let mut loop_names = ax_names("ax", last);
        loop_names.extend(["ax_o".to_string(), "ax_i".to_string()]);
        let loops: Vec<PrimVar> = loop_names.iter().map(|n| PrimVar::new(n.as_str(), I64)).collect();
        let mut loop_ext = extents[..last].to_vec();
        loop_ext.extend([outer, idx(f)]);
        let fused = bin(PrimBinOp::Add, bin(PrimBinOp::Mul, var(&loops[last]), idx(f)), var(&loops[rank]));
        let ivs: Vec<IterVar> = (0..rank)
            .map(|k| IterVar {
                var: PrimVar::new(format!("v{k}"), I64),
                kind: IterKind::Spatial,
                begin: idx(0),
                end: extents[k].clone(),
                binding: if k == last { fused.clone() } else { var(&loops[k]) },
            })
            .collect();
        let ax: Vec<TirExpr> = ivs.iter().map(|iv| var(&iv.var)).collect();
        let value = conv(load(&a, &ax), d);
        let b = block("T_split", ivs, vec![point(&a, &ax)], vec![point(&y, &ax)], vec![store(&y, &ax, value)]);
        let body = nest_kinds(&loops, &loop_ext, &[], vec![block_stmt(b)]);
        return Kernel { func: finish(name, params, body), scalars };
    }
    let body = elementwise_nest(&mut g, "T_oob", &extents, |ix| {
        let i = ix[last].clone();
        let here = conv(load(&a, ix), d);
        let value = match variant {
            0 => load(&a, &shifted(ix, bin(PrimBinOp::Add, i, idx(1)))),
            1 => load(&a, &shifted(ix, bin(PrimBinOp::Sub, i, idx(1)))),
            2 => {
                return vec![store(&y, &shifted(ix, bin(PrimBinOp::Add, i, idx(1))), here)];
            }
            3 => if_then_else(cond_at(ix), load(&a, &shifted(ix, last_extent.clone())), load(&a, ix)),
            4 => mk(TirExprKind::Select {
                cond: cond_at(ix),
                then_value: load(&a, &shifted(ix, last_extent.clone())),
                else_value: load(&a, ix),
            }),
            5 => {
                let then_body = vec![store(&y, &shifted(ix, bin(PrimBinOp::Add, i, idx(1))), here.clone())];
                let else_body = vec![store(&y, ix, here)];
                return vec![stmt(StmtKind::IfThenElse { cond: cond_at(ix), then_body, else_body })];
            }
            6 => {
                let j = mk(TirExprKind::Select { cond: cond_at(ix), then_value: idx(-1), else_value: i });
                load(&a, &shifted(ix, j))
            }
            _ => load(&a, ix),
        };
        vec![store(&y, ix, conv(value, d))]
    });
    Kernel { func: finish(name, params, body), scalars }
}
