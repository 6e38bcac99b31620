"""What Numba's kernels use beyond the first version of pygpu.cuda.jit:
Numba's type names, `and`/`or` as values, recursion, assigning to slices,
NumPy ufuncs into `out`, constant locals, tuples (arguments, namedtuples,
loops over them), pow(), functions, dtypes and constants as arguments of
device functions, constant arrays of complex and float16 numbers, @numba.jit
functions, against Python and NumPy; and the C++ through NVRTC."""

import math
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest

from pygpu import cuda
from pygpu.cuda import float32, float64, int32, int64, uint32, void


def test_numbas_type_names_are_dtypes_casts_and_signatures():
    assert str(void(float32[:, ::1], int64)) == "void(float32[:, ::1], int64)"
    assert str(float64[::1, :]) == "float64[::1, :]"
    assert np.dtype(float32) == np.float32 and float32(1.25) == np.float32(1.25)
    assert type(int32(7)) is np.int32
    with pytest.raises(TypeError, match="float32"):
        float32[1:2]

    @cuda.jit(void(float32[::1], int32[:, ::1]))
    def k(out, m):
        s = cuda.shared.array(4, dtype=float32)
        i = cuda.grid(1)
        s[i] = float32(m[i, 0]) / 3
        out[i] = s[i]

    m = np.arange(8, dtype=np.int32).reshape(4, 2)
    out = np.zeros(4, np.float32)
    k[1, 4](out, m)
    np.testing.assert_array_equal(out, np.float32(m[:, 0]) / np.float32(3))
    with pytest.raises(TypeError, match="no signature matches"):
        k[1, 4](out, m.astype(np.int64))


@cuda.jit(device=True)
def _fact(n):
    if n <= 1:
        return 1
    return n * _fact(n - 1)


@cuda.jit
def _values(out, a, b, v, w):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i, 0] = a[i] or b[i]  # an int64 and a float64: a float64
        out[i, 1] = a[i] and b[i]
        out[i, 2] = _fact(i)
        out[i, 3] = i > 3 or a[i] > 2
        # b[i] is read only where a[i] is 0: here never out of bounds
        out[i, 4] = a[i] or 10 or b[100]
    if i == 0:
        v[1:] = 7  # a slice gets a number
        v[0] = 1
        w[2] = w[0]  # a row gets a row
        w[1, ::2] = -1.5
        np.sin(b, out[:, 5])  # a ufunc of arrays into out
        np.arctan2(b, 2.0, out=out[:, 6])


def test_and_or_values_recursion_slice_assignment_and_ufuncs_into_out():
    a = np.array([0, 1, 2, 0, 3, 0], np.int64)
    b = np.array([5.0, 0.0, 1.5, 0.0, 2.0, 7.0])
    out = np.zeros((6, 7))
    v = np.zeros(5, np.int32)
    w = np.arange(9.0).reshape(3, 3)
    _values[1, 8](out, a, b, v, w)
    ref = [[a[i] or b[i], a[i] and b[i], math.factorial(i), i > 3 or a[i] > 2,
            a[i] or 10] for i in range(6)]
    np.testing.assert_array_equal(out[:, :5], np.array(ref, float))
    np.testing.assert_allclose(out[:, 5], np.sin(b), rtol=1e-15)
    np.testing.assert_allclose(out[:, 6], np.arctan2(b, 2.0), rtol=1e-15)
    np.testing.assert_array_equal(v, [1, 7, 7, 7, 7])
    np.testing.assert_array_equal(w, [[0, 1, 2], [-1.5, 4, -1.5], [0, 1, 2]])


def test_recursion_needs_a_known_return_type():
    @cuda.jit(device=True)
    def down(n):
        return down(n - 1) if n > 0 else 0

    @cuda.jit
    def k(out):
        out[0] = down(3)

    with pytest.raises(cuda.TypingError, match="calls itself before any of its returns"):
        k[1, 1](np.zeros(1))


_Point = namedtuple("_Point", "x y")


