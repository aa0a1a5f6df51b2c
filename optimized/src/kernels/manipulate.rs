//! Moving elements: `reshape`, `permute_dims`, `broadcast_to`, `concat`, `split`, `strided_slice`, `take`.

use super::{Failing, Kernel, Lowering};

pub fn reshape(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn permute_dims(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn broadcast_to(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn concat(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn split(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn strided_slice(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}

pub fn take(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Failing("not lowered yet".into()))
}
