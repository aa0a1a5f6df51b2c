//! Liveness over a function's plan: after each instruction, the slots whose values no
//! later instruction reads are cleared, so a dead intermediate's buffer goes back to the
//! pool at once (not when the frame ends), and an operator whose operand dies at its
//! call holds the only reference to it and may write its result there (in place).
//!
//! Control flow in a plan only jumps forward (an `If` is a branch; calls push frames),
//! so one backward pass suffices, with the live set remembered at each jump target.

use super::plan::{Check, FuncPlan, Instr, NotableInfo, OutShape, Outputs, Slot, TensorShape};
use std::collections::{BTreeSet, HashMap};

/// The slots each instruction reads, in no particular order.
pub fn reads(i: &Instr, out: &mut Vec<Slot>) {
    let mut put = |o: &Option<Slot>| out.extend(o.iter().copied());
    match i {
        Instr::Tuple { fields: ops, .. }
        | Instr::Kernel { args: ops, .. }
        | Instr::Notable { args: ops, .. }
        | Instr::Closure { captures: ops, .. } => ops.iter().for_each(put),
        Instr::Fused { args: ops, .. } => ops.iter().for_each(put),
        Instr::Call { callee, args, .. } => {
            put(callee);
            args.iter().for_each(put);
        }
        Instr::GetItem { tuple: o, .. }
        | Instr::JumpUnless { cond: o, .. }
        | Instr::Move { src: o, .. }
        | Instr::MatchCast { src: o, .. }
        | Instr::Return { src: o, .. } => put(o),
        Instr::Const { .. }
        | Instr::Global { .. }
        | Instr::Shape { .. }
        | Instr::Prim { .. }
        | Instr::Str { .. }
        | Instr::DataType { .. }
        | Instr::Extern { .. }
        | Instr::Unregistered { .. }
        | Instr::Jump { .. }
        | Instr::Unbind { .. }
        | Instr::Crash { .. } => {}
    }
}

/// The slot an instruction writes.
pub fn writes(i: &Instr) -> Option<Slot> {
    match i {
        Instr::Const { dst, .. }
        | Instr::Global { dst, .. }
        | Instr::Tuple { dst, .. }
        | Instr::GetItem { dst, .. }
        | Instr::Shape { dst, .. }
        | Instr::Prim { dst, .. }
        | Instr::Str { dst, .. }
        | Instr::DataType { dst, .. }
        | Instr::Extern { dst, .. }
        | Instr::Closure { dst, .. }
        | Instr::Kernel { dst, .. }
        | Instr::Fused { dst, .. }
        | Instr::Notable { dst, .. }
        | Instr::Call { dst, .. }
        | Instr::Move { dst, .. } => Some(*dst),
        Instr::Unregistered { .. }
        | Instr::JumpUnless { .. }
        | Instr::Jump { .. }
        | Instr::MatchCast { .. }
        | Instr::Unbind { .. }
        | Instr::Return { .. }
        | Instr::Crash { .. } => None,
    }
}

/// Slots a check reads (a tensor annotation whose shape is a variable).
fn check_slots(c: &Check, out: &mut Vec<Slot>) {
    match c {
        Check::Tensor { shape: TensorShape::Var { slot: Some(s), .. }, .. } => out.push(*s),
        Check::Tuple { fields, .. } => fields.iter().for_each(|f| check_slots(f, out)),
        _ => {}
    }
}

fn notable_slots(extra: &NotableInfo, out: &mut Vec<Slot>) {
    if let Some(c) = &extra.cast {
        check_slots(c, out);
    }
    let mut shape = |o: &OutShape| {
        if let OutShape::Var(Some(s)) = o {
            out.push(*s);
        }
    };
    match &extra.outputs {
        Some(Outputs::One(t)) => shape(&t.shape),
        Some(Outputs::Tuple(ts)) => ts.iter().for_each(|t| shape(&t.shape)),
        _ => {}
    }
}

/// The slots that are never cleared: those the function's checks read through the
/// frame (a shape annotation naming a variable), which liveness does not follow.
pub fn pinned(plan: &FuncPlan) -> BTreeSet<Slot> {
    let mut out = Vec::new();
    for p in &plan.params {
        p.check.iter().for_each(|c| check_slots(c, &mut out));
    }
    if let Some((c, _)) = &plan.ret {
        check_slots(c, &mut out);
    }
    for i in &plan.code {
        match i {
            Instr::MatchCast { check, .. } => check_slots(check, &mut out),
            Instr::Notable { extra, .. } => notable_slots(extra, &mut out),
            _ => {}
        }
    }
    out.into_iter().collect()
}

/// For each instruction, the slots to clear once it has run: the ones it reads or
/// writes that no instruction reachable after it reads.
pub fn dying(plan: &FuncPlan) -> Vec<Box<[Slot]>> {
    let pinned = pinned(plan);
    let code = &plan.code;
    let mut at_target: HashMap<usize, BTreeSet<Slot>> = HashMap::new();
    for i in code {
        if let Instr::Jump { target } | Instr::JumpUnless { target, .. } = i {
            at_target.insert(*target, BTreeSet::new());
        }
    }
    let mut live: BTreeSet<Slot> = BTreeSet::new();
    let mut out = vec![Box::<[Slot]>::default(); code.len()];
    let mut buf = Vec::new();
    for pc in (0..code.len()).rev() {
        let i = &code[pc];
        // The live set after `pc`: its successors' live-in sets.
        match i {
            Instr::Jump { target } => live = at_target.get(target).cloned().unwrap_or_default(),
            Instr::JumpUnless { target, .. } => live.extend(at_target.get(target).into_iter().flatten().copied()),
            Instr::Return { .. } | Instr::Crash { .. } | Instr::Unregistered { .. } => live.clear(),
            _ => {}
        }
        buf.clear();
        reads(i, &mut buf);
        let mut dies: Vec<Slot> = buf.iter().copied().chain(writes(i)).filter(|s| !live.contains(s)).collect();
        dies.retain(|s| !pinned.contains(s));
        dies.sort_unstable();
        dies.dedup();
        out[pc] = dies.into();
        // The live set before `pc`.
        if let Some(w) = writes(i) {
            live.remove(&w);
        }
        live.extend(buf.iter().copied());
        if let Some(set) = at_target.get_mut(&pc) {
            *set = live.clone();
        }
    }
    out
}
