//! Random TIR `PrimFunc`s for `R.call_tir`, valid by construction for any input bytes.
//!
//! Two families of kernels:
//!
//! * [`gen_prim_func`] ([`simple`]): one `T.grid` + `T.block` over inputs of one shape,
//!   elementwise or reducing the last axis, with a random expression body.
//! * The shapes of TVM's legalized Relax operators ([`kernels`], [`pool`]): elementwise
//!   with NumPy broadcasting (size-1 dimensions read at index 0, missing leading
//!   dimensions dropped), reductions with `T.init()` over any axes, 2-D and batched
//!   matmul, max/avg pooling with `T.if_then_else` padding (inline or through a separate
//!   pad stage into a `T.alloc_buffer`), and plain unit-stride loops with extents that
//!   are not multiples of 4 or 8, written with blocks, as bare loops with stores, or
//!   split with a `T.where` tail. Dimensions are literals or shape variables bound from
//!   the arguments, and some kernels take scalar parameters (call_tir's `tir_vars`).
//!
//! Run-time safety of these (for inputs with `|v| <= 8`, what the fuzzer feeds; `uint8`
//! inputs anywhere in `0..=255`): every integer subexpression of a random body carries
//! an interval ([`expr`]) and stays within ±2^30 and within its dtype, so nothing
//! overflows (summands of an integer sum within ±2^16, so a sum over at most 2^14
//! elements fits int32); integer division only by a nonzero literal; a float reaches an
//! integer only through a NaN-guarded clamp into the dtype's range (the interpreter
//! traps on casting NaN, inf or an out-of-range float to an integer); a local buffer is
//! written in full before it is read (TVM leaves it uninitialized).
//!
//! [`edge`] makes the exceptions on purpose: integer kernels whose divisors come from
//! the data (`DivisionByZero`), whose arithmetic or float-to-int casts can leave the
//! dtype (`IntegerOverflow`, including `MIN // -1`), and, behind `Features::tir_oob`,
//! accesses one past the end or at -1 (`OpError`). Each such kernel can raise only
//! one error kind, so an engine that checks in another order still agrees.

mod bounds;
mod edge;
mod expr;
pub mod kernels;
pub mod pool;
mod simple;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_shaped;

pub use edge::{edge_kernel, oob_kernel, EdgeKind};
pub use simple::{gen_kernel, gen_prim_func, KernelKind};

use arbitrary::Unstructured;
use spec_model::grammar::tir::{
    Block, Buffer, BufferRegion, ForKind, IterKind, IterVar, PrimFunc, RegionDim, Stmt, StmtKind, TirExpr, TirExprKind,
    TirParam,
};
use spec_model::grammar::{AttrValue, Attrs, DataType, FloatLit, PrimBinOp, PrimVar};
use spec_model::Span;

const SP: Span = Span::SYNTHETIC;
pub(crate) const F16: DataType = DataType::float(16);
pub(crate) const F32: DataType = DataType::FLOAT32;
pub(crate) const F64: DataType = DataType::float(64);
pub(crate) const I8: DataType = DataType::int(8);
pub(crate) const I32: DataType = DataType::INT32;
pub(crate) const I64: DataType = DataType::INT64;
pub(crate) const U8: DataType = DataType::uint(8);
pub(crate) const BOOL: DataType = DataType::BOOL;
/// The dtypes kernels compute in.
const DTYPES: [DataType; 5] = [F32, F64, I32, I64, BOOL];
/// The narrow dtypes some kernels store and compute in besides.
pub const NARROW: [DataType; 3] = [F16, I8, U8];

/// A dimension of a `call_tir` argument or result as the kernel sees it: `id` tells
/// equal dimensions apart (the same id is the same Relax dimension), `lit` is its value
/// when the Relax side knows it, `hi` an upper bound (at least 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ext {
    pub id: usize,
    pub lit: Option<i64>,
    pub hi: i64,
}

/// A tensor argument or result: its dimensions and dtype.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operand {
    pub dims: Vec<Ext>,
    pub dtype: DataType,
}

/// A scalar parameter's value (one entry of call_tir's `tir_vars`): a dimension plus
/// a constant, or a literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarArg {
    Dim(Ext, i64),
    Lit(i64),
}

