//! The operator registry (Notable Operators, and every registered operator): for each
//! [`Op`] its name (`relax.add`, written `R.add`), purity, attribute schema, TVMScript
//! signature and `FInferStructInfo`, the macro SI-D-11.1 and TY-7.1 invoke on a call.
//! All of it comes from one declaration, the operator table (`table.rs`).
//!
//! Each operator's inference function carries a doc comment `OP-name` stating its
//! rule and its error cases; diagnostics it raises use that ID. Shapes are symbolic:
//! dimension equalities go through the [`ShapeProver`](crate::struct_info::ShapeProver)
//! of the [`SiEnv`].

mod attrs;
mod conv;
mod create;
mod einsum;
mod elementwise;
mod grad;
mod index;
mod infer;
mod layout_transform;
mod linalg;
mod manipulate;
mod manipulate_dims;
mod memory;
mod norm;
mod resize;
mod sorting;
mod special;
mod statistical;
mod syntax;
mod table;
mod unary_math;

pub use attrs::{AttrKind, AttrSpec};
pub use einsum::{Equation, ELLIPSIS};
pub use infer::{dim_op, Infer};
pub use layout_transform::map_shape;
pub use linalg::CAUSAL_MASKS;
pub use syntax::OpParam;

use crate::diagnostic::Diagnostic;
use crate::grammar::{Call, IRModule, StructInfo};
use crate::require;
use crate::span::Span;
use crate::struct_info::SiEnv;
use std::rc::Rc;

/// How many arguments an operator takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    Exactly(usize),
    AtLeast(usize),
}

/// The error of an ill-formed operator call (boxed: diagnostics are large).
pub type OpError = Box<Diagnostic>;

/// An `FInferStructInfo` function: the result's StructInfo, or the error that makes the
/// call ill-formed. Warnings go to [`Infer::warn`].
pub type InferFn = fn(&mut Infer) -> Result<StructInfo, OpError>;

/// One registered operator: its row of the operator table (`table.rs`).
pub struct OpDef {
    pub op: Op,
    /// The full name, `relax.add`.
    pub name: &'static str,
    /// How TVMScript writes it, `R.add`.
    pub script_name: &'static str,
    /// Its rule ID, `OP-add`.
    pub rule: &'static str,
    /// Whether a call may appear in a DataflowBlock and keeps its function pure (TY-10.1.1, TY-11.2.1).
    pub pure: bool,
    pub arity: Arity,
    pub attrs: &'static [AttrSpec],
    /// How TVMScript writes a call; `None`: the generic rule (`syntax.rs`).
    pub signature: Option<&'static [OpParam]>,
    /// Whether a call carries StructInfo arguments (`sinfo_args`, `out_sinfo`).
    pub takes_sinfo_args: bool,
    /// The argument positions where a `ShapeExpr` may hold a literal `-1`, the
    /// dimension the operator infers (reshape's target, E-11).
    pub minus_one_args: &'static [usize],
    pub infer: InferFn,
    /// One line for diagnostics; the inference function's doc comment has the rule.
    pub summary: &'static str,
}

impl OpDef {
    /// May argument `i`, when a `ShapeExpr`, hold a literal `-1`?
    pub fn admits_minus_one(&self, i: usize) -> bool {
        self.minus_one_args.contains(&i)
    }
}

/// Expands the operator table into `Op` and `REGISTRY`, in table order.
macro_rules! define_ops {
    ($( $variant:ident = $short:literal {
        pure: $pure:expr, arity: $arity:expr, attrs: $attrs:expr, sig: $sig:expr,
        sinfo_args: $sinfo:expr, minus_one: $m1:expr, infer: $infer:path,
        summary: $summary:literal $(,)?
    } )*) => {
        /// A registered operator (`Op(op_name)` of the grammar, for a name the registry
        /// knows). Match on it exhaustively: a consumer that forgets an operator does not compile.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Op {
            $($variant,)*
        }

        impl Op {
            /// Every operator, in registry order.
            pub const ALL: &'static [Op] = &[$(Op::$variant,)*];

            /// The operator whose full name is `name` (`relax.add`).
            pub fn from_name(name: &str) -> Option<Op> {
                match name {
                    $(concat!("relax.", $short) => Some(Op::$variant),)*
                    _ => None,
                }
            }
        }

        /// Every registered operator; `REGISTRY[op as usize]` is `op`'s row.
        pub static REGISTRY: &[OpDef] = &[$(
            OpDef {
                op: Op::$variant,
                name: concat!("relax.", $short),
                script_name: concat!("R.", $short),
                rule: concat!("OP-", $short),
                pure: $pure,
                arity: $arity,
                attrs: $attrs,
                signature: $sig,
                takes_sinfo_args: $sinfo,
                minus_one_args: $m1,
                infer: $infer,
                summary: $summary,
            },
        )*];
    };
}

use attrs::schemas as s;
use syntax::shared::{BINARY, REDUCE, UNARY};
use syntax::OpParam::*;
use Arity::*;

crate::for_each_op!(define_ops);

