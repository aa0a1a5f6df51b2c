//! The Notable Operators: `call_tir` (with `call_tir_inplace` and `call_tir_with_grad`), `call_dps_packed`, the packed-call forms, `shape_of`,
//! `null_value`, the impure `print` and `assert_op`, and the earlier draft's `cast`.

use super::infer::Infer;
use super::OpError;
use crate::grammar::tir::{Buffer, TirParam};
use crate::grammar::{BaseFunc, DataType, ExprKind, PrimFunc, StructInfo, StructInfoKind};
use crate::require;
use crate::struct_info::default_derive;
use crate::text::print_struct_info;
use crate::types::{erase_struct_info, is_subtype};

fn unit() -> StructInfo {
    StructInfo::new(StructInfoKind::Tuple { fields: Vec::new() }, crate::Span::SYNTHETIC)
}

/// The output StructInfo of a destination-passing call: one `sinfo_args` entry, a
/// tensor of known dtype and defined shape, or a tuple of such.
fn dps_outputs(cx: &Infer) -> Result<(StructInfo, Vec<StructInfo>), OpError> {
    let [out] = cx.call.sinfo_args.as_slice() else {
        return Err(
            cx.error(format!("needs exactly one output StructInfo (`out_sinfo=`), {} given", cx.call.sinfo_args.len()))
        );
    };
    let fields = match &*out.kind {
        StructInfoKind::Tuple { fields } => fields.clone(),
        _ => vec![out.clone()],
    };
    for f in &fields {
        match &*f.kind {
            StructInfoKind::Tensor { shape: Some(_), dtype, .. } if !dtype.is_void() => {}
            _ => {
                return Err(cx.error(format!(
                    "each output must be a tensor with a shape and a dtype, got {}",
                    print_struct_info(f)
                )))
            }
        }
    }
    Ok((out.clone(), fields))
}

/// The input tensors of a destination-passing call: a tuple of tensors, or one tensor
/// standing for a one-element tuple (TVMScript wraps a bare tensor so).
fn dps_inputs(cx: &Infer, i: usize) -> Result<Vec<StructInfo>, OpError> {
    let fields = match &*cx.args[i].kind {
        StructInfoKind::Tuple { fields } => fields.clone(),
        StructInfoKind::Tensor { .. } => vec![cx.args[i].clone()],
        _ => return Err(cx.error("the arguments must be a tuple of tensors")),
    };
    for (j, f) in fields.iter().enumerate() {
        cx.tensor_of(f, &format!("argument {j}"))?;
    }
    Ok(fields)
}

/// `call_tir`'s inputs: the tensors of `args`, and the positions of its integer or
/// boolean `PrimValue`s (TVM 0.27's scalar arguments).
fn call_tir_inputs(cx: &Infer) -> Result<(Vec<StructInfo>, Vec<usize>), OpError> {
    let fields = match &*cx.args[1].kind {
        StructInfoKind::Tuple { fields } => fields.clone(),
        StructInfoKind::Tensor { .. } => vec![cx.args[1].clone()],
        _ => return Err(cx.error("the arguments must be a tuple of tensors and PrimValues")),
    };
    let (mut tensors, mut prims) = (Vec::new(), Vec::new());
    for (j, f) in fields.iter().enumerate() {
        match &*f.kind {
            StructInfoKind::Prim { dtype, .. } if dtype.is_int() || dtype.is_uint() || dtype.is_bool() => prims.push(j),
            StructInfoKind::Prim { dtype, .. } => {
                return Err(cx.error(format!(
                    "argument {j} is a {dtype} PrimValue; call_tir passes integer and boolean PrimValues only"
                )))
            }
            _ => {
                cx.tensor_of(f, &format!("argument {j}"))?;
                tensors.push(f.clone());
            }
        }
    }
    Ok((tensors, prims))
}

/// The PrimFunc's tensor parameters in order: a buffer, or `None` for a bare
/// `T.handle` (which takes its tensor and never reads it). A call's tensors fill them
/// in order, as at run time; its scalars fill the other parameters.
fn tensor_params(f: &PrimFunc) -> Vec<Option<&Buffer>> {
    f.params.iter().filter(|p| takes_tensor(p)).map(|p| p.buffer.as_ref()).collect()
}

/// Whether a PrimFunc parameter takes a tensor: a buffer or a bare `T.handle`.
fn takes_tensor(p: &TirParam) -> bool {
    p.buffer.is_some() || p.var.dtype() == DataType::handle()
}

