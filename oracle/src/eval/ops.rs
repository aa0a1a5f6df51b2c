//! SEM-9.1: applying an operator to its evaluated arguments. One exhaustive match
//! over [`Op`]: an operator added to the table without an evaluation rule here does
//! not compile. The Notable Operators have rules of their own (`builtins.rs`); the
//! tensor operators are the kernels (`kernels/`).

use super::builtins;
use super::kernels::elementwise::{self, Arith, Compare, Unary};
use super::kernels::reduce::{self, Reduce};
use super::kernels::unary_math::{self, MathFn};
use super::kernels::{
    attention, conv, conv_transpose, create, einsum, index, layout, linalg, manipulate, manipulate_dims, norm, pool,
    resize, sorting, statistical, Cx,
};
use super::lowered;
use super::machine::{Limits, Machine, Scope};
use super::value::{EvalResult, Value};
use spec_model::grammar::{Attrs, Call, Expr, IRModule};
use spec_model::ops::Op;
use spec_model::Span;

/// SEM-9.1: `op` applied to `args` (already evaluated, in order) at the call `call`,
/// in scope `sc` (destination-passing calls evaluate their output shapes there).
pub fn eval_op(mach: &mut Machine, op: Op, args: &[Value], call: &Call, span: Span, sc: &Scope) -> EvalResult<Value> {
    mach.fire(op.def().rule);
    // LIMIT-fuel: a kernel's work is charged before it runs (a 1024-cubed matmul ends
    // in FuelExhausted, not in minutes of looping), what it made after.
    mach.charge_elements(work(op, args, &call.attrs), span)?;
    let result = apply(mach, op, args, call, span, sc)?;
    mach.charge_elements(elements(&result), span)?;
    Ok(result)
}

/// The elements a kernel reads, and for a matmul or a convolution the multiply-adds, for
/// a sort the comparisons (at least).
fn work(op: Op, args: &[Value], attrs: &Attrs) -> u64 {
    let read = args.iter().map(elements).fold(0u64, u64::saturating_add);
    match (op, args) {
        (Op::Einsum, _) => read.max(einsum::einsum_work(args, attrs.get("subscripts"))),
        (Op::Attention, _) => read.max(attention::attention_work(args)),
        (Op::Conv2d, _) => read.max(conv::conv_work(args, attrs, 2).unwrap_or(0)),
        (Op::Conv1d, _) => read.max(conv::conv_work(args, attrs, 1).unwrap_or(0)),
        (Op::Sort | Op::Argsort | Op::Topk, _) => read.max(sorting::sort_work(args, attrs).unwrap_or(0)),
        (Op::Conv2dTranspose, _) => read.max(conv_transpose::conv2d_transpose_work(args, attrs).unwrap_or(0)),
        (Op::Matmul, [Value::Tensor(a), Value::Tensor(b)]) => {
            let (Ok(a), Ok(b)) = (a.try_borrow(), b.try_borrow()) else { return read };
            // `[.., m, k] @ [.., k, n]`: each row of `a` meets `n` columns, each column
            // of `b` meets `m` rows (a rank-1 side has one of them).
            let m = if a.shape.len() >= 2 { a.shape[a.shape.len() - 2] } else { 1 };
            let n = if b.shape.len() >= 2 { b.shape[b.shape.len() - 1] } else { 1 };
            let (ea, eb) = (a.data.len() as u64, b.data.len() as u64);
            read.max(ea.saturating_mul(n)).max(eb.saturating_mul(m))
        }
        _ => read,
    }
}

/// The tensor elements a value holds (a tuple's fields, one level deep).
fn elements(v: &Value) -> u64 {
    match v {
        // A tensor being written is the kernel's error to report, not a count's.
        Value::Tensor(t) => t.try_borrow().map_or(0, |t| t.data.len() as u64),
        Value::Tuple(fs) => fs
            .iter()
            .map(|f| match f {
                Value::Tensor(t) => t.try_borrow().map_or(0, |t| t.data.len() as u64),
                _ => 0,
            })
            .fold(0, u64::saturating_add),
        _ => 0,
    }
}

