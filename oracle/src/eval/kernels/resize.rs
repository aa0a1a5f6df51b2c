//! `image.resize2d`, TOPI's formula (`python/tvm/topi/image/resize.py`, `_resize_2d`)
//! step by step in float32, TVM's `"float"`: every pixel read is converted to float32,
//! every operation below is one float32 operation (rounded, never fused), and the
//! value is converted to the output dtype at the end (OP-astype). The constants are
//! TOPI's, rounded to float32 where TVM folds them (`alpha + 2` is computed in float64
//! by Python first). `proofs-notes/operator-semantics.md` has the whole formula.

use super::conv::{layout, strides_of};
use super::elem::convert_scalar;
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, Value};
use spec_model::grammar::{AttrValue, DataType, Scalar};

/// How a call interpolates, its attributes read and checked.
struct Plan {
    method: String,
    mode: String,
    rounding: String,
    /// start_h, start_w, end_h, end_w, as float32.
    roi: [f32; 4],
    alpha: f64,
    exclude: bool,
    extrapolation: f32,
}

/// A string attribute, or `default`.
fn string(cx: &Cx, name: &str, default: &str) -> EvalResult<String> {
    match cx.attr(name) {
        None => Ok(default.to_string()),
        Some(AttrValue::Str(s)) => Ok(s.clone()),
        Some(_) => Err(cx.error(format!("attribute `{name}` must be a string"))),
    }
}

fn plan(cx: &Cx) -> EvalResult<Plan> {
    let method = string(cx, "method", "linear")?.to_ascii_lowercase();
    if !["nearest_neighbor", "linear", "cubic"].contains(&method.as_str()) {
        return Err(cx.error(format!("method \"{method}\" is not one of nearest_neighbor, linear, cubic")));
    }
    let mode = string(cx, "coordinate_transformation_mode", "half_pixel")?;
    let modes = [
        "half_pixel",
        "align_corners",
        "asymmetric",
        "pytorch_half_pixel",
        "tf_half_pixel_for_nn",
        "tf_crop_and_resize",
    ];
    if !modes.contains(&mode.as_str()) {
        return Err(cx.error(format!("coordinate_transformation_mode \"{mode}\" is not known")));
    }
    let mut rounding = string(cx, "rounding_method", "round")?;
    if method == "nearest_neighbor" {
        if !["", "round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"].contains(&rounding.as_str()) {
            return Err(cx.error(format!("rounding_method \"{rounding}\" is not known")));
        }
        if rounding.is_empty() {
            rounding = if mode == "align_corners" { "round" } else { "floor" }.to_string();
        }
    }
    let number = |v: &AttrValue| match v {
        AttrValue::Float(f) => Some(f.0),
        AttrValue::Int(i) => Some(*i as f64),
        _ => None,
    };
    let roi: Vec<f64> = match cx.attr("roi") {
        None => vec![0.0; 4],
        Some(AttrValue::List(xs)) => xs.iter().map(number).collect::<Option<_>>().unwrap_or_default(),
        Some(v) => number(v).map(|f| vec![f; 4]).unwrap_or_default(),
    };
    if roi.len() != 4 {
        return Err(cx.error("roi must be one number or a list of 4"));
    }
    Ok(Plan {
        method,
        mode,
        rounding,
        roi: [roi[0] as f32, roi[1] as f32, roi[2] as f32, roi[3] as f32],
        alpha: cx.attr_float("cubic_alpha", -0.75)?,
        exclude: cx.attr_int("cubic_exclude", 0)? != 0,
        extrapolation: cx.attr_float("extrapolation_value", 0.0)? as f32,
    })
}

/// An output index's source coordinate along one axis: a float32 (TOPI's `get_inx`),
/// or an exact integer where TOPI divides integers instead (`Int`).
#[derive(Clone, Copy)]
enum Coord {
    Float(f32),
    Int(i64),
}

/// TOPI's `can_convert_multiply_to_intdiv` for a nearest-neighbor `asymmetric` resize
/// with `floor` rounding, its constants folded in float32 as TVM folds them: the factor
/// `T / L` when `T / L` is an integer not above `1 / (1e-5·L + 1e-5)`.
fn int_factor(len: u64, target: u64) -> Option<i64> {
    if len == 0 {
        return None;
    }
    let div = target as f32 / len as f32;
    let check = 1.0f32 / (1e-5f32 * len as f32 + 1e-5f32);
    (div.fract() == 0.0 && div <= check).then_some((target / len) as i64)
}

