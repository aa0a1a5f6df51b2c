//! Fused groups: a chain (or tree) of elementwise float operators, optionally headed by
//! a `matmul`, run as one pass over memory. The group's output is walked in chunks
//! that stay in L1; each chunk evaluates the whole tree through a few chunk-sized
//! registers, so no intermediate tensor is ever allocated, and the bias and
//! activation after a `matmul` run over its result while it is in cache.
//!
//! A fused group computes exactly what its operators compute one by one (each float
//! operation is the same IEEE operation on the same operands; only `exp`-like
//! functions may differ within the engines' tolerance, as the unfused kernels' vector
//! paths do). Whatever the fast path does not handle — an operand that is not a tensor
//! of the group's dtype (a packed function may return anything, E-14), shapes that do
//! not broadcast — runs the operators one by one, so errors are the unfused ones.
//!
//! The result is written into an operand's buffer when that operand has the result's
//! shape and the group holds the only reference to it (it died at this call and is
//! in no tuple, closure or other variable), or into the `matmul`'s fresh result.

use super::elementwise::{Arith, Unary};
use super::lanes::{same_shape, Lane};
use super::layout::broadcast_shapes;
use super::simd::parallel_chunks_mut;
use super::simd::{binary, binary_acc, unary, unary_acc, FloatElem};
use super::{Kernel, KernelCx};
use crate::dtype::DType;
use crate::error::Result;
use crate::stats::{self, Counter};
use crate::tensor::{element_count, Tensor};
use crate::value::Value;
use spec_model::ops::Op;
use spec_model::Span;
use std::rc::Rc;

/// Elements per chunk: a row of a 4096-wide tensor; fewer, longer calls of the vector
/// loops measured faster than L1-sized chunks (512: 15 ms, 4096: 11 ms for a fused
/// `relu(x + b)` over 16M f32), and a few registers of this size stay in L2.
const CHUNK: usize = 4096;

/// Where a member's operand comes from: the group's operand `k`, or member `j`'s result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    Arg(usize),
    Member(usize),
}

/// One operator call of the group, as it would run unfused.
pub struct Member {
    pub op: Op,
    pub kernel: Box<dyn Kernel>,
    pub args: Box<[Src]>,
    pub span: Span,
}

/// The elementwise operators a group can hold.
#[derive(Clone, Copy, Debug)]
pub enum Elementwise {
    Binary(Arith),
    Unary(Unary),
}

/// The operators a group can hold after its head.
pub fn elementwise(op: Op) -> Option<Elementwise> {
    use Elementwise::{Binary as B, Unary as U};
    Some(match op {
        Op::Add => B(Arith::Add),
        Op::Subtract => B(Arith::Subtract),
        Op::Multiply => B(Arith::Multiply),
        Op::Divide => B(Arith::Divide),
        Op::Maximum => B(Arith::Maximum),
        Op::Minimum => B(Arith::Minimum),
        Op::Negative => U(Unary::Negative),
        Op::Abs => U(Unary::Abs),
        Op::Relu => U(Unary::Relu),
        Op::Exp => U(Unary::Exp),
        Op::Sqrt => U(Unary::Sqrt),
        Op::Tanh => U(Unary::Tanh),
        Op::Sigmoid => U(Unary::Sigmoid),
        // Unary math and activations (issue 19): the same element functions unfused.
        Op::Erf => U(Unary::Erf),
        Op::Rsqrt => U(Unary::Rsqrt),
        Op::Sin => U(Unary::Sin),
        Op::Cos => U(Unary::Cos),
        Op::Floor => U(Unary::Floor),
        Op::Ceil => U(Unary::Ceil),
        Op::Round => U(Unary::Round),
        Op::Sign => U(Unary::Sign),
        Op::Square => U(Unary::Square),
        Op::Gelu => U(Unary::Gelu),
        Op::GeluTanh => U(Unary::GeluTanh),
        Op::Silu => U(Unary::Silu),
        _ => return None,
    })
}

/// The evaluation order of the group's tree (postfix).
#[derive(Clone, Copy, Debug)]
enum Step {
    Leaf(usize),
    /// The head `matmul`'s result.
    Head,
    Op(Elementwise),
}

