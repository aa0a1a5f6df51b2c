//! The engine's TIR executor (`optimized::tir::TirFunc`, native code and interpreter) agrees with the reference
//! interpreter (`oracle::eval::tir::run_prim_func`, OP-call_tir) on thousands of
//! generated PrimFuncs and on every `T.prim_func` of the corpus.
//!
//! Both sides run on equal copies of random tensors (within the generator's safe range
//! and outside it: extremes, NaN, infinities, zeros, so the overflow, division and trap
//! paths run), sometimes with a shape or dtype that does not fit, with one tensor
//! passed for several parameters, or with little fuel. They must end alike: the same
//! error kind or both done, with the same fuel left and equal tensors (bitwise for
//! integers and bools; floats bitwise in practice, and within 1e-6 relative by
//! contract — both sides compute with Rust's `f32`/`f64` operations). Tensors are
//! compared after errors too: both sides write in the same order before they stop.
//! A mismatch prints the seed, the PrimFunc, the arguments and both outcomes.

use arbitrary::Unstructured;
use fuzz::convert::{from_oracle, to_oracle};
use fuzz::gen::tir::{gen_kernel, KernelKind};
use optimized::tir::{TirBackend, TirFunc};
use optimized::value::Value as EValue;
use optimized::Memory;
use oracle::eval::tir::run_prim_func;
use oracle::eval::value::TensorRef;
use oracle::eval::Value as OValue;
use spec_model::grammar::tir::{Intrinsic, PrimFunc, Stmt, StmtKind, TirExpr, TirExprKind};
use spec_model::grammar::{BaseFunc, DataType, GlobalVar, IRModule, NDArray, PrimBinOp, Scalar, TensorData};
use spec_model::Span;
use std::collections::HashMap;
use std::fmt::Write;
use std::rc::Rc;

/// xorshift64*: the test's own choices, reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03 | 1)
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
    /// True with probability `num/den`.
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// The dtypes the generator's safety argument covers, and others it accepts.
const SAFE: [DataType; 5] = [DataType::FLOAT32, DataType::float(64), DataType::INT32, DataType::INT64, DataType::BOOL];
const OTHER: [DataType; 7] = [
    DataType::float(16),
    DataType::int(8),
    DataType::int(16),
    DataType::uint(8),
    DataType::uint(16),
    DataType::uint(32),
    DataType::uint(64),
];

fn dtype(rng: &mut Rng) -> DataType {
    if rng.chance(1, 8) {
        rng.pick(&OTHER)
    } else {
        rng.pick(&SAFE)
    }
}

/// How a tensor's elements are chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fill {
    /// `|v| <= 8`: the generator's contract.
    Safe,
    Zeros,
    /// Each element safe or extreme (dtype bounds, huge, NaN, infinities).
    Wild,
}

fn int_range(d: DataType) -> (i128, i128) {
    spec_model::prim_eval::int_range(d)
}

fn element(rng: &mut Rng, d: DataType, fill: Fill) -> Scalar {
    let wild = fill == Fill::Wild && rng.chance(1, 2);
    if fill == Fill::Zeros {
        return if d.is_bool() {
            Scalar::Bool(false)
        } else if d.is_float() {
            Scalar::Float(0.0)
        } else {
            Scalar::Int(0)
        };
    }
    if d.is_bool() {
        return Scalar::Bool(rng.chance(1, 2));
    }
    if d.is_float() {
        if wild {
            let xs = [0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e30, -1e30, 1e-30, 65504.0, 3e38, 1e300];
            return Scalar::Float(rng.pick(&xs));
        }
        return Scalar::Float((rng.below(65) as f64 - 32.0) / 4.0);
    }
    let (lo, hi) = int_range(d);
    let v = if wild {
        let xs = [lo, hi, 0, 1, -1, 100, 1 << 15, 1 << 20, (1 << 31) - 1, -(1 << 31), 1 << 40];
        rng.pick(&xs)
    } else {
        rng.below(17) as i128 - 8
    };
    Scalar::Int(v.clamp(lo, hi))
}

fn ndarray(rng: &mut Rng, d: DataType, shape: &[u64], fill: Fill) -> NDArray {
    let n = shape.iter().product::<u64>() as usize;
    let values: Vec<Scalar> = (0..n).map(|_| element(rng, d, fill)).collect();
    NDArray::from_scalars(d, shape.to_vec(), &values).expect("elements fit their dtype")
}

