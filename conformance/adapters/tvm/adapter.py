#!/usr/bin/env python3
"""The Apache TVM adapter of the conformance protocol (conformance/PROTOCOL.md).

A long-lived process: one handshake line, then one JSON response line per JSON request
line on standard input, until standard input closes. Programs arrive in the `tvm-0.27`
dialect (TVMScript as Apache TVM 0.27 parses it).

    check  tvm.script.parse(text, extra_vars=..., check_well_formed=False), then the
           checks TVM's decorators run by default (check_well_formed=True):
           relax.analysis.well_formed, tvm.s_tir.analysis.verify_well_formed and, for
           PrimFuncs of the tirx dialect, tvm.tirx.analysis.verify_tirx_well_formed.
    run    the same, then relax.build(mod, target="llvm"), relax.VirtualMachine(ex,
           tvm.cpu()) and vm[entry](*args).

Standard output carries protocol lines only: at start-up the real standard output is
moved to a private file descriptor and fd 1 is pointed at standard error, so whatever
TVM, LLVM or Python print goes to standard error. See README.md in this directory.
"""

from __future__ import annotations

import os
import sys

# --- Output hygiene, before anything can print ------------------------------------------
# The protocol stream gets a private duplicate of the real stdout; fd 1 (which C++ code
# writes to) becomes a copy of stderr, and so does Python's sys.stdout.
_PROTO_FD = os.dup(1)
os.dup2(2, 1)
_PROTO = os.fdopen(_PROTO_FD, "w", encoding="utf-8", newline="\n")
sys.stdout = sys.stderr

import ast  # noqa: E402
import base64  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import traceback  # noqa: E402

PROTOCOL_VERSION = 1
# --lambda-lift: run relax.transform.LambdaLift before relax.build. Not the default:
# relax.build's default pipeline has no LambdaLift, so without it every program with a
# local function fails to build (FINDINGS.md); with it, closures run (for exploring).
LAMBDA_LIFT = "--lambda-lift" in sys.argv[1:]
DIALECT = "tvm-0.27"
MESSAGE_LIMIT = 300


def send(obj: dict) -> None:
    _PROTO.write(json.dumps(obj, ensure_ascii=False, allow_nan=False) + "\n")
    _PROTO.flush()


def log(*parts) -> None:
    print("[tvm-adapter]", *parts, file=sys.stderr, flush=True)


try:
    import numpy as np
    import tvm
    import tvm_ffi
    from tvm import relax
    from tvm.script.parser.core.entry import _default_globals
except Exception:  # noqa: BLE001 - no handshake: the runner reports the adapter broken
    log("cannot import TVM:\n" + traceback.format_exc())
    sys.exit(1)


# --- Messages ----------------------------------------------------------------------------

_TRACE_LINE = re.compile(r'^\s*(File "|Traceback|\d+: |at |\.\.\.|\^+$|-->|\|)')


def _clean(text: str) -> str:
    """Drop object addresses, which change from run to run."""
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", text)
    return re.sub(r"\b0x[0-9a-fA-F]{6,}\b ?", "", text)


