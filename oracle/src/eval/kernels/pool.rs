//! `nn.max_pool2d`, `nn.avg_pool2d`, `nn.adaptive_avg_pool2d` (TOPI's `pool_impl_nd`
//! and `adaptive_pool_impl`), as plain loops over the canonical `N, C, H, W` axes read
//! through the layout.

use super::conv::{layout, layout_name, out_len, padding, strides_of, window};
use super::elem::{map_data, Elem};
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, Value};
use half::f16;

/// The least value of a type: what max pooling's padding holds (TVM's `min_value`).
trait Lowest: Elem {
    fn lowest() -> Self;
}

macro_rules! lowest {
    ($($t:ty => $v:expr),*) => {$(
        impl Lowest for $t {
            fn lowest() -> Self {
                $v
            }
        }
    )*};
}

lowest!(bool => false, i8 => i8::MIN, i16 => i16::MIN, i32 => i32::MIN, i64 => i64::MIN, u8 => 0, u16 => 0,
    u32 => 0, u64 => 0, f16 => f16::NEG_INFINITY, f32 => f32::NEG_INFINITY, f64 => f64::NEG_INFINITY);

/// Where the canonical axes of the data and result are, and their lengths.
struct Frame {
    /// `N, C, H, W` of the data.
    dims: [usize; 4],
    /// Element strides of the data's canonical axes.
    xs: [usize; 4],
    /// `OH, OW`.
    out: [usize; 2],
    /// Element strides of the result's canonical axes.
    os: [usize; 4],
    total: usize,
}

/// Reads `layout`/`out_layout` and the data; the result's shape for `OH, OW`.
fn frame(
    cx: &Cx,
    shape: &[u64],
    out_hw: impl FnOnce(u64, u64) -> EvalResult<(u64, u64)>,
) -> EvalResult<(Frame, Vec<u64>)> {
    let dpos = layout(cx, "layout", "NCHW", "NCHW")?;
    let opos = layout(cx, "out_layout", &layout_name(cx, "layout", "NCHW"), "NCHW")?;
    if shape.len() != 4 {
        return Err(cx.error(format!("the data must have rank 4 (its layout's), got rank {}", shape.len())));
    }
    let d: Vec<u64> = dpos.iter().map(|&p| shape[p]).collect();
    let (oh, ow) = out_hw(d[2], d[3])?;
    let canon = [d[0], d[1], oh, ow];
    let mut out_shape = vec![0; 4];
    for (k, &p) in opos.iter().enumerate() {
        out_shape[p] = canon[k];
    }
    let total = cx.numel(&out_shape)?;
    let (xst, ost) = (strides_of(shape), strides_of(&out_shape));
    let pick = |st: &[usize], pos: &[usize]| [st[pos[0]], st[pos[1]], st[pos[2]], st[pos[3]]];
    let f = Frame {
        dims: [d[0] as usize, d[1] as usize, d[2] as usize, d[3] as usize],
        xs: pick(&xst, &dpos),
        out: [oh as usize, ow as usize],
        os: pick(&ost, &opos),
        total,
    };
    Ok((f, out_shape))
}

/// The window attributes of a pooling call.
struct Window {
    size: [usize; 2],
    /// (stride, dilation, pad before) per axis.
    axes: [(i64, i64, i64); 2],
    /// Pads after, per axis.
    after: [i64; 2],
    count_include_pad: bool,
}

/// OP-nn.max_pool2d: `out[n, c, y, x]` is the maximum (NumPy `maximum`: NaN wins) over
/// the window positions `(y*sh + ky*dh - pt, x*sw + kx*dw - pl)` for `ky < KH, kx < KW`
/// inside the input, starting from the dtype's least value (what TVM pads with, so a
/// window wholly in the padding gives it). Output lengths as OP-nn.max_pool2d's rule
/// gives them (`ceil_mode` included). Errors: not one tensor; a layout not a
/// permutation of `NCHW`; rank other than 4; attributes out of range; a negative output
/// length.
pub(crate) fn max_pool2d(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    pool(cx, args, true)
}

