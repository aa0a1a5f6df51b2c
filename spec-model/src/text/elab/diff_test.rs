//! Temporary: the elaborator against its earlier copy (`old`) on every corpus file, the
//! test sources, hand-written forward references and mutations of all of them.

use super::old;
use crate::alpha::alpha_eq_module;
use crate::text::py_ast::PyStmt;
use crate::text::py_parser::{parse_expression, parse_file};
use std::path::{Path, PathBuf};

fn walk(dir: &Path, ext: &str, out: &mut Vec<(PathBuf, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            walk(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            if let Ok(src) = std::fs::read_to_string(&p) {
                out.push((p, src));
            }
        }
    }
}

/// String literals of a Rust source (plain and raw), unescaped roughly.
fn string_literals(src: &str) -> Vec<String> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if b[i] == '\'' {
            // char literal or lifetime
            if b.get(i + 2) == Some(&'\'') {
                i += 3;
                continue;
            }
            if b.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < b.len() && b[i] != '\'' {
                    i += 1;
                }
                i += 1;
                continue;
            }
            i += 1;
            continue;
        }
        if b[i] == 'r' && (b.get(i + 1) == Some(&'#') || b.get(i + 1) == Some(&'"')) {
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) == Some(&'"') {
                j += 1;
                let start = j;
                loop {
                    if j >= b.len() {
                        break;
                    }
                    if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                        break;
                    }
                    j += 1;
                }
                out.push(b[start..j.min(b.len())].iter().collect());
                i = j + 1 + hashes;
                continue;
            }
        }
        if b[i] == '"' {
            let mut s = String::new();
            let mut j = i + 1;
            while j < b.len() && b[j] != '"' {
                if b[j] == '\\' {
                    j += 1;
                    match b.get(j) {
                        Some('n') => s.push('\n'),
                        Some('t') => s.push('\t'),
                        Some('\n') => {
                            j += 1;
                            while j < b.len() && b[j].is_whitespace() {
                                j += 1;
                            }
                            continue;
                        }
                        Some(c) => s.push(*c),
                        None => {}
                    }
                    j += 1;
                    continue;
                }
                s.push(b[j]);
                j += 1;
            }
            out.push(s);
            i = j + 1;
            continue;
        }
        i += 1;
    }
    out
}

