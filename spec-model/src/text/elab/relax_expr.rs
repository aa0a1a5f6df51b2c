//! Relax expressions: names, literals, tuples, projections, calls of operators,
//! globals, closures and packed functions, and the `R.` builtins.

use super::attrs::{attr_value, expect_int, expect_str};
use super::constant::constant;
use super::prim::{parse_string_dim, prim_expr, NameMode};
use super::sinfo::{struct_info, SINFO_NAMES};
use super::{Ctx, Entity};
use crate::grammar::{Attrs, Call, Expr, ExprKind, StructInfo};
use crate::ops::{Op, OpParam, OpRef};
use crate::span::Span;
use crate::text::error::{ParseError, ParseResult};
use crate::text::py_ast::{BinOp, CmpOp, Keyword, PyExpr, PyExprKind, UnaryOp};
use std::rc::Rc;

/// `R.` names that are syntax rather than operators.
const STATEMENT_ONLY: &[&str] = &["match_cast", "func_attr", "output", "dataflow", "function"];

pub(crate) fn standalone_expr(ctx: &mut Ctx, e: &PyExpr) -> ParseResult<Expr> {
    expr(ctx, e)
}

/// Is `e` built only from shape variables, literals and `T.` calls (so that it
/// denotes a `PrimValue`)?
fn is_prim_like(ctx: &Ctx, e: &PyExpr) -> bool {
    match &e.kind {
        PyExprKind::Name(n) => matches!(ctx.lookup(n), Some(Entity::Shape(_))),
        PyExprKind::Int(_) | PyExprKind::Float(_) | PyExprKind::Bool(_) => true,
        PyExprKind::Call { func, .. } => func.dotted().is_some_and(|d| d.first() == Some(&"T")),
        PyExprKind::Unary { operand, .. } => is_prim_like(ctx, operand),
        PyExprKind::Binary { left, right, .. }
        | PyExprKind::BoolOp { left, right, .. }
        | PyExprKind::Compare { left, right, .. } => is_prim_like(ctx, left) && is_prim_like(ctx, right),
        _ => false,
    }
}

/// `R.<name>`: the operator `relax.<name>`, registered or not.
fn op(name: &str, span: Span) -> Expr {
    Expr::new(ExprKind::Op(OpRef::from_name(&format!("relax.{name}"))), span)
}

/// A call of `op` written with a Python operator (`x + y`).
fn op_call(op: Op, args: Vec<Expr>, span: Span) -> Expr {
    let callee = Expr::new(ExprKind::Op(op.into()), span);
    let call = Call { op: callee, args, sinfo_args: Vec::new(), attrs: Attrs::default() };
    Expr::new(ExprKind::Call(Box::new(call)), span)
}