/// A generated kernel and the scalars its call passes after the tensors.
pub struct Kernel {
    pub func: PrimFunc,
    pub scalars: Vec<ScalarArg>,
}

fn mk(kind: TirExprKind) -> TirExpr {
    TirExpr::new(kind, SP)
}
fn var(v: &PrimVar) -> TirExpr {
    mk(TirExprKind::Var(v.clone()))
}
fn int_lit(value: i64, dtype: DataType) -> TirExpr {
    mk(TirExprKind::IntImm { value, dtype })
}
/// An `int64` literal (indices and extents are `int64`, like the shape variables).
fn idx(value: i64) -> TirExpr {
    int_lit(value, I64)
}
fn float_lit(value: f64, dtype: DataType) -> TirExpr {
    mk(TirExprKind::FloatImm { value: FloatLit(value), dtype })
}
fn bin(op: PrimBinOp, a: TirExpr, b: TirExpr) -> TirExpr {
    mk(TirExprKind::Binary { op, a, b })
}
fn cast(dtype: DataType, value: TirExpr) -> TirExpr {
    mk(TirExprKind::Cast { dtype, value })
}
fn load(buffer: &Buffer, indices: &[TirExpr]) -> TirExpr {
    mk(TirExprKind::BufferLoad { buffer: buffer.clone(), indices: indices.to_vec() })
}
fn stmt(kind: StmtKind) -> Stmt {
    Stmt { kind, span: SP }
}
fn store(buffer: &Buffer, indices: &[TirExpr], value: TirExpr) -> Stmt {
    stmt(StmtKind::BufferStore { buffer: buffer.clone(), indices: indices.to_vec(), value })
}
fn is_intlike(d: DataType) -> bool {
    d.is_int() || d.is_uint()
}
fn new_buffer(name: impl Into<String>, shape: Vec<TirExpr>, dtype: DataType) -> Buffer {
    Buffer::new(name, shape, dtype, "global".to_string(), SP)
}
fn point(buffer: &Buffer, indices: &[TirExpr]) -> BufferRegion {
    BufferRegion {
        buffer: buffer.clone(),
        region: indices.iter().map(|i| RegionDim::Point(i.clone())).collect(),
        span: SP,
    }
}
fn block(
    name: &str,
    iter_vars: Vec<IterVar>,
    reads: Vec<BufferRegion>,
    writes: Vec<BufferRegion>,
    body: Vec<Stmt>,
) -> Block {
    Block {
        name: name.to_string(),
        iter_vars,
        reads,
        writes,
        predicate: None,
        init: None,
        body,
        annotations: Default::default(),
    }
}
fn block_stmt(b: Block) -> Stmt {
    stmt(StmtKind::Block(Box::new(b)))
}

/// The lowest value of a dtype (TVM's `T.min_value`), as a literal: a reduction's
/// start for `max` and the padding of a max pool.
fn min_value(d: DataType) -> TirExpr {
    match d {
        _ if d.is_bool() => int_lit(0, d),
        _ if d.is_float() => float_lit(
            match d.bits {
                16 => -65504.0,
                32 => f32::MIN as f64,
                _ => f64::MIN,
            },
            d,
        ),
        _ => int_lit(spec_model::prim_eval::int_range(d).0.max(i64::MIN as i128) as i64, d),
    }
}

/// The highest value of a dtype (TVM's `T.max_value`).
fn max_value(d: DataType) -> TirExpr {
    match d {
        _ if d.is_bool() => int_lit(1, d),
        _ if d.is_float() => float_lit(
            match d.bits {
                16 => 65504.0,
                32 => f32::MAX as f64,
                _ => f64::MAX,
            },
            d,
        ),
        _ => int_lit(spec_model::prim_eval::int_range(d).1.min(i64::MAX as i128) as i64, d),
    }
}

/// A zero or one of dtype `d`.
fn zero_one(v: i64, d: DataType) -> TirExpr {
    if d.is_float() {
        float_lit(v as f64, d)
    } else {
        int_lit(v, d)
    }
}

/// How each dimension is spelled in a kernel: a literal (only where the Relax side
/// knows it) or a shape variable that a buffer parameter binds. One spelling per id.
struct Dims {
    map: Vec<(usize, TirExpr)>,
}

