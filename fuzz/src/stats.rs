//! What `fuzz-smoke` reports: which AST node kinds and operators the generated
//! programs contain, which run-time rules the oracle fired, how runs ended.

use crate::invariants::Outcome;
use oracle::engine::compare::Verdict;
use spec_model::grammar::tir::{Intrinsic, Stmt, StmtKind, TirExpr, TirExprKind};
use spec_model::grammar::{BaseFunc, Binding, Expr, ExprKind, IRModule};
use spec_model::ops::{Op, OpRef};
use spec_model::rules::RUNTIME_RULES;
use std::collections::BTreeMap;

/// The AST node kinds of the Grammar (the Expr variants, with Var and DataflowVar told
/// apart; the two bindings; the two blocks; the two kinds of module function).
pub const NODE_KINDS: &[&str] = &[
    "Constant",
    "Var",
    "DataflowVar",
    "GlobalVar",
    "Tuple",
    "SeqExpr",
    "Function",
    "If",
    "ExternFunc",
    "Call",
    "ShapeExpr",
    "TupleGetItem",
    "Op",
    "PrimValue",
    "StringImm",
    "DataTypeImm",
    "VarBinding",
    "MatchCast",
    "BindingBlock",
    "DataflowBlock",
    "PrimFunc",
];

/// Counts over many programs.
#[derive(Default)]
pub struct Stats {
    pub programs: usize,
    pub nodes: BTreeMap<&'static str, usize>,
    pub ops: BTreeMap<Op, usize>,
    pub rules: BTreeMap<String, usize>,
    pub outcomes: BTreeMap<String, usize>,
    /// How the optimized engine compared with the oracle: `agree`, `poisoned KIND`.
    pub engine: BTreeMap<String, usize>,
    /// Generated TIR kernels by shape: the stem of the global's name (`tir_bcast`,
    /// `tir_pool`, ...; `crate::gen::tircall::KERNEL_STEMS`).
    pub kernels: BTreeMap<String, usize>,
    /// Calls of each TIR intrinsic in the generated kernels (`T.exp`, `T.shift_left`, ...).
    pub intrinsics: BTreeMap<&'static str, usize>,
}

impl Stats {
    pub fn add_program(&mut self, m: &IRModule) {
        self.programs += 1;
        for (gv, f) in &m.functions {
            match f {
                BaseFunc::Relax(f) => {
                    *self.nodes.entry("Function").or_default() += 1;
                    self.expr(&f.body);
                }
                BaseFunc::Tir(f) => {
                    *self.nodes.entry("PrimFunc").or_default() += 1;
                    count_intrinsics(&f.body, &mut self.intrinsics);
                    let stem = gv.name.trim_end_matches(|c: char| c.is_ascii_digit());
                    *self.kernels.entry(stem.to_string()).or_default() += 1;
                }
            }
        }
    }

    /// Records how the engine compared (a disagreement is a failure, not a statistic).
    pub fn add_engine(&mut self, v: &Verdict) {
        let key = match v {
            Verdict::Agree => "agree".to_string(),
            Verdict::Poisoned(k) => format!("poisoned {k}"),
            Verdict::Differ(_) => "differ".to_string(),
        };
        *self.engine.entry(key).or_default() += 1;
    }

    /// The share (percent) of compared runs that were poisoned.
    pub fn poisoned_share(&self) -> f64 {
        let total: usize = self.engine.values().sum();
        let poisoned: usize = self.engine.iter().filter(|(k, _)| k.starts_with("poisoned")).map(|(_, n)| n).sum();
        if total == 0 {
            0.0
        } else {
            100.0 * poisoned as f64 / total as f64
        }
    }

    pub fn add_run(&mut self, outcome: &Outcome, fired: &[String]) {
        let key = match outcome {
            Ok(_) => "value".to_string(),
            Err(k) => format!("error {k}"),
        };
        *self.outcomes.entry(key).or_default() += 1;
        for r in fired {
            *self.rules.entry(r.clone()).or_default() += 1;
        }
    }

