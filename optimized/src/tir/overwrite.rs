//! Which buffer parameters a PrimFunc overwrites entirely before reading them, so
//! that `call_tir` may hand it an output whose contents start unspecified instead of
//! zero-filled (C-9 says a fresh output holds zeros; a kernel that writes every element
//! before reading any cannot tell the difference). Zero-filling costs a full pass over
//! the output, as much as an elementwise kernel's own work.
//!
//! The proof is syntactic and conservative. A parameter's buffer `B` is overwritten
//! when, in the function body (through blocks without axes, run exactly once):
//!
//! * no statement before some statement `S` loads from `B`, and
//! * `S` is a perfect loop nest whose innermost statement stores to `B` at indices that
//!   are distinct loop variables (directly, or through block axes bound to them), each
//!   looping over `[0, d)` where `d` is the same constant or variable as the buffer's
//!   dimension; every other loop of the nest runs at least once (constant bounds);
//! * the stored value does not load from `B`, or (a reduction block with `T.init`)
//!   the init stores to `B` at the same indices without loading it, the body loads `B`
//!   only at those indices, and every reduce axis is bound to a loop variable starting
//!   where the axis's domain starts (so the first visit of each element runs the init).
//!
//! An error anywhere discards the outputs, so only successful runs matter: on those,
//! the nest runs every iteration, and every element is stored before it is read. The
//! variables the bounds mention are parameters' dimensions, never assigned in the body.

use super::lower::{assigned, walk, Blk, Dim, Ex, ExKind, Lowered, Slot, St, StKind};
use std::collections::HashSet;

/// For each tensor parameter (in order), whether every successful run writes each
/// element of its buffer before reading it.
pub fn overwritten(low: &Lowered) -> Box<[bool]> {
    let assigned = assigned(&low.body);
    let params: Vec<Slot> = low.tensors.iter().filter_map(|t| t.buffer.as_ref().map(|b| b.buf)).collect();
    low.tensors
        .iter()
        .map(|t| {
            let Some(b) = &t.buffer else { return false };
            // One parameter per buffer slot, never re-allocated in the body.
            let unique = params.iter().filter(|s| **s == b.buf).count() == 1 && !allocates(&low.body, b.buf);
            let dims: Option<Vec<Bound>> = b.dims.iter().map(|d| dim_bound(d, &assigned)).collect();
            unique && dims.is_some_and(|dims| covered_in(&low.body, b.buf, &dims, &assigned))
        })
        .collect()
}

/// A loop bound or buffer dimension the proof can compare: a constant, or a variable
/// nothing in the body assigns.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Bound {
    Const(i128),
    Var(Slot),
}

fn dim_bound(d: &Dim, assigned: &HashSet<Slot>) -> Option<Bound> {
    match d {
        Dim::Bind(s, _) => (!assigned.contains(s)).then_some(Bound::Var(*s)),
        Dim::Check(e) => bound(e, assigned),
    }
}

fn bound(e: &Ex, assigned: &HashSet<Slot>) -> Option<Bound> {
    match &e.kind {
        ExKind::Const(c) => c.int_value().map(Bound::Const),
        ExKind::Var(s) if !assigned.contains(s) => Some(Bound::Var(*s)),
        _ => None,
    }
}

/// Whether the statement sequence `ss` writes all of `buf` before reading any of it.
fn covered_in(ss: &[St], buf: Slot, dims: &[Bound], assigned: &HashSet<Slot>) -> bool {
    for s in ss {
        let covers = match &s.kind {
            StKind::Block(b) if b.axes.is_empty() && b.predicate.is_none() && b.init.is_none() => {
                covered_in(&b.body, buf, dims, assigned)
            }
            _ => nest_covers(s, buf, dims, assigned),
        };
        if covers {
            return true;
        }
        if stmt_reads(s, buf) {
            return false;
        }
    }
    false
}

/// A loop of the nest: its variable and `[begin, end)`.
struct Loop {
    var: Slot,
    begin: Option<Bound>,
    end: Option<Bound>,
}

/// Whether the perfect loop nest `s` stores to every element of `buf` before reading it.
fn nest_covers(mut s: &St, buf: Slot, dims: &[Bound], assigned: &HashSet<Slot>) -> bool {
    let mut loops = Vec::new();
    while let StKind::For { var, begin, end, body, .. } = &s.kind {
        if ex_reads(begin, buf) || ex_reads(end, buf) {
            return false;
        }
        loops.push(Loop { var: *var, begin: bound(begin, assigned), end: bound(end, assigned) });
        match &**body {
            [inner] => s = inner,
            _ => return false,
        }
    }
    let vars: HashSet<Slot> = loops.iter().map(|l| l.var).collect();
    if vars.len() != loops.len() || loops.iter().any(|l| assigned_elsewhere(l.var, s)) {
        return false;
    }
    match &s.kind {
        StKind::Store { buf: b, indices, value, .. } if *b == buf => {
            let ix: Option<Vec<Slot>> = indices.iter().map(var_of).collect();
            ix.is_some_and(|ix| covers(&loops, &ix, dims)) && !ex_reads(value, buf)
        }
        StKind::Block(blk) => block_covers(blk, &loops, buf, dims),
        _ => false,
    }
}

