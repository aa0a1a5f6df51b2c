//! Elementwise operators: binary arithmetic, comparisons, logical operators, unary
//! functions, `where`, `astype`, and `nn.softmax`.

use super::broadcast::{broadcast_shapes, broadcast_walk, strides, Walk};
use super::elem::{convert_data, map_data, map_data2, Elem, Real};
use super::{tensor_value, Cx};
use crate::eval::value::{ErrorKind, EvalResult, Value};
use spec_model::grammar::{NDArray, TensorData};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arith {
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
pub(crate) enum Compare {
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unary {
    Negative,
    Abs,
    Relu,
    Exp,
    Log,
    Sqrt,
    Tanh,
    Sigmoid,
}

/// The broadcast shape of the operands (an `OpError` when they do not broadcast).
fn broadcast(cx: &Cx, arrays: &[&NDArray]) -> EvalResult<Vec<u64>> {
    let shapes: Vec<&[u64]> = arrays.iter().map(|a| a.shape.as_slice()).collect();
    let out = broadcast_shapes(&shapes).ok_or_else(|| {
        let shown: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
        cx.error(format!("shapes {} do not broadcast", shown.join(" and ")))
    })?;
    cx.numel(&out)?;
    Ok(out)
}

fn two<'v>(cx: &Cx, args: &'v [Value]) -> EvalResult<(std::cell::Ref<'v, NDArray>, std::cell::Ref<'v, NDArray>)> {
    cx.arity(args, 2)?;
    Ok((cx.tensor(&args[0], "the first operand")?, cx.tensor(&args[1], "the second operand")?))
}

fn dtype_mismatch(cx: &Cx, a: &NDArray, b: &NDArray) -> crate::eval::value::RuntimeError {
    cx.error(format!("operands have different dtypes {} and {}", a.dtype, b.dtype))
}

/// OP-add, OP-subtract, OP-multiply, OP-divide, OP-floor_divide, OP-power,
/// OP-maximum, OP-minimum: elementwise with NumPy broadcasting, in the operands' common
/// dtype. Integers wrap; `divide` truncates and `floor_divide` floors; an integer
/// divisor 0 is `DivisionByZero`; an integer to a negative power is an `OpError`.
/// Floats are IEEE (`floor_divide` is `floor(x / y)`); `maximum`/`minimum` give NaN when
/// either operand is NaN. Errors: not two tensors; different dtypes; shapes that do
/// not broadcast.
pub(crate) fn arith(cx: &Cx, args: &[Value], op: Arith) -> EvalResult<Value> {
    let (a, b) = two(cx, args)?;
    if a.dtype != b.dtype {
        return Err(dtype_mismatch(cx, &a, &b));
    }
    let shape = broadcast(cx, &[&a, &b])?;
    let data = map_data2!(wrap, &a.data, &b.data, x, y =>
        arith_loop(cx, op, x, &a.shape, y, &b.shape, &shape)?, return Err(dtype_mismatch(cx, &a, &b)));
    Ok(tensor_value(a.dtype, shape, data))
}

fn arith_loop<T: Elem>(
    cx: &Cx,
    op: Arith,
    x: &[T],
    xs: &[u64],
    y: &[T],
    ys: &[u64],
    out: &[u64],
) -> EvalResult<Vec<T>> {
    let zero = || cx.fail(ErrorKind::DivisionByZero, "integer division by zero");
    broadcast_walk(xs, out)
        .zip(broadcast_walk(ys, out))
        .map(|(i, j)| {
            let (p, q) = (x[i], y[j]);
            Ok(match op {
                Arith::Add => p.plus(q),
                Arith::Subtract => p.minus(q),
                Arith::Multiply => p.times(q),
                Arith::Divide => p.quot(q).ok_or_else(zero)?,
                Arith::FloorDivide => p.floor_quot(q).ok_or_else(zero)?,
                Arith::Power => p.power(q).map_err(|m| cx.error(m))?,
                Arith::Maximum => p.propagating_max(q),
                Arith::Minimum => p.propagating_min(q),
            })
        })
        .collect()
}

/// OP-equal, OP-not_equal, OP-less, OP-less_equal, OP-greater, OP-greater_equal:
/// elementwise comparison with NumPy broadcasting; the result is `bool`. Floats compare
/// as IEEE (NaN is unordered and unequal to everything; `-0.0 == 0.0`); `false < true`.
/// Errors: as OP-add.
pub(crate) fn compare(cx: &Cx, args: &[Value], op: Compare) -> EvalResult<Value> {
    let (a, b) = two(cx, args)?;
    if a.dtype != b.dtype {
        return Err(dtype_mismatch(cx, &a, &b));
    }
    let shape = broadcast(cx, &[&a, &b])?;
    let data = map_data2!(plain, &a.data, &b.data, x, y =>
        compare_loop(op, x, &a.shape, y, &b.shape, &shape), return Err(dtype_mismatch(cx, &a, &b)));
    Ok(tensor_value(spec_model::grammar::DataType::BOOL, shape, TensorData::Bool(data)))
}

fn compare_loop<T: PartialOrd + Copy>(op: Compare, x: &[T], xs: &[u64], y: &[T], ys: &[u64], out: &[u64]) -> Vec<bool> {
    broadcast_walk(xs, out)
        .zip(broadcast_walk(ys, out))
        .map(|(i, j)| {
            let (p, q) = (x[i], y[j]);
            match op {
                Compare::Equal => p == q,
                Compare::NotEqual => p != q,
                Compare::Less => p < q,
                Compare::LessEqual => p <= q,
                Compare::Greater => p > q,
                Compare::GreaterEqual => p >= q,
            }
        })
        .collect()
}

fn bools<'a>(cx: &Cx, a: &'a NDArray, what: &str) -> EvalResult<&'a [bool]> {
    match &a.data {
        TensorData::Bool(v) => Ok(v),
        _ => Err(cx.error(format!("{what} must have dtype bool, not {}", a.dtype))),
    }
}

