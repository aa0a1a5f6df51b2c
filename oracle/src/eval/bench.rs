//! `oracle eval --bench N`: the time of a call in one engine. The program is parsed,
//! checked and (for the optimized engine) compiled once, each phase timed apart; the
//! arguments are converted once; then the call runs `warmup` times untimed and `N`
//! times timed. Only the call is inside the timed region, so the figures compare with
//! a peer runtime's `session.run` (`scripts/bench-peers`).
//!
//! Every call gets the same argument values (tensors shared, not copied): a program
//! that writes an argument in place (`oracle.add_one_inplace`) sees its own earlier
//! writes, as repeated calls in any runtime would.

use super::literal::print_value;
use super::machine::{Limits, Machine};
use super::run::{arg_values, limits_capped, on_big_stack, write_tensors, Arg, RunText};
use crate::check::{check_module, render_errors};
use crate::engine::{convert, Engine};
use spec_model::text::parse_module;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// How a benchmark runs.
#[derive(Clone, Copy, Debug)]
pub struct BenchConfig {
    /// The oracle or the optimized engine (one engine per benchmark, so that neither's
    /// work shows in the other's figures).
    pub engine: Engine,
    pub limits: Limits,
    /// Timed calls (at least 1).
    pub iters: usize,
    /// Untimed calls before them (caches, page faults of fresh buffers, thread pools).
    pub warmup: usize,
    /// The optimized engine's `Limits::threads` (the oracle has one thread).
    pub threads: usize,
    /// Print the last result as an `.rx` literal (`false` leaves `RunText::result`
    /// empty: a 16M-element tensor takes seconds to print).
    pub show_result: bool,
}

/// What a benchmark measured.
pub struct BenchReport {
    pub config: BenchConfig,
    pub parse: Duration,
    pub check: Duration,
    /// The optimized engine's `Engine::compile` (the oracle compiles nothing).
    pub compile: Option<Duration>,
    /// The time of each timed call, sorted.
    pub times: Vec<Duration>,
    /// The most tensor bytes held at once during the last call (the optimized engine's
    /// `Outcome::peak_memory`; the oracle does not count them).
    pub peak_memory: Option<usize>,
    /// The last call's result.
    pub last: RunText,
}

impl BenchReport {
    pub fn min(&self) -> Duration {
        self.times.first().copied().unwrap_or_default()
    }

    /// The median (the mean of the two middle times for an even count).
    pub fn median(&self) -> Duration {
        let n = self.times.len();
        match n {
            0 => Duration::ZERO,
            _ if n % 2 == 1 => self.times[n / 2],
            _ => (self.times[n / 2 - 1] + self.times[n / 2]) / 2,
        }
    }

    pub fn mean(&self) -> Duration {
        let total: Duration = self.times.iter().sum();
        total / self.times.len().max(1) as u32
    }

    /// The threads the call could use.
    fn threads(&self) -> usize {
        if self.config.engine == Engine::Optimized {
            self.config.threads.max(1)
        } else {
            1
        }
    }

    /// The report for people, one `bench:` line each, and last the same figures as one
    /// JSON object on a `bench: {...}` line for scripts.
    pub fn render(&self) -> String {
        let engine = engine_name(self.config.engine);
        let mut s = String::new();
        let compile = self.compile.map_or("none (the oracle interprets)".to_string(), show);
        let _ = writeln!(s, "bench: parse {}, check {}, compile {compile}", show(self.parse), show(self.check));
        let threads = self.threads();
        let _ = writeln!(
            s,
            "bench: {engine} engine, {threads} thread(s): {} warm-up call(s), then {} timed",
            self.config.warmup,
            self.times.len()
        );
        let _ = writeln!(
            s,
            "bench: per call: min {}, median {}, mean {}, max {}",
            show(self.min()),
            show(self.median()),
            show(self.mean()),
            show(self.times.last().copied().unwrap_or_default())
        );
        match self.peak_memory {
            Some(b) => {
                let _ = writeln!(s, "bench: peak tensor memory of a call: {b} bytes ({:.1} MiB)", b as f64 / 1048576.0);
            }
            None => {
                let _ = writeln!(s, "bench: peak tensor memory of a call: not counted by the {engine} engine");
            }
        }
        let ns = |d: Duration| d.as_nanos().to_string();
        let _ = writeln!(
            s,
            "bench: {{\"engine\":\"{engine}\",\"threads\":{threads},\"warmup\":{},\"iters\":{},\"parse_ns\":{},\
             \"check_ns\":{},\"compile_ns\":{},\"min_ns\":{},\"median_ns\":{},\"mean_ns\":{},\"max_ns\":{},\
             \"peak_bytes\":{},\"ok\":{}}}",
            self.config.warmup,
            self.times.len(),
            ns(self.parse),
            ns(self.check),
            self.compile.map_or("null".to_string(), ns),
            ns(self.min()),
            ns(self.median()),
            ns(self.mean()),
            ns(self.times.last().copied().unwrap_or_default()),
            self.peak_memory.map_or("null".to_string(), |b| b.to_string()),
            self.last.result.is_ok(),
        );
        s
    }
}

