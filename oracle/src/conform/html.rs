//! The conformance report as one static HTML page, in the manner of test262.fyi.
//!
//! The page is a single file with its CSS, script and data inline, so it can be mailed,
//! archived or opened from disk with no network. It is a pure function of the `Results`
//! (no date, no randomness), so two runs that found the same thing give the same bytes.
//! The summary, the sections and the rule table are rendered here as well as by the
//! script: the page reads without JavaScript, and a test can compare the two renderings.

use std::fmt::Write;

use super::results::{Counts, OutcomeClass, Results, Verdict};

const CSS: &str = include_str!("html/page.css");
const JS: &str = include_str!("html/page.js");

/// The outcome classes in the order the protocol lists them; the page shows every one,
/// zeros included, so two reports line up.
const OUTCOMES: [OutcomeClass; 8] = [
    OutcomeClass::Accepted,
    OutcomeClass::Rejected,
    OutcomeClass::Value,
    OutcomeClass::RuntimeError,
    OutcomeClass::Unsupported,
    OutcomeClass::Crash,
    OutcomeClass::Timeout,
    OutcomeClass::ProtocolError,
];

/// Bar segments in display order: what passed first, what was never tried last.
const SEGMENTS: [Verdict; 4] = [Verdict::Pass, Verdict::Fail, Verdict::ExpectedFail, Verdict::Skip];

/// The number of columns of the rule table (the script spans its expansion rows over them).
const RULE_COLUMNS: usize = 9;

/// The whole page.
pub fn render_html(r: &Results) -> String {
    let mut out = String::with_capacity(64 * 1024 + r.results.len() * 2048);
    let title = if r.implementation.name.is_empty() { "conformance" } else { &r.implementation.name };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"oracle conform\">\n\
         <title>Relax conformance: {}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n",
        esc(title)
    );
    header(&mut out, r);
    out.push_str("<main class=\"wrap\">\n");
    summary(&mut out, r);
    sections(&mut out, r);
    rules(&mut out, r);
    files(&mut out, r);
    out.push_str("</main>\n");
    out.push_str(
        "<div id=\"backdrop\" hidden></div>\n<aside id=\"details\" hidden aria-label=\"File details\">\n\
         <div class=\"details-bar\"><span id=\"details-title\">File</span>\
         <button type=\"button\" id=\"details-close\" title=\"Close (Esc)\">Close</button></div>\n\
         <div id=\"detail-list\"></div>\n</aside>\n",
    );
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"results\">{}</script>\n<script>\n{JS}</script>\n</body>\n</html>\n",
        json_for_script(r)
    );
    out
}

/// The results as JSON that cannot end its `<script>` element early.
///
/// `<` only occurs inside JSON strings, where `\u003c` means the same character; with no
/// `<` left, neither `</script>` nor `<!--` (which changes how the HTML parser looks for
/// the end of a script) can appear, whatever a program text contains.
pub fn json_for_script(r: &Results) -> String {
    let json = serde_json::to_string(r).expect("Results serializes to JSON");
    json.replace('<', "\\u003c")
}

/// Text for HTML content and double-quoted attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The anchor of a section's first row in the rule table.
fn slug(s: &str) -> String {
    let mut out = String::from("sec-");
    let mut dash = true;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
            dash = false;
        } else if !dash {
            out.push('-');
            dash = true;
        }
    }
    out.trim_end_matches('-').to_string()
}

fn count(c: &Counts, v: Verdict) -> usize {
    match v {
        Verdict::Pass => c.pass,
        Verdict::Fail => c.fail,
        Verdict::Skip => c.skip,
        Verdict::ExpectedFail => c.expected_fail,
    }
}

/// Passing files over all files, one decimal; a dash when there are none.
fn rate(c: &Counts) -> String {
    match c.total() {
        0 => "\u{2013}".to_string(),
        t => format!("{:.1}%", 100.0 * c.pass as f64 / t as f64),
    }
}

