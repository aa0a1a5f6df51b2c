//! Vectorized loops with run-time dispatch, and the splitting of large kernels across
//! threads.
//!
//! The default target is x86-64 with SSE2 only, so a loop compiled the ordinary way
//! never uses AVX2 or AVX-512. Each loop here is written once as a plain generic body
//! (`#[inline(always)]`, branch-free where it can be) and instantiated inside functions
//! compiled with `#[target_feature]`; LLVM vectorizes each instantiation for its
//! instruction set, and [`run`] picks the one the CPU has ([`isa`], detected once).
//!
//! The arithmetic is the scalar code's own ([`Num`](crate::scalar::Num) methods, no FMA
//! contraction: Rust never fuses a multiply and an add by itself), so IEEE operations,
//! comparisons and integer operations give the same bits on every path. Only `exp` and
//! `sigmoid` (for `float32`/`float64`, through [`exp`]'s polynomial, the same on every
//! path) and the order of float sums in reductions differ from the scalar reference,
//! within the bounds documented there.

mod exp;
pub mod loops;
mod threads;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_kernels;

pub use exp::{exp_f32, exp_f64, sigmoid_f32, sigmoid_f64};
pub use threads::{parallel_chunks_mut, pool, PARALLEL_MIN_ELEMENTS};

use super::elementwise::{Arith, Unary};
use super::lanes::Lane;
use super::KernelCx;
use crate::dtype::{DType, Element};
use crate::scalar::{Num, Real};
use crate::stats::{self, Counter};
use std::cell::Cell;
use std::sync::OnceLock;

/// An instruction set the kernels have loops for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    /// AVX-512 F, VL and BW (with AVX2 and FMA).
    Avx512,
    /// AVX2 and FMA.
    Avx2,
    /// Whatever the compilation target guarantees (SSE2 on x86-64).
    Portable,
}

impl Isa {
    fn rank(self) -> u8 {
        match self {
            Isa::Portable => 0,
            Isa::Avx2 => 1,
            Isa::Avx512 => 2,
        }
    }

    /// The lower of two instruction sets.
    fn min(self, other: Isa) -> Isa {
        if self.rank() <= other.rank() {
            self
        } else {
            other
        }
    }

