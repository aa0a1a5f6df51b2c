//! Generators of random Types and StructInfo (with symbolic shapes) for the property
//! tests, and random weakenings/strengthenings that follow the subtyping rules
//! (SUB-3..6) and the `<<:` rules (SI-SP-3..8) by construction.
#![allow(dead_code)]

use quickcheck::{Arbitrary, Gen, QuickCheck};

/// Cases per property (the issue asks for at least 1,000).
pub const CASES: u64 = 2_000;

/// The property runner every test here uses.
pub fn qc() -> QuickCheck {
    QuickCheck::new().tests(CASES).max_tests(CASES * 2)
}
use spec_model::grammar::{
    DataType, DeriveFunc, Expr, ExprKind, PrimBinOp, PrimExpr, PrimVar, StructInfo, StructInfoKind, Type, Var,
};
use spec_model::struct_info::{SiEnv, SyntacticProver};
use spec_model::Span;

thread_local! {
    /// The shape variables random StructInfo use: `n`, `m`.
    static VARS: Vec<PrimVar> = vec![PrimVar::shape_var("n"), PrimVar::shape_var("m")];
}

pub fn vars() -> Vec<PrimVar> {
    VARS.with(|v| v.clone())
}

fn pick<T: Clone>(g: &mut Gen, xs: &[T]) -> T {
    g.choose(xs).expect("non-empty").clone()
}

fn coin(g: &mut Gen) -> bool {
    bool::arbitrary(g)
}

fn one_in(g: &mut Gen, n: u32) -> bool {
    u32::arbitrary(g) % n == 0
}

fn dtype(g: &mut Gen) -> DataType {
    pick(g, &[DataType::void(), DataType::FLOAT32, DataType::INT32, DataType::bool()])
}

fn known_dtype(g: &mut Gen) -> DataType {
    pick(g, &[DataType::FLOAT32, DataType::INT32, DataType::bool()])
}

fn ndim(g: &mut Gen) -> i64 {
    pick(g, &[-1, 0, 1, 2])
}

// ---------------------------------------------------------------- types

/// A random type of nesting depth at most `depth`.
pub fn gen_type(g: &mut Gen, depth: u32) -> Type {
    let k = u32::arbitrary(g) % if depth == 0 { 4 } else { 6 };
    match k {
        0 => Type::DynTensor { ndim: ndim(g), dtype: dtype(g) },
        1 => Type::Shape { ndim: ndim(g) },
        2 => Type::Object,
        3 => Type::PackedFunc,
        4 => Type::Tuple((0..u32::arbitrary(g) % 3).map(|_| gen_type(g, depth - 1)).collect()),
        _ => Type::Func {
            arg_types: (0..u32::arbitrary(g) % 3).map(|_| gen_type(g, depth - 1)).collect(),
            ret_type: Box::new(gen_type(g, depth - 1)),
            pure: coin(g),
        },
    }
}

/// A random supertype of `t`, built by the subtyping rules.
pub fn weaken(g: &mut Gen, t: &Type) -> Type {
    if one_in(g, 6) {
        return Type::Object; // SUB-3
    }
    match t {
        // SUB-4.1, SUB-4.2
        Type::DynTensor { ndim, dtype } => Type::DynTensor {
            ndim: if coin(g) { -1 } else { *ndim },
            dtype: if coin(g) { DataType::void() } else { *dtype },
        },
        Type::Shape { ndim } => Type::Shape { ndim: if coin(g) { -1 } else { *ndim } },
        // SUB-5
        Type::Tuple(fs) => Type::Tuple(fs.iter().map(|f| weaken(g, f)).collect()),
        // SUB-6.1, SUB-6.2
        Type::Func { arg_types, ret_type, pure } => Type::Func {
            arg_types: arg_types.iter().map(|a| strengthen(g, a)).collect(),
            ret_type: Box::new(weaken(g, ret_type)),
            pure: *pure && coin(g),
        },
        Type::Object | Type::PackedFunc => t.clone(),
    }
}