/// A loop variable assigned inside the nest's innermost statement (a block axis or a
/// `Let` of the same slot) would change the index it stands for.
fn assigned_elsewhere(var: Slot, inner: &St) -> bool {
    assigned(std::slice::from_ref(inner)).contains(&var)
}

/// The innermost block: axes bound to loop variables, one store to `buf` (with an
/// optional `T.init` of the same element, for a reduction).
fn block_covers(blk: &Blk, loops: &[Loop], buf: Slot, dims: &[Bound]) -> bool {
    if blk.predicate.is_some() {
        return false;
    }
    // Every axis is bound to a loop variable; indices name axes, so map them through.
    let mut axis_loop = Vec::new();
    for ax in blk.axes.iter() {
        let ExKind::Var(v) = ax.binding.kind else { return false };
        let Some(l) = loops.iter().find(|l| l.var == v) else { return false };
        if ex_reads(&ax.begin, buf) || ex_reads(&ax.end, buf) {
            return false;
        }
        axis_loop.push((ax.var, l, ax));
    }
    let through = |ix: &[Ex]| -> Option<Vec<Slot>> {
        ix.iter()
            .map(|e| {
                let v = var_of(e)?;
                axis_loop.iter().find(|(a, ..)| *a == v).map(|(_, l, _)| l.var)
            })
            .collect()
    };
    let [St { kind: StKind::Store { buf: b, indices, value, .. }, .. }] = &*blk.body else { return false };
    if *b != buf {
        return false;
    }
    let Some(ix) = through(indices) else { return false };
    if !covers(loops, &ix, dims) {
        return false;
    }
    match &blk.init {
        None => !ex_reads(value, buf),
        Some(init) => {
            let [St { kind: StKind::Store { buf: ib, indices: init_ix, value: init_value, .. }, .. }] = &**init else {
                return false;
            };
            // Reduce axes are bound to loops that do not index, starting where the axes'
            // domains start: each element's first visit has them all at their starts
            // and runs the init. The body reads only the element it stores.
            let starts = axis_loop.iter().filter(|(.., ax)| ax.reduce).all(|(_, l, ax)| {
                let start = bound(&ax.begin, &HashSet::new());
                !ix.contains(&l.var) && start.is_some() && start == l.begin
            });
            *ib == buf
                && same_indices(init_ix, indices)
                && starts
                && !ex_reads(init_value, buf)
                && reads_only_at(value, buf, indices)
        }
    }
}

/// Whether storing at loop variables `ix` over `loops` reaches every element of a
/// buffer of dimensions `dims`: index `k` is a distinct loop over `[0, dims[k])`, and
/// every loop not indexing runs at least once.
fn covers(loops: &[Loop], ix: &[Slot], dims: &[Bound]) -> bool {
    if ix.len() != dims.len() || ix.iter().collect::<HashSet<_>>().len() != ix.len() {
        return false;
    }
    loops.iter().all(|l| match ix.iter().position(|v| *v == l.var) {
        Some(k) => l.begin == Some(Bound::Const(0)) && l.end == Some(dims[k]),
        None => matches!((l.begin, l.end), (Some(Bound::Const(b)), Some(Bound::Const(e))) if e > b),
    }) && ix.iter().all(|v| loops.iter().any(|l| l.var == *v))
}

fn var_of(e: &Ex) -> Option<Slot> {
    match e.kind {
        ExKind::Var(v) => Some(v),
        _ => None,
    }
}

fn same_indices(a: &[Ex], b: &[Ex]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| var_of(x).is_some() && var_of(x) == var_of(y))
}

/// Whether `e` loads from `buf` only at exactly `at` (variable indices).
fn reads_only_at(e: &Ex, buf: Slot, at: &[Ex]) -> bool {
    let mut ok = true;
    visit(e, &mut |x| {
        if let ExKind::Load { buf: b, indices, .. } = &x.kind {
            if *b == buf && !same_indices(indices, at) {
                ok = false;
            }
        }
    });
    ok
}

fn ex_reads(e: &Ex, buf: Slot) -> bool {
    let mut reads = false;
    visit(e, &mut |x| reads |= matches!(x.kind, ExKind::Load { buf: b, .. } if b == buf));
    reads
}

