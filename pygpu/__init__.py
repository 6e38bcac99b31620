"""pygpu: direct, fast access to NVIDIA GPUs from Python.

    >>> import numpy as np, pygpu
    >>> from pygpu import cuda
    >>> d = cuda.to_device(np.arange(6, dtype=np.float32).reshape(2, 3))
    >>> pygpu.kernels.add_one[1, (3, 2)](d)
    >>> d.copy_to_host()
    array([[1., 2., 3.],
           [4., 5., 6.]], dtype=float32)

With no GPU, set PYGPU_SIMULATOR=1 before the first operation and the same
code runs on pygpu's CPU simulator.
"""

import atexit as _atexit
import sys as _sys

from . import _core  # noqa: F401  (pygpu._core, the C extension)
from ._core import (
    CudaError,
    Device,
    DeviceArray,
    Event,
    KernelAssertionError,
    KernelError,
    NoDeviceError,
    OutOfMemoryError,
    Stream,
    add_one,
    asnumpy,
    matmul,
)

__version__ = "0.1.0"
# pygpu is an array API namespace (pygpu/_ops/namespace.py; docs/SEMANTICS.md)
__array_api_version__ = "2024.12"


def __array_namespace_info__():
    """The array API's inspection namespace: capabilities(), default_device(),
    devices(), default_dtypes(device=), dtypes(device=, kind=)."""
    from ._ops.namespace import array_namespace_info

    return array_namespace_info()


def asarray(obj, /, dtype=None, *, device=None, copy=None):
    """A DeviceArray of obj: a DeviceArray (itself, where dtype and device
    match), an object with __cuda_array_interface__ or CUDA DLPack (sharing
    its memory), or anything numpy.asarray takes (copied to the device).
    copy=True always copies; copy=False never does (ValueError where a copy is
    needed); device: a pygpu.Device or an id (None: obj's, or the current
    device for host data)."""
    if device is None and copy is None:
        try:
            return _core.asarray(obj, dtype)
        except TypeError:
            if not isinstance(obj, list | tuple):  # a list may hold DeviceArrays
                raise
    from ._ops.namespace import asarray

    return asarray(obj, dtype, device=device, copy=copy)


def from_dlpack(x, /, *, device=None, copy=None):
    """A DeviceArray of x (an object with __dlpack__ and __dlpack_device__),
    sharing its memory where x is a CUDA array on `device` (None: x's), else
    a copy; copy=True always copies, copy=False never (ValueError where one is
    needed)."""
    if device is None and copy is None and isinstance(x, DeviceArray):
        return x
    from ._ops.namespace import from_dlpack

    return from_dlpack(x, device=device, copy=copy)


# The creation functions with the standard's device= (a pygpu.Device or an id,
# checked; None: the current device, or x's for the *_like ones); without it
# they are pygpu._core's C functions.

_MISSING = object()


def _on(device):
    from ._ops.namespace import device_id

    return Device(device_id(device))


def empty(shape, dtype=None, order="C", *, device=None):
    """An uninitialized device array (float64 unless dtype says otherwise)."""
    if device is None:
        return _core.empty(shape, dtype, order)
    with _on(device):
        return _core.empty(shape, dtype, order)


def zeros(shape, dtype=None, order="C", *, device=None):
    """A device array of zeros (float64 unless dtype says otherwise)."""
    if device is None:
        return _core.zeros(shape, dtype, order)
    with _on(device):
        return _core.zeros(shape, dtype, order)


def full(shape, fill_value=_MISSING, dtype=None, order="C", *, device=None):
    """A device array filled with fill_value (its dtype from fill_value when
    dtype is None: bool, int64, float64 or complex128 for Python scalars)."""
    if fill_value is _MISSING:
        return _core.full(shape)  # the C function's TypeError
    if device is None:
        return _core.full(shape, fill_value, dtype, order)
    with _on(device):
        return _core.full(shape, fill_value, dtype, order)


def ones(shape, dtype=None, order="C", *, device=None):
    """A device array of ones (float64 unless dtype says otherwise)."""
    return full(shape, 1, "float64" if dtype is None else dtype, order, device=device)


# the standard's *_like signatures: adapters of creation.py's (NumPy's
# signatures, which np.zeros_like(d) reaches), the one implementation


