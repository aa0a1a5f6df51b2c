//! The hostile-input suite at the sizes CI has time for (10^2 and 10^3): every class
//! through every command must end cleanly (oracle::hostile). The full suite, up to
//! 10^6, is `cargo run --release -p oracle --bin hostile-suite`.
//!
//! `hostile-known.txt` lists the runs not clean yet (class, size, command): each must
//! still fail, so that a fix shortens the list and a regression is never hidden.

use oracle::hostile::{run_case, scratch, Budget, CLASSES};
use std::path::{Path, PathBuf};

fn known() -> Vec<String> {
    include_str!("hostile-known.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

#[test]
fn hostile_inputs_end_cleanly_at_small_sizes() {
    let bin = Path::new(env!("CARGO_BIN_EXE_oracle"));
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hostile");
    let known = known();
    let (mut unexpected, mut fixed) = (Vec::new(), known.clone());
    for class in CLASSES {
        for size in [100, 1000] {
            let case = class.case(size);
            let dir = scratch(&root, &case).expect("a scratch directory");
            for r in run_case(bin, &case, &dir, Budget::default()).expect("the runs start") {
                let key = format!("{} {size} {}", class.name, r.command);
                let listed = known.contains(&key);
                if r.verdict.is_clean() {
                    assert!(
                        !listed,
                        "{key} is listed in hostile-known.txt but ends cleanly ({}): take it out",
                        r.verdict
                    );
                } else if !listed {
                    unexpected.push(format!("{key}: {} {}", r.verdict, r.first_line));
                }
                fixed.retain(|k| *k != key);
            }
        }
    }
    assert!(fixed.is_empty(), "hostile-known.txt lists runs that no longer exist:\n{}", fixed.join("\n"));
    assert!(unexpected.is_empty(), "hostile inputs that do not end cleanly:\n{}", unexpected.join("\n"));
}
