//! `einsum`: a two-operand contraction whose reduced labels all belong to both operands
//! is a batched matrix product (operands packed into `[batch, m, k]` and `[batch, k,
//! n]`, multiplied by `linalg`'s products, the result scattered into the output's
//! order); any other equation runs as a strided loop nest, its output split across
//! threads.

use super::common::{created, layout_bug, operand, read, write};
use super::linalg::{gemm_f32, gemm_f64, gemm_in_order, Dims, Gemm};
use super::simd::pool;
use super::{Kernel, KernelCx, Lowering};
use crate::dtype::DType;
use crate::error::Result;
use crate::scalar::Num;
use crate::tensor::Tensor;
use crate::value::Value;
use crate::with_num;
use rayon::prelude::*;
use spec_model::grammar::AttrValue;
use std::rc::Rc;

/// An index variable: a letter, or the `j`-th dimension of the (broadcast) ellipsis.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Axis {
    Ellipsis(usize),
    Letter(u8),
}

/// One term: letters, with the position of its ellipsis if it has one.
#[derive(Clone, Debug, Default)]
struct Term {
    letters: Vec<u8>,
    ellipsis_at: Option<usize>,
}

/// The equation as the engine reads it.
#[derive(Debug)]
struct Spec {
    inputs: Vec<Term>,
    output: Term,
}

/// Reads `s`: `,`-separated input terms, optionally `->` and the output term, spaces
/// ignored; the implied output is the letters occurring once, in ASCII order, after the
/// ellipsis when an input has one.
fn read_spec(s: &str) -> std::result::Result<Spec, String> {
    let (lhs, rhs) = match s.find("->") {
        Some(i) => (&s[..i], Some(&s[i + 2..])),
        None => (s, None),
    };
    let term = |t: &str| -> std::result::Result<Term, String> {
        let mut out = Term::default();
        let mut rest = t.trim_matches(' ');
        while let Some(c) = rest.chars().next() {
            if c == ' ' {
                rest = &rest[1..];
            } else if let Some(after) = rest.strip_prefix("...") {
                if out.ellipsis_at.is_some() {
                    return Err("a term has more than one ellipsis `...`".into());
                }
                out.ellipsis_at = Some(out.letters.len());
                rest = after;
            } else if c.is_ascii_alphabetic() {
                out.letters.push(c as u8);
                rest = &rest[1..];
            } else {
                return Err(format!("invalid character {c:?} in the subscripts"));
            }
        }
        Ok(out)
    };
    let inputs = lhs.split(',').map(term).collect::<std::result::Result<Vec<_>, _>>()?;
    let output = match rhs {
        Some(r) if r.contains(',') || r.contains("->") => return Err("a malformed output term".into()),
        Some(r) => {
            let t = term(r)?;
            for (i, l) in t.letters.iter().enumerate() {
                if t.letters[..i].contains(l) || !inputs.iter().any(|u| u.letters.contains(l)) {
                    return Err(format!("output label '{}' repeated or in no input", *l as char));
                }
            }
            t
        }
        None => {
            let mut count = [0u32; 128];
            inputs.iter().flat_map(|t| &t.letters).for_each(|&l| count[l as usize] += 1);
            let letters = (0u8..128).filter(|&l| count[l as usize] == 1).collect();
            Term { letters, ellipsis_at: inputs.iter().any(|t| t.ellipsis_at.is_some()).then_some(0) }
        }
    };
    Ok(Spec { inputs, output })
}

/// OP-einsum (the semantics: `proofs-notes/operator-semantics.md`): the output's
/// variables in order, the reduced ones (ellipsis dimensions, then letters in ASCII
/// order) summed from 0 in row-major order, products left to right; integer arithmetic
/// wraps. The matrix-product path sums in the same order (in-order products for
/// integers, float16 and non-finite or huge floats; `matrixmultiply`'s reassociated
/// sums otherwise, F-8).
pub fn einsum(l: &Lowering) -> Box<dyn Kernel> {
    let spec = match l.attrs.get("subscripts") {
        Some(AttrValue::Str(s)) => read_spec(s).map_err(|m| format!("subscripts {s:?}: {m}")),
        _ => Err("needs the string attribute `subscripts`".to_string()),
    };
    Box::new(Einsum { spec })
}

