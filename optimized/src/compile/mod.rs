//! Compilation: a well-formed module becomes an [`Executable`], a plan per Relax
//! function (its global functions and every function literal inside them), the
//! module's PrimFuncs prepared for `call_tir`, and its constants.

mod check;
mod free;
mod func;
mod fuse;
mod live;
pub mod plan;
pub mod shape;

use crate::buffer::{Memory, Pool};
use crate::error::CompileError;
use crate::tensor::Tensor;
use crate::tir::{TirBackend, TirFunc};
use crate::value::{Closure, Value};
use func::{Captures, FnLowering};
use plan::FuncPlan;
use spec_model::grammar::{AttrValue, BaseFunc, Function, IRModule, NDArray, StructInfo, Var};
use spec_model::struct_info::{derive_struct_info, SyntacticProver};
use spec_model::well_formed::check_well_formed;
use std::collections::HashMap;
use std::rc::Rc;

/// A compiled module: what [`crate::Engine`] runs.
pub struct Executable {
    pub(crate) funcs: Vec<FuncPlan>,
    /// Each global's value, by global index: a closure with nothing captured, or a PrimFunc.
    pub(crate) globals: Vec<Value>,
    pub(crate) global_names: HashMap<String, usize>,
    pub(crate) tir: Vec<TirFunc>,
    pub(crate) tir_names: Vec<String>,
    /// PrimFuncs by `global_symbol`: the packed functions they register (SEM-8).
    pub(crate) tir_symbols: HashMap<String, usize>,
    /// Constants, copied into a fresh tensor each time one is evaluated (SEM-1).
    pub(crate) constants: Vec<Tensor>,
    /// Dead buffers kept for the next run's tensors (a run's budget is its own).
    pub(crate) pool: Rc<Pool>,
}

impl Executable {
    /// The PrimFuncs the interpreter runs although native code was asked for, with why
    /// the code generator declined each (the differential tester wants none of its
    /// kernels here: a construct the generator makes is one native code must cover).
    pub fn interpreted_prim_funcs(&self) -> Vec<(String, String)> {
        self.tir
            .iter()
            .zip(&self.tir_names)
            .filter(|(t, _)| t.backend() == TirBackend::Native)
            .filter_map(|(t, name)| t.interpreted_because().map(|why| (name.clone(), why.to_string())))
            .collect()
    }

    /// The names of the module's global functions.
    pub fn functions(&self) -> impl Iterator<Item = &str> {
        self.global_names.keys().map(|s| s.as_str())
    }
}

/// The state of compiling one module.
pub(crate) struct Module<'m> {
    m: &'m IRModule,
    funcs: Vec<Option<FuncPlan>>,
    global_names: HashMap<String, usize>,
    constants: Vec<Tensor>,
    constant_memory: Rc<Memory>,
    /// The StructInfo derivation gave each variable (for choosing kernels).
    statics: HashMap<u64, StructInfo>,
}

/// Compiles a well-formed module (normalized or not; the checker's other rules are the
/// caller's to have run: the engine runs what the checker accepts).
pub fn compile(m: &IRModule, tir_backend: TirBackend) -> Result<Executable, CompileError> {
    let errors: Vec<_> = check_well_formed(m).into_iter().filter(|d| d.is_error()).collect();
    if !errors.is_empty() {
        return Err(CompileError::IllFormed(errors));
    }
    let mut statics = HashMap::new();
    for (_, v, si) in derive_struct_info(m, &SyntacticProver).bindings {
        statics.insert(v.id(), si);
    }
    let mut module = Module {
        m,
        funcs: Vec::new(),
        global_names: HashMap::new(),
        constants: Vec::new(),
        constant_memory: Memory::new(usize::MAX),
        statics,
    };
    let mut globals = Vec::new();
    let mut tir = Vec::new();
    let mut tir_names = Vec::new();
    let mut tir_symbols = HashMap::new();
    let mut relax = Vec::new();
    for (i, (gv, f)) in m.functions.iter().enumerate() {
        module.global_names.insert(gv.name.clone(), i);
        globals.push(match f {
            BaseFunc::Relax(func) => {
                let index = module.funcs.len();
                module.funcs.push(None);
                relax.push((index, gv.name.clone(), func.clone()));
                Value::Closure(Rc::new(Closure { func: index, captured: Box::new([]), shapes: Box::new([]) }))
            }
            BaseFunc::Tir(pf) => {
                if let Some(AttrValue::Str(sym)) = pf.attrs.get("global_symbol") {
                    tir_symbols.entry(sym.clone()).or_insert(tir.len());
                }
                tir.push(TirFunc::compile(pf, &gv.name, tir_backend));
                tir_names.push(gv.name.clone());
                Value::PrimFunc(tir.len() - 1)
            }
        });
    }
    let none = Captures { vars: Vec::new(), shapes: Vec::new() };
    for (index, name, f) in relax {
        let plan = FnLowering::new(&mut module).function(&f, name, &none, None);
        module.funcs[index] = Some(plan);
    }
    let funcs = module.funcs.into_iter().flatten().collect();
    Ok(Executable {
        funcs,
        globals,
        global_names: module.global_names,
        tir,
        tir_names,
        tir_symbols,
        constants: module.constants,
        pool: Pool::new(),
    })
}

impl Module<'_> {
    /// The index of a constant's template (`None` for a malformed array).
    fn constant(&mut self, a: &NDArray) -> Option<usize> {
        let t = Tensor::from_ndarray(a, &self.constant_memory).ok()??;
        self.constants.push(t);
        Some(self.constants.len() - 1)
    }

    fn global_index(&self, name: &str) -> Option<usize> {
        self.global_names.get(name).copied().filter(|_| self.m.get(name).is_some())
    }

    fn static_sinfo(&self, v: &Var) -> Option<StructInfo> {
        self.statics.get(&v.id()).cloned().or_else(|| v.annotation().cloned())
    }

    /// Compiles a function literal; returns its index.
    fn nested_function(&mut self, f: &Function, name: String, captures: &Captures, self_var: Option<&Var>) -> usize {
        let index = self.funcs.len();
        self.funcs.push(None);
        let plan = FnLowering::new(self).function(f, name, captures, self_var);
        self.funcs[index] = Some(plan);
        index
    }
}
