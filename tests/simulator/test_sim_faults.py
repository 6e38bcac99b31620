"""Bad kernels never kill the process on the simulator: a wild or null
pointer, a stack overflow and a launch without the dynamic shared memory its
kernel uses fail the launch with pygpu.KernelError, as a GPU's illegal
address does; an integer division by zero gives a value, as on a GPU, never a
signal; and the process goes on. What NVRTC or the driver refuses (a host
function called from a kernel, more static shared memory than a GPU has) is
refused here too, and kernels may take the C library's names (div, abs,
exit), as CUDA allows."""

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from conftest import ROOT

import pygpu

pytestmark = pytest.mark.simulator

HAVE_CLANG = shutil.which("clang++") is not None
MODES = [False, True] if HAVE_CLANG else [False]


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    if shutil.which("g++") is None and shutil.which("clang++") is None:
        pytest.skip("the simulator compiles kernels with g++ or clang++; neither is here")
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kcache"))
    monkeypatch.delenv("PYGPU_SIM_CHECK", raising=False)


FAULTS = r'''
extern "C" __global__ void far_write(int *x)
{
    x[(1LL << 60) + threadIdx.x] = 1; /* 2^62 bytes away: no process maps that */
}

extern "C" __global__ void far_read(int *x)
{
    x[threadIdx.x] = x[(long long)threadIdx.x - (1LL << 60)];
}

__device__ int deeper(volatile int *depth, int n)
{
    volatile int frame[64];
    frame[n & 63] = n;
    *depth = n;
    return n < 0 ? 0 : deeper(depth, n + 1) + frame[3];
}

extern "C" __global__ void runaway(int *x)
{
    x[1] = deeper(x, 1);
}

extern "C" __global__ void no_dynamic_shared(int *x)
{
    extern __shared__ int s[];
    s[threadIdx.x] = 1;
    __syncthreads();
    x[threadIdx.x] = s[0];
}

extern "C" __global__ void static_shared_overrun(int *x)
{
    __shared__ int tile[32];
    __shared__ float other[4];
    tile[threadIdx.x] = (int)threadIdx.x; /* 64 threads: half of them past the end */
    if (threadIdx.x < 4) other[threadIdx.x] = 1.0f;
    __syncthreads();
    x[threadIdx.x] = tile[threadIdx.x & 31] + (int)other[0];
}

extern "C" __global__ void static_shared_underrun(int *x)
{
    __shared__ int tile[32];
    tile[threadIdx.x] = 1;
    __syncthreads();
    x[threadIdx.x] = tile[(int)threadIdx.x - 65536]; /* 256 KiB below it */
}

extern "C" __global__ void add_one(int *x)
{
    x[threadIdx.x] += 1;
}
'''


def still_works(module):
    x = pygpu.asarray(np.arange(32, dtype=np.int32))
    module.get_function("add_one")[1, 32](x)
    np.testing.assert_array_equal(x.copy_to_host(), np.arange(1, 33))


@pytest.mark.parametrize("check", MODES)
def test_wild_pointers_fail_the_launch_and_the_process_goes_on(check):
    m = pygpu.RawModule(FAULTS, check=check)
    x = pygpu.zeros(64, np.int32)
    for name, what in [("far_write", "write"), ("far_read", "read")]:
        with pytest.raises(pygpu.KernelError, match="cudaErrorIllegalAddress") as info:
            m.get_function(name)[1, 4](x)
        message = str(info.value)
        assert re.search(rf"kernel '{name}', block \(0, 0, 0\), thread \([0-3], 0, 0\)",
                         message), message
        assert what in message, message
        still_works(m)


def test_a_null_pointer_names_itself():
    m = pygpu.RawModule(r'''
    extern "C" __global__ void null_read(int *x, int **table)
    {
        x[threadIdx.x] = table[0][threadIdx.x];
    }''')
    x, table = pygpu.zeros(4, np.int32), pygpu.zeros(1, np.int64)  # a NULL pointer
    with pytest.raises(pygpu.KernelError, match="null pointer") as info:
        m.get_function("null_read")[1, 4](x, table)
    assert "cudaErrorIllegalAddress" in str(info.value)


@pytest.mark.parametrize("check", MODES)
def test_runaway_recursion_is_a_stack_overflow_not_a_crash(check):
    m = pygpu.RawModule(FAULTS, check=check)
    x = pygpu.zeros(4, np.int32)
    with pytest.raises(pygpu.KernelError, match="cudaErrorHardwareStackError") as info:
        m.get_function("runaway")[1, 2](x)
    assert "stack overflow" in str(info.value)
    assert x.copy_to_host()[0] > 10  # it did recurse
    still_works(m)


