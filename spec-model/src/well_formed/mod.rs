//! The spec's **Well-Formedness Criteria**: one function per criterion, WF-1..WF-15 of
//! the spec and WF-16..WF-18 of the later draft, each returning its diagnostics.
//! [`check_well_formed`] runs them all. The criteria apply to every program, before
//! normalization too.

mod annotations;
mod calls;
mod module;
mod shape_facts;
mod shapes;
mod vars;

pub use annotations::{
    wf15_func_struct_info_params_or_derive, wf16_prim_value_contents, wf17_prim_struct_info_dtype, wf18_data_types,
};
pub use calls::{
    globals_callee_first, wf6_dataflow_block_constructs, wf7_recursive_functions_annotated, wf8_op_only_as_callee,
};
pub use module::{wf11_externally_linked_function, wf12_global_symbol_matches_name};
pub use shapes::{
    wf13_tensor_shape_annotations, wf14_shape_values_annotations, wf4_return_annotation_shape_vars,
    wf5_shape_vars_bound_before_use, wf9_annotation_ndim,
};
pub use vars::{wf10_no_dataflow_capture, wf1_dataflow_vars, wf2_bound_exactly_once, wf3_bound_before_use};

use crate::diagnostic::Diagnostic;
use crate::grammar::IRModule;

/// A well-formedness criterion: its rule ID and its check.
pub type Criterion = (&'static str, fn(&IRModule) -> Vec<Diagnostic>);

/// Every criterion, in the spec's order.
pub const CRITERIA: &[Criterion] = &[
    ("WF-1", wf1_dataflow_vars),
    ("WF-2", wf2_bound_exactly_once),
    ("WF-3", wf3_bound_before_use),
    ("WF-4", wf4_return_annotation_shape_vars),
    ("WF-5", wf5_shape_vars_bound_before_use),
    ("WF-6", wf6_dataflow_block_constructs),
    ("WF-7", wf7_recursive_functions_annotated),
    ("WF-8", wf8_op_only_as_callee),
    ("WF-9", wf9_annotation_ndim),
    ("WF-10", wf10_no_dataflow_capture),
    ("WF-11", wf11_externally_linked_function),
    ("WF-12", wf12_global_symbol_matches_name),
    ("WF-13", wf13_tensor_shape_annotations),
    ("WF-14", wf14_shape_values_annotations),
    ("WF-15", wf15_func_struct_info_params_or_derive),
    ("WF-16", wf16_prim_value_contents),
    ("WF-17", wf17_prim_struct_info_dtype),
    ("WF-18", wf18_data_types),
];

/// Runs every criterion; diagnostics come grouped by criterion, in source order within one.
pub fn check_well_formed(m: &IRModule) -> Vec<Diagnostic> {
    CRITERIA.iter().flat_map(|(_, check)| check(m)).collect()
}
