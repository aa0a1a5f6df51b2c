//! The generator's configuration: size limits and feature switches. `Config`
//! implements `Arbitrary`, so a fuzz target can draw the configuration from its input
//! too (swarm testing: each run turns some features off, which lets the others grow).

use arbitrary::{Arbitrary, Unstructured};

/// Which constructs the generator may use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Features {
    pub dataflow: bool,
    pub if_: bool,
    pub closures: bool,
    /// Global helper functions, and a recursive one with a depth counter.
    pub globals: bool,
    pub tuples: bool,
    pub match_cast: bool,
    /// match_casts that fail at run time on purpose (`MatchCastFailed` outcomes).
    pub match_cast_failures: bool,
    /// PrimValue and StringImm leaves.
    pub prim_values: bool,
    /// Shapes with symbolic dimensions and ShapeExprs with arithmetic.
    pub symbolic: bool,
    pub ops: bool,
    pub call_tir: bool,
    /// TIR kernels that index out of bounds (one past the end, -1, a block axis
    /// outside its domain), sometimes behind a data-dependent guard (`OpError` outcomes).
    pub tir_oob: bool,
    pub packed: bool,
    /// Annotations on binding variables (else the checker derives them).
    pub annotations: bool,
}

impl Features {
    pub const ALL: Features = Features {
        dataflow: true,
        if_: true,
        closures: true,
        globals: true,
        tuples: true,
        match_cast: true,
        match_cast_failures: false,
        prim_values: true,
        symbolic: true,
        ops: true,
        call_tir: true,
        tir_oob: false,
        packed: true,
        annotations: true,
    };
}

/// The most elements of a tensor with `large_tensors`.
pub const LARGE_ELEMS: u64 = 1 << 14;

/// Limits and switches of [`crate::generate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Global Relax functions besides `main` (at most).
    pub max_functions: usize,
    /// Bindings per block (at most).
    pub max_bindings: usize,
    /// Nesting of SeqExprs, Ifs and closures.
    pub max_depth: usize,
    /// Elements of any tensor the program creates or takes.
    pub max_tensor_elems: u64,
    /// Rank of generated tensors (at most).
    pub max_rank: usize,
    /// The largest value of an entry shape variable (dimensions start at 1).
    pub max_dim: i64,
    pub features: Features,
    /// Tensors past the vector widths and the engine's threading threshold: some literal
    /// dimensions between 17 and 300 (every vector tail), up to 2^14 elements.
    pub large_tensors: bool,
    /// Chains of 3 to 10 elementwise float operators in dataflow blocks, each result
    /// used once by the next (the engine fuses them and reuses their buffers).
    pub long_chains: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_functions: 3,
            max_bindings: 8,
            max_depth: 3,
            max_tensor_elems: 256,
            max_rank: 3,
            max_dim: 4,
            features: Features::ALL,
            large_tensors: false,
            long_chains: false,
        }
    }
}

impl Config {
    /// The hard ceilings any configuration is clamped to (so arbitrary bytes cannot ask
    /// for a program that takes minutes to evaluate).
    pub fn clamped(mut self) -> Config {
        self.max_functions = self.max_functions.min(5);
        self.max_bindings = self.max_bindings.clamp(1, 16);
        self.max_depth = self.max_depth.min(4);
        self.max_tensor_elems = self.max_tensor_elems.clamp(1, if self.large_tensors { LARGE_ELEMS } else { 4096 });
        self.max_rank = self.max_rank.min(4);
        self.max_dim = self.max_dim.clamp(1, 8);
        self
    }
}

impl<'a> Arbitrary<'a> for Features {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        // Each feature is on with probability 3/4, so most runs keep most features.
        let mut on = || -> arbitrary::Result<bool> { Ok(u.int_in_range(0u8..=3)? != 0) };
        Ok(Features {
            dataflow: on()?,
            if_: on()?,
            closures: on()?,
            globals: on()?,
            tuples: on()?,
            match_cast: on()?,
            match_cast_failures: !on()?,
            prim_values: on()?,
            symbolic: on()?,
            ops: on()?,
            call_tir: on()?,
            tir_oob: !on()?,
            packed: on()?,
            annotations: on()?,
        })
    }
}

impl<'a> Arbitrary<'a> for Config {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Config {
            max_functions: u.int_in_range(0..=4)?,
            max_bindings: u.int_in_range(1..=12)?,
            max_depth: u.int_in_range(0..=4)?,
            max_tensor_elems: u.int_in_range(1..=1024)?,
            max_rank: u.int_in_range(0..=4)?,
            max_dim: u.int_in_range(1..=6)?,
            features: Features::arbitrary(u)?,
            large_tensors: false,
            long_chains: u.int_in_range(0u8..=3)? == 0,
        }
        .clamped())
    }
}