impl Op {
    /// This operator's row of the registry.
    pub fn def(self) -> &'static OpDef {
        &REGISTRY[self as usize]
    }

    /// The full name, `relax.add`.
    pub fn name(self) -> &'static str {
        self.def().name
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// The operator an `Op` node names: a registered one, or a name the registry does
/// not know (it parses and checks with a warning, SI-D-11.1, and is impure, TY-10.1.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpRef {
    Registered(Op),
    /// The full name, `relax.frobnicate`.
    Unregistered(Rc<str>),
}

impl OpRef {
    /// The operator named `name` (`relax.add`; the prefix may be omitted).
    pub fn from_name(name: &str) -> OpRef {
        let full = if name.starts_with("relax.") { name.to_string() } else { format!("relax.{name}") };
        match Op::from_name(&full) {
            Some(op) => OpRef::Registered(op),
            None => OpRef::Unregistered(full.into()),
        }
    }

    /// The full name, `relax.add`.
    pub fn name(&self) -> &str {
        match self {
            OpRef::Registered(op) => op.name(),
            OpRef::Unregistered(name) => name,
        }
    }

    /// How TVMScript writes it: `R.add`, and `R.<name>` for names outside `relax.` too.
    pub fn script_name(&self) -> String {
        match self {
            OpRef::Registered(op) => op.def().script_name.to_string(),
            OpRef::Unregistered(name) => format!("R.{}", name.strip_prefix("relax.").unwrap_or(name)),
        }
    }

    pub fn registered(&self) -> Option<Op> {
        match self {
            OpRef::Registered(op) => Some(*op),
            OpRef::Unregistered(_) => None,
        }
    }
}

impl std::fmt::Display for OpRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl From<Op> for OpRef {
    fn from(op: Op) -> OpRef {
        OpRef::Registered(op)
    }
}

/// The operator registered under `name` (`relax.add`; `add` is accepted too).
pub fn lookup(name: &str) -> Option<&'static OpDef> {
    OpRef::from_name(name).registered().map(Op::def)
}

/// What an `FInferStructInfo` call produced.
pub struct Inferred {
    pub struct_info: StructInfo,
    pub warnings: Vec<Diagnostic>,
}

/// Runs `op`'s `FInferStructInfo` on a call whose arguments have StructInfo `args`:
/// first the arity and attribute schema, then the operator's rule.
pub fn infer_struct_info(
    op: &OpDef,
    call: &Call,
    args: &[StructInfo],
    env: &SiEnv,
    module: Option<&IRModule>,
    span: Span,
) -> Result<Inferred, OpError> {
    let rule = op.rule;
    let n = call.args.len();
    let ok = match op.arity {
        Arity::Exactly(k) => n == k,
        Arity::AtLeast(k) => n >= k,
    };
    if !ok {
        let want = match op.arity {
            Arity::Exactly(k) => format!("{k}"),
            Arity::AtLeast(k) => format!("at least {k}"),
        };
        return Err(Box::new(Diagnostic::error(
            rule,
            format!("`{}` takes {want} argument(s), {n} given", op.name),
            span,
        )));
    }
    require!(
        call.sinfo_args.is_empty() || op.takes_sinfo_args,
        rule,
        span,
        "`{}` takes no StructInfo arguments",
        op.name
    );
    attrs::check_attrs(op, &call.attrs, span)?;
    let mut cx = Infer::new(op, call, args, env, module, span);
    let si = (op.infer)(&mut cx)?;
    Ok(Inferred { struct_info: si, warnings: cx.into_warnings() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_is_indexed_by_op() {
        assert_eq!(REGISTRY.len(), Op::ALL.len());
        for (i, op) in Op::ALL.iter().enumerate() {
            assert_eq!(*op as usize, i);
            assert_eq!(REGISTRY[i].op, *op);
            assert_eq!(Op::from_name(op.name()), Some(*op));
            assert_eq!(OpRef::from_name(op.def().name.strip_prefix("relax.").unwrap_or("")), OpRef::Registered(*op));
        }
    }

    #[test]
    fn names_rules_and_spellings_agree() {
        for def in REGISTRY {
            let short = def.name.strip_prefix("relax.").expect("every operator is in the relax namespace");
            assert_eq!(def.rule, format!("OP-{short}"));
            assert_eq!(def.script_name, format!("R.{short}"));
            assert_eq!(crate::rules::rule_summary(def.rule), Some(def.summary));
            assert!(def.minus_one_args.iter().all(|&i| match def.arity {
                Arity::Exactly(n) | Arity::AtLeast(n) => i < n,
            }));
        }
    }

    #[test]
    fn a_signature_names_the_attributes_of_the_schema() {
        for def in REGISTRY {
            let Some(sig) = def.signature else { continue };
            for p in sig {
                if let OpParam::Attr(n) = p {
                    assert!(def.attrs.iter().any(|a| a.name == *n), "{}: `{n}` is not in its schema", def.name);
                }
            }
            let takes_sinfo = sig.iter().any(|p| matches!(p, OpParam::Sinfo(_)));
            assert_eq!(takes_sinfo, def.takes_sinfo_args, "{}", def.name);
        }
    }

    #[test]
    fn unregistered_names_stay_names() {
        let op = OpRef::from_name("relax.frobnicate");
        assert_eq!(op, OpRef::Unregistered("relax.frobnicate".into()));
        assert_eq!(op.script_name(), "R.frobnicate");
        assert_eq!(op.registered(), None);
    }
}
