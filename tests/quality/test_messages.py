"""Messages a NumPy user can act on: launch settings, contiguity, empty arrays, `-m pygpu`.

Where NumPy has a message for the same mistake (a negative or non-integer
shape), pygpu's says the same thing; where it accepts something (NumPy ints in
a shape, empty views), pygpu accepts it too.
"""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import random_array
from hypothesis import given, settings
from hypothesis import strategies as st

import pygpu
from pygpu import cuda, kernels

rng = np.random.default_rng(11)


def numpy_error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


# ---- cuda.launch_config takes shapes as NumPy does ----------------------------------

NUMPY_INTS = [np.int64, np.int32, np.int16, np.uint8, np.uint64, np.intp]


@pytest.mark.parametrize("itype", NUMPY_INTS)
def test_launch_config_takes_numpy_ints_as_numpy_shapes_do(itype):
    assert np.empty(itype(100)).shape == (100,)  # NumPy takes it as a shape
    assert cuda.launch_config(itype(100)) == cuda.launch_config(100) == (1, 256)
    assert cuda.launch_config(itype(100), itype(32)) == (4, 32)
    shape = (itype(100), itype(50))
    assert np.empty(shape).shape == (100, 50)
    assert cuda.launch_config(shape, (itype(16), itype(16))) == ((4, 7), (16, 16))


def test_launch_config_takes_integer_arrays_and_lists_and_returns_python_ints():
    assert cuda.launch_config(np.array(1000), np.array(256)) == (4, 256)
    assert cuda.launch_config(np.array([100, 50]), [16, 16]) == ((4, 7), (16, 16))
    assert cuda.launch_config([5, 6, 7], [8, 4, 2]) == ((1, 2, 3), (8, 4, 2))
    blocks, threads = cuda.launch_config((np.int64(100), np.int32(50)), (np.int8(16), 16))
    assert all(type(v) is int for v in blocks + threads)


def test_launch_config_results_launch_and_compute_what_numpy_does():
    x = random_array(rng, (37, 21), np.float32)
    d = cuda.to_device(x)
    grid, block = cuda.launch_config(np.array(d.shape), (np.int32(8), np.int64(8)))
    kernels.add_one[grid, block](d)
    np.testing.assert_array_equal(d.copy_to_host(), x + 1)


def test_launch_config_refuses_blocks_no_device_runs_and_counts_large_grids_exactly():
    with pytest.raises(ValueError, match="at most 1024 per block"):
        cuda.launch_config(2**62 + 1, 2**61)
    with pytest.raises(ValueError, match="at most 1024 per block"):
        cuda.launch_config((10,), 2048)
    assert cuda.launch_config(2**40 + 1, 1024)[0] == 2**30 + 1


def test_launch_config_negative_shape_says_what_numpy_says():
    _, np_msg = numpy_error(lambda: np.empty((3, -1)))
    with pytest.raises(ValueError, match=re.escape(np_msg)):
        cuda.launch_config((3, -1))
    with pytest.raises(ValueError, match=re.escape(np_msg)):
        cuda.launch_config(np.int64(-5))


def test_launch_config_float_shape_is_a_type_error_as_in_numpy():
    np_type, np_msg = numpy_error(lambda: np.empty((2, 2.0)))
    assert np_type is TypeError
    with pytest.raises(TypeError, match=re.escape(np_msg)) as info:
        cuda.launch_config((2, 2.0))
    assert "//" in str(info.value)
    with pytest.raises(TypeError, match="// or math.ceil"):
        cuda.launch_config(1000, 256 / 2)
    with pytest.raises(TypeError, match="// or math.ceil"):
        cuda.launch_config(np.float32(1000.0))


@pytest.mark.parametrize("bad", [True, np.True_, (4, False)])
def test_launch_config_refuses_bools(bad):
    with pytest.raises(TypeError, match="not bool"):
        cuda.launch_config(bad)
    with pytest.raises(TypeError, match="not bool"):
        cuda.launch_config((10, 10), (bad, 16) if not isinstance(bad, tuple) else bad)


@pytest.mark.parametrize("bad", ["100", None, b"1", object()])
def test_launch_config_refuses_non_integers_by_name(bad):
    with pytest.raises(TypeError, match="launch_config: shape must be an int or a tuple"):
        cuda.launch_config(bad)


def test_launch_config_threads_must_be_positive():
    with pytest.raises(ValueError, match=r"threads_per_block must hold ints >= 1, got \(0,\)"):
        cuda.launch_config(10, np.int64(0))


# ---- launch settings are reported as given ------------------------------------------

@pytest.mark.parametrize("value", [-(2**70), -(2**63), -(2**63) - 1, -1, 0])
@pytest.mark.parametrize("where", ["grid", "block"])
def test_too_small_launch_dimensions_are_reported_as_given(value, where):
    key = (value, 32) if where == "grid" else (1, value)
    with pytest.raises(ValueError) as info:
        kernels.add_one[key]
    assert str(info.value) == (f"{where} dimension x is {value}; every dimension "
                               f"must be at least 1")
    assert "1099511627776" not in str(info.value)


