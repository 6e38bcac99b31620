"""An adversarial run against the user-facing API: every NumPy scalar type and
every odd value a user can pass, through the operators, a sample of ufuncs,
reductions, indexing, creation functions, random, sort, linalg, fft and
kernel launches. Each case is compared with what NumPy does on the same host
array: NumPy's answer (dtype and values, NaN-aware), or an exception where
NumPy raises too, or a clear TypeError/ValueError where pygpu cannot hold
the dtype. A crash, a hang, a wrong value or an exception that does not say
what was expected (AttributeError, KeyError, SystemError, ...) fails.

The cases run in child processes (a few hundred each), so that a segfault or
a hang is caught and named, and the run goes on after it."""

import faulthandler
import operator
import os
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from fractions import Fraction

import numpy as np

import pygpu

# ---------------------------------------------------------------------------
# the odd operands

DTYPES = [np.float64, np.float32, np.float16, np.complex64, np.bool_, np.int8,
          np.uint64, np.int64]


def _scalars():
    out = [np.longdouble(1.5), np.clongdouble(1 + 2j), np.float16(2),
           np.datetime64("2020"), np.timedelta64(1, "s"), np.str_("a"), np.bytes_(b"a"),
           np.void(b"a"), np.array([1, 2], dtype=object), np.int8(-3), np.uint64(2**64 - 1),
           np.uint8(200), np.float32("nan"), np.complex64(1j), np.bool_(True)]
    out += [None, [], {}, "x", b"x", 2**64, -2**63 - 1, 2**200, float("nan"),
            float("inf"), -0.0, complex("nan+infj"), True, Fraction(1, 3), Decimal("1.5"),
            [1, 2, 3, 4, 5, 6], (2,), 3, 2.5, 0, -1, 0.0, np.int64(-2**63), np.uint8(0),
            np.float16("inf")]
    for dt in ["f8", "f4", "e", "c8", "?", "i1", "u8", "g", "G", "O", "M8[s]", "m8[s]", "U1"]:
        out.append(np.array(1 if dt not in ("U1",) else "a", dtype=dt))
    return out


SCALARS = _scalars()

# ---------------------------------------------------------------------------
# judging


class Unexpected(Exception):
    pass


BAD_EXCEPTIONS = (AttributeError, KeyError, SystemError, NameError, UnboundLocalError,
                  AssertionError, RecursionError)
UNSUPPORTED_WORDS = ("dtype", "float128", "complex256", "longdouble", "object", "str",
                     "datetime", "timedelta", "bytes", "void", "supported", "not support",
                     "cannot", "must be", "expected", "unsupported", "not supported",
                     "host data", "host memory", "copy it to the device", "implicitly",
                     # a[1] = [] in a bool array: NumPy stores the list's truth
                     "array element with a sequence")


def host(v):
    if isinstance(v, pygpu.DeviceArray):
        return v.copy_to_host()
    if isinstance(v, tuple):
        return tuple(host(x) for x in v)
    if isinstance(v, list):
        return [host(x) for x in v]
    return v


def _same(got, want):
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return f"got {type(got).__name__}, NumPy a tuple of {len(want)}"
        for g, w in zip(got, want, strict=True):
            d = _same(g, w)
            if d:
                return d
        return None
    if want is None or isinstance(want, (bool, str)):
        return None if got == want else f"got {got!r}, NumPy {want!r}"
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype != w.dtype or g.shape != w.shape:
        return f"got {g.dtype}{g.shape}, NumPy {w.dtype}{w.shape}"
    if w.dtype.kind in "fc":
        tol = {2: 1e-2, 4: 1e-5, 8: 1e-5, 16: 1e-12}.get(w.dtype.itemsize, 1e-12)
        ok = np.allclose(g.astype(w.dtype), w, rtol=tol, atol=tol, equal_nan=True)
        if ok:  # NaN / inf / signed zero in the same places
            ok = np.array_equal(np.isnan(g), np.isnan(w)) and np.array_equal(np.isinf(g),
                                                                            np.isinf(w))
    else:
        ok = np.array_equal(g, w)
    return None if ok else f"got {g!r}, NumPy {w!r}"


def run(fn):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return "ok", fn()
    except Exception as e:  # noqa: BLE001  (every exception is judged)
        return "raised", e


