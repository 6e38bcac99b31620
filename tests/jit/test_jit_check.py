"""cuda.jit kernels under the simulator's checking mode (check=True,
PYGPU_SIM_CHECK=1), their asserts (the record the generated code writes and
the dispatcher reads after the launch) and inspect_cuda: every report names
the Python file and line, the thread and the block."""

import re
import shutil

import numpy as np
import pytest

import pygpu
from pygpu import cuda

needs_clang = pytest.mark.skipif(shutil.which("clang++") is None,
                                 reason="the checking mode needs clang++")


def _line(kernel, text):
    """The line number of the first line of kernel's source holding text."""
    lines, first = __import__("inspect").getsourcelines(kernel.py_func)
    return first + next(i for i, t in enumerate(lines) if text in t)


THIS = re.escape(__file__)


# ---- the checking mode --------------------------------------------------------------


@cuda.jit(check=True)
def _write_past_the_end(a):
    i = cuda.grid(1)
    a[i + 1] = 1.0  # planted: the last thread writes one past the end


@cuda.jit(check=True)
def _shared_race(a, out):
    s = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    # planted: no cuda.syncthreads() here
    out[t] = s[(t + 1) % 32]


@cuda.jit(check=True)
def _read_unwritten(a, out):
    i = cuda.grid(1)
    out[i] = a[i] + 1


@cuda.jit
def _divergent_barrier(a):
    t = cuda.threadIdx.x
    if t < 16:
        cuda.syncthreads()  # planted: half the block never gets here
    a[t] = 1


@pytest.mark.simulator
@needs_clang
def test_check_true_names_the_python_line_of_an_out_of_bounds_write():
    d = cuda.to_device(np.zeros(32, np.float32))
    line = _line(_write_past_the_end, "a[i + 1] = 1.0")
    with pytest.raises(pygpu.KernelError) as info:
        _write_past_the_end[1, 32](d)
    message = str(info.value)
    assert re.search(rf", {THIS}:{line}: index 32 is out of bounds for axis 0 with size 32 "
                     r"\(array 'a'\)", message), message
    assert "kernel '_write_past_the_end', block (0, 0, 0), thread (31, 0, 0)" in message


@cuda.jit(check=True)
def _local_past_the_end(a, n):
    l1 = cuda.local.array(4, np.int64)
    l2 = cuda.local.array(4, np.int64)
    for i in range(4):
        l1[i] = 10 + i
        l2[i] = 20 + i
    l1[n] = 99  # planted: n may be past either end
    for i in range(4):
        a[i] = l2[i]


@pytest.mark.simulator
@needs_clang
def test_check_true_checks_the_indices_of_local_arrays():
    """A local array's memory is the thread's own, which the access checks
    do not watch: its indices are checked (a write past it landed in the
    next local array, unreported)."""
    line = _line(_local_past_the_end, "l1[n] = 99")
    for n in (-6, 5):
        with pytest.raises(pygpu.KernelError) as info:
            _local_past_the_end[1, 1](np.zeros(4, np.int64), n)
        assert re.search(rf", {THIS}:{line}: index {n} is out of bounds for axis 0 with size 4 "
                         r"\(array 'l1'\)", str(info.value)), str(info.value)
    a = np.zeros(4, np.int64)
    _local_past_the_end[1, 1](a, -1)
    assert a.tolist() == [20, 21, 22, 23]


@pytest.mark.simulator
@needs_clang
def test_check_true_names_the_python_line_and_array_of_a_shared_memory_race():
    a = cuda.to_device(np.arange(32, dtype=np.float32))
    out = cuda.to_device(np.zeros(32, np.float32))
    made = _line(_shared_race, "cuda.shared.array")
    with pytest.raises(pygpu.KernelError, match="shared-memory race") as info:
        _shared_race[1, 32](a, out)
    message = str(info.value)
    # one thread's write and another's read of an element: whichever came
    # second (the test suite shuffles the threads' order) names its line
    lines = (_line(_shared_race, "s[t] = a[t]"), _line(_shared_race, "out[t] = s["))
    m = re.search(rf"block \(0, 0, 0\), thread \(\d+, 0, 0\), {THIS}:(\d+): "
                  r"shared-memory race", message)
    assert m and int(m.group(1)) in lines, message
    assert f"cuda.shared.array 's' (made at {__file__}:{made})" in message


