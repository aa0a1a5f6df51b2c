//! The lowered-memory dialect (issue 19): what Relax's memory planning and VM lowering
//! write. `builtin.alloc_tensor`, the planned storages and tensors of `memory.*`, the
//! VM's `vm.*` forms, and `call_builtin_with_ctx`. Their arguments are Relax
//! expressions: shapes (`R.shape([..])`), `R.prim_value(..)` device indices and offsets,
//! `R.str(..)` storage scopes and `R.dtype(..)` dtypes, as TVM >= 0.13 writes them
//! (src/relax/op/op.cc). Allocation is pure (TVM's `FPurity` is true: "memory allocation
//! isn't considered a visible effect"); the kills, `vm.call_tir_dyn` and
//! `call_builtin_with_ctx` are impure.

use super::infer::{tensor_si, Infer};
use super::OpError;
use crate::grammar::{BaseFunc, DataType, ExprKind, PrimExprKind, StructInfo, StructInfoKind};
use crate::require;
use crate::text::print_struct_info;

fn void() -> StructInfo {
    StructInfo::new(StructInfoKind::Tuple { fields: Vec::new() }, crate::Span::SYNTHETIC)
}

/// Argument `i` as a dtype: a `DataTypeImm` (`R.dtype("float32")`) of a known dtype.
fn dtype_arg(cx: &Infer, i: usize) -> Result<DataType, OpError> {
    match &cx.call.args[i].kind {
        ExprKind::DataTypeImm(d) if !d.is_void() => Ok(*d),
        ExprKind::DataTypeImm(_) => Err(cx.error("the dtype must be known, not void")),
        _ => Err(cx.error(format!(
            "argument {i} (the dtype) must be a data type, `R.dtype(\"...\")`, got {}",
            print_struct_info(&cx.args[i])
        ))),
    }
}

/// Argument `i` as an integer `PrimValue` (a device index or an offset); its value when
/// it is a literal.
fn int_arg(cx: &Infer, i: usize, what: &str) -> Result<Option<i64>, OpError> {
    match &*cx.args[i].kind {
        StructInfoKind::Prim { dtype, .. } if dtype.is_int() || dtype.is_uint() => {}
        _ => {
            return Err(cx.error(format!(
                "{what} must be an integer `R.prim_value(..)`, got {}",
                print_struct_info(&cx.args[i])
            )))
        }
    }
    Ok(match &cx.call.args[i].kind {
        ExprKind::PrimValue(p) => match &*p.kind {
            PrimExprKind::IntImm { value, .. } => Some(*value),
            _ => None,
        },
        _ => None,
    })
}

/// Argument `i` as a storage scope: a `StringImm` (`R.str("global")`).
fn scope_arg(cx: &Infer, i: usize) -> Result<(), OpError> {
    match &cx.call.args[i].kind {
        ExprKind::StringImm(_) => Ok(()),
        _ => Err(cx.error(format!(
            "the storage scope must be a string, `R.str(\"global\")`, got {}",
            print_struct_info(&cx.args[i])
        ))),
    }
}

/// A storage argument: a value of `ObjectStructInfo` (what the alloc_storage forms return).
fn storage_arg(cx: &Infer, i: usize) -> Result<(), OpError> {
    require!(cx => matches!(&*cx.args[i].kind, StructInfoKind::Object),
        "the storage must be an object (what `alloc_storage` returns), got {}", print_struct_info(&cx.args[i]));
    Ok(())
}

/// The tensor a shape argument `i` and dtype describe.
fn tensor_of(cx: &Infer, i: usize, dtype: DataType) -> Result<StructInfo, OpError> {
    let (ndim, values) = cx.shape_arg(i, "the shape")?;
    Ok(match values {
        Some(v) => tensor_si(Some(v), dtype, ndim),
        None => super::manipulate::tensor_of_shape_arg(cx, i, dtype, ndim),
    })
}

