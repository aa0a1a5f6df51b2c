//! `cargo fuzz run eval`: the oracle runs every generated program to a value or a
//! run-time error within its fuel, without panicking.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let m = fuzz::program_of(data, true);
    fuzz::fail_on(&m, "eval", fuzz::invariants::check_eval(&m));
});
