//! The spec's **Grammar** section: the abstract syntax of Relax programs
//! (plus the later draft's `PrimValue`, `StringImm`, `DataTypeImm`, `PrimStructInfo`)
//! and the TIR subset `call_tir` runs.

mod datatype;
mod expr;
mod float16;
mod index_map;
mod module;
mod ndarray;
mod prim_expr;
pub mod rewrite;
mod struct_info;
pub mod tir;
mod ty;
pub mod visit;

pub use datatype::{DataType, TypeCode};
pub use expr::{
    AttrValue, Attrs, Binding, BindingBlock, BlockKind, Call, Expr, ExprKind, Function, If, SeqExpr, Var, VarNode,
};
pub use float16::f16_nearest;
pub use index_map::IndexMap;
pub use module::{BaseFunc, GlobalVar, IRModule};
pub use ndarray::{NDArray, Scalar, TensorData};
pub use prim_expr::{FloatLit, PrimBinOp, PrimExpr, PrimExprKind, PrimVar, PrimVarNode};
pub use struct_info::{DeriveFunc, StructInfo, StructInfoKind};
pub use tir::PrimFunc;
pub use ty::Type;

use std::sync::atomic::{AtomicU64, Ordering};

/// A process-wide fresh identity for variables and buffers.
pub(crate) fn fresh_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
