#!/usr/bin/env python3
"""explore.py: send corpus files through the TVM adapter and compare with the corpus.

A stand-in for `oracle conform` while exploring (FINDINGS.md was made with it):

    .venv-tvm/bin/python conformance/adapters/tvm/explore.py [PATH ...] [-j N]
        [--adapter CMD] [--oracle BIN] [--no-check] [--no-run] [--json OUT]

For each `.rx` file under PATH (default corpus/): the tvm-0.27 text is the file after
`scripts/tvm-parse-check`'s rewrites (its import lines put back at the top); a `check`
request is compared with `oracle check FILE` (exit 0: accepted; otherwise rejected),
and each `run:` line becomes a `run` request whose arguments are the call's `.rx`
literals in the protocol's VALUE encoding, compared with the line's `expect:`. N adapter
processes serve the files (one per worker; restarted after a crash).

Needs numpy (run it with the TVM virtualenv's Python). Prints one line per
disagreement and a summary; --json writes every request and response.
"""

from __future__ import annotations

import argparse
import ast
import base64
import concurrent.futures
import importlib.machinery
import importlib.util
import io
import json
import math
import os
import re
import select
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent.parent
DEFAULT_ADAPTER = f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'adapter.py'))}"


def _load_rewriter():
    path = REPO / "scripts" / "tvm-parse-check"
    loader = importlib.machinery.SourceFileLoader("tvm_parse_check", str(path))
    spec = importlib.util.spec_from_loader("tvm_parse_check", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod.rewrite_source


rewrite_source = _load_rewriter()


def tvm_text(src: str) -> str:
    """The file in the tvm-0.27 dialect: tvm-parse-check's rewrites, with the import
    lines put back where they were (so positions in TVM's messages are the file's),
    or at the top when the rewrite wrapped the file in a module class."""
    rw = rewrite_source(src)
    if not rw["imports"]:
        return rw["source"]
    if rw["wrapped"]:
        return rw["imports"] + rw["source"]
    rows = sorted(
        row
        for node in ast.parse(src).body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for row in range(node.lineno, node.end_lineno + 1)
    )
    lines = rw["source"].splitlines(keepends=True)
    for row, line in zip(rows, rw["imports"].splitlines(keepends=True)):
        lines[row - 1] = line
    return "".join(lines)


# --- Metadata ----------------------------------------------------------------------------


def metadata(src: str) -> dict:
    md = {"rules": [], "runs": [], "static": [], "tolerance": None}
    lines = src.splitlines()
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines) or lines[i].strip() != "# ---":
        return md
    pending = None
    for line in lines[i + 1:]:
        t = line.strip()
        if t == "# ---" or not t.startswith("#"):
            break
        body = t[1:].strip()
        if ":" not in body:
            continue
        key, value = body.split(":", 1)
        key, value = key.strip(), value.strip()
        if key == "rules":
            md["rules"] = [r.strip() for r in value.strip("[]").split(",") if r.strip()]
        elif key == "tolerance":
            md["tolerance"] = float(value)
        elif key == "run":
            pending = value
        elif key == "expect":
            if pending is not None:
                md["runs"].append((pending, value))
                pending = None
            else:
                md["static"].append(value)
    return md


# --- .rx literals -> protocol values -----------------------------------------------------


def npy_b64(arr: np.ndarray) -> str:
    buf = io.BytesIO()
    np.save(buf, np.require(arr, requirements="C"), allow_pickle=False)
    return base64.b64encode(buf.getvalue()).decode("ascii")


class NotLiteral(Exception):
    pass


def _const_data(node):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_const_data(node.operand)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
        return _const_data(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_const_data(e) for e in node.elts]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "float" and len(node.args) == 1):
        return float(_const_data(node.args[0]))
    raise NotLiteral(ast.unparse(node))