/// A random subtype of `t`, built by the subtyping rules.
pub fn strengthen(g: &mut Gen, t: &Type) -> Type {
    match t {
        Type::Object => gen_type(g, 2),
        Type::DynTensor { ndim, dtype } => Type::DynTensor {
            ndim: if *ndim == -1 { ndim_any(g) } else { *ndim },
            dtype: if dtype.is_void() { dtype_any(g) } else { *dtype },
        },
        Type::Shape { ndim } => Type::Shape { ndim: if *ndim == -1 { ndim_any(g) } else { *ndim } },
        Type::Tuple(fs) => Type::Tuple(fs.iter().map(|f| strengthen(g, f)).collect()),
        Type::Func { arg_types, ret_type, pure } => Type::Func {
            arg_types: arg_types.iter().map(|a| weaken(g, a)).collect(),
            ret_type: Box::new(strengthen(g, ret_type)),
            pure: *pure || coin(g),
        },
        Type::PackedFunc => Type::PackedFunc,
    }
}

fn ndim_any(g: &mut Gen) -> i64 {
    ndim(g)
}

fn dtype_any(g: &mut Gen) -> DataType {
    dtype(g)
}

/// A random type wrapper for quickcheck.
#[derive(Clone, Debug)]
pub struct AType(pub Type);

impl Arbitrary for AType {
    fn arbitrary(g: &mut Gen) -> AType {
        AType(gen_type(g, 2))
    }
}

/// Types from a small space (so that random pairs are often related).
#[derive(Clone, Debug)]
pub struct SmallType(pub Type);

impl Arbitrary for SmallType {
    fn arbitrary(g: &mut Gen) -> SmallType {
        fn small(g: &mut Gen, depth: u32) -> Type {
            match u32::arbitrary(g) % if depth == 0 { 3 } else { 5 } {
                0 => {
                    Type::DynTensor { ndim: pick(g, &[-1, 1]), dtype: pick(g, &[DataType::void(), DataType::FLOAT32]) }
                }
                1 => Type::Object,
                2 => Type::Shape { ndim: pick(g, &[-1, 1]) },
                3 => Type::Tuple(vec![small(g, depth - 1)]),
                _ => Type::Func {
                    arg_types: vec![small(g, depth - 1)],
                    ret_type: Box::new(small(g, depth - 1)),
                    pure: coin(g),
                },
            }
        }
        SmallType(small(g, 2))
    }
}

// ---------------------------------------------------------------- StructInfo

fn si(kind: StructInfoKind) -> StructInfo {
    StructInfo::new(kind, Span::SYNTHETIC)
}

/// A random dimension: a constant, a shape variable, or a little arithmetic.
pub fn dim(g: &mut Gen) -> PrimExpr {
    let vs = vars();
    let v = PrimExpr::var(&pick(g, &vs));
    match u32::arbitrary(g) % 6 {
        0 | 1 => PrimExpr::int(pick(g, &[0, 1, 2, 3])),
        2 | 3 => v,
        4 => PrimExpr::binary(PrimBinOp::Add, v, PrimExpr::int(1)),
        _ => PrimExpr::binary(PrimBinOp::Mul, v, PrimExpr::int(2)),
    }
}

fn dims(g: &mut Gen, n: i64) -> Vec<PrimExpr> {
    (0..n).map(|_| dim(g)).collect()
}

fn shape_expr(ds: Vec<PrimExpr>) -> Expr {
    Expr::new(ExprKind::ShapeExpr(ds), Span::SYNTHETIC)
}

fn tensor(g: &mut Gen, ndim: i64, dtype: DataType) -> StructInfo {
    let shape = (ndim != -1 && coin(g)).then(|| shape_expr(dims(g, ndim)));
    si(StructInfoKind::Tensor { shape, dtype, ndim })
}

fn shape(g: &mut Gen, ndim: i64) -> StructInfo {
    let values = (ndim != -1 && coin(g)).then(|| dims(g, ndim));
    si(StructInfoKind::Shape { values, ndim })
}

fn derive_func(g: &mut Gen) -> DeriveFunc {
    pick(g, &[DeriveFunc::Default, DeriveFunc::Empty])
}

