"""Indexing with integer arrays and boolean masks (getting and setting, with
NumPy's rules), and take, take_along_axis, put, nonzero, argwhere, flatnonzero,
compress, extract, place.

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads.

How a key is done (getitem, setitem): its items are classified as NumPy
classifies them; a boolean array becomes the integer arrays of its nonzero
(on the device), a bool scalar a new axis indexed by [0] or []; the basic
items (ints, slices, None) make a view V (the C path); the integer arrays,
broadcast together (shape B), index their axes of V, and B stands where
NumPy puts it (in place of adjacent advanced indices, else first). One
kernel (pygpu/include/pygpu/index.h, move) gathers or scatters over the
result's axes, folded, with every index checked against its axis on the
device; a bad index leaves the smallest (element, array) in a word that is
read back after the launch (one device-to-host read of 8 bytes, which waits
for the kernel), and only for device index arrays: host ones are checked by
NumPy before they are copied, those from a mask are in bounds. A scatter
with device index arrays checks them in a launch of its own first (move
with nothing written), so that a bad index writes nothing, as NumPy's.
Writes (setitem, put, place) into a read-only array (broadcast_to,
diagonal) are NumPy's ValueError.

x[mask] with a mask of x's shape is a compaction (index.h: count, scan,
select: three launches and one read of the count, which the result's shape
needs). Up to 4096 elements (one tile), one launch counts and selects into
an array of the mask's size, and the result is a view of its first `count`
elements; that kernel writes the count into a word of page-locked host
memory (a few, shared by the threads), which is read after a wait for the
stream (no copy, no count array).

Repeated indices in a setitem (x[[0, 0]] = [1, 2]): one of the writes wins,
which one is not defined on a GPU (NumPy: the last).
"""

import math
import operator
import os
import threading

import numpy as np

from .. import _core
from .._core import DeviceArray
from . import method

__all__ = ["argwhere", "compress", "extract", "flatnonzero", "nonzero", "place", "put",
           "take", "take_along_axis", "where"]

_THREADS = 256
_TILE = 4096  # index.h's PG_INDEX_TILE
_SCAN_THREADS = 1024
_MAX_BLOCKS = 1 << 20
# a mask's scan: index.h's scan_batched, its total read from a count word
# (True), or scan and a copy of the total (False); PYGPU_INDEX_SCAN_WORD=1
_SCAN_WORD = os.environ.get("PYGPU_INDEX_SCAN_WORD", "0") == "1"
_SIZES = (1, 2, 4, 8, 16)
_VALID = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
          "integer or boolean arrays are valid indices")

# ---- kernels ------------------------------------------------------------------------


def _sources():
    """{kernel name: its CUDA C}."""
    sel = "const unsigned char *mask, long long n, const long long *offsets"
    out = {
        "pg_index_count": "pg_index_count(const unsigned char *mask, long long n, long long "
                          "*counts)\n{ pg::index::count(mask, n, counts); }",
        "pg_index_scan": "pg_index_scan(long long *counts, long long tiles)\n"
                         "{ pg::index::scan(counts, tiles); }",
        "pg_index_scan_word": "pg_index_scan_word(long long *counts, long long tiles, "
                              "long long *total)\n"
                              "{ pg::index::scan_batched(counts, tiles, total); }",
        "pg_index_coords": f"pg_index_coords({sel}, long long *out, long long count, const "
                           "long long *shape, long long nd)\n{ pg::index::select(mask, n, "
                           "offsets, pg::index::coordinates{out, count, shape, (int)nd}); }",
    }
    for s in _SIZES:
        w = f"pg::index::word<{s}>::type"
        out[f"pg_index_take{s}"] = (
            f"pg_index_take{s}({sel}, const char *x, char *out)\n{{ pg::index::select(mask, "
            f"n, offsets, pg::index::take_values<{w}>{{(const {w} *)x, ({w} *)out}}); }}")
        out[f"pg_index_take_one{s}"] = (
            f"pg_index_take_one{s}(const unsigned char *mask, long long n, const char *x, "
            f"char *out, long long *total)\n{{ pg::index::select(mask, n, 0, "
            f"pg::index::take_values<{w}>{{(const {w} *)x, ({w} *)out}}, total); }}")
        out[f"pg_index_place{s}"] = (
            f"pg_index_place{s}({sel}, char *x, const char *v, long long nv)\n"
            f"{{ pg::index::select(mask, n, offsets, pg::index::put_values<{w}>"
            f"{{({w} *)x, (const {w} *)v, nv}}); }}")
        for tag, ctype in (("i4", "int"), ("i8", "long long")):
            for what, put in (("gather", "false"), ("scatter", "true")):
                out[f"pg_index_{what}{s}_{tag}"] = (
                    f"pg_index_{what}{s}_{tag}(char *src, char *other, const char *idx, "
                    "const long long *meta, long long n, unsigned long long *error)\n"
                    f"{{ pg::index::move<{s}, {ctype}, {put}>(src, other, idx, meta, n, "
                    "error); }")
    for tag, ctype in (("i4", "int"), ("i8", "long long")):  # a scatter's indices, first
        out[f"pg_index_check_{tag}"] = (
            f"pg_index_check_{tag}(char *src, char *other, const char *idx, const long long "
            f"*meta, long long n, unsigned long long *error)\n{{ pg::index::move<1, {ctype}, "
            "true, false>(src, other, idx, meta, n, error); }")
    return out


