//! The module-level rules TY-1 and SI-D-1 have one shape: every global's signature, as
//! annotated, is in the context first (so recursive and mutually recursive calls see
//! it, and it is a sound fallback for any other reference); then each global Relax
//! function is checked, callees first ([`globals_callee_first`]), and what its body
//! gives replaces its annotated signature, so a caller sees the checked signature of a
//! callee without a return annotation.
//!
//! Both passes also name each operator call the same way ([`OpCallSite`]): type
//! checking reads the StructInfo derivation gave a call (TY-7.1) by its site.

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
    // By name at once: `m.get` searches the list, quadratic over 10^5 functions.
    let by_name: std::collections::HashMap<&str, &BaseFunc> =
        m.functions.iter().map(|(gv, f)| (gv.name.as_str(), f)).collect();
    for name in globals_callee_first(m) {
        let Some(BaseFunc::Relax(f)) = by_name.get(name.as_str()) else { continue };
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

/// An operator call's place in a module: the global function it is in and its number
/// among that function's operator calls in evaluation order (parents before children,
/// left to right, nested functions' bodies included: the order of
/// [`walk_expr`](crate::grammar::visit::walk_expr)).
///
/// Derivation records each operator call's StructInfo by site and type checking reads
/// it back (TY-7.1). A site is the same in every copy of the module, where an address
/// is not. Nor can the binding's variable name the call: in normal form every call is
/// a binding's value, but a `MatchCast` binding may have no variable
/// (`R.match_cast(R.add(x, x), ...)` as a statement), and `check_types` also accepts
/// programs outside normal form, with calls nested in calls. Both passes meet the calls
/// in this order because each of their rules visits every subexpression once, in
/// evaluation order (`tests/op_call_sites.rs` checks the numbering on the corpus).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpCallSite {
    pub function: String,
    pub index: usize,
}

/// Numbers the operator calls of one global function as a pass meets them.
#[derive(Default)]
pub(crate) struct OpCallSites {
    function: String,
    met: usize,
}

impl OpCallSites {
    /// Starts on the global function `name`.
    pub(crate) fn start(&mut self, name: &str) {
        *self = OpCallSites { function: name.to_string(), met: 0 };
    }

    /// The site of the next operator call, to be taken before its arguments are visited.
    pub(crate) fn next(&mut self) -> OpCallSite {
        self.met += 1;
        OpCallSite { function: self.function.clone(), index: self.met - 1 }
    }
}
