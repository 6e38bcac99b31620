"""Manipulation functions (pygpu/_ops/manipulation.py): joining, splitting,
views (flip, moveaxis, broadcast_to, ...), copies (tile, repeat, roll, pad),
diff and cumulative_sum/prod, against NumPy: the same dtype, shape and
values, views where NumPy gives views, and the same exceptions."""

import subprocess
import sys

import numpy as np
import pytest

import pygpu
from pygpu._ops import manipulation as M
from pygpu._ops.table import DEVICE_TYPES, canonical

CHARS = tuple(dict.fromkeys(canonical(c) for c in DEVICE_TYPES))
rng = np.random.default_rng(11252026)


def random(shape, char):
    """Random values of a dtype, never all zeros."""
    dt = np.dtype(char)
    if dt.kind == "b":
        x = rng.random(shape) > 0.5
        x.flat[0] = True
        return x
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -50
        return rng.integers(lo, 100, shape, endpoint=True).astype(dt) | dt.type(1)
    x = rng.standard_normal(shape) + 0.5
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def host(a):
    return a.copy_to_host() if isinstance(a, pygpu.DeviceArray) else a


def check(got, want):
    """Same type of result, dtype, shape and values."""
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            check(g, w)
        return
    assert isinstance(got, pygpu.DeviceArray)
    g = host(got)
    assert g.dtype == want.dtype and g.shape == want.shape
    np.testing.assert_array_equal(g, want)


def layouts(x):
    """(device view, host view) pairs: contiguous, strided, reversed,
    transposed."""
    d = pygpu.asarray(x)
    return [(d, x), (d[:, ::2], x[:, ::2]), (d[::-1, :, ::-1], x[::-1, :, ::-1]),
            (d.transpose(2, 0, 1), x.transpose(2, 0, 1))]


def shares_memory(view, base):
    """Writing through base shows in view."""
    before = host(view).copy()
    base[...] = 0
    return view.size == 0 or not np.array_equal(host(view), before)


# ---- joining ----------------------------------------------------------------------------------

@pytest.mark.parametrize("char", CHARS)
def test_concatenate_and_stack_in_every_dtype_and_layout(char):
    x = random((3, 4, 5), char)
    for d, ref in layouts(x):
        check(M.concatenate([d, d[:1]], 0), np.concatenate([ref, ref[:1]], 0))
        check(M.concatenate([d, d], -1), np.concatenate([ref, ref], -1))
        check(M.stack([d, d[::-1]], 1), np.stack([ref, ref[::-1]], 1))
    check(M.concatenate([pygpu.asarray(x), pygpu.asarray(x)], None),
          np.concatenate([x, x], None))


def test_concatenate_promotes_casts_and_writes_into_out():
    a, b = random((2, 3), "f"), random((4, 3), "h")
    da, db = pygpu.asarray(a), pygpu.asarray(b)
    check(M.concatenate([da, db]), np.concatenate([a, b]))
    check(pygpu.concatenate([da, db]), np.concatenate([a, b]))
    check(M.concatenate([da, db], dtype=np.complex64), np.concatenate([a, b], dtype=np.complex64))
    check(M.concatenate([da, db], dtype=np.int8, casting="unsafe"),
          np.concatenate([a, b], dtype=np.int8, casting="unsafe"))
    out = pygpu.empty((6, 3), np.float64)
    assert M.concatenate([da, db], out=out) is out
    check(out, np.concatenate([a, b]).astype(np.float64))
    check(M.concatenate([da, db[:0]]), np.concatenate([a, b[:0]]))
    check(M.concat([da, db], axis=0), np.concat([a, b], axis=0))
    check(M.stack([da, da], dtype=np.float64), np.stack([a, a], dtype=np.float64))


