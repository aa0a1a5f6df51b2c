//! Counters of the optimizations that fired, process-wide, so that the differential
//! tester can show which of them its programs exercised (an optimization the fuzzer
//! never triggers is one it cannot find bugs in).

use std::sync::atomic::{AtomicU64, Ordering};

/// One optimization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    /// A fused group of elementwise operators ran as one pass.
    FusedGroups,
    /// Operators that ran inside a fused group.
    FusedOps,
    /// A result written into an operand's buffer (the operand died there).
    InPlace,
    /// A buffer taken from the pool of dead intermediates instead of allocated.
    PoolReuses,
    /// A kernel that split its work across threads.
    Threaded,
    /// A kernel call that ran a vectorized (AVX2 or AVX-512) loop.
    Vectorized,
    /// A matrix product through the GEMM/GEMV path.
    Gemm,
    /// A `call_tir` PrimFunc run as native code (Cranelift).
    TirNative,
    /// A `call_tir` PrimFunc run by the engine's TIR interpreter (a construct native
    /// code does not cover; the goal is none).
    TirInterpreted,
    /// A `call_tir` PrimFunc run by the interpreter because it was asked for
    /// ([`crate::TirBackend::Interpreter`]: the differential tester runs both backends).
    TirInterpretedOnRequest,
    /// A vectorized innermost TIR loop entered (its vector body ran at least once).
    TirVectorLoops,
    /// A `call_tir` output left unzeroed: the PrimFunc provably writes each element
    /// before reading it.
    TirOutputsUnzeroed,
}

const ALL: [Counter; 12] = [
    Counter::FusedGroups,
    Counter::FusedOps,
    Counter::InPlace,
    Counter::PoolReuses,
    Counter::Threaded,
    Counter::Vectorized,
    Counter::Gemm,
    Counter::TirNative,
    Counter::TirInterpreted,
    Counter::TirInterpretedOnRequest,
    Counter::TirVectorLoops,
    Counter::TirOutputsUnzeroed,
];

static COUNTS: [AtomicU64; 12] = [const { AtomicU64::new(0) }; 12];

impl Counter {
    pub fn name(self) -> &'static str {
        match self {
            Counter::FusedGroups => "fused groups",
            Counter::FusedOps => "fused operators",
            Counter::InPlace => "in-place results",
            Counter::PoolReuses => "pooled buffers reused",
            Counter::Threaded => "threaded kernels",
            Counter::Vectorized => "vectorized kernels",
            Counter::Gemm => "GEMM/GEMV calls",
            Counter::TirNative => "call_tir run as native code",
            Counter::TirInterpreted => "call_tir interpreted",
            Counter::TirInterpretedOnRequest => "call_tir interpreted on request",
            Counter::TirVectorLoops => "vectorized TIR loops",
            Counter::TirOutputsUnzeroed => "call_tir outputs unzeroed",
        }
    }
}

/// Counts one occurrence of `c`.
#[inline]
pub fn record(c: Counter) {
    add(c, 1);
}

#[inline]
pub fn add(c: Counter, n: u64) {
    COUNTS[c as usize].fetch_add(n, Ordering::Relaxed);
}

/// Every counter and its count since the process started.
pub fn snapshot() -> Vec<(Counter, u64)> {
    ALL.iter().map(|c| (*c, COUNTS[*c as usize].load(Ordering::Relaxed))).collect()
}
