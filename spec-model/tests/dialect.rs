//! The `tvm-0.27` printer: each of its spellings, and that the parser reads back
//! everything it prints (every corpus file the parser parses).

use spec_model::text::{check_round_trip_in, parse_module, print_module, print_module_in, Dialect, DEFAULT_WIDTH};
use std::path::{Path, PathBuf};

fn corpus_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the corpus directory exists")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            corpus_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rx") {
            out.push(p);
        }
    }
}

#[test]
fn every_parsed_corpus_file_round_trips_through_tvm_0_27() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let mut files = Vec::new();
    corpus_files(&root, &mut files);
    let mut parsed = 0;
    let mut failures = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).expect("a readable corpus file");
        let Ok(m) = parse_module(&src) else { continue };
        parsed += 1;
        if let Err(e) = check_round_trip_in(&m, Dialect::Tvm027) {
            failures.push(format!("{}: {e}", f.display()));
        }
    }
    assert!(parsed > 100, "only {parsed} corpus files parse");
    assert!(failures.is_empty(), "{} of {parsed} files fail:\n{}", failures.len(), failures.join("\n\n"));
}

const MODULE: &str = r#"
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tir as T


@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("b"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] + T.float32(1)

    @T.prim_func
    def half(A: T.Buffer((4,), "float16"), B: T.Buffer((4,), "float16")):
        for i in range(4):
            B[i] = A[i] * T.float16(0.5)

    @R.function(pure=False)
    def main(x: R.Tensor(("n",), "float32"), p: R.Callable(ret=R.Object, derive_func="default_derive")):
        n = T.int64()
        y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((4,), "float32"))
        z = R.call_packed("f", y, sinfo_args=R.Tensor((4,), "float32"))
        a = R.prim_value(T.float32(1.5))
        b = R.prim_value(T.Select(n > 4, n, T.int64(4)))

        @R.function
        def g(v: R.Tensor((n,), "float32")) -> R.Tensor((n,), "float32"):
            return v

        return z
"#;

fn both() -> (String, String) {
    let m = parse_module(MODULE).unwrap_or_else(|e| panic!("{}", e.render("<test>", MODULE)));
    (print_module(&m, DEFAULT_WIDTH), print_module_in(&m, DEFAULT_WIDTH, Dialect::Tvm027))
}

/// `rx` is in the canonical printing and not in TVM's, which has `tvm` instead.
fn renamed(rx: &str, tvm: &str) {
    let (rx_text, tvm_text) = both();
    assert!(rx_text.contains(rx), "canonical printing lacks `{rx}`:\n{rx_text}");
    assert!(!rx_text.contains(tvm), "canonical printing has `{tvm}`:\n{rx_text}");
    assert!(tvm_text.contains(tvm), "tvm-0.27 printing lacks `{tvm}`:\n{tvm_text}");
    assert!(!tvm_text.contains(rx), "tvm-0.27 printing has `{rx}`:\n{tvm_text}");
}

#[test]
fn out_sinfo_is_out_ty() {
    renamed("out_sinfo=R.Tensor((4,)", "out_ty=R.Tensor((4,)");
}

#[test]
fn sinfo_args_is_ty_args() {
    renamed("sinfo_args=R.Tensor((4,)", "ty_args=R.Tensor((4,)");
}

#[test]
fn tir_is_imported_as_tirx() {
    renamed("from tvm.script import tir as T", "from tvm.script import tirx as T");
}

#[test]
fn prim_func_names_the_s_tir_dialect() {
    renamed("@T.prim_func(private=True)\n", "@T.prim_func(private=True, s_tir=True)\n");
    renamed("@T.prim_func\n", "@T.prim_func(s_tir=True)\n");
}

#[test]
fn block_is_sblock() {
    renamed("with T.block(\"b\"):", "with T.sblock(\"b\"):");
}

#[test]
fn derive_func_callable_has_no_ret() {
    renamed("R.Callable(ret=R.Object, derive_func=", "R.Callable(derive_func=");
}

#[test]
fn literals_are_typed_where_tvm_reads_them_otherwise() {
    // A bare float is float64 to TVM, float32 to the `.rx` parser.
    renamed("R.prim_value(1.5)", "R.prim_value(T.float32(1.5))");
    // Inside `T.Select`, TVM reads a bare integer as int32.
    renamed("T.Select(n > 4, n, 4)", "T.Select(n > 4, n, T.int64(4))");
    // Beside a float16 operand, TVM makes a bare float float32 and promotes the operand.
    renamed("A[i] * 0.5", "A[i] * T.float16(0.5)");
}

#[test]
fn local_signatures_name_the_declared_shape_variables() {
    renamed("def g(v: R.Tensor((\"n\",)", "def g(v: R.Tensor((n,)");
}

