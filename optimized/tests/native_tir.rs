//! Every PrimFunc in the corpus compiles to native code: the TIR interpreter is the
//! engine's slow path only for what no corpus file (and no generated program) uses.

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
        for (name, f) in m.prim_funcs() {
            funcs += 1;
            let t = optimized::tir::TirFunc::compile(f, &name.name, optimized::tir::TirBackend::Native);
            if let Some((p, c)) = t.checks_proved() {
                proved += p;
                checks += c;
            }
            if let Some(why) = t.interpreted_because() {
                interpreted.push(format!("{}: {}: {why}", path.display(), name.name));
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
