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
            PyStmtKind::Assign { target, value } if is_tuple(target) => match declarations(target, value, s.span) {
                Some(each) => out.extend(each),
                None => unpack(target, value, s.span, &mut out)?,
            },
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

/// `m, n = T.int64(), T.int64()`: shape-variable declarations written together, as
/// one `m = T.int64()` per name (there is no tuple: each declares its own variable);
/// `None` for any other assignment.
fn declarations(target: &PyExpr, value: &PyExpr, span: Span) -> Option<Vec<PyStmt>> {
    let (PyExprKind::Tuple(names) | PyExprKind::List(names)) = &target.kind else { return None };
    let PyExprKind::Tuple(values) = &value.kind else { return None };
    let all = names.len() == values.len()
        && names.iter().all(|n| matches!(n.kind, PyExprKind::Name(_)))
        && values.iter().all(|v| super::relax_fn::shape_var_declaration(v).is_some());
    all.then(|| {
        names
            .iter()
            .zip(values)
            .map(|(n, v)| PyStmt { kind: PyStmtKind::Assign { target: n.clone(), value: v.clone() }, span })
            .collect()
    })
}

/// `stmts` with the declaration tuples (`m, n = T.int64(), T.int64()`) split, the only
/// unpacking a TIR function body holds.
pub(super) fn split_declarations(stmts: &[PyStmt]) -> Cow<'_, [PyStmt]> {
    let split = |s: &PyStmt| match &s.kind {
        PyStmtKind::Assign { target, value } => declarations(target, value, s.span),
        _ => None,
    };
    if !stmts.iter().any(|s| split(s).is_some()) {
        return Cow::Borrowed(stmts);
    }
    Cow::Owned(stmts.iter().flat_map(|s| split(s).unwrap_or_else(|| vec![s.clone()])).collect())
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
