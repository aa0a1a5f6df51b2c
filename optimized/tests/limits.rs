//! The engine's limits end runaway programs with typed errors: deep recursion on the
//! explicit call stack (`StackExhausted`, never a native stack overflow, even a million
//! calls deep), non-termination (`FuelExhausted`), and a tensor larger than the memory
//! budget (`MemoryExhausted`, before anything is allocated).

use optimized::{Engine, ErrorKind, Executable, Limits, Tensor, Value};

const COUNT: &str = r#"
@I.ir_module
class Module:
    @R.function
    def count(n: R.Tensor((), "int64")) -> R.Tensor((), "int64"):
        stop = R.less_equal(n, R.const(0, "int64"))
        if stop:
            r = R.const(0, "int64")
        else:
            m = R.subtract(n, R.const(1, "int64"))
            s = cls.count(m)
            r = R.add(s, R.const(1, "int64"))
        return r

    @R.function
    def forever(n: R.Tensor((), "int64")) -> R.Tensor((), "int64"):
        r = cls.forever(n)
        return r

    @R.function
    def big(s: R.Shape(["m", "n"])) -> R.Tensor(("m", "n"), "float32"):
        m = T.int64()
        n = T.int64()
        y = R.zeros(s, "float32")
        return y
"#;

fn exe() -> Executable {
    Engine::compile(&spec_model::text::parse_module(COUNT).expect("parses")).expect("compiles")
}

fn scalar(n: i64) -> Value {
    Value::tensor(Tensor::new::<i64>(&[], &[n]).expect("a scalar"))
}

fn error_kind(r: Result<Value, optimized::Error>) -> ErrorKind {
    match r {
        Err(e) => e.kind,
        Ok(v) => panic!("expected an error, got {v:?}"),
    }
}

#[test]
fn a_million_deep_recursion_is_stack_exhausted_by_default() {
    let e = exe();
    assert_eq!(error_kind(e.call("count", &[scalar(1_000_000)])), ErrorKind::StackExhausted);
    assert_eq!(error_kind(e.call("count", &[scalar(1_500)])), ErrorKind::StackExhausted);
    assert!(e.call("count", &[scalar(900)]).is_ok());
}

#[test]
fn a_million_deep_recursion_runs_when_the_limit_allows_it() {
    // The call stack is a vector, so depth costs memory, not native stack.
    let limits = Limits { fuel: u64::MAX, max_depth: 2_000_000, ..Limits::default() };
    let o = exe().run("count", &[scalar(1_000_000)], limits).expect("entry exists");
    let Ok(Value::Tensor(t)) = o.result else { panic!("expected a tensor") };
    assert_eq!(&*t.elements::<i64>().expect("readable"), &[1_000_000]);
}

#[test]
fn non_termination_is_fuel_exhausted() {
    let limits = Limits { max_depth: usize::MAX, ..Limits::default() };
    let o = exe().run("forever", &[scalar(1)], limits).expect("entry exists");
    assert_eq!(error_kind(o.result), ErrorKind::FuelExhausted);
}

#[test]
fn a_trillion_element_tensor_is_refused_before_allocating() {
    let shape = Value::Shape(vec![1_000_000i64, 1_000_000].into());
    let o = exe().run("big", &[shape], Limits::default()).expect("entry exists");
    assert_eq!(o.peak_memory, 0, "nothing was allocated");
    let e = o.result.expect_err("refused");
    assert_eq!((e.kind, e.rule), (ErrorKind::MemoryExhausted, "LIMIT-memory"));
}