@pytest.mark.parametrize("call, error", [
    (lambda d: M.concatenate([]), ValueError),
    (lambda d: M.concatenate([d[0, 0], d[0, 0]]), ValueError),
    (lambda d: M.concatenate([d, d[0]]), ValueError),
    (lambda d: M.concatenate([d, d[:, :1]]), ValueError),
    (lambda d: M.concatenate([d, d], 2), np.exceptions.AxisError),
    (lambda d: M.concatenate([d, d], dtype=np.int32), TypeError),
    (lambda d: M.concatenate([d, d], out=pygpu.empty((4, 3), np.int32)), TypeError),
    (lambda d: M.concatenate([d, d], out=pygpu.empty((4, 4))), ValueError),
    (lambda d: M.concatenate([d, d], out=pygpu.empty((4, 3)), dtype=np.float64), TypeError),
    (lambda d: M.concatenate([d, np.ones((2, 3))]), TypeError),
    (lambda d: M.concatenate([d, d], dtype=np.longdouble), TypeError),
    (lambda d: M.stack([]), ValueError),
    (lambda d: M.stack([d, d[:1]]), ValueError),
    (lambda d: M.stack([d, d], 3), np.exceptions.AxisError),
])
def test_concatenate_and_stack_refuse_bad_arguments(call, error):
    with pytest.raises(error):
        call(pygpu.asarray(random((2, 3), "d")))


def test_hstack_vstack_dstack_column_stack_and_atleast():
    x, v = random((3, 4), "d"), random((4,), "d")
    d, dv = pygpu.asarray(x), pygpu.asarray(v)
    s = pygpu.asarray(np.array(2.5))
    check(M.hstack([d, d[:, :1]]), np.hstack([x, x[:, :1]]))
    check(M.hstack([dv, dv[::-1]]), np.hstack([v, v[::-1]]))
    check(M.hstack([s, s]), np.hstack([np.array(2.5), np.array(2.5)]))
    check(M.vstack([d, dv]), np.vstack([x, v]))
    check(M.vstack(d), np.vstack(x))
    check(M.dstack([d, d]), np.dstack([x, x]))
    check(M.dstack([dv, dv]), np.dstack([v, v]))
    check(M.column_stack([dv, d.T]), np.column_stack([v, x.T]))
    check(M.atleast_1d(s), np.atleast_1d(np.array(2.5)))
    check(M.atleast_2d(dv, s), np.atleast_2d(v, np.array(2.5)))
    check(M.atleast_3d(d, dv, s), np.atleast_3d(x, v, np.array(2.5)))


# ---- splitting ----------------------------------------------------------------------------------

def test_split_array_split_and_unstack_are_views_as_numpys():
    x = random((4, 6, 3), "f")
    d = pygpu.asarray(x)
    check(M.split(d, 3, axis=1), np.split(x, 3, axis=1))
    check(M.split(d, [1, 3, 10], axis=-2), np.split(x, [1, 3, 10], axis=-2))
    check(M.split(d, [-1, 1, 7]), np.split(x, [-1, 1, 7]))
    check(M.array_split(d, 4, axis=1), np.array_split(x, 4, axis=1))
    check(M.array_split(d[::-1], 5, axis=2), np.array_split(x[::-1], 5, axis=2))
    check(M.unstack(d, axis=1), np.unstack(x, axis=1))
    check(M.unstack(d[:, :0], axis=1), np.unstack(x[:, :0], axis=1))
    assert shares_memory(M.split(d, 2)[1], d)


@pytest.mark.parametrize("call, error", [
    (lambda d: M.split(d, 4, 1), ValueError), (lambda d: M.split(d, 0), ZeroDivisionError),
    (lambda d: M.array_split(d, 0), ValueError), (lambda d: M.array_split(d, 2, 3), ValueError),
    (lambda d: M.array_split(d[0, 0], 2), IndexError), (lambda d: M.unstack(d[0, 0]), ValueError),
    (lambda d: M.unstack(d, axis=2), np.exceptions.AxisError),
])
def test_split_refuses_bad_arguments(call, error):
    with pytest.raises(error):
        call(pygpu.asarray(random((2, 3), "d")))


# ---- views ------------------------------------------------------------------------------------

