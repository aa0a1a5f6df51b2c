//! The `oracle` binary: exit codes and output of `fmt`, `parse`, `check`, `prove`, `eval` (and
//! `eval --bench`) and `test`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn oracle(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_oracle"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the oracle binary runs");
    if let Some(s) = stdin {
        // A run that fails on its arguments may exit before it reads its input.
        match child.stdin.take().unwrap().write_all(s.as_bytes()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            r => r.unwrap(),
        }
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

const GOOD: &str = "@R.function\ndef main(x: R.Tensor((2,), \"float32\")) -> R.Tensor((2,), \"float32\"):\n    y = R.add(x, x)\n    return y\n";
const BAD: &str = "@R.function\ndef main(x: R.Tensor((2,), \"float32\")):\n    y = R.add(x, q)\n    return y\n";

#[test]
fn fmt_reads_stdin_and_prints_the_canonical_form() {
    let out = oracle(&["fmt", "-"], Some(GOOD));
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("y = R.add(x, x)"), "{text}");
    // The canonical form is a fixed point.
    let again = oracle(&["fmt", "-"], Some(&text));
    assert_eq!(String::from_utf8(again.stdout).unwrap(), text);
}

#[test]
fn fmt_dialect_tvm_0_27_prints_what_tvm_reads_and_reads_back() {
    let out = oracle(&["fmt", "--dialect", "tvm-0.27", "-"], Some(GOOD));
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("from tvm.script import tirx as T\n"), "{text}");
    assert!(text.contains("@I.ir_module\nclass Module:\n"), "{text}");
    // The parser reads it back: its canonical form is that of the input.
    let canonical = oracle(&["fmt", "-"], Some(GOOD));
    let via_tvm = oracle(&["fmt", "--dialect", "rx", "-"], Some(&text));
    assert_eq!(String::from_utf8(via_tvm.stdout).unwrap(), String::from_utf8(canonical.stdout).unwrap());
    let bad = oracle(&["fmt", "--dialect", "tvm", "-"], Some(GOOD));
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("tvm-0.27"));
}

#[test]
fn parse_reports_ok_or_the_error_with_a_caret() {
    let ok = oracle(&["parse", "-"], Some(GOOD));
    assert!(ok.status.success());
    assert!(String::from_utf8(ok.stdout).unwrap().starts_with("ok"));
    let bad = oracle(&["parse", "-"], Some(BAD));
    assert!(!bad.status.success());
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(
        err.contains("error[name]: unknown name `q`") && err.contains("<stdin>:3:18") && err.contains('^'),
        "{err}"
    );
    let fmt_bad = oracle(&["fmt", "-"], Some(BAD));
    assert!(!fmt_bad.status.success() && fmt_bad.stdout.is_empty());
}

#[test]
fn missing_files_are_errors_not_panics() {
    for args in [&["fmt", "no/such.rx"][..], &["parse", "no/such.rx"], &["test", "no/such/dir"]] {
        let out = oracle(args, None);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(String::from_utf8(out.stderr).unwrap().starts_with("error[io]:"), "{args:?}");
    }
}

#[test]
fn test_runs_the_corpus_and_summarizes() {
    let out = oracle(&["test", "--rules", "corpus/syntax"], None);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    let summary = text.lines().last().unwrap();
    let counts: Vec<usize> = summary.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
    assert_eq!(counts.len(), 3, "{summary}");
    assert!(counts[0] >= 40 && counts[1] == 0, "{summary}");
    assert!(text.contains("rule ") && text.contains("pass"), "{text}");
}