const HAND_WRITTEN: &[&str] = &[
    // A forward reference to an annotated binding.
    "@R.function\ndef f(x: R.Tensor((4,), \"float32\")):\n    y = R.add(x, z)\n    z: R.Tensor((4,), \"float32\") = x\n    return y\n",
    // ... whose annotation names a variable bound in between.
    "@R.function\ndef f(x: R.Tensor((4,), \"float32\")):\n    y = R.add(x, z)\n    s = R.shape([4])\n    z: R.Tensor(s, \"float32\") = x\n    return y\n",
    // ... and declares a shape variable.
    "@R.function\ndef f(x: R.Tensor((4,), \"float32\")):\n    y = R.add(x, z)\n    z: R.Tensor((\"n\",), \"float32\") = x\n    w: R.Tensor((n,), \"float32\") = z\n    return w\n",
    // A forward reference to a local function that calls itself, and to one that does not.
    "@R.function\ndef f(x: R.Tensor((4,), \"float32\")):\n    y = g(x)\n    @R.function\n    def g(a: R.Tensor((4,), \"float32\")) -> R.Tensor((4,), \"float32\"):\n        b = g(a)\n        return b\n    return y\n",
    "@R.function\ndef f(x: R.Tensor((4,), \"float32\")):\n    y = g(x)\n    @R.function\n    def g(a: R.Tensor((4,), \"float32\")) -> R.Tensor((4,), \"float32\"):\n        return a\n    return y\n",
    // The last assignment of a branch is a local function, annotated, a match_cast.
    "@R.function\ndef f(c: R.Tensor((), \"bool\"), x: R.Tensor((4,), \"float32\")):\n    y = R.add(x, g)\n    if c:\n        @R.function\n        def g(a: R.Tensor((4,), \"float32\")) -> R.Tensor((4,), \"float32\"):\n            b = g(a)\n            return b\n    else:\n        g = x\n    return y\n",
    "@R.function\ndef f(c: R.Tensor((), \"bool\"), x: R.Tensor((4,), \"float32\")):\n    y = R.add(x, z)\n    if c:\n        z: R.Tensor((4,), \"float32\") = x\n    else:\n        z = x\n    return y\n",
    "@R.function\ndef f(c: R.Tensor((), \"bool\"), x: R.Tensor((4,), \"float32\")):\n    y = R.add(x, z)\n    if c:\n        z = R.match_cast(x, R.Tensor((4,), \"float32\"))\n    else:\n        z = x\n    return y\n",
    "@R.function\ndef f(c: R.Tensor((), \"bool\"), x: R.Tensor((4,), \"float32\")):\n    y = R.add(x, z)\n    with R.seq_expr():\n        t = R.add(z, x)\n        z: R.Tensor((4,), \"float32\") = t\n    return y\n",
    // Uses in both branches before a binding at the same depth; unresolved names per depth.
    "@R.function\ndef f(c: R.Tensor((), \"bool\"), x: R.Tensor((4,), \"float32\")):\n    if c:\n        a = R.add(x, z)\n        y = a\n    else:\n        b = R.add(z, x)\n        z = b\n        y = z\n    return y\n",
    "@I.ir_module\nclass M:\n    @R.function\n    def f(c: R.Tensor((), \"bool\"), x: R.Tensor((4,), \"float32\")):\n        a = R.add(x, m)\n        if c:\n            b = R.add(m, m)\n            y = b\n        else:\n            y = m\n        m = cls\n        return y\n",
    // A name that is the module, shadowed, aliased.
    "@I.ir_module\nclass M:\n    @R.function\n    def f(x: R.Tensor((4,), \"float32\")):\n        a = R.add(x, k)\n        cls = x\n        k = cls\n        return a\n",
    "@I.ir_module\nclass M:\n    @R.function\n    def f(x: R.Tensor((4,), \"float32\")):\n        a = R.add(x, k)\n        with R.dataflow():\n            j = cls\n            R.output(j)\n        k = j\n        k = x\n        return a\n",
    // Closure uses a later binding, in a branch of the outer function.
    "@R.function\ndef f(c: R.Tensor((), \"bool\"), x: R.Tensor((4,), \"float32\")):\n    @R.function\n    def g(v: R.Tensor((4,), \"float32\")) -> R.Tensor((4,), \"float32\"):\n        w = R.add(v, z)\n        return w\n    if c:\n        z = x\n        y = g(z)\n    else:\n        y = x\n    return y\n",
    // A use after the scope of the only binding closed, and one before an `if` that binds it last.
    "@R.function\ndef f(c: R.Tensor((), \"bool\"), x: R.Tensor((4,), \"float32\")):\n    y = R.add(x, z)\n    if c:\n        z = x\n        w = z\n    else:\n        w = x\n    return w\n",
    // A dataflow output used before its block.
    "@R.function\ndef f(x: R.Tensor((4,), \"float32\")):\n    a = R.add(x, d)\n    with R.dataflow():\n        d = R.multiply(x, x)\n        e = R.add(d, d)\n        R.output(d)\n    return e\n",
    // TIR: parameters declared twice, loop variables out of scope, shadowing.
    "@T.prim_func\ndef f(n: T.int32, n: T.int32):\n    T.evaluate(n)\n",
    "@T.prim_func\ndef f(A: T.handle, A: T.handle):\n    T.evaluate(0)\n",
    "@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\"), A: T.int32):\n    T.evaluate(A)\n",
    "@T.prim_func\ndef f(n: T.int32, A: T.Buffer((n,), \"float32\"), n: T.handle):\n    T.evaluate(0)\n",
    "@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    for i in range(4):\n        A[i] = 0.0\n    A[i] = 1.0\n",
    "@T.prim_func\ndef f(A: T.Buffer((4, 4), \"float32\")):\n    for i, j in T.grid(4, 4):\n        with T.block(\"b\"):\n            vi, vj = T.axis.remap(\"SS\", [i, j])\n            A[vi, vj] = 0.0\n        x = vi\n",
    "@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    for i in range(4):\n        for i in range(2):\n            A[i] = 0.0\n        with T.block(\"b\"):\n            v = T.axis.spatial(4, i)\n            A[v] = 1.0\n",
    // `_` bound by an `if` whose branches end in expressions.
    "@R.function(pure=False)\ndef f(c: R.Tensor((), \"bool\"), x: R.Tensor((4,), \"float32\")):\n    y = R.add(x, _)\n    if c:\n        R.print(x, format=\"{}\")\n    else:\n        R.print(x, format=\"{}\")\n    _ = x\n    return y\n",
];

