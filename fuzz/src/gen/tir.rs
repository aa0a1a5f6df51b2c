//! Random TIR `PrimFunc`s for `R.call_tir`, valid by construction for any input bytes.
//!
//! A kernel loops over its output with `T.grid` and one `T.block` whose stored value is a
//! random expression over the inputs (loaded at the loop indices), literals, casts,
//! selects, comparisons and the float intrinsics; sometimes a `T.alloc_buffer` stage comes
//! first. Run-time safety for inputs with `|v| <= 8` (what the fuzzer feeds): every
//! integer subexpression carries an interval and stays within ±2^30, so no dtype
//! overflows (summands of an integer sum within ±2^16, so the sum fits int32 for
//! reduce extents up to 2^14); integer division is only by a nonzero literal; a float
//! reaches an integer only through a NaN-guarded clamp to [-100, 100], since the
//! interpreter traps on casting NaN, inf or an out-of-range float to an integer.

use arbitrary::Unstructured;
use spec_model::grammar::tir::{
    Block, Buffer, BufferRegion, ForKind, Intrinsic, IterKind, IterVar, PrimFunc, RegionDim, Stmt, StmtKind, TirExpr,
    TirExprKind, TirParam,
};
use spec_model::grammar::{AttrValue, Attrs, DataType, FloatLit, PrimBinOp, PrimVar};
use spec_model::Span;

/// What a generated kernel computes, so the Relax call site can write `out_sinfo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelKind {
    /// Output has the same shape as every input (all inputs share one shape).
    Elementwise,
    /// Output drops the last axis of the (common) input shape: a reduction with T.init over the last axis. Needs rank >= 1.
    ReduceLast,
}

const SP: Span = Span::SYNTHETIC;
const F32: DataType = DataType::FLOAT32;
const F64: DataType = DataType::float(64);
const I32: DataType = DataType::INT32;
const I64: DataType = DataType::INT64;
const BOOL: DataType = DataType::BOOL;
/// The dtypes kernels compute in.
const DTYPES: [DataType; 5] = [F32, F64, I32, I64, BOOL];
/// Integer subexpressions stay within ±2^30, so even int32 cannot overflow.
const INT_CAP: i128 = 1 << 30;
/// Summands of an integer sum stay within ±2^16: the accumulator fits int32 for
/// reduce extents up to 2^14.
const SUM_CAP: i128 = 1 << 16;
/// The magnitude of input elements the safety argument assumes.
const INPUT_BOUND: i128 = 8;
/// A float cast to an integer is first clamped to ±this.
const CLAMP: f64 = 100.0;
const MAX_DEPTH: u32 = 3;
/// The one-argument float intrinsics.
const UNARY: [Intrinsic; 9] = {
    use Intrinsic::*;
    [Exp, Log, Sqrt, Tanh, Sigmoid, Fabs, Floor, Ceil, Round]
};
/// Float literals exact in float32, so printing loses nothing.
const FLOATS: [f64; 11] = [0.0, 1.0, -1.0, 0.5, 2.0, -2.5, 3.0, 8.0, 0.125, -0.75, 100.0];

/// A closed interval bounding an integer (or bool) expression; unused for floats.
type Iv = (i128, i128);

/// A generated expression with its bound.
struct Ex {
    e: TirExpr,
    iv: Iv,
}

/// A buffer the expression may read, at fixed indices, and the bound of its elements.
struct Leaf {
    buffer: Buffer,
    indices: Vec<TirExpr>,
    iv: Iv,
    used: bool,
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
fn is_intlike(d: DataType) -> bool {
    d.is_int() || d.is_uint()
}

/// `float -> int` without a trap: `T.Cast(d, T.Select(x == x, T.max(T.min(x, 100), -100), 0))`.
/// A literal is converted right away.
fn clamp_cast(x: TirExpr, to: DataType) -> Ex {
    if let TirExprKind::FloatImm { value, .. } = &*x.kind {
        let v = if value.0.is_nan() { 0.0 } else { value.0.clamp(-CLAMP, CLAMP).trunc() };
        return Ex { e: int_lit(v as i64, to), iv: (v as i128, v as i128) };
    }
    let fd = x.dtype();
    let clamped = bin(PrimBinOp::Max, bin(PrimBinOp::Min, x.clone(), float_lit(CLAMP, fd)), float_lit(-CLAMP, fd));
    let guarded = mk(TirExprKind::Select {
        cond: bin(PrimBinOp::Eq, x.clone(), x),
        then_value: clamped,
        else_value: float_lit(0.0, fd),
    });
    Ex { e: cast(to, guarded), iv: (-(CLAMP as i128), CLAMP as i128) }
}

/// The random choices and the leaves in scope.
struct Gen<'a, 'b> {
    u: &'a mut Unstructured<'b>,
    leaves: Vec<Leaf>,
    /// The bound every integer subexpression must stay within.
    cap: i128,
}

impl Gen<'_, '_> {
    /// An index below `n`; 0 (the simplest choice) once the bytes run out.
    fn pick(&mut self, n: usize) -> usize {
        self.u.choose_index(n).unwrap_or(0)
    }
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        self.u.int_in_range(lo..=hi).unwrap_or(lo)
    }
    /// True with probability `num/den`; false once the bytes run out (`ratio` says true).
    fn coin(&mut self, num: u32, den: u32) -> bool {
        self.u.int_in_range(1..=den).is_ok_and(|x| x > den - num)
    }
    fn dtype(&mut self, choices: &[DataType]) -> DataType {
        choices[self.pick(choices.len())]
    }

