"""Operators and functions give NumPy's answer, or NumPy's exception: type
promotion (NEP 50 for Python and NumPy scalars), broadcasting, out= with
NumPy's casting rule, comparisons, overlap "as if buffered". Each case runs
the same expression on NumPy arrays and on DeviceArrays and compares. The
hypothesis fuzzers at the end take PYGPU_FUZZ_EXAMPLES examples each (200 by
default; the 10^4 of docs/SEMANTICS.md were run with PYGPU_FUZZ_EXAMPLES=10000)."""

import operator
import os

import numpy as np
import pytest
from conftest import random_array

import pygpu
from pygpu import cuda

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
          np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64,
          np.complex128]
OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "==": operator.eq,
       "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
       ">=": operator.ge}


def sample(rng, shape, dtype):
    """Random values of a dtype, small enough that float16 and integer
    arithmetic stay exact where NumPy's is (wrapping is compared too)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), shape,
                            endpoint=True).astype(dtype)
    x = rng.integers(-20, 20, shape) / 4  # exact in float16
    if dtype.kind == "c":
        x = x + 1j * (rng.integers(-20, 20, shape) / 4)
    return x.astype(dtype)


def outcome(fn):
    try:
        with np.errstate(all="ignore"):
            return fn(), None
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return None, type(e)


def host(x):
    return x.copy_to_host() if isinstance(x, pygpu.DeviceArray) else x


def assert_same(expected, got):
    exp, exp_err = expected
    res, err = got
    if exp_err is not None:
        assert err is not None and issubclass(err, exp_err), (err, exp_err)
        return
    assert err is None, err
    res = host(res)
    assert isinstance(res, np.ndarray) and res.dtype == exp.dtype, (res, exp.dtype)
    assert res.shape == exp.shape
    if res.dtype.kind in "fc":
        np.testing.assert_allclose(res, exp, rtol=1e-6 if res.itemsize <= 8 else 1e-12,
                                   atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(res, exp)


def both(rng, fn, *arrays):
    """fn on the NumPy arrays and on their DeviceArray copies."""
    devs = [cuda.to_device(a) if isinstance(a, np.ndarray) and a.ndim else a for a in arrays]
    assert_same(outcome(lambda: fn(*arrays)), outcome(lambda: fn(*devs)))


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("da", DTYPES)
@pytest.mark.parametrize("db", [np.bool_, np.int8, np.uint8, np.int32, np.uint64,
                                np.float16, np.float32, np.float64, np.complex64])
def test_every_operator_on_every_dtype_pair(rng, op, da, db):
    a = sample(rng, (3, 5), da)
    b = sample(rng, (3, 5), db)
    both(rng, OPS[op], a, b)


SCALARS = [0, 1, -1, 7, 2**31, 2**40, -2**63, 2**64, 0.1, -2.5, 1e300, 1 + 2j, True,
           np.int8(-3), np.uint8(200), np.int64(2**31), np.int64(2**40), np.uint64(2**63),
           np.float16(0.5), np.float32(0.1), np.float64(0.1), np.complex64(1j),
           np.bool_(True), np.array(3.5), np.array(7, np.int16)]


@pytest.mark.parametrize("op", ["+", "-", "*", "==", "<", ">="])
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int32, np.uint8, np.uint64,
                                   np.float16, np.float32, np.complex64])
@pytest.mark.parametrize("s", SCALARS, ids=repr)
def test_python_and_numpy_scalars_follow_nep_50(rng, op, dtype, s):
    a = sample(rng, (4,), dtype)
    both(rng, lambda x: OPS[op](x, s), a)
    both(rng, lambda x: OPS[op](s, x), a)


BROADCASTS = [((3, 4), (4,)), ((3, 4), (3, 1)), ((1, 4), (3, 1)), ((2, 1, 5), (4, 1)),
              ((5,), ()), ((0, 3), (3,)), ((3, 4), (5,)), ((2, 3), (3, 2)),
              ((1,), (7, 1, 1)), ((4, 1), (0,))]


@pytest.mark.parametrize("sa, sb", BROADCASTS)
@pytest.mark.parametrize("op", ["+", "*", "<", "!="])
def test_broadcasting(rng, sa, sb, op):
    a = sample(rng, sa, np.float64)
    b = sample(rng, sb, np.int32)
    if not sb:
        b = np.int32(3)
    both(rng, OPS[op], a, b)


def test_views_and_fortran_order_operands(rng):
    h = sample(rng, (6, 8), np.float32)
    g = sample(rng, (8, 6), np.float32)
    both(rng, lambda x, y: x[::2, 1:] + y.T[1:4:1, 1:], h, g)
    both(rng, lambda x, y: x.T * y, h, g)
    both(rng, lambda x, y: x[:, ::-1] - y.T, h, g)
    d = cuda.to_device(np.asfortranarray(h))
    r = d + d
    assert r.flags["F_CONTIGUOUS"]
    np.testing.assert_array_equal(r.copy_to_host(), h + h)


@pytest.mark.parametrize("out_dtype", [np.float64, np.float32, np.int32, np.int64,
                                       np.complex128, np.bool_])
@pytest.mark.parametrize("in_dtype", [np.int32, np.float32, np.float64])
def test_out_follows_numpys_casting_rule(rng, in_dtype, out_dtype):
    a = sample(rng, (3, 4), in_dtype)
    b = sample(rng, (4,), in_dtype)

    def f(x, y):
        o = pygpu.zeros((3, 4), out_dtype) if isinstance(x, pygpu.DeviceArray) else \
            np.zeros((3, 4), out_dtype)
        r = (pygpu.add if isinstance(x, pygpu.DeviceArray) else np.add)(x, y, out=o)
        assert r is o
        return o

    both(rng, f, a, b)


def test_out_must_have_the_broadcast_shape(rng):
    a = cuda.to_device(sample(rng, (2, 3), np.float64))
    with pytest.raises(ValueError, match="non-broadcastable output"):
        pygpu.add(a, a, out=pygpu.zeros(3))


@pytest.mark.parametrize("f", [np.add, np.subtract, np.multiply, np.less, np.divide,
                               np.maximum, pygpu.add])
def test_inputs_broadcast_up_to_a_larger_out(rng, f):
    h = sample(rng, (4,), np.float64)
    d = pygpu.asarray(h)
    dtype = np.bool_ if f is np.less else np.float64
    o = pygpu.zeros((2, 3, 4), dtype=dtype)
    assert f(d, d[::-1], out=o) is o
    ref = np.add if f is pygpu.add else f
    np.testing.assert_array_equal(o.copy_to_host(),
                                  np.broadcast_to(ref(h, h[::-1]), (2, 3, 4)))


def test_pygpu_functions_of_scalars_alone_give_a_0_d_array():
    for f, want in ((pygpu.add, 3), (pygpu.multiply, 2), (pygpu.subtract, -1),
                    (pygpu.maximum, 2)):
        r = f(1, 2)
        assert isinstance(r, pygpu.DeviceArray) and r.shape == () and r.dtype == np.int64
        assert int(r) == want
    assert float(pygpu.add(1, 2.5)) == 3.5


POWER_CASES = [(np.array([True, False]), 2), (np.array([-np.inf, -0.0, 4.0]), 0.5),
               (np.array([-np.inf, -0.0, 4.0], np.float32), 0.5),
               (np.array([-np.inf, -0.0, 4.0], np.float16), 0.5),
               (np.array([-3 + 0j, complex(np.inf, 0), 1e300 + 1e300j]), 0.5),
               (np.array([complex(np.inf, 0), -3 + 0j]), -1),
               (np.array([1e300 + 1e300j, complex(-np.inf, 1)]), 2),
               (np.array([-0.0, 3.0]), -1), (np.array([3, -2], np.int8), 2),
               (np.array([-np.inf, -0.0, 4.0]), np.float64(0.5)),
               (np.array([-np.inf, -0.0, 4.0]), 2.0)]


@pytest.mark.parametrize("h, e", POWER_CASES)
def test_power_follows_numpys_shortcuts(h, e):
    """`a ** 2` (a Python int) is square, and for float and complex arrays
    `a ** -1` reciprocal and `a ** 0.5` sqrt; np.power of float32 and
    float64 with one scalar exponent of 0.5 is sqrt too: (-0.0) ** 0.5 is
    -0.0 and (-inf) ** 0.5 NaN, as NumPy's."""
    with np.errstate(all="ignore"):
        for f in (lambda x: x ** e, lambda x: np.power(x, e)):
            want = f(h)
            got = f(pygpu.asarray(h)).copy_to_host()
            assert got.dtype == want.dtype
            assert str(got.tolist()) == str(want.tolist())
        x, d = h.copy(), pygpu.asarray(h)
        try:
            x **= e
        except TypeError as exc:  # bool **= 2: square's int8 is no bool
            with pytest.raises(type(exc)):
                d **= e
        else:
            d **= e
            assert str(d.copy_to_host().tolist()) == str(x.tolist())


