//! The loops on every instruction set the CPU has against the scalar code: bitwise for
//! IEEE operations and integers, ulp bounds for `exp` and `sigmoid`.

use super::loops::{fold_lanes, Cast, FoldRow, Gather, Transpose};
use super::*;
use crate::scalar::B8;
use half::f16;

/// Distance in units in the last place between two finite floats of the same sign
/// class (through the ordered integer image of their bits).
fn ulps32(a: f32, b: f32) -> u64 {
    let key = |x: f32| {
        let b = x.to_bits() as i64;
        if b < 0x8000_0000 {
            b
        } else {
            0x8000_0000 - b
        }
    };
    key(a).abs_diff(key(b))
}

fn ulps64(a: f64, b: f64) -> u64 {
    let key = |x: f64| {
        let b = x.to_bits() as i128;
        if b < 1 << 63 {
            b
        } else {
            (1i128 << 63) - b
        }
    };
    key(a).abs_diff(key(b)) as u64
}

/// Floats that exercise the special cases: NaN, infinities, signed zeros, subnormals,
/// extremes, and ordinary values.
fn specials32() -> Vec<f32> {
    vec![
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1e-45,
        -1e-45,
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::MIN,
        1.0,
        -1.0,
        0.5,
        -2.5,
        3.0,
        7.25,
        -7.0,
        1e10,
        -1e-10,
        88.72283,
        88.72284,
        -103.9,
        -104.5,
    ]
}

/// A deterministic stream of varied floats: specials, then pseudo-random values.
fn data32(n: usize, seed: u64) -> Vec<f32> {
    let sp = specials32();
    let mut s = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    (0..n)
        .map(|i| {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let r = (s >> 33) as u32;
            if r.is_multiple_of(5) {
                sp[(r as usize / 5 + i) % sp.len()]
            } else {
                ((r % 20_000) as f32 - 10_000.0) / 97.0
            }
        })
        .collect()
}

fn data64(n: usize, seed: u64) -> Vec<f64> {
    data32(n, seed).into_iter().map(|x| x as f64 * 1.000_000_1).collect()
}

/// The same bits, except that any NaN equals any NaN: LLVM may commute the operands
/// of a commutative operation, and x86 returns the first operand's NaN, so the payload
/// of `NaN + NaN` is not the code's to choose (nor observable by the oracle's comparison).
pub(super) fn same<T: Element + Num>(a: &[T], b: &[T]) -> bool {
    #[allow(clippy::eq_op)]
    let nan = |x: T| x != x;
    a.len() == b.len()
        && a.iter().zip(b).all(|(&x, &y)| (nan(x) && nan(y)) || bytemuck::bytes_of(&x) == bytemuck::bytes_of(&y))
}

const LENGTHS: [usize; 4] = [1000, 4099, 65, 130];

fn lengths() -> impl Iterator<Item = usize> {
    (0..=67).chain(LENGTHS)
}

#[test]
fn the_isa_is_detected_once_and_overridden_per_thread() {
    let all = available();
    assert_eq!(all.last(), Some(&Isa::Portable));
    assert_eq!(all[0], detected());
    for &i in &all {
        assert_eq!(with_isa(i, isa), i);
        assert_eq!(with_isa(i, || level().isa()), i);
        assert_eq!(with_isa(i, || with_isa(Isa::Portable, isa)), Isa::Portable);
    }
    let outer = isa();
    with_isa(Isa::Portable, || ());
    assert_eq!(isa(), outer, "the override ends with with_isa");
    assert!(Isa::parse("AVX2 ") == Some(Isa::Avx2) && Isa::parse("sse").is_none());
}

/// Every 997th float32 bit pattern in [-104, 89], and the edges.
fn exp_sweep32() -> Vec<f32> {
    let mut xs: Vec<f32> = (0..=89f32.to_bits()).step_by(997).map(f32::from_bits).collect();
    xs.extend(((-0f32).to_bits()..=(-104f32).to_bits()).step_by(997).map(f32::from_bits));
    xs.extend(specials32());
    let over = f32::from_bits(0x42B1_7217);
    xs.extend([over, f32::from_bits(over.to_bits() + 1), -103.97208, -103.2789, -87.33655, -87.3366, 1e-8, -1e-8]);
    xs
}

