"""Every reduction and scan (pygpu/_ops/reduction.py, kernels from table.py's
REDUCTIONS) x every dtype NumPy has it for x axes (None, an axis, a negative
one, a tuple, keepdims) x layouts (contiguous, strided, negative strides,
transposed, 0-d, empty, odd sizes, the shapes that take other launch paths:
many tiny rows, one long row, few long columns) against NumPy.

Exact answers (integers, bool, max, min, the arg reductions) compare equal;
float answers compare with the float64 (complex128) answer of NumPy within a
bound relative to the answer and, for sums, to the sum of magnitudes, as
docs/SEMANTICS.md says: pygpu accumulates float16 in float32 and rounds once,
where NumPy rounds more often.
"""

import os
import re
import warnings

import numpy as np
import pytest
from conftest import run_with_nvrtc

import pygpu
from pygpu import cuda
from pygpu._ops import reduction as R
from pygpu._ops.table import DEVICE_TYPES, KINDS, REORDERABLE, canonical

ALL = "".join(dict.fromkeys(canonical(c) for c in DEVICE_TYPES))  # ?bBhHiIqQefdFD
INEXACT = "efdFD"
# the bound on float answers, by the input's type
RTOL = {"e": 2e-3, "f": 2e-5, "d": 1e-12, "F": 2e-5, "D": 1e-12}

# name: (pygpu's function, NumPy's, input types, axis kind, the magnitude
# that bounds a float answer's error)
FUNCTIONS = {
    "sum": (R.sum, np.sum, ALL, "tuple", "sum"),
    "prod": (R.prod, np.prod, ALL, "tuple", None),
    "max": (R.max, np.max, ALL, "tuple", None),
    "min": (R.min, np.min, ALL, "tuple", None),
    "any": (R.any, np.any, ALL, "tuple", None),
    "all": (R.all, np.all, ALL, "tuple", None),
    "mean": (R.mean, np.mean, ALL, "tuple", "mean"),
    "var": (R.var, np.var, ALL, "tuple", None),
    "std": (R.std, np.std, ALL, "tuple", None),
    "count_nonzero": (R.count_nonzero, np.count_nonzero, ALL, "tuple", None),
    "ptp": (R.ptp, np.ptp, ALL.replace("?", ""), "tuple", None),
    "argmax": (R.argmax, np.argmax, ALL, "int", None),
    "argmin": (R.argmin, np.argmin, ALL, "int", None),
    "nansum": (R.nansum, np.nansum, INEXACT + "i", "tuple", "sum"),
    "nanprod": (R.nanprod, np.nanprod, INEXACT, "tuple", None),
    "nanmax": (R.nanmax, np.nanmax, INEXACT, "tuple", None),
    "nanmin": (R.nanmin, np.nanmin, INEXACT, "tuple", None),
    "nanmean": (R.nanmean, np.nanmean, INEXACT, "tuple", "mean"),
    "nanvar": (R.nanvar, np.nanvar, INEXACT, "tuple", None),
    "nanstd": (R.nanstd, np.nanstd, INEXACT, "tuple", None),
    "nanargmax": (R.nanargmax, np.nanargmax, INEXACT, "int", None),
    "nanargmin": (R.nanargmin, np.nanargmin, INEXACT, "int", None),
    "cumsum": (R.cumsum, np.cumsum, ALL, "scan", "sum"),
    "cumprod": (R.cumprod, np.cumprod, ALL, "scan", None),
    "nancumsum": (R.nancumsum, np.nancumsum, INEXACT, "scan", "sum"),
}
CASES = [(name, c) for name, f in FUNCTIONS.items() for c in f[2]]


def values(rng, char, shape, name):
    """Random inputs of type char for the function `name`; never all zeros;
    products exact (powers of two), and the nan* functions get NaNs."""
    dt = np.dtype(char)
    kind = KINDS[char]
    if kind == "b":
        return rng.random(shape) < 0.5
    if "prod" in name:  # +-1, +-i and a few powers of two: exact products
        p = 1e-4 if char == "e" else 0.01
        x = rng.choice([0.5, 1, 2], shape, p=[p, 1 - 2 * p, p])
        x = x * rng.choice([1, -1] if kind != "c" else [1, -1, 1j, -1j], shape)
        return x.astype(dt) if kind != "u" else np.abs(x).astype(dt)
    if kind in "iu":
        return rng.integers(0 if kind == "u" else -9, 9, shape, endpoint=True).astype(dt)
    else:
        x = rng.standard_normal(shape)
        if kind == "c":
            x = x + 1j * rng.standard_normal(shape)
    if name.startswith("nan"):
        x[rng.random(shape) < 0.1] = np.nan
    return x.astype(dt)


