"""Linear algebra on device arrays, as numpy.linalg and the array API's
linalg extension: cuSOLVER (LU, Cholesky, QR, SVD, symmetric and general
eigenvalues) and pygpu's own operations and `@` (cuBLAS) for the rest.

cuSOLVER is loaded with ctypes at the first call that needs it, never at
`import pygpu` or `import pygpu.linalg`, through pygpu/_libs.py's one search
(``PYGPU_CUSOLVER``, the loader's search, the CUDA toolkit, NVIDIA's
nvidia-cusolver wheels in site-packages). Where it is missing, the call
raises pygpu._libs.MissingLibraryError saying how to install it. One handle
per device, made with the device current and never destroyed (at exit the
context may be gone); a lock per device is held from cusolverDnSetStream to
the last call queued, since the stream is a setting of the handle. The work
runs on this thread's current stream (the device's default stream when the
current one belongs to another device), on a copy of the input (cuSOLVER
works in place), with its workspace from pygpu's pool; only the status words
(devInfo) come back to the host, to raise LinAlgError as NumPy does.

cuSOLVER is column-major: the row-major buffer of a matrix A is A^T to it.
inv factors A^T and solves with the identity, which leaves inv(A)^T in
column-major order, that is inv(A) row-major; solve factors A^T and solves
with op T; cholesky factors A^T with the other triangle; qr, svd of a tall
matrix and eigh take a column-major copy (the transpose's C-order copy);
svd of a wide matrix factors A^T and reads U and V^H swapped. eig and
eigvals take the column-major copy too (the 64-bit API's cusolverDnXgeev,
cuSOLVER 11.7 / CUDA 12.6 on; an older one raises MissingLibraryError for
them alone): for a real matrix every type given is real, so W holds the
real parts then the imaginary ones and VR packs a conjugate pair's vectors
in two real columns, as LAPACK's dgeev; the pairs are unpacked on the
device where the stack has a complex eigenvalue.

On the simulator (and for empty matrices) NumPy computes on a host copy,
with the same dtypes, shapes and errors, as pygpu's own kernels stand in
for cuBLAS there.

Result dtypes are NumPy's: float32 and complex64 stay single precision,
integers and bools give float64, float16 raises TypeError ("array type
float16 is unsupported in linalg").
"""

import contextlib
import ctypes
import math
import operator
import string
import threading
from typing import NamedTuple

import numpy as np

from . import _core, _libs
from ._core import CudaError, DeviceArray, OutOfMemoryError

LinAlgError = np.linalg.LinAlgError
_NoValue = np._NoValue


class SVDResult(NamedTuple):
    U: DeviceArray
    S: DeviceArray
    Vh: DeviceArray


class EighResult(NamedTuple):
    eigenvalues: DeviceArray
    eigenvectors: DeviceArray


class EigResult(NamedTuple):
    eigenvalues: DeviceArray
    eigenvectors: DeviceArray


class QRResult(NamedTuple):
    Q: DeviceArray
    R: DeviceArray


class SlogdetResult(NamedTuple):
    sign: DeviceArray
    logabsdet: DeviceArray


_RESULTS = {c.__name__: c for c in (SVDResult, EigResult, EighResult, QRResult,
                                    SlogdetResult)}


def _pg():
    import pygpu

    return pygpu


# ---- arguments ---------------------------------------------------------------------------

def _array(x, name):
    if isinstance(x, DeviceArray):
        return x
    if isinstance(x, (np.ndarray, np.generic, list, tuple, int, float, complex)):
        raise TypeError(
            f"pygpu.linalg.{name}: the operand is a {type(x).__module__}.{type(x).__name__} "
            "in host memory; pygpu does not copy between host and device implicitly: copy it "
            "to the device first with pygpu.asarray(x)")
    raise TypeError(f"pygpu.linalg.{name} takes a DeviceArray, not {type(x).__name__}")


_SOLVER_TYPES = {np.dtype(t) for t in ("float32", "float64", "complex64", "complex128")}


def _linalg_dtype(*arrays):
    """NumPy's linalg result type: ints and bools give float64, float16 and
    longdouble raise TypeError."""
    types = []
    for a in arrays:
        t = a.dtype
        if t.kind in "biu":
            t = np.dtype(np.float64)
        elif t not in _SOLVER_TYPES:
            raise TypeError(f"array type {t} is unsupported in linalg")
        types.append(t)
    return np.result_type(*types)


def _real(dtype):
    return np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype


def _stacked_2d(*arrays):
    for a in arrays:
        if a.ndim < 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least "
                              "two-dimensional")


def _stacked_square(*arrays):
    for a in arrays:
        m, n = a.shape[-2:]
        if m != n:
            raise LinAlgError("Last 2 dimensions of the array must be square")


def _host_path(*arrays):
    """NumPy computes on a host copy: on the simulator, and where a matrix is
    empty (nothing for a library to do)."""
    return any(a.device.is_simulator or a.size == 0 for a in arrays)


def _to_device(r, device):
    if isinstance(r, tuple):
        values = [_to_device(v, device) for v in r]
        if hasattr(r, "_fields"):  # NumPy's result types become pygpu.linalg's
            return _RESULTS.get(type(r).__name__, type(r))(*values)
        return type(r)(values)
    if isinstance(r, (np.ndarray, np.generic)):
        r = np.asarray(r)
        with device:
            return _core.asarray(r if r.flags["C_CONTIGUOUS"] else r.copy())
    return r


def _on_host(fn, arrays, *args, **kwargs):
    """fn(*host copies of arrays, *args, **kwargs), its arrays on arrays[0]'s device."""
    hosts = [a.copy_to_host() for a in arrays]
    return _to_device(fn(*hosts, *args, **kwargs), arrays[0].device)


def _c_copy(a, dtype):
    """A new C-contiguous array: a, of dtype (what cuSOLVER may overwrite)."""
    r = a.astype(dtype, copy=True)
    return r if r.flags["C_CONTIGUOUS"] else r.copy()


def _cm_copy(a, dtype):
    """A new C-contiguous array holding each matrix of a in column-major
    order (shape (..., n, m) for a of shape (..., m, n)); matrix_transpose of
    it is a again."""
    return _c_copy(_pg().matrix_transpose(a), dtype)


def _mT(a):
    return _pg().matrix_transpose(a)


def _batch(a):
    return math.prod(a.shape[:-2])


# ---- cuSOLVER through ctypes ---------------------------------------------------------------

_STATUS = {
    0: "CUSOLVER_STATUS_SUCCESS", 1: "CUSOLVER_STATUS_NOT_INITIALIZED",
    2: "CUSOLVER_STATUS_ALLOC_FAILED", 3: "CUSOLVER_STATUS_INVALID_VALUE",
    4: "CUSOLVER_STATUS_ARCH_MISMATCH", 5: "CUSOLVER_STATUS_MAPPING_ERROR",
    6: "CUSOLVER_STATUS_EXECUTION_FAILED", 7: "CUSOLVER_STATUS_INTERNAL_ERROR",
    8: "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED", 9: "CUSOLVER_STATUS_NOT_SUPPORTED",
    10: "CUSOLVER_STATUS_ZERO_PIVOT", 11: "CUSOLVER_STATUS_INVALID_LICENSE",
    31: "CUSOLVER_STATUS_INVALID_WORKSPACE",
}
# cublas_api.h and cusolver_common.h
_OP_N, _OP_T = 0, 1  # CUBLAS_OP_N, CUBLAS_OP_T
_LOWER, _UPPER = 0, 1  # CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER
_NOVECTOR, _VECTOR = 0, 1  # CUSOLVER_EIG_MODE_NOVECTOR, CUSOLVER_EIG_MODE_VECTOR
_PREFIX = {np.dtype("float32"): "S", np.dtype("float64"): "D",
           np.dtype("complex64"): "C", np.dtype("complex128"): "Z"}