/// OP-nn.avg_pool2d: the window positions inside the input (as OP-nn.max_pool2d) summed
/// in row-major order from 0, then divided as OP-mean divides (truncating for
/// integers) by: with `count_include_pad`, the positions inside the padded extent
/// `[-pt, H + pb)`; without, the positions inside the input (at least 1). TOPI's
/// `pool_impl_nd` counts the same way.
pub(crate) fn avg_pool2d(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    pool(cx, args, false)
}

fn pool(cx: &Cx, args: &[Value], max: bool) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let x = cx.tensor(&args[0], "the data")?;
    let size = window(cx, "pool_size", 2, 1, 1)?;
    let strides = window(cx, "strides", 2, 1, 1)?;
    let dilation = window(cx, "dilation", 2, 1, 1)?;
    let pads = padding(cx, 2)?;
    let ceil = cx.attr_bool("ceil_mode", false)?;
    let count_include_pad = cx.attr_bool("count_include_pad", false)?;
    let len = |k: usize, d: u64| -> EvalResult<u64> {
        let (s, head) = (strides[k], pads[k]);
        let extra = if ceil { s - 1 } else { 0 };
        let raw = out_len(d, head + pads[k + 2] + extra, dilation[k], size[k] as u64, s)
            .ok_or_else(|| cx.error("the window is longer than the padded input: the output length is negative"))?;
        // ceil_mode: drop a last window that would start in the bottom padding.
        if ceil && raw >= 1 && (raw as i128 - 1) * s as i128 >= d as i128 + head as i128 {
            return Ok(raw - 1);
        }
        Ok(raw)
    };
    let (f, out_shape) = frame(cx, &x.shape, |h, w| Ok((len(0, h)?, len(1, w)?)))?;
    let win = Window {
        size: [size[0] as usize, size[1] as usize],
        axes: [(strides[0], dilation[0], pads[0]), (strides[1], dilation[1], pads[1])],
        after: [pads[2], pads[3]],
        count_include_pad,
    };
    let data = map_data!(&x.data, v => pool_loop(&f, &win, v, max));
    Ok(tensor_value(x.dtype, out_shape, data))
}

/// The positions `y*s + k*d - p` (`k < size`) along one axis: those inside `0..len`,
/// and how many lie in `[-p, len + after)`. The positions rise with `k`, so the ones
/// inside are a run of consecutive `k`, found by division (a window may have 2^31 taps).
fn taps(y: usize, size: usize, (s, d, p): (i64, i64, i64), len: usize, after: i64) -> (Vec<usize>, usize) {
    let start = y as i64 * s - p;
    let size = size as i64;
    // The number of k in 0..size with start + k*d < limit.
    let below = |limit: i64| if limit <= start { 0 } else { ((limit - start - 1) / d + 1).min(size) };
    let first = if start >= 0 { 0 } else { (-start - 1) / d + 1 };
    let inside: Vec<usize> = (first..below(len as i64)).map(|k| (start + k * d) as usize).collect();
    // `start >= -p` (y, s >= 0), so every position below the upper bound is in the padded extent.
    (inside, below(len as i64 + after) as usize)
}

fn pool_loop<T: Lowest>(f: &Frame, win: &Window, x: &[T], max: bool) -> Vec<T> {
    let mut out = vec![T::zero(); f.total];
    for n in 0..f.dims[0] {
        for c in 0..f.dims[1] {
            for y in 0..f.out[0] {
                let (rows, prow) = taps(y, win.size[0], win.axes[0], f.dims[2], win.after[0]);
                for xx in 0..f.out[1] {
                    let (cols, pcol) = taps(xx, win.size[1], win.axes[1], f.dims[3], win.after[1]);
                    let mut acc = if max { T::lowest() } else { T::zero() };
                    for &r in &rows {
                        for &q in &cols {
                            let v = x[n * f.xs[0] + c * f.xs[1] + r * f.xs[2] + q * f.xs[3]];
                            acc = if max { acc.propagating_max(v) } else { acc.plus(v) };
                        }
                    }
                    if !max {
                        let count = if win.count_include_pad { prow * pcol } else { (rows.len() * cols.len()).max(1) };
                        acc = T::mean(acc, count.max(1)).unwrap_or(acc);
                    }
                    out[n * f.os[0] + c * f.os[1] + y * f.os[2] + xx * f.os[3]] = acc;
                }
            }
        }
    }
    out
}