/// A random tensor StructInfo (rank 0..3 or unknown, symbolic shape or none).
pub fn gen_tensor(g: &mut Gen) -> StructInfo {
    let (n, d) = (pick(g, &[-1, 0, 1, 2, 3]), dtype(g));
    tensor(g, n, d)
}

/// A random StructInfo of nesting depth at most `depth`, with symbolic shapes.
pub fn gen_si(g: &mut Gen, depth: u32) -> StructInfo {
    match u32::arbitrary(g) % if depth == 0 { 4 } else { 7 } {
        0 => {
            let (n, d) = (ndim(g), dtype(g));
            tensor(g, n, d)
        }
        1 => {
            let n = ndim(g);
            shape(g, n)
        }
        2 => StructInfo::object(),
        3 => si(StructInfoKind::Prim {
            dtype: pick(g, &[DataType::INT64, DataType::FLOAT32, DataType::bool()]),
            value: None,
        }),
        4 => si(StructInfoKind::Tuple { fields: (0..u32::arbitrary(g) % 3).map(|_| gen_si(g, depth - 1)).collect() }),
        5 => si(StructInfoKind::Func {
            params: Some((0..u32::arbitrary(g) % 3).map(|_| gen_si(g, depth - 1)).collect()),
            ret: gen_si(g, depth - 1),
            derive_func: None,
            purity: coin(g),
        }),
        _ => si(StructInfoKind::Func {
            params: None,
            ret: StructInfo::object(),
            derive_func: Some(derive_func(g)),
            purity: false,
        }),
    }
}

/// A random StructInfo that `s` is more specific than (`s <<: result`), by SI-SP-3..8.
pub fn sweaken(g: &mut Gen, s: &StructInfo) -> StructInfo {
    if one_in(g, 6) {
        return StructInfo::object(); // SI-SP-3
    }
    match &*s.kind {
        StructInfoKind::Tensor { shape, dtype, ndim } => match u32::arbitrary(g) % 4 {
            // SI-SP-4.1
            0 => si(StructInfoKind::Tensor { shape: None, dtype: *dtype, ndim: -1 }),
            // SI-SP-4.2
            1 => si(StructInfoKind::Tensor { shape: shape.clone(), dtype: DataType::void(), ndim: *ndim }),
            // SI-SP-4.3
            2 => si(StructInfoKind::Tensor { shape: None, dtype: *dtype, ndim: *ndim }),
            _ => s.clone(),
        },
        StructInfoKind::Shape { ndim, .. } => match u32::arbitrary(g) % 3 {
            0 => si(StructInfoKind::Shape { values: None, ndim: -1 }), // SI-SP-5.1
            1 => si(StructInfoKind::Shape { values: None, ndim: *ndim }), // SI-SP-5.2
            _ => s.clone(),
        },
        // SI-SP-6
        StructInfoKind::Tuple { fields } => {
            si(StructInfoKind::Tuple { fields: fields.iter().map(|f| sweaken(g, f)).collect() })
        }
        // SI-SP-7.3 (purity as SUB-6.1)
        StructInfoKind::Func { params: Some(ps), ret, purity, .. } => si(StructInfoKind::Func {
            params: Some(ps.iter().map(|p| sstrengthen(g, p)).collect()),
            ret: sweaken(g, ret),
            derive_func: None,
            purity: *purity && coin(g),
        }),
        // SI-SP-7.1
        StructInfoKind::Func { params: None, purity, .. } if coin(g) => si(StructInfoKind::Func {
            params: None,
            ret: StructInfo::object(),
            derive_func: Some(DeriveFunc::Empty),
            purity: *purity && coin(g),
        }),
        _ => s.clone(),
    }
}

