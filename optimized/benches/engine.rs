//! `cargo bench -p optimized`: the programs of `bench/` through the library
//! (`parse_module`, `Engine::compile`, `Executable::run`), on inputs made here from a
//! fixed seed, so no Python is needed. `scripts/bench-peers` measures the same programs
//! from the command line side by side with ONNX Runtime and NumPy; this is the quick
//! loop for someone changing a kernel. Threads: `RELAX_THREADS` (default 1).
//!
//! Sample counts are criterion's minimum (10) with short measurement times, so the
//! whole run takes a minute or two; `-- NAME` runs one benchmark.
//!
//! The `tir_*` benchmarks are PrimFuncs run by `R.call_tir` (a 256³ matmul, the 16M add
//! of `add_16m`, a row sum over (4096, 4096)), with a fuel budget of 10^12: the default
//! 10M (one unit per TIR statement and loop iteration) stops their ~50M-unit loops.
//! `RELAX_TIR=interp cargo bench -p optimized -- tir_` times the engine's TIR
//! interpreter instead of its native code: each call is then seconds, so criterion's 10
//! samples take about a minute per benchmark (as they do in a build without native code).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use optimized::{Engine, Executable, Limits, Tensor, Value};
use std::time::Duration;

/// A deterministic generator of test values (a 64-bit LCG; the quality of randomness
/// does not matter, only that the values are fixed and varied).
struct Lcg(u64);

impl Lcg {
    /// A float in [lo, hi).
    fn next(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((self.0 >> 40) as f32 / (1u64 << 24) as f32)
    }

    fn tensor(&mut self, shape: &[u64], lo: f32, hi: f32) -> Value {
        let n = shape.iter().product::<u64>() as usize;
        let values: Vec<f32> = (0..n).map(|_| self.next(lo, hi)).collect();
        Value::tensor(Tensor::new::<f32>(shape, &values).expect("the shape holds the values"))
    }
}

fn compile(src: &str) -> Executable {
    let module = spec_model::text::parse_module(src).expect("a bench/ program parses");
    Engine::compile(&module).expect("a bench/ program compiles")
}

/// Runs `main(args)` once, failing loudly if it does not return a value (a benchmark of
/// an error path would measure nothing useful).
fn run(exe: &Executable, args: &[Value], limits: Limits) -> Value {
    let outcome = exe.run("main", args, limits).expect("main exists");
    outcome.result.unwrap_or_else(|e| panic!("main fails: {e:?}"))
}

/// One benchmark: `name` runs `src`'s `main` on `args`; `elements` is the element count
/// to report throughput in (the big tensor of a streaming benchmark), if any.
fn bench(c: &mut Criterion, name: &str, src: &str, args: Vec<Value>, elements: Option<u64>) {
    bench_with(c, name, src, args, elements, Limits::default());
}

/// `bench` with a fuel budget for the TIR programs, whose loops take ~50M units of fuel.
fn bench_tir(c: &mut Criterion, name: &str, src: &str, args: Vec<Value>, elements: Option<u64>) {
    bench_with(c, name, src, args, elements, Limits { fuel: 1_000_000_000_000, ..Limits::default() });
}

fn bench_with(c: &mut Criterion, name: &str, src: &str, args: Vec<Value>, elements: Option<u64>, limits: Limits) {
    let exe = compile(src);
    run(&exe, &args, limits);
    let mut group = c.benchmark_group("engine");
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    if let Some(n) = elements {
        group.throughput(Throughput::Elements(n));
    }
    group.bench_function(BenchmarkId::new(name, format!("{}t", limits.threads)), |b| {
        b.iter(|| run(&exe, &args, limits))
    });
    group.finish();
}

fn programs(c: &mut Criterion) {
    let mut g = Lcg(0x5eed);
    let mlp = include_str!("../../bench/mlp.rx");
    // Weights scaled as a trained layer's (about 1/sqrt(fan-in)), so activations stay O(1).
    let weights = [
        g.tensor(&[784, 512], -0.05, 0.05),
        g.tensor(&[512], -0.1, 0.1),
        g.tensor(&[512, 512], -0.06, 0.06),
        g.tensor(&[512], -0.1, 0.1),
        g.tensor(&[512, 10], -0.06, 0.06),
        g.tensor(&[10], -0.1, 0.1),
    ];
    for batch in [1, 32] {
        let mut args = vec![g.tensor(&[batch, 784], 0.0, 1.0)];
        args.extend(weights.iter().cloned());
        bench(c, &format!("mlp_b{batch}"), mlp, args, None);
    }
    const BIG: [u64; 2] = [4096, 4096];
    let x = g.tensor(&BIG, -1.0, 1.0);
    let b = g.tensor(&[4096], -1.0, 1.0);
    let cv = g.tensor(&[4096], 0.5, 1.5);
    let n = Some(BIG[0] * BIG[1]);
    bench(c, "add_16m", include_str!("../../bench/add.rx"), vec![x.clone(), b.clone()], n);
    bench(c, "bias_relu_16m", include_str!("../../bench/bias_relu.rx"), vec![x.clone(), b.clone()], n);
    bench(c, "chain5_16m", include_str!("../../bench/chain5.rx"), vec![x.clone(), b.clone(), cv], n);
    let s = g.tensor(&[32, 32768], -4.0, 4.0);
    bench(c, "softmax_32x32768", include_str!("../../bench/softmax.rx"), vec![s], Some(32 * 32768));
    let small = vec![g.tensor(&[4], -1.0, 1.0), g.tensor(&[4], -0.5, 0.5), g.tensor(&[4], 0.75, 1.25)];
    // Throughput in operators: criterion's elements/s is then operators/s.
    bench(c, "chain100", include_str!("../../bench/chain100.rx"), small, Some(100));
    let n = Value::tensor(Tensor::new::<i64>(&[], &[20]).expect("a scalar"));
    // fib(20) makes 21,891 calls: elements/s is calls/s.
    bench(c, "fib20", include_str!("../../bench/fib.rx"), vec![n], Some(21_891));
    // TIR PrimFuncs through R.call_tir: the add of add_16m on the same inputs (the
    // target: within 2x of add_16m), a row sum, and a 256³ matmul (criterion's
    // elements/s is then multiply-adds/s, half the flops).
    let big = Some(BIG[0] * BIG[1]);
    bench_tir(c, "tir_add_16m", include_str!("../../bench/tir_add.rx"), vec![x.clone(), b], big);
    bench_tir(c, "tir_sum_16m", include_str!("../../bench/tir_sum.rx"), vec![x], big);
    let (ma, mb) = (g.tensor(&[256, 256], -1.0, 1.0), g.tensor(&[256, 256], -1.0, 1.0));
    bench_tir(c, "tir_matmul_256", include_str!("../../bench/tir_matmul.rx"), vec![ma, mb], Some(256 * 256 * 256));
}

criterion_group!(benches, programs);
criterion_main!(benches);
