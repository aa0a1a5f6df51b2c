//! Well-formedness and normal-form violations that the `.rx` text cannot express
//! (the parser never builds them), checked on ASTs built directly.

mod common;

use common::{bind, block, corpus_files, module_of, op_call, seq, S};
use spec_model::diagnostic::Diagnostic;
use spec_model::grammar::*;
use spec_model::normal_form::{check_normal_form, normalize};
use spec_model::well_formed::{check_well_formed, CRITERIA};
use std::rc::Rc;

fn codes(ds: &[Diagnostic]) -> Vec<String> {
    ds.iter().map(|d| d.code.clone()).collect()
}

/// Each criterion reports exactly the expected rule, and the combined check agrees.
fn only(m: &IRModule, rule: &str) {
    let all = check_well_formed(m);
    assert!(!all.is_empty() && all.iter().all(|d| d.code == rule), "expected only {rule}, got {:?}", codes(&all));
    for (id, check) in CRITERIA {
        assert_eq!(!check(m).is_empty(), *id == rule, "criterion {id}");
    }
}

#[test]
fn wf1_dataflow_var_bound_in_an_ordinary_block_or_as_a_parameter() {
    let x = Var::new("x", None, S);
    let lv = Var::new_dataflow("lv", None, S);
    let m =
        module_of(vec![x.clone()], seq(vec![block(BlockKind::Binding, vec![bind(&lv, Expr::var(&x))])], Expr::var(&x)));
    only(&m, "WF-1");
    let p = Var::new_dataflow("p", None, S);
    only(&module_of(vec![p.clone()], seq(vec![], Expr::var(&p))), "WF-1");
}

#[test]
fn wf2_bound_twice_or_never() {
    let x = Var::new("x", None, S);
    let y = Var::new("y", None, S);
    let twice =
        seq(vec![block(BlockKind::Binding, vec![bind(&y, Expr::var(&x)), bind(&y, Expr::var(&x))])], Expr::var(&y));
    only(&module_of(vec![x.clone()], twice), "WF-2");
    let ghost = Var::new("ghost", None, S);
    only(&module_of(vec![x.clone()], seq(vec![], Expr::var(&ghost))), "WF-2");
    let g = Expr::new(ExprKind::GlobalVar(GlobalVar::new("nowhere")), S);
    only(&module_of(vec![x.clone()], seq(vec![], op_call("add", vec![Expr::var(&x), g]))), "WF-2");
    // A parameter bound twice (two functions sharing one Var) is bound more than once.
    let shared = Var::new("s", None, S);
    let inner = Function {
        params: vec![shared.clone()],
        body: seq(vec![], Expr::var(&shared)),
        ret_struct_info: None,
        attrs: Attrs::default(),
        span: S,
    };
    let f = Var::new("f", None, S);
    let body = seq(
        vec![block(BlockKind::Binding, vec![bind(&f, Expr::new(ExprKind::Function(Rc::new(inner)), S))])],
        Expr::var(&f),
    );
    only(&module_of(vec![shared], body), "WF-2");
}

#[test]
fn wf13_tensor_shape_neither_var_nor_shape_expr() {
    let bad_shape = Expr::new(ExprKind::StringImm("(2, 3)".into()), S);
    let ann = StructInfo::new(StructInfoKind::Tensor { shape: Some(bad_shape), dtype: DataType::FLOAT32, ndim: 2 }, S);
    let x = Var::new("x", None, S);
    let y = Var::new("y", Some(ann), S);
    let m =
        module_of(vec![x.clone()], seq(vec![block(BlockKind::Binding, vec![bind(&y, Expr::var(&x))])], Expr::var(&y)));
    only(&m, "WF-13");
}

#[test]
fn wf16_multi_lane_literal_and_wf18_lanes() {
    let lit = PrimExpr::new(
        PrimExprKind::IntImm { value: 1, dtype: DataType { code: TypeCode::Int, bits: 32, lanes: 4 } },
        S,
    );
    let x = Var::new("x", None, S);
    let p = Var::new("p", None, S);
    let m = module_of(
        vec![x.clone()],
        seq(vec![block(BlockKind::Binding, vec![bind(&p, Expr::new(ExprKind::PrimValue(lit), S))])], Expr::var(&x)),
    );
    let got = codes(&check_well_formed(&m));
    assert!(got.contains(&"WF-16".into()) && got.contains(&"WF-18".into()), "{got:?}");
}