def layouts(rng, char, name, kind):
    """(label, host input, device input, keyword arguments)."""
    base = values(rng, char, (7, 1000 + 7), name)
    d = pygpu.asarray(base)
    axes = [None, 0, -1] if kind != "tuple" else [None, 0, -1, (0, 1)]
    for axis in axes:
        yield f"contiguous, axis={axis}", base, d, {"axis": axis}
    if kind != "scan":
        yield "keepdims", base, d, {"axis": -1, "keepdims": True}
        yield "keepdims, all", base, d, {"axis": None, "keepdims": True}
    yield "odd size 1-d", base[0, :1007], d[0, :1007], {"axis": 0}
    yield "strided", base[::2, ::3], d[::2, ::3], {"axis": 1}
    yield "strided, all", base[::2, ::3], d[::2, ::3], {"axis": None}
    yield "negative strides", base[::-1, ::-2], d[::-1, ::-2], {"axis": 0}
    yield "transposed", base.T, d.T, {"axis": 1}
    cube = values(rng, char, (4, 5, 6), name)
    dc = pygpu.asarray(cube)
    if kind == "tuple":
        yield "3-d, axes (0, 2)", cube, dc, {"axis": (0, 2)}
        yield "3-d transposed, axes (0, 1)", cube.transpose(2, 0, 1), \
            dc.transpose(2, 0, 1), {"axis": (0, 1)}
    else:
        yield "3-d, axis 1", cube, dc, {"axis": 1}
        yield "3-d transposed, axis 0", cube.transpose(2, 0, 1), dc.transpose(2, 0, 1), \
            {"axis": 0}
    zero = base[1:2, 3:4].reshape(())
    yield "0-d", zero, pygpu.asarray(zero), {"axis": None}
    # the shapes that take the other launch paths, small
    tiny_rows = values(rng, char, (1000, 2), name)
    yield "many tiny rows", tiny_rows, pygpu.asarray(tiny_rows), {"axis": -1}
    row = values(rng, char, (1, 2**16), name)
    yield "one long row", row, pygpu.asarray(row), {"axis": 1}
    columns = values(rng, char, (2**14, 4), name)
    yield "few long columns", columns, pygpu.asarray(columns), {"axis": 0}


def truth(np_func, x, kwargs):
    """NumPy's answer in float64 (complex128) for float input."""
    up = {"e": "d", "f": "d", "F": "D"}.get(x.dtype.char)
    return np_func(x.astype(up) if up else x, **kwargs)


def check(name, got, x, kwargs):
    np_func, bound = FUNCTIONS[name][1], FUNCTIONS[name][4]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = np.asarray(np_func(x, **kwargs))
        ref = np.asarray(truth(np_func, x, kwargs))
    assert isinstance(got, pygpu.DeviceArray)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    h = got.copy_to_host()
    if want.dtype.kind not in "fc" or name.endswith(("max", "min")):
        np.testing.assert_array_equal(h, want)
        return
    scale = 0
    if bound == "sum":
        with np.errstate(all="ignore"):
            scale = np.abs(np.asarray(truth(np_func, np.abs(x), kwargs)))
    elif bound == "mean":
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scale = np.abs(np.asarray(truth(np_func, np.abs(x), kwargs)))
    tol = RTOL.get(x.dtype.char, RTOL["d"])
    wide = np.complex128 if h.dtype.kind == "c" else np.float64
    err = np.abs(h.astype(wide) - ref)
    numpys = np.abs(want.astype(wide) - ref)  # NumPy's own error bounds ours too
    with np.errstate(invalid="ignore"):
        ok = (err <= np.maximum(tol * (np.abs(ref) + scale), 2 * numpys)) | \
            (np.isnan(err) & np.isnan(numpys)) | (h == want)
    assert ok.all(), f"max error {np.nanmax(err)}, at {np.argwhere(~ok)[:3].tolist()}"


def same_error(f, *args, **kwargs):
    """f raises what NumPy raises: (type, message) or None."""
    try:
        f(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - any error NumPy gives is the answer
        return type(exc), str(exc)
    return None


@pytest.mark.parametrize("name,char", CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_reduction_matches_numpy_in_every_layout(name, char, rng):
    f, np_func, _, kind, _ = FUNCTIONS[name]
    for label, x, d, kwargs in layouts(rng, char, name, kind):
        if kind == "scan" and x.ndim == 0 and kwargs["axis"] is not None:
            continue
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                np_func(x, **kwargs)
        except ValueError:  # e.g. nanargmax of an all-NaN slice: tested below
            continue
        try:
            got = f(d, **kwargs)
            check(name, got, x, kwargs)
        except AssertionError as exc:
            raise AssertionError(f"{name} {char}, {label} {kwargs}: {exc}") from None


EMPTY = [(name, c) for name, f in FUNCTIONS.items() for c in f[2][:1] + f[2][-1:]]


@pytest.mark.parametrize("name,char", EMPTY, ids=[f"{n}-{c}" for n, c in EMPTY])
def test_empty_input_gives_numpy_answer_or_error(name, char):
    f, np_func, _, kind, _ = FUNCTIONS[name]
    for shape, axis in [((0, 5), 0), ((0, 5), 1), ((0, 5), None), ((3, 0), 0), ((0,), None)]:
        x = np.zeros(shape, np.dtype(char))
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            error = same_error(np_func, x, axis=axis)
            if error is not None:
                with pytest.raises(error[0], match=re.escape(error[1])):
                    f(pygpu.asarray(x), axis=axis)
                continue
            want = np.asarray(np_func(x, axis=axis))
            got = f(pygpu.asarray(x), axis=axis)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.copy_to_host(), want)


def test_empty_max_raises_numpys_error():
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum "
                                         "which has no identity"):
        R.max(pygpu.zeros((0, 3)), axis=0)
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        R.argmax(pygpu.zeros(0))


