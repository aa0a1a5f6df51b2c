//! `prover`: decides equalities of symbolic shape expressions (`PrimExpr`) for
//! `check_compatibility` and `unify_struct_info`.
//!
//! Empty for now: the "Prover" issue adds the syntactic, egg and Z3 back ends behind
//! the `ShapeProver` trait that the static checker defines. Nothing here claims to work yet.
