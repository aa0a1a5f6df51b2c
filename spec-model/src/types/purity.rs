//! The «purity» rules shared by type checking and StructInfo derivation: which calls
//! are pure (TY-10.1.1, TY-11.2.1) and how a function's purity follows from its
//! attributes and its body (TY-11.2.2, TY-11.2.3).
//!
//! Reading (proofs-notes/types.md, T-5): the calls a binding or a function body
//! "contains" are the calls it performs: those outside nested function literals, whose
//! calls happen when the nested function is called and count toward its own purity.

use crate::diagnostic::Diagnostic;
use crate::grammar::{AttrValue, Call, ExprKind, Function};
use crate::ops::OpRef;
use crate::span::Span;

/// Whether `call` is pure; `callee_pure` is the purity of the callee's function type
/// when it has one (`None` for packed functions and non-functions). `Err` says why not.
/// Pure calls: an `Op` registered pure; an `ExternFunc` call with the `pure=True`
/// attribute; a callee whose function type is pure.
pub fn call_purity(call: &Call, callee_pure: Option<bool>) -> Result<(), String> {
    match &call.op.kind {
        ExprKind::Op(OpRef::Registered(op)) if op.def().pure => Ok(()),
        ExprKind::Op(OpRef::Registered(op)) => Err(format!("`{op}` is an impure operator")),
        ExprKind::Op(OpRef::Unregistered(name)) => {
            Err(format!("`{name}` is not a registered operator, so it is not known to be pure"))
        }
        ExprKind::ExternFunc { global_symbol } => match call.attrs.get("pure") {
            Some(AttrValue::Bool(true)) => Ok(()),
            _ => Err(format!("the packed function `{global_symbol}` is called without the `pure=True` attribute")),
        },
        _ => match callee_pure {
            Some(true) => Ok(()),
            Some(false) => Err("the callee's function type is impure".into()),
            None => Err("the callee is not a function known to be pure".into()),
        },
    }
}

/// The purity scan of one function body (TY-11.2.1): the first impure call the body
/// performs, with where it is and why it is impure. A nested function literal's body
/// gets its own.
#[derive(Default)]
pub struct FnCx {
    pub impure: Option<(Span, String)>,
}

impl FnCx {
    /// Notes the call `c` at `span` (`callee_pure` as for [`call_purity`]); only the
    /// first impure call is kept.
    pub fn note_call(&mut self, c: &Call, callee_pure: Option<bool>, span: Span) {
        if self.impure.is_none() {
            if let Err(why) = call_purity(c, callee_pure) {
                self.impure = Some((span, why));
            }
        }
    }
}

/// The purity a global's signature states before its body is checked: pure when
/// annotated `pure=True` or `force_pure` (TY-1 and SI-D-1 put it in `Γ` and `Δ`).
pub fn signature_purity(f: &Function) -> bool {
    declared_purity(f) == Some(true) || is_force_pure(f)
}

/// The function's annotated purity (the `pure` attribute), if given.
pub fn declared_purity(f: &Function) -> Option<bool> {
    match f.attrs.get("pure") {
        Some(AttrValue::Bool(p)) => Some(*p),
        _ => None,
    }
}

/// Whether the function carries `force_pure` (TVM spells it `relax.force_pure`).
pub fn is_force_pure(f: &Function) -> bool {
    ["force_pure", "relax.force_pure"].iter().any(|k| matches!(f.attrs.get(k), Some(AttrValue::Bool(true))))
}

/// TY-11.2.2 and TY-11.2.3: the function's purity `p` from its annotation and the
/// purity `p'` inferred from its body (`impure_call`: the first impure call, if any).
/// An annotated pure function with an impure call is an error unless `force_pure`
/// holds, which makes the function pure and warns.
pub fn resolve_purity(f: &Function, impure_call: Option<&(Span, String)>, span: Span) -> (bool, Vec<Diagnostic>) {
    let inferred = impure_call.is_none();
    let mut diags = Vec::new();
    if is_force_pure(f) {
        if let Some((at, why)) = impure_call {
            diags.push(
                Diagnostic::warning("TY-11.2.3", "a `force_pure` function performs an impure call", *at)
                    .with_label(why.clone())
                    .with_secondary(span, "treated as pure because of `force_pure`"),
            );
        }
        return (true, diags);
    }
    match (declared_purity(f), impure_call) {
        (Some(true), Some((at, why))) => {
            diags.push(
                Diagnostic::error("TY-11.2.2", "a function annotated pure performs an impure call", *at)
                    .with_label(why.clone())
                    .with_secondary(span, "declared pure here (`pure=False` or `force_pure` would allow it)"),
            );
            (true, diags)
        }
        (Some(p), _) => (p, diags),
        (None, _) => (inferred, diags),
    }
}
