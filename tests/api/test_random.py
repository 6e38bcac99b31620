"""pygpu.random: Philox4x32-10 bits against a NumPy model of the published
algorithm, the same bits for every size's prefix and on every device, the
distributions (moments and Kolmogorov-Smirnov bounds, with fixed seeds), and
NumPy's dtypes, shapes and errors."""

import math
import subprocess
import sys

import numpy as np
import pytest
from conftest import run_with_nvrtc

import pygpu
import pygpu.random as R

M = np.uint64(0xFFFFFFFF)


def philox(c, k0, k1):
    """Philox4x32-10 in NumPy: the 4 words of each counter of c (4 columns of
    32-bit words in uint64) under the key (k0, k1)."""
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64)[..., j] for j in range(4))
    k0, k1 = np.uint64(k0), np.uint64(k1)
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & M,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & M)
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & M, (k1 + np.uint64(0xBB67AE85)) & M
    return np.stack([c0, c1, c2, c3], axis=-1).astype(np.uint32)


def philox_model(ctr, k0, k1, attempt=0):
    """The words of the calls at counters (ctr, attempt, 0), as philox.h makes
    them: shape (n, 4)."""
    ctr = np.asarray(ctr, dtype=np.uint64)
    c = np.stack([ctr & M, ctr >> np.uint64(32), np.full_like(ctr, attempt),
                  np.zeros_like(ctr)], axis=-1)
    return philox(c, k0, k1)


def model_words(g, calls):
    """The words a fresh Generator g gives for its first `calls` counters."""
    return philox_model(np.arange(calls, dtype=np.uint64), g._k0, g._k1)


def ks_distance(x, cdf):
    x = np.sort(np.asarray(x, dtype=np.float64))
    n = x.size
    f = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


def normal_cdf(x):
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


# ---- the generator's bits ------------------------------------------------------------
@pytest.mark.parametrize("ctr, key, want", [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
])
def test_the_model_of_philox_gives_the_published_known_answers(ctr, key, want):
    # Random123's kat_vectors
    assert tuple(int(w) for w in philox([ctr], *key)[0]) == want


def test_32_bit_integers_are_the_philox_words_in_counter_order():
    g = R.default_rng(123)
    got = g.integers(0, 2**32, size=4 * 37 + 3, dtype=np.uint32).get()
    want = model_words(R.default_rng(123), 38).ravel()[:got.size]
    np.testing.assert_array_equal(got, want)


def test_64_bit_integers_are_two_words_high_first():
    got = R.default_rng(5).integers(0, 2**64, size=9, dtype=np.uint64).get()
    w = model_words(R.default_rng(5), 5).astype(np.uint64)
    want = (w[:, 0::2] << np.uint64(32) | w[:, 1::2]).ravel()[:9]
    np.testing.assert_array_equal(got, want)


def test_floats_are_numpys_conversion_of_24_and_53_bits():
    f4 = R.default_rng(9).random(10, dtype=np.float32).get()
    w = model_words(R.default_rng(9), 3).ravel()[:10]
    np.testing.assert_array_equal(f4, (w >> 8).astype(np.float32) * np.float32(2.0**-24))
    f8 = R.default_rng(9).random(5).get()
    w = model_words(R.default_rng(9), 3).astype(np.uint64)
    bits = ((w[:, 0::2] << np.uint64(32) | w[:, 1::2]) >> np.uint64(11)).ravel()[:5]
    np.testing.assert_array_equal(f8, bits.astype(np.float64) * 2.0**-53)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normals_are_box_muller_of_the_words_within_2_ulp(dtype):
    # the reference in long double (80-bit on x86-64): within 2 ulp of it,
    # relative to max(|z|, 1) (the angle's rounding is absolute near zeros)
    L = np.longdouble
    z = R.default_rng(11).standard_normal(4000, dtype=dtype).get().astype(L)
    w = model_words(R.default_rng(11), 1000 if dtype == np.float32 else 2000)
    w = w.astype(np.uint64)
    if dtype == np.float32:
        u1 = ((w[:, 0::2] >> np.uint64(8)) + np.uint64(1)).astype(L) * L(2.0) ** -24
        turn = (w[:, 1::2] >> np.uint64(8)).astype(L) * L(2.0) ** -24
    else:
        x1 = (w[:, 0] << np.uint64(32) | w[:, 1]) >> np.uint64(11)
        x2 = (w[:, 2] << np.uint64(32) | w[:, 3]) >> np.uint64(11)
        u1 = (x1 + np.uint64(1)).astype(L) * L(2.0) ** -53
        turn = x2.astype(L) * L(2.0) ** -53
    r = np.sqrt(-2 * np.log(u1))
    angle = 2 * L("3.14159265358979323846264338327950288") * turn
    ref = np.stack([r * np.cos(angle), r * np.sin(angle)], axis=-1).reshape(-1)
    err = np.abs(z - ref) / np.maximum(np.abs(ref), 1)
    assert float(np.max(err)) < 2.5 * np.finfo(dtype).eps


