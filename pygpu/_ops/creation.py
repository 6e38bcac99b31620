"""Creation: arange, linspace, logspace, eye, identity, tri, tril, triu, diag,
diagonal, meshgrid, indices, and the *_like forms.

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads.

Values follow NumPy's arithmetic: arange writes start + i * delta in the
result dtype (delta = (start + step) - start, the first two elements as NumPy
sets them; integers wrap as NumPy's do; no fused multiply-add, so a GPU gives
NumPy's bits), linspace and logspace are NumPy's own steps made of arange and
the ufuncs. Kernels (arange's values from the index, the triangle of
tril/triu/tri) are one unit of CUDA C (UNIT): every kernel in one compile on
the simulator, the one a call needs on a GPU; views that NumPy makes with
strides no slice has (diagonal, broadcast_to) are read-only views through
__cuda_array_interface__ (strided_view).
"""

import contextlib
import math
import operator
import threading

import numpy as np

from .. import _core
from .._core import DeviceArray
from .table import DEVICE_TYPES, KINDS, canonical

_THREADS = 256
_MAX_BLOCKS = 1 << 16

# ---- kernels: one unit -----------------------------------------------------------

_HEAD = """#include <pygpu/ufunc.h>

/* arange: element i is v0, v1 (as NumPy sets them), then start + i * delta in
   C (NumPy's fill functions; unsigned arithmetic for integers, which wraps) */
template <class S, class C>
__device__ void
pg_arange_values(S *out, long long n, S v0, S v1, C start, C delta)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        out[i] = i == 0 ? v0 : i == 1 ? v1 : pg::cast<S>((C)(start + (C)i * delta));
    }
}

template <class R>
__device__ void
pg_arange_complex(pg::complex<R> *out, long long n, pg::complex<R> v0, pg::complex<R> v1,
                  R sr, R si, R dr, R di)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        pg::complex<R> v = {(R)(sr + (R)i * dr), (R)(si + (R)i * di)};
        out[i] = i == 0 ? v0 : i == 1 ? v1 : v;
    }
}

/* the triangle of a batch of rows x cols matrices (C order): element (r, c)
   kept where c - r <= k (lower) or c - r >= k (upper), else zero bits (zero
   in every dtype); x may be out. I: 32-bit indices where they reach (the
   divisions cost a quarter of 64-bit ones), else 64-bit. */
template <class S, class I>
__device__ void
pg_tri_loop(const S *x, S *out, I n, I rows, I cols, long long k, int upper)
{
    const I step = (I)gridDim.x * blockDim.x;
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long c = (long long)(i % cols), r = (long long)((i / cols) % rows);
        const bool keep = upper ? c - r >= k : c - r <= k;
        out[i] = keep ? x[i] : S();
    }
}

template <class S>
__device__ void
pg_tri_mask(const S *x, S *out, long long n, long long rows, long long cols, long long k,
            int upper)
{
    if (n <= 0x7fffffffLL) {
        pg_tri_loop<S, unsigned int>(x, out, (unsigned int)n, (unsigned int)rows,
                                     (unsigned int)cols, k, upper);
    }
    else {
        pg_tri_loop<S, long long>(x, out, n, rows, cols, k, upper);
    }
}

struct pg_bytes16 {
    unsigned long long lo, hi;
};
"""

_COMPUTE = {"e": "float", "f": "float", "d": "double", "F": "float", "D": "double"}
_ITEMS = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int",
          8: "unsigned long long", 16: "pg_bytes16"}


def _arange_kernel(char):
    s = DEVICE_TYPES[char]
    if KINDS[char] == "c":
        r = _COMPUTE[char]
        return (f'extern "C" __global__ void pg_arange_{char}({s} *out, long long n, {s} v0, '
                f"{s} v1, {r} sr, {r} si, {r} dr, {r} di)\n{{\n"
                f"    pg_arange_complex<{r}>(out, n, v0, v1, sr, si, dr, di);\n}}\n")
    c = _COMPUTE.get(char, "unsigned long long")
    return (f'extern "C" __global__ void pg_arange_{char}({s} *out, long long n, {s} v0, '
            f"{s} v1, {c} start, {c} delta)\n{{\n"
            f"    pg_arange_values<{s}, {c}>(out, n, v0, v1, start, delta);\n}}\n")


