//! Calls of the convolution, pooling, padding and resizing operators (`nn.pad`,
//! `nn.conv1d`, `nn.conv2d`, `nn.conv2d_transpose`, `nn.max_pool2d`, `nn.avg_pool2d`,
//! `nn.adaptive_avg_pool2d`, `image.resize2d`), valid by construction: windows never
//! longer than the padded input (on a symbolic length the padding covers the window,
//! so the output is at least 1 for any length >= 1), a transposed convolution's padding
//! never more than its kernel's reach, `ceil_mode` only on literal lengths, resizes
//! whose values convert to the output dtype. The result type is built with the same
//! `dim_op` steps as the static rules (OP-nn.conv2d, OP-nn.max_pool2d, ...).

use super::exprs::{call, no};
use super::ty::{Dim, Ty};
use super::{Gen, Scope};
use spec_model::grammar::{AttrValue, Attrs, DataType, Expr, FloatLit, PrimBinOp, PrimExpr, PrimExprKind};
use spec_model::ops::{dim_op, Op};

fn ints(xs: &[i64]) -> AttrValue {
    AttrValue::List(xs.iter().map(|&x| AttrValue::Int(x)).collect())
}

fn s(v: &str) -> AttrValue {
    AttrValue::Str(v.to_string())
}

/// One spatial axis of a window: kernel length, stride, dilation, pads before/after.
#[derive(Clone, Copy)]
struct Axis {
    k: i64,
    stride: i64,
    dil: i64,
    before: i64,
    after: i64,
}

/// The output length the static rules derive, with its upper bound.
fn window_out(x: &Dim, a: Axis, ceil: bool) -> Dim {
    let int = PrimExpr::int;
    // The static rules' steps: the constants summed first (k is literal here), a
    // stride of 1 divides by nothing, and `(x - c) + 1` is `x - (c - 1)`.
    let extra = if ceil { a.stride - 1 } else { 0 };
    let c = a.before + a.after - a.dil * (a.k - 1) - 1 + extra;
    let num = if c < 0 { dim_op(PrimBinOp::Sub, &x.e, &int(-c)) } else { dim_op(PrimBinOp::Add, &x.e, &int(c)) };
    let q = dim_op(PrimBinOp::FloorDiv, &num, &int(a.stride));
    let e = match &*q.kind {
        PrimExprKind::Binary { op: PrimBinOp::Sub, a: lhs, b } if b.as_int().is_some_and(|c| c >= 1) => {
            dim_op(PrimBinOp::Sub, lhs, &int(b.as_int().unwrap_or(1) - 1))
        }
        _ => dim_op(PrimBinOp::Add, &q, &int(1)),
    };
    let len = |h: i64| {
        let extra = if ceil { a.stride - 1 } else { 0 };
        (h + a.before + a.after - a.dil * (a.k - 1) - 1 + extra).div_euclid(a.stride) + 1
    };
    let mut d = Dim { e, hi: len(x.hi).max(1) }.settled();
    if ceil {
        // TVM drops a last window starting in the bottom padding (literal lengths only here).
        if let (Some(v), Some(h)) = (d.as_lit(), x.as_lit()) {
            if v >= 1 && (v - 1) * a.stride >= h + a.before {
                d = Dim::lit(v - 1);
            }
        }
    }
    d
}

/// `dims` (canonical order) placed by a layout's letter positions.
fn placed(dims: Vec<Dim>, layout: &str, canonical: &str) -> Vec<Dim> {
    let mut out = dims.clone();
    for (i, ch) in canonical.chars().enumerate() {
        if let Some(p) = layout.find(ch) {
            out[p] = dims[i].clone();
        }
    }
    out
}

