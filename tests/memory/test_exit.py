"""What pygpu holds when a program ends: nothing of its own.

pygpu._release_all (run at exit by atexit; callable at any time) gives back
what pygpu keeps for reuse: its caches' device memory, the cuFFT plans and
cuSOLVER and cuBLAS handles, the staging buffers, the pool's cached blocks.
Arrays a program still references when the interpreter finalizes (its
globals) are the program's own and are not freed then (as a C program's
unfreed memory; freeing during finalization raced daemon threads on a GPU).
Each program here runs in a child process; on the simulator,
PYGPU_SIM_LEAKS=1 makes the child report at its very end (after the
interpreter finalized) the device and page-locked allocations still held,
as compute-sanitizer --leak-check full does on a GPU, and the test reads it.
On a GPU the same programs must end with their exit status, no crash.
"""

import os
import re
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ON_SIMULATOR, POOL, ROOT

LEAKS = re.compile(r"pygpu simulator: (\d+) device allocations \((\d+) bytes\) and "
                   r"(\d+) page-locked allocations \((\d+) bytes\) held at exit")

# The paths of tools/sanitize_kernels.py, in small: ufuncs in each layout,
# reductions (a split one with partials, a scan), indexing by masks of one
# tile and of many, nonzero (its cached shape), sort and argsort, random
# numbers (a Generator and the global one), FFT, linalg and a matrix
# product (NVIDIA's libraries on a GPU), a RawModule with a __device__
# variable, @cuda.jit, a staged copy (the page-locked ring), pinned memory.
WORK = """
import gc, sys
import numpy as np
import pygpu
from pygpu import cuda

pygpu._core._host_arrays(stage_always=True)  # the staged path on the simulator too
rng = np.random.default_rng(0)


def used():
    free, total = pygpu.Device(0).mem_info()
    return total - free


MODULE = pygpu.RawModule(r'''
__device__ int counter;
extern "C" __global__ void count(const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0) atomicAdd(&counter, 1);
}''')


@cuda.jit
def twice(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = 2 * a[i]


def work():
    x = rng.standard_normal(5000).astype(np.float32)
    d = pygpu.asarray(x)
    for got, want in ((np.sin(d), np.sin(x)), (d / 2, x / 2), (d[::-3] < d[0], x[::-3] < x[0]),
                      (np.maximum(d[::2], d[0]), np.maximum(x[::2], x[0])),
                      (d.sum(), x.sum()), (d.argmax(), x.argmax()),
                      (d.cumsum(), np.cumsum(x))):
        assert np.allclose(got.copy_to_host(), want, rtol=1e-4, atol=1e-2)
    w = rng.standard_normal((3, 70001)).astype(np.float32)
    dw = pygpu.asarray(w)
    assert np.allclose(dw.sum(axis=1).copy_to_host(), w.sum(axis=1), rtol=1e-3, atol=1e-2)
    assert np.allclose(dw.var(axis=1).copy_to_host(), w.var(axis=1), rtol=1e-3)
    assert np.array_equal(d[d > 0.5].copy_to_host(), x[x > 0.5])
    assert np.array_equal(dw[dw > 1].copy_to_host(), w[w > 1])
    assert np.array_equal(pygpu.nonzero(dw > 2)[1].copy_to_host(), np.nonzero(w > 2)[1])
    assert np.array_equal(pygpu.sort(d).copy_to_host(), np.sort(x))
    assert np.array_equal(pygpu.argsort(d, stable=True).copy_to_host(),
                          np.argsort(x, kind="stable"))
    g = pygpu.random.default_rng(7)
    assert g.random(1001).copy_to_host().max() < 1
    assert np.isfinite(pygpu.random.randn(100).copy_to_host()).all()
    z = rng.standard_normal(1000)
    assert np.allclose(pygpu.fft.rfft(pygpu.asarray(z)).copy_to_host(), np.fft.rfft(z))
    A = rng.standard_normal((33, 33)) + 33 * np.eye(33)
    dA = pygpu.asarray(A)
    assert np.allclose(pygpu.linalg.solve(dA, dA[:, 0]).copy_to_host(),
                       np.linalg.solve(A, A[:, 0]))
    assert np.allclose((dA @ dA).copy_to_host(), A @ A)
    MODULE.get_global("counter", np.int32)[...] = 0
    MODULE.get_function("count")[(20,), (256,)](d, np.int32(5000))
    assert int(MODULE.get_global("counter", np.int32).copy_to_host()[0]) == (x > 0).sum()
    out = pygpu.empty(5000, np.float32)
    twice[20, 256](d, out)
    assert np.array_equal(out.copy_to_host(), 2 * x)
    big = np.arange(3 << 20, dtype=np.float32)  # past the staging threshold
    assert np.array_equal(pygpu.asarray(big).copy_to_host(), big)
    p = cuda.pinned_array((1000,), np.float32)
    p[:] = 1
    assert pygpu.asarray(p).sum().copy_to_host() == 1000
"""


