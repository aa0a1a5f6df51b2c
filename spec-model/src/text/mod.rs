//! The `.rx` text format (DESIGN.md): TVMScript-style Python syntax with the spec's
//! vocabulary. [`parse_module`] reads it; [`print_module`] writes the canonical form.
//!
//! Parsing has two stages: a Python-subset parser ([`py_parser`]) builds a syntax
//! tree with spans, and elaboration (`elab`) resolves names and builds the Relax AST.
//! Neither stage normalizes.

mod elab;
pub mod error;
pub mod lexer;
pub mod num_array;
mod print;
pub mod py_ast;
pub mod py_parser;

pub use error::{ParseError, ParseResult};
pub use print::{
    print_expr, print_module, print_module_in, print_prim_expr, print_struct_info, Dialect, DEFAULT_WIDTH,
};

use crate::grammar::{Expr, IRModule};

/// Parses a `.rx` file: an `@I.ir_module` class, or decorated functions forming a module.
pub fn parse_module(src: &str) -> ParseResult<IRModule> {
    let stmts = py_parser::parse_file(src)?;
    elab::elaborate_file(&stmts)
}

/// Parses a Relax expression that may call the module's globals by name, such as a
/// corpus `run:` line (`main(R.const([1, 2], "int32"))`).
pub fn parse_expr_in_module(module: &IRModule, src: &str) -> ParseResult<Expr> {
    let e = py_parser::parse_expression(src)?;
    elab::elaborate_expr_in_module(module, &e)
}

/// Parses shape expressions such as `(n + 1) * (n - 1)` in the `.rx` syntax; free names
/// are `int64` shape variables shared by all of them.
pub fn parse_prim_exprs(srcs: &[&str]) -> ParseResult<Vec<crate::grammar::PrimExpr>> {
    let es = srcs.iter().map(|s| py_parser::parse_expression(s)).collect::<ParseResult<Vec<_>>>()?;
    elab::elaborate_prim_exprs(&es)
}

/// Parses a standalone StructInfo such as `R.Tensor((n, 4), "float32")`; its free
/// names are shape variables.
pub fn parse_struct_info(src: &str) -> ParseResult<crate::grammar::StructInfo> {
    let e = py_parser::parse_expression(src)?;
    elab::elaborate_struct_info(&e)
}

/// The `ndim` the parser infers for `R.Tensor(shape_var)`; see the printer.
pub use elab::ndim_of_shape_var;

/// Checks the printer against the parser on `m`: `parse(print(m))` must be
/// alpha-equivalent to `m` and print the same text again. Returns the printed text.
pub fn check_round_trip(m: &IRModule) -> Result<String, String> {
    check_round_trip_in(m, Dialect::Rx)
}

/// [`check_round_trip`] through the printer of `dialect`.
pub fn check_round_trip_in(m: &IRModule, dialect: Dialect) -> Result<String, String> {
    let printed = print_module_in(m, DEFAULT_WIDTH, dialect);
    let again = parse_module(&printed)
        .map_err(|e| format!("the printed program does not parse:\n{}\n{printed}", e.render("<printed>", &printed)))?;
    crate::alpha::alpha_eq_module(m, &again)
        .map_err(|e| format!("the printed program parses to a different program: {e}\n{printed}"))?;
    let reprinted = print_module_in(&again, DEFAULT_WIDTH, dialect);
    if reprinted != printed {
        return Err(format!("printing is not idempotent:\n--- first\n{printed}--- second\n{reprinted}"));
    }
    Ok(printed)
}
