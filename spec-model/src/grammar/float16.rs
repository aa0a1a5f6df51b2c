//! `float16` values from wider floats. Every conversion to `float16` in the reference
//! semantics rounds the exact value once, to nearest with ties to even (as IEEE 754's
//! `convertFormat`, LLVM's `fptrunc`, NumPy's `astype`). The `half` crate's
//! `f16::from_f64` does not: on x86 with F16C it converts through `f32`, rounding twice
//! (1 + 2^-11 + 2^-30 becomes 1.0, not 1.0009765625), and without F16C it drops the
//! low 32 bits first, so its results would depend on the machine.

use half::f16;

/// The `float16` nearest to `x`, ties to even; beyond the largest finite value by half
/// an ulp or more, an infinity; NaN stays NaN (sign kept).
///
/// Written to be checked by eye, not to be fast: a binary search for the largest
/// non-negative `float16` at most `|x|` (non-negative `float16` bit patterns are
/// ordered as their values, and each value is exact in `f64`), then a comparison with
/// the midpoint to the next one, exact in `f64` too.
pub fn f16_nearest(x: f64) -> f16 {
    if x.is_nan() {
        return f16::from_bits(if x.is_sign_negative() { 0xFE00 } else { 0x7E00 });
    }
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    // Largest bit pattern in 0..=0x7C00 (0x7C00 is +inf) whose value is at most `a`.
    let (mut lo, mut hi) = (0u16, 0x7C00u16);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if f16::from_bits(mid).to_f64() <= a {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let below = lo;
    let bits = if below == 0x7C00 {
        below
    } else {
        // The next value up; past 65504 it is the power of two 65536, where rounding
        // overflows (IEEE 754 rounds as if the exponent range were unbounded).
        let next = if below == 0x7BFF { 65536.0 } else { f16::from_bits(below + 1).to_f64() };
        let mid = (f16::from_bits(below).to_f64() + next) / 2.0;
        if a < mid || (a == mid && below % 2 == 0) {
            below
        } else {
            below + 1
        }
    };
    f16::from_bits(bits | sign)
}

#[cfg(test)]
mod tests {
    use super::f16_nearest;
    use half::f16;

    fn bits(x: f64) -> u16 {
        f16_nearest(x).to_bits()
    }

    #[test]
    fn rounds_the_exact_value_once() {
        // Through float32 this is a tie that rounds to 1.0.
        assert_eq!(f16_nearest(1.0 + 2f64.powi(-11) + 2f64.powi(-30)).to_f64(), 1.0009765625);
        assert_eq!(f16_nearest(1.0 + 2f64.powi(-11)).to_f64(), 1.0);
        assert_eq!(f16_nearest(1.0 + 3.0 * 2f64.powi(-11)).to_f64(), 1.001953125);
        assert_eq!(f16_nearest(0.1).to_f64(), 0.0999755859375);
        assert_eq!(f16_nearest(2049.0).to_f64(), 2048.0);
        assert_eq!(f16_nearest(2051.0).to_f64(), 2052.0);
        assert_eq!(f16_nearest(-2051.0).to_f64(), -2052.0);
    }

    #[test]
    fn overflows_at_half_an_ulp_past_the_largest() {
        assert_eq!(f16_nearest(65504.0).to_f64(), 65504.0);
        assert_eq!(f16_nearest(65519.999).to_f64(), 65504.0);
        assert_eq!(bits(65520.0), 0x7C00);
        assert_eq!(bits(-1e300), 0xFC00);
        assert_eq!(bits(f64::INFINITY), 0x7C00);
    }

    #[test]
    fn subnormals_zeros_and_nan() {
        let tiny = 2f64.powi(-24);
        assert_eq!(bits(tiny), 1);
        assert_eq!(bits(tiny / 2.0), 0, "a tie with zero goes to zero");
        assert_eq!(bits(tiny / 2.0 + 2f64.powi(-60)), 1);
        assert_eq!(bits(1.5 * tiny), 2, "a tie between 1 and 2 goes to 2");
        assert_eq!(bits(-0.0), 0x8000);
        assert_eq!(bits(-1e-300), 0x8000);
        assert!(f16_nearest(f64::NAN).is_nan());
    }

    #[test]
    fn agrees_with_float32_conversion_where_that_is_exact() {
        // From an f32 (at most 24 bits), one rounding by `half` is the only rounding.
        for i in 0..200_000u32 {
            let x = f32::from_bits(i.wrapping_mul(2_654_435_761));
            if x.is_nan() {
                continue;
            }
            assert_eq!(f16_nearest(f64::from(x)).to_bits(), f16::from_f32(x).to_bits(), "{x:e}");
        }
    }
}
