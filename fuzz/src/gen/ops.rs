//! Calls of every registered operator, with operands and attributes valid for it and
//! the result type its inference rule gives (`spec_model::ops`, OP-*).

use super::exprs::{call, constant_expr, dtype_attr, no};
use super::ty::{scalar_for, shape_expr, Dim, Ty, NUMERIC};
use super::{Gen, Scope};
use spec_model::grammar::{AttrValue, Attrs, DataType, Expr, ExprKind, PrimBinOp, PrimExpr, PrimExprKind, Scalar};
use spec_model::ops::{dim_op, Op};
use spec_model::Span;

const S: Span = Span::SYNTHETIC;

/// The operators that build values without tensor operands (allowed with `ops` off).
fn basic(op: Op) -> bool {
    matches!(op, Op::Zeros | Op::Ones | Op::Full | Op::ShapeOf | Op::NullValue)
}

fn attr(name: &str, v: AttrValue) -> Attrs {
    let mut a = Attrs::default();
    a.insert(name, v);
    a
}

fn ints(xs: &[i64]) -> AttrValue {
    AttrValue::List(xs.iter().map(|&x| AttrValue::Int(x)).collect())
}

/// NumPy broadcasting of two shapes, as OP-add's rule pairs dimensions.
fn broadcast(a: &[Dim], b: &[Dim]) -> Vec<Dim> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = (i + a.len()).checked_sub(n).map(|j| &a[j]);
            let y = (i + b.len()).checked_sub(n).map(|j| &b[j]);
            match (x, y) {
                (Some(x), Some(y)) if x.same(y) || y.as_lit() == Some(1) => x.clone(),
                (Some(_), Some(y)) => y.clone(),
                (Some(d), None) | (None, Some(d)) => d.clone(),
                (None, None) => Dim::lit(1),
            }
        })
        .collect()
}

