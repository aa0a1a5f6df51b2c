//! The module-level rules TY-1 and SI-D-1 have one shape: every global's signature, as
//! annotated, is in the context first (so recursive and mutually recursive calls see
//! it, and it is a sound fallback for any other reference); then each global Relax
//! function is checked, callees first ([`globals_callee_first`]), and what its body
//! gives replaces its annotated signature, so a caller sees the checked signature of a
//! callee without a return annotation.

use crate::grammar::{BaseFunc, Function, IRModule};
use crate::well_formed::globals_callee_first;
use std::collections::HashMap;

/// One rule system's judgement about global functions (a type for TY-1, a StructInfo
/// for SI-D-1) and how it checks one.
pub(crate) trait GlobalRule {
    type Judgement: Clone;
    /// A global's judgement from its annotations alone.
    fn declared(f: &BaseFunc) -> Self::Judgement;
    /// Checks the global Relax function `name` and gives its judgement.
    fn global_function(&mut self, name: &str, f: &Function) -> Self::Judgement;
    /// Each global's judgement so far, by name: what a `GlobalVar` refers to.
    fn globals(&mut self) -> &mut HashMap<String, Self::Judgement>;
}

/// Checks every global Relax function of `m` under `rule`; returns their judgements in
/// module order.
pub(crate) fn check_globals<R: GlobalRule>(m: &IRModule, rule: &mut R) -> Vec<(String, R::Judgement)> {
    for (gv, f) in &m.functions {
        rule.globals().insert(gv.name.clone(), R::declared(f));
    }
    for name in globals_callee_first(m) {
        let Some(BaseFunc::Relax(f)) = m.get(&name) else { continue };
        let judgement = rule.global_function(&name, f);
        rule.globals().insert(name, judgement);
    }
    let globals = rule.globals();
    m.functions
        .iter()
        .filter(|(_, f)| matches!(f, BaseFunc::Relax(_)))
        .map(|(gv, f)| (gv.name.clone(), globals.get(&gv.name).cloned().unwrap_or_else(|| R::declared(f))))
        .collect()
}
