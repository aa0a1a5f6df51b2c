//! The printer is the inverse of the parser on programs built directly as ASTs
//! (not only on parsed text): random shape and TIR expressions exercise precedence
//! and the literal-dtype rules; hand-built modules exercise naming and literals.

use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use spec_model::grammar::tir::{Buffer, Intrinsic, PrimFunc, Stmt, StmtKind, TirExpr, TirExprKind, TirParam};
use spec_model::grammar::*;
use spec_model::text::{check_round_trip, check_round_trip_in, parse_module, print_module, Dialect, DEFAULT_WIDTH};
use spec_model::Span;
use std::rc::Rc;

const S: Span = Span::SYNTHETIC;

/// A random scalar expression, convertible to a Relax `PrimExpr` or a `TirExpr`.
#[derive(Clone, Debug)]
enum Tree {
    Var(usize),
    Int(i64, DataType),
    Float(f64, DataType),
    Bin(PrimBinOp, Box<Tree>, Box<Tree>),
    Not(Box<Tree>),
    Select(Box<Tree>, Box<Tree>, Box<Tree>),
    Cast(DataType, Box<Tree>),
    /// TIR only: a buffer load or an intrinsic (Relax: a variable instead).
    Load(Box<Tree>),
    Call(Intrinsic, Vec<Tree>),
}

const INT_DTYPES: [DataType; 5] =
    [DataType::INT64, DataType::INT32, DataType::int(8), DataType::uint(8), DataType::BOOL];
const FLOAT_DTYPES: [DataType; 3] = [DataType::FLOAT32, DataType::float(64), DataType::float(16)];

fn tree(g: &mut Gen, depth: u32) -> Tree {
    let leaf = depth == 0 || u8::arbitrary(g) % 3 == 0;
    if leaf {
        return match u8::arbitrary(g) % 5 {
            0 | 1 => Tree::Var(usize::arbitrary(g) % 3),
            2 | 3 => {
                let d = *g.choose(&INT_DTYPES).unwrap();
                let v = if d.is_bool() {
                    (u8::arbitrary(g) % 2) as i64
                } else {
                    match u8::arbitrary(g) % 4 {
                        0 => i64::arbitrary(g),
                        1 => -(u8::arbitrary(g) as i64),
                        _ => u8::arbitrary(g) as i64 % 100,
                    }
                };
                // Literals are valid for their dtype (the parser rejects the others).
                let (lo, hi) = match (d.code, d.bits) {
                    (TypeCode::UInt, b) => (0i128, (1i128 << b) - 1),
                    (_, b) => (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1),
                };
                let v = (v as i128).clamp(lo, hi) as i64;
                Tree::Int(v, d)
            }
            _ => {
                let d = *g.choose(&FLOAT_DTYPES).unwrap();
                let v = *g.choose(&[0.5, -0.0, 1e-300, -2.25, f64::NAN, f64::INFINITY, 3.0, 1e20]).unwrap();
                Tree::Float(v, d)
            }
        };
    }
    let sub = |g: &mut Gen| Box::new(tree(g, depth - 1));
    match u8::arbitrary(g) % 9 {
        0..=3 => Tree::Bin(*g.choose(&PrimBinOp::ALL).unwrap(), sub(g), sub(g)),
        4 => Tree::Not(sub(g)),
        5 => Tree::Select(sub(g), sub(g), sub(g)),
        6 => Tree::Cast(*g.choose(&[DataType::INT32, DataType::FLOAT32]).unwrap(), sub(g)),
        7 => Tree::Load(sub(g)),
        _ => {
            let op = *g.choose(&Intrinsic::ALL).unwrap();
            Tree::Call(op, (0..op.arity()).map(|_| tree(g, depth - 1)).collect())
        }
    }
}

impl Arbitrary for Tree {
    fn arbitrary(g: &mut Gen) -> Tree {
        tree(g, 4)
    }
}

fn prim(t: &Tree, vars: &[PrimVar]) -> PrimExpr {
    let k = match t {
        Tree::Var(i) => PrimExprKind::Var(vars[*i % vars.len()].clone()),
        Tree::Int(v, d) => PrimExprKind::IntImm { value: *v, dtype: *d },
        Tree::Float(v, d) => PrimExprKind::FloatImm { value: FloatLit(*v), dtype: *d },
        Tree::Bin(op, a, b) => PrimExprKind::Binary { op: *op, a: prim(a, vars), b: prim(b, vars) },
        Tree::Not(a) => PrimExprKind::Not(prim(a, vars)),
        Tree::Select(c, a, b) => {
            PrimExprKind::Select { cond: prim(c, vars), then_value: prim(a, vars), else_value: prim(b, vars) }
        }
        Tree::Cast(d, a) => PrimExprKind::Cast { dtype: *d, value: prim(a, vars) },
        Tree::Load(_) | Tree::Call(..) => PrimExprKind::Var(vars[0].clone()),
    };
    PrimExpr::new(k, S)
}

