//! Random TIR expressions over leaves (buffer loads, scalars), literals, casts, selects,
//! comparisons, the float intrinsics and the bitwise ones, with an interval bound on every integer
//! subexpression so that none leaves its dtype or ±`cap` (see the module header).

use super::{bin, cast, float_lit, int_lit, is_intlike, mk, point, BOOL, DTYPES, F32, F64, I32, I64};
use arbitrary::Unstructured;
use spec_model::grammar::tir::{Buffer, BufferRegion, Intrinsic, TirExpr, TirExprKind};
use spec_model::grammar::{DataType, PrimBinOp};

/// Integer subexpressions stay within ±2^30, so even int32 cannot overflow.
pub(super) const INT_CAP: i128 = 1 << 30;
/// Summands of an integer sum stay within ±2^16: the accumulator fits int32 for
/// reduce extents up to 2^14.
pub(super) const SUM_CAP: i128 = 1 << 16;
/// The magnitude of input elements the safety argument assumes.
pub(super) const INPUT_BOUND: i128 = 8;
/// A float cast to an integer is first clamped to ±this (and into the dtype).
const CLAMP: i128 = 100;
pub(super) const MAX_DEPTH: u32 = 3;
/// The one-argument float intrinsics.
pub(super) const UNARY: [Intrinsic; 13] = {
    use Intrinsic::*;
    [Exp, Log, Sqrt, Tanh, Sigmoid, Fabs, Floor, Ceil, Round, Rsqrt, Sin, Cos, Erf]
};
/// Float literals exact in float16 (so in every float dtype), so printing loses nothing.
const FLOATS: [f64; 11] = [0.0, 1.0, -1.0, 0.5, 2.0, -2.5, 3.0, 8.0, 0.125, -0.75, 100.0];

/// A closed interval bounding an integer (or bool) expression; unused for floats.
pub(super) type Iv = (i128, i128);

/// A generated expression with its bound.
pub(super) struct Ex {
    pub e: TirExpr,
    pub iv: Iv,
}

/// Something an expression may read: a buffer element (with its `T.reads` region) or a
/// scalar, and the bound of its values.
pub(super) struct Leaf {
    pub e: TirExpr,
    pub iv: Iv,
    pub region: Option<BufferRegion>,
    pub used: bool,
}

impl Leaf {
    /// `buffer[indices]` whose elements lie in `iv`.
    pub fn load(buffer: &Buffer, indices: &[TirExpr], iv: Iv) -> Leaf {
        Leaf { e: super::load(buffer, indices), iv, region: Some(point(buffer, indices)), used: false }
    }
    /// An element of an input tensor (bounded as the fuzzer's inputs are).
    pub fn input(buffer: &Buffer, indices: &[TirExpr]) -> Leaf {
        Leaf::load(buffer, indices, input_bound(buffer.dtype()))
    }
    /// A scalar expression (a parameter, an axis) with values in `iv`.
    pub fn scalar(e: TirExpr, iv: Iv) -> Leaf {
        Leaf { e, iv, region: None, used: false }
    }
}

/// The bound of an input element of dtype `d`: `|v| <= 8`, `uint8` anywhere (inputs of
/// that dtype come from `R.astype`, which wraps negative values).
pub(super) fn input_bound(d: DataType) -> Iv {
    match d {
        _ if d.is_float() => (0, 0),
        _ if d.is_bool() => (0, 1),
        _ if d.is_uint() => spec_model::prim_eval::int_range(d),
        _ => (-INPUT_BOUND, INPUT_BOUND),
    }
}

/// The values an integer expression of dtype `d` may take: its dtype's range within ±`cap`.
fn allowed(d: DataType, cap: i128) -> Iv {
    if d.is_bool() {
        return (0, 1);
    }
    let (lo, hi) = spec_model::prim_eval::int_range(d);
    (lo.max(-cap), hi.min(cap))
}

/// `a // c` rounded toward negative infinity (TIR's `floordiv`).
fn floor_div(a: i128, c: i128) -> i128 {
    let q = a / c;
    if a % c != 0 && ((a < 0) != (c < 0)) {
        q - 1
    } else {
        q
    }
}

fn within(iv: Iv, r: Iv) -> bool {
    r.0 <= iv.0 && iv.1 <= r.1
}

