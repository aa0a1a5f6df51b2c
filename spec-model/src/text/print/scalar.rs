//! Printing scalar expressions: Relax `PrimExpr`s and TIR expressions share the
//! operators, precedence and the rule for when a literal may be written bare.

use super::literal::float_lit;
use super::{call, txt, Doc};
use crate::grammar::{DataType, PrimBinOp, PrimVar, TypeCode};
use crate::text::elab::prim::coerced_literal_dtype;

/// A view of one scalar node, common to `PrimExpr` and `TirExpr`.
pub(crate) enum View<'a, E> {
    Var(&'a PrimVar),
    Int(i64, DataType),
    Float(f64, DataType),
    Bin(PrimBinOp, &'a E, &'a E),
    Not(&'a E),
    Select(&'a E, &'a E, &'a E),
    Cast(DataType, &'a E),
    /// A node only one of the languages has (printed by the caller).
    Other,
}

pub(crate) trait Scalar: Sized {
    fn view(&self) -> View<'_, Self>;
    fn dtype(&self) -> DataType;
}

/// Python precedence levels used for parenthesization.
pub(crate) const P_OR: u8 = 1;
pub(crate) const P_AND: u8 = 2;
pub(crate) const P_NOT: u8 = 3;
pub(crate) const P_CMP: u8 = 4;
pub(crate) const P_ADD: u8 = 9;
pub(crate) const P_MUL: u8 = 10;
pub(crate) const P_UNARY: u8 = 11;
pub(crate) const P_ATOM: u8 = 13;

/// Prints the nodes only one of the languages has, returning the document and its precedence.
pub(crate) type OtherPrinter<'p, E> = &'p dyn Fn(&E, &ScalarPrinter<'p, E>) -> (Doc, u8);

/// The dtypes a reader gives a bare integer and a bare float where nothing converts them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Defaults {
    pub int: DataType,
    pub float: DataType,
}

impl Defaults {
    fn of(self, is_float: bool) -> DataType {
        if is_float {
            self.float
        } else {
            self.int
        }
    }
}

/// Another reader of the printed text (TVM 0.27), whose reading of a bare literal must
/// also give its dtype.
#[derive(Clone, Copy)]
pub(crate) struct Reader {
    /// At the top of an expression.
    pub top: Defaults,
    /// Inside `T.Select`/`T.Cast`, which convert bare literals themselves.
    pub inside: Defaults,
    /// The dtype a bare literal takes beside an operand of the given dtype (`None`:
    /// it cannot be written bare there).
    pub beside: fn(bool, DataType) -> Option<DataType>,
}

/// Printing context: default literal dtypes and how to print names and the
/// language-specific nodes.
pub(crate) struct ScalarPrinter<'p, E> {
    /// The `.rx` parser's defaults.
    pub defaults: Defaults,
    pub also: Option<Reader>,
    pub var_name: &'p dyn Fn(&PrimVar) -> String,
    pub other: OtherPrinter<'p, E>,
    /// Inside a `T.Select` or `T.Cast`.
    pub in_call: bool,
}

// Not derived: that would require `E: Copy`.
impl<E> Clone for ScalarPrinter<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<E> Copy for ScalarPrinter<'_, E> {}

pub(crate) fn is_literal<E: Scalar>(e: &E) -> bool {
    matches!(e.view(), View::Int(..) | View::Float(..))
}

impl<'p, E: Scalar> ScalarPrinter<'p, E> {
    /// Prints `e` as an operand in the given position.
    pub fn operand(&self, e: &E, how: Operand) -> (Doc, u8) {
        match e.view() {
            View::Int(v, dtype) => self.literal(Literal::Int(v), dtype, how),
            View::Float(v, dtype) => self.literal(Literal::Float(v), dtype, how),
            _ => self.print(e),
        }
    }

    /// Prints `e` where a bare literal would take dtype `target` (a buffer store, an
    /// annotated let, a block axis domain).
    pub fn print_coerced(&self, e: &E, target: Option<DataType>) -> (Doc, u8) {
        self.operand(e, target.map_or(Operand::Alone, Operand::Beside))
    }

    /// `(doc, precedence)` of `e` in a position with no implicit conversion.
    pub fn print(&self, e: &E) -> (Doc, u8) {
        match e.view() {
            View::Var(v) => (txt((self.var_name)(v)), P_ATOM),
            View::Int(v, dtype) => self.literal(Literal::Int(v), dtype, Operand::Alone),
            View::Float(v, dtype) => self.literal(Literal::Float(v), dtype, Operand::Alone),
            View::Bin(op, a, b) => self.binary(op, a, b),
            View::Not(a) => (txt("not ").append(self.at_least(a, Operand::Alone, P_NOT)), P_NOT),
            View::Select(c, a, b) => {
                let inner = ScalarPrinter { in_call: true, ..*self };
                (call("T.Select", vec![inner.print(c).0, inner.print(a).0, inner.print(b).0]), P_ATOM)
            }
            View::Cast(dtype, a) => {
                let inner = ScalarPrinter { in_call: true, ..*self };
                (call("T.Cast", vec![txt(format!("\"{dtype}\"")), inner.print(a).0]), P_ATOM)
            }
            View::Other => (self.other)(e, self),
        }
    }

    /// Prints `e` parenthesized unless its precedence is at least `min`.
    pub fn at_least(&self, e: &E, how: Operand, min: u8) -> Doc {
        let (doc, prec) = self.operand(e, how);
        if prec >= min {
            doc
        } else {
            txt("(").append(doc).append(txt(")"))
        }
    }

    /// How to print two operands whose bare literals the parser converts into each
    /// other's dtype: a lone literal beside an operand may be bare when conversion
    /// gives its dtype; two literals are both bare only when both have their default
    /// dtypes (the parser converts neither), and are both typed otherwise.
    pub fn pair(&self, a: &E, b: &E) -> (Operand, Operand) {
        match (is_literal(a), is_literal(b)) {
            (true, false) => (Operand::Beside(b.dtype()), Operand::Alone),
            (false, true) => (Operand::Alone, Operand::Beside(a.dtype())),
            (true, true) if self.is_default(a) && self.is_default(b) => (Operand::Alone, Operand::Alone),
            (true, true) => (Operand::Typed, Operand::Typed),
            (false, false) => (Operand::Alone, Operand::Alone),
        }
    }

    /// Does this literal print bare where nothing converts it?
    fn is_default(&self, e: &E) -> bool {
        match e.view() {
            View::Int(_, dtype) => dtype.is_bool() || self.readers().iter().all(|d| d.int == dtype),
            View::Float(v, dtype) => v.is_finite() && self.readers().iter().all(|d| d.float == dtype),
            _ => false,
        }
    }

    /// The defaults of every reader of the text, here.
    fn readers(&self) -> Vec<Defaults> {
        let mut out = vec![self.defaults];
        if let Some(r) = self.also {
            out.push(if self.in_call { r.inside } else { r.top });
        }
        out
    }

    fn binary(&self, op: PrimBinOp, a: &E, b: &E) -> (Doc, u8) {
        let (ta, tb) = self.pair(a, b);
        let func = match op {
            // Float division is TVMScript's `/` (TVM refuses `T.truncdiv` on floats).
            PrimBinOp::Div if a.dtype().is_float() => None,
            PrimBinOp::Div => Some("T.truncdiv"),
            PrimBinOp::Mod => Some("T.truncmod"),
            PrimBinOp::Min => Some("T.min"),
            PrimBinOp::Max => Some("T.max"),
            _ => None,
        };
        if let Some(f) = func {
            return (call(f, vec![self.operand(a, ta).0, self.operand(b, tb).0]), P_ATOM);
        }
        let (sym, prec) = match op {
            PrimBinOp::Add => ("+", P_ADD),
            PrimBinOp::Sub => ("-", P_ADD),
            PrimBinOp::Mul => ("*", P_MUL),
            PrimBinOp::Div => ("/", P_MUL),
            PrimBinOp::FloorDiv => ("//", P_MUL),
            PrimBinOp::FloorMod => ("%", P_MUL),
            PrimBinOp::Eq => ("==", P_CMP),
            PrimBinOp::Ne => ("!=", P_CMP),
            PrimBinOp::Lt => ("<", P_CMP),
            PrimBinOp::Le => ("<=", P_CMP),
            PrimBinOp::Gt => (">", P_CMP),
            PrimBinOp::Ge => (">=", P_CMP),
            PrimBinOp::And => ("and", P_AND),
            PrimBinOp::Or => ("or", P_OR),
            PrimBinOp::Mod | PrimBinOp::Min | PrimBinOp::Max => {
                unreachable!("printed as calls")
            }
        };
        // Left-associative: the right operand binds tighter; comparisons do not chain.
        let left_min = if prec == P_CMP { P_CMP + 1 } else { prec };
        let doc = self.at_least(a, ta, left_min).append(txt(format!(" {sym} "))).append(self.at_least(b, tb, prec + 1));
        (doc, prec)
    }

    fn literal(&self, lit: Literal, dtype: DataType, how: Operand) -> (Doc, u8) {
        if dtype.is_bool() {
            if let Literal::Int(v @ (0 | 1)) = lit {
                return (txt(if v == 1 { "True" } else { "False" }), P_ATOM);
            }
        }
        let is_float = matches!(lit, Literal::Float(_));
        let kind_ok = match dtype.code {
            TypeCode::Float => is_float,
            TypeCode::Int | TypeCode::UInt => !is_float,
            TypeCode::Handle => false,
        };
        // Mirrors the parser: a bare literal beside an operand takes its dtype when
        // the kinds agree, and the default dtype otherwise.
        let rx = match how {
            Operand::Beside(t) => Some(coerced_literal_dtype(is_float, t).unwrap_or(self.defaults.of(is_float))),
            Operand::Alone => Some(self.defaults.of(is_float)),
            Operand::Typed => None,
        };
        let other = self.also.map(|r| match how {
            Operand::Beside(t) => (r.beside)(is_float, t),
            Operand::Alone => Some(if self.in_call { r.inside } else { r.top }.of(is_float)),
            Operand::Typed => None,
        });
        let text = match lit {
            Literal::Int(v) => v.to_string(),
            Literal::Float(f) => float_lit(f),
        };
        let finite = !matches!(lit, Literal::Float(f) if !f.is_finite());
        if kind_ok && finite && rx == Some(dtype) && other.is_none_or(|o| o == Some(dtype)) {
            let prec = if text.starts_with('-') { P_UNARY } else { P_ATOM };
            (txt(text), prec)
        } else {
            (call(format!("T.{dtype}"), vec![txt(text)]), P_ATOM)
        }
    }
}

/// Where an operand sits, for deciding whether a literal may be written bare.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Operand {
    /// Nothing converts a bare literal here: bare means the default dtype.
    Alone,
    /// A bare literal here takes the dtype of the neighbouring operand (or the default).
    Beside(DataType),
    /// Must be written with its dtype (`T.int8(5)`).
    Typed,
}

#[derive(Clone, Copy)]
enum Literal {
    Int(i64),
    Float(f64),
}
