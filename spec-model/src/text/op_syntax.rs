//! How TVMScript writes calls of known operators: which arguments are Relax
//! expressions, which are shapes (a Python tuple becomes a `ShapeExpr`), which are
//! packed-function names (a string becomes an `ExternFunc`), which are attributes and
//! which are StructInfo (`sinfo_args`). The parser and the printer share this table,
//! so a call prints the way it parses. Unknown operators use the generic rule:
//! positional arguments are expressions, keywords are attributes.

/// One formal parameter of an operator's TVMScript signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpParam {
    /// A Relax expression argument.
    Expr(&'static str),
    /// An argument where a tuple or list of dimensions means a `ShapeExpr`.
    Shape(&'static str),
    /// An argument where a string names a packed function (`ExternFunc`).
    Func(&'static str),
    /// All remaining positional arguments, as expressions.
    Rest(&'static str),
    /// An attribute (positional or keyword).
    Attr(&'static str),
    /// A StructInfo that becomes the call's `sinfo_args` (positional or keyword).
    Sinfo(&'static str),
}

impl OpParam {
    pub fn name(self) -> &'static str {
        match self {
            OpParam::Expr(n)
            | OpParam::Shape(n)
            | OpParam::Func(n)
            | OpParam::Rest(n)
            | OpParam::Attr(n)
            | OpParam::Sinfo(n) => n,
        }
    }
    pub fn is_argument(self) -> bool {
        matches!(self, OpParam::Expr(_) | OpParam::Shape(_) | OpParam::Func(_) | OpParam::Rest(_))
    }
}

use OpParam::*;

const UNARY: &[OpParam] = &[Expr("x")];
const BINARY: &[OpParam] = &[Expr("x1"), Expr("x2")];
const REDUCE: &[OpParam] = &[Expr("x"), Attr("axis"), Attr("keepdims")];

/// The TVMScript signature of operator `name` (`relax.add` or `add`), if known.
pub fn op_signature(name: &str) -> Option<&'static [OpParam]> {
    let short = name.strip_prefix("relax.").unwrap_or(name);
    Some(match short {
        "negative" | "abs" | "exp" | "log" | "sqrt" | "tanh" | "sigmoid" | "logical_not" | "nn.relu" => UNARY,
        "add" | "subtract" | "multiply" | "divide" | "floor_divide" | "power" | "maximum" | "minimum" | "equal"
        | "not_equal" | "less" | "less_equal" | "greater" | "greater_equal" | "logical_and" | "logical_or" => BINARY,
        "sum" | "mean" | "max" | "min" => REDUCE,
        "nn.softmax" => &[Expr("data"), Attr("axis")],
        "matmul" => &[Expr("x1"), Expr("x2"), Attr("out_dtype")],
        "reshape" => &[Expr("x"), Shape("shape")],
        "permute_dims" => &[Expr("x"), Attr("axes")],
        "broadcast_to" => &[Expr("x"), Shape("shape")],
        "concat" => &[Expr("tensors"), Attr("axis")],
        "split" => &[Expr("x"), Attr("indices_or_sections"), Attr("axis")],
        "strided_slice" => &[Expr("x"), Attr("axes"), Attr("begin"), Attr("end"), Attr("strides")],
        "take" => &[Expr("x"), Expr("indices"), Attr("axis")],
        "where" => &[Expr("condition"), Expr("x1"), Expr("x2")],
        "astype" => &[Expr("x"), Attr("dtype")],
        "zeros" | "ones" => &[Shape("shape"), Attr("dtype")],
        "full" => &[Shape("shape"), Expr("fill_value"), Attr("dtype")],
        "arange" => &[Expr("start"), Expr("end"), Expr("step"), Attr("dtype")],
        "shape_of" => &[Expr("expr")],
        "null_value" => &[],
        "print" => &[Rest("values"), Attr("format")],
        "assert_op" => &[Expr("condition"), Rest("format_args"), Attr("format")],
        "cast" => &[Expr("value"), Sinfo("sinfo_args")],
        "call_tir" => &[Expr("gvar"), Expr("args"), Sinfo("out_sinfo"), Shape("tir_vars")],
        "call_dps_packed" => &[Func("func"), Expr("args"), Sinfo("out_sinfo")],
        "call_pure_packed" => &[Func("func"), Rest("args"), Sinfo("sinfo_args")],
        _ => return None,
    })
}

/// The keyword under which an operator's `sinfo_args` are written.
pub fn sinfo_keyword(name: &str) -> &'static str {
    op_signature(name)
        .and_then(|sig| sig.iter().find_map(|p| if let Sinfo(n) = p { Some(*n) } else { None }))
        .unwrap_or("sinfo_args")
}

/// `relax.nn.relu` → `R.nn.relu`; names outside the `relax.` namespace are written `R.<name>` too.
pub fn op_script_name(name: &str) -> String {
    format!("R.{}", name.strip_prefix("relax.").unwrap_or(name))
}
