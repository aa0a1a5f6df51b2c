//! `cargo fuzz run diff_exec`: every invariant, then the differential checks: the
//! optimized engine against the oracle (a run that exhausts fuel, depth or memory on
//! either side is poisoned and skipped), and the oracle on the program as written
//! against the oracle on its normalized form. A mismatch is written as a corpus-format
//! `.rx` file with its inputs and both outcomes under `fuzz/artifacts/diff_exec/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let m = fuzz::program_of(data, true);
    fuzz::fail_on(&m, "diff_exec", fuzz::invariants::check_program(&m));
});
