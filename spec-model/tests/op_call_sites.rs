//! TY-7.1 reads the StructInfo that derivation gave each operator call by the call's
//! site ([`OpCallSite`]): its global function and its number in evaluation order. The
//! association must survive anything that keeps the program the same: a clone or move
//! of the module between the two passes, a `MatchCast` binding without a variable, and
//! calls nested in calls (a program outside normal form).

mod common;

use common::normalized_corpus_programs;
use spec_model::grammar::visit::walk_expr;
use spec_model::grammar::{DataType, ExprKind, IRModule, Type};
use spec_model::normal_form::{check_normal_form, normalize};
use spec_model::struct_info::{derive_struct_info, SyntacticProver};
use spec_model::text::parse_module;
use spec_model::types::{check_types, OpCallSite, TypeReport};
use std::collections::HashSet;

fn tensor(ndim: i64) -> Type {
    Type::DynTensor { ndim, dtype: DataType::parse("float32").expect("float32") }
}

fn type_of(types: &TypeReport, name: &str) -> Type {
    types.bindings.iter().find(|(v, _)| v.name() == name).map(|(_, t)| t.clone()).expect("a binding so named")
}

/// Derives StructInfo on `m`, then type checks a copy of it made afterwards (in another
/// allocation: the original is dropped first).
fn check_a_copy(m: IRModule) -> TypeReport {
    let original = Box::new(m);
    let sinfo = derive_struct_info(&original, &SyntacticProver);
    let copy = Box::new((*original).clone());
    drop(original);
    check_types(&copy, &sinfo)
}

const ADD: &str = r#"
from tvm.script import relax as R

@R.function
def main(x: R.Tensor((2, 3), "float32")):
    y = R.add(x, x)
    z = R.sum(y)
    return z
"#;

#[test]
fn a_copy_of_the_module_types_its_operator_calls() {
    let n = normalize(&parse_module(ADD).expect("parses")).expect("normalizes");
    let types = check_a_copy(n);
    assert!(types.diagnostics.is_empty(), "{:?}", types.diagnostics);
    assert_eq!(type_of(&types, "y"), tensor(2));
    assert_eq!(type_of(&types, "z"), tensor(0));
}

#[test]
fn an_operator_call_cast_without_a_variable_has_its_type() {
    // `R.add(x, x)` has a rank-1 type, unrelated to the rank-2 cast: TY-10.1.3.3 warns
    // only if the call's type is known (an `ObjectType` could always be cast).
    let src = r#"
from tvm.script import relax as R

@R.function
def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
    R.match_cast(R.add(x, x), R.Tensor("float32", ndim=2))
    return x
"#;
    let n = normalize(&parse_module(src).expect("parses")).expect("normalizes");
    assert!(check_normal_form(&n).is_empty());
    let types = check_a_copy(n);
    assert!(types.diagnostics.iter().any(|d| d.code == "TY-10.1.3.3"), "{:?}", types.diagnostics);
}

#[test]
fn nested_operator_calls_have_their_types() {
    // Not normalized: the inner `R.add` is an argument of a call of a Relax function,
    // whose parameter type it must meet (TY-7.3), and of `R.multiply`.
    let src = r#"
from tvm.script import ir as I
from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def twice(a: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        return R.add(a, a)

    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        y = cls.twice(R.add(x, x))
        z = R.multiply(R.add(x, x), R.sum(x))
        return z
"#;
    let m = parse_module(src).expect("parses");
    assert!(!check_normal_form(&m).is_empty(), "the program must nest calls");
    let types = check_a_copy(m);
    assert!(types.diagnostics.is_empty(), "{:?}", types.diagnostics);
    assert_eq!(type_of(&types, "y"), tensor(2));
    assert_eq!(type_of(&types, "z"), tensor(2));
}

/// Every operator call of every derived corpus program has a site, numbered from 0 in
/// each global function without gaps, and a copy of the module gets the same types.
#[test]
fn every_corpus_operator_call_has_a_site() {
    let mut programs = 0;
    for (path, n) in normalized_corpus_programs() {
        let sinfo = derive_struct_info(&n, &SyntacticProver);
        let mut expected = HashSet::new();
        for (gv, f) in n.relax_functions() {
            let mut index = 0;
            walk_expr(&f.body, &mut |e| {
                if let ExprKind::Call(c) = &e.kind {
                    if let ExprKind::Op(_) = c.op.kind {
                        expected.insert(OpCallSite { function: gv.name.clone(), index });
                        index += 1;
                    }
                }
            });
        }
        let recorded: HashSet<OpCallSite> = sinfo.op_calls.keys().cloned().collect();
        assert_eq!(recorded, expected, "{}", path.display());
        let types = check_types(&n, &sinfo);
        let copy_types = check_types(&n.clone(), &sinfo);
        assert_eq!(types.bindings, copy_types.bindings, "{}", path.display());
        assert_eq!(types.functions, copy_types.functions, "{}", path.display());
        programs += 1;
    }
    assert!(programs >= 50, "only {programs} corpus programs were derived");
}