/// Checks tensors against the PrimFunc's tensor parameters ([`tensor_params`]): their
/// count, and rank and dtype where a buffer gives them.
pub(super) fn check_buffers(
    cx: &Infer,
    name: &str,
    f: &PrimFunc,
    tensors: &[StructInfo],
    scalars: i64,
) -> Result<(), OpError> {
    let tensor_params = tensor_params(f);
    let expected = tensors.len() as i64 + scalars.max(0);
    if f.params.len() as i64 != expected && scalars != -1 {
        return Err(cx.error(format!(
            "`{name}` takes {} parameters; the call passes {} tensors (inputs and outputs) and {} scalars",
            f.params.len(),
            tensors.len(),
            scalars
        )));
    }
    if tensor_params.len() != tensors.len() {
        return Err(cx.error(format!(
            "`{name}` takes {} tensors (buffers and handles); the call passes {} (inputs and outputs)",
            tensor_params.len(),
            tensors.len()
        )));
    }
    for (j, (t, b)) in tensors.iter().zip(tensor_params).enumerate() {
        let Some(b) = b else { continue };
        let ti = cx.tensor_of(t, "a tensor")?;
        if ti.ndim != -1 && ti.ndim as usize != b.shape().len() {
            return Err(cx.error(format!(
                "tensor {j} has rank {} but buffer `{}` of `{name}` has rank {}",
                ti.ndim,
                b.name(),
                b.shape().len()
            )));
        }
        if !ti.dtype.is_void() && ti.dtype != b.dtype() {
            return Err(cx.error(format!(
                "tensor {j} has dtype {} but buffer `{}` of `{name}` has dtype {}",
                ti.dtype,
                b.name(),
                b.dtype()
            )));
        }
    }
    Ok(())
}

/// OP-call_tir: `call_tir(f, args, out_sinfo, tir_vars?)` allocates the outputs
/// described by `out_sinfo`, calls the PrimFunc `f(*args, *outputs, *tir_vars)` in
/// destination-passing style and returns the outputs; pure. The result's StructInfo is
/// `out_sinfo`. `args` is a tuple of tensors; a single tensor stands for the tuple of
/// it (TVMScript's `R.call_tir(f, x, ...)`). Extension (TVM 0.27, where `args` holds
/// "the ordered tensor and primitive input arguments"): an element of `args` may be an
/// integer or boolean `PrimValue`, passed to the PrimFunc's scalar parameter at its
/// position (proofs-notes/operator-semantics.md). Errors: `f` is not a GlobalVar bound
/// to a PrimFunc of the module; `args` is neither a tensor nor a tuple of tensors and
/// such `PrimValue`s; `out_sinfo` is not one tensor (with shape and dtype) or a tuple of
/// them; `tir_vars` is not a shape; the PrimFunc's parameter count, a buffer's rank or
/// dtype, or the kind of the parameter at a `PrimValue`'s position, does not match.
pub fn call_tir(cx: &mut Infer) -> Result<StructInfo, OpError> {
    call_tir_family(cx, None)
}

/// OP-call_tir_with_grad: `call_tir_with_grad(f, args, out_sinfo, te_grad_name,
/// te_grad_kwargs?, tir_vars?)` is OP-call_tir (same rule, same result `out_sinfo`,
/// pure) with two attributes only the Gradient pass reads: `te_grad_name`, the name
/// of the TE function computing the gradient (a string, required), and
/// `te_grad_kwargs`, its keyword arguments (a dict from strings to attribute values).
/// Errors: those of OP-call_tir; `te_grad_name` missing or not a string;
/// `te_grad_kwargs` not a dict (the attribute schema).
pub fn call_tir_with_grad(cx: &mut Infer) -> Result<StructInfo, OpError> {
    call_tir_family(cx, None)
}

/// OP-call_tir_inplace: `call_tir_inplace(f, args, out_sinfo, inplace_indices,
/// tir_vars?)` is OP-call_tir where output `i` is computed in place in argument
/// `inplace_indices[i]` (`-1`: a fresh tensor, as call_tir's): the PrimFunc is called
/// as `f(*args, *fresh outputs, *tir_vars)`, and the result is `out_sinfo`; pure (TVM
/// 0.27 declares it so; the reading that makes it so is E-15 of
/// proofs-notes/evaluation.md: the in-place arguments are copies). As TVM's
/// `NormalizeCallTIRInPlace`, errors: those of OP-call_tir (with only the fresh
/// outputs among the PrimFunc's buffers); `inplace_indices` does not have one entry
/// per output; an entry is below -1 or not an index of `args`; an index other than -1
/// appears twice; every entry is -1 ("use call_tir"); the argument at an in-place
/// index is not a tensor of the output's dtype whose shape is provably the output's.
pub fn call_tir_inplace(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let indices = cx.attr_ints("inplace_indices").unwrap_or_default();
    call_tir_family(cx, Some(&indices))
}

