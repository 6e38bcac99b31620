# From NVIDIA/numba-cuda, docs/source/user/kernels.rst at commit b18b944b2f88a4e840424e49a1b0d29488263b40,
# lines 242-246 (the import line added).
# BSD-2-Clause: see LICENSE.numba-cuda beside this file. Changed: the import
# lines only (`from numba import cuda` -> `from pygpu import cuda`, numba.cuda.x ->
# pygpu.cuda.x).
# ruff: noqa
from pygpu import cuda


@cuda.jit
def increment_a_2D_array(an_array):
    x, y = cuda.grid(2)
    if x < an_array.shape[0] and y < an_array.shape[1]:
       an_array[x, y] += 1
