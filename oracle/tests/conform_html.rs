//! The conformance page (`oracle::conform::html`): its server-rendered counts and
//! escaping, and, in headless Chromium, what its script renders from the embedded JSON.
//! The page is what a reader trusts, so the test checks the numbers it shows against the
//! `Results` it was made from, by both routes.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use oracle::conform::html::{json_for_script, render_html};
use oracle::conform::results::{
    Counts, FileResult, Implementation, OutcomeClass, RequestResult, Results, RuleRow, SectionRow, Seen, Verdict,
};

/// A program text that would end the JSON `<script>` early, or inject markup, if either
/// rendering forgot to escape it.
const HOSTILE: &str = "# ---\n# rules: [WF-3, SUB-5]\n# ---\n@R.function\ndef main(x: R.Tensor((), \"int32\")):\n    \
    s = \"</script><script>document.title='pwned'</script><b>INJECTED</b><!--<script>\"\n    return y & x\n";

fn seen(outcome: OutcomeClass, text: &str) -> Seen {
    Seen { outcome, text: text.to_string() }
}

fn request(
    action: &str,
    call: Option<&str>,
    spec: Seen,
    implementation: Seen,
    verdict: Verdict,
    why: &str,
) -> RequestResult {
    RequestResult {
        action: action.to_string(),
        call: call.map(str::to_string),
        spec,
        implementation,
        verdict,
        why: why.to_string(),
        millis: 7,
    }
}

fn file(
    path: &str,
    rules: &[&str],
    verdict: Verdict,
    why: &str,
    requests: Vec<RequestResult>,
    program: &str,
) -> FileResult {
    FileResult {
        path: path.to_string(),
        section: section_of(rules[0]).to_string(),
        rules: rules.iter().map(|r| r.to_string()).collect(),
        description: format!("what {path} tests"),
        verdict,
        why: why.to_string(),
        requests,
        program: program.to_string(),
        sent: program.to_string(),
    }
}

fn section_of(rule: &str) -> &'static str {
    match rule.split('-').next().unwrap_or("") {
        "NF" | "NORM" => "Normal Form",
        "WF" => "Well-Formedness Criteria",
        "SUB" => "Rules for Subtyping",
        "TY" => "Type Checking Rules",
        "SI" => "StructInfo",
        "SEM" => "Evaluating Expressions",
        "LIMIT" => "Limits",
        _ => "Operators",
    }
}

/// Fills in every count of a `Results` from its files, the way the runner does, so a
/// test's expectations cannot drift from the data.
fn tally(implementation: Implementation, rules: &[(&str, &str)], results: Vec<FileResult>, seconds: f64) -> Results {
    let mut files = Counts::default();
    let mut run_files = Counts::default();
    let mut outcomes = BTreeMap::new();
    let mut rows: Vec<RuleRow> = rules
        .iter()
        .map(|(rule, summary)| RuleRow {
            rule: rule.to_string(),
            section: section_of(rule).to_string(),
            summary: summary.to_string(),
            counts: Counts::default(),
            failing: vec![],
        })
        .collect();
    let mut sections: Vec<SectionRow> = vec![];
    for row in &rows {
        if !sections.iter().any(|s| s.section == row.section) {
            sections.push(SectionRow { section: row.section.clone(), counts: Counts::default() });
        }
    }
    for f in &results {
        files.add(f.verdict);
        if f.requests.iter().any(|q| q.action == "run") {
            run_files.add(f.verdict);
        }
        for q in &f.requests {
            *outcomes.entry(q.implementation.outcome.name().to_string()).or_insert(0) += 1;
        }
        for row in rows.iter_mut().filter(|row| f.rules.contains(&row.rule)) {
            row.counts.add(f.verdict);
            if f.verdict != Verdict::Pass {
                row.failing.push(f.path.clone());
            }
        }
        if let Some(s) = sections.iter_mut().find(|s| s.section == f.section) {
            s.counts.add(f.verdict);
        }
    }
    let new_failures = results.iter().filter(|f| f.verdict == Verdict::Fail).map(|f| f.path.clone()).collect();
    Results {
        protocol: 1,
        implementation,
        paths: vec!["corpus".to_string()],
        files,
        run_files,
        outcomes,
        new_failures,
        fixed: vec![],
        rules: rows,
        sections,
        results,
        seconds,
    }
}

