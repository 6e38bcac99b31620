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

from . import _core  # noqa: F401  (pygpu._core, the C extension)
from ._core import (
    CudaError,
    Device,
    DeviceArray,
    NoDeviceError,
    OutOfMemoryError,
    add,
    add_one,
    asarray,
    asnumpy,
    empty,
    full,
    matmul,
    zeros,
)

__version__ = "0.1.0"


def ones(shape, dtype=None, order="C"):
    """A device array of ones (float64 unless dtype says otherwise)."""
    return full(shape, 1, dtype="float64" if dtype is None else dtype, order=order)


def empty_like(a, dtype=None):
    """An uninitialized device array with a's shape (and dtype, unless given)."""
    return empty(a.shape, a.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None):
    """A device array of zeros with a's shape (and dtype, unless given)."""
    return zeros(a.shape, a.dtype if dtype is None else dtype)


def ones_like(a, dtype=None):
    """A device array of ones with a's shape (and dtype, unless given)."""
    return full(a.shape, 1, a.dtype if dtype is None else dtype)


from . import cuda, kernels  # noqa: E402  (they use the names above)

__all__ = [
    "CudaError", "Device", "DeviceArray", "NoDeviceError", "OutOfMemoryError",
    "add", "add_one", "asarray", "asnumpy", "cuda", "empty", "empty_like", "full",
    "kernels", "matmul", "ones", "ones_like", "zeros", "zeros_like",
]
