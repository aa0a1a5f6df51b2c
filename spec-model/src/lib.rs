//! `spec-model`: the Relax specification transcribed rule by rule.
//!
//! Modules follow the spec's sections: [`grammar`] (the AST), [`text`] (the `.rx`
//! format: parser and printer), [`alpha`] (alpha-equivalence of programs),
//! [`normal_form`], [`well_formed`], [`types`] (Types in Relax), [`struct_info`]
//! (Structural Information in Relax) and [`ops`] (the operator registry).
//!
//! # Naming key
//!
//! Short names stand for one kind of thing each, here and in `oracle` and `fuzz`:
//!
//! | name | stands for |
//! |---|---|
//! | `m` | an [`IRModule`](grammar::IRModule) (`n`: its normalized form) |
//! | `gv` | a [`GlobalVar`](grammar::GlobalVar) |
//! | `f` | a function: `Function`, `PrimFunc` or `BaseFunc` |
//! | `p` | a function parameter (`e` or `d` for a `PrimExpr`) |
//! | `e` | an expression of the language at hand: `Expr`, `PrimExpr`, `TirExpr`, `PyExpr` |
//! | `c` | a [`Call`](grammar::Call) |
//! | `b` | a [`Binding`](grammar::Binding) (`block`: a binding block) |
//! | `v` | a variable: `Var`, or `PrimVar` where only shape variables occur |
//! | `a` | an argument of a call (`args`: all of them) |
//! | `x`, `y` | the operands of an operator or a kernel |
//! | `s`, `si` | a [`StructInfo`](grammar::StructInfo) |
//! | `t` | a [`Type`](grammar::Type) (in the operator registry, a tensor argument) |
//! | `d`, `ds` | a dimension, the dimensions of a shape |
//! | `dtype` | a [`DataType`](grammar::DataType) |
//! | `i`, `j` | an index |
//! | `gamma`, `delta`, `sigma` | the contexts `Γ`, `Δ`, `Σ` |
//! | `sc` | a scope (of the normalizer, a checker, the interpreter or the generator) |
//! | `cx` | an operator's inference context ([`ops`]; the oracle's kernels have their own) |
//! | `ctx` | the parser's elaboration context |
//! | `fcx` | the purity scan of a function body (TY-11.2.1) |
//! | `env` | the environment of the StructInfo relations ([`SiEnv`](struct_info::SiEnv)) |
//! | `src` | source text |
//! | `out` | what a function appends its results to |
//!
//! Names with a suffix follow the spec's subscripts: `s1`, `s2` (`S1`, `S2`); `sv`, `se`,
//! `sf`, `s_t`, `s_f` (`Sv`, `Se`, `Sf`, `S_t`, `S_f`); `t1`, `tt`, `tf` (`T1`, `Tt`,
//! `Tf`). As in the spec, `tf` is the false branch's type in TY-8 and the callee's in
//! TY-7.3, and `m` is also the shape-variable mapping of SI-CC-6.3.2 and SI-D-11.2.4.
//!
//! A few letters mean something else by a wider convention: `d` a
//! [`Diagnostic`](diagnostic::Diagnostic) in code that collects them (`|d| d.is_error()`),
//! `a`, `b` the two sides of a binary operator or relation, `f` a `fmt::Formatter` in
//! `Display` impls, `i` the node of `ExprKind::If(i)`, `n` a count, `v` a run-time value
//! in the oracle, `u` the fuzzer's input (`arbitrary::Unstructured`), `md` a corpus
//! file's metadata. The oracle's TIR evaluator and the program generator name a
//! `DataType` `d`.

pub mod alpha;
pub mod check;
pub mod diagnostic;
pub mod grammar;
pub mod limits;
pub mod normal_form;
pub mod npy;
pub mod ops;
pub mod prim_eval;
pub mod rules;
pub mod span;
pub mod struct_info;
pub mod text;
pub mod types;
pub mod well_formed;

pub use span::Span;