/// `float -> int` without a trap: `T.Cast(d, T.Select(x == x, T.max(T.min(x, hi), lo), 0))`
/// with `[lo, hi]` within ±100 and the dtype. A literal is converted right away.
pub(super) fn clamp_cast(x: TirExpr, to: DataType) -> Ex {
    let (lo, hi) = allowed(to, CLAMP);
    if let TirExprKind::FloatImm { value, .. } = &*x.kind {
        let v = if value.0.is_nan() { 0.0 } else { value.0.clamp(lo as f64, hi as f64).trunc() };
        return Ex { e: int_lit(v as i64, to), iv: (v as i128, v as i128) };
    }
    let fd = x.dtype();
    let clamped =
        bin(PrimBinOp::Max, bin(PrimBinOp::Min, x.clone(), float_lit(hi as f64, fd)), float_lit(lo as f64, fd));
    let guarded = mk(TirExprKind::Select {
        cond: bin(PrimBinOp::Eq, x.clone(), x),
        then_value: clamped,
        else_value: float_lit(0.0, fd),
    });
    Ex { e: cast(to, guarded), iv: (lo.min(0), hi.max(0)) }
}

/// The random choices and the leaves in scope.
pub(super) struct Gen<'a, 'b> {
    pub u: &'a mut Unstructured<'b>,
    pub leaves: Vec<Leaf>,
    /// The bound every integer subexpression must stay within.
    pub cap: i128,
    /// The dtypes subexpressions may compute in.
    pub dtypes: Vec<DataType>,
}

impl<'a, 'b> Gen<'a, 'b> {
    pub fn new(u: &'a mut Unstructured<'b>) -> Gen<'a, 'b> {
        Gen { u, leaves: Vec::new(), cap: INT_CAP, dtypes: DTYPES.to_vec() }
    }
}

