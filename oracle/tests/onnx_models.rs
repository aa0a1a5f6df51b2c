//! The real models of `examples/onnx/` (written by `scripts/import-onnx`: small ONNX
//! models imported by TVM 0.27's ONNX frontend): each model, as imported and after
//! TVM's `LegalizeOps`, runs through `oracle eval --engine both` (the reference
//! interpreter and the optimized engine must agree) and its result must match ONNX
//! Runtime's recorded output within a float32 tolerance.

use spec_model::grammar::TensorData;
use spec_model::npy::read_npy;
use std::path::{Path, PathBuf};
use std::process::Command;

/// ONNX Runtime and the spec may order float sums differently: a few float32 ulps
/// of the outputs' magnitude (all of them are within 10).
const TOLERANCE: f64 = 1e-4;

fn models() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/onnx");
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(&root).expect("examples/onnx").map(|e| e.expect("entry").path()).collect();
    dirs.retain(|d| d.join("args.txt").exists());
    dirs.sort();
    dirs
}

fn floats(path: &Path) -> (Vec<u64>, Vec<f64>) {
    let a = read_npy(&std::fs::read(path).expect("read npy")).expect("parse npy");
    let data = match a.data {
        TensorData::F32(v) => v.into_iter().map(f64::from).collect(),
        other => panic!("{}: expected float32, got {:?}", path.display(), other.len()),
    };
    (a.shape, data)
}

fn run(dir: &Path, form: &str) -> Result<(), String> {
    let args = std::fs::read_to_string(dir.join("args.txt")).map_err(|e| e.to_string())?;
    let out = tempdir(dir, form);
    let output = Command::new(env!("CARGO_BIN_EXE_oracle"))
        .current_dir(dir)
        .arg("eval")
        .arg(format!("{form}.rx"))
        .args(args.split_whitespace())
        .args(["--engine", "both", "--out"])
        .arg(&out)
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // `--engine both` reports on stderr whether the two engines agree.
    let agreed =
        stderr.lines().chain(stdout.lines()).any(|l| l.starts_with("agree: the oracle and the optimized engine"));
    if !output.status.success() || !agreed {
        return Err(format!("oracle eval failed ({}):\n{stdout}\n{stderr}", output.status));
    }
    let (shape, got) = floats(&out.join("result.npy"));
    let (want_shape, want) = floats(&dir.join("expected.npy"));
    if shape != want_shape {
        return Err(format!("shape {shape:?}, ONNX Runtime gives {want_shape:?}"));
    }
    let worst = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    if worst.is_nan() || worst > TOLERANCE {
        return Err(format!("max |difference| from ONNX Runtime is {worst:e} (tolerance {TOLERANCE:e})"));
    }
    let _ = std::fs::remove_dir_all(&out);
    Ok(())
}

fn tempdir(dir: &Path, form: &str) -> PathBuf {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("model");
    let d = std::env::temp_dir().join(format!("relax-onnx-{}-{name}-{form}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn every_model_agrees_with_onnx_runtime_in_both_engines() {
    let dirs = models();
    assert!(dirs.len() >= 4, "examples/onnx holds {} models", dirs.len());
    let mut failures = Vec::new();
    for dir in &dirs {
        for form in ["imported", "legalized"] {
            if let Err(e) = run(dir, form) {
                failures.push(format!("{}/{form}.rx: {e}", dir.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
