//! `oracle conform`: runs corpus files through another implementation's adapter
//! (conformance/PROTOCOL.md) and judges every answer against the reference semantics,
//! in parallel, surviving adapters that crash, hang or talk garbage.

pub mod adapter;
pub mod expected;
pub mod html;
pub mod report;
pub mod results;
pub mod spec;
pub mod tables;

use adapter::{clip, Adapter, Reply};
use conformance_protocol::{Action, Request};
use expected::ExpectedFailures;
use results::{Counts, FileResult, Implementation, OutcomeClass, RequestResult, Results, Seen, Verdict};
use spec::{judge, plan_file, seen, FilePlan};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How a run is done.
#[derive(Clone, Debug)]
pub struct Options {
    /// Adapter processes at once.
    pub jobs: usize,
    /// Per request.
    pub timeout: Duration,
    /// The fuel sent with `run` requests (the oracle's default).
    pub fuel: u64,
    /// Print a progress line on stderr every this many files (0: never).
    pub progress_every: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            jobs: 1,
            timeout: Duration::from_secs(60),
            fuel: crate::eval::Limits::default().fuel,
            progress_every: 100,
        }
    }
}

/// The stack each worker runs on (the oracle evaluates the spec's outcomes there).
const WORKER_STACK: usize = 512 << 20;

/// Runs `files` through the adapter started by `command`, `o.jobs` processes at once.
pub fn run(name: &str, command: &str, files: &[PathBuf], expected: &ExpectedFailures, o: &Options) -> Results {
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<FileResult>>> = Mutex::new(vec![None; files.len()]);
    let handshake = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..o.jobs.max(1).min(files.len().max(1)) {
            let builder = std::thread::Builder::new().stack_size(WORKER_STACK);
            let spawned = builder.spawn_scoped(s, || {
                let mut adapter = Adapter::new(command);
                if adapter.start().is_ok() {
                    if let Ok(mut h) = handshake.lock() {
                        h.get_or_insert(adapter.handshake.clone());
                    }
                }
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(path) = files.get(i) else { break };
                    let r = run_file(&mut adapter, path, o);
                    if let Ok(mut slots) = slots.lock() {
                        slots[i] = Some(r);
                    }
                    let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                    if o.progress_every > 0 && (n.is_multiple_of(o.progress_every) || n == files.len()) {
                        eprintln!("[{name}] {n}/{} files, {:.0} s", files.len(), started.elapsed().as_secs_f64());
                    }
                }
                adapter.finish();
            });
            if let Err(e) = spawned {
                eprintln!("cannot start a worker: {e}");
            }
        }
    });
    let mut results: Vec<FileResult> = slots.into_inner().unwrap_or_default().into_iter().flatten().collect();
    for r in &mut results {
        if r.verdict == Verdict::Fail && expected.contains(&r.path) {
            r.verdict = Verdict::ExpectedFail;
        }
    }
    let hs = handshake.into_inner().ok().flatten().flatten();
    let implementation = Implementation {
        name: name.to_string(),
        command: command.to_string(),
        implementation: hs.as_ref().map(|h| h.implementation.clone()).unwrap_or_default(),
        implementation_version: hs.as_ref().map(|h| h.implementation_version.clone()).unwrap_or_default(),
        dialect: hs.as_ref().map(|h| h.dialect.clone()).unwrap_or_default(),
    };
    tables::summarize(implementation, results, expected, started.elapsed().as_secs_f64())
}

/// `path` as reports name it: relative, `/`-separated.
pub fn shown_path(path: &std::path::Path) -> String {
    let s = path.to_string_lossy().replace('\\', "/");
    s.strip_prefix("./").unwrap_or(&s).to_string()
}

