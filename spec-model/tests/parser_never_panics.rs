//! The parser never panics: random bytes and random mutations of the corpus files
//! either parse or give a diagnostic (which renders), and every mutant that parses
//! also round-trips through the printer.

mod common;

use common::corpus_files;
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use spec_model::text::{check_round_trip, parse_module};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

static CASES: AtomicUsize = AtomicUsize::new(0);
static PARSED: AtomicUsize = AtomicUsize::new(0);

/// Seeds beyond the corpus, so the test means something even on an empty corpus.
const BUILTIN_SEEDS: &[&str] = &[include_str!("seeds/module.rx"), include_str!("seeds/relax_features.rx")];

fn seeds() -> &'static Vec<String> {
    static SEEDS: OnceLock<Vec<String>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut out: Vec<String> = BUILTIN_SEEDS.iter().map(|s| s.to_string()).collect();
        out.extend(corpus_files("").into_iter().map(|(_, src)| src));
        out
    })
}

/// Fragments worth inserting: the tokens the grammar turns on.
const FRAGMENTS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    ".",
    "=",
    "\n",
    "    ",
    "\t",
    "\"",
    "'",
    "#",
    "@",
    "\\\n",
    "-",
    "*",
    "//",
    "%",
    "<",
    "and ",
    "not ",
    "R.",
    "T.",
    "cls.",
    "def ",
    "class ",
    "if ",
    "else:",
    "elif ",
    "return ",
    "with ",
    "for ",
    " in ",
    "pass",
    "lambda",
    "None",
    "True",
    "0",
    "-1",
    "1.5e3",
    "99999999999999999999999",
    "x",
    "n",
    "\"n\"",
    "\"float32\"",
    "R.Tensor",
    "R.Tensor((n, 4), \"float32\")",
    "R.Shape([n])",
    "R.Tuple(",
    "R.Callable(",
    "R.const(",
    "R.shape([",
    "R.match_cast(",
    "R.dataflow()",
    "R.output(",
    "R.call_tir(",
    "R.call_packed(",
    "R.prim_value(",
    "R.func_attr({",
    "n = T.int64()",
    "T.int64(",
    "T.grid(",
    "T.block(",
    "T.axis.remap(\"SR\", [",
    "T.Buffer((",
    "T.match_buffer(",
    "T.alloc_buffer(",
    "T.init()",
    "T.reads(",
    "out_sinfo=",
    "sinfo_args=",
    "@R.function\n",
    "@T.prim_func\n",
    "float(\"nan\")",
    "é",
    "\u{0}",
    "\r\n",
];

#[derive(Clone, Debug)]
enum Edit {
    Delete { at: usize, len: usize },
    Insert { at: usize, fragment: usize },
    Duplicate { at: usize, len: usize },
    Byte { at: usize, byte: u8 },
    SwapLines { a: usize, b: usize },
}

#[derive(Clone, Debug)]
enum Input {
    Bytes(Vec<u8>),
    Mutant { seed: usize, edits: Vec<Edit> },
}

impl Arbitrary for Edit {
    fn arbitrary(g: &mut Gen) -> Edit {
        let at = usize::arbitrary(g);
        match u8::arbitrary(g) % 5 {
            0 => Edit::Delete { at, len: 1 + usize::arbitrary(g) % 12 },
            1 | 2 => Edit::Insert { at, fragment: usize::arbitrary(g) },
            3 => Edit::Duplicate { at, len: 1 + usize::arbitrary(g) % 40 },
            _ if bool::arbitrary(g) => Edit::Byte { at, byte: u8::arbitrary(g) },
            _ => Edit::SwapLines { a: at, b: usize::arbitrary(g) },
        }
    }
}

impl Arbitrary for Input {
    fn arbitrary(g: &mut Gen) -> Input {
        if u8::arbitrary(g) % 4 == 0 {
            Input::Bytes(Vec::arbitrary(g))
        } else {
            let n = 1 + usize::arbitrary(g) % 6;
            Input::Mutant { seed: usize::arbitrary(g), edits: (0..n).map(|_| Edit::arbitrary(g)).collect() }
        }
    }
    fn shrink(&self) -> Box<dyn Iterator<Item = Input>> {
        match self {
            Input::Bytes(b) => Box::new(b.shrink().map(Input::Bytes)),
            Input::Mutant { seed, edits } => {
                let seed = *seed;
                Box::new(
                    (0..edits.len())
                        .map(move |i| {
                            let mut e = edits.clone();
                            e.remove(i);
                            Input::Mutant { seed, edits: e }
                        })
                        .collect::<Vec<_>>()
                        .into_iter(),
                )
            }
        }
    }
}