pub(crate) fn expr(ctx: &mut Ctx, e: &PyExpr) -> ParseResult<Expr> {
    let span = e.span;
    let kind = match &e.kind {
        PyExprKind::Name(n) => match ctx.lookup(n) {
            Some(Entity::Relax(v)) => ExprKind::Var(v.clone()),
            Some(Entity::Shape(_)) => ExprKind::PrimValue(prim_expr(ctx, e, NameMode::Resolve)?),
            Some(Entity::Global(gv)) => ExprKind::GlobalVar(gv.clone()),
            Some(Entity::Module) => {
                return Err(ParseError::name(
                    format!("`{n}` names the module; write `{n}.f` for its function `f`"),
                    span,
                ))
            }
            Some(Entity::Buffer(_)) => return Err(ParseError::name(format!("`{n}` is a TIR buffer"), span)),
            None => match ctx.forward_ref(n, span) {
                Some(v) => ExprKind::Var(v),
                None => return Err(ctx.unknown_name(n, span)),
            },
        },
        PyExprKind::Int(_) | PyExprKind::Float(_) | PyExprKind::Bool(_) => {
            ExprKind::PrimValue(prim_expr(ctx, e, NameMode::Resolve)?)
        }
        PyExprKind::Str(s) => ExprKind::StringImm(s.clone()),
        PyExprKind::NoneLit => {
            return Err(ParseError::syntax("`None` is not a Relax expression; use `R.null_value()`", span))
        }
        PyExprKind::Tuple(items) | PyExprKind::List(items) => {
            ExprKind::Tuple(items.iter().map(|i| expr(ctx, i)).collect::<ParseResult<_>>()?)
        }
        PyExprKind::Attribute { .. } => return attribute(ctx, e),
        PyExprKind::Subscript { value, .. }
            if matches!(&value.kind, PyExprKind::Subscript { value: m, .. }
                if matches!(&m.kind, PyExprKind::Name(n) if n == "metadata" && ctx.lookup(n).is_none())) =>
        {
            return Err(ParseError::syntax(
                "a constant in TVM's metadata section (`metadata[...]`) is not in this file",
                span,
            )
            .with_note(
                "the .rx reader does not read TVM's metadata section: make the constant a function parameter \
                 and pass it as a .npy argument (as `from_onnx(..., keep_params_in_input=True)` does)",
            ));
        }
        PyExprKind::Subscript { value, index } => {
            let tuple_value = expr(ctx, value)?;
            if matches!(index.kind, PyExprKind::Slice { .. } | PyExprKind::Tuple(_)) {
                return Err(ParseError::syntax("a tuple is indexed by one integer: `t[0]`", index.span));
            }
            let i = expect_int(index, "a tuple index")?;
            ExprKind::TupleGetItem { tuple_value: Box::new(tuple_value), index: i }
        }
        PyExprKind::Call { func, args, keywords } => return call(ctx, e, func, args, keywords),
        _ if is_prim_like(ctx, e) => ExprKind::PrimValue(prim_expr(ctx, e, NameMode::Resolve)?),
        PyExprKind::Unary { op, operand } => {
            let name = match op {
                UnaryOp::Neg => Op::Negative,
                UnaryOp::Not => Op::LogicalNot,
                UnaryOp::Pos => return expr(ctx, operand),
                UnaryOp::Invert => return Err(ParseError::syntax("`~` is not a Relax operator", span)),
            };
            let x = expr(ctx, operand)?;
            return Ok(op_call(name, vec![x], span));
        }
        PyExprKind::Binary { op, left, right } => {
            let name = match op {
                BinOp::Add => Op::Add,
                BinOp::Sub => Op::Subtract,
                BinOp::Mul => Op::Multiply,
                BinOp::Div => Op::Divide,
                BinOp::FloorDiv => Op::FloorDivide,
                BinOp::Pow => Op::Power,
                BinOp::MatMul => Op::Matmul,
                _ => return Err(ParseError::syntax("this operator has no Relax meaning; call an `R.` operator", span)),
            };
            let (a, b) = (expr(ctx, left)?, expr(ctx, right)?);
            return Ok(op_call(name, vec![a, b], span));
        }
        PyExprKind::Compare { op, left, right } => {
            let name = match op {
                CmpOp::Eq => Op::Equal,
                CmpOp::NotEq => Op::NotEqual,
                CmpOp::Lt => Op::Less,
                CmpOp::LtE => Op::LessEqual,
                CmpOp::Gt => Op::Greater,
                CmpOp::GtE => Op::GreaterEqual,
            };
            let (a, b) = (expr(ctx, left)?, expr(ctx, right)?);
            return Ok(op_call(name, vec![a, b], span));
        }
        PyExprKind::BoolOp { .. } => {
            return Err(ParseError::syntax(
                "`and`/`or` on tensors are not Relax operators; use `R.logical_and` / `R.logical_or`",
                span,
            ))
        }
        PyExprKind::Dict(_) | PyExprKind::Slice { .. } | PyExprKind::NumArray(_) => {
            return Err(ParseError::syntax(format!("{} is not a Relax expression", e.describe()), span))
        }
        PyExprKind::Lambda { .. } => {
            return Err(ParseError::syntax(
                "a lambda is not a Relax expression; it is written only as an index map: \
                 `R.layout_transform(x, index_map=lambda i, j: (j, i))`",
                span,
            ))
        }
    };
    Ok(Expr::new(kind, span))
}

