"""pygpu.ElementwiseKernel and pygpu.ReductionKernel (CuPy's signatures) against
NumPy: fixed types and placeholders, broadcasting, scalars, outputs given,
`i` and `_ind.size()`, preambles, axis/keepdims, errors; and the rendered
source compiled by NVRTC."""

import numpy as np
import pytest
from conftest import run_with_nvrtc

import pygpu

DTYPES = [np.int32, np.int64, np.float16, np.float32, np.float64, np.complex64]


def sample(rng, shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return rng.integers(-20, 20, shape).astype(dt)
    x = rng.uniform(-4, 4, shape)
    if dt.kind == "c":
        x = x + 1j * rng.uniform(-4, 4, shape)
    return x.astype(dt)


SQUARED_DIFF = pygpu.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                       "z = (x - y) * (x - y)", "squared_diff")
GENERIC = pygpu.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff_g")
L2NORM = pygpu.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")


def test_squared_diff_broadcasts_as_numpy(rng):
    x = sample(rng, (5, 7), np.float32)
    y = sample(rng, (7,), np.float32)
    r = SQUARED_DIFF(pygpu.asarray(x), pygpu.asarray(y))
    assert r.dtype == np.float32 and r.shape == (5, 7)
    np.testing.assert_allclose(r.copy_to_host(), (x - y) ** 2, rtol=1e-6)
    # a non-contiguous view takes the strided kernels
    r = SQUARED_DIFF(pygpu.asarray(x)[:, ::2], pygpu.asarray(y)[::2])
    np.testing.assert_allclose(r.copy_to_host(), (x[:, ::2] - y[::2]) ** 2, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_placeholder_takes_the_arrays_dtype(dtype, rng):
    x, y = sample(rng, (4, 6), dtype), sample(rng, (4, 6), dtype)
    r = GENERIC(pygpu.asarray(x), pygpu.asarray(y))
    assert r.dtype == dtype
    ref = ((x - y) * (x - y)).astype(dtype)
    tol = 2e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(r.copy_to_host(), ref, rtol=tol)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_scalar_is_cast_to_the_placeholders_type(dtype, rng):
    x = sample(rng, (3, 5), dtype)
    r = GENERIC(pygpu.asarray(x), 2)
    assert r.dtype == dtype
    np.testing.assert_allclose(r.copy_to_host(), ((x - dtype(2)) ** 2).astype(dtype),
                               rtol=1e-6)
    r = SQUARED_DIFF(pygpu.asarray(x.astype(np.float32)), 1.5)  # a fixed type
    np.testing.assert_allclose(r.copy_to_host(), (x.astype(np.float32) - 1.5) ** 2,
                               rtol=1e-6)


def test_output_given_is_written_and_returned(rng):
    x, y = sample(rng, (6,), np.float32), sample(rng, (6,), np.float32)
    o = pygpu.empty(6, np.float32)
    assert SQUARED_DIFF(pygpu.asarray(x), pygpu.asarray(y), o) is o
    np.testing.assert_allclose(o.copy_to_host(), (x - y) ** 2, rtol=1e-6)
    o2 = pygpu.zeros((2, 6), np.float64)  # an output binds T; inputs broadcast to it
    assert GENERIC(pygpu.asarray(x.astype(np.float64)), 1.0, out=o2) is o2
    np.testing.assert_allclose(o2.copy_to_host(), np.broadcast_to((x - 1.0) ** 2, (2, 6)),
                               rtol=1e-6)


def test_outputs_given_are_read_in_place(rng):
    # as CuPy's: an output given holds its values (y += x, conditional writes)
    x = sample(rng, (4, 5), np.float32)
    y0 = sample(rng, (4, 5), np.float32)
    y = pygpu.asarray(y0)
    acc = pygpu.ElementwiseKernel("T x", "T y", "y += x", "acc")
    assert acc(pygpu.asarray(x), y) is y
    np.testing.assert_allclose(y.copy_to_host(), y0 + x, rtol=1e-6)
    relu = pygpu.ElementwiseKernel("T x", "T y", "if (x > 0) y = x;", "relu_into")
    o = pygpu.asarray(np.full((4, 5), -7, np.float64))
    relu(pygpu.asarray(x.astype(np.float64)), out=o)
    np.testing.assert_array_equal(o.copy_to_host(), np.where(x > 0, x, -7))
    # in place on an input that is also the output (the same elements)
    acc(y, y)
    np.testing.assert_allclose(y.copy_to_host(), 2 * (y0 + x), rtol=1e-6)


def test_index_size_preamble_and_multiple_outputs(rng):
    x = sample(rng, (3, 4), np.float64)
    k = pygpu.ElementwiseKernel(
        "T x", "T y, int64 j", "y = twice(x) + _ind.size(); j = i", "idx",
        preamble="template <class U> __device__ U twice(U v) { return v + v; }")
    y, j = k(pygpu.asarray(x))
    np.testing.assert_allclose(y.copy_to_host(), 2 * x + x.size)
    np.testing.assert_array_equal(j.copy_to_host(), np.arange(12).reshape(3, 4))
    # NumPy's names of types ("double", "i4"), a placeholder of several letters
    mixed = pygpu.ElementwiseKernel("double x, Tin s", "i4 y", "y = (int)(x * s)", "mixed")
    r = mixed(pygpu.asarray(x), np.float32(3))
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r.copy_to_host(), (x * np.float32(3)).astype(np.int32))
    iota = pygpu.ElementwiseKernel("", "int32 y", "y = i * 3", "iota")
    np.testing.assert_array_equal(iota(size=7).copy_to_host(), np.arange(7) * 3)
    assert pygpu.ElementwiseKernel("float32 a", "float32 b", "b = a", "nr",
                                   no_return=True)(pygpu.asarray(x)) is None


