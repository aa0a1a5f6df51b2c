//! `fuzz`: the generator of well-formed Relax programs ([`generate`]), the invariants
//! every generated program must satisfy ([`invariants`]), the statistics `fuzz-smoke`
//! prints ([`stats`]) and the reducer ([`reduce`]). The cargo-fuzz targets live in
//! `fuzz_targets/` and call into this library.

pub mod against;
pub mod config;
pub mod gen;
pub mod invariants;
pub mod program;
pub mod reduce;
pub mod stats;

pub use config::Config;
pub use gen::generate;
/// Values between the two engines (`oracle::engine::convert`).
pub use oracle::engine::convert;
pub use program::Module;

use arbitrary::{Arbitrary, Unstructured};

/// The bytes of seed `seed` (xorshift64*): 64 to 4,159 of them, so both short and
/// long inputs occur. `fuzz-smoke` and the tests draw their programs from these.
pub fn seed_bytes(seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let len = 64 + (next() % 4096) as usize;
    (0..len).map(|_| (next() >> 56) as u8).collect()
}

/// The program of a fuzz input: with `swarm`, the configuration comes from the first
/// bytes too (swarm testing), else it is `Config::default()`.
pub fn program_of(data: &[u8], swarm: bool) -> Module {
    program_with(data, swarm, |_| {})
}

/// As [`program_of`], with the configuration adjusted by `tweak` (`fuzz-smoke`'s
/// switches) before generating.
pub fn program_with(data: &[u8], swarm: bool, tweak: impl Fn(&mut Config)) -> Module {
    let mut u = Unstructured::new(data);
    let mut cfg = if swarm { Config::arbitrary(&mut u).unwrap_or_default() } else { Config::default() };
    tweak(&mut cfg);
    generate(&mut u, &cfg)
}

/// Writes a failing program as a corpus-format `.rx` file under `dir`, with the broken
/// invariant and what was seen as comments; returns its path.
pub fn write_failure(
    dir: &std::path::Path,
    name: &str,
    m: &Module,
    v: &invariants::Violation,
) -> std::io::Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{name}.rx"));
    let notes = vec![format!("invariant broken: {}", v.invariant), v.detail.clone()];
    // What the oracle says on the program as written (the reference), if it runs.
    let quiet = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        invariants::run(&m.ir, &m.entry, &m.inputs, false).ok().map(|(o, _)| match o {
            Ok(v) => oracle::eval::literal::print_value(&v),
            Err(k) => format!("error {k}"),
        })
    }));
    // A value with an opaque part (`<null>`, a closure) has no literal to expect.
    let expect = quiet.ok().flatten().filter(|e| !e.contains('<'));
    let text = m.to_corpus_file(&format!("fuzz failure: {}", v.invariant), expect.as_deref(), &notes);
    std::fs::write(&path, text)?;
    Ok(path)
}

/// For the cargo-fuzz targets: on a broken invariant, writes the program under
/// `fuzz/artifacts/<target>/` (named by a hash of its text) and panics, which is how
/// libFuzzer learns of a failure.
pub fn fail_on<T>(m: &Module, target: &str, r: Result<T, invariants::Violation>) {
    if let Err(v) = r {
        use std::hash::{Hash, Hasher};
        let text = spec_model::text::print_module(&m.ir, spec_model::text::DEFAULT_WIDTH);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts").join(target);
        let name = format!("failure-{:016x}", h.finish());
        let at = write_failure(&dir, &name, m, &v).map(|p| p.display().to_string()).unwrap_or_default();
        panic!("{} broken ({at}):\n{}", v.invariant, v.detail);
    }
}
