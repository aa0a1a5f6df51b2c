//! Modules, Relax functions, binding blocks, bindings and expressions.

use super::literal::{attr_dict, attr_value, constant, string_lit};
use super::names::Names;
use super::{block, call, joined, tuple, txt, Dialect, Doc};
use crate::grammar::visit::walk_expr;
use crate::grammar::{
    AttrValue, BaseFunc, Binding, BindingBlock, Call, Expr, ExprKind, Function, IRModule, PrimExpr, PrimVar,
    StructInfo, StructInfoKind, Var,
};
use crate::ops::{OpParam, OpRef};
use pretty::RcDoc;
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

pub(crate) struct RelaxPrinter {
    pub names: RefCell<Names>,
    /// Globals print as `f` (a file holding one function) or `cls.f` (a module).
    pub bare_globals: bool,
    /// The module's class name, for the `cls = Module` line TVM's parser needs.
    pub module_name: String,
    pub dialect: Dialect,
    /// Shape variables a TVM 0.27 signature writes as bare names: declared by the
    /// module-level `n = TypeVar("n")` lines, as TVM 0.27 prints them.
    pub type_vars: RefCell<Vec<(PrimVar, String)>>,
}

pub(crate) fn module(m: &IRModule, dialect: Dialect) -> Doc {
    let standalone = dialect.bare_function_module()
        && m.name == "Module"
        && m.functions.len() == 1
        && matches!(m.functions[0].1, BaseFunc::Relax(_));
    let reserved: Rc<HashSet<String>> =
        Rc::new(m.functions.iter().map(|(gv, _)| gv.name.clone()).chain(std::iter::once(m.name.clone())).collect());
    let mut type_vars: Vec<String> = Vec::new();
    let funcs: Vec<Doc> = m
        .functions
        .iter()
        .map(|(gv, f)| match f {
            BaseFunc::Relax(func) => {
                let printer = RelaxPrinter {
                    names: RefCell::new(Names::new(reserved.clone())),
                    bare_globals: standalone,
                    module_name: m.name.clone(),
                    dialect,
                    type_vars: RefCell::default(),
                };
                let doc = printer.global_function(&gv.name, func);
                for (_, n) in printer.type_vars.into_inner() {
                    if !type_vars.contains(&n) {
                        type_vars.push(n);
                    }
                }
                doc
            }
            BaseFunc::Tir(func) => super::tir::prim_func(&gv.name, func, reserved.clone(), dialect),
        })
        .collect();
    let mut imports: Vec<Doc> = Vec::new();
    if !type_vars.is_empty() {
        imports.push(txt("from typing import TypeVar"));
    }
    if !standalone {
        imports.push(txt("from tvm.script import ir as I"));
    }
    imports.push(txt("from tvm.script import relax as R"));
    imports.push(txt(format!("from tvm.script import {} as T", dialect.tir_module())));
    let mut header = joined(imports, RcDoc::hardline()).append(RcDoc::hardline()).append(RcDoc::hardline());
    if !type_vars.is_empty() {
        type_vars.sort();
        let lines = type_vars.iter().map(|n| txt(format!("{n} = TypeVar({})", string_lit(n))));
        header = header.append(joined(lines.collect(), RcDoc::hardline())).append(RcDoc::hardline());
    }
    let sep = RcDoc::hardline().append(RcDoc::hardline());
    if standalone {
        return header.append(joined(funcs, sep));
    }
    let class = txt("@I.ir_module").append(RcDoc::hardline()).append(txt(format!("class {}", m.name)));
    let mut body = Vec::new();
    if !m.attrs.is_empty() {
        body.push(call("I.module_attrs", vec![attr_dict(&m.attrs.0)]).append(RcDoc::hardline()));
    }
    match funcs.is_empty() {
        true if body.is_empty() => body.push(txt("pass")),
        true => {}
        false => body.push(joined(funcs, sep)),
    }
    header.append(block(class, body))
}

fn fresh_printer() -> RelaxPrinter {
    RelaxPrinter {
        names: RefCell::new(Names::new(Rc::default())),
        bare_globals: true,
        module_name: String::new(),
        dialect: Dialect::Rx,
        type_vars: RefCell::default(),
    }
}

pub(crate) fn standalone_expr(e: &Expr) -> Doc {
    fresh_printer().expr(e)
}

