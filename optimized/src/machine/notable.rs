//! The Notable Operators' evaluation rules: `call_tir`, `call_dps_packed`,
//! `call_packed`/`call_pure_packed`, `shape_of`, `null_value`, `print`, `assert_op`,
//! `cast`. They need what a kernel does not see: the module's PrimFuncs and packed
//! functions, the shape variables in scope, the printed output.

use super::print::print_value;
use super::{check, eval_dim, Run};
use crate::bail;
use crate::compile::plan::{NotableInfo, OutShape, OutTensor, Outputs};
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::kernels::{over_budget, Notable};
use crate::tensor::Tensor;
use crate::value::{Prim, Value};
use spec_model::ops::Op;
use spec_model::Span;
use std::rc::Rc;

fn op_error(op: Op, message: impl Into<String>, span: Span) -> Error {
    Error::new(ErrorKind::OpError, op.def().rule, message, span)
}

/// The tensors of a destination-passing call's input tuple (a lone tensor is a tuple of one).
fn inputs(op: Op, v: Option<&Value>, span: Span) -> Result<Vec<Rc<Tensor>>> {
    match v {
        None => Ok(Vec::new()),
        Some(Value::Tuple(vs)) => vs
            .iter()
            .map(|x| match x {
                Value::Tensor(t) => Ok(t.clone()),
                other => Err(op_error(op, format!("each argument must be a tensor, got {}", other.kind()), span)),
            })
            .collect(),
        Some(Value::Tensor(t)) => Ok(vec![t.clone()]),
        Some(other) => {
            Err(op_error(op, format!("the arguments must be a tuple of tensors, got {}", other.kind()), span))
        }
    }
}

/// `format` with each `{}` replaced by the next argument (left as `{}` when they run out).
fn substitute(format: &str, args: &[String]) -> String {
    let mut out = String::new();
    let mut rest = args.iter();
    let mut parts = format.split("{}");
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for p in parts {
        out.push_str(rest.next().map_or("{}", |s| s.as_str()));
        out.push_str(p);
    }
    out
}

