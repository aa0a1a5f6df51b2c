//! The engine's operator kernels. The compiler lowers each operator call once
//! ([`Lowering`]: attributes read, an implementation chosen from what is known
//! statically) into a [`Kernel`] the machine runs on evaluated arguments; errors carry
//! the operator's rule (`OP-add`), as the oracle's do.
//!
//! The semantics are the oracle's (`proofs-notes/operator-semantics.md`); the code is
//! the engine's own.

pub mod attention;
pub mod common;
pub mod conv;
pub mod conv_transpose;
pub mod convert;
pub mod create;
pub mod einsum;
pub mod elementwise;
pub mod fused;
pub mod index;
pub mod lanes;
pub mod layout;
pub mod layout_transform;
pub mod linalg;
pub mod manipulate;
pub mod manipulate_dims;
pub mod norm;
pub mod pool;
pub mod reduce;
pub mod resize;
pub mod simd;
pub mod sorting;
pub mod statistical;
pub mod unary_math;

use crate::buffer::{Memory, OverBudget};
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::tensor::Tensor;
use crate::value::Value;
use spec_model::grammar::{AttrValue, Attrs, DataType, StructInfo};
use spec_model::ops::Op;
use spec_model::Span;
use std::rc::Rc;

/// An operator call compiled once and run many times.
pub trait Kernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value>;

    /// LIMIT-fuel: the work this call does beyond reading its arguments (a
    /// convolution's multiply-adds), charged before it runs; `None`: only the reads.
    fn work(&self, _args: &[Value]) -> Option<u64> {
        None
    }
}

/// What the compiler knows about an operator call when it lowers it: the operator,
/// its attributes and the static StructInfo of each argument (`None` where unknown).
pub struct Lowering<'a> {
    pub op: Op,
    pub attrs: &'a Attrs,
    pub args: &'a [Option<StructInfo>],
}

impl Lowering<'_> {
    /// The dtype of argument `i`, when its static StructInfo gives one with storage.
    pub fn dtype(&self, i: usize) -> Option<DType> {
        match &*self.args.get(i)?.as_ref()?.kind {
            spec_model::grammar::StructInfoKind::Tensor { dtype, .. } if !dtype.is_void() => DType::of(*dtype),
            _ => None,
        }
    }
}

/// The context a kernel runs in: which operator (its rule names the errors), where
/// the call is, and the memory budget tensors are allocated from.
pub struct KernelCx<'a> {
    pub op: Op,
    pub span: Span,
    pub memory: &'a Rc<Memory>,
    /// Threads a large kernel may split across (at least 1).
    pub threads: usize,
    /// The fewest output elements worth splitting across threads.
    pub parallel_min: usize,
}

impl KernelCx<'_> {
    /// The threads a kernel producing `elements` elements uses.
    pub fn threads_for(&self, elements: usize) -> usize {
        if elements >= self.parallel_min {
            self.threads
        } else {
            1
        }
    }
}

