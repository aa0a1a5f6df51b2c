//! `spec-model`: the Relax specification transcribed rule by rule.
//!
//! Modules follow the spec's sections: [`grammar`] (the AST), [`text`] (the `.rx`
//! format: parser and printer), [`alpha`] (alpha-equivalence of programs),
//! [`normal_form`], [`well_formed`], [`types`] (Types in Relax), [`struct_info`]
//! (Structural Information in Relax) and [`ops`] (the operator registry).

pub mod alpha;
pub mod diagnostic;
pub mod grammar;
pub mod normal_form;
pub mod ops;
pub mod prim_eval;
pub mod rules;
pub mod span;
pub mod struct_info;
pub mod text;
pub mod types;
pub mod well_formed;

pub use span::Span;
