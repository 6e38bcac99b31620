"""Indexing with integer arrays, boolean masks and their mixes with slices,
None and ..., getting and setting, and take, take_along_axis, put, nonzero,
argwhere, flatnonzero, compress, extract, place: NumPy's answers, or NumPy's
exception with NumPy's message."""

import numpy as np
import pytest
from conftest import random_array

import pygpu
from pygpu._ops.table import DEVICE_TYPES

DTYPES = sorted({np.dtype(c) for c in DEVICE_TYPES}, key=lambda d: d.char)


def dev(h):
    return pygpu.asarray(np.array(h, order="C"))


def same(got, want):
    assert isinstance(got, pygpu.DeviceArray)
    h = got.copy_to_host()
    assert h.shape == want.shape and h.dtype == want.dtype, (h.shape, h.dtype, want.shape,
                                                             want.dtype)
    np.testing.assert_array_equal(h, want)


def error_of(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type and message are compared
        return type(exc), str(exc)
    return None


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_mask_selects_in_order_for_every_dtype(rng, dtype):
    # 9000 elements: three tiles of the compaction, the last one partial
    h = random_array(rng, (9000,), dtype)
    mask = random_array(rng, (9000,), np.bool_)
    d = dev(h)
    same(d[dev(mask)], h[mask])
    same(d[mask], h[mask])  # a host mask


@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed", "transposed", "0-d",
                                    "empty", "odd"])
def test_mask_layouts(rng, layout):
    base = random_array(rng, (37, 41), np.float32)
    h = {"contiguous": base, "strided": base[::2, 1::3], "reversed": base[::-1, ::-1],
         "transposed": base.T, "0-d": base[3, 4], "empty": base[:0],
         "odd": base[:3, :1]}[layout]
    d = {"contiguous": dev(base), "strided": dev(base)[::2, 1::3],
         "reversed": dev(base)[::-1, ::-1], "transposed": dev(base).T,
         "0-d": dev(base)[3, 4], "empty": dev(base)[:0], "odd": dev(base)[:3, :1]}[layout]
    same(d[d > 0.3], h[h > 0.3])
    same(d[d > 10], h[h > 10])  # nothing selected
    dm = d < 0  # a device mask, indexing another layout
    same(d[dm], h[h < 0])


def test_mask_with_every_element_true_and_multi_tile_offsets(rng):
    h = random_array(rng, (3 * 4096 + 5,), np.int16)
    d = dev(h)
    same(d[d == d], h)
    m = np.zeros(h.shape, bool)
    m[[0, 4095, 4096, 8191, 8192, 12292]] = True
    same(d[dev(m)], h[m])


KEYS = [
    [0, 2, -1],
    np.array([[1, 0], [3, 3]]),
    (0, slice(None), [0, 1]),
    ([0, 1], slice(None), 0),
    (slice(None), [[0], [2]], [1, 3, 4]),
    (Ellipsis, [1, -1]),
    (None, [1, 2], None),
    ([0, 2], None, [1, 1]),
    ([[0, 1]], [[2], [1]], slice(1, None, 2)),
    (slice(None, None, -1), [2, 0]),
    (1, [2, 0], [3, 3]),
    True,
    (False,),
    (Ellipsis, True),
    np.array(2),
    [],
    np.array([], dtype=np.int64),
    ([[]], slice(None)),
    np.array([True, False, True, True, False]),
    (slice(None), [True, False, False, True, True, False]),
    (np.array([[True, False, True, False, True, True]] * 5), 2),
    ([4, 0], np.array([True, False, False, True, False, False])),
]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_keys_give_numpys_result(rng, key):
    h = random_array(rng, (5, 6, 7), np.float64)
    same(dev(h)[key], h[key])


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_device_index_arrays_give_numpys_result(rng, key):
    h = random_array(rng, (5, 6, 7), np.int32)

    def on_device(k):
        if isinstance(k, list):
            return dev(np.asarray(k)) if np.asarray(k).dtype != np.float64 else k
        return dev(k) if isinstance(k, np.ndarray) else k

    dkey = tuple(on_device(k) for k in key) if isinstance(key, tuple) else on_device(key)
    same(dev(h)[dkey], h[key])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gather_and_scatter_every_dtype(rng, dtype):
    h = random_array(rng, (7, 9), dtype)
    i = rng.integers(-7, 7, size=(4, 3))
    j = rng.integers(0, 9, size=(3,))
    d = dev(h)
    same(d[i, j], h[i, j])
    same(d[:, dev(j.astype(np.int32))], h[:, j])
    v = random_array(rng, (4, 3), dtype)
    rows = np.array([6, 0, 2, 3])
    cols = np.array([8, 1, 4])
    h[rows[:, None], cols] = v
    d[dev(rows)[:, None], cols] = dev(v)
    same(d, h)


