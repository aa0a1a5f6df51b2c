//! A vectorizable `exp` for float32 and float64: branch-free (selects only), so that a
//! loop over a slice compiles to vector instructions.
//!
//! `exp(x) = 2^k · exp(r)` with `k = round(x / ln 2)` (rounded by adding 1.5·2^p, whose
//! bits then hold `k`) and `r = x − k·ln 2` in two parts (Cody–Waite: `k·C1` is exact,
//! so `r` carries no cancellation error), `|r| ≤ ln 2 / 2`; `exp(r) = 1 + (r + r²·P(r))`
//! with the small terms summed first; the scaling by `2^k` is two exact multiplications
//! by `2^⌊k/2⌋` and `2^(k−⌊k/2⌋)`, both normal numbers over the whole range.
//!
//! No fused multiply-add is used, so every instruction set computes the same bits.
//!
//! Accuracy (checked by `simd::tests`): NaN gives NaN, `+inf` and every `x` above the
//! overflow threshold of `std`'s `exp` (float32 `88.72283`, float64 `709.78271289338`)
//! give `+inf`, `-inf` gives `0`; a normal result is within 2 ulp of `std`'s `exp`
//! (float32: at most 1 ulp over a sweep of every 997th bit pattern in [-104, 89];
//! float64: at most 1 ulp over a sweep of [-745, 709.7]). A subnormal result is the
//! product of the rounded `exp(r)` and `2^k`, rounded twice (the absolute error is below
//! the smallest normal number); below `-104` (float32) or `-746` (float64) it is 0.

use super::Body;

/// The largest float32 whose `exp` is finite (`f32::exp` overflows above it).
const OVER_F32: f32 = f32::from_bits(0x42B1_7217); // 88.72283
const UNDER_F32: f32 = -104.0;
/// The largest float64 whose `exp` is finite.
const OVER_F64: f64 = f64::from_bits(0x4086_2E42_FEFA_39EF); // 709.782712893384
const UNDER_F64: f64 = -746.0;

/// `e^x` for float32 (see the module's accuracy bounds).
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const MAGIC: f32 = 12_582_912.0; // 1.5 · 2^23
    const C1: f32 = 0.693_359_4; // 355/512: k·C1 is exact for |k| ≤ 2^15
    const C2: f32 = -2.121_944_4e-4; // ln 2 − C1
                                     // Clamped so that k stays in [-150, 129] (NaN passes through and stays NaN).
    let xc = x.clamp(UNDER_F32, 89.0);
    let t = xc * LOG2E + MAGIC;
    let kf = t - MAGIC;
    let k = (t.to_bits() as i32).wrapping_sub(MAGIC.to_bits() as i32);
    let r = (xc - kf * C1) - kf * C2;
    let z = r * r;
    // Cephes' minimax coefficients of (exp(r) − 1 − r) / r².
    let p =
        ((((1.987_569_1e-4 * r + 1.398_2e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r + 0.166_666_65) * r + 0.5;
    let e = (p * z + r) + 1.0;
    let k1 = k >> 1;
    let k2 = k.wrapping_sub(k1);
    let s1 = f32::from_bits((k1.wrapping_add(127) as u32) << 23);
    let s2 = f32::from_bits((k2.wrapping_add(127) as u32) << 23);
    let y = (e * s1) * s2;
    let y = if x > OVER_F32 { f32::INFINITY } else { y };
    if x < UNDER_F32 {
        0.0
    } else {
        y
    }
}

/// `e^x` for float64 (see the module's accuracy bounds).
#[inline(always)]
pub fn exp_f64(x: f64) -> f64 {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    const MAGIC: f64 = 6_755_399_441_055_744.0; // 1.5 · 2^52
                                                // fdlibm's split of ln 2: LN2_HI has 32 significant bits, so k·LN2_HI is exact.
    const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);
    // The Taylor coefficients 1/2!, …, 1/13! (the truncation error is below 2^-57).
    const C: [f64; 12] = [
        1.0 / 2.0,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5040.0,
        1.0 / 40320.0,
        1.0 / 362_880.0,
        1.0 / 3_628_800.0,
        1.0 / 39_916_800.0,
        1.0 / 479_001_600.0,
        1.0 / 6_227_020_800.0,
    ];
    // Clamped so that k stays in [-1077, 1025] (NaN passes through and stays NaN).
    let xc = x.clamp(UNDER_F64, 710.0);
    let t = xc * LOG2E + MAGIC;
    let kf = t - MAGIC;
    let k = (t.to_bits() as i64).wrapping_sub(MAGIC.to_bits() as i64);
    let r = (xc - kf * LN2_HI) - kf * LN2_LO;
    let mut q = C[11];
    for &c in C[..11].iter().rev() {
        q = q * r + c;
    }
    let e = (q * (r * r) + r) + 1.0;
    // ⌊k/2⌋ through an unsigned shift (AVX2 has no 64-bit arithmetic shift).
    let k1 = (((k.wrapping_add(2048)) as u64) >> 1) as i64 - 1024;
    let k2 = k.wrapping_sub(k1);
    let s1 = f64::from_bits((k1.wrapping_add(1023) as u64) << 52);
    let s2 = f64::from_bits((k2.wrapping_add(1023) as u64) << 52);
    let y = (e * s1) * s2;
    let y = if x > OVER_F64 { f64::INFINITY } else { y };
    if x < UNDER_F64 {
        0.0
    } else {
        y
    }
}

/// `1 / (1 + e^-x)` for float32, with [`exp_f32`].
#[inline(always)]
pub fn sigmoid_f32(x: f32) -> f32 {
    1.0 / (1.0 + exp_f32(-x))
}

/// `1 / (1 + e^-x)` for float64, with [`exp_f64`].
#[inline(always)]
pub fn sigmoid_f64(x: f64) -> f64 {
    1.0 / (1.0 + exp_f64(-x))
}

macro_rules! exp_body {
    ($name:ident, $t:ty, $exp:ident, $sigmoid:ident) => {
        /// `out = exp(x)` (or `sigmoid(x)`); in place when `x` is `None`.
        pub struct $name<'a> {
            pub out: &'a mut [$t],
            pub x: Option<&'a [$t]>,
            pub sigmoid: bool,
        }

        impl Body for $name<'_> {
            type Out = ();
            #[inline(always)]
            fn run(self) {
                match (self.x, self.sigmoid) {
                    (Some(x), false) => self.out.iter_mut().zip(x).for_each(|(o, &v)| *o = $exp(v)),
                    (Some(x), true) => self.out.iter_mut().zip(x).for_each(|(o, &v)| *o = $sigmoid(v)),
                    (None, false) => self.out.iter_mut().for_each(|o| *o = $exp(*o)),
                    (None, true) => self.out.iter_mut().for_each(|o| *o = $sigmoid(*o)),
                }
            }
        }
    };
}

exp_body!(ExpF32, f32, exp_f32, sigmoid_f32);
exp_body!(ExpF64, f64, exp_f64, sigmoid_f64);