def test_elementwise_errors_are_clear(rng):
    d32 = pygpu.asarray(sample(rng, (4,), np.float32))
    d64 = pygpu.asarray(sample(rng, (4,), np.float64))
    with pytest.raises(ValueError, match="cannot parse 'float32 x y'"):
        pygpu.ElementwiseKernel("float32 x y", "float32 z", "z = x")
    with pytest.raises(ValueError, match="declared twice"):
        pygpu.ElementwiseKernel("T x, T x", "T z", "z = x")
    with pytest.raises(ValueError, match="neither a dtype name nor a type placeholder"):
        pygpu.ElementwiseKernel("3 x", "T z", "z = x")
    with pytest.raises(TypeError, match="no device type 'object'"):
        pygpu.ElementwiseKernel("object x", "T z", "z = x")
    with pytest.raises(TypeError, match="type is mismatched: T is float32"):
        GENERIC(d32, d64)
    with pytest.raises(TypeError, match="cannot determine the type of output"):
        pygpu.ElementwiseKernel("float32 x", "U z", "z = x")(d32)
    with pytest.raises(TypeError, match="wrong number of arguments"):
        GENERIC(d32)
    with pytest.raises(ValueError, match="could not be broadcast"):
        GENERIC(d32, pygpu.asarray(np.ones(3, np.float32)))
    with pytest.raises(ValueError, match="loop size is undecided"):
        pygpu.ElementwiseKernel("", "int32 y", "y = i", "iota2")()
    with pytest.raises(OverflowError):
        pygpu.ElementwiseKernel("int8 x, int8 s", "int8 z", "z = x + s", "i8")(
            pygpu.asarray(np.arange(3, dtype=np.int8)), 300)
    with pytest.raises(pygpu.CompileError) as err:
        pygpu.ElementwiseKernel("T x", "T z", "z = x +* ;", "broken")(d32)
    assert "error" in err.value.log


# (not int64: `y = sqrt(a)` of a long long is ambiguous in CUDA C, as NVRTC
# says, though the host compiler takes it)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, False),
                                           (1, True), ((0, 1), True)])
def test_l2norm_matches_numpy(dtype, axis, keepdims, rng):
    x = sample(rng, (37, 9), dtype)
    r = L2NORM(pygpu.asarray(x), axis=axis, keepdims=keepdims)
    ref = np.sqrt((x * x).sum(axis=axis, keepdims=keepdims))
    assert r.shape == ref.shape and r.dtype == dtype
    if dtype == np.int64:
        np.testing.assert_array_equal(r.copy_to_host(), ref.astype(np.int64))
    else:
        np.testing.assert_allclose(r.copy_to_host(), ref, rtol=1e-5)


