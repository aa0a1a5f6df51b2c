//! The TIR `PrimFunc` subset that `call_tir` needs (the spec leaves TIR to TVM;
//! this is the part the reference interpreter runs).
//!
//! Loops and block domains keep `begin`/`end` (as written in `range(b, e)`) rather
//! than TVM's `min`/`extent`, so that printing and parsing are inverse.

use super::{fresh_id, Attrs, DataType, FloatLit, PrimBinOp, PrimVar};
use crate::span::Span;
use std::fmt;
use std::rc::Rc;

/// `@T.prim_func def f(params): body`.
#[derive(Clone, Debug, PartialEq)]
pub struct PrimFunc {
    pub params: Vec<TirParam>,
    pub body: Vec<Stmt>,
    pub attrs: Attrs,
    pub span: Span,
}

/// A parameter: a scalar variable (`n: T.int64`), a bare handle (`a: T.handle`), or a
/// handle with its buffer (`A: T.Buffer(shape, dtype)` or `T.match_buffer(a, ...)`).
#[derive(Clone, Debug, PartialEq)]
pub struct TirParam {
    pub var: PrimVar,
    pub buffer: Option<Buffer>,
}

/// A TIR buffer: a named n-dimensional array with a (possibly symbolic) shape.
#[derive(Clone)]
pub struct Buffer(Rc<BufferNode>);

#[derive(Debug)]
pub struct BufferNode {
    pub id: u64,
    pub name: String,
    pub shape: Vec<TirExpr>,
    pub dtype: DataType,
    /// Storage scope (`"global"` unless `scope=` says otherwise); no meaning here.
    pub scope: String,
    pub span: Span,
}

impl Buffer {
    pub fn new(name: impl Into<String>, shape: Vec<TirExpr>, dtype: DataType, scope: String, span: Span) -> Buffer {
        Buffer(Rc::new(BufferNode { id: fresh_id(), name: name.into(), shape, dtype, scope, span }))
    }
    pub fn id(&self) -> u64 {
        self.0.id
    }
    pub fn name(&self) -> &str {
        &self.0.name
    }
    pub fn shape(&self) -> &[TirExpr] {
        &self.0.shape
    }
    pub fn dtype(&self) -> DataType {
        self.0.dtype
    }
    pub fn scope(&self) -> &str {
        &self.0.scope
    }
    pub fn span(&self) -> Span {
        self.0.span
    }
}

impl PartialEq for Buffer {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}
impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "buffer {}#{}", self.0.name, self.0.id)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TirExpr {
    pub kind: Box<TirExprKind>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TirExprKind {
    Var(PrimVar),
    IntImm {
        value: i64,
        dtype: DataType,
    },
    FloatImm {
        value: FloatLit,
        dtype: DataType,
    },
    Binary {
        op: PrimBinOp,
        a: TirExpr,
        b: TirExpr,
    },
    Not(TirExpr),
    /// `T.Select(c, a, b)`: both sides are evaluated.
    Select {
        cond: TirExpr,
        then_value: TirExpr,
        else_value: TirExpr,
    },
    Cast {
        dtype: DataType,
        value: TirExpr,
    },
    BufferLoad {
        buffer: Buffer,
        indices: Vec<TirExpr>,
    },
    Call {
        op: Intrinsic,
        args: Vec<TirExpr>,
    },
}

/// The math intrinsics the subset knows (`T.exp(x)`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Intrinsic {
    Exp,
    Log,
    Sqrt,
    Tanh,
    Sigmoid,
    Fabs,
    Floor,
    Ceil,
    Round,
    Pow,
    /// `T.if_then_else(c, a, b)`: only the chosen side is evaluated.
    IfThenElse,
    /// `1 / sqrt(x)`.
    Rsqrt,
    Sin,
    Cos,
    /// The error function.
    Erf,
    /// `a & b` on integers (their two's-complement bits).
    BitwiseAnd,
    /// `a | b` on integers.
    BitwiseOr,
    /// `a ^ b` on integers.
    BitwiseXor,
    /// `~a` on an integer: every bit of its dtype flipped.
    BitwiseNot,
    /// `a << k`: `a * 2**k`, which must fit the dtype; `0 <= k < bits`.
    ShiftLeft,
    /// `a >> k`: `floor(a / 2**k)` (arithmetic for signed, logical for unsigned); `0 <= k < bits`.
    ShiftRight,
}