/// `cls.f` / `Module.f` (a global), `R.op` (an `Op` used as a value).
fn attribute(ctx: &mut Ctx, e: &PyExpr) -> ParseResult<Expr> {
    let span = e.span;
    let Some(path) = e.dotted() else {
        return Err(ParseError::syntax("attribute access is not a Relax expression", span));
    };
    match path.as_slice() {
        ["R", rest @ ..] => {
            let name = rest.join(".");
            if rest.len() == 1 && SINFO_NAMES.contains(&rest[0]) {
                return Err(ParseError::syntax(format!("`R.{name}` is a StructInfo, not an expression"), span));
            }
            if rest.len() == 1 && (STATEMENT_ONLY.contains(&rest[0]) || is_builtin(rest[0])) {
                return Err(ParseError::syntax(format!("`R.{name}` must be called"), span));
            }
            Ok(op(&name, span))
        }
        [m, f] => match ctx.lookup(m) {
            Some(Entity::Module) => {
                if ctx.globals.contains_key(*f) {
                    Ok(Expr::new(ExprKind::GlobalVar(crate::grammar::GlobalVar::new(*f)), span))
                } else {
                    Err(ParseError::name(format!("the module has no function `{f}`"), span))
                }
            }
            _ => Err(ParseError::syntax(format!("`{}` is not a Relax expression", path.join(".")), span)),
        },
        _ => Err(ParseError::syntax(format!("`{}` is not a Relax expression", path.join(".")), span)),
    }
}

fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        "const"
            | "linear"
            | "shape"
            | "prim_value"
            | "str"
            | "string_imm"
            | "dtype"
            | "ExternFunc"
            | "extern"
            | "tuple"
            | "call_packed"
    )
}

fn no_keywords(name: &str, keywords: &[Keyword]) -> ParseResult<()> {
    match keywords.first() {
        Some(k) => Err(ParseError::syntax(format!("`{name}` takes no keyword arguments"), k.name_span)),
        None => Ok(()),
    }
}

fn one_arg<'a>(name: &str, span: Span, args: &'a [PyExpr], keywords: &[Keyword]) -> ParseResult<&'a PyExpr> {
    no_keywords(name, keywords)?;
    match args {
        [a] => Ok(a),
        _ => Err(ParseError::syntax(format!("`{name}` takes one argument, {} given", args.len()), span)),
    }
}