@pytest.mark.parametrize("method, kwargs", [
    ("random", {"dtype": np.float32}), ("random", {}),
    ("standard_normal", {"dtype": np.float32}), ("standard_normal", {}),
    ("standard_exponential", {"dtype": np.float32}), ("exponential", {"scale": 3.0}),
    ("integers", {"low": -7, "high": 1000, "dtype": np.int16}),
    ("integers", {"low": 0, "high": 3 << 40}),
    ("uniform", {"low": -2.0, "high": 5.0}), ("normal", {"loc": 1.0, "scale": 2.0}),
])
def test_a_shorter_result_is_a_prefix_of_a_longer_one(method, kwargs):
    results = [getattr(R.default_rng(77), method)(size=n, **kwargs).get()
               for n in (1, 7, 1000, 4099)]
    for r in results[:-1]:
        np.testing.assert_array_equal(r, results[-1][:r.size])


def test_the_same_seed_gives_the_same_bits_on_another_device():
    if pygpu._core.device_count() < 2:
        pytest.skip("one device")
    draws = []
    for dev in (0, 1):
        with pygpu.Device(dev):
            g = R.default_rng(2024)
            draws.append([g.standard_normal(1001, dtype=np.float32).get(),
                          g.random(333).get(), g.integers(0, 1000, 555).get(),
                          g.permutation(777).get(), g.standard_exponential(99).get()])
    for a, b in zip(*draws, strict=True):
        np.testing.assert_array_equal(a, b)


def test_draws_in_whole_calls_continue_one_stream():
    g = R.default_rng(3)
    parts = [g.random(8, dtype=np.float32).get(), g.random(4, dtype=np.float32).get()]
    whole = R.default_rng(3).random(12, dtype=np.float32).get()
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    assert not np.array_equal(g.random(4).get(), R.default_rng(3).random(4).get())


def test_seeds_make_different_streams_and_equal_seeds_equal_ones():
    a = R.default_rng(1).random(64).get()
    assert np.array_equal(a, R.default_rng(1).random(64).get())
    assert np.array_equal(a, R.default_rng(np.random.SeedSequence(1)).random(64).get())
    assert not np.array_equal(a, R.default_rng(2).random(64).get())
    assert not np.array_equal(a, R.default_rng([1, 2]).random(64).get())
    assert not np.array_equal(R.default_rng().random(64).get(),
                              R.default_rng(None).random(64).get())
    g = R.default_rng(5)
    assert R.default_rng(g) is g


# ---- distributions -------------------------------------------------------------------
N = 1 << 16


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_is_uniform_in_zero_one(dtype):
    x = R.default_rng(10).random(N, dtype=dtype).get()
    assert x.dtype == dtype and x.shape == (N,)
    assert x.min() >= 0 and x.max() < 1
    assert ks_distance(x, lambda v: v) < 1.63 / math.sqrt(N)  # 1%: fixed seed


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_standard_normal_has_normal_moments_and_cdf(dtype):
    z = R.default_rng(12).standard_normal(N, dtype=dtype).get()
    assert z.dtype == dtype
    z64 = z.astype(np.float64)
    assert abs(z64.mean()) < 4 / math.sqrt(N)
    assert abs(z64.var() - 1) < 4 * math.sqrt(2 / N)
    assert abs(np.mean(z64**3)) < 4 * math.sqrt(15 / N)
    assert abs(np.mean(z64**4) - 3) < 4 * math.sqrt(96 / N)
    assert ks_distance(z64, normal_cdf) < 1.63 / math.sqrt(N)


