# From NVIDIA/numba-cuda, numba_cuda/numba/cuda/tests/doc_examples/test_cpointer.py at commit b18b944b2f88a4e840424e49a1b0d29488263b40,
# test_ex_cpointer: the text between its markers.
# BSD-2-Clause: see LICENSE.numba-cuda beside this file. Changed: the import
# lines only (`from numba import cuda` -> `from pygpu import cuda`, numba.cuda.x ->
# pygpu.cuda.x).
# ruff: noqa
import numpy as np
from pygpu import cuda
from pygpu.cuda import types

# The first kernel argument is a pointer to a uint8 array.
# The second argument holds the length as a uint32.
# The return type of a kernel is always void.
sig = types.void(types.CPointer(types.uint8), types.uint32)
@cuda.jit(sig)
def add_one(x, n):
    i = cuda.grid(1)
    if i < n:
        x[i] += 1

x = cuda.to_device(np.arange(10, dtype=np.uint8))

# Print initial values of x
print(x.copy_to_host())  # [0 1 2 3 4 5 6 7 8 9]

# Obtain a pointer to the data from from the CUDA Array Interface
x_ptr = x.__cuda_array_interface__["data"][0]
x_len = len(x)

# Launch the kernel with the pointer and length
add_one[1, 32](x_ptr, x_len)

# Demonstrate that the data was updated by the kernel
print(x.copy_to_host())  # [ 1  2  3  4  5  6  7  8  9 10]
