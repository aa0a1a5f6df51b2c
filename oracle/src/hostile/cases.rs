//! The hostile inputs: each class writes a program (or a command line) that stresses
//! one way an input can grow, at a size `n` (terms, fields, bindings, elements...).

/// One hostile input at one size: the files to write and the commands to run on them.
pub struct Case {
    pub class: &'static str,
    pub size: u64,
    /// (file name, contents) written into a scratch directory before the commands run.
    pub files: Vec<(String, Vec<u8>)>,
    /// Each command's arguments to `oracle`, file names relative to the scratch directory.
    pub commands: Vec<Vec<String>>,
    /// Symbolic links (name, target) made in the scratch directory.
    pub links: Vec<(String, String)>,
    /// Every command must end in an error (the input is wrong, not only large).
    pub must_fail: bool,
}

/// A class of hostile input: its name and how to build it at a size.
pub struct Class {
    pub name: &'static str,
    pub what: &'static str,
    build: fn(u64) -> Case,
}

impl Class {
    pub fn case(&self, n: u64) -> Case {
        let mut c = (self.build)(n);
        c.class = self.name;
        c.size = n;
        c
    }
}

const HEADER: &str = "from tvm.script import ir as I\nfrom tvm.script import relax as R\nfrom tvm.script import tir as T\n\n\n@I.ir_module\nclass Module:\n";

/// A module with one `main(params) -> ret` whose body is `body` (lines at 8 spaces).
fn module(params: &str, body: &str) -> String {
    format!("{HEADER}    @R.function\n    def main({params}):\n{body}")
}

fn scalar_main(body: &str) -> String {
    module("x: R.Tensor((), \"int32\")", body)
}

const SCALAR_ARG: &str = "R.const(1, \"int32\")";

fn program(text: String, commands: &[&str], args: &[&str]) -> Case {
    let mut cmds: Vec<Vec<String>> = commands.iter().map(|c| vec![c.to_string(), "p.rx".to_string()]).collect();
    if !args.is_empty() {
        // The reference interpreter, and the optimized engine (same budgets).
        for engine in ["oracle", "optimized"] {
            let mut eval = vec!["eval".to_string(), "p.rx".to_string(), "--engine".to_string(), engine.to_string()];
            eval.extend(args.iter().map(|a| a.to_string()));
            cmds.push(eval);
        }
    }
    Case {
        class: "",
        size: 0,
        files: vec![("p.rx".into(), text.into_bytes())],
        commands: cmds,
        links: vec![],
        must_fail: false,
    }
}

const STATIC: &[&str] = &["parse", "fmt", "check", "normalize"];

fn join(n: u64, item: impl Fn(u64) -> String, sep: &str) -> String {
    (0..n).map(item).collect::<Vec<_>>().join(sep)
}

fn chain(op: &'static str) -> impl Fn(u64) -> Case {
    move |n| {
        let e = join(n.max(1), |_| "x".into(), op);
        program(scalar_main(&format!("        y = {e}\n        return y\n")), STATIC, &[SCALAR_ARG])
    }
}

fn add_chain(n: u64) -> Case {
    chain(" + ")(n)
}
fn mul_chain(n: u64) -> Case {
    chain(" * ")(n)
}
fn and_chain(n: u64) -> Case {
    chain(" and ")(n)
}

fn call_chain(n: u64) -> Case {
    let calls = "(x)".repeat(n as usize);
    program(scalar_main(&format!("        y = x{calls}\n        return y\n")), STATIC, &[])
}

fn subscript_chain(n: u64) -> Case {
    let subs = "[0]".repeat(n as usize);
    program(scalar_main(&format!("        t = (x,)\n        y = t{subs}\n        return y\n")), STATIC, &[])
}

fn attribute_chain(n: u64) -> Case {
    let attrs = ".a".repeat(n as usize);
    program(scalar_main(&format!("        y = x{attrs}\n        return y\n")), STATIC, &[])
}

fn nested_brackets(n: u64) -> Case {
    let (open, close) = ("(".repeat(n as usize), ")".repeat(n as usize));
    program(scalar_main(&format!("        y = {open}x{close}\n        return y\n")), STATIC, &[SCALAR_ARG])
}