/// The arguments of one run, given to both sides.
struct Case {
    what: String,
    func: PrimFunc,
    arrays: Vec<NDArray>,
    /// Which array each tensor parameter gets (several may share one: aliasing).
    which: Vec<usize>,
    scalars: Vec<i64>,
    fuel: u64,
}

/// How the two sides ended: the error kind (or done), the fuel left, and the tensors.
struct Outcome {
    result: Result<(), String>,
    kind: Option<&'static str>,
    fuel: u64,
    arrays: Vec<NDArray>,
}

fn run_oracle(c: &Case) -> Outcome {
    let store: Vec<TensorRef> =
        c.arrays.iter().map(|a| Rc::new(oracle::eval::memory::Tracked::new(a.clone()))).collect();
    let tensors: Vec<TensorRef> = c.which.iter().map(|&i| store[i].clone()).collect();
    let mut fuel = c.fuel;
    let r = run_prim_func(&c.func, "k", &tensors, &c.scalars, Span::SYNTHETIC, &mut fuel);
    Outcome {
        kind: r.as_ref().err().map(|e| e.kind.name()),
        result: r.map_err(|e| e.to_string()),
        fuel,
        arrays: store.iter().map(|t| t.borrow().clone()).collect(),
    }
}

fn run_engine(c: &Case, backend: TirBackend) -> Outcome {
    let memory = Memory::new(1 << 30);
    let store: Vec<Rc<optimized::Tensor>> = c
        .arrays
        .iter()
        .map(|a| match from_oracle(&OValue::tensor(a.clone()), &memory) {
            Some(EValue::Tensor(t)) => t,
            _ => panic!("{}: the array does not convert", c.what),
        })
        .collect();
    let tensors: Vec<_> = c.which.iter().map(|&i| store[i].clone()).collect();
    let mut fuel = c.fuel;
    let f = TirFunc::compile(&c.func, "k", backend);
    let r = f.run(&tensors, &c.scalars, &mut fuel, Span::SYNTHETIC, &memory);
    let arrays = store
        .iter()
        .map(|t| match to_oracle(&EValue::Tensor(t.clone())) {
            Some(OValue::Tensor(a)) => a.borrow().clone(),
            _ => panic!("{}: the tensor does not convert back", c.what),
        })
        .collect();
    Outcome { kind: r.as_ref().err().map(|e| e.kind.name()), result: r.map_err(|e| e.to_string()), fuel, arrays }
}

/// Floats equal bitwise, both NaN, or within 1e-6 relative (counted in `inexact`).
fn same_float(a: f64, b: f64, inexact: &mut usize) -> bool {
    if a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()) {
        return true;
    }
    let ok = (a - b).abs() <= 1e-6 * a.abs().max(b.abs());
    *inexact += usize::from(ok);
    ok
}

fn same_array(a: &NDArray, b: &NDArray, inexact: &mut usize) -> Result<(), String> {
    if a.dtype != b.dtype || a.shape != b.shape || a.data.len() != b.data.len() {
        return Err(format!("{} {:?} vs {} {:?}", a.dtype, a.shape, b.dtype, b.shape));
    }
    for i in 0..a.data.len() {
        let same = match (a.data.get(i), b.data.get(i)) {
            (Scalar::Float(x), Scalar::Float(y)) => same_float(x, y, inexact),
            (x, y) => x == y,
        };
        if !same {
            return Err(format!("element {i}: {} vs {}", a.data.element_text(i), b.data.element_text(i)));
        }
    }
    Ok(())
}

fn show_array(a: &NDArray) -> String {
    let items: Vec<String> = (0..a.data.len()).map(|i| a.data.element_text(i)).collect();
    format!("{} {:?} [{}]", a.dtype, a.shape, items.join(", "))
}

fn printed(f: &PrimFunc) -> String {
    let m = IRModule {
        name: "Module".into(),
        functions: vec![(GlobalVar::new("k"), BaseFunc::Tir(Rc::new(f.clone())))],
        attrs: Default::default(),
        span: Span::SYNTHETIC,
    };
    spec_model::text::print_module(&m, spec_model::text::DEFAULT_WIDTH)
}

