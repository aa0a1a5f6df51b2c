//! The operator table: the one declaration of every registered operator.
//!
//! [`for_each_op!`] hands the whole table to a macro of the caller's choice (in the
//! manner of wasmparser's `for_each_operator!`); `ops/mod.rs` expands it into
//! [`Op`](super::Op) and [`REGISTRY`](super::REGISTRY). Every other consumer (the
//! oracle's evaluator, the generator, the engine) matches on `Op` exhaustively, so an
//! operator added here without a kernel or a generator arm does not compile.
//!
//! Each entry: `Variant = "short_name" { fields }`, where the full name is
//! `relax.short_name`, the TVMScript spelling `R.short_name` and the rule `OP-short_name`.
//! - `pure`: a call may appear in a DataflowBlock and keeps its function pure (TY-10.1.1, TY-11.2.1);
//! - `arity`: how many arguments it takes;
//! - `attrs`: its attribute schema (`attrs::schemas`);
//! - `sig`: how TVMScript writes a call (`None`: positional expressions, keywords as attributes);
//! - `sinfo_args`: whether a call carries StructInfo arguments;
//! - `minus_one`: the argument positions where a `ShapeExpr` may hold a literal `-1`
//!   (a dimension the operator infers, E-11);
//! - `infer`: the static rule, its `FInferStructInfo` (SI-D-11.1, TY-7.1);
//! - `summary`: one line for diagnostics and the rule table.