@pytest.mark.parametrize("itype", [np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.uint32, np.int64, np.uint64], ids=str)
def test_every_integer_index_dtype(rng, itype):
    h = random_array(rng, (50,), np.float32)
    i = rng.integers(0, 50, size=20).astype(itype)
    same(dev(h)[dev(i)], h[i])
    same(dev(h)[i], h[i])


def test_index_views_strided_and_reversed(rng):
    h = random_array(rng, (9, 8), np.complex128)
    i = np.arange(20).reshape(4, 5)[::-1, 1::2] % 9  # a strided index array
    di = dev(np.arange(20).reshape(4, 5) % 9)[::-1, 1::2]
    same(dev(h)[::-1][di], h[::-1][i])
    same(dev(h)[1::2, ::-2][di % 4, 1], h[1::2, ::-2][i % 4, 1])
    # a broadcast index (a 0-stride axis)
    same(dev(h)[dev(np.array([[2]])), dev(np.arange(8))], h[np.array([[2]]), np.arange(8)])


def test_results_are_new_arrays(rng):
    h = random_array(rng, (6,), np.float32)
    d = dev(h)
    r = d[[1, 2]]
    r[...] = 0
    same(d, h)


BAD_KEYS = [
    [0, 6],
    (slice(None), [1, -8]),
    (0, [7]),
    ([0, 1], [0, 1, 2]),
    1.5,
    [1.5],
    "a",
    (Ellipsis, Ellipsis),
    (0, 0, 0, 0),
    np.ones(5, bool),
    (slice(None), np.ones((6, 1), bool)),
    np.array([0.0]),
    ([0], 0, 0, 0),
]


@pytest.mark.parametrize("key", BAD_KEYS, ids=repr)
def test_bad_keys_raise_numpys_error(rng, key):
    h = random_array(rng, (6, 7, 2), np.float32)
    want = error_of(lambda: h[key])
    assert want is not None
    assert error_of(lambda: dev(h)[key]) == want
    dkey = tuple(dev(k) if isinstance(k, np.ndarray) else k for k in key) \
        if isinstance(key, tuple) else dev(key) if isinstance(key, np.ndarray) else key
    assert error_of(lambda: dev(h)[dkey]) == want


@pytest.mark.parametrize("index, message", [
    ([0, 3, 9, -1], "index 9 is out of bounds for axis 0 with size 6"),
    ([-7], "index -7 is out of bounds for axis 0 with size 6"),
])
def test_device_index_out_of_bounds_raises_index_error(index, message):
    d = pygpu.zeros((6, 4))
    with pytest.raises(IndexError, match=message):
        d[dev(np.array(index))]
    with pytest.raises(IndexError, match=message):
        d[dev(np.array(index))] = 1.0
    with pytest.raises(IndexError, match=message.replace("axis 0", "axis 1").replace(
            "size 6", "size 4").replace("9", "4").replace("-7", "-5")):
        d[:, dev(np.array([i if i not in (9, -7) else {9: 4, -7: -5}[i] for i in index]))]
    # an empty result still checks its indices, as NumPy
    with pytest.raises(IndexError, match="axis 1 with size 4"):
        d[:0, dev(np.array([5]))]