#[test]
fn test_fails_on_a_failing_file() {
    let dir = std::env::temp_dir().join(format!("oracle-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("wrong.rx"), format!("# ---\n# expect: parse-error\n# ---\n{GOOD}")).unwrap();
    std::fs::write(dir.join("bad_meta.rx"), GOOD).unwrap();
    let out = oracle(&["test", dir.to_str().unwrap()], None);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL") && text.contains("bad metadata") && text.ends_with("0 passed, 2 failed, 0 skipped\n"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn check_show_sinfo_prints_function_and_binding_struct_info() {
    let src =
        "@R.function\ndef main(x: R.Tensor((\"n\", 4), \"float32\")):\n    y = R.sum(x, axis=[1])\n    return y\n";
    let out = oracle(&["check", "--show-sinfo", "-"], Some(src));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("@main: R.Callable((R.Tensor((n, 4), dtype=\"float32\"),), R.Tensor((n,), dtype=\"float32\"))"),
        "{text}"
    );
    assert!(text.contains("    y: R.Tensor((n,), dtype=\"float32\")"), "{text}");
}

#[test]
fn check_reports_type_and_struct_info_errors_with_their_rules() {
    let src = "@R.function\ndef main(x: R.Tensor((2,), \"float32\"), y: R.Tensor((3,), \"float32\")):\n    z = R.add(x, y)\n    w: R.Tensor((2,), \"int32\") = x\n    return z\n";
    let out = oracle(&["check", "-"], Some(src));
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("error[OP-add]: relax.add: dimensions 2 and 3 cannot be broadcast"), "{err}");
    assert!(err.contains("error[TY-10.1.2]"), "{err}");
    assert!(err.contains("error[SI-D-8.2.3]"), "{err}");
    assert!(err.contains("SI-CC-5.1: dtype float32 where int32 is expected"), "{err}");
}

#[test]
fn check_warnings_do_not_fail() {
    let src = "@R.function\ndef main(x: R.Tensor((\"n\",), \"float32\"), y: R.Tensor((\"m\",), \"float32\")):\n    z = R.add(x, y)\n    return z\n";
    let out = oracle(&["check", "-"], Some(src));
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("warning[OP-add]"), "{err}");
}

#[test]
fn prove_prints_the_verdict_of_the_chosen_back_end() {
    let ask = |args: &[&str]| {
        let out = oracle(args, None);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    assert_eq!(ask(&["prove", "(n + 1) * (n - 1)", "n * n - 1"]), "equal");
    assert_eq!(ask(&["prove", "n + 1", "n", "--prover", "egg"]), "not-equal");
    assert_eq!(ask(&["prove", "2 * n + 1", "2 * m", "--prover", "z3"]), "not-equal");
    assert_eq!(ask(&["prove", "n * m", "n"]), "unknown");
    // The spec's minimum: alpha-equivalence after constant folding.
    assert_eq!(ask(&["prove", "n * 2", "2 * n", "--prover", "syntactic"]), "unknown");
    assert_eq!(ask(&["prove", "n * (1 + 1)", "n * 2", "--prover", "syntactic"]), "equal");
    let verbose = oracle(&["prove", "n", "n + 0", "--verbose"], None);
    assert!(String::from_utf8(verbose.stderr).unwrap().starts_with("decided by"));
}

#[test]
fn prove_reports_syntax_errors_in_the_side_they_occur() {
    let out = oracle(&["prove", "n", "n +"], None);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("error[syntax]") && err.contains("RHS:1:4"), "{err}");
    let bad = oracle(&["prove", "n", "m", "--prover", "magic"], None);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8(bad.stderr).unwrap().contains("unknown prover `magic`"));
}

#[test]
fn check_uses_the_chosen_prover() {
    let file = "corpus/prover/off_by_one_incompatible.rx";
    let auto = oracle(&["check", file], None);
    assert_eq!(auto.status.code(), Some(1), "auto proves n + 1 != n: an error");
    let syntactic = oracle(&["check", "--prover", "syntactic", file], None);
    assert!(syntactic.status.success(), "syntactic cannot decide it: a warning");
    assert!(String::from_utf8(syntactic.stderr).unwrap().contains("only possibly compatible"));
}

