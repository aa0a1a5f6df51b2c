//! Budgets: every phase of every tool has one, so that no input crashes, hangs or
//! exhausts memory (DESIGN.md: bad input gets a typed error). Each budget is a field
//! of [`Budgets`], has a limit ID (`LIMIT-...`, a parse error's `limit` code or a
//! diagnostic's rule) and a command-line flag of `oracle` ([`BUDGET_FLAGS`]); the
//! message of every limit error names the flag that raises it ([`raise_hint`]).
//!
//! The budgets in force are the thread's [`Budgets::scope`] if one is open, else the
//! process's ([`set_process_budgets`], which the command line calls once), else
//! [`Budgets::DEFAULT`]; [`current`] reads them.

use crate::grammar::{StructInfo, StructInfoKind, Type};
use std::cell::Cell;
use std::sync::RwLock;

/// Every budget, in the units its limit counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budgets {
    /// LIMIT-nesting: levels of brackets, blocks, indentation, operator chains and
    /// postfix chains, together (the parser and every pass after it recurse per level).
    pub nesting: usize,
    /// LIMIT-statements: statements of one block (a function's bindings, a module's
    /// functions).
    pub statements: usize,
    /// LIMIT-tokens: tokens of one file, counted before anything is built from them.
    pub tokens: usize,
    /// LIMIT-constant: elements of one constant literal written in the text.
    pub constant_elements: u64,
    /// LIMIT-sinfo: nodes of a StructInfo or type derived for a binding.
    pub sinfo_nodes: usize,
    /// LIMIT-sinfo: nesting depth of a StructInfo or type derived for a binding.
    pub sinfo_depth: usize,
    /// LIMIT-prover: milliseconds egg and Z3 may spend on one module's queries; after
    /// them only the syntactic prover answers (the rest are `unknown`).
    pub prover_module_ms: u64,
    /// LIMIT-prover: milliseconds Z3 may spend on one query (a watchdog interrupts it).
    pub prover_query_ms: u64,
    /// LIMIT-prover: the highest polynomial degree Z3 is asked about (libz3 does not
    /// heed the watchdog inside nonlinear arithmetic of high degree).
    pub z3_degree: u32,
    /// LIMIT-diagnostics: diagnostics shown in full; the rest are counted.
    pub diagnostics: usize,
    /// LIMIT-excerpt: characters of a source line quoted whole in a diagnostic; a longer
    /// line is quoted as a window around the span.
    pub excerpt: usize,
    /// LIMIT-fuel: evaluation steps (both engines).
    pub fuel: u64,
    /// LIMIT-depth: nested closure calls (both engines); at most [`MAX_CALL_DEPTH`].
    pub max_depth: usize,
    /// LIMIT-memory: bytes of tensors a run holds at once (both engines, and `.npy`
    /// arguments), checked before each allocation.
    pub memory: usize,
}

/// The deepest call nesting any budget may allow (each call takes native stack).
pub const MAX_CALL_DEPTH: usize = 10_000;

/// The largest nesting budget the command line accepts: a printed nested call is
/// indented per level, so `fmt`'s output (and the checker's work) grows with the
/// square of the nesting; at 10,000 levels `fmt` takes about 1.2 GB.
pub const MAX_NESTING_BUDGET: usize = 10_000;

impl Budgets {
    /// The defaults: every corpus file and generated program fits in them by a wide
    /// margin (see [`Budgets::MARGIN`]).
    pub const DEFAULT: Budgets = Budgets {
        nesting: 100,
        statements: 100_000,
        tokens: 10_000_000,
        constant_elements: 1 << 24,
        sinfo_nodes: 100_000,
        sinfo_depth: 200,
        prover_module_ms: 10_000,
        prover_query_ms: 2_000,
        z3_degree: 16,
        diagnostics: 50,
        excerpt: 400,
        fuel: 10_000_000,
        max_depth: 1_000,
        memory: 1 << 30,
    };

    /// A quarter of the defaults or less where inputs grow (nesting, statements, tokens,
    /// constants, StructInfo): every corpus file and generated program must fit in
    /// these, so that the defaults hold them by a wide margin (the tests
    /// `oracle/tests/budget_margin.rs` and `fuzz/tests/generator.rs` check it).
    pub const MARGIN: Budgets = Budgets {
        nesting: 25,
        statements: 1_000,
        tokens: 100_000,
        constant_elements: 1 << 12,
        sinfo_nodes: 2_000,
        sinfo_depth: 20,
        ..Budgets::DEFAULT
    };

    /// The native stack a thread needs to run every pass within the nesting budget
    /// (each recurses once per level): 16 MiB plus 64 KiB per level.
    pub fn stack_bytes(&self) -> usize {
        (16 << 20) + self.nesting.saturating_mul(64 << 10)
    }

