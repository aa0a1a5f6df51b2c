//! Lowering one Relax function to its plan: each variable gets a slot, each expression
//! becomes instructions that leave its value in a slot, in the spec's evaluation order
//! (SEM-1..10): arguments left to right, the callee of a non-Op call first, an `If`'s
//! condition then one branch, a `SeqExpr`'s bindings then its body.

use super::check::{self, Slots};
use super::fuse::Fusible;
use super::plan::{FuncPlan, Instr, NotableInfo, Operand, OutShape, OutTensor, Outputs, Param, Slot};
use super::shape::{compile as compile_shape, ShapeSlot};
use super::Module;
use crate::dtype::DType;
use crate::kernels::fused::{elementwise, Elementwise};
use crate::kernels::{lower, Lowered, Lowering, Notable};
use spec_model::grammar::DataType;
use spec_model::grammar::{
    AttrValue, Binding, Call, Expr, ExprKind, Function, PrimVar, SeqExpr, StructInfo, StructInfoKind, Var,
};
use spec_model::ops::{Op, OpRef};
use spec_model::Span;
use std::collections::HashMap;
use std::rc::Rc;

/// The state of one function's lowering.
pub(super) struct FnLowering<'c, 'm> {
    module: &'c mut Module<'m>,
    slots: HashMap<u64, Slot>,
    shapes: HashMap<u64, ShapeSlot>,
    n_slots: u32,
    code: Vec<Instr>,
    /// The shape variables bound in each open scope, innermost last: the function's
    /// (its parameters' lone variables and the captured ones), then one per `SeqExpr`.
    /// Which variables are bound at a point is static: an entry or a MatchCast that
    /// succeeds binds every lone variable it meets.
    scopes: Vec<Vec<ShapeSlot>>,
    /// The calls that may fuse, by instruction index (`fuse.rs`).
    fusible: HashMap<usize, Fusible>,
}

impl Slots for FnLowering<'_, '_> {
    fn shape_slot(&mut self, v: &PrimVar) -> ShapeSlot {
        let n = self.shapes.len() as ShapeSlot;
        *self.shapes.entry(v.id()).or_insert(n)
    }

    fn var_slot(&mut self, v: &Var) -> Operand {
        self.slots.get(&v.id()).copied()
    }
}

/// What a closure captures: the outer slots of its free variables, by variable id.
pub(super) struct Captures {
    pub vars: Vec<(Var, Operand)>,
    pub shapes: Vec<(PrimVar, ShapeSlot)>,
}

impl<'c, 'm> FnLowering<'c, 'm> {
    pub(super) fn new(module: &'c mut Module<'m>) -> Self {
        FnLowering {
            module,
            slots: HashMap::new(),
            shapes: HashMap::new(),
            n_slots: 0,
            code: Vec::new(),
            scopes: vec![],
            fusible: HashMap::new(),
        }
    }

    fn temp(&mut self) -> Slot {
        self.n_slots += 1;
        self.n_slots - 1
    }

    /// The slot a variable is bound to (a new one at its binding).
    fn bind(&mut self, v: &Var) -> Slot {
        if let Some(s) = self.slots.get(&v.id()) {
            return *s;
        }
        let s = self.temp();
        self.slots.insert(v.id(), s);
        s
    }