struct Einsum {
    spec: std::result::Result<Spec, String>,
}

/// The variables, extents and per-operand strides of one call.
struct Layout {
    out: Vec<Axis>,
    red: Vec<Axis>,
    out_shape: Vec<u64>,
    red_shape: Vec<usize>,
    /// Per operand: its stride along each output variable, then each reduced one.
    strides: Vec<Vec<isize>>,
    /// Per operand: which variables its term names.
    uses: Vec<Vec<Axis>>,
}

fn axes_of(t: &Term, rank: usize, ell: usize) -> Option<Vec<Axis>> {
    let span = rank.checked_sub(t.letters.len())?;
    if t.ellipsis_at.is_none() && span != 0 {
        return None;
    }
    let mut out: Vec<Axis> = t.letters.iter().map(|&c| Axis::Letter(c)).collect();
    if let Some(at) = t.ellipsis_at {
        let e = (ell.checked_sub(span)?..ell).map(Axis::Ellipsis);
        out.splice(at..at, e);
    }
    Some(out)
}

fn layout(spec: &Spec, shapes: &[&[u64]]) -> std::result::Result<Layout, String> {
    if spec.inputs.len() != shapes.len() {
        return Err(format!("{} input term(s) for {} operand(s)", spec.inputs.len(), shapes.len()));
    }
    // The ellipsis shape: the operands' ellipsis dimensions broadcast from the right.
    let mut ell: Vec<u64> = Vec::new();
    for (t, s) in spec.inputs.iter().zip(shapes) {
        let (Some(at), Some(span)) = (t.ellipsis_at, s.len().checked_sub(t.letters.len())) else { continue };
        let part = &s[at..at + span];
        if part.len() > ell.len() {
            ell.splice(0..0, std::iter::repeat_n(1, part.len() - ell.len()));
        }
        let off = ell.len() - part.len();
        for (e, &d) in ell[off..].iter_mut().zip(part) {
            match (*e, d) {
                (a, b) if a == b || b == 1 => {}
                (1, b) => *e = b,
                (a, b) => return Err(format!("ellipsis dimensions {a} and {b} do not broadcast")),
            }
        }
    }
    let mut extent = [None::<u64>; 128];
    let mut uses = Vec::with_capacity(shapes.len());
    for (k, (t, s)) in spec.inputs.iter().zip(shapes).enumerate() {
        let axes = axes_of(t, s.len(), ell.len())
            .ok_or_else(|| format!("operand {k} of rank {} does not fit its term", s.len()))?;
        for (i, (a, &d)) in axes.iter().zip(s.iter()).enumerate() {
            let Axis::Letter(c) = *a else { continue };
            if let Some(j) = axes[..i].iter().position(|b| b == a) {
                if s[j] != d {
                    return Err(format!("the diagonal '{}' of operand {k}: {} and {d}", c as char, s[j]));
                }
            }
            let e = &mut extent[c as usize];
            *e = match *e {
                None => Some(d),
                Some(x) if x == d || d == 1 => Some(x),
                Some(1) => Some(d),
                Some(x) => return Err(format!("label '{}' has dimensions {x} and {d}", c as char)),
            };
        }
        uses.push(axes);
    }
    let size = |a: Axis| match a {
        Axis::Letter(c) => extent[c as usize].unwrap_or(1),
        Axis::Ellipsis(j) => ell[j],
    };
    let expand = |t: &Term| -> Vec<Axis> {
        let mut v: Vec<Axis> = t.letters.iter().map(|&c| Axis::Letter(c)).collect();
        if let Some(at) = t.ellipsis_at {
            v.splice(at..at, (0..ell.len()).map(Axis::Ellipsis));
        }
        v
    };
    let out = expand(&spec.output);
    let mut red: Vec<Axis> = uses.iter().flatten().copied().filter(|a| !out.contains(a)).collect();
    red.sort();
    red.dedup();
    let all: Vec<Axis> = out.iter().chain(&red).copied().collect();
    let strides = uses
        .iter()
        .zip(shapes)
        .map(|(axes, s)| {
            let mut st = vec![0isize; all.len()];
            let mut step = 1isize;
            for (a, &d) in axes.iter().zip(s.iter()).rev() {
                if !(d == 1 && size(*a) != 1) {
                    if let Some(i) = all.iter().position(|b| b == a) {
                        st[i] = st[i].wrapping_add(step);
                    }
                }
                step = step.wrapping_mul(d as isize);
            }
            st
        })
        .collect();
    Ok(Layout {
        out_shape: out.iter().map(|&a| size(a)).collect(),
        red_shape: red.iter().map(|&a| size(a) as usize).collect(),
        out,
        red,
        strides,
        uses,
    })
}

