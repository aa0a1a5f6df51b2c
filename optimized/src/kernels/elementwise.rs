//! Elementwise operators with NumPy broadcasting: arithmetic, comparisons, logical operators, unary functions, `softmax`, `where`, `astype`.
//!
//! Each kernel checks its arguments in the oracle's order (the error kinds must agree),
//! dispatches once on the dtype ([`with_num!`]) and runs the row loops of [`lanes`]
//! over typed slices, vectorized and split across threads by [`simd`](super::simd).

use super::common::{broadcast, layout_bug, operand, read, write};
use super::convert::convert;
use super::lanes::{map_parts, select, zip2, Lane};
use super::simd::{self, loops, Exec, FloatElem, Level};
use super::unary_math;
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::scalar::{Num, Real, B8};
use crate::tensor::Tensor;
use crate::value::Value;
use crate::with_num;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    Add,
    Subtract,
    Multiply,
    Divide,
    FloorDivide,
    Power,
    Maximum,
    Minimum,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    Negative,
    Abs,
    Exp,
    Log,
    Sqrt,
    Tanh,
    Sigmoid,
    Relu,
    // Unary math and activations (`unary_math.rs`).
    Erf,
    Rsqrt,
    Sin,
    Cos,
    Floor,
    Ceil,
    Round,
    Sign,
    Square,
    Gelu,
    GeluTanh,
    Silu,
}

/// Two tensor operands (exactly two arguments).
fn two<'v>(cx: &KernelCx, args: &'v [Value]) -> Result<(&'v Rc<Tensor>, &'v Rc<Tensor>)> {
    cx.arity(args, 2)?;
    Ok((operand(cx, args, 0, "the first operand")?, operand(cx, args, 1, "the second operand")?))
}

fn same_dtype(cx: &KernelCx, a: &Tensor, b: &Tensor) -> Result<()> {
    if a.dtype() != b.dtype() {
        return Err(cx.error(format!("operands have different dtypes {} and {}", a.dtype(), b.dtype())));
    }
    Ok(())
}

/// Operand `what` must be a `bool` tensor.
fn bools(cx: &KernelCx, t: &Tensor, what: &str) -> Result<()> {
    if t.dtype() != DType::Bool {
        return Err(cx.error(format!("{what} must have dtype bool, not {}", t.dtype())));
    }
    Ok(())
}

/// `f` of `a` and `b` broadcast to `shape`, into a new tensor of `dtype`.
fn binary<T: Num, U: Num>(
    cx: &KernelCx,
    (a, b): (&Tensor, &Tensor),
    shape: &[u64],
    dtype: DType,
    f: impl Fn(T, T) -> U + Sync,
) -> Result<Value> {
    let (x, y) = (read::<T>(cx, a, "the first operand")?, read::<T>(cx, b, "the second operand")?);
    let out = cx.alloc_for_overwrite(dtype, shape)?;
    let exec = Exec::of(cx);
    zip2(exec, shape, &mut write::<U>(cx, &out)?, (&x, a.shape()), (&y, b.shape()), f).map_err(|_| layout_bug(cx))?;
    Ok(Value::tensor(out))
}

/// `f` of each element of `a`, into a new tensor of `a`'s shape and `dtype`.
fn map<T: Num, U: Num>(cx: &KernelCx, a: &Tensor, dtype: DType, f: impl Fn(T) -> U + Sync) -> Result<Value> {
    let x = read::<T>(cx, a, "the operand")?;
    let out = cx.alloc_for_overwrite(dtype, a.shape())?;
    super::lanes::map(Exec::of(cx), &mut write::<U>(cx, &out)?, &x, f);
    Ok(Value::tensor(out))
}

/// OP-add, OP-subtract, OP-multiply, OP-divide, OP-floor_divide, OP-power,
/// OP-maximum, OP-minimum: elementwise with NumPy broadcasting in the operands' dtype.
/// Integers wrap; `divide` truncates, `floor_divide` floors; an integer (or `bool`)
/// divisor 0 is `DivisionByZero`; an integer to a negative power is an `OpError`.
/// Floats are IEEE (`floor_divide` is `floor(x / y)`); `maximum`/`minimum` give NaN when
/// either operand is NaN; `bool` is `uint1`. Errors (`OpError`): not two tensors;
/// different dtypes; shapes that do not broadcast.
pub fn arith(l: &Lowering, op: Arith) -> Box<dyn Kernel> {
    Box::new(ArithKernel { op, typed: Typed::of(l, arith_fn) })
}

