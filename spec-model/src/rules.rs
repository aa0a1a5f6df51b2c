//! One-line summaries of the spec's rules, by rule ID (DESIGN.md), so that a
//! diagnostic can tell the user which rule they broke. The wording follows the spec.

/// `(rule ID, summary)`.
pub const RULES: &[(&str, &str)] = &[
    // Normal Form
    ("NF-1", "Within a SeqExpr, the right-hand side of a binding is a leaf expression (a variable, Constant, ShapeExpr, PrimValue, StringImm, DataTypeImm, or a Tuple of leaves) or a non-leaf expression whose subexpressions are all leaves."),
    ("NF-2", "SeqExprs may appear only as the body of a Function or as the true/false branch of an If."),
    ("NF-3", "The body of a Function and the branches of an If must be SeqExprs."),
    ("NF-4", "Within a SeqExpr, binding blocks are consolidated: no two consecutive blocks of the same kind, and no empty blocks."),
    ("NORM-5", "Normalization flattens a SeqExpr bound in a binding into the current scope; a SeqExpr with an ordinary BindingBlock bound inside a DataflowBlock is malformed."),
    // Well-Formedness Criteria
    ("WF-1", "DataflowVars can be bound only inside DataflowBlocks, and may not be used outside the DataflowBlock in which they are defined."),
    ("WF-2", "A variable used in the program must be a function parameter or appear on the left-hand side of exactly one binding; it may occur in its own binding's right-hand side only if that binding defines a function."),
    ("WF-3", "A variable may not appear before it is bound (nor outside the scope of its binding)."),
    ("WF-4", "A function's return annotation may only use shape variables from the outer scope or introduced by the parameters' annotations."),
    ("WF-5", "Shape variables may not appear in ShapeExprs or shape annotations before they are bound; only a dimension consisting of the variable alone, in a parameter annotation or a MatchCast, binds it."),
    ("WF-6", "A DataflowBlock may not contain recursive calls to the current function, calls to a global function mutually recursive with it, or If nodes."),
    ("WF-7", "A function that calls itself recursively, or is mutually recursive with global functions, must have a return annotation."),
    ("WF-8", "Op nodes may appear only as the op of a Call."),
    ("WF-9", "In a variable's StructInfo annotation, the ndim of every TensorStructInfo and ShapeStructInfo matches the number of dimensions in its shape or values."),
    ("WF-10", "A function defined inside a DataflowBlock may not use DataflowVars from the outer scope in its body."),
    ("WF-11", "At least one global function of the IRModule must be externally linked (have a global_symbol attribute)."),
    ("WF-12", "A global function's global_symbol, if defined, must equal its GlobalVar's name."),
    ("WF-13", "A TensorStructInfo's shape, if given, is a Var in scope or a ShapeExpr whose shape variables are in scope (a MatchCast may bind a new one by itself in a dimension), with as many dimensions as ndim."),
    ("WF-14", "A ShapeStructInfo's values, if given, use only shape variables in scope (a MatchCast may bind a new one by itself), and ndim equals their number."),
    ("WF-15", "A FuncStructInfo has exactly one of params and derive_func defined."),
    ("WF-16", "A PrimValue's value is an IntImm or FloatImm with one lane."),
    ("WF-17", "A PrimStructInfo's dtype is an Int, UInt or Float type."),
    ("WF-18", "A DataType has 1 lane for Int, UInt and Float, and is Handle(64, 0) (Void) otherwise; bit widths are 1, 8, 16, 32, 64 for Int/UInt and 16, 32, 64 for Float."),
];

/// The summary of a rule, if the model knows it.
pub fn rule_summary(id: &str) -> Option<&'static str> {
    RULES.iter().find(|(r, _)| *r == id).map(|(_, s)| *s)
}

/// Does the model implement checks for this rule (so a corpus expectation naming it
/// can be run rather than skipped)?
pub fn is_checked(id: &str) -> bool {
    rule_summary(id).is_some()
}
