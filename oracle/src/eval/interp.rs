//! Detailed Semantics: program entry and the evaluation of each expression (SEM-1..10),
//! with the function-boundary checks. Environments are persistent maps: a scope is a
//! pair (Relax variables, shape variables) extended by each binding; leaving a scope is
//! returning to the map one had (SEM-10.4 needs no undo code).

use super::builtins;
use super::match_cast::{bind_lone_shape_vars, eval_dim, match_cast};
use super::value::{Closure, Env, ErrorKind, EvalResult, RuntimeError, ShapeEnv, Value};
use spec_model::grammar::{
    BaseFunc, Binding, Expr, ExprKind, Function, IRModule, PrimExpr, PrimExprKind, SeqExpr, TensorData, Var,
};
use spec_model::Span;
use std::collections::HashMap;
use std::rc::Rc;

/// Limits that turn non-termination and deep recursion into errors.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Evaluation steps (expressions evaluated, TIR statements executed).
    pub fuel: u64,
    /// Nested calls of closures.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { fuel: 10_000_000, max_depth: 1_000 }
    }
}

/// A scope: the Relax variables and shape variables visible.
#[derive(Clone, Default)]
pub struct Scope {
    pub env: Env,
    pub shapes: ShapeEnv,
}

/// The interpreter's state: the module's globals, the remaining fuel, the call depth,
/// what `print` printed, and (with tracing) every rule as it fires.
pub struct Interp<'m> {
    pub module: &'m IRModule,
    globals: HashMap<String, Value>,
    pub fuel: u64,
    depth: usize,
    max_depth: usize,
    pub trace: Option<Vec<String>>,
    pub printed: Vec<String>,
}

impl<'m> Interp<'m> {
    /// Program entry: every global function is evaluated first and put in global
    /// scope (Relax functions become closures with nothing captured; PrimFuncs are
    /// opaque objects), so all globals see each other.
    pub fn new(module: &'m IRModule, limits: Limits) -> Interp<'m> {
        let mut globals = HashMap::new();
        for (gv, f) in &module.functions {
            let v = match f {
                BaseFunc::Relax(func) => Value::Closure(Rc::new(Closure {
                    func: func.clone(),
                    captured: Env::new(),
                    shapes: ShapeEnv::new(),
                    self_var: None,
                    name: gv.name.clone(),
                })),
                BaseFunc::Tir(pf) => Value::PrimFunc(gv.name.as_str().into(), pf.clone()),
            };
            globals.insert(gv.name.clone(), v);
        }
        Interp {
            module,
            globals,
            fuel: limits.fuel,
            depth: 0,
            max_depth: limits.max_depth,
            trace: None,
            printed: Vec::new(),
        }
    }

    /// Records that `rule` fired (with `--trace`).
    pub fn fire(&mut self, rule: &str) {
        if let Some(t) = &mut self.trace {
            t.push(rule.to_string());
        }
    }

    pub fn global(&self, name: &str) -> Option<&Value> {
        self.globals.get(name)
    }

    /// One step of fuel.
    pub fn step(&mut self, span: Span) -> EvalResult<()> {
        if self.fuel == 0 {
            return Err(RuntimeError::new(
                ErrorKind::FuelExhausted,
                "SEM",
                "the step budget (fuel) is exhausted",
                span,
            ));
        }
        self.fuel -= 1;
        Ok(())
    }

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
                sc.env.get(v).cloned().ok_or_else(|| {
                    RuntimeError::new(
                        ErrorKind::NotCallable,
                        "SEM-2",
                        format!("`{}` has no value here", v.name()),
                        e.span,
                    )
                })
            }
            ExprKind::GlobalVar(gv) => {
                self.fire("SEM-2");
                self.globals.get(&gv.name).cloned().ok_or_else(|| {
                    RuntimeError::new(ErrorKind::NotCallable, "SEM-2", format!("no global `{}`", gv.name), e.span)
                })
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
                match &t {
                    Value::Tuple(vs) => {
                        usize::try_from(*index).ok().and_then(|i| vs.get(i)).cloned().ok_or_else(|| {
                            RuntimeError::new(
                                ErrorKind::TupleIndexOutOfRange,
                                "SEM-4",
                                format!("index {index} of a tuple of {} fields", vs.len()),
                                e.span,
                            )
                        })
                    }
                    other => Err(RuntimeError::new(
                        ErrorKind::OpError,
                        "SEM-4",
                        format!("TupleGetItem of {}", other.kind()),
                        e.span,
                    )),
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
            ExprKind::Op(name) => Err(RuntimeError::new(
                ErrorKind::NotCallable,
                "SEM-9.1",
                format!("the operator `{name}` is not a value"),
                e.span,
            )),
            ExprKind::PrimValue(p) => {
                let v = super::match_cast::eval_shape_prim(p, &sc.shapes, "SEM-5", e.span)?;
                Ok(Value::Prim(builtins::prim_scalar(v, p.dtype())))
            }
            ExprKind::StringImm(s) => Ok(Value::Str(s.as_str().into())),
            ExprKind::DataTypeImm(d) => Ok(Value::DataType(*d)),
        }
    }

