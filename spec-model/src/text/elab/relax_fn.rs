//! Relax functions and their bodies: parameters, annotations, bindings,
//! `with R.dataflow()`, `if`/`else`, nested functions, `R.func_attr`, `return`.

use super::attrs::attr_dict;
use super::prim::{parse_string_dim, prim_expr, t_dtype, NameMode};
use super::relax_expr::expr;
use super::sinfo::struct_info;
use super::{decorator_is, Ctx, Entity, FnDef};
use crate::grammar::visit::walk_expr;
use crate::grammar::{
    AttrValue, Attrs, Binding, BindingBlock, BlockKind, DataType, Expr, ExprKind, Function, If, PrimVar, SeqExpr,
    StructInfo, StructInfoKind, Var,
};
use crate::span::Span;
use crate::text::error::{ParseError, ParseResult};
use crate::text::py_ast::{PyExpr, PyExprKind, PyStmt, PyStmtKind};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

const RESERVED: &[&str] = &["R", "T", "I"];

/// Bindings of the current `SeqExpr`: finished blocks and the open ordinary block.
#[derive(Default)]
struct Blocks {
    blocks: Vec<BindingBlock>,
    current: Vec<Binding>,
}

impl Blocks {
    fn flush(&mut self) {
        if !self.current.is_empty() {
            let bindings = std::mem::take(&mut self.current);
            let span = bindings[0].span().to(bindings[bindings.len() - 1].span());
            self.blocks.push(BindingBlock { kind: BlockKind::Binding, bindings, span });
        }
    }
    fn finish(mut self) -> Vec<BindingBlock> {
        self.flush();
        self.blocks
    }
}

/// Where a statement sits: in an ordinary block, or in a dataflow block where the
/// binding it makes is (or is not) one of the block's outputs.
#[derive(Clone, Copy)]
pub(super) enum Place {
    Ordinary,
    Dataflow { output: bool },
}

/// Statements being elaborated into one `SeqExpr`: the scope they extend, the blocks
/// their bindings go to, and where the next binding sits.
struct Seq {
    ctx: Ctx,
    blocks: Blocks,
    place: Place,
}

impl Seq {
    fn new(ctx: Ctx) -> Seq {
        Seq { ctx, blocks: Blocks::default(), place: Place::Ordinary }
    }

    /// The variable statement `s` binds `name` to: the one the body's pre-pass gave it,
    /// or else a fresh one.
    fn var(&self, s: &PyStmt, name: &str, ann: Option<StructInfo>, span: Span) -> Var {
        self.ctx.planned_var(s).unwrap_or_else(|| new_var(name, ann, span, self.place))
    }

    /// Adds the binding `b` statement `s` makes; its variable comes into scope.
    fn bind(&mut self, s: &PyStmt, b: Binding) {
        if let Some(var) = b.var() {
            self.ctx.define(var.name(), Entity::Relax(var.clone()));
            self.ctx.made(s, var);
        }
        self.blocks.current.push(b);
    }
}

struct Decorator {
    pure: Option<bool>,
    private: bool,
    /// `seq_body=False` (an extension): the body is the returned expression itself,
    /// not a `SeqExpr`, as the spec's grammar allows before normalization (NF-3).
    seq_body: bool,
}

fn relax_decorator(def: &FnDef) -> ParseResult<Decorator> {
    // `check_well_formed=False` turns off the check TVM's parser runs on the function;
    // here checking is `oracle check`'s job, never the parser's, so it changes nothing.
    let opts = def.decorator_options(super::RELAX_FUNCTION, &["pure", "private", "seq_body", "check_well_formed"])?;
    Ok(Decorator {
        pure: opts.get("pure").copied(),
        private: opts.get("private").copied().unwrap_or(false),
        seq_body: opts.get("seq_body").copied().unwrap_or(true),
    })
}

/// A function of the module: public (its `global_symbol` is its name) unless `private=True`.
pub(crate) fn global_function(ctx: &Ctx, def: &PyStmt) -> ParseResult<Function> {
    let def = FnDef::of(def).expect("called on function definitions");
    let dec = relax_decorator(&def)?;
    let (mut f, _) = function(ctx, &def, &dec, None)?;
    if !dec.private && f.attrs.get("global_symbol").is_none() {
        f.attrs.insert("global_symbol", AttrValue::Str(def.name.to_string()));
    }
    Ok(f)
}

