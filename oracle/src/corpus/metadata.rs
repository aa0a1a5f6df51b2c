//! The metadata block at the top of a corpus file (DESIGN.md, "Corpus files"):
//!
//! ```text
//! # ---
//! # rules: [SI-MC-2.2.1, SEM-10.2.1]
//! # description: a bare shape variable in a MatchCast binds to the dimension it meets
//! # run: main(R.const([[1, 2, 3]], "int32"))
//! # expect: R.shape([1, 3])
//! # ---
//! ```

use std::fmt;

/// What a file, or one of its `run:` lines, is expected to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Expectation {
    /// `expect: parse`: the file parses, and prints and re-parses to the same program.
    Parse,
    /// `expect: valid`: static checking (as far as it is built) reports no error.
    Valid,
    /// `expect: in-normal-form`: the program as written meets NF-1..NF-4.
    InNormalForm,
    /// `expect: normal-form`: normalizing gives exactly the text stored beside the file
    /// (`FILE.normalized`), and is idempotent.
    NormalForm,
    /// `expect: parse-error [syntax|name|limit] [at LINE:COL]`: parsing fails there.
    ParseError { code: Option<String>, at: Option<(usize, usize)> },
    /// `expect: invalid RULE`: static checking reports an error of that rule.
    Invalid(String),
    /// `expect: warning RULE`: static checking warns with that rule.
    Warning(String),
    /// `expect: no-warning RULE`: static checking gives no warning of that rule (a
    /// positive test of a rule that warns, e.g. a narrowing match_cast).
    NoWarning(String),
    /// `expect-sinfo: NAME STRUCTINFO`: the StructInfo derived for the global function
    /// `NAME` (or `@NAME`), else for the last binding of a variable so named.
    Sinfo { name: String, sinfo: String },
    /// `run: CALL` + `expect: error KIND`: evaluation stops with that error kind.
    RunError { call: String, kind: String },
    /// `run: CALL` + `expect: VALUE`: evaluation returns that value.
    RunValue { call: String, value: String },
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expectation::Parse => write!(f, "parse"),
            Expectation::Valid => write!(f, "valid"),
            Expectation::InNormalForm => write!(f, "in-normal-form"),
            Expectation::NormalForm => write!(f, "normal-form"),
            Expectation::ParseError { code, at } => {
                write!(f, "parse-error")?;
                if let Some(c) = code {
                    write!(f, " {c}")?;
                }
                if let Some((l, c)) = at {
                    write!(f, " at {l}:{c}")?;
                }
                Ok(())
            }
            Expectation::Invalid(r) => write!(f, "invalid {r}"),
            Expectation::Warning(r) => write!(f, "warning {r}"),
            Expectation::NoWarning(r) => write!(f, "no-warning {r}"),
            Expectation::Sinfo { name, sinfo } => write!(f, "sinfo {name}: {sinfo}"),
            Expectation::RunError { call, kind } => write!(f, "run {call} -> error {kind}"),
            Expectation::RunValue { call, value } => write!(f, "run {call} -> {value}"),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metadata {
    pub rules: Vec<String>,
    pub description: String,
    pub expectations: Vec<Expectation>,
    /// Absolute tolerance for float results (`tolerance: 1e-5`).
    pub tolerance: Option<f64>,
    /// LIMIT-memory for the file's `run:` lines, in bytes (`memory: 65536`), in every
    /// engine: a program that must run within a small budget (a leak in an engine's
    /// bookkeeping then shows as a MemoryExhausted the file does not expect).
    pub memory: Option<usize>,
    /// LIMIT-fuel for the file's `run:` lines, in steps (`fuel: 2000`), in every engine:
    /// a program that must exhaust (or fit) a small step budget, without running the
    /// default budget's ten million steps to show it.
    pub fuel: Option<u64>,
    /// Extension keys (`x-NAME: value`), kept in order and otherwise ignored: tools
    /// record what they know there (e.g. `x-implementation-outcome` in a divergence
    /// found by `fuzz-smoke --against`).
    pub extra: Vec<(String, String)>,
}

impl Metadata {
    /// The PrimFuncs that `x-interpreted: f, g` names: kernels the optimized engine's
    /// native code generator declines by design (they run in its TIR interpreter), which
    /// a run requiring native code (the mutation gate's) lets fall back.
    pub fn interpreted(&self) -> Vec<String> {
        self.extra
            .iter()
            .filter(|(k, _)| k == "x-interpreted")
            .flat_map(|(_, v)| v.split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()))
            .collect()
    }
}