# library_types.h's cudaDataType, for the 64-bit (X) API
_CUDA_TYPE = {np.dtype("float32"): 0, np.dtype("float64"): 1, np.dtype("complex64"): 4,
              np.dtype("complex128"): 5}  # CUDA_R_32F, CUDA_R_64F, CUDA_C_32F, CUDA_C_64F

_I, _P, _H = ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p
_IP = ctypes.POINTER(ctypes.c_int)
_CH = ctypes.c_char
_L, _Z = ctypes.c_int64, ctypes.c_size_t
_ZP = ctypes.POINTER(ctypes.c_size_t)
# functions that older cuSOLVERs lack: declared where present, and the calls
# that need one say so (cusolverDnXgeev came with cuSOLVER 11.7, CUDA 12.6)
_OPTIONAL = {"cusolverDnXgeev_bufferSize": "11.7 (CUDA 12.6)",
             "cusolverDnXgeev": "11.7 (CUDA 12.6)"}


def _signatures():
    """{function name: argtypes} of every cuSOLVER function used, from
    cusolverDn.h; device pointers are c_void_p, handles c_void_p."""
    sig = {
        "cusolverGetProperty": [_I, _IP],
        "cusolverDnCreate": [ctypes.POINTER(_H)],
        "cusolverDnDestroy": [_H],
        "cusolverDnSetStream": [_H, _P],
        "cusolverDnCreateParams": [ctypes.POINTER(_P)],
        "cusolverDnDestroyParams": [_P],
        # handle, params, jobvl, jobvr, n, A (type, pointer, lda), W (type, pointer),
        # VL (type, pointer, ld), VR (type, pointer, ld), compute type, ...
        "cusolverDnXgeev_bufferSize": [_H, _P, _I, _I, _L, _I, _P, _L, _I, _P, _I, _P, _L, _I,
                                       _P, _L, _I, _ZP, _ZP],
        "cusolverDnXgeev": [_H, _P, _I, _I, _L, _I, _P, _L, _I, _P, _I, _P, _L, _I, _P, _L, _I,
                            _P, _Z, _P, _Z, _P],
    }
    for t in "SDCZ":
        real = t in "SD"
        sig.update({
            f"cusolverDn{t}getrf_bufferSize": [_H, _I, _I, _P, _I, _IP],
            f"cusolverDn{t}getrf": [_H, _I, _I, _P, _I, _P, _P, _P],
            f"cusolverDn{t}getrs": [_H, _I, _I, _I, _P, _I, _P, _P, _I, _P],
            f"cusolverDn{t}potrf_bufferSize": [_H, _I, _I, _P, _I, _IP],
            f"cusolverDn{t}potrf": [_H, _I, _I, _P, _I, _P, _I, _P],
            f"cusolverDn{t}geqrf_bufferSize": [_H, _I, _I, _P, _I, _IP],
            f"cusolverDn{t}geqrf": [_H, _I, _I, _P, _I, _P, _P, _I, _P],
            f"cusolverDn{t}{'or' if real else 'un'}gqr_bufferSize":
                [_H, _I, _I, _I, _P, _I, _P, _IP],
            f"cusolverDn{t}{'or' if real else 'un'}gqr": [_H, _I, _I, _I, _P, _I, _P, _P, _I,
                                                          _P],
            f"cusolverDn{t}gesvd_bufferSize": [_H, _I, _I, _IP],
            f"cusolverDn{t}gesvd": [_H, _CH, _CH, _I, _I, _P, _I, _P, _P, _I, _P, _I, _P, _I,
                                    _P, _P],
            f"cusolverDn{t}{'sy' if real else 'he'}evd_bufferSize":
                [_H, _I, _I, _I, _P, _I, _P, _IP],
            f"cusolverDn{t}{'sy' if real else 'he'}evd": [_H, _I, _I, _I, _P, _I, _P, _P, _I,
                                                          _P],
        })
    return sig


_lock = threading.Lock()
_lib = None
_handles = {}  # device id -> (handle, lock)


def _solver():
    """libcusolver, its functions declared; loaded at the first call."""
    global _lib
    if _lib is None:
        lib = _libs.load("cusolver")
        with _lock:
            if _lib is None:
                for name, argtypes in _signatures().items():
                    if name in _OPTIONAL and not hasattr(lib, name):
                        continue
                    fn = getattr(lib, name)
                    fn.argtypes = argtypes
                    fn.restype = ctypes.c_int
                _lib = lib
    return _lib


def _require(lib, name, what):
    """Raise MissingLibraryError where the loaded cuSOLVER lacks name."""
    if name in _OPTIONAL and not hasattr(lib, name):
        where = _libs.loaded().get("cusolver", "the cuSOLVER loaded")
        raise _libs.MissingLibraryError(
            f"pygpu.linalg.{what} needs {name}, which cuSOLVER has from version "
            f"{_OPTIONAL[name]}; {where} lacks it: install a newer cuSOLVER "
            f"({_libs.INSTALL['cusolver'][1]})")


def _raise_status(call, status):
    name = _STATUS.get(status, f"CUSOLVER_STATUS_{status}")
    cls = OutOfMemoryError if status == 2 else CudaError
    exc = cls(f"{call} failed: {name}")
    exc.code, exc.name = status, name
    raise exc


def _call(lib, name, *args):
    status = getattr(lib, name)(*args)
    if status != 0:
        _raise_status(name, status)


def cusolver_version():
    """(major, minor, patch) of the cuSOLVER that pygpu.linalg uses, loading
    it if this process has not yet; MissingLibraryError where it is not found."""
    lib = _solver()
    out = []
    for what in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
        v = ctypes.c_int()
        _call(lib, "cusolverGetProperty", what, ctypes.byref(v))
        out.append(v.value)
    return tuple(out)


def _stream(device):
    s = _core.current_stream()
    return s.ptr if s.device == device else 0


def _release():
    """Destroy the cuSOLVER handles (pygpu._release_all): the next call on a
    device makes its handle again. A handle in use on another thread stays."""
    with _lock:
        idle = [(dev, entry) for dev, entry in _handles.items() if entry[1].acquire(False)]
        for dev, _ in idle:
            del _handles[dev]
    for dev, (handle, lock) in idle:
        try:
            with _core.Device(dev):
                _core.synchronize()  # what was queued with it may still run
                _call(_lib, "cusolverDnDestroy", handle)
        finally:
            lock.release()


@contextlib.contextmanager
def _session(a):
    """(lib, handle) with a's device current and the handle on this thread's
    stream for that device, its lock held."""
    lib = _solver()
    dev = a.device.id
    with _core.Device(dev):
        with _lock:
            entry = _handles.get(dev)
            if entry is None:
                h = _H()
                _call(lib, "cusolverDnCreate", ctypes.byref(h))
                entry = _handles[dev] = (h, threading.Lock())
        handle, lock = entry
        with lock:
            _call(lib, "cusolverDnSetStream", handle, _stream(dev))
            yield lib, handle


def _lwork(lib, name, *args):
    n = ctypes.c_int()
    _call(lib, name, *args, ctypes.byref(n))
    return max(n.value, 1)


def _infos(info):
    """The devInfo words, on the host (the one wait of a factorization)."""
    return info.copy_to_host()


def _ptr(a, i, per):
    return a.ptr + i * per * a.itemsize


# ---- the factorizations -----------------------------------------------------------------

