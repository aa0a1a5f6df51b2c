//! `prover`: decides equalities of symbolic shape expressions (`PrimExpr`) for
//! `check_compatibility` and `unify_struct_info`, behind spec-model's
//! [`ShapeProver`] trait: the syntactic back end (spec-model's, the spec's minimum),
//! equality saturation with egg, SMT with Z3, and an auto back end that tries them in
//! that order with a cache.
//!
//! Semantics (proofs-notes/prover.md): shape variables are int64 and `>= 0`; integer
//! operations are exact and an error outside the dtype's range; division by zero is an
//! error. `Equal`: under every assignment where both sides evaluate without error they
//! have the same value. `NotEqual`: under every such assignment they differ.

pub mod analysis;
pub mod auto;
pub mod egg_prover;
pub mod lang;
pub mod modular;
pub mod poly;
pub mod rules;
pub mod suite;
mod z3_encode;
pub mod z3_prover;

pub use auto::AutoProver;
pub use egg_prover::EggProver;
pub use spec_model::struct_info::{ShapeProver, SyntacticProver, Verdict};
pub use z3_prover::Z3Prover;

use std::str::FromStr;

/// A back end, by name (`oracle prove --prover NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Syntactic,
    Egg,
    Z3,
    Auto,
}

impl Backend {
    pub const ALL: [Backend; 4] = [Backend::Syntactic, Backend::Egg, Backend::Z3, Backend::Auto];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Syntactic => "syntactic",
            Backend::Egg => "egg",
            Backend::Z3 => "z3",
            Backend::Auto => "auto",
        }
    }

    /// A fresh prover of this kind.
    pub fn prover(self) -> Box<dyn ShapeProver> {
        match self {
            Backend::Syntactic => Box::new(SyntacticProver),
            Backend::Egg => Box::new(EggProver::default()),
            Backend::Z3 => Box::new(Z3Prover::default()),
            Backend::Auto => Box::new(AutoProver::default()),
        }
    }
}

impl FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Backend, String> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| format!("unknown prover `{s}` (syntactic, egg, z3 or auto)"))
    }
}
