//! A generated program: the module, its entry function and the entry's inputs.

use spec_model::grammar::{IRModule, NDArray};

/// What [`crate::generate`] produces.
#[derive(Clone, Debug)]
pub struct Module {
    pub ir: IRModule,
    /// The name of the entry function (`main`).
    pub entry: String,
    /// One tensor per entry parameter.
    pub inputs: Vec<NDArray>,
}

impl Module {
    /// The call of the entry function on the inputs, as a corpus `run:` line.
    pub fn run_line(&self) -> String {
        let args: Vec<String> = self
            .inputs
            .iter()
            .map(|a| oracle::eval::literal::print_value(&oracle::eval::value::Value::tensor(a.clone())))
            .collect();
        // One line: a corpus metadata line cannot wrap.
        crate::reduce::output::one_line(&format!("{}({})", self.entry, args.join(", ")))
    }

    /// The program as a corpus file (DESIGN.md, "Corpus files"): a metadata block with
    /// the description, the run line and `expect` (what the run gave: a value literal or
    /// `error KIND`; without it the call is a comment), then the module. `notes` become
    /// comment lines after the block (e.g. both outcomes of a mismatch).
    pub fn to_corpus_file(&self, description: &str, expect: Option<&str>, notes: &[String]) -> String {
        let mut s = String::from("# ---\n");
        s.push_str(&format!("# description: {}\n", description.replace('\n', " ")));
        s.push_str("# expect: valid\n");
        match expect {
            Some(e) => {
                s.push_str(&format!("# run: {}\n", self.run_line()));
                s.push_str(&format!("# expect: {}\n", crate::reduce::output::one_line(e)));
            }
            None => s.push_str(&format!("# (call: {})\n", self.run_line())),
        }
        s.push_str("# ---\n");
        for n in notes {
            for line in n.lines() {
                s.push_str(&format!("# {line}\n"));
            }
        }
        s.push_str(&spec_model::text::print_module(&self.ir, spec_model::text::DEFAULT_WIDTH));
        s
    }
}
