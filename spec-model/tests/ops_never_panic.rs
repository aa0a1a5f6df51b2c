//! Every operator's `FInferStructInfo`, on random calls (any arity, random argument
//! StructInfo with symbolic shapes, random and extreme attribute values, random
//! StructInfo arguments), returns a StructInfo or a diagnostic of its rule: never a
//! panic ("bad input never panics"). 20,000 cases.

#[path = "props/gen.rs"]
mod gen;

use gen::{gen_si, gen_tensor, vars, with_env};
use quickcheck::{Arbitrary, Gen, QuickCheck};
use spec_model::grammar::{
    AttrValue, Attrs, Call, DataType, Expr, ExprKind, FloatLit, GlobalVar, IndexMap, PrimBinOp, PrimExpr, PrimExprKind,
    PrimVar, StructInfo, StructInfoKind, Var,
};
use spec_model::ops::{infer_struct_info, Arity, AttrKind, REGISTRY};
use spec_model::Span;
use std::sync::atomic::{AtomicUsize, Ordering};

const INTS: &[i64] = &[0, 1, 2, -1, -2, 3, 7, i64::MAX, i64::MIN, 1 << 40];

fn int(g: &mut Gen) -> i64 {
    *g.choose(INTS).expect("non-empty")
}

fn attr(g: &mut Gen) -> AttrValue {
    match u32::arbitrary(g) % 7 {
        0 => AttrValue::None,
        1 => AttrValue::Bool(bool::arbitrary(g)),
        2 => AttrValue::Int(int(g)),
        3 => AttrValue::Str(g.choose(&["float32", "int64", "bool", "flaot", ""]).expect("non-empty").to_string()),
        4 => AttrValue::Float(FloatLit(f64::arbitrary(g))),
        _ => AttrValue::List((0..u32::arbitrary(g) % 4).map(|_| AttrValue::Int(int(g))).collect()),
    }
}

/// A random value of the attribute kind.
fn attr_of(g: &mut Gen, kind: AttrKind) -> AttrValue {
    let list = |g: &mut Gen| AttrValue::List((0..u32::arbitrary(g) % 4).map(|_| AttrValue::Int(int(g))).collect());
    match kind {
        AttrKind::Int => AttrValue::Int(int(g)),
        AttrKind::Bool => AttrValue::Bool(bool::arbitrary(g)),
        AttrKind::DType => AttrValue::Str(g.choose(&["float32", "int64", "bool"]).expect("x").to_string()),
        AttrKind::Str | AttrKind::OptStr => match u32::arbitrary(g) % 4 {
            0 if kind == AttrKind::OptStr => AttrValue::None,
            0 => AttrValue::Str("{}".into()),
            _ => AttrValue::Str(
                g.choose(&["ij,jk->ik", "...i,...i", "ii", "i.j", "->", "", "a,b,c", "TopLeft", "BottomRight", "ü"])
                    .expect("non-empty")
                    .to_string(),
            ),
        },
        AttrKind::IntList => list(g),
        AttrKind::Float | AttrKind::OptFloat => match u32::arbitrary(g) % 3 {
            0 if kind == AttrKind::OptFloat => AttrValue::None,
            1 => AttrValue::Int(int(g)),
            _ => AttrValue::Float(FloatLit(f64::arbitrary(g))),
        },
        AttrKind::IndexMap => AttrValue::IndexMap(index_map(g)),
        AttrKind::StrDict => {
            let n = u32::arbitrary(g) % 3;
            AttrValue::Dict((0..n).map(|k| (format!("k{k}"), attr(g))).collect())
        }
        AttrKind::Floats => match u32::arbitrary(g) % 3 {
            0 => AttrValue::Float(FloatLit(f64::arbitrary(g))),
            1 => list(g),
            _ => AttrValue::List(
                (0..u32::arbitrary(g) % 6).map(|_| AttrValue::Float(FloatLit(f64::arbitrary(g)))).collect(),
            ),
        },
        AttrKind::OptIntList | AttrKind::Axes | AttrKind::IntOrIntList | AttrKind::OptInt => {
            match u32::arbitrary(g) % 3 {
                0 if kind != AttrKind::IntOrIntList => AttrValue::None,
                1 if kind != AttrKind::OptIntList => AttrValue::Int(int(g)),
                _ if kind == AttrKind::OptInt => AttrValue::Int(int(g)),
                _ => list(g),
            }
        }
    }
}

/// A random `lambda`: results over its parameters (and free shape variables) with
/// `//` and `%` by any constant, zero and negatives included.
fn index_map(g: &mut Gen) -> IndexMap {
    let params: Vec<PrimVar> = (0..u32::arbitrary(g) % 4).map(|k| PrimVar::shape_var(format!("i{k}"))).collect();
    let leaf = |g: &mut Gen| match (u32::arbitrary(g) % 4, params.is_empty()) {
        (0, _) | (_, true) => gen::dim(g),
        _ => PrimExpr::var(g.choose(&params).expect("non-empty")),
    };
    let results = (0..u32::arbitrary(g) % 5)
        .map(|_| {
            let a = leaf(g);
            let op = *g
                .choose(&[PrimBinOp::FloorDiv, PrimBinOp::FloorMod, PrimBinOp::Add, PrimBinOp::Mul, PrimBinOp::Sub])
                .expect("non-empty");
            match u32::arbitrary(g) % 3 {
                0 => a,
                1 => PrimExpr::binary(op, a, PrimExpr::int(int(g))),
                _ => PrimExpr::binary(op, a, leaf(g)),
            }
        })
        .collect();
    IndexMap { params, results }
}