def test_integer_power_refuses_only_the_negative_exponents_it_computes():
    a, b = np.array([2, 3, 4]), np.array([2, -1, 3])
    m = np.array([True, False, True])
    o = pygpu.zeros(3, dtype=np.int64)
    got = np.power(pygpu.asarray(a), pygpu.asarray(b), out=o, where=pygpu.asarray(m))
    np.testing.assert_array_equal(got.copy_to_host(),
                                  np.power(a, b, out=np.zeros(3, np.int64), where=m))
    assert (pygpu.asarray(np.zeros(0, np.int8)) ** -1).shape == (0,)
    with pytest.raises(ValueError, match="negative integer powers"):
        np.power(pygpu.asarray(a), pygpu.asarray(b), out=o, where=pygpu.asarray(~m))
    with pytest.raises(ValueError, match="negative integer powers"):
        np.power(pygpu.asarray(a), -1, out=o, where=pygpu.asarray(m))


def test_where_must_be_bool():
    d = pygpu.asarray(np.arange(4.0))
    with pytest.raises(TypeError, match="dtype\\('int32'\\) to dtype\\('bool'\\)"):
        np.add(d, 1, out=pygpu.zeros(4), where=pygpu.asarray(np.array([1, -2, 3, 0], np.int32)))


def test_half_nextafter_of_equal_zeros_is_the_first():
    a = np.array([0.0, -0.0], np.float16)
    b = np.array([-0.0, 0.0], np.float16)
    got = np.nextafter(pygpu.asarray(a), pygpu.asarray(b)).copy_to_host()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.nextafter(a, b)))


