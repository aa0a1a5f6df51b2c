//! The engine's `layout_transform` kernel (`optimized/src/kernels/layout_transform.rs`,
//! a compiled postfix program per result, destinations in parallel, a scatter with a
//! bitmap) agrees with the oracle's (the spec model's `PrimExpr` evaluator, one element
//! at a time) on thousands of random calls: random index maps (permutations, splits and
//! fusions by constants, sums, differences, `min`/`max`, casts, division by zero or a
//! negative constant, products of two indices, constants near `i64::MAX`), maps that
//! are not injective or leave padding, pad values of every kind, rank mismatches and
//! wrong arguments. Agreement is the same error kind, or equal values bit for bit.
//!
//! `KERNELS_AGREE_SEED` and `KERNELS_AGREE_CASES` choose the cases.

mod agree;

use agree::{array_tensor, ill_kinded, ranked_shape, Case, Nans, Rng, DTYPES};
use spec_model::grammar::{AttrValue, Attrs, DataType, FloatLit, IndexMap, PrimBinOp, PrimExpr, PrimExprKind, PrimVar};
use spec_model::ops::Op;
use spec_model::Span;

const DEFAULT_SEED: u64 = 0x6c61_796f_7574_5f74;
const DEFAULT_CASES: u64 = 6_000;

/// A random index expression over `params` of depth at most `depth`.
fn index_expr(rng: &mut Rng, params: &[PrimVar], depth: u32) -> PrimExpr {
    let leaf = |rng: &mut Rng| {
        if params.is_empty() || rng.pct(20) {
            PrimExpr::int(rng.pick(&[0, 1, 2, 3, -1, i64::MAX, i64::MIN]))
        } else {
            PrimExpr::var(&params[rng.below(params.len() as u64) as usize])
        }
    };
    if depth == 0 || rng.pct(35) {
        return leaf(rng);
    }
    let a = index_expr(rng, params, depth - 1);
    match rng.below(12) {
        0 => PrimExpr::new(
            PrimExprKind::Cast { dtype: rng.pick(&[DataType::INT32, DataType::INT64, DataType::int(8)]), value: a },
            Span::SYNTHETIC,
        ),
        1 => PrimExpr::binary(PrimBinOp::Mul, a, index_expr(rng, params, depth - 1)),
        n => {
            let op = [
                PrimBinOp::Add,
                PrimBinOp::Sub,
                PrimBinOp::Mul,
                PrimBinOp::FloorDiv,
                PrimBinOp::FloorMod,
                PrimBinOp::Div,
                PrimBinOp::Mod,
                PrimBinOp::Min,
                PrimBinOp::Max,
                PrimBinOp::Add,
            ][(n - 2) as usize];
            let b = match op {
                PrimBinOp::Add | PrimBinOp::Sub | PrimBinOp::Min | PrimBinOp::Max if rng.pct(60) => {
                    index_expr(rng, params, depth - 1)
                }
                _ => PrimExpr::int(rng.pick(&[1, 2, 3, 4, 5, 0, -2, 1 << 40])),
            };
            PrimExpr::binary(op, a, b)
        }
    }
}

/// A map that is usually valid: a permutation, a split of one axis by a constant, a
/// fusion of two axes (injective or not), or random arithmetic.
fn index_map(rng: &mut Rng, shape: &[u64]) -> IndexMap {
    let rank = if rng.pct(5) { rng.below(4) as usize } else { shape.len() };
    let params: Vec<PrimVar> = (0..rank).map(|k| PrimVar::shape_var(format!("i{k}"))).collect();
    let p = |k: usize| PrimExpr::var(&params[k]);
    let results: Vec<PrimExpr> = match rng.below(5) {
        _ if rank == 0 => (0..rng.below(3)).map(|_| PrimExpr::int(0)).collect(),
        0 => {
            let mut perm: Vec<usize> = (0..rank).collect();
            for i in (1..rank).rev() {
                perm.swap(i, rng.below(i as u64 + 1) as usize);
            }
            perm.into_iter().map(p).collect()
        }
        1 => {
            let a = rng.below(rank as u64) as usize;
            let c = PrimExpr::int(rng.range(1, 4));
            let mut r: Vec<PrimExpr> = (0..rank).map(p).collect();
            r[a] = PrimExpr::binary(PrimBinOp::FloorDiv, p(a), c.clone());
            r.push(PrimExpr::binary(PrimBinOp::FloorMod, p(a), c));
            r
        }
        2 if rank >= 2 => {
            // `a * b + j`: injective when `b` is at least the extent of `j`.
            let b = shape.get(1).copied().unwrap_or(1) as i64 + rng.range(-1, 1);
            let mut r: Vec<PrimExpr> =
                vec![PrimExpr::binary(PrimBinOp::Add, PrimExpr::binary(PrimBinOp::Mul, p(0), PrimExpr::int(b)), p(1))];
            r.extend((2..rank).map(p));
            r
        }
        _ => (0..rng.range(0, 3)).map(|_| index_expr(rng, &params, 3)).collect(),
    };
    IndexMap { params, results }
}

fn gen_layout_transform(rng: &mut Rng) -> Case {
    let d = rng.pick(&DTYPES);
    let shape = ranked_shape(rng, 4);
    let mut attrs = Attrs::default();
    let map = index_map(rng, &shape);
    attrs.insert("index_map", if rng.pct(2) { ill_kinded(rng) } else { AttrValue::IndexMap(map) });
    match rng.below(10) {
        0 => attrs.insert("pad_value", AttrValue::None),
        1 => attrs.insert("pad_value", AttrValue::Int(rng.pick(&[0, 3, -1, 300, i64::MAX]))),
        2 => attrs.insert(
            "pad_value",
            AttrValue::Float(FloatLit(rng.pick(&[0.5, -2.25, f64::NAN, f64::INFINITY, 1e300, -0.0]))),
        ),
        3 => attrs.insert("pad_value", ill_kinded(rng)),
        _ => {}
    }
    (vec![array_tensor(rng, d, shape)], attrs)
}

agree::each_op! {
    seed: DEFAULT_SEED, cases: DEFAULT_CASES, nans: Nans::AnyNan;
    layout_transform_agrees: Op::LayoutTransform, gen_layout_transform;
}