/// A kernel instance for one dtype, chosen at compile time when the static StructInfo
/// gives the operands' dtype, else when the call runs.
struct Typed<F> {
    dtype: DType,
    f: F,
}

impl<F: Copy> Typed<F> {
    /// The instance for the dtype the operands statically share (unary: the operand's).
    fn of(l: &Lowering, pick: fn(DType) -> F) -> Option<Typed<F>> {
        let d = l.dtype(0)?;
        if l.args.len() > 1 && l.dtype(1) != Some(d) {
            return None;
        }
        Some(Typed { dtype: d, f: pick(d) })
    }

    /// The instance for `d`: the compiled one when it fits, else picked now.
    fn get(this: &Option<Typed<F>>, d: DType, pick: fn(DType) -> F) -> F {
        match this {
            Some(t) if t.dtype == d => t.f,
            _ => pick(d),
        }
    }
}

type ArithFn = fn(&KernelCx, Arith, (&Tensor, &Tensor), &[u64]) -> Result<Value>;

fn arith_fn(d: DType) -> ArithFn {
    with_num!(d, T => arith_typed::<T> as ArithFn)
}

struct ArithKernel {
    op: Arith,
    typed: Option<Typed<ArithFn>>,
}

impl Kernel for ArithKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        let (a, b) = two(cx, args)?;
        same_dtype(cx, a, b)?;
        let shape = broadcast(cx, &[a.shape(), b.shape()])?;
        Typed::get(&self.typed, a.dtype(), arith_fn)(cx, self.op, (a, b), &shape)
    }
}

fn arith_typed<T: Num>(cx: &KernelCx, op: Arith, (a, b): (&Tensor, &Tensor), shape: &[u64]) -> Result<Value> {
    // With a non-empty result every divisor element is used, so the check can come
    // first and the loops have no error path.
    if !shape.contains(&0) {
        let y = read::<T>(cx, b, "the second operand")?;
        match op {
            Arith::Divide | Arith::FloorDivide if y.iter().any(|v| v.is_zero_divisor()) => {
                return Err(cx.fail(ErrorKind::DivisionByZero, "integer division by zero"));
            }
            Arith::Power if y.iter().any(|v| v.is_negative_exponent()) => {
                return Err(cx.error("an integer to a negative power"));
            }
            _ => {}
        }
    }
    let d = a.dtype();
    match op {
        Arith::Add => binary(cx, (a, b), shape, d, T::add),
        Arith::Subtract => binary(cx, (a, b), shape, d, T::sub),
        Arith::Multiply => binary(cx, (a, b), shape, d, T::mul),
        Arith::Divide => binary(cx, (a, b), shape, d, T::div),
        Arith::FloorDivide => binary(cx, (a, b), shape, d, T::floor_div),
        Arith::Power => binary(cx, (a, b), shape, d, T::pow),
        Arith::Maximum => binary(cx, (a, b), shape, d, T::max_nan),
        Arith::Minimum => binary(cx, (a, b), shape, d, T::min_nan),
    }
}

/// OP-equal, OP-not_equal, OP-less, OP-less_equal, OP-greater, OP-greater_equal:
/// elementwise comparison with NumPy broadcasting; the result is `bool`. Floats compare
/// as IEEE (NaN is unordered and unequal to everything; `-0.0 == 0.0`); `false < true`.
/// Errors: as OP-add.
pub fn compare(l: &Lowering, op: Compare) -> Box<dyn Kernel> {
    Box::new(CompareKernel { op, typed: Typed::of(l, compare_fn) })
}

type CompareFn = fn(&KernelCx, Compare, (&Tensor, &Tensor), &[u64]) -> Result<Value>;

fn compare_fn(d: DType) -> CompareFn {
    with_num!(d, T => compare_typed::<T> as CompareFn)
}

struct CompareKernel {
    op: Compare,
    typed: Option<Typed<CompareFn>>,
}

impl Kernel for CompareKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        let (a, b) = two(cx, args)?;
        same_dtype(cx, a, b)?;
        let shape = broadcast(cx, &[a.shape(), b.shape()])?;
        Typed::get(&self.typed, a.dtype(), compare_fn)(cx, self.op, (a, b), &shape)
    }
}