# ---- ufunc.reduce and ufunc.accumulate of every op that has them -------------------

UFUNC_CASES = [(op, c) for op in REORDERABLE for c in ALL
               if same_error(getattr(np, op).reduce, np.ones(2, c)) is None]


@pytest.mark.parametrize("op,char", UFUNC_CASES, ids=[f"{o}-{c}" for o, c in UFUNC_CASES])
def test_ufunc_reduce_and_accumulate_match_numpy(op, char, rng):
    u = getattr(np, op)
    x = values(rng, char, (6, 1000 + 7), "prod" if op == "multiply" else op)
    d = pygpu.asarray(x)
    for kwargs in [{}, {"axis": 1}, {"axis": None}, {"axis": (0, 1), "keepdims": True}]:
        want = u.reduce(x, **kwargs)
        got = R.reduce(op, d, **kwargs)
        assert got.dtype == np.asarray(want).dtype
        h = got.copy_to_host()
        if np.asarray(want).dtype.kind in "fc" and op in ("add", "multiply"):
            np.testing.assert_allclose(h, want, rtol=50 * RTOL[char])
        else:
            np.testing.assert_array_equal(h, want)
    for kwargs in [{}, {"axis": 1}]:
        want = u.accumulate(x, **kwargs)
        got = R.accumulate(op, d, **kwargs)
        assert got.dtype == want.dtype and got.shape == want.shape
        if want.dtype.kind in "fc" and op in ("add", "multiply"):
            np.testing.assert_allclose(got.copy_to_host(), want, rtol=50 * RTOL[char],
                                       atol=50 * RTOL[char] * np.abs(x).sum())
        else:
            np.testing.assert_array_equal(got.copy_to_host(), want)


def test_reduce_of_an_op_whose_order_matters_is_refused():
    with pytest.raises(TypeError, match="subtract.reduce"):
        R.reduce("subtract", pygpu.ones(3))


# ---- arguments: dtype, out, initial, where ----------------------------------------------

def test_dtype_argument_sets_the_accumulator(rng):
    x = rng.integers(-100, 100, (50, 300)).astype(np.int8)
    d = pygpu.asarray(x)
    for f, np_func, kwargs in [(R.sum, np.sum, {"dtype": np.float32}),
                               (R.sum, np.sum, {"dtype": np.int8, "axis": 0}),
                               (R.prod, np.prod, {"dtype": np.int16, "axis": 1}),
                               (R.mean, np.mean, {"dtype": np.float32, "axis": 0}),
                               (R.var, np.var, {"dtype": np.float64, "axis": 1}),
                               (R.cumsum, np.cumsum, {"dtype": np.int16, "axis": 1})]:
        want = np_func(x, **kwargs)
        got = f(d, **kwargs)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-6)


def test_out_receives_the_result_in_its_own_dtype(rng):
    x = rng.standard_normal((40, 33)).astype(np.float32)
    d = pygpu.asarray(x)
    out = pygpu.zeros(33, np.float32)
    assert R.sum(d, axis=0, out=out) is out
    np.testing.assert_allclose(out.copy_to_host(), x.sum(0), rtol=1e-5)
    out64 = pygpu.zeros((1, 33), np.float64)
    assert R.mean(d, axis=0, keepdims=True, out=out64) is out64
    np.testing.assert_allclose(out64.copy_to_host(), x.mean(0, keepdims=True), rtol=1e-5)
    strided = pygpu.zeros(66, np.int64)[::2]
    R.argmax(d, axis=0, out=strided)
    np.testing.assert_array_equal(strided.copy_to_host(), x.argmax(0))
    c = pygpu.zeros((40, 33), np.float64)
    R.cumsum(d, axis=1, out=c)
    np.testing.assert_allclose(c.copy_to_host(), x.cumsum(1), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="shape"):
        R.sum(d, axis=0, out=pygpu.zeros(32, np.float32))