const PARSE_ERROR_CODES: &[&str] = &["syntax", "name", "limit"];

/// Reads the metadata block; errors name the offending line (1-based).
pub fn parse_metadata(src: &str) -> Result<Metadata, String> {
    let mut lines = src.lines().enumerate().skip_while(|(_, l)| l.trim().is_empty());
    match lines.next() {
        Some((_, l)) if l.trim() == "# ---" => {}
        _ => return Err("the file must start with a `# ---` metadata block".into()),
    }
    let mut md = Metadata::default();
    let mut pending_run: Option<(usize, String)> = None;
    let mut closed = false;
    for (i, line) in lines {
        let n = i + 1;
        let t = line.trim();
        if t == "# ---" {
            closed = true;
            break;
        }
        let Some(body) = t.strip_prefix('#') else {
            return Err(format!("line {n}: the metadata block is made of `# key: value` comment lines"));
        };
        let body = body.trim();
        if body.is_empty() {
            continue;
        }
        let Some((key, value)) = body.split_once(':') else {
            return Err(format!("line {n}: expected `key: value`"));
        };
        let value = value.trim();
        match key.trim() {
            "rules" => {
                let inner = value
                    .strip_prefix('[')
                    .and_then(|v| v.strip_suffix(']'))
                    .ok_or_else(|| format!("line {n}: rules are a list: `rules: [WF-3, SEM-9.1]`"))?;
                md.rules.extend(inner.split(',').map(|r| r.trim().to_string()).filter(|r| !r.is_empty()));
            }
            "description" => md.description = value.to_string(),
            "tolerance" => {
                md.tolerance = Some(value.parse().map_err(|_| format!("line {n}: tolerance is a number"))?);
            }
            "memory" => {
                md.memory = Some(value.parse().map_err(|_| format!("line {n}: memory is a number of bytes"))?);
            }
            "fuel" => {
                md.fuel = Some(value.parse().map_err(|_| format!("line {n}: fuel is a number of steps"))?);
            }
            "run" => {
                if let Some((m, _)) = pending_run {
                    return Err(format!("line {m}: this `run:` has no `expect:`"));
                }
                if value.is_empty() {
                    return Err(format!("line {n}: `run:` needs a call, e.g. `run: main(R.const(1, \"int32\"))`"));
                }
                pending_run = Some((n, value.to_string()));
            }
            "expect" => {
                let e = match pending_run.take() {
                    Some((_, call)) => match value.strip_prefix("error ") {
                        Some(kind) => Expectation::RunError { call, kind: kind.trim().to_string() },
                        None => Expectation::RunValue { call, value: value.to_string() },
                    },
                    None => static_expectation(value).map_err(|e| format!("line {n}: {e}"))?,
                };
                md.expectations.push(e);
            }
            "expect-sinfo" => {
                let (name, sinfo) = value
                    .split_once(char::is_whitespace)
                    .map(|(a, b)| (a.trim(), b.trim()))
                    .filter(|(a, b)| !a.is_empty() && !b.is_empty())
                    .ok_or_else(|| format!("line {n}: `expect-sinfo: NAME STRUCTINFO`"))?;
                md.expectations.push(Expectation::Sinfo { name: name.to_string(), sinfo: sinfo.to_string() });
            }
            other if other.starts_with("x-") && other.len() > 2 => {
                md.extra.push((other.to_string(), value.to_string()))
            }
            other => return Err(format!("line {n}: unknown metadata key `{other}`")),
        }
    }
    if !closed {
        return Err("the metadata block is not closed by a `# ---` line".into());
    }
    if let Some((m, _)) = pending_run {
        return Err(format!("line {m}: this `run:` has no `expect:`"));
    }
    if md.expectations.is_empty() {
        return Err("the metadata block has no `expect:`".into());
    }
    Ok(md)
}

