//! Sorting: `sort`, `argsort`, `topk` (semantics: operator-semantics.md, "Sorting and
//! element indexing").
//!
//! Every element maps to a `u64` key whose unsigned order is the operator's order
//! ([`SortKey`]: integers offset, floats by their sign-folded bits with `-0.0` read as
//! `0.0` and every NaN as the greatest key); descending order is the complemented key.
//! A line's elements become `key << 64 | position`, so an unstable sort of those
//! `u128`s is the stable order (the position breaks ties); `topk` selects the first `k`
//! with `select_nth_unstable` and sorts only those. Lines along a middle axis are laid
//! out contiguously first and the results laid back; lines split across threads.

use super::common::{created, operand, read, write};
use super::simd::parallel_chunks_mut;
use super::statistical::rows;
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::scalar::{Num, B8};
use crate::tensor::Tensor;
use crate::value::Value;
use half::f16;
use spec_model::grammar::{AttrValue, DataType};
use std::rc::Rc;

/// An element's place in the sort order as an unsigned key.
pub trait SortKey: Element {
    fn key(self) -> u64;
}

macro_rules! signed_key {
    ($($t:ty),*) => {$(impl SortKey for $t {
        #[inline(always)]
        fn key(self) -> u64 {
            (self as i64 as u64) ^ (1 << 63)
        }
    })*};
}
macro_rules! unsigned_key {
    ($($t:ty),*) => {$(impl SortKey for $t {
        #[inline(always)]
        fn key(self) -> u64 {
            self as u64
        }
    })*};
}
signed_key!(i8, i16, i32, i64);
unsigned_key!(u8, u16, u32, u64);

impl SortKey for B8 {
    fn key(self) -> u64 {
        self.0 as u64
    }
}

