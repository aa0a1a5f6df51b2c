//! Operators' attribute schemas: which attributes a call may carry, of which kind,
//! and which are required. A call with an unknown, ill-kinded or missing attribute is
//! ill-formed (an error of the operator's rule).

use super::{OpDef, OpError};
use crate::diagnostic::Diagnostic;
use crate::grammar::{AttrValue, Attrs, DataType};
use crate::span::Span;

/// The kind of value an attribute holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    Int,
    Bool,
    /// A dtype string (`"float32"`).
    DType,
    Str,
    /// `None` or a string.
    OptStr,
    /// A list of integers.
    IntList,
    /// `None` or a list of integers.
    OptIntList,
    /// `None`, an integer, or a list of integers (reduction axes).
    Axes,
    /// An integer or a list of integers (`split`'s `indices_or_sections`).
    IntOrIntList,
    /// `None` or an integer.
    OptInt,
    /// A number (an integer is read as the float it names).
    Float,
    /// `None` or a number.
    OptFloat,
    /// A number or a list of numbers (`image.resize2d`'s `roi`).
    Floats,
    /// An index map, `lambda i, j: (...)`.
    IndexMap,
    /// A dict from strings to attribute values (`te_grad_kwargs={"k": T.float32(2)}`).
    StrDict,
}

impl AttrKind {
    fn accepts(self, v: &AttrValue) -> bool {
        let int_list =
            |v: &AttrValue| matches!(v, AttrValue::List(xs) if xs.iter().all(|x| matches!(x, AttrValue::Int(_))));
        match self {
            AttrKind::Int => matches!(v, AttrValue::Int(_)),
            AttrKind::Bool => matches!(v, AttrValue::Bool(_)),
            AttrKind::DType => matches!(v, AttrValue::Str(s) if DataType::parse(s).is_some()),
            AttrKind::Str => matches!(v, AttrValue::Str(_)),
            AttrKind::OptStr => matches!(v, AttrValue::None | AttrValue::Str(_)),
            AttrKind::IntList => int_list(v),
            AttrKind::OptIntList => matches!(v, AttrValue::None) || int_list(v),
            AttrKind::Axes => matches!(v, AttrValue::None | AttrValue::Int(_)) || int_list(v),
            AttrKind::IntOrIntList => matches!(v, AttrValue::Int(_)) || int_list(v),
            AttrKind::OptInt => matches!(v, AttrValue::None | AttrValue::Int(_)),
            AttrKind::Float => matches!(v, AttrValue::Float(_) | AttrValue::Int(_)),
            AttrKind::OptFloat => matches!(v, AttrValue::None | AttrValue::Float(_) | AttrValue::Int(_)),
            AttrKind::Floats => {
                let number = |v: &AttrValue| matches!(v, AttrValue::Float(_) | AttrValue::Int(_));
                number(v) || matches!(v, AttrValue::List(xs) if xs.iter().all(number))
            }
            AttrKind::IndexMap => matches!(v, AttrValue::IndexMap(_)),
            AttrKind::StrDict => matches!(v, AttrValue::Dict(_)),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            AttrKind::Int => "an integer",
            AttrKind::Bool => "a boolean",
            AttrKind::DType => "a dtype string such as \"float32\"",
            AttrKind::Str => "a string",
            AttrKind::OptStr => "None or a string",
            AttrKind::IntList => "a list of integers",
            AttrKind::OptIntList => "None or a list of integers",
            AttrKind::Axes => "None, an integer or a list of integers",
            AttrKind::IntOrIntList => "an integer or a list of integers",
            AttrKind::OptInt => "None or an integer",
            AttrKind::Float => "a number",
            AttrKind::OptFloat => "None or a number",
            AttrKind::Floats => "a number or a list of numbers",
            AttrKind::IndexMap => "an index map such as `lambda i, j: (j, i)`",
            AttrKind::StrDict => "a dict from strings to attribute values",
        }
    }
}

/// One attribute of an operator's schema.
#[derive(Clone, Copy, Debug)]
pub struct AttrSpec {
    pub name: &'static str,
    pub kind: AttrKind,
    pub required: bool,
}

const fn opt(name: &'static str, kind: AttrKind) -> AttrSpec {
    AttrSpec { name, kind, required: false }
}

