//! `cargo fuzz run diff_exec`: every invariant, then the differential check: the
//! oracle on the program as written against the oracle on its normalized form (the
//! optimized engine joins here later). A mismatch is written as a corpus-format `.rx`
//! file with its inputs and both outcomes under `fuzz/artifacts/diff_exec/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let m = fuzz::program_of(data, true);
    fuzz::fail_on(&m, "diff_exec", fuzz::invariants::check_program(&m));
});