    fn literal(&mut self, d: DataType) -> Ex {
        if d.is_float() {
            let v = FLOATS[self.pick(FLOATS.len())];
            Ex { e: float_lit(v, d), iv: (0, 0) }
        } else if d.is_bool() {
            let b = self.int(0, 1);
            Ex { e: int_lit(b, d), iv: (b as i128, b as i128) }
        } else {
            let v = self.int(-10, 10);
            Ex { e: int_lit(v, d), iv: (v as i128, v as i128) }
        }
    }

    /// A literal or a load of some leaf, converted to `d`.
    fn leaf(&mut self, d: DataType) -> Ex {
        if self.leaves.is_empty() || self.pick(3) == 0 {
            return self.literal(d);
        }
        let k = self.pick(self.leaves.len());
        let (s, iv) = (self.leaves[k].buffer.dtype(), self.leaves[k].iv);
        let e = load(&self.leaves[k].buffer, &self.leaves[k].indices);
        let ex = if s == d {
            Ex { e, iv }
        } else if d.is_bool() {
            Ex { e: cast(d, e), iv: (0, 1) }
        } else if is_intlike(d) && s.is_float() {
            clamp_cast(e, d)
        } else {
            Ex { e: cast(d, e), iv }
        };
        if !d.is_float() && (ex.iv.0 < -self.cap || ex.iv.1 > self.cap) {
            return self.literal(d);
        }
        self.leaves[k].used = true;
        ex
    }

    /// A random expression of dtype `d` at most `depth` operators deep.
    fn expr(&mut self, d: DataType, depth: u32) -> Ex {
        if depth == 0 || self.pick(3) == 0 {
            return self.leaf(d);
        }
        let depth = depth - 1;
        if d.is_float() {
            self.float_expr(d, depth)
        } else if d.is_bool() {
            self.bool_expr(depth)
        } else {
            self.int_expr(d, depth)
        }
    }

    /// `T.Select` (both sides evaluated) or `T.if_then_else` (one side) on a random condition.
    fn choice(&mut self, d: DataType, depth: u32) -> Ex {
        let c = self.expr(BOOL, depth).e;
        let (a, b) = (self.expr(d, depth), self.expr(d, depth));
        let iv = (a.iv.0.min(b.iv.0), a.iv.1.max(b.iv.1));
        let e = if self.coin(1, 2) {
            mk(TirExprKind::Call { op: Intrinsic::IfThenElse, args: vec![c, a.e, b.e] })
        } else {
            mk(TirExprKind::Select { cond: c, then_value: a.e, else_value: b.e })
        };
        Ex { e, iv }
    }

    fn float_expr(&mut self, d: DataType, depth: u32) -> Ex {
        use PrimBinOp::*;
        let e = match self.pick(6) {
            0 => {
                let op = [Add, Sub, Mul, Min, Max][self.pick(5)];
                bin(op, self.expr(d, depth).e, self.expr(d, depth).e)
            }
            1 => {
                let op = UNARY[self.pick(UNARY.len())];
                mk(TirExprKind::Call { op, args: vec![self.expr(d, depth).e] })
            }
            2 => mk(TirExprKind::Call { op: Intrinsic::Pow, args: vec![self.expr(d, depth).e, self.expr(d, depth).e] }),
            3 => return self.choice(d, depth),
            _ => {
                let others: Vec<DataType> = DTYPES.into_iter().filter(|&s| s != d).collect();
                let s = self.dtype(&others);
                cast(d, self.expr(s, depth).e)
            }
        };
        Ex { e, iv: (0, 0) }
    }

