//! Elementwise operators with NumPy broadcasting: arithmetic, comparisons, logical operators, unary functions, `softmax`, `where`, `astype`.

use super::{Failing, Kernel, Lowering};

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
}

pub fn arith(_: &Lowering, _: Arith) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn compare(_: &Lowering, _: Compare) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

/// `logical_and` (`and`) or `logical_or`.
pub fn logical(_: &Lowering, _and: bool) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn logical_not(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn unary(_: &Lowering, _: Unary) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn softmax(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn where_(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn astype(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}