@pytest.mark.parametrize("check", MODES)
def test_extern_shared_without_dynamic_shared_memory_fails(check):
    m = pygpu.RawModule(FAULTS, check=check)
    x = pygpu.zeros(1024, np.int32)
    with pytest.raises(pygpu.KernelError, match="cudaErrorIllegalAddress"):
        m.get_function("no_dynamic_shared")[1, 1024](x)
    m.get_function("no_dynamic_shared")[1, 1024, 0, 4096](x)  # given: it runs
    assert x.copy_to_host().tolist() == [1] * 1024
    still_works(m)


@pytest.mark.parametrize("check", MODES)
def test_static_shared_memory_overrun_fails_the_launch_not_the_process(check):
    """Without checking too: the static __shared__ variables end at a page that
    is not there, so a write past them is an illegal address, not a write over
    the module's other memory (which crashed the process later)."""
    m = pygpu.RawModule(FAULTS, check=check)
    x = pygpu.zeros(64, np.int32)
    for _ in range(2):
        with pytest.raises(pygpu.KernelError, match="cudaErrorIllegalAddress") as info:
            m.get_function("static_shared_overrun")[1, 64](x)
        assert "kernel 'static_shared_overrun', block (0, 0, 0), thread (" in str(info.value)
        still_works(m)
    if not check:  # the checking mode names it as a shared-memory access out of bounds
        with pytest.raises(pygpu.KernelError, match="cudaErrorIllegalAddress"):
            m.get_function("static_shared_underrun")[1, 32](x)
        still_works(m)
    m.get_function("static_shared_overrun")[1, 32](x)  # in bounds: it runs
    np.testing.assert_array_equal(x.copy_to_host()[:32], np.arange(32) + 1)


@pytest.mark.parametrize("check", MODES)
def test_integer_division_by_zero_gives_a_value_not_a_signal(check):
    m = pygpu.RawModule(r'''
    template <class T> __device__ void divide(const T *a, const T *b, T *q, T *r)
    {
        int i = threadIdx.x;
        q[i] = a[i] / b[i];
        r[i] = a[i] % b[i];
    }
    extern "C" __global__ void div32(const int *a, const int *b, int *q, int *r)
    { divide(a, b, q, r); }
    extern "C" __global__ void div64(const long long *a, const long long *b,
                                     long long *q, long long *r)
    { divide(a, b, q, r); }
    extern "C" __global__ void divu(const unsigned *a, const unsigned *b,
                                    unsigned *q, unsigned *r)
    { divide(a, b, q, r); }''', check=check)
    for name, dtype in [("div32", np.int32), ("div64", np.int64), ("divu", np.uint32)]:
        info = np.iinfo(dtype)
        a = np.array([7, info.min, 9, info.min if info.min else 5], dtype)
        b = np.array([2, 0, 0, -1 if info.min else 0], dtype)
        q, r = pygpu.zeros(4, dtype), pygpu.zeros(4, dtype)
        m.get_function(name)[1, 4](pygpu.asarray(a), pygpu.asarray(b), q, r)
        got_q, got_r = q.copy_to_host(), r.copy_to_host()
        assert got_q[0] == 3 and got_r[0] == 1, name  # the ordinary case
        if info.min:  # the minimum by -1 wraps, as on a GPU
            assert got_q[3] == info.min and got_r[3] == 0, name
    # and the process goes on: a later launch divides as ever
    m.get_function("div32")[1, 1](pygpu.asarray(np.array([10], np.int32)),
                                  pygpu.asarray(np.array([3], np.int32)), q := pygpu.zeros(
                                      1, np.int32), pygpu.zeros(1, np.int32))
    assert q.copy_to_host()[0] == 3


@pytest.mark.parametrize("check", MODES)
def test_kernels_may_take_the_c_librarys_names(check):
    m = pygpu.RawModule(r'''
    extern "C" __global__ void div(int *x) { x[0] = 7 / 2; }
    extern "C" __global__ void abs(int *x) { x[1] = abs(-5) + (int)abs(-2.5f); }
    extern "C" __global__ void exit(int *x) { x[2] = (int)std::abs(-9LL); }''',
                        check=check)
    x = pygpu.zeros(3, np.int32)
    for name in ("div", "abs", "exit"):
        m.get_function(name)[1, 1](x)
    assert x.copy_to_host().tolist() == [3, 7, 9]


def test_a_kernel_calling_a_host_function_is_refused_with_nvrtcs_reason():
    for call in ("system(\"true\")", "exit(1)"):
        with pytest.raises(pygpu.CompileError) as info:
            pygpu.RawKernel('extern "C" __global__ void k(int *x)\n{\n'
                            f'    x[0] = 1;\n    {call};\n}}\n', "k")
        name = call.split("(")[0]
        assert f'calling a __host__ function("{name}")' in info.value.log
        assert "<kernel source>:4" in info.value.log, info.value.log


