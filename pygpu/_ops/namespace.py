"""The array API namespace (version 2024.12): the dtypes, __array_namespace_info__,
isdtype, result_type, can_cast, finfo, iinfo, astype, asarray and from_dlpack
with the standard's copy= and device=, and the standard's names for NumPy's
functions (concat, permute_dims, matrix_transpose, vecdot, ...; acos, pow,
bitwise_invert ... are ufuncs of ufunc.py under both names).

Where the standard and NumPy differ, these functions follow the standard, and
NumPy's own functions on DeviceArrays (np.clip(d), d.astype) follow NumPy
(docs/SEMANTICS.md, "The array API namespace").

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads."""

import builtins
import math

import numpy as np

from . import method
from .table import STANDARD

API_VERSION = "2024.12"
# the versions whose namespace pygpu is: each later one only adds to the earlier ones
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

# ---- the dtypes: NumPy's scalar types, as NumPy's own namespace has them ------------
# (x.dtype == pygpu.float32 holds, np.zeros(3, pygpu.float32) works, and the
# standard asks no more of a dtype than == with itself and with others)

bool = np.bool  # noqa: A001
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float32, float64 = np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128

_DTYPES = {"bool": bool, "int8": int8, "int16": int16, "int32": int32, "int64": int64,
           "uint8": uint8, "uint16": uint16, "uint32": uint32, "uint64": uint64,
           "float32": float32, "float64": float64, "complex64": complex64,
           "complex128": complex128}
_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
          "real floating": "f", "complex floating": "c", "numeric": "iufc"}

e, inf, nan, pi = math.e, math.inf, math.nan, math.pi
newaxis = None


# ---- devices ------------------------------------------------------------------------

def device_id(device, where=None):
    """The id of `device` (a pygpu.Device, or a device id), checked against the
    devices that exist; None for None. `where` (a function's name) starts the
    messages; an id out of range is refused in the words of the C functions'
    device argument (csrc/base/args.c)."""
    from .. import _core

    if device is None:
        return None
    if isinstance(device, _core.Device):
        return device.id
    head = f"{where}: " if where else ""
    if isinstance(device, builtins.bool) or not isinstance(device, int | np.integer):
        raise TypeError(f"{head}device must be a pygpu.Device (one of "
                        f"pygpu.__array_namespace_info__().devices()) or a device id (an "
                        f"int), not {type(device).__name__} {device!r}")
    count = _core.device_count()
    if not 0 <= device < count:
        raise ValueError(f"{head}device {device!r} does not exist: there "
                         f"{'is' if count == 1 else 'are'} {count} device"
                         f"{'' if count == 1 else 's'} (ids 0 to {count - 1})")
    return int(device)


def _stream(stream):
    from .. import _core

    if stream is not None and not isinstance(stream, _core.Stream):
        raise TypeError(f"stream must be a pygpu.Stream or None, not {type(stream).__name__}")
    return stream


def to_device(x, device, /, *, stream=None):
    """x on `device` (a pygpu.Device or an id): x itself when it is there
    already, else a copy made on `stream` (None: the target device's current
    stream)."""
    from .. import _core

    target = device_id(device)
    if target is None:
        raise TypeError("to_device() needs a device, not None")
    _stream(stream)
    if x.device.id == target:
        return x
    with _core.Device(target):
        out = _core.empty(x.shape, x.dtype)
    if stream is None:
        out.copy_to_device(x)
    else:
        out.copy_to_device(x, stream=stream)
    return out


class ArrayNamespaceInfo:
    """What pygpu.__array_namespace_info__() returns: the namespace's
    capabilities, devices and dtypes, as the array API standard asks."""

    __module__ = "pygpu"

    def capabilities(self):
        from .. import _core

        # d[mask] (indexing.py), nonzero and the unique_* functions (sorting.py)
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": _core.MAXDIMS}

    def default_device(self):
        from .. import _core

        return _core.Device()

    def devices(self):
        from .. import _core

        return [_core.Device(i) for i in range(_core.device_count())]

    def default_dtypes(self, *, device=None):
        device_id(device)
        return {"real floating": np.dtype(float64), "complex floating": np.dtype(complex128),
                "integral": np.dtype(int64), "indexing": np.dtype(int64)}

    def dtypes(self, *, device=None, kind=None):
        device_id(device)
        if kind is None:
            return {name: np.dtype(t) for name, t in _DTYPES.items()}
        kinds = kind if isinstance(kind, tuple) else (kind,)
        for k in kinds:
            if k not in _KINDS:
                raise ValueError(f"kind must be one of {', '.join(map(repr, _KINDS))} or a "
                                 f"tuple of them, not {k!r}")
        chars = "".join(_KINDS[k] for k in kinds)
        return {name: np.dtype(t) for name, t in _DTYPES.items() if np.dtype(t).kind in chars}

    def __repr__(self):
        return "<pygpu.__array_namespace_info__()>"