def judge(dev_fn, host_fn):
    """None if the outcome is acceptable, else what is wrong."""
    want = run(host_fn) if host_fn is not None else ("raised", None)
    got = run(dev_fn)
    if got[0] == "raised":
        e = got[1]
        if isinstance(e, BAD_EXCEPTIONS) or not str(e).strip():
            return f"raised {type(e).__name__}: {e}"
        msg = str(e)
        if want[0] == "raised" and type(want[1]) is type(e) and str(want[1]) == msg:
            return None  # NumPy's own words
        if "'NoneType' object" in msg or "internal" in msg.lower() or "not iterable" in msg:
            return f"raised {type(e).__name__}: {e}"
        if want[0] == "raised":
            return None
        if isinstance(e, (TypeError, ValueError, OverflowError)) and \
                getattr(want[1], "dtype", None) is np.dtype(object):
            return None  # NumPy's answer is an object array: pygpu has none
        if isinstance(e, (TypeError, ValueError, NotImplementedError, OverflowError,
                          pygpu.linalg.LinAlgError)) and any(
                w in msg for w in UNSUPPORTED_WORDS):
            return None
        return f"raised {type(e).__name__}: {e}; NumPy answers {want[1]!r}"
    try:
        g = host(got[1])
    except Exception as e:  # noqa: BLE001
        return f"answered something unreadable: {type(e).__name__}: {e}"
    if want[0] == "raised":
        if host_fn is None:
            return None
        return f"NumPy raises {type(want[1]).__name__} ({want[1]}), pygpu answered {g!r}"
    return _same(g, want[1])


# ---------------------------------------------------------------------------
# the cases: each a (label, device fn, host fn) made on demand from its index


def _arr(dt, shape=(6,)):
    h = np.arange(int(np.prod(shape))).astype(dt).reshape(shape)
    return h, pygpu.asarray(h)


BINARY = [
    ("+", operator.add), ("-", operator.sub), ("*", operator.mul), ("/", operator.truediv),
    ("//", operator.floordiv), ("%", operator.mod), ("**", operator.pow), ("divmod", divmod),
    ("@", operator.matmul), ("&", operator.and_), ("|", operator.or_), ("^", operator.xor),
    ("<<", operator.lshift), (">>", operator.rshift), ("<", operator.lt), ("==", operator.eq),
    ("!=", operator.ne), (">=", operator.ge),
]
INPLACE = [("+=", operator.iadd), ("-=", operator.isub), ("*=", operator.imul),
           ("/=", operator.itruediv), ("//=", operator.ifloordiv), ("%=", operator.imod),
           ("**=", operator.ipow), ("&=", operator.iand), ("|=", operator.ior),
           ("<<=", operator.ilshift), ("@=", operator.imatmul)]


def _exempt(name, x):
    """Where pygpu means to differ from NumPy: `d // e` follows the array API
    standard at infinities (docs/SEMANTICS.md: inf // 1 is inf, NumPy's NaN),
    and a Fraction turns itself into a float for `**` (Fraction.__rpow__)."""
    if "//" in name and isinstance(x, (int, float, np.floating)) and abs(float(x)) >= 2.0**63:
        return True
    return "**" in name and isinstance(x, Fraction)


def operator_cases():
    for dt in DTYPES:
        for xi, x in enumerate(SCALARS):
            for name, op in BINARY:
                if _exempt(name, x):
                    continue
                yield (f"a {name} x", dt, xi,
                       lambda a, x, op=op: op(a, x), lambda a, x, op=op: op(a, x))
                yield (f"x {name} a", dt, xi,
                       lambda a, x, op=op: op(x, a), lambda a, x, op=op: op(x, a))
            for name, op in INPLACE:
                if _exempt(name, x):
                    continue
                yield (f"a {name} x", dt, xi,
                       lambda a, x, op=op: op(a, x), lambda a, x, op=op: op(a, x))