/// Mutations of a source: swapped, moved, deleted, duplicated lines and renamed names.
fn mutations(src: &str, seed: u64, count: usize) -> Vec<String> {
    let lines: Vec<&str> = src.lines().collect();
    let idents: Vec<String> = {
        let mut v = Vec::new();
        let mut cur = String::new();
        for c in src.chars() {
            if c.is_alphanumeric() || c == '_' {
                cur.push(c);
            } else {
                if !cur.is_empty() && !cur.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                    v.push(std::mem::take(&mut cur));
                }
                cur.clear();
            }
        }
        v.sort();
        v.dedup();
        v
    };
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut rnd = move |n: usize| -> usize {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        if n == 0 {
            0
        } else {
            ((state >> 33) as usize) % n
        }
    };
    let mut out = Vec::new();
    if lines.len() < 2 {
        return out;
    }
    for _ in 0..count {
        let mut ls: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
        let edits = 1 + rnd(3);
        for _ in 0..edits {
            let n = ls.len();
            if n < 2 {
                break;
            }
            match rnd(6) {
                0 => {
                    let (a, b) = (rnd(n), rnd(n));
                    ls.swap(a, b);
                }
                1 => {
                    let a = rnd(n);
                    let l = ls.remove(a);
                    let b = rnd(ls.len() + 1);
                    // keep the indentation of the destination
                    let ind = ls.get(b).map(|d| d.len() - d.trim_start().len()).unwrap_or(0);
                    ls.insert(b, format!("{}{}", " ".repeat(ind), l.trim_start()));
                }
                2 => {
                    ls.remove(rnd(n));
                }
                3 => {
                    let a = rnd(n);
                    let l = ls[a].clone();
                    ls.insert(rnd(n), l);
                }
                _ => {
                    if idents.is_empty() {
                        continue;
                    }
                    let a = rnd(n);
                    let line = ls[a].clone();
                    let words: Vec<(usize, usize)> = {
                        let mut v = Vec::new();
                        let cs: Vec<(usize, char)> = line.char_indices().collect();
                        let mut k = 0;
                        while k < cs.len() {
                            if cs[k].1.is_alphabetic() || cs[k].1 == '_' {
                                let s = cs[k].0;
                                while k < cs.len() && (cs[k].1.is_alphanumeric() || cs[k].1 == '_') {
                                    k += 1;
                                }
                                let e = if k < cs.len() { cs[k].0 } else { line.len() };
                                v.push((s, e));
                            } else {
                                k += 1;
                            }
                        }
                        v
                    };
                    if words.is_empty() {
                        continue;
                    }
                    let (s, e) = words[rnd(words.len())];
                    let to = &idents[rnd(idents.len())];
                    ls[a] = format!("{}{}{}", &line[..s], to, &line[e..]);
                }
            }
        }
        let mut t = ls.join("\n");
        t.push('\n');
        out.push(t);
    }
    out
}

