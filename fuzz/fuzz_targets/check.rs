//! `cargo fuzz run check`: every generated program is well-formed, normalizes
//! idempotently into normal form, round-trips through text and checks without error.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let m = fuzz::program_of(data, true);
    fuzz::fail_on(&m, "check", fuzz::invariants::check_static(&m));
});
