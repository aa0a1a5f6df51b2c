//! The machine that runs an [`Executable`]: a loop over the current frame's
//! instructions, with calls pushing frames on an explicit stack (so deep Relax
//! recursion is `StackExhausted` at the configured depth, never a native stack
//! overflow), a step budget (fuel) and a memory budget.

mod check;
mod lowered;
mod notable;
mod packed;
pub mod print;

use crate::bail;
use crate::buffer::Memory;
use crate::compile::plan::{Instr, Operand, Slot};
use crate::compile::shape::{PErr, PVal, ShapeCode};
use crate::compile::Executable;
use crate::error::{Error, ErrorKind, Result};
use crate::kernels::simd::PARALLEL_MIN_ELEMENTS;
use crate::kernels::{over_budget, KernelCx};
use crate::value::{Closure, Prim, Value};
use spec_model::grammar::DataType;
use spec_model::Span;
use std::rc::Rc;

/// The bounds of one run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Instructions executed (and TIR statements and loop iterations).
    pub fuel: u64,
    /// Closure calls active at once.
    pub max_depth: usize,
    /// Bytes of tensors held at once.
    pub memory: usize,
    /// Threads a large kernel may split across (1: everything on the calling thread).
    pub threads: usize,
    /// The fewest output elements a kernel splits across threads (the differential
    /// tester lowers it so that small generated tensors exercise the splitting).
    pub parallel_min: usize,
    /// Fill each output a kernel promises to write entirely with scribble bytes (NaN, -1)
    /// instead of leaving it unspecified, so that an element it leaves unwritten shows
    /// up as a disagreement (the differential tester turns it on; costs a pass).
    pub scribble: bool,
}

/// The thread count `RELAX_THREADS` asks for (1 when unset or not a positive number).
pub fn threads_from_env() -> usize {
    std::env::var("RELAX_THREADS").ok().and_then(|s| s.trim().parse().ok()).filter(|n| *n > 0).unwrap_or(1)
}

/// The budgets in force (`spec_model::limits::current`): fuel, depth and memory.
impl Default for Limits {
    fn default() -> Self {
        let b = spec_model::limits::current();
        Limits {
            fuel: b.fuel,
            max_depth: b.max_depth,
            memory: b.memory,
            threads: threads_from_env(),
            parallel_min: PARALLEL_MIN_ELEMENTS,
            scribble: false,
        }
    }
}

/// One run of an executable: its budgets and what it printed.
pub struct Run<'e> {
    exe: &'e Executable,
    pub fuel: u64,
    max_depth: usize,
    threads: usize,
    parallel_min: usize,
    pub memory: Rc<Memory>,
    pub printed: Vec<String>,
}

/// A function's activation: its value slots, its shape-variable slots, where it is.
struct Frame {
    func: usize,
    pc: usize,
    slots: Vec<Option<Value>>,
    shapes: Vec<Option<i64>>,
    /// The caller's slot that receives the result.
    ret_dst: Slot,
}

/// What an instruction asks of the loop.
enum Flow {
    Next,
    Call(Frame),
    Return(Value),
}

/// The value of an operand (a variable without a value only occurs in an unchecked program).
fn read(frame: &Frame, op: Operand, span: Span) -> Result<Value> {
    match op.and_then(|s| frame.slots.get(s as usize)).and_then(|v| v.as_ref()) {
        Some(v) => Ok(v.clone()),
        None => Err(crash("WF-3", span, "a variable has no value here")),
    }
}

fn read_all(frame: &Frame, ops: &[Operand], span: Span) -> Result<Vec<Value>> {
    ops.iter().map(|o| read(frame, *o, span)).collect()
}

/// The values of a kernel's operands: one whose slot dies here is moved out of the
/// frame rather than copied, so that when nothing else holds it the kernel sees the
/// only reference and may write its result into it.
fn hand_over(frame: &mut Frame, ops: &[Operand], dies: &[Slot], span: Span) -> Result<Vec<Value>> {
    if dies.is_empty() {
        return read_all(frame, ops, span);
    }
    // From the last operand back, so that an operand passed twice is moved at its last
    // occurrence and copied from there at the earlier ones.
    let mut out: Vec<Option<Value>> = vec![None; ops.len()];
    let mut moved: Vec<(Slot, usize)> = Vec::new();
    for i in (0..ops.len()).rev() {
        out[i] = Some(match ops[i] {
            Some(s) if dies.binary_search(&s).is_ok() => match moved.iter().find(|(m, _)| *m == s) {
                Some(&(_, j)) => out[j].clone().unwrap_or(Value::Null),
                None => {
                    moved.push((s, i));
                    match frame.slots.get_mut(s as usize).and_then(Option::take) {
                        Some(v) => v,
                        None => return Err(crash("WF-3", span, "a variable has no value here")),
                    }
                }
            },
            op => read(frame, op, span)?,
        });
    }
    Ok(out.into_iter().map(|v| v.unwrap_or(Value::Null)).collect())
}

