//! The reference semantics of the tensor operators (`OP-name`): plain loops in the
//! declared dtype, with NumPy broadcasting.
//!
//! Every operator reads already-evaluated arguments and returns a new value; errors
//! carry the operator's rule (`OP-add`). The choices the spec leaves open (integer
//! division and overflow, reduction order, float-to-int casts, float16) are recorded in
//! `proofs-notes/operator-semantics.md`.

mod broadcast;
mod create;
mod elem;
mod elementwise;
mod linalg;
mod manipulate;
mod reduce;

use super::value::{ErrorKind, EvalResult, RuntimeError, Value};
use spec_model::grammar::{AttrValue, Attrs, DataType, NDArray, TensorData};
use spec_model::Span;
use std::cell::Ref;

use elementwise::{Arith, Compare, Unary};
use reduce::Reduce;

/// The largest tensor an operator creates (2^26 elements); a larger one is an `OpError`.
pub const MAX_ELEMENTS: usize = 1 << 26;

/// The names this module implements (the lead's tests check every registered tensor operator is here).
pub const TENSOR_OPS: &[&str] = &[
    "relax.add",
    "relax.subtract",
    "relax.multiply",
    "relax.divide",
    "relax.floor_divide",
    "relax.power",
    "relax.maximum",
    "relax.minimum",
    "relax.equal",
    "relax.not_equal",
    "relax.less",
    "relax.less_equal",
    "relax.greater",
    "relax.greater_equal",
    "relax.logical_and",
    "relax.logical_or",
    "relax.logical_not",
    "relax.negative",
    "relax.abs",
    "relax.exp",
    "relax.log",
    "relax.sqrt",
    "relax.tanh",
    "relax.sigmoid",
    "relax.nn.relu",
    "relax.nn.softmax",
    "relax.where",
    "relax.astype",
    "relax.matmul",
    "relax.sum",
    "relax.mean",
    "relax.max",
    "relax.min",
    "relax.reshape",
    "relax.permute_dims",
    "relax.broadcast_to",
    "relax.concat",
    "relax.split",
    "relax.strided_slice",
    "relax.take",
    "relax.zeros",
    "relax.ones",
    "relax.full",
    "relax.arange",
];

/// Evaluates a tensor operator on already-evaluated arguments. `name` is the full
/// registry name (`relax.add`, `relax.nn.relu`, ...). Errors carry rule `OP-<name without "relax.">`
/// (e.g. `OP-add`, `OP-nn.softmax`) and `span`.
pub fn eval_tensor_op(name: &str, args: &[Value], attrs: &Attrs, span: Span) -> EvalResult<Value> {
    let short = name.strip_prefix("relax.").unwrap_or(name);
    let cx = Cx { name, rule: format!("OP-{short}"), attrs, span };
    match short {
        "add" => elementwise::arith(&cx, args, Arith::Add),
        "subtract" => elementwise::arith(&cx, args, Arith::Subtract),
        "multiply" => elementwise::arith(&cx, args, Arith::Multiply),
        "divide" => elementwise::arith(&cx, args, Arith::Divide),
        "floor_divide" => elementwise::arith(&cx, args, Arith::FloorDivide),
        "power" => elementwise::arith(&cx, args, Arith::Power),
        "maximum" => elementwise::arith(&cx, args, Arith::Maximum),
        "minimum" => elementwise::arith(&cx, args, Arith::Minimum),
        "equal" => elementwise::compare(&cx, args, Compare::Equal),
        "not_equal" => elementwise::compare(&cx, args, Compare::NotEqual),
        "less" => elementwise::compare(&cx, args, Compare::Less),
        "less_equal" => elementwise::compare(&cx, args, Compare::LessEqual),
        "greater" => elementwise::compare(&cx, args, Compare::Greater),
        "greater_equal" => elementwise::compare(&cx, args, Compare::GreaterEqual),
        "logical_and" => elementwise::logical(&cx, args, true),
        "logical_or" => elementwise::logical(&cx, args, false),
        "logical_not" => elementwise::logical_not(&cx, args),
        "negative" => elementwise::unary(&cx, args, Unary::Negative),
        "abs" => elementwise::unary(&cx, args, Unary::Abs),
        "nn.relu" => elementwise::unary(&cx, args, Unary::Relu),
        "exp" => elementwise::unary(&cx, args, Unary::Exp),
        "log" => elementwise::unary(&cx, args, Unary::Log),
        "sqrt" => elementwise::unary(&cx, args, Unary::Sqrt),
        "tanh" => elementwise::unary(&cx, args, Unary::Tanh),
        "sigmoid" => elementwise::unary(&cx, args, Unary::Sigmoid),
        "nn.softmax" => elementwise::softmax(&cx, args),
        "where" => elementwise::where_(&cx, args),
        "astype" => elementwise::astype(&cx, args),
        "matmul" => linalg::matmul(&cx, args),
        "sum" => reduce::reduce(&cx, args, Reduce::Sum),
        "mean" => reduce::reduce(&cx, args, Reduce::Mean),
        "max" => reduce::reduce(&cx, args, Reduce::Max),
        "min" => reduce::reduce(&cx, args, Reduce::Min),
        "reshape" => manipulate::reshape(&cx, args),
        "permute_dims" => manipulate::permute_dims(&cx, args),
        "broadcast_to" => manipulate::broadcast_to(&cx, args),
        "concat" => manipulate::concat(&cx, args),
        "split" => manipulate::split(&cx, args),
        "strided_slice" => manipulate::strided_slice(&cx, args),
        "take" => manipulate::take(&cx, args),
        "zeros" => create::zeros_ones(&cx, args, false),
        "ones" => create::zeros_ones(&cx, args, true),
        "full" => create::full(&cx, args),
        "arange" => create::arange(&cx, args),
        _ => Err(cx.error("not a tensor operator of the reference interpreter")),
    }
}