/// Collects the string dimensions of a signature annotation (`R.Tensor(("n", 4))`).
fn signature_strings<'e>(e: &'e PyExpr, out: &mut Vec<&'e PyExpr>) {
    let (head, args, keywords) = match &e.kind {
        PyExprKind::Call { func, args, keywords } => (func.dotted_name(), args.as_slice(), keywords.as_slice()),
        PyExprKind::Tuple(items) => {
            items.iter().for_each(|i| signature_strings(i, out));
            return;
        }
        _ => return,
    };
    let kw = |n: &str| keywords.iter().find(|k| k.name == n).map(|k| &k.value);
    let dims = |d: Option<&'e PyExpr>, out: &mut Vec<&'e PyExpr>| {
        if let Some(PyExpr { kind: PyExprKind::Tuple(ds) | PyExprKind::List(ds), .. }) = d {
            out.extend(ds.iter().filter(|d| matches!(d.kind, PyExprKind::Str(_))));
        }
    };
    match head.as_deref() {
        Some("R.Tensor") | Some("R.Shape") => dims(args.first().or(kw("shape")).or(kw("values")), out),
        Some("R.Prim") => out.extend(kw("value").filter(|v| matches!(v.kind, PyExprKind::Str(_)))),
        Some("R.Tuple") => match args {
            [PyExpr { kind: PyExprKind::List(items), .. }] => items.iter().for_each(|i| signature_strings(i, out)),
            _ => args.iter().for_each(|a| signature_strings(a, out)),
        },
        Some("R.Callable") => {
            for a in args.iter().chain(kw("params")).chain(kw("ret")) {
                match &a.kind {
                    PyExprKind::List(items) | PyExprKind::Tuple(items) => {
                        items.iter().for_each(|i| signature_strings(i, out))
                    }
                    _ => signature_strings(a, out),
                }
            }
        }
        _ => {}
    }
}

/// Elaborates a function in a scope of its own. `self_var` is `Some(dataflow)` for a
/// local function bound by name; the returned variable is the one recursive calls
/// used, if any.
fn function(outer: &Ctx, def: &FnDef, dec: &Decorator, self_var: Option<bool>) -> ParseResult<(Function, Option<Var>)> {
    let mut ctx = outer.enter();
    let FnDef { name, name_span, params, returns, body, span, .. } = *def;
    symbolic_vars(&mut ctx, def)?;
    // String dimensions anywhere in the signature introduce shape variables first,
    // so that any annotation may use them (TVMScript collects them the same way).
    let mut strings = Vec::new();
    for p in params {
        if let Some(a) = &p.annotation {
            signature_strings(a, &mut strings);
        }
    }
    if let Some(r) = returns {
        signature_strings(r, &mut strings);
    }
    for s in strings {
        if let PyExprKind::Str(text) = &s.kind {
            let inner = parse_string_dim(text, s.span)?;
            prim_expr(&mut ctx, &inner, NameMode::Declare)?;
        }
    }
    let mut vars: Vec<Var> = Vec::new();
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for p in params {
        if let Some(prev) = seen.insert(&p.name, p.span) {
            return Err(ParseError::name(format!("parameter `{}` is declared twice", p.name), p.span)
                .with_secondary(prev, "first declared here"));
        }
        if let Some(d) = &p.default {
            return Err(ParseError::syntax("Relax parameters have no default values", d.span));
        }
        check_not_reserved(&p.name, p.span)?;
        let ann = p.annotation.as_ref().map(|a| struct_info(&mut ctx, a)).transpose()?;
        let v = Var::new(p.name.clone(), ann, p.span);
        ctx.define(&p.name, Entity::Relax(v.clone()));
        vars.push(v);
    }
    let ret_struct_info = returns.map(|r| struct_info(&mut ctx, r)).transpose()?;
    // A local function may call itself through the name it is bound to (Variable
    // Scoping, rule 2); that variable is annotated with the signature, as TVMScript does,
    // pure only if the function says `pure=True` (TY-11.1).
    let recursive = self_var.map(|dataflow| {
        let sig = StructInfo::new(
            StructInfoKind::Func {
                params: Some(vars.iter().map(|v| v.annotation().cloned().unwrap_or_else(StructInfo::object)).collect()),
                ret: ret_struct_info.clone().unwrap_or_else(StructInfo::object),
                derive_func: None,
                purity: dec.pure == Some(true),
            },
            name_span,
        );
        let v =
            if dataflow { Var::new_dataflow(name, Some(sig), name_span) } else { Var::new(name, Some(sig), name_span) };
        if !params.iter().any(|p| p.name == name) {
            ctx.define(name, Entity::Relax(v.clone()));
        }
        v
    });
    let mut attrs = Attrs::default();
    if let Some(p) = dec.pure {
        attrs.insert("pure", AttrValue::Bool(p));
    }
    let body = super::unpack::desugar(body)?;
    ctx.begin_body(&body);
    let body = function_body(&ctx, &body, &mut attrs, name_span, dec.seq_body)?;
    let body = ctx.end_body(body);
    let used_self = recursive.filter(|v| {
        let mut found = false;
        walk_expr(&body, &mut |e| found |= e.as_var() == Some(v));
        found
    });
    Ok((Function { params: vars, body, ret_struct_info, attrs, span }, used_self))
}

