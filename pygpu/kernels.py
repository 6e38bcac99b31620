"""pygpu's prebuilt CUDA kernels, launched the way Numba's are:

    kernels.add[blocks_per_grid, threads_per_block](a, b, out)   # out = a + b
    kernels.add_one[grid, block](A)                              # A += 1
    kernels.matmul_naive[grid, block](A, B, C)                   # C = A @ B
    kernels.matmul_shared[grid, block](A, B, C)                  # block (16, 16) or (32, 32)
    kernels.matmul_tiled[grid, 256](A, B, C)                     # 128 x 128 tiles of C

grid and block are ints or tuples of up to 3 ints, x first; `[grid, block,
stream]` also works. Every kernel computes the whole result for any valid
configuration (grid-stride loops); the configuration changes only the speed.
The block is used as given; the grid is the most blocks launched: those
that would have no work are not (add and add_one give each thread at least
16 elements, so a grid of a thread an element runs a sixteenth of its
blocks). RawKernels launch exactly the configuration given.
`pygpu.cuda.launch_config(shape, threads)` gives a good one. The arguments are
checked before launching, and a mistake raises TypeError or ValueError.
"""

import copyreg

from ._core import kernels as _table

# One name per entry of csrc/kernels/kernels.def, the one list of prebuilt kernels.
globals().update(_table)


def _kernel(name):
    return _table[name]


# A kernel pickles as its name (a Dask task that launches one travels to workers).
copyreg.pickle(type(_table["add"]), lambda k: (_kernel, (k.__name__,)))

__all__ = list(_table)
