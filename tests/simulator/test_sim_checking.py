"""What only the simulator does with users' kernels: a failed assert, a barrier
or warp intrinsic that cannot complete, and the checking mode's findings
(out-of-bounds accesses, shared-memory races) come back as Python exceptions
that name the kernel, block and thread; what it cannot run is refused by
name; a seeded shuffled schedule exposes order-dependent kernels."""

import shutil

import numpy as np
import pytest
from conftest import ROOT, random_array

import pygpu
from pygpu import cuda, rawkernel

pytestmark = pytest.mark.simulator

HAVE_CLANG = shutil.which("clang++") is not None
needs_clang = pytest.mark.skipif(not HAVE_CLANG, reason="the checking mode needs clang++")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    if shutil.which("g++") is None and shutil.which("clang++") is None:
        pytest.skip("the simulator compiles kernels with g++ or clang++; neither is here")
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kcache"))
    monkeypatch.delenv("PYGPU_SIM_CHECK", raising=False)


BUGS = r'''
#include <assert.h>

extern "C" __global__ void checked_index(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(i < n);
    x[i] = 1.0f;
}

extern "C" __global__ void off_by_one(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) {
        x[i] = 2.0f * i;
    }
}

extern "C" __global__ void before_start(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = x[i - 1];
    }
}

extern "C" __global__ void null_write(float *x)
{
    float *p = 0;
    p[threadIdx.x] = x[0];
}

extern "C" __global__ void reverse_no_barrier(float *x)
{
    __shared__ float s[128];
    s[threadIdx.x] = x[threadIdx.x];
    x[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void reverse(float *x)
{
    __shared__ float s[128];
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    x[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void shift_past_shared(float *x)
{
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    x[threadIdx.x] = s[threadIdx.x + 1];
}

extern "C" __global__ void dynamic_sum(const float *x, float *out)
{
    extern __shared__ float part[];
    part[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (unsigned int i = 0; i < blockDim.x; i++) {
            s += part[i];
        }
        *out = s;
    }
}

extern "C" __global__ void sum_in_place(float *x)
{
    __shared__ float s[64];
    unsigned int t = threadIdx.x;
    s[t] = x[t];
    __syncthreads();
    for (unsigned int d = blockDim.x / 2; d > 0; d /= 2) {
        if (t < d) {
            s[t] += s[t + d];
        }
        /* missing __syncthreads(): the next round reads what others write */
    }
    if (t == 0) {
        x[0] = s[0];
    }
}

extern "C" __global__ void divergent_barrier(float *x)
{
    if (threadIdx.x < 16) {
        __syncthreads();
    }
    x[threadIdx.x] = 1.0f;
}

extern "C" __global__ void early_exit_shuffle(float *x, int n)
{
    if (threadIdx.x >= n) {
        return;
    }
    x[threadIdx.x] = __shfl_down_sync(0xffffffff, x[threadIdx.x], 1);
}

extern "C" __global__ void missing_own_lane(int *x)
{
    x[threadIdx.x] = __shfl_sync(0x0000ffffu, x[threadIdx.x], 0);
}

extern "C" __global__ void count_unsafely(int *counter)
{
    int seen = *counter;
    __syncthreads();
    *counter = seen + 1;
}

extern "C" __global__ void neighbour(const int *x, int *y)
{
    __shared__ int s[256];
    s[threadIdx.x] = x[threadIdx.x];
    y[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}
'''


@pytest.fixture(scope="module")
def plain():
    return pygpu.RawModule(BUGS, check=False)


@pytest.fixture(scope="module")
def checked():
    if not HAVE_CLANG:
        pytest.skip("the checking mode needs clang++")
    return pygpu.RawModule(BUGS, check=True)


# ---- assert, printf, barriers and warps: in every mode -------------------------


@pytest.fixture
def ordered():
    """Threads and blocks in order, for messages that name the first thread."""
    previous = cuda.simulator_schedule(None)
    yield
    cuda.simulator_schedule(previous)