SET_CASES = [
    ("int32", "x[[0, 2]] = 7"),
    ("int32", "x[[0, 2]] = np.array([[1], [2]])"),
    ("int32", "x[[0, 2], [1, 3]] = [5, 6]"),
    ("int32", "x[:, [0, 3]] = np.arange(6).reshape(3, 2)"),
    ("int32", "x[[0, 1], :] = np.ones((1, 1, 4))"),
    ("int32", "x[[0, 1]] = np.ones(5)"),
    ("int32", "x[[0, 9]] = 1"),
    ("int32", "x[[0]] = 2**40"),
    ("float32", "x[x > 0] = 0"),
    ("float32", "x[x > 0] = np.float64(0.1)"),
    ("float32", "x[x > 100] = [1, 2]"),
    ("float32", "x[x < 100] = np.arange(12)"),
    ("float32", "x[x < 100] = np.arange(11)"),
    ("float32", "x[x < 100] = np.ones((1, 12))"),
    ("float32", "x[x[:, 0] > 0] = 3"),
    ("float32", "x[np.array([True, False, True])] = np.array([1, 2, 3, 4])"),
    ("float32", "x[np.array([True, False])] = 1"),
    ("float64", "x[True] = 5"),
    ("float64", "x[..., [1, 2]] = x[..., [2, 1]]"),
    ("complex128", "x[[1], [2]] = 1 + 2j"),
    ("float64", "x[[1], [2]] = 1 + 2j"),
    ("float64", "x[[0]] = 'abc'"),
    ("bool", "x[[0, 1]] = np.array([0, 2, 0, 1])"),
    ("float16", "x[[0, 1], 1:3] = 70000.0"),
]


@pytest.mark.parametrize("dtype, stmt", SET_CASES)
def test_setitem_gives_numpys_answer_or_numpys_error(rng, dtype, stmt):
    h = (rng.standard_normal((3, 4)) * 10).astype(dtype)
    d = dev(h)

    def run(x):
        with np.errstate(all="ignore"):
            try:
                exec(stmt, {"x": x, "np": np})
            except Exception as exc:  # noqa: BLE001 - the type is compared
                return type(exc)
        return None

    want = run(h)
    got = run(d)
    if want is None:
        assert got is None
        same(d, h)
    else:
        assert got is not None and issubclass(got, want), (got, want)


def test_setitem_with_device_masks_and_values(rng):
    h = random_array(rng, (3, 5000), np.float32)  # more than one tile
    d = dev(h)
    m = h > 0.2
    v = random_array(rng, (int(m.sum()),), np.float64)
    h[m] = v
    d[dev(m)] = dev(v)  # another dtype: cast on the device
    same(d, h)
    hs, ds = h[:, ::-3], d[:, ::-3]  # a strided target
    m = hs < 0
    v = random_array(rng, (int(m.sum()),), np.float32)
    hs[m] = v
    ds[dev(m)] = dev(v)
    same(d, h)
    m = h[:, 0] > -10
    h[m] = h[0]
    d[dev(m)] = d[0]
    same(d, h)


def test_setitem_repeated_indices_write_one_of_the_values():
    d = pygpu.zeros(4)
    d[[1, 1, 1]] = [5.0, 6.0, 7.0]
    assert d.copy_to_host()[1] in (5.0, 6.0, 7.0)
    d[[2, 2]] = 9.0
    assert d.copy_to_host()[2] == 9.0


# ---- the functions ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint64, np.float16, np.complex64],
                         ids=str)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), (0, 3), (4100,)], ids=str)
def test_nonzero_argwhere_flatnonzero(rng, dtype, shape):
    h = random_array(rng, shape, dtype)
    if h.size:
        h.flat[::3] = 0
    d = dev(h)
    got = np.nonzero(d)
    assert isinstance(got, tuple) and len(got) == len(shape)
    for g, w in zip(got, np.nonzero(h), strict=True):
        same(g, w.astype(np.int64))
    for g, w in zip(d.nonzero(), np.nonzero(h), strict=True):
        same(g, w.astype(np.int64))
    same(np.argwhere(d), np.argwhere(h).astype(np.int64))
    same(np.flatnonzero(d), np.flatnonzero(h).astype(np.int64))
    for g, w in zip(np.where(d), np.where(h), strict=True):
        same(g, w.astype(np.int64))