fn shape_dimension_chain(n: u64) -> Case {
    let dim = join(n.max(1), |_| "n".into(), " + ");
    let text = module(
        "x: R.Tensor((\"n\",), \"int32\")",
        &format!("        y = R.match_cast(x, R.Tensor(({dim},), \"int32\"))\n        return y\n"),
    );
    program(text, STATIC, &["R.const([1], \"int32\")"])
}

fn tir_expression_chain(n: u64) -> Case {
    let e = join(n.max(1), |_| "A[i]".into(), " + ");
    let text = format!(
        "{HEADER}    @T.prim_func\n    def k(a: T.handle, b: T.handle):\n        A = T.match_buffer(a, (4,), \"int32\")\n        B = T.match_buffer(b, (4,), \"int32\")\n        for i in range(4):\n            B[i] = {e}\n\n    @R.function\n    def main(x: R.Tensor((4,), \"int32\")):\n        cls = Module\n        y = R.call_tir(cls.k, (x,), out_sinfo=R.Tensor((4,), \"int32\"))\n        return y\n"
    );
    program(text, STATIC, &["R.const([1, 2, 3, 4], \"int32\")"])
}

fn wide_tuple(n: u64) -> Case {
    let t = join(n, |_| "x".into(), ", ");
    program(scalar_main(&format!("        t = ({t},)\n        return t\n")), STATIC, &[SCALAR_ARG])
}

fn wide_shape(n: u64) -> Case {
    let s = join(n, |_| "1".into(), ", ");
    program(scalar_main(&format!("        s = R.shape([{s}])\n        return s\n")), STATIC, &[SCALAR_ARG])
}

fn many_bindings(n: u64) -> Case {
    let body = join(n.max(1), |i| format!("        y{} = R.add(y{i}, x)\n", i + 1), "");
    program(scalar_main(&format!("        y0 = x\n{body}        return y{}\n", n.max(1))), STATIC, &[SCALAR_ARG])
}

fn rebindings(n: u64) -> Case {
    let body = join(n.max(1), |_| "        y = R.add(x, x)\n".into(), "");
    program(scalar_main(&format!("{body}        return y\n")), STATIC, &[SCALAR_ARG])
}

fn many_functions(n: u64) -> Case {
    let fs =
        join(n, |i| format!("    @R.function\n    def f{i}(x: R.Tensor((), \"int32\")):\n        return x\n\n"), "");
    let text = format!("{HEADER}{fs}    @R.function\n    def main(x: R.Tensor((), \"int32\")):\n        return x\n");
    program(text, STATIC, &[SCALAR_ARG])
}

fn big_constant(n: u64) -> Case {
    let c = join(n, |i| (i % 10).to_string(), ", ");
    program(scalar_main(&format!("        c = R.const([{c}], \"int32\")\n        return c\n")), STATIC, &[SCALAR_ARG])
}

/// A float32 matrix of 16 rows of `n` elements: at n = 10^6, near the 2^24
/// elements LIMIT-constant allows, read through the lexer's numeric-list path.
fn float_matrix_constant(n: u64) -> Case {
    let row =
        format!("[{}]", join(n, |i| format!("{}{}.{}e-{}", ["", "-"][i as usize % 2], i % 97, i % 13, i % 5), ", "));
    let rows = vec![row; 16].join(",\n");
    let body = format!("        c = R.const([{rows}], \"float32\")\n        return R.sum(c)\n");
    program(scalar_main(&body), STATIC, &[SCALAR_ARG])
}

/// StructInfo that doubles at each binding: 2^k nodes after k bindings.
fn doubling_tuple(n: u64) -> Case {
    let k = doublings(n);
    let body = join(k, |i| format!("        t{} = (t{i}, t{i})\n", i + 1), "");
    program(scalar_main(&format!("        t0 = x\n{body}        return t{k}\n")), STATIC, &[SCALAR_ARG])
}

/// k = 20 at size 100, 100 at size 10^6.
fn doublings(n: u64) -> u64 {
    (n.max(10).ilog10() as u64 * 20).saturating_sub(20).max(20)
}

