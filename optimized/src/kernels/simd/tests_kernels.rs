//! Whole kernels on every instruction set, and on 1 and 2 threads, against naive
//! element-by-element references written here (bitwise for IEEE operations and
//! integers; ulp bounds for `exp`, `sigmoid` and `softmax`; a reassociation's bound for
//! float sums).

use super::tests::{arith_ref, same};
use super::*;
use crate::error::{ErrorKind, Result};
use crate::kernels::{lower, Lowered, Lowering};
use crate::scalar::B8;
use crate::tensor::Tensor;
use crate::value::Value;
use crate::Memory;
use half::f16;
use spec_model::grammar::{AttrValue, Attrs};
use spec_model::ops::Op;
use std::rc::Rc;

fn mem() -> Rc<Memory> {
    Memory::new(1 << 30)
}

fn run_k(m: &Rc<Memory>, op: Op, attrs: &Attrs, args: &[Value], threads: usize) -> Result<Value> {
    let statics = vec![None; args.len()];
    let Lowered::Kernel(k) = lower(&Lowering { op, attrs, args: &statics }) else { panic!("{op} is a kernel") };
    k.run(
        &KernelCx {
            op,
            span: spec_model::Span::SYNTHETIC,
            memory: m,
            threads,
            parallel_min: super::PARALLEL_MIN_ELEMENTS,
        },
        args,
    )
}

fn tensor<T: Element>(m: &Rc<Memory>, d: DType, shape: &[u64], v: &[T]) -> Value {
    Value::tensor(Tensor::from_slice(d, shape, v, m).unwrap())
}

fn elems<T: Element>(v: &Value) -> Vec<T> {
    match v {
        Value::Tensor(t) => t.elements::<T>().unwrap().to_vec(),
        _ => panic!("not a tensor"),
    }
}

/// `n` varied elements of `T`: for floats NaN, infinities, signed zeros and ordinary
/// values; for integers random bits (with 0, MIN and MAX among them); bools 0/1.
fn gen<T: Num>(n: usize, seed: u64) -> Vec<T> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    (0..n)
        .map(|_| {
            let r = next();
            if T::DTYPE.is_float() {
                let sp = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 1.0, -1.0, 2.5, 1e-40];
                let v =
                    if r % 6 == 0 { sp[(r >> 8) as usize % sp.len()] } else { ((r >> 20) % 4001) as f64 / 64.0 - 31.0 };
                T::from_f64(v).unwrap_or(T::ZERO)
            } else if T::DTYPE == DType::Bool {
                T::from_bool(r & 1 == 1)
            } else {
                match r % 9 {
                    0 => T::ZERO,
                    1 => T::LOWEST,
                    2 => T::HIGHEST,
                    3 => T::from_i64((r >> 40) as i64 % 5 - 2),
                    _ => T::from_u64(r >> (r % 60)),
                }
            }
        })
        .collect()
}

/// The element of an input of shape `inp` read for output element `flat` of shape `out`
/// under NumPy broadcasting.
fn bidx(out: &[u64], inp: &[u64], flat: usize) -> usize {
    let (mut idx, mut stride, mut rem) = (0, 1, flat);
    let lead = out.len() - inp.len();
    for i in (0..out.len()).rev() {
        let c = rem % out[i] as usize;
        rem /= out[i] as usize;
        if i >= lead {
            let d = inp[i - lead] as usize;
            if d != 1 {
                idx += c * stride;
            }
            stride *= d;
        }
    }
    idx
}

fn numel(s: &[u64]) -> usize {
    s.iter().product::<u64>() as usize
}

