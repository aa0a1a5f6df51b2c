//! The evaluator's effects, apart from its rules: the module's globals, the fuel and
//! call depth that bound a run, the rules fired (`--trace`) and what `print` printed.
//! The rules (`interp.rs`, `ops.rs`, `builtins.rs`, `match_cast.rs`) take a
//! [`Machine`]; the scopes they evaluate in are values ([`Scope`]).

use super::value::{Closure, Env, ErrorKind, EvalResult, ShapeEnv, Value};
use crate::bail;
use spec_model::grammar::{BaseFunc, IRModule};
use spec_model::Span;
use std::collections::HashMap;
use std::rc::Rc;

/// Tensor elements an operator's kernel handles per step of fuel (LIMIT-fuel): the
/// default fuel then allows about 1.6 * 10^8 of them, a few seconds of the oracle's
/// kernels, while the corpus and generated programs use a small fraction.
pub const ELEMENTS_PER_STEP: u64 = 16;

/// Limits that turn non-termination, deep recursion and huge tensors into errors.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Evaluation steps (expressions evaluated, TIR statements executed): LIMIT-fuel.
    pub fuel: u64,
    /// Nested calls of closures: LIMIT-depth.
    pub max_depth: usize,
    /// Bytes of tensors held at once: LIMIT-memory ([`super::memory`]).
    pub memory: usize,
}

/// The budgets in force (`spec_model::limits::current`).
impl Default for Limits {
    fn default() -> Self {
        let b = spec_model::limits::current();
        Limits { fuel: b.fuel, max_depth: b.max_depth, memory: b.memory }
    }
}

/// A scope: the Relax variables and shape variables visible (persistent maps, so
/// extending one copies nothing and leaving one is dropping it).
#[derive(Clone, Default)]
pub struct Scope {
    pub env: Env,
    pub shapes: ShapeEnv,
}

/// The state a run changes.
pub struct Machine<'m> {
    pub module: &'m IRModule,
    globals: HashMap<String, Value>,
    pub fuel: u64,
    depth: usize,
    max_depth: usize,
    /// With tracing, every rule as it fires.
    pub trace: Option<Vec<String>>,
    /// What `print` and `oracle.print` printed, one line per call.
    pub printed: Vec<String>,
}

impl<'m> Machine<'m> {
    /// Program entry: every global function is evaluated first and put in global
    /// scope (Relax functions become closures with nothing captured; PrimFuncs are
    /// opaque objects), so all globals see each other.
    pub fn new(module: &'m IRModule, limits: Limits) -> Machine<'m> {
        let mut globals = HashMap::new();
        for (gv, f) in &module.functions {
            let v = match f {
                BaseFunc::Relax(func) => Value::Closure(Rc::new(Closure {
                    func: func.clone(),
                    captured: Env::new(),
                    shapes: ShapeEnv::new(),
                    self_var: None,
                    name: gv.name.clone(),
                })),
                BaseFunc::Tir(pf) => Value::PrimFunc(gv.name.as_str().into(), pf.clone()),
            };
            globals.insert(gv.name.clone(), v);
        }
        super::memory::set_budget(limits.memory);
        Machine {
            module,
            globals,
            fuel: limits.fuel,
            depth: 0,
            max_depth: limits.max_depth,
            trace: None,
            printed: Vec::new(),
        }
    }

    /// Records that `rule` fired (with tracing).
    pub fn fire(&mut self, rule: &str) {
        if let Some(t) = &mut self.trace {
            t.push(rule.to_string());
        }
    }

    pub fn global(&self, name: &str) -> Option<&Value> {
        self.globals.get(name)
    }

    /// One step of fuel (evaluating an expression or a binding).
    pub fn step(&mut self, span: Span) -> EvalResult<()> {
        if self.fuel == 0 {
            bail!(ErrorKind::FuelExhausted, "LIMIT-fuel", span, "the step budget (fuel) is exhausted");
        }
        self.fuel -= 1;
        Ok(())
    }

    /// Fuel for `elements` tensor elements handled by a kernel: one step per
    /// [`ELEMENTS_PER_STEP`], so that tensor work is bounded like a long loop.
    pub fn charge_elements(&mut self, elements: u64, span: Span) -> EvalResult<()> {
        let steps = elements / ELEMENTS_PER_STEP;
        if steps > self.fuel {
            self.fuel = 0;
            bail!(ErrorKind::FuelExhausted, "LIMIT-fuel", span, "the step budget (fuel) is exhausted by tensor work");
        }
        self.fuel -= steps;
        Ok(())
    }

    /// Runs `body` one call deeper (SEM-9.2.1), or fails with `StackExhausted`.
    pub fn nested<T>(
        &mut self,
        name: &str,
        span: Span,
        body: impl FnOnce(&mut Self) -> EvalResult<T>,
    ) -> EvalResult<T> {
        if self.depth >= self.max_depth {
            bail!(
                ErrorKind::StackExhausted,
                "LIMIT-depth",
                span,
                "more than {} nested calls (calling `{name}`)",
                self.max_depth
            );
        }
        self.depth += 1;
        let r = body(self);
        self.depth -= 1;
        r
    }
}
