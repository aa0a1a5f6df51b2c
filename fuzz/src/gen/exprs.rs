//! Expressions: a random value for a binding ([`Gen::value`]) and a value of a
//! required type ([`Gen::expr_of`], which always succeeds).

use super::funcs::Want;
use super::ty::{scalar_for, shape_expr, Dim, Ty};
use super::{Gen, Scope};
use spec_model::grammar::{
    Attrs, Call, DataType, Expr, ExprKind, FloatLit, Function, GlobalVar, If, NDArray, PrimBinOp, PrimExpr,
    PrimExprKind, PrimVar, Scalar, StructInfo, Var,
};
use spec_model::ops::Op;
use spec_model::Span;
use std::collections::HashMap;
use std::rc::Rc;

const S: Span = Span::SYNTHETIC;

impl<'a> Gen<'a, '_> {
    /// A value for a binding, and its type.
    pub fn value(&mut self, sc: &Scope) -> (Expr, Ty) {
        let f = self.cfg.features.clone();
        let got = match self.pick(16) {
            0..=6 => self.op_call(sc),
            7 if f.tuples => self.tuple_value(sc),
            8 if f.tuples => self.tuple_get(sc),
            9 if f.symbolic => {
                let rank = self.pick(4);
                let dims = self.new_dims(sc, rank);
                Some((shape_expr(&dims), Ty::Shape(dims)))
            }
            10 if f.prim_values => Some(self.prim_value()),
            11 if f.if_ && self.can_nest(sc) => self.if_value(sc),
            12 if self.can_nest(sc) => {
                let (e, t) = self.seq(sc, Want::Visible(sc.prim_vars()), false);
                Some((e, t))
            }
            13 if f.closures && self.can_nest(sc) => self.closure_def(sc),
            14 if !sc.dataflow => self.closure_call(sc),
            15 if f.globals && !sc.dataflow => self.global_call(sc),
            _ => None,
        };
        got.or_else(|| self.op_call(sc)).unwrap_or_else(|| {
            let rank = self.pick(3);
            let ty = Ty::tensor(self.new_dims(sc, rank), DataType::FLOAT32);
            (self.expr_of(&ty, sc, 0), ty)
        })
    }

    /// An expression of exactly type `ty` (whose shape variables are in scope). With
    /// `fuel`, it may nest operator calls (left for the normalizer to flatten).
    pub fn expr_of(&mut self, ty: &Ty, sc: &Scope, fuel: u32) -> Expr {
        let same = sc.vars_where(|t| t.same(ty));
        if !same.is_empty() && self.chance(3, 4) {
            let (v, _) = self.choose(&same).expect("nonempty");
            return Expr::var(&v);
        }
        match ty {
            Ty::Tensor { dims, dtype } => self.tensor_of(dims, *dtype, sc, fuel),
            Ty::Shape(dims) => {
                let of = sc.vars_where(|t| matches!(t.as_tensor(), Some((ds, _)) if Ty::Shape(ds.to_vec()).same(ty)));
                match self.choose(&of) {
                    Some((v, _)) if self.chance(1, 2) => self.call_op(Op::ShapeOf, vec![Expr::var(&v)], no()),
                    _ => shape_expr(dims),
                }
            }
            Ty::Prim(dtype) => self.prim_literal(*dtype),
            Ty::Tuple(fields) => {
                let es = fields.iter().map(|f| self.expr_of(f, sc, fuel.saturating_sub(1))).collect();
                Expr::new(ExprKind::Tuple(es), S)
            }
            Ty::Object => match self.pick(2) {
                0 => self.call_op(Op::NullValue, Vec::new(), no()),
                _ => Expr::new(ExprKind::StringImm(format!("s{}", self.pick(10))), S),
            },
            Ty::Func { params, ret } => self.closure(params, ret, sc).0,
        }
    }

    /// An operand of type `ty`: usually a variable in scope, else a new expression.
    pub fn arg_of(&mut self, ty: &Ty, sc: &Scope) -> Expr {
        let same = sc.vars_where(|t| t.same(ty));
        match self.choose(&same) {
            Some((v, _)) if self.chance(7, 8) => Expr::var(&v),
            _ => self.expr_of(ty, sc, 1),
        }
    }

    fn tensor_of(&mut self, dims: &[Dim], dtype: DataType, sc: &Scope, fuel: u32) -> Expr {
        let ty = Ty::tensor(dims.to_vec(), dtype);
        let all_lit = dims.iter().all(|d| d.as_lit().is_some());
        match self.pick(6) {
            1 if all_lit && Ty::elems(dims) <= 16 => {
                let shape: Vec<u64> = dims.iter().map(|d| d.as_lit().unwrap_or(d.hi) as u64).collect();
                self.random_constant(dtype, &shape)
            }
            2 => {
                let fill = self.random_constant(dtype, &[]);
                self.call_op(Op::Full, vec![shape_expr(dims), fill], no())
            }
            3 | 4 if fuel > 0 => {
                let a = self.expr_of(&ty, sc, fuel - 1);
                let op = if dtype.is_bool() {
                    Op::LogicalNot
                } else if dtype.is_float() {
                    self.choose(&[Op::Negative, Op::Tanh, Op::Sigmoid, Op::Abs]).expect("nonempty")
                } else {
                    self.choose(&[Op::Negative, Op::Abs, Op::Relu]).expect("nonempty")
                };
                self.call_op(op, vec![a], no())
            }
            5 if fuel > 0 => {
                let a = self.expr_of(&ty, sc, fuel - 1);
                let b = self.expr_of(&ty, sc, fuel - 1);
                let op = if dtype.is_bool() {
                    self.choose(&[Op::LogicalAnd, Op::LogicalOr]).expect("nonempty")
                } else {
                    self.choose(&[Op::Add, Op::Subtract, Op::Maximum, Op::Minimum]).expect("nonempty")
                };
                self.call_op(op, vec![a, b], no())
            }
            _ => {
                let op = if self.chance(1, 2) { Op::Zeros } else { Op::Ones };
                self.call_op(op, vec![shape_expr(dims)], dtype_attr("dtype", dtype))
            }
        }
    }

    /// A dimension of a large tensor: mostly a few hundred, sometimes longer than the
    /// 4096-element chunks kernels work in (a row then spans several chunks).
    pub fn large_dim(&mut self) -> i64 {
        if self.chance(1, 10) {
            self.range(4097, 6000)
        } else {
            self.range(17, 300)
        }
    }

    /// New dimensions over the shape variables in scope (each at least 1), within the
    /// element limit.
    pub fn new_dims(&mut self, sc: &Scope, rank: usize) -> Vec<Dim> {
        let mut dims: Vec<Dim> = Vec::new();
        for _ in 0..rank.min(self.cfg.max_rank) {
            let d = self.new_dim(sc);
            if Ty::elems(&dims).saturating_mul(d.hi as u64) > self.cfg.max_tensor_elems {
                break;
            }
            dims.push(d);
        }
        dims
    }

    pub fn new_dim(&mut self, sc: &Scope) -> Dim {
        if self.cfg.large_tensors && self.chance(1, 3) {
            return Dim::lit(self.large_dim());
        }
        let vars = sc.shape_vars.clone();
        let var = match self.choose(&vars) {
            Some((v, hi)) if self.cfg.features.symbolic => Dim::var(&v, hi),
            _ => return Dim::lit(self.range(1, 3)),
        };
        match self.pick(8) {
            0 => Dim::lit(self.range(1, 3)),
            // Negative intermediates: floor division and modulus round toward -inf
            // (`(n - 3) // 2 + 2` and `(n - 3) % 3 + 1` are at least 1 for n >= 1).
            7 if self.chance(1, 2) => {
                let minus = Dim::binary(PrimBinOp::Sub, &var, &Dim::lit(3));
                let q = Dim::binary(PrimBinOp::FloorDiv, &minus, &Dim::lit(2));
                Dim::binary(PrimBinOp::Add, &q, &Dim::lit(2))
            }
            7 => {
                let minus = Dim::binary(PrimBinOp::Sub, &var, &Dim::lit(3));
                let r = Dim::binary(PrimBinOp::FloorMod, &minus, &Dim::lit(3));
                let d = Dim::binary(PrimBinOp::Add, &r, &Dim::lit(1));
                Dim { hi: d.hi.max(3), ..d }
            }
            1 | 2 => var,
            3 => Dim::binary(PrimBinOp::Add, &var, &Dim::lit(self.range(1, 2))),
            4 => Dim::binary(PrimBinOp::Mul, &var, &Dim::lit(2)),
            5 => Dim::binary(PrimBinOp::Max, &var, &Dim::lit(self.range(1, 3))),
            _ => {
                let plus = Dim::binary(PrimBinOp::Add, &var, &Dim::lit(1));
                Dim::binary(PrimBinOp::FloorDiv, &plus, &Dim::lit(2))
            }
        }
    }

    /// A tensor constant of `dtype` and `shape` with small values.
    pub fn random_constant(&mut self, dtype: DataType, shape: &[u64]) -> Expr {
        let n: u64 = shape.iter().product();
        let values: Vec<Scalar> = (0..n).map(|_| scalar_for(dtype, self.range(-6, 6))).collect();
        constant_expr(dtype, shape, &values)
    }

    /// A tensor constant filled with `k`.
    pub fn constant(&self, dtype: DataType, shape: &[u64], k: i64) -> Expr {
        let n: u64 = shape.iter().product();
        let s = match dtype {
            d if d.is_bool() => Scalar::Bool(k != 0),
            d if d.is_float() => Scalar::Float(k as f64),
            d if d.is_uint() => Scalar::Int(k.unsigned_abs().into()),
            _ => Scalar::Int(k as i128),
        };
        constant_expr(dtype, shape, &vec![s; n as usize])
    }

    pub fn call_op(&self, op: Op, args: Vec<Expr>, attrs: Attrs) -> Expr {
        call(Expr::op(op), args, Vec::new(), attrs)
    }

    fn prim_literal(&mut self, dtype: DataType) -> Expr {
        let kind = if dtype.is_float() {
            // Tenths are not exact in binary: the literal is rounded to its dtype.
            let value =
                if self.chance(1, 2) { self.range(-8, 8) as f64 / 4.0 } else { self.range(-30, 30) as f64 / 10.0 };
            PrimExprKind::FloatImm { value: FloatLit(value), dtype }
        } else if dtype.is_bool() {
            PrimExprKind::IntImm { value: self.range(0, 1), dtype }
        } else {
            PrimExprKind::IntImm { value: self.range(-5, 5), dtype }
        };
        Expr::new(ExprKind::PrimValue(PrimExpr::new(kind, S)), S)
    }

    /// A PrimValue (int64, float32 or bool), or a StringImm.
    fn prim_value(&mut self) -> (Expr, Ty) {
        match self.pick(5) {
            0 => (self.prim_literal(DataType::INT64), Ty::Prim(DataType::INT64)),
            1 => {
                let d = self
                    .choose(&[DataType::FLOAT32, DataType::float(16), DataType::float(64)])
                    .unwrap_or(DataType::FLOAT32);
                (self.prim_literal(d), Ty::Prim(d))
            }
            2 => (self.prim_literal(DataType::BOOL), Ty::Prim(DataType::BOOL)),
            3 => (Expr::new(ExprKind::StringImm(format!("str{}", self.pick(100))), S), Ty::Object),
            _ => (Expr::new(ExprKind::DataTypeImm(DataType::FLOAT32), S), Ty::Object),
        }
    }

    fn tuple_value(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let fields = sc.vars_where(|t| !matches!(t, Ty::Func { .. }));
        let n = self.pick(4);
        let mut es = Vec::new();
        let mut tys = Vec::new();
        for _ in 0..n {
            let (v, t) = self.choose(&fields)?;
            es.push(Expr::var(&v));
            tys.push(t);
        }
        Some((Expr::new(ExprKind::Tuple(es), S), Ty::Tuple(tys)))
    }

    fn tuple_get(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let tuples = sc.vars_where(|t| matches!(t, Ty::Tuple(fs) if !fs.is_empty()));
        let (v, t) = self.choose(&tuples)?;
        let Ty::Tuple(fs) = t else { return None };
        let i = self.pick(fs.len());
        let e = Expr::new(ExprKind::TupleGetItem { tuple_value: Box::new(Expr::var(&v)), index: i as i64 }, S);
        Some((e, fs[i].clone()))
    }

    /// A rank-0 bool tensor for an If: a comparison of a reduction with 0, a bool
    /// scalar in scope, or a literal.
    pub fn cond(&mut self, sc: &Scope) -> Expr {
        let bools = sc.vars_where(|t| matches!(t.as_tensor(), Some((ds, d)) if ds.is_empty() && d.is_bool()));
        let nums = sc.vars_where(|t| matches!(t.as_tensor(), Some((_, d)) if !d.is_bool()));
        match self.pick(3) {
            0 => match self.choose(&bools) {
                Some((v, _)) => Expr::var(&v),
                None => {
                    let k = self.range(0, 1);
                    self.constant(DataType::BOOL, &[], k)
                }
            },
            _ => match self.choose(&nums) {
                Some((v, Ty::Tensor { dtype, .. })) => {
                    let s = self.call_op(Op::Sum, vec![Expr::var(&v)], no());
                    let zero = self.constant(dtype, &[], 0);
                    let op = self.choose(&[Op::Greater, Op::LessEqual]).expect("nonempty");
                    self.call_op(op, vec![s, zero], no())
                }
                _ => self.constant(DataType::BOOL, &[], 1),
            },
        }
    }

    /// `if c: ... else: ...` whose branches give values of one type.
    fn if_value(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let target = match self.choose(&sc.vars) {
            Some((_, t)) if !matches!(t, Ty::Func { .. }) => t,
            _ => {
                let rank = self.pick(3);
                Ty::tensor(self.new_dims(sc, rank), DataType::FLOAT32)
            }
        };
        let cond = self.cond(sc);
        let (t, _) = self.seq(sc, Want::Ty(target.clone()), true);
        let (f, _) = self.seq(sc, Want::Ty(target.clone()), true);
        let e = Expr::new(ExprKind::If(Box::new(If { cond, true_branch: t, false_branch: f })), S);
        Some((e, target))
    }

    /// A closure of the given signature; its body sees (captures) the scope.
    fn closure(&mut self, params: &[Ty], ret: &Ty, sc: &Scope) -> (Expr, Ty) {
        let mut inner = Scope { dataflow: false, impure_ok: false, depth: sc.depth + 1, ..sc.clone() };
        let mut vars = Vec::new();
        for p in params {
            let v = Var::new(self.name("a"), Some(p.to_sinfo()), S);
            inner.vars.push((v.clone(), p.clone()));
            vars.push(v);
        }
        let (body, _) = self.seq(&inner, Want::Ty(ret.clone()), true);
        // Declared pure with its result annotated, so that a call of it is a pure call
        // of the type the generator knows (the variable's signature says so).
        let mut attrs = Attrs::default();
        attrs.insert("pure", spec_model::grammar::AttrValue::Bool(true));
        let f = Function { params: vars, body, ret_struct_info: Some(ret.to_sinfo()), attrs, span: S };
        let ty = Ty::Func { params: params.to_vec(), ret: Box::new(ret.clone()) };
        (Expr::new(ExprKind::Function(Rc::new(f)), S), ty)
    }

    /// A local function whose parameters and result have types of values in scope.
    fn closure_def(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let tensors = sc.vars_where(|t| t.as_tensor().is_some());
        let mut params = Vec::new();
        for _ in 0..1 + self.pick(2) {
            params.push(self.choose(&tensors)?.1);
        }
        let ret = self.choose(&tensors)?.1;
        Some(self.closure(&params, &ret, sc))
    }

    fn closure_call(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let fs = sc.vars_where(|t| matches!(t, Ty::Func { .. }));
        let (f, Ty::Func { params, ret }) = self.choose(&fs)? else { return None };
        let args = params.iter().map(|p| self.arg_of(p, sc)).collect();
        Some((call(Expr::var(&f), args, Vec::new(), no()), *ret))
    }

    /// A call of a global function: its shape variables take dimensions of values in
    /// scope (bounded as its parameters require) or new ones.
    fn global_call(&mut self, sc: &Scope) -> Option<(Expr, Ty)> {
        let sig = self.choose(&self.globals.clone())?;
        let mut map: HashMap<PrimVar, Dim> = HashMap::new();
        let max = self.cfg.max_dim;
        let mut args = Vec::new();
        let n = if sig.recursive { sig.params.len() - 1 } else { sig.params.len() };
        for p in &sig.params[..n] {
            let Ty::Tensor { dims, dtype } = p else { return None };
            // Prefer a value in scope whose dimensions fit the parameter.
            let fits = sc.vars_where(
                |t| matches!(t.as_tensor(), Some((ds, d)) if d == *dtype && unify(dims, ds, &map, max).is_some()),
            );
            let arg_dims = match self.choose(&fits) {
                Some((_, t)) if self.chance(3, 4) => t.as_tensor().expect("tensor").0.to_vec(),
                _ => dims
                    .iter()
                    .map(|d| match d.e.as_var() {
                        Some(v) => map.get(v).cloned().unwrap_or_else(|| self.bounded_dim(sc, max)),
                        None => d.clone(),
                    })
                    .collect(),
            };
            map = unify(dims, &arg_dims, &map, max)?;
            args.push(self.arg_of(&Ty::tensor(arg_dims, *dtype), sc));
        }
        if sig.recursive {
            let k = self.range(0, 3);
            args.push(self.constant(DataType::INT64, &[], k));
        }
        let callee = Expr::new(ExprKind::GlobalVar(GlobalVar::new(sig.name.clone())), S);
        Some((call(callee, args, Vec::new(), no()), sig.ret.subst(&map)))
    }

    /// A dimension whose bound is at most `max` (a global's parameters ask for that).
    fn bounded_dim(&mut self, sc: &Scope, max: i64) -> Dim {
        let d = self.new_dim(sc);
        if d.hi <= max {
            d
        } else {
            Dim::lit(self.range(1, max.min(3)))
        }
    }
}