/// Shape pairs that broadcast, with runs, splats, odd lengths and empty ones.
fn shape_pairs() -> Vec<(Vec<u64>, Vec<u64>)> {
    let mut out = Vec::new();
    for n in [0u64, 1, 3, 7, 16, 31, 33, 64, 67] {
        out.extend([
            (vec![n], vec![n]),
            (vec![n], vec![1]),
            (vec![], vec![n]),
            (vec![3, 1, n], vec![1, 4, n]),
            (vec![2, n, 1], vec![n, 5]),
            (vec![n, 2], vec![n, 1]),
        ]);
    }
    out.push((vec![1000], vec![1000]));
    out.push((vec![5, 1, 300], vec![5, 7, 1]));
    out
}

const ARITH_OPS: [(Op, Arith); 8] = [
    (Op::Add, Arith::Add),
    (Op::Subtract, Arith::Subtract),
    (Op::Multiply, Arith::Multiply),
    (Op::Divide, Arith::Divide),
    (Op::FloorDivide, Arith::FloorDivide),
    (Op::Power, Arith::Power),
    (Op::Maximum, Arith::Maximum),
    (Op::Minimum, Arith::Minimum),
];

type Cmp<T> = fn(&T, &T) -> bool;

fn check_elementwise<T: Num>() {
    let m = mem();
    let none = Attrs::default();
    let d = T::DTYPE;
    for (i, (sa, sb)) in shape_pairs().into_iter().enumerate() {
        let (x, y) = (gen::<T>(numel(&sa), i as u64), gen::<T>(numel(&sb), 100 + i as u64));
        let (a, b) = (tensor(&m, d, &sa, &x), tensor(&m, d, &sb, &y));
        let shape = crate::kernels::layout::broadcast_shapes(&sa, &sb).unwrap();
        let n = numel(&shape);
        for isa in available() {
            for (op, ar) in ARITH_OPS {
                let got = with_isa(isa, || run_k(&m, op, &none, &[a.clone(), b.clone()], 1));
                let fails = n > 0
                    && match ar {
                        Arith::Divide | Arith::FloorDivide => y.iter().any(|v| v.is_zero_divisor()),
                        Arith::Power => y.iter().any(|v| v.is_negative_exponent()),
                        _ => false,
                    };
                if fails {
                    let want = if ar == Arith::Power { ErrorKind::OpError } else { ErrorKind::DivisionByZero };
                    assert_eq!(got.unwrap_err().kind, want, "{isa:?} {op} {d}");
                    continue;
                }
                let f = arith_ref::<T>(ar);
                let want: Vec<T> = (0..n).map(|j| f(x[bidx(&shape, &sa, j)], y[bidx(&shape, &sb, j)])).collect();
                assert!(same(&elems::<T>(&got.unwrap()), &want), "{isa:?} {op} {d} {sa:?} {sb:?}");
            }
            let cmps: [(Op, Cmp<T>); 6] = [
                (Op::Equal, T::eq),
                (Op::NotEqual, T::ne),
                (Op::Less, T::lt),
                (Op::LessEqual, T::le),
                (Op::Greater, T::gt),
                (Op::GreaterEqual, T::ge),
            ];
            for (op, f) in cmps {
                let got = with_isa(isa, || run_k(&m, op, &none, &[a.clone(), b.clone()], 1)).unwrap();
                let want: Vec<B8> =
                    (0..n).map(|j| B8::new(f(&x[bidx(&shape, &sa, j)], &y[bidx(&shape, &sb, j)]))).collect();
                assert_eq!(elems::<B8>(&got), want, "{isa:?} {op} {d}");
            }
            // where(c, a, b) with a condition of the first shape.
            let c: Vec<B8> = gen::<B8>(numel(&sa), i as u64 + 7);
            let cv = tensor(&m, DType::Bool, &sa, &c);
            let got = with_isa(isa, || run_k(&m, Op::Where, &none, &[cv, a.clone(), b.clone()], 1)).unwrap();
            let want: Vec<T> = (0..n)
                .map(|j| if c[bidx(&shape, &sa, j)].get() { x[bidx(&shape, &sa, j)] } else { y[bidx(&shape, &sb, j)] })
                .collect();
            assert!(same(&elems::<T>(&got), &want), "{isa:?} where {d}");
        }
    }
}

