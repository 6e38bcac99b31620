"""Random numbers on the device, with NumPy's interface.

    >>> rng = pygpu.random.default_rng(42)
    >>> x = rng.standard_normal((1000, 1000), dtype=np.float32)
    >>> i = rng.integers(0, 10, size=100)

`default_rng(seed)` gives a Generator: random, uniform, standard_normal,
normal, standard_exponential, exponential, integers, choice, permutation and
shuffle, with NumPy's arguments, dtypes, shapes and errors; the module-level
functions (seed, rand, randn, randint, random_sample, ...) are NumPy's legacy
ones on one global Generator.

The bits come from Philox4x32-10 (pygpu/include/pygpu/philox.h), a
counter-based generator: a Generator's state is a key (from the seed, through
numpy.random.SeedSequence) and a counter offset, and element i of a result is
made from the Philox call at counter offset + i // K (K values a call: 4 of
32 bits, 2 of 64). So a seed gives the same bits on every GPU and on the
simulator, whatever the launch configuration, and a shorter result is a
prefix of a longer one drawn from the same state. The numbers are not
NumPy's (NumPy's default generator is PCG64, and its algorithms for normals
and integers differ); their distributions are.

- random, uniform: NumPy's [0, 1) from the top 24 bits (float32) or 53 bits
  (float64) of the random words.
- standard_normal, normal: Box-Muller, in float32 arithmetic for float32,
  with log, sin and cos written out (within 2 ulp each; a normal within a few
  ulp of the exact transform of its uniforms). The tails end at 5.77 (float32,
  u >= 2^-24) and 8.57 (float64, u >= 2^-53) standard deviations.
- standard_exponential, exponential: -log(u), u in (0, 1], from 24 or 53 bits.
- integers: Lemire's multiply-and-reject, unbiased; a rejected element
  (probability below range / 2^32, or / 2^64 past 2^32 values) redraws from
  the same counter with the next attempt number, so values stay a function of
  (key, offset, index).
- permutation, shuffle and choice(replace=False): a keyed bijection of
  [0, n) (an 8-round Feistel network with cycle-walking), computed for each
  index on its own, in O(n) with no sort. It is a pseudorandom permutation:
  each key picks one of at most 2^128 of the n! orders, not a uniform draw of
  all of them as NumPy's Fisher-Yates shuffle gives; each element's position
  is (empirically) uniform.
- choice(p=...): the inverse CDF: p's cumsum (NumPy's, p being on the host
  for its checks), then a binary search in the kernel, as NumPy's
  cdf.searchsorted(u, side='right') on the cdf divided by its last value.

With size=None the methods return a 0-d DeviceArray where NumPy returns a
scalar: the value stays on the device.

Importing this module compiles nothing and touches no device: the kernels
(one unit for all of them on the simulator, one a kernel with NVRTC) are
compiled at first use and kept per device.
"""

import math
import operator
import os
import threading

import numpy as np

from . import _core

__all__ = [
    "Generator", "choice", "default_rng", "exponential", "normal", "permutation", "rand",
    "randint", "randn", "random", "random_integers", "random_sample", "ranf", "sample",
    "seed", "shuffle", "standard_exponential", "standard_normal", "uniform",
]

_THREADS = 256
_MAX_BLOCKS = 1 << 16

# ---- kernels: templates of philox.h, instantiated by name ----------------------------
_TAGS = {"?": "b1", "b": "i1", "B": "u1", "h": "i2", "H": "u2", "i": "i4", "I": "u4",
         "l": "i8", "L": "u8", "q": "i8", "Q": "u8", "f": "f4", "d": "f8"}
_CTYPES = {"?": "bool", "b": "signed char", "B": "unsigned char", "h": "short",
           "H": "unsigned short", "i": "int", "I": "unsigned int", "q": "long long",
           "Q": "unsigned long long", "f": "float", "d": "double"}
_WORDS = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}
_KEY = "unsigned int k0, unsigned int k1, unsigned long long offset"


