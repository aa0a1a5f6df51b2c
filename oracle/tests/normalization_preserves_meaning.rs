//! `eval(p) == eval(normalize(p))` for every `run:` line of the corpus: the program as
//! written (any nesting) and its normalized form give equal values or the same error
//! kind.

use oracle::corpus::metadata::{parse_metadata, Expectation};
use oracle::corpus::{collect_files, DEFAULT_TOLERANCE};
use oracle::eval::run::check_normalization_preserves;
use std::path::PathBuf;

#[test]
fn normalization_preserves_the_meaning_of_every_corpus_run() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let files = collect_files(&[root]).expect("the corpus is readable");
    let (mut runs, mut failures) = (0, Vec::new());
    for f in files {
        let src = std::fs::read_to_string(&f).expect("readable");
        let Ok(md) = parse_metadata(&src) else { continue };
        let tol = md.tolerance.unwrap_or(DEFAULT_TOLERANCE);
        for e in &md.expectations {
            let call = match e {
                Expectation::RunValue { call, .. } | Expectation::RunError { call, .. } => call,
                _ => continue,
            };
            runs += 1;
            if let Err(why) = check_normalization_preserves(&f.display().to_string(), &src, call, tol) {
                failures.push(format!("{}: run {call}: {why}", f.display()));
            }
        }
    }
    assert!(runs >= 6, "only {runs} run lines found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
