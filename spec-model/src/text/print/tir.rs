//! `@T.prim_func`s: parameters (`T.Buffer` when the shape is constant, `T.handle` +
//! `T.match_buffer` when it is symbolic, as TVM prints), shape-variable
//! declarations, loops (`T.grid` for perfect nests), blocks and statements.

use super::literal::{attr_dict, string_lit};
use super::names::Names;
use super::scalar::{Defaults, Scalar, ScalarPrinter, View, P_ATOM};
use super::{block, call, joined, list, tuple, txt, Dialect, Doc};
use crate::grammar::tir::{
    Block, Buffer, BufferRegion, ForKind, Intrinsic, IterKind, PrimFunc, RegionDim, Stmt, StmtKind, TirExpr,
    TirExprKind,
};
use crate::grammar::{AttrValue, DataType, PrimVar};
use crate::text::elab::tir::{TIR_FLOAT, TIR_INT};
use pretty::RcDoc;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

impl Scalar for TirExpr {
    fn view(&self) -> View<'_, Self> {
        match &*self.kind {
            TirExprKind::Var(v) => View::Var(v),
            TirExprKind::IntImm { value, dtype } => View::Int(*value, *dtype),
            TirExprKind::FloatImm { value, dtype } => View::Float(value.0, *dtype),
            TirExprKind::Binary { op, a, b } => View::Bin(*op, a, b),
            TirExprKind::Not(a) => View::Not(a),
            TirExprKind::Select { cond, then_value, else_value } => View::Select(cond, then_value, else_value),
            TirExprKind::Cast { dtype, value } => View::Cast(*dtype, value),
            TirExprKind::BufferLoad { .. } | TirExprKind::Call { .. } => View::Other,
        }
    }
    fn dtype(&self) -> DataType {
        TirExpr::dtype(self)
    }
}

struct TirPrinter {
    names: RefCell<Names>,
    loops: RefCell<HashMap<u64, (TirExpr, TirExpr)>>,
    dialect: Dialect,
}

fn is_zero_of(e: &TirExpr, dtype: DataType) -> bool {
    matches!(&*e.kind, TirExprKind::IntImm { value: 0, dtype: d } if *d == dtype)
}

pub(crate) fn prim_func(name: &str, f: &PrimFunc, reserved: Rc<HashSet<String>>, dialect: Dialect) -> Doc {
    let p = TirPrinter { names: RefCell::new(Names::new(reserved)), loops: RefCell::new(HashMap::new()), dialect };
    p.function(name, f)
}

/// Variables bound inside the function (loops, lets, axes) and those referenced.
fn collect(stmts: &[Stmt], bound: &mut HashSet<u64>, refs: &mut Vec<PrimVar>) {
    fn e(x: &TirExpr, refs: &mut Vec<PrimVar>) {
        match &*x.kind {
            TirExprKind::Var(v) => {
                if !refs.contains(v) {
                    refs.push(v.clone())
                }
            }
            TirExprKind::IntImm { .. } | TirExprKind::FloatImm { .. } => {}
            TirExprKind::Binary { a, b, .. } => {
                e(a, refs);
                e(b, refs);
            }
            TirExprKind::Not(a) | TirExprKind::Cast { value: a, .. } => e(a, refs),
            TirExprKind::Select { cond, then_value, else_value } => {
                e(cond, refs);
                e(then_value, refs);
                e(else_value, refs);
            }
            TirExprKind::BufferLoad { buffer, indices } => {
                buffer.shape().iter().for_each(|d| e(d, refs));
                indices.iter().for_each(|i| e(i, refs));
            }
            TirExprKind::Call { args, .. } => args.iter().for_each(|a| e(a, refs)),
        }
    }
    for s in stmts {
        match &s.kind {
            StmtKind::For { var, begin, end, body, .. } => {
                bound.insert(var.id());
                e(begin, refs);
                e(end, refs);
                collect(body, bound, refs);
            }
            StmtKind::BufferStore { buffer, indices, value } => {
                buffer.shape().iter().for_each(|d| e(d, refs));
                indices.iter().for_each(|i| e(i, refs));
                e(value, refs);
            }
            StmtKind::IfThenElse { cond, then_body, else_body } => {
                e(cond, refs);
                collect(then_body, bound, refs);
                collect(else_body, bound, refs);
            }
            StmtKind::Block(b) => {
                for iv in &b.iter_vars {
                    bound.insert(iv.var.id());
                    e(&iv.begin, refs);
                    e(&iv.end, refs);
                    e(&iv.binding, refs);
                }
                for r in b.reads.iter().chain(&b.writes) {
                    for d in &r.region {
                        match d {
                            RegionDim::Point(x) => e(x, refs),
                            RegionDim::Range { begin, end } => {
                                e(begin, refs);
                                e(end, refs);
                            }
                        }
                    }
                }
                if let Some(p) = &b.predicate {
                    e(p, refs);
                }
                collect(b.init.as_deref().unwrap_or(&[]), bound, refs);
                collect(&b.body, bound, refs);
            }
            StmtKind::AllocBuffer(b) => b.shape().iter().for_each(|d| e(d, refs)),
            StmtKind::Let { var, value } => {
                bound.insert(var.id());
                e(value, refs);
            }
            StmtKind::Evaluate(x) => e(x, refs),
        }
    }
}

