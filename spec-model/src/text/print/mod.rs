//! The canonical printer of the `.rx` format, built on `pretty` (width-aware).
//!
//! Printing is the inverse of parsing for every program the parser can produce:
//! `parse(print(p))` is alpha-equivalent to `p`. Names are made unique within each
//! global function (a shadowed `x` prints as `x_1`, as TVM's printer does), so the
//! printed text never depends on Python's shadowing rules.

mod dialect;
mod literal;
mod names;
mod relax;
mod scalar;
mod sinfo;
mod tir;

use crate::grammar::{Expr, IRModule, PrimExpr, StructInfo};
pub use dialect::Dialect;
use pretty::RcDoc;

pub(crate) type Doc = RcDoc<'static, ()>;

/// The default line width of `oracle fmt`.
pub const DEFAULT_WIDTH: usize = 100;

pub(crate) fn txt(s: impl Into<String>) -> Doc {
    RcDoc::text(s.into())
}

/// `items` separated by `sep`, as a balanced tree of appends: `RcDoc::intersperse`
/// nests one level per item, and dropping a document nested 10^5 deep overflows the
/// stack (a constant of 10^6 elements, a function of 10^5 bindings).
pub(crate) fn joined(items: Vec<Doc>, sep: Doc) -> Doc {
    fn go(items: &mut [Option<Doc>], sep: &Doc) -> Doc {
        match items.len() {
            0 => RcDoc::nil(),
            1 => items[0].take().unwrap_or_else(RcDoc::nil),
            n => {
                let (l, r) = items.split_at_mut(n / 2);
                go(l, sep).append(sep.clone()).append(go(r, sep))
            }
        }
    }
    go(&mut items.into_iter().map(Some).collect::<Vec<_>>(), &sep)
}

/// `head(a, b, c)`, breaking after `(` and between arguments (with a trailing
/// comma) when it does not fit.
pub(crate) fn call(head: impl Into<String>, args: Vec<Doc>) -> Doc {
    bracketed(txt(head.into() + "("), args, ")")
}

pub(crate) fn bracketed(open: Doc, items: Vec<Doc>, close: &'static str) -> Doc {
    bracketed_doc(open, items, txt(close))
}

/// Like [`bracketed`], with any document as the closing part (e.g. `) -> R.Tensor`),
/// so that the items break before the closing part does.
pub(crate) fn bracketed_doc(open: Doc, items: Vec<Doc>, close: Doc) -> Doc {
    if items.is_empty() {
        return open.append(close);
    }
    let sep = txt(",").append(RcDoc::line());
    let trailing = txt(",").flat_alt(RcDoc::nil());
    open.append(RcDoc::line_().append(joined(items, sep)).append(trailing).nest(4))
        .append(RcDoc::line_())
        .append(close)
        .group()
}

/// A Python tuple: `(a, b)`, `(a,)`, `()`.
pub(crate) fn tuple(items: Vec<Doc>) -> Doc {
    if items.len() == 1 {
        let one = items.into_iter().next().unwrap_or_else(RcDoc::nil);
        return txt("(").append(one).append(txt(",)")).group();
    }
    bracketed(txt("("), items, ")")
}

pub(crate) fn list(items: Vec<Doc>) -> Doc {
    bracketed(txt("["), items, "]")
}

/// `header:` followed by the indented statements (`pass` if there are none).
pub(crate) fn block(header: Doc, body: Vec<Doc>) -> Doc {
    let body = if body.is_empty() { vec![txt("pass")] } else { body };
    header.append(txt(":")).append(RcDoc::hardline().append(joined(body, RcDoc::hardline())).nest(4))
}

pub(crate) fn render(doc: Doc, width: usize) -> String {
    let mut out = String::new();
    for line in doc.pretty(width).to_string().lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Prints a module in canonical form.
pub fn print_module(m: &IRModule, width: usize) -> String {
    print_module_in(m, width, Dialect::Rx)
}

/// Prints a module in the given dialect.
pub fn print_module_in(m: &IRModule, width: usize, dialect: Dialect) -> String {
    render(relax::module(m, dialect), width)
}

/// Prints an expression on its own (variables by their name hints).
pub fn print_expr(e: &Expr) -> String {
    render(relax::standalone_expr(e), DEFAULT_WIDTH).trim_end().to_string()
}

/// A StructInfo on one line (for messages and `--show-sinfo`).
pub fn print_struct_info(s: &StructInfo) -> String {
    render(relax::standalone_struct_info(s), usize::MAX / 4).trim_end().to_string()
}

pub fn print_prim_expr(e: &PrimExpr) -> String {
    render(relax::standalone_prim_expr(e), DEFAULT_WIDTH).trim_end().to_string()
}
