//! Helpers shared by the integration tests: building ASTs directly, and reading the corpus.
#![allow(dead_code)]

use spec_model::grammar::*;
use spec_model::Span;
use std::path::{Path, PathBuf};
use std::rc::Rc;

pub const S: Span = Span::SYNTHETIC;

/// `R.<op>(args...)`.
pub fn op_call(op: &str, args: Vec<Expr>) -> Expr {
    Expr::new(
        ExprKind::Call(Box::new(Call {
            op: Expr::new(ExprKind::Op(spec_model::ops::OpRef::from_name(op)), S),
            args,
            sinfo_args: Vec::new(),
            attrs: Attrs::default(),
        })),
        S,
    )
}

pub fn seq(blocks: Vec<BindingBlock>, body: Expr) -> Expr {
    Expr::new(ExprKind::SeqExpr(Box::new(SeqExpr { blocks, body })), S)
}

pub fn block(kind: BlockKind, bindings: Vec<Binding>) -> BindingBlock {
    BindingBlock { kind, bindings, span: S }
}

pub fn bind(v: &Var, e: Expr) -> Binding {
    Binding::VarBinding { var: v.clone(), value: e, span: S }
}

/// A module with one public Relax function `main`.
pub fn module_of(params: Vec<Var>, body: Expr) -> IRModule {
    let mut attrs = Attrs::default();
    attrs.insert("global_symbol", AttrValue::Str("main".into()));
    let f = Function { params, body, ret_struct_info: None, attrs, span: S };
    IRModule {
        name: "Module".into(),
        functions: vec![(GlobalVar::new("main"), BaseFunc::Relax(Rc::new(f)))],
        attrs: Default::default(),
        span: S,
    }
}

/// Every `.rx` file under `corpus/` (or a subdirectory of it), sorted, with its text.
pub fn corpus_files(sub: &str) -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rx") {
                if let Ok(src) = std::fs::read_to_string(&p) {
                    out.push((p, src));
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus").join(sub), &mut out);
    out
}

/// The corpus programs that parse and are well-formed, normalized, with their paths:
/// what the static rules after normalization (SI-D, TY) see.
pub fn normalized_corpus_programs() -> Vec<(PathBuf, IRModule)> {
    let mut out = Vec::new();
    for (path, src) in corpus_files("") {
        let Ok(m) = spec_model::text::parse_module(&src) else { continue };
        if spec_model::well_formed::check_well_formed(&m).iter().any(|d| d.is_error()) {
            continue;
        }
        let Ok(n) = spec_model::normal_form::normalize(&m) else { continue };
        if spec_model::normal_form::check_normal_form(&n).is_empty() {
            out.push((path, n));
        }
    }
    out
}
