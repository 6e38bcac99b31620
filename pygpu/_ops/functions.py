"""NumPy's elementwise functions that are not ufuncs, made of the table's
ufuncs and the where kernel, with NumPy's answers: where, clip, round and
around, real, imag, conj, isclose."""

import builtins

import numpy as np

from .._core import DeviceArray
from .table import INTERNAL
from .ufunc import UFUNCS as U
from .ufunc import _host_array_error, apply, where

_NO_VALUE = np._NoValue


def clip(a, a_min=_NO_VALUE, a_max=_NO_VALUE, out=None, *, min=_NO_VALUE,  # noqa: A002
         max=_NO_VALUE, **kwargs):  # noqa: A002
    """numpy.clip: minimum(maximum(a, a_min), a_max); either bound may be None."""
    lo = a_min if a_min is not _NO_VALUE else (None if min is _NO_VALUE else min)
    hi = a_max if a_max is not _NO_VALUE else (None if max is _NO_VALUE else max)
    if lo is None and hi is None and a_min is _NO_VALUE and min is _NO_VALUE:
        raise TypeError("clip() needs a_min or a_max (or min= or max=)")
    if isinstance(a, DeviceArray) and a.dtype.kind in "iu":
        # as NumPy: a Python int bound beyond the dtype is the dtype's limit
        info = np.iinfo(a.dtype)
        lo, hi = (b if type(b) is not int else builtins.min(builtins.max(b, info.min), info.max)
                  for b in (lo, hi))
    if lo is None and hi is None:
        return U["positive"](a, out=out, **kwargs)
    if hi is None:
        return U["maximum"](a, lo, out=out, **kwargs)
    if lo is None:
        return U["minimum"](a, hi, out=out, **kwargs)
    return U["minimum"](U["maximum"](a, lo, **kwargs), hi, out=out, **kwargs)


def round(a, decimals=0, out=None):  # noqa: A001
    """numpy.round: half to even, at `decimals` places (negative: tens,
    hundreds, ...). Complex numbers round both parts."""
    if not isinstance(a, DeviceArray):
        raise TypeError(f"round takes a DeviceArray, not {type(a).__name__}")
    decimals = int(decimals)
    kind = a.dtype.kind
    if kind == "b":  # NumPy's: rint's float16, and no other places
        if decimals != 0:
            raise TypeError(f"Cannot cast ufunc '{'multiply' if decimals > 0 else 'divide'}' "
                            "output from dtype('float64') to dtype('bool') with casting rule "
                            "'same_kind'")
        return U["rint"](a, out=out)
    if kind in "iu":
        if decimals >= 0:
            return U["positive"](a, out=out)
        f = a.dtype.type(10 ** -decimals) if 10 ** -decimals <= np.iinfo(a.dtype).max else None
        if f is None:  # every value rounds to zero
            return U["multiply"](a, 0, out=out)
        r = U["multiply"](U["rint"](U["divide"](a, f)), f)
        return _copy_into(r.astype(a.dtype), out)
    if decimals == 0:
        return U["rint"](a, out=out)
    with np.errstate(over="ignore"):  # 10 ** 400 is inf, and the answer NaN, as NumPy's
        f = np.finfo(a.dtype).dtype.type(np.float64(10.0) ** abs(decimals))
    if decimals > 0:
        return U["divide"](U["rint"](U["multiply"](a, f)), f, out=out)
    return U["multiply"](U["rint"](U["divide"](a, f)), f, out=out)


around = round


def _copy_into(r, out):
    if out is None:
        return r if r.base is None else r.copy()
    out[...] = r
    return out


def real(a):
    """numpy.real: the real part (a new array for complex input, a itself
    otherwise, as NumPy returns the array)."""
    if a.dtype.kind != "c":
        return a
    return _part("real", a)


def imag(a):
    """numpy.imag: the imaginary part (zeros of a's dtype for real input)."""
    if a.dtype.kind != "c":
        return U["multiply"](a, a.dtype.type(0)) if a.dtype.kind != "b" else \
            U["logical_and"](a, False)
    return _part("imag", a)


def _part(name, a):
    loop = ("F", "f") if a.dtype == np.complex64 else ("D", "d")
    return apply(INTERNAL[name], loop, [a])


