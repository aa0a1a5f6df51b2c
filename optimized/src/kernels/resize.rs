//! `image.resize2d`: TOPI's formula in float32 (`proofs-notes/operator-semantics.md`).
//!
//! The source coordinate of an output row depends on the row alone, and of a column on
//! the column alone, so each axis is planned once per call (pixel indices clamped to the
//! image, interpolation weights, whether `tf_crop_and_resize` extrapolates there); each
//! output plane (batch, channel) is then a loop over rows and columns reading the planned
//! pixels. Planes run on the rayon pool when the output is large. Every float32
//! operation is the formula's own, in its order, so the results are the oracle's bits.

use super::common::{created, operand, read, write};
use super::conv::{positions, string_or};
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::scalar::Num;
use crate::tensor::Tensor;
use crate::value::Value;
use crate::with_num;
use spec_model::grammar::{AttrValue, Attrs};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Method {
    Nearest,
    Linear,
    Cubic,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    HalfPixel,
    AlignCorners,
    Asymmetric,
    PytorchHalfPixel,
    TfHalfPixelForNn,
    TfCropAndResize,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Rounding {
    HalfEven,
    PreferFloor,
    PreferCeil,
    Floor,
    Ceil,
}

/// A call's attributes, read at lowering.
struct Spec {
    layout: Vec<usize>,
    method: Method,
    mode: Mode,
    rounding: Rounding,
    /// (start, end) of the roi along H and along W, as float32.
    roi: [(f32, f32); 2],
    alpha: f64,
    exclude: bool,
    extrapolation: f32,
    out_dtype: Option<DType>,
}

fn read_spec(a: &Attrs) -> std::result::Result<Spec, String> {
    let text = |name: &str, default: &str| match a.get(name).filter(|v| !matches!(v, AttrValue::None)) {
        None | Some(AttrValue::Str(_)) => Ok(string_or(a, name, default)),
        Some(_) => Err(format!("attribute `{name}` must be a string")),
    };
    let layout = positions(a, "layout", "NCHW", "NCHW")?;
    let method = match text("method", "linear")?.to_ascii_lowercase().as_str() {
        "nearest_neighbor" => Method::Nearest,
        "linear" => Method::Linear,
        "cubic" => Method::Cubic,
        other => return Err(format!("unknown method \"{other}\"")),
    };
    let mode = match text("coordinate_transformation_mode", "half_pixel")?.as_str() {
        "half_pixel" => Mode::HalfPixel,
        "align_corners" => Mode::AlignCorners,
        "asymmetric" => Mode::Asymmetric,
        "pytorch_half_pixel" => Mode::PytorchHalfPixel,
        "tf_half_pixel_for_nn" => Mode::TfHalfPixelForNn,
        "tf_crop_and_resize" => Mode::TfCropAndResize,
        other => return Err(format!("unknown coordinate_transformation_mode \"{other}\"")),
    };
    let rounding_name = text("rounding_method", "round")?;
    // Only nearest-neighbor reads the rounding method; "" means TOPI's default.
    let rounding = match (method, rounding_name.as_str()) {
        (Method::Nearest, "") if mode == Mode::AlignCorners => Rounding::HalfEven,
        (Method::Nearest, "" | "floor") => Rounding::Floor,
        (Method::Nearest, "round") => Rounding::HalfEven,
        (Method::Nearest, "round_prefer_floor") => Rounding::PreferFloor,
        (Method::Nearest, "round_prefer_ceil") => Rounding::PreferCeil,
        (Method::Nearest, "ceil") => Rounding::Ceil,
        (Method::Nearest, other) => return Err(format!("unknown rounding_method \"{other}\"")),
        _ => Rounding::HalfEven,
    };
    let number = |v: &AttrValue| match v {
        AttrValue::Float(f) => Some(f.0),
        AttrValue::Int(i) => Some(*i as f64),
        _ => None,
    };
    let roi: Vec<f64> = match a.get("roi").filter(|v| !matches!(v, AttrValue::None)) {
        None => vec![0.0; 4],
        Some(AttrValue::List(xs)) => xs.iter().map(number).collect::<Option<Vec<f64>>>().unwrap_or_default(),
        Some(v) => number(v).map_or_else(Vec::new, |f| vec![f; 4]),
    };
    let [top, left, bottom, right] = roi[..] else { return Err("roi must be one number or 4 numbers".into()) };
    let out_dtype = match attrs::dtype(a, "out_dtype")?.filter(|d| !d.is_void()) {
        None => None,
        Some(d) => Some(DType::of(d).ok_or_else(|| format!("dtype {d} has no tensor storage"))?),
    };
    Ok(Spec {
        layout,
        method,
        mode,
        rounding,
        roi: [(top as f32, bottom as f32), (left as f32, right as f32)],
        alpha: attrs::float(a, "cubic_alpha", -0.75)?,
        exclude: attrs::opt_int(a, "cubic_exclude")?.unwrap_or(0) != 0,
        extrapolation: attrs::float(a, "extrapolation_value", 0.0)? as f32,
        out_dtype,
    })
}

/// OP-image.resize2d (the oracle's semantics: TOPI's `_resize_2d` in float32, then
/// OP-astype to the output dtype). Errors (`OpError`, `NegativeDimension`) as the oracle's.
pub fn resize2d(l: &Lowering) -> Box<dyn Kernel> {
    match read_spec(l.attrs) {
        Ok(s) => Box::new(Resize(s)),
        Err(m) => Box::new(Failing(m)),
    }
}

struct Resize(Spec);

/// What one output row (or column) reads: up to four source positions (clamped) with
/// their weights, or nothing where `tf_crop_and_resize` extrapolates.
#[derive(Clone, Copy, Default)]
struct Taps {
    at: [usize; 4],
    weight: [f32; 4],
    outside: bool,
}

/// A float32 index as int32, saturating (NaN is 0): TOPI's `astype("int32")`.
fn as_i32(v: f32) -> i64 {
    v as i32 as i64
}

impl Spec {
    /// The source coordinate of output index `o` along an axis of `len` resized to `target`.
    fn coordinate(&self, o: u64, len: u64, target: u64, (start, end): (f32, f32)) -> f32 {
        let of = o as f32;
        let scale = len as f32 / target as f32;
        let (below_len, below_target) = ((len as i64 - 1) as f32, (target as i64 - 1) as f32);
        match self.mode {
            Mode::HalfPixel => (of + 0.5) * scale - 0.5,
            Mode::PytorchHalfPixel => {
                if target > 1 {
                    (of + 0.5) * scale - 0.5
                } else {
                    0.0
                }
            }
            Mode::AlignCorners => below_len / below_target * of,
            Mode::Asymmetric => scale * of,
            Mode::TfHalfPixelForNn => (of + 0.5) * scale,
            Mode::TfCropAndResize => {
                if target > 1 {
                    start * below_len + of * (end - start) * below_len / below_target
                } else {
                    0.5 * (start + end) * below_len
                }
            }
        }
    }

    /// The integer factor TOPI divides by instead (nearest, asymmetric, floor), with its
    /// test folded in float32: `target / len` integral and at most `1 / (1e-5·len + 1e-5)`.
    fn int_division(&self, len: u64, target: u64) -> Option<u64> {
        if self.method != Method::Nearest || self.mode != Mode::Asymmetric || self.rounding != Rounding::Floor {
            return None;
        }
        if len == 0 {
            return None;
        }
        let ratio = target as f32 / len as f32;
        let limit = 1.0f32 / (1e-5f32 * len as f32 + 1e-5f32);
        (ratio == ratio.trunc() && ratio <= limit).then_some(target / len)
    }

    /// The plan of every output index along an axis of `len` resized to `target`.
    fn axis(&self, len: u64, target: u64, roi: (f32, f32)) -> Vec<Taps> {
        // `min` before `max`, as TOPI clamps: an empty axis (never read) gives 0.
        let clamp = |i: i64| i.min(len as i64 - 1).max(0) as usize;
        let factor = self.int_division(len, target);
        (0..target)
            .map(|o| {
                let mut t = Taps::default();
                if let Some(k) = factor {
                    t.at[0] = clamp((o / k) as i64);
                    return t;
                }
                let v = self.coordinate(o, len, target, roi);
                if self.mode == Mode::TfCropAndResize && (v < 0.0 || v > (len as i64 - 1) as f32) {
                    t.outside = true;
                    return t;
                }
                match self.method {
                    Method::Nearest => {
                        let r = match self.rounding {
                            Rounding::HalfEven => v.round_ties_even(),
                            Rounding::PreferFloor => (v - 0.5).ceil(),
                            Rounding::PreferCeil => (v + 0.5).floor(),
                            Rounding::Floor => (v + 1e-5f32).floor(),
                            Rounding::Ceil => (v - 1e-5f32).ceil(),
                        };
                        t.at[0] = clamp(as_i32(r));
                    }
                    Method::Linear => {
                        let lo = as_i32(v.floor());
                        t.at = [clamp(lo), clamp(lo + 1), 0, 0];
                        t.weight[0] = v - lo as f32;
                    }
                    Method::Cubic => {
                        let lo = as_i32(v.floor());
                        t.weight = self.spline(v - v.floor());
                        for (k, at) in t.at.iter_mut().enumerate() {
                            *at = clamp(lo - 1 + k as i64);
                        }
                        if self.exclude {
                            for (k, w) in t.weight.iter_mut().enumerate() {
                                let first = lo - 1 + k as i64;
                                if first < 0 || first + 1 > len as i64 {
                                    *w = 0.0;
                                }
                            }
                            let total = t.weight[0] + t.weight[1] + t.weight[2] + t.weight[3];
                            t.weight = t.weight.map(|w| w / total);
                        }
                    }
                }
                t
            })
            .collect()
    }

    /// The four cubic spline weights of the fraction `t`, TOPI's polynomials with
    /// their coefficients computed in float64 and rounded to float32.
    fn spline(&self, t: f32) -> [f32; 4] {
        let al = self.alpha;
        let (a, b, c) = (al as f32, (al + 2.0) as f32, (3.0 + al) as f32);
        let (d, e, f) = ((-(al + 2.0)) as f32, (3.0 + 2.0 * al) as f32, (-al) as f32);
        let sq = t * t;
        let cube = sq * t;
        let w0 = a * (cube - 2.0 * sq + t);
        let w1 = b * cube - c * sq + 1.0;
        let w2 = d * cube + e * sq - a * t;
        let w3 = f * cube + a * sq;
        [w0, w1, w2, w3]
    }
}

impl Kernel for Resize {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 2)?;
        let x = operand(cx, args, 0, "the data")?;
        let Value::Shape(size) = &args[1] else {
            return Err(cx.error(format!("the size must be a shape, got {}", args[1].kind())));
        };
        let [oh, ow] = size[..] else {
            return Err(cx.error(format!("the size must have 2 values, got {}", size.len())));
        };
        let [oh, ow] = [oh, ow].map(|d| {
            u64::try_from(d).map_err(|_| cx.fail(ErrorKind::NegativeDimension, format!("dimension {d} is negative")))
        });
        let (oh, ow) = (oh?, ow?);
        let s = &self.0;
        if x.rank() != 4 {
            return Err(cx.error(format!("the data must have rank 4, got rank {}", x.rank())));
        }
        let dtype = s.out_dtype.unwrap_or(x.dtype());
        let l = &s.layout;
        let (h, w) = (x.shape()[l[2]], x.shape()[l[3]]);
        let mut out_shape = x.shape().to_vec();
        out_shape[l[2]] = oh;
        out_shape[l[3]] = ow;
        let total = created(cx, &out_shape)?;
        if total == 0 {
            // Nothing is read; the other side may be too long to plan (`[0, 2^40]`).
            return Ok(Value::tensor(cx.alloc_for_overwrite(dtype, &out_shape)?));
        }
        let rows = s.axis(h, oh, s.roi[0]);
        let cols = s.axis(w, ow, s.roi[1]);
        let reads = rows.iter().any(|r| !r.outside) && cols.iter().any(|c| !c.outside);
        if reads && (h == 0 || w == 0) {
            return Err(cx.error("a pixel is read from an image with no rows or columns"));
        }
        let out = cx.alloc_for_overwrite(dtype, &out_shape)?;
        let planes = with_num!(x.dtype(), T => self.planes::<T>(cx, x, &rows, &cols, total)?);
        let ost = super::conv::row_major(&out_shape);
        let (batch, channels) = (out_shape[l[0]] as usize, out_shape[l[1]] as usize);
        with_num!(dtype, D => {
            let mut o = write::<D>(cx, &out)?;
            for (p, plane) in planes.iter().enumerate() {
                let base = (p / channels.max(1)) * ost[l[0]] + (p % channels.max(1)) * ost[l[1]];
                for (y, row) in plane.chunks_exact(ow as usize).enumerate() {
                    for (xx, &v) in row.iter().enumerate() {
                        o[base + y * ost[l[2]] + xx * ost[l[3]]] = <D as Num>::from_f64(v as f64)
                            .ok_or_else(|| cx.error(format!("{v} is out of the range of {dtype}")))?;
                    }
                }
            }
            debug_assert_eq!(planes.len(), batch * channels);
        });
        Ok(Value::tensor(out))
    }
}

