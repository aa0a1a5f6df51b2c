//! Detailed Semantics: the evaluation of each expression (SEM-1..10), with the
//! function-boundary checks. Scopes are persistent maps: a binding extends the scope
//! it is given and returns the extended one; leaving a scope is dropping it (SEM-10.4
//! needs no undo code). The effects (fuel, trace, printing, globals) are the
//! [`Machine`]'s.

use super::builtins;
use super::machine::{Machine, Scope};
use super::match_cast::{bind_lone_shape_vars, eval_dim, match_cast};
use super::ops::eval_op;
use super::value::{Closure, Env, ErrorKind, EvalResult, PrimScalar, Value};
use crate::{bail, crash};
use spec_model::grammar::{Binding, Call, Expr, ExprKind, Function, PrimExpr, PrimExprKind, SeqExpr, TensorData, Var};
use spec_model::ops::OpRef;
use spec_model::Span;
use std::rc::Rc;

impl Machine<'_> {
    /// Evaluates `e` in `sc`.
    pub fn eval(&mut self, e: &Expr, sc: &Scope) -> EvalResult<Value> {
        self.step(e.span)?;
        match &e.kind {
            // SEM-1: a new tensor with the constant's contents.
            ExprKind::Constant(a) => {
                self.fire("SEM-1");
                Ok(Value::tensor((**a).clone()))
            }
            // SEM-2: the stored value (aliasing).
            ExprKind::Var(v) => {
                self.fire("SEM-2");
                match sc.env.get(v) {
                    Some(x) => Ok(x.clone()),
                    None => crash!("WF-3", e.span, "`{}` has no value here", v.name()),
                }
            }
            ExprKind::GlobalVar(gv) => {
                self.fire("SEM-2");
                match self.global(&gv.name) {
                    Some(x) => Ok(x.clone()),
                    None => crash!("TY-2", e.span, "no global `{}`", gv.name),
                }
            }
            // SEM-3: fields left to right, a new tuple.
            ExprKind::Tuple(fields) => {
                self.fire("SEM-3");
                let mut vs = Vec::with_capacity(fields.len());
                for f in fields {
                    vs.push(self.eval(f, sc)?);
                }
                Ok(Value::Tuple(Rc::new(vs)))
            }
            // SEM-4: the i-th field.
            ExprKind::TupleGetItem { tuple_value, index } => {
                let t = self.eval(tuple_value, sc)?;
                self.fire("SEM-4");
                // Not a Crash: a packed function's result is trusted to match its
                // sinfo_args, and may not (proofs-notes/evaluation.md, E-14).
                let Value::Tuple(vs) = &t else {
                    bail!(ErrorKind::OpError, "SEM-4", e.span, "TupleGetItem of {}", t.kind())
                };
                match usize::try_from(*index).ok().and_then(|i| vs.get(i)) {
                    Some(x) => Ok(x.clone()),
                    None => bail!(
                        ErrorKind::TupleIndexOutOfRange,
                        "SEM-4",
                        e.span,
                        "index {index} of a tuple of {} fields",
                        vs.len()
                    ),
                }
            }
            // SEM-5: dimensions left to right in the shape context; a new shape value.
            ExprKind::ShapeExpr(dims) => self.shape_value(dims, false, e.span, sc),
            // SEM-6: a closure capturing the scope by reference (not DataflowVars).
            ExprKind::Function(f) => Ok(self.closure(f, sc, None, "local function".to_string())),
            // SEM-7: the condition, then one branch.
            ExprKind::If(i) => {
                let c = self.eval(&i.cond, sc)?;
                self.fire("SEM-7.1");
                if truth(&c, i.cond.span)? {
                    self.fire("SEM-7.2");
                    self.eval(&i.true_branch, sc)
                } else {
                    self.fire("SEM-7.3");
                    self.eval(&i.false_branch, sc)
                }
            }
            // SEM-8: the packed function registered under the symbol.
            ExprKind::ExternFunc { global_symbol } => {
                self.fire("SEM-8");
                builtins::extern_func(self, global_symbol, e.span)
            }
            ExprKind::Call(call) => self.eval_call(call, e.span, sc),
            ExprKind::SeqExpr(seq) => self.eval_seq(seq, sc),
            ExprKind::Op(op) => crash!("WF-8", e.span, "the operator `{op}` is used as a value"),
            ExprKind::PrimValue(p) => {
                let v = super::match_cast::eval_shape_prim(p, &sc.shapes, "SEM-5", e.span)?;
                Ok(Value::Prim(builtins::prim_scalar(v, p.dtype())))
            }
            ExprKind::StringImm(s) => Ok(Value::Str(s.as_str().into())),
            ExprKind::DataTypeImm(d) => Ok(Value::DataType(*d)),
        }
    }

    /// SEM-5: a `ShapeExpr`'s dimensions, left to right, as a new shape value; a
    /// negative dimension is `NegativeDimension`, except, with `minus_one` (an
    /// operator argument the operator table lets hold `-1`, E-11), a literal `-1`.
    fn shape_value(&mut self, dims: &[PrimExpr], minus_one: bool, span: Span, sc: &Scope) -> EvalResult<Value> {
        self.fire("SEM-5");
        let mut out = Vec::with_capacity(dims.len());
        for d in dims {
            let v = eval_dim(d, &sc.shapes, "SEM-5", span)?;
            let literal_minus_one = matches!(&*d.kind, PrimExprKind::IntImm { value: -1, .. });
            if v < 0 && !(minus_one && literal_minus_one) {
                let shown = spec_model::text::print_prim_expr(d);
                bail!(ErrorKind::NegativeDimension, "SEM-5", span, "dimension `{shown}` is {v}");
            }
            out.push(v);
        }
        Ok(Value::Shape(Rc::new(out)))
    }

    /// SEM-6: the closure of `f` in `sc`; `self_var` names it for recursive calls.
    fn closure(&mut self, f: &Rc<Function>, sc: &Scope, self_var: Option<Var>, name: String) -> Value {
        self.fire("SEM-6");
        let captured: Env =
            sc.env.iter().filter(|(v, _)| !v.is_dataflow()).map(|(k, v)| (k.clone(), v.clone())).collect();
        Value::Closure(Rc::new(Closure { func: f.clone(), captured, shapes: sc.shapes.clone(), self_var, name }))
    }

    /// SEM-9: calls of operators, closures and packed functions.
    fn eval_call(&mut self, call: &Call, span: Span, sc: &Scope) -> EvalResult<Value> {
        // SEM-9.1: an operator: the arguments in order, then the operator.
        if let ExprKind::Op(op) = &call.op.kind {
            let minus_one = |i: usize| op.registered().is_some_and(|o| o.def().admits_minus_one(i));
            let mut args = Vec::with_capacity(call.args.len());
            for (i, a) in call.args.iter().enumerate() {
                args.push(match &a.kind {
                    // E-11: e.g. `R.reshape(x, (d, -1))` names the inferred dimension with
                    // -1 (TVM folds it when the call is built); anywhere else a negative
                    // dimension is an error (SEM-5).
                    ExprKind::ShapeExpr(dims) if minus_one(i) => {
                        self.step(a.span)?;
                        self.shape_value(dims, true, a.span, sc)?
                    }
                    _ => self.eval(a, sc)?,
                });
            }
            self.fire("SEM-9.1");
            return match op {
                OpRef::Registered(op) => eval_op(self, *op, &args, call, span, sc),
                OpRef::Unregistered(name) => {
                    bail!(ErrorKind::OpError, "SEM-9.1", span, "no operator `{name}` is registered")
                }
            };
        }
        // SEM-9.2: the callee, then the arguments in order. A call of an ExternFunc is
        // how `R.call_packed("name", ...)` is represented.
        self.fire("SEM-9.2");
        if matches!(call.op.kind, ExprKind::ExternFunc { .. }) {
            self.fire("OP-call_packed");
        }
        let f = self.eval(&call.op, sc)?;
        let mut args = Vec::with_capacity(call.args.len());
        for a in &call.args {
            args.push(self.eval(a, sc)?);
        }
        self.apply(&f, args, span)
    }

    /// Applies a closure (SEM-9.2.1) or a packed function (SEM-9.2.2).
    pub fn apply(&mut self, f: &Value, args: Vec<Value>, span: Span) -> EvalResult<Value> {
        match f {
            Value::Closure(c) => {
                self.fire("SEM-9.2.1");
                self.call_closure(c, args, span)
            }
            Value::PackedFunc(name) => {
                self.fire("SEM-9.2.2");
                builtins::call_packed(self, name, &args, span)
            }
            // Not a Crash, as SEM-4 (E-14).
            other => bail!(ErrorKind::NotCallable, "SEM-9.2", span, "cannot call {}", other.kind()),
        }
    }

    /// SEM-9.2.1 with the boundary checks: a new scope of the captured values, the
    /// closure itself (recursion) and the arguments; each argument `MatchCast` against
    /// its annotation (binding shape variables in parameter order); the body; the
    /// result `MatchCast` against the return annotation.
    pub fn call_closure(&mut self, c: &Rc<Closure>, args: Vec<Value>, span: Span) -> EvalResult<Value> {
        let f = &c.func;
        if args.len() != f.params.len() {
            let (want, given) = (f.params.len(), args.len());
            bail!(ErrorKind::NotCallable, "SEM-9.2.1", span, "`{}` takes {want} arguments, {given} given", c.name);
        }
        let (result, sc) = self.nested(&c.name, span, |mach| {
            let sc = mach.bind_params(c, args)?;
            Ok((mach.eval(&f.body, &sc)?, sc))
        })?;
        if let Some(si) = &f.ret_struct_info {
            match_cast(self, &result, si, &sc.env, &sc.shapes, f.body.span)?;
        }
        Ok(result)
    }

    /// The scope of a closure's body: its captured values, the closure itself
    /// (recursion) and the arguments, each matched against its parameter's annotation.
    fn bind_params(&mut self, c: &Rc<Closure>, args: Vec<Value>) -> EvalResult<Scope> {
        let mut sc = Scope { env: c.captured.clone(), shapes: c.shapes.clone() };
        if let Some(me) = &c.self_var {
            sc.env.insert(me.clone(), Value::Closure(c.clone()));
        }
        // E-3: the signature's lone shape variables bind first, then every parameter
        // is matched in order.
        for (p, a) in c.func.params.iter().zip(&args) {
            if let Some(si) = p.annotation() {
                sc.shapes = bind_lone_shape_vars(a, si, &sc.shapes);
            }
        }
        for (p, a) in c.func.params.iter().zip(args) {
            if let Some(si) = p.annotation() {
                sc.shapes = match_cast(self, &a, si, &sc.env, &sc.shapes, p.span())?;
            }
            sc.env.insert(p.clone(), a);
        }
        Ok(sc)
    }

    /// SEM-10: a new scope; the blocks' bindings in order (DataflowVars leave at
    /// their block's end); the body; the scope is dropped on return.
    fn eval_seq(&mut self, seq: &SeqExpr, outer: &Scope) -> EvalResult<Value> {
        self.fire("SEM-10.1");
        let mut sc = outer.clone();
        for block in &seq.blocks {
            for b in &block.bindings {
                self.step(b.span())?;
                sc = self.eval_binding(b, sc)?;
            }
            if block.is_dataflow() {
                self.fire("SEM-10.2.3");
                for b in &block.bindings {
                    if let Some(v) = b.var().filter(|v| v.is_dataflow()) {
                        sc.env.remove(v);
                    }
                }
            }
        }
        self.fire("SEM-10.3");
        let r = self.eval(&seq.body, &sc);
        self.fire("SEM-10.4");
        r
    }

    /// SEM-10.2.1 and SEM-10.2.2: one binding; the scope it extends.
    fn eval_binding(&mut self, b: &Binding, mut sc: Scope) -> EvalResult<Scope> {
        match b {
            Binding::MatchCast { var, struct_info, value, span } => {
                let v = self.eval(value, &sc)?;
                self.fire("SEM-10.2.1");
                sc.shapes = match_cast(self, &v, struct_info, &sc.env, &sc.shapes, *span)?;
                if let Some(x) = var {
                    sc.env.insert(x.clone(), v);
                }
            }
            Binding::VarBinding { var, value, .. } => {
                let v = match &value.kind {
                    // A local function bound to `var` may call itself through it.
                    ExprKind::Function(f) => self.closure(f, &sc, Some(var.clone()), var.name().to_string()),
                    _ => self.eval(value, &sc)?,
                };
                self.fire("SEM-10.2.2");
                sc.env.insert(var.clone(), v);
            }
        }
        Ok(sc)
    }
}

/// The truth of an `If` condition (SEM-7.1): a boolean scalar tensor, or a boolean
/// (or integer) prim value.
fn truth(c: &Value, span: Span) -> EvalResult<bool> {
    match c {
        Value::Tensor(t) => {
            let t = t.borrow();
            if !t.shape.is_empty() {
                bail!(
                    ErrorKind::OpError,
                    "SEM-7.1",
                    span,
                    "the condition is a tensor of shape {:?}, not a scalar",
                    t.shape
                );
            }
            match &t.data {
                TensorData::Bool(b) => match b.first() {
                    Some(x) => Ok(*x),
                    None => bail!(ErrorKind::OpError, "SEM-7.1", span, "an empty condition"),
                },
                _ => bail!(ErrorKind::OpError, "SEM-7.1", span, "the condition has dtype {}, not bool", t.dtype),
            }
        }
        Value::Prim(PrimScalar::Bool(b)) => Ok(*b),
        Value::Prim(PrimScalar::Int(i, _)) => Ok(*i != 0),
        other => bail!(ErrorKind::OpError, "SEM-7.1", span, "the condition is {}", other.kind()),
    }
}