def _instances():
    """{kernel name: its extern "C" definition}: every kernel of this module."""
    out = {}
    for c in "fd":
        t, tag = _CTYPES[c], _TAGS[c]
        out[f"pg_rng_uniform_{tag}"] = (
            f"({t} *out, long long n, {_KEY}, {t} low, {t} range)",
            f"pg::rng::uniform<{t}>(out, n, k0, k1, offset, low, range);")
        out[f"pg_rng_normal_{tag}"] = (
            f"({t} *out, long long n, {_KEY}, {t} loc, {t} scale)",
            f"pg::rng::normal<{t}>(out, n, k0, k1, offset, loc, scale);")
        out[f"pg_rng_exponential_{tag}"] = (
            f"({t} *out, long long n, {_KEY}, {t} scale)",
            f"pg::rng::exponential<{t}>(out, n, k0, k1, offset, scale);")
    for c in "?bBhHiIqQ":
        t, tag = _CTYPES[c], _TAGS[c]
        out[f"pg_rng_integers32_{tag}"] = (
            f"({t} *out, long long n, {_KEY}, unsigned long long low, unsigned int m)",
            f"pg::rng::integers32<{t}>(out, n, k0, k1, offset, low, m);")
        out[f"pg_rng_integers64_{tag}"] = (
            f"({t} *out, long long n, {_KEY}, unsigned long long low, unsigned long long m)",
            f"pg::rng::integers64<{t}>(out, n, k0, k1, offset, low, m);")
        out[f"pg_rng_integers_each_{tag}"] = (
            f"({t} *out, long long n, {_KEY}, const unsigned long long *low, "
            "const unsigned long long *m)",
            f"pg::rng::integers_each<{t}>(out, n, k0, k1, offset, low, m);")
    out["pg_rng_permutation"] = (
        f"(long long *out, long long count, long long n, {_KEY})",
        "pg::rng::permutation_index(out, count, n, k0, k1, offset);")
    for size, w in _WORDS.items():
        out[f"pg_rng_rows_w{size}"] = (
            f"({w} *out, const {w} *in, const long long *idx, long long count, "
            f"long long n, long long width, {_KEY})",
            "pg::rng::rows(out, in, idx, count, n, width, k0, k1, offset);")
    out["pg_rng_choice_cdf"] = (
        f"(long long *out, long long count, const double *cdf, long long n, {_KEY})",
        "pg::rng::choice_cdf(out, count, cdf, n, k0, k1, offset);")
    return out


# philox.h's compile-time choices (see there), each unit compiled with them;
# PYGPU_RNG_DEFINES ("PG_RNG_SELECT=1 PG_RNG_PAIR=1") or _set_defines() changes them, for
# experiments (a value's bits are the same under every choice). SELECT 1: the
# H200 run of 2026-11-29 (standard_normal float32 0.89x -> 0.96x PyTorch)
_DEFINES = {"PG_RNG_SELECT": 1, "PG_RNG_PAIR": 0}


def _set_defines(**defines):
    """Set philox.h's choices (name=int) and drop the kernels compiled with
    the ones before."""
    unknown = set(defines) - set(_DEFINES)
    if unknown:
        raise ValueError(f"unknown random defines {sorted(unknown)}")
    _DEFINES.update({k: int(v) for k, v in defines.items()})
    with _lock:
        _units.clear()
        _functions.clear()


def render(names=None):
    """The CUDA C of the kernels `names` (default: all)."""
    table = _instances()
    parts = ["".join(f"#define {k} {v}\n" for k, v in _DEFINES.items())
             + "#include <pygpu/philox.h>\n"]
    for name in table if names is None else names:
        params, body = table[name]
        parts.append(f'extern "C" __global__ void {name}{params}\n{{\n    {body}\n}}\n')
    return "\n".join(parts)


# --fmad=false: NVRTC must not fuse a * b + c where the host rounds twice (philox.h)
OPTIONS = ("--fmad=false",)
_lock = threading.Lock()
_units = {}  # (device, names) -> RawModule
_functions = {}  # (device, name) -> Function
if os.environ.get("PYGPU_RNG_DEFINES"):
    _set_defines(**dict(kv.split("=", 1) for kv in os.environ["PYGPU_RNG_DEFINES"].split()))


