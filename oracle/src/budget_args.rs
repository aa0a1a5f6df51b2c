//! The budget flags every command line of the project takes (`oracle`, `fuzz-reduce`,
//! `fuzz-smoke`): one flag per field of `spec_model::limits::Budgets`, so that the
//! same input meets the same budgets in every tool.

use clap::builder::RangedU64ValueParser;
use spec_model::limits::{Budgets, MAX_CALL_DEPTH, MAX_NESTING_BUDGET};

/// The budgets of every phase (spec_model::limits::Budgets; README "Limits"): each
/// flag raises (or lowers) one, and the error of an input beyond it names the flag.
#[derive(clap::Args)]
#[command(next_help_heading = "Budgets (every command)")]
pub struct BudgetArgs {
    /// LIMIT-nesting: levels of brackets, blocks, indentation, operator and postfix
    /// chains together, at most 10000 (the native stack is sized from it; printing and
    /// checking cost grows with its square).
    #[arg(long, global = true, value_name = "N", default_value_t = Budgets::DEFAULT.nesting,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_NESTING_BUDGET as u64))]
    pub max_nesting: usize,
    /// LIMIT-statements: statements of one block (a function's bindings, a module's functions).
    #[arg(long, global = true, value_name = "N", default_value_t = Budgets::DEFAULT.statements)]
    pub max_statements: usize,
    /// LIMIT-tokens: tokens of one file.
    #[arg(long, global = true, value_name = "N", default_value_t = Budgets::DEFAULT.tokens)]
    pub max_tokens: usize,
    /// LIMIT-constant: elements of one constant literal in the text.
    #[arg(long, global = true, value_name = "N", default_value_t = Budgets::DEFAULT.constant_elements)]
    pub max_constant_elements: u64,
    /// LIMIT-sinfo: nodes of a StructInfo or type derived for a binding.
    #[arg(long, global = true, value_name = "N", default_value_t = Budgets::DEFAULT.sinfo_nodes)]
    pub max_sinfo_nodes: usize,
    /// LIMIT-sinfo: nesting depth of a StructInfo or type derived for a binding.
    #[arg(long, global = true, value_name = "N", default_value_t = Budgets::DEFAULT.sinfo_depth,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub max_sinfo_depth: usize,
    /// LIMIT-prover: milliseconds egg and Z3 may spend on one module's queries.
    #[arg(long, global = true, value_name = "MS", default_value_t = Budgets::DEFAULT.prover_module_ms)]
    pub prover_module_ms: u64,
    /// LIMIT-prover: milliseconds Z3 may spend on one query.
    #[arg(long, global = true, value_name = "MS", default_value_t = Budgets::DEFAULT.prover_query_ms)]
    pub prover_query_ms: u64,
    /// LIMIT-prover: the highest polynomial degree Z3 is asked about.
    #[arg(long, global = true, value_name = "N", default_value_t = Budgets::DEFAULT.z3_degree)]
    pub max_z3_degree: u32,
    /// LIMIT-diagnostics: diagnostics shown in full (the rest are counted).
    #[arg(long, global = true, value_name = "N", default_value_t = Budgets::DEFAULT.diagnostics)]
    pub max_diagnostics: usize,
    /// LIMIT-excerpt: characters of a source line quoted whole in a diagnostic.
    #[arg(long, global = true, value_name = "N", default_value_t = Budgets::DEFAULT.excerpt)]
    pub max_excerpt: usize,
    /// LIMIT-fuel: evaluation steps (both engines).
    #[arg(long, global = true, value_name = "N", default_value_t = Budgets::DEFAULT.fuel)]
    pub fuel: u64,
    /// LIMIT-depth: nested closure calls (both engines; at most 10000).
    #[arg(long, global = true, value_name = "N", default_value_t = Budgets::DEFAULT.max_depth,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_CALL_DEPTH as u64))]
    pub max_depth: usize,
    /// LIMIT-memory: mebibytes of tensors a run holds at once (both engines, `.npy` arguments).
    #[arg(long, global = true, value_name = "MIB", default_value_t = (Budgets::DEFAULT.memory >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(1..=(1 << 24)))]
    pub max_memory_mb: u64,
}

impl BudgetArgs {
    /// The budgets the flags give.
    pub fn budgets(&self) -> Budgets {
        Budgets {
            nesting: self.max_nesting,
            statements: self.max_statements,
            tokens: self.max_tokens,
            constant_elements: self.max_constant_elements,
            sinfo_nodes: self.max_sinfo_nodes,
            sinfo_depth: self.max_sinfo_depth,
            prover_module_ms: self.prover_module_ms,
            prover_query_ms: self.prover_query_ms,
            z3_degree: self.max_z3_degree,
            diagnostics: self.max_diagnostics,
            excerpt: self.max_excerpt,
            fuel: self.fuel,
            max_depth: self.max_depth,
            memory: usize::try_from(self.max_memory_mb << 20).unwrap_or(usize::MAX),
        }
    }
}

/// Makes `b` the process's budgets and runs `f` on a thread whose stack fits the
/// nesting budget (every pass recurses once per level); `Err` if the system refuses
/// such a thread. A panic in `f` goes on in the caller.
pub fn run_under<T: Send + 'static>(b: Budgets, f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    spec_model::limits::set_process_budgets(b);
    let stack = b.stack_bytes();
    let h = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(f)
        .map_err(|e| format!("error[limit]: cannot start a thread with a {stack}-byte stack for --max-nesting: {e}"))?;
    Ok(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
}