/// Runs `c` on both sides: `None` when they agree, else the reproducible report.
fn compare(c: &Case, inexact: &mut usize, tally: &mut HashMap<&'static str, usize>) -> Option<String> {
    let o = run_oracle(c);
    let mut why = Vec::new();
    let mut results = Vec::new();
    // Both of the engine's backends: native code where it compiles, and the interpreter.
    for backend in [TirBackend::Native, TirBackend::Interpreter] {
        let e = run_engine(c, backend);
        if o.kind != e.kind {
            why.push(format!("{backend:?} outcome: oracle {:?}, engine {:?}", o.result, e.result));
        }
        if o.fuel != e.fuel {
            why.push(format!("{backend:?} fuel left: oracle {}, engine {}", o.fuel, e.fuel));
        }
        for (k, (a, b)) in o.arrays.iter().zip(&e.arrays).enumerate() {
            if let Err(d) = same_array(a, b, inexact) {
                why.push(format!("{backend:?} tensor {k}: {d}"));
            }
        }
        results.push((backend, e.result));
    }
    *tally.entry(o.kind.unwrap_or("ok")).or_default() += 1;
    if why.is_empty() {
        return None;
    }
    let mut s = format!("{}: {}\n", c.what, why.join("; "));
    let _ = writeln!(s, "oracle: {:?}", o.result);
    for (backend, r) in &results {
        let _ = writeln!(s, "engine ({backend:?}): {r:?}");
    }
    let _ = writeln!(s, "fuel {}, scalars {:?}, tensors (parameter -> array) {:?}", c.fuel, c.scalars, c.which);
    for (k, a) in c.arrays.iter().enumerate() {
        let _ = writeln!(s, "  array {k}: {}", show_array(a));
    }
    s.push_str(&printed(&c.func));
    Some(s)
}

/// Fuel: mostly plenty, sometimes a little (so both run out at the same point).
fn fuel(rng: &mut Rng) -> u64 {
    if rng.chance(1, 6) {
        rng.below(300)
    } else {
        1_000_000
    }
}

/// One generated kernel and its arguments, from `seed`.
fn generated_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let bytes = fuzz::seed_bytes(seed);
    let kind = if rng.chance(1, 2) { KernelKind::Elementwise } else { KernelKind::ReduceLast };
    let rank = (rng.below(4) as usize).max(usize::from(kind == KernelKind::ReduceLast));
    let ins: Vec<DataType> = (0..1 + rng.below(3)).map(|_| dtype(&mut rng)).collect();
    let out = dtype(&mut rng);
    // A quarter leave part of the output unwritten (loop from 1, `T.where`).
    let partial = rng.chance(1, 4);
    let func = gen_kernel(&mut Unstructured::new(&bytes), "k", kind, rank, &ins, out, partial);

    let shape: Vec<u64> = (0..rank).map(|_| if rng.chance(1, 10) { 0 } else { 1 + rng.below(4) }).collect();
    let mut out_shape = if kind == KernelKind::ReduceLast { shape[..rank - 1].to_vec() } else { shape.clone() };
    let mut out_dtype = out;
    let mut arrays: Vec<NDArray> = Vec::new();
    for &d in &ins {
        let fill = match rng.below(10) {
            0..=5 => Fill::Safe,
            6 => Fill::Zeros,
            _ => Fill::Wild,
        };
        arrays.push(ndarray(&mut rng, d, &shape, fill));
    }
    // Sometimes an output that does not fit the kernel.
    if rng.chance(1, 20) {
        match out_shape.first_mut() {
            Some(d) if rng.chance(1, 2) => *d += 1,
            _ => out_dtype = dtype(&mut rng),
        }
    }
    if rng.chance(1, 40) {
        out_shape.push(1);
    }
    arrays.push(ndarray(&mut rng, out_dtype, &out_shape, Fill::Safe));
    let mut which: Vec<usize> = (0..arrays.len()).collect();
    // Aliasing: an input also passed as the output, or as another input.
    if rng.chance(1, 8) {
        let n = ins.len();
        let fits = |a: &NDArray, b: &NDArray| a.dtype == b.dtype && a.shape == b.shape;
        if let Some(i) = (0..n).find(|&i| fits(&arrays[i], &arrays[n])) {
            which[n] = i;
        } else if let Some(i) = (1..n).find(|&i| fits(&arrays[i], &arrays[0])) {
            which[i] = 0;
        }
    }
    if rng.chance(1, 50) {
        which.pop();
    }
    let mut func = func;
    let mutated = rng.chance(1, 2);
    if mutated {
        mutate_stmts(&mut func.body, &mut rng);
    }
    let ins: Vec<String> = ins.iter().map(|d| d.to_string()).collect();
    let what = format!(
        "generated seed {seed} ({kind:?}{}, rank {rank}, inputs [{}], output {out}{})",
        if partial { ", partial" } else { "" },
        ins.join(", "),
        if mutated { ", mutated" } else { "" }
    );
    Case { what, func, arrays, which, scalars: vec![], fuel: fuel(&mut rng) }
}