def empty_like(x, /, dtype=None, *, device=None):
    """An uninitialized array of x's shape and dtype (unless dtype says), on
    x's device (unless device says)."""
    from ._ops import creation

    return creation.empty_like(x, dtype, device=device)


def zeros_like(x, /, dtype=None, *, device=None):
    """Zeros of x's shape and dtype (unless dtype says), on x's device (unless
    device says)."""
    from ._ops import creation

    return creation.zeros_like(x, dtype, device=device)


def ones_like(x, /, dtype=None, *, device=None):
    """Ones of x's shape and dtype (unless dtype says), on x's device (unless
    device says)."""
    from ._ops import creation

    return creation.ones_like(x, dtype, device=device)


def full_like(x, /, fill_value, dtype=None, *, device=None):
    """fill_value in x's shape and dtype (unless dtype says), on x's device
    (unless device says)."""
    from ._ops import creation

    return creation.full_like(x, fill_value, dtype, device=device)


class MemoryPool:
    """The caching allocator behind every DeviceArray, for one device.

    Freed arrays keep their memory in the pool, to be handed out again without
    cudaMalloc or cudaFree (which waits for the whole device). Reuse is
    stream-ordered: a block freed on one stream goes to another only once the
    work queued before the free has finished. When the device runs out of
    memory, the pool frees its cached blocks and tries once more.
    """

    def __init__(self, device=None):
        from ._ops.namespace import device_id

        self._device = device_id(device)

    def _dev(self):
        return _core.get_device() if self._device is None else self._device

    def used_bytes(self):
        """Bytes held by live arrays (each rounded up to 512 bytes)."""
        return _core._pool_stats(self._dev())[0]

    def total_bytes(self):
        """Bytes the pool holds from the device: used plus cached."""
        return _core._pool_stats(self._dev())[1]

    def free_bytes(self):
        """Bytes cached for reuse."""
        used, total, _ = _core._pool_stats(self._dev())
        return total - used

    def free_all_blocks(self):
        """Give every cached block back to the device (cudaFree)."""
        _core._pool_free_all(self._dev())

    def set_limit(self, size=None, fraction=None):
        """Cap the pool's total bytes: `size` in bytes, or a `fraction` of the
        device's memory; None or 0 removes the cap. Past the cap, allocating
        raises OutOfMemoryError."""
        if size is not None and fraction is not None:
            raise ValueError("give size or fraction, not both")
        if fraction is not None:
            if not 0 <= fraction <= 1:
                raise ValueError(f"fraction must be between 0 and 1, not {fraction}")
            size = int(Device(self._dev()).total_memory * fraction)
        _core._pool_set_limit(self._dev(), 0 if size is None else size)

    def get_limit(self):
        """The cap in bytes (0: none)."""
        return _core._pool_stats(self._dev())[2]

    def __repr__(self):
        used, total, limit = _core._pool_stats(self._dev())
        return f"<pygpu.MemoryPool device={self._dev()} used={used} total={total} limit={limit}>"


def get_memory_pool(device=None):
    """The memory pool of `device` (default: the current device at each call)."""
    return MemoryPool(device)


# The modules whose caches hold device memory or library handles, each with a
# _release() that gives them back: asked only where the program imported them
_RELEASERS = ("pygpu._ops.indexing", "pygpu.fft", "pygpu.linalg")


def _release_all():
    """Give back to the device all that pygpu keeps for reuse: the device
    memory of its caches (pygpu._ops.indexing's shapes and count words), the
    cuFFT plans and cuSOLVER handles, then (after a collection, for arrays in
    cycles) the cuBLAS handles, the staging buffers and the memory pool's
    cached blocks, on every device it has used. Run at exit (atexit), so that
    a leak check (compute-sanitizer --leak-check full) finds nothing held by
    pygpu itself; pygpu works on after it, each thing made again at need."""
    import gc

    for name in _RELEASERS:
        module = _sys.modules.get(name)
        if module is not None:
            module._release()
    gc.collect()
    _core._release_cached()


def _release_at_exit():
    try:
        _release_all()
    except CudaError:
        pass  # the context is unusable (a kernel faulted): the driver frees it all


_atexit.register(_release_at_exit)


from . import blas, cuda, kernels  # noqa: E402  (they use the names above)
from ._cache import UnsafeCacheWarning  # noqa: E402
from ._dask_hook import install as _install_dask_hook  # noqa: E402
from .rawkernel import CompileError, In, InOut, Out, RawKernel, RawModule  # noqa: E402