/// Calls `$m! { ... }` with every operator of the registry, in registry order.
#[macro_export]
macro_rules! for_each_op {
    ($m:ident) => {
        $m! {
            // Notable Operators (and the earlier draft's `cast`)
            CallTir = "call_tir" {
                pure: true, arity: AtLeast(2), attrs: &[],
                sig: Some(&[Expr("gvar"), Expr("args"), Sinfo("out_sinfo"), Shape("tir_vars")]),
                sinfo_args: true, minus_one: &[], infer: special::call_tir,
                summary: "call_tir(f, args, out_sinfo) calls the TIR PrimFunc f in destination-passing style; the result has StructInfo out_sinfo (tensors with shape and dtype); pure.",
            }
            CallTirInplace = "call_tir_inplace" {
                pure: true, arity: AtLeast(2), attrs: s::CALL_TIR_INPLACE,
                sig: Some(&[Expr("gvar"), Expr("args"), Attr("inplace_indices"), Sinfo("out_sinfo"), Shape("tir_vars")]),
                sinfo_args: true, minus_one: &[], infer: special::call_tir_inplace,
                summary: "call_tir_inplace(f, args, out_sinfo, inplace_indices) calls the TIR PrimFunc f with output i written in place into argument inplace_indices[i] (-1: a fresh tensor); the result has StructInfo out_sinfo; pure (the in-place arguments are copies, E-15).",
            }
            CallTirWithGrad = "call_tir_with_grad" {
                pure: true, arity: AtLeast(2), attrs: s::CALL_TIR_WITH_GRAD,
                sig: Some(&[Expr("gvar"), Expr("args"), Sinfo("out_sinfo"), Attr("te_grad_name"), Attr("te_grad_kwargs"), Shape("tir_vars")]),
                sinfo_args: true, minus_one: &[], infer: special::call_tir_with_grad,
                summary: "call_tir_with_grad(f, args, out_sinfo, te_grad_name, te_grad_kwargs) is call_tir carrying the name and arguments of its gradient's TE function (read only by the Gradient pass); pure.",
            }
            CallDpsPacked = "call_dps_packed" {
                pure: false, arity: Exactly(2), attrs: &[],
                sig: Some(&[Func("func"), Expr("args"), Sinfo("out_sinfo")]),
                sinfo_args: true, minus_one: &[], infer: special::call_dps_packed,
                summary: "call_dps_packed(func, args, out_sinfo) calls a packed function in destination-passing style; the result has StructInfo out_sinfo; impure.",
            }
            // Written `R.call_packed("name", ...)`: a call of an ExternFunc, whose static rule this is.
            CallPacked = "call_packed" {
                pure: false, arity: AtLeast(0), attrs: s::CALL_PACKED,
                sig: None,
                sinfo_args: true, minus_one: &[], infer: special::call_packed,
                summary: "A call of an ExternFunc: its StructInfo is default_derive of its sinfo_args; impure unless the call has pure=True.",
            }
            CallPurePacked = "call_pure_packed" {
                pure: true, arity: AtLeast(1), attrs: &[],
                sig: Some(&[Func("func"), Rest("args"), Sinfo("sinfo_args")]),
                sinfo_args: true, minus_one: &[], infer: special::call_pure_packed,
                summary: "call_pure_packed(func, *args, sinfo_args) calls a packed function declared pure; its StructInfo is default_derive of sinfo_args.",
            }
            ShapeOf = "shape_of" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(&[Expr("expr")]),
                sinfo_args: false, minus_one: &[], infer: special::shape_of,
                summary: "shape_of(t) is the shape of tensor t: ShapeStructInfo of t's rank and dimensions.",
            }
            NullValue = "null_value" {
                pure: true, arity: Exactly(0), attrs: &[], sig: Some(&[]),
                sinfo_args: false, minus_one: &[], infer: special::null_value,
                summary: "null_value() is the null object: ObjectStructInfo.",
            }
            Print = "print" {
                pure: false, arity: AtLeast(0), attrs: s::FORMAT, sig: Some(&[Rest("values"), Attr("format")]),
                sinfo_args: false, minus_one: &[], infer: special::print,
                summary: "print(*values, format) prints; impure; returns the empty tuple.",
            }
            AssertOp = "assert_op" {
                pure: false, arity: AtLeast(1), attrs: s::FORMAT,
                sig: Some(&[Expr("condition"), Rest("format_args"), Attr("format")]),
                sinfo_args: false, minus_one: &[], infer: special::assert_op,
                summary: "assert_op(condition, *args, format) stops the program when the boolean scalar condition is false; impure; returns the empty tuple.",
            }
            Cast = "cast" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(&[Expr("value"), Sinfo("sinfo_args")]),
                sinfo_args: true, minus_one: &[], infer: special::cast,
                summary: "cast(v, sinfo_args=[S]) checks at run time that v matches S and returns it with StructInfo S (earlier draft).",
            }
            // Elementwise binary arithmetic
            Add = "add" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::arith,
                summary: "Elementwise x1 + x2 with NumPy broadcasting: dims pair up from the right and must be equal or 1; operand dtypes must agree.",
            }
            Subtract = "subtract" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::arith,
                summary: "Elementwise x1 - x2 with NumPy broadcasting (as add).",
            }
            Multiply = "multiply" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::arith,
                summary: "Elementwise x1 * x2 with NumPy broadcasting (as add).",
            }
            Divide = "divide" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::arith,
                summary: "Elementwise x1 / x2 with NumPy broadcasting (as add).",
            }
            FloorDivide = "floor_divide" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::arith,
                summary: "Elementwise floor(x1 / x2) with NumPy broadcasting (as add).",
            }
            Power = "power" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::arith,
                summary: "Elementwise x1 ** x2 with NumPy broadcasting (as add).",
            }
            Maximum = "maximum" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::arith,
                summary: "Elementwise maximum with NumPy broadcasting (as add).",
            }
            Minimum = "minimum" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::arith,
                summary: "Elementwise minimum with NumPy broadcasting (as add).",
            }
            // Comparisons
            Equal = "equal" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::compare,
                summary: "Elementwise x1 == x2 with NumPy broadcasting; the result is bool.",
            }
            NotEqual = "not_equal" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::compare,
                summary: "Elementwise x1 != x2 with NumPy broadcasting; the result is bool.",
            }
            Less = "less" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::compare,
                summary: "Elementwise x1 < x2 with NumPy broadcasting; the result is bool.",
            }
            LessEqual = "less_equal" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::compare,
                summary: "Elementwise x1 <= x2 with NumPy broadcasting; the result is bool.",
            }
            Greater = "greater" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::compare,
                summary: "Elementwise x1 > x2 with NumPy broadcasting; the result is bool.",
            }
            GreaterEqual = "greater_equal" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::compare,
                summary: "Elementwise x1 >= x2 with NumPy broadcasting; the result is bool.",
            }
            // Logical
            LogicalAnd = "logical_and" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::logical,
                summary: "Elementwise logical and of bool tensors with NumPy broadcasting.",
            }
            LogicalOr = "logical_or" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(BINARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::logical,
                summary: "Elementwise logical or of bool tensors with NumPy broadcasting.",
            }
            LogicalNot = "logical_not" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::logical_not,
                summary: "Elementwise logical not of a bool tensor.",
            }
            // Unary
            Negative = "negative" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::unary,
                summary: "Elementwise negation; same StructInfo as the operand.",
            }
            Abs = "abs" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::unary,
                summary: "Elementwise absolute value; same StructInfo as the operand.",
            }
            Exp = "exp" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::unary_float,
                summary: "Elementwise exponential of a float tensor; same StructInfo.",
            }
            Log = "log" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::unary_float,
                summary: "Elementwise natural logarithm of a float tensor; same StructInfo.",
            }
            Sqrt = "sqrt" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::unary_float,
                summary: "Elementwise square root of a float tensor; same StructInfo.",
            }
            Tanh = "tanh" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::unary_float,
                summary: "Elementwise hyperbolic tangent of a float tensor; same StructInfo.",
            }
            Sigmoid = "sigmoid" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::unary_float,
                summary: "Elementwise logistic sigmoid of a float tensor; same StructInfo.",
            }
            Relu = "nn.relu" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: elementwise::unary,
                summary: "Elementwise max(x, 0); same StructInfo as the operand.",
            }
            Softmax = "nn.softmax" {
                pure: true, arity: Exactly(1), attrs: s::SOFTMAX, sig: Some(&[Expr("data"), Attr("axis")]),
                sinfo_args: false, minus_one: &[], infer: elementwise::softmax,
                summary: "Softmax of a float tensor along axis (default -1); same StructInfo.",
            }
            Where = "where" {
                pure: true, arity: Exactly(3), attrs: &[], sig: Some(&[Expr("condition"), Expr("x1"), Expr("x2")]),
                sinfo_args: false, minus_one: &[], infer: elementwise::where_,
                summary: "where(condition, x1, x2) picks elementwise; the three broadcast together; condition is bool.",
            }
            Astype = "astype" {
                pure: true, arity: Exactly(1), attrs: s::ASTYPE, sig: Some(&[Expr("x"), Attr("dtype")]),
                sinfo_args: false, minus_one: &[], infer: elementwise::astype,
                summary: "astype(x, dtype) converts elementwise to dtype; same shape.",
            }
            // Unary math and activations
            Erf = "erf" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: unary_math::float,
                summary: "Elementwise Gauss error function of a float tensor; same StructInfo.",
            }
            Rsqrt = "rsqrt" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: unary_math::float,
                summary: "Elementwise 1 / sqrt(x) of a float tensor; same StructInfo.",
            }
            Sin = "sin" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: unary_math::float,
                summary: "Elementwise sine of a float tensor; same StructInfo.",
            }
            Cos = "cos" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: unary_math::float,
                summary: "Elementwise cosine of a float tensor; same StructInfo.",
            }
            Floor = "floor" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: unary_math::any,
                summary: "Elementwise floor (integers unchanged); same StructInfo as the operand.",
            }
            Ceil = "ceil" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: unary_math::any,
                summary: "Elementwise ceiling (integers unchanged); same StructInfo as the operand.",
            }
            Round = "round" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: unary_math::any,
                summary: "Elementwise rounding to the nearest integer, ties to even (integers unchanged); same StructInfo.",
            }
            Sign = "sign" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: unary_math::any,
                summary: "Elementwise sign: -1, 0 or 1 (NaN stays NaN); same StructInfo as the operand.",
            }
            Square = "square" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: unary_math::any,
                summary: "Elementwise x * x in the dtype (integers wrap); same StructInfo as the operand.",
            }
            IsNan = "isnan" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: unary_math::check,
                summary: "Elementwise test for NaN; a bool tensor of the operand's shape (false for integers).",
            }
            IsInf = "isinf" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: unary_math::check,
                summary: "Elementwise test for an infinity; a bool tensor of the operand's shape (false for integers).",
            }
            Gelu = "nn.gelu" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(&[Expr("data")]),
                sinfo_args: false, minus_one: &[], infer: unary_math::float,
                summary: "GELU of a float tensor, x * (0.5 + erf(x / sqrt(2)) * 0.5); same StructInfo.",
            }
            GeluTanh = "nn.gelu_tanh" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(&[Expr("data")]),
                sinfo_args: false, minus_one: &[], infer: unary_math::float,
                summary: "GELU, tanh approximation: 0.5 * x * (1 + tanh(sqrt(2 / pi) * x * (1 + 0.044715 * x * x))); same StructInfo.",
            }
            Silu = "nn.silu" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(&[Expr("data")]),
                sinfo_args: false, minus_one: &[], infer: unary_math::float,
                summary: "SiLU of a float tensor, x * sigmoid(x); same StructInfo.",
            }
            LeakyRelu = "nn.leakyrelu" {
                pure: true, arity: Exactly(1), attrs: s::LEAKYRELU, sig: Some(&[Expr("data"), Attr("alpha")]),
                sinfo_args: false, minus_one: &[], infer: unary_math::leakyrelu,
                summary: "Leaky ReLU of a float tensor: x where x > 0, else alpha * x (alpha default 0.01); same StructInfo.",
            }
            Clip = "clip" {
                pure: true, arity: Exactly(3), attrs: &[], sig: Some(&[Expr("x"), Expr("min"), Expr("max")]),
                sinfo_args: false, minus_one: &[], infer: unary_math::clip,
                summary: "clip(x, min, max) = max(min(x, max), min) elementwise, the PrimValue bounds converted to x's dtype; same StructInfo as x.",
            }
            // Linear algebra and reductions
            Matmul = "matmul" {
                pure: true, arity: Exactly(2), attrs: s::MATMUL, sig: Some(&[Expr("x1"), Expr("x2"), Attr("out_dtype")]),
                sinfo_args: false, minus_one: &[], infer: linalg::matmul,
                summary: "NumPy matmul: (..., n, k) @ (..., k, m) gives (..., n, m); 1-D operands are promoted and the added dimension dropped; batch dims broadcast.",
            }
            Einsum = "einsum" {
                pure: true, arity: Exactly(1), attrs: s::EINSUM, sig: Some(&[Expr("operands"), Attr("subscripts")]),
                sinfo_args: false, minus_one: &[], infer: einsum::einsum,
                summary: "einsum(operands, subscripts): Einstein summation of a tuple of tensors (NumPy's subscripts: ellipsis, implied output, diagonals, broadcasting).",
            }
            Attention = "nn.attention" {
                pure: true, arity: AtLeast(3), attrs: s::ATTENTION,
                sig: Some(&[Expr("query"), Expr("key"), Expr("value"), Expr("bias"), Attr("scale"), Attr("causal_mask"), Attr("window_size")]),
                sinfo_args: false, minus_one: &[], infer: linalg::attention,
                summary: "attention(q, k, v, bias, scale, causal_mask, window_size): softmax(q k^T * scale + bias, masked) v per head, BSNH layout; (b, s, n, h_v).",
            }
            Sum = "sum" {
                pure: true, arity: Exactly(1), attrs: s::REDUCE, sig: Some(REDUCE),
                sinfo_args: false, minus_one: &[], infer: linalg::reduce,
                summary: "Sum along axis (None: all), keeping reduced dims as 1 with keepdims.",
            }
            Mean = "mean" {
                pure: true, arity: Exactly(1), attrs: s::REDUCE, sig: Some(REDUCE),
                sinfo_args: false, minus_one: &[], infer: linalg::reduce,
                summary: "Mean along axis (None: all), keeping reduced dims as 1 with keepdims.",
            }
            Max = "max" {
                pure: true, arity: Exactly(1), attrs: s::REDUCE, sig: Some(REDUCE),
                sinfo_args: false, minus_one: &[], infer: linalg::reduce,
                summary: "Maximum along axis (None: all), keeping reduced dims as 1 with keepdims.",
            }
            Min = "min" {
                pure: true, arity: Exactly(1), attrs: s::REDUCE, sig: Some(REDUCE),
                sinfo_args: false, minus_one: &[], infer: linalg::reduce,
                summary: "Minimum along axis (None: all), keeping reduced dims as 1 with keepdims.",
            }
            // Statistics and normalization
            Prod = "prod" {
                pure: true, arity: Exactly(1), attrs: s::REDUCE, sig: Some(REDUCE),
                sinfo_args: false, minus_one: &[], infer: statistical::prod_variance,
                summary: "Product along axis (None: all), keeping reduced dims as 1 with keepdims; the empty product is 1.",
            }
            Argmax = "argmax" {
                pure: true, arity: Exactly(1), attrs: s::ARG_REDUCE, sig: Some(REDUCE),
                sinfo_args: false, minus_one: &[], infer: statistical::arg_reduce,
                summary: "int64 index of the first maximum along axis (None: of the flattened tensor); keepdims keeps the axis as 1.",
            }
            Argmin = "argmin" {
                pure: true, arity: Exactly(1), attrs: s::ARG_REDUCE, sig: Some(REDUCE),
                sinfo_args: false, minus_one: &[], infer: statistical::arg_reduce,
                summary: "int64 index of the first minimum along axis (None: of the flattened tensor); keepdims keeps the axis as 1.",
            }
            Variance = "variance" {
                pure: true, arity: Exactly(1), attrs: s::REDUCE, sig: Some(REDUCE),
                sinfo_args: false, minus_one: &[], infer: statistical::prod_variance,
                summary: "Population variance (mean of squared deviations from the mean) along axis (None: all), as sum's shape rule.",
            }
            Std = "std" {
                pure: true, arity: Exactly(1), attrs: s::REDUCE, sig: Some(REDUCE),
                sinfo_args: false, minus_one: &[], infer: statistical::std,
                summary: "Population standard deviation (sqrt of variance) of a float tensor along axis (None: all).",
            }
            Cumsum = "cumsum" {
                pure: true, arity: Exactly(1), attrs: s::CUMSUM,
                sig: Some(&[Expr("data"), Attr("axis"), Attr("dtype"), Attr("exclusive")]),
                sinfo_args: false, minus_one: &[], infer: statistical::cumsum,
                summary: "Running sum along axis (None: of the flattened tensor, 1-D) in dtype (default: the operand's); exclusive starts from 0.",
            }
            LogSoftmax = "nn.log_softmax" {
                pure: true, arity: Exactly(1), attrs: s::SOFTMAX, sig: Some(&[Expr("data"), Attr("axis")]),
                sinfo_args: false, minus_one: &[], infer: norm::log_softmax,
                summary: "log(softmax(x)) of a float tensor along axis (default -1), computed as x - max - log(sum(exp(x - max))); same StructInfo.",
            }
            LayerNorm = "nn.layer_norm" {
                pure: true, arity: Exactly(3), attrs: s::LAYER_NORM,
                sig: Some(&[Expr("data"), Expr("gamma"), Expr("beta"), Attr("axes"), Attr("epsilon"), Attr("center"), Attr("scale")]),
                sinfo_args: false, minus_one: &[], infer: norm::layer_norm,
                summary: "(x - mean) / sqrt(var + epsilon) * gamma + beta over axes; gamma, beta have data's lengths on axes; same StructInfo as data.",
            }
            RmsNorm = "nn.rms_norm" {
                pure: true, arity: Exactly(2), attrs: s::RMS_NORM,
                sig: Some(&[Expr("data"), Expr("weight"), Attr("axes"), Attr("epsilon")]),
                sinfo_args: false, minus_one: &[], infer: norm::rms_norm,
                summary: "x / sqrt(mean(x^2) + epsilon) * weight over axes (default -1); same StructInfo as data.",
            }
            GroupNorm = "nn.group_norm" {
                pure: true, arity: Exactly(3), attrs: s::GROUP_NORM,
                sig: Some(&[Expr("data"), Expr("gamma"), Expr("beta"), Attr("num_groups"), Attr("channel_axis"), Attr("axes"), Attr("epsilon"), Attr("center"), Attr("scale")]),
                sinfo_args: false, minus_one: &[], infer: norm::group_norm,
                summary: "Layer norm of each group of num_groups channels (along channel_axis) together with axes; gamma, beta per channel; same StructInfo.",
            }
            BatchNorm = "nn.batch_norm" {
                pure: true, arity: Exactly(5), attrs: s::BATCH_NORM,
                sig: Some(&[Expr("data"), Expr("gamma"), Expr("beta"), Expr("moving_mean"), Expr("moving_var"), Attr("axis"), Attr("epsilon"), Attr("center"), Attr("scale"), Attr("momentum"), Attr("training")]),
                sinfo_args: false, minus_one: &[], infer: norm::batch_norm,
                summary: "Batch norm along axis: (output, new moving_mean, new moving_var); training (default True) uses the batch's statistics, otherwise the moving ones.",
            }
            Dropout = "nn.dropout" {
                pure: true, arity: Exactly(1), attrs: s::DROPOUT, sig: Some(&[Expr("data"), Attr("rate")]),
                sinfo_args: false, minus_one: &[], infer: norm::dropout,
                summary: "dropout(data, rate) at inference: (data, ones mask), both with data's StructInfo.",
            }
            // Manipulation
            Reshape = "reshape" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(&[Expr("x"), Shape("shape")]),
                sinfo_args: false, minus_one: &[1], infer: manipulate::reshape,
                summary: "reshape(x, shape): same elements in a new shape with the same element count; one dimension may be -1.",
            }
            PermuteDims = "permute_dims" {
                pure: true, arity: Exactly(1), attrs: s::PERMUTE_DIMS, sig: Some(&[Expr("x"), Attr("axes")]),
                sinfo_args: false, minus_one: &[], infer: manipulate::permute_dims,
                summary: "permute_dims(x, axes): result dimension i is input dimension axes[i] (default: reversed).",
            }
            BroadcastTo = "broadcast_to" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(&[Expr("x"), Shape("shape")]),
                sinfo_args: false, minus_one: &[], infer: manipulate::broadcast_to,
                summary: "broadcast_to(x, shape): x broadcast (NumPy rules) to exactly shape.",
            }
            Concat = "concat" {
                pure: true, arity: Exactly(1), attrs: s::CONCAT, sig: Some(&[Expr("tensors"), Attr("axis")]),
                sinfo_args: false, minus_one: &[], infer: manipulate::concat,
                summary: "concat(tensors, axis): joins a tuple of tensors of equal rank and dtype along axis; other dims agree.",
            }
            Split = "split" {
                pure: true, arity: Exactly(1), attrs: s::SPLIT,
                sig: Some(&[Expr("x"), Attr("indices_or_sections"), Attr("axis")]),
                sinfo_args: false, minus_one: &[], infer: manipulate::split,
                summary: "split(x, indices_or_sections, axis): n parts of ceil(d / n) (the last the rest), or the parts between the given indices; a tuple of tensors (one part: x itself).",
            }
            StridedSlice = "strided_slice" {
                pure: true, arity: Exactly(1), attrs: s::STRIDED_SLICE,
                sig: Some(&[Expr("x"), Attr("axes"), Attr("begin"), Attr("end"), Attr("strides"), Attr("assume_inbound")]),
                sinfo_args: false, minus_one: &[], infer: manipulate::strided_slice,
                summary: "strided_slice(x, axes, begin, end, strides, assume_inbound): Python slicing of the given axes; assume_inbound promises 0 <= begin, end <= the dimension.",
            }
            Take = "take" {
                pure: true, arity: Exactly(2), attrs: s::TAKE, sig: Some(&[Expr("x"), Expr("indices"), Attr("axis")]),
                sinfo_args: false, minus_one: &[], infer: manipulate::take,
                summary: "take(x, indices, axis): gathers entries of x along axis at integer indices.",
            }
            // Sorting and element indexing
            Sort = "sort" {
                pure: true, arity: Exactly(1), attrs: s::SORT, sig: Some(&[Expr("x"), Attr("axis"), Attr("descending")]),
                sinfo_args: false, minus_one: &[], infer: sorting::sort,
                summary: "sort(x, axis=-1, descending=False): x sorted along axis, stably (ties keep their order; NaN above every number).",
            }
            Argsort = "argsort" {
                pure: true, arity: Exactly(1), attrs: s::ARGSORT,
                sig: Some(&[Expr("data"), Attr("axis"), Attr("descending"), Attr("dtype")]),
                sinfo_args: false, minus_one: &[], infer: sorting::argsort,
                summary: "argsort(data, axis=-1, descending=False, dtype=\"int32\"): the positions along axis that sort data stably, in the integer dtype.",
            }
            Topk = "topk" {
                pure: true, arity: Exactly(1), attrs: s::TOPK,
                sig: Some(&[Expr("data"), Attr("k"), Attr("axis"), Attr("ret_type"), Attr("largest"), Attr("dtype")]),
                sinfo_args: false, minus_one: &[], infer: sorting::topk,
                summary: "topk(data, k=1, axis=-1, ret_type=\"both\", largest=True, dtype=\"int32\"): the first k of the stable sort along axis (descending when largest; k < 1: all), values and/or positions.",
            }
            GatherElements = "gather_elements" {
                pure: true, arity: Exactly(2), attrs: s::GATHER_ELEMENTS,
                sig: Some(&[Expr("data"), Expr("indices"), Attr("axis")]),
                sinfo_args: false, minus_one: &[], infer: index::gather_elements,
                summary: "gather_elements(data, indices, axis=0): out[p] = data[p with axis replaced by indices[p]] (ONNX GatherElements); indices' shape.",
            }
            ScatterElements = "scatter_elements" {
                pure: true, arity: Exactly(3), attrs: s::SCATTER_ELEMENTS,
                sig: Some(&[Expr("data"), Expr("indices"), Expr("updates"), Attr("axis"), Attr("reduction")]),
                sinfo_args: false, minus_one: &[], infer: index::scatter_elements,
                summary: "scatter_elements(data, indices, updates, axis=0, reduction=\"update\"): data with updates[p] combined into position p with axis replaced by indices[p], in row-major order of p (ONNX ScatterElements).",
            }
            // Dimension manipulation and creation-like
            ZerosLike = "zeros_like" {
                pure: true, arity: Exactly(1), attrs: s::LIKE, sig: Some(&[Expr("x"), Attr("dtype")]),
                sinfo_args: false, minus_one: &[], infer: manipulate_dims::zeros_ones_like,
                summary: "zeros_like(x, dtype): a new tensor of zeros of x's shape, of dtype (default x's).",
            }
            OnesLike = "ones_like" {
                pure: true, arity: Exactly(1), attrs: s::LIKE, sig: Some(&[Expr("x"), Attr("dtype")]),
                sinfo_args: false, minus_one: &[], infer: manipulate_dims::zeros_ones_like,
                summary: "ones_like(x, dtype): a new tensor of ones of x's shape, of dtype (default x's).",
            }
            FullLike = "full_like" {
                pure: true, arity: Exactly(2), attrs: s::LIKE,
                sig: Some(&[Expr("x"), Expr("fill_value"), Attr("dtype")]),
                sinfo_args: false, minus_one: &[], infer: manipulate_dims::full_like,
                summary: "full_like(x, fill_value, dtype): a new tensor of x's shape filled with the scalar fill_value, of dtype (default x's).",
            }
            Squeeze = "squeeze" {
                pure: true, arity: Exactly(1), attrs: s::SQUEEZE, sig: Some(&[Expr("x"), Attr("axis")]),
                sinfo_args: false, minus_one: &[], infer: manipulate_dims::squeeze,
                summary: "squeeze(x, axis): removes the given axes, which must have length 1 (None: every axis of length 1).",
            }
            ExpandDims = "expand_dims" {
                pure: true, arity: Exactly(1), attrs: s::EXPAND_DIMS, sig: Some(&[Expr("x"), Attr("axis")]),
                sinfo_args: false, minus_one: &[], infer: manipulate_dims::expand_dims,
                summary: "expand_dims(x, axis): inserts dimensions of length 1 at the given axes of the result.",
            }
            Flatten = "flatten" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(UNARY),
                sinfo_args: false, minus_one: &[], infer: manipulate_dims::flatten,
                summary: "flatten(x): x's elements in row-major order as a 1-D tensor.",
            }
            Flip = "flip" {
                pure: true, arity: Exactly(1), attrs: s::FLIP, sig: Some(&[Expr("data"), Attr("axis")]),
                sinfo_args: false, minus_one: &[], infer: manipulate_dims::flip,
                summary: "flip(data, axis): data with the order of its elements along axis reversed.",
            }
            Tril = "tril" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(&[Expr("x"), PrimOr("k", 0)]),
                sinfo_args: false, minus_one: &[], infer: manipulate_dims::tril_triu,
                summary: "tril(x, k): the lower triangle of each matrix (last two dims): elements with j - i <= k kept, others 0.",
            }
            Triu = "triu" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(&[Expr("x"), PrimOr("k", 0)]),
                sinfo_args: false, minus_one: &[], infer: manipulate_dims::tril_triu,
                summary: "triu(x, k): the upper triangle of each matrix (last two dims): elements with j - i >= k kept, others 0.",
            }
            Tile = "tile" {
                pure: true, arity: Exactly(1), attrs: s::TILE, sig: Some(&[Expr("data"), Attr("repeats")]),
                sinfo_args: false, minus_one: &[], infer: manipulate_dims::tile,
                summary: "tile(data, repeats): data repeated repeats[i] times along each dimension (NumPy tile).",
            }
            Repeat = "repeat" {
                pure: true, arity: Exactly(1), attrs: s::REPEAT,
                sig: Some(&[Expr("data"), Attr("repeats"), Attr("axis")]),
                sinfo_args: false, minus_one: &[], infer: manipulate_dims::repeat,
                summary: "repeat(data, repeats, axis): each element repeated along axis (None: of the flattened data).",
            }
            CollapseSumLike = "collapse_sum_like" {
                pure: true, arity: Exactly(2), attrs: &[], sig: Some(&[Expr("data"), Expr("collapse_target")]),
                sinfo_args: false, minus_one: &[], infer: manipulate_dims::collapse_sum_like,
                summary: "collapse_sum_like(data, collapse_target): data summed down to collapse_target's shape (the reverse of broadcasting).",
            }
            // The Gradient pass's markers: identities (grad.cc).
            NoGrad = "grad.no_grad" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(&[Expr("input")]),
                sinfo_args: false, minus_one: &[], infer: grad::no_grad,
                summary: "grad.no_grad(x) is x; Relax's Gradient pass does not differentiate through it.",
            }
            StartCheckpoint = "grad.start_checkpoint" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(&[Expr("input")]),
                sinfo_args: false, minus_one: &[], infer: grad::start_checkpoint,
                summary: "grad.start_checkpoint(x) is the variable x; it marks the input of a stage the Gradient pass recomputes.",
            }
            EndCheckpoint = "grad.end_checkpoint" {
                pure: true, arity: Exactly(1), attrs: &[], sig: Some(&[Expr("input")]),
                sinfo_args: false, minus_one: &[], infer: grad::end_checkpoint,
                summary: "grad.end_checkpoint(x) is the variable x; it marks the output of a stage the Gradient pass recomputes.",
            }
            LayoutTransform = "layout_transform" {
                pure: true, arity: Exactly(1), attrs: s::LAYOUT_TRANSFORM,
                sig: Some(&[Expr("x"), Attr("index_map"), Attr("pad_value"), Attr("axis_separators"), Attr("input_axis_separators")]),
                sinfo_args: false, minus_one: &[], infer: layout_transform::layout_transform,
                summary: "layout_transform(x, index_map, pad_value): x's element at index i moved to index_map(i); unmapped positions hold pad_value (default 0).",
            }
            // Creation
            Zeros = "zeros" {
                pure: true, arity: Exactly(1), attrs: s::CREATE, sig: Some(&[Shape("shape"), Attr("dtype")]),
                sinfo_args: false, minus_one: &[], infer: create::zeros_ones,
                summary: "zeros(shape, dtype): a new tensor of zeros.",
            }
            Ones = "ones" {
                pure: true, arity: Exactly(1), attrs: s::CREATE, sig: Some(&[Shape("shape"), Attr("dtype")]),
                sinfo_args: false, minus_one: &[], infer: create::zeros_ones,
                summary: "ones(shape, dtype): a new tensor of ones.",
            }
            Full = "full" {
                pure: true, arity: Exactly(2), attrs: s::FULL,
                sig: Some(&[Shape("shape"), Expr("fill_value"), Attr("dtype")]),
                sinfo_args: false, minus_one: &[], infer: create::full,
                summary: "full(shape, fill_value, dtype): a new tensor filled with the scalar fill_value.",
            }
            Arange = "arange" {
                pure: true, arity: Exactly(3), attrs: s::ARANGE,
                sig: Some(&[Expr("start"), Expr("end"), Expr("step"), Attr("dtype")]),
                sinfo_args: false, minus_one: &[], infer: create::arange,
                summary: "arange(start, end, step, dtype): the 1-D tensor start, start+step, ... before end.",
            }
            OneHot = "one_hot" {
                pure: true, arity: Exactly(3), attrs: s::ONE_HOT,
                sig: Some(&[Expr("indices"), Expr("on_value"), Expr("off_value"), Attr("depth"), Attr("axis")]),
                sinfo_args: false, minus_one: &[], infer: create::one_hot,
                summary: "one_hot(indices, on_value, off_value, depth, axis=-1): a new axis of length depth, on_value where it equals the index, off_value elsewhere.",
            }
            // Convolution, pooling and padding
            Pad = "nn.pad" {
                pure: true, arity: Exactly(1), attrs: s::PAD,
                sig: Some(&[Expr("data"), Attr("pad_width"), Attr("pad_mode"), Attr("pad_value")]),
                sinfo_args: false, minus_one: &[], infer: conv::pad,
                summary: "pad(data, pad_width, pad_mode, pad_value): each axis widened by (before, after) elements: pad_value, or reflected, replicated or circular.",
            }
            Conv2d = "nn.conv2d" {
                pure: true, arity: Exactly(2), attrs: s::CONV,
                sig: Some(&[Expr("data"), Expr("weight"), Attr("strides"), Attr("padding"), Attr("dilation"), Attr("groups"), Attr("data_layout"), Attr("kernel_layout"), Attr("out_layout"), Attr("out_dtype")]),
                sinfo_args: false, minus_one: &[], infer: conv::conv2d,
                summary: "conv2d(data, weight, strides, padding, dilation, groups, data_layout, kernel_layout, out_layout, out_dtype): 2-D cross-correlation.",
            }
            MaxPool2d = "nn.max_pool2d" {
                pure: true, arity: Exactly(1), attrs: s::POOL2D,
                sig: Some(&[Expr("data"), Attr("pool_size"), Attr("strides"), Attr("padding"), Attr("dilation"), Attr("ceil_mode"), Attr("count_include_pad"), Attr("layout"), Attr("out_layout")]),
                sinfo_args: false, minus_one: &[], infer: conv::pool2d,
                summary: "max_pool2d(data, pool_size, strides, padding, dilation, ceil_mode, count_include_pad, layout, out_layout): window maxima.",
            }
            AvgPool2d = "nn.avg_pool2d" {
                pure: true, arity: Exactly(1), attrs: s::POOL2D,
                sig: Some(&[Expr("data"), Attr("pool_size"), Attr("strides"), Attr("padding"), Attr("dilation"), Attr("ceil_mode"), Attr("count_include_pad"), Attr("layout"), Attr("out_layout")]),
                sinfo_args: false, minus_one: &[], infer: conv::pool2d,
                summary: "avg_pool2d(data, pool_size, strides, padding, dilation, ceil_mode, count_include_pad, layout, out_layout): window means.",
            }
            AdaptiveAvgPool2d = "nn.adaptive_avg_pool2d" {
                pure: true, arity: Exactly(1), attrs: s::ADAPTIVE_POOL2D,
                sig: Some(&[Expr("data"), Attr("output_size"), Attr("layout"), Attr("out_layout")]),
                sinfo_args: false, minus_one: &[], infer: conv::adaptive_avg_pool2d,
                summary: "adaptive_avg_pool2d(data, output_size, layout, out_layout): means over output_size windows spanning the input.",
            }
            Conv1d = "nn.conv1d" {
                pure: true, arity: Exactly(2), attrs: s::CONV,
                sig: Some(&[Expr("data"), Expr("weight"), Attr("strides"), Attr("padding"), Attr("dilation"), Attr("groups"), Attr("data_layout"), Attr("kernel_layout"), Attr("out_layout"), Attr("out_dtype")]),
                sinfo_args: false, minus_one: &[], infer: conv::conv1d,
                summary: "conv1d(data, weight, strides, padding, dilation, groups, data_layout, kernel_layout, out_layout, out_dtype): 1-D cross-correlation.",
            }
            Conv2dTranspose = "nn.conv2d_transpose" {
                pure: true, arity: Exactly(2), attrs: s::CONV_TRANSPOSE,
                sig: Some(&[Expr("data"), Expr("weight"), Attr("strides"), Attr("padding"), Attr("output_padding"), Attr("dilation"), Attr("groups"), Attr("data_layout"), Attr("kernel_layout"), Attr("out_layout"), Attr("out_dtype")]),
                sinfo_args: false, minus_one: &[], infer: conv::conv2d_transpose,
                summary: "conv2d_transpose(data, weight, strides, padding, output_padding, dilation, groups, data_layout, kernel_layout, out_layout, out_dtype): 2-D transposed convolution (conv2d's gradient with respect to its data).",
            }
            Resize2d = "image.resize2d" {
                pure: true, arity: Exactly(2), attrs: s::RESIZE2D,
                sig: Some(&[Expr("data"), Shape("size"), Attr("roi"), Attr("layout"), Attr("method"), Attr("coordinate_transformation_mode"), Attr("rounding_method"), Attr("cubic_alpha"), Attr("cubic_exclude"), Attr("extrapolation_value"), Attr("out_dtype")]),
                sinfo_args: false, minus_one: &[], infer: resize::resize2d,
                summary: "resize2d(data, size, roi, layout, method, coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude, extrapolation_value, out_dtype): the image scaled to size (height, width) by nearest-neighbor, linear or cubic interpolation.",
            }
            // Lowered memory: what memory planning and VM lowering write (issue 19, src/relax/op/op.cc)
            BuiltinAllocTensor = "builtin.alloc_tensor" {
                pure: true, arity: Exactly(4), attrs: &[],
                sig: Some(&[Shape("shape"), Dtype("dtype"), PrimOr("runtime_device_index", 0), StrOr("storage_scope", "global")]),
                sinfo_args: false, minus_one: &[], infer: memory::builtin_alloc_tensor,
                summary: "builtin.alloc_tensor(shape, dtype, runtime_device_index, storage_scope=\"global\"): a new tensor of shape and dtype; pure.",
            }
            MemoryAllocStorage = "memory.alloc_storage" {
                pure: true, arity: Exactly(4), attrs: &[],
                sig: Some(&[Shape("size"), PrimOr("virtual_device_index", 0), StrOr("storage_scope", "global"), Dtype("dtype")]),
                sinfo_args: false, minus_one: &[], infer: memory::memory_alloc_storage,
                summary: "memory.alloc_storage(size, virtual_device_index, storage_scope, dtype): a storage of size bytes (an Object); pure.",
            }
            MemoryAllocTensor = "memory.alloc_tensor" {
                pure: true, arity: Exactly(5), attrs: &[],
                sig: Some(&[Expr("storage"), Expr("offset"), Shape("shape"), Dtype("dtype"), PrimOr("runtime_device_ind", 0)]),
                sinfo_args: false, minus_one: &[], infer: memory::memory_alloc_tensor,
                summary: "memory.alloc_tensor(storage, offset, shape, dtype, runtime_device_ind=0): a tensor of shape and dtype in storage at byte offset (which must fit); pure.",
            }
            MemoryKillStorage = "memory.kill_storage" {
                pure: false, arity: Exactly(1), attrs: &[], sig: Some(&[Expr("storage")]),
                sinfo_args: false, minus_one: &[], infer: memory::memory_kill_storage,
                summary: "memory.kill_storage(storage) ends the storage's lifetime: a no-op returning the empty tuple; impure.",
            }
            MemoryKillTensor = "memory.kill_tensor" {
                pure: false, arity: Exactly(1), attrs: &[], sig: Some(&[Expr("tensor")]),
                sinfo_args: false, minus_one: &[], infer: memory::memory_kill_tensor,
                summary: "memory.kill_tensor(tensor) ends the tensor's lifetime: a no-op returning the empty tuple; impure.",
            }
            VmAllocStorage = "vm.alloc_storage" {
                pure: true, arity: Exactly(4), attrs: &[],
                sig: Some(&[Shape("size"), PrimOr("runtime_device_index", 0), Dtype("dtype"), StrOr("storage_scope", "global")]),
                sinfo_args: false, minus_one: &[], infer: memory::vm_alloc_storage,
                summary: "vm.alloc_storage(size, runtime_device_index, dtype, storage_scope=\"global\"): a storage of size bytes (an Object); pure.",
            }
            VmAllocTensor = "vm.alloc_tensor" {
                pure: true, arity: Exactly(5), attrs: &[],
                sig: Some(&[Expr("storage"), Expr("offset"), Shape("shape"), Dtype("dtype"), PrimOr("runtime_device_ind", 0)]),
                sinfo_args: false, minus_one: &[], infer: memory::vm_alloc_tensor,
                summary: "vm.alloc_tensor(storage, offset, shape, dtype, runtime_device_ind=0): a tensor of shape and dtype in storage at byte offset (which must fit); pure.",
            }
            VmKillObject = "vm.kill_object" {
                pure: false, arity: Exactly(1), attrs: &[], sig: Some(&[Expr("obj")]),
                sinfo_args: false, minus_one: &[], infer: memory::vm_kill_object,
                summary: "vm.kill_object(obj) ends the object's lifetime: a no-op returning the empty tuple; impure.",
            }
            VmCallTirDyn = "vm.call_tir_dyn" {
                pure: false, arity: Exactly(2), attrs: &[], sig: Some(&[Func("func"), Expr("args")]),
                sinfo_args: false, minus_one: &[], infer: memory::vm_call_tir_dyn,
                summary: "vm.call_tir_dyn(f, (tensors..., shape)) calls the PrimFunc f on the tensors and the shape's values; returns the empty tuple; impure.",
            }
            CallBuiltinWithCtx = "call_builtin_with_ctx" {
                pure: false, arity: Exactly(2), attrs: &[], sig: Some(&[Func("func"), Expr("args"), Sinfo("sinfo_args")]),
                sinfo_args: true, minus_one: &[], infer: memory::call_builtin_with_ctx,
                summary: "call_builtin_with_ctx(func, args, sinfo_args) calls the VM builtin func on the tuple args; its StructInfo is sinfo_args[0], or the empty tuple; impure.",
            }
        }
    };
}