    /// Lowers `f` (named `name`); `captures` are the variables a closure receives, and
    /// `self_var` the variable a local function calls itself through.
    pub(super) fn function(
        mut self,
        f: &Function,
        name: String,
        captures: &Captures,
        self_var: Option<&Var>,
    ) -> FuncPlan {
        let param_slots: Vec<Slot> = f.params.iter().map(|p| self.bind(p)).collect();
        let capture_slots = captures.vars.iter().map(|(v, _)| self.bind(v)).collect();
        let capture_shapes: Vec<ShapeSlot> = captures.shapes.iter().map(|(v, _)| self.shape_slot(v)).collect();
        let mut function_scope = capture_shapes.clone();
        for p in &f.params {
            let mut lone = Vec::new();
            p.annotation().into_iter().for_each(|a| lone_vars(a, &mut lone));
            function_scope.extend(lone.iter().map(|v| self.shape_slot(v)));
        }
        self.scopes.push(function_scope);
        let self_slot = self_var.map(|v| self.bind(v));
        let params = f
            .params
            .iter()
            .zip(param_slots)
            .map(|(p, slot)| Param {
                slot,
                check: p.annotation().map(|a| check::check(a, &mut self)),
                lone: p.annotation().and_then(|a| check::lone(a, &mut self)),
                span: p.span(),
            })
            .collect();
        let ret = f.ret_struct_info.as_ref().map(|r| (check::check(r, &mut self), f.body.span));
        let result = self.expr(&f.body, None);
        self.code.push(Instr::Return { src: result, span: f.body.span });
        let mut plan = FuncPlan {
            name,
            n_slots: self.n_slots as usize,
            n_shapes: self.shapes.len(),
            params,
            capture_slots,
            capture_shapes,
            self_slot,
            code: self.code,
            dies: Vec::new(),
            ret,
        };
        super::fuse::fuse(&mut plan, &self.fusible);
        plan.dies = super::live::dying(&plan);
        plan
    }

    /// Lowers `e`; its value ends in `dst` when given, else in the returned slot.
    fn expr(&mut self, e: &Expr, dst: Option<Slot>) -> Operand {
        let span = e.span;
        let out = |this: &mut Self| dst.unwrap_or_else(|| this.temp());
        let value = match &e.kind {
            ExprKind::Var(v) => {
                let src = self.slots.get(&v.id()).copied();
                return match dst {
                    Some(d) => {
                        self.code.push(Instr::Move { dst: d, src, span });
                        Some(d)
                    }
                    None => src,
                };
            }
            ExprKind::Constant(a) => {
                let index = self.module.constant(a);
                let dst = out(self);
                self.code.push(match index {
                    Some(index) => Instr::Const { dst, index, span },
                    None => Instr::Crash { rule: "SEM-1", message: "a malformed constant".into(), span },
                });
                dst
            }
            ExprKind::GlobalVar(gv) => {
                let dst = out(self);
                self.code.push(match self.module.global_index(&gv.name) {
                    Some(index) => Instr::Global { dst, index },
                    None => Instr::Crash { rule: "TY-2", message: format!("no global `{}`", gv.name).into(), span },
                });
                dst
            }
            ExprKind::Tuple(fields) => {
                let fields = fields.iter().map(|f| self.expr(f, None)).collect();
                let dst = out(self);
                self.code.push(Instr::Tuple { dst, fields, span });
                dst
            }
            ExprKind::TupleGetItem { tuple_value, index } => {
                let tuple = self.expr(tuple_value, None);
                let dst = out(self);
                self.code.push(Instr::GetItem { dst, tuple, index: *index, span });
                dst
            }
            ExprKind::ShapeExpr(ds) => {
                let dst = out(self);
                self.shape_expr(ds, false, dst, span);
                dst
            }
            ExprKind::PrimValue(p) => {
                let code = compile_shape(p, &mut |v| self.shape_slot(v));
                let dst = out(self);
                self.code.push(Instr::Prim { dst, code, dtype: p.dtype(), span });
                dst
            }
            ExprKind::StringImm(s) => {
                let dst = out(self);
                self.code.push(Instr::Str { dst, value: s.as_str().into() });
                dst
            }
            ExprKind::DataTypeImm(d) => {
                let dst = out(self);
                self.code.push(Instr::DataType { dst, value: *d });
                dst
            }
            ExprKind::ExternFunc { global_symbol } => {
                let dst = out(self);
                self.code.push(Instr::Extern { dst, symbol: global_symbol.as_str().into(), span });
                dst
            }
            ExprKind::Op(op) => {
                let message = format!("the operator `{op}` is used as a value").into();
                self.code.push(Instr::Crash { rule: "WF-8", message, span });
                out(self)
            }
            ExprKind::Function(f) => {
                let dst = out(self);
                self.closure(f, None, "local function".into(), dst);
                dst
            }
            ExprKind::If(i) => {
                let cond = self.expr(&i.cond, None);
                let dst = out(self);
                let branch = self.code.len();
                self.code.push(Instr::JumpUnless { cond, target: 0, span: i.cond.span });
                self.expr(&i.true_branch, Some(dst));
                let jump = self.code.len();
                self.code.push(Instr::Jump { target: 0 });
                let else_start = self.code.len();
                self.expr(&i.false_branch, Some(dst));
                let end = self.code.len();
                if let Instr::JumpUnless { target, .. } = &mut self.code[branch] {
                    *target = else_start;
                }
                if let Instr::Jump { target } = &mut self.code[jump] {
                    *target = end;
                }
                dst
            }
            ExprKind::SeqExpr(s) => return self.seq(s, dst),
            ExprKind::Call(c) => {
                let dst = self.call(c, dst, span);
                return Some(dst);
            }
        };
        Some(value)
    }