def _lu(a, dtype):
    """getrf of each matrix's row-major buffer (A^T column-major): (lu, ipiv,
    info), lu C-contiguous of a's shape, ipiv int32 (..., n), info int32 (batch,)."""
    pg = _pg()
    n = a.shape[-1]
    batch = _batch(a)
    t = _PREFIX[dtype]
    with _session(a) as (lib, h):
        lu = _c_copy(a, dtype)
        ipiv = pg.empty(a.shape[:-1], dtype="int32")
        info = pg.zeros(batch, dtype="int32")
        lw = _lwork(lib, f"cusolverDn{t}getrf_bufferSize", h, n, n, lu.ptr, n)
        work = pg.empty(lw, dtype=dtype)
        for i in range(batch):
            _call(lib, f"cusolverDn{t}getrf", h, n, n, _ptr(lu, i, n * n), n, work.ptr,
                  _ptr(ipiv, i, n), _ptr(info, i, 1))
    return lu, ipiv, info


def _lu_solve(a, b_cm, dtype, trans):
    """Factor each A (row-major, so A^T to cuSOLVER) and solve in place into
    b_cm (C-contiguous (..., nrhs, n): column-major n x nrhs); LinAlgError if
    any A is singular."""
    pg = _pg()
    n = a.shape[-1]
    nrhs = b_cm.shape[-2]
    batch = _batch(a)
    t = _PREFIX[dtype]
    with _session(a) as (lib, h):
        lu = _c_copy(a, dtype)
        ipiv = pg.empty(a.shape[:-1], dtype="int32")
        info = pg.zeros(2 * batch, dtype="int32")
        lw = _lwork(lib, f"cusolverDn{t}getrf_bufferSize", h, n, n, lu.ptr, n)
        work = pg.empty(lw, dtype=dtype)
        for i in range(batch):
            _call(lib, f"cusolverDn{t}getrf", h, n, n, _ptr(lu, i, n * n), n, work.ptr,
                  _ptr(ipiv, i, n), _ptr(info, 2 * i, 1))
            _call(lib, f"cusolverDn{t}getrs", h, trans, n, nrhs, _ptr(lu, i, n * n), n,
                  _ptr(ipiv, i, n), _ptr(b_cm, i, n * nrhs), n, _ptr(info, 2 * i + 1, 1))
        codes = _infos(info)
    if (codes[0::2] > 0).any():
        raise LinAlgError("Singular matrix")
    if (codes != 0).any():
        raise CudaError(f"cusolverDn{t}getrs: invalid argument {-int(codes.min())}")
    return b_cm


def inv(a):
    """numpy.linalg.inv: the inverse of each matrix; LinAlgError("Singular
    matrix") where one has none."""
    a = _array(a, "inv")
    _stacked_2d(a)
    _stacked_square(a)
    dtype = _linalg_dtype(a)
    if _host_path(a):
        return _on_host(np.linalg.inv, [a])
    n = a.shape[-1]
    pg = _pg()
    with a.device:
        b = pg.eye(n, dtype=dtype)  # a new C-contiguous array, overwritten by getrs
        if a.ndim > 2:
            b = _c_copy(pg.broadcast_to(b, a.shape), dtype)
    # getrs(N) with A^T factored gives (A^T)^-1 column-major: inv(A) row-major
    return _lu_solve(a, b, dtype, _OP_N)


def solve(a, b):
    """numpy.linalg.solve: x with a @ x == b for each matrix of a; b is a
    vector only when it is one-dimensional, else a stack of matrices."""
    a = _array(a, "solve")
    b = _array(b, "solve")
    _stacked_2d(a)
    _stacked_square(a)
    dtype = _linalg_dtype(a, b)
    n = a.shape[-1]
    vector = b.ndim == 1
    if b.ndim == 0:
        raise ValueError("solve: b must be at least one-dimensional, not a 0-d array")
    rows = b.shape[0] if vector else b.shape[-2]
    if rows != n:
        raise ValueError(f"solve: a's matrices are {n} x {n} but b has {rows} rows "
                         f"(b has shape {b.shape})")
    if _host_path(a, b):
        return _on_host(lambda x, y: np.linalg.solve(x, y), [a, b])
    pg = _pg()
    bm = b.reshape((n, 1)) if vector else b
    try:
        batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    except ValueError:
        raise ValueError(f"solve: the stacks of a {a.shape} and b {b.shape} do not "
                         "broadcast") from None
    k = bm.shape[-1]
    with a.device:
        a = pg.broadcast_to(a, batch + (n, n))
        bcm = _cm_copy(pg.broadcast_to(bm, batch + (n, k)), dtype)
    if a.size == 0 or bcm.size == 0:
        return _on_host(lambda x, y: np.linalg.solve(x, y), [a, b])
    # A^T factored; op T solves A X = B, B column-major
    x = _mT(_lu_solve(a, bcm, dtype, _OP_T))
    return x[..., 0] if vector else x


def slogdet(a):
    """numpy.linalg.slogdet: (sign, log|det|) of each matrix; (0, -inf) for a
    singular one."""
    a = _array(a, "slogdet")
    _stacked_2d(a)
    _stacked_square(a)
    dtype = _linalg_dtype(a)
    if _host_path(a):
        return _on_host(np.linalg.slogdet, [a])
    return SlogdetResult(*_slogdet(a, dtype))


def _slogdet(a, dtype):
    pg = _pg()
    n = a.shape[-1]
    lu, ipiv, _ = _lu(a, dtype)  # singular matrices are no error here
    with a.device:
        d = pg.diagonal(lu, 0, -2, -1)
        absd = abs(d)
        logabs = pg.sum(pg.log(absd), axis=-1)
        if dtype.kind == "c":
            unit = pg.where(absd == 0, 0, d / absd.astype(dtype)).astype(dtype)
        else:
            unit = pg.sign(d)
        swaps = pg.sum(ipiv != pg.arange(1, n + 1, dtype="int32"), axis=-1)
        parity = (1 - 2 * (swaps % 2)).astype(dtype)
        sign = pg.prod(unit, axis=-1) * parity
    return sign, logabs


def det(a):
    """numpy.linalg.det: sign * exp(log|det|), as NumPy computes it."""
    a = _array(a, "det")
    _stacked_2d(a)
    _stacked_square(a)
    dtype = _linalg_dtype(a)
    if _host_path(a):
        return _on_host(np.linalg.det, [a])
    sign, logabs = _slogdet(a, dtype)
    with a.device:
        return sign * _pg().exp(logabs).astype(dtype)


def cholesky(a, /, *, upper=False):
    """numpy.linalg.cholesky: L (lower, a = L L^H; only a's lower triangle is
    read), or with upper=True U (a = U^H U, its upper triangle read);
    LinAlgError where a matrix is not positive definite."""
    a = _array(a, "cholesky")
    _stacked_2d(a)
    _stacked_square(a)
    dtype = _linalg_dtype(a)
    if _host_path(a):
        return _on_host(np.linalg.cholesky, [a], upper=bool(upper))
    pg = _pg()
    n = a.shape[-1]
    batch = _batch(a)
    t = _PREFIX[dtype]
    # the buffer is A^T to cuSOLVER: A's lower triangle is its upper one, and
    # the U it leaves there (A^T = U^H U) is L = U^T row-major
    uplo = _LOWER if upper else _UPPER
    with _session(a) as (lib, h):
        c = _c_copy(a, dtype)
        info = pg.zeros(batch, dtype="int32")
        lw = _lwork(lib, f"cusolverDn{t}potrf_bufferSize", h, uplo, n, c.ptr, n)
        work = pg.empty(lw, dtype=dtype)
        for i in range(batch):
            _call(lib, f"cusolverDn{t}potrf", h, uplo, n, _ptr(c, i, n * n), n, work.ptr,
                  lw, _ptr(info, i, 1))
        codes = _infos(info)
    if (codes > 0).any():
        raise LinAlgError("Matrix is not positive definite")
    with a.device:
        return pg.triu(c) if upper else pg.tril(c)


