//! The manipulation kernels on small cases worked by hand, their errors, and inputs
//! that must not panic (the differential test against the oracle is
//! `fuzz/tests/kernels_agree_manipulate.rs`).

use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::kernels::run_standalone;
use crate::tensor::Tensor;
use crate::value::Value;
use crate::{with_num, Memory};
use spec_model::grammar::{AttrValue, Attrs};
use spec_model::ops::Op;
use std::rc::Rc;

fn mem() -> Rc<Memory> {
    Memory::new(1 << 30)
}

fn ints(shape: &[u64], values: &[i32], m: &Rc<Memory>) -> Value {
    Value::tensor(Tensor::from_slice(DType::I32, shape, values, m).unwrap())
}

/// An `int32` tensor of shape `shape` holding 0, 1, 2, ...
fn iota(shape: &[u64], m: &Rc<Memory>) -> Value {
    let n = crate::tensor::element_count(shape).unwrap();
    let values: Vec<i32> = (0..n as i32).collect();
    ints(shape, &values, m)
}

fn shape(dims: &[i64]) -> Value {
    Value::Shape(dims.into())
}

fn attrs(pairs: &[(&str, AttrValue)]) -> Attrs {
    let mut a = Attrs::default();
    for (k, v) in pairs {
        a.insert(*k, v.clone());
    }
    a
}

fn list(xs: &[i64]) -> AttrValue {
    AttrValue::List(xs.iter().map(|&x| AttrValue::Int(x)).collect())
}

fn run(op: Op, a: &Attrs, args: &[Value], m: &Rc<Memory>) -> Result<Value> {
    run_standalone(op, a, args, m).expect("a kernel")
}

/// A result tensor's shape and `int32` elements.
fn got(r: Result<Value>) -> (Vec<u64>, Vec<i32>) {
    match r.unwrap() {
        Value::Tensor(t) => (t.shape().to_vec(), t.elements::<i32>().unwrap().to_vec()),
        other => panic!("not a tensor: {other:?}"),
    }
}

fn parts(r: Result<Value>) -> Vec<(Vec<u64>, Vec<i32>)> {
    match r.unwrap() {
        Value::Tuple(fs) => fs.iter().map(|f| got(Ok(f.clone()))).collect(),
        other => panic!("not a tuple: {other:?}"),
    }
}

fn kind(r: Result<Value>) -> ErrorKind {
    match r {
        Err(e) => e.kind,
        Ok(v) => panic!("expected an error, got {v:?}"),
    }
}

#[test]
fn reshape_infers_one_minus_one_and_copies() {
    let m = mem();
    let x = iota(&[2, 3], &m);
    let none = Attrs::default();
    assert_eq!(got(run(Op::Reshape, &none, &[x.clone(), shape(&[3, -1])], &m)), (vec![3, 2], (0..6).collect()));
    assert_eq!(got(run(Op::Reshape, &none, &[x.clone(), shape(&[6])], &m)).0, vec![6]);
    // A new tensor, not an alias of the operand.
    let Ok(Value::Tensor(y)) = run(Op::Reshape, &none, &[x.clone(), shape(&[6])], &m) else { panic!() };
    let Value::Tensor(xt) = &x else { panic!() };
    assert!(!Rc::ptr_eq(xt, &y));
    let bad = |s: &[i64]| kind(run(Op::Reshape, &none, &[x.clone(), shape(s)], &m));
    assert_eq!(bad(&[-1, -1]), ErrorKind::OpError);
    assert_eq!(bad(&[-2, 3]), ErrorKind::NegativeDimension);
    assert_eq!(bad(&[-1, -2, -1]), ErrorKind::OpError, "two -1 are reported before a negative dimension");
    assert_eq!(bad(&[i64::MIN]), ErrorKind::NegativeDimension);
    assert_eq!(bad(&[4, -1]), ErrorKind::OpError);
    assert_eq!(bad(&[0, -1]), ErrorKind::OpError);
    assert_eq!(bad(&[7]), ErrorKind::OpError);
    assert_eq!(bad(&[i64::MAX, i64::MAX, 2]), ErrorKind::OpError);
    // Rank 0, and empty tensors with huge dimensions.
    let s = ints(&[], &[7], &m);
    assert_eq!(got(run(Op::Reshape, &none, &[s.clone(), shape(&[1, -1])], &m)), (vec![1, 1], vec![7]));
    assert_eq!(got(run(Op::Reshape, &none, &[s, shape(&[])], &m)), (vec![], vec![7]));
    let e = iota(&[0, 4], &m);
    assert_eq!(got(run(Op::Reshape, &none, &[e.clone(), shape(&[i64::MAX, 0, i64::MAX])], &m)).1, Vec::<i32>::new());
    assert_eq!(kind(run(Op::Reshape, &none, &[e, shape(&[0, -1])], &m)), ErrorKind::OpError);
    // Argument kinds and count.
    assert_eq!(kind(run(Op::Reshape, &none, &[shape(&[1]), x.clone()], &m)), ErrorKind::OpError);
    assert_eq!(kind(run(Op::Reshape, &none, &[x], &m)), ErrorKind::OpError);
}

