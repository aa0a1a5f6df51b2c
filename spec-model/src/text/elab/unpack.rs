//! Tuple unpacking in Relax function bodies, `a, b = e`, as Relax's StructInfo-era
//! tests write it. Desugared before elaboration into `t = e`, `a = t[0]`, `b = t[1]`
//! (a tuple binding, then a `TupleGetItem` binding per name), so that every later
//! step sees plain bindings. `t` is named after the targets joined by `,`, which no
//! source name contains, so it shadows nothing; it prints as `a_b`. The AST has no
//! unpacking node, so the printer writes the desugared bindings.

use crate::span::Span;
use crate::text::error::{ParseError, ParseResult};
use crate::text::py_ast::{PyExpr, PyExprKind, PyStmt, PyStmtKind};
use std::borrow::Cow;

/// `stmts` with every unpacking assignment desugared, in `if` branches and `with`
/// blocks too (a nested function's body is desugared when it is elaborated).
pub(super) fn desugar(stmts: &[PyStmt]) -> ParseResult<Cow<'_, [PyStmt]>> {
    if !stmts.iter().any(unpacks) {
        return Ok(Cow::Borrowed(stmts));
    }
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        match &s.kind {
            PyStmtKind::Assign { target, value } if is_tuple(target) => unpack(target, value, s.span, &mut out)?,
            PyStmtKind::If { test, body, orelse } => out.push(PyStmt {
                kind: PyStmtKind::If {
                    test: test.clone(),
                    body: desugar(body)?.into_owned(),
                    orelse: desugar(orelse)?.into_owned(),
                },
                span: s.span,
            }),
            PyStmtKind::With { context, target, body } => out.push(PyStmt {
                kind: PyStmtKind::With {
                    context: context.clone(),
                    target: target.clone(),
                    body: desugar(body)?.into_owned(),
                },
                span: s.span,
            }),
            _ => out.push(s.clone()),
        }
    }
    Ok(Cow::Owned(out))
}

fn is_tuple(e: &PyExpr) -> bool {
    matches!(e.kind, PyExprKind::Tuple(_) | PyExprKind::List(_))
}

/// Whether `s` is, or holds outside a nested function, an unpacking assignment.
fn unpacks(s: &PyStmt) -> bool {
    match &s.kind {
        PyStmtKind::Assign { target, .. } => is_tuple(target),
        PyStmtKind::If { body, orelse, .. } => body.iter().any(unpacks) || orelse.iter().any(unpacks),
        PyStmtKind::With { body, .. } => body.iter().any(unpacks),
        _ => false,
    }
}

fn unpack(target: &PyExpr, value: &PyExpr, span: Span, out: &mut Vec<PyStmt>) -> ParseResult<()> {
    let (PyExprKind::Tuple(items) | PyExprKind::List(items)) = &target.kind else { unreachable!("is_tuple") };
    let mut names = Vec::with_capacity(items.len());
    for item in items {
        match &item.kind {
            PyExprKind::Name(n) => names.push(n.as_str()),
            _ => {
                return Err(ParseError::syntax(
                    format!("a tuple is unpacked into names, not {}", item.describe()),
                    item.span,
                ))
            }
        }
    }
    if names.is_empty() {
        return Err(ParseError::syntax("nothing to unpack into", target.span));
    }
    let tuple = PyExpr { kind: PyExprKind::Name(names.join(",")), span: target.span };
    out.push(PyStmt { kind: PyStmtKind::Assign { target: tuple.clone(), value: value.clone() }, span });
    for (i, item) in items.iter().enumerate() {
        let index = PyExpr { kind: PyExprKind::Int(Some(i as i128)), span: item.span };
        let project = PyExpr {
            kind: PyExprKind::Subscript { value: Box::new(tuple.clone()), index: Box::new(index) },
            span: item.span,
        };
        out.push(PyStmt { kind: PyStmtKind::Assign { target: item.clone(), value: project }, span });
    }
    Ok(())
}