    fn int_expr(&mut self, d: DataType, depth: u32) -> Ex {
        use PrimBinOp::*;
        match self.pick(6) {
            0 => {
                let op = [Add, Sub, Mul][self.pick(3)];
                let (a, b) = (self.expr(d, depth), self.expr(d, depth));
                let ((p, q), (r, s)) = (a.iv, b.iv);
                let iv = match op {
                    Add => (p + r, q + s),
                    Sub => (p - s, q - r),
                    _ => {
                        let xs = [p * r, p * s, q * r, q * s];
                        (xs.into_iter().min().unwrap_or(0), xs.into_iter().max().unwrap_or(0))
                    }
                };
                if iv.0 < -self.cap || iv.1 > self.cap {
                    // Could overflow: keep just an operand.
                    return a;
                }
                Ex { e: bin(op, a.e, b.e), iv }
            }
            1 => {
                let op = [Min, Max][self.pick(2)];
                let (a, b) = (self.expr(d, depth), self.expr(d, depth));
                let iv = match op {
                    Min => (a.iv.0.min(b.iv.0), a.iv.1.min(b.iv.1)),
                    _ => (a.iv.0.max(b.iv.0), a.iv.1.max(b.iv.1)),
                };
                Ex { e: bin(op, a.e, b.e), iv }
            }
            2 => {
                // Division only by a nonzero literal; floor forms by a positive one. (No float
                // division: the printer spells `Div` `T.truncdiv`, which TVM refuses on floats.)
                let op = [FloorDiv, FloorMod, Div, Mod][self.pick(4)];
                let a = self.expr(d, depth);
                let c = match op {
                    FloorDiv | FloorMod => self.int(1, 5),
                    _ => [1, 2, 3, 5, -1, -2, -3][self.pick(7)],
                } as i128;
                let (lo, hi) = a.iv;
                let iv = match op {
                    FloorDiv => (lo.div_euclid(c), hi.div_euclid(c)),
                    FloorMod => (0, c - 1),
                    Div if c > 0 => (lo / c, hi / c),
                    Div => (hi / c, lo / c),
                    _ => (-(c.abs() - 1), c.abs() - 1),
                };
                Ex { e: bin(op, a.e, int_lit(c as i64, d)), iv }
            }
            3 => self.choice(d, depth),
            4 => {
                let others: Vec<DataType> = [I32, I64, BOOL].into_iter().filter(|&s| s != d).collect();
                let s = self.dtype(&others);
                let a = self.expr(s, depth);
                Ex { e: cast(d, a.e), iv: a.iv }
            }
            _ => {
                let s = self.dtype(&[F32, F64]);
                let x = self.expr(s, depth).e;
                clamp_cast(x, d)
            }
        }
    }

    fn bool_expr(&mut self, depth: u32) -> Ex {
        use PrimBinOp::*;
        let e = match self.pick(5) {
            0 => {
                let t = self.dtype(&DTYPES);
                let op = [Eq, Ne, Lt, Le, Gt, Ge][self.pick(6)];
                bin(op, self.expr(t, depth).e, self.expr(t, depth).e)
            }
            1 => mk(TirExprKind::Not(self.expr(BOOL, depth).e)),
            2 => {
                let op = [And, Or][self.pick(2)];
                bin(op, self.expr(BOOL, depth).e, self.expr(BOOL, depth).e)
            }
            3 => return self.choice(BOOL, depth),
            _ => {
                let t = self.dtype(&DTYPES[..4]);
                cast(BOOL, self.expr(t, depth).e)
            }
        };
        Ex { e, iv: (0, 1) }
    }