def test_failed_assert_names_kernel_block_thread_file_and_line(plain, ordered):
    d = pygpu.zeros(100, np.float32)
    with pytest.raises(pygpu.KernelAssertionError) as info:
        plain.get_function("checked_index")[2, 64](d, np.int32(100))
    msg = str(info.value)
    assert "kernel 'checked_index'" in msg and "block (1, 0, 0)" in msg
    assert "thread (36, 0, 0)" in msg and "assert(i < n)" in msg
    assert "<kernel source>:7" in msg
    assert isinstance(info.value, AssertionError) and info.value.name == "cudaErrorAssert"
    # the process goes on: the same kernel, correct launch, runs
    plain.get_function("checked_index")[2, 50](d, np.int32(100))
    np.testing.assert_array_equal(d.copy_to_host(), np.ones(100, np.float32))


def test_printf_output_comes_before_the_assert(plain, capsys, ordered):
    src = r'''
    #include <assert.h>
    extern "C" __global__ void talk(int n) {
        printf("thread %d\n", threadIdx.x);
        assert(threadIdx.x < n);
    }'''
    k = pygpu.RawKernel(src, "talk")
    k[1, 4](np.int32(10))
    assert capsys.readouterr().out == "".join(f"thread {t}\n" for t in range(4))
    with pytest.raises(AssertionError):
        k[1, 4](np.int32(2))
    assert "thread 0\n" in capsys.readouterr().out


def test_assert_is_compiled_out_with_ndebug():
    src = r'''
    #include <cassert>
    extern "C" __global__ void k(int *x) { assert(false); x[0] = 7; }'''
    x = pygpu.zeros(1, np.int32)
    pygpu.RawKernel(src, "k", options=("-DNDEBUG",))[1, 1](x)
    assert x.copy_to_host()[0] == 7


def test_barrier_reached_by_part_of_the_block_fails_and_says_which(plain):
    with pytest.raises(pygpu.KernelError, match=r"16 of its 32 threads wait at "
                       r"__syncthreads\(\).*16 have exited.*hangs"):
        plain.get_function("divergent_barrier")[1, 32](pygpu.zeros(32, np.float32))


def test_warp_mask_naming_an_exited_lane_fails(plain):
    with pytest.raises(pygpu.KernelError, match=r"__shfl_down_sync\(mask 0xffffffff\), "
                       r"which names lane 20 .*has exited"):
        plain.get_function("early_exit_shuffle")[1, 32](pygpu.zeros(32, np.float32),
                                                        np.int32(20))


def test_warp_mask_without_the_calling_lane_fails(plain):
    with pytest.raises(pygpu.KernelError, match="does not name the calling lane 16"):
        plain.get_function("missing_own_lane")[1, 32](pygpu.zeros(32, np.int32))


def test_warp_intrinsics_on_a_partial_warp_use_the_lanes_there_are():
    src = r'''
    extern "C" __global__ void k(int *x) {
        int v = x[threadIdx.x];
        for (int o = 1; o < 32; o *= 2) v += __shfl_xor_sync(0xffffffff, v, o);
        x[threadIdx.x] = v;
    }'''
    x = np.arange(40, dtype=np.int32)
    d = cuda.to_device(x)
    pygpu.RawKernel(src, "k")[1, 40](d)
    got = d.copy_to_host()
    assert (got[:32] == x[:32].sum()).all()