impl TirPrinter {
    fn scalar<R>(&self, f: impl FnOnce(&ScalarPrinter<TirExpr>) -> R) -> R {
        let name = |v: &PrimVar| self.names.borrow_mut().prim(v);
        let other = |x: &TirExpr, sp: &ScalarPrinter<TirExpr>| -> (Doc, u8) {
            match &*x.kind {
                TirExprKind::BufferLoad { buffer, indices } => (self.access(buffer, indices, sp), P_ATOM),
                TirExprKind::Call { op, args } => {
                    let docs = match (op, args.as_slice()) {
                        (Intrinsic::IfThenElse, [c, a, b]) => {
                            let (ta, tb) = sp.pair(a, b);
                            vec![sp.print(c).0, sp.operand(a, ta).0, sp.operand(b, tb).0]
                        }
                        (op, [a, b]) if *op == Intrinsic::Pow || op.is_bitwise_binary() => {
                            let (ta, tb) = sp.pair(a, b);
                            vec![sp.operand(a, ta).0, sp.operand(b, tb).0]
                        }
                        _ => args.iter().map(|a| sp.print(a).0).collect(),
                    };
                    (call(format!("T.{}", op.name()), docs), P_ATOM)
                }
                _ => (txt("<?>"), P_ATOM),
            }
        };
        let sp = ScalarPrinter {
            defaults: Defaults { int: TIR_INT, float: TIR_FLOAT },
            also: self.dialect.literal_reader(false),
            var_name: &name,
            other: &other,
            in_call: false,
        };
        f(&sp)
    }

    fn expr(&self, e: &TirExpr) -> Doc {
        self.scalar(|sp| sp.print(e).0)
    }

    fn coerced(&self, e: &TirExpr, target: DataType) -> Doc {
        self.scalar(|sp| sp.print_coerced(e, Some(target)).0)
    }

    fn pair(&self, a: &TirExpr, b: &TirExpr) -> (Doc, Doc) {
        self.scalar(|sp| {
            let (ta, tb) = sp.pair(a, b);
            (sp.operand(a, ta).0, sp.operand(b, tb).0)
        })
    }

    fn access(&self, buffer: &Buffer, indices: &[TirExpr], sp: &ScalarPrinter<TirExpr>) -> Doc {
        let name = self.names.borrow_mut().buffer(buffer);
        if indices.is_empty() {
            // A 0-d buffer: `S[()]`.
            return txt(format!("{name}[()]"));
        }
        let idx: Vec<Doc> = indices.iter().map(|i| sp.print(i).0).collect();
        txt(format!("{name}[")).append(joined(idx, txt(", "))).append(txt("]"))
    }

    fn shape(&self, b: &Buffer) -> Doc {
        tuple(b.shape().iter().map(|d| self.expr(d)).collect())
    }

    fn buffer_args(&self, b: &Buffer) -> Vec<Doc> {
        let mut args = vec![self.shape(b), txt(string_lit(&b.dtype().to_string()))];
        if b.scope() != "global" {
            args.push(txt(format!("scope={}", string_lit(b.scope()))));
        }
        args
    }