impl Run<'_> {
    /// Allocates the outputs of a destination-passing call, their shapes evaluated in the
    /// current shape context: the result value and the tensors. Each holds zeros (C-9)
    /// unless `overwritten(i)` says the callee writes every element of output `i` before
    /// reading it and discards it on failure.
    #[allow(clippy::too_many_arguments)]
    fn outputs(
        &self,
        op: Op,
        outputs: Option<&Outputs>,
        slots: &[Option<Value>],
        shapes: &[Option<i64>],
        span: Span,
        overwritten: &dyn Fn(usize) -> bool,
    ) -> Result<(Value, Vec<Rc<Tensor>>)> {
        let rule = op.def().rule;
        let one = |i: usize, o: &OutTensor| -> Result<Rc<Tensor>> {
            let dims: Vec<u64> = match &o.shape {
                OutShape::Dims(ds) => {
                    let mut v = Vec::with_capacity(ds.len());
                    for d in ds.iter() {
                        let x = eval_dim(d, shapes, rule, span)?;
                        match u64::try_from(x) {
                            Ok(x) => v.push(x),
                            Err(_) => bail!(ErrorKind::NegativeDimension, rule, span, "output dimension {x}"),
                        }
                    }
                    v
                }
                OutShape::Var(slot) => match slot.and_then(|s| slots[s as usize].as_ref()) {
                    Some(Value::Shape(s)) => s.iter().map(|d| *d as u64).collect(),
                    _ => return Err(op_error(op, "the output shape variable holds no shape", span)),
                },
                OutShape::Malformed(why) => return Err(op_error(op, *why, span)),
            };
            let Some(dtype) = DType::of(o.dtype) else {
                return Err(op_error(op, format!("an output of dtype {} has no tensor storage", o.dtype), span));
            };
            let t = if overwritten(i) {
                crate::stats::record(crate::stats::Counter::TirOutputsUnzeroed);
                Tensor::for_overwrite(dtype, &dims, &self.memory)
            } else {
                Tensor::zeros(dtype, &dims, &self.memory)
            };
            Ok(Rc::new(t.map_err(|e| over_budget(e, span))?))
        };
        match outputs {
            None => Err(op_error(op, "no output StructInfo", span)),
            Some(Outputs::Malformed(why)) => Err(op_error(op, *why, span)),
            Some(Outputs::One(o)) => {
                let t = one(0, o)?;
                Ok((Value::Tensor(t.clone()), vec![t]))
            }
            Some(Outputs::Tuple(os)) => {
                let ts = os.iter().enumerate().map(|(i, o)| one(i, o)).collect::<Result<Vec<_>>>()?;
                Ok((Value::tuple(ts.iter().map(|t| Value::Tensor(t.clone())).collect()), ts))
            }
        }
    }

    /// SEM-9.1 for a Notable Operator.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn notable(
        &mut self,
        op: Op,
        which: Notable,
        args: &[Value],
        extra: &NotableInfo,
        slots: &[Option<Value>],
        shapes: &[Option<i64>],
        span: Span,
    ) -> Result<Value> {
        match which {
            // OP-call_tir: allocate the outputs, run the PrimFunc on inputs and outputs.
            Notable::CallTir => {
                let Some(Value::PrimFunc(f)) = args.first() else {
                    return Err(op_error(op, "the callee must be a TIR PrimFunc", span));
                };
                // TVM 0.27's scalar arguments: integer and boolean PrimValues among the
                // tensors, bound to the scalar parameters before `tir_vars`.
                let (ins, mut scalars) = match args.get(1) {
                    Some(Value::Tuple(vs)) => {
                        let mut scalars = Vec::new();
                        let mut tensors = Vec::new();
                        for x in vs.iter() {
                            match x {
                                Value::Prim(Prim::Int(i, _)) => scalars.push(*i),
                                Value::Prim(Prim::Bool(b)) => scalars.push(i64::from(*b)),
                                Value::Prim(_) => {
                                    return Err(op_error(
                                        op,
                                        "call_tir passes integer and boolean PrimValues only",
                                        span,
                                    ))
                                }
                                Value::Tensor(t) => tensors.push(t.clone()),
                                other => {
                                    let what = other.kind();
                                    return Err(op_error(
                                        op,
                                        format!("each argument must be a tensor, got {what}"),
                                        span,
                                    ));
                                }
                            }
                        }
                        (tensors, scalars)
                    }
                    other => (inputs(op, Some(other.unwrap_or(&Value::unit())), span)?, Vec::new()),
                };
                match args.get(2) {
                    Some(Value::Shape(s)) => scalars.extend(s.iter()),
                    Some(other) => {
                        return Err(op_error(op, format!("`tir_vars` must be a shape, got {}", other.kind()), span))
                    }
                    None => {}
                }
                let exe = self.exe;
                let (n, tir) = (ins.len(), &exe.tir[*f]);
                let overwritten = |i: usize| tir.overwrites(n + i);
                let (result, outs) = self.outputs(op, extra.outputs.as_ref(), slots, shapes, span, &overwritten)?;
                let all: Vec<Rc<Tensor>> = ins.into_iter().chain(outs).collect();
                exe.tir[*f].run(&all, &scalars, &mut self.fuel, span, &self.memory)?;
                Ok(result)
            }
            // OP-call_tir_inplace (E-15): each argument an in-place index names is
            // copied; the PrimFunc gets the arguments (those copies in their places),
            // the fresh outputs, then tir_vars; output i is the copy it wrote into.
            Notable::CallTirInplace => {
                let Some(Value::PrimFunc(f)) = args.first() else {
                    return Err(op_error(op, "the callee must be a TIR PrimFunc", span));
                };
                let (indices, tuple_out) = match &extra.inplace {
                    Some(Ok((ix, tuple))) => (ix.as_slice(), *tuple),
                    Some(Err(why)) => return Err(op_error(op, *why, span)),
                    None => return Err(op_error(op, "no in-place indices", span)),
                };
                let elements: Vec<Value> = match args.get(1) {
                    Some(Value::Tuple(vs)) => vs.to_vec(),
                    Some(v) => vec![v.clone()],
                    None => Vec::new(),
                };
                // For each element of `args`: its place among the tensors (None: a scalar).
                let mut tensors: Vec<Rc<Tensor>> = Vec::with_capacity(elements.len());
                let mut place: Vec<Option<usize>> = Vec::with_capacity(elements.len());
                let mut scalars: Vec<i64> = Vec::new();
                for v in &elements {
                    match v {
                        Value::Tensor(t) => {
                            place.push(Some(tensors.len()));
                            tensors.push(t.clone());
                        }
                        Value::Prim(Prim::Int(i, _)) => {
                            place.push(None);
                            scalars.push(*i);
                        }
                        Value::Prim(Prim::Bool(b)) => {
                            place.push(None);
                            scalars.push(i64::from(*b));
                        }
                        Value::Prim(_) => {
                            return Err(op_error(op, "call_tir passes integer and boolean PrimValues only", span))
                        }
                        other => {
                            let what = other.kind();
                            return Err(op_error(op, format!("each argument must be a tensor, got {what}"), span));
                        }
                    }
                }
                match args.get(2) {
                    Some(Value::Shape(s)) => scalars.extend(s.iter()),
                    Some(other) => {
                        return Err(op_error(op, format!("`tir_vars` must be a shape, got {}", other.kind()), span))
                    }
                    None => {}
                }
                let mut seen = vec![false; elements.len()];
                for &j in indices.iter().filter(|j| **j != -1) {
                    let Some(k) = usize::try_from(j).ok().filter(|k| *k < elements.len()) else {
                        return Err(op_error(op, format!("in-place index {j} is not an argument"), span));
                    };
                    if std::mem::replace(&mut seen[k], true) {
                        return Err(op_error(op, format!("in-place index {k} appears twice"), span));
                    }
                    let Some(p) = place[k] else {
                        return Err(op_error(op, format!("in-place argument {k} is not a tensor"), span));
                    };
                    let copy = tensors[p].deep_copy(&self.memory).map_err(|e| over_budget(e, span))?;
                    tensors[p] = Rc::new(copy);
                }
                let exe = self.exe;
                let (n, tir) = (tensors.len(), &exe.tir[*f]);
                let overwritten = |i: usize| tir.overwrites(n + i);
                let (_, fresh) = self.outputs(op, extra.outputs.as_ref(), slots, shapes, span, &overwritten)?;
                let mut fresh_iter = fresh.iter();
                let mut results: Vec<Value> = Vec::with_capacity(indices.len());
                for &j in indices {
                    let t = match usize::try_from(j).ok().and_then(|k| place[k]) {
                        Some(p) => tensors[p].clone(),
                        None => match fresh_iter.next() {
                            Some(t) => t.clone(),
                            None => return Err(op_error(op, "an output has no tensor", span)),
                        },
                    };
                    results.push(Value::Tensor(t));
                }
                let all: Vec<Rc<Tensor>> = tensors.into_iter().chain(fresh).collect();
                exe.tir[*f].run(&all, &scalars, &mut self.fuel, span, &self.memory)?;
                Ok(if tuple_out { Value::tuple(results) } else { results.swap_remove(0) })
            }
            // OP-call_dps_packed: as call_tir, with a packed function (which may also write its inputs).
            Notable::CallDpsPacked => {
                let Some(Value::PackedFunc(name)) = args.first() else {
                    return Err(op_error(op, "the callee must be a packed function", span));
                };
                let ins = inputs(op, Some(args.get(1).unwrap_or(&Value::unit())), span)?;
                let (result, outs) = self.outputs(op, extra.outputs.as_ref(), slots, shapes, span, &|_| false)?;
                let all: Vec<Value> = ins.into_iter().chain(outs).map(Value::Tensor).collect();
                let name = name.clone();
                self.call_packed(&name, &all, span)?;
                Ok(result)
            }
            Notable::CallPacked => {
                let name: Rc<str> = match args.first() {
                    Some(Value::PackedFunc(n)) | Some(Value::Str(n)) => n.clone(),
                    _ => return Err(op_error(op, "the callee must be a packed function", span)),
                };
                self.call_packed(&name, &args[1..], span)
            }
            // OP-shape_of: a new shape value.
            Notable::ShapeOf => match args.first() {
                Some(Value::Tensor(t)) => Ok(Value::Shape(t.shape().iter().map(|d| *d as i64).collect())),
                other => {
                    let what = other.map_or("nothing", |v| v.kind());
                    Err(op_error(op, format!("the argument must be a tensor, got {what}"), span))
                }
            },
            Notable::NullValue => Ok(Value::Null),
            // OP-grad.*: markers for the Gradient pass; the value passes through.
            Notable::Identity => args.first().cloned().ok_or_else(|| op_error(op, "takes one argument", span)),
            Notable::Memory => self.lowered(op, args, span),
            // OP-print: the arguments (with `format`, substituted for `{}`), one line.
            Notable::Print => {
                let texts: Vec<String> = args.iter().map(|a| print_value(self.exe, a)).collect();
                let line = match &extra.format {
                    Some(f) if !f.is_empty() => substitute(f, &texts),
                    _ => texts.join(" "),
                };
                self.printed.push(line);
                Ok(Value::unit())
            }
            // OP-assert_op: an error when the condition is false; the condition must be a
            // boolean scalar (checked here when the static rule could not).
            Notable::AssertOp => {
                let not_scalar =
                    |what: String| op_error(op, format!("the condition must be a boolean scalar, got {what}"), span);
                let holds = match args.first() {
                    Some(Value::Tensor(t)) if t.rank() == 0 && t.dtype() == DType::Bool => {
                        t.elements::<u8>().is_some_and(|b| b.first() == Some(&1))
                    }
                    Some(Value::Tensor(t)) => {
                        return Err(not_scalar(format!("a {} tensor of shape {:?}", t.dtype(), t.shape())))
                    }
                    Some(Value::Prim(Prim::Bool(b))) => *b,
                    Some(other) => return Err(not_scalar(other.kind().to_string())),
                    None => return Err(op_error(op, "takes a condition", span)),
                };
                if holds {
                    return Ok(Value::unit());
                }
                let texts: Vec<String> = args.iter().skip(1).map(|a| print_value(self.exe, a)).collect();
                let msg = match &extra.format {
                    Some(f) if !f.is_empty() => substitute(f, &texts),
                    _ => "assertion failed".to_string(),
                };
                Err(op_error(op, msg, span))
            }
            // OP-cast: a run-time MatchCast that binds nothing.
            Notable::Cast => {
                let (Some(v), Some(target)) = (args.first(), extra.cast.as_ref()) else {
                    return Err(op_error(op, "needs a value and a target StructInfo", span));
                };
                let mut scratch = shapes.to_vec();
                check::match_cast(target, v, slots, &mut scratch, span)?;
                Ok(v.clone())
            }
        }
    }
}
