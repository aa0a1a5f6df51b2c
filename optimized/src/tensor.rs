//! Tensors: a dtype, a shape and one contiguous buffer of row-major elements. A tensor
//! is shared by reference (`Rc<Tensor>`): a binding, a tuple field or a capture is an
//! alias, and a packed function that writes through one is seen through all of them.

use crate::buffer::{Buffer, Memory, OverBudget};
use crate::dtype::{DType, Element};
use half::f16;
use spec_model::grammar::{NDArray, TensorData};
use std::cell::{Ref, RefCell, RefMut};
use std::rc::Rc;

pub struct Tensor {
    dtype: DType,
    shape: Box<[u64]>,
    numel: usize,
    data: RefCell<Buffer>,
}

/// The element count of `shape`, if it fits in `usize` (0 whenever a dimension is 0,
/// however large the others).
pub fn element_count(shape: &[u64]) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
}

impl Tensor {
    /// A zero-filled tensor (for `bool`, all false), if the budget allows it.
    pub fn zeros(dtype: DType, shape: &[u64], memory: &Rc<Memory>) -> Result<Tensor, OverBudget> {
        let numel = element_count(shape);
        let bytes = numel.and_then(|n| n.checked_mul(dtype.size()));
        let data = Buffer::zeroed(bytes, memory)?;
        Ok(Tensor { dtype, shape: shape.into(), numel: numel.unwrap_or(0), data: RefCell::new(data) })
    }

    /// A tensor whose every element the caller will write (its contents start
    /// unspecified), if the budget allows it.
    pub fn for_overwrite(dtype: DType, shape: &[u64], memory: &Rc<Memory>) -> Result<Tensor, OverBudget> {
        let numel = element_count(shape);
        let bytes = numel.and_then(|n| n.checked_mul(dtype.size()));
        let data = Buffer::for_overwrite(bytes, memory)?;
        Ok(Tensor { dtype, shape: shape.into(), numel: numel.unwrap_or(0), data: RefCell::new(data) })
    }

    /// A tensor of the elements `values` (row-major); `T` must store `dtype`.
    pub fn from_slice<T: Element>(
        dtype: DType,
        shape: &[u64],
        values: &[T],
        memory: &Rc<Memory>,
    ) -> Result<Tensor, OverBudget> {
        debug_assert_eq!(std::mem::size_of::<T>(), dtype.size());
        let t = Tensor::zeros(dtype, shape, memory)?;
        let n = t.numel.min(values.len());
        t.data.borrow_mut().as_mut_slice::<T>(n).copy_from_slice(&values[..n]);
        Ok(t)
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn numel(&self) -> usize {
        self.numel
    }

    /// The buffer, for reading (a kernel reading a tensor while another writes it is an
    /// aliasing error the caller reports).
    pub fn data(&self) -> Option<Ref<'_, Buffer>> {
        self.data.try_borrow().ok()
    }