/// Widened exactly to `f64` (order kept): NaN is the greatest key, `-0.0` is `0.0`;
/// a negative float's bits are complemented, a positive one's get the top bit.
#[inline(always)]
fn float_key(x: f64) -> u64 {
    if x.is_nan() {
        return u64::MAX;
    }
    let b = (x + 0.0).to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

impl SortKey for f16 {
    fn key(self) -> u64 {
        float_key(self.to_f64())
    }
}
impl SortKey for f32 {
    fn key(self) -> u64 {
        float_key(self as f64)
    }
}
impl SortKey for f64 {
    fn key(self) -> u64 {
        float_key(self)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sorting {
    Sort,
    Argsort,
    Topk,
}

/// What `topk` returns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ret {
    Both,
    Values,
    Indices,
}

struct SortKernel {
    op: Sorting,
    axis: i64,
    descending: bool,
    /// The index dtype (`argsort`, `topk`).
    dtype: DataType,
    /// `topk`'s `k` (below 1: all).
    k: i64,
    ret: Ret,
}

/// OP-sort, OP-argsort, OP-topk. Attributes of the wrong kind, or a `ret_type` other
/// than the three: a failing kernel.
pub fn sorting(l: &Lowering, op: Sorting) -> Box<dyn Kernel> {
    // Only the operator's own attributes are read (others are ignored at run time, as
    // the oracle ignores them).
    let read = || -> std::result::Result<SortKernel, String> {
        let topk = op == Sorting::Topk;
        let desc_name = if topk { "largest" } else { "descending" };
        let ret = match l.attrs.get("ret_type") {
            _ if !topk => Ret::Both,
            None | Some(AttrValue::None) => Ret::Both,
            Some(AttrValue::Str(s)) if s.as_str() == "both" => Ret::Both,
            Some(AttrValue::Str(s)) if s.as_str() == "values" => Ret::Values,
            Some(AttrValue::Str(s)) if s.as_str() == "indices" => Ret::Indices,
            Some(other) => return Err(format!("ret_type must be \"both\", \"values\" or \"indices\", not {other:?}")),
        };
        let dtype = if op == Sorting::Sort { None } else { attrs::dtype(l.attrs, "dtype")? };
        Ok(SortKernel {
            op,
            axis: attrs::opt_int(l.attrs, "axis")?.unwrap_or(-1),
            descending: attrs::bool(l.attrs, desc_name, topk)?,
            dtype: dtype.unwrap_or(DataType::INT32),
            k: if topk { attrs::opt_int(l.attrs, "k")?.unwrap_or(1) } else { 1 },
            ret,
        })
    };
    match read() {
        Ok(k) => Box::new(k),
        Err(m) => Box::new(Failing(m)),
    }
}

impl SortKernel {
    /// The normalized axis of a rank-`rank` operand.
    fn axis_of(&self, cx: &KernelCx, rank: usize) -> Result<usize> {
        cx.axis(self.axis, rank)
    }
}

impl Kernel for SortKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let a = operand(cx, args, 0, if self.op == Sorting::Sort { "the operand" } else { "data" })?;
        let axis = self.axis_of(cx, a.rank())?;
        let n = a.shape()[axis];
        let index = if self.op == Sorting::Sort {
            None
        } else {
            let d = DType::of(self.dtype).filter(|d| !d.is_float() && !d.is_bool());
            let d =
                d.ok_or_else(|| cx.error(format!("the index dtype must be an integer dtype, not {}", self.dtype)))?;
            if n > 0 && !self.dtype.fits(n as i128 - 1) {
                return Err(cx.error(format!("positions up to {} do not fit the index dtype {}", n - 1, self.dtype)));
            }
            Some(d)
        };
        let m = match self.op {
            Sorting::Topk if self.k < 1 => n,
            Sorting::Topk if self.k as u64 > n => {
                return Err(cx.error(format!("k = {} is more than the length {n} of axis {axis}", self.k)))
            }
            Sorting::Topk => self.k as u64,
            _ => n,
        };
        let mut shape = a.shape().to_vec();
        shape[axis] = m;
        created(cx, &shape)?;
        let (want_values, want_indices) = match (self.op, self.ret) {
            (Sorting::Sort, _) => (true, false),
            (Sorting::Argsort, _) => (false, true),
            (Sorting::Topk, Ret::Both) => (true, true),
            (Sorting::Topk, Ret::Values) => (true, false),
            (Sorting::Topk, Ret::Indices) => (false, true),
        };
        let values = if want_values { Some(cx.alloc_for_overwrite(a.dtype(), &shape)?) } else { None };
        let indices = match index {
            Some(d) if want_indices => Some(cx.alloc_for_overwrite(d, &shape)?),
            _ => None,
        };
        let job = Job { axis, n: n as usize, m: m as usize, descending: self.descending };
        macro_rules! go {
            ($t:ty) => {
                lines::<$t>(cx, a, &job, values.as_ref(), indices.is_some())
            };
        }
        let positions = match a.dtype() {
            DType::Bool => go!(B8),
            DType::I8 => go!(i8),
            DType::I16 => go!(i16),
            DType::I32 => go!(i32),
            DType::I64 => go!(i64),
            DType::U8 => go!(u8),
            DType::U16 => go!(u16),
            DType::U32 => go!(u32),
            DType::U64 => go!(u64),
            DType::F16 => go!(f16),
            DType::F32 => go!(f32),
            DType::F64 => go!(f64),
        }?;
        if let Some(t) = &indices {
            // Saturating: an empty result may have huge dimensions (no position is laid then).
            let inner = shape[axis + 1..].iter().fold(1usize, |n, &d| n.saturating_mul(d as usize));
            match t.dtype() {
                DType::I8 => put_positions::<i8>(cx, &positions, t, job.m, inner),
                DType::I16 => put_positions::<i16>(cx, &positions, t, job.m, inner),
                DType::I32 => put_positions::<i32>(cx, &positions, t, job.m, inner),
                DType::I64 => put_positions::<i64>(cx, &positions, t, job.m, inner),
                DType::U8 => put_positions::<u8>(cx, &positions, t, job.m, inner),
                DType::U16 => put_positions::<u16>(cx, &positions, t, job.m, inner),
                DType::U32 => put_positions::<u32>(cx, &positions, t, job.m, inner),
                DType::U64 => put_positions::<u64>(cx, &positions, t, job.m, inner),
                d => Err(cx.error(format!("the index dtype must be an integer dtype, not {}", d.data_type()))),
            }?;
        }
        let wrap = |t: Option<Tensor>| t.map(|t| Value::Tensor(Rc::new(t)));
        Ok(match (wrap(values), wrap(indices)) {
            (Some(v), Some(i)) => Value::Tuple(Rc::from([v, i])),
            (Some(v), None) => v,
            (None, Some(i)) => i,
            (None, None) => return Err(cx.error("nothing to return")),
        })
    }

    /// LIMIT-fuel: `numel · ⌈log2 n⌉` comparisons for lines of `n` (as the oracle).
    fn work(&self, args: &[Value]) -> Option<u64> {
        let Some(Value::Tensor(a)) = args.first() else { return None };
        let r = a.rank() as i64;
        let axis = if self.axis < 0 { self.axis.checked_add(r)? } else { self.axis };
        let n = *a.shape().get(usize::try_from(axis).ok()?)?;
        let log = 64 - n.max(1).saturating_sub(1).leading_zeros() as u64;
        Some((a.numel() as u64).saturating_mul(log))
    }
}