impl<'a> Gen<'a, '_> {
    /// A call of a registered operator allowed here (chosen uniformly, so that every
    /// operator shows up), or `None` when the one chosen has no operands here.
    pub fn op_call(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        // Kernels for `call_tir` half again as often as one operator's share.
        if self.cfg.features.call_tir && self.chance(1, 64) {
            return self.call_tir(sc);
        }
        let f = &self.cfg.features;
        let ops: Vec<Op> = Op::ALL
            .iter()
            .copied()
            .filter(|op| op.def().pure || sc.impure_ok)
            .filter(|op| match op {
                Op::CallTir | Op::CallTirInplace | Op::CallTirWithGrad | Op::VmCallTirDyn => f.call_tir,
                Op::CallPacked | Op::CallPurePacked | Op::CallDpsPacked => f.packed,
                _ => f.ops || basic(*op),
            })
            .collect();
        let op = self.choose(&ops)?;
        self.op_call_of(op, sc)
    }

    /// A tensor operand from scope whose dtype satisfies `ok` and rank is at least
    /// `min_rank`, or a new one of dtype `default`.
    pub(super) fn operand(
        &mut self,
        sc: &Scope,
        ok: fn(DataType) -> bool,
        default: DataType,
        min_rank: usize,
    ) -> (Expr, Vec<Dim>, DataType) {
        let fit = sc.vars_where(|t| matches!(t.as_tensor(), Some((ds, d)) if ok(d) && ds.len() >= min_rank));
        if let Some((v, Ty::Tensor { dims, dtype })) = self.choose(&fit) {
            if self.chance(7, 8) {
                return (Expr::var(&v), dims, dtype);
            }
        }
        let rank = min_rank + self.pick(3);
        let mut dims = self.new_dims(sc, rank);
        while dims.len() < min_rank {
            dims.push(Dim::lit(1));
        }
        let e = self.expr_of(&Ty::tensor(dims.clone(), default), sc, 1);
        // Now and then a float operand is narrowed to float16 first, so that the float
        // operators also run on float16 (computed in float32, rounded once per element).
        let f16 = DataType::float(16);
        if default.is_float() && ok(f16) && self.chance(1, 12) {
            return (call(Expr::op(Op::Astype), vec![e], Vec::new(), dtype_attr("dtype", f16)), dims, f16);
        }
        (e, dims, default)
    }

    pub(super) fn fits(&self, dims: &[Dim]) -> bool {
        Ty::elems(dims) <= self.cfg.max_tensor_elems
    }

    /// A call of `op` with operands from `sc` (or new ones) and the type its rule gives;
    /// `None` when `op` has no operands here.
    fn op_call_of(&mut self, op: Op, sc: &Scope) -> Option<(Expr, Ty)> {
        let num = |d: DataType| !d.is_bool();
        let float = |d: DataType| d.is_float();
        let boolean = |d: DataType| d.is_bool();
        let any = |_: DataType| true;
        let this = op;
        let op = |args: Vec<Expr>, attrs: Attrs| call(Expr::op(this), args, Vec::new(), attrs);
        Some(match this {
            Op::Add
            | Op::Subtract
            | Op::Multiply
            | Op::Maximum
            | Op::Minimum
            | Op::Equal
            | Op::NotEqual
            | Op::Less
            | Op::LessEqual
            | Op::Greater
            | Op::GreaterEqual
            | Op::Divide
            | Op::FloorDivide
            | Op::Power
            | Op::LogicalAnd
            | Op::LogicalOr => {
                let risky = matches!(this, Op::Divide | Op::FloorDivide | Op::Power);
                let (ok, default): (fn(DataType) -> bool, DataType) = match this {
                    Op::LogicalAnd | Op::LogicalOr => (boolean, DataType::BOOL),
                    _ if risky && !self.chance(1, 8) => (float, DataType::FLOAT32),
                    // Bool arithmetic is defined too (`True ** False`, `True + True`), rarely written.
                    _ if self.chance(1, 10) => (any, DataType::FLOAT32),
                    _ => (num, DataType::FLOAT32),
                };
                let (a, ad, dt) = self.operand(sc, ok, default, 0);
                let bd: Vec<Dim> = match self.pick(5) {
                    0 => Vec::new(),
                    1 => ad.iter().map(|d| if self.chance(1, 2) { Dim::lit(1) } else { d.clone() }).collect(),
                    2 => ad[self.pick(ad.len() + 1).min(ad.len())..].to_vec(),
                    _ => ad.clone(),
                };
                let b = self.arg_of(&Ty::tensor(bd.clone(), dt), sc);
                let (args, out) = if self.chance(1, 2) {
                    (vec![a, b], broadcast(&ad, &bd))
                } else {
                    (vec![b, a], broadcast(&bd, &ad))
                };
                let compare = matches!(
                    this,
                    Op::Equal | Op::NotEqual | Op::Less | Op::LessEqual | Op::Greater | Op::GreaterEqual
                );
                (op(args, no()), Ty::tensor(out, if compare { DataType::BOOL } else { dt }))
            }
            Op::LogicalNot => {
                let (a, ad, _) = self.operand(sc, boolean, DataType::BOOL, 0);
                (op(vec![a], no()), Ty::tensor(ad, DataType::BOOL))
            }
            Op::Negative | Op::Abs | Op::Relu => {
                let (a, ad, dt) = self.operand(sc, num, DataType::INT32, 0);
                (op(vec![a], no()), Ty::tensor(ad, dt))
            }
            Op::Exp | Op::Log | Op::Sqrt | Op::Tanh | Op::Sigmoid => {
                let (a, ad, dt) = self.operand(sc, float, DataType::FLOAT32, 0);
                (op(vec![a], no()), Ty::tensor(ad, dt))
            }
            Op::Softmax => {
                let (a, ad, dt) = self.operand(sc, float, DataType::FLOAT32, 1);
                let r = ad.len() as i64;
                let attrs = if self.chance(1, 2) { attr("axis", AttrValue::Int(self.range(-r, r - 1))) } else { no() };
                (op(vec![a], attrs), Ty::tensor(ad, dt))
            }
            Op::Where => {
                let (x, xd, dt) = self.operand(sc, num, DataType::FLOAT32, 0);
                let c = self.arg_of(&Ty::tensor(xd.clone(), DataType::BOOL), sc);
                let y = self.arg_of(&Ty::tensor(xd.clone(), dt), sc);
                (op(vec![c, x, y], no()), Ty::tensor(xd, dt))
            }
            Op::Astype => {
                let (x, xd, dt) = self.operand(sc, any, DataType::INT32, 0);
                // Floats convert only to floats: NaN or a huge value has no integer.
                // The narrow dtypes (float16, int8, uint8) enter Relax programs only here.
                let to = if dt.is_float() {
                    self.choose(&[DataType::FLOAT32, DataType::float(64), DataType::float(16)])?
                } else {
                    self.choose(&[
                        DataType::FLOAT32,
                        DataType::INT32,
                        DataType::INT64,
                        DataType::BOOL,
                        DataType::float(16),
                        DataType::int(8),
                        DataType::uint(8),
                    ])?
                };
                (op(vec![x], dtype_attr("dtype", to)), Ty::tensor(xd, to))
            }
            Op::Erf
            | Op::Rsqrt
            | Op::Sin
            | Op::Cos
            | Op::Floor
            | Op::Ceil
            | Op::Round
            | Op::Sign
            | Op::Square
            | Op::IsNan
            | Op::IsInf
            | Op::Gelu
            | Op::GeluTanh
            | Op::Silu
            | Op::LeakyRelu
            | Op::Clip => return self.unary_math_call(this, sc),
            Op::Matmul => {
                let (x, xd, dt) = self.operand(sc, num, DataType::FLOAT32, 1);
                let k = xd[xd.len() - 1].clone();
                let yd = if self.chance(1, 3) {
                    vec![k]
                } else if self.cfg.large_tensors && self.chance(1, 3) {
                    // Wide enough (two 16-column blocks or more) for the product to split
                    // its columns across threads.
                    vec![k, Dim::lit(self.range(32, 80))]
                } else {
                    vec![k, self.new_dim(sc)]
                };
                let mut out: Vec<Dim> = if xd.len() >= 2 { xd[..xd.len() - 1].to_vec() } else { Vec::new() };
                if yd.len() == 2 {
                    out.push(yd[1].clone());
                }
                if !self.fits(&yd) || !self.fits(&out) {
                    return None;
                }
                let y = self.arg_of(&Ty::tensor(yd, dt), sc);
                let attrs = if self.chance(1, 4) { dtype_attr("out_dtype", dt) } else { no() };
                (op(vec![x, y], attrs), Ty::tensor(out, dt))
            }
            Op::Sum | Op::Mean | Op::Max | Op::Min => {
                let ok = if self.chance(1, 10) { any } else { num };
                let (x, xd, dt) = self.operand(sc, ok, DataType::FLOAT32, 0);
                let r = xd.len();
                let axes: Option<Vec<usize>> = match self.pick(3) {
                    _ if r == 0 => None,
                    0 => None,
                    1 => Some(vec![self.pick(r)]),
                    _ => Some((0..r).filter(|_| self.chance(1, 2)).collect()),
                };
                let keep = self.chance(1, 2);
                let mut attrs = no();
                match &axes {
                    Some(list) if list.len() == 1 && self.chance(1, 2) => attrs
                        .insert("axis", AttrValue::Int(list[0] as i64 - if self.chance(1, 2) { r as i64 } else { 0 })),
                    Some(list) => attrs.insert("axis", ints(&list.iter().map(|&i| i as i64).collect::<Vec<_>>())),
                    None if self.chance(1, 2) => attrs.insert("axis", AttrValue::None),
                    None => {}
                }
                if keep || self.chance(1, 2) {
                    attrs.insert("keepdims", AttrValue::Bool(keep));
                }
                let reduced = |i: usize| axes.as_ref().is_none_or(|l| l.contains(&i));
                let out = (0..r)
                    .filter_map(|i| match (reduced(i), keep) {
                        (false, _) => Some(xd[i].clone()),
                        (true, true) => Some(Dim::lit(1)),
                        (true, false) => None,
                    })
                    .collect();
                (op(vec![x], attrs), Ty::tensor(out, dt))
            }
            Op::Prod
            | Op::Argmax
            | Op::Argmin
            | Op::Variance
            | Op::Std
            | Op::Cumsum
            | Op::LogSoftmax
            | Op::LayerNorm
            | Op::RmsNorm
            | Op::GroupNorm
            | Op::BatchNorm
            | Op::Dropout => return self.statistics_call(this, sc),
            Op::Reshape => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 0);
                let count = xd
                    .iter()
                    .skip(1)
                    .fold(xd.first().cloned().unwrap_or(Dim::lit(1)), |acc, d| Dim::binary(PrimBinOp::Mul, &acc, d));
                let (shape, out): (Vec<PrimExpr>, Vec<Dim>) = match self.pick(4) {
                    0 => (vec![count.e.clone()], vec![count]),
                    1 => (vec![PrimExpr::int(-1)], vec![count]),
                    2 => {
                        let mut o = xd.clone();
                        o.insert(self.pick(xd.len() + 1), Dim::lit(1));
                        (o.iter().map(|d| d.e.clone()).collect(), o)
                    }
                    _ => {
                        let o: Vec<Dim> = xd.iter().rev().cloned().collect();
                        (o.iter().map(|d| d.e.clone()).collect(), o)
                    }
                };
                (op(vec![x, Expr::new(ExprKind::ShapeExpr(shape), S)], no()), Ty::tensor(out, dt))
            }
            Op::PermuteDims => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 1);
                let mut perm: Vec<usize> = (0..xd.len()).rev().collect();
                let attrs = if self.chance(1, 2) {
                    for i in (1..perm.len()).rev() {
                        let j = self.pick(i + 1);
                        perm.swap(i, j);
                    }
                    attr("axes", ints(&perm.iter().map(|&i| i as i64).collect::<Vec<_>>()))
                } else {
                    no()
                };
                (op(vec![x], attrs), Ty::tensor(perm.iter().map(|&i| xd[i].clone()).collect(), dt))
            }
            Op::BroadcastTo => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 0);
                let mut target: Vec<Dim> =
                    xd.iter().map(|d| if d.as_lit() == Some(1) { self.new_dim(sc) } else { d.clone() }).collect();
                if self.chance(1, 2) && target.len() < self.cfg.max_rank {
                    target.insert(0, self.new_dim(sc));
                }
                if !self.fits(&target) {
                    return None;
                }
                (op(vec![x, shape_expr(&target)], no()), Ty::tensor(target, dt))
            }
            Op::Concat => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 1);
                let axis = self.pick(xd.len());
                let mut parts = vec![x];
                let mut out = xd.clone();
                for _ in 0..1 + self.pick(2) {
                    let mut yd = xd.clone();
                    yd[axis] = self.new_dim(sc);
                    out[axis] =
                        Dim { e: dim_op(PrimBinOp::Add, &out[axis].e, &yd[axis].e), hi: out[axis].hi + yd[axis].hi }
                            .settled();
                    parts.push(self.arg_of(&Ty::tensor(yd, dt), sc));
                }
                if !self.fits(&out) {
                    return None;
                }
                let tuple = Expr::new(ExprKind::Tuple(parts), S);
                let attrs =
                    if axis == 0 && self.chance(1, 2) { no() } else { attr("axis", AttrValue::Int(axis as i64)) };
                (op(vec![tuple], attrs), Ty::tensor(out, dt))
            }
            Op::Split => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 1);
                let axis = self.pick(xd.len());
                let (spec, sizes): (AttrValue, Vec<i64>) = match xd[axis].as_lit() {
                    Some(d) if self.chance(1, 2) => {
                        // Parts of ceil(d / s), the last the rest: any s whose last part
                        // is not negative, divisors of d or not.
                        let seg = |s: i64| (d + s - 1) / s;
                        let counts: Vec<i64> = (1..=d.max(1)).filter(|&s| seg(s) * (s - 1) <= d).collect();
                        let s = self.choose(&counts)?;
                        let mut sizes = vec![seg(s); s as usize - 1];
                        sizes.push(d - seg(s) * (s - 1));
                        (AttrValue::Int(s), sizes)
                    }
                    Some(d) => {
                        let mut cuts: Vec<i64> = (1..d).filter(|_| self.chance(1, 2)).collect();
                        // Now and then an index at or past either end, negative, or out of
                        // order: Python's bounds clamp it, and a decreasing pair is empty.
                        if self.chance(1, 2) {
                            let odd = self.choose(&[0, 0, d, d + 2, -1, -d, -d - 3])?;
                            let at = self.pick(cuts.len() + 1);
                            cuts.insert(at, odd);
                        }
                        let clamp = |i: i64| if i < 0 { (d + i).max(0) } else { i.min(d) };
                        let mut sizes = Vec::new();
                        let mut lo = 0;
                        for b in cuts.iter().map(|&c| clamp(c)).chain(std::iter::once(d)) {
                            sizes.push((b - lo).max(0));
                            lo = b;
                        }
                        (ints(&cuts), sizes)
                    }
                    None => (AttrValue::Int(1), Vec::new()),
                };
                let mut attrs = attr("indices_or_sections", spec);
                attrs.insert("axis", AttrValue::Int(axis as i64));
                // One part is the operand itself (TVM 0.27), not a tuple.
                if sizes.len() <= 1 {
                    return Some((op(vec![x], attrs), Ty::tensor(xd.clone(), dt)));
                }
                let fields = sizes
                    .iter()
                    .map(|&n| {
                        let mut d = xd.clone();
                        d[axis] = Dim::lit(n);
                        Ty::tensor(d, dt)
                    })
                    .collect();
                (op(vec![x], attrs), Ty::Tuple(fields))
            }
            Op::StridedSlice => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 1);
                // Not a 0 dimension (a part `split` cut empty): there is no begin below it.
                let lits: Vec<usize> = (0..xd.len()).filter(|&i| xd[i].as_lit().is_some_and(|d| d >= 1)).collect();
                let axis = self.choose(&lits)?;
                let d = xd[axis].as_lit()?;
                let b = self.range(0, d - 1);
                let e = self.range(b + 1, d);
                let s = self.range(1, 2);
                let mut attrs = attr("axes", ints(&[axis as i64]));
                attrs.insert("begin", ints(&[b]));
                attrs.insert("end", ints(&[e]));
                if s != 1 || self.chance(1, 2) {
                    attrs.insert("strides", ints(&[s]));
                }
                // The bounds lie in [0, d]: TVM 0.27's promise holds, or is left out.
                if self.chance(1, 3) {
                    attrs.insert("assume_inbound", AttrValue::Bool(self.chance(1, 2)));
                }
                let mut out = xd.clone();
                out[axis] = Dim::lit((e - b + s - 1) / s);
                (op(vec![x], attrs), Ty::tensor(out, dt))
            }
            Op::Take => {
                let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 1);
                let axis = if self.chance(1, 4) { None } else { Some(self.pick(xd.len())) };
                // Indices stay within the dimension's guaranteed lower bound (1), or its
                // value when literal; rarely one past it (an out-of-range error).
                let limit = match axis {
                    Some(a) => xd[a].as_lit().unwrap_or(1),
                    None => xd.iter().map(|d| d.as_lit().unwrap_or(1)).product(),
                };
                let n = self.pick(3) as u64 + 1;
                let idx_shape: Vec<u64> = if self.chance(1, 4) { Vec::new() } else { vec![n] };
                let count: u64 = idx_shape.iter().product();
                let idx_dt = if self.chance(1, 2) { DataType::INT64 } else { DataType::INT32 };
                let bad = self.chance(1, 32);
                let values: Vec<Scalar> = (0..count)
                    .map(|_| Scalar::Int(if bad { limit as i128 } else { self.range(0, limit - 1) as i128 }))
                    .collect();
                let idx = constant_expr(idx_dt, &idx_shape, &values);
                let idx_dims: Vec<Dim> = idx_shape.iter().map(|&k| Dim::lit(k as i64)).collect();
                let (out, attrs) = match axis {
                    None => (idx_dims, no()),
                    Some(a) => {
                        let mut o = xd[..a].to_vec();
                        o.extend(idx_dims);
                        o.extend(xd[a + 1..].iter().cloned());
                        (o, attr("axis", AttrValue::Int(a as i64)))
                    }
                };
                (op(vec![x, idx], attrs), Ty::tensor(out, dt))
            }
            Op::Sort | Op::Argsort | Op::Topk => return self.sorting_call(this, sc),
            Op::GatherElements | Op::ScatterElements => return self.index_call(this, sc),
            Op::ZerosLike
            | Op::OnesLike
            | Op::FullLike
            | Op::Squeeze
            | Op::ExpandDims
            | Op::Flatten
            | Op::Flip
            | Op::Tril
            | Op::Triu
            | Op::Tile
            | Op::Repeat
            | Op::CollapseSumLike => return self.manipulate_dims_call(this, sc),
            Op::LayoutTransform => return self.layout_transform_call(sc),
            Op::Zeros | Op::Ones => {
                let dtype = self.choose(&[DataType::FLOAT32, DataType::INT32, DataType::INT64, DataType::BOOL])?;
                let shapes = sc.vars_where(|t| matches!(t, Ty::Shape(ds) if self.fits(ds)));
                let (shape, dims) = match self.choose(&shapes) {
                    Some((v, Ty::Shape(ds))) if self.chance(1, 3) => (Expr::var(&v), ds),
                    _ => {
                        let rank = self.pick(4);
                        let ds = self.new_dims(sc, rank);
                        (shape_expr(&ds), ds)
                    }
                };
                (op(vec![shape], dtype_attr("dtype", dtype)), Ty::tensor(dims, dtype))
            }
            Op::Full => {
                let rank = self.pick(4);
                let dims = self.new_dims(sc, rank);
                let fill_dt = self.choose(&NUMERIC)?;
                let fill = constant_expr(fill_dt, &[], &[scalar_for(fill_dt, self.range(-4, 4))]);
                let (attrs, dt) = if self.chance(1, 2) {
                    let to = self.choose(&NUMERIC)?;
                    (dtype_attr("dtype", to), to)
                } else {
                    (no(), fill_dt)
                };
                (op(vec![shape_expr(&dims), fill], attrs), Ty::tensor(dims, dt))
            }
            Op::Arange => {
                let start = self.range(-3, 3);
                let step = self.choose(&[1i64, 2, -1])?;
                let span = self.range(1, 6);
                let end = start + span * step.signum();
                let len = (span + step.abs() - 1) / step.abs();
                let prim = |v: i64| {
                    Expr::new(
                        ExprKind::PrimValue(PrimExpr::new(
                            PrimExprKind::IntImm { value: v, dtype: DataType::INT64 },
                            S,
                        )),
                        S,
                    )
                };
                let (attrs, dt) = match self.pick(3) {
                    0 => (no(), DataType::INT64),
                    1 => (dtype_attr("dtype", DataType::INT32), DataType::INT32),
                    _ => (dtype_attr("dtype", DataType::FLOAT32), DataType::FLOAT32),
                };
                (op(vec![prim(start), prim(end), prim(step)], attrs), Ty::tensor(vec![Dim::lit(len)], dt))
            }
            Op::Einsum | Op::Attention | Op::OneHot => return self.linalg_call(this, sc),
            Op::Pad
            | Op::Conv2d
            | Op::MaxPool2d
            | Op::AvgPool2d
            | Op::AdaptiveAvgPool2d
            | Op::Conv1d
            | Op::Conv2dTranspose
            | Op::Resize2d => return self.conv_call(this, sc),
            Op::ShapeOf => {
                let (x, xd, _) = self.operand(sc, any, DataType::FLOAT32, 0);
                (op(vec![x], no()), Ty::Shape(xd))
            }
            Op::NullValue => (op(Vec::new(), no()), Ty::Object),
            // The gradient markers pass any value through; the checkpoints take a variable.
            Op::NoGrad | Op::StartCheckpoint | Op::EndCheckpoint => {
                let vals = sc.vars_where(|t| !matches!(t, Ty::Func { .. }));
                match self.choose(&vals) {
                    Some((v, t)) => (op(vec![Expr::var(&v)], no()), t),
                    None if this == Op::NoGrad => {
                        let (x, xd, dt) = self.operand(sc, any, DataType::FLOAT32, 0);
                        (op(vec![x], no()), Ty::tensor(xd, dt))
                    }
                    None => return None,
                }
            }
            Op::Print => {
                let vals = sc.vars_where(|t| !matches!(t, Ty::Func { .. }));
                let n = 1 + self.pick(2);
                let args: Vec<Expr> = (0..n).filter_map(|_| self.choose(&vals).map(|(v, _)| Expr::var(&v))).collect();
                // An empty format is no format (the arguments joined by spaces).
                let attrs = if self.chance(1, 2) {
                    let format = match self.pick(3) {
                        0 => String::new(),
                        1 => format!("values: {}.", vec!["{}"; args.len()].join(", ")),
                        _ => vec!["{}"; args.len()].join(" | "),
                    };
                    attr("format", AttrValue::Str(format))
                } else {
                    no()
                };
                (op(args, attrs), Ty::Tuple(Vec::new()))
            }
            Op::AssertOp => {
                let cond = if self.chance(1, 6) { self.cond(sc) } else { self.constant(DataType::BOOL, &[], 1) };
                let attrs = if self.chance(1, 2) { attr("format", AttrValue::Str("checked".into())) } else { no() };
                (op(vec![cond], attrs), Ty::Tuple(Vec::new()))
            }
            Op::Cast => {
                let vals = sc.vars_where(|t| !matches!(t, Ty::Func { .. }));
                let (v, t) = self.choose(&vals)?;
                let e = call(Expr::op(Op::Cast), vec![Expr::var(&v)], vec![t.to_sinfo()], no());
                (e, t)
            }
            Op::CallTir => return self.call_tir(sc),
            Op::CallTirInplace | Op::CallTirWithGrad => return self.call_tir_variant(this, sc),
            Op::CallPacked | Op::CallPurePacked | Op::CallDpsPacked => return self.packed(this, sc),
            Op::BuiltinAllocTensor
            | Op::MemoryAllocStorage
            | Op::MemoryAllocTensor
            | Op::MemoryKillStorage
            | Op::MemoryKillTensor
            | Op::VmAllocStorage
            | Op::VmAllocTensor
            | Op::VmKillObject
            | Op::VmCallTirDyn
            | Op::CallBuiltinWithCtx => return self.lowered_call(this, sc),
        })
    }

    /// Calls of the oracle's packed functions (README: the packed registry).
    fn packed(&mut self, which: Op, sc: &Scope) -> Option<(Expr, Ty)> {
        let extern_ = |s: &str| Expr::new(ExprKind::ExternFunc { global_symbol: s.into() }, S);
        let (x, xd, dt) = self.operand(sc, |d| !d.is_bool(), DataType::FLOAT32, 0);
        let ty = Ty::tensor(xd, dt);
        Some(match which {
            Op::CallPacked => match self.pick(3) {
                // Mutates its argument in place: every alias sees it.
                0 => (call(extern_("oracle.add_one_inplace"), vec![x], vec![ty.to_sinfo()], no()), ty),
                1 => (
                    call(extern_("oracle.print"), vec![x], vec![Ty::Tuple(Vec::new()).to_sinfo()], no()),
                    Ty::Tuple(Vec::new()),
                ),
                _ => (call(extern_("oracle.identity"), vec![x], vec![ty.to_sinfo()], no()), ty),
            },
            Op::CallPurePacked => {
                let f = if self.chance(1, 2) { "oracle.copy" } else { "oracle.identity" };
                (call(Expr::op(Op::CallPurePacked), vec![extern_(f), x], vec![ty.to_sinfo()], no()), ty)
            }
            _ => {
                let args = Expr::new(ExprKind::Tuple(vec![x]), S);
                (
                    call(
                        Expr::op(Op::CallDpsPacked),
                        vec![extern_("oracle.copy_into"), args],
                        vec![ty.to_sinfo()],
                        no(),
                    ),
                    ty,
                )
            }
        })
    }
}
