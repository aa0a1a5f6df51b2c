//! Literal values in `.rx` syntax: strings, floats, attribute values and constants
//! (`R.const`), each spelled so that it reads back as exactly the same value.

use super::{call, joined, list, tuple, txt, Doc};
use crate::grammar::{AttrValue, NDArray, TensorData};
use crate::text::num_array::MIN_ELEMENTS;
use pretty::RcDoc;

/// A Python string literal.
pub(crate) fn string_lit(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A float as Python reads it back exactly (`float("nan")` etc. for non-finite values).
pub(crate) fn float_lit(f: f64) -> String {
    if f.is_nan() {
        if f.is_sign_negative() { "-float(\"nan\")" } else { "float(\"nan\")" }.into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "float(\"inf\")".into()
        } else {
            "-float(\"inf\")".into()
        }
    } else {
        format!("{f:?}")
    }
}

/// An attribute value, as the Python literal it is written as.
pub(crate) fn attr_value(v: &AttrValue) -> Doc {
    match v {
        AttrValue::None => txt("None"),
        AttrValue::Bool(b) => txt(if *b { "True" } else { "False" }),
        AttrValue::Int(i) => txt(i.to_string()),
        AttrValue::Float(f) => txt(float_lit(f.0)),
        AttrValue::Str(s) => txt(string_lit(s)),
        AttrValue::List(items) => list(items.iter().map(attr_value).collect()),
        AttrValue::Dict(d) => attr_dict(d),
        AttrValue::IndexMap(m) => index_map(m, &|v| v.name().to_string(), &|e| txt(super::print_prim_expr(e)), false),
    }
}

/// `lambda i, j: (e1, e2)`, or `T.index_map(lambda ...)` as TVM 0.27 prints it.
pub(crate) fn index_map(
    m: &crate::grammar::IndexMap,
    name: &dyn Fn(&crate::grammar::PrimVar) -> String,
    prim: &dyn Fn(&crate::grammar::PrimExpr) -> Doc,
    tvm: bool,
) -> Doc {
    let params: Vec<String> = m.params.iter().map(name).collect();
    let body = tuple(m.results.iter().map(prim).collect());
    let lambda = txt(format!("lambda {}: ", params.join(", "))).append(body);
    if tvm {
        call("T.index_map", vec![lambda])
    } else {
        lambda
    }
}

/// A dictionary of attributes: `{"key": value, ...}`.
pub(crate) fn attr_dict(d: &std::collections::BTreeMap<String, AttrValue>) -> Doc {
    super::bracketed(
        txt("{"),
        d.iter().map(|(k, v)| txt(format!("{}: ", string_lit(k))).append(attr_value(v))).collect(),
        "}",
    )
}

/// The shortest decimal that reads back (through f64) as exactly `bits` of a
/// 16- or 32-bit float.
fn shortest(value: f64, exact: impl Fn(f64) -> bool) -> Option<String> {
    (0..17).map(|p| format!("{value:.p$e}")).find(|t| t.parse::<f64>().is_ok_and(&exact)).map(|t| {
        // Prefer the plain spelling when it says the same.
        let plain = format!("{}", t.parse::<f64>().unwrap_or(value));
        let plain = if plain.contains(['.', 'e', 'i', 'N']) { plain } else { format!("{plain}.0") };
        if plain.parse::<f64>().is_ok_and(&exact) && plain.len() <= t.len() + 2 {
            plain
        } else {
            t
        }
    })
}

