//! Element indexing: `gather_elements` and `scatter_elements` (semantics:
//! operator-semantics.md, "Sorting and element indexing").
//!
//! The indices are read once, by one dispatch on their dtype, into positions along the
//! axis (a negative index counted from the end once, every one checked) before anything
//! is written. `gather_elements` then fills its output in parts across threads, each
//! part walking its positions with an odometer that keeps the data offset. The scatter
//! copies `data` and applies the updates block by block: the positions before the axis
//! pick one block of `data` (contiguous, all its targets inside), so blocks go to
//! threads and, inside a block, the updates keep row-major order — the order a
//! duplicate target sees them in, whatever the thread count.

use super::common::{created, operand, read, write};
use super::simd::parallel_chunks_mut;
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::DType;
use crate::error::Result;
use crate::scalar::Num;
use crate::tensor::Tensor;
use crate::value::Value;
use crate::with_num;
use spec_model::grammar::AttrValue;

/// Row-major strides of `shape` (in elements).
fn strides(shape: &[u64]) -> Vec<usize> {
    let mut st = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        st[i] = st[i + 1].saturating_mul(shape[i + 1] as usize);
    }
    st
}

/// The checks both operators share; returns the normalized axis.
fn check_pair(cx: &KernelCx, axis: i64, data: &Tensor, indices: &Tensor) -> Result<usize> {
    let axis = cx.axis(axis, data.rank())?;
    let d = indices.dtype();
    if d.is_float() || d.is_bool() {
        return Err(cx.error(format!("indices must have an integer dtype, not {}", d.data_type())));
    }
    if indices.rank() != data.rank() {
        return Err(cx.error(format!(
            "data (rank {}) and indices (rank {}) must have the same rank",
            data.rank(),
            indices.rank()
        )));
    }
    let longer = (0..data.rank()).find(|&j| j != axis && indices.shape()[j] > data.shape()[j]);
    if let Some(j) = longer {
        return Err(cx.error(format!(
            "indices have length {} along axis {j}, where data has only {}",
            indices.shape()[j],
            data.shape()[j]
        )));
    }
    Ok(axis)
}

/// An index element as a signed 128-bit integer.
trait IndexValue: crate::dtype::Element + Copy {
    fn wide(self) -> i128;
}
macro_rules! index_value {
    ($($t:ty),*) => {$(impl IndexValue for $t {
        #[inline(always)]
        fn wide(self) -> i128 {
            self as i128
        }
    })*};
}
index_value!(i8, i16, i32, i64, u8, u16, u32, u64);

fn wrap_all<I: IndexValue>(cx: &KernelCx, idx: &[I], d: u64, axis: usize) -> Result<Vec<usize>> {
    let d = d as i128;
    idx.iter()
        .map(|&v| {
            let w = v.wide();
            let w = if w < 0 { w + d } else { w };
            if (0..d).contains(&w) {
                Ok(w as usize)
            } else {
                Err(cx.error(format!("index {} is out of range for axis {axis} of length {d}", v.wide())))
            }
        })
        .collect()
}

/// The positions along `axis` the indices name, each checked against the length `d`.
fn positions(cx: &KernelCx, indices: &Tensor, d: u64, axis: usize) -> Result<Vec<usize>> {
    let what = "indices";
    match indices.dtype() {
        DType::I8 => wrap_all(cx, &read::<i8>(cx, indices, what)?, d, axis),
        DType::I16 => wrap_all(cx, &read::<i16>(cx, indices, what)?, d, axis),
        DType::I32 => wrap_all(cx, &read::<i32>(cx, indices, what)?, d, axis),
        DType::I64 => wrap_all(cx, &read::<i64>(cx, indices, what)?, d, axis),
        DType::U8 => wrap_all(cx, &read::<u8>(cx, indices, what)?, d, axis),
        DType::U16 => wrap_all(cx, &read::<u16>(cx, indices, what)?, d, axis),
        DType::U32 => wrap_all(cx, &read::<u32>(cx, indices, what)?, d, axis),
        DType::U64 => wrap_all(cx, &read::<u64>(cx, indices, what)?, d, axis),
        other => Err(cx.error(format!("indices must have an integer dtype, not {}", other.data_type()))),
    }
}

