//! The vocabularies the printer writes.

use super::scalar::{Defaults, Reader};
use crate::grammar::{DataType, StructInfo, StructInfoKind, TypeCode};
use std::fmt;
use std::str::FromStr;

/// Which spelling of TVMScript the printer writes; the parser reads both.
///
/// [`Dialect::Tvm027`] is what the TVMScript parser of Apache TVM 0.27 accepts (and
/// what its `IRModule.script()` prints). Each difference from [`Dialect::Rx`], and
/// why (paths under `tvm/` in the `apache-tvm` 0.27 wheel):
///
/// - `out_sinfo=` → `out_ty=`: TVM 0.27 renamed StructInfo to Type; `R.call_tir`,
///   `R.call_dps_packed`, ... take `out_ty` (`relax/op/base.py`) and reject `out_sinfo`.
/// - `sinfo_args=` → `ty_args=`: likewise for `R.call_packed`
///   (`relax/script/builder/ir.py`) and `R.call_pure_packed` (`relax/op/base.py`).
/// - `from tvm.script import tir as T` → `tirx as T`: `tvm.script.tir` no longer
///   exists ("cannot import name 'tir' from 'tvm.script'"); its printer writes `tirx`.
/// - `@T.prim_func` → `@T.prim_func(s_tir=True)`: the default TIR dialect of 0.27
///   (`tirx`) rejects blocks ("TIR verifier does not support statement
///   s_tir.SBlockRealize"); `s_tir` is the block dialect the `.rx` format writes
///   (`tirx/script/parser/entry.py`; its printer writes the flag).
/// - `T.block(` → `T.sblock(`: `T.block` is gone (`tirx/script/builder/ir.py` has
///   `sblock`); `T.block_attr` → `T.sblock_attr` likewise.
/// - A module is always an `@I.ir_module class`: `tvm.script.parse` of one bare
///   `@R.function` gives a `relax.Function`, not a module, and the global references
///   in it are undefined. Every function that refers to a global starts with
///   `cls = Module`, as TVM's printer writes (TVM has no implicit `cls`; both
///   printers do this).
/// - An opaque `R.Callable` with a `derive_func` has no `ret=`: TVM refuses both
///   ("Cannot specify both ret and derive_func"), its return being `R.Object` (`R.Any`)
///   then (`FuncType.opaque_func` in `relax/type.py`); the parser reads a missing `ret` so.
/// - Fewer bare literals: a literal is bare only where TVM reads it with the same
///   dtype as the `.rx` parser. TVM reads a bare float in a Relax shape expression as
///   `float64` (`.rx`: `float32`); one inside `T.Select`/`T.Cast` as `int32`/`float32`
///   (`.rx`, in Relax: `int64`), so `T.Select(c, n, 4)` fails ("mismatched types");
///   and beside an operand narrower than 32 bits (`float16`, `int8`) TVM does not
///   convert it but promotes the operand (`x * 0.5` becomes `float32`).
/// - A local function's signature writes its dimensions unquoted (`(n,)`): TVM
///   declares a fresh variable for every quoted name (`"n"`) in a signature
///   (`get_symbolic_vars` in `relax/script/parser/entry.py`), where the `.rx` parser
///   takes the one in scope; the printer declares them all (`n = T.int64()`) at the top
///   of the global function, so the unquoted names resolve alike in both.
/// - A global function's signature writes a dimension that is one shape variable as
///   its bare name, declared by a module-level `n = TypeVar("n")` line (with
///   `from typing import TypeVar`), which is what TVM 0.27 prints under Python 3.11:
///   TVM's parser gives every function whose signature names a `TypeVar` its own
///   `int64` variable (`core/parser.py`), and an enclosing function's variable shadows
///   the `TypeVar` in a local function. Compound dimensions stay quoted (`"n * 2"`), as
///   TVM prints them, and so do `R.Prim(value=...)` values; variables only the body
///   declares keep `k = T.int64()`.
/// - An index map is `T.index_map(lambda i, j: ...)`, as TVM 0.27 prints it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// The canonical `.rx` text, in the spec's vocabulary.
    #[default]
    Rx,
    /// Apache TVM 0.27's TVMScript.
    Tvm027,
}

