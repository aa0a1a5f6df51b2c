//! `take`: gathering entries of a tensor at integer indices.

use super::{check_size, operand, product, read, write};
use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::kernels::simd::{self, loops::Gather, Exec, Level};
use crate::kernels::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::tensor::Tensor;
use crate::value::Value;

/// `OP-take`: the lowering; `axis` (absent or `None`: the flattened operand) is read once.
pub fn take(l: &Lowering) -> Box<dyn Kernel> {
    match attrs::opt_int(l.attrs, "axis") {
        Ok(axis) => Box::new(Take { axis }),
        Err(e) => Box::new(Failing(e)),
    }
}

/// `OP-take`: the entries of `x` at `indices` along `axis`, of shape
/// `x.shape[:axis] + indices.shape + x.shape[axis+1:]`; without an axis, the entries
/// of the flattened `x`, of `indices`' shape. Indices are integers or bools (0/1);
/// each must lie in `[0, n)` (no NumPy negative indices: TVM reads out of bounds
/// there). `OpError`: float indices, `axis` out of range, an
/// index out of range (even when the result is empty).
struct Take {
    axis: Option<i64>,
}

/// An index element: its value as a position, if it is not negative.
trait IndexElement: Element {
    fn position(self) -> Option<u64>;
}

macro_rules! index_element {
    ($($t:ty),*) => {$(
        impl IndexElement for $t {
            fn position(self) -> Option<u64> {
                u64::try_from(self).ok()
            }
        }
    )*};
}
index_element!(u8, i8, i16, i32, i64, u16, u32, u64);

/// The positions `idx` names in a dimension of `d`, each checked to be below `d`.
fn positions_in<I: IndexElement>(cx: &KernelCx, idx: &[I], d: u64) -> Result<Vec<usize>> {
    idx.iter()
        .map(|&i| match i.position() {
            Some(p) if p < d => Ok(p as usize),
            _ => Err(cx.error(format!("index {i:?} is out of range for a dimension of {d}"))),
        })
        .collect()
}

/// The indices tensor's positions: one dispatch on its dtype, then a typed loop
/// (`bool` is stored as the bytes 0 and 1).
fn positions(cx: &KernelCx, idx: &Tensor, d: u64) -> Result<Vec<usize>> {
    match idx.dtype() {
        DType::Bool | DType::U8 => positions_in(cx, &read::<u8>(cx, idx)?, d),
        DType::I8 => positions_in(cx, &read::<i8>(cx, idx)?, d),
        DType::I16 => positions_in(cx, &read::<i16>(cx, idx)?, d),
        DType::I32 => positions_in(cx, &read::<i32>(cx, idx)?, d),
        DType::I64 => positions_in(cx, &read::<i64>(cx, idx)?, d),
        DType::U16 => positions_in(cx, &read::<u16>(cx, idx)?, d),
        DType::U32 => positions_in(cx, &read::<u32>(cx, idx)?, d),
        DType::U64 => positions_in(cx, &read::<u64>(cx, idx)?, d),
        DType::F16 | DType::F32 | DType::F64 => Err(cx.error(format!("indices must be integers, not {}", idx.dtype()))),
    }
}

/// Copies, for each of `outer` blocks of `d` rows of `inner` elements of `src`, the
/// rows at `pos` into `dst`, in order: single elements by a vectorized gather, longer
/// rows by `copy_from_slice`.
fn gather_rows<T: Copy>(
    level: Level,
    src: &[T],
    dst: &mut [T],
    pos: &[usize],
    (outer, d, inner): (usize, usize, usize),
) {
    let mut at = 0;
    for o in 0..outer {
        let block = &src[o * d * inner..(o + 1) * d * inner];
        if inner == 1 {
            simd::run(level, Gather { block, pos, dst: &mut dst[at..at + pos.len()] });
            at += pos.len();
        } else {
            for &p in pos {
                dst[at..at + inner].copy_from_slice(&block[p * inner..(p + 1) * inner]);
                at += inner;
            }
        }
    }
}

impl Kernel for Take {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 2)?;
        let x = operand(cx, args, 0, "the operand")?;
        let idx = operand(cx, args, 1, "the indices")?;
        if idx.dtype().is_float() {
            return Err(cx.error(format!("indices must be integers, not {}", idx.dtype())));
        }
        let axis = self.axis.map(|a| cx.axis(a, x.rank())).transpose()?;
        // The dimension indexed, and the result's shape.
        let (d, shape) = match axis {
            None => (x.numel() as u64, idx.shape().to_vec()),
            Some(ax) => {
                let s = x.shape();
                (s[ax], [&s[..ax], idx.shape(), &s[ax + 1..]].concat())
            }
        };
        check_size(cx, &shape)?;
        let pos = positions(cx, idx, d)?;
        let out = cx.alloc(x.dtype(), &shape)?;
        if out.numel() == 0 {
            return Ok(Value::tensor(out));
        }
        // The result is not empty, so neither is `x` (an index lies below `d`): these are exact.
        let (outer, inner) = match axis {
            None => (1, 1),
            Some(ax) => (product(&x.shape()[..ax]), product(&x.shape()[ax + 1..])),
        };
        let exec = Exec::of(cx);
        let dims = (outer, d as usize, inner);
        by_width!(x.dtype(), T => gather_rows(exec.level, &read::<T>(cx, x)?, &mut write::<T>(cx, &out)?, &pos, dims));
        exec.record(out.numel(), false);
        Ok(Value::tensor(out))
    }
}