impl Einsum {
    /// The operands (a tuple of tensors of one dtype) and the layout, every `OpError`
    /// of the call found before anything is allocated.
    fn prepare<'v>(&self, cx: &KernelCx, args: &'v [Value]) -> Result<(Vec<&'v Rc<Tensor>>, Layout)> {
        cx.arity(args, 1)?;
        let Value::Tuple(fields) = &args[0] else {
            return Err(cx.error(format!("the argument must be a tuple of tensors, got {}", args[0].kind())));
        };
        let ts =
            (0..fields.len()).map(|i| operand(cx, fields, i, &format!("operand {i}"))).collect::<Result<Vec<_>>>()?;
        let Some(first) = ts.first() else { return Err(cx.error("needs at least one operand")) };
        if let Some(t) = ts.iter().find(|t| t.dtype() != first.dtype()) {
            return Err(cx.error(format!("operands of dtypes {} and {}", first.dtype(), t.dtype())));
        }
        let spec = self.spec.as_ref().map_err(|m| cx.error(m.clone()))?;
        let shapes: Vec<&[u64]> = ts.iter().map(|t| t.shape()).collect();
        let lay = layout(spec, &shapes).map_err(|m| cx.error(m))?;
        Ok((ts, lay))
    }
}

impl Kernel for Einsum {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        let (ts, lay) = self.prepare(cx, args)?;
        let n = created(cx, &lay.out_shape)?;
        let dtype = ts[0].dtype();
        let out = cx.alloc_for_overwrite(dtype, &lay.out_shape)?;
        if n > 0 {
            match matmul_plan(&lay, ts.len()) {
                Some(mp) => match dtype {
                    DType::F32 => by_gemm::<f32>(cx, &ts, &lay, &mp, &out, gemm_f32)?,
                    DType::F64 => by_gemm::<f64>(cx, &ts, &lay, &mp, &out, gemm_f64)?,
                    _ => with_num!(dtype, T => by_gemm::<T>(cx, &ts, &lay, &mp, &out, gemm_in_order::<T>))?,
                },
                None => with_num!(dtype, T => nest::<T>(cx, &ts, &lay, &out))?,
            }
        }
        Ok(Value::tensor(out))
    }

    fn work(&self, args: &[Value]) -> Option<u64> {
        let [Value::Tuple(fields)] = args else { return None };
        let shapes: Vec<&[u64]> = fields
            .iter()
            .map(|f| match f {
                Value::Tensor(t) => Some(t.shape()),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let lay = layout(self.spec.as_ref().ok()?, &shapes).ok()?;
        let red = lay.red_shape.iter().fold(1u64, |a, &d| a.saturating_mul(d as u64));
        let out = lay.out_shape.iter().fold(1u64, |a, &d| a.saturating_mul(d));
        Some(out.saturating_mul(red).saturating_mul(shapes.len() as u64))
    }
}

/// The general loop nest: each output element's sum over the reduced variables in
/// row-major order, the output split in contiguous blocks across threads.
fn nest<T: Num>(cx: &KernelCx, ts: &[&Rc<Tensor>], lay: &Layout, out: &Tensor) -> Result<()> {
    let xs = ts.iter().map(|t| read::<T>(cx, t, "an operand")).collect::<Result<Vec<_>>>()?;
    let xs: Vec<&[T]> = xs.iter().map(|x| &**x).collect();
    let mut guard = write::<T>(cx, out)?;
    let o: &mut [T] = &mut guard;
    let no = lay.out.len();
    let ok = std::sync::atomic::AtomicBool::new(true);
    let block = |(b, chunk): (usize, &mut [T])| {
        if !fill_block(&xs, lay, no, b * BLOCK, chunk) {
            ok.store(false, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let threads = cx.threads_for(o.len());
    match (threads > 1 && o.len() > BLOCK).then(|| pool(threads)).flatten() {
        Some(p) => p.install(|| o.par_chunks_mut(BLOCK).enumerate().for_each(block)),
        None => o.chunks_mut(BLOCK).enumerate().for_each(block),
    }
    if ok.load(std::sync::atomic::Ordering::Relaxed) {
        Ok(())
    } else {
        Err(layout_bug(cx))
    }
}

/// Output elements per block of the loop nest.
const BLOCK: usize = 256;

/// The output elements `start..start + chunk.len()`; false when an offset left an operand.
fn fill_block<T: Num>(xs: &[&[T]], lay: &Layout, no: usize, start: usize, chunk: &mut [T]) -> bool {
    // The output index of `start`, in mixed radix.
    let mut idx = vec![0usize; no];
    let mut rem = start;
    for d in (0..no).rev() {
        let n = lay.out_shape[d] as usize;
        idx[d] = rem % n;
        rem /= n;
    }
    let nr = lay.red.len();
    let red_total = lay.red_shape.iter().fold(1usize, |a, &d| a.saturating_mul(d));
    let mut base = vec![0isize; xs.len()];
    let mut ridx = vec![0usize; nr];
    let mut at = vec![0isize; xs.len()];
    for slot in chunk.iter_mut() {
        for (b, st) in base.iter_mut().zip(&lay.strides) {
            *b = idx.iter().zip(st).fold(0isize, |acc, (&i, &s)| acc.wrapping_add((i as isize).wrapping_mul(s)));
        }
        let product = |at: &[isize]| -> Option<T> {
            let mut p = *xs[0].get(usize::try_from(at[0]).ok()?)?;
            for (x, &a) in xs.iter().zip(at).skip(1) {
                p = p.mul(*x.get(usize::try_from(a).ok()?)?);
            }
            Some(p)
        };
        let value = if nr == 0 {
            product(&base)
        } else {
            ridx.fill(0);
            at.copy_from_slice(&base);
            let mut acc = T::ZERO;
            let mut good = true;
            for _ in 0..red_total {
                match product(&at) {
                    Some(p) => acc = acc.add(p),
                    None => good = false,
                }
                // The next reduced index (odometer), the offsets moved with it.
                for d in (0..nr).rev() {
                    ridx[d] += 1;
                    for (a, st) in at.iter_mut().zip(&lay.strides) {
                        *a = a.wrapping_add(st[no + d]);
                    }
                    if ridx[d] < lay.red_shape[d] {
                        break;
                    }
                    for (a, st) in at.iter_mut().zip(&lay.strides) {
                        *a = a.wrapping_sub(st[no + d].wrapping_mul(lay.red_shape[d] as isize));
                    }
                    ridx[d] = 0;
                }
            }
            good.then_some(acc)
        };
        match value {
            Some(v) => *slot = v,
            None => return false,
        }
        for d in (0..no).rev() {
            idx[d] += 1;
            if idx[d] < lay.out_shape[d] as usize {
                break;
            }
            idx[d] = 0;
        }
    }
    true
}

/// How a two-operand contraction is a batched matrix product: the output variables
/// shared by both operands (batch), those of the first only (rows) and of the second
/// only (columns); the reduced variables, all in both operands, are the inner dimension.
struct MatmulPlan {
    batch: Vec<usize>,
    rows: Vec<usize>,
    cols: Vec<usize>,
}

fn matmul_plan(lay: &Layout, operands: usize) -> Option<MatmulPlan> {
    if operands != 2 || lay.red.is_empty() || !lay.red.iter().all(|a| lay.uses.iter().all(|u| u.contains(a))) {
        return None;
    }
    let (mut batch, mut rows, mut cols) = (Vec::new(), Vec::new(), Vec::new());
    for (i, a) in lay.out.iter().enumerate() {
        match (lay.uses[0].contains(a), lay.uses[1].contains(a)) {
            (true, true) => batch.push(i),
            (true, false) => rows.push(i),
            _ => cols.push(i),
        }
    }
    Some(MatmulPlan { batch, rows, cols })
}

/// Copies the elements of `x` at `base + Σ idx_d · strides_d` over `dims` (row-major)
/// into `dst`; false when an offset leaves `x`.
fn gather<T: Copy>(x: &[T], dims: &[usize], strides: &[isize], dst: &mut [T]) -> bool {
    let mut idx = vec![0usize; dims.len()];
    let mut at = 0isize;
    for slot in dst.iter_mut() {
        match usize::try_from(at).ok().and_then(|a| x.get(a)) {
            Some(v) => *slot = *v,
            None => return false,
        }
        for d in (0..dims.len()).rev() {
            idx[d] += 1;
            at = at.wrapping_add(strides[d]);
            if idx[d] < dims[d] {
                break;
            }
            at = at.wrapping_sub(strides[d].wrapping_mul(dims[d] as isize));
            idx[d] = 0;
        }
    }
    true
}

/// The matrix-product path: `A` packed as `[batch, rows, k]`, `B` as `[batch, k, cols]`
/// (the reduced variables, in their order, form `k`), one product per batch, the
/// `[batch, rows, cols]` result scattered to the output's order.
fn by_gemm<T: Num>(
    cx: &KernelCx,
    ts: &[&Rc<Tensor>],
    lay: &Layout,
    mp: &MatmulPlan,
    out: &Tensor,
    gemm: Gemm<T>,
) -> Result<()> {
    let ext = |ix: &[usize]| -> Vec<usize> { ix.iter().map(|&i| lay.out_shape[i] as usize).collect() };
    let (bd, rd, cd) = (ext(&mp.batch), ext(&mp.rows), ext(&mp.cols));
    let size = |ds: &[usize]| ds.iter().fold(1usize, |a, &d| a.saturating_mul(d));
    let (nb, n, m, k) = (size(&bd), size(&rd), size(&cd), size(&lay.red_shape));
    let no = lay.out.len();
    let pick = |op: usize, ix: &[usize]| -> Vec<isize> { ix.iter().map(|&i| lay.strides[op][i]).collect() };
    let red = |op: usize| -> Vec<isize> { lay.strides[op][no..].to_vec() };
    // Sizes saturate: a product past memory is refused by the budget.
    let scratch = |a: usize, b: usize| cx.alloc_for_overwrite(T::DTYPE, &[nb as u64, a as u64, b as u64]);
    let (pa, pb, pc) = (scratch(n, k)?, scratch(k, m)?, cx.alloc(T::DTYPE, &[nb as u64, n as u64, m as u64])?);
    {
        let (x, y) = (read::<T>(cx, ts[0], "operand 0")?, read::<T>(cx, ts[1], "operand 1")?);
        let (mut a, mut b) = (write::<T>(cx, &pa)?, write::<T>(cx, &pb)?);
        let a_dims: Vec<usize> = bd.iter().chain(&rd).copied().chain(lay.red_shape.iter().copied()).collect();
        let a_st: Vec<isize> = pick(0, &mp.batch).into_iter().chain(pick(0, &mp.rows)).chain(red(0)).collect();
        let b_dims: Vec<usize> =
            bd.iter().copied().chain(lay.red_shape.iter().copied()).chain(cd.iter().copied()).collect();
        let b_st: Vec<isize> = pick(1, &mp.batch).into_iter().chain(red(1)).chain(pick(1, &mp.cols)).collect();
        if !gather(&x, &a_dims, &a_st, &mut a) || !gather(&y, &b_dims, &b_st, &mut b) {
            return Err(layout_bug(cx));
        }
        let mut c = write::<T>(cx, &pc)?;
        if k > 0 && n > 0 && m > 0 {
            let threads = cx.threads_for(n.saturating_mul(m).saturating_mul(k));
            for ((am, bm), cm) in a.chunks_exact(n * k).zip(b.chunks_exact(k * m)).zip(c.chunks_exact_mut(n * m)) {
                gemm(am, bm, cm, Dims { n, k, m }, threads);
            }
        }
    }
    // Scatter: output element at (batch, row, col) positions of its variables.
    let c = read::<T>(cx, &pc, "the product")?;
    let mut o = write::<T>(cx, out)?;
    let mut pos = vec![0usize; no];
    for (d, &i) in mp.batch.iter().chain(&mp.rows).chain(&mp.cols).enumerate() {
        pos[i] = d;
    }
    let cdims: Vec<usize> = bd.iter().chain(&rd).chain(&cd).copied().collect();
    let mut cst = vec![0isize; cdims.len()];
    let mut acc = 1isize;
    for d in (0..cdims.len()).rev() {
        cst[d] = acc;
        acc = acc.wrapping_mul(cdims[d] as isize);
    }
    let out_st: Vec<isize> = pos.iter().map(|&p| cst[p]).collect();
    let odims: Vec<usize> = lay.out_shape.iter().map(|&d| d as usize).collect();
    if !gather(&c, &odims, &out_st, &mut o) {
        return Err(layout_bug(cx));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::run_standalone;
    use crate::Memory;
    use spec_model::grammar::Attrs;
    use spec_model::ops::Op;

    fn run(s: &str, xs: Vec<(Vec<u64>, Vec<f32>)>) -> Result<(Vec<u64>, Vec<f64>)> {
        let mem = Memory::new(1 << 24);
        let mut attrs = Attrs::default();
        attrs.insert("subscripts", AttrValue::Str(s.into()));
        let fields: Vec<Value> =
            xs.iter().map(|(sh, v)| Value::tensor(Tensor::from_slice(DType::F32, sh, v, &mem).unwrap())).collect();
        let Value::Tensor(r) = run_standalone(Op::Einsum, &attrs, &[Value::tuple(fields)], &mem).unwrap()? else {
            panic!()
        };
        Ok((r.shape().to_vec(), (0..r.numel()).map(|i| r.get_f64(i).unwrap()).collect()))
    }

    #[test]
    fn matrix_products_and_loop_nests() {
        let a = (vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let b = (vec![3, 2], vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        assert_eq!(run("ij,jk->ik", vec![a.clone(), b.clone()]).unwrap(), (vec![2, 2], vec![4.0, 5.0, 10.0, 11.0]));
        assert_eq!(run("ij,jk->ki", vec![a.clone(), b.clone()]).unwrap(), (vec![2, 2], vec![4.0, 10.0, 5.0, 11.0]));
        assert_eq!(run("ij,kj", vec![a.clone(), a.clone()]).unwrap().1, vec![14.0, 32.0, 32.0, 77.0]);
        assert_eq!(run("ij->j", vec![a.clone()]).unwrap().1, vec![5.0, 7.0, 9.0]);
        assert_eq!(run("ij", vec![a.clone()]).unwrap().1, a.1.iter().map(|&x| x as f64).collect::<Vec<_>>());
        let sq = (vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(run("ii", vec![sq.clone()]).unwrap(), (vec![], vec![5.0]));
        assert_eq!(run("ii->i", vec![sq.clone()]).unwrap().1, vec![1.0, 4.0]);
        // Batched, with a broadcast batch (1 against 2) and ellipses.
        let x = (vec![2, 1, 2], vec![1.0, 2.0, 3.0, 4.0]);
        let y = (vec![1, 2, 1], vec![1.0, 1.0]);
        assert_eq!(run("bij,bjk->bik", vec![x.clone(), y.clone()]).unwrap(), (vec![2, 1, 1], vec![3.0, 7.0]));
        assert_eq!(run("...ij,...jk", vec![x, y]).unwrap(), (vec![2, 1, 1], vec![3.0, 7.0]));
        // k = 0: every sum is 0.
        let e = (vec![2, 0], vec![]);
        let f = (vec![0, 3], vec![]);
        assert_eq!(run("ij,jk->ik", vec![e, f]).unwrap(), (vec![2, 3], vec![0.0; 6]));
    }

    #[test]
    fn huge_results_meet_the_budget() {
        let long = (vec![1 << 17], vec![1.0f32; 1 << 17]);
        let e = run("i,j", vec![long.clone(), long]).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::MemoryExhausted);
    }

    #[test]
    fn errors() {
        let a = (vec![2, 3], vec![0.0; 6]);
        for bad in ["ii", "i", "ij,jk", "i.j", "ij->ii", "ij->k", "i->i->i"] {
            let xs = if bad == "ij,jk" { vec![a.clone(), a.clone()] } else { vec![a.clone()] };
            let e = run(bad, xs).unwrap_err();
            assert_eq!((e.kind, e.rule), (crate::ErrorKind::OpError, "OP-einsum"), "{bad}");
        }
    }
}
