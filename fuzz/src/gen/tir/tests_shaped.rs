//! The legalized-operator kernels, the edge kernels and the out-of-bounds kernels:
//! each round-trips through the printer (both dialects), and run by the reference
//! interpreter and by the engine's TIR executor on random inputs within the contract,
//! they end alike; the safe ones without an error, the edge ones only with their kind,
//! the out-of-bounds ones only with `OpError`.

use super::pool::{pool2d, Window};
use super::*;
use oracle::eval::tir::run_prim_func;
use oracle::eval::value::{TensorRef, Value};
use spec_model::grammar::{BaseFunc, GlobalVar, IRModule, NDArray, Scalar};
use spec_model::text::{check_round_trip, check_round_trip_in, Dialect};
use std::rc::Rc;

/// xorshift64*: the test's own choices.
struct Rng(u64);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
    fn bytes(&mut self) -> Vec<u8> {
        let len = [0, 1 + self.below(15), self.below(400), self.below(2000)][self.below(4) as usize];
        (0..len).map(|_| self.next() as u8).collect()
    }
}

const WIDE: [DataType; 5] = [F32, F64, I32, I64, BOOL];
const ALL: [DataType; 8] = [F32, F64, I32, I64, BOOL, F16, I8, U8];

/// A random shape of rank `rank` over a few shared dimensions (ids 0..4; id 9 is a literal 1).
fn shape(rng: &mut Rng, rank: usize) -> Vec<Ext> {
    (0..rank)
        .map(|_| match rng.below(4) {
            0 => Ext { id: 9, lit: Some(1), hi: 1 },
            _ => {
                let id = rng.below(4) as usize;
                Ext { id, lit: id.is_multiple_of(2).then_some(id as i64 + 2), hi: 5 }
            }
        })
        .collect()
}

/// The value of every dimension in one run: the literal, or 1..=4 per id.
fn values(rng: &mut Rng) -> Vec<i64> {
    (0..16).map(|_| 1 + rng.below(4) as i64).collect()
}

fn concrete(e: &Ext, vals: &[i64]) -> u64 {
    e.lit.unwrap_or(vals[e.id % vals.len()]) as u64
}

/// Random elements as the fuzzer makes them: small integers (uint8 anywhere), halves.
fn array(rng: &mut Rng, op: &Operand, vals: &[i64]) -> NDArray {
    let shape: Vec<u64> = op.dims.iter().map(|e| concrete(e, vals)).collect();
    let n: u64 = shape.iter().product();
    let d = op.dtype;
    let xs: Vec<Scalar> = (0..n)
        .map(|_| {
            let k = rng.below(13) as i64 - 6;
            if d.is_bool() {
                Scalar::Bool(k > 0)
            } else if d.is_float() {
                Scalar::Float(k as f64 / 2.0)
            } else if d.is_uint() {
                Scalar::Int(rng.below(256) as i128)
            } else {
                Scalar::Int(k as i128)
            }
        })
        .collect();
    NDArray::from_scalars(d, shape, &xs).expect("fits")
}

/// How one run ended: the error kind, or the output.
type Run = Result<NDArray, &'static str>;

/// Runs `k` in the reference interpreter and in the engine on equal inputs.
fn run_both(k: &Kernel, ins: &[NDArray], out: &NDArray, vals: &[i64]) -> (Run, Run) {
    let scalars: Vec<i64> = k
        .scalars
        .iter()
        .map(|s| match s {
            ScalarArg::Dim(e, c) => concrete(e, vals) as i64 + c,
            ScalarArg::Lit(v) => *v,
        })
        .collect();
    let fuel = 10_000_000;
    let tensors: Vec<TensorRef> =
        ins.iter().chain([out]).map(|a| Rc::new(oracle::eval::memory::Tracked::new(a.clone()))).collect();
    let mut f = fuel;
    let oracle = run_prim_func(&k.func, "k", &tensors, &scalars, SP, &mut f)
        .map(|()| tensors[tensors.len() - 1].borrow().clone())
        .map_err(|e| e.kind.name());
    let memory = optimized::Memory::new(usize::MAX);
    let ts: Vec<Rc<optimized::Tensor>> = ins
        .iter()
        .chain([out])
        .map(|a| Rc::new(optimized::Tensor::from_ndarray(a, &memory).ok().flatten().expect("converts")))
        .collect();
    let mut f = fuel;
    let func = optimized::tir::TirFunc::compile(&k.func, "k", optimized::tir::TirBackend::Native);
    let engine = func
        .run(&ts, &scalars, &mut f, SP, &memory)
        .map(|()| ts[ts.len() - 1].to_ndarray().expect("converts back"))
        .map_err(|e| e.kind.name());
    (oracle, engine)
}