pub(crate) fn standalone_struct_info(s: &StructInfo) -> Doc {
    fresh_printer().sinfo(s, false)
}

pub(crate) fn standalone_prim_expr(e: &PrimExpr) -> Doc {
    fresh_printer().prim(e)
}

/// Shape variables mentioned in `e` (annotations, shapes, nested functions), in
/// textual order.
fn shape_vars_in(e: &Expr, out: &mut Vec<PrimVar>) {
    fn push(e: &PrimExpr, out: &mut Vec<PrimVar>) {
        e.for_each_var(&mut |v| {
            if !out.contains(v) {
                out.push(v.clone())
            }
        });
    }
    fn var(v: &Var, out: &mut Vec<PrimVar>) {
        if let Some(a) = v.annotation() {
            sinfo(a, out);
        }
    }
    match &e.kind {
        ExprKind::ShapeExpr(ds) => ds.iter().for_each(|d| push(d, out)),
        ExprKind::PrimValue(value) => push(value, out),
        ExprKind::Tuple(fs) => fs.iter().for_each(|f| shape_vars_in(f, out)),
        ExprKind::Call(c) => {
            shape_vars_in(&c.op, out);
            c.args.iter().for_each(|a| shape_vars_in(a, out));
            c.sinfo_args.iter().for_each(|s| sinfo(s, out));
        }
        ExprKind::Function(f) => {
            f.params.iter().for_each(|p| var(p, out));
            if let Some(r) = &f.ret_struct_info {
                sinfo(r, out);
            }
            shape_vars_in(&f.body, out);
        }
        ExprKind::SeqExpr(seq) => {
            for b in seq.blocks.iter().flat_map(|b| &b.bindings) {
                if let Some(v) = b.var() {
                    var(v, out);
                }
                shape_vars_in(b.value(), out);
                if let Binding::MatchCast { struct_info, .. } = b {
                    sinfo(struct_info, out);
                }
            }
            shape_vars_in(&seq.body, out);
        }
        ExprKind::If(i) => {
            shape_vars_in(&i.cond, out);
            shape_vars_in(&i.true_branch, out);
            shape_vars_in(&i.false_branch, out);
        }
        ExprKind::TupleGetItem { tuple_value, .. } => shape_vars_in(tuple_value, out),
        _ => {}
    }
}

/// Shape variables of a StructInfo, in textual order.
fn sinfo(s: &StructInfo, out: &mut Vec<PrimVar>) {
    match &*s.kind {
        StructInfoKind::Shape { values: Some(vs), .. } => vs.iter().for_each(|v| {
            v.for_each_var(&mut |x| {
                if !out.contains(x) {
                    out.push(x.clone())
                }
            })
        }),
        StructInfoKind::Tensor { shape: Some(e), .. } => shape_vars_in(e, out),
        StructInfoKind::Tuple { fields } => fields.iter().for_each(|f| sinfo(f, out)),
        StructInfoKind::Func { params, ret, .. } => {
            params.iter().flatten().for_each(|p| sinfo(p, out));
            sinfo(ret, out);
        }
        _ => {}
    }
}

/// Counts the references to each Relax variable: in expressions, and as a tensor's
/// shape in annotations and casts.
fn used_vars(e: &Expr, names: &mut Names) {
    fn shape_vars(s: &StructInfo, uses: &mut std::collections::HashMap<u64, usize>) {
        match &*s.kind {
            StructInfoKind::Tensor { shape: Some(Expr { kind: ExprKind::Var(v), .. }), .. } => {
                *uses.entry(v.id()).or_default() += 1
            }
            StructInfoKind::Tuple { fields } => fields.iter().for_each(|f| shape_vars(f, uses)),
            StructInfoKind::Func { params, ret, .. } => {
                params.iter().flatten().for_each(|p| shape_vars(p, uses));
                shape_vars(ret, uses);
            }
            _ => {}
        }
    }
    let uses = &mut names.uses;
    walk_expr(e, &mut |x| match &x.kind {
        ExprKind::Var(v) => *uses.entry(v.id()).or_default() += 1,
        ExprKind::SeqExpr(seq) => {
            for b in seq.blocks.iter().flat_map(|b| &b.bindings) {
                if let Some(a) = b.var().and_then(|v| v.annotation()) {
                    shape_vars(a, uses);
                }
                if let Binding::MatchCast { struct_info, .. } = b {
                    shape_vars(struct_info, uses);
                }
            }
        }
        ExprKind::Function(f) => {
            f.params.iter().filter_map(|p| p.annotation()).for_each(|a| shape_vars(a, uses));
            if let Some(r) = &f.ret_struct_info {
                shape_vars(r, uses);
            }
        }
        _ => {}
    });
}