impl Dims {
    /// Chooses a spelling for every id among `exts`: size-1 dimensions are always
    /// literal (broadcast reads index them with 0), other known ones usually.
    fn new<'x>(g: &mut expr::Gen, exts: impl IntoIterator<Item = &'x Ext>) -> Dims {
        let mut map: Vec<(usize, TirExpr)> = Vec::new();
        for e in exts {
            if map.iter().any(|(id, _)| *id == e.id) {
                continue;
            }
            let spelled = match e.lit {
                Some(v) if v == 1 || g.coin(3, 4) => idx(v),
                _ => var(&PrimVar::shape_var(format!("n{}", map.len()))),
            };
            map.push((e.id, spelled));
        }
        Dims { map }
    }
    /// The extent of `e` (an id the constructor saw; else its literal or its bound).
    fn get(&self, e: &Ext) -> TirExpr {
        self.map.iter().find(|(id, _)| *id == e.id).map_or_else(|| idx(e.lit.unwrap_or(e.hi)), |(_, x)| x.clone())
    }
    fn shape(&self, dims: &[Ext]) -> Vec<TirExpr> {
        dims.iter().map(|e| self.get(e)).collect()
    }
}

/// Loop variables over `extents` and the matching block axes of `kinds`
/// (`T.grid` + `T.axis.remap`).
fn axes(names: &[String], extents: &[TirExpr], kinds: &[IterKind]) -> (Vec<PrimVar>, Vec<IterVar>) {
    let mut loops = Vec::new();
    let mut ivs = Vec::new();
    for ((n, e), &kind) in names.iter().zip(extents).zip(kinds) {
        let lv = PrimVar::new(n.as_str(), I64);
        let v = PrimVar::new(format!("v_{n}"), I64);
        ivs.push(IterVar { var: v, kind, begin: idx(0), end: e.clone(), binding: var(&lv) });
        loops.push(lv);
    }
    (loops, ivs)
}

/// `body` inside serial loops `loops` over `extents` (outermost first); the loop kinds
/// `kinds`, where given, replace `Serial`.
fn nest_kinds(loops: &[PrimVar], extents: &[TirExpr], kinds: &[ForKind], body: Vec<Stmt>) -> Vec<Stmt> {
    let mut s = body;
    for (k, (lv, e)) in loops.iter().zip(extents).enumerate().rev() {
        let kind = kinds.get(k).copied().unwrap_or(ForKind::Serial);
        s = vec![stmt(StmtKind::For { var: lv.clone(), begin: idx(0), end: e.clone(), kind, body: s })];
    }
    s
}

fn nest(loops: &[PrimVar], extents: &[TirExpr], body: Stmt) -> Stmt {
    nest_kinds(loops, extents, &[], vec![body]).pop().unwrap_or_else(|| stmt(StmtKind::Evaluate(idx(0))))
}

/// Axis names `ax0, ax1, ...`.
fn ax_names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|k| format!("{prefix}{k}")).collect()
}

/// A buffer parameter (`T.handle` + `T.match_buffer` when symbolic).
fn buffer_param(b: &Buffer) -> TirParam {
    TirParam { var: PrimVar::new(b.name().to_lowercase(), DataType::handle()), buffer: Some(b.clone()) }
}

/// The function: parameters, and the body inside a root block when it allocates or has
/// several stages (as TVM writes it).
fn finish(name: &str, params: Vec<TirParam>, body: Vec<Stmt>) -> PrimFunc {
    let allocates = body.iter().any(|s| matches!(s.kind, StmtKind::AllocBuffer(_)));
    let body =
        if body.len() > 1 || allocates { vec![block_stmt(block("root", vec![], vec![], vec![], body))] } else { body };
    let mut attrs = Attrs::default();
    attrs.insert("global_symbol", AttrValue::Str(name.to_string()));
    PrimFunc { params, body, attrs, span: SP }
}

/// The random choices of a kernel builder, over `u`.
fn gen<'a, 'b>(u: &'a mut Unstructured<'b>) -> expr::Gen<'a, 'b> {
    expr::Gen::new(u)
}
