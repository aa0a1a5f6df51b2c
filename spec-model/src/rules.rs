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
    // Rules for Subtyping
    ("SUB-1", "Reflexivity: every type is a subtype of itself."),
    ("SUB-2", "Transitivity: T1 <: T2 and T2 <: T3 give T1 <: T3."),
    ("SUB-3", "Every type is a subtype of ObjectType."),
    ("SUB-4.1", "DynTensorType(ndim=m, dtype=d) <: DynTensorType(ndim=m, dtype=Void): a tensor type may forget its dtype."),
    ("SUB-4.2", "DynTensorType(ndim=m, dtype=d) <: DynTensorType(ndim=-1, dtype=d): a tensor type may forget its rank."),
    ("SUB-4.3", "DynTensorType(ndim=-1, dtype=Void) is a supertype of every tensor type."),
    ("SUB-5", "Tuple types are subtypes fieldwise (same length, each field a subtype)."),
    ("SUB-6.1", "A pure function type is a subtype of the impure one with the same arguments and result."),
    ("SUB-6.2", "Function types are contravariant in their arguments and covariant in their result."),
    // Type Checking Rules
    ("TY-1", "The module is checked one global function at a time; Γ is prepopulated with the annotated types of (mutually) recursive globals."),
    ("TY-2", "A variable has the type Γ gives it; a variable not in Γ is an error."),
    ("TY-3", "Constant(data) has DynTensorType(ndim, dtype) of its array."),
    ("TY-4", "ShapeExpr(dims) has ShapeType(len(dims))."),
    ("TY-5", "A tuple has the TupleType of its fields' types."),
    ("TY-6", "An ExternFunc has PackedFuncType."),
    ("TY-7.1", "A call of an Op has the type of its FInferStructInfo result (erased)."),
    ("TY-7.2", "A call of a PackedFunc has the type its type arguments (sinfo_args) give: none → Object, one → it, several → their tuple."),
    ("TY-7.3", "A call of a function needs a FuncType of that arity whose parameter types are supertypes of the arguments' types; its type is the return type."),
    ("TY-8", "An If's condition has type DynTensorType(ndim=0, dtype=bool); the If has the LUB of its branches' types."),
    ("TY-9", "TupleGetItem(t, i) needs t of a tuple type with more than i fields; it has the i-th field's type."),
    ("TY-10.1.1", "A binding inside a DataflowBlock may not call an impure function, an ExternFunc without the pure attribute, or an Op not registered pure."),
    ("TY-10.1.2", "A bound variable's annotation must be a supertype of its value's type (a more specific annotation needs a cast)."),
    ("TY-10.1.3.3", "A MatchCast whose value type and target type are unrelated by subtyping always fails (warning)."),
    ("TY-10.1.3.5", "A MatchCast variable's annotation must be a supertype of the cast's type."),
    ("TY-10.2", "DataflowVars leave Γ at the end of their DataflowBlock."),
    ("TY-10.3", "A SeqExpr has its body's type; its bindings leave Γ afterwards."),
    ("TY-11", "Every function parameter must have a structural annotation."),
    ("TY-11.1", "A function bound to a name may call itself; the name's type is pure only if the function has the pure attribute."),
    ("TY-11.2.1", "A function is pure when every call in its body is pure (pure function type, pure ExternFunc call, pure Op)."),
    ("TY-11.2.2", "A function annotated pure that performs an impure call is an error."),
    ("TY-11.2.3", "force_pure makes a function pure even when its body performs impure calls (warning)."),
    ("TY-11.2.4", "The body's type must be a subtype of the return annotation's type (a more specific annotation needs a cast)."),
    // Checking Compatibility
    ("SI-CC-1", "Anything is compatible with ObjectStructInfo."),
    ("SI-CC-2", "StructInfos of different kinds are incompatible."),
    ("SI-CC-3.1", "Tuples of different lengths are incompatible."),
    ("SI-CC-3.2", "Tuples are as compatible as their least compatible pair of fields."),
    ("SI-CC-4.1", "Any shape is compatible with ShapeStructInfo(ndim=-1)."),
    ("SI-CC-4.2", "Shapes of different ndim are incompatible."),
    ("SI-CC-4.3", "A shape is compatible with an expected shape of unknown values."),
    ("SI-CC-4.4", "A shape of unknown values is only possibly compatible with an expected shape of known values."),
    ("SI-CC-4.5", "Shape values provably different are incompatible; all provably equal, compatible; otherwise possibly compatible."),
    ("SI-CC-5.1", "A tensor whose dtype is not the expected (non-Void) dtype is incompatible."),
    ("SI-CC-5.2", "A tensor whose ndim is not the expected (known) ndim is incompatible."),
    ("SI-CC-5.3", "A tensor is compatible with an expected tensor of undefined shape."),
    ("SI-CC-5.4", "A tensor of undefined shape is only possibly compatible with an expected tensor of defined shape."),
    ("SI-CC-5.5", "A shape given by a variable is compatible if provably equal to the other shape, incompatible if provably different, else possibly compatible."),
    ("SI-CC-5.6", "Shape expressions with a provably different dimension are incompatible; all provably equal, compatible; otherwise possibly compatible."),
    ("SI-CC-6.1", "A closure's FuncStructInfo (params) and a packed function's (derive_func) are incompatible."),
    ("SI-CC-6.2", "Packed functions are compatible with the same derive_func, possibly compatible with different ones."),
    ("SI-CC-6.3.1", "Functions with different numbers of parameters are incompatible."),
    ("SI-CC-6.3.2", "The shape variables of S1's parameters are mapped to S2's (get_shape_var_mapping) and substituted."),
    ("SI-CC-6.3.3", "Parameters are checked contravariantly and the result covariantly; the worst outcome decides."),
    ("SI-CC-6.4", "An impure function where a pure one is expected is incompatible (purity, as SUB-6.1)."),
    ("SI-CC-7", "PrimStructInfos are compatible when their dtypes are equal (later draft)."),
    // The "more specific" relation <<:
    ("SI-SP-1", "Reflexivity: S <<: S."),
    ("SI-SP-2", "Transitivity: S1 <<: S2 and S2 <<: S3 give S1 <<: S3."),
    ("SI-SP-3", "Every StructInfo is more specific than ObjectStructInfo."),
    ("SI-SP-4.1", "TensorStructInfo(n, d, s) <<: TensorStructInfo(ndim=-1, dtype=d)."),
    ("SI-SP-4.2", "TensorStructInfo(n, d, s) <<: TensorStructInfo(n, Void, s)."),
    ("SI-SP-4.3", "A tensor with a shape is more specific than the same tensor without one."),
    ("SI-SP-4.4", "Tensors whose shapes are definitely or possibly equal are more specific than each other."),
    ("SI-SP-5.1", "ShapeStructInfo(n, v) <<: ShapeStructInfo(ndim=-1)."),
    ("SI-SP-5.2", "A shape with values is more specific than the same shape without them."),
    ("SI-SP-5.3", "Shapes whose values are definitely or possibly equal are more specific than each other."),
    ("SI-SP-6", "Tuples are more specific fieldwise."),
    ("SI-SP-7.1", "Any packed FuncStructInfo is more specific than the one with empty_derive."),
    ("SI-SP-7.2", "Packed FuncStructInfos are related only with identical derive_funcs."),
    ("SI-SP-7.3", "FuncStructInfo(P1, R1) <<: FuncStructInfo(P2, R2) when P2[i] <<: P1[i] and R1 <<: R2."),
    ("SI-SP-8", "PrimStructInfos are related when their dtypes are equal (later draft)."),
    // Derivation Rules
    ("SI-D-1", "Δ is prepopulated with the signatures of (mutually) recursive globals; globals are derived one at a time."),
    ("SI-D-2", "A variable's StructInfo is Δ[v]."),
    ("SI-D-3", "Constant(value) has TensorStructInfo with its concrete rank, dtype and shape."),
    ("SI-D-4", "A tuple has the TupleStructInfo of its fields."),
    ("SI-D-5", "ShapeExpr(values) has ShapeStructInfo(len(values), values)."),
    ("SI-D-6", "An If has unify_struct_info of its branches' StructInfo."),
    ("SI-D-7", "A SeqExpr's bindings extend Δ and Σ; its StructInfo is its body's, erased to what is well defined outside."),
    ("SI-D-8.1", "A parameter's StructInfo is its annotation (ObjectStructInfo without one); its new shape variables enter Σ."),
    ("SI-D-8.2.1", "A function literal bound to an annotated variable is derived with that variable in Δ; its StructInfo must be compatible with the annotation."),
    ("SI-D-8.2.3", "An annotated binding's value must be compatible with the annotation (error if not, warning if only possibly); the annotation is used."),
    ("SI-D-8.2.4", "An unannotated binding's variable gets its value's StructInfo."),
    ("SI-D-8.3.3", "A MatchCast whose target and value StructInfo are not related by <<: always fails (warning)."),
    ("SI-D-8.3.4", "A MatchCast variable's annotation must be compatible with the cast's StructInfo."),
    ("SI-D-8.3.5", "A MatchCast variable gets the cast's StructInfo; its new shape variables enter Σ."),
    ("SI-D-9", "TupleGetItem(t, i) needs t of TupleStructInfo with more than i fields."),
    ("SI-D-10", "An ExternFunc has FuncStructInfo(ret=Object, derive_func=default_derive)."),
    ("SI-D-11.1", "A call of an Op has the StructInfo of its FInferStructInfo (ObjectStructInfo if it has none)."),
    ("SI-D-11.2.1", "A called value must have FuncStructInfo."),
    ("SI-D-11.2.2", "A call of a FuncStructInfo with a derive_func has the StructInfo the derive_func gives."),
    ("SI-D-11.2.3", "A call must pass as many arguments as the FuncStructInfo has params."),
    ("SI-D-11.2.5", "After substituting the params' shape variables, each argument must be compatible with its parameter (warning if only possibly)."),
    ("SI-D-11.2.6", "A call's StructInfo is the (substituted) return StructInfo erased to what is well defined."),
    ("SI-D-12.5", "A function body's StructInfo must be compatible with the return annotation (warning if only possibly)."),
    ("SI-D-12.6", "A function has FuncStructInfo(params, ret annotation or its body's erased StructInfo)."),
    ("SI-D-13", "PrimValue(e) has PrimStructInfo(e.dtype) (later draft)."),
    ("SI-D-14", "StringImm and DataTypeImm have ObjectStructInfo (later draft)."),
];

