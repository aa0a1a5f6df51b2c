//! Tensor creation: `zeros`, `ones`, `full`, `arange`, and `one_hot` (creation-like).

use super::common::{created, operand, read, write};
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::scalar::{to_f64, Num};
use crate::value::{Prim, Value};
use crate::with_num;
use spec_model::grammar::DataType;

/// A dtype attribute as read at lowering; its error is raised at run time, after the
/// checks the oracle makes before reading it (a negative dimension comes first).
type DtypeAttr = std::result::Result<Option<DataType>, String>;

/// The dimensions of shape argument `i`: an `OpError` if it is not a shape,
/// `NegativeDimension` for a negative dimension.
fn dims(cx: &KernelCx, args: &[Value], i: usize) -> Result<Vec<u64>> {
    let Value::Shape(s) = cx.arg(args, i)? else {
        return Err(cx.error(format!("the shape must be a shape, got {}", args[i].kind())));
    };
    s.iter()
        .map(|&d| {
            u64::try_from(d).map_err(|_| cx.fail(ErrorKind::NegativeDimension, format!("dimension {d} is negative")))
        })
        .collect()
}

/// A dtype for tensors: an `OpError` for one without storage.
fn storage(cx: &KernelCx, d: DataType) -> Result<DType> {
    DType::of(d).ok_or_else(|| cx.error(format!("dtype {d} has no tensor storage")))
}

/// A new tensor of `shape` and `dtype` whose every element is `value`.
fn filled<T: Num>(cx: &KernelCx, shape: &[u64], dtype: DType, value: T) -> Result<Value> {
    created(cx, shape)?;
    let out = cx.alloc(dtype, shape)?;
    write::<T>(cx, &out)?.fill(value);
    Ok(Value::tensor(out))
}

/// OP-zeros, OP-ones: a new tensor of `shape` and the attribute `dtype` filled with 0
/// (1; `True` for `bool`). Errors: `shape` not a shape; a negative dimension
/// (`NegativeDimension`); `dtype` missing, ill-kinded or without storage (`OpError`);
/// more elements than the memory budget holds (`MemoryExhausted`).
pub fn zeros_ones(l: &Lowering, one: bool) -> Box<dyn Kernel> {
    Box::new(ZerosOnes { one, dtype: attrs::dtype(l.attrs, "dtype") })
}

struct ZerosOnes {
    one: bool,
    dtype: DtypeAttr,
}

impl Kernel for ZerosOnes {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let shape = dims(cx, args, 0)?;
        let dtype = match &self.dtype {
            Ok(Some(d)) => *d,
            Ok(None) => return Err(cx.error("needs the attribute `dtype`")),
            Err(m) => return Err(cx.error(m.clone())),
        };
        created(cx, &shape)?;
        let t = storage(cx, dtype)?;
        with_num!(t, T => filled(cx, &shape, t, <T as Num>::from_bool(self.one)))
    }
}

/// OP-full: a new tensor of `shape` filled with `fill_value` (a rank-0 tensor, or a
/// `PrimValue`) converted to the attribute `dtype` (default: the fill value's) as
/// OP-astype converts. Errors: `shape` not a shape; a negative dimension
/// (`NegativeDimension`); the fill value not a scalar; a dtype without storage; a
/// conversion error; more elements than the memory budget holds (`MemoryExhausted`).
pub fn full(l: &Lowering) -> Box<dyn Kernel> {
    Box::new(Full { dtype: attrs::dtype(l.attrs, "dtype") })
}

struct Full {
    dtype: DtypeAttr,
}

/// A fill value: a `PrimValue`, or a rank-0 tensor.
enum Fill<'v> {
    Prim(Prim),
    Tensor(&'v crate::Tensor),
}

impl Kernel for Full {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 2)?;
        let shape = dims(cx, args, 0)?;
        let (fill, own) = match &args[1] {
            Value::Prim(p) => (Fill::Prim(*p), prim_dtype(p)),
            _ => {
                let t = operand(cx, args, 1, "the fill value")?;
                if t.rank() != 0 {
                    return Err(cx.error(format!("the fill value must be a scalar (rank 0), not rank {}", t.rank())));
                }
                (Fill::Tensor(t), t.dtype().data_type())
            }
        };
        let dtype = match &self.dtype {
            Ok(d) => d.filter(|d| !d.is_void()).unwrap_or(own),
            Err(m) => return Err(cx.error(m.clone())),
        };
        let t = storage(cx, dtype)?;
        with_num!(t, D => {
            let value = fill_value::<D>(cx, &fill, dtype)?;
            filled(cx, &shape, t, value)
        })
    }
}

