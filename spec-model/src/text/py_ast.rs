//! The Python-syntax tree the `.rx` parser builds before giving it Relax meaning
//! (a subset of Python's own `ast` module, with spans).

use crate::span::Span;

#[derive(Clone, Debug)]
pub struct PyExpr {
    pub kind: PyExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Pos,
    Not,
    Invert,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    MatMul,
    BitAnd,
    BitOr,
    BitXor,
    LShift,
    RShift,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtE,
    Gt,
    GtE,
}

#[derive(Clone, Debug)]
pub struct Keyword {
    pub name: String,
    pub name_span: Span,
    pub value: PyExpr,
}

#[derive(Clone, Debug)]
pub enum PyExprKind {
    Name(String),
    /// `None` when the literal does not fit in 128 bits.
    Int(Option<i128>),
    Float(f64),
    Str(String),
    Bool(bool),
    NoneLit,
    Attribute {
        value: Box<PyExpr>,
        attr: String,
        attr_span: Span,
    },
    Call {
        func: Box<PyExpr>,
        args: Vec<PyExpr>,
        keywords: Vec<Keyword>,
    },
    Subscript {
        value: Box<PyExpr>,
        index: Box<PyExpr>,
    },
    /// `lower:upper` (only inside a subscript).
    Slice {
        lower: Option<Box<PyExpr>>,
        upper: Option<Box<PyExpr>>,
        step: Option<Box<PyExpr>>,
    },
    Tuple(Vec<PyExpr>),
    List(Vec<PyExpr>),
    /// A large numeric list as `R.const`'s value, read whole by the lexer.
    NumArray(std::rc::Rc<super::num_array::NumArray>),
    Dict(Vec<(PyExpr, PyExpr)>),
    Unary {
        op: UnaryOp,
        operand: Box<PyExpr>,
    },
    Binary {
        op: BinOp,
        left: Box<PyExpr>,
        right: Box<PyExpr>,
    },
    BoolOp {
        op: BoolOp,
        left: Box<PyExpr>,
        right: Box<PyExpr>,
    },
    Compare {
        op: CmpOp,
        left: Box<PyExpr>,
        right: Box<PyExpr>,
    },
    /// `lambda a, b: body`: only as `R.layout_transform`'s index map.
    Lambda {
        params: Vec<(String, crate::span::Span)>,
        body: Box<PyExpr>,
    },
}

impl PyExpr {
    /// The dotted path of a name or attribute chain: `R.nn.relu` → `["R", "nn", "relu"]`.
    pub fn dotted(&self) -> Option<Vec<&str>> {
        match &self.kind {
            PyExprKind::Name(n) => Some(vec![n.as_str()]),
            PyExprKind::Attribute { value, attr, .. } => {
                let mut v = value.dotted()?;
                v.push(attr.as_str());
                Some(v)
            }
            _ => None,
        }
    }

    /// `Some("R.add")` for a dotted path, for messages and dispatch.
    pub fn dotted_name(&self) -> Option<String> {
        self.dotted().map(|v| v.join("."))
    }

    pub fn describe(&self) -> &'static str {
        match &self.kind {
            PyExprKind::Name(_) => "a name",
            PyExprKind::Int(_) => "an integer",
            PyExprKind::Float(_) => "a float",
            PyExprKind::Str(_) => "a string",
            PyExprKind::Bool(_) => "a boolean",
            PyExprKind::NoneLit => "`None`",
            PyExprKind::Attribute { .. } => "an attribute",
            PyExprKind::Call { .. } => "a call",
            PyExprKind::Subscript { .. } => "a subscript",
            PyExprKind::Slice { .. } => "a slice",
            PyExprKind::Tuple(_) => "a tuple",
            PyExprKind::List(_) => "a list",
            PyExprKind::NumArray(_) => "a numeric list",
            PyExprKind::Dict(_) => "a dict",
            PyExprKind::Unary { .. } => "a unary operation",
            PyExprKind::Binary { .. } => "an arithmetic operation",
            PyExprKind::BoolOp { .. } => "a boolean operation",
            PyExprKind::Compare { .. } => "a comparison",
            PyExprKind::Lambda { .. } => "a lambda",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub span: Span,
    pub annotation: Option<PyExpr>,
    pub default: Option<PyExpr>,
}

#[derive(Clone, Debug)]
pub struct PyStmt {
    pub kind: PyStmtKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum PyStmtKind {
    FunctionDef {
        name: String,
        name_span: Span,
        decorators: Vec<PyExpr>,
        /// PEP 695 type parameters, `def f[m, n: int](...)`: the names and their spans.
        type_params: Vec<(String, Span)>,
        params: Vec<Param>,
        returns: Option<PyExpr>,
        body: Vec<PyStmt>,
    },
    ClassDef {
        name: String,
        name_span: Span,
        decorators: Vec<PyExpr>,
        bases: Vec<PyExpr>,
        body: Vec<PyStmt>,
    },
    Assign {
        target: PyExpr,
        value: PyExpr,
    },
    AnnAssign {
        target: PyExpr,
        annotation: PyExpr,
        value: Option<PyExpr>,
    },
    AugAssign {
        target: PyExpr,
        op: BinOp,
        value: PyExpr,
    },
    Expr(PyExpr),
    Return(Option<PyExpr>),
    If {
        test: PyExpr,
        body: Vec<PyStmt>,
        orelse: Vec<PyStmt>,
    },
    For {
        target: PyExpr,
        iter: PyExpr,
        body: Vec<PyStmt>,
    },
    With {
        context: PyExpr,
        target: Option<PyExpr>,
        body: Vec<PyStmt>,
    },
    Pass,
    /// `import m` / `from m import a, b`: recorded, given no meaning.
    Import {
        module: String,
    },
}