def test_nonzero_of_0d_and_non_contiguous(rng):
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        np.nonzero(pygpu.asarray(np.float32(2)))
    for x in (np.float32(2), np.float32(0)):
        same(np.argwhere(pygpu.asarray(np.asarray(x))), np.argwhere(x).astype(np.int64))
        same(np.flatnonzero(pygpu.asarray(np.asarray(x))),
             np.flatnonzero(x).astype(np.int64))
    h = random_array(rng, (6, 8), np.int16)
    for g, w in zip(np.nonzero(dev(h)[::-2, 1::3]), np.nonzero(h[::-2, 1::3]), strict=True):
        same(g, w.astype(np.int64))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_take_every_dtype(rng, dtype):
    h = random_array(rng, (4, 6), dtype)
    d = dev(h)
    i = np.array([[5, 0], [-1, 3]])
    same(np.take(d, i), np.take(h, i))
    same(np.take(d, dev(i), axis=1), np.take(h, i, axis=1))
    same(d.take([3, 0], axis=0), h.take([3, 0], axis=0))
    same(np.take(d, 2, axis=1), np.take(h, 2, axis=1))


def test_take_modes_and_out(rng):
    h = random_array(rng, (5, 3), np.float32)
    d = dev(h)
    i = np.array([-7, 0, 4, 12])
    for mode in ("wrap", "clip"):
        same(np.take(d, i, axis=0, mode=mode), np.take(h, i, axis=0, mode=mode))
        same(np.take(d, dev(i), axis=0, mode=mode), np.take(h, i, axis=0, mode=mode))
    assert error_of(lambda: np.take(d, i, axis=0)) == error_of(lambda: np.take(h, i, axis=0))
    assert error_of(lambda: np.take(d, dev(i), axis=0))[0] is IndexError
    out = pygpu.zeros((2, 3), np.float32)
    r = np.take(d, [1, 2], axis=0, out=out)
    assert r is out
    same(out, np.take(h, [1, 2], axis=0))
    with pytest.raises(np.exceptions.AxisError):
        np.take(d, [0], axis=2)
    with pytest.raises(TypeError, match="indices must be integers"):
        np.take(d, np.array([0.5]))


def test_take_along_axis(rng):
    h = random_array(rng, (4, 5, 3), np.float64)
    d = dev(h)
    idx = np.argsort(h, axis=1)
    for axis in (0, 1, 2, -1):
        idx = np.argsort(h, axis=axis)[..., :2] if axis in (2, -1) else np.argsort(h, axis)
        same(np.take_along_axis(d, dev(idx), axis), np.take_along_axis(h, idx, axis))
    flat = np.array([3, 0, 59])
    same(np.take_along_axis(d, flat, None), np.take_along_axis(h, flat, None))
    with pytest.raises(ValueError, match="same number of dimensions"):
        np.take_along_axis(d, np.array([0]), 0)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_put_modes_and_repeats(rng, layout):
    h = random_array(rng, (4, 5), np.int32)
    d = dev(h)
    if layout == "transposed":
        h, d = h.T, d.T
    np.put(h, [0, 7, -1], [10, 20, 30])
    np.put(d, dev(np.array([0, 7, -1])), dev(np.array([10, 20, 30], np.int32)))
    same(d, h)
    np.put(h, [1, 2, 3, 4], [5, 6])  # values repeated
    d.put([1, 2, 3, 4], [5, 6])
    same(d, h)
    for mode in ("wrap", "clip"):
        np.put(h, [-30, 25], [1, 2], mode=mode)
        np.put(d, [-30, 25], [1, 2], mode=mode)
        same(d, h)
    assert error_of(lambda: np.put(d, [20], 1)) == error_of(lambda: np.put(h, [20], 1))
    with pytest.raises(IndexError, match="index 21 is out of bounds for axis 0 with size 20"):
        np.put(d, dev(np.array([21])), 1)