def test_unsupported_constructs_are_refused_by_name():
    cases = {
        'extern "C" __global__ void k(int *x) { asm volatile("membar.gl;"); }':
            "inline PTX",
        '#include <cub/cub.cuh>\nextern "C" __global__ void k(int *x) {}':
            "CUB, CUTLASS",
        'texture<float, 1> t;\nextern "C" __global__ void k(float *x) '
        '{ x[0] = tex1Dfetch(t, 0); }': "textures",
        '#include <cooperative_groups.h>\nextern "C" __global__ void k(int *x) '
        '{ cooperative_groups::this_multi_grid().sync(); }': "multi-device grid sync",
        '__global__ void child(int *x) {}\nextern "C" __global__ void k(int *x) '
        '{ child<<<1, 1>>>(x); }': "dynamic parallelism",
    }
    for source, what in cases.items():
        with pytest.raises(pygpu.CompileError, match=what) as info:
            pygpu.RawKernel(source, "k")
        assert "line" in str(info.value)


def test_refusals_ignore_comments_and_strings(capsys):
    src = r'''
    // asm("nop"); texture<float> would be refused, but not in a comment
    extern "C" __global__ void k(int *x) { printf("<<<asm(>>>\n"); x[0] = 1; }'''
    x = pygpu.zeros(1, np.int32)
    pygpu.RawKernel(src, "k")[1, 1](x)
    assert x.copy_to_host()[0] == 1
    assert capsys.readouterr().out == "<<<asm(>>>\n"


# ---- the schedule -----------------------------------------------------------------


def test_a_seeded_shuffle_exposes_a_missing_barrier(plain, rng):
    x = random_array(rng, 256, np.int32)
    results = set()
    previous = cuda.simulator_schedule(None)
    try:
        for seed in [None, 1, 2, 3, 4, 5]:
            cuda.simulator_schedule(seed)
            y = pygpu.zeros(256, np.int32)
            plain.get_function("neighbour")[1, 256](cuda.to_device(x), y)
            results.add(y.copy_to_host().tobytes())
        assert len(results) > 1  # the result hangs on the order: a race
        cuda.simulator_schedule(7)
        a = pygpu.zeros(256, np.int32)
        plain.get_function("neighbour")[1, 256](cuda.to_device(x), a)
        cuda.simulator_schedule(7)
        b = pygpu.zeros(256, np.int32)
        plain.get_function("neighbour")[1, 256](cuda.to_device(x), b)
        np.testing.assert_array_equal(a.copy_to_host(), b.copy_to_host())  # replayable
    finally:
        cuda.simulator_schedule(previous)


def test_a_correct_kernel_gives_one_result_under_every_schedule(plain, rng):
    x = random_array(rng, 128, np.float32)
    previous = cuda.simulator_schedule(None)
    try:
        for seed in [None, 11, 12, 13]:
            cuda.simulator_schedule(seed)
            d = cuda.to_device(x)
            plain.get_function("reverse")[1, 128](d)
            np.testing.assert_array_equal(d.copy_to_host(), x[::-1])
    finally:
        cuda.simulator_schedule(previous)


def test_schedule_setting_is_checked():
    with pytest.raises(TypeError, match="seed"):
        cuda.simulator_schedule("fast")


# ---- the checking mode -------------------------------------------------------------


@needs_clang
def test_out_of_bounds_write_names_the_argument_and_offset(checked):
    with pytest.raises(pygpu.KernelError) as info:
        checked.get_function("off_by_one")[1, 128](pygpu.zeros(100, np.float32),
                                                   np.int32(100))
    msg = str(info.value)
    assert info.value.name == "cudaErrorIllegalAddress"
    assert "kernel 'off_by_one'" in msg and "thread (100, 0, 0)" in msg
    assert "4-byte write at byte offset 400 from argument 'x' (parameter 0)" in msg
    assert "spans bytes 0 to 400" in msg


@needs_clang
def test_read_before_the_start_of_an_array(checked, rng):
    x = cuda.to_device(random_array(rng, 64, np.float32))
    with pytest.raises(pygpu.KernelError, match=r"thread \(0, 0, 0\)(, <kernel source>:\d+)?: "
                       r"4-byte read at byte offset -4 from argument 'x' \(parameter 0\)"):
        checked.get_function("before_start")[1, 64](x, pygpu.zeros(64, np.float32),
                                                    np.int32(64))