/// `get_inx`: the source coordinate of output index `x` along an axis of length `len`
/// resized to `target`, `start`/`end` the axis's roi.
fn source(p: &Plan, x: u64, len: u64, target: u64, start: f32, end: f32, factor: Option<i64>) -> Coord {
    let (xf, lf, tf) = (x as f32, len as f32, target as f32);
    let scale = lf / tf;
    let lm1 = (len as i64 - 1) as f32;
    let tm1 = (target as i64 - 1) as f32;
    Coord::Float(match p.mode.as_str() {
        "half_pixel" => (xf + 0.5) * scale - 0.5,
        "align_corners" => lm1 / tm1 * xf,
        "asymmetric" => match factor {
            Some(k) => return Coord::Int(x as i64 / k),
            None => scale * xf,
        },
        "pytorch_half_pixel" if target > 1 => (xf + 0.5) * scale - 0.5,
        "pytorch_half_pixel" => 0.0,
        "tf_half_pixel_for_nn" => (xf + 0.5) * scale,
        _ if target > 1 => start * lm1 + xf * (end - start) * lm1 / tm1,
        _ => 0.5 * (start + end) * lm1,
    })
}

/// A float32 index converted to int32 as TOPI's `astype("int32")` (saturating; NaN is 0).
fn to_index(v: f32) -> i64 {
    v as i32 as i64
}

/// The nearest source index under the rounding method (`get_closest_index`).
fn nearest(p: &Plan, c: Coord) -> i64 {
    let v = match c {
        Coord::Int(i) => return i,
        Coord::Float(v) => v,
    };
    to_index(match p.rounding.as_str() {
        "round" => v.round_ties_even(),
        "round_prefer_floor" => (v - 0.5).ceil(),
        "round_prefer_ceil" => (v + 0.5).floor(),
        "floor" => (v + 1e-5f32).floor(),
        _ => (v - 1e-5f32).ceil(),
    })
}

/// TOPI's cubic spline weights of fraction `t` (`_cubic_spline_weights`).
fn cubic_weights(t: f32, alpha: f64) -> [f32; 4] {
    let a = alpha as f32;
    let (b, c, d, e, f) = (
        (alpha + 2.0) as f32,
        (3.0 + alpha) as f32,
        (-(alpha + 2.0)) as f32,
        (3.0 + 2.0 * alpha) as f32,
        (-alpha) as f32,
    );
    let t2 = t * t;
    let t3 = t2 * t;
    [a * (t3 - 2.0 * t2 + t), b * t3 - c * t2 + 1.0, d * t3 + e * t2 - a * t, f * t3 + a * t2]
}