def test_out_that_overlaps_the_input_is_buffered(rng):
    x = rng.standard_normal((8, 64)).astype(np.float64)
    d = pygpu.asarray(x)
    R.sum(d, axis=0, out=d[0])
    np.testing.assert_allclose(d.copy_to_host()[0], x.sum(0), rtol=1e-12)


def test_initial_and_where_as_numpy(rng):
    x = rng.standard_normal((30, 41)).astype(np.float32)
    w = rng.random((30, 41)) < 0.6
    d, dw = pygpu.asarray(x), pygpu.asarray(w)
    wrow = pygpu.asarray(w[:1])
    for f, np_func, kwargs in [
            (R.sum, np.sum, {"initial": 5.0}),
            (R.sum, np.sum, {"axis": 0, "where": dw}),
            (R.sum, np.sum, {"axis": 1, "where": wrow, "initial": -1.0}),
            (R.max, np.max, {"axis": 1, "where": dw, "initial": -10.0}),
            (R.min, np.min, {"initial": -10.0}),
            (R.prod, np.prod, {"axis": 0, "where": dw}),
            (R.mean, np.mean, {"axis": 0, "where": dw}),
            (R.mean, np.mean, {"where": wrow}),
            (R.var, np.var, {"axis": 1, "where": dw, "ddof": 1}),
            (R.std, np.std, {"axis": 0, "where": wrow}),
            (R.nanmean, np.nanmean, {"axis": 0, "where": dw}),
            (R.nanvar, np.nanvar, {"axis": 1, "where": dw}),
            (R.any, np.any, {"axis": 0, "where": dw}),
            (R.all, np.all, {"axis": 1, "where": dw})]:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # NumPy's for slices with too few elements
            want = np_func(x, **{k: (w if v is dw else w[:1] if v is wrow else v)
                                 for k, v in kwargs.items()})
        got = f(d, **kwargs)
        assert got.dtype == np.asarray(want).dtype, (f.__name__, kwargs)
        np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-4, atol=1e-5,
                                   err_msg=f"{f.__name__} {kwargs}")
    with pytest.raises(ValueError, match="to use a where mask one has to specify 'initial'"):
        R.max(d, where=dw)


@pytest.mark.parametrize("f", [np.cumsum, np.cumprod, np.nancumsum, np.nancumprod])
@pytest.mark.parametrize("ic, oc", [("q", "d"), ("b", "q"), ("f", "d"), ("?", "d"),
                                    ("d", "f"), ("B", "e")])
def test_scans_with_out_run_in_outs_dtype(f, ic, oc):
    h = np.array([2**40, 2**40, 3] if ic == "q" else [100, 100, 3] if ic in "bB" else
                 [True, True, False] if ic == "?" else [1e30, 1e30, 3], dtype=ic)
    with np.errstate(all="ignore"):
        want = f(h, out=np.zeros(3, oc))
        got = f(pygpu.asarray(h), out=pygpu.zeros(3, oc)).copy_to_host()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("ic, oc", [("b", "q"), ("f", "d"), ("?", "d"), ("q", "f"),
                                    ("b", "b")])
def test_ptp_into_a_wider_out_is_numpys(ic, oc):
    h = np.array([[-100, 100], [3, 4]]).astype(ic)
    for axis, shape in ((None, ()), (0, (2,)), (1, (2,))):
        want = np.ptp(h, axis=axis, out=np.zeros(shape, oc))
        got = np.ptp(pygpu.asarray(h), axis=axis, out=pygpu.zeros(shape, oc)).copy_to_host()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_initial_none_is_no_initial_value():
    d = pygpu.asarray(np.array([1.5, -2.0, 3.0, 0.0]))
    assert float(np.add.reduce(d, initial=None)) == 2.5
    assert float(np.minimum.reduce(d, initial=None)) == -2.0
    assert float(R.sum(d, initial=None)) == 2.5
    assert int(np.add.reduce(pygpu.asarray(np.array([1, 2, 3], np.int32)), initial=None)) == 6


@pytest.mark.parametrize("shape, axis", [((1,), None), ((3,), None), ((5, 1), 1),
                                         ((4, 2), 1), ((2, 3), 0), ((8, 2), -1)])
def test_reductions_start_from_the_identity(shape, axis):
    """NumPy's reduce starts from the op's identity: the sum of -0.0s is
    +0.0 and gcd.reduce of a negative number is its absolute value, for
    short rows too."""
    z = np.full(shape, -0.0)
    for h in (z, z.astype(np.float32)):
        got = pygpu.asarray(h).sum(axis=axis).copy_to_host()
        np.testing.assert_array_equal(np.signbit(got), np.signbit(h.sum(axis=axis)))
    g = -np.arange(5, 5 + np.prod(shape)).reshape(shape)
    want = np.gcd.reduce(g, axis=axis)
    np.testing.assert_array_equal(np.gcd.reduce(pygpu.asarray(g), axis=axis).copy_to_host(),
                                  want)


