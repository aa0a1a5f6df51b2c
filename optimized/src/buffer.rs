//! Tensor storage: one contiguous, 64-byte-aligned allocation per tensor, and the
//! memory budget every allocation is checked against before it is made.

use crate::dtype::Element;
use crate::stats::{self, Counter};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// One cache line: the unit of allocation, so every buffer starts 64-byte aligned.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// The default budget of live tensor bytes of one run (LIMIT-memory, shared with the
/// oracle: `spec_model::limits::Budgets::memory`).
pub const DEFAULT_MEMORY_BUDGET: usize = spec_model::limits::Budgets::DEFAULT.memory;

/// The most bytes of dead buffers a [`Pool`] keeps for reuse.
pub const POOL_CAPACITY: usize = 1 << 30;

/// Dead tensors' allocations, kept for the next tensor of the same size class: a
/// fresh allocation of a large buffer costs a page fault per 4 KiB on first touch,
/// a reused one none. Size classes are 2^k and 1.5 * 2^k lines, so a buffer is at
/// most half again as large as asked; the budget counts the bytes asked for.
#[derive(Default)]
pub struct Pool {
    /// Free allocations by [`bucket`] of their size class.
    free: RefCell<Vec<Vec<Vec<Line>>>>,
    held: Cell<usize>,
}

/// The size class (in lines) of a buffer of `lines` lines.
fn size_class(lines: usize) -> usize {
    if lines <= 2 {
        return lines;
    }
    let p = usize::BITS - 1 - lines.leading_zeros();
    let lower = 1usize << p;
    if lines == lower {
        lower
    } else if lines <= lower + lower / 2 {
        lower + lower / 2
    } else {
        lower.saturating_mul(2)
    }
}

/// The index of size class `class` (a small integer: classes are 1, 2, then 2^k and
/// 1.5 * 2^k), so that the pool is an array, not a hash map (small tensors are
/// allocated once per operator call).
fn bucket(class: usize) -> usize {
    if class <= 2 {
        return class;
    }
    let p = (usize::BITS - 1 - class.leading_zeros()) as usize;
    3 + 2 * p + usize::from(class != 1 << p)
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pool({} bytes held)", self.held.get())
    }
}

impl Pool {
    pub fn new() -> Rc<Pool> {
        Rc::new(Pool::default())
    }

    /// Bytes of dead buffers held for reuse.
    pub fn held(&self) -> usize {
        self.held.get()
    }

    fn take(&self, class: usize) -> Option<Vec<Line>> {
        let v = self.free.borrow_mut().get_mut(bucket(class))?.pop()?;
        self.held.set(self.held.get() - class * 64);
        stats::record(Counter::PoolReuses);
        Some(v)
    }

    fn put(&self, v: Vec<Line>) {
        let bytes = v.capacity() * 64;
        if bytes == 0 || v.capacity() != size_class(v.capacity()) || self.held.get() + bytes > POOL_CAPACITY {
            return;
        }
        self.held.set(self.held.get() + bytes);
        let mut free = self.free.borrow_mut();
        let b = bucket(v.capacity());
        if free.len() <= b {
            free.resize_with(b + 1, Vec::new);
        }
        free[b].push(v);
    }
}

/// The tensor bytes a run may hold at once. Buffers give their bytes back when dropped
/// (and their allocation to the pool).
#[derive(Debug)]
pub struct Memory {
    limit: usize,
    live: Cell<usize>,
    peak: Cell<usize>,
    /// The bytes of the largest single buffer allocated.
    largest: Cell<usize>,
    pool: Rc<Pool>,
    /// Fill every buffer allocated for overwriting with [`SCRIBBLE`] bytes.
    scribble: Cell<bool>,
}

/// The byte a scribbled buffer starts with: every element it makes is a NaN (every
/// float dtype), -1 or the maximum (integers), or neither `true` nor `false` (bool), so
/// an element a kernel promised to write but did not never passes for a zero.
pub const SCRIBBLE: u8 = 0xFF;

impl Memory {
    pub fn new(limit: usize) -> Rc<Memory> {
        Memory::with_pool(limit, Pool::new())
    }

    /// A budget whose dead buffers go to (and come from) `pool`, which may outlive it.
    pub fn with_pool(limit: usize, pool: Rc<Pool>) -> Rc<Memory> {
        Rc::new(Memory {
            limit,
            live: Cell::new(0),
            peak: Cell::new(0),
            largest: Cell::new(0),
            pool,
            scribble: Cell::new(false),
        })
    }

    /// From now on, fill each buffer allocated for overwriting with [`SCRIBBLE`] (the
    /// differential tester's mode: it costs a pass over each such buffer).
    pub fn set_scribble(&self, on: bool) {
        self.scribble.set(on);
    }

    /// Bytes held by live buffers.
    pub fn live(&self) -> usize {
        self.live.get()
    }

    /// The most bytes held at once.
    pub fn peak(&self) -> usize {
        self.peak.get()
    }

    /// The bytes of the largest single tensor buffer allocated (bounds the length of any
    /// sum a kernel computed, which is what a reassociated sum's error grows with).
    pub fn largest(&self) -> usize {
        self.largest.get()
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Counts `bytes` held outside a [`Buffer`] (a native scratch buffer on the stack)
    /// until the reservation is dropped, if the budget allows them.
    pub fn reserve(self: &Rc<Self>, bytes: usize) -> Result<Reservation, OverBudget> {
        let refuse = OverBudget { requested: Some(bytes), live: self.live.get(), limit: self.limit };
        let total = self.live.get().checked_add(bytes).filter(|t| *t <= self.limit).ok_or(refuse)?;
        self.live.set(total);
        self.peak.set(self.peak.get().max(total));
        Ok(Reservation { bytes, memory: self.clone() })
    }
}

/// Bytes counted against a [`Memory`] while it lives.
pub struct Reservation {
    bytes: usize,
    memory: Rc<Memory>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.memory.live.set(self.memory.live.get().saturating_sub(self.bytes));
    }
}