def test_compress_extract_place(rng):
    h = random_array(rng, (4, 6), np.float32)
    d = dev(h)
    c = np.array([True, False, True, True])
    same(np.compress(c, d, axis=0), np.compress(c, h, axis=0))
    same(d.compress(dev(c[:3]), axis=1), h.compress(c[:3], axis=1))
    same(np.compress([0, 1, 1], d), np.compress([0, 1, 1], h))
    assert error_of(lambda: np.compress(np.ones(7, bool), d, axis=1)) == \
        error_of(lambda: np.compress(np.ones(7, bool), h, axis=1))
    cond = h > 0
    same(np.extract(dev(cond), d), np.extract(cond, h))
    same(np.extract(d, d), np.extract(h, h))
    vals = np.array([1.5, -2.5, 3.5], np.float32)
    np.place(h, cond, vals)
    np.place(d, dev(cond), dev(vals))
    same(d, h)
    ht, dt = h.T, d.T  # a strided target
    np.place(ht, ht < 0, np.array([9, 8], np.float32))
    np.place(dt, dt < 0, np.array([9, 8], np.float32))
    same(d, h)
    assert error_of(lambda: np.place(d, d > -100, [])) == \
        error_of(lambda: np.place(h, h > -100, []))
    np.place(d, d > 100, [])  # nothing to place: no error, as NumPy
    same(d, h)
    # NumPy's place casts safely only
    assert error_of(lambda: np.place(d, d > 0, dev(vals.astype(np.float64)))) == \
        error_of(lambda: np.place(h, h > 0, vals.astype(np.float64)))


def test_functions_are_in_the_namespace_and_refuse_host_arrays(rng):
    h = random_array(rng, (5,), np.float32)
    d = dev(h)
    same(pygpu.take(d, [1, 1]), h[[1, 1]])
    same(pygpu.nonzero(d > 0)[0], np.nonzero(h > 0)[0].astype(np.int64))
    with pytest.raises(TypeError, match="host memory"):
        pygpu.nonzero(h)
    with pytest.raises(TypeError, match="takes a DeviceArray"):
        pygpu.argwhere([1, 2])


def test_index_kernels_compile_for_the_gpu():
    from conftest import run_with_nvrtc

    assert "ok" in run_with_nvrtc("""
from pygpu.rawkernel import compile_cuda
from pygpu._ops.indexing import render
# every template once: the count and scan, the compactions, gather, scatter, check
compile_cuda(render(["pg_index_count", "pg_index_scan", "pg_index_coords", "pg_index_take4",
                     "pg_index_take_one16",
                     "pg_index_place8", "pg_index_gather16_i4", "pg_index_scatter2_i8",
                     "pg_index_check_i8"]),
             arch="sm_90")
print("ok")
""")


# ---- found by adversarial testing -----------------------------------------------------------

def test_a_huge_uint64_host_index_wraps_as_numpys_cast_to_intp(rng):
    h = random_array(rng, (7, 3), np.float32)
    d = dev(h)
    for key in (np.array([0, 2**64 - 1, 2**64 - 7], np.uint64),
                np.array([[2**64 - 2], [1]], np.uint64)):
        same(d[key], h[key])  # a host key
        same(d[dev(key)], h[key])  # the same key on the device
    big = np.array([2**63], np.uint64)  # -2**63 as intp: out of bounds either way
    assert error_of(lambda: d[big])[0] is IndexError
    assert error_of(lambda: h[big])[0] is IndexError


def test_take_put_and_take_along_axis_by_keyword(rng):
    h = random_array(rng, (4, 5), np.float64)
    idx = np.argsort(h, axis=1)
    same(pygpu.take(a=dev(h), indices=[3, 1], axis=1), np.take(a=h, indices=[3, 1], axis=1))
    same(pygpu.take_along_axis(arr=dev(h), indices=dev(idx), axis=1),
         np.take_along_axis(arr=h, indices=idx, axis=1))
    d, want = dev(h), h.copy()
    pygpu.put(a=d, ind=[0, 7], v=dev(np.array([5.0, 6.0])))
    np.put(a=want, ind=[0, 7], v=[5.0, 6.0])
    same(d, want)


def test_take_along_axis_with_non_integer_indices_is_numpys_index_error(rng):
    h = random_array(rng, (4, 5), np.float32)
    for idx in (np.zeros((4, 1)), np.ones((4, 1), bool)):
        with pytest.raises(IndexError):
            np.take_along_axis(h, idx, 1)
        with pytest.raises(IndexError, match="indices must be integers"):
            pygpu.take_along_axis(dev(h), dev(idx), 1)


