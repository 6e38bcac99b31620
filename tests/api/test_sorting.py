"""Sorting, searching and sets on the device (pygpu/_ops/sorting.py, the radix
sort of pygpu/include/pygpu/sort.h) against NumPy: every device dtype, ties
(stability), NaN, inf and -0.0 where NumPy puts them, along any axis, on
views, empty and 0-d arrays, and the errors of bad arguments."""

import numpy as np
import pytest
from conftest import run_with_nvrtc

import pygpu
from pygpu._ops import sorting
from pygpu._ops.table import DEVICE_TYPES, canonical

CHARS = tuple(dict.fromkeys(canonical(c) for c in DEVICE_TYPES))
SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, -np.nan, 1.0, -1.0]


def tied(rng, shape, char):
    """Random data with many ties (stability shows), and for floats and
    complex numbers every special value at random places."""
    dt = np.dtype(char)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        x = rng.integers(max(info.min, -40), min(info.max, 40), shape, endpoint=True)
        x = x.astype(dt)
        flat = x.reshape(-1)
        if flat.size > 4:  # the extremes too
            flat[0], flat[-1] = info.min, info.max
        return x
    x = (rng.integers(-40, 40, shape) / 4).astype(dt)
    if dt.kind == "c":
        x = (x + 1j * (rng.integers(-3, 3, shape) / 2)).astype(dt)
    flat = x.reshape(-1)
    for i in rng.integers(0, flat.size, min(flat.size, 16)) if flat.size > 8 else ():
        v, w = rng.choice(SPECIALS, 2)
        flat[i] = complex(v, w) if dt.kind == "c" else v
    return x


