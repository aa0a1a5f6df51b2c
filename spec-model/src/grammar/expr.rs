//! Relax expressions, bindings and binding blocks (Grammar).

use super::{fresh_id, DataType, FloatLit, GlobalVar, NDArray, PrimExpr, StructInfo};
use crate::ops::{Op, OpRef};
use crate::span::Span;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// `Expr ::= Constant | Var | DataflowVar | GlobalVar | Tuple | SeqExpr | Function | If
/// | ExternFunc | Call | ShapeExpr | TupleGetItem | Op | PrimValue | StringImm | DataTypeImm`.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// `Constant(data: NDArray)`.
    Constant(Rc<NDArray>),
    /// `Var` and `DataflowVar` (told apart by [`Var::is_dataflow`]).
    Var(Var),
    GlobalVar(GlobalVar),
    Tuple(Vec<Expr>),
    SeqExpr(Box<SeqExpr>),
    Function(Rc<Function>),
    If(Box<If>),
    ExternFunc {
        global_symbol: String,
    },
    Call(Box<Call>),
    ShapeExpr(Vec<PrimExpr>),
    TupleGetItem {
        tuple_value: Box<Expr>,
        index: i64,
    },
    /// `Op(op_name)`, e.g. `relax.add` (written `R.add`).
    Op(OpRef),
    PrimValue(PrimExpr),
    StringImm(String),
    DataTypeImm(DataType),
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }
    /// The callee `Op(op)` of an operator call.
    pub fn op(op: Op) -> Expr {
        Expr::new(ExprKind::Op(OpRef::Registered(op)), Span::SYNTHETIC)
    }
    pub fn var(v: &Var) -> Expr {
        Expr::new(ExprKind::Var(v.clone()), Span::SYNTHETIC)
    }
    pub fn as_var(&self) -> Option<&Var> {
        match &self.kind {
            ExprKind::Var(v) => Some(v),
            _ => None,
        }
    }
}

/// A Relax variable (`Var` or `DataflowVar`). Identity is the `id`: two variables
/// may share a name hint (shadowing). The structural annotation belongs to the variable.
#[derive(Clone)]
pub struct Var(Rc<VarNode>);

#[derive(Debug)]
pub struct VarNode {
    pub id: u64,
    pub name: String,
    pub dataflow: bool,
    pub annotation: Option<StructInfo>,
    /// Where the variable is bound (parameter or binding LHS).
    pub span: Span,
}

impl Var {
    pub fn new(name: impl Into<String>, annotation: Option<StructInfo>, span: Span) -> Var {
        Var(Rc::new(VarNode { id: fresh_id(), name: name.into(), dataflow: false, annotation, span }))
    }
    pub fn new_dataflow(name: impl Into<String>, annotation: Option<StructInfo>, span: Span) -> Var {
        Var(Rc::new(VarNode { id: fresh_id(), name: name.into(), dataflow: true, annotation, span }))
    }
    pub fn id(&self) -> u64 {
        self.0.id
    }
    pub fn name(&self) -> &str {
        &self.0.name
    }
    pub fn is_dataflow(&self) -> bool {
        self.0.dataflow
    }
    pub fn annotation(&self) -> Option<&StructInfo> {
        self.0.annotation.as_ref()
    }
    pub fn span(&self) -> Span {
        self.0.span
    }
}

impl PartialEq for Var {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}
impl Eq for Var {}
impl std::hash::Hash for Var {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.id.hash(state)
    }
}
impl PartialOrd for Var {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Var {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.id.cmp(&other.0.id)
    }
}
impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.0.dataflow { "dfvar" } else { "var" };
        write!(f, "{kind} {}#{}", self.0.name, self.0.id)
    }
}

/// `SeqExpr(blocks, body)`.
#[derive(Clone, Debug, PartialEq)]
pub struct SeqExpr {
    pub blocks: Vec<BindingBlock>,
    pub body: Expr,
}

/// `If(cond, true_branch, false_branch)`.
#[derive(Clone, Debug, PartialEq)]
pub struct If {
    pub cond: Expr,
    pub true_branch: Expr,
    pub false_branch: Expr,
}

/// `Call(op, args, sinfo_args, attrs)` (the later draft's `sinfo_args` replace `type_args`).
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub op: Expr,
    pub args: Vec<Expr>,
    pub sinfo_args: Vec<StructInfo>,
    pub attrs: Attrs,
}

/// `Function(params, body, ret_struct_info, attrs)`. Functions are anonymous; a
/// binding or the module's `GlobalVar` names them.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub params: Vec<Var>,
    pub body: Expr,
    pub ret_struct_info: Option<StructInfo>,
    pub attrs: Attrs,
    pub span: Span,
}

impl Function {
    /// The `global_symbol` attribute (WF-11, WF-12), if present.
    pub fn global_symbol(&self) -> Option<&str> {
        match self.attrs.get("global_symbol") {
            Some(AttrValue::Str(s)) => Some(s),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// An ordinary `BindingBlock`.
    Binding,
    DataflowBlock,
}

/// `BindingBlock(bindings)` or `DataflowBlock(bindings)`.
#[derive(Clone, Debug, PartialEq)]
pub struct BindingBlock {
    pub kind: BlockKind,
    pub bindings: Vec<Binding>,
    pub span: Span,
}

impl BindingBlock {
    pub fn is_dataflow(&self) -> bool {
        self.kind == BlockKind::DataflowBlock
    }
}

/// `Binding ::= VarBinding(var, value) | MatchCast(var?, struct_info, value)`.
#[derive(Clone, Debug, PartialEq)]
pub enum Binding {
    VarBinding { var: Var, value: Expr, span: Span },
    MatchCast { var: Option<Var>, struct_info: StructInfo, value: Expr, span: Span },
}

impl Binding {
    pub fn var(&self) -> Option<&Var> {
        match self {
            Binding::VarBinding { var, .. } => Some(var),
            Binding::MatchCast { var, .. } => var.as_ref(),
        }
    }
    pub fn value(&self) -> &Expr {
        match self {
            Binding::VarBinding { value, .. } | Binding::MatchCast { value, .. } => value,
        }
    }
    pub fn span(&self) -> Span {
        match self {
            Binding::VarBinding { span, .. } | Binding::MatchCast { span, .. } => *span,
        }
    }
}

/// `Attrs`: named attribute values of calls and functions, kept sorted by name.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Attrs(pub BTreeMap<String, AttrValue>);

impl Attrs {
    pub fn get(&self, key: &str) -> Option<&AttrValue> {
        self.0.get(key)
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn insert(&mut self, key: impl Into<String>, value: AttrValue) {
        self.0.insert(key.into(), value);
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    None,
    Bool(bool),
    Int(i64),
    Float(FloatLit),
    Str(String),
    List(Vec<AttrValue>),
    Dict(BTreeMap<String, AttrValue>),
    /// `lambda i, j: (...)`: `R.layout_transform`'s `index_map`.
    IndexMap(super::IndexMap),
}