/// The `data-*` attributes a row carries for its counts (the test reads them).
fn count_attrs(c: &Counts) -> String {
    format!(
        "data-pass=\"{}\" data-fail=\"{}\" data-skip=\"{}\" data-expected-fail=\"{}\" data-total=\"{}\"",
        c.pass,
        c.fail,
        c.skip,
        c.expected_fail,
        c.total()
    )
}

/// A stacked bar of the counts, each segment as wide as its share.
fn bar(out: &mut String, c: &Counts) {
    let total = c.total();
    let label = SEGMENTS.iter().map(|&v| format!("{} {}", count(c, v), v.name())).collect::<Vec<_>>().join(", ");
    let _ = write!(out, "<div class=\"bar\" role=\"img\" title=\"{label}\" aria-label=\"{label}\">");
    if total > 0 {
        for v in SEGMENTS {
            let n = count(c, v);
            if n > 0 {
                let width = 100.0 * n as f64 / total as f64;
                let _ = write!(out, "<span class=\"seg {}\" style=\"width:{width:.3}%\"></span>", v.name());
            }
        }
    }
    out.push_str("</div>");
}

/// The count cells of a sections or rules row; zeros are marked so they can recede.
fn num_cells(out: &mut String, c: &Counts) {
    for (class, n) in
        [("pass", c.pass), ("fail", c.fail), ("expected-fail", c.expected_fail), ("skip", c.skip), ("total", c.total())]
    {
        let zero = if n == 0 { " zero" } else { "" };
        let _ = write!(out, "<td class=\"num {class}{zero}\">{n}</td>");
    }
    let _ = write!(out, "<td class=\"num rate\">{}</td>", rate(c));
}

fn header(out: &mut String, r: &Results) {
    let im = &r.implementation;
    out.push_str("<header id=\"top\">\n<div class=\"wrap top\">\n<div class=\"who\">\n");
    let _ = write!(
        out,
        "<h1><span class=\"kicker\">Relax conformance</span> <span id=\"impl-name\">{}</span></h1>\n<div class=\"meta\">",
        esc(&im.name)
    );
    if im.implementation.is_empty() {
        out.push_str("<span class=\"warn\">no handshake</span>");
    } else {
        let _ = write!(
            out,
            "<span id=\"impl-id\">{} <b>{}</b></span>",
            esc(&im.implementation),
            esc(&im.implementation_version)
        );
    }
    let _ = write!(
        out,
        "<span>dialect <code id=\"dialect\">{}</code></span><span>protocol <b id=\"protocol\">{}</b></span>\
         <span><b id=\"seconds\">{:.1}</b> s</span></div>\n</div>\n",
        esc(&im.dialect),
        r.protocol,
        r.seconds
    );
    let _ = write!(
        out,
        "<div class=\"headline\" {}><div class=\"rate\"><b>{}</b> of files pass</div>",
        count_attrs(&r.files),
        rate(&r.files)
    );
    bar(out, &r.files);
    out.push_str("</div>\n</div>\n</header>\n");
}

/// One `<dt>`/`<dd>` pair of a summary card; `key` is what `[data-count]` names.
fn stat(out: &mut String, label: &str, key: &str, n: usize, class: &str) {
    let _ = write!(
        out,
        "<div class=\"stat {class}\"><dt>{label}</dt><dd data-count=\"{key}\" data-value=\"{n}\">{n}</dd></div>"
    );
}

fn counts_card(out: &mut String, title: &str, prefix: &str, c: &Counts) {
    let _ = write!(out, "<div class=\"card\" id=\"{prefix}-counts\"><h2>{title}</h2>");
    bar(out, c);
    out.push_str("<dl>");
    for v in SEGMENTS {
        let label = if v == Verdict::ExpectedFail { "exp. fail" } else { v.name() };
        stat(out, label, &format!("{prefix}-{}", v.name()), count(c, v), v.name());
    }
    stat(out, "total", &format!("{prefix}-total"), c.total(), "total");
    out.push_str("</dl></div>\n");
}

