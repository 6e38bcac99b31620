"""Creation functions (pygpu/_ops/creation.py): arange, linspace, logspace,
eye, identity, tri, tril, triu, diag, diagonal, meshgrid, indices and the
device= forms of empty/zeros/ones/full and the *_like functions, against
NumPy: the same dtype, shape and values (bits, where NumPy's arithmetic is
exact), and the same exceptions for bad arguments."""

import numpy as np
import pytest

import pygpu
from pygpu._ops import creation
from pygpu._ops.table import DEVICE_TYPES, canonical

CHARS = tuple(dict.fromkeys(canonical(c) for c in DEVICE_TYPES))
rng = np.random.default_rng(20261125)


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
    """Same type of result, dtype, shape and values (NaN equal to NaN)."""
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            check(g, w)
        return
    assert isinstance(got, pygpu.DeviceArray)
    g = host(got)
    assert g.dtype == want.dtype and g.shape == want.shape
    np.testing.assert_array_equal(g, want)


# ---- arange -------------------------------------------------------------------------------

ARANGE_ARGS = [(0, 37, 1), (3, 70, 4), (-5.5, 17.25, 0.75), (0.1, 9.9, 0.3), (90, -4, -3),
               (1.0, 2.0, 0.01)]


@pytest.mark.parametrize("char", [c for c in CHARS if c != "?"])
def test_arange_gives_numpys_values_bit_for_bit_in_every_dtype(char):
    for start, stop, step in ARANGE_ARGS:
        if np.dtype(char).kind == "u" and min(start, stop) < 0:
            continue
        check(creation.arange(start, stop, step, dtype=char),
              np.arange(start, stop, step, dtype=char))


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")  # complex64's length
@pytest.mark.parametrize("args", [(10,), (2, 9), (0.5, 3), (np.float32(0.25), 8, 0.5),
                                  (np.int8(3), 40, np.int16(5)), (1j, 6 + 3j, 0.5 + 0.25j),
                                  (np.complex64(1 + 1j), 7, 0.5), (True, 9),
                                  (2**62, 2**62 + 100, 7), (10**16 + 0.5, 10**16 + 100, 3.0)])
def test_arange_default_dtype_length_and_values_are_numpys(args):
    check(creation.arange(*args), np.arange(*args))
    check(pygpu.arange(*args), np.arange(*args))


def test_arange_integers_wrap_as_numpys_do():
    check(creation.arange(-100, 100, 13, dtype=np.int8), np.arange(-100, 100, 13, dtype=np.int8))
    check(creation.arange(250, 3, -7, dtype=np.uint8), np.arange(250, 3, -7, dtype=np.uint8))
    check(creation.arange(0.5, 10.2, dtype=np.int16), np.arange(0.5, 10.2, dtype=np.int16))


@pytest.mark.parametrize("args", [(0,), (5, 0), (3, 4), (3, 5), (0, 2, dict(dtype=bool)),
                                  (-3.5, -2.5, 0.5)])
def test_arange_of_zero_one_and_two_elements(args):
    kw = args[-1] if isinstance(args[-1], dict) else {}
    args = args[:-1] if kw else args
    check(creation.arange(*args, **kw), np.arange(*args, **kw))


def test_arange_takes_the_array_api_keywords_and_a_0d_device_array():
    check(creation.arange(2, stop=9, step=2, dtype=np.float32),
          np.arange(2, 9, 2, dtype=np.float32))
    check(creation.arange(pygpu.asarray(np.array(6))), np.arange(6))
    check(np.arange(5, like=pygpu.asarray(np.ones(2))), np.arange(5))


@pytest.mark.parametrize("args, kw, error", [
    ((), {}, TypeError), ((None,), {}, TypeError), ((0, 5, 0), {}, ZeroDivisionError),
    ((0, float("nan")), {}, ValueError), ((0, 1e30), {}, ValueError),
    ((0, float("inf")), {}, ValueError), ((0, 5), {"dtype": bool}, TypeError),
    ((300, 305), {"dtype": np.int8}, OverflowError), ((5,), {"dtype": np.longdouble}, TypeError),
    ((np.longdouble(1), 5), {}, TypeError), ((5,), {"dtype": np.clongdouble}, TypeError),
    (("a",), {}, TypeError), ((2**64, 2**64 + 3), {}, TypeError),
])
def test_arange_refuses_bad_arguments(args, kw, error):
    with pytest.raises(error):
        creation.arange(*args, **kw)