@needs_clang
def test_a_view_bounds_the_argument_not_its_buffer(checked):
    base = pygpu.zeros(200, np.float32)
    with pytest.raises(pygpu.KernelError, match="byte offset 400 from argument 'x'"):
        checked.get_function("off_by_one")[1, 128](base[:100], np.int32(100))


@needs_clang
def test_null_pointer(checked):
    with pytest.raises(pygpu.KernelError, match="a null pointer"):
        checked.get_function("null_write")[1, 4](pygpu.zeros(4, np.float32))


@needs_clang
def test_shared_memory_out_of_bounds_static_and_dynamic(checked, rng, ordered):
    x = cuda.to_device(random_array(rng, 64, np.float32))
    with pytest.raises(pygpu.KernelError, match=r"thread \(63, 0, 0\)(, <kernel source>:\d+)?: "
                       r"shared-memory 4-byte read at byte offset 256 of __shared__ 's', "
                       r"which holds 256 bytes"):
        checked.get_function("shift_past_shared")[1, 64](x)
    out = pygpu.zeros(1, np.float32)
    with pytest.raises(pygpu.KernelError, match=r"byte offset 1\d\d of the dynamic shared "
                       r"memory \(extern __shared__\), which holds 128 bytes as launched"):
        checked.get_function("dynamic_sum")[1, 64, None, 128](x, out)
    checked.get_function("dynamic_sum")[1, 64, None, 256](x, out)
    assert out.copy_to_host()[0] == pytest.approx(x.copy_to_host().sum(), rel=1e-5)


@needs_clang
def test_missing_barrier_is_a_shared_memory_race(checked, rng):
    x = cuda.to_device(random_array(rng, 128, np.float32))
    with pytest.raises(pygpu.KernelError, match=r"shared-memory race on __shared__ 's' at "
                       r"byte offset \d+: a 4-byte (read|write) where thread \(\d+, 0, 0\) "
                       r"(wrote|read), "
                       r"with no __syncthreads\(\) between them"):
        checked.get_function("reverse_no_barrier")[1, 128](x)
    with pytest.raises(pygpu.KernelError, match="shared-memory race on __shared__ 's'"):
        checked.get_function("sum_in_place")[1, 64](cuda.to_device(np.ones(64, np.float32)))


@needs_clang
def test_correct_kernels_pass_the_checks(checked, rng):
    x = random_array(rng, 128, np.float32)
    d = cuda.to_device(x)
    checked.get_function("reverse")[1, 128](d)
    np.testing.assert_array_equal(d.copy_to_host(), x[::-1])
    from test_kernel_dialect import ATOMICS, WARP
    warp = pygpu.RawModule(WARP, check=True)
    y = random_array(rng, 64, np.float32)
    out = pygpu.zeros(2, np.float32)
    warp.get_function("shared_warp_sum")[1, 64](cuda.to_device(y), out)
    np.testing.assert_allclose(out.copy_to_host(), y.reshape(2, 32).astype(float).sum(1),
                               rtol=1e-5)
    counts = pygpu.zeros(8, np.int32)
    v = rng.integers(0, 50, 1000).astype(np.int32)
    pygpu.RawModule(ATOMICS, check=True).get_function("shared_counts")[1, 128](
        cuda.to_device(v), np.int32(1000), counts)
    np.testing.assert_array_equal(counts.copy_to_host(), np.bincount(v & 7, minlength=8))


@needs_clang
def test_tiled_matmul_passes_the_checks(rng):
    from test_raw_kernels import SOURCE
    f = pygpu.RawModule(SOURCE, check=True).get_function("matmul")
    n = 40
    a, b = random_array(rng, (n, n), np.float32), random_array(rng, (n, n), np.float32)
    c = pygpu.zeros((n, n), np.float32)
    f[(3, 3), (16, 16)](cuda.to_device(a), cuda.to_device(b), c, np.int32(n))
    np.testing.assert_allclose(c.copy_to_host(), a.astype(float) @ b, rtol=1e-4, atol=1e-4)