fn tir(t: &Tree, vars: &[PrimVar], bufs: &[Buffer]) -> TirExpr {
    let k = match t {
        Tree::Var(i) => TirExprKind::Var(vars[*i % vars.len()].clone()),
        Tree::Int(v, d) => TirExprKind::IntImm { value: *v, dtype: *d },
        Tree::Float(v, d) => TirExprKind::FloatImm { value: FloatLit(*v), dtype: *d },
        Tree::Bin(op, a, b) => TirExprKind::Binary { op: *op, a: tir(a, vars, bufs), b: tir(b, vars, bufs) },
        Tree::Not(a) => TirExprKind::Not(tir(a, vars, bufs)),
        Tree::Select(c, a, b) => TirExprKind::Select {
            cond: tir(c, vars, bufs),
            then_value: tir(a, vars, bufs),
            else_value: tir(b, vars, bufs),
        },
        Tree::Cast(d, a) => TirExprKind::Cast { dtype: *d, value: tir(a, vars, bufs) },
        Tree::Load(i) => {
            let idx = tir(i, vars, bufs);
            let b = &bufs[(idx.dtype().bits as usize) % bufs.len()];
            TirExprKind::BufferLoad { buffer: b.clone(), indices: vec![idx] }
        }
        Tree::Call(op, args) => TirExprKind::Call { op: *op, args: args.iter().map(|a| tir(a, vars, bufs)).collect() },
    };
    TirExpr::new(k, S)
}

fn seq(blocks: Vec<BindingBlock>, body: Expr) -> Expr {
    Expr::new(ExprKind::SeqExpr(Box::new(SeqExpr { blocks, body })), S)
}

fn tensor(dims: Vec<PrimExpr>, dtype: DataType) -> StructInfo {
    let ndim = dims.len() as i64;
    StructInfo::new(StructInfoKind::Tensor { shape: Some(Expr::new(ExprKind::ShapeExpr(dims), S)), dtype, ndim }, S)
}

fn module(functions: Vec<(&str, BaseFunc)>) -> IRModule {
    IRModule {
        name: "Module".into(),
        functions: functions.into_iter().map(|(n, f)| (GlobalVar::new(n), f)).collect(),
        attrs: Default::default(),
        span: S,
    }
}

fn public(mut f: Function, name: &str) -> Function {
    f.attrs.insert("global_symbol", AttrValue::Str(name.into()));
    f
}

fn relax_module_with(exprs: Vec<PrimExpr>, vars: &[PrimVar]) -> IRModule {
    let x = Var::new("x", Some(tensor(vars.iter().take(2).map(PrimExpr::var).collect(), DataType::FLOAT32)), S);
    let s = Var::new("s", None, S);
    let p = Var::new("p", None, S);
    let bindings = vec![
        Binding::VarBinding { var: s, value: Expr::new(ExprKind::ShapeExpr(exprs.clone()), S), span: S },
        Binding::VarBinding { var: p, value: Expr::new(ExprKind::PrimValue(exprs[0].clone()), S), span: S },
    ];
    let block = BindingBlock { kind: BlockKind::Binding, bindings, span: S };
    let f = Function {
        params: vec![x.clone()],
        body: seq(vec![block], Expr::var(&x)),
        ret_struct_info: None,
        attrs: Attrs::default(),
        span: S,
    };
    module(vec![("main", BaseFunc::Relax(Rc::new(public(f, "main"))))])
}

fn tir_module_with(values: Vec<TirExpr>, vars: &[PrimVar], bufs: &[Buffer]) -> IRModule {
    let i = &vars[0];
    let stores: Vec<Stmt> = values
        .into_iter()
        .enumerate()
        .map(|(k, v)| Stmt {
            kind: StmtKind::BufferStore {
                buffer: bufs[k % bufs.len()].clone(),
                indices: vec![TirExpr::new(TirExprKind::Var(i.clone()), S)],
                value: v,
            },
            span: S,
        })
        .collect();
    let end = TirExpr::new(TirExprKind::IntImm { value: 4, dtype: DataType::INT32 }, S);
    let begin = TirExpr::new(TirExprKind::IntImm { value: 0, dtype: DataType::INT32 }, S);
    let lp =
        Stmt { kind: StmtKind::For { var: i.clone(), begin, end, kind: tir::ForKind::Serial, body: stores }, span: S };
    let mut params: Vec<TirParam> = bufs
        .iter()
        .map(|b| TirParam { var: PrimVar::new(b.name(), DataType::handle()), buffer: Some(b.clone()) })
        .collect();
    params.extend(vars[1..].iter().map(|v| TirParam { var: v.clone(), buffer: None }));
    let mut attrs = Attrs::default();
    attrs.insert("global_symbol", AttrValue::Str("f".into()));
    let f = PrimFunc { params, body: vec![lp], attrs, span: S };
    module(vec![("f", BaseFunc::Tir(Rc::new(f)))])
}