#[test]
fn arithmetic_comparisons_and_where_match_the_naive_reference() {
    check_elementwise::<f32>();
    check_elementwise::<f64>();
    check_elementwise::<f16>();
    check_elementwise::<i8>();
    check_elementwise::<i32>();
    check_elementwise::<i64>();
    check_elementwise::<u8>();
    check_elementwise::<u16>();
    check_elementwise::<u64>();
    check_elementwise::<B8>();
}

fn check_unary<T: Real>(exp: fn(T) -> T, sigmoid: fn(T) -> T) {
    let m = mem();
    let none = Attrs::default();
    for n in (0..=67).chain([1000, 4099]) {
        let x = gen::<T>(n, n as u64);
        let a = tensor(&m, T::DTYPE, &[n as u64], &x);
        let ops: [(Op, &dyn Fn(T) -> T); 8] = [
            (Op::Negative, &T::neg),
            (Op::Abs, &|v: T| <T as Num>::abs(v)),
            (Op::Relu, &|v: T| v.max_nan(T::ZERO)),
            (Op::Exp, &exp),
            (Op::Sigmoid, &sigmoid),
            (Op::Log, &T::ln),
            (Op::Sqrt, &|v: T| <T as Real>::sqrt(v)),
            (Op::Tanh, &T::tanh),
        ];
        for isa in available() {
            for (op, f) in &ops {
                let got = with_isa(isa, || run_k(&m, *op, &none, std::slice::from_ref(&a), 1)).unwrap();
                let want: Vec<T> = x.iter().map(|&v| f(v)).collect();
                assert!(same(&elems::<T>(&got), &want), "{isa:?} {op} {} n={n}", T::DTYPE);
            }
        }
    }
}

/// float32/float64 `exp` and `sigmoid` are the vectorized functions (within 2 ulp of
/// `std`'s, `simd::tests`); float16 keeps `std`'s in float32, rounded once.
#[test]
fn unary_kernels_match_their_functions() {
    check_unary::<f32>(exp_f32, sigmoid_f32);
    check_unary::<f64>(exp_f64, sigmoid_f64);
    check_unary::<f16>(Real::exp, Real::sigmoid);
    let m = mem();
    for isa in available() {
        let x = gen::<i16>(100, 3);
        let a = tensor(&m, DType::I16, &[100], &x);
        for (op, f) in [(Op::Negative, i16::wrapping_neg as fn(i16) -> i16), (Op::Abs, i16::wrapping_abs)] {
            let got = with_isa(isa, || run_k(&m, op, &Attrs::default(), std::slice::from_ref(&a), 1)).unwrap();
            assert_eq!(elems::<i16>(&got), x.iter().map(|&v| f(v)).collect::<Vec<_>>());
        }
        let e = with_isa(isa, || run_k(&m, Op::Exp, &Attrs::default(), std::slice::from_ref(&a), 1)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OpError);
    }
}

fn astype(to: DType) -> Attrs {
    let mut a = Attrs::default();
    a.insert("dtype", AttrValue::Str(to.to_string()));
    a
}

fn check_astype<S: Num, D: Num>(n: usize) {
    let m = mem();
    let x = gen::<S>(n, n as u64 + 11);
    let a = tensor(&m, S::DTYPE, &[n as u64], &x);
    let want: Option<Vec<D>> = x.iter().map(|v| v.cast::<D>()).collect();
    for isa in available() {
        for threads in [1, 2] {
            let got = with_isa(isa, || run_k(&m, Op::Astype, &astype(D::DTYPE), std::slice::from_ref(&a), threads));
            match (&want, got) {
                (Some(w), Ok(g)) => assert!(same(&elems::<D>(&g), w), "{isa:?} {} -> {}", S::DTYPE, D::DTYPE),
                (None, Err(e)) => {
                    let i = x.iter().position(|v| v.cast::<D>().is_none()).unwrap();
                    let msg = format!("{} is out of the range of {}", crate::scalar::to_f64(x[i]), D::DTYPE);
                    assert!(e.message.ends_with(&msg), "{}: the first failing element ({msg})", e.message);
                }
                (w, g) => panic!("{isa:?} {} -> {}: {:?} vs {:?}", S::DTYPE, D::DTYPE, w.is_some(), g.is_ok()),
            }
        }
    }
}

