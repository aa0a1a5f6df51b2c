//! `oracle`: the reference interpreter of the Relax specification ([`eval`]), the
//! static checking driver ([`check`]) and the corpus runner behind `oracle test`
//! ([`corpus`]).

pub mod check;
pub mod corpus;
pub mod eval;
