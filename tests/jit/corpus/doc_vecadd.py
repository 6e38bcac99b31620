# From NVIDIA/numba-cuda, numba_cuda/numba/cuda/tests/doc_examples/test_vecadd.py at commit b18b944b2f88a4e840424e49a1b0d29488263b40,
# test_ex_vecadd: the text between its ex_vecadd.import, .kernel, .allocate, .forall and .launch markers (docs/source/user/examples.rst shows it).
# BSD-2-Clause: see LICENSE.numba-cuda beside this file. Changed: the import
# lines only (`from numba import cuda` -> `from pygpu import cuda`, numba.cuda.x ->
# pygpu.cuda.x).
# ruff: noqa
import numpy as np
from pygpu import cuda
@cuda.jit
def f(a, b, c):
    # like threadIdx.x + (blockIdx.x * blockDim.x)
    tid = cuda.grid(1)
    size = len(c)

    if tid < size:
        c[tid] = a[tid] + b[tid]

N = 100000
a = cuda.to_device(np.random.random(N))
b = cuda.to_device(np.random.random(N))
c = cuda.device_array_like(a)
f.forall(len(a))(a, b, c)
print(c.copy_to_host())
# Enough threads per block for several warps per block
nthreads = 256
# Enough blocks to cover the entire vector depending on its length
nblocks = (len(a) // nthreads) + 1
f[nblocks, nthreads](a, b, c)
print(c.copy_to_host())
