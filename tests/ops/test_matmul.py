"""`@` and pygpu.matmul follow numpy.matmul: every dtype (bool and the
integers bit for bit, wrapping as NumPy's; floats and complex),
1-D operands, batches broadcast over the leading axes, promotion, out=, and
NumPy's own errors. On a GPU with cuBLAS the product runs there (the tests
marked gpu check that it does and that its answers are NumPy's); on the
simulator and without cuBLAS, pygpu's kernels give the same answers. The
cuBLAS loader itself (rt_cublas.c) is checked against the toolkit's library
and header where there are ones, which needs no GPU."""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import CSRC_INCLUDES, GPU_PRESENT, ON_SIMULATOR, ROOT, random_array

import pygpu
from pygpu import cuda

RT_CUBLAS = ROOT / "csrc" / "runtime" / "rt_cublas.c"
INCLUDES = [f"-I{d}" for d in CSRC_INCLUDES]
DTYPES = [np.float16, np.float32, np.float64, np.complex64, np.complex128]
# ||got - A @ B|| / (||A|| ||B||) for inputs of each dtype: the rounding of a
# dot product (float16 adds in float32 and rounds once, as NumPy does)
TOL = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-14, np.complex64: 2e-6,
       np.complex128: 1e-14}
USES_CUBLAS = not ON_SIMULATOR and pygpu.blas.cublas_version() is not None


def product_error(got, a, b):
    """||got - a @ b|| / (||a|| ||b||), computed in complex128."""
    a = np.asarray(a, dtype=np.complex128)
    b = np.asarray(b, dtype=np.complex128)
    ref = np.matmul(a, b)
    scale = np.linalg.norm(a) * np.linalg.norm(b)
    return np.linalg.norm(np.asarray(got, dtype=np.complex128) - ref) / (scale or 1.0)


def check(got, a, b, dtype=None):
    """got (a DeviceArray) is numpy.matmul(a, b): shape, dtype and values."""
    expected = np.matmul(a, b)
    h = got.copy_to_host()
    assert h.shape == expected.shape
    assert h.dtype == expected.dtype
    assert product_error(h, a, b) <= TOL[np.dtype(dtype or h.dtype).type]