/// OP-nn.adaptive_avg_pool2d: output `(oy, ox)` averages the input rows
/// `floor(oy*H/OH) .. ceil((oy+1)*H/OH)` and columns alike (TOPI's `start_index` and
/// `end_index`), summed in row-major order from 0 and divided as OP-mean divides by
/// the window's element count. `output_size`: `None` (the input's `H, W`), one value or
/// two, each in `0..=2^31-1`. Errors: not one tensor; a layout not a permutation of
/// `NCHW`; rank other than 4; `output_size` out of range; an integer mean of an empty
/// window (`H` or `W` 0 with a nonzero output size).
pub(crate) fn adaptive_avg_pool2d(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let x = cx.tensor(&args[0], "the data")?;
    let size = match cx.attr_ints("output_size")? {
        None => None,
        Some(v) => {
            let v = match v.len() {
                1 => vec![v[0], v[0]],
                2 => v,
                k => return Err(cx.error(format!("output_size must have 1 or 2 values, got {k}"))),
            };
            if let Some(bad) = v.iter().find(|&&s| !(0..=i32::MAX as i64).contains(&s)) {
                return Err(cx.error(format!("output_size value {bad} is out of range (0 to {})", i32::MAX)));
            }
            Some((v[0] as u64, v[1] as u64))
        }
    };
    let (f, out_shape) = frame(cx, &x.shape, |h, w| Ok(size.unwrap_or((h, w))))?;
    let empty_window = f.total > 0 && (f.dims[2] == 0 || f.dims[3] == 0);
    if empty_window && !x.dtype.is_float() {
        return Err(cx.error("an integer mean of an empty window (the input's H or W is 0)"));
    }
    let data = map_data!(&x.data, v => adaptive_loop(&f, v));
    Ok(tensor_value(x.dtype, out_shape, data))
}

/// `[floor(o*len/out), ceil((o+1)*len/out))`.
fn span(o: usize, out: usize, len: usize) -> (usize, usize) {
    let (o, out, len) = (o as u128, out as u128, len as u128);
    let start = o * len / out;
    let end = ((o + 1) * len).div_ceil(out);
    (start as usize, end as usize)
}

