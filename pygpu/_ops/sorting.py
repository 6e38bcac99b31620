"""Search, sort and sets: sort, argsort, searchsorted, unique and unique_*,
isin, bincount, histogram, partition, argpartition, lexsort.

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads.

Every sort is one stable LSD radix sort on the device (pygpu/include/pygpu/
sort.h): the elements' bits become unsigned keys that order as NumPy sorts
(NaNs last, -0.0 equal to 0.0; descending: the keys' bits inverted, equal
elements kept in order), one onesweep pass per 8-bit digit. A first kernel
counts every digit's histogram at once; the host reads them (one small copy)
to skip the passes where one digit holds every key and to place each digit.
A sort of numbers keeps the keys alone and turns them back into elements in
its last pass, unless that would lose something (a -0.0 or a NaN other than
NumPy's: the histogram pass counts them); then, and for complex numbers and
sorts along an axis of an N-d array, the indices are sorted with the keys
(argsort) and the elements gathered. A complex number is three keys (its
NaN class, real part, imaginary part), sorted least significant first, as
lexsort sorts its keys; the rows of an N-d array are one more key, the most
significant. partition and argpartition sort fully (a valid partition).
unique along an axis sorts the subarrays as lexsort sorts its keys, each
element of a subarray (in C order) one key, the first the most significant.
"""

import collections
import functools
import operator
import os
import threading

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from .. import _core
from .._core import DeviceArray
from . import method
from .table import DEVICE_TYPES, KINDS

_THREADS = 256  # grid-stride kernels
# sort.h's compile-time choices of the radix sort's passes (see there), each
# unit compiled with them; PYGPU_SORT_DEFINES ("PG_SORT_RANK=1 PG_SORT_ITEMS=23
# ...") or _set_defines() changes them, for experiments. The defaults are the
# H200 run of 2026-11-29's best (2^26 float32: sort 0.57x -> 0.91x CuPy,
# argsort 0.78x -> 0.94x); RANK 0's pass is kept for experiments
_DEFINES = {"PG_SORT_RANK": 1, "PG_SORT_MATCH": 1, "PG_SORT_THREADS": 384,
            "PG_SORT_ITEMS": 23, "PG_SORT_ITEMS_WIDE": 14, "PG_SORT_MIN_BLOCKS": 2,
            "PG_SORT_LOOKBACK": 4, "PG_SORT_HIST_ITEMS": 16, "PG_SORT_HIST_BLOCKS": 4}


def _set_defines(**defines):
    """Set sort.h's choices (name=int; PG_SORT_ITEMS_WIDE follows PG_SORT_ITEMS
    unless given) and drop the kernels compiled with the ones before."""
    global _table
    if "PG_SORT_ITEMS" in defines and "PG_SORT_ITEMS_WIDE" not in defines:
        defines["PG_SORT_ITEMS_WIDE"] = defines["PG_SORT_ITEMS"]
    unknown = set(defines) - set(_DEFINES)
    if unknown:
        raise ValueError(f"unknown sort defines {sorted(unknown)}")
    _DEFINES.update({k: int(v) for k, v in defines.items()})
    with _lock:
        _table = None
        _units.clear()
        _functions.clear()


def _tile(width):
    """Keys a tile of a radix sort pass on keys of width bytes."""
    d = _DEFINES
    return d["PG_SORT_THREADS"] * d["PG_SORT_ITEMS_WIDE" if width == 8 else "PG_SORT_ITEMS"]
_MAX_BLOCKS = 4096  # grid-stride kernels
_UTYPES = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}
_MODES = {"b": 3, "i": 1, "u": 0, "f": 2, "c": 2}  # pg::SORT_* of each kind
_DESCENDING = 4
# sizes from which the look-back's words are 64-bit (a count in 30 bits below)
# and the values between passes int64 (32-bit indices below)
_WIDE_WORDS = 2**30
_WIDE_VALUES = 2**32

# ---- kernels: thin wrappers of sort.h's device functions, in one unit on the
# simulator (the host compiler's start-up dominates) and a unit per group on a GPU