def test_flip_rot90_and_axis_moves_are_views_with_numpys_values():
    x = random((3, 4, 5), "d")
    for make, ref in [
        (lambda d: M.flip(d), lambda a: np.flip(a)),
        (lambda d: M.flip(d, (0, 2)), lambda a: np.flip(a, (0, 2))),
        (lambda d: M.fliplr(d), np.fliplr), (lambda d: M.flipud(d), np.flipud),
        (lambda d: M.rot90(d), np.rot90), (lambda d: M.rot90(d, 2), lambda a: np.rot90(a, 2)),
        (lambda d: M.rot90(d, -1, (2, 0)), lambda a: np.rot90(a, -1, (2, 0))),
        (lambda d: M.moveaxis(d, [0, 1], [-1, 0]), lambda a: np.moveaxis(a, [0, 1], [-1, 0])),
        (lambda d: M.swapaxes(d, 0, 2), lambda a: np.swapaxes(a, 0, 2)),
        (lambda d: M.permute_dims(d, (2, 0, 1)), lambda a: np.permute_dims(a, (2, 0, 1))),
        (lambda d: M.transpose(d), np.transpose),
        (lambda d: M.transpose(d, (1, -1, 0)), lambda a: np.transpose(a, (1, -1, 0))),
        (lambda d: M.matrix_transpose(d), np.matrix_transpose),
        (lambda d: M.expand_dims(d, (0, -1)), lambda a: np.expand_dims(a, (0, -1))),
        (lambda d: M.expand_dims(d, 2), lambda a: np.expand_dims(a, 2)),
        (lambda d: M.squeeze(M.expand_dims(d, 1)), lambda a: np.squeeze(np.expand_dims(a, 1))),
    ]:
        for d, a in layouts(x)[:3]:
            check(make(d), ref(a))
        d = pygpu.asarray(x)
        assert shares_memory(make(d), d)


def test_flip_of_a_0d_array_and_numpys_dispatch():
    z = pygpu.asarray(np.array(3.5))
    assert host(M.flip(z)) == 3.5
    x = random((2, 3), "i")
    d = pygpu.asarray(x)
    check(np.flip(d, 1), np.flip(x, 1))
    check(np.moveaxis(d, 0, 1), np.moveaxis(x, 0, 1))
    check(d.swapaxes(0, 1), x.swapaxes(0, 1))


@pytest.mark.parametrize("call, error", [
    (lambda d: M.flip(d, 2), np.exceptions.AxisError),
    (lambda d: M.rot90(d, 1, (0, 0)), ValueError), (lambda d: M.rot90(d, 1, (0, 1, 2)), ValueError),
    (lambda d: M.rot90(d, 1, (0, 5)), ValueError),
    (lambda d: M.moveaxis(d, [0, 1], 0), ValueError),
    (lambda d: M.moveaxis(d, 3, 0), np.exceptions.AxisError),
    (lambda d: M.swapaxes(d, 0, 5), np.exceptions.AxisError),
    (lambda d: M.transpose(d, (0, 0)), ValueError), (lambda d: M.transpose(d, (0,)), ValueError),
    (lambda d: M.matrix_transpose(d[0]), ValueError),
    (lambda d: M.expand_dims(d, (0, 0)), ValueError),
    (lambda d: M.expand_dims(d, 4), np.exceptions.AxisError),
    (lambda d: M.squeeze(d, 1), ValueError), (lambda d: M.flip(np.ones(2)), TypeError),
])
def test_views_refuse_bad_axes(call, error):
    with pytest.raises(error):
        call(pygpu.asarray(random((2, 3), "d")))


# ---- broadcasting -------------------------------------------------------------------------------

@pytest.mark.parametrize("char", CHARS)
def test_broadcast_to_is_a_read_only_view_with_zero_strides(char):
    x = random((3, 1, 4), char)
    d = pygpu.asarray(x)
    b = M.broadcast_to(d, (2, 3, 5, 4))
    check(b, np.broadcast_to(x, (2, 3, 5, 4)))
    assert b.strides[0] == 0 and b.strides[2] == 0
    with pytest.raises(ValueError, match="read-only"):
        b[...] = x.flat[0]
    check(M.broadcast_to(d[::-1, :, ::2], (3, 3, 2)), np.broadcast_to(x[::-1, :, ::2], (3, 3, 2)))
    check(M.broadcast_to(d[0, 0, 0], 3), np.broadcast_to(x[0, 0, 0], 3))
    check(M.broadcast_to(d, (0, 3, 1, 4)), np.broadcast_to(x, (0, 3, 1, 4)))
    assert shares_memory(b, d)