@pytest.mark.parametrize("check", MODES)
def test_more_static_shared_memory_than_a_gpu_has_is_refused(check):
    src = r'''
    extern "C" __global__ void big(int *x)
    {
        __shared__ char s[4 << 20];
        s[threadIdx.x] = 1;
        __syncthreads();
        if (threadIdx.x == 0) {
            x[0] = s[0];
        }
    }'''
    with pytest.raises(pygpu.KernelError, match="uses too much shared data") as info:
        pygpu.RawKernel(src, "big", check=check)[1, 32](pygpu.zeros(1, np.int32))
    assert "0x400000 bytes, 0xc000 max" in str(info.value)
    # 48 KiB is a GPU's limit, and allowed
    k = pygpu.RawKernel(src.replace("4 << 20", "48 << 10"), "big", check=check)
    x = pygpu.zeros(1, np.int32)
    k[1, 32](x)
    assert x.copy_to_host()[0] == 1


SPIN = '''
import sys, time, numpy as np, pygpu
k = pygpu.RawKernel(r"""
extern "C" __global__ void spin(QUALIFIER int *x, int *out) {
    while (x[0] == 0) { }
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}""", "spin", check=sys.argv[1] == "1")
flag, out = pygpu.zeros(1, np.int32), pygpu.zeros(128, np.int32)
print("ready", flush=True)
try:
    k[4, 32](flag, out)
except KeyboardInterrupt:
    print("interrupted", flush=True)
flag[0] = 1
k[4, 32](flag, out)
print("after", int(out.copy_to_host().sum()), flush=True)
'''


@pytest.mark.parametrize("qualifier", ["volatile", ""])
@pytest.mark.parametrize("check", MODES)
def test_ctrl_c_stops_every_thread_spinning_on_a_volatile_read(tmp_path, check, qualifier):
    """Every thread spins on a load with no other memory traffic: Ctrl-C
    stops it within a second, and the process goes on. Without volatile the
    loop has no side effect, which C++ lets a compiler drop (clang did, in
    the checking mode): the simulator's kernels spin as a GPU's do
    (-fno-finite-loops)."""
    script = tmp_path / "spin.py"
    script.write_text(textwrap.dedent(SPIN).replace("QUALIFIER", qualifier))
    env = dict(os.environ, PYGPU_SIMULATOR="1", PYGPU_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.Popen([sys.executable, str(script), str(int(check))],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # the launch has begun
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        assert p.stdout.readline().strip() == "interrupted"
        assert time.monotonic() - sent < 5
        p.wait(timeout=60)
        out, err = p.stdout.read(), p.stderr.read()
    finally:
        p.kill()
    assert "after 128" in out and p.returncode == 0, (p.returncode, out, err)


def test_an_ignored_sigint_does_not_stop_a_kernel(tmp_path):
    """SIGINT set to SIG_IGN (as for a background job) stays ignored: the
    kernel runs to its end."""
    script = tmp_path / "ignored.py"
    script.write_text(textwrap.dedent('''
        import signal, numpy as np, pygpu
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        k = pygpu.RawKernel(r"""
        extern "C" __global__ void wait(int *seen) {
            long long end = clock64() + 1500000000ll;  /* 1.5 s */
            if (threadIdx.x == 0) { while (clock64() < end) { } }
            seen[threadIdx.x] = 1;
        }""", "wait")
        seen = pygpu.zeros(8, np.int32)
        print("ready", flush=True)
        k[1, 8](seen)
        print("done", int(seen.copy_to_host().sum()), flush=True)
    '''))
    env = dict(os.environ, PYGPU_SIMULATOR="1", PYGPU_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                         env=env)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 0
    assert "done 8" in out


@pytest.mark.parametrize("check", MODES)
def test_dynamic_shared_memory_beyond_48_kib_is_refused_as_on_a_gpu(check):
    """A GPU refuses a launch that asks for more than 48 KiB of dynamic
    shared memory (cudaErrorInvalidValue); the simulator did not (and
    allocated what it was asked for)."""
    src = r'''extern "C" __global__ void dyn(float *a) {
        extern __shared__ float s[];
        s[threadIdx.x] = 1;
        a[threadIdx.x] = s[threadIdx.x];
    }'''
    k = pygpu.RawKernel(src, "dyn", check=check)
    a = pygpu.zeros(4, np.float32)
    k[1, 4, 0, 48 << 10](a)
    assert a.copy_to_host().tolist() == [1.0] * 4
    for n in ((48 << 10) + 4, 10**9):
        with pytest.raises(pygpu.CudaError, match="cudaErrorInvalidValue"):
            k[1, 4, 0, n](a)
    k[1, 4, 0, 16](a)  # and the next launch works
