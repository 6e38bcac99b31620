"""NumPy's functions made of ufuncs: where, clip, round/around, real, imag,
conj, isclose; and pygpu's ufunc objects as NumPy's."""

import numpy as np
import pytest

import pygpu
from pygpu._ops.table import OPS

DTYPES = [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.float16, np.float32,
          np.float64, np.complex64, np.complex128]


def sample(rng, shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -50, 50, shape).astype(dt)
    x = rng.uniform(-10, 10, shape)
    if dt.kind == "c":
        x = x + 1j * rng.uniform(-10, 10, shape)
    return x.astype(dt)


@pytest.mark.parametrize("dtype", DTYPES)
def test_where_matches_numpy(dtype, rng):
    c = rng.random((5, 6)) < 0.5
    x, y = sample(rng, (5, 6), dtype), sample(rng, (1, 6), dtype)
    dc, dx, dy = pygpu.asarray(c), pygpu.asarray(x), pygpu.asarray(y)
    for args, dargs in [((c, x, y), (dc, dx, dy)), ((c, x, 0), (dc, dx, 0)),
                        ((c[0], x[::-1], y), (dc[0], dx[::-1], dy)),
                        ((c, 2.5, x), (dc, 2.5, dx))]:
        want = np.where(*args)
        got = pygpu.where(*dargs)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.copy_to_host(), want)


def test_where_refuses_host_arrays_and_odd_types():
    d = pygpu.asarray(np.ones(3))
    with pytest.raises(TypeError, match="pygpu.asarray"):
        pygpu.where(d > 0, np.ones(3), d)
    with pytest.raises(TypeError, match="str"):
        pygpu.where(d > 0, "a", d)
    with pytest.raises(TypeError, match="longdouble|float128"):
        pygpu.where(d > 0, np.longdouble(1), d)


@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.float32, np.float64])
def test_clip_matches_numpy(dtype, rng):
    x = sample(rng, (40,), dtype)
    if np.dtype(dtype).kind == "f":
        x[3] = np.nan
    d = pygpu.asarray(x)
    for lo, hi in [(0, 5), (-3, None), (None, 7), (2.5, 4)]:
        want = np.clip(x, lo, hi)
        got = pygpu.clip(d, lo, hi)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.copy_to_host(), want)
    with pytest.raises(TypeError):  # NumPy's clip needs a bound
        np.clip(d)
    # the array API's clip (pygpu.clip) with no bounds is a copy
    np.testing.assert_array_equal(pygpu.clip(d).copy_to_host(), x)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float16, np.float32,
                                   np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("decimals", [0, 1, 2, -1, -2])
def test_round_matches_numpy(dtype, decimals, rng):
    x = sample(rng, (50,), dtype) * (np.dtype(dtype).type(37) if np.dtype(dtype).kind != "u"
                                     else np.dtype(dtype).type(3))
    x = x.astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[:4] = np.array([2.5, -0.5, 1.25, 15.0]).astype(dtype)
    want = np.round(x, decimals)
    got = pygpu.round(pygpu.asarray(x), decimals)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-6 if np.dtype(dtype)
                               .itemsize >= 8 else 1e-3)
    assert pygpu.around is pygpu.round


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.complex64, np.complex128])
def test_real_imag_conj_match_numpy(dtype, rng):
    x = sample(rng, (3, 4), dtype)
    d = pygpu.asarray(x)
    for f, g in [(pygpu.real, np.real), (pygpu.imag, np.imag), (pygpu.conj, np.conj)]:
        want = g(x)
        got = f(d)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.copy_to_host(), want)


