//! The reference semantics of the tensor operators (`OP-name`): plain loops in the
//! declared dtype, with NumPy broadcasting.
//!
//! Every operator reads already-evaluated arguments and returns a new value; errors
//! carry the operator's rule (`OP-add`). `ops.rs` dispatches each [`Op`] to its kernel. The choices the spec leaves open (integer
//! division and overflow, reduction order, float-to-int casts, float16) are recorded in
//! `proofs-notes/operator-semantics.md`.

pub(crate) mod attention;
mod broadcast;
pub(crate) mod conv;
pub(crate) mod conv_transpose;
pub(crate) mod create;
pub(crate) mod einsum;
mod elem;
pub(crate) mod elementwise;
pub(crate) mod index;
pub(crate) mod layout;
pub(crate) mod linalg;
pub(crate) mod manipulate;
pub(crate) mod manipulate_dims;
pub(crate) mod norm;
pub(crate) mod pool;
pub(crate) mod reduce;
pub(crate) mod resize;
pub(crate) mod sorting;
pub(crate) mod statistical;
pub(crate) mod unary_math;

use super::value::{ErrorKind, EvalResult, RuntimeError, Value};
use spec_model::grammar::{AttrValue, Attrs, DataType, NDArray, TensorData};
use spec_model::ops::Op;
use spec_model::Span;
use std::cell::Ref;

/// The bytes per element an operator's result is reserved at (LIMIT-memory): the
/// kernels compute in widened scalars, so a result can take 8 bytes per element while
/// it is made, whatever its dtype.
pub const RESERVED_ELEMENT: DataType = DataType::float(64);

/// One operator call: the operator, its attributes and span, with the helpers every
/// kernel uses to read arguments and raise errors (of the operator's rule, `OP-add`).
pub struct Cx<'a> {
    pub op: Op,
    pub attrs: &'a Attrs,
    pub span: Span,
}

impl<'a> Cx<'a> {
    pub fn new(op: Op, attrs: &'a Attrs, span: Span) -> Cx<'a> {
        Cx { op, attrs, span }
    }

    /// An error of kind `kind` of this operator's rule.
    pub fn fail(&self, kind: ErrorKind, message: impl Into<String>) -> RuntimeError {
        RuntimeError::new(kind, self.op.def().rule, format!("{}: {}", self.op, message.into()), self.span)
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

    /// The element count of a tensor this operator creates, refused (MemoryExhausted,
    /// LIMIT-memory) before it is allocated if it does not fit the memory budget
    /// ([`RESERVED_ELEMENT`] bytes per element).
    pub fn numel(&self, shape: &[u64]) -> EvalResult<usize> {
        let what = || format!("{}: a tensor of shape {shape:?}", self.op);
        let n = broadcast::element_count(shape).unwrap_or(u64::MAX);
        super::memory::reserve(n, RESERVED_ELEMENT, what, self.span)?;
        usize::try_from(n).map_err(|_| RuntimeError::new(ErrorKind::MemoryExhausted, "LIMIT-memory", what(), self.span))
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

    /// A number attribute (an integer reads as its float); `default` when absent.
    pub fn attr_float(&self, name: &str, default: f64) -> EvalResult<f64> {
        match self.attr(name) {
            None => Ok(default),
            Some(AttrValue::Float(f)) => Ok(f.0),
            Some(AttrValue::Int(i)) => Ok(*i as f64),
            Some(_) => Err(self.bad_attr(name, "a number")),
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
