//! Fusion: runs of consecutive elementwise float operator calls whose intermediate
//! results are used once, by a later call of the run, become one [`Instr::Fused`]
//! (`kernels/fused.rs` runs it in one pass over memory). A run may start with a
//! `matmul`, whose result the rest then transforms as its epilogue.
//!
//! Only consecutive calls fuse, so nothing observable (a print, a packed call, a
//! check) moves relative to them; no jump lands inside a group; a group's operands
//! and calls are the calls' own, so running it member by member is the unfused
//! program.

use super::live::{pinned, reads, writes};
use super::plan::{FuncPlan, Instr, Operand, Slot};
use crate::dtype::DType;
use crate::kernels::fused::{FusedGroup, Member, Src};
use spec_model::ops::Op;
use std::collections::{HashMap, HashSet};

/// What lowering knew of a call that may fuse: its operator and the float dtype all
/// its operands statically have.
#[derive(Clone, Copy, Debug)]
pub struct Fusible {
    pub op: Op,
    pub dtype: DType,
}

/// Replaces the fusible runs of `plan.code` by fused groups; `fusible` is keyed by
/// instruction index.
pub fn fuse(plan: &mut FuncPlan, fusible: &HashMap<usize, Fusible>) {
    if fusible.len() < 2 {
        return;
    }
    let groups = find_groups(plan, fusible);
    if groups.is_empty() {
        return;
    }
    let old = std::mem::take(&mut plan.code);
    let n = old.len();
    let mut new_index = vec![0usize; n + 1];
    let mut code = Vec::with_capacity(n);
    let mut groups = groups.into_iter().peekable();
    let mut pending: Vec<Instr> = Vec::new();
    for (i, instr) in old.into_iter().enumerate() {
        // A group's instructions all map to the fused one, pushed when its last arrives.
        new_index[i] = code.len();
        match groups.peek() {
            Some(&(s, e)) if (s..=e).contains(&i) => {
                pending.push(instr);
                if i == e {
                    groups.next();
                    let dtype = fusible.get(&s).map_or(DType::F32, |f| f.dtype);
                    code.push(group_instr(std::mem::take(&mut pending), dtype));
                }
            }
            _ => code.push(instr),
        }
    }
    new_index[n] = code.len();
    for instr in &mut code {
        if let Instr::Jump { target } | Instr::JumpUnless { target, .. } = instr {
            *target = new_index[*target];
        }
    }
    plan.code = code;
}

/// The `(first, last)` instruction ranges to fuse, in order.
fn find_groups(plan: &FuncPlan, fusible: &HashMap<usize, Fusible>) -> Vec<(usize, usize)> {
    let code = &plan.code;
    let mut read_count: HashMap<Slot, usize> = HashMap::new();
    let mut write_count: HashMap<Slot, usize> = HashMap::new();
    let mut targets = HashSet::new();
    let mut buf = Vec::new();
    for i in code {
        buf.clear();
        reads(i, &mut buf);
        for s in &buf {
            *read_count.entry(*s).or_default() += 1;
        }
        if let Some(w) = writes(i) {
            *write_count.entry(w).or_default() += 1;
        }
        if let Instr::Jump { target } | Instr::JumpUnless { target, .. } = i {
            targets.insert(*target);
        }
    }
    let pinned = pinned(plan);
    let internal = |s: Slot| read_count.get(&s) == Some(&1) && write_count.get(&s) == Some(&1) && !pinned.contains(&s);
    let mut groups = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let Some(first) = fusible.get(&i) else {
            i += 1;
            continue;
        };
        // Grow a group from `i` while calls fuse. It may end at a call when every
        // earlier result in it has been consumed inside it (that call's result is then
        // the group's); it cannot go past a call whose result is used outside it.
        let mut open: HashSet<Slot> = HashSet::new();
        let mut end = None;
        for (k, instr) in code.iter().enumerate().skip(i) {
            let Some(f) = fusible.get(&k) else { break };
            let Instr::Kernel { dst, args, .. } = instr else { break };
            let joins = k == i || (f.dtype == first.dtype && f.op != Op::Matmul && !targets.contains(&k));
            if !joins || args.iter().any(Option::is_none) {
                break;
            }
            for a in args.iter().flatten() {
                open.remove(a);
            }
            if open.is_empty() {
                end = Some(k);
            }
            if !internal(*dst) {
                break;
            }
            open.insert(*dst);
        }
        match end {
            Some(e) if e > i => {
                groups.push((i, e));
                i = e + 1;
            }
            _ => i += 1,
        }
    }
    groups
}

/// The fused instruction of `members` (consecutive `Kernel` instructions).
fn group_instr(members: Vec<Instr>, dtype: DType) -> Instr {
    let mut dsts: Vec<Slot> = Vec::new();
    let mut args: Vec<Operand> = Vec::new();
    let mut out = Vec::with_capacity(members.len());
    let mut span = spec_model::Span::SYNTHETIC;
    let mut kernels = Vec::new();
    for m in members {
        let Instr::Kernel { dst, op, kernel, args: operands, span: s } = m else {
            // Only Kernel instructions are grouped (find_groups).
            continue;
        };
        let srcs = operands
            .iter()
            .map(|o| match o.and_then(|s| dsts.iter().position(|d| *d == s)) {
                Some(j) => Src::Member(j),
                None => {
                    args.push(*o);
                    Src::Arg(args.len() - 1)
                }
            })
            .collect();
        dsts.push(dst);
        span = s;
        out.push(Member { op, kernel, args: srcs, span: s });
        kernels.push(dst);
    }
    let dst = kernels.last().copied().unwrap_or(0);
    match FusedGroup::new(out, dtype) {
        Some(group) => Instr::Fused { dst, group: Box::new(group), args: args.into(), span },
        None => Instr::Crash { rule: "SEM-9.1", message: "a fused group is not a tree (an engine bug)".into(), span },
    }
}