/// TVM 0.27's symbolic shape variables, each an `int64` shape variable of this
/// function: its PEP 695 type parameters (`def f[m, n](...)`), and the module's
/// `m = TypeVar("m")` names its signature mentions (other than parameter names and
/// an enclosing function's shape variables), as TVM's parser declares them.
fn symbolic_vars(ctx: &mut Ctx, def: &FnDef) -> ParseResult<()> {
    let mut declared: HashSet<&str> = HashSet::new();
    for (t, span) in def.type_params {
        check_not_reserved(t, *span)?;
        if !declared.insert(t) {
            return Err(ParseError::name(format!("type parameter `{t}` is declared twice"), *span));
        }
        ctx.define(t, Entity::Shape(PrimVar::shape_var(t.clone())));
    }
    if ctx.type_vars.is_empty() {
        return Ok(());
    }
    let mut used = HashSet::new();
    for a in def.params.iter().filter_map(|p| p.annotation.as_ref()).chain(def.returns) {
        names_in(a, &mut used);
    }
    let type_vars = ctx.type_vars.clone();
    for n in used {
        // A shape variable of an enclosing function (a local function's signature)
        // is that variable, as TVM's variable table resolves it.
        let enclosing = matches!(ctx.lookup(&n), Some(Entity::Shape(_)));
        if type_vars.contains(&n)
            && !enclosing
            && !declared.contains(n.as_str())
            && !def.params.iter().any(|p| p.name == n)
        {
            ctx.define(&n, Entity::Shape(PrimVar::shape_var(n.clone())));
        }
    }
    Ok(())
}

/// Every name `e` mentions (a string dimension declares its names itself).
fn names_in(e: &PyExpr, out: &mut HashSet<String>) {
    match &e.kind {
        PyExprKind::Name(n) => {
            out.insert(n.clone());
        }
        PyExprKind::Attribute { value, .. } => names_in(value, out),
        PyExprKind::Call { func, args, keywords } => {
            names_in(func, out);
            args.iter().for_each(|a| names_in(a, out));
            keywords.iter().for_each(|k| names_in(&k.value, out));
        }
        PyExprKind::Subscript { value, index } => {
            names_in(value, out);
            names_in(index, out);
        }
        PyExprKind::Tuple(xs) | PyExprKind::List(xs) => xs.iter().for_each(|x| names_in(x, out)),
        PyExprKind::Dict(kvs) => kvs.iter().for_each(|(k, v)| {
            names_in(k, out);
            names_in(v, out);
        }),
        PyExprKind::Unary { operand, .. } => names_in(operand, out),
        PyExprKind::Binary { left, right, .. }
        | PyExprKind::BoolOp { left, right, .. }
        | PyExprKind::Compare { left, right, .. } => {
            names_in(left, out);
            names_in(right, out);
        }
        PyExprKind::Slice { lower, upper, step } => {
            [lower, upper, step].into_iter().flatten().for_each(|x| names_in(x, out));
        }
        PyExprKind::Lambda { params, body } => {
            let mut inner = HashSet::new();
            names_in(body, &mut inner);
            out.extend(inner.into_iter().filter(|n| !params.iter().any(|(p, _)| p == n)));
        }
        PyExprKind::Int(_)
        | PyExprKind::Float(_)
        | PyExprKind::Str(_)
        | PyExprKind::Bool(_)
        | PyExprKind::NoneLit
        | PyExprKind::NumArray(_) => {}
    }
}

