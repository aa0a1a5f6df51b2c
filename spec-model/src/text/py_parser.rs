//! Recursive-descent parser from tokens to the Python-syntax tree ([`super::py_ast`]).
//! Binary operators use precedence climbing; nesting is bounded by the nesting budget
//! (LIMIT-nesting) so that no input can exhaust the stack, and a block's statements by
//! the statements budget (LIMIT-statements: a binding costs about 2.5 KB through
//! parsing and checking, a function about 6 KB, so the default 10^5 of either stays
//! well under the 2 GB the hostile-input suite allows).

use super::error::{ParseError, ParseResult};
use super::lexer::{tokenize, Tok, Token};
use super::py_ast::*;
use crate::span::Span;

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// Parses a whole file into statements.
pub fn parse_file(src: &str) -> ParseResult<Vec<PyStmt>> {
    let mut p = Parser::new(tokenize(src)?);
    let mut out = Vec::new();
    loop {
        match p.peek() {
            Tok::Eof => break,
            Tok::Newline => p.pos += 1,
            Tok::Indent => return Err(p.err_here("unexpected indentation")),
            _ => {
                p.count_statement(out.len())?;
                p.statement(&mut out)?
            }
        }
    }
    Ok(out)
}

/// Parses a single expression (e.g. a corpus `run:` line).
pub fn parse_expression(src: &str) -> ParseResult<PyExpr> {
    let mut p = Parser::new(tokenize(src)?);
    while p.peek() == &Tok::Newline {
        p.pos += 1;
    }
    let e = p.expr_list()?;
    while p.peek() == &Tok::Newline {
        p.pos += 1;
    }
    if p.peek() != &Tok::Eof {
        return Err(p.err_here("expected the end of the expression"));
    }
    Ok(e)
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
    max_nesting: usize,
    max_statements: usize,
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Name(n) if KEYWORDS.contains(&n.as_str()) => format!("keyword `{n}`"),
        Tok::Name(n) => format!("name `{n}`"),
        Tok::Int(_) => "an integer".into(),
        Tok::Float(_) => "a float".into(),
        Tok::Str(_) => "a string".into(),
        Tok::NumArray(_) => "a numeric list".into(),
        Tok::Op(o) => format!("`{o}`"),
        Tok::Newline => "the end of the line".into(),
        Tok::Indent => "an indented block".into(),
        Tok::Dedent => "the end of the block".into(),
        Tok::Eof => "the end of the file".into(),
    }
}

