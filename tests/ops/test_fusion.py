"""pygpu.fuse and pygpu.vectorize (pygpu/_ops/fusion.py) against NumPy on the
same function: dtypes (NumPy's, NEP 50 for Python scalars), broadcasting,
where, comparisons, a final reduction, the kernel cache, and the TypeErrors
for what a fused function cannot do."""

import math

import numpy as np
import pytest
from conftest import run_with_nvrtc

import pygpu
from pygpu._ops import codegen


def seeds(x):
    return np.sin(x) * 2 + np.sqrt(np.abs(x))


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 4e-6), (np.float64, 1e-13)])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_seeds_expression_matches_numpy(dtype, rtol, layout, rng):
    x = rng.uniform(-10, 10, (37, 21)).astype(dtype)
    d = pygpu.asarray(x)
    if layout == "strided":
        x, d = x[::-2, 1::3], d[::-2, 1::3]
    got = pygpu.fuse(seeds)(d)
    assert got.dtype == dtype and got.shape == x.shape
    np.testing.assert_allclose(got.copy_to_host(), seeds(x), rtol=rtol, atol=rtol)


def test_second_call_of_a_signature_compiles_nothing(rng):
    f = pygpu.fuse(lambda x, y: x * y - x / 3.0)
    a = rng.standard_normal(100).astype(np.float32)
    b = rng.standard_normal(100).astype(np.float32)
    before = len(codegen._units)
    r1 = f(pygpu.asarray(a), pygpu.asarray(b))
    assert len(codegen._units) == before + 1  # one kernel unit for the whole expression
    r2 = f(pygpu.asarray(b), pygpu.asarray(a))
    assert len(codegen._units) == before + 1
    np.testing.assert_allclose(r1.copy_to_host(), a * b - a / 3.0, rtol=1e-6)
    np.testing.assert_allclose(r2.copy_to_host(), b * a - b / 3.0, rtol=1e-6)
    r3 = f(pygpu.asarray(a.astype(np.float64)), pygpu.asarray(b))  # a new signature
    assert len(codegen._units) == before + 2 and r3.dtype == np.float64


def test_scalars_broadcasting_and_nep50_types(rng):
    f = pygpu.fuse(lambda x, y, a: (x + y) * a - 1)
    x = rng.standard_normal((4, 1, 5)).astype(np.float32)
    y = rng.standard_normal((3, 1)).astype(np.float16)
    for a in (2, 2.5, np.float64(2.5), np.int8(3)):
        got = f(pygpu.asarray(x), pygpu.asarray(y), a)
        want = (x + y) * a - 1
        assert got.dtype == want.dtype and got.shape == want.shape, a
        np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-6)


def test_where_and_comparisons(rng):
    f = pygpu.fuse(lambda x, y: np.where((x > y) & (x != 0), x * 2, y - 1.5))
    g = pygpu.fuse(lambda x, y: x <= y)
    x = rng.integers(-5, 5, (6, 7)).astype(np.int32)
    y = rng.standard_normal(7)
    got = f(pygpu.asarray(x), pygpu.asarray(y))
    want = np.where((x > y) & (x != 0), x * 2, y - 1.5)
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_array_equal(got.copy_to_host(), want)
    c = g(pygpu.asarray(x), pygpu.asarray(y))
    assert c.dtype == np.bool_
    np.testing.assert_array_equal(c.copy_to_host(), x <= y)