def _tri_kernel(size):
    t = _ITEMS[size]
    return (f'extern "C" __global__ void pg_tri_{size}(const {t} *x, {t} *out, long long n, '
            "long long rows, long long cols, long long k, int upper)\n{\n"
            f"    pg_tri_mask<{t}>(x, out, n, rows, cols, k, upper);\n}}\n")


_ARANGE_CHARS = "bBhHiIqQefdFD"
UNIT = {**{f"pg_arange_{c}": _arange_kernel(c) for c in _ARANGE_CHARS},
        **{f"pg_tri_{n}": _tri_kernel(n) for n in _ITEMS}}


class Unit:
    """The kernels of one area: its shared head and one source per kernel,
    compiled as one unit on the simulator (the host compiler's start-up
    dominates there) and a kernel at a time on a GPU (NVRTC's time grows with
    the kernels), kept in memory per device. --fmad=false: no contraction of
    a * b + c into one rounding, so that a GPU gives NumPy's bits."""

    def __init__(self, head, kernels):
        self.head, self.kernels = head, kernels
        self._lock = threading.Lock()
        self._modules, self._functions = {}, {}

    def __call__(self, name):
        device = _core.get_device()
        f = self._functions.get((device, name))
        if f is not None:
            return f
        from ..rawkernel import RawModule

        names = tuple(self.kernels) if _core._host_modules() else (name,)
        with self._lock:
            module = self._modules.get((device, names))
            if module is None:
                source = self.head + "\n".join(self.kernels[k] for k in names)
                module = RawModule(source, options=("--fmad=false",), check=False)
                self._modules[(device, names)] = module
        f = self._functions[(device, name)] = module.get_function(name)
        return f


kernel = Unit(_HEAD, UNIT)