/// Matches a parameter's dimensions against an argument's: shape variables take the
/// argument's dimensions (consistently, within `max`), literals must be equal.
fn unify(params: &[Dim], args: &[Dim], map: &HashMap<PrimVar, Dim>, max: i64) -> Option<HashMap<PrimVar, Dim>> {
    if params.len() != args.len() {
        return None;
    }
    let mut map = map.clone();
    for (p, a) in params.iter().zip(args) {
        match p.e.as_var() {
            Some(v) => match map.get(v) {
                Some(d) if !d.same(a) => return None,
                Some(_) => {}
                None if a.hi <= max => {
                    map.insert(v.clone(), a.clone());
                }
                None => return None,
            },
            None if p.same(a) => {}
            None => return None,
        }
    }
    Some(map)
}

pub fn call(op: Expr, args: Vec<Expr>, sinfo_args: Vec<StructInfo>, attrs: Attrs) -> Expr {
    Expr::new(ExprKind::Call(Box::new(Call { op, args, sinfo_args, attrs })), S)
}

pub fn no() -> Attrs {
    Attrs::default()
}

pub fn dtype_attr(name: &str, dtype: DataType) -> Attrs {
    let mut a = Attrs::default();
    a.insert(name, spec_model::grammar::AttrValue::Str(dtype.to_string()));
    a
}

pub fn constant_expr(dtype: DataType, shape: &[u64], values: &[Scalar]) -> Expr {
    let nd = NDArray::from_scalars(dtype, shape.to_vec(), values).expect("small values fit every generated dtype");
    Expr::new(ExprKind::Constant(Rc::new(nd)), S)
}
