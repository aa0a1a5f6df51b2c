//! Element arithmetic shared by the kernels: conversions between element types and
//! the per-dtype operations (integer arithmetic wraps; floats follow IEEE-754; `f16`
//! computes through `f32`).

use half::f16;

/// Widening to `f64` (exact for every element type but 64-bit integers beyond 2^53).
pub fn to_f64<T: ToF64>(x: T) -> f64 {
    x.to_f64()
}

pub trait ToF64: Copy {
    fn to_f64(self) -> f64;
}

macro_rules! to_f64_as {
    ($($t:ty),*) => {
        $(impl ToF64 for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }
        })*
    };
}
to_f64_as!(u8, i8, i16, i32, i64, u16, u32, u64, f32, f64);

impl ToF64 for f16 {
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
}