impl RelaxPrinter {
    fn global_function(&self, name: &str, f: &Function) -> Doc {
        used_vars(&f.body, &mut self.names.borrow_mut());
        let private = f.attrs.get("global_symbol").is_none();
        self.function(name, f, Some(private))
    }

    /// `@R.function def name(...)`; `global` is `Some(private)` for a module's function.
    fn function(&self, name: &str, f: &Function, global: Option<bool>) -> Doc {
        let mut options = Vec::new();
        let mut attrs = f.attrs.0.clone();
        if let Some(AttrValue::Bool(pure)) = attrs.get("pure").cloned() {
            attrs.remove("pure");
            options.push(format!("pure={}", if pure { "True" } else { "False" }));
        }
        if !matches!(f.body.kind, ExprKind::SeqExpr(_)) {
            options.push("seq_body=False".into());
        }
        if let Some(private) = global {
            if matches!(attrs.get("global_symbol"), Some(AttrValue::Str(s)) if s == name) {
                attrs.remove("global_symbol");
            }
            if private {
                options.push("private=True".into());
            }
        }
        let decorator =
            if options.is_empty() { "@R.function".to_string() } else { format!("@R.function({})", options.join(", ")) };
        // A local function's shape variables are declared at the top of the global one.
        let sig = global.is_some() || self.dialect.quotes_local_signatures();
        let params: Vec<Doc> = f
            .params
            .iter()
            .map(|p| {
                let n = txt(self.names.borrow_mut().var(p));
                match p.annotation() {
                    Some(a) => n.append(txt(": ")).append(self.sinfo(a, sig)),
                    None => n,
                }
            })
            .collect();
        let ret = match &f.ret_struct_info {
            Some(r) => txt(") -> ").append(self.sinfo(r, sig)),
            None => txt(")"),
        };
        let header = super::bracketed_doc(txt(format!("def {name}(")), params, ret);
        let mut body = Vec::new();
        if !attrs.is_empty() {
            body.push(call("R.func_attr", vec![attr_dict(&attrs)]));
        }
        if global.is_some() && !self.bare_globals {
            let mut uses_globals = false;
            walk_expr(&f.body, &mut |e| uses_globals |= matches!(e.kind, ExprKind::GlobalVar(_)));
            if uses_globals {
                body.push(txt(format!("cls = {}", self.module_name)));
            }
        }
        if global.is_some() {
            let mut in_body = Vec::new();
            shape_vars_in(&f.body, &mut in_body);
            let mut vars = Vec::new();
            f.params.iter().filter_map(|p| p.annotation()).for_each(|a| sinfo(a, &mut vars));
            if let Some(r) = &f.ret_struct_info {
                sinfo(r, &mut vars);
            }
            vars.retain(|v| in_body.contains(v));
            for v in in_body {
                if !vars.contains(&v) {
                    vars.push(v);
                }
            }
            let declared = self.type_vars.borrow();
            for v in vars.into_iter().filter(|v| !declared.iter().any(|(t, _)| t == v)) {
                let n = self.names.borrow_mut().prim(&v);
                body.push(txt(format!("{n} = T.{}()", v.dtype())));
            }
        }
        match &f.body.kind {
            ExprKind::SeqExpr(seq) => {
                body.extend(self.blocks(&seq.blocks));
                body.push(txt("return ").append(self.expr(&seq.body)));
            }
            _ => body.push(txt("return ").append(self.expr(&f.body))),
        }
        txt(decorator).append(RcDoc::hardline()).append(block(header, body))
    }