fn synthetic() -> Results {
    use OutcomeClass::*;
    use Verdict::*;
    let rules = [
        ("WF-3", "A variable may not appear before it is bound (nor outside the scope of its binding)."),
        ("WF-7", "A function that calls itself recursively must have a return annotation."),
        ("SUB-5", "Tuple types are subtypes fieldwise (same length, each field a subtype)."),
        ("SEM-9.1", "A call of an Op evaluates the arguments in order, then applies the operator."),
        ("OP-add", "Elementwise addition with broadcasting; <dtype> of both operands must agree & match."),
    ];
    let check_ok = |v| request("check", None, seen(Accepted, ""), seen(Accepted, ""), v, "");
    let mut add = file(
        "corpus/eval_ops/add_broadcast.rx",
        &["OP-add", "SEM-9.1"],
        Fail,
        "run main: the spec gives a value, the implementation a runtime-error",
        vec![
            check_ok(Pass),
            request(
                "run",
                Some("main(R.const([1, 2], \"int32\"))"),
                seen(Value, "R.const([2, 4], \"int32\")"),
                seen(RuntimeError, "ValueError: broadcast <shape> mismatch"),
                Fail,
                "the spec gives a value, the implementation a runtime-error",
            ),
        ],
        "# ---\n# rules: [OP-add, SEM-9.1]\n# ---\ndef main(x):\n    return R.add(x, x)\n",
    );
    add.sent = "# from tvm.script import relax as R\n@R.function\ndef main(x):\n    return R.add(x, x)\n".to_string();
    let results = vec![
        file("corpus/wellformed/wf_3_use_before_def.rx", &["WF-3"], Pass, "", vec![check_ok(Pass)], "def f(): ..."),
        file(
            "corpus/wellformed/wf_3_scope.rx",
            &["WF-3", "SUB-5"],
            Fail,
            "check: the spec rejects, the implementation accepts",
            vec![request(
                "check",
                None,
                seen(Rejected, "error[WF-3]: variable y used before its definition"),
                seen(Accepted, ""),
                Fail,
                "the spec rejects, the implementation accepts",
            )],
            HOSTILE,
        ),
        file(
            "corpus/types/sub_5_tuple.rx",
            &["SUB-5"],
            ExpectedFail,
            "check: the spec accepts, the implementation rejects",
            vec![request(
                "check",
                None,
                seen(Accepted, ""),
                seen(Rejected, "TVMError: tuple sinfo <mismatch>"),
                Fail,
                "the spec accepts, the implementation rejects",
            )],
            "def g(): ...",
        ),
        add,
        file(
            "corpus/eval_ops/add_unsupported.rx",
            &["OP-add"],
            Skip,
            "unsupported: R.call_pure_packed of an unknown function",
            vec![request(
                "check",
                None,
                seen(Accepted, ""),
                seen(Unsupported, "R.call_pure_packed of an unknown function"),
                Skip,
                "unsupported",
            )],
            "def h(): ...",
        ),
        file(
            "corpus/eval/sem_9_1.rx",
            &["SEM-9.1"],
            Pass,
            "",
            vec![
                check_ok(Pass),
                request("run", Some("main()"), seen(Value, "R.const(1)"), seen(Value, "R.const(1)"), Pass, ""),
            ],
            "def main(): ...",
        ),
        file("corpus/odd/it's <odd> & \"quoted\".rx", &["WF-3"], Pass, "", vec![check_ok(Pass)], "def k(): ..."),
    ];
    let implementation = Implementation {
        name: "tvm".to_string(),
        command: "python3 adapters/tvm.py --flag \"<x>\"".to_string(),
        implementation: "apache-tvm".to_string(),
        implementation_version: "0.27.0.post1".to_string(),
        dialect: "tvm-0.27".to_string(),
    };
    tally(implementation, &rules, results, 12.345)
}

// A small reader for the markup both renderings produce: every attribute value is
// double-quoted, which is how the page writes them and how Chromium serializes a DOM.

