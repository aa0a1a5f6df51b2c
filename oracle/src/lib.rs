//! `oracle`: the reference interpreter of the Relax specification (a later issue)
//! and the corpus runner behind `oracle test`.

pub mod check;
pub mod corpus;
pub mod eval;
