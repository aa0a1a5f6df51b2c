//! Tensor creation: `zeros`, `ones`, `full`, `arange`.

use super::{Failing, Kernel, Lowering};

/// `zeros` or (`one`) `ones`.
pub fn zeros_ones(_: &Lowering, _one: bool) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn full(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn arange(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}