def test_reduction_kernel_types_out_and_several_inputs(rng):
    x = sample(rng, (6, 50), np.float32)
    o = pygpu.empty(6, np.float32)
    assert L2NORM(pygpu.asarray(x), o, axis=1) is o
    np.testing.assert_allclose(o.copy_to_host(), np.sqrt((x * x).sum(1)), rtol=1e-5)
    # int32 input, float64 accumulator, a fixed output type
    mean = pygpu.ReductionKernel("int32 x", "float64 y", "x", "a + b", "y = a / _in_n", "0",
                                 "mean_k", reduce_type="double",
                                 preamble="#define _in_n 50.0")
    xi = sample(rng, (6, 50), np.int32)
    np.testing.assert_allclose(mean(pygpu.asarray(xi), axis=1).copy_to_host(),
                               xi.mean(1), rtol=1e-12)
    dot = pygpu.ReductionKernel("T x, T y", "T z", "x * y", "a + b", "z = a", "0", "dot_k")
    y = sample(rng, (50,), np.float32)
    np.testing.assert_allclose(dot(pygpu.asarray(x), pygpu.asarray(y), axis=1).copy_to_host(),
                               (x * y).sum(1), rtol=1e-4)
    maxk = pygpu.ReductionKernel("T x", "T y", "x", "a > b ? a : b", "y = a", "-1000", "max_k")
    np.testing.assert_array_equal(maxk(pygpu.asarray(xi), axis=0).copy_to_host(), xi.max(0))
    empty = L2NORM(pygpu.asarray(np.zeros((0, 3), np.float32)), axis=0)
    np.testing.assert_array_equal(empty.copy_to_host(), np.zeros(3, np.float32))
    # a reduction over nothing: each output is post_map(identity), as CuPy's,
    # also after the pool hands back a block that held other values
    filled = pygpu.asarray(np.arange(12.0))
    del filled
    plus = pygpu.ReductionKernel("T x", "T y", "x", "a + b", "y = a + 100", "7", "plus_k")
    for shape, axis in (((0, 3), 0), ((2, 0, 3), (0, 1)), ((3, 0), 1), ((0,), None)):
        got = plus(pygpu.asarray(np.zeros(shape)), axis=axis).copy_to_host()
        np.testing.assert_array_equal(got, np.full(np.zeros(shape).sum(axis=axis).shape, 107.0))
    top = pygpu.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", "-INFINITY", "top_k")
    assert (top(pygpu.asarray(np.zeros((0, 3))), axis=0).copy_to_host() == -np.inf).all()
    with pytest.raises(TypeError, match="type is mismatched"):
        dot(pygpu.asarray(x), pygpu.asarray(y.astype(np.float64)))
    with pytest.raises(ValueError, match="exactly one output"):
        pygpu.ReductionKernel("T x", "T y, T z", "x", "a + b", "y = a", "0")


NVRTC_CHECK = """
import pygpu
from pygpu import rawkernel
from pygpu._ops import codegen, reduction
pre = "template <class U> __device__ U twice(U v) { return v + v; }"
k = pygpu.ElementwiseKernel(
    "T x, float32 s", "T y, int64 j",
    "y = twice(x) * pg::cast<T>(s) + pg::cast<T>(_ind.size()); j = i", "nv", preamble=pre)
for loop, first in ((("ef", "eq"), None), (("Ff", "Fq"), None), (("qf", "qq"), None),
                    (("efeq", "eq"), 2)):  # outputs given: read too
    op = k._op(loop, first)
    rawkernel.compile_cuda(codegen.render(op, op.loops), arch="sm_90")
r = pygpu.ReductionKernel("T x", "T y", "twice(x) * x", "a + b", "y = sqrt(a)", "0", "l2",
                          preamble=pre)
for c in "efdF":
    spec = r._spec(c, c, c, {"T": c})
    rawkernel.compile_cuda(reduction.render(reduction._variants("reduce", spec, c, c, c)),
                           arch="sm_90")
print("ok")
"""


def test_rendered_sources_compile_with_nvrtc():
    """What a GPU compiles: ElementwiseKernel (i, _ind.size(), a preamble,
    float16 and complex placeholders) and ReductionKernel (every variant of
    the reduce template), through NVRTC in a process of its own."""
    assert run_with_nvrtc(NVRTC_CHECK).strip() == "ok"