IN_PLACE = ["x[1:] += x[:-1]", "x[:-1] += x[1:]", "x += x[::-1]", "x -= x[0]",
            "x[::2] *= x[1::2]", "x += x", "x[1:, :] -= x[:-1, :]"]


@pytest.mark.parametrize("stmt", IN_PLACE)
def test_in_place_operators_on_overlapping_views(rng, stmt):
    h = sample(rng, (8, 6), np.float64)
    d = cuda.to_device(h)
    exec(stmt, {"x": h})
    exec(stmt, {"x": d})
    np.testing.assert_array_equal(d.copy_to_host(), h)


def test_functions_with_out_overlapping_inputs(rng):
    h = sample(rng, 20, np.float64)
    d = cuda.to_device(h)
    np.add(h[:-1], h[1:], out=h[1:])
    pygpu.add(d[:-1], d[1:], out=d[1:])
    np.testing.assert_array_equal(d.copy_to_host(), h)
    np.multiply(h[::-1], 2.0, out=h)
    pygpu.multiply(d[::-1], 2.0, out=d)
    np.testing.assert_array_equal(d.copy_to_host(), h)


def test_in_place_casting_is_numpys(rng):
    h = sample(rng, 5, np.int32)
    d = cuda.to_device(h)
    with pytest.raises(TypeError):
        d += 1.5  # NumPy: Cannot cast ufunc 'add' output from float64 to int32
    d += np.int64(3)  # int64 -> int32 is same_kind
    h += np.int64(3)
    np.testing.assert_array_equal(d.copy_to_host(), h)


def test_comparisons_are_elementwise_and_in_works(rng):
    h = np.arange(3.0)
    d = cuda.to_device(h)
    assert 1.0 in d and 1 in d and 5 not in d
    assert (d == d[:]).copy_to_host().all()
    assert not (d != d.copy()).copy_to_host().any()
    np.testing.assert_array_equal((d == 1).copy_to_host(), h == 1)
    assert (d == 1).dtype == np.bool_
    with pytest.raises(ValueError, match="ambiguous"):
        bool(d == d)
    assert bool(cuda.to_device(np.array([2.0])) == 2.0)
    with pytest.raises(TypeError, match="unhashable"):
        hash(d)
    assert type(d).__hash__ is None


def test_integer_comparisons_with_out_of_range_python_ints(rng):
    h = sample(rng, 6, np.int32)
    for s in [2**40, -2**40, 2**70]:
        for op in ["==", "!=", "<", "<=", ">", ">="]:
            both(rng, lambda x, op=op, s=s: OPS[op](x, s), h)


def test_asarray_and_astype_convert_as_numpy(rng):
    # values every target dtype holds: out-of-range float-to-int casts are
    # undefined in NumPy too (docs/SEMANTICS.md)
    h = np.abs(sample(rng, (4, 5), np.float64)) * 3
    d = cuda.to_device(h)
    for dt in [np.int32, np.uint8, np.float16, np.complex64, np.bool_, np.int64]:
        with np.errstate(all="ignore"):
            expected = h.astype(dt)
        np.testing.assert_array_equal(pygpu.asarray(d, dtype=dt).copy_to_host(), expected)
        np.testing.assert_array_equal(d.astype(dt).copy_to_host(), expected)
        np.testing.assert_array_equal(d[::2, ::-1].astype(dt).copy_to_host(),
                                      expected[::2, ::-1])
    assert d.astype(np.float64, copy=False) is d
    assert pygpu.asarray(d) is d