#[test]
fn permute_dims_moves_axes() {
    let m = mem();
    let x = iota(&[2, 3], &m);
    assert_eq!(
        got(run(Op::PermuteDims, &Attrs::default(), std::slice::from_ref(&x), &m)),
        (vec![3, 2], vec![0, 3, 1, 4, 2, 5])
    );
    let y = iota(&[2, 3, 4], &m);
    let a = attrs(&[("axes", list(&[1, -1, 0]))]);
    let (s, v) = got(run(Op::PermuteDims, &a, std::slice::from_ref(&y), &m));
    assert_eq!(s, vec![3, 4, 2]);
    // result[j, k, i] = y[i, j, k] = 12 i + 4 j + k
    assert_eq!(&v[..4], &[0, 12, 1, 13]);
    let bad = |v: AttrValue| kind(run(Op::PermuteDims, &attrs(&[("axes", v)]), std::slice::from_ref(&y), &m));
    assert_eq!(bad(list(&[0, 1])), ErrorKind::OpError);
    assert_eq!(bad(list(&[0, 0, 1])), ErrorKind::OpError);
    assert_eq!(bad(list(&[0, 1, 3])), ErrorKind::OpError);
    assert_eq!(bad(list(&[0, 1, i64::MIN])), ErrorKind::OpError);
    assert_eq!(bad(AttrValue::Str("0".into())), ErrorKind::OpError);
    // A single integer is a list of one.
    let a = attrs(&[("axes", AttrValue::Int(0))]);
    assert_eq!(got(run(Op::PermuteDims, &a, &[iota(&[3], &m)], &m)).1, vec![0, 1, 2]);
    assert_eq!(got(run(Op::PermuteDims, &Attrs::default(), &[ints(&[], &[5], &m)], &m)), (vec![], vec![5]));
    let e = iota(&[0, u32::MAX as u64 * 4], &m);
    assert_eq!(got(run(Op::PermuteDims, &Attrs::default(), &[e], &m)).0, vec![u32::MAX as u64 * 4, 0]);
}

#[test]
fn broadcast_to_stretches_ones() {
    let m = mem();
    let x = iota(&[2, 1], &m);
    let none = Attrs::default();
    let b = |v: &Value, s: &[i64]| run(Op::BroadcastTo, &none, &[v.clone(), shape(s)], &m);
    assert_eq!(got(b(&x, &[2, 2, 3])), (vec![2, 2, 3], vec![0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1]));
    assert_eq!(got(b(&x, &[2, 0])).0, vec![2, 0]);
    assert_eq!(got(b(&ints(&[], &[9], &m), &[2])).1, vec![9, 9]);
    assert_eq!(kind(b(&x, &[3, 3])), ErrorKind::OpError);
    assert_eq!(kind(b(&x, &[2])), ErrorKind::OpError);
    assert_eq!(kind(b(&x, &[-1, 2, 3])), ErrorKind::NegativeDimension);
    assert_eq!(kind(b(&x, &[-1])), ErrorKind::NegativeDimension, "a negative dimension is reported before the rank");
    assert_eq!(kind(b(&x, &[1 << 14, 2, 1 << 14])), ErrorKind::MemoryExhausted, "past the memory budget");
    assert_eq!(got(b(&x, &[1 << 14, 2, 1 << 6])).0.len(), 3, "within the budget");
    assert_eq!(kind(b(&x, &[i64::MAX, 2, i64::MAX])), ErrorKind::MemoryExhausted);
    assert_eq!(got(b(&x, &[i64::MAX, 2, 0])).0, vec![i64::MAX as u64, 2, 0]);
    assert_eq!(kind(b(&iota(&[0], &m), &[1])), ErrorKind::OpError);
}

