//! `misbehaving-adapter`: the engine's adapter, made to misbehave on chosen requests so
//! that tests can show the runner survives each way an adapter can fail. A request
//! whose `name` or program contains the text given to an option gets that misbehaviour
//! (a program text, so that a reduction keeps it):
//!
//! ```text
//! --crash-on TEXT     exit (status 3) without answering
//! --abort-on TEXT     die of SIGABRT without answering
//! --hang-on TEXT      never answer
//! --garbage-on TEXT   answer with a line that is not JSON, then exit
//! --wrong-id-on TEXT  answer with another request's id
//! --wrong-on TEXT     answer wrongly: a value off by one, a check's verdict flipped
//! --bad-handshake     start with a handshake of protocol version 99
//! ```

use conformance_protocol::{to_line, Handshake, Outcome, Response, WireValue};
use engine_adapter::{on_big_stack, serve, EngineAdapter};
use spec_model::grammar::NDArray;
use std::io::Write;
use std::process::ExitCode;

#[derive(Default)]
struct Plan {
    crash: Vec<String>,
    abort: Vec<String>,
    hang: Vec<String>,
    garbage: Vec<String>,
    wrong_id: Vec<String>,
    wrong: Vec<String>,
    bad_handshake: bool,
}

fn plan() -> Result<Plan, String> {
    let mut p = Plan::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--bad-handshake" {
            p.bad_handshake = true;
            continue;
        }
        let list = match a.as_str() {
            "--crash-on" => &mut p.crash,
            "--abort-on" => &mut p.abort,
            "--hang-on" => &mut p.hang,
            "--garbage-on" => &mut p.garbage,
            "--wrong-id-on" => &mut p.wrong_id,
            "--wrong-on" => &mut p.wrong,
            other => return Err(format!("unknown option `{other}`")),
        };
        list.push(args.next().ok_or_else(|| format!("{a} needs a text"))?);
    }
    Ok(p)
}

fn hits(list: &[String], r: &conformance_protocol::Request) -> bool {
    list.iter().any(|t| r.name.contains(t.as_str()) || r.program.contains(t.as_str()))
}

/// A wrong answer of the same shape: another value, or the other verdict.
fn falsify(mut r: Response) -> Response {
    match r.outcome {
        Outcome::Accepted => Response::rejected(r.id, "misbehaving: rejected for no reason".into(), None),
        Outcome::Rejected => Response::accepted(r.id),
        Outcome::Value => {
            r.value = r.value.map(off_by_one);
            r
        }
        Outcome::RuntimeError => Response::value(r.id, WireValue::Shape(vec![7]), vec![]),
        Outcome::Unsupported => r,
    }
}

fn off_by_one(v: WireValue) -> WireValue {
    match v {
        WireValue::Tensor(a) => {
            let shape: Vec<u64> = a.shape.iter().map(|d| d + 1).collect();
            let n = shape.iter().product::<u64>() as usize;
            NDArray::from_scalars(a.dtype, shape, &vec![spec_model::grammar::Scalar::Int(0); n])
                .map(WireValue::Tensor)
                .unwrap_or(WireValue::Null)
        }
        WireValue::Shape(mut s) => {
            s.push(1);
            WireValue::Shape(s)
        }
        WireValue::Tuple(mut fs) => {
            fs.push(WireValue::Null);
            WireValue::Tuple(fs)
        }
        WireValue::Null => WireValue::Str("not null".into()),
        _ => WireValue::Null,
    }
}

fn main() -> ExitCode {
    let plan = match plan() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("misbehaving-adapter: {e}");
            return ExitCode::from(2);
        }
    };
    if plan.bad_handshake {
        let h = Handshake { version: 99, ..engine_adapter::handshake() };
        println!("{}", to_line(&h));
        return ExitCode::SUCCESS;
    }
    let done = on_big_stack(|| {
        let adapter = EngineAdapter::default();
        serve(std::io::stdin().lock(), std::io::stdout().lock(), |r| {
            if hits(&plan.crash, r) {
                std::process::exit(3);
            }
            if hits(&plan.abort, r) {
                std::process::abort();
            }
            if hits(&plan.hang, r) {
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                }
            }
            if hits(&plan.garbage, r) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "Segmentation fault (core dumped)? no, just garbage");
                let _ = out.flush();
                std::process::exit(0);
            }
            let answer = adapter.answer(r);
            if hits(&plan.wrong_id, r) {
                return Response { id: r.id + 1000, ..answer };
            }
            if hits(&plan.wrong, r) {
                return falsify(answer);
            }
            answer
        })
    });
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("misbehaving-adapter: {e}");
            ExitCode::FAILURE
        }
    }
}
