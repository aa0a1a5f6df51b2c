//! The context an `FInferStructInfo` function runs in ([`Infer`]) and the helpers
//! operators share: reading tensor arguments and attributes, NumPy broadcasting over
//! symbolic dimensions, axis normalization.

use super::{OpDef, OpError};
use crate::diagnostic::Diagnostic;
use crate::grammar::{
    AttrValue, Call, DataType, Expr, ExprKind, IRModule, PrimBinOp, PrimExpr, StructInfo, StructInfoKind,
};
use crate::require;
use crate::span::Span;
use crate::struct_info::prover::fold;
use crate::struct_info::{SiEnv, Verdict};

/// A tensor argument's StructInfo, with its dimensions when known.
#[derive(Clone, Debug)]
pub struct TensorInfo {
    pub ndim: i64,
    pub dtype: DataType,
    /// The dimensions, when the shape is a `ShapeExpr` or a variable of known value.
    pub dims: Option<Vec<PrimExpr>>,
    /// The shape field as written (a `ShapeExpr` or a `Var`).
    pub shape: Option<Expr>,
}

/// A `TensorStructInfo` with the given dimensions (their number is the ndim) or, with
/// no dimensions, of rank `ndim`.
pub fn tensor_si(dims: Option<Vec<PrimExpr>>, dtype: DataType, ndim: i64) -> StructInfo {
    let (shape, ndim) = match dims {
        Some(ds) => {
            let n = ds.len() as i64;
            (Some(Expr::new(ExprKind::ShapeExpr(ds.iter().map(as_dim).collect()), Span::SYNTHETIC)), n)
        }
        None => (None, ndim),
    };
    StructInfo::new(StructInfoKind::Tensor { shape, dtype, ndim }, Span::SYNTHETIC)
}

/// A dimension constant-folded; an integer constant becomes an `int64` one.
fn as_dim(d: &PrimExpr) -> PrimExpr {
    let d = fold(d);
    match d.as_int() {
        Some(v) => PrimExpr::int(v).with_span(d.span),
        None => d,
    }
}

/// `a op b` on dimensions, constant-folded; `x + 0`, `x - 0`, `x * 1` and `x // 1` are
/// written `x` (exact identities: they cannot overflow or divide by zero).
pub fn dim_op(op: PrimBinOp, a: &PrimExpr, b: &PrimExpr) -> PrimExpr {
    let identity = match (op, b.as_int()) {
        (PrimBinOp::Add | PrimBinOp::Sub, Some(0)) | (PrimBinOp::Mul | PrimBinOp::FloorDiv, Some(1)) => true,
        (PrimBinOp::Mul | PrimBinOp::Add, _) => {
            return match (a.as_int(), op) {
                (Some(1), PrimBinOp::Mul) | (Some(0), PrimBinOp::Add) => fold(b),
                _ => fold(&PrimExpr::binary(op, a.clone(), b.clone())),
            }
        }
        _ => false,
    };
    if identity {
        return fold(a);
    }
    fold(&PrimExpr::binary(op, a.clone(), b.clone()))
}

/// The context of one `FInferStructInfo` invocation.
pub struct Infer<'a> {
    pub op: &'a OpDef,
    pub call: &'a Call,
    /// The StructInfo of each argument.
    pub args: &'a [StructInfo],
    pub env: &'a SiEnv<'a>,
    pub module: Option<&'a IRModule>,
    pub span: Span,
    warnings: Vec<Diagnostic>,
}