    fn function(&self, name: &str, f: &PrimFunc) -> Doc {
        let private = f.attrs.get("global_symbol").is_none();
        let mut attrs = f.attrs.0.clone();
        if matches!(attrs.get("global_symbol"), Some(AttrValue::Str(s)) if s == name) {
            attrs.remove("global_symbol");
        }
        let mut options: Vec<&str> = if private { vec!["private=True"] } else { Vec::new() };
        options.extend(self.dialect.prim_func_options());
        let decorator = if options.is_empty() {
            "@T.prim_func".to_string()
        } else {
            format!("@T.prim_func({})", options.join(", "))
        };
        let mut params = Vec::new();
        let mut matches = Vec::new();
        let mut param_ids: HashSet<u64> = HashSet::new();
        for p in &f.params {
            param_ids.insert(p.var.id());
            match &p.buffer {
                Some(b) if b.shape().iter().all(|d| matches!(&*d.kind, TirExprKind::IntImm { .. })) => {
                    let n = self.names.borrow_mut().buffer(b);
                    params.push(txt(format!("{n}: ")).append(call("T.Buffer", self.buffer_args(b))));
                }
                Some(b) => {
                    let hint =
                        if p.var.name() == b.name() { format!("var_{}", b.name()) } else { p.var.name().to_string() };
                    let h = self.names.borrow_mut().prim_named(&p.var, &hint);
                    params.push(txt(format!("{h}: T.handle")));
                    matches.push((h, b.clone()));
                }
                None => {
                    let n = self.names.borrow_mut().prim(&p.var);
                    let ty = if p.var.dtype() == DataType::handle() {
                        "handle".to_string()
                    } else {
                        p.var.dtype().to_string()
                    };
                    params.push(txt(format!("{n}: T.{ty}")));
                }
            }
        }
        let header = call(format!("def {name}"), params);
        let mut body = Vec::new();
        if !attrs.is_empty() {
            body.push(call("T.func_attr", vec![attr_dict(&attrs)]));
        }
        // Shape variables no parameter, loop, let or axis binds are declared first.
        let mut bound = param_ids;
        let mut refs = Vec::new();
        for p in &f.params {
            if let Some(b) = &p.buffer {
                collect(&[Stmt { kind: StmtKind::AllocBuffer(b.clone()), span: b.span() }], &mut bound, &mut refs);
            }
        }
        collect(&f.body, &mut bound, &mut refs);
        for v in refs.iter().filter(|v| !bound.contains(&v.id())) {
            let n = self.names.borrow_mut().prim(v);
            body.push(txt(format!("{n} = T.{}()", v.dtype())));
        }
        for (h, b) in matches {
            let n = self.names.borrow_mut().buffer(&b);
            let mut args = vec![txt(h)];
            args.extend(self.buffer_args(&b));
            body.push(txt(format!("{n} = ")).append(call("T.match_buffer", args)));
        }
        body.extend(self.stmts(&f.body));
        txt(decorator).append(RcDoc::hardline()).append(block(header, body))
    }

