//! The test-case reducer behind `fuzz-reduce`: shrinks a corpus-format program while a
//! failure (a [`Predicate`]) persists, greedily, pass after pass ([`passes::PASSES`],
//! coarse to fine) until a round changes nothing or the evaluation budget is spent.
//!
//! Candidates are built on the AST, printed, re-parsed and printed again; one that does
//! not print back to the same text is dropped, as is one that is not smaller (printed
//! length, then the weight of its literals) or was already refuted. The predicate is
//! then evaluated on the printed text (and the `run:` call), on a large-stack thread
//! that catches panics.

pub mod inputs;
pub mod output;
pub mod passes;
pub mod predicate;
pub mod sites;

pub use predicate::Predicate;

use oracle::corpus::{parse_metadata, Expectation, Metadata, DEFAULT_TOLERANCE};
use predicate::{holds_cmd, holds_in_process, panic_message};
use spec_model::grammar::{Expr, ExprKind, IRModule};
use spec_model::text::{parse_expr_in_module, parse_module, print_expr, print_module, DEFAULT_WIDTH};
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

/// How a reduction runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// The most predicate evaluations to spend.
    pub max_evals: usize,
    /// Which `run:` line the predicate evaluates (1-based).
    pub run: usize,
    /// A call to use instead of the file's `run:` line.
    pub call: Option<String>,
    /// Log each accepted candidate on stderr.
    pub verbose: bool,
    /// Per adapter request (`against:`).
    pub timeout: std::time::Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options { max_evals: 5_000, run: 1, call: None, verbose: false, timeout: std::time::Duration::from_secs(60) }
    }
}

/// A program's size as reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    /// Characters of the printed module and the `run:` call.
    pub chars: usize,
    pub functions: usize,
    pub bindings: usize,
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        write!(f, "{} chars, {}, {}", self.chars, plural(self.functions, "function"), plural(self.bindings, "binding"))
    }
}

/// What a reduction produced.
#[derive(Clone, Debug)]
pub struct Report {
    /// The reduced program as a corpus file.
    pub output: String,
    pub before: Size,
    pub after: Size,
    /// Predicate evaluations spent (the first, on the input, included).
    pub evals: usize,
    /// Whether the budget ran out before a fixed point.
    pub cap_hit: bool,
    pub rounds: usize,
    /// Remarks for the user (e.g. why the output has no `run:` line).
    pub notes: Vec<String>,
}

/// The reducer's state: the smallest program found so far that keeps the failure.
pub struct Reducer {
    pred: Predicate,
    md: Metadata,
    tol: f64,
    pub module: IRModule,
    /// The `run:` call, if any, as an expression over the module's globals.
    pub call: Option<Expr>,
    /// The global the call names (never removed).
    pub entry: Option<String>,
    text: String,
    call_text: Option<String>,
    size: (usize, f64),
    pub evals: usize,
    max_evals: usize,
    pub cap_hit: bool,
    refuted: HashSet<u64>,
    tmp: Option<PathBuf>,
    verbose: bool,
    pass: &'static str,
    generation: usize,
    sinfo_cache: Option<(usize, HashMap<u64, String>)>,
    /// For `against:`: the implementation, and the divergence to keep (the input's first).
    against: Option<(crate::against::Against, Option<String>)>,
}

fn call_text(call: &Expr) -> String {
    output::one_line(&print_expr(call))
}

/// `print(parse(text))`, if it parses (without panicking) and prints back to `text`.
fn reparse(text: &str) -> Option<IRModule> {
    let m = catch_unwind(|| parse_module(text)).ok()?.ok()?;
    (print_module(&m, DEFAULT_WIDTH) == text).then_some(m)
}

impl Reducer {
    /// Evaluates the predicate on a printed candidate.
    fn holds(&mut self, text: &str, call: Option<&str>) -> bool {
        match &self.pred {
            Predicate::Cmd(cmd) => {
                let file = output::render_file(&self.md, text, call, &self.pred);
                let Some(dir) = &self.tmp else { return false };
                let path = dir.join("candidate.rx");
                if std::fs::write(&path, file).is_err() {
                    return false;
                }
                holds_cmd(cmd, &path)
            }
            Predicate::Against(_) => {
                let file = output::render_file(&self.md, text, call, &self.pred);
                let Some((imp, target)) = &mut self.against else { return false };
                let found = imp.divergences("reduce/candidate", &file);
                match target {
                    Some(t) => found.iter().any(|d| &d.base == t),
                    None => match found.first() {
                        Some(d) => {
                            *target = Some(d.base.clone());
                            true
                        }
                        None => false,
                    },
                }
            }
            p => holds_in_process(p, text, call, self.tol),
        }
    }

    /// The divergence an `against:` reduction keeps (known once the input was tried).
    pub fn kept_divergence(&self) -> Option<&str> {
        self.against.as_ref().and_then(|(_, t)| t.as_deref())
    }

