//! The lowered-memory operators in the engine (issue 19, proofs-notes/evaluation.md
//! E-16): storages are byte buffers, a tensor placed in one must fit and is fresh
//! (zeroed, not a view), the kills do nothing, `vm.call_tir_dyn` runs a PrimFunc with a
//! shape's values as scalars, huge allocations end in `MemoryExhausted`.

use optimized::{Engine, ErrorKind, Executable, Tensor, Value};

const PROGRAM: &str = r#"
@I.ir_module
class Module:
    @T.prim_func
    def inc(a: T.handle, b: T.handle, n: T.int64):
        A = T.match_buffer(a, (n,), "int32")
        B = T.match_buffer(b, (n,), "int32")
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] + 1

    @R.function(pure=False)
    def placed(x: R.Tensor(("n",), "int32"), off: R.Prim("int64")) -> R.Tuple(R.Tensor(("n",), "int32"), R.Tensor(("n",), "int32")):
        n = T.int64()
        cls = Module
        s = R.memory.alloc_storage(R.shape([4 * n + 4]), R.prim_value(0), R.str("global"), R.dtype("uint8"))
        a = R.memory.alloc_tensor(s, off, R.shape([n]), R.dtype("int32"))
        b = R.vm.alloc_tensor(s, off, R.shape([n]), R.dtype("int32"))
        _ = R.vm.call_tir_dyn(cls.inc, (x, a, R.shape([n])))
        _1 = R.memory.kill_tensor(a)
        _2 = R.memory.kill_storage(s)
        return (a, b)

    @R.function
    def big(s: R.Shape(["m", "n"])) -> R.Tensor(("m", "n"), "float64"):
        m = T.int64()
        n = T.int64()
        t = R.builtin.alloc_tensor(R.shape([m, n]), R.dtype("float64"), R.prim_value(0))
        return t

    @R.function(pure=False)
    def builtin(x: R.Tensor((2,), "int32")) -> R.Tensor((2,), "int32"):
        s = R.call_builtin_with_ctx("vm.builtin.alloc_storage", (R.shape([0]), R.prim_value(0), R.dtype("uint8")), sinfo_args=R.Object)
        e = R.vm.alloc_tensor(s, R.prim_value(0), R.shape([0]), R.dtype("int32"))
        y = R.call_builtin_with_ctx("vm.builtin.copy", (x,), sinfo_args=R.Tensor((2,), "int32"))
        return y
"#;

fn exe() -> Executable {
    Engine::compile(&spec_model::text::parse_module(PROGRAM).expect("parses")).expect("compiles")
}

fn ints(v: &[i32]) -> Value {
    Value::tensor(Tensor::new::<i32>(&[v.len() as u64], v).expect("a tensor"))
}

fn off(i: i64) -> Value {
    Value::Prim(optimized::Prim::Int(i, spec_model::grammar::DataType::int(64)))
}

fn error_kind(r: Result<Value, optimized::Error>) -> ErrorKind {
    match r {
        Err(e) => e.kind,
        Ok(v) => panic!("expected an error, got {v:?}"),
    }
}

#[test]
fn a_placed_tensor_sees_the_primfuncs_write_and_does_not_alias_its_neighbour() {
    let Value::Tuple(fs) = exe().call("placed", &[ints(&[1, 2, 3]), off(4)]).expect("runs") else { panic!("a tuple") };
    let (Value::Tensor(a), Value::Tensor(b)) = (&fs[0], &fs[1]) else { panic!("two tensors") };
    assert_eq!(a.elements::<i32>().expect("int32").to_vec(), vec![2, 3, 4]);
    assert_eq!(b.elements::<i32>().expect("int32").to_vec(), vec![0, 0, 0]);
}

#[test]
fn a_tensor_that_overruns_its_storage_or_starts_before_it_is_an_op_error() {
    assert_eq!(error_kind(exe().call("placed", &[ints(&[1, 2, 3]), off(5)])), ErrorKind::OpError);
    assert_eq!(error_kind(exe().call("placed", &[ints(&[1, 2, 3]), off(-1)])), ErrorKind::OpError);
    // Empty tensors fit anywhere up to the end.
    assert!(exe().call("placed", &[ints(&[]), off(4)]).is_ok());
}

#[test]
fn huge_allocations_hit_the_memory_budget() {
    let shape = Value::Shape(vec![1_i64 << 31, 1 << 31].into());
    assert_eq!(error_kind(exe().call("big", &[shape])), ErrorKind::MemoryExhausted);
    let small = Value::Shape(vec![0_i64, 5].into());
    assert!(exe().call("big", &[small]).is_ok());
}

#[test]
fn vm_builtins_allocate_storage_and_copy() {
    let Value::Tensor(y) = exe().call("builtin", &[ints(&[7, 9])]).expect("runs") else { panic!("a tensor") };
    assert_eq!(y.elements::<i32>().expect("int32").to_vec(), vec![7, 9]);
}
