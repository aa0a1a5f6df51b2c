//! The mutation gate lives in `tests/mutation_gate.rs`: the corpus's `run:` lines in the
//! optimized engine and generated programs against the oracle, as four tests that
//! `cargo mutants` runs against each mutant of `optimized/` (`.cargo/mutants.toml`,
//! `scripts/mutants`). This package has no code of its own; it exists so that
//! building the gate builds no binaries.