fn check_not_reserved(name: &str, span: Span) -> ParseResult<()> {
    if RESERVED.contains(&name) {
        return Err(ParseError::name(format!("`{name}` is reserved for the TVMScript namespaces"), span));
    }
    Ok(())
}

fn function_body(ctx: &Ctx, body: &[PyStmt], attrs: &mut Attrs, name_span: Span, seq_body: bool) -> ParseResult<Expr> {
    let mut sc = Seq::new(ctx.clone());
    let mut result = None;
    for (i, s) in body.iter().enumerate() {
        if i == 0 && is_docstring(s) {
            continue;
        }
        let binds_nothing = matches!(&s.kind, PyStmtKind::Return(_))
            || matches!(&s.kind, PyStmtKind::Expr(e) if is_call_to(e, "R.func_attr"))
            || matches!(&s.kind, PyStmtKind::Assign { value, .. } if shape_var_declaration(value).is_some()
                || matches!(&value.kind, PyExprKind::Name(m) if matches!(sc.ctx.lookup(m), Some(Entity::Module))));
        if !seq_body && !binds_nothing {
            return Err(ParseError::syntax(
                "with `seq_body=False` the body is one `return` (after attributes and shape-variable declarations)",
                s.span,
            ));
        }
        match &s.kind {
            PyStmtKind::Return(value) => {
                let Some(v) = value else {
                    return Err(ParseError::syntax("a Relax function returns a value: `return e`", s.span));
                };
                if let Some(next) = body.get(i + 1) {
                    return Err(ParseError::syntax("statements after `return`", next.span));
                }
                sc.ctx.at(s);
                result = Some(expr(&mut sc.ctx, v)?);
            }
            PyStmtKind::Expr(e) if is_call_to(e, "R.func_attr") => func_attr(e, attrs)?,
            _ => statement(&mut sc, s)?,
        }
    }
    let Some(body_expr) = result else {
        return Err(ParseError::syntax("a Relax function must end with `return`", name_span)
            .with_label("this function does not return"));
    };
    if !seq_body {
        return Ok(body_expr);
    }
    let span = body_expr.span;
    Ok(Expr::new(ExprKind::SeqExpr(Box::new(SeqExpr { blocks: sc.blocks.finish(), body: body_expr })), span))
}

pub(super) fn is_docstring(s: &PyStmt) -> bool {
    matches!(&s.kind, PyStmtKind::Expr(PyExpr { kind: PyExprKind::Str(_), .. }))
}

pub(super) fn is_call_to(e: &PyExpr, name: &str) -> bool {
    matches!(&e.kind, PyExprKind::Call { func, .. } if func.dotted_name().as_deref() == Some(name))
}

fn func_attr(e: &PyExpr, attrs: &mut Attrs) -> ParseResult<()> {
    let PyExprKind::Call { args, keywords, .. } = &e.kind else { unreachable!("checked by is_call_to") };
    let dict = match (args.as_slice(), keywords.is_empty()) {
        ([PyExpr { kind: PyExprKind::Dict(items), .. }], true) => attr_dict(items)?,
        _ => return Err(ParseError::syntax("`R.func_attr` takes one dict: `R.func_attr({\"key\": value})`", e.span)),
    };
    for (k, v) in dict {
        if attrs.get(&k).is_some() {
            return Err(ParseError::syntax(format!("function attribute `{k}` is given twice"), e.span));
        }
        attrs.insert(k, v);
    }
    Ok(())
}

/// `n = T.int64()`: names the shape variable `n` in scope (e.g. one a parameter's
/// `"n"` introduced), or declares a fresh one to be bound by a later `MatchCast`.
fn declare_shape_var(ctx: &mut Ctx, name: &str, dtype: DataType, span: Span) -> ParseResult<()> {
    check_not_reserved(name, span)?;
    match ctx.lookup(name) {
        Some(Entity::Shape(v)) if v.dtype() == dtype => Ok(()),
        Some(Entity::Shape(v)) => {
            Err(ParseError::name(format!("`{name}` is a shape variable of dtype {}, not {dtype}", v.dtype()), span))
        }
        Some(Entity::Relax(_)) => {
            Err(ParseError::name(format!("`{name}` already names a Relax variable; pick another name"), span))
        }
        _ => {
            ctx.define(name, Entity::Shape(PrimVar::new(name, dtype)));
            Ok(())
        }
    }
}

