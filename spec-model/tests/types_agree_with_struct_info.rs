//! The two static rule systems agree: "the structural information for each expression
//! can be simplified into a type". On every corpus program that both accept, each
//! binding's derived StructInfo erases to a supertype of the type the type checker
//! gives it, and each global function's FuncStructInfo erases to its type
//! (proofs-notes/invariants.md, I-18). Equality fails only where
//! `unify_struct_info` gives up on functions whose parameters differ, while
//! `find_lub` takes their GLB (corpus/structinfo/si_sp_3_unify_param_object_vs_tensor.rx).

mod common;

use common::normalized_corpus_programs;
use spec_model::struct_info::{derive_struct_info, SyntacticProver};
use spec_model::types::{check_types, erase_struct_info, is_subtype, type_name};

#[test]
fn erased_struct_info_is_the_type_on_every_accepted_corpus_program() {
    let (mut programs, mut bindings, mut coarser) = (0, 0, 0);
    for (path, n) in normalized_corpus_programs() {
        let sinfo = derive_struct_info(&n, &SyntacticProver);
        let types = check_types(&n, &sinfo);
        if sinfo.has_errors() || types.diagnostics.iter().any(|d| d.is_error()) {
            continue;
        }
        programs += 1;
        for (v, t) in &types.bindings {
            let Some((_, _, s)) = sinfo.bindings.iter().find(|(_, w, _)| w == v) else {
                panic!("{}: `{}` has a type but no StructInfo", path.display(), v.name());
            };
            let erased = erase_struct_info(s);
            coarser += usize::from(&erased != t);
            assert!(
                is_subtype(t, &erased),
                "{}: `{}` has type {} but its StructInfo erases to {}",
                path.display(),
                v.name(),
                type_name(t),
                type_name(&erased)
            );
            bindings += 1;
        }
        for ((name, s), (_, t)) in sinfo.functions.iter().zip(&types.functions) {
            assert_eq!(&erase_struct_info(s), t, "{}: function `{name}`", path.display());
        }
    }
    println!("{programs} programs, {bindings} bindings compared, {coarser} with a coarser StructInfo");
    assert!(programs >= 50, "only {programs} corpus programs were accepted by both");
}