SHAPES = [
    ((5,), (5,)),                # 1-D @ 1-D: a 0-d result
    ((5,), (5, 3)),              # 1-D @ 2-D
    ((4, 5), (5,)),              # 2-D @ 1-D
    ((1, 1), (1, 1)),
    ((7, 5), (5, 9)),
    ((33, 17), (17, 65)),        # not multiples of any tile
    ((130, 40), (40, 129)),      # pygpu's tiled kernel on the simulator
    ((2, 1, 3, 4), (5, 4, 2)),   # batches broadcast: (2, 5, 3, 2)
    ((4, 6, 5), (5, 3)),         # a batch of A times one B
    ((6, 5), (3, 5, 2)),         # one A times a batch of B
    ((5,), (2, 5, 3)),           # 1-D @ batch
    ((2, 3, 4), (4,)),           # batch @ 1-D
    ((3, 1, 4, 6), (1, 2, 6, 5)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("sa, sb", SHAPES, ids=str)
def test_products_are_numpys_in_every_dtype(rng, dtype, sa, sb):
    a, b = random_array(rng, sa, dtype), random_array(rng, sb, dtype)
    da, db = pygpu.asarray(a), pygpu.asarray(b)
    check(da @ db, a, b)
    check(pygpu.matmul(da, db), a, b)


def test_one_d_times_one_d_is_a_0d_array(rng):
    a, b = random_array(rng, 50, np.float64), random_array(rng, 50, np.float64)
    r = pygpu.asarray(a) @ pygpu.asarray(b)
    assert isinstance(r, pygpu.DeviceArray) and r.shape == () and r.ndim == 0
    assert float(r.copy_to_host()) == pytest.approx(float(a @ b), rel=1e-14)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_views_are_read_as_they_are(rng, dtype):
    # transposed views (read transposed), slices with steps, reversed axes,
    # broadcast-free batches of views: each gives NumPy's answer
    a = random_array(rng, (3, 24, 20), dtype)
    b = random_array(rng, (3, 24, 18), dtype)
    da, db = pygpu.asarray(a), pygpu.asarray(b)
    check(da[0].T @ db[1], a[0].T, b[1])
    check(da.transpose(0, 2, 1) @ db, a.transpose(0, 2, 1), b)
    check(da[:, ::2, ::3] @ db[:, ::3, 1::2][:, :7], a[:, ::2, ::3], b[:, ::3, 1::2][:, :7])
    check(da[:, ::-1] @ db[:, :20, ::-1], a[:, ::-1], b[:, :20, ::-1])
    check(da[1, :, 0] @ db[2], a[1, :, 0], b[2])      # a strided vector
    check(da[2].T @ db[0, :, 0], a[2].T, b[0, :, 0])
    check(da[:, :, :18] @ db.transpose(0, 2, 1)[:, :, :18].transpose(0, 2, 1)[:, :18],
          a[:, :, :18], b[:, :18])


def test_empty_and_zero_inner_dimensions(rng):
    for sa, sb in [((3, 0), (0, 4)), ((0,), (0,)), ((2, 3, 0), (0, 5)), ((0, 3), (3, 2)),
                   ((3, 2), (2, 0)), ((0, 3, 2), (2, 4)), ((4, 0, 3), (1, 3, 2))]:
        for dtype in DTYPES:
            a, b = random_array(rng, sa, dtype), random_array(rng, sb, dtype)
            got = pygpu.asarray(a) @ pygpu.asarray(b)
            expected = np.matmul(a, b)
            assert got.shape == expected.shape and got.dtype == expected.dtype
            np.testing.assert_array_equal(got.copy_to_host(), expected)


def test_zero_inner_dimension_overwrites_out():
    out = pygpu.full((3, 4), 5.0)
    assert pygpu.matmul(pygpu.zeros((3, 0)), pygpu.zeros((0, 4)), out=out) is out
    np.testing.assert_array_equal(out.copy_to_host(), np.zeros((3, 4)))


@pytest.mark.parametrize("ta, tb", [(np.float32, np.float64), (np.float16, np.float32),
                                    (np.int32, np.float32), (np.int8, np.float16),
                                    (np.float64, np.complex64), (np.float16, np.complex64),
                                    (np.uint8, np.complex128), (np.bool_, np.float32)])
def test_mixed_dtypes_promote_as_numpy_does(rng, ta, tb):
    a, b = random_array(rng, (6, 7), ta), random_array(rng, (7, 5), tb)
    got = pygpu.asarray(a) @ pygpu.asarray(b)
    assert got.dtype == np.matmul(a, b).dtype
    check(got, a, b)
    check(pygpu.asarray(b.T) @ pygpu.asarray(a.T), b.T, a.T)


INT_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
              np.uint32, np.uint64]


def int_array(rng, shape, dtype):
    """Integers over the dtype's whole range (so that sums wrap), or random bools."""
    if dtype is np.bool_:
        return rng.random(shape) < 0.3
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def check_exact(got, expected):
    h = got.copy_to_host()
    assert h.shape == expected.shape and h.dtype == expected.dtype
    np.testing.assert_array_equal(h, expected)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("sa, sb", [*SHAPES, ((33, 65), (65, 17))], ids=str)
def test_integer_and_bool_products_are_numpys_bit_for_bit(rng, dtype, sa, sb):
    # integer sums wrap as NumPy's; bool is the or of ands
    a, b = int_array(rng, sa, dtype), int_array(rng, sb, dtype)
    da, db = pygpu.asarray(a), pygpu.asarray(b)
    check_exact(da @ db, np.matmul(a, b))
    check_exact(pygpu.matmul(da, db), np.matmul(a, b))


def test_integer_sums_wrap_as_numpys():
    for dtype, v in [(np.int8, 127), (np.int8, -128), (np.uint8, 255), (np.int32, 2**31 - 1),
                     (np.int64, 2**63 - 1), (np.uint64, 2**64 - 1), (np.int16, -(2**15))]:
        a, b = np.full((3, 300), v, dtype), np.full((300, 2), v, dtype)
        with np.errstate(all="ignore"):
            want = a @ b
        assert want[0, 0] != 300 * int(v) * int(v)  # it did wrap
        check_exact(pygpu.asarray(a) @ pygpu.asarray(b), want)
    t = np.zeros((4, 40), bool)
    t[2, 39] = True
    u = np.zeros((40, 3), bool)
    u[39, 1] = True
    check_exact(pygpu.asarray(t) @ pygpu.asarray(u), t @ u)   # one True among 40
    assert (t @ u).sum() == 1


@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.uint64], ids=lambda d: np.dtype(d).name)
def test_integer_views_are_read_as_they_are(rng, dtype):
    a, b = int_array(rng, (3, 24, 20), dtype), int_array(rng, (3, 24, 18), dtype)
    da, db = pygpu.asarray(a), pygpu.asarray(b)
    check_exact(da[0].T @ db[1], a[0].T @ b[1])
    check_exact(da.transpose(0, 2, 1) @ db, a.transpose(0, 2, 1) @ b)
    check_exact(da[:, ::2, ::3] @ db[:, ::3, 1::2][:, :7], a[:, ::2, ::3] @ b[:, ::3, 1::2][:, :7])
    check_exact(da[:, ::-1] @ db[:, :20, ::-1], a[:, ::-1] @ b[:, :20, ::-1])
    check_exact(da[1, :, 0] @ db[2], a[1, :, 0] @ b[2])
    check_exact(da[:1] @ db[:, :20], a[:1] @ b[:, :20])              # a broadcast batch


@pytest.mark.parametrize("ta, tb", [(np.int8, np.uint8), (np.bool_, np.int8),
                                    (np.uint32, np.int32), (np.bool_, np.uint16),
                                    (np.int16, np.int64), (np.uint8, np.uint64)])
def test_mixed_integer_dtypes_promote_as_numpy_does(rng, ta, tb):
    a, b = int_array(rng, (6, 7), ta), int_array(rng, (7, 5), tb)
    check_exact(pygpu.asarray(a) @ pygpu.asarray(b), np.matmul(a, b))
    check_exact(pygpu.asarray(b.T) @ pygpu.asarray(a.T), np.matmul(b.T, a.T))
    a, b = rng.integers(-50, 50, (4, 3)), rng.integers(0, 50, (3, 2), dtype=np.uint64)
    check_exact(pygpu.asarray(a) @ pygpu.asarray(b), a @ b)           # int64 @ uint64: float64