    /// The leaves read so far, as `T.reads` regions (then forgets them).
    fn take_reads(&mut self) -> Vec<BufferRegion> {
        let mut out = Vec::new();
        for l in self.leaves.iter_mut().filter(|l| l.used) {
            l.used = false;
            out.push(point(&l.buffer, &l.indices));
        }
        out
    }
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

/// The block inside its loop nest (a rank-0 kernel has no loops).
fn nest(loops: &[PrimVar], dims: &[PrimVar], block: Block) -> Stmt {
    let mut s = stmt(StmtKind::Block(Box::new(block)));
    for (lv, d) in loops.iter().zip(dims).rev() {
        let (begin, end) = (int_lit(0, d.dtype()), var(d));
        s = stmt(StmtKind::For { var: lv.clone(), begin, end, kind: ForKind::Serial, body: vec![s] });
    }
    s
}

fn block(
    name: &str,
    iter_vars: Vec<IterVar>,
    reads: Vec<BufferRegion>,
    writes: Vec<BufferRegion>,
    body: Vec<Stmt>,
) -> Block {
    Block { name: name.to_string(), iter_vars, reads, writes, predicate: None, init: None, body }
}

/// The inputs, read at `idx`.
fn input_leaves(inputs: &[Buffer], idx: &[TirExpr]) -> Vec<Leaf> {
    let bound = |d: DataType| match d {
        _ if d.is_float() => (0, 0),
        _ if d.is_bool() => (0, 1),
        _ => (-INPUT_BOUND, INPUT_BOUND),
    };
    inputs
        .iter()
        .map(|b| Leaf { buffer: b.clone(), indices: idx.to_vec(), iv: bound(b.dtype()), used: false })
        .collect()
}

fn point(buffer: &Buffer, indices: &[TirExpr]) -> BufferRegion {
    BufferRegion {
        buffer: buffer.clone(),
        region: indices.iter().map(|i| RegionDim::Point(i.clone())).collect(),
        span: SP,
    }
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

    let mut g = Gen { u, leaves: Vec::new(), cap: INT_CAP };
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
        body.push(nest(&loops, &dims, block("stage", ivs, reads, vec![point(&tmp, &idx)], vec![store])));
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
        g.leaves.push(Leaf { buffer: tmp, indices: idx.clone(), iv, used: false });
    }
    let write = vec![point(&out, out_idx)];
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
        let store = stmt(StmtKind::BufferStore { buffer: out.clone(), indices: out_idx.to_vec(), value: ex.e });
        let reads = g.take_reads();
        block("compute", ivs, reads, write, vec![store])
    };
    if g.coin(1, 4) {
        // `T.reads`/`T.writes` are optional in TVMScript.
        main.reads.clear();
        main.writes.clear();
    }
    body.push(nest(&loops, &dims, main));
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

#[cfg(test)]
mod tests {
    use super::*;
    use oracle::eval::run::{eval_text, prepare};
    use oracle::eval::{Limits, Machine};
    use spec_model::grammar::{BaseFunc, GlobalVar, IRModule};
    use spec_model::text::{check_round_trip, check_round_trip_in, Dialect};
    use std::rc::Rc;