    /// Keeps the candidate `(m, call)` if it prints and re-parses to itself, is smaller
    /// than the current program, and still satisfies the predicate.
    pub fn try_candidate(&mut self, m: IRModule, call: Option<Expr>) -> bool {
        if self.cap_hit {
            return false;
        }
        let text = print_module(&m, DEFAULT_WIDTH);
        let Some(m) = reparse(&text) else { return false };
        let (call, ctext) = match &call {
            Some(c) => {
                let t = call_text(c);
                match catch_unwind(AssertUnwindSafe(|| parse_expr_in_module(&m, &t))) {
                    Ok(Ok(c)) if call_text(&c) == t => (Some(c), Some(t)),
                    _ => return false,
                }
            }
            None => (None, None),
        };
        let size = (text.len() + ctext.as_ref().map_or(0, String::len), inputs::weight(&m, call.as_ref()));
        if size.0 > self.size.0 || (size.0 == self.size.0 && size.1 >= self.size.1) {
            return false;
        }
        let mut h = DefaultHasher::new();
        (&text, &ctext).hash(&mut h);
        let key = h.finish();
        if self.refuted.contains(&key) {
            return false;
        }
        if self.evals >= self.max_evals {
            self.cap_hit = true;
            return false;
        }
        self.evals += 1;
        if !self.holds(&text, ctext.as_deref()) {
            self.refuted.insert(key);
            return false;
        }
        if self.verbose {
            eprintln!("[{}] {} -> {} chars", self.pass, self.size.0, size.0);
        }
        self.module = m;
        self.call = call;
        self.text = text;
        self.call_text = ctext;
        self.size = size;
        self.generation += 1;
        true
    }

    /// The printed StructInfo the checker derives for each variable of the current
    /// program (by variable id), or nothing if it derives none.
    pub fn sinfo_map(&mut self) -> HashMap<u64, String> {
        if let Some((g, map)) = &self.sinfo_cache {
            if *g == self.generation {
                return map.clone();
            }
        }
        let m = &self.module;
        let map = catch_unwind(AssertUnwindSafe(|| {
            let report = oracle::check::check_module(m, false);
            let mut map = HashMap::new();
            if let Some(s) = &report.sinfo {
                for (_, v, si) in &s.bindings {
                    map.insert(v.id(), spec_model::text::print_struct_info(si));
                }
            }
            map
        }))
        .unwrap_or_default();
        self.sinfo_cache = Some((self.generation, map.clone()));
        map
    }

    fn size_report(&self) -> Size {
        Size {
            chars: self.size.0,
            functions: self.module.functions.len(),
            bindings: sites::count_bindings(&self.module),
        }
    }
}