fn if_growing_join(n: u64) -> Case {
    let k = doublings(n);
    let body = join(
        k,
        |i| {
            format!(
                "        if c:\n            r{j} = (t{i}, t{i})\n        else:\n            r{j} = (t{i}, t{i})\n        t{j} = r{j}\n",
                j = i + 1
            )
        },
        "",
    );
    let text = module(
        "x: R.Tensor((), \"int32\"), c: R.Tensor((), \"bool\")",
        &format!("        t0 = x\n{body}        return t{k}\n"),
    );
    program(text, STATIC, &[SCALAR_ARG, "R.const(True, \"bool\")"])
}

fn concat_many(n: u64) -> Case {
    let k = n.min(2000);
    let params = join(k, |i| format!("x{i}: R.Tensor((\"n{i}\",), \"float32\")"), ", ");
    let xs = join(k, |i| format!("x{i}"), ", ");
    let text = module(
        &params,
        &format!("        y = R.concat(({xs},), axis=0)\n        z = R.concat((y, y), axis=0)\n        return z\n"),
    );
    program(text, STATIC, &[])
}

/// Each function calls the previous one twice: 2^k calls at run time.
fn fan_out_calls(n: u64) -> Case {
    let k = n.min(10_000);
    let fs = join(
        k,
        |i| {
            format!("    @R.function\n    def f{}(x: R.Tensor((), \"int32\")):\n        cls = Module\n        a = cls.f{i}(x)\n        b = cls.f{i}(a)\n        return b\n\n", i + 1)
        },
        "",
    );
    let text = format!(
        "{HEADER}    @R.function\n    def f0(x: R.Tensor((), \"int32\")):\n        return x\n\n{fs}    @R.function\n    def main(x: R.Tensor((), \"int32\")):\n        cls = Module\n        y = cls.f{k}(x)\n        return y\n"
    );
    program(text, STATIC, &[SCALAR_ARG])
}

fn nested_tuple_bindings(n: u64) -> Case {
    let wrap = join(n, |i| format!("        t{} = (t{i},)\n", i + 1), "");
    let unwrap = join(n, |i| format!("        p{} = p{i}[0]\n", i + 1), "");
    let text = scalar_main(&format!("        t0 = x\n{wrap}        p0 = t{n}\n{unwrap}        return p{n}\n"));
    program(text, STATIC, &[SCALAR_ARG])
}

/// A nonlinear shape equality with many variables, for the prover.
fn prover_nonlinear(n: u64) -> Case {
    let k = (n.ilog10() as u64 * 6).min(60);
    let ns = join(k, |i| format!("n{i}"), " * ");
    let ms = join(k, |i| format!("m{i}"), " * ");
    let lhs = format!("{ns} % ({ms} + 1)");
    let rhs = format!("({ns} + {ms}) % ({ms} + 1)");
    let annotations = join(
        k,
        |i| format!("        a{i} = R.match_cast(x, R.Shape([{ns} % ({ms} + {i}) + {ms} // ({ns} + 1)]))\n"),
        "",
    );
    let shape_params = join(k, |i| format!("\"n{i}\""), ", ") + ", " + &join(k, |i| format!("\"m{i}\""), ", ");
    let text = module(
        &format!("y: R.Tensor(({shape_params}), \"int8\"), x: R.Shape(ndim=1)"),
        &format!("{annotations}        return x\n"),
    );
    let mut c = program(text, &["check"], &[]);
    c.commands.push(vec!["prove".into(), lhs, rhs]);
    c
}

/// Elements a run allocates, scaled so that size 10^6 asks for 2^26.
fn elements(n: u64) -> u64 {
    n.saturating_mul(67)
}

fn big_allocation(n: u64) -> Case {
    let e = elements(n);
    let body = format!(
        "        a = R.zeros(R.shape([{e}]), \"float32\")\n        b = R.ones(R.shape([{e}]), \"float32\")\n        c = R.full(R.shape([{e}]), R.const(2.0, \"float32\"), \"float32\")\n        d = R.arange({e})\n        f = R.broadcast_to(R.const(1.0, \"float32\"), R.shape([{e}]))\n        return (R.sum(a), R.sum(b), R.sum(c), R.sum(f))\n"
    );
    program(scalar_main(&body), &["check"], &[SCALAR_ARG])
}

fn big_matmul(n: u64) -> Case {
    let m = (n as f64).sqrt().round().max(1.0) as u64;
    let body = format!(
        "        a = R.ones(R.shape([{m}, {m}]), \"float32\")\n        b = R.matmul(a, a)\n        c = R.matmul(b, a)\n        return c\n"
    );
    program(scalar_main(&body), &["check"], &[SCALAR_ARG])
}