/// Through both printers.
fn round_trip(m: &IRModule) -> TestResult {
    match check_round_trip(m).and_then(|_| check_round_trip_in(m, Dialect::Tvm027)) {
        Ok(_) => TestResult::passed(),
        Err(e) => TestResult::error(e),
    }
}

#[test]
fn random_shape_expressions_round_trip() {
    fn prop(trees: Vec<Tree>) -> TestResult {
        if trees.is_empty() {
            return TestResult::discard();
        }
        let vars = [PrimVar::shape_var("n"), PrimVar::shape_var("m"), PrimVar::new("k", DataType::INT32)];
        round_trip(&relax_module_with(trees.iter().take(4).map(|t| prim(t, &vars)).collect(), &vars))
    }
    QuickCheck::new().tests(2_000).rng(Gen::new(8)).quickcheck(prop as fn(Vec<Tree>) -> TestResult);
}

#[test]
fn random_tir_expressions_round_trip() {
    fn prop(trees: Vec<Tree>) -> TestResult {
        if trees.is_empty() {
            return TestResult::discard();
        }
        let vars = [
            PrimVar::new("i", DataType::INT32),
            PrimVar::new("n", DataType::INT64),
            PrimVar::new("h", DataType::float(16)),
        ];
        let bufs = [
            Buffer::new(
                "A",
                vec![TirExpr::new(TirExprKind::IntImm { value: 4, dtype: DataType::INT32 }, S)],
                DataType::FLOAT32,
                "global".into(),
                S,
            ),
            Buffer::new(
                "B",
                vec![TirExpr::new(TirExprKind::IntImm { value: 4, dtype: DataType::INT64 }, S)],
                DataType::INT32,
                "global".into(),
                S,
            ),
        ];
        round_trip(&tir_module_with(trees.iter().take(4).map(|t| tir(t, &vars, &bufs)).collect(), &vars, &bufs))
    }
    QuickCheck::new().tests(2_000).rng(Gen::new(8)).quickcheck(prop as fn(Vec<Tree>) -> TestResult);
}

/// Names that are not valid, clash, or shadow are renamed so that the text means the AST.
#[test]
fn awkward_names_round_trip() {
    let t = tensor(vec![PrimExpr::int(2)], DataType::FLOAT32);
    let x = Var::new("x", Some(t.clone()), S);
    let x2 = Var::new("x", None, S); // shadows x, but x is used after it
    let weird = Var::new("a-b", None, S);
    let kw = Var::new("if", None, S);
    let reserved = Var::new("R", None, S);
    let global_name = Var::new("main", None, S);
    let unused1 = Var::new("_", None, S);
    let unused2 = Var::new("_", None, S);
    let used_underscore = Var::new("_", None, S);
    let empty = Var::new("", None, S);
    let n_shape = PrimVar::shape_var("x"); // a shape variable named like a Relax variable
    let add = |a: &Var, b: &Var| {
        Expr::new(
            ExprKind::Call(Box::new(Call {
                op: Expr::new(ExprKind::Op(spec_model::ops::Op::Add.into()), S),
                args: vec![Expr::var(a), Expr::var(b)],
                sinfo_args: vec![],
                attrs: Attrs::default(),
            })),
            S,
        )
    };
    let vb = |v: &Var, e: Expr| Binding::VarBinding { var: v.clone(), value: e, span: S };
    let bindings = vec![
        vb(&x2, add(&x, &x)),
        vb(&weird, add(&x, &x2)), // refers to the shadowed x: must print distinctly
        vb(&kw, add(&weird, &x)),
        vb(&reserved, add(&kw, &kw)),
        vb(&global_name, add(&reserved, &x)),
        vb(&unused1, add(&x, &x)),
        vb(&used_underscore, add(&x, &x)),
        vb(&unused2, add(&used_underscore, &x)),
        vb(&empty, Expr::new(ExprKind::ShapeExpr(vec![PrimExpr::var(&n_shape)]), S)),
        Binding::MatchCast {
            var: None,
            struct_info: StructInfo::new(
                StructInfoKind::Shape { values: Some(vec![PrimExpr::var(&n_shape)]), ndim: 1 },
                S,
            ),
            value: Expr::var(&empty),
            span: S,
        },
    ];
    let block = BindingBlock { kind: BlockKind::Binding, bindings, span: S };
    let f = Function {
        params: vec![x.clone()],
        body: seq(vec![block], Expr::var(&global_name)),
        ret_struct_info: None,
        attrs: Attrs::default(),
        span: S,
    };
    let m = module(vec![("main", BaseFunc::Relax(Rc::new(public(f, "main"))))]);
    let printed = check_round_trip(&m).unwrap();
    assert!(printed.contains("_ = R.add(x, x)"), "{printed}");
    assert!(!printed.contains("if ="), "{printed}");
}