    fn stmts(&self, stmts: &[Stmt]) -> Vec<Doc> {
        stmts.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&self, s: &Stmt) -> Doc {
        match &s.kind {
            StmtKind::For { .. } => self.for_loop(s),
            StmtKind::BufferStore { buffer, indices, value } => {
                let lhs = self.scalar(|sp| self.access(buffer, indices, sp));
                lhs.append(txt(" = ")).append(self.coerced(value, buffer.dtype()))
            }
            StmtKind::IfThenElse { cond, then_body, else_body } => {
                let mut d = block(txt("if ").append(self.expr(cond)), self.stmts(then_body));
                if !else_body.is_empty() {
                    d = d.append(RcDoc::hardline()).append(block(txt("else"), self.stmts(else_body)));
                }
                d
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::AllocBuffer(b) => {
                let n = self.names.borrow_mut().buffer(b);
                txt(format!("{n} = ")).append(call("T.alloc_buffer", self.buffer_args(b)))
            }
            StmtKind::Let { var, value } => {
                let n = self.names.borrow_mut().prim(var);
                txt(format!("{n}: T.{} = ", var.dtype())).append(self.coerced(value, var.dtype()))
            }
            StmtKind::Evaluate(e) => call("T.evaluate", vec![self.expr(e)]),
        }
    }

    fn for_loop(&self, s: &Stmt) -> Doc {
        // A perfect nest of serial loops from 0 prints as one `T.grid`.
        let mut chain: Vec<(&PrimVar, &TirExpr, &TirExpr)> = Vec::new();
        let mut cur = s;
        let body = loop {
            let StmtKind::For { var, begin, end, kind, body } = &cur.kind else { unreachable!("a loop") };
            let gridable = *kind == ForKind::Serial
                && is_zero_of(begin, end.dtype())
                && !end.vars_any(&chain.iter().map(|c| c.0.id()).collect::<Vec<_>>());
            if !chain.is_empty() && !gridable {
                break std::slice::from_ref(cur);
            }
            chain.push((var, begin, end));
            if !gridable {
                break body.as_slice();
            }
            match body.as_slice() {
                [inner @ Stmt { kind: StmtKind::For { .. }, .. }] => cur = inner,
                _ => break body.as_slice(),
            }
        };
        for (v, b, e) in &chain {
            self.loops.borrow_mut().insert(v.id(), ((*b).clone(), (*e).clone()));
        }
        let vars: Vec<String> = chain.iter().map(|(v, ..)| self.names.borrow_mut().prim(v)).collect();
        let iter = if chain.len() > 1 {
            call("T.grid", chain.iter().map(|(_, _, e)| self.expr(e)).collect())
        } else {
            let StmtKind::For { begin, end, kind, .. } = &s.kind else { unreachable!("a loop") };
            let f = match kind {
                ForKind::Serial => "range",
                ForKind::Parallel => "T.parallel",
                ForKind::Unroll => "T.unroll",
                ForKind::Vectorized => "T.vectorized",
                ForKind::ThreadBinding(_) => "T.thread_binding",
            };
            let mut args = if is_zero_of(begin, end.dtype()) {
                vec![self.expr(end)]
            } else {
                let (b, e) = self.pair(begin, end);
                vec![b, e]
            };
            if let ForKind::ThreadBinding(tag) = kind {
                args.push(txt(format!("thread={}", string_lit(tag))));
            }
            call(f, args)
        };
        let header = txt(format!("for {} in ", vars.join(", "))).append(iter);
        block(header, self.stmts(body))
    }

    fn region(&self, r: &BufferRegion) -> Doc {
        let name = self.names.borrow_mut().buffer(&r.buffer);
        if r.region.is_empty() {
            return txt(name);
        }
        let dims: Vec<Doc> = r
            .region
            .iter()
            .map(|d| match d {
                RegionDim::Point(x) => self.expr(x),
                RegionDim::Range { begin, end } => {
                    let (b, e) = self.pair(begin, end);
                    b.append(txt(":")).append(e)
                }
            })
            .collect();
        txt(format!("{name}[")).append(joined(dims, txt(", "))).append(txt("]"))
    }

    fn block(&self, b: &Block) -> Doc {
        let mut body = Vec::new();
        // `T.axis.remap` when every axis is an enclosing loop variable over its loop's range.
        let loops = self.loops.borrow().clone();
        let mut seen = HashSet::new();
        let remap = !b.iter_vars.is_empty()
            && b.iter_vars.iter().all(|iv| match &*iv.binding.kind {
                TirExprKind::Var(lv) => {
                    seen.insert(lv.id())
                        && lv.dtype() == iv.var.dtype()
                        && loops.get(&lv.id()).is_some_and(|(lb, le)| *lb == iv.begin && *le == iv.end)
                }
                _ => false,
            });
        if remap {
            let names: Vec<String> = b.iter_vars.iter().map(|iv| self.names.borrow_mut().prim(&iv.var)).collect();
            let kinds: String =
                b.iter_vars.iter().map(|iv| if iv.kind == IterKind::Spatial { 'S' } else { 'R' }).collect();
            let bindings = list(b.iter_vars.iter().map(|iv| self.expr(&iv.binding)).collect());
            body.push(
                txt(format!("{} = ", names.join(", ")))
                    .append(call("T.axis.remap", vec![txt(string_lit(&kinds)), bindings])),
            );
        } else {
            for iv in &b.iter_vars {
                let n = self.names.borrow_mut().prim(&iv.var);
                let dt = iv.binding.dtype();
                let dom = if is_zero_of(&iv.begin, dt) {
                    self.coerced(&iv.end, dt)
                } else {
                    tuple(vec![self.coerced(&iv.begin, dt), self.coerced(&iv.end, dt)])
                };
                let f = if iv.kind == IterKind::Spatial { "T.axis.spatial" } else { "T.axis.reduce" };
                body.push(txt(format!("{n} = ")).append(call(f, vec![dom, self.expr(&iv.binding)])));
            }
        }
        if let Some(p) = &b.predicate {
            body.push(call("T.where", vec![self.expr(p)]));
        }
        if !b.reads.is_empty() {
            body.push(call("T.reads", b.reads.iter().map(|r| self.region(r)).collect()));
        }
        if !b.writes.is_empty() {
            body.push(call("T.writes", b.writes.iter().map(|r| self.region(r)).collect()));
        }
        if !b.annotations.is_empty() {
            body.push(call(self.dialect.block_attr(), vec![super::literal::attr_dict(&b.annotations)]));
        }
        if let Some(init) = &b.init {
            body.push(block(txt("with T.init()"), self.stmts(init)));
        }
        body.extend(self.stmts(&b.body));
        block(call(format!("with {}", self.dialect.block()), vec![txt(string_lit(&b.name))]), body)
    }
}

trait VarsAny {
    fn vars_any(&self, ids: &[u64]) -> bool;
}
impl VarsAny for TirExpr {
    fn vars_any(&self, ids: &[u64]) -> bool {
        let mut refs = Vec::new();
        let mut bound = HashSet::new();
        collect(&[Stmt { kind: StmtKind::Evaluate(self.clone()), span: self.span }], &mut bound, &mut refs);
        refs.iter().any(|v| ids.contains(&v.id()))
    }
}