fn compare_typed<T: Num>(cx: &KernelCx, op: Compare, ab: (&Tensor, &Tensor), shape: &[u64]) -> Result<Value> {
    let d = DType::Bool;
    match op {
        Compare::Equal => binary(cx, ab, shape, d, |p: T, q: T| B8::new(p == q)),
        Compare::NotEqual => binary(cx, ab, shape, d, |p: T, q: T| B8::new(p != q)),
        Compare::Less => binary(cx, ab, shape, d, |p: T, q: T| B8::new(p < q)),
        Compare::LessEqual => binary(cx, ab, shape, d, |p: T, q: T| B8::new(p <= q)),
        Compare::Greater => binary(cx, ab, shape, d, |p: T, q: T| B8::new(p > q)),
        Compare::GreaterEqual => binary(cx, ab, shape, d, |p: T, q: T| B8::new(p >= q)),
    }
}

/// OP-logical_and (`and`), OP-logical_or: elementwise on `bool` tensors with NumPy
/// broadcasting. Errors: as OP-add, and an operand that is not `bool`.
pub fn logical(_: &Lowering, and: bool) -> Box<dyn Kernel> {
    Box::new(LogicalKernel { and })
}

struct LogicalKernel {
    and: bool,
}

impl Kernel for LogicalKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        let (a, b) = two(cx, args)?;
        bools(cx, a, "the first operand")?;
        bools(cx, b, "the second operand")?;
        let shape = broadcast(cx, &[a.shape(), b.shape()])?;
        if self.and {
            binary(cx, (a, b), &shape, DType::Bool, |p: B8, q: B8| B8(p.0 & q.0))
        } else {
            binary(cx, (a, b), &shape, DType::Bool, |p: B8, q: B8| B8(p.0 | q.0))
        }
    }
}

/// OP-logical_not: elementwise not of a `bool` tensor. Errors: not a `bool` tensor.
pub fn logical_not(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(LogicalNotKernel)
}

struct LogicalNotKernel;

impl Kernel for LogicalNotKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let a = operand(cx, args, 0, "the operand")?;
        bools(cx, a, "the operand")?;
        map(cx, a, DType::Bool, |x: B8| B8(x.0 ^ 1))
    }
}

/// OP-negative, OP-abs, OP-nn.relu (any dtype; integers wrap, so `-MIN == MIN` and
/// `abs(MIN) == MIN`; `relu(x)` is `maximum(x, 0)`, so NaN stays NaN), OP-exp, OP-log,
/// OP-sqrt, OP-tanh, OP-sigmoid (`1 / (1 + exp(-x))`; float dtypes only; float16
/// computed in float32 with `std`'s functions and rounded once; float32 and float64
/// `exp` and `sigmoid` through [`simd::exp_f32`]/[`simd::exp_f64`], within 2 ulp of
/// `std`'s `exp`). Also OP-erf, OP-rsqrt, OP-sin, OP-cos, OP-nn.gelu, OP-nn.gelu_tanh,
/// OP-nn.silu (float dtypes only) and OP-floor, OP-ceil, OP-round, OP-sign, OP-square
/// (any dtype), whose element functions are [`unary_math`]'s. The result has the
/// operand's shape and dtype.
/// Errors: not a tensor; a floating-point function of a non-float tensor.
pub fn unary(l: &Lowering, op: Unary) -> Box<dyn Kernel> {
    Box::new(UnaryKernel { op, typed: Typed::of(l, unary_fn) })
}

type UnaryFn = fn(&KernelCx, &Tensor, Unary) -> Result<Value>;

fn unary_fn(d: DType) -> UnaryFn {
    fn no_float(cx: &KernelCx, a: &Tensor, op: Unary) -> Result<Value> {
        match op {
            Unary::Negative | Unary::Abs | Unary::Relu => with_num!(a.dtype(), T => num_map::<T>(cx, a, op)),
            _ => with_num!(a.dtype(), T => unary_math::int_map::<T>(cx, a, op))
                .unwrap_or_else(|| Err(not_float(cx, a.dtype()))),
        }
    }
    fn half(cx: &KernelCx, a: &Tensor, op: Unary) -> Result<Value> {
        match op {
            Unary::Negative | Unary::Abs | Unary::Relu => num_map::<half::f16>(cx, a, op),
            f if unary_math::is_math(f) => unary_math::half_map(cx, a, f),
            f => real_map::<half::f16>(cx, a, f),
        }
    }
    match d {
        DType::F16 => half,
        DType::F32 => float_map::<f32>,
        DType::F64 => float_map::<f64>,
        _ => no_float,
    }
}

