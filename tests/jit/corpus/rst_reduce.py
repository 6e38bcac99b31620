# From NVIDIA/numba-cuda, docs/source/user/reduction.rst at commit b18b944b2f88a4e840424e49a1b0d29488263b40,
# lines 12-22 and 26 (the decorator, then the lambda).
# BSD-2-Clause: see LICENSE.numba-cuda beside this file. Changed: the import
# lines only (`from numba import cuda` -> `from pygpu import cuda`, numba.cuda.x ->
# pygpu.cuda.x).
# ruff: noqa
import numpy
from pygpu import cuda

@cuda.reduce
def sum_reduce(a, b):
    return a + b

A = (numpy.arange(1234, dtype=numpy.float64)) + 1
expect = A.sum()      # NumPy sum reduction
got = sum_reduce(A)   # cuda sum reduction
assert expect == got

sum_reduce = cuda.reduce(lambda a, b: a + b)