/// The program text in `dialect`: the file as it is for `rx`, else printed from its
/// normal form when the oracle accepts it (TVMScript has no spelling for a SeqExpr
/// inside an expression; proofs-notes/conformance.md C-8), from its module when it
/// does not, and as written when it does not parse.
pub fn program_in(dialect: &str, src: &str, plan: &FilePlan) -> Result<String, String> {
    match (dialect, plan.normalized.as_ref().or(plan.module.as_ref())) {
        ("rx", _) | (_, None) => Ok(src.to_string()),
        (other, Some(m)) => match other.parse::<spec_model::text::Dialect>() {
            Ok(d) => Ok(spec_model::text::print_module_in(m, spec_model::text::DEFAULT_WIDTH, d)),
            Err(_) => Err(format!("the runner cannot write dialect `{other}`")),
        },
    }
}

fn run_file(adapter: &mut Adapter, path: &std::path::Path, o: &Options) -> FileResult {
    let shown = shown_path(path);
    let src = std::fs::read_to_string(path).unwrap_or_else(|e| format!("# cannot read {}: {e}\n", path.display()));
    let plan = plan_file(&src);
    let dialect = adapter.handshake.as_ref().map(|h| h.dialect.clone()).unwrap_or_else(|| "rx".into());
    let actions: Vec<String> = adapter.handshake.as_ref().map(|h| h.actions.clone()).unwrap_or_default();
    let sent = program_in(&dialect, &src, &plan);
    let mut requests = Vec::new();
    for (k, p) in plan.requests.iter().enumerate() {
        let skip = |why: String| RequestResult {
            action: p.action.name().into(),
            call: p.call.clone(),
            spec: p.spec.seen(),
            implementation: Seen { outcome: OutcomeClass::Unsupported, text: why.clone() },
            verdict: Verdict::Skip,
            why,
            millis: 0,
        };
        let program = match (&sent, &p.args) {
            (Err(why), _) | (_, Err(why)) => {
                requests.push(skip(why.clone()));
                continue;
            }
            (Ok(text), Ok(_)) => text.clone(),
        };
        if adapter.handshake.is_some() && !actions.iter().any(|a| a == p.action.name()) {
            requests.push(skip(format!("the adapter does not serve `{}`", p.action.name())));
            continue;
        }
        let req = Request {
            id: (adapter.starts as u64) << 32 | k as u64,
            action: p.action,
            name: shown.clone(),
            program,
            entry: p.entry.clone(),
            args: p.args.clone().unwrap_or_default(),
            fuel: (p.action == Action::Run).then_some(plan.fuel.unwrap_or(o.fuel)),
        };
        let t = Instant::now();
        let reply = adapter.request(&req, o.timeout);
        let millis = t.elapsed().as_millis() as u64;
        let (verdict, why) = judge(p, &reply, plan.tolerance);
        let stop = matches!(reply, Reply::Crash(_) | Reply::ProtocolError(_)) && adapter.start_error.is_some();
        requests.push(RequestResult {
            action: p.action.name().into(),
            call: p.call.clone(),
            spec: p.spec.seen(),
            implementation: seen(&reply),
            verdict,
            why,
            millis,
        });
        if stop {
            break;
        }
    }
    let verdict = if requests.iter().any(|r| r.verdict == Verdict::Fail) {
        Verdict::Fail
    } else if requests.iter().any(|r| r.verdict == Verdict::Skip) || requests.is_empty() {
        Verdict::Skip
    } else {
        Verdict::Pass
    };
    let why = requests.iter().find(|r| r.verdict == verdict && verdict != Verdict::Pass).map(|r| clip(&r.why, 300));
    FileResult {
        path: shown,
        section: tables::section_of_rules(&plan.rules).into(),
        rules: plan.rules,
        description: plan.description,
        verdict,
        why: why.unwrap_or_default(),
        requests,
        sent: sent.unwrap_or_else(|_| src.clone()),
        program: src,
    }
}

/// Files counted by verdict.
pub fn count<'a>(files: impl IntoIterator<Item = &'a FileResult>) -> Counts {
    let mut c = Counts::default();
    for f in files {
        c.add(f.verdict);
    }
    c
}
