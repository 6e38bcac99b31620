"""Reliability: faults, fork, lifetimes, load and fuzzing. Select with -m reliability."""

import gc
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from conftest import ON_SIMULATOR, ROOT

import pygpu
from pygpu import cuda

pytestmark = pytest.mark.reliability


def run_python(code, timeout=300):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ))


# ---- faults ---------------------------------------------------------------------------

@pytest.mark.gpu
def test_a_faulting_kernel_raises_and_later_calls_explain():
    r = run_python("""
        import numpy as np, pygpu
        from pygpu import cuda
        bad = pygpu.RawKernel('extern "C" __global__ void k(float *p) { p[1 << 28] = 1; }', "k")
        a = pygpu.zeros(4, dtype=np.float32)
        bad[1, 1](np.uint64(16))  # an address nobody allocated
        try:
            cuda.synchronize()
        except pygpu.CudaError as e:
            print("first:", e.name)
        try:
            pygpu.zeros(3)
        except pygpu.CudaError as e:
            print("later:", e)
        try:
            a.copy_to_host()
        except pygpu.CudaError as e:
            print("copy:", "unusable" in str(e))
        del a
    """)
    assert r.returncode == 0, r.stderr
    assert "first: cudaErrorIllegalAddress" in r.stdout
    assert "later: the CUDA context is unusable after cudaErrorIllegalAddress" in r.stdout
    assert "restart the process" in r.stdout
    assert "copy: True" in r.stdout
    assert "Traceback" not in r.stderr and "Warning" not in r.stderr


@pytest.mark.gpu
def test_a_child_forked_after_cuda_gets_a_clear_error():
    r = run_python("""
        import os, pygpu
        a = pygpu.zeros(4)  # CUDA initialized in the parent
        pid = os.fork()
        if pid == 0:
            try:
                pygpu.zeros(3)
                os._exit(3)
            except pygpu.CudaError as e:
                print("child:", e, flush=True)
                os._exit(0 if "fork()" in str(e) and "spawn" in str(e) else 4)
        _, status = os.waitpid(pid, 0)
        print("parent still works:", pygpu.add_one(a).copy_to_host().tolist())
        print("child exit", os.waitstatus_to_exitcode(status))
    """)
    assert r.returncode == 0, r.stderr
    assert "child exit 0" in r.stdout
    assert "parent still works: [1.0, 1.0, 1.0, 1.0]" in r.stdout


