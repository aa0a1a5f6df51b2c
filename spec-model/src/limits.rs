//! Budgets on what derivation may build (LIMIT-sinfo): a program can make StructInfo
//! and types grow without bound in few bindings (`t1 = (t0, t0)`, `t2 = (t1, t1)`, ...
//! doubles at each one, `t1 = (t0,)` deepens), and every later pass walks them as
//! trees. A derived StructInfo or type beyond the budget is reported where it is
//! derived and replaced by `Object`, so that checking goes on in bounded time.

use crate::grammar::{StructInfo, StructInfoKind, Type};

/// The most nodes a derived StructInfo or type may have (each shape dimension counts).
pub const MAX_STRUCT_INFO_NODES: usize = 100_000;
/// The deepest a derived StructInfo or type may nest.
pub const MAX_STRUCT_INFO_DEPTH: usize = 200;

/// `Err` says which budget `si` exceeds. Stops counting at the budget, so the cost is
/// bounded even when `si` shares subtrees that would be exponential as a tree.
pub fn struct_info_within_budget(si: &StructInfo) -> Result<(), String> {
    walk(si, |s| match &*s.kind {
        StructInfoKind::Shape { values: Some(vs), .. } => (vs.len(), Vec::new()),
        StructInfoKind::Tuple { fields } => (0, fields.iter().collect()),
        StructInfoKind::Func { params, ret, .. } => (0, params.iter().flatten().chain(std::iter::once(ret)).collect()),
        _ => (0, Vec::new()),
    })
}

/// [`struct_info_within_budget`] for a type.
pub fn type_within_budget(t: &Type) -> Result<(), String> {
    walk(t, |t| match t {
        Type::Tuple(fs) => (0, fs.iter().collect()),
        Type::Func { arg_types, ret_type, .. } => (0, arg_types.iter().chain(std::iter::once(&**ret_type)).collect()),
        _ => (0, Vec::new()),
    })
}

/// Counts nodes depth-first with an explicit stack; `children` gives a node's extra
/// leaves and its children.
fn walk<'a, T>(root: &'a T, children: impl Fn(&'a T) -> (usize, Vec<&'a T>)) -> Result<(), String> {
    let (mut nodes, mut stack) = (0usize, vec![(root, 1usize)]);
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_STRUCT_INFO_DEPTH {
            return Err(format!("nests deeper than {MAX_STRUCT_INFO_DEPTH} levels"));
        }
        let (leaves, kids) = children(node);
        nodes += 1 + leaves;
        if nodes > MAX_STRUCT_INFO_NODES {
            return Err(format!("has more than {MAX_STRUCT_INFO_NODES} nodes"));
        }
        stack.extend(kids.into_iter().map(|k| (k, depth + 1)));
    }
    Ok(())
}