def test_format_of_a_zero_d_array():
    d = pygpu.asarray(np.array(3.14159))
    assert f"{d:.2f}" == f"{np.array(3.14159):.2f}" == "3.14"
    with pytest.raises(TypeError):
        f"{pygpu.zeros(3):.2f}"


def test_mixed_devices_are_refused(rng):
    if len(cuda.gpus) < 2:
        pytest.skip("one device only")
    a = pygpu.zeros(4)
    with cuda.gpus[1]:
        b = pygpu.zeros(4)
    with pytest.raises(ValueError, match="different devices"):
        a + b


def test_operators_refuse_host_arrays_clearly(rng):
    d = pygpu.zeros(3)
    with pytest.raises(TypeError, match="asarray"):
        pygpu.add(d, np.ones(3))
    with pytest.raises(TypeError):
        d + [1, 2, 3]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128, np.float16])
def test_large_and_odd_sizes(rng, dtype):
    for n in [1, 255, 257, 4097, 100_003]:
        a = random_array(rng, n, np.float64).astype(dtype)
        b = random_array(rng, n, np.float64).astype(dtype)
        both(rng, operator.add, a, b)
        both(rng, operator.lt, a, b)


# ---- fuzzing against NumPy -------------------------------------------------------------

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

FUZZ = settings(max_examples=int(os.environ.get("PYGPU_FUZZ_EXAMPLES", "200")),
                deadline=None, suppress_health_check=list(HealthCheck))
small_dtypes = st.sampled_from([np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                np.uint32, np.uint64, np.float16, np.float32, np.float64,
                                np.complex64, np.complex128])
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


@st.composite
def operand(draw, shape=None):
    kind = draw(st.sampled_from(["array", "array", "python", "numpy"]))
    if kind == "python":
        return draw(st.one_of(st.booleans(), st.integers(-2**65, 2**65),
                              st.floats(allow_nan=True, width=64), st.complex_numbers(
                                  max_magnitude=1e6, allow_nan=False)))
    dtype = draw(small_dtypes)
    if kind == "numpy":
        return np.dtype(dtype).type(draw(st.integers(0, 100)))
    return draw(hnp.arrays(dtype, shape if shape is not None else draw(shapes),
                           elements=hnp.from_dtype(np.dtype(dtype), allow_nan=False,
                                                   allow_infinity=False)
                           if np.dtype(dtype).kind != "f" or np.dtype(dtype).itemsize > 2
                           else st.integers(-50, 50).map(float)))


def to_dev(x):
    return cuda.to_device(x) if isinstance(x, np.ndarray) else x


@FUZZ
@given(a=operand(), b=operand(), op=st.sampled_from(list(OPS)))
def test_fuzz_promotion_broadcasting_and_comparisons(a, b, op):
    if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
        a = np.array([a])  # one operand must be an array
        if a.dtype == object:  # a Python int past 64 bits: no array of it on a device
            return
    expected = outcome(lambda: OPS[op](a, b))
    got = outcome(lambda: OPS[op](to_dev(a), to_dev(b)))
    if expected[1] is None and got[1] is None and expected[0].dtype.kind in "fc":
        # float rounding of huge Python ints and of float16 may differ in the last place
        res = host(got[0])
        assert res.dtype == expected[0].dtype and res.shape == expected[0].shape
        np.testing.assert_allclose(res, expected[0], rtol=2e-3, equal_nan=True)
        return
    assert_same(expected, got)


@FUZZ
@given(data=st.data(), n=st.integers(1, 12), op=st.sampled_from(["+", "-", "*"]))
def test_fuzz_in_place_on_overlapping_views(data, n, op):
    h = np.arange(n * 3, dtype=np.float64).reshape(n, 3) - 7
    d = cuda.to_device(h)
    sl = st.slices(n)
    s1, s2 = data.draw(sl), data.draw(sl)
    if len(range(n)[s1]) != len(range(n)[s2]):
        return
    stmt = f"x[s1] {op}= x[s2]"
    ctx_h, ctx_d = {"x": h, "s1": s1, "s2": s2}, {"x": d, "s1": s1, "s2": s2}
    exec(stmt, ctx_h)
    exec(stmt, ctx_d)
    np.testing.assert_array_equal(d.copy_to_host(), h)