#[test]
fn exp_f32_is_within_2_ulp_of_std() {
    let mut worst = 0;
    for x in exp_sweep32() {
        let (got, want) = (exp_f32(x), x.exp());
        if want.is_nan() {
            assert!(got.is_nan(), "exp({x})");
        } else if want.is_infinite() || want == 0.0 {
            assert!(got == want || (want == 0.0 && got < 1e-44), "exp({x}) = {got}, std {want}");
        } else if want < f32::MIN_POSITIVE {
            assert!(
                (got - want).abs() <= f32::MIN_POSITIVE * f32::EPSILON * 4.0,
                "subnormal exp({x}) = {got}, std {want}"
            );
        } else {
            assert!(got.is_finite(), "exp({x}) = {got}");
            let u = ulps32(got, want);
            assert!(u <= 2, "exp({x}) = {got}, std {want}: {u} ulp");
            worst = worst.max(u);
        }
    }
    assert!(worst <= 1, "the documented bound over the sweep is 1 ulp, found {worst}");
    assert!(exp_f32(f32::NEG_INFINITY) == 0.0 && exp_f32(f32::INFINITY) == f32::INFINITY);
}

#[test]
fn exp_f64_is_within_2_ulp_of_std() {
    let mut xs: Vec<f64> = (0..400_000).map(|i| -745.0 + i as f64 * (709.7 + 745.0) / 400_000.0).collect();
    xs.extend((0..2000).map(|i| (i as f64 - 1000.0) * 1e-6));
    xs.extend([0.0, -0.0, 1e-300, -1e-300, 709.78, 709.782712893384, -745.13, 700.0, -708.39]);
    let mut worst = 0;
    for x in xs {
        let (got, want) = (exp_f64(x), x.exp());
        if want < f64::MIN_POSITIVE {
            assert!((got - want).abs() <= f64::MIN_POSITIVE, "subnormal exp({x}) = {got}, std {want}");
        } else {
            let u = ulps64(got, want);
            assert!(u <= 2, "exp({x}) = {got}, std {want}: {u} ulp");
            worst = worst.max(u);
        }
    }
    assert!(worst <= 1, "the documented bound over the sweep is 1 ulp, found {worst}");
    let over = f64::from_bits(0x4086_2E42_FEFA_39EF);
    assert!(exp_f64(over).is_finite() && over.exp().is_finite());
    let above = f64::from_bits(over.to_bits() + 1);
    assert!(exp_f64(above).is_infinite() && above.exp().is_infinite());
    assert!(exp_f64(f64::NAN).is_nan() && exp_f64(f64::NEG_INFINITY) == 0.0 && exp_f64(f64::INFINITY).is_infinite());
    assert_eq!(exp_f64(-800.0), 0.0);
}

#[test]
fn sigmoid_is_within_4_ulp_of_the_std_formula() {
    for x in exp_sweep32() {
        let (got, want) = (sigmoid_f32(x), 1.0 / (1.0 + (-x).exp()));
        if want.is_nan() {
            assert!(got.is_nan());
        } else if want >= f32::MIN_POSITIVE {
            assert!(ulps32(got, want) <= 4, "sigmoid({x}) = {got}, std {want}");
        } else {
            assert!((got - want).abs() <= f32::MIN_POSITIVE, "sigmoid({x}) = {got}, std {want}");
        }
    }
    for x in data64(5000, 3) {
        let (got, want) = (sigmoid_f64(x), 1.0 / (1.0 + (-x).exp()));
        assert!(got.is_nan() == want.is_nan() && (want.is_nan() || want < f64::MIN_POSITIVE || ulps64(got, want) <= 4));
    }
}

