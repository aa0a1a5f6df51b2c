//! Smaller literals: the `run:` call's arguments (fewer elements along the dimensions
//! the entry function leaves symbolic, simpler element values) and the program's own
//! constants (simpler element values).

use spec_model::grammar::{
    DataType, Expr, ExprKind, FloatLit, IRModule, NDArray, PrimExpr, PrimExprKind, Scalar, StructInfo, StructInfoKind,
};
use std::rc::Rc;

/// Elements up to which each element is simplified one at a time.
const PER_ELEMENT_LIMIT: usize = 64;

fn is_const(p: &PrimExpr) -> bool {
    matches!(*p.kind, PrimExprKind::IntImm { .. })
}

/// May dimension `axis` of a tensor argument change, given the parameter's annotation?
/// Only where the annotation does not fix it (a symbolic dimension, or no shape).
fn tensor_axis_free(ann: Option<&StructInfo>, axis: usize) -> bool {
    let Some(ann) = ann else { return true };
    match &*ann.kind {
        StructInfoKind::Tensor { shape: Some(shape), .. } => match &shape.kind {
            ExprKind::ShapeExpr(dims) => dims.get(axis).is_some_and(|d| !is_const(d)),
            _ => true,
        },
        StructInfoKind::Tensor { shape: None, .. } | StructInfoKind::Object => true,
        _ => false,
    }
}

fn shape_dim_free(ann: Option<&StructInfo>, j: usize) -> bool {
    let Some(ann) = ann else { return true };
    match &*ann.kind {
        StructInfoKind::Shape { values: Some(vals), .. } => vals.get(j).is_some_and(|d| !is_const(d)),
        StructInfoKind::Shape { values: None, .. } | StructInfoKind::Object => true,
        _ => false,
    }
}

fn tuple_field(ann: Option<&StructInfo>, j: usize) -> Option<&StructInfo> {
    match &*ann?.kind {
        StructInfoKind::Tuple { fields } => fields.get(j),
        _ => None,
    }
}

fn scalars(a: &NDArray) -> Vec<Scalar> {
    (0..a.data.len()).map(|i| a.data.get(i)).collect()
}

fn rebuild(a: &NDArray, shape: Vec<u64>, values: &[Scalar]) -> Option<NDArray> {
    NDArray::from_scalars(a.dtype, shape, values).ok().filter(|b| b != a)
}

/// The prefix `0..len` of `a` along `axis`.
fn slice_prefix(a: &NDArray, axis: usize, len: u64) -> Option<NDArray> {
    let inner: u64 = a.shape[axis + 1..].iter().product();
    let outer: u64 = a.shape[..axis].iter().product();
    let old = a.shape[axis];
    let mut values = Vec::new();
    for o in 0..outer {
        for k in 0..len {
            for i in 0..inner {
                values.push(a.data.get(((o * old + k) * inner + i) as usize));
            }
        }
    }
    let mut shape = a.shape.clone();
    shape[axis] = len;
    rebuild(a, shape, &values)
}

/// Simpler element values for `a`: all zeros, all ones, floats truncated, then (for
/// small arrays) one element at a time set to 0 or 1.
pub fn simpler_values(a: &NDArray) -> Vec<NDArray> {
    let vals = scalars(a);
    let mut out = Vec::new();
    let fill = |s: Scalar| vec![s; vals.len()];
    out.extend(rebuild(a, a.shape.clone(), &fill(Scalar::Int(0))));
    out.extend(rebuild(a, a.shape.clone(), &fill(Scalar::Int(1))));
    let truncated: Vec<Scalar> = vals
        .iter()
        .map(|s| match s {
            Scalar::Float(f) if f.is_finite() => Scalar::Float(f.trunc()),
            other => *other,
        })
        .collect();
    out.extend(rebuild(a, a.shape.clone(), &truncated));
    if vals.len() <= PER_ELEMENT_LIMIT {
        for i in 0..vals.len() {
            for s in [Scalar::Int(0), Scalar::Int(1)] {
                let mut v = vals.clone();
                v[i] = s;
                out.extend(rebuild(a, a.shape.clone(), &v));
            }
        }
    }
    out.dedup();
    out
}

fn constant(a: NDArray, like: &Expr) -> Expr {
    Expr::new(ExprKind::Constant(Rc::new(a)), like.span)
}