    /// xorshift64: test inputs without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> usize {
            (self.next() % n) as usize
        }
    }

    /// A random `R.const` literal of `shape` with elements of magnitude at most 8.
    fn literal(rng: &mut Rng, shape: &[u64], d: DataType) -> String {
        let Some((&n, rest)) = shape.split_first() else {
            let v = rng.below(17) as i64 - 8;
            return if d.is_bool() {
                (if v > 0 { "True" } else { "False" }).to_string()
            } else if d.is_float() {
                format!("{:?}", v as f64 / [1.0, 2.0, 4.0][rng.below(3)])
            } else {
                v.to_string()
            };
        };
        let items: Vec<String> = (0..n).map(|_| literal(rng, rest, d)).collect();
        format!("[{}]", items.join(", "))
    }

    /// Generates one kernel and checks it: it round-trips through the printer and, called
    /// from a Relax `main` on four sets of random small inputs, passes the checker and runs
    /// without an error. Returns the printed module.
    fn check(
        bytes: &[u8],
        kind: KernelKind,
        rank: usize,
        ins: &[DataType],
        out: DataType,
        rng: &mut Rng,
    ) -> Result<String, String> {
        let f = gen_prim_func(&mut Unstructured::new(bytes), "kernel", kind, rank, ins, out);
        let m = IRModule {
            name: "Module".to_string(),
            functions: vec![(GlobalVar::new("kernel"), BaseFunc::Tir(Rc::new(f)))],
            span: SP,
        };
        let printed = check_round_trip(&m)?;
        check_round_trip_in(&m, Dialect::Tvm027)?;

        let names = ["n", "m", "p"];
        let out_rank = if kind == KernelKind::ReduceLast { rank - 1 } else { rank };
        let tuple =
            |xs: Vec<String>| if xs.len() == 1 { format!("({},)", xs[0]) } else { format!("({})", xs.join(", ")) };
        let in_shape = tuple(names[..rank].iter().map(|n| format!("\"{n}\"")).collect());
        let params: Vec<String> =
            ins.iter().enumerate().map(|(k, d)| format!("x{k}: R.Tensor({in_shape}, \"{d}\")")).collect();
        let decls: String = names[..out_rank].iter().map(|n| format!("        {n} = T.int64()\n")).collect();
        let args = tuple((0..ins.len()).map(|k| format!("x{k}")).collect());
        let out_shape = tuple(names[..out_rank].iter().map(|n| n.to_string()).collect());
        let src = format!(
            "{printed}\n    @R.function\n    def main({}):\n{decls}        z = R.call_tir(cls.kernel, {args}, \
             out_sinfo=R.Tensor({out_shape}, \"{out}\"))\n        return z\n",
            params.join(", ")
        );
        // Each call has its own extents (1..=3; the last may be 0, an empty reduction).
        let calls: Vec<String> = (0..4)
            .map(|_| {
                let shape: Vec<u64> = (0..rank)
                    .map(|k| if k + 1 == rank && rng.below(6) == 0 { 0 } else { 1 + rng.below(3) as u64 })
                    .collect();
                let consts: Vec<String> =
                    ins.iter().map(|&d| format!("R.const({}, \"{d}\")", literal(rng, &shape, d))).collect();
                format!("main({})", consts.join(", "))
            })
            .collect();
        // What `run_call_text` does, preparing once for all the calls (and on this
        // thread: the programs are shallow, and a big-stack thread per kernel is slow).
        let m = prepare("gen", &src)?;
        for call in &calls {
            if let Err(e) = eval_text(&mut Machine::new(&m, Limits::default()), call)? {
                return Err(format!("{call}: {e}\n{src}"));
            }
        }
        Ok(printed)
    }

    #[test]
    fn random_kernels_round_trip_check_and_run() {
        let features: Vec<&str> = "T.alloc_buffer|T.init()|T.reads|T.Select(|T.if_then_else(|T.Cast(|T.pow(|T.exp(|\
             T.sigmoid(|T.max(|T.min(|T.truncdiv(|T.truncmod(| // | % | * |not | and | or | == | < |Y[()]|\"SSR\"|\
             \"bool\"|\"float64\""
            .split('|')
            .collect();
        let mut seen = vec![0; features.len()];
        for seed in 0..2000u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let len = [0, 1 + rng.below(15), rng.below(400), rng.below(400)][rng.below(4)];
            let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let kind = if rng.below(2) == 0 { KernelKind::Elementwise } else { KernelKind::ReduceLast };
            let rank = rng.below(4).max(usize::from(kind == KernelKind::ReduceLast));
            let ins: Vec<DataType> = (0..1 + rng.below(3)).map(|_| DTYPES[rng.below(5)]).collect();
            let out = DTYPES[rng.below(5)];
            let printed = check(&bytes, kind, rank, &ins, out, &mut rng).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            for (n, f) in seen.iter_mut().zip(&features) {
                *n += usize::from(printed.contains(f));
            }
        }
        // The generator still reaches every construct.
        for (n, f) in seen.iter().zip(&features) {
            assert!(*n > 0, "no kernel uses {f}");
        }
    }

    #[test]
    fn no_bytes_gives_valid_kernels() {
        let mut rng = Rng(7);
        for kind in [KernelKind::Elementwise, KernelKind::ReduceLast] {
            for rank in usize::from(kind == KernelKind::ReduceLast)..=3 {
                for (i, o) in DTYPES.iter().flat_map(|&i| DTYPES.map(|o| (i, o))) {
                    check(&[], kind, rank, &[i, o], o, &mut rng).unwrap_or_else(|e| panic!("{kind:?} {rank}: {e}"));
                }
            }
        }
    }

    #[test]
    fn arguments_outside_the_contract_do_not_panic() {
        let bytes: Vec<u8> = (0..=255).collect();
        let odd = [DataType::float(16), DataType::uint(8), DataType::int(8)];
        for (kind, rank, ins) in [
            (KernelKind::ReduceLast, 0, &[F32][..]),
            (KernelKind::Elementwise, 7, &[I32][..]),
            (KernelKind::ReduceLast, 2, &[][..]),
            (KernelKind::Elementwise, 2, &odd[..]),
        ] {
            let f = gen_prim_func(&mut Unstructured::new(&bytes), "k", kind, rank, ins, odd[0]);
            assert_eq!(f.params.len(), ins.len() + 1);
        }
    }
}