impl Dialect {
    pub const ALL: [Dialect; 2] = [Dialect::Rx, Dialect::Tvm027];

    pub fn name(self) -> &'static str {
        match self {
            Dialect::Rx => "rx",
            Dialect::Tvm027 => "tvm-0.27",
        }
    }

    /// A StructInfo keyword (`out_sinfo`, `sinfo_args`) in this dialect.
    pub(crate) fn sinfo_keyword(self, rx: &'static str) -> &'static str {
        match (self, rx) {
            (Dialect::Tvm027, "out_sinfo") => "out_ty",
            (Dialect::Tvm027, "sinfo_args") => "ty_args",
            _ => rx,
        }
    }

    /// The module TVMScript's `T` is imported from.
    pub(crate) fn tir_module(self) -> &'static str {
        match self {
            Dialect::Rx => "tir",
            Dialect::Tvm027 => "tirx",
        }
    }

    /// The `with` statement opening a block.
    pub(crate) fn block(self) -> &'static str {
        match self {
            Dialect::Rx => "T.block",
            Dialect::Tvm027 => "T.sblock",
        }
    }

    /// The statement giving a block's annotations.
    pub(crate) fn block_attr(self) -> &'static str {
        match self {
            Dialect::Rx => "T.block_attr",
            Dialect::Tvm027 => "T.sblock_attr",
        }
    }

    /// The options every `@T.prim_func` carries.
    pub(crate) fn prim_func_options(self) -> &'static [&'static str] {
        match self {
            Dialect::Rx => &[],
            Dialect::Tvm027 => &["s_tir=True"],
        }
    }

    /// Whether an opaque `R.Callable` with a `derive_func` leaves out its `ret=R.Object`.
    pub(crate) fn implies_derived_ret(self, has_derive_func: bool, ret: &StructInfo) -> bool {
        self == Dialect::Tvm027 && has_derive_func && matches!(*ret.kind, StructInfoKind::Object)
    }

    /// How TVM reads bare literals in a Relax shape expression (`relax`) or in TIR.
    pub(crate) fn literal_reader(self, relax: bool) -> Option<Reader> {
        let narrow = Defaults { int: DataType::INT32, float: DataType::FLOAT32 };
        let top = if relax { Defaults { int: DataType::INT64, float: DataType::float(64) } } else { narrow };
        match self {
            Dialect::Rx => None,
            Dialect::Tvm027 => Some(Reader { top, inside: narrow, beside: tvm_beside }),
        }
    }

    /// Whether a local function's signature quotes its dimensions (`"n"`).
    pub(crate) fn quotes_local_signatures(self) -> bool {
        self == Dialect::Rx
    }

    /// Whether a module of one Relax function may print as that bare function.
    pub(crate) fn bare_function_module(self) -> bool {
        self == Dialect::Rx
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dialect {
    type Err = String;

    fn from_str(s: &str) -> Result<Dialect, String> {
        Dialect::ALL.into_iter().find(|d| d.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
            format!("unknown dialect `{s}` (expected one of: {})", names.join(", "))
        })
    }
}

/// The dtype TVM gives a bare literal beside an operand of dtype `t`: `t`, unless the
/// literal (made `int32`/`float32` first) is wider than `t` or is a float beside an
/// integer; then TVM promotes the operand instead, and the literal must be typed.
fn tvm_beside(lit_is_float: bool, t: DataType) -> Option<DataType> {
    match (lit_is_float, t.code) {
        (false, TypeCode::Float) => Some(t),
        (true, TypeCode::Float) | (false, TypeCode::Int | TypeCode::UInt) if t.bits >= 32 && !t.is_bool() => Some(t),
        _ => None,
    }
}
