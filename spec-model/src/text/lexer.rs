//! Tokenizer for the Python subset `.rx` uses: names, numbers, strings, operators,
//! and Python's layout tokens (NEWLINE, INDENT, DEDENT). Newlines inside brackets
//! and after a backslash join lines, as in Python.

use super::error::{ParseError, ParseResult};
use super::num_array::{Builder, NotFast, NumArray, MIN_ELEMENTS};
use crate::span::Span;
use std::rc::Rc;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Name(String),
    /// Integer literal, value (`None` if it exceeds the 128-bit range) and text.
    Int(Option<i128>),
    Float(f64),
    Str(String),
    /// A large numeric literal as the first argument of `R.const(` (see `num_array`).
    NumArray(Rc<NumArray>),
    /// Punctuation and operators, e.g. `(`, `->`, `//`, `==`.
    Op(&'static str),
    Newline,
    Indent,
    Dedent,
    Eof,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// Longest operators first so that maximal munch works by scanning in order.
const OPS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "->", "**", "//", "==", "!=", "<=", ">=", "<<", ">>", "+=", "-=", "*=", "/=", "%=",
    "&=", "|=", "^=", ":=", "(", ")", "[", "]", "{", "}", ",", ":", ".", ";", "@", "=", "+", "-", "*", "/", "%", "<",
    ">", "&", "|", "^", "~",
];

/// Tokenizes a file under the budgets in force: at most `Budgets::tokens` tokens
/// (LIMIT-tokens: tokens are built before parsing, and each with what parsing makes
/// of it costs about 100 bytes, so the default 10^7 stays well under the 2 GB the
/// hostile-input suite allows) and `Budgets::nesting` levels of indentation
/// (LIMIT-nesting; Python's own limit is 100).
pub fn tokenize(src: &str) -> ParseResult<Vec<Token>> {
    let b = crate::limits::current();
    let (max_tokens, max_indent) = (b.tokens, b.nesting);
    Lexer {
        src,
        bytes: src.as_bytes(),
        pos: 0,
        toks: Vec::new(),
        indents: vec![0],
        depth: Vec::new(),
        max_tokens,
        max_indent,
    }
    .run()
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    toks: Vec<Token>,
    indents: Vec<usize>,
    /// Open brackets, with their positions (for "unclosed `(`" errors).
    depth: Vec<(u8, usize)>,
    max_tokens: usize,
    max_indent: usize,
}

