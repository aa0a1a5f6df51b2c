//! Tensor storage: one contiguous, 64-byte-aligned allocation per tensor, and the
//! memory budget every allocation is checked against before it is made.

use crate::dtype::Element;
use std::cell::Cell;
use std::rc::Rc;

/// One cache line: the unit of allocation, so every buffer starts 64-byte aligned.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// The default budget of live tensor bytes of one run: 4 GiB.
pub const DEFAULT_MEMORY_BUDGET: usize = 4 << 30;

/// The tensor bytes a run may hold at once. Buffers give their bytes back when dropped.
#[derive(Debug)]
pub struct Memory {
    limit: usize,
    live: Cell<usize>,
    peak: Cell<usize>,
}

impl Memory {
    pub fn new(limit: usize) -> Rc<Memory> {
        Rc::new(Memory { limit, live: Cell::new(0), peak: Cell::new(0) })
    }

    /// Bytes held by live buffers.
    pub fn live(&self) -> usize {
        self.live.get()
    }

    /// The most bytes held at once.
    pub fn peak(&self) -> usize {
        self.peak.get()
    }

    pub fn limit(&self) -> usize {
        self.limit
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
        let refuse = OverBudget { requested: bytes, live: memory.live.get(), limit: memory.limit };
        let Some(bytes) = bytes else { return Err(refuse) };
        let total = memory.live.get().checked_add(bytes).filter(|t| *t <= memory.limit).ok_or(refuse)?;
        let lines = vec![Line([0; 64]); bytes.div_ceil(64)];
        memory.live.set(total);
        memory.peak.set(memory.peak.get().max(total));
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
}
