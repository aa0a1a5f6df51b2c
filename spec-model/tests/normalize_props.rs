//! Properties of normalization, over random well-formed programs and over the corpus:
//! the input is well-formed; `normalize` succeeds, its output is in normal form, still
//! well-formed, a fixed point of `normalize`, and prints and re-parses to itself.

#[path = "props/builder.rs"]
mod builder;
mod common;

use builder::Builder;
use common::{bind, block, corpus_files, seq, S};
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use spec_model::alpha::alpha_eq_module;
use spec_model::grammar::*;
use spec_model::normal_form::{check_normal_form, normalize};
use spec_model::text::{check_round_trip, parse_module, print_module, DEFAULT_WIDTH};
use spec_model::well_formed::check_well_formed;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// How many inputs were out of normal form (so the properties test the normalizer).
static NOT_NORMAL: AtomicUsize = AtomicUsize::new(0);
static CASES: AtomicUsize = AtomicUsize::new(0);

#[derive(Clone, Debug)]
struct Seed(u64);
impl Arbitrary for Seed {
    fn arbitrary(g: &mut Gen) -> Seed {
        Seed(u64::arbitrary(g))
    }
}

/// The properties, on one well-formed module.
fn properties(m: &IRModule, what: &str) -> Result<(), String> {
    let wf = check_well_formed(m);
    if !wf.is_empty() {
        return Err(format!("{what}: the input is not well-formed: {wf:?}"));
    }
    CASES.fetch_add(1, Ordering::Relaxed);
    if !check_normal_form(m).is_empty() {
        NOT_NORMAL.fetch_add(1, Ordering::Relaxed);
    }
    let n = normalize(m).map_err(|e| format!("{what}: normalize failed: {e:?}"))?;
    let nf = check_normal_form(&n);
    if !nf.is_empty() {
        return Err(format!("{what}: the output is not in normal form: {nf:?}\n{}", print_module(&n, DEFAULT_WIDTH)));
    }
    let wf = check_well_formed(&n);
    if !wf.is_empty() {
        return Err(format!(
            "{what}: normalization broke well-formedness: {wf:?}\n{}",
            print_module(&n, DEFAULT_WIDTH)
        ));
    }
    let n2 = normalize(&n).map_err(|e| format!("{what}: normalize of the output failed: {e:?}"))?;
    alpha_eq_module(&n, &n2).map_err(|e| format!("{what}: not idempotent: {e}"))?;
    if print_module(&n, DEFAULT_WIDTH) != print_module(&n2, DEFAULT_WIDTH) {
        return Err(format!("{what}: not idempotent in print"));
    }
    check_round_trip(&n).map_err(|e| format!("{what}: the normalized program does not round-trip: {e}"))?;
    Ok(())
}

#[test]
fn normalize_random_programs() {
    fn prop(seed: Seed) -> TestResult {
        let mut g = Gen::new(16);
        // Derive the program from the seed so a failure reproduces from its `Seed`.
        for _ in 0..(seed.0 % 97) {
            let _ = u8::arbitrary(&mut g);
        }
        let m = Builder { g: &mut g, names: seed.0 as usize }.module();
        match properties(&m, "random program") {
            Ok(()) => TestResult::passed(),
            Err(e) => TestResult::error(format!("{e}\n--- program\n{}", print_module(&m, DEFAULT_WIDTH))),
        }
    }
    QuickCheck::new().tests(1_500).quickcheck(prop as fn(Seed) -> TestResult);
    assert_mostly_not_normal();
}

/// Most generated inputs must be out of normal form, or the test proves little.
/// (The counters are shared by the tests of this file, which may run in parallel.)
fn assert_mostly_not_normal() {
    let (cases, not_normal) = (CASES.load(Ordering::Relaxed), NOT_NORMAL.load(Ordering::Relaxed));
    println!("{not_normal} of {cases} inputs were not in normal form");
    assert!(not_normal * 2 >= cases, "only {not_normal} of {cases} inputs were not in normal form");
}

/// Well-formed, normalizable corpus programs: (file name, source).
fn corpus() -> &'static Vec<(String, String)> {
    static CORPUS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        corpus_files("")
            .into_iter()
            .filter(|(_, src)| {
                parse_module(src).is_ok_and(|m| check_well_formed(&m).is_empty() && normalize(&m).is_ok())
            })
            .map(|(p, src)| (p.display().to_string(), src))
            .collect()
    })
}

fn parsed(src: &str) -> IRModule {
    parse_module(src).expect("corpus programs parse")
}

/// A transformation that keeps a program well-formed but takes it out of normal form.
#[derive(Clone, Debug)]
enum Denormalize {
    /// Wrap the value of the k-th binding in a SeqExpr with no blocks.
    WrapValue(usize),
    /// Move the k-th ordinary binding's value into a nested SeqExpr that binds it first.
    Nest(usize),
}