/// A fused group: its members in program order (the last one's result is the group's).
pub struct FusedGroup {
    pub members: Vec<Member>,
    dtype: DType,
    /// Whether `members[0]` is a `matmul` whose result feeds the rest.
    head: bool,
    prog: Vec<Step>,
    /// The most registers a chunk's evaluation holds at once.
    registers: usize,
    /// Which of the group's operands the elementwise tree reads (the others only
    /// the head does).
    walked: Vec<bool>,
}

impl FusedGroup {
    /// The group of `members` (each result but the last used exactly once, by a later
    /// member), computing in `dtype`; `None` when they do not form such a tree.
    pub fn new(members: Vec<Member>, dtype: DType) -> Option<FusedGroup> {
        let head = members.first().is_some_and(|m| m.op == Op::Matmul);
        let mut used = vec![false; members.len()];
        let mut prog = Vec::new();
        postfix(&members, members.len().checked_sub(1)?, head, &mut used, &mut prog)?;
        if used.iter().filter(|u| !**u).count() != 1 {
            return None;
        }
        let mut depth = 0usize;
        let mut registers = 0usize;
        for s in &prog {
            match s {
                Step::Leaf(_) | Step::Head => depth += 1,
                Step::Op(Elementwise::Binary(_)) => depth -= 1,
                Step::Op(Elementwise::Unary(_)) => {}
            }
            registers = registers.max(depth);
        }
        let n_args = members.iter().flat_map(|m| m.args.iter()).filter(|s| matches!(s, Src::Arg(_))).count();
        let mut walked = vec![false; n_args];
        for s in &prog {
            if let Step::Leaf(k) = s {
                *walked.get_mut(*k)? = true;
            }
        }
        Some(FusedGroup { members, dtype, head, prog, registers, walked })
    }

    /// The operator whose result the group returns.
    pub fn root_op(&self) -> Op {
        self.members.last().map_or(Op::Add, |m| m.op)
    }

