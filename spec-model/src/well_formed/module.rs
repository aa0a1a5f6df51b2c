//! Criteria on the module's globals: WF-11 (an externally linked function exists),
//! WF-12 (`global_symbol` equals the global's name).

use crate::diagnostic::Diagnostic;
use crate::grammar::{AttrValue, Attrs, BaseFunc, IRModule};
use crate::span::Span;

fn attrs_and_span(f: &BaseFunc) -> (&Attrs, Span) {
    match f {
        BaseFunc::Relax(func) => (&func.attrs, func.span),
        BaseFunc::Tir(func) => (&func.attrs, func.span),
    }
}

/// WF-11: at least one global function (Relax or TIR) is externally linked, i.e. has
/// a `global_symbol` attribute, so the module has an entry point.
pub fn wf11_externally_linked_function(m: &IRModule) -> Vec<Diagnostic> {
    if m.functions.iter().any(|(_, f)| attrs_and_span(f).0.get("global_symbol").is_some()) {
        return Vec::new();
    }
    let span = m.functions.first().map_or(m.span, |(_, f)| attrs_and_span(f).1);
    vec![Diagnostic::error("WF-11", "no global function is externally linked (none has a `global_symbol`)", span)
        .with_label("make one function public (drop `private=True`)")]
}

/// WF-12: a global function's `global_symbol`, when present, is a string equal to the
/// name of the global variable it is bound to.
pub fn wf12_global_symbol_matches_name(m: &IRModule) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (gv, f) in &m.functions {
        let (attrs, span) = attrs_and_span(f);
        match attrs.get("global_symbol") {
            None => {}
            Some(AttrValue::Str(s)) if *s == gv.name => {}
            Some(v) => out.push(
                Diagnostic::error(
                    "WF-12",
                    match v {
                        AttrValue::Str(s) => format!("the global_symbol \"{s}\" of `{}` is not its name", gv.name),
                        other => format!("the global_symbol of `{}` is not a string but {other:?}", gv.name),
                    },
                    span,
                )
                .with_label(format!("expected global_symbol \"{}\"", gv.name)),
            ),
        }
    }
    out
}