impl Intrinsic {
    pub const ALL: [Intrinsic; 21] = [
        Intrinsic::Exp,
        Intrinsic::Log,
        Intrinsic::Sqrt,
        Intrinsic::Tanh,
        Intrinsic::Sigmoid,
        Intrinsic::Fabs,
        Intrinsic::Floor,
        Intrinsic::Ceil,
        Intrinsic::Round,
        Intrinsic::Pow,
        Intrinsic::IfThenElse,
        Intrinsic::Rsqrt,
        Intrinsic::Sin,
        Intrinsic::Cos,
        Intrinsic::Erf,
        Intrinsic::BitwiseAnd,
        Intrinsic::BitwiseOr,
        Intrinsic::BitwiseXor,
        Intrinsic::BitwiseNot,
        Intrinsic::ShiftLeft,
        Intrinsic::ShiftRight,
    ];
    /// The TVMScript name after `T.`.
    pub fn name(self) -> &'static str {
        match self {
            Intrinsic::Exp => "exp",
            Intrinsic::Log => "log",
            Intrinsic::Sqrt => "sqrt",
            Intrinsic::Tanh => "tanh",
            Intrinsic::Sigmoid => "sigmoid",
            Intrinsic::Fabs => "fabs",
            Intrinsic::Floor => "floor",
            Intrinsic::Ceil => "ceil",
            Intrinsic::Round => "round",
            Intrinsic::Pow => "pow",
            Intrinsic::IfThenElse => "if_then_else",
            Intrinsic::Rsqrt => "rsqrt",
            Intrinsic::Sin => "sin",
            Intrinsic::Cos => "cos",
            Intrinsic::Erf => "erf",
            Intrinsic::BitwiseAnd => "bitwise_and",
            Intrinsic::BitwiseOr => "bitwise_or",
            Intrinsic::BitwiseXor => "bitwise_xor",
            Intrinsic::BitwiseNot => "bitwise_not",
            Intrinsic::ShiftLeft => "shift_left",
            Intrinsic::ShiftRight => "shift_right",
        }
    }
    pub fn arity(self) -> usize {
        match self {
            Intrinsic::Pow => 2,
            op if op.is_bitwise_binary() => 2,
            Intrinsic::IfThenElse => 3,
            _ => 1,
        }
    }
    /// The two-operand integer intrinsics: operands promoted to one integer dtype.
    pub fn is_bitwise_binary(self) -> bool {
        matches!(
            self,
            Intrinsic::BitwiseAnd
                | Intrinsic::BitwiseOr
                | Intrinsic::BitwiseXor
                | Intrinsic::ShiftLeft
                | Intrinsic::ShiftRight
        )
    }
    /// The intrinsics on integers only (a float operand is an error).
    pub fn is_integer_only(self) -> bool {
        self.is_bitwise_binary() || self == Intrinsic::BitwiseNot
    }
    pub fn from_name(name: &str) -> Option<Intrinsic> {
        Intrinsic::ALL.into_iter().find(|i| i.name() == name)
    }
}

impl TirExpr {
    pub fn new(kind: TirExprKind, span: Span) -> TirExpr {
        TirExpr { kind: Box::new(kind), span }
    }

    pub fn is_literal(&self) -> bool {
        matches!(&*self.kind, TirExprKind::IntImm { .. } | TirExprKind::FloatImm { .. })
    }

