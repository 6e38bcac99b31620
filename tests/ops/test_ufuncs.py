"""Every op of the op table (pygpu/_ops/table.py) x every loop NumPy has for
it on the device's dtypes x layouts (contiguous, strided, negative strides,
broadcast, 0-d, empty, odd sizes, scalar operands) against NumPy.

Results compare exactly (NaNs equal) for the ops the table marks exact, and
within a few units in the last place for the rest (transcendentals,
division), as docs/SEMANTICS.md says.
"""

import numpy as np
import pytest

import pygpu
from pygpu._ops.table import KINDS, OPS
from pygpu._ops.ufunc import UFUNCS

# relative tolerance of the inexact ops, by the loop's output type
RTOL = {"e": 2e-3, "f": 4e-6, "d": 1e-13, "F": 4e-6, "D": 1e-13}
CASES = [(name, ins, outs) for name, op in OPS.items() for ins, outs in op.loops]


def values(rng, char, shape, op, position):
    """Random inputs of type `char` that make sense for op."""
    dt = np.dtype(char)
    kind = KINDS[char]
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind in "iu":
        info = np.iinfo(dt)
        if op.name in ("left_shift", "right_shift") and position == 1:
            return rng.integers(0, info.bits + 2, shape).astype(dt)
        if op.name == "power" and position == 1:
            return rng.integers(0, 6, shape).astype(dt)
        low, high = op.domain if op.domain else (max(info.min, -100), min(info.max, 100))
        low, high = max(int(low), info.min), min(int(high), info.max)
        return rng.integers(low, high, shape, endpoint=True).astype(dt)
    low, high = op.domain if op.domain else (-10, 10)
    x = rng.uniform(low, high, shape)
    if kind == "c":
        x = x + 1j * rng.uniform(low, high, shape)
    return x.astype(dt)


def check(op, got, want, outs):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w, c in zip(got, want, outs, strict=True):
        assert isinstance(g, pygpu.DeviceArray)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape
        h = g.copy_to_host()
        if op.exact_for(c) or c not in RTOL:
            np.testing.assert_array_equal(h, w)
        else:
            np.testing.assert_allclose(h, w, rtol=RTOL[c], atol=RTOL[c] * 1e-2,
                                       equal_nan=True)


def layouts(rng, op, ins):
    """(name, host operands, device operands) for each layout."""
    n = 1000 + 7
    base = [values(rng, c, (n,), op, k) for k, c in enumerate(ins)]
    yield "contiguous", base, [pygpu.asarray(x) for x in base]
    yield "odd size", [x[:5] for x in base], [pygpu.asarray(x[:5]) for x in base]
    strided = [values(rng, c, (2 * 37,), op, k) for k, c in enumerate(ins)]
    yield ("strided", [x[::2] for x in strided],
           [pygpu.asarray(x)[::2] for x in strided])
    yield ("negative strides", [x[::-3] for x in strided],
           [pygpu.asarray(x)[::-3] for x in strided])
    grid = [values(rng, c, (6, 7), op, k) for k, c in enumerate(ins)]
    if len(ins) >= 2:  # the second input broadcast along the first axis
        host = [grid[0]] + [g[:1] for g in grid[1:]]
        yield "broadcast", host, [pygpu.asarray(x) for x in host]
        host = [grid[0].T] + [g[:1].T for g in grid[1:]]  # transposed: strided 2-D
        yield "broadcast transposed", host, [pygpu.asarray(g).T if i == 0 else
                                             pygpu.asarray(g[:1]).T for i, g in enumerate(grid)]
    zero = [x[0:1].reshape(()) for x in base]
    yield "0-d", zero, [pygpu.asarray(x) for x in zero]
    empty = [x[:0].reshape(0, 3) if x.size >= 0 else x for x in [values(rng, c, (0,), op, k)
                                                                  for k, c in enumerate(ins)]]
    yield "empty", empty, [pygpu.asarray(x) for x in empty]
    if len(ins) >= 2:  # a NumPy scalar of the loop's type as the second input
        host = [base[0]] + [x[3] for x in base[1:]]
        yield "numpy scalar", host, [pygpu.asarray(base[0])] + host[1:]
        host = [base[0][7]] + base[1:]
        yield "numpy scalar first", host, [host[0]] + [pygpu.asarray(x) for x in host[1:]]