fn arg(g: &mut Gen, si: &StructInfo) -> Expr {
    let kind = match u32::arbitrary(g) % 6 {
        0 => ExprKind::PrimValue(PrimExpr::int(int(g))),
        1 => ExprKind::PrimValue(PrimExpr::new(
            PrimExprKind::FloatImm {
                value: FloatLit(*g.choose(&[0.0, 0.5, -1.0, 1e300]).expect("x")),
                dtype: DataType::FLOAT32,
            },
            Span::SYNTHETIC,
        )),
        2 => ExprKind::ShapeExpr((0..u32::arbitrary(g) % 3).map(|_| PrimExpr::int(int(g))).collect()),
        3 => ExprKind::ExternFunc { global_symbol: "f".into() },
        4 => ExprKind::GlobalVar(GlobalVar::new("f")),
        _ => ExprKind::Var(Var::new("v", Some(si.clone()), Span::SYNTHETIC)),
    };
    Expr::new(kind, Span::SYNTHETIC)
}

/// A tensor whose shape contradicts its rank (WF-13 rejects it, but the operators
/// must not trust it).
fn ill_formed_tensor(g: &mut Gen) -> StructInfo {
    let dims = (0..usize::arbitrary(g) % 4).map(|_| gen::dim(g)).collect();
    let shape = Expr::new(ExprKind::ShapeExpr(dims), Span::SYNTHETIC);
    let ndim = *g.choose(&[-1, 0, 1, 2, 3]).expect("non-empty");
    StructInfo::new(StructInfoKind::Tensor { shape: Some(shape), dtype: DataType::FLOAT32, ndim }, Span::SYNTHETIC)
}

#[derive(Clone, Debug)]
struct RandomCall {
    op: usize,
    call: Call,
    args: Vec<StructInfo>,
    scoped: bool,
}

impl Arbitrary for RandomCall {
    fn arbitrary(g: &mut Gen) -> RandomCall {
        let op = usize::arbitrary(g) % REGISTRY.len();
        // Usually the operator's arity, so most calls reach its rule.
        let n = match REGISTRY[op].arity {
            Arity::Exactly(k) | Arity::AtLeast(k) if u32::arbitrary(g) % 4 != 0 => {
                k + usize::arbitrary(g) % 2 * usize::from(matches!(REGISTRY[op].arity, Arity::AtLeast(_)))
            }
            _ => usize::arbitrary(g) % 4,
        };
        // Mostly tensors (what most operators take), sometimes anything.
        let args: Vec<StructInfo> = (0..n)
            .map(|_| match u32::arbitrary(g) % 8 {
                0 | 1 => gen_si(g, 2),
                2 => ill_formed_tensor(g),
                _ => gen_tensor(g),
            })
            .collect();
        let exprs = args.iter().map(|s| arg(g, s)).collect();
        let mut attrs = Attrs::default();
        // Attribute names from the operator's schema, so the rules get past the schema check.
        for spec in REGISTRY[op].attrs {
            if bool::arbitrary(g) {
                let v = if u32::arbitrary(g) % 4 == 0 { attr(g) } else { attr_of(g, spec.kind) };
                attrs.insert(spec.name, v);
            }
        }
        let sinfo_args = (0..usize::arbitrary(g) % 3).map(|_| gen_si(g, 2)).collect();
        let callee = Expr::new(ExprKind::Op(REGISTRY[op].op.into()), Span::SYNTHETIC);
        RandomCall { op, call: Call { op: callee, args: exprs, sinfo_args, attrs }, args, scoped: bool::arbitrary(g) }
    }
}

static INFERRED: AtomicUsize = AtomicUsize::new(0);

#[test]
fn operators_never_panic() {
    let _ = vars();
    fn prop(c: RandomCall) -> bool {
        let def = &REGISTRY[c.op];
        let r = with_env(c.scoped, |env| infer_struct_info(def, &c.call, &c.args, env, None, Span::SYNTHETIC));
        match r {
            Ok(inferred) => {
                INFERRED.fetch_add(1, Ordering::Relaxed);
                inferred.warnings.iter().all(|w| w.code == def.rule)
            }
            Err(d) => d.code == def.rule,
        }
    }
    QuickCheck::new().tests(20_000).max_tests(40_000).quickcheck(prop as fn(RandomCall) -> bool);
    // The random calls must reach the rules, not only the arity and schema checks.
    let ok = INFERRED.load(Ordering::Relaxed);
    println!("{ok} of 20,000 random calls inferred");
    assert!(ok >= 1_500, "only {ok} random calls were inferred");
}
