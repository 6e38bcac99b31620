"""Manipulation: concatenate, stack, split, flip, roll, squeeze, expand_dims,
broadcast_to, moveaxis, tile, repeat, pad, diff, cumulative_sum, ....

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads.

Views where NumPy gives views: flip, rot90, moveaxis, swapaxes,
permute_dims, expand_dims, squeeze, split and unstack are slices, reshapes
and transposes; broadcast_to (and broadcast_arrays, meshgrid(copy=False)) is a
read-only view with zero strides (creation.strided_view). Copies are one pass
of the copy kernels behind setitem: concatenate and stack write each input
into its slice of the result, tile and repeat (one count) write a broadcast
view into a reshaped result, roll writes its two pieces an axis. Where each
output element reads an input element chosen by an index along one axis
(repeat with counts, pad's edge, reflect, symmetric and wrap) one gather
kernel does it (UNIT), its index vector made on the host by NumPy itself
(numpy.repeat, numpy.pad of arange(n)), so that its errors are NumPy's.
pad's other modes (linear_ramp, maximum, mean, median, minimum, the odd
reflections) take NumPy's own steps (numpy/lib/_arraypad_impl.py) on
slices of the result, with pygpu's reductions, linspace and sort.
"""

import itertools
import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .. import _core
from .._core import DeviceArray
from . import method
from .creation import Unit, launch, strided_view
from .creation import device_array as _array

# ---- the gather kernel --------------------------------------------------------------

_HEAD = """#include <pygpu/ufunc.h>

struct pg_bytes16 {
    unsigned long long lo, hi;
};

/* out (contiguous [A, T, B]) [a, t, b] = x [a, idx[t], b], x strided in bytes;
   I: 32-bit indices where they reach, else 64-bit */
template <class S, class I>
__device__ void
pg_gather_loop(const char *x, const long long *idx, S *out, I n, I T, I B, long long sa,
               long long st, long long sb)
{
    const I step = (I)gridDim.x * blockDim.x;
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const I b = i % B, r = i / B, t = r % T, a = r / T;
        out[i] = *(const S *)(x + (long long)a * sa + idx[t] * st + (long long)b * sb);
    }
}

template <class S>
__device__ void
pg_gather_axis(const char *x, const long long *idx, S *out, long long n, long long T,
               long long B, long long sa, long long st, long long sb)
{
    if (n <= 0x7fffffffLL) {
        pg_gather_loop<S, unsigned int>(x, idx, out, (unsigned int)n, (unsigned int)T,
                                        (unsigned int)B, sa, st, sb);
    }
    else {
        pg_gather_loop<S, long long>(x, idx, out, n, T, B, sa, st, sb);
    }
}
"""
_ITEMS = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int",
          8: "unsigned long long", 16: "pg_bytes16"}
UNIT = {f"pg_gather_{n}": (
    f'extern "C" __global__ void pg_gather_{n}(const char *x, const long long *idx, {t} *out, '
    "long long n, long long T, long long B, long long sa, long long st, long long sb)\n{\n"
    f"    pg_gather_axis<{t}>(x, idx, out, n, T, B, sa, st, sb);\n}}\n")
    for n, t in _ITEMS.items()}
kernel = Unit(_HEAD, UNIT)


def _folded(shape, strides):
    """The byte stride of axes that step as one (the last one's), or None."""
    dims = [(n, s) for n, s in zip(shape, strides, strict=True) if n != 1]
    for (_, s), (n2, s2) in zip(dims, dims[1:], strict=False):
        if s != s2 * n2:
            return None
    return dims[-1][1] if dims else 0


def gather(x, axis, index):
    """x with its axis `axis` replaced by x.take(index, axis) (index: a host
    array of valid indices), a new contiguous array."""
    index = np.ascontiguousarray(index, dtype=np.int64)
    shape = x.shape[:axis] + (len(index),) + x.shape[axis + 1:]
    with x.device:
        out = _core.empty(shape, x.dtype)
        if not out.size:
            return out
        sa = _folded(x.shape[:axis], x.strides[:axis])
        sb = _folded(x.shape[axis + 1:], x.strides[axis + 1:])
        if sa is None or sb is None:
            x = x.copy()
            sa = _folded(x.shape[:axis], x.strides[:axis])
            sb = _folded(x.shape[axis + 1:], x.strides[axis + 1:])
        inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
        idx = _core.asarray(index)
        launch(kernel(f"pg_gather_{x.dtype.itemsize}"), out.size, x, idx, out,
               np.int64(out.size), np.int64(len(index)), np.int64(inner), np.int64(sa),
               np.int64(x.strides[axis]), np.int64(sb))
    return out