def conj(a, out=None):
    """numpy.conj (numpy.conjugate)."""
    return U["conjugate"](a, out=out)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy.isclose: |a - b| <= atol + rtol * |b|, with NumPy's handling of
    infinities (equal ones are close) and of NaN (close only with
    equal_nan)."""
    dt = np.result_type(*[x.dtype if isinstance(x, (DeviceArray, np.generic)) else x
                          for x in (a, b)], 1.0)
    x = a.astype(dt) if isinstance(a, DeviceArray) and a.dtype != dt else a
    y = b.astype(dt) if isinstance(b, DeviceArray) and b.dtype != dt else b
    finite = U["logical_and"](U["isfinite"](x), U["isfinite"](y))
    within = U["less_equal"](U["absolute"](U["subtract"](x, y)),
                             U["add"](U["multiply"](U["absolute"](y), rtol), atol))
    result = U["logical_or"](U["logical_and"](finite, within), U["equal"](x, y))
    if equal_nan:
        result = U["logical_or"](result, U["logical_and"](U["isnan"](x), U["isnan"](y)))
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy.allclose: whether every element is close (isclose), as a Python
    bool (NumPy's answer; it waits for the device)."""
    from . import reduction

    return bool(reduction.all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """numpy.array_equal: the same shape and every element equal (NaN equal to
    NaN with equal_nan), as a Python bool."""
    from . import reduction

    if tuple(np.shape(a1)) != tuple(np.shape(a2)):
        return False
    same = U["equal"](a1, a2)
    if equal_nan:
        same = U["logical_or"](same, U["logical_and"](U["isnan"](a1), U["isnan"](a2)))
    return bool(reduction.all(same))


def _device_array(name, x):
    if not isinstance(x, DeviceArray):
        if isinstance(x, np.ndarray):
            raise _host_array_error(name, x)
        raise TypeError(f"{name} takes DeviceArrays, not {type(x).__name__}")
    return x


def _into(r, out):
    if out is None:
        return r
    if out.shape != r.shape or out.dtype != r.dtype:
        raise ValueError(f"output array is not acceptable (must have the right shape "
                         f"{r.shape} and dtype {r.dtype}, as numpy.dot's out=)")
    out[...] = r
    return out


def dot(a, b, out=None):
    """numpy.dot through the matrix product (matmul, cuBLAS on a GPU): 0-d
    operands multiply; 1-D by 1-D is the inner product (a 0-d array); N-D by
    1-D sums over the last axis; N-D by M-D (M >= 2) over a's last and b's
    second-to-last axes."""
    if isinstance(a, DeviceArray) and isinstance(b, DeviceArray) and (a.ndim == 0 or
                                                                       b.ndim == 0):
        return U["multiply"](a, b, out=out)
    a, b = _device_array("dot", a), _device_array("dot", b)
    if b.ndim <= 2 or a.ndim <= 1:
        if a.ndim <= 2 or b.ndim == 1:
            return _into(a @ b, out)
    # N-D by M-D: a (..., K) against b (..., K, N) with b's leading axes kept apart
    k = a.shape[-1]
    if b.shape[-2] != k:
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {k} (dim "
                         f"{a.ndim - 1}) != {b.shape[-2]} (dim {b.ndim - 2})")
    axes = list(range(b.ndim))
    moved = b.transpose(axes[-2:-1] + axes[:-2] + axes[-1:]).copy().reshape(k, -1)
    r = a.copy().reshape(-1, k) @ moved
    return _into(r.reshape(a.shape[:-1] + b.shape[:-2] + b.shape[-1:]), out)


def vdot(a, b):
    """numpy.vdot: the conjugate of a's elements, flattened, dotted with b's."""
    a, b = _device_array("vdot", a), _device_array("vdot", b)
    if a.size != b.size:
        raise ValueError("cannot reshape: vdot needs arrays of the same size")
    x = conj(a) if a.dtype.kind == "c" else a
    return x.copy().reshape(-1) @ b.copy().reshape(-1)


def inner(a, b):
    """numpy.inner: sums over the last axes of a and b."""
    if isinstance(a, DeviceArray) and isinstance(b, DeviceArray) and (a.ndim == 0 or
                                                                       b.ndim == 0):
        return U["multiply"](a, b)
    a, b = _device_array("inner", a), _device_array("inner", b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim "
                         f"{a.ndim - 1}) != {b.shape[-1]} (dim {b.ndim - 1})")
    if a.ndim == 1 and b.ndim == 1:
        return a @ b
    k = a.shape[-1]
    r = a.copy().reshape(-1, k) @ b.copy().reshape(-1, k).T
    return r.reshape(a.shape[:-1] + b.shape[:-1])


from .manipulation import concatenate, stack  # noqa: E402  (pygpu.concatenate, dask)

__all__ = ["allclose", "around", "array_equal", "clip", "concatenate", "conj", "dot", "imag",
           "inner", "isclose", "real", "round", "stack", "vdot", "where"]