/// OP-logical_and, OP-logical_or: elementwise on `bool` tensors with NumPy
/// broadcasting. Errors: as OP-add, and an operand that is not `bool`.
pub(crate) fn logical(cx: &Cx, args: &[Value], and: bool) -> EvalResult<Value> {
    let (a, b) = two(cx, args)?;
    let (x, y) = (bools(cx, &a, "the first operand")?, bools(cx, &b, "the second operand")?);
    let shape = broadcast(cx, &[&a, &b])?;
    let data = broadcast_walk(&a.shape, &shape)
        .zip(broadcast_walk(&b.shape, &shape))
        .map(|(i, j)| if and { x[i] && y[j] } else { x[i] || y[j] })
        .collect();
    Ok(tensor_value(a.dtype, shape, TensorData::Bool(data)))
}

/// OP-logical_not: elementwise not of a `bool` tensor. Errors: not a `bool` tensor.
pub(crate) fn logical_not(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let data = bools(cx, &a, "the operand")?.iter().map(|b| !b).collect();
    Ok(tensor_value(a.dtype, a.shape.clone(), TensorData::Bool(data)))
}

/// OP-negative, OP-abs, OP-nn.relu (any dtype; integers wrap, so `-MIN == MIN`;
/// `relu(x)` is NumPy's `propagating_max(x, 0)`, so NaN stays NaN), OP-exp, OP-log, OP-sqrt,
/// OP-tanh, OP-sigmoid (`1 / (1 + exp(-x))`; float dtypes only; float16 computed in
/// float32 and rounded once). The result has the operand's shape and dtype.
/// Errors: not a tensor; a floating-point function of a non-float tensor.
pub(crate) fn unary(cx: &Cx, args: &[Value], op: Unary) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let data = match op {
        Unary::Negative => map_data!(&a.data, v => v.iter().map(|x| x.negate()).collect()),
        Unary::Abs => map_data!(&a.data, v => v.iter().map(|x| x.absolute()).collect()),
        Unary::Relu => map_data!(&a.data, v => v.iter().map(|x| x.propagating_max(Elem::zero())).collect()),
        _ => {
            let f = match op {
                Unary::Exp => Fun::Exp,
                Unary::Log => Fun::Log,
                Unary::Sqrt => Fun::Sqrt,
                Unary::Tanh => Fun::Tanh,
                _ => Fun::Sigmoid,
            };
            match &a.data {
                TensorData::F16(v) => TensorData::F16(real_map(f, v)),
                TensorData::F32(v) => TensorData::F32(real_map(f, v)),
                TensorData::F64(v) => TensorData::F64(real_map(f, v)),
                _ => return Err(cx.error(format!("needs a floating-point tensor, not {}", a.dtype))),
            }
        }
    };
    Ok(tensor_value(a.dtype, a.shape.clone(), data))
}