def test_broadcast_arrays_and_shapes():
    x, y = random((3, 1), "f"), random((4,), "q")
    dx, dy = pygpu.asarray(x), pygpu.asarray(y)
    check(np.broadcast_arrays(dx, dy), np.broadcast_arrays(x, y))
    check(tuple(M.broadcast_arrays(dx, dx)), np.broadcast_arrays(x, x))
    assert type(pygpu.broadcast_arrays(dx, dy)) is list  # the array API's (2024.12)
    check(np.broadcast_to(dy, (2, 4)), np.broadcast_to(y, (2, 4)))
    assert M.broadcast_shapes((3, 1), (4,), ()) == (3, 4)
    for call in (lambda: M.broadcast_to(dx, (2, 2)), lambda: M.broadcast_to(dx, (-1, 1)),
                 lambda: M.broadcast_arrays(dy, dy[:3]), lambda: M.broadcast_shapes((2,), (3,))):
        with pytest.raises(ValueError):
            call()


# ---- tile, repeat, roll ---------------------------------------------------------------------

@pytest.mark.parametrize("char", CHARS)
def test_tile_and_repeat_in_every_dtype_and_layout(char):
    x = random((3, 4, 5), char)
    for d, ref in layouts(x):
        check(M.tile(d, (2, 1, 1, 2)), np.tile(ref, (2, 1, 1, 2)))
        check(M.repeat(d, 2, 1), np.repeat(ref, 2, 1))
        for axis in (0, 2):
            counts = rng.integers(0, 4, ref.shape[axis]).tolist()
            check(M.repeat(d, counts, axis), np.repeat(ref, counts, axis))
    check(M.repeat(pygpu.asarray(x), 2), np.repeat(x, 2))


def test_repeat_counts_from_the_device_and_odd_counts():
    x = random((3, 4), "d")
    d = pygpu.asarray(x)
    counts = np.array([1, 0, 4])
    check(M.repeat(d, pygpu.asarray(counts), 0), np.repeat(x, counts, 0))
    check(M.repeat(d, [2], 1), np.repeat(x, [2], 1))
    check(M.repeat(d, 0), np.repeat(x, 0))
    check(M.repeat(d, 1.5), np.repeat(x, 1.5))
    check(M.repeat(d, [1.5, 2, 0], 0), np.repeat(x, [1.5, 2, 0], 0))
    check(M.repeat(d[:0], 2, 1), np.repeat(x[:0], 2, 1))
    check(M.repeat(pygpu.asarray(np.array(2.0)), 3), np.repeat(np.array(2.0), 3))
    check(d.repeat(2, axis=0), x.repeat(2, axis=0))
    check(np.repeat(d, [1, 2, 0], 0), np.repeat(x, [1, 2, 0], 0))
    check(M.tile(d, 0), np.tile(x, 0))
    check(M.tile(d, ()), np.tile(x, ()))
    check(M.tile(d[0, 0], 3), np.tile(x[0, 0], 3))
    check(np.tile(d, 2), np.tile(x, 2))


@pytest.mark.parametrize("call, error", [
    (lambda d: M.repeat(d, -1), ValueError), (lambda d: M.repeat(d, [1, -2], 0), ValueError),
    (lambda d: M.repeat(d, [1, 2, 3], 0), ValueError), (lambda d: M.repeat(d, 2, 2),
                                                        np.exceptions.AxisError),
    (lambda d: M.repeat(d, None, 0), TypeError), (lambda d: M.tile(d, -1), ValueError),
    (lambda d: M.tile(d, 1.5), TypeError), (lambda d: M.tile(d, (2, None)), TypeError),
])
def test_tile_and_repeat_refuse_bad_counts(call, error):
    with pytest.raises(error):
        call(pygpu.asarray(random((2, 3), "d")))