/// A shape-variable declaration: `T.int64()` with no arguments, or the older
/// spelling `T.var("int64")` (Relax's StructInfo-era tests use both).
pub(super) fn shape_var_declaration(e: &PyExpr) -> Option<DataType> {
    let PyExprKind::Call { func, args, keywords } = &e.kind else { return None };
    // `T.int64(is_size_var=True)`: a size variable is a shape variable known to be
    // non-negative, which every shape variable here is assumed to be already.
    let size_var =
        |k: &crate::text::py_ast::Keyword| k.name == "is_size_var" && matches!(k.value.kind, PyExprKind::Bool(_));
    let int_dtype = |d: &str| DataType::parse(d).filter(|t| t.lanes == 1 && t.code != crate::grammar::TypeCode::Float);
    match (func.dotted().as_deref(), &args[..], &keywords[..]) {
        (Some(["T", d]), [], []) => t_dtype(d),
        (Some(["T", d]), [], [k]) if size_var(k) => t_dtype(d),
        (Some(["T", "var"]), [PyExpr { kind: PyExprKind::Str(d), .. }], []) => int_dtype(d),
        // `n = T.Var("n", "int64")`, TIR's constructor spelled out.
        (
            Some(["T", "Var"]),
            [PyExpr { kind: PyExprKind::Str(_), .. }, PyExpr { kind: PyExprKind::Str(d), .. }],
            [],
        ) => int_dtype(d),
        (Some(["T", "Var"]), [PyExpr { kind: PyExprKind::Str(_), .. }], [k]) if k.name == "dtype" => {
            match &k.value.kind {
                PyExprKind::Str(d) => int_dtype(d),
                _ => None,
            }
        }
        _ => None,
    }
}

fn target_name(target: &PyExpr) -> ParseResult<(&str, Span)> {
    match &target.kind {
        PyExprKind::Name(n) => {
            check_not_reserved(n, target.span)?;
            Ok((n, target.span))
        }
        PyExprKind::Tuple(_) => Err(ParseError::syntax("an annotated binding names one variable", target.span)),
        _ => Err(ParseError::syntax(format!("cannot assign to {}", target.describe()), target.span)),
    }
}

pub(super) fn new_var(name: &str, ann: Option<StructInfo>, span: Span, place: Place) -> Var {
    match place {
        Place::Dataflow { output: false } => Var::new_dataflow(name, ann, span),
        _ => Var::new(name, ann, span),
    }
}

