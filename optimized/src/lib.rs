//! `optimized`: an execution engine for checked Relax programs, independent of the
//! reference interpreter (`oracle`) so that the differential tester can find the bugs
//! of either. It shares only the AST, the checker and the operator table
//! (`spec-model`): values, kernels, TIR execution and the machine are its own.
//!
//! A module compiles once ([`Engine::compile`]) into an [`Executable`]: a plan per
//! function, with variables in numbered slots, shape expressions as bytecode over a
//! frame of shape variables, each operator call lowered to a [`kernels::Kernel`], and
//! calls run on an explicit stack (deep recursion is `StackExhausted`, never a native
//! stack overflow), under a step budget and a memory budget ([`Limits`]).

mod api;
pub mod buffer;
pub mod compile;
pub mod dtype;
pub mod error;
pub mod faults;
pub mod kernels;
pub mod machine;
pub mod scalar;
pub mod stats;
pub mod tensor;
pub mod tir;
pub mod value;

pub use api::{Engine, Outcome};
pub use buffer::{Memory, DEFAULT_MEMORY_BUDGET};
pub use compile::Executable;
pub use dtype::DType;
pub use error::{CompileError, Error, ErrorKind};
pub use machine::{threads_from_env, Limits};
pub use tensor::Tensor;
pub use tir::TirBackend;
pub use value::{Closure, Prim, Value};