#[test]
fn a_module_of_one_function_is_a_class_with_cls() {
    let src = "from tvm.script import relax as R\n\n@R.function\ndef main(x: R.Tensor((2,), \"float32\")):\n    \
               return x\n";
    let m = parse_module(src).unwrap_or_else(|e| panic!("{}", e.render("<test>", src)));
    let rx = print_module(&m, DEFAULT_WIDTH);
    let tvm = print_module_in(&m, DEFAULT_WIDTH, Dialect::Tvm027);
    assert!(!rx.contains("class Module"), "{rx}");
    assert!(tvm.contains("@I.ir_module\nclass Module:\n    @R.function\n    def main("), "{tvm}");
    check_round_trip_in(&m, Dialect::Tvm027).unwrap_or_else(|e| panic!("{e}"));
    // A function referring to a global starts with `cls = Module`.
    let (_, tvm_text) = both();
    assert!(tvm_text.contains("        cls = Module\n"), "{tvm_text}");
    assert!(tvm_text.contains("R.call_tir(cls.add_one"), "{tvm_text}");
}

#[test]
fn the_module_round_trips_through_both_printers() {
    let m = parse_module(MODULE).unwrap_or_else(|e| panic!("{}", e.render("<test>", MODULE)));
    for d in Dialect::ALL {
        check_round_trip_in(&m, d).unwrap_or_else(|e| panic!("{d}: {e}"));
    }
}

#[test]
fn the_parser_reads_tvm_0_27_spellings() {
    let (rx_text, tvm_text) = both();
    let a = parse_module(&rx_text).unwrap_or_else(|e| panic!("{}", e.render("<rx>", &rx_text)));
    let b = parse_module(&tvm_text).unwrap_or_else(|e| panic!("{}", e.render("<tvm>", &tvm_text)));
    spec_model::alpha::alpha_eq_module(&a, &b).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn out_ty_and_out_sinfo_together_are_given_twice() {
    let src = "from tvm.script import relax as R\n\n@R.function\ndef main(x: R.Tensor((2,), \"float32\")):\n    \
               y = R.call_pure_packed(\"f\", x, sinfo_args=R.Object, ty_args=R.Object)\n    return y\n";
    let err = parse_module(src).expect_err("two StructInfo arguments");
    assert!(err.render("<test>", src).contains("given twice"), "{}", err.render("<test>", src));
}

#[test]
fn s_tir_false_is_refused() {
    let src =
        "from tvm.script import tir as T\n\n@T.prim_func(s_tir=False)\ndef f(A: T.Buffer((4,), \"float32\")):\n    \
               A[0] = T.float32(1)\n";
    let err = parse_module(src).expect_err("the tirx dialect");
    assert!(err.render("<test>", src).contains("s_tir=False"), "{}", err.render("<test>", src));
}

#[test]
fn dialect_names() {
    for d in Dialect::ALL {
        assert_eq!(d.to_string().parse::<Dialect>(), Ok(d));
    }
    assert_eq!("tvm-0.27".parse::<Dialect>(), Ok(Dialect::Tvm027));
    assert_eq!("rx".parse::<Dialect>(), Ok(Dialect::Rx));
    assert!("tvm".parse::<Dialect>().is_err());
}

#[test]
fn signature_shape_variables_are_module_type_vars() {
    // TVM 0.27 (Python 3.11) prints `n = TypeVar("n")` at module level and the bare
    // name in signatures; a compound dimension stays a string; a variable only the
    // body declares keeps `k = T.int64()`; a local function names the enclosing `n`.
    let src = "from tvm.script import relax as R\n\n@R.function\n\
def main(x: R.Tensor((\"n\", \"n * 2\"), \"float32\"), y: R.Tensor(\"float32\", ndim=1)):\n    \
k = T.int64()\n    z = R.match_cast(y, R.Tensor((k,), \"float32\"))\n    \
@R.function\n    def inner(a: R.Tensor((n, \"n * 2\"), \"float32\")) -> R.Tensor((n, \"n * 2\"), \"float32\"):\n        \
return a\n    return (inner(x), z)\n";
    let m = parse_module(src).unwrap_or_else(|e| panic!("{}", e.render("<test>", src)));
    let tvm = print_module_in(&m, DEFAULT_WIDTH, Dialect::Tvm027);
    assert!(tvm.starts_with("from typing import TypeVar\n"), "{tvm}");
    assert!(tvm.contains("\nn = TypeVar(\"n\")\n@I.ir_module\n"), "{tvm}");
    assert!(tvm.contains("x: R.Tensor((n, \"n * 2\"), dtype=\"float32\")"), "{tvm}");
    assert!(!tvm.contains("n = T.int64()"), "{tvm}");
    assert!(tvm.contains("k = T.int64()"), "{tvm}");
    assert!(!tvm.contains("k = TypeVar"), "{tvm}");
    check_round_trip_in(&m, Dialect::Tvm027).unwrap_or_else(|e| panic!("{e}"));
    // The canonical text keeps its quoted declarations.
    assert!(!print_module(&m, DEFAULT_WIDTH).contains("TypeVar"));
}
