//! Sorting: `sort`, `argsort`, `topk`. Each line along the axis is put in order by a
//! stable sort of its positions (ties keep their order), under [`order`]: the dtype's
//! order with NaN above every number and equal to every NaN, and `-0.0` equal to `0.0`.
//! Descending is the same stable sort under the reversed comparison, so ties still keep
//! their order and NaN comes first.

use super::elem::Elem;
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, Value};
use spec_model::grammar::{AttrValue, DataType, NDArray, Scalar, TensorData};
use std::cmp::Ordering;
use std::rc::Rc;

/// OP-sort's order of two elements: NaN is above every other value and equal to NaN;
/// otherwise the dtype's order (`false < true`; `-0.0 == 0.0`).
pub(crate) fn order<T: Elem>(a: T, b: T) -> Ordering {
    let nan = |x: T| x.partial_cmp(&x).is_none();
    match (nan(a), nan(b)) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// The layout of the lines along one axis: `outer` blocks of `len` rows of `inner`
/// elements; line `(o, i)` starts at `o * len * inner + i` and steps by `inner`.
struct Lines {
    outer: usize,
    len: usize,
    inner: usize,
}

impl Lines {
    fn of(shape: &[u64], axis: usize) -> Lines {
        // Saturating: an empty tensor may have huge dimensions (its lines are never walked).
        let prod =
            |ds: &[u64]| ds.iter().fold(1usize, |n, &d| n.saturating_mul(usize::try_from(d).unwrap_or(usize::MAX)));
        let len = usize::try_from(shape[axis]).unwrap_or(usize::MAX);
        Lines { outer: prod(&shape[..axis]), len, inner: prod(&shape[axis + 1..]) }
    }
}

/// For each line of `a` along `axis` (in row-major order of the lines), the positions
/// along the axis in sorted order (stable; `descending` reverses the comparison).
fn permutations(a: &NDArray, lines: &Lines, descending: bool) -> Vec<Vec<usize>> {
    fn run<T: Elem>(v: &[T], l: &Lines, descending: bool) -> Vec<Vec<usize>> {
        if v.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(l.outer * l.inner);
        for o in 0..l.outer {
            for i in 0..l.inner {
                let at = |p: usize| v[o * l.len * l.inner + p * l.inner + i];
                let mut perm: Vec<usize> = (0..l.len).collect();
                // `sort_by` is a stable sort.
                perm.sort_by(|&p, &q| if descending { order(at(q), at(p)) } else { order(at(p), at(q)) });
                out.push(perm);
            }
        }
        out
    }
    macro_rules! each {
        ($($var:ident),*) => {
            match &a.data {
                $(TensorData::$var(v) => run(v, lines, descending),)*
            }
        };
    }
    each!(Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64)
}

/// The sorted axis (`axis`, default -1) of `a`.
fn sort_axis(cx: &Cx, a: &NDArray) -> EvalResult<usize> {
    cx.axis(cx.attr_int("axis", -1)?, a.ndim())
}

/// The index dtype (`dtype`, default `int32`): an integer dtype that holds every
/// position of an axis of `len` elements.
fn index_dtype(cx: &Cx, len: usize) -> EvalResult<DataType> {
    let dt = cx.attr_dtype("dtype")?.unwrap_or(DataType::INT32);
    if !(dt.is_int() || dt.is_uint()) || dt.is_bool() || TensorData::empty(dt).is_none() {
        return Err(cx.error(format!("the index dtype must be an integer dtype, not {dt}")));
    }
    if len > 0 && !dt.fits(len as i128 - 1) {
        return Err(cx.error(format!("positions up to {} do not fit the index dtype {dt}", len - 1)));
    }
    Ok(dt)
}

/// The first `k` of each permutation laid out as a tensor of `a`'s shape with the
/// axis `k` long: the values (`a`'s dtype) and the positions (`dt`).
fn gather_lines(
    cx: &Cx,
    a: &NDArray,
    lines: &Lines,
    perms: &[Vec<usize>],
    k: usize,
    axis: usize,
    dt: DataType,
) -> EvalResult<(Value, Value)> {
    let mut shape = a.shape.clone();
    shape[axis] = k as u64;
    let n = cx.numel(&shape)?;
    let mut values = cx.storage(a.dtype)?;
    let mut positions = cx.storage(dt)?;
    if n == 0 {
        return Ok((tensor_value(a.dtype, shape.clone(), values), tensor_value(dt, shape, positions)));
    }
    values.reserve(n);
    positions.reserve(n);
    // Output element (o, j, i) in row-major order: line (o, i)'s j-th position.
    for (o, block) in perms.chunks(lines.inner).enumerate() {
        for j in 0..k {
            for (i, perm) in block.iter().enumerate() {
                let p = perm[j];
                let s = a.data.get(o * lines.len * lines.inner + p * lines.inner + i);
                values.push(s).map_err(|m| cx.error(m))?;
                positions.push(Scalar::Int(p as i128)).map_err(|m| cx.error(m))?;
            }
        }
    }
    Ok((tensor_value(a.dtype, shape.clone(), values), tensor_value(dt, shape, positions)))
}

/// OP-sort: each line along `axis` (default -1) in stable ascending order under
/// [`order`] (`descending`: the reversed comparison, ties still in their order). The
/// elements move unchanged (`-0.0` stays `-0.0`, NaN keeps its payload). Errors: not a
/// tensor; `axis` out of range (rank 0 has no axis).
pub(crate) fn sort(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let axis = sort_axis(cx, &a)?;
    let desc = cx.attr_bool("descending", false)?;
    let lines = Lines::of(&a.shape, axis);
    let perms = permutations(&a, &lines, desc);
    Ok(gather_lines(cx, &a, &lines, &perms, lines.len, axis, DataType::INT64)?.0)
}

/// OP-argsort: the positions along `axis` (default -1) that put each line in OP-sort's
/// order, in `dtype` (default `int32`). Errors: not a tensor; `axis` out of range; an
/// index dtype that is not an integer dtype, or that cannot hold `len - 1`.
pub(crate) fn argsort(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "data")?;
    let axis = sort_axis(cx, &a)?;
    let desc = cx.attr_bool("descending", false)?;
    let lines = Lines::of(&a.shape, axis);
    let dt = index_dtype(cx, lines.len)?;
    let perms = permutations(&a, &lines, desc);
    Ok(gather_lines(cx, &a, &lines, &perms, lines.len, axis, dt)?.1)
}

