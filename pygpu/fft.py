"""Discrete Fourier transforms on device arrays, as numpy.fft: cuFFT on a GPU,
NumPy on a host copy on the simulator.

cuFFT is loaded with ctypes at the first transform, never at `import pygpu`
or `import pygpu.fft`, through pygpu/_libs.py's one search (``PYGPU_CUFFT``,
the loader's search, the CUDA toolkit, NVIDIA's nvidia-cufft wheels); where
it is missing, the call raises pygpu._libs.MissingLibraryError saying how to
install it.

Plans are cached, per device, by (type, lengths, batch): the
`PLAN_CACHE_SIZE` most recently used stay, the device synchronized before an
older one is destroyed. A plan makes no workspace of its own
(cufftSetAutoAllocation off): each transform takes its workspace from
pygpu's pool, on the stream it runs on, which is this thread's current
stream (the device's default stream when the current one belongs to another
device). A lock per plan is held from cufftSetWorkArea to the queued
transform.

The transformed axes are moved last and made C-contiguous (a copy only when
they are not already, or the dtype or the lengths change); up to three axes
are one cuFFT plan, more go three at a time. The inverse real transforms
(irfft, irfftn, hfft) transform the other axes first and the last one alone,
as NumPy does, and set the imaginary parts of the zero (and Nyquist)
frequency to zero first, as pocketfft ignores them; cuFFT overwrites a
complex-to-real input, so it gets a copy. Scaling (norm=) is one
multiplication of the result in place.

Dtypes are NumPy's: float32, float16 and complex64 transform in single
precision (complex64 out), everything else in double; irfft of float16 gives
float16 as NumPy's does.
"""

import collections
import ctypes
import math
import operator
import threading

import numpy as np

from . import _core, _libs
from ._core import CudaError, DeviceArray, OutOfMemoryError

PLAN_CACHE_SIZE = 16

_NORMS = (None, "backward", "ortho", "forward")


def _pg():
    import pygpu

    return pygpu


def _array(x, name):
    if isinstance(x, DeviceArray):
        return x
    if isinstance(x, (np.ndarray, np.generic, list, tuple, int, float, complex)):
        raise TypeError(
            f"pygpu.fft.{name}: the operand is a {type(x).__module__}.{type(x).__name__} "
            "in host memory; pygpu does not copy between host and device implicitly: copy it "
            "to the device first with pygpu.asarray(x)")
    raise TypeError(f"pygpu.fft.{name} takes a DeviceArray, not {type(x).__name__}")


def _complex_dtype(dtype, name):
    if dtype.kind in "biu":
        return np.dtype("complex128")
    if dtype in (np.float16, np.float32, np.complex64):
        return np.dtype("complex64")
    if dtype in (np.float64, np.complex128):
        return np.dtype("complex128")
    raise TypeError(f"pygpu.fft.{name}: arrays of {dtype} are not supported (cuFFT "
                    "transforms float32, float64, complex64 and complex128)")


def _check_norm(norm):
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')


def _scale(norm, lengths, forward, dtype):
    """The factor NumPy applies after a transform over axes of these lengths,
    each axis's factor computed in the input's real type, as NumPy computes
    it (float16 input: a float16 factor)."""
    if norm != "ortho" and forward == (norm in (None, "backward")):
        return 1.0  # the unscaled direction
    real = np.result_type(np.empty(0, dtype).real.dtype, 1.0)
    f = 1.0
    for n in lengths:
        f *= float(np.reciprocal(np.sqrt(n, dtype=real)) if norm == "ortho" else
                   np.reciprocal(real.type(n)))
    return f


def _swap(norm):
    return {None: "forward", "backward": "forward", "ortho": "ortho",
            "forward": "backward"}[norm]


def _points(n):
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _axis(axis, ndim):
    return np._core.numeric.normalize_axis_index(axis, ndim)


def _host_path(a):
    return a.device.is_simulator


def _into(r, out):
    if out is None:
        return r
    if not isinstance(out, DeviceArray) or out.shape != r.shape:
        raise ValueError(f"out must be a DeviceArray of shape {r.shape}, not "
                         f"{getattr(out, 'shape', type(out).__name__)}")
    out[...] = r
    return out