#[derive(Default)]
struct Tally {
    ok: usize,
    err: usize,
    failures: Vec<String>,
}

fn compare(label: &str, src: &str, stmts: &[PyStmt], t: &mut Tally) {
    let a = old::elaborate_file(stmts);
    let b = super::elaborate_file(stmts);
    match (&a, &b) {
        (Ok(x), Ok(y)) => {
            t.ok += 1;
            if let Err(e) = alpha_eq_module(x, y) {
                t.failures.push(format!("{label}: not alpha-equivalent: {e}\n{src}"));
                return;
            }
            let (px, py) = (crate::text::print_module(x, 100), crate::text::print_module(y, 100));
            if px != py {
                t.failures.push(format!("{label}: prints differ\n--- old\n{px}--- new\n{py}"));
            }
        }
        (Err(x), Err(y)) => {
            t.err += 1;
            if x != y {
                t.failures.push(format!("{label}: errors differ: {x:?} vs {y:?}\n{src}"));
            }
        }
        _ => t.failures.push(format!("{label}: {:?} vs {:?}\n{src}", a.as_ref().err(), b.as_ref().err())),
    }
}

#[test]
fn elaboration_agrees_with_the_earlier_elaborator() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources: Vec<(String, String)> = Vec::new();
    let mut corpus = Vec::new();
    walk(&root.join("../corpus"), "rx", &mut corpus);
    let n_corpus = corpus.len();
    walk(&root.join("tests/seeds"), "rx", &mut corpus);
    for (p, s) in &corpus {
        sources.push((p.display().to_string(), s.clone()));
    }
    let mut rs = Vec::new();
    walk(&root.join("tests"), "rs", &mut rs);
    let mut n_lits = 0;
    for (p, s) in &rs {
        for (i, lit) in string_literals(s).into_iter().enumerate() {
            if lit.contains("def ") || lit.contains("R.") || lit.contains("T.") {
                n_lits += 1;
                sources.push((format!("{}#{i}", p.display()), lit));
            }
        }
    }
    for (i, h) in HAND_WRITTEN.iter().enumerate() {
        sources.push((format!("hand#{i}"), h.to_string()));
    }
    let mut t = Tally::default();
    let mut parsed = 0;
    let per_file: usize = std::env::var("ELAB_DIFF_MUTATIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(40);
    for (k, (label, src)) in sources.iter().enumerate() {
        if let Ok(stmts) = parse_file(src) {
            parsed += 1;
            compare(label, src, &stmts, &mut t);
            // The printed program, and the corpus `run:` / `expect-sinfo:` lines.
            if let Ok(m) = super::elaborate_file(&stmts) {
                let printed = crate::text::print_module(&m, 100);
                if let Ok(st) = parse_file(&printed) {
                    compare(&format!("{label} (printed)"), &printed, &st, &mut t);
                }
                for line in src.lines() {
                    if let Some(run) = line.strip_prefix("# run:") {
                        if let Ok(e) = parse_expression(run.trim()) {
                            let (a, b) =
                                (old::elaborate_expr_in_module(&m, &e), super::elaborate_expr_in_module(&m, &e));
                            match (a, b) {
                                (Ok(x), Ok(y)) => {
                                    if let Err(d) = crate::alpha::alpha_eq_expr(&x, &y) {
                                        t.failures.push(format!("{label}: run line differs: {d}"));
                                    }
                                }
                                (Err(x), Err(y)) if x == y => {}
                                (x, y) => t.failures.push(format!("{label}: run line {x:?} vs {y:?}")),
                            }
                        }
                    }
                }
            }
        }
        for line in src.lines() {
            if let Some(rest) = line.strip_prefix("# expect-sinfo:") {
                let rest = rest.trim();
                let sinfo = rest.split_once(' ').map_or(rest, |(_, s)| s);
                if let Ok(e) = parse_expression(sinfo) {
                    let (a, b) = (old::elaborate_struct_info(&e), super::elaborate_struct_info(&e));
                    match (a, b) {
                        (Ok(x), Ok(y)) => {
                            if crate::text::print_struct_info(&x) != crate::text::print_struct_info(&y) {
                                t.failures.push(format!("{label}: sinfo differs {x:?} vs {y:?}"));
                            }
                        }
                        (Err(x), Err(y)) if x == y => {}
                        (x, y) => t.failures.push(format!("{label}: sinfo {x:?} vs {y:?}")),
                    }
                }
            }
        }
        for (j, m) in mutations(src, k as u64 * 7919 + 17, per_file).into_iter().enumerate() {
            if let Ok(stmts) = parse_file(&m) {
                compare(&format!("{label} mutation {j}"), &m, &stmts, &mut t);
            }
        }
    }
    eprintln!(
        "elab diff: {n_corpus} corpus files, {n_lits} test literals, {} hand-written; {parsed} sources parse; \
         {} programs elaborate, {} fail the same way; {} differences",
        HAND_WRITTEN.len(),
        t.ok,
        t.err,
        t.failures.len()
    );
    for f in t.failures.iter().take(10) {
        eprintln!("{f}\n");
    }
    assert!(t.failures.is_empty(), "{} differences", t.failures.len());
}

