//! Printed names: every variable, shape variable and buffer of one global function
//! gets a distinct valid identifier (its hint when free, else `hint_1`, `hint_2`, ...).
//! Unused variables named `_` all print as `_`.

use crate::grammar::tir::Buffer;
use crate::grammar::{PrimVar, Var};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

const PY_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

#[derive(Default)]
pub(crate) struct Names {
    vars: HashMap<u64, String>,
    prims: HashMap<u64, String>,
    buffers: HashMap<u64, String>,
    taken: HashSet<String>,
    /// The module's global names, shared by every function's printer (a module of
    /// many functions would otherwise copy them once per function).
    reserved: Rc<HashSet<String>>,
    /// Per stem, the suffix to try first.
    next_suffix: HashMap<String, usize>,
    /// How often each Relax variable is referred to (unused `_` may repeat; a branch's
    /// match_cast variable used only as the branch result may print as the `if`'s).
    pub uses: HashMap<u64, usize>,
}

impl Names {
    pub fn new(reserved: Rc<HashSet<String>>) -> Names {
        Names { reserved, ..Names::default() }
    }

    /// Whether `name` is in use: reserved, chosen before, a Python keyword or a module
    /// alias (kept apart from `taken`, so that a fresh printer costs no allocation).
    fn is_taken(&self, name: &str) -> bool {
        self.taken.contains(name)
            || self.reserved.contains(name)
            || PY_KEYWORDS.contains(&name)
            || ["R", "T", "I", "cls"].contains(&name)
    }

    /// A fresh identifier based on `hint`.
    pub fn fresh(&mut self, hint: &str) -> String {
        let mut base: String = hint.chars().map(|c| if c == '_' || c.is_alphanumeric() { c } else { '_' }).collect();
        if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            base.insert_str(0, "v_");
        }
        if !self.is_taken(&base) {
            self.taken.insert(base.clone());
            return base;
        }
        let stem = base.trim_end_matches(|c: char| c.is_ascii_digit()).trim_end_matches('_').to_string();
        let stem = if stem.is_empty() { base.clone() } else { stem };
        // Numbering resumes where this stem's last fresh name stopped: 10^5 rebindings
        // of one name would otherwise try 1, 2, ... each time.
        let from = self.next_suffix.get(&stem).copied().unwrap_or(1);
        let (i, name) =
            (from..).map(|i| (i, format!("{stem}_{i}"))).find(|(_, n)| !self.is_taken(n)).unwrap_or((from, base));
        self.next_suffix.insert(stem, i + 1);
        self.taken.insert(name.clone());
        name
    }

    pub fn var(&mut self, v: &Var) -> String {
        if let Some(n) = self.vars.get(&v.id()) {
            return n.clone();
        }
        let used = self.uses.get(&v.id()).is_some_and(|n| *n > 0);
        let n = if v.name() == "_" && !used { "_".to_string() } else { self.fresh(v.name()) };
        self.vars.insert(v.id(), n.clone());
        n
    }

    /// The name `v` already has, if it was printed before.
    pub fn existing(&self, v: &Var) -> Option<String> {
        self.vars.get(&v.id()).cloned()
    }

    /// Prints `v` under an already chosen name (an `if` result bound in both branches).
    pub fn alias_var(&mut self, v: &Var, name: &str) {
        self.vars.insert(v.id(), name.to_string());
    }

    pub fn prim(&mut self, v: &PrimVar) -> String {
        if let Some(n) = self.prims.get(&v.id()) {
            return n.clone();
        }
        let n = self.fresh(v.name());
        self.prims.insert(v.id(), n.clone());
        n
    }

    pub fn prim_named(&mut self, v: &PrimVar, hint: &str) -> String {
        if let Some(n) = self.prims.get(&v.id()) {
            return n.clone();
        }
        let n = self.fresh(hint);
        self.prims.insert(v.id(), n.clone());
        n
    }

    pub fn buffer(&mut self, b: &Buffer) -> String {
        if let Some(n) = self.buffers.get(&b.id()) {
            return n.clone();
        }
        let n = self.fresh(b.name());
        self.buffers.insert(b.id(), n.clone());
        n
    }
}