    fn shape_expr(&mut self, ds: &[spec_model::grammar::PrimExpr], minus_one: bool, dst: Slot, span: Span) {
        let dims = ds.iter().map(|d| compile_shape(d, &mut |v| self.shape_slot(v))).collect();
        self.code.push(Instr::Shape { dst, dims, minus_one, span });
    }

    /// SEM-10: the bindings in order, then the body; the shape variables the scope bound
    /// are unbound when it closes.
    fn seq(&mut self, s: &SeqExpr, dst: Option<Slot>) -> Operand {
        self.scopes.push(Vec::new());
        for b in s.blocks.iter().flat_map(|b| &b.bindings) {
            match b {
                Binding::VarBinding { var, value, .. } => match &value.kind {
                    // A local function bound to `var` may call itself through it.
                    ExprKind::Function(f) => {
                        let slot = self.bind(var);
                        self.closure(f, Some(var), var.name().to_string(), slot);
                    }
                    _ => {
                        let slot = self.bind(var);
                        self.expr(value, Some(slot));
                    }
                },
                Binding::MatchCast { var, struct_info, value, span } => {
                    let src = self.expr(value, None);
                    let check = check::check(struct_info, self);
                    self.note_new_shapes(struct_info);
                    self.code.push(Instr::MatchCast { src, check: Box::new(check), span: *span });
                    if let Some(v) = var {
                        let slot = self.bind(v);
                        self.code.push(Instr::Move { dst: slot, src, span: *span });
                    }
                }
            }
        }
        let result = self.expr(&s.body, dst);
        if let Some(bound) = self.scopes.pop().filter(|b| !b.is_empty()) {
            self.code.push(Instr::Unbind { shapes: bound.into() });
        }
        result
    }

    /// Is shape variable `slot` bound here?
    fn is_bound(&self, slot: ShapeSlot) -> bool {
        self.scopes.iter().any(|s| s.contains(&slot))
    }

    /// A MatchCast binds its lone shape variables not yet bound, in the innermost scope
    /// (which unbinds them when it closes).
    fn note_new_shapes(&mut self, si: &StructInfo) {
        let mut lone = Vec::new();
        lone_vars(si, &mut lone);
        for v in lone {
            let slot = self.shape_slot(&v);
            if !self.is_bound(slot) {
                if let Some(scope) = self.scopes.last_mut() {
                    scope.push(slot);
                }
            }
        }
    }

    /// SEM-6: a closure of `f` in `dst`, capturing the variables it uses from here.
    fn closure(&mut self, f: &Rc<Function>, self_var: Option<&Var>, name: String, dst: Slot) {
        let (vars, shapes) = free_variables(f, self_var);
        // The shape variables bound here (SEM-6 captures the shape context); the others
        // start unbound in the closure.
        let shapes: Vec<(PrimVar, ShapeSlot)> = shapes
            .into_iter()
            .filter_map(|v| self.shapes.get(&v.id()).copied().filter(|s| self.is_bound(*s)).map(|s| (v, s)))
            .collect();
        let captures = Captures {
            vars: vars.into_iter().map(|v| (v.clone(), self.slots.get(&v.id()).copied())).collect(),
            shapes,
        };
        let func = self.module.nested_function(f, name, &captures, self_var);
        let capture_operands = captures.vars.iter().map(|(_, s)| *s).collect();
        let shape_operands = captures.shapes.iter().map(|(_, s)| *s).collect();
        self.code.push(Instr::Closure { dst, func, captures: capture_operands, shapes: shape_operands });
    }