/// Constants at the edges of every dtype read back bit for bit.
#[test]
fn constant_edge_values_round_trip() {
    let arrays = vec![
        NDArray { dtype: DataType::int(64), shape: vec![3], data: TensorData::I64(vec![i64::MIN, i64::MAX, 0]) },
        NDArray { dtype: DataType::uint(64), shape: vec![2], data: TensorData::U64(vec![u64::MAX, 1]) },
        NDArray { dtype: DataType::int(8), shape: vec![2], data: TensorData::I8(vec![-128, 127]) },
        NDArray { dtype: DataType::bool(), shape: vec![2, 1], data: TensorData::Bool(vec![true, false]) },
        NDArray {
            dtype: DataType::float(32),
            shape: vec![6],
            data: TensorData::F32(vec![f32::MIN_POSITIVE / 4.0, -0.0, f32::MAX, f32::NAN, f32::NEG_INFINITY, 0.1]),
        },
        NDArray {
            dtype: DataType::float(64),
            shape: vec![4],
            data: TensorData::F64(vec![5e-324, -1.7976931348623157e308, 0.30000000000000004, f64::INFINITY]),
        },
        NDArray {
            dtype: DataType::float(16),
            shape: vec![4],
            data: TensorData::F16(vec![
                half::f16::MAX,
                half::f16::MIN_POSITIVE_SUBNORMAL,
                half::f16::from_f32(0.1),
                half::f16::NEG_ZERO,
            ]),
        },
        NDArray { dtype: DataType::float(32), shape: vec![0, 3], data: TensorData::F32(vec![]) },
        NDArray { dtype: DataType::int(32), shape: vec![2, 0, 2], data: TensorData::I32(vec![]) },
        NDArray { dtype: DataType::int(32), shape: vec![], data: TensorData::I32(vec![7]) },
    ];
    for a in arrays {
        let v = Var::new("c", None, S);
        let b = Binding::VarBinding {
            var: v.clone(),
            value: Expr::new(ExprKind::Constant(Rc::new(a.clone())), S),
            span: S,
        };
        let block = BindingBlock { kind: BlockKind::Binding, bindings: vec![b], span: S };
        let f = Function {
            params: vec![],
            body: seq(vec![block], Expr::var(&v)),
            ret_struct_info: None,
            attrs: Attrs::default(),
            span: S,
        };
        let m = module(vec![("main", BaseFunc::Relax(Rc::new(public(f, "main"))))]);
        check_round_trip(&m).unwrap_or_else(|e| panic!("{a:?}: {e}"));
    }
}

/// Strings, attributes and StructInfo corners.
#[test]
fn strings_attributes_and_struct_info_round_trip() {
    let src = r#"
@R.function
def main(s: R.Shape(["a", "b"]), t: R.Tensor(s, dtype="float32", ndim=2)) -> R.Callable(ret=R.Object, derive_func="empty_derive", purity=True):
    R.func_attr({"nested": {"k": [1, -2, 3.5e-07, "é\t\"q\"\\"], "z": None}, "f": float("inf")})
    u = R.str("tab\there\u0001 é \U0001F600")
    v = R.call_packed("x.y", u, flag=True, sinfo_args=[R.Tensor(ndim=3), R.Tuple(), R.Callable((R.Prim("uint8"),), R.Shape(ndim=0), purity=False)])
    w = R.match_cast(v, R.Shape(["a", "a * 2 + T.truncdiv(b, 3)"], ndim=5))
    f = R.ExternFunc("g")
    return f
"#;
    let m = parse_module(src).unwrap_or_else(|e| panic!("{}", e.render("t", src)));
    let printed = check_round_trip(&m).unwrap();
    assert!(printed.contains("ndim=5"), "{printed}");
    let again = print_module(&parse_module(&printed).unwrap(), 40);
    check_round_trip(&parse_module(&again).unwrap()).unwrap();
}

