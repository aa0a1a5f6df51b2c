//! `layout_transform`: the index map is compiled once, at lowering, into a postfix
//! program per result; at run time the destination of every input element is
//! computed (in parallel chunks for large tensors), then the elements are scattered
//! into a result pre-filled with the pad value, with a bitmap catching two elements
//! sent to one place.

use super::common::{created, operand, read, write};
use super::simd::{parallel_chunks_mut, Exec};
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::error::Result;
use crate::scalar::Num;
use crate::tensor::Tensor;
use crate::value::Value;
use crate::with_num;
use spec_model::grammar::{AttrValue, IndexMap, PrimBinOp, PrimExpr, PrimExprKind};
use spec_model::ops::map_shape;

/// The fewest input elements one thread of the destination pass gets.
const MIN_CHUNK: usize = 1 << 14;
/// A destination that is outside the result, or whose arithmetic overflowed.
const BAD: u64 = u64::MAX;

#[derive(Clone, Copy, Debug)]
enum Instr {
    Const(i64),
    Param(usize),
    Bin(PrimBinOp),
    /// A conversion to an integer dtype of `bits` (checked to fit).
    Fit(u8, bool),
}

/// A result expression as a postfix program.
fn compile(m: &IndexMap, e: &PrimExpr, out: &mut Vec<Instr>) -> std::result::Result<(), String> {
    match &*e.kind {
        PrimExprKind::IntImm { value, dtype } if !dtype.is_bool() => out.push(Instr::Const(*value)),
        PrimExprKind::Var(v) => match m.params.iter().position(|p| p == v) {
            Some(k) => out.push(Instr::Param(k)),
            None => return Err(format!("`{}` is not a parameter of the index map", v.name())),
        },
        PrimExprKind::Cast { dtype, value } if dtype.is_int() || dtype.is_uint() => {
            compile(m, value, out)?;
            out.push(Instr::Fit(dtype.bits.min(64) as u8, dtype.is_uint()));
        }
        PrimExprKind::Binary { op, a, b }
            if matches!(
                op,
                PrimBinOp::Add
                    | PrimBinOp::Sub
                    | PrimBinOp::Mul
                    | PrimBinOp::FloorDiv
                    | PrimBinOp::FloorMod
                    | PrimBinOp::Div
                    | PrimBinOp::Mod
                    | PrimBinOp::Min
                    | PrimBinOp::Max
            ) =>
        {
            compile(m, a, out)?;
            compile(m, b, out)?;
            out.push(Instr::Bin(*op));
            // TIR computes in the operands' promoted dtype: a narrower one must hold the result.
            let dt = e.dtype();
            if (dt.is_int() && dt.bits < 64) || dt.is_uint() {
                out.push(Instr::Fit(dt.bits.min(64) as u8, dt.is_uint()));
            }
        }
        _ => return Err("the index map's results must be integer index arithmetic".into()),
    }
    Ok(())
}

/// Runs `prog` with the parameters `index`; `None` on overflow or division by zero.
fn run(prog: &[Instr], index: &[i64], stack: &mut Vec<i64>) -> Option<i64> {
    stack.clear();
    for ins in prog {
        let v = match *ins {
            Instr::Const(c) => c,
            Instr::Param(k) => index[k],
            Instr::Fit(bits, unsigned) => {
                let v = stack.pop()?;
                let fits = match (bits, unsigned) {
                    (64, false) => true,
                    (64, true) => v >= 0,
                    (b, false) => (-(1i64 << (b - 1))..(1i64 << (b - 1))).contains(&v),
                    (b, true) => (0..(1i64 << b)).contains(&v),
                };
                fits.then_some(v)?
            }
            Instr::Bin(op) => {
                let b = stack.pop()?;
                let a = stack.pop()?;
                match op {
                    PrimBinOp::Add => a.checked_add(b)?,
                    PrimBinOp::Sub => a.checked_sub(b)?,
                    PrimBinOp::Mul => a.checked_mul(b)?,
                    PrimBinOp::Div => a.checked_div(b)?,
                    PrimBinOp::Mod => a.checked_rem(b)?,
                    PrimBinOp::FloorDiv => {
                        let q = a.checked_div(b)?;
                        if (a % b != 0) && ((a < 0) != (b < 0)) {
                            q - 1
                        } else {
                            q
                        }
                    }
                    PrimBinOp::FloorMod => {
                        let r = a.checked_rem(b)?;
                        if r != 0 && ((r < 0) != (b < 0)) {
                            r + b
                        } else {
                            r
                        }
                    }
                    PrimBinOp::Min => a.min(b),
                    PrimBinOp::Max => a.max(b),
                    _ => return None,
                }
            }
        };
        stack.push(v);
    }
    stack.pop()
}

/// `OP-layout_transform`: the lowering; the map is compiled and the pad value read once.
pub fn layout_transform(l: &Lowering) -> Box<dyn Kernel> {
    let Some(AttrValue::IndexMap(m)) = l.attrs.get("index_map") else {
        return Box::new(Failing("needs the attribute `index_map`".into()));
    };
    let pad = match l.attrs.get("pad_value") {
        None | Some(AttrValue::None) => 0.0,
        Some(_) => match attrs::float(l.attrs, "pad_value", 0.0) {
            Ok(v) => v,
            Err(e) => return Box::new(Failing(e)),
        },
    };
    let mut progs = Vec::with_capacity(m.results.len());
    for r in &m.results {
        let mut p = Vec::new();
        if let Err(e) = compile(m, r, &mut p) {
            return Box::new(Failing(e));
        }
        progs.push(p);
    }
    Box::new(LayoutTransform { map: m.clone(), progs, pad })
}

