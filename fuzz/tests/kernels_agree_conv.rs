//! The engine's convolution, pooling, padding and resizing kernels (`optimized/src/
//! kernels/{conv,conv_transpose,pool,resize}.rs`) agree with the oracle's on thousands
//! of random calls per operator:
//! random dtypes (all twelve), shapes (empty, ranks other than the layout's,
//! mismatched channels), layouts (every permutation, and invalid ones), attributes
//! (valid, out of range, i64 extremes, ill-kinded), values (NaN, ±inf, -0.0, integer
//! extremes), and broken argument lists. Agreement is the same error kind (a `Crash`
//! never agrees) or equal values: bit for bit, except float32/float64 convolutions of
//! finite operands, whose engine kernels may reassociate through a blocked GEMM and
//! must agree within F-8's tolerance widened by the operands' scale (as `kernels_agree_elementwise.rs` does
//! for `matmul`). Resource errors on either side are skipped.
//!
//! `KERNELS_AGREE_SEED` and `KERNELS_AGREE_CASES` (per operator) choose the cases.

mod agree;

use agree::{Rng, DTYPES};
use fuzz::convert::{from_oracle, to_oracle};
use optimized::Memory;
use oracle::engine::compare::{values_agree, Tolerance};
use oracle::eval::literal::{print_value, values_equal};
use oracle::eval::ops::eval_op_standalone;
use oracle::eval::{PrimScalar, Value};
use spec_model::grammar::{AttrValue, Attrs, DataType, FloatLit, NDArray, Scalar, TensorData};
use spec_model::ops::Op;
use spec_model::Span;
use std::rc::Rc;

const DEFAULT_SEED: u64 = 0x636f_6e76_706f_6f6c;
const DEFAULT_CASES: u64 = 3_000;

const EXTREMES: [i64; 5] = [i64::MIN, -1, 1 << 31, 1 << 40, i64::MAX];

/// A dtype: float32/float64 half the time (the GEMM path), any other otherwise.
fn dtype(rng: &mut Rng) -> DataType {
    if rng.pct(50) {
        rng.pick(&[DataType::float(32), DataType::float(64)])
    } else {
        rng.pick(&DTYPES)
    }
}