/// A list of paths, each a link that opens its details.
fn path_list(out: &mut String, id: &str, paths: &[String]) {
    let _ = write!(out, "<ul class=\"paths\" id=\"{id}\">");
    for p in paths {
        let _ = write!(out, "<li><a href=\"#file={0}\" data-path=\"{0}\">{0}</a></li>", esc(p));
    }
    out.push_str("</ul>");
}

fn summary(out: &mut String, r: &Results) {
    out.push_str("<section id=\"summary\">\n");
    counts_card(out, "Files", "files", &r.files);
    counts_card(out, "Files with <code>run:</code> lines", "run", &r.run_files);

    out.push_str("<div class=\"card\" id=\"outcomes\"><h2>Outcomes of requests</h2><dl>");
    let known: Vec<&str> = OUTCOMES.iter().map(|o| o.name()).collect();
    let extra = r.outcomes.keys().map(String::as_str).filter(|k| !known.contains(k));
    for name in known.iter().copied().chain(extra) {
        let n = r.outcomes.get(name).copied().unwrap_or(0);
        let bad = matches!(name, "crash" | "timeout" | "protocol-error") && n > 0;
        stat(out, name, &format!("outcome-{name}"), n, if bad { "bad" } else { "" });
    }
    out.push_str("</dl></div>\n");

    out.push_str("<div class=\"card\" id=\"expectations\"><h2>Against <code>expected-failures.txt</code></h2><dl>");
    let new = r.new_failures.len();
    stat(out, "new failures", "new-failures", new, if new > 0 { "bad" } else { "" });
    stat(out, "fixed", "fixed", r.fixed.len(), if r.fixed.is_empty() { "" } else { "good" });
    out.push_str("</dl>");
    if !r.new_failures.is_empty() {
        out.push_str("<details><summary>New failures</summary>");
        path_list(out, "new-failures", &r.new_failures);
        out.push_str("</details>");
    }
    if !r.fixed.is_empty() {
        out.push_str("<details><summary>Fixed: passing, but listed as expected to fail</summary>");
        path_list(out, "fixed", &r.fixed);
        out.push_str("</details>");
    }
    out.push_str("</div>\n");

    let _ = write!(
        out,
        "<div class=\"card wide\" id=\"run\"><span class=\"label\">Command</span><code id=\"command\">{}</code>\
         <span class=\"label\">Paths</span>",
        esc(&r.implementation.command)
    );
    for p in &r.paths {
        let _ = write!(out, "<code class=\"path-arg\">{}</code>", esc(p));
    }
    out.push_str("</div>\n</section>\n");
}

fn sections(out: &mut String, r: &Results) {
    out.push_str(
        "<section id=\"sections-part\"><h2>Sections</h2>\n<table id=\"sections\" class=\"grid\">\
         <thead><tr><th class=\"name\">Section</th><th class=\"barcol\">Files</th><th class=\"num\">Pass</th>\
         <th class=\"num\">Fail</th><th class=\"num\">Exp. fail</th><th class=\"num\">Skip</th>\
         <th class=\"num\">Total</th><th class=\"num\">Pass rate</th></tr></thead>\n<tbody>\n",
    );
    for s in &r.sections {
        let c = &s.counts;
        let _ = write!(
            out,
            "<tr class=\"section\" data-section=\"{0}\" {1}><td class=\"name\"><a href=\"#{2}\">{0}</a></td><td class=\"barcol\">",
            esc(&s.section),
            count_attrs(c),
            slug(&s.section)
        );
        row_tail(out, c);
    }
    out.push_str("</tbody></table></section>\n");
}

/// The end of a section's or a rule's row: its bar and its count cells.
fn row_tail(out: &mut String, c: &Counts) {
    bar(out, c);
    out.push_str("</td>");
    num_cells(out, c);
    out.push_str("</tr>\n");
}