/// The run-time rules: Evaluating Expressions (SEM) and Evaluating MatchCast (SI-MC).
/// The oracle's `--trace` names them as they fire.
pub const RUNTIME_RULES: &[(&str, &str)] = &[
    ("SEM-1", "Constant(value) creates a new tensor whose contents are value."),
    ("SEM-2", "A variable (Var, DataflowVar or GlobalVar) evaluates to the value stored for it in the current scope."),
    ("SEM-3", "Tuple([e1, ..., en]) evaluates e1, ..., en in order and creates a new tuple of their values."),
    ("SEM-4", "TupleGetItem(t, i) evaluates t and returns its i-th field."),
    ("SEM-5", "ShapeExpr([p1, ..., pn]) evaluates p1, ..., pn in order in the shape context and creates a new shape value."),
    ("SEM-6", "A Function node evaluates to a new closure capturing (by reference) the free Relax and shape variables, not DataflowVars; a locally bound function also captures itself."),
    ("SEM-7.1", "If: the condition is evaluated first; it must be a bool scalar."),
    ("SEM-7.2", "If: when the condition is true, the true branch is evaluated and is the result."),
    ("SEM-7.3", "If: when the condition is false, the false branch is evaluated and is the result."),
    ("SEM-8", "ExternFunc(global_symbol) evaluates to the PackedFunc registered under the symbol; it is an error if there is none."),
    ("SEM-9.1", "A call of an Op evaluates the arguments in order, then applies the operator (which may mutate its arguments)."),
    ("SEM-9.2", "Otherwise the callee is evaluated first (it must be a closure or a PackedFunc), then the arguments in order."),
    ("SEM-9.2.1", "Calling a closure binds its parameters to the arguments in a new scope with its captured values and evaluates its body (with the structural checks at the start and end of the function)."),
    ("SEM-9.2.2", "Calling a PackedFunc invokes it; it may have side effects and may alias its arguments."),
    ("SEM-10.1", "SeqExpr: push a new scope."),
    ("SEM-10.2.1", "A MatchCast binding checks the value's structure, binds shape variables, and binds the variable (if any) to the value (aliasing)."),
    ("SEM-10.2.2", "A VarBinding evaluates the value and binds the variable to it (aliasing)."),
    ("SEM-10.2.3", "At the end of a DataflowBlock its DataflowVars leave the scope."),
    ("SEM-10.3", "SeqExpr: after the blocks, the body is evaluated in the current scope and is the result."),
    ("SEM-10.4", "SeqExpr: the scope is popped, removing the Vars and shape variables introduced in it."),
    ("SI-MC-1", "MatchCast against ObjectStructInfo performs no check."),
    ("SI-MC-2", "MatchCast against TensorStructInfo checks a tensor of the given ndim and dtype."),
    ("SI-MC-2.1", "A tensor shape given by a Var must equal the shape value the Var holds."),
    ("SI-MC-2.2", "A tensor shape given by a ShapeExpr is compared dimension by dimension; the number of dimensions must match."),
    ("SI-MC-2.2.1", "A dimension that is only an unbound shape variable binds it to the tensor's dimension."),
    ("SI-MC-2.2.2", "Any other dimension is evaluated and must equal the tensor's dimension."),
    ("SI-MC-3", "MatchCast against ShapeStructInfo checks a shape value of the given ndim (and, for PrimStructInfo, a prim value of the dtype)."),
    ("SI-MC-3.1", "A member of the shape values that is only an unbound shape variable binds it."),
    ("SI-MC-3.2", "Any other member is evaluated and must equal the shape value's field."),
    ("SI-MC-4", "MatchCast against TupleStructInfo checks a tuple of as many fields, each recursively."),
    ("SI-MC-5", "MatchCast against FuncStructInfo checks a closure (params defined) or a PackedFunc (derive_func defined)."),
];

