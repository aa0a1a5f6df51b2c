use super::*;
use spec_model::grammar::{DataType, NDArray, Scalar};

fn round_trip(v: &WireValue) -> WireValue {
    let line = to_line(&Response::value(3, v.clone(), vec![]));
    let back: Response = from_line(&line).unwrap();
    back.value.unwrap()
}

#[test]
fn every_kind_of_value_survives_a_line() {
    let t = NDArray::from_scalars(DataType::FLOAT32, vec![2], &[Scalar::Float(1.5), Scalar::Float(-0.25)]).unwrap();
    let v = WireValue::Tuple(vec![
        WireValue::Tensor(t),
        WireValue::Shape(vec![2, 3]),
        WireValue::Prim(WirePrim::Int(-7, DataType::INT64)),
        WireValue::Prim(WirePrim::Float(0.5, DataType::FLOAT32)),
        WireValue::Prim(WirePrim::Bool(true)),
        WireValue::Str("a \"q\"\nline".into()),
        WireValue::DType(DataType::float(16)),
        WireValue::Global("f".into()),
        WireValue::Opaque("closure".into()),
        WireValue::Null,
    ]);
    assert_eq!(round_trip(&v), v);
}

#[test]
fn non_finite_floats_are_strings() {
    let v = WireValue::Prim(WirePrim::Float(f64::NEG_INFINITY, DataType::float(64)));
    let j = v.to_json().unwrap();
    assert_eq!(j["prim"]["value"], "-inf");
    assert_eq!(round_trip(&v), v);
    let nan = WireValue::from_json(&serde_json::json!({"prim": {"dtype": "float32", "value": "nan"}})).unwrap();
    assert!(matches!(nan, WireValue::Prim(WirePrim::Float(f, _)) if f.is_nan()));
}

#[test]
fn malformed_values_are_errors_not_panics() {
    for bad in [
        r#"{}"#,
        r#"{"shape": [1, "x"]}"#,
        r#"{"tensor": "!!!"}"#,
        r#"{"tensor": "AAAA"}"#,
        r#"{"prim": {"dtype": "int64", "value": 1.5}}"#,
        r#"{"prim": {"dtype": "nonsense", "value": 1}}"#,
        r#"{"shape": [1], "str": "x"}"#,
        r#"[1, 2]"#,
        r#"{"wat": 1}"#,
    ] {
        let j: serde_json::Value = serde_json::from_str(bad).unwrap();
        assert!(WireValue::from_json(&j).is_err(), "{bad} was accepted");
    }
}

#[test]
fn requests_and_handshakes_read_back() {
    let r = Request {
        id: 9,
        action: Action::Run,
        name: "corpus/x.rx".into(),
        program: "def main(): ...\n".into(),
        entry: Some("main".into()),
        args: vec![WireValue::Shape(vec![1])],
        fuel: Some(10),
    };
    assert_eq!(from_line::<Request>(&to_line(&r)).unwrap(), r);
    let h = Handshake::new("x", "1", "rx");
    assert_eq!(from_line::<Handshake>(&to_line(&h)).unwrap(), h);
    assert!(h.refusal().is_none());
    assert!(Handshake { version: 2, ..h.clone() }.refusal().is_some());
    assert!(from_line::<Response>(r#"{"id": 1, "outcome": "exploded"}"#).is_err());
    let v: Response = from_line(r#"{"id": 1, "outcome": "value"}"#).unwrap();
    assert!(v.malformed(1).is_some());
    assert!(Response::accepted(2).malformed(1).is_some());
}