fn engine_name(e: Engine) -> &'static str {
    match e {
        Engine::Oracle => "oracle",
        Engine::Optimized => "optimized",
        Engine::Both => "both",
    }
}

/// A duration with a unit that keeps three or four significant digits.
fn show(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.2} us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.3} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// Times `f` once.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let r = f();
    (r, start.elapsed())
}

/// Benchmarks `entry(args)` of `src` as `config` says. With `out`, writes the last
/// result's tensors there.
pub fn run_bench(
    name: &str,
    src: &str,
    entry: &str,
    args: &[Arg],
    config: BenchConfig,
    out: Option<&std::path::Path>,
) -> Result<BenchReport, String> {
    let engine = config.engine;
    if engine == Engine::Both {
        return Err("error: --bench measures one engine: use --engine optimized or --engine oracle \
                    (and run it once per engine to compare them)"
            .into());
    }
    let config = BenchConfig { iters: config.iters.max(1), ..config };
    on_big_stack(|| {
        let (parsed, parse) = timed(|| parse_module(src));
        let m = parsed.map_err(|e| e.render(name, src))?;
        let (report, check) = timed(|| check_module(&m, false));
        if report.has_errors() {
            return Err(render_errors(&report.diagnostics, name, src));
        }
        let m = report.normalized.ok_or_else(|| format!("{name}: the program does not normalize"))?;
        let limits = limits_capped(config.limits);
        let values = arg_values(&m, args)?;
        let mut times = Vec::with_capacity(config.iters);
        let (compile, peak_memory, last, value) = if engine == Engine::Optimized {
            let (exe, compile) = timed(|| optimized::Engine::compile(&m));
            let exe = exe.map_err(|e| e.to_string())?;
            let memory = optimized::Memory::new(usize::MAX);
            let global = |name: &str| exe.global(name);
            let args = values
                .iter()
                .map(|a| {
                    convert::from_oracle_with(a, &memory, &global)
                        .ok_or_else(|| format!("{} has no engine value", a.kind()))
                })
                .collect::<Result<Vec<_>, String>>()?;
            let limits = optimized::Limits { threads: config.threads, ..crate::engine::limits(limits) };
            let mut last = None;
            for i in 0..config.warmup + config.iters {
                let (o, t) = timed(|| exe.run(entry, &args, limits));
                if i >= config.warmup {
                    times.push(t);
                }
                last = Some(o.map_err(|e| e.to_string())?);
            }
            let o = last.ok_or("no call ran")?;
            let shown = o
                .result
                .as_ref()
                .ok()
                .filter(|_| config.show_result)
                .map(|v| optimized::machine::print::print_value(&exe, v));
            let value = o.result.as_ref().ok().and_then(convert::to_oracle);
            let result = match &o.result {
                Ok(_) => Ok(shown.unwrap_or_default()),
                Err(e) => Err(crate::engine::runtime_error(e)),
            };
            (Some(compile), Some(o.peak_memory), RunText { result, printed: o.printed, trace: Vec::new() }, value)
        } else {
            // One machine for every call (building one evaluates every global), its
            // fuel and printed lines reset before each.
            let mut mach = Machine::new(&m, limits);
            let f = mach.global(entry).cloned().ok_or_else(|| super::run::no_function(name, entry))?;
            let mut last = None;
            for i in 0..config.warmup + config.iters {
                mach.fuel = limits.fuel;
                mach.printed.clear();
                let call_args = values.clone();
                let (r, t) = timed(|| mach.apply(&f, call_args, spec_model::Span::SYNTHETIC));
                if i >= config.warmup {
                    times.push(t);
                }
                last = Some(r);
            }
            let r = last.ok_or("no call ran")?;
            let text = RunText {
                result: r
                    .as_ref()
                    .map(|v| if config.show_result { print_value(v) } else { String::new() })
                    .map_err(Clone::clone),
                printed: std::mem::take(&mut mach.printed),
                trace: Vec::new(),
            };
            (None, None, text, r.ok())
        };
        if let (Some(dir), Some(v)) = (out, &value) {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            write_tensors(v, dir, "result")?;
        }
        times.sort();
        Ok(BenchReport { config, parse, check, compile, times, peak_memory, last })
    })?
}