const fn req(name: &'static str, kind: AttrKind) -> AttrSpec {
    AttrSpec { name, kind, required: true }
}

/// The schemas shared by the registry's entries.
pub mod schemas {
    use super::AttrKind::*;
    use super::{opt, req, AttrSpec};

    pub const CALL_PACKED: &[AttrSpec] = &[opt("pure", Bool)];
    pub const CALL_TIR_INPLACE: &[AttrSpec] = &[req("inplace_indices", IntOrIntList)];
    pub const CALL_TIR_WITH_GRAD: &[AttrSpec] = &[req("te_grad_name", Str), opt("te_grad_kwargs", StrDict)];
    pub const FORMAT: &[AttrSpec] = &[opt("format", Str)];
    pub const SOFTMAX: &[AttrSpec] = &[opt("axis", Int)];
    pub const ASTYPE: &[AttrSpec] = &[req("dtype", DType)];
    pub const LEAKYRELU: &[AttrSpec] = &[opt("alpha", Float)];
    pub const MATMUL: &[AttrSpec] = &[opt("out_dtype", DType)];
    pub const REDUCE: &[AttrSpec] = &[opt("axis", Axes), opt("keepdims", Bool)];
    pub const ARG_REDUCE: &[AttrSpec] = &[opt("axis", OptInt), opt("keepdims", Bool)];
    pub const CUMSUM: &[AttrSpec] = &[opt("axis", OptInt), opt("dtype", DType), opt("exclusive", Bool)];
    pub const LAYER_NORM: &[AttrSpec] =
        &[req("axes", IntOrIntList), opt("epsilon", Float), opt("center", Bool), opt("scale", Bool)];
    pub const RMS_NORM: &[AttrSpec] = &[opt("axes", IntOrIntList), opt("epsilon", Float)];
    pub const GROUP_NORM: &[AttrSpec] = &[
        req("num_groups", Int),
        req("channel_axis", Int),
        req("axes", IntOrIntList),
        opt("epsilon", Float),
        opt("center", Bool),
        opt("scale", Bool),
    ];
    pub const BATCH_NORM: &[AttrSpec] = &[
        req("axis", Int),
        opt("epsilon", Float),
        opt("center", Bool),
        opt("scale", Bool),
        opt("momentum", Float),
        opt("training", Bool),
    ];
    pub const DROPOUT: &[AttrSpec] = &[opt("rate", Float)];
    pub const PERMUTE_DIMS: &[AttrSpec] = &[opt("axes", OptIntList)];
    pub const CONCAT: &[AttrSpec] = &[opt("axis", Int)];
    pub const SPLIT: &[AttrSpec] = &[req("indices_or_sections", IntOrIntList), opt("axis", Int)];
    pub const STRIDED_SLICE: &[AttrSpec] = &[
        req("axes", IntList),
        req("begin", IntList),
        req("end", IntList),
        opt("strides", OptIntList),
        opt("assume_inbound", Bool),
    ];
    pub const TAKE: &[AttrSpec] = &[opt("axis", OptInt)];
    pub const LIKE: &[AttrSpec] = &[opt("dtype", DType)];
    pub const SORT: &[AttrSpec] = &[opt("axis", Int), opt("descending", Bool)];
    pub const ARGSORT: &[AttrSpec] = &[opt("axis", Int), opt("descending", Bool), opt("dtype", DType)];
    pub const TOPK: &[AttrSpec] =
        &[opt("k", Int), opt("axis", Int), opt("ret_type", Str), opt("largest", Bool), opt("dtype", DType)];
    pub const GATHER_ELEMENTS: &[AttrSpec] = &[opt("axis", Int)];
    pub const SCATTER_ELEMENTS: &[AttrSpec] = &[opt("axis", Int), opt("reduction", Str)];
    pub const SQUEEZE: &[AttrSpec] = &[opt("axis", Axes)];
    pub const EXPAND_DIMS: &[AttrSpec] = &[req("axis", IntOrIntList)];
    pub const FLIP: &[AttrSpec] = &[req("axis", Int)];
    pub const TILE: &[AttrSpec] = &[req("repeats", IntOrIntList)];
    pub const REPEAT: &[AttrSpec] = &[req("repeats", Int), opt("axis", OptInt)];
    pub const CREATE: &[AttrSpec] = &[req("dtype", DType)];
    pub const FULL: &[AttrSpec] = &[opt("dtype", DType)];
    pub const ARANGE: &[AttrSpec] = &[opt("dtype", DType)];
    pub const PAD: &[AttrSpec] = &[req("pad_width", IntList), opt("pad_mode", Str), opt("pad_value", Float)];
    pub const CONV: &[AttrSpec] = &[
        opt("strides", IntOrIntList),
        opt("padding", IntOrIntList),
        opt("dilation", IntOrIntList),
        opt("groups", Int),
        opt("data_layout", Str),
        opt("kernel_layout", Str),
        opt("out_layout", Str),
        opt("out_dtype", DType),
    ];
    pub const CONV_TRANSPOSE: &[AttrSpec] = &[
        opt("strides", IntOrIntList),
        opt("padding", IntOrIntList),
        opt("output_padding", IntOrIntList),
        opt("dilation", IntOrIntList),
        opt("groups", Int),
        opt("data_layout", Str),
        opt("kernel_layout", Str),
        opt("out_layout", Str),
        opt("out_dtype", DType),
    ];
    pub const RESIZE2D: &[AttrSpec] = &[
        opt("roi", Floats),
        opt("layout", Str),
        opt("method", Str),
        opt("coordinate_transformation_mode", Str),
        opt("rounding_method", Str),
        opt("cubic_alpha", Float),
        opt("cubic_exclude", Int),
        opt("extrapolation_value", Float),
        opt("out_dtype", DType),
    ];
    pub const POOL2D: &[AttrSpec] = &[
        opt("pool_size", IntOrIntList),
        opt("strides", IntOrIntList),
        opt("padding", IntOrIntList),
        opt("dilation", IntOrIntList),
        opt("ceil_mode", Bool),
        opt("count_include_pad", Bool),
        opt("layout", Str),
        opt("out_layout", Str),
    ];
    /// `axis_separators` / `input_axis_separators` (Relax's tests; gone in TVM 0.27)
    /// only split the buffer when TIR flattens it: no effect on values.
    pub const LAYOUT_TRANSFORM: &[AttrSpec] = &[
        req("index_map", IndexMap),
        opt("pad_value", OptFloat),
        opt("axis_separators", OptIntList),
        opt("input_axis_separators", OptIntList),
    ];
    pub const EINSUM: &[AttrSpec] = &[req("subscripts", Str)];
    pub const ATTENTION: &[AttrSpec] =
        &[opt("scale", OptFloat), opt("causal_mask", OptStr), opt("window_size", OptInt)];
    pub const ONE_HOT: &[AttrSpec] = &[req("depth", Int), opt("axis", Int)];
    pub const ADAPTIVE_POOL2D: &[AttrSpec] =
        &[opt("output_size", IntOrIntList), opt("layout", Str), opt("out_layout", Str)];
}

/// Checks a call's attributes against the operator's schema.
pub(super) fn check_attrs(op: &OpDef, attrs: &Attrs, span: Span) -> Result<(), OpError> {
    let rule = op.rule;
    for (name, value) in &attrs.0 {
        let Some(spec) = op.attrs.iter().find(|s| s.name == name) else {
            let known: Vec<&str> = op.attrs.iter().map(|s| s.name).collect();
            let hint = if known.is_empty() { "none".to_string() } else { known.join(", ") };
            return Err(Box::new(Diagnostic::error(
                rule,
                format!("`{}` has no attribute `{name}` (its attributes: {hint})", op.name),
                span,
            )));
        };
        if !spec.kind.accepts(value) {
            return Err(Box::new(Diagnostic::error(
                rule,
                format!("attribute `{name}` of `{}` must be {}", op.name, spec.kind.describe()),
                span,
            )));
        }
    }
    if let Some(missing) = op.attrs.iter().find(|s| s.required && attrs.get(s.name).is_none()) {
        return Err(Box::new(Diagnostic::error(
            rule,
            format!("`{}` needs the attribute `{}`", op.name, missing.name),
            span,
        )));
    }
    Ok(())
}