fn adaptive_loop<T: Elem>(f: &Frame, x: &[T]) -> Vec<T> {
    let mut out = vec![T::zero(); f.total];
    for n in 0..f.dims[0] {
        for c in 0..f.dims[1] {
            for y in 0..f.out[0] {
                let (r0, r1) = span(y, f.out[0], f.dims[2]);
                for xx in 0..f.out[1] {
                    let (c0, c1) = span(xx, f.out[1], f.dims[3]);
                    let mut acc = T::zero();
                    for r in r0..r1 {
                        for q in c0..c1 {
                            acc = acc.plus(x[n * f.xs[0] + c * f.xs[1] + r * f.xs[2] + q * f.xs[3]]);
                        }
                    }
                    let count = (r1 - r0) * (c1 - c0);
                    // Only floats reach an empty window (checked before): 0 / 0.
                    acc = T::mean(acc, count).unwrap_or(acc);
                    out[n * f.os[0] + c * f.os[1] + y * f.os[2] + xx * f.os[3]] = acc;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::eval::ops::eval_op_standalone;
    use crate::eval::value::{ErrorKind, Value};
    use spec_model::grammar::{AttrValue, Attrs, DataType, NDArray, Scalar};
    use spec_model::ops::Op;
    use spec_model::Span;

    fn t(shape: &[u64], v: &[f64]) -> Value {
        let s: Vec<Scalar> = v.iter().map(|&x| Scalar::Float(x)).collect();
        Value::tensor(NDArray::from_scalars(DataType::FLOAT32, shape.to_vec(), &s).unwrap())
    }

    fn run(op: Op, x: Value, attrs: &[(&str, AttrValue)]) -> Result<Vec<f64>, ErrorKind> {
        let mut a = Attrs::default();
        for (k, v) in attrs {
            a.insert(*k, v.clone());
        }
        match eval_op_standalone(op, &[x], &a, Span::SYNTHETIC) {
            Ok(Value::Tensor(r)) => {
                let r = r.borrow();
                Ok((0..r.data.len()).map(|i| if let Scalar::Float(f) = r.data.get(i) { f } else { f64::NAN }).collect())
            }
            Ok(_) => panic!("not a tensor"),
            Err(e) => Err(e.kind),
        }
    }

    fn ints(xs: &[i64]) -> AttrValue {
        AttrValue::List(xs.iter().map(|&x| AttrValue::Int(x)).collect())
    }

    #[test]
    fn count_include_pad_counts_the_padded_extent() {
        let x = t(&[1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let attrs = [("pool_size", ints(&[2])), ("padding", ints(&[1])), ("strides", ints(&[2]))];
        // Windows of one input element each: 1/1 without, 1/4 with the padding counted.
        assert_eq!(run(Op::AvgPool2d, x.clone(), &attrs).unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        let mut with = attrs.to_vec();
        with.push(("count_include_pad", AttrValue::Bool(true)));
        assert_eq!(run(Op::AvgPool2d, x.clone(), &with).unwrap(), vec![0.25, 0.5, 0.75, 1.0]);
        // A window wholly in the padding: the least value for max.
        let far = [("pool_size", ints(&[1])), ("padding", ints(&[1]))];
        assert_eq!(run(Op::MaxPool2d, x, &far).unwrap()[0], f64::NEG_INFINITY);
    }

    #[test]
    fn huge_windows_and_bad_attributes() {
        let x = t(&[1, 1, 1, 1], &[5.0]);
        let huge = [
            ("pool_size", ints(&[i32::MAX as i64, 1])),
            ("padding", ints(&[1 << 30, 0, 1 << 30, 0])),
            ("strides", ints(&[1 << 30, 1])),
        ];
        assert_eq!(run(Op::MaxPool2d, x.clone(), &huge).unwrap(), vec![5.0]);
        assert_eq!(run(Op::MaxPool2d, x.clone(), &[("strides", ints(&[0]))]), Err(ErrorKind::OpError));
        assert_eq!(
            run(Op::MaxPool2d, x.clone(), &[("layout", AttrValue::Str("NCHW4c".into()))]),
            Err(ErrorKind::OpError)
        );
        assert_eq!(run(Op::AvgPool2d, x, &[("pool_size", ints(&[2]))]), Ok(vec![]));
    }

    #[test]
    fn adaptive_windows_overlap() {
        let x = t(&[1, 1, 1, 3], &[1.0, 2.0, 4.0]);
        // Two outputs over three columns: [0, 2) and [1, 3).
        assert_eq!(run(Op::AdaptiveAvgPool2d, x, &[("output_size", ints(&[1, 2]))]).unwrap(), vec![1.5, 3.0]);
        let empty = Value::tensor(NDArray::from_scalars(DataType::INT32, vec![1, 1, 0, 2], &[]).unwrap());
        let mut a = Attrs::default();
        a.insert("output_size", AttrValue::Int(1));
        let e = eval_op_standalone(Op::AdaptiveAvgPool2d, &[empty], &a, Span::SYNTHETIC).err().expect("an error");
        assert_eq!(e.kind, ErrorKind::OpError);
    }
}