def test_integer_ops_and_a_non_finite_constant(rng):
    f = pygpu.fuse(lambda x: (x // 3) % 5 + (x << 1) - abs(-x))
    x = np.arange(-20, 20, dtype=np.int32)
    np.testing.assert_array_equal(f(pygpu.asarray(x)).copy_to_host(),
                                  (x // 3) % 5 + (x << 1) - abs(-x))
    g = pygpu.fuse(lambda x: np.minimum(x, math.inf) + x.astype(np.float64) * -math.inf)
    h = np.array([1.5, -2.0, 0.5], np.float32)
    got = g(pygpu.asarray(h))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.copy_to_host(),
                                  np.minimum(h, math.inf) + h.astype(np.float64) * -math.inf)


@pytest.mark.parametrize("spell", ["method", "numpy", "reduce"])
def test_final_reduction(spell, rng):
    x = rng.standard_normal((20, 30)).astype(np.float32)
    body = {"method": lambda x: (x * x + 1).sum(),
            "numpy": lambda x: np.sum(x * x + 1),
            "reduce": lambda x: np.add.reduce(x * x + 1, axis=None)}[spell]
    got = pygpu.fuse(body)(pygpu.asarray(x))
    assert got.dtype == np.float32
    np.testing.assert_allclose(float(got.copy_to_host()), (x * x + 1).sum(), rtol=1e-5)
    m = pygpu.fuse(lambda x: np.max(abs(x - 0.5), axis=0))(pygpu.asarray(x))
    np.testing.assert_array_equal(m.copy_to_host(), np.max(abs(x - 0.5), axis=0))


def test_vectorize_picks_the_first_safe_signature(rng):
    @pygpu.vectorize(["float32(float32, float32)", "float64(float64, float64)"])
    def axpb(a, b):
        return a * b + np.sqrt(abs(a))

    x = rng.standard_normal(50).astype(np.float32)
    y = rng.standard_normal(50)
    r32 = axpb(pygpu.asarray(x), pygpu.asarray(x))
    r64 = axpb(pygpu.asarray(x), pygpu.asarray(y))  # float32 with float64: the second
    assert r32.dtype == np.float32 and r64.dtype == np.float64
    np.testing.assert_allclose(r32.copy_to_host(), x * x + np.sqrt(abs(x)), rtol=1e-6)
    np.testing.assert_allclose(r64.copy_to_host(), x * y + np.sqrt(abs(x.astype(float))),
                               rtol=1e-12)
    with pytest.raises(TypeError, match="no signature"):
        axpb(pygpu.asarray(np.zeros(3, np.complex64)), pygpu.asarray(x))


@pytest.mark.parametrize("body,what", [
    (lambda x: x if x > 0 else -x, "control flow"),
    (lambda x: math.sin(x), "math"),
    (lambda x: np.cumsum(x), "numpy.cumsum"),
    (lambda x: x.sum() + 1, "result of a reduction"),
    (lambda x: x[0], "indexing"),
    (lambda x: np.divmod(x, 2), "more than one output"),
    (lambda x: 3, "result of type int"),
    (lambda x: pygpu.sin(x), "use numpy's"),
])
def test_unsupported_is_a_type_error_naming_it(body, what):
    with pytest.raises(TypeError, match=what):
        pygpu.fuse(body)(pygpu.asarray(np.ones(4, np.float32)))


def test_host_arrays_are_refused():
    with pytest.raises(TypeError, match="host memory"):
        pygpu.fuse(seeds)(pygpu.asarray(np.ones(4)), np.ones(4))


NVRTC_CHECK = """
import numpy as np
from pygpu import rawkernel
from pygpu._ops import codegen, fusion as F, reduction as R

def f(x, a):
    return np.where(x > a, np.sin(x) * 2 + np.sqrt(np.abs(x)), x.astype(np.float32) - np.inf)

k = F._trace(f, (("a", "e"), ("w", float)))
rawkernel.compile_cuda(codegen.render(k.op, k.op.loops), arch="sm_90")
print(k.loop)
r = F._trace(lambda x: (np.sin(x) * 2 + np.sqrt(np.abs(x))).sum(), (("a", "e"),))
spec = F._map_spec(r)
loop = R._op_loop("add", "e")
rawkernel.compile_cuda(R.render([("reduce", spec, "e", loop, loop)]), arch="sm_90")
"""


def test_rendered_source_compiles_with_nvrtc():
    """Every layout and scalar choice of one fused kernel with a half input,
    a weak scalar, where, a cast and a non-finite constant, and a fused sum
    (the expression as the reduction's map; one variant of the template, the
    others differ only in its flags, and each takes NVRTC seconds): the
    source NVRTC gets on a GPU."""
    assert run_with_nvrtc(NVRTC_CHECK).strip() == "('edd', 'f')"


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, True), (1, False)])
def test_reduction_of_one_array_is_one_pass(name, axis, keepdims, rng):
    x = rng.uniform(0.5, 1.5, (16, 24)).astype(np.float32)
    f = pygpu.fuse(lambda x: getattr(np.sin(x) * 0.01 + 1, name)(axis=axis, keepdims=keepdims))
    elementwise = len(codegen._units)
    got = f(pygpu.asarray(x))
    assert len(codegen._units) == elementwise  # the expression is the reduction's map
    want = getattr(np.sin(x) * 0.01 + 1, name)(axis=axis, keepdims=keepdims)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-5)