def _on_host(fn, a, *args, out=None, **kwargs):
    r = np.asarray(fn(a.copy_to_host(), *args, **kwargs))
    with a.device:
        r = _core.asarray(r if r.flags["C_CONTIGUOUS"] else r.copy())
    return _into(r, out)


# ---- cuFFT through ctypes --------------------------------------------------------------------

_RESULT = {
    0x0: "CUFFT_SUCCESS", 0x1: "CUFFT_INVALID_PLAN", 0x2: "CUFFT_ALLOC_FAILED",
    0x3: "CUFFT_INVALID_TYPE", 0x4: "CUFFT_INVALID_VALUE", 0x5: "CUFFT_INTERNAL_ERROR",
    0x6: "CUFFT_EXEC_FAILED", 0x7: "CUFFT_SETUP_FAILED", 0x8: "CUFFT_INVALID_SIZE",
    0x9: "CUFFT_UNALIGNED_DATA", 0xB: "CUFFT_INVALID_DEVICE", 0xD: "CUFFT_NO_WORKSPACE",
    0xE: "CUFFT_NOT_IMPLEMENTED", 0x10: "CUFFT_NOT_SUPPORTED",
}
# cufft.h
_R2C, _C2R, _C2C, _D2Z, _Z2D, _Z2Z = 0x2A, 0x2C, 0x29, 0x6A, 0x6C, 0x69
_FORWARD, _INVERSE = -1, 1
_EXEC = {_C2C: "cufftExecC2C", _Z2Z: "cufftExecZ2Z", _R2C: "cufftExecR2C",
         _D2Z: "cufftExecD2Z", _C2R: "cufftExecC2R", _Z2D: "cufftExecZ2D"}

_I, _P, _LL = ctypes.c_int, ctypes.c_void_p, ctypes.c_longlong
_LLP = ctypes.POINTER(ctypes.c_longlong)
_SIGNATURES = {
    "cufftGetVersion": [ctypes.POINTER(_I)],
    "cufftCreate": [ctypes.POINTER(_I)],
    "cufftSetAutoAllocation": [_I, _I],
    "cufftMakePlanMany64": [_I, _I, _LLP, _LLP, _LL, _LL, _LLP, _LL, _LL, _I, _LL,
                            ctypes.POINTER(ctypes.c_size_t)],
    "cufftSetWorkArea": [_I, _P],
    "cufftSetStream": [_I, _P],
    "cufftDestroy": [_I],
    "cufftExecC2C": [_I, _P, _P, _I], "cufftExecZ2Z": [_I, _P, _P, _I],
    "cufftExecR2C": [_I, _P, _P], "cufftExecD2Z": [_I, _P, _P],
    "cufftExecC2R": [_I, _P, _P], "cufftExecZ2D": [_I, _P, _P],
}

_lock = threading.Lock()
_lib = None
_plans = collections.OrderedDict()  # (device, type, lengths, batch) -> _Plan


class _Plan:
    __slots__ = ("device", "handle", "lock", "work")

    def __init__(self, device, handle, work):
        self.device, self.handle, self.work = device, handle, work
        self.lock = threading.Lock()


def _cufft():
    global _lib
    if _lib is None:
        lib = _libs.load("cufft")
        with _lock:
            if _lib is None:
                for name, argtypes in _SIGNATURES.items():
                    fn = getattr(lib, name)
                    fn.argtypes = argtypes
                    fn.restype = ctypes.c_int
                _lib = lib
    return _lib


def _call(lib, name, *args):
    status = getattr(lib, name)(*args)
    if status != 0:
        label = _RESULT.get(status, f"CUFFT_STATUS_{status}")
        cls = OutOfMemoryError if status == 0x2 else CudaError
        exc = cls(f"{name} failed: {label}")
        exc.code, exc.name = status, label
        raise exc


def cufft_version():
    """cuFFT's version number (cufftGetVersion: 12000 for 12.0.0), loading
    the library if this process has not yet; MissingLibraryError where it is
    not found."""
    lib = _cufft()
    v = _I()
    _call(lib, "cufftGetVersion", ctypes.byref(v))
    return v.value


