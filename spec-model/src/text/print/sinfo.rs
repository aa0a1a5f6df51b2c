//! StructInfo, shape expressions, attributes and constants.

use super::relax::RelaxPrinter;
use super::scalar::{Scalar, ScalarPrinter, View, P_ATOM};
use super::{call, float_lit, list, string_lit, tuple, txt, Doc};
use crate::grammar::{
    AttrValue, DataType, ExprKind, NDArray, PrimExpr, PrimExprKind, StructInfo, StructInfoKind, TensorData,
};
use crate::text::elab::prim::{DEFAULT_FLOAT, RELAX_INT};
use crate::text::ndim_of_shape_var;

impl Scalar for PrimExpr {
    fn view(&self) -> View<'_, Self> {
        match &*self.kind {
            PrimExprKind::Var(v) => View::Var(v),
            PrimExprKind::IntImm { value, dtype } => View::Int(*value, *dtype),
            PrimExprKind::FloatImm { value, dtype } => View::Float(value.0, *dtype),
            PrimExprKind::Binary { op, a, b } => View::Bin(*op, a, b),
            PrimExprKind::Not(a) => View::Not(a),
            PrimExprKind::Select { cond, then_value, else_value } => View::Select(cond, then_value, else_value),
            PrimExprKind::Cast { dtype, value } => View::Cast(*dtype, value),
        }
    }
    fn dtype(&self) -> DataType {
        PrimExpr::dtype(self)
    }
}

impl RelaxPrinter {
    pub(crate) fn prim(&self, p: &PrimExpr) -> Doc {
        let name = |v: &crate::grammar::PrimVar| self.names.borrow_mut().prim(v);
        let other = |_: &PrimExpr, _: &ScalarPrinter<PrimExpr>| (txt("<?>"), P_ATOM);
        let sp = ScalarPrinter { int_default: RELAX_INT, float_default: DEFAULT_FLOAT, var_name: &name, other: &other };
        sp.print(p).0
    }

    /// A dimension; in a signature, one that mentions a shape variable is quoted
    /// (`"n"`, `"n * 2"`), which declares the variable if it is not yet in scope.
    fn dim(&self, p: &PrimExpr, sig: bool) -> Doc {
        let doc = self.prim(p);
        if sig && !p.vars().is_empty() {
            let text = super::render(doc, usize::MAX).trim_end().replace('"', "'");
            txt(format!("\"{text}\""))
        } else {
            doc
        }
    }

    fn dims(&self, ds: &[PrimExpr], sig: bool) -> Vec<Doc> {
        ds.iter().map(|d| self.dim(d, sig)).collect()
    }

    /// StructInfo in `.rx` syntax; `sig` marks a function signature (quoted dimensions).
    pub(crate) fn sinfo(&self, s: &StructInfo, sig: bool) -> Doc {
        match &*s.kind {
            StructInfoKind::Object => txt("R.Object"),
            StructInfoKind::Prim { dtype } => call("R.Prim", vec![txt(string_lit(&dtype.to_string()))]),
            StructInfoKind::Shape { values: Some(vs), ndim } => {
                let mut args = vec![list(self.dims(vs, sig))];
                if *ndim != vs.len() as i64 {
                    args.push(txt(format!("ndim={ndim}")));
                }
                call("R.Shape", args)
            }
            StructInfoKind::Shape { values: None, ndim } => {
                if *ndim == -1 {
                    txt("R.Shape")
                } else {
                    call("R.Shape", vec![txt(format!("ndim={ndim}"))])
                }
            }
            StructInfoKind::Tensor { shape, dtype, ndim } => {
                let mut args = Vec::new();
                let inferred = match shape.as_ref().map(|e| &e.kind) {
                    None => -1,
                    Some(ExprKind::ShapeExpr(ds)) => {
                        args.push(tuple(self.dims(ds, sig)));
                        ds.len() as i64
                    }
                    Some(ExprKind::Var(v)) => {
                        args.push(txt(self.names.borrow_mut().var(v)));
                        ndim_of_shape_var(v)
                    }
                    Some(_) => {
                        args.push(txt("<shape: not a ShapeExpr or Var>"));
                        -1
                    }
                };
                if *ndim != inferred {
                    args.push(txt(format!("ndim={ndim}")));
                }
                if !dtype.is_void() {
                    args.push(txt(format!("dtype={}", string_lit(&dtype.to_string()))));
                }
                if args.is_empty() {
                    txt("R.Tensor")
                } else {
                    call("R.Tensor", args)
                }
            }
            StructInfoKind::Tuple { fields } => call("R.Tuple", fields.iter().map(|f| self.sinfo(f, sig)).collect()),
            StructInfoKind::Func { params, ret, derive_func, purity } => {
                let mut args = Vec::new();
                match params {
                    Some(ps) => {
                        args.push(tuple(ps.iter().map(|p| self.sinfo(p, sig)).collect()));
                        args.push(self.sinfo(ret, sig));
                    }
                    None => args.push(txt("ret=").append(self.sinfo(ret, sig))),
                }
                if *purity != params.is_some() {
                    args.push(txt(format!("purity={}", if *purity { "True" } else { "False" })));
                }
                if let Some(d) = derive_func {
                    args.push(txt(format!("derive_func={}", string_lit(d.name()))));
                }
                call("R.Callable", args)
            }
        }
    }
}