@pytest.mark.simulator
def test_a_forked_child_copies_with_fresh_copy_workers_on_the_simulator():
    # The simulator survives fork(); the host-copy worker threads do not, and the
    # one fork handler restarts them in the child (a large copy would hang otherwise).
    r = run_python("""
        import os, numpy as np, pygpu
        from pygpu import cuda
        big = np.arange(1 << 20, dtype=np.float64)          # 8 MiB: a threaded copy
        assert (cuda.to_device(big).copy_to_host() == big).all()
        pid = os.fork()
        if pid == 0:
            back = cuda.to_device(big).copy_to_host()
            os._exit(0 if (back == big).all() else 5)
        _, status = os.waitpid(pid, 0)
        print("child exit", os.waitstatus_to_exitcode(status))
    """, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "child exit 0" in r.stdout


# ---- lifetimes -----------------------------------------------------------------------

def test_arrays_alive_at_exit_end_cleanly():
    r = run_python("""
        import numpy as np, pygpu
        from pygpu import cuda
        s = cuda.stream()
        keep = [pygpu.zeros((100, 100)), cuda.to_device(np.arange(10.0))[::2]]
        with s:
            busy = pygpu.full(1 << 20, 1.0)
            pygpu.add_one(busy)          # still queued when the interpreter ends
        pinned = cuda.pinned_array(1000)
        ev = cuda.event(); ev.record(s)
        cycle = []; cycle.append(cycle); cycle.append(pygpu.zeros(5))
        print("done")
    """)
    assert r.returncode == 0
    assert r.stdout.strip() == "done"
    assert r.stderr == ""


def test_arrays_in_reference_cycles_are_freed():
    gc.collect()
    before = cuda.memory_allocated()

    class Node:
        pass

    for _ in range(100):
        n = Node()
        n.me = n
        n.data = pygpu.zeros(1000)
        n.view = n.data[::3]
    del n
    gc.collect()
    assert cuda.memory_allocated() == before


def test_arrays_freed_from_another_thread():
    gc.collect()
    before = cuda.memory_allocated()
    arrays = [pygpu.full(500, float(i)) for i in range(200)]
    views = [a[1:] for a in arrays[:50]]

    def drop():
        arrays.clear()
        views.clear()

    t = threading.Thread(target=drop)
    t.start()
    t.join()
    gc.collect()
    assert cuda.memory_allocated() == before


def test_arrays_freed_while_a_kernel_uses_them_are_not_reused_too_soon():
    n = 1 << 20
    s1, s2 = cuda.stream(), cuda.stream()
    for _ in range(5):
        with s1:
            a = pygpu.zeros(n, dtype=np.float32)
            # one thread walks the whole array: the kernel outlives the del below
            pygpu.kernels.add_one[1, 1, s1](a)
        del a
        with s2:
            b = pygpu.full(n, 7.0, dtype=np.float32)  # the same size: a's block, if safe
        s1.synchronize()
        s2.synchronize()
        host = b.copy_to_host()
        assert (host == 7.0).all(), "a kernel still running wrote into a reused block"


# ---- load ------------------------------------------------------------------------------

def test_a_million_allocations_and_a_hundred_thousand_launches_return_to_baseline():
    dt = np.dtype(np.float32)
    gc.collect()
    mem0, ref0 = cuda.memory_allocated(), sys.getrefcount(dt)
    empty = pygpu.empty
    for _ in range(1_000_000):
        empty(256, dt)
    d = pygpu.zeros(32, dtype=np.float32)
    k = pygpu.kernels.add_one[1, 32]
    for _ in range(100_000):
        k(d)
    assert (d.copy_to_host() == 100_000).all()
    del d, k
    gc.collect()
    assert cuda.memory_allocated() == mem0
    assert sys.getrefcount(dt) == ref0


def test_sixteen_threads_mixing_copies_launches_and_frees():
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        s = cuda.stream() if seed % 2 else None
        try:
            for _ in range(150):
                n = int(rng.integers(1, 5000))
                x = rng.standard_normal(n).astype(np.float32)
                if s is not None:
                    with s:
                        d = cuda.to_device(x)
                        pygpu.add_one(d)
                        got = d.copy_to_host()
                else:
                    d = cuda.to_device(x)
                    pygpu.add_one(d)
                    got = d.copy_to_host()
                np.testing.assert_allclose(got, x + 1, rtol=1e-6)
                e = (d + d)[::2]
                np.testing.assert_allclose(e.copy_to_host(), 2 * (x + 1)[::2], rtol=1e-6)
                del d, e
        except Exception as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


# ---- sanitizers -------------------------------------------------------------------------

@pytest.mark.simulator
def test_simulator_under_address_and_undefined_behaviour_sanitizers():
    """tools/asan.sh builds a sanitized simulator and runs tests under it; a
    report fails the run. (tools/valgrind.sh and, on a GPU, tools/sanitize.sh
    do the same with valgrind and compute-sanitizer; docs/RELIABILITY.md.)"""
    import shutil

    root = str(ROOT)
    libasan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                             text=True).stdout.strip() if shutil.which("gcc") else ""
    if not libasan or not os.path.isabs(libasan) or not shutil.which("g++"):
        pytest.skip("no gcc with AddressSanitizer here")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYGPU_")}
    env["PYTHON"] = sys.executable  # the interpreter running these tests, not PATH's
    tests = ["tests/kernels/test_kernels.py", "tests/memory/test_copies.py",
             "tests/arrays/test_arrays.py", "tests/simulator/test_simulator.py"]
    r = subprocess.run(["bash", os.path.join(root, "tools", "asan.sh"), *tests],
                       capture_output=True, text=True, timeout=900, env=env, cwd=root)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert "passed" in r.stdout and "runtime error" not in r.stdout + r.stderr


# ---- fuzzing with hypothesis -----------------------------------------------------------

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64",
          "complex64"]

shapes = st.lists(st.integers(0, 6), min_size=0, max_size=4).map(tuple)
index_item = st.one_of(
    st.integers(-8, 8),
    st.builds(slice, st.one_of(st.none(), st.integers(-8, 8)),
              st.one_of(st.none(), st.integers(-8, 8)),
              st.one_of(st.none(), st.integers(-3, 3).filter(lambda v: v != 0))),
    st.just(None), st.just(Ellipsis))
keys = st.one_of(index_item, st.lists(index_item, max_size=5).map(tuple))


def host_data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 10).astype(dtype)


@FUZZ
@given(shape=shapes, dtype=st.sampled_from(DTYPES), key=keys)
def test_fuzz_indexing_matches_numpy(shape, dtype, key):
    x = host_data(shape, dtype)
    d = cuda.to_device(x)
    try:
        expected = x[key]
    except (IndexError, TypeError, ValueError) as exc:
        expected_exc = (IndexError, ValueError) if isinstance(exc, ValueError) else type(exc)
        with pytest.raises(expected_exc):
            d[key]
        return
    if key.__class__ is tuple and key.count(Ellipsis) > 1:
        return
    v = d[key]
    np.testing.assert_array_equal(v.copy_to_host(), np.asarray(expected))


@FUZZ
@given(shape=shapes, new=st.lists(st.integers(-1, 8), max_size=4).map(tuple),
       order=st.sampled_from("CF"), transpose=st.booleans())