/// OP-builtin.alloc_tensor: `alloc_tensor(shape, dtype, runtime_device_index,
/// storage_scope="global")` is a new tensor `R.Tensor(shape, dtype)`; pure (TVM's
/// `FPurity`). Errors: `shape` is not a shape; `dtype` is not an `R.dtype` of a known
/// dtype; `runtime_device_index` is not an integer PrimValue; `storage_scope` is not a
/// string.
pub fn builtin_alloc_tensor(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let dtype = dtype_arg(cx, 1)?;
    int_arg(cx, 2, "the runtime device index")?;
    scope_arg(cx, 3)?;
    tensor_of(cx, 0, dtype)
}

/// OP-memory.alloc_storage: `alloc_storage(size, virtual_device_index, storage_scope,
/// dtype)` is a storage of `size` bytes (`size` a shape of one dimension, its byte
/// count): `ObjectStructInfo`; pure. Errors: `size` is not a shape, or a shape of known
/// rank other than 1, or a negative constant; `virtual_device_index` is not an integer
/// PrimValue; `storage_scope` is not a string; `dtype` is not an `R.dtype`.
pub fn memory_alloc_storage(cx: &mut Infer) -> Result<StructInfo, OpError> {
    storage_size(cx, 0)?;
    int_arg(cx, 1, "the virtual device index")?;
    scope_arg(cx, 2)?;
    dtype_arg(cx, 3)?;
    Ok(StructInfo::object())
}

fn storage_size(cx: &Infer, i: usize) -> Result<(), OpError> {
    let (ndim, values) = cx.shape_arg(i, "the size")?;
    require!(cx => ndim == -1 || ndim == 1, "the size must be a shape of one dimension (bytes), got rank {ndim}");
    if let Some(v) = values.as_ref().and_then(|v| v.first()).and_then(|d| d.as_int()) {
        require!(cx => v >= 0, "the size is negative: {v} bytes");
    }
    Ok(())
}

fn alloc_tensor_on_storage(cx: &Infer) -> Result<StructInfo, OpError> {
    storage_arg(cx, 0)?;
    if let Some(off) = int_arg(cx, 1, "the offset")? {
        require!(cx => off >= 0, "the offset is negative: {off}");
    }
    let dtype = dtype_arg(cx, 3)?;
    int_arg(cx, 4, "the runtime device index")?;
    tensor_of(cx, 2, dtype)
}

/// OP-memory.alloc_tensor: `alloc_tensor(storage, offset, shape, dtype,
/// runtime_device_ind=0)` is a tensor `R.Tensor(shape, dtype)` placed in `storage` at
/// byte `offset`; pure. That it fits (`offset + bytes <= size`) is checked at run time.
/// Errors: `storage` is not an object; `offset` is not an integer PrimValue, or a
/// negative literal; `shape` is not a shape; `dtype` is not an `R.dtype` of a known
/// dtype; the device index is not an integer PrimValue.
pub fn memory_alloc_tensor(cx: &mut Infer) -> Result<StructInfo, OpError> {
    alloc_tensor_on_storage(cx)
}

/// OP-memory.kill_storage: ends `storage`'s lifetime; a no-op returning `R.Tuple()`;
/// impure (so that dead-code elimination keeps it). Error: the argument is not an object.
pub fn memory_kill_storage(cx: &mut Infer) -> Result<StructInfo, OpError> {
    storage_arg(cx, 0)?;
    Ok(void())
}

/// OP-memory.kill_tensor: ends a tensor's lifetime; a no-op returning `R.Tuple()`;
/// impure. Error: the argument is not a tensor.
pub fn memory_kill_tensor(cx: &mut Infer) -> Result<StructInfo, OpError> {
    cx.tensor(0, "the argument")?;
    Ok(void())
}

/// OP-vm.alloc_storage: `alloc_storage(size, runtime_device_index, dtype,
/// storage_scope="global")`, the VM's storage of `size` bytes: `ObjectStructInfo`; pure.
/// Errors as OP-memory.alloc_storage.
pub fn vm_alloc_storage(cx: &mut Infer) -> Result<StructInfo, OpError> {
    storage_size(cx, 0)?;
    int_arg(cx, 1, "the runtime device index")?;
    dtype_arg(cx, 2)?;
    scope_arg(cx, 3)?;
    Ok(StructInfo::object())
}