struct UnaryKernel {
    op: Unary,
    typed: Option<Typed<UnaryFn>>,
}

impl Kernel for UnaryKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let a = operand(cx, args, 0, "the operand")?;
        Typed::get(&self.typed, a.dtype(), unary_fn)(cx, a, self.op)
    }
}

fn num_map<T: Num>(cx: &KernelCx, a: &Tensor, op: Unary) -> Result<Value> {
    let d = a.dtype();
    match op {
        Unary::Negative => map(cx, a, d, T::neg),
        Unary::Abs => map(cx, a, d, T::abs),
        _ => map(cx, a, d, |x: T| x.max_nan(T::ZERO)),
    }
}

fn not_float(cx: &KernelCx, d: DType) -> crate::error::Error {
    cx.error(format!("needs a floating-point tensor, not {d}"))
}

/// A unary function of a float32 or float64 tensor: the loops of the fused kernels'
/// chunk API ([`simd::unary_at`]), so both compute the same bits.
fn float_map<T: FloatElem>(cx: &KernelCx, a: &Tensor, op: Unary) -> Result<Value> {
    let x = read::<T>(cx, a, "the operand")?;
    let out = cx.alloc_for_overwrite(a.dtype(), a.shape())?;
    let exec = Exec::of(cx);
    map_parts(exec, &mut write::<T>(cx, &out)?, &x, |o, x| simd::unary_at(exec.level, op, o, x));
    Ok(Value::tensor(out))
}

fn real_map<T: Real>(cx: &KernelCx, a: &Tensor, f: Unary) -> Result<Value> {
    let d = a.dtype();
    match f {
        Unary::Exp => map(cx, a, d, T::exp),
        Unary::Log => map(cx, a, d, T::ln),
        Unary::Sqrt => map(cx, a, d, T::sqrt),
        Unary::Tanh => map(cx, a, d, T::tanh),
        _ => map(cx, a, d, T::sigmoid),
    }
}

/// OP-nn.softmax: along `axis` (default -1) of a float tensor, numerically stable:
/// with `m` the maximum of the line (NaN if any element is NaN), `e_j = exp(x_j - m)`,
/// `s` the sum of the `e_j` from 0, the result is `e_j / s`; each step rounded to the
/// dtype. The engine's `exp` is [`simd::exp_f32`]/[`simd::exp_f64`] (within 2 ulp of
/// `std`'s; float16 uses `std`'s in float32) and it sums a float32/float64 line of 64
/// or more contiguous elements in 32 partial sums (reassociated, as the differential
/// comparison allows); other sums are in index order. Errors: not a float tensor;
/// `axis` out of range or not an integer.
pub fn softmax(l: &Lowering) -> Box<dyn Kernel> {
    match attrs::opt_int(l.attrs, "axis") {
        Ok(axis) => Box::new(SoftmaxKernel { axis: axis.unwrap_or(-1) }),
        Err(m) => Box::new(Failing(m)),
    }
}

struct SoftmaxKernel {
    axis: i64,
}

impl Kernel for SoftmaxKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let a = operand(cx, args, 0, "the operand")?;
        let axis = cx.axis(self.axis, a.rank())?;
        match a.dtype() {
            DType::F16 => softmax_typed::<half::f16>(cx, a, axis),
            DType::F32 => softmax_typed::<f32>(cx, a, axis),
            DType::F64 => softmax_typed::<f64>(cx, a, axis),
            d => Err(not_float(cx, d)),
        }
    }
}

