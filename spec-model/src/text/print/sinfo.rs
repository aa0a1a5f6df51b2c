//! StructInfo and the shape expressions in it.

use super::literal::string_lit;
use super::relax::RelaxPrinter;
use super::scalar::{Defaults, Scalar, ScalarPrinter, View, P_ATOM};
use super::{call, list, tuple, txt, Doc};
use crate::grammar::{DataType, ExprKind, PrimExpr, PrimExprKind, StructInfo, StructInfoKind};
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
    pub(crate) fn prim(&self, e: &PrimExpr) -> Doc {
        let name = |v: &crate::grammar::PrimVar| self.names.borrow_mut().prim(v);
        let other = |_: &PrimExpr, _: &ScalarPrinter<PrimExpr>| (txt("<?>"), P_ATOM);
        let sp = ScalarPrinter {
            defaults: Defaults { int: RELAX_INT, float: DEFAULT_FLOAT },
            also: self.dialect.literal_reader(true),
            var_name: &name,
            other: &other,
            in_call: false,
        };
        sp.print(e).0
    }

    /// In a TVM 0.27 signature a dimension that is one shape variable is its bare
    /// name, declared by a module-level `TypeVar` line (as TVM 0.27 prints it).
    fn dim(&self, d: &PrimExpr, sig: bool) -> Doc {
        if let (true, super::Dialect::Tvm027, PrimExprKind::Var(v)) = (sig, self.dialect, &*d.kind) {
            let doc = self.prim(d);
            let name = super::render(doc.clone(), usize::MAX).trim_end().to_string();
            let mut tv = self.type_vars.borrow_mut();
            if !tv.iter().any(|(t, _)| t == v) {
                tv.push((v.clone(), name));
            }
            return doc;
        }
        self.quoted_dim(d, sig)
    }

    /// A dimension; in a signature, one that mentions a shape variable is quoted
    /// (`"n"`, `"n * 2"`), which declares the variable if it is not yet in scope.
    fn quoted_dim(&self, d: &PrimExpr, sig: bool) -> Doc {
        let doc = self.prim(d);
        if sig && !d.vars().is_empty() {
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
            StructInfoKind::Prim { dtype, value: None } => call("R.Prim", vec![txt(string_lit(&dtype.to_string()))]),
            // Quoted even where TVM 0.27 writes a bare `TypeVar` dimension.
            StructInfoKind::Prim { value: Some(v), .. } => {
                call("R.Prim", vec![txt("value=").append(self.quoted_dim(v, sig))])
            }
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
                    None if self.dialect.implies_derived_ret(derive_func.is_some(), ret) => {}
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