def test_empty_integer_and_bool_products_are_zeros_and_false(rng):
    for dtype in INT_DTYPES:
        for sa, sb in [((3, 0), (0, 4)), ((0,), (0,)), ((0, 3), (3, 2)), ((2, 3, 0), (0, 5))]:
            a, b = int_array(rng, sa, dtype), int_array(rng, sb, dtype)
            check_exact(pygpu.asarray(a) @ pygpu.asarray(b), np.matmul(a, b))


def test_integer_products_into_out_and_never_to_cublas(rng):
    a, b = int_array(rng, (2, 5, 6), np.int32), int_array(rng, (6, 4), np.int32)
    out = pygpu.full((2, 5, 4), 7, dtype=np.int64)
    assert pygpu.matmul(pygpu.asarray(a), pygpu.asarray(b), out=out) is out
    check_exact(out, np.matmul(a, b).astype(np.int64))
    out = pygpu.zeros((2, 4, 5), dtype=np.int32)
    pygpu.matmul(pygpu.asarray(a), pygpu.asarray(b), out=out.transpose(0, 2, 1))
    check_exact(out, np.matmul(a, b).transpose(0, 2, 1))
    # the plan for cuBLAS: ints make no BLAS call, and the product is made
    calls, _, _, c = pygpu._core._matmul_plan(pygpu.asarray(a), pygpu.asarray(b))
    assert calls == []
    check_exact(c, np.matmul(a, b))
    d = pygpu.zeros((3, 3), dtype=np.int32)
    with pytest.raises(TypeError, match=r"method='naive' runs a kernel for float32 and "
                                        r"float64; the product here is int32"):
        pygpu.matmul(d, d, method="naive")


def test_bfloat16_is_refused_naming_it():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    with pytest.raises(TypeError, match="bfloat16"):
        pygpu.asarray(np.ones((2, 2), dtype=ml_dtypes.bfloat16))


NUMPY_ERRORS = [
    ((), (3,)), ((3,), ()), ((3,), (4,)), ((2, 3), (4, 2)), ((3,), (2, 4)),
    ((2, 3, 4), (5, 4, 2)), ((2, 3), (2, 3, 4, 5)), ((4, 2, 3), (3, 3, 2)),
]


@pytest.mark.parametrize("sa, sb", NUMPY_ERRORS, ids=str)
def test_shape_errors_are_numpys(sa, sb):
    with pytest.raises(ValueError) as expected:
        np.matmul(np.zeros(sa), np.zeros(sb))
    with pytest.raises(ValueError) as got:
        pygpu.zeros(sa) @ pygpu.zeros(sb)
    assert str(got.value) == str(expected.value)


def test_out_with_more_batch_axes_gets_the_product_in_each(rng):
    # as in NumPy: the operands broadcast to out's batch axes
    for sa, sb, so in [((3,), (3,), (1,)), ((3,), (3,), (2,)), ((2, 3), (3, 2), (1, 2, 2)),
                       ((2, 3), (3, 2), (4, 2, 2)), ((1, 2, 3), (5, 3, 4), (2, 5, 2, 4))]:
        a, b = random_array(rng, sa, np.float64), random_array(rng, sb, np.float64)
        expected = np.matmul(a, b, out=np.zeros(so))
        out = pygpu.zeros(so)
        assert pygpu.matmul(pygpu.asarray(a), pygpu.asarray(b), out=out) is out
        np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-14, atol=1e-14)


def test_out_of_the_wrong_shape_gives_numpys_error():
    for sa, sb, so in [((2, 3), (3, 2), (3, 3)), ((2, 2, 3), (3, 2), (3, 2, 2)),
                       ((2, 3), (3, 2), (2, 2, 1)), ((2, 3), (3, 2), (2,)),
                       ((4, 2, 3), (3, 2), (2, 2, 2))]:
        with pytest.raises(ValueError) as expected:
            np.matmul(np.zeros(sa), np.zeros(sb), out=np.zeros(so))
        with pytest.raises(ValueError) as got:
            pygpu.matmul(pygpu.zeros(sa), pygpu.zeros(sb), out=pygpu.zeros(so))
        assert str(got.value) == str(expected.value)


def test_out_casts_as_numpy_does(rng):
    a, b = random_array(rng, (2, 6, 7), np.float32), random_array(rng, (7, 5), np.float32)
    da, db = pygpu.asarray(a), pygpu.asarray(b)
    out64 = pygpu.zeros((2, 6, 5), dtype=np.float64)      # float32 product, stored wider
    assert pygpu.matmul(da, db, out=out64) is out64
    assert product_error(out64.copy_to_host(), a, b) <= TOL[np.float32]
    out16 = pygpu.zeros((2, 6, 5), dtype=np.float16)      # same kind: allowed
    pygpu.matmul(da, db, out=out16)
    np.testing.assert_allclose(out16.copy_to_host(), np.matmul(a, b).astype(np.float16),
                               rtol=2e-3, atol=2e-3)
    with pytest.raises(TypeError) as expected:             # complex into float: NumPy refuses
        np.matmul(a.astype(np.complex64), b, out=np.zeros((2, 6, 5), np.float32))
    with pytest.raises(TypeError) as got:
        pygpu.matmul(da.astype(np.complex64), db, out=pygpu.zeros((2, 6, 5), np.float32))
    assert str(got.value) == str(expected.value)


