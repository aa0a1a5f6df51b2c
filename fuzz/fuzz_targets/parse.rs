//! `cargo fuzz run parse`: arbitrary text never makes the parser, the printer or the
//! well-formedness check panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(m) = spec_model::text::parse_module(&text) {
        let _ = spec_model::text::print_module(&m, spec_model::text::DEFAULT_WIDTH);
        let _ = spec_model::well_formed::check_well_formed(&m);
    }
});