def _trim(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > MESSAGE_LIMIT:
        text = text[: MESSAGE_LIMIT - 1] + "…"
    return text


def error_message(err: BaseException) -> str:
    """The first meaningful line(s) of a TVM/Python error, trimmed."""
    text = str(err)
    if isinstance(err, SyntaxError) and not isinstance(err, tvm.error.DiagnosticError):
        msg = f"SyntaxError: {err.msg}"
        if err.lineno:
            msg += f" (at {err.lineno}:{err.offset or 0})"
        return _trim(msg)
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    position = ""
    m = re.search(r"-->\s*\S*?:(\d+):(\d+)", text)
    if m:
        position = f" (at {m.group(1)}:{m.group(2)})"
    kept: list[str] = []
    for line in lines:
        if _TRACE_LINE.match(line):
            if kept:
                break
            continue
        kept.append(line)
        if sum(len(k) for k in kept) > MESSAGE_LIMIT:
            break
    msg = " ".join(kept) if kept else (lines[0] if lines else "")
    if msg.startswith("error: "):
        msg = msg[len("error: "):]
    name = type(err).__name__
    if name not in ("DiagnosticError",) and not msg.startswith(name):
        msg = f"{name}: {msg}" if msg else name
    return _trim(_clean(msg + position))


# --- The harness's built-in packed functions ---------------------------------------------
# The corpus calls a few packed functions that the reference semantics provides (README.md
# of the repository, "Built-in packed functions"). TVM knows none of them, so the adapter
# registers the same functions under the same names, with the same behaviour.


def _reg(name):
    def deco(fn):
        tvm.register_global_func(name, fn, override=True)
        return fn

    return deco


def _need_tensor(v, name):
    if not isinstance(v, tvm.runtime.Tensor):
        raise TypeError(f"`{name}`: the argument must be a tensor, got {type(v).__name__}")
    return v


@_reg("oracle.identity")
def _oracle_identity(x):
    return x


@_reg("oracle.copy")
def _oracle_copy(t):
    _need_tensor(t, "oracle.copy")
    return tvm.runtime.tensor(t.numpy().copy(), device=t.device)


@_reg("oracle.add_one_inplace")
def _oracle_add_one_inplace(t):
    _need_tensor(t, "oracle.add_one_inplace")
    a = t.numpy()
    if a.dtype == np.bool_:
        a = np.ones_like(a)
    else:
        with np.errstate(over="ignore"):
            a = (a + a.dtype.type(1)).astype(a.dtype)
    t.copyfrom(a)
    return t


@_reg("oracle.copy_into")
def _oracle_copy_into(src, dst):
    _need_tensor(src, "oracle.copy_into")
    _need_tensor(dst, "oracle.copy_into")
    if tuple(src.shape) != tuple(dst.shape) or str(src.dtype) != str(dst.dtype):
        raise ValueError("`oracle.copy_into`: source and destination differ in shape or dtype")
    dst.copyfrom(src.numpy())


@_reg("oracle.print")
def _oracle_print(*args):
    from tvm.relax.op.base import render_object

    print(" ".join(render_object(a) for a in args), file=sys.stderr, flush=True)


# --- Programs ----------------------------------------------------------------------------


class Rejected(Exception):
    """The program is refused statically (parse, well-formedness, build)."""


class Unsupported(Exception):
    """The request cannot be expressed for TVM."""


def prepare_source(text: str) -> tuple[str, dict]:
    """Run the program's top-level import lines in Python and blank them out.

    TVMScript's string parser refuses import statements; in normal use Python runs them
    and a decorator hands the parser the class or function. The names they bind are
    passed as `extra_vars`, on top of TVM's defaults (I, R, T, ...). Line numbers are
    kept. A text that is not valid Python is left as it is (TVM reports the error).
    """
    extra_vars = _default_globals()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return text, extra_vars
    lines = text.splitlines(keepends=True)
    rows: set[int] = set()
    code = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                continue  # TVMScript accepts `from __future__ import annotations`
            rows.update(range(node.lineno, node.end_lineno + 1))
            code.append(ast.get_source_segment(text, node) or "")
    if not rows:
        return text, extra_vars
    namespace = dict(extra_vars)
    try:
        exec(compile("\n".join(code) + "\n", "<program imports>", "exec"), namespace)  # noqa: S102
    except Exception as err:  # noqa: BLE001
        raise Rejected(f"import failed: {error_message(err)}") from err
    namespace.pop("__builtins__", None)
    for row in rows:
        lines[row - 1] = "\n" if lines[row - 1].endswith("\n") else ""
    return "".join(lines), namespace


def parse_program(text: str):
    """Parse and check like TVM's decorators do; returns (ir, module)."""
    source, extra_vars = prepare_source(text)
    try:
        ir = tvm.script.parse(source, extra_vars=extra_vars, check_well_formed=False)
    except Exception as err:  # noqa: BLE001
        raise Rejected(error_message(err)) from err
    if isinstance(ir, tvm.IRModule):
        mod = ir
    elif isinstance(ir, (relax.Function, tvm.tirx.PrimFunc)):
        mod = tvm.IRModule.from_expr(ir)  # under its global_symbol (the def's name)
    else:
        raise Rejected(f"the program is not a module or a function (parse gave "
                       f"{type(ir).__name__})")
    try:
        if isinstance(ir, (tvm.IRModule, relax.Function)):
            relax.analysis.well_formed(mod)
    except Exception as err:  # noqa: BLE001
        raise Rejected(f"not well-formed (Relax): {error_message(err)}") from err
    try:
        tvm.s_tir.analysis.verify_well_formed(mod)
        for func in mod.functions.values():
            if isinstance(func, tvm.tirx.PrimFunc) and not func.attrs.get("s_tir", False):
                tvm.tirx.analysis.verify_tirx_well_formed(func)
    except Exception as err:  # noqa: BLE001
        raise Rejected(f"not well-formed (TIR): {error_message(err)}") from err
    return ir, mod


# --- Values ------------------------------------------------------------------------------

_INT_DTYPES = {f"{s}int{b}" for s in ("", "u") for b in (8, 16, 32, 64)}
_FLOAT_DTYPES = {"float16", "float32", "float64"}


def _json_float(x: float):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _py_float(v) -> float:
    if isinstance(v, str):
        if v in ("nan", "inf", "-inf"):
            return float(v)
        raise Unsupported(f"float prim value {v!r}")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise Unsupported(f"float prim value {v!r}")
    return float(v)


def to_tvm(value, vm):
    """A protocol VALUE as an argument the Relax VM accepts."""
    if not isinstance(value, dict) or len(value) != 1:
        raise Unsupported(f"malformed value {json.dumps(value)[:80]}")
    (key, v), = value.items()
    if key == "tensor":
        try:
            arr = np.load(io.BytesIO(base64.b64decode(v, validate=True)), allow_pickle=False)
        except Exception as err:  # noqa: BLE001
            raise Unsupported(f"unreadable .npy tensor: {err}") from err
        # (np.ascontiguousarray would turn a 0-d array into a 1-d one)
        return tvm.runtime.tensor(np.require(arr, requirements="C"), device=tvm.cpu())
    if key == "shape":
        if not isinstance(v, list) or not all(isinstance(d, int) and not isinstance(d, bool)
                                              for d in v):
            raise Unsupported(f"malformed shape {v!r}")
        return tvm.runtime.ShapeTuple(v)
    if key == "prim":
        dtype, x = v.get("dtype"), v.get("value")
        # The VM holds R.Prim values as FFI scalars (int64, double, bool), so they go
        # as Python int, float and bool; the bit width cannot be passed (and the VM
        # does not check it: an R.Prim("int32") parameter takes any int).
        if dtype == "bool":
            if not isinstance(x, bool):
                raise Unsupported(f"bool prim value {x!r}")
            return x
        if dtype in _INT_DTYPES:
            if isinstance(x, bool) or not isinstance(x, int):
                raise Unsupported(f"{dtype} prim value {x!r}")
            return x
        if dtype in _FLOAT_DTYPES:
            return _py_float(x)
        raise Unsupported(f"prim value of dtype {dtype!r}")
    if key == "tuple":
        if not isinstance(v, list):
            raise Unsupported("malformed tuple")
        return tvm_ffi.Array([to_tvm(f, vm) for f in v]) if v else tvm_ffi.Array([])
    if key == "str":
        return str(v)
    if key == "dtype":
        try:
            return tvm_ffi.dtype(str(v))
        except Exception as err:  # noqa: BLE001
            raise Unsupported(f"data type {v!r}: {err}") from err
    if key == "global":
        try:
            return vm[str(v)]
        except Exception as err:  # noqa: BLE001
            raise Unsupported(f"global {v!r} is not a function of the VM "
                              f"({error_message(err)})") from err
    if key == "null":
        return None
    raise Unsupported(f"value kind {key!r}")


def _prim_dtype(ty) -> str | None:
    if isinstance(ty, tvm.ir.PrimType):
        try:
            return str(ty.dtype)
        except Exception:  # noqa: BLE001
            return None
    return None


def _fits(x: int, dtype: str) -> bool:
    bits = int(dtype[4:] if dtype.startswith("uint") else dtype[3:])
    if dtype.startswith("u"):
        return 0 <= x < 2**bits
    return -(2 ** (bits - 1)) <= x < 2 ** (bits - 1)


def from_tvm(x, ty=None):
    """A VM result as a protocol VALUE; `ty` is the static type of the result (the entry
    function's return type), used only to name the dtype of a prim value, which the VM
    returns as a plain Python int/float/bool."""
    if isinstance(x, tvm.runtime.Tensor):
        shape = tuple(int(d) for d in x.shape)
        if any(d < 0 for d in shape):
            raise Unsupported(f"TVM returned a {x.dtype} tensor of shape {shape}: a negative "
                              "dimension, which no .npy file can hold")
        arr = x.numpy()
        buf = io.BytesIO()
        np.save(buf, np.require(arr, requirements="C"), allow_pickle=False)
        return {"tensor": base64.b64encode(buf.getvalue()).decode("ascii")}
    if isinstance(x, tvm_ffi.Shape):
        return {"shape": [int(d) for d in x]}
    if isinstance(x, (tvm_ffi.Array, getattr(tvm_ffi, "List", tvm_ffi.Array), list, tuple)):
        fields = list(ty.fields) if isinstance(ty, tvm.ir.TupleType) else []
        if len(fields) != len(x):
            fields = [None] * len(x)
        return {"tuple": [from_tvm(e, t) for e, t in zip(x, fields)]}
    if x is None:
        return {"null": True}
    dtype = _prim_dtype(ty)
    if isinstance(x, bool):
        return {"prim": {"dtype": "bool", "value": x}}
    if isinstance(x, int):
        if dtype == "bool":  # the VM returns an R.Prim("bool") as int 0/1
            return {"prim": {"dtype": "bool", "value": bool(x)}}
        if dtype in _FLOAT_DTYPES:
            return {"prim": {"dtype": dtype, "value": _json_float(float(x))}}
        if dtype not in _INT_DTYPES or not _fits(x, dtype):
            # The VM holds every integer prim as an int64, whatever its R.Prim says
            # (an R.Prim("int32") parameter accepts 2**40): report what it holds.
            dtype = "int64"
        return {"prim": {"dtype": dtype, "value": x}}
    if isinstance(x, float):
        return {"prim": {"dtype": dtype if dtype in _FLOAT_DTYPES else "float64",
                         "value": _json_float(x)}}
    if isinstance(x, tvm_ffi.dtype):
        return {"dtype": str(x)}
    if isinstance(x, str):
        return {"str": str(x)}
    if isinstance(x, tvm.runtime.DataType):
        return {"dtype": str(x)}
    if isinstance(x, tvm_ffi.Function):
        return {"opaque": "packed function"}
    if isinstance(x, tvm.runtime.Object) and "Closure" in type(x).__name__:
        return {"opaque": "closure"}
    return {"opaque": type(x).__name__}


# --- Actions -----------------------------------------------------------------------------


def do_check(req: dict) -> dict:
    try:
        parse_program(req["program"])
    except Rejected as err:
        return {"outcome": "rejected", "message": str(err)}
    return {"outcome": "accepted"}


def do_run(req: dict) -> dict:
    entry = req.get("entry", "main")
    args = req.get("args", [])
    if not isinstance(args, list):
        raise Unsupported("`args` is not a list")
    try:
        _, mod = parse_program(req["program"])
    except Rejected as err:
        return {"outcome": "rejected", "message": str(err)}
    gvs = {gv.name_hint: gv for gv in mod.get_global_vars()}
    if entry not in gvs:
        return {"outcome": "rejected", "message": f"the module has no function `{entry}`"}
    func = mod[gvs[entry]]
    if not isinstance(func, relax.Function):
        raise Unsupported(f"`{entry}` is a PrimFunc: the VM calls Relax functions")
    try:
        if LAMBDA_LIFT:
            mod = relax.transform.LambdaLift()(mod)
        ex = relax.build(mod, target="llvm")
    except Exception as err:  # noqa: BLE001
        return {"outcome": "rejected", "message": f"build failed: {error_message(err)}"}
    try:
        # Loading links every packed function the program names (an unknown one fails
        # here, before any call).
        vm = relax.VirtualMachine(ex, tvm.cpu())
    except Exception as err:  # noqa: BLE001
        return {"outcome": "rejected", "message": f"VM load failed: {error_message(err)}"}
    tvm_args = [to_tvm(a, vm) for a in args]
    try:
        result = vm[entry](*tvm_args)
    except Exception as err:  # noqa: BLE001
        return {"outcome": "runtime-error", "message": error_message(err)}
    return {"outcome": "value", "value": from_tvm(result, func.ret_ty)}


ACTIONS = {"check": do_check, "run": do_run}


def answer(line: str) -> dict:
    try:
        req = json.loads(line)
    except ValueError as err:
        return {"id": None, "outcome": "unsupported", "reason": f"not JSON: {err}"}
    if not isinstance(req, dict):
        return {"id": None, "outcome": "unsupported", "reason": "the request is not an object"}
    rid = req.get("id")
    action = ACTIONS.get(req.get("action"))
    try:
        if action is None:
            raise Unsupported(f"action {req.get('action')!r}")
        if not isinstance(req.get("program"), str):
            raise Unsupported("the request has no program text")
        log(f"#{rid} {req.get('action')} {req.get('name', '')}")
        resp = action(req)
    except Unsupported as err:
        resp = {"outcome": "unsupported", "reason": str(err)}
    except Exception as err:  # noqa: BLE001 - an adapter fault, not a TVM verdict
        log("adapter fault:\n" + traceback.format_exc())
        resp = {"outcome": "unsupported", "reason": f"adapter fault: {error_message(err)}"}
    return {"id": rid, **resp}


def main() -> int:
    unknown = [a for a in sys.argv[1:] if a != "--lambda-lift"]
    if unknown:
        log(f"unknown arguments {unknown}; usage: adapter.py [--lambda-lift]")
        return 2
    send({
        "protocol": "relax-conformance",
        "version": PROTOCOL_VERSION,
        "implementation": "apache-tvm",
        "implementation_version": tvm.__version__,
        "dialect": DIALECT,
        "actions": sorted(ACTIONS),
    })
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line:
            continue
        send(answer(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