#[derive(Debug)]
struct Element {
    attrs: BTreeMap<String, String>,
    /// Byte offset just past the start tag's `>`.
    inner: usize,
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).map(String::as_str)
    }
    fn num(&self, name: &str) -> usize {
        let v = self.attr(name).unwrap_or_else(|| panic!("no {name} on {:?}", self.attrs));
        v.parse().unwrap_or_else(|_| panic!("{name}={v:?} is not a count"))
    }
    fn has_class(&self, class: &str) -> bool {
        self.attr("class").is_some_and(|c| c.split_whitespace().any(|x| x == class))
    }
    /// The text up to the element's end tag (for elements holding only text).
    fn text(&self, doc: &str, tag: &str) -> String {
        let end = doc[self.inner..].find(&format!("</{tag}>")).expect("closed element") + self.inner;
        unescape(&doc[self.inner..end])
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// The `tag` elements of `doc` with class `class`, in document order.
fn elements(doc: &str, tag: &str, class: &str) -> Vec<Element> {
    let open = format!("<{tag}");
    let mut out = vec![];
    let mut at = 0;
    while let Some(i) = doc[at..].find(&open) {
        let mut p = at + i + open.len();
        at = p;
        if !doc[p..].starts_with([' ', '>', '\n']) {
            continue;
        }
        let mut attrs = BTreeMap::new();
        loop {
            p += doc[p..].len() - doc[p..].trim_start().len();
            if doc[p..].starts_with('>') {
                p += 1;
                break;
            }
            let name_len = doc[p..].find(['=', ' ', '>', '\n']).expect("unterminated tag");
            let name = doc[p..p + name_len].to_string();
            p += name_len;
            let value = if doc[p..].starts_with("=\"") {
                let len = doc[p + 2..].find('"').expect("unterminated attribute");
                let v = unescape(&doc[p + 2..p + 2 + len]);
                p += 2 + len + 1;
                v
            } else {
                String::new()
            };
            attrs.insert(name, value);
        }
        let e = Element { attrs, inner: p };
        if class.is_empty() || e.has_class(class) {
            out.push(e);
        }
    }
    out
}

fn check_counts(e: &Element, c: &Counts, what: &str) {
    let got = [e.num("data-pass"), e.num("data-fail"), e.num("data-skip"), e.num("data-expected-fail")];
    assert_eq!(got, [c.pass, c.fail, c.skip, c.expected_fail], "{what}: pass, fail, skip, expected-fail");
    assert_eq!(e.num("data-total"), c.total(), "{what}: total");
}

/// What each `#summary [data-count]` element must say.
fn expected_summary(r: &Results) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for (prefix, c) in [("files", &r.files), ("run", &r.run_files)] {
        m.insert(format!("{prefix}-pass"), c.pass);
        m.insert(format!("{prefix}-fail"), c.fail);
        m.insert(format!("{prefix}-skip"), c.skip);
        m.insert(format!("{prefix}-expected-fail"), c.expected_fail);
        m.insert(format!("{prefix}-total"), c.total());
    }
    for o in ["accepted", "rejected", "value", "runtime-error", "unsupported", "crash", "timeout", "protocol-error"] {
        m.insert(format!("outcome-{o}"), r.outcomes.get(o).copied().unwrap_or(0));
    }
    m.insert("new-failures".to_string(), r.new_failures.len());
    m.insert("fixed".to_string(), r.fixed.len());
    m
}

/// The checks both renderings must pass: the rule table, the summary and the file list.
fn check_tables(doc: &str, r: &Results, what: &str) {
    let rows = elements(doc, "tr", "rule");
    let ids: Vec<&str> = rows.iter().map(|e| e.attr("data-rule").unwrap()).collect();
    let want: Vec<&str> = r.rules.iter().map(|row| row.rule.as_str()).collect();
    assert_eq!(ids, want, "{what}: one rule row per rule, in order");
    for (e, row) in rows.iter().zip(&r.rules) {
        check_counts(e, &row.counts, &format!("{what}: rule {}", row.rule));
    }
    let sections = elements(doc, "tr", "section");
    assert_eq!(sections.len(), r.sections.len(), "{what}: one row per section");
    for (e, s) in sections.iter().zip(&r.sections) {
        assert_eq!(e.attr("data-section"), Some(s.section.as_str()));
        check_counts(e, &s.counts, &format!("{what}: section {}", s.section));
    }
    let counts: Vec<Element> = elements(doc, "dd", "").into_iter().filter(|e| e.attr("data-count").is_some()).collect();
    let want = expected_summary(r);
    let got: BTreeMap<String, usize> =
        counts.iter().map(|e| (e.attr("data-count").unwrap().to_string(), e.num("data-value"))).collect();
    assert_eq!(got, want, "{what}: the summary counts");
    for e in &counts {
        assert_eq!(e.text(doc, "dd"), e.num("data-value").to_string(), "{what}: shown as stored");
    }
    let files: Vec<String> =
        elements(doc, "tr", "file").iter().map(|e| e.attr("data-path").unwrap().to_string()).collect();
    let want: Vec<String> = r.results.iter().map(|f| f.path.clone()).collect();
    assert_eq!(files, want, "{what}: the file list has every file, in order");
}