def qr(a, mode="reduced"):
    """numpy.linalg.qr: QRResult(Q, R) for mode 'reduced' (Q m x k, R k x n)
    and 'complete' (Q m x m, R m x n), R alone for 'r', (h, tau) for 'raw'."""
    a = _array(a, "qr")
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    _stacked_2d(a)
    dtype = _linalg_dtype(a)
    if _host_path(a):
        return _on_host(np.linalg.qr, [a], mode=mode)
    pg = _pg()
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = _batch(a)
    t = _PREFIX[dtype]
    gqr = f"cusolverDn{t}{'or' if dtype.kind == 'f' else 'un'}gqr"
    with _session(a) as (lib, h):
        cm = _cm_copy(a, dtype)  # (..., n, m): column-major m x n, lda m
        tau = pg.empty(a.shape[:-2] + (k,), dtype=dtype)
        info = pg.zeros(2 * batch, dtype="int32")
        lw = _lwork(lib, f"cusolverDn{t}geqrf_bufferSize", h, m, n, cm.ptr, m)
        work = pg.empty(lw, dtype=dtype)
        for i in range(batch):
            _call(lib, f"cusolverDn{t}geqrf", h, m, n, _ptr(cm, i, m * n), m, _ptr(tau, i, k),
                  work.ptr, lw, _ptr(info, 2 * i, 1))
        if mode == "raw":
            _check_infos(_infos(info), f"cusolverDn{t}geqrf")
            return cm, tau
        r = pg.triu(_mT(cm) if mode == "complete" else _mT(cm)[..., :k, :])
        if mode == "r":
            _check_infos(_infos(info), f"cusolverDn{t}geqrf")
            return r
        cols = m if mode == "complete" else k
        if cols == k:
            q = cm[..., :k, :]  # the first k columns of the column-major m x n
            if not q.flags["C_CONTIGUOUS"]:
                q = q.copy()
        else:  # complete, m > n: the reflectors in an m x m matrix
            q = pg.zeros(a.shape[:-2] + (m, m), dtype=dtype)
            q[..., :n, :] = cm
        lw = _lwork(lib, f"{gqr}_bufferSize", h, m, cols, k, q.ptr, m, tau.ptr)
        work = pg.empty(lw, dtype=dtype)
        for i in range(batch):
            _call(lib, gqr, h, m, cols, k, _ptr(q, i, m * cols), m, _ptr(tau, i, k), work.ptr,
                  lw, _ptr(info, 2 * i + 1, 1))
        _check_infos(_infos(info), f"cusolverDn{t}geqrf or {gqr}")
    return QRResult(_mT(q), r)


def _check_infos(codes, call):
    if (codes != 0).any():
        raise CudaError(f"{call}: invalid argument {-int(codes.min())}")


def _svd(a, dtype, full, uv):
    """(u, s, vh) by gesvd (u, vh None when not uv), as derived in the module's
    docstring: a tall matrix in column-major order, a wide one as A^T."""
    pg = _pg()
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = _batch(a)
    t = _PREFIX[dtype]
    lead = a.shape[:-2]
    tall = m >= n
    rows, cols = (m, n) if tall else (n, m)  # of the column-major matrix given
    ucols = rows if full else cols
    with _session(a) as (lib, h):
        x = _cm_copy(a, dtype) if tall else _c_copy(a, dtype)
        s = pg.empty(lead + (k,), dtype=_real(dtype))
        if uv:
            ub = pg.empty(lead + (ucols, rows), dtype=dtype)  # column-major rows x ucols
            vb = pg.empty(lead + (cols, cols), dtype=dtype)  # column-major cols x cols
            jobu, jobvt = (b"A" if full else b"S"), b"A"
        else:
            ub = vb = None
            jobu = jobvt = b"N"
        info = pg.zeros(batch, dtype="int32")
        lw = _lwork(lib, f"cusolverDn{t}gesvd_bufferSize", h, rows, cols)
        work = pg.empty(lw, dtype=dtype)
        for i in range(batch):
            _call(lib, f"cusolverDn{t}gesvd", h, jobu, jobvt, rows, cols,
                  _ptr(x, i, rows * cols), rows, _ptr(s, i, k),
                  _ptr(ub, i, rows * ucols) if uv else None, rows,
                  _ptr(vb, i, cols * cols) if uv else None, cols,
                  work.ptr, lw, None, _ptr(info, i, 1))
        codes = _infos(info)
    if (codes > 0).any():
        raise LinAlgError("SVD did not converge")
    _check_infos(codes, f"cusolverDn{t}gesvd")
    if not uv:
        return None, s, None
    if tall:  # U and V^H column-major
        return _mT(ub), s, _mT(vb)
    # A^T = U' S V'^H: A's U is V'^H's buffer row-major, A's V^H is U''s
    return vb, s, ub


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """numpy.linalg.svd: SVDResult(U, S, Vh), S descending; S alone when
    compute_uv is False. hermitian=True computes the general SVD (as valid a
    factorization; singular vectors may differ from NumPy's by a phase)."""
    a = _array(a, "svd")
    _stacked_2d(a)
    dtype = _linalg_dtype(a)
    if _host_path(a):
        return _on_host(np.linalg.svd, [a], full_matrices=full_matrices,
                        compute_uv=compute_uv, hermitian=hermitian)
    u, s, vh = _svd(a, dtype, bool(full_matrices), bool(compute_uv))
    return SVDResult(u, s, vh) if compute_uv else s


def svdvals(x, /):
    """The singular values of each matrix, descending (svd(x, compute_uv=False))."""
    return svd(_array(x, "svdvals"), compute_uv=False)


def _eigh(a, uplo, vectors, name):
    a = _array(a, name)
    if uplo not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    _stacked_2d(a)
    _stacked_square(a)
    dtype = _linalg_dtype(a)
    if _host_path(a):
        return _on_host(np.linalg.eigh if vectors else np.linalg.eigvalsh, [a], UPLO=uplo)
    pg = _pg()
    n = a.shape[-1]
    batch = _batch(a)
    t = _PREFIX[dtype]
    fn = f"cusolverDn{t}{'sy' if dtype.kind == 'f' else 'he'}evd"
    jobz = _VECTOR if vectors else _NOVECTOR
    fill = _LOWER if uplo == "L" else _UPPER  # the column-major copy is A itself
    with _session(a) as (lib, h):
        cm = _cm_copy(a, dtype)
        w = pg.empty(a.shape[:-1], dtype=_real(dtype))
        info = pg.zeros(batch, dtype="int32")
        lw = _lwork(lib, f"{fn}_bufferSize", h, jobz, fill, n, cm.ptr, n, w.ptr)
        work = pg.empty(lw, dtype=dtype)
        for i in range(batch):
            _call(lib, fn, h, jobz, fill, n, _ptr(cm, i, n * n), n, _ptr(w, i, n), work.ptr,
                  lw, _ptr(info, i, 1))
        codes = _infos(info)
    if (codes > 0).any():
        raise LinAlgError("Eigenvalues did not converge")
    _check_infos(codes, fn)
    return EighResult(w, _mT(cm)) if vectors else w