#[test]
fn nf_violations_the_parser_never_builds() {
    let x = Var::new("x", None, S);
    let c = Var::new("c", None, S);
    // If branches that are not SeqExprs (NF-3), a SeqExpr as a call argument (NF-2).
    let i = Expr::new(
        ExprKind::If(Box::new(If { cond: Expr::var(&c), true_branch: Expr::var(&x), false_branch: Expr::var(&x) })),
        S,
    );
    let y = Var::new("y", None, S);
    let z = Var::new("z", None, S);
    let nested = op_call("negative", vec![seq(vec![], Expr::var(&x))]);
    let body = seq(vec![block(BlockKind::Binding, vec![bind(&y, i), bind(&z, nested)])], Expr::var(&z));
    let m = module_of(vec![x, c], body);
    assert!(check_well_formed(&m).is_empty());
    let nf = codes(&check_normal_form(&m));
    assert_eq!(nf.iter().filter(|c| *c == "NF-3").count(), 2, "{nf:?}");
    assert!(nf.contains(&"NF-2".into()), "{nf:?}");
    let n = normalize(&m).unwrap();
    assert!(check_normal_form(&n).is_empty());
    assert!(check_well_formed(&n).is_empty());
}

#[test]
fn fresh_names_avoid_user_names() {
    // The user already has `gv` and `gv1`; the normalizer's variables must not reuse them.
    let x = Var::new("x", None, S);
    let gv = Var::new("gv", None, S);
    let gv1 = Var::new("gv1", None, S);
    let body = seq(
        vec![block(
            BlockKind::Binding,
            vec![
                bind(&gv, Expr::var(&x)),
                bind(&gv1, op_call("add", vec![op_call("negative", vec![Expr::var(&gv)]), Expr::var(&x)])),
            ],
        )],
        Expr::var(&gv1),
    );
    let n = normalize(&module_of(vec![x], body)).unwrap();
    let printed = spec_model::text::print_module(&n, 100);
    assert!(printed.contains("gv2 = R.negative(gv)"), "{printed}");
    assert!(!printed.contains("gv_1"), "a fresh name clashed and the printer had to rename: {printed}");
}

#[test]
fn normalization_binds_innermost_first_left_to_right() {
    let x = Var::new("x", None, S);
    // R.add(R.multiply(x, x), R.subtract(R.negative(x), x))
    let e = op_call(
        "add",
        vec![
            op_call("multiply", vec![Expr::var(&x), Expr::var(&x)]),
            op_call("subtract", vec![op_call("negative", vec![Expr::var(&x)]), Expr::var(&x)]),
        ],
    );
    let n = normalize(&module_of(vec![x], e)).unwrap();
    let printed = spec_model::text::print_module(&n, 100);
    let order: Vec<usize> =
        ["R.multiply", "R.negative", "R.subtract", "R.add"].iter().map(|op| printed.find(op).expect(op)).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "evaluation order lost:\n{printed}");
}

/// Each normal-form criterion function reports its own rule, and only it, on the
/// corpus programs written to break that criterion.
#[test]
fn each_nf_criterion_function_reports_its_rule() {
    use spec_model::normal_form::CRITERIA as NF;
    let mut checked = 0;
    for (path, src) in corpus_files("wellformed") {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Some(n) = name.strip_prefix("nf").and_then(|r| r.chars().next()).and_then(|c| c.to_digit(10)) else {
            continue;
        };
        if !src.contains("expect: invalid NF-") {
            continue;
        }
        let m = spec_model::text::parse_module(&src).unwrap();
        for (id, check) in NF {
            let expected = *id == format!("NF-{n}");
            assert_eq!(!check(&m).is_empty(), expected, "{name}: criterion {id}");
            assert!(check(&m).iter().all(|d| d.code == *id), "{name}: {id} reported another rule");
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} NF corpus files");
}

/// Each well-formedness criterion function reports on exactly the corpus programs
/// whose metadata expects that rule (no criterion fires on another criterion's files).
#[test]
fn each_wf_criterion_fires_exactly_where_expected() {
    let mut checked = 0;
    for (path, src) in corpus_files("") {
        let Ok(m) = spec_model::text::parse_module(&src) else { continue };
        let expected: Vec<&str> =
            src.lines().filter_map(|l| l.strip_prefix("# expect: invalid ")).map(str::trim).collect();
        let claims_valid = src.lines().any(|l| l.trim() == "# expect: valid");
        for (id, check) in CRITERIA {
            let fired = !check(&m).is_empty();
            if expected.contains(id) {
                assert!(fired, "{}: expected {id}", path.display());
            } else if !expected.is_empty() || claims_valid {
                assert!(!fired, "{}: {id} fired but the file expects {expected:?}", path.display());
            }
        }
        checked += 1;
    }
    assert!(checked >= 200, "only {checked} corpus files");
}