fn prim_dtype(p: &Prim) -> DataType {
    match *p {
        Prim::Int(_, d) | Prim::Float(_, d) => d,
        Prim::Bool(_) => DataType::BOOL,
    }
}

/// The fill value converted to `D` (OP-astype's conversion).
fn fill_value<D: Num>(cx: &KernelCx, fill: &Fill, to: DataType) -> Result<D> {
    let (converted, shown) = match *fill {
        Fill::Prim(Prim::Int(i, _)) => (Some(D::from_i64(i)), i as f64),
        Fill::Prim(Prim::Float(f, _)) => (D::from_f64(f), f),
        Fill::Prim(Prim::Bool(b)) => (Some(D::from_bool(b)), b as u8 as f64),
        Fill::Tensor(t) => with_num!(t.dtype(), S => {
            let x = read::<S>(cx, t, "the fill value")?;
            let v = x.first().copied().unwrap_or(<S as Num>::ZERO);
            (v.cast::<D>(), to_f64(v))
        }),
    };
    converted.ok_or_else(|| cx.error(format!("{shown} is out of the range of {to}")))
}

/// OP-one_hot: the indices with a new axis of `depth` at `axis`: `off_value`
/// everywhere, then `on_value` at each index in `0..depth` (a negative or larger index
/// leaves its line off). Errors (`OpError`): as the oracle's (`indices` not an integer
/// tensor, values not `PrimValue`s of one dtype, `depth` not positive, `axis` out of
/// `-(r+1)..=r`); more elements than the memory budget holds (`MemoryExhausted`).
pub fn one_hot(l: &Lowering) -> Box<dyn Kernel> {
    Box::new(OneHot { depth: attrs::opt_int(l.attrs, "depth"), axis: attrs::opt_int(l.attrs, "axis") })
}

struct OneHot {
    depth: std::result::Result<Option<i64>, String>,
    axis: std::result::Result<Option<i64>, String>,
}

impl Kernel for OneHot {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 3)?;
        let x = operand(cx, args, 0, "indices")?;
        let idt = x.dtype().data_type();
        if !(idt.is_int() || idt.is_uint()) || x.dtype() == DType::Bool {
            return Err(cx.error(format!("indices must have an integer dtype, not {}", x.dtype())));
        }
        let (Value::Prim(on), Value::Prim(off)) = (&args[1], &args[2]) else {
            return Err(cx.error("on_value and off_value must be PrimValues"));
        };
        let dtype = prim_dtype(on);
        if prim_dtype(off) != dtype {
            return Err(cx.error(format!("on_value and off_value have dtypes {dtype} and {}", prim_dtype(off))));
        }
        let depth = match self.depth.clone().map_err(|m| cx.error(m))? {
            Some(d) if d > 0 => d as u64,
            d => return Err(cx.error(format!("depth must be a positive integer, not {d:?}"))),
        };
        let axis = cx.axis(self.axis.clone().map_err(|m| cx.error(m))?.unwrap_or(-1), x.rank() + 1)?;
        let mut shape = x.shape().to_vec();
        shape.insert(axis, depth);
        let t = storage(cx, dtype)?;
        created(cx, &shape)?;
        with_num!(t, D => {
            let on = fill_value::<D>(cx, &Fill::Prim(*on), dtype)?;
            let off = fill_value::<D>(cx, &Fill::Prim(*off), dtype)?;
            let out = cx.alloc_for_overwrite(t, &shape)?;
            {
                let mut o = write::<D>(cx, &out)?;
                o.fill(off);
                let inner = x.shape()[axis..].iter().fold(1usize, |a, &d| a.saturating_mul(d as usize));
                let idx: Vec<f64> = with_num!(x.dtype(), I => read::<I>(cx, x, "indices")?.iter().map(|&v| to_f64(v)).collect());
                for (p, &v) in idx.iter().enumerate() {
                    if v >= 0.0 && v < depth as f64 {
                        let (outer, i) = (p / inner.max(1), p % inner.max(1));
                        if let Some(slot) = o.get_mut((outer * depth as usize + v as usize) * inner + i) {
                            *slot = on;
                        }
                    }
                }
            }
            Ok(Value::tensor(out))
        })
    }
}

