#!/usr/bin/env python3
"""selftest.py: start the TVM adapter and check that it speaks the protocol.

    .venv-tvm/bin/python conformance/adapters/tvm/selftest.py [--adapter CMD] [-v]

The adapter runs as a subprocess (`sh -c CMD`; default: this Python and adapter.py next
to this file). Checked: the handshake; `check` accepting a module, a lone function and
a PrimFunc, and rejecting a parse error, an ill-formed program and a type error; `run`
returning a tensor (0-d and 2-d), a shape, a nested tuple, prim values (int64, float32,
bool), a string, a closure (opaque), taking a global function, a tuple and a prim
value as arguments; a run-time error; a build failure; that output printed by TVM's
C++ code, by compiled TIR code (a `write(1, ...)` syscall) and by Python (`R.print`)
never reaches the protocol stream (it must show on the adapter's stderr instead, so
the test sees it was printed); malformed requests answered, not fatal; and that the
process exits when its input closes. Exit status 0 when everything passes.
Needs numpy (use the TVM virtualenv's Python).
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import select
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_ADAPTER = f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'adapter.py'))}"
TIMEOUT = 120.0

HEADER = """from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

"""

MODULE = HEADER + """@I.ir_module
class Module:
    @R.function
    def add(x: R.Tensor((2, 3), "float32"), y: R.Tensor((3,), "float32")) -> R.Tensor((2, 3), "float32"):
        z = R.add(x, y)
        return z

    @R.function
    def scalar(x: R.Tensor((), "int64")) -> R.Tensor((), "int64"):
        y = R.multiply(x, R.const(3, "int64"))
        return y

    @R.function
    def shape(x: R.Tensor(("n", "m"), "int32")) -> R.Shape(ndim=2):
        n = T.int64()
        m = T.int64()
        return R.shape([m, n + 1])

    @R.function
    def tup(x: R.Tensor((2,), "int32"), s: R.Shape(ndim=1)) -> R.Tuple(R.Tensor((2,), "int32"), R.Tuple(R.Shape(ndim=1), R.Prim("int64")), R.Tuple):
        n = T.int64()
        s1 = R.match_cast(s, R.Shape([n]))
        return (x, (s1, R.prim_value(n)), R.tuple())

    @R.function
    def prims(a: R.Prim("int64"), b: R.Prim("float32"), c: R.Prim("bool")) -> R.Tuple(R.Prim("int64"), R.Prim("float32"), R.Prim("bool")):
        return (a, b, c)

    @R.function
    def take_tuple(t: R.Tuple(R.Tensor((2,), "int32"), R.Prim("int64"))) -> R.Tensor((2,), "int32"):
        x = t[0]
        return x

    @R.function
    def string() -> R.Object:
        return R.str("hello")

    @R.function
    def inc(x: R.Tensor((), "int32")) -> R.Tensor((), "int32"):
        y = R.add(x, R.const(1, "int32"))
        return y

    @R.function
    def apply(f: R.Callable([R.Tensor((), "int32")], R.Tensor((), "int32")), x: R.Tensor((), "int32")) -> R.Tensor((), "int32"):
        y = f(x)
        return y

    @R.function
    def get_inc() -> R.Callable([R.Tensor((), "int32")], R.Tensor((), "int32")):
        return Module.inc

    @R.function
    def cast_fails(x: R.Tensor(ndim=1, dtype="int32")) -> R.Tensor((3,), "int32"):
        y = R.match_cast(x, R.Tensor((3,), "int32"))
        return y