/// The rule shared by call_tir and its variants; `inplace` holds call_tir_inplace's
/// `inplace_indices`.
fn call_tir_family(cx: &mut Infer, inplace: Option<&[i64]>) -> Result<StructInfo, OpError> {
    let (out, outputs) = dps_outputs(cx)?;
    let (inputs, prims) = call_tir_inputs(cx)?;
    let fresh = match inplace {
        None => outputs,
        Some(indices) => inplace_outputs(cx, indices, &outputs)?,
    };
    let scalars = match cx.call.args.len() {
        2 => prims.len() as i64,
        3 => match cx.shape_arg(2, "`tir_vars`")?.0 {
            -1 => -1,
            n => n + prims.len() as i64,
        },
        n => {
            return Err(cx
                .error(format!("takes a function, a tuple of arguments and optional `tir_vars`, {n} arguments given")))
        }
    };
    let ExprKind::GlobalVar(gv) = &cx.call.args[0].kind else {
        return Err(cx.error("the callee must be a global TIR PrimFunc (`cls.f`)"));
    };
    if let Some(m) = cx.module {
        match m.get(&gv.name) {
            Some(BaseFunc::Tir(f)) => {
                let all: Vec<StructInfo> = inputs.iter().chain(fresh.iter()).cloned().collect();
                check_buffers(cx, &gv.name, f, &all, scalars)?;
                for &j in &prims {
                    let p = f.params.get(j);
                    if p.is_some_and(takes_tensor) {
                        return Err(cx.error(format!(
                            "argument {j} is a PrimValue, but parameter {j} of `{}` is a buffer",
                            gv.name
                        )));
                    }
                }
            }
            Some(BaseFunc::Relax(_)) => {
                return Err(cx.error(format!("`{}` is a Relax function, not a TIR PrimFunc", gv.name)))
            }
            None => return Err(cx.error(format!("the module has no function `{}`", gv.name))),
        }
    }
    Ok(out)
}

/// call_tir_inplace's checks of `inplace_indices` against the outputs and the
/// arguments; the outputs it allocates (those at index -1).
fn inplace_outputs(cx: &mut Infer, indices: &[i64], outputs: &[StructInfo]) -> Result<Vec<StructInfo>, OpError> {
    require!(cx => indices.len() == outputs.len(),
        "`inplace_indices` has {} entries but there are {} outputs: one in-place index per output",
        indices.len(), outputs.len());
    let args: Vec<StructInfo> = match &*cx.args[1].kind {
        StructInfoKind::Tuple { fields } => fields.clone(),
        _ => vec![cx.args[1].clone()],
    };
    for (i, &j) in indices.iter().enumerate() {
        require!(cx => j >= -1 && j < args.len() as i64,
            "in-place index {i} is {j}, out of range (between -1 and {}, inclusive)", args.len() as i64 - 1);
        require!(cx => j == -1 || !indices[..i].contains(&j),
            "in-place index {j} appears more than once (an argument holds one output)");
    }
    require!(cx => indices.iter().any(|&j| j != -1),
        "every in-place index is -1: at least one output must be computed in place (or else use call_tir)");
    let mut fresh = Vec::new();
    for (i, (&j, out)) in indices.iter().zip(outputs).enumerate() {
        let Ok(j) = usize::try_from(j) else {
            fresh.push(out.clone());
            continue;
        };
        let o = cx.tensor_of(out, "an output")?;
        let arg = &args[j];
        let same = match &*arg.kind {
            StructInfoKind::Tensor { .. } => {
                let a = cx.tensor_of(arg, "an argument")?;
                a.dtype == o.dtype && provably_same_shape(cx, &a, &o)
            }
            _ => false,
        };
        require!(cx => same,
            "output {i} ({}) is computed in place in argument {j} ({}), which must be a tensor of the same dtype and a provably equal shape",
            print_struct_info(out), print_struct_info(arg));
    }
    Ok(fresh)
}

/// TVM's `CanProveShapeEqual`: the same shape variable, or dimensions provably equal
/// one by one.
fn provably_same_shape(cx: &Infer, a: &super::infer::TensorInfo, b: &super::infer::TensorInfo) -> bool {
    if let (Some(sa), Some(sb)) = (&a.shape, &b.shape) {
        if let (ExprKind::Var(x), ExprKind::Var(y)) = (&sa.kind, &sb.kind) {
            if x.id() == y.id() {
                return true;
            }
        }
    }
    match (&a.dims, &b.dims) {
        (Some(da), Some(db)) => {
            da.len() == db.len()
                && da.iter().zip(db).all(|(x, y)| cx.compare(x, y) == crate::struct_info::Verdict::Equal)
        }
        _ => false,
    }
}

