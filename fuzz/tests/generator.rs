//! The generator's contract over 2,000 seeds: every program satisfies every invariant
//! (well-formed, normal form and idempotent normalization, print/parse round trip, no
//! StructInfo error, the oracle terminates, the normalized program agrees), and the
//! programs use every operator and at least 95% of the AST node kinds.

use arbitrary::{Arbitrary, Unstructured};
use fuzz::invariants::{check_program, check_static};
use fuzz::stats::{Stats, NODE_KINDS};
use fuzz::{generate, program_of, seed_bytes, Config, Module};

#[test]
fn two_thousand_seeds_satisfy_every_invariant() {
    let mut stats = Stats::default();
    let mut failures = Vec::new();
    for seed in 0..2000u64 {
        let m = program_of(&seed_bytes(seed), seed % 2 == 1);
        stats.add_program(&m.ir);
        match check_program(&m) {
            Ok(c) => {
                stats.add_run(&c.outcome, &c.fired);
                stats.add_engine(&c.engine);
            }
            Err(v) => failures.push(format!("seed {seed}: {} broken: {}", v.invariant, v.detail)),
        }
    }
    assert!(failures.is_empty(), "{} failures, first:\n{}", failures.len(), failures[0]);
    assert!(stats.missing_ops().is_empty(), "operators never generated: {:?}", stats.missing_ops());
    assert!(stats.missing_intrinsics().is_empty(), "TIR intrinsics never generated: {:?}", stats.missing_intrinsics());
    let covered = NODE_KINDS.len() - stats.missing_nodes().len();
    assert!(covered * 100 >= NODE_KINDS.len() * 95, "node kinds missing: {:?}", stats.missing_nodes());
    // Most runs return values: the generator avoids errors unless asked for them.
    let values = stats.outcomes.get("value").copied().unwrap_or(0);
    assert!(values * 10 >= 2000 * 8, "only {values} of 2000 runs returned a value: {:?}", stats.outcomes);
}

#[test]
fn any_bytes_generate_a_program() {
    let inputs: Vec<Vec<u8>> =
        vec![Vec::new(), vec![0], vec![0xFF; 7], vec![0; 4096], vec![0xFF; 4096], (0..=255).collect()];
    for data in inputs {
        for swarm in [false, true] {
            let m = program_of(&data, swarm);
            check_program(&m).unwrap_or_else(|v| panic!("{} broken: {}", v.invariant, v.detail));
        }
    }
}

#[test]
fn arbitrary_configs_are_clamped() {
    for seed in 0..200u64 {
        let data = seed_bytes(seed);
        let cfg = Config::arbitrary(&mut Unstructured::new(&data)).unwrap_or_default();
        assert_eq!(cfg.clone().clamped(), cfg);
        assert!(cfg.max_tensor_elems <= 4096 && cfg.max_depth <= 4 && cfg.max_functions <= 5);
    }
}

#[test]
fn the_same_bytes_give_the_same_program() {
    let data = seed_bytes(7);
    let print = |m: &Module| spec_model::text::print_module(&m.ir, 100);
    let a = generate(&mut Unstructured::new(&data), &Config::default());
    let b = generate(&mut Unstructured::new(&data), &Config::default());
    assert_eq!(print(&a), print(&b));
    assert_eq!(a.inputs, b.inputs);
}

#[test]
fn switches_turn_features_off() {
    let mut cfg = Config::default();
    cfg.features.ops = false;
    cfg.features.call_tir = false;
    cfg.features.globals = false;
    cfg.features.if_ = false;
    for seed in 0..100u64 {
        let m = generate(&mut Unstructured::new(&seed_bytes(seed)), &cfg);
        let mut s = Stats::default();
        s.add_program(&m.ir);
        assert!(!s.nodes.contains_key("If") && !s.nodes.contains_key("PrimFunc"), "seed {seed}");
        assert_eq!(m.ir.functions.len(), 1, "seed {seed}: only main");
        assert!(!s.ops.contains_key(&spec_model::ops::Op::Matmul), "seed {seed}");
    }
}

/// The invariants can fail: an ill-typed program is caught.
#[test]
fn an_ill_typed_program_breaks_the_check() {
    let src = "@R.function\ndef main(x: R.Tensor((2,), \"float32\"), y: R.Tensor((3,), \"float32\")):\n    z = R.add(x, y)\n    return z\n";
    let ir = spec_model::text::parse_module(src).unwrap();
    let m = Module { ir, entry: "main".into(), inputs: Vec::new() };
    let v = check_static(&m).expect_err("R.add of (2,) and (3,) is an error");
    assert_eq!(v.invariant, "StructInfo check");
}