fn call(ctx: &mut Ctx, e: &PyExpr, func: &PyExpr, args: &[PyExpr], keywords: &[Keyword]) -> ParseResult<Expr> {
    let span = e.span;
    let path = func.dotted();
    match path.as_deref() {
        Some(["R", name]) if is_builtin(name) => builtin(ctx, name, span, args, keywords),
        Some(["R", name]) if STATEMENT_ONLY.contains(name) => Err(ParseError::syntax(
            match *name {
                "match_cast" => "`R.match_cast` is written as a binding `v = R.match_cast(x, S)` or a statement",
                "func_attr" => "`R.func_attr` is a statement at the start of a function body",
                "output" => "`R.output` is the last statement of a `with R.dataflow():` block",
                _ => "this is not an expression",
            },
            span,
        )),
        Some(["R", name]) if SINFO_NAMES.contains(name) => {
            Err(ParseError::syntax(format!("`R.{name}` is a StructInfo, not an expression"), span))
        }
        Some(["R"]) => Err(ParseError::syntax("`R` is the Relax namespace, not a function", func.span)),
        Some(["R", rest @ ..]) => {
            // `R.call_tir("name", ...)`, Relax's spelling before `call_dps_packed` was
            // split out of `call_tir`, calls a packed function in destination-passing
            // style: it is `call_dps_packed` (proofs-notes/interpretations.md).
            let packed_call_tir =
                rest == ["call_tir"] && matches!(args.first().map(|a| &a.kind), Some(PyExprKind::Str(_)));
            // `R.nn.attention_bias(q, k, v, bias, ...)`: how TVM 0.27 prints an attention
            // with a bias (its operator `relax.nn.attention_bias`), here `nn.attention`
            // with a fourth argument (proofs-notes/operator-semantics.md).
            let name = if packed_call_tir {
                "call_dps_packed".to_string()
            } else if rest == ["nn", "attention_bias"] {
                "nn.attention".to_string()
            } else {
                rest.join(".")
            };
            let op = OpRef::from_name(&format!("relax.{name}"));
            let (name, sig) = (op.script_name(), op.registered().and_then(|o| o.def().signature));
            let callee = Expr::new(ExprKind::Op(op), func.span);
            call_with_signature(ctx, callee, &name, sig, span, args, keywords)
        }
        Some(["T", ..]) if is_prim_like(ctx, e) => {
            Ok(Expr::new(ExprKind::PrimValue(prim_expr(ctx, e, NameMode::Resolve)?), span))
        }
        _ => {
            let callee = expr(ctx, func)?;
            call_with_signature(ctx, callee, "a function", None, span, args, keywords)
        }
    }
}

fn builtin(ctx: &mut Ctx, name: &str, span: Span, args: &[PyExpr], keywords: &[Keyword]) -> ParseResult<Expr> {
    let callee = format!("R.{name}");
    let kind = match name {
        "const" => {
            let a = super::attrs::bind_args(&callee, span, &["value", "dtype", "shape"], args, keywords)?;
            let value = a[0].ok_or_else(|| ParseError::syntax("`R.const` needs a value", span))?;
            ExprKind::Constant(Rc::new(constant(value, a[1], a[2], span)?))
        }
        "shape" => {
            let a = one_arg(&callee, span, args, keywords)?;
            let (PyExprKind::List(ds) | PyExprKind::Tuple(ds)) = &a.kind else {
                return Err(ParseError::syntax("`R.shape` takes a list of dimensions: `R.shape([n, 4])`", a.span));
            };
            ExprKind::ShapeExpr(ds.iter().map(|d| prim_expr(ctx, d, NameMode::Resolve)).collect::<ParseResult<_>>()?)
        }
        "prim_value" => {
            let a = one_arg(&callee, span, args, keywords)?;
            ExprKind::PrimValue(prim_expr(ctx, a, NameMode::Resolve)?)
        }
        "str" | "string_imm" => ExprKind::StringImm(expect_str(one_arg(&callee, span, args, keywords)?, "a string")?),
        "dtype" => ExprKind::DataTypeImm(super::attrs::expect_dtype(one_arg(&callee, span, args, keywords)?)?),
        "ExternFunc" | "extern" => ExprKind::ExternFunc {
            global_symbol: expect_str(one_arg(&callee, span, args, keywords)?, "a symbol name")?,
        },
        "tuple" => {
            no_keywords(&callee, keywords)?;
            ExprKind::Tuple(args.iter().map(|a| expr(ctx, a)).collect::<ParseResult<_>>()?)
        }
        // Not an operator in TVM either: `relax.op.linear` is a Python helper building
        // `matmul(data, permute_dims(weight), out_dtype)` plus `bias` when given, and
        // TVMScript evaluates it to that expression (proofs-notes/interpretations.md).
        "linear" => {
            let a = super::attrs::bind_args(&callee, span, &["data", "weight", "bias", "out_dtype"], args, keywords)?;
            let (Some(data), Some(weight)) = (a[0], a[1]) else {
                return Err(ParseError::syntax("`R.linear` needs `data` and `weight`", span));
            };
            let (data, weight) = (expr(ctx, data)?, expr(ctx, weight)?);
            let transposed = op_call(Op::PermuteDims, vec![weight], span);
            let mut product = Call {
                op: Expr::new(ExprKind::Op(Op::Matmul.into()), span),
                args: vec![data, transposed],
                sinfo_args: Vec::new(),
                attrs: Attrs::default(),
            };
            if let Some(d) = a[3].filter(|d| !matches!(d.kind, PyExprKind::NoneLit)) {
                product.attrs.insert("out_dtype", attr_value(d)?);
            }
            let product = Expr::new(ExprKind::Call(Box::new(product)), span);
            return match a[2].filter(|b| !matches!(b.kind, PyExprKind::NoneLit)) {
                Some(b) => Ok(op_call(Op::Add, vec![product, expr(ctx, b)?], span)),
                None => Ok(product),
            };
        }
        "call_packed" => {
            let Some(first) = args.first() else {
                return Err(ParseError::syntax("`R.call_packed` needs the packed function's name", span));
            };
            let symbol = expect_str(first, "the packed function's name")?;
            let callee = Expr::new(ExprKind::ExternFunc { global_symbol: symbol }, first.span);
            // Like any call: positional arguments, `sinfo_args=`, other keywords are attributes.
            return call_with_signature(ctx, callee, "R.call_packed", None, span, &args[1..], keywords);
        }
        _ => unreachable!("is_builtin guards this"),
    };
    Ok(Expr::new(kind, span))
}

