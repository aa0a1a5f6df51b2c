//! Scalar stand-in for the chunk-level vector API (replaced by `simd/`).

use super::elementwise::{Arith, Unary};
use super::lanes::Lane;
use crate::dtype::Element;
use crate::scalar::{Num, Real};

pub trait FloatElem: Real + Element + Send + Sync {}
impl FloatElem for f32 {}
impl FloatElem for f64 {}

fn arith<T: Num>(op: Arith) -> fn(T, T) -> T {
    match op {
        Arith::Add => T::add,
        Arith::Subtract => T::sub,
        Arith::Multiply => T::mul,
        Arith::Divide => T::div,
        Arith::FloorDivide => T::floor_div,
        Arith::Power => T::pow,
        Arith::Maximum => T::max_nan,
        Arith::Minimum => T::min_nan,
    }
}

fn un<T: Real>(op: Unary) -> fn(T) -> T {
    match op {
        Unary::Negative => T::neg,
        Unary::Abs => T::abs,
        Unary::Relu => |x: T| x.max_nan(T::ZERO),
        Unary::Exp => T::exp,
        Unary::Log => T::ln,
        Unary::Sqrt => T::sqrt,
        Unary::Tanh => T::tanh,
        Unary::Sigmoid => T::sigmoid,
    }
}

fn get<T: Copy>(l: &Lane<T>, i: usize) -> T {
    match l {
        Lane::Splat(x) => *x,
        Lane::Run(r) => r[i],
    }
}

pub fn binary<T: FloatElem>(op: Arith, out: &mut [T], a: Lane<T>, b: Lane<T>) {
    let f = arith::<T>(op);
    for (i, o) in out.iter_mut().enumerate() {
        *o = f(get(&a, i), get(&b, i));
    }
}

pub fn binary_acc<T: FloatElem>(op: Arith, acc: &mut [T], b: Lane<T>, acc_left: bool) {
    let f = arith::<T>(op);
    for (i, o) in acc.iter_mut().enumerate() {
        *o = if acc_left { f(*o, get(&b, i)) } else { f(get(&b, i), *o) };
    }
}

pub fn unary<T: FloatElem>(op: Unary, out: &mut [T], a: &[T]) {
    let f = un::<T>(op);
    for (o, x) in out.iter_mut().zip(a) {
        *o = f(*x);
    }
}

pub fn unary_acc<T: FloatElem>(op: Unary, acc: &mut [T]) {
    let f = un::<T>(op);
    for o in acc.iter_mut() {
        *o = f(*o);
    }
}

/// `out[j] = sum_p x[p] * w[p, j]` for row-major `w` (x.len() rows of out.len()),
/// summed in `p` order.
pub fn axpy_rows<T: FloatElem>(x: &[T], w: &[T], out: &mut [T]) {
    let m = out.len();
    out.fill(T::ZERO);
    for (&xp, row) in x.iter().zip(w.chunks_exact(m)) {
        for (o, &v) in out.iter_mut().zip(row) {
            *o = o.add(xp.mul(v));
        }
    }
}