    /// Runs the group on its operands.
    pub fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        let head = match self.head {
            true => Some(self.run_member(cx, 0, args, &mut [])?),
            false => None,
        };
        let fast = match self.dtype {
            DType::F32 => self.fast::<f32>(cx, args, head.as_ref()),
            DType::F64 => self.fast::<f64>(cx, args, head.as_ref()),
            _ => None,
        };
        match fast {
            Some(r) => r,
            None => self.one_by_one(cx, args, head),
        }
    }

    /// Member `i` run as its own kernel, its operands from `args` and `results`.
    fn run_member(&self, cx: &KernelCx, i: usize, args: &[Value], results: &mut [Option<Value>]) -> Result<Value> {
        let m = &self.members[i];
        let mut operands = Vec::with_capacity(m.args.len());
        for s in m.args.iter() {
            operands.push(match *s {
                Src::Arg(k) => args[k].clone(),
                Src::Member(j) => results[j].take().unwrap_or(Value::Null),
            });
        }
        let mcx = KernelCx { op: m.op, span: m.span, ..*cx };
        m.kernel.run(&mcx, &operands)
    }

    /// The members run one after another, as unfused (the head's result already computed).
    fn one_by_one(&self, cx: &KernelCx, args: &[Value], head: Option<Value>) -> Result<Value> {
        let mut results: Vec<Option<Value>> = vec![None; self.members.len()];
        let first = usize::from(head.is_some());
        results[0] = head;
        for i in first..self.members.len() {
            results[i] = Some(self.run_member(cx, i, args, &mut results)?);
        }
        Ok(results.pop().flatten().unwrap_or(Value::Null))
    }

    /// The one-pass evaluation, or `None` when the operands are not what it handles.
    fn fast<T: FloatElem>(&self, cx: &KernelCx, args: &[Value], head: Option<&Value>) -> Option<Result<Value>> {
        let mut leaves: Vec<&Rc<Tensor>> = Vec::with_capacity(args.len());
        for (a, walked) in args.iter().zip(&self.walked) {
            match a {
                Value::Tensor(t) if !walked || t.dtype() == self.dtype && t.data().is_some() => leaves.push(t),
                _ => return None,
            }
        }
        let head = match head {
            Some(Value::Tensor(t)) if t.dtype() == self.dtype => Some(t),
            Some(_) => return None,
            None => None,
        };
        let shape = self.result_shape(&leaves, head)?;
        let numel = element_count(&shape)?;
        // The buffer the result goes to: the head's or a dying operand's when it has the
        // result's shape (no one else can see it), else a new one.
        let target = match head {
            Some(h) if same_shape(h.shape(), &shape) && Rc::strong_count(h) == 1 => Target::Head,
            _ => match (0..leaves.len()).position(|k| {
                self.walked[k] && same_shape(leaves[k].shape(), &shape) && Rc::strong_count(leaves[k]) == 1
            }) {
                Some(k) => Target::Leaf(k),
                None => Target::New,
            },
        };
        let out = match target {
            Target::Head => head.cloned()?,
            Target::Leaf(k) => leaves[k].clone(),
            Target::New => match Tensor::for_overwrite(self.dtype, &shape, cx.memory) {
                Ok(t) => Rc::new(t),
                Err(e) => return Some(Err(super::over_budget(e, cx.span))),
            },
        };
        stats::record(Counter::FusedGroups);
        stats::add(Counter::FusedOps, self.members.len() as u64);
        if !matches!(target, Target::New) {
            stats::record(Counter::InPlace);
        }
        if numel == 0 {
            return Some(Ok(Value::Tensor(out)));
        }
        // The inputs: each leaf and the head, read where they are, or through the output
        // for the one whose buffer the result reuses.
        let sources: Vec<(Target, &Rc<Tensor>)> = leaves
            .iter()
            .enumerate()
            .map(|(k, t)| (Target::Leaf(k), *t))
            .chain(head.map(|h| (Target::Head, h)))
            .collect();
        let mut guards = Vec::with_capacity(sources.len());
        for (which, t) in &sources {
            let unused = matches!(which, Target::Leaf(k) if !self.walked[*k]);
            guards.push(if *which == target || unused { None } else { Some(t.elements::<T>()?) });
        }
        let inputs: Vec<Input<T>> = guards
            .iter()
            .zip(&sources)
            .map(|(g, (which, t))| match g {
                None if *which == target => Input::Output,
                None => Input::Unused,
                Some(g) => Input::Data { data: &g[..], shape: t.shape() },
            })
            .collect();
        let walk = Walk::new(&shape, &inputs);
        if !walk.in_bounds(&inputs) {
            return Some(Err(super::common::layout_bug(cx)));
        }
        let mut o = out.elements_mut::<T>()?;
        let threads = cx.threads_for(numel);
        let (prog, registers) = (&self.prog[..], self.registers);
        let eval = |lo: usize, part: &mut [T]| walk.eval(prog, registers, &inputs, lo, part);
        if parallel_chunks_mut(threads, &mut o, cx.parallel_min / 2, eval) {
            stats::record(Counter::Threaded);
        }
        drop(o);
        drop(inputs);
        drop(guards);
        Some(Ok(Value::Tensor(out)))
    }

    /// The broadcast shape of the tree's root, or `None` when some operator's operands
    /// do not broadcast (the unfused run reports that operator's error).
    fn result_shape(&self, leaves: &[&Rc<Tensor>], head: Option<&Rc<Tensor>>) -> Option<Vec<u64>> {
        // Shapes borrowed from the operands until a broadcast makes a new one (a chain of
        // same-shape operands allocates nothing).
        enum Shape<'a> {
            Of(&'a [u64]),
            New(Vec<u64>),
        }
        impl Shape<'_> {
            fn dims(&self) -> &[u64] {
                match self {
                    Shape::Of(s) => s,
                    Shape::New(v) => v,
                }
            }
        }
        let mut stack: Vec<Shape> = Vec::with_capacity(self.registers + 1);
        for s in &self.prog {
            match s {
                Step::Leaf(k) => stack.push(Shape::Of(leaves.get(*k)?.shape())),
                Step::Head => stack.push(Shape::Of(head?.shape())),
                Step::Op(Elementwise::Unary(_)) => {}
                Step::Op(Elementwise::Binary(_)) => {
                    let b = stack.pop()?;
                    let a = stack.pop()?;
                    stack.push(if same_shape(a.dims(), b.dims()) {
                        a
                    } else {
                        Shape::New(broadcast_shapes(a.dims(), b.dims())?)
                    });
                }
            }
        }
        Some(stack.pop()?.dims().to_vec())
    }
}