@cuda.jit
def _tuples(out, t, p):
    N = 4  # a local constant: a shared array's size, as in Numba
    sm = cuda.shared.array(N, int32)
    i = cuda.grid(1)
    sm[i] = i * i
    cuda.syncthreads()
    if i == 0:
        for j in range(N):
            out[0] += sm[j]
        for j, v in enumerate(t):  # a tuple argument of one type
            out[1] += j * v
        for j, v in enumerate((7, 8, 9)):
            out[2] += j * v
        out[3] = p.x * 10 + p.y  # a namedtuple's fields
        out[4] = pow(2, 10) + pow(2.0, 0.5)


def test_constant_locals_tuple_arguments_namedtuples_and_pow():
    out = np.zeros(5)
    _tuples[1, 4](out, (1.5, 2.5, 3.0), _Point(3, 4.5))
    np.testing.assert_array_equal(out, [0 + 1 + 4 + 9, 2.5 + 6.0, 8 + 18, 34.5,
                                        1024 + 2**0.5])
    with pytest.raises(TypeError, match="a tuple argument holds numbers, arrays"):
        _tuples[1, 4](out, (1.5, "x"), _Point(3, 4.5))
    with pytest.raises(cuda.TypingError, match="a tuple of one type"):
        _tuples[1, 4](out, (1.5, 2), _Point(3, 4.5))


@cuda.jit
def _prints(t, x, r):
    print(t, (x,), "dim", cuda.threadIdx)
    r[0] = math.exp2(x)
    r[1] = math.cbrt(x)
    r[2] = np.exp2(np.float32(x))


def test_print_of_tuples_and_dim3_as_python_writes_them_and_exp2_cbrt(capfd):
    r = np.zeros(3)
    _prints[1, (1, 2)]((1, ((2, 4), 3.5), (4,), 5), 27, r)
    out = capfd.readouterr().out.splitlines()
    assert out[-2:] == ["(1, ((2, 4), 3.500000), (4,), 5) (27,) dim (0, 0, 0)",
                        "(1, ((2, 4), 3.500000), (4,), 5) (27,) dim (0, 1, 0)"]
    np.testing.assert_allclose(r, [2.0**27, 3.0, 2.0**27], rtol=1e-7)


@cuda.jit(device=True)
def _apply(op, dtype, shape, ary, i, val, negate):
    s = cuda.shared.array(shape, dtype)  # a constant argument: the shape
    s[i] = ary[i]
    if negate:  # a constant argument: the branch it rules out is not compiled
        op(s, (i, i), val)  # (a TypingError where compiled: two indices of a 1-d array)
    else:
        op(s, i, val)  # a function passed as an argument
    ary[i] = s[i]


@cuda.jit(device=True)
def _twice(f, x):
    return f(f(x))


@cuda.jit
def _passes_functions(a, r):
    i = cuda.grid(1)
    _apply(cuda.atomic.add, uint32, 4, a, i, 5, False)
    _apply(cuda.atomic.max, uint32, (4,), a, i, 7, False)
    r[i] = _twice(math.sqrt, 16.0 * (i + 1))


def test_functions_dtypes_and_constants_as_device_function_arguments():
    a = np.arange(4, dtype=np.uint32)
    r = np.zeros(4)
    _passes_functions[1, 4](a, r)
    np.testing.assert_array_equal(a, [7, 7, 7, 8])
    np.testing.assert_allclose(r, np.sqrt(np.sqrt(16.0 * np.arange(1, 5))), rtol=1e-15)


_C64 = np.array([1 + 2j, -3.5j, 4], np.complex64)
_F16 = np.array([0.5, -1.25, 65504], np.float16)
_C128 = np.array([[1 - 1j], [2 + 0.5j]])


@cuda.jit
def _consts(out, h):
    c = cuda.const.array_like(_C64)
    for i in range(3):
        out[i] = c[i] * 2
        h[i] = _F16[i] + 1
    out[3] = _C128[1, 0]