pub(crate) fn attr_value(v: &AttrValue) -> Doc {
    match v {
        AttrValue::None => txt("None"),
        AttrValue::Bool(b) => txt(if *b { "True" } else { "False" }),
        AttrValue::Int(i) => txt(i.to_string()),
        AttrValue::Float(f) => txt(float_lit(f.0)),
        AttrValue::Str(s) => txt(string_lit(s)),
        AttrValue::List(items) => list(items.iter().map(attr_value).collect()),
        AttrValue::Dict(d) => attr_dict(d),
    }
}

pub(crate) fn attr_dict(d: &std::collections::BTreeMap<String, AttrValue>) -> Doc {
    super::bracketed(
        txt("{"),
        d.iter().map(|(k, v)| txt(format!("{}: ", string_lit(k))).append(attr_value(v))).collect(),
        "}",
    )
}

/// The shortest decimal that reads back (through f64) as exactly `bits` of a
/// 16- or 32-bit float.
fn shortest(value: f64, exact: impl Fn(f64) -> bool) -> Option<String> {
    (0..17).map(|p| format!("{value:.p$e}")).find(|t| t.parse::<f64>().is_ok_and(&exact)).map(|t| {
        // Prefer the plain spelling when it says the same.
        let plain = format!("{}", t.parse::<f64>().unwrap_or(value));
        let plain = if plain.contains(['.', 'e', 'i', 'N']) { plain } else { format!("{plain}.0") };
        if plain.parse::<f64>().is_ok_and(&exact) && plain.len() <= t.len() + 2 {
            plain
        } else {
            t
        }
    })
}

/// Element `i` as text that reads back as exactly the stored value.
fn element(data: &TensorData, i: usize) -> String {
    if let TensorData::F16(v) = data {
        let x = v[i];
        if x.is_finite() {
            // The exact value (65504.0) unless a shorter decimal reads back the same (0.1).
            let exact = format!("{:?}", x.to_f32());
            if let Some(t) = shortest(x.to_f64(), |p| half::f16::from_f64(p).to_bits() == x.to_bits()) {
                return if t.len() < exact.len() { t } else { exact };
            }
        }
    }
    let text = data.element_text(i);
    let exact = |parsed: f64| -> bool {
        match data {
            TensorData::F16(v) => half::f16::from_f64(parsed).to_bits() == v[i].to_bits(),
            TensorData::F32(v) => (parsed as f32).to_bits() == v[i].to_bits(),
            _ => true,
        }
    };
    match data {
        TensorData::F16(_) | TensorData::F32(_) | TensorData::F64(_) => match text.as_str() {
            "nan" => "float(\"nan\")".into(),
            "-nan" => "-float(\"nan\")".into(),
            "inf" => "float(\"inf\")".into(),
            "-inf" => "-float(\"inf\")".into(),
            t => match t.parse::<f64>() {
                Ok(p) if exact(p) => text,
                _ => match data.get(i) {
                    crate::grammar::Scalar::Float(f) => format!("{f:?}"),
                    _ => text,
                },
            },
        },
        _ => text,
    }
}

/// `R.const(value, "dtype")`, with `shape=` only when nested lists cannot say it.
pub(crate) fn constant(a: &NDArray) -> Doc {
    fn nested(a: &NDArray, dim: usize, offset: usize) -> Doc {
        if dim == a.shape.len() {
            return txt(element(&a.data, offset));
        }
        let n = a.shape[dim] as usize;
        let stride: usize = a.shape[dim + 1..].iter().map(|d| *d as usize).product();
        list((0..n).map(|i| nested(a, dim + 1, offset + i * stride)).collect())
    }
    let count = a.shape.iter().try_fold(1usize, |n, d| n.checked_mul(usize::try_from(*d).ok()?));
    if count != Some(a.data.len()) {
        // Only an AST built by hand can break this invariant; say so instead of indexing out of range.
        return txt(format!("<constant with {} elements for shape {:?}>", a.data.len(), a.shape));
    }
    let mut args = vec![nested(a, 0, 0), txt(string_lit(&a.dtype.to_string()))];
    // `[]` says (0,): a zero before the last dimension hides the dimensions after it.
    if a.shape.len() > 1 && a.shape[..a.shape.len() - 1].contains(&0) {
        args.push(txt("shape=").append(tuple(a.shape.iter().map(|d| txt(d.to_string())).collect())));
    }
    call("R.const", args)
}
