//! The executable form of a Relax function: numbered value slots and shape slots, and
//! a flat list of instructions with jumps (an `If` is a branch; a call pushes a frame).

use super::shape::{ShapeCode, ShapeSlot};
use crate::kernels::fused::FusedGroup;
use crate::kernels::{Kernel, Notable};
use spec_model::grammar::{DataType, StructInfo};
use spec_model::ops::Op;
use spec_model::Span;
use std::rc::Rc;

/// A slot of the frame's Relax values.
pub type Slot = u32;

/// One function's plan.
pub struct FuncPlan {
    /// For messages: the global's name or the variable a local function is bound to.
    pub name: String,
    pub n_slots: usize,
    pub n_shapes: usize,
    /// Each parameter's slot, annotation check and span.
    pub params: Vec<Param>,
    /// The slots a closure's captured values go to, in the order of `captures` at
    /// the closure's creation.
    pub capture_slots: Vec<Slot>,
    /// Likewise for the captured shape variables.
    pub capture_shapes: Vec<ShapeSlot>,
    /// The slot that holds the closure itself (a local function calling itself).
    pub self_slot: Option<Slot>,
    pub code: Vec<Instr>,
    /// For each instruction, the slots cleared once it has run (their last use; see
    /// `live.rs`): an operand dying at a kernel call is handed over, not copied.
    pub dies: Vec<Box<[Slot]>>,
    /// The return annotation's check, and the span errors point at.
    pub ret: Option<(Check, Span)>,
}

pub struct Param {
    pub slot: Slot,
    pub check: Option<Check>,
    /// The shape variables standing alone in the annotation, for the first pass of
    /// the function's entry (E-3).
    pub lone: Option<Lone>,
    pub span: Span,
}

/// Where the value of an argument comes from: a slot, or nothing (an unbound
/// variable, which only an unchecked program has).
pub type Operand = Option<Slot>;

/// What an instruction does. `dst` is the slot written.
pub enum Instr {
    /// SEM-1: a new tensor with constant `index`'s contents.
    Const {
        dst: Slot,
        index: usize,
        span: Span,
    },
    /// SEM-2 for a global: the closure (or PrimFunc) of global `index`.
    Global {
        dst: Slot,
        index: usize,
    },
    /// SEM-3.
    Tuple {
        dst: Slot,
        fields: Box<[Operand]>,
        span: Span,
    },
    /// SEM-4.
    GetItem {
        dst: Slot,
        tuple: Operand,
        index: i64,
        span: Span,
    },
    /// SEM-5; with `minus_one`, a literal `-1` dimension is kept (an operator argument
    /// the table lets hold one, E-11).
    Shape {
        dst: Slot,
        dims: Box<[ShapeCode]>,
        minus_one: bool,
        span: Span,
    },
    /// A `PrimValue`: the expression and its dtype.
    Prim {
        dst: Slot,
        code: ShapeCode,
        dtype: DataType,
        span: Span,
    },
    Str {
        dst: Slot,
        value: Rc<str>,
    },
    DataType {
        dst: Slot,
        value: DataType,
    },
    /// SEM-8: the packed function registered under `symbol`.
    Extern {
        dst: Slot,
        symbol: Rc<str>,
        span: Span,
    },
    /// SEM-6: a closure of function `func` over the given slots.
    Closure {
        dst: Slot,
        func: usize,
        captures: Box<[Operand]>,
        shapes: Box<[ShapeSlot]>,
    },
    /// SEM-9.1: a tensor operator.
    Kernel {
        dst: Slot,
        op: Op,
        kernel: Box<dyn Kernel>,
        args: Box<[Operand]>,
        span: Span,
    },
    /// SEM-9.1 for a group of calls fused into one pass (`fuse.rs`): `args` are the
    /// group's operands from outside it; the group's last call writes `dst`.
    Fused {
        dst: Slot,
        group: Box<FusedGroup>,
        args: Box<[Operand]>,
        span: Span,
    },
    /// SEM-9.1: a Notable Operator, with what the machine needs to run it.
    Notable {
        dst: Slot,
        op: Op,
        which: Notable,
        args: Box<[Operand]>,
        extra: Box<NotableInfo>,
        span: Span,
    },
    /// SEM-9.1 for an operator the registry does not know (an `OpError` at run time).
    Unregistered {
        name: Rc<str>,
        span: Span,
    },
    /// SEM-9.2: call the closure or packed function in `callee` on `args`.
    Call {
        dst: Slot,
        callee: Operand,
        args: Box<[Operand]>,
        span: Span,
    },
    /// SEM-7: continue at `target` unless `cond` is true.
    JumpUnless {
        cond: Operand,
        target: usize,
        span: Span,
    },
    Jump {
        target: usize,
    },
    /// `dst = src` (a branch's result into the `If`'s variable).
    Move {
        dst: Slot,
        src: Operand,
        span: Span,
    },
    /// SEM-10.2.1 / SI-MC: check the value in `src` against `check`, binding shape slots.
    MatchCast {
        src: Operand,
        check: Box<Check>,
        span: Span,
    },
    /// Leaving a scope: the shape variables it bound are unbound again (SEM-10.4).
    Unbind {
        shapes: Box<[ShapeSlot]>,
    },
    /// The function's result.
    Return {
        src: Operand,
        span: Span,
    },
    /// An expression that cannot be evaluated in a checked program (an `Op` used as a
    /// value): `Crash` naming the rule that rules it out.
    Crash {
        rule: &'static str,
        message: Box<str>,
        span: Span,
    },
}