impl<'a> Lexer<'a> {
    fn run(mut self) -> ParseResult<Vec<Token>> {
        let mut at_line_start = true;
        loop {
            if self.toks.len() > self.max_tokens {
                let at = Span::new(self.pos, self.pos + 1);
                return Err(ParseError::limit(
                    "LIMIT-tokens",
                    format!("a file of more than {} tokens (pass large tensors as .npy)", self.max_tokens),
                    at,
                ));
            }
            if at_line_start && self.depth.is_empty() {
                // Blank and comment-only lines leave us at the start of a line.
                if self.line_start()? {
                    continue;
                }
                at_line_start = false;
            }
            let Some(&b) = self.bytes.get(self.pos) else {
                break;
            };
            let start = self.pos;
            match b {
                b' ' | b'\t' | b'\x0c' | b'\r' => self.pos += 1,
                b'#' => self.skip_comment(),
                b'\\' => {
                    self.pos += 1;
                    if self.bytes.get(self.pos) == Some(&b'\r') {
                        self.pos += 1;
                    }
                    if self.bytes.get(self.pos) != Some(&b'\n') {
                        return Err(ParseError::syntax("a backslash must end the line", Span::new(start, start + 1)));
                    }
                    self.pos += 1;
                }
                b'\n' => {
                    self.pos += 1;
                    if self.depth.is_empty() {
                        if !matches!(self.toks.last().map(|t| &t.tok), None | Some(Tok::Newline)) {
                            self.push(Tok::Newline, start, start + 1);
                        }
                        at_line_start = true;
                    }
                }
                b'"' | b'\'' => self.string(start, false)?,
                b'0'..=b'9' => self.number()?,
                b'.' if self.bytes.get(self.pos + 1).is_some_and(u8::is_ascii_digit) => self.number()?,
                _ if is_name_start(self.char_at(self.pos)) => {
                    let name = self.name();
                    // String prefixes: r"..", u"..", and the unsupported b/f ones.
                    if matches!(self.bytes.get(self.pos), Some(b'"' | b'\'')) {
                        match name.to_ascii_lowercase().as_str() {
                            "r" => {
                                self.string(start, true)?;
                                continue;
                            }
                            "u" => {
                                self.string(start, false)?;
                                continue;
                            }
                            "b" | "f" | "rb" | "br" | "fr" | "rf" => {
                                return Err(ParseError::syntax(
                                    format!("`{name}\"...\"` strings are not part of the .rx format"),
                                    Span::new(start, self.pos),
                                ))
                            }
                            _ => {}
                        }
                    }
                    self.push(Tok::Name(name), start, self.pos);
                }
                b'[' if self.after_r_const() => match self.num_array()? {
                    Some(a) => self.push(Tok::NumArray(Rc::new(a)), start, self.pos),
                    None => self.operator(start)?,
                },
                _ => self.operator(start)?,
            }
        }
        if let Some(&(open, at)) = self.depth.last() {
            return Err(ParseError::syntax(
                format!(
                    "`{}` is never closed: expected `{}`",
                    open as char,
                    match open {
                        b'(' => ')',
                        b'[' => ']',
                        _ => '}',
                    }
                ),
                Span::new(at, at + 1),
            )
            .with_label("unclosed bracket"));
        }
        let end = self.src.len();
        if !matches!(self.toks.last().map(|t| &t.tok), None | Some(Tok::Newline)) {
            self.push(Tok::Newline, end, end);
        }
        while self.indents.len() > 1 {
            self.indents.pop();
            self.push(Tok::Dedent, end, end);
        }
        self.push(Tok::Eof, end, end);
        Ok(self.toks)
    }

    fn push(&mut self, tok: Tok, lo: usize, hi: usize) {
        self.toks.push(Token { tok, span: Span::new(lo, hi) });
    }

    fn char_at(&self, pos: usize) -> char {
        self.src.get(pos..).and_then(|s| s.chars().next()).unwrap_or('\0')
    }

    /// Measures the indentation of a new logical line and emits INDENT/DEDENT.
    /// Returns true if the line was blank or a comment (nothing emitted).
    fn line_start(&mut self) -> ParseResult<bool> {
        let start = self.pos;
        let mut col = 0usize;
        while let Some(&b) = self.bytes.get(self.pos) {
            match b {
                b' ' => col += 1,
                b'\t' => col = (col / 8 + 1) * 8,
                b'\x0c' => col = 0,
                _ => break,
            }
            self.pos += 1;
        }
        match self.bytes.get(self.pos) {
            None => return Ok(false),
            Some(b'#') => {
                self.skip_comment();
                return Ok(true);
            }
            Some(b'\n') => {
                self.pos += 1;
                return Ok(true);
            }
            Some(b'\r') if self.bytes.get(self.pos + 1) == Some(&b'\n') => {
                self.pos += 2;
                return Ok(true);
            }
            _ => {}
        }
        let current = *self.indents.last().unwrap_or(&0);
        if col > current {
            if self.indents.len() > self.max_indent {
                let message = format!("more than {} levels of indentation", self.max_indent);
                return Err(ParseError::limit("LIMIT-nesting", message, Span::new(start, self.pos)));
            }
            self.indents.push(col);
            self.push(Tok::Indent, start, self.pos);
        } else if col < current {
            while col < *self.indents.last().unwrap_or(&0) {
                self.indents.pop();
                self.push(Tok::Dedent, self.pos, self.pos);
            }
            if col != *self.indents.last().unwrap_or(&0) {
                return Err(ParseError::syntax(
                    "this line's indentation matches no enclosing block",
                    Span::new(start, self.pos.max(start + 1)),
                )
                .with_label("unindent does not match any outer indentation level"));
            }
        }
        Ok(false)
    }