def _wrappers():
    """{kernel name: (group, CUDA C)}."""
    out = {}

    def add(group, name, params, body, bounds=""):
        out[name] = (group, f'extern "C" __global__ void {bounds}{name}({params})\n{{\n'
                            f"    {body};\n}}\n")

    for w, u in _UTYPES.items():
        g = f"sort{w}"
        add(f"search{w}", f"pg_key_range_{w}",
            f"const {u} *x, long long n, long long mode, unsigned long long *out",
            f"pg::key_range<{u}>(x, n, (int)mode, out)")
        add(g, f"pg_sort_hist_{w}",
            f"const {u} *in, long long n, long long mode, unsigned long long *hist",
            f"pg::sort_histogram<{u}>(in, n, (int)mode, hist)")
        for ww, word in ((4, "unsigned int"), (8, "unsigned long long")):
            for pairs in ("k", "p"):
                add(f"{g}_{ww}{pairs}", f"pg_sort_pass_{w}_{ww}{pairs}",
                    f"const {u} *kin, {u} *kout, const void *vin, void *vout, long long wide, "
                    "long long n, long long shift, const unsigned long long *offsets, "
                    "unsigned long long *counter, char *state, long long in_mode, "
                    "long long out_mode",
                    f"pg::sort_pass<{u}, {word}, {'true' if pairs == 'p' else 'false'}>("
                    "kin, kout, vin, vout, (int)wide, n, (int)shift, offsets, counter, "
                    f"({word} *)state, (int)in_mode, (int)out_mode)",
                    "__launch_bounds__(PG_SORT_THREADS, PG_SORT_MIN_BLOCKS) ")
        for c in (("", "false"), ("c", "true")) if w >= 4 else (("", "false"),):
            tag, cplx = f"{w}{c[0]}", c[1]
            g = f"search{tag}"
            add(g, f"pg_searchsorted_{tag}",
                f"const {u} *a, long long n, const {u} *v, long long m, long long mode, "
                "long long right, long long *out",
                f"pg::searchsorted<{u}, {cplx}>(a, n, v, m, (int)mode, right != 0, out)")
            add(g, f"pg_isin_{tag}",
                f"const {u} *a, long long n, const {u} *x, long long m, long long mode, "
                "long long invert, bool *out",
                f"pg::isin<{u}, {cplx}>(a, n, x, m, (int)mode, invert != 0, out)")
            add(g, f"pg_unique_mark_{tag}",
                f"const {u} *s, long long n, long long mode, long long equal_nan, "
                "unsigned char *rest",
                f"pg::unique_mark<{u}, {cplx}>(s, n, (int)mode, equal_nan != 0, rest)")
        if w >= 4:
            add(f"search{w}c", f"pg_complex_keys_{w}",
                f"const {u} *x, long long n, long long mode, unsigned char *c, {u} *re, "
                f"{u} *im", f"pg::complex_keys<{u}>(x, n, (int)mode, c, re, im)")
    for w, t in (*_UTYPES.items(), (16, "pg::sort_bytes16")):
        add("misc", f"pg_gather_{w}",
            f"const {t} *in, const long long *idx, long long n, {t} *out",
            f"pg::gather<{t}>(in, idx, n, out)")
    add("misc", "pg_sort_iota", "long long *out, long long n", "pg::sort_iota(out, n)")
    for w in (4, 8):
        add("misc", f"pg_sort_row_keys_{w}",
            f"const long long *perm, long long n, long long m, {_UTYPES[w]} *out",
            f"pg::sort_row_keys<{_UTYPES[w]}>(perm, n, m, out)")
    add("misc", "pg_sort_in_rows", "const long long *perm, long long n, long long m, "
        "long long *out", "pg::sort_in_rows(perm, n, m, out)")
    add("misc", "pg_unique_counts", "const long long *starts, long long k, long long n, "
        "long long *counts", "pg::unique_counts(starts, k, n, counts)")
    add("misc", "pg_unique_inverse", "const long long *starts, long long k, "
        "const long long *perm, long long n, long long *inverse",
        "pg::unique_inverse(starts, k, perm, n, inverse)")
    add("misc", "pg_bincount", "const long long *x, long long n, const double *w, "
        "unsigned long long *counts, double *sums", "pg::bincount(x, n, w, counts, sums)")
    add("misc", "pg_histogram", "const double *x, long long n, const double *edges, "
        "long long bins, const double *w, unsigned long long *counts, double *sums",
        "pg::histogram(x, n, edges, bins, w, counts, sums)")
    return out


_lock = threading.Lock()
_table = None
_units = {}  # (device, group or None) -> RawModule
_functions = {}  # (device, kernel name) -> Function
if os.environ.get("PYGPU_SORT_DEFINES"):
    _set_defines(**dict(kv.split("=", 1) for kv in os.environ["PYGPU_SORT_DEFINES"].split()))


def render(group=None):
    """The CUDA C of a unit: the kernels of one group, or all of them."""
    global _table
    if _table is None:
        _table = _wrappers()
    # the radix sort's groups (sortW...) alone depend on the defines
    defines = "".join(f"#define {k} {v}\n" for k, v in _DEFINES.items()) \
        if group is None or group.startswith("sort") else ""
    return defines + "#include <pygpu/sort.h>\n\n" + "\n".join(
        src for g, src in _table.values() if group is None or g == group)


