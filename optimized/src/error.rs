//! The engine's errors: run-time errors with the same kinds and rule IDs as the
//! oracle's (DESIGN.md, "Errors are values"), and the errors of compilation.

use spec_model::diagnostic::Diagnostic;
use spec_model::Span;
use std::fmt;

/// The kinds of run-time error. The names are the oracle's, so outcomes compare by name.
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
    /// The memory budget would be exceeded (limit `LIMIT-memory`): checked before allocating.
    MemoryExhausted,
    /// A state no checked program reaches (proofs-notes/evaluation.md, E-14).
    Crash,
}

impl ErrorKind {
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

    /// Resource exhaustion: an outcome of the limits, not of the program's meaning.
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
pub struct Error {
    pub kind: ErrorKind,
    pub rule: &'static str,
    pub message: String,
    pub span: Span,
}

impl Error {
    pub fn new(kind: ErrorKind, rule: &'static str, message: impl Into<String>, span: Span) -> Error {
        Error { kind, rule, message: message.into(), span }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error[{}] ({}): {}", self.kind, self.rule, self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Returns a run-time error: `bail!(ErrorKind::OpError, "OP-add", span, "...")`.
#[macro_export]
macro_rules! bail {
    ($kind:expr, $rule:expr, $span:expr, $($msg:tt)+) => {
        return Err($crate::error::Error::new($kind, $rule, format!($($msg)+), $span))
    };
}

/// Why a module cannot be compiled: it is not a checked, normalized module (the engine
/// compiles what the checker accepts), or an entry it was asked for does not exist.
#[derive(Clone, Debug)]
pub enum CompileError {
    /// The module breaks a rule the engine relies on (well-formedness, normal form).
    IllFormed(Vec<Diagnostic>),
    /// What the engine was asked to compile or call does not exist.
    NoSuchFunction(String),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::IllFormed(ds) => {
                write!(f, "the module is not checked and normalized:")?;
                for d in ds {
                    write!(f, "\n  {d}")?;
                }
                Ok(())
            }
            CompileError::NoSuchFunction(n) => write!(f, "no function `{n}`"),
        }
    }
}

impl std::error::Error for CompileError {}
