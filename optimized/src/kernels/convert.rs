//! Element type conversions of whole tensors (OP-astype, and `matmul`'s `out_dtype`):
//! one dispatch on the source and target dtypes, then a loop of [`Num::cast`]
//! (vectorized, and split across threads when large, by [`simd`](super::simd)).

use super::common::{read, write};
use super::simd::{self, loops::Cast, Exec};
use super::KernelCx;
use crate::dtype::DType;
use crate::error::Result;
use crate::scalar::{to_f64, Num};
use crate::tensor::Tensor;
use crate::with_num;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `src` converted element by element into `dst` (OP-astype); `Err(i)` when element
/// `i` is the first without a value in `D` (a NaN, infinite or out-of-range float to an
/// integer); the elements before it are converted, the later ones unspecified.
#[inline]
pub fn cast_slice<S: Num, D: Num>(src: &[S], dst: &mut [D]) -> std::result::Result<(), usize> {
    simd::run(simd::level(), Cast { src, dst })
}

/// OP-astype on a tensor: a new tensor of dtype `to` (a copy when `t` already has it).
/// Errors: `OpError` for an element that does not convert; `t` being written.
pub fn convert(cx: &KernelCx, t: &Tensor, what: &str, to: DType) -> Result<Tensor> {
    if t.dtype() == to {
        let src = t.data().ok_or_else(|| cx.error(format!("{what} is being mutated")))?;
        let out = cx.alloc_for_overwrite(to, t.shape())?;
        if let Some(mut dst) = out.data_mut() {
            dst.bytes_mut().copy_from_slice(src.bytes());
        }
        return Ok(out);
    }
    with_num!(t.dtype(), S => with_num!(to, D => convert_typed::<S, D>(cx, t, what, to)))
}

fn convert_typed<S: Num, D: Num>(cx: &KernelCx, t: &Tensor, what: &str, to: DType) -> Result<Tensor> {
    let x = read::<S>(cx, t, what)?;
    let out = cx.alloc_for_overwrite(to, t.shape())?;
    let exec = Exec::of(cx);
    // The first failing element over all parts: each part reports its first.
    let first_bad = AtomicUsize::new(usize::MAX);
    {
        let mut dst = write::<D>(cx, &out)?;
        let n = dst.len().min(x.len());
        let src: &[S] = &x;
        let part = |at: usize, dst: &mut [D]| {
            if let Err(i) = simd::run(exec.level, Cast { src: &src[at..at + dst.len()], dst }) {
                first_bad.fetch_min(at + i, Ordering::Relaxed);
            }
        };
        let threaded = if exec.splits(n) {
            simd::parallel_chunks_mut(exec.threads, &mut dst[..n], exec.parallel_min / 2, part)
        } else {
            part(0, &mut dst[..n]);
            false
        };
        exec.record(n, threaded);
    }
    match first_bad.into_inner() {
        usize::MAX => Ok(out),
        i => Err(cx.error(format!("{} is out of the range of {to}", to_f64(x[i])))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::B8;
    use half::f16;

    #[test]
    fn slices_convert_until_the_first_failure() {
        let mut out = [0i8; 4];
        assert_eq!(cast_slice(&[1.5f32, -2.5, 127.0, 128.0], &mut out), Err(3));
        assert_eq!(out[..3], [1, -2, 127]);
        let mut out = [B8::FALSE; 3];
        assert_eq!(cast_slice(&[f16::NAN, f16::ZERO, f16::NEG_INFINITY], &mut out), Ok(()));
        assert_eq!(out, [B8::TRUE, B8::FALSE, B8::TRUE]);
        let mut out = [0.0f32; 2];
        assert_eq!(cast_slice(&[u64::MAX, 16_777_217], &mut out), Ok(()));
        assert_eq!(out, [1.8446744e19, 16_777_216.0]);
    }
}