/// StructInfo given as `sinfo_args=`: one StructInfo, or a list/tuple of them.
fn sinfo_list(ctx: &mut Ctx, e: &PyExpr) -> ParseResult<Vec<StructInfo>> {
    match &e.kind {
        PyExprKind::List(items) | PyExprKind::Tuple(items) => items.iter().map(|i| struct_info(ctx, i)).collect(),
        _ => Ok(vec![struct_info(ctx, e)?]),
    }
}

/// StructInfo given as `out_sinfo=`: one StructInfo, or a list meaning a tuple of outputs.
fn out_sinfo(ctx: &mut Ctx, e: &PyExpr) -> ParseResult<StructInfo> {
    match &e.kind {
        PyExprKind::List(items) => {
            let fields = items.iter().map(|i| struct_info(ctx, i)).collect::<ParseResult<_>>()?;
            Ok(StructInfo::new(crate::grammar::StructInfoKind::Tuple { fields }, e.span))
        }
        _ => struct_info(ctx, e),
    }
}

/// A call whose arguments follow `sig` (an operator's TVMScript signature, see
/// [`OpParam`]); with no signature, positional arguments are expressions and keywords
/// are attributes. `name` is the callee as written, for messages.
fn call_with_signature(
    ctx: &mut Ctx,
    callee: Expr,
    script_name: &str,
    sig: Option<&'static [OpParam]>,
    span: Span,
    args: &[PyExpr],
    keywords: &[Keyword],
) -> ParseResult<Expr> {
    let mut out = Call { op: callee, args: Vec::new(), sinfo_args: Vec::new(), attrs: Attrs::default() };
    let mut sinfo_given: Option<Span> = None;
    let set_sinfo = |given: &mut Option<Span>, s: Vec<StructInfo>, at: Span| -> ParseResult<Vec<StructInfo>> {
        if let Some(prev) = *given {
            return Err(ParseError::syntax("the StructInfo arguments are given twice", at)
                .with_secondary(prev, "first given here"));
        }
        *given = Some(at);
        Ok(s)
    };
    let Some(sig) = sig else {
        for a in args {
            out.args.push(expr(ctx, a)?);
        }
        for k in keywords {
            if rx_keyword(&k.name) == "sinfo_args" {
                let s = sinfo_list(ctx, &k.value)?;
                out.sinfo_args = set_sinfo(&mut sinfo_given, s, k.name_span)?;
            } else {
                out.attrs.insert(k.name.clone(), call_attr(ctx, &k.value)?);
            }
        }
        return Ok(Expr::new(ExprKind::Call(Box::new(out)), span));
    };
    // Assign positional arguments, then keywords, to formals.
    let mut slots: Vec<Vec<&PyExpr>> = vec![Vec::new(); sig.len()];
    let mut pi = 0;
    for a in args {
        while pi < sig.len() && !slots[pi].is_empty() && !matches!(sig[pi], OpParam::Rest(_)) {
            pi += 1;
        }
        if pi >= sig.len() {
            return Err(ParseError::syntax(format!("too many arguments for `{script_name}`"), a.span)
                .with_note(format!("its parameters are: {}", formals(sig))));
        }
        slots[pi].push(a);
        if !matches!(sig[pi], OpParam::Rest(_)) {
            pi += 1;
        }
    }
    for k in keywords {
        let name = rx_keyword(&k.name);
        if name == "sinfo_args" && !sig.iter().any(|p| p.name() == "sinfo_args") {
            let s = sinfo_list(ctx, &k.value)?;
            out.sinfo_args = set_sinfo(&mut sinfo_given, s, k.name_span)?;
            continue;
        }
        let Some(i) = sig.iter().position(|p| p.name() == name && !matches!(p, OpParam::Rest(_))) else {
            return Err(ParseError::syntax(format!("`{script_name}` has no parameter `{}`", k.name), k.name_span)
                .with_note(format!("its parameters are: {}", formals(sig))));
        };
        if !slots[i].is_empty() {
            return Err(ParseError::syntax(format!("`{}` is given twice in `{script_name}`", k.name), k.name_span));
        }
        slots[i].push(&k.value);
    }
    let mut missing: Option<&str> = None;
    for (p, given) in sig.iter().zip(&slots) {
        if p.is_argument() && !matches!(p, OpParam::Rest(_)) {
            match (given.first(), missing) {
                (None, None) if matches!(p, OpParam::PrimOr(..)) => {
                    let OpParam::PrimOr(_, d) = p else { continue };
                    out.args.push(Expr::new(ExprKind::PrimValue(crate::grammar::PrimExpr::int(*d)), span));
                }
                (None, None) if matches!(p, OpParam::StrOr(..)) => {
                    let OpParam::StrOr(_, d) = p else { continue };
                    out.args.push(Expr::new(ExprKind::StringImm(d.to_string()), span));
                }
                (None, _) => missing = missing.or(Some(p.name())),
                (Some(a), Some(m)) => {
                    return Err(ParseError::syntax(
                        format!("argument `{m}` of `{script_name}` is missing before `{}`", p.name()),
                        a.span,
                    ))
                }
                (Some(_), None) => {}
            }
        }
        for a in given {
            match p {
                OpParam::Expr(_) | OpParam::Rest(_) | OpParam::PrimOr(..) | OpParam::StrOr(..) => {
                    out.args.push(expr(ctx, a)?)
                }
                OpParam::Dtype(_) => out.args.push(match &a.kind {
                    PyExprKind::Str(_) => Expr::new(ExprKind::DataTypeImm(super::attrs::expect_dtype(a)?), a.span),
                    _ => expr(ctx, a)?,
                }),
                OpParam::Shape(_) => out.args.push(shape_arg(ctx, a)?),
                OpParam::Func(_) => out.args.push(match &a.kind {
                    PyExprKind::Str(s) => Expr::new(ExprKind::ExternFunc { global_symbol: s.clone() }, a.span),
                    _ => expr(ctx, a)?,
                }),
                // `out_dtype=None`, as TVM 0.27 prints an unset dtype: the same as leaving it out.
                OpParam::Attr("out_dtype") if matches!(a.kind, PyExprKind::NoneLit) => {}
                // `inplace_indices=0`: TVMScript's wrapper makes a single index a list of one.
                OpParam::Attr("inplace_indices") => {
                    let v = match call_attr(ctx, a)? {
                        v @ crate::grammar::AttrValue::Int(_) => crate::grammar::AttrValue::List(vec![v]),
                        v => v,
                    };
                    out.attrs.insert("inplace_indices", v)
                }
                OpParam::Attr(n) => out.attrs.insert(*n, call_attr(ctx, a)?),
                OpParam::Sinfo(n) => {
                    let s = if *n == "out_sinfo" { vec![out_sinfo(ctx, a)?] } else { sinfo_list(ctx, a)? };
                    out.sinfo_args = set_sinfo(&mut sinfo_given, s, a.span)?;
                }
            }
        }
    }
    Ok(Expr::new(ExprKind::Call(Box::new(out)), span))
}