fn apply(src: &str, edits: &[Edit]) -> Vec<u8> {
    let mut b = src.as_bytes().to_vec();
    for e in edits {
        let at = |x: usize, len: usize| if len == 0 { 0 } else { x % (len + 1) };
        match e {
            Edit::Delete { at: x, len } => {
                let s = at(*x, b.len());
                let end = (s + len).min(b.len());
                b.drain(s..end);
            }
            Edit::Insert { at: x, fragment } => {
                let s = at(*x, b.len());
                let f = FRAGMENTS[fragment % FRAGMENTS.len()].as_bytes();
                b.splice(s..s, f.iter().copied());
            }
            Edit::Duplicate { at: x, len } => {
                let s = at(*x, b.len());
                let end = (s + len).min(b.len());
                let piece = b[s..end].to_vec();
                b.splice(s..s, piece);
            }
            Edit::Byte { at: x, byte } => {
                if !b.is_empty() {
                    let s = x % b.len();
                    b[s] = *byte;
                }
            }
            Edit::SwapLines { a, b: c } => {
                let text = String::from_utf8_lossy(&b).into_owned();
                let mut lines: Vec<&str> = text.split('\n').collect();
                if !lines.is_empty() {
                    let (i, j) = (a % lines.len(), c % lines.len());
                    lines.swap(i, j);
                }
                b = lines.join("\n").into_bytes();
            }
        }
    }
    b
}

/// Runs the static semantics on whatever parses: well-formedness, normalization, and,
/// on a well-formed program in normal form, StructInfo derivation and type checking.
/// None of them may panic.
fn static_checks(m: &spec_model::grammar::IRModule) {
    if spec_model::well_formed::check_well_formed(m).iter().any(|d| d.is_error()) {
        return;
    }
    if let Ok(n) = spec_model::normal_form::normalize(m) {
        if spec_model::normal_form::check_normal_form(&n).is_empty() {
            let s = spec_model::struct_info::derive_struct_info(&n, &spec_model::struct_info::SyntacticProver);
            let _ = spec_model::types::check_types(&n, &s);
        }
    }
}

fn check(input: Input) -> TestResult {
    CASES.fetch_add(1, Ordering::Relaxed);
    let bytes = match &input {
        Input::Bytes(b) => b.clone(),
        Input::Mutant { seed, edits } => {
            let s = seeds();
            apply(&s[seed % s.len()], edits)
        }
    };
    let src = String::from_utf8_lossy(&bytes);
    match parse_module(&src) {
        Ok(m) => match check_round_trip(&m).inspect(|_| {
            static_checks(&m);
            PARSED.fetch_add(1, Ordering::Relaxed);
        }) {
            Ok(_) => TestResult::passed(),
            Err(e) => TestResult::error(format!("a mutant parses but does not round-trip: {e}\n--- source\n{src}")),
        },
        Err(e) => {
            // The diagnostic must render with a position inside the text.
            let rendered = e.render("mutant.rx", &src);
            if rendered.is_empty() {
                return TestResult::error("empty diagnostic");
            }
            TestResult::passed()
        }
    }
}

#[test]
fn parser_never_panics_on_random_and_mutated_input() {
    assert!(seeds().len() >= BUILTIN_SEEDS.len());
    QuickCheck::new().tests(12_000).max_tests(24_000).rng(Gen::new(120)).quickcheck(check as fn(Input) -> TestResult);
    let (cases, parsed) = (CASES.load(Ordering::Relaxed), PARSED.load(Ordering::Relaxed));
    println!("{cases} cases, {parsed} parsed and round-tripped, {} seeds", seeds().len());
    assert!(cases >= 10_000, "only {cases} cases ran");
    // Mutation must leave some programs valid, or the round-trip half tests nothing.
    assert!(parsed * 20 >= cases, "only {parsed} of {cases} mutants parsed");
}

#[test]
fn every_seed_parses_and_round_trips() {
    for s in BUILTIN_SEEDS {
        let m = parse_module(s).unwrap_or_else(|e| panic!("{}", e.render("seed", s)));
        check_round_trip(&m).unwrap();
    }
}