@pytest.mark.parametrize("name,ins,outs", CASES, ids=[f"{n}-{i}->{o}" for n, i, o in CASES])
def test_op_matches_numpy_in_every_layout(name, ins, outs, rng):
    op = OPS[name]
    f = UFUNCS[name]
    with np.errstate(all="ignore"):
        for layout, host, dev in layouts(rng, op, ins):
            want = op.ufunc(*host)
            got = f(*dev)
            try:
                check(op, got, want, outs)
            except AssertionError as exc:
                raise AssertionError(f"{name} {ins}->{outs}, {layout}: {exc}") from None


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_through_numpy_returns_device_arrays(name, rng):
    # np.<ufunc>(d) goes through DeviceArray.__array_ufunc__, and out= writes
    op = OPS[name]
    ins, outs = op.loops[-1]
    host = [values(rng, c, (33,), op, k) for k, c in enumerate(ins)]
    dev = [pygpu.asarray(x) for x in host]
    with np.errstate(all="ignore"):
        want = op.ufunc(*host)
        check(op, op.ufunc(*dev), want, outs)
        targets = tuple(pygpu.empty(33, np.dtype(c)) for c in outs)
        got = op.ufunc(*dev, out=targets if len(targets) > 1 else targets[0])
        assert (got if isinstance(got, tuple) else (got,))[0] is targets[0]
        check(op, targets if len(targets) > 1 else targets[0], want, outs)


# ---- hypothesis: random broadcast shapes, dtypes, views and scalars ------------------

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

EXACT_BINARY = sorted(n for n, op in OPS.items() if op.nin == 2 and op.exact is True)
DEVICE_DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float16",
                 "float32", "float64", "complex64", "complex128"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(EXACT_BINARY), data=st.data(),
       shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=5),
       dtypes=st.tuples(st.sampled_from(DEVICE_DTYPES), st.sampled_from(DEVICE_DTYPES)),
       scalar=st.sampled_from([None, 0, 1]), flip=st.booleans())
def test_binary_ops_match_numpy_on_random_operands(name, data, shapes, dtypes, scalar, flip):
    op = OPS[name]
    host = []
    for shape, dt in zip(shapes.input_shapes, dtypes, strict=True):
        x = data.draw(hnp.arrays(dt, shape, elements=hnp.from_dtype(
            np.dtype(dt), allow_nan=False, allow_infinity=False, min_value=-20 if
            np.dtype(dt).kind in "fc" else None, max_value=20 if np.dtype(dt).kind in "fc"
            else None)))
        host.append(x[::-1] if flip and x.ndim else x)
    if scalar is not None:  # a Python scalar of the second operand's kind (NEP 50: weak)
        host[scalar] = host[scalar].ravel()[0].item() if host[scalar].size else 1
    dev = [pygpu.asarray(x) if isinstance(x, np.ndarray) else x for x in host]
    with np.errstate(all="ignore"):
        try:
            want = op.ufunc(*host)
        except (TypeError, ValueError, OverflowError) as exc:
            with pytest.raises(type(exc)):
                UFUNCS[name](*dev)
            return
        got = UFUNCS[name](*dev)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == np.shape(w)
        np.testing.assert_array_equal(g.copy_to_host(), w)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", ["arcsin", "arccos", "arctan", "arcsinh", "arccosh",
                                  "arctanh"])
def test_complex_inverse_functions_at_infinities_and_far_out(name, dtype):
    # C99 Annex G's (NumPy's) answers at the infinities, and no overflow far
    # from the origin (z * z would be inf there); NaN parts and signed zeros:
    # test_complex_functions_at_special_values_as_numpy
    inf = np.inf
    x = np.array([complex(inf, 1), complex(1, inf), complex(-inf, 1), complex(inf, -2),
                  complex(-1, -inf), complex(inf, inf), complex(-inf, inf), 1e300 + 1e300j,
                  -1e300 + 1e200j, 1e200 - 1e300j, 3e160 + 0.5j, 0.5 + 3e160j, 0.5 + 0.5j],
                 np.complex128)
    if dtype == np.complex64:
        x = x[np.isinf(x.real) | np.isinf(x.imag) | (np.abs(x) < 1e30)].astype(dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    got = getattr(pygpu, name)(pygpu.asarray(x)).copy_to_host()
    assert got.dtype == want.dtype
    for part in ("real", "imag"):
        g, w = getattr(got, part), getattr(want, part)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64"])
def test_integer_reciprocal_of_zero_as_numpy(dtype):
    x = np.array([0, 1, 2, 5], dtype)
    with np.errstate(all="ignore"):
        want = np.reciprocal(x)
    np.testing.assert_array_equal(pygpu.reciprocal(pygpu.asarray(x)).copy_to_host(), want)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_spacing_of_signed_zeros_as_numpy(dtype):
    x = np.array([-0.0, 0.0, 1.0, -1.0, -3.0], dtype)
    got = pygpu.spacing(pygpu.asarray(x)).copy_to_host()
    np.testing.assert_array_equal(got, np.spacing(x))
    assert not np.signbit(got[:2]).any()


# ---- special values: C99 Annex G's (NumPy's) for complex numbers, and the ---------
# ---- array API standard's floor_divide and expm1 in the namespace ----------------

COMPLEX_SPECIAL = ["exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "square", "sin",
                   "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan",
                   "arcsinh", "arccosh", "arctanh", "sign", "reciprocal"]


def special_grid(dtype):
    """Every pair of parts from +-0, +-1, 2, -0.5, +-inf, nan and +-huge."""
    huge = 1e308 if dtype == np.complex128 else 3e38
    v = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -0.5, np.inf, -np.inf, np.nan, huge, -huge])
    z = np.empty(v.size * v.size, dtype)
    z.real, z.imag = np.repeat(v, v.size), np.tile(v, v.size)  # keeps the zeros' signs
    return z


