"""Matrix products by cuBLAS, NVIDIA's BLAS, where it can be loaded.

`a @ b` and `pygpu.matmul(a, b)` (method "auto") run in cuBLAS on a GPU when
the library is there, and in pygpu's own kernels elsewhere: on the simulator,
and where no cuBLAS is found. Either way the answer is NumPy's (within float
tolerance). cuBLAS is loaded at the first product, never at `import pygpu`,
from the first of:

- ``PYGPU_CUBLAS``: the absolute path of a libcublas.so to use (a relative
  one is refused); ``PYGPU_CUBLAS=0`` uses pygpu's kernels only;
- the loader's own search (LD_LIBRARY_PATH, ld.so.cache): libcublas.so.13,
  then .so.12;
- the CUDA toolkit: $CUDA_HOME and $CUDA_PATH (each only if absolute), then
  /usr/local/cuda (lib64, lib, targets/*/lib);
- NVIDIA's wheels (nvidia-cublas: nvidia/cu13/lib, nvidia/cublas/lib) in this
  interpreter's site-packages, never in the current directory or other
  sys.path entries.

pygpu/_libs.py owns this search for every NVIDIA library.

A library newer than the driver's CUDA version is passed over.
`matmul_backend()` says which is in use, and why (`cuda.detect()` and
`python -m pygpu` print it).

TF32: cuBLAS can round float32 (and complex64) inputs to TF32, the tensor
cores' 10-bit mantissa, for several times the speed and about 1e-3 relative
error. It is off by default, as in CuPy and PyTorch:
``pygpu.blas.set_allow_tf32(True)`` turns it on for the process.
"""

import os
import re
import threading

from . import _core, _libs

_lock = threading.Lock()
_loaded = None  # None: not tried; else (path, version) or (None, why not)


def _soname_major(path):
    m = re.search(r"\.so\.(\d+)", os.path.basename(path))
    return int(m.group(1)) if m else None


def _driver_major():
    """The CUDA major version the driver runs (13 for 13.0), or None."""
    try:
        v = _core.versions().get("driver", 0)
    except Exception:  # noqa: BLE001  (no driver: nothing to filter by)
        return None
    return v // 1000 if v else None


def _load():
    """Find and load cuBLAS once per process: True if products go to it.
    matmul.c calls this at the first product on a backend that can have it."""
    global _loaded
    with _lock:
        if _loaded is not None:
            return _loaded[0] is not None
        if _libs.disabled("cublas"):
            _loaded = (None, "PYGPU_CUBLAS=0")
            return False
        if not _core._blas_available():
            _loaded = (None, f"the {_core.versions()['backend']} has no cuBLAS")
            return False
        driver = _driver_major()
        refused, errors = [], []
        for path in _libs.cublas_candidates(refused):
            major = _soname_major(path)
            if driver is not None and major is not None and major > driver:
                errors.append(f"{path}: cuBLAS {major} needs a CUDA {major} driver "
                              f"(this one runs CUDA {driver})")
                continue
            try:
                version = _core._blas_load(path)
            except OSError as exc:
                errors.append(str(exc))
                continue
            _loaded = (_libs.record("cublas", path), version)
            return True
        _loaded = (None, "cuBLAS was not found (install the CUDA toolkit or the "
                         "nvidia-cublas wheel, or set PYGPU_CUBLAS to the absolute path of "
                         "libcublas.so). Tried: " + "; ".join(refused + errors[-4:]))
        return False


def cublas_version():
    """(major, minor, patch) of the cuBLAS that products use, loading it if
    this process has not yet tried; None where pygpu's own kernels run."""
    _load()
    return _loaded[1] if _loaded[0] is not None else None


def cublas_path():
    """The file cuBLAS was loaded from (or the name the loader found), or None."""
    _load()
    return _loaded[0]


def matmul_backend():
    """What `@` and `matmul(method="auto")` run in, as one line: "cuBLAS 13.0.2
    (loaded from ...)", or "pygpu's own kernels (why)". Loads cuBLAS if this
    process has not yet tried."""
    if _load():
        path, (major, minor, patch) = _loaded
        tf32 = ", TF32 allowed" if get_allow_tf32() else ""
        return f"cuBLAS {major}.{minor}.{patch} (loaded from {path}{tf32})"
    return f"pygpu's own kernels ({_loaded[1]})"


def set_allow_tf32(enabled):
    """Let float32 and complex64 products round their inputs to TF32 (True),
    or not (False, the default). Process-wide; only cuBLAS has TF32 products,
    pygpu's kernels always compute in full float32. Returns the previous
    setting."""
    if not isinstance(enabled, bool):
        raise TypeError(f"set_allow_tf32 takes True or False, not {enabled!r}")
    return _core._set_allow_tf32(enabled)


def get_allow_tf32():
    """Whether float32 and complex64 products may use TF32 (default False)."""
    return _core._allow_tf32()


__all__ = ["cublas_path", "cublas_version", "get_allow_tf32", "matmul_backend",
           "set_allow_tf32"]