#[test]
fn concat_joins_along_an_axis() {
    let m = mem();
    let (a, b) = (iota(&[2, 2], &m), ints(&[2, 1], &[8, 9], &m));
    let cat = |axis: Option<i64>, fs: &[Value]| {
        let at = axis.map_or(Attrs::default(), |x| attrs(&[("axis", AttrValue::Int(x))]));
        run(Op::Concat, &at, &[Value::tuple(fs.to_vec())], &m)
    };
    assert_eq!(got(cat(Some(-1), &[a.clone(), b.clone()])), (vec![2, 3], vec![0, 1, 8, 2, 3, 9]));
    assert_eq!(got(cat(None, &[a.clone(), a.clone()])), (vec![4, 2], vec![0, 1, 2, 3, 0, 1, 2, 3]));
    assert_eq!(kind(cat(None, &[a.clone(), b.clone()])), ErrorKind::OpError);
    assert_eq!(kind(cat(Some(2), std::slice::from_ref(&a))), ErrorKind::OpError);
    assert_eq!(kind(cat(None, &[])), ErrorKind::OpError);
    assert_eq!(kind(cat(None, &[a.clone(), iota(&[4], &m)])), ErrorKind::OpError);
    assert_eq!(kind(cat(None, &[a.clone(), shape(&[2, 2])])), ErrorKind::OpError);
    assert_eq!(kind(cat(None, &[ints(&[], &[1], &m)])), ErrorKind::OpError);
    let f = Value::tensor(Tensor::from_slice(DType::F32, &[1, 2], &[1.0f32, 2.0], &m).unwrap());
    assert_eq!(kind(cat(None, &[a.clone(), f])), ErrorKind::OpError);
    assert_eq!(kind(run(Op::Concat, &Attrs::default(), std::slice::from_ref(&a), &m)), ErrorKind::OpError);
    let bad = attrs(&[("axis", AttrValue::Str("0".into()))]);
    assert_eq!(kind(run(Op::Concat, &bad, &[Value::tuple(vec![a])], &m)), ErrorKind::OpError);
    let e = iota(&[0, 3], &m);
    assert_eq!(got(cat(Some(0), &[e.clone(), e])).0, vec![0, 3]);
}

