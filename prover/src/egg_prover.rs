//! The egg back end: equality saturation over [`Shape`](crate::lang::Shape) with the
//! rewrites of [`rules`](crate::rules) and the analysis of
//! [`analysis`](crate::analysis), under node, iteration and time limits.
//!
//! First, ring normal forms ([`poly`](crate::poly)): a difference that normalizes to
//! 0 or to a nonzero constant decides at once, without an e-graph; then residues
//! ([`modular`](crate::modular)): a difference nonzero modulo some small `k` under
//! every assignment is `NotEqual` (parity, squares modulo 4).
//!
//! Verdicts: `Equal` when both sides end in one e-class, both fold to one constant, or
//! their difference folds to 0; `NotEqual` when they fold to different constants, or
//! their difference is a nonzero constant or ranges over an interval without 0.

use crate::analysis::ShapeAnalysis;
use crate::lang::{Shape, Translation};
use crate::modular::{always_equal_mod, never_zero_mod};
use crate::poly::Normalizer;
use egg::{EGraph, Id, Language, Rewrite, Runner};
use spec_model::grammar::{PrimExpr, PrimVar};
use spec_model::struct_info::{ShapeProver, Verdict};
use std::time::Duration;

/// The egg back end with its limits.
pub struct EggProver {
    pub node_limit: usize,
    pub iter_limit: usize,
    pub time_limit: Duration,
    rules: Vec<Rewrite<Shape, ShapeAnalysis>>,
}

impl Default for EggProver {
    fn default() -> Self {
        EggProver {
            node_limit: 20_000,
            iter_limit: 16,
            time_limit: Duration::from_millis(50),
            rules: crate::rules::rules(),
        }
    }
}

/// What the e-graph says about `a == b`, with `d = a - b`.
fn decide(eg: &EGraph<Shape, ShapeAnalysis>, a: Id, b: Id, d: Id) -> Verdict {
    if eg.analysis.conflict {
        return Verdict::Unknown;
    }
    if eg.find(a) == eg.find(b) {
        return Verdict::Equal;
    }
    let (fa, fb, fd) = (&eg[a].data, &eg[b].data, &eg[d].data);
    match (fa.constant, fb.constant) {
        (Some(x), Some(y)) if x == y => return Verdict::Equal,
        (Some(_), Some(_)) => return Verdict::NotEqual,
        _ => {}
    }
    match fd.constant {
        Some(0) => Verdict::Equal,
        Some(_) => Verdict::NotEqual,
        None if fd.range.excludes(0) => Verdict::NotEqual,
        None => Verdict::Unknown,
    }
}

/// Both sides and their difference in one expression: the translation and the ids of
/// `lhs`, `rhs` and `lhs - rhs` in it.
fn translate(lhs: &PrimExpr, rhs: &PrimExpr) -> Option<(Translation, Id, Id, Id)> {
    let mut t = Translation::default();
    let (a, b) = (t.add(lhs)?, t.add(rhs)?);
    let d = t.expr.add(Shape::Sub([a, b]));
    Some((t, a, b, d))
}

/// The ring normal forms' verdict on `d = lhs - rhs` (the fast path).
fn decide_by_normal_form(t: &Translation, d: Id) -> Verdict {
    let n = Normalizer::new(&t.expr);
    match n.poly(d).and_then(|p| n.zero(p)) {
        Some(true) => Verdict::Equal,
        Some(false) => Verdict::NotEqual,
        None => Verdict::Unknown,
    }
}

impl EggProver {
    /// Builds the e-graph of `lhs`, `rhs` and `lhs - rhs` (their ids returned in that
    /// order); `None` if either side has no translation (floating point, narrowing
    /// casts). With `explain`, egg records why classes merge (for debugging a verdict
    /// with `EGraph::explain_equivalence`).
    pub fn build(lhs: &PrimExpr, rhs: &PrimExpr, explain: bool) -> Option<(EGraph<Shape, ShapeAnalysis>, Id, Id, Id)> {
        let (t, a, b, d) = translate(lhs, rhs)?;
        Some(Self::egraph(t, [a, b, d], explain))
    }

    fn egraph(t: Translation, roots: [Id; 3], explain: bool) -> (EGraph<Shape, ShapeAnalysis>, Id, Id, Id) {
        let mut eg = EGraph::new(ShapeAnalysis { ranges: t.ranges, conflict: false });
        if explain {
            eg = eg.with_explanations_enabled();
        }
        let mut ids: Vec<Id> = Vec::with_capacity(t.expr.as_ref().len());
        for node in t.expr.as_ref() {
            let n = node.clone().map_children(|c| ids[usize::from(c)]);
            ids.push(eg.add(n));
        }
        eg.rebuild();
        let at = |i: Id| ids[usize::from(i)];
        (eg, at(roots[0]), at(roots[1]), at(roots[2]))
    }
}

impl ShapeProver for EggProver {
    fn compare(&self, lhs: &PrimExpr, rhs: &PrimExpr, _scope: &[PrimVar]) -> Verdict {
        let Some((t, a, b, d)) = translate(lhs, rhs) else { return Verdict::Unknown };
        let ring = decide_by_normal_form(&t, d);
        if ring != Verdict::Unknown {
            return ring;
        }
        if never_zero_mod(&t.expr, d) {
            return Verdict::NotEqual;
        }
        if always_equal_mod(&t.expr, a, b) {
            return Verdict::Equal;
        }
        let (eg, a, b, d) = Self::egraph(t, [a, b, d], false);
        let first = decide(&eg, a, b, d);
        if first != Verdict::Unknown {
            return first;
        }
        let runner = Runner::default()
            .with_egraph(eg)
            .with_node_limit(self.node_limit)
            .with_iter_limit(self.iter_limit)
            .with_time_limit(self.time_limit)
            .with_hook(move |r| match decide(&r.egraph, a, b, d) {
                Verdict::Unknown => Ok(()),
                _ => Err("decided".into()),
            })
            .run(&self.rules);
        decide(&runner.egraph, a, b, d)
    }
}
