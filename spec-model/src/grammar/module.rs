//! `IRModule` (Top-level Program Organization).

use super::{Function, PrimFunc};
use crate::span::Span;
use std::rc::Rc;

/// `GlobalVar(name_hint)`. Names are unique in a module, so the name is the identity.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalVar {
    pub name: String,
}

impl GlobalVar {
    pub fn new(name: impl Into<String>) -> GlobalVar {
        GlobalVar { name: name.into() }
    }
}

/// What a `GlobalVar` is bound to: a Relax `Function` or a TIR `PrimFunc`.
#[derive(Clone, Debug, PartialEq)]
pub enum BaseFunc {
    Relax(Rc<Function>),
    Tir(Rc<PrimFunc>),
}

/// `IRModule(funcs: {GlobalVar: Function | PrimFunc})`, in definition order.
#[derive(Clone, Debug, PartialEq)]
pub struct IRModule {
    /// The class name of `@I.ir_module class Name:` (printing only; no meaning).
    pub name: String,
    pub functions: Vec<(GlobalVar, BaseFunc)>,
    /// `I.module_attrs({...})`: the module's attributes (TVM's `IRModule.attrs`:
    /// `system_lib_prefix`, ...). Kept and printed; no rule reads them.
    pub attrs: super::Attrs,
    pub span: Span,
}

impl IRModule {
    pub fn get(&self, name: &str) -> Option<&BaseFunc> {
        self.functions.iter().find(|(gv, _)| gv.name == name).map(|(_, f)| f)
    }

    pub fn relax_functions(&self) -> impl Iterator<Item = (&GlobalVar, &Rc<Function>)> {
        self.functions.iter().filter_map(|(gv, f)| match f {
            BaseFunc::Relax(func) => Some((gv, func)),
            BaseFunc::Tir(_) => None,
        })
    }

    pub fn prim_funcs(&self) -> impl Iterator<Item = (&GlobalVar, &Rc<PrimFunc>)> {
        self.functions.iter().filter_map(|(gv, f)| match f {
            BaseFunc::Tir(func) => Some((gv, func)),
            BaseFunc::Relax(_) => None,
        })
    }
}