def run(tmp_path, code, *args):
    """(exit status, stdout, stderr, the simulator's leak report as four ints
    or None) of the program `code` (a file: @cuda.jit reads its source) in a
    child process."""
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(code))
    env = dict(os.environ, PYGPU_SIM_LEAKS="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                       env=env, timeout=600, cwd=ROOT)
    m = LEAKS.search(p.stderr)
    return p.returncode, p.stdout, p.stderr, m and tuple(map(int, m.groups()))


def no_crash(rc, err, want):
    assert rc == want, err[-3000:]
    for sign in ("Fatal Python error", "Segmentation fault", "Aborted", "core dumped"):
        assert sign not in err, err[-3000:]


def test_release_all_gives_everything_back_and_pygpu_works_on(tmp_path):
    code = WORK + """
work()
gc.collect()
pygpu._release_all()
print("after", used(), pygpu.get_memory_pool().total_bytes())
held = pygpu.zeros(1000)  # a global: freed at exit
work()  # every cache, plan and handle made again
pygpu._release_all()
pygpu._release_all()  # twice: nothing left to give
print("held", used(), pygpu.get_memory_pool().total_bytes())
del held
pygpu._release_all()
"""
    rc, out, err, leaks = run(tmp_path, code)
    no_crash(rc, err, 0)
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    if ON_SIMULATOR:
        assert lines["after"] == "0 0", out
        # 8000 bytes, in the pool's 512-byte steps (exact without the pool)
        assert lines["held"] == ("8192 8192" if POOL else "8000 8192"), out
        assert leaks == (0, 0, 0, 0), err[-3000:]
    else:
        assert lines["after"].split()[1] == "0", out


# A program that works in functions and ends in each way: nothing is held at
# its end, pygpu's caches and handles included (a daemon thread's own array
# aside, which the interpreter never deallocates).
ENDINGS = WORK + """
import threading

work()
how = sys.argv[1]
if how == "thread":
    # a thread that never ends, working with the device as the program ends
    spin = "mine = pygpu.ones(100)\\nwhile True:\\n    (mine + 1).sum()\\n"
    threading.Thread(target=exec, args=(spin, {"pygpu": pygpu}), daemon=True).start()
if how == "exit":
    sys.exit(3)
if how == "raise":
    raise RuntimeError("uncaught")
print("end")
"""


@pytest.mark.parametrize("how, status", [("normal", 0), ("exit", 3), ("raise", 1),
                                         ("thread", 0)])
def test_nothing_of_pygpus_is_held_as_the_program_ends(tmp_path, how, status):
    rc, out, err, leaks = run(tmp_path, ENDINGS, how)
    no_crash(rc, err, status)
    if how == "raise":
        assert "RuntimeError: uncaught" in err
    if ON_SIMULATOR:
        assert leaks is not None, err[-3000:]
        if how == "thread":
            # the thread's own array (and what its loop had in hand) alone:
            # this also shows that the report sees what is held
            assert 1 <= leaks[0] <= 3 and leaks[2:] == (0, 0), err[-3000:]
        else:
            assert leaks == (0, 0, 0, 0), err[-3000:]


def test_a_programs_own_globals_are_its_own(tmp_path):
    """An array in a global at exit is the program's: reported held, as a C
    program's unfreed allocation is; pygpu's own caches are not."""
    code = WORK + """
work()
kept = pygpu.zeros(1000, np.float32)
"""
    rc, out, err, leaks = run(tmp_path, code)
    no_crash(rc, err, 0)
    if ON_SIMULATOR:
        assert leaks is not None and leaks[0] == 1 and leaks[2:] == (0, 0), err[-3000:]


def test_a_program_that_never_used_a_device_ends_quietly(tmp_path):
    rc, out, err, leaks = run(tmp_path, "import pygpu; pygpu._release_all(); print('ok')")
    no_crash(rc, err, 0)
    assert out == "ok\n" and leaks is None  # nothing allocated: nothing to report
