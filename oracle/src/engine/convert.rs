//! Between the two engines' values: the oracle's and the optimized engine's share no
//! code, so the differential tester converts one into the other to compare them.
//! Tensors go through `NDArray`, the AST's array (exact for every dtype).

use crate::eval::value::{PrimScalar, Value as OValue};
use optimized::value::{Prim, Value as EValue};
use optimized::Memory;
use std::rc::Rc;

/// An engine value as an oracle value, for comparing and printing. A closure (which
/// has no counterpart) is `None`; so is a tensor being written.
pub fn to_oracle(v: &EValue) -> Option<OValue> {
    Some(match v {
        EValue::Tensor(t) => OValue::tensor(t.to_ndarray()?),
        EValue::Tuple(fields) => OValue::Tuple(Rc::new(fields.iter().map(to_oracle).collect::<Option<Vec<_>>>()?)),
        EValue::Closure(_) => return None,
        EValue::Shape(s) => OValue::Shape(Rc::new(s.to_vec())),
        EValue::Prim(p) => OValue::Prim(match *p {
            Prim::Int(i, d) => PrimScalar::Int(i, d),
            Prim::Float(f, d) => PrimScalar::Float(f, d),
            Prim::Bool(b) => PrimScalar::Bool(b),
        }),
        EValue::Str(s) => OValue::Str(s.clone()),
        EValue::DataType(d) => OValue::DataType(*d),
        EValue::PackedFunc(n) => OValue::PackedFunc(n.clone()),
        EValue::PrimFunc(_) => return None,
        EValue::Null => OValue::Null,
    })
}

/// An oracle value as an engine value (arguments given to both engines). Closures and
/// PrimFuncs have no counterpart (`None`); a tensor over the budget is `None` too.
pub fn from_oracle(v: &OValue, memory: &Rc<Memory>) -> Option<EValue> {
    from_oracle_with(v, memory, &|_| None)
}

/// As [`from_oracle`], with `global` giving the engine's value of a global function
/// (what a global's closure or PrimFunc converts to).
pub fn from_oracle_with(v: &OValue, memory: &Rc<Memory>, global: &dyn Fn(&str) -> Option<EValue>) -> Option<EValue> {
    Some(match v {
        OValue::Tensor(t) => EValue::tensor(optimized::Tensor::from_ndarray(&t.borrow(), memory).ok()??),
        OValue::Tuple(fields) => {
            EValue::tuple(fields.iter().map(|f| from_oracle_with(f, memory, global)).collect::<Option<Vec<_>>>()?)
        }
        OValue::Shape(s) => EValue::Shape(s.as_slice().into()),
        OValue::Prim(p) => EValue::Prim(match *p {
            PrimScalar::Int(i, d) => Prim::Int(i, d),
            PrimScalar::Float(f, d) => Prim::Float(f, d),
            PrimScalar::Bool(b) => Prim::Bool(b),
        }),
        OValue::Str(s) => EValue::Str(s.clone()),
        OValue::DataType(d) => EValue::DataType(*d),
        OValue::PackedFunc(n) => EValue::PackedFunc(n.clone()),
        OValue::Null => EValue::Null,
        // A global function (a closure of nothing, or a PrimFunc) is the engine's global.
        OValue::Closure(c) if c.captured.is_empty() && c.self_var.is_none() => global(&c.name)?,
        OValue::PrimFunc(name, _) => global(name)?,
        OValue::Closure(_) | OValue::Object(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec_model::grammar::{DataType, NDArray, Scalar};

    #[test]
    fn values_survive_the_round_trip() {
        let mem = Memory::new(1 << 20);
        let scalars = [Scalar::Int(1), Scalar::Int(-2), Scalar::Int(3)];
        let a = NDArray::from_scalars(DataType::INT32, vec![3], &scalars).unwrap();
        let v = OValue::Tuple(Rc::new(vec![
            OValue::tensor(a),
            OValue::Shape(Rc::new(vec![2, 5])),
            OValue::Prim(PrimScalar::Float(0.5, DataType::FLOAT32)),
            OValue::Str("s".into()),
            OValue::Null,
        ]));
        let back = to_oracle(&from_oracle(&v, &mem).unwrap()).unwrap();
        assert!(crate::eval::literal::values_equal(&v, &back, 0.0));
    }
}
