//! The program generator, in the manner of `wasm-smith`: it keeps the variables in
//! scope with their StructInfo ([`Ty`]) and the shape variables bound, chooses at each
//! step only among constructs valid there, and closes every block with a value of the
//! StructInfo required ([`Gen::expr_of`]). Every choice reads the fuzzer's bytes
//! through `Unstructured`; when they run out every choice is the first (simplest) one,
//! so generation always ends and never fails.

mod chains;
mod conv;
mod exprs;
mod funcs;
mod index;
mod inputs;
mod layout_transform;
mod linalg;
mod lowered;
mod manipulate_dims;
pub mod ops;
mod sorting;
mod statistics;
pub mod tir;
pub mod tircall;
pub mod ty;
mod unary_math;

use crate::config::Config;
use crate::program::Module;
use arbitrary::Unstructured;
use spec_model::grammar::{BaseFunc, GlobalVar, IRModule, PrimVar, Var};
use spec_model::Span;
use ty::Ty;

/// What is visible where a binding is generated.
#[derive(Clone, Default)]
pub struct Scope {
    /// Relax variables with their types, in binding order.
    pub vars: Vec<(Var, Ty)>,
    /// Shape variables with an upper bound on their value.
    pub shape_vars: Vec<(PrimVar, i64)>,
    /// Inside a DataflowBlock: pure calls only, no If, no nested blocks or closures.
    pub dataflow: bool,
    /// Impure calls allowed (only `main`'s ordinary blocks: other functions stay pure
    /// so that they may be called anywhere).
    pub impure_ok: bool,
    /// Nesting of SeqExprs, Ifs and closures.
    pub depth: usize,
}

impl Scope {
    /// The variables whose type satisfies `f`.
    pub fn vars_where(&self, f: impl Fn(&Ty) -> bool) -> Vec<(Var, Ty)> {
        self.vars.iter().filter(|(_, t)| f(t)).cloned().collect()
    }
    pub fn prim_vars(&self) -> Vec<PrimVar> {
        self.shape_vars.iter().map(|(v, _)| v.clone()).collect()
    }
}

/// A global Relax function the generator may call: its parameters' and result's types
/// over its own shape variables.
#[derive(Clone)]
pub struct GlobalSig {
    pub name: String,
    pub params: Vec<Ty>,
    pub ret: Ty,
    /// Calls pass a counter (a rank-0 int64 tensor) as the last argument.
    pub recursive: bool,
}

/// The generator's state.
pub struct Gen<'a, 'u> {
    pub u: &'u mut Unstructured<'a>,
    pub cfg: Config,
    next_name: usize,
    pub globals: Vec<GlobalSig>,
    pub functions: Vec<(GlobalVar, BaseFunc)>,
    /// Bindings left for the whole program (a bound on its size).
    pub budget: usize,
}

/// Generates a well-formed, StructInfo-correct module with inputs for its entry
/// function `main`, from any bytes.
pub fn generate(u: &mut Unstructured, cfg: &Config) -> Module {
    let cfg = cfg.clone().clamped();
    let budget = cfg.max_bindings * (cfg.max_functions + 2) * 2;
    let mut g = Gen { u, cfg, next_name: 0, globals: Vec::new(), functions: Vec::new(), budget };
    let (main, inputs) = g.program();
    let mut functions = std::mem::take(&mut g.functions);
    functions.push((GlobalVar::new("main"), BaseFunc::Relax(main)));
    Module {
        ir: IRModule { name: "Module".into(), functions, attrs: Default::default(), span: Span::SYNTHETIC },
        entry: "main".into(),
        inputs,
    }
}

impl<'a> Gen<'a, '_> {
    /// A number in `0..n` (0 when `n <= 1` or the bytes are used up).
    pub fn pick(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        self.u.choose_index(n).unwrap_or(0)
    }
    /// True with probability `num/den` (false when the bytes are used up).
    pub fn chance(&mut self, num: u32, den: u32) -> bool {
        // `ratio` says yes on empty input; the simplest choice here is no.
        !self.u.is_empty() && self.u.ratio(num, den).unwrap_or(false)
    }
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        self.u.int_in_range(lo..=hi).unwrap_or(lo)
    }
    pub fn choose<T: Clone>(&mut self, xs: &[T]) -> Option<T> {
        if xs.is_empty() {
            return None;
        }
        let i = self.pick(xs.len());
        Some(xs[i].clone())
    }
    /// A fresh name (names are unique in the module, so printing needs no renaming).
    pub fn name(&mut self, stem: &str) -> String {
        self.next_name += 1;
        format!("{stem}{}", self.next_name)
    }
    /// Whether the nesting limit allows one more SeqExpr, If or closure here.
    pub fn can_nest(&self, sc: &Scope) -> bool {
        !sc.dataflow && sc.depth < self.cfg.max_depth
    }
}
