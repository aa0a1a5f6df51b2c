//! Row-major layouts: strides, NumPy broadcasting, and walking an output shape one
//! innermost row at a time with the matching offsets into each input (the loop every
//! elementwise, broadcasting and copying kernel is built on).

use crate::faults::{self, Fault};

/// Row-major element strides of `shape` (the last dimension has stride 1).
pub fn strides(shape: &[u64]) -> Vec<usize> {
    let mut out = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        out[i] = out[i + 1].saturating_mul(shape[i + 1] as usize);
    }
    out
}

/// NumPy broadcasting of two shapes, aligned at the right: each pair of dimensions must
/// be equal or one of them 1. `None` when they do not broadcast.
pub fn broadcast_shapes(a: &[u64], b: &[u64]) -> Option<Vec<u64>> {
    let n = a.len().max(b.len());
    let dim = |s: &[u64], i: usize| if i + s.len() >= n { s[i + s.len() - n] } else { 1 };
    (0..n)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// The strides with which an input of shape `input` is read when broadcast to `out`
/// (0 along broadcast dimensions); `input` must broadcast to `out`.
pub fn broadcast_strides(input: &[u64], out: &[u64]) -> Vec<usize> {
    let own = strides(input);
    let lead = out.len() - input.len();
    let mut s: Vec<usize> = (0..out.len())
        .map(|i| if i < lead || input[i - lead] == 1 && out[i] != 1 { 0 } else { own[i - lead] })
        .collect();
    if faults::active(Fault::BroadcastStride) {
        // A planted bug: a broadcast operand read one element too far along its last dimension.
        if let Some(last) = s.last_mut() {
            if *last == 0 && out.last().is_some_and(|d| *d > 1) {
                *last = 1;
            }
        }
    }
    s
}

/// Walks the elements of `shape` in row-major order, one innermost row at a time:
/// `row(start, offsets, len, steps)` gets the row's first output index, each input's
/// offset of the row's first element, the row's length, and each input's stride
/// along the row. `inputs[k]` are input `k`'s strides over `shape` (as
/// [`broadcast_strides`] gives). Nothing is called for an empty shape's 0 elements; a
/// rank-0 shape is one row of one element.
pub fn for_each_row<const N: usize>(
    shape: &[u64],
    inputs: [&[usize]; N],
    row: impl FnMut(usize, [usize; N], usize, [usize; N]),
) {
    // Every element: the walk stops at the last row, so a count past `usize` is harmless.
    let total = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d as usize)).unwrap_or(usize::MAX);
    for_each_row_in(shape, inputs, 0..total, row)
}

/// [`for_each_row`] restricted to the output elements `range` (which must lie inside
/// `shape`'s elements): the rows that overlap it, cut to it, in order. A thread of a
/// split kernel walks its part of the output this way.
pub fn for_each_row_in<const N: usize>(
    shape: &[u64],
    inputs: [&[usize]; N],
    range: std::ops::Range<usize>,
    mut row: impl FnMut(usize, [usize; N], usize, [usize; N]),
) {
    if shape.contains(&0) || range.is_empty() {
        return;
    }
    let Some((&last, outer)) = shape.split_last() else {
        row(0, [0; N], 1, [0; N]);
        return;
    };
    let len = last as usize;
    let steps: [usize; N] = std::array::from_fn(|k| inputs[k][outer.len()]);
    // The odometer at the row holding `range.start`.
    let mut index = vec![0u64; outer.len()];
    let mut rest = range.start / len;
    for d in (0..outer.len()).rev() {
        index[d] = rest as u64 % outer[d];
        rest /= outer[d] as usize;
    }
    let mut offsets: [usize; N] =
        std::array::from_fn(|k| (0..outer.len()).map(|d| index[d] as usize * inputs[k][d]).sum());
    let mut row_start = range.start - range.start % len;
    loop {
        let (s, e) = (row_start.max(range.start), (row_start + len).min(range.end));
        let skip = s - row_start;
        row(s, std::array::from_fn(|k| offsets[k] + skip * steps[k]), e - s, steps);
        row_start += len;
        if row_start >= range.end {
            return;
        }
        let mut d = outer.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            for k in 0..N {
                offsets[k] += inputs[k][d];
            }
            if index[d] < outer[d] {
                break;
            }
            for k in 0..N {
                offsets[k] -= inputs[k][d] * outer[d] as usize;
            }
            index[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_numpy() {
        assert_eq!(broadcast_shapes(&[2, 3], &[3]), Some(vec![2, 3]));
        assert_eq!(broadcast_shapes(&[2, 1], &[1, 4]), Some(vec![2, 4]));
        assert_eq!(broadcast_shapes(&[], &[5]), Some(vec![5]));
        assert_eq!(broadcast_shapes(&[2], &[3]), None);
        assert_eq!(broadcast_shapes(&[0], &[1]), Some(vec![0]));
        assert_eq!(broadcast_strides(&[3], &[2, 3]), vec![0, 1]);
        assert_eq!(broadcast_strides(&[2, 1], &[2, 4]), vec![1, 0]);
    }

    #[test]
    fn rows_visit_every_element_once_with_its_offsets() {
        let shape = [2u64, 3, 4];
        let a = broadcast_strides(&[3, 1], &shape);
        let b = strides(&shape);
        let mut seen = Vec::new();
        for_each_row(&shape, [&a, &b], |start, [oa, ob], len, [sa, sb]| {
            for j in 0..len {
                seen.push((start + j, oa + j * sa, ob + j * sb));
            }
        });
        assert_eq!(seen.len(), 24);
        for (i, (out, ia, ib)) in seen.into_iter().enumerate() {
            assert_eq!((out, ib), (i, i));
            assert_eq!(ia, (i / 4) % 3);
        }
        let mut n = 0;
        for_each_row(&[], [&[][..]], |_, _, len, _| n += len);
        assert_eq!(n, 1);
        for_each_row(&[3, 0], [&[0usize, 0][..]], |_, _, len, _| n += len);
        assert_eq!(n, 1);
    }

    #[test]
    fn rows_of_a_range_are_the_whole_walk_cut_to_it() {
        let shape = [3u64, 2, 5];
        let a = broadcast_strides(&[2, 1], &shape);
        let b = strides(&shape);
        let mut whole = Vec::new();
        for_each_row(&shape, [&a, &b], |start, [oa, ob], len, [sa, sb]| {
            whole.extend((0..len).map(|j| (start + j, oa + j * sa, ob + j * sb)));
        });
        for lo in 0..=30 {
            for hi in lo..=30 {
                let mut part = Vec::new();
                for_each_row_in(&shape, [&a, &b], lo..hi, |start, [oa, ob], len, [sa, sb]| {
                    assert!(len > 0);
                    part.extend((0..len).map(|j| (start + j, oa + j * sa, ob + j * sb)));
                });
                assert_eq!(part, whole[lo..hi], "{lo}..{hi}");
            }
        }
        let mut n = 0;
        for_each_row_in(&[], [&[][..]], 0..1, |_, _, len, _| n += len);
        assert_eq!(n, 1);
    }
}