    /// SEM-5: a `ShapeExpr`'s dimensions, left to right, as a new shape value; a
    /// negative dimension is `NegativeDimension`, except, with `minus_one` (reshape's
    /// target, E-11), a literal `-1`.
    fn shape_value(&mut self, dims: &[PrimExpr], minus_one: bool, span: Span, sc: &Scope) -> EvalResult<Value> {
        self.fire("SEM-5");
        let mut out = Vec::with_capacity(dims.len());
        for d in dims {
            let v = eval_dim(d, &sc.shapes, "SEM-5", span)?;
            let literal_minus_one = matches!(&*d.kind, PrimExprKind::IntImm { value: -1, .. });
            if v < 0 && !(minus_one && literal_minus_one) {
                return Err(RuntimeError::new(
                    ErrorKind::NegativeDimension,
                    "SEM-5",
                    format!("dimension `{}` is {v}", spec_model::text::print_prim_expr(d)),
                    span,
                ));
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
    fn eval_call(&mut self, call: &spec_model::grammar::Call, span: Span, sc: &Scope) -> EvalResult<Value> {
        // SEM-9.1: an operator: the arguments in order, then the operator.
        if let ExprKind::Op(name) = &call.op.kind {
            let mut args = Vec::with_capacity(call.args.len());
            for (i, a) in call.args.iter().enumerate() {
                args.push(match (&a.kind, name.as_str(), i) {
                    // E-11: `R.reshape(x, (d, -1))` names the inferred dimension with
                    // -1 (TVM folds it when the call is built); anywhere else a negative
                    // dimension is an error (SEM-5).
                    (ExprKind::ShapeExpr(dims), "relax.reshape", 1) => {
                        self.step(a.span)?;
                        self.shape_value(dims, true, a.span, sc)?
                    }
                    _ => self.eval(a, sc)?,
                });
            }
            self.fire("SEM-9.1");
            return builtins::call_op(self, name, &args, call, span, sc);
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
            other => {
                Err(RuntimeError::new(ErrorKind::NotCallable, "SEM-9.2", format!("cannot call {}", other.kind()), span))
            }
        }
    }

    /// SEM-9.2.1 with the boundary checks: a new scope of the captured values, the
    /// closure itself (recursion) and the arguments; each argument `MatchCast` against
    /// its annotation (binding shape variables in parameter order); the body; the
    /// result `MatchCast` against the return annotation.
    pub fn call_closure(&mut self, c: &Rc<Closure>, args: Vec<Value>, span: Span) -> EvalResult<Value> {
        let f = &c.func;
        if args.len() != f.params.len() {
            return Err(RuntimeError::new(
                ErrorKind::NotCallable,
                "SEM-9.2.1",
                format!("`{}` takes {} arguments, {} given", c.name, f.params.len(), args.len()),
                span,
            ));
        }
        if self.depth >= self.max_depth {
            return Err(RuntimeError::new(
                ErrorKind::StackExhausted,
                "SEM-9.2.1",
                format!("more than {} nested calls (calling `{}`)", self.max_depth, c.name),
                span,
            ));
        }
        let mut sc = Scope { env: c.captured.clone(), shapes: c.shapes.clone() };
        if let Some(me) = &c.self_var {
            sc.env.insert(me.clone(), Value::Closure(c.clone()));
        }
        // E-3: the signature's lone shape variables bind first, then every parameter
        // is matched in order.
        for (p, a) in f.params.iter().zip(&args) {
            if let Some(si) = p.annotation() {
                bind_lone_shape_vars(a, si, &mut sc.shapes);
            }
        }
        for (p, a) in f.params.iter().zip(args) {
            if let Some(si) = p.annotation() {
                let mut trace = |r: &str| self.fire(r);
                match_cast(&a, si, &sc.env, &mut sc.shapes, p.span(), &mut trace)?;
            }
            sc.env.insert(p.clone(), a);
        }
        self.depth += 1;
        let result = self.eval(&f.body, &sc);
        self.depth -= 1;
        let result = result?;
        if let Some(si) = &f.ret_struct_info {
            let mut shapes = sc.shapes.clone();
            let mut trace = |r: &str| self.fire(r);
            match_cast(&result, si, &sc.env, &mut shapes, f.body.span, &mut trace)?;
        }
        Ok(result)
    }

    /// SEM-10: a new scope; the blocks' bindings in order (DataflowVars leave at
    /// their block's end); the body; the scope is dropped on return.
    fn eval_seq(&mut self, seq: &SeqExpr, outer: &Scope) -> EvalResult<Value> {
        self.fire("SEM-10.1");
        let mut sc = outer.clone();
        for block in &seq.blocks {
            for b in &block.bindings {
                self.step(b.span())?;
                match b {
                    Binding::MatchCast { var, struct_info, value, span } => {
                        let v = self.eval(value, &sc)?;
                        self.fire("SEM-10.2.1");
                        let mut shapes = sc.shapes.clone();
                        let mut trace = |r: &str| self.fire(r);
                        match_cast(&v, struct_info, &sc.env, &mut shapes, *span, &mut trace)?;
                        sc.shapes = shapes;
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
}

/// The truth of an `If` condition (SEM-7.1): a boolean scalar tensor, or a boolean
/// (or integer) prim value.
fn truth(c: &Value, span: Span) -> EvalResult<bool> {
    let bad = |what: String| RuntimeError::new(ErrorKind::OpError, "SEM-7.1", what, span);
    match c {
        Value::Tensor(t) => {
            let t = t.borrow();
            if !t.shape.is_empty() {
                return Err(bad(format!("the condition is a tensor of shape {:?}, not a scalar", t.shape)));
            }
            match &t.data {
                TensorData::Bool(b) => b.first().copied().ok_or_else(|| bad("an empty condition".into())),
                _ => Err(bad(format!("the condition has dtype {}, not bool", t.dtype))),
            }
        }
        Value::Prim(super::value::PrimScalar::Bool(b)) => Ok(*b),
        Value::Prim(super::value::PrimScalar::Int(i, _)) => Ok(*i != 0),
        other => Err(bad(format!("the condition is {}", other.kind()))),
    }
}