/// OP-arange: `arange(start, end, step)` (three `PrimValue`s) is the 1-D tensor of
/// `max(ceil((end - start) / step), 0)` elements `start + i * step`. The dtype is the
/// attribute `dtype`, else `int64` when all three are integers (or `bool`) and
/// `float32` otherwise. With integer arguments and an integer (or `bool`) dtype the
/// length and elements are exact, then converted to the dtype (wrapping; `!= 0` for
/// `bool`); otherwise both are computed in float64 and each element converted to the
/// dtype as OP-astype converts. Errors (`OpError`): an argument not a `PrimValue`; an
/// ill-kinded dtype or one without storage; a zero step; a NaN or infinite length;
/// more elements than the memory budget holds; a conversion error.
pub fn arange(l: &Lowering) -> Box<dyn Kernel> {
    let dtype = match attrs::dtype(l.attrs, "dtype") {
        Ok(d) => d.filter(|d| !d.is_void()),
        Err(m) => return Box::new(Failing(m)),
    };
    match dtype.map(DType::of) {
        Some(None) => Box::new(Failing(format!("dtype {} has no tensor storage", dtype.unwrap_or(DataType::void())))),
        Some(Some(t)) => Box::new(Arange { dtype: Some(t) }),
        None => Box::new(Arange { dtype: None }),
    }
}

struct Arange {
    dtype: Option<DType>,
}

impl Kernel for Arange {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 3)?;
        let mut vals = [Prim::Bool(false); 3];
        for (i, what) in ["start", "end", "step"].iter().enumerate() {
            match &args[i] {
                Value::Prim(p) => vals[i] = *p,
                v => return Err(cx.error(format!("`{what}` must be a PrimValue, got {}", v.kind()))),
            }
        }
        let int = |p: Prim| match p {
            Prim::Int(i, _) => Some(i),
            Prim::Bool(b) => Some(b as i64),
            Prim::Float(..) => None,
        };
        let ints = match (int(vals[0]), int(vals[1]), int(vals[2])) {
            (Some(a), Some(b), Some(c)) => Some([a, b, c]),
            _ => None,
        };
        let dtype = self.dtype.unwrap_or(if ints.is_some() { DType::I64 } else { DType::F32 });
        match ints {
            Some(v) if !dtype.is_float() => with_num!(dtype, T => arange_int::<T>(cx, v, dtype)),
            _ => {
                let float = |p: Prim| match p {
                    Prim::Int(i, _) => i as f64,
                    Prim::Bool(b) => b as u8 as f64,
                    Prim::Float(f, _) => f,
                };
                let v = [float(vals[0]), float(vals[1]), float(vals[2])];
                with_num!(dtype, T => arange_float::<T>(cx, v, dtype))
            }
        }
    }
}

/// The exact integer `arange`: the elements lie between `start` and `end`, so they fit in i64.
fn arange_int<T: Num>(cx: &KernelCx, [start, end, step]: [i64; 3], dtype: DType) -> Result<Value> {
    if step == 0 {
        return Err(cx.error("the step is 0"));
    }
    let (span, s) = (end as i128 - start as i128, step as i128);
    let len = if s > 0 { ceil_div(span, s) } else { ceil_div(-span, -s) };
    let len = u64::try_from(len.max(0)).unwrap_or(u64::MAX);
    let n = created(cx, &[len])?;
    let out = cx.alloc(dtype, &[len])?;
    for (i, o) in write::<T>(cx, &out)?.iter_mut().enumerate().take(n) {
        *o = T::from_i64((start as i128 + i as i128 * s) as i64);
    }
    Ok(Value::tensor(out))
}

/// `ceil(a / b)` for `b > 0`.
fn ceil_div(a: i128, b: i128) -> i128 {
    if a > 0 {
        (a + b - 1) / b
    } else {
        a / b
    }
}