fn apply(mach: &mut Machine, op: Op, args: &[Value], call: &Call, span: Span, sc: &Scope) -> EvalResult<Value> {
    let cx = Cx::new(op, &call.attrs, span);
    match op {
        Op::CallTir | Op::CallTirWithGrad => builtins::call_tir(mach, op, args, call, span, sc),
        Op::CallTirInplace => builtins::call_tir_inplace(mach, args, call, span, sc),
        Op::CallDpsPacked => builtins::call_dps_packed(mach, args, call, span, sc),
        Op::CallPacked | Op::CallPurePacked => builtins::call_packed_op(mach, op, args, span),
        Op::ShapeOf => builtins::shape_of(args, span),
        Op::NullValue => Ok(Value::Null),
        // OP-grad.no_grad, OP-grad.start_checkpoint, OP-grad.end_checkpoint: the argument itself.
        Op::NoGrad | Op::StartCheckpoint | Op::EndCheckpoint => {
            args.first().cloned().ok_or_else(|| cx.error("takes one argument"))
        }
        Op::Print => builtins::print(mach, args, call),
        Op::AssertOp => builtins::assert_op(args, call, span),
        Op::Cast => builtins::cast(mach, args, call, span, sc),
        Op::Add => elementwise::arith(&cx, args, Arith::Add),
        Op::Subtract => elementwise::arith(&cx, args, Arith::Subtract),
        Op::Multiply => elementwise::arith(&cx, args, Arith::Multiply),
        Op::Divide => elementwise::arith(&cx, args, Arith::Divide),
        Op::FloorDivide => elementwise::arith(&cx, args, Arith::FloorDivide),
        Op::Power => elementwise::arith(&cx, args, Arith::Power),
        Op::Maximum => elementwise::arith(&cx, args, Arith::Maximum),
        Op::Minimum => elementwise::arith(&cx, args, Arith::Minimum),
        Op::Equal => elementwise::compare(&cx, args, Compare::Equal),
        Op::NotEqual => elementwise::compare(&cx, args, Compare::NotEqual),
        Op::Less => elementwise::compare(&cx, args, Compare::Less),
        Op::LessEqual => elementwise::compare(&cx, args, Compare::LessEqual),
        Op::Greater => elementwise::compare(&cx, args, Compare::Greater),
        Op::GreaterEqual => elementwise::compare(&cx, args, Compare::GreaterEqual),
        Op::LogicalAnd => elementwise::logical(&cx, args, true),
        Op::LogicalOr => elementwise::logical(&cx, args, false),
        Op::LogicalNot => elementwise::logical_not(&cx, args),
        Op::Negative => elementwise::unary(&cx, args, Unary::Negative),
        Op::Abs => elementwise::unary(&cx, args, Unary::Abs),
        Op::Exp => elementwise::unary(&cx, args, Unary::Exp),
        Op::Log => elementwise::unary(&cx, args, Unary::Log),
        Op::Sqrt => elementwise::unary(&cx, args, Unary::Sqrt),
        Op::Tanh => elementwise::unary(&cx, args, Unary::Tanh),
        Op::Sigmoid => elementwise::unary(&cx, args, Unary::Sigmoid),
        Op::Relu => elementwise::unary(&cx, args, Unary::Relu),
        Op::Softmax => elementwise::softmax(&cx, args),
        Op::Where => elementwise::where_(&cx, args),
        Op::Astype => elementwise::astype(&cx, args),
        Op::Erf => unary_math::unary(&cx, args, MathFn::Erf),
        Op::Rsqrt => unary_math::unary(&cx, args, MathFn::Rsqrt),
        Op::Sin => unary_math::unary(&cx, args, MathFn::Sin),
        Op::Cos => unary_math::unary(&cx, args, MathFn::Cos),
        Op::Floor => unary_math::unary(&cx, args, MathFn::Floor),
        Op::Ceil => unary_math::unary(&cx, args, MathFn::Ceil),
        Op::Round => unary_math::unary(&cx, args, MathFn::Round),
        Op::Sign => unary_math::unary(&cx, args, MathFn::Sign),
        Op::Square => unary_math::unary(&cx, args, MathFn::Square),
        Op::IsNan => unary_math::check(&cx, args, false),
        Op::IsInf => unary_math::check(&cx, args, true),
        Op::Gelu => unary_math::unary(&cx, args, MathFn::Gelu),
        Op::GeluTanh => unary_math::unary(&cx, args, MathFn::GeluTanh),
        Op::Silu => unary_math::unary(&cx, args, MathFn::Silu),
        Op::LeakyRelu => unary_math::leakyrelu(&cx, args),
        Op::Clip => unary_math::clip(&cx, args),
        Op::Matmul => linalg::matmul(&cx, args),
        Op::Einsum => einsum::einsum(&cx, args),
        Op::Attention => attention::attention(&cx, args),
        Op::Sum => reduce::reduce(&cx, args, Reduce::Sum),
        Op::Mean => reduce::reduce(&cx, args, Reduce::Mean),
        Op::Max => reduce::reduce(&cx, args, Reduce::Max),
        Op::Min => reduce::reduce(&cx, args, Reduce::Min),
        Op::Prod => statistical::prod(&cx, args),
        Op::Argmax => statistical::arg_reduce(&cx, args, true),
        Op::Argmin => statistical::arg_reduce(&cx, args, false),
        Op::Variance => statistical::variance(&cx, args),
        Op::Std => statistical::std(&cx, args),
        Op::Cumsum => statistical::cumsum(&cx, args),
        Op::LogSoftmax => norm::log_softmax(&cx, args),
        Op::LayerNorm => norm::layer_norm(&cx, args),
        Op::RmsNorm => norm::rms_norm(&cx, args),
        Op::GroupNorm => norm::group_norm(&cx, args),
        Op::BatchNorm => norm::batch_norm(&cx, args),
        Op::Dropout => norm::dropout(&cx, args),
        Op::Reshape => manipulate::reshape(&cx, args),
        Op::PermuteDims => manipulate::permute_dims(&cx, args),
        Op::BroadcastTo => manipulate::broadcast_to(&cx, args),
        Op::Concat => manipulate::concat(&cx, args),
        Op::Split => manipulate::split(&cx, args),
        Op::StridedSlice => manipulate::strided_slice(&cx, args),
        Op::Take => manipulate::take(&cx, args),
        Op::Sort => sorting::sort(&cx, args),
        Op::Argsort => sorting::argsort(&cx, args),
        Op::Topk => sorting::topk(&cx, args),
        Op::GatherElements => index::gather_elements(&cx, args),
        Op::ScatterElements => index::scatter_elements(&cx, args),
        Op::ZerosLike => manipulate_dims::zeros_ones_like(&cx, args, false),
        Op::OnesLike => manipulate_dims::zeros_ones_like(&cx, args, true),
        Op::FullLike => manipulate_dims::full_like(&cx, args),
        Op::Squeeze => manipulate_dims::squeeze(&cx, args),
        Op::ExpandDims => manipulate_dims::expand_dims(&cx, args),
        Op::Flatten => manipulate_dims::flatten(&cx, args),
        Op::Flip => manipulate_dims::flip(&cx, args),
        Op::Tril => manipulate_dims::tril_triu(&cx, args, true),
        Op::Triu => manipulate_dims::tril_triu(&cx, args, false),
        Op::Tile => manipulate_dims::tile(&cx, args),
        Op::Repeat => manipulate_dims::repeat(&cx, args),
        Op::CollapseSumLike => manipulate_dims::collapse_sum_like(&cx, args),
        Op::LayoutTransform => layout::layout_transform(&cx, args),
        Op::Zeros => create::zeros_ones(&cx, args, false),
        Op::Ones => create::zeros_ones(&cx, args, true),
        Op::Full => create::full(&cx, args),
        Op::Arange => create::arange(&cx, args),
        Op::OneHot => create::one_hot(&cx, args),
        Op::Pad => conv::pad(&cx, args),
        Op::Conv2d => conv::conv2d(&cx, args),
        Op::MaxPool2d => pool::max_pool2d(&cx, args),
        Op::AvgPool2d => pool::avg_pool2d(&cx, args),
        Op::AdaptiveAvgPool2d => pool::adaptive_avg_pool2d(&cx, args),
        Op::Conv1d => conv::conv1d(&cx, args),
        Op::Conv2dTranspose => conv_transpose::conv2d_transpose(&cx, args),
        Op::Resize2d => resize::resize2d(&cx, args),
        Op::BuiltinAllocTensor
        | Op::MemoryAllocStorage
        | Op::MemoryAllocTensor
        | Op::MemoryKillStorage
        | Op::MemoryKillTensor
        | Op::VmAllocStorage
        | Op::VmAllocTensor
        | Op::VmKillObject
        | Op::VmCallTirDyn
        | Op::CallBuiltinWithCtx => lowered::apply(mach, op, args, span),
    }
}

/// `op` applied to `args` with attributes `attrs` outside any program: no StructInfo
/// arguments, an empty module, default limits (kernel tests, and checking another
/// engine's operator against the reference one).
pub fn eval_op_standalone(op: Op, args: &[Value], attrs: &Attrs, span: Span) -> EvalResult<Value> {
    let module =
        IRModule { name: "standalone".into(), functions: Vec::new(), attrs: Default::default(), span: Span::SYNTHETIC };
    let mut mach = Machine::new(&module, Limits::default());
    let call = Call { op: Expr::op(op), args: Vec::new(), sinfo_args: Vec::new(), attrs: attrs.clone() };
    eval_op(&mut mach, op, args, &call, span, &Scope::default())
}