/// The postfix order of member `i`'s tree into `prog`, marking members used.
fn postfix(members: &[Member], i: usize, head: bool, used: &mut [bool], prog: &mut Vec<Step>) -> Option<()> {
    if head && i == 0 {
        prog.push(Step::Head);
        return Some(());
    }
    let m = members.get(i)?;
    let e = elementwise(m.op)?;
    let arity = match e {
        Elementwise::Binary(_) => 2,
        Elementwise::Unary(_) => 1,
    };
    if m.args.len() != arity {
        return None;
    }
    for s in m.args.iter() {
        match *s {
            Src::Arg(k) => prog.push(Step::Leaf(k)),
            Src::Member(j) if j < i && !std::mem::replace(&mut used[j], true) => postfix(members, j, head, used, prog)?,
            Src::Member(_) => return None,
        }
    }
    prog.push(Step::Op(e));
    Some(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    New,
    Head,
    Leaf(usize),
}

/// An input of the walk: elements and the shape they broadcast from, or the output
/// buffer itself (an operand whose buffer the result reuses).
enum Input<'a, T> {
    Data {
        data: &'a [T],
        shape: &'a [u64],
    },
    Output,
    /// An operand only the head reads.
    Unused,
}

/// The result's shape with adjacent dimensions merged where every input walks them as
/// one (dimensions of 1 dropped), outermost first, and each input's stride along each:
/// `strides[d * inputs + k]`.
struct Walk {
    dims: Vec<usize>,
    strides: Vec<usize>,
    inputs: usize,
}

impl Walk {
    fn new<T>(shape: &[u64], inputs: &[Input<T>]) -> Walk {
        let n = inputs.len();
        // Built from the innermost dimension out: `own[k]` is input k's row-major stride
        // of the dimension at hand (the product of its dimensions inside it).
        let mut own = vec![1usize; n];
        let mut dims: Vec<usize> = Vec::new();
        let mut strides: Vec<usize> = Vec::new();
        let mut step = vec![0usize; n];
        for (i, &d) in shape.iter().enumerate().rev() {
            let d = d as usize;
            if d == 1 {
                continue;
            }
            let from_end = shape.len() - i;
            for (k, input) in inputs.iter().enumerate() {
                step[k] = match input {
                    Input::Data { shape: s, .. } => {
                        let dim = if from_end <= s.len() { s[s.len() - from_end] as usize } else { 1 };
                        let st = if dim == 1 { 0 } else { own[k] };
                        own[k] = own[k].saturating_mul(dim);
                        st
                    }
                    Input::Output | Input::Unused => 0,
                };
            }
            let merge = match dims.last() {
                Some(&inner) => {
                    let base = strides.len() - n;
                    (0..n).all(|k| inner.checked_mul(strides[base + k]) == Some(step[k]))
                }
                None => false,
            };
            match merge {
                true => *dims.last_mut().unwrap_or(&mut 0) *= d,
                false => {
                    dims.push(d);
                    strides.extend_from_slice(&step);
                }
            }
        }
        // Outermost first.
        dims.reverse();
        let mut flat = Vec::with_capacity(strides.len());
        for c in strides.chunks(n.max(1)).rev() {
            flat.extend_from_slice(c);
        }
        Walk { dims, strides: if n == 0 { Vec::new() } else { flat }, inputs: n }
    }

    fn stride(&self, d: usize, k: usize) -> usize {
        self.strides[d * self.inputs + k]
    }

    /// Does every input's walk stay inside its elements? (It does for operands of the
    /// shapes they claim; a layout bug must not read past them.)
    fn in_bounds<T>(&self, inputs: &[Input<T>]) -> bool {
        let rank = self.dims.len();
        inputs.iter().enumerate().all(|(k, i)| match i {
            Input::Output | Input::Unused => true,
            Input::Data { data, .. } => {
                let last = (0..rank)
                    .try_fold(0usize, |acc, d| acc.checked_add((self.dims[d] - 1).checked_mul(self.stride(d, k))?));
                last.is_some_and(|l| l < data.len()) && (rank == 0 || self.stride(rank - 1, k) <= 1)
            }
        })
    }