struct Job {
    axis: usize,
    /// The axis length.
    n: usize,
    /// The result's axis length (`k` for `topk`).
    m: usize,
    descending: bool,
}

/// One line's result: its first `m` (key, position) pairs in order, in `keys`.
#[inline]
fn order_line<T: SortKey>(line: &[T], m: usize, descending: bool, keys: &mut Vec<u128>) {
    keys.clear();
    let flip = if descending { u64::MAX } else { 0 };
    keys.extend(line.iter().enumerate().map(|(p, &x)| (((x.key() ^ flip) as u128) << 64) | p as u128));
    if m < keys.len() {
        if m > 0 {
            keys.select_nth_unstable(m - 1);
        }
        keys.truncate(m);
    }
    keys.sort_unstable();
}

/// One line's output: its values and its positions (either may be absent).
type Slot<'s, T> = (Option<&'s mut [T]>, Option<&'s mut [u64]>);

/// Sorts every line of `a` (laid contiguously first when the axis is not the last)
/// into `values` (in place when the axis is the last) and, with `positions`, returns
/// the positions in line order (`count` lines of `m`); lines split across threads.
fn lines<T: SortKey + Copy>(
    cx: &KernelCx,
    a: &Tensor,
    job: &Job,
    values: Option<&Tensor>,
    positions: bool,
) -> Result<Vec<u64>> {
    let x = read::<T>(cx, a, "the operand")?;
    let (n, m) = (job.n, job.m);
    let count = if m == 0 { 0 } else { x.len() / n.max(1) };
    if count == 0 {
        return Ok(Vec::new());
    }
    let inner: usize = a.shape()[job.axis + 1..].iter().map(|&d| d as usize).product();
    let mut reduced = vec![false; a.rank()];
    reduced[job.axis] = true;
    let laid = rows(&x, a.shape(), &reduced);
    let mut vo = match values {
        Some(t) => Some(write::<T>(cx, t)?),
        None => None,
    };
    let mut v_scratch: Vec<T> = Vec::new();
    let mut p_out: Vec<u64> = if positions { vec![0; count * m] } else { Vec::new() };
    {
        // The tensor's own storage when the axis is the last, scratch laid back after otherwise.
        let vbuf: Option<&mut [T]> = match vo.as_deref_mut() {
            Some(v) if inner == 1 => Some(v),
            Some(_) => {
                v_scratch = vec![laid[0]; count * m];
                Some(&mut v_scratch)
            }
            None => None,
        };
        let mut vparts: Vec<Option<&mut [T]>> = vbuf.map(|b| b.chunks_mut(m).map(Some).collect()).unwrap_or_default();
        let mut pparts: Vec<Option<&mut [u64]>> = p_out.chunks_mut(m).map(Some).collect();
        vparts.resize_with(count, || None);
        pparts.resize_with(count, || None);
        let mut slots: Vec<Slot<T>> = vparts.into_iter().zip(pparts).collect();
        let min_lines = (1usize << 14) / n.max(1) + 1;
        parallel_chunks_mut(cx.threads_for(x.len()), &mut slots, min_lines, |start, part| {
            let mut keys = Vec::with_capacity(n);
            for (j, (v, p)) in part.iter_mut().enumerate() {
                let line = &laid[(start + j) * n..(start + j + 1) * n];
                order_line(line, m, job.descending, &mut keys);
                if let Some(v) = v {
                    for (slot, &k) in v.iter_mut().zip(&keys) {
                        *slot = line[k as u64 as usize];
                    }
                }
                if let Some(p) = p {
                    for (slot, &k) in p.iter_mut().zip(&keys) {
                        *slot = k as u64;
                    }
                }
            }
        });
    }
    if inner != 1 {
        if let Some(v) = vo.as_deref_mut() {
            lay_back(&v_scratch, v, m, inner);
        }
    }
    Ok(p_out)
}