def ufunc_cases():
    for dt in DTYPES:
        for xi, x in enumerate(SCALARS):
            yield ("np.maximum(a, x)", dt, xi, lambda a, x: np.maximum(a, x),
                   lambda a, x: np.maximum(a, x))
            yield ("np.add(a, x, out=a)", dt, xi, lambda a, x: np.add(a, x, out=a),
                   lambda a, x: np.add(a, x, out=a))
            yield ("np.add(a, a, out=x)", dt, xi,
                   lambda a, x: np.add(a, a, out=x if not isinstance(x, np.ndarray)
                                       else pygpu.asarray(x) if x.dtype.kind in "fc?biu"
                                       else x),
                   lambda a, x: np.add(a, a, out=x))
            yield ("np.add.outer(a, x)", dt, xi, lambda a, x: np.add.outer(a, x),
                   lambda a, x: np.add.outer(a, x))
            yield ("np.add.reduce(a, dtype=x)", dt, xi,
                   lambda a, x: np.add.reduce(a, dtype=x),
                   lambda a, x: np.add.reduce(a, dtype=x))
            yield ("np.add.accumulate(a, axis=x)", dt, xi,
                   lambda a, x: np.add.accumulate(a, axis=x),
                   lambda a, x: np.add.accumulate(a, axis=x))
        for name, f in [("np.sin", np.sin), ("-a", operator.neg), ("+a", operator.pos),
                        ("abs", abs), ("~a", operator.invert), ("np.add.reduce", np.add.reduce),
                        ("np.add.accumulate", np.add.accumulate), ("np.sqrt", np.sqrt),
                        ("np.sign", np.sign), ("np.isnan", np.isnan), ("bool", bool),
                        ("int", lambda a: int(a[1])), ("float", lambda a: float(a[1])),
                        ("len", len), ("list", list), ("np.asarray", np.asarray)]:
            yield (name, dt, None, lambda a, x, f=f: f(a), lambda a, x, f=f: f(a))


AXES = [99, -99, 1.5, (0, 0), (0,), np.int64(0), None, "0", [0], np.longdouble(0), True,
        2**70]
RED_DTYPES = ["longdouble", object, "clongdouble", "M8", "U", "float16", np.int8, "bool"]


def reduction_cases():
    shapes = [(6,), (2, 3)]
    for dt in DTYPES:
        for shape in shapes:
            for red in ["sum", "prod", "max", "min", "mean", "argmax", "any", "cumsum", "std"]:
                for ax in AXES:
                    yield (f"{red}(axis={ax!r}) on {shape}", dt, shape,
                           lambda a, x, r=red, ax=ax: getattr(a, r)(axis=ax),
                           lambda a, x, r=red, ax=ax: getattr(a, r)(axis=ax))
                if red in ("sum", "prod", "mean", "cumsum", "std"):
                    for rd in RED_DTYPES:
                        yield (f"{red}(dtype={rd!r}) on {shape}", dt, shape,
                               lambda a, x, r=red, rd=rd: getattr(a, r)(dtype=rd),
                               lambda a, x, r=red, rd=rd: getattr(a, r)(dtype=rd))
                if red not in ("cumsum", "argmax"):
                    for kd in [True, 2, None, "yes", np.bool_(True)]:
                        yield (f"{red}(keepdims={kd!r}) on {shape}", dt, shape,
                               lambda a, x, r=red, kd=kd: getattr(a, r)(axis=0, keepdims=kd),
                               lambda a, x, r=red, kd=kd: getattr(a, r)(axis=0, keepdims=kd))
            for out in ["f8-ok", "wrong-shape", "host", "int", "list"]:
                yield (f"np.sum(a, axis=0, out={out}) on {shape}", dt, shape,
                       lambda a, x, o=out: np.sum(a, axis=0, out=_out(a, o, True)),
                       lambda a, x, o=out: np.sum(a, axis=0, out=_out(a, o, False)))


def _out(a, kind, dev):
    shape = a.shape[1:]
    if kind == "f8-ok":
        h = np.zeros(shape, np.float64)
    elif kind == "wrong-shape":
        h = np.zeros((7,), np.float64)
    elif kind == "host":
        return np.zeros(shape, np.float64)
    elif kind == "int":
        return 3
    else:
        return [0.0] * (shape[0] if shape else 1)
    return pygpu.asarray(h) if dev else h


INDICES = [np.longdouble(1), 2**70, -2**70, (None, Ellipsis), [True], np.array([], dtype=object),
           np.array([True, False]), np.array([1.0, 2.0]), 1.5, np.float32(1), "a", None,
           Ellipsis, (Ellipsis, Ellipsis), np.array([1, 2], dtype=np.uint64), [1, "a"],
           [[0, 1], [1, 0]], slice(None, None, 0), slice(1.5, 3), slice(np.int8(1), None),
           slice(2**70, None), np.int8(-1), np.uint64(3), np.bool_(True), True, (), [],
           np.array(1, dtype=object), np.array([0, 1], dtype=object), {0: 1}, {0},
           np.array(1.0), np.array([[True] * 6]), np.timedelta64(1), (0, 0), [-7],
           np.array(2, dtype=np.longdouble), b"1", Fraction(1), Decimal(1)]