def test_axis_0_of_a_0_d_array_is_all_of_it():
    z = np.array(5.0)
    for f in ("sum", "max", "any", "count_nonzero", "ptp", "nansum", "argmax", "argmin",
              "cumsum", "cumprod"):
        for axis in (0, -1):
            got = getattr(pygpu, f)(pygpu.asarray(z), axis=axis).copy_to_host()
            want = getattr(np, f)(z, axis=axis)
            assert got.shape == np.shape(want) and (got == want).all(), (f, axis)
    assert float(np.add.reduce(pygpu.asarray(z))) == 5.0
    with pytest.raises(np.exceptions.AxisError):
        pygpu.sum(pygpu.asarray(z), axis=(0,))


def test_ddof_and_correction(rng):
    x = rng.standard_normal((5, 200))
    d = pygpu.asarray(x)
    np.testing.assert_allclose(R.var(d, axis=1, ddof=1).copy_to_host(), x.var(1, ddof=1))
    np.testing.assert_allclose(R.std(d, correction=2).copy_to_host(), np.std(x, correction=2))
    with pytest.warns(RuntimeWarning, match="Degrees of freedom <= 0"):
        r = R.var(d, axis=0, ddof=5)
    assert np.isinf(r.copy_to_host()).all() or np.isnan(r.copy_to_host()).all()


# ---- NaNs ----------------------------------------------------------------------------------

