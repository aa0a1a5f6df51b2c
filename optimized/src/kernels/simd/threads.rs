//! Splitting a large kernel's output across threads. One rayon pool per thread count,
//! built when first needed and kept for the process (building a pool spawns threads,
//! far costlier than the kernels it serves).
//!
//! Tensors are `Rc`/`RefCell` and stay on the calling thread: a kernel borrows their
//! typed slices first and hands the threads disjoint parts of them.

use rayon::{ThreadPool, ThreadPoolBuilder};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

/// The least output element count an elementwise, broadcasting, `where` or `astype`
/// kernel splits across threads: 2^18. Measured with `examples/simd_bench.rs` (float32
/// `add`, AVX-512, on a 2-core machine): 1 thread vs 2 took 14 vs 35 µs at 2^16
/// elements, 31 vs 52 µs at 2^17, 125 vs 130 µs at 2^18, 296 vs 255 µs at 2^19 and 664
/// vs 492 µs at 2^20 (waking the workers costs some 20 µs; below 2^18 it is not repaid).
pub const PARALLEL_MIN_ELEMENTS: usize = 1 << 18;

/// The process's pool of `threads` workers (`None` if the threads cannot be spawned).
pub fn pool(threads: usize) -> Option<Arc<ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<ThreadPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut pools = pools.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&threads) {
        return Some(p.clone());
    }
    let p = Arc::new(
        ThreadPoolBuilder::new().num_threads(threads).thread_name(|i| format!("relax-kernel-{i}")).build().ok()?,
    );
    pools.insert(threads, p.clone());
    Some(p)
}

/// The bounds of `parts` contiguous, nearly equal parts of `0..len`.
fn bounds(len: usize, parts: usize) -> impl Iterator<Item = Range<usize>> {
    (0..parts).map(move |i| len / parts * i + (len % parts).min(i)..len / parts * (i + 1) + (len % parts).min(i + 1))
}

/// How many parts `len` elements make on `threads` threads with at least `min_chunk`
/// elements each.
fn parts(threads: usize, len: usize, min_chunk: usize) -> usize {
    threads.min(len / min_chunk.max(1)).max(1)
}

/// Runs `f(start, part)` on `threads` contiguous parts of `out` (each part starting at
/// element `start`; fewer parts when one would have fewer than `min_chunk` elements),
/// in parallel; `true` when it split (else `f(0, out)` ran on this thread).
pub fn parallel_chunks_mut<T: Send>(
    threads: usize,
    out: &mut [T],
    min_chunk: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) -> bool {
    let n = parts(threads, out.len(), min_chunk);
    let Some(pool) = (n > 1).then(|| pool(n)).flatten() else {
        f(0, out);
        return false;
    };
    let f = &f;
    let len = out.len();
    pool.scope(|s| {
        let mut rest = out;
        for r in bounds(len, n) {
            let (part, tail) = rest.split_at_mut(r.len());
            rest = tail;
            s.spawn(move |_| f(r.start, part));
        }
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_the_range_in_order() {
        for (len, n) in [(10, 3), (7, 7), (1 << 20, 2), (5, 1)] {
            let b: Vec<Range<usize>> = bounds(len, n).collect();
            assert_eq!(b.len(), n);
            assert_eq!(b[0].start, 0);
            assert_eq!(b[n - 1].end, len);
            assert!(b.windows(2).all(|w| w[0].end == w[1].start && w[0].len().abs_diff(w[1].len()) <= 1));
        }
        assert_eq!(parts(4, 100, 30), 3);
        assert_eq!(parts(4, 10, 30), 1);
    }

    #[test]
    fn every_element_is_visited_once() {
        let mut out = vec![0u32; 1000];
        assert!(parallel_chunks_mut(3, &mut out, 10, |start, part| {
            for (i, o) in part.iter_mut().enumerate() {
                *o += (start + i) as u32;
            }
        }));
        assert!(out.iter().enumerate().all(|(i, &o)| o == i as u32));
        assert!(Arc::ptr_eq(&pool(2).unwrap(), &pool(2).unwrap()), "pools are cached");
    }
}