# index.h's compile-time choices (see there), each unit compiled with them;
# PYGPU_INDEX_DEFINES ("PG_INDEX_BATCH=1") or _set_defines() changes them, for
# experiments. BATCH 1: the H200 run of 2026-11-29 (x[x > 0.5] of 2^28 float32
# 0.97x -> 1.10x PyTorch)
_DEFINES = {"PG_INDEX_BATCH": 1}


def _set_defines(**defines):
    """Set index.h's choices (name=int) and drop the kernels compiled with the
    ones before."""
    unknown = set(defines) - set(_DEFINES)
    if unknown:
        raise ValueError(f"unknown index defines {sorted(unknown)}")
    _DEFINES.update({k: int(v) for k, v in defines.items()})
    with _lock:
        _units.clear()
        _functions.clear()
        _take_one.clear()


def render(names):
    """The CUDA C of a unit holding the kernels `names`."""
    sources = _sources()
    defines = "".join(f"#define {k} {v}\n" for k, v in _DEFINES.items())
    return "\n".join([defines + "#include <pygpu/index.h>\n"] +
                     [f'extern "C" __global__ void {sources[n]}\n' for n in names])


_lock = threading.Lock()
_units = {}  # (device, kernel names) -> RawModule
_functions = {}  # (device, kernel name) -> Function


def _kernel(name):
    """The kernel `name` for the current device, compiled (or loaded from the
    caches) on first use: every kernel in one unit on the simulator (the host
    compiler's start-up dominates there), on a GPU in a unit of its own (count
    and scan together), as a first call compiles only what it runs."""
    device = _core.get_device() if _several_devices() else 0
    f = _functions.get((device, name))
    if f is not None:
        return f
    from ..rawkernel import RawModule

    if _core._host_modules():
        names = tuple(_sources())
    else:
        names = ("pg_index_count", "pg_index_scan") if name in ("pg_index_count",
                                                                 "pg_index_scan") else (name,)
    with _lock:
        unit = _units.get((device, names))
        if unit is None:
            unit = _units[(device, names)] = RawModule(render(names), check=False)
    f = _functions[(device, name)] = unit.get_function(name)
    return f


_device_count = []


def _several_devices():
    """Whether the process sees more than one device (asked once)."""
    if not _device_count:
        _device_count.append(_core.device_count())
    return _device_count[0] > 1