@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_matches_numpy(equal_nan, rng):
    a = rng.standard_normal(64)
    b = a + rng.standard_normal(64) * np.logspace(-12, 0, 64)
    a[:6] = [np.inf, -np.inf, np.nan, np.nan, 0.0, 1.0]
    b[:6] = [np.inf, np.inf, np.nan, 1.0, 1e-9, np.inf]
    want = np.isclose(a, b, equal_nan=equal_nan)
    got = pygpu.isclose(pygpu.asarray(a), pygpu.asarray(b), equal_nan=equal_nan)
    np.testing.assert_array_equal(got.copy_to_host(), want)
    a32 = a.astype(np.float32)
    got = pygpu.isclose(pygpu.asarray(a32), 1.0, rtol=1e-3)
    np.testing.assert_array_equal(got.copy_to_host(), np.isclose(a32, 1.0, rtol=1e-3))


def test_the_seeds_first_cupy_example(rng):
    x = rng.standard_normal(1000)
    d = pygpu.asarray(x)
    got = pygpu.sin(d) * 2 + pygpu.sqrt(pygpu.abs(d))
    np.testing.assert_allclose(got.copy_to_host(), np.sin(x) * 2 + np.sqrt(np.abs(x)),
                               rtol=1e-13)


def test_every_ufunc_of_the_table_is_in_the_namespace():
    for name, op in OPS.items():
        f = getattr(pygpu, name)
        assert isinstance(f, pygpu.ufunc), name
        assert (f.nin, f.nout) == (op.ufunc.nin, op.ufunc.nout)
        assert f.types == [f"{i}->{o}" for i, o in op.loops]
    assert pygpu.abs is pygpu.absolute and pygpu.true_divide is pygpu.divide


def test_ufunc_arguments_as_numpy(rng):
    x = rng.standard_normal(10).astype(np.float32)
    d = pygpu.asarray(x)
    # dtype=, casting=, positional out, where=
    got = pygpu.sin(d, dtype=np.float64)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.copy_to_host(), np.sin(x, dtype=np.float64), rtol=1e-6)
    out = pygpu.zeros(10, np.float32)
    assert pygpu.exp(d, out) is out
    np.testing.assert_allclose(out.copy_to_host(), np.exp(x), rtol=1e-6)
    mask = x > 0
    out = pygpu.zeros(10, np.float64)
    pygpu.sqrt(d, out=out, where=pygpu.asarray(mask))
    want = np.zeros(10)
    np.sqrt(x, out=want, where=mask)
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-6)
    with pytest.raises(TypeError, match="Cannot cast|cast"):
        pygpu.sin(d, out=pygpu.zeros(10, np.int32))
    with pytest.raises(TypeError, match="unexpected keyword"):
        pygpu.sin(d, axis=0)
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(10,\) "
                                         r"\(3,\)"):
        pygpu.sin(d, out=pygpu.zeros(3, np.float32))
    with pytest.raises(ValueError, match=r"non-broadcastable output operand with shape \(10,\) "
                                         r"doesn't match the broadcast shape \(2,10\)"):
        pygpu.maximum(pygpu.ones((2, 10)), 1.0, out=pygpu.zeros(10))
    wide = pygpu.zeros((2, 10), np.float32)
    pygpu.sin(d, out=wide)  # the inputs broadcast to out's shape, as in NumPy
    np.testing.assert_allclose(wide.copy_to_host(), np.sin(np.broadcast_to(x, (2, 10))),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="negative integer powers"):
        pygpu.power(pygpu.asarray(np.arange(3)), pygpu.asarray(np.array([1, -1, 2])))
    with pytest.raises(TypeError, match="pygpu.asarray"):
        pygpu.maximum(d, x)
    with pytest.raises(TypeError, match="float128|longdouble"):
        pygpu.maximum(d, np.longdouble(1))
    # a Python int beyond the dtype: NumPy's OverflowError, but comparisons answer
    i8 = pygpu.asarray(np.arange(5, dtype=np.int8))
    with pytest.raises(OverflowError):
        pygpu.maximum(i8, 300)
    np.testing.assert_array_equal(pygpu.less(i8, 300).copy_to_host(), np.ones(5, bool))
    # in place on an overlapping view gives NumPy's answer (as if buffered)
    h = np.arange(10.0)
    dv = pygpu.asarray(h)
    pygpu.negative(dv[:-1], out=dv[1:])
    np.negative(h[:-1], out=h[1:])
    np.testing.assert_array_equal(dv.copy_to_host(), h)