@needs_clang
def test_host_arguments_are_bounded_by_their_arrays(rng):
    src = r'''
    extern "C" __global__ void k(const float *x, float *y, int n) {
        int i = threadIdx.x;
        if (i <= n) y[i] = x[i];
    }'''
    k = pygpu.RawKernel(src, "k", check=True)
    x = random_array(rng, 32, np.float32)
    y = np.zeros(32, np.float32)
    with pytest.raises(pygpu.KernelError, match="argument 'x' .*out of bounds"):
        k[1, 64](pygpu.In(x), pygpu.Out(y), np.int32(32))
    k[1, 64](pygpu.In(x), pygpu.Out(y), np.int32(31))
    np.testing.assert_array_equal(y, x)


@needs_clang
def test_environment_turns_checking_on_and_the_argument_wins(monkeypatch):
    monkeypatch.setenv("PYGPU_SIM_CHECK", "1")
    on = pygpu.RawModule(BUGS)
    off = pygpu.RawModule(BUGS, check=False)
    assert on.check and not off.check
    with pytest.raises(pygpu.KernelError, match="out of bounds"):
        on.get_function("off_by_one")[1, 128](pygpu.zeros(100, np.float32), np.int32(100))
    # unchecked, the write past the end lands in the allocation's slack
    off.get_function("off_by_one")[1, 128](pygpu.zeros(128, np.float32), np.int32(100))
    monkeypatch.setenv("PYGPU_SIM_CHECK", "maybe")
    with pytest.raises(ValueError, match="PYGPU_SIM_CHECK"):
        pygpu.RawModule(BUGS)


def test_checking_without_clang_says_what_to_install(monkeypatch):
    real = shutil.which
    monkeypatch.setattr(rawkernel.shutil, "which",
                        lambda name: None if "clang" in name else real(name))
    monkeypatch.setenv("CXX", "g++")
    with pytest.raises(RuntimeError, match="clang"):
        pygpu.RawModule(BUGS, check=True)


def test_compile_errors_keep_the_users_line_numbers_in_both_modes():
    src = 'extern "C" __global__ void k(float *x)\n{\n    __shared__ float s[4];\n' \
          '    x[0] = nothing_here;\n}\n'
    for check in ([False, True] if HAVE_CLANG else [False]):
        with pytest.raises(pygpu.CompileError) as info:
            pygpu.RawKernel(src, "k", check=check)
        assert "<kernel source>:4" in info.value.log, info.value.log


def test_ctrl_c_stops_a_kernel_thread_that_never_returns(tmp_path):
    """A thread of a user's kernel that loops for ever (as on a GPU) is
    stopped by Ctrl-C: KeyboardInterrupt, and the process goes on."""
    import signal
    import subprocess
    import sys
    import textwrap
    script = tmp_path / "spin.py"
    script.write_text(textwrap.dedent('''
        import sys, numpy as np, pygpu
        k = pygpu.RawKernel(r"""
        extern "C" __global__ void spin(volatile int *flag, int *out) {
            if (threadIdx.x == 3) { while (*flag == 0) { } }
            out[threadIdx.x] = 1;
        }""", "spin")
        flag, out = pygpu.zeros(1, np.int32), pygpu.zeros(32, np.int32)
        print("ready", flush=True)
        try:
            k[1, 32](flag, out)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        flag[0] = 1
        k[1, 32](flag, out)
        print("after", int(out.copy_to_host().sum()), flush=True)
    '''))
    import os
    root = str(ROOT)
    env = dict(os.environ, PYGPU_SIMULATOR="1",
               PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                         env=env)
    try:
        assert p.stdout.readline().strip() == "ready"
        import time
        time.sleep(1.0)
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=60)
    finally:
        p.kill()
    assert "interrupted" in out and "after 32" in out, out
    assert p.returncode == 0
