//! `cargo fuzz run hostile`: structured hostile programs (oracle::hostile's classes:
//! long operator and postfix chains, wide tuples and shapes, many bindings, StructInfo
//! that doubles or deepens, nonlinear prover queries, large allocations) at sizes the
//! fuzzer picks, through parse, print and re-parse, check, and evaluation in both
//! engines. Each must end in a value or a typed error: no panic, no stack overflow.
#![no_main]
use libfuzzer_sys::fuzz_target;
use oracle::hostile::CLASSES;

fuzz_target!(|data: &[u8]| {
    let [class, hi, lo, ..] = *data else { return };
    let class = &CLASSES[class as usize % CLASSES.len()];
    // Up to 3,000: large enough for every budget to be reached, small enough for
    // thousands of runs a minute.
    let size = u64::from(u16::from_be_bytes([hi, lo])) % 3000 + 1;
    let case = class.case(size);
    let Some((_, bytes)) = case.files.iter().find(|(name, _)| name == "p.rx") else { return };
    let Ok(src) = std::str::from_utf8(bytes) else { return };
    let Ok(m) = spec_model::text::parse_module(src) else { return };
    let printed = spec_model::text::print_module(&m, spec_model::text::DEFAULT_WIDTH);
    if let Err(e) = spec_model::text::parse_module(&printed) {
        panic!("{} at {size}: the printed program does not parse: {e}", class.name);
    }
    let _ = oracle::check::check_module(&m, false);
    // The evaluation the case asks for (its arguments are `.rx` literals).
    let Some(eval) = case.commands.iter().find(|c| c[0] == "eval" && c.get(2).is_some_and(|a| a == "--engine")) else {
        return;
    };
    let args: Vec<oracle::eval::run::Arg> =
        eval[4..].iter().map(|a| oracle::eval::run::Arg::Literal(a.clone())).collect();
    let options = oracle::eval::run::EvalOptions {
        engine: oracle::engine::Engine::Both,
        limits: oracle::eval::Limits { fuel: 1_000_000, max_depth: 200, memory: 256 << 20 },
        threads: 1,
        trace: false,
        out: None,
    };
    let _ = oracle::eval::run::run_eval("p.rx", src, "main", &args, options);
});