/// Calls `f` on `e` and every subexpression.
fn visit(e: &Ex, f: &mut impl FnMut(&Ex)) {
    f(e);
    match &e.kind {
        ExKind::Const(_) | ExKind::Fail(_) | ExKind::Var(_) => {}
        ExKind::Bin(_, ab) | ExKind::Pow(ab) | ExKind::Bits(_, ab) => ab.iter().for_each(|x| visit(x, f)),
        ExKind::Not(a) | ExKind::Cast(_, a) | ExKind::Unary(_, a) => visit(a, f),
        ExKind::Select(abc) | ExKind::IfThenElse(abc, _) => abc.iter().for_each(|x| visit(x, f)),
        ExKind::Load { indices, .. } => indices.iter().for_each(|x| visit(x, f)),
    }
}

/// Every expression of `s` and the statements inside it.
fn stmt_exprs(s: &St, f: &mut dyn FnMut(&Ex)) {
    let all = |ss: &[St], f: &mut dyn FnMut(&Ex)| ss.iter().for_each(|s| stmt_exprs(s, f));
    match &s.kind {
        StKind::For { begin, end, body, .. } => {
            f(begin);
            f(end);
            all(body, f);
        }
        StKind::Store { indices, value, .. } => {
            indices.iter().for_each(&mut *f);
            f(value);
        }
        StKind::If { cond, then, other } => {
            f(cond);
            all(then, f);
            all(other, f);
        }
        StKind::Block(b) => {
            for ax in b.axes.iter() {
                f(&ax.begin);
                f(&ax.end);
                f(&ax.binding);
            }
            b.predicate.iter().for_each(&mut *f);
            b.init.iter().for_each(|i| all(i, f));
            all(&b.body, f);
        }
        StKind::Alloc { shape, .. } => shape.iter().for_each(f),
        StKind::Let { value, .. } | StKind::Eval(value) => f(value),
    }
}

fn stmt_reads(s: &St, buf: Slot) -> bool {
    let mut reads = false;
    stmt_exprs(s, &mut |e| reads |= ex_reads(e, buf));
    reads
}

fn allocates(ss: &[St], buf: Slot) -> bool {
    let mut found = false;
    walk(ss, &mut |s| found |= matches!(s.kind, StKind::Alloc { buf: b, .. } if b == buf));
    found
}

#[cfg(test)]
mod tests {
    use super::overwritten;
    use crate::tir::lower::lower;

    /// `overwritten` for the single PrimFunc of `src` (the import is added).
    fn verdict(src: &str) -> Vec<bool> {
        let text = format!("from tvm.script import tir as T\n\n\n{src}");
        let m = spec_model::text::parse_module(&text).unwrap_or_else(|e| panic!("{}", e.render("<test>", &text)));
        let f = m.prim_funcs().next().expect("a PrimFunc").1.clone();
        overwritten(&lower(&f)).to_vec()
    }

    /// A (4, 8) -> (4, 8) float32 function whose body is `body` (indented by 4).
    fn copy(body: &str) -> Vec<bool> {
        verdict(&format!(
            "@T.prim_func\ndef f(X: T.Buffer((4, 8), \"float32\"), Y: T.Buffer((4, 8), \"float32\")):\n{body}"
        ))
    }

    #[test]
    fn elementwise_nests_overwrite_their_output() {
        let grid = "    for i, j in T.grid(4, 8):\n        with T.block(\"b\"):\n            vi, vj = T.axis.remap(\"SS\", [i, j])\n            Y[vi, vj] = X[vi, vj] + T.float32(1)\n";
        assert_eq!(copy(grid), [false, true]);
        let plain = "    for i in range(4):\n        for j in range(8):\n            Y[i, j] = X[i, j]\n";
        assert_eq!(copy(plain), [false, true]);
        // Loops in the other order, and a loop that only repeats the work.
        let swapped = "    for r in range(2):\n        for j in range(8):\n            for i in range(4):\n                Y[i, j] = X[i, j]\n";
        assert_eq!(copy(swapped), [false, true]);
        // Statements before that do not read Y, a root block, reads of Y afterwards.
        let root = "    with T.block(\"root\"):\n        T_t = T.alloc_buffer((4, 8), \"float32\")\n        for i, j in T.grid(4, 8):\n            T_t[i, j] = X[i, j]\n        for i, j in T.grid(4, 8):\n            Y[i, j] = T_t[i, j]\n        for i, j in T.grid(4, 8):\n            Y[i, j] = Y[i, j] * T.float32(2)\n";
        assert_eq!(copy(root), [false, true]);
    }