impl Resize {
    /// Every output plane (batch, channel) in float32, row-major `OH × OW`.
    fn planes<T: Num + Send + Sync>(
        &self,
        cx: &KernelCx,
        x: &Tensor,
        rows: &[Taps],
        cols: &[Taps],
        total: usize,
    ) -> Result<Vec<Vec<f32>>> {
        let s = &self.0;
        let l = &s.layout;
        let xs = super::conv::row_major(x.shape());
        let (sh, sw) = (xs[l[2]], xs[l[3]]);
        let data = read::<T>(cx, x, "the data")?;
        let src: &[T] = &data;
        let (sn, sc) = (xs[l[0]], xs[l[1]]);
        let channels = x.shape()[l[1]] as usize;
        let bases: Vec<usize> =
            (0..x.shape()[l[0]] as usize).flat_map(|n| (0..channels).map(move |c| n * sn + c * sc)).collect();
        let plane = |&base: &usize| -> Vec<f32> {
            let px = |r: usize, c: usize| -> f32 { src[base + r * sh + c * sw].cast::<f32>().unwrap_or(f32::NAN) };
            let mut out = Vec::with_capacity(rows.len() * cols.len());
            for r in rows {
                for c in cols {
                    if r.outside || c.outside {
                        out.push(s.extrapolation);
                        continue;
                    }
                    out.push(match s.method {
                        Method::Nearest => px(r.at[0], c.at[0]),
                        Method::Linear => {
                            let (tx, ty) = (c.weight[0], r.weight[0]);
                            let top = px(r.at[0], c.at[0]) * (1.0 - tx) + px(r.at[0], c.at[1]) * tx;
                            let bottom = px(r.at[1], c.at[0]) * (1.0 - tx) + px(r.at[1], c.at[1]) * tx;
                            top * (1.0 - ty) + bottom * ty
                        }
                        Method::Cubic => {
                            let mut acc = 0.0f32;
                            for j in 0..4 {
                                let row = px(r.at[j], c.at[0]) * c.weight[0]
                                    + px(r.at[j], c.at[1]) * c.weight[1]
                                    + px(r.at[j], c.at[2]) * c.weight[2]
                                    + px(r.at[j], c.at[3]) * c.weight[3];
                                acc = if j == 0 { row * r.weight[0] } else { acc + row * r.weight[j] };
                            }
                            acc
                        }
                    });
                }
            }
            out
        };
        let threads = cx.threads_for(total).min(bases.len());
        Ok(match (threads > 1).then(|| super::simd::pool(threads)).flatten() {
            Some(pool) => {
                use rayon::prelude::*;
                crate::stats::record(crate::stats::Counter::Threaded);
                pool.install(|| bases.par_iter().map(plane).collect())
            }
            None => bases.iter().map(plane).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::kernels::run_standalone;
    use crate::{DType, Memory, Tensor, Value};
    use spec_model::grammar::{AttrValue, Attrs};
    use spec_model::ops::Op;

    fn tensor(dt: DType, shape: &[u64], v: &[f32], mem: &std::rc::Rc<Memory>) -> Value {
        let t = match dt {
            DType::U8 => Tensor::from_slice(dt, shape, &v.iter().map(|&x| x as u8).collect::<Vec<_>>(), mem),
            DType::I32 => Tensor::from_slice(dt, shape, &v.iter().map(|&x| x as i32).collect::<Vec<_>>(), mem),
            _ => Tensor::from_slice(dt, shape, v, mem),
        };
        Value::tensor(t.unwrap())
    }

    fn run(
        attrs: &[(&str, &str)],
        dt: DType,
        shape: &[u64],
        v: &[f32],
        size: [i64; 2],
    ) -> crate::error::Result<Vec<f64>> {
        let mem = Memory::new(1 << 24);
        let mut a = Attrs::default();
        for (k, v) in attrs {
            a.insert(*k, AttrValue::Str(v.to_string()));
        }
        let args = [tensor(dt, shape, v, &mem), Value::Shape(size.to_vec().into())];
        let Value::Tensor(r) = run_standalone(Op::Resize2d, &a, &args, &mem).unwrap()? else { panic!("not a tensor") };
        Ok((0..r.numel()).map(|i| r.get_f64(i).unwrap()).collect())
    }

    #[test]
    fn methods_on_one_row() {
        let x = [0.0, 10.0, 20.0];
        // Nearest, asymmetric: scale 1/2, floor(i / 2 + 1e-5) (an exact integer division).
        let nn = [
            ("method", "nearest_neighbor"),
            ("coordinate_transformation_mode", "asymmetric"),
            ("rounding_method", "floor"),
        ];
        assert_eq!(run(&nn, DType::F32, &[1, 1, 1, 3], &x, [1, 6]).unwrap(), vec![0., 0., 10., 10., 20., 20.]);
        // "round" ties to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2.
        let round = [("method", "nearest_neighbor"), ("coordinate_transformation_mode", "asymmetric")];
        assert_eq!(run(&round, DType::F32, &[1, 1, 1, 3], &x, [1, 6]).unwrap(), vec![0., 0., 10., 20., 20., 20.]);
        // Linear, asymmetric: halfway points, the last clamped; int32 alike.
        let lin = [("coordinate_transformation_mode", "asymmetric")];
        let want = vec![0., 5., 10., 15., 20., 20.];
        assert_eq!(run(&lin, DType::F32, &[1, 1, 1, 3], &x, [1, 6]).unwrap(), want);
        assert_eq!(run(&lin, DType::I32, &[1, 1, 1, 3], &x, [1, 6]).unwrap(), want);
        // align_corners resizing an axis of 1 to 1: 0 / 0 is NaN, as the formula says.
        let ac = [("coordinate_transformation_mode", "align_corners")];
        let r = run(&ac, DType::F32, &[1, 1, 1, 3], &x, [1, 5]).unwrap();
        assert!(r.iter().all(|v| v.is_nan()), "{r:?}");
        let r = run(&ac, DType::F32, &[1, 1, 2, 3], &[x, x].concat(), [2, 5]).unwrap();
        assert_eq!(r, [[0., 5., 10., 15., 20.], [0., 5., 10., 15., 20.]].concat());
        // Cubic on a constant image is the constant (the weights sum to 1 here).
        let r = run(&[("method", "cubic")], DType::F32, &[1, 1, 1, 3], &[4.0; 3], [2, 5]).unwrap();
        assert!(r.iter().all(|&v| (v - 4.0).abs() < 1e-5), "{r:?}");
    }

    #[test]
    fn integers_extrapolation_and_errors() {
        // An uint8 cubic overshoot below 0 does not convert.
        let e = run(&[("method", "cubic")], DType::U8, &[1, 1, 1, 4], &[0., 255., 255., 0.], [1, 9]).unwrap_err();
        assert_eq!((e.kind, e.rule), (crate::ErrorKind::OpError, "OP-image.resize2d"));
        // tf_crop_and_resize outside the roi: the extrapolation value, even from an empty image.
        let mut a = Attrs::default();
        a.insert("coordinate_transformation_mode", AttrValue::Str("tf_crop_and_resize".into()));
        a.insert("roi", AttrValue::Float(spec_model::grammar::FloatLit(2.0)));
        a.insert("extrapolation_value", AttrValue::Int(-3));
        let mem = Memory::new(1 << 20);
        let args = [tensor(DType::F32, &[1, 1, 0, 0], &[], &mem), Value::Shape(vec![2, 2].into())];
        let Value::Tensor(r) = run_standalone(Op::Resize2d, &a, &args, &mem).unwrap().unwrap() else { panic!() };
        assert_eq!((0..4).map(|i| r.get_f64(i).unwrap()).collect::<Vec<_>>(), vec![-3.0; 4]);
        // An empty image resized by interpolation cannot be read.
        let e = run(&[], DType::F32, &[1, 1, 0, 3], &[], [2, 2]).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::OpError);
        let e = run(&[], DType::F32, &[1, 1, 1, 1], &[1.0], [-1, 2]).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::NegativeDimension);
        assert_eq!(run(&[], DType::F32, &[1, 1, 1, 1], &[1.0], [0, 2]).unwrap(), vec![]);
    }

    /// The result's shape, or the error.
    fn shape_of(attrs: &[(&str, &str)], shape: &[u64], v: &[f32], size: [i64; 2]) -> crate::error::Result<Vec<u64>> {
        let mem = Memory::new(1 << 24);
        let mut a = Attrs::default();
        for (k, v) in attrs {
            a.insert(*k, AttrValue::Str(v.to_string()));
        }
        let args = [tensor(DType::F32, shape, v, &mem), Value::Shape(size.to_vec().into())];
        let Value::Tensor(r) = run_standalone(Op::Resize2d, &a, &args, &mem).unwrap()? else { panic!("not a tensor") };
        Ok(r.shape().to_vec())
    }

    #[test]
    fn non_finite_pixels_and_one_pixel_images() {
        // Linear, asymmetric 3 -> 6: at coordinate 1 the infinite neighbour's weight is
        // 0, and 2 * 1 + inf * 0 is NaN; past it the row blend (the one row read twice,
        // the second time with weight 0) is NaN too; before it, untouched numbers.
        let lin = [("coordinate_transformation_mode", "asymmetric")];
        let r = run(&lin, DType::F32, &[1, 1, 1, 3], &[1.0, 2.0, f32::INFINITY], [1, 6]).unwrap();
        assert!(r[0] == 1.0 && r[1] == 1.5 && r[2..].iter().all(|v| v.is_nan()), "{r:?}");
        let nn = [("method", "nearest_neighbor"), ("coordinate_transformation_mode", "asymmetric")];
        let r = run(&nn, DType::F32, &[1, 1, 1, 2], &[f32::NAN, 3.0], [1, 4]).unwrap();
        assert!(r[0].is_nan() && r[1].is_nan() && r[2] == 3.0 && r[3] == 3.0, "{r:?}");
        // A 1x1 image: every method gives the pixel (cubic up to its weights' rounding).
        for m in ["nearest_neighbor", "linear"] {
            let r = run(&[("method", m)], DType::F32, &[1, 2, 1, 1], &[2.5, -1.0], [3, 2]).unwrap();
            assert_eq!(r, [[2.5; 6], [-1.0; 6]].concat(), "{m}");
        }
        let r = run(&[("method", "cubic")], DType::F32, &[1, 2, 1, 1], &[2.5, -1.0], [2, 3]).unwrap();
        assert!(
            r[..6].iter().all(|v| (v - 2.5).abs() < 1e-5) && r[6..].iter().all(|v| (v + 1.0).abs() < 1e-5),
            "{r:?}"
        );
    }

    #[test]
    fn empty_and_huge_shapes() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(shape_of(&[], &[0, 1, 2, 2], &[], [3, 3]).unwrap(), vec![0, 1, 3, 3]);
        assert_eq!(shape_of(&[], &[1, 1, 2, 2], &x, [3, 0]).unwrap(), vec![1, 1, 3, 0]);
        let e = shape_of(&[], &[1, 1, 2, 2], &x, [1 << 20, 1 << 20]).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::MemoryExhausted);
        // An empty result is empty however long its other side: no per-column plan.
        for m in ["nearest_neighbor", "linear", "cubic"] {
            assert_eq!(shape_of(&[("method", m)], &[1, 1, 2, 2], &x, [0, 1 << 40]).unwrap(), vec![1, 1, 0, 1 << 40]);
        }
    }
}