def _plan(lib, device, kind, lengths, batch):
    """The cached plan (made with `device` current) of `batch` transforms of
    `lengths` (the real lengths for R2C and C2R), contiguous in and out."""
    key = (device, kind, lengths, batch)
    with _lock:
        plan = _plans.get(key)
        if plan is not None:
            _plans.move_to_end(key)
            return plan
    made = _I()
    _call(lib, "cufftCreate", ctypes.byref(made))
    h = made.value
    try:
        _call(lib, "cufftSetAutoAllocation", h, 0)
        n = (_LL * len(lengths))(*lengths)
        work = ctypes.c_size_t()
        _call(lib, "cufftMakePlanMany64", h, len(lengths), n, None, 1, 0, None, 1, 0, kind,
              batch, ctypes.byref(work))
    except BaseException:
        lib.cufftDestroy(h)
        raise
    plan = _Plan(device, h, work.value)
    evicted = []
    with _lock:
        _plans[key] = plan
        while len(_plans) > PLAN_CACHE_SIZE:
            evicted.append(_plans.popitem(last=False)[1])
    for old in evicted:
        with old.lock:
            _destroy(lib, old)
    return plan


def _destroy(lib, plan):
    """cufftDestroy a plan out of the cache, its lock held."""
    with _core.Device(plan.device):
        _core.synchronize()  # its last transform may still be queued
        lib.cufftDestroy(plan.handle)
    plan.handle = None  # a thread that took it from the cache makes another


def _release():
    """Destroy the cached plans (pygpu._release_all): the next transform of
    each kind makes its plan again. A plan in use on another thread stays."""
    with _lock:
        idle = [(key, plan) for key, plan in _plans.items() if plan.lock.acquire(False)]
        for key, _ in idle:
            del _plans[key]
    for _, plan in idle:
        try:
            _destroy(_lib, plan)
        finally:
            plan.lock.release()


def _stream(device):
    s = _core.current_stream()
    return s.ptr if s.device == device else 0


def _execute(x, k, kind, out_shape, out_dtype, direction=None):
    """One cuFFT transform over the last k axes of x (C-contiguous, aligned),
    into a new C-contiguous array of out_shape."""
    pg = _pg()
    lib = _cufft()
    dev = x.device.id
    with _core.Device(dev):
        out = pg.empty(out_shape, dtype=out_dtype)
        if out.size == 0 or x.size == 0:
            return out
        lengths = tuple(out_shape[-k:]) if kind in (_C2R, _Z2D) else tuple(x.shape[-k:])
        batch = math.prod(x.shape[:-k])
        plan = _plan(lib, dev, kind, lengths, batch)
        plan.lock.acquire()
        while plan.handle is None:  # destroyed since: evicted by another thread
            plan.lock.release()
            plan = _plan(lib, dev, kind, lengths, batch)
            plan.lock.acquire()
        try:
            work = pg.empty(plan.work, dtype="uint8") if plan.work else None
            _call(lib, "cufftSetWorkArea", plan.handle, work.ptr if work is not None else None)
            _call(lib, "cufftSetStream", plan.handle, _stream(dev))
            args = (plan.handle, x.ptr, out.ptr) + (() if direction is None else (direction,))
            _call(lib, _EXEC[kind], *args)
        finally:
            plan.lock.release()
    return out


def _ready(x, dtype, copy=False):
    """x as cuFFT input: C-contiguous, of dtype, 16-byte aligned; a copy when
    it is not already (or when `copy`: cuFFT will overwrite it)."""
    if not copy and x.dtype == dtype and x.flags["C_CONTIGUOUS"] and x.ptr % 16 == 0:
        return x
    r = x.astype(dtype, copy=True)
    return r if r.flags["C_CONTIGUOUS"] else r.copy()


def _resize(x, axis, n):
    """x cropped or zero-padded to n along axis."""
    m = x.shape[axis]
    if m == n:
        return x
    index = [slice(None)] * x.ndim
    if m > n:
        index[axis] = slice(0, n)
        return x[tuple(index)]
    shape = list(x.shape)
    shape[axis] = n
    z = _pg().zeros(tuple(shape), dtype=x.dtype)
    index[axis] = slice(0, m)
    z[tuple(index)] = x
    return z


def _to_end(x, axes):
    """(x with `axes` moved last in their order, the permutation to undo it)."""
    rest = [i for i in range(x.ndim) if i not in axes]
    perm = rest + list(axes)
    if perm == list(range(x.ndim)):
        return x, None
    return _pg().permute_dims(x, tuple(perm)), tuple(np.argsort(perm))