/// Element `i` as text that reads back as exactly the stored value.
fn element(data: &TensorData, i: usize) -> String {
    if let TensorData::F16(v) = data {
        let x = v[i];
        if x.is_finite() {
            // The exact value (65504.0) unless a shorter decimal reads back the same (0.1).
            let exact = format!("{:?}", x.to_f32());
            if let Some(t) = shortest(x.to_f64(), |p| crate::grammar::f16_nearest(p).to_bits() == x.to_bits()) {
                return if t.len() < exact.len() { t } else { exact };
            }
        }
    }
    let text = data.element_text(i);
    let exact = |parsed: f64| -> bool {
        match data {
            TensorData::F16(v) => crate::grammar::f16_nearest(parsed).to_bits() == v[i].to_bits(),
            TensorData::F32(v) => (parsed as f32).to_bits() == v[i].to_bits(),
            _ => true,
        }
    };
    match data {
        TensorData::F16(_) | TensorData::F32(_) | TensorData::F64(_) => match text.as_str() {
            "nan" => "float(\"nan\")".into(),
            "-nan" => "-float(\"nan\")".into(),
            "inf" => "float(\"inf\")".into(),
            "-inf" => "-float(\"inf\")".into(),
            t => match t.parse::<f64>() {
                Ok(p) if exact(p) => text,
                _ => match data.get(i) {
                    crate::grammar::Scalar::Float(f) => format!("{f:?}"),
                    _ => text,
                },
            },
        },
        _ => text,
    }
}

/// Characters of elements per line in a packed row.
const PACKED_LINE: usize = 76;

/// A row of a large constant, as many elements per line as fit (one document per
/// line, not per element: a constant may have 2^24 elements). Large constants read
/// back through the lexer's numeric-list path (`text::num_array`).
fn packed_row(data: &TensorData, offset: usize, n: usize) -> Doc {
    let mut lines = Vec::new();
    let mut line = String::new();
    for i in 0..n {
        let e = element(data, offset + i);
        if !line.is_empty() && line.len() + e.len() + 1 > PACKED_LINE {
            lines.push(txt(std::mem::take(&mut line).trim_end().to_string()));
        }
        line.push_str(&e);
        line.push_str(", ");
    }
    if lines.is_empty() {
        return txt(format!("[{}]", line.trim_end().trim_end_matches(',')));
    }
    lines.push(txt(line.trim_end().to_string()));
    txt("[")
        .append(RcDoc::hardline().append(joined(lines, RcDoc::hardline())).nest(4))
        .append(RcDoc::hardline())
        .append(txt("]"))
}

/// `R.const(value, "dtype")`, with `shape=` only when nested lists cannot say it.
pub(crate) fn constant(a: &NDArray) -> Doc {
    fn nested(a: &NDArray, dim: usize, offset: usize) -> Doc {
        if dim == a.shape.len() {
            return txt(element(&a.data, offset));
        }
        let n = a.shape[dim] as usize;
        if dim + 1 == a.shape.len() && a.data.len() >= MIN_ELEMENTS {
            return packed_row(&a.data, offset, n);
        }
        // Saturating: a zero later on (`[0, 2^62, 2^62]`) makes the true product 0,
        // and with `n == 0` no stride is used.
        let stride = a.shape[dim + 1..].iter().fold(1usize, |s, d| s.saturating_mul(*d as usize));
        list((0..n).map(|i| nested(a, dim + 1, offset + i * stride)).collect())
    }
    let dtype = || txt(string_lit(&a.dtype.to_string()));
    let shape_kw = || txt("shape=").append(tuple(a.shape.iter().map(|d| txt(d.to_string())).collect()));
    // An empty tensor whose nested lists would be many (`[2^40, 0]` is 2^40 empty lists)
    // prints its shape instead.
    let lists = a.shape.iter().take_while(|d| **d != 0).fold(1u64, |n, d| n.saturating_mul(*d));
    if a.data.is_empty() && a.shape.contains(&0) && lists > 1 << 12 {
        return call("R.const", vec![txt("[]"), dtype(), shape_kw()]);
    }
    let count = a.shape.iter().try_fold(1usize, |n, d| n.checked_mul(usize::try_from(*d).ok()?));
    if count != Some(a.data.len()) {
        // Only an AST built by hand can break this invariant; say so instead of indexing out of range.
        return txt(format!("<constant with {} elements for shape {:?}>", a.data.len(), a.shape));
    }
    let mut args = vec![nested(a, 0, 0), dtype()];
    // `[]` says (0,): a zero before the last dimension hides the dimensions after it.
    if a.shape.len() > 1 && a.shape[..a.shape.len() - 1].contains(&0) {
        args.push(shape_kw());
    }
    call("R.const", args)
}
