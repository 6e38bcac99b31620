"""cuda.reduce: a reduction by a binary function, as Numba's
(numba.cuda.Reduce): the function becomes a device function, and a kernel
written with @cuda.jit applies it, a grid-stride pass per thread, then a
tree in shared memory per block, then again over the blocks' results.

    @cuda.reduce
    def sum_reduce(a, b):
        return a + b

    total = sum_reduce(A)   # A: a 1-d NumPy or device array
"""

import numpy as np

from .. import _core
from . import device as cuda
from .dispatcher import Dispatcher, jit

_THREADS = 256
_MAX_BLOCKS = 64


def _reduce_kernel(op):
    @jit
    def reduce_pass(src, n, dst, init, use_init):
        sh = cuda.shared.array(256, src.dtype)
        t = cuda.threadIdx.x
        b = cuda.blockIdx.x
        stride = cuda.gridDim.x * 256
        i = b * 256 + t
        if i < n:
            acc = src[i]
            j = i + stride
            while j < n:
                acc = op(acc, src[j])
                j += stride
            sh[t] = acc
        cuda.syncthreads()
        m = min(256, n - b * 256)
        s = 1
        while s < m:
            if t % (2 * s) == 0 and t + s < m:
                sh[t] = op(sh[t], sh[t + s])
            s *= 2
            cuda.syncthreads()
        if t == 0:
            r = sh[0]
            if use_init and b == 0:
                r = op(r, init)
            dst[b] = r
    return reduce_pass


class Reduce:
    """A reduction by `functor(a, b)` (associative and commutative), as
    Numba's cuda.Reduce: `Reduce(f)(arr, size=None, res=None, init=0,
    stream=0)` gives f folded over arr's first `size` elements and init."""

    def __init__(self, functor):
        if isinstance(functor, Dispatcher):
            functor = functor.py_func
        self._functor = functor
        self._op = Dispatcher(functor, device=True)
        self._kernel = _reduce_kernel(self._op)
        self.__name__ = getattr(functor, "__name__", "reduce")
        self.__doc__ = functor.__doc__

    def __repr__(self):
        return f"<pygpu.cuda.reduce {self.__name__}>"

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        if arr.ndim != 1:
            raise TypeError(f"cuda.reduce takes a 1-d array, not {arr.ndim}-d")
        n = arr.shape[0] if size is None else int(size)
        if not 0 <= n <= arr.shape[0]:
            raise ValueError(f"cuda.reduce: size {n} is outside the array's 0 to "
                             f"{arr.shape[0]} elements")
        init = np.dtype(arr.dtype).type(init)
        if n == 0:
            if res is not None:
                res[:1].copy_to_device(np.array([init]))
                return None
            return init
        src = arr if isinstance(arr, _core.DeviceArray) else _core.to_device(
            np.ascontiguousarray(arr))
        first = True
        while True:
            blocks = min(-(-n // _THREADS), _MAX_BLOCKS)
            dst = _core.empty(blocks, src.dtype)
            self._kernel[blocks, _THREADS, stream](src, n, dst, init, first)
            first = False
            if blocks == 1:
                break
            src, n = dst, blocks
        if res is not None:
            res[:1].copy_to_device(dst)
            return None
        return dst.copy_to_host()[0]


def reduce(functor):
    """@cuda.reduce: a Reduce of the decorated binary function."""
    return Reduce(functor)
