//! The unary math and activation operators (issue 19) join fused groups (G-10) and
//! compute there exactly what they compute one by one.

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

/// `OPS` applied in turn to `matmul(x, w) + b`, in one dataflow block (fused).
fn fused(ops: &[&str]) -> String {
    let mut body = String::from("        h = R.matmul(x, w)\n        v0 = R.add(h, b)\n");
    for (i, op) in ops.iter().enumerate() {
        body.push_str(&format!("        v{} = R.{op}(v{i})\n", i + 1));
    }
    format!(
        "@R.function\ndef main(x: R.Tensor((2, 3), \"float32\"), w: R.Tensor((3, 4), \"float32\"), b: R.Tensor((4,), \"float32\")):\n    with R.dataflow():\n{body}        R.output(v{n})\n    return v{n}\n",
        n = ops.len()
    )
}

/// The same, every intermediate returned (nothing fuses): the last one first.
fn unfused(ops: &[&str]) -> String {
    let mut body = String::from("    h = R.matmul(x, w)\n    v0 = R.add(h, b)\n");
    for (i, op) in ops.iter().enumerate() {
        body.push_str(&format!("    v{} = R.{op}(v{i})\n", i + 1));
    }
    let all: Vec<String> = (0..=ops.len()).rev().map(|i| format!("v{i}")).collect();
    format!(
        "@R.function\ndef main(x: R.Tensor((2, 3), \"float32\"), w: R.Tensor((3, 4), \"float32\"), b: R.Tensor((4,), \"float32\")):\n{body}    return ({}, h)\n",
        all.join(", ")
    )
}

#[test]
fn unary_math_fuses_and_computes_the_unfused_result() {
    let x = Value::tensor(Tensor::new(&[2, 3], &[1.0f32, -2.0, 0.5, 3.0, 0.25, -1.0]).unwrap());
    let w = Value::tensor(
        Tensor::new(&[3, 4], &[0.5f32, -1.0, 2.0, 0.0, 1.5, 0.25, -0.75, 1.0, -2.0, 0.5, 1.0, 3.0]).unwrap(),
    );
    let b = Value::tensor(Tensor::new(&[4], &[0.1f32, -0.2, 0.3, -5.0]).unwrap());
    let chains: [&[&str]; 4] = [
        &["nn.gelu", "square", "round"],
        &["nn.gelu_tanh", "sin", "floor"],
        &["nn.silu", "cos", "ceil", "sign"],
        &["erf", "rsqrt"],
    ];
    for ops in chains {
        let groups = count(Counter::FusedGroups);
        let f = run(&fused(ops), &[x.clone(), w.clone(), b.clone()]);
        assert!(count(Counter::FusedGroups) > groups, "{ops:?} ran fused");
        let Value::Tuple(u) = run(&unfused(ops), &[x.clone(), w.clone(), b.clone()]) else { panic!("a tuple") };
        let (f, u) = (floats(&f), floats(&u[0]));
        assert!(
            f.iter().zip(&u).all(|(p, q)| p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan())),
            "{ops:?}: {f:?} vs {u:?}"
        );
    }
}
