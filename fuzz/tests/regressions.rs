//! Inputs that once broke a fuzz target (`fuzz/tests/regressions/*.bin`, the raw bytes
//! libFuzzer wrote): each must now pass every invariant of `diff_exec`.

use fuzz::invariants::check_program;
use fuzz::program_of;

#[test]
fn every_recorded_failure_passes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let mut paths: Vec<_> = std::fs::read_dir(&dir).expect("the directory").flatten().map(|e| e.path()).collect();
    paths.sort();
    assert!(!paths.is_empty());
    for p in paths {
        let data = std::fs::read(&p).expect("readable");
        let m = program_of(&data, true);
        if let Err(v) = check_program(&m) {
            panic!("{}: {} broken: {}", p.display(), v.invariant, v.detail);
        }
    }
}