@pytest.mark.simulator
@needs_clang
def test_check_true_names_the_python_line_of_a_read_of_unwritten_memory():
    a = pygpu.empty(64, np.float32)  # never written
    out = cuda.to_device(np.zeros(64, np.float32))
    with pytest.raises(pygpu.KernelError, match="uninitialized global memory") as info:
        _read_unwritten[2, 32](a, out)
    assert re.search(rf"{THIS}:{_line(_read_unwritten, 'out[i] = a[i] + 1')}: ",
                     str(info.value))


@pytest.mark.simulator
def test_divergent_barrier_names_the_python_line_of_the_barrier():
    d = cuda.to_device(np.zeros(32, np.int64))
    line = _line(_divergent_barrier, "cuda.syncthreads()")
    launch = _divergent_barrier[1, 32]
    for _ in range(3):  # the same launch again: the kept fast path reports it too
        with pytest.raises(pygpu.KernelError, match="divergent barrier") as info:
            launch(d)
        message = str(info.value)
        assert re.search(rf"wait at __syncthreads\(\) \(the first, thread \(\d+, 0, 0\)\) "
                         rf"at {THIS}:{line} ", message), message
        assert "kernel '_divergent_barrier', block (0, 0, 0)" in message


@pytest.mark.simulator
@needs_clang
def test_pygpu_sim_check_turns_the_checking_mode_on_for_python_kernels(monkeypatch):
    @cuda.jit
    def overrun(a):
        i = cuda.grid(1)
        a[i + 1] = 1.0

    d = cuda.to_device(np.zeros(8, np.float32))
    overrun[1, 8](d)  # unchecked: the write past the end goes unseen
    monkeypatch.setenv("PYGPU_SIM_CHECK", "1")

    @cuda.jit
    def overrun_checked(a):
        i = cuda.grid(1)
        a[i + 1] = 1.0

    with pytest.raises(pygpu.KernelError, match=rf"{THIS}:{_line(overrun_checked, 'a[i + 1]')}"):
        overrun_checked[1, 8](d)
    monkeypatch.setenv("PYGPU_SIM_CHECK", "1")

    @cuda.jit(check=False)
    def overrun_unchecked(a):
        i = cuda.grid(1)
        a[i + 1] = 1.0

    overrun_unchecked[1, 8](d)  # check=False wins over the environment


@pytest.mark.simulator
@needs_clang
def test_check_true_kernel_that_is_correct_gives_numpys_answer():
    @cuda.jit(check=True)
    def scale(a, out):
        s = cuda.shared.array(64, np.float64)
        t = cuda.threadIdx.x
        s[t] = a[t]
        cuda.syncthreads()
        out[t] = 2.0 * s[63 - t]

    a = np.random.default_rng(1).standard_normal(64)
    out = np.zeros(64)
    scale[1, 64](a, out)
    np.testing.assert_allclose(out, 2.0 * a[::-1], rtol=1e-15)


# ---- assert ---------------------------------------------------------------------------


@cuda.jit
def _asserts(x):
    i = cuda.grid(1)
    assert x[i] >= 0, "x must not be negative"
    assert i < 1000
    x[i] += 1


@cuda.jit(device=True)
def _checked_sqrt(v):
    assert v >= 0, "no square root of a negative number"
    return v ** 0.5


