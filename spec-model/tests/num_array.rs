//! Large `R.const` literals read whole by the lexer (`text::num_array`) mean exactly
//! what the ordinary path makes of them: the same dtype, shape and element bits, and
//! an error wherever the ordinary path gives one.

use spec_model::limits::Budgets;
use spec_model::text::lexer::{tokenize, Tok};
use spec_model::text::num_array::MIN_ELEMENTS;
use spec_model::text::{check_round_trip, parse_module, print_module, DEFAULT_WIDTH};

/// A small deterministic generator (xorshift), so that a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Ints,
    Floats,
    Bools,
    Mixed,
    Specials,
    HugeInts,
}

fn element(r: &mut Rng, kind: Kind) -> String {
    let sign = |r: &mut Rng| ["", "-", "- ", "+"][r.below(4) as usize];
    let int = |r: &mut Rng| match r.below(6) {
        0 => format!("0x{:x}", r.below(1000)),
        1 => format!("1_{:03}", r.below(1000)),
        2 => "0".to_string(),
        _ => r.below(300).to_string(),
    };
    let float = |r: &mut Rng| match r.below(5) {
        0 => format!(".{}", r.below(100)),
        1 => format!("{}.", r.below(100)),
        2 => format!("{}e-{}", r.below(100), r.below(40)),
        3 => format!("{}.{}E{}", r.below(10), r.below(1000), r.below(40)),
        _ => format!("{}.{}", r.below(70000), r.below(100)),
    };
    match kind {
        Kind::Ints => format!("{}{}", sign(r), int(r)),
        Kind::Floats => format!("{}{}", sign(r), float(r)),
        Kind::Bools => ["True", "False"][r.below(2) as usize].to_string(),
        Kind::Mixed if r.chance(50) => format!("{}{}", sign(r), int(r)),
        Kind::Mixed => format!("{}{}", sign(r), float(r)),
        Kind::Specials => match r.below(6) {
            0 => "float(\"nan\")".into(),
            1 => "-float(\"inf\")".into(),
            2 => "float('Infinity')".into(),
            3 => "-float(\"nan\")".into(),
            _ => format!("{}{}", sign(r), float(r)),
        },
        Kind::HugeInts => match r.below(4) {
            0 => "9007199254740993".into(),
            1 => "-9223372036854775808".into(),
            2 => "18446744073709551615".into(),
            _ => format!("{}{}", sign(r), int(r)),
        },
    }
}

/// Nested lists of `shape`, with random spacing, line breaks, comments and trailing
/// commas; `break_it` makes one row ragged, one list empty, or one element a name.
fn literal(r: &mut Rng, shape: &[u64], kind: Kind, break_it: bool) -> String {
    fn go(r: &mut Rng, shape: &[u64], kind: Kind, out: &mut String) {
        out.push('[');
        let n = shape[0];
        for i in 0..n {
            if shape.len() == 1 {
                out.push_str(&element(r, kind));
            } else {
                go(r, &shape[1..], kind, out);
            }
            if i + 1 < n || r.chance(5) {
                out.push(',');
            }
            match r.below(20) {
                0 => out.push_str("  # a comment\n"),
                1 => out.push('\n'),
                2 => out.push_str("\t "),
                _ => out.push(' '),
            }
        }
        out.push(']');
    }
    let mut out = String::new();
    go(r, shape, kind, &mut out);
    if break_it {
        let at = out.rfind(", ").unwrap_or(1);
        let with: &str = ["x, ", "[], ", "[1], ", ",, ", "1 2, ", "True, ", "1.5, ", "0777, "][r.below(8) as usize];
        out.replace_range(at..at + 2, &format!(", {with}"));
    }
    out
}

fn module(value: &str, dtype: &str, fast: bool) -> String {
    let args =
        if fast { format!("{value}{dtype}") } else { format!("value={value}{}", dtype.replacen(",", ", dtype=", 1)) };
    format!("from tvm.script import relax as R\n\n@R.function\ndef main():\n    c = R.const({args})\n    return c\n")
}

fn read_whole(src: &str) -> bool {
    tokenize(src).is_ok_and(|ts| ts.iter().any(|t| matches!(t.tok, Tok::NumArray(_))))
}