#[test]
fn conform_html_server_side_counts_and_escaping() {
    let r = synthetic();
    let page = render_html(&r);
    check_tables(&page, &r, "server-rendered");
    // Before the script runs, no row carries the script's mark.
    assert!(elements(&page, "tr", "rule").iter().all(|e| e.attr("data-js-total").is_none()));

    // The program text cannot end the data block or inject markup: the page has exactly
    // the two script elements it writes, and no `<b>INJECTED` outside escaped text.
    assert_eq!(page.matches("<script").count(), 2, "only the page's own script elements");
    assert_eq!(page.matches("</script>").count(), 2);
    assert!(!page.contains("<b>INJECTED"));
    assert!(!page.contains("<!--<script>"));
    let start = page.find("<script type=\"application/json\" id=\"results\">").unwrap();
    let json = &page[start..].split_once('>').unwrap().1.split_once("</script>").unwrap().0;
    assert!(!json.contains('<'), "no `<` in the data block at all");
    assert_eq!(*json, json_for_script(&r));
    let back: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(back, serde_json::to_value(&r).unwrap(), "the data block is the Results");
    assert_eq!(back["results"][1]["program"].as_str(), Some(HOSTILE));

    // Attribute and text escaping of names a corpus path or summary could contain.
    assert!(page.contains("data-path=\"corpus/odd/it&#39;s &lt;odd&gt; &amp; &quot;quoted&quot;.rx\""));
    assert!(page.contains(
        "title=\"Elementwise addition with broadcasting; &lt;dtype&gt; of both operands must agree &amp; match.\""
    ));
    assert!(page.contains("<code id=\"command\">python3 adapters/tvm.py --flag &quot;&lt;x&gt;&quot;</code>"));

    // The page is a function of the Results: no date, nothing random.
    assert_eq!(page, render_html(&r.clone()));
    assert!(page.contains("<b id=\"seconds\">12.3</b>"));
    assert!(!page.contains("http://") && !page.contains("https://"), "nothing fetched from the network");
}