def eigh(a, UPLO="L"):  # noqa: N803  (NumPy's name)
    """numpy.linalg.eigh: EighResult(eigenvalues ascending, eigenvectors as
    columns) of each Hermitian matrix, from its UPLO triangle."""
    return _eigh(a, UPLO, True, "eigh")


def eigvalsh(a, UPLO="L"):  # noqa: N803
    """numpy.linalg.eigvalsh: the eigenvalues of each Hermitian matrix, ascending."""
    return _eigh(a, UPLO, False, "eigvalsh")


def _unpack_real_pairs(vr, wi):
    """LAPACK's real eigenvectors (rows of vr, C-contiguous (..., n, n): the
    column-major VR) as complex ones: for a pair wi[j] > 0 > wi[j + 1],
    v[j] = VR[:, j] + i VR[:, j + 1] and v[j + 1] = VR[:, j] - i VR[:, j + 1]."""
    pg = _pg()
    zero = pg.zeros(vr.shape[:-2] + (1, vr.shape[-1]), dtype=vr.dtype)
    nxt = pg.concat([vr[..., 1:, :], zero], axis=-2)
    prv = pg.concat([zero, vr[..., :-1, :]], axis=-2)
    first = pg.expand_dims(wi > 0, -1)
    second = pg.expand_dims(wi < 0, -1)
    re = pg.where(second, prv, vr)
    im = pg.where(first, nxt, pg.where(second, -vr, 0))
    return re + 1j * im


_always_complex = []


def _eig_always_complex():
    """Whether the installed NumPy's eig gives complex results for real
    matrices always (NumPy 2.5, as the array API's 2025.12 eig), rather than
    real ones where every eigenvalue of the stack is real (NumPy 2.4 and
    before). pygpu's answer is the installed NumPy's."""
    if not _always_complex:
        _always_complex.append(np.linalg.eigvals(np.eye(1)).dtype.kind == "c")
    return _always_complex[0]


def _eig(a, vectors, name):
    """numpy.linalg.eig (vectors) and eigvals: cusolverDnXgeev on each
    matrix's column-major copy; for real matrices its real and imaginary
    parts, complex results unless every eigenvalue of the stack is real and
    NumPy gives real ones there."""
    a = _array(a, name)
    _stacked_2d(a)
    _stacked_square(a)
    dtype = _linalg_dtype(a)
    if _host_path(a):
        return _on_host(np.linalg.eig if vectors else np.linalg.eigvals, [a])
    pg = _pg()
    with a.device:
        if not bool(pg.all(pg.isfinite(a))):
            raise LinAlgError("Array must not contain infs or NaNs")
    n = a.shape[-1]
    batch = _batch(a)
    lead = a.shape[:-2]
    real = dtype.kind == "f"
    dt = _CUDA_TYPE[dtype]
    jobvr = _VECTOR if vectors else _NOVECTOR
    with _session(a) as (lib, h):
        _require(lib, "cusolverDnXgeev", name)
        cm = _cm_copy(a, dtype)
        w = pg.empty(lead + ((2 * n,) if real else (n,)), dtype=dtype)  # real: wr then wi
        vr = pg.empty(lead + (n, n), dtype=dtype) if vectors else None
        info = pg.zeros(batch, dtype="int32")
        params = _P()
        _call(lib, "cusolverDnCreateParams", ctypes.byref(params))
        try:
            dev_bytes, host_bytes = _Z(), _Z()
            _call(lib, "cusolverDnXgeev_bufferSize", h, params, _NOVECTOR, jobvr, n, dt,
                  cm.ptr, n, dt, w.ptr, dt, None, 1, dt, vr.ptr if vectors else None,
                  n if vectors else 1, dt, ctypes.byref(dev_bytes), ctypes.byref(host_bytes))
            work = pg.empty(max(dev_bytes.value, 1), dtype="uint8")
            host_work = ctypes.create_string_buffer(max(host_bytes.value, 1))
            for i in range(batch):
                _call(lib, "cusolverDnXgeev", h, params, _NOVECTOR, jobvr, n, dt,
                      _ptr(cm, i, n * n), n, dt, _ptr(w, i, w.shape[-1]), dt, None, 1, dt,
                      _ptr(vr, i, n * n) if vectors else None, n if vectors else 1, dt,
                      work.ptr, dev_bytes.value, ctypes.addressof(host_work),
                      host_bytes.value, _ptr(info, i, 1))
            codes = _infos(info)
        finally:
            _call(lib, "cusolverDnDestroyParams", params)
    if (codes > 0).any():
        raise LinAlgError("Eigenvalues did not converge")
    _check_infos(codes, "cusolverDnXgeev")
    with a.device:
        if real:
            wr, wi = w[..., :n], w[..., n:]
            if not _eig_always_complex() and bool(pg.all(wi == 0)):  # the whole stack real
                values, vecs = wr.copy(), vr
            else:
                values = wr + 1j * wi
                vecs = _unpack_real_pairs(vr, wi) if vectors else None
        else:
            values, vecs = w, vr
        if not vectors:
            return values
        return EigResult(values, _mT(vecs))


def eig(a):
    """numpy.linalg.eig: EigResult(eigenvalues, eigenvectors as columns of
    unit norm, largest component real) of each general matrix, in LAPACK's
    order. Real matrices give complex results, or real ones where every
    eigenvalue of the stack is real and the installed NumPy does so (2.4 and
    before)."""
    return _eig(a, True, "eig")


def eigvals(a):
    """numpy.linalg.eigvals: the eigenvalues of each general matrix, real
    or complex as eig's."""
    return _eig(a, False, "eigvals")


# ---- built on the factorizations -------------------------------------------------------------

def lstsq(a, b, rcond=None):
    """numpy.linalg.lstsq: (x, residuals, rank, s) by the SVD of a (one
    matrix), singular values below rcond * max(s) taken as zero (rcond
    default: eps * max(M, N)). rank is a NumPy int32, as NumPy's."""
    a = _array(a, "lstsq")
    b = _array(b, "lstsq")
    if a.ndim != 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim not in (1, 2):
        raise LinAlgError(f"{b.ndim}-dimensional array given. Array must be one or "
                          "two-dimensional")
    dtype = _linalg_dtype(a, b)
    m, n = a.shape
    if b.shape[0] != m:
        raise LinAlgError("Incompatible dimensions")
    if a.size == 0 or b.size == 0:
        host = _on_host(np.linalg.lstsq, [a, b], rcond=rcond)
        return host[0], host[1], np.int32(int(host[2].item())), host[3]
    pg = _pg()
    with a.device:
        vector = b.ndim == 1
        bm = b.reshape((m, 1)) if vector else b
        bm = bm.astype(dtype)
        af = a.astype(dtype)
        u, s, vh = svd(af, full_matrices=False)
        eps = np.finfo(dtype).eps
        if rcond is None:
            rcond = eps * max(m, n)
        elif rcond < 0:
            rcond = eps
        cutoff = pg.max(s) * _real(dtype).type(rcond)
        keep = s > cutoff
        rank = int(pg.count_nonzero(keep).item())
        s_inv = pg.where(keep, 1 / s, 0).astype(_real(dtype))
        x = _mT(pg.conj(vh)) @ (s_inv.reshape((s.shape[0], 1)).astype(dtype) *
                                (_mT(pg.conj(u)) @ bm))
        if rank == n and m > n:
            r = bm - af @ x
            resid = pg.sum((abs(r) ** 2).astype(_real(dtype)), axis=0)
        else:
            resid = pg.empty(0, dtype=_real(dtype))
        if vector:
            x = x.reshape(n)
    return x, resid, np.int32(rank), s