    #[test]
    fn partial_or_read_first_outputs_are_zero_filled() {
        let cases = [
            // A loop missing its first or last element.
            "    for i, j in T.grid(4, 8):\n        if j > 0:\n            Y[i, j] = X[i, j]\n",
            "    for i in range(4):\n        for j in range(1, 8):\n            Y[i, j] = X[i, j]\n",
            "    for i in range(4):\n        for j in range(7):\n            Y[i, j] = X[i, j]\n",
            // The same loop for two dimensions: the diagonal only.
            "    for i in range(4):\n        for j in range(8):\n            Y[i, i] = X[i, j]\n",
            // A predicate.
            "    for i, j in T.grid(4, 8):\n        with T.block(\"b\"):\n            vi, vj = T.axis.remap(\"SS\", [i, j])\n            T.where(vj < 7)\n            Y[vi, vj] = X[vi, vj]\n",
            // Reading the output before (or while) writing it.
            "    for i, j in T.grid(4, 8):\n        Y[i, j] = Y[i, j] + X[i, j]\n",
            "    for i in range(4):\n        X[i, 0] = Y[i, 0]\n    for i, j in T.grid(4, 8):\n        Y[i, j] = X[i, j]\n",
            // A repeating loop that may run zero times.
            "    for r in range(0):\n        for i, j in T.grid(4, 8):\n            Y[i, j] = X[i, j]\n",
            // Indices that are not plain loop variables.
            "    for i, j in T.grid(4, 8):\n        Y[i, 7 - j] = X[i, j]\n",
        ];
        for body in cases {
            assert_eq!(copy(body), [false, false], "{body}");
        }
    }

    #[test]
    fn reductions_with_init_overwrite_their_output() {
        let sum = |k: &str, axis: &str| {
            verdict(&format!(
                "@T.prim_func\ndef f(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((4,), \"float32\")):\n    for i, k in T.grid(4, {k}):\n        with T.block(\"s\"):\n            vi = T.axis.spatial(4, i)\n            vk = T.axis.reduce({axis}, k)\n            with T.init():\n                B[vi] = T.float32(0)\n            B[vi] = B[vi] + A[vi, vk]\n"
            ))
        };
        assert_eq!(sum("8", "8"), [false, true]);
        // No reduction iteration: the init never runs, the output stays zero.
        assert_eq!(sum("0", "8"), [false, false]);
        // The loop starts where the axis's domain does not: the init never runs.
        assert_eq!(sum("8", "(-1, 8)"), [false, false]);
        let matmul = verdict(
            "@T.prim_func\ndef matmul(a: T.handle, B: T.Buffer((4, 4), \"float32\"), c: T.handle):\n    n = T.int64()\n    A = T.match_buffer(a, (n, 4), \"float32\")\n    C = T.match_buffer(c, (n, 4), \"float32\")\n    for i, j, k in T.grid(n, 4, 4):\n        with T.block(\"matmul\"):\n            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n            with T.init():\n                C[vi, vj] = 0.0\n            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n",
        );
        assert_eq!(matmul, [false, false, true]);
        // A reduce axis bound to the loop that indexes the output: only the first
        // element's visit runs the init.
        let odd = verdict(
            "@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"float32\")):\n    for i in range(4):\n        with T.block(\"s\"):\n            vi = T.axis.spatial(4, i)\n            vk = T.axis.reduce(4, i)\n            with T.init():\n                B[vi] = T.float32(0)\n            B[vi] = B[vi] + A[vk]\n",
        );
        assert_eq!(odd, [false, false]);
        // The body reading another element of the output than it stores.
        let shifted = verdict(
            "@T.prim_func\ndef f(A: T.Buffer((4, 8), \"float32\"), B: T.Buffer((4,), \"float32\")):\n    for i, k in T.grid(4, 8):\n        with T.block(\"s\"):\n            vi, vk = T.axis.remap(\"SR\", [i, k])\n            with T.init():\n                B[vi] = T.float32(0)\n            B[vi] = B[3 - vi] + A[vi, vk]\n",
        );
        assert_eq!(shifted, [false, false]);
    }

    #[test]
    fn symbolic_extents_must_match_the_dimension() {
        let f = |extent: &str| {
            verdict(&format!(
                "@T.prim_func\ndef f(a: T.handle, b: T.handle):\n    n = T.int64()\n    m = T.int64()\n    A = T.match_buffer(a, (n,), \"float32\")\n    B = T.match_buffer(b, (n, m), \"float32\")\n    for i, j in T.grid({extent}, m):\n        B[i, j] = A[i]\n"
            ))
        };
        assert_eq!(f("n"), [false, true]);
        assert_eq!(f("m"), [false, false]);
        assert_eq!(f("n - 1"), [false, false]);
    }

    #[test]
    fn scalars_are_overwritten_by_one_store() {
        let f = verdict(
            "@T.prim_func\ndef f(A: T.Buffer((), \"float32\"), B: T.Buffer((), \"float32\")):\n    B[()] = A[()]\n",
        );
        assert_eq!(f, [false, true]);
    }
}