impl Drop for Reducer {
    fn drop(&mut self) {
        if let Some(dir) = &self.tmp {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The metadata block (an empty one when the file has none) and the program text. Two
/// slips of a writer that does not know the outcome yet are forgiven: a `run:` line
/// without an `expect:`, and a `run:` call pretty-printed over several lines (whose
/// continuation lines are blanked out of the program text).
fn metadata(src: &str) -> Result<(Metadata, String), String> {
    if !src.trim_start().starts_with("# ---") {
        return Ok((Metadata::default(), src.to_string()));
    }
    let e = match parse_metadata(src) {
        Ok(md) => return Ok((md, src.to_string())),
        Err(e) => e,
    };
    let mut block: Vec<String> = Vec::new();
    let mut program: Vec<&str> = Vec::new();
    let mut fences = 0;
    for line in src.lines() {
        let t = line.trim();
        let after_run = fences == 1 && block.last().is_some_and(|l| l.starts_with("# run:"));
        if after_run && !t.starts_with('#') {
            let last = block.last_mut().expect("a run line");
            *last = format!("# run: {}", output::one_line(&format!("{}\n{t}", &last["# run:".len()..])));
            program.push("");
            continue;
        }
        if after_run && !t.starts_with("# expect:") {
            block.push("# expect: ?".to_string());
        }
        fences += usize::from(t == "# ---");
        block.push(line.to_string());
        program.push(line);
    }
    let md = parse_metadata(&block.join("\n")).map_err(|_| format!("bad metadata block: {e}"))?;
    Ok((md, program.join("\n")))
}

/// The call the predicate evaluates: `--call`, else the chosen `run:` line.
fn chosen_call(md: &Metadata, opts: &Options, pred: &Predicate) -> Result<Option<String>, String> {
    if let Some(c) = &opts.call {
        return Ok(Some(c.clone()));
    }
    let runs: Vec<&String> = md
        .expectations
        .iter()
        .filter_map(|e| match e {
            Expectation::RunError { call, .. } | Expectation::RunValue { call, .. } => Some(call),
            _ => None,
        })
        .collect();
    match runs.get(opts.run.wrapping_sub(1)) {
        Some(c) => Ok(Some((*c).clone())),
        None if opts.run > 1 && !runs.is_empty() => {
            Err(format!("there is no `run:` line {} (the file has {})", opts.run, runs.len()))
        }
        None if pred.needs_run() => {
            Err(format!("the predicate `{pred}` runs the program, but the file has no `# run:` line (or give --call)"))
        }
        None => Ok(None),
    }
}

/// Reduces the corpus-format program `src` while `pred` holds. An `Err` is a problem
/// with the input (it does not parse, the predicate does not hold on it, ...).
pub fn reduce_source(src: &str, pred: &Predicate, opts: &Options) -> Result<Report, String> {
    let (md, program) = metadata(src)?;
    let src = program.as_str();
    let call_src = chosen_call(&md, opts, pred)?;
    let original = match catch_unwind(|| parse_module(src)) {
        Ok(Ok(m)) => m,
        Ok(Err(e)) => return Err(format!("the input does not parse:\n{}", e.render("<input>", src))),
        Err(p) => {
            return Err(format!(
                "the parser panics on the input ({}); the reducer works on parsed programs",
                panic_message(&*p)
            ))
        }
    };
    let text = print_module(&original, DEFAULT_WIDTH);
    let Some(module) = reparse(&text) else {
        return Err("the input's printed form does not re-parse to itself (a printer bug); cannot reduce".into());
    };
    let call = match &call_src {
        Some(c) => match parse_expr_in_module(&module, c) {
            Ok(e) => Some(e),
            Err(e) => return Err(format!("the run call `{c}` does not parse: {}", e.0.message)),
        },
        None => None,
    };
    let entry = match call.as_ref().map(|c| &c.kind) {
        Some(ExprKind::Call(c)) => match &c.op.kind {
            ExprKind::GlobalVar(gv) => Some(gv.name.clone()),
            _ => None,
        },
        _ => module.get("main").map(|_| "main".to_string()),
    };
    let tmp = match pred {
        Predicate::Cmd(_) => {
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            let dir = std::env::temp_dir().join(format!("fuzz-reduce-{}-{nanos}", std::process::id()));
            std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            Some(dir)
        }
        _ => None,
    };
    let ctext = call.as_ref().map(call_text);
    let size = (text.len() + ctext.as_ref().map_or(0, String::len), inputs::weight(&module, call.as_ref()));
    let mut r = Reducer {
        pred: pred.clone(),
        tol: md.tolerance.unwrap_or(DEFAULT_TOLERANCE),
        md,
        module,
        call,
        entry,
        text,
        call_text: ctext,
        size,
        evals: 0,
        max_evals: opts.max_evals.max(1),
        cap_hit: false,
        refuted: HashSet::new(),
        tmp,
        verbose: opts.verbose,
        pass: "input",
        generation: 0,
        sinfo_cache: None,
        against: match pred {
            Predicate::Against(cmd) => Some((crate::against::Against::new(cmd, opts.timeout), None)),
            _ => None,
        },
    };
    let before = r.size_report();
    let (t, c) = (r.text.clone(), r.call_text.clone());
    r.evals += 1;
    if !r.holds(&t, c.as_deref()) {
        let plain = matches!(pred, Predicate::Cmd(_) | Predicate::Against(_)) || !r.holds(src, call_src.as_deref());
        return Err(if plain {
            format!("predicate does not hold on the input (`{pred}`)")
        } else {
            format!("predicate does not hold on the input's canonical printed form (`{pred}`), which the reducer works on, though it holds on the input as written")
        });
    }
    let mut rounds = 0;
    loop {
        rounds += 1;
        let start = r.size;
        for (name, pass) in passes::PASSES {
            r.pass = name;
            pass(&mut r);
            if r.cap_hit {
                break;
            }
        }
        if r.cap_hit || r.size == start {
            break;
        }
    }
    let output = output::render_file(&r.md, &r.text, r.call_text.as_deref(), pred);
    let mut notes = Vec::new();
    if let Some(call) = r.call_text.as_deref().filter(|_| !output.contains("\n# run: ")) {
        notes.push(format!(
            "the output has no `run:` line (the reduced program is refused statically, or its result has no literal form); the call was: {call}"
        ));
    }
    if let Some(kept) = r.kept_divergence() {
        notes.push(format!("kept divergence: {kept}"));
    }
    Ok(Report { output, before, after: r.size_report(), evals: r.evals, cap_hit: r.cap_hit, rounds, notes })
}

/// [`reduce_source`] with panics silenced (candidates that panic are expected while
/// reducing; the default hook would print each one).
pub fn reduce_quietly(src: &str, pred: &Predicate, opts: &Options) -> Result<Report, String> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = catch_unwind(AssertUnwindSafe(|| reduce_source(src, pred, opts)));
    std::panic::set_hook(previous);
    r.unwrap_or_else(|p| Err(format!("the reducer panicked: {}", panic_message(&*p))))
}