def _cutoff_scale(rcond, a, dtype, name):
    """rcond (or rtol) as pinv and matrix_rank use it against the largest
    singular value of each matrix of a: a scalar of dtype's real type, or a
    DeviceArray on a's device of shape (*batch, 1) that broadcasts against
    the (*a.shape[:-2], 1) maxima without growing them (NumPy's rule)."""
    if isinstance(rcond, DeviceArray):
        if rcond.device != a.device:
            raise ValueError(f"pygpu.linalg.{name}: rtol is on {rcond.device}, the matrices "
                             f"on {a.device}")
        if rcond.dtype.kind not in "biuf":
            raise TypeError(f"pygpu.linalg.{name}: rtol must be a real floating-point array, "
                            f"not {rcond.dtype}")
        batch = a.shape[:-2]
        try:
            grown = np.broadcast_shapes(rcond.shape, batch)
        except ValueError:
            grown = None
        if grown != batch:
            raise ValueError(f"pygpu.linalg.{name}: rtol of shape {rcond.shape} does not "
                             f"broadcast to the stack of matrices, shape {batch}")
        return _pg().expand_dims(rcond, -1)
    if isinstance(rcond, np.ndarray) and rcond.ndim:
        raise TypeError(f"pygpu.linalg.{name}: rtol is a numpy.ndarray in host memory; pygpu "
                        "does not copy between host and device implicitly: give a Python "
                        "float or a DeviceArray (pygpu.asarray(rtol))")
    try:
        return _real(dtype).type(float(rcond))
    except (TypeError, ValueError):
        raise TypeError(f"pygpu.linalg.{name}: rtol must be a real number or a DeviceArray, "
                        f"not {type(rcond).__name__}") from None


def pinv(a, rcond=None, hermitian=False, *, rtol=_NoValue):
    """numpy.linalg.pinv: the Moore-Penrose pseudo-inverse of each matrix by
    its SVD, singular values at most rcond * max(s) dropped (rcond default
    1e-15; rtol=None: max(M, N) * eps). rcond or rtol may be a DeviceArray
    that broadcasts against the stack of matrices (one per matrix)."""
    a = _array(a, "pinv")
    if rcond is None:
        if rtol is _NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(a.shape[-2:]) * np.finfo(_linalg_dtype(a)).eps if a.ndim >= 2 else 0
        else:
            rcond = rtol
    elif rtol is not _NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    _stacked_2d(a)
    dtype = _linalg_dtype(a)
    rc = _cutoff_scale(rcond, a, dtype, "pinv")
    pg = _pg()
    with a.device:
        if a.size == 0:  # NumPy's answer, rcond unread: of a's own dtype for empty matrices
            m, n = a.shape[-2:]
            return pg.empty(a.shape[:-2] + (n, m),
                            dtype=a.dtype if m * n == 0 else dtype)
        u, s, vh = svd(a.conj() if dtype.kind == "c" else a, full_matrices=False)
        cutoff = rc * pg.max(s, axis=-1, keepdims=True)
        large = s > cutoff
        sinv = pg.where(large, 1 / pg.where(large, s, 1), 0).astype(dtype)
        return _mT(vh) @ (pg.expand_dims(sinv, -1) * _mT(u))


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):  # noqa: N803
    """numpy.linalg.matrix_rank: the number of singular values above tol
    (default max(s) * max(M, N) * eps, or max(s) * rtol), per matrix; for
    fewer than 2 dimensions, 1 unless every element is zero."""
    A = _array(A, "matrix_rank")  # noqa: N806
    if rtol is not None and tol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    pg = _pg()
    with A.device:
        if A.ndim < 2:
            return int(bool(pg.any(A != 0).item()))
        S = svdvals(A)  # noqa: N806
        if tol is None:
            if rtol is None:
                rtol = max(A.shape[-2:]) * np.finfo(S.dtype).eps
            rt = _cutoff_scale(rtol, A, S.dtype, "matrix_rank")
            tol = pg.max(S, axis=-1, keepdims=True, initial=0) * rt
        elif isinstance(tol, DeviceArray):
            tol = pg.expand_dims(tol, -1)
        return pg.count_nonzero(S > tol, axis=-1)


# ---- norms -------------------------------------------------------------------------------

def _normalize_axis(axis, ndim):
    return np._core.numeric.normalize_axis_index(axis, ndim)


def _abs_sq(x):
    pg = _pg()
    return pg.real(pg.conj(x) * x) if x.dtype.kind == "c" else x * x


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """numpy.linalg.norm: vector norms over one axis, matrix norms over two
    (2, -2 and 'nuc' by the SVD)."""
    x = _array(x, "norm")
    pg = _pg()
    with x.device:
        if x.size == 0:  # NumPy's answer (0.0, or its error) depends on the shape alone
            return pg.asarray(np.asarray(np.linalg.norm(np.zeros(x.shape, x.dtype), ord, axis,
                                                        keepdims)))
        return _norm(pg, x, ord, axis, keepdims)


def _norm(pg, x, ord, axis, keepdims):  # noqa: A002
    if x.dtype.kind not in "fc":
        x = x.astype("float64")
    elif x.dtype not in _SOLVER_TYPES and x.dtype != np.float16:
        raise TypeError(f"array type {x.dtype} is unsupported in linalg")
    if axis is None:
        ndim = x.ndim
        if ord is None or (isinstance(ord, str) and ord in ("f", "fro") and ndim == 2) or \
                (not isinstance(ord, str) and ord == 2 and ndim == 1):
            ret = pg.sqrt(pg.sum(_abs_sq(x.reshape((x.size,)))))
            if keepdims:
                ret = ret.reshape((1,) * ndim)
            return ret
    nd = x.ndim
    if axis is None:
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (operator.index(axis),)
        except TypeError as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
    if len(axis) == 1:
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        if ord == np.inf:
            return pg.max(abs(x), axis=axis, keepdims=keepdims)
        if ord == -np.inf:
            return pg.min(abs(x), axis=axis, keepdims=keepdims)
        if ord == 0:
            return pg.sum((x != 0).astype(_real(x.dtype)), axis=axis, keepdims=keepdims)
        if ord == 1:
            return pg.sum(abs(x), axis=axis, keepdims=keepdims)
        if ord is None or ord == 2:
            return pg.sqrt(pg.sum(_abs_sq(x), axis=axis, keepdims=keepdims))
        try:
            p = float(ord)
        except (TypeError, ValueError):
            raise ValueError(f"Invalid norm order {ord!r} for vectors") from None
        ret = pg.sum(abs(x) ** p, axis=axis, keepdims=keepdims)
        return ret ** (1 / p)
    if len(axis) == 2:
        row_axis, col_axis = (_normalize_axis(a, nd) for a in axis)
        if row_axis == col_axis:
            raise ValueError("Duplicate axes given.")
        if isinstance(ord, str) and ord not in ("f", "fro", "nuc"):
            raise ValueError("Invalid norm order for matrices.")
        if ord == 2 or ord == -2 or ord == "nuc":
            y = pg.moveaxis(x, (row_axis, col_axis), (-2, -1))
            s = svdvals(y)
            ret = (pg.sum(s, axis=-1) if ord == "nuc" else
                   pg.max(s, axis=-1) if ord == 2 else pg.min(s, axis=-1))
        elif ord == 1 or ord == -1:
            if col_axis > row_axis:
                col_axis -= 1
            r = pg.sum(abs(x), axis=row_axis)
            ret = pg.max(r, axis=col_axis) if ord == 1 else pg.min(r, axis=col_axis)
        elif ord == np.inf or ord == -np.inf:
            if row_axis > col_axis:
                row_axis -= 1
            r = pg.sum(abs(x), axis=col_axis)
            ret = pg.max(r, axis=row_axis) if ord == np.inf else pg.min(r, axis=row_axis)
        elif ord is None or ord in ("f", "fro"):
            ret = pg.sqrt(pg.sum(_abs_sq(x), axis=axis))
        else:
            raise ValueError("Invalid norm order for matrices.")
        if keepdims:
            shape = list(x.shape)
            shape[axis[0]] = 1
            shape[axis[1]] = 1
            ret = ret.reshape(tuple(shape))
        return ret
    raise ValueError("Improper number of dimensions to norm.")


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    """The array API's matrix_norm: norm over the last two axes."""
    return norm(x, axis=(-2, -1), keepdims=keepdims, ord=ord)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    """The array API's vector_norm: the norm of the vectors along axis (all
    axes when None; a tuple of axes as one flattened axis)."""
    x = _array(x, "vector_norm")
    pg = _pg()
    shape = list(x.shape)
    with x.device:
        if axis is None:
            y, ax = x.reshape((x.size,)), 0
        elif isinstance(axis, tuple):
            axes = np._core.numeric.normalize_axis_tuple(axis, x.ndim)
            rest = tuple(i for i in range(x.ndim) if i not in axes)
            y = pg.permute_dims(x, axes + rest).reshape(
                (math.prod(x.shape[i] for i in axes), *(x.shape[i] for i in rest)))
            ax = 0
        else:
            y, ax = x, axis
        res = norm(y, axis=ax, ord=ord)
        if keepdims:
            axes = np._core.numeric.normalize_axis_tuple(
                range(len(shape)) if axis is None else axis, len(shape))
            for i in axes:
                shape[i] = 1
            res = res.reshape(tuple(shape))
        return res