impl Gen<'_, '_> {
    /// A window axis valid over an input of length `x` (any value >= 1 when symbolic).
    fn window_axis(&mut self, x: &Dim, max_k: i64) -> Option<Axis> {
        let k = self.range(1, max_k);
        let dil = if self.chance(1, 4) { 2 } else { 1 };
        let stride = self.range(1, 2);
        let span = dil * (k - 1);
        let (mut before, mut after) = (self.range(0, 1), self.range(0, 1));
        let room = x.as_lit().unwrap_or(1) + before + after - 1;
        if room < span {
            // Pad the rest so the window fits (symbolic lengths: the padding alone).
            let need = span - room;
            before += need / 2;
            after += need - need / 2;
        }
        Some(Axis { k, stride, dil, before, after })
    }

    /// A tensor argument of `dims` and `dtype` (a variable in scope, or a new value).
    fn conv_operand(&mut self, dims: Vec<Dim>, dtype: DataType, sc: &Scope) -> Option<Expr> {
        if !self.fits(&dims) {
            return None;
        }
        Some(self.arg_of(&Ty::tensor(dims, dtype), sc))
    }

    pub(super) fn conv_call(&mut self, op: Op, sc: &Scope) -> Option<(Expr, Ty)> {
        let make = |args: Vec<Expr>, attrs: Attrs| call(Expr::op(op), args, Vec::new(), attrs);
        match op {
            Op::Pad => {
                let (x, xd, dt) = self.operand(sc, |_| true, DataType::FLOAT32, 0);
                let mode: &str = self.choose(&["constant", "constant", "reflect", "replicate", "circular"])?;
                let mut widths = Vec::new();
                let mut out = Vec::new();
                for d in &xd {
                    // reflect needs a width below the length, circular at most the length.
                    let cap = match (mode, d.as_lit()) {
                        ("reflect", Some(v)) => (v - 1).min(2),
                        ("reflect", None) => 0,
                        ("circular", Some(v)) => v.min(2),
                        ("circular", None) => 1,
                        _ => 2,
                    };
                    let (b, a) = (self.range(0, cap), self.range(0, cap));
                    widths.extend([b, a]);
                    out.push(Dim::binary(PrimBinOp::Add, d, &Dim::lit(b + a)));
                }
                if !self.fits(&out) {
                    return None;
                }
                let mut attrs = no();
                attrs.insert("pad_width", ints(&widths));
                if mode != "constant" || self.chance(1, 3) {
                    attrs.insert("pad_mode", s(mode));
                }
                if mode == "constant" && self.chance(1, 2) {
                    let v = if dt.is_float() { self.range(-8, 8) as f64 / 4.0 } else { self.range(0, 3) as f64 };
                    let v = if dt.is_bool() { v.min(1.0) } else { v };
                    attrs.insert("pad_value", AttrValue::Float(FloatLit(v)));
                }
                Some((make(vec![x], attrs), Ty::tensor(out, dt)))
            }
            Op::Conv1d | Op::Conv2d => self.conv_nd(op, sc),
            Op::Conv2dTranspose => self.conv_transpose(sc),
            Op::Resize2d => self.resize(sc),
            Op::MaxPool2d | Op::AvgPool2d => {
                let layout: &str = self.choose(&["NCHW", "NCHW", "NHWC"])?;
                let (x, xd, dt) = self.pool_operand(sc, layout)?;
                let canon: Vec<Dim> = "NCHW".chars().map(|c| xd[layout.find(c).unwrap_or(0)].clone()).collect();
                let ceil = canon[2].as_lit().is_some() && canon[3].as_lit().is_some() && self.chance(1, 3);
                let (ah, aw) = (self.window_axis(&canon[2], 3)?, self.window_axis(&canon[3], 3)?);
                let out_layout = if self.chance(1, 4) { "NHWC" } else { layout };
                let out = vec![
                    canon[0].clone(),
                    canon[1].clone(),
                    window_out(&canon[2], ah, ceil),
                    window_out(&canon[3], aw, ceil),
                ];
                let out = placed(out, out_layout, "NCHW");
                if !self.fits(&out) {
                    return None;
                }
                let mut attrs = no();
                attrs.insert("pool_size", ints(&[ah.k, aw.k]));
                attrs.insert("strides", ints(&[ah.stride, aw.stride]));
                attrs.insert("padding", ints(&[ah.before, aw.before, ah.after, aw.after]));
                attrs.insert("dilation", ints(&[ah.dil, aw.dil]));
                attrs.insert("ceil_mode", AttrValue::Bool(ceil));
                attrs.insert("count_include_pad", AttrValue::Bool(self.chance(1, 2)));
                attrs.insert("layout", s(layout));
                attrs.insert("out_layout", s(out_layout));
                Some((make(vec![x], attrs), Ty::tensor(out, dt)))
            }
            Op::AdaptiveAvgPool2d => {
                let layout: &str = self.choose(&["NCHW", "NCHW", "NHWC"])?;
                let (x, xd, dt) = self.pool_operand(sc, layout)?;
                let canon: Vec<Dim> = "NCHW".chars().map(|c| xd[layout.find(c).unwrap_or(0)].clone()).collect();
                let mut attrs = no();
                let (oh, ow) = match self.pick(3) {
                    0 => (canon[2].clone(), canon[3].clone()),
                    1 => {
                        let v = self.range(1, 4);
                        attrs.insert("output_size", AttrValue::Int(v));
                        (Dim::lit(v), Dim::lit(v))
                    }
                    _ => {
                        let (a, b) = (self.range(1, 4), self.range(1, 4));
                        attrs.insert("output_size", ints(&[a, b]));
                        (Dim::lit(a), Dim::lit(b))
                    }
                };
                attrs.insert("layout", s(layout));
                let out = placed(vec![canon[0].clone(), canon[1].clone(), oh, ow], layout, "NCHW");
                if !self.fits(&out) {
                    return None;
                }
                Some((make(vec![x], attrs), Ty::tensor(out, dt)))
            }
            _ => None,
        }
    }

