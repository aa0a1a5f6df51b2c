//! `einsum`: the equation's grammar (TVM's `EinsumEquation::FromString`, with NumPy's
//! errors) and the static rule (TVM's `InferEinsumShape` over symbolic shapes).
//!
//! The oracle evaluates with [`Equation`] too (the equation is static syntax, like an
//! attribute schema); the optimized engine parses it with its own code.

use super::infer::{show, tensor_si, Infer, TensorInfo};
use super::OpError;
use crate::grammar::{DataType, PrimExpr, StructInfo};
use crate::require;

/// The label standing for an ellipsis (`...`) in a term. It sorts before every letter,
/// as TVM's `kEllipsis = '\0'` does: an implied output and the reduction order put the
/// ellipsis first.
pub const ELLIPSIS: u8 = b'.';

/// A parsed einsum equation: one term per operand and the output term, each a list of
/// labels (ASCII letters, and at most one [`ELLIPSIS`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Equation {
    pub inputs: Vec<Vec<u8>>,
    pub output: Vec<u8>,
    /// Whether the output was written after `->` (else it is implied).
    pub explicit: bool,
}

impl Equation {
    /// Parses `subscripts`: terms separated by `,`, optionally `->` and the output term;
    /// spaces are ignored. Without `->` the output is every label that occurs exactly
    /// once among the inputs, in ASCII order (upper case before lower case), after the
    /// ellipsis if an input has one (NumPy's and TVM's implicit mode).
    /// Errors: a character other than a letter, `,`, `-`, `>`, `.` or a space; `-` not
    /// followed by `>`, or a second `->`; `.` not part of `...`; two ellipses in one
    /// term; a `,` in the output; an output label that is in no input or repeated.
    pub fn parse(subscripts: &str) -> Result<Equation, String> {
        let bytes = subscripts.as_bytes();
        let mut inputs = Vec::new();
        let mut current = Vec::new();
        let mut arrow = false;
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b' ' => {}
                b'-' => {
                    if bytes.get(i + 1) != Some(&b'>') {
                        return Err("`-` must be followed by `>`".into());
                    }
                    if arrow {
                        return Err("the equation has more than one `->`".into());
                    }
                    arrow = true;
                    inputs.push(std::mem::take(&mut current));
                    i += 1;
                }
                b',' if arrow => return Err("the output term (after `->`) cannot contain `,`".into()),
                b',' => inputs.push(std::mem::take(&mut current)),
                b'.' => {
                    if bytes.get(i + 1) != Some(&b'.') || bytes.get(i + 2) != Some(&b'.') {
                        return Err("a `.` that is not part of an ellipsis `...`".into());
                    }
                    if current.contains(&ELLIPSIS) {
                        return Err("a term has more than one ellipsis `...`".into());
                    }
                    current.push(ELLIPSIS);
                    i += 2;
                }
                c if c.is_ascii_alphabetic() => current.push(c),
                _ => {
                    let c = subscripts[i..].chars().next().unwrap_or('?');
                    return Err(format!("invalid character {c:?} (labels are the letters a-z, A-Z)"));
                }
            }
            i += 1;
        }
        let output = if arrow {
            for (k, &l) in current.iter().enumerate() {
                if current[..k].contains(&l) {
                    return Err(format!("the output names label '{}' more than once", l as char));
                }
                if l != ELLIPSIS && !inputs.iter().any(|t: &Vec<u8>| t.contains(&l)) {
                    return Err(format!("the output label '{}' is in no input", l as char));
                }
            }
            current
        } else {
            inputs.push(current);
            let mut counts = [0usize; 256];
            for t in &inputs {
                for &l in t {
                    counts[l as usize] += 1;
                }
            }
            (0..=255u8).filter(|&l| (l == ELLIPSIS && counts[l as usize] > 0) || counts[l as usize] == 1).collect()
        };
        Ok(Equation { inputs, output, explicit: arrow })
    }

    /// Whether some input term has an ellipsis.
    pub fn input_ellipsis(&self) -> bool {
        self.inputs.iter().any(|t| t.contains(&ELLIPSIS))
    }

    /// The labels summed over: those of the inputs not in the output, ellipsis first,
    /// then in ASCII order (TVM's reduction axes).
    pub fn reduced(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self.inputs.iter().flatten().copied().filter(|l| !self.output.contains(l)).collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The einsum equation of a call: its `subscripts` parsed (an error of the rule when
/// missing or malformed).
fn equation(cx: &Infer) -> Result<Equation, OpError> {
    let Some(crate::grammar::AttrValue::Str(s)) = cx.attr("subscripts") else {
        return Err(cx.error("needs the string attribute `subscripts`"));
    };
    Equation::parse(s).map_err(|m| cx.error(format!("subscripts {s:?}: {m}")))
}

/// OP-einsum: `einsum(operands, subscripts)`: the Einstein summation of a tuple of
/// tensors of one dtype. Each operand has a term of the equation (its rank is the
/// term's letter count, or at least that with an ellipsis, which stands for the
/// remaining dimensions). A label's dimensions must agree: within one operand equal (a
/// diagonal), across operands equal or 1 (broadcast); the ellipses' dimensions
/// broadcast as NumPy's shapes. The result has the output term's dimensions (the
/// ellipsis: the broadcast ellipsis shape) and the operands' dtype; its rank is known
/// when the output has no ellipsis or every operand's rank is known.
/// Errors: not a tuple of tensors; an empty tuple; known different dtypes; `subscripts`
/// missing or malformed (see [`Equation::parse`]); a number of terms other than the
/// number of operands; an operand of known rank other than its term's (less than its
/// letters, with an ellipsis); a diagonal's dimensions provably different; a label's or
/// an ellipsis' dimensions that provably do not broadcast.
/// Warnings: those dimensions undecided (the result's shape is then unknown).
pub fn einsum(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let ts = super::manipulate::tensor_fields(cx, 0)?;
    require!(cx => !ts.is_empty(), "needs at least one operand");
    let known: Vec<DataType> = ts.iter().map(|t| t.dtype).filter(|d| !d.is_void()).collect();
    if let Some(other) = known.iter().find(|d| **d != known[0]) {
        return Err(cx.error(format!("operands of dtypes {} and {other}", known[0])));
    }
    let dtype = if ts.iter().any(|t| t.dtype.is_void()) { DataType::void() } else { ts[0].dtype };
    let eq = equation(cx)?;
    require!(cx => eq.inputs.len() == ts.len(),
        "subscripts has {} input term(s) for {} operand(s)", eq.inputs.len(), ts.len());
    let mut ellipsis_rank: Option<i64> = Some(0);
    for (k, (t, term)) in ts.iter().zip(&eq.inputs).enumerate() {
        let letters = term.iter().filter(|&&l| l != ELLIPSIS).count() as i64;
        let has_ellipsis = term.contains(&ELLIPSIS);
        if t.ndim == -1 {
            if has_ellipsis {
                ellipsis_rank = None;
            }
            continue;
        }
        if has_ellipsis {
            require!(cx => t.ndim >= letters,
                "operand {k} has rank {} but its term names {letters} dimension(s) besides `...`", t.ndim);
            ellipsis_rank = ellipsis_rank.map(|r| r.max(t.ndim - letters));
        } else {
            require!(cx => t.ndim == letters, "operand {k} has rank {} but its term names {letters} dimension(s)", t.ndim);
        }
    }
    let out_letters = eq.output.iter().filter(|&&l| l != ELLIPSIS).count() as i64;
    let ndim = match (eq.output.contains(&ELLIPSIS), ellipsis_rank) {
        (false, _) => out_letters,
        (true, Some(r)) => out_letters + r,
        (true, None) => -1,
    };
    let dims = if ts.iter().all(|t| t.dims.is_some()) { output_dims(cx, &eq, &ts)? } else { None };
    Ok(tensor_si(dims, dtype, ndim))
}

/// The result's dimensions, every operand's dimensions known: `None` when a pair is
/// undecided.
fn output_dims(cx: &mut Infer, eq: &Equation, ts: &[TensorInfo]) -> Result<Option<Vec<PrimExpr>>, OpError> {
    let mut extent: Vec<Option<PrimExpr>> = vec![None; 256];
    let mut decided = true;
    let mut ellipsis: Option<Vec<PrimExpr>> = None;
    for (k, (t, term)) in ts.iter().zip(&eq.inputs).enumerate() {
        let Some(ds) = &t.dims else { return Ok(None) };
        let span = ds.len() + 1 - term.len().min(ds.len() + 1);
        let mut own: Vec<(u8, PrimExpr)> = Vec::new();
        let mut at = 0;
        for &l in term {
            if l == ELLIPSIS {
                let part = ds[at..at + span].to_vec();
                ellipsis = Some(match ellipsis.take() {
                    None => part,
                    Some(prev) => match cx.broadcast_shapes(&prev, &part)? {
                        Some(s) => s,
                        None => {
                            decided = false;
                            if prev.len() >= part.len() {
                                prev
                            } else {
                                part
                            }
                        }
                    },
                });
                at += span;
                continue;
            }
            let d = ds[at].clone();
            at += 1;
            if let Some((_, first)) = own.iter().find(|(m, _)| *m == l) {
                let what = format!("the diagonal '{}' of operand {k}", l as char);
                decided &= cx.expect_equal(first, &d, &what)?;
                continue;
            }
            own.push((l, d.clone()));
            extent[l as usize] = Some(match extent[l as usize].take() {
                None => d,
                Some(prev) => match cx.broadcast_dim(&prev, &d) {
                    Ok(Some(b)) => b,
                    Ok(None) => {
                        decided = false;
                        prev
                    }
                    Err(_) => {
                        return Err(cx.error(format!(
                            "label '{}' has dimensions {} and {}, which do not broadcast",
                            l as char,
                            show(&prev),
                            show(&d)
                        )))
                    }
                },
            });
        }
    }
    if !decided {
        return Ok(None);
    }
    let mut out = Vec::new();
    for &l in &eq.output {
        if l == ELLIPSIS {
            out.extend(ellipsis.clone().unwrap_or_default());
        } else if let Some(d) = &extent[l as usize] {
            out.push(d.clone());
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(s: &str) -> String {
        let e = Equation::parse(s).unwrap();
        e.output.iter().map(|&l| if l == ELLIPSIS { "...".to_string() } else { (l as char).to_string() }).collect()
    }

    #[test]
    fn implicit_outputs_follow_numpy() {
        assert_eq!(out("ij,jk"), "ik");
        assert_eq!(out("ba"), "ab");
        assert_eq!(out("BA"), "AB");
        assert_eq!(out("bA,Ab"), "");
        assert_eq!(out("ii"), "");
        assert_eq!(out("...ij,...jk"), "...ik");
        assert_eq!(out("i j"), "ij");
        assert_eq!(out("ij->"), "");
        assert_eq!(Equation::parse("ij,jk->ik").unwrap().reduced(), b"j".to_vec());
        assert_eq!(Equation::parse("...ij->j").unwrap().reduced(), b".i".to_vec());
    }

    #[test]
    fn malformed_equations_are_errors() {
        for bad in ["i.j", "i->i->i", "ij->ii", "ij->k", "i-j", "i,j->i,j", "i..", "...i...", "i1", "ü", "i>j"] {
            assert!(Equation::parse(bad).is_err(), "{bad}");
        }
        assert!(Equation::parse("ij->...ij").is_ok(), "an output ellipsis may cover no dimension");
        assert!(Equation::parse("").is_ok(), "one scalar operand, scalar result");
    }
}