    /// The dtype TIR gives this expression.
    pub fn dtype(&self) -> DataType {
        match &*self.kind {
            TirExprKind::Var(v) => v.dtype(),
            TirExprKind::IntImm { dtype, .. } | TirExprKind::FloatImm { dtype, .. } => *dtype,
            TirExprKind::Binary { op, a, .. } => op.result_dtype(a.dtype()),
            TirExprKind::Not(_) => DataType::bool(),
            TirExprKind::Select { then_value, .. } => then_value.dtype(),
            TirExprKind::Cast { dtype, .. } => *dtype,
            TirExprKind::BufferLoad { buffer, .. } => buffer.dtype(),
            TirExprKind::Call { op: Intrinsic::IfThenElse, args } => {
                args.get(1).map_or(DataType::void(), |a| a.dtype())
            }
            TirExprKind::Call { args, .. } => args.first().map_or(DataType::void(), |a| a.dtype()),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

/// How a loop was written; all kinds iterate sequentially here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForKind {
    /// `range(..)`, `T.serial(..)`, `T.grid(..)`.
    Serial,
    Parallel,
    Unroll,
    Vectorized,
    /// `T.thread_binding(n, thread="blockIdx.x")`: bound to a GPU thread axis (one of
    /// [`THREAD_TAGS`]); its iterations run in order here, as a race-free kernel's
    /// result does not depend on their order.
    ThreadBinding(&'static str),
}

/// The thread axes a loop may be bound to (TVM's thread tags).
pub const THREAD_TAGS: [&str; 10] = [
    "blockIdx.x",
    "blockIdx.y",
    "blockIdx.z",
    "threadIdx.x",
    "threadIdx.y",
    "threadIdx.z",
    "vthread",
    "vthread.x",
    "vthread.y",
    "vthread.z",
];

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `for var in range(begin, end)`; `T.grid(a, b)` is two nested serial loops.
    For {
        var: PrimVar,
        begin: TirExpr,
        end: TirExpr,
        kind: ForKind,
        body: Vec<Stmt>,
    },
    /// `buffer[indices] = value`.
    BufferStore {
        buffer: Buffer,
        indices: Vec<TirExpr>,
        value: TirExpr,
    },
    IfThenElse {
        cond: TirExpr,
        then_body: Vec<Stmt>,
        else_body: Vec<Stmt>,
    },
    Block(Box<Block>),
    /// `B = T.alloc_buffer(shape, dtype)`: a local buffer for the rest of the statement list.
    AllocBuffer(Buffer),
    /// `x: dtype = value`: a scalar bound for the rest of the statement list.
    Let {
        var: PrimVar,
        value: TirExpr,
    },
    /// `T.evaluate(e)`.
    Evaluate(TirExpr),
}

/// `with T.block("name"):` (also spelled `T.sblock`).
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub name: String,
    pub iter_vars: Vec<IterVar>,
    pub reads: Vec<BufferRegion>,
    pub writes: Vec<BufferRegion>,
    /// `T.where(cond)`: the block body runs only where it holds.
    pub predicate: Option<TirExpr>,
    /// `with T.init():` runs before the body on the first iteration of every reduce axis.
    pub init: Option<Vec<Stmt>>,
    pub body: Vec<Stmt>,
    /// `T.block_attr({...})`: annotations for schedules and code generators; they do
    /// not change what the block computes.
    pub annotations: std::collections::BTreeMap<String, crate::grammar::AttrValue>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IterKind {
    Spatial,
    Reduce,
}

/// `v = T.axis.spatial((begin, end), binding)` / `T.axis.reduce(...)` / one name of `T.axis.remap`.
#[derive(Clone, Debug, PartialEq)]
pub struct IterVar {
    pub var: PrimVar,
    pub kind: IterKind,
    pub begin: TirExpr,
    pub end: TirExpr,
    pub binding: TirExpr,
}

/// `A[i, 0:4]` in `T.reads` / `T.writes`.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferRegion {
    pub buffer: Buffer,
    pub region: Vec<RegionDim>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum RegionDim {
    Point(TirExpr),
    Range { begin: TirExpr, end: TirExpr },
}
