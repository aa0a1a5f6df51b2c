//! `einsum`: the Einstein summation of a tuple of tensors, as a plain loop nest.

use super::broadcast::{broadcast_shapes, element_count, strides};
use super::elem::{map_data, Elem, Storage};
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, Value};
use spec_model::grammar::{AttrValue, NDArray};
use spec_model::ops::{Equation, ELLIPSIS};
use std::cell::Ref;

/// The index variables of one call: the output's dimensions (in order) and the
/// reduced ones (ellipsis dimensions first, then the reduced letters in ASCII order),
/// with each operand's offset step per variable.
struct Plan {
    out_shape: Vec<u64>,
    red_shape: Vec<u64>,
    /// Per operand: the offset step of each output variable, then of each reduced one
    /// (0 where the operand does not use it or broadcasts it; the sum of the strides of
    /// a diagonal's dimensions).
    steps: Vec<Vec<i64>>,
}

/// The variables the dimensions of term `term` (of an operand of `rank` dimensions)
/// read: a letter's variable, or for the ellipsis' `j`-th dimension (of `span`) the
/// ellipsis variable `ell - span + j` (operands' ellipses align at the right).
fn term_vars(term: &[u8], rank: usize, ell: usize) -> Vec<Var> {
    let span = (rank + 1).saturating_sub(term.len());
    let mut out = Vec::with_capacity(rank);
    for &l in term {
        if l == ELLIPSIS {
            out.extend((0..span).map(|j| Var::Ellipsis(ell - span + j)));
        } else {
            out.push(Var::Letter(l));
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Var {
    Letter(u8),
    Ellipsis(usize),
}

/// Shapes and steps of `eq` over operands of `shapes` (errors as OP-einsum's run-time
/// checks: ranks, diagonals, broadcasting).
fn plan(cx: &Cx, eq: &Equation, shapes: &[Vec<u64>]) -> EvalResult<Plan> {
    if eq.inputs.len() != shapes.len() {
        return Err(cx.error(format!(
            "subscripts has {} input term(s) for {} operand(s)",
            eq.inputs.len(),
            shapes.len()
        )));
    }
    // Ranks, and each operand's ellipsis dimensions.
    let mut ellipses: Vec<&[u64]> = Vec::new();
    for (k, (term, s)) in eq.inputs.iter().zip(shapes).enumerate() {
        let letters = term.iter().filter(|&&l| l != ELLIPSIS).count();
        match term.iter().position(|&l| l == ELLIPSIS) {
            Some(at) if s.len() >= letters => ellipses.push(&s[at..at + s.len() - letters]),
            None if s.len() == letters => {}
            _ => {
                return Err(cx.error(format!(
                    "operand {k} has rank {} but its term {:?} names {letters} dimension(s)",
                    s.len(),
                    String::from_utf8_lossy(term)
                )))
            }
        }
    }
    let ell_shape = broadcast_shapes(&ellipses)
        .ok_or_else(|| cx.error(format!("the ellipsis dimensions {ellipses:?} do not broadcast")))?;
    let ell = ell_shape.len();
    // Each letter's extent: equal within an operand, equal or 1 across operands.
    let mut extent = [None::<u64>; 256];
    for (k, (term, s)) in eq.inputs.iter().zip(shapes).enumerate() {
        let vars = term_vars(term, s.len(), ell);
        let mut own = [None::<u64>; 256];
        for (v, &d) in vars.iter().zip(s) {
            let Var::Letter(l) = *v else { continue };
            let c = l as char;
            match own[l as usize] {
                Some(e) if e != d => {
                    return Err(cx.error(format!("the diagonal '{c}' of operand {k} has dimensions {e} and {d}")))
                }
                _ => own[l as usize] = Some(d),
            }
            extent[l as usize] = match extent[l as usize] {
                None => Some(d),
                Some(e) if e == d || d == 1 => Some(e),
                Some(1) => Some(d),
                Some(e) => {
                    return Err(cx.error(format!("label '{c}' has dimensions {e} and {d}, which do not broadcast")))
                }
            };
        }
    }
    let var_extent = |v: Var| match v {
        Var::Letter(l) => extent[l as usize].unwrap_or(1),
        Var::Ellipsis(j) => ell_shape[j],
    };
    let expand = |labels: &[u8]| -> Vec<Var> {
        labels
            .iter()
            .flat_map(|&l| if l == ELLIPSIS { (0..ell).map(Var::Ellipsis).collect() } else { vec![Var::Letter(l)] })
            .collect()
    };
    let out_vars = expand(&eq.output);
    let red_vars = expand(&eq.reduced());
    let all: Vec<Var> = out_vars.iter().chain(&red_vars).copied().collect();
    let mut steps = Vec::with_capacity(shapes.len());
    for (term, s) in eq.inputs.iter().zip(shapes) {
        let vars = term_vars(term, s.len(), ell);
        let st = strides(s);
        let mut step = vec![0i64; all.len()];
        for ((v, &d), &sd) in vars.iter().zip(s).zip(&st) {
            if d == 1 && var_extent(*v) != 1 {
                continue;
            }
            if let Some(i) = all.iter().position(|w| w == v) {
                step[i] = step[i].wrapping_add(sd);
            }
        }
        steps.push(step);
    }
    Ok(Plan {
        out_shape: out_vars.iter().map(|&v| var_extent(v)).collect(),
        red_shape: red_vars.iter().map(|&v| var_extent(v)).collect(),
        steps,
    })
}

/// The operands of a tuple argument, each a tensor.
fn operands<'v>(cx: &Cx, v: &'v Value) -> EvalResult<Vec<Ref<'v, NDArray>>> {
    match v {
        Value::Tuple(fs) => fs.iter().enumerate().map(|(i, f)| cx.tensor(f, &format!("operand {i}"))).collect(),
        _ => Err(cx.error(format!("the argument must be a tuple of tensors, got {}", v.kind()))),
    }
}

/// The equation of the call's `subscripts`.
fn equation(cx: &Cx) -> EvalResult<Equation> {
    match cx.attr("subscripts") {
        Some(AttrValue::Str(s)) => Equation::parse(s).map_err(|m| cx.error(format!("subscripts {s:?}: {m}"))),
        _ => Err(cx.error("needs the string attribute `subscripts`")),
    }
}

/// OP-einsum: `einsum(operands, subscripts)` over a tuple of tensors of one dtype (the
/// equation's grammar: `spec_model::ops::Equation`). With the output's variables
/// `o` and the reduced ones `r` (the input labels not in the output: the ellipsis'
/// dimensions first, then the letters in ASCII order, as TVM's reduction axes),
/// `out[o] = Σ_r x0[..] * x1[..] * …`: the products taken left to right, the sum
/// folded from 0 over `r` in row-major order; without reduced variables the product
/// itself. A label's index is the same in every dimension it names (a diagonal); a
/// dimension of 1 where the label's extent is larger reads index 0 (broadcast), and so
/// do the ellipses' dimensions, aligned at the right. Arithmetic in the dtype (integers
/// wrap, `bool` is `uint1`; floats rounded at each step).
/// Errors: not one tuple of tensors; an empty tuple; different dtypes; `subscripts`
/// missing or malformed; a term count other than the operand count; an operand's rank
/// other than its term's; a diagonal of different dimensions; dimensions of a label or
/// of the ellipses that do not broadcast.
pub(crate) fn einsum(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let ts = operands(cx, &args[0])?;
    let Some(first) = ts.first() else { return Err(cx.error("needs at least one operand")) };
    if let Some(t) = ts.iter().find(|t| t.dtype != first.dtype) {
        return Err(cx.error(format!("operands of dtypes {} and {}", first.dtype, t.dtype)));
    }
    let eq = equation(cx)?;
    let shapes: Vec<Vec<u64>> = ts.iter().map(|t| t.shape.clone()).collect();
    let plan = plan(cx, &eq, &shapes)?;
    let n = cx.numel(&plan.out_shape)?;
    let data = map_data!(&first.data, v => {
        let _ = v;
        match ts.iter().map(|t| Storage::slice(&t.data)).collect::<Option<Vec<_>>>() {
            Some(xs) => contract(&xs, &plan, n).unwrap_or_default(),
            None => Vec::new(),
        }
    });
    if data.len() != n {
        return Err(cx.error("operands of different storage, or an index outside an operand"));
    }
    Ok(tensor_value(first.dtype, plan.out_shape, data))
}

/// The loop nest: every output index in row-major order, and for each every reduced
/// index in row-major order (`None` if an offset left an operand: the plan's bug).
fn contract<T: Elem + Storage>(xs: &[&[T]], p: &Plan, n: usize) -> Option<Vec<T>> {
    let no = p.out_shape.len();
    let reduced = !p.red_shape.is_empty();
    let red_count = element_count(&p.red_shape).unwrap_or(0);
    let mut out = Vec::with_capacity(n);
    let mut oi = vec![0u64; no];
    for _ in 0..n {
        let base: Vec<i64> = p
            .steps
            .iter()
            .map(|st| oi.iter().zip(st).fold(0i64, |acc, (&i, &s)| acc.wrapping_add((i as i64).wrapping_mul(s))))
            .collect();
        let term = |ri: &[u64]| -> Option<T> {
            let mut prod: Option<T> = None;
            for ((x, st), b) in xs.iter().zip(&p.steps).zip(&base) {
                let off =
                    ri.iter().zip(&st[no..]).fold(*b, |acc, (&i, &s)| acc.wrapping_add((i as i64).wrapping_mul(s)));
                let e = *x.get(usize::try_from(off).ok()?)?;
                prod = Some(match prod {
                    None => e,
                    Some(q) => q.times(e),
                });
            }
            prod
        };
        if reduced {
            let mut ri = vec![0u64; p.red_shape.len()];
            let mut acc = T::zero();
            for _ in 0..red_count {
                acc = acc.plus(term(&ri)?);
                step(&mut ri, &p.red_shape);
            }
            out.push(acc);
        } else {
            out.push(term(&[])?);
        }
        step(&mut oi, &p.out_shape);
    }
    Some(out)
}

/// The next index in row-major order (wrapping to all zeros after the last).
fn step(idx: &mut [u64], shape: &[u64]) {
    for d in (0..idx.len()).rev() {
        idx[d] += 1;
        if idx[d] < shape[d] {
            return;
        }
        idx[d] = 0;
    }
}

/// LIMIT-fuel: the multiply-adds of a call (output elements × reduced index count ×
/// operands), when its operands and subscripts make sense (0 otherwise: the kernel
/// reports the error).
pub(crate) fn einsum_work(args: &[Value], subscripts: Option<&AttrValue>) -> u64 {
    let (Some(Value::Tuple(fs)), Some(AttrValue::Str(s))) = (args.first(), subscripts) else { return 0 };
    let Ok(eq) = Equation::parse(s) else { return 0 };
    let mut shapes = Vec::new();
    for f in fs.iter() {
        let Value::Tensor(t) = f else { return 0 };
        let Ok(t) = t.try_borrow() else { return 0 };
        shapes.push(t.shape.clone());
    }
    let attrs = spec_model::grammar::Attrs::default();
    let cx = Cx::new(spec_model::ops::Op::Einsum, &attrs, spec_model::Span::SYNTHETIC);
    let Ok(p) = plan(&cx, &eq, &shapes) else { return 0 };
    let out = element_count(&p.out_shape).unwrap_or(u64::MAX);
    let red = element_count(&p.red_shape).unwrap_or(u64::MAX);
    out.saturating_mul(red).saturating_mul(shapes.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec_model::grammar::{Attrs, DataType, TensorData};
    use spec_model::ops::Op;
    use spec_model::Span;

    fn f64s(shape: &[u64], v: &[f64]) -> Value {
        Value::tensor(NDArray { dtype: DataType::float(64), shape: shape.to_vec(), data: TensorData::F64(v.to_vec()) })
    }

    fn run(s: &str, xs: Vec<Value>) -> EvalResult<(Vec<u64>, TensorData)> {
        let mut attrs = Attrs::default();
        attrs.insert("subscripts", AttrValue::Str(s.into()));
        let v = einsum(&Cx::new(Op::Einsum, &attrs, Span::SYNTHETIC), &[Value::Tuple(std::rc::Rc::new(xs))])?;
        let Value::Tensor(t) = v else { panic!("not a tensor") };
        let t = t.borrow();
        Ok((t.shape.clone(), t.data.clone()))
    }

    #[test]
    fn matmul_trace_diagonal_outer() {
        let a = f64s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(
            run("ij,jk->ik", vec![a.clone(), a.clone()]).unwrap().1,
            TensorData::F64(vec![7.0, 10.0, 15.0, 22.0])
        );
        assert_eq!(run("ii", vec![a.clone()]).unwrap(), (vec![], TensorData::F64(vec![5.0])));
        assert_eq!(run("ii->i", vec![a.clone()]).unwrap().1, TensorData::F64(vec![1.0, 4.0]));
        assert_eq!(run("ji", vec![a.clone()]).unwrap().1, TensorData::F64(vec![1.0, 3.0, 2.0, 4.0]));
        let v = f64s(&[2], &[1.0, 2.0]);
        assert_eq!(run("i,j", vec![v.clone(), v.clone()]).unwrap().1, TensorData::F64(vec![1.0, 2.0, 2.0, 4.0]));
        // Broadcasting a label of 1 and the ellipses.
        let one = f64s(&[1], &[3.0]);
        assert_eq!(run("i,i->i", vec![v.clone(), one]).unwrap().1, TensorData::F64(vec![3.0, 6.0]));
        let (s, d) = run("...i,i->...", vec![f64s(&[3, 1, 2], &[1.0; 6]), v.clone()]).unwrap();
        assert_eq!((s, d), (vec![3, 1], TensorData::F64(vec![3.0; 3])));
        // The ellipsis summed when the output leaves it out (TVM).
        assert_eq!(run("...i->i", vec![a.clone()]).unwrap().1, TensorData::F64(vec![4.0, 6.0]));
    }

    #[test]
    fn empty_and_errors() {
        let e = f64s(&[0, 3], &[]);
        assert_eq!(run("ij->j", vec![e.clone()]).unwrap(), (vec![3], TensorData::F64(vec![0.0; 3])));
        assert_eq!(run("ij->i", vec![e.clone()]).unwrap(), (vec![0], TensorData::F64(vec![])));
        let a = f64s(&[2, 3], &[0.0; 6]);
        assert!(run("ii", vec![a.clone()]).is_err(), "a diagonal of 2 and 3");
        assert!(run("i", vec![a.clone()]).is_err(), "rank");
        assert!(run("ij,jk", vec![a.clone(), a.clone()]).is_err(), "3 and 2 do not broadcast");
        assert!(run("ij", vec![a.clone(), a.clone()]).is_err(), "one term, two operands");
        assert!(run("i.j", vec![a.clone()]).is_err());
        assert!(run("ij", vec![]).is_err());
        // An outer product of two 2^17-element vectors (2^34 elements) meets the budget.
        let long = f64s(&[1 << 17], &vec![1.0; 1 << 17]);
        let e = run("i,j", vec![long.clone(), long]).unwrap_err();
        assert_eq!(e.kind, crate::eval::value::ErrorKind::MemoryExhausted);
        let i = Value::tensor(NDArray { dtype: DataType::INT32, shape: vec![2], data: TensorData::I32(vec![1, 2]) });
        assert!(run("i,i", vec![f64s(&[2], &[1.0, 2.0]), i]).is_err(), "dtypes");
    }

    #[test]
    fn integers_wrap_and_nan_propagates() {
        let i8s =
            Value::tensor(NDArray { dtype: DataType::int(8), shape: vec![2], data: TensorData::I8(vec![100, 100]) });
        let two = Value::tensor(NDArray { dtype: DataType::int(8), shape: vec![2], data: TensorData::I8(vec![2, 2]) });
        assert_eq!(run("i,i", vec![i8s, two]).unwrap().1, TensorData::I8(vec![-112]));
        let (_, d) = run("i->", vec![f64s(&[2], &[f64::NAN, 1.0])]).unwrap();
        assert!(matches!(d, TensorData::F64(v) if v[0].is_nan()));
    }
}