/// Walks the positions of `shape` in row-major order from the `start`-th, keeping the
/// offset `Σ_{j ≠ axis} c_j · st_j` of the coordinates other than `axis`.
struct Odometer<'a> {
    shape: &'a [u64],
    st: &'a [usize],
    axis: usize,
    c: Vec<u64>,
    base: usize,
}

impl<'a> Odometer<'a> {
    fn new(shape: &'a [u64], st: &'a [usize], axis: usize, mut start: usize) -> Odometer<'a> {
        let mut c = vec![0u64; shape.len()];
        for j in (0..shape.len()).rev() {
            let d = shape[j] as usize;
            c[j] = (start % d) as u64;
            start /= d;
        }
        let base = (0..shape.len()).filter(|&j| j != axis).map(|j| c[j] as usize * st[j]).sum();
        Odometer { shape, st, axis, c, base }
    }

    #[inline(always)]
    fn step(&mut self) {
        for j in (0..self.c.len()).rev() {
            self.c[j] += 1;
            let on = j != self.axis;
            if on {
                self.base += self.st[j];
            }
            if self.c[j] < self.shape[j] {
                return;
            }
            if on {
                self.base -= self.st[j] * self.shape[j] as usize;
            }
            self.c[j] = 0;
        }
    }
}

/// OP-gather_elements: `out[p] = data[p with axis replaced by indices[p]]`.
pub fn gather_elements(l: &Lowering) -> Box<dyn Kernel> {
    match attrs::opt_int(l.attrs, "axis") {
        Ok(axis) => Box::new(Gather { axis: axis.unwrap_or(0) }),
        Err(m) => Box::new(Failing(m)),
    }
}

struct Gather {
    axis: i64,
}

impl Kernel for Gather {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 2)?;
        let data = operand(cx, args, 0, "data")?;
        let indices = operand(cx, args, 1, "indices")?;
        let axis = check_pair(cx, self.axis, data, indices)?;
        created(cx, indices.shape())?;
        let pos = positions(cx, indices, data.shape()[axis], axis)?;
        let out = cx.alloc_for_overwrite(data.dtype(), indices.shape())?;
        with_num!(data.dtype(), T => gather_typed::<T>(cx, data, indices.shape(), axis, &pos, &out))?;
        Ok(Value::tensor(out))
    }
}

fn gather_typed<T: Num>(
    cx: &KernelCx,
    data: &Tensor,
    ishape: &[u64],
    axis: usize,
    pos: &[usize],
    out: &Tensor,
) -> Result<()> {
    let x = read::<T>(cx, data, "data")?;
    let x: &[T] = &x;
    let mut o = write::<T>(cx, out)?;
    if o.is_empty() {
        return Ok(());
    }
    let st = strides(data.shape());
    let step = st[axis];
    parallel_chunks_mut(cx.threads_for(o.len()), &mut o, 1 << 14, |start, part| {
        let mut walk = Odometer::new(ishape, &st, axis, start);
        for (k, slot) in part.iter_mut().enumerate() {
            *slot = x[walk.base + pos[start + k] * step];
            walk.step();
        }
    });
    Ok(())
}

/// How an update combines with the element it lands on.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Reduce {
    Update,
    Add,
    Mul,
    Mean,
    Max,
    Min,
}