def _dotted(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return _dotted(node.value) + "." + node.attr
    return ""


def literal(node) -> dict:
    """An `.rx` literal (R.const, R.shape, R.prim_value, R.str, R.dtype, tuples,
    R.null_value, a global's name) as a protocol VALUE."""
    if isinstance(node, ast.Tuple):
        return {"tuple": [literal(e) for e in node.elts]}
    if isinstance(node, ast.Name):
        return {"global": node.id}
    if not isinstance(node, ast.Call):
        raise NotLiteral(ast.unparse(node))
    fn = _dotted(node.func)
    args = node.args
    kw = {k.arg: k.value for k in node.keywords}
    if fn == "R.const":
        data = _const_data(args[0])
        dtype_node = args[1] if len(args) > 1 else kw.get("dtype")
        dtype = _const_data(dtype_node) if dtype_node is not None else None
        if dtype is None:
            dtype = "float32" if isinstance(data, float) else "int32" if isinstance(
                data, int) and not isinstance(data, bool) else None
        arr = np.array(data, dtype=dtype)
        if "shape" in kw:
            arr = arr.reshape([int(d) for d in _const_data(kw["shape"])])
        if arr.size == 0 and arr.ndim == 1 and dtype is None:
            raise NotLiteral("untyped empty constant")
        return {"tensor": npy_b64(arr)}
    if fn == "R.shape":
        return {"shape": [int(d) for d in _const_data(args[0])]}
    if fn == "R.tuple":
        return {"tuple": [literal(e) for e in args]}
    if fn == "R.str":
        return {"str": _const_data(args[0])}
    if fn == "R.dtype":
        return {"dtype": _const_data(args[0])}
    if fn == "R.null_value":
        return {"null": True}
    if fn == "R.prim_value":
        inner = args[0]
        if isinstance(inner, ast.Call) and _dotted(inner.func).startswith("T."):
            dtype = _dotted(inner.func)[2:]
            value = _const_data(inner.args[0])
        else:
            value = _const_data(inner)
            dtype = ("bool" if isinstance(value, bool) else
                     "int64" if isinstance(value, int) else "float64")
        if dtype == "bool":
            value = bool(value)
        elif dtype.startswith("float"):
            value = float(value)
            if math.isnan(value) or math.isinf(value):
                value = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return {"prim": {"dtype": dtype, "value": value}}
    raise NotLiteral(ast.unparse(node))


def parse_call(text: str) -> tuple[str, list]:
    node = ast.parse(text, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise NotLiteral(text)
    return node.func.id, [literal(a) for a in node.args]


def parse_value(text: str) -> dict:
    return literal(ast.parse(text, mode="eval").body)


# --- Comparing values --------------------------------------------------------------------


def load_npy(b64: str) -> np.ndarray:
    return np.load(io.BytesIO(base64.b64decode(b64)), allow_pickle=False)


def show(value, limit=120) -> str:
    def go(v):
        (k, x), = v.items()
        if k == "tensor":
            a = load_npy(x)
            return f"tensor<{a.dtype}{list(a.shape)}>{np.array2string(a, threshold=8)}"
        if k == "tuple":
            return "(" + ", ".join(go(e) for e in x) + ")"
        if k == "prim":
            return f"prim<{x['dtype']}>{x['value']}"
        return f"{k}:{x}"
    s = " ".join(go(value).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def same(expected, got, tol) -> tuple[bool, str]:
    (ek, ev), = expected.items()
    if not isinstance(got, dict) or len(got) != 1:
        return False, "malformed"
    (gk, gv), = got.items()
    if ek != gk:
        return False, f"{ek} vs {gk}"
    if ek == "tensor":
        a, b = load_npy(ev), load_npy(gv)
        if a.dtype != b.dtype:
            return False, f"dtype {a.dtype} vs {b.dtype}"
        if a.shape != b.shape:
            return False, f"shape {a.shape} vs {b.shape}"
        if a.dtype.kind == "f":
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            if not np.array_equal(np.isnan(a64), np.isnan(b64)):
                return False, "NaN positions"
            m = ~np.isnan(a64)
            if not np.array_equal(a64[m & np.isinf(a64)], b64[m & np.isinf(a64)]):
                return False, "inf values"
            fin = m & ~np.isinf(a64)
            scale = max(1.0, float(np.max(np.abs(a64[fin]), initial=0.0)))
            t = 1e-5 if tol is None else tol
            if np.any(np.abs(a64[fin] - b64[fin]) > t * scale):
                return False, "values"
            return True, ""
        return (True, "") if np.array_equal(a, b) else (False, "values")
    if ek == "tuple":
        if len(ev) != len(gv):
            return False, f"tuple arity {len(ev)} vs {len(gv)}"
        for i, (x, y) in enumerate(zip(ev, gv)):
            ok, why = same(x, y, tol)
            if not ok:
                return False, f"field {i}: {why}"
        return True, ""
    if ek == "prim":
        if ev["dtype"] != gv["dtype"]:
            return False, f"prim dtype {ev['dtype']} vs {gv['dtype']}"
        x, y = ev["value"], gv["value"]
        if isinstance(x, float) and isinstance(y, (int, float)):
            return (abs(x - y) <= (tol or 1e-5) * max(1, abs(x))), "value"
        return (x == y, "value")
    return (ev == gv, "value")


# --- Driving the adapter -----------------------------------------------------------------


class Adapter:
    def __init__(self, cmd: str):
        self.cmd = cmd
        self.proc = None
        self.next_id = 1
        self.stderr = b""

    def start(self):
        self.proc = subprocess.Popen(["sh", "-c", self.cmd], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        hs = self.proc.stdout.readline()
        if not hs:
            raise RuntimeError("no handshake")
        return json.loads(hs)

    def ask(self, req: dict, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        req = {"id": self.next_id, **req}
        self.next_id += 1
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            self.proc = None
            return {"outcome": "crash", "message": "broken pipe"}
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            return {"outcome": "timeout", "message": f"no answer within {timeout:g} s"}
        line = self.proc.stdout.readline()
        if not line:
            rc = self.proc.wait()
            self.proc = None
            return {"outcome": "crash", "message": f"exit {rc}"}
        resp = json.loads(line)
        if resp.get("id") != req["id"]:
            return {"outcome": "protocol-error", "message": line.decode()[:200]}
        return resp

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()


def oracle_check(oracle: str, path: Path) -> tuple[str, str]:
    p = subprocess.run([oracle, "check", str(path)], capture_output=True, text=True,
                       timeout=120)
    if p.returncode == 0:
        return "accepted", ""
    m = re.search(r"error\[([^\]]+)\]", p.stderr)
    return "rejected", (m.group(1) if m else p.stderr.strip().splitlines()[0][:80])


def explore_file(path: Path, args) -> list[dict]:
    src = path.read_text(encoding="utf-8")
    md = metadata(src)
    text = tvm_text(src)
    name = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)
    rows = []
    ad = _thread_adapter(args.adapter)
    if True:
        if not args.no_check:
            want, rule = oracle_check(args.oracle, path)
            got = ad.ask({"action": "check", "name": name, "program": text}, args.timeout)
            rows.append({"file": name, "action": "check", "rules": md["rules"],
                         "expected": want + (f" {rule}" if rule else ""), "response": got,
                         "agree": got["outcome"] == want})
        if not args.no_run:
            for call, expect in md["runs"]:
                row = {"file": name, "action": "run", "call": call, "expect": expect,
                       "rules": md["rules"]}
                try:
                    entry, vals = parse_call(call)
                    want = (("error", expect.split()[1]) if expect.startswith("error ")
                            else ("value", parse_value(expect)))
                except (NotLiteral, SyntaxError, ValueError, TypeError, IndexError) as err:
                    row.update(response={"outcome": "skipped", "message": f"literal: {err}"},
                               agree=None, expected=expect)
                    rows.append(row)
                    continue
                got = ad.ask({"action": "run", "name": name, "program": text,
                              "entry": entry, "args": vals, "fuel": 1000000}, args.timeout)
                if want[0] == "error":
                    agree = got["outcome"] == "runtime-error" or (
                        want[1] in ("FuelExhausted", "StackExhausted")
                        and got["outcome"] == "timeout")
                    why = ""
                elif got["outcome"] == "value":
                    agree, why = same(want[1], got["value"], md["tolerance"])
                else:
                    agree, why = False, ""
                row.update(expected=expect, response=got, agree=agree, why=why)
                rows.append(row)
    return rows


_local = threading.local()
_all_adapters: list = []


def _thread_adapter(cmd: str) -> "Adapter":
    """One adapter process per worker thread, restarted after a crash."""
    ad = getattr(_local, "adapter", None)
    if ad is None:
        ad = _local.adapter = Adapter(cmd)
        _all_adapters.append(ad)
    return ad


def describe(row) -> str:
    r = row["response"]
    if r["outcome"] == "value":
        got = "value " + show(r["value"])
    else:
        got = r["outcome"] + ": " + (r.get("message") or r.get("reason") or "")
    head = f"{row['file']} [{row['action']}"
    if row["action"] == "run":
        head += f" {row['call'][:60]}"
    head += "]"
    extra = f" ({row['why']})" if row.get("why") else ""
    return f"{head}\n    want {row['expected']}\n    got  {got[:300]}{extra}"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", default=[str(REPO / "corpus")])
    ap.add_argument("-j", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--adapter", default=DEFAULT_ADAPTER)
    ap.add_argument("--oracle", default=str(REPO / "target" / "release" / "oracle"))
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--no-run", action="store_true")
    ap.add_argument("--runs-only", action="store_true",
                    help="only files with run: lines")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if not args.no_check and not Path(args.oracle).exists():
        print(f"explore.py: no oracle at {args.oracle} (cargo build --release -p oracle, "
              "or --oracle PATH)", file=sys.stderr)
        return 2
    files = []
    for p in args.paths:
        p = Path(p)
        files.extend(sorted(p.rglob("*.rx")) if p.is_dir() else [p])
    files = [f.resolve() for f in files]
    if args.runs_only:
        files = [f for f in files if metadata(f.read_text())["runs"]]
    rows = []
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        for result in pool.map(lambda f: explore_file(f, args), files):
            rows.extend(result)
            for row in result:
                if row["agree"] is False or row["agree"] is None:
                    print(describe(row), flush=True)
    counts = {}
    for row in rows:
        key = (row["action"], {True: "agree", False: "DIFFER", None: "skipped"}[row["agree"]])
        counts[key] = counts.get(key, 0) + 1
    print(f"\n{len(files)} files; " + ", ".join(f"{a} {v}: {n}" for (a, v), n in
                                              sorted(counts.items())))
    for ad in _all_adapters:
        ad.close()
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