@cuda.jit
def _calls_asserting_device_function(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = _checked_sqrt(x[i])
        out[i] += 1  # not reached by a thread whose assert failed


@cuda.jit
def _assert_then_barrier(x):
    s = cuda.shared.array(64, np.float64)
    t = cuda.threadIdx.x
    assert x[t] != 7, "seven"
    s[t] = x[t]
    cuda.syncthreads()
    x[t] = s[63 - t]


def _message_at(kernel, text):
    return rf"{THIS}:{_line(kernel, text)}"


def test_assert_raises_assertion_error_naming_line_thread_block_and_message():
    x = np.zeros(64)
    _asserts[2, 32](x)
    assert (x == 1).all()  # no assert failed: the kernel ran
    x = np.zeros(64)
    x[37] = -1.0
    with pytest.raises(AssertionError) as info:
        _asserts[2, 32](x)
    message = str(info.value)
    assert isinstance(info.value, pygpu.KernelAssertionError)
    assert re.search(_message_at(_asserts, "x[i] >= 0"), message), message
    assert "kernel '_asserts', block (1, 0, 0), thread (5, 0, 0)" in message
    assert message.endswith("assert x[i] >= 0 failed: x must not be negative")
    # the record was cleared: the next good launch runs without raising
    good = np.zeros(64)
    _asserts[2, 32](good)
    assert (good == 1).all()


def test_assert_without_message_names_its_condition():
    x = np.zeros(2048)
    with pytest.raises(AssertionError, match=_message_at(_asserts, "i < 1000")) as info:
        _asserts[16, 128](x)
    assert str(info.value).endswith("assert i < 1000 failed")


def test_assert_in_device_function_names_its_line_and_stops_the_caller():
    x = np.array([4.0, 9.0, -1.0, 16.0])
    out = np.full(4, -5.0)
    with pytest.raises(AssertionError) as info:
        _calls_asserting_device_function[1, 4](x, out)
    message = str(info.value)
    assert re.search(_message_at(_checked_sqrt, "v >= 0"), message), message
    assert "(in device function _checked_sqrt())" in message
    assert "thread (2, 0, 0)" in message
    assert message.endswith("no square root of a negative number")
    good = np.array([4.0, 9.0, 1.0, 16.0])
    out = np.zeros(4)
    _calls_asserting_device_function[1, 4](good, out)
    np.testing.assert_allclose(out, np.sqrt(good) + 1, rtol=1e-15)


def test_assert_before_a_barrier_is_reported_not_the_divergence_it_causes():
    x = np.arange(64, dtype=np.float64)
    with pytest.raises(AssertionError, match=_message_at(_assert_then_barrier, "!= 7")):
        _assert_then_barrier[1, 64](x)


@cuda.jit(device=True)
def _positive(v):
    assert v > 0, "positive"
    return v


@cuda.jit
def _loops(x, out):
    i = cuda.grid(1)
    n = 0
    while _positive(x[i]) > n:
        n += 1
    if _positive(x[i]) > 2:
        out[i] = n
    else:
        out[i] = -n


def test_assert_in_if_and_while_tests_through_device_functions():
    x = np.array([1, 2, 3, 4], dtype=np.int64)
    out = np.zeros(4, np.int64)
    _loops[1, 4](x, out)
    assert out.tolist() == [-1, -2, 3, 4]
    x[3] = 0
    with pytest.raises(AssertionError, match=r"thread \(3, 0, 0\).*assert v > 0 failed: "
                                             "positive"):
        _loops[1, 4](x, out)


_NVRTC_SCRIPT = r"""
import sys
sys.path.insert(0, sys.argv[1])
import test_jit_check as C
from pygpu.rawkernel import compile_cuda
for kernel, sig in [
    (C._asserts, "void(float64[::1])"),
    (C._calls_asserting_device_function, "void(float64[::1], float64[::1])"),
    (C._assert_then_barrier, "void(float64[::1])"),
    (C._loops, "void(int64[::1], int64[::1])"),
    (C._divergent_barrier, "void(int64[::1])"),
]:
    source = kernel.inspect_cuda(sig)
    image, log, _ = compile_cuda(source, arch="sm_90")
    assert image[:4] == b"\x7fELF", kernel
    print(kernel.__name__, "ok")
"""


def test_asserts_and_barriers_compile_through_nvrtc():
    # the GPU path is the same generated code: the record, no trap
    from conftest import run_with_nvrtc
    out = run_with_nvrtc(_NVRTC_SCRIPT, str(__import__("pathlib").Path(__file__).parent))
    assert out.count(" ok") == 5, out


def test_only_kernels_with_asserts_carry_the_record():
    @cuda.jit
    def plain(x):
        x[cuda.grid(1)] = 1

    assert "pg_jit_assert_record" not in plain.inspect_cuda("void(float64[::1])")
    assert "pg_jit_assert_record" in _asserts.inspect_cuda("void(float64[::1])")


# ---- inspect_cuda -------------------------------------------------------------------


def test_inspect_cuda_gives_the_cuda_c_per_signature_with_python_lines():
    @cuda.jit
    def add_one(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    assert add_one.inspect_cuda() == {}  # nothing compiled yet
    src = add_one.inspect_cuda("void(float32[::1])")
    assert 'extern "C" __global__ void pg_add_one(float *a' in src
    assert f'#line {_line(add_one, "a[i] += 1")} "{__file__}"' in src
    add_one[1, 4](np.zeros(4, np.float32))
    add_one[1, 4](np.zeros((4,), np.int64))
    found = add_one.inspect_cuda()
    assert set(found) == {"(array(float32, 1d, C))", "(array(int64, 1d, C))"}
    assert found["(array(float32, 1d, C))"] == src
    assert "long long *a" in found["(array(int64, 1d, C))"]
    with pytest.raises(TypeError, match="unknown type"):
        add_one.inspect_cuda("void(float33[:])")