#[derive(Clone, Copy)]
enum Fun {
    Exp,
    Log,
    Sqrt,
    Tanh,
    Sigmoid,
}

fn real_map<T: Real>(f: Fun, v: &[T]) -> Vec<T> {
    v.iter()
        .map(|&x| match f {
            Fun::Exp => x.exp(),
            Fun::Log => x.ln(),
            Fun::Sqrt => x.sqrt(),
            Fun::Tanh => x.tanh(),
            Fun::Sigmoid => x.sigmoid(),
        })
        .collect()
}

/// OP-nn.softmax: along `axis` (default -1) of a float tensor, numerically stable:
/// with `m` the maximum of the line (NaN if any element is NaN), `e_j = exp(x_j - m)`,
/// `s` the sum of the `e_j` in index order, the result is `e_j / s`; each step is
/// rounded to the dtype. Errors: not a float tensor; `axis` out of range.
pub(crate) fn softmax(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let axis = cx.axis(cx.attr_int("axis", -1)?, a.ndim())?;
    let len = a.shape[axis] as usize;
    let stride = strides(&a.shape)[axis] as usize;
    // The first element of each line: every index with 0 on `axis`.
    let mut dims = a.shape.clone();
    dims[axis] = 1;
    let starts = Walk::new(0, dims, strides(&a.shape));
    let data = match &a.data {
        TensorData::F16(v) => TensorData::F16(softmax_loop(v, starts, len, stride)),
        TensorData::F32(v) => TensorData::F32(softmax_loop(v, starts, len, stride)),
        TensorData::F64(v) => TensorData::F64(softmax_loop(v, starts, len, stride)),
        _ => return Err(cx.error(format!("needs a floating-point tensor, not {}", a.dtype))),
    };
    Ok(tensor_value(a.dtype, a.shape.clone(), data))
}

fn softmax_loop<T: Real>(v: &[T], starts: Walk, len: usize, stride: usize) -> Vec<T> {
    let mut out = v.to_vec();
    if len == 0 {
        return out;
    }
    for s in starts {
        let at = |j: usize| s + j * stride;
        let m = (1..len).fold(v[at(0)], |m, j| m.propagating_max(v[at(j)]));
        let e: Vec<T> = (0..len).map(|j| v[at(j)].minus(m).exp()).collect();
        let sum = e.iter().fold(T::zero(), |acc, x| acc.plus(*x));
        for (j, x) in e.into_iter().enumerate() {
            out[at(j)] = x.quot(sum).unwrap_or(x);
        }
    }
    out
}

