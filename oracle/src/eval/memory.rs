//! LIMIT-memory in the oracle: the bytes of the tensors a run holds at once, checked
//! before each allocation against the run's memory budget (`Limits::memory`).
//!
//! Values hold `Rc`s, so they never leave the thread that made them: the count of live
//! bytes is the thread's. A tensor is counted from the moment it becomes a value
//! ([`Tracked::new`]) until it is dropped; allocation sites call [`reserve`] first, so
//! a tensor beyond the budget is refused before its storage exists.

use super::value::{ErrorKind, EvalResult, RuntimeError};
use spec_model::grammar::{DataType, NDArray};
use spec_model::Span;
use std::cell::{Cell, RefCell};
use std::ops::Deref;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static BUDGET: Cell<usize> = const { Cell::new(spec_model::limits::Budgets::DEFAULT.memory) };
}

/// Sets this thread's budget (a run's `Limits::memory`).
pub fn set_budget(bytes: usize) {
    BUDGET.set(bytes);
}

/// The bytes of `elements` elements of `dtype` as the oracle stores them (a bool takes
/// a byte), saturating.
pub fn bytes_of(elements: u64, dtype: DataType) -> usize {
    let size = if dtype.is_bool() { 1 } else { (u64::from(dtype.bits) * u64::from(dtype.lanes)).div_ceil(8).max(1) };
    usize::try_from(elements.saturating_mul(size)).unwrap_or(usize::MAX)
}

/// Refuses (MemoryExhausted, LIMIT-memory) a tensor of `elements` elements of `dtype`
/// that would take the live bytes over the budget; `what` names it in the message.
pub fn reserve(elements: u64, dtype: DataType, what: impl FnOnce() -> String, span: Span) -> EvalResult<()> {
    let bytes = bytes_of(elements, dtype);
    let (live, budget) = (LIVE.get(), BUDGET.get());
    if bytes > budget.saturating_sub(live) {
        let message = format!(
            "{}: {bytes} bytes more would exceed the memory budget of {budget} bytes ({live} live; {})",
            what(),
            spec_model::limits::raise_hint("LIMIT-memory")
        );
        return Err(RuntimeError::new(ErrorKind::MemoryExhausted, "LIMIT-memory", message, span));
    }
    Ok(())
}

/// A tensor's storage, counted in the live bytes while it exists.
#[derive(Debug)]
pub struct Tracked {
    cell: RefCell<NDArray>,
    bytes: usize,
}

impl Tracked {
    pub fn new(a: NDArray) -> Tracked {
        let bytes = bytes_of(a.data.len() as u64, a.dtype);
        LIVE.set(LIVE.get().saturating_add(bytes));
        Tracked { cell: RefCell::new(a), bytes }
    }
}

impl Deref for Tracked {
    type Target = RefCell<NDArray>;
    fn deref(&self) -> &RefCell<NDArray> {
        &self.cell
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        LIVE.set(LIVE.get().saturating_sub(self.bytes));
    }
}