fn statement(sc: &mut Seq, s: &PyStmt) -> ParseResult<()> {
    sc.ctx.at(s);
    match &s.kind {
        PyStmtKind::Assign { target, value } => {
            let (name, nspan) = target_name(target)?;
            if let Some(dtype) = shape_var_declaration(value) {
                return declare_shape_var(&mut sc.ctx, name, dtype, s.span);
            }
            // `cls = Module`, which TVM's printer emits: another name for the module.
            if let PyExprKind::Name(m) = &value.kind {
                if matches!(sc.ctx.lookup(m), Some(Entity::Module)) {
                    sc.ctx.define(name, Entity::Module);
                    return Ok(());
                }
            }
            binding(sc, s, (name, nspan), None, value)
        }
        PyStmtKind::AnnAssign { target, annotation, value } => {
            let (name, nspan) = target_name(target)?;
            let Some(value) = value else {
                return Err(ParseError::syntax("an annotated name needs a value: `x: S = e`", s.span));
            };
            let ann = struct_info(&mut sc.ctx, annotation)?;
            binding(sc, s, (name, nspan), Some(ann), value)
        }
        PyStmtKind::Expr(e) => {
            if is_docstring(s) {
                return Ok(());
            }
            if is_call_to(e, "R.match_cast") {
                let (value, sinfo) = match_cast_parts(&mut sc.ctx, e)?;
                sc.blocks.current.push(Binding::MatchCast { var: None, struct_info: sinfo, value, span: s.span });
                return Ok(());
            }
            if is_call_to(e, "R.func_attr") {
                return Err(ParseError::syntax("`R.func_attr` belongs at the top level of a function body", s.span));
            }
            if is_call_to(e, "R.output") {
                return Err(ParseError::syntax(
                    "`R.output` is the last statement of a `with R.dataflow():` block",
                    s.span,
                ));
            }
            // An expression evaluated for its effect is bound to `_`, which stays out of scope.
            let value = expr(&mut sc.ctx, e)?;
            let var = new_var("_", None, e.span, sc.place);
            sc.blocks.current.push(Binding::VarBinding { var, value, span: s.span });
            Ok(())
        }
        PyStmtKind::If { test, body, orelse } => if_statement(sc, s, test, body, orelse),
        PyStmtKind::With { context, target, body } => {
            if let Some(t) = target {
                return Err(ParseError::syntax("`with R.dataflow()` binds no name", t.span));
            }
            if is_call_to(context, "R.seq_expr") {
                return seq_expr_statement(sc, s, context, body);
            }
            if !is_call_to(context, "R.dataflow") {
                return Err(ParseError::syntax(
                    "a `with` block in Relax is `with R.dataflow():` (or the extension `with R.seq_expr():`)",
                    context.span,
                ));
            }
            if let PyExprKind::Call { args, keywords, .. } = &context.kind {
                if !args.is_empty() || !keywords.is_empty() {
                    return Err(ParseError::syntax("`R.dataflow()` takes no arguments", context.span));
                }
            }
            if matches!(sc.place, Place::Dataflow { .. }) {
                return Err(ParseError::syntax("dataflow blocks do not nest", s.span));
            }
            dataflow_block(sc, body, s.span)
        }
        PyStmtKind::FunctionDef { .. } => {
            let def = FnDef::of(s).expect("a function definition");
            check_not_reserved(def.name, def.name_span)?;
            if def.decorators.iter().any(|d| decorator_is(d, super::PRIM_FUNC)) {
                return Err(ParseError::syntax(
                    "a `@T.prim_func` cannot be defined inside a Relax function",
                    def.name_span,
                ));
            }
            let dec = relax_decorator(&def)?;
            let dataflow = matches!(sc.place, Place::Dataflow { output: false });
            let (f, used_self) = function(&sc.ctx, &def, &dec, Some(dataflow))?;
            let var = used_self.unwrap_or_else(|| sc.var(s, def.name, None, def.name_span));
            let value = Expr::new(ExprKind::Function(Rc::new(f)), s.span);
            sc.bind(s, Binding::VarBinding { var, value, span: s.span });
            Ok(())
        }
        PyStmtKind::Pass => Ok(()),
        PyStmtKind::Return(_) => Err(ParseError::syntax(
            "`return` may only end a function body; in an `if` branch, assign the result instead",
            s.span,
        )),
        PyStmtKind::AugAssign { .. } => {
            Err(ParseError::syntax("augmented assignment rebinds a name; write `x = R.add(x, y)`", s.span))
        }
        PyStmtKind::For { .. } => Err(ParseError::syntax("Relax functions have no loops; use recursion", s.span)),
        PyStmtKind::ClassDef { .. } | PyStmtKind::Import { .. } => {
            Err(ParseError::syntax("this statement cannot appear in a function body", s.span))
        }
    }
}

fn match_cast_parts(ctx: &mut Ctx, e: &PyExpr) -> ParseResult<(Expr, StructInfo)> {
    let PyExprKind::Call { args, keywords, .. } = &e.kind else { unreachable!("checked by is_call_to") };
    let a = super::attrs::bind_args("R.match_cast", e.span, &["value", "struct_info"], args, keywords)?;
    match (a[0], a[1]) {
        (Some(v), Some(s)) => Ok((expr(ctx, v)?, struct_info(ctx, s)?)),
        _ => Err(ParseError::syntax("`R.match_cast` takes a value and a StructInfo", e.span)),
    }
}

/// `name = value` or `name: ann = value`, statement `s`.
fn binding(
    sc: &mut Seq,
    s: &PyStmt,
    (name, name_span): (&str, Span),
    ann: Option<StructInfo>,
    value: &PyExpr,
) -> ParseResult<()> {
    let b = if is_call_to(value, "R.match_cast") {
        let (v, sinfo) = match_cast_parts(&mut sc.ctx, value)?;
        let var = sc.var(s, name, ann, name_span);
        Binding::MatchCast { var: Some(var), struct_info: sinfo, value: v, span: s.span }
    } else {
        let v = expr(&mut sc.ctx, value)?;
        Binding::VarBinding { var: sc.var(s, name, ann, name_span), value: v, span: s.span }
    };
    sc.bind(s, b);
    Ok(())
}