/// OP-scatter_elements: a copy of `data` with each `updates[p]` combined into the
/// element `indices[p]` names, in row-major order of `p`. A `reduction` other than the
/// six: a failing kernel.
pub fn scatter_elements(l: &Lowering) -> Box<dyn Kernel> {
    let reduce = match l.attrs.get("reduction") {
        None | Some(AttrValue::None) => Ok(Reduce::Update),
        Some(AttrValue::Str(s)) => match s.as_str() {
            "update" => Ok(Reduce::Update),
            "add" => Ok(Reduce::Add),
            "mul" => Ok(Reduce::Mul),
            "mean" => Ok(Reduce::Mean),
            "max" => Ok(Reduce::Max),
            "min" => Ok(Reduce::Min),
            other => Err(format!("no reduction {other:?}")),
        },
        Some(other) => Err(format!("reduction must be a string, not {other:?}")),
    };
    match (reduce, attrs::opt_int(l.attrs, "axis")) {
        (Ok(reduce), Ok(axis)) => Box::new(Scatter { axis: axis.unwrap_or(0), reduce }),
        (Err(m), _) | (_, Err(m)) => Box::new(Failing(m)),
    }
}

struct Scatter {
    axis: i64,
    reduce: Reduce,
}

impl Kernel for Scatter {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 3)?;
        let data = operand(cx, args, 0, "data")?;
        let indices = operand(cx, args, 1, "indices")?;
        let updates = operand(cx, args, 2, "updates")?;
        let axis = check_pair(cx, self.axis, data, indices)?;
        if updates.shape() != indices.shape() {
            return Err(cx.error(format!(
                "updates have shape {:?}, other than indices' {:?}",
                updates.shape(),
                indices.shape()
            )));
        }
        if updates.dtype() != data.dtype() {
            return Err(cx.error(format!(
                "updates have dtype {}, other than data's {}",
                updates.dtype().data_type(),
                data.dtype().data_type()
            )));
        }
        created(cx, data.shape())?;
        let pos = positions(cx, indices, data.shape()[axis], axis)?;
        let out = cx.alloc_for_overwrite(data.dtype(), data.shape())?;
        let job = ScatterJob { axis, reduce: self.reduce, dshape: data.shape(), ishape: indices.shape(), pos: &pos };
        with_num!(data.dtype(), T => scatter_typed::<T>(cx, data, updates, &out, &job))?;
        Ok(Value::tensor(out))
    }
}

struct ScatterJob<'a> {
    axis: usize,
    reduce: Reduce,
    dshape: &'a [u64],
    ishape: &'a [u64],
    pos: &'a [usize],
}

#[inline(always)]
fn combine<T: Num>(r: Reduce, x: T, u: T) -> T {
    match r {
        Reduce::Update => u,
        Reduce::Add => x.add(u),
        Reduce::Mul => x.mul(u),
        Reduce::Mean => T::mean(x.add(u), 2).unwrap_or(u),
        Reduce::Max => x.max_nan(u),
        Reduce::Min => x.min_nan(u),
    }
}

