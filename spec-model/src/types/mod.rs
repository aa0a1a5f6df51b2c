//! Types in Relax: erasing StructInfo into types, subtyping (SUB-1..6), least upper
//! and greatest lower bounds, and the type checking rules (TY-1..11).

pub mod check;
pub mod globals;
pub mod purity;
pub mod subtype;

pub use check::{check_types, TypeReport};
pub use globals::OpCallSite;
pub use subtype::{erase_struct_info, find_glb, find_lub, is_subtype, type_name};