def _blocks(n, per):
    return max(1, min(-(-n // per), _MAX_BLOCKS))


# ---- masks: compaction ----------------------------------------------------------------


def _contiguous(a):
    return a if a.is_c_contiguous() else a.copy()


_take_one = {}  # (device, itemsize) -> the launch of pg_index_take_one<itemsize>
_words = []  # free count words: (a page-locked int64 ndarray of 1, its address)
_retired = []  # words that a kernel may still write (a call cut short, a graph): kept
if os.environ.get("PYGPU_INDEX_DEFINES"):
    _set_defines(**dict(kv.split("=", 1) for kv in os.environ["PYGPU_INDEX_DEFINES"].split()))


def _launch_counted(launch, *args):
    """launch(*args, the address of a count word) and the count it leaves:
    the word, one of a few shared by all threads (each call takes one and
    gives it back), is page-locked host memory that the kernel writes itself
    (a device sees it at the host's address), so that reading it takes a
    wait for the launch's stream and no copy."""
    try:
        word = _words.pop()
    except IndexError:
        h = _core.pinned_array((1,), np.int64)
        word = (h, h.__array_interface__["data"][0])
    stream = _core.current_stream()
    if stream.ptr and _several_devices() and stream.device != _core.get_device():
        stream = _core.default_stream()  # the launch runs on this device's own
    queued = False
    try:
        launch(*args, word[1])
        queued = True
        stream.synchronize()
    except BaseException as exc:
        if queued or not isinstance(exc, Exception):  # (a refused launch queues nothing)
            _retired.append(word)  # its kernel may write it yet: never reused
        else:
            _words.append(word)
        raise
    total = word[0].item(0)
    _words.append(word)
    return total


def _count(mask):
    """(the tiles' offsets, or 0 for one tile; the number of true elements)
    of a C-contiguous bool DeviceArray."""
    n = mask.size
    tiles = -(-n // _TILE)
    if tiles == 1:  # the count straight into a count word
        return 0, _launch_counted(_kernel("pg_index_count")[1, _THREADS], mask, n)
    counts = _core.empty((tiles + 1,), np.int64)
    _kernel("pg_index_count")[min(tiles, _MAX_BLOCKS), _THREADS](mask, n, counts)
    if _SCAN_WORD:  # the batched scan, its total into a count word
        return counts, _launch_counted(_kernel("pg_index_scan_word")[1, _SCAN_THREADS],
                                       counts, tiles)
    _kernel("pg_index_scan")[1, _SCAN_THREADS](counts, tiles)
    return counts, int(counts[tiles])


def _select(x, mask):
    """x[mask] for a bool DeviceArray mask of x's shape: a new 1-D array."""
    n = mask.size
    if 0 < n <= _TILE:
        # one tile: count and select in one launch, into room for every
        # element; the result is the first `count` of it (at most one tile
        # of x's bytes held past what it shows)
        if not mask.is_c_contiguous():
            mask = mask.copy()
        if not x.is_c_contiguous():
            x = x.copy()
        out = _core.empty((n,), x.dtype)
        key = (_core.get_device() if _several_devices() else 0, x.itemsize)
        launch = _take_one.get(key)
        if launch is None:
            launch = _take_one[key] = _kernel(f"pg_index_take_one{key[1]}")[1, _THREADS]
        total = _launch_counted(launch, mask, n, x, out)
        return out if total == n else out[:total]
    if n == 0:
        return _core.empty((0,), x.dtype)
    mask = _contiguous(mask)
    offsets, total = _count(mask)
    out = _core.empty((total,), x.dtype)
    if total:
        x = _contiguous(x)
        grid = min(-(-n // _TILE), _MAX_BLOCKS)
        _kernel(f"pg_index_take{x.itemsize}")[grid, _THREADS](mask, n, offsets, x, out)
    return out


_shapes = {}  # (device, shape) -> the shape as a DeviceArray of int64


def _release():
    """Let go of the device memory kept for reuse (pygpu._release_all): the
    shapes and the free count words (page-locked), made again at need. The
    retired words stay: a graph's kernel may write one yet."""
    _shapes.clear()
    _words.clear()


def _coordinates(mask):
    """The coordinates of the true elements of a bool DeviceArray, as an
    (ndim, count) int64 DeviceArray (ndim 1 for a 0-d mask)."""
    mask = _contiguous(mask)
    n, nd = mask.size, max(mask.ndim, 1)
    if n == 0:
        return _core.empty((nd, 0), np.int64)
    offsets, total = _count(mask)
    out = _core.empty((nd, total), np.int64)
    if total:
        key = (_core.get_device(), mask.shape or (1,))
        shape = _shapes.get(key)
        if shape is None:
            shape = _shapes[key] = _core.asarray(np.array(key[1], np.int64))
        grid = min(-(-n // _TILE), _MAX_BLOCKS)
        _kernel("pg_index_coords")[grid, _THREADS](mask, n, offsets, out, total, shape, nd)
    return out


def _as_mask(name, a):
    """a's truth values as a bool DeviceArray."""
    a = _device_array(name, a)
    if a.dtype == np.bool_:
        return a
    from .ufunc import UFUNCS

    return UFUNCS["not_equal"](a, 0)


def _device_array(name, a):
    if isinstance(a, DeviceArray):
        return a
    from .ufunc import _host_array_error

    if isinstance(a, np.ndarray):
        raise _host_array_error(name, a)
    raise TypeError(f"{name} takes a DeviceArray, not {type(a).__name__}")


# ---- keys: NumPy's classification ------------------------------------------------------


def _classify(item):
    """(kind, value): kind "basic" (slice, None, Ellipsis), "int", "bool0"
    (a bool scalar: True or False), "mask" or "array" (a DeviceArray or an
    ndarray of bools or integers)."""
    if item is None or item is Ellipsis or isinstance(item, slice):
        return "basic", item
    if isinstance(item, DeviceArray):
        kind = item.dtype.kind
        if kind == "b":
            return ("bool0", bool(item)) if item.ndim == 0 else ("mask", item)
        if kind in "iu":
            return "array", item
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if isinstance(item, (bool, np.bool_)):
        return "bool0", bool(item)
    if isinstance(item, (int, np.integer)):
        return "int", int(item)
    if isinstance(item, (np.ndarray, list, tuple)):
        try:
            h = np.asarray(item)
        except ValueError as exc:
            raise IndexError(_VALID) from exc
        if not isinstance(item, np.ndarray) and h.size == 0 and h.dtype.kind == "f":
            h = h.astype(np.intp)  # NumPy: [] indexes with no integers
        if h.dtype.kind == "b":
            return ("bool0", bool(h)) if h.ndim == 0 else ("mask", h)
        if h.dtype.kind in "iu":
            return ("int", int(h)) if h.ndim == 0 else ("array", h)
        if not isinstance(item, np.ndarray):
            raise IndexError(_VALID)
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    try:
        return "int", operator.index(item)
    except TypeError:
        raise IndexError(_VALID) from None


def _shape_text(shape):
    return "(" + ",".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


class _Index:
    """An index array of the key: its values (a DeviceArray, or an int64
    ndarray checked on the host), the axis of x and of the view V it
    indexes, and whether every value is known to be in bounds."""

    __slots__ = ("values", "axis", "vaxis", "checked", "size")

    def __init__(self, values, axis, vaxis, checked):
        self.values, self.axis, self.vaxis, self.checked = values, axis, vaxis, checked
        self.size = 0  # the length of the axis it indexes


def _resolve(x, key):
    """(V, the index arrays, B, whether B stands in place (else first)), or
    (None, the basic key, None, None) where the key has no array after all."""
    items = key if isinstance(key, tuple) else (key,)
    parsed = [_classify(item) for item in items]
    if sum(1 for k, v in parsed if k == "basic" and v is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(v.ndim if k == "mask" else 0 if k == "bool0" or v is None or v is Ellipsis
               else 1 for k, v in parsed)
    if used > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but "
                         f"{used} were indexed")
    if not any(k in ("array", "mask", "bool0") for k, _ in parsed):
        return None, tuple(v for _, v in parsed), None, None
    entries = []  # (kind, value, axis of x, whether in bounds for sure)
    axis = 0
    for k, v in parsed:
        if k == "basic" and v is Ellipsis:
            entries += [("basic", slice(None), axis + j, True) for j in range(x.ndim - used)]
            axis += x.ndim - used
        elif k == "basic" and v is None or k == "bool0":
            entries.append((k, v, None, True))
        elif k == "mask":
            for j in range(v.ndim):
                if v.shape[j] != x.shape[axis + j]:
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {axis + j}; "
                        f"size of axis is {x.shape[axis + j]} but size of corresponding "
                        f"boolean axis is {v.shape[j]}")
            rows = np.nonzero(v) if isinstance(v, np.ndarray) else _coordinates(v)
            entries += [("index", rows[j], axis + j, True) for j in range(v.ndim)]
            axis += v.ndim
        else:
            entries.append(("index" if k == "array" else k, v, axis, False))
            axis += 1
    advanced = [i for i, e in enumerate(entries) if e[0] in ("index", "bool0", "int")]
    in_place = advanced[-1] - advanced[0] + 1 == len(advanced)
    vkey, arrays, vaxis = [], [], 0
    for k, v, ax, checked in entries:
        if k == "int":
            vkey.append(v)
            continue
        if k == "index":
            arrays.append(_Index(v, ax, vaxis, checked))
            vkey.append(slice(None))
        elif k == "bool0":
            arrays.append(_Index(np.zeros(int(v), np.int64), None, vaxis, True))
            vkey.append(None)
        else:
            vkey.append(v)
        vaxis += 1
    v = x[tuple(vkey)]
    try:
        b = np.broadcast_shapes(*[a.values.shape for a in arrays])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         "with shapes " + "".join(_shape_text(a.values.shape) + " "
                                                  for a in arrays)) from None
    for a in arrays:  # what came from a mask is in bounds; host arrays are checked here
        a.size = v.shape[a.vaxis]
        if isinstance(a.values, np.ndarray):
            # NumPy checks no index where the arrays broadcast to nothing
            a.values = _host_index(a.values, a.axis, a.size, check=math.prod(b) > 0)
            a.checked = True
    return v, arrays, b, in_place


def _host_index(h, axis, size, check=True):
    """An index ndarray checked against its axis (NumPy's IndexError), as an
    int64 ndarray."""
    h = np.asarray(h)
    if h.dtype == np.uint64:  # NumPy casts to intp (same_kind): 2**64 - 1 is -1
        h = h.astype(np.int64)
    if check and h.size:
        bad = (h < -size) | (h >= size) if h.dtype.kind == "i" else h >= size
        if bad.any():
            raise IndexError(f"index {h[bad].flat[0]} is out of bounds for axis {axis} "
                             f"with size {size}")
    return h.astype(np.int64, copy=False)


# ---- integer arrays: gather and scatter --------------------------------------------------


def _result_shape(v, arrays, b, in_place):
    """The result's axes: ("v", axis of V) or ("b", axis of B), in order."""
    taken = {a.vaxis for a in arrays}
    rest = [("v", d) for d in range(v.ndim) if d not in taken]
    bdims = [("b", j) for j in range(len(b))]
    if not in_place:
        return bdims + rest
    first = min(taken)
    return [r for r in rest if r[1] < first] + bdims + [r for r in rest if r[1] > first]


def _index_device(arrays):
    """The index arrays on the (current) device, all int32 or all int64:
    (values, the kernel's tag)."""
    values = []
    device = _core.get_device()
    for a in arrays:
        x = a.values
        if isinstance(x, DeviceArray):
            if len(arrays) > 1 and x.device.id != device:  # (the first is an argument)
                raise ValueError(f"an index array is on device {x.device.id}, the indexed "
                                 f"array on device {device}")
            values.append(x)
        else:
            values.append(_core.asarray(x))
    if all(x.dtype == np.int32 for x in values):
        return values, "i4"
    return [x if x.dtype == np.int64 else x.astype(np.int64) for x in values], "i8"


def _launch_move(what, v, other, arrays, b, in_place, value_strides=None):
    """Gather (v's elements into other, a new C-contiguous array of the
    result's shape) or scatter (other, broadcast to the result, into v); an
    index out of bounds raises NumPy's IndexError."""
    axes = _result_shape(v, arrays, b, in_place)
    shape = [v.shape[d] if kind == "v" else b[d] for kind, d in axes]
    n = math.prod(shape)
    values, tag = _index_device(arrays)
    if n == 0:
        if math.prod(b):  # an empty result, from the other axes: NumPy still checks
            _check_on_host(arrays, values)
        return
    streams = [[v.strides[d] if kind == "v" else 0 for kind, d in axes]]
    streams.append(value_strides if value_strides is not None else [0] * len(axes))
    for x in values:
        pad = len(b) - x.ndim
        st = [0 if j < pad or x.shape[j - pad] == 1 else x.strides[j - pad] // x.itemsize
              for j in range(len(b))]
        streams.append([0 if kind == "v" else st[d] for kind, d in axes])
    from .ufunc import _fold

    dims, streams = _fold(shape, streams)
    base = values[0]
    meta = [len(dims), len(values), *dims, *streams[0], *streams[1]]
    for a, x, st in zip(arrays, values, streams[2:], strict=True):
        meta += [a.size, v.strides[a.vaxis], x.ptr - base.ptr, *st]
    meta = _core.asarray(np.array(meta, np.int64))
    check = not all(a.checked for a in arrays)
    error = _core.zeros((1,), np.uint64) if check else 0
    grid = _blocks(n, _THREADS)
    if check and what == "scatter":  # NumPy writes nothing if an index is bad
        _kernel(f"pg_index_check_{tag}")[grid, _THREADS](v, other, base, meta, n, error)
        _raise_if_bad(arrays, values, error)
    _kernel(f"pg_index_{what}{v.itemsize}_{tag}")[grid, _THREADS](v, other, base, meta, n,
                                                                  error)
    if check and what == "gather":
        _raise_if_bad(arrays, values, error)


def _raise_if_bad(arrays, values, error):
    code = int(error.copy_to_host()[0])
    if code:
        _raise_bad(arrays, values, (~code & (2**64 - 1)) % len(values))


def _raise_bad(arrays, values, k):
    _host_index(values[k].copy_to_host(), arrays[k].axis, arrays[k].size)
    raise AssertionError("the device found an index out of bounds that the host did not")


def _check_on_host(arrays, values):
    """An empty result: NumPy still checks the indices."""
    for a, x in zip(arrays, values, strict=True):
        if not a.checked and x.size:
            _host_index(x.copy_to_host(), a.axis, a.size)


def _on_own_device(f):
    """f(x, ...) run with x's device current (the kernels launch there)."""
    import functools
    import inspect

    first = next(iter(inspect.signature(f).parameters))

    @functools.wraps(f)
    def run(*args, **kwargs):
        x = args[0] if args else kwargs.get(first)  # f(a=...) as NumPy's allows
        if isinstance(x, DeviceArray) and _several_devices():
            device = x.device
            if device.id != _core.get_device():
                with device:
                    return f(*args, **kwargs)
        return f(*args, **kwargs)
    return run


@_on_own_device
def getitem(x, key):
    """x[key] for a key with integer arrays, boolean arrays or bool scalars
    (array.c's getitem sends those here): a new array, as NumPy's."""
    if type(key) is DeviceArray and key.dtype.char == "?" and key.shape == x.shape:
        return _select(x, key)
    v, arrays, b, in_place = _resolve(x, key)
    if v is None:
        return x[arrays]
    axes = _result_shape(v, arrays, b, in_place)
    out = _core.empty(tuple(v.shape[d] if kind == "v" else b[d] for kind, d in axes),
                      x.dtype)
    _launch_move("gather", v, out, arrays, b, in_place)
    return out


# ---- setting ----------------------------------------------------------------------------


def _values(x, value):
    """value as a DeviceArray of x's dtype (NumPy's cast for host values, an
    unsafe astype for device ones, as the basic setitem does), not sharing
    memory with x."""
    if isinstance(value, DeviceArray):
        if value.dtype != x.dtype:
            return value.astype(x.dtype)
        # any view of x's memory (x itself, x[::-1], a diagonal view made
        # through the interface, whose base is not x) is read from a copy
        return value.copy() if _overlaps(value, x) else value
    return _core.asarray(np.asarray(value, dtype=x.dtype))


def _extent(a):
    """[first byte, one past the last byte) of a's elements."""
    lo = hi = a.ptr
    for n, s in zip(a.shape, a.strides, strict=True):
        if s > 0:
            hi += s * (n - 1)
        else:
            lo += s * (n - 1)
    return lo, hi + a.itemsize


def _overlaps(a, b):
    """Whether the elements of DeviceArrays a and b may share memory."""
    if a.size == 0 or b.size == 0:
        return False
    (alo, ahi), (blo, bhi) = _extent(a), _extent(b)
    return alo < bhi and blo < ahi


def _scalar_like(value):
    return not isinstance(value, (DeviceArray, np.ndarray, list, tuple)) or \
        (isinstance(value, (DeviceArray, np.ndarray)) and value.ndim == 0)


def _broadcast_strides(value, shape):
    """value's byte strides seen in shape (NumPy's setitem rule: leading axes
    of length 1 dropped first), or NumPy's ValueError."""
    vshape = value.shape
    while len(vshape) > len(shape) and vshape[0] == 1:
        vshape = vshape[1:]
        value = value.reshape(vshape)
    try:
        ok = np.broadcast_shapes(vshape, tuple(shape)) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"shape mismatch: value array of shape {_shape_text(value.shape)} "
                         f"could not be broadcast to indexing result of shape "
                         f"{_shape_text(shape)}")
    pad = len(shape) - value.ndim
    return value, [0 if j < pad or value.shape[j - pad] == 1 else value.strides[j - pad]
                   for j in range(len(shape))]


def _where_into(x, mask, value):
    """x[mask] = a scalar: the where kernel into x (mask of x's leading axes)."""
    from .table import INTERNAL, canonical
    from .ufunc import apply

    if mask.ndim < x.ndim:
        mask = mask.reshape(mask.shape + (1,) * (x.ndim - mask.ndim))
    ch = canonical(x.dtype.char)
    if isinstance(value, DeviceArray):
        value = value.astype(x.dtype) if value.dtype != x.dtype else value
    else:
        value = np.asarray(value, dtype=x.dtype)[()]  # NumPy's cast of the value
    apply(INTERNAL["where"], ("?" + ch + ch, ch), [mask, value, x], out=x)


def _set_mask(x, mask, value):
    """x[mask] = value for a bool DeviceArray mask of x's shape."""
    if _scalar_like(value):
        _where_into(x, mask, value)
        return
    v = value if isinstance(value, DeviceArray) else np.asarray(value)
    if v.ndim > 1:
        raise TypeError("NumPy boolean array indexing assignment requires a 0 or "
                        f"1-dimensional input, input has {v.ndim} dimensions")
    if v.size == 1:
        _where_into(x, mask, v.reshape(()))
        return
    mask = _contiguous(mask)
    if x.is_c_contiguous() and mask.size:
        offsets, total = _count(mask)
        if v.size != total:
            raise ValueError(f"NumPy boolean array indexing assignment cannot assign "
                             f"{v.size} input values to the {total} output values where "
                             "the mask is true")
        if total:
            v = _contiguous(_values(x, v))
            grid = min(-(-mask.size // _TILE), _MAX_BLOCKS)
            _kernel(f"pg_index_place{x.itemsize}")[grid, _THREADS](mask, mask.size, offsets,
                                                                  x, v, total)
        return
    rows = _coordinates(mask)
    count = rows.shape[1]
    if v.size != count:
        raise ValueError(f"NumPy boolean array indexing assignment cannot assign {v.size} "
                         f"input values to the {count} output values where the mask is true")
    _set_arrays(x, tuple(rows[k] for k in range(x.ndim)), v)


def _set_arrays(x, key, value):
    v, arrays, b, in_place = _resolve(x, key)
    if v is None:
        x[arrays] = value
        return
    axes = _result_shape(v, arrays, b, in_place)
    shape = [v.shape[d] if kind == "v" else b[d] for kind, d in axes]
    values, strides = _broadcast_strides(_values(x, value), shape)
    for a in arrays:  # an index array in x's memory: read before the scatter writes
        if isinstance(a.values, DeviceArray) and _overlaps(a.values, x):
            a.values = a.values.copy()
    _launch_move("scatter", v, values, arrays, b, in_place, strides)


def _check_writeable(x, name):
    """NumPy's ValueError for a write into a read-only array (a broadcast_to
    or diagonal view, memory exported read-only)."""
    if not x.flags["WRITEABLE"]:
        raise ValueError(f"{name}: assignment destination is read-only (a broadcast or "
                         "diagonal view, or memory exported to pygpu read-only); copy it "
                         "with .copy() to get a writeable array")


@_on_own_device
def setitem(x, key, value):
    """x[key] = value for a key with integer arrays, boolean arrays or bool
    scalars (array.c's setitem sends those here)."""
    _check_writeable(x, "setitem")
    if type(key) is np.ndarray and key.dtype == np.bool_ and key.ndim and \
            key.shape == x.shape[:key.ndim]:
        key = _core.asarray(key)  # a host mask: NumPy's rules for a mask, as a device one
    if type(key) is DeviceArray and key.dtype == np.bool_ and key.ndim and \
            key.shape == x.shape[:key.ndim]:
        if key.ndim == x.ndim:
            _set_mask(x, key, value)
            return
        if _scalar_like(value):
            _where_into(x, key, value)
            return
    _set_arrays(x, key, value)


# ---- functions ----------------------------------------------------------------------------


@_on_own_device
def nonzero(a):
    """numpy.nonzero: a tuple of int64 DeviceArrays, the indices of the
    nonzero elements along each axis (C order)."""
    a = _device_array("nonzero", a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead.")
    rows = _coordinates(_as_mask("nonzero", a))
    return tuple(rows[k] for k in range(a.ndim))


@_on_own_device
def argwhere(a):
    """numpy.argwhere: the indices of the nonzero elements, one row each
    ((count, a.ndim), int64)."""
    a = _device_array("argwhere", a)
    if a.ndim == 0:
        return _core.empty((int(bool(_as_mask("argwhere", a))), 0), np.int64)
    return _coordinates(_as_mask("argwhere", a)).T


@_on_own_device
def flatnonzero(a):
    """numpy.flatnonzero: the indices of the nonzero elements of a.ravel()."""
    a = _device_array("flatnonzero", a)
    return _coordinates(_as_mask("flatnonzero", a).reshape(-1))[0]


def _mode_indices(indices, size, mode):
    """indices wrapped or clipped into [0, size) (numpy.take's mode), on the
    device for a DeviceArray."""
    if mode == "raise":
        return indices
    if mode not in ("wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if size == 0:
        n = indices.size if isinstance(indices, DeviceArray) else np.size(indices)
        if n == 0:
            return indices  # an empty take from an empty axis: NumPy's empty answer
        raise IndexError("cannot do a non-empty take from an empty axes.")
    if isinstance(indices, DeviceArray):
        from .ufunc import UFUNCS

        i = indices.astype(np.int64) if indices.dtype != np.int64 else indices
        if mode == "wrap":
            return UFUNCS["remainder"](i, size)
        return UFUNCS["minimum"](UFUNCS["maximum"](i, 0), size - 1)
    h = np.asarray(indices).astype(np.int64)
    return h % size if mode == "wrap" else np.clip(h, 0, size - 1)


def _index_arg(name, indices, error=TypeError):
    """indices as a DeviceArray, an int64 ndarray or an int; error (NumPy's
    type: TypeError for take, IndexError for take_along_axis) if they are not
    integers."""
    if isinstance(indices, DeviceArray):
        if indices.dtype.kind not in "iu":
            raise error(f"{name}: indices must be integers, not {indices.dtype}")
        return indices
    h = np.asarray(indices)
    if h.dtype.kind not in "iu" and not (h.size == 0 and h.dtype.kind == "f"):
        raise error(f"{name}: indices must be integers, not {h.dtype}")
    h = h.astype(np.int64)  # NumPy's cast to intp: a uint64 of 2**64 - 1 is -1
    return h if h.ndim else int(h)


def _into(r, out, name):
    if out is None:
        return r
    if not isinstance(out, DeviceArray) or out.shape != r.shape:
        raise ValueError(f"{name}: output array does not match result shape "
                         f"(expected {r.shape}, got {getattr(out, 'shape', type(out))})")
    out[...] = r
    return out


@_on_own_device
def take(a, indices, axis=None, out=None, mode="raise"):
    """numpy.take: a's elements at `indices` along axis (of a.ravel() for
    axis None); mode 'raise' (IndexError), 'wrap' or 'clip'."""
    a = _device_array("take", a)
    indices = _index_arg("take", indices)
    if axis is None:
        a, axis = a.reshape(-1), 0
    else:
        axis = np._core.numeric.normalize_axis_index(operator.index(axis), a.ndim)
    indices = _mode_indices(indices, a.shape[axis], mode)
    if isinstance(indices, np.ndarray) and indices.ndim == 0:
        indices = int(indices)
    r = a[(slice(None),) * axis + (indices,)]
    if isinstance(indices, int):
        r = r.copy()
    return _into(r, out, "take")


@_on_own_device
def take_along_axis(arr, indices, axis=-1):
    """numpy.take_along_axis: arr's elements at indices along axis, the other
    axes matched (broadcast) with indices'; axis None: of arr.ravel()."""
    arr = _device_array("take_along_axis", arr)
    indices = _index_arg("take_along_axis", indices, IndexError)
    if axis is None:
        if np.ndim(indices) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = arr.reshape(-1), 0
    axis = np._core.numeric.normalize_axis_index(operator.index(axis), arr.ndim)
    if np.ndim(indices) != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    key = []
    for d in range(arr.ndim):
        if d == axis:
            key.append(indices)
        else:
            shape = [1] * arr.ndim
            shape[d] = arr.shape[d]
            key.append(np.arange(arr.shape[d], dtype=np.int64).reshape(shape))
    return arr[tuple(key)]


@_on_own_device
def put(a, ind, v, mode="raise"):
    """numpy.put: a.flat[ind] = v, v repeated as needed; mode 'raise'
    (IndexError), 'wrap' or 'clip'. Repeated indices: one write wins."""
    a = _device_array("put", a)
    _check_writeable(a, "put")
    ind = _index_arg("put", ind)
    if isinstance(ind, int):
        ind = np.array([ind], np.int64)
    ind = _mode_indices(ind, a.size, mode)
    n = ind.size
    if n == 0:
        return
    values = _values(a, v).reshape(-1)
    if values.size == 0:
        return
    if values.size != n:
        reps = np.arange(n, dtype=np.int64) % values.size
        values = values[reps] if values.size > 1 else values
    key = ind.reshape(-1) if isinstance(ind, (DeviceArray, np.ndarray)) else ind
    values = values.reshape(-1) if values.size == n else values.reshape(())
    if a.is_c_contiguous():
        a.reshape(-1)[key] = values
        return
    flat = a.copy()  # a strided target: through a C-ordered copy
    flat.reshape(-1)[key] = values
    a[...] = flat


def compress(condition, a, axis=None, out=None):
    """numpy.compress: the slices of a along axis (of a.ravel() for None)
    where condition (1-D) is true; a shorter condition selects among the
    first elements only."""
    a = _device_array("compress", a)
    if isinstance(condition, DeviceArray):
        cond = condition
    else:
        h = np.asarray(condition)
        cond = _core.asarray(h.astype(np.bool_)) if h.dtype.kind in "biuf" else None
        if cond is None:
            raise TypeError(f"compress: condition must be numbers or bools, not {h.dtype}")
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    if axis is None:
        a, axis = a.reshape(-1), 0
    axis = np._core.numeric.normalize_axis_index(operator.index(axis), a.ndim)
    idx = flatnonzero(cond)
    if cond.size > a.shape[axis]:
        n = int(idx[-1]) + 1 if idx.size else 0
        if n > a.shape[axis]:
            raise IndexError(f"index {n - 1} is out of bounds for axis {axis} with size "
                             f"{a.shape[axis]}")
    return _into(a[(slice(None),) * axis + (idx,)], out, "compress")


@_on_own_device
def extract(condition, arr):
    """numpy.extract: arr.ravel()'s elements where condition.ravel() is
    nonzero."""
    arr = _device_array("extract", arr)
    cond = _as_mask("extract", condition)
    if cond.size == arr.size:
        return _select(arr.reshape(-1), cond.reshape(-1))
    return take(arr, flatnonzero(cond))


@_on_own_device
def place(arr, mask, vals):
    """numpy.place: arr's elements where mask is true set to vals in order,
    vals repeated as needed (in place; None)."""
    arr = _device_array("place", arr)
    _check_writeable(arr, "place")
    m = _as_mask("place", mask)
    if m.size != arr.size:
        raise ValueError("place: mask and data must be the same size")
    h = vals if isinstance(vals, (DeviceArray, np.ndarray)) else np.asarray(vals)
    if h.size and not np.can_cast(h.dtype, arr.dtype, "safe"):
        dt = h.dtype
        raise TypeError(f"Cannot cast array data from {dt!r} to {arr.dtype!r} according to "
                        "the rule 'safe'")
    v = _values(arr, vals).reshape(-1)
    m = _contiguous(m.reshape(-1))
    if m.size == 0:
        return
    offsets, total = _count(m)
    if total == 0:
        return
    if v.size == 0:
        raise ValueError("Cannot insert from an empty array!")
    v = _contiguous(v)
    if arr.is_c_contiguous():
        grid = min(-(-m.size // _TILE), _MAX_BLOCKS)
        _kernel(f"pg_index_place{arr.itemsize}")[grid, _THREADS](m, m.size, offsets, arr, v,
                                                                v.size)
        return
    if v.size != total:
        v = v[np.arange(total, dtype=np.int64) % v.size]
    _set_mask(arr, m.reshape(arr.shape), v)


def _method_take(self, indices, axis=None, out=None, mode="raise"):
    return take(self, indices, axis, out, mode)


def _method_put(self, indices, values, mode="raise"):
    return put(self, indices, values, mode)


def _method_compress(self, condition, axis=None, out=None):
    return compress(condition, self, axis, out)


def _method_nonzero(self):
    return nonzero(self)


_NEITHER = object()


def where(condition, x1=_NEITHER, x2=_NEITHER, /):
    """numpy.where (the array API's where(condition, x1, x2, /)): with one
    argument, nonzero(condition); with three, the elementwise choice
    (functions.where)."""
    if x1 is _NEITHER and x2 is _NEITHER:
        return nonzero(condition)
    if x1 is _NEITHER or x2 is _NEITHER:
        raise ValueError("either both or neither of x and y should be given")
    from .functions import where as choose

    return choose(condition, x1, x2)


NUMPY = {np.take: take, np.take_along_axis: take_along_axis, np.put: put,
         np.nonzero: nonzero, np.argwhere: argwhere, np.flatnonzero: flatnonzero,
         np.compress: compress, np.extract: extract, np.place: place}
ATTRIBUTES = {"nonzero": method(_method_nonzero), "take": method(_method_take),
              "put": method(_method_put), "compress": method(_method_compress)}