    /// SEM-9: a call.
    fn call(&mut self, c: &Call, dst: Option<Slot>, span: Span) -> Slot {
        let OpRef::Registered(op) = (match &c.op.kind {
            ExprKind::Op(op) => op.clone(),
            _ => {
                // SEM-9.2: the callee, then the arguments.
                let callee = self.expr(&c.op, None);
                let args = c.args.iter().map(|a| self.expr(a, None)).collect();
                let dst = dst.unwrap_or_else(|| self.temp());
                self.code.push(Instr::Call { dst, callee, args, span });
                return dst;
            }
        }) else {
            let ExprKind::Op(OpRef::Unregistered(name)) = &c.op.kind else { unreachable!("matched above") };
            c.args.iter().for_each(|a| {
                self.expr(a, None);
            });
            self.code.push(Instr::Unregistered { name: name.clone(), span });
            return dst.unwrap_or_else(|| self.temp());
        };
        // SEM-9.1: the arguments in order (a ShapeExpr where the table allows `-1`
        // keeps it), then the operator.
        let def = op.def();
        let mut args = Vec::with_capacity(c.args.len());
        for (i, a) in c.args.iter().enumerate() {
            args.push(match &a.kind {
                ExprKind::ShapeExpr(ds) if def.admits_minus_one(i) => {
                    let t = self.temp();
                    self.shape_expr(ds, true, t, a.span);
                    Some(t)
                }
                _ => self.expr(a, None),
            });
        }
        let statics: Vec<Option<StructInfo>> = c.args.iter().map(|a| self.static_sinfo(a)).collect();
        let dst = dst.unwrap_or_else(|| self.temp());
        let args: Box<[Operand]> = args.into();
        let lowering = Lowering { op, attrs: &c.attrs, args: &statics };
        match lower(&lowering) {
            Lowered::Kernel(kernel) => {
                if let Some(f) = fusible(&lowering) {
                    self.fusible.insert(self.code.len(), f);
                }
                self.code.push(Instr::Kernel { dst, op, kernel, args, span })
            }
            Lowered::Notable(which) => {
                let extra = Box::new(self.notable_info(which, c));
                self.code.push(Instr::Notable { dst, op, which, args, extra, span });
            }
        }
        dst
    }

    fn static_sinfo(&self, e: &Expr) -> Option<StructInfo> {
        match &e.kind {
            ExprKind::Var(v) => self.module.static_sinfo(v),
            _ => None,
        }
    }

    fn notable_info(&mut self, which: Notable, c: &Call) -> NotableInfo {
        let format = match c.attrs.get("format") {
            Some(AttrValue::Str(s)) => Some(s.clone()),
            _ => None,
        };
        match which {
            Notable::CallTir | Notable::CallDpsPacked => {
                NotableInfo { outputs: Some(self.outputs(c.sinfo_args.first())), ..Default::default() }
            }
            Notable::CallTirInplace => {
                let indices: Option<Vec<i64>> = match c.attrs.get("inplace_indices") {
                    Some(AttrValue::Int(i)) => Some(vec![*i]),
                    Some(AttrValue::List(xs)) => {
                        xs.iter().map(|x| if let AttrValue::Int(i) = x { Some(*i) } else { None }).collect()
                    }
                    _ => None,
                };
                let (fields, tuple): (Vec<StructInfo>, bool) = match c.sinfo_args.first().map(|o| (o, &*o.kind)) {
                    Some((_, StructInfoKind::Tuple { fields })) => (fields.clone(), true),
                    Some((o, _)) => (vec![o.clone()], false),
                    None => (Vec::new(), false),
                };
                let inplace = match indices {
                    Some(ix) if ix.len() == fields.len() && !fields.is_empty() => Ok((ix, tuple)),
                    Some(_) => Err("one in-place index per output"),
                    None => Err("`inplace_indices` must be a list of integers"),
                };
                // Only the outputs at index -1 are allocated; they are passed as a tuple.
                let fresh: Vec<StructInfo> = match &inplace {
                    Ok((ix, _)) => fields.iter().zip(ix).filter(|(_, j)| **j == -1).map(|(f, _)| f.clone()).collect(),
                    Err(_) => Vec::new(),
                };
                let fresh = StructInfo::new(StructInfoKind::Tuple { fields: fresh }, c.op.span);
                NotableInfo { outputs: Some(self.outputs(Some(&fresh))), inplace: Some(inplace), ..Default::default() }
            }
            Notable::Print | Notable::AssertOp => NotableInfo { format, ..Default::default() },
            Notable::Cast => {
                NotableInfo { cast: c.sinfo_args.first().map(|s| check::check(s, self)), ..Default::default() }
            }
            Notable::CallPacked | Notable::ShapeOf | Notable::NullValue | Notable::Identity | Notable::Memory => {
                NotableInfo::default()
            }
        }
    }