def test_fuzz_reshape_matches_numpy(shape, new, order, transpose):
    x = host_data(shape, "float32")
    d = cuda.to_device(x)
    if transpose:
        x, d = x.T, d.T
    try:
        expected = x.reshape(new, order=order)
    except ValueError:
        with pytest.raises(ValueError):
            d.reshape(new, order=order)
        return
    np.testing.assert_array_equal(d.reshape(new, order=order).copy_to_host(), expected)


dims = st.one_of(st.integers(-2, 70000),
                 st.lists(st.integers(-2, 70000), min_size=1, max_size=4).map(tuple),
                 st.sampled_from([2**31, 2**40, 1.5, "x", None, True]))


@FUZZ
@given(grid=dims, block=dims, n=st.integers(0, 300))
def test_fuzz_launch_configurations_raise_or_compute_correctly(grid, block, n):
    x = host_data(n, "float32")
    d = cuda.to_device(x)
    try:
        launch = pygpu.kernels.add_one[grid, block]
    except (TypeError, ValueError):
        return
    threads = np.prod(launch.block)
    blocks = np.prod(launch.grid)
    if ON_SIMULATOR and threads * blocks > 1 << 22:
        return  # correct, but slow to simulate thread by thread
    launch(d)
    np.testing.assert_array_equal(d.copy_to_host(), x + 1)


args_pool = st.sampled_from(["f32", "f64", "i32", "f32_other_shape", "f32_strided", "host",
                             "scalar_int", "scalar_float", "none", "str"])


def make_arg(kind):
    base = {"f32": lambda: pygpu.full((4, 5), 1.0, dtype=np.float32),
            "f64": lambda: pygpu.full((4, 5), 1.0),
            "i32": lambda: pygpu.full((4, 5), 1, dtype=np.int32),
            "f32_other_shape": lambda: pygpu.full((5, 4), 1.0, dtype=np.float32),
            "f32_strided": lambda: pygpu.full((4, 10), 1.0, dtype=np.float32)[:, ::2],
            "host": lambda: np.ones((4, 5), np.float32),
            "scalar_int": lambda: 3, "scalar_float": lambda: 2.5,
            "none": lambda: None, "str": lambda: "a"}
    return base[kind]()


@FUZZ
@given(kinds=st.lists(args_pool, min_size=0, max_size=4),
       kernel=st.sampled_from(["add", "add_one", "matmul_naive", "matmul_shared"]))
def test_fuzz_kernel_arguments_raise_only_python_errors(kinds, kernel):
    args = [make_arg(k) for k in kinds]
    block = (16, 16) if kernel.startswith("matmul") else 32
    try:
        getattr(pygpu.kernels, kernel)[2, block](*args)
    except (TypeError, ValueError):
        return
    if kernel == "add":
        a, b, out = args
        expected = a.copy_to_host() + (b.copy_to_host() if isinstance(b, pygpu.DeviceArray)
                                       else b)
        np.testing.assert_allclose(out.copy_to_host(), expected)
    elif kernel == "add_one":
        np.testing.assert_array_equal(args[0].copy_to_host(), 2)
    else:
        A, B, C = (x.copy_to_host() for x in args)
        np.testing.assert_allclose(C, A @ B, rtol=1e-6)


@FUZZ
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(DTYPES), data=st.data())
def test_fuzz_strided_copies_both_ways(shape, dtype, data):
    x = host_data(shape, dtype, seed=1)
    sl = tuple(slice(data.draw(st.integers(0, s - 1)), None,
                     data.draw(st.sampled_from([1, 2, -1, -2]))) for s in shape)
    d = cuda.to_device(x)
    np.testing.assert_array_equal(d[sl].copy_to_host(), x[sl])
    y = host_data(d[sl].shape, dtype, seed=2)
    d[sl].copy_to_device(y.T.copy().T if y.ndim > 1 else y)
    x[sl] = y
    np.testing.assert_array_equal(d.copy_to_host(), x)
    out = np.zeros(tuple(s * 2 for s in d[sl].shape), dtype)[tuple(slice(None, None, 2)
                                                                   for _ in shape)]
    d[sl].copy_to_host(out=out)
    np.testing.assert_array_equal(out, x[sl])


@FUZZ
@given(shape=st.one_of(st.integers(-5, 2**64), st.lists(st.integers(-3, 2**63), max_size=4)
                       .map(tuple)), dtype=st.sampled_from(DTYPES + ["object", "U3"]))
def test_fuzz_shapes_and_dtypes_raise_or_allocate(shape, dtype):
    try:
        a = pygpu.empty(shape, dtype=dtype)
    except (TypeError, ValueError, MemoryError):
        return
    assert a.shape == (shape if isinstance(shape, tuple) else (shape,))