@FUZZ
@given(data=st.data(), n=st.integers(1, 10))
def test_fuzz_setitem_from_views_of_the_same_buffer(data, n):
    h = (np.arange(n * n, dtype=np.int32).reshape(n, n) * 3) % 17
    d = cuda.to_device(h)
    s1 = (data.draw(st.slices(n)), data.draw(st.slices(n)))
    s2 = (data.draw(st.slices(n)), data.draw(st.slices(n)))
    transpose = data.draw(st.booleans())
    src_h, src_d = (h[s2].T, d[s2].T) if transpose else (h[s2], d[s2])
    e1 = outcome(lambda: h.__setitem__(s1, src_h))
    e2 = outcome(lambda: d.__setitem__(s1, src_d))
    assert (e1[1] is None) == (e2[1] is None), (e1, e2)
    np.testing.assert_array_equal(d.copy_to_host(), h)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.float16])
def test_operations_on_empty_arrays(dtype):
    e = pygpu.zeros(0, dtype)
    for r in [e + e, e + 1, 2 * e, e < e, e - e[:0]]:
        assert r.shape == (0,) and r.copy_to_host().shape == (0,)
    z = pygpu.zeros((3, 0), dtype)
    assert (z + pygpu.zeros(0, dtype)).shape == (3, 0)
    assert (pygpu.asarray(np.array(1.5)) + e).shape == (0,)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64,
                                   np.complex128])
def test_maximum_and_minimum_of_signed_zeros_are_numpys(dtype):
    """+0.0 against -0.0 compare equal: NumPy's float32 and float64 loops
    give the second operand, its float16 and complex loops the first, at
    every length (fmax and fmin: docs/SEMANTICS.md)."""
    for n in (1, 2, 3, 5, 8, 17, 1001):
        pos = np.zeros(n, dtype)
        neg = (np.zeros(n) * -1).astype(dtype)
        if np.dtype(dtype).kind == "c":
            neg = (np.zeros(n) * -1 - 1j * np.zeros(n)).astype(dtype)
        for f in (np.maximum, np.minimum):
            for x, y in ((pos, neg), (neg, pos)):
                got = f(pygpu.asarray(x), pygpu.asarray(y)).copy_to_host()
                want = f(x, y)
                np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real),
                                              err_msg=f"{f.__name__} {np.dtype(dtype)} {n}")
                np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))
    x = np.array([-0.0, 0.0, -1.0, 2.0], dtype)  # relu keeps NumPy's zeros
    got = np.maximum(pygpu.asarray(x), dtype(0)).copy_to_host()
    np.testing.assert_array_equal(np.signbit(got.real), np.signbit(np.maximum(x, dtype(0)).real))


@pytest.mark.parametrize("f", [np.logical_and, np.logical_or, np.logical_xor,
                               pygpu.logical_and])
def test_logical_ufuncs_refuse_python_ints_beyond_int64_as_numpy(f):
    for dtype in (np.float64, np.int8, np.bool_):
        d = pygpu.asarray(np.array([1, 0, 3], dtype))
        ref = np.logical_and if f is pygpu.logical_and else f
        for _ in range(2):  # the second call could take a kept plan
            np.testing.assert_array_equal(f(d, 2).copy_to_host(),
                                          ref(np.array([1, 0, 3], dtype), 2))
        for v in (2**64, -2**63 - 1, 2**63):
            with pytest.raises(OverflowError):
                f(d, v)
            with pytest.raises(OverflowError):
                f(v, d)


def test_numbers_numpy_holds_as_object_are_refused():
    """NumPy makes an object array of d ** Fraction(1, 2); pygpu, which has
    no object dtype, refuses it (it gave float64 through Fraction.__rpow__)."""
    from decimal import Decimal
    from fractions import Fraction

    d = pygpu.asarray(np.arange(3.0))
    for f in (lambda: d ** Fraction(1, 2), lambda: d / Decimal(2), lambda: d // Fraction(1),
              lambda: np.power(d, Fraction(1, 2))):
        with pytest.raises(TypeError):
            f()
    # Fraction's own ** turns itself into a float first, with NumPy's arrays too
    np.testing.assert_array_equal((Fraction(1, 2) ** d).copy_to_host(),
                                  Fraction(1, 2) ** np.arange(3.0))


def test_a_host_array_in_place_with_a_device_array_says_to_copy():
    d = pygpu.asarray(np.eye(3))
    h = np.eye(3)
    with pytest.raises(TypeError, match="pygpu.asarray"):
        h @= d
    with pytest.raises(TypeError, match="pygpu.asarray"):
        np.sin(d, out=h)