fn softmax_typed<T: Real>(cx: &KernelCx, a: &Tensor, axis: usize) -> Result<Value> {
    let x = read::<T>(cx, a, "the operand")?;
    let out = cx.alloc_for_overwrite(a.dtype(), a.shape())?;
    if a.numel() > 0 {
        // Each block of `len` rows of `inner` elements holds `inner` lines (one per
        // column); the columns are processed together, each line in its own order.
        let shape = a.shape();
        let len = shape[axis] as usize;
        let inner: usize = shape[axis + 1..].iter().map(|&d| d as usize).product();
        let mut o = write::<T>(cx, &out)?;
        let (mut m, mut s) = (vec![T::ZERO; inner], vec![T::ZERO; inner]);
        let exec = Exec::of(cx);
        for (xb, ob) in x.chunks_exact(len * inner).zip(o.chunks_exact_mut(len * inner)) {
            softmax_block(exec.level, xb, ob, inner, &mut m, &mut s);
        }
        exec.record(a.numel(), false);
    }
    Ok(Value::tensor(out))
}

/// Softmax of the `inner` columns of the row-major block `x` (`len` rows of `inner`):
/// the maximum, `exp(x - m)` ([`simd::exp_in_place`]), the sum (a single contiguous
/// line's float32/float64 sum reassociated as [`loops::fold_lanes`] says) and the
/// quotient, each a vectorized loop.
fn softmax_block<T: Real>(level: Level, x: &[T], out: &mut [T], inner: usize, m: &mut [T], s: &mut [T]) {
    use simd::run;
    if inner == 1 {
        let f = loops::FoldRow { init: x[0], id: T::LOWEST, row: &x[1..], reassociate: true, f: &T::max_nan };
        let m = run(level, f);
        run(level, loops::Row2 { out: &mut *out, a: Lane::Run(x), b: Lane::Splat(m), f: &T::sub });
        simd::exp_in_place(level, out, false);
        let reassociate = T::DTYPE != DType::F16;
        let s = run(level, loops::FoldRow { init: T::ZERO, id: T::ZERO, row: out, reassociate, f: &T::add });
        run(level, loops::Acc2 { acc: out, b: Lane::Splat(s), left: true, f: &T::div });
        return;
    }
    m.copy_from_slice(&x[..inner]);
    for row in x.chunks_exact(inner).skip(1) {
        run(level, loops::FoldColumns { acc: &mut *m, row, f: &T::max_nan });
    }
    s.fill(T::ZERO);
    for (row, orow) in x.chunks_exact(inner).zip(out.chunks_exact_mut(inner)) {
        run(level, loops::Row2 { out: &mut *orow, a: Lane::Run(row), b: Lane::Run(m), f: &T::sub });
        simd::exp_in_place(level, orow, false);
        run(level, loops::FoldColumns { acc: &mut *s, row: orow, f: &T::add });
    }
    for orow in out.chunks_exact_mut(inner) {
        run(level, loops::Acc2 { acc: orow, b: Lane::Run(s), left: true, f: &T::div });
    }
}

/// OP-where: `where(condition, x1, x2)` is `x1` where the `bool` condition holds, else
/// `x2`; the three broadcast together (NumPy) and the dtype is `x1`'s. Errors: an
/// operand not a tensor; a condition not `bool`; `x1`, `x2` of different dtypes;
/// shapes that do not broadcast.
pub fn where_(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(WhereKernel)
}

struct WhereKernel;

impl Kernel for WhereKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 3)?;
        let c = operand(cx, args, 0, "the condition")?;
        let a = operand(cx, args, 1, "the second operand")?;
        let b = operand(cx, args, 2, "the third operand")?;
        bools(cx, c, "the condition")?;
        same_dtype(cx, a, b)?;
        let shape = broadcast(cx, &[c.shape(), a.shape(), b.shape()])?;
        with_num!(a.dtype(), T => where_typed::<T>(cx, (c, a, b), &shape))
    }
}

fn where_typed<T: Num>(cx: &KernelCx, (c, a, b): (&Tensor, &Tensor, &Tensor), shape: &[u64]) -> Result<Value> {
    let k = read::<B8>(cx, c, "the condition")?;
    let (x, y) = (read::<T>(cx, a, "the second operand")?, read::<T>(cx, b, "the third operand")?);
    let out = cx.alloc_for_overwrite(a.dtype(), shape)?;
    let (k, x, y) = ((&k[..], c.shape()), (&x[..], a.shape()), (&y[..], b.shape()));
    select(Exec::of(cx), shape, &mut write::<T>(cx, &out)?, k, x, y).map_err(|_| layout_bug(cx))?;
    Ok(Value::tensor(out))
}