/// The branch's statements as a `SeqExpr`, in a scope of their own. As in TVMScript,
/// the branch's last statement assigns the `if`'s result: `y = e` makes `e` the
/// branch's body (so it binds nothing); `y = R.match_cast(...)` stays a binding and
/// its variable is the body.
fn branch(
    ctx: &Ctx,
    stmts: &[PyStmt],
    if_span: Span,
    what: &str,
) -> ParseResult<(Expr, String, Option<StructInfo>, Span)> {
    let mut sc = Seq::new(ctx.enter());
    let mut before_last = 0;
    for (i, s) in stmts.iter().enumerate() {
        if i + 1 == stmts.len() {
            before_last = sc.blocks.current.len();
        }
        statement(&mut sc, s)?;
    }
    let last_span = stmts.last().map_or(if_span, |s| s.span);
    let no_result = || {
        ParseError::syntax(format!("the last statement of {what} must assign its result, e.g. `y = ...`"), last_span)
    };
    // The last statement must itself have made an ordinary binding.
    if sc.blocks.current.len() != before_last + 1 {
        return Err(no_result());
    }
    let last = sc.blocks.current.pop().ok_or_else(no_result)?;
    let (body, name, ann, span) = match last {
        Binding::VarBinding { var, value, span } => (value, var.name().to_string(), var.annotation().cloned(), span),
        Binding::MatchCast { var: Some(var), struct_info, value, span } => {
            let body = Expr::new(ExprKind::Var(var.clone()), span);
            let name = var.name().to_string();
            sc.blocks.current.push(Binding::MatchCast { var: Some(var), struct_info, value, span });
            (body, name, None, span)
        }
        Binding::MatchCast { var: None, .. } => return Err(no_result()),
    };
    let seq = SeqExpr { blocks: sc.blocks.finish(), body };
    let seq_span = stmts.first().map_or(if_span, |s| s.span).to(last_span);
    Ok((Expr::new(ExprKind::SeqExpr(Box::new(seq)), seq_span), name, ann, span))
}

fn if_statement(sc: &mut Seq, s: &PyStmt, test: &PyExpr, body: &[PyStmt], orelse: &[PyStmt]) -> ParseResult<()> {
    let span = s.span;
    if orelse.is_empty() {
        return Err(ParseError::syntax("an `if` in Relax needs an `else` branch", span)
            .with_note("both branches assign the `if`'s result variable"));
    }
    let cond = expr(&mut sc.ctx, test)?;
    let (t, t_name, t_ann, t_span) = branch(&sc.ctx, body, span, "an `if` branch")?;
    let (f, f_name, f_ann, f_span) = branch(&sc.ctx, orelse, span, "an `if` branch")?;
    if t_name != f_name {
        return Err(ParseError::syntax(
            format!("the branches of this `if` assign different results: `{t_name}` and `{f_name}`"),
            f_span,
        )
        .with_secondary(t_span, format!("the true branch assigns `{t_name}`"))
        .with_note("both branches must end by assigning the same name, which the `if` binds"));
    }
    check_not_reserved(&t_name, t_span)?;
    let ann = match (t_ann, f_ann) {
        (Some(a), Some(b)) if a != b => {
            return Err(ParseError::syntax(format!("the branches annotate `{t_name}` differently"), f_span)
                .with_secondary(t_span, "the other annotation"))
        }
        (a, b) => a.or(b),
    };
    let var = sc.var(s, &t_name, ann, t_span);
    let value = Expr::new(ExprKind::If(Box::new(If { cond, true_branch: t, false_branch: f })), span);
    sc.bind(s, Binding::VarBinding { var, value, span });
    Ok(())
}

/// `with R.seq_expr():` (an extension): a `SeqExpr` bound to the name its last
/// statement assigns, read like an `if` branch. TVMScript cannot write a `SeqExpr`
/// as a binding's value; the spec's grammar can, and normalization flattens it.
fn seq_expr_statement(sc: &mut Seq, s: &PyStmt, context: &PyExpr, body: &[PyStmt]) -> ParseResult<()> {
    if let PyExprKind::Call { args, keywords, .. } = &context.kind {
        if !args.is_empty() || !keywords.is_empty() {
            return Err(ParseError::syntax("`R.seq_expr()` takes no arguments", context.span));
        }
    }
    let (seq, name, ann, name_span) = branch(&sc.ctx, body, s.span, "a `with R.seq_expr():` block")?;
    check_not_reserved(&name, name_span)?;
    let var = sc.var(s, &name, ann, name_span);
    sc.bind(s, Binding::VarBinding { var, value: seq, span: s.span });
    Ok(())
}