def test_constant_arrays_of_complex_and_float16_numbers():
    out, h = np.zeros(4, np.complex128), np.zeros(3, np.float32)
    _consts[1, 1](out, h)
    np.testing.assert_array_equal(out, list(_C64 * 2) + [2 + 0.5j])
    np.testing.assert_array_equal(h, _F16.astype(np.float32) + 1)


@cuda.jit
def _tuple_of_arrays(x):
    i = cuda.grid(1)
    if i < len(x[0]):
        x[0][i] = x[1][i] + x[2][1][i] * x[2][0]


def test_a_tuple_of_arrays_numbers_and_tuples_as_an_argument():
    x0, x1 = np.zeros(10), np.arange(10.0)
    d = cuda.to_device(np.full(10, 3.0))
    _tuple_of_arrays[1, 16]((x0, x1, (2, d)))  # NumPy arrays in it come back
    np.testing.assert_array_equal(x0, x1 + 6)


class _NumbaCPUDispatcher:
    """Stands in for what @numba.jit makes (Numba is not a test dependency):
    an object of a numba module with the Python function as py_func."""

    __module__ = "numba.core.registry"

    def __init__(self, f):
        self.py_func = f


def _logic(x, y):
    return 4 * x - y / 2 * math.pi


_numba_logic = _NumbaCPUDispatcher(_logic)


@cuda.jit
def _calls_numba_jit(res, x, y):
    i = cuda.grid(1)
    if i < len(x):
        res[i] = _numba_logic(x[i], y[i])


def test_a_numba_jit_function_is_called_as_a_device_function():
    x, y = np.array([1, 10, 234]), np.array([2.0, 2.0, 4014.0])
    res = np.zeros(3)
    _calls_numba_jit.forall(3)(res, x, y)
    np.testing.assert_allclose(res, [_logic(p, q) for p, q in zip(x, y, strict=True)],
                               rtol=1e-15)


_NVRTC_SCRIPT = r"""
import sys
sys.path.insert(0, sys.argv[1])
import test_jit_numba_compat as C
from pygpu.rawkernel import compile_cuda
for kernel, sig in [
    (C._values, "void(float64[:, ::1], int64[::1], float64[::1], int32[::1], float64[:, ::1])"),
    (C._calls_numba_jit, "void(float64[::1], int64[::1], float64[::1])"),
    (C._passes_functions, "void(uint32[::1], float64[::1])"),
    (C._consts, "void(complex128[::1], float32[::1])"),
]:
    image, log, _ = compile_cuda(kernel.inspect_cuda(sig), arch="sm_90")
    assert image[:4] == b"\x7fELF", kernel
    print(kernel.__name__, "ok")
import numpy as np
from pygpu._jit import types as T
# tuple arguments: a signature string cannot spell them
src, _ = C._tuples._translate((T.Array(np.dtype("f8"), 1, "C"), T.Tuple((T.float64,) * 3),
                               T.Tuple((T.int64, T.float64), ("x", "y"))))
image, log, _ = compile_cuda(src, arch="sm_90")
assert image[:4] == b"\x7fELF"
print("_tuples ok")
nested = T.Tuple((T.int64, T.Tuple((T.Tuple((T.int64, T.int64)), T.float64))))
src, _ = C._prints._translate((nested, T.int64, T.Array(np.dtype("f8"), 1, "C")))
image, log, _ = compile_cuda(src, arch="sm_90")
assert image[:4] == b"\x7fELF"
print("_prints ok")
f8 = T.Array(np.dtype("f8"), 1, "C")
src, _ = C._tuple_of_arrays._translate((T.Tuple((f8, f8, T.Tuple((T.int64, f8)))),))
image, log, _ = compile_cuda(src, arch="sm_90")
assert image[:4] == b"\x7fELF"
print("_tuple_of_arrays ok")
"""


def test_these_kernels_compile_through_nvrtc():
    from conftest import run_with_nvrtc  # here: the script imports this module
    out = run_with_nvrtc(_NVRTC_SCRIPT, str(Path(__file__).parent))
    assert out.count(" ok") == 7, out
