//! The conformance runner against the engine's adapter (which must pass every corpus
//! file) and against the misbehaving adapter (which crashes, aborts, hangs, talks
//! garbage, answers the wrong request or answers wrongly on chosen files): the runner
//! must survive each, blame exactly the files concerned, and go on with the rest.

use oracle::conform::expected::ExpectedFailures;
use oracle::conform::results::{OutcomeClass, Results, Verdict};
use oracle::conform::{run, Options};
use oracle::corpus::collect_files;
use std::path::PathBuf;
use std::time::Duration;

fn corpus(sub: &str) -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../corpus").join(sub);
    collect_files(&[root]).expect("the corpus is readable")
}

fn options(timeout_secs: u64) -> Options {
    Options { jobs: 2, timeout: Duration::from_secs(timeout_secs), progress_every: 0, ..Options::default() }
}

fn file<'r>(r: &'r Results, name: &str) -> &'r oracle::conform::results::FileResult {
    r.results.iter().find(|f| f.path.ends_with(name)).unwrap_or_else(|| panic!("{name} was not run"))
}

#[test]
fn the_engine_passes_the_whole_corpus() {
    let files = corpus("");
    let r =
        run("engine", env!("CARGO_BIN_EXE_relax-engine-adapter"), &files, &ExpectedFailures::default(), &options(120));
    let failing: Vec<String> =
        r.results.iter().filter(|f| f.verdict != Verdict::Pass).map(|f| format!("{}: {}", f.path, f.why)).collect();
    assert!(failing.is_empty(), "{}", failing.join("\n"));
    assert_eq!(r.files.pass, files.len());
    assert!(r.run_files.pass >= 170, "only {} run files", r.run_files.pass);
    assert_eq!(r.run_files.pass, r.run_files.total());
    assert_eq!(r.implementation.dialect, "rx");
    assert!(r.rules.len() > 100 && r.rules.iter().all(|row| row.counts.fail == 0));
}

#[test]
fn the_runner_survives_every_misbehaviour_and_blames_only_its_file() {
    let files = corpus("eval");
    let cmd = format!(
        "{} --crash-on sem_2_global_var_value --abort-on sem_3_tuple_nested_and_empty \
         --hang-on sem_5_division_by_zero --garbage-on sem_4_tuple_index_out_of_range \
         --wrong-id-on sem_10_shadowing_inner_scope --wrong-on sem_3_tuple_holds_references",
        env!("CARGO_BIN_EXE_misbehaving-adapter")
    );
    let listed = ExpectedFailures::parse(
        "corpus/eval/sem_3_tuple_holds_references.rx  # wrong on purpose\n\
         corpus/eval/sem_2_var_binding_aliases.rx  # passes: reported fixed\n",
    );
    // The runner reports paths as given; the test gives absolute ones, so list those.
    let root = files[0].parent().unwrap().to_string_lossy().replace('\\', "/");
    let listed = ExpectedFailures {
        entries: listed
            .entries
            .into_iter()
            .map(|(p, why)| (format!("{root}/{}", p.trim_start_matches("corpus/eval/")), why))
            .collect(),
    };
    let r = run("bad", &cmd, &files, &listed, &options(2));
    let expect = [
        ("sem_2_global_var_value.rx", OutcomeClass::Crash),
        ("sem_3_tuple_nested_and_empty.rx", OutcomeClass::Crash),
        ("sem_5_division_by_zero.rx", OutcomeClass::Timeout),
        ("sem_4_tuple_index_out_of_range.rx", OutcomeClass::ProtocolError),
        ("sem_10_shadowing_inner_scope.rx", OutcomeClass::ProtocolError),
    ];
    for (name, class) in expect {
        let f = file(&r, name);
        assert_eq!(f.verdict, Verdict::Fail, "{name}");
        assert_eq!(f.requests[0].implementation.outcome, class, "{name}: {:?}", f.requests[0]);
    }
    let wrong = file(&r, "sem_3_tuple_holds_references.rx");
    assert_eq!(wrong.verdict, Verdict::ExpectedFail);
    assert!(wrong.requests.iter().all(|q| q.verdict == Verdict::Fail), "{:?}", wrong.requests);
    let blamed: Vec<&str> = expect.iter().map(|(n, _)| *n).chain(["sem_3_tuple_holds_references.rx"]).collect();
    for f in &r.results {
        if !blamed.iter().any(|n| f.path.ends_with(n)) {
            assert_eq!(f.verdict, Verdict::Pass, "{} was blamed: {}", f.path, f.why);
        }
    }
    assert_eq!(r.new_failures.len(), expect.len());
    assert_eq!(r.fixed.len(), 1);
    assert!(r.fixed[0].ends_with("sem_2_var_binding_aliases.rx"));
}

#[test]
fn an_adapter_of_another_protocol_version_is_refused() {
    let files = corpus("eval").into_iter().take(3).collect::<Vec<_>>();
    let cmd = format!("{} --bad-handshake", env!("CARGO_BIN_EXE_misbehaving-adapter"));
    let r = run("old", &cmd, &files, &ExpectedFailures::default(), &options(5));
    assert!(r.implementation.implementation.is_empty());
    for f in &r.results {
        assert_eq!(f.verdict, Verdict::Fail);
        assert_eq!(f.requests[0].implementation.outcome, OutcomeClass::ProtocolError);
        assert!(f.requests[0].implementation.text.contains("version 99"), "{}", f.requests[0].implementation.text);
    }
}

#[test]
fn a_command_that_does_not_exist_fails_every_file_without_hanging() {
    let files = corpus("eval").into_iter().take(2).collect::<Vec<_>>();
    let r = run("none", "/nonexistent/adapter", &files, &ExpectedFailures::default(), &options(5));
    assert!(r.results.iter().all(|f| f.verdict == Verdict::Fail));
}