#[test]
fn split_by_sections_and_indices() {
    let m = mem();
    let x = iota(&[2, 4], &m);
    let sp = |v: AttrValue, axis: i64| {
        run(
            Op::Split,
            &attrs(&[("indices_or_sections", v), ("axis", AttrValue::Int(axis))]),
            std::slice::from_ref(&x),
            &m,
        )
    };
    assert_eq!(parts(sp(AttrValue::Int(2), 1)), vec![(vec![2, 2], vec![0, 1, 4, 5]), (vec![2, 2], vec![2, 3, 6, 7])]);
    // ceil(4 / 3) = 2: parts 2 and 2 and the rest, 0 (TVM 0.27); 4 into 4 of 1.
    let uneven = parts(sp(AttrValue::Int(3), 1));
    assert_eq!(uneven.iter().map(|(s, _)| s[1]).collect::<Vec<_>>(), vec![2, 2, 0]);
    // 4 into 7: parts of 1, six of them more than 4.
    assert_eq!(kind(sp(AttrValue::Int(7), 1)), ErrorKind::OpError);
    // One section is the operand itself, not a tuple.
    assert!(matches!(sp(AttrValue::Int(1), 1), Ok(Value::Tensor(_))));
    assert_eq!(kind(sp(AttrValue::Int(0), 1)), ErrorKind::OpError);
    assert_eq!(kind(sp(AttrValue::Int(-2), 1)), ErrorKind::OpError);
    assert_eq!(kind(sp(AttrValue::Int(1 << 17), 1)), ErrorKind::OpError);
    assert_eq!(kind(sp(AttrValue::Int(2), 2)), ErrorKind::OpError);
    let p = parts(sp(list(&[3, -3, 100]), -1));
    let shapes: Vec<u64> = p.iter().map(|(s, _)| s[1]).collect();
    assert_eq!(shapes, vec![3, 0, 3, 0], "[0:3], [3:1], [1:100], [100:]");
    assert_eq!(p[2].1, vec![1, 2, 3, 5, 6, 7]);
    assert_eq!(got(sp(list(&[]), 0)), (vec![2, 4], (0..8).collect()));
    let ends = parts(sp(list(&[i64::MIN, i64::MAX]), 0));
    assert_eq!(ends.iter().map(|(s, _)| s[0]).collect::<Vec<_>>(), vec![0, 2, 0]);
    assert_eq!(kind(sp(AttrValue::Str("2".into()), 0)), ErrorKind::OpError);
    assert_eq!(kind(run(Op::Split, &Attrs::default(), std::slice::from_ref(&x), &m)), ErrorKind::OpError);
    let e = iota(&[0, 3], &m);
    let a = attrs(&[("indices_or_sections", AttrValue::Int(5))]);
    assert_eq!(parts(run(Op::Split, &a, &[e], &m)).len(), 5);
}

#[test]
fn strided_slice_is_pythons_slicing() {
    let m = mem();
    let x = iota(&[3, 4], &m);
    let ss = |ax: &[i64], b: &[i64], e: &[i64], s: Option<&[i64]>| {
        let mut a = attrs(&[("axes", list(ax)), ("begin", list(b)), ("end", list(e))]);
        if let Some(s) = s {
            a.insert("strides", list(s));
        }
        run(Op::StridedSlice, &a, std::slice::from_ref(&x), &m)
    };
    assert_eq!(got(ss(&[1], &[1], &[3], None)), (vec![3, 2], vec![1, 2, 5, 6, 9, 10]));
    assert_eq!(got(ss(&[0, 1], &[-1, -1], &[-100, 0], Some(&[-2, -3]))), (vec![2, 1], vec![11, 3]));
    assert_eq!(got(ss(&[1], &[i64::MAX], &[i64::MIN], Some(&[i64::MIN]))), (vec![3, 1], vec![3, 7, 11]));
    assert_eq!(got(ss(&[0], &[2], &[1], None)).0, vec![0, 4]);
    assert_eq!(got(ss(&[], &[], &[], None)).1, (0..12).collect::<Vec<_>>());
    assert_eq!(kind(ss(&[0], &[0], &[1], Some(&[0]))), ErrorKind::OpError);
    assert_eq!(kind(ss(&[0, 0], &[0, 0], &[1, 1], None)), ErrorKind::OpError);
    assert_eq!(kind(ss(&[2], &[0], &[1], None)), ErrorKind::OpError);
    assert_eq!(kind(ss(&[0], &[0, 1], &[1], None)), ErrorKind::OpError);
    let missing = attrs(&[("axes", list(&[0])), ("begin", list(&[0]))]);
    assert_eq!(kind(run(Op::StridedSlice, &missing, std::slice::from_ref(&x), &m)), ErrorKind::OpError);
    let e = iota(&[0, 5], &m);
    let a = attrs(&[("axes", list(&[1])), ("begin", list(&[4])), ("end", list(&[0])), ("strides", list(&[-1]))]);
    assert_eq!(got(run(Op::StridedSlice, &a, &[e], &m)).0, vec![0, 4]);
}

