//! The public benchmark suite of shape-equality queries (`cargo bench -p prover`,
//! README's table). Each query states the truth under the semantics of
//! proofs-notes/prover.md: `Equal`, `NotEqual`, or `Neither` (equal under some
//! assignments and different under others, so a decisive answer is unsound). A test
//! checks every label by evaluation, and that the auto back end decides every query
//! Z3 decides.

use crate::Verdict;

/// What is true of a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Truth {
    Equal,
    NotEqual,
    /// Equal somewhere and different somewhere: only `Unknown` is sound.
    Neither,
}

impl Truth {
    /// Is `v` a sound answer?
    pub fn admits(self, v: Verdict) -> bool {
        matches!(
            (self, v),
            (_, Verdict::Unknown) | (Truth::Equal, Verdict::Equal) | (Truth::NotEqual, Verdict::NotEqual)
        )
    }

    /// Is a decisive answer possible?
    pub fn decidable(self) -> bool {
        self != Truth::Neither
    }
}

/// One query.
#[derive(Clone, Copy, Debug)]
pub struct Query {
    pub category: &'static str,
    pub lhs: &'static str,
    pub rhs: &'static str,
    pub truth: Truth,
}

const fn q(category: &'static str, lhs: &'static str, rhs: &'static str, truth: Truth) -> Query {
    Query { category, lhs, rhs, truth }
}

use Truth::{Equal as E, Neither as U, NotEqual as N};

/// The suite, by category.
pub const SUITE: &[Query] = &[
    // Linear.
    q("linear", "n + m", "m + n", E),
    q("linear", "n + 1 + 1", "n + 2", E),
    q("linear", "2 * n + 3 * n", "5 * n", E),
    q("linear", "n - m + m", "n", E),
    q("linear", "n * 2", "2 * n", E),
    q("linear", "(n + m) * 3", "3 * n + 3 * m", E),
    q("linear", "n + m + k - m", "n + k", E),
    q("linear", "3 * (n + 2) - 6", "3 * n", E),
    q("linear", "n + 1", "n", N),
    q("linear", "2 * n", "2 * n + 1", N),
    q("linear", "n + 5", "0", N),
    q("linear", "n", "0 - 1", N),
    q("linear", "2 * n + 1", "2 * m", N),
    q("linear", "n + 2", "m + 2", U),
    q("linear", "4 * n + 2", "2 * m", U),
    q("linear", "n - m", "m - n", U),
    // Nonlinear polynomials.
    q("polynomial", "(n + 1) * (n - 1)", "n * n - 1", E),
    q("polynomial", "n * n * m", "m * n * n", E),
    q("polynomial", "(n + m) * (n + m)", "n * n + 2 * n * m + m * m", E),
    q("polynomial", "n * (m + k)", "n * m + n * k", E),
    q("polynomial", "(n - m) * (n + m)", "n * n - m * m", E),
    q("polynomial", "n * n * n - n", "(n - 1) * n * (n + 1)", E),
    q("polynomial", "(n + 2) * (m + 3)", "n * m + 3 * n + 2 * m + 6", E),
    q("polynomial", "n * k + m * k", "(n + m) * k", E),
    q("polynomial", "n * n + 1", "0", N),
    q("polynomial", "n * m", "m * n + 1", N),
    q("polynomial", "n * n", "2", N),
    q("polynomial", "(n + 1) * (n + 1)", "n * n + 1", U),
    q("polynomial", "n * n", "2 * n + 3", U),
    q("polynomial", "n * m", "n", U),
    q("polynomial", "n * n", "n", U),
    // Floor and truncating division and modulo.
    q("division", "n * 4 // 4", "n", E),
    q("division", "(n * 4 + 3) // 4", "n", E),
    q("division", "(n * 4 + 3) % 4", "3", E),
    q("division", "T.truncmod(n * 4 + 3, 4)", "3", E),
    q("division", "n // 4 * 4 + T.floormod(n, 4)", "n", E),
    q("division", "n // 2 // 3", "n // 6", E),
    q("division", "T.truncdiv(n, 4)", "n // 4", E),
    q("division", "n // 1", "n", E),
    q("division", "T.floormod(2 * n + 1, 2)", "1", E),
    q("division", "n * 6 // 3", "2 * n", E),
    q("division", "n // m * m + T.floormod(n, m)", "n", E),
    q("division", "(n + m) // m", "n // m + 1", E),
    q("division", "T.floormod(n, 2) + T.floormod(n + 1, 2)", "1", E),
    // Residues decide equalities too (a product of consecutive integers is even, a
    // square modulo 4 is its root's parity): E by the residue reasoning, not rewriting.
    q("division", "T.floormod(n * (n + 1), 2)", "0", E),
    q("division", "T.floormod(n * (n + 1) * (n + 2), 3)", "0", E),
    q("division", "T.floormod(T.floormod(n * n, 4), 2)", "T.floormod(n, 2)", E),
    q("division", "T.floormod(n * n, 4)", "T.floormod(n, 4)", U),
    q("division", "T.floormod(n, 4)", "4", N),
    q("division", "T.floormod(n * 4, 4)", "1", N),
    q("division", "T.truncdiv(n - 5, 2)", "(n - 5) // 2", U),
    q("division", "n // 4", "n", U),
    q("division", "T.floormod(n, 3)", "T.floormod(n, 5)", U),
    // Min, max and select.
    q("min-max-select", "T.Select(n < m, n, m)", "T.min(n, m)", E),
    q("min-max-select", "T.max(n, m)", "T.Select(n < m, m, n)", E),
    q("min-max-select", "T.min(n, m) + T.max(n, m)", "n + m", E),
    q("min-max-select", "T.min(n, n + 1)", "n", E),
    q("min-max-select", "T.max(n, 0)", "n", E),
    q("min-max-select", "T.min(n + 1, m + 1)", "T.min(n, m) + 1", E),
    q("min-max-select", "T.max(n * n, 0)", "n * n", E),
    q("min-max-select", "T.Select(n < 4, 4, n)", "T.max(n, 4)", E),
    q("min-max-select", "T.Select(n <= m, m - n, n - m)", "T.max(n, m) - T.min(n, m)", E),
    q("min-max-select", "T.min(T.min(n, m), k)", "T.min(n, T.min(m, k))", E),
    q("min-max-select", "T.max(n, m) + 1", "T.min(n, m)", N),
    q("min-max-select", "T.min(n, 4)", "5", N),
    q("min-max-select", "T.min(n, m)", "n", U),
    q("min-max-select", "T.Select(n < m, n, m)", "T.max(n, m)", U),
    // Overflow: values exist only where no intermediate leaves int64.
    q("overflow", "n + 9223372036854775807", "9223372036854775807", E),
    q("overflow", "n * 2", "9223372036854775807", N),
    q("overflow", "n * 4611686018427387904", "9223372036854775806", N),
    q("overflow", "T.min(n * 4611686018427387904, 4611686018427387904)", "n * 4611686018427387904", E),
    q("overflow", "n * n", "9223372036854775807", N),
    // Hard: nonlinear problems with no general decision procedure.
    q("hard", "n * n - 2 * m * m", "1", U),
    q("hard", "n * n * n + m * m * m", "k * k * k", U),
    q("hard", "T.floormod(n * n, 4)", "2", N),
    q("hard", "n * (n + 1)", "2 * m + 1", N),
    q("hard", "n * m // m", "n", E),
    q("hard", "n * n + m * m", "3", N),
];