/// A failure file is a corpus file: it parses, and its `run:`/`expect:` lines hold (the
/// expectation is what the oracle says on the program as written).
#[test]
fn failure_files_are_corpus_files() {
    let dir = std::env::temp_dir().join(format!("fuzz-failure-files-{}", std::process::id()));
    for seed in 0..30u64 {
        let m = program_of(&seed_bytes(seed), seed % 2 == 1);
        let v = fuzz::invariants::Violation { invariant: "none (test)", detail: "a note\nover two lines".into() };
        let path = fuzz::write_failure(&dir, &format!("seed-{seed}"), &m, &v).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains("# (call: ") {
            // No expectation (a value with an opaque part): the file must still parse.
            assert!(spec_model::text::parse_module(&text).is_ok(), "seed {seed}");
            continue;
        }
        let report = oracle::corpus::run_file(&path);
        assert!(
            matches!(report.status, oracle::corpus::Status::Pass),
            "seed {seed}: {:?}\n{}",
            report.expectations,
            std::fs::read_to_string(&path).unwrap()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Generated programs fit a quarter of the default budgets (LIMIT-*), so the defaults
/// hold them by a wide margin: the printed program parses and checks with no limit
/// error, and the oracle runs it in a tenth of the fuel and 64 MiB.
#[test]
fn generated_programs_fit_a_quarter_of_the_budgets() {
    use oracle::eval::{run::outcome, value::ErrorKind, Limits};
    use spec_model::limits::Budgets;
    let tight = Budgets { fuel: Budgets::DEFAULT.fuel / 10, memory: 64 << 20, ..Budgets::MARGIN };
    for seed in 0..300u64 {
        let m = program_of(&seed_bytes(seed), seed % 2 == 1);
        let text = spec_model::text::print_module(&m.ir, 100);
        tight.scope(|| {
            let parsed = spec_model::text::parse_module(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let report =
                spec_model::check::check_module_with(&parsed, false, &spec_model::struct_info::SyntacticProver);
            let limit = report.diagnostics.iter().find(|d| d.code.starts_with("LIMIT-"));
            assert!(limit.is_none(), "seed {seed}: {limit:?}");
            let Some(n) = report.normalized else { return };
            let o = outcome(&n, &m.run_line(), Limits::default()).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let exhausted = [ErrorKind::FuelExhausted, ErrorKind::MemoryExhausted];
            assert!(!matches!(o, Err(k) if exhausted.contains(&k)), "seed {seed}: {o:?}", o = o.map(|_| ()));
        });
    }
}

/// `call_tir` reaches the PrimFunc's scalar parameters both ways: a `tir_vars` shape,
/// and (TVM 0.27's form) PrimValues among the arguments.
#[test]
fn call_tir_passes_scalars_as_tir_vars_and_as_prim_values() {
    use spec_model::grammar::{visit::walk_expr, BaseFunc, ExprKind};
    use spec_model::ops::Op;
    let (mut tir_vars, mut prims) = (0, 0);
    // Scalar parameters are rare (a kernel that reads a dimension); stop once both forms are seen.
    for seed in 0..4000u64 {
        if tir_vars > 0 && prims > 0 {
            break;
        }
        let m = program_of(&seed_bytes(seed), false);
        for (_, f) in &m.ir.functions {
            let BaseFunc::Relax(f) = f else { continue };
            walk_expr(&f.body, &mut |e| {
                let ExprKind::Call(c) = &e.kind else { return };
                if !matches!(&c.op.kind, ExprKind::Op(o) if o.registered() == Some(Op::CallTir)) {
                    return;
                }
                tir_vars += usize::from(c.args.len() == 3);
                if let Some(ExprKind::Tuple(xs)) = c.args.get(1).map(|a| &a.kind) {
                    prims += usize::from(xs.iter().any(|x| matches!(x.kind, ExprKind::PrimValue(_))));
                }
            });
        }
    }
    assert!(tir_vars > 0 && prims > 0, "tir_vars: {tir_vars}, PrimValue arguments: {prims}");
}

/// Float operators also get float16 operands (a float32 operand narrowed by
/// `R.astype`), not only `call_tir` kernels: the engine's float16 kernels are then
/// checked against the oracle.
#[test]
fn float_operators_get_float16_operands() {
    use spec_model::grammar::{visit::walk_expr, AttrValue, BaseFunc, ExprKind};
    use spec_model::ops::Op;
    let mut ops = std::collections::BTreeSet::new();
    for seed in 0..300u64 {
        let m = program_of(&seed_bytes(seed), seed % 2 == 1);
        for (_, f) in &m.ir.functions {
            let BaseFunc::Relax(f) = f else { continue };
            walk_expr(&f.body, &mut |e| {
                let ExprKind::Call(c) = &e.kind else { return };
                let Some(op) = (match &c.op.kind {
                    ExprKind::Op(o) => o.registered(),
                    _ => None,
                }) else {
                    return;
                };
                let narrowed = |a: &spec_model::grammar::Expr| match &a.kind {
                    ExprKind::Call(n) => {
                        matches!(&n.op.kind, ExprKind::Op(o) if o.registered() == Some(Op::Astype))
                            && matches!(n.attrs.get("dtype"), Some(AttrValue::Str(d)) if d == "float16")
                    }
                    _ => false,
                };
                if op != Op::Astype && c.args.iter().any(narrowed) {
                    ops.insert(format!("{op:?}"));
                }
            });
        }
    }
    assert!(ops.len() >= 5, "operators with a float16 operand: {ops:?}");
}