    pub fn data_mut(&self) -> Option<RefMut<'_, Buffer>> {
        self.data.try_borrow_mut().ok()
    }

    /// The elements as `T`s; `T` must be the storage type of the dtype.
    pub fn elements<T: Element>(&self) -> Option<Ref<'_, [T]>> {
        let n = self.numel;
        self.data().map(|b| Ref::map(b, |b| b.as_slice::<T>(n)))
    }

    pub fn elements_mut<T: Element>(&self) -> Option<RefMut<'_, [T]>> {
        let n = self.numel;
        self.data_mut().map(|b| RefMut::map(b, |b| b.as_mut_slice::<T>(n)))
    }

    /// A new tensor with this one's contents.
    pub fn deep_copy(&self, memory: &Rc<Memory>) -> Result<Tensor, OverBudget> {
        let t = Tensor::for_overwrite(self.dtype, &self.shape, memory)?;
        if let (Some(src), Some(mut dst)) = (self.data(), t.data_mut()) {
            dst.bytes_mut().copy_from_slice(src.bytes());
        }
        Ok(t)
    }

    /// The tensor of a constant's array (`None` if the array is malformed: data and
    /// shape disagree).
    pub fn from_ndarray(a: &NDArray, memory: &Rc<Memory>) -> Result<Option<Tensor>, OverBudget> {
        let Some(dtype) = DType::of(a.dtype) else { return Ok(None) };
        if element_count(&a.shape) != Some(a.data.len()) {
            return Ok(None);
        }
        let t = match &a.data {
            TensorData::Bool(v) => {
                let bytes: Vec<u8> = v.iter().map(|b| u8::from(*b)).collect();
                Tensor::from_slice(dtype, &a.shape, &bytes, memory)?
            }
            TensorData::I8(v) => Tensor::from_slice(dtype, &a.shape, v, memory)?,
            TensorData::I16(v) => Tensor::from_slice(dtype, &a.shape, v, memory)?,
            TensorData::I32(v) => Tensor::from_slice(dtype, &a.shape, v, memory)?,
            TensorData::I64(v) => Tensor::from_slice(dtype, &a.shape, v, memory)?,
            TensorData::U8(v) => Tensor::from_slice(dtype, &a.shape, v, memory)?,
            TensorData::U16(v) => Tensor::from_slice(dtype, &a.shape, v, memory)?,
            TensorData::U32(v) => Tensor::from_slice(dtype, &a.shape, v, memory)?,
            TensorData::U64(v) => Tensor::from_slice(dtype, &a.shape, v, memory)?,
            TensorData::F16(v) => Tensor::from_slice(dtype, &a.shape, v, memory)?,
            TensorData::F32(v) => Tensor::from_slice(dtype, &a.shape, v, memory)?,
            TensorData::F64(v) => Tensor::from_slice(dtype, &a.shape, v, memory)?,
        };
        if t.dtype != dtype {
            return Ok(None);
        }
        Ok(Some(t))
    }

    /// The tensor's contents as an array (for printing and comparing with the oracle).
    pub fn to_ndarray(&self) -> Option<NDArray> {
        let n = self.numel;
        let b = self.data()?;
        let data = match self.dtype {
            DType::Bool => TensorData::Bool(b.as_slice::<u8>(n).iter().map(|x| *x != 0).collect()),
            DType::I8 => TensorData::I8(b.as_slice::<i8>(n).to_vec()),
            DType::I16 => TensorData::I16(b.as_slice::<i16>(n).to_vec()),
            DType::I32 => TensorData::I32(b.as_slice::<i32>(n).to_vec()),
            DType::I64 => TensorData::I64(b.as_slice::<i64>(n).to_vec()),
            DType::U8 => TensorData::U8(b.as_slice::<u8>(n).to_vec()),
            DType::U16 => TensorData::U16(b.as_slice::<u16>(n).to_vec()),
            DType::U32 => TensorData::U32(b.as_slice::<u32>(n).to_vec()),
            DType::U64 => TensorData::U64(b.as_slice::<u64>(n).to_vec()),
            DType::F16 => TensorData::F16(b.as_slice::<f16>(n).to_vec()),
            DType::F32 => TensorData::F32(b.as_slice::<f32>(n).to_vec()),
            DType::F64 => TensorData::F64(b.as_slice::<f64>(n).to_vec()),
        };
        Some(NDArray { dtype: self.dtype.data_type(), shape: self.shape.to_vec(), data })
    }

    /// Element `i` widened to `f64` (integers exactly up to 2^53; for tests).
    #[cfg(test)]
    pub fn get_f64(&self, i: usize) -> Option<f64> {
        if i >= self.numel {
            return None;
        }
        let b = self.data()?;
        Some(crate::with_num!(self.dtype, T => crate::scalar::to_f64(b.as_slice::<T>(self.numel)[i])))
    }
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tensor({}, {:?})", self.dtype, self.shape)
    }
}
