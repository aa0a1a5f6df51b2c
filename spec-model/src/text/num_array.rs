//! Large numeric `R.const` literals, read by the lexer straight into compact storage.
//!
//! A constant of 2^24 elements (the LIMIT-constant default) written as nested lists
//! would cost a token, a syntax node and a widened scalar per element, several GiB
//! in all. When the first argument of `R.const(` is a rectangular nested list of at
//! least [`MIN_ELEMENTS`] plain numbers, the lexer reads it into one
//! [`Tok::NumArray`](super::lexer::Tok::NumArray) holding 8 bytes per element; the
//! elaborator then converts it to the dtype's storage. The elements may be optionally
//! signed numbers, `float("nan")`-style floats, or (in a list of booleans alone)
//! `True`/`False`. Any other list (smaller, ragged, empty, with names, integers beyond
//! 64 bits, integers beyond 2^53 beside floats...) takes the ordinary path, which gives
//! element-precise diagnostics.

use crate::grammar::{DataType, Scalar, TensorData};

/// Literals with fewer elements take the ordinary path.
pub const MIN_ELEMENTS: usize = 256;

/// The largest integer every `f64` between it and its negation represents exactly.
const EXACT_IN_F64: i64 = 1 << 53;

/// A rectangular nested list of numbers: row-major values and the shape the
/// nesting says.
#[derive(Debug, PartialEq)]
pub struct NumArray {
    pub shape: Vec<u64>,
    pub values: NumValues,
}

#[derive(Debug, PartialEq)]
pub enum NumValues {
    /// Every element was written as `True` or `False`.
    Bools(Vec<bool>),
    /// Every element was written as an integer.
    Ints(Vec<i64>),
    /// Some element was written as a float. `written_as_int` marks (one bit per
    /// element) the elements written as integers, when there are any; they are
    /// exact because such lists only hold integers within ±2^53.
    Floats { values: Vec<f64>, written_as_int: Option<Vec<u64>> },
}