fn chromium() -> Option<PathBuf> {
    let fixed = PathBuf::from("/usr/bin/chromium");
    if fixed.is_file() {
        return Some(fixed);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join("chromium")).find(|p| p.is_file())
}

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        let dir = std::env::temp_dir().join(format!("oracle-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The DOM after the page's script ran, as Chromium serializes it; killed after 60 s so
/// a hung browser fails the test instead of hanging it.
fn dump_dom(browser: &Path, page: &Path) -> String {
    let profile = TempDir::new("chromium-profile");
    let mut child = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .arg(format!("--user-data-dir={}", profile.0.display()))
        .args(["--virtual-time-budget=5000", "--dump-dom"])
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).map(|_| s)
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 60 s; stderr:\n{}", err.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let dom = out.join().unwrap().expect("chromium's output is UTF-8");
    let err = err.join().unwrap();
    assert!(status.success() && !dom.is_empty(), "chromium failed ({status}); stderr:\n{err}");
    dom
}

#[test]
fn conform_html_in_headless_chromium() {
    let Some(browser) = chromium() else {
        if std::env::var("RELAX_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
            panic!("chromium not installed (/usr/bin/chromium or on PATH) and RELAX_REQUIRE_CHROMIUM=1");
        }
        eprintln!("skipped: chromium not installed");
        return;
    };
    let r = synthetic();
    let dir = TempDir::new("conform-html");
    let path = dir.0.join("conformance.html");
    std::fs::write(&path, render_html(&r)).unwrap();
    let dom = dump_dom(&browser, &path);

    let html = elements(&dom, "html", "");
    assert_eq!(html[0].attr("data-js"), Some("ready"), "the page's script ran to the end");
    check_tables(&dom, &r, "script-rendered");

    // The rows are the script's (it marks them), and its counts equal the Results'.
    for (e, row) in elements(&dom, "tr", "rule").iter().zip(&r.rules) {
        assert_eq!(e.num("data-js-total"), row.counts.total(), "rule {}", row.rule);
    }
    for e in elements(&dom, "dd", "").iter().filter(|e| e.attr("data-count").is_some()) {
        assert_eq!(e.attr("data-js-value"), e.attr("data-value"), "summary {:?}", e.attr("data-count"));
    }

    // Each rule's expansion lists exactly the files naming it.
    let expansions = elements(&dom, "tr", "rule-files");
    assert_eq!(expansions.len(), r.rules.len());
    let chips = elements(&dom, "a", "chip");
    for (e, row) in expansions.iter().zip(&r.rules) {
        assert_eq!(e.attr("data-rule"), Some(row.rule.as_str()));
        assert!(e.attr("hidden").is_some(), "collapsed until clicked");
        let next = expansions.iter().map(|x| x.inner).find(|&i| i > e.inner).unwrap_or(dom.len());
        let mut got: Vec<&str> = chips
            .iter()
            .filter(|c| c.inner > e.inner && c.inner < next)
            .map(|c| c.attr("data-path").unwrap())
            .collect();
        let mut want: Vec<&str> =
            r.results.iter().filter(|f| f.rules.contains(&row.rule)).map(|f| f.path.as_str()).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "files of {}", row.rule);
    }

    // Every file that did not pass has its details built, hidden, with what the reader
    // needs: the program, the text sent, and each request's two sides.
    let details = elements(&dom, "section", "detail");
    let not_passing: Vec<&FileResult> = r.results.iter().filter(|f| f.verdict != Verdict::Pass).collect();
    assert_eq!(details.len(), not_passing.len(), "details of every file that did not pass");
    for (d, f) in details.iter().zip(&not_passing) {
        assert_eq!(d.attr("data-path"), Some(f.path.as_str()));
        assert_eq!(d.attr("data-verdict"), Some(f.verdict.name()));
        let end = details.iter().map(|x| x.inner).find(|&i| i > d.inner).unwrap_or(dom.len());
        let inside = |e: &Element| e.inner > d.inner && e.inner < end;
        let program: Vec<String> =
            elements(&dom, "pre", "program").iter().filter(|e| inside(e)).map(|e| e.text(&dom, "pre")).collect();
        assert_eq!(program, std::slice::from_ref(&f.program), "{}: the program, intact", f.path);
        let sent: Vec<String> =
            elements(&dom, "pre", "sent").iter().filter(|e| inside(e)).map(|e| e.text(&dom, "pre")).collect();
        let want_sent = if f.sent != f.program { vec![f.sent.clone()] } else { vec![] };
        assert_eq!(sent, want_sent, "{}: the text sent, when it differs", f.path);
        let requests: Vec<Element> = elements(&dom, "div", "request").into_iter().filter(|e| inside(e)).collect();
        assert_eq!(requests.len(), f.requests.len(), "{}: every request", f.path);
        let texts: Vec<String> =
            elements(&dom, "pre", "text").iter().filter(|e| inside(e)).map(|e| e.text(&dom, "pre")).collect();
        let sides: Vec<Element> = elements(&dom, "div", "side").into_iter().filter(|e| inside(e)).collect();
        for (i, (e, q)) in requests.iter().zip(&f.requests).enumerate() {
            assert_eq!(e.attr("data-action"), Some(q.action.as_str()));
            assert_eq!(e.attr("data-verdict"), Some(q.verdict.name()));
            assert_eq!(sides[2 * i].attr("data-outcome"), Some(q.spec.outcome.name()));
            assert_eq!(sides[2 * i + 1].attr("data-outcome"), Some(q.implementation.outcome.name()));
            let show = |s: &str| if s.is_empty() { "\u{2014}".to_string() } else { s.to_string() };
            assert_eq!(texts[2 * i], show(&q.spec.text), "{}: the spec's text", f.path);
            assert_eq!(texts[2 * i + 1], show(&q.implementation.text), "{}: the implementation's text", f.path);
            if !q.why.is_empty() {
                assert!(dom[e.inner..end].contains(&format!("<p class=\"why\">{}</p>", q.why)));
            }
        }
    }

    // The hostile program is text in the DOM, not markup: no script element, no <b>, and
    // the document title is the page's own.
    assert_eq!(dom.matches("<script").count(), 2, "no script element came from a program text");
    assert!(!dom.contains("<b>INJECTED"));
    assert!(dom.contains("&lt;/script&gt;&lt;script&gt;document.title='pwned'&lt;/script&gt;&lt;b&gt;INJECTED"));
    assert!(dom.contains("<title>Relax conformance: tvm</title>"));
}