/// A `.npy` file of `e` f32 elements in one dimension (or of rank `e` and zero size).
fn npy(shape: &str, elements: u64) -> Vec<u8> {
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({shape}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.resize(out.len() + 4 * elements as usize, 0);
    out
}

fn npy_argument(n: u64) -> Case {
    let e = elements(n) / 16;
    // The sum, not the tensor: printing 4 * 10^6 elements back is output the user asked for.
    let text = module("x: R.Tensor(ndim=1, dtype=\"float32\")", "        s = R.sum(x)\n        return s\n");
    let rank = n.min(1_000_000);
    let zero_rank = format!("0, {}", join(rank - 1, |_| "2".into(), ", "));
    let mut c = program(text, &[], &[]);
    c.files.push(("big.npy".into(), npy(&format!("{e},"), e)));
    c.files.push(("big1.npy".into(), npy(&format!("{},", e + 1), e + 1)));
    c.files.push(("rank.npy".into(), npy(&zero_rank, 0)));
    for f in ["@big.npy", "@big1.npy", "@rank.npy"] {
        for engine in ["oracle", "optimized"] {
            c.commands.push(vec!["eval".into(), "p.rx".into(), "--engine".into(), engine.into(), f.into()]);
        }
    }
    c
}

/// `--entry` and arguments are names and values, never source text to splice.
fn entry_injection(_: u64) -> Case {
    let mut c = program(scalar_main("        return x\n"), &[], &[]);
    for entry in ["", "R.add(R.const([2.0]), R.const([3.0])), ", "main(x) #", "main\n"] {
        c.commands.push(vec!["eval".into(), "p.rx".into(), "--entry".into(), entry.into(), SCALAR_ARG.into()]);
    }
    c.commands.push(vec!["eval".into(), "p.rx".into(), "R.const(1, \"int32\")), (R.const(2, \"int32\")".into()]);
    c.must_fail = true;
    c
}

/// A malformed argument after a large one: the error names its rule and stays short.
fn malformed_argument(n: u64) -> Case {
    // One argument may not pass 128 KiB (Linux's MAX_ARG_STRLEN).
    let big = format!("R.const([{}], \"float32\")", join(n.min(20_000), |_| "1.0".into(), ", "));
    let mut c = program(
        module("x: R.Tensor(ndim=1, dtype=\"float32\"), y: R.Tensor((), \"int32\")", "        return y\n"),
        &[],
        &[],
    );
    c.commands.push(vec!["eval".into(), "p.rx".into(), big, "R.const(1, \"int32\"".into()]);
    c
}

/// `oracle test` on a directory with links back to itself.
fn symlink_loop(_: u64) -> Case {
    let meta =
        "# ---\n# rules: []\n# description: a file under two links to its own directory\n# expect: valid\n# ---\n";
    let mut c = program(format!("{meta}{}", scalar_main("        return x\n")), &[], &[]);
    c.files[0].0 = "d/p.rx".into();
    c.links = vec![("d/a".into(), ".".into()), ("d/b".into(), ".".into())];
    c.commands.push(vec!["test".into(), "d".into()]);
    c
}

/// Invalid UTF-8 on line n: the error points at it.
fn invalid_utf8(n: u64) -> Case {
    let mut text = scalar_main(&"        y = x\n".repeat(n as usize)).into_bytes();
    text.extend(b"        z = \xff\xfe\n        return x\n");
    let mut c = program(String::new(), STATIC, &[]);
    c.files[0].1 = text;
    c
}

/// One line using n unbound shape variables: the diagnostics stay bounded.
fn unbound_shape_variables(n: u64) -> Case {
    let dims = join(n, |i| format!("u{i}"), ", ");
    let text = scalar_main(&format!("        y = R.match_cast(x, R.Tensor(({dims},), \"int32\"))\n        return x\n"));
    program(text, &["check", "normalize"], &[])
}

/// Constants whose size is zero while their other dimensions overflow.
fn zero_size_overflow(_: u64) -> Case {
    let body =
        "        a = R.zeros(R.shape([0, 4611686018427387904, 4611686018427387904]), \"float32\")\n        return a\n";
    let mut c = program(scalar_main(body), &["check"], &[SCALAR_ARG]);
    c.files.push(("zero.npy".into(), npy("0, 4611686018427387904, 4611686018427387904", 0)));
    c.files.push(("q.rx".into(), module("x: R.Tensor(ndim=3, dtype=\"float32\")", "        return x\n").into_bytes()));
    for engine in ["oracle", "optimized"] {
        c.commands.push(vec!["eval".into(), "q.rx".into(), "--engine".into(), engine.into(), "@zero.npy".into()]);
    }
    c
}

/// `R.Tensor(ndim=-2)`: only -1 means an unknown rank.
fn negative_ndim(_: u64) -> Case {
    let text = module("x: R.Tensor(ndim=-2, dtype=\"int32\")", "        return x\n");
    let mut c = program(text, &["check"], &["R.const([1], \"int32\")"]);
    c.must_fail = true;
    c
}

/// Every class, in the order the hostile-input suite runs them.
pub const CLASSES: &[Class] = &[
    Class { name: "add_chain", what: "x + x + ... + x", build: add_chain },
    Class { name: "mul_chain", what: "x * x * ... * x", build: mul_chain },
    Class { name: "and_chain", what: "x and x and ... and x", build: and_chain },
    Class { name: "call_chain", what: "x(x)(x)...", build: call_chain },
    Class { name: "subscript_chain", what: "t[0][0]...", build: subscript_chain },
    Class { name: "attribute_chain", what: "x.a.a...", build: attribute_chain },
    Class { name: "nested_brackets", what: "((...(x)...))", build: nested_brackets },
    Class { name: "shape_dimension_chain", what: "a shape dimension n + n + ... + n", build: shape_dimension_chain },
    Class { name: "tir_expression_chain", what: "a TIR store of A[i] + A[i] + ...", build: tir_expression_chain },
    Class { name: "wide_tuple", what: "a tuple of n fields", build: wide_tuple },
    Class { name: "wide_shape", what: "a shape of n dimensions", build: wide_shape },
    Class { name: "many_bindings", what: "n chained bindings", build: many_bindings },
    Class { name: "rebindings", what: "n rebindings of one name", build: rebindings },
    Class { name: "many_functions", what: "n functions", build: many_functions },
    Class { name: "big_constant", what: "a constant of n elements", build: big_constant },
    Class { name: "float_matrix_constant", what: "a float32 constant of 16n elements", build: float_matrix_constant },
    Class { name: "doubling_tuple", what: "StructInfo doubling at each binding", build: doubling_tuple },
    Class { name: "if_growing_join", what: "if branches whose join doubles", build: if_growing_join },
    Class { name: "concat_many", what: "concat of many symbolic inputs", build: concat_many },
    Class { name: "fan_out_calls", what: "each function calls the previous twice", build: fan_out_calls },
    Class {
        name: "nested_tuple_bindings",
        what: "n nested one-field tuples, then n projections",
        build: nested_tuple_bindings,
    },
    Class { name: "prover_nonlinear", what: "nonlinear shape equalities over many variables", build: prover_nonlinear },
    Class {
        name: "big_allocation",
        what: "zeros/ones/full/arange/broadcast_to of 67n elements",
        build: big_allocation,
    },
    Class { name: "big_matmul", what: "matmuls of sqrt(n)-square matrices", build: big_matmul },
    Class { name: "npy_argument", what: "large and high-rank .npy arguments", build: npy_argument },
    Class {
        name: "entry_injection",
        what: "--entry and arguments that are not a name and values",
        build: entry_injection,
    },
    Class {
        name: "malformed_argument",
        what: "a malformed argument after an n-element one",
        build: malformed_argument,
    },
    Class { name: "symlink_loop", what: "oracle test on a directory linking to itself", build: symlink_loop },
    Class { name: "invalid_utf8", what: "invalid UTF-8 after n lines", build: invalid_utf8 },
    Class {
        name: "unbound_shape_variables",
        what: "a line using n unbound shape variables",
        build: unbound_shape_variables,
    },
    Class {
        name: "zero_size_overflow",
        what: "zero-size tensors whose other dimensions overflow",
        build: zero_size_overflow,
    },
    Class { name: "negative_ndim", what: "R.Tensor(ndim=-2)", build: negative_ndim },
];