/// The parts of a Notable Operator's call the machine needs besides its arguments.
#[derive(Default)]
pub struct NotableInfo {
    /// `call_tir` / `call_dps_packed`: the outputs to allocate (`call_tir_inplace`:
    /// those at in-place index -1, as a tuple).
    pub outputs: Option<Outputs>,
    /// `call_tir_inplace`: `inplace_indices` and whether `out_sinfo` is a tuple, or why
    /// they are malformed.
    pub inplace: Option<std::result::Result<(Vec<i64>, bool), &'static str>>,
    /// `print` / `assert_op`: the `format` attribute.
    pub format: Option<String>,
    /// `cast`: the target.
    pub cast: Option<Check>,
}

/// The outputs of a destination-passing call (`out_sinfo`): one tensor or a tuple.
pub enum Outputs {
    One(OutTensor),
    Tuple(Vec<OutTensor>),
    /// An `out_sinfo` that is not tensors with shapes (an `OpError` at run time).
    Malformed(&'static str),
}

pub struct OutTensor {
    pub dtype: DataType,
    pub shape: OutShape,
}

pub enum OutShape {
    Dims(Box<[ShapeCode]>),
    /// The shape held by a shape-typed variable.
    Var(Operand),
    Malformed(&'static str),
}

/// A StructInfo compiled for `MatchCast` (SI-MC-1..5).
pub enum Check {
    Object,
    Tensor {
        ndim: i64,
        dtype: DataType,
        shape: TensorShape,
        sinfo: Rc<StructInfo>,
    },
    Shape {
        ndim: i64,
        values: Option<Box<[Dim]>>,
        sinfo: Rc<StructInfo>,
    },
    Prim {
        dtype: DataType,
        /// `R.Prim(value=e)`: the value as one dimension.
        value: Option<Dim>,
        sinfo: Rc<StructInfo>,
    },
    Tuple {
        fields: Box<[Check]>,
        sinfo: Rc<StructInfo>,
    },
    /// A closure matches when `params` are defined, a packed function when `derive_func` is.
    Func {
        closure_ok: bool,
        packed_ok: bool,
        sinfo: Rc<StructInfo>,
    },
}

pub enum TensorShape {
    Any,
    /// SI-MC-2.1: the shape held by a variable (its slot, or `None` when the variable
    /// is not in the function: the match fails).
    Var {
        slot: Operand,
        name: Box<str>,
    },
    /// SI-MC-2.2.
    Dims(Box<[Dim]>),
    /// Neither a variable nor a `ShapeExpr` (only an ill-formed annotation).
    Malformed,
}

/// One dimension of an annotation: a lone shape variable binds when unbound (and is
/// compared when bound); anything else is evaluated and compared.
pub enum Dim {
    Lone { slot: ShapeSlot, code: ShapeCode },
    Expr(ShapeCode),
}

/// The first pass of a function's entry (E-3): where an annotation's lone shape
/// variables sit, to bind them from the argument before any check.
pub enum Lone {
    Tensor(Box<[Option<ShapeSlot>]>),
    Shape(Box<[Option<ShapeSlot>]>),
    /// `R.Prim(value=n)`: the slot of `n`.
    Prim(ShapeSlot),
    Tuple(Box<[Option<Lone>]>),
}