def _back(x, undo):
    return x if undo is None else _pg().permute_dims(x, undo)


def _c2c_last(x, k, forward):
    """The complex transform over the last k axes of x (complex, C-contiguous)."""
    kind = _C2C if x.dtype == np.complex64 else _Z2Z
    done = 0
    while done < k:  # three axes per plan, the last first (NumPy's order)
        step = min(3, k - done)
        if done:
            x = _ready(_pg().moveaxis(x, tuple(range(-done - step, -done)),
                                      tuple(range(-step, 0))), x.dtype)
        x = _execute(x, step, kind, x.shape, x.dtype, _FORWARD if forward else _INVERSE)
        if done:
            x = _pg().moveaxis(x, tuple(range(-step, 0)), tuple(range(-done - step, -done)))
        done += step
    return x


def _c2c(a, s, axes, norm, forward, name, out=None):
    """fftn / ifftn with NumPy's arguments already cooked: lengths s of axes."""
    dtype = _complex_dtype(a.dtype, name)
    if len(set(axes)) != len(axes):  # an axis twice: one at a time, as NumPy
        for n, ax in reversed(list(zip(s, axes, strict=True))):
            a = _c2c(a, [n], [ax], norm, forward, name)
        return _into(a, out)
    with a.device:
        x = a
        for n, ax in zip(s, axes, strict=True):
            x = _resize(x, ax, n)
        x, undo = _to_end(x, axes)
        x = _ready(x, dtype)
        r = _c2c_last(x, len(axes), forward)
        f = _scale(norm, s, forward, a.dtype)
        if f != 1.0:
            r *= f
        return _into(_back(r, undo), out)


def _cook(a, s, axes, invreal=False):
    """NumPy's _cook_nd_args: (lengths, axes), axes normalized."""
    if s is None:
        shapeless = True
        axes = list(range(a.ndim)) if axes is None else list(axes)
        axes = [_axis(ax, a.ndim) for ax in axes]
        s = [a.shape[ax] for ax in axes]
    else:
        shapeless = False
        s = list(s)
        if axes is None:
            axes = list(range(-len(s), 0))
        axes = [_axis(ax, a.ndim) for ax in axes]
        if len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
        s = [a.shape[ax] if n is None else n for n, ax in zip(s, axes, strict=True)]
    if invreal and shapeless and axes:
        s[-1] = (a.shape[axes[-1]] - 1) * 2
    return [_points(n) for n in s], axes


# ---- the complex transforms ------------------------------------------------------------------

def fft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.fft: the one-dimensional discrete Fourier transform along axis."""
    a = _array(a, "fft")
    _check_norm(norm)
    if _host_path(a):
        return _on_host(np.fft.fft, a, n, axis, norm, out=out)
    axis = _axis(axis, a.ndim)
    return _c2c(a, [_points(a.shape[axis] if n is None else n)], [axis], norm, True, "fft",
                out)


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.ifft: the one-dimensional inverse transform along axis."""
    a = _array(a, "ifft")
    _check_norm(norm)
    if _host_path(a):
        return _on_host(np.fft.ifft, a, n, axis, norm, out=out)
    axis = _axis(axis, a.ndim)
    return _c2c(a, [_points(a.shape[axis] if n is None else n)], [axis], norm, False, "ifft",
                out)


def fftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.fftn: the transform over axes (all by default)."""
    a = _array(a, "fftn")
    _check_norm(norm)
    if _host_path(a):
        return _on_host(np.fft.fftn, a, s, axes, norm, out=out)
    s, axes = _cook(a, s, axes)
    if not axes:  # NumPy gives the input back
        return _into(a.copy(), out)
    return _c2c(a, s, axes, norm, True, "fftn", out)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.ifftn: the inverse transform over axes (all by default)."""
    a = _array(a, "ifftn")
    _check_norm(norm)
    if _host_path(a):
        return _on_host(np.fft.ifftn, a, s, axes, norm, out=out)
    s, axes = _cook(a, s, axes)
    if not axes:  # NumPy gives the input back
        return _into(a.copy(), out)
    return _c2c(a, s, axes, norm, False, "ifftn", out)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.fft2: fftn over the last two axes."""
    return fftn(a, s, axes, norm, out)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.ifft2: ifftn over the last two axes."""
    return ifftn(a, s, axes, norm, out)