#[test]
fn astype_matches_the_scalar_conversion_and_its_first_error() {
    for n in [0, 1, 5, 63, 64, 65, 200] {
        check_astype::<f32, i32>(n);
        check_astype::<f32, f64>(n);
        check_astype::<f64, f16>(n);
        check_astype::<f16, u8>(n);
        check_astype::<i64, f32>(n);
        check_astype::<i32, i8>(n);
        check_astype::<u8, B8>(n);
        check_astype::<B8, f32>(n);
    }
    // Large enough to split: an error late in the second half, another in the first.
    check_astype::<f32, i16>(1 << 19);
}

fn reduce_attrs(axis: Option<Vec<i64>>, keepdims: bool) -> Attrs {
    let mut a = Attrs::default();
    if let Some(ax) = axis {
        a.insert("axis", AttrValue::List(ax.into_iter().map(AttrValue::Int).collect()));
    }
    a.insert("keepdims", AttrValue::Bool(keepdims));
    a
}

/// Sum, mean, max and min of integers on every path are the ordered fold's bits; float
/// sums agree within a reassociation's bound, max/min up to which NaN.
fn check_reduce<T: Num>(exact: bool) {
    let m = mem();
    let cases: [(Vec<u64>, Option<Vec<i64>>); 8] = [
        (vec![1000], None),
        (vec![3, 67], Some(vec![1])),
        (vec![67, 3], Some(vec![0])),
        (vec![5, 4, 130], Some(vec![0, 2])),
        (vec![2, 3, 64], Some(vec![1])),
        (vec![4, 100], None),
        (vec![0, 5], Some(vec![0])),
        (vec![7], Some(vec![])),
    ];
    for (shape, axis) in cases {
        let x = gen::<T>(numel(&shape), numel(&shape) as u64);
        let a = tensor(&m, T::DTYPE, &shape, &x);
        let attrs = reduce_attrs(axis.clone(), false);
        let reduced: Vec<bool> =
            (0..shape.len()).map(|i| axis.as_ref().is_none_or(|ax| ax.iter().any(|&k| k as usize == i))).collect();
        let kept: Vec<u64> = shape.iter().zip(&reduced).filter(|(_, &r)| !r).map(|(&d, _)| d).collect();
        let nout = numel(&kept);
        // The ordered fold: output element of each input element.
        let out_of = |flat: usize| {
            let (mut o, mut rem) = (0, flat);
            let mut stride = 1;
            for i in (0..shape.len()).rev() {
                let c = rem % shape[i] as usize;
                rem /= shape[i] as usize;
                if !reduced[i] {
                    o += c * stride;
                    stride *= shape[i] as usize;
                }
            }
            o
        };
        for (op, init, f) in [
            (Op::Sum, T::ZERO, T::add as fn(T, T) -> T),
            (Op::Max, T::LOWEST, T::max_nan),
            (Op::Min, T::HIGHEST, T::min_nan),
        ] {
            let mut want = vec![init; nout];
            for (j, &v) in x.iter().enumerate() {
                want[out_of(j)] = f(want[out_of(j)], v);
            }
            for isa in available() {
                let got = with_isa(isa, || run_k(&m, op, &attrs, std::slice::from_ref(&a), 1));
                if nout > 0 && x.is_empty() && op != Op::Sum {
                    assert_eq!(got.unwrap_err().kind, ErrorKind::OpError);
                    continue;
                }
                let got = elems::<T>(&got.unwrap());
                if exact || op != Op::Sum {
                    let nan = |v: &T| crate::scalar::to_f64(*v).is_nan();
                    let nan_eq = |p: &T, q: &T| p == q || (nan(p) && nan(q));
                    assert!(got.iter().zip(&want).all(|(p, q)| nan_eq(p, q)), "{isa:?} {op} {} {shape:?}", T::DTYPE);
                } else {
                    for (p, q) in got.iter().zip(&want) {
                        let (p, q) = (crate::scalar::to_f64(*p), crate::scalar::to_f64(*q));
                        let bound = 1e-3 * (1.0 + q.abs());
                        assert!(
                            p == q || (p.is_nan() && q.is_nan()) || (p - q).abs() <= bound,
                            "{isa:?} {op}: {p} {q}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn reductions_match_the_ordered_fold() {
    check_reduce::<i32>(true);
    check_reduce::<u8>(true);
    check_reduce::<i64>(true);
    check_reduce::<B8>(true);
    check_reduce::<f16>(true);
    check_reduce::<f32>(false);
    check_reduce::<f64>(false);
}

/// Softmax against the scalar definition in float64: relative error of a few ulp.
#[test]
fn softmax_is_within_a_few_ulp_of_the_definition() {
    let m = mem();
    for (shape, axis) in [(vec![3u64, 67], -1i64), (vec![2, 1000], 1), (vec![33, 5], 0), (vec![4, 130, 3], 1)] {
        let n = numel(&shape);
        let x: Vec<f32> = gen::<f32>(n, 5).into_iter().map(|v| if v.is_finite() { v } else { 0.5 }).collect();
        let a = tensor(&m, DType::F32, &shape, &x);
        let mut attrs = Attrs::default();
        attrs.insert("axis", AttrValue::Int(axis));
        let ax = if axis < 0 { shape.len() - 1 } else { axis as usize };
        let (len, inner) = (shape[ax] as usize, shape[ax + 1..].iter().product::<u64>() as usize);
        let mut want = vec![0f64; n];
        for b in 0..n / (len * inner) {
            for c in 0..inner {
                let at = |j: usize| b * len * inner + j * inner + c;
                let mx = (0..len).map(|j| x[at(j)] as f64).fold(f64::NEG_INFINITY, f64::max);
                let s: f64 = (0..len).map(|j| (x[at(j)] as f64 - mx).exp()).sum();
                for j in 0..len {
                    want[at(j)] = (x[at(j)] as f64 - mx).exp() / s;
                }
            }
        }
        let mut bits = Vec::new();
        for isa in available() {
            let got =
                elems::<f32>(&with_isa(isa, || run_k(&m, Op::Softmax, &attrs, std::slice::from_ref(&a), 1)).unwrap());
            for (g, w) in got.iter().zip(&want) {
                assert!((*g as f64 - w).abs() <= 8.0 * f32::EPSILON as f64 * w + 1e-30, "{isa:?} {g} {w}");
            }
            bits.push(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        }
        assert!(bits.windows(2).all(|w| w[0] == w[1]), "the same bits on every path");
    }
}

/// Moves of elements: the naive index maps.
#[test]
fn take_concat_split_slice_and_permute_match_the_index_maps() {
    let m = mem();
    let none = Attrs::default();
    for isa in available() {
        for (r, c) in [(1u64, 1u64), (3, 67), (17, 33), (64, 2)] {
            let x: Vec<u32> = (0..(r * c) as u32).collect();
            let a = tensor(&m, DType::U32, &[2, r, c], &[x.clone(), x.iter().map(|v| v + 10_000).collect()].concat());
            let mut perm = Attrs::default();
            perm.insert("axes", AttrValue::List(vec![AttrValue::Int(0), AttrValue::Int(2), AttrValue::Int(1)]));
            let got = elems::<u32>(
                &with_isa(isa, || run_k(&m, Op::PermuteDims, &perm, std::slice::from_ref(&a), 1)).unwrap(),
            );
            for b in 0..2u32 {
                for i in 0..r as usize {
                    for j in 0..c as usize {
                        let at = b as usize * (r * c) as usize + j * r as usize + i;
                        assert_eq!(got[at], (i * c as usize + j) as u32 + b * 10_000, "{isa:?} transpose {r}x{c}");
                    }
                }
            }
            // take along the last axis (single elements) and the first (rows).
            let idx: Vec<i32> = (0..40).map(|k| (k * 7 % c as i32 + c as i32) % c as i32).collect();
            let iv = tensor(&m, DType::I32, &[40], &idx);
            let mut last = Attrs::default();
            last.insert("axis", AttrValue::Int(2));
            let got = elems::<u32>(&with_isa(isa, || run_k(&m, Op::Take, &last, &[a.clone(), iv.clone()], 1)).unwrap());
            let av = elems::<u32>(&a);
            let want: Vec<u32> = (0..2 * r as usize)
                .flat_map(|row| idx.iter().map(move |&p| (row, p)))
                .map(|(row, p)| av[row * c as usize + p as usize])
                .collect();
            assert_eq!(got, want, "{isa:?} take");
            let cat = run_k(&m, Op::Concat, &last, &[Value::tuple(vec![a.clone(), a.clone()])], 1).unwrap();
            let got = elems::<u32>(&cat);
            let want: Vec<u32> = av.chunks(c as usize).flat_map(|row| [row, row].concat()).collect();
            assert_eq!(got, want);
        }
    }
    let _ = none;
}

/// A large elementwise, broadcasting, `where` and `astype` kernel on 2 threads gives
/// the bits of 1 thread, and counts as threaded (and vectorized where the CPU can).
#[test]
fn two_threads_give_the_bits_of_one() {
    use crate::stats::{snapshot, Counter};
    let count = |c: Counter| snapshot().into_iter().find(|(k, _)| *k == c).map_or(0, |(_, n)| n);
    let m = mem();
    let none = Attrs::default();
    let (r, c) = (300u64, 1001u64);
    let n = (r * c) as usize;
    assert!(n >= PARALLEL_MIN_ELEMENTS);
    let x = gen::<f32>(n, 1);
    let y = gen::<f32>(c as usize, 2);
    let k = gen::<B8>(r as usize, 3);
    let a = tensor(&m, DType::F32, &[r, c], &x);
    let b = tensor(&m, DType::F32, &[c], &y);
    let cond = tensor(&m, DType::Bool, &[r, 1], &k);
    let cases: Vec<(Op, Attrs, Vec<Value>)> = vec![
        (Op::Add, none.clone(), vec![a.clone(), b.clone()]),
        (Op::Divide, none.clone(), vec![b.clone(), a.clone()]),
        (Op::Less, none.clone(), vec![a.clone(), b.clone()]),
        (Op::Exp, none.clone(), vec![a.clone()]),
        (Op::Relu, none.clone(), vec![a.clone()]),
        (Op::Where, none.clone(), vec![cond, a.clone(), b.clone()]),
        (Op::Astype, astype(DType::F16), vec![a.clone()]),
    ];
    for isa in available() {
        for (op, attrs, args) in &cases {
            let one = with_isa(isa, || run_k(&m, *op, attrs, args, 1)).unwrap();
            let threaded = count(Counter::Threaded);
            let vectorized = count(Counter::Vectorized);
            let two = with_isa(isa, || run_k(&m, *op, attrs, args, 2)).unwrap();
            assert!(count(Counter::Threaded) > threaded, "{op} split");
            if isa != Isa::Portable {
                assert!(count(Counter::Vectorized) > vectorized, "{op} vectorized");
            }
            let (Value::Tensor(p), Value::Tensor(q)) = (&one, &two) else { panic!() };
            assert_eq!(p.data().unwrap().bytes(), q.data().unwrap().bytes(), "{isa:?} {op}: 1 vs 2 threads");
        }
    }
}