def test_reduction_dtype_is_numpys():
    x = np.arange(100, dtype=np.int8)
    got = pygpu.fuse(lambda x: (x * 2).sum())(pygpu.asarray(x))  # int8 wraps, int64 sum
    assert got.dtype == np.int64 and int(got.copy_to_host()) == (x * 2).sum()
    h = np.linspace(-1, 1, 7).astype(np.float16)
    got = pygpu.fuse(lambda x: np.exp(x).sum(dtype=np.float64))(pygpu.asarray(h))
    assert got.dtype == np.float64
    assert float(got.copy_to_host()) == np.exp(h).sum(dtype=np.float64)


def test_empty_0d_and_many_axes(rng):
    f = pygpu.fuse(lambda x, y: x * y + 1)
    e = f(pygpu.asarray(np.zeros((0, 3), np.float32)), pygpu.asarray(np.ones(3, np.float32)))
    assert e.shape == (0, 3) and e.dtype == np.float32
    z = f(pygpu.asarray(np.float64(2.0)), 3)
    assert z.shape == () and float(z.copy_to_host()) == 7.0
    a = rng.standard_normal((2, 3, 2, 3, 2, 3))  # more axes than the kernels fold
    b = rng.standard_normal((3, 1, 3, 2, 1))
    got = f(pygpu.asarray(a)[..., ::2], pygpu.asarray(b))
    np.testing.assert_array_equal(got.copy_to_host(), a[..., ::2] * b + 1)


def test_a_closures_device_array_is_refused():
    d = pygpu.asarray(np.ones(4, np.float32))
    with pytest.raises(TypeError, match="pass it as an argument"):
        pygpu.fuse(lambda x: x + d)(d)


def test_a_python_int_beyond_the_loops_type_is_numpys_overflow_error():
    f = pygpu.fuse(lambda x, k: x + k)
    x = np.arange(5, dtype=np.int8)
    np.testing.assert_array_equal(f(pygpu.asarray(x), 100).copy_to_host(), x + 100)
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        f(pygpu.asarray(x), 1000)
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        pygpu.fuse(lambda x: x * 300)(pygpu.asarray(x))


@pygpu.vectorize(["float32(float32, float32)", "float64(float64, float64)"])
def _branchy(a, b):
    if a > b:
        return math.sin(a) * b
    return math.sqrt(abs(b)) + 1.0


def test_vectorize_with_math_and_control_flow_compiles_through_the_jit():
    x = np.linspace(-2, 2, 11).astype(np.float32)
    y = np.linspace(1, -1, 11).astype(np.float32)
    want = np.array([_branchy.func(a, b) for a, b in zip(x.tolist(), y.tolist(), strict=True)])
    got = _branchy(pygpu.asarray(x), pygpu.asarray(y))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-6)
    got = _branchy(pygpu.asarray(x.reshape(11, 1)), 0.5)  # broadcast, a scalar
    assert got.shape == (11, 1)
    np.testing.assert_allclose(got.copy_to_host()[:, 0],
                               [_branchy.func(a, 0.5) for a in x.tolist()], rtol=1e-6)


def test_integer_powers_refuse_negative_exponents_as_numpy():
    @pygpu.fuse
    def f(x, y):
        return x ** y

    x = pygpu.asarray(np.array([2, 3]))
    with pytest.raises(ValueError, match="negative integer powers"):
        f(x, pygpu.asarray(np.array([-1, 2])))
    with pytest.raises(ValueError, match="negative integer powers"):
        f(x, -1)
    assert f(x, pygpu.asarray(np.array([1, 2]))).copy_to_host().tolist() == [2, 9]
    assert f(x, 2).copy_to_host().tolist() == [4, 9]

    @pygpu.fuse
    def computed(x, y):
        return x ** (y - 3)

    with pytest.raises(TypeError, match="exponent the function computes"):
        computed(x, x)
