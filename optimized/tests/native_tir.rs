//! Every PrimFunc in the corpus compiles to native code: the TIR interpreter is the
//! engine's slow path only for what no corpus file (and no generated program) uses,
//! and for the PrimFuncs a file's `x-interpreted` key names (native code declines
//! them by design, e.g. a float loop variable): those must be declined.

use std::path::Path;

fn rx_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rx_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rx") {
            out.push(p);
        }
    }
}

/// The PrimFuncs a corpus file's metadata declares interpreted (`# x-interpreted: f, g`).
fn declared_interpreted(text: &str) -> Vec<String> {
    text.lines()
        .take_while(|l| l.starts_with('#'))
        .filter_map(|l| l.strip_prefix("# x-interpreted:"))
        .flat_map(|v| v.split(',').map(|n| n.trim().to_string()))
        .filter(|n| !n.is_empty())
        .collect()
}

#[test]
fn every_corpus_prim_func_compiles_natively() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let mut files = Vec::new();
    rx_files(&root, &mut files);
    let (mut funcs, mut interpreted) = (0, Vec::new());
    let (mut proved, mut checks) = (0, 0);
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench");
    let mut bench_files = Vec::new();
    rx_files(&bench, &mut bench_files);
    for path in &bench_files {
        let Ok(m) = spec_model::text::parse_module(&std::fs::read_to_string(path).unwrap_or_default()) else {
            continue;
        };
        for (name, f) in m.prim_funcs() {
            let t = optimized::tir::TirFunc::compile(f, &name.name, optimized::tir::TirBackend::Native);
            let (p, c) = t.checks_proved().expect("bench PrimFuncs compile");
            println!("{}: {}: {p} of {c} checks proved", path.display(), name.name);
        }
    }
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let Ok(m) = spec_model::text::parse_module(&text) else { continue };
        let declared = declared_interpreted(&text);
        for (name, f) in m.prim_funcs() {
            funcs += 1;
            let t = optimized::tir::TirFunc::compile(f, &name.name, optimized::tir::TirBackend::Native);
            if let Some((p, c)) = t.checks_proved() {
                proved += p;
                checks += c;
            }
            match (t.interpreted_because(), declared.contains(&name.name)) {
                (Some(why), false) => interpreted.push(format!("{}: {}: {why}", path.display(), name.name)),
                (None, true) => interpreted.push(format!(
                    "{}: {}: compiles to native code, but x-interpreted says it does not",
                    path.display(),
                    name.name
                )),
                _ => {}
            }
        }
    }
    println!("corpus: {funcs} PrimFuncs, {proved} of {checks} checks proved at compile time");
    assert!(funcs >= 50, "only {funcs} PrimFuncs found under {}", root.display());
    assert!(
        interpreted.is_empty(),
        "{} of {funcs} PrimFuncs interpreted:\n{}",
        interpreted.len(),
        interpreted.join("\n")
    );
}