def array_namespace_info():
    return ArrayNamespaceInfo()


# ---- data type functions --------------------------------------------------------------

def _dtype_of(x, what):
    from .. import _core

    if isinstance(x, _core.DeviceArray | np.ndarray):
        return x.dtype
    try:
        return np.dtype(x)
    except TypeError:
        raise TypeError(f"{what} must be a dtype or an array, not {type(x).__name__}") from None


def isdtype(dtype, kind):
    """Whether dtype is of kind: a dtype, one of 'bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating',
    'numeric', or a tuple of them."""
    return np.isdtype(dtype, kind)


def result_type(*arrays_and_dtypes):
    """The dtype of an operation on arrays, dtypes and Python scalars, by the
    standard's promotion rules (NumPy's, Python scalars taking the arrays'
    dtype)."""
    from .. import _core

    if not arrays_and_dtypes:
        raise ValueError("result_type() needs at least one array, dtype or scalar")
    args = [a.dtype if isinstance(a, _core.DeviceArray) else a for a in arrays_and_dtypes]
    if builtins.all(type(a) in (builtins.bool, int, float, complex) for a in args):
        raise TypeError("result_type() needs at least one array or dtype; Python scalars "
                        "alone have no dtype")
    return np.result_type(*args)


def can_cast(from_, to, /):
    """Whether from_ (a dtype or an array) casts to the dtype `to` by the
    promotion rules (safe casting)."""
    return np.can_cast(_dtype_of(from_, "from_"), _dtype_of(to, "to"), casting="safe")


class finfo_object:
    """pygpu.finfo(type): bits, eps, max, min, smallest_normal (Python
    floats) and dtype, of a real floating dtype or of the parts of a complex
    one."""

    __module__ = "pygpu"

    def __init__(self, dtype):
        info = np.finfo(dtype)
        self.bits = info.bits
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.dtype = info.dtype

    def __repr__(self):
        return (f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, "
                f"smallest_normal={self.smallest_normal}, dtype={self.dtype})")


class iinfo_object:
    """pygpu.iinfo(type): bits, max, min (Python ints) and dtype."""

    __module__ = "pygpu"

    def __init__(self, dtype):
        info = np.iinfo(dtype)
        self.bits, self.max, self.min = info.bits, int(info.max), int(info.min)
        self.dtype = info.dtype

    def __repr__(self):
        return f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, dtype={self.dtype})"


def finfo(type, /):  # noqa: A002
    """Machine limits of a floating dtype (or an array's)."""
    dtype = _dtype_of(type, "finfo()'s argument")
    if dtype.kind not in "fc":
        raise ValueError(f"finfo() takes a floating dtype, not {dtype}")
    return finfo_object(dtype)


def iinfo(type, /):  # noqa: A002
    """Machine limits of an integer dtype (or an array's)."""
    dtype = _dtype_of(type, "iinfo()'s argument")
    if dtype.kind not in "iu":
        raise ValueError(f"iinfo() takes an integer dtype, not {dtype}")
    return iinfo_object(dtype)


def _array(x, name):
    from .. import _core
    from .ufunc import _host_array_error

    if not isinstance(x, _core.DeviceArray):
        if isinstance(x, np.ndarray):
            raise _host_array_error(name, x)
        raise TypeError(f"{name}() takes a DeviceArray, not {type(x).__name__}")
    return x


def astype(x, dtype, /, *, copy=True, device=None):
    """x converted to dtype (on `device`): a new array, or with copy=False x
    itself where it has that dtype and device already."""
    _array(x, "astype")
    target = device_id(device)
    if copy not in (True, False):
        raise ValueError(f"copy must be True or False, not {copy!r}")
    if target is not None and target != x.device.id:
        x = to_device(x, target)
        copy = False
    return x.astype(dtype, copy=copy)


# ---- asarray and from_dlpack with the standard's copy= and device= --------------------

def _copy_arg(copy):
    if copy is not None and copy is not True and copy is not False:
        raise ValueError(f"copy must be True, False or None, not {copy!r}")
    return copy