impl Parser {
    fn new(toks: Vec<Token>) -> Parser {
        let b = crate::limits::current();
        Parser { toks, pos: 0, depth: 0, max_nesting: b.nesting, max_statements: b.statements }
    }
    fn peek(&self) -> &Tok {
        &self.toks[self.pos.min(self.toks.len() - 1)].tok
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].tok
    }
    fn span(&self) -> Span {
        self.toks[self.pos.min(self.toks.len() - 1)].span
    }
    fn prev_span(&self) -> Span {
        self.toks[self.pos.saturating_sub(1).min(self.toks.len() - 1)].span
    }
    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos.min(self.toks.len() - 1)].clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }
    fn err_here(&self, what: &str) -> ParseError {
        ParseError::syntax(format!("{what}, found {}", describe(self.peek())), self.span())
    }
    fn expected(&self, what: &str) -> ParseError {
        ParseError::syntax(format!("expected {what}, found {}", describe(self.peek())), self.span())
            .with_label(format!("expected {what}"))
    }
    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Tok::Op(o) if *o == op)
    }
    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Name(n) if n == kw)
    }
    fn eat_op(&mut self, op: &str) -> bool {
        if self.is_op(op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect_op(&mut self, op: &str) -> ParseResult<Span> {
        if self.is_op(op) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&format!("`{op}`")))
        }
    }
    fn expect_name(&mut self, what: &str) -> ParseResult<(String, Span)> {
        match self.peek().clone() {
            Tok::Name(n) if !KEYWORDS.contains(&n.as_str()) => {
                let span = self.bump().span;
                Ok((n, span))
            }
            _ => Err(self.expected(what)),
        }
    }
    fn enter(&mut self) -> ParseResult<()> {
        self.depth += 1;
        if self.depth > self.max_nesting {
            return Err(ParseError::limit(
                "LIMIT-nesting",
                format!(
                    "nesting deeper than {} levels (brackets, blocks, operator chains and postfix chains together)",
                    self.max_nesting
                ),
                self.span(),
            ));
        }
        Ok(())
    }
    fn leave(&mut self) {
        self.depth -= 1;
    }

    // ----- statements -----

    fn statement(&mut self, out: &mut Vec<PyStmt>) -> ParseResult<()> {
        self.enter()?;
        let r = self.statement_inner(out);
        self.leave();
        r
    }

    fn statement_inner(&mut self, out: &mut Vec<PyStmt>) -> ParseResult<()> {
        let start = self.span();
        if self.is_op("@") {
            let mut decorators = Vec::new();
            while self.eat_op("@") {
                decorators.push(self.expr()?);
                if !matches!(self.peek(), Tok::Newline) {
                    return Err(self.expected("the end of the line after a decorator"));
                }
                self.bump();
            }
            if self.is_kw("def") {
                out.push(self.funcdef(decorators, start)?);
            } else if self.is_kw("class") {
                out.push(self.classdef(decorators, start)?);
            } else {
                return Err(self.expected("`def` or `class` after the decorators"));
            }
            return Ok(());
        }
        match self.peek() {
            Tok::Name(n) => match n.as_str() {
                "def" => {
                    out.push(self.funcdef(Vec::new(), start)?);
                    return Ok(());
                }
                "class" => {
                    out.push(self.classdef(Vec::new(), start)?);
                    return Ok(());
                }
                "if" => {
                    self.bump();
                    out.push(self.if_rest(start)?);
                    return Ok(());
                }
                "for" => {
                    self.bump();
                    let target = self.target_list()?;
                    if !self.eat_kw("in") {
                        return Err(self.expected("`in`"));
                    }
                    let iter = self.expr_list()?;
                    let body = self.block()?;
                    let span = start.to(self.prev_span());
                    out.push(PyStmt { kind: PyStmtKind::For { target, iter, body }, span });
                    return Ok(());
                }
                "with" => {
                    self.bump();
                    let context = self.expr()?;
                    let target = if self.eat_kw("as") { Some(self.target_list()?) } else { None };
                    if self.is_op(",") {
                        return Err(ParseError::syntax("only one item is allowed in a `with` statement", self.span()));
                    }
                    let body = self.block()?;
                    let span = start.to(self.prev_span());
                    out.push(PyStmt { kind: PyStmtKind::With { context, target, body }, span });
                    return Ok(());
                }
                "while" | "try" | "async" | "del" | "global" | "nonlocal" | "raise" | "assert" | "break"
                | "continue" | "lambda" | "yield" | "await" | "elif" | "else" | "except" | "finally" => {
                    return Err(ParseError::syntax(format!("`{n}` is not part of the .rx format"), self.span()));
                }
                _ => {}
            },
            Tok::Indent => return Err(self.err_here("unexpected indentation")),
            _ => {}
        }
        self.simple_statements(out)
    }

    fn simple_statements(&mut self, out: &mut Vec<PyStmt>) -> ParseResult<()> {
        loop {
            out.push(self.small_statement()?);
            if self.eat_op(";") {
                if matches!(self.peek(), Tok::Newline) {
                    break;
                }
                continue;
            }
            break;
        }
        match self.peek() {
            Tok::Newline => {
                self.bump();
                Ok(())
            }
            Tok::Eof | Tok::Dedent => Ok(()),
            _ => Err(self.expected("the end of the statement")),
        }
    }

    fn small_statement(&mut self) -> ParseResult<PyStmt> {
        let start = self.span();
        if self.eat_kw("pass") {
            return Ok(PyStmt { kind: PyStmtKind::Pass, span: start });
        }
        if self.eat_kw("return") {
            let value = if matches!(self.peek(), Tok::Newline | Tok::Eof | Tok::Dedent) || self.is_op(";") {
                None
            } else {
                Some(self.expr_list()?)
            };
            return Ok(PyStmt { kind: PyStmtKind::Return(value), span: start.to(self.prev_span()) });
        }
        if self.eat_kw("import") {
            let module = self.dotted_module()?;
            if self.eat_kw("as") {
                self.expect_name("a name after `as`")?;
            }
            return Ok(PyStmt { kind: PyStmtKind::Import { module }, span: start.to(self.prev_span()) });
        }
        if self.eat_kw("from") {
            let module = self.dotted_module()?;
            if !self.eat_kw("import") {
                return Err(self.expected("`import`"));
            }
            let paren = self.eat_op("(");
            loop {
                self.expect_name("a name to import")?;
                if self.eat_kw("as") {
                    self.expect_name("a name after `as`")?;
                }
                if !self.eat_op(",") {
                    break;
                }
                if paren && self.is_op(")") {
                    break;
                }
            }
            if paren {
                self.expect_op(")")?;
            }
            return Ok(PyStmt { kind: PyStmtKind::Import { module }, span: start.to(self.prev_span()) });
        }
        let first = self.expr_list()?;
        if self.eat_op(":") {
            let annotation = self.expr()?;
            let value = if self.eat_op("=") { Some(self.expr_list()?) } else { None };
            let span = start.to(self.prev_span());
            return Ok(PyStmt { kind: PyStmtKind::AnnAssign { target: first, annotation, value }, span });
        }
        if self.eat_op("=") {
            let value = self.expr_list()?;
            if self.is_op("=") {
                return Err(ParseError::syntax("chained assignments like `a = b = c` are not supported", self.span()));
            }
            let span = start.to(self.prev_span());
            return Ok(PyStmt { kind: PyStmtKind::Assign { target: first, value }, span });
        }
        let aug = match self.peek() {
            Tok::Op("+=") => Some(BinOp::Add),
            Tok::Op("-=") => Some(BinOp::Sub),
            Tok::Op("*=") => Some(BinOp::Mul),
            Tok::Op("/=") => Some(BinOp::Div),
            Tok::Op("//=") => Some(BinOp::FloorDiv),
            Tok::Op("%=") => Some(BinOp::Mod),
            Tok::Op("**=") | Tok::Op("&=") | Tok::Op("|=") | Tok::Op("^=") | Tok::Op("<<=") | Tok::Op(">>=") => {
                return Err(ParseError::syntax("this augmented assignment is not part of the .rx format", self.span()))
            }
            _ => None,
        };
        if let Some(op) = aug {
            self.bump();
            let value = self.expr()?;
            let span = start.to(self.prev_span());
            return Ok(PyStmt { kind: PyStmtKind::AugAssign { target: first, op, value }, span });
        }
        let span = first.span;
        Ok(PyStmt { kind: PyStmtKind::Expr(first), span })
    }

    fn dotted_module(&mut self) -> ParseResult<String> {
        let (mut name, _) = self.expect_name("a module name")?;
        while self.eat_op(".") {
            let (part, _) = self.expect_name("a module name")?;
            name.push('.');
            name.push_str(&part);
        }
        Ok(name)
    }

    /// `:` followed by statements on the same line or an indented block.
    fn block(&mut self) -> ParseResult<Vec<PyStmt>> {
        self.expect_op(":")?;
        let mut body = Vec::new();
        if !matches!(self.peek(), Tok::Newline) {
            self.simple_statements(&mut body)?;
            return Ok(body);
        }
        self.bump();
        if !matches!(self.peek(), Tok::Indent) {
            return Err(self.expected("an indented block"));
        }
        self.bump();
        loop {
            match self.peek() {
                Tok::Dedent => {
                    self.bump();
                    break;
                }
                Tok::Eof => break,
                Tok::Newline => {
                    self.bump();
                }
                _ => {
                    self.count_statement(body.len())?;
                    self.statement(&mut body)?
                }
            }
        }
        Ok(body)
    }

    /// A block (a function body, a module's class) holds at most `Budgets::statements`.
    fn count_statement(&self, before: usize) -> ParseResult<()> {
        if before >= self.max_statements {
            return Err(ParseError::limit(
                "LIMIT-statements",
                format!("a block of more than {} statements (bindings, functions)", self.max_statements),
                self.span(),
            ));
        }
        Ok(())
    }

    fn if_rest(&mut self, start: Span) -> ParseResult<PyStmt> {
        let test = self.expr()?;
        let body = self.block()?;
        let orelse = if self.is_kw("elif") {
            let s = self.bump().span;
            self.enter()?;
            let nested = self.if_rest(s);
            self.leave();
            vec![nested?]
        } else if self.eat_kw("else") {
            self.block()?
        } else {
            Vec::new()
        };
        Ok(PyStmt { kind: PyStmtKind::If { test, body, orelse }, span: start.to(self.prev_span()) })
    }

    fn funcdef(&mut self, decorators: Vec<PyExpr>, start: Span) -> ParseResult<PyStmt> {
        self.bump(); // def
        let (name, name_span) = self.expect_name("a function name")?;
        // PEP 695 type parameters (TVM 0.27 prints symbolic shape variables so under
        // Python >= 3.12): names, each optionally bounded by `int`.
        let mut type_params = Vec::new();
        if self.eat_op("[") {
            while !self.is_op("]") {
                let (t, span) = self.expect_name("a type parameter name")?;
                if self.eat_op(":") {
                    let bound = self.expr()?;
                    if bound.dotted_name().as_deref() != Some("int") {
                        return Err(ParseError::syntax(
                            format!(
                                "type parameter `{t}` is a symbolic shape variable: unbounded, or bounded by `int`"
                            ),
                            bound.span,
                        ));
                    }
                }
                type_params.push((t, span));
                if !self.eat_op(",") {
                    break;
                }
            }
            self.expect_op("]")?;
        }
        self.expect_op("(")?;
        let mut params = Vec::new();
        while !self.is_op(")") {
            if self.is_op("*") || self.is_op("**") || self.is_op("/") {
                return Err(ParseError::syntax(
                    "`*`, `**` and `/` parameters are not part of the .rx format",
                    self.span(),
                ));
            }
            let (pname, span) = self.expect_name("a parameter name")?;
            let annotation = if self.eat_op(":") { Some(self.expr()?) } else { None };
            let default = if self.eat_op("=") { Some(self.expr()?) } else { None };
            params.push(Param { name: pname, span, annotation, default });
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        let returns = if self.eat_op("->") { Some(self.expr()?) } else { None };
        let body = self.block()?;
        let span = start.to(self.prev_span());
        Ok(PyStmt {
            kind: PyStmtKind::FunctionDef { name, name_span, decorators, type_params, params, returns, body },
            span,
        })
    }

    fn classdef(&mut self, decorators: Vec<PyExpr>, start: Span) -> ParseResult<PyStmt> {
        self.bump(); // class
        let (name, name_span) = self.expect_name("a class name")?;
        let mut bases = Vec::new();
        if self.eat_op("(") {
            while !self.is_op(")") {
                bases.push(self.expr()?);
                if !self.eat_op(",") {
                    break;
                }
            }
            self.expect_op(")")?;
        }
        let body = self.block()?;
        let span = start.to(self.prev_span());
        Ok(PyStmt { kind: PyStmtKind::ClassDef { name, name_span, decorators, bases, body }, span })
    }

    // ----- expressions -----

    /// Assignment and `for` targets: a name, attribute, subscript, or a tuple of them.
    fn target_list(&mut self) -> ParseResult<PyExpr> {
        let first = self.binary(5)?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.is_kw("in") || self.is_op("=") || self.is_op(":") {
                break;
            }
            items.push(self.binary(5)?);
        }
        let span = items[0].span.to(self.prev_span());
        Ok(PyExpr { kind: PyExprKind::Tuple(items), span })
    }

    /// `a, b, c` (a tuple without parentheses) or a single expression.
    fn expr_list(&mut self) -> ParseResult<PyExpr> {
        let first = self.expr()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if matches!(self.peek(), Tok::Newline | Tok::Eof | Tok::Dedent)
                || self.is_op("=")
                || self.is_op(":")
                || self.is_op(")")
            {
                break;
            }
            items.push(self.expr()?);
        }
        let span = items[0].span.to(self.prev_span());
        Ok(PyExpr { kind: PyExprKind::Tuple(items), span })
    }

    /// `lambda a, b: body`, the form of an index map (`R.layout_transform`).
    fn lambda(&mut self) -> ParseResult<PyExpr> {
        let start = self.bump().span;
        let mut params = Vec::new();
        while !self.is_op(":") {
            params.push(self.expect_name("a lambda parameter")?);
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(":")?;
        if self.is_kw("lambda") {
            return Err(ParseError::syntax("a lambda's body cannot be another lambda", self.span()));
        }
        let body = self.expr()?;
        let span = start.to(body.span);
        Ok(PyExpr { kind: PyExprKind::Lambda { params, body: Box::new(body) }, span })
    }

    fn expr(&mut self) -> ParseResult<PyExpr> {
        if self.is_kw("lambda") {
            return self.lambda();
        }
        let e = self.binary(0)?;
        if self.is_kw("if") {
            return Err(ParseError::syntax(
                "conditional expressions `a if c else b` are not part of the .rx format (use T.Select or an if statement)",
                self.span(),
            ));
        }
        Ok(e)
    }

    /// Precedence climbing. Levels: or 1, and 2, not 3, comparisons 4, `|` 5, `^` 6,
    /// `&` 7, shifts 8, `+ -` 9, `* / // % @` 10, unary 11, `**` 12.
    fn binary(&mut self, min: u8) -> ParseResult<PyExpr> {
        self.enter()?;
        let r = self.binary_inner(min);
        self.leave();
        r
    }

    /// Each operator of a chain `a + b + c ...` nests the left side one level deeper in
    /// the tree (and in every pass that walks it), so it counts as a nesting level.
    fn binary_inner(&mut self, min: u8) -> ParseResult<PyExpr> {
        let mut chain = 0;
        let r = self.binary_chain(min, &mut chain);
        self.depth -= chain;
        r
    }

    fn binary_chain(&mut self, min: u8, chain: &mut usize) -> ParseResult<PyExpr> {
        let mut lhs = self.prefix(min)?;
        loop {
            enum K {
                Bool(BoolOp),
                Cmp(CmpOp),
                Bin(BinOp),
            }
            let (k, prec, right_assoc) = match self.peek() {
                Tok::Name(n) if n == "or" => (K::Bool(BoolOp::Or), 1, false),
                Tok::Name(n) if n == "and" => (K::Bool(BoolOp::And), 2, false),
                // The `in` of a `for` target list ends the target.
                Tok::Name(n) if n == "in" && min == 5 => break,
                Tok::Name(n) if n == "in" || n == "is" || n == "not" => {
                    return Err(ParseError::syntax(
                        "`in`, `not in` and `is` comparisons are not part of the .rx format",
                        self.span(),
                    ));
                }
                Tok::Op("==") => (K::Cmp(CmpOp::Eq), 4, false),
                Tok::Op("!=") => (K::Cmp(CmpOp::NotEq), 4, false),
                Tok::Op("<") => (K::Cmp(CmpOp::Lt), 4, false),
                Tok::Op("<=") => (K::Cmp(CmpOp::LtE), 4, false),
                Tok::Op(">") => (K::Cmp(CmpOp::Gt), 4, false),
                Tok::Op(">=") => (K::Cmp(CmpOp::GtE), 4, false),
                Tok::Op("|") => (K::Bin(BinOp::BitOr), 5, false),
                Tok::Op("^") => (K::Bin(BinOp::BitXor), 6, false),
                Tok::Op("&") => (K::Bin(BinOp::BitAnd), 7, false),
                Tok::Op("<<") => (K::Bin(BinOp::LShift), 8, false),
                Tok::Op(">>") => (K::Bin(BinOp::RShift), 8, false),
                Tok::Op("+") => (K::Bin(BinOp::Add), 9, false),
                Tok::Op("-") => (K::Bin(BinOp::Sub), 9, false),
                Tok::Op("*") => (K::Bin(BinOp::Mul), 10, false),
                Tok::Op("/") => (K::Bin(BinOp::Div), 10, false),
                Tok::Op("//") => (K::Bin(BinOp::FloorDiv), 10, false),
                Tok::Op("%") => (K::Bin(BinOp::Mod), 10, false),
                Tok::Op("@") => (K::Bin(BinOp::MatMul), 10, false),
                Tok::Op("**") => (K::Bin(BinOp::Pow), 12, true),
                _ => break,
            };
            if prec < min {
                break;
            }
            *chain += 1;
            self.enter()?;
            self.bump();
            let rhs = self.binary(if right_assoc { prec } else { prec + 1 })?;
            let span = lhs.span.to(rhs.span);
            let (l, r) = (Box::new(lhs), Box::new(rhs));
            lhs = PyExpr {
                kind: match k {
                    K::Bool(op) => PyExprKind::BoolOp { op, left: l, right: r },
                    K::Cmp(op) => {
                        if matches!(self.peek(), Tok::Op("==" | "!=" | "<" | "<=" | ">" | ">=")) {
                            return Err(ParseError::syntax(
                                "chained comparisons like `a < b < c` are not supported; use `and`",
                                self.span(),
                            ));
                        }
                        PyExprKind::Compare { op, left: l, right: r }
                    }
                    K::Bin(op) => PyExprKind::Binary { op, left: l, right: r },
                },
                span,
            };
        }
        Ok(lhs)
    }

    fn prefix(&mut self, min: u8) -> ParseResult<PyExpr> {
        let start = self.span();
        let (op, operand_level) = if self.is_kw("not") && min <= 3 {
            (UnaryOp::Not, 3)
        } else if self.is_op("-") && min <= 12 {
            (UnaryOp::Neg, 11)
        } else if self.is_op("+") && min <= 12 {
            (UnaryOp::Pos, 11)
        } else if self.is_op("~") && min <= 12 {
            (UnaryOp::Invert, 11)
        } else {
            return self.primary();
        };
        self.bump();
        let operand = self.binary(operand_level)?;
        let span = start.to(operand.span);
        Ok(PyExpr { kind: PyExprKind::Unary { op, operand: Box::new(operand) }, span })
    }

    /// A postfix chain `f(x)(y)`, `t[0][1]`, `x.a.b` nests its head one level deeper per
    /// link, and counts so; a name's first attribute and the call or subscript of a
    /// dotted name (`R.add(...)`, `T.Buffer[...]`) do not, so that operators printed as
    /// calls nest no deeper than written.
    fn primary(&mut self) -> ParseResult<PyExpr> {
        let mut chain = 0;
        let r = self.postfix_chain(&mut chain);
        self.depth -= chain;
        r
    }

    fn postfix_chain(&mut self, chain: &mut usize) -> ParseResult<PyExpr> {
        let mut e = self.atom()?;
        // Whether `e` is still a name or a name's attribute (`R`, `R.nn`).
        let mut name_path = matches!(e.kind, PyExprKind::Name(_));
        loop {
            let counts = match self.peek() {
                Tok::Op(".") => !matches!(e.kind, PyExprKind::Name(_)),
                Tok::Op("(" | "[") => !name_path,
                _ => false,
            };
            if counts {
                *chain += 1;
                self.enter()?;
            }
            if self.is_op("(") || self.is_op("[") {
                name_path = false;
            }
            if self.eat_op(".") {
                let (attr, attr_span) = self.expect_name("an attribute name after `.`")?;
                let span = e.span.to(attr_span);
                e = PyExpr { kind: PyExprKind::Attribute { value: Box::new(e), attr, attr_span }, span };
            } else if self.is_op("(") {
                self.bump();
                let (args, keywords) = self.call_args()?;
                let close = self.expect_op(")")?;
                let span = e.span.to(close);
                e = PyExpr { kind: PyExprKind::Call { func: Box::new(e), args, keywords }, span };
            } else if self.is_op("[") {
                self.bump();
                let index = self.subscript()?;
                let close = self.expect_op("]")?;
                let span = e.span.to(close);
                e = PyExpr { kind: PyExprKind::Subscript { value: Box::new(e), index: Box::new(index) }, span };
            } else {
                return Ok(e);
            }
        }
    }

    fn call_args(&mut self) -> ParseResult<(Vec<PyExpr>, Vec<Keyword>)> {
        let mut args = Vec::new();
        let mut keywords: Vec<Keyword> = Vec::new();
        while !self.is_op(")") {
            if self.is_op("*") || self.is_op("**") {
                return Err(ParseError::syntax("`*` and `**` arguments are not part of the .rx format", self.span()));
            }
            if let (Tok::Name(n), Tok::Op("=")) = (self.peek().clone(), self.peek_at(1).clone()) {
                let name_span = self.bump().span;
                self.bump();
                if keywords.iter().any(|k| k.name == n) {
                    return Err(ParseError::syntax(format!("keyword argument `{n}` is given twice"), name_span));
                }
                let value = self.expr()?;
                keywords.push(Keyword { name: n, name_span, value });
            } else {
                let value = self.expr()?;
                if let Some(k) = keywords.last() {
                    return Err(ParseError::syntax("a positional argument follows a keyword argument", value.span)
                        .with_secondary(k.name_span, "keyword argument"));
                }
                args.push(value);
            }
            if !self.eat_op(",") {
                break;
            }
        }
        Ok((args, keywords))
    }

    fn subscript(&mut self) -> ParseResult<PyExpr> {
        let first = self.slice_item()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.is_op("]") {
                break;
            }
            items.push(self.slice_item()?);
        }
        let span = items[0].span.to(self.prev_span());
        Ok(PyExpr { kind: PyExprKind::Tuple(items), span })
    }

    fn slice_item(&mut self) -> ParseResult<PyExpr> {
        let start = self.span();
        let lower = if self.is_op(":") { None } else { Some(Box::new(self.expr()?)) };
        if !self.eat_op(":") {
            return Ok(*lower.expect("a non-slice item has an expression"));
        }
        let upper =
            if self.is_op(":") || self.is_op(",") || self.is_op("]") { None } else { Some(Box::new(self.expr()?)) };
        let step =
            if self.eat_op(":") && !self.is_op(",") && !self.is_op("]") { Some(Box::new(self.expr()?)) } else { None };
        Ok(PyExpr { kind: PyExprKind::Slice { lower, upper, step }, span: start.to(self.prev_span()) })
    }

    fn atom(&mut self) -> ParseResult<PyExpr> {
        let start = self.span();
        let kind = match self.peek().clone() {
            Tok::Name(n) => match n.as_str() {
                "True" => PyExprKind::Bool(true),
                "False" => PyExprKind::Bool(false),
                "None" => PyExprKind::NoneLit,
                _ if KEYWORDS.contains(&n.as_str()) => return Err(self.expected("an expression")),
                _ => PyExprKind::Name(n),
            },
            Tok::Int(v) => PyExprKind::Int(v),
            Tok::Float(v) => PyExprKind::Float(v),
            Tok::NumArray(a) => PyExprKind::NumArray(a),
            Tok::Str(s) => {
                self.bump();
                let mut s = s;
                while let Tok::Str(more) = self.peek().clone() {
                    self.bump();
                    s.push_str(&more);
                }
                return Ok(PyExpr { kind: PyExprKind::Str(s), span: start.to(self.prev_span()) });
            }
            Tok::Op("(") => {
                self.bump();
                return self.paren_rest(start);
            }
            Tok::Op("[") => {
                self.bump();
                let items = self.seq_items("]")?;
                let close = self.expect_op("]")?;
                return Ok(PyExpr { kind: PyExprKind::List(items), span: start.to(close) });
            }
            Tok::Op("{") => {
                self.bump();
                let items = self.dict_items()?;
                let close = self.expect_op("}")?;
                return Ok(PyExpr { kind: PyExprKind::Dict(items), span: start.to(close) });
            }
            _ => return Err(self.expected("an expression")),
        };
        self.bump();
        Ok(PyExpr { kind, span: start })
    }

    fn paren_rest(&mut self, start: Span) -> ParseResult<PyExpr> {
        if self.is_op(")") {
            let close = self.bump().span;
            return Ok(PyExpr { kind: PyExprKind::Tuple(Vec::new()), span: start.to(close) });
        }
        let first = self.expr()?;
        if self.is_op(")") {
            self.bump();
            return Ok(first);
        }
        if !self.is_op(",") {
            return Err(self.expected("`,` or `)`"));
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.is_op(")") {
                break;
            }
            items.push(self.expr()?);
        }
        let close = self.expect_op(")")?;
        Ok(PyExpr { kind: PyExprKind::Tuple(items), span: start.to(close) })
    }

    fn seq_items(&mut self, close: &str) -> ParseResult<Vec<PyExpr>> {
        let mut items = Vec::new();
        while !self.is_op(close) {
            items.push(self.expr()?);
            if !self.eat_op(",") {
                break;
            }
        }
        Ok(items)
    }

    fn dict_items(&mut self) -> ParseResult<Vec<(PyExpr, PyExpr)>> {
        let mut items = Vec::new();
        while !self.is_op("}") {
            let k = self.expr()?;
            if !self.is_op(":") {
                return Err(self.expected("`:` in a dict (sets are not part of the .rx format)"));
            }
            self.bump();
            let v = self.expr()?;
            items.push((k, v));
            if !self.eat_op(",") {
                break;
            }
        }
        Ok(items)
    }
}