def launch(f, n, *args):
    """f over n elements: a grid-stride loop of _THREADS a block."""
    if n:
        f[(max(1, min(-(-n // _THREADS), _MAX_BLOCKS)),), (_THREADS,)](*args)


# ---- arguments -----------------------------------------------------------------------

def device_context(device):
    """A context where pygpu.Device `device` (a Device, its id, or None for the
    current one) is current; checked by namespace.device_id, the one check."""
    from .namespace import device_id

    if device is None:
        return contextlib.nullcontext()
    return _core.Device(device_id(device))


def device_dtype(dtype, what):
    """np.dtype(dtype), a dtype the device has (TypeError naming it if not)."""
    dt = np.dtype(dtype)
    if dt.char not in DEVICE_TYPES:
        raise TypeError(f"{what}: dtype {dt} is not supported on the device (pygpu arrays "
                        f"hold bool, integers, float16/32/64 and complex64/128)")
    return dt


def device_array(name, x):
    """x, a DeviceArray (TypeError otherwise; a NumPy array is in host memory,
    which pygpu does not copy implicitly)."""
    if isinstance(x, DeviceArray):
        return x
    from .ufunc import _host_array_error

    if isinstance(x, np.ndarray):
        raise _host_array_error(name, x)
    raise TypeError(f"{name} takes DeviceArrays, not {type(x).__name__}")


def _scalar(v, what):
    """A Python or NumPy scalar from v (a 0-d DeviceArray is read from the
    device)."""
    if isinstance(v, DeviceArray):
        if v.ndim:
            raise TypeError(f"{what} takes scalars, not an array of shape {v.shape}")
        return v.copy_to_host()[()]
    return v


def _int(v, what):
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(v).__name__} {v!r}") from None


# ---- arange ----------------------------------------------------------------------------

_NO = object()


def _length(start, stop, step):
    """NumPy's arange length: ceil((stop - start) / step) in Python's
    arithmetic, the smaller of the two parts' for complex, 0 if negative."""
    q = (stop - start) / step
    # both parts of a Python complex (numpy.complex128 is one); the real part
    # of another complex (NumPy reads it as a float)
    parts = (q.real, q.imag) if isinstance(q, complex) else (q,)
    n = None
    for p in parts:
        p = float(p)
        if math.isnan(p):
            raise ValueError("arange: cannot compute length")
        if math.isinf(p):
            raise ValueError("Maximum allowed size exceeded")
        m = math.ceil(p)
        if p == 0 and len(parts) == 1 and stop - start != 0:
            # NumPy's check for underflow and a step of +-inf: one value when
            # the quotient is +0 (arange(0, 5, inf) is [0.]), none when -0
            m = 0 if math.copysign(1.0, p) < 0 else 1
        n = m if n is None else min(n, m)
    return max(n, 0)


def arange(start=_NO, stop=None, step=None, dtype=None, *, device=None, like=None):
    """numpy.arange (and the array API's arange(start, /, stop=None, step=1, *,
    dtype=None, device=None)): values from start (0 if only one bound is
    given) up to stop, step apart; int64 for integers, float64 for floats,
    unless dtype says otherwise."""
    if start is _NO or (start is None and stop is None):
        if stop is None:
            raise TypeError("arange() requires stop to be specified.")
        start = 0
    start, stop, step = (_scalar(v, "arange") for v in (start, stop, step))
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if dtype is None:
        dt = np.dtype(np.intp)
        for v in (start, stop, step):
            dt = np.promote_types(dt, np.asarray(v).dtype)
    else:
        dt = np.dtype(dtype)
    dt = device_dtype(dt, "arange")
    n = _length(start, stop, step)
    if n * dt.itemsize > np.iinfo(np.intp).max:
        raise ValueError("Maximum allowed size exceeded")
    first = np.empty(2, dt)
    if n:
        first[0] = start
    if n > 1:
        first[1] = start + step
    with device_context(device):
        out = _core.empty((n,), dt)
        if n <= 2:
            if n:
                out[...] = _core.asarray(first[:n])
            return out
        if dt.kind == "b":
            raise TypeError("arange() is only supported for booleans when the result has "
                            "at most length 2.")
        char = canonical(dt.char)
        f = kernel(f"pg_arange_{char}")
        if dt.kind == "c":
            r = np.dtype(dt.char.lower()).type
            s0, s1 = first[0], first[1]
            launch(f, n, out, np.int64(n), s0, s1, r(s0.real), r(s0.imag),
                   r(s1.real - s0.real), r(s1.imag - s0.imag))
        elif dt.kind == "f":
            c = np.float32 if dt.itemsize <= 4 else np.float64
            s0 = c(first[0])
            launch(f, n, out, np.int64(n), first[0], first[1], s0, c(c(first[1]) - s0))
        else:  # sign-extended for signed types, as NumPy's fill widens to npy_intp
            u = first.astype(np.int64 if dt.kind == "i" else np.uint64).view(np.uint64)
            launch(f, n, out, np.int64(n), first[0], first[1], u[0], (u[1:] - u[:1])[0])
    return out


# ---- linspace, logspace ---------------------------------------------------------------

def _standin(v):
    """What NumPy sees in place of v when deciding dtypes and shapes: a
    zero-stride host array for a DeviceArray, v itself otherwise."""
    if isinstance(v, DeviceArray):
        return np.broadcast_to(np.zeros((), v.dtype), v.shape)
    return v


def _python(v):
    return type(v) in (bool, int, float, complex)


def _on_device(v):
    if isinstance(v, DeviceArray):
        return v
    return _core.asarray(np.asarray(v))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """numpy.linspace: num values from start to stop (stop left out with
    endpoint=False), NumPy's steps: arange(num) times (stop - start) / div,
    plus start, the last set to stop; start and stop may be arrays (then the
    samples run along `axis`)."""
    from .ufunc import UFUNCS as U

    num = _int(num, "linspace's num")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    # NumPy decides the dtypes, shapes and errors on stand-ins of two samples
    probe = np.linspace(_standin(start), _standin(stop), 2, endpoint, dtype=dtype, axis=axis)
    if dtype is not None:
        device_dtype(dtype, "linspace")
    div = (num - 1) if endpoint else num
    # the dtype NumPy computes in (float for integers)
    dt = device_dtype(np.linspace(_standin(start), _standin(stop), 2).dtype, "linspace")
    scalars = not (isinstance(start, DeviceArray) or isinstance(stop, DeviceArray) or
                   np.ndim(start) or np.ndim(stop))
    with device_context(device):
        if scalars:
            delta = np.subtract(np.asarray(stop), np.asarray(start), dtype=dt)[()]
        else:
            start, stop = _on_device(start), _on_device(stop)
            delta = U["subtract"](stop, start, dtype=dt)
        y = arange(0, num, dtype=dt)
        if not scalars:
            y = y.reshape((-1,) + (1,) * delta.ndim)
        if div > 0:
            step = delta / div if scalars else U["divide"](delta, div)
            if scalars:
                zero = step == 0
            else:
                from .reduction import any as any_

                zero = bool(any_(U["equal"](step, 0)))
            y = U["multiply"](U["divide"](y, div), delta) if zero else U["multiply"](y, step)
        else:
            step = np.nan
            y = U["multiply"](y, delta)
        # NumPy's y += start: a Python start stays a Python scalar beside a NumPy
        # stop (NEP 50), both Python ones are NumPy's default dtypes
        if scalars and not (_python(start) and not _python(stop)):
            start = _on_device(start)
        U["add"](y, start, out=y)
        if endpoint and num > 1:
            y[-1, ...] = stop
        if axis != 0 and not scalars:
            from .manipulation import moveaxis

            y = moveaxis(y, 0, axis)
        if probe.dtype != y.dtype:
            if probe.dtype.kind in "iu":
                U["floor"](y, out=y)
            y = y.astype(probe.dtype)
    return (y, step) if retstep else y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """numpy.logspace: base ** linspace(start, stop, num), NumPy's dtypes (a
    Python base is a float64 array there, as NumPy makes it)."""
    from .ufunc import UFUNCS as U

    probe = np.logspace(_standin(start), _standin(stop), 2, endpoint, _standin(base),
                        dtype=dtype, axis=axis)
    if dtype is not None:
        device_dtype(dtype, "logspace")
    ndmax = np.broadcast(*[_standin(v) for v in (start, stop, base)]).ndim

    def nd(v):
        if isinstance(v, DeviceArray):
            return v.reshape((1,) * (ndmax - v.ndim) + v.shape)
        return _core.asarray(np.array(v, ndmin=ndmax))

    start, stop, base = nd(start), nd(stop), nd(base)
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    from .manipulation import expand_dims

    r = U["power"](expand_dims(base, axis), y)
    return r if r.dtype == probe.dtype else r.astype(probe.dtype)


# ---- eye, identity, tri, tril, triu, diag, diagonal -------------------------------

def eye(N, M=None, k=0, dtype=None, order="C", *, device=None, like=None):
    """numpy.eye (the array API's eye(n_rows, n_cols=None, /, *, k=0,
    dtype=None, device=None)): ones on diagonal k, zeros elsewhere; float64
    unless dtype says otherwise."""
    for v, what in ((N, "N"), (M, "M")):
        if isinstance(v, (bool, np.bool_)):  # NumPy refuses a bool here, as a shape
            raise TypeError(f"eye's {what} must be an integer, not bool {v!r}")
    N = _int(N, "eye's N")
    M = N if M is None else _int(M, "eye's M")
    k = _int(k, "eye's k")
    if order not in ("C", "F"):
        raise ValueError(f"order must be one of 'C' or 'F', not {order!r}")
    dt = device_dtype(np.float64 if dtype is None else dtype, "eye")
    if N < 0 or M < 0:
        raise ValueError("negative dimensions are not allowed")
    if order == "F":
        return eye(M, N, -k, dt, device=device).T
    with device_context(device):
        out = _core.zeros((N, M), dt)
        count = min(N, M - k) if k >= 0 else min(N + k, M)
        if count > 0:
            first = k if k >= 0 else -k * M
            out.reshape(-1)[first::M + 1][:count] = 1
    return out


def identity(n, dtype=None, *, device=None, like=None):
    """numpy.identity: the n x n identity matrix."""
    return eye(n, dtype=dtype, device=device)


def _triangle(x, out, k, upper):
    rows, cols = x.shape[-2:]
    f = kernel(f"pg_tri_{x.dtype.itemsize}")
    launch(f, x.size, x, out, np.int64(x.size), np.int64(rows), np.int64(cols), np.int64(k),
           np.int32(upper))


def tri(N, M=None, k=0, dtype=float, *, device=None, like=None):
    """numpy.tri: ones at and below diagonal k, zeros above."""
    N = _int(N, "tri's N")
    M = N if M is None else _int(M, "tri's M")
    k = _diagonal_k(k, "tri's k")
    dt = device_dtype(np.float64 if dtype is None else dtype, "tri")
    with device_context(device):
        out = _core.full((max(N, 0), max(M, 0)), 1, dt)
        _triangle(out, out, k, False)
    return out


def _diagonal_k(k, what):
    """k as an int: an integer, or a float with an integral value (NumPy
    takes any real k, but its tri's integer arange makes a fractional one
    meaningless: triu(m, 1.5) is all zeros), else a TypeError."""
    if isinstance(k, (float, np.floating)) and math.isfinite(k) and k == int(k):
        return int(k)
    return _int(k, what)


def _tril_triu(m, k, upper):
    name = "triu" if upper else "tril"
    m = device_array(name, m)
    k = _diagonal_k(k, f"{name}'s k")
    if m.ndim == 0:  # a TypeError, as NumPy's (tri() of no shape)
        raise TypeError(f"{name} needs an array of at least 1 dimension, not a 0-d array")
    shape = m.shape if m.ndim >= 2 else m.shape * 2
    with m.device:
        if m.ndim >= 2 and m.is_c_contiguous():
            out = _core.empty(shape, m.dtype)
            _triangle(m, out, k, upper)
            return out
        out = _core.empty(shape, m.dtype)
        out[...] = m
        _triangle(out, out, k, upper)
    return out


def tril(m, k=0):
    """numpy.tril (the array API's tril(x, /, *, k=0)): the elements at and
    below diagonal k of the last two axes, zeros above (a 1-D m is each row
    of an n x n matrix)."""
    return _tril_triu(m, k, False)


def triu(m, k=0):
    """numpy.triu: the elements at and above diagonal k, zeros below."""
    return _tril_triu(m, k, True)


class _Interface:
    """An owner of memory seen through __cuda_array_interface__: a view with
    strides that no slice has, keeping the array it reads alive."""

    def __init__(self, base, cai):
        self.base, self.__cuda_array_interface__ = base, cai


def strided_view(a, shape, strides, offset=0, readonly=True):
    """A view of a's memory with the given shape, byte strides and byte offset
    (as numpy.lib.stride_tricks.as_strided; zero strides repeat), read-only
    as NumPy's broadcast_to and diagonal are."""
    cai = {"shape": tuple(int(n) for n in shape), "typestr": a.dtype.str,
           "strides": tuple(int(s) for s in strides), "data": (a.ptr + offset, bool(readonly)),
           "version": 3, "stream": None}
    return _core.asarray(_Interface(a, cai))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """numpy.diagonal: diagonal `offset` of the axes axis1 and axis2, as the
    last axis; a read-only view, as NumPy's."""
    a = device_array("diagonal", a)
    offset = _int(offset, "diagonal's offset")
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    from numpy.lib.array_utils import normalize_axis_index

    ax1, ax2 = normalize_axis_index(axis1, a.ndim), normalize_axis_index(axis2, a.ndim)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    n1, n2 = a.shape[ax1], a.shape[ax2]
    s1, s2 = a.strides[ax1], a.strides[ax2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    start = (offset * s2 if offset >= 0 else -offset * s1) if length else 0
    keep = [i for i in range(a.ndim) if i not in (ax1, ax2)]
    shape = [a.shape[i] for i in keep] + [length]
    strides = [a.strides[i] for i in keep] + [s1 + s2]
    if 0 in shape:
        with a.device:
            return _core.empty(tuple(shape), a.dtype)
    return strided_view(a, shape, strides, start)


def diag(v, k=0):
    """numpy.diag: a 2-D array with v on diagonal k (v 1-D), or diagonal k
    of v (v 2-D; a read-only view)."""
    v = device_array("diag", v)
    k = _int(k, "diag's k")
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        with v.device:
            out = _core.zeros((n, n), v.dtype)
            if v.shape[0]:
                first = k if k >= 0 else -k * n
                out.reshape(-1)[first::n + 1][:v.shape[0]] = v
        return out
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError("Input must be 1- or 2-d.")


# ---- meshgrid, indices -----------------------------------------------------------------

def _meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """numpy.meshgrid: coordinate arrays from 1-D coordinate vectors (as a
    tuple): copies, or read-only broadcast views with copy=False."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    s0 = (1,) * ndim
    output = [device_array("meshgrid", x).reshape(s0[:i] + (-1,) + s0[i + 1:])
              for i, x in enumerate(xi)]
    if indexing == "xy" and ndim > 1:
        output[0] = output[0].reshape((1, -1) + s0[2:])
        output[1] = output[1].reshape((-1, 1) + s0[2:])
    if sparse:
        return tuple(x.copy() if copy else x for x in output)
    shape = np.broadcast_shapes(*[x.shape for x in output])
    if not copy:
        from .manipulation import broadcast_to

        return tuple(broadcast_to(x, shape) for x in output)
    result = []
    for x in output:
        with x.device:
            r = _core.empty(shape, x.dtype)
        r[...] = x
        result.append(r)
    return tuple(result)


def meshgrid(*arrays, indexing="xy", copy=True, sparse=False):
    """The array API's meshgrid: a list (2024.12; numpy.meshgrid gives a
    tuple)."""
    return list(_meshgrid(*arrays, copy=copy, sparse=sparse, indexing=indexing))


def indices(dimensions, dtype=int, sparse=False, *, device=None):
    """numpy.indices: the index of each position of a grid of shape
    `dimensions`, along a first axis (a tuple of broadcastable arrays with
    sparse=True)."""
    dimensions = tuple(_int(d, "indices' dimensions") for d in dimensions)
    dt = device_dtype(dtype, "indices")
    n = len(dimensions)
    with device_context(device):
        res = () if sparse else _core.empty((n,) + dimensions, dt)
        for i, dim in enumerate(dimensions):
            idx = arange(dim, dtype=dt).reshape((1,) * i + (dim,) + (1,) * (n - i - 1))
            if sparse:
                res = res + (idx,)
            elif res.size:
                res[i] = idx
    return res


# ---- full, zeros, ones, empty and the *_like forms, with device= ---------------------

def empty(shape, dtype=float, order="C", *, device=None, like=None):
    """numpy.empty, with the array API's device= (a pygpu.Device or id)."""
    with device_context(device):
        return _core.empty(shape, np.float64 if dtype is None else dtype, order)


def zeros(shape, dtype=float, order="C", *, device=None, like=None):
    """numpy.zeros, with device=."""
    with device_context(device):
        return _core.zeros(shape, np.float64 if dtype is None else dtype, order)


def ones(shape, dtype=None, order="C", *, device=None, like=None):
    """numpy.ones, with device=."""
    with device_context(device):
        return _core.full(shape, 1, np.float64 if dtype is None else dtype, order)


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    """numpy.full, with device=."""
    with device_context(device):
        return _core.full(shape, fill_value, dtype, order)


def _like(like, make, prototype, fill, dtype, order, shape, device):
    """The *_like functions' one implementation (numpy's signature; the
    namespace's pygpu.zeros_like and the rest are adapters of the
    standard's): on device, else the prototype's device (a DeviceArray's) or
    the current one. Without shape, order 'K' and 'A' keep the prototype's
    layout (like: pygpu._core's C function); otherwise make(shape, *fill,
    dtype, order) in C or F order as asked."""
    if order not in ("K", "A", "C", "F"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if device is None and isinstance(prototype, DeviceArray):
        device = prototype.device
    with device_context(device):
        if shape is None and order in ("K", "A"):
            return like(prototype, *fill, dtype)
        p = _standin(prototype)
        dt = np.asarray(p).dtype if dtype is None else np.dtype(dtype)
        fortran = order == "F" or (order == "A" and isinstance(prototype, DeviceArray) and
                                   prototype.is_f_contiguous() and
                                   not prototype.is_c_contiguous())
        return make(np.shape(p) if shape is None else shape, *fill, dt,
                    "F" if fortran else "C")


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """numpy.empty_like, with device= (default: the prototype's device)."""
    return _like(_core.empty_like, _core.empty, prototype, (), dtype, order, shape, device)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """numpy.zeros_like, with device=."""
    return _like(_core.zeros_like, _core.zeros, a, (), dtype, order, shape, device)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """numpy.ones_like, with device=."""
    return _like(_core.ones_like, _ones, a, (), dtype, order, shape, device)


def _ones(shape, dtype, order):
    return _core.full(shape, 1, dtype, order)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """numpy.full_like, with device=: fill_value converted as NumPy converts
    it into the dtype."""
    return _like(_core.full_like, _core.full, a, (fill_value,), dtype, order, shape, device)


def _diagonal_method(self, offset=0, axis1=0, axis2=1):
    return diagonal(self, offset, axis1, axis2)


from . import method  # noqa: E402

__all__ = ["arange", "diag", "diagonal", "eye", "identity", "indices", "linspace",
           "logspace", "meshgrid", "tri", "tril", "triu"]
NUMPY = {
    np.arange: arange, np.linspace: linspace, np.logspace: logspace, np.eye: eye,
    np.identity: identity, np.tri: tri, np.tril: tril, np.triu: triu, np.diag: diag,
    np.diagonal: diagonal, np.meshgrid: _meshgrid, np.empty: empty, np.zeros: zeros,
    np.ones: ones, np.full: full,
}
ATTRIBUTES = {"diagonal": method(_diagonal_method)}
