//! The reducer, through the `fuzz-reduce` binary: each predicate kind shrinks a fixture
//! and keeps its failure, the output is a corpus file the corpus runner passes, and bad
//! input exits with status 2 and a message.

use oracle::check::check_module;
use oracle::corpus::{parse_metadata, run_file, Expectation, Status};
use spec_model::text::parse_module;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reduce").join(name)
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-reduce-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn reduce(file: &Path, keep: &str, out: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fuzz-reduce"))
        .arg(file)
        .arg("--keep")
        .arg(keep)
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .expect("fuzz-reduce runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs the reducer, expects success, and checks the output file: it parses, its
/// metadata parses, and the corpus runner passes it. Returns its text.
fn reduce_ok(file: &Path, keep: &str, name: &str, extra: &[&str]) -> String {
    let out = scratch(name);
    let o = reduce(file, keep, &out, extra);
    assert!(o.status.success(), "fuzz-reduce failed: {}{}", text(&o.stdout), text(&o.stderr));
    let stdout = text(&o.stdout);
    assert!(stdout.contains("before:") && stdout.contains("after:"), "{stdout}");
    let src = std::fs::read_to_string(&out).expect("the output is written");
    parse_metadata(&src).unwrap_or_else(|e| panic!("the output's metadata does not parse: {e}\n{src}"));
    parse_module(&src).unwrap_or_else(|e| panic!("the output does not parse: {}\n{src}", e.render("out", &src)));
    let report = run_file(&out);
    assert_eq!(report.status, Status::Pass, "the corpus runner refuses the output:\n{src}");
    src
}

fn binding_lines(src: &str) -> usize {
    src.lines().filter(|l| !l.starts_with('#') && l.contains(" = ") && !l.contains("T.int64()")).count()
}

#[test]
fn a_buried_runtime_error_reduces_to_a_few_bindings() {
    let file = fixture("buried_error.rx");
    let before = std::fs::read_to_string(&file).unwrap();
    let src = reduce_ok(&file, "error=DivisionByZero", "buried.rx", &[]);
    let md = parse_metadata(&src).unwrap();
    assert!(
        md.expectations.iter().any(|e| matches!(e, Expectation::RunError { kind, .. } if kind == "DivisionByZero")),
        "{src}"
    );
    assert_eq!(md.rules, vec!["SEM-5"]);
    assert!(!src.contains("def helper"), "the unused helper is removed:\n{src}");
    assert!(binding_lines(&src) <= 3, "at most a few bindings remain:\n{src}");
    assert!(src.len() < before.len() / 2, "{src}");
    // The input shrank along its symbolic dimension, not its fixed one.
    assert!(src.contains("# run: main(R.const([[0, 0, 0]], \"int32\"), R.shape([0]))"), "{src}");
}

#[test]
fn a_static_diagnostic_is_kept() {
    let src = reduce_ok(&fixture("ill_typed.rx"), "check=OP-add", "ill_typed.rx", &[]);
    let m = parse_module(&src).unwrap();
    let report = check_module(&m, false);
    assert!(report.diagnostics.iter().any(|d| d.code == "OP-add"), "{src}");
    assert!(src.contains("# expect: invalid OP-add"), "{src}");
    assert!(binding_lines(&src) <= 2, "{src}");
}

#[test]
fn a_shell_command_predicate() {
    let src = reduce_ok(&fixture("buried_error.rx"), "cmd:grep -q multiply \"$1\"", "cmd.rx", &[]);
    assert!(src.contains("multiply"), "{src}");
    assert!(binding_lines(&src) <= 2, "{src}");
    // The candidate the command sees is a corpus file too: it can look at the metadata.
    let src =
        reduce_ok(&fixture("buried_error.rx"), "cmd:grep -q 'expect: error DivisionByZero' \"$1\"", "cmd2.rx", &[]);
    assert!(src.contains("# expect: error DivisionByZero"), "{src}");
}

#[test]
fn a_value_predicate_shrinks_inputs() {
    // `--call` replaces the run line; with 2 for `n` the program returns a value.
    let call = r#"main(R.const([[1, 2, 3], [4, 5, 6]], "int32"), R.shape([2]))"#;
    let src = reduce_ok(&fixture("buried_error.rx"), "value", "value.rx", &["--call", call]);
    let md = parse_metadata(&src).unwrap();
    assert!(md.expectations.iter().any(|e| matches!(e, Expectation::RunValue { .. })), "{src}");
    assert_eq!(binding_lines(&src), 0, "{src}");
    // The tensor lost rows (its first dimension is symbolic) and its values became zeros.
    assert!(src.contains(r#"# run: main(R.const([[0, 0, 0]], "int32"), R.shape([0]))"#), "{src}");
}

#[test]
fn branches_and_closures_reduce() {
    let src = reduce_ok(&fixture("branches.rx"), "error=MatchCastMismatch", "branches.rx", &[]);
    assert!(!src.contains("if "), "the If is replaced by its branch:\n{src}");
    assert!(src.contains("R.match_cast"), "{src}");
    assert!(binding_lines(&src) <= 3, "{src}");
}

fn expect_bad(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "stdout: {}\nstderr: {}", text(&o.stdout), text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains(needle), "expected `{needle}` in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_inputs_exit_2_with_a_message() {
    let out = scratch("bad.rx");
    let missing = scratch("no-such-file.rx");
    expect_bad(&reduce(&missing, "value", &out, &[]), "cannot read");
    expect_bad(&reduce(&fixture("buried_error.rx"), "frobnicate", &out, &[]), "unknown predicate");
    expect_bad(&reduce(&fixture("buried_error.rx"), "error=Oops", &out, &[]), "not a run-time error kind");
    expect_bad(
        &reduce(&fixture("buried_error.rx"), "error=OpError", &out, &[]),
        "predicate does not hold on the input",
    );
    expect_bad(&reduce(&fixture("buried_error.rx"), "value", &out, &["--run", "3"]), "no `run:` line 3");
    expect_bad(&reduce(&fixture("ill_typed.rx"), "value", &out, &[]), "no `# run:` line");
    expect_bad(&reduce(&fixture("ill_typed.rx"), "panic", &out, &[]), "predicate does not hold on the input");

    let unparsable = scratch("unparsable.rx");
    std::fs::write(&unparsable, "# ---\n# expect: parse\n# ---\n@R.function\ndef main(x:\n").unwrap();
    expect_bad(&reduce(&unparsable, "check=WF-3", &out, &[]), "does not parse");

    let bad_md = scratch("bad_md.rx");
    std::fs::write(&bad_md, "# ---\n# colour: red\n# ---\n").unwrap();
    expect_bad(&reduce(&bad_md, "value", &out, &[]), "bad metadata block");

    let bad_call = scratch("bad_call.rx");
    let src = std::fs::read_to_string(fixture("buried_error.rx")).unwrap();
    std::fs::write(&bad_call, src.replace("# run: main(", "# run: nowhere(")).unwrap();
    expect_bad(&reduce(&bad_call, "error=DivisionByZero", &out, &[]), "does not parse");
    assert!(!out.exists(), "nothing is written for bad input");
}

#[test]
fn diff_exec_does_not_hold_where_normalization_agrees() {
    let out = scratch("diff.rx");
    let o = reduce(&fixture("buried_error.rx"), "diff-exec", &out, &[]);
    expect_bad(&o, "predicate does not hold on the input");
}

#[test]
fn the_budget_is_reported() {
    let out = scratch("budget.rx");
    let o = reduce(&fixture("buried_error.rx"), "error=DivisionByZero", &out, &["--max-evals", "3"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("budget ran out"), "{}", text(&o.stdout));
    // Whatever was reached still fails the same way.
    let src = std::fs::read_to_string(&out).unwrap();
    assert!(src.contains("# expect: error DivisionByZero"), "{src}");
}

#[test]
fn a_run_line_without_expect_and_over_several_lines_is_read() {
    // What a generator writes before it knows the outcome.
    let src = std::fs::read_to_string(fixture("buried_error.rx")).unwrap();
    let src = src.replace("# expect: error DivisionByZero\n", "").replace(
        "# run: main(R.const([[1, 2, 3], [4, 5, 6]], \"int32\"), R.shape([0]))",
        "# run: main(R.const(\n    [[1, 2, 3], [4, 5, 6]],\n    \"int32\",\n), R.shape([0]))",
    );
    let file = scratch("lenient.rx");
    std::fs::write(&file, src).unwrap();
    let out = reduce_ok(&file, "error=DivisionByZero", "lenient.out.rx", &[]);
    assert!(out.contains("# expect: error DivisionByZero"), "{out}");
}

#[test]
fn the_default_output_is_beside_the_input() {
    let file = scratch("beside.rx");
    std::fs::copy(fixture("ill_typed.rx"), &file).unwrap();
    let o =
        Command::new(env!("CARGO_BIN_EXE_fuzz-reduce")).arg(&file).args(["--keep", "check=OP-add"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = scratch("beside.reduced.rx");
    assert!(text(&o.stdout).contains(&format!("wrote {}", out.display())), "{}", text(&o.stdout));
    assert!(std::fs::read_to_string(out).unwrap().contains("# expect: invalid OP-add"));
}

#[test]
fn predicates_parse() {
    use fuzz::reduce::Predicate;
    assert_eq!(Predicate::parse("diff-exec"), Ok(Predicate::DiffExec));
    assert_eq!(Predicate::parse("check=WF-3"), Ok(Predicate::Check("WF-3".into())));
    assert_eq!(Predicate::parse("panic=overflow"), Ok(Predicate::Panic(Some("overflow".into()))));
    assert_eq!(Predicate::parse("cmd:exit 0"), Ok(Predicate::Cmd("exit 0".into())));
    assert!(Predicate::parse("cmd: ").is_err());
    assert!(Predicate::parse("check=").is_err());
}

#[test]
fn literals_print_on_one_line() {
    use fuzz::reduce::output::one_line;
    assert_eq!(
        one_line("main(\n    R.const(\n        [1, 2],\n        \"int32\",\n    ),\n)"),
        "main(R.const([1, 2], \"int32\"))"
    );
    assert_eq!(one_line("(\n    R.shape([1]),\n)"), "(R.shape([1]),)");
    assert_eq!(one_line("R.str(\"a,)\")"), "R.str(\"a,)\")");
}