/// OP-image.resize2d: `out[n, c, y, x]` (in the data's layout) from the source
/// coordinates `in_y = get_inx(y, H, OH)`, `in_x = get_inx(x, W, OW)` of the mode,
/// then: `nearest_neighbor` reads the pixel at the rounded coordinates; `linear` blends
/// the 2x2 pixels from `floor(in)` by `lerp(a, b, t) = a * (1 - t) + b * t` (x first,
/// then y); `cubic` the 4x4 pixels from `floor(in) - 1` with the cubic spline weights of
/// `in - floor(in)` (rows first: each row's weighted sum, then the rows'), weights
/// outside the image zeroed and the rest renormalized when `cubic_exclude` is nonzero.
/// Pixel indices are clamped to the image. `tf_crop_and_resize` gives
/// `extrapolation_value` where `in_y` or `in_x` falls outside `[0, len - 1]`, without
/// reading. Errors: not a tensor and a shape of 2 values; a layout not a permutation of
/// `NCHW`; a rank other than 4; an unknown method, mode or rounding; `roi` not 1 or 4
/// numbers; a negative size; a pixel to read from an image with no rows or columns; a
/// value that does not convert to the output dtype (NaN, or out of an integer dtype's
/// range, OP-astype).
pub(crate) fn resize2d(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 2)?;
    let x = cx.tensor(&args[0], "the data")?;
    let size = cx.shape(&args[1], "the size")?;
    if size.len() != 2 {
        return Err(cx.error(format!("the size must have 2 values, got {}", size.len())));
    }
    let pos = layout(cx, "layout", "NCHW", "NCHW")?;
    let p = plan(cx)?;
    let dtype: DataType = cx.attr_dtype("out_dtype")?.filter(|d| !d.is_void()).unwrap_or(x.dtype);
    let mut data = cx.storage(dtype)?;
    let size = cx.dims(&size)?;
    if x.ndim() != 4 {
        return Err(cx.error(format!("the data must have rank 4, got rank {}", x.ndim())));
    }
    let (h, w) = (x.shape[pos[2]], x.shape[pos[3]]);
    let (oh, ow) = (size[0], size[1]);
    let mut out_shape = x.shape.clone();
    out_shape[pos[2]] = oh;
    out_shape[pos[3]] = ow;
    let total = cx.numel(&out_shape)?;
    let (xs, os) = (strides_of(&x.shape), strides_of(&out_shape));
    let (fh, fw) = match (p.method.as_str(), p.mode.as_str(), p.rounding.as_str()) {
        ("nearest_neighbor", "asymmetric", "floor") => (int_factor(h, oh), int_factor(w, ow)),
        _ => (None, None),
    };
    let mut values = vec![0f32; total];
    for (flat, slot) in values.iter_mut().enumerate() {
        // The output index, canonical (n, c, y, x).
        let at = |k: usize| (flat / os[pos[k]]) as u64 % out_shape[pos[k]];
        let (n, c, y, xx) = (at(0), at(1), at(2), at(3));
        let iy = source(&p, y, h, oh, p.roi[0], p.roi[2], fh);
        let ix = source(&p, xx, w, ow, p.roi[1], p.roi[3], fw);
        if p.mode == "tf_crop_and_resize" {
            let outside = |v: Coord, len: u64| match v {
                Coord::Float(v) => v < 0.0 || v > (len as i64 - 1) as f32,
                Coord::Int(_) => false,
            };
            if outside(iy, h) || outside(ix, w) {
                *slot = p.extrapolation;
                continue;
            }
        }
        if h == 0 || w == 0 {
            return Err(cx.error("a pixel is read from an image with no rows or columns"));
        }
        let base = n as usize * xs[pos[0]] + c as usize * xs[pos[1]];
        let pixel = |r: i64, q: i64| -> f32 {
            let r = r.clamp(0, h as i64 - 1) as usize;
            let q = q.clamp(0, w as i64 - 1) as usize;
            match x.data.get(base + r * xs[pos[2]] + q * xs[pos[3]]) {
                Scalar::Bool(b) => b as u8 as f32,
                Scalar::Int(i) => i as f32,
                Scalar::Float(f) => f as f32,
            }
        };
        let coord = |v: Coord| match v {
            Coord::Float(f) => f,
            Coord::Int(i) => i as f32,
        };
        *slot = match p.method.as_str() {
            "nearest_neighbor" => pixel(nearest(&p, iy), nearest(&p, ix)),
            "linear" => {
                let (vy, vx) = (coord(iy), coord(ix));
                let (y0, x0) = (to_index(vy.floor()), to_index(vx.floor()));
                let (ty, tx) = (vy - y0 as f32, vx - x0 as f32);
                let lerp = |a: f32, b: f32, t: f32| a * (1.0 - t) + b * t;
                let top = lerp(pixel(y0, x0), pixel(y0, x0 + 1), tx);
                let bottom = lerp(pixel(y0 + 1, x0), pixel(y0 + 1, x0 + 1), tx);
                lerp(top, bottom, ty)
            }
            _ => {
                let (vy, vx) = (coord(iy), coord(ix));
                let (y0, x0) = (to_index(vy.floor()), to_index(vx.floor()));
                let mut wy = cubic_weights(vy - vy.floor(), p.alpha);
                let mut wx = cubic_weights(vx - vx.floor(), p.alpha);
                if p.exclude {
                    for (ws, i0, len) in [(&mut wy, y0, h), (&mut wx, x0, w)] {
                        for (k, wk) in ws.iter_mut().enumerate() {
                            if i0 - 1 + (k as i64) < 0 || i0 + k as i64 > len as i64 {
                                *wk = 0.0;
                            }
                        }
                        let sum = ws[0] + ws[1] + ws[2] + ws[3];
                        for wk in ws.iter_mut() {
                            *wk /= sum;
                        }
                    }
                }
                let mut rows = [0f32; 4];
                for (j, row) in rows.iter_mut().enumerate() {
                    let r = y0 - 1 + j as i64;
                    *row = pixel(r, x0 - 1) * wx[0]
                        + pixel(r, x0) * wx[1]
                        + pixel(r, x0 + 1) * wx[2]
                        + pixel(r, x0 + 2) * wx[3];
                }
                rows[0] * wy[0] + rows[1] * wy[1] + rows[2] * wy[2] + rows[3] * wy[3]
            }
        };
    }
    for v in values {
        let s = convert_scalar(Scalar::Float(v as f64), dtype).map_err(|m| cx.error(m))?;
        data.push(s).map_err(|m| cx.error(m))?;
    }
    Ok(tensor_value(dtype, out_shape, data))
}