_install_dask_hook()  # Dask and distributed find DeviceArray by themselves (pygpu/dask.py)

# NumPy's ufuncs on DeviceArrays (pygpu.sin, pygpu.maximum, ...), from the op
# table (add, subtract and multiply of two operands still take the C functions
# of pygpu._core, with their stream=), NumPy's functions made of ufuncs (where,
# clip, round, ...), the reductions, and the areas of pygpu/_ops (each
# module's __all__: creation, manipulation, indexing, sorting, the array API's
# names): found at first use (PEP 562). The ufunc machinery itself (ufunc.py,
# the op table, codegen) is imported here, at the end: about 3-6 ms that
# `import pygpu` pays once (with bytecode; docs/PERFORMANCE.md) rather than
# every process's first op, whose kernel comes from the disk cache in about 3
# ms. The areas and the namespace stay lazy.
_FUNCTIONS = ("allclose", "around", "array_equal", "clip", "conj", "dot", "imag", "inner",
              "isclose", "real", "round", "vdot")
_REDUCTIONS = ("all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero", "cumprod",
               "cumsum", "max", "mean", "min", "nanargmax", "nanargmin", "nancumprod",
               "nancumsum", "nanmax", "nanmean", "nanmin", "nanprod", "nanstd", "nansum",
               "nanvar", "prod", "ptp", "std", "sum", "var")
# pygpu.random, pygpu.linalg and pygpu.fft: imported at first use
_SUBMODULES = ("fft", "linalg", "random")
_EAGER = [
    "CudaError", "Device", "DeviceArray", "Event", "KernelAssertionError", "KernelError",
    "MemoryPool", "NoDeviceError",
    "OutOfMemoryError", "Stream", "UnsafeCacheWarning", "get_memory_pool",
    "CompileError", "In", "InOut", "Out", "RawKernel", "RawModule", "from_dlpack",
    "add_one", "asarray", "asnumpy", "blas", "cuda", "empty", "empty_like", "full",
    "full_like", "kernels", "matmul", "ones", "ones_like", "zeros", "zeros_like",
]


def _ufunc_names():
    from ._ops.ufunc import UFUNCS

    return sorted(n for n in UFUNCS if n not in _EAGER)


def __getattr__(name):
    if not name.startswith("_") and name not in _SUBMODULES:
        # a ufunc (pygpu.sin) without the namespace's module, but for the ones
        # whose special values the standard and NumPy differ on (STANDARD)
        from ._ops.ufunc import STANDARD_UFUNCS, UFUNCS

        if name in UFUNCS and name not in STANDARD_UFUNCS:
            value = globals()[name] = UFUNCS[name]
            return value
        # the array API's names first: where the standard and NumPy differ
        # (clip), pygpu.f is the standard's and np.f(d) NumPy's
        from ._ops import namespace

        if name in namespace.__all__:
            value = globals()[name] = getattr(namespace, name)
            return value
    if name in _FUNCTIONS:
        from ._ops import functions as module
    elif name in _REDUCTIONS:
        from ._ops import reduction as module
    elif name == "ufunc":
        from ._ops import ufunc as module
    elif name == "__all__":
        from ._ops import merged

        value = [*_EAGER, *_FUNCTIONS, *_REDUCTIONS, "ufunc", *_SUBMODULES,
                 *_ufunc_names()]
        value += sorted(n for n in merged("__all__") if n not in value)
        globals()["__all__"] = value
        return value
    elif name in _SUBMODULES:
        import importlib

        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module 'pygpu' has no attribute {name!r}") from None
        globals()[name] = value
        return value
    elif not name.startswith("_"):
        from ._ops import merged
        from ._ops.ufunc import UFUNCS

        if name in UFUNCS:
            value = UFUNCS[name]
        elif name in merged("__all__"):
            value = getattr(merged("__all__")[name], name)
        else:
            raise AttributeError(f"module 'pygpu' has no attribute {name!r}")
        globals()[name] = value
        return value
    else:
        raise AttributeError(f"module 'pygpu' has no attribute {name!r}")
    value = globals()[name] = getattr(module, name)
    return value


def __dir__():
    return sorted(set(globals()) | set(__getattr__("__all__")))


from ._ops import ufunc as _ufunc  # noqa: E402,F401  (see above)