def test_out_of_any_layout_and_out_that_overlaps_an_input(rng):
    a, b = random_array(rng, (9, 9), np.float64), random_array(rng, (9, 9), np.float64)
    out = pygpu.zeros((9, 9)).T
    assert pygpu.matmul(pygpu.asarray(a), pygpu.asarray(b), out=out) is out
    check(out, a, b)
    strided = pygpu.zeros((9, 18))[:, ::2]
    check(pygpu.matmul(pygpu.asarray(a), pygpu.asarray(b), out=strided), a, b)
    da, db = pygpu.asarray(a), pygpu.asarray(b)
    assert pygpu.matmul(da, db, out=da) is da      # as if buffered, as NumPy
    assert product_error(da.copy_to_host(), a, b) <= 1e-14
    db2 = pygpu.asarray(b)
    pygpu.matmul(pygpu.asarray(a), db2, out=db2.T)  # out is B's transpose
    assert product_error(db2.copy_to_host().T, a, b) <= 1e-14


def test_operands_that_are_not_device_arrays_are_refused():
    d = pygpu.zeros((2, 2))
    with pytest.raises(TypeError, match="pygpu.asarray"):
        pygpu.matmul(d, np.zeros((2, 2)))
    with pytest.raises(TypeError):
        d @ np.zeros((2, 2))
    with pytest.raises(TypeError):
        d @ 2.0
    with pytest.raises(TypeError, match="out must be a pygpu.DeviceArray"):
        pygpu.matmul(d, d, out=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="method must be"):
        pygpu.matmul(d, d, method="cublas")


@pytest.mark.parametrize("method", ["naive", "shared", "tiled"])
def test_each_kernel_does_batches_and_vectors(rng, method):
    for sa, sb in [((3, 20, 17), (17, 30)), ((2, 1, 9, 8), (4, 8, 7)), ((9,), (9, 4)),
                   ((5, 9), (9,)), ((140, 9), (9, 131))]:
        for dtype in (np.float32, np.float64):
            a, b = random_array(rng, sa, dtype), random_array(rng, sb, dtype)
            check(pygpu.matmul(pygpu.asarray(a), pygpu.asarray(b), method=method), a, b)
            check(pygpu.matmul(pygpu.asarray(a.T.copy()).T, pygpu.asarray(b), method=method),
                  a, b)


def test_kernels_of_kernels_def_take_float32_and_float64_only():
    c = pygpu.zeros((3, 3), dtype=np.complex64)
    with pytest.raises(TypeError, match=r"method='naive' runs a kernel for float32 and "
                                        r"float64; the product here is complex64"):
        pygpu.matmul(c, c, method="naive")
    pygpu.matmul(c, c)  # auto multiplies every float and complex dtype


@pytest.mark.skipif(USES_CUBLAS, reason="on cuBLAS, auto is not one of pygpu's kernels")
@pytest.mark.parametrize("shape", [(1, 4096, 3), (300, 64, 5), (3, 50, 200)])
def test_auto_gives_the_naive_kernels_bits_where_it_is_not_tiled(rng, shape):
    # the strided kernel adds each element over k in order, as matmul_naive does
    m, k, n = shape
    for dtype in (np.float32, np.float64):
        A, B = random_array(rng, (m, k), dtype), random_array(rng, (k, n), dtype)
        dA, dB = cuda.to_device(A), cuda.to_device(B)
        np.testing.assert_array_equal((dA @ dB).copy_to_host(),
                                      pygpu.matmul(dA, dB, method="naive").copy_to_host())


def test_matmul_on_an_explicit_stream_and_on_each_device(rng):
    a, b = random_array(rng, (2, 30, 20), np.complex64), random_array(rng, (20, 10), np.complex64)
    for i in range(len(cuda.gpus)):
        with cuda.gpus[i]:
            s = cuda.stream()
            da, db = cuda.to_device(a), cuda.to_device(b)
        got = pygpu.matmul(da, db, stream=s)
        s.synchronize()
        assert got.device.id == i
        check(got, a, b)


def test_arrays_of_two_devices_are_refused():
    if len(cuda.gpus) < 2:
        pytest.skip("needs two devices")
    with cuda.gpus[0]:
        a = pygpu.zeros((2, 2))
    with cuda.gpus[1]:
        b = pygpu.zeros((2, 2))
    with pytest.raises(ValueError, match=r"different devices \(0 and 1\)"):
        a @ b
    with pytest.raises(ValueError, match=r"different devices \(0 and 1\)"):
        pygpu.matmul(a, a, out=b)


# ---- the switch, the report ---------------------------------------------------------------

def test_tf32_is_off_by_default_and_switched_explicitly(rng):
    assert pygpu.blas.get_allow_tf32() is False
    try:
        assert pygpu.blas.set_allow_tf32(True) is False
        assert pygpu.blas.get_allow_tf32() is True
        if not USES_CUBLAS:  # pygpu's kernels compute in full float32 regardless
            a, b = random_array(rng, (20, 30), np.float32), random_array(rng, (30, 5), np.float32)
            check(pygpu.asarray(a) @ pygpu.asarray(b), a, b)
        with pytest.raises(TypeError, match="True or False"):
            pygpu.blas.set_allow_tf32(1)
    finally:
        pygpu.blas.set_allow_tf32(False)
    assert pygpu.blas.get_allow_tf32() is False