# ---- arguments ------------------------------------------------------------------------------

def _arrays(name, arrays):
    if isinstance(arrays, DeviceArray):
        arrays = list(arrays)
    try:
        arrays = list(arrays)
    except TypeError:
        raise TypeError(f"{name} takes a sequence of DeviceArrays, not "
                        f"{type(arrays).__name__}") from None
    return [_array(name, a) for a in arrays]


def _host_stand_in(a):
    """A host array NumPy can decide on in place of a (a's dtype and shape, no
    memory: zero strides)."""
    return np.broadcast_to(np.zeros((), a.dtype), a.shape)


# ---- joining ----------------------------------------------------------------------------------

def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """numpy.concatenate: the arrays joined along an existing axis (axis=None:
    flattened), on the device of the first; NumPy's result dtype, or dtype,
    each input cast by `casting`'s rule, or written into out."""
    arrays = _arrays("concatenate", arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both "
                        "were provided.")
    if axis is None:
        arrays = [a.reshape(-1) for a in arrays]
        axis = 0
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis_index(axis, first.ndim)
    for i, a in enumerate(arrays):
        if a.ndim != first.ndim:
            raise ValueError(
                "all the input arrays must have the same number of dimensions, but the array "
                f"at index 0 has {first.ndim} dimension(s) and the array at index {i} has "
                f"{a.ndim} dimension(s)")
        for ax, (n, m) in enumerate(zip(first.shape, a.shape, strict=True)):
            if ax != axis and n != m:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {ax}, the array at index 0 has size "
                    f"{n} and the array at index {i} has size {m}")
    shape = list(first.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    shape = tuple(shape)
    # NumPy decides the dtype and the casting errors on one-element stand-ins
    probes = [np.zeros(1, a.dtype) for a in arrays]
    if out is not None:
        out = _array("concatenate", out)
        np.concatenate(probes, out=np.zeros(len(probes), out.dtype), casting=casting)
        if out.shape != shape:
            raise ValueError(f"Output array has wrong dimensionality or shape: {out.shape}, "
                             f"expected {shape}")
        result = out
    else:
        rdt = np.concatenate(probes, dtype=dtype, casting=casting).dtype
        from .creation import device_dtype

        device_dtype(rdt, "concatenate")
        with first.device:
            result = _core.empty(shape, rdt)
    start = 0
    for a in arrays:
        n = a.shape[axis]
        if n and result.size:
            result[(slice(None),) * axis + (slice(start, start + n),)] = a
        start += n
    return result


def concat(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """numpy.concat (the array API's concat(arrays, /, *, axis=0)): concatenate
    under NumPy 2's name, with its arguments (axis also positional)."""
    return concatenate(arrays, axis, out, dtype=dtype, casting=casting)


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """numpy.stack: the arrays, all of one shape, joined along a new axis."""
    arrays = _arrays("stack", arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    if len({a.shape for a in arrays}) != 1:
        raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis_index(axis, arrays[0].ndim + 1)
    shape = arrays[0].shape
    new = shape[:axis] + (1,) + shape[axis:]
    return concatenate([a.reshape(new) for a in arrays], axis, out, dtype=dtype,
                       casting=casting)


def atleast_1d(*arys):
    """numpy.atleast_1d: 0-d arrays as 1-D (views)."""
    res = [a.reshape(1) if a.ndim == 0 else a for a in (_array("atleast_1d", x) for x in arys)]
    return res[0] if len(res) == 1 else tuple(res)


def atleast_2d(*arys):
    """numpy.atleast_2d: (1, 1) for 0-d, (1, n) for 1-D (views)."""
    res = [a.reshape((1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a
           for a in (_array("atleast_2d", x) for x in arys)]
    return res[0] if len(res) == 1 else tuple(res)


def atleast_3d(*arys):
    """numpy.atleast_3d: (1, 1, 1) for 0-d, (1, n, 1) for 1-D, (m, n, 1) for
    2-D (views)."""
    def three(a):
        if a.ndim == 0:
            return a.reshape(1, 1, 1)
        if a.ndim == 1:
            return a.reshape(1, a.shape[0], 1)
        return a.reshape(a.shape + (1,)) if a.ndim == 2 else a
    res = [three(_array("atleast_3d", x)) for x in arys]
    return res[0] if len(res) == 1 else tuple(res)


def _tuple_of(name, tup):
    return _arrays(name, tup)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """numpy.hstack: along the second axis (the first for 1-D arrays)."""
    arrs = [atleast_1d(a) for a in _tuple_of("hstack", tup)]
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """numpy.vstack: along the first axis, 1-D arrays as rows."""
    arrs = [atleast_2d(a) for a in _tuple_of("vstack", tup)]
    return concatenate(arrs, 0, dtype=dtype, casting=casting)


def dstack(tup):
    """numpy.dstack: along the third axis."""
    return concatenate([atleast_3d(a) for a in _tuple_of("dstack", tup)], 2)


def column_stack(tup):
    """numpy.column_stack: 1-D arrays as columns, then along the second axis."""
    arrs = [a.reshape(-1, 1) if a.ndim < 2 else a for a in _tuple_of("column_stack", tup)]
    return concatenate(arrs, 1)


# ---- splitting ----------------------------------------------------------------------------------

def array_split(ary, indices_or_sections, axis=0):
    """numpy.array_split: views of ary along axis, at the given indices or in
    that many nearly equal parts (the first ones one longer)."""
    ary = _array("array_split", ary)
    if ary.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    axis = normalize_axis_index(axis, ary.ndim)
    total = ary.shape[axis]
    try:
        sections = len(indices_or_sections) + 1
    except TypeError:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extras = divmod(total, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        points = np.array(sizes, dtype=np.intp).cumsum().tolist()
    else:
        try:  # NumPy slices at the indices: a float is a TypeError, not truncated
            points = [0] + [operator.index(i) for i in indices_or_sections] + [total]
        except TypeError:
            raise TypeError("slice indices must be integers or None or have an __index__ "
                            f"method, not {indices_or_sections!r}") from None
    head = (slice(None),) * axis
    return [ary[head + (slice(points[i], points[i + 1]),)] for i in range(sections)]


def split(ary, indices_or_sections, axis=0):
    """numpy.split: as array_split, but a number of sections must divide the
    axis exactly."""
    ary = _array("split", ary)
    try:
        len(indices_or_sections)
    except TypeError:
        axis_ = normalize_axis_index(axis, max(ary.ndim, 1))
        if ary.ndim and ary.shape[axis_] % int(indices_or_sections):
            raise ValueError("array split does not result in an equal division") from None
    return array_split(ary, indices_or_sections, axis)


def unstack(x, /, *, axis=0):
    """numpy.unstack (the array API's): a tuple of views, one per index along
    axis."""
    x = _array("unstack", x)
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    return tuple(moveaxis(x, axis, 0))


# ---- views: flip, rot90, axes ---------------------------------------------------------------

def flip(m, axis=None):
    """numpy.flip: a view with the elements of the axes (all by default) in
    reverse order."""
    m = _array("flip", m)
    axes = range(m.ndim) if axis is None else normalize_axis_tuple(axis, m.ndim)
    return m[tuple(slice(None, None, -1) if i in axes else slice(None)
                   for i in range(m.ndim))]


def fliplr(m):
    """numpy.fliplr: the second axis reversed (a view)."""
    m = _array("fliplr", m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return m[:, ::-1]


def flipud(m):
    """numpy.flipud: the first axis reversed (a view)."""
    m = _array("flipud", m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return m[::-1]


def rot90(m, k=1, axes=(0, 1)):
    """numpy.rot90: rotated by 90 degrees k times in the plane of axes (a
    view)."""
    m = _array("rot90", m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if not all(-m.ndim <= a < m.ndim for a in axes):
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k %= 4
    if k == 0:
        return m[...]
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    order = list(range(m.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return flip(m, axes[1]).transpose(order)
    return flip(m.transpose(order), axes[1])


def moveaxis(a, source, destination):
    """numpy.moveaxis: a view with the axes `source` moved to `destination`."""
    a = _array("moveaxis", a)
    source = normalize_axis_tuple(source, a.ndim, "source")
    destination = normalize_axis_tuple(destination, a.ndim, "destination")
    if len(source) != len(destination):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    order = [n for n in range(a.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source, strict=True)):
        order.insert(dest, src)
    return a.transpose(order)


def swapaxes(a, axis1, axis2):
    """numpy.swapaxes: a view with two axes exchanged."""
    a = _array("swapaxes", a)
    axis1, axis2 = normalize_axis_index(axis1, a.ndim), normalize_axis_index(axis2, a.ndim)
    order = list(range(a.ndim))
    order[axis1], order[axis2] = axis2, axis1
    return a.transpose(order)


def transpose(a, axes=None):
    """numpy.transpose: a view with the axes reversed, or permuted by axes."""
    a = _array("transpose", a)
    if axes is None:
        return a.transpose()
    axes = normalize_axis_tuple(axes, a.ndim) if len(tuple(axes)) == a.ndim else tuple(axes)
    if len(axes) != a.ndim:
        raise ValueError("axes don't match array")
    return a.transpose(axes)


def permute_dims(a, axes=None):
    """numpy.permute_dims (the array API's permute_dims(x, /, axes)):
    transpose under NumPy 2's name; axes None reverses them, as NumPy's."""
    return transpose(a, axes)


def matrix_transpose(x, /):
    """The array API's (and numpy's) matrix_transpose: the last two axes
    swapped (a view)."""
    x = _array("matrix_transpose", x)
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return swapaxes(x, -1, -2)


def squeeze(a, axis=None):
    """numpy.squeeze: a view without axes of length one."""
    from .methods import squeeze as squeeze_

    a = _array("squeeze", a)
    if isinstance(axis, tuple):
        axes = [normalize_axis_index(operator.index(k), a.ndim) for k in axis]
        if len(set(axes)) != len(axes):
            raise ValueError("duplicate value in 'axis'")
    return squeeze_(a, axis)


def expand_dims(a, axis=0):
    """numpy.expand_dims: a view with axes of length one inserted at `axis`
    (an int or a tuple, as in the array API 2025.12; 0 by default, as the
    standard's)."""
    a = _array("expand_dims", a)
    if type(axis) not in (tuple, list):
        axis = (axis,)
    out_ndim = len(axis) + a.ndim
    axis = normalize_axis_tuple(axis, out_ndim)
    it = iter(a.shape)
    return a.reshape(tuple(1 if ax in axis else next(it) for ax in range(out_ndim)))


# ---- broadcasting -------------------------------------------------------------------------------

def broadcast_shapes(*args):
    """numpy.broadcast_shapes."""
    return np.broadcast_shapes(*args)


def broadcast_to(array, shape, subok=False):
    """numpy.broadcast_to: a read-only view of `shape` (zero strides where an
    axis repeats)."""
    array = _array("broadcast_to", array)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    np.broadcast_to(_host_stand_in(array), shape)  # NumPy's errors
    pad = len(shape) - array.ndim
    strides = [0] * pad + [0 if n == 1 and m != 1 else s for n, m, s in
                           zip(array.shape, shape[pad:], array.strides, strict=True)]
    if 0 in shape:
        with array.device:
            return _core.empty(shape, array.dtype)
    return strided_view(array, shape, strides)


def _broadcast_arrays(*args, subok=False):
    """numpy.broadcast_arrays: the arrays broadcast to one shape (a tuple;
    read-only views where an array changes shape)."""
    args = [_array("broadcast_arrays", a) for a in args]
    shape = np.broadcast_shapes(*[a.shape for a in args])
    return tuple(a if a.shape == shape else broadcast_to(a, shape) for a in args)


# ---- copies: tile, repeat, roll, pad --------------------------------------------------------

def broadcast_arrays(*arrays):
    """The array API's broadcast_arrays: a list (2024.12; numpy.broadcast_arrays
    gives a tuple)."""
    return list(_broadcast_arrays(*arrays))


def tile(A, reps):
    """numpy.tile: A repeated reps times along each axis (a new array)."""
    A = _array("tile", A)
    try:
        tup = tuple(operator.index(r) for r in reps)
    except TypeError:
        tup = (operator.index(reps),)
    if any(t < 0 for t in tup):
        raise ValueError("negative dimensions are not allowed")
    d = max(len(tup), A.ndim)
    c = A.reshape((1,) * (d - A.ndim) + A.shape)
    tup = (1,) * (d - len(tup)) + tup
    shape = tuple(s * t for s, t in zip(c.shape, tup, strict=True))
    with A.device:
        out = _core.empty(tuple(x for st in zip(tup, c.shape, strict=True) for x in st),
                          A.dtype)
        if out.size:
            out[...] = c.reshape(tuple(x for s in c.shape for x in (1, s)))
    return out.reshape(shape)


def repeat(a, repeats, axis=None):
    """numpy.repeat (and the array API's repeat(x, repeats, /, *, axis=None)):
    each element repeated `repeats` times (a count, or one count per element
    along axis, a sequence or an integer array); axis=None: of the flattened
    array."""
    a = _array("repeat", a)
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    axis = normalize_axis_index(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(repeats, DeviceArray):
        repeats = repeats.copy_to_host()
    reps = np.asarray(repeats)
    if reps.dtype.kind in "iu" and reps.size:
        # counts whose sum passes int64 crash NumPy's repeat (a segfault, not an
        # error: numpy 2.4); their total, in floats, is checked first
        total = float(reps.sum(dtype=np.float64)) * (n if reps.size == 1 else 1)
        if total * max(a.itemsize, 8) >= 2.0**63:
            raise ValueError(f"repeat: the result would have {total:.4g} elements along "
                             f"axis {axis}: Maximum allowed size exceeded")
    if reps.size == 1 and reps.ndim <= 1:
        r = len(np.repeat(np.zeros(1, np.int8), repeats))  # NumPy's count, and its errors
        head, tail = a.shape[:axis], a.shape[axis + 1:]
        with a.device:
            out = _core.empty(head + (n * r,) + tail, a.dtype)
            if out.size:
                out.reshape(head + (n, r) + tail)[...] = a.reshape(head + (n, 1) + tail)
        return out
    index = np.repeat(np.arange(n), repeats)  # NumPy's errors for the counts
    return gather(a, axis, index)


def roll(a, shift, axis=None):
    """numpy.roll: elements shifted along axis (of the flattened array for
    None), those past the end coming back at the start (a new array)."""
    a = _array("roll", a)
    if axis is None:
        return roll(a.reshape(-1), shift, 0).reshape(a.shape)
    axis = normalize_axis_tuple(axis, a.ndim, allow_duplicate=True)
    pairs = np.broadcast(shift, axis)
    if pairs.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    shifts = dict.fromkeys(range(a.ndim), 0)
    for sh, ax in pairs:
        shifts[ax] += int(sh)
    rolls = [((slice(None), slice(None)),)] * a.ndim
    for ax, offset in shifts.items():
        offset %= a.shape[ax] or 1
        if offset:
            rolls[ax] = ((slice(None, -offset), slice(offset, None)),
                         (slice(-offset, None), slice(None, offset)))
    with a.device:
        result = _core.empty(a.shape, a.dtype)
    if a.size:
        for indices in itertools.product(*rolls):
            src, dst = zip(*indices, strict=True)
            result[dst] = a[src]
    return result


_PAD_KWARGS = {"constant": ("constant_values",), "edge": (), "empty": (),
               "reflect": ("reflect_type",), "symmetric": ("reflect_type",), "wrap": (),
               "linear_ramp": ("end_values",), "maximum": ("stat_length",),
               "mean": ("stat_length",), "median": ("stat_length",),
               "minimum": ("stat_length",)}


def _pad_widths(pad_width, ndim):
    """numpy.pad's pad_width as ((before, after), ...) per axis: an int, a
    pair, a pair per axis, or a dict {axis: int or (before, after)}."""
    from numpy.lib._arraypad_impl import _as_pairs

    if isinstance(pad_width, DeviceArray):
        raise TypeError("pad: pad_width is a DeviceArray; give it as ints (the result's "
                        "shape depends on it, so it is read on the host): "
                        "pad_width.tolist()")
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * ndim
        for axis, width in pad_width.items():
            if isinstance(width, int):
                seq[axis] = width, width
            elif isinstance(width, tuple) and len(width) == 2 and \
                    all(isinstance(w, int) for w in width):
                seq[axis] = width
            else:
                raise TypeError(f"pad: pad_width[{axis!r}] must be an int or a pair of ints "
                                f"(before, after), not {width!r}")
        pad_width = seq
    pad_width = np.asarray(pad_width)
    if pad_width.dtype.kind != "i":
        raise TypeError("`pad_width` must be of integral type.")
    return _as_pairs(pad_width, ndim, as_index=True)


def _at_axis(sl, axis):
    """numpy's _slice_at_axis: sl on axis, everything elsewhere."""
    return (slice(None),) * axis + (sl, Ellipsis)


def _pad_area(padded, axis, widths, values):
    """numpy's _set_pad_area: the two pad areas along axis set to values."""
    left, right = widths
    padded[_at_axis(slice(None, left), axis)] = values[0]
    padded[_at_axis(slice(padded.shape[axis] - right, None), axis)] = values[1]


def _pad_edges(padded, axis, widths):
    """numpy's _get_edges: the first and last element along axis of the area
    between the pad widths (views keeping the axis)."""
    left = widths[0]
    right = padded.shape[axis] - widths[1]
    return (padded[_at_axis(slice(left, left + 1), axis)],
            padded[_at_axis(slice(right - 1, right), axis)])


def _pad_ramps(pg, padded, axis, widths, ends):
    """numpy's _get_linear_ramps: from each end value to the edge (excluded),
    by numpy.linspace's arithmetic in padded's dtype."""
    ramps = [pg.linspace(end, edge.squeeze(axis), width, endpoint=False, dtype=padded.dtype,
                         axis=axis)
             for end, edge, width in zip(ends, _pad_edges(padded, axis, widths), widths,
                                         strict=True)]
    return ramps[0], ramps[1][_at_axis(slice(None, None, -1), axis)]


def _median(pg, x, axis):
    """numpy.median(x, axis, keepdims=True): the mean of the middle one or
    two of the sorted elements (NaN wherever a NaN is among them, as
    NumPy's check after its partition gives)."""
    n = x.shape[axis]
    srt = pg.sort(x, axis=axis)
    mid = slice(n // 2, n // 2 + 1) if n % 2 else slice(n // 2 - 1, n // 2 + 1)
    med = pg.mean(srt[_at_axis(mid, axis)], axis=axis, keepdims=True)
    if x.dtype.kind in "fc" and n:
        last = srt[_at_axis(slice(n - 1, n), axis)]
        med = pg.where(pg.isnan(last), np.nan, med)
    return med


def _pad_stats(pg, padded, axis, widths, lengths, mode):
    """numpy's _get_stats: the statistic of the first and last stat_length
    elements between the pad widths (all of them for None), rounded for
    integer dtypes as NumPy rounds it."""
    left = widths[0]
    right = padded.shape[axis] - widths[1]
    most = right - left
    lengths = [most if k is None or most < k else k for k in lengths]
    if 0 in lengths and mode in ("maximum", "minimum"):
        raise ValueError("stat_length of 0 yields no value for padding")

    def stat(chunk):
        if mode == "median":
            r = _median(pg, chunk, axis)
        else:
            r = {"maximum": pg.max, "minimum": pg.min, "mean": pg.mean}[mode](
                chunk, axis=axis, keepdims=True)
        if padded.dtype.kind in "iu":
            r = pg.round(r)
        return r

    first = stat(padded[_at_axis(slice(left, left + lengths[0]), axis)])
    if lengths[0] == lengths[1] == most:
        return first, first
    return first, stat(padded[_at_axis(slice(right - lengths[1], right), axis)])


def _pad_reflect(padded, axis, widths, odd, period, include_edge):
    """numpy's _set_reflect_both: one round of reflection into both pad
    areas; the widths still to fill."""
    left_pad, right_pad = widths
    old = padded.shape[axis] - right_pad - left_pad
    if include_edge:
        old = old // period * period
        offset = 1
    else:
        old = (old - 1) // (period - 1) * (period - 1) + 1
        offset = 0
        old -= 1
    if left_pad > 0:
        k = min(old, left_pad)
        stop = left_pad - offset
        chunk = padded[_at_axis(slice(stop + k, stop, -1), axis)]
        if odd:
            chunk = 2 * padded[_at_axis(slice(left_pad, left_pad + 1), axis)] - chunk
        padded[_at_axis(slice(left_pad - k, left_pad), axis)] = chunk
        left_pad -= k
    if right_pad > 0:
        k = min(old, right_pad)
        start = -right_pad + offset - 2
        chunk = padded[_at_axis(slice(start, start - k, -1), axis)]
        if odd:
            chunk = 2 * padded[_at_axis(slice(-right_pad - 1, -right_pad), axis)] - chunk
        start = padded.shape[axis] - right_pad
        padded[_at_axis(slice(start, start + k), axis)] = chunk
        right_pad -= k
    return left_pad, right_pad


def pad(array, pad_width, mode="constant", **kwargs):
    """numpy.pad with every mode of NumPy's but a function: constant
    (constant_values), edge, linear_ramp (end_values), maximum, mean, median
    and minimum (stat_length), reflect and symmetric (reflect_type), wrap and
    empty; pad_width as NumPy takes it (an int, pairs, a dict by axis). The
    result has array's dtype and NumPy's values: the axes padded in order
    (the corners take the later axes' padding), edge, wrap and the even
    reflections by one gather an axis, the rest as NumPy's own steps."""
    from numpy.lib._arraypad_impl import _as_pairs

    import pygpu as pg

    array = _array("pad", array)
    pad_width = _pad_widths(pad_width, array.ndim)
    if callable(mode):
        raise TypeError("pad: mode is a function, which numpy.pad calls on each 1-D slice "
                        "of a host array; pygpu takes the modes by name ('constant', "
                        "'edge', 'linear_ramp', 'maximum', 'mean', 'median', 'minimum', "
                        "'reflect', 'symmetric', 'wrap', 'empty'): for a function, pad a "
                        "host copy (numpy.pad(d.copy_to_host(), ...))")
    if mode not in _PAD_KWARGS:
        raise ValueError(f"mode '{mode}' is not supported")
    unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    for key, value in kwargs.items():
        if isinstance(value, DeviceArray):
            raise TypeError(f"pad: {key} is a DeviceArray; give the values as numbers "
                            f"(scalars or nested sequences), as numpy.pad reads them")
    shape = tuple(left + n + right for n, (left, right) in
                  zip(array.shape, pad_width, strict=True))
    center = tuple(slice(left, left + n) for n, (left, _) in
                   zip(array.shape, pad_width, strict=True))
    if mode not in ("constant", "empty") and array.size == 0:
        for ax, (n, width) in enumerate(zip(array.shape, pad_width, strict=True)):
            if n == 0 and any(width):
                raise ValueError(f"can't extend empty axis {ax} using modes other than "
                                 "'constant' or 'empty'")
    odd = kwargs.get("reflect_type") == "odd"
    if mode in ("edge", "wrap") or (mode in ("reflect", "symmetric") and not odd):
        if array.size == 0:
            with array.device:
                return _core.empty(shape, array.dtype)
        out = array
        for ax, (left, right) in enumerate(pad_width):
            if left or right:
                index = np.pad(np.arange(array.shape[ax]), (left, right), mode=mode)
                out = gather(out, ax, index)
        return out if out is not array else array.copy()
    with array.device:
        padded = _core.empty(shape, array.dtype)
        if array.size:
            padded[center] = array
        if mode == "empty" or not padded.size or (array.size == 0 and mode != "constant"):
            return padded

        def roi(ax):  # numpy's _view_roi: the later axes' pads left out
            return padded[(slice(None),) * (ax + 1) + center[ax + 1:]]

        if mode == "constant":
            values = _as_pairs(kwargs.get("constant_values", 0), array.ndim)
            for ax, (widths, pair) in enumerate(zip(pad_width, values, strict=True)):
                _pad_area(roi(ax), ax, widths, pair)
        elif mode == "linear_ramp":
            ends = _as_pairs(kwargs.get("end_values", 0), array.ndim)
            for ax, (widths, pair) in enumerate(zip(pad_width, ends, strict=True)):
                r = roi(ax)
                _pad_area(r, ax, widths, _pad_ramps(pg, r, ax, widths, pair))
        elif mode in ("maximum", "minimum", "mean", "median"):
            lengths = _as_pairs(kwargs.get("stat_length"), array.ndim, as_index=True)
            for ax, (widths, pair) in enumerate(zip(pad_width, lengths, strict=True)):
                r = roi(ax)
                _pad_area(r, ax, widths, _pad_stats(pg, r, ax, widths, pair, mode))
        else:  # reflect or symmetric, reflect_type 'odd'
            for ax, (left, right) in enumerate(pad_width):
                if array.shape[ax] == 1 and (left or right):  # NumPy's legacy: the edge
                    _pad_area(padded, ax, (left, right),
                              _pad_edges(padded, ax, (left, right)))
                    continue
                r = roi(ax)
                while left > 0 or right > 0:
                    left, right = _pad_reflect(r, ax, (left, right), odd, array.shape[ax],
                                               mode == "symmetric")
    return padded


# ---- differences and cumulative sums -----------------------------------------------------

def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """numpy.diff (and the array API's diff(x, /, *, axis=-1, n=1,
    prepend=None, append=None)): the n-th differences along axis (not_equal
    for bool), after prepend and append are joined on."""
    from .ufunc import UFUNCS as U

    a = _array("diff", a)
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis_index(axis, a.ndim)
    combined = []
    for extra in (prepend,):
        combined += _diff_extra(a, axis, extra)
    combined.append(a)
    combined += _diff_extra(a, axis, append)
    if len(combined) > 1:
        a = concatenate(combined, axis)
    head = (slice(None),) * axis
    op = U["not_equal"] if a.dtype == np.bool_ else U["subtract"]
    for _ in range(n):
        a = op(a[head + (slice(1, None),)], a[head + (slice(None, -1),)])
    return a


def _diff_extra(a, axis, value):
    if value is np._NoValue or value is None:  # None: the array API's "nothing"
        return []
    if not isinstance(value, DeviceArray):
        if isinstance(value, np.ndarray) and value.ndim:
            _array("diff", value)
        value = np.asarray(value)
        with a.device:
            value = _core.asarray(value)
    if value.ndim == 0:
        shape = list(a.shape)
        shape[axis] = 1
        value = broadcast_to(value, tuple(shape))
    return [value]


def _cumulative(name, scan, x, axis, dtype, out, include_initial, identity):
    x = _array(name, x)
    if x.ndim == 0:
        x = x.reshape(1)
    if axis is None:
        if x.ndim >= 2:
            raise ValueError("For arrays which have more than one dimension ``axis`` "
                             "argument is required.")
        axis = 0
    if isinstance(axis, (tuple, list)):
        raise ValueError(f"{name} takes one axis (an int), not {axis!r}")
    axis = normalize_axis_index(axis, x.ndim)
    if not include_initial:
        return scan(x, axis, dtype, out)
    head = (slice(None),) * axis
    if out is None:
        # the dtype NumPy's scan gives, asked of a one-element stand-in
        from .creation import device_dtype

        np_scan = np.cumsum if identity == 0 else np.cumprod
        rdt = device_dtype(np_scan(np.zeros(1, x.dtype), dtype=dtype).dtype, name)
        shape = x.shape[:axis] + (x.shape[axis] + 1,) + x.shape[axis + 1:]
        with x.device:
            out = _core.empty(shape, rdt)
    if x.size:
        scan(x, axis, dtype, out[head + (slice(1, None),)])
    if out.size:
        out[head + (0,)] = identity
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """numpy.cumulative_sum (the array API's): cumsum along axis (required
    beyond one dimension), with a leading 0 where include_initial."""
    from .reduction import cumsum

    return _cumulative("cumulative_sum", cumsum, x, axis, dtype, out, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """numpy.cumulative_prod (the array API's): cumprod along axis, with a
    leading 1 where include_initial."""
    from .reduction import cumprod

    return _cumulative("cumulative_prod", cumprod, x, axis, dtype, out, include_initial, 1)


# ---- methods ----------------------------------------------------------------------------------

def _repeat_method(self, repeats, axis=None):
    return repeat(self, repeats, axis)


def _swapaxes_method(self, axis1, axis2):
    return swapaxes(self, axis1, axis2)


def _flatten_method(self, order="C"):
    """A 1-D copy (ndarray.flatten), in C or F order."""
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if order == "F" or (order in ("A", "K") and self.is_f_contiguous() and
                        not self.is_c_contiguous()):
        return self.transpose().copy().reshape(-1)
    return self.copy().reshape(-1)


__all__ = ["array_split", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays",
           "broadcast_shapes", "broadcast_to", "column_stack", "concat", "concatenate",
           "cumulative_prod", "cumulative_sum", "diff", "dstack", "expand_dims", "flip",
           "fliplr", "flipud", "hstack", "matrix_transpose", "moveaxis", "pad",
           "permute_dims", "repeat", "roll", "rot90", "split", "squeeze", "stack",
           "swapaxes", "tile", "transpose", "unstack", "vstack"]
NUMPY = {
    np.concatenate: concatenate, np.concat: concatenate, np.stack: stack, np.hstack: hstack,
    np.vstack: vstack, np.dstack: dstack, np.column_stack: column_stack,
    np.atleast_1d: atleast_1d, np.atleast_2d: atleast_2d, np.atleast_3d: atleast_3d,
    np.split: split, np.array_split: array_split, np.unstack: unstack, np.flip: flip,
    np.fliplr: fliplr, np.flipud: flipud, np.rot90: rot90, np.moveaxis: moveaxis,
    np.swapaxes: swapaxes, np.transpose: transpose, np.permute_dims: transpose,
    np.matrix_transpose: matrix_transpose, np.squeeze: squeeze, np.expand_dims: expand_dims,
    np.broadcast_to: broadcast_to, np.broadcast_arrays: _broadcast_arrays, np.tile: tile,
    np.repeat: repeat, np.roll: roll, np.pad: pad, np.diff: diff,
    np.cumulative_sum: cumulative_sum, np.cumulative_prod: cumulative_prod,
    np.ravel: lambda a, order="C": a.ravel(order) if order in ("C", "A", "K") else
    a.transpose().ravel(),
}
ATTRIBUTES = {"repeat": method(_repeat_method), "swapaxes": method(_swapaxes_method),
              "flatten": method(_flatten_method)}
