"""DeviceArray's methods written in Python: the C type forwards each name of
METHODS (csrc: the one list, PG_PY_METHODS) here with the array first. NumPy's
own functions (np.sum(d), np.mean(d), np.argmax(d), np.cumsum(d), np.round(d))
reach these through __array_function__, as they call an array's methods."""

import numpy as np

from . import creation, functions, reduction

_NoValue = np._NoValue


def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,  # noqa: A001
        where=True):
    return reduction.sum(self, axis, dtype, out, keepdims, initial, where)


def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    return reduction.prod(self, axis, dtype, out, keepdims, initial, where)


def max(self, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):  # noqa: A001
    return reduction.max(self, axis, out, keepdims, initial, where)


def min(self, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):  # noqa: A001
    return reduction.min(self, axis, out, keepdims, initial, where)


def mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    return reduction.mean(self, axis, dtype, out, keepdims, where=where)


def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        **kwargs):
    return reduction.var(self, axis, dtype, out, ddof, keepdims, where=where, **kwargs)


def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        **kwargs):
    return reduction.std(self, axis, dtype, out, ddof, keepdims, where=where, **kwargs)


def argmax(self, axis=None, out=None, *, keepdims=False):
    return reduction.argmax(self, axis, out, keepdims=keepdims)


def argmin(self, axis=None, out=None, *, keepdims=False):
    return reduction.argmin(self, axis, out, keepdims=keepdims)


def any(self, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    return reduction.any(self, axis, out, keepdims, where=where)


def all(self, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    return reduction.all(self, axis, out, keepdims, where=where)


def cumsum(self, axis=None, dtype=None, out=None):
    return reduction.cumsum(self, axis, dtype, out)


def cumprod(self, axis=None, dtype=None, out=None):
    return reduction.cumprod(self, axis, dtype, out)


def round(self, decimals=0, out=None):  # noqa: A001
    return functions.round(self, decimals, out)


def clip(self, min=None, max=None, out=None, **kwargs):  # noqa: A002
    return functions.clip(self, min, max, out, **kwargs)


def conj(self):
    return functions.conj(self)


conjugate = conj


def dot(self, b, out=None):
    return functions.dot(self, b, out)


def fill(self, value):
    """Every element set to value, converted as NumPy's fill converts it."""
    self[...] = value


def squeeze(self, axis=None):
    """The array without axes of length 1 (a view), as ndarray.squeeze."""
    ndim = self.ndim
    if axis is None:
        axes = [i for i, n in enumerate(self.shape) if n == 1]
    else:
        axes = [axis] if isinstance(axis, int) else list(axis)
        axes = [np._core.numeric.normalize_axis_index(a, ndim) for a in axes]
        if len(set(axes)) != len(axes):
            raise ValueError("duplicate value in 'axis'")
        for a in axes:
            if self.shape[a] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 "equal to one")
    return self.reshape(tuple(n for i, n in enumerate(self.shape) if i not in axes))


def tolist(self):
    """The elements as nested Python lists (copied to the host), as
    ndarray.tolist."""
    return self.copy_to_host().tolist()


METHODS = ("sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any",
           "all", "cumsum", "cumprod", "round", "clip", "conj", "conjugate", "dot", "fill",
           "squeeze", "tolist")


# ---- NumPy's functions that do not call methods: __array_function__ (NEP 18) -------

def _where(condition, *xy):
    """numpy.where: nonzero(condition) with one argument (indexing.py)."""
    from .indexing import where

    return where(condition, *xy)


# (NumPy's functions of the areas of pygpu/_ops, np.concatenate, np.sort, ...,
# are in each area's NUMPY, asked after this table; the *_like ones take
# NumPy's signature, where pygpu.zeros_like takes the standard's)
ARRAY_FUNCTIONS = {
    np.empty_like: creation.empty_like, np.zeros_like: creation.zeros_like,
    np.ones_like: creation.ones_like, np.full_like: creation.full_like,
    np.where: _where, np.clip: functions.clip,
    np.round: functions.round, np.around: functions.round, np.real: functions.real,
    np.imag: functions.imag, np.conj: functions.conj, np.conjugate: functions.conj,
    np.isclose: functions.isclose, np.allclose: functions.allclose,
    np.array_equal: functions.array_equal, np.dot: functions.dot, np.vdot: functions.vdot,
    np.inner: functions.inner,
    np.count_nonzero: reduction.count_nonzero, np.ptp: reduction.ptp,
    np.nansum: reduction.nansum, np.nanprod: reduction.nanprod, np.nanmax: reduction.nanmax,
    np.nanmin: reduction.nanmin, np.nanmean: reduction.nanmean, np.nanvar: reduction.nanvar,
    np.nanstd: reduction.nanstd, np.nanargmax: reduction.nanargmax,
    np.nanargmin: reduction.nanargmin, np.nancumsum: reduction.nancumsum,
    np.nancumprod: reduction.nancumprod,
}


def array_function(func, types, args, kwargs):
    """DeviceArray.__array_function__'s Python side: pygpu's implementation of
    func, or NotImplemented (then NumPy's own runs, where it only calls
    methods, or the C side names the function as unsupported)."""
    impl = ARRAY_FUNCTIONS.get(func)
    if impl is None:
        from . import merged

        impl = merged("NUMPY").get(func)
        if impl is None:
            return NotImplemented
    return impl(*args, **kwargs)


def attribute(self, name):
    """DeviceArray's attributes written in Python (the areas' ATTRIBUTES:
    array.c's getattro asks here for a name the C type lacks)."""
    from . import merged

    get = merged("ATTRIBUTES").get(name)
    if get is None:
        raise AttributeError(f"'pygpu.DeviceArray' object has no attribute {name!r}")
    return get(self)
