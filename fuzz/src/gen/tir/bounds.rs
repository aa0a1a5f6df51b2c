//! Integer arithmetic over a loop index that ends right at its dtype's bound, for the
//! `NearBound` edge kernels. An engine that proves overflow checks away from value
//! intervals (the native code generator does) is only right if every interval it
//! derives holds every value; the fuzzer's other integer bodies stay far inside ±2^30,
//! where a wrong interval never decides anything. Here a function `f` of the index `i`
//! (a quotient, a remainder, `T.abs`, `T.bitwise_not`, a product, a remainder by a
//! divisor from the data) is shifted so that its largest value lands at `MAX + δ`, or
//! its smallest at `MIN - δ`, with `δ` in `-1..=2` (mostly positive): the shifted
//! value overflows exactly when `f` reaches its extreme and `δ > 0`, an
//! `IntegerOverflow` (no other error kind can happen), and otherwise is stored as is.
use super::expr::{input_bound, Gen};
use super::{bin, cast, int_lit, mk};
use spec_model::grammar::tir::{Intrinsic, TirExpr, TirExprKind};
use spec_model::grammar::{DataType, PrimBinOp};

/// What [`near_bound`] computes, drawn before the loop nest is built.
#[derive(Clone, Copy, Debug)]
pub(super) struct Plan {
    f: Shape,
    /// Which end of the dtype the shifted value meets.
    high: bool,
    delta: i128,
}

#[derive(Clone, Copy, Debug)]
enum Shape {
    /// `(i + k) // c` (floor) or `T.truncdiv(i + k, c)`: the same on `i + k >= 0`.
    Quotient { k: i64, c: i64, floor: bool },
    /// `T.floormod(i + k, c)`.
    Remainder { k: i64, c: i64 },
    /// `T.floormod(i + k, T.max(T.min(y, c), 1))` with `y` an input element: a divisor
    /// from the data, within `[1, c]`.
    DataRemainder { k: i64, c: i64 },
    /// `T.abs(i - m)` (signed dtypes only).
    Abs { m: i64 },
    /// `T.bitwise_not(i)`.
    Not,
    /// `i * c`.
    Scaled { c: i64 },
}

/// A plan over index values `0..=imax` in dtype `d`, or `None` when the index itself
/// may not fit `d` (a long loop over an 8-bit dtype).
pub(super) fn plan(g: &mut Gen, d: DataType, imax: i64) -> Option<Plan> {
    let (_, hi) = spec_model::prim_eval::int_range(d);
    if i128::from(imax) * 10 + 100 > hi {
        return None;
    }
    let k = g.int(0, 100);
    let c = g.choose(&[2i64, 3, 7, 10], 2);
    let f = match g.pick(6) {
        0 => Shape::Quotient { k, c, floor: g.coin(1, 2) },
        1 => Shape::Remainder { k, c },
        2 => Shape::DataRemainder { k, c },
        // Mostly the larger half: the largest |i - m| then comes from below m.
        3 if d.is_int() => Shape::Abs { m: g.int(imax / 3, imax) },
        4 => Shape::Not,
        _ => Shape::Scaled { c },
    };
    // Past the bound more often than not.
    let delta = g.choose(&[-1i128, 0, 1, 1, 2], 1);
    Some(Plan { f, high: g.coin(1, 2), delta })
}

/// The smallest and largest values of the plan's `f` over `i` in `0..=imax` (for
/// [`Shape::DataRemainder`], the largest the data allows).
fn extremes(f: Shape, d: DataType, imax: i64) -> (i128, i128) {
    let n = i128::from(imax);
    match f {
        Shape::Quotient { k, c, .. } => (i128::from(k) / i128::from(c), (n + i128::from(k)) / i128::from(c)),
        Shape::Remainder { k, c } => {
            // Periodic in `i`: one period (or all of `0..=imax`) gives both ends.
            let vals = (0..=n.min(i128::from(c) - 1)).map(|i| (i + i128::from(k)).rem_euclid(i128::from(c)));
            (vals.clone().min().unwrap_or(0), vals.max().unwrap_or(0))
        }
        Shape::DataRemainder { k, c } => {
            let divisor = input_bound(d).1.clamp(1, i128::from(c));
            (0, (divisor - 1).min(n + i128::from(k)))
        }
        Shape::Abs { m } => (0, i128::from(m).max(n - i128::from(m))),
        Shape::Not if d.is_uint() => {
            let max = spec_model::prim_eval::int_range(d).1;
            (max - n, max)
        }
        Shape::Not => (-n - 1, -1),
        Shape::Scaled { c } => (0, n * i128::from(c)),
    }
}