def test_normal_and_uniform_scale_and_shift():
    g = R.default_rng(13)
    x = g.normal(5.0, 0.5, N).get()
    assert abs(x.mean() - 5) < 4 * 0.5 / math.sqrt(N) and abs(x.std() - 0.5) < 0.01
    u = g.uniform(-3.0, 1.0, N).get()
    assert u.min() >= -3 and u.max() < 1 and abs(u.mean() + 1) < 0.02
    assert np.all(g.normal(2.0, 0.0, 10).get() == 2.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exponential_has_the_exponential_cdf(dtype):
    e = R.default_rng(14).exponential(2.0, N, dtype=dtype).get()
    assert e.dtype == dtype and e.min() >= 0
    assert ks_distance(e, lambda v: 1 - np.exp(-v / 2.0)) < 1.63 / math.sqrt(N)


@pytest.mark.parametrize("low, high, dtype", [
    (0, 10, np.int64), (-128, 128, np.int8), (0, 256, np.uint8), (-5, 6, np.int16),
    (0, 2, np.bool_), (0, 7, np.uint32), (2**31 - 3, 2**31 + 3, np.uint32),
    (-(2**63), 2**63, np.int64), (0, 2**64, np.uint64),
])
def test_integers_cover_the_range_evenly(low, high, dtype):
    x = R.default_rng(15).integers(low, high, size=N, dtype=dtype).get()
    assert x.dtype == np.dtype(dtype)
    v = x.astype(object) if np.dtype(dtype).itemsize == 8 else x.astype(np.int64)
    assert min(v) >= low and max(v) <= high - 1
    k = high - low
    if k <= 256:
        counts = np.bincount((x.astype(np.int64) - low), minlength=k)
        assert counts.size == k
        expected = N / k
        chi2 = ((counts - expected) ** 2 / expected).sum()
        assert chi2 < k + 5 * math.sqrt(2 * k)
    else:  # the top bit is a fair coin
        top = (x.astype(np.uint64) >> np.uint64(63)) if k == 2**64 else None
        if top is not None:
            assert abs(top.mean() - 0.5) < 4 * 0.5 / math.sqrt(N)


def test_integers_past_32_bits_are_uniform():
    k = 3 << 40
    x = R.default_rng(16).integers(10, 10 + k, size=N).get()
    assert x.min() >= 10 and x.max() < 10 + k
    assert ks_distance((x - 10) / k, lambda v: v) < 1.63 / math.sqrt(N)


def test_integers_endpoint_and_a_single_value():
    g = R.default_rng(17)
    x = g.integers(3, 5, size=4000, endpoint=True).get()
    assert set(np.unique(x)) == {3, 4, 5}
    assert np.all(g.integers(7, 8, size=9).get() == 7)
    assert np.all(g.integers(-2**63, -2**63, 3, endpoint=True).get() == -2**63)
    x = g.integers(5, size=100).get()
    assert x.min() >= 0 and x.max() < 5


def test_integers_with_a_range_that_rejects_often_stay_unbiased():
    # 2^31 + 1 values: Lemire rejects nearly half of the first draws
    k = 2**31 + 1
    x = R.default_rng(18).integers(0, k, size=N, dtype=np.int64).get()
    assert x.min() >= 0 and x.max() < k
    assert abs(x.mean() / k - 0.5) < 4 * 0.29 / math.sqrt(N)
    assert abs(np.mean(x < k // 2) - 0.5) < 4 * 0.5 / math.sqrt(N)


def test_integers_take_arrays_of_bounds_that_broadcast():
    low = np.array([0, 5, -(2**63)])
    high = pygpu.asarray(np.array([[10], [1000]]))
    x = R.default_rng(19).integers(low, high, size=(4000, 2, 3)).get()
    assert x.shape == (4000, 2, 3) and x.dtype == np.int64
    assert set(np.unique(x[:, 0, 0])) == set(range(10))
    assert set(np.unique(x[:, 0, 1])) == set(range(5, 10))
    assert x[:, 1, 1].min() >= 5 and x[:, 1, 1].max() < 1000
    assert np.all(x[:, :, 2] < np.array([[10, 1000]]))
    assert x[:, 1, 2].min() < -(2**62)  # the range is 2^63 wide
    u = R.default_rng(19).integers(0, np.array([2**64 - 1, 5], dtype=np.uint64),
                                   dtype=np.uint64, endpoint=True).get()
    assert u.dtype == np.uint64 and u[1] <= 5
    with pytest.raises(ValueError, match="low >= high"):
        R.default_rng(0).integers([5, 1], [5, 6])
    with pytest.raises(ValueError, match="high is out of bounds for int8"):
        R.default_rng(0).integers([0], [300], dtype=np.int8)
    with pytest.raises(ValueError, match="shape mismatch"):
        R.default_rng(0).integers([1, 2], size=3)


# ---- permutations and choices --------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 1000, 4097])
def test_permutation_is_a_permutation(n):
    p = R.default_rng(n).permutation(n).get()
    assert p.dtype == np.int64 and p.shape == (n,)
    np.testing.assert_array_equal(np.sort(p), np.arange(n))


def test_each_position_of_a_permutation_takes_each_value_evenly():
    n, seeds = 6, 600
    counts = np.zeros((n, n))
    for s in range(seeds):
        p = R.default_rng(s).permutation(n).get()
        counts[np.arange(n), p] += 1
    expected = seeds / n
    chi2 = ((counts - expected) ** 2 / expected).sum()
    dof = (n - 1) ** 2
    assert chi2 < dof + 5 * math.sqrt(2 * dof)


def test_a_long_permutation_moves_elements_far():
    p = R.default_rng(4).permutation(1 << 14).get()
    assert np.mean(p == np.arange(p.size)) < 0.01
    assert abs(np.corrcoef(p, np.arange(p.size))[0, 1]) < 0.05


def test_permutation_of_an_array_keeps_its_rows():
    a = np.arange(40, dtype=np.float32).reshape(10, 4)
    p = R.default_rng(1).permutation(pygpu.asarray(a)).get()
    assert p.shape == a.shape and p.dtype == a.dtype
    np.testing.assert_array_equal(p[np.argsort(p[:, 0])], a)
    q = R.default_rng(1).permutation(a, axis=1)
    np.testing.assert_array_equal(np.sort(q.get(), axis=1), a)


def test_permuting_an_array_takes_the_order_of_permutation_n():
    order = R.default_rng(8).permutation(37).get()
    for a in (np.arange(37.0), np.arange(37 * 5, dtype=np.int8).reshape(37, 5)):
        got = R.default_rng(8).permutation(pygpu.asarray(a)).get()
        np.testing.assert_array_equal(got, a[order])


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float64, np.complex64])
def test_shuffle_permutes_rows_in_place(dtype):
    a = np.arange(60).reshape(15, 2, 2).astype(dtype)
    d = pygpu.asarray(a)
    assert R.default_rng(2).shuffle(d) is None
    got = d.get()
    assert not np.array_equal(got, a)
    order = np.argsort(got[:, 0, 0].real)
    np.testing.assert_array_equal(got[order], a)
    h = a.copy()
    R.default_rng(2).shuffle(h)
    np.testing.assert_array_equal(h, got)


def test_choice_with_replacement_is_uniform():
    x = R.default_rng(20).choice(7, size=N).get()
    counts = np.bincount(x, minlength=7)
    chi2 = ((counts - N / 7) ** 2 / (N / 7)).sum()
    assert counts.size == 7 and chi2 < 6 + 5 * math.sqrt(12)


def test_choice_with_p_follows_p():
    p = np.array([0.1, 0.0, 0.2, 0.3, 0.4])
    for pp in (p, pygpu.asarray(p)):
        x = R.default_rng(21).choice(5, size=N, p=pp).get()
        counts = np.bincount(x, minlength=5)
        assert counts[1] == 0
        nz = p > 0
        chi2 = ((counts[nz] - N * p[nz]) ** 2 / (N * p[nz])).sum()
        assert chi2 < 3 + 5 * math.sqrt(6)


def test_choice_without_replacement_takes_distinct_elements():
    x = R.default_rng(22).choice(1000, size=(10, 50), replace=False).get()
    assert x.shape == (10, 50) and np.unique(x).size == 500 and x.max() < 1000
    a = np.arange(30).reshape(10, 3) * 10
    rows = R.default_rng(22).choice(a, 4, replace=False).get()
    assert rows.shape == (4, 3) and len({tuple(r) for r in rows}) == 4
    assert all(tuple(r) in {tuple(s) for s in a} for r in rows)
    cols = R.default_rng(22).choice(a, 2, axis=1).get()
    assert cols.shape == (10, 2) and np.all(cols % 10 == 0)


def test_choice_of_an_array_with_p():
    a = pygpu.asarray(np.array([5.0, 6.0, 7.0]))
    x = R.default_rng(23).choice(a, size=3000, p=[0.0, 0.5, 0.5]).get()
    assert set(np.unique(x)) == {6.0, 7.0}


# ---- dtypes, shapes and size=None ------------------------------------------------------
@pytest.mark.parametrize("size, shape", [(None, ()), (0, (0,)), ((), ()), (5, (5,)),
                                         ((2, 0, 3), (2, 0, 3)), (np.int8(3), (3,)),
                                         ([2, 3], (2, 3))])
def test_size_gives_numpys_shapes(size, shape):
    g = R.default_rng(0)
    for r in (g.random(size), g.standard_normal(size, dtype=np.float32),
              g.integers(0, 5, size, dtype=np.uint8), g.exponential(1.0, size),
              g.uniform(0, 1, size), g.normal(0, 1, size), g.choice(4, size)):
        assert isinstance(r, pygpu.DeviceArray) and r.shape == shape
    assert g.random(size).dtype == np.float64
    assert g.integers(0, 5, size).dtype == np.int64


@pytest.mark.parametrize("dtype", ["?", "b", "B", "h", "H", "i", "I", "l", "L", "q", "Q"])
def test_integers_give_every_integer_dtype(dtype):
    x = R.default_rng(1).integers(0, 2, size=50, dtype=dtype)
    assert x.dtype == np.dtype(dtype)
    assert set(np.unique(x.get()).tolist()) <= {0, 1}


def test_array_parameters_broadcast():
    g = R.default_rng(30)
    x = g.normal(np.array([0.0, 100.0]), np.array([[1.0], [2.0]])).get()
    assert x.shape == (2, 2) and np.all(np.abs(x[:, 1] - 100) < 20)
    u = g.uniform(np.zeros(3), pygpu.asarray(np.array([1.0, 2.0, 3.0])), size=(4, 3)).get()
    assert u.shape == (4, 3) and np.all(u < [1, 2, 3]) and np.all(u >= 0)
    e = g.exponential([1.0, 1e-9], size=(100, 2)).get()
    assert e.shape == (100, 2) and e[:, 1].max() < 1e-7
    with pytest.raises(ValueError, match="shape mismatch"):
        g.normal([0.0, 1.0], 1.0, size=3)


def test_out_fills_the_given_array():
    g = R.default_rng(31)
    out = pygpu.empty((3, 4), np.float32)
    assert g.random(out=out, dtype=np.float32) is out
    assert out.get().min() >= 0
    with pytest.raises(TypeError, match="wrong type"):
        g.standard_normal(out=out)


# ---- errors as NumPy's -----------------------------------------------------------------
ERRORS = [
    (lambda g: g.random(dtype=np.float16), TypeError, "Unsupported dtype"),
    (lambda g: g.random(dtype=np.longdouble), TypeError, "float128|longdouble"),
    (lambda g: g.standard_normal(dtype=np.int32), TypeError, "Unsupported dtype"),
    (lambda g: g.random(size=-1), ValueError, "negative dimensions"),
    (lambda g: g.random(size=(2, -1)), ValueError, "negative dimensions"),
    (lambda g: g.random(size=2.5), TypeError, "sequence of integers"),
    (lambda g: g.integers(5, 5), ValueError, "low >= high"),
    (lambda g: g.integers(6, 5, endpoint=True), ValueError, "low > high"),
    (lambda g: g.integers(0, 300, dtype=np.int8), ValueError, "high is out of bounds"),
    (lambda g: g.integers(-1, 3, dtype=np.uint8), ValueError, "low is out of bounds"),
    (lambda g: g.integers(0, 2**64 + 1, dtype=np.uint64), ValueError, "high is out"),
    (lambda g: g.integers(0, 3, dtype=bool), ValueError, "high is out of bounds"),
    (lambda g: g.integers(0, 3, dtype=np.float64), TypeError, "Unsupported dtype"),
    (lambda g: g.integers(0, 3, dtype=np.longdouble), TypeError, "Unsupported dtype"),
    (lambda g: g.integers(0, "3"), TypeError, "high must be an integer"),
    (lambda g: g.normal(0, -1), ValueError, "scale < 0"),
    (lambda g: g.normal(0, [1, -1]), ValueError, "scale < 0"),
    (lambda g: g.exponential(-1), ValueError, "scale < 0"),
    (lambda g: g.uniform(0, np.inf), OverflowError, "range exceeds"),
    (lambda g: g.uniform(3, 1, 2), ValueError, "high - low < 0"),
    (lambda g: g.choice(0), ValueError, "a must be a positive integer"),
    (lambda g: g.choice(np.zeros(0)), ValueError, "a cannot be empty"),
    (lambda g: g.choice(3, 5, replace=False), ValueError, "larger sample"),
    (lambda g: g.choice(3, 2, p=[0.5, 0.5]), ValueError, "same size"),
    (lambda g: g.choice(3, 2, p=[0.5, 0.6, -0.1]), ValueError, "non-negative"),
    (lambda g: g.choice(3, 2, p=[0.5, 0.6, 0.1]), ValueError, "do not sum to 1"),
    (lambda g: g.choice(3, 2, p=[[0.5, 0.5, 0]]), ValueError, "1-dimensional"),
    (lambda g: g.choice(3, 2, p=[0.5, np.nan, 0.5]), ValueError, "NaN"),
    (lambda g: g.choice(3, 2, replace=False, p=[0.2, 0.3, 0.5]), TypeError, "replace"),
    (lambda g: g.choice(np.ones((2, 2)), axis=2), np.exceptions.AxisError, "axis 2"),
    (lambda g: g.permutation(np.array(5)), np.exceptions.AxisError, "axis 0"),
    (lambda g: g.shuffle(pygpu.asarray(np.array(5.0))), TypeError, "unsized"),
    (lambda g: g.shuffle([1, 2]), TypeError, "DeviceArray"),
    (lambda g: g.integers(0, None), ValueError, "high <= 0"),
    (lambda g: g.integers(0, np.inf), OverflowError, "infinity"),
    (lambda g: g.integers([0, np.inf], 5), OverflowError, "infinity"),
    (lambda g: R.default_rng(-1), ValueError, "non-negative"),
    (lambda g: R.default_rng(1.5), TypeError, "SeedSequence"),
    (lambda g: R.seed(-1), ValueError, "between 0 and 2\\*\\*32 - 1"),
    (lambda g: R.seed(2**32), ValueError, "between 0 and 2\\*\\*32 - 1"),
    (lambda g: R.seed(1.5), TypeError, "Cannot cast"),
    (lambda g: R.randint(5, 5), ValueError, "low >= high"),
    (lambda g: R.choice(np.ones((2, 2))), ValueError, "1-dimensional"),
    (lambda g: R.choice(0), ValueError, "greater than 0"),
]


@pytest.mark.parametrize("call, exc, message", ERRORS)
def test_bad_arguments_raise_numpys_errors(call, exc, message):
    with pytest.raises(exc, match=message):
        call(R.default_rng(0))


def test_empty_population_is_fine_when_nothing_is_taken():
    g = R.default_rng(0)
    assert g.choice(0, size=0).shape == (0,)
    assert g.permutation(-3).shape == (0,)


# ---- the legacy functions ------------------------------------------------------------
def test_legacy_functions_replay_after_seed():
    R.seed(42)
    a = [R.rand(3, 2).get(), R.randn(4).get(), R.randint(10, size=5).get(),
         R.random_sample(2).get(), R.random((2,)).get(), R.uniform(1, 2, 3).get(),
         R.normal(0, 1, 3).get(), R.standard_normal(2).get(), R.exponential(1, 2).get(),
         R.standard_exponential(2).get(), R.choice(5, 3).get(), R.permutation(6).get(),
         R.random_integers(3, size=4).get()]
    R.seed(42)
    b = [R.rand(3, 2).get(), R.randn(4).get(), R.randint(10, size=5).get(),
         R.random_sample(2).get(), R.random((2,)).get(), R.uniform(1, 2, 3).get(),
         R.normal(0, 1, 3).get(), R.standard_normal(2).get(), R.exponential(1, 2).get(),
         R.standard_exponential(2).get(), R.choice(5, 3).get(), R.permutation(6).get(),
         R.random_integers(3, size=4).get()]
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert a[0].shape == (3, 2) and a[2].dtype == np.int64 and a[2].max() < 10
    assert a[12].min() >= 1 and a[12].max() <= 3
    assert R.rand().shape == ()
    d = pygpu.asarray(np.arange(5.0))
    R.shuffle(d)
    np.testing.assert_array_equal(np.sort(d.get()), np.arange(5.0))


# ---- found by adversarial testing ------------------------------------------------------------
def test_integers_reach_two_to_the_64_as_a_python_int_high():
    g = R.default_rng(5)
    a = g.integers(2**64, size=4000, dtype=np.uint64).get()
    assert a.dtype == np.uint64 and (a >= 2**63).mean() > 0.4
    b = R.randint(2**64, size=3, dtype=np.uint64)
    assert b.shape == (3,) and b.dtype == np.uint64
    c = g.integers(np.zeros(2, np.uint64), np.array([2**64, 5], dtype=object), (2000, 2),
                   dtype=np.uint64).get()
    assert (c[:, 0] >= 2**63).mean() > 0.4 and c[:, 1].max() <= 4
    with pytest.raises(ValueError, match="high is out of bounds"):
        g.integers(0, np.array([2**65], dtype=object), dtype=np.uint64)
    with pytest.raises(TypeError, match="high must hold integers"):
        g.integers(0, np.array([1.5], dtype=object))


def test_a_bool_size_and_string_parameters_are_type_errors_as_numpys():
    g = R.default_rng(5)
    for call in (lambda: g.random(True), lambda: g.integers(3, size=np.True_),
                 lambda: g.uniform(0, 1, "3"), lambda: g.uniform("0", 1),
                 lambda: g.normal(0, "1"), lambda: g.exponential("2", 3)):
        with pytest.raises(TypeError):
            call()
    assert g.random(np.int8(3)).shape == (3,)


def test_out_must_be_writeable():
    g = R.default_rng(5)
    base = pygpu.asarray(np.arange(6.0))
    ro = pygpu.broadcast_to(base, (6,))  # C-contiguous but read-only
    for fill in (g.random, g.standard_normal, g.standard_exponential):
        with pytest.raises(ValueError, match="not contiguous, writable or aligned"):
            fill(out=ro)
    np.testing.assert_array_equal(base.get(), np.arange(6.0))


def test_float32_parameters_out_of_float32s_range_are_an_overflow_error():
    g = R.default_rng(5)
    # high - low = 6e38 is inf in float32: every value would be inf
    calls = [lambda: g.uniform(-3e38, 3e38, 4, dtype=np.float32),
             lambda: g.normal(0, 1e39, 4, dtype=np.float32),
             lambda: g.exponential(1e39, 4, dtype=np.float32),
             lambda: g.normal(np.array([1e39]), 1.0, dtype=np.float32),
             lambda: g.exponential(np.array([1.0, 1e39]), dtype=np.float32)]
    for call in calls:
        with pytest.raises(OverflowError, match="out of the range of float32"):
            call()
    a = g.uniform(-1e38, 1e38, 1000, dtype=np.float32).get()
    assert np.isfinite(a).all() and a.min() < 0 < a.max()
    assert np.isinf(g.normal(np.inf, 1.0, 2).get()).all()  # an infinite loc, as NumPy's


# ---- the module --------------------------------------------------------------------------
def test_importing_pygpu_random_compiles_nothing():
    code = ("import pygpu, sys; r = pygpu.random; "
            "assert not r._units and not r._functions; "
            "assert 'pygpu.random' in sys.modules; print(r.default_rng)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "default_rng" in out.stdout


def test_every_kernel_compiles_with_nvrtc():
    out = run_with_nvrtc(
        "import pygpu.random as R\n"
        "from pygpu.rawkernel import compile_cuda\n"
        "image, log, _ = compile_cuda(R.render(), R.OPTIONS, arch='sm_90')\n"
        "print(len(image) > 0)\n")
    assert out.strip().endswith("True")


def test_a_negative_zero_scale_is_refused_and_an_empty_draw_checks_nothing():
    g = pygpu.random.default_rng(0)
    for draw in (lambda: g.normal(0, -0.0, 2), lambda: g.exponential(-0.0, 2),
                 lambda: g.normal(0, np.array([1.0, -0.0]), 2)):
        with pytest.raises(ValueError, match="scale < 0"):
            draw()
    assert g.integers(5, 5, size=0).shape == (0,)
    with pytest.raises(ValueError, match="low >= high"):
        g.integers(5, 5)
