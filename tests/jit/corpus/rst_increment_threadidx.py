# From NVIDIA/numba-cuda, docs/source/user/kernels.rst at commit b18b944b2f88a4e840424e49a1b0d29488263b40,
# lines 155-166 (the code block; the import line added: the page imports cuda earlier).
# BSD-2-Clause: see LICENSE.numba-cuda beside this file. Changed: the import
# lines only (`from numba import cuda` -> `from pygpu import cuda`, numba.cuda.x ->
# pygpu.cuda.x).
# ruff: noqa
from pygpu import cuda


@cuda.jit
def increment_by_one(an_array):
    # Thread id in a 1D block
    tx = cuda.threadIdx.x
    # Block id in a 1D grid
    ty = cuda.blockIdx.x
    # Block width, i.e. number of threads per block
    bw = cuda.blockDim.x
    # Compute flattened index inside the array
    pos = tx + ty * bw
    if pos < an_array.size:  # Check array boundaries
        an_array[pos] += 1