    fn node(&mut self, k: &'static str) {
        *self.nodes.entry(k).or_default() += 1;
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Constant(_) => self.node("Constant"),
            ExprKind::Var(v) => self.node(if v.is_dataflow() { "DataflowVar" } else { "Var" }),
            ExprKind::GlobalVar(_) => self.node("GlobalVar"),
            ExprKind::Tuple(es) => {
                self.node("Tuple");
                es.iter().for_each(|e| self.expr(e));
            }
            ExprKind::SeqExpr(s) => {
                self.node("SeqExpr");
                for b in &s.blocks {
                    self.node(if b.is_dataflow() { "DataflowBlock" } else { "BindingBlock" });
                    for binding in &b.bindings {
                        self.node(match binding {
                            Binding::VarBinding { .. } => "VarBinding",
                            Binding::MatchCast { .. } => "MatchCast",
                        });
                        self.expr(binding.value());
                    }
                }
                self.expr(&s.body);
            }
            ExprKind::Function(f) => {
                self.node("Function");
                self.expr(&f.body);
            }
            ExprKind::If(i) => {
                self.node("If");
                self.expr(&i.cond);
                self.expr(&i.true_branch);
                self.expr(&i.false_branch);
            }
            ExprKind::ExternFunc { .. } => self.node("ExternFunc"),
            ExprKind::Call(c) => {
                self.node("Call");
                match &c.op.kind {
                    ExprKind::Op(OpRef::Registered(op)) => *self.ops.entry(*op).or_default() += 1,
                    // A call of an ExternFunc is `call_packed` (SI-D-11).
                    ExprKind::ExternFunc { .. } => *self.ops.entry(Op::CallPacked).or_default() += 1,
                    _ => {}
                }
                self.expr(&c.op);
                c.args.iter().for_each(|a| self.expr(a));
            }
            ExprKind::ShapeExpr(_) => self.node("ShapeExpr"),
            ExprKind::TupleGetItem { tuple_value, .. } => {
                self.node("TupleGetItem");
                self.expr(tuple_value);
            }
            ExprKind::Op(_) => self.node("Op"),
            ExprKind::PrimValue(_) => self.node("PrimValue"),
            ExprKind::StringImm(_) => self.node("StringImm"),
            ExprKind::DataTypeImm(_) => self.node("DataTypeImm"),
        }
    }

    /// The node kinds never generated.
    pub fn missing_nodes(&self) -> Vec<&'static str> {
        NODE_KINDS.iter().copied().filter(|k| !self.nodes.contains_key(k)).collect()
    }

    /// The registered operators never generated.
    pub fn missing_ops(&self) -> Vec<&'static str> {
        Op::ALL.iter().filter(|op| !self.ops.contains_key(op)).map(|op| op.name()).collect()
    }

    /// The TIR intrinsics never called by a generated kernel.
    pub fn missing_intrinsics(&self) -> Vec<&'static str> {
        Intrinsic::ALL.iter().map(|i| i.name()).filter(|n| !self.intrinsics.contains_key(n)).collect()
    }

    /// The run-time rules never fired.
    pub fn missing_rules(&self) -> Vec<&'static str> {
        RUNTIME_RULES.iter().map(|(id, _)| *id).filter(|id| !self.rules.contains_key(*id)).collect()
    }

    /// The report `fuzz-smoke` prints.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let pct = |k: usize, n: usize| if n == 0 { 0.0 } else { 100.0 * k as f64 / n as f64 };
        let covered = NODE_KINDS.len() - self.missing_nodes().len();
        s.push_str(&format!(
            "AST node kinds: {covered} of {} ({:.0}%); missing: {:?}\n",
            NODE_KINDS.len(),
            pct(covered, NODE_KINDS.len()),
            self.missing_nodes()
        ));
        let total: usize = self.nodes.values().sum();
        for (k, n) in &self.nodes {
            s.push_str(&format!("  {k:<14} {n:>8}  {:>5.1}%\n", pct(*n, total)));
        }
        let ops_covered = Op::ALL.len() - self.missing_ops().len();
        s.push_str(&format!(
            "operators: {ops_covered} of {} generated; missing: {:?}\n",
            Op::ALL.len(),
            self.missing_ops()
        ));
        let calls: usize = self.ops.values().sum();
        for (k, n) in &self.ops {
            s.push_str(&format!("  {k:<24} {n:>7}  {:>5.1}%\n", pct(*n, calls)));
        }
        let rules_fired = RUNTIME_RULES.len() - self.missing_rules().len();
        s.push_str(&format!(
            "run-time rules fired: {rules_fired} of {} ({:.0}%); never fired: {:?}\n",
            RUNTIME_RULES.len(),
            pct(rules_fired, RUNTIME_RULES.len()),
            self.missing_rules()
        ));
        let firings: usize = self.rules.values().sum();
        for (k, n) in &self.rules {
            s.push_str(&format!("  {k:<14} {n:>9}  {:>5.1}%\n", pct(*n, firings)));
        }
        s.push_str(&format!(
            "TIR intrinsics: {} of {} called; missing: {:?}\n",
            Intrinsic::ALL.len() - self.missing_intrinsics().len(),
            Intrinsic::ALL.len(),
            self.missing_intrinsics()
        ));
        let kernels: usize = self.kernels.values().sum();
        s.push_str(&format!("TIR kernels generated: {kernels}\n"));
        for (k, n) in &self.kernels {
            s.push_str(&format!("  {k:<24} {n:>7}  {:>5.1}%\n", pct(*n, kernels)));
        }
        s.push_str("outcomes:\n");
        let runs: usize = self.outcomes.values().sum();
        for (k, n) in &self.outcomes {
            s.push_str(&format!("  {k:<28} {n:>7}  {:>5.1}%\n", pct(*n, runs)));
        }
        s.push_str(&format!("optimized engine vs oracle ({:.1}% poisoned):\n", self.poisoned_share()));
        let compared: usize = self.engine.values().sum();
        for (k, n) in &self.engine {
            s.push_str(&format!("  {k:<28} {n:>7}  {:>5.1}%\n", pct(*n, compared)));
        }
        s
    }
}