/// A keyword in the spec's vocabulary: TVM 0.27 spells `out_sinfo` and `sinfo_args`
/// as `out_ty` and `ty_args` (see `Dialect`).
fn rx_keyword(name: &str) -> &str {
    match name {
        "out_ty" => "out_sinfo",
        "ty_args" => "sinfo_args",
        n => n,
    }
}

fn formals(sig: &[OpParam]) -> String {
    sig.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
}

/// A shape argument: a tuple/list of dimensions is a `ShapeExpr`; anything else is an expression.
fn shape_arg(ctx: &mut Ctx, a: &PyExpr) -> ParseResult<Expr> {
    match &a.kind {
        PyExprKind::Tuple(ds) | PyExprKind::List(ds) => Ok(Expr::new(
            ExprKind::ShapeExpr(ds.iter().map(|d| prim_expr(ctx, d, NameMode::Resolve)).collect::<ParseResult<_>>()?),
            a.span,
        )),
        PyExprKind::Str(s) => {
            let inner = parse_string_dim(s, a.span)?;
            shape_arg(ctx, &inner)
        }
        _ => expr(ctx, a),
    }
}

/// A call's attribute value: a literal ([`attr_value`]), or an index map written
/// `lambda i, j: (...)` or `T.index_map(lambda i, j: (...))` (TVM 0.27's printer),
/// whose parameters are `int64` index variables scoped to its body.
fn call_attr(ctx: &Ctx, e: &PyExpr) -> ParseResult<crate::grammar::AttrValue> {
    let lambda = match &e.kind {
        PyExprKind::Call { func, args, keywords } if func.dotted_name().as_deref() == Some("T.index_map") => {
            match (&args[..], keywords.iter().find(|k| k.name != "index_dtype")) {
                ([l @ PyExpr { kind: PyExprKind::Lambda { .. }, .. }], None) => l,
                (_, Some(k)) => {
                    return Err(ParseError::syntax(format!("`T.index_map` has no parameter `{}`", k.name), k.name_span))
                }
                _ => return Err(ParseError::syntax("`T.index_map` takes one lambda", e.span)),
            }
        }
        PyExprKind::Lambda { .. } => e,
        _ => return attr_value(e),
    };
    let PyExprKind::Lambda { params, body } = &lambda.kind else { return attr_value(e) };
    let mut inner = ctx.enter();
    let mut vars = Vec::with_capacity(params.len());
    for (i, (name, span)) in params.iter().enumerate() {
        if params[..i].iter().any(|(n, _)| n == name) {
            return Err(ParseError::syntax(format!("the lambda parameter `{name}` is given twice"), *span));
        }
        let v = crate::grammar::PrimVar::shape_var(name.clone());
        inner.define(name, Entity::Shape(v.clone()));
        vars.push(v);
    }
    let items: Vec<&PyExpr> = match &body.kind {
        PyExprKind::Tuple(items) | PyExprKind::List(items) => items.iter().collect(),
        _ => vec![&**body],
    };
    let results = items.into_iter().map(|r| prim_expr(&mut inner, r, NameMode::Resolve)).collect::<ParseResult<_>>()?;
    Ok(crate::grammar::AttrValue::IndexMap(crate::grammar::IndexMap { params: vars, results }))
}