/// OP-where: `where(condition, x1, x2)` is `x1` where the `bool` condition holds,
/// else `x2`; the three broadcast together (NumPy) and the dtype is `x1`'s.
/// Errors: an operand not a tensor; a condition not `bool`; `x1`, `x2` of different
/// dtypes; shapes that do not broadcast.
pub(crate) fn where_(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 3)?;
    let c = cx.tensor(&args[0], "the condition")?;
    let a = cx.tensor(&args[1], "the second operand")?;
    let b = cx.tensor(&args[2], "the third operand")?;
    let cond = bools(cx, &c, "the condition")?;
    if a.dtype != b.dtype {
        return Err(dtype_mismatch(cx, &a, &b));
    }
    let shape = broadcast(cx, &[&c, &a, &b])?;
    let data = map_data2!(wrap, &a.data, &b.data, x, y => broadcast_walk(&c.shape, &shape)
        .zip(broadcast_walk(&a.shape, &shape))
        .zip(broadcast_walk(&b.shape, &shape))
        .map(|((k, i), j)| if cond[k] { x[i] } else { y[j] })
        .collect(), return Err(dtype_mismatch(cx, &a, &b)));
    Ok(tensor_value(a.dtype, shape, data))
}

/// OP-astype: converts elementwise to the attribute `dtype`: integers wrap modulo
/// 2^bits; to `bool` is `x != 0` (NaN is true); a float to an integer truncates toward
/// zero; to a float rounds to nearest. Errors: not a tensor; `dtype` missing or without
/// storage; a float that is NaN, infinite or out of the integer dtype's range after
/// truncation (undefined in TVM's generated code).
pub(crate) fn astype(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let dtype = cx.attr_dtype("dtype")?.ok_or_else(|| cx.error("needs the attribute `dtype`"))?;
    cx.storage(dtype)?;
    let data = if dtype == a.dtype { a.data.clone() } else { convert_data(&a.data, dtype).map_err(|m| cx.error(m))? };
    Ok(tensor_value(dtype, a.shape.clone(), data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec_model::grammar::{Attrs, DataType, Scalar};
    use spec_model::ops::Op;
    use spec_model::Span;

    fn f32s(shape: &[u64], v: &[f32]) -> Value {
        let s: Vec<Scalar> = v.iter().map(|x| Scalar::Float(*x as f64)).collect();
        Value::tensor(NDArray::from_scalars(DataType::FLOAT32, shape.to_vec(), &s).unwrap())
    }

    fn run(op: Op, args: &[Value]) -> EvalResult<Value> {
        let attrs = Attrs::default();
        let cx = Cx::new(op, &attrs, Span::SYNTHETIC);
        match op {
            Op::Softmax => softmax(&cx, args),
            Op::Add => arith(&cx, args, Arith::Add),
            Op::Multiply => arith(&cx, args, Arith::Multiply),
            _ => unary(&cx, args, Unary::Exp),
        }
    }

    #[test]
    fn softmax_is_stable_for_large_inputs() {
        let r = run(Op::Softmax, &[f32s(&[2], &[1000.0, 1000.0])]).unwrap();
        let Value::Tensor(t) = r else { panic!() };
        assert_eq!(t.borrow().data, TensorData::F32(vec![0.5, 0.5]));
    }

    #[test]
    fn wrong_kinds_are_op_errors() {
        let e = run(Op::Add, &[Value::Null, f32s(&[1], &[1.0])]).err().unwrap();
        assert_eq!((e.kind, e.rule.as_str()), (ErrorKind::OpError, "OP-add"));
        let e = run(Op::Exp, &[Value::Shape(std::rc::Rc::new(vec![1]))]).err().unwrap();
        assert_eq!((e.kind, e.rule.as_str()), (ErrorKind::OpError, "OP-exp"));
    }

    #[test]
    fn aliasing_arguments_are_fine() {
        let x = f32s(&[2], &[1.0, 2.0]);
        let r = run(Op::Multiply, &[x.clone(), x]).unwrap();
        let Value::Tensor(t) = r else { panic!() };
        assert_eq!(t.borrow().data, TensorData::F32(vec![1.0, 4.0]));
    }
}