/// The positions (line order, lines of `m`) converted to the index tensor's dtype and
/// laid out as the tensor (`inner` lines per block).
fn put_positions<I: Num>(cx: &KernelCx, positions: &[u64], t: &Tensor, m: usize, inner: usize) -> Result<()> {
    let mut out = write::<I>(cx, t)?;
    if positions.is_empty() {
        return Ok(());
    }
    if inner == 1 {
        for (slot, &p) in out.iter_mut().zip(positions) {
            *slot = I::from_u64(p);
        }
    } else {
        let converted: Vec<I> = positions.iter().map(|&p| I::from_u64(p)).collect();
        lay_back(&converted, &mut out, m, inner);
    }
    Ok(())
}

/// Lines `(o, i)` of `m` (`src`, in line order) back to the layout `(o, j, i)`.
fn lay_back<T: Copy>(src: &[T], dst: &mut [T], m: usize, inner: usize) {
    for (block, out) in src.chunks_exact(m * inner).zip(dst.chunks_exact_mut(m * inner)) {
        for (j, row) in out.chunks_exact_mut(inner).enumerate() {
            for (i, slot) in row.iter_mut().enumerate() {
                *slot = block[i * m + j];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Memory;
    use spec_model::grammar::{AttrValue, Attrs};
    use spec_model::ops::Op;
    use spec_model::Span;

    fn run(op: Op, attrs: &[(&str, AttrValue)], x: Value, threads: usize, m: &Rc<Memory>) -> Result<Value> {
        let mut a = Attrs::default();
        attrs.iter().for_each(|(k, v)| a.insert(*k, v.clone()));
        let l = Lowering { op, attrs: &a, args: &[None] };
        let super::super::Lowered::Kernel(k) = super::super::lower(&l) else { panic!("a kernel") };
        k.run(&KernelCx { op, span: Span::SYNTHETIC, memory: m, threads, parallel_min: 2 }, &[x])
    }

    fn f32s(v: &[f32], shape: &[u64], m: &Rc<Memory>) -> Value {
        Value::tensor(Tensor::from_slice(DType::F32, shape, v, m).unwrap())
    }

    fn got<T: Element + Copy>(v: &Value) -> Vec<T> {
        let Value::Tensor(t) = v else { panic!("a tensor") };
        t.elements::<T>().unwrap().to_vec()
    }

    #[test]
    fn keys_order_floats_with_nan_last_and_zeros_equal() {
        let xs = [f64::NEG_INFINITY, -1e300, -1.0, -5e-324, 0.0, 5e-324, 1.0, f64::INFINITY];
        for w in xs.windows(2) {
            assert!(float_key(w[0]) < float_key(w[1]), "{w:?}");
        }
        assert_eq!(float_key(-0.0), float_key(0.0));
        assert_eq!(float_key(f64::NAN), float_key(-f64::NAN));
        assert!(float_key(f64::INFINITY) < float_key(f64::NAN));
        assert!((-3i8).key() < 2i8.key() && i64::MIN.key() < i64::MAX.key());
    }

    #[test]
    fn stable_ties_nan_and_descending() {
        let m = Memory::new(1 << 20);
        let nan = f32::NAN;
        let x = f32s(&[3.0, nan, 1.0, -0.0, 1.0, 0.0, nan], &[7], &m);
        let s = run(Op::Sort, &[], x.clone(), 1, &m).unwrap();
        let bits: Vec<u32> = got::<f32>(&s).iter().map(|f| f.to_bits()).collect();
        assert_eq!(bits, [-0.0f32, 0.0, 1.0, 1.0, 3.0, nan, nan].map(f32::to_bits));
        let d = run(Op::Argsort, &[("descending", AttrValue::Bool(true))], x.clone(), 1, &m).unwrap();
        assert_eq!(got::<i32>(&d), [1, 6, 0, 2, 4, 3, 5]);
        let t = run(Op::Topk, &[("k", AttrValue::Int(2))], x, 1, &m).unwrap();
        let Value::Tuple(fs) = t else { panic!("a tuple") };
        assert_eq!(got::<i32>(&fs[1]), [1, 6]);
    }

    #[test]
    fn threads_and_a_middle_axis_agree_with_one_thread() {
        let m = Memory::new(1 << 26);
        let v: Vec<f32> = (0..3 * 50 * 4).map(|i| ((i * 7919) % 13) as f32 - 6.0).collect();
        let x = f32s(&v, &[3, 50, 4], &m);
        for (op, attrs) in [
            (Op::Sort, vec![("axis", AttrValue::Int(1))]),
            (Op::Argsort, vec![("axis", AttrValue::Int(-2)), ("dtype", AttrValue::Str("int64".into()))]),
            (
                Op::Topk,
                vec![
                    ("axis", AttrValue::Int(1)),
                    ("k", AttrValue::Int(7)),
                    ("ret_type", AttrValue::Str("indices".into())),
                ],
            ),
        ] {
            let one = run(op, &attrs, x.clone(), 1, &m).unwrap();
            let two = run(op, &attrs, x.clone(), 2, &m).unwrap();
            let (Value::Tensor(a), Value::Tensor(b)) = (&one, &two) else { panic!("tensors") };
            assert_eq!(a.to_ndarray(), b.to_ndarray(), "{op}");
        }
        // A line along axis 1 (the column o=0, i=1) is sorted, ties in order.
        let s = got::<f32>(&run(Op::Sort, &[("axis", AttrValue::Int(1))], x.clone(), 2, &m).unwrap());
        let col: Vec<f32> = (0..50).map(|j| s[j * 4 + 1]).collect();
        assert!(col.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn errors_and_empty() {
        let m = Memory::new(1 << 20);
        let kind = |r: Result<Value>| r.map(|_| ()).unwrap_err().rule;
        assert_eq!(kind(run(Op::Sort, &[], f32s(&[1.0], &[], &m), 1, &m)), "OP-sort");
        let x = f32s(&[1.0, 2.0], &[2], &m);
        assert_eq!(kind(run(Op::Topk, &[("k", AttrValue::Int(3))], x.clone(), 1, &m)), "OP-topk");
        assert_eq!(
            kind(run(Op::Argsort, &[("dtype", AttrValue::Str("float32".into()))], x.clone(), 1, &m)),
            "OP-argsort"
        );
        let all = run(Op::Topk, &[("k", AttrValue::Int(-1)), ("ret_type", AttrValue::Str("values".into()))], x, 1, &m);
        assert_eq!(got::<f32>(&all.unwrap()), [2.0, 1.0]);
        let big = Value::tensor(Tensor::zeros(DType::I8, &[300], &m).unwrap());
        assert_eq!(kind(run(Op::Argsort, &[("dtype", AttrValue::Str("int8".into()))], big, 1, &m)), "OP-argsort");
        let empty = Value::tensor(Tensor::zeros(DType::F32, &[0, 1 << 40], &m).unwrap());
        let s = run(Op::Sort, &[], empty, 1, &m).unwrap();
        assert_eq!(got::<f32>(&s).len(), 0);
    }
}