def index_cases():
    for dt in [np.float32, np.bool_, np.complex64, np.uint64]:
        for xi, x in enumerate(INDICES):
            yield ("a[x]", dt, ("idx", xi), lambda a, x: a[x], lambda a, x: a[x])
            yield ("a[x] = 1", dt, ("idx", xi), lambda a, x: _setitem(a, x, 1),
                   lambda a, x: _setitem(a, x, 1))
        for vi, v in enumerate(SCALARS):
            yield ("a[1] = v", dt, vi, lambda a, v: _setitem(a, 1, v),
                   lambda a, v: _setitem(a, 1, v))
            yield ("a[:] = v", dt, vi, lambda a, v: _setitem(a, slice(None), v),
                   lambda a, v: _setitem(a, slice(None), v))


def _setitem(a, i, v):
    a[i] = v
    return a


CREATE_ARGS = [0, -1, 2**70, 1.5, np.longdouble(3), np.float16(3), "3", None, np.nan, np.inf,
               True, (2,), [2], np.array(3), np.uint64(3), Fraction(3), Decimal(3), 3 + 0j,
               np.datetime64("2020"), np.array(3, dtype=object)]


def creation_cases():
    for xi, x in enumerate(CREATE_ARGS):
        fns = {
            "arange(x)": lambda m, x: m.arange(x),
            "arange(0, x, 0.5)": lambda m, x: m.arange(0, x, 0.5),
            "arange(0, 5, x)": lambda m, x: m.arange(0, 5, x),
            "arange(5, dtype=x)": lambda m, x: m.arange(5, dtype=x),
            "linspace(0, 1, x)": lambda m, x: m.linspace(0, 1, x),
            "linspace(0, x, 3)": lambda m, x: m.linspace(0, x, 3),
            "full(3, x)": lambda m, x: m.full(3, x),
            "full(x, 1.0)": lambda m, x: m.full(x, 1.0),
            "full(2, 1, dtype=x)": lambda m, x: m.full(2, 1, dtype=x),
            "eye(x)": lambda m, x: m.eye(x),
            "eye(3, k=x)": lambda m, x: m.eye(3, k=x),
            "eye(3, dtype=x)": lambda m, x: m.eye(3, dtype=x),
            "zeros(x)": lambda m, x: m.zeros(x),
            "empty(x).shape": lambda m, x: m.empty(x).shape,
            "ones(2, dtype=x)": lambda m, x: m.ones(2, dtype=x),
            "asarray(x)": lambda m, x: m.asarray(x),
            "asarray([x, x])": lambda m, x: m.asarray([x, x]),
        }
        for name, f in fns.items():
            yield (name, None, ("create", xi), lambda m, x, f=f: f(pygpu, x),
                   lambda m, x, f=f: f(np, x))


def _rng_integers(mod, seed, lo, hi):
    g = mod.random.default_rng(seed)
    r = g.integers(lo, hi, size=20)
    r = host(r)
    # not NumPy's stream: the answer is judged by its range and dtype only
    lo_, hi_ = (0, lo) if hi is None else (lo, hi)
    if not (np.all(r >= lo_) and np.all(r < hi_)):
        raise Unexpected(f"integers({lo!r}, {hi!r}) gave {r} outside the range")
    return r.dtype


SEEDS = [0, -1, 2**70, 1.5, "a", None, np.longdouble(1), [1, 2], np.array([1, 2]),
         np.uint64(2**64 - 1), np.array([], dtype=np.int64), b"1", (1, -1)]
BOUNDS = [(0, 10), (10, 0), (5, None), (0, None), (-2**63, 2**63 - 1), (0, 2**64),
          (0, 2**70), (1.5, 3), (np.longdouble(0), 5), ("0", 5), (np.uint64(0), np.int64(5)),
          (np.array([0, 1]), 5), (-1, None)]


def random_cases():
    for s in SEEDS:
        yield (f"default_rng({s!r}).random(3)", None, None,
               lambda m, x, s=s: _rng_random(pygpu, s), lambda m, x, s=s: _rng_random(np, s))
    for lo, hi in BOUNDS:
        yield (f"integers({lo!r}, {hi!r})", None, None,
               lambda m, x, lo=lo, hi=hi: _rng_integers(pygpu, 1, lo, hi),
               lambda m, x, lo=lo, hi=hi: _rng_integers(np, 1, lo, hi))