/// One operator call: its name, rule, attributes and span, with the helpers every
/// kernel uses to read arguments and raise errors.
pub(crate) struct Cx<'a> {
    pub name: &'a str,
    pub rule: String,
    pub attrs: &'a Attrs,
    pub span: Span,
}

impl Cx<'_> {
    /// An error of kind `kind` of this operator's rule.
    pub fn fail(&self, kind: ErrorKind, message: impl Into<String>) -> RuntimeError {
        RuntimeError::new(kind, self.rule.clone(), format!("{}: {}", self.name, message.into()), self.span)
    }

    /// An `OpError` of this operator's rule.
    pub fn error(&self, message: impl Into<String>) -> RuntimeError {
        self.fail(ErrorKind::OpError, message)
    }

    pub fn arity(&self, args: &[Value], n: usize) -> EvalResult<()> {
        if args.len() != n {
            return Err(self.error(format!("takes {n} argument(s), {} given", args.len())));
        }
        Ok(())
    }

    /// A tensor argument, checked to be a well-formed array (data of its dtype and
    /// of its shape's element count).
    pub fn tensor<'v>(&self, v: &'v Value, what: &str) -> EvalResult<Ref<'v, NDArray>> {
        let Value::Tensor(t) = v else {
            return Err(self.error(format!("{what} must be a tensor, got {}", v.kind())));
        };
        let a = t.try_borrow().map_err(|_| self.error(format!("{what} is being mutated")))?;
        let count = broadcast::element_count(&a.shape);
        let same_kind =
            TensorData::empty(a.dtype).is_some_and(|e| std::mem::discriminant(&e) == std::mem::discriminant(&a.data));
        if count != Some(a.data.len() as u64) || !same_kind {
            return Err(self.error(format!("{what} is a malformed array")));
        }
        Ok(a)
    }

    /// A shape argument's dimensions (possibly negative: the caller decides).
    pub fn shape(&self, v: &Value, what: &str) -> EvalResult<Vec<i64>> {
        match v {
            Value::Shape(s) => Ok(s.to_vec()),
            _ => Err(self.error(format!("{what} must be a shape, got {}", v.kind()))),
        }
    }

    /// Dimensions that must be non-negative (`NegativeDimension` otherwise).
    pub fn dims(&self, shape: &[i64]) -> EvalResult<Vec<u64>> {
        shape
            .iter()
            .map(|&d| {
                u64::try_from(d)
                    .map_err(|_| self.fail(ErrorKind::NegativeDimension, format!("dimension {d} is negative")))
            })
            .collect()
    }

    /// The element count of a tensor this operator creates (at most [`MAX_ELEMENTS`]).
    pub fn numel(&self, shape: &[u64]) -> EvalResult<usize> {
        match broadcast::element_count(shape) {
            Some(n) if n <= MAX_ELEMENTS as u64 => Ok(n as usize),
            _ => Err(self.error(format!("a tensor of shape {shape:?} has more than 2^26 elements"))),
        }
    }

    /// `axis` (negative counts from the end) as an index below `ndim`.
    pub fn axis(&self, axis: i64, ndim: usize) -> EvalResult<usize> {
        let n = ndim as i64;
        let a = if axis < 0 { axis.checked_add(n) } else { Some(axis) };
        match a {
            Some(a) if (0..n).contains(&a) => Ok(a as usize),
            _ => Err(self.error(format!("axis {axis} is out of range for a tensor of rank {ndim}"))),
        }
    }

    /// Normalized axes, none repeated.
    pub fn axes(&self, axes: &[i64], ndim: usize) -> EvalResult<Vec<usize>> {
        let mut out = Vec::with_capacity(axes.len());
        for &a in axes {
            let n = self.axis(a, ndim)?;
            if out.contains(&n) {
                return Err(self.error(format!("axis {a} is repeated")));
            }
            out.push(n);
        }
        Ok(out)
    }

    /// An attribute, `None` when absent or `None`.
    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attrs.get(name).filter(|v| !matches!(v, AttrValue::None))
    }

    fn bad_attr(&self, name: &str, want: &str) -> RuntimeError {
        self.error(format!("attribute `{name}` must be {want}"))
    }

    pub fn attr_opt_int(&self, name: &str) -> EvalResult<Option<i64>> {
        match self.attr(name) {
            None => Ok(None),
            Some(AttrValue::Int(i)) => Ok(Some(*i)),
            Some(_) => Err(self.bad_attr(name, "an integer")),
        }
    }

    pub fn attr_int(&self, name: &str, default: i64) -> EvalResult<i64> {
        Ok(self.attr_opt_int(name)?.unwrap_or(default))
    }

    pub fn attr_bool(&self, name: &str, default: bool) -> EvalResult<bool> {
        match self.attr(name) {
            None => Ok(default),
            Some(AttrValue::Bool(b)) => Ok(*b),
            Some(_) => Err(self.bad_attr(name, "a boolean")),
        }
    }

    /// An integer or a list of integers (a single integer is a list of one).
    pub fn attr_ints(&self, name: &str) -> EvalResult<Option<Vec<i64>>> {
        match self.attr(name) {
            None => Ok(None),
            Some(AttrValue::Int(i)) => Ok(Some(vec![*i])),
            Some(AttrValue::List(xs)) => xs
                .iter()
                .map(|x| match x {
                    AttrValue::Int(i) => Ok(*i),
                    _ => Err(self.bad_attr(name, "a list of integers")),
                })
                .collect::<EvalResult<Vec<i64>>>()
                .map(Some),
            Some(_) => Err(self.bad_attr(name, "a list of integers")),
        }
    }

    /// A dtype attribute; the dtype must have tensor storage.
    pub fn attr_dtype(&self, name: &str) -> EvalResult<Option<DataType>> {
        match self.attr(name) {
            None => Ok(None),
            Some(AttrValue::Str(s)) => match DataType::parse(s) {
                Some(d) => Ok(Some(d)),
                None => Err(self.bad_attr(name, "a dtype string")),
            },
            Some(_) => Err(self.bad_attr(name, "a dtype string")),
        }
    }

    /// Empty storage of `dtype` (an error for a dtype tensors cannot hold).
    pub fn storage(&self, dtype: DataType) -> EvalResult<TensorData> {
        TensorData::empty(dtype).ok_or_else(|| self.error(format!("dtype {dtype} has no tensor storage")))
    }
}

/// A new tensor value.
pub(crate) fn tensor_value(dtype: DataType, shape: Vec<u64>, data: TensorData) -> Value {
    Value::tensor(NDArray { dtype, shape, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_tensor_operator_is_implemented() {
        const NOT_TENSOR_OPS: &[&str] = &[
            "relax.call_tir",
            "relax.call_dps_packed",
            "relax.call_packed",
            "relax.call_pure_packed",
            "relax.shape_of",
            "relax.null_value",
            "relax.print",
            "relax.assert_op",
            "relax.cast",
        ];
        for op in spec_model::ops::REGISTRY {
            assert_eq!(TENSOR_OPS.contains(&op.name), !NOT_TENSOR_OPS.contains(&op.name), "{}", op.name);
        }
        assert_eq!(TENSOR_OPS.len(), 44);
        for name in TENSOR_OPS {
            let r = eval_tensor_op(name, &[], &Attrs::default(), Span::SYNTHETIC);
            let e = r.err().unwrap_or_else(|| panic!("{name} with no arguments"));
            assert_eq!(e.rule, spec_model::ops::op_rule(name));
        }
    }
}