    /// Runs `f` with these budgets in force on this thread, then restores the previous.
    pub fn scope<R>(self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<Budgets>);
        impl Drop for Restore {
            fn drop(&mut self) {
                SCOPED.with(|s| s.set(self.0));
            }
        }
        let _restore = Restore(SCOPED.with(|s| s.replace(Some(self))));
        f()
    }
}

impl Default for Budgets {
    fn default() -> Budgets {
        Budgets::DEFAULT
    }
}

static PROCESS: RwLock<Budgets> = RwLock::new(Budgets::DEFAULT);

thread_local! {
    static SCOPED: Cell<Option<Budgets>> = const { Cell::new(None) };
}

/// Sets the budgets of every thread that has no [`Budgets::scope`] open.
pub fn set_process_budgets(b: Budgets) {
    *PROCESS.write().unwrap_or_else(|e| e.into_inner()) = b;
}

/// The budgets in force on this thread.
pub fn current() -> Budgets {
    SCOPED.with(|s| s.get()).unwrap_or_else(|| *PROCESS.read().unwrap_or_else(|e| e.into_inner()))
}

/// Each limit ID, the `Budgets` fields it covers and its command-line flag(s).
pub const BUDGET_FLAGS: &[(&str, &str, &str)] = &[
    ("LIMIT-nesting", "nesting", "--max-nesting"),
    ("LIMIT-statements", "statements", "--max-statements"),
    ("LIMIT-tokens", "tokens", "--max-tokens"),
    ("LIMIT-constant", "constant_elements", "--max-constant-elements"),
    ("LIMIT-sinfo", "sinfo_nodes, sinfo_depth", "--max-sinfo-nodes, --max-sinfo-depth"),
    (
        "LIMIT-prover",
        "prover_module_ms, prover_query_ms, z3_degree",
        "--prover-module-ms, --prover-query-ms, --max-z3-degree",
    ),
    ("LIMIT-diagnostics", "diagnostics", "--max-diagnostics"),
    ("LIMIT-excerpt", "excerpt", "--max-excerpt"),
    ("LIMIT-fuel", "fuel", "--fuel"),
    ("LIMIT-depth", "max_depth", "--max-depth"),
    ("LIMIT-memory", "memory", "--max-memory-mb"),
];

/// "limit LIMIT-x; raise it with --flag (Budgets::field)": the note every limit error
/// carries.
pub fn raise_hint(limit: &str) -> String {
    match BUDGET_FLAGS.iter().find(|(id, _, _)| *id == limit) {
        Some((id, field, flag)) => format!("limit {id}: raise it with {flag} (spec_model::limits::Budgets::{field})"),
        None => format!("limit {limit}"),
    }
}

// LIMIT-sinfo: a program can make StructInfo and types grow without bound in few
// bindings (`t1 = (t0, t0)`, `t2 = (t1, t1)`, ... doubles at each one, `t1 = (t0,)`
// deepens), and every later pass walks them as trees. A derived StructInfo or type
// beyond the budget is reported where it is derived and replaced by `Object`, so
// that checking goes on in bounded time.

/// `Err` says which budget `si` exceeds. Stops counting at the budget, so the cost is
/// bounded even when `si` shares subtrees that would be exponential as a tree.
pub fn struct_info_within_budget(si: &StructInfo) -> Result<(), String> {
    walk(si, |s| match &*s.kind {
        StructInfoKind::Shape { values: Some(vs), .. } => (vs.len(), Vec::new()),
        StructInfoKind::Tuple { fields } => (0, fields.iter().collect()),
        StructInfoKind::Func { params, ret, .. } => (0, params.iter().flatten().chain(std::iter::once(ret)).collect()),
        _ => (0, Vec::new()),
    })
}

/// [`struct_info_within_budget`] for a type.
pub fn type_within_budget(t: &Type) -> Result<(), String> {
    walk(t, |t| match t {
        Type::Tuple(fs) => (0, fs.iter().collect()),
        Type::Func { arg_types, ret_type, .. } => (0, arg_types.iter().chain(std::iter::once(&**ret_type)).collect()),
        _ => (0, Vec::new()),
    })
}

/// Counts nodes depth-first with an explicit stack; `children` gives a node's extra
/// leaves and its children.
fn walk<'a, T>(root: &'a T, children: impl Fn(&'a T) -> (usize, Vec<&'a T>)) -> Result<(), String> {
    let b = current();
    let (mut nodes, mut stack) = (0usize, vec![(root, 1usize)]);
    while let Some((node, depth)) = stack.pop() {
        if depth > b.sinfo_depth {
            return Err(format!("nests deeper than {} levels", b.sinfo_depth));
        }
        let (leaves, kids) = children(node);
        nodes += 1 + leaves;
        if nodes > b.sinfo_nodes {
            return Err(format!("has more than {} nodes", b.sinfo_nodes));
        }
        stack.extend(kids.into_iter().map(|k| (k, depth + 1)));
    }
    Ok(())
}
