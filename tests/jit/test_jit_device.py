"""cuda.jit's device functions against NumPy: atomics, warp votes and
shuffles, barriers with predicates, shared (static and dynamic), local and
constant memory, print and assert; and the errors that name Python lines."""

import re

import numpy as np
import pytest

import pygpu
from pygpu import cuda

TABLE = np.array([3, 1, 4, 1, 5, 9, 2, 6], dtype=np.int32)


@cuda.jit
def _atomics(x, ints, uints, floats, olds):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        cuda.atomic.add(ints, 0, v)
        cuda.atomic.sub(ints, 1, v)
        cuda.atomic.max(ints, 2, v)
        cuda.atomic.min(ints, 3, v)
        cuda.atomic.and_(ints, 4, v + 1000)
        cuda.atomic.or_(ints, 5, v & 0xFF)
        cuda.atomic.xor(ints, 6, v)
        cuda.atomic.inc(uints, 0, 9)
        cuda.atomic.dec(uints, 1, 5)
        cuda.atomic.add(floats, (0, 0), v * 0.5)
        cuda.atomic.max(floats, (0, 1), v * 0.25)
        cuda.atomic.min(floats, (1, 0), v * 0.25)
        olds[i] = cuda.atomic.exch(uints, 2, i)
        cuda.atomic.cas(ints, 7, i - 1, i)  # a chain: only the thread after succeeds


def test_every_atomic_gives_numpys_reduction_of_the_values():
    rng = np.random.default_rng(20)
    n = 200
    x = rng.integers(-500, 500, n)
    ints = np.zeros(8, np.int64)
    ints[2], ints[3], ints[4] = -(2**62), 2**62, -1
    uints = np.array([0, 3, 0], np.uint64)
    floats = np.zeros((2, 2))
    olds = np.zeros(n, np.uint64)
    _atomics.forall(n)(x, ints, uints, floats, olds)
    xor = np.bitwise_xor.reduce(x)
    ands = np.bitwise_and.reduce(x + 1000)
    ors = np.bitwise_or.reduce(x & 0xFF)
    assert ints[:7].tolist() == [x.sum(), -x.sum(), x.max(), x.min(), ands, ors, xor]
    # inc wraps to 0 past 9: n increments from 0; dec from 3 wraps to 5 below 0
    assert uints[0] == n % 10
    dec = 3
    for _ in range(n):
        dec = 5 if dec == 0 or dec > 5 else dec - 1
    assert uints[1] == dec
    # exch: the old values are every thread's i but one, plus the initial 0
    seen = sorted(olds.tolist() + [int(uints[2])])
    assert seen == [0] + list(range(n))
    assert 1 <= ints[7] <= n - 1
    np.testing.assert_allclose(floats[0, 0], x.sum() * 0.5)
    assert floats[0, 1] == max(x.max() * 0.25, 0) and floats[1, 0] == min(x.min() * 0.25, 0)


@cuda.jit
def _warp(x, out):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i]
    out[i, 0] = cuda.shfl_sync(0xFFFFFFFF, v, 3)
    out[i, 1] = cuda.shfl_up_sync(0xFFFFFFFF, v, 1)
    out[i, 2] = cuda.shfl_down_sync(0xFFFFFFFF, v, 2)
    out[i, 3] = cuda.shfl_xor_sync(0xFFFFFFFF, v, 1)
    out[i, 4] = cuda.ballot_sync(0xFFFFFFFF, v > 0)
    out[i, 5] = cuda.all_sync(0xFFFFFFFF, v > -1000)
    out[i, 6] = cuda.any_sync(0xFFFFFFFF, v > 40)
    out[i, 7] = cuda.activemask()
    out[i, 8] = lane + cuda.warpsize * 100
    n = cuda.syncthreads_count(v > 0)
    both = cuda.syncthreads_and(v > -1000)
    some = cuda.syncthreads_or(v > 1000)
    out[i, 9] = n * 100 + both * 10 + some


def test_warp_shuffles_votes_and_barrier_predicates_match_numpy():
    rng = np.random.default_rng(21)
    x = rng.integers(-50, 50, 64).astype(np.int64)
    out = np.zeros((64, 10), np.int64)
    _warp[1, 64](x, out)
    lane = np.arange(64) % 32
    warp = np.arange(64) // 32
    w = x.reshape(2, 32)
    np.testing.assert_array_equal(out[:, 0], w[warp, 3])
    np.testing.assert_array_equal(out[:, 1], np.where(lane >= 1, x[np.arange(64) - 1], x))
    np.testing.assert_array_equal(out[:, 2], np.where(lane < 30, x[np.minimum(
        np.arange(64) + 2, 63)], x))
    np.testing.assert_array_equal(out[:, 3], x[np.arange(64) ^ 1])
    ballots = [sum(1 << k for k in range(32) if w[j, k] > 0) for j in range(2)]
    np.testing.assert_array_equal(out[:, 4], np.array(ballots)[warp])
    np.testing.assert_array_equal(out[:, 5], 1)
    np.testing.assert_array_equal(out[:, 6], (w > 40).any(axis=1)[warp].astype(int))
    np.testing.assert_array_equal(out[:, 7], 0xFFFFFFFF)
    np.testing.assert_array_equal(out[:, 8], lane + 3200)
    np.testing.assert_array_equal(out[:, 9], (x > 0).sum() * 100 + 10)