def _function(name):
    """The kernel `name` for the current device, compiled (or loaded from the
    caches) on first use: with its group on a GPU, with every kernel of the
    area on the simulator."""
    device = _core.get_device()
    f = _functions.get((device, name))
    if f is not None:
        return f
    from ..rawkernel import RawModule

    render()
    group = None if _core._host_modules() else _table[name][0]
    with _lock:
        unit = _units.get((device, group))
        if unit is None:
            unit = RawModule(render(group), check=False)
            _units[(device, group)] = unit
    f = unit.get_function(name)
    _functions[(device, name)] = f
    return f


def _launch(name, n, *args):
    """A grid-stride kernel over n items."""
    blocks = max(1, min(-(-n // _THREADS), _MAX_BLOCKS))
    _function(name)[blocks, _THREADS](*args)


# ---- arguments ----------------------------------------------------------------------

def _on_its_device(f):
    """f run with the device of its first DeviceArray argument current (a
    sequence's first, for lexsort's keys)."""
    @functools.wraps(f)
    def run(*args, **kwargs):
        for x in (*args, *kwargs.values()):
            first = x if isinstance(x, DeviceArray) else next(
                (y for y in x if isinstance(y, DeviceArray)), None) \
                if isinstance(x, (list, tuple)) else None
            if first is not None:
                with first.device:
                    return f(*args, **kwargs)
        return f(*args, **kwargs)
    return run


def _same_device(name, *arrays):
    ids = {a.device.id for a in arrays}
    if len(ids) > 1:
        raise ValueError(f"{name}: the arrays are on different devices ({sorted(ids)}); "
                         "copy them to one first")


def _array(name, x):
    if isinstance(x, DeviceArray):
        if x.dtype.char not in DEVICE_TYPES:  # pragma: no cover (the C type refuses them)
            raise TypeError(f"{name}: pygpu does not support dtype {x.dtype} on the device")
        return x
    from .ufunc import _host_array_error

    if isinstance(x, np.ndarray) or isinstance(x, (list, tuple)):
        raise _host_array_error(name, x)
    raise TypeError(f"{name} takes a DeviceArray, not {type(x).__name__}")


def _scalar_array(name, x, what="value"):
    """A DeviceArray, or a scalar (Python or NumPy, of a device dtype) as a 0-d
    one."""
    if isinstance(x, DeviceArray):
        return x
    if isinstance(x, (bool, int, float, complex, np.generic)):
        try:
            dt = np.asarray(x).dtype
        except OverflowError:
            dt = np.dtype(object)
        if dt.char not in DEVICE_TYPES:
            raise TypeError(f"{name}: the {what} {x!r} has dtype {dt}, which pygpu does not "
                            "support on the device")
        return _core.asarray(np.asarray(x))
    return _array(name, x)


def _contiguous(x):
    return x if x.is_c_contiguous() else x.copy()


def _flat(x):
    return _contiguous(x).reshape(-1)


def _kind_arg(kind, stable):
    if kind is not None:
        if stable is not None:
            raise ValueError("`kind` and keyword parameters can't be provided at the same "
                             "time. Use only one of them.")
        if not isinstance(kind, str) or not kind or kind[0].lower() not in "qhms":
            raise ValueError("sort kind must be one of 'quick', 'heap', or 'stable' "
                             f"(got {kind!r})")


def _order_arg(order):
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")


def _rows(x, axis):
    """x as contiguous rows along axis: (flat array, rows, length, back),
    back(flat result) giving the result in x's shape (C order)."""
    if axis is None:
        flat = _flat(x)
        return flat, 1, flat.size, lambda r: r
    ax = normalize_axis_index(operator.index(axis), x.ndim)
    if ax == x.ndim - 1:
        y = _contiguous(x)
        shape = y.shape
        return y.reshape(-1), max(1, y.size // max(1, shape[-1])), shape[-1], \
            lambda r: r.reshape(shape)
    order = [i for i in range(x.ndim) if i != ax] + [ax]
    y = x.transpose(order).copy()
    shape = y.shape
    back = [order.index(i) for i in range(x.ndim)]
    return y.reshape(-1), max(1, y.size // max(1, shape[-1])), shape[-1], \
        lambda r: r.reshape(shape).transpose(back).copy()


# ---- the radix sort ------------------------------------------------------------------

def _histograms(word, width, mode, n):
    """(the passes to run, each digit's first place per pass, how many elements
    a sort of keys alone would change)."""
    from .reduction import _sm_count

    hist = _core.zeros((width * 256 + 1,), np.uint64)
    # a few blocks an SM, each adding its counts to hist once
    blocks = max(1, min(-(-n // (_THREADS * 16)),
                        _DEFINES["PG_SORT_HIST_BLOCKS"] * _sm_count(word.device)))
    _function(f"pg_sort_hist_{width}")[blocks, _THREADS](word, n, mode, hist)
    h = hist.copy_to_host()
    counts = h[:-1].reshape(width, 256)
    passes = [p for p in range(width) if counts[p].max() < n]
    offsets = np.zeros_like(counts)
    np.cumsum(counts[:, :-1], axis=1, out=offsets[:, 1:])
    return passes, offsets, int(h[-1])


def _iota(n):
    out = _core.empty((n,), np.int64)
    if n:
        _launch("pg_sort_iota", n, out, n)
    return out


def _radix(word, width, mode, n, vals=None, keys_out=None, hist=None):
    """The stable sort by word's keys (width bytes each, bits of mode): the
    values (vals, or the indices) in key order; or, with keys_out, the keys
    alone turned back into elements there (None where no pass is needed)."""
    passes, offsets, _ = hist if hist is not None else _histograms(word, width, mode, n)
    pairs = keys_out is None
    if not passes:
        return (vals if vals is not None else _iota(n)) if pairs else None
    tiles = -(-n // _tile(width))
    ww = 4 if n < _WIDE_WORDS else 8
    per = 8 + tiles * 256 * ww
    state = _core.zeros((len(passes) * per,), np.uint8)
    offs = _core.asarray(np.ascontiguousarray(offsets[passes]).reshape(-1))
    udt = np.dtype(f"u{width}")
    kbuf = [_core.empty((n,), udt) for _ in range(min(2, len(passes) - 1))]
    # values between passes: 32-bit where the indices fit, the last pass's int64
    narrow = np.uint32 if n < _WIDE_VALUES else np.int64
    vbuf = [_core.empty((n,), narrow) for _ in range(min(2, len(passes) - 1))] if pairs else []
    final = _core.empty((n,), np.int64) if pairs else 0
    f = _function(f"pg_sort_pass_{width}_{ww}{'p' if pairs else 'k'}")
    threads = _DEFINES["PG_SORT_THREADS"]
    kin, vin = word, (vals if vals is not None else 0)
    for i, p in enumerate(passes):
        last = i == len(passes) - 1
        if last:
            kout, out_mode = (0, -1) if pairs else (keys_out, mode)
        else:
            kout, out_mode = kbuf[i % 2], 0
        vout = (final if last else vbuf[i % 2]) if pairs else 0
        wide = int(i == 0 or narrow is np.int64) | 2 * int(last or narrow is np.int64)
        base = i * per
        f[tiles, threads](kin, kout, vin, vout, wide, n, 8 * p, offs[256 * i:256 * (i + 1)],
                          state[base:base + 8], state[base + 8:base + per],
                          mode if i == 0 else 0, out_mode)
        kin, vin = kout, vout
    return vin if pairs else keys_out


def _gather(x, idx):
    """x[idx] of a flat contiguous x (int64 indices, in range)."""
    out = _core.empty((idx.size,), x.dtype)
    if idx.size:
        _launch(f"pg_gather_{x.itemsize}", idx.size, x, idx, idx.size, out)
    return out


def _extremes(x):
    """The smallest and largest elements of a flat contiguous array of
    numbers (not empty), as NumPy scalars of its dtype: NaN (both) where it
    holds a NaN, as numpy.min and max give."""
    w = x.itemsize
    out = _core.asarray(np.array([2**64 - 1, 0], np.uint64))
    _launch(f"pg_key_range_{w}", x.size, x, x.size, _mode(x.dtype), out)
    u = np.dtype(f"u{w}").type
    sign = u(1) << u(8 * w - 1)
    values = []
    for k in out.copy_to_host().astype(u):
        kind = x.dtype.kind
        if kind == "i":
            k = k ^ sign
        elif kind == "f":
            k = np.array(np.nan, x.dtype).view(u)[()] if k == u(~u(0)) else \
                k ^ sign if k & sign else u(~k)
        values.append(np.array(k, u).view(x.dtype)[()] if kind != "b" else np.bool_(k))
    if x.dtype.kind == "f" and np.isnan(values[1]):
        values[0] = values[1]
    return values


def _mode(dtype, descending=False):
    return _MODES[KINDS[dtype.char]] | (_DESCENDING if descending else 0)


def _words(flat, descending):
    """The keys of a flat contiguous array, most significant first: (array,
    width, mode) each."""
    n = flat.size
    if flat.dtype.kind != "c":
        return [(flat, flat.itemsize, _mode(flat.dtype, descending))]
    w = flat.itemsize // 2
    udt = np.dtype(f"u{w}")
    c, re, im = (_core.empty((n,), np.uint8), _core.empty((n,), udt), _core.empty((n,), udt))
    if n:
        _launch(f"pg_complex_keys_{w}", n, flat, n, _mode(flat.dtype, descending), c, re, im)
    return [(c, 1, 0), (re, w, 0), (im, w, 0)]


def _argsort_words(keys, n, rows, length):
    """The stable order (flat indices) of n elements by keys (lists of words,
    most significant first), within rows of `length` when rows > 1."""
    perm = None
    for words in keys:
        for arr, w, mode in reversed(words):
            key = arr if perm is None else _gather(arr, perm)
            perm = _radix(key, w, mode, n, vals=perm)
    if rows > 1:
        w = 4 if rows < 2**32 else 8
        rk = _core.empty((n,), np.dtype(f"u{w}"))
        _launch(f"pg_sort_row_keys_{w}", n, perm, n, length, rk)
        perm = _radix(rk, w, 0, n, vals=perm)
    return perm


def _in_rows(perm, n, length, rows):
    if rows == 1:
        return perm
    out = _core.empty((n,), np.int64)
    _launch("pg_sort_in_rows", n, perm, n, length, out)
    return out


def _sorted_flat(flat, rows, length, descending):
    """flat (contiguous, rows of length) sorted in each row."""
    n = flat.size
    if n == 0:
        return flat.copy()
    if flat.dtype.kind != "c" and rows == 1:
        w, mode = flat.itemsize, _mode(flat.dtype, descending)
        hist = _histograms(flat, w, mode, n)
        if hist[2] == 0:  # nothing a sort of keys alone would change
            out = _core.empty((n,), flat.dtype)
            r = _radix(flat, w, mode, n, keys_out=out, hist=hist)
            return flat.copy() if r is None else r
    perm = _argsort_words([_words(flat, descending)], n, rows, length)
    return _gather(flat, perm)


# ---- sort, argsort, partition, lexsort -------------------------------------------------

@_on_its_device
def sort(a, axis=-1, kind=None, order=None, *, descending=False, stable=None):
    """numpy.sort and the standard's sort(x, /, *, axis=-1, descending=False,
    stable=True): a sorted copy along axis (None: flattened). Always stable
    (a radix sort); NaNs last (first with descending=True, as the standard's
    stable descending sort puts them), -0.0 and 0.0 equal."""
    a = _array("sort", a)
    _kind_arg(kind, stable)
    _order_arg(order)
    if a.ndim == 0 and axis is not None:
        normalize_axis_index(operator.index(axis), 0)
    flat, rows, length, back = _rows(a, axis)
    return back(_sorted_flat(flat, rows, length, bool(descending)))


@_on_its_device
def argsort(a, axis=-1, kind=None, order=None, *, descending=False, stable=None):
    """numpy.argsort and the standard's argsort: the indices (int64) that sort
    a along axis (None: flattened), stable; descending keeps equal elements in
    their order (NaNs first)."""
    a = _array("argsort", a)
    _kind_arg(kind, stable)
    _order_arg(order)
    if a.ndim == 0:
        if axis is not None:
            normalize_axis_index(operator.index(axis), 1)  # NumPy takes the 0-d as 1-d
        return _core.zeros((1,), np.int64)
    flat, rows, length, back = _rows(a, axis)
    n = flat.size
    if n == 0:
        return back(_core.empty((0,), np.int64))
    perm = _argsort_words([_words(flat, bool(descending))], n, rows, length)
    return back(_in_rows(perm, n, length, rows))


@_on_its_device
def sort_complex(a):
    """numpy.sort_complex: sorted along the last axis, as complex64 for 8- and
    16-bit integers, else complex128 (complex input keeps its dtype)."""
    b = sort(_array("sort_complex", a))
    if b.dtype.kind == "c":
        return b
    return b.astype(np.complex64 if b.dtype.char in "bhBH" else np.complex128)


def _kth(kth, n):
    ks = np.asarray(kth)
    if ks.dtype == np.bool_:
        raise ValueError("Booleans unacceptable as partition index")
    if ks.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    for k in ks.reshape(-1):
        if not -n <= k < n:
            raise ValueError(f"kth(={int(k)}) out of bounds ({n})")


def _partition_axis(name, a, kth, axis):
    a = _array(name, a)
    if a.ndim == 0 and axis is not None:
        normalize_axis_index(operator.index(axis), 0)
    n = a.size if axis is None else a.shape[normalize_axis_index(operator.index(axis), a.ndim)]
    _kth(kth, n)
    return a


@_on_its_device
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """numpy.partition by a full stable sort: the element at each kth is where
    a sort puts it, the smaller ones before it and the others after (one of
    the arrangements NumPy allows)."""
    a = _partition_axis("partition", a, kth, axis)
    _order_arg(order)
    return sort(a, axis)


@_on_its_device
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """numpy.argpartition by a full stable argsort."""
    a = _argpartition_arg(a, kth, axis)
    _order_arg(order)
    return argsort(a, axis)


def _argpartition_arg(a, kth, axis):
    a = _array("argpartition", a)
    if a.ndim == 0:
        _kth(kth, 1)
        return a
    return _partition_axis("argpartition", a, kth, axis)


@_on_its_device
def lexsort(keys, axis=-1):
    """numpy.lexsort: the indices (int64) that sort by the last key, then the
    one before it, ... (stable), along axis."""
    if isinstance(keys, DeviceArray):
        keys = [keys[i] for i in range(keys.shape[0])] if keys.ndim else [keys]
    elif isinstance(keys, (np.ndarray, list, tuple)) and not isinstance(keys, np.ndarray):
        keys = list(keys)
    else:
        keys = [_array("lexsort", keys)]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    keys = [_array("lexsort", k) for k in keys]
    _same_device("lexsort", *keys)
    shape = keys[0].shape
    if any(k.shape != shape for k in keys):
        raise ValueError("all keys need to be the same shape")
    if len(shape) == 0:
        return _core.zeros((), np.int64)
    laid = [_rows(k, axis) for k in keys]
    _, rows, length, back = laid[0]
    n = laid[0][0].size
    if n == 0:
        return back(_core.empty((0,), np.int64))
    perm = _argsort_words([_words(flat, False) for flat, *_ in laid], n, rows, length)
    return back(_in_rows(perm, n, length, rows))


# ---- searchsorted, isin --------------------------------------------------------------

def _common(name, a, v):
    """a and v (a DeviceArray or scalar) in their common dtype (NumPy's:
    a Python scalar is its own type)."""
    v = _scalar_array(name, v)
    _same_device(name, a, v)
    dt = np.result_type(a.dtype, v.dtype)
    return (a if a.dtype == dt else a.astype(dt)), (v if v.dtype == dt else v.astype(dt))


def _tag(dtype):
    return f"{dtype.itemsize // 2}c" if dtype.kind == "c" else f"{dtype.itemsize}"


@_on_its_device
def searchsorted(a, v, side="left", sorter=None):
    """numpy.searchsorted: where each element of v goes in sorted 1-D a (int64,
    v's shape), in NumPy's sort order (NaNs last)."""
    a = _array("searchsorted", a)
    if a.ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-D, not of shape {a.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")
    if sorter is not None:
        sorter = _array("searchsorted", sorter)
        _same_device("searchsorted", a, sorter)
        if sorter.dtype.kind not in "iu" or sorter.ndim != 1:
            raise TypeError("searchsorted: sorter must be a 1-D integer DeviceArray")
        if sorter.size != a.size:
            raise ValueError("sorter.size must equal a.size")
        if a.size:
            sorter = _flat(sorter).astype(np.int64)
            lo, hi = _extremes(sorter)
            if lo < 0 or hi >= a.size:
                raise ValueError("Sorter index out of range.")
            a = _gather(_flat(a), sorter)
    a, v = _common("searchsorted", a, v)
    a, vf = _flat(a), _flat(v)
    out = _core.empty((vf.size,), np.int64)
    if vf.size:
        _launch(f"pg_searchsorted_{_tag(a.dtype)}", vf.size, a, a.size, vf, vf.size,
                _mode(a.dtype), int(side == "right"), out)
    return out.reshape(v.shape)


@_on_its_device
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """numpy.isin: whether each element is one of test_elements (==: -0.0 is
    0.0, NaN is nothing), element's shape."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: {kind!r}. Please use None, 'sort' or 'table'.")
    element = _scalar_array("isin", element, "element")
    test = _scalar_array("isin", test_elements, "test_elements")
    element, test = _common("isin", element, test)
    flat = _flat(test)
    s = _sorted_flat(flat, 1, flat.size, False)
    x = _flat(element)
    out = _core.empty((x.size,), np.bool_)
    if x.size:
        _launch(f"pg_isin_{_tag(x.dtype)}", x.size, s, s.size, x, x.size, _mode(x.dtype),
                int(bool(invert)), out)
    return out.reshape(element.shape)


# ---- unique --------------------------------------------------------------------------

UniqueAllResult = collections.namedtuple(
    "UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult",
                                             ["values", "inverse_indices"])


def _groups(perm, rest, n):
    """(first place of each group in sorted order, counts, inverse) of n
    sorted elements, perm their order, rest a uint8 word 0 where a group
    starts and 1 elsewhere."""
    hist = _histograms(rest, 1, 0, n)
    k = int(hist[1][0][1])  # the first place of key 1: how many 0s
    starts = _radix(rest, 1, 0, n, hist=hist)[:k]  # the starts first, in order
    counts = _core.empty((k,), np.int64)
    _launch("pg_unique_counts", k, starts, k, n, counts)
    inverse = _core.empty((n,), np.int64)
    _launch("pg_unique_inverse", n, starts, k, perm, n, inverse)
    return starts, counts, inverse


def _unique(x, equal_nan):
    """(values, first indices, inverse (x's shape), counts) of x flattened."""
    flat = _flat(x)
    n = flat.size
    if n == 0:
        e = _core.empty((0,), np.int64)
        return flat.copy(), e, _core.empty(x.shape, np.int64), _core.empty((0,), np.int64)
    perm = _argsort_words([_words(flat, False)], n, 1, n)
    s = _gather(flat, perm)
    rest = _core.empty((n,), np.uint8)  # 0 where a group starts
    _launch(f"pg_unique_mark_{_tag(s.dtype)}", n, s, n, _mode(s.dtype), int(bool(equal_nan)),
            rest)
    starts, counts, inverse = _groups(perm, rest, n)
    return _gather(s, starts), _gather(perm, starts), inverse.reshape(x.shape), counts


def _unique_rows(x, axis):
    """numpy.unique(x, axis=axis)'s (values, first indices, inverse (1-D),
    counts): the subarrays along axis, sorted lexicographically (their
    elements in C order, each as sort orders it: NaNs last, -0.0 equal to
    0.0) and told apart by != (so a NaN makes every subarray distinct, as
    NumPy's structured comparison does, whatever equal_nan says)."""
    import pygpu

    ax = normalize_axis_index(operator.index(axis), x.ndim)
    moved = pygpu.moveaxis(x, ax, 0)
    n, rest_shape = moved.shape[0], moved.shape[1:]
    m = int(np.prod(rest_shape, dtype=np.int64))
    rows = _contiguous(moved).reshape((n, m))

    def back(values):
        return pygpu.moveaxis(values.reshape((values.shape[0], *rest_shape)), 0, ax)

    if n == 0:
        e = _core.empty((0,), np.int64)
        return back(rows.copy()), e, e, _core.empty((0,), np.int64)
    if m:  # the columns as keys, sorted by the last first (lexsort's order)
        cols = _contiguous(rows.T)
        perm = _argsort_words([_words(cols[j], False) for j in reversed(range(m))], n, 1, n)
        srt = pygpu.take(rows, perm, axis=0)
        new = pygpu.any(srt[1:] != srt[:-1], axis=1)
    else:  # every row empty, so equal
        perm, srt = _iota(n), rows
        new = _core.zeros((n - 1,), np.bool_)
    rest = _core.empty((n,), np.uint8)
    rest[:1] = 0
    rest[1:] = ~new
    starts, counts, inverse = _groups(perm, rest, n)
    return back(pygpu.take(srt, starts, axis=0)), _gather(perm, starts), inverse, counts


@_on_its_device
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):  # noqa: A002
    """numpy.unique: the sorted unique values (with axis: the unique
    subarrays along it, sorted lexicographically), and as asked the index of
    each one's first occurrence, the inverse (ar's shape; 1-D with axis) and
    the counts. equal_nan: every NaN one value (axis=None only, as NumPy)."""
    ar = _scalar_array("unique", ar, "array")
    if axis is None:
        values, index, inverse, counts = _unique(ar, equal_nan)
    else:
        values, index, inverse, counts = _unique_rows(ar, axis)
    extra = [r for r, want in ((index, return_index), (inverse, return_inverse),
                               (counts, return_counts)) if want]
    return (values, *extra) if extra else values


@_on_its_device
def unique_all(x, /):
    """The standard's unique_all (NaNs distinct): values, indices,
    inverse_indices (x's shape), counts."""
    return UniqueAllResult(*_unique(_array("unique_all", x), False))


@_on_its_device
def unique_counts(x, /):
    """The standard's unique_counts (NaNs distinct)."""
    values, _, _, counts = _unique(_array("unique_counts", x), False)
    return UniqueCountsResult(values, counts)


@_on_its_device
def unique_inverse(x, /):
    """The standard's unique_inverse (NaNs distinct; inverse of x's shape)."""
    values, _, inverse, _ = _unique(_array("unique_inverse", x), False)
    return UniqueInverseResult(values, inverse)


@_on_its_device
def unique_values(x, /):
    """The standard's unique_values (NaNs distinct)."""
    return _unique(_array("unique_values", x), False)[0]


# ---- bincount, histogram -------------------------------------------------------------

def _weights(name, w, n, x):
    w = _array(name, w)
    _same_device(name, x, w)
    if w.dtype.kind == "c":
        raise TypeError(f"Cannot cast array data from dtype('{w.dtype}') to "
                        "dtype('float64') according to the rule 'safe'")
    if w.size != n:
        raise ValueError("The weights and list don't have the same length.")
    return _flat(w).astype(np.float64)


@_on_its_device
def bincount(x, weights=None, minlength=0):
    """numpy.bincount: how many times each value 0, 1, ... occurs in x
    (int64), or the sum of its weights (float64, summed in any order)."""
    x = _array("bincount", x)
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim else
                         "object of too small depth for desired array")
    if x.dtype.kind not in "biu":
        raise TypeError(f"Cannot cast array data from dtype('{x.dtype}') to "
                        "dtype('int64') according to the rule 'safe'")
    minlength = 0 if minlength is None else operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    n = x.size
    xi = _flat(x).astype(np.int64)
    w = _weights("bincount", weights, n, x) if weights is not None else None
    length = minlength
    if n:
        lo, hi = _extremes(xi)
        if lo < 0:
            raise ValueError("'list' argument must have no negative elements")
        length = max(length, int(hi) + 1)
    out = _core.zeros((length,), np.float64 if w is not None else np.int64)
    if n:
        if w is None:
            _launch("pg_bincount", n, xi, n, 0, out, 0)
        else:
            _launch("pg_bincount", n, xi, n, w, 0, out)
    return out


@_on_its_device
def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """numpy.histogram: (hist, bin_edges) as DeviceArrays. The edges are
    NumPy's (numpy.histogram_bin_edges on the data's extremes, or on the data
    copied to the host for a string of bins); the counting is on the device,
    a value in bin b where edges[b] <= value < edges[b + 1] (the last bin
    closed), as NumPy counts."""
    a = _array("histogram", a)
    if a.dtype.kind == "c":
        raise TypeError("histogram: complex input is not supported on DeviceArrays")
    flat = _flat(a)
    n = flat.size
    if weights is not None:
        w_arr = _array("histogram", weights)
        _same_device("histogram", a, w_arr)
        if w_arr.shape != a.shape:
            raise ValueError("weights should have the same shape as a.")
    if isinstance(bins, DeviceArray):
        bins = bins.copy_to_host()
    if isinstance(bins, str):
        edges = np.histogram_bin_edges(flat.copy_to_host(), bins, range)
    elif np.ndim(bins) == 1:
        edges = np.histogram_bin_edges(np.empty(0, a.dtype), bins, range)
    else:
        stand = np.empty(0, a.dtype) if n == 0 or range is not None else \
            np.array(_extremes(flat), a.dtype)
        edges = np.histogram_bin_edges(stand, bins, range)
    nb = len(edges) - 1
    ntype = np.dtype(np.intp) if weights is None else w_arr.dtype
    if ntype.kind == "c":
        raise TypeError("histogram: complex weights are not supported on DeviceArrays")
    w = _flat(w_arr).astype(np.float64) if weights is not None else None
    out = _core.zeros((nb,), np.int64 if w is None else np.float64)
    if n:
        x = flat.astype(np.float64)
        e = _core.asarray(np.asarray(edges, np.float64))
        if w is None:
            _launch("pg_histogram", n, x, n, e, nb, 0, out, 0)
        else:
            _launch("pg_histogram", n, x, n, e, nb, w, 0, out)
    if w is not None and out.dtype != ntype:
        out = out.astype(ntype)
    if density:
        h = out.copy_to_host()
        h = h / np.diff(edges).astype(float) / h.sum()
        out = _core.asarray(h)
    return out, _core.asarray(edges)


# ---- DeviceArray's methods -------------------------------------------------------------

def _sort_method(self, axis=-1, kind=None, order=None, *, stable=None):
    """ndarray.sort: sorts in place along axis (an int: not None)."""
    r = sort(self, operator.index(axis), kind, order, stable=stable)
    self[...] = r


def _argsort_method(self, axis=-1, kind=None, order=None, *, stable=None):
    return argsort(self, axis, kind, order, stable=stable)


def _searchsorted_method(self, v, side="left", sorter=None):
    return searchsorted(self, v, side, sorter)


def _partition_method(self, kth, axis=-1, kind="introselect", order=None):
    """ndarray.partition: in place (a full sort)."""
    self[...] = partition(self, kth, axis, kind, order)


def _argpartition_method(self, kth, axis=-1, kind="introselect", order=None):
    return argpartition(self, kth, axis, kind, order)


__all__ = ["argpartition", "argsort", "bincount", "histogram", "isin", "lexsort", "partition",
           "searchsorted", "sort", "unique", "unique_all", "unique_counts", "unique_inverse",
           "unique_values"]
NUMPY = {  # numpy function -> implementation (np.f(d) on DeviceArrays)
    np.sort: sort, np.argsort: argsort, np.partition: partition,
    np.argpartition: argpartition, np.lexsort: lexsort, np.searchsorted: searchsorted,
    np.isin: isin, np.unique: unique, np.unique_all: unique_all,
    np.unique_counts: unique_counts, np.unique_inverse: unique_inverse,
    np.unique_values: unique_values, np.bincount: bincount, np.histogram: histogram,
    np.sort_complex: sort_complex,
}
ATTRIBUTES = {  # DeviceArray attribute name -> function(array) -> value
    "sort": method(_sort_method), "argsort": method(_argsort_method),
    "searchsorted": method(_searchsorted_method), "partition": method(_partition_method),
    "argpartition": method(_argpartition_method),
}