impl Gen<'_, '_> {
    /// An index below `n`; 0 (the simplest choice) once the bytes run out.
    pub fn pick(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        self.u.choose_index(n).unwrap_or(0)
    }
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        self.u.int_in_range(lo..=hi).unwrap_or(lo)
    }
    /// True with probability `num/den`; false once the bytes run out.
    pub fn coin(&mut self, num: u32, den: u32) -> bool {
        self.u.int_in_range(1..=den.max(1)).is_ok_and(|x| x > den - num.min(den))
    }
    pub fn dtype(&mut self, choices: &[DataType]) -> DataType {
        choices.get(self.pick(choices.len())).copied().unwrap_or(F32)
    }
    pub fn choose<T: Copy>(&mut self, xs: &[T], default: T) -> T {
        xs.get(self.pick(xs.len())).copied().unwrap_or(default)
    }

    pub fn literal(&mut self, d: DataType) -> Ex {
        if d.is_float() {
            let v = FLOATS[self.pick(FLOATS.len())];
            Ex { e: float_lit(v, d), iv: (0, 0) }
        } else if d.is_bool() {
            let b = self.int(0, 1);
            Ex { e: int_lit(b, d), iv: (b as i128, b as i128) }
        } else {
            let (lo, hi) = allowed(d, 10);
            let v = self.int(lo as i64, hi as i64);
            Ex { e: int_lit(v, d), iv: (v as i128, v as i128) }
        }
    }

    /// A literal or a leaf, converted to `d`.
    pub fn leaf(&mut self, d: DataType) -> Ex {
        if self.leaves.is_empty() || self.pick(3) == 0 {
            return self.literal(d);
        }
        let k = self.pick(self.leaves.len());
        self.leaf_at(k, d).unwrap_or_else(|| self.literal(d))
    }

    /// Leaf `k` converted to `d`, or `None` when its values may not fit `d`.
    fn leaf_at(&mut self, k: usize, d: DataType) -> Option<Ex> {
        let (e, iv) = (self.leaves.get(k)?.e.clone(), self.leaves[k].iv);
        let s = e.dtype();
        let ex = if s == d {
            Ex { e, iv }
        } else if d.is_bool() {
            Ex { e: cast(d, e), iv: (0, 1) }
        } else if is_intlike(d) && s.is_float() {
            clamp_cast(e, d)
        } else {
            Ex { e: cast(d, e), iv }
        };
        if !d.is_float() && !within(ex.iv, allowed(d, self.cap)) {
            return None;
        }
        self.leaves[k].used = true;
        Some(ex)
    }

    /// An elementwise body: a legalized operator's ([`Gen::op_body`]) or a random
    /// expression (a fused kernel's) that reads some leaf.
    pub fn body(&mut self, d: DataType, depth: u32) -> Ex {
        if self.coin(1, 2) {
            return self.op_body(d);
        }
        let ex = self.expr(d, depth);
        if self.read_any() || self.leaves.is_empty() {
            ex
        } else {
            self.op_body(d)
        }
    }

    /// Whether some leaf was read since the last [`Gen::take_reads`].
    pub fn read_any(&self) -> bool {
        self.leaves.iter().any(|l| l.used)
    }

    /// A legalized operator's body: one unary or binary operation on leaves (converted
    /// to `d`; comparisons in the first leaf's dtype), reading at least one leaf.
    pub fn op_body(&mut self, d: DataType) -> Ex {
        use PrimBinOp::*;
        let n = self.leaves.len();
        if n == 0 {
            return self.expr(d, 1);
        }
        let (i, j) = (self.pick(n), self.pick(n));
        if d.is_bool() && self.coin(1, 2) {
            // A comparison (R.less, R.equal, ...) in the first operand's dtype.
            let s = self.leaves[i].e.dtype();
            let x = self.leaf_at(i, s);
            let y = self.leaf_at(j, s).unwrap_or_else(|| self.literal(s));
            if let Some(x) = x {
                let op = [Eq, Ne, Lt, Le, Gt, Ge][self.pick(6)];
                return Ex { e: bin(op, x.e, y.e), iv: (0, 1) };
            }
        }
        let Some(a) = self.leaf_at(i, d) else { return self.expr(d, 1) };
        let b = self.leaf_at(j, d).unwrap_or_else(|| self.literal(d));
        let unary = self.coin(1, 3);
        if d.is_bool() {
            let e = match (unary, self.pick(2)) {
                (true, _) => mk(TirExprKind::Not(a.e)),
                (false, 0) => bin(And, a.e, b.e),
                _ => bin(Or, a.e, b.e),
            };
            return Ex { e, iv: (0, 1) };
        }
        if d.is_float() {
            let e = if unary {
                match self.pick(UNARY.len() + 1) {
                    0 => bin(Sub, float_lit(0.0, d), a.e),
                    k => mk(TirExprKind::Call { op: UNARY[k - 1], args: vec![a.e] }),
                }
            } else {
                bin([Add, Sub, Mul, Min, Max][self.pick(5)], a.e, b.e)
            };
            return Ex { e, iv: (0, 0) };
        }
        let ((p, q), (r, s)) = (a.iv, b.iv);
        let (e, iv) = if unary {
            // negative / abs
            if self.coin(1, 2) {
                (bin(Sub, int_lit(0, d), a.e.clone()), (-q, -p))
            } else {
                (mk(TirExprKind::Call { op: Intrinsic::Fabs, args: vec![a.e.clone()] }), (0, p.abs().max(q.abs())))
            }
        } else {
            let op = [Add, Sub, Mul, Min, Max][self.pick(5)];
            let iv = match op {
                Add => (p + r, q + s),
                Sub => (p - s, q - r),
                Mul => {
                    let xs = [p * r, p * s, q * r, q * s];
                    (xs.into_iter().min().unwrap_or(0), xs.into_iter().max().unwrap_or(0))
                }
                Min => (p.min(r), q.min(s)),
                _ => (p.max(r), q.max(s)),
            };
            (bin(op, a.e.clone(), b.e), iv)
        };
        if within(iv, allowed(d, self.cap)) {
            Ex { e, iv }
        } else {
            a
        }
    }

    /// A random expression of dtype `d` at most `depth` operators deep.
    pub fn expr(&mut self, d: DataType, depth: u32) -> Ex {
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
                // Division by anything: IEEE's infinities and NaNs are values here.
                let op = [Add, Sub, Mul, Min, Max, Div][self.pick(6)];
                bin(op, self.expr(d, depth).e, self.expr(d, depth).e)
            }
            1 => {
                let op = UNARY[self.pick(UNARY.len())];
                mk(TirExprKind::Call { op, args: vec![self.expr(d, depth).e] })
            }
            2 => mk(TirExprKind::Call { op: Intrinsic::Pow, args: vec![self.expr(d, depth).e, self.expr(d, depth).e] }),
            3 => return self.choice(d, depth),
            _ => {
                let others: Vec<DataType> = self.dtypes.iter().copied().filter(|&s| s != d).collect();
                let s = self.dtype(&others);
                cast(d, self.expr(s, depth).e)
            }
        };
        Ex { e, iv: (0, 0) }
    }

    /// `a & b`, `a | b`, `a ^ b`, `~a`, `a << c`, `a >> c` (`c` a literal below the
    /// width): the bitwise operations stay within the power-of-two envelope of their
    /// operands, shifts scale the bound by `2**c`.
    fn bitwise_expr(&mut self, d: DataType, depth: u32) -> Ex {
        use Intrinsic::*;
        let range = allowed(d, self.cap);
        let op = [BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot, ShiftLeft, ShiftRight][self.pick(6)];
        let a = self.expr(d, depth);
        let (p, q) = a.iv;
        let call = |op, args| mk(TirExprKind::Call { op, args });
        let (e, iv) = match op {
            BitwiseNot if d.is_uint() => {
                let max = spec_model::prim_eval::int_range(d).1;
                (call(op, vec![a.e.clone()]), (max - q, max - p))
            }
            BitwiseNot => (call(op, vec![a.e.clone()]), (-q - 1, -p - 1)),
            ShiftLeft | ShiftRight => {
                let c = self.int(0, i64::from(d.bits.min(4)) - 1);
                let iv = if op == ShiftLeft { (p << c, q << c) } else { (p >> c, q >> c) };
                (call(op, vec![a.e.clone(), int_lit(c, d)]), iv)
            }
            _ => {
                let b = self.expr(d, depth);
                let (r, s) = b.iv;
                // Every value lies in [-2^k, 2^k): so do the bitwise results.
                let m = [p, q, r, s].iter().map(|v| if *v < 0 { -v } else { v + 1 }).max().unwrap_or(1);
                let env = (m.max(1) as u128).next_power_of_two() as i128;
                let iv = if p.min(r) < 0 { (-env, env - 1) } else { (0, env - 1) };
                (call(op, vec![a.e.clone(), b.e]), iv)
            }
        };
        if within(iv, range) {
            Ex { e, iv }
        } else {
            a
        }
    }

    fn int_expr(&mut self, d: DataType, depth: u32) -> Ex {
        use PrimBinOp::*;
        let range = allowed(d, self.cap);
        match self.pick(7) {
            6 => self.bitwise_expr(d, depth),
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
                if !within(iv, range) {
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
                // Division only by a nonzero literal, an unsigned dividend by a positive one.
                let op = [FloorDiv, FloorMod, Div, Mod][self.pick(4)];
                let a = self.expr(d, depth);
                let c = if d.is_uint() { self.int(1, 5) } else { [1, 2, 3, 5, -1, -2, -3][self.pick(7)] } as i128;
                let (lo, hi) = a.iv;
                let iv = match op {
                    FloorDiv if c > 0 => (floor_div(lo, c), floor_div(hi, c)),
                    FloorDiv => (floor_div(hi, c), floor_div(lo, c)),
                    FloorMod if c > 0 => (0, c - 1),
                    FloorMod => (c + 1, 0),
                    Div if c > 0 => (lo / c, hi / c),
                    Div => (hi / c, lo / c),
                    _ => (-(c.abs() - 1), c.abs() - 1),
                };
                if !within(iv, range) {
                    return a;
                }
                Ex { e: bin(op, a.e, int_lit(c as i64, d)), iv }
            }
            3 => self.choice(d, depth),
            4 => {
                let others: Vec<DataType> = [I32, I64, BOOL]
                    .into_iter()
                    .chain(self.dtypes.iter().copied().filter(|s| is_intlike(*s)))
                    .filter(|&s| s != d)
                    .collect();
                let s = self.dtype(&others);
                let a = self.expr(s, depth);
                if !within(a.iv, range) {
                    return self.literal(d);
                }
                Ex { e: cast(d, a.e), iv: a.iv }
            }
            _ => {
                let floats: Vec<DataType> = self.dtypes.iter().copied().filter(|s| s.is_float()).collect();
                let s = if floats.is_empty() { self.dtype(&[F32, F64]) } else { self.dtype(&floats) };
                let x = self.expr(s, depth).e;
                clamp_cast(x, d)
            }
        }
    }

    fn bool_expr(&mut self, depth: u32) -> Ex {
        use PrimBinOp::*;
        let e = match self.pick(5) {
            0 => {
                let ds = self.dtypes.clone();
                let t = self.dtype(&ds);
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
                let ds: Vec<DataType> = self.dtypes.iter().copied().filter(|d| !d.is_bool()).collect();
                let t = self.dtype(&ds);
                cast(BOOL, self.expr(t, depth).e)
            }
        };
        Ex { e, iv: (0, 1) }
    }

    /// The buffer elements read so far, as `T.reads` regions (then forgets them).
    pub fn take_reads(&mut self) -> Vec<BufferRegion> {
        let mut out = Vec::new();
        for l in self.leaves.iter_mut().filter(|l| l.used) {
            l.used = false;
            if let Some(r) = &l.region {
                if !out.contains(r) {
                    out.push(r.clone());
                }
            }
        }
        out
    }
}
