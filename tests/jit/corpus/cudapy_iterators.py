# From NVIDIA/numba-cuda, numba_cuda/numba/cuda/tests/cudapy/test_iterators.py at commit b18b944b2f88a4e840424e49a1b0d29488263b40,
# lines 4 and 7 (imports), 12-28, 42-56, 60-76, 80-96 (the kernels of TestIterators, dedented); without the unittest harness.
# BSD-2-Clause: see LICENSE.numba-cuda beside this file. Changed: the import
# lines only (`from numba import cuda` -> `from pygpu import cuda`, numba.cuda.x ->
# pygpu.cuda.x).
# ruff: noqa
from pygpu import cuda

import numpy as np

@cuda.jit
def enumerator(x, error):
    count = 0

    for i, v in enumerate(x):
        if count != i:
            error[0] = 1
        if v != x[i]:
            error[0] = 2

        count += 1

    if count != len(x):
        error[0] = 3

x = np.asarray((10, 9, 8, 7, 6))
error = np.zeros(1, dtype=np.int32)

@cuda.jit
def zipper(x, y, error):
    i = 0

    for xv, yv in zip(x, y):
        if xv != x[i]:
            error[0] = 1
        if yv != y[i]:
            error[0] = 2

        i += 1

    if i != len(x):
        error[0] = 3


@cuda.jit
def enumerator_zipper(x, y, error):
    count = 0

    for i, (xv, yv) in enumerate(zip(x, y)):
        if i != count:
            error[0] = 1
        if xv != x[i]:
            error[0] = 2
        if yv != y[i]:
            error[0] = 3

        count += 1

    if count != len(x):
        error[0] = 4


@cuda.jit
def zipper_enumerator(x, y, error):
    count = 0

    for (i, xv), yv in zip(enumerate(x), y):
        if i != count:
            error[0] = 1
        if xv != x[i]:
            error[0] = 2
        if yv != y[i]:
            error[0] = 3

        count += 1

    if count != len(x):
        error[0] = 4