def asarray(obj, /, dtype=None, *, device=None, copy=None):
    """A DeviceArray of obj: a DeviceArray, an object with
    __cuda_array_interface__ or CUDA DLPack (shared, not copied), or anything
    numpy.asarray takes (copied to the device). copy=True always copies;
    copy=False never does, and raises ValueError where a copy is needed (a
    host object, another dtype, another device); None copies only where
    needed. device: where the array goes (None: obj's device, or the current
    one for host data)."""
    from .. import _core

    _copy_arg(copy)
    target = device_id(device)
    if dtype is not None:
        dtype = np.dtype(dtype)
    if isinstance(obj, _core.DeviceArray):
        x = obj
    else:
        x = None
        if hasattr(obj, "__cuda_array_interface__") or _cuda_dlpack(obj):
            x = _core.asarray(obj)  # shares the memory
    if x is None:  # host data: copied to the device
        if copy is False:
            raise ValueError(f"asarray(copy=False): a {type(obj).__name__} is host data; it "
                             "cannot be on the device without a copy")
        if isinstance(obj, list | tuple) and _holds_arrays(obj):
            obj = _host_nested(obj)
        if target is None:
            return _core.asarray(obj, dtype)
        with _core.Device(target):
            return _core.asarray(obj, dtype)
    moved = target is not None and target != x.device.id
    recast = dtype is not None and dtype != x.dtype
    if copy is False and (moved or recast):
        raise ValueError(
            f"asarray(copy=False): the array is on device {x.device.id} with dtype {x.dtype}; "
            f"{'device ' + str(target) if moved else 'dtype ' + str(dtype)} needs a copy")
    if moved:
        x = to_device(x, target)
        copy = False if copy else copy
    if recast:
        return x.astype(dtype)
    return x.copy() if copy else x


def _holds_arrays(seq):
    from .. import _core

    return builtins.any(isinstance(o, _core.DeviceArray) or
                        (isinstance(o, list | tuple) and _holds_arrays(o)) for o in seq)


def _host_nested(obj):
    """A nested sequence with its DeviceArrays (0-d ones, in the standard)
    copied to the host, for numpy.asarray."""
    from .. import _core

    if isinstance(obj, _core.DeviceArray):
        return obj.copy_to_host()
    if isinstance(obj, list | tuple):
        return [_host_nested(o) for o in obj]
    return obj


def _cuda_dlpack(obj):
    if isinstance(obj, np.ndarray) or not hasattr(obj, "__dlpack_device__"):
        return False
    try:
        return obj.__dlpack_device__()[0] == 2  # kDLCUDA
    except Exception:
        return False


def from_dlpack(x, /, *, device=None, copy=None):
    """A DeviceArray of x, an object with __dlpack__: sharing its memory where
    x is a CUDA array on `device` (None: x's), else a copy (another device; a
    host array where device= names a pygpu device, BufferError without it, as
    the answer would be on the host); ValueError where a copy is needed and
    copy=False. copy=True always copies."""
    from .. import _core

    _copy_arg(copy)
    target = device_id(device)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack() takes an object with __dlpack__, not "
                        f"{type(x).__name__}")
    if isinstance(x, _core.DeviceArray) or _cuda_dlpack(x):
        y = _core.from_dlpack(x)
    elif target is None:  # the standard's answer is on x's device: pygpu has none there
        return _core.from_dlpack(x)  # BufferError, naming the device
    elif copy is False:
        raise ValueError("from_dlpack(copy=False): the array is in host memory; it cannot be "
                         f"on device {target} without a copy")
    else:  # a host producer (kDLCPU), copied to the device asked for
        with _core.Device(target):
            return _core.asarray(np.from_dlpack(x))
    return asarray(y, device=target, copy=copy)


# ---- the standard's names and signatures for NumPy's functions -------------------------

def concat(arrays, /, *, axis=0):
    """Arrays joined along an existing axis (axis=None: flattened first), in
    their result type."""
    from .manipulation import concatenate

    arrays = list(arrays) if not isinstance(arrays, list | tuple) else arrays
    for a in arrays:
        _array(a, "concat")
    return concatenate(arrays, axis)


def _ndim_axis(x, axis, name):
    if isinstance(axis, builtins.bool) or not isinstance(axis, int | np.integer):
        raise TypeError(f"{name}: axis must be an int, not {type(axis).__name__}")
    if not -x.ndim <= axis < x.ndim:
        raise np.exceptions.AxisError(axis, x.ndim)
    return int(axis) % x.ndim