#[test]
fn large_literals_mean_what_the_ordinary_path_says() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let kinds = [Kind::Ints, Kind::Floats, Kind::Bools, Kind::Mixed, Kind::Specials, Kind::HugeInts];
    let dtypes = [
        "",
        ", \"float32\"",
        ", \"float16\"",
        ", \"float64\"",
        ", \"int8\"",
        ", \"int64\"",
        ", \"uint8\"",
        ", \"bool\"",
    ];
    let (mut whole, mut agreed_errors) = (0, 0);
    for case in 0..600 {
        let shape: Vec<u64> = match r.below(3) {
            0 => vec![256 + r.below(300)],
            1 => vec![2 + r.below(20), 16 + r.below(40)],
            _ => vec![2 + r.below(4), 2 + r.below(5), 32 + r.below(10)],
        };
        let kind = kinds[r.below(kinds.len() as u64) as usize];
        let break_it = r.chance(20);
        let lit = literal(&mut r, &shape, kind, break_it);
        let dtype = dtypes[r.below(dtypes.len() as u64) as usize];
        let (fast_src, slow_src) = (module(&lit, dtype, true), module(&lit, dtype, false));
        assert!(!read_whole(&slow_src), "case {case}: the keyword form takes the ordinary path");
        let clean =
            !break_it && !matches!(kind, Kind::HugeInts) && shape.iter().product::<u64>() >= MIN_ELEMENTS as u64;
        if clean {
            assert!(read_whole(&fast_src), "case {case}: a clean {kind:?} literal is read whole:\n{fast_src}");
            whole += 1;
        }
        match (parse_module(&fast_src), parse_module(&slow_src)) {
            (Ok(a), Ok(b)) => {
                let (pa, pb) = (print_module(&a, DEFAULT_WIDTH), print_module(&b, DEFAULT_WIDTH));
                assert!(pa == pb, "case {case} ({kind:?}{dtype}): the two paths disagree\n{fast_src}");
            }
            (Err(_), Err(_)) => agreed_errors += 1,
            (a, b) => panic!(
                "case {case} ({kind:?}{dtype}): one path fails: whole {:?}, ordinary {:?}\n{fast_src}",
                a.err().map(|e| e.to_string()),
                b.err().map(|e| e.to_string())
            ),
        }
    }
    // The cases must exercise both the agreement on values and on errors.
    eprintln!("read whole {whole}, errors {agreed_errors}");
    assert!(whole > 200 && agreed_errors > 100, "read whole {whole}, errors {agreed_errors}");
}

#[test]
fn the_threshold_is_min_elements() {
    let lit = |n: usize| format!("[{}]", vec!["1.5"; n].join(", "));
    assert!(!read_whole(&module(&lit(MIN_ELEMENTS - 1), ", \"float32\"", true)));
    assert!(read_whole(&module(&lit(MIN_ELEMENTS), ", \"float32\"", true)));
    // Only right after `R.const(`: a list elsewhere is an ordinary list.
    let shape = format!(
        "from tvm.script import relax as R\n\n@R.function\ndef main():\n    s = R.shape({})\n    return s\n",
        lit(300).replace(".5", "")
    );
    assert!(!read_whole(&shape));
    parse_module(&shape).expect("a 300-dimension shape value");
}

#[test]
fn the_constant_budget_holds_on_the_whole_path() {
    let src = module(&format!("[{}]", vec!["2"; 301].join(", ")), ", \"int32\"", true);
    let b = Budgets { constant_elements: 300, ..Budgets::DEFAULT };
    let err = b.scope(|| parse_module(&src)).expect_err("301 elements over a budget of 300");
    assert!(err.diagnostic().message.starts_with("LIMIT-constant"), "{err}");
    let b = Budgets { constant_elements: 301, ..Budgets::DEFAULT };
    b.scope(|| parse_module(&src)).expect("exactly 301 elements");
}

#[test]
fn an_element_that_does_not_fit_is_named_by_its_index() {
    let mut items = vec!["1"; 400];
    items[317] = "300";
    let src = module(&format!("[{}]", items.join(", ")), ", \"int8\"", true);
    let err = parse_module(&src).expect_err("300 is not an int8");
    assert!(err.to_string().contains("element 317"), "{err}");
}

#[test]
fn large_constants_print_packed_and_read_back_exactly() {
    let mut r = Rng(7);
    for (kind, dtype) in [
        (Kind::Specials, "\"float32\""),
        (Kind::Floats, "\"float16\""),
        (Kind::Floats, "\"float64\""),
        (Kind::Bools, "\"bool\""),
        (Kind::Ints, "\"int64\""),
    ] {
        let lit = literal(&mut r, &[3, 200], kind, false);
        let m = parse_module(&module(&lit, &format!(", {dtype}"), true)).expect("a valid constant");
        let printed = check_round_trip(&m).expect("the printed constant reads back");
        assert!(read_whole(&printed), "{kind:?}: the printed constant is read whole");
        // Packed: far fewer lines than elements.
        assert!(printed.lines().count() < 600 / 3, "{kind:?}: {} lines", printed.lines().count());
    }
}