/// A page made from the real corpus with made-up verdicts, to look at rather than to
/// check: `cargo test --release -p oracle --test conform_html -- --ignored` writes
/// `target/conform-sample.html`.
#[test]
#[ignore]
fn conform_html_sample_page() {
    use oracle::corpus::{collect_files, parse_metadata, Expectation};
    use spec_model::rules::{rule_summary, LIMITS, RULES, RUNTIME_RULES};
    use OutcomeClass::*;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut results = vec![];
    for p in collect_files(&[root.join("corpus")]).unwrap() {
        let src = std::fs::read_to_string(&p).unwrap();
        let Ok(md) = parse_metadata(&src) else { continue };
        if md.rules.is_empty() {
            continue;
        }
        let path = p.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        let hash = path.bytes().fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
        let verdict = match hash % 100 {
            0..=5 => Verdict::Fail,
            6..=9 => Verdict::ExpectedFail,
            10..=14 => Verdict::Skip,
            _ => Verdict::Pass,
        };
        let (impl_seen, why) = match verdict {
            Verdict::Pass => (seen(Accepted, ""), ""),
            Verdict::Skip => (seen(Unsupported, "no counterpart in TVM"), "unsupported: no counterpart in TVM"),
            _ => (
                seen(Rejected, "TVMError: Check failed: (sinfo.defined()) is false"),
                "the spec accepts, the implementation rejects",
            ),
        };
        let q = if verdict == Verdict::Pass {
            Verdict::Pass
        } else if verdict == Verdict::Skip {
            Verdict::Skip
        } else {
            Verdict::Fail
        };
        let mut requests = vec![request("check", None, seen(Accepted, ""), impl_seen, q, why)];
        for e in &md.expectations {
            if let Expectation::RunValue { call, value } = e {
                requests.push(request("run", Some(call), seen(Value, value), seen(Value, value), Verdict::Pass, ""));
            }
        }
        let rules: Vec<&str> = md.rules.iter().map(String::as_str).collect();
        let mut f = file(&path, &rules, verdict, why, requests, &src);
        f.description = md.description.clone();
        // What a TVMScript printer would send: the program without the metadata comments.
        f.sent = src.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n").trim_start().to_string();
        results.push(f);
    }
    let mut ops: Vec<String> =
        results.iter().flat_map(|f| f.rules.iter()).filter(|r| r.starts_with("OP-")).cloned().collect();
    ops.sort();
    ops.dedup();
    let mut rules: Vec<(&str, &str)> = RULES.iter().chain(RUNTIME_RULES).chain(LIMITS).copied().collect();
    rules.extend(ops.iter().map(|r| (r.as_str(), rule_summary(r).unwrap_or(""))));
    let implementation = Implementation {
        name: "tvm".to_string(),
        command: "python3 conformance/adapters/tvm.py".to_string(),
        implementation: "apache-tvm".to_string(),
        implementation_version: "0.27.0.post1".to_string(),
        dialect: "tvm-0.27".to_string(),
    };
    let r = tally(implementation, &rules, results, 84.2);
    let out = root.join("target/conform-sample.html");
    std::fs::write(&out, render_html(&r)).unwrap();
    eprintln!("wrote {}", out.display());
}