fn int_imm(value: i64, dtype: DataType, like: &PrimExpr) -> PrimExpr {
    PrimExpr::new(PrimExprKind::IntImm { value, dtype }, like.span)
}

/// Smaller versions of the literal argument `e` of a parameter annotated `ann`.
pub fn shrink_literal(e: &Expr, ann: Option<&StructInfo>) -> Vec<Expr> {
    let mut out = Vec::new();
    match &e.kind {
        ExprKind::Constant(a) => {
            for axis in 0..a.shape.len() {
                let d = a.shape[axis];
                if d > 1 && tensor_axis_free(ann, axis) {
                    let mut lens = vec![1, d / 2];
                    lens.dedup();
                    out.extend(lens.into_iter().filter_map(|l| slice_prefix(a, axis, l)).map(|b| constant(b, e)));
                }
            }
            out.extend(simpler_values(a).into_iter().map(|b| constant(b, e)));
        }
        ExprKind::ShapeExpr(dims) => {
            for (j, d) in dims.iter().enumerate() {
                let PrimExprKind::IntImm { value, dtype } = &*d.kind else { continue };
                if *value <= 0 || !shape_dim_free(ann, j) {
                    continue;
                }
                let mut smaller = vec![0, 1, value / 2];
                smaller.retain(|v| v < value);
                smaller.dedup();
                for v in smaller {
                    let mut ds = dims.clone();
                    ds[j] = int_imm(v, *dtype, d);
                    out.push(Expr::new(ExprKind::ShapeExpr(ds), e.span));
                }
            }
        }
        ExprKind::PrimValue(p) => {
            let kinds: Vec<PrimExprKind> = match &*p.kind {
                PrimExprKind::IntImm { value, dtype } => [0, 1]
                    .into_iter()
                    .filter(|v| v != value)
                    .map(|value| PrimExprKind::IntImm { value, dtype: *dtype })
                    .collect(),
                PrimExprKind::FloatImm { value, dtype } => [0.0, 1.0]
                    .into_iter()
                    .map(FloatLit)
                    .filter(|v| v != value)
                    .map(|value| PrimExprKind::FloatImm { value, dtype: *dtype })
                    .collect(),
                _ => Vec::new(),
            };
            for k in kinds {
                out.push(Expr::new(ExprKind::PrimValue(PrimExpr::new(k, p.span)), e.span));
            }
        }
        ExprKind::Tuple(fields) => {
            for (j, f) in fields.iter().enumerate() {
                for c in shrink_literal(f, tuple_field(ann, j)) {
                    let mut fs = fields.clone();
                    fs[j] = c;
                    out.push(Expr::new(ExprKind::Tuple(fs), e.span));
                }
            }
        }
        _ => {}
    }
    out
}

fn literal_weight(e: &Expr) -> f64 {
    let mut w = 0.0;
    spec_model::grammar::visit::walk_expr(e, &mut |x| match &x.kind {
        ExprKind::Constant(a) => {
            w += a.data.len() as f64;
            for s in scalars(a) {
                w += match s {
                    Scalar::Bool(b) => f64::from(u8::from(b)),
                    Scalar::Int(i) => (i.unsigned_abs() as f64).min(1e9),
                    Scalar::Float(f) if f.is_finite() => f.abs().min(1e9) + if f.fract() == 0.0 { 0.0 } else { 0.5 },
                    Scalar::Float(_) => 2.0,
                };
            }
        }
        ExprKind::ShapeExpr(ds) => {
            for d in ds {
                if let PrimExprKind::IntImm { value, .. } = &*d.kind {
                    w += (value.unsigned_abs() as f64).min(1e9);
                }
            }
        }
        ExprKind::PrimValue(p) => match &*p.kind {
            PrimExprKind::IntImm { value, .. } => w += (value.unsigned_abs() as f64).min(1e9),
            PrimExprKind::FloatImm { value, .. } => w += value.0.abs().min(1e9),
            _ => {}
        },
        _ => {}
    });
    w
}

/// How heavy the literals of a candidate are (elements and magnitudes): the tie-break
/// between candidates of one printed length.
pub fn weight(m: &IRModule, call: Option<&Expr>) -> f64 {
    let mut w = call.map_or(0.0, literal_weight);
    for (_, f) in m.relax_functions() {
        w += literal_weight(&f.body);
    }
    w
}
