# From NVIDIA/numba-cuda, docs/source/user/cudapysupported.rst at commit b18b944b2f88a4e840424e49a1b0d29488263b40,
# lines 85-89 (the import line added).
# BSD-2-Clause: see LICENSE.numba-cuda beside this file. Changed: the import
# lines only (`from numba import cuda` -> `from pygpu import cuda`, numba.cuda.x ->
# pygpu.cuda.x).
# ruff: noqa
from pygpu import cuda


@cuda.jit("int64(int64)", device=True)
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)