def test_no_advanced_write_into_a_read_only_view(rng):
    h = random_array(rng, (7,), np.float64)
    base = dev(h)
    writes = [lambda r: r.__setitem__(r > 0, 1.0),
              lambda r: r.__setitem__(np.ones(r.shape, bool), 1.0),
              lambda r: r.__setitem__(dev(np.zeros(r.ndim, np.int64)), 1.0),
              lambda r: r.__setitem__(tuple(np.zeros(1, np.int64) for _ in r.shape), 1.0),
              lambda r: pygpu.place(r, r == r, [9.0]),
              lambda r: pygpu.put(r, [0], 9.0)]
    views = [pygpu.broadcast_to(base, (2, 7)),  # strided: a scatter
             pygpu.broadcast_to(base, (7,)),  # C-contiguous, read-only all the same
             pygpu.diagonal(dev(np.ones((3, 3))))]
    for r in views:
        for write in writes:
            with pytest.raises(ValueError, match="read-only"):
                write(r)
    same(base, h)
    with pytest.raises(ValueError):  # as NumPy's
        np.place(np.broadcast_to(h, (2, 7)), np.ones((2, 7), bool), [9.0])


def test_a_bad_device_index_in_a_set_writes_nothing(rng):
    h = random_array(rng, (6, 5), np.int32)
    for key in (np.array([1, 70]), (np.array([0, 1]), np.array([2, -6])),
                (slice(None), np.array([[4], [5]]))):
        d = dev(h)
        dkey = tuple(dev(k) if isinstance(k, np.ndarray) else k for k in key) \
            if isinstance(key, tuple) else dev(key)
        want = error_of(lambda: h.copy().__setitem__(key, 7))  # noqa: B023
        assert error_of(lambda: d.__setitem__(dkey, 7)) == want  # noqa: B023
        same(d, h)  # NumPy checks every index before it writes any


def test_index_arrays_broadcasting_to_nothing_are_not_checked(rng):
    h = random_array(rng, (4, 5), np.float32)
    for key in [(np.array([99]), np.zeros(0, np.int64)),
                (np.zeros((0, 1), np.int64), np.array([[99, 1]]))]:
        for d_key in (key, tuple(dev(k) for k in key)):
            same(dev(h)[d_key], h[key])
            d, want = dev(h), h.copy()
            d[d_key] = 1
            want[key] = 1
            same(d, want)
    # an empty result from another axis: NumPy still checks
    for key in [(slice(0, 0), np.array([99])), (np.array([99]), slice(0, 0))]:
        want = error_of(lambda: h[key])  # noqa: B023
        assert want[0] is IndexError
        assert error_of(lambda: dev(h)[key]) == want  # noqa: B023
        dkey = tuple(dev(k) if isinstance(k, np.ndarray) else k for k in key)
        assert error_of(lambda: dev(h)[dkey]) == want  # noqa: B023


def test_take_with_a_huge_uint64_scalar_wraps_as_numpys(rng):
    h = random_array(rng, (7,), np.float64)
    got = pygpu.take(dev(h), np.uint64(2**64 - 1))
    assert got.shape == () and got.copy_to_host() == h[-1]


def test_a_value_sharing_memory_with_the_target_is_read_before_the_write(rng):
    # a diagonal view reaches x's memory through the interface (its base is
    # not x): the values must still be read before the scatter writes
    h = random_array(rng, (3, 3), np.float64)
    flat = np.array([4, 8, 0])
    want = h.copy()
    want.reshape(-1)[flat] = want.diagonal()
    d = dev(h)
    d.reshape(-1)[dev(flat)] = pygpu.diagonal(d)
    same(d, want)
    d = dev(h)
    pygpu.put(d, dev(flat), pygpu.diagonal(d))
    same(d, want)
    # an index array that is a view of the target itself
    hi = np.array([3, 0, 1, 2])
    want = hi.copy()
    want[want[::-1]] = [10, 11, 12, 13]
    di = dev(hi)
    di[di[::-1]] = dev(np.array([10, 11, 12, 13]))
    same(di, want)


# ---- x[mask] of up to one tile: one launch, the count in a page-locked word ------------------

@pytest.mark.parametrize("n", [1, 31, 32, 255, 256, 257, 4095, 4096, 4097])
@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.int64, np.complex128],
                         ids=str)
def test_mask_of_one_tile_selects_in_order(rng, n, dtype):
    h = random_array(rng, (n,), dtype)
    d = dev(h)
    patterns = [random_array(rng, (n,), np.bool_), np.ones(n, bool), np.zeros(n, bool)]
    for at in (0, n - 1):
        m = np.zeros(n, bool)
        m[at] = True
        patterns.append(m)
    for m in patterns:
        same(d[dev(m)], h[m])