fn scatter_typed<T: Num>(cx: &KernelCx, data: &Tensor, updates: &Tensor, out: &Tensor, job: &ScatterJob) -> Result<()> {
    let x = read::<T>(cx, data, "data")?;
    let u = read::<T>(cx, updates, "updates")?;
    let (x, u): (&[T], &[T]) = (&x, &u);
    let mut o = write::<T>(cx, out)?;
    parallel_chunks_mut(cx.threads_for(o.len()), &mut o, 1 << 16, |start, part| {
        part.copy_from_slice(&x[start..start + part.len()]);
    });
    if u.is_empty() {
        return Ok(());
    }
    let axis = job.axis;
    // Blocks: one per position before the axis, `data`'s from `axis` on, `indices`' likewise.
    let dblock: usize = job.dshape[axis..].iter().map(|&d| d as usize).product();
    let iblock: usize = job.ishape[axis..].iter().map(|&d| d as usize).product();
    let outer = &job.ishape[..axis];
    let dst = strides(job.dshape);
    let dst_in = &dst[axis..];
    let inner_shape = &job.ishape[axis..];
    let douter = &job.dshape[..axis];
    let mut blocks: Vec<&mut [T]> = o.chunks_mut(dblock).collect();
    let threads = cx.threads_for(u.len());
    parallel_chunks_mut(threads, &mut blocks, 1, |first, part| {
        for (b, block) in part.iter_mut().enumerate() {
            // The coordinates of data block `first + b`; inside `indices`' outer shape
            // they name indices block `q`, else nothing lands here.
            let mut rest = first + b;
            let mut q = 0usize;
            let mut scale = 1usize;
            let mut inside = true;
            for j in (0..douter.len()).rev() {
                let c = rest % douter[j] as usize;
                rest /= douter[j] as usize;
                inside &= (c as u64) < outer[j];
                q += c * scale;
                scale *= outer[j] as usize;
            }
            if !inside {
                continue;
            }
            let mut walk = Odometer::new(inner_shape, dst_in, 0, 0);
            let range = q * iblock..(q + 1) * iblock;
            for (&p, &v) in job.pos[range.clone()].iter().zip(&u[range]) {
                let t = walk.base + p * dst_in[0];
                block[t] = combine(job.reduce, block[t], v);
                walk.step();
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Memory;
    use spec_model::grammar::Attrs;
    use spec_model::ops::Op;
    use spec_model::Span;
    use std::rc::Rc;

    fn run(op: Op, attrs: &[(&str, AttrValue)], args: &[Value], threads: usize, m: &Rc<Memory>) -> Result<Value> {
        let mut a = Attrs::default();
        attrs.iter().for_each(|(k, v)| a.insert(*k, v.clone()));
        let statics = vec![None; args.len()];
        let l = Lowering { op, attrs: &a, args: &statics };
        let super::super::Lowered::Kernel(k) = super::super::lower(&l) else { panic!("a kernel") };
        k.run(&KernelCx { op, span: Span::SYNTHETIC, memory: m, threads, parallel_min: 2 }, args)
    }

    fn t<T: crate::dtype::Element>(d: DType, v: &[T], shape: &[u64], m: &Rc<Memory>) -> Value {
        Value::tensor(Tensor::from_slice(d, shape, v, m).unwrap())
    }

    fn got<T: crate::dtype::Element + Copy>(v: &Value) -> Vec<T> {
        let Value::Tensor(t) = v else { panic!("a tensor") };
        t.elements::<T>().unwrap().to_vec()
    }

    #[test]
    fn gather_wraps_once_and_checks() {
        let m = Memory::new(1 << 20);
        let x = t(DType::I32, &[1, 2, 3, 4, 5, 6], &[2, 3], &m);
        let i = t(DType::I64, &[-1i64, 0, 1, -3], &[2, 2], &m);
        let g = run(Op::GatherElements, &[("axis", AttrValue::Int(1))], &[x.clone(), i], 1, &m).unwrap();
        assert_eq!(got::<i32>(&g), [3, 1, 5, 4]);
        let i = t(DType::U8, &[1u8, 0, 1], &[1, 3], &m);
        assert_eq!(got::<i32>(&run(Op::GatherElements, &[], &[x.clone(), i], 1, &m).unwrap()), [4, 2, 6]);
        for bad in [3i64, -4] {
            let i = t(DType::I64, &[bad], &[1, 1], &m);
            let e = run(Op::GatherElements, &[("axis", AttrValue::Int(1))], &[x.clone(), i], 1, &m);
            assert_eq!(e.unwrap_err().rule, "OP-gather_elements");
        }
        let i = t(DType::I64, &[0i64; 3], &[3, 1], &m);
        let e = run(Op::GatherElements, &[("axis", AttrValue::Int(1))], &[x, i], 1, &m);
        assert_eq!(e.unwrap_err().rule, "OP-gather_elements");
    }

    #[test]
    fn scatter_reductions_in_row_major_order() {
        let m = Memory::new(1 << 20);
        let x = t(DType::I32, &[10, 20, 30, -5, -7, 9], &[2, 3], &m);
        let i = t(DType::I64, &[0i64, 0, -1, 2, 2, 2], &[2, 3], &m);
        let u = t(DType::I32, &[1, 2, 3, 4, 5, -6], &[2, 3], &m);
        let s = |r: &str| {
            let attrs = [("axis", AttrValue::Int(1)), ("reduction", AttrValue::Str(r.into()))];
            got::<i32>(&run(Op::ScatterElements, &attrs, &[x.clone(), i.clone(), u.clone()], 2, &m).unwrap())
        };
        assert_eq!(s("update"), [2, 20, 3, -5, -7, -6]);
        assert_eq!(s("add"), [13, 20, 33, -5, -7, 12]);
        assert_eq!(s("mul"), [20, 20, 90, -5, -7, -1080]);
        assert_eq!(s("mean"), [3, 20, 16, -5, -7, 0]);
        assert_eq!(s("max"), [10, 20, 30, -5, -7, 9]);
        assert_eq!(s("min"), [1, 20, 3, -5, -7, -6]);
    }

    /// Duplicate targets along axis 0 (one block: no split) and along axis 1 (blocks
    /// split across threads) give the single-thread result.
    #[test]
    fn duplicates_are_deterministic_across_threads() {
        let m = Memory::new(1 << 26);
        let (r, c) = (64u64, 96u64);
        let x: Vec<f32> = (0..r * c).map(|v| v as f32).collect();
        let idx: Vec<i64> = (0..r * c).map(|v| ((v * 37) % 5) as i64 - 2).collect();
        let upd: Vec<f32> = (0..r * c).map(|v| (v % 11) as f32 * 0.5).collect();
        let args = [t(DType::F32, &x, &[r, c], &m), t(DType::I64, &idx, &[r, c], &m), t(DType::F32, &upd, &[r, c], &m)];
        for axis in [0, 1] {
            for red in ["update", "add", "mean", "max"] {
                let attrs = [("axis", AttrValue::Int(axis)), ("reduction", AttrValue::Str(red.into()))];
                let one = got::<f32>(&run(Op::ScatterElements, &attrs, &args, 1, &m).unwrap());
                let two = got::<f32>(&run(Op::ScatterElements, &attrs, &args, 2, &m).unwrap());
                assert_eq!(one, two, "axis {axis}, {red}");
            }
        }
        // Sequential reference for "update" along axis 1: the last write of each row wins.
        let attrs = [("axis", AttrValue::Int(1))];
        let got2 = got::<f32>(&run(Op::ScatterElements, &attrs, &args, 2, &m).unwrap());
        let mut want = x.clone();
        for (e, &v) in idx.iter().enumerate() {
            let row = e / c as usize;
            let col = if v < 0 { v + c as i64 } else { v } as usize;
            want[row * c as usize + col] = upd[e];
        }
        assert_eq!(got2, want);
    }

    #[test]
    fn smaller_indices_and_empty() {
        let m = Memory::new(1 << 20);
        let x = t(DType::I32, &[0; 12], &[3, 4], &m);
        let i = t(DType::I32, &[3i32, 0], &[2, 1], &m);
        let u = t(DType::I32, &[7, 8], &[2, 1], &m);
        let s = run(Op::ScatterElements, &[("axis", AttrValue::Int(1))], &[x.clone(), i, u], 2, &m).unwrap();
        assert_eq!(got::<i32>(&s), [0, 0, 0, 7, 8, 0, 0, 0, 0, 0, 0, 0]);
        let i = t(DType::I32, &[] as &[i32], &[0, 4], &m);
        let u = t(DType::I32, &[] as &[i32], &[0, 4], &m);
        let s = run(Op::ScatterElements, &[], &[x.clone(), i, u.clone()], 1, &m).unwrap();
        assert_eq!(got::<i32>(&s), [0; 12]);
        let f = t(DType::F32, &[] as &[f32], &[0, 4], &m);
        let e = run(Op::ScatterElements, &[], &[x, f, u], 1, &m);
        assert_eq!(e.unwrap_err().rule, "OP-scatter_elements");
    }
}