#[test]
fn eval_prints_the_result_or_the_typed_error() {
    let prog = "from tvm.script import relax as R\n\n\n@R.function\ndef main(x: R.Tensor((\"n\", 2), \"int32\")) -> R.Tensor((\"n\", 2), \"int32\"):\n    y = R.add(x, x)\n    return y\n";
    let ok = oracle(&["eval", "-", "R.const([[1, 2]], \"int32\")"], Some(prog));
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert_eq!(String::from_utf8(ok.stdout).unwrap().trim(), "R.const([[2, 4]], \"int32\")");
    let bad = oracle(&["eval", "-", "R.const([1, 2, 3], \"int32\")"], Some(prog));
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(err.starts_with("error[MatchCastMismatch] (SI-MC-2)"), "{err}");
}

#[test]
fn eval_reads_npy_arguments_and_writes_npy_results() {
    let prog = "from tvm.script import relax as R\n\n\n@R.function\ndef main(x: R.Tensor((\"n\",), \"int64\")):\n    y = R.add(x, x)\n    return (x, y)\n";
    let dir = std::env::temp_dir().join(format!("oracle-npy-{}", std::process::id()));
    let out = oracle(&["eval", "-", "@oracle/tests/fixtures/i_i64.npy", "--out", dir.to_str().unwrap()], Some(prog));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // i_i64.npy was written by NumPy: [7, -1].
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        "(R.const([7, -1], \"int64\"), R.const([14, -2], \"int64\"))"
    );
    let back = std::fs::read(dir.join("result_1.npy")).unwrap();
    let a = oracle::eval::npy::read_npy(&back).unwrap();
    assert_eq!(a.shape, vec![2]);
    let _ = std::fs::remove_dir_all(&dir);
    let missing = oracle(&["eval", "-", "@no/such.npy"], Some(prog));
    assert_eq!(missing.status.code(), Some(1));
}