/// Random Relax functions over a small pool of names, so that uses before bindings,
/// after closed scopes, across closures and branches are common.
struct Gen {
    state: u64,
}

const POOL: &[&str] = &["a", "b", "d", "e", "g", "p", "k"];
const TY: &str = "R.Tensor((4,), \"float32\")";

impl Gen {
    fn rnd(&mut self, n: usize) -> usize {
        self.state = self.state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.state >> 33) as usize) % n.max(1)
    }
    fn name(&mut self) -> &'static str {
        POOL[self.rnd(POOL.len())]
    }
    fn value(&mut self) -> String {
        match self.rnd(6) {
            0 => self.name().to_string(),
            1 => format!("({}, {})", self.name(), self.name()),
            2 => format!("{}({})", self.name(), self.name()),
            3 => "R.shape([4])".to_string(),
            _ => format!("R.add({}, {})", self.name(), self.name()),
        }
    }
    /// One assignment of `target` (the result of a block when `last`).
    fn assign(&mut self, ind: &str, target: &str, out: &mut String) {
        match self.rnd(8) {
            0 => out.push_str(&format!("{ind}{target}: {TY} = {}\n", self.value())),
            1 => out.push_str(&format!("{ind}{target} = R.match_cast({}, {TY})\n", self.name())),
            2 => out.push_str(&format!("{ind}{target}: {TY} = R.match_cast({}, {TY})\n", self.name())),
            _ => out.push_str(&format!("{ind}{target} = {}\n", self.value())),
        }
    }
    fn block(&mut self, ind: &str, depth: usize, result: Option<&str>, dataflow: bool, out: &mut String) {
        let n = 1 + self.rnd(4);
        for _ in 0..n {
            self.statement(ind, depth, dataflow, out);
        }
        if let Some(r) = result {
            self.result(ind, depth, r, out);
        }
    }
    /// A statement that ends a block by assigning `r`.
    fn result(&mut self, ind: &str, depth: usize, r: &str, out: &mut String) {
        match if depth > 3 { 0 } else { self.rnd(6) } {
            1 => self.if_stmt(ind, depth, r, out),
            2 => {
                out.push_str(&format!("{ind}with R.seq_expr():\n"));
                self.block(&format!("{ind}    "), depth + 1, Some(r), false, out);
            }
            3 => self.def(ind, depth, r, out),
            _ => self.assign(ind, r, out),
        }
    }
    fn if_stmt(&mut self, ind: &str, depth: usize, r: &str, out: &mut String) {
        out.push_str(&format!("{ind}if {}:\n", if self.rnd(4) == 0 { self.name() } else { "c" }));
        self.block(&format!("{ind}    "), depth + 1, Some(r), false, out);
        out.push_str(&format!("{ind}else:\n"));
        self.block(&format!("{ind}    "), depth + 1, Some(r), false, out);
    }
    fn def(&mut self, ind: &str, depth: usize, name: &str, out: &mut String) {
        let pure = if self.rnd(3) == 0 { "(pure=True)" } else { "" };
        out.push_str(&format!("{ind}@R.function{pure}\n{ind}def {name}(v: {TY}) -> {TY}:\n"));
        let inner = format!("{ind}    ");
        self.block(&inner, depth + 1, None, false, out);
        out.push_str(&format!("{inner}return {}\n", self.name()));
    }
    fn statement(&mut self, ind: &str, depth: usize, dataflow: bool, out: &mut String) {
        let target = self.name();
        match self.rnd(if depth > 3 { 9 } else { 20 }) {
            0..=8 => self.assign(ind, target, out),
            9 | 10 => self.if_stmt(ind, depth, target, out),
            11 if !dataflow => {
                out.push_str(&format!("{ind}with R.dataflow():\n"));
                let inner = format!("{ind}    ");
                let mut body = String::new();
                self.block(&inner, depth + 1, None, true, &mut body);
                out.push_str(&body);
                let outs: Vec<&str> = POOL
                    .iter()
                    .copied()
                    .filter(|n| {
                        body.lines().any(|l| {
                            l.strip_prefix(inner.as_str()).is_some_and(|r| {
                                (r.starts_with(&format!("{n} =")) || r.starts_with(&format!("{n}:")))
                                    && !r.contains("T.int64")
                            })
                        })
                    })
                    .filter(|_| self.rnd(2) == 0)
                    .collect();
                out.push_str(&format!("{inner}R.output({})\n", outs.join(", ")));
            }
            12 => {
                out.push_str(&format!("{ind}with R.seq_expr():\n"));
                self.block(&format!("{ind}    "), depth + 1, Some(target), false, out);
            }
            13 | 14 => self.def(ind, depth, target, out),
            15 => out.push_str(&format!("{ind}{target} = cls\n")),
            16 => out.push_str(&format!("{ind}cls = {}\n", self.name())),
            17 => out.push_str(&format!("{ind}R.print({}, format=\"{{}}\")\n", self.name())),
            18 => out.push_str(&format!("{ind}k = T.int64()\n")),
            _ => self.assign(ind, target, out),
        }
    }
    fn program(&mut self) -> String {
        let mut out = format!(
            "@I.ir_module\nclass M:\n    @R.function(pure=False)\n    def f(c: R.Tensor((), \"bool\"), p: {TY}):\n"
        );
        self.block("        ", 2, None, false, &mut out);
        // Every name of the pool is the function's own, so few uses are unknown.
        for n in POOL {
            if self.rnd(30) != 0 {
                out.push_str(&format!("        {n} = p\n"));
            }
        }
        out.push_str(&format!("        return {}\n", self.name()));
        out
    }
}

#[test]
fn elaboration_agrees_on_random_scoping() {
    let count: usize = std::env::var("ELAB_DIFF_RANDOM").ok().and_then(|s| s.parse().ok()).unwrap_or(20000);
    let mut g = Gen { state: 12345 };
    let mut t = Tally::default();
    for i in 0..count {
        let src = g.program();
        match parse_file(&src) {
            Ok(stmts) => compare(&format!("random #{i}"), &src, &stmts, &mut t),
            Err(e) => panic!("generator wrote a program that does not parse: {e:?}\n{src}"),
        }
    }
    eprintln!("elab random: {} elaborate, {} fail the same way, {} differences", t.ok, t.err, t.failures.len());
    for f in t.failures.iter().take(5) {
        eprintln!("{f}\n");
    }
    assert!(t.failures.is_empty(), "{} differences", t.failures.len());
}
