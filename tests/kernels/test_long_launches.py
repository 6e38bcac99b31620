"""No launch is hopeless or unstoppable: a grid far larger than the work
launches only the blocks that have work (the same answer, at once), matmul's
'auto' picks a kernel that fits the shape, and on the simulator Ctrl-C stops a
long launch between blocks with KeyboardInterrupt."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from conftest import ON_SIMULATOR, matmul_error, random_array

import pygpu
from pygpu import cuda

GIANT_GRIDS = [2**31 - 1, (2**31 - 1, 65535), (2**31 - 1, 65535, 65535), (7, 65535, 65535)]


def run_child(code, timeout=120):
    """Runs code in a fresh interpreter on the current backend; a hang fails."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=timeout)


PRELUDE = f"""
    import numpy as np, pygpu
    from pygpu import cuda, kernels
    rng = np.random.default_rng(7)
    GRIDS = {GIANT_GRIDS!r}
"""


@pytest.mark.parametrize("blocks", ["1024", "(32, 32)", "(8, 8, 16)", "1"])
def test_giant_grids_of_elementwise_kernels_give_numpys_answer(blocks):
    r = run_child(PRELUDE + f"""
    block = {blocks}
    for grid in GRIDS:
        a, b = rng.standard_normal((5, 7)), rng.standard_normal((5, 7))
        da, db, out = cuda.to_device(a), cuda.to_device(b), pygpu.zeros((5, 7))
        kernels.add[grid, block](da, db, out)
        assert (out.copy_to_host() == a + b).all(), grid
        kernels.add[grid, block](da, 2.5, out)
        assert (out.copy_to_host() == a + 2.5).all(), grid
        kernels.add_one[grid, block](da)
        assert (da.copy_to_host() == a + 1).all(), grid
    print("ok")
    """)
    assert r.returncode == 0 and r.stdout.split() == ["ok"], r.stderr[-3000:]


@pytest.mark.parametrize("kernel, blocks", [
    ("matmul_naive", ["(16, 16)", "(32, 8, 4)", "64", "1"]),
    ("matmul_shared", ["(16, 16)", "(32, 32)"]),
    ("matmul_tiled", ["256"]),
])
def test_giant_grids_of_matmul_kernels_give_numpys_answer(kernel, blocks):
    r = run_child(PRELUDE + f"""
    for block in [{", ".join(blocks)}]:
        for grid in GRIDS:
            for m, k, n in [(37, 19, 23), (1, 300, 1), (130, 5, 260)]:
                A, B = rng.standard_normal((m, k)), rng.standard_normal((k, n))
                C = pygpu.zeros((m, n))
                kernels.{kernel}[grid, block](cuda.to_device(A), cuda.to_device(B), C)
                err = np.linalg.norm(C.copy_to_host() - A @ B) / (
                    np.linalg.norm(A) * np.linalg.norm(B))
                assert err < 1e-14, (grid, block, m, k, n, err)
    print("ok")
    """)
    assert r.returncode == 0 and r.stdout.split() == ["ok"], r.stderr[-3000:]


def test_clamped_grid_computes_every_element_as_the_full_grid_does(rng):
    # the clamp changes which thread computes an element, never how: bit for bit
    A, B = random_array(rng, (70, 90), np.float32), random_array(rng, (90, 50), np.float32)
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    small, giant = pygpu.zeros((70, 50), np.float32), pygpu.zeros((70, 50), np.float32)
    for name, block, grid in [("matmul_naive", (16, 16), (4, 5)),
                              ("matmul_shared", (16, 16), (2, 3)),
                              ("matmul_tiled", 256, 1)]:
        getattr(pygpu.kernels, name)[grid, block](dA, dB, small)
        getattr(pygpu.kernels, name)[(2**31 - 1, 65535), block](dA, dB, giant)
        np.testing.assert_array_equal(giant.copy_to_host(), small.copy_to_host())


def test_auto_matmul_of_a_long_inner_product_matches_numpy(rng):
    # 1 x 2^22 @ 2^22 x 1: one 128 x 128 tile would serialize the whole k loop
    k = 1 << 22
    A, B = rng.standard_normal((1, k)), rng.standard_normal((k, 1))
    C = pygpu.matmul(cuda.to_device(A), cuda.to_device(B))
    assert C.shape == (1, 1)
    assert matmul_error(C.copy_to_host(), A, B) < 1e-13


@pytest.mark.skipif(not ON_SIMULATOR and pygpu.blas.cublas_version() is not None,
                    reason="auto runs in cuBLAS here, not in one of pygpu's kernels")
@pytest.mark.parametrize("shape, method", [((1, 4096, 3), "naive"), ((300, 64, 5), "naive"),
                                           ((200, 64, 256), "tiled"),
                                           ((128, 32, 128), "tiled")])
def test_auto_matmul_picks_by_shape(rng, shape, method):
    # the same kernel gives the same bits: auto's answer is that of its choice
    m, k, n = shape
    A, B = random_array(rng, (m, k), np.float32), random_array(rng, (k, n), np.float32)
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    auto = pygpu.matmul(dA, dB).copy_to_host()
    chosen = pygpu.matmul(dA, dB, method=method).copy_to_host()
    np.testing.assert_array_equal(auto, chosen)
    assert matmul_error(auto, A, B) < 1e-6


INTERRUPTED = """
    import signal, sys
    import numpy as np, pygpu
    from pygpu import cuda, kernels
    kind, handler = sys.argv[1], sys.argv[2]
    n = 2048 if kind == "tiled" else 1024
    A = cuda.to_device(np.random.default_rng(1).standard_normal((n, n)))
    C = pygpu.zeros((n, n))
    d = cuda.to_device(np.arange(4.0))
    seen = []
    if handler == "returns":
        # a handler that does not raise: the launch goes on where it stopped
        signal.signal(signal.SIGINT,
                      lambda *a: seen.append(bool((C.copy_to_host() == 0).any())))
    print("ready", flush=True)
    try:
        if kind == "tiled":
            kernels.matmul_tiled[1, 256](A, A, C)  # one block: stops at a barrier
        else:
            kernels.matmul_naive[(64, 64), (16, 16)](A, A, C)
        h = A.copy_to_host()
        print("finished", seen, np.abs(C.copy_to_host() - h @ h).max() < 1e-9)
    except KeyboardInterrupt:
        print("interrupted", bool((C.copy_to_host() == 0).any()))
    kernels.add_one[1, 4](d)  # the process goes on working
    print((d.copy_to_host() == np.arange(4.0) + 1).all())
"""


def interrupt_child(kind, handler):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(INTERRUPTED), kind, handler],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
    finally:
        p.kill()
    return p.returncode, out.split(), err


@pytest.mark.simulator
@pytest.mark.parametrize("kind", ["naive", "tiled"])
def test_ctrl_c_stops_a_long_simulated_launch(kind):
    rc, out, err = interrupt_child(kind, "default")
    # stopped part way (some of C never written), and later launches work
    assert rc == 0 and out == ["interrupted", "True", "True"], err[-3000:]


@pytest.mark.simulator
@pytest.mark.parametrize("kind", ["naive", "tiled"])
def test_a_sigint_handler_that_returns_lets_the_launch_finish(kind):
    rc, out, err = interrupt_child(kind, "returns")
    # the handler ran during the launch (C not yet whole), then it finished right
    assert rc == 0 and out == ["finished", "[True]", "True", "True"], err[-3000:]
