# From NVIDIA/numba-cuda, numba_cuda/numba/cuda/tests/doc_examples/test_globals.py at commit b18b944b2f88a4e840424e49a1b0d29488263b40,
# test_ex_globals_constant_capture: the text between its markers.
# BSD-2-Clause: see LICENSE.numba-cuda beside this file. Changed: the import
# lines only (`from numba import cuda` -> `from pygpu import cuda`, numba.cuda.x ->
# pygpu.cuda.x).
# ruff: noqa
import numpy as np
from pygpu import cuda

TAX_RATE = 0.08
PRICES = np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float64)

@cuda.jit
def compute_totals(quantities, totals):
    i = cuda.grid(1)
    if i < totals.size:
        totals[i] = quantities[i] * PRICES[i] * (1 + TAX_RATE)

d_quantities = cuda.to_device(
    np.array([1, 2, 3, 4, 5], dtype=np.float64)
)
d_totals = cuda.device_array(5, dtype=np.float64)

# First kernel call - compiles and captures values
compute_totals[1, 32](d_quantities, d_totals)
print("Value of d_totals:", d_totals.copy_to_host())

# These modifications have no effect on subsequent kernel calls
TAX_RATE = 0.10  # noqa: F841
PRICES[:] = [20.0, 50.0, 10.0, 30.0, 60.0]

# Second kernel call still uses the original values
compute_totals[1, 32](d_quantities, d_totals)
print("Value of d_totals:", d_totals.copy_to_host())
