//! The differential tester as one test: what `cargo mutants` runs against each mutant
//! of the optimized engine (`.cargo/mutants.toml`, `scripts/mutants`). A mutant is
//! caught when this test fails (or hangs, or the mutant does not build).
//!
//! `MUTATION_GATE` picks the half that judges, so that each half's worth is a number:
//!
//! * `corpus`: every `run:` line of the corpus, in the optimized engine, against the
//!   file's expected outcome (what `oracle test --engine optimized` checks);
//! * `generator`: generated programs (`fuzz-smoke`'s seeds, half of them with large
//!   tensors and long elementwise chains), the engine against the oracle (with its TIR
//!   compiled to native code, which must cover every generated kernel, and interpreted),
//!   and one fixed program whose intermediate is larger than the generator's sizes make;
//! * `both` (the default): the two.
//!
//! `MUTATION_SEEDS` sets how many programs the generator half runs (default 3000).
//! Without the variable, `cargo test` runs both halves, so the gate is itself tested.

use fuzz::invariants::{check_engine, check_eval};
use fuzz::{program_with, seed_bytes, Module};
use oracle::corpus::{collect_files, run_file_with, RunOptions, Status};
use oracle::engine::Engine;
use spec_model::grammar::{DataType, NDArray, Scalar};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

/// Whether `MUTATION_GATE` asks for this half.
fn enabled(half: &str) -> bool {
    match std::env::var("MUTATION_GATE") {
        Ok(g) if !g.is_empty() => g == half || g == "both",
        _ => true,
    }
}

#[test]
fn corpus_run_lines_pass_in_the_engine() {
    corpus_part_passes(0);
}

/// The corpus's other half of files: two tests, so a verdict runs on two threads.
#[test]
fn corpus_run_lines_pass_in_the_engine_too() {
    corpus_part_passes(1);
}

/// Every other corpus file, from the `part`-th (0 or 1), passes in the engine.
fn corpus_part_passes(part: usize) {
    if !enabled("corpus") {
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    let files = collect_files(std::slice::from_ref(&root)).expect("the corpus directory exists");
    let files: Vec<PathBuf> = files.into_iter().skip(part).step_by(2).collect();
    let engine = RunOptions { engine: Engine::Optimized, native_tir: true, ..RunOptions::default() };
    // One evaluation thread for these files: one prover, one cache.
    oracle::eval::run::on_big_stack(|| corpus_files_pass(&files, engine)).expect("an evaluation thread");
}

/// Every file's `run:` lines pass in the engine (the first few failures say enough).
fn corpus_files_pass(files: &[PathBuf], engine: RunOptions) {
    let mut failed = Vec::new();
    for path in files {
        let report = catch_unwind(AssertUnwindSafe(|| run_file_with(path, engine)));
        match report.map(|r| r.status) {
            Ok(Status::Pass | Status::Skip(_)) => {}
            Ok(Status::Fail(why)) => failed.push(format!("{}: {why}", path.display())),
            Err(_) => failed.push(format!("{}: panicked", path.display())),
        }
        // The first failures say enough; a mutant fails fast.
        if failed.len() >= 3 {
            break;
        }
    }
    assert!(failed.is_empty(), "corpus files failing in the engine:\n{}", failed.join("\n"));
}

#[test]
fn generated_programs_agree_with_the_oracle() {
    generated_programs_agree(false);
}

/// The large-tensor, long-chain half of the generated programs: a test of its own so
/// that the two halves run on two threads (a mutant's verdict takes half the time).
#[test]
fn generated_large_programs_agree_with_the_oracle() {
    generated_programs_agree(true);
}

/// fuzz-smoke's plain seeds (`big` false) or its large-tensor, long-chain seeds (`big`
/// true), `MUTATION_SEEDS` / 2 of them, the engine against the oracle.
fn generated_programs_agree(big: bool) {
    if !enabled("generator") {
        return;
    }
    let n: u64 = std::env::var("MUTATION_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(3000);
    let mut failed = Vec::new();
    for i in (0..n).filter(|i| (i % 2 == 1) == big) {
        let seed = if big { 100_000 + i / 2 } else { i / 2 };
        let m = program_with(&seed_bytes(seed), seed % 2 == 1, |c| {
            c.large_tensors |= big && seed % 4 < 2;
            c.long_chains |= big;
        });
        let verdict = catch_unwind(AssertUnwindSafe(|| {
            // The oracle's outcome; a program the oracle itself rejects is the
            // generator's business, not the engine's.
            let Ok((outcome, _)) = check_eval(&m) else { return Ok(()) };
            let checked = check_engine(&m, &outcome).map_err(|v| format!("{}: {}", v.invariant, v.detail))?;
            // fuzz-smoke's other demand: every generated kernel compiles to native code.
            match checked.interpreted.first() {
                Some((name, why)) => Err(format!("PrimFunc `{name}` falls back to the interpreter: {why}")),
                None => Ok(()),
            }
        }));
        match verdict {
            Ok(Ok(())) => {}
            Ok(Err(why)) => failed.push(format!("seed {seed}: {why}")),
            Err(_) => failed.push(format!("seed {seed}: panicked")),
        }
        if failed.len() >= 3 {
            break;
        }
    }
    assert!(failed.is_empty(), "generated programs where the engine disagrees:\n{}", failed.join("\n"));
}

/// The generator's sizes never make an intermediate tensor much larger than every input
/// and result, so this fixed program stands in for one: a float32 sum over a broadcast
/// of 2^20 positive elements, whose reassociation by the engine moves the result (some
/// 524,288) by more than the inputs' and result's sizes allow (by 17 here; any order
/// stays within n·eps of it, inside the tolerance of the intermediate's size). The
/// tester must grant it the tolerance of the largest tensor the run made (the engine
/// reports it), or it raises a false alarm.
#[test]
fn a_sum_over_an_intermediate_larger_than_any_input_agrees() {
    if !enabled("generator") {
        return;
    }
    let src = "from tvm.script import relax as R\n\n\n@R.function\n\
        def main(x: R.Tensor((4,), \"float32\")) -> R.Tensor((), \"float32\"):\n    \
        y = R.broadcast_to(x, R.shape([262144, 4]))\n    s = R.sum(y)\n    return s\n";
    let ir = spec_model::text::parse_module(src).expect("the program parses");
    let xs = [0.1, 0.3, 0.7, 0.9].map(Scalar::Float);
    let x = NDArray::from_scalars(DataType::parse("float32").expect("a dtype"), vec![4], &xs).expect("fits");
    let m = Module { ir, entry: "main".into(), inputs: vec![x] };
    let (outcome, _) = check_eval(&m).expect("the oracle runs it");
    if let Err(v) = check_engine(&m, &outcome) {
        panic!("{}: {}", v.invariant, v.detail);
    }
}