    /// A rank-4 numeric operand in `layout` (from scope, or new).
    fn pool_operand(&mut self, sc: &Scope, layout: &str) -> Option<(Expr, Vec<Dim>, DataType)> {
        let fit = sc.vars_where(|t| matches!(t.as_tensor(), Some((ds, d)) if ds.len() == 4 && !d.is_bool()));
        if let Some((v, Ty::Tensor { dims, dtype })) = self.choose(&fit) {
            if self.chance(3, 4) {
                return Some((Expr::var(&v), dims, dtype));
            }
        }
        let dt = self.choose(&[DataType::FLOAT32, DataType::FLOAT32, DataType::INT32, DataType::float(64)])?;
        let canon = vec![Dim::lit(self.range(1, 2)), Dim::lit(self.range(1, 3)), self.new_dim(sc), self.new_dim(sc)];
        let dims = placed(canon, layout, "NCHW");
        let e = self.conv_operand(dims.clone(), dt, sc)?;
        Some((e, dims, dt))
    }

    fn conv_nd(&mut self, op: Op, sc: &Scope) -> Option<(Expr, Ty)> {
        let two = op == Op::Conv2d;
        let (canon_d, canon_k) = if two { ("NCHW", "OIHW") } else { ("NCW", "OIW") };
        let data_layout = if self.chance(1, 3) {
            if two {
                "NHWC"
            } else {
                "NWC"
            }
        } else {
            canon_d
        };
        let kernel_layout = if self.chance(1, 3) {
            if two {
                "HWIO"
            } else {
                "WIO"
            }
        } else {
            canon_k
        };
        let out_layout = if self.chance(1, 4) {
            if data_layout == canon_d {
                if two {
                    "NHWC"
                } else {
                    "NWC"
                }
            } else {
                canon_d
            }
        } else {
            data_layout
        };
        let groups = if self.chance(1, 4) { 2 } else { 1 };
        let (i, og) = (self.range(1, 3), self.range(1, 3));
        let dt = self.choose(&[DataType::FLOAT32, DataType::FLOAT32, DataType::float(64), DataType::INT32])?;
        let spatial: Vec<Dim> = (0..if two { 2 } else { 1 }).map(|_| self.new_dim(sc)).collect();
        let mut canon = vec![Dim::lit(self.range(1, 2)), Dim::lit(i * groups)];
        canon.extend(spatial.iter().cloned());
        let axes: Vec<Axis> = spatial.iter().map(|d| self.window_axis(d, 3)).collect::<Option<Vec<_>>>()?;
        let mut kdims = vec![Dim::lit(og * groups), Dim::lit(i)];
        kdims.extend(axes.iter().map(|a| Dim::lit(a.k)));
        let mut out = vec![canon[0].clone(), Dim::lit(og * groups)];
        out.extend(spatial.iter().zip(&axes).map(|(d, a)| window_out(d, *a, false)));
        let out = placed(out, out_layout, canon_d);
        if !self.fits(&out) {
            return None;
        }
        let x = self.conv_operand(placed(canon, data_layout, canon_d), dt, sc)?;
        let w = self.conv_operand(placed(kdims, kernel_layout, canon_k), dt, sc)?;
        let mut attrs = no();
        let per = |f: fn(&Axis) -> i64| ints(&axes.iter().map(f).collect::<Vec<_>>());
        attrs.insert("strides", per(|a| a.stride));
        let mut pads: Vec<i64> = axes.iter().map(|a| a.before).collect();
        pads.extend(axes.iter().map(|a| a.after));
        attrs.insert("padding", ints(&pads));
        attrs.insert("dilation", per(|a| a.dil));
        attrs.insert("groups", AttrValue::Int(groups));
        attrs.insert("data_layout", s(data_layout));
        attrs.insert("kernel_layout", s(kernel_layout));
        attrs.insert("out_layout", s(out_layout));
        if self.chance(1, 4) {
            attrs.insert("out_dtype", s(&dt.to_string()));
        }
        Some((call(Expr::op(op), vec![x, w], Vec::new(), attrs), Ty::tensor(out, dt)))
    }

