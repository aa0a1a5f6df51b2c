//! Splitting a kernel's output across threads: one rayon pool per thread count, built
//! the first time a kernel asks for it and kept for the process.

use rayon::ThreadPool;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The fewest output elements worth splitting: below this the hand-off to another
/// thread (a few microseconds) costs more than the work it saves.
pub const PARALLEL_MIN_ELEMENTS: usize = 1 << 17;

/// The pool of `threads` threads (`None` when the system will not start threads).
pub fn pool(threads: usize) -> Option<Arc<ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS.get_or_init(Default::default).lock().ok()?;
    if let Some(p) = pools.get(&threads) {
        return Some(p.clone());
    }
    let p = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(threads).build().ok()?);
    pools.insert(threads, p.clone());
    Some(p)
}

/// Runs `f(lo, part)` over `threads` contiguous parts of `out` (`lo` the index of the
/// part's first element) in parallel; with one thread (or no pool) over all of `out`
/// on this thread. Returns whether the work was split.
pub fn parallel_ranges<T: Send>(threads: usize, out: &mut [T], f: &(impl Fn(usize, &mut [T]) + Sync)) -> bool {
    let pool = if threads > 1 && out.len() >= 2 { pool(threads) } else { None };
    let Some(pool) = pool else {
        f(0, out);
        return false;
    };
    let part = out.len().div_ceil(threads);
    pool.scope(|s| {
        for (i, chunk) in out.chunks_mut(part).enumerate() {
            s.spawn(move |_| f(i * part, chunk));
        }
    });
    true
}
