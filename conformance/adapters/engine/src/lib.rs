//! The project's optimized engine as a conformance adapter (PROTOCOL.md, dialect `rx`).
//! It depends on the engine and the static checker (`spec-model`), never on the
//! oracle: the runner must see it from outside, as it sees any other implementation.

use conformance_protocol::{from_line, to_line, Action, Handshake, Request, Response, WirePrim, WireValue};
use optimized::value::{Prim, Value};
use optimized::{Executable, Memory, Tensor};
use prover::AutoProver;
use spec_model::check::check_module_with;
use spec_model::grammar::IRModule;
use spec_model::text::parse_module;
use std::io::{BufRead, Write};
use std::rc::Rc;

/// The stack the requests run on: deep programs recurse in the checker and the engine.
pub const STACK_BYTES: usize = 512 << 20;

/// The handshake of this adapter.
pub fn handshake() -> Handshake {
    Handshake::new("relax-optimized", env!("CARGO_PKG_VERSION"), "rx")
}

/// Serves requests from `input` until it closes, answering each with `answer`; a line
/// that is not a request is answered `unsupported` (id 0) rather than ending the loop.
pub fn serve(
    input: impl BufRead,
    mut output: impl Write,
    mut answer: impl FnMut(&Request) -> Response,
) -> std::io::Result<()> {
    writeln!(output, "{}", to_line(&handshake()))?;
    output.flush()?;
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let response = match from_line::<Request>(&line) {
            Ok(r) => answer(&r),
            Err(e) => Response::unsupported(0, format!("not a request: {e}")),
        };
        writeln!(output, "{}", to_line(&response))?;
        output.flush()?;
    }
    Ok(())
}

/// The engine's answers; one per adapter process (the prover keeps its cache).
#[derive(Default)]
pub struct EngineAdapter {
    prover: AutoProver,
}

impl EngineAdapter {
    pub fn answer(&self, r: &Request) -> Response {
        let checked = match self.check(&r.program) {
            Ok(m) => m,
            Err((message, rule)) => return Response::rejected(r.id, message, rule),
        };
        match r.action {
            Action::Check => Response::accepted(r.id),
            Action::Run => self.run(r, &checked),
        }
    }

    /// Parses and checks the program: the normalized module, or the first error and its rule.
    fn check(&self, src: &str) -> Result<IRModule, (String, Option<String>)> {
        let m = parse_module(src).map_err(|e| (e.render("<program>", src), None))?;
        let report = check_module_with(&m, false, &self.prover);
        if let Some(d) = report.diagnostics.iter().find(|d| d.is_error()) {
            return Err((d.render("<program>", src), Some(d.code.clone())));
        }
        report.normalized.ok_or_else(|| ("the program does not normalize".into(), None))
    }

    fn run(&self, r: &Request, m: &IRModule) -> Response {
        let exe = match optimized::Engine::compile(m) {
            Ok(e) => e,
            Err(e) => return Response::rejected(r.id, format!("the engine cannot compile it: {e}"), None),
        };
        let memory = Memory::new(usize::MAX);
        let args = match r.args.iter().map(|a| to_engine(a, &exe, &memory)).collect::<Result<Vec<_>, _>>() {
            Ok(a) => a,
            Err(why) => return Response::unsupported(r.id, why),
        };
        let mut limits = optimized::Limits::default();
        if let Some(fuel) = r.fuel {
            limits.fuel = fuel;
        }
        let entry = r.entry.as_deref().unwrap_or("main");
        match exe.run(entry, &args, limits) {
            Err(e) => Response::rejected(r.id, e.to_string(), None),
            Ok(o) => match o.result {
                Ok(v) => match to_wire(&v) {
                    Ok(w) => Response::value(r.id, w, o.printed),
                    Err(why) => Response::unsupported(r.id, why),
                },
                Err(e) => Response::runtime_error(
                    r.id,
                    format!("error[{}] ({}): {}", e.kind.name(), e.rule, e.message),
                    Some(e.kind.name().to_string()),
                    o.printed,
                ),
            },
        }
    }
}

/// A protocol value as the engine's.
pub fn to_engine(v: &WireValue, exe: &Executable, memory: &Rc<Memory>) -> Result<Value, String> {
    Ok(match v {
        WireValue::Tensor(a) => Value::tensor(
            Tensor::from_ndarray(a, memory)
                .map_err(|_| "the tensor is over the memory budget".to_string())?
                .ok_or_else(|| format!("the engine has no {} tensors", a.dtype))?,
        ),
        WireValue::Shape(s) => Value::Shape(s.as_slice().into()),
        WireValue::Prim(p) => Value::Prim(match *p {
            WirePrim::Int(i, d) => Prim::Int(i, d),
            WirePrim::Float(f, d) => Prim::Float(f, d),
            WirePrim::Bool(b) => Prim::Bool(b),
        }),
        WireValue::Tuple(fs) => {
            Value::tuple(fs.iter().map(|f| to_engine(f, exe, memory)).collect::<Result<Vec<_>, _>>()?)
        }
        WireValue::Str(s) => Value::Str(s.as_str().into()),
        WireValue::DType(d) => Value::DataType(*d),
        WireValue::Global(g) => exe.global(g).ok_or_else(|| format!("no global function `{g}`"))?,
        WireValue::Opaque(o) => return Err(format!("an opaque {o} cannot be an argument")),
        WireValue::Null => Value::Null,
    })
}

/// An engine value as a protocol value.
pub fn to_wire(v: &Value) -> Result<WireValue, String> {
    Ok(match v {
        Value::Tensor(t) => WireValue::Tensor(t.to_ndarray().ok_or("a tensor being written has no value yet")?),
        Value::Tuple(fs) => WireValue::Tuple(fs.iter().map(to_wire).collect::<Result<_, _>>()?),
        Value::Closure(_) => WireValue::Opaque("closure".into()),
        Value::Shape(s) => WireValue::Shape(s.to_vec()),
        Value::Prim(p) => WireValue::Prim(match *p {
            Prim::Int(i, d) => WirePrim::Int(i, d),
            Prim::Float(f, d) => WirePrim::Float(f, d),
            Prim::Bool(b) => WirePrim::Bool(b),
        }),
        Value::Str(s) => WireValue::Str(s.to_string()),
        Value::DataType(d) => WireValue::DType(*d),
        Value::PackedFunc(n) => WireValue::Opaque(format!("packed function {n}")),
        Value::PrimFunc(_) => WireValue::Opaque("TIR PrimFunc".into()),
        Value::Null => WireValue::Null,
    })
}

/// Runs `f` on a thread with [`STACK_BYTES`] of stack.
pub fn on_big_stack(f: impl FnOnce() -> std::io::Result<()> + Send) -> std::io::Result<()> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn_scoped(s, f)?
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}