    fn blocks(&self, blocks: &[BindingBlock]) -> Vec<Doc> {
        let mut out = Vec::new();
        for b in blocks {
            if b.is_dataflow() {
                let mut inner: Vec<Doc> = b.bindings.iter().map(|x| self.binding(x)).collect();
                let mut outputs: Vec<String> = Vec::new();
                for x in &b.bindings {
                    if let Some(v) = x.var().filter(|v| !v.is_dataflow()) {
                        let n = self.names.borrow_mut().var(v);
                        if !outputs.contains(&n) {
                            outputs.push(n);
                        }
                    }
                }
                if !outputs.is_empty() {
                    inner.push(call("R.output", outputs.into_iter().map(txt).collect()));
                }
                out.push(block(txt("with R.dataflow()"), inner));
            } else {
                out.extend(b.bindings.iter().map(|x| self.binding(x)));
            }
        }
        out
    }

    fn lhs(&self, v: &Var) -> Doc {
        let n = txt(self.names.borrow_mut().var(v));
        match v.annotation() {
            Some(a) => n.append(txt(": ")).append(self.sinfo(a, false)),
            None => n,
        }
    }

    fn binding(&self, b: &Binding) -> Doc {
        match b {
            Binding::VarBinding { var, value, .. } => self.var_binding(var, value),
            Binding::MatchCast { var, struct_info, value, .. } => {
                let mc = call("R.match_cast", vec![self.expr(value), self.sinfo(struct_info, false)]);
                match var {
                    Some(v) => self.lhs(v).append(txt(" = ")).append(mc),
                    None => mc,
                }
            }
        }
    }

    /// `v = value`; a function value prints as `def v(...)`, an `If` as an `if` statement.
    fn var_binding(&self, var: &Var, value: &Expr) -> Doc {
        match &value.kind {
            ExprKind::Function(f) => {
                let name = self.names.borrow_mut().var(var);
                self.function(&name, f, None)
            }
            ExprKind::If(i) => self.if_binding(var, i),
            // `v = SeqExpr(...)`: the `with R.seq_expr():` extension.
            ExprKind::SeqExpr(_) => {
                self.names.borrow_mut().var(var);
                block(txt("with R.seq_expr()"), self.branch_lines(var, value, true))
            }
            _ => self.lhs(var).append(txt(" = ")).append(self.expr(value)),
        }
    }

    /// The statements of an `if` branch or `with R.seq_expr():` block whose value is
    /// `e`, ending in the assignment of `var`.
    fn branch_lines(&self, var: &Var, e: &Expr, annotate: bool) -> Vec<Doc> {
        let ExprKind::SeqExpr(seq) = &e.kind else {
            return vec![self.result_binding(var, e, annotate)];
        };
        // A branch ending in `v = R.match_cast(...)` returns that binding's variable,
        // printed under `var`'s name, unless `var`'s annotation must be written here
        // (the cast variable's line has no room for it): then the branch ends `v: S = w`.
        let keeps_annotation = annotate && var.annotation().is_some();
        if let Some(w) = self.cast_result(e).filter(|_| !keeps_annotation) {
            let name = self.names.borrow_mut().var(var);
            self.names.borrow_mut().alias_var(w, &name);
            return self.blocks(&seq.blocks);
        }
        let mut out = self.blocks(&seq.blocks);
        out.push(self.result_binding(var, &seq.body, annotate));
        out
    }

    /// The last line of a branch, `v = body`, with `v`'s annotation only if `annotate`:
    /// the parser takes the annotation from either branch, and one branch may not
    /// see what the other's annotation names.
    fn result_binding(&self, var: &Var, value: &Expr, annotate: bool) -> Doc {
        match (&value.kind, annotate) {
            (ExprKind::Function(_) | ExprKind::If(_) | ExprKind::SeqExpr(_), _) | (_, true) => {
                self.var_binding(var, value)
            }
            _ => {
                let name = self.names.borrow_mut().var(var);
                txt(name).append(txt(" = ")).append(self.expr(value))
            }
        }
    }