fn packed_callee(cx: &Infer) -> Result<(), OpError> {
    match (&cx.call.args[0].kind, &*cx.args[0].kind) {
        (ExprKind::ExternFunc { .. }, _) | (_, StructInfoKind::Func { params: None, .. }) => Ok(()),
        _ => Err(cx.error("the callee must be a packed function (`R.ExternFunc(\"name\")` or its name)")),
    }
}

/// OP-call_dps_packed: as OP-call_tir, calling the packed function `func` (which may
/// also mutate its inputs, so the call is impure). The result is `out_sinfo`.
/// Errors: `func` is not a packed function; `args` neither a tensor nor a tuple of
/// tensors; `out_sinfo` not one tensor (with shape and dtype) or a tuple of them.
pub fn call_dps_packed(cx: &mut Infer) -> Result<StructInfo, OpError> {
    packed_callee(cx)?;
    dps_inputs(cx, 1)?;
    Ok(dps_outputs(cx)?.0)
}

/// OP-call_packed: a call `Call(ExternFunc(name), args, sinfo_args)` (written
/// `R.call_packed("name", *args, sinfo_args=...)`): impure unless the call carries
/// `pure=True` (TY-10.1.1); its StructInfo is `default_derive` of the call (SI-D-10,
/// SI-D-11.2.2): none → `ObjectStructInfo`, one → it, several → their tuple.
pub fn call_packed(cx: &mut Infer) -> Result<StructInfo, OpError> {
    Ok(default_derive(cx.call))
}

/// OP-call_pure_packed: `call_pure_packed(func, *args, sinfo_args=...)` calls a packed
/// function and is pure (its author vouches for it). The result is `default_derive`
/// over `sinfo_args`. Error: `func` is not a packed function.
pub fn call_pure_packed(cx: &mut Infer) -> Result<StructInfo, OpError> {
    packed_callee(cx)?;
    Ok(default_derive(cx.call))
}

/// OP-shape_of: the shape of a tensor, as a shape value: `ShapeStructInfo` with the
/// tensor's rank and its dimensions when known. Error: the argument is not a tensor.
pub fn shape_of(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let t = cx.tensor(0, "the argument")?;
    let ndim = t.dims.as_ref().map_or(t.ndim, |d| d.len() as i64);
    Ok(StructInfo::new(StructInfoKind::Shape { values: t.dims, ndim }, crate::Span::SYNTHETIC))
}

/// OP-null_value: the null object; `ObjectStructInfo`.
pub fn null_value(_cx: &mut Infer) -> Result<StructInfo, OpError> {
    Ok(StructInfo::object())
}

/// OP-print: prints its arguments (with the `format` string, if any); impure. The
/// result is the empty tuple.
pub fn print(_cx: &mut Infer) -> Result<StructInfo, OpError> {
    Ok(unit())
}

/// OP-assert_op: stops the program with an error (the `format` string applied to the
/// remaining arguments) when `condition` is false; impure. The result is the empty
/// tuple. Error: `condition` is not a boolean scalar: a tensor whose known rank is not
/// 0 or whose known dtype is not `bool`, a PrimValue not of dtype `bool`, or anything
/// else. A tensor of unknown rank or dtype may be a boolean scalar (checked at run time).
pub fn assert_op(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let ok = match &*cx.args[0].kind {
        StructInfoKind::Tensor { ndim, dtype, .. } => {
            (*ndim == 0 || *ndim == -1) && (dtype.is_void() || dtype.is_bool())
        }
        StructInfoKind::Prim { dtype, .. } => dtype.is_bool(),
        _ => false,
    };
    require!(cx => ok, "the condition must be a boolean scalar, got {}", print_struct_info(&cx.args[0]));
    Ok(unit())
}

/// OP-cast (earlier draft): `cast(v, sinfo_args=[S])` checks at run time that `v`
/// matches `S` and returns `v`; pure (its only effect is the error). The result is `S`.
/// Error: not exactly one StructInfo argument. Warning: `v`'s type and `S`'s type are
/// unrelated by subtyping, so the cast always fails.
pub fn cast(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let [target] = cx.call.sinfo_args.as_slice() else {
        return Err(cx.error(format!("needs exactly one target StructInfo, {} given", cx.call.sinfo_args.len())));
    };
    let (from, to) = (erase_struct_info(&cx.args[0]), erase_struct_info(target));
    if !is_subtype(&from, &to) && !is_subtype(&to, &from) {
        let msg = format!(
            "a value of type {} can never be a {}: the cast always fails",
            crate::types::type_name(&from),
            crate::types::type_name(&to)
        );
        cx.warn(msg);
    }
    Ok(target.clone())
}