impl NumArray {
    pub fn len(&self) -> usize {
        match &self.values {
            NumValues::Bools(v) => v.len(),
            NumValues::Ints(v) => v.len(),
            NumValues::Floats { values, .. } => values.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Python's reading: `bool` if every element is a boolean, `float32` if any is
    /// a float, else `int32`.
    pub fn default_dtype(&self) -> DataType {
        match self.values {
            NumValues::Bools(_) => DataType::bool(),
            NumValues::Ints(_) => DataType::int(32),
            NumValues::Floats { .. } => DataType::float(32),
        }
    }

    /// Element `i` as the ordinary path would have read it.
    pub fn scalar(&self, i: usize) -> Scalar {
        match &self.values {
            NumValues::Bools(v) => Scalar::Bool(v[i]),
            NumValues::Ints(v) => Scalar::Int(v[i] as i128),
            NumValues::Floats { values, written_as_int } => match written_as_int {
                Some(bits) if bits[i / 64] >> (i % 64) & 1 == 1 => Scalar::Int(values[i] as i128),
                _ => Scalar::Float(values[i]),
            },
        }
    }

    /// The elements in `dtype`'s storage, or the index of the first element that
    /// does not fit and why.
    pub fn to_tensor_data(&self, dtype: DataType) -> Result<TensorData, (usize, String)> {
        let mut data = TensorData::empty(dtype).ok_or((0, format!("dtype {dtype} has no tensor storage")))?;
        data.reserve(self.len());
        for i in 0..self.len() {
            data.push(self.scalar(i)).map_err(|m| (i, m))?;
        }
        Ok(data)
    }
}

/// Why a list is left to the ordinary path.
pub struct NotFast;

/// The state of a scan: the lexer feeds it brackets, commas and numbers in order.
pub struct Builder {
    /// Items seen so far in each open list.
    open: Vec<u64>,
    /// The length of the lists at each depth, from the first list closed there.
    shape: Vec<Option<u64>>,
    /// The depth at which numbers appear.
    leaf_depth: Option<usize>,
    /// After `[` or `,`: an item may come next; after an item: `,` or `]`.
    expect_item: bool,
    ints: Vec<i64>,
    /// After the first float: the values, and a bit per element written as an
    /// integer (empty while there is none).
    floats: Option<(Vec<f64>, Vec<u64>)>,
    /// Booleans are read only in lists of booleans alone.
    bools: Vec<bool>,
}

impl Builder {
    pub fn new() -> Builder {
        Builder {
            open: Vec::new(),
            shape: Vec::new(),
            leaf_depth: None,
            expect_item: true,
            ints: Vec::new(),
            floats: None,
            bools: Vec::new(),
        }
    }

    pub fn count(&self) -> usize {
        self.floats.as_ref().map_or(self.ints.len(), |(v, _)| v.len()) + self.bools.len()
    }

    /// True once the outermost list has closed.
    pub fn done(&self) -> bool {
        self.open.is_empty() && !self.shape.is_empty()
    }

    fn item(&mut self) -> Result<(), NotFast> {
        if !self.expect_item {
            return Err(NotFast);
        }
        if let Some(n) = self.open.last_mut() {
            *n += 1;
        }
        self.expect_item = false;
        Ok(())
    }

    pub fn open_list(&mut self) -> Result<(), NotFast> {
        if self.done() || self.leaf_depth.is_some_and(|l| self.open.len() >= l) {
            return Err(NotFast);
        }
        if !self.open.is_empty() {
            self.item()?;
        }
        self.open.push(0);
        self.expect_item = true;
        Ok(())
    }

    pub fn close_list(&mut self) -> Result<(), NotFast> {
        let n = self.open.pop().ok_or(NotFast)?;
        let depth = self.open.len();
        if n == 0 {
            return Err(NotFast);
        }
        if self.shape.len() <= depth {
            self.shape.resize(depth + 1, None);
        }
        match self.shape[depth] {
            None => self.shape[depth] = Some(n),
            Some(m) if m == n => {}
            Some(_) => return Err(NotFast),
        }
        self.expect_item = false;
        Ok(())
    }

    pub fn comma(&mut self) -> Result<(), NotFast> {
        if self.expect_item || self.open.is_empty() {
            return Err(NotFast);
        }
        self.expect_item = true;
        Ok(())
    }

    fn leaf(&mut self) -> Result<(), NotFast> {
        let depth = self.open.len();
        if depth == 0 || self.leaf_depth.is_some_and(|l| l != depth) {
            return Err(NotFast);
        }
        self.leaf_depth = Some(depth);
        self.item()
    }

    pub fn boolean(&mut self, v: bool) -> Result<(), NotFast> {
        if self.bools.len() != self.count() {
            return Err(NotFast);
        }
        self.leaf()?;
        self.bools.push(v);
        Ok(())
    }

    pub fn int(&mut self, v: i128) -> Result<(), NotFast> {
        let v = i64::try_from(v).map_err(|_| NotFast)?;
        if !self.bools.is_empty() {
            return Err(NotFast);
        }
        self.leaf()?;
        match &mut self.floats {
            None => self.ints.push(v),
            Some((values, bits)) => {
                if !(-EXACT_IN_F64..=EXACT_IN_F64).contains(&v) {
                    return Err(NotFast);
                }
                mark(bits, values.len());
                values.push(v as f64);
            }
        }
        Ok(())
    }

    pub fn float(&mut self, v: f64) -> Result<(), NotFast> {
        if !self.bools.is_empty() {
            return Err(NotFast);
        }
        self.leaf()?;
        if self.floats.is_none() {
            // The first float: the integers so far become floats, marked as integers.
            if self.ints.iter().any(|i| !(-EXACT_IN_F64..=EXACT_IN_F64).contains(i)) {
                return Err(NotFast);
            }
            let n = self.ints.len();
            let mut bits = Vec::new();
            (0..n).for_each(|i| mark(&mut bits, i));
            let values: Vec<f64> = std::mem::take(&mut self.ints).into_iter().map(|i| i as f64).collect();
            self.floats = Some((values, bits));
        }
        if let Some((values, _)) = &mut self.floats {
            values.push(v);
        }
        Ok(())
    }

    /// The array, once the outermost list has closed.
    pub fn finish(self) -> Result<NumArray, NotFast> {
        let depth = self.leaf_depth.ok_or(NotFast)?;
        if !self.done() || self.shape.len() != depth {
            return Err(NotFast);
        }
        let shape = self.shape.into_iter().collect::<Option<Vec<u64>>>().ok_or(NotFast)?;
        let values = match self.floats {
            None if !self.bools.is_empty() => NumValues::Bools(self.bools),
            None => NumValues::Ints(self.ints),
            Some((values, mut bits)) => {
                let any = !bits.is_empty();
                bits.resize(values.len().div_ceil(64), 0);
                NumValues::Floats { values, written_as_int: any.then_some(bits) }
            }
        };
        Ok(NumArray { shape, values })
    }
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// The value of `float(text)` for the non-finite spellings `.rx` accepts:
/// `"nan"`, `"inf"`, `"+inf"`, `"infinity"`, `"-inf"`, `"-infinity"` (any case,
/// surrounding spaces ignored).
pub fn special_float(text: &str) -> Option<f64> {
    match text.trim().to_ascii_lowercase().as_str() {
        "nan" => Some(f64::NAN),
        "inf" | "+inf" | "infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

fn mark(bits: &mut Vec<u64>, i: usize) {
    if bits.len() <= i / 64 {
        bits.resize(i / 64 + 1, 0);
    }
    bits[i / 64] |= 1 << (i % 64);
}