"""

LONE_FUNCTION = HEADER + """@R.function
def main(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
    y = R.multiply(x, x)
    return y
"""

PRIM_FUNC = HEADER + """@T.prim_func(s_tir=True)
def copy(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.sblock("copy"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
"""

PARSE_ERROR = HEADER + """@R.function
def main(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
    y = R.add(x, undefined_name)
    return y
"""

TYPE_ERROR = HEADER + """@R.function
def main(x: R.Tensor((2,), "float32"), y: R.Tensor((3,), "float32")) -> R.Tensor((2,), "float32"):
    z = R.add(x, y)
    return z
"""

# R.print is impure: in a pure function TVM's well-formedness check refuses it.
ILL_FORMED = HEADER + """@R.function
def main(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
    R.print(x)
    return x
"""

BUILD_FAILS = HEADER + """@R.function
def main(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
    y = R.call_pure_packed("selftest.no_such_function", x, ty_args=R.Tensor((2,), "float32"))
    return y
"""

# Garbage on fd 1 from compiled code (a write syscall inside a PrimFunc) and from Python
# (R.print prints with Python's print).
NOISY = HEADER + """@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def noisy(A: T.Buffer((2,), "int32"), B: T.Buffer((2,), "int32")):
        T.evaluate(T.call_extern("int64", "write", 1, "GARBAGE-FROM-TIR\\n", 17))
        for i in range(2):
            with T.sblock("B"):
                vi = T.axis.spatial(2, i)
                B[vi] = A[vi] + 1

    @R.function(pure=False)
    def main(x: R.Tensor((2,), "int32")) -> R.Tensor((2,), "int32"):
        R.print(x, format="GARBAGE-FROM-R.print {}")
        y = R.call_tir(Module.noisy, (x,), out_ty=R.Tensor((2,), "int32"))
        return y
"""


def npy(arr: np.ndarray) -> dict:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return {"tensor": base64.b64encode(buf.getvalue()).decode("ascii")}


def unnpy(value: dict) -> np.ndarray:
    return np.load(io.BytesIO(base64.b64decode(value["tensor"])), allow_pickle=False)


class Failure(Exception):
    pass


class Adapter:
    def __init__(self, cmd: str, stderr_path: Path):
        self.stderr_file = open(stderr_path, "wb")  # noqa: SIM115
        self.stderr_path = stderr_path
        self.proc = subprocess.Popen(["sh", "-c", cmd], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr_file)
        self.next_id = 1
        self.raw_lines: list[bytes] = []

    def readline(self) -> bytes:
        ready, _, _ = select.select([self.proc.stdout], [], [], TIMEOUT)
        if not ready:
            raise Failure(f"no line from the adapter within {TIMEOUT:g} s")
        line = self.proc.stdout.readline()
        if not line:
            raise Failure(f"the adapter closed its output (exit {self.proc.wait()}); stderr "
                          f"ends with: {self.stderr_tail()}")
        self.raw_lines.append(line)
        return line

    def read_json(self) -> dict:
        line = self.readline()
        if not line.endswith(b"\n"):
            raise Failure(f"a protocol line without its newline: {line[:200]!r}")
        try:
            obj = json.loads(line)
        except ValueError:
            raise Failure(f"not a JSON line on stdout: {line[:200]!r}") from None
        if not isinstance(obj, dict):
            raise Failure(f"not a JSON object on stdout: {line[:200]!r}")
        return obj

    def send_raw(self, text: str) -> None:
        self.proc.stdin.write(text.encode("utf-8"))
        self.proc.stdin.flush()

    def ask(self, request: dict) -> dict:
        request = {"id": self.next_id, **request}
        self.next_id += 1
        self.send_raw(json.dumps(request) + "\n")
        resp = self.read_json()
        if resp.get("id") != request["id"]:
            raise Failure(f"response id {resp.get('id')!r} for request {request['id']}")
        return resp

    def stderr_text(self) -> str:
        self.stderr_file.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def stderr_tail(self) -> str:
        return " | ".join(self.stderr_text().strip().splitlines()[-3:])

    def close(self) -> int:
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise Failure("the adapter did not exit after its input closed") from None
        rest = self.proc.stdout.read()
        if rest:
            self.raw_lines.append(rest)
            raise Failure(f"output after the last response: {rest[:200]!r}")
        self.stderr_file.close()
        return rc


def expect(cond: bool, what: str) -> None:
    if not cond:
        raise Failure(what)


def outcome(resp: dict, want: str) -> dict:
    if resp.get("outcome") != want:
        raise Failure(f"outcome {resp.get('outcome')!r}, wanted {want!r}: "
                      f"{json.dumps(resp)[:400]}")
    return resp


def run_tests(cmd: str, verbose: bool) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="tvm-adapter-selftest-"))
    ad = Adapter(cmd, tmp / "stderr.txt")
    results: list[tuple[str, str | None]] = []

    def test(name):
        def deco(fn):
            t0 = time.monotonic()
            try:
                fn()
            except Failure as err:
                results.append((name, str(err)))
                print(f"FAIL {name}: {err}", flush=True)
            except Exception as err:  # noqa: BLE001
                results.append((name, f"{type(err).__name__}: {err}"))
                print(f"FAIL {name}: {type(err).__name__}: {err}", flush=True)
            else:
                results.append((name, None))
                if verbose:
                    print(f"ok   {name} ({time.monotonic() - t0:.1f} s)", flush=True)
            return fn
        return deco

    hs: dict = {}

    @test("handshake")
    def _():
        hs.update(ad.read_json())
        expect(hs.get("protocol") == "relax-conformance", f"protocol {hs.get('protocol')!r}")
        expect(hs.get("version") == 1, f"version {hs.get('version')!r}")
        expect(hs.get("implementation") == "apache-tvm", f"{hs.get('implementation')!r}")
        expect(hs.get("dialect") == "tvm-0.27", f"dialect {hs.get('dialect')!r}")
        expect(sorted(hs.get("actions", [])) == ["check", "run"], f"{hs.get('actions')!r}")
        v = hs.get("implementation_version", "")
        expect(isinstance(v, str) and v.startswith("0.27"), f"implementation_version {v!r}")

    if not hs:
        ad.proc.kill()
        print("FAIL: no handshake, nothing else tested")
        return 1

    def check(program, name="selftest"):
        return ad.ask({"action": "check", "name": name, "program": program})

    def run(program, entry, args, name="selftest"):
        return ad.ask({"action": "run", "name": name, "program": program, "entry": entry,
                       "args": args, "fuel": 1000})

    @test("check accepts a module")
    def _():
        outcome(check(MODULE), "accepted")

    @test("check accepts a lone top-level function")
    def _():
        outcome(check(LONE_FUNCTION), "accepted")

    @test("check accepts a lone PrimFunc")
    def _():
        outcome(check(PRIM_FUNC), "accepted")

    @test("check rejects an undefined name, with TVM's message")
    def _():
        r = outcome(check(PARSE_ERROR), "rejected")
        expect("undefined_name" in r.get("message", ""), f"message {r.get('message')!r}")

    @test("check rejects a type error (shapes (2,) and (3,) do not broadcast)")
    def _():
        r = outcome(check(TYPE_ERROR), "rejected")
        expect(bool(r.get("message")), "no message")
        expect(len(r["message"]) <= 400, "message not trimmed")

    @test("check rejects an ill-formed program (impure call in a pure function)")
    def _():
        r = outcome(check(ILL_FORMED), "rejected")
        expect("well-formed" in r.get("message", ""), f"message {r.get('message')!r}")

    @test("check rejects text that is not Python")
    def _():
        outcome(check("@R.function\ndef main(:\n"), "rejected")

    @test("run returns a 2-d float32 tensor")
    def _():
        x = np.arange(6, dtype="float32").reshape(2, 3)
        y = np.array([10, 20, 30], dtype="float32")
        r = outcome(run(MODULE, "add", [npy(x), npy(y)]), "value")
        got = unnpy(r["value"])
        expect(got.dtype == np.float32 and got.shape == (2, 3), f"{got.dtype} {got.shape}")
        expect(np.array_equal(got, x + y), f"values {got}")

    @test("run returns a 0-d tensor (and takes one)")
    def _():
        r = outcome(run(MODULE, "scalar", [npy(np.array(7, dtype="int64"))]), "value")
        got = unnpy(r["value"])
        expect(got.shape == () and got.dtype == np.int64 and int(got) == 21,
               f"{got.dtype} {got.shape} {got}")

    @test("run on a lone top-level function")
    def _():
        r = outcome(run(LONE_FUNCTION, "main", [npy(np.array([1.5, -2], "float32"))]), "value")
        expect(np.array_equal(unnpy(r["value"]), np.array([2.25, 4], "float32")), str(r))

    @test("run returns a shape")
    def _():
        r = outcome(run(MODULE, "shape", [npy(np.zeros((4, 5), "int32"))]), "value")
        expect(r["value"] == {"shape": [5, 5]}, json.dumps(r["value"]))

    @test("run returns a nested tuple (tensor, (shape, int64 prim), ())")
    def _():
        x = np.array([3, 4], dtype="int32")
        r = outcome(run(MODULE, "tup", [npy(x), {"shape": [9]}]), "value")
        v = r["value"]
        expect(set(v) == {"tuple"} and len(v["tuple"]) == 3, json.dumps(v)[:200])
        expect(np.array_equal(unnpy(v["tuple"][0]), x), "field 0")
        expect(v["tuple"][1] == {"tuple": [{"shape": [9]},
                                           {"prim": {"dtype": "int64", "value": 9}}]},
               f"field 1: {v['tuple'][1]}")
        expect(v["tuple"][2] == {"tuple": []}, f"field 2: {v['tuple'][2]}")

    @test("run passes and returns prim values (int64, float32, bool)")
    def _():
        args = [{"prim": {"dtype": "int64", "value": -5}},
                {"prim": {"dtype": "float32", "value": 2.5}},
                {"prim": {"dtype": "bool", "value": True}}]
        r = outcome(run(MODULE, "prims", args), "value")
        expect(r["value"] == {"tuple": args}, json.dumps(r["value"]))

    @test("run passes a nan float prim value")
    def _():
        args = [{"prim": {"dtype": "int64", "value": 0}},
                {"prim": {"dtype": "float32", "value": "nan"}},
                {"prim": {"dtype": "bool", "value": False}}]
        r = outcome(run(MODULE, "prims", args), "value")
        expect(r["value"] == {"tuple": args}, json.dumps(r["value"]))

    @test("run takes a tuple argument")
    def _():
        x = np.array([7, 8], dtype="int32")
        r = outcome(run(MODULE, "take_tuple",
                        [{"tuple": [npy(x), {"prim": {"dtype": "int64", "value": 1}}]}]), "value")
        expect(np.array_equal(unnpy(r["value"]), x), str(r))

    @test("run returns a string")
    def _():
        r = outcome(run(MODULE, "string", []), "value")
        expect(r["value"] == {"str": "hello"}, json.dumps(r["value"]))

    @test("run takes a global function as an argument")
    def _():
        r = outcome(run(MODULE, "apply", [{"global": "inc"}, npy(np.array(41, "int32"))]),
                    "value")
        expect(int(unnpy(r["value"])) == 42, str(r))

    @test("run returns a function as opaque")
    def _():
        r = outcome(run(MODULE, "get_inc", []), "value")
        expect(set(r["value"]) == {"opaque"}, json.dumps(r["value"]))

    @test("run reports a run-time error (a failing match_cast)")
    def _():
        r = outcome(run(MODULE, "cast_fails", [npy(np.array([1, 2], "int32"))]),
                    "runtime-error")
        expect(bool(r.get("message")), "no message")

    @test("run reports a wrong argument as a run-time error")
    def _():
        r = outcome(run(MODULE, "scalar", [npy(np.array([1.0], "float32"))]), "runtime-error")
        expect(bool(r.get("message")), "no message")

    @test("run reports a program that fails to build as rejected")
    def _():
        r = outcome(run(BUILD_FAILS, "main", [npy(np.zeros(2, "float32"))]), "rejected")
        expect("no_such_function" in r.get("message", ""), f"message {r.get('message')!r}")

    @test("run of an ill-formed program is rejected")
    def _():
        outcome(run(TYPE_ERROR, "main", [npy(np.zeros(2, "float32")),
                                         npy(np.zeros(3, "float32"))]), "rejected")

    @test("run of an unknown entry is rejected")
    def _():
        outcome(run(LONE_FUNCTION, "nope", []), "rejected")

    @test("an unknown value kind is unsupported")
    def _():
        outcome(run(MODULE, "scalar", [{"quaternion": [1, 2, 3, 4]}]), "unsupported")

    @test("garbage printed by compiled TIR code and by R.print never reaches stdout")
    def _():
        r = outcome(run(NOISY, "main", [npy(np.array([1, 2], "int32"))]), "value")
        expect(np.array_equal(unnpy(r["value"]), np.array([2, 3], "int32")), str(r))
        # The garbage was printed (on stderr) ...
        deadline = time.monotonic() + 10
        err = ad.stderr_text()
        while ("GARBAGE-FROM-TIR" not in err or "GARBAGE-FROM-R.print" not in err) and (
                time.monotonic() < deadline):
            time.sleep(0.1)
            err = ad.stderr_text()
        expect("GARBAGE-FROM-TIR" in err, "the TIR write(1, ...) did not show on stderr")
        expect("GARBAGE-FROM-R.print" in err, "R.print's output did not show on stderr")
        # ... and every stdout line so far is one JSON object.
        for line in ad.raw_lines:
            expect(b"GARBAGE" not in line, f"garbage on stdout: {line[:100]!r}")

    @test("a request that is not JSON is answered, and the adapter goes on")
    def _():
        ad.send_raw("this is not json\n")
        r = ad.read_json()
        expect(r.get("outcome") == "unsupported", json.dumps(r))
        outcome(check(LONE_FUNCTION), "accepted")

    @test("an unknown action is unsupported")
    def _():
        outcome(ad.ask({"action": "fmt", "name": "x", "program": LONE_FUNCTION}),
                "unsupported")

    @test("the adapter exits 0 when its input closes; stdout held only protocol lines")
    def _():
        rc = ad.close()
        expect(rc == 0, f"exit status {rc}")
        for line in ad.raw_lines:
            obj = json.loads(line)
            expect(isinstance(obj, dict), f"not an object: {line[:100]!r}")

    if ad.proc.poll() is None:
        ad.proc.kill()
    failed = [n for n, e in results if e is not None]
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed"
          f" ({hs.get('implementation')} {hs.get('implementation_version')});"
          f" adapter stderr: {ad.stderr_path}")
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--adapter", default=DEFAULT_ADAPTER, help="the command (sh -c)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print passing tests too")
    args = ap.parse_args(argv)
    return run_tests(args.adapter, args.verbose)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