/// The float `arange`: length and elements in float64, each element converted.
fn arange_float<T: Num>(cx: &KernelCx, [start, end, step]: [f64; 3], dtype: DType) -> Result<Value> {
    if step == 0.0 {
        return Err(cx.error("the step is 0"));
    }
    let len = ((end - start) / step).ceil();
    if !len.is_finite() {
        return Err(cx.error(format!("arange({start}, {end}, {step}) has no finite length")));
    }
    let len = if len >= u64::MAX as f64 { u64::MAX } else { len.max(0.0) as u64 };
    created(cx, &[len])?;
    let out = cx.alloc(dtype, &[len])?;
    for (i, o) in write::<T>(cx, &out)?.iter_mut().enumerate() {
        let v = start + i as f64 * step;
        *o = T::from_f64(v).ok_or_else(|| cx.error(format!("{v} is out of the range of {dtype}")))?;
    }
    Ok(Value::tensor(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::run_standalone;
    use crate::Memory;
    use spec_model::grammar::{AttrValue, Attrs};
    use spec_model::ops::Op;

    fn arange_of(v: [Prim; 3], dtype: Option<&str>) -> Result<Vec<f64>> {
        let mut attrs = Attrs::default();
        if let Some(d) = dtype {
            attrs.insert("dtype", AttrValue::Str(d.into()));
        }
        let args: Vec<Value> = v.iter().map(|p| Value::Prim(*p)).collect();
        let Value::Tensor(t) = run_standalone(Op::Arange, &attrs, &args, &Memory::new(1 << 20)).unwrap()? else {
            panic!()
        };
        Ok((0..t.numel()).map(|i| t.get_f64(i).unwrap()).collect())
    }

    #[test]
    fn arange_integer_and_float() {
        let i = |v| Prim::Int(v, DataType::INT64);
        assert_eq!(arange_of([i(10), i(0), i(-3)], None).unwrap(), [10.0, 7.0, 4.0, 1.0]);
        assert_eq!(arange_of([i(0), i(300), i(100)], Some("int8")).unwrap(), [0.0, 100.0, -56.0]);
        assert_eq!(arange_of([i(-2), i(1), i(1)], Some("bool")).unwrap(), [1.0, 1.0, 0.0]);
        assert_eq!(arange_of([i(5), i(0), i(1)], None).unwrap(), [] as [f64; 0]);
        assert!(arange_of([i(0), i(1), i(0)], None).is_err());
        assert!(arange_of([i(0), i(i64::MAX), i(1)], None).is_err());
        assert_eq!(arange_of([i(i64::MIN), i(i64::MAX), i(i64::MAX)], None).unwrap().len(), 3);
        let f = |v| Prim::Float(v, DataType::FLOAT32);
        assert_eq!(arange_of([f(0.5), i(3), i(1)], Some("int32")).unwrap(), [0.0, 1.0, 2.0]);
        assert_eq!(arange_of([f(0.0), f(1.0), f(0.25)], None).unwrap(), [0.0, 0.25, 0.5, 0.75]);
        assert!(arange_of([f(0.0), f(f64::INFINITY), f(1.0)], None).is_err());
        assert!(arange_of([f(0.0), f(1.0), f(f64::NAN)], None).is_err());
        assert!(arange_of([f(-1.5), f(1.0), f(1.0)], Some("uint8")).is_err());
    }

    #[test]
    fn a_negative_dimension_comes_before_a_bad_dtype() {
        let mut attrs = Attrs::default();
        attrs.insert("dtype", AttrValue::Int(3));
        let mem = Memory::new(1 << 20);
        let shape = Value::Shape(vec![2, -1].into());
        let e = run_standalone(Op::Zeros, &attrs, std::slice::from_ref(&shape), &mem).unwrap().unwrap_err();
        assert_eq!(e.kind, ErrorKind::NegativeDimension);
        let fill = Value::Prim(Prim::Int(1, DataType::INT32));
        let e = run_standalone(Op::Full, &attrs, &[shape, fill.clone()], &mem).unwrap().unwrap_err();
        assert_eq!(e.kind, ErrorKind::NegativeDimension);
        let ok = run_standalone(Op::Full, &Attrs::default(), &[Value::Shape(vec![2].into()), fill], &mem);
        let Value::Tensor(t) = ok.unwrap().unwrap() else { panic!() };
        assert_eq!((t.dtype(), t.get_f64(1)), (DType::I32, Some(1.0)));
    }
}