@pytest.mark.simulator
def test_the_simulator_reports_its_own_kernels():
    assert pygpu.blas.matmul_backend() == "pygpu's own kernels (the simulator has no cuBLAS)"
    assert pygpu.blas.cublas_version() is None and pygpu.blas.cublas_path() is None


def run_python(code, **env):
    full = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=300)


def test_import_and_products_on_the_simulator_never_load_cublas():
    r = run_python("""
        import numpy as np, pygpu
        def loaded():
            return "libcublas" in open("/proc/self/maps").read()
        assert not loaded()
        d = pygpu.asarray(np.ones((3, 3)))
        (d @ d).copy_to_host()
        print("loaded" if loaded() else "not loaded")
    """, PYGPU_SIMULATOR="1")
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "not loaded"


def test_soname_major_reads_the_library_version():
    # the search order itself: tests/runtime/test_library_search.py
    from pygpu import blas
    assert blas._soname_major("/x/libcublas.so.12.9.1") == 12
    assert blas._soname_major("libcublas.so") is None


# ---- the calls cuBLAS gets, checked on any backend ------------------------------------

def flat(view):
    """The memory a view with positive strides spans, from its first element."""
    extent = 1 + sum((n - 1) * st // view.itemsize for n, st in zip(view.shape, view.strides,
                                                                    strict=True) if n)
    return np.lib.stride_tricks.as_strided(view, shape=(extent,), strides=(view.itemsize,))


def emulate(calls, fa, fb, fc):
    """Runs the recorded row-major pg_gemm calls (what rt_cublas.c turns into
    cuBLAS's column-major ones; the harness test checks that) on flat memory."""
    for (oa, ob, oc, m, n, k, batch, lda, ta, sa, ldb, tb, sb, ldc, sc) in calls:
        assert lda >= (m if ta else k) or m == 1 or k == 1
        assert ldb >= (k if tb else n) or k == 1 or n == 1
        for i in range(batch):
            A = np.lib.stride_tricks.as_strided(
                fa[oa + i * sa:], shape=(m, k),
                strides=(fa.itemsize, lda * fa.itemsize) if ta else (lda * fa.itemsize,
                                                                     fa.itemsize))
            B = np.lib.stride_tricks.as_strided(
                fb[ob + i * sb:], shape=(k, n),
                strides=(fb.itemsize, ldb * fb.itemsize) if tb else (ldb * fb.itemsize,
                                                                     fb.itemsize))
            fc[oc + i * sc:oc + i * sc + m * ldc].reshape(m, ldc)[:, :n] = A @ B


# (A's view, B's view, whether each must be copied): views are read as they are
# unless a matrix has no stride of one element (steps on both axes, reversed)
VIEWS = [
    (lambda x: x, lambda y: y, False, False),
    (lambda x: x.transpose(0, 2, 1)[:, :7], lambda y: y[:, :10, :9], False, False),
    (lambda x: x[:, :6, :10], lambda y: y.transpose(0, 2, 1)[:, :, :6], False, False),
    (lambda x: x[1].T, lambda y: y[0].T, False, False),
    (lambda x: x[:, ::2, ::3], lambda y: y[:, ::3, ::2][:, :4], True, True),
    (lambda x: x[:, ::2], lambda y: y[:, :, ::2], False, True),    # rows apart; B: no unit stride
    (lambda x: x[0, :, 0], lambda y: y[2, :10], False, False),     # a strided vector
    (lambda x: x, lambda y: y[0, :, 1], False, False),             # batch @ strided vector
    (lambda x: x[:1, :5, :3], lambda y: y[:, :3], False, False),   # broadcast batch
    (lambda x: x[:, ::-1], lambda y: y[:, :12], True, False),      # reversed rows
    (lambda x: x.reshape(3, 1, 10, 12), lambda y: y[:2, :12], False, False),
]