#[test]
fn take_gathers_in_range_indices() {
    let m = mem();
    let x = iota(&[2, 3], &m);
    let t = |axis: Option<i64>, idx: Value| {
        let a = axis.map_or(Attrs::default(), |x| attrs(&[("axis", AttrValue::Int(x))]));
        run(Op::Take, &a, &[x.clone(), idx], &m)
    };
    assert_eq!(got(t(None, ints(&[2], &[5, 0], &m))), (vec![2], vec![5, 0]));
    assert_eq!(got(t(Some(1), ints(&[2, 1], &[2, 0], &m))), (vec![2, 2, 1], vec![2, 0, 5, 3]));
    assert_eq!(got(t(Some(-2), ints(&[], &[1], &m))), (vec![3], vec![3, 4, 5]));
    let bools = Value::tensor(Tensor::from_slice(DType::Bool, &[2], &[1u8, 0], &m).unwrap());
    assert_eq!(got(t(Some(0), bools)).1, vec![3, 4, 5, 0, 1, 2]);
    let big = Value::tensor(Tensor::from_slice(DType::U64, &[1], &[u64::MAX], &m).unwrap());
    assert_eq!(kind(t(None, big)), ErrorKind::OpError);
    assert_eq!(kind(t(Some(1), ints(&[1], &[3], &m))), ErrorKind::OpError);
    assert_eq!(kind(t(Some(1), ints(&[1], &[-1], &m))), ErrorKind::OpError);
    assert_eq!(kind(t(Some(2), ints(&[1], &[0], &m))), ErrorKind::OpError);
    let floats = Value::tensor(Tensor::from_slice(DType::F32, &[1], &[0.0f32], &m).unwrap());
    assert_eq!(kind(t(None, floats)), ErrorKind::OpError);
    // An out-of-range index is an error even when the result is empty.
    let e = iota(&[0, 3], &m);
    let a = attrs(&[("axis", AttrValue::Int(1))]);
    assert_eq!(kind(run(Op::Take, &a, &[e.clone(), ints(&[1], &[3], &m)], &m)), ErrorKind::OpError);
    assert_eq!(got(run(Op::Take, &a, &[e, ints(&[2], &[2, 0], &m)], &m)).0, vec![0, 2]);
    assert_eq!(kind(t(None, shape(&[0]))), ErrorKind::OpError);
    let (wide, many) = (iota(&[1 << 14, 1], &m), Value::tensor(Tensor::zeros(DType::I8, &[1 << 14], &m).unwrap()));
    let live = m.live();
    let huge = run(Op::Take, &a, &[wide.clone(), many.clone()], &m);
    assert_eq!(kind(huge), ErrorKind::MemoryExhausted, "past the memory budget");
    assert_eq!(m.live(), live, "nothing allocated");
}

/// Every dtype moves bit for bit (the kernels copy by width, whatever the elements mean).
#[test]
fn every_dtype_moves_exactly() {
    let m = mem();
    for d in DType::ALL {
        let x = Tensor::zeros(d, &[2, 3], &m).unwrap();
        {
            let mut b = x.data_mut().unwrap();
            for (i, byte) in b.bytes_mut().iter_mut().enumerate() {
                // Bools must stay 0 or 1.
                *byte = if d.is_bool() { (i % 2) as u8 } else { (i * 37 + 11) as u8 };
            }
        }
        let x = Value::tensor(x);
        let Value::Tensor(xt) = &x else { panic!() };
        let y = run(Op::PermuteDims, &Attrs::default(), std::slice::from_ref(&x), &m).unwrap();
        let y = run(Op::PermuteDims, &Attrs::default(), &[y], &m).unwrap();
        let Value::Tensor(yt) = &y else { panic!() };
        assert_eq!((yt.dtype(), yt.shape()), (d, xt.shape()));
        assert_eq!(yt.data().unwrap().bytes(), xt.data().unwrap().bytes(), "{d}");
        let first = with_num!(d, T => format!("{:?}", xt.elements::<T>().unwrap()[1]));
        let taken = run(Op::Take, &Attrs::default(), &[x.clone(), ints(&[], &[1], &m)], &m).unwrap();
        let Value::Tensor(tt) = taken else { panic!() };
        assert_eq!(with_num!(d, T => format!("{:?}", tt.elements::<T>().unwrap()[0])), first);
    }
}