fn rules(out: &mut String, r: &Results) {
    let _ = write!(
        out,
        "<section id=\"rules-part\"><h2>Rules <span class=\"hint\">{} rules; click a rule for its files</span></h2>\n\
         <table id=\"rules\" class=\"grid\" data-columns=\"{RULE_COLUMNS}\"><thead><tr><th class=\"id\">Rule</th>\
         <th class=\"summary\">Summary</th><th class=\"barcol\">Files</th><th class=\"num\">Pass</th>\
         <th class=\"num\">Fail</th><th class=\"num\">Exp. fail</th><th class=\"num\">Skip</th>\
         <th class=\"num\">Total</th><th class=\"num\">Pass rate</th></tr></thead>\n<tbody>\n",
        r.rules.len()
    );
    let mut last: Option<&str> = None;
    for row in &r.rules {
        if last != Some(row.section.as_str()) {
            let _ = writeln!(
                out,
                "<tr class=\"section-head\" id=\"{}\"><th colspan=\"{RULE_COLUMNS}\">{}</th></tr>",
                slug(&row.section),
                esc(&row.section)
            );
            last = Some(&row.section);
        }
        let c = &row.counts;
        let _ = write!(
            out,
            "<tr class=\"rule\" data-rule=\"{0}\" data-section=\"{1}\" {2}><td class=\"id\"><code>{0}</code></td>\
             <td class=\"summary\" title=\"{3}\"><div class=\"clip\">{3}</div></td><td class=\"barcol\">",
            esc(&row.rule),
            esc(&row.section),
            count_attrs(c),
            esc(&row.summary)
        );
        row_tail(out, c);
    }
    out.push_str("</tbody></table></section>\n");
}

fn files(out: &mut String, r: &Results) {
    let _ = write!(
        out,
        "<section id=\"files-part\"><h2>Files <span class=\"hint\" id=\"files-shown\">{} files</span></h2>\n\
         <div class=\"toolbar\"><input type=\"search\" id=\"file-filter\" placeholder=\"Filter by path\" \
         autocomplete=\"off\" spellcheck=\"false\"><div id=\"verdict-filters\" role=\"group\">\
         <button type=\"button\" class=\"vf\" data-verdict=\"all\" aria-pressed=\"true\">all <b>{}</b></button>",
        r.results.len(),
        r.results.len()
    );
    for v in [Verdict::Fail, Verdict::ExpectedFail, Verdict::Skip, Verdict::Pass] {
        let _ = write!(
            out,
            "<button type=\"button\" class=\"vf {0}\" data-verdict=\"{0}\" aria-pressed=\"false\">{1} <b>{2}</b></button>",
            v.name(),
            v.name().replace('-', " "),
            count(&r.files, v)
        );
    }
    out.push_str(
        "</div></div>\n<table id=\"files\" class=\"grid\"><thead><tr><th class=\"verdict\">Verdict</th>\
         <th class=\"path\">File</th><th class=\"section\">Section</th><th class=\"why\">Why</th></tr></thead>\n<tbody>\n",
    );
    for f in &r.results {
        let v = f.verdict.name();
        let _ = writeln!(
            out,
            "<tr class=\"file\" data-path=\"{0}\" data-verdict=\"{v}\"><td class=\"verdict\"><span class=\"badge {v}\">{1}</span></td>\
             <td class=\"path\"><a href=\"#file={0}\">{0}</a></td><td class=\"section\">{2}</td><td class=\"why\">{3}</td></tr>",
            esc(&f.path),
            v.replace('-', " "),
            esc(&f.section),
            esc(&f.why)
        );
    }
    out.push_str("</tbody></table></section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_anchor_safe() {
        assert_eq!(slug("Well-Formedness Criteria"), "sec-well-formedness-criteria");
        assert_eq!(slug("Operators (OP-)"), "sec-operators-op");
    }

    #[test]
    fn escaping_covers_quotes_and_markup() {
        assert_eq!(esc("<b a=\"x\">'&'</b>"), "&lt;b a=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/b&gt;");
    }
}