def test_many_axes_and_scalars_alone(rng):
    x = sample(rng, (2, 3, 1, 2, 3, 2, 2), np.float64)
    y = sample(rng, (3, 1, 2, 1, 2, 2), np.float64)
    dx = pygpu.asarray(x)
    dy = pygpu.asarray(y)
    got = pygpu.arctan2(dx[:, ::-1], dy[:, :, ::-1])
    np.testing.assert_allclose(got.copy_to_host(), np.arctan2(x[:, ::-1], y[:, :, ::-1]),
                               rtol=1e-13)
    r = pygpu.sin(0.5)
    assert isinstance(r, pygpu.DeviceArray) and r.shape == () and r.dtype == np.float64


def test_repeated_calls_stay_right(rng):
    # the second call of a kind takes the kept plan (pygpu/_ops/ufunc.py): it
    # must convert each call's own scalars and fall back where NumPy raises
    from pygpu._ops import ufunc

    x = rng.standard_normal(50).astype(np.float32)
    d = pygpu.asarray(x)
    for k in range(3):
        for s in (2, 2.5, np.float32(-1.5), True):
            got = pygpu.maximum(d, s)
            assert got.dtype == np.maximum(x, s).dtype
            np.testing.assert_array_equal(got.copy_to_host(), np.maximum(x, s))
        r = pygpu.sin(0.25 * (k + 1))  # scalars alone: no plan
        np.testing.assert_allclose(r.copy_to_host(), np.sin(0.25 * (k + 1)), rtol=1e-15)
        np.testing.assert_allclose(pygpu.sin(d[::2]).copy_to_host(), np.sin(x[::2]), rtol=1e-6)
    assert any(key[0] == "maximum" for key in ufunc._plans)
    i8 = pygpu.asarray(np.arange(4, dtype=np.int8))
    for v in (3, 100, 300, -200, 5):  # 300 and -200 do not fit: NumPy's OverflowError
        if -128 <= v <= 127:
            np.testing.assert_array_equal(pygpu.maximum(i8, v).copy_to_host(),
                                          np.maximum(np.arange(4, dtype=np.int8), v))
        else:
            with pytest.raises(OverflowError):
                pygpu.maximum(i8, v)


@pytest.mark.parametrize("sa,sb", [((5,), (5,)), ((3, 5), (5,)), ((3, 5), (5, 4)),
                                   ((2, 3, 5), (5, 4)), ((2, 3, 5), (6, 5, 4)), ((5,), (5, 4)),
                                   ((2, 3, 5), (5,)), ((), (3,)), ((3, 2), ())])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_dot_inner_vdot_match_numpy(sa, sb, dtype, rng):
    a = sample(rng, sa, dtype)
    b = sample(rng, sb, dtype)
    da, db = pygpu.asarray(a), pygpu.asarray(b)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    got = pygpu.dot(da, db)
    want = np.dot(a, b)
    assert got.shape == np.shape(want) and got.dtype == np.result_type(want)
    np.testing.assert_allclose(got.copy_to_host(), want, rtol=tol, atol=tol)
    if len(sa) and len(sb) and sa[-1] == sb[-1]:
        np.testing.assert_allclose(pygpu.inner(da, db).copy_to_host(), np.inner(a, b),
                                   rtol=tol, atol=tol)
    if a.size == b.size:
        np.testing.assert_allclose(pygpu.vdot(da, db).copy_to_host(), np.vdot(a, b),
                                   rtol=tol, atol=tol)
    with pytest.raises(TypeError, match="pygpu.asarray"):
        pygpu.dot(da, b if b.ndim else np.ones(3))