def test_nan_propagates_and_nan_functions_skip_it():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [4.0, 5.0, -1.0]])
    d = pygpu.asarray(x)
    np.testing.assert_array_equal(R.max(d, axis=1).copy_to_host(), x.max(1))
    np.testing.assert_array_equal(R.argmax(d, axis=1).copy_to_host(), x.argmax(1))
    np.testing.assert_array_equal(R.argmin(d, axis=0).copy_to_host(), x.argmin(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f, np_func in [(R.nanmax, np.nanmax), (R.nanmin, np.nanmin),
                           (R.nanmean, np.nanmean), (R.nanvar, np.nanvar),
                           (R.nansum, np.nansum)]:
            np.testing.assert_allclose(f(d, axis=1).copy_to_host(), np_func(x, axis=1),
                                       equal_nan=True)
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        R.nanargmax(d, axis=1)
    np.testing.assert_array_equal(R.nanargmin(d, axis=0).copy_to_host(), np.nanargmin(x, 0))


def test_first_nan_and_first_maximum_win_across_threads_and_blocks(rng):
    """Long rows split between threads and blocks (and 16-byte loads): the
    index NumPy gives, the first NaN or the first of equal maxima."""
    x = rng.integers(0, 50, (3, 2**16)).astype(np.float32)
    x[1, [40000, 30000, 50000]] = np.nan
    x[2, 20000] = x[2, 60000] = 99
    d = pygpu.asarray(x)
    for f, np_func in [(R.argmax, np.argmax), (R.argmin, np.argmin)]:
        np.testing.assert_array_equal(f(d, axis=1).copy_to_host(), np_func(x, axis=1))
        assert f(d).item() == np_func(x)
        assert f(d[2]).item() == np_func(x[2])
        assert f(d[:, ::-1], axis=1).copy_to_host().tolist() == np_func(x[:, ::-1], 1).tolist()
    np.testing.assert_array_equal(R.nanargmax(d, axis=1).copy_to_host(), np.nanargmax(x, 1))
    np.testing.assert_array_equal(R.max(d, axis=1).copy_to_host(), x.max(1))


def test_complex_argmax_orders_as_numpy():
    x = np.array([1 + 5j, 2 + 0j, 2 + 1j, 2 + 1j, np.nan + 0j, 0 + np.nan * 1j, -3 + 0j])
    d = pygpu.asarray(x)
    for n in range(1, len(x) + 1):
        assert R.argmax(d[:n]).item() == np.argmax(x[:n])
        assert R.argmin(d[:n]).item() == np.argmin(x[:n])


# ---- accuracy, results, devices ---------------------------------------------------------

def test_float32_sum_is_as_accurate_as_numpys_pairwise_sum(rng):
    # the 2^26 values on a GPU; 2^22 on the simulator (3 s a sum of 2^26)
    n = 2**22 if pygpu._core._host_modules() else 2**26
    for x in (rng.standard_normal(n).astype(np.float32), rng.random(n).astype(np.float32)):
        exact = x.astype(np.float64).sum()
        ulp = float(np.spacing(np.float32(exact)))
        got = R.sum(pygpu.asarray(x)).item()
        assert abs(got - exact) <= abs(float(np.sum(x)) - exact) + ulp
        y = x[:2**22].reshape(2**11, 2**11)
        got = R.mean(pygpu.asarray(y), axis=0).copy_to_host()
        want = y.astype(np.float64).mean(0)
        assert np.abs(got - want).max() <= 1e-6 * np.abs(x).max()


def test_full_reduction_is_a_0d_device_array(rng):
    d = pygpu.asarray(rng.standard_normal((3, 4)))
    for f in (R.sum, R.max, R.argmax, R.mean, R.any, R.count_nonzero):
        r = f(d)
        assert isinstance(r, pygpu.DeviceArray) and r.shape == ()


def test_bad_arguments_raise_numpys_errors(rng):
    d = pygpu.asarray(rng.standard_normal((3, 4)))
    with pytest.raises(np.exceptions.AxisError):
        R.sum(d, axis=2)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        R.sum(d, axis=(0, 0))
    with pytest.raises(TypeError):
        R.argmax(d, axis=(0,))
    with pytest.raises(TypeError, match="host memory"):
        R.sum(np.ones(3))
    with pytest.raises(TypeError, match="cannot accumulate on a scalar"):
        R.accumulate("add", pygpu.asarray(np.float64(1)))


@pytest.mark.skipif(len(cuda.gpus) < 2, reason="needs two devices")
def test_reduction_runs_on_the_arrays_device(rng):
    x = rng.standard_normal((64, 65))
    with cuda.gpus[1]:
        d = pygpu.asarray(x)
    r = R.sum(d, axis=0)
    assert r.device.id == 1
    np.testing.assert_allclose(r.copy_to_host(), x.sum(0))
    c = R.cumsum(d)
    assert c.device.id == 1


NVRTC_CHECK = """
from pygpu._ops import reduction as R
from pygpu._ops.table import REDUCTIONS
kernels = []
for name in REDUCTIONS:
    loop = "q" if name.startswith("bitwise") or name in ("gcd", "count_nonzero") else \\
        "?" if name.startswith("logical") else "D"
    out = "q" if name.startswith(("arg", "nanarg")) else \\
        "d" if name in ("var", "std", "nanvar", "nanstd") else loop
    x = "e" if loop == "D" and "arg" not in name else loop  # an input cast on load
    kernels += R._variants("reduce", name, x, loop, out)
    kernels += R._variants("scan", name, loop, loop, loop)[:2]
    if name in {f[2] for f in R._OP_FUNCTIONS.values() if f[0] == "scan"}:
        kernels += [("scan_row", name, x, loop, loop)]
rawkernel.compile_cuda(R.render(kernels), arch="sm_90")
"""


def test_every_reduction_compiles_with_nvrtc():
    """Each Reduction of the table on its widest loop, in every variant of
    both templates: the source NVRTC gets on a GPU (in a process of its own,
    where the simulator does not stand in for NVRTC)."""
    run_with_nvrtc(NVRTC_CHECK)


@pytest.mark.parametrize("shape,axis", [((1000,), None), ((37, 5), 0), ((37, 5), 1),
                                        ((4, 6, 8), (0, 2)), ((3, 1 << 12), -1),
                                        ((1 << 14,), 0), ((200, 3), None)])
@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.bool_, np.complex64])
def test_repeated_reductions_take_the_kept_plan_and_stay_right(shape, axis, dtype, rng):
    # the second call of a kind replays the first one's launches (reduction.py's
    # _plans): each call must read its own input and give its own answer
    for k in range(3):
        x = (rng.standard_normal(shape) * 10).astype(dtype)
        for view in (x, x[::-1] if x.ndim == 1 else x[:, ::-1]):
            d = pygpu.asarray(np.ascontiguousarray(view)) if k == 0 else \
                (pygpu.asarray(x)[::-1] if x.ndim == 1 else pygpu.asarray(x)[:, ::-1]) \
                if view is not x else pygpu.asarray(x)
            for name in ("sum", "max", "prod", "mean", "argmax"):
                if name == "prod" and dtype != np.bool_:
                    continue
                if name == "argmax" and isinstance(axis, tuple):
                    continue
                for keepdims in (False, True):
                    got = getattr(d, name)(axis=axis, keepdims=keepdims)
                    want = getattr(np, name)(view, axis=axis, keepdims=keepdims)
                    assert got.dtype == np.asarray(want).dtype
                    assert got.shape == np.shape(want)
                    np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-4, atol=1e-3)
    assert R._plans


@pytest.mark.parametrize("shape,axis", [((1001, 2), -1), ((1001, 4), 1), ((1001, 2, 2), 2),
                                        ((130, 64), 0), ((1001, 4), 0), ((33, 8, 4), (0, 1))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.complex64])