def _rng_random(mod, seed):
    r = host(mod.random.default_rng(seed).random(3))
    return r.dtype, r.shape


def misc_cases():
    for dt in DTYPES:
        for ax in AXES + [-1, 1]:
            yield (f"sort(a, axis={ax!r})", dt, (2, 3),
                   lambda a, x, ax=ax: pygpu.sort(a, axis=ax),
                   lambda a, x, ax=ax: np.sort(a, axis=ax))
    mats = {
        "singular": np.ones((3, 3)), "non-square": np.ones((2, 3)),
        "int": np.array([[2, 1], [1, 3]]), "empty": np.zeros((0, 0)),
        "1-d": np.ones(3), "bool": np.eye(2, dtype=bool), "f16": np.eye(2, dtype=np.float16),
        "nan": np.full((2, 2), np.nan), "c64": np.eye(2, dtype=np.complex64),
        "longdouble": np.eye(2, dtype=np.longdouble), "object": np.eye(2).astype(object),
        "batch-empty": np.zeros((2, 0, 0)),
    }
    for name, m in mats.items():
        for fname in ["inv", "det", "solve", "slogdet", "cholesky", "qr"]:
            def dev(a, x, m=m, fname=fname):
                f = getattr(pygpu.linalg, fname)
                d = pygpu.asarray(m)
                return f(d, d) if fname == "solve" else f(d)

            def hst(a, x, m=m, fname=fname):
                f = getattr(np.linalg, fname)
                return f(m, m) if fname == "solve" else f(m)
            yield (f"linalg.{fname}({name})", None, None, dev, hst)
    for n in [0, -1, 1, 2**70, 1.5, np.longdouble(4), None, "4", 8]:
        for f in ["fft", "ifft", "rfft", "irfft"]:
            yield (f"fft.{f}(a, n={n!r})", np.float64, (6,),
                   lambda a, x, n=n, f=f: getattr(pygpu.fft, f)(a, n=n),
                   lambda a, x, n=n, f=f: getattr(np.fft, f)(a, n=n))
    for ax in [99, 1.5, "0", None, np.longdouble(0)]:
        yield (f"fft.fft(a, axis={ax!r})", np.complex64, (6,),
               lambda a, x, ax=ax: pygpu.fft.fft(a, axis=ax),
               lambda a, x, ax=ax: np.fft.fft(a, axis=ax))
    for norm in ["bogus", None, 1, "ortho"]:
        yield (f"fft.fft(a, norm={norm!r})", np.complex64, (6,),
               lambda a, x, nm=norm: pygpu.fft.fft(a, norm=nm),
               lambda a, x, nm=norm: np.fft.fft(a, norm=nm))


KERNEL_SRC = r'''
extern "C" __global__ void scale(float *x, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
'''
COOP_SRC = r'''
#include <cooperative_groups.h>
extern "C" __global__ void coop(int *x) {
    cooperative_groups::this_grid().sync();
    x[blockIdx.x * blockDim.x + threadIdx.x] += 1;
}
'''
_kernels = {}
HANG_S = int(os.environ.get("FUZZ_HANG_S", "30"))


def _kernel(name):
    if name not in _kernels:
        if name == "scale":
            _kernels[name] = pygpu.RawKernel(KERNEL_SRC, "scale")
        elif name == "coop":
            _kernels[name] = pygpu.RawKernel(COOP_SRC, "coop")
        else:
            from pygpu import cuda

            @cuda.jit
            def add1(x, y):
                i = cuda.grid(1)
                if i < x.size:
                    x[i] += y
            _kernels[name] = add1
    return _kernels[name]


KERNEL_ARGS = [np.longdouble(2), np.array(2, dtype=object), 2**70, [1, 2], "a", None,
               np.float32(2), np.float64(2), 2, np.array(2.0, dtype=np.float32), 1 + 1j,
               np.datetime64("2020"), np.array([1.0, 2.0], dtype=np.float32), b"ab", Fraction(2),
               Decimal(2), np.void(b"abcd"), np.array([1, 2], dtype=object), True]
GRIDS = [0, -1, 1, 2**70, 1.5, np.longdouble(1), (1, 1, 0), (1, 2, 3, 4), (), None, "1",
         [1], 10**6, np.uint64(1), np.int8(2)]