def test_arange_names_a_dtype_the_device_lacks():
    with pytest.raises(TypeError, match="float128|longdouble"):
        creation.arange(4, dtype=np.longdouble)


# ---- device= --------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda dev: creation.arange(4, device=dev), lambda dev: creation.linspace(0, 1, 4, device=dev),
    lambda dev: creation.eye(3, device=dev), lambda dev: creation.tri(3, device=dev),
    lambda dev: creation.indices((2, 2), device=dev), lambda dev: creation.zeros(3, device=dev),
    lambda dev: creation.ones(3, device=dev), lambda dev: creation.empty(3, device=dev),
    lambda dev: creation.full(3, 7, device=dev),
])
def test_device_takes_a_device_an_id_or_none(make):
    last = pygpu._core.get_device()
    n = pygpu._core.device_count()
    for dev in (None, 0, pygpu.Device(n - 1), n - 1, np.int64(0)):
        a = make(dev)
        want = 0 if dev is None else int(dev.id if isinstance(dev, pygpu.Device) else dev)
        assert a.device.id == want
    assert pygpu._core.get_device() == last
    with pytest.raises(ValueError, match="does not exist"):
        make(n + 5)
    with pytest.raises(TypeError, match="device"):
        make("cpu")


def test_like_forms_take_shape_dtype_and_device():
    d = pygpu.asarray(random((2, 3), "f"))
    check(creation.zeros_like(d, shape=(4,)), np.zeros(4, np.float32))
    check(creation.ones_like(d, dtype=np.int8), np.ones((2, 3), np.int8))
    check(creation.full_like(d, 2.7, dtype=np.int32), np.full((2, 3), 2, np.int32))
    assert creation.empty_like(d, device=pygpu._core.device_count() - 1).device.id == \
        pygpu._core.device_count() - 1
    assert creation.empty_like(d).shape == (2, 3)


@pytest.mark.parametrize("name", ["empty_like", "zeros_like", "ones_like", "full_like"])
def test_like_forms_are_one_implementation_with_numpys_orders(name):
    x = np.asfortranarray(random((2, 3), "d"))
    d = pygpu.asarray(x)
    fill = (5,) if name == "full_like" else ()
    numpys, standard = getattr(np, name), getattr(pygpu, name)
    for order in ("K", "A", "C", "F"):
        got, want = numpys(d, *fill, order=order), numpys(x, *fill, order=order)
        assert got.is_f_contiguous() == want.flags.f_contiguous, order
        assert got.is_c_contiguous() == want.flags.c_contiguous, order
        if name != "empty_like":
            check(got, want)
    got, want = numpys(d, *fill, np.int16, shape=(3, 1, 2)), numpys(x, *fill, np.int16,
                                                                      shape=(3, 1, 2))
    assert got.shape == want.shape and got.dtype == want.dtype
    # the standard's signature: the same function underneath, x's device by default
    got = standard(d, *fill, dtype=np.float32)
    assert got.dtype == np.float32 and got.shape == (2, 3) and got.is_f_contiguous()
    assert standard(d, *fill, device=pygpu._core.device_count() - 1).device.id == \
        pygpu._core.device_count() - 1
    with pytest.raises(ValueError, match="order must be one of"):
        numpys(d, *fill, order="X")
    with pytest.raises(ValueError, match=r"device 99 does not exist: there"):
        standard(d, *fill, device=99)


# ---- linspace, logspace ----------------------------------------------------------------------

@pytest.mark.parametrize("args, kw", [
    ((0, 1), {}), ((2, 3, 7), {"endpoint": False}), ((np.float32(0), 1, 11), {}),
    ((np.float16(-1), 2, 9), {}), ((1 + 2j, -3, 6), {}), ((0, 10, 7), {"dtype": int}),
    ((0, 10, 7), {"dtype": np.uint8}), ((0, 1, 5), {"dtype": bool}), ((1, 1, 1), {}),
    ((0, 5, 0), {}), ((1e-320, 2e-320, 4), {}), ((-3.3, 8.1, 101), {"dtype": np.float32}),
])
def test_linspace_gives_numpys_values(args, kw):
    check(creation.linspace(*args, **kw), np.linspace(*args, **kw))


def test_linspace_with_retstep_gives_numpys_step():
    y, step = creation.linspace(-2, 5, 8, retstep=True)
    want, wstep = np.linspace(-2, 5, 8, retstep=True)
    check(y, want)
    assert step == wstep
    assert np.isnan(creation.linspace(0, 1, 1, retstep=True)[1])