/// The scalar reference of an arithmetic op (the `Num` methods).
pub(super) fn arith_ref<T: Num>(op: Arith) -> fn(T, T) -> T {
    match op {
        Arith::Add => T::add,
        Arith::Subtract => T::sub,
        Arith::Multiply => T::mul,
        Arith::Divide => T::div,
        Arith::FloorDivide => T::floor_div,
        Arith::Power => T::pow,
        Arith::Maximum => T::max_nan,
        Arith::Minimum => T::min_nan,
    }
}

const ARITH: [Arith; 8] = [
    Arith::Add,
    Arith::Subtract,
    Arith::Multiply,
    Arith::Divide,
    Arith::FloorDivide,
    Arith::Power,
    Arith::Maximum,
    Arith::Minimum,
];

fn lane_of<T: Copy>(v: &[T], splat: bool) -> Lane<'_, T> {
    if splat {
        Lane::Splat(v[0])
    } else {
        Lane::Run(v)
    }
}

fn check_binary<T: FloatElem>(data: fn(usize, u64) -> Vec<T>) {
    for isa in available() {
        for n in lengths() {
            let (x, y) = (data(n.max(1), n as u64), data(n.max(1), 1000 + n as u64));
            let (x, y) = (&x[..n.max(1)], &y[..n.max(1)]);
            for op in ARITH {
                let f = arith_ref::<T>(op);
                for (sa, sb) in [(false, false), (false, true), (true, false), (true, true)] {
                    let pick = |v: &[T], s: bool, j: usize| if s { v[0] } else { v[j] };
                    let want: Vec<T> = (0..n).map(|j| f(pick(x, sa, j), pick(y, sb, j))).collect();
                    let mut out = vec![T::ZERO; n];
                    let (a, b) = (lane_of(&x[..n.max(sa as usize)], sa), lane_of(&y[..n.max(sb as usize)], sb));
                    with_isa(isa, || binary(op, &mut out, a, b));
                    assert!(same(&out, &want), "{isa:?} {op:?} n={n} splat={sa},{sb}");
                    // The accumulating form, on both sides.
                    for left in [true, false] {
                        let mut acc: Vec<T> = (0..n).map(|j| pick(x, sa, j)).collect();
                        with_isa(isa, || binary_acc(op, &mut acc, b, left));
                        let want: Vec<T> = (0..n)
                            .map(|j| {
                                if left {
                                    f(pick(x, sa, j), pick(y, sb, j))
                                } else {
                                    f(pick(y, sb, j), pick(x, sa, j))
                                }
                            })
                            .collect();
                        assert!(same(&acc, &want), "{isa:?} acc {op:?} n={n} left={left}");
                    }
                }
            }
        }
    }
}

#[test]
fn binary_is_bitwise_the_scalar_arithmetic_on_every_path() {
    check_binary::<f32>(data32);
    check_binary::<f64>(data64);
}

fn check_unary<T: FloatElem>(data: fn(usize, u64) -> Vec<T>, exp: fn(T) -> T, sigmoid: fn(T) -> T) {
    use crate::kernels::unary_math::Math;
    use Unary::*;
    let ops = [
        Negative, Abs, Exp, Log, Sqrt, Tanh, Sigmoid, Relu, Erf, Rsqrt, Sin, Cos, Floor, Ceil, Round, Sign, Square,
        Gelu, GeluTanh, Silu,
    ];
    for isa in available() {
        for n in lengths() {
            let x = data(n, 7 + n as u64);
            for op in ops {
                let f: &dyn Fn(T) -> T = match op {
                    Unary::Negative => &T::neg,
                    Unary::Abs => &<T as Num>::abs,
                    Unary::Exp => &exp,
                    Unary::Log => &T::ln,
                    Unary::Sqrt => &<T as Real>::sqrt,
                    Unary::Tanh => &T::tanh,
                    Unary::Sigmoid => &sigmoid,
                    Unary::Relu => &|v: T| v.max_nan(T::ZERO),
                    Erf => &<T as Math>::erf,
                    Rsqrt => &<T as Math>::rsqrt,
                    Sin => &<T as Math>::sin,
                    Cos => &<T as Math>::cos,
                    Floor => &<T as Math>::floor,
                    Ceil => &<T as Math>::ceil,
                    Round => &<T as Math>::round,
                    Sign => &<T as Math>::sign,
                    Square => &<T as Math>::square,
                    Gelu => &<T as Math>::gelu,
                    GeluTanh => &<T as Math>::gelu_tanh,
                    Silu => &<T as Math>::silu,
                };
                let want: Vec<T> = x.iter().map(|&v| f(v)).collect();
                let mut out = vec![T::ZERO; n];
                with_isa(isa, || unary(op, &mut out, &x));
                assert!(same(&out, &want), "{isa:?} {op:?} n={n}");
                let mut acc = x.clone();
                with_isa(isa, || unary_acc(op, &mut acc));
                assert!(same(&acc, &want), "{isa:?} acc {op:?} n={n}");
            }
        }
    }
}