@pytest.mark.parametrize("dtype", [np.float64, np.complex64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("views", range(len(VIEWS)))
def test_the_calls_cublas_would_get_give_numpys_product(rng, dtype, views):
    va, vb, copy_a, copy_b = VIEWS[views]
    x, y = random_array(rng, (3, 10, 12), dtype), random_array(rng, (3, 12, 10), dtype)
    hx, hy = va(x), vb(y)
    dx, dy = va(pygpu.asarray(x)), vb(pygpu.asarray(y))
    calls, A, B, C = pygpu._core._matmul_plan(dx, dy)
    assert calls and C.shape == np.matmul(hx, hy).shape
    assert (A is not dx) == copy_a and (B is not dy) == copy_b
    fa = flat(hx) if A is dx else np.ascontiguousarray(hx).ravel()
    fb = flat(hy) if B is dy else np.ascontiguousarray(hy).ravel()
    fc = np.full(max(C.size, 1), np.nan, dtype=dtype)
    emulate(calls, fa, fb, fc)
    assert product_error(fc.reshape(C.shape), hx, hy) <= 1e-6


def test_a_batch_times_one_matrix_is_one_call_with_the_rows_stacked():
    calls, _, _, _ = pygpu._core._matmul_plan(pygpu.zeros((4, 6, 5, 7)), pygpu.zeros((7, 3)))
    assert [c[3:7] for c in calls] == [(120, 3, 7, 1)]     # m = 4 * 6 * 5, one product
    calls, _, _, _ = pygpu._core._matmul_plan(pygpu.zeros((4, 6, 5, 7)), pygpu.zeros((6, 7, 3)))
    assert [c[3:7] for c in calls] == [(5, 3, 7, 6)] * 4   # B is broadcast on axis 0 only
    calls, _, _, _ = pygpu._core._matmul_plan(pygpu.zeros((4, 6, 5, 7)), pygpu.zeros((1, 6, 7, 3)))
    assert [c[3:7] for c in calls] == [(5, 3, 7, 6)] * 4
    calls, _, _, _ = pygpu._core._matmul_plan(pygpu.zeros((4, 6, 5, 7)), pygpu.zeros((4, 6, 7, 3)))
    assert [c[3:7] for c in calls] == [(5, 3, 7, 24)]      # one strided batch of 24


# ---- rt_cublas.c against the toolkit (no GPU needed) ----------------------------------

TOOLKIT = Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda")


def c_compiler():
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        pytest.skip("no C compiler")
    return cc


def test_cublas_values_declared_by_pygpu_are_the_headers(tmp_path):
    header = TOOLKIT / "include" / "cublas_api.h"
    if not header.exists():
        pytest.skip("no cuBLAS header (CUDA toolkit) here")
    src = RT_CUBLAS.read_text()
    values = re.findall(r"\bPG_\w+ = (-?\d+), +/\* (\w+) \*/", src)
    assert len(values) >= 15
    prog = "#include <stdio.h>\n#include <cublas_api.h>\nint main(void) {\n"
    prog += "".join(f'    printf("%d\\n", (int){name});\n' for _, name in values)
    prog += "    return 0;\n}\n"
    (tmp_path / "v.c").write_text(prog)
    r = subprocess.run([c_compiler(), f"-I{TOOLKIT / 'include'}", str(tmp_path / "v.c"),
                        "-o", str(tmp_path / "v")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    got = subprocess.run([str(tmp_path / "v")], capture_output=True, text=True).stdout.split()
    assert got == [v for v, _ in values], list(zip(values, got, strict=False))


HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include "runtime.h"
int main(int argc, char **argv) {
    char err[1024] = "", why[160] = "";
    int version = 0;
    for (int i = 1; i < argc; i++) {
        int rc = pg_cublas_load(argv[i], &version, err, sizeof(err));
        printf("load %d %d %s\n", rc, version, rc == 0 ? "" : err);
    }
    if (getenv("HARNESS_GEMM") != NULL) { /* only where no GPU could run it */
        pg_gemm g = {PG_T_F64, 0, 2, 2, 2, 1, (void *)256, 2, 0, 0, (void *)256, 2, 0, 0,
                     (void *)256, 2, 0};
        pg_err e = pg_cublas_gemm(0, &g, NULL, why, sizeof(why));
        printf("gemm %d %s\n", e, why);
    }
    return 0;
}
"""


def test_cublas_loader_finds_its_entry_points_in_the_toolkits_library(tmp_path):
    libs = sorted((TOOLKIT / "lib64").glob("libcublas.so.*"))
    if not libs:
        pytest.skip("no libcublas in the CUDA toolkit here")
    (tmp_path / "h.c").write_text(HARNESS)
    r = subprocess.run([c_compiler(), "-std=c11", *INCLUDES, str(tmp_path / "h.c"),
                        str(RT_CUBLAS), "-ldl", "-lpthread", "-o",
                        str(tmp_path / "h")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    # a missing file is refused with the loader's reason; then the real one loads,
    # and a second load reports the same version
    env = dict(os.environ)
    if not GPU_PRESENT:
        env["HARNESS_GEMM"] = "1"
    out = subprocess.run([str(tmp_path / "h"), str(tmp_path / "libcublas.so.99"),
                          str(libs[-1]), str(libs[-1])], capture_output=True, text=True,
                         timeout=120, env=env).stdout.splitlines()
    assert out[0].startswith("load -1 0 cannot load cuBLAS from ")
    rc, version = map(int, out[1].split()[1:3])
    assert rc == 0 and version >= 110000
    assert out[2].split()[1:3] == ["0", str(version)]
    if not GPU_PRESENT:
        # no GPU: the handle cannot be made, and the message names the call
        assert re.match(r"gemm \d+ cublasCreate_v2 \(CUBLAS_STATUS_\w+\)", out[3]), out[3]


# A stand-in libcublas for the host: cuBLAS's documented column-major GEMM
# (float64 only), so that rt_cublas.c's swap of the operands, its transposes,
# leading dimensions and batch strides are checked without a GPU.
FAKE_CUBLAS = r"""
#include <stddef.h>
static int gemm(int ta, int tb, int m, int n, int k, const double *al, const double *A,
                int lda, const double *B, int ldb, const double *be, double *C, int ldc) {
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int p = 0; p < k; p++)
                s += (ta ? A[p + (size_t)i * lda] : A[i + (size_t)p * lda]) *
                     (tb ? B[j + (size_t)p * ldb] : B[p + (size_t)j * ldb]);
            C[i + (size_t)j * ldc] = *al * s + (*be != 0 ? *be * C[i + (size_t)j * ldc] : 0);
        }
    return 0;
}
int cublasGetProperty(int type, int *v) { *v = type == 0 ? 12 : type == 1 ? 4 : 7; return 0; }
static int live_handles;
int fake_live_handles(void) { return live_handles; }
int cublasCreate_v2(void **h) { live_handles++; *h = (void *)1; return 0; }
int cublasDestroy_v2(void *h) { (void)h; live_handles--; return 0; }
int cublasSetStream_v2(void *h, void *s) { (void)h; (void)s; return 0; }
int cublasGemmEx(void *h, int ta, int tb, int m, int n, int k, const void *al,
                 const void *A, int at, int lda, const void *B, int bt, int ldb,
                 const void *be, void *C, int ct, int ldc, int comp, int algo) {
    (void)h; (void)algo;
    if (at != 1 || bt != 1 || ct != 1 || comp != 70) return 15;
    return gemm(ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
}
int cublasGemmStridedBatchedEx(void *h, int ta, int tb, int m, int n, int k,
                               const void *al, const void *A, int at, int lda,
                               long long sa, const void *B, int bt, int ldb, long long sb,
                               const void *be, void *C, int ct, int ldc, long long sc,
                               int batch, int comp, int algo) {
    for (int i = 0; i < batch; i++) {
        int r = cublasGemmEx(h, ta, tb, m, n, k, al, (const double *)A + i * sa, at, lda,
                             (const double *)B + i * sb, bt, ldb, be,
                             (double *)C + i * sc, ct, ldc, comp, algo);
        if (r) return r;
    }
    return 0;
}
"""

SWAP_HARNESS = r"""
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "runtime.h"
/* element (i, j) of row-major matrix number b: as stored, or transposed */
static double at(const double *x, int trans, long ld, long stride, int b, int i, int j) {
    return trans ? x[b * stride + (long)j * ld + i] : x[b * stride + (long)i * ld + j];
}
int main(int argc, char **argv) {
    char err[1024], why[160];
    int version, failures = 0, cases = 0;
    if (pg_cublas_load(argv[1], &version, err, sizeof(err)) != 0) {
        printf("load failed: %s\n", err);
        return 1;
    }
    printf("version %d\n", version);
    int dims[][3] = {{1, 1, 1}, {3, 4, 5}, {7, 2, 9}, {1, 6, 1}, {5, 1, 3}};
    for (int d = 0; d < 5; d++)
    for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++)
    for (int batch = 1; batch <= 3; batch += 2)
    for (int pad = 0; pad <= 2; pad += 2) {
        int m = dims[d][0], n = dims[d][1], k = dims[d][2];
        long lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n;
        long sa = lda * (ta ? k : m) + pad, sb = ldb * (tb ? n : k), sc = (long)m * n;
        double *a = malloc(sizeof(double) * sa * batch), *b = malloc(sizeof(double) * sb * batch);
        double *c = malloc(sizeof(double) * sc * batch);
        for (long i = 0; i < sa * batch; i++) a[i] = (double)((i * 7) % 11) - 5;
        for (long i = 0; i < sb * batch; i++) b[i] = (double)((i * 5) % 13) - 6;
        pg_gemm g = {PG_T_F64, 0, m, n, k, batch, a, lda, sa, ta, b, ldb, sb, tb, c, ldc, sc};
        pg_err e = pg_cublas_gemm(0, &g, NULL, why, sizeof(why));
        cases++;
        if (e != PG_SUCCESS) { printf("case %d: error %d %s\n", cases, e, why); failures++; }
        for (int bi = 0; bi < batch && e == PG_SUCCESS; bi++)
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int p = 0; p < k; p++)
                        s += at(a, ta, lda, sa, bi, i, p) * at(b, tb, ldb, sb, bi, p, j);
                    if (fabs(c[bi * sc + (long)i * ldc + j] - s) > 1e-12) {
                        printf("case m=%d n=%d k=%d ta=%d tb=%d batch=%d pad=%d: wrong\n",
                               m, n, k, ta, tb, batch, pad);
                        failures++;
                        i = m; j = n; bi = batch;
                    }
                }
        free(a); free(b); free(c);
    }
    printf("cases %d failures %d\n", cases, failures);
    /* blas_release destroys the handle (once); the next product makes another */
    int (*live)(void);
    *(void **)&live = dlsym(dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD), "fake_live_handles");
    int before = live();
    pg_err r1 = pg_cublas_release(0, why, sizeof(why));
    pg_err r2 = pg_cublas_release(0, why, sizeof(why));
    int after = live();
    double one = 1, two = 2, out = 0;
    pg_gemm g = {PG_T_F64, 0, 1, 1, 1, 1, &one, 1, 1, 0, &two, 1, 1, 0, &out, 1, 1};
    pg_err r3 = pg_cublas_gemm(0, &g, NULL, why, sizeof(why));
    printf("handles %d %d %d %d %d %d %g\n", before, r1, r2, after, r3, live(), out);
    return failures != 0;
}
"""


def test_row_major_products_reach_cublas_swapped_with_the_right_leading_dimensions(tmp_path):
    # every transpose pair, batch, padded leading dimension and degenerate size,
    # through rt_cublas.c, against a host stand-in that computes what cuBLAS
    # documents: column-major C = op(A) op(B)
    cc = c_compiler()
    (tmp_path / "fake.c").write_text(FAKE_CUBLAS)
    (tmp_path / "h.c").write_text(SWAP_HARNESS)
    lib = tmp_path / "libcublas.so.12"
    r = subprocess.run([cc, "-shared", "-fPIC", str(tmp_path / "fake.c"), "-o", str(lib)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run([cc, "-std=c11", *INCLUDES, str(tmp_path / "h.c"),
                        str(RT_CUBLAS), "-ldl", "-lpthread", "-lm", "-o",
                        str(tmp_path / "h")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run([str(tmp_path / "h"), str(lib)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "version 120407" in r.stdout and "cases 80 failures 0" in r.stdout, r.stdout
    assert "handles 1 0 0 0 0 1 2" in r.stdout, r.stdout  # released, then made again


# ---- on a GPU: cuBLAS ---------------------------------------------------------------------

@pytest.mark.gpu
def test_gpu_products_run_in_cublas():
    assert pygpu.blas.cublas_version() is not None, pygpu.blas.matmul_backend()
    assert pygpu.blas.matmul_backend().startswith("cuBLAS ")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_gpu_cublas_matches_numpy_on_large_and_batched_products(rng, dtype):
    for sa, sb in [((1000, 700), (700, 900)), ((16, 64, 48), (48, 80)),
                   ((3, 1, 65, 33), (7, 33, 17)), ((4097,), (4097, 3)), ((5, 300), (300,))]:
        a, b = random_array(rng, sa, dtype), random_array(rng, sb, dtype)
        check(pygpu.asarray(a) @ pygpu.asarray(b), a, b)
    # transposed views go to cuBLAS as they are
    a, b = random_array(rng, (300, 500), dtype), random_array(rng, (400, 300), dtype)
    check(pygpu.asarray(a).T @ pygpu.asarray(b).T, a.T, b.T)
    check(pygpu.asarray(a).T @ pygpu.asarray(a), a.T, a)


@pytest.mark.gpu
def test_gpu_tf32_switch_changes_float32_precision(rng):
    a = random_array(rng, (1024, 1024), np.float32)
    b = random_array(rng, (1024, 1024), np.float32)
    da, db = pygpu.asarray(a), pygpu.asarray(b)
    exact = product_error((da @ db).copy_to_host(), a, b)
    pygpu.blas.set_allow_tf32(True)
    try:
        fast = product_error((da @ db).copy_to_host(), a, b)
    finally:
        pygpu.blas.set_allow_tf32(False)
    assert exact < 2e-6
    # TF32 keeps 10 bits of mantissa (where the GPU has it): an H200 gave 9e-6
    assert 3 * exact < fast < 1e-2


@pytest.mark.gpu
def test_gpu_without_cublas_falls_back_to_pygpus_kernels():
    r = run_python("""
        import numpy as np, pygpu
        from pygpu import cuda
        rng = np.random.default_rng(1)
        for dt in (np.float16, np.float32, np.float64, np.complex64, np.complex128):
            a = (rng.standard_normal((3, 70, 50)) + 0j).astype(dt) if np.dtype(dt).kind == "c" \\
                else rng.standard_normal((3, 70, 50)).astype(dt)
            b = rng.standard_normal((50, 200)).astype(dt)
            got = (pygpu.asarray(a) @ pygpu.asarray(b)).copy_to_host()
            ref = a.astype(np.complex128) @ b.astype(np.complex128)
            err = np.linalg.norm(got - ref) / (np.linalg.norm(a) * np.linalg.norm(b))
            assert err < (2e-3 if dt == np.float16 else 2e-6), (dt, err)
        print(pygpu.blas.matmul_backend())
    """, PYGPU_CUBLAS="0")
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "pygpu's own kernels (PYGPU_CUBLAS=0)"


@pytest.mark.gpu
def test_gpu_threads_on_their_own_streams_share_the_handle(rng):
    import threading
    a = random_array(rng, (8, 256, 256), np.float64)
    b = random_array(rng, (256, 256), np.float64)
    errors = []

    def work():
        try:
            s = cuda.stream()
            da, db = cuda.to_device(a, stream=s), cuda.to_device(b, stream=s)
            for _ in range(20):
                got = pygpu.matmul(da, db, stream=s)
            s.synchronize()
            errors.append(product_error(got.copy_to_host(), a, b))
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 4 and all(isinstance(e, float) and e < 1e-14 for e in errors), errors


@pytest.mark.gpu
def test_gpu_a_forked_child_refuses_products_after_the_parent_used_cublas():
    r = run_python("""
        import os, numpy as np, pygpu
        d = pygpu.asarray(np.ones((64, 64)))
        (d @ d).copy_to_host()
        pid = os.fork()
        if pid == 0:
            try:
                d @ d
            except pygpu.CudaError as e:
                os._exit(0 if "fork" in str(e) else 2)
            os._exit(1)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == ["0"]
