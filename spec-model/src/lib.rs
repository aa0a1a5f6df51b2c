//! `spec-model`: the Relax specification transcribed rule by rule.
//!
//! Modules follow the spec's sections: [`grammar`] (the AST), [`text`] (the `.rx`
//! format: parser and printer), [`alpha`] (alpha-equivalence of programs).

pub mod alpha;
pub mod diagnostic;
pub mod grammar;
pub mod normal_form;
pub mod rules;
pub mod span;
pub mod text;
pub mod well_formed;

pub use span::Span;