impl Arbitrary for Denormalize {
    fn arbitrary(g: &mut Gen) -> Denormalize {
        let k = usize::arbitrary(g);
        if bool::arbitrary(g) {
            Denormalize::WrapValue(k)
        } else {
            Denormalize::Nest(k)
        }
    }
}

fn denormalize(e: &Expr, t: &Denormalize, counter: &mut usize) -> Expr {
    let kind = match &e.kind {
        ExprKind::SeqExpr(s) => {
            let blocks = s
                .blocks
                .iter()
                .map(|b| BindingBlock {
                    kind: b.kind,
                    bindings: b
                        .bindings
                        .iter()
                        .map(|x| {
                            *counter += 1;
                            let hit = match t {
                                Denormalize::WrapValue(k) | Denormalize::Nest(k) => *counter == *k,
                            };
                            let value = denormalize(x.value(), t, counter);
                            let value = match (hit, t, b.kind) {
                                // A function's value stays a function (a recursive one may name its variable).
                                (true, Denormalize::WrapValue(_), _)
                                    if !matches!(value.kind, ExprKind::Function(_)) =>
                                {
                                    seq(Vec::new(), value)
                                }
                                (true, Denormalize::Nest(_), BlockKind::Binding)
                                    if !matches!(value.kind, ExprKind::Function(_)) =>
                                {
                                    let w = Var::new("nested", None, S);
                                    seq(vec![block(BlockKind::Binding, vec![bind(&w, value)])], Expr::var(&w))
                                }
                                _ => value,
                            };
                            match x {
                                Binding::VarBinding { var, span, .. } => {
                                    Binding::VarBinding { var: var.clone(), value, span: *span }
                                }
                                Binding::MatchCast { var, struct_info, span, .. } => Binding::MatchCast {
                                    var: var.clone(),
                                    struct_info: struct_info.clone(),
                                    value,
                                    span: *span,
                                },
                            }
                        })
                        .collect(),
                    span: b.span,
                })
                .collect();
            ExprKind::SeqExpr(Box::new(SeqExpr { blocks, body: denormalize(&s.body, t, counter) }))
        }
        ExprKind::Function(f) => {
            ExprKind::Function(Rc::new(Function { body: denormalize(&f.body, t, counter), ..(**f).clone() }))
        }
        ExprKind::If(i) => ExprKind::If(Box::new(If {
            cond: i.cond.clone(),
            true_branch: denormalize(&i.true_branch, t, counter),
            false_branch: denormalize(&i.false_branch, t, counter),
        })),
        other => other.clone(),
    };
    Expr::new(kind, e.span)
}

#[test]
fn normalize_corpus_programs_and_their_denormalizations() {
    assert!(corpus().len() >= 50, "only {} well-formed corpus programs", corpus().len());
    fn prop(pick: usize, ts: Vec<Denormalize>) -> TestResult {
        let (name, src) = &corpus()[pick % corpus().len()];
        let mut m = parsed(src);
        // Count the bindings, so each transformation hits one that exists.
        let total = {
            let mut n = 0;
            for (_, f) in m.relax_functions() {
                spec_model::grammar::visit::walk_expr(&f.body, &mut |e| {
                    if let ExprKind::SeqExpr(s) = &e.kind {
                        n += s.blocks.iter().map(|b| b.bindings.len()).sum::<usize>();
                    }
                });
            }
            n.max(1)
        };
        for t in ts.iter().take(3) {
            let t = match t {
                Denormalize::WrapValue(k) => Denormalize::WrapValue(1 + k % total),
                Denormalize::Nest(k) => Denormalize::Nest(1 + k % total),
            };
            let t = &t;
            let mut counter = 0;
            m.functions = m
                .functions
                .iter()
                .map(|(gv, f)| match f {
                    BaseFunc::Relax(func) => (
                        gv.clone(),
                        BaseFunc::Relax(Rc::new(Function {
                            body: denormalize(&func.body, t, &mut counter),
                            ..(**func).clone()
                        })),
                    ),
                    other => (gv.clone(), other.clone()),
                })
                .collect();
        }
        match properties(&m, name) {
            Ok(()) => TestResult::passed(),
            Err(e) => TestResult::error(e),
        }
    }
    QuickCheck::new().tests(1_500).quickcheck(prop as fn(usize, Vec<Denormalize>) -> TestResult);
    assert_mostly_not_normal();
}

/// `oracle normalize` is idempotent on every corpus file (all of them, not a sample).
#[test]
fn normalize_is_idempotent_on_every_corpus_file() {
    for (name, src) in corpus() {
        if let Err(e) = properties(&parsed(src), name) {
            panic!("{e}");
        }
    }
}