fn crash(rule: &'static str, span: Span, message: &str) -> Error {
    let message = format!("{message} (cannot happen in a checked program: a bug in the checker or the engine)");
    Error::new(ErrorKind::Crash, rule, message, span)
}

/// A shape expression's failure as the error of `rule`.
pub(crate) fn shape_error(e: PErr, code: &ShapeCode, rule: &'static str, span: Span) -> Error {
    let (kind, what) = match e {
        PErr::Overflow => (ErrorKind::IntegerOverflow, "overflows its dtype".to_string()),
        PErr::DivisionByZero => (ErrorKind::DivisionByZero, "divides by zero".to_string()),
        PErr::Unbound(n) => (ErrorKind::ShapeVarMismatch, format!("uses the unbound shape variable `{n}`")),
        PErr::Unsupported(m) => (ErrorKind::OpError, m.to_string()),
    };
    Error::new(kind, rule, format!("`{}` {what}", code.text), span)
}

/// A dimension's integer value (`rule` names the errors).
pub(crate) fn eval_dim(code: &ShapeCode, shapes: &[Option<i64>], rule: &'static str, span: Span) -> Result<i64> {
    match code.eval(shapes).map_err(|e| shape_error(e, code, rule, span))? {
        PVal::Int(i) => Ok(i),
        PVal::Bool(b) => Ok(i64::from(b)),
        PVal::Float(_) => bail!(ErrorKind::OpError, rule, span, "`{}` is not an integer", code.text),
    }
}

impl<'e> Run<'e> {
    pub fn new(exe: &'e Executable, limits: Limits) -> Run<'e> {
        Run {
            exe,
            fuel: limits.fuel,
            max_depth: limits.max_depth,
            threads: limits.threads.max(1),
            parallel_min: limits.parallel_min.max(2),
            memory: {
                let m = Memory::with_pool(limits.memory, exe.pool.clone());
                m.set_scribble(limits.scribble);
                m
            },
            printed: Vec::new(),
        }
    }

    /// The value of the global function `name`.
    pub fn global(&self, name: &str) -> Option<Value> {
        self.exe.global_names.get(name).and_then(|i| self.exe.globals.get(*i)).cloned()
    }

    fn kernel_cx(&self, op: spec_model::ops::Op, span: Span) -> KernelCx<'_> {
        KernelCx { op, span, memory: &self.memory, threads: self.threads, parallel_min: self.parallel_min }
    }

    /// LIMIT-fuel for tensor work: one step per [`ELEMENTS_PER_STEP`] elements.
    fn charge_tensor_work(&mut self, elements: u64, span: Span) -> Result<()> {
        let steps = elements / ELEMENTS_PER_STEP;
        if steps > self.fuel {
            self.fuel = 0;
            bail!(ErrorKind::FuelExhausted, "LIMIT-fuel", span, "the step budget (fuel) is exhausted by tensor work");
        }
        self.fuel -= steps;
        Ok(())
    }

    fn step(&mut self, span: Span) -> Result<()> {
        if self.fuel == 0 {
            bail!(ErrorKind::FuelExhausted, "LIMIT-fuel", span, "the step budget (fuel) is exhausted");
        }
        self.fuel -= 1;
        Ok(())
    }

    /// Applies `f` (a closure or a packed function) to `args` (SEM-9.2).
    pub fn call(&mut self, f: &Value, args: Vec<Value>, span: Span) -> Result<Value> {
        match f {
            Value::Closure(c) => self.run_closure(c, args, span),
            Value::PackedFunc(name) => self.call_packed(name, &args, span),
            other => bail!(ErrorKind::NotCallable, "SEM-9.2", span, "cannot call {}", other.kind()),
        }
    }