# ---- products ------------------------------------------------------------------------------


def _matmul(a, b):
    """a @ b with NumPy's result type (pygpu's matmul takes every device
    dtype, integers and bools included)."""
    dt = np.result_type(a.dtype, b.dtype)
    return (a if a.dtype == dt else a.astype(dt)) @ (b if b.dtype == dt else b.astype(dt))


def matmul(x1, x2, /):
    """numpy.linalg.matmul: x1 @ x2 with NumPy's rules for vectors (a 1-D
    operand is a row, or a column, then dropped) and its result type,
    integers and bools included."""
    a = _array(x1, "matmul")
    b = _array(x2, "matmul")
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions (has "
                             "0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)")
    row, col = a.ndim == 1, b.ndim == 1
    with a.device:
        a = a.reshape((1, a.shape[0])) if row else a
        b = b.reshape((b.shape[0], 1)) if col else b
        if a.shape[-1] != b.shape[-2]:
            raise ValueError("matmul: Input operand 1 has a mismatch in its core dimension 0, "
                             "with gufunc signature (n?,k),(k,m?)->(n?,m?) (size "
                             f"{b.shape[-2]} is different from {a.shape[-1]})")
        r = _matmul(a, b)
        if row:
            r = r[..., 0, :]
        return r[..., 0] if col else r


def matrix_transpose(x, /):
    """numpy.linalg.matrix_transpose: each matrix transposed (a view), by
    the namespace's one implementation."""
    from ._ops.manipulation import matrix_transpose as transpose

    return transpose(_array(x, "matrix_transpose"))


def diagonal(x, /, *, offset=0):
    """numpy.linalg.diagonal: the diagonal `offset` of each matrix."""
    x = _array(x, "diagonal")
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    with x.device:
        return _pg().diagonal(x, offset, -2, -1)


def matrix_power(a, n):
    """numpy.linalg.matrix_power: a @ a @ ... (n times) for each matrix, by
    repeated squaring; n < 0 inverts first; n == 0 gives identities."""
    a = _array(a, "matrix_power")
    _stacked_2d(a)
    _stacked_square(a)
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    pg = _pg()
    with a.device:
        if n == 0:
            return _c_copy(pg.broadcast_to(pg.eye(a.shape[-2], dtype=a.dtype), a.shape),
                           a.dtype)
        if n < 0:
            a = inv(a)
            n = -n
        if n == 1:
            return a
        if n == 2:
            return _matmul(a, a)
        if n == 3:
            return _matmul(_matmul(a, a), a)
        z = result = None
        while n > 0:
            z = a if z is None else _matmul(z, z)
            n, bit = divmod(n, 2)
            if bit:
                result = z if result is None else _matmul(result, z)
        return result


def outer(x1, x2, /):
    """numpy.linalg.outer: x1[i] * x2[j] of two vectors."""
    x1 = _array(x1, "outer")
    x2 = _array(x2, "outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError("Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} and x2.ndim={x2.ndim}.")
    with x1.device:
        return x1.reshape((x1.shape[0], 1)) * x2.reshape((1, x2.shape[0]))


def tensordot(x1, x2, /, *, axes=2):
    """numpy.linalg.tensordot: the sum of products over the given axes (the
    last `axes` of x1 with the first of x2, or the pairs of axes given),
    with NumPy's reading of axes and its errors; the product is the
    namespace's one implementation (namespace.contract)."""
    from ._ops.namespace import contract

    a = _array(x1, "tensordot")
    b = _array(x2, "tensordot")
    try:
        iter(axes)
    except TypeError:
        axes = operator.index(axes)
        axes_a, axes_b = list(range(-axes, 0)), list(range(axes))
    else:
        axes_a, axes_b = axes
    axes_a = list(axes_a) if hasattr(axes_a, "__len__") else [operator.index(axes_a)]
    axes_b = list(axes_b) if hasattr(axes_b, "__len__") else [operator.index(axes_b)]
    if len(set(axes_a)) != len(axes_a) or len(set(axes_b)) != len(axes_b):
        raise ValueError("duplicate axes are not allowed in tensordot")
    if len(axes_a) != len(axes_b) or any(
            a.shape[i] != b.shape[j] for i, j in zip(axes_a, axes_b, strict=True)):
        raise ValueError("shape-mismatch for sum")
    return contract(a, b, [i % a.ndim for i in axes_a], [j % b.ndim for j in axes_b])


def vecdot(x1, x2, /, *, axis=-1):
    """numpy.linalg.vecdot (the array API's): sum(conj(x1) * x2) along axis,
    broadcasting the rest; the namespace's vecdot, one implementation."""
    from ._ops.namespace import vecdot as namespace_vecdot

    return namespace_vecdot(x1, x2, axis=axis)


def trace(x, /, *, offset=0, dtype=None):
    """numpy.linalg.trace: the sum of each matrix's diagonal `offset`."""
    x = _array(x, "trace")
    if x.ndim < 2:
        raise ValueError(f"trace: x must have at least 2 dimensions, not {x.ndim}")
    pg = _pg()
    with x.device:
        return pg.sum(pg.diagonal(x, offset, -2, -1), axis=-1, dtype=dtype)


def cross(x1, x2, /, *, axis=-1):
    """numpy.linalg.cross: the cross product of 3-vectors along axis."""
    x1 = _array(x1, "cross")
    x2 = _array(x2, "cross")
    for x in (x1, x2):
        if x.ndim == 0:
            raise ValueError("cross: the operands must be at least one-dimensional")
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, "
            f"but they are {x1.shape[axis]} and {x2.shape[axis]} "
            "dimensional instead.")
    if x1.dtype.kind == "b" and x2.dtype.kind == "b":
        raise TypeError("cross: bool operands are not supported (NumPy's subtract refuses "
                        "booleans)")
    pg = _pg()
    with x1.device:
        a = pg.moveaxis(x1, axis, -1)
        b = pg.moveaxis(x2, axis, -1)
        a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
        b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
        c = pg.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
        return pg.moveaxis(c, -1, _normalize_axis(axis, c.ndim))