def kernel_cases():
    for x in KERNEL_ARGS:
        yield (f"RawKernel scale(d, x={x!r})", np.float32, (8,),
               lambda a, _, x=x: _launch_scale(a, x), None)
        yield (f"RawKernel scale(x={x!r}, 2.0, n)", np.float32, (8,),
               lambda a, _, x=x: _kernel("scale")[1, 8](x, np.float32(2), np.int64(8)), None)
        yield (f"RawKernel scale(d, 2.0, n=x={x!r})", np.float32, (8,),
               lambda a, _, x=x: _kernel("scale")[1, 8](a, np.float32(2), x), None)
        yield (f"cuda.jit add1(d, x={x!r})", np.float32, (8,),
               lambda a, _, x=x: _jit_call(a, x), None)
        yield (f"cuda.jit add1(x={x!r}, 1)", np.float32, (8,),
               lambda a, _, x=x: _kernel("jit")[1, 8](x, 1), None)
    for g in GRIDS:
        yield (f"RawKernel scale[grid={g!r}, 8]", np.float32, (8,),
               lambda a, _, g=g: _kernel("scale")[g, 8](a, np.float32(2), np.int64(8)), None)
        yield (f"RawKernel scale[1, block={g!r}]", np.float32, (8,),
               lambda a, _, g=g: _kernel("scale")[1, g](a, np.float32(2), np.int64(8)), None)
        yield (f"coop[grid={g!r}, 4](cooperative=True)", np.int32, (4096,),
               lambda a, _, g=g: _kernel("coop")[g, 4](a, cooperative=True), None)
        yield (f"cuda.jit add1[grid={g!r}, 8]", np.float32, (8,),
               lambda a, _, g=g: _kernel("jit")[g, 8](a, 1.0), None)
    for c in [1, "yes", None, 2, np.bool_(True), [1]]:
        yield (f"coop[1, 4](cooperative={c!r})", np.int32, (4096,),
               lambda a, _, c=c: _kernel("coop")[1, 4](a, cooperative=c), None)


def _launch_scale(a, x):
    _kernel("scale")[1, 8](a, x, np.int64(8))
    return host(a)


def _jit_call(a, x):
    _kernel("jit")[1, 8](a, x)
    return host(a)


GROUPS = {"operators": operator_cases, "ufuncs": ufunc_cases, "reductions": reduction_cases,
          "indexing": index_cases, "creation": creation_cases, "random": random_cases,
          "misc": misc_cases, "kernels": kernel_cases}


def all_cases():
    out = []
    for group, gen in GROUPS.items():
        out += [(group, *c) for c in gen()]
    return out


def run_case(case):
    group, label, dt, xi, dev_fn, host_fn = case
    x = None
    if isinstance(xi, tuple) and xi and xi[0] == "idx":
        x = INDICES[xi[1]]
    elif isinstance(xi, tuple) and xi and xi[0] == "create":
        x = CREATE_ARGS[xi[1]]
    elif isinstance(xi, int):
        x = SCALARS[xi]
    h = d = None
    if dt is not None:
        shape = xi if isinstance(xi, tuple) and xi and isinstance(xi[0], int) else (6,)
        h, d = _arr(dt, shape)
    return judge(lambda: dev_fn(d, x), (lambda: host_fn(h, x)) if host_fn else None)


def describe(case):
    group, label, dt, xi, _, _ = case
    x = ""
    if isinstance(xi, tuple) and xi and xi[0] == "idx":
        x = f" x={INDICES[xi[1]]!r}"
    elif isinstance(xi, tuple) and xi and xi[0] == "create":
        x = f" x={CREATE_ARGS[xi[1]]!r}"
    elif isinstance(xi, int):
        x = f" x={SCALARS[xi]!r} ({type(SCALARS[xi]).__name__})"
    return f"[{group}] {label} on {np.dtype(dt).name if dt else '-'}{x}"


def worker(indices):
    cases = all_cases()
    for i in indices:
        print(f"S {i}", flush=True)
        faulthandler.dump_traceback_later(HANG_S, exit=True)
        try:
            r = run_case(cases[i])
        except Exception as e:  # noqa: BLE001
            r = f"the harness failed: {type(e).__name__}: {e}"
        if r:
            print(f"B {i} {r!r}"[:600].replace("\n", " "), flush=True)
    faulthandler.cancel_dump_traceback_later()
    print("DONE", flush=True)