    /// SEM-9.2.1 with the boundary checks: the frame of closure `c` called on `args`
    /// when `depth` calls are active.
    fn enter(&mut self, c: &Rc<Closure>, args: Vec<Value>, span: Span, depth: usize) -> Result<Frame> {
        let plan = &self.exe.funcs[c.func];
        if args.len() != plan.params.len() {
            let (want, given) = (plan.params.len(), args.len());
            bail!(ErrorKind::NotCallable, "SEM-9.2.1", span, "`{}` takes {want} arguments, {given} given", plan.name);
        }
        if depth >= self.max_depth {
            bail!(
                ErrorKind::StackExhausted,
                "LIMIT-depth",
                span,
                "more than {} nested calls (calling `{}`)",
                self.max_depth,
                plan.name
            );
        }
        let mut frame = Frame {
            func: c.func,
            pc: 0,
            slots: vec![None; plan.n_slots],
            shapes: vec![None; plan.n_shapes],
            ret_dst: 0,
        };
        for (slot, v) in plan.capture_slots.iter().zip(c.captured.iter()) {
            frame.slots[*slot as usize] = v.clone();
        }
        for (slot, v) in plan.capture_shapes.iter().zip(c.shapes.iter()) {
            frame.shapes[*slot as usize] = *v;
        }
        if let Some(s) = plan.self_slot {
            frame.slots[s as usize] = Some(Value::Closure(c.clone()));
        }
        // E-3: the signature's lone shape variables bind first, then each parameter is
        // matched in order.
        for (p, a) in plan.params.iter().zip(&args) {
            if let Some(lone) = &p.lone {
                check::bind_lone(lone, a, &mut frame.shapes);
            }
        }
        for (p, a) in plan.params.iter().zip(args) {
            if let Some(c) = &p.check {
                check::match_cast(c, &a, &frame.slots, &mut frame.shapes, p.span)?;
            }
            frame.slots[p.slot as usize] = Some(a);
        }
        Ok(frame)
    }

    fn run_closure(&mut self, c: &Rc<Closure>, args: Vec<Value>, span: Span) -> Result<Value> {
        let exe = self.exe;
        let mut stack = vec![self.enter(c, args, span, 0)?];
        loop {
            let depth = stack.len();
            let Some(frame) = stack.last_mut() else { return Err(crash("SEM-9.2.1", span, "an empty call stack")) };
            let plan = &exe.funcs[frame.func];
            let Some(instr) = plan.code.get(frame.pc) else {
                return Err(crash("SEM-10.3", span, "a function ran past its end"));
            };
            let at = frame.pc;
            frame.pc += 1;
            let flow = self.exec(frame, instr, &plan.dies[at], depth)?;
            for s in plan.dies[at].iter() {
                frame.slots[*s as usize] = None;
            }
            match flow {
                Flow::Next => {}
                Flow::Call(callee) => stack.push(callee),
                Flow::Return(v) => {
                    let done = stack.pop();
                    match (stack.last_mut(), done) {
                        (Some(caller), Some(done)) => caller.slots[done.ret_dst as usize] = Some(v),
                        _ => return Ok(v),
                    }
                }
            }
        }
    }