fn int_bounds(dtype: DataType) -> (i128, i128) {
    let bits = dtype.bits.min(64);
    if dtype.code == spec_model::grammar::TypeCode::Int {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// A value of `dtype`; `wild`: NaN, infinities, extremes now and then.
fn scalar(rng: &mut Rng, dtype: DataType, wild: bool) -> Scalar {
    if dtype.is_bool() {
        return Scalar::Bool(rng.pct(50));
    }
    if dtype.is_float() {
        return Scalar::Float(match rng.below(if wild { 14 } else { 10 }) {
            10 => f64::NAN,
            11 => f64::INFINITY,
            12 => -0.0,
            13 => 3e38,
            _ => rng.range(-64, 64) as f64 / 8.0,
        });
    }
    let (lo, hi) = int_bounds(dtype);
    Scalar::Int(if wild && rng.pct(20) { rng.pick(&[lo, hi]) } else { (rng.range(-5, 9) as i128).clamp(lo, hi) })
}

fn tensor(rng: &mut Rng, dtype: DataType, shape: Vec<u64>, wild: bool) -> Value {
    let n: u64 = if shape.contains(&0) { 0 } else { shape.iter().product() };
    if n == 0 {
        return Value::tensor(NDArray { dtype, shape, data: TensorData::empty(dtype).expect("storage") });
    }
    let values: Vec<Scalar> = (0..n).map(|_| scalar(rng, dtype, wild)).collect();
    Value::tensor(NDArray::from_scalars(dtype, shape, &values).expect("values of the dtype"))
}

fn ints(xs: &[i64]) -> AttrValue {
    AttrValue::List(xs.iter().map(|&x| AttrValue::Int(x)).collect())
}

/// Puts `v` at `name`, or (3%) something ill-kinded or out of range, or (2%) nothing.
fn set(rng: &mut Rng, attrs: &mut Attrs, name: &str, v: AttrValue) {
    let v = match rng.below(100) {
        0 => AttrValue::Str("1".into()),
        1 => AttrValue::Float(FloatLit(1.0)),
        2 => ints(&[rng.pick(&EXTREMES)]),
        3 | 4 => return,
        _ => v,
    };
    attrs.insert(name, v);
}

/// A permutation of `letters` (written in `layout`), or (5%) an invalid one.
fn layout(rng: &mut Rng, letters: &str) -> String {
    if rng.pct(5) {
        return rng.pick(&["NCHW16c", "NCH", "NNCW", "", "XYZW"]).to_string();
    }
    let mut cs: Vec<char> = letters.chars().collect();
    if rng.pct(50) {
        for i in (1..cs.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            cs.swap(i, j);
        }
    }
    cs.into_iter().collect()
}

/// `canon` dims (in `letters` order) placed by `layout` (any order when invalid).
fn place(canon: &[u64], layout: &str, letters: &str) -> Vec<u64> {
    let mut out = canon.to_vec();
    for (i, ch) in letters.chars().enumerate() {
        if let Some(p) = layout.find(ch).filter(|&p| p < out.len()) {
            out[p] = canon[i];
        }
    }
    out
}

fn small(rng: &mut Rng) -> u64 {
    match rng.below(10) {
        0 => 0,
        1..=2 => 1,
        _ => rng.range(2, 6) as u64,
    }
}

type Case = (Vec<Value>, Attrs);

fn gen_pad(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let rank = rng.below(4) as usize;
    let shape: Vec<u64> = (0..rank).map(|_| small(rng)).collect();
    let mut widths: Vec<i64> = (0..2 * rank).map(|_| rng.range(0, 3)).collect();
    if rng.pct(5) {
        widths.push(1);
    }
    if rng.pct(3) && !widths.is_empty() {
        widths[0] = rng.pick(&EXTREMES);
    }
    let mut attrs = Attrs::default();
    if !rng.pct(2) {
        attrs.insert("pad_width", ints(&widths));
    }
    let mode = rng.pick(&["constant", "reflect", "replicate", "circular", "edge"]);
    if rng.pct(80) {
        set(rng, &mut attrs, "pad_mode", AttrValue::Str(mode.into()));
    }
    if rng.pct(60) {
        let v = rng.pick(&[0.0, 1.5, -2.0, 7.0, f64::NAN, 1e300, -1.0, 300.0]);
        set(rng, &mut attrs, "pad_value", AttrValue::Float(FloatLit(v)));
    }
    let wild = rng.pct(30);
    (vec![tensor(rng, d, shape, wild)], attrs)
}

fn gen_conv(rng: &mut Rng, spatial: usize) -> Case {
    let (dl, kl) = if spatial == 1 { ("NCW", "OIW") } else { ("NCHW", "OIHW") };
    let d = dtype(rng);
    let groups = rng.pick(&[1u64, 1, 2, 3]);
    let (i, og) = (rng.range(0, 3) as u64, rng.range(1, 3) as u64);
    let mut c = i * groups;
    if rng.pct(5) {
        c += 1;
    }
    let mut canon_x = vec![small(rng).min(2), c];
    let mut canon_w = vec![og * groups, i];
    if rng.pct(3) {
        canon_w[0] += 1;
    }
    for _ in 0..spatial {
        canon_x.push(small(rng) + 1);
        let lo = if rng.pct(5) { 0 } else { 1 };
        canon_w.push(rng.range(lo, 3) as u64);
    }
    let (xl, wl) = (layout(rng, dl), layout(rng, kl));
    let mut xs = place(&canon_x, &xl, dl);
    let ws = place(&canon_w, &wl, kl);
    if rng.pct(3) {
        xs.push(1);
    }
    let mut attrs = Attrs::default();
    attrs.insert("data_layout", AttrValue::Str(xl));
    attrs.insert("kernel_layout", AttrValue::Str(wl));
    if rng.pct(30) {
        attrs.insert("out_layout", AttrValue::Str(layout(rng, dl)));
    }
    let per = |rng: &mut Rng, lo: i64, hi: i64| -> AttrValue {
        if rng.pct(30) {
            AttrValue::Int(rng.range(lo, hi))
        } else {
            ints(&(0..spatial).map(|_| rng.range(lo, hi)).collect::<Vec<_>>())
        }
    };
    let v = per(rng, 1, 2);
    set(rng, &mut attrs, "strides", v);
    let v = per(rng, 1, 2);
    set(rng, &mut attrs, "dilation", v);
    let pads: Vec<i64> = (0..rng.pick(&[1, 2, 2 * spatial])).map(|_| rng.range(0, 2)).collect();
    set(rng, &mut attrs, "padding", ints(&pads));
    {
        let v = AttrValue::Int(if rng.pct(3) { 0 } else { groups as i64 });
        set(rng, &mut attrs, "groups", v);
    }
    if rng.pct(20) {
        {
            let v = AttrValue::Str(dtype(rng).to_string());
            set(rng, &mut attrs, "out_dtype", v);
        }
    }
    let wild = rng.pct(20);
    let wd = if rng.pct(5) { rng.pick(&DTYPES) } else { d };
    (vec![tensor(rng, d, xs, wild), tensor(rng, wd, ws, wild)], attrs)
}

fn gen_pool(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let l = layout(rng, "NCHW");
    let canon = [small(rng).min(2), small(rng).min(3), small(rng) + 1, small(rng) + 1];
    let mut shape = place(&canon, &l, "NCHW");
    if rng.pct(3) {
        shape.pop();
    }
    let mut attrs = Attrs::default();
    attrs.insert("layout", AttrValue::Str(l));
    if rng.pct(25) {
        attrs.insert("out_layout", AttrValue::Str(layout(rng, "NCHW")));
    }
    {
        let v = ints(&[rng.range(1, 3), rng.range(1, 3)]);
        set(rng, &mut attrs, "pool_size", v);
    }
    {
        let v = ints(&[rng.range(1, 3), rng.range(1, 2)]);
        set(rng, &mut attrs, "strides", v);
    }
    {
        let v = ints(&[rng.range(1, 2), rng.range(1, 2)]);
        set(rng, &mut attrs, "dilation", v);
    }
    let pads: Vec<i64> = (0..rng.pick(&[1, 2, 4])).map(|_| rng.range(0, 2)).collect();
    set(rng, &mut attrs, "padding", ints(&pads));
    {
        let v = AttrValue::Bool(rng.pct(50));
        set(rng, &mut attrs, "ceil_mode", v);
    }
    {
        let v = AttrValue::Bool(rng.pct(50));
        set(rng, &mut attrs, "count_include_pad", v);
    }
    if rng.pct(2) {
        // A window of 2^31 - 1 taps over a huge padding: found by division, not a loop.
        attrs.insert("pool_size", ints(&[i32::MAX as i64, 1]));
        attrs.insert("padding", ints(&[1 << 30, 0, 1 << 30, 0]));
        attrs.insert("strides", ints(&[1 << 30, 1]));
        attrs.insert("dilation", ints(&[1, 1]));
    }
    let wild = rng.pct(30);
    (vec![tensor(rng, d, shape, wild)], attrs)
}

fn gen_adaptive(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let l = layout(rng, "NCHW");
    let canon = [small(rng).min(2), small(rng).min(3), small(rng), small(rng)];
    let shape = place(&canon, &l, "NCHW");
    let mut attrs = Attrs::default();
    attrs.insert("layout", AttrValue::Str(l));
    let size = match rng.below(4) {
        0 => None,
        1 => Some(AttrValue::Int(rng.range(0, 4))),
        2 => Some(ints(&[rng.range(1, 7), rng.range(0, 4)])),
        _ => Some(ints(&[rng.range(-1, 3), 2, 1])),
    };
    if let Some(v) = size {
        set(rng, &mut attrs, "output_size", v);
    }
    let wild = rng.pct(30);
    (vec![tensor(rng, d, shape, wild)], attrs)
}

fn gen_conv_transpose(rng: &mut Rng) -> Case {
    // float16 often: its kernel keeps the spec's order, which the bits then show.
    let d = if rng.pct(20) { DataType::float(16) } else { dtype(rng) };
    let groups = rng.pick(&[1u64, 1, 2, 3]);
    let (ig, og) = (rng.range(0, 3) as u64, rng.range(0, 3) as u64);
    let mut c = ig * groups;
    if rng.pct(5) {
        c += 1;
    }
    let canon_x = vec![small(rng).min(2), c, small(rng) + 1, small(rng) + 1];
    let mut canon_w = vec![ig * groups, og];
    if rng.pct(3) {
        canon_w[0] += 1;
    }
    for _ in 0..2 {
        let lo = if rng.pct(5) { 0 } else { 1 };
        canon_w.push(rng.range(lo, 3) as u64);
    }
    let (xl, wl) = (layout(rng, "NCHW"), layout(rng, "IOHW"));
    let mut xs = place(&canon_x, &xl, "NCHW");
    let ws = place(&canon_w, &wl, "IOHW");
    if rng.pct(3) {
        xs.pop();
    }
    let mut attrs = Attrs::default();
    attrs.insert("data_layout", AttrValue::Str(xl));
    attrs.insert("kernel_layout", AttrValue::Str(wl));
    if rng.pct(30) {
        attrs.insert("out_layout", AttrValue::Str(layout(rng, "NCHW")));
    }
    let strides = [rng.range(1, 3), rng.range(1, 3)];
    let v = if rng.pct(30) { AttrValue::Int(strides[0]) } else { ints(&strides) };
    set(rng, &mut attrs, "strides", v);
    let v = ints(&[rng.range(1, 3), rng.range(1, 2)]);
    set(rng, &mut attrs, "dilation", v);
    // Mostly below the stride; sometimes not (an error).
    let op = [rng.range(0, strides[0]) - i64::from(!rng.pct(10)), rng.range(0, strides[1] - 1)];
    let v = ints(&[op[0].max(0), op[1]]);
    set(rng, &mut attrs, "output_padding", v);
    let most = if rng.pct(80) { 1 } else { 2 };
    let pads: Vec<i64> = (0..rng.pick(&[1, 2, 4])).map(|_| rng.range(0, most)).collect();
    set(rng, &mut attrs, "padding", ints(&pads));
    let v = AttrValue::Int(if rng.pct(3) { 0 } else { groups as i64 });
    set(rng, &mut attrs, "groups", v);
    if rng.pct(20) {
        let v = AttrValue::Str(dtype(rng).to_string());
        set(rng, &mut attrs, "out_dtype", v);
    }
    let wild = rng.pct(20);
    let wd = if rng.pct(5) { rng.pick(&DTYPES) } else { d };
    if d.is_float() && rng.pct(40) {
        // Values whose sums round (sevenths): the order of the terms shows in the bits
        // where the kernel keeps the spec's order (float16, and any non-finite operand).
        let fine = |rng: &mut Rng, shape: Vec<u64>, dt: DataType| {
            let n: u64 = shape.iter().product();
            let v: Vec<Scalar> = (0..n)
                .map(|_| match rng.below(40) {
                    0 if wild => Scalar::Float(rng.pick(&[f64::INFINITY, f64::NAN, -f64::INFINITY])),
                    _ => Scalar::Float(rng.range(-300, 300) as f64 / 7.0),
                })
                .collect();
            Value::tensor(NDArray::from_scalars(dt, shape, &v).expect("floats"))
        };
        return (vec![fine(rng, xs, d), fine(rng, ws, d)], attrs);
    }
    (vec![tensor(rng, d, xs, wild), tensor(rng, wd, ws, wild)], attrs)
}

fn gen_resize(rng: &mut Rng) -> Case {
    // Floats mostly: an integer result is an error wherever a value is NaN or overshoots.
    let d = if rng.pct(60) {
        rng.pick(&[DataType::float(16), DataType::float(32), DataType::float(64)])
    } else {
        rng.pick(&DTYPES)
    };
    let l = layout(rng, "NCHW");
    let side = |rng: &mut Rng| if rng.pct(5) { 0 } else { small(rng).max(1) };
    let canon = [small(rng).min(2), small(rng).min(3), side(rng), side(rng)];
    let mut shape = place(&canon, &l, "NCHW");
    if rng.pct(3) {
        shape.pop();
    }
    let mut attrs = Attrs::default();
    attrs.insert("layout", AttrValue::Str(l));
    let method = if rng.pct(5) { "bilinear" } else { rng.pick(&["nearest_neighbor", "linear", "cubic", "Linear"]) };
    set(rng, &mut attrs, "method", AttrValue::Str(method.into()));
    let modes = [
        "half_pixel",
        "align_corners",
        "asymmetric",
        "pytorch_half_pixel",
        "tf_half_pixel_for_nn",
        "tf_crop_and_resize",
        "tf_crop_and_resize",
    ];
    let mode = if rng.pct(4) { "edge" } else { rng.pick(&modes) };
    set(rng, &mut attrs, "coordinate_transformation_mode", AttrValue::Str(mode.into()));
    if rng.pct(70) {
        let r = if rng.pct(5) {
            "nearest"
        } else {
            rng.pick(&["round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", ""])
        };
        set(rng, &mut attrs, "rounding_method", AttrValue::Str(r.into()));
    }
    if rng.pct(50) {
        let roi = match rng.below(20) {
            0..=4 => AttrValue::Float(FloatLit(rng.range(-4, 8) as f64 / 4.0)),
            5 => AttrValue::List(vec![AttrValue::Float(FloatLit(0.5)); 3]),
            _ => AttrValue::List(
                (0..4)
                    .map(|_| {
                        let v = rng.pick(&[0.0, 0.1, 0.25, 0.7, 1.0, 1.3, -0.4, f64::NAN, 1e30]);
                        AttrValue::Float(FloatLit(v))
                    })
                    .collect(),
            ),
        };
        set(rng, &mut attrs, "roi", roi);
    }
    if rng.pct(50) {
        let v = AttrValue::Float(FloatLit(rng.pick(&[-0.75, -0.5, -0.6, 0.0, 1.0])));
        set(rng, &mut attrs, "cubic_alpha", v);
    }
    if rng.pct(50) {
        let v = AttrValue::Int(rng.range(0, 2));
        set(rng, &mut attrs, "cubic_exclude", v);
    }
    if rng.pct(40) {
        let v = AttrValue::Float(FloatLit(rng.pick(&[0.0, -1.5, 7.0, 300.0, f64::NAN])));
        set(rng, &mut attrs, "extrapolation_value", v);
    }
    if rng.pct(20) {
        let v = AttrValue::Str(rng.pick(&DTYPES).to_string());
        set(rng, &mut attrs, "out_dtype", v);
    }
    let mut size: Vec<i64> = (0..2).map(|_| rng.pick(&[0, 1, 1, 2, 3, 5, 8])).collect();
    if rng.pct(3) {
        size[rng.below(2) as usize] = -1;
    }
    if rng.pct(3) {
        size.push(2);
    }
    if rng.pct(3) {
        // An integer upscale by 41 of a long row: TOPI divides integers there.
        shape = place(&[1, 1, 1, 411], "NCHW", "NCHW");
        size = vec![1, 411 * 41];
        attrs.insert("layout", AttrValue::Str("NCHW".into()));
        attrs.insert("method", AttrValue::Str("nearest_neighbor".into()));
        attrs.insert("coordinate_transformation_mode", AttrValue::Str("asymmetric".into()));
        attrs.insert("rounding_method", AttrValue::Str("floor".into()));
    }
    let wild = rng.pct(30);
    (vec![tensor(rng, d, shape, wild), Value::Shape(Rc::new(size))], attrs)
}

/// Sometimes breaks the argument list.
fn mangle(rng: &mut Rng, args: &mut Vec<Value>) {
    match rng.below(100) {
        0 => args.push(Value::Null),
        1 => {
            args.pop();
        }
        2 if !args.is_empty() => args[0] = Value::Prim(PrimScalar::Int(3, DataType::INT64)),
        3 if !args.is_empty() => args[0] = Value::Shape(Rc::new(vec![1, 2])),
        _ => {}
    }
}

/// The largest finite magnitude of a tensor's elements.
fn largest(v: &Value) -> f64 {
    match v {
        Value::Tensor(t) => {
            let t = t.borrow();
            (0..t.data.len())
                .map(|i| match t.data.get(i) {
                    Scalar::Float(f) => f.abs(),
                    Scalar::Int(i) => (i as f64).abs(),
                    Scalar::Bool(b) => b as u8 as f64,
                })
                .filter(|m| m.is_finite())
                .fold(0.0, f64::max)
        }
        _ => 0.0,
    }
}

/// Whether every element of a tensor is finite (anything else counts as finite).
fn all_finite(v: &Value) -> bool {
    match v {
        Value::Tensor(t) => {
            let t = t.borrow();
            (0..t.data.len()).all(|i| !matches!(t.data.get(i), Scalar::Float(f) if !f.is_finite()))
        }
        _ => true,
    }
}

fn elements(v: &Value) -> usize {
    match v {
        Value::Tensor(t) => t.borrow().data.len(),
        _ => 0,
    }
}

#[derive(Default)]
struct Tally {
    values: u64,
    errors: u64,
    skipped: u64,
    mismatches: Vec<String>,
}

fn compare(op: Op, args: &[Value], attrs: &Attrs, tally: &mut Tally, label: &str) {
    let memory = Memory::new(1 << 26);
    let ours: Vec<optimized::Value> = args.iter().map(|a| from_oracle(a, &memory).expect("converts")).collect();
    let reference = spec_model::limits::Budgets { memory: 1 << 26, ..spec_model::limits::Budgets::DEFAULT }
        .scope(|| eval_op_standalone(op, args, attrs, Span::SYNTHETIC));
    let engine = optimized::kernels::run_standalone(op, attrs, &ours, &memory).expect("a kernel");
    let problem = match (&reference, &engine) {
        (_, Err(e)) if e.kind.is_resource() => {
            tally.skipped += 1;
            None
        }
        (Err(e), _) if e.kind.is_resource() => {
            tally.skipped += 1;
            None
        }
        (Err(a), Err(b)) if a.kind.name() == b.kind.name() && b.kind != optimized::ErrorKind::Crash => {
            tally.errors += 1;
            None
        }
        (Ok(a), Ok(b)) => match to_oracle(b) {
            Some(b2) => {
                // Only float32/float64 results of finite operands may come from the GEMM.
                let gemm_dtype = matches!(a, Value::Tensor(t) if [32, 64].contains(&t.borrow().dtype.bits)
                    && t.borrow().dtype.is_float());
                let reassociates = matches!(op, Op::Conv1d | Op::Conv2d | Op::Conv2dTranspose)
                    && gemm_dtype
                    && args.iter().all(all_finite);
                let same = if reassociates {
                    let scale = largest(&args[0]) * args.get(1).map_or(1.0, largest);
                    let n = args.iter().map(elements).max().unwrap_or(1).max(elements(a));
                    values_agree(a, &b2, Tolerance { reduction: n.max(1) as f64 * (1.0 + scale) })
                } else {
                    values_equal(a, &b2, 0.0)
                };
                if same {
                    tally.values += 1;
                    None
                } else {
                    Some(format!("values differ:\n  oracle {}\n  engine {}", print_value(a), print_value(&b2)))
                }
            }
            None => Some("the engine's result does not convert".into()),
        },
        _ => Some(format!(
            "outcomes differ:\n  oracle {:?}\n  engine {:?}",
            reference.as_ref().map(|_| "value").map_err(|e| format!("{}: {}", e.kind.name(), e.message)),
            engine.as_ref().map(|_| "value").map_err(|e| format!("{}: {}", e.kind.name(), e.message))
        )),
    };
    if let Some(p) = problem {
        let shown: Vec<String> = args.iter().map(print_value).collect();
        tally.mismatches.push(format!("{label}: {} attrs {:?}\n  {p}", shown.join(", "), attrs.0));
    }
    drop(ours);
    drop(engine);
    assert_eq!(memory.live(), 0, "{label}: the engine leaked tensor bytes");
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn agree(op: Op, gen: &dyn Fn(&mut Rng) -> Case) {
    let seed = env_u64("KERNELS_AGREE_SEED", DEFAULT_SEED);
    let cases = env_u64("KERNELS_AGREE_CASES", DEFAULT_CASES);
    let mut tally = Tally::default();
    for i in 0..cases {
        let mut rng = Rng(seed ^ (op as u64).wrapping_mul(0x1000_0001) ^ i.wrapping_mul(0x9E37_79B9));
        let (mut args, attrs) = gen(&mut rng);
        mangle(&mut rng, &mut args);
        compare(op, &args, &attrs, &mut tally, &format!("{op} case {i} (KERNELS_AGREE_SEED={seed})"));
    }
    eprintln!(
        "{op}: {cases} cases: {} values, {} same errors, {} skipped, {} mismatches",
        tally.values,
        tally.errors,
        tally.skipped,
        tally.mismatches.len()
    );
    if !tally.mismatches.is_empty() {
        let shown: Vec<&str> = tally.mismatches.iter().take(3).map(|s| s.as_str()).collect();
        panic!("{} of {cases} cases of {op} disagree; the first:\n{}", tally.mismatches.len(), shown.join("\n\n"));
    }
    assert!(tally.values >= cases / 5 && tally.errors >= cases / 20, "{op}: too one-sided a sample");
}

#[test]
fn pad_agrees() {
    agree(Op::Pad, &gen_pad);
}

#[test]
fn conv2d_agrees() {
    agree(Op::Conv2d, &|r| gen_conv(r, 2));
}

#[test]
fn conv1d_agrees() {
    agree(Op::Conv1d, &|r| gen_conv(r, 1));
}

#[test]
fn max_pool2d_agrees() {
    agree(Op::MaxPool2d, &gen_pool);
}

#[test]
fn avg_pool2d_agrees() {
    agree(Op::AvgPool2d, &gen_pool);
}

#[test]
fn adaptive_avg_pool2d_agrees() {
    agree(Op::AdaptiveAvgPool2d, &gen_adaptive);
}

#[test]
fn conv2d_transpose_agrees() {
    agree(Op::Conv2dTranspose, &gen_conv_transpose);
}

#[test]
fn resize2d_agrees() {
    agree(Op::Resize2d, &gen_resize);
}

/// The transposed convolution's in-order path (float16 always takes it) gives the
/// oracle's bits on sums of sevenths, which round, so the order of the terms shows.
#[test]
fn conv2d_transpose_keeps_the_order_of_its_terms() {
    let mut rng = Rng(19);
    let f16 = DataType::float(16);
    let sevenths = |rng: &mut Rng, shape: Vec<u64>| {
        let n: u64 = shape.iter().product();
        let v: Vec<Scalar> = (0..n).map(|_| Scalar::Float(rng.range(-300, 300) as f64 / 7.0)).collect();
        Value::tensor(NDArray::from_scalars(f16, shape, &v).expect("floats"))
    };
    let (x, w) = (sevenths(&mut rng, vec![1, 3, 6, 5]), sevenths(&mut rng, vec![3, 2, 3, 3]));
    let mut tally = Tally::default();
    compare(Op::Conv2dTranspose, &[x.clone(), w.clone()], &Attrs::default(), &mut tally, "float16 sums");
    assert!(tally.mismatches.is_empty() && tally.values == 1, "{:?}", tally.mismatches);
}

/// The float GEMM path really reassociates (so the tolerance is needed) yet stays within
/// it on a long reduction, and a huge weight keeps the spec's order exactly.
#[test]
fn gemm_path_is_close_and_untamed_products_are_exact() {
    let mut rng = Rng(7);
    let x = tensor(&mut rng, DataType::float(32), vec![1, 64, 9, 9], false);
    let w = tensor(&mut rng, DataType::float(32), vec![8, 64, 3, 3], false);
    let mut tally = Tally::default();
    compare(Op::Conv2d, &[x.clone(), w], &Attrs::default(), &mut tally, "long reduction");
    assert!(tally.mismatches.is_empty(), "{:?}", tally.mismatches);
    let big = Value::tensor(
        NDArray::from_scalars(DataType::float(32), vec![1, 64, 3, 3], &[Scalar::Float(3e38); 576]).unwrap(),
    );
    let memory = Memory::new(1 << 26);
    let args = [x, big];
    let ours: Vec<optimized::Value> = args.iter().map(|a| from_oracle(a, &memory).unwrap()).collect();
    let o = eval_op_standalone(Op::Conv2d, &args, &Attrs::default(), Span::SYNTHETIC).unwrap();
    let e = optimized::kernels::run_standalone(Op::Conv2d, &Attrs::default(), &ours, &memory).unwrap().unwrap();
    assert!(values_equal(&o, &to_oracle(&e).unwrap(), 0.0), "an untamed product keeps the order");
}