@pytest.mark.parametrize("char", ["?", "b", "e", "D"])
def test_roll_matches_numpy(char):
    x = random((3, 4, 5), char)
    for d, ref in layouts(x):
        for shift, axis in [(2, None), (-7, None), ((1, -7), (0, 2)), (3, -1), ((1, 1), (1, 1)),
                            (10**12, 0)]:
            check(M.roll(d, shift, axis), np.roll(ref, shift, axis))
    check(M.roll(pygpu.asarray(np.array(1.5)), 1), np.roll(np.array(1.5), 1))
    check(M.roll(pygpu.asarray(x[:0]), 2, 0), np.roll(x[:0], 2, 0))
    with pytest.raises(ValueError, match="1D sequences"):
        M.roll(pygpu.asarray(x), [[1]], [0])


# ---- pad ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("char", CHARS)
def test_pad_constant_and_edge_in_every_dtype(char):
    x = random((3, 4, 2), char)
    widths = ((1, 2), (0, 3), (2, 0))
    values = ((1, 0), (1, 1), (0, 1)) if char == "?" else ((1, 2), (3, 4), (5, 6))
    for d, ref in layouts(x)[:3]:
        check(M.pad(d, widths, constant_values=values), np.pad(ref, widths,
                                                                constant_values=values))
        check(M.pad(d, widths, "edge"), np.pad(ref, widths, "edge"))
    check(M.pad(pygpu.asarray(x), 2), np.pad(x, 2))


def test_pad_reflect_symmetric_wrap_and_empty():
    x = random((3, 4), "f")
    d = pygpu.asarray(x)
    for mode in ("reflect", "symmetric", "wrap"):
        for widths in [((1, 2), (7, 3)), 5, (0, 2)]:
            check(M.pad(d[::-1], widths, mode), np.pad(x[::-1], widths, mode))
    got = M.pad(d, 1, "empty")
    assert got.shape == (5, 6) and np.array_equal(host(got)[1:-1, 1:-1], x)
    check(M.pad(d, (2, 1), constant_values=np.nan), np.pad(x, (2, 1), constant_values=np.nan))
    check(M.pad(pygpu.asarray(x.astype(np.int8)), 1, constant_values=2.7),
          np.pad(x.astype(np.int8), 1, constant_values=2.7))
    check(M.pad(d[:0], 2), np.pad(x[:0], 2))
    check(M.pad(d[:0], ((0, 0), (1, 1)), "edge"), np.pad(x[:0], ((0, 0), (1, 1)), "edge"))
    check(M.pad(pygpu.asarray(np.array(2.0)), 2), np.pad(np.array(2.0), 2))
    check(M.pad(d, 0, "edge"), np.pad(x, 0, "edge"))
    check(np.pad(d, 1, mode="edge"), np.pad(x, 1, mode="edge"))


PAD_MODES = [
    ("linear_ramp", {}), ("linear_ramp", {"end_values": ((1, 2), (3, 4), (5, 6))}),
    ("maximum", {}), ("minimum", {"stat_length": 2}), ("mean", {}),
    ("mean", {"stat_length": ((1, 2), (3, 1), (2, 2))}), ("median", {}),
    ("median", {"stat_length": 3}), ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "even"}),
]


@pytest.mark.parametrize("char", CHARS)
@pytest.mark.parametrize("mode, kwargs", PAD_MODES)
def test_pad_every_mode_in_every_dtype(char, mode, kwargs):
    x = random((3, 4, 2), char)
    if np.dtype(char).kind in "fc":
        x.flat[5] = np.nan  # the statistics of a slice with a NaN are NaN, as NumPy's
    for widths in [((1, 2), (7, 3), (0, 1)), 2, {0: 3, -1: (1, 0)}]:
        for d, ref in layouts(x)[:3]:
            want = np.pad(ref, widths, mode, **kwargs)
            got = M.pad(d, widths, mode, **kwargs)
            if mode == "mean" and want.dtype.kind in "fc":  # pygpu's sums: last bits
                g = host(got)
                assert g.dtype == want.dtype and g.shape == want.shape
                # (float32 means of values that cancel: a few ulps of the inputs)
                np.testing.assert_allclose(g, want, rtol=1e-3 if char in "eF" else 1e-6,
                                           atol=1e-6 if char == "f" else 0)
            else:
                check(got, want)


