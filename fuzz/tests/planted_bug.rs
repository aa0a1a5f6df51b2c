//! The differential tester catches a bug planted in the engine: with an off-by-one in a
//! broadcast stride (`optimized::faults::Fault::BroadcastStride`), `fuzz-smoke`'s checks
//! report an engine/oracle disagreement within 2,000 generated programs. Without the
//! bug the same programs agree (`generator.rs`). Its own test binary: the switch is
//! process-wide.

use fuzz::invariants::check_program;
use fuzz::{program_of, seed_bytes};
use optimized::faults::{plant, Fault};

#[test]
fn a_planted_broadcast_bug_is_caught_within_two_thousand_programs() {
    let _bug = plant(Fault::BroadcastStride);
    let caught = (0..2000u64).find_map(|seed| {
        let m = program_of(&seed_bytes(seed), seed % 2 == 1);
        match check_program(&m) {
            Err(v) if v.invariant.starts_with("diff_exec: oracle vs optimized engine") => Some((seed, v)),
            Err(v) => panic!(
                "seed {seed}: an invariant other than the engine comparison broke: {}: {}",
                v.invariant, v.detail
            ),
            Ok(_) => None,
        }
    });
    let (seed, v) = caught.expect("the planted bug went unnoticed for 2,000 programs");
    println!("caught at seed {seed}: {}", v.detail);
}