/// OP-topk: the first `k` (default 1; `k < 1`: the whole axis) of each line along
/// `axis` (default -1) in OP-sort's order, descending when `largest` (default true), so
/// the largest first and, among equal ones, the earliest; with their positions in
/// `dtype` (default `int32`). `ret_type` `"both"` gives the tuple `(values, indices)`,
/// `"values"` or `"indices"` one of them. Errors: not a tensor; `axis` out of range;
/// `k` above the axis length; another `ret_type`; an index dtype as OP-argsort's.
pub(crate) fn topk(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "data")?;
    let axis = sort_axis(cx, &a)?;
    let largest = cx.attr_bool("largest", true)?;
    let ret = match cx.attr("ret_type") {
        None => "both".to_string(),
        Some(AttrValue::Str(s)) if matches!(s.as_str(), "both" | "values" | "indices") => s.clone(),
        Some(other) => {
            return Err(cx.error(format!("ret_type must be \"both\", \"values\" or \"indices\", not {other:?}")))
        }
    };
    let lines = Lines::of(&a.shape, axis);
    let dt = index_dtype(cx, lines.len)?;
    let k = cx.attr_int("k", 1)?;
    let k = if k < 1 { lines.len } else { k as usize };
    if k > lines.len {
        return Err(cx.error(format!("k = {k} is more than the length {} of axis {axis}", lines.len)));
    }
    let perms = permutations(&a, &lines, largest);
    let (values, indices) = gather_lines(cx, &a, &lines, &perms, k, axis, dt)?;
    Ok(match ret.as_str() {
        "values" => values,
        "indices" => indices,
        _ => Value::Tuple(Rc::new(vec![values, indices])),
    })
}

