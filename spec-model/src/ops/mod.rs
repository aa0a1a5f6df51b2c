//! The operator registry (Notable Operators, and every registered operator): for each
//! `Op` its name (`relax.add`, written `R.add`), purity, attribute schema and
//! `FInferStructInfo`, the macro SI-D-11.1 and TY-7.1 invoke on a call.
//!
//! Each operator's inference function carries a doc comment `OP-name` stating its
//! rule and its error cases; diagnostics it raises use that ID. Shapes are symbolic:
//! dimension equalities go through the [`ShapeProver`](crate::struct_info::ShapeProver)
//! of the [`SiEnv`].

mod attrs;
mod create;
mod elementwise;
mod infer;
mod linalg;
mod manipulate;
mod special;

pub use attrs::{AttrKind, AttrSpec};
pub use infer::{dim_op, Infer};

use crate::diagnostic::Diagnostic;
use crate::grammar::{Call, IRModule, StructInfo};
use crate::span::Span;
use crate::struct_info::SiEnv;

/// How many arguments an operator takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    Exactly(usize),
    AtLeast(usize),
}

/// An `FInferStructInfo` function: the result's StructInfo, or the error that makes the
/// call ill-formed. Warnings go to [`Infer::warn`].
/// The error of an ill-formed operator call (boxed: diagnostics are large).
pub type OpError = Box<Diagnostic>;

pub type InferFn = fn(&mut Infer) -> Result<StructInfo, OpError>;

/// One registered operator.
pub struct OpDef {
    /// The full name, `relax.add`.
    pub name: &'static str,
    /// Whether a call may appear in a DataflowBlock and keeps its function pure (TY-10.1.1, TY-11.2.1).
    pub pure: bool,
    pub arity: Arity,
    pub attrs: &'static [AttrSpec],
    pub infer: InferFn,
    /// One line for diagnostics; the inference function's doc comment has the rule.
    pub summary: &'static str,
}

impl OpDef {
    /// The rule ID of this operator, `OP-add`.
    pub fn rule(&self) -> String {
        op_rule(self.name)
    }
}

/// `relax.nn.relu` → `OP-nn.relu`.
pub fn op_rule(name: &str) -> String {
    format!("OP-{}", name.strip_prefix("relax.").unwrap_or(name))
}

macro_rules! op {
    ($name:literal, $pure:expr, $arity:expr, $attrs:expr, $infer:path, $summary:literal) => {
        OpDef { name: $name, pure: $pure, arity: $arity, attrs: $attrs, infer: $infer, summary: $summary }
    };
}

use attrs::schemas as s;
use Arity::*;