    /// The tensors a destination-passing call allocates, from its `out_sinfo`.
    fn outputs(&mut self, out: Option<&StructInfo>) -> Outputs {
        let Some(out) = out else { return Outputs::Malformed("no output StructInfo") };
        let mut one = |si: &StructInfo| -> OutTensor {
            let (shape, dtype) = match &*si.kind {
                StructInfoKind::Tensor { shape: Some(shape), dtype, .. } => (shape, *dtype),
                _ => {
                    let bad = OutShape::Malformed("each output must be a tensor with a shape");
                    return OutTensor { dtype: spec_model::grammar::DataType::void(), shape: bad };
                }
            };
            let shape = match &shape.kind {
                ExprKind::ShapeExpr(ds) => {
                    OutShape::Dims(ds.iter().map(|d| compile_shape(d, &mut |v| self.shape_slot(v))).collect())
                }
                ExprKind::Var(v) => OutShape::Var(self.slots.get(&v.id()).copied()),
                _ => OutShape::Malformed("an output shape must be a ShapeExpr or a variable"),
            };
            OutTensor { dtype, shape }
        };
        match &*out.kind {
            StructInfoKind::Tuple { fields } => Outputs::Tuple(fields.iter().map(&mut one).collect()),
            _ => Outputs::One(one(out)),
        }
    }
}

/// Whether a call may join a fused group: an elementwise float operator (or a
/// `matmul` without a dtype change) of the right arity whose operands all statically
/// have the same `float32` or `float64` dtype.
fn fusible(l: &Lowering) -> Option<Fusible> {
    let arity = match elementwise(l.op) {
        Some(Elementwise::Binary(_)) => 2,
        Some(Elementwise::Unary(_)) => 1,
        None if l.op == Op::Matmul => {
            let same = match l.attrs.get("out_dtype") {
                None | Some(AttrValue::None) => true,
                Some(AttrValue::Str(s)) => {
                    DataType::parse(s).is_some_and(|d| d.is_void() || DType::of(d) == l.dtype(0))
                }
                Some(_) => false,
            };
            if !same {
                return None;
            }
            2
        }
        None => return None,
    };
    let dtype = l.dtype(0).filter(|d| matches!(d, DType::F32 | DType::F64))?;
    (l.args.len() == arity && (0..arity).all(|i| l.dtype(i) == Some(dtype))).then_some(Fusible { op: l.op, dtype })
}

/// The shape variables standing alone in a dimension of `si` (the ones a MatchCast binds).
fn lone_vars(si: &StructInfo, out: &mut Vec<PrimVar>) {
    match &*si.kind {
        StructInfoKind::Tensor { shape: Some(s), .. } => {
            if let ExprKind::ShapeExpr(ds) = &s.kind {
                out.extend(ds.iter().filter_map(|d| d.as_var().cloned()));
            }
        }
        StructInfoKind::Shape { values: Some(vs), .. } => out.extend(vs.iter().filter_map(|d| d.as_var().cloned())),
        StructInfoKind::Tuple { fields } => fields.iter().for_each(|f| lone_vars(f, out)),
        _ => {}
    }
}

/// The Relax variables (not DataflowVars, which closures do not capture, SEM-6) and
/// shape variables `f` uses without binding them, in order of first use.
fn free_variables(f: &Function, self_var: Option<&Var>) -> (Vec<Var>, Vec<PrimVar>) {
    let mut fv = super::free::FreeVars::default();
    fv.function(f);
    let vars = fv.vars.into_iter().filter(|v| !v.is_dataflow() && Some(v) != self_var).collect();
    (vars, fv.shapes)
}