def drive(indices, timeout=600):
    """[(case index, what is wrong)] for the cases, run in child processes; a
    child that dies or hangs names its case and the next one starts after it."""
    env = dict(os.environ, PYGPU_SIMULATOR=os.environ.get("PYGPU_SIMULATOR", "1"))
    problems = []
    todo = list(indices)
    while todo:
        env["FUZZ_CASES"] = ",".join(map(str, todo))
        try:
            p = subprocess.run([sys.executable, __file__, "worker"], capture_output=True,
                               text=True, timeout=timeout, env=env)
            out, died = p.stdout, p.returncode != 0
            why = (f"hung (> {HANG_S} s)" if "Timeout" in p.stderr[:200] else
                   f"died with code {p.returncode}: {p.stderr[-300:]}")
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            died, why = True, f"the child ran past {timeout} s"
        last = None
        for line in out.splitlines():
            if line.startswith("S "):
                last = int(line.split()[1])
            elif line.startswith("B "):
                _, idx, msg = line.split(" ", 2)
                problems.append((int(idx), msg))
        if "DONE" in out and not died:
            break
        last = todo[0] if last is None else last  # died before its first case
        problems.append((last, why))
        todo = todo[todo.index(last) + 1:]
    return problems


# The suite runs every STRIDE-th case, and every (5 STRIDE)-th of the groups
# that compile a kernel for most cases (a cold kernel cache costs seconds a
# kernel), in two children at once, one per core of CI's machine;
# FUZZ_STRIDE=1 runs them all (about 27000: `python
# tests/quality/test_fuzz_inputs.py` prints what fails, case by case).
STRIDE = int(os.environ.get("FUZZ_STRIDE", "0")) or 67
COMPILING = ("reductions", "kernels")


def sample(stride):
    cases = all_cases()
    return [i for i, c in enumerate(cases)
            if i % (stride * (5 if c[0] in COMPILING and stride > 1 else 1)) == 0]


def test_fuzz_odd_inputs_give_numpys_answer_or_a_clear_error():
    cases = all_cases()
    chosen = sample(STRIDE)
    with ThreadPoolExecutor(2) as pool:
        parts = list(pool.map(drive, (chosen[0::2], chosen[1::2])))
    problems = sorted(parts[0] + parts[1])
    lines = [f"{describe(cases[i])}: {msg}" for i, msg in problems]
    assert not lines, f"{len(lines)} cases:\n" + "\n".join(lines[:60])


if __name__ == "__main__":
    if sys.argv[1:] == ["worker"]:
        worker([int(i) for i in os.environ["FUZZ_CASES"].split(",")])
    else:
        cases = all_cases()
        print(len(cases), "cases")
        for i, msg in drive(sample(int(sys.argv[1]) if len(sys.argv) > 1 else 1)):
            print(describe(cases[i]), ":", msg)


# ---------------------------------------------------------------------------
# regressions: what this run found, each checked on its own


def test_arange_with_an_infinite_or_huge_step_gives_numpys_first_value():
    # pygpu gave an empty array: (stop - start) / step is 0 (an underflow, or
    # a division by inf), and NumPy counts one value when that 0 is +0
    for args in [(0, 5, np.inf), (1, 5, np.inf), (5, 0, -np.inf), (0, 5e-324, 1e308),
                 (5, 0, np.inf), (0, 5, -np.inf), (0, 0, np.inf), (0, -0.0, np.inf),
                 (0, 5 + 0j, np.inf), (np.float32(0), np.float32(5), np.float32(np.inf))]:
        got, want = pygpu.arange(*args).copy_to_host(), np.arange(*args)
        assert got.dtype == want.dtype and np.array_equal(got, want), (args, got, want)


def type_error_of(call, obj):
    """The TypeError that call(obj) raises (an AssertionError naming obj if
    it raises none)."""
    try:
        call(obj)
    except TypeError as e:
        return e
    raise AssertionError(f"no TypeError from {getattr(obj, '__name__', type(obj).__name__)}")


def test_eye_refuses_a_bool_for_its_shape_as_numpy_does():
    # pygpu.eye(True) answered [[1.]]; NumPy raises TypeError for N and M
    for call in [lambda m: m.eye(True), lambda m: m.eye(2, np.bool_(True)),
                 lambda m: m.identity(True)]:
        for m in (np, pygpu):
            type_error_of(call, m)
    assert np.array_equal(pygpu.eye(3, k=True).copy_to_host(), np.eye(3, k=True))