    fn conv_transpose(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let data_layout: &str = self.choose(&["NCHW", "NCHW", "NHWC"])?;
        let kernel_layout: &str = self.choose(&["IOHW", "IOHW", "OIHW", "HWOI"])?;
        let out_layout: &str = if self.chance(1, 4) { self.choose(&["NCHW", "NHWC"])? } else { data_layout };
        let groups = if self.chance(1, 4) { 2 } else { 1 };
        let (ig, og) = (self.range(1, 2), self.range(1, 3));
        let dt = self.choose(&[DataType::FLOAT32, DataType::FLOAT32, DataType::float(64), DataType::INT32])?;
        let spatial: Vec<Dim> = (0..2).map(|_| self.new_dim(sc)).collect();
        let mut canon = vec![Dim::lit(self.range(1, 2)), Dim::lit(ig * groups)];
        canon.extend(spatial.iter().cloned());
        let mut kdims = vec![Dim::lit(ig * groups), Dim::lit(og)];
        let mut out = vec![canon[0].clone(), Dim::lit(og * groups)];
        let (mut strides, mut dils, mut opads, mut before, mut after) = (vec![], vec![], vec![], vec![], vec![]);
        for x in &spatial {
            let (k, s, d) = (self.range(1, 3), self.range(1, 2), if self.chance(1, 4) { 2 } else { 1 });
            let op = self.range(0, s - 1);
            // An output of at least 1 for an input of 1: pads at most d*(k-1) + op.
            let reach = d * (k - 1) + op;
            let (b, a) = (self.range(0, reach.min(1)), self.range(0, (reach - reach.min(1)).min(1)));
            kdims.push(Dim::lit(k));
            out.push(transposed(x, s, k, d, op + 1 - s - b - a - d));
            strides.push(s);
            dils.push(d);
            opads.push(op);
            before.push(b);
            after.push(a);
        }
        let out = placed(out, out_layout, "NCHW");
        if !self.fits(&out) {
            return None;
        }
        let x = self.conv_operand(placed(canon, data_layout, "NCHW"), dt, sc)?;
        let w = self.conv_operand(placed(kdims, kernel_layout, "IOHW"), dt, sc)?;
        let mut attrs = no();
        attrs.insert("strides", ints(&strides));
        before.extend(after);
        attrs.insert("padding", ints(&before));
        attrs.insert("output_padding", ints(&opads));
        attrs.insert("dilation", ints(&dils));
        attrs.insert("groups", AttrValue::Int(groups));
        attrs.insert("data_layout", s(data_layout));
        attrs.insert("kernel_layout", s(kernel_layout));
        attrs.insert("out_layout", s(out_layout));
        Some((call(Expr::op(Op::Conv2dTranspose), vec![x, w], Vec::new(), attrs), Ty::tensor(out, dt)))
    }