def assert_same_values(got, want, rtol, what):
    """Equal within rtol, NaN where NumPy has NaN, zeros and infinities of
    NumPy's sign, part by part."""
    for part in ("real", "imag"):
        g, w = np.asarray(getattr(got, part)), np.asarray(getattr(want, part))
        bad = np.isnan(g) != np.isnan(w)
        num = ~np.isnan(w) & ~np.isnan(g)
        g, w = g[num], w[num]
        with np.errstate(invalid="ignore"):  # inf - inf
            far = np.abs(g - w) > rtol * np.abs(w)
        bad[num] = (np.signbit(g) != np.signbit(w)) | (np.isinf(g) != np.isinf(w)) | (
            far & np.isfinite(w))
        assert not bad.any(), f"{what}, {part} part at {np.flatnonzero(bad)[:8]}"


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_functions_at_special_values_as_numpy(dtype):
    # NumPy follows C99 Annex G (npymath, the C library): infinite and NaN
    # parts, signed zeros on the branch cuts, no overflow near the largest
    # numbers. Not compared: complex64 log1p at huge + huge i (NumPy's float
    # hypot overflows to inf; pygpu computes in double and gets 88.9)
    z = special_grid(dtype)
    d = pygpu.asarray(z)
    for name in COMPLEX_SPECIAL:
        with np.errstate(all="ignore"):
            want = getattr(np, name)(z)
        got = UFUNCS[name](d).copy_to_host()
        keep = np.ones(z.size, bool)
        if name == "log1p" and dtype == np.complex64:
            keep = ~((np.abs(z.real) > 1e38) & (np.abs(z.imag) > 1e38))
        assert got.dtype == want.dtype
        assert_same_values(got[keep], want[keep], 1e-5 if dtype == np.complex64 else 1e-12,
                           f"{name}({np.dtype(dtype).name})")
    # products as NumPy's SIMD loops: each part one fused multiply-add (the
    # ufunc, np.multiply's C path and the operator)
    with np.errstate(all="ignore"):
        want = z * z[::-1]
    e = pygpu.asarray(z[::-1])
    for what, got in (("pygpu.multiply", pygpu.multiply(d, e)), ("d * e", d * e),
                      ("np.multiply", np.multiply(d, e))):
        assert_same_values(got.copy_to_host(), want, 0, what)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_power_at_special_values_as_numpy(dtype):
    # NumPy's npy_cpow: 0 ** w is 0 for re(w) > 0, integer exponents below 100
    # by products (1, 2, 3 unrolled: inf * 1j stays finite-signed), else
    # exp(w log z) with C99's product (inf, not NaN, from an infinite log).
    # complex64's non-integer powers round differently (NumPy's in float);
    # not compared: where a NaN's sign decides a zero's (x86's NaN is negative)
    z = special_grid(dtype)
    d = pygpu.asarray(z)
    exponents = [0, 1, 2, 3, -1, -2, 7, np.inf, np.nan, complex(0, np.nan)]
    if dtype == np.complex128:
        exponents += [0.5, 1j, 2 + 1j, 100, 101]
    for w in exponents:
        with np.errstate(all="ignore"):
            want = np.power(z, dtype(w))
        got = pygpu.power(d, dtype(w)).copy_to_host()
        assert_same_values(got, want, 1e-5 if dtype == np.complex64 else 1e-12,
                           f"power({np.dtype(dtype).name}, {w})")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_floor_divide_is_the_standards_in_the_namespace_and_numpys_through_numpy(dtype):
    # the array API: inf // 2 is inf, 1 // -inf is -0 (NumPy: nan, -1), for
    # pygpu.floor_divide, d // e and d //= e; np.floor_divide(d, e) and
    # divmod are NumPy's, and remainder (the same in both) NumPy's
    inf = np.inf
    a = np.array([inf, inf, -inf, -inf, 1, -1, 1, -1, 0, -0.0, 7.5, -7.5, 3, nan := np.nan],
                 dtype)
    b = np.array([2, -2, 2, -2, -inf, inf, inf, -inf, inf, inf, 2, 2, 0, 1], dtype)
    standard = np.array([inf, -inf, -inf, inf, -0.0, -0.0, 0, 0, 0, -0.0, 3, -4, inf, nan],
                        dtype)
    da, db = pygpu.asarray(a), pygpu.asarray(b)
    with np.errstate(all="ignore"):
        numpy_ = np.floor_divide(a, b)
        for _ in range(2):  # each way twice: the second call replays a kept plan
            assert_same_values(np.floor_divide(da, db).copy_to_host(), numpy_, 0,
                               "np.floor_divide")
            assert_same_values(pygpu.floor_divide(da, db).copy_to_host(), standard, 0,
                               "pygpu.floor_divide")
            assert_same_values((da // db).copy_to_host(), standard, 0, "d // e")
            assert_same_values((a[0] // db).copy_to_host(), a[0] // b, 0, "scalar // e")
        c = da.copy()
        c //= db
        assert_same_values(c.copy_to_host(), standard, 0, "d //= e")
        q, r = divmod(da, db)
        assert_same_values(q.copy_to_host(), numpy_, 0, "divmod")
        assert_same_values(r.copy_to_host(), np.remainder(a, b), 0, "divmod's remainder")
        assert_same_values((da % db).copy_to_host(), np.remainder(a, b), 0, "d % e")
    assert not np.array_equal(numpy_, standard, equal_nan=True)


def test_floor_divide_of_integers_and_expm1_in_the_namespace():
    # integers: NumPy's answers both ways (the standard has no special cases);
    # pygpu.expm1 is the standard's at inf + 0i and -0 + 0i, np.expm1 NumPy's
    x, y = np.array([7, -7, 3, -3], np.int32), np.array([2, 2, 0, -1], np.int32)
    with np.errstate(all="ignore"):
        want = np.floor_divide(x, y)
    np.testing.assert_array_equal(pygpu.floor_divide(pygpu.asarray(x), pygpu.asarray(y))
                                  .copy_to_host(), want)
    z = np.array([complex(np.inf, 0), complex(-0.0, 0), complex(-np.inf, np.inf), 1 + 2j])
    dz = pygpu.asarray(z)
    with np.errstate(all="ignore"):
        assert_same_values(np.expm1(dz).copy_to_host(), np.expm1(z), 1e-12, "np.expm1")
    standard = np.array([complex(np.inf, 0), 0j, complex(-1, 0), np.expm1(1 + 2j)])
    assert_same_values(pygpu.expm1(dz).copy_to_host(), standard, 1e-12, "pygpu.expm1")
    assert pygpu.expm1.__name__ == "expm1" and pygpu.floor_divide.__name__ == "floor_divide"


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_tanh_in_the_namespace_is_the_standards_at_infinite_real_parts(dtype):
    # tanh(+-inf + yi), y finite: the standard's +-1 + 0i with the sign of y;
    # NumPy's (C99's) zero has the sign of sin(2y)
    z = np.array([complex(np.inf, 3), complex(-np.inf, 3), complex(np.inf, -3),
                  complex(np.inf, 0.5), complex(np.inf, np.nan), 1 + 2j], dtype)
    dz = pygpu.asarray(z)
    with np.errstate(all="ignore"):
        assert_same_values(np.tanh(dz).copy_to_host(), np.tanh(z), 1e-6, "np.tanh")
        standard = np.tanh(z)
    standard[:4] = [complex(1, 0), complex(-1, 0), complex(1, -0.0), complex(1, 0)]
    got = pygpu.tanh(dz).copy_to_host()
    assert_same_values(got, standard, 1e-6, "pygpu.tanh")
    np.testing.assert_array_equal(np.signbit(got.imag[:4]), [False, False, True, False])
    assert pygpu.tanh.__name__ == "tanh"



def test_the_remembered_last_plan_follows_every_part_of_the_call(rng):
    # the C side remembers each operator's and ufunc's last plan by the raw
    # signature of its operands (ops.c, plan_last): a call that differs in
    # dtype, shape, strides, the scalar's type or the ufunc must not reuse it
    x = rng.standard_normal(24)
    views = [lambda a: a, lambda a: a[:12], lambda a: a[::2], lambda a: a[12:],
             lambda a: a.reshape(4, 6), lambda a: a.reshape(6, 4).T,
             lambda a: a[:12].reshape(4, 3), lambda a: a.reshape(4, 6)[:, :3], lambda a: a[:7],
             lambda a: a[3, ...], lambda a: a.reshape(4, 6)[1, 2, ...], lambda a: a[:0],
             lambda a: a.reshape(4, 6)[:0]]  # 0-d views, empty ones
    scalars = [2, 2.5, np.float32(2), np.float64(2.5), np.int8(3), True, 3 + 1j, np.bool_(True)]
    arrays = [(view(b), view(pygpu.asarray(b)))
              for b in [(x * 10).astype(t) for t in (np.float32, np.float64, np.int32)]
              for view in views]
    # each form over every operand in turn: consecutive calls of one ufunc
    # that differ in one part only
    forms = [(f.__name__, lambda a, f=f: f(a)) for f in (np.sin, np.negative, np.sqrt)]
    for s in scalars:
        forms += [(f"/ {s!r}", lambda a, s=s: a / s),
                  (f"maximum {s!r}", lambda a, s=s: np.maximum(a, s)),
                  (f"{s!r} -", lambda a, s=s: s - a)]
    for _ in range(2):
        for what, form in forms:
            for h, d in arrays:
                with np.errstate(all="ignore"):
                    got, want = form(d), np.asarray(form(h))
                    assert got.shape == want.shape and got.dtype == want.dtype, what
                    assert_same_values(np.atleast_1d(got.copy_to_host()), np.atleast_1d(want),
                                       1e-6, f"{what} {h.dtype} {h.shape} {h.strides}")


class _ReadOnly:
    """A read-only export of a DeviceArray (CAI's data flag)."""

    def __init__(self, arr):
        cai = dict(arr.__cuda_array_interface__)
        cai["data"] = (arr.ptr, True)
        self.arr = arr
        self.__cuda_array_interface__ = cai


def test_a_ufunc_with_out_replays_its_plan_only_for_the_same_output(rng):
    # np.sin(d, out=o) and np.divide(d, 2, out=o) replay a plan in C (ops.c,
    # replay_plan with out): a call whose output differs in dtype, shape or
    # strides, overlaps an input, or is read-only must not reuse it
    x = rng.standard_normal(24).astype(np.float32)
    outs = [lambda a: a, lambda a: a[::2], lambda a: a[:12], lambda a: a.reshape(4, 6)[:, :3]]
    forms = [("sin", lambda a, o: np.sin(a, out=o)),
             ("divide 2", lambda a, o: np.divide(a, 2, out=o)),
             ("add a", lambda a, o: np.add(a, a, out=o))]
    for _ in range(2):
        for what, form in forms:
            for view in outs:
                for dt in (np.float32, np.float64):
                    h, d = view(x), view(pygpu.asarray(x))
                    ho, do = np.zeros(24, dt), pygpu.zeros(24, dt)
                    ho, do = view(ho), view(do)
                    assert form(d, do) is do
                    form(h, ho)
                    assert_same_values(do.copy_to_host(), ho, 1e-6, f"{what} {dt} {h.shape}")
            # the output is the input itself, then a shifted view of it (NumPy
            # computes as if from a copy)
            h, d = x.copy(), pygpu.asarray(x)
            assert form(d, d) is d
            form(h, h)
            assert_same_values(d.copy_to_host(), h, 1e-6, f"{what} in place")
            form(d[1:], d[:-1])
            form(h[1:], h[:-1])
            assert_same_values(d.copy_to_host(), h, 1e-6, f"{what} shifted")
    # the output starts at an input's address with other strides (found by a
    # review: the plan skipped its overlap check where the pointers matched):
    # a plan kept from the same layouts without overlap first
    for what, form in forms:
        o = pygpu.zeros(24, np.float32)
        form(pygpu.asarray(x)[:12], o[::2])
        d, h = pygpu.asarray(x), x.copy()
        form(d[:12], d[::2])
        form(h[:12], h[::2])
        assert_same_values(d.copy_to_host(), h, 1e-6, f"{what} into a view at the same address")
    d, o = pygpu.asarray(x), pygpu.zeros(24, np.float32)
    np.sin(d, out=o)
    ro = pygpu.asarray(_ReadOnly(o))
    for _ in range(2):
        with pytest.raises(ValueError, match="read-only"):
            np.sin(d, out=ro)
        with pytest.raises(ValueError, match="read-only"):
            np.sin(d, out=(ro,))
