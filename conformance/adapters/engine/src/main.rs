//! `relax-engine-adapter`: the optimized engine behind the conformance protocol
//! (conformance/PROTOCOL.md), for `oracle conform --impl engine=relax-engine-adapter`.

use engine_adapter::{on_big_stack, serve, EngineAdapter};
use std::process::ExitCode;

fn main() -> ExitCode {
    let done = on_big_stack(|| {
        let adapter = EngineAdapter::default();
        serve(std::io::stdin().lock(), std::io::stdout().lock(), |r| adapter.answer(r))
    });
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("relax-engine-adapter: {e}");
            ExitCode::FAILURE
        }
    }
}
