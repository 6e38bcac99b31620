# From NVIDIA/numba-cuda, numba_cuda/numba/cuda/tests/doc_examples/test_globals.py at commit b18b944b2f88a4e840424e49a1b0d29488263b40,
# test_ex_globals_device_array_capture: the text between its markers.
# BSD-2-Clause: see LICENSE.numba-cuda beside this file. Changed: the import
# lines only (`from numba import cuda` -> `from pygpu import cuda`, numba.cuda.x ->
# pygpu.cuda.x).
# ruff: noqa
import numpy as np
from pygpu import cuda

# Global device array - pointer is captured, not data
PRICES = cuda.to_device(
    np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float32)
)

@cuda.jit
def compute_totals(quantities, totals):
    i = cuda.grid(1)
    if i < totals.size:
        totals[i] = quantities[i] * PRICES[i]

d_quantities = cuda.to_device(
    np.array([1.0, 1.0, 1.0, 1.0, 1.0], dtype=np.float32)
)
d_totals = cuda.device_array(5, dtype=np.float32)

# First kernel call
compute_totals[1, 32](d_quantities, d_totals)
print(d_totals.copy_to_host())  # [10. 25.  5. 15. 30.]

# Mutate the device array in-place
PRICES.copy_to_device(
    np.array([20.0, 50.0, 10.0, 30.0, 60.0], dtype=np.float32)
)

# Second kernel call sees the updated values
compute_totals[1, 32](d_quantities, d_totals)
print(d_totals.copy_to_host())  # [20. 50. 10. 30. 60.]