def test_16_byte_kernels_and_their_plans_follow_the_address(shape, axis, dtype, rng):
    # short rows back to back (reduce_rows), outputs side by side (reduce_cols)
    # and long rows (reduce_vec) load 16 bytes at once where the address
    # allows: a plan kept for an aligned array must not be replayed on a view
    # of the same shape and strides that starts 4 or 8 bytes further on
    x = (rng.standard_normal((shape[0] + 1,) + shape[1:]) * 10).astype(dtype)
    base = pygpu.asarray(x)
    for name in ("sum", "max", "argmax", "mean"):
        if name in ("max", "argmax") and x.dtype.kind == "c":
            continue
        if name == "argmax" and isinstance(axis, tuple):
            continue
        for _ in range(2):
            for d, h in ((base[:-1], x[:-1]), (base[1:], x[1:])):
                got = getattr(d, name)(axis=axis)
                want = getattr(np, name)(h, axis=axis)
                np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-4, atol=1e-3,
                                           err_msg=f"{name} {shape} axis={axis} {d.ptr % 16}")


@pytest.mark.parametrize("shape,axis", [((70001,), None), ((70001,), 0), ((3, 9000), None),
                                        ((3, 9000), 1), ((9000, 3), 0), ((37, 5), 1),
                                        ((1 << 15, 2), 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.complex64])
def test_repeated_scans_take_the_kept_plan_and_stay_right(shape, axis, dtype, rng):
    # the second cumsum of a kind replays the first one's launches (_plans,
    # with the single-pass scan's state zeroed again each time): each call
    # must read its own input and give its own answer; a view that is not C
    # contiguous (cumsum copies it) and one of the same shape that starts
    # elsewhere do not replay an aligned array's plan wrongly
    for _ in range(3):
        x = (rng.standard_normal(shape) * 4).astype(dtype)
        big = pygpu.asarray(np.concatenate([x.reshape(-1)[:1], x.reshape(-1)]))
        views = [(pygpu.asarray(x), x), (big[1:1 + x.size].reshape(shape), x)]
        if x.ndim == 2:
            views.append((pygpu.asarray(x.T.copy()).T, x))
        for d, h in views:
            for name in ("cumsum", "cumprod"):
                if name == "cumprod" and dtype != np.int16:
                    continue
                got = getattr(d, name)(axis=axis)
                want = getattr(np, name)(h, axis=axis)
                assert got.dtype == want.dtype and got.shape == want.shape
                if want.dtype.kind in "iub":
                    np.testing.assert_array_equal(got.copy_to_host(), want)
                else:
                    np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-3,
                                               atol=1e-2 * np.sqrt(x.size))
    assert any(key[0] == "cumsum" for key in R._plans)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8,
                                   np.bool_, np.complex128, np.float16])
def test_long_rows_scan_in_one_pass_as_numpy(dtype, rng):
    # rows longer than a tile (2048 to 8192 elements) take the single-pass scan (reduce.h
    # scan_row: tiles chained by decoupled look-back): sizes that end inside
    # a tile, on a tile's edge and on a thread's, reversed and strided views
    for n in (2049, 8193, 3 * 8192 + 5, 70001):
        x = (rng.standard_normal(n) * 4).astype(dtype)
        d = pygpu.asarray(x)
        for view, h in ((d, x), (d[::-1], x[::-1]), (d[1::3], x[1::3])):
            if h.size <= 2048:
                continue
            got, want = view.cumsum(), np.cumsum(h)
            assert got.dtype == want.dtype and got.shape == want.shape
            if want.dtype.kind in "iub":
                np.testing.assert_array_equal(got.copy_to_host(), want)
            elif dtype == np.float16:  # accumulated in float32 (SEMANTICS.md)
                exact = np.cumsum(h.astype(np.float64))
                np.testing.assert_allclose(got.copy_to_host(), exact, rtol=1e-2,
                                           atol=0.05 * np.sqrt(n))
            else:
                np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-4,
                                           atol=1e-4 * np.sqrt(n))
    i = pygpu.asarray(np.arange(1, 10001, dtype=np.int64) % 7)
    h = np.arange(1, 10001, dtype=np.int64) % 7
    np.testing.assert_array_equal(np.maximum.accumulate(i).copy_to_host(),
                                  np.maximum.accumulate(h))
    np.testing.assert_array_equal(np.bitwise_xor.accumulate(i).copy_to_host(),
                                  np.bitwise_xor.accumulate(h))
    h32 = (np.arange(10000, dtype=np.int32) * 7919) % 10007  # a 4-byte accumulator
    np.testing.assert_array_equal(np.maximum.accumulate(pygpu.asarray(h32)).copy_to_host(),
                                  np.maximum.accumulate(h32))
    b = np.arange(9000) % 4000 == 3999  # bool, 1 byte
    np.testing.assert_array_equal(np.logical_or.accumulate(pygpu.asarray(b)).copy_to_host(),
                                  np.logical_or.accumulate(b))
    z = pygpu.asarray(np.full(5000, -0.0))  # the first element as it is
    assert np.signbit(z.cumsum().copy_to_host()[0])


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
def test_var_about_a_given_mean_as_numpy(name, dtype, rng):
    # NumPy 2's mean=: the mean of |a - mean|^2, the mean as given (broadcast,
    # its own dtype; nanvar subtracts into a's dtype)
    x = (rng.standard_normal((5, 7)) * 3).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * x[::-1]
    d = pygpu.asarray(x)
    for axis in (0, 1, None, (0, 1)):
        m = x.mean(axis=axis, keepdims=True)
        wide = m.astype(np.complex128 if m.dtype.kind == "c" else np.float64)
        for mine, dmine in ((m, pygpu.asarray(m)), (wide, pygpu.asarray(wide)), (0.5, 0.5)):
            want = getattr(np, name)(x, axis=axis, mean=mine, ddof=1)
            got = getattr(np, name)(d, axis=axis, mean=dmine, ddof=1)
            assert got.dtype == np.asarray(want).dtype and got.shape == np.shape(want)
            np.testing.assert_allclose(got.copy_to_host(), want, rtol=2e-5)
    with pytest.raises(TypeError, match="pygpu.asarray"):
        R.var(d, axis=0, mean=x.mean(0, keepdims=True))
    with pytest.raises(TypeError, match="both mean= and where="):
        R.var(d, axis=0, mean=pygpu.asarray(x.mean(0, keepdims=True)),
              where=pygpu.asarray(np.ones(x.shape, bool)))