def test_mask_of_one_tile_in_two_dimensions_and_strided(rng):
    h = random_array(rng, (40, 50), np.float32)
    d = dev(h)
    same(d[d > 0], h[h > 0])
    hv, dv = h[::2, ::-3], d[::2, ::-3]  # strided x and mask
    same(dv[dv > 0], hv[hv > 0])
    same(dv[dev(h > 0)[::2, ::-3]], hv[(h > 0)[::2, ::-3]])


def test_mask_of_one_tile_result_is_its_own(rng):
    h = random_array(rng, (300,), np.float64)
    d = dev(h)
    for m in (h > 0, np.ones(300, bool)):  # a part, and every element
        r = d[dev(m)]
        r[...] = 7
        same(d, h)
        same(r, np.full(m.sum(), 7.0))


def test_mask_results_alternate_dtypes_and_sizes(rng):
    # the same count word serves every call: each call's count is its own
    cases = [random_array(rng, (n,), dt) for n, dt in
             ((100, np.float32), (4096, np.int16), (7, np.float64), (5000, np.int8),
              (1, np.complex64), (3000, np.uint32))]
    devs = [dev(h) for h in cases]
    for _ in range(2):
        for h, d in zip(cases, devs, strict=True):
            same(d[d != d.dtype.type(0)] if d.dtype.kind != "c" else d[d == d], h[h != 0]
                 if h.dtype.kind != "c" else h)


def test_mask_on_threads_at_once(rng):
    import threading

    hs = [random_array(rng, (64 * (i + 1),), np.float32) for i in range(4)]
    ds = [dev(h) for h in hs]
    bad = []

    def work(i):
        for _ in range(30):
            got = ds[i][ds[i] > 0].copy_to_host()
            if not np.array_equal(got, hs[i][hs[i] > 0]):
                bad.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


def test_mask_on_a_stream_and_on_each_device(rng):
    from pygpu import cuda

    h = random_array(rng, (1000,), np.float32)
    with cuda.stream():
        d = dev(h)
        same(d[d > 0], h[h > 0])
    if len(cuda.gpus) < 2:
        return
    with cuda.gpus[1]:
        d1 = dev(h)
    assert d1.device.id == 1
    same(d1[d1 > 0], h[h > 0])  # device 0 current: the work goes to device 1
    with cuda.gpus[0]:
        s0 = cuda.stream()
    with s0:  # another device's current stream: device 1's default one runs it
        same(d1[d1 > 0], h[h > 0])
        same(d[d > 0], h[h > 0])
    with cuda.gpus[1]:
        m0 = d > 0
    with pytest.raises(ValueError, match="device"):
        d1[m0]  # a mask of another device is refused, and nothing is queued
    same(d1[d1 > 0], h[h > 0])


def test_mask_inside_a_graph_capture_raises_and_then_works(rng):
    from pygpu import cuda
    from pygpu._ops import indexing

    h = random_array(rng, (500,), np.float32)
    d = dev(h)
    m = d > 0
    retired = len(indexing._retired)
    with cuda.graph() as g:
        with pytest.raises(pygpu.CudaError, match="capture"):
            d[m]
    assert len(indexing._retired) == retired + 1
    word = indexing._retired[-1]
    assert all(w is not word for w in indexing._words)
    g.replay()  # the recorded selection writes into the retired word, not a live one
    g.replay()
    same(d[m], h[h > 0])
    same(d[d < 0], h[h < 0])
    assert word[0][0] == (h > 0).sum()  # (the graph's count)


@pytest.mark.parametrize("mode", ["wrap", "clip", "raise"])
def test_an_empty_take_from_an_empty_axis_is_empty_in_every_mode(mode):
    e = pygpu.asarray(np.zeros(0))
    for idx in (pygpu.asarray(np.array([], np.int64)), np.array([], np.int64)):
        got = pygpu.take(e, idx, mode=mode)
        assert got.shape == (0,) and got.dtype == np.float64
    with pytest.raises(IndexError):
        pygpu.take(e, np.array([0]), mode=mode)