impl<'a> Infer<'a> {
    pub fn new(
        op: &'a OpDef,
        call: &'a Call,
        args: &'a [StructInfo],
        env: &'a SiEnv<'a>,
        module: Option<&'a IRModule>,
        span: Span,
    ) -> Infer<'a> {
        Infer { op, call, args, env, module, span, warnings: Vec::new() }
    }

    pub fn into_warnings(self) -> Vec<Diagnostic> {
        self.warnings
    }

    /// The operator's name without the `relax.` prefix (`add`, `nn.relu`).
    pub fn name(&self) -> &'static str {
        self.op.name.strip_prefix("relax.").unwrap_or(self.op.name)
    }

    /// An error of this operator's rule at the call.
    pub fn error(&self, message: impl Into<String>) -> OpError {
        Box::new(Diagnostic::error(self.op.rule, format!("{}: {}", self.op.name, message.into()), self.span))
    }

    /// A warning of this operator's rule at the call.
    pub fn warn(&mut self, message: impl Into<String>) {
        let d = Diagnostic::warning(self.op.rule, format!("{}: {}", self.op.name, message.into()), self.span);
        self.warnings.push(d);
    }

    /// Argument `i` as a tensor (an error if its StructInfo is not a `TensorStructInfo`).
    pub fn tensor(&self, i: usize, what: &str) -> Result<TensorInfo, OpError> {
        self.tensor_of(&self.args[i], what)
    }

    pub fn tensor_of(&self, si: &StructInfo, what: &str) -> Result<TensorInfo, OpError> {
        match &*si.kind {
            StructInfoKind::Tensor { shape, dtype, ndim } => {
                let dims = shape.as_ref().and_then(|s| match &s.kind {
                    ExprKind::ShapeExpr(ds) => Some(ds.clone()),
                    ExprKind::Var(v) => (self.env.var_values)(v),
                    _ => None,
                });
                // Dimensions that contradict the rank (ill-formed, WF-13) are not used.
                let dims = dims.filter(|d| *ndim == -1 || d.len() as i64 == *ndim);
                let ndim = dims.as_ref().map_or(*ndim, |d| d.len() as i64);
                Ok(TensorInfo { ndim, dtype: *dtype, dims, shape: shape.clone() })
            }
            _ => Err(self.error(format!("{what} must be a tensor, got {}", crate::text::print_struct_info(si)))),
        }
    }

    /// Argument `i` as a shape: its ndim and values when known.
    pub fn shape_arg(&self, i: usize, what: &str) -> Result<(i64, Option<Vec<PrimExpr>>), OpError> {
        match &*self.args[i].kind {
            StructInfoKind::Shape { values, ndim } => {
                let values = values.clone().or_else(|| match &self.call.args[i].kind {
                    ExprKind::Var(v) => (self.env.var_values)(v),
                    _ => None,
                });
                Ok((*ndim, values))
            }
            _ => {
                Err(self
                    .error(format!("{what} must be a shape, got {}", crate::text::print_struct_info(&self.args[i]))))
            }
        }
    }

    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.call.attrs.get(name).filter(|v| !matches!(v, AttrValue::None))
    }

    pub fn attr_int(&self, name: &str, default: i64) -> i64 {
        match self.attr(name) {
            Some(AttrValue::Int(i)) => *i,
            _ => default,
        }
    }

    pub fn attr_bool(&self, name: &str, default: bool) -> bool {
        match self.attr(name) {
            Some(AttrValue::Bool(b)) => *b,
            _ => default,
        }
    }

    /// A number attribute (an integer reads as its float); `default` when absent.
    pub fn attr_float(&self, name: &str, default: f64) -> f64 {
        match self.attr(name) {
            Some(AttrValue::Float(f)) => f.0,
            Some(AttrValue::Int(i)) => *i as f64,
            _ => default,
        }
    }

    pub fn attr_dtype(&self, name: &str) -> Option<DataType> {
        match self.attr(name) {
            Some(AttrValue::Str(s)) => DataType::parse(s),
            _ => None,
        }
    }

    /// An integer-list attribute (a single integer is a list of one); `None` when absent.
    pub fn attr_ints(&self, name: &str) -> Option<Vec<i64>> {
        match self.attr(name)? {
            AttrValue::Int(i) => Some(vec![*i]),
            AttrValue::List(xs) => {
                Some(xs.iter().filter_map(|x| if let AttrValue::Int(i) = x { Some(*i) } else { None }).collect())
            }
            _ => None,
        }
    }

    pub fn compare(&self, a: &PrimExpr, b: &PrimExpr) -> Verdict {
        let scope: Vec<_> = self.env.shapes.iter().cloned().collect();
        self.env.prover.compare(a, b, &scope)
    }

    pub fn is_one(&self, d: &PrimExpr) -> bool {
        self.compare(d, &PrimExpr::int(1)) == Verdict::Equal
    }

    /// `axis` (negative counts from the end) as an index below `ndim`.
    pub fn normalize_axis(&self, axis: i64, ndim: i64) -> Result<usize, OpError> {
        let a = if axis < 0 { axis.checked_add(ndim) } else { Some(axis) };
        match a {
            Some(a) if (0..ndim).contains(&a) => Ok(a as usize),
            _ => Err(self.error(format!("axis {axis} is out of range for a tensor of rank {ndim}"))),
        }
    }

    /// Normalizes a list of axes, rejecting repeats.
    pub fn normalize_axes(&self, axes: &[i64], ndim: i64) -> Result<Vec<usize>, OpError> {
        let mut out = Vec::new();
        for &a in axes {
            let n = self.normalize_axis(a, ndim)?;
            require!(self => !out.contains(&n), "axis {a} is repeated");
            out.push(n);
        }
        Ok(out)
    }

    /// With an unknown rank, the same axis written twice is still a repeat.
    pub fn reject_repeats(&self, axes: &[i64]) -> Result<(), OpError> {
        for (i, a) in axes.iter().enumerate() {
            require!(self => !axes[..i].contains(a), "axis {a} is repeated");
        }
        Ok(())
    }

    /// The common dtype of two operands: an error when both are known and differ,
    /// `Void` when either is unknown.
    pub fn same_dtype(&self, a: DataType, b: DataType) -> Result<DataType, OpError> {
        if a.is_void() || b.is_void() {
            return Ok(DataType::void());
        }
        require!(self => a == b, "operands have different dtypes {a} and {b}");
        Ok(a)
    }

    /// Two dimensions that must be equal: `Ok(true)` when provably equal, an error when
    /// provably different, a warning and `Ok(false)` when unknown.
    pub fn expect_equal(&mut self, a: &PrimExpr, b: &PrimExpr, what: &str) -> Result<bool, OpError> {
        match self.compare(a, b) {
            Verdict::Equal => Ok(true),
            Verdict::NotEqual => Err(self.error(format!("{what}: {} and {} differ", show(a), show(b)))),
            Verdict::Unknown => {
                self.warn(format!("{what}: cannot prove {} and {} equal; checked at run time", show(a), show(b)));
                Ok(false)
            }
        }
    }

    /// One pair of dimensions under NumPy broadcasting: `Ok(Some(d))` when provably equal
    /// or one is 1; an error when provably different and neither can be 1; otherwise a
    /// warning and `Ok(None)` (the result dimension is unknown).
    pub fn broadcast_dim(&mut self, a: &PrimExpr, b: &PrimExpr) -> Result<Option<PrimExpr>, OpError> {
        if self.compare(a, b) == Verdict::Equal || self.is_one(b) {
            return Ok(Some(a.clone()));
        }
        if self.is_one(a) {
            return Ok(Some(b.clone()));
        }
        let one = PrimExpr::int(1);
        let never_one = |d: &PrimExpr| self.compare(d, &one) == Verdict::NotEqual;
        if self.compare(a, b) == Verdict::NotEqual && never_one(a) && never_one(b) {
            return Err(self.error(format!("dimensions {} and {} cannot be broadcast", show(a), show(b))));
        }
        self.warn(format!(
            "cannot prove dimensions {} and {} broadcast (equal, or one of them 1); the result shape is unknown",
            show(a),
            show(b)
        ));
        Ok(None)
    }

    /// NumPy broadcasting of two shapes (aligned at the right); `None` when some
    /// result dimension is unknown.
    pub fn broadcast_shapes(&mut self, a: &[PrimExpr], b: &[PrimExpr]) -> Result<Option<Vec<PrimExpr>>, OpError> {
        let n = a.len().max(b.len());
        let mut out = Vec::with_capacity(n);
        let mut known = true;
        for i in 0..n {
            let x = (i + a.len()).checked_sub(n).map(|j| &a[j]);
            let y = (i + b.len()).checked_sub(n).map(|j| &b[j]);
            match (x, y) {
                (Some(x), Some(y)) => match self.broadcast_dim(x, y)? {
                    Some(d) => out.push(d),
                    None => known = false,
                },
                (Some(d), None) | (None, Some(d)) => out.push(d.clone()),
                (None, None) => unreachable!("i < max(len)"),
            }
        }
        Ok(known.then_some(out))
    }

    /// Broadcasts tensors: the result rank and, when every pair is decided, its shape.
    /// Every two operands with known dimensions are checked against each other first,
    /// so a provable mismatch is found even when a third operand's shape is unknown.
    pub fn broadcast_tensors(&mut self, ts: &[&TensorInfo]) -> Result<(i64, Option<Vec<PrimExpr>>), OpError> {
        let known: Vec<&Vec<PrimExpr>> = ts.iter().filter_map(|t| t.dims.as_ref()).collect();
        for (i, a) in known.iter().enumerate() {
            for b in &known[i + 1..] {
                self.provably_unbroadcastable(a, b)?;
            }
        }
        if ts.iter().any(|t| t.ndim == -1) {
            return Ok((-1, None));
        }
        let ndim = ts.iter().map(|t| t.ndim).max().unwrap_or(0);
        if known.len() != ts.len() {
            return Ok((ndim, None));
        }
        let Some((first, rest)) = known.split_first() else { return Ok((ndim, Some(Vec::new()))) };
        let mut dims = (*first).clone();
        for d in rest {
            match self.broadcast_shapes(&dims, d)? {
                Some(next) => dims = next,
                None => return Ok((ndim, None)),
            }
        }
        Ok((ndim, Some(dims)))
    }

    /// An error if some aligned pair of dimensions is provably different with neither
    /// possibly 1.
    fn provably_unbroadcastable(&self, a: &[PrimExpr], b: &[PrimExpr]) -> Result<(), OpError> {
        let one = PrimExpr::int(1);
        for (x, y) in a.iter().rev().zip(b.iter().rev()) {
            let never_one = |d: &PrimExpr| self.compare(d, &one) == Verdict::NotEqual;
            if self.compare(x, y) == Verdict::NotEqual && never_one(x) && never_one(y) {
                return Err(self.error(format!("dimensions {} and {} cannot be broadcast", show(x), show(y))));
            }
        }
        Ok(())
    }
}

/// A dimension in messages.
pub fn show(d: &PrimExpr) -> String {
    crate::text::print_prim_expr(d)
}