    fn resize(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let layout: &str = self.choose(&["NCHW", "NCHW", "NHWC"])?;
        let (x, xd, dt) = self.pool_operand(sc, layout)?;
        let canon: Vec<Dim> = "NCHW".chars().map(|c| xd[layout.find(c).unwrap_or(0)].clone()).collect();
        let mut size = Vec::new();
        for axis in 0..2 {
            size.push(match self.pick(3) {
                0 => canon[2 + axis].clone(),
                _ => Dim::lit(self.range(1, 5)),
            });
        }
        // Integers: no cubic overshoot, no NaN (align_corners to a length of 1).
        let methods: &[&str] =
            if dt.is_float() { &["nearest_neighbor", "linear", "cubic"] } else { &["nearest_neighbor", "linear"] };
        let method = self.choose(methods)?;
        let mut modes =
            vec!["half_pixel", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn", "tf_crop_and_resize"];
        if size.iter().all(|d| d.as_lit().is_none_or(|v| v > 1)) {
            modes.push("align_corners");
        }
        let mode = self.choose(&modes)?;
        let mut attrs = no();
        attrs.insert("layout", s(layout));
        attrs.insert("method", s(method));
        attrs.insert("coordinate_transformation_mode", s(mode));
        if method == "nearest_neighbor" {
            let r: &str = self.choose(&["round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", ""])?;
            attrs.insert("rounding_method", s(r));
        }
        if method == "cubic" {
            attrs.insert("cubic_alpha", AttrValue::Float(FloatLit(self.choose(&[-0.75, -0.5])?)));
            attrs.insert("cubic_exclude", AttrValue::Int(self.range(0, 1)));
        }
        if mode == "tf_crop_and_resize" {
            let roi: Vec<AttrValue> =
                (0..4).map(|_| AttrValue::Float(FloatLit(self.range(-2, 6) as f64 / 4.0))).collect();
            attrs.insert("roi", AttrValue::List(roi));
            attrs.insert("extrapolation_value", AttrValue::Float(FloatLit(self.range(-4, 4) as f64)));
        }
        let out_dt = if dt.is_float() && self.chance(1, 4) {
            let d = self.choose(&[DataType::FLOAT32, DataType::float(64)])?;
            attrs.insert("out_dtype", s(&d.to_string()));
            d
        } else {
            dt
        };
        let out = placed(vec![canon[0].clone(), canon[1].clone(), size[0].clone(), size[1].clone()], layout, "NCHW");
        if !self.fits(&out) {
            return None;
        }
        let size_expr = super::ty::shape_expr(&size);
        Some((call(Expr::op(Op::Resize2d), vec![x, size_expr], Vec::new(), attrs), Ty::tensor(out, out_dt)))
    }
}

/// A transposed convolution's output length as OP-nn.conv2d_transpose writes it:
/// `x * s + k * d + c` with the literal terms summed into `c`, a negative `c` subtracted.
fn transposed(x: &Dim, s: i64, k: i64, d: i64, c: i64) -> Dim {
    let int = PrimExpr::int;
    let mut constant = c + k * d;
    let hi = (x.hi - 1) * s + d * (k - 1) + c + d + s;
    let e = match x.as_lit() {
        Some(v) => {
            constant += v * s;
            int(constant)
        }
        None => {
            let term = dim_op(PrimBinOp::Mul, &x.e, &int(s));
            if constant < 0 {
                dim_op(PrimBinOp::Sub, &term, &int(-constant))
            } else {
                dim_op(PrimBinOp::Add, &term, &int(constant))
            }
        }
    };
    Dim { e, hi: hi.max(1) }.settled()
}
