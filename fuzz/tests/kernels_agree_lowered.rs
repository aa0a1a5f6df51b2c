//! The lowered-memory operators (issue 19) agree between the oracle
//! (`oracle/src/eval/lowered.rs`) and the engine (`optimized/src/machine/lowered.rs`)
//! on thousands of random programs. They are not tensor kernels (the engine runs them
//! as instructions of its machine, with the module's PrimFuncs at hand), so each case
//! is a small program, checked, then run by both: a storage of a random size (bytes,
//! from a shape argument: zero, small, huge), a tensor placed in it at a random offset
//! (negative, inside, at and past the end) with a random shape and dtype, written by a
//! PrimFunc through `vm.call_tir_dyn`, killed, and a `builtin.alloc_tensor` of a random
//! (possibly negative, `m - 2`, or huge) shape. Outcomes must agree: equal values bit for bit, or
//! the same error kind (resource errors skipped); a `Crash` never agrees.
//!
//! `KERNELS_AGREE_SEED` and `KERNELS_AGREE_CASES` choose the cases.

mod agree;

use agree::{seed_and_cases, Rng};
use oracle::eval::{ErrorKind, Limits, Value};

const DEFAULT_SEED: u64 = 0x6c_6f77_6572_6564;
const DEFAULT_CASES: u64 = 2_000;

const DTYPES: [(&str, u64); 8] = [
    ("float32", 4),
    ("float64", 8),
    ("int32", 4),
    ("int64", 8),
    ("int8", 1),
    ("uint8", 1),
    ("float16", 2),
    ("bool", 1),
];

fn program(dtype: &str, rank: usize, vm: bool) -> String {
    let dims: Vec<String> = (0..rank).map(|i| format!("d{i}")).collect();
    let names: Vec<String> = dims.iter().map(|d| format!("\"{d}\"")).collect();
    let shape = dims.join(", ");
    let alloc = if vm {
        format!("R.vm.alloc_tensor(st, off, R.shape([{shape}]), R.dtype(\"{dtype}\"))")
    } else {
        format!("R.memory.alloc_tensor(st, off, R.shape([{shape}]), R.dtype(\"{dtype}\"), R.prim_value(0))")
    };
    let storage = if vm {
        "R.vm.alloc_storage(R.shape([k]), R.prim_value(0), R.dtype(\"uint8\"))"
    } else {
        "R.memory.alloc_storage(R.shape([k]), R.prim_value(0), R.str(\"global\"), R.dtype(\"float32\"))"
    };
    let tdims = if rank == 0 { "()".to_string() } else { format!("({shape},)") };
    format!(
        r#"from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tir as T


@I.ir_module
class Module:
    @T.prim_func
    def fill(a: T.handle, n: T.int64):
        A = T.match_buffer(a, (n,), "{dtype}")
        for i in range(n):
            with T.block("A"):
                vi = T.axis.spatial(n, i)
                A[vi] = T.Cast("{dtype}", vi + T.int64(1))

    @R.function(pure=False)
    def main(size: R.Shape(["k"]), off: R.Prim("int64"), s: R.Shape([{names}]), b: R.Shape(["m", "n"])):
        k = T.int64()
{decls}        m = T.int64()
        n = T.int64()
        cls = Module
        st = {storage}
        t: R.Tensor({tdims}, "{dtype}") = {alloc}
        flat = R.builtin.alloc_tensor(R.shape([m * n]), R.dtype("{dtype}"), R.prim_value(0))
        _ = R.vm.call_tir_dyn(cls.fill, (flat, R.shape([m * n])))
        u = R.builtin.alloc_tensor(R.shape([m - 2, n]), R.dtype("{dtype}"), R.prim_value(0))
        _1 = R.memory.kill_tensor(t)
        _2 = R.vm.kill_object(st)
        return (t, flat, u)
"#,
        names = names.join(", "),
        decls = dims.iter().map(|d| format!("        {d} = T.int64()\n")).collect::<String>(),
    )
}