def test_linspace_between_arrays_along_an_axis():
    a, b = random((2, 3), "d"), random((3,), "d")
    for axis in (0, 1, -1, 2):
        check(creation.linspace(pygpu.asarray(a), pygpu.asarray(b), 5, axis=axis),
              np.linspace(a, b, 5, axis=axis))
    check(np.linspace(pygpu.asarray(a), 4.0, 3), np.linspace(a, 4.0, 3))


@pytest.mark.parametrize("args, kw, error", [
    ((0, 1, -1), {}, ValueError), ((0, 1, 2.5), {}, TypeError),
    ((0, 1, 5), {"axis": 1}, ValueError), ((0, 1, 3), {"dtype": np.longdouble}, TypeError),
    ((np.longdouble(0), 1, 3), {}, TypeError),
])
def test_linspace_refuses_bad_arguments(args, kw, error):
    with pytest.raises(error):
        creation.linspace(*args, **kw)


def test_logspace_gives_numpys_dtype_and_values():
    for args, kw in [((0, 3, 7), {}), ((np.float32(0), 2, 5), {}), ((1, 2, 4), {"base": 2}),
                     ((0, 4, 5), {"dtype": np.int64, "base": 2.0})]:
        got, want = creation.logspace(*args, **kw), np.logspace(*args, **kw)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(host(got), want, rtol=1e-6)
    a = random((3,), "d")
    np.testing.assert_allclose(host(creation.logspace(pygpu.asarray(a), 2, 4, axis=1)),
                               np.logspace(a, 2, 4, axis=1), rtol=1e-12)


# ---- eye, identity, tri, tril, triu ----------------------------------------------------------

@pytest.mark.parametrize("char", CHARS)
def test_eye_and_identity_in_every_dtype(char):
    for n, m, k in [(4, None, 0), (3, 5, 1), (5, 3, -2), (3, 3, 7), (0, 2, 0), (4, 2, -5)]:
        check(creation.eye(n, m, k, dtype=char), np.eye(n, m, k, dtype=char))
    check(creation.eye(4, 3, 1, dtype=char, order="F"), np.eye(4, 3, 1, dtype=char, order="F"))
    check(creation.identity(3, dtype=char), np.identity(3, dtype=char))


def test_eye_default_dtype_and_errors():
    check(creation.eye(3), np.eye(3))
    check(np.eye(2, like=pygpu.asarray(np.ones(1))), np.eye(2))
    for args, error in [((-1,), ValueError), ((2.5,), TypeError), ((2, None, 1.5), TypeError),
                        ((None,), TypeError)]:
        with pytest.raises(error):
            creation.eye(*args)
    with pytest.raises(TypeError, match="complex256|clongdouble"):
        creation.eye(2, dtype=np.clongdouble)


@pytest.mark.parametrize("char", CHARS)
def test_tri_tril_triu_in_every_dtype(char):
    check(creation.tri(4, 6, 1, dtype=char), np.tri(4, 6, 1, dtype=char))
    x = random((2, 5, 4), char)
    d = pygpu.asarray(x)
    for k in (-2, 0, 1, 9):
        check(creation.tril(d, k), np.tril(x, k))
        check(creation.triu(d, k), np.triu(x, k))


def test_tril_triu_of_views_vectors_and_empty_arrays():
    x = random((6, 5), "d")
    d = pygpu.asarray(x)
    for view, ref in [(d.T, x.T), (d[::-2], x[::-2]), (d[:, 1::2], x[:, 1::2]),
                      (d[0], x[0]), (d[:0], x[:0])]:
        check(creation.tril(view, -1), np.tril(ref, -1))
        check(creation.triu(view, 1), np.triu(ref, 1))
    check(np.tril(d), np.tril(x))
    check(creation.tri(-2, 3), np.tri(-2, 3))
    check(creation.tri(3, 0, -5), np.tri(3, 0, -5))


def test_tri_tril_triu_take_an_integral_float_k_and_refuse_a_fractional_one():
    h = random((4, 5), "f")
    d = pygpu.asarray(h)
    for k in (1.0, np.float32(-2.0), np.float64(7.0)):
        check(creation.tril(d, k), np.tril(h, k))
        check(creation.triu(d, k), np.triu(h, k))
        check(creation.tri(4, 5, k), np.tri(4, 5, k))
    # NumPy's tri truncates a fractional k in an integer arange: triu(m, 1.5)
    # is all zeros there; pygpu names the argument instead
    for k in (1.5, float("nan"), float("inf")):
        with pytest.raises(TypeError, match="k must be an integer"):
            creation.triu(d, k)