#[cfg(test)]
mod tests {
    use crate::eval::ops::eval_op_standalone;
    use crate::eval::value::{ErrorKind, Value};
    use spec_model::grammar::{AttrValue, Attrs, DataType, FloatLit, NDArray, Scalar};
    use spec_model::ops::Op;
    use spec_model::Span;
    use std::rc::Rc;

    const F32: DataType = DataType::FLOAT32;

    fn t(dtype: DataType, shape: &[u64], v: &[f64]) -> Value {
        let s: Vec<Scalar> =
            v.iter().map(|&x| if dtype.is_float() { Scalar::Float(x) } else { Scalar::Int(x as i128) }).collect();
        Value::tensor(NDArray::from_scalars(dtype, shape.to_vec(), &s).unwrap())
    }

    fn attrs(list: &[(&str, &str)]) -> Attrs {
        let mut a = Attrs::default();
        for (k, v) in list {
            a.insert(*k, AttrValue::Str(v.to_string()));
        }
        a
    }

    /// The result's shape and values (as f64), or the error's kind.
    fn run(a: &Attrs, x: Value, size: [i64; 2]) -> Result<(Vec<u64>, Vec<f64>), ErrorKind> {
        let args = [x, Value::Shape(Rc::new(size.to_vec()))];
        let v = eval_op_standalone(Op::Resize2d, &args, a, Span::SYNTHETIC).map_err(|e| e.kind)?;
        let Value::Tensor(r) = v else { panic!("not a tensor") };
        let r = r.borrow();
        let vals = (0..r.data.len())
            .map(|i| match r.data.get(i) {
                Scalar::Float(f) => f,
                Scalar::Int(i) => i as f64,
                Scalar::Bool(b) => b as u8 as f64,
            })
            .collect();
        Ok((r.shape.clone(), vals))
    }

    fn values(a: &Attrs, x: Value, size: [i64; 2]) -> Vec<f64> {
        run(a, x, size).unwrap().1
    }

    #[test]
    fn nearest_rounding_methods() {
        // Asymmetric 3 -> 6: source coordinates 0, 0.5, 1, 1.5, 2, 2.5.
        let x = t(F32, &[1, 1, 1, 3], &[0.0, 10.0, 20.0]);
        let nn = |r: &str| {
            attrs(&[
                ("method", "nearest_neighbor"),
                ("coordinate_transformation_mode", "asymmetric"),
                ("rounding_method", r),
            ])
        };
        // `round` ties to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2.
        assert_eq!(values(&nn("round"), x.clone(), [1, 6]), [0., 0., 10., 20., 20., 20.]);
        assert_eq!(values(&nn("round_prefer_floor"), x.clone(), [1, 6]), [0., 0., 10., 10., 20., 20.]);
        assert_eq!(values(&nn("round_prefer_ceil"), x.clone(), [1, 6]), [0., 10., 10., 20., 20., 20.]);
        // floor: TOPI's integer division (6 / 3 = 2); ceil: 2.5 -> 3, clamped to 2.
        assert_eq!(values(&nn("floor"), x.clone(), [1, 6]), [0., 0., 10., 10., 20., 20.]);
        assert_eq!(values(&nn("ceil"), x.clone(), [1, 6]), [0., 10., 10., 20., 20., 20.]);
        // "" is floor here, round under align_corners (coordinates 0, 0.4, .., 2).
        assert_eq!(values(&nn(""), x.clone(), [1, 6]), [0., 0., 10., 10., 20., 20.]);
        let ac = attrs(&[
            ("method", "nearest_neighbor"),
            ("coordinate_transformation_mode", "align_corners"),
            ("rounding_method", ""),
        ]);
        assert_eq!(values(&ac, x, [1, 6]), [0., 0., 10., 10., 20., 20.]);
    }

