//! Fusion and buffer reuse: a fused group computes what its operators compute one by
//! one, and a result is written into an operand's buffer only when nothing else can
//! see that buffer (a tuple field, a caller's argument, a captured variable).

use optimized::stats::{snapshot, Counter};
use optimized::{Engine, Limits, Tensor, Value};

fn count(c: Counter) -> u64 {
    snapshot().into_iter().find(|(k, _)| *k == c).map_or(0, |(_, n)| n)
}

fn run(src: &str, args: &[Value]) -> Value {
    let m = spec_model::text::parse_module(src).expect("parses");
    let exe = Engine::compile(&m).expect("compiles");
    exe.run("main", args, Limits { threads: 1, ..Limits::default() }).unwrap().result.expect("runs")
}

fn floats(v: &Value) -> Vec<f32> {
    match v {
        Value::Tensor(t) => t.elements::<f32>().unwrap().to_vec(),
        other => panic!("not a tensor: {other:?}"),
    }
}

fn f32s(shape: &[u64], v: &[f32]) -> Value {
    Value::tensor(Tensor::new(shape, v).unwrap())
}

const MLP: &str = r#"
@R.function
def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32"), b: R.Tensor((4,), "float32")) -> R.Tensor((2, 4), "float32"):
    with R.dataflow():
        h = R.matmul(x, w)
        y = R.add(h, b)
        z = R.nn.relu(y)
        R.output(z)
    return z
"#;

/// The same computation with every intermediate escaping (returned), so nothing fuses.
const MLP_UNFUSED: &str = r#"
@R.function
def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32"), b: R.Tensor((4,), "float32")):
    h = R.matmul(x, w)
    y = R.add(h, b)
    z = R.nn.relu(y)
    return (z, y, h)
"#;

#[test]
fn a_matmul_epilogue_fuses_and_computes_the_unfused_result() {
    let x = f32s(&[2, 3], &[1.0, -2.0, 0.5, 3.0, 0.25, -1.0]);
    let w = f32s(&[3, 4], &[0.5, -1.0, 2.0, 0.0, 1.5, 0.25, -0.75, 1.0, -2.0, 0.5, 1.0, 3.0]);
    let b = f32s(&[4], &[0.1, -0.2, 0.3, -5.0]);
    let (groups, inplace) = (count(Counter::FusedGroups), count(Counter::InPlace));
    let fused = run(MLP, &[x.clone(), w.clone(), b.clone()]);
    assert!(count(Counter::FusedGroups) > groups, "the group ran fused");
    assert!(count(Counter::InPlace) > inplace, "the epilogue wrote into the matmul's result");
    let Value::Tuple(unfused) = run(MLP_UNFUSED, &[x, w, b]) else { panic!("a tuple") };
    assert_eq!(floats(&fused), floats(&unfused[0]));
    assert!(floats(&fused).contains(&0.0) && floats(&fused).iter().any(|v| *v > 0.0));
}

#[test]
fn a_buffer_still_seen_elsewhere_is_never_overwritten() {
    let src = r#"
@R.function
def main(x: R.Tensor((4,), "float32"), c: R.Tensor((4,), "float32")):
    with R.dataflow():
        a = R.exp(x)
        t = (a,)
        b = R.add(a, c)
        d = R.nn.relu(b)
        e = R.multiply(x, c)
        f = R.negative(e)
        R.output(t, d, f)
    return (t, d, f)
"#;
    let x = f32s(&[4], &[0.0, 1.0, -1.0, 2.0]);
    let c = f32s(&[4], &[-1.0, -1.0, -1.0, -1.0]);
    let before = count(Counter::FusedGroups);
    let Value::Tuple(r) = run(src, &[x.clone(), c.clone()]) else { panic!("a tuple") };
    assert!(count(Counter::FusedGroups) >= before + 2, "both chains fused");
    let Value::Tuple(t) = &r[0] else { panic!("a tuple") };
    let exp: Vec<f32> = [0.0f32, 1.0, -1.0, 2.0].iter().map(|v| v.exp()).collect();
    assert_eq!(floats(&t[0]), exp, "the tuple's field keeps exp(x)");
    let relu: Vec<f32> = exp.iter().map(|v| (v - 1.0).max(0.0)).collect();
    assert_eq!(floats(&r[1]), relu);
    assert_eq!(floats(&r[2]), [0.0, 1.0, -1.0, 2.0]);
    assert_eq!(floats(&x), [0.0, 1.0, -1.0, 2.0], "the caller's argument is untouched");
    assert_eq!(floats(&c), [-1.0; 4]);
}

#[test]
fn a_group_whose_operands_are_not_what_was_declared_runs_unfused() {
    // `c` is declared float32 but a float64 tensor arrives through a lying packed
    // call's result would be a run-time error of `add`; here the shapes do not
    // broadcast at run time, which the fused path leaves to the unfused one.
    let src = r#"
@R.function
def main(x: R.Tensor(("n",), "float32"), c: R.Tensor(("m",), "float32")):
    with R.dataflow():
        a = R.exp(x)
        b = R.add(a, c)
        d = R.nn.relu(b)
        R.output(d)
    return d
"#;
    let m = spec_model::text::parse_module(src).unwrap();
    let exe = Engine::compile(&m).unwrap();
    let x = f32s(&[3], &[0.0, 1.0, 2.0]);
    let c = f32s(&[2], &[1.0, 2.0]);
    let e = exe.call("main", &[x.clone(), c]).unwrap_err();
    assert_eq!((e.kind, e.rule), (optimized::ErrorKind::OpError, "OP-add"), "{e:?}");
    let ok = exe.call("main", &[x, f32s(&[1], &[-1.0])]).unwrap();
    assert_eq!(floats(&ok), [0.0, 1.0f32.exp() - 1.0, 2.0f32.exp() - 1.0]);
}

#[test]
fn threads_do_not_change_a_fused_result() {
    let src = r#"
@R.function
def main(x: R.Tensor((300000,), "float32"), b: R.Tensor((1,), "float32")):
    with R.dataflow():
        y = R.add(x, b)
        z = R.multiply(y, y)
        w = R.sigmoid(z)
        R.output(w)
    return w
"#;
    let xs: Vec<f32> = (0..300000i64).map(|i| ((i * 7919) % 1000) as f32 / 250.0 - 2.0).collect();
    let m = spec_model::text::parse_module(src).unwrap();
    let exe = Engine::compile(&m).unwrap();
    let args = [f32s(&[300000], &xs), f32s(&[1], &[0.5])];
    let one = exe.run("main", &args, Limits { threads: 1, ..Limits::default() }).unwrap().result.unwrap();
    let before = count(Counter::Threaded);
    let two = exe.run("main", &args, Limits { threads: 2, ..Limits::default() }).unwrap().result.unwrap();
    assert!(count(Counter::Threaded) > before);
    assert_eq!(floats(&one), floats(&two));
}