def bits(a):
    """The array's bits: floats compared bit for bit (-0.0, NaN signs)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "c":
        a = a.view(a.real.dtype)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def descending_order(x, axis=-1):
    """The standard's stable descending argsort (array_api_compat's for
    NumPy): equal elements in their order, NaNs first."""
    n = x.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


# ---- sort and argsort ----------------------------------------------------------------

@pytest.mark.parametrize("char", CHARS)
def test_sort_and_argsort_match_numpy_for_every_dtype_across_tiles(char, rng):
    sizes = (1, 7, 1000, 5000) + ((70000,) if char in "fqF?" else ())
    for n in sizes:
        x = tied(rng, n, char)
        d = pygpu.asarray(x)
        assert np.array_equal(bits(pygpu.sort(d).get()), bits(np.sort(x, kind="stable")))
        got = pygpu.argsort(d).get()
        assert got.dtype == np.int64
        assert np.array_equal(got, np.argsort(x, kind="stable"))
        down = descending_order(x)
        assert np.array_equal(pygpu.argsort(d, descending=True).get(), down)
        assert np.array_equal(bits(pygpu.sort(d, descending=True).get()), bits(x[down]))


@pytest.mark.parametrize("char", "?hQefdD")
def test_sort_along_every_axis_of_an_nd_array(char, rng):
    x = tied(rng, (5, 6, 70), char)
    d = pygpu.asarray(x)
    for axis in (0, 1, 2, -1, -3, None):
        assert np.array_equal(bits(pygpu.sort(d, axis=axis).get()),
                              bits(np.sort(x, axis=axis, kind="stable")))
        assert np.array_equal(pygpu.argsort(d, axis=axis).get(),
                              np.argsort(x, axis=axis, kind="stable"))
    for axis in (0, 2):
        down = descending_order(x, axis)
        assert np.array_equal(pygpu.argsort(d, axis=axis, descending=True).get(), down)
        assert np.array_equal(bits(pygpu.sort(d, axis=axis, descending=True).get()),
                              bits(np.take_along_axis(x, down, axis)))


def test_many_short_rows_and_few_long_ones(rng):
    for shape in ((3000, 3), (2, 9000), (300, 1), (1, 5000)):
        x = tied(rng, shape, "f")
        d = pygpu.asarray(x)
        for axis in (0, 1):
            assert np.array_equal(bits(pygpu.sort(d, axis=axis).get()),
                                  bits(np.sort(x, axis=axis, kind="stable")))
            assert np.array_equal(pygpu.argsort(d, axis=axis).get(),
                                  np.argsort(x, axis=axis, kind="stable"))


def test_huge_sizes_layouts_give_the_same_order(rng, monkeypatch):
    # the 64-bit look-back words (from 2**30 elements) and the int64 values
    # between passes (from 2**32), taken here at small sizes
    monkeypatch.setattr(sorting, "_WIDE_WORDS", 0)
    monkeypatch.setattr(sorting, "_WIDE_VALUES", 0)
    for char in "fQ":
        x = tied(rng, 9000, char)
        d = pygpu.asarray(x)
        assert np.array_equal(pygpu.argsort(d).get(), np.argsort(x, kind="stable"))
        assert np.array_equal(pygpu.sort(d).get(), np.sort(x), equal_nan=True)


def test_nan_inf_and_signed_zero_go_where_numpy_puts_them():
    x = np.array([np.nan, 1, -0.0, 0.0, -np.inf, np.inf, -np.nan, 0.0, -0.0, -1, np.nan],
                 np.float64)
    for dt in (np.float16, np.float32, np.float64):
        y = x.astype(dt)
        d = pygpu.asarray(y)
        assert np.array_equal(bits(pygpu.sort(d).get()), bits(np.sort(y, kind="stable")))
        assert np.array_equal(pygpu.argsort(d).get(), np.argsort(y, kind="stable"))
        # descending: NaNs first, zeros of either sign in their order
        assert np.array_equal(pygpu.argsort(d, descending=True).get(), descending_order(y))
    # the keys alone (no -0.0, NaNs NumPy's own): still NumPy's bits
    z = np.array([3.5, np.nan, -2, np.inf, 0.0, np.nan, -np.inf], np.float32)
    assert np.array_equal(bits(pygpu.sort(pygpu.asarray(z)).get()), bits(np.sort(z)))


def test_complex_numbers_sort_lexicographically_with_nans_by_class():
    n, r = np.nan, 1.0
    x = np.array([complex(n, n), complex(2, n), complex(n, 1), complex(1, 2), complex(1, n),
                  complex(n, -1), complex(-1, 5), complex(1, -0.0), complex(1, 0.0),
                  complex(r, n), complex(-np.inf, 3), complex(n, n)], np.complex128)
    for dt in (np.complex64, np.complex128):
        y = x.astype(dt)
        d = pygpu.asarray(y)
        assert np.array_equal(bits(pygpu.sort(d).get()), bits(np.sort(y, kind="stable")))
        assert np.array_equal(pygpu.argsort(d).get(), np.argsort(y, kind="stable"))
        assert np.array_equal(pygpu.argsort(d, descending=True).get(), descending_order(y))


def test_views_empty_and_zero_d(rng):
    x = tied(rng, (40, 30), "i")
    d = pygpu.asarray(x)
    for view, ref in ((d[::-1], x[::-1]), (d[:, ::-2], x[:, ::-2]), (d.T, x.T),
                      (d[3:17, 5], x[3:17, 5])):
        assert np.array_equal(pygpu.sort(view).get(), np.sort(ref))
        assert np.array_equal(pygpu.argsort(view, axis=0).get(),
                              np.argsort(ref, axis=0, kind="stable"))
    assert np.array_equal(d.get(), x)  # the input is left alone
    for shape in ((0,), (3, 0), (0, 4)):
        e = pygpu.asarray(np.zeros(shape, np.float32))
        assert pygpu.sort(e).shape == shape and pygpu.argsort(e, axis=0).shape == shape
        assert pygpu.argsort(e).dtype == np.int64
    z = pygpu.asarray(np.array(2.5))
    assert np.array_equal(pygpu.sort(z, axis=None).get(), np.sort(np.array(2.5), axis=None))
    assert np.array_equal(pygpu.argsort(z).get(), np.argsort(np.array(2.5)))
    with pytest.raises(np.exceptions.AxisError):
        pygpu.sort(z)


def test_methods_and_numpy_functions_reach_the_device_sort(rng):
    x = tied(rng, (20, 33), "d")
    d = pygpu.asarray(x)
    assert np.array_equal(bits(np.sort(d, axis=0).get()), bits(np.sort(x, axis=0, kind="stable")))
    assert np.array_equal(np.argsort(d, kind="stable").get(), np.argsort(x, kind="stable"))
    assert np.array_equal(d.argsort(axis=None).get(), x.argsort(axis=None, kind="stable"))
    v = d[:, ::-1]  # in place, through a view
    v.sort(axis=1)
    ref = x.copy()
    ref[:, ::-1].sort(axis=1, kind="stable")
    assert np.array_equal(bits(d.get()), bits(ref))
    assert np.array_equal(pygpu.sort(d, axis=0, stable=False, descending=False).get(),
                          np.sort(ref, axis=0), equal_nan=True)


def test_sort_arguments_are_checked():
    d = pygpu.asarray(np.arange(5.0))
    with pytest.raises(ValueError, match="sort kind"):
        pygpu.sort(d, kind="bogus")
    with pytest.raises(ValueError, match="at the same time"):
        pygpu.argsort(d, kind="stable", stable=True)
    with pytest.raises(ValueError, match="order"):
        pygpu.sort(d, order="x")
    with pytest.raises(np.exceptions.AxisError):
        pygpu.argsort(d, axis=1)
    with pytest.raises(TypeError):
        pygpu.sort(d, axis=1.5)
    with pytest.raises(TypeError, match="host memory"):
        pygpu.sort(np.arange(3))
    with pytest.raises(TypeError, match="DeviceArray"):
        pygpu.argsort(None)
    with pytest.raises(TypeError):
        pygpu.sort(np.longdouble(1))
    with pytest.raises(TypeError):
        pygpu.asarray(np.zeros(3, np.longdouble))
    for kind in ("quicksort", "mergesort", "heapsort", "stable"):
        assert np.array_equal(pygpu.sort(d[::-1], kind=kind).get(), np.arange(5.0))


# ---- partition, lexsort -------------------------------------------------------------

def test_partition_puts_each_kth_element_in_place(rng):
    x = tied(rng, (9, 400), "f")
    d = pygpu.asarray(x)
    for kth, axis in ((3, -1), ([0, 100, 399], 1), (-1, 1), (4, 0), (1000, None)):
        p = np.partition(d, kth, axis=axis).get()
        s = np.sort(x, axis=axis)
        ks = np.atleast_1d(kth)
        ax = -1 if axis is None else axis
        p2 = p.reshape(-1) if axis is None else p
        s2 = s.reshape(-1) if axis is None else s
        assert np.array_equal(np.take(p2, ks, ax), np.take(s2, ks, ax), equal_nan=True)
        a = pygpu.argpartition(d, kth, axis=axis).get()
        flat = x.reshape(-1) if axis is None else x
        got = np.take_along_axis(flat, a, ax)
        assert np.array_equal(np.take(got, ks, ax), np.take(s2, ks, ax), equal_nan=True)
    m = d.copy()
    m.partition(5)
    assert np.array_equal(m.get()[:, 5], np.sort(x)[:, 5], equal_nan=True)
    with pytest.raises(ValueError, match="out of bounds"):
        pygpu.partition(d, 400)
    with pytest.raises(ValueError, match="out of bounds"):
        pygpu.argpartition(d, -10, axis=0)
    with pytest.raises(TypeError, match="integer"):
        pygpu.partition(d, 1.5)
    with pytest.raises(ValueError, match="Booleans"):
        pygpu.partition(d, True)


def test_lexsort_sorts_by_the_last_key_first(rng):
    a = tied(rng, 3000, "h")
    b = tied(rng, 3000, "f")
    c = tied(rng, 3000, "F")
    for keys in ((a,), (a, b), (b, a), (c, a, b), (a.astype(np.bool_), c)):
        got = pygpu.lexsort([pygpu.asarray(k) for k in keys]).get()
        assert np.array_equal(got, np.lexsort(keys))
    k2 = tied(rng, (2, 7, 50), "i")
    for axis in (-1, 0, 1):
        dk = pygpu.asarray(k2)
        assert np.array_equal(np.lexsort(dk, axis=axis).get(), np.lexsort(k2, axis=axis))
    with pytest.raises(ValueError, match="same shape"):
        pygpu.lexsort([pygpu.asarray(a), pygpu.asarray(a[:5])])
    with pytest.raises(TypeError, match="len > 0"):
        pygpu.lexsort([])


# ---- searchsorted, isin ------------------------------------------------------------

@pytest.mark.parametrize("char", CHARS)
def test_searchsorted_finds_numpys_places(char, rng):
    a = np.sort(tied(rng, 500, char))
    v = tied(rng, (7, 40), char)
    da, dv = pygpu.asarray(a), pygpu.asarray(v)
    for side in ("left", "right"):
        got = pygpu.searchsorted(da, dv, side=side).get()
        assert got.dtype == np.int64 and got.shape == v.shape
        assert np.array_equal(got, np.searchsorted(a, v, side=side))
    assert int(da.searchsorted(v.reshape(-1)[3].item())) == \
        np.searchsorted(a, v.reshape(-1)[3].item())


def test_searchsorted_promotes_takes_a_sorter_and_checks(rng):
    a = np.sort(rng.integers(-50, 50, 300).astype(np.int8))
    da = pygpu.asarray(a)
    for v in (1.5, 1000, -1000, np.float32(2.25), 7):
        assert int(pygpu.searchsorted(da, v)) == np.searchsorted(a, v)
    x = rng.standard_normal(800)
    order = np.argsort(x)
    q = rng.standard_normal(50)
    got = np.searchsorted(pygpu.asarray(x), pygpu.asarray(q), "right", pygpu.asarray(order))
    assert np.array_equal(got.get(), np.searchsorted(x, q, "right", order))
    e = pygpu.searchsorted(pygpu.asarray(np.zeros(0)), pygpu.asarray(q))
    assert np.array_equal(e.get(), np.zeros(50, np.int64))
    with pytest.raises(ValueError, match="side"):
        pygpu.searchsorted(da, 1, side="middle")
    with pytest.raises(ValueError, match="1-D"):
        pygpu.searchsorted(pygpu.asarray(np.zeros((2, 2))), 1)
    with pytest.raises(ValueError, match="out of range"):
        pygpu.searchsorted(da, 1, sorter=pygpu.asarray(np.arange(300) + 1))
    with pytest.raises(ValueError, match="size"):
        pygpu.searchsorted(da, 1, sorter=pygpu.asarray(np.arange(3)))
    with pytest.raises(TypeError, match="host memory"):
        pygpu.searchsorted(da, np.arange(3))


def test_isin_matches_numpy(rng):
    for char in "?bqHefdF":
        x = tied(rng, (30, 40), char)
        t = tied(rng, 300, char)[::3]
        dx, dt = pygpu.asarray(x), pygpu.asarray(t)
        for invert in (False, True):
            got = np.isin(dx, dt, invert=invert).get()
            assert got.dtype == np.bool_
            assert np.array_equal(got, np.isin(x, t, invert=invert))
    x = np.array([np.nan, -0.0, 1.0, 2.0])
    assert np.array_equal(pygpu.isin(pygpu.asarray(x), pygpu.asarray(x[::-1])).get(),
                          np.isin(x, x[::-1]))
    mixed = pygpu.isin(pygpu.asarray(np.arange(6, dtype=np.int16)), pygpu.asarray([2.0, 4.5]))
    assert np.array_equal(mixed.get(), np.isin(np.arange(6), [2.0, 4.5]))
    assert bool(pygpu.isin(pygpu.asarray(np.array(3)), 3)) is True
    with pytest.raises(ValueError, match="kind"):
        pygpu.isin(dx, dt, kind="hash")


# ---- unique ------------------------------------------------------------------------------

@pytest.mark.parametrize("char", CHARS)
def test_unique_with_index_inverse_and_counts(char, rng):
    x = tied(rng, (30, 70), char)
    d = pygpu.asarray(x)
    for equal_nan in (True, False):
        got = pygpu.unique(d, True, True, True, equal_nan=equal_nan)
        ref = np.unique(x, True, True, True, equal_nan=equal_nan)
        for g, r in zip(got, ref, strict=True):
            assert g.shape == r.shape
            assert np.array_equal(bits(g.get()), bits(r)) if r.dtype.kind in "fc" else \
                np.array_equal(g.get(), r)
    assert np.array_equal(np.unique(d).get(), np.unique(x), equal_nan=True)


def test_the_standards_unique_functions_keep_nans_apart():
    x = np.array([[2.0, np.nan, 1.0], [np.nan, 2.0, -0.0]])
    d = pygpu.asarray(x)
    got, ref = pygpu.unique_all(d), np.unique_all(x)
    assert got._fields == ("values", "indices", "inverse_indices", "counts")
    for g, r in zip(got, ref, strict=True):
        assert np.array_equal(g.get(), r, equal_nan=True) and g.shape == r.shape
    assert np.array_equal(pygpu.unique_counts(d).counts.get(), np.unique_counts(x).counts)
    inv = pygpu.unique_inverse(d)
    assert inv._fields == ("values", "inverse_indices")
    assert np.array_equal(inv.inverse_indices.get(), np.unique_inverse(x).inverse_indices)
    assert np.array_equal(np.unique_values(d).get(), np.unique_values(x), equal_nan=True)
    e = pygpu.unique_all(pygpu.asarray(np.zeros((0, 3), np.int32)))
    assert e.values.shape == (0,) and e.inverse_indices.shape == (0, 3)
    assert np.array_equal(pygpu.unique(pygpu.asarray(np.array(3))).get(), [3])


@pytest.mark.parametrize("char", CHARS)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unique_along_an_axis_sorts_subarrays_as_numpy(char, axis, rng):
    # subarrays that repeat, and that share their first elements (ties broken
    # by later ones); floats with NaN, inf and -0.0 among them
    pool = tied(rng, (6, 3, 2), char)
    pool[1, :2] = pool[0, :2]
    pool[2, 0] = pool[3, 0]
    x = pool[rng.integers(0, 6, 14)]
    if char == "e":  # NumPy's float16 fields compare NaN as no order (docs/SEMANTICS.md)
        x[np.isnan(x)] = np.inf
    d = pygpu.asarray(x)
    for equal_nan in (True, False):
        got = pygpu.unique(d, True, True, True, axis=axis, equal_nan=equal_nan)
        ref = np.unique(x, True, True, True, axis=axis, equal_nan=equal_nan)
        for g, r in zip(got, ref, strict=True):
            assert g.shape == r.shape and g.dtype == r.dtype
            assert np.array_equal(g.get(), r, equal_nan=r.dtype.kind in "fc")
    assert np.array_equal(np.unique(d, axis=axis).get(), np.unique(x, axis=axis),
                          equal_nan=x.dtype.kind in "fc")
    assert np.array_equal(pygpu.unique(d[::2, ::-1], axis=axis).get(),
                          np.unique(x[::2, ::-1], axis=axis), equal_nan=x.dtype.kind in "fc")


def test_unique_along_an_axis_of_empty_and_nan_subarrays():
    x = np.array([[1, np.nan], [1, np.nan], [0, -0.0], [2, 1], [0, 0.0]])
    got = pygpu.unique(pygpu.asarray(x), True, True, True, axis=0)
    for g, r in zip(got, np.unique(x, True, True, True, axis=0), strict=True):
        assert np.array_equal(g.get(), r, equal_nan=True)  # NaN rows apart, 0.0 with -0.0
    h = np.array([[2, 1], [np.nan, 0], [1, np.nan], [1, 2]], np.float16)
    assert np.unique(h, axis=0)[0, 0] != np.unique(h, axis=0)[0, 0]  # NumPy: the NaN row first
    assert np.array_equal(pygpu.unique(pygpu.asarray(h), axis=0).get(),  # pygpu: last
                          [[1, 2], [1, np.nan], [2, 1], [np.nan, 0]], equal_nan=True)
    for shape, axis in [((0, 3), 0), ((3, 0), 0), ((3, 0), 1), ((2, 0, 3), 2)]:
        z = np.ones(shape, np.int16)
        got = pygpu.unique(pygpu.asarray(z), True, True, True, axis=axis)
        for g, r in zip(got, np.unique(z, True, True, True, axis=axis), strict=True):
            assert g.shape == r.shape and g.dtype == r.dtype
            assert np.array_equal(g.get(), r)
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds"):
        pygpu.unique(pygpu.asarray(x), axis=2)
    with pytest.raises(np.exceptions.AxisError, match="out of bounds for array of dimension 0"):
        pygpu.unique(pygpu.asarray(np.array(3)), axis=0)


# ---- bincount, histogram -----------------------------------------------------------

def test_bincount_counts_and_weighs(rng):
    x = rng.integers(0, 300, 5000)
    w = rng.standard_normal(5000)
    for dt in (np.int64, np.uint8, np.int16, np.bool_):
        y = x.astype(dt)
        assert np.array_equal(np.bincount(pygpu.asarray(y)).get(), np.bincount(y))
    got = pygpu.bincount(pygpu.asarray(x), pygpu.asarray(w), minlength=400).get()
    ref = np.bincount(x, w, minlength=400)
    assert got.dtype == np.float64 and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    e = pygpu.bincount(pygpu.asarray(np.zeros(0, np.int64)), minlength=3)
    assert np.array_equal(e.get(), [0, 0, 0])
    d = pygpu.asarray(x)
    with pytest.raises(ValueError, match="negative"):
        pygpu.bincount(pygpu.asarray(np.array([1, -1])))
    with pytest.raises(ValueError, match="minlength"):
        pygpu.bincount(d, minlength=-1)
    with pytest.raises(ValueError, match="same length"):
        pygpu.bincount(d, pygpu.asarray(w[:5]))
    with pytest.raises(TypeError, match="safe"):
        pygpu.bincount(pygpu.asarray(w))
    with pytest.raises(ValueError, match="too deep"):
        pygpu.bincount(pygpu.asarray(x.reshape(50, 100)))


def test_histogram_matches_numpy(rng):
    x = rng.standard_normal(6000).astype(np.float32)
    x[::97] = np.nan
    w = rng.random(6000)
    d, dw = pygpu.asarray(x), pygpu.asarray(w)
    for bins, rng_, density, weights in ((10, (-2, 2), None, None), (7, (-1, 3), True, None),
                                         ([-3, -1, 0, 0.5, 4], None, None, None),
                                         (5, (-2, 2), None, w), (4, (0, 1), True, w),
                                         ("auto", (-2, 2), None, None)):
        h, e = pygpu.histogram(d, bins, rng_, density, pygpu.asarray(weights)
                               if weights is not None else None)
        rh, re = np.histogram(x, bins, rng_, density, weights)
        assert h.dtype == rh.dtype and e.dtype == re.dtype
        assert np.array_equal(e.get(), re)
        np.testing.assert_allclose(h.get(), rh, rtol=1e-12)
    y = rng.integers(0, 20, 3000)
    h, e = np.histogram(pygpu.asarray(y))
    rh, re = np.histogram(y)
    assert np.array_equal(h.get(), rh) and np.array_equal(e.get(), re)
    with pytest.raises(ValueError, match="finite"):
        pygpu.histogram(d)  # NaN and no range: NumPy's error
    with pytest.raises(ValueError, match="monoton"):
        pygpu.histogram(d, [1, 0])
    with pytest.raises(ValueError, match="shape"):
        pygpu.histogram(d, weights=dw[:5])
    _ = dw


# ---- reductions along axes this area leans on ----------------------------------------

def test_count_nonzero_argmax_argmin_along_axes(rng):
    x = tied(rng, (6, 7, 8), "f")
    d = pygpu.asarray(x)
    for axis in (0, 1, 2, (0, 2), None):
        got = np.count_nonzero(d, axis=axis)
        assert np.array_equal(got.get() if isinstance(got, pygpu.DeviceArray) else got,
                              np.count_nonzero(x, axis=axis))
    for axis in (0, 1, -1, None):
        assert np.array_equal(np.argmax(d, axis=axis).get(), np.argmax(x, axis=axis))
        assert np.array_equal(np.argmin(d, axis=axis).get(), np.argmin(x, axis=axis))


@pytest.mark.skipif(pygpu.cuda.is_available() and len(pygpu.cuda.gpus) < 2,
                    reason="needs two devices")
def test_arrays_on_a_second_device_are_sorted_there(rng):
    x = tied(rng, 3000, "f")
    with pygpu.Device(1):
        d = pygpu.asarray(x)
    s = pygpu.sort(d)
    assert s.device.id == 1 and np.array_equal(s.get(), np.sort(x), equal_nan=True)
    assert np.array_equal(np.unique(d).get(), np.unique(x), equal_nan=True)
    with pytest.raises(ValueError, match="different devices"):
        pygpu.searchsorted(s, pygpu.asarray(x[:3]))


# ---- the kernels compile for a GPU -----------------------------------------------------

NVRTC_CHECK = """
from pygpu._ops import sorting as S
S.render()
for group in ("sort8_8p", "sort4_4k", "search8c", "misc"):
    rawkernel.compile_cuda(S.render(group), arch="sm_90")
"""


def test_sort_kernels_compile_with_nvrtc():
    run_with_nvrtc(NVRTC_CHECK)


def test_area_lists_its_names():
    assert set(sorting.__all__) <= set(dir(pygpu))
    assert np.sort in sorting.NUMPY and "sort" in sorting.ATTRIBUTES