impl KernelCx<'_> {
    /// An error of kind `kind` of this operator's rule.
    pub fn fail(&self, kind: ErrorKind, message: impl Into<String>) -> Error {
        Error::new(kind, self.op.def().rule, format!("{}: {}", self.op, message.into()), self.span)
    }

    /// An `OpError` of this operator's rule.
    pub fn error(&self, message: impl Into<String>) -> Error {
        self.fail(ErrorKind::OpError, message)
    }

    /// A new zero-filled tensor, or `MemoryExhausted` before anything is allocated.
    pub fn alloc(&self, dtype: DType, shape: &[u64]) -> Result<Tensor> {
        Tensor::zeros(dtype, shape, self.memory).map_err(|e| over_budget(e, self.span))
    }

    /// A new tensor whose every element the kernel writes (its contents start
    /// unspecified: a dead tensor's buffer is reused without clearing it).
    pub fn alloc_for_overwrite(&self, dtype: DType, shape: &[u64]) -> Result<Tensor> {
        Tensor::for_overwrite(dtype, shape, self.memory).map_err(|e| over_budget(e, self.span))
    }

    /// Argument `i`, which must exist (`OpError` for a call with too few arguments).
    pub fn arg<'v>(&self, args: &'v [Value], i: usize) -> Result<&'v Value> {
        args.get(i).ok_or_else(|| self.error(format!("takes at least {} argument(s), {} given", i + 1, args.len())))
    }

    /// Argument `i` as a tensor.
    pub fn tensor<'v>(&self, args: &'v [Value], i: usize, what: &str) -> Result<&'v Rc<Tensor>> {
        match self.arg(args, i)? {
            Value::Tensor(t) => Ok(t),
            other => Err(self.error(format!("{what} must be a tensor, got {}", other.kind()))),
        }
    }

    /// Exactly `n` arguments.
    pub fn arity(&self, args: &[Value], n: usize) -> Result<()> {
        if args.len() != n {
            return Err(self.error(format!("takes {n} argument(s), {} given", args.len())));
        }
        Ok(())
    }

    /// `axis` (negative counts from the end) as an index below `rank`.
    pub fn axis(&self, axis: i64, rank: usize) -> Result<usize> {
        let r = rank as i64;
        match if axis < 0 { axis.checked_add(r) } else { Some(axis) } {
            Some(a) if (0..r).contains(&a) => Ok(a as usize),
            _ => Err(self.error(format!("axis {axis} is out of range for a tensor of rank {rank}"))),
        }
    }
}

/// The error of an allocation the memory budget refused.
pub fn over_budget(e: OverBudget, span: Span) -> Error {
    let asked = e.requested.map_or("more than the address space".to_string(), |b| format!("{b} bytes"));
    Error::new(
        ErrorKind::MemoryExhausted,
        "LIMIT-memory",
        format!(
            "allocating {asked} with {} of {} bytes in use ({})",
            e.live,
            e.limit,
            spec_model::limits::raise_hint("LIMIT-memory")
        ),
        span,
    )
}

/// A kernel that fails with `OpError`: the lowering of a call whose attributes are
/// not what the operator's schema says (a program the checker would refuse); the
/// error comes at run time, where the oracle raises it.
pub struct Failing(pub String);

impl Kernel for Failing {
    fn run(&self, cx: &KernelCx, _: &[Value]) -> Result<Value> {
        Err(cx.error(self.0.clone()))
    }
}

/// Reading a call's attributes at lowering time. Absent and `None` attributes are the
/// same; a value of the wrong kind is an error message for a [`Failing`] kernel.
pub mod attrs {
    use super::*;

    fn get<'a>(attrs: &'a Attrs, name: &str) -> Option<&'a AttrValue> {
        attrs.get(name).filter(|v| !matches!(v, AttrValue::None))
    }

    fn wrong(name: &str, want: &str) -> String {
        format!("attribute `{name}` must be {want}")
    }

    pub fn opt_int(attrs: &Attrs, name: &str) -> std::result::Result<Option<i64>, String> {
        match get(attrs, name) {
            None => Ok(None),
            Some(AttrValue::Int(i)) => Ok(Some(*i)),
            Some(_) => Err(wrong(name, "an integer")),
        }
    }

    /// A number (an integer reads as its float); `default` when absent.
    pub fn float(attrs: &Attrs, name: &str, default: f64) -> std::result::Result<f64, String> {
        match get(attrs, name) {
            None => Ok(default),
            Some(AttrValue::Float(f)) => Ok(f.0),
            Some(AttrValue::Int(i)) => Ok(*i as f64),
            Some(_) => Err(wrong(name, "a number")),
        }
    }

    pub fn bool(attrs: &Attrs, name: &str, default: bool) -> std::result::Result<bool, String> {
        match get(attrs, name) {
            None => Ok(default),
            Some(AttrValue::Bool(b)) => Ok(*b),
            Some(_) => Err(wrong(name, "a boolean")),
        }
    }

    /// An integer or a list of integers (a single integer is a list of one).
    pub fn ints(attrs: &Attrs, name: &str) -> std::result::Result<Option<Vec<i64>>, String> {
        match get(attrs, name) {
            None => Ok(None),
            Some(AttrValue::Int(i)) => Ok(Some(vec![*i])),
            Some(AttrValue::List(xs)) => xs
                .iter()
                .map(|x| match x {
                    AttrValue::Int(i) => Ok(*i),
                    _ => Err(wrong(name, "a list of integers")),
                })
                .collect::<std::result::Result<Vec<i64>, String>>()
                .map(Some),
            Some(_) => Err(wrong(name, "a list of integers")),
        }
    }

    /// A dtype attribute (the dtype itself; whether tensors of it exist is the kernel's question).
    pub fn dtype(attrs: &Attrs, name: &str) -> std::result::Result<Option<DataType>, String> {
        match get(attrs, name) {
            None => Ok(None),
            Some(AttrValue::Str(s)) => DataType::parse(s).map(Some).ok_or_else(|| wrong(name, "a dtype string")),
            Some(_) => Err(wrong(name, "a dtype string")),
        }
    }
}

