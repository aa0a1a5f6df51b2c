//! The first kernel family: round trip, checker, runs without error.

use super::*;
use oracle::eval::run::{eval_text, prepare};
use oracle::eval::{Limits, Machine};
use spec_model::grammar::{BaseFunc, GlobalVar, IRModule};
use spec_model::text::{check_round_trip, check_round_trip_in, Dialect};
use std::rc::Rc;

/// xorshift64: test inputs without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }
}

/// A random `R.const` literal of `shape` with elements of magnitude at most 8.
fn literal(rng: &mut Rng, shape: &[u64], d: DataType) -> String {
    let Some((&n, rest)) = shape.split_first() else {
        let v = rng.below(17) as i64 - 8;
        return if d.is_bool() {
            (if v > 0 { "True" } else { "False" }).to_string()
        } else if d.is_float() {
            format!("{:?}", v as f64 / [1.0, 2.0, 4.0][rng.below(3)])
        } else {
            v.to_string()
        };
    };
    let items: Vec<String> = (0..n).map(|_| literal(rng, rest, d)).collect();
    format!("[{}]", items.join(", "))
}

/// Generates one kernel and checks it: it round-trips through the printer and, called
/// from a Relax `main` on four sets of random small inputs, passes the checker and runs
/// without an error. Returns the printed module.
fn check(
    bytes: &[u8],
    kind: KernelKind,
    rank: usize,
    ins: &[DataType],
    out: DataType,
    rng: &mut Rng,
) -> Result<String, String> {
    let f = gen_prim_func(&mut Unstructured::new(bytes), "kernel", kind, rank, ins, out);
    let m = IRModule {
        name: "Module".to_string(),
        functions: vec![(GlobalVar::new("kernel"), BaseFunc::Tir(Rc::new(f)))],
        attrs: Default::default(),
        span: SP,
    };
    let printed = check_round_trip(&m)?;
    check_round_trip_in(&m, Dialect::Tvm027)?;

    let names = ["n", "m", "p"];
    let out_rank = if kind == KernelKind::ReduceLast { rank - 1 } else { rank };
    let tuple = |xs: Vec<String>| if xs.len() == 1 { format!("({},)", xs[0]) } else { format!("({})", xs.join(", ")) };
    let in_shape = tuple(names[..rank].iter().map(|n| format!("\"{n}\"")).collect());
    let params: Vec<String> =
        ins.iter().enumerate().map(|(k, d)| format!("x{k}: R.Tensor({in_shape}, \"{d}\")")).collect();
    let decls: String = names[..out_rank].iter().map(|n| format!("        {n} = T.int64()\n")).collect();
    let args = tuple((0..ins.len()).map(|k| format!("x{k}")).collect());
    let out_shape = tuple(names[..out_rank].iter().map(|n| n.to_string()).collect());
    let src = format!(
        "{printed}\n    @R.function\n    def main({}):\n{decls}        z = R.call_tir(cls.kernel, {args}, \
         out_sinfo=R.Tensor({out_shape}, \"{out}\"))\n        return z\n",
        params.join(", ")
    );
    // Each call has its own extents (1..=3; the last may be 0, an empty reduction).
    let calls: Vec<String> = (0..4)
        .map(|_| {
            let shape: Vec<u64> = (0..rank)
                .map(|k| if k + 1 == rank && rng.below(6) == 0 { 0 } else { 1 + rng.below(3) as u64 })
                .collect();
            let consts: Vec<String> =
                ins.iter().map(|&d| format!("R.const({}, \"{d}\")", literal(rng, &shape, d))).collect();
            format!("main({})", consts.join(", "))
        })
        .collect();
    // What `run_call_text` does, preparing once for all the calls (and on this
    // thread: the programs are shallow, and a big-stack thread per kernel is slow).
    let m = prepare("gen", &src)?;
    for call in &calls {
        if let Err(e) = eval_text(&mut Machine::new(&m, Limits::default()), call)? {
            return Err(format!("{call}: {e}\n{src}"));
        }
    }
    Ok(printed)
}

#[test]
fn random_kernels_round_trip_check_and_run() {
    let features: Vec<&str> = "T.alloc_buffer|T.init()|T.reads|T.Select(|T.if_then_else(|T.Cast(|T.pow(|T.exp(|\
         T.sigmoid(|T.max(|T.min(|T.truncdiv(|T.truncmod(| // | % | * |not | and | or | == | < |Y[()]|\"SSR\"|\
         \"bool\"|\"float64\""
        .split('|')
        .collect();
    let mut seen = vec![0; features.len()];
    for seed in 0..2000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let len = [0, 1 + rng.below(15), rng.below(400), rng.below(400)][rng.below(4)];
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let kind = if rng.below(2) == 0 { KernelKind::Elementwise } else { KernelKind::ReduceLast };
        let rank = rng.below(4).max(usize::from(kind == KernelKind::ReduceLast));
        let ins: Vec<DataType> = (0..1 + rng.below(3)).map(|_| DTYPES[rng.below(5)]).collect();
        let out = DTYPES[rng.below(5)];
        let printed = check(&bytes, kind, rank, &ins, out, &mut rng).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        for (n, f) in seen.iter_mut().zip(&features) {
            *n += usize::from(printed.contains(f));
        }
    }
    // The generator still reaches every construct.
    for (n, f) in seen.iter().zip(&features) {
        assert!(*n > 0, "no kernel uses {f}");
    }
}

#[test]
fn no_bytes_gives_valid_kernels() {
    let mut rng = Rng(7);
    for kind in [KernelKind::Elementwise, KernelKind::ReduceLast] {
        for rank in usize::from(kind == KernelKind::ReduceLast)..=3 {
            for (i, o) in DTYPES.iter().flat_map(|&i| DTYPES.map(|o| (i, o))) {
                check(&[], kind, rank, &[i, o], o, &mut rng).unwrap_or_else(|e| panic!("{kind:?} {rank}: {e}"));
            }
        }
    }
}

#[test]
fn arguments_outside_the_contract_do_not_panic() {
    let bytes: Vec<u8> = (0..=255).collect();
    let odd = [DataType::float(16), DataType::uint(8), DataType::int(8)];
    for (kind, rank, ins) in [
        (KernelKind::ReduceLast, 0, &[F32][..]),
        (KernelKind::Elementwise, 7, &[I32][..]),
        (KernelKind::ReduceLast, 2, &[][..]),
        (KernelKind::Elementwise, 2, &odd[..]),
    ] {
        let f = gen_prim_func(&mut Unstructured::new(&bytes), "k", kind, rank, ins, odd[0]);
        assert_eq!(f.params.len(), ins.len() + 1);
    }
}