def test_repeated_calls_with_out_stay_right(rng):
    # out= and in-place operators keep a plan that writes into the output
    # (pygpu/_ops/ufunc.py _runner_out): each call must write its own output,
    # and an output that overlaps an input other than element for element
    # must still go the safe way
    from pygpu._ops import ufunc

    x = rng.standard_normal(64).astype(np.float32)
    for _ in range(3):
        d, e = pygpu.asarray(x), pygpu.empty(64, np.float32)
        assert pygpu.sin(d, out=e) is e
        np.testing.assert_allclose(e.copy_to_host(), np.sin(x), rtol=1e-6)
        assert np.multiply(d, 3, out=(e,)) is e
        np.testing.assert_array_equal(e.copy_to_host(), x * 3)
        d /= 2  # in place, the output is the input
        np.testing.assert_array_equal(d.copy_to_host(), x / 2)
        h, dh = x.copy(), pygpu.asarray(x)  # partial overlap: shifted by one
        np.add(dh[:-1], 1, out=dh[1:])
        np.add(h[:-1], 1, out=h[1:])
        np.testing.assert_array_equal(dh.copy_to_host(), h)
        h, dh = x.copy(), pygpu.asarray(x)  # reversed view into itself
        np.negative(dh, out=dh[::-1])
        np.negative(h, out=h[::-1])
        np.testing.assert_array_equal(dh.copy_to_host(), h)
    assert any(key[0] is ufunc._OUT for key in ufunc._plans)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "power",
                                  "arctan2", "less", "logical_and", "divmod", "ldexp"])
def test_ufunc_outer_as_numpy(name, rng):
    f = getattr(np, name)
    a = (rng.standard_normal((2, 3)) * 3).astype(np.float32)
    b = (rng.standard_normal(4) * 3).astype(np.float32)
    if name == "ldexp":
        b = b.astype(np.int32)
    da, db = pygpu.asarray(a), pygpu.asarray(b)
    with np.errstate(all="ignore"):  # NumPy's own warnings on the references
        cases = [(f.outer(da, db), f.outer(a, b)),
                 (getattr(pygpu, name).outer(da[:, ::-1], db), f.outer(a[:, ::-1], b)),
                 (f.outer(da, 2), f.outer(a, 2)), (f.outer(3, db), f.outer(3, b))]
    for got, want in cases:
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,), strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g.copy_to_host(), w, rtol=1e-6, equal_nan=True)


def test_ufunc_outer_out_and_errors(rng):
    a, b = rng.standard_normal(3), rng.standard_normal((2, 2))
    da, db = pygpu.asarray(a), pygpu.asarray(b)
    o = pygpu.empty((3, 2, 2))
    assert np.add.outer(da, db, out=o) is o
    np.testing.assert_allclose(o.copy_to_host(), np.add.outer(a, b))
    with pytest.raises(ValueError, match="outer product only supported for binary"):
        pygpu.sin.outer(da, db)
    with pytest.raises(TypeError, match="pygpu.asarray"):
        np.add.outer(da, b)


def test_round_of_bools_and_of_huge_decimals_is_numpys():
    b = np.array([True, False])
    got = np.round(pygpu.asarray(b))
    assert got.dtype == np.float16 and got.copy_to_host().tolist() == [1.0, 0.0]
    with pytest.raises(TypeError, match="Cannot cast ufunc 'multiply'"):
        np.round(pygpu.asarray(b), 1)
    f = np.array([1.5, 2.25])
    for dtype in (np.float64, np.float32, np.float16):
        for decimals in (400, -400, 39, -39):
            with np.errstate(all="ignore"):
                want = np.round(f.astype(dtype), decimals)
            got = np.round(pygpu.asarray(f.astype(dtype)), decimals).copy_to_host()
            np.testing.assert_array_equal(got, want)