/// OP-astype: converts elementwise to the attribute `dtype`: integers wrap modulo
/// 2^bits; to `bool` is `x != 0` (NaN is true); a float to an integer truncates toward
/// zero; to a float rounds to nearest. Errors (`OpError`): not a tensor; `dtype`
/// missing, ill-kinded or without storage; a float that is NaN, infinite or out of the
/// integer dtype's range after truncation.
pub fn astype(l: &Lowering) -> Box<dyn Kernel> {
    let to = match attrs::dtype(l.attrs, "dtype") {
        Ok(Some(d)) => match DType::of(d) {
            Some(t) => t,
            None => return Box::new(Failing(format!("dtype {d} has no tensor storage"))),
        },
        Ok(None) => return Box::new(Failing("needs the attribute `dtype`".into())),
        Err(m) => return Box::new(Failing(m)),
    };
    Box::new(AstypeKernel(to))
}

struct AstypeKernel(DType);

impl Kernel for AstypeKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let a = operand(cx, args, 0, "the operand")?;
        Ok(Value::tensor(convert(cx, a, "the operand", self.0)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::run_standalone;
    use crate::Memory;
    use spec_model::grammar::{AttrValue, Attrs};
    use spec_model::ops::Op;

    fn t<T: crate::dtype::Element>(mem: &Rc<Memory>, d: DType, shape: &[u64], v: &[T]) -> Value {
        Value::tensor(Tensor::from_slice(d, shape, v, mem).unwrap())
    }

    /// A kernel compiled for the dtype the static StructInfo gives runs that instance;
    /// given other dtypes (a StructInfo the values do not have), it picks at run time.
    #[test]
    fn the_static_dtype_picks_the_instance_and_other_dtypes_still_run() {
        use spec_model::grammar::{DataType, StructInfo, StructInfoKind};
        let mem = Memory::new(1 << 20);
        let f32_si = StructInfo::new(
            StructInfoKind::Tensor { shape: None, dtype: DataType::FLOAT32, ndim: -1 },
            spec_model::Span::SYNTHETIC,
        );
        let statics = [Some(f32_si.clone()), Some(f32_si)];
        let attrs = Attrs::default();
        let l = Lowering { op: Op::Add, attrs: &attrs, args: &statics };
        let k = arith(&l, Arith::Add);
        let cx = KernelCx {
            op: Op::Add,
            span: spec_model::Span::SYNTHETIC,
            memory: &mem,
            threads: 1,
            parallel_min: 1 << 17,
        };
        let floats = [t(&mem, DType::F32, &[2], &[1.5f32, 2.0]), t(&mem, DType::F32, &[], &[1.0f32])];
        let Value::Tensor(r) = k.run(&cx, &floats).unwrap() else { panic!("a tensor") };
        assert_eq!(&*r.elements::<f32>().unwrap(), &[2.5, 3.0]);
        let ints = [t(&mem, DType::I32, &[2], &[i32::MAX, 2]), t(&mem, DType::I32, &[], &[1i32])];
        let Value::Tensor(r) = k.run(&cx, &ints).unwrap() else { panic!("a tensor") };
        assert_eq!(&*r.elements::<i32>().unwrap(), &[i32::MIN, 3]);
    }

    fn run(op: Op, attrs: &Attrs, args: &[Value], mem: &Rc<Memory>) -> Result<Vec<f64>> {
        let Value::Tensor(r) = run_standalone(op, attrs, args, mem).unwrap()? else { panic!("not a tensor") };
        Ok((0..r.numel()).map(|i| r.get_f64(i).unwrap()).collect())
    }

    #[test]
    fn integer_division_by_zero_only_where_an_element_is_computed() {
        let mem = Memory::new(1 << 20);
        let none = Attrs::default();
        let x = t(&mem, DType::I32, &[2], &[7i32, -7]);
        let zero = t(&mem, DType::I32, &[1], &[0i32]);
        let e = run(Op::Divide, &none, &[x.clone(), zero.clone()], &mem).unwrap_err();
        assert_eq!((e.kind, e.rule), (ErrorKind::DivisionByZero, "OP-divide"));
        let empty = t::<i32>(&mem, DType::I32, &[0], &[]);
        assert_eq!(run(Op::FloorDivide, &none, &[empty, zero], &mem).unwrap(), [] as [f64; 0]);
        let two = t(&mem, DType::I32, &[], &[-2i32]);
        assert_eq!(run(Op::FloorDivide, &none, &[x.clone(), two.clone()], &mem).unwrap(), [-4.0, 3.0]);
        let e = run(Op::Power, &none, &[x, two], &mem).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OpError);
        let f = t(&mem, DType::F32, &[2], &[1.0f32, 0.0]);
        let fz = t(&mem, DType::F32, &[1], &[0.0f32]);
        let r = run(Op::Divide, &none, &[f, fz], &mem).unwrap();
        assert!(r[0].is_infinite() && r[1].is_nan());
    }

    #[test]
    fn argument_errors_are_op_errors_before_any_allocation() {
        let mem = Memory::new(1 << 16);
        let none = Attrs::default();
        let (a, b) = (
            t(&mem, DType::Bool, &[1 << 14, 1], &[0u8; 1 << 14]),
            t(&mem, DType::Bool, &[1, 1 << 13], &[0u8; 1 << 13]),
        );
        let e = run(Op::LogicalAnd, &none, &[a.clone(), b], &mem).unwrap_err();
        assert_eq!(e.kind, ErrorKind::MemoryExhausted, "2^27 elements are over a 64 KiB budget");
        let i = t(&mem, DType::I8, &[2], &[1i8, 2]);
        for args in [vec![a.clone()], vec![a.clone(), Value::Null], vec![a.clone(), i.clone()], vec![i.clone(), i]] {
            let e = run(Op::LogicalOr, &none, &args, &mem).unwrap_err();
            assert_eq!((e.kind, e.rule), (ErrorKind::OpError, "OP-logical_or"));
        }
        let mut bad = Attrs::default();
        bad.insert("dtype", AttrValue::Str("float8".into()));
        assert_eq!(run(Op::Astype, &bad, std::slice::from_ref(&a), &mem).unwrap_err().kind, ErrorKind::OpError);
        bad.insert("axis", AttrValue::Str("0".into()));
        assert_eq!(run(Op::Softmax, &bad, &[a], &mem).unwrap_err().kind, ErrorKind::OpError);
    }

    #[test]
    fn softmax_is_stable_and_where_broadcasts() {
        let mem = Memory::new(1 << 20);
        let none = Attrs::default();
        let x = t(&mem, DType::F32, &[2, 2], &[1000.0f32, 1000.0, 0.0, f32::NEG_INFINITY]);
        assert_eq!(run(Op::Softmax, &none, std::slice::from_ref(&x), &mem).unwrap(), [0.5, 0.5, 1.0, 0.0]);
        let mut axis0 = Attrs::default();
        axis0.insert("axis", AttrValue::Int(0));
        assert_eq!(run(Op::Softmax, &axis0, &[x], &mem).unwrap(), [1.0, 1.0, 0.0, 0.0]);
        let c = t(&mem, DType::Bool, &[2, 1], &[1u8, 0]);
        let (p, q) = (t(&mem, DType::I64, &[3], &[1i64, 2, 3]), t(&mem, DType::I64, &[], &[-1i64]));
        assert_eq!(run(Op::Where, &none, &[c, p, q], &mem).unwrap(), [1.0, 2.0, 3.0, -1.0, -1.0, -1.0]);
    }

    #[test]
    fn unary_integers_wrap_and_relu_keeps_nan() {
        let mem = Memory::new(1 << 20);
        let none = Attrs::default();
        let x = t(&mem, DType::I8, &[3], &[i8::MIN, -3, 5]);
        assert_eq!(run(Op::Abs, &none, std::slice::from_ref(&x), &mem).unwrap(), [-128.0, 3.0, 5.0]);
        assert_eq!(run(Op::Negative, &none, std::slice::from_ref(&x), &mem).unwrap(), [-128.0, 3.0, -5.0]);
        assert_eq!(run(Op::Relu, &none, std::slice::from_ref(&x), &mem).unwrap(), [0.0, 0.0, 5.0]);
        assert_eq!(run(Op::Exp, &none, &[x], &mem).unwrap_err().kind, ErrorKind::OpError);
        let f = t(&mem, DType::F16, &[2], &[half::f16::NAN, half::f16::from_f32(-1.0)]);
        let r = run(Op::Relu, &none, &[f], &mem).unwrap();
        assert!(r[0].is_nan() && r[1] == 0.0);
    }
}