# ---- hypothesis: random shapes, axes, dtypes and views against NumPy -----------------

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

FUZZ_FUNCS = ["sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any",
              "all", "count_nonzero", "ptp", "cumsum", "cumprod", "nansum", "nanmax",
              "nanmean"]
FUZZ_DTYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "float32",
               "float64", "complex64"]


@settings(max_examples=int(os.environ.get("PYGPU_FUZZ_EXAMPLES", 80)), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(FUZZ_FUNCS), dtype=st.sampled_from(FUZZ_DTYPES), data=st.data(),
       shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6),
       keepdims=st.booleans(), flip=st.booleans())
def test_reductions_match_numpy_on_random_arrays(name, dtype, data, shape, keepdims, flip):
    kind = np.dtype(dtype).kind
    part = np.dtype(dtype).type(0).real.dtype if kind == "c" else np.dtype(dtype)
    parts = [data.draw(hnp.arrays(part, shape, elements=hnp.from_dtype(
        part, allow_nan=False, allow_infinity=False, min_value=-4 if kind in "fc" else None,
        max_value=4 if kind in "fc" else None))) for _ in range(2 if kind == "c" else 1)]
    x = (parts[0] + 1j * parts[1]).astype(dtype) if kind == "c" else parts[0]
    if kind in "fc" and name.startswith("nan") and x.size:  # some NaNs to skip
        x = x.copy()
        x.flat[data.draw(st.integers(0, x.size - 1))] = np.nan
    if flip and x.ndim:
        x = x[..., ::-1]
    ndim = x.ndim
    if name in ("argmax", "argmin", "cumsum", "cumprod"):
        axis = data.draw(st.sampled_from([None, *range(-ndim, ndim)]))
    else:
        axis = data.draw(st.one_of(st.none(), st.sampled_from(list(range(-ndim, ndim)) or [None]),
                                   st.lists(st.integers(0, max(ndim - 1, 0)), unique=True,
                                            max_size=ndim).map(tuple)))
    kwargs = {"axis": axis}
    if name not in ("cumsum", "cumprod", "count_nonzero"):
        kwargs["keepdims"] = keepdims
    d = pygpu.asarray(np.array(x, order="C"))  # (ascontiguousarray makes 0-d 1-d)
    if flip and x.ndim:
        d = pygpu.asarray(np.array(x[..., ::-1], order="C"))[..., ::-1]
    f = getattr(np, name)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            want = f(x, **kwargs)
        except (TypeError, ValueError) as exc:
            with pytest.raises((type(exc), TypeError)):
                f(d, **kwargs)
            return
        got = f(d, **kwargs)
    want = np.asarray(want)
    got_h = got.copy_to_host() if isinstance(got, pygpu.DeviceArray) else np.asarray(got)
    assert got_h.dtype == want.dtype and got_h.shape == want.shape, (name, kwargs)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got_h, want)
    else:
        tol = 5e-3 if want.dtype == np.float16 or dtype == "float16" else 1e-4
        np.testing.assert_allclose(got_h, want, rtol=tol, atol=tol * 10, equal_nan=True)


def test_numpy_true_as_where_is_a_mask_and_argmax_checks_outs_dtype():
    h = np.array([3.0, 1.0, 2.0])
    d = pygpu.asarray(h)
    with pytest.raises(ValueError, match="one has to specify 'initial'"):
        np.max(d, where=np.True_)
    assert float(np.max(d, where=True)) == 3.0
    assert float(np.sum(d, where=np.True_)) == 6.0
    for oc in ("d", "f", "Q"):
        with pytest.raises(TypeError):
            np.argmax(d, out=pygpu.zeros((), oc))
    assert int(np.argmin(d, out=pygpu.zeros((), np.int32))) == 1