    /// Evaluates output elements `lo..lo + out.len()` into `out`.
    fn eval<'a, T: FloatElem>(
        &self,
        prog: &[Step],
        registers: usize,
        inputs: &[Input<'a, T>],
        lo: usize,
        out: &mut [T],
    ) {
        let len = self.dims.last().copied().unwrap_or(1);
        let mut regs: Vec<Vec<T>> = vec![vec![T::ZERO; CHUNK.min(out.len())]; registers.max(1)];
        let mut offsets = vec![0usize; self.inputs];
        let mut stack: Vec<Operand<'a, T>> = Vec::with_capacity(registers);
        let mut pos = 0usize;
        while pos < out.len() {
            let flat = lo + pos;
            let (row, col) = (flat / len, flat % len);
            self.row_offsets(row, &mut offsets);
            let seg = (len - col).min(out.len() - pos);
            let mut c = 0;
            while c < seg {
                let n = (seg - c).min(CHUNK);
                let dst = &mut out[pos + c..pos + c + n];
                let lanes = |k: usize| -> Lane<'a, T> {
                    match &inputs[k] {
                        &Input::Data { data, .. } => {
                            let step = if self.dims.is_empty() { 0 } else { self.stride(self.dims.len() - 1, k) };
                            let off = offsets[k];
                            if step == 0 {
                                Lane::Splat(data[off])
                            } else {
                                Lane::Run(&data[off + col + c..off + col + c + n])
                            }
                        }
                        Input::Output | Input::Unused => Lane::Splat(T::ZERO),
                    }
                };
                eval_chunk(prog, inputs, &lanes, &mut regs, &mut stack, dst, n);
                c += n;
            }
            pos += seg;
        }
    }

    /// Each input's offset of the first element of row `row` (rows are the last
    /// dimension's runs).
    fn row_offsets(&self, mut row: usize, offsets: &mut [usize]) {
        offsets.fill(0);
        let outer = self.dims.len().saturating_sub(1);
        for d in (0..outer).rev() {
            let (q, r) = (row / self.dims[d], row % self.dims[d]);
            if r > 0 {
                for (k, o) in offsets.iter_mut().enumerate() {
                    *o += r * self.stride(d, k);
                }
            }
            row = q;
        }
    }
}

/// A value on the evaluation stack: an input's lane or a register.
enum Operand<'a, T> {
    Lane(Lane<'a, T>),
    Reg(usize),
}

/// The register that is the chunk's output itself.
const DST: usize = usize::MAX;

/// Evaluates one chunk of `n` elements into `dst`. An operation whose result is the
/// bottom of the stack (so, eventually, the root's) computes straight into `dst`,
/// unless an operand still to be read is `dst` itself (an in-place operand not read
/// first), which `direct` rules out.
fn eval_chunk<'a, T: FloatElem>(
    prog: &[Step],
    inputs: &[Input<'a, T>],
    lanes: &impl Fn(usize) -> Lane<'a, T>,
    regs: &mut [Vec<T>],
    stack: &mut Vec<Operand<'a, T>>,
    dst: &mut [T],
    n: usize,
) {
    let direct = match prog.iter().position(|s| matches!(s, Step::Leaf(_) | Step::Head)) {
        Some(first) => {
            let output_at = |s: &Step| match *s {
                Step::Leaf(k) => matches!(inputs[k], Input::Output),
                Step::Head => matches!(inputs[inputs.len() - 1], Input::Output),
                Step::Op(_) => false,
            };
            prog.iter().enumerate().all(|(i, s)| i == first || !output_at(s))
        }
        None => true,
    };
    stack.clear();
    let mut free: Vec<usize> = (0..regs.len()).rev().collect();
    let leaves = inputs.len();
    for s in prog {
        match *s {
            Step::Leaf(_) | Step::Head => {
                let k = match *s {
                    Step::Leaf(k) => k,
                    _ => leaves - 1,
                };
                if let Input::Output = inputs[k] {
                    let r = free.pop().unwrap_or(0);
                    regs[r][..n].copy_from_slice(dst);
                    stack.push(Operand::Reg(r));
                } else {
                    stack.push(Operand::Lane(lanes(k)));
                }
            }
            Step::Op(Elementwise::Unary(u)) => {
                let Some(x) = stack.pop() else { return };
                let to_dst = direct && stack.is_empty();
                let r = match x {
                    Operand::Reg(DST) => {
                        unary_acc(u, dst);
                        DST
                    }
                    Operand::Reg(r) if to_dst => {
                        unary(u, dst, &regs[r][..n]);
                        free.push(r);
                        DST
                    }
                    Operand::Reg(r) => {
                        unary_acc(u, &mut regs[r][..n]);
                        r
                    }
                    Operand::Lane(l) => {
                        let (r, out) = match to_dst {
                            true => (DST, &mut dst[..]),
                            false => {
                                let r = free.pop().unwrap_or(0);
                                (r, &mut regs[r][..n])
                            }
                        };
                        match l {
                            Lane::Run(x) => unary(u, out, x),
                            Lane::Splat(x) => {
                                out.fill(x);
                                unary_acc(u, out);
                            }
                        }
                        r
                    }
                };
                stack.push(Operand::Reg(r));
            }
            Step::Op(Elementwise::Binary(op)) => {
                let (Some(b), Some(a)) = (stack.pop(), stack.pop()) else { return };
                let to_dst = direct && stack.is_empty();
                let r = binary_step(op, a, b, to_dst, regs, &mut free, dst, n);
                stack.push(Operand::Reg(r));
            }
        }
    }
    match stack.pop() {
        Some(Operand::Reg(DST)) => {}
        Some(Operand::Reg(r)) => dst.copy_from_slice(&regs[r][..n]),
        Some(Operand::Lane(Lane::Run(x))) => dst.copy_from_slice(x),
        Some(Operand::Lane(Lane::Splat(x))) => dst.fill(x),
        None => {}
    }
}

