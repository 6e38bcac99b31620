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


def test_a_table_op_of_4_byte_operands_holds_its_code_once():
    """codegen._group_function: the contiguous kernel of a table op whose
    operands have 4 bytes calls one function of GROUP elements (its code
    once) from the packed path, the tail and the scalar path; 8-byte
    operands and a user's code stay inlined."""
    from pygpu._ops import codegen, table

    sin = table.OPS["sin"]
    src = codegen.render(sin, ((("f",), ("f",)),), ("c", "a"))
    assert src.count("pg::sin(") == 1 and src.count("__noinline__") == 1
    assert src.count("pg_sin__f4__f4__ca_g(a_") == 3  # packs, tail, scalar path
    src = codegen.render(sin, ((("d",), ("d",)),), ("c", "a"))
    assert "__noinline__" not in src
    fused = pygpu.fuse(lambda x: np.sin(x) * 2)  # fuse's kernels: inlined
    x = np.linspace(-3, 3, 1001, dtype=np.float32)
    np.testing.assert_allclose(fused(pygpu.asarray(x)).copy_to_host(), np.sin(x) * 2,
                               rtol=2e-6, atol=1e-6)
    assert "__noinline__" not in fused.source(pygpu.asarray(x))
    src = codegen.render(sin, ((("f",), ("f",)),), ("s", "a"))  # strided: one copy already
    assert src.count("pg::sin(") == 1 and "__noinline__" not in src


@pytest.mark.parametrize("start", range(4))
def test_scalars_before_and_after_on_every_path_of_a_group_function(start):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(1100) * 10).astype(np.float32)
    i = rng.integers(-50, 50, 1100).astype(np.int32)
    for n in (1, 3, 5, 9, 1001):
        dx, di = pygpu.asarray(x)[start:start + n], pygpu.asarray(i)[start:start + n]
        hx, hi = x[start:start + n], i[start:start + n]
        np.testing.assert_array_equal(np.subtract(np.float32(3), dx).copy_to_host(),
                                      np.float32(3) - hx)
        np.testing.assert_array_equal(np.power(dx, np.float32(2)).copy_to_host(), hx ** 2)
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(np.floor_divide(np.int32(7), di).copy_to_host(),
                                          np.floor_divide(np.int32(7), hi))
            np.testing.assert_array_equal(np.remainder(di, np.int32(0)).copy_to_host(),
                                          np.remainder(hi, np.int32(0)))
        np.testing.assert_allclose(np.arctan2(dx, np.float32(-1.5)).copy_to_host(),
                                   np.arctan2(hx, np.float32(-1.5)), rtol=2e-6, atol=1e-6)
