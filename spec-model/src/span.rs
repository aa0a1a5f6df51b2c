//! Source spans. Every AST node keeps the byte range of the text it came from.

/// A half-open byte range `lo..hi` into the source text a node was parsed from.
///
/// Spans are metadata, not meaning: two nodes that differ only in their spans are
/// the same node, so `Span`'s `PartialEq` always answers `true`. Code that needs the
/// positions compares `lo` and `hi` directly.
#[derive(Clone, Copy, Debug, Default, Eq)]
pub struct Span {
    pub lo: u32,
    pub hi: u32,
}

impl PartialEq for Span {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl std::hash::Hash for Span {
    fn hash<H: std::hash::Hasher>(&self, _state: &mut H) {}
}

impl Span {
    /// The span of a node that no source text produced (built by a pass or a test).
    pub const SYNTHETIC: Span = Span { lo: u32::MAX, hi: u32::MAX };

    pub fn new(lo: usize, hi: usize) -> Span {
        Span { lo: clamp(lo), hi: clamp(hi.max(lo)) }
    }

    pub fn is_synthetic(&self) -> bool {
        self.lo == u32::MAX
    }

    /// The smallest span covering both (a synthetic span yields to a real one).
    pub fn to(self, other: Span) -> Span {
        if self.is_synthetic() {
            return other;
        }
        if other.is_synthetic() {
            return self;
        }
        Span { lo: self.lo.min(other.lo), hi: self.hi.max(other.hi) }
    }

    pub fn range(&self) -> std::ops::Range<usize> {
        if self.is_synthetic() {
            0..0
        } else {
            self.lo as usize..self.hi as usize
        }
    }
}

fn clamp(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX - 1).min(u32::MAX - 1)
}
