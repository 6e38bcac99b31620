# From NVIDIA/numba-cuda, docs/source/user/random.rst at commit b18b944b2f88a4e840424e49a1b0d29488263b40,
# lines 42-70.
# BSD-2-Clause: see LICENSE.numba-cuda beside this file. Changed: the import
# lines only (`from numba import cuda` -> `from pygpu import cuda`, numba.cuda.x ->
# pygpu.cuda.x).
# ruff: noqa
from __future__ import print_function, absolute_import

from pygpu import cuda
from pygpu.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32
import numpy as np

@cuda.jit
def compute_pi(rng_states, iterations, out):
    """Find the maximum value in values and store in result[0]"""
    thread_id = cuda.grid(1)

    # Compute pi by drawing random (x, y) points and finding what
    # fraction lie inside a unit circle
    inside = 0
    for i in range(iterations):
        x = xoroshiro128p_uniform_float32(rng_states, thread_id)
        y = xoroshiro128p_uniform_float32(rng_states, thread_id)
        if x**2 + y**2 <= 1.0:
            inside += 1

    out[thread_id] = 4.0 * inside / iterations

threads_per_block = 64
blocks = 24
rng_states = create_xoroshiro128p_states(threads_per_block * blocks, seed=1)
out = np.zeros(threads_per_block * blocks, dtype=np.float32)

compute_pi[blocks, threads_per_block](rng_states, 10000, out)
print('pi:', out.mean())
