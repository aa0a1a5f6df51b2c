//! A micro-measurement of the vectorized kernels on each instruction set the CPU has,
//! and of splitting across threads: `cargo run -p optimized --release --example
//! simd_bench [elements]` (default 2^24). Prints the best of 5 runs per case.

use optimized::kernels::elementwise::{Arith, Unary};
use optimized::kernels::lanes::Lane;
use optimized::kernels::simd::{self, Isa};
use optimized::kernels::{lower, KernelCx, Lowered, Lowering};
use optimized::{DType, Memory, Tensor, Value};
use spec_model::grammar::{AttrValue, Attrs};
use spec_model::ops::Op;
use spec_model::Span;
use std::rc::Rc;
use std::time::{Duration, Instant};

fn time(op: Op, attrs: &Attrs, args: &[Value], mem: &Rc<Memory>, threads: usize) -> Duration {
    let statics = vec![None; args.len()];
    let Lowered::Kernel(k) = lower(&Lowering { op, attrs, args: &statics }) else { panic!("a kernel") };
    let cx = KernelCx {
        op,
        span: Span::SYNTHETIC,
        memory: mem,
        threads,
        parallel_min: optimized::kernels::simd::PARALLEL_MIN_ELEMENTS,
    };
    (0..5)
        .map(|_| {
            let t = Instant::now();
            let r = k.run(&cx, args).expect("runs");
            let d = t.elapsed();
            drop(r);
            d
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1 << 24);
    let mem = Memory::new(1 << 34);
    let xs: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 100.0 - 5.0).collect();
    let ys: Vec<f32> = (0..n).map(|i| ((i * 104_729) % 997) as f32 / 50.0 + 0.5).collect();
    let x = Value::tensor(Tensor::from_slice(DType::F32, &[n as u64], &xs, &mem).unwrap());
    let y = Value::tensor(Tensor::from_slice(DType::F32, &[n as u64], &ys, &mem).unwrap());
    let m = Value::tensor(Tensor::from_slice(DType::F32, &[(n / 1024) as u64, 1024], &xs, &mem).unwrap());
    let none = Attrs::default();
    let mut to_i32 = Attrs::default();
    to_i32.insert("dtype", AttrValue::Str("int32".into()));
    let mut axis0 = Attrs::default();
    axis0.insert("axis", AttrValue::Int(0));
    let cases: Vec<(&str, Op, &Attrs, Vec<Value>)> = vec![
        ("add", Op::Add, &none, vec![x.clone(), y.clone()]),
        ("maximum", Op::Maximum, &none, vec![x.clone(), y.clone()]),
        ("less", Op::Less, &none, vec![x.clone(), y.clone()]),
        ("exp", Op::Exp, &none, vec![x.clone()]),
        ("sigmoid", Op::Sigmoid, &none, vec![x.clone()]),
        ("astype i32", Op::Astype, &to_i32, vec![x.clone()]),
        ("sum (all)", Op::Sum, &none, vec![x.clone()]),
        ("max (all)", Op::Max, &none, vec![x.clone()]),
        ("sum axis 0", Op::Sum, &axis0, vec![m.clone()]),
        ("softmax rows", Op::Softmax, &none, vec![m.clone()]),
        ("transpose", Op::PermuteDims, &none, vec![m.clone()]),
    ];
    println!("{n} float32 elements; best of 5 (ms)");
    let isas = simd::available();
    print!("{:<14}", "");
    for i in &isas {
        print!("{:>10}", i.name());
    }
    println!("{:>14}", "avx 2 threads");
    for (name, op, attrs, args) in &cases {
        print!("{name:<14}");
        for &i in &isas {
            let d = simd::with_isa(i, || time(*op, attrs, args, &mem, 1));
            print!("{:>10.2}", d.as_secs_f64() * 1e3);
        }
        let d = simd::with_isa(Isa::Avx512, || time(*op, attrs, args, &mem, 2));
        println!("{:>14.2}", d.as_secs_f64() * 1e3);
    }
    // The loops alone, on buffers allocated once (the kernels above also allocate and
    // zero-fill a fresh result, whose page faults cost as much as the loop).
    println!("loops only, preallocated (ms):");
    let mut out = vec![0f32; n];
    out.copy_from_slice(&xs);
    let best = |f: &mut dyn FnMut()| {
        (0..5)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .min()
            .unwrap_or_default()
            .as_secs_f64()
            * 1e3
    };
    for &i in &isas {
        let add =
            simd::with_isa(i, || best(&mut || simd::binary(Arith::Add, &mut out, Lane::Run(&xs), Lane::Run(&ys))));
        let exp = simd::with_isa(i, || best(&mut || simd::unary(Unary::Exp, &mut out, &xs)));
        let lvl = simd::with_isa(i, simd::level);
        let mut total = 0.0;
        let sum = best(&mut || {
            let f =
                simd::loops::FoldRow { init: 0.0, id: 0.0, row: &xs, reassociate: true, f: &|a: f32, b: f32| a + b };
            total += simd::run(lvl, f);
        });
        println!("  {:<9} add {add:>7.2}  exp {exp:>7.2}  sum {sum:>7.2}  ({total})", i.name());
    }
    // In the first-level cache (4096 elements, 4096 times): the arithmetic, not memory.
    println!("loops in cache, 4096 x 4096 elements (ms):");
    let k = 4096;
    let (xk, yk, mut ok) = (&xs[..k], &ys[..k], vec![0f32; k]);
    for &i in &isas {
        let mut rep = |f: &mut dyn FnMut(&mut [f32])| {
            best(&mut || {
                for _ in 0..k {
                    f(&mut ok);
                }
            })
        };
        let add = simd::with_isa(i, || rep(&mut |o| simd::binary(Arith::Add, o, Lane::Run(xk), Lane::Run(yk))));
        let max = simd::with_isa(i, || rep(&mut |o| simd::binary(Arith::Maximum, o, Lane::Run(xk), Lane::Run(yk))));
        let exp = simd::with_isa(i, || rep(&mut |o| simd::unary(Unary::Exp, o, xk)));
        let lvl = simd::with_isa(i, simd::level);
        let sum = rep(&mut |o| {
            let f = simd::loops::FoldRow { init: 0.0, id: 0.0, row: xk, reassociate: true, f: &|a: f32, b: f32| a + b };
            o[0] += simd::run(lvl, f);
        });
        println!("  {:<9} add {add:>7.2}  maximum {max:>7.2}  exp {exp:>7.2}  sum {sum:>7.2}", i.name());
    }
    // The threshold: add on 1 and 2 threads around PARALLEL_MIN_ELEMENTS.
    println!("add, 1 vs 2 threads (µs):");
    for shift in 14..=20 {
        let k = 1usize << shift;
        let a = Value::tensor(Tensor::from_slice(DType::F32, &[k as u64], &xs[..k], &mem).unwrap());
        let b = Value::tensor(Tensor::from_slice(DType::F32, &[k as u64], &ys[..k], &mem).unwrap());
        let one = time(Op::Add, &none, &[a.clone(), b.clone()], &mem, 1);
        let two = {
            // Below the threshold the kernel does not split; measure the split directly.
            let mut out = vec![0f32; k];
            let t = Instant::now();
            for _ in 0..20 {
                simd::parallel_chunks_mut(2, &mut out, 1, |at, o| {
                    let (a, b) = (Lane::Run(&xs[at..at + o.len()]), Lane::Run(&ys[at..at + o.len()]));
                    simd::binary(Arith::Add, o, a, b)
                });
            }
            t.elapsed() / 20
        };
        println!("  2^{shift}: {:>9.1} {:>9.1}", one.as_secs_f64() * 1e6, two.as_secs_f64() * 1e6);
    }
}