fn printed(k: &Kernel) -> Result<String, String> {
    let m = IRModule {
        name: "Module".to_string(),
        functions: vec![(GlobalVar::new("k"), BaseFunc::Tir(Rc::new(k.func.clone())))],
        attrs: Default::default(),
        span: SP,
    };
    let p = check_round_trip(&m)?;
    check_round_trip_in(&m, Dialect::Tvm027)?;
    Ok(p)
}

/// Which errors a kernel may raise.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Expect {
    None,
    Kind(&'static str),
}

/// One random kernel of each builder, with its operands and what it may raise.
fn random_kernel(rng: &mut Rng, oob: bool) -> (String, Kernel, Vec<Operand>, Operand, Expect) {
    let bytes = rng.bytes();
    let u = &mut Unstructured::new(&bytes);
    let which = rng.below(if oob { 8 } else { 7 });
    match which {
        0 | 1 => {
            let rank = rng.below(4) as usize;
            let out = Operand { dims: shape(rng, rank), dtype: rng.pick(&ALL) };
            let n = 1 + rng.below(3) as usize;
            let ins: Vec<Operand> = (0..n)
                .map(|_| {
                    let start = rng.below(out.dims.len() as u64 + 1) as usize;
                    let dims = out.dims[start..]
                        .iter()
                        .map(|e| if rng.below(3) == 0 { Ext { id: 9, lit: Some(1), hi: 1 } } else { *e })
                        .collect();
                    Operand { dims, dtype: rng.pick(&ALL) }
                })
                .collect();
            let k = kernels::ewise(u, "k", &ins, &out, which == 1);
            ("ewise".into(), k, ins, out, Expect::None)
        }
        2 => {
            let rank = 1 + rng.below(3) as usize;
            let input = Operand { dims: shape(rng, rank), dtype: rng.pick(&ALL) };
            let r = input.dims.len();
            let mut axes: Vec<usize> = (0..r).filter(|_| rng.below(2) == 0).collect();
            if axes.is_empty() {
                axes.push(rng.below(r as u64) as usize);
            }
            let keep = rng.below(2) == 0;
            let d = input.dtype;
            let out_dt = match rng.below(3) {
                0 if d.is_float() => rng.pick(&[F32, F64]),
                0 => rng.pick(&[I64, F32]),
                _ => d,
            };
            let dims = (0..r)
                .filter_map(|i| match (axes.contains(&i), keep) {
                    (false, _) => Some(input.dims[i]),
                    (true, true) => Some(Ext { id: usize::MAX, lit: Some(1), hi: 1 }),
                    (true, false) => None,
                })
                .collect();
            let k = kernels::reduce(u, "k", &input, &axes, keep, out_dt);
            ("reduce".into(), k, vec![input], Operand { dims, dtype: out_dt }, Expect::None)
        }
        3 => {
            let d = rng.pick(&[F32, F64, I32, I64]);
            let ext = |rng: &mut Rng, id: usize| Ext { id, lit: (rng.below(2) == 0).then_some(3), hi: 5 };
            let (m, k, n) = (ext(rng, 0), ext(rng, 1), ext(rng, 2));
            let batched = rng.below(2) == 0;
            let b = Ext { id: 3, lit: None, hi: 3 };
            let a = Operand { dims: if batched { vec![b, m, k] } else { vec![m, k] }, dtype: d };
            let bb = Operand { dims: if batched && rng.below(2) == 0 { vec![b, k, n] } else { vec![k, n] }, dtype: d };
            let out = Operand { dims: if batched { vec![b, m, n] } else { vec![m, n] }, dtype: d };
            let kern = kernels::matmul(u, "k", &a, &bb);
            ("matmul".into(), kern, vec![a, bb], out, Expect::None)
        }
        4 => {
            let d = rng.pick(&[F32, F64, I32, I64]);
            let (h, w) = (2 + rng.below(6) as i64, 2 + rng.below(6) as i64);
            let (kh, kw) = (1 + rng.below(3) as i64, 1 + rng.below(3) as i64);
            let win = Window {
                kh,
                kw,
                sh: 1 + rng.below(2) as i64,
                sw: 1 + rng.below(2) as i64,
                ph: rng.below(kh.min(2) as u64) as i64,
                pw: rng.below(kw.min(2) as u64) as i64,
            };
            let Some((oh, ow)) = win.out(h, w) else { return random_kernel(rng, oob) };
            let (nn, c) = (Ext { id: 0, lit: None, hi: 3 }, Ext { id: 1, lit: Some(2), hi: 2 });
            let lit = |id, v| Ext { id, lit: Some(v), hi: v };
            let x = Operand { dims: vec![nn, c, lit(10, h), lit(11, w)], dtype: d };
            let out = Operand { dims: vec![nn, c, lit(12, oh), lit(13, ow)], dtype: d };
            let k = pool2d(u, "k", &x, &out, win);
            ("pool".into(), k, vec![x], out, Expect::None)
        }
        5 | 6 => {
            let kind = rng.pick(&[
                EdgeKind::DivZero,
                EdgeKind::MinDiv,
                EdgeKind::Overflow,
                EdgeKind::NearBound,
                EdgeKind::CastRange,
            ]);
            let rank = rng.below(3) as usize;
            let dims = shape(rng, rank);
            let (ins, out) = match kind {
                EdgeKind::DivZero | EdgeKind::MinDiv => {
                    let d = rng.pick(&[I32, I64, I8]);
                    (vec![d, d], d)
                }
                EdgeKind::Overflow | EdgeKind::NearBound => {
                    let d = rng.pick(&[I32, I8, U8, I64]);
                    (vec![d], d)
                }
                EdgeKind::CastRange => (vec![rng.pick(&[F32, F64, F16])], rng.pick(&[I32, I8, U8, I64])),
            };
            let ins: Vec<Operand> = ins.into_iter().map(|d| Operand { dims: dims.clone(), dtype: d }).collect();
            let out = Operand { dims, dtype: out };
            let expect = if kind == EdgeKind::DivZero { "DivisionByZero" } else { "IntegerOverflow" };
            let k = edge_kernel(u, "k", kind, &ins, &out);
            (format!("{kind:?}"), k, ins, out, Expect::Kind(expect))
        }
        _ => {
            let rank = 1 + rng.below(3) as usize;
            let dims = shape(rng, rank);
            let d = rng.pick(&WIDE);
            let ins: Vec<Operand> = (0..1 + rng.below(2)).map(|_| Operand { dims: dims.clone(), dtype: d }).collect();
            let out = Operand { dims, dtype: rng.pick(&WIDE) };
            let k = oob_kernel(u, "k", &ins, &out);
            ("oob".into(), k, ins, out, Expect::Kind("OpError"))
        }
    }
}