    /// The name `RELAX_SIMD` takes.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "avx512",
            Isa::Avx2 => "avx2",
            Isa::Portable => "portable",
        }
    }

    fn parse(s: &str) -> Option<Isa> {
        [Isa::Avx512, Isa::Avx2, Isa::Portable].into_iter().find(|i| i.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// The best instruction set this CPU has, detected once.
pub fn detected() -> Isa {
    static DETECTED: OnceLock<Isa> = OnceLock::new();
    *DETECTED.get_or_init(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Isa {
    let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
    let avx512 = avx2
        && is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512vl")
        && is_x86_feature_detected!("avx512bw");
    if avx512 {
        Isa::Avx512
    } else if avx2 {
        Isa::Avx2
    } else {
        Isa::Portable
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Isa {
    Isa::Portable
}

/// The process's instruction set: the detected one, lowered by the environment
/// variable `RELAX_SIMD=portable|avx2|avx512` (to reproduce a bug on one path; an
/// instruction set the CPU lacks is never picked, an unknown name is ignored).
fn process_isa() -> Isa {
    static PROCESS: OnceLock<Isa> = OnceLock::new();
    *PROCESS.get_or_init(|| {
        let forced = std::env::var("RELAX_SIMD").ok().and_then(|s| Isa::parse(&s));
        forced.map_or(detected(), |f| f.min(detected()))
    })
}

thread_local! {
    static OVERRIDE: Cell<Option<Isa>> = const { Cell::new(None) };
}

/// The instruction set kernels started on this thread use now: [`with_isa`]'s
/// override, else the process's (see `RELAX_SIMD`).
pub fn isa() -> Isa {
    OVERRIDE.with(|o| o.get()).unwrap_or_else(process_isa)
}

/// Runs `f` with the kernels it starts on this thread using `isa`, lowered to what the
/// CPU has (tests run every path in one process this way).
pub fn with_isa<R>(isa: Isa, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Isa>);
    impl Drop for Restore {
        fn drop(&mut self) {
            OVERRIDE.with(|o| o.set(self.0));
        }
    }
    let _restore = Restore(OVERRIDE.with(|o| o.replace(Some(isa.min(detected())))));
    f()
}

/// The instruction sets this CPU can run, best first (always ending with `Portable`).
pub fn available() -> Vec<Isa> {
    [Isa::Avx512, Isa::Avx2, Isa::Portable].into_iter().filter(|i| i.rank() <= detected().rank()).collect()
}

/// An instruction set known to be supported: only [`level`] makes one, so holding a
/// `Level` is the proof [`run`] needs to call a `#[target_feature]` function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level(Isa);

impl Level {
    pub fn isa(self) -> Isa {
        self.0
    }

    /// Whether loops run with AVX2 or AVX-512.
    pub fn vectorized(self) -> bool {
        self.0 != Isa::Portable
    }

    /// The portable level, always supported.
    pub const PORTABLE: Level = Level(Isa::Portable);
}

/// The current instruction set as a [`Level`] (never above [`detected`]).
pub fn level() -> Level {
    Level(isa().min(detected()))
}

/// A loop to run on the best instruction set. `run` must be `#[inline(always)]`, so
/// that it is compiled into each `#[target_feature]` instantiation [`run`] makes.
pub trait Body {
    type Out;
    fn run(self) -> Self::Out;
}

/// Runs `body` compiled for `level`.
#[inline]
pub fn run<B: Body>(level: Level, body: B) -> B::Out {
    match level.0 {
        // SAFETY: a `Level` above `Portable` exists only when `detected()` found the
        // features (`is_x86_feature_detected!` for avx512f/vl/bw, avx2 and fma).
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { run_avx512(body) },
        // SAFETY: as above, `detected()` found avx2 and fma.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { run_avx2(body) },
        _ => body.run(),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx2,fma")]
unsafe fn run_avx512<B: Body>(body: B) -> B::Out {
    body.run()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2<B: Body>(body: B) -> B::Out {
    body.run()
}

/// How one kernel call runs: the instruction set (resolved once, on the calling thread,
/// so that its worker threads use the same) and the threads it may split across.
#[derive(Clone, Copy, Debug)]
pub struct Exec {
    pub level: Level,
    pub threads: usize,
    /// The fewest output elements split across threads.
    pub parallel_min: usize,
}

impl Exec {
    pub fn of(cx: &KernelCx) -> Exec {
        Exec { level: level(), threads: cx.threads.max(1), parallel_min: cx.parallel_min.max(2) }
    }

    /// The current instruction set on one thread.
    pub fn serial() -> Exec {
        Exec { level: level(), threads: 1, parallel_min: PARALLEL_MIN_ELEMENTS }
    }

    /// Whether an output of `n` elements is split across threads.
    pub fn splits(self, n: usize) -> bool {
        self.threads > 1 && n >= self.parallel_min
    }

    /// Counts the kernel call that ran `n` elements: `Vectorized` when its loops ran
    /// with AVX2 or AVX-512, `Threaded` when it was split.
    pub fn record(self, n: usize, threaded: bool) {
        if n > 0 && self.level.vectorized() {
            stats::record(Counter::Vectorized);
        }
        if threaded {
            stats::record(Counter::Threaded);
        }
    }
}

/// `out[j] = sum_p x[p] * w[p, j]` for row-major `w` (`x.len()` rows of `out.len()`),
/// each sum in `p` order, so exactly the in-order matmul of a row vector: the rows of
/// `w` stream through once, which is what a batch-1 layer is bound by.
pub fn axpy_rows<T: FloatElem>(x: &[T], w: &[T], out: &mut [T]) {
    out.fill(T::ZERO);
    let l = level();
    if l.vectorized() {
        stats::record(Counter::Vectorized);
    }
    run(l, loops::AxpyRows { x, w, out })
}

/// Float element types the fused kernels handle.
pub trait FloatElem: crate::scalar::Real + crate::dtype::Element + super::unary_math::Math {}

impl FloatElem for f32 {}
impl FloatElem for f64 {}

/// `out[i] = op(a[i], b[i])`; `a` and `b` are `Lane::Run` (same length as `out`) or
/// `Lane::Splat`. The loop of OP-add and the other arithmetic kernels (the same code
/// for the same op); it records no counter (its caller counts its kernel call).
pub fn binary<T: FloatElem>(op: Arith, out: &mut [T], a: Lane<T>, b: Lane<T>) {
    binary_at(level(), op, out, a, b)
}

/// [`binary`] at `level`.
pub fn binary_at<T: Num>(level: Level, op: Arith, out: &mut [T], a: Lane<T>, b: Lane<T>) {
    use loops::Row2;
    match op {
        Arith::Add => run(level, Row2 { out, a, b, f: &T::add }),
        Arith::Subtract => run(level, Row2 { out, a, b, f: &T::sub }),
        Arith::Multiply => run(level, Row2 { out, a, b, f: &T::mul }),
        Arith::Divide => run(level, Row2 { out, a, b, f: &T::div }),
        Arith::FloorDivide => run(level, Row2 { out, a, b, f: &T::floor_div }),
        Arith::Power => run(level, Row2 { out, a, b, f: &T::pow }),
        Arith::Maximum => run(level, Row2 { out, a, b, f: &T::max_nan }),
        Arith::Minimum => run(level, Row2 { out, a, b, f: &T::min_nan }),
    }
}

/// `acc[i] = op(acc[i], b[i])` when `acc_left`, else `op(b[i], acc[i])`.
pub fn binary_acc<T: FloatElem>(op: Arith, acc: &mut [T], b: Lane<T>, acc_left: bool) {
    binary_acc_at(level(), op, acc, b, acc_left)
}

/// [`binary_acc`] at `level`.
pub fn binary_acc_at<T: Num>(level: Level, op: Arith, acc: &mut [T], b: Lane<T>, left: bool) {
    use loops::Acc2;
    match op {
        Arith::Add => run(level, Acc2 { acc, b, left, f: &T::add }),
        Arith::Subtract => run(level, Acc2 { acc, b, left, f: &T::sub }),
        Arith::Multiply => run(level, Acc2 { acc, b, left, f: &T::mul }),
        Arith::Divide => run(level, Acc2 { acc, b, left, f: &T::div }),
        Arith::FloorDivide => run(level, Acc2 { acc, b, left, f: &T::floor_div }),
        Arith::Power => run(level, Acc2 { acc, b, left, f: &T::pow }),
        Arith::Maximum => run(level, Acc2 { acc, b, left, f: &T::max_nan }),
        Arith::Minimum => run(level, Acc2 { acc, b, left, f: &T::min_nan }),
    }
}

/// `out[i] = op(a[i])`: the loop of OP-exp and the other unary kernels for float32 and
/// float64 (`exp` and `sigmoid` through [`exp_f32`]/[`exp_f64`]).
pub fn unary<T: FloatElem>(op: Unary, out: &mut [T], a: &[T]) {
    unary_at(level(), op, out, a)
}

/// `acc[i] = op(acc[i])`.
pub fn unary_acc<T: FloatElem>(op: Unary, acc: &mut [T]) {
    unary_acc_at(level(), op, acc)
}

/// [`unary`] at `level`.
pub fn unary_at<T: FloatElem>(level: Level, op: Unary, out: &mut [T], a: &[T]) {
    use loops::Map;
    match op {
        Unary::Negative => run(level, Map { out, x: a, f: &T::neg }),
        Unary::Abs => run(level, Map { out, x: a, f: &<T as Num>::abs }),
        Unary::Relu => run(level, Map { out, x: a, f: &|x: T| x.max_nan(T::ZERO) }),
        Unary::Exp | Unary::Sigmoid => {
            let sigmoid = op == Unary::Sigmoid;
            match T::DTYPE {
                DType::F32 => run(level, exp::ExpF32 { out: cast_mut(out), x: Some(cast(a)), sigmoid }),
                _ => run(level, exp::ExpF64 { out: cast_mut(out), x: Some(cast(a)), sigmoid }),
            }
        }
        Unary::Log => run(level, Map { out, x: a, f: &T::ln }),
        Unary::Sqrt => run(level, Map { out, x: a, f: &<T as Real>::sqrt }),
        Unary::Tanh => run(level, Map { out, x: a, f: &T::tanh }),
        m => super::unary_math::math_at(level, m, out, a),
    }
}

/// [`unary_acc`] at `level`.
pub fn unary_acc_at<T: FloatElem>(level: Level, op: Unary, acc: &mut [T]) {
    use loops::MapInPlace;
    match op {
        Unary::Negative => run(level, MapInPlace { acc, f: &T::neg }),
        Unary::Abs => run(level, MapInPlace { acc, f: &<T as Num>::abs }),
        Unary::Relu => run(level, MapInPlace { acc, f: &|x: T| x.max_nan(T::ZERO) }),
        Unary::Exp | Unary::Sigmoid => exp_in_place(level, acc, op == Unary::Sigmoid),
        Unary::Log => run(level, MapInPlace { acc, f: &T::ln }),
        Unary::Sqrt => run(level, MapInPlace { acc, f: &<T as Real>::sqrt }),
        Unary::Tanh => run(level, MapInPlace { acc, f: &T::tanh }),
        m => super::unary_math::math_in_place_at(level, m, acc),
    }
}

/// `x = exp(x)` (or `sigmoid(x)`) over a slice of any float type: the vectorized
/// function for float32 and float64, the scalar one (float32, rounded once) for float16.
pub fn exp_in_place<T: Real>(level: Level, xs: &mut [T], sigmoid: bool) {
    match T::DTYPE {
        DType::F32 => run(level, exp::ExpF32 { out: cast_mut(xs), x: None, sigmoid }),
        DType::F64 => run(level, exp::ExpF64 { out: cast_mut(xs), x: None, sigmoid }),
        _ if sigmoid => run(level, loops::MapInPlace { acc: xs, f: &T::sigmoid }),
        _ => run(level, loops::MapInPlace { acc: xs, f: &T::exp }),
    }
}

/// A slice of `T` as the storage type `U` of the same dtype (`T::DTYPE` was matched).
fn cast<T: Element, U: Element>(x: &[T]) -> &[U] {
    bytemuck::cast_slice(x)
}

fn cast_mut<T: Element, U: Element>(x: &mut [T]) -> &mut [U] {
    bytemuck::cast_slice_mut(x)
}