/// Counts the intrinsic calls of TIR statements, nested ones included.
fn count_intrinsics(ss: &[Stmt], out: &mut BTreeMap<&'static str, usize>) {
    fn expr(e: &TirExpr, out: &mut BTreeMap<&'static str, usize>) {
        match &*e.kind {
            TirExprKind::Var(_) | TirExprKind::IntImm { .. } | TirExprKind::FloatImm { .. } => {}
            TirExprKind::Binary { a, b, .. } => {
                expr(a, out);
                expr(b, out);
            }
            TirExprKind::Not(a) | TirExprKind::Cast { value: a, .. } => expr(a, out),
            TirExprKind::Select { cond, then_value, else_value } => {
                [cond, then_value, else_value].into_iter().for_each(|x| expr(x, out))
            }
            TirExprKind::BufferLoad { indices, .. } => indices.iter().for_each(|x| expr(x, out)),
            TirExprKind::Call { op, args } => {
                *out.entry(op.name()).or_default() += 1;
                args.iter().for_each(|x| expr(x, out));
            }
        }
    }
    for s in ss {
        match &s.kind {
            StmtKind::For { begin, end, body, .. } => {
                expr(begin, out);
                expr(end, out);
                count_intrinsics(body, out);
            }
            StmtKind::BufferStore { indices, value, .. } => {
                indices.iter().for_each(|x| expr(x, out));
                expr(value, out);
            }
            StmtKind::IfThenElse { cond, then_body, else_body } => {
                expr(cond, out);
                count_intrinsics(then_body, out);
                count_intrinsics(else_body, out);
            }
            StmtKind::Block(b) => {
                for iv in &b.iter_vars {
                    [&iv.begin, &iv.end, &iv.binding].into_iter().for_each(|x| expr(x, out));
                }
                if let Some(p) = &b.predicate {
                    expr(p, out);
                }
                if let Some(i) = &b.init {
                    count_intrinsics(i, out);
                }
                count_intrinsics(&b.body, out);
            }
            StmtKind::AllocBuffer(b) => b.shape().iter().for_each(|x| expr(x, out)),
            StmtKind::Let { value, .. } | StmtKind::Evaluate(value) => expr(value, out),
        }
    }
}
