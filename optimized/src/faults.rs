//! Planted bugs, for measuring the differential tester: with the `fault-injection`
//! feature, a test may switch one on and check that the tester notices
//! (`fuzz/tests/planted_bug.rs`). Without the feature nothing can switch them on and
//! [`active`] is a constant `false`.

/// The bugs that can be planted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A broadcast operand is read with stride 1 instead of 0 along a broadcast last
    /// dimension (an off-by-one in a broadcast stride).
    BroadcastStride,
}

#[cfg(feature = "fault-injection")]
mod switch {
    use super::Fault;
    use std::sync::atomic::{AtomicU32, Ordering};

    static ACTIVE: AtomicU32 = AtomicU32::new(0);

    fn bit(f: Fault) -> u32 {
        1 << (f as u32)
    }

    pub fn active(f: Fault) -> bool {
        ACTIVE.load(Ordering::Relaxed) & bit(f) != 0
    }

    /// Plants `f` (process-wide) until the guard is dropped.
    pub fn plant(f: Fault) -> Planted {
        ACTIVE.fetch_or(bit(f), Ordering::SeqCst);
        Planted(f)
    }

    pub struct Planted(Fault);

    impl Drop for Planted {
        fn drop(&mut self) {
            ACTIVE.fetch_and(!bit(self.0), Ordering::SeqCst);
        }
    }
}

#[cfg(feature = "fault-injection")]
pub use switch::{active, plant, Planted};

/// Whether a planted bug is on (never, without the `fault-injection` feature).
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub fn active(_: Fault) -> bool {
    false
}