def test_pad_reflections_longer_than_the_array_and_the_legacy_cases():
    x = np.array([3, 1, 4, 1, 5], np.uint8)  # odd reflections wrap around in uint8
    for mode in ("reflect", "symmetric"):
        for widths in [(7, 9), (2, 3), 12]:
            check(M.pad(pygpu.asarray(x), widths, mode, reflect_type="odd"),
                  np.pad(x, widths, mode, reflect_type="odd"))
    for x in (np.array([[2.5]]), np.array([[2], [5]], np.int8), np.array([True, False])):
        check(M.pad(pygpu.asarray(x), (3, 2), "reflect", reflect_type="odd"),
              np.pad(x, (3, 2), "reflect", reflect_type="odd"))  # an axis of 1: its edge
    i = np.arange(6, dtype=np.int16)  # statistics of integers rounded half to even
    check(M.pad(pygpu.asarray(i), (3, 4), "mean"), np.pad(i, (3, 4), "mean"))
    check(M.pad(pygpu.asarray(i), (3, 4), "median", stat_length=((2, 3),)),
          np.pad(i, (3, 4), "median", stat_length=((2, 3),)))
    u = np.arange(6, dtype=np.uint8)
    check(M.pad(pygpu.asarray(u), (3, 4), "linear_ramp", end_values=(100, 300)),
          np.pad(u, (3, 4), "linear_ramp", end_values=(100, 300)))
    check(M.pad(pygpu.asarray(u), 2, constant_values=300), np.pad(u, 2, constant_values=300))
    z = np.array(2.0)
    for mode in ("mean", "linear_ramp", "median"):
        check(M.pad(pygpu.asarray(z), 2, mode), np.pad(z, 2, mode))
    e = np.ones((0, 3))
    check(M.pad(pygpu.asarray(e), ((0, 0), (2, 2)), "mean"), np.pad(e, ((0, 0), (2, 2)), "mean"))
    c = np.array([1 + 2j, 3 - 1j, np.nan + 0j])
    check(M.pad(pygpu.asarray(c), 3, "median"), np.pad(c, 3, "median"))
    check(np.pad(pygpu.asarray(i), {0: (1, 2)}, "maximum"), np.pad(i, {0: (1, 2)}, "maximum"))


@pytest.mark.parametrize("call, error, match", [
    (lambda d: M.pad(d, -1), ValueError, "negative values"),
    (lambda d: M.pad(d, 1.5), TypeError, "integral type"),
    (lambda d: M.pad(d, ((1, 2), (3, 4), (5, 6))), ValueError, "broadcast"),
    (lambda d: M.pad(d, {1: (1, 2.0)}), TypeError, r"pad_width\[1\] must be an int or a pair"),
    (lambda d: M.pad(d, pygpu.asarray([1, 2])), TypeError, "pad_width.tolist"),
    (lambda d: M.pad(d, 1, "foo"), ValueError, "mode 'foo' is not supported"),
    (lambda d: M.pad(d, 1, "edge", constant_values=3), ValueError, "unsupported keyword"),
    (lambda d: M.pad(d, 1, "mean", end_values=3), ValueError, "unsupported keyword"),
    (lambda d: M.pad(d[:0], 1, "edge"), ValueError, "can't extend empty axis 0"),
    (lambda d: M.pad(d[:0], 1, "median"), ValueError, "can't extend empty axis 0"),
    (lambda d: M.pad(d, 1, "maximum", stat_length=0), ValueError, "stat_length of 0"),
    (lambda d: M.pad(d, 1, "constant", constant_values=pygpu.asarray(2.0)), TypeError,
     "constant_values is a DeviceArray"),
    (lambda d: M.pad(d, 1, lambda *a: None), TypeError, "mode is a function"),
    (lambda d: M.pad(np.ones(2), 1), TypeError, "pygpu.asarray"),
])
def test_pad_refuses_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call(pygpu.asarray(random((2, 3), "d")))