/// A random StructInfo more specific than `s` (`result <<: s`).
pub fn sstrengthen(g: &mut Gen, s: &StructInfo) -> StructInfo {
    match &*s.kind {
        StructInfoKind::Object => gen_si(g, 2),
        StructInfoKind::Tensor { shape, dtype, ndim } => {
            let dtype = if dtype.is_void() && coin(g) { known_dtype(g) } else { *dtype };
            let ndim = if *ndim == -1 { pick(g, &[-1, 0, 1, 2]) } else { *ndim };
            match shape {
                Some(sh) => si(StructInfoKind::Tensor { shape: Some(sh.clone()), dtype, ndim }),
                None => tensor(g, ndim, dtype),
            }
        }
        StructInfoKind::Shape { values, ndim } => {
            let ndim = if *ndim == -1 { pick(g, &[-1, 0, 1, 2]) } else { *ndim };
            match values {
                Some(vs) => si(StructInfoKind::Shape { values: Some(vs.clone()), ndim }),
                None => shape(g, ndim),
            }
        }
        StructInfoKind::Tuple { fields } => {
            si(StructInfoKind::Tuple { fields: fields.iter().map(|f| sstrengthen(g, f)).collect() })
        }
        StructInfoKind::Func { params: Some(ps), ret, purity, .. } => si(StructInfoKind::Func {
            params: Some(ps.iter().map(|p| sweaken(g, p)).collect()),
            ret: sstrengthen(g, ret),
            derive_func: None,
            purity: *purity || coin(g),
        }),
        StructInfoKind::Func { params: None, derive_func, purity, .. } => {
            let weakest = *derive_func == Some(DeriveFunc::Empty);
            si(StructInfoKind::Func {
                params: None,
                ret: StructInfo::object(),
                derive_func: if weakest { Some(derive_func_any(g)) } else { derive_func.clone() },
                purity: *purity || coin(g),
            })
        }
        StructInfoKind::Prim { .. } => s.clone(),
    }
}

fn derive_func_any(g: &mut Gen) -> DeriveFunc {
    derive_func(g)
}

/// A random StructInfo wrapper for quickcheck.
#[derive(Clone, Debug)]
pub struct ASinfo(pub StructInfo);

impl Arbitrary for ASinfo {
    fn arbitrary(g: &mut Gen) -> ASinfo {
        ASinfo(gen_si(g, 2))
    }
}

/// StructInfo from a small space (random pairs are often related).
#[derive(Clone, Debug)]
pub struct SmallSinfo(pub StructInfo);

impl Arbitrary for SmallSinfo {
    fn arbitrary(g: &mut Gen) -> SmallSinfo {
        fn small(g: &mut Gen, depth: u32) -> StructInfo {
            let small_dim = |g: &mut Gen| {
                let vs = vars();
                if coin(g) {
                    PrimExpr::int(pick(g, &[1, 2]))
                } else {
                    PrimExpr::var(&vs[0])
                }
            };
            match u32::arbitrary(g) % if depth == 0 { 3 } else { 5 } {
                0 => {
                    let shape = match u32::arbitrary(g) % 3 {
                        0 => None,
                        _ => Some(shape_expr(vec![small_dim(g)])),
                    };
                    let ndim = if shape.is_none() && coin(g) { -1 } else { 1 };
                    si(StructInfoKind::Tensor { shape, dtype: pick(g, &[DataType::void(), DataType::FLOAT32]), ndim })
                }
                1 => StructInfo::object(),
                2 => {
                    let values = coin(g).then(|| vec![small_dim(g)]);
                    let ndim = if values.is_none() && coin(g) { -1 } else { 1 };
                    si(StructInfoKind::Shape { values, ndim })
                }
                3 => si(StructInfoKind::Tuple { fields: vec![small(g, depth - 1)] }),
                _ => si(StructInfoKind::Func {
                    params: Some(vec![small(g, depth - 1)]),
                    ret: small(g, depth - 1),
                    derive_func: None,
                    purity: coin(g),
                }),
            }
        }
        SmallSinfo(small(g, 2))
    }
}

/// Runs `f` with an environment where `n` and `m` are in scope (or none, `scoped = false`).
pub fn with_env<R>(scoped: bool, f: impl FnOnce(&SiEnv) -> R) -> R {
    let shapes: imbl::HashSet<PrimVar> = if scoped { vars().into_iter().collect() } else { imbl::HashSet::new() };
    let none = |_: &Var| None;
    let env = SiEnv { prover: &SyntacticProver, shapes, var_values: &none };
    f(&env)
}
