//! The reference interpreter: the spec's "Values in Relax", "Variable Scoping",
//! "Evaluating MatchCast", "Checking Structural Information at the Start and End of a
//! Function" and "Detailed Semantics", transcribed. Every step cites its rule
//! (`SEM-n`, `SI-MC-n`, `OP-name`).

pub mod bench;
pub mod builtins;
pub mod interp;
pub mod kernels;
pub mod literal;
pub mod lowered;
pub mod machine;
pub mod match_cast;
pub mod memory;
pub use spec_model::npy;
pub mod ops;
pub mod run;
pub mod tir;
pub mod value;

pub use machine::{Limits, Machine, Scope};
pub use value::{ErrorKind, EvalResult, PrimScalar, RuntimeError, Value};