# ---- diff, cumulative_sum, cumulative_prod ----------------------------------------------------

@pytest.mark.parametrize("char", CHARS)
def test_diff_in_every_dtype(char):
    x = random((3, 6), char)
    for d, ref in [(pygpu.asarray(x), x), (pygpu.asarray(x)[::-1, ::2], x[::-1, ::2])]:
        check(M.diff(d), np.diff(ref))
        check(M.diff(d, 2, 0), np.diff(ref, 2, 0))
    d = pygpu.asarray(x)
    check(M.diff(d, 1, 0, prepend=d[:1], append=d[-1:]), np.diff(x, 1, 0, prepend=x[:1],
                                                                append=x[-1:]))
    one = x.flat[0].item()
    check(M.diff(d, prepend=one), np.diff(x, prepend=one))


def test_diff_edge_cases_and_errors():
    x = random((3, 4), "d")
    d = pygpu.asarray(x)
    assert M.diff(d, 0) is d
    check(M.diff(d, 5), np.diff(x, 5))
    check(np.diff(d, axis=0), np.diff(x, axis=0))
    for call, error in [(lambda: M.diff(d, -1), ValueError),
                        (lambda: M.diff(pygpu.asarray(np.array(1.0))), ValueError),
                        (lambda: M.diff(d, axis=2), np.exceptions.AxisError),
                        (lambda: M.diff(d, append=x[:1]), TypeError)]:
        with pytest.raises(error):
            call()


@pytest.mark.parametrize("char", CHARS)
def test_cumulative_sum_and_prod_in_every_dtype(char):
    x = random((3, 5), char)
    if np.dtype(char).kind in "fc":
        x = (x / 2).astype(char)  # products stay small
    d = pygpu.asarray(x)
    for f, ref in [(M.cumulative_sum, np.cumulative_sum), (M.cumulative_prod, np.cumulative_prod)]:
        for axis in (0, 1, -1):
            for initial in (False, True):
                got, want = f(d, axis=axis, include_initial=initial), ref(
                    x, axis=axis, include_initial=initial)
                assert host(got).dtype == want.dtype and got.shape == want.shape
                np.testing.assert_allclose(host(got), want, rtol=1e-2 if char in "eF" else 1e-6)
        check(f(d[0], include_initial=True), ref(x[0], include_initial=True)) \
            if np.dtype(char).kind in "biu" else None


def test_cumulative_functions_dtype_out_and_errors():
    x = random((3, 4), "b")
    d = pygpu.asarray(x)
    check(M.cumulative_sum(d, axis=1, dtype=np.int16, include_initial=True),
          np.cumulative_sum(x, axis=1, dtype=np.int16, include_initial=True))
    out = pygpu.empty((4, 4), np.int64)
    assert M.cumulative_sum(d, axis=0, out=out, include_initial=True) is out
    check(out, np.cumulative_sum(x, axis=0, include_initial=True))
    z = pygpu.asarray(np.array(5))
    check(M.cumulative_sum(z), np.cumulative_sum(np.array(5)))
    check(M.cumulative_prod(z, include_initial=True),
          np.cumulative_prod(np.array(5), include_initial=True))
    check(M.cumulative_sum(d[:0], axis=0, include_initial=True),
          np.cumulative_sum(x[:0], axis=0, include_initial=True))
    check(np.cumulative_sum(d, axis=1), np.cumulative_sum(x, axis=1))
    with pytest.raises(ValueError, match="axis"):
        M.cumulative_sum(d)
    with pytest.raises(TypeError, match="float128|longdouble"):
        M.cumulative_sum(d, axis=0, dtype=np.longdouble, include_initial=True)


# ---- methods and the namespace ----------------------------------------------------------------