/// The vectorized `exp` gives the scalar `exp_f32`'s bits on every path (and that one
/// is within 2 ulp of `std`'s, above).
#[test]
fn unary_is_bitwise_the_scalar_functions_on_every_path() {
    check_unary::<f32>(data32, exp_f32, sigmoid_f32);
    check_unary::<f64>(data64, exp_f64, sigmoid_f64);
    let sweep = exp_sweep32();
    for isa in available() {
        let mut out = vec![0.0; sweep.len()];
        with_isa(isa, || unary(Unary::Exp, &mut out, &sweep));
        let want: Vec<f32> = sweep.iter().map(|&x| exp_f32(x)).collect();
        assert!(same(&out, &want), "{isa:?}");
    }
}

fn ints(n: usize, seed: u64) -> Vec<i64> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            match s % 7 {
                0 => i64::MIN,
                1 => i64::MAX,
                2 => 0,
                _ => s as i64 >> (s % 60),
            }
        })
        .collect()
}

/// Folds in lanes: exact for integers (wrapping) and max/min; floats within a
/// reassociation's error of the ordered sum; the same bits on every path.
#[test]
fn folds_agree_with_the_ordered_fold() {
    for n in lengths().chain([100_000]) {
        let xi: Vec<i32> = ints(n, n as u64 + 1).into_iter().map(|v| v as i32).collect();
        let xf = data32(n, n as u64);
        let finite: Vec<f32> = xf.iter().map(|&v| if v.is_finite() && v.abs() < 1e9 { v } else { 1.5 }).collect();
        let mut per_isa = Vec::new();
        for isa in available() {
            let lvl = with_isa(isa, level);
            let seq = |f: &dyn Fn(i32, i32) -> i32, init| xi.iter().fold(init, |a, &b| f(a, b));
            for (init, f) in [(0, i32::add as fn(i32, i32) -> i32), (i32::MIN, i32::max_nan), (i32::MAX, i32::min_nan)]
            {
                let got = run(lvl, FoldRow { init, id: init, row: &xi, reassociate: true, f: &f });
                assert_eq!(got, seq(&f, init), "{isa:?} n={n}");
            }
            let u8s: Vec<u8> = xi.iter().map(|&v| v as u8).collect();
            let got = run(lvl, FoldRow { init: 3u8, id: 0, row: &u8s, reassociate: true, f: &u8::add });
            assert_eq!(got, u8s.iter().fold(3u8, |a, &b| a.wrapping_add(b)));
            let sum = run(lvl, FoldRow { init: 0.0, id: 0.0, row: &finite, reassociate: true, f: &f32::add });
            let ordered: f64 = finite.iter().map(|&v| v as f64).sum();
            let scale: f64 = finite.iter().map(|&v| (v as f64).abs()).sum();
            assert!((sum as f64 - ordered).abs() <= 2.0 * n as f64 * f32::EPSILON as f64 * scale.max(1.0));
            let max = run(
                lvl,
                FoldRow {
                    init: f32::NEG_INFINITY,
                    id: f32::NEG_INFINITY,
                    row: &xf,
                    reassociate: true,
                    f: &f32::max_nan,
                },
            );
            let want = xf.iter().fold(f32::NEG_INFINITY, |a, &b| a.max_nan(b));
            assert!(max == want || (max.is_nan() && want.is_nan()), "{isa:?} n={n}: {max} {want}");
            per_isa.push((sum.to_bits(), if max.is_nan() { f32::NAN.to_bits() } else { max.to_bits() }));
        }
        assert!(per_isa.windows(2).all(|w| w[0] == w[1]), "every path gives the same bits (n={n})");
        if n < 2 * loops::FOLD_LANES {
            let sum = fold_lanes(0.0f32, 0.0, &finite, true, &f32::add);
            assert_eq!(sum.to_bits(), finite.iter().fold(0.0f32, |a, &b| a + b).to_bits(), "short rows in order");
        }
    }
}