#[test]
fn shaped_kernels_round_trip_and_agree() {
    let features: Vec<&str> = "T.where(|T.vectorized(|T.unroll(|T.parallel(|T.if_then_else(|pad_temp|pool_avg|\
         T.init()|T.pow(|s0: T.int64|\"float16\"|\"uint8\"|\"int8\"|T.truncdiv(|T.truncmod(| // | % |\
         T.axis.remap(|T.axis.spatial(|T.alloc_buffer(|T.Select(|T.match_buffer(|T.Buffer((|: T.float32 = |\
         -2147483648|T.log(|T.sqrt(|\"SSR\"|\"SSSSRR\"|T_divide|T_epilogue|T.int64(0)]"
        .split('|')
        .collect();
    let mut seen = vec![0usize; features.len()];
    let mut outcomes: std::collections::BTreeMap<String, usize> = Default::default();
    for seed in 0..3000u64 {
        let mut rng = Rng::new(seed);
        let (what, k, ins, out, expect) = random_kernel(&mut rng, true);
        let text = printed(&k).unwrap_or_else(|e| panic!("seed {seed} ({what}): round trip: {e}"));
        for (n, f) in seen.iter_mut().zip(&features) {
            *n += usize::from(text.contains(f));
        }
        for _ in 0..3 {
            let vals = values(&mut rng);
            let arrays: Vec<NDArray> = ins.iter().map(|o| array(&mut rng, o, &vals)).collect();
            let zero = Operand { dims: out.dims.clone(), dtype: out.dtype };
            let y = array(&mut rng, &zero, &vals);
            let (o, e) = run_both(&k, &arrays, &y, &vals);
            let show = || format!("seed {seed} ({what}) dims {vals:?}\n{text}\noracle {o:?}\nengine {e:?}");
            match (&o, &e) {
                (Ok(a), Ok(b)) => {
                    let same =
                        oracle::eval::literal::values_equal(&Value::tensor(a.clone()), &Value::tensor(b.clone()), 1e-6);
                    assert!(same, "outputs differ: {}", show());
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "{}", show()),
                _ => panic!("one side failed: {}", show()),
            }
            match (expect, &o) {
                (_, Ok(_)) => {}
                (Expect::Kind(want), Err(got)) => assert_eq!(*got, want, "{}", show()),
                (Expect::None, Err(_)) => panic!("a safe kernel failed: {}", show()),
            }
            let key = format!("{what}: {}", o.as_ref().map_or_else(|k| k.to_string(), |_| "value".into()));
            *outcomes.entry(key).or_default() += 1;
        }
    }
    for (n, f) in seen.iter().zip(&features) {
        assert!(*n > 0, "no kernel prints {f}");
    }
    // Every edge kind both fails and succeeds on some inputs.
    for what in ["DivZero", "MinDiv", "Overflow", "NearBound", "CastRange", "oob"] {
        assert!(outcomes.keys().any(|k| k.starts_with(what) && !k.ends_with("value")), "{what}: {outcomes:?}");
        assert!(outcomes.contains_key(&format!("{what}: value")), "{what}: {outcomes:?}");
    }
}

