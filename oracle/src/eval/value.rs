//! Values in Relax (the spec's "Values in Relax"): tensors, tuples, closures, shape
//! values, packed functions, prim values, strings, data types, opaque objects, null.
//!
//! Aliasing (Detailed Semantics: "all evaluation results are passed by reference"):
//! every value is a cheap handle; tensors are `Rc<RefCell<NDArray>>` (counted against the memory budget: [`super::memory`]), so a binding, a
//! capture or a tuple field shares the tensor, and an operator or packed function that
//! mutates it is seen through every alias.

use imbl::HashMap as PMap;
use spec_model::grammar::{DataType, Function, NDArray, PrimFunc, PrimVar, Var};
use spec_model::Span;
use std::fmt;
use std::rc::Rc;

/// A shared, mutable tensor.
pub type TensorRef = Rc<super::memory::Tracked>;

/// The environment of Relax variables (persistent: extending it copies nothing).
pub type Env = PMap<Var, Value>;

/// The shape context: shape variables and their values (int64, `>= 0`).
pub type ShapeEnv = PMap<PrimVar, i64>;

/// A run-time value.
#[derive(Clone)]
pub enum Value {
    Tensor(TensorRef),
    Tuple(Rc<Vec<Value>>),
    Closure(Rc<Closure>),
    /// A shape value: its dimensions.
    Shape(Rc<Vec<i64>>),
    PackedFunc(Rc<str>),
    /// A `PrimValue`: a scalar with its dtype.
    Prim(PrimScalar),
    Str(Rc<str>),
    DataType(DataType),
    /// A TIR `PrimFunc` of the module: opaque to Relax, used by `call_tir`.
    PrimFunc(Rc<str>, Rc<PrimFunc>),
    /// Any other object (what `null_value` and some packed functions return).
    Object(Rc<str>),
    Null,
}

/// A scalar `PrimValue`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PrimScalar {
    Int(i64, DataType),
    Float(f64, DataType),
    Bool(bool),
}

/// A closure (SEM-6): the function, the Relax variables and shape variables it
/// captured (by reference), and the variable naming it when it is the right-hand side
/// of a binding (so that recursive calls find it).
pub struct Closure {
    pub func: Rc<Function>,
    pub captured: Env,
    pub shapes: ShapeEnv,
    pub self_var: Option<Var>,
    /// A name for messages: the global's or the bound variable's.
    pub name: String,
}

impl Value {
    pub fn tensor(a: NDArray) -> Value {
        Value::Tensor(Rc::new(super::memory::Tracked::new(a)))
    }

    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Tensor(_) => "a tensor",
            Value::Tuple(_) => "a tuple",
            Value::Closure(_) => "a closure",
            Value::Shape(_) => "a shape",
            Value::PackedFunc(_) => "a packed function",
            Value::Prim(_) => "a prim value",
            Value::Str(_) => "a string",
            Value::DataType(_) => "a data type",
            Value::PrimFunc(..) => "a TIR PrimFunc",
            Value::Object(_) => "an object",
            Value::Null => "null",
        }
    }
}

/// The kinds of run-time error (DESIGN.md, "Errors are values"). The differential
/// tester compares outcomes by value or by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    MatchCastMismatch,
    ShapeVarMismatch,
    TupleIndexOutOfRange,
    NotCallable,
    IntegerOverflow,
    DivisionByZero,
    NegativeDimension,
    OpError,
    UnknownExternFunc,
    FuelExhausted,
    StackExhausted,
    /// A tensor larger than the limit (`LIMIT-memory`): refused before it is allocated.
    MemoryExhausted,
    /// Cannot happen in a checked program (an unbound variable, a projection of a
    /// non-tuple, an `Op` used as a value, ...): raised, it shows a bug in the checker
    /// or the evaluator, and the differential tester never counts two of them as
    /// agreement (as `Crash` in the WebAssembly reference interpreter).
    Crash,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 13] = [
        ErrorKind::MatchCastMismatch,
        ErrorKind::ShapeVarMismatch,
        ErrorKind::TupleIndexOutOfRange,
        ErrorKind::NotCallable,
        ErrorKind::IntegerOverflow,
        ErrorKind::DivisionByZero,
        ErrorKind::NegativeDimension,
        ErrorKind::OpError,
        ErrorKind::UnknownExternFunc,
        ErrorKind::FuelExhausted,
        ErrorKind::StackExhausted,
        ErrorKind::MemoryExhausted,
        ErrorKind::Crash,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::MatchCastMismatch => "MatchCastMismatch",
            ErrorKind::ShapeVarMismatch => "ShapeVarMismatch",
            ErrorKind::TupleIndexOutOfRange => "TupleIndexOutOfRange",
            ErrorKind::NotCallable => "NotCallable",
            ErrorKind::IntegerOverflow => "IntegerOverflow",
            ErrorKind::DivisionByZero => "DivisionByZero",
            ErrorKind::NegativeDimension => "NegativeDimension",
            ErrorKind::OpError => "OpError",
            ErrorKind::UnknownExternFunc => "UnknownExternFunc",
            ErrorKind::FuelExhausted => "FuelExhausted",
            ErrorKind::StackExhausted => "StackExhausted",
            ErrorKind::MemoryExhausted => "MemoryExhausted",
            ErrorKind::Crash => "Crash",
        }
    }

    pub fn from_name(s: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

impl ErrorKind {
    /// Resource exhaustion: an outcome of the limits, not of the program's meaning (the
    /// differential tester skips it as "poisoned").
    pub fn is_resource(self) -> bool {
        matches!(self, ErrorKind::FuelExhausted | ErrorKind::StackExhausted | ErrorKind::MemoryExhausted)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A run-time error: its kind, the rule that raised it, a message and where.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    pub kind: ErrorKind,
    pub rule: String,
    pub message: String,
    pub span: Span,
}

impl RuntimeError {
    pub fn new(kind: ErrorKind, rule: impl Into<String>, message: impl Into<String>, span: Span) -> RuntimeError {
        RuntimeError { kind, rule: rule.into(), message: message.into(), span }
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error[{}] ({}): {}", self.kind, self.rule, self.message)
    }
}

pub type EvalResult<T> = Result<T, RuntimeError>;

/// Returns a run-time error of kind `$kind` raised by rule `$rule` at `$span`, the
/// message formatted from the rest: `bail!(ErrorKind::OpError, "SEM-7.1", span, "...")`.
#[macro_export]
macro_rules! bail {
    ($kind:expr, $rule:expr, $span:expr, $($msg:tt)+) => {
        return Err($crate::eval::value::RuntimeError::new($kind, $rule, format!($($msg)+), $span))
    };
}

/// Returns a [`ErrorKind::Crash`]: what the checked program's rule `$rule` guarantees
/// did not hold (`crash!("WF-3", span, "...")`).
#[macro_export]
macro_rules! crash {
    ($rule:expr, $span:expr, $($msg:tt)+) => {
        $crate::bail!(
            $crate::eval::value::ErrorKind::Crash,
            $rule,
            $span,
            "{} (cannot happen in a checked program: a bug in the checker or the evaluator)",
            format!($($msg)+)
        )
    };
}
