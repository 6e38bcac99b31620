"""The seeds' and Numba's documentation's kernels (kernels_numba_docs.py),
unchanged but for the import line, against NumPy; and the same kernels
through NVRTC, where it loads."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import pygpu
from pygpu import cuda

sys.path.insert(0, str(Path(__file__).parent))
import kernels_numba_docs as K  # noqa: E402
from conftest import run_with_nvrtc  # noqa: E402


def test_add_one_kernel_from_the_issue_adds_one_to_device_and_host_arrays():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((19, 37)).astype(np.float32)
    d = cuda.to_device(a)
    blocks, threads = (2, 3), (16, 16)
    K.add_one_kernel[blocks, threads](d)
    np.testing.assert_array_equal(d.copy_to_host(), a + 1)
    h = a.copy()
    K.add_one_kernel[blocks, threads](h)  # a NumPy array: copied there and back
    np.testing.assert_array_equal(h, a + 1)


def test_matmul_and_shared_memory_fast_matmul_match_numpy():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((37, 21)).astype(np.float32)
    b = rng.standard_normal((21, 29)).astype(np.float32)
    ref = a.astype(np.float64) @ b
    c = np.zeros((37, 29), np.float32)
    K.matmul[(3, 2), (16, 16)](a, b, c)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)
    # fast_matmul: the grid is square and covers both A's rows and B's columns
    da, db = cuda.to_device(a), cuda.to_device(b)
    dc = pygpu.zeros((37, 29), np.float32)
    K.fast_matmul[(3, 3), (K.TPB, K.TPB)](da, db, dc)
    np.testing.assert_allclose(dc.copy_to_host(), ref, rtol=1e-5, atol=1e-5)


def test_atomic_histogram_counts_as_numbas_truncating_bins():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(5000)
    out = np.zeros(16, np.int32)
    K.histogram[4, 64](x, -2.0, 2.0, out)
    bins = ((x - -2.0) / (4.0 / 16)).astype(np.int32)  # np.int32() truncates
    ref = np.bincount(bins[(bins >= 0) & (bins < 16)], minlength=16)
    np.testing.assert_array_equal(out, ref)


def test_block_reduction_with_a_warp_shuffle_device_function_sums():
    rng = np.random.default_rng(4)
    x = rng.standard_normal(1000)
    out = pygpu.zeros(1, np.float64)
    K.block_sum[(x.size + K.BLOCK - 1) // K.BLOCK, K.BLOCK](cuda.to_device(x), out)
    np.testing.assert_allclose(out.copy_to_host()[0], x.sum(), rtol=1e-12)


def test_device_function_returning_a_tuple_fills_two_arrays():
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal(50), rng.standard_normal(50)
    r, theta = np.zeros(50), np.zeros(50)
    K.to_polar.forall(50)(x, y, r, theta)
    np.testing.assert_allclose(r, np.hypot(x, y), rtol=1e-14)
    np.testing.assert_allclose(theta, np.arctan2(y, x), rtol=1e-14)


def _mandel(x, y, max_iters):
    c, z = complex(x, y), 0.0j
    for i in range(max_iters):
        z = z * z + c
        if (z.real * z.real + z.imag * z.imag) >= 4:
            return i
    return max_iters


def test_mandelbrot_with_complex_numbers_in_a_device_function_matches_python():
    image = np.zeros((24, 32), np.uint8)
    K.mandel_kernel[(2, 2), (8, 8)](-2.0, 1.0, -1.0, 1.0, image, 20)
    ref = [[_mandel(-2.0 + x * 3.0 / 32, -1.0 + y * 2.0 / 24, 20) for x in range(32)]
           for y in range(24)]
    np.testing.assert_array_equal(image, ref)


def test_cuda_reduce_folds_host_and_device_arrays_with_size_init_and_res():
    a = np.arange(1, 1235, dtype=np.float64)
    assert K.sum_reduce(a) == a.sum()
    assert K.sum_reduce(a, size=10, init=5) == a[:10].sum() + 5
    assert K.sum_reduce(a[:0], init=3) == 3
    res = pygpu.zeros(1)
    assert K.sum_reduce(cuda.to_device(a), res=res) is None
    assert res.copy_to_host()[0] == a.sum()
    x = np.random.default_rng(6).integers(-1000, 1000, 70000).astype(np.int32)
    got = K.max_reduce(cuda.to_device(x))
    assert got == x.max() and got.dtype == np.int32
    with pytest.raises(TypeError, match="1-d array"):
        K.sum_reduce(np.zeros((2, 2)))


# Numba 0.68's numba.cuda.random for seed 1 (its simulator gave these): the
# first three states, then one uniform float32 and float64 per thread
NUMBA_STATES = [(10451216379200822465, 10451216379200822465),
                (8341117667364343960, 7824662623250379246),
                (809817624983272012, 15258973161149853818)]
NUMBA_UNIFORM32 = [0.13312314, 0.87634873, 0.8710909, 0.93648076, 0.6059929]


def test_xoroshiro_states_and_draws_are_numbas_for_the_same_seed():
    states = cuda.random.create_xoroshiro128p_states(5, seed=1)
    assert states.shape == (5, 2) and states.dtype == np.uint64
    assert [tuple(int(v) for v in s) for s in states.copy_to_host()[:3]] == NUMBA_STATES
    u = np.zeros(5, np.float32)
    _uniform[1, 5](states, u)
    np.testing.assert_array_equal(u, np.array(NUMBA_UNIFORM32, np.float32))


@cuda.jit
def _uniform(states, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = cuda.random.xoroshiro128p_uniform_float32(states, i)


def test_monte_carlo_pi_and_normals_have_the_right_statistics():
    n = 256
    states = cuda.random.create_xoroshiro128p_states(n, seed=7)
    out = np.zeros(n, np.float32)
    K.compute_pi[4, 64](states, 200, out)
    assert abs(out.mean() - math.pi) < 0.05
    z = np.zeros(n)
    K.normals[4, 64](states, z)
    assert abs(z.mean()) < 0.25 and 0.8 < z.std() < 1.2
    # a different seed, different numbers; the same seed, the same
    other = np.zeros(n)
    K.normals[4, 64](cuda.random.create_xoroshiro128p_states(n, seed=8), other)
    assert not np.array_equal(z, other)


def test_many_states_jump_as_the_one_by_one_recurrence():
    from pygpu._jit import random as r
    many = r._states(40, seed=3, subsequence_start=2)
    z = r._splitmix64(3)
    s = (z, z)
    for _ in range(2):
        s = r._jump(*s)
    for i in range(40):
        assert tuple(int(v) for v in many[i]) == s
        s = r._jump(*s)


_NVRTC_SCRIPT = r"""
import sys
sys.path.insert(0, sys.argv[1])
import kernels_numba_docs as K
import test_jit_device as D
import test_jit_language as L
from pygpu.rawkernel import compile_cuda
for kernel, sig in [
    (L._views, "void(float64[:, :], float64[:, ::1])"),
    (L._half, "void(float16[::1], float16[::1], float16[::1])"),
    (L._complex, "void(complex64[::1], complex64[::1], complex64[:, ::1], float64[:, ::1])"),
    (D._atomics, "void(int64[::1], int64[::1], uint64[::1], float64[:, ::1], uint64[::1])"),
    (D._atomics, "void(int32[::1], int32[::1], uint32[::1], float32[:, ::1], uint32[::1])"),
    (D._warp, "void(float32[::1], float64[:, ::1])"),
    (D._memories, "void(float32[::1], float64[:, ::1])"),
    (D._checked, "void(float64[::1])"),
    (D._speak, "void(float64[::1])"),
]:
    image, log, _ = compile_cuda(kernel.inspect_cuda(sig), arch="sm_90")
    assert image[:4] == b"\x7fELF", kernel
    print(kernel.__name__, "ok")
sigs = {
    "add_one_kernel": "void(float32[:, ::1])",
    "matmul": "void(float32[:, ::1], float32[:, ::1], float64[:, ::1])",
    "fast_matmul": "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
    "histogram": "void(float64[::1], float64, float64, int32[::1])",
    "block_sum": "void(float64[::1], float64[::1])",
    "compute_pi": "void(uint64[:, ::1], int64, float32[::1])",
    "normals": "void(uint64[:, ::1], float64[::1])",
    "to_polar": "void(float64[:], float64[:], float64[:], float64[:])",
    "mandel_kernel": "void(float64, float64, float64, float64, uint8[:, ::1], int64)",
}
for name, sig in sigs.items():
    source = getattr(K, name).inspect_cuda(sig)
    image, log, _ = compile_cuda(source, arch="sm_90")
    assert image[:4] == b"\x7fELF", name
    print(name, "ok")
"""


def test_the_documentation_kernels_compile_through_nvrtc():
    out = run_with_nvrtc(_NVRTC_SCRIPT, str(Path(__file__).parent))
    assert out.count(" ok") == 18, out