/// An operand a packed function is writing is an `OpError` in every operator, before
/// any other error (as the oracle checks it first).
#[test]
fn an_operand_being_written_is_an_op_error() {
    let m = mem();
    let x = iota(&[2, 2], &m);
    let Value::Tensor(xt) = &x else { panic!() };
    let _writing = xt.data_mut().unwrap();
    let sections = attrs(&[("indices_or_sections", AttrValue::Int(2))]);
    let slice = attrs(&[("axes", list(&[0])), ("begin", list(&[0])), ("end", list(&[1]))]);
    let cases: Vec<(Op, Attrs, Vec<Value>)> = vec![
        (Op::Reshape, Attrs::default(), vec![x.clone(), shape(&[-2])]),
        (Op::PermuteDims, Attrs::default(), vec![x.clone()]),
        (Op::BroadcastTo, Attrs::default(), vec![x.clone(), shape(&[-2])]),
        (Op::Concat, Attrs::default(), vec![Value::tuple(vec![x.clone()])]),
        (Op::Split, sections, vec![x.clone()]),
        (Op::StridedSlice, slice, vec![x.clone()]),
        (Op::Take, Attrs::default(), vec![iota(&[2], &m), x.clone()]),
    ];
    for (op, a, args) in cases {
        assert_eq!(kind(run(op, &a, &args, &m)), ErrorKind::OpError, "{op}");
    }
}

/// Results are allocated under the budget: past it, `MemoryExhausted` (never a panic).
#[test]
fn results_count_against_the_memory_budget() {
    let m = Memory::new(1000);
    let x = iota(&[10], &m);
    let r = run(Op::BroadcastTo, &Attrs::default(), &[x.clone(), shape(&[100, 10])], &m);
    assert_eq!(kind(r), ErrorKind::MemoryExhausted);
    assert_eq!(m.live(), 40);
}

/// An empty result is made without walking its dimensions, however large they are
/// (the oracle's `concat` and `take` loop over the dimensions before the axis).
#[test]
fn empty_results_with_huge_dimensions_are_immediate() {
    let m = mem();
    let huge = 1u64 << 62;
    let e = Value::tensor(Tensor::zeros(DType::F32, &[huge, 3, 0], &m).unwrap());
    let axis1 = attrs(&[("axis", AttrValue::Int(1))]);
    let start = std::time::Instant::now();
    let cat = run(Op::Concat, &axis1, &[Value::tuple(vec![e.clone(), e.clone()])], &m);
    assert_eq!(got_shape(cat), vec![huge, 6, 0]);
    let taken = run(Op::Take, &axis1, &[e.clone(), ints(&[2], &[2, 1], &m)], &m);
    assert_eq!(got_shape(taken), vec![huge, 2, 0]);
    let a = attrs(&[("axis", AttrValue::Int(1)), ("indices_or_sections", AttrValue::Int(3))]);
    assert_eq!(parts_of(run(Op::Split, &a, std::slice::from_ref(&e), &m)), 3);
    let a =
        attrs(&[("axes", list(&[1])), ("begin", list(&[-1])), ("end", list(&[i64::MIN])), ("strides", list(&[-1]))]);
    assert_eq!(got_shape(run(Op::StridedSlice, &a, std::slice::from_ref(&e), &m)), vec![huge, 3, 0]);
    assert_eq!(got_shape(run(Op::PermuteDims, &Attrs::default(), std::slice::from_ref(&e), &m)), vec![0, 3, huge]);
    assert!(start.elapsed().as_secs() < 5);
    assert_eq!(m.live(), 0);
}

fn got_shape(r: Result<Value>) -> Vec<u64> {
    match r.unwrap() {
        Value::Tensor(t) => t.shape().to_vec(),
        other => panic!("not a tensor: {other:?}"),
    }
}

fn parts_of(r: Result<Value>) -> usize {
    match r.unwrap() {
        Value::Tuple(fs) => fs.len(),
        other => panic!("not a tuple: {other:?}"),
    }
}
