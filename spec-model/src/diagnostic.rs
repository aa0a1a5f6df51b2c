//! Diagnostics: static errors and warnings with a code (a spec rule ID such as
//! `WF-3`, or `syntax`/`name`/`limit` for the text format), a message and a span,
//! rendered with the source excerpt by `codespan-reporting`.

use crate::span::Span;
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A rule ID (`WF-3`, `SI-D-8.2.3`) or a text-format code (`syntax`, `name`, `limit`).
    pub code: String,
    pub message: String,
    pub span: Span,
    /// Short text shown at the caret, e.g. "expected `)`".
    pub label: String,
    /// Other places worth showing (e.g. the earlier binding of a variable).
    pub secondary: Vec<(Span, String)>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(code: impl Into<String>, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code: code.into(),
            message: message.into(),
            span,
            label: String::new(),
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn warning(code: impl Into<String>, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(code, message, span) }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }

    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.secondary.push((span, label.into()));
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// 1-based line and column of the span's start in `source` (columns count characters).
    pub fn line_col(&self, source: &str) -> Option<(usize, usize)> {
        line_col(source, self.span)
    }

    /// Renders with the source line and a caret under the span.
    pub fn render(&self, file_name: &str, source: &str) -> String {
        if let Some(r) = clamp_range(self.span, source) {
            let line_start = source[..r.start].rfind('\n').map_or(0, |i| i + 1);
            let line_end = source[r.start..].find('\n').map_or(source.len(), |i| r.start + i);
            let max = crate::limits::current().excerpt;
            if line_end - line_start > max {
                return self.render_window(file_name, source, r, line_start..line_end, max);
            }
        }
        let file = SimpleFile::new(file_name, source);
        let mut d = match self.severity {
            Severity::Error => CsDiagnostic::error(),
            Severity::Warning => CsDiagnostic::warning(),
        }
        .with_code(self.code.clone())
        .with_message(self.message.clone());
        let mut labels = Vec::new();
        if let Some(r) = clamp_range(self.span, source) {
            labels.push(Label::primary((), r).with_message(self.label.clone()));
        }
        for (span, text) in &self.secondary {
            if let Some(r) = clamp_range(*span, source) {
                labels.push(Label::secondary((), r).with_message(text.clone()));
            }
        }
        d = d.with_labels(labels).with_notes(self.notes.clone());
        let config = term::Config::default();
        term::emit_into_string(&config, &file, &d).unwrap_or_else(|_| format!("{self}\n"))
    }
}

impl Diagnostic {
    /// The form of `render` for a span on a line longer than `max` (LIMIT-excerpt: a
    /// generated line can be megabytes, and each diagnostic quotes it): the header,
    /// then at most `max / 2` characters either side of the span, with the caret.
    fn render_window(
        &self,
        file_name: &str,
        source: &str,
        span: std::ops::Range<usize>,
        line: std::ops::Range<usize>,
        max: usize,
    ) -> String {
        let (line_no, col) = line_col(source, self.span).unwrap_or((0, 0));
        let half = (max / 2).max(1);
        let text = &source[line.clone()];
        let at = span.start - line.start;
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let here = chars.iter().position(|&(i, _)| i >= at).unwrap_or(chars.len());
        let (from, to) = (here.saturating_sub(half), (here + half).min(chars.len()));
        let window: String = chars[from..to].iter().map(|&(_, c)| c).collect();
        let lead = if from > 0 { "…" } else { "" };
        let width = chars[here..].iter().take_while(|&&(i, _)| i < span.end - line.start).count().clamp(1, half);
        let mut out = format!(
            "{self}\n  ┌─ {file_name}:{line_no}:{col}\n  │\n  │ {lead}{window}{}\n",
            if to < chars.len() { "…" } else { "" }
        );
        let pad = " ".repeat(here - from + lead.chars().count());
        out.push_str(&format!("  │ {pad}{} {}\n", "^".repeat(width), self.label));
        for (s, text) in &self.secondary {
            if let Some((l, c)) = line_col(source, *s) {
                out.push_str(&format!("  = {file_name}:{l}:{c}: {text}\n"));
            }
        }
        for note in &self.notes {
            out.push_str(&format!("  = {note}\n"));
        }
        out.push_str(&format!("  = the line is quoted in part ({})\n\n", crate::limits::raise_hint("LIMIT-excerpt")));
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{sev}[{}]: {}", self.code, self.message)
    }
}

/// Renders the diagnostics in order: the first `Budgets::diagnostics` in full, then
/// how many more there are.
pub fn render_all(diags: &[Diagnostic], file_name: &str, source: &str) -> String {
    render_capped(diags, |d| d.render(file_name, source))
}

/// The first `Budgets::diagnostics` of `diags` rendered by `render`, then a line
/// counting the others (LIMIT-diagnostics: one program can have an error per binding).
pub fn render_capped(diags: &[Diagnostic], render: impl Fn(&Diagnostic) -> String) -> String {
    let shown = crate::limits::current().diagnostics;
    let mut out: String = diags.iter().take(shown).map(render).collect();
    if diags.len() > shown {
        let rest = &diags[shown..];
        let errors = rest.iter().filter(|d| d.is_error()).count();
        out.push_str(&format!(
            "... and {errors} more error(s), {} more warning(s), not shown ({})\n",
            rest.len() - errors,
            crate::limits::raise_hint("LIMIT-diagnostics")
        ));
    }
    out
}

/// 1-based line and column (in characters) of `span.lo`.
pub fn line_col(source: &str, span: Span) -> Option<(usize, usize)> {
    let r = clamp_range(span, source)?;
    let before = &source[..r.start];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = source[line_start..r.start].chars().count() + 1;
    Some((line, col))
}

/// The span as a range inside `source`, moved onto character boundaries.
fn clamp_range(span: Span, source: &str) -> Option<std::ops::Range<usize>> {
    if span.is_synthetic() {
        return None;
    }
    let mut lo = (span.lo as usize).min(source.len());
    let mut hi = (span.hi as usize).min(source.len()).max(lo);
    while !source.is_char_boundary(lo) {
        lo -= 1;
    }
    while !source.is_char_boundary(hi) {
        hi += 1;
    }
    Some(lo..hi)
}

/// Returns an error diagnostic unless `$cond` holds (as `require` in the WebAssembly
/// validator): `require!(ndim >= 0, "WF-9", span, "ndim is {ndim}")`. In an operator's
/// static rule the error is the operator's: `require!(cx => !ts.is_empty(), "needs a tensor")`.
#[macro_export]
macro_rules! require {
    ($cx:expr => $cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err($cx.error(format!($($msg)+)));
        }
    };
    ($cond:expr, $rule:expr, $span:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(Box::new($crate::diagnostic::Diagnostic::error($rule, format!($($msg)+), $span)).into());
        }
    };
}