@pytest.mark.parametrize("value", [2**32, 2**40, 2**63, 2**70])
def test_huge_launch_dimensions_are_reported_as_given(value):
    with pytest.raises(ValueError) as info:
        kernels.add_one[(1, value), 32]
    msg = str(info.value)
    assert msg.startswith(f"grid dimension y is {value}, more than any device allows")
    assert "65535" in msg
    with pytest.raises(ValueError, match=f"block dimension z is {value}, more than any"):
        kernels.add_one[1, (1, 1, value)]


def test_launch_dimensions_from_numpy_ints_arrays_and_lists_are_accepted():
    x = random_array(rng, 10, np.float32)
    d = cuda.to_device(x)
    for grid, block in [(np.int64(1), np.int32(32)), (np.array(2), (np.uint16(8),)),
                        ([1, 1], [16, 1]), ((np.int8(1), 1, 1), [np.int64(32)])]:
        kernels.add_one[grid, block](d)
    want = x
    for _ in range(4):  # four float32 additions of 1, rounded each time
        want = want + np.float32(1)
    np.testing.assert_array_equal(d.copy_to_host(), want)
    assert kernels.add_one[[2, 3], [4]].grid == (2, 3, 1)


@pytest.mark.parametrize("bad,kind,text", [
    (2.5, TypeError, "got float (use // or math.ceil"),
    (np.float32(2.0), TypeError, "got numpy.float32 (use // or math.ceil"),
    (True, TypeError, "got bool"),
    ((1, np.True_), TypeError, "got numpy.bool"),
    ("1", TypeError, "got str"),
    (None, TypeError, "got NoneType"),
    ((), ValueError, "1 to 3 ints, got 0 values"),
    ([1, 1, 1, 1], ValueError, "1 to 3 ints, got 4 values"),
])
def test_bad_launch_dimensions_say_what_was_given(bad, kind, text):
    with pytest.raises(kind, match=re.escape(text)):
        kernels.add_one[bad, 32]
    with pytest.raises(kind, match="block" + ".*" + re.escape(text)):
        kernels.add_one[1, bad]


@pytest.mark.parametrize("value,text", [
    (-1, "shared_bytes is -1; it must be at least 0"),
    (-(2**70), f"shared_bytes is {-(2**70)}; it must be at least 0"),
    (2**31, "shared_bytes is 2147483648, more than any device allows"),
    (2**70, f"shared_bytes is {2**70}, more than any device allows"),
])
def test_shared_bytes_out_of_range_is_reported_as_given(value, text):
    with pytest.raises(ValueError, match=re.escape(text)):
        kernels.add_one[1, 32, 0, value]


@pytest.mark.parametrize("value,text", [
    (1.5, "must be an int, got float (use // or math.ceil"),
    (True, "must be an int, got bool"),
    ("0", "must be an int, got str"),
])
def test_shared_bytes_must_be_an_int(value, text):
    with pytest.raises(TypeError, match=re.escape(text)):
        kernels.add_one[1, 32, 0, value]


def test_shared_bytes_takes_numpy_ints():
    x = random_array(rng, 10, np.float32)
    d = cuda.to_device(x)
    launch = kernels.add_one[1, 32, 0, np.int64(0)]
    assert launch.shared_bytes == 0
    launch(d)
    np.testing.assert_array_equal(d.copy_to_host(), x + 1)


@settings(max_examples=200, deadline=None)
@given(value=st.one_of(st.integers(), st.integers(-(2**80), 2**80)))
def test_fuzz_any_int_dimension_is_accepted_or_reported_exactly(value):
    try:
        launch = kernels.add_one[(1, 1, value), 1]
    except ValueError as exc:
        assert f"grid dimension z is {value}" in str(exc)
        assert value < 1 or value > 65535
    else:
        assert 1 <= value <= 65535 and launch.grid == (1, 1, value)


# ---- contiguity: C order, Fortran order, strided views ------------------------------

def fortran(shape, dtype=np.float32):
    x = np.asfortranarray(random_array(rng, shape, dtype))
    return x, cuda.to_device(x)


def test_elementwise_kernels_take_fortran_arrays_and_compute_as_numpy():
    (x, dx), (y, dy) = fortran((5, 7)), fortran((5, 7))
    out = pygpu.empty((7, 5), dtype=np.float32).T
    assert out.is_f_contiguous() and not out.is_c_contiguous()
    grid, block = cuda.launch_config((5, 7))
    kernels.add[grid, block](dx, dy, out)
    np.testing.assert_array_equal(out.copy_to_host(), x + y)
    grid, block = cuda.launch_config(35)
    kernels.add_one[grid, block](dx)
    np.testing.assert_array_equal(dx.copy_to_host(), x + 1)


def test_matmul_kernel_calls_a_fortran_input_fortran_not_strided():
    x, dx = fortran((16, 16))
    c = pygpu.empty((16, 16), dtype=np.float32)
    with pytest.raises(ValueError) as info:
        kernels.matmul_naive[(1, 1), (16, 16)](dx, dx.copy(), c)
    msg = str(info.value)
    assert "argument 'A' must be C-contiguous" in msg
    assert "Fortran-contiguous" in msg and "strided" not in msg
    assert "A.copy()" in msg


