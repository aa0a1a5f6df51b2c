//! One test per corpus file: `cargo test -p oracle --test corpus [FILTER]`.
//! A file whose expectations need unbuilt parts passes for what can be checked
//! (parsing, round trip, well-formed `run:` lines) and is reported by `oracle test` as skipped.

use libtest_mimic::{Arguments, Failed, Trial};
use oracle::corpus::{collect_files, run_file, Status};
use std::path::PathBuf;

fn main() {
    let args = Arguments::from_args();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let files = collect_files(std::slice::from_ref(&root)).expect("the corpus directory exists");
    let mut trials: Vec<Trial> = files
        .into_iter()
        .map(|path| {
            let name = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
            Trial::test(name, move || match run_file(&path).status {
                Status::Pass | Status::Skip(_) => Ok(()),
                Status::Fail(why) => Err(Failed::from(why)),
            })
        })
        .collect();
    // The bar for the syntax corpus.
    let syntax = root.join("syntax");
    trials.push(Trial::test("syntax corpus has at least 40 passing files", move || {
        let files = collect_files(std::slice::from_ref(&syntax)).map_err(Failed::from)?;
        let passed = files.iter().filter(|f| run_file(f).status == Status::Pass).count();
        if passed >= 40 {
            Ok(())
        } else {
            Err(format!("only {passed} files under corpus/syntax pass").into())
        }
    }));
    libtest_mimic::run(&args, trials).exit();
}
