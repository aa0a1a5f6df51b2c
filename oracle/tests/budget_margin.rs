//! The default budgets hold every corpus file with a wide margin: each file parses and
//! checks with no limit error under budgets a quarter of the defaults or less (the
//! files that test a limit excepted).

use spec_model::check::check_module_with;
use spec_model::limits::Budgets;
use spec_model::struct_info::SyntacticProver;
use spec_model::text::parse_module;

/// Files about the limits themselves.
fn tests_a_limit(path: &std::path::Path, src: &str) -> bool {
    path.file_name().is_some_and(|n| n.to_string_lossy().contains("limit") || n.to_string_lossy().contains("nesting"))
        || src.lines().take_while(|l| l.starts_with('#')).any(|l| l.contains("LIMIT-"))
}

#[test]
fn every_corpus_file_fits_a_quarter_of_the_budgets() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let files = oracle::corpus::collect_files(&[root]).expect("corpus");
    assert!(files.len() > 900, "{} files", files.len());
    let mut over = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).expect("read");
        if tests_a_limit(f, &src) {
            continue;
        }
        Budgets::MARGIN.scope(|| match parse_module(&src) {
            Err(e) if e.diagnostic().code == "limit" => over.push(format!("{}: {e}", f.display())),
            Err(_) => {}
            Ok(m) => {
                let report = check_module_with(&m, false, &SyntacticProver);
                if let Some(d) = report.diagnostics.iter().find(|d| d.code.starts_with("LIMIT-")) {
                    over.push(format!("{}: {d}", f.display()));
                }
            }
        });
    }
    assert!(over.is_empty(), "{} files beyond a quarter of the budgets:\n{}", over.len(), over.join("\n"));
}