def test_matmul_kernel_fortran_output_says_how_to_write_into_it():
    a = cuda.to_device(random_array(rng, (16, 16), np.float32))
    c = pygpu.empty((16, 16), dtype=np.float32).T
    with pytest.raises(ValueError) as info:
        kernels.matmul_naive[(1, 1), (16, 16)](a, a, c)
    msg = str(info.value)
    assert "argument 'C' must be C-contiguous" in msg
    assert "Fortran-contiguous" in msg and "strided" not in msg
    assert "C[...] = result" in msg and "C.copy()" not in msg


def test_matmul_into_a_fortran_output_is_numpys_not_a_refusal():
    # pygpu.matmul follows numpy.matmul: out may have any layout (the raw
    # kernel above still says how to write into one)
    h = random_array(rng, (8, 8), np.float32)
    a = cuda.to_device(h)
    c = pygpu.empty((8, 8), dtype=np.float32).T
    assert pygpu.matmul(a, a, out=c) is c
    np.testing.assert_allclose(c.copy_to_host(), h.astype(np.float64) @ h, rtol=1e-5,
                               atol=1e-5)


def test_strided_views_are_called_strided_and_the_fix_named():
    x = random_array(rng, (8, 8), np.float32)
    d = cuda.to_device(x)
    with pytest.raises(ValueError, match=r"'A' must be contiguous \(C or Fortran order\), "
                                         r"but it is a strided view"):
        kernels.add_one[1, 32](d[:, ::2])
    with pytest.raises(ValueError, match=r"'a' must be contiguous .* strided view.*a\.copy\(\)"):
        kernels.add[1, 32](d[::2], d[::2].copy(), pygpu.empty((4, 8), dtype=np.float32))
    with pytest.raises(ValueError, match=r"'B' must be C-contiguous .* strided view.*B\.copy"):
        kernels.matmul_naive[(1, 1), (16, 16)](d[:4, :4].copy(), d[::2, ::2],
                                                 pygpu.empty((4, 4), dtype=np.float32))
    np.testing.assert_array_equal(d.copy_to_host(), x)  # nothing ran


def test_mixed_orders_name_the_arguments_and_both_fixes():
    (x, f), c = fortran((4, 6)), cuda.to_device(random_array(rng, (4, 6), np.float32))
    out = pygpu.empty((4, 6), dtype=np.float32)
    with pytest.raises(ValueError) as info:
        kernels.add[1, 32](f, c, out)
    msg = str(info.value)
    assert "'a' is Fortran-contiguous but 'b' is not" in msg
    assert ".copy()" in msg and ".copy(order='F')" in msg
    with pytest.raises(ValueError, match="'a' is C-contiguous but 'out' is not"):
        kernels.add[1, 32](c, c, f)
    # the fix the message names works
    kernels.add[1, 32](f.copy(), c.copy(), out)
    np.testing.assert_array_equal(out.copy_to_host(), x + c.copy_to_host())


# ---- empty arrays are both C- and Fortran-contiguous, as in NumPy ---------------------

@pytest.mark.parametrize("index", [np.s_[:, 3:], np.s_[4:, :], np.s_[:, 1:1], np.s_[::2, 3:]])
def test_empty_views_add_as_numpy(index):
    x = random_array(rng, (4, 3), np.float32)
    d = cuda.to_device(x)
    e, xe = d[index], x[index]
    assert e.flags["C_CONTIGUOUS"] == xe.flags["C_CONTIGUOUS"] is True
    assert e.flags["F_CONTIGUOUS"] == xe.flags["F_CONTIGUOUS"] is True
    r = e + e
    assert r.shape == (xe + xe).shape
    out = pygpu.empty(xe.shape, dtype=np.float32)
    kernels.add[1, 32](e, e, out)
    kernels.add[1, 32](e, 1.5, pygpu.empty(xe.shape, dtype=np.float32, order="F"))
    kernels.add_one[1, 32](e)
    np.testing.assert_array_equal(d.copy_to_host(), x)


def test_empty_arrays_still_need_equal_shapes():
    d = cuda.to_device(random_array(rng, (4, 3), np.float32))
    with pytest.raises(ValueError):
        kernels.add[1, 32](d[:, 3:], d[:, 3:], pygpu.empty((0, 4), dtype=np.float32))


# ---- python -m pygpu ------------------------------------------------------------------

def run_module(*args):
    return subprocess.run([sys.executable, "-m", "pygpu", *args], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ))


def test_python_dash_m_pygpu_help_describes_and_does_not_run_the_demo():
    r = run_module("--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: python -m pygpu")
    text = " ".join(r.stdout.split())
    assert "checked against NumPy" in text and "simulator" in text
    assert "vector add," not in r.stdout and "Found" not in r.stdout


def test_python_dash_m_pygpu_version_and_unknown_options():
    r = run_module("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"pygpu {pygpu.__version__}"
    r = run_module("--no-such-option")
    assert r.returncode == 2
    assert "unrecognized arguments: --no-such-option" in r.stderr
    assert "vector add" not in r.stdout