fn cast_ref<S: Num, D: Num>(src: &[S]) -> (Vec<D>, Option<usize>) {
    let mut out = vec![D::ZERO; src.len()];
    for (i, &s) in src.iter().enumerate() {
        match s.cast::<D>() {
            Some(v) => out[i] = v,
            None => return (out, Some(i)),
        }
    }
    (out, None)
}

fn check_cast<S: Num, D: Num>(src: &[S]) {
    let (want, bad) = cast_ref::<S, D>(src);
    for isa in available() {
        let mut out = vec![D::ZERO; src.len()];
        let got = run(with_isa(isa, level), Cast { src, dst: &mut out });
        assert_eq!(got.err(), bad, "{isa:?} {} -> {}", S::DTYPE, D::DTYPE);
        let upto = bad.unwrap_or(src.len());
        assert!(same(&out[..upto], &want[..upto]), "{isa:?} {} -> {}", S::DTYPE, D::DTYPE);
    }
}

#[test]
fn casts_are_the_scalar_conversions_and_fail_at_the_first_bad_element() {
    for n in lengths() {
        let f = data32(n, n as u64);
        let finite: Vec<f32> = f.iter().map(|&v| if v.is_finite() && v.abs() < 1e9 { v } else { 0.25 }).collect();
        let i = ints(n, n as u64 + 9);
        check_cast::<f32, f64>(&f);
        check_cast::<f32, f16>(&f);
        check_cast::<f32, B8>(&f);
        check_cast::<f32, i32>(&finite);
        check_cast::<f32, i32>(&f);
        check_cast::<f32, u8>(&finite);
        check_cast::<f64, i64>(&data64(n, 5));
        check_cast::<i64, f32>(&i);
        check_cast::<i64, i8>(&i);
        check_cast::<i64, u32>(&i);
        let i32s: Vec<i32> = i.iter().map(|&v| v as i32).collect();
        check_cast::<i32, f32>(&i32s);
        check_cast::<i32, f64>(&i32s);
        check_cast::<i32, B8>(&i32s);
        let u8s: Vec<u8> = i.iter().map(|&v| v as u8).collect();
        check_cast::<u8, f32>(&u8s);
        check_cast::<u8, i64>(&u8s);
    }
}

#[test]
fn transposes_and_gathers_move_the_right_elements() {
    for isa in available() {
        let lvl = with_isa(isa, level);
        for (rows, cols) in [(1, 1), (1, 7), (7, 1), (16, 16), (17, 33), (40, 3), (3, 40)] {
            let src: Vec<u16> = (0..rows * cols).map(|i| i as u16).collect();
            let mut dst = vec![0u16; rows * cols];
            run(lvl, Transpose { src: &src, dst: &mut dst, rows, cols });
            for r in 0..rows {
                for c in 0..cols {
                    assert_eq!(dst[c * rows + r], src[r * cols + c]);
                }
            }
        }
        for n in lengths() {
            let block: Vec<f64> = data64(n.max(1), 1);
            let pos: Vec<usize> = (0..n * 2).map(|i| (i * 7 + 3) % block.len()).collect();
            let mut dst = vec![0.0; pos.len()];
            run(lvl, Gather { block: &block, pos: &pos, dst: &mut dst });
            let want: Vec<f64> = pos.iter().map(|&p| block[p]).collect();
            assert!(same(&dst, &want));
        }
    }
}