    fn exec(&mut self, frame: &mut Frame, instr: &Instr, dies: &[Slot], depth: usize) -> Result<Flow> {
        let exe = self.exe;
        macro_rules! set {
            ($dst:expr, $v:expr) => {{
                frame.slots[*$dst as usize] = Some($v);
                Ok(Flow::Next)
            }};
        }
        match instr {
            Instr::Const { dst, index, span } => {
                self.step(*span)?;
                let t = exe.constants[*index].deep_copy(&self.memory).map_err(|e| over_budget(e, *span))?;
                set!(dst, Value::tensor(t))
            }
            Instr::Global { dst, index } => set!(dst, exe.globals[*index].clone()),
            Instr::Tuple { dst, fields, span } => {
                self.step(*span)?;
                set!(dst, Value::Tuple(read_all(frame, fields, *span)?.into()))
            }
            Instr::GetItem { dst, tuple, index, span } => {
                self.step(*span)?;
                let t = read(frame, *tuple, *span)?;
                // Not a Crash: a packed function may return a non-tuple declared a tuple (E-14).
                let Value::Tuple(fields) = &t else {
                    bail!(ErrorKind::OpError, "SEM-4", *span, "TupleGetItem of {}", t.kind())
                };
                match usize::try_from(*index).ok().and_then(|i| fields.get(i)) {
                    Some(v) => set!(dst, v.clone()),
                    None => {
                        let n = fields.len();
                        bail!(ErrorKind::TupleIndexOutOfRange, "SEM-4", *span, "index {index} of a tuple of {n} fields")
                    }
                }
            }
            Instr::Shape { dst, dims, minus_one, span } => {
                self.step(*span)?;
                let mut out = Vec::with_capacity(dims.len());
                for d in dims.iter() {
                    let v = eval_dim(d, &frame.shapes, "SEM-5", *span)?;
                    if v < 0 && !(*minus_one && d.is_minus_one()) {
                        bail!(ErrorKind::NegativeDimension, "SEM-5", *span, "dimension `{}` is {v}", d.text);
                    }
                    out.push(v);
                }
                set!(dst, Value::Shape(out.into()))
            }
            Instr::Prim { dst, code, dtype, span } => {
                self.step(*span)?;
                let v = code.eval(&frame.shapes).map_err(|e| shape_error(e, code, "SEM-5", *span))?;
                set!(dst, prim(v, *dtype))
            }
            Instr::Str { dst, value } => set!(dst, Value::Str(value.clone())),
            Instr::DataType { dst, value } => set!(dst, Value::DataType(*value)),
            Instr::Extern { dst, symbol, span } => {
                self.step(*span)?;
                if !packed::is_registered(exe, symbol) {
                    bail!(ErrorKind::UnknownExternFunc, "SEM-8", *span, "no packed function `{symbol}`");
                }
                set!(dst, Value::PackedFunc(symbol.clone()))
            }
            Instr::Closure { dst, func, captures, shapes } => {
                let captured = captures.iter().map(|o| o.and_then(|s| frame.slots[s as usize].clone())).collect();
                let shapes = shapes.iter().map(|s| frame.shapes[*s as usize]).collect();
                set!(dst, Value::Closure(Rc::new(Closure { func: *func, captured, shapes })))
            }
            Instr::Kernel { dst, op, kernel, args, span } => {
                self.step(*span)?;
                let args = hand_over(frame, args, dies, *span)?;
                let work = kernel_work(*op, &args).max(kernel.work(&args).unwrap_or(0));
                self.charge_tensor_work(work, *span)?;
                let v = kernel.run(&self.kernel_cx(*op, *span), &args)?;
                self.charge_tensor_work(tensor_elements(&v), *span)?;
                set!(dst, v)
            }
            Instr::Fused { dst, group, args, span } => {
                for _ in 0..group.members.len() {
                    self.step(*span)?;
                }
                let args = hand_over(frame, args, dies, *span)?;
                // Each member reads its operands and makes a result of the group's size:
                // the work of the unfused chain, charged up front.
                let out = group_result_elements(&args);
                let members = group.members.len() as u64;
                self.charge_tensor_work(args.iter().map(tensor_elements).sum::<u64>() + members * out, *span)?;
                let cx = self.kernel_cx(group.root_op(), *span);
                set!(dst, group.run(&cx, &args)?)
            }
            Instr::Notable { dst, op, which, args, extra, span } => {
                self.step(*span)?;
                let args = read_all(frame, args, *span)?;
                let v = self.notable(*op, *which, &args, extra, &frame.slots, &frame.shapes, *span)?;
                set!(dst, v)
            }
            Instr::Unregistered { name, span } => {
                bail!(ErrorKind::OpError, "SEM-9.1", *span, "no operator `{name}` is registered")
            }
            Instr::Call { dst, callee, args, span } => {
                self.step(*span)?;
                let f = read(frame, *callee, *span)?;
                let args = read_all(frame, args, *span)?;
                match f {
                    Value::Closure(c) => {
                        let mut callee = self.enter(&c, args, *span, depth)?;
                        callee.ret_dst = *dst;
                        Ok(Flow::Call(callee))
                    }
                    Value::PackedFunc(name) => set!(dst, self.call_packed(&name, &args, *span)?),
                    // Not a Crash: a packed function may return a non-function declared one (E-14).
                    other => bail!(ErrorKind::NotCallable, "SEM-9.2", *span, "cannot call {}", other.kind()),
                }
            }
            Instr::JumpUnless { cond, target, span } => {
                let c = read(frame, *cond, *span)?;
                if !truth(&c, *span)? {
                    frame.pc = *target;
                }
                Ok(Flow::Next)
            }
            Instr::Jump { target } => {
                frame.pc = *target;
                Ok(Flow::Next)
            }
            Instr::Move { dst, src, span } => {
                let v = read(frame, *src, *span)?;
                set!(dst, v)
            }
            Instr::MatchCast { src, check, span } => {
                self.step(*span)?;
                let v = read(frame, *src, *span)?;
                check::match_cast(check, &v, &frame.slots, &mut frame.shapes, *span)?;
                Ok(Flow::Next)
            }
            Instr::Unbind { shapes } => {
                for s in shapes.iter() {
                    frame.shapes[*s as usize] = None;
                }
                Ok(Flow::Next)
            }
            Instr::Return { src, span } => {
                let v = read(frame, *src, *span)?;
                if let Some((c, ret_span)) = &exe.funcs[frame.func].ret {
                    let mut shapes = frame.shapes.clone();
                    check::match_cast(c, &v, &frame.slots, &mut shapes, *ret_span)?;
                }
                Ok(Flow::Return(v))
            }
            Instr::Crash { rule, message, span } => Err(crash(rule, *span, message)),
        }
    }
}