/// Dtypes a mutation may cast to: with storage, and without (no lanes, odd widths).
const CAST_TO: [DataType; 8] = [
    DataType::INT32,
    DataType::uint(8),
    DataType::float(16),
    DataType::BOOL,
    DataType::int(7),
    DataType::float(8),
    DataType { code: spec_model::grammar::TypeCode::Int, bits: 32, lanes: 4 },
    DataType::handle(),
];

/// Changes a generated kernel beyond what the generator makes (literals, operators,
/// intrinsics, casts, indices, dropped statements), so the error paths run: division
/// by zero, literals outside their dtype, wrong arities, dtypes without storage, out of
/// bounds, unallocated buffers, domains that miss.
fn mutate_stmts(ss: &mut Vec<Stmt>, rng: &mut Rng) {
    if !ss.is_empty() && rng.chance(1, 25) {
        ss.remove(rng.below(ss.len() as u64) as usize);
    }
    for s in ss {
        match &mut s.kind {
            StmtKind::For { begin, end, body, .. } => {
                mutate_expr(begin, rng);
                mutate_expr(end, rng);
                mutate_stmts(body, rng);
            }
            StmtKind::BufferStore { indices, value, .. } => {
                indices.iter_mut().for_each(|i| mutate_index(i, rng));
                mutate_expr(value, rng);
            }
            StmtKind::IfThenElse { cond, then_body, else_body } => {
                mutate_expr(cond, rng);
                mutate_stmts(then_body, rng);
                mutate_stmts(else_body, rng);
            }
            StmtKind::Block(b) => {
                for iv in &mut b.iter_vars {
                    mutate_expr(&mut iv.begin, rng);
                    mutate_expr(&mut iv.end, rng);
                    mutate_expr(&mut iv.binding, rng);
                }
                if rng.chance(1, 20) {
                    b.init = None;
                }
                if let Some(init) = &mut b.init {
                    mutate_stmts(init, rng);
                }
                mutate_stmts(&mut b.body, rng);
            }
            StmtKind::AllocBuffer(_) => {}
            StmtKind::Let { value, .. } | StmtKind::Evaluate(value) => mutate_expr(value, rng),
        }
    }
}

/// Sometimes `i + 1` for an index `i` (out of bounds at the last element).
fn mutate_index(e: &mut TirExpr, rng: &mut Rng) {
    if rng.chance(1, 30) {
        let one = TirExpr::new(TirExprKind::IntImm { value: 1, dtype: e.dtype() }, e.span);
        *e = TirExpr::new(TirExprKind::Binary { op: PrimBinOp::Add, a: e.clone(), b: one }, e.span);
    }
    mutate_expr(e, rng);
}

fn mutate_expr(e: &mut TirExpr, rng: &mut Rng) {
    match &mut *e.kind {
        TirExprKind::Var(_) => {}
        TirExprKind::IntImm { value, .. } => {
            if rng.chance(1, 8) {
                *value = rng.pick(&[0, 0, 0, -1, 1, 2, 7, 100, 1 << 31, -(1 << 40), i64::MAX, i64::MIN]);
            }
        }
        TirExprKind::FloatImm { value, .. } => {
            if rng.chance(1, 8) {
                value.0 = rng.pick(&[f64::NAN, f64::INFINITY, 0.0, -0.0, 1e30, 1e-300]);
            }
        }
        TirExprKind::Binary { op, a, b } => {
            if rng.chance(1, 15) {
                *op = rng.pick(&PrimBinOp::ALL);
            }
            mutate_expr(a, rng);
            mutate_expr(b, rng);
        }
        TirExprKind::Not(a) => mutate_expr(a, rng),
        TirExprKind::Select { cond, then_value, else_value } => {
            mutate_expr(cond, rng);
            mutate_expr(then_value, rng);
            mutate_expr(else_value, rng);
        }
        TirExprKind::Cast { dtype, value } => {
            if rng.chance(1, 15) {
                *dtype = rng.pick(&CAST_TO);
            }
            mutate_expr(value, rng);
        }
        TirExprKind::BufferLoad { indices, .. } => indices.iter_mut().for_each(|i| mutate_index(i, rng)),
        TirExprKind::Call { op, args } => {
            if rng.chance(1, 15) {
                *op = rng.pick(&Intrinsic::ALL);
            }
            if rng.chance(1, 40) {
                args.pop();
            }
            args.iter_mut().for_each(|a| mutate_expr(a, rng));
        }
    }
}