fn static_expectation(value: &str) -> Result<Expectation, String> {
    let mut words = value.split_whitespace();
    match words.next() {
        Some("parse") if words.next().is_none() => Ok(Expectation::Parse),
        Some("valid") if words.next().is_none() => Ok(Expectation::Valid),
        Some("in-normal-form") if words.next().is_none() => Ok(Expectation::InNormalForm),
        Some("normal-form") if words.next().is_none() => Ok(Expectation::NormalForm),
        Some("parse-error") => {
            let mut code = None;
            let mut at = None;
            while let Some(w) = words.next() {
                if w == "at" {
                    let pos = words.next().ok_or("`at` needs LINE:COL")?;
                    let (l, c) = pos.split_once(':').ok_or("`at` needs LINE:COL")?;
                    at = Some((l.parse().map_err(|_| "bad line")?, c.parse().map_err(|_| "bad column")?));
                } else if PARSE_ERROR_CODES.contains(&w) && code.is_none() {
                    code = Some(w.to_string());
                } else {
                    return Err(format!("unexpected `{w}` in `expect: parse-error [syntax|name|limit] [at L:C]`"));
                }
            }
            Ok(Expectation::ParseError { code, at })
        }
        Some("invalid") => Ok(Expectation::Invalid(words.next().ok_or("`invalid` needs a rule ID")?.to_string())),
        Some("warning") => Ok(Expectation::Warning(words.next().ok_or("`warning` needs a rule ID")?.to_string())),
        Some("no-warning") => {
            Ok(Expectation::NoWarning(words.next().ok_or("`no-warning` needs a rule ID")?.to_string()))
        }
        _ => Err(format!(
            "`expect: {value}` needs a `run:` before it (static expectations are parse, valid, in-normal-form, normal-form, parse-error, invalid RULE, warning RULE, no-warning RULE)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_full_block() {
        let md = parse_metadata(
            "# ---\n# rules: [SI-MC-2.2.1, SEM-10.2.1]\n# description: d\n# run: main(x)\n# expect: R.shape([1, 3])\n# run: main(y)\n# expect: error MatchCastMismatch\n# expect: warning SI-D-8.3.3\n# ---\nbody\n",
        )
        .unwrap();
        assert_eq!(md.rules, vec!["SI-MC-2.2.1", "SEM-10.2.1"]);
        assert_eq!(md.expectations.len(), 3);
        assert_eq!(
            md.expectations[1],
            Expectation::RunError { call: "main(y)".into(), kind: "MatchCastMismatch".into() }
        );
        assert_eq!(md.expectations[2], Expectation::Warning("SI-D-8.3.3".into()));
    }

    #[test]
    fn parse_error_expectations() {
        let md = parse_metadata("# ---\n# expect: parse-error name at 7:20\n# ---\n").unwrap();
        assert_eq!(md.expectations, vec![Expectation::ParseError { code: Some("name".into()), at: Some((7, 20)) }]);
    }

    #[test]
    fn sinfo_expectations() {
        let md = parse_metadata("# ---\n# expect-sinfo: y R.Tensor((n, 4), \"float32\")\n# ---\n").unwrap();
        assert_eq!(
            md.expectations,
            vec![Expectation::Sinfo { name: "y".into(), sinfo: "R.Tensor((n, 4), \"float32\")".into() }]
        );
        assert!(parse_metadata("# ---\n# expect-sinfo: y\n# ---\n").is_err());
    }

    #[test]
    fn memory_budget() {
        let md = parse_metadata("# ---\n# memory: 65536\n# expect: valid\n# ---\n").unwrap();
        assert_eq!(md.memory, Some(65536));
        assert_eq!(parse_metadata("# ---\n# expect: valid\n# ---\n").unwrap().memory, None);
        assert!(parse_metadata("# ---\n# memory: 64k\n# expect: valid\n# ---\n").is_err());
    }

    #[test]
    fn fuel_budget() {
        let md = parse_metadata("# ---\n# fuel: 2000\n# expect: valid\n# ---\n").unwrap();
        assert_eq!(md.fuel, Some(2000));
        assert_eq!(parse_metadata("# ---\n# expect: valid\n# ---\n").unwrap().fuel, None);
        assert!(parse_metadata("# ---\n# fuel: -1\n# expect: valid\n# ---\n").is_err());
    }

    #[test]
    fn rejects_malformed_blocks() {
        for bad in [
            "no block\n",
            "# ---\n# expect: parse\n",
            "# ---\n# run: main()\n# ---\n",
            "# ---\n# expect: R.shape([1])\n# ---\n",
            "# ---\n# colour: red\n# expect: parse\n# ---\n",
            "# ---\n# rules: WF-3\n# expect: parse\n# ---\n",
            "# ---\n# description: nothing expected\n# ---\n",
            "# ---\nx = 1\n# ---\n",
        ] {
            assert!(parse_metadata(bad).is_err(), "{bad}");
        }
    }
}