/// A `PrimValue` of `dtype`.
fn prim(v: PVal, dtype: DataType) -> Value {
    Value::Prim(match v {
        PVal::Int(i) => Prim::Int(i, dtype),
        PVal::Bool(b) => Prim::Bool(b),
        PVal::Float(f) => Prim::Float(f, dtype),
    })
}

/// SEM-7.1: the truth of an `If` condition: a boolean scalar tensor, or a boolean (or
/// integer) prim value.
fn truth(c: &Value, span: Span) -> Result<bool> {
    match c {
        Value::Tensor(t) => {
            if t.rank() != 0 {
                bail!(
                    ErrorKind::OpError,
                    "SEM-7.1",
                    span,
                    "the condition is a tensor of shape {:?}, not a scalar",
                    t.shape()
                );
            }
            if !t.dtype().is_bool() {
                bail!(ErrorKind::OpError, "SEM-7.1", span, "the condition has dtype {}, not bool", t.dtype());
            }
            match t.elements::<u8>() {
                Some(b) if !b.is_empty() => Ok(b[0] != 0),
                _ => bail!(ErrorKind::OpError, "SEM-7.1", span, "an unreadable condition"),
            }
        }
        Value::Prim(Prim::Bool(b)) => Ok(*b),
        Value::Prim(Prim::Int(i, _)) => Ok(*i != 0),
        other => bail!(ErrorKind::OpError, "SEM-7.1", span, "the condition is {}", other.kind()),
    }
}

/// Tensor elements per step of fuel, as the spec's LIMIT-fuel charges kernels.
pub const ELEMENTS_PER_STEP: u64 = 16;

/// The elements of a value's tensors (a tuple's, one level deep).
fn tensor_elements(v: &Value) -> u64 {
    match v {
        Value::Tensor(t) => t.numel() as u64,
        Value::Tuple(fs) => fs.iter().map(|f| if let Value::Tensor(t) = f { t.numel() as u64 } else { 0 }).sum(),
        _ => 0,
    }
}

/// What a kernel reads, and for a matmul its multiply-adds: a `[.., m, k]` operand
/// meets each of the other's `n` columns.
fn kernel_work(op: spec_model::ops::Op, args: &[Value]) -> u64 {
    let read: u64 = args.iter().map(tensor_elements).fold(0, u64::saturating_add);
    let (spec_model::ops::Op::Matmul, [Value::Tensor(a), Value::Tensor(b)]) = (op, args) else { return read };
    let (sa, sb) = (a.shape(), b.shape());
    let rows = if sa.len() >= 2 { sa[sa.len() - 2] } else { 1 };
    let cols = if sb.len() >= 2 { sb[sb.len() - 1] } else { 1 };
    read.max((a.numel() as u64).saturating_mul(cols)).max((b.numel() as u64).saturating_mul(rows))
}

/// The size of a fused elementwise group's result: its largest operand (operands
/// broadcast to it).
fn group_result_elements(args: &[Value]) -> u64 {
    args.iter().map(tensor_elements).max().unwrap_or(0)
}
