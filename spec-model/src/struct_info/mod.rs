//! Structural Information in Relax: the auxiliary procedures, the relations between
//! StructInfo (`check_compatibility`, `<<:`, `unify_struct_info`), and the derivation
//! rules (SI-D-1..12). Shape equalities go through a [`prover::ShapeProver`].

pub mod auxiliary;
pub mod derive;
pub mod prover;
pub mod relations;

pub use auxiliary::{
    default_derive, empty_derive, erase_to_well_defined, get_shape_var_mapping, substitute_struct_info, wrap_type,
};
pub use derive::{derive_struct_info, SinfoReport};
pub use prover::{ShapeProver, SyntacticProver, Verdict};
pub use relations::{
    check_compatibility, is_more_specific, more_specific, unify_struct_info, Compat, CompatResult, SiEnv, Specific,
};