# ---- the real transforms ---------------------------------------------------------------------

def _real_input(a, name):
    if a.dtype.kind == "c":
        raise TypeError(f"pygpu.fft.{name} takes real input, not {a.dtype} (use fft or fftn "
                        "for complex input)")
    c = _complex_dtype(a.dtype, name)
    return np.dtype("float32") if c == np.complex64 else np.dtype("float64")


def _rfftn(a, s, axes, norm, name, out=None):
    real = _real_input(a, name)
    cplx = np.dtype("complex64") if real == np.float32 else np.dtype("complex128")
    with a.device:
        if len(set(axes)) != len(axes) or len(axes) > 3:
            # as NumPy: the last axis real to complex, then the others as fftn
            r = _rfftn(a, [s[-1]], [axes[-1]], "backward", name)  # unscaled
            r = _c2c(r, s[:-1], axes[:-1], "backward", True, name)
        else:
            x = a
            for n, ax in zip(s, axes, strict=True):
                x = _resize(x, ax, n)
            x, undo = _to_end(x, axes)
            x = _ready(x, real)
            shape = x.shape[:-1] + (x.shape[-1] // 2 + 1,)
            r = _back(_execute(x, len(axes), _R2C if real == np.float32 else _D2Z, shape,
                               cplx), undo)
        f = _scale(norm, s, True, a.dtype)
        if f != 1.0:
            r *= f
        return _into(r, out)


def _irfftn(a, s, axes, norm, name, out=None):
    """NumPy's irfftn: the inverse complex transform over all axes but the
    last, then the complex-to-real one over the last, n = s[-1] points."""
    cplx = _complex_dtype(a.dtype, name)
    real = np.dtype("float32") if cplx == np.complex64 else np.dtype("float64")
    with a.device:
        x = a
        if len(axes) > 1:
            x = _c2c(x, s[:-1], axes[:-1], "forward", False, name)  # unscaled: see below
        last, n = axes[-1], s[-1]
        x = _resize(x, last, n // 2 + 1)
        x, undo = _to_end(x, [last])
        x = _ready(x, cplx, copy=True)  # cuFFT overwrites a complex-to-real input
        pg = _pg()
        x[..., 0:1] = pg.real(x[..., 0:1])  # pocketfft ignores these imaginary parts
        if n % 2 == 0:
            x[..., n // 2:n // 2 + 1] = pg.real(x[..., n // 2:n // 2 + 1])
        r = _execute(x, 1, _C2R if cplx == np.complex64 else _Z2D, x.shape[:-1] + (n,), real)
        r = _back(r, undo)
        f = _scale(norm, s, False, a.dtype)
        if f != 1.0:
            r *= f
        if a.dtype == np.float16 and len(axes) == 1:  # NumPy's irfft of float16 input
            r = r.astype("float16")
        return _into(r, out)


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.rfft: the transform of real input along axis, n // 2 + 1
    frequencies."""
    a = _array(a, "rfft")
    _check_norm(norm)
    _real_input(a, "rfft")
    if _host_path(a):
        return _on_host(np.fft.rfft, a, n, axis, norm, out=out)
    axis = _axis(axis, a.ndim)
    return _rfftn(a, [_points(a.shape[axis] if n is None else n)], [axis], norm, "rfft", out)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.irfft: the inverse of rfft, n = 2 * (m - 1) real points by default."""
    a = _array(a, "irfft")
    _check_norm(norm)
    if _host_path(a):
        return _on_host(np.fft.irfft, a, n, axis, norm, out=out)
    axis = _axis(axis, a.ndim)
    n = _points((a.shape[axis] - 1) * 2 if n is None else n)
    return _irfftn(a, [n], [axis], norm, "irfft", out)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.rfftn: the real transform over axes, the last one halved."""
    a = _array(a, "rfftn")
    _check_norm(norm)
    _real_input(a, "rfftn")
    if _host_path(a):
        return _on_host(np.fft.rfftn, a, s, axes, norm, out=out)
    s, axes = _cook(a, s, axes)
    if not axes:
        raise ValueError("rfftn: at least one axis is needed")
    return _rfftn(a, s, axes, norm, "rfftn", out)


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.irfftn: the inverse of rfftn."""
    a = _array(a, "irfftn")
    _check_norm(norm)
    if _host_path(a):
        return _on_host(np.fft.irfftn, a, s, axes, norm, out=out)
    s, axes = _cook(a, s, axes, invreal=True)
    if not axes:
        raise ValueError("irfftn: at least one axis is needed")
    return _irfftn(a, s, axes, norm, "irfftn", out)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.rfft2: rfftn over the last two axes."""
    return rfftn(a, s, axes, norm, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.irfft2: irfftn over the last two axes."""
    return irfftn(a, s, axes, norm, out)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.hfft: the transform of a signal with Hermitian symmetry
    (given by its first half), real out: irfft(conj(a)) with norm swapped."""
    a = _array(a, "hfft")
    _check_norm(norm)
    if _host_path(a):
        return _on_host(np.fft.hfft, a, n, axis, norm, out=out)
    axis = _axis(axis, a.ndim)
    n = _points((a.shape[axis] - 1) * 2 if n is None else n)
    with a.device:
        return _irfftn(_pg().conj(a), [n], [axis], _swap(norm), "hfft", out)


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.ihfft: the inverse of hfft: conj(rfft(a)) with norm swapped."""
    a = _array(a, "ihfft")
    _check_norm(norm)
    _real_input(a, "ihfft")
    if _host_path(a):
        return _on_host(np.fft.ihfft, a, n, axis, norm, out=out)
    axis = _axis(axis, a.ndim)
    n = _points(a.shape[axis] if n is None else n)
    with a.device:
        return _into(_pg().conj(_rfftn(a, [n], [axis], _swap(norm), "ihfft")), out)


# ---- frequencies and shifts (pygpu's own operations) -----------------------------------------

def _frequencies(host, device, dtype):
    if dtype is not None:
        host = host.astype(dtype)
    if device is None:
        return _core.asarray(host)
    with _core.Device(device if isinstance(device, int) else device.id):
        return _core.asarray(host)


def fftfreq(n, d=1.0, *, device=None, dtype=None):
    """numpy.fft.fftfreq: the sample frequencies of an n-point transform,
    [0, 1, ..., -1] / (d * n), float64 unless dtype says otherwise."""
    return _frequencies(np.fft.fftfreq(operator.index(n), d), device, dtype)


def rfftfreq(n, d=1.0, *, device=None, dtype=None):
    """numpy.fft.rfftfreq: the n // 2 + 1 nonnegative frequencies of rfft."""
    return _frequencies(np.fft.rfftfreq(operator.index(n), d), device, dtype)


def _shift(x, axes, sign, name):
    x = _array(x, name)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = [sign * (n // 2) for n in x.shape]
    elif isinstance(axes, (int, np.integer)):
        shift = sign * (x.shape[axes] // 2)
    else:
        axes = tuple(axes)
        shift = [sign * (x.shape[ax] // 2) for ax in axes]
    if x.ndim == 0 or (isinstance(shift, list) and not shift):
        return x.copy()
    with x.device:
        return _pg().roll(x, shift, axes)


def fftshift(x, axes=None):
    """numpy.fft.fftshift: the zero frequency moved to the middle."""
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x, axes=None):
    """numpy.fft.ifftshift: the inverse of fftshift."""
    return _shift(x, axes, -1, "ifftshift")


NUMPY = {
    np.fft.fft: fft, np.fft.ifft: ifft, np.fft.fftn: fftn, np.fft.ifftn: ifftn,
    np.fft.fft2: fft2, np.fft.ifft2: ifft2, np.fft.rfft: rfft, np.fft.irfft: irfft,
    np.fft.rfftn: rfftn, np.fft.irfftn: irfftn, np.fft.rfft2: rfft2, np.fft.irfft2: irfft2,
    np.fft.hfft: hfft, np.fft.ihfft: ihfft, np.fft.fftshift: fftshift,
    np.fft.ifftshift: ifftshift,
}

__all__ = ["PLAN_CACHE_SIZE", "cufft_version", "fft", "fft2", "fftfreq", "fftn", "fftshift",
           "hfft", "ifft", "ifft2", "ifftn", "ifftshift", "ihfft", "irfft", "irfft2", "irfftn",
           "rfft", "rfft2", "rfftfreq", "rfftn"]