def _function(name):
    """The kernel `name` for the current device: compiled (or loaded from the
    caches) at first use; on the simulator with every other kernel of the
    module, in one unit."""
    device = _core.get_device()
    f = _functions.get((device, name))
    if f is None:
        from .rawkernel import RawModule

        names = None if _core._host_modules() else (name,)
        with _lock:
            unit = _units.get((device, names))
            if unit is None:
                unit = _units[(device, names)] = RawModule(render(names), OPTIONS,
                                                           check=False)
        f = _functions[(device, name)] = unit.get_function(name)
    return f


def _launch(name, items, *args):
    if items > 0:
        grid = max(1, min(-(-items // _THREADS), _MAX_BLOCKS))
        _function(name)[grid, _THREADS](*args)


# ---- arguments ------------------------------------------------------------------------
def _shape(size):
    """NumPy's shape for size (None: ())."""
    if size is None:
        return ()
    if isinstance(size, (bool, np.bool_, str)):
        raise TypeError(f"expected a sequence of integers or a single integer, got {size!r}")
    try:
        dims = (operator.index(size),)
    except TypeError:
        try:
            dims = tuple(operator.index(d) for d in size)
        except TypeError:
            raise TypeError("expected a sequence of integers or a single integer, "
                            f"got {size!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError("negative dimensions are not allowed")
    return dims


def _float_dtype(dtype, what):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"Unsupported dtype {dtype!r} for {what}") from None
    if dt not in (np.float32, np.float64):
        raise TypeError(f"Unsupported dtype {dt!r} for {what}")
    return dt


def _real(x):
    """A scalar parameter as a float: a number, not a string (float('1')
    would read one; NumPy's TypeError)."""
    if isinstance(x, (str, bytes, np.str_, np.bytes_)):
        raise TypeError(f"must be real number, not {type(x).__name__}")
    return float(x)


def _param(p, ctype):
    """A finite parameter in the result's type; an OverflowError where it does
    not fit (uniform(-3e38, 3e38, dtype=float32): high - low, 6e38, is inf in
    float32, and every value would be)."""
    with np.errstate(over="ignore"):
        c = ctype(p)
    if math.isfinite(p) and not np.isfinite(c):
        raise OverflowError(f"a parameter ({p!r}; for uniform, high - low) is out of the "
                            f"range of {np.dtype(ctype)}")
    return c


def _is_array(x):
    return isinstance(x, _core.DeviceArray) or (np.ndim(x) > 0)


def _host(x):
    """A parameter as NumPy sees it (a DeviceArray copied to the host)."""
    return _core.asnumpy(x) if isinstance(x, _core.DeviceArray) else np.asarray(x)


def _result_shape(size, *params):
    """The shape of a result: size, which the parameters must broadcast to,
    else the parameters' broadcast shape."""
    shapes = [np.shape(p) if not isinstance(p, _core.DeviceArray) else p.shape
              for p in params]
    try:
        common = np.broadcast_shapes(*shapes)
        if size is None:
            return common
        shape = _shape(size)
        if np.broadcast_shapes(shape, common) != shape:
            raise ValueError
        return shape
    except ValueError:
        given = "" if size is None else f"size {_shape(size)} and "
        raise ValueError("shape mismatch: objects cannot be broadcast to a single shape: "
                         f"{given}the parameters' shapes {shapes}") from None


def _device_param(x, dtype):
    if isinstance(x, _core.DeviceArray):
        return x if x.dtype == dtype else x.astype(dtype)
    h = np.asarray(x)
    with np.errstate(over="ignore"):
        c = h.astype(dtype)
    if h.dtype.kind in "iuf" and np.any(np.isfinite(h) & ~np.isfinite(c)):
        raise OverflowError(f"a parameter is out of the range of {np.dtype(dtype)}")
    return _core.asarray(c)


def _check_out(out, shape, dtype, what):
    if not isinstance(out, _core.DeviceArray):
        raise TypeError(f"out must be a pygpu.DeviceArray, not {type(out).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"Supplied output array has the wrong type. Expected {dtype}, "
                        f"got {out.dtype}")
    if not out.is_c_contiguous() or not out.flags["WRITEABLE"]:  # a broadcast_to view
        raise ValueError("Supplied output array is not contiguous, writable or aligned.")
    if shape is not None and tuple(shape) != out.shape:
        raise ValueError(f"size must match out.shape when used together ({shape} given, "
                         f"out has {out.shape})")
    return out


_MASK64 = (1 << 64) - 1


def _seed_sequence(seed):
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (np.random.BitGenerator, np.random.Generator)):
        raise TypeError("seed a pygpu.random Generator with an int, a sequence of ints, "
                        "a numpy.random.SeedSequence or None, not a NumPy "
                        f"{type(seed).__name__}")
    if isinstance(seed, _core.DeviceArray):
        seed = _core.asnumpy(seed)
    if isinstance(seed, (float, np.floating, complex, np.complexfloating)) or (
            isinstance(seed, np.ndarray) and seed.dtype.kind not in "iub"):
        raise TypeError(f"SeedSequence expects int or sequence of ints for entropy not {seed}")
    return np.random.SeedSequence(seed)


# ---- the generator -------------------------------------------------------------------
class Generator:
    """Random numbers on the device from Philox4x32-10: NumPy's
    numpy.random.Generator methods, each result a DeviceArray on the current
    device. Its state is a 64-bit key and a 64-bit counter offset (see the
    module's docstring)."""

    def __init__(self, seed=None):
        words = _seed_sequence(seed).generate_state(2, np.uint32)
        self._k0, self._k1 = np.uint32(words[0]), np.uint32(words[1])
        self._offset = 0
        self._lock = threading.Lock()

    def __repr__(self):
        return f"Generator(Philox4x32-10) at counter {self._offset}"

    def _take(self, calls):
        """(k0, k1, offset) for a draw of `calls` Philox counters, which the
        state then moves past."""
        with self._lock:
            offset = self._offset
            self._offset = (offset + calls) & _MASK64
        return self._k0, self._k1, np.uint64(offset)

    def _fill(self, kind, shape, dtype, out, *params):
        per = 4 if dtype == np.float32 else 2
        if out is None:
            out = _core.empty(shape, dtype)
        n = out.size
        key = self._take(-(-n // per))
        ctype = dtype.type
        _launch(f"pg_rng_{kind}_{_TAGS[dtype.char]}", -(-n // per), out, np.int64(n), *key,
                *(_param(p, ctype) for p in params))
        return out

    # -- floats --
    def random(self, size=None, dtype=np.float64, out=None):
        """Floats uniform in [0, 1): float64 from 53 random bits, float32 from 24."""
        dt = _float_dtype(dtype, "random")
        if out is not None:
            _check_out(out, None if size is None else _shape(size), dt, "random")
        return self._fill("uniform", _shape(size), dt, out, 0.0, 1.0)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64):
        """Floats uniform in [low, high): low + (high - low) u. dtype (float64 or
        float32) is pygpu's addition to NumPy's arguments."""
        dt = _float_dtype(dtype, "uniform")
        if _is_array(low) or _is_array(high):
            shape = _result_shape(size, low, high)
            lo, hi = _device_param(low, dt), _device_param(high, dt)
            span = hi - lo
            h = _host(span)
            if not np.all(np.isfinite(h)):
                raise OverflowError("high - low range exceeds valid bounds")
            if np.any(h < 0):
                raise ValueError("high - low < 0")
            u = self._fill("uniform", shape, dt, None, 0.0, 1.0)
            return u * span + lo
        low, high = _real(low), _real(high)
        span = high - low
        if not math.isfinite(span):
            raise OverflowError("high - low range exceeds valid bounds")
        if span < 0:
            raise ValueError("high - low < 0")
        return self._fill("uniform", _shape(size), dt, None, low, span)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        """Standard normal floats (Box-Muller; float32 computed in float32)."""
        dt = _float_dtype(dtype, "standard_normal")
        if out is not None:
            _check_out(out, None if size is None else _shape(size), dt, "standard_normal")
        return self._fill("normal", _shape(size), dt, out, 0.0, 1.0)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=np.float64):
        """Normal floats of mean loc and standard deviation scale (>= 0). dtype is
        pygpu's addition."""
        dt = _float_dtype(dtype, "normal")
        if _is_array(loc) or _is_array(scale):
            shape = _result_shape(size, loc, scale)
            s = _host(scale)
            if np.any(np.signbit(s)):  # NumPy's test: -0.0 too
                raise ValueError("scale < 0")
            z = self._fill("normal", shape, dt, None, 0.0, 1.0)
            return z * _device_param(scale, dt) + _device_param(loc, dt)
        loc, scale = _real(loc), _real(scale)
        if np.signbit(scale):
            raise ValueError("scale < 0")
        return self._fill("normal", _shape(size), dt, None, loc, scale)

    def standard_exponential(self, size=None, dtype=np.float64, method="zig", out=None):
        """Exponential floats of scale 1: -log(u), u in (0, 1]. method is
        accepted for NumPy's signature ('zig' or 'inv'); the inverse is used."""
        dt = _float_dtype(dtype, "standard_exponential")
        if method not in ("zig", "inv"):
            raise ValueError(f"method must be 'zig' or 'inv', not {method!r}")
        if out is not None:
            _check_out(out, None if size is None else _shape(size), dt,
                       "standard_exponential")
        return self._fill("exponential", _shape(size), dt, out, 1.0)

    def exponential(self, scale=1.0, size=None, dtype=np.float64):
        """Exponential floats of mean scale (>= 0). dtype is pygpu's addition."""
        dt = _float_dtype(dtype, "exponential")
        if _is_array(scale):
            shape = _result_shape(size, scale)
            if np.any(np.signbit(_host(scale))):
                raise ValueError("scale < 0")
            e = self._fill("exponential", shape, dt, None, 1.0)
            return e * _device_param(scale, dt)
        scale = _real(scale)
        if np.signbit(scale):
            raise ValueError("scale < 0")
        return self._fill("exponential", _shape(size), dt, None, scale)

    # -- integers --
    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """Integers uniform in [low, high) ([low, high] with endpoint); high None:
        [0, low). Every integer dtype and bool; unbiased (Lemire's method)."""
        dt = _int_dtype(dtype, "integers")
        if high is None:
            low, high = 0, low
            if not endpoint and np.any(_int_bounds(high, "high") <= 0):
                raise ValueError("high <= 0")
        if _is_array(low) or _is_array(high):
            return self._integers_each(low, high, size, dt, endpoint)
        lo, hi = _int_bound(low, "low"), _int_bound(high, "high")
        shape = _shape(size)
        if not endpoint:
            if lo >= hi:
                if math.prod(shape) == 0:  # NumPy's: nothing drawn, nothing checked
                    return _core.empty(shape, dt)
                raise ValueError("low >= high")
            hi -= 1
        elif lo > hi:
            raise ValueError("low > high")
        if dt == np.bool_:
            bounds = (0, 1)
        else:
            info = np.iinfo(dt)
            bounds = (info.min, info.max)
        if lo < bounds[0] or lo > bounds[1]:
            raise ValueError(f"low is out of bounds for {dt}")
        if hi > bounds[1] or hi < bounds[0]:
            raise ValueError(f"high is out of bounds for {dt}")
        return self._integers(shape, dt, lo, hi - lo)

    def _integers_each(self, low, high, size, dt, endpoint):
        shape = _result_shape(size, low, high)
        lo, hi = _int_bounds(low, "low"), _int_bounds(high, "high")
        if not endpoint:
            if np.any(lo >= hi):
                raise ValueError("low >= high")
            hi = np.asarray(hi - 1, dtype=hi.dtype)
        elif np.any(lo > hi):
            raise ValueError("low > high")
        info = (0, 1) if dt == np.bool_ else (np.iinfo(dt).min, np.iinfo(dt).max)
        if lo.size and (int(lo.min()) < info[0] or int(lo.max()) > info[1]):
            raise ValueError(f"low is out of bounds for {dt}")
        if hi.size and (int(hi.max()) > info[1] or int(hi.min()) < info[0]):
            raise ValueError(f"high is out of bounds for {dt}")
        u = (lo % (1 << 64)).astype(np.uint64) if lo.dtype == object else lo.astype(np.uint64)
        m = ((hi - lo) % (1 << 64)).astype(np.uint64) if object in (lo.dtype, hi.dtype) \
            else (hi.astype(np.uint64) - u)
        u = _core.asarray(np.ascontiguousarray(np.broadcast_to(u, shape)))
        m = _core.asarray(np.ascontiguousarray(np.broadcast_to(m, shape)))
        out = _core.empty(shape, dt)
        n = out.size
        key = self._take(-(-n // 2))
        _launch(f"pg_rng_integers_each_{_TAGS[dt.char]}", -(-n // 2), out, np.int64(n), *key,
                u, m)
        return out

    def _integers(self, shape, dt, lo, m):
        out = _core.empty(shape, dt)
        n = out.size
        wide = m > 0xFFFFFFFF
        per = 2 if wide else 4
        key = self._take(-(-n // per))
        _launch(f"pg_rng_integers{64 if wide else 32}_{_TAGS[dt.char]}", -(-n // per), out,
                np.int64(n), *key, np.uint64(lo & _MASK64),
                np.uint64(m) if wide else np.uint32(m))
        return out

    # -- permutations and choices --
    def _perm_index(self, count, n):
        out = _core.empty((count,), np.int64)
        key = self._take(2)
        _launch("pg_rng_permutation", count, out, np.int64(count), np.int64(n), *key)
        return out

    def _rows(self, a, count, idx=None):
        """a's rows (axis 0) idx[r], or, without idx, those of a fresh
        permutation of them at r < count."""
        a = a if a.is_c_contiguous() else a.copy()
        n = a.shape[0]
        width = a.size // n if n else 0
        out = _core.empty((count, *a.shape[1:]), a.dtype)
        row = width * a.itemsize
        word = 8 if row % 8 == 0 else 4 if row % 4 == 0 else 2 if row % 2 == 0 else 1
        if idx is None and row > word:  # wide rows: each row's source once, not a word
            idx = self._perm_index(count, n)
        key = self._take(0 if idx is not None else 2)
        _launch(f"pg_rng_rows_w{word}", count * (row // word), out, a,
                0 if idx is None else idx, np.int64(count), np.int64(n),
                np.int64(row // word), *key)
        return out

    def permutation(self, x, axis=0):
        """A permuted arange(x) for an int, else a permuted copy of x along axis."""
        if not isinstance(x, (np.ndarray, _core.DeviceArray)) and np.ndim(x) == 0:
            try:
                n = operator.index(x)
            except TypeError:
                n = None
            if n is not None:
                return self._perm_index(max(n, 0), max(n, 0))
        a = _as_device(x)
        if a.ndim == 0:
            raise np.exceptions.AxisError(0, 0)
        axis = _axis(axis, a.ndim)
        moved = _moveaxis(a, axis)
        return _moveaxis_back(self._rows(moved, moved.shape[0]), axis)

    def shuffle(self, x, axis=0):
        """Permute x in place along axis (a DeviceArray, or a NumPy array, which
        is shuffled on the device and written back)."""
        if isinstance(x, np.ndarray):
            if x.ndim == 0:
                raise TypeError("len() of unsized object")
            x[...] = _core.asnumpy(self.permutation(_core.asarray(x), axis=axis))
            return None
        if not isinstance(x, _core.DeviceArray):
            raise TypeError("shuffle takes a pygpu.DeviceArray or a numpy.ndarray, "
                            f"not {type(x).__name__}")
        if x.ndim == 0:
            raise TypeError("len() of unsized object")
        x[...] = self.permutation(x, axis=axis)
        return None

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """Samples of a (an int: arange(a); else along axis), with or without
        replacement, uniform or with probabilities p."""
        pop_int = None
        if isinstance(a, (bool, np.bool_)):
            a = int(a)
        if not isinstance(a, _core.DeviceArray) and np.ndim(a) == 0:
            try:
                pop_int = operator.index(a)
            except TypeError:
                raise ValueError("a must be a sequence or an integer, "
                                 f"not {type(a)}") from None
            n = pop_int
        else:
            a = _as_device(a)
            if a.ndim == 0:
                raise ValueError("a must be a sequence or an integer, not a 0-d array")
            axis = _axis(axis, a.ndim)
            n = a.shape[axis]
        shape = _shape(size)
        count = math.prod(shape)
        if n <= 0 and count:
            if pop_int is not None:
                raise ValueError("a must be a positive integer unless no samples are taken")
            raise ValueError("a cannot be empty unless no samples are taken")
        cdf = None
        if p is not None:
            cdf = self._cdf(p, n)
        if not replace:
            if count > n:
                raise ValueError("Cannot take a larger sample than population when "
                                 "replace is False")
            if cdf is not None and count:
                raise TypeError("pygpu.random's choice samples with probabilities p only "
                                "with replacement (replace=True)")
        if pop_int is not None:
            if not replace:
                return self._perm_index(count, n).reshape(shape)
            if cdf is not None:
                return self._choice_cdf(cdf, n, count).reshape(shape)
            return self._integers(shape, np.dtype(np.int64), 0, max(n - 1, 0)) \
                if count else _core.empty(shape, np.int64)
        moved = _moveaxis(a, axis)
        if not replace:
            rows = self._rows(moved, count)
        else:
            idx = (self._choice_cdf(cdf, n, count) if cdf is not None else
                   self._integers((count,), np.dtype(np.int64), 0, n - 1) if count else
                   _core.empty((0,), np.int64))
            rows = self._rows(moved, count, idx)
        out = rows.reshape((*shape, *moved.shape[1:]))
        if axis:
            k = len(shape)
            order = list(range(k, k + axis)) + list(range(k)) + \
                list(range(k + axis, out.ndim))
            out = out.transpose(*order).copy()
        return out

    def _cdf(self, p, n):
        h = hp = _host(p)
        if h.ndim != 1:
            raise ValueError("p must be 1-dimensional")
        if h.size != n:
            raise ValueError("a and p must have same size")
        if h.dtype.kind not in "biuf":
            raise TypeError(f"p must hold real numbers, not {h.dtype}")
        h = h.astype(np.float64)
        if np.isnan(h).any():
            raise ValueError("Probabilities contain NaN")
        if (h < 0).any():
            raise ValueError("Probabilities are not non-negative")
        atol = np.sqrt(np.finfo(np.float64).eps)
        if hp.dtype.kind == "f":
            atol = max(atol, np.sqrt(np.finfo(hp.dtype).eps))
        if abs(h.sum() - 1.0) > atol:
            raise ValueError("Probabilities do not sum to 1. See Notes section of "
                             "docstring for more information.")
        # p is on the host for its checks: its cumsum there is NumPy's own
        return _core.asarray(np.cumsum(h))

    def _choice_cdf(self, cdf, n, count):
        out = _core.empty((count,), np.int64)
        key = self._take(-(-count // 2))
        _launch("pg_rng_choice_cdf", count, out, np.int64(count), cdf, np.int64(n), *key)
        return out


def _int_dtype(dtype, what):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"Unsupported dtype {dtype!r} for {what}") from None
    if dt.kind not in "biu" or dt.char not in "?bBhHiIlLqQ":
        raise TypeError(f"Unsupported dtype {dt!r} for {what}")
    return dt


def _int_bounds(x, what):
    """Integer bounds as a NumPy array: int64, or object (Python ints) where
    they pass int64's range; floats truncated as NumPy does."""
    a = _host(x)
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)):
            raise OverflowError("cannot convert float infinity to integer")
        a = np.trunc(a)
        big = a.size and (a.min() < -(2.0**63) or a.max() >= 2.0**63)
        return np.vectorize(int, otypes=[object])(a) if big else a.astype(np.int64)
    if a.dtype.kind == "b":
        return a.astype(np.int64)
    if a.dtype == object and all(isinstance(v, (int, np.integer)) for v in a.flat):
        return a  # Python ints past int64 (2**64 as uint64's high)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{what} must hold integers, not {a.dtype}")
    if a.dtype == np.uint64 and a.size and int(a.max()) >= 2**63:
        return a.astype(object)
    return a.astype(np.int64)


def _int_bound(x, what):
    if isinstance(x, np.ndarray):
        x = x[()]
    if isinstance(x, (bool, np.bool_)):
        return int(x)
    try:
        return operator.index(x)
    except TypeError:
        pass
    if isinstance(x, (float, np.floating)):
        return int(x)  # NumPy truncates float bounds (OverflowError for inf)
    raise TypeError(f"{what} must be an integer (or a finite float), not {x!r}")


def _as_device(x):
    if isinstance(x, _core.DeviceArray):
        return x
    a = np.asarray(x)
    if a.dtype.kind not in "biufc":
        raise TypeError(f"pygpu.random works on arrays of numbers, not {a.dtype}")
    return _core.asarray(a)


def _axis(axis, ndim):
    try:
        k = operator.index(axis)
    except TypeError:
        raise TypeError(f"axis must be an integer, not {axis!r}") from None
    if not -ndim <= k < ndim:
        raise np.exceptions.AxisError(k, ndim)
    return k % ndim


def _moveaxis(a, axis):
    if axis == 0:
        return a
    order = [axis] + [k for k in range(a.ndim) if k != axis]
    return a.transpose(*order).copy()


def _moveaxis_back(a, axis):
    if axis == 0:
        return a
    order = list(range(1, axis + 1)) + [0] + list(range(axis + 1, a.ndim))
    return a.transpose(*order).copy()


def default_rng(seed=None):
    """A Generator seeded by seed: None (fresh entropy from the OS), an int >= 0,
    a sequence of ints, a numpy.random.SeedSequence, or a Generator (returned
    as it is)."""
    if isinstance(seed, Generator):
        return seed
    return Generator(seed)


# ---- NumPy's legacy functions, on one global Generator --------------------------------
_global = None


def _rng():
    global _global
    if _global is None:
        _global = Generator()
    return _global


def seed(seed=None):
    """Reseed the global generator: None, or an int (or 1-d array of ints) in
    [0, 2**32), as numpy.random.seed."""
    global _global
    if seed is not None:
        s = _host(seed)
        if s.dtype.kind == "f" or s.dtype.kind not in "iub":
            raise TypeError(f"Cannot cast scalar from {s.dtype!r} to dtype('int64') "
                            "according to the rule 'safe'")
        if s.ndim > 1:
            raise ValueError("Seed must be a scalar or a 1-d array of integers")
        if s.size and (int(s.min()) < 0 or int(s.max()) > 2**32 - 1):
            raise ValueError("Seed must be between 0 and 2**32 - 1")
        seed = [int(v) for v in s.ravel()] if s.ndim else int(s)
    _global = Generator(seed)


def rand(*dims):
    """Floats uniform in [0, 1) of shape dims (float64)."""
    return _rng().random(dims)


def randn(*dims):
    """Standard normal floats of shape dims (float64)."""
    return _rng().standard_normal(dims)


def randint(low, high=None, size=None, dtype=int):
    """Integers in [low, high), or [0, low) without high (int64 by default)."""
    return _rng().integers(low, high, size, dtype)


def random_integers(low, high=None, size=None):
    """Integers in [low, high] (or [1, low]), int64: NumPy's deprecated
    random_integers."""
    if high is None:
        low, high = 1, low
    return _rng().integers(low, high, size, np.int64, endpoint=True)


def random_sample(size=None):
    """Floats uniform in [0, 1) (float64)."""
    return _rng().random(size)


random = ranf = sample = random_sample


def uniform(low=0.0, high=1.0, size=None):
    """Floats uniform in [low, high)."""
    return _rng().uniform(low, high, size)


def normal(loc=0.0, scale=1.0, size=None):
    """Normal floats of mean loc and standard deviation scale."""
    return _rng().normal(loc, scale, size)


def standard_normal(size=None):
    """Standard normal floats (float64)."""
    return _rng().standard_normal(size)


def exponential(scale=1.0, size=None):
    """Exponential floats of mean scale."""
    return _rng().exponential(scale, size)


def standard_exponential(size=None):
    """Exponential floats of scale 1."""
    return _rng().standard_exponential(size)


def choice(a, size=None, replace=True, p=None):
    """Samples of a 1-d array a (or of arange(a)), as numpy.random.choice."""
    if not isinstance(a, _core.DeviceArray) and np.ndim(a) == 0:
        try:
            if operator.index(a) <= 0 and math.prod(_shape(size)):
                raise ValueError("a must be greater than 0 unless no samples are taken")
        except TypeError:
            raise ValueError("a must be 1-dimensional or an integer") from None
    elif (a.ndim if isinstance(a, _core.DeviceArray) else np.ndim(a)) != 1:
        raise ValueError("a must be 1-dimensional")
    return _rng().choice(a, size, replace, p)


def permutation(x):
    """A permuted arange(x) for an int, else a permuted copy of x (axis 0)."""
    return _rng().permutation(x)


def shuffle(x):
    """Permute x in place along axis 0."""
    return _rng().shuffle(x)
