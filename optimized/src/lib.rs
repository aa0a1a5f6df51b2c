//! `optimized`: the fast execution engine that must agree with the reference
//! interpreter (`oracle`).
//!
//! Empty for now: a later issue builds it. Nothing here claims to work yet.