/// Every registered operator.
pub static REGISTRY: &[OpDef] = &[
    // Notable Operators (and the earlier draft's `cast`)
    op!("relax.call_tir", true, AtLeast(2), &[], special::call_tir, "call_tir(f, args, out_sinfo) calls the TIR PrimFunc f in destination-passing style; the result has StructInfo out_sinfo (tensors with shape and dtype); pure."),
    op!("relax.call_dps_packed", false, Exactly(2), &[], special::call_dps_packed, "call_dps_packed(func, args, out_sinfo) calls a packed function in destination-passing style; the result has StructInfo out_sinfo; impure."),
    op!("relax.call_packed", false, AtLeast(0), s::CALL_PACKED, special::call_packed, "A call of an ExternFunc: its StructInfo is default_derive of its sinfo_args; impure unless the call has pure=True."),
    op!("relax.call_pure_packed", true, AtLeast(1), &[], special::call_pure_packed, "call_pure_packed(func, *args, sinfo_args) calls a packed function declared pure; its StructInfo is default_derive of sinfo_args."),
    op!("relax.shape_of", true, Exactly(1), &[], special::shape_of, "shape_of(t) is the shape of tensor t: ShapeStructInfo of t's rank and dimensions."),
    op!("relax.null_value", true, Exactly(0), &[], special::null_value, "null_value() is the null object: ObjectStructInfo."),
    op!("relax.print", false, AtLeast(0), s::FORMAT, special::print, "print(*values, format) prints; impure; returns the empty tuple."),
    op!("relax.assert_op", false, AtLeast(1), s::FORMAT, special::assert_op, "assert_op(condition, *args, format) stops the program when the boolean scalar condition is false; impure; returns the empty tuple."),
    op!("relax.cast", true, Exactly(1), &[], special::cast, "cast(v, sinfo_args=[S]) checks at run time that v matches S and returns it with StructInfo S (earlier draft)."),
    // Elementwise binary arithmetic
    op!("relax.add", true, Exactly(2), &[], elementwise::arith, "Elementwise x1 + x2 with NumPy broadcasting: dims pair up from the right and must be equal or 1; operand dtypes must agree."),
    op!("relax.subtract", true, Exactly(2), &[], elementwise::arith, "Elementwise x1 - x2 with NumPy broadcasting (as add)."),
    op!("relax.multiply", true, Exactly(2), &[], elementwise::arith, "Elementwise x1 * x2 with NumPy broadcasting (as add)."),
    op!("relax.divide", true, Exactly(2), &[], elementwise::arith, "Elementwise x1 / x2 with NumPy broadcasting (as add)."),
    op!("relax.floor_divide", true, Exactly(2), &[], elementwise::arith, "Elementwise floor(x1 / x2) with NumPy broadcasting (as add)."),
    op!("relax.power", true, Exactly(2), &[], elementwise::arith, "Elementwise x1 ** x2 with NumPy broadcasting (as add)."),
    op!("relax.maximum", true, Exactly(2), &[], elementwise::arith, "Elementwise maximum with NumPy broadcasting (as add)."),
    op!("relax.minimum", true, Exactly(2), &[], elementwise::arith, "Elementwise minimum with NumPy broadcasting (as add)."),
    // Comparisons
    op!("relax.equal", true, Exactly(2), &[], elementwise::compare, "Elementwise x1 == x2 with NumPy broadcasting; the result is bool."),
    op!("relax.not_equal", true, Exactly(2), &[], elementwise::compare, "Elementwise x1 != x2 with NumPy broadcasting; the result is bool."),
    op!("relax.less", true, Exactly(2), &[], elementwise::compare, "Elementwise x1 < x2 with NumPy broadcasting; the result is bool."),
    op!("relax.less_equal", true, Exactly(2), &[], elementwise::compare, "Elementwise x1 <= x2 with NumPy broadcasting; the result is bool."),
    op!("relax.greater", true, Exactly(2), &[], elementwise::compare, "Elementwise x1 > x2 with NumPy broadcasting; the result is bool."),
    op!("relax.greater_equal", true, Exactly(2), &[], elementwise::compare, "Elementwise x1 >= x2 with NumPy broadcasting; the result is bool."),
    // Logical
    op!("relax.logical_and", true, Exactly(2), &[], elementwise::logical, "Elementwise logical and of bool tensors with NumPy broadcasting."),
    op!("relax.logical_or", true, Exactly(2), &[], elementwise::logical, "Elementwise logical or of bool tensors with NumPy broadcasting."),
    op!("relax.logical_not", true, Exactly(1), &[], elementwise::logical_not, "Elementwise logical not of a bool tensor."),
    // Unary
    op!("relax.negative", true, Exactly(1), &[], elementwise::unary, "Elementwise negation; same StructInfo as the operand."),
    op!("relax.abs", true, Exactly(1), &[], elementwise::unary, "Elementwise absolute value; same StructInfo as the operand."),
    op!("relax.exp", true, Exactly(1), &[], elementwise::unary_float, "Elementwise exponential of a float tensor; same StructInfo."),
    op!("relax.log", true, Exactly(1), &[], elementwise::unary_float, "Elementwise natural logarithm of a float tensor; same StructInfo."),
    op!("relax.sqrt", true, Exactly(1), &[], elementwise::unary_float, "Elementwise square root of a float tensor; same StructInfo."),
    op!("relax.tanh", true, Exactly(1), &[], elementwise::unary_float, "Elementwise hyperbolic tangent of a float tensor; same StructInfo."),
    op!("relax.sigmoid", true, Exactly(1), &[], elementwise::unary_float, "Elementwise logistic sigmoid of a float tensor; same StructInfo."),
    op!("relax.nn.relu", true, Exactly(1), &[], elementwise::unary, "Elementwise max(x, 0); same StructInfo as the operand."),
    op!("relax.nn.softmax", true, Exactly(1), s::SOFTMAX, elementwise::softmax, "Softmax of a float tensor along axis (default -1); same StructInfo."),
    op!("relax.where", true, Exactly(3), &[], elementwise::where_, "where(condition, x1, x2) picks elementwise; the three broadcast together; condition is bool."),
    op!("relax.astype", true, Exactly(1), s::ASTYPE, elementwise::astype, "astype(x, dtype) converts elementwise to dtype; same shape."),
    // Linear algebra and reductions
    op!("relax.matmul", true, Exactly(2), s::MATMUL, linalg::matmul, "NumPy matmul: (..., n, k) @ (..., k, m) gives (..., n, m); 1-D operands are promoted and the added dimension dropped; batch dims broadcast."),
    op!("relax.sum", true, Exactly(1), s::REDUCE, linalg::reduce, "Sum along axis (None: all), keeping reduced dims as 1 with keepdims."),
    op!("relax.mean", true, Exactly(1), s::REDUCE, linalg::reduce, "Mean along axis (None: all), keeping reduced dims as 1 with keepdims."),
    op!("relax.max", true, Exactly(1), s::REDUCE, linalg::reduce, "Maximum along axis (None: all), keeping reduced dims as 1 with keepdims."),
    op!("relax.min", true, Exactly(1), s::REDUCE, linalg::reduce, "Minimum along axis (None: all), keeping reduced dims as 1 with keepdims."),
    // Manipulation
    op!("relax.reshape", true, Exactly(2), &[], manipulate::reshape, "reshape(x, shape): same elements in a new shape with the same element count; one dimension may be -1."),
    op!("relax.permute_dims", true, Exactly(1), s::PERMUTE_DIMS, manipulate::permute_dims, "permute_dims(x, axes): result dimension i is input dimension axes[i] (default: reversed)."),
    op!("relax.broadcast_to", true, Exactly(2), &[], manipulate::broadcast_to, "broadcast_to(x, shape): x broadcast (NumPy rules) to exactly shape."),
    op!("relax.concat", true, Exactly(1), s::CONCAT, manipulate::concat, "concat(tensors, axis): joins a tuple of tensors of equal rank and dtype along axis; other dims agree."),
    op!("relax.split", true, Exactly(1), s::SPLIT, manipulate::split, "split(x, indices_or_sections, axis): n equal parts, or the parts between the given indices; a tuple of tensors."),
    op!("relax.strided_slice", true, Exactly(1), s::STRIDED_SLICE, manipulate::strided_slice, "strided_slice(x, axes, begin, end, strides): Python slicing of the given axes."),
    op!("relax.take", true, Exactly(2), s::TAKE, manipulate::take, "take(x, indices, axis): gathers entries of x along axis at integer indices."),
    // Creation
    op!("relax.zeros", true, Exactly(1), s::CREATE, create::zeros_ones, "zeros(shape, dtype): a new tensor of zeros."),
    op!("relax.ones", true, Exactly(1), s::CREATE, create::zeros_ones, "ones(shape, dtype): a new tensor of ones."),
    op!("relax.full", true, Exactly(2), s::FULL, create::full, "full(shape, fill_value, dtype): a new tensor filled with the scalar fill_value."),
    op!("relax.arange", true, Exactly(3), s::ARANGE, create::arange, "arange(start, end, step, dtype): the 1-D tensor start, start+step, ... before end."),
];