    /// A branch's match_cast result variable that may print under the `if`'s name: one
    /// referred to only as the branch's result (else it keeps its own name and the
    /// branch ends in `y = w`).
    fn cast_result<'e>(&self, e: &'e Expr) -> Option<&'e Var> {
        match_cast_result(e).filter(|w| self.names.borrow().uses.get(&w.id()).copied().unwrap_or(0) <= 1)
    }

    /// `if c: ... v = t_body else: ... v = f_body` (TVMScript's form of `v = If(c, t, f)`).
    fn if_binding(&self, var: &Var, i: &crate::grammar::If) -> Doc {
        // A branch's match_cast variable printed earlier (an ill-formed use before its
        // binding) keeps its name: the `if` result takes it, since both print alike.
        let earlier = [&i.true_branch, &i.false_branch]
            .into_iter()
            .filter_map(|b| self.cast_result(b))
            .find_map(|w| self.names.borrow().existing(w));
        let named = self.names.borrow().existing(var).is_some();
        if let (Some(name), false) = (earlier, named) {
            self.names.borrow_mut().alias_var(var, &name);
        }
        self.names.borrow_mut().var(var);
        // The `if` result's annotation is written in one branch; a branch ending in a
        // match_cast cannot carry it (its annotation is the cast variable's).
        let t_casts = self.cast_result(&i.true_branch).is_some();
        let t = self.branch_lines(var, &i.true_branch, !t_casts);
        let f = self.branch_lines(var, &i.false_branch, t_casts);
        block(txt("if ").append(self.expr(&i.cond)), t).append(RcDoc::hardline()).append(block(txt("else"), f))
    }

    pub(crate) fn expr(&self, e: &Expr) -> Doc {
        match &e.kind {
            ExprKind::Constant(a) => constant(a),
            ExprKind::Var(v) => txt(self.names.borrow_mut().var(v)),
            ExprKind::GlobalVar(gv) => {
                if self.bare_globals {
                    txt(gv.name.clone())
                } else {
                    txt(format!("cls.{}", gv.name))
                }
            }
            ExprKind::Tuple(fields) => tuple(fields.iter().map(|f| self.expr(f)).collect()),
            ExprKind::ExternFunc { global_symbol } => call("R.ExternFunc", vec![txt(string_lit(global_symbol))]),
            ExprKind::Call(c) => self.call_expr(c),
            ExprKind::ShapeExpr(ds) => call("R.shape", vec![super::list(ds.iter().map(|d| self.prim(d)).collect())]),
            ExprKind::TupleGetItem { tuple_value, index } => self.expr(tuple_value).append(txt(format!("[{index}]"))),
            ExprKind::Op(op) => txt(op.script_name()),
            ExprKind::PrimValue(value) => call("R.prim_value", vec![self.prim(value)]),
            ExprKind::StringImm(s) => call("R.str", vec![txt(string_lit(s))]),
            ExprKind::DataTypeImm(d) => call("R.dtype", vec![txt(string_lit(&d.to_string()))]),
            // Not expressible in TVMScript outside the places the printer handles.
            ExprKind::SeqExpr(_) => txt("<SeqExpr not a function body, branch or binding value>"),
            ExprKind::Function(_) => txt("<Function outside a binding>"),
            ExprKind::If(_) => txt("<If outside a binding>"),
        }
    }

    fn sinfo_list(&self, ss: &[StructInfo]) -> Doc {
        match ss {
            [one] => self.sinfo(one, false),
            _ => super::list(ss.iter().map(|s| self.sinfo(s, false)).collect()),
        }
    }

    /// A call's attribute value; an index map's parameters are named in this printer's
    /// scope, and TVM 0.27 writes it `T.index_map(lambda ...)`.
    fn call_attr(&self, v: &AttrValue) -> Doc {
        match v {
            AttrValue::IndexMap(m) => {
                let name = |p: &crate::grammar::PrimVar| self.names.borrow_mut().prim_named(p, p.name());
                super::literal::index_map(m, &name, &|e| self.prim(e), self.dialect == Dialect::Tvm027)
            }
            _ => attr_value(v),
        }
    }

    fn call_expr(&self, c: &Call) -> Doc {
        let attrs = || c.attrs.0.iter().map(|(k, v)| txt(format!("{k}=")).append(self.call_attr(v)));
        let sinfo_kw = |kw: &'static str| -> Option<Doc> {
            if c.sinfo_args.is_empty() {
                return None;
            }
            Some(txt(format!("{}=", self.dialect.sinfo_keyword(kw))).append(self.sinfo_list(&c.sinfo_args)))
        };
        match &c.op.kind {
            ExprKind::Op(op) => {
                if let Some(doc) = self.op_call(op, c) {
                    return doc;
                }
                let mut args: Vec<Doc> = c.args.iter().map(|a| self.expr(a)).collect();
                args.extend(attrs());
                args.extend(sinfo_kw("sinfo_args"));
                call(op.script_name(), args)
            }
            ExprKind::ExternFunc { global_symbol } => {
                let mut args = vec![txt(string_lit(global_symbol))];
                args.extend(c.args.iter().map(|a| self.expr(a)));
                args.extend(attrs());
                args.extend(sinfo_kw("sinfo_args"));
                call("R.call_packed", args)
            }
            _ => {
                let head = super::render(self.expr(&c.op), usize::MAX).trim_end().to_string();
                let mut args: Vec<Doc> = c.args.iter().map(|a| self.expr(a)).collect();
                args.extend(attrs());
                args.extend(sinfo_kw("sinfo_args"));
                call(head, args)
            }
        }
    }

    /// A call of a registered operator, following its TVMScript signature; `None` if
    /// it has none or the call does not fit it.
    fn op_call(&self, op: &OpRef, c: &Call) -> Option<Doc> {
        let sig = op.registered()?.def().signature?;
        let mut docs = Vec::new();
        let mut args = c.args.iter();
        let mut keywords_only = false;
        let mut attrs_left = c.attrs.0.clone();
        let mut sinfo_done = c.sinfo_args.is_empty();
        // TVM's printer writes `out_sinfo=` before the attributes, also where the Python
        // wrapper takes them first (`call_tir_inplace(gvar, args, inplace_indices, out_sinfo)`).
        let first_attr = sig.iter().position(|p| matches!(p, OpParam::Attr(_))).unwrap_or(sig.len());
        let order = sig[..first_attr]
            .iter()
            .chain(sig[first_attr..].iter().filter(|p| matches!(p, OpParam::Sinfo(_))))
            .chain(sig[first_attr..].iter().filter(|p| !matches!(p, OpParam::Sinfo(_))));
        for p in order {
            match p {
                OpParam::Expr(n)
                | OpParam::Shape(n)
                | OpParam::Func(n)
                | OpParam::PrimOr(n, _)
                | OpParam::Dtype(n)
                | OpParam::StrOr(n, _) => {
                    let Some(a) = args.next() else {
                        keywords_only = true;
                        continue;
                    };
                    let doc = match (&a.kind, p) {
                        (ExprKind::ExternFunc { global_symbol }, OpParam::Func(_)) => txt(string_lit(global_symbol)),
                        _ => self.expr(a),
                    };
                    docs.push(if keywords_only { txt(format!("{n}=")).append(doc) } else { doc });
                }
                OpParam::Rest(_) => {
                    for a in args.by_ref() {
                        docs.push(self.expr(a));
                    }
                }
                OpParam::Attr(n) => {
                    keywords_only = true;
                    if let Some(v) = attrs_left.remove(*n) {
                        docs.push(txt(format!("{n}=")).append(self.call_attr(&v)));
                    }
                }
                OpParam::Sinfo(n) => {
                    keywords_only = true;
                    if !sinfo_done {
                        sinfo_done = true;
                        let doc = match (*n, c.sinfo_args.as_slice()) {
                            ("out_sinfo", [one]) => match &*one.kind {
                                StructInfoKind::Tuple { fields } => {
                                    super::list(fields.iter().map(|f| self.sinfo(f, false)).collect())
                                }
                                _ => self.sinfo(one, false),
                            },
                            ("out_sinfo", _) => return None,
                            _ => self.sinfo_list(&c.sinfo_args),
                        };
                        docs.push(txt(format!("{}=", self.dialect.sinfo_keyword(n))).append(doc));
                    }
                }
            }
        }
        if args.next().is_some() || !attrs_left.is_empty() {
            return None;
        }
        if !sinfo_done {
            let kw = self.dialect.sinfo_keyword("sinfo_args");
            docs.push(txt(format!("{kw}=")).append(self.sinfo_list(&c.sinfo_args)));
        }
        Some(call(op.script_name(), docs))
    }
}

/// The variable of the match_cast that ends an `if` branch and is its result, if any
/// (then the branch prints as `y = R.match_cast(...)`, the parser's reading of it).
fn match_cast_result(e: &Expr) -> Option<&Var> {
    let ExprKind::SeqExpr(seq) = &e.kind else { return None };
    let b = seq.blocks.last().filter(|b| !b.is_dataflow())?;
    match b.bindings.last() {
        Some(Binding::MatchCast { var: Some(w), .. }) if seq.body.as_var() == Some(w) => Some(w),
        _ => None,
    }
}
