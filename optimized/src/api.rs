//! The engine's library interface: compile a module once, call its functions many times.
//!
//! ```
//! use optimized::{Engine, Tensor, Value};
//! let src = r#"
//! @R.function
//! def main(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
//!     y = R.add(x, x)
//!     return y
//! "#;
//! let module = spec_model::text::parse_module(src).unwrap();
//! let exe = Engine::compile(&module).unwrap();
//! let x = Value::tensor(Tensor::new::<f32>(&[2], &[1.5, -2.0]).unwrap());
//! let y = exe.call("main", &[x]).unwrap();
//! let Value::Tensor(t) = y else { panic!() };
//! assert_eq!(&*t.elements::<f32>().unwrap(), &[3.0, -4.0]);
//! ```

use crate::compile::{compile, Executable};
use crate::dtype::Element;
use crate::error::{CompileError, Error};
use crate::machine::{Limits, Run};
use crate::tensor::Tensor;
use crate::tir::TirBackend;
use crate::value::Value;
use crate::Memory;
use spec_model::grammar::IRModule;
use spec_model::Span;

/// The engine.
pub struct Engine;

impl Engine {
    /// Compiles a well-formed module (one the checker accepts; `oracle check`). Refuses a
    /// module that breaks a well-formedness criterion.
    pub fn compile(m: &IRModule) -> Result<Executable, CompileError> {
        compile(m, TirBackend::from_env())
    }

    /// [`Engine::compile`], running every PrimFunc on `tir` (whatever `RELAX_TIR` says).
    pub fn compile_with(m: &IRModule, tir: TirBackend) -> Result<Executable, CompileError> {
        compile(m, tir)
    }
}

/// What a call did: its result, what it printed, and the resources it used.
pub struct Outcome {
    pub result: Result<Value, Error>,
    pub printed: Vec<String>,
    pub fuel_used: u64,
    /// The most bytes of tensors held at once.
    pub peak_memory: usize,
    /// The bytes of the largest tensor allocated.
    pub largest_tensor_bytes: usize,
}

impl Executable {
    /// The value of global function `name` (to pass a function as an argument).
    pub fn global(&self, name: &str) -> Option<Value> {
        self.global_names.get(name).and_then(|i| self.globals.get(*i)).cloned()
    }

    /// Calls global function `entry` on `args` with the default limits.
    pub fn call(&self, entry: &str, args: &[Value]) -> Result<Value, Error> {
        match self.run(entry, args, Limits::default()) {
            Ok(o) => o.result,
            Err(e) => Err(Error::new(crate::ErrorKind::Crash, "TY-2", e.to_string(), Span::SYNTHETIC)),
        }
    }

    /// Calls global function `entry` on `args` within `limits`.
    pub fn run(&self, entry: &str, args: &[Value], limits: Limits) -> Result<Outcome, CompileError> {
        let mut run = Run::new(self, limits);
        let f = run.global(entry).ok_or_else(|| CompileError::NoSuchFunction(entry.to_string()))?;
        let result = run.call(&f, args.to_vec(), Span::SYNTHETIC);
        Ok(Outcome {
            result,
            printed: run.printed,
            fuel_used: limits.fuel - run.fuel,
            peak_memory: run.memory.peak(),
            largest_tensor_bytes: run.memory.largest(),
        })
    }
}

impl Tensor {
    /// A tensor of `shape` holding `values` (row-major; as many as the shape has
    /// elements); `T`'s dtype is the tensor's (`u8` is `uint8`).
    pub fn new<T: Element>(shape: &[u64], values: &[T]) -> Option<Tensor> {
        if crate::tensor::element_count(shape) != Some(values.len()) {
            return None;
        }
        Tensor::from_slice(T::DTYPE, shape, values, &Memory::new(usize::MAX)).ok()
    }
}