/// The budgets (spec_model::limits, proofs-notes/evaluation.md E-8 and
/// interpretations.md "Limits"): exceeding one is a typed error naming it, never a
/// hang, a native stack overflow or memory exhaustion. Each is raised by the flag of
/// `limits::BUDGET_FLAGS`.
pub const LIMITS: &[(&str, &str)] = &[
    ("LIMIT-nesting", "Brackets, blocks, indentation, operator chains and postfix chains nest at most 100 levels together (a parse error of code limit)."),
    ("LIMIT-statements", "A block (a function's bindings, a module's functions) holds at most 100,000 statements (a parse error of code limit)."),
    ("LIMIT-tokens", "A file has at most 10^7 tokens (a parse error of code limit); larger tensors come in as .npy arguments."),
    ("LIMIT-constant", "A constant literal written in the text has at most 2^24 elements (a parse error of code limit)."),
    ("LIMIT-sinfo", "A StructInfo or type derived for a binding has at most 100,000 nodes and nests at most 200 levels; a larger one is a static error at the binding, which then has ObjectStructInfo."),
    ("LIMIT-prover", "The shape prover spends at most 10 s of egg and Z3 per module and 2 s of Z3 per query, and does not ask Z3 about polynomials of degree above 16; a query it cannot decide in its budget is unknown."),
    ("LIMIT-diagnostics", "At most 50 diagnostics are shown in full; the others are counted."),
    ("LIMIT-excerpt", "A source line longer than 400 characters is quoted as a window around the span."),
    ("LIMIT-fuel", "Evaluation has a step budget (fuel): one unit per expression, binding and TIR statement or loop iteration, and one per 16 tensor elements an operator's kernel reads, multiplies and adds, or makes; when it runs out the run stops with FuelExhausted."),
    ("LIMIT-depth", "Closure calls nest at most max_depth deep (default 1,000, at most 10,000); a deeper call stops the run with StackExhausted."),
    ("LIMIT-memory", "The tensors a run holds at once fit a memory budget (default 1 GiB); an allocation that would exceed it stops the run with MemoryExhausted before anything is allocated."),
];

/// The one limit the static checker reports (the others are parse errors, run-time
/// errors or presentation): an `invalid` corpus expectation can name only it.
const CHECKER_LIMITS: &[&str] = &["LIMIT-sinfo"];

/// The summary of a rule or limit, if the model knows it (operators' from the registry).
pub fn rule_summary(id: &str) -> Option<&'static str> {
    if let Some(op) = id.strip_prefix("OP-") {
        return crate::ops::lookup(op).map(|d| d.summary);
    }
    RULES.iter().chain(RUNTIME_RULES).chain(LIMITS).find(|(r, _)| *r == id).map(|(_, s)| *s)
}

/// Does the static checker implement this rule (so an `invalid`/`warning` corpus
/// expectation naming it can be checked)? Run-time rules are checked by `run:` lines.
pub fn is_checked(id: &str) -> bool {
    !RUNTIME_RULES.iter().any(|(r, _)| *r == id)
        && (!id.starts_with("LIMIT-") || CHECKER_LIMITS.contains(&id))
        && rule_summary(id).is_some()
}