/// `OP-layout_transform`: `x`'s element at index `i` moved to `index_map(i)`; the
/// other positions hold `pad_value` (converted as `astype` converts). `OpError`: a
/// rank other than the map's parameter count; a shape the map cannot take; an index
/// sent outside the result or two sent to one position; overflow; a pad value out of
/// the dtype's range.
struct LayoutTransform {
    map: IndexMap,
    progs: Vec<Vec<Instr>>,
    pad: f64,
}

impl Kernel for LayoutTransform {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the operand")?;
        let shape = x.shape();
        if shape.len() != self.map.params.len() {
            return Err(cx.error(format!(
                "the index map takes {} indices, but the operand has rank {}",
                self.map.params.len(),
                shape.len()
            )));
        }
        let dims: Vec<PrimExpr> = shape.iter().map(|&d| PrimExpr::int(d as i64)).collect();
        let extents = map_shape(&self.map, &dims).map_err(|e| cx.error(e))?;
        let out_shape = extents
            .iter()
            .map(|e| e.as_int().and_then(|v| u64::try_from(v).ok()))
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| cx.error("the result's shape overflows int64"))?;
        created(cx, &out_shape)?;
        with_num!(x.dtype(), T => {
            let fill = <T as Num>::from_f64(self.pad)
                .ok_or_else(|| cx.error(format!("pad_value: {} is out of the range of {}", self.pad, x.dtype())))?;
            self.scatter::<T>(cx, x, &out_shape, fill)
        })
    }
}

/// The row-major destination of input element `flat`, or [`BAD`].
fn destination(
    progs: &[Vec<Instr>],
    shape: &[u64],
    out_shape: &[u64],
    flat: usize,
    index: &mut [i64],
    stack: &mut Vec<i64>,
) -> u64 {
    let mut rest = flat as u64;
    for k in (0..shape.len()).rev() {
        index[k] = (rest % shape[k]) as i64;
        rest /= shape[k];
    }
    let mut o: u64 = 0;
    for (prog, &ext) in progs.iter().zip(out_shape) {
        match run(prog, index, stack) {
            Some(v) if v >= 0 && (v as u64) < ext => o = o * ext + v as u64,
            _ => return BAD,
        }
    }
    o
}

impl LayoutTransform {
    fn scatter<T: Num>(&self, cx: &KernelCx, x: &Tensor, out_shape: &[u64], fill: T) -> Result<Value> {
        let shape = x.shape().to_vec();
        let n_in = x.numel();
        let out = cx.alloc_for_overwrite(x.dtype(), out_shape)?;
        let n_out = out.numel();
        let mut dest = vec![0u64; n_in];
        let exec = Exec::of(cx);
        let progs = &self.progs;
        let threaded = parallel_chunks_mut(cx.threads_for(n_in), &mut dest, MIN_CHUNK, |start, part| {
            let mut index = vec![0i64; shape.len()];
            let mut stack = Vec::with_capacity(8);
            for (i, d) in part.iter_mut().enumerate() {
                *d = destination(progs, &shape, out_shape, start + i, &mut index, &mut stack);
            }
        });
        exec.record(n_in, threaded);
        let src = read::<T>(cx, x, "the operand")?;
        let mut dst = write::<T>(cx, &out)?;
        dst.fill(fill);
        let mut written = vec![0u64; n_out.div_ceil(64)];
        for (i, &o) in dest.iter().enumerate() {
            if o == BAD {
                return Err(cx.error(format!(
                    "input element {i} (row-major) maps outside the result of shape {out_shape:?}, \
                     or its index arithmetic overflows"
                )));
            }
            let (w, bit) = ((o / 64) as usize, 1u64 << (o % 64));
            if written[w] & bit != 0 {
                return Err(cx.error(format!("the index map is not injective: two input elements map to position {o}")));
            }
            written[w] |= bit;
            dst[o as usize] = src[i];
        }
        drop(dst);
        Ok(Value::tensor(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_division_and_modulo_round_toward_negative_infinity() {
        let prog = |op| vec![Instr::Param(0), Instr::Const(4), Instr::Bin(op)];
        let mut st = Vec::new();
        assert_eq!(run(&prog(PrimBinOp::FloorDiv), &[-1], &mut st), Some(-1));
        assert_eq!(run(&prog(PrimBinOp::FloorMod), &[-1], &mut st), Some(3));
        assert_eq!(run(&prog(PrimBinOp::Div), &[-1], &mut st), Some(0));
        assert_eq!(run(&prog(PrimBinOp::Mod), &[-5], &mut st), Some(-1));
        assert_eq!(run(&prog(PrimBinOp::FloorDiv), &[9], &mut st), Some(2));
    }

    #[test]
    fn overflow_and_division_by_zero_have_no_value() {
        let mut st = Vec::new();
        let mul = [Instr::Param(0), Instr::Const(i64::MAX), Instr::Bin(PrimBinOp::Mul)];
        assert_eq!(run(&mul, &[2], &mut st), None);
        let div = [Instr::Param(0), Instr::Const(0), Instr::Bin(PrimBinOp::FloorDiv)];
        assert_eq!(run(&div, &[2], &mut st), None);
        let fit = [Instr::Param(0), Instr::Fit(8, false)];
        assert_eq!(run(&fit, &[200], &mut st), None);
        assert_eq!(run(&fit, &[-128], &mut st), Some(-128));
    }
}