/// OP-vm.alloc_tensor: `alloc_tensor(storage, offset, shape, dtype,
/// runtime_device_ind=0)`, the VM's tensor in `storage` at byte `offset`:
/// `R.Tensor(shape, dtype)`; pure. Errors as OP-memory.alloc_tensor.
pub fn vm_alloc_tensor(cx: &mut Infer) -> Result<StructInfo, OpError> {
    alloc_tensor_on_storage(cx)
}

/// OP-vm.kill_object: sets the object's register to null in TVM's VM; here a no-op
/// returning `R.Tuple()`; impure. No error case (any value may be killed).
pub fn vm_kill_object(_cx: &mut Infer) -> Result<StructInfo, OpError> {
    Ok(void())
}

/// OP-vm.call_tir_dyn: `call_tir_dyn(f, (t_1, ..., t_k, shape))` calls the PrimFunc `f`
/// on the tensors `t_i` (inputs and the outputs it writes) and the values of `shape` as
/// its scalar parameters; returns `R.Tuple()`; impure (it writes its arguments).
/// Errors: `f` is neither a global PrimFunc of the module nor a packed function;
/// `args` is not a tuple whose last field is a shape and whose other fields are tensors;
/// the PrimFunc's parameter count (tensors plus the shape's known rank), or a buffer's
/// rank or dtype, does not match.
pub fn vm_call_tir_dyn(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let StructInfoKind::Tuple { fields } = &*cx.args[1].kind else {
        return Err(cx.error(format!(
            "the arguments must be a tuple of tensors ending in a shape, got {}",
            print_struct_info(&cx.args[1])
        )));
    };
    let Some((last, tensors)) = fields.split_last() else {
        return Err(cx.error("the arguments must end in a shape (the PrimFunc's scalar arguments)"));
    };
    let StructInfoKind::Shape { ndim, .. } = &*last.kind else {
        return Err(cx.error(format!("the last argument must be a shape, got {}", print_struct_info(last))));
    };
    for (j, t) in tensors.iter().enumerate() {
        cx.tensor_of(t, &format!("argument {j}"))?;
    }
    match (&cx.call.args[0].kind, &*cx.args[0].kind) {
        (ExprKind::ExternFunc { .. }, _) | (_, StructInfoKind::Func { params: None, .. }) => {}
        (ExprKind::GlobalVar(gv), _) => match cx.module.map(|m| m.get(&gv.name)) {
            None => {}
            Some(Some(BaseFunc::Tir(f))) => {
                super::special::check_buffers(cx, &gv.name, f, tensors, *ndim)?;
            }
            Some(Some(BaseFunc::Relax(_))) => {
                return Err(cx.error(format!("`{}` is a Relax function, not a TIR PrimFunc", gv.name)))
            }
            Some(None) => return Err(cx.error(format!("the module has no function `{}`", gv.name))),
        },
        _ => return Err(cx.error("the callee must be a global TIR PrimFunc (`cls.f`) or a packed function")),
    }
    Ok(void())
}

/// OP-call_builtin_with_ctx: `call_builtin_with_ctx(func, args, sinfo_args=[S])` calls
/// the VM builtin `func` (a packed function) with the VM's context and the fields of the
/// tuple `args`; impure (some builtins are). The result is `S`, or `R.Tuple()` without
/// StructInfo arguments. Errors: `func` is not a packed function; `args` is not a
/// tuple; more than one StructInfo argument.
pub fn call_builtin_with_ctx(cx: &mut Infer) -> Result<StructInfo, OpError> {
    match (&cx.call.args[0].kind, &*cx.args[0].kind) {
        (ExprKind::ExternFunc { .. }, _) | (_, StructInfoKind::Func { params: None, .. }) => {}
        _ => return Err(cx.error("the callee must be a packed function (`\"vm.builtin.name\"`)")),
    }
    require!(cx => matches!(&*cx.args[1].kind, StructInfoKind::Tuple { .. }),
        "the arguments must be a tuple, got {}", print_struct_info(&cx.args[1]));
    match cx.call.sinfo_args.as_slice() {
        [] => Ok(void()),
        [s] => Ok(s.clone()),
        more => Err(cx.error(format!("takes at most one StructInfo argument, {} given", more.len()))),
    }
}