def permute_dims(x, /, axes):
    """A view of x with its axes in the order `axes` (a permutation)."""
    _array(x, "permute_dims")
    axes = tuple(axes)
    if len(axes) != x.ndim:
        raise ValueError(f"permute_dims: axes {axes} do not match an array of {x.ndim} "
                         "dimensions")
    axes = tuple(_ndim_axis(x, a, "permute_dims") for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"permute_dims: repeated axis in {axes}")
    return x.transpose(axes)


def matrix_transpose(x, /):
    """A view of x with its last two axes swapped (a stack of matrices):
    manipulation's, NumPy's errors, after the standard's check of x."""
    from .manipulation import matrix_transpose as transpose

    return transpose(_array(x, "matrix_transpose"))


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product of x1 and x2 along axis (x1 conjugated), the other
    axes broadcast; the dtype is their result type. axis counts from the end
    (the standard's [-N, -1], N the smaller ndim); a positive one is NumPy's,
    of each operand, and must name the same axis of both."""
    from . import reduction
    from .ufunc import UFUNCS

    _array(x1, "vecdot")
    _array(x2, "vecdot")
    dtype = np.result_type(x1.dtype, x2.dtype)
    if dtype.kind == "b":
        raise TypeError("vecdot takes numeric arrays, not bool ones")
    if isinstance(axis, builtins.bool) or not isinstance(axis, int | np.integer):
        raise TypeError(f"vecdot: axis must be an int, not {type(axis).__name__}")
    ndim = min(x1.ndim, x2.ndim)
    n = axis - x1.ndim if axis >= 0 else axis  # counted from the last axis
    if not -ndim <= n <= -1 or (axis >= 0 and axis - x2.ndim != n):
        raise np.exceptions.AxisError(
            f"vecdot: axis {axis} is not an axis of both x1 (ndim {x1.ndim}) and x2 "
            f"(ndim {x2.ndim}), counted from the end")
    if x1.shape[n] != x2.shape[n]:
        raise ValueError(f"vecdot: x1 of shape {x1.shape} and x2 of shape {x2.shape} differ "
                         f"along axis {axis}")
    if x1.dtype.kind == "c":
        x1 = UFUNCS["conjugate"](x1)
    return reduction.sum(UFUNCS["multiply"](x1, x2, dtype=dtype), axis=n, dtype=dtype)


def tensordot(x1, x2, /, *, axes=2):
    """The sum of products over the last `axes` axes of x1 and the first of
    x2 (an int), or over the axes paired by axes=(axes of x1, axes of x2);
    the standard's checks of axes, then contract (one implementation, which
    numpy.linalg.tensordot's NumPy checks share)."""
    _array(x1, "tensordot")
    _array(x2, "tensordot")
    if isinstance(axes, int | np.integer) and not isinstance(axes, builtins.bool):
        if not 0 <= axes <= min(x1.ndim, x2.ndim):
            raise ValueError(f"tensordot: axes={axes} must be between 0 and the smaller "
                             f"ndim, {min(x1.ndim, x2.ndim)}")
        a1, a2 = tuple(range(x1.ndim - axes, x1.ndim)), tuple(range(axes))
    else:
        try:
            a1, a2 = (tuple(a) if isinstance(a, list | tuple) else (a,) for a in axes)
        except (TypeError, ValueError):
            raise TypeError(f"tensordot: axes must be an int or a pair of sequences of "
                            f"axes, not {axes!r}") from None
        if len(a1) != len(a2):
            raise ValueError(f"tensordot: axes {a1} and {a2} are not as many")
        a1 = tuple(_ndim_axis(x1, a, "tensordot") for a in a1)
        a2 = tuple(_ndim_axis(x2, a, "tensordot") for a in a2)
        if len(set(a1)) != len(a1) or len(set(a2)) != len(a2):
            raise ValueError(f"tensordot: repeated axis in {axes!r}")
    for i, j in zip(a1, a2, strict=True):
        if x1.shape[i] != x2.shape[j]:
            raise ValueError(f"tensordot: axis {i} of x1 (size {x1.shape[i]}) and axis {j} "
                             f"of x2 (size {x2.shape[j]}) differ")
    return contract(x1, x2, a1, a2)


def contract(x1, x2, a1, a2):
    """tensordot of DeviceArrays over the checked axes a1 of x1 and a2 of x2
    (non-negative, distinct, of equal sizes), in their result type: one
    matrix product (cuBLAS on a GPU for floats, pygpu's integer kernel for
    integers and bools); float16 as products and a sum in float32."""
    from . import reduction
    from .ufunc import UFUNCS

    dtype = np.result_type(x1.dtype, x2.dtype)
    free1 = [i for i in range(x1.ndim) if i not in a1]
    free2 = [j for j in range(x2.ndim) if j not in a2]
    m = math.prod(x1.shape[i] for i in free1)
    n = math.prod(x2.shape[j] for j in free2)
    k = math.prod(x1.shape[i] for i in a1)
    shape = tuple(x1.shape[i] for i in free1) + tuple(x2.shape[j] for j in free2)
    with x1.device:
        x1 = x1.astype(dtype, copy=False).transpose(tuple(free1) + tuple(a1)).reshape((m, k))
        x2 = x2.astype(dtype, copy=False).transpose(tuple(a2) + tuple(free2)).reshape((k, n))
        if dtype.kind != "f" or dtype.itemsize > 2:
            return (x1 @ x2).reshape(shape)
        products = UFUNCS["multiply"](x1.reshape((m, k, 1)), x2.reshape((1, k, n)))
        return reduction.sum(products, axis=1, dtype=dtype).reshape(shape)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The n-th differences along axis, x[i+1] - x[i] (not_equal for bool),
    after joining prepend and append (arrays, or scalars taken as one slice):
    numpy.diff's implementation (manipulation.diff) after the standard's
    checks of x, n and axis."""
    from .manipulation import diff as numpy_diff

    _array(x, "diff")
    if isinstance(n, builtins.bool) or not isinstance(n, int | np.integer):
        raise TypeError(f"diff: n must be an int, not {type(n).__name__}")
    if isinstance(axis, builtins.bool) or not isinstance(axis, int | np.integer):
        raise TypeError(f"diff: axis must be an int, not {type(axis).__name__}")
    return numpy_diff(x, n, axis, prepend, append)


def clip(x, /, min=None, max=None):  # noqa: A002
    """x limited to [min, max] (either may be None), in x's dtype."""
    from . import functions

    _array(x, "clip")
    if min is None and max is None:
        return x.copy()
    r = functions.clip(x, min, max)
    # bounds of the same kind but wider: the standard keeps x's dtype, where
    # NumPy promotes (bounds of another kind: the standard leaves it open,
    # and NumPy's answer stays)
    return r.astype(x.dtype) if r.dtype != x.dtype and r.dtype.kind == x.dtype.kind else r


def _array_namespace(self, /, *, api_version=None):
    """The namespace of the array API that this array belongs to: pygpu."""
    if api_version is not None and api_version not in API_VERSIONS:
        raise ValueError(f"pygpu is the array API namespace of versions "
                         f"{', '.join(API_VERSIONS)}; api_version {api_version!r} is not one")
    import pygpu

    return pygpu


def _mT(self):
    return matrix_transpose(self)


def reshape(x, /, shape, *, copy=None):
    """The array API's reshape: a view where the elements' order allows one
    (copy=None), always a new array (copy=True), or a ValueError where only a
    copy would do (copy=False)."""
    x = _array(x, "reshape")
    if copy is not None and not isinstance(copy, (builtins.bool, np.bool_)):
        raise TypeError(f"reshape: copy must be True, False or None, not {copy!r}")
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if copy:
        return x.copy().reshape(shape)
    r = x.reshape(shape)
    if copy is not None and x.size and r.ptr != x.ptr:  # copy=False: only a view will do
        raise ValueError("reshape: copy=False, but these strides need a copy for shape "
                         f"{shape}")
    return r


# the ufuncs whose special values the standard and NumPy differ on: pygpu.f is
# the standard's (table.STANDARD), np.f(d) NumPy's
_STANDARD_UFUNCS = tuple(STANDARD)


def __getattr__(name):
    if name in _STANDARD_UFUNCS:  # made at first use, with the ufunc machinery
        from .ufunc import STANDARD_UFUNCS

        return STANDARD_UFUNCS[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [*_DTYPES, "e", "inf", "nan", "pi", "newaxis", "isdtype", "result_type",
           "can_cast", "finfo", "iinfo", "astype", "concat", "permute_dims",
           "matrix_transpose", "vecdot", "tensordot", "diff", "clip", "reshape",
           *_STANDARD_UFUNCS]
NUMPY = {}  # numpy function -> implementation (np.f(d) on DeviceArrays)
ATTRIBUTES = {  # DeviceArray attribute name -> function(array) -> value
    "__array_namespace__": method(_array_namespace),
    "to_device": method(to_device),
    "mT": _mT,
}