fn dim(rng: &mut Rng) -> i64 {
    match rng.below(20) {
        0 => 1 << 40,
        1 => 0,
        _ => rng.range(1, 5),
    }
}

#[test]
fn lowered_memory_programs_agree() {
    let (seed, cases) = seed_and_cases(DEFAULT_SEED, DEFAULT_CASES);
    let (mut values, mut errors, mut skipped) = (0u64, 0u64, 0u64);
    let mut kinds = std::collections::BTreeMap::<String, u64>::new();
    let mut modules = std::collections::HashMap::new();
    for i in 0..cases {
        let mut rng = Rng(seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let (dtype, width) = rng.pick(&DTYPES);
        let rank = rng.below(3) as usize;
        let vm = rng.pct(50);
        let src = program(dtype, rank, vm);
        let m = modules
            .entry((dtype, rank, vm))
            .or_insert_with(|| oracle::eval::run::prepare("lowered", &src).unwrap_or_else(|e| panic!("{e}\n{src}")))
            .clone();
        let ds: Vec<i64> = (0..rank).map(|_| if rng.pct(90) { rng.range(0, 4) } else { dim(&mut rng) }).collect();
        let bytes = ds.iter().try_fold(width as i64, |a, &d| a.checked_mul(d.max(0))).unwrap_or(i64::MAX);
        let off = match rng.below(10) {
            0 => -rng.range(1, 9),
            1 => rng.range(0, 64),
            _ => [0, 4, 8][rng.below(3) as usize],
        };
        let size = match rng.below(10) {
            0 => rng.range(0, 64),
            1 => 1 << 50,
            2 => (off + bytes - 1).max(0),
            _ => off.max(0).saturating_add(bytes).saturating_add(rng.range(0, 9)),
        };
        let (bm, bn) = (dim(&mut rng), dim(&mut rng));
        let shape = |ds: &[i64]| format!("R.shape([{}])", ds.iter().map(i64::to_string).collect::<Vec<_>>().join(", "));
        let call = format!("main({}, R.prim_value({off}), {}, {})", shape(&[size]), shape(&ds), shape(&[bm, bn]));
        let limits = Limits { memory: 1 << 26, ..Limits::default() };
        let reference = oracle::eval::run::outcome(&m, &call, limits).expect("the call parses");
        let (entry, args) = oracle::engine::call_parts(&m, &call).expect("the call parses");
        let engine = oracle::engine::run(&m, &entry, &args, oracle::engine::limits(limits)).expect("the engine runs");
        let engine = engine.result.map_err(|e| e.kind);
        let label = format!("case {i} (KERNELS_AGREE_SEED={seed}): {call}\n{src}");
        match (&reference, &engine) {
            (Err(k), _) | (_, Err(k)) if k.is_resource() => skipped += 1,
            (Err(ErrorKind::Crash), _) | (_, Err(ErrorKind::Crash)) => panic!(
                "{label}\na crash: {reference:?} / {engine:?}",
                reference = reference.as_ref().err(),
                engine = engine.as_ref().err()
            ),
            (Err(a), Err(b)) if a == b => {
                errors += 1;
                *kinds.entry(a.name().to_string()).or_default() += 1;
            }
            (Ok(a), Ok(b)) if oracle::eval::literal::print_value(a) == oracle::eval::literal::print_value(b) => {
                values += 1
            }
            _ => {
                let show = |o: &Result<Value, ErrorKind>| {
                    o.as_ref().map_or_else(|k| format!("error {k}"), oracle::eval::literal::print_value)
                };
                panic!("{label}\noutcomes differ: oracle {}, engine {}", show(&reference), show(&engine));
            }
        }
    }
    eprintln!("{cases} programs: {values} equal values, {errors} same errors {kinds:?}, {skipped} skipped");
    assert!(values >= cases / 3, "too few values: {values}");
    for k in ["OpError", "NegativeDimension"] {
        assert!(kinds.get(k).copied().unwrap_or(0) >= cases / 100, "too few {k} errors: {kinds:?}");
    }
    assert!(skipped > 0, "no case reached the memory budget");
}