/// Printing narrower than any line still prints valid, equivalent text.
#[test]
fn narrow_widths_stay_valid() {
    let src = include_str!("seeds/module.rx");
    let m = parse_module(src).unwrap();
    for width in [1, 10, 30, DEFAULT_WIDTH, 1000] {
        let p = print_module(&m, width);
        let again = parse_module(&p).unwrap_or_else(|e| panic!("width {width}: {}", e.render("p", &p)));
        spec_model::alpha::alpha_eq_module(&m, &again).unwrap();
    }
}

/// A hand-built constant whose data does not fill its shape prints a marker, not a panic.
#[test]
fn inconsistent_constant_does_not_panic() {
    let a = NDArray { dtype: DataType::INT32, shape: vec![3, 2], data: TensorData::I32(vec![1, 2]) };
    let v = Var::new("c", None, S);
    let b = Binding::VarBinding { var: v.clone(), value: Expr::new(ExprKind::Constant(Rc::new(a)), S), span: S };
    let block = BindingBlock { kind: BlockKind::Binding, bindings: vec![b], span: S };
    let f = Function {
        params: vec![],
        body: seq(vec![block], Expr::var(&v)),
        ret_struct_info: None,
        attrs: Attrs::default(),
        span: S,
    };
    let m = module(vec![("main", BaseFunc::Relax(Rc::new(public(f, "main"))))]);
    let printed = print_module(&m, DEFAULT_WIDTH);
    assert!(printed.contains("<constant with 2 elements for shape [3, 2]>"), "{printed}");
    assert!(parse_module(&printed).is_err());
}

#[test]
fn negative_nan_keeps_its_sign_through_printing() {
    // Found by the parser fuzz test: `-float("nan")` printed as `float("nan")`.
    let src = "@R.function\ndef main():\n    f = R.const([0.1, -float(\"nan\")], \"float16\")\n    g = R.const([-float(\"nan\"), float(\"nan\")], \"float32\")\n    return f\n";
    let m = spec_model::text::parse_module(src).unwrap();
    let printed = spec_model::text::check_round_trip(&m).unwrap();
    assert!(printed.contains("R.const([0.1, -float(\"nan\")], \"float16\")"), "{printed}");
    assert!(printed.contains("R.const([-float(\"nan\"), float(\"nan\")], \"float32\")"), "{printed}");
}

#[test]
fn match_cast_branch_result_used_before_the_if_keeps_its_name() {
    // Found by the parser fuzz test: a (WF-3-violating) use of an `if` branch's
    // match_cast result inside an earlier local function printed under a name the
    // `if` then renamed.
    let src = include_str!("seeds/relax_features.rx")
        .replace("        return fact(i)", "        _ = r\n        return fact(i)");
    let m = spec_model::text::parse_module(&src).unwrap();
    check_round_trip(&m).unwrap();
}

#[test]
fn if_annotation_goes_to_the_branch_not_ending_in_a_match_cast() {
    // Found by the parser fuzz test: the annotation was printed only in the true
    // branch, which ended in a match_cast whose annotation is the cast variable's.
    let src = "@R.function\ndef main(x: R.Tensor((\"n\",), \"float32\"), flag: R.Tensor((), \"bool\")):\n    n = T.int64()\n    if flag:\n        r: R.Tensor((n,), \"float32\") = R.match_cast(x, R.Tensor((n,), \"float32\"))\n    else:\n        r: R.Tensor((n,), \"float32\") = R.add(x, x)\n    return r\n";
    let m = spec_model::text::parse_module(src).unwrap();
    check_round_trip(&m).unwrap();
}

#[test]
fn match_cast_branch_variable_used_elsewhere_keeps_its_own_name() {
    // Found by the parser fuzz test: `w = R.match_cast(..); y = w` printed as
    // `y = R.match_cast(..)`, so a (WF-3-violating) later use of `w` became `y`.
    let src = "@R.function\ndef main(c: R.Tensor((), \"bool\"), x: R.Tensor(dtype=\"float32\", ndim=1)):\n    k = T.int64()\n    if c:\n        z = R.match_cast(x, R.Tensor((k,), \"float32\"))\n        y = z\n    else:\n        w = R.match_cast(x, R.Tensor((k,), \"float32\"))\n        y = w\n    rey = w\n    return y\n";
    let m = spec_model::text::parse_module(src).unwrap();
    check_round_trip(&m).unwrap();
}