/// The operator registered under `name` (`relax.add`; `add` is accepted too).
pub fn lookup(name: &str) -> Option<&'static OpDef> {
    let full = if name.starts_with("relax.") { name.to_string() } else { format!("relax.{name}") };
    REGISTRY.iter().find(|d| d.name == full)
}

/// The operators whose result is given by the call's StructInfo arguments.
const TAKES_SINFO_ARGS: &[&str] =
    &["relax.call_tir", "relax.call_dps_packed", "relax.call_packed", "relax.call_pure_packed", "relax.cast"];

/// What an `FInferStructInfo` call produced.
pub struct Inferred {
    pub struct_info: StructInfo,
    pub warnings: Vec<Diagnostic>,
}

/// Runs `op`'s `FInferStructInfo` on a call whose arguments have StructInfo `args`:
/// first the arity and attribute schema, then the operator's rule.
pub fn infer_struct_info(
    op: &OpDef,
    call: &Call,
    args: &[StructInfo],
    env: &SiEnv,
    module: Option<&IRModule>,
    span: Span,
) -> Result<Inferred, OpError> {
    let rule = op.rule();
    let n = call.args.len();
    let ok = match op.arity {
        Arity::Exactly(k) => n == k,
        Arity::AtLeast(k) => n >= k,
    };
    if !ok {
        let want = match op.arity {
            Arity::Exactly(k) => format!("{k}"),
            Arity::AtLeast(k) => format!("at least {k}"),
        };
        return Err(Box::new(Diagnostic::error(
            rule,
            format!("`{}` takes {want} argument(s), {n} given", op.name),
            span,
        )));
    }
    if !call.sinfo_args.is_empty() && !TAKES_SINFO_ARGS.contains(&op.name) {
        return Err(Box::new(Diagnostic::error(rule, format!("`{}` takes no StructInfo arguments", op.name), span)));
    }
    attrs::check_attrs(op, &call.attrs, span)?;
    let mut cx = Infer::new(op, call, args, env, module, span);
    let si = (op.infer)(&mut cx)?;
    Ok(Inferred { struct_info: si, warnings: cx.into_warnings() })
}
