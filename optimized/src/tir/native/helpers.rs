//! Rust functions that native PrimFunc code calls: the math intrinsics (the same Rust
//! functions the engine's TIR interpreter uses, so results are bit-identical to it),
//! `float16` conversions, and scratch-buffer allocation. Each is `extern "C"`; the code
//! generator calls them through their addresses.

use super::Host;
use crate::dtype::DType;
use crate::tensor::Tensor;
use half::f16;

pub extern "C" fn f16_round_f32(x: f32) -> f32 {
    f16::from_f32(x).to_f32()
}
pub extern "C" fn f16_round_f64(x: f64) -> f32 {
    crate::dtype::f16_of_f64(x).to_f32()
}
/// A stored `float16` (its bits, zero-extended) as the `f32` that holds it in registers.
pub extern "C" fn f16_load(bits: u32) -> f32 {
    f16::from_bits(bits as u16).to_f32()
}
/// An `f32` holding a `float16` value, as the bits to store.
pub extern "C" fn f16_store(x: f32) -> u32 {
    u32::from(f16::from_f32(x).to_bits())
}

pub extern "C" fn exp64(x: f64) -> f64 {
    x.exp()
}
pub extern "C" fn log64(x: f64) -> f64 {
    x.ln()
}
pub extern "C" fn tanh64(x: f64) -> f64 {
    x.tanh()
}
pub extern "C" fn sigmoid64(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}
pub extern "C" fn pow64(x: f64, y: f64) -> f64 {
    x.powf(y)
}
pub extern "C" fn fmod64(x: f64, y: f64) -> f64 {
    x % y
}
pub extern "C" fn exp32(x: f32) -> f32 {
    x.exp()
}
pub extern "C" fn log32(x: f32) -> f32 {
    x.ln()
}
pub extern "C" fn tanh32(x: f32) -> f32 {
    x.tanh()
}
pub extern "C" fn sigmoid32(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}
pub extern "C" fn pow32(x: f32, y: f32) -> f32 {
    x.powf(y)
}
pub extern "C" fn rsqrt64(x: f64) -> f64 {
    1.0 / x.sqrt()
}
pub extern "C" fn sin64(x: f64) -> f64 {
    x.sin()
}
pub extern "C" fn cos64(x: f64) -> f64 {
    x.cos()
}
pub extern "C" fn erf64(x: f64) -> f64 {
    libm::erf(x)
}
pub extern "C" fn rsqrt32(x: f32) -> f32 {
    1.0 / x.sqrt()
}
pub extern "C" fn sin32(x: f32) -> f32 {
    x.sin()
}
pub extern "C" fn cos32(x: f32) -> f32 {
    x.cos()
}
pub extern "C" fn erf32(x: f32) -> f32 {
    libm::erff(x)
}

/// `T.alloc_buffer` of `rank` dimensions at `dims` for buffer slot `slot`: fresh zeroed
/// storage from the call's memory budget, kept by the host until the call ends (the
/// slot's previous storage is dropped, as the interpreter drops it). Null when the
/// budget is exceeded; the error is left in the host.
///
/// # Safety
/// `host` is the live host of the running call and `dims` points to `rank` dimensions.
pub unsafe extern "C" fn alloc(host: *mut Host, slot: u32, dims: *const u64, rank: u32) -> *mut u8 {
    let host = unsafe { &mut *host };
    let dims = unsafe { std::slice::from_raw_parts(dims, rank as usize) };
    let Some(&(_, dtype)) = host.locals_dtype.iter().find(|(s, _)| *s == slot) else {
        return std::ptr::null_mut();
    };
    match Tensor::zeros(dtype, dims, &host.memory) {
        Ok(t) => {
            let p = t.data_mut().map_or(std::ptr::null_mut(), |mut b| b.bytes_mut().as_mut_ptr());
            // The slot's previous storage can no longer be reached: freed after the new
            // one is taken, as the interpreter frees it.
            let previous = host.locals.iter().position(|(s, _)| *s == slot);
            host.locals.push((slot, t));
            if let Some(i) = previous {
                host.locals.swap_remove(i);
            }
            p
        }
        Err(e) => {
            host.over_budget = Some(e);
            std::ptr::null_mut()
        }
    }
}

/// Counts `bytes` of a scratch buffer that native code keeps on its stack for slot
/// `slot` against the call's memory budget, as the interpreter counts its storage
/// (the slot's previous storage is released after). 1 when the budget allows them;
/// else 0, the error left in the host.
///
/// # Safety
/// `host` is the live host of the running call.
pub unsafe extern "C" fn reserve(host: *mut Host, slot: u32, bytes: u64) -> u32 {
    let host = unsafe { &mut *host };
    match host.memory.reserve(bytes as usize) {
        Ok(r) => {
            host.reserved.retain(|(s, _)| *s != slot);
            host.reserved.push((slot, r));
            1
        }
        Err(e) => {
            host.over_budget = Some(e);
            0
        }
    }
}

/// Counts a vectorized loop entered (`fuzz-smoke` shows the count).
pub extern "C" fn vector_loop_entered() {
    crate::stats::record(crate::stats::Counter::TirVectorLoops);
}

/// The bytes of one element of `d` in storage.
pub fn elem_size(d: DType) -> i64 {
    match d {
        DType::Bool | DType::I8 | DType::U8 => 1,
        DType::I16 | DType::U16 | DType::F16 => 2,
        DType::I32 | DType::U32 | DType::F32 => 4,
        DType::I64 | DType::U64 | DType::F64 => 8,
    }
}