def test_a_reduction_does_not_reuse_an_earlier_calls_answer_for_an_equal_argument():
    # True == 1 == 1.0 == numpy.True_: keyed by value alone, the reductions'
    # caches answered sum(axis=True) after sum(axis=1), sum(dtype=True) after
    # sum(dtype=numpy.True_), and sum(axis=1.0) raised "'float' object is not
    # iterable"; NumPy raises TypeError for each
    h = np.arange(6.0).reshape(2, 3)
    d = pygpu.asarray(h)
    assert np.array_equal(d.sum(axis=1).copy_to_host(), h.sum(axis=1))
    assert np.array_equal(np.add.reduce(d, dtype=np.True_).copy_to_host(),
                          np.add.reduce(h, dtype=np.True_))
    assert np.array_equal(d.max(axis=0).copy_to_host(), h.max(axis=0))
    for call in [lambda a: a.sum(axis=True), lambda a: a.sum(axis=1.0),
                 lambda a: a.sum(axis=(0, True)), lambda a: a.max(axis=np.False_),
                 lambda a: np.add.reduce(a, dtype=True)]:
        for a in (h, d):
            e = type_error_of(call, a)
            assert "iterable" not in str(e), e


def test_a_list_axis_does_not_find_the_tuples_plan():
    # d.sum(axis=[0]) after d.sum(axis=(0,)) answered (the plan's key made
    # the list a tuple); NumPy refuses a list, and pygpu did on a first call
    h = np.arange(6.0).reshape(2, 3)
    d = pygpu.asarray(h)
    assert np.array_equal(d.sum(axis=(0,)).copy_to_host(), h.sum(axis=(0,)))
    for call in [lambda a: a.sum(axis=[0]), lambda a: a.max(axis=[0])]:
        for a in (h, d):
            type_error_of(call, a)


def test_std_with_an_integer_dtype_gives_numpys_answer():
    # d.std(dtype=numpy.int8) raised CompileError (sqrt(int) is ambiguous in
    # the generated kernel); NumPy answers int8(sqrt(var)), and raises where
    # the answer is an array (its sqrt cannot write floats into int16)
    for dt in [np.float64, np.int8]:
        h = np.arange(6).reshape(2, 3).astype(dt)
        d = pygpu.asarray(h)
        for kw in [{"dtype": np.int8}, {"dtype": np.uint8, "ddof": 1},
                   {"dtype": np.int16, "axis": 1}]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = run(lambda h=h, kw=kw: h.std(**kw))
                got = run(lambda d=d, kw=kw: d.std(**kw))
            if want[0] == "raised":
                assert got[0] == "raised" and type(got[1]) is type(want[1]), (dt, kw, got)
            else:
                assert got[0] == "ok", (dt, kw, got[1])
                assert _same(host(got[1]), want[1]) is None, (dt, kw, got[1], want[1])


def test_in_place_and_out_compute_in_the_loops_type_then_cast():
    # d *= numpy.float32(1e30) on a float16 array computed in float16 (the
    # scalar became inf, and 0 * inf is NaN); NumPy computes in float32 and
    # casts the product: 0, inf, ... (add, subtract, multiply's C path)
    for x in [np.uint64(2**64 - 1), np.int64(-2**63), np.float32(1e30), np.float64(1 / 3)]:
        for name, op in [("+=", operator.iadd), ("-=", operator.isub), ("*=", operator.imul)]:
            for dt in [np.float16, np.float32]:
                h = np.arange(6).astype(dt)
                with np.errstate(all="ignore"):
                    want = op(h.copy(), x)
                    got = op(pygpu.asarray(h), x).copy_to_host()
                    out = pygpu.asarray(h)
                    pygpu.multiply(out, x, out=out)
                    assert _same(out.copy_to_host(), np.multiply(h, x, out=h.copy())) is None
                assert _same(got, want) is None, (name, dt, x, got, want)


def test_ufunc_accumulate_with_axis_none():
    # np.add.accumulate(d, axis=None) raised "'NoneType' object cannot be
    # interpreted as an integer"; NumPy scans a 1-d array, and raises
    # ValueError for more axes
    h = np.arange(6.0)
    got = np.add.accumulate(pygpu.asarray(h), axis=None).copy_to_host()
    assert np.array_equal(got, np.add.accumulate(h, axis=None))
    for a in (h.reshape(2, 3), pygpu.asarray(h.reshape(2, 3))):
        try:
            np.add.accumulate(a, axis=None)
        except ValueError:
            continue
        raise AssertionError(f"no ValueError from {type(a).__name__}")