#[test]
fn no_bytes_and_odd_arguments_give_valid_kernels() {
    let e = |id, lit| Ext { id, lit, hi: 4 };
    let a = Operand { dims: vec![e(0, None), e(1, Some(3))], dtype: F32 };
    let scalar = Operand { dims: vec![], dtype: I32 };
    let bytes: Vec<u8> = (0..=255).collect();
    for data in [&[][..], &bytes[..], &[0xFF; 64][..]] {
        let u = &mut Unstructured::new(data);
        let ks = [
            kernels::ewise(u, "k", std::slice::from_ref(&a), &a, true),
            kernels::ewise(u, "k", &[], &scalar, false),
            kernels::reduce(u, "k", &a, &[0, 1], false, F32),
            kernels::reduce(u, "k", &a, &[7], true, U8),
            kernels::matmul(u, "k", &a, &a),
            kernels::matmul(u, "k", &scalar, &a),
            pool2d(u, "k", &a, &a, Window { kh: 0, kw: 9, sh: 0, sw: 1, ph: 5, pw: 0 }),
            edge_kernel(u, "k", EdgeKind::DivZero, std::slice::from_ref(&scalar), &a),
            edge_kernel(u, "k", EdgeKind::CastRange, std::slice::from_ref(&a), &a),
            oob_kernel(u, "k", std::slice::from_ref(&scalar), &scalar),
            oob_kernel(u, "k", std::slice::from_ref(&a), &a),
        ];
        for k in &ks {
            printed(k).unwrap_or_else(|e| panic!("round trip: {e}"));
        }
    }
}

#[test]
#[ignore]
fn print_samples() {
    for seed in 0..40u64 {
        let mut rng = Rng::new(seed);
        let (what, k, ..) = random_kernel(&mut rng, true);
        println!("### {what}\n{}", printed(&k).unwrap_or_default());
    }
}

/// The near-bound overflow kernels ([`super::bounds`]) end at exactly `MAX + δ` or
/// `MIN - δ`: run over every index in both engines, they overflow exactly when `δ > 0`
/// (where the plan's extremes are exact), and agree everywhere.
#[test]
fn near_bound_kernels_overflow_exactly_past_the_bound() {
    for d in [I8, I32, I64, U8] {
        for imax in [0i64, 1, 4, 9] {
            let n = imax as u64 + 1;
            let a = new_buffer("A", vec![idx(n as i64)], d);
            let b = new_buffer("B", vec![idx(n as i64)], d);
            for (p, exact) in super::bounds::Plan::every(d, imax) {
                let i = PrimVar::new("i", I64);
                let value = super::bounds::near_bound(p, d, imax, var(&i), load(&a, &[var(&i)]));
                let body = nest(std::slice::from_ref(&i), &[idx(n as i64)], store(&b, &[var(&i)], value));
                let func = finish("k", vec![buffer_param(&a), buffer_param(&b)], vec![body]);
                let k = Kernel { func, scalars: Vec::new() };
                let full = if d.is_uint() { 255 } else { 8 };
                let input = NDArray::from_scalars(d, vec![n], &vec![Scalar::Int(full); n as usize]).expect("fits");
                let out = NDArray::from_scalars(d, vec![n], &vec![Scalar::Int(0); n as usize]).expect("fits");
                let (o, e) = run_both(&k, &[input], &out, &[]);
                if let Err(why) = printed(&k) {
                    panic!("{d} imax {imax} {p:?}: {why}");
                }
                let show = || {
                    format!("{d} imax {imax} {p:?}\n{}\noracle {o:?}\nengine {e:?}", printed(&k).unwrap_or_default())
                };
                assert_eq!(o, e, "{}", show());
                let overflowed = o == Err("IntegerOverflow");
                assert!(o.is_ok() || overflowed, "{}", show());
                if exact {
                    assert_eq!(overflowed, p.delta() > 0, "{}", show());
                }
            }
        }
    }
}