def test_tril_refuses_0d_and_host_arrays():
    with pytest.raises(TypeError):
        creation.tril(pygpu.asarray(np.array(2.0)))
    with pytest.raises(TypeError, match="host memory"):
        creation.triu(np.ones((2, 2)))


# ---- diag, diagonal ----------------------------------------------------------------------------

@pytest.mark.parametrize("char", CHARS)
def test_diag_of_vectors_and_matrices_in_every_dtype(char):
    v, m = random((4,), char), random((4, 6), char)
    for k in (-5, -1, 0, 2, 8):
        check(creation.diag(pygpu.asarray(v), k), np.diag(v, k))
        check(creation.diag(pygpu.asarray(m), k), np.diag(m, k))
    check(creation.diag(pygpu.asarray(v)[::-2]), np.diag(v[::-2]))


def test_diagonal_is_a_read_only_view_of_any_two_axes():
    x = random((3, 4, 5), "f")
    d = pygpu.asarray(x)
    for args in [(), (1,), (-2, 2, 0), (0, 1, 2), (3, -1, -3), (10,)]:
        check(creation.diagonal(d, *args), np.diagonal(x, *args))
        check(d[:, ::-1].diagonal(*args), x[:, ::-1].diagonal(*args))
    view = creation.diagonal(d, 1, 1, 2)
    with pytest.raises(ValueError, match="read-only"):
        view[...] = 0
    d[0, 0, 1] = 42.0  # a view: it sees the change
    assert host(view)[0, 0] == 42.0


@pytest.mark.parametrize("call, error", [
    (lambda d: creation.diagonal(d[0, 0]), ValueError),
    (lambda d: creation.diagonal(d, 0, 1, 1), ValueError),
    (lambda d: creation.diagonal(d, 0, 0, 3), np.exceptions.AxisError),
    (lambda d: creation.diag(d), ValueError),
    (lambda d: creation.diag(d[0, 0, 0]), ValueError),
    (lambda d: creation.diag(np.ones(3)), TypeError),
])
def test_diag_and_diagonal_refuse_bad_arguments(call, error):
    with pytest.raises(error):
        call(pygpu.asarray(np.ones((2, 3, 4))))


# ---- meshgrid, indices --------------------------------------------------------------------------

def test_meshgrid_matches_numpy():
    a, b, c = random((3,), "d"), random((4,), "i"), random((2,), "e")
    da, db, dc = (pygpu.asarray(v) for v in (a, b, c))
    for kw in [{}, {"indexing": "ij"}, {"sparse": True}, {"copy": False},
               {"copy": False, "indexing": "ij"}]:
        check(creation._meshgrid(da, db[::-1], dc, **kw), np.meshgrid(a, b[::-1], c, **kw))
    check(creation._meshgrid(da), np.meshgrid(a))
    check(creation._meshgrid(), np.meshgrid())
    check(np.meshgrid(da, db), np.meshgrid(a, b))
    with pytest.raises(ValueError, match="indexing"):
        creation._meshgrid(da, db, indexing="xx")
    # the array API's meshgrid (pygpu.meshgrid) gives a list (2024.12), NumPy's a tuple
    got = pygpu.meshgrid(da, db)
    assert type(got) is list and len(got) == 2
    check(tuple(got), np.meshgrid(a, b))


def test_indices_matches_numpy():
    for dims, kw in [((2, 3, 4), {}), ((3, 2), {"dtype": np.int8}), ((2, 0), {}), ((), {}),
                     ((3, 4), {"sparse": True}), ((2, 3), {"dtype": np.float32})]:
        check(creation.indices(dims, **kw), np.indices(dims, **kw))
    with pytest.raises(ValueError):
        creation.indices((2, -1))


def test_the_functions_are_in_the_pygpu_namespace_and_numpy_dispatches_to_them():
    from pygpu._ops import merged

    for name in creation.__all__:  # where no area before this one has the name
        if merged("__all__")[name] is creation:
            assert getattr(pygpu, name) is getattr(creation, name)
    x = random((3, 3), "d")
    d = pygpu.asarray(x)
    check(np.triu(d, 1), np.triu(x, 1))
    check(np.diag(d), np.diag(x))
    check(np.diagonal(d, 1), np.diagonal(x, 1))