fn report(mismatches: &[String], runs: usize) {
    if !mismatches.is_empty() {
        let shown: Vec<&str> = mismatches.iter().take(5).map(String::as_str).collect();
        panic!("{} of {runs} runs disagree; the first:\n\n{}", mismatches.len(), shown.join("\n\n"));
    }
}

#[test]
fn generated_prim_funcs_agree() {
    const SEEDS: u64 = 10_000;
    let (mut mismatches, mut inexact, mut tally) = (Vec::new(), 0, HashMap::new());
    for seed in 0..SEEDS {
        let c = generated_case(seed);
        mismatches.extend(compare(&c, &mut inexact, &mut tally));
    }
    eprintln!("generated: {SEEDS} runs, outcomes {tally:?}, {inexact} floats equal only within 1e-6");
    report(&mismatches, SEEDS as usize);
    // The runs reach the error paths, not only success.
    for kind in ["ok", "OpError", "IntegerOverflow", "DivisionByZero", "FuelExhausted"] {
        assert!(tally.get(kind).copied().unwrap_or(0) > 0, "no run ended with {kind}: {tally:?}");
    }
}

fn rx_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rx_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rx") {
            out.push(p);
        }
    }
}

/// Arguments for a corpus PrimFunc: each shape variable (and the scalar parameter of
/// the same variable) gets one small value; a literal dimension its value; any other
/// dimension a guess (the binding check then fails alike on both sides).
fn corpus_case(f: &PrimFunc, what: String, rng: &mut Rng, fill: Fill) -> Case {
    let mut values: HashMap<u64, i64> = HashMap::new();
    let mut small = |rng: &mut Rng, id: u64| *values.entry(id).or_insert_with(|| rng.below(5) as i64);
    let (mut arrays, mut scalars) = (Vec::new(), Vec::new());
    for p in f.params.iter().filter(|p| p.buffer.is_none() && p.var.dtype() != DataType::handle()) {
        let d = p.var.dtype();
        scalars.push(if d.is_int() || d.is_uint() { small(rng, p.var.id()) } else { rng.below(3) as i64 });
    }
    for p in &f.params {
        match &p.buffer {
            Some(b) => {
                let shape: Vec<u64> = b
                    .shape()
                    .iter()
                    .map(|d| match &*d.kind {
                        TirExprKind::IntImm { value, .. } => (*value).clamp(0, 64) as u64,
                        TirExprKind::Var(v) => small(rng, v.id()) as u64,
                        _ => 1 + rng.below(3),
                    })
                    .collect();
                // A dtype without storage cannot be passed; float32 then fails alike.
                let dt = if TensorData::empty(b.dtype()).is_some() { b.dtype() } else { DataType::FLOAT32 };
                arrays.push(ndarray(rng, dt, &shape, fill));
            }
            None if p.var.dtype() == DataType::handle() => arrays.push(ndarray(rng, DataType::FLOAT32, &[1], fill)),
            None => {}
        }
    }
    let which = (0..arrays.len()).collect();
    Case { what, func: f.clone(), arrays, which, scalars, fuel: fuel(rng) }
}

#[test]
fn corpus_prim_funcs_agree() {
    let mut files = Vec::new();
    rx_files(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus"), &mut files);
    files.sort();
    let (mut mismatches, mut inexact, mut tally) = (Vec::new(), 0, HashMap::new());
    let (mut funcs, mut runs) = (0, 0);
    for path in files {
        let Ok(src) = std::fs::read_to_string(&path) else { continue };
        let Ok(m) = spec_model::text::parse_module(&src) else { continue };
        for (gv, f) in m.prim_funcs() {
            funcs += 1;
            for round in 0..24u64 {
                let mut rng = Rng::new(round * 7919 + funcs);
                let fill = [Fill::Safe, Fill::Safe, Fill::Zeros, Fill::Wild][round as usize % 4];
                let what = format!("{} `{}` round {round}", path.display(), gv.name);
                let c = corpus_case(f, what, &mut rng, fill);
                mismatches.extend(compare(&c, &mut inexact, &mut tally));
                runs += 1;
            }
        }
    }
    eprintln!("corpus: {funcs} PrimFuncs, {runs} runs, outcomes {tally:?}, {inexact} floats equal only within 1e-6");
    assert!(funcs > 20, "only {funcs} PrimFuncs in the corpus");
    report(&mismatches, runs);
    assert!(tally.get("ok").copied().unwrap_or(0) > runs / 4, "too few runs succeed: {tally:?}");
}
