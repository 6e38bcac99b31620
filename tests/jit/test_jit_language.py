"""The Python a @cuda.jit kernel may use, against what Python and NumPy (and
Numba, where it differs) give: arithmetic, control flow, tuples, math,
casts, typing, signatures, arguments and launches."""

import cmath
import math

import numpy as np
import pytest

import pygpu
from pygpu import cuda

SCALE = 3
OFFSET = 0.5
COEFFS = np.array([1.5, -2.0, 0.25, 4.0])


@cuda.jit
def _int_ops(a, b, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        x = a[i]
        y = b[i]
        out[i, 0] = x // y
        out[i, 1] = x % y
        out[i, 2] = x ** 3
        out[i, 3] = min(x, y, 7)
        out[i, 4] = max(x, y)
        out[i, 5] = abs(x)
        out[i, 6] = (x << 2) ^ (y & 0xF) | 1
        out[i, 7] = -x >> 1
        out[i, 8] = x * SCALE - a[-1]  # a module constant; a negative index wraps


def test_integer_floor_division_modulo_power_and_bits_are_pythons():
    rng = np.random.default_rng(10)
    a = rng.integers(-50, 50, 64)
    b = rng.integers(-9, 9, 64)
    b[b == 0] = 3
    b[5] = 0  # by zero: NumPy's 0, as Numba's kernels
    a[6], b[6] = -2**63, -1  # wraps, as NumPy's (C would trap)
    a[7] = 2**40 + 3  # its cube wraps at 64 bits
    out = np.zeros((64, 9), np.int64)
    _int_ops.forall(64)(a, b, out)
    with np.errstate(divide="ignore", over="ignore"):
        ref = np.stack([np.floor_divide(a, b), np.remainder(a, b), a ** 3,
                        np.minimum(np.minimum(a, b), 7), np.maximum(a, b), np.abs(a),
                        (a << 2) ^ (b & 0xF) | 1, -a >> 1, a * SCALE - a[-1]], axis=1)
    np.testing.assert_array_equal(out, ref)


@cuda.jit
def _float_ops(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        a = x[i]
        b = y[i]
        out[i, 0] = a // b
        out[i, 1] = a % b
        out[i, 2] = a ** 2 + b ** 0.5 if b > 0 else a / b
        out[i, 3] = math.sqrt(abs(a)) + math.exp(b) - math.log1p(abs(b))
        out[i, 4] = math.floor(a) + math.ceil(b) + math.trunc(a * 3.0)
        out[i, 5] = math.atan2(a, b) + math.hypot(a, b) + math.copysign(1.0, b)
        out[i, 6] = 1.0 if math.isnan(a / b) else 0.0
        out[i, 7] = round(a * 10.0) + int(b * 10.0) + float(True)
        out[i, 8] = COEFFS[i % 4] * OFFSET + cuda.fma(a, b, 1.0)


def test_float_arithmetic_and_math_functions_match_numpy():
    rng = np.random.default_rng(11)
    x = rng.uniform(-5, 5, 64)
    y = rng.uniform(-5, 5, 64)
    x[0], y[0] = 0.0, 0.0
    x[1], y[1] = 2.5, 0.0
    out = np.zeros((64, 9))
    _float_ops.forall(64)(x, y, out)
    with np.errstate(all="ignore"):
        ref = np.stack([
            np.floor_divide(x, y), np.remainder(x, y),
            np.where(y > 0, x ** 2 + np.sqrt(np.abs(y)), x / y),
            np.sqrt(np.abs(x)) + np.exp(y) - np.log1p(np.abs(y)),
            np.floor(x) + np.ceil(y) + np.trunc(x * 3.0),
            np.arctan2(x, y) + np.hypot(x, y) + np.copysign(1.0, y),
            np.isnan(x / y).astype(float),
            np.rint(x * 10.0) + np.trunc(y * 10.0) + 1.0,
            COEFFS[np.arange(64) % 4] * OFFSET + (x * y + 1.0)], axis=1)
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-13, equal_nan=True)


@cuda.jit(device=True)
def _collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n //= 2
        elif n > 1000000:
            return -1
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@cuda.jit
def _control(n, out):
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    total = 0
    for k in range(10, 0, -3):  # 10, 7, 4, 1
        if k == 7:
            continue
        total += k
    for k in range(i):
        if k > 5:
            break
        total += 100
    j = 0
    while True:
        j += 1
        if j >= 4:
            break
    a, b = i, n
    a, b = b, a  # swap through a tuple
    pair = (a, b * 2)
    out[i, 0] = total + j
    out[i, 1] = pair[0] - pair[1] + len(pair)
    out[i, 2] = _collatz_steps(i + 1)
    out[i, 3] = 1 if (i > 2 and not i == 5) or i == 0 else 0


def _collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_loops_break_continue_while_elif_and_tuples_follow_python():
    out = np.zeros((40, 4), np.int64)
    _control.forall(40)(9, out)
    i = np.arange(40)
    np.testing.assert_array_equal(out[:, 0], 10 + 4 + 1 + 100 * np.minimum(i, 6) + 4)
    np.testing.assert_array_equal(out[:, 1], 9 - 2 * i + 2)
    np.testing.assert_array_equal(out[:, 2], [_collatz(k + 1) for k in i])
    np.testing.assert_array_equal(out[:, 3], ((i > 2) & (i != 5)) | (i == 0))


@cuda.jit
def _typed(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        acc = 0  # int64, then unified with float32 * float32: float64, as Numba's
        acc += x[i] * x[i]
        out[i] = acc / 3


def test_variables_unify_their_types_and_kernels_cache_per_signature():
    rng = np.random.default_rng(12)
    x32 = rng.standard_normal(10).astype(np.float32)
    out = np.zeros(10)
    _typed.forall(10)(x32, out)
    np.testing.assert_allclose(out, x32.astype(np.float64) ** 2 / 3, rtol=1e-7)
    x64 = rng.standard_normal(10)
    _typed.forall(10)(cuda.to_device(x64), out)
    np.testing.assert_allclose(out, x64 ** 2 / 3, rtol=1e-15)
    assert len(_typed.signatures) == 2
    _typed.forall(10)(x64, out)
    assert len(_typed.signatures) == 2  # the same types: the kernel is reused
    assert "float64" in str(_typed.signatures)


@cuda.jit("void(float32[::1], int32, float32)")
def _axpy_int32(x, n, a):
    i = cuda.grid(1)
    if i < n:
        x[i] = x[i] * a + n


def test_explicit_signature_converts_scalars_and_refuses_other_arrays():
    x = np.arange(8, dtype=np.float32)
    _axpy_int32[1, 32](x, 8, 2)  # Python ints become int32 and float32
    np.testing.assert_array_equal(x, np.arange(8, dtype=np.float32) * 2 + 8)
    with pytest.raises(TypeError, match="no signature matches"):
        _axpy_int32[1, 32](np.zeros(8), 8, 2.0)


def test_arguments_from_cuda_array_interface_dlpack_and_numpy_scalars():
    rng = np.random.default_rng(13)
    a = rng.standard_normal(20)
    d = cuda.to_device(a)

    class Foreign:
        def __init__(self, arr):
            self.__cuda_array_interface__ = arr.__cuda_array_interface__
    out = pygpu.zeros(20)
    _scale[1, 32](Foreign(d), np.float32(2.5), out)
    np.testing.assert_allclose(out.copy_to_host(), a * np.float32(2.5))
    _scale[1, 32](d, 3, pygpu.from_dlpack(out))
    np.testing.assert_allclose(out.copy_to_host(), a * 3)


@cuda.jit
def _scale(x, s, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * s


def test_a_view_with_strides_is_indexed_by_its_strides():
    rng = np.random.default_rng(14)
    a = rng.standard_normal((6, 8))
    d = cuda.to_device(a)
    view = d.T  # an F-ordered view: strides in bytes reach the kernel
    out = pygpu.zeros((8, 6))
    _copy2d[(1, 1), (8, 8)](view, out)
    np.testing.assert_array_equal(out.copy_to_host(), a.T)


@cuda.jit
def _copy2d(src, dst):
    i, j = cuda.grid(2)
    if i < src.shape[0] and j < src.shape[1]:
        dst[i, j] = src[i, j]


def test_one_launch_object_follows_each_calls_types_and_layouts():
    """k = kernel[grid, block] keeps the plain launches it has seen (in C, by
    the arguments' dtypes, layouts and scalar types): each call must still
    get the kernel of its own types, and a strided view its strides. A call
    that repeats the launch's last one (twice in a row here) is launched
    from what C remembers of it."""
    rng = np.random.default_rng(15)
    k = _scale[1, 64]
    other = _scale[2, 32]  # another launch between two calls of k
    for _ in range(3):  # a third round replays every kept launch
        for dtype, s in ((np.float32, 2.5), (np.float64, 3), (np.int64, np.int64(4)),
                         (np.float64, np.float32(1.5)), (np.float32, True)):
            a = (rng.standard_normal(40) * 10).astype(dtype)
            for x, want in ((cuda.to_device(a), a), (cuda.to_device(a)[::2], a[::2])):
                for launch in (k, k, other, k):
                    out = pygpu.zeros(x.size, dtype=np.float64)
                    launch(x, s, out)
                    np.testing.assert_allclose(out.copy_to_host(),
                                               want.astype(np.float64) * s, rtol=1e-6)
    x = cuda.to_device(np.arange(4.0))
    k(x, 2, pygpu.zeros(4))
    # after a remembered call: the same types with an int past 64 bits, a list
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        k(x, 2**70, pygpu.zeros(4))
    with pytest.raises(TypeError):
        k(x, [1], pygpu.zeros(4))
    out = pygpu.zeros(4)
    k(x, 2, out)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(4.0) * 2)


def test_kernels_must_be_launched_with_a_configuration():
    with pytest.raises(TypeError, match=r"_scale\[blocks, threads_per_block\]"):
        _scale(np.zeros(3), 1.0, np.zeros(3))
    with pytest.raises(ValueError, match="kernel\\[grid, block\\]"):
        _scale[1]
    with pytest.raises(RuntimeError, match="only inside a kernel"):
        cuda.grid(1)
    with pytest.raises(RuntimeError, match="only inside a kernel"):
        _ = cuda.threadIdx.x


def test_a_kept_launch_configuration_is_found_only_for_the_same_ints():
    # kernel[grid, block] is looked up in C (_core._LaunchCache): (1.0, 128)
    # and (True, 128) are equal to (1, 128) in a dict, and the launch refuses
    # a float grid, so neither may find (1, 128)'s launch, nor leave one
    # behind that (1, 128) finds
    def add_one(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] += 1

    for order in ([(1.0, 128), (1, 128)], [(1, 128), (1.0, 128)], [(True, 128), (1, 128)]):
        k = cuda.jit(add_one)
        d = pygpu.zeros(10, np.float32)
        for config in order * 2:
            if type(config[0]) is not int:
                with pytest.raises(TypeError, match="grid must be an int"):
                    k[config](d)
            else:
                k[config](d)
        np.testing.assert_array_equal(d.copy_to_host(), np.full(10, 2, np.float32))
        assert list(k._launches) == [(1, 128)]
    k = cuda.jit(add_one)
    d = pygpu.zeros(10, np.float32)
    k[(1,), (16,)](d)
    k[[1], [16]](d)  # a list: not kept, launched
    k[np.int64(1), 16](d)  # a NumPy int: not kept, launched
    np.testing.assert_array_equal(d.copy_to_host(), np.full(10, 3, np.float32))
    assert list(k._launches) == [((1,), (16,))]


@cuda.jit
def _views(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i]  # a row: a 1-d view
        rev = row[::-1]
        mid = a[i, 1:-1:2]
        col = a[:, 2]
        s = 0.0
        for k in range(rev.size):
            s += rev[k] * (k + 1)
        out[i, 0] = s
        out[i, 1] = mid.shape[0] * 1000 + mid[mid.shape[0] - 1]
        out[i, 2] = col[-1 - i] + a[i][3] + a[i:, ::3].shape[1] * 100 + a[5:2].shape[0]
        total = 0.0
        for v in row:  # iterating an array: its elements, or its rows
            total += v
        for r in a[::2]:
            total += r[i % r.shape[0]] * 1000
        out[i, 3] = total


def test_slices_and_rows_are_views_with_pythons_clamping():
    a = np.random.default_rng(15).standard_normal((7, 9))
    out = np.zeros((7, 4))
    _views[1, 8](cuda.to_device(a), out)
    rows = range(7)
    np.testing.assert_allclose(out[:, 0], [(a[i, ::-1] * np.arange(1, 10)).sum()
                                           for i in rows], rtol=1e-14)
    np.testing.assert_array_equal(out[:, 1], [a[i, 1:-1:2].shape[0] * 1000 +
                                              a[i, 1:-1:2][-1] for i in rows])
    np.testing.assert_array_equal(out[:, 2], [a[:, 2][-1 - i] + a[i][3] + a[i:, ::3].shape[1]
                                              * 100 + a[5:2].shape[0] for i in rows])
    np.testing.assert_allclose(out[:, 3], [a[i].sum() + a[::2, i % 9].sum() * 1000
                                           for i in rows], rtol=1e-13)


@cuda.jit
def _complex(z, w, out, outr):
    i = cuda.grid(1)
    if i < z.size:
        a = z[i]
        b = w[i]
        out[i, 0] = a * b + a / b - a ** 2 + 1j
        out[i, 1] = cmath.exp(a) + cmath.sqrt(b) + a.conjugate() * complex(2, -1)
        outr[i, 0] = abs(a) + cmath.phase(b) + a.real - b.imag
        outr[i, 1] = 1.0 if a == b or not a else 0.0


@pytest.mark.parametrize("dtype, rtol", [(np.complex128, 1e-13), (np.complex64, 2e-5)])
def test_complex_arithmetic_and_cmath_match_numpy(dtype, rtol):
    rng = np.random.default_rng(16)
    z = (rng.standard_normal(16) + 1j * rng.standard_normal(16)).astype(dtype)
    w = (rng.standard_normal(16) + 1j * rng.standard_normal(16)).astype(dtype)
    w[3], z[4] = z[3], 0
    out = np.zeros((16, 2), dtype)
    outr = np.zeros((16, 2))
    _complex.forall(16)(z, w, out, outr)
    one = np.array(1j, dtype)
    np.testing.assert_allclose(out[:, 0], z * w + z / w - z ** 2 + one, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(out[:, 1], np.exp(z) + np.sqrt(w) + np.conj(z) * (2 - 1j),
                               rtol=rtol, atol=rtol)
    np.testing.assert_allclose(outr[:, 0], np.abs(z) + np.angle(w) + z.real - w.imag,
                               rtol=rtol, atol=rtol)
    np.testing.assert_array_equal(outr[:, 1], ((z == w) | (z == 0)).astype(float))


def test_a_kernel_launched_on_another_device_is_loaded_there():
    if len(cuda.gpus) < 2:
        pytest.skip("needs two devices (the simulator has two in the tests)")
    d0 = cuda.to_device(np.arange(4.0))
    _scale[1, 32](d0, 2.0, d0)
    try:
        cuda.select_device(1)
        d1 = cuda.to_device(np.arange(4.0))
        _scale[1, 32](d1, 3.0, d1)
        np.testing.assert_array_equal(d1.copy_to_host(), np.arange(4.0) * 3)
    finally:
        cuda.select_device(0)
    np.testing.assert_array_equal(d0.copy_to_host(), np.arange(4.0) * 2)


@cuda.jit
def _half(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        a = x[i]
        out[i] = a * y[i] + 1 - abs(-a) + math.sqrt(abs(a))
        y[i] = a if a > 0 else -a


def test_float16_arrays_compute_in_float32_and_round_once_when_stored():
    x = np.random.default_rng(17).standard_normal(40).astype(np.float16)
    y = np.full(40, 0.5, np.float16)
    out = np.zeros(40, np.float16)
    _half.forall(40)(x, y, out)
    xf = x.astype(np.float64)
    ref = (xf * 0.5 + 1 - np.abs(xf) + np.sqrt(np.abs(xf).astype(np.float32))).astype(np.float16)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(y, np.abs(x))


def test_a_kernel_pickles_by_reference_to_its_module_name():
    import pickle
    assert pickle.loads(pickle.dumps(_scale)) is _scale


RO_CONST = np.zeros(4)


def test_readonly_arrays_refuse_stores_as_numbas():
    """A global NumPy array (a constant) and a NumPy argument that is not
    writeable are readonly arrays, as Numba types them: a store, an
    augmented assignment or an atomic on one is a TypingError naming the
    line; reading them works."""

    @cuda.jit
    def store_const(a):
        RO_CONST[1] += 2
        a[1] = RO_CONST[1]

    @cuda.jit
    def atomic_const(a):
        cuda.atomic.add(RO_CONST, 0, 1.0)

    @cuda.jit
    def inc(a):
        a[cuda.grid(1)] += 1

    @cuda.jit
    def read(a, g):
        a[0] = RO_CONST[1] + g[0] + 1

    ro = np.zeros(4)
    ro.flags.writeable = False
    for launch in (lambda: store_const[1, 1](np.zeros(4)),
                   lambda: atomic_const[1, 1](np.zeros(1)),
                   lambda: inc[1, 4](ro)):
        with pytest.raises(cuda.TypingError, match="cannot modify readonly array"):
            launch()
    a = np.zeros(4)
    read[1, 1](a, ro)
    assert a[0] == 1.0
    w = np.zeros(4)
    inc[1, 4](w)
    assert w.tolist() == [1.0] * 4


def test_range_loops_near_the_int64_limits_run_pythons_count():
    """A step that would pass the stop ends the loop: the counter never
    overflows (it wrapped and looped for ever)."""

    @cuda.jit
    def count(o, a, b, c):
        for i in range(a, b, c):
            o[0] += 1
            o[1] = i

    big = 2**63
    for a, b, c in [(0, big - 1, 2**62), (-big + 1, big - 1, 2**62 + 2**61),
                    (10, -big, -(2**62)), (0, 10, 3), (10, 0, -3), (5, 5, 2),
                    (big - 2, big - 1, 5), (-big, -big + 5, -3), (0, 100, 7)]:
        o = np.zeros(2, np.int64)
        count[1, 1](o, a, b, c)
        r = range(a, b, c)
        assert o[0] == len(r) and (not r or o[1] == r[-1]), (a, b, c)


def test_comprehensions_are_refused_by_name():
    @cuda.jit
    def listed(a):
        x = [i for i in range(3)]
        a[0] = x[0]

    @cuda.jit
    def generated(a):
        a[0] = sum(i for i in range(3))

    for k, what in ((listed, "a list comprehension"), (generated, "a generator expression")):
        with pytest.raises(cuda.TypingError, match=what):
            k[1, 1](np.zeros(1))


def test_shifts_past_the_width_and_bool_invert_are_a_gpus_and_numbas():
    """A GPU's shl and shr clamp the count: by 64 or more (or a negative
    count) << gives 0 and >> the sign, on the simulator too (whose CPU masks
    the count); ~ of a boolean is its negation, as Numba types it."""

    @cuda.jit
    def k(o, n, x, b):
        o[0] = 1 << n
        o[1] = x >> n
        o[2] = ~b
        o[3] = x << 3

    for n, want in ((64, [0, -1, 0, -40]), (70, [0, -1, 0, -40]), (-1, [0, -1, 0, -40]),
                    (3, [8, -1, 0, -40]), (0, [1, -5, 0, -40])):
        o = np.zeros(4, np.int64)
        k[1, 1](o, n, -5, True)
        assert o.tolist() == want, n
