//! Placeholder until the engine's TIR executor lands (branch e-tir): every call fails.

use crate::error::{Error, ErrorKind, Result};
use crate::{Memory, Tensor};
use spec_model::grammar::PrimFunc;
use spec_model::Span;
use std::rc::Rc;

pub struct TirFunc;

impl TirFunc {
    pub fn compile(_: &PrimFunc, _: &str) -> TirFunc {
        TirFunc
    }

    pub fn run(&self, _: &[Rc<Tensor>], _: &[i64], _: &mut u64, span: Span, _: &Rc<Memory>) -> Result<()> {
        Err(Error::new(ErrorKind::OpError, "OP-call_tir", "no TIR executor", span))
    }
}
