//! Row-major index arithmetic: strides, NumPy broadcasting of shapes, and [`Walk`],
//! the flat offsets of a strided view in row-major order of its indices (used for
//! broadcasting, transposition, slicing and gathering).

/// The element count of `shape` (`None` when it overflows u64; 0 whenever some
/// dimension is 0, however large the others).
pub(crate) fn element_count(shape: &[u64]) -> Option<u64> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1u64, |acc, d| acc.checked_mul(*d))
}

/// Row-major strides of `shape`.
pub(crate) fn strides(shape: &[u64]) -> Vec<i64> {
    let mut out = vec![0i64; shape.len()];
    let mut acc = 1i64;
    for (i, d) in shape.iter().enumerate().rev() {
        out[i] = acc;
        acc = acc.saturating_mul(*d as i64);
    }
    out
}

/// NumPy broadcasting: dimensions pair up from the right and must be equal or 1;
/// `None` when some pair is neither.
pub(crate) fn broadcast_shapes(shapes: &[&[u64]]) -> Option<Vec<u64>> {
    let n = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1u64; n];
    for s in shapes {
        let off = n - s.len();
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[off + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return None;
            }
        }
    }
    Some(out)
}

/// The offsets of an array of shape `from` broadcast to `to` (which it must
/// broadcast to), one per element of `to` in row-major order.
pub(crate) fn broadcast_walk(from: &[u64], to: &[u64]) -> Walk {
    let st = strides(from);
    let off = to.len() - from.len();
    let walk_strides = (0..to.len()).map(|i| if i < off || from[i - off] != to[i] { 0 } else { st[i - off] }).collect();
    Walk::new(0, to.to_vec(), walk_strides)
}

/// The flat offsets `base + Σ idx[d] * strides[d]` for every index of `dims`, in
/// row-major order. The arithmetic wraps: offsets are exact modulo 2^64, so every
/// offset is right when the true one is in range, whatever the intermediate values.
pub(crate) struct Walk {
    dims: Vec<u64>,
    strides: Vec<i64>,
    idx: Vec<u64>,
    cur: i64,
    left: u64,
}

impl Walk {
    pub fn new(base: i64, dims: Vec<u64>, strides: Vec<i64>) -> Walk {
        let left = element_count(&dims).unwrap_or(u64::MAX);
        Walk { idx: vec![0; dims.len()], dims, strides, cur: base, left }
    }
}

impl Iterator for Walk {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        let out = self.cur as usize;
        self.left -= 1;
        if self.left > 0 {
            for d in (0..self.dims.len()).rev() {
                self.idx[d] += 1;
                self.cur = self.cur.wrapping_add(self.strides[d]);
                if self.idx[d] < self.dims[d] {
                    break;
                }
                self.cur = self.cur.wrapping_sub(self.strides[d].wrapping_mul(self.dims[d] as i64));
                self.idx[d] = 0;
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast_shapes(&[&[2, 1, 3], &[4, 1]]), Some(vec![2, 4, 3]));
        assert_eq!(broadcast_shapes(&[&[], &[3]]), Some(vec![3]));
        assert_eq!(broadcast_shapes(&[&[0], &[1]]), Some(vec![0]));
        assert_eq!(broadcast_shapes(&[&[2], &[3]]), None);
        let w: Vec<usize> = broadcast_walk(&[2, 1], &[3, 2, 2]).collect();
        assert_eq!(w, vec![0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1]);
        let w: Vec<usize> = broadcast_walk(&[], &[]).collect();
        assert_eq!(w, vec![0]);
        assert_eq!(broadcast_walk(&[0], &[0]).count(), 0);
    }

    #[test]
    fn negative_strides() {
        let w: Vec<usize> = Walk::new(5, vec![2, 3], vec![-3, -1]).collect();
        assert_eq!(w, vec![5, 4, 3, 2, 1, 0]);
    }
}
