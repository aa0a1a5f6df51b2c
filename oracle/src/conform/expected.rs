//! Per-implementation expectation files (`conformance/<impl>/expected-failures.txt`),
//! kept outside the corpus as test262's engines keep theirs: a listed failure does not
//! fail the run, a new one does, and a listed file that passes is reported fixed.
//!
//! Format: one corpus path per line, optionally followed by `# reason`; blank lines and
//! lines starting with `#` are comments.

use std::collections::BTreeMap;
use std::path::Path;

/// The listed paths and their reasons.
#[derive(Clone, Debug, Default)]
pub struct ExpectedFailures {
    pub entries: BTreeMap<String, String>,
}

impl ExpectedFailures {
    pub fn parse(text: &str) -> ExpectedFailures {
        let mut entries = BTreeMap::new();
        for line in text.lines() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let (path, reason) = match t.split_once('#') {
                Some((p, r)) => (p.trim(), r.trim()),
                None => (t, ""),
            };
            entries.insert(path.to_string(), reason.to_string());
        }
        ExpectedFailures { entries }
    }

    /// The file's entries; an absent file lists nothing.
    pub fn read(path: &Path) -> Result<ExpectedFailures, String> {
        match std::fs::read_to_string(path) {
            Ok(t) => Ok(ExpectedFailures::parse(&t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ExpectedFailures::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    pub fn contains(&self, path: &str) -> bool {
        self.entries.contains_key(path)
    }

    /// The text of a list holding exactly `failing` (each with its old reason, or the
    /// one given), under a header naming the implementation.
    pub fn render(&self, implementation: &str, failing: &[(String, String)]) -> String {
        let mut out = format!(
            "# Known divergences of {implementation} from the spec, as `oracle conform` finds them.\n\
             # A listed file that fails does not fail the run; one that passes is reported fixed.\n\
             # Regenerate with `oracle conform --update-expected`; keep the reasons.\n"
        );
        for (path, why) in failing {
            let reason = self.entries.get(path).filter(|r| !r.is_empty()).unwrap_or(why);
            let reason: String = reason.chars().take(160).collect::<String>().replace('\n', " ");
            out.push_str(&format!("{path}  # {reason}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_and_comments() {
        let e = ExpectedFailures::parse("# header\n\ncorpus/a.rx  # TVM reads the first element\ncorpus/b.rx\n");
        assert!(e.contains("corpus/a.rx") && e.contains("corpus/b.rx") && !e.contains("# header"));
        assert_eq!(e.entries["corpus/a.rx"], "TVM reads the first element");
        let text = e.render("x", &[("corpus/a.rx".into(), "new".into()), ("corpus/c.rx".into(), "why".into())]);
        assert!(text.contains("corpus/a.rx  # TVM reads the first element"));
        assert!(text.contains("corpus/c.rx  # why"));
        assert!(!text.contains("corpus/b.rx"));
    }
}
