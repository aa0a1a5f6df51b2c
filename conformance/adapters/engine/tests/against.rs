//! `fuzz-smoke --against`'s campaign against the misbehaving adapter, told to answer
//! wrongly on every program that multiplies: the divergence must be found, reduced to
//! a small program that still multiplies, written once per signature, and none found
//! against the engine's honest adapter.

use fuzz::against::campaign::Campaign;
use std::time::Duration;

fn campaign(name: &str, command: String, out: &std::path::Path) -> Campaign {
    Campaign {
        name: name.into(),
        command,
        seed: 0,
        iters: 24,
        budget: None,
        timeout: Duration::from_secs(30),
        reduce_evals: 150,
        reductions_per_kind: 2,
        out: out.to_path_buf(),
        large_tensors: false,
        long_chains: false,
    }
}

#[test]
fn a_wrong_implementation_yields_reduced_deduplicated_divergences() {
    let dir = std::env::temp_dir().join(format!("against-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let bad = format!("{} --wrong-on R.multiply", env!("CARGO_BIN_EXE_misbehaving-adapter"));
    let found = campaign("bad", bad, &dir).run().expect("the campaign runs");
    assert!(found.diverging_programs > 0, "no divergence found");
    assert!(!found.distinct.is_empty());
    for (sig, path) in &found.distinct {
        assert!(sig.contains("relax.multiply"), "{sig}");
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.contains("# x-implementation-outcome: rejected: misbehaving"), "{text}");
        assert!(text.contains(&format!("# x-signature: {sig}")));
        assert!(oracle::corpus::parse_metadata(&text).is_ok(), "not a corpus file:\n{text}");
        assert!(text.lines().count() < 40, "not reduced:\n{text}");
    }
    // Signatures already written are not written again.
    let before = std::fs::read_dir(&dir).unwrap().count();
    let bad = format!("{} --wrong-on R.multiply", env!("CARGO_BIN_EXE_misbehaving-adapter"));
    campaign("bad", bad, &dir).run().unwrap();
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_engine_does_not_diverge_on_generated_programs() {
    let dir = std::env::temp_dir().join(format!("against-engine-{}", std::process::id()));
    let found = campaign("engine", env!("CARGO_BIN_EXE_relax-engine-adapter").into(), &dir).run().unwrap();
    assert_eq!(found.programs, 24);
    assert_eq!(found.diverging_programs, 0, "{:?}", found.distinct);
    let _ = std::fs::remove_dir_all(&dir);
}
