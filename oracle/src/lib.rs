//! `oracle`: the reference interpreter of the Relax specification ([`eval`]), the
//! static checking driver ([`check`]), the corpus runner behind `oracle test`
//! ([`corpus`]), the conformance runner's results and report ([`conform`]), and the
//! bridge to the optimized engine ([`engine`]).

pub mod budget_args;
pub mod check;
pub mod conform;
pub mod corpus;
pub mod engine;
pub mod eval;
pub mod hostile;