/// The README's main-job command: the bundled MLP on bundled inputs, against NumPy.
#[test]
fn the_bundled_mlp_matches_numpy() {
    let dir = std::env::temp_dir().join(format!("oracle-mlp-{}", std::process::id()));
    let out = oracle(
        &[
            "eval",
            "examples/mlp/mlp.rx",
            "@examples/mlp/x.npy",
            "@examples/mlp/w1.npy",
            "@examples/mlp/b1.npy",
            "@examples/mlp/w2.npy",
            "--out",
            dir.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let npy = |p: std::path::PathBuf| oracle::eval::npy::read_npy(&std::fs::read(p).unwrap()).unwrap();
    let got = npy(dir.join("result.npy"));
    let want = npy(Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/mlp/expected.npy"));
    assert_eq!(got.shape, want.shape);
    for i in 0..want.data.len() {
        let (spec_model::grammar::Scalar::Float(g), spec_model::grammar::Scalar::Float(w)) =
            (got.data.get(i), want.data.get(i))
        else {
            panic!("float32 results expected")
        };
        assert!((g - w).abs() <= 1e-5, "element {i}: {g} vs {w}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fields of a flat JSON object of numbers, strings, booleans and nulls (what the
/// final `bench:` line holds), as text.
fn flat_json(line: &str) -> std::collections::HashMap<String, String> {
    let body = line.trim().strip_prefix('{').and_then(|l| l.strip_suffix('}')).expect("a JSON object");
    body.split(',')
        .map(|field| {
            let (k, v) = field.split_once(':').expect("key:value");
            let k = k.trim().strip_prefix('"').and_then(|k| k.strip_suffix('"')).expect("a quoted key");
            (k.to_string(), v.trim().trim_matches('"').to_string())
        })
        .collect()
}

/// `eval --bench 3` on a benchmark program in each engine: the result prints as usual
/// (stdout), the timings as `bench:` lines (stderr), the last one JSON with the figures
/// the peer script reads.
#[test]
fn eval_bench_times_the_call_in_either_engine() {
    let args = [
        "bench/chain100.rx",
        "R.const([1, -2, 3, 0.5], \"float32\")",
        "R.const([0.25, 0.5, -1, 2], \"float32\")",
        "R.const([1, 0.5, 1.5, 0.75], \"float32\")",
    ];
    let plain = oracle(&[&["eval"][..], &args].concat(), None);
    assert!(plain.status.success(), "{}", String::from_utf8_lossy(&plain.stderr));
    for (engine, threads) in [("optimized", "2"), ("oracle", "1")] {
        let out = oracle(&[&["eval", "--bench", "3", "--engine", engine, "--threads", "2"][..], &args].concat(), None);
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(out.status.success(), "{err}");
        assert_eq!(out.stdout, plain.stdout, "the last call's result prints as without --bench");
        assert!(err.lines().any(|l| l.starts_with("bench: parse ") && l.contains("check")), "{err}");
        assert!(err.lines().any(|l| l.starts_with("bench: per call: min ")), "{err}");
        let json = err.lines().last().and_then(|l| l.strip_prefix("bench: ")).expect("a last bench: line");
        let f = flat_json(json);
        assert_eq!(f["engine"], engine, "{json}");
        assert_eq!(f["threads"], threads, "{json}");
        assert_eq!((f["iters"].as_str(), f["warmup"].as_str(), f["ok"].as_str()), ("3", "3", "true"), "{json}");
        let ns = |k: &str| f[k].parse::<u64>().unwrap_or_else(|_| panic!("{k} in {json}"));
        assert!(ns("min_ns") > 0 && ns("min_ns") <= ns("median_ns") && ns("median_ns") <= ns("max_ns"), "{json}");
        ns("parse_ns");
        ns("check_ns");
        if engine == "optimized" {
            ns("compile_ns");
            assert!(ns("peak_bytes") >= 16, "{json}");
        } else {
            assert_eq!((f["compile_ns"].as_str(), f["peak_bytes"].as_str()), ("null", "null"), "{json}");
        }
    }
    let both = oracle(&[&["eval", "--bench", "3", "--engine", "both"][..], &args].concat(), None);
    assert_eq!(both.status.code(), Some(2), "a usage error");
    let err = String::from_utf8(both.stderr).unwrap();
    assert!(err.starts_with("error[usage]: --bench times one engine") && err.contains("--engine optimized"), "{err}");
    // --quiet leaves the value out, and the figures in.
    let quiet = oracle(&[&["eval", "--bench", "1", "--quiet", "--engine", "optimized"][..], &args].concat(), None);
    assert!(quiet.status.success() && quiet.stdout.is_empty());
    assert!(String::from_utf8(quiet.stderr).unwrap().contains("\"min_ns\":"));
}

/// The benchmark programs (`bench/`, run by `scripts/bench-peers` and `cargo bench -p
/// optimized` but by no test) stay valid programs.
#[test]
fn the_bench_programs_check() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "rx"));
    assert!(files.len() >= 7, "{files:?}");
    for f in files {
        let out = oracle(&["check", f.to_str().unwrap()], None);
        assert!(out.status.success(), "{}: {}", f.display(), String::from_utf8_lossy(&out.stderr));
    }
}

/// `eval --engine both` grants a sum over an intermediate tensor the tolerance of that
/// tensor's size: a float32 broadcast of 2^20 elements that cancel, summed, differs
/// between the in-order sum (1.0) and the engine's reassociated one (32768.0 on AVX-512)
/// by more than a tolerance sized for 2^20 elements allows, and by less than one sized
/// for the 4 MiB intermediate.
#[test]
fn eval_both_sizes_its_tolerance_by_the_largest_intermediate() {
    let prog = "from tvm.script import relax as R\n\n\n@R.function\n\
        def main(x: R.Tensor((4,), \"float32\")) -> R.Tensor((), \"float32\"):\n    \
        y = R.broadcast_to(x, R.shape([262144, 4]))\n    s = R.sum(y)\n    return s\n";
    let arg = "R.const([100000000.0, 1.0, -100000000.0, 1.0], \"float32\")";
    let out = oracle(&["eval", "-", "--engine", "both", arg], Some(prog));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("agree"), "{err}");
}
