//! Every budget is a field of `Budgets` with a limit ID and a flag, and lowering one
//! turns the input beyond it into a limit error that names the flag.

use spec_model::check::check_module_with;
use spec_model::diagnostic::{render_capped, Diagnostic};
use spec_model::limits::{current, raise_hint, Budgets, BUDGET_FLAGS};
use spec_model::rules::LIMITS;
use spec_model::struct_info::SyntacticProver;
use spec_model::text::parse_module;

fn program(body: &str) -> String {
    format!("@R.function\ndef main(x: R.Tensor((2,), \"float32\")):\n{body}    return x\n")
}

/// The limit error of parsing `src` under `b`: its limit ID is in the message and the
/// flag in a note.
fn limit_error(b: Budgets, src: &str, id: &str) {
    let err = b.scope(|| parse_module(src)).expect_err(id);
    let d = err.diagnostic();
    assert_eq!(d.code, "limit", "{err}");
    assert!(d.message.starts_with(id), "{id}: {}", d.message);
    assert!(d.notes.contains(&raise_hint(id)), "{id}: {:?}", d.notes);
    assert!(parse_module(src).is_ok(), "{id}: the default budgets accept it");
}

#[test]
fn every_limit_has_a_flag_and_every_flag_a_limit() {
    let ids: Vec<&str> = LIMITS.iter().map(|(id, _)| *id).collect();
    let flagged: Vec<&str> = BUDGET_FLAGS.iter().map(|(id, _, _)| *id).collect();
    assert_eq!(ids, flagged);
    for (id, _, flag) in BUDGET_FLAGS {
        assert!(raise_hint(id).contains(flag) && flag.starts_with("--"), "{id}");
    }
}

#[test]
fn a_scope_sets_the_budgets_and_restores_them() {
    assert_eq!(current(), Budgets::DEFAULT);
    let small = Budgets { nesting: 7, ..Budgets::DEFAULT };
    small.scope(|| {
        assert_eq!(current().nesting, 7);
        Budgets { fuel: 3, ..current() }.scope(|| assert_eq!((current().nesting, current().fuel), (7, 3)));
        assert_eq!(current(), small);
    });
    assert_eq!(current(), Budgets::DEFAULT);
}

#[test]
fn lowered_parse_budgets_are_limit_errors_naming_their_flags() {
    let d = Budgets::DEFAULT;
    limit_error(Budgets { nesting: 5, ..d }, &program("    y = ((((((x))))))\n"), "LIMIT-nesting");
    limit_error(Budgets { statements: 3, ..d }, &program(&"    y = x\n".repeat(4)), "LIMIT-statements");
    limit_error(Budgets { tokens: 20, ..d }, &program("    y = R.add(x, x)\n"), "LIMIT-tokens");
    let constant = program("    y = R.const([1.0, 2.0, 3.0, 4.0, 5.0])\n");
    limit_error(Budgets { constant_elements: 4, ..d }, &constant, "LIMIT-constant");
    assert!(Budgets { constant_elements: 5, ..d }.scope(|| parse_module(&constant)).is_ok());
}

#[test]
fn a_lowered_sinfo_budget_is_a_static_error_naming_its_flag() {
    let src = program("    t = (x, x, x)\n    u = (t, t)\n");
    let m = parse_module(&src).unwrap();
    let errors = |b: Budgets| -> Vec<Diagnostic> {
        b.scope(|| check_module_with(&m, false, &SyntacticProver).diagnostics)
            .into_iter()
            .filter(|d| d.code == "LIMIT-sinfo")
            .collect()
    };
    assert!(errors(Budgets::DEFAULT).is_empty());
    let nodes = errors(Budgets { sinfo_nodes: 5, ..Budgets::DEFAULT });
    assert!(!nodes.is_empty() && nodes[0].notes.contains(&raise_hint("LIMIT-sinfo")), "{nodes:?}");
    assert!(!errors(Budgets { sinfo_depth: 2, ..Budgets::DEFAULT }).is_empty());
}

#[test]
fn the_diagnostics_budget_counts_the_rest() {
    let diags: Vec<Diagnostic> =
        (0..5).map(|i| Diagnostic::error("WF-3", format!("e{i}"), spec_model::Span::new(0, 1))).collect();
    let out = Budgets { diagnostics: 2, ..Budgets::DEFAULT }.scope(|| render_capped(&diags, |d| format!("{d}\n")));
    assert_eq!(out.lines().filter(|l| l.starts_with("error[")).count(), 2, "{out}");
    assert!(out.contains("3 more error(s)") && out.contains("--max-diagnostics"), "{out}");
}

#[test]
fn the_excerpt_budget_windows_long_lines() {
    let src = program(&format!("    y = R.add(x, x){}\n", " ".repeat(300)));
    let d = Diagnostic::error("WF-3", "here", {
        let at = src.find("R.add").unwrap();
        spec_model::Span::new(at, at + 5)
    });
    let whole = d.render("f.rx", &src);
    let windowed = Budgets { excerpt: 40, ..Budgets::DEFAULT }.scope(|| d.render("f.rx", &src));
    assert!(!whole.contains("--max-excerpt"), "{whole}");
    assert!(windowed.contains("--max-excerpt") && windowed.len() < whole.len(), "{windowed}");
}