/// The Notable Operators: not kernels but instructions of the machine, which gives
/// them what a kernel cannot see (the module's PrimFuncs, the packed functions, the
/// shape variables in scope, the printed output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notable {
    /// `call_tir` and `call_tir_with_grad` (whose gradient attributes only the Gradient pass reads).
    CallTir,
    /// `call_tir_inplace`: the in-place arguments are copies (proofs-notes/evaluation.md, E-15).
    CallTirInplace,
    CallDpsPacked,
    /// `call_packed` and `call_pure_packed`: the packed function is the first argument.
    CallPacked,
    ShapeOf,
    NullValue,
    Print,
    AssertOp,
    Cast,
    /// The gradient markers: the argument, unchanged.
    Identity,
    /// The lowered-memory operators (`builtin.alloc_tensor`, `memory.*`, `vm.*`,
    /// `call_builtin_with_ctx`): `machine/lowered.rs`.
    Memory,
}

/// What an operator call lowers to.
pub enum Lowered {
    Kernel(Box<dyn Kernel>),
    Notable(Notable),
}

/// Lowers an operator call: one exhaustive match over [`Op`], so an operator of the
/// table without an engine implementation does not compile.
pub fn lower(l: &Lowering) -> Lowered {
    use elementwise::{Arith, Compare, Unary};
    use reduce::Reduce;
    let kernel = Lowered::Kernel;
    match l.op {
        Op::CallTir | Op::CallTirWithGrad => Lowered::Notable(Notable::CallTir),
        Op::CallTirInplace => Lowered::Notable(Notable::CallTirInplace),
        Op::CallDpsPacked => Lowered::Notable(Notable::CallDpsPacked),
        Op::CallPacked | Op::CallPurePacked => Lowered::Notable(Notable::CallPacked),
        Op::ShapeOf => Lowered::Notable(Notable::ShapeOf),
        Op::NullValue => Lowered::Notable(Notable::NullValue),
        Op::NoGrad | Op::StartCheckpoint | Op::EndCheckpoint => Lowered::Notable(Notable::Identity),
        Op::Print => Lowered::Notable(Notable::Print),
        Op::AssertOp => Lowered::Notable(Notable::AssertOp),
        Op::Cast => Lowered::Notable(Notable::Cast),
        Op::BuiltinAllocTensor
        | Op::MemoryAllocStorage
        | Op::MemoryAllocTensor
        | Op::MemoryKillStorage
        | Op::MemoryKillTensor
        | Op::VmAllocStorage
        | Op::VmAllocTensor
        | Op::VmKillObject
        | Op::VmCallTirDyn
        | Op::CallBuiltinWithCtx => Lowered::Notable(Notable::Memory),
        Op::Add => kernel(elementwise::arith(l, Arith::Add)),
        Op::Subtract => kernel(elementwise::arith(l, Arith::Subtract)),
        Op::Multiply => kernel(elementwise::arith(l, Arith::Multiply)),
        Op::Divide => kernel(elementwise::arith(l, Arith::Divide)),
        Op::FloorDivide => kernel(elementwise::arith(l, Arith::FloorDivide)),
        Op::Power => kernel(elementwise::arith(l, Arith::Power)),
        Op::Maximum => kernel(elementwise::arith(l, Arith::Maximum)),
        Op::Minimum => kernel(elementwise::arith(l, Arith::Minimum)),
        Op::Equal => kernel(elementwise::compare(l, Compare::Equal)),
        Op::NotEqual => kernel(elementwise::compare(l, Compare::NotEqual)),
        Op::Less => kernel(elementwise::compare(l, Compare::Less)),
        Op::LessEqual => kernel(elementwise::compare(l, Compare::LessEqual)),
        Op::Greater => kernel(elementwise::compare(l, Compare::Greater)),
        Op::GreaterEqual => kernel(elementwise::compare(l, Compare::GreaterEqual)),
        Op::LogicalAnd => kernel(elementwise::logical(l, true)),
        Op::LogicalOr => kernel(elementwise::logical(l, false)),
        Op::LogicalNot => kernel(elementwise::logical_not(l)),
        Op::Negative => kernel(elementwise::unary(l, Unary::Negative)),
        Op::Abs => kernel(elementwise::unary(l, Unary::Abs)),
        Op::Exp => kernel(elementwise::unary(l, Unary::Exp)),
        Op::Log => kernel(elementwise::unary(l, Unary::Log)),
        Op::Sqrt => kernel(elementwise::unary(l, Unary::Sqrt)),
        Op::Tanh => kernel(elementwise::unary(l, Unary::Tanh)),
        Op::Sigmoid => kernel(elementwise::unary(l, Unary::Sigmoid)),
        Op::Relu => kernel(elementwise::unary(l, Unary::Relu)),
        Op::Softmax => kernel(elementwise::softmax(l)),
        Op::Where => kernel(elementwise::where_(l)),
        Op::Astype => kernel(elementwise::astype(l)),
        Op::Erf => kernel(elementwise::unary(l, Unary::Erf)),
        Op::Rsqrt => kernel(elementwise::unary(l, Unary::Rsqrt)),
        Op::Sin => kernel(elementwise::unary(l, Unary::Sin)),
        Op::Cos => kernel(elementwise::unary(l, Unary::Cos)),
        Op::Floor => kernel(elementwise::unary(l, Unary::Floor)),
        Op::Ceil => kernel(elementwise::unary(l, Unary::Ceil)),
        Op::Round => kernel(elementwise::unary(l, Unary::Round)),
        Op::Sign => kernel(elementwise::unary(l, Unary::Sign)),
        Op::Square => kernel(elementwise::unary(l, Unary::Square)),
        Op::IsNan => kernel(unary_math::check(l, false)),
        Op::IsInf => kernel(unary_math::check(l, true)),
        Op::Gelu => kernel(elementwise::unary(l, Unary::Gelu)),
        Op::GeluTanh => kernel(elementwise::unary(l, Unary::GeluTanh)),
        Op::Silu => kernel(elementwise::unary(l, Unary::Silu)),
        Op::LeakyRelu => kernel(unary_math::leakyrelu(l)),
        Op::Clip => kernel(unary_math::clip(l)),
        Op::Matmul => kernel(linalg::matmul(l)),
        Op::Einsum => kernel(einsum::einsum(l)),
        Op::Attention => kernel(attention::attention(l)),
        Op::Sum => kernel(reduce::reduce(l, Reduce::Sum)),
        Op::Mean => kernel(reduce::reduce(l, Reduce::Mean)),
        Op::Max => kernel(reduce::reduce(l, Reduce::Max)),
        Op::Min => kernel(reduce::reduce(l, Reduce::Min)),
        Op::Prod => kernel(statistical::stat(l, statistical::Stat::Prod)),
        Op::Argmax => kernel(statistical::stat(l, statistical::Stat::Argmax)),
        Op::Argmin => kernel(statistical::stat(l, statistical::Stat::Argmin)),
        Op::Variance => kernel(statistical::stat(l, statistical::Stat::Variance)),
        Op::Std => kernel(statistical::stat(l, statistical::Stat::Std)),
        Op::Cumsum => kernel(statistical::cumsum(l)),
        Op::LogSoftmax => kernel(norm::log_softmax(l)),
        Op::LayerNorm => kernel(norm::norm(l, norm::Norm::Layer)),
        Op::RmsNorm => kernel(norm::norm(l, norm::Norm::Rms)),
        Op::GroupNorm => kernel(norm::norm(l, norm::Norm::Group)),
        Op::BatchNorm => kernel(norm::norm(l, norm::Norm::Batch)),
        Op::Dropout => kernel(norm::dropout(l)),
        Op::Reshape => kernel(manipulate::reshape(l)),
        Op::PermuteDims => kernel(manipulate::permute_dims(l)),
        Op::BroadcastTo => kernel(manipulate::broadcast_to(l)),
        Op::Concat => kernel(manipulate::concat(l)),
        Op::Split => kernel(manipulate::split(l)),
        Op::StridedSlice => kernel(manipulate::strided_slice(l)),
        Op::Take => kernel(manipulate::take(l)),
        Op::Sort => kernel(sorting::sorting(l, sorting::Sorting::Sort)),
        Op::Argsort => kernel(sorting::sorting(l, sorting::Sorting::Argsort)),
        Op::Topk => kernel(sorting::sorting(l, sorting::Sorting::Topk)),
        Op::GatherElements => kernel(index::gather_elements(l)),
        Op::ScatterElements => kernel(index::scatter_elements(l)),
        Op::ZerosLike => kernel(manipulate_dims::zeros_ones_like(l, false)),
        Op::OnesLike => kernel(manipulate_dims::zeros_ones_like(l, true)),
        Op::FullLike => kernel(manipulate_dims::full_like(l)),
        Op::Squeeze => kernel(manipulate_dims::squeeze(l)),
        Op::ExpandDims => kernel(manipulate_dims::expand_dims(l)),
        Op::Flatten => kernel(manipulate_dims::flatten(l)),
        Op::Flip => kernel(manipulate_dims::flip(l)),
        Op::Tril => kernel(manipulate_dims::tril_triu(l, true)),
        Op::Triu => kernel(manipulate_dims::tril_triu(l, false)),
        Op::Tile => kernel(manipulate_dims::tile(l)),
        Op::Repeat => kernel(manipulate_dims::repeat(l)),
        Op::CollapseSumLike => kernel(manipulate_dims::collapse_sum_like(l)),
        Op::LayoutTransform => kernel(layout_transform::layout_transform(l)),
        Op::Zeros => kernel(create::zeros_ones(l, false)),
        Op::Ones => kernel(create::zeros_ones(l, true)),
        Op::Full => kernel(create::full(l)),
        Op::Arange => kernel(create::arange(l)),
        Op::OneHot => kernel(create::one_hot(l)),
        Op::Pad => kernel(conv::pad(l)),
        Op::Conv2d => kernel(conv::conv(l, 2)),
        Op::MaxPool2d => kernel(pool::pool2d(l, true)),
        Op::AvgPool2d => kernel(pool::pool2d(l, false)),
        Op::AdaptiveAvgPool2d => kernel(pool::adaptive_avg_pool2d(l)),
        Op::Conv1d => kernel(conv::conv(l, 1)),
        Op::Conv2dTranspose => kernel(conv_transpose::conv2d_transpose(l)),
        Op::Resize2d => kernel(resize::resize2d(l)),
    }
}

/// Runs tensor operator `op` on `args` outside any program (kernel tests, and
/// comparing a kernel with the oracle's): `None` for a Notable Operator.
pub fn run_standalone(op: Op, attrs: &Attrs, args: &[Value], memory: &Rc<Memory>) -> Option<Result<Value>> {
    let statics: Vec<Option<StructInfo>> = vec![None; args.len()];
    match lower(&Lowering { op, attrs, args: &statics }) {
        Lowered::Kernel(k) => Some(k.run(
            &KernelCx { op, span: Span::SYNTHETIC, memory, threads: 1, parallel_min: simd::PARALLEL_MIN_ELEMENTS },
            args,
        )),
        Lowered::Notable(_) => None,
    }
}