    fn skip_comment(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if b == b'\n' {
                break;
            }
            self.pos += 1;
        }
    }

    fn name(&mut self) -> String {
        let start = self.pos;
        while self.pos < self.bytes.len() {
            let c = self.char_at(self.pos);
            if is_name_continue(c) {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
        self.src[start..self.pos].to_string()
    }

    fn number(&mut self) -> ParseResult<()> {
        let start = self.pos;
        let tok = self.number_tok()?;
        self.push(tok, start, self.pos);
        Ok(())
    }

    /// True right after `R.const(`, where a large numeric list may be read whole.
    fn after_r_const(&self) -> bool {
        matches!(
            self.toks.as_slice(),
            [.., Token { tok: Tok::Name(r), .. }, Token { tok: Tok::Op("."), .. }, Token { tok: Tok::Name(c), .. }, Token { tok: Tok::Op("("), .. }]
                if r == "R" && c == "const"
        )
    }

    /// The nested numeric list at `self.pos` (a `[`) as one compact array, if it
    /// has at least `MIN_ELEMENTS` elements and nothing but optionally signed
    /// numbers; otherwise `None`, with the position unchanged. Errors are those the
    /// ordinary path would give: a malformed number, or LIMIT-constant.
    fn num_array(&mut self) -> ParseResult<Option<NumArray>> {
        let start = self.pos;
        let max = crate::limits::current().constant_elements;
        let mut b = Builder::new();
        let result = loop {
            let Some(&c) = self.bytes.get(self.pos) else {
                break Err(NotFast);
            };
            let step = match c {
                b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' => {
                    self.pos += 1;
                    Ok(())
                }
                b'#' => {
                    self.skip_comment();
                    Ok(())
                }
                b'[' => {
                    self.pos += 1;
                    b.open_list()
                }
                b']' => {
                    self.pos += 1;
                    b.close_list()
                }
                b',' => {
                    self.pos += 1;
                    b.comma()
                }
                _ => {
                    if b.count() as u64 >= max {
                        let message = format!("a constant literal of more than {max} elements");
                        return Err(ParseError::limit("LIMIT-constant", message, Span::new(self.pos, self.pos + 1)));
                    }
                    self.num_element(&mut b)?
                }
            };
            if step.is_err() {
                break Err(NotFast);
            }
            if b.done() {
                break b.finish();
            }
        };
        match result {
            Ok(a) if a.len() >= MIN_ELEMENTS => Ok(Some(a)),
            _ => {
                self.pos = start;
                Ok(None)
            }
        }
    }

    /// One element of a numeric list: an optionally signed number or
    /// `float("nan")`-style float, or `True`/`False`.
    fn num_element(&mut self, b: &mut Builder) -> ParseResult<Result<(), NotFast>> {
        let negative = match self.bytes.get(self.pos) {
            Some(&s @ (b'-' | b'+')) => {
                self.pos += 1;
                while matches!(self.bytes.get(self.pos), Some(b' ' | b'\t')) {
                    self.pos += 1;
                }
                Some(s == b'-')
            }
            _ => None,
        };
        let neg = negative == Some(true);
        let digit_at = |i: usize| self.bytes.get(i).is_some_and(u8::is_ascii_digit);
        if digit_at(self.pos) || (self.bytes.get(self.pos) == Some(&b'.') && digit_at(self.pos + 1)) {
            return Ok(match self.number_tok()? {
                Tok::Int(Some(i)) => b.int(if neg { -i } else { i }),
                Tok::Float(f) => b.float(if neg { -f } else { f }),
                _ => Err(NotFast),
            });
        }
        if !is_name_start(self.char_at(self.pos)) {
            return Ok(Err(NotFast));
        }
        let name = self.name();
        Ok(match (name.as_str(), negative) {
            ("True", None) => b.boolean(true),
            ("False", None) => b.boolean(false),
            ("float", _) => match self.float_call()? {
                Some(f) => b.float(if neg { -f } else { f }),
                None => Err(NotFast),
            },
            _ => Err(NotFast),
        })
    }

    /// `("nan")` after `float`, spelled as the ordinary path accepts it.
    fn float_call(&mut self) -> ParseResult<Option<f64>> {
        if self.bytes.get(self.pos) != Some(&b'(') || !matches!(self.bytes.get(self.pos + 1), Some(b'"' | b'\'')) {
            return Ok(None);
        }
        self.pos += 1;
        self.string(self.pos, false)?;
        let Some(Token { tok: Tok::Str(text), .. }) = self.toks.pop() else {
            return Ok(None);
        };
        if self.bytes.get(self.pos) != Some(&b')') {
            return Ok(None);
        }
        self.pos += 1;
        Ok(super::num_array::special_float(&text))
    }

    /// Reads the number at `self.pos`.
    fn number_tok(&mut self) -> ParseResult<Tok> {
        let start = self.pos;
        let bytes = self.bytes;
        let radix = match (bytes.get(self.pos), bytes.get(self.pos + 1).map(|b| b.to_ascii_lowercase())) {
            (Some(b'0'), Some(b'x')) => 16,
            (Some(b'0'), Some(b'o')) => 8,
            (Some(b'0'), Some(b'b')) => 2,
            _ => 10,
        };
        if radix != 10 {
            self.pos += 2;
            let digits_start = self.pos;
            while self.pos < bytes.len() && (bytes[self.pos].is_ascii_alphanumeric() || bytes[self.pos] == b'_') {
                self.pos += 1;
            }
            let text: String = self.src[digits_start..self.pos].chars().filter(|c| *c != '_').collect();
            if text.is_empty() || !text.chars().all(|c| c.is_digit(radix)) {
                return Err(ParseError::syntax("malformed integer literal", Span::new(start, self.pos)));
            }
            return Ok(Tok::Int(i128::from_str_radix(&text, radix).ok()));
        }
        let mut is_float = false;
        let digits = |lx: &mut Lexer| {
            while lx.pos < bytes.len() && (bytes[lx.pos].is_ascii_digit() || bytes[lx.pos] == b'_') {
                lx.pos += 1;
            }
        };
        digits(self);
        if bytes.get(self.pos) == Some(&b'.') {
            is_float = true;
            self.pos += 1;
            digits(self);
        }
        if matches!(bytes.get(self.pos), Some(b'e' | b'E')) {
            let save = self.pos;
            self.pos += 1;
            if matches!(bytes.get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
                is_float = true;
                digits(self);
            } else {
                self.pos = save;
            }
        }
        let end = self.pos;
        if self.pos < bytes.len() && is_name_continue(self.char_at(self.pos)) {
            let c = self.char_at(self.pos);
            return Err(ParseError::syntax(
                format!("unexpected `{c}` after a number"),
                Span::new(start, self.pos + c.len_utf8()),
            ));
        }
        let raw = &self.src[start..end];
        let text: std::borrow::Cow<str> =
            if raw.contains('_') { raw.chars().filter(|c| *c != '_').collect::<String>().into() } else { raw.into() };
        if is_float {
            let v: f64 =
                text.parse().map_err(|_| ParseError::syntax("malformed float literal", Span::new(start, end)))?;
            Ok(Tok::Float(v))
        } else {
            if text.len() > 1 && text.starts_with('0') && text.chars().any(|c| c != '0') {
                return Err(ParseError::syntax(
                    "leading zeros are not allowed in decimal integers (use 0o for octal)",
                    Span::new(start, end),
                ));
            }
            Ok(Tok::Int(text.parse::<i128>().ok()))
        }
    }

    /// A string literal starting at the quote at `self.pos` (`start` includes any prefix).
    fn string(&mut self, start: usize, raw: bool) -> ParseResult<()> {
        let quote = self.bytes[self.pos];
        let triple = self.bytes.get(self.pos + 1) == Some(&quote) && self.bytes.get(self.pos + 2) == Some(&quote);
        self.pos += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(ParseError::syntax("this string is never closed", Span::new(start, start + 1))
                    .with_label("string starts here"));
            };
            if b == quote {
                if !triple {
                    self.pos += 1;
                    break;
                }
                if self.bytes.get(self.pos + 1) == Some(&quote) && self.bytes.get(self.pos + 2) == Some(&quote) {
                    self.pos += 3;
                    break;
                }
            }
            if b == b'\n' && !triple {
                return Err(ParseError::syntax("this string is never closed", Span::new(start, self.pos))
                    .with_label("the line ends inside the string"));
            }
            if b == b'\\' && !raw {
                let esc_start = self.pos;
                self.pos += 1;
                let Some(&e) = self.bytes.get(self.pos) else {
                    continue;
                };
                self.pos += 1;
                match e {
                    b'\n' => {}
                    b'n' => out.push('\n'),
                    b't' => out.push('\t'),
                    b'r' => out.push('\r'),
                    b'0' => out.push('\0'),
                    b'\\' => out.push('\\'),
                    b'\'' => out.push('\''),
                    b'"' => out.push('"'),
                    b'x' | b'u' | b'U' => {
                        let n = match e {
                            b'x' => 2,
                            b'u' => 4,
                            _ => 8,
                        };
                        let hex = self.src.get(self.pos..self.pos + n).unwrap_or("");
                        let c = (hex.len() == n && hex.bytes().all(|h| h.is_ascii_hexdigit()))
                            .then(|| u32::from_str_radix(hex, 16).ok())
                            .flatten()
                            .and_then(char::from_u32)
                            .ok_or_else(|| {
                                ParseError::syntax("malformed escape sequence", Span::new(esc_start, self.pos))
                            })?;
                        out.push(c);
                        self.pos += n;
                    }
                    _ => {
                        out.push('\\');
                        self.pos -= 1;
                    }
                }
                continue;
            }
            let c = self.char_at(self.pos);
            out.push(c);
            self.pos += c.len_utf8();
        }
        self.push(Tok::Str(out), start, self.pos);
        Ok(())
    }

    fn operator(&mut self, start: usize) -> ParseResult<()> {
        let rest = &self.bytes[self.pos..];
        let Some(op) = OPS.iter().copied().find(|op| rest.starts_with(op.as_bytes())) else {
            let c = self.char_at(self.pos);
            return Err(ParseError::syntax(
                format!("unexpected character `{}`", c.escape_debug()),
                Span::new(start, start + c.len_utf8()),
            ));
        };
        self.pos += op.len();
        match op {
            "(" | "[" | "{" => self.depth.push((op.as_bytes()[0], start)),
            ")" | "]" | "}" => {
                let want = match op {
                    ")" => b'(',
                    "]" => b'[',
                    _ => b'{',
                };
                match self.depth.pop() {
                    Some((open, _)) if open == want => {}
                    Some((open, at)) => {
                        return Err(ParseError::syntax(
                            format!("`{op}` does not match `{}`", open as char),
                            Span::new(start, self.pos),
                        )
                        .with_secondary(Span::new(at, at + 1), "opened here"))
                    }
                    None => return Err(ParseError::syntax(format!("unmatched `{op}`"), Span::new(start, self.pos))),
                }
            }
            _ => {}
        }
        self.push(Tok::Op(op), start, self.pos);
        Ok(())
    }
}

fn is_name_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_name_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}