/// The plan's value at index `i` (an int64 loop variable or axis up to `imax`),
/// `y` an input element of dtype `d`.
pub(super) fn near_bound(p: Plan, d: DataType, imax: i64, i: TirExpr, y: TirExpr) -> TirExpr {
    use PrimBinOp::*;
    let lit = |v: i128| int_lit(v as i64, d);
    let call = |op, args| mk(TirExprKind::Call { op, args });
    let i = cast(d, i);
    let plus = |k: i64| bin(Add, i.clone(), int_lit(k, d));
    let f = match p.f {
        Shape::Quotient { k, c, floor: true } => bin(FloorDiv, plus(k), int_lit(c, d)),
        Shape::Quotient { k, c, floor: false } => bin(Div, plus(k), int_lit(c, d)),
        Shape::Remainder { k, c } => bin(FloorMod, plus(k), int_lit(c, d)),
        Shape::DataRemainder { k, c } => bin(FloorMod, plus(k), bin(Max, bin(Min, y, int_lit(c, d)), int_lit(1, d))),
        Shape::Abs { m } => call(Intrinsic::Fabs, vec![bin(Sub, i.clone(), int_lit(m, d))]),
        Shape::Not => call(Intrinsic::BitwiseNot, vec![i.clone()]),
        Shape::Scaled { c } => bin(Mul, i.clone(), int_lit(c, d)),
    };
    let (lo, hi) = spec_model::prim_eval::int_range(d);
    let (fmin, fmax) = extremes(p.f, d, imax);
    let delta = p.delta;
    if p.high {
        // `f + (MAX - fmax + δ)`, in two steps when that constant leaves the dtype.
        let k = hi - fmax + delta;
        if (lo..=hi).contains(&k) {
            bin(Add, f, lit(k))
        } else if k < lo {
            // Unsigned, `fmax = MAX` and `δ = -1`: `f - 1`.
            bin(Sub, f, lit(-k))
        } else {
            bin(Add, bin(Add, f, lit(hi)), lit(delta - fmax))
        }
    } else if d.is_uint() {
        // `f - (fmin + δ)`, in two steps when that constant passes MAX.
        let k = (fmin + delta).max(0);
        if k <= hi {
            bin(Sub, f, lit(k))
        } else {
            bin(Sub, bin(Sub, f, lit(fmin)), lit(delta))
        }
    } else if fmin < 0 && -fmin - delta >= 0 {
        // `f + (MIN - fmin - δ)`: at `fmin`, `MIN - δ`.
        bin(Add, f, lit(lo - fmin - delta))
    } else {
        // `(f - MAX) - (fmin + 1 + δ)`: at `fmin`, `-MAX - 1 - δ = MIN - δ`.
        bin(Sub, bin(Sub, f, lit(hi)), lit(fmin + 1 + delta))
    }
}

#[cfg(test)]
impl Plan {
    /// Every plan for dtype `d` and index bound `imax` (all shapes, both ends, every
    /// `δ`; the constants of one draw), and whether its extremes are exact (all but the
    /// remainder by data, whose largest value depends on the data).
    pub(super) fn every(d: DataType, imax: i64) -> Vec<(Plan, bool)> {
        let shapes = [
            Shape::Quotient { k: 9, c: 10, floor: true },
            Shape::Quotient { k: 100, c: 7, floor: false },
            Shape::Remainder { k: 5, c: 3 },
            Shape::DataRemainder { k: 2, c: 3 },
            Shape::Abs { m: imax / 2 },
            Shape::Not,
            Shape::Scaled { c: 10 },
        ];
        let mut out = Vec::new();
        for f in shapes {
            if matches!(f, Shape::Abs { .. }) && !d.is_int() {
                continue;
            }
            for high in [false, true] {
                for delta in -1..=2 {
                    out.push((Plan { f, high, delta }, !matches!(f, Shape::DataRemainder { .. })));
                }
            }
        }
        out
    }

    pub(super) fn delta(&self) -> i128 {
        self.delta
    }
}