def test_methods_and_the_pygpu_namespace():
    x = random((3, 4), "f")
    d = pygpu.asarray(x)
    check(d.flatten(), x.flatten())
    check(d.T.flatten("F"), x.T.flatten("F"))
    check(d.T.flatten("A"), x.T.flatten("A"))
    check(d[::-1].flatten("K"), x[::-1].flatten("K"))
    with pytest.raises(ValueError, match="order"):
        d.flatten("Q")
    flat = d.flatten()
    flat[0] = 99.0  # a copy
    assert host(d)[0, 0] == x[0, 0]
    from pygpu._ops import merged

    for name in M.__all__:  # where no area before this one has the name
        assert getattr(pygpu, name) is getattr(merged("__all__")[name], name)
        if merged("__all__")[name] is M:
            assert getattr(pygpu, name) is getattr(M, name)
    check(M.expand_dims(d), np.expand_dims(x, 0))
    check(M.diff(d, prepend=None, append=None), np.diff(x))


# ---- found by adversarial testing -----------------------------------------------------------

def test_split_at_float_indices_is_numpys_type_error_not_a_truncation():
    d = pygpu.asarray(random((6, 4), "f"))
    for f in (M.split, M.array_split):
        with pytest.raises(TypeError, match="slice indices must be integers"):
            f(d, [1.5])
        with pytest.raises(TypeError, match="slice indices must be integers"):
            f(d, np.array([1.0, 3.0]), axis=0)
    # integers of any kind, and a float count of sections, as NumPy's
    check(M.split(d, np.array([1, 3], np.uint8)), np.split(host(d), np.array([1, 3])))
    check(M.array_split(d, 4.0, axis=0), np.array_split(host(d), 4.0, axis=0))


def test_squeeze_refuses_a_repeated_axis():
    d = pygpu.zeros((1, 3, 1))
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        M.squeeze(d, (0, 0))
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        M.squeeze(d, (2, -1))
    assert M.squeeze(d, (0, -1)).shape == (3,)


@pytest.mark.parametrize("f", [M.cumulative_sum, M.cumulative_prod])
def test_cumulative_refuses_a_tuple_of_axes_as_numpy_does(f):
    d = pygpu.asarray(random((3, 4), "f"))
    for axis in ((0, 1), (0,), ()):
        with pytest.raises(ValueError, match="takes one axis"):
            f(d, axis=axis)


def test_concat_and_permute_dims_take_numpys_arguments():
    h = random((2, 3, 4), "f")
    d = pygpu.asarray(h)
    check(M.concat([d, d], 1), np.concat([h, h], 1))  # axis positional, as NumPy's
    check(M.concat([d, d], axis=None, dtype=np.float64), np.concat([h, h], axis=None,
                                                                    dtype=np.float64))
    out = pygpu.zeros((4, 3, 4), np.float32)
    assert M.concat([d, d], out=out) is out
    check(out, np.concat([h, h]))
    check(M.permute_dims(d), np.permute_dims(h))  # no axes: reversed
    check(M.permute_dims(a=d, axes=(1, 0, 2)), np.permute_dims(a=h, axes=(1, 0, 2)))
    check(np.permute_dims(d), np.permute_dims(h))  # through __array_function__


def test_repeat_counts_past_int64_are_an_error_not_numpys_segfault():
    # numpy.repeat(x, [2**62] * 12) crashes the process (numpy 2.4): pygpu
    # checks the total first; in a process of its own, in case it regresses
    code = ("import numpy as np, pygpu\n"
            "d = pygpu.asarray(np.arange(12.0))\n"
            "for reps in (np.full(12, 2**62), pygpu.asarray(np.full(12, 2**62)),\n"
            "             np.array([2**63 - 1] + [3] * 11), 2**62):\n"
            "    try:\n"
            "        pygpu.repeat(d, reps)\n"
            "    except ValueError as e:\n"
            "        assert 'Maximum allowed size exceeded' in str(e), e\n"
            "    else:\n"
            "        raise AssertionError('no error')\n"
            "print('ok', pygpu.repeat(d[:2], np.array([3, 2])).shape)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok (5,)"
