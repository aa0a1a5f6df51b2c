//! Errors of the text format: every one is a [`Diagnostic`] with a span, rendered
//! with the source line and a caret.

use crate::diagnostic::Diagnostic;
use crate::span::Span;
use std::fmt;

/// A syntax error (`syntax`), an unresolved or misused name (`name`), or an input
/// beyond the parser's limits (`limit`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(pub Box<Diagnostic>);

pub type ParseResult<T> = Result<T, ParseError>;

impl ParseError {
    pub fn syntax(message: impl Into<String>, span: Span) -> ParseError {
        ParseError(Box::new(Diagnostic::error("syntax", message, span)))
    }
    pub fn name(message: impl Into<String>, span: Span) -> ParseError {
        ParseError(Box::new(Diagnostic::error("name", message, span)))
    }
    /// An input beyond the budget `limit` (a `LIMIT-` ID): code `limit`, with a note
    /// naming the budget and the flag that raises it.
    pub fn limit(limit: &str, message: impl Into<String>, span: Span) -> ParseError {
        let d = Diagnostic::error("limit", format!("{}: {}", limit, message.into()), span);
        ParseError(Box::new(d.with_note(crate::limits::raise_hint(limit))))
    }
    pub fn with_label(mut self, label: impl Into<String>) -> ParseError {
        self.0.label = label.into();
        self
    }
    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> ParseError {
        self.0.secondary.push((span, label.into()));
        self
    }
    pub fn with_note(mut self, note: impl Into<String>) -> ParseError {
        self.0.notes.push(note.into());
        self
    }
    pub fn diagnostic(&self) -> &Diagnostic {
        &self.0
    }
    pub fn span(&self) -> Span {
        self.0.span
    }
    pub fn render(&self, file_name: &str, source: &str) -> String {
        self.0.render(file_name, source)
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ParseError {}