@cuda.jit
def _memories(x, out):
    dyn = cuda.shared.array(0, dtype=np.float32)  # the launch's dynamic shared memory
    loc = cuda.local.array((2, 3), np.int64)
    tbl = cuda.const.array_like(TABLE)
    t = cuda.threadIdx.x
    dyn[t] = x[t]
    cuda.syncthreads()
    for r in range(2):
        for c in range(3):
            loc[r, c] = r * 10 + c
    out[t, 0] = dyn[dyn.shape[0] - 1 - t]
    out[t, 1] = loc[1, 2] + loc[0, 1] + tbl[t % 8] + TABLE.size
    out[t, 2] = dyn.size


def test_dynamic_shared_local_and_constant_arrays():
    rng = np.random.default_rng(22)
    x = rng.standard_normal(32).astype(np.float32)
    out = np.zeros((32, 3))
    _memories[1, 32, 0, 32 * 4](x, out)
    np.testing.assert_array_equal(out[:, 0], x[::-1])
    np.testing.assert_array_equal(out[:, 1], 12 + 1 + TABLE[np.arange(32) % 8] + 8)
    np.testing.assert_array_equal(out[:, 2], 32)


@cuda.jit
def _speak(x):
    i = cuda.grid(1)
    if i < 2:
        print("thread", i, "has", x[i], i == 0, "100%")


def test_print_writes_to_python_stdout_as_numba(capfd):
    _speak[1, 4](np.array([1.5, -2.0]))
    cuda.synchronize()
    out = capfd.readouterr().out
    assert "thread 0 has 1.500000 True 100%\n" in out
    assert "thread 1 has -2.000000 False 100%\n" in out


@cuda.jit
def _checked(x):
    i = cuda.grid(1)
    assert x[i] >= 0, "x must not be negative"
    x[i] += 1


@pytest.mark.simulator
def test_assert_raises_on_the_host_naming_the_python_line():
    ok = np.zeros(8)
    _checked[1, 8](ok)
    assert (ok == 1).all()
    bad = np.zeros(8)
    bad[5] = -1
    line = _checked.py_func.__code__.co_firstlineno + 3
    with pytest.raises(AssertionError, match=rf"test_jit_device\.py:{line}") as info:
        _checked[1, 8](bad)
    assert isinstance(info.value, pygpu.KernelAssertionError)
    assert "x must not be negative" in str(info.value)


def _kernel_line(f, text):
    lines = open(f.__code__.co_filename).read().splitlines()
    return next(i + 1 for i, t in enumerate(lines) if text in t and
                i + 1 > f.__code__.co_firstlineno)


@cuda.jit
def _bad_slice(a):
    s = cuda.local.array((2, 2), np.float64)
    s[:] = a


@cuda.jit
def _bad_string(a):
    a[0] = "x"


@cuda.jit
def _bad_mix(a):
    v = 1.0
    v = a
    a[0] = v


@cuda.jit
def _bad_call(a):
    a[0] = np.linalg.norm(a)


def _plain(x):
    return x


@cuda.jit
def _bad_plain(a):
    a[0] = _plain(a[0])


@cuda.jit
def _bad_with(a):
    with open("f"):
        pass


@pytest.mark.parametrize("kernel, text, what", [
    (_bad_slice, "s[:] = a", "broadcasting is not supported"),
    (_bad_string, 'a[0] = "x"', "cannot convert str to float64"),
    (_bad_mix, "v = a", "variable 'v' is assigned both"),
    (_bad_call, "np.linalg.norm", "not supported in kernels"),
    (_bad_plain, "_plain(a[0])", r"decorate it with @cuda.jit\(device=True\)"),
    (_bad_with, "with open", "with statement is not supported"),
])
def test_unsupported_python_raises_typing_error_naming_file_and_line(kernel, text, what):
    line = _kernel_line(kernel.py_func, text)
    with pytest.raises(cuda.TypingError, match=what) as info:
        kernel[1, 1](np.zeros(4))
    message = str(info.value)
    assert re.search(rf"test_jit_device\.py:{line}: in kernel {kernel.__name__}\(\)", message)
    assert info.value.lineno == line and info.value.filename.endswith("test_jit_device.py")
    assert text in message  # the line itself


def test_typing_errors_come_at_the_first_call_not_at_decoration():
    @cuda.jit
    def later(a):
        a[0] = undefined_name  # noqa: F821

    with pytest.raises(cuda.TypingError, match="name 'undefined_name' is not defined"):
        later[1, 1](np.zeros(1))
    with pytest.raises(cuda.TypingError, match="unknown type 'float33'"):
        cuda.jit("void(float33[:])")
    with pytest.raises(TypeError, match="argument 0 is a str"):
        _bad_string[1, 1]("text")


@cuda.jit(device=True)
def _even(n):
    if n == 0:
        return 1
    return _odd(n - 1)


@cuda.jit(device=True)
def _odd(n):
    if n == 0:
        return 0
    return _even(n - 1)


def test_mutual_recursion_is_a_typing_error_naming_the_cycle():
    @cuda.jit
    def k(a):
        a[0] = _even(4)

    with pytest.raises(cuda.TypingError, match=r"mutual recursion: _even\(\) -> _odd\(\) -> "
                                               r"_even\(\)"):
        k[1, 1](np.zeros(1))


def test_jit_of_a_non_function_says_what_it_takes():
    for x in (len, 5):
        with pytest.raises(TypeError, match="cuda.jit takes a Python function"):
            cuda.jit(x)
