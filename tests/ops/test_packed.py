"""The generated contiguous kernels of 4-byte operands read and write 16 bytes
at once where every array is 16-byte aligned (codegen._packed_body), and one
element at a time elsewhere: both paths, and the tail after the last whole
pack, against NumPy."""
import numpy as np
import pytest

import pygpu


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_every_offset_and_tail_of_the_packed_path(dtype):
    rng = np.random.default_rng(1)
    base = (rng.standard_normal(1100) * 100).astype(dtype)
    other = (rng.standard_normal(1100) * 100).astype(dtype)
    other[other == 0] = 1
    d, e = pygpu.asarray(base), pygpu.asarray(other)
    for start in range(4):  # 0: aligned (packed); 1-3: 4, 8, 12 bytes on (scalar)
        for n in (0, 1, 3, 4, 5, 8, 9, 15, 1001, 1024):
            x, y = base[start:start + n], other[start:start + n]
            dx, dy = d[start:start + n], e[start:start + n]
            np.testing.assert_array_equal((dx + dy).copy_to_host(), x + y)
            np.testing.assert_array_equal((dx * 3).copy_to_host(), x * dtype(3))
            q, r = np.divmod(dx, dy)
            wq, wr = np.divmod(x, y)
            np.testing.assert_array_equal(q.copy_to_host(), wq)
            np.testing.assert_array_equal(r.copy_to_host(), wr)
            if dtype == np.float32:
                np.testing.assert_allclose(np.sin(dx).copy_to_host(), np.sin(x), rtol=2e-6,
                                           atol=1e-6)
                m, ex = np.frexp(dx)  # two outputs of 4 bytes
                wm, we = np.frexp(x)
                np.testing.assert_array_equal(m.copy_to_host(), wm)
                np.testing.assert_array_equal(ex.copy_to_host(), we)
            out = pygpu.empty(n + 1, dtype)[1:]  # an output 4 bytes on: the scalar path
            np.add(dx, dy, out=out)
            np.testing.assert_array_equal(out.copy_to_host(), x + y)


def test_in_place_on_the_packed_path():
    x = np.arange(1027, dtype=np.float32)
    d = pygpu.asarray(x)
    d += 1  # reads and writes the same packs
    d *= d
    np.testing.assert_array_equal(d.copy_to_host(), (x + 1) * (x + 1))


def test_elementwise_kernel_sees_i_on_the_packed_path():
    k = pygpu.ElementwiseKernel("float32 x", "float32 y", "y = x + i", "plus_index")
    x = np.ones(1030, np.float32)
    np.testing.assert_array_equal(k(pygpu.asarray(x)).copy_to_host(), x + np.arange(1030))