/// An allocation the budget refused: how many bytes were asked for (`None`: more than
/// `usize` holds) and how many were live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverBudget {
    pub requested: Option<usize>,
    pub live: usize,
    pub limit: usize,
}

/// A tensor's bytes: zero-initialized, 64-byte aligned, counted against a [`Memory`].
pub struct Buffer {
    lines: Vec<Line>,
    bytes: usize,
    memory: Rc<Memory>,
}

impl Buffer {
    /// `bytes` zeroed bytes, if the budget allows them.
    pub fn zeroed(bytes: Option<usize>, memory: &Rc<Memory>) -> Result<Buffer, OverBudget> {
        Buffer::allocate(bytes, memory, true)
    }

    /// `bytes` bytes whose contents are unspecified (a dead tensor's, or zeros), for
    /// a kernel that writes every element.
    pub fn for_overwrite(bytes: Option<usize>, memory: &Rc<Memory>) -> Result<Buffer, OverBudget> {
        Buffer::allocate(bytes, memory, false)
    }

    fn allocate(bytes: Option<usize>, memory: &Rc<Memory>, zero: bool) -> Result<Buffer, OverBudget> {
        let refuse = OverBudget { requested: bytes, live: memory.live.get(), limit: memory.limit };
        let Some(bytes) = bytes else { return Err(refuse) };
        let total = memory.live.get().checked_add(bytes).filter(|t| *t <= memory.limit).ok_or(refuse)?;
        let n = bytes.div_ceil(64);
        let class = size_class(n);
        let lines = match memory.pool.take(class) {
            Some(mut v) => {
                if zero {
                    v.clear();
                }
                v.resize(n, Line([0; 64]));
                v.truncate(n);
                v
            }
            None => {
                let mut v = Vec::new();
                // The budget was checked above; an allocation the system refuses aborts,
                // as every Rust allocation does.
                v.reserve_exact(class);
                v.resize(n, Line([0; 64]));
                v
            }
        };
        let mut lines = lines;
        if !zero && memory.scribble.get() {
            lines.fill(Line([SCRIBBLE; 64]));
        }
        memory.live.set(total);
        memory.peak.set(memory.peak.get().max(total));
        memory.largest.set(memory.largest.get().max(bytes));
        Ok(Buffer { lines, bytes, memory: memory.clone() })
    }

    pub fn len_bytes(&self) -> usize {
        self.bytes
    }

    /// The first `n` elements as `T`s (`n * size_of::<T>()` must not exceed the buffer).
    pub fn as_slice<T: Element>(&self, n: usize) -> &[T] {
        &bytemuck::cast_slice::<Line, T>(&self.lines)[..n]
    }

    pub fn as_mut_slice<T: Element>(&mut self, n: usize) -> &mut [T] {
        &mut bytemuck::cast_slice_mut::<Line, T>(&mut self.lines)[..n]
    }

    /// The bytes themselves.
    pub fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<Line, u8>(&self.lines)[..self.bytes]
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let n = self.bytes;
        &mut bytemuck::cast_slice_mut::<Line, u8>(&mut self.lines)[..n]
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        self.memory.live.set(self.memory.live.get().saturating_sub(self.bytes));
        self.memory.pool.put(std::mem::take(&mut self.lines));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_counted() {
        let mem = Memory::new(1000);
        let mut b = Buffer::zeroed(Some(12), &mem).unwrap();
        assert_eq!(b.as_slice::<f32>(3).as_ptr() as usize % 64, 0);
        b.as_mut_slice::<f32>(3)[2] = 1.5;
        assert_eq!(b.as_slice::<f32>(3), &[0.0, 0.0, 1.5]);
        assert_eq!(mem.live(), 12);
        assert!(Buffer::zeroed(Some(989), &mem).is_err());
        assert!(Buffer::zeroed(None, &mem).is_err());
        drop(b);
        assert_eq!((mem.live(), mem.peak()), (0, 12));
        assert!(Buffer::zeroed(Some(1000), &mem).is_ok());
    }

    #[test]
    fn size_classes_waste_at_most_half() {
        let mut buckets = std::collections::HashMap::new();
        for n in 1..5000 {
            let c = size_class(n);
            assert_eq!(*buckets.entry(bucket(c)).or_insert(c), c, "one bucket per class");
        }
        for n in 1..5000 {
            let c = size_class(n);
            assert!(c >= n && c * 2 <= n * 3 + 2, "{n} -> {c}");
            assert_eq!(size_class(c), c, "a class is its own class");
        }
    }

    #[test]
    fn dead_buffers_are_reused_zeroed_when_asked() {
        let pool = Pool::new();
        let mem = Memory::with_pool(1 << 20, pool.clone());
        let mut b = Buffer::zeroed(Some(1000), &mem).unwrap();
        b.as_mut_slice::<u8>(1000).fill(7);
        let p = b.bytes().as_ptr();
        drop(b);
        assert_eq!(pool.held(), size_class(16) * 64);
        let b = Buffer::zeroed(Some(960), &mem).unwrap();
        assert_eq!(b.bytes().as_ptr(), p, "the same class reuses the allocation");
        assert!(b.bytes().iter().all(|x| *x == 0), "zeroed means zeroed, reused or not");
        drop(b);
        let b = Buffer::for_overwrite(Some(1000), &mem).unwrap();
        assert_eq!((b.len_bytes(), b.bytes().len()), (1000, 1000));
        assert_eq!(mem.live(), 1000);
    }
}
