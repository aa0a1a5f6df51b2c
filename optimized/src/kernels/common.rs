//! What the elementwise, reduction, matmul and creation kernels share: the element
//! count of the tensors an operator creates, NumPy broadcasting of operand shapes, and
//! reading and writing a tensor's elements with the operator's errors.

use super::layout::broadcast_shapes;
use super::KernelCx;
use crate::dtype::Element;
use crate::error::{Error, ErrorKind, Result};
use crate::tensor::Tensor;
use crate::value::Value;
use std::cell::{Ref, RefMut};
use std::rc::Rc;

/// The element count of `shape`: 0 when some dimension is 0, however large the
/// others; `None` when the product overflows.
pub fn count(shape: &[u64]) -> Option<u64> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
}

/// The element count of a tensor of `shape` this operator creates: `MemoryExhausted`
/// when it does not fit in memory at all (the budget, checked when the tensor is
/// allocated, bounds the rest; the engine has no other size limit).
pub fn created(cx: &KernelCx, shape: &[u64]) -> Result<usize> {
    match count(shape).and_then(|n| usize::try_from(n).ok()) {
        Some(n) => Ok(n),
        None => Err(Error::new(
            ErrorKind::MemoryExhausted,
            "LIMIT-memory",
            format!("{}: a tensor of shape {shape:?} has more elements than memory holds", cx.op),
            cx.span,
        )),
    }
}

/// The NumPy broadcast of `shapes` (an `OpError` when they do not broadcast).
pub fn broadcast(cx: &KernelCx, shapes: &[&[u64]]) -> Result<Vec<u64>> {
    let mut out: Vec<u64> = Vec::new();
    for s in shapes {
        out = broadcast_shapes(&out, s).ok_or_else(|| {
            let shown: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
            cx.error(format!("shapes {} do not broadcast", shown.join(" and ")))
        })?;
    }
    created(cx, &out)?;
    Ok(out)
}

/// Argument `i`, which must be a tensor that nothing is writing (an `OpError`
/// otherwise, before any other check on it, as the oracle orders its checks).
pub fn operand<'v>(cx: &KernelCx, args: &'v [Value], i: usize, what: &str) -> Result<&'v Rc<Tensor>> {
    let t = cx.tensor(args, i, what)?;
    if t.data().is_none() {
        return Err(cx.error(format!("{what} is being mutated")));
    }
    Ok(t)
}

/// The elements of `t` as `T` (the storage type of its dtype), or an `OpError` while
/// something writes the tensor.
pub fn read<'t, T: Element>(cx: &KernelCx, t: &'t Tensor, what: &str) -> Result<Ref<'t, [T]>> {
    t.elements::<T>().ok_or_else(|| cx.error(format!("{what} is being mutated")))
}

/// The elements of a tensor this kernel has just allocated, for writing.
pub fn write<'t, T: Element>(cx: &KernelCx, t: &'t Tensor) -> Result<RefMut<'t, [T]>> {
    t.elements_mut::<T>().ok_or_else(|| cx.fail(ErrorKind::Crash, "a new tensor is already borrowed"))
}

/// A kernel's walk left an operand's elements: a bug of the engine's layout code,
/// reported as the state no checked program reaches.
pub fn layout_bug(cx: &KernelCx) -> Error {
    cx.fail(ErrorKind::Crash, "an operand was read outside its elements (a layout bug)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_see_zero_dimensions_before_overflow() {
        assert_eq!(count(&[]), Some(1));
        assert_eq!(count(&[3, 4]), Some(12));
        assert_eq!(count(&[1 << 40, 1 << 40, 0]), Some(0));
        assert_eq!(count(&[1 << 40, 1 << 40]), None);
    }
}