    #[test]
    fn non_finite_pixels_meet_zero_weights() {
        // Linear, asymmetric 3 -> 6: coordinates 0, 0.5, .., 2.5. At 1 the infinite
        // neighbour's weight is 0, and 2 * 1 + inf * 0 is NaN; at 1.5 the column blend is
        // inf, and the row blend (one row, read twice, the second with weight 0) NaN.
        let lin = attrs(&[("coordinate_transformation_mode", "asymmetric")]);
        let r = values(&lin, t(F32, &[1, 1, 1, 3], &[1.0, 2.0, f64::INFINITY]), [1, 6]);
        assert!(r[0] == 1.0 && r[1] == 1.5 && r[2..].iter().all(|v| v.is_nan()), "{r:?}");
        // Nearest copies a NaN; elsewhere it is not read.
        let nn = attrs(&[("method", "nearest_neighbor"), ("coordinate_transformation_mode", "asymmetric")]);
        let r = values(&nn, t(F32, &[1, 1, 1, 2], &[f64::NAN, 3.0]), [1, 4]);
        assert!(r[0].is_nan() && r[1].is_nan() && r[2] == 3.0 && r[3] == 3.0, "{r:?}");
    }

    #[test]
    fn one_pixel_images() {
        let x = t(F32, &[1, 2, 1, 1], &[2.5, -1.0]);
        for method in ["nearest_neighbor", "linear"] {
            let r = run(&attrs(&[("method", method)]), x.clone(), [3, 2]).unwrap();
            assert_eq!(r, (vec![1, 2, 3, 2], [[2.5; 6], [-1.0; 6]].concat()), "{method}");
        }
        // Cubic reads the one pixel 16 times: the weights' sum (1, up to rounding) times it.
        let (_, r) = run(&attrs(&[("method", "cubic")]), x, [2, 3]).unwrap();
        assert!(
            r[..6].iter().all(|v| (v - 2.5).abs() < 1e-5) && r[6..].iter().all(|v| (v + 1.0).abs() < 1e-5),
            "{r:?}"
        );
    }

    #[test]
    fn empty_shapes() {
        let x = t(F32, &[1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(run(&Attrs::default(), x.clone(), [0, 3]), Ok((vec![1, 1, 0, 3], vec![])));
        let batch = t(F32, &[0, 1, 2, 2], &[]);
        assert_eq!(run(&Attrs::default(), batch, [3, 3]), Ok((vec![0, 1, 3, 3], vec![])));
        // An image with no rows cannot be read, unless every output extrapolates.
        let rows = t(F32, &[1, 1, 0, 3], &[]);
        assert_eq!(run(&Attrs::default(), rows.clone(), [2, 2]), Err(ErrorKind::OpError));
        let mut crop = attrs(&[("coordinate_transformation_mode", "tf_crop_and_resize")]);
        crop.insert("roi", AttrValue::Float(FloatLit(2.0)));
        crop.insert("extrapolation_value", AttrValue::Float(FloatLit(-3.0)));
        assert_eq!(run(&crop, rows, [2, 2]), Ok((vec![1, 1, 2, 2], vec![-3.0; 4])));
        assert_eq!(run(&Attrs::default(), x, [-1, 2]), Err(ErrorKind::NegativeDimension));
    }

    #[test]
    fn huge_sizes_meet_the_budget() {
        let x = t(F32, &[1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(run(&Attrs::default(), x.clone(), [1 << 20, 1 << 20]), Err(ErrorKind::MemoryExhausted));
        // An empty result is empty however long its other side.
        assert_eq!(run(&Attrs::default(), x, [0, 1 << 40]), Ok((vec![1, 1, 0, 1 << 40], vec![])));
    }

    #[test]
    fn conversions_and_the_align_corners_edge() {
        // int32 results truncate toward zero: -3 * 0.5 = -1.5 -> -1.
        let lin = attrs(&[("coordinate_transformation_mode", "asymmetric")]);
        let x = t(DataType::INT32, &[1, 1, 1, 2], &[-3.0, 0.0]);
        assert_eq!(values(&lin, x, [1, 4]), [-3., -1., 0., 0.]);
        // A uint8 cubic overshoot below 0 does not convert; nor does NaN into int32.
        let cubic = attrs(&[("method", "cubic")]);
        let bytes = t(DataType::uint(8), &[1, 1, 1, 4], &[0.0, 255.0, 255.0, 0.0]);
        assert_eq!(run(&cubic, bytes, [1, 9]), Err(ErrorKind::OpError));
        let to_int = attrs(&[("method", "nearest_neighbor"), ("out_dtype", "int32")]);
        assert_eq!(run(&to_int, t(F32, &[1, 1, 1, 1], &[f64::NAN]), [1, 1]), Err(ErrorKind::OpError));
        // align_corners to one row: (H - 1) / 0 * 0 is NaN, and so is the blend.
        let ac = attrs(&[("coordinate_transformation_mode", "align_corners")]);
        let r = values(&ac, t(F32, &[1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0]), [1, 2]);
        assert!(r.iter().all(|v| v.is_nan()), "{r:?}");
    }
}