/// LIMIT-fuel: a sort's comparisons, `numel · ⌈log2 len⌉` for lines of `len` along the
/// sorted axis (at least the elements read); the engine charges the same.
pub(crate) fn sort_work(args: &[Value], attrs: &spec_model::grammar::Attrs) -> Option<u64> {
    let [Value::Tensor(a)] = args else { return None };
    let a = a.try_borrow().ok()?;
    let axis = match attrs.get("axis") {
        None | Some(AttrValue::None) => -1,
        Some(AttrValue::Int(i)) => *i,
        Some(_) => return None,
    };
    let r = a.shape.len() as i64;
    let axis = if axis < 0 { axis.checked_add(r)? } else { axis };
    let len = *a.shape.get(usize::try_from(axis).ok()?)?;
    let log = len.max(1).checked_next_power_of_two().map_or(64, |p| p.trailing_zeros() as u64);
    Some((a.data.len() as u64).saturating_mul(log))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec_model::grammar::Attrs;
    use spec_model::ops::Op;
    use spec_model::Span;

    fn run(op: Op, x: Value, attrs: &[(&str, AttrValue)]) -> EvalResult<Value> {
        let mut a = Attrs::default();
        attrs.iter().for_each(|(k, v)| a.insert(*k, v.clone()));
        crate::eval::ops::eval_op_standalone(op, &[x], &a, Span::SYNTHETIC)
    }

    fn f32s(v: &[f32], shape: &[u64]) -> Value {
        tensor_value(DataType::FLOAT32, shape.to_vec(), TensorData::F32(v.to_vec()))
    }

    fn data(v: &Value) -> TensorData {
        let Value::Tensor(t) = v else { panic!("a tensor") };
        t.borrow().data.clone()
    }

    fn bits(v: &Value) -> Vec<u32> {
        match data(v) {
            TensorData::F32(x) => x.iter().map(|f| f.to_bits()).collect(),
            other => panic!("float32, not {other:?}"),
        }
    }

    fn ints(v: &Value) -> Vec<i128> {
        let d = data(v);
        (0..d.len()).map(|i| if let Scalar::Int(x) = d.get(i) { x } else { panic!("an integer") }).collect()
    }

    #[test]
    fn stable_with_nan_last_ascending_and_first_descending() {
        let nan = f32::NAN;
        let x = f32s(&[3.0, nan, 1.0, -0.0, 1.0, 0.0, nan], &[7]);
        let s = run(Op::Sort, x.clone(), &[]).unwrap();
        // -0.0 and 0.0 are equal: they keep their order (the -0.0 at 3 before the 0.0 at 5).
        assert_eq!(bits(&s), [-0.0f32, 0.0, 1.0, 1.0, 3.0, nan, nan].map(f32::to_bits));
        let a = run(Op::Argsort, x.clone(), &[]).unwrap();
        assert_eq!(ints(&a), [3, 5, 2, 4, 0, 1, 6]);
        let d = run(Op::Argsort, x.clone(), &[("descending", AttrValue::Bool(true))]).unwrap();
        assert_eq!(ints(&d), [1, 6, 0, 2, 4, 3, 5]);
        let t = run(Op::Topk, x, &[("k", AttrValue::Int(3)), ("largest", AttrValue::Bool(false))]).unwrap();
        let Value::Tuple(fs) = t else { panic!("a tuple") };
        assert_eq!(ints(&fs[1]), [3, 5, 2]);
    }

    #[test]
    fn lines_along_a_middle_axis_and_k() {
        // shape (2, 3, 2), sorted along axis 1.
        let v: Vec<f32> = vec![5.0, 0.0, 1.0, 2.0, 3.0, 1.0, 0.0, 9.0, 0.0, 8.0, -1.0, 7.0];
        let x = f32s(&v, &[2, 3, 2]);
        let s = run(Op::Sort, x.clone(), &[("axis", AttrValue::Int(1))]).unwrap();
        assert_eq!(bits(&s), [1.0f32, 0.0, 3.0, 1.0, 5.0, 2.0, -1.0, 7.0, 0.0, 8.0, 0.0, 9.0].map(f32::to_bits));
        let t = run(Op::Topk, x.clone(), &[("axis", AttrValue::Int(-2)), ("k", AttrValue::Int(2))]).unwrap();
        let Value::Tuple(fs) = t else { panic!("a tuple") };
        assert_eq!(ints(&fs[1]), [0, 1, 2, 2, 0, 0, 1, 1]);
        let all = run(Op::Topk, x.clone(), &[("k", AttrValue::Int(0)), ("ret_type", AttrValue::Str("values".into()))]);
        assert_eq!(
            bits(&all.unwrap()),
            [5.0f32, 0.0, 2.0, 1.0, 3.0, 1.0, 9.0, 0.0, 8.0, 0.0, 7.0, -1.0].map(f32::to_bits)
        );
        let e = run(Op::Topk, x.clone(), &[("k", AttrValue::Int(3))]).err().expect("an error");
        assert_eq!(e.rule, "OP-topk");
        let e = run(Op::Topk, x, &[("ret_type", AttrValue::Str("neither".into()))]).err().expect("an error");
        assert_eq!(e.rule, "OP-topk");
    }

    #[test]
    fn edge_cases() {
        let empty = f32s(&[], &[0, 3]);
        assert!(data(&run(Op::Sort, empty.clone(), &[("axis", AttrValue::Int(0))]).unwrap()).is_empty());
        let e = run(Op::Sort, f32s(&[1.0], &[]), &[]).err().expect("an error");
        assert_eq!(e.rule, "OP-sort");
        let big = tensor_value(DataType::int(8), vec![300], TensorData::I8(vec![0; 300]));
        let e = run(Op::Argsort, big.clone(), &[("dtype", AttrValue::Str("int8".into()))]).err().expect("an error");
        assert_eq!(e.rule, "OP-argsort");
        let ok = run(Op::Argsort, big.clone(), &[("dtype", AttrValue::Str("uint16".into()))]).unwrap();
        assert_eq!(ints(&ok)[299], 299, "ties keep their order");
        let e = run(Op::Argsort, big, &[("dtype", AttrValue::Str("float32".into()))]).err().expect("an error");
        assert_eq!(e.rule, "OP-argsort");
        let b = tensor_value(DataType::BOOL, vec![3], TensorData::Bool(vec![true, false, true]));
        let s = run(Op::Sort, b, &[("descending", AttrValue::Bool(true))]).unwrap();
        assert_eq!(data(&s), TensorData::Bool(vec![true, true, false]));
        let huge = tensor_value(DataType::FLOAT32, vec![0, u64::MAX >> 1], TensorData::F32(vec![]));
        assert!(data(&run(Op::Sort, huge, &[]).unwrap()).is_empty());
    }
}
