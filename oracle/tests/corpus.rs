//! One test per corpus file: `cargo test -p oracle --test corpus [FILTER]`; each file's
//! `run:` lines run in both the oracle and the optimized engine.
//! A file whose expectations need unbuilt parts passes for what can be checked
//! (parsing, round trip, well-formed `run:` lines) and is reported by `oracle test` as skipped.

use libtest_mimic::{Arguments, Failed, Trial};
use oracle::corpus::{collect_files, run_file, run_file_with, RunOptions, Status};
use oracle::engine::Engine;
use spec_model::ops::Op;
use std::path::PathBuf;

fn main() {
    let args = Arguments::from_args();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let files = collect_files(std::slice::from_ref(&root)).expect("the corpus directory exists");
    let mut trials: Vec<Trial> = files
        .into_iter()
        .map(|path| {
            let name = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
            // Every corpus kernel must compile to native code, too.
            let both = RunOptions { engine: Engine::Both, native_tir: true, ..RunOptions::default() };
            Trial::test(name, move || match run_file_with(&path, both).status {
                Status::Pass | Status::Skip(_) => Ok(()),
                Status::Fail(why) => Err(Failed::from(why)),
            })
        })
        .collect();
    // `x-interpreted` is what lets a corpus kernel fall back to the engine's TIR
    // interpreter: without the key, the same file fails the native-code demand, and
    // with a name native code does not decline, it fails as a stale key.
    let declared = root.join("eval/op_call_tir_float_loop_and_axis_variables.rx");
    trials.push(Trial::test("x-interpreted lets the PrimFuncs it names fall back, and no others", move || {
        let both = RunOptions { engine: Engine::Both, native_tir: true, ..RunOptions::default() };
        let src = std::fs::read_to_string(&declared).map_err(|e| Failed::from(e.to_string()))?;
        const KEY: &str = "# x-interpreted:";
        if !src.lines().any(|l| l.starts_with(KEY)) {
            return Err("the file has no x-interpreted key".into());
        }
        let dir = std::env::temp_dir().join(format!("relax-x-interpreted-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| Failed::from(e.to_string()))?;
        // A copy of the file with its key line rewritten (`None` drops it).
        let variant = |name: &str, key: &dyn Fn(&str) -> Option<String>| -> Result<std::path::PathBuf, Failed> {
            let text: String = src
                .lines()
                .filter_map(|l| if l.starts_with(KEY) { key(l) } else { Some(l.to_string()) })
                .map(|l| l + "\n")
                .collect();
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| Failed::from(e.to_string()))?;
            Ok(path)
        };
        let copy = variant("undeclared.rx", &|_| None)?;
        // The key naming one more PrimFunc, which does not exist, is stale.
        let stale_copy = variant("stale.rx", &|l| Some(format!("{l}, no_such_kernel")))?;
        let (with, without) = (run_file_with(&declared, both).status, run_file_with(&copy, both).status);
        let with_stale = run_file_with(&stale_copy, both).status;
        let _ = std::fs::remove_dir_all(&dir);
        match (with, without, with_stale) {
            (Status::Pass, Status::Fail(why), Status::Fail(stale))
                if why.contains("falls back to the interpreter") && stale.contains("a stale key") =>
            {
                Ok(())
            }
            (w, wo, s) => Err(format!("with the key: {w}; without it: {wo}; with a stale name: {s}").into()),
        }
    }));
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
    // The static corpora need nothing unbuilt: a skipped file there is a mistake.
    let static_root = root.clone();
    trials.push(Trial::test("static corpora run without skips", move || {
        let dirs: Vec<PathBuf> =
            ["wellformed", "normalize", "types", "structinfo", "ops"].iter().map(|d| static_root.join(d)).collect();
        let files = collect_files(&dirs).map_err(Failed::from)?;
        let skipped: Vec<String> = files
            .iter()
            .filter(|f| matches!(run_file(f).status, Status::Skip(_)))
            .map(|f| f.display().to_string())
            .collect();
        if skipped.is_empty() {
            Ok(())
        } else {
            Err(format!("skipped: {}", skipped.join(", ")).into())
        }
    }));
    // Every rule and limit of `rules.rs` and every registered operator is named by some
    // corpus file, and every operator with an error case has a file expecting it.
    let cov_root = root.clone();
    trials.push(Trial::test("every rule, limit and operator is covered", move || {
        let files = collect_files(std::slice::from_ref(&cov_root)).map_err(Failed::from)?;
        let mut tagged = std::collections::HashSet::new();
        let mut expected_errors = std::collections::HashSet::new();
        for f in &files {
            let src = std::fs::read_to_string(f).map_err(|e| Failed::from(e.to_string()))?;
            let Ok(md) = oracle::corpus::parse_metadata(&src) else { continue };
            tagged.extend(md.rules.iter().cloned());
            for e in &md.expectations {
                if let oracle::corpus::Expectation::Invalid(r) = e {
                    expected_errors.insert(r.clone());
                }
            }
        }
        let rules =
            spec_model::rules::RULES.iter().chain(spec_model::rules::RUNTIME_RULES).chain(spec_model::rules::LIMITS);
        // Budgets no corpus file can reach at their defaults (10^5 statements, 10^7
        // tokens, 10 s of proving, ...) or that shape only what is shown:
        // spec-model/tests/budgets.rs lowers each one and checks its error.
        let by_unit_tests = [
            "LIMIT-statements",
            "LIMIT-tokens",
            "LIMIT-constant",
            "LIMIT-prover",
            "LIMIT-diagnostics",
            "LIMIT-excerpt",
        ];
        let mut missing: Vec<String> = rules
            .filter(|(id, _)| !by_unit_tests.contains(id))
            .map(|(id, _)| id.to_string())
            // A rule is covered by a file naming it or one of its items (SI-D-7 by SI-D-7.1.1).
            .filter(|id| !tagged.iter().any(|t| t == id || t.starts_with(&format!("{id}."))))
            .collect();
        // Operators that cannot fail statically (a wrong argument count is a syntax error).
        let no_error_case = [Op::NullValue, Op::Print, Op::NoGrad, Op::VmKillObject];
        for &op in Op::ALL {
            let rule = op.def().rule.to_string();
            if !tagged.contains(&rule) {
                missing.push(rule.clone());
            }
            if !no_error_case.contains(&op) && !expected_errors.contains(&rule) {
                missing.push(format!("{rule} (no file expects its error)"));
            }
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!("not covered: {}", missing.join(", ")).into())
        }
    }));
    // Every run-time rule and operator fires in some file's `run:` lines.
    let eval_root = root.clone();
    trials.push(Trial::test("every run-time rule and operator fires in a run: line", move || {
        let dirs = [eval_root.join("eval"), eval_root.join("eval_ops")];
        let reports: Vec<_> = collect_files(&dirs).map_err(Failed::from)?.iter().map(|f| run_file(f)).collect();
        let never: Vec<String> =
            oracle::corpus::run_coverage(&reports).into_iter().filter(|(_, n)| *n == 0).map(|(r, _)| r).collect();
        if never.is_empty() {
            Ok(())
        } else {
            Err(format!("never fired by a run: line: {}", never.join(", ")).into())
        }
    }));
    libtest_mimic::run(&args, trials).exit();
}