# ---- einsum --------------------------------------------------------------------------------

def _einsum_parse(subscripts, operands):
    s = subscripts.replace(" ", "")
    lhs, arrow, out = s.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise ValueError(f"einsum: {len(inputs)} operands in the subscripts "
                         f"{subscripts!r}, {len(operands)} given")
    # '...' becomes letters of its own, the same for every operand, right-aligned
    unused = [c for c in string.ascii_letters if c not in s]
    spans = []
    for sub, op in zip(inputs, operands, strict=True):
        named = len(sub.replace("...", "", 1))
        spans.append(op.ndim - named if "..." in sub else 0)
        if op.ndim < named or ("..." not in sub and op.ndim != named):
            raise ValueError(f"einsum: operand has {op.ndim} dimensions but the subscripts "
                             f"{sub!r} name {named}")
    ell = "".join(unused[:max(spans, default=0)])
    inputs = [sub.replace("...", ell[len(ell) - k:], 1) for sub, k in zip(inputs, spans,
                                                                           strict=True)]
    for sub in inputs:
        if sub and not sub.isalpha():
            raise ValueError(f"einsum: invalid subscript {sub!r}")
    if arrow:
        if ell and "..." not in out:
            raise ValueError("output has more dimensions than subscripts given in einstein "
                             "sum, but no '...' ellipsis provided to broadcast the extra "
                             "dimensions.")
        out = out.replace("...", ell, 1)
    else:
        counts = {}
        for c in "".join(inputs):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    if not (out.isalpha() or not out) or len(set(out)) != len(out) or \
            any(c not in "".join(inputs) for c in out):
        raise ValueError(f"einsum: invalid output subscripts {out!r}")
    return inputs, out


def _einsum_one(pg, x, sub, keep):
    """x (indices sub, each at most twice) reduced to the indices of keep,
    in keep's order; repeated indices give the diagonal."""
    while len(set(sub)) != len(sub):
        c = next(c for c in sub if sub.count(c) > 1)
        i = sub.index(c)
        j = sub.index(c, i + 1)
        x = pg.diagonal(x, 0, i, j)  # the diagonal goes last
        sub = "".join(ch for k, ch in enumerate(sub) if k not in (i, j)) + c
    summed = tuple(i for i, c in enumerate(sub) if c not in keep)
    if summed:
        x = (pg.any(x, axis=summed) if x.dtype.kind == "b" else
             pg.sum(x, axis=summed, dtype=x.dtype))
        sub = "".join(c for c in sub if c in keep)
    return x, sub


def _einsum_two(pg, a, sa, b, sb, keep):
    """The product of a and b summed over the indices not in keep, as one
    batched matrix product: indices (batch, a's free, contracted) x
    (batch, contracted, b's free)."""
    batch = [c for c in sa if c in sb and c in keep]
    contract = [c for c in sa if c in sb and c not in keep]
    free_a = [c for c in sa if c not in sb]
    free_b = [c for c in sb if c not in sa]
    size = {}
    for sub, x in ((sa, a), (sb, b)):
        for c, n in zip(sub, x.shape, strict=True):
            m = size.setdefault(c, n)
            if m != n and 1 not in (m, n):
                raise ValueError(f"einsum: index {c!r} has sizes {m} and {n}")
            size[c] = max(m, n)
    a, b = (x if x.shape == tuple(size[c] for c in sub) else
            pg.broadcast_to(x, tuple(size[c] for c in sub)) for sub, x in ((sa, a), (sb, b)))
    at = pg.permute_dims(a, tuple(sa.index(c) for c in batch + free_a + contract))
    bt = pg.permute_dims(b, tuple(sb.index(c) for c in batch + contract + free_b))
    nb = [size[c] for c in batch]
    m = math.prod(size[c] for c in free_a)
    k = math.prod(size[c] for c in contract)
    n = math.prod(size[c] for c in free_b)
    r = _matmul(at.reshape((*nb, m, k)), bt.reshape((*nb, k, n)))
    r = r.reshape(tuple(nb) + tuple(size[c] for c in free_a + free_b))
    return r, "".join(batch + free_a + free_b)


def einsum(subscripts, *operands, out=None, optimize=False, **kwargs):
    """numpy.einsum for the contractions that are matrix products: one or
    more operands, subscripts as a string ('...' for leading dimensions that
    broadcast), an index at most twice within one operand (its diagonal). Operands are
    contracted left to right, each pair as one (batched) matrix product."""
    if out is not None or kwargs:
        raise NotImplementedError(f"pygpu's einsum takes no {'out' if out is not None else ''}"
                                  f"{', '.join(kwargs)} argument")
    if not isinstance(subscripts, str):
        raise NotImplementedError("pygpu's einsum takes the subscripts as a string "
                                  "('ij,jk->ik'), not NumPy's interleaved form")
    if not operands:
        raise ValueError("einsum: no operands given")
    ops = [_array(x, "einsum") for x in operands]
    inputs, out_sub = _einsum_parse(subscripts, ops)
    pg = _pg()
    with ops[0].device:
        # what each step keeps: the output's indices and those of later operands
        x, sx = ops[0], inputs[0]
        later = "".join(inputs[1:]) + out_sub
        x, sx = _einsum_one(pg, x, sx, later)
        for i in range(1, len(ops)):
            y, sy = _einsum_one(pg, ops[i], inputs[i], sx + "".join(inputs[i + 1:]) + out_sub)
            keep = "".join(inputs[i + 1:]) + out_sub
            # an index of only one side that is not kept is summed first
            x, sx = _einsum_one(pg, x, sx, keep + sy)
            y, sy = _einsum_one(pg, y, sy, keep + sx)
            x, sx = _einsum_two(pg, x, sx, y, sy, keep)
        x, sx = _einsum_one(pg, x, sx, out_sub)
        return pg.permute_dims(x, tuple(sx.index(c) for c in out_sub)) if sx != out_sub else x


# ---- NumPy's functions on DeviceArrays ----------------------------------------------------

NUMPY = {
    np.linalg.inv: inv, np.linalg.solve: solve, np.linalg.det: det,
    np.linalg.slogdet: slogdet, np.linalg.cholesky: cholesky, np.linalg.qr: qr,
    np.linalg.svd: svd, np.linalg.svdvals: svdvals, np.linalg.eigh: eigh,
    np.linalg.eigvalsh: eigvalsh, np.linalg.eig: eig, np.linalg.eigvals: eigvals,
    np.linalg.lstsq: lstsq, np.linalg.pinv: pinv,
    np.linalg.matrix_rank: matrix_rank, np.linalg.norm: norm,
    np.linalg.matrix_norm: matrix_norm, np.linalg.vector_norm: vector_norm,
    np.linalg.outer: outer, np.linalg.tensordot: tensordot, np.linalg.vecdot: vecdot,
    np.linalg.trace: trace, np.linalg.cross: cross, np.linalg.matrix_power: matrix_power,
    np.linalg.matmul: matmul, np.linalg.matrix_transpose: matrix_transpose,
    np.linalg.diagonal: diagonal, np.einsum: einsum,
}

__all__ = ["EigResult", "EighResult", "LinAlgError", "QRResult", "SVDResult", "SlogdetResult",
           "cholesky", "cross", "cusolver_version", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "einsum", "inv", "lstsq", "matmul", "matrix_norm", "matrix_power",
           "matrix_rank", "matrix_transpose", "norm", "outer", "pinv", "qr", "slogdet", "solve",
           "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]
