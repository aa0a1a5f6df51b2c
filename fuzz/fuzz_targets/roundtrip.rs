//! `cargo fuzz run roundtrip`: every generated program prints and re-parses to itself.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let m = fuzz::program_of(data, true);
    fuzz::fail_on(&m, "roundtrip", fuzz::invariants::check_print_parse(&m));
});
