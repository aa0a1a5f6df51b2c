//! Syntax and resolution errors: the right code, the exact line and column, and a
//! message that says what was expected.

use spec_model::text::parse_module;

/// (source, code, line, column, substring of the message)
const CASES: &[(&str, &str, usize, usize, &str)] = &[
    (
        "@R.function\ndef f(x: R.Tensor((2,), \"float32\")):\n    y = R.add(x, z)\n    return y\n",
        "name",
        3,
        18,
        "unknown name `z`",
    ),
    ("@R.function\ndef f(x):\n    y = R.add(x, x\n    return y\n", "syntax", 3, 14, "expected `)`"),
    ("@R.function\ndef f(x):\n    y = R.add(x, x))\n    return y\n", "syntax", 3, 20, "unmatched `)`"),
    ("@R.function\ndef f(x):\n    y = (x, x]\n    return y\n", "syntax", 3, 14, "does not match"),
    ("@R.function\ndef f(x):\n    y = x +\n    return y\n", "syntax", 3, 12, "expected an expression"),
    ("@R.function\ndef f(x):\n      y = x\n    return y\n", "syntax", 4, 1, "indentation"),
    ("@R.function\ndef f(x):\n    y = \"abc\n    return y\n", "syntax", 3, 9, "never closed"),
    ("@R.function\ndef f(x):\n    y = 12ab\n    return y\n", "syntax", 3, 9, "after a number"),
    ("@R.function\ndef f(x):\n    y = x $ x\n    return y\n", "syntax", 3, 11, "unexpected character"),
    ("@R.function\ndef f(x):\n    while x:\n        y = x\n    return y\n", "syntax", 3, 5, "`while` is not part"),
    ("@R.function\ndef f(x):\n    y = R.sum(x, foo=1)\n    return y\n", "syntax", 3, 18, "no parameter `foo`"),
    ("@R.function\ndef f(x):\n    y = R.add(x, x, x)\n    return y\n", "syntax", 3, 21, "too many arguments"),
    ("@R.function\ndef f(x: R.Tensor((2,), \"flaot32\")):\n    return x\n", "syntax", 2, 25, "unknown dtype `flaot32`"),
    ("@R.function\ndef f(c, x):\n    if c:\n        y = x\n    return y\n", "syntax", 3, 5, "needs an `else`"),
    (
        "@R.function\ndef f(c, x):\n    if c:\n        y = x\n    else:\n        z = x\n    return z\n",
        "syntax",
        6,
        9,
        "different results",
    ),
    (
        "@R.function\ndef f(c, x):\n    if c:\n        return x\n    else:\n        y = x\n    return y\n",
        "syntax",
        4,
        9,
        "`return` may only end",
    ),
    ("@R.function\ndef f(x):\n    y = x\n", "syntax", 2, 5, "must end with `return`"),
    ("@R.function\ndef f(x):\n    return x\n    y = x\n", "syntax", 4, 5, "after `return`"),
    (
        "@R.function\ndef f(x):\n    with R.dataflow():\n        y = x\n        R.output(z)\n    return y\n",
        "name",
        5,
        18,
        "does not bind",
    ),
    ("@R.function\ndef f(x):\n    a, x.b = x\n    return a\n", "syntax", 3, 8, "unpacked into names"),
    ("@R.function\ndef f(x, x):\n    return x\n", "name", 2, 10, "declared twice"),
    ("@R.function\ndef f(x):\n    return x\n@R.function\ndef f(x):\n    return x\n", "name", 5, 5, "defines `f` twice"),
    ("@R.function\ndef f(x: R.Tensor((n, 2), \"float32\")):\n    return x\n", "name", 2, 20, "unknown name `n`"),
    (
        "@R.function\ndef f(x):\n    y = R.const([[1, 2], [3]], \"int32\")\n    return y\n",
        "syntax",
        3,
        26,
        "as in the first row",
    ),
    (
        "@R.function\ndef f(x):\n    y = R.const(256, \"uint8\")\n    return y\n",
        "syntax",
        3,
        17,
        "does not fit in uint8",
    ),
    ("@R.function\ndef f(x):\n    y = R.shape([x])\n    return y\n", "name", 3, 18, "Relax variable"),
    ("@R.function\ndef f(x):\n    y = R.Tensor((2,))\n    return y\n", "syntax", 3, 9, "is a StructInfo"),
    ("@R.function\ndef f(x):\n    y = x if x else x\n    return y\n", "syntax", 3, 11, "conditional expressions"),
    ("@R.function\ndef f(x):\n    y = cls.g(x)\n    return y\n", "name", 3, 9, "no function `g`"),
    ("def f(x):\n    return x\n", "syntax", 1, 5, "`@R.function` or `@T.prim_func`"),
    ("@R.function\ndef f(x):\n    y = R(x, x)\n    return y\n", "syntax", 3, 9, "the Relax namespace"),
    ("x = 1\n", "syntax", 1, 1, "at the top level"),
    ("", "syntax", 1, 1, "defines no module"),
    (
        "@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    for i in range(4):\n        A[j] = 0.0\n",
        "name",
        4,
        11,
        "unknown name `j`",
    ),
    (
        "@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    for i in range(4):\n        A[i] = T.expp(1.0)\n",
        "syntax",
        4,
        16,
        "not a TIR function",
    ),
    ("@T.prim_func\ndef f(A):\n    pass\n", "syntax", 2, 7, "needs an annotation"),
    (
        "@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    vi = T.axis.spatial(4, 0)\n",
        "syntax",
        3,
        5,
        "directly inside a block",
    ),
];

#[test]
fn errors_have_code_position_and_message() {
    for (src, code, line, col, msg) in CASES {
        let err = match parse_module(src) {
            Ok(_) => panic!("expected an error for:\n{src}"),
            Err(e) => e,
        };
        let d = err.diagnostic();
        let rendered = err.render("t.rx", src);
        assert_eq!(d.code, *code, "code for:\n{src}\n{rendered}");
        assert_eq!(d.line_col(src), Some((*line, *col)), "position for:\n{src}\n{rendered}");
        assert!(d.message.contains(msg), "message {:?} lacks {msg:?}\n{rendered}", d.message);
        // The rendering names the file, line and column, and shows a caret.
        assert!(rendered.contains(&format!("t.rx:{line}:{col}")), "{rendered}");
        assert!(src.is_empty() || rendered.contains('^'), "{rendered}");
    }
}

#[test]
fn suggestions_for_misspelled_names() {
    let src = "@R.function\ndef f(value):\n    y = R.add(valu, value)\n    return y\n";
    let err = parse_module(src).unwrap_err();
    assert!(err.render("t.rx", src).contains("similar spelling exists: `value`"), "{}", err.render("t.rx", src));
}