/// The name a statement binds, for matching `R.output` names to bindings.
fn bound_name(s: &PyStmt) -> Option<&str> {
    match &s.kind {
        PyStmtKind::Assign { target: PyExpr { kind: PyExprKind::Name(n), .. }, value } => {
            shape_var_declaration(value).is_none().then_some(n.as_str())
        }
        PyStmtKind::AnnAssign { target: PyExpr { kind: PyExprKind::Name(n), .. }, .. } => Some(n),
        PyStmtKind::FunctionDef { name, .. } => Some(name),
        PyStmtKind::If { body, .. } => body.last().and_then(bound_name),
        PyStmtKind::With { context, body, .. } if is_call_to(context, "R.seq_expr") => body.last().and_then(bound_name),
        _ => None,
    }
}

/// A dataflow block's statements before `R.output(a, b)`, the names it gives, and the
/// positions of the statements whose bindings those names are (the last of each).
pub(super) type DataflowParts<'a> = (&'a [PyStmt], Vec<(&'a str, Span)>, HashSet<usize>);

pub(super) fn dataflow_parts(body: &[PyStmt]) -> ParseResult<DataflowParts<'_>> {
    // `R.output(a, b)` ends the block and names the bindings that stay visible.
    let (stmts, outputs): (&[PyStmt], Vec<(&str, Span)>) = match body.split_last() {
        Some((last, rest)) => match &last.kind {
            PyStmtKind::Expr(e) if is_call_to(e, "R.output") => {
                let PyExprKind::Call { args, keywords, .. } = &e.kind else { unreachable!() };
                if let Some(k) = keywords.first() {
                    return Err(ParseError::syntax("`R.output` takes names only", k.name_span));
                }
                let mut names = Vec::new();
                for a in args {
                    match &a.kind {
                        PyExprKind::Name(n) => names.push((n.as_str(), a.span)),
                        _ => {
                            return Err(ParseError::syntax(
                                "`R.output` takes the names of this block's bindings",
                                a.span,
                            ))
                        }
                    }
                }
                (rest, names)
            }
            _ => (body, Vec::new()),
        },
        None => (body, Vec::new()),
    };
    let mut last_binding: HashMap<&str, usize> = HashMap::new();
    for (i, s) in stmts.iter().enumerate() {
        if let Some(n) = bound_name(s) {
            last_binding.insert(n, i);
        }
    }
    let mut output_at = HashSet::new();
    for (n, sp) in &outputs {
        match last_binding.get(n) {
            Some(i) => {
                output_at.insert(*i);
            }
            None => {
                return Err(ParseError::name(
                    format!("`R.output` names `{n}`, which this dataflow block does not bind"),
                    *sp,
                ))
            }
        }
    }
    Ok((stmts, outputs, output_at))
}

/// A dataflow block, in a scope of its own; the outputs stay visible after it.
fn dataflow_block(sc: &mut Seq, body: &[PyStmt], span: Span) -> ParseResult<()> {
    let (stmts, outputs, output_at) = dataflow_parts(body)?;
    let mut inner = Seq::new(sc.ctx.enter());
    for (i, s) in stmts.iter().enumerate() {
        if let PyStmtKind::Expr(e) = &s.kind {
            if is_call_to(e, "R.output") {
                return Err(ParseError::syntax("`R.output` must be the last statement of the block", s.span));
            }
        }
        if matches!(s.kind, PyStmtKind::Return(_)) {
            return Err(ParseError::syntax("`return` cannot appear in a dataflow block", s.span));
        }
        inner.place = Place::Dataflow { output: output_at.contains(&i) };
        statement(&mut inner, s)?;
    }
    for (n, _) in &outputs {
        if let Some(e) = inner.ctx.lookup(n) {
            sc.ctx.define(n, e.clone());
        }
    }
    sc.blocks.flush();
    sc.blocks.blocks.push(BindingBlock { kind: BlockKind::DataflowBlock, bindings: inner.blocks.current, span });
    Ok(())
}