/// One binary operation of a chunk: its result's register (`DST` when `to_dst`).
#[allow(clippy::too_many_arguments)]
fn binary_step<T: FloatElem>(
    op: Arith,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    to_dst: bool,
    regs: &mut [Vec<T>],
    free: &mut Vec<usize>,
    dst: &mut [T],
    n: usize,
) -> usize {
    match (a, b) {
        (Operand::Reg(DST), Operand::Reg(rb)) => {
            binary_acc(op, dst, Lane::Run(&regs[rb][..n]), true);
            free.push(rb);
            DST
        }
        (Operand::Reg(DST), Operand::Lane(l)) => {
            binary_acc(op, dst, l, true);
            DST
        }
        (Operand::Reg(ra), Operand::Reg(DST)) => {
            binary_acc(op, dst, Lane::Run(&regs[ra][..n]), false);
            free.push(ra);
            DST
        }
        (Operand::Lane(l), Operand::Reg(DST)) => {
            binary_acc(op, dst, l, false);
            DST
        }
        (Operand::Reg(ra), Operand::Reg(rb)) if to_dst => {
            binary(op, dst, Lane::Run(&regs[ra][..n]), Lane::Run(&regs[rb][..n]));
            free.push(ra);
            free.push(rb);
            DST
        }
        (Operand::Reg(ra), Operand::Lane(l)) if to_dst => {
            binary(op, dst, Lane::Run(&regs[ra][..n]), l);
            free.push(ra);
            DST
        }
        (Operand::Lane(l), Operand::Reg(rb)) if to_dst => {
            binary(op, dst, l, Lane::Run(&regs[rb][..n]));
            free.push(rb);
            DST
        }
        (Operand::Lane(x), Operand::Lane(y)) if to_dst => {
            binary(op, dst, x, y);
            DST
        }
        (Operand::Reg(ra), Operand::Reg(rb)) => {
            let other = std::mem::take(&mut regs[rb]);
            binary_acc(op, &mut regs[ra][..n], Lane::Run(&other[..n]), true);
            regs[rb] = other;
            free.push(rb);
            ra
        }
        (Operand::Reg(ra), Operand::Lane(l)) => {
            binary_acc(op, &mut regs[ra][..n], l, true);
            ra
        }
        (Operand::Lane(l), Operand::Reg(rb)) => {
            binary_acc(op, &mut regs[rb][..n], l, false);
            rb
        }
        (Operand::Lane(x), Operand::Lane(y)) => {
            let r = free.pop().unwrap_or(0);
            binary(op, &mut regs[r][..n], x, y);
            r
        }
    }
}
