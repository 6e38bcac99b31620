"""Runs the whole suite on a GPU when there is one, else on the simulator.

PYGPU_SIMULATOR is read before pygpu's first operation, so it is set here,
before any test touches a device. On the simulator two devices are simulated
(PYGPU_SIM_DEVICES=2), so the multi-device checks run on CI too.
"""

import gc
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import pygpu

ROOT = Path(__file__).resolve().parent.parent
# csrc/'s folders whose headers the C files include by bare name, and the device
# headers' folder: setup.py's INCLUDE_DIRS
CSRC_INCLUDES = [*(ROOT / "csrc" / d for d in ("base", "runtime", "simulator", "kernels")),
                 ROOT / "pygpu" / "include"]

GPU_PRESENT = pygpu._core.has_cuda() and os.environ.get("PYGPU_SIMULATOR", "") in ("", "0") \
    and pygpu.cuda.is_available()
if not GPU_PRESENT:
    os.environ["PYGPU_SIMULATOR"] = "1"
    os.environ.setdefault("PYGPU_SIM_DEVICES", "2")

ON_SIMULATOR = pygpu.cuda.is_simulator()
# The simulator runs threads and blocks in a shuffled order, so that a kernel
# whose result hangs on the order fails here: a fresh seed each run unless
# PYGPU_SIM_SCHEDULE gives one (the header says which, to replay a failure).
# Under pytest-xdist (-n) the workers take the seed of the main process, whose
# header is the one printed (pytest_configure_node, pytest_configure).
SCHEDULE_SEED = int(os.environ.get("PYGPU_SIM_SCHEDULE", "") or
                    np.random.SeedSequence().entropy % 2**32) \
    if os.environ.get("PYGPU_SIM_SCHEDULE", "") not in ("ordered", "shuffle") else None
if SCHEDULE_SEED is not None:
    pygpu.cuda.simulator_schedule(SCHEDULE_SEED)
POOL = os.environ.get("PYGPU_NO_POOL", "") in ("", "0")
needs_pool = pytest.mark.skipif(not POOL, reason="PYGPU_NO_POOL=1 turns the memory pool off")


# Tests interrupt child processes with SIGINT (Ctrl-C) and wait for the
# KeyboardInterrupt. A child inherits an ignored SIGINT (a background job of a
# non-interactive shell starts with one), and pygpu leaves an ignored SIGINT
# ignored, so those tests would wait for ever: the suite's process handles
# SIGINT as Python does by default, which its children then start with.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN \
        and threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """pytest-xdist's `-n auto`: on the simulator a process per CPU this one
    may run on (the kernels' compiles are half the time); on a GPU one, as the
    processes would share the device, whose memory some tests fill (and where
    kernels compile in seconds)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist's own setting
    return len(os.sched_getaffinity(0)) if ON_SIMULATOR else 0


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist, in the main process: each worker gets its seed."""
    node.workerinput["pygpu_sim_schedule"] = SCHEDULE_SEED


def pytest_configure(config):
    """In a pytest-xdist worker: the main process's schedule seed."""
    global SCHEDULE_SEED
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and "pygpu_sim_schedule" in workerinput:
        SCHEDULE_SEED = workerinput["pygpu_sim_schedule"]
        pygpu.cuda.simulator_schedule(SCHEDULE_SEED)


def pytest_report_header(config):
    dev = pygpu.cuda.get_current_device()
    kind = "simulator" if ON_SIMULATOR else "GPU"
    schedule = (f", schedule: shuffled, PYGPU_SIM_SCHEDULE={SCHEDULE_SEED} replays it"
                if ON_SIMULATOR and SCHEDULE_SEED is not None else "")
    return (f"pygpu backend: {kind}, device 0: {dev.name}, {len(pygpu.cuda.gpus)} "
            f"device(s){schedule}")


def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="needs a real NVIDIA GPU; running on the simulator")
    skip_sim = pytest.mark.skip(reason="checks simulator behaviour; running on a GPU")
    for item in items:
        if ON_SIMULATOR and "gpu" in item.keywords:
            item.add_marker(skip_gpu)
        if not ON_SIMULATOR and "simulator" in item.keywords:
            item.add_marker(skip_sim)


@pytest.fixture
def own_kernel_cache(tmp_path, monkeypatch):
    """A kernel cache of the test's own (PYGPU_CACHE_DIR), so that each test
    compiles what it launches; on the simulator, skips where no host C++
    compiler is there to compile it."""
    if ON_SIMULATOR and shutil.which("g++") is None and shutil.which("clang++") is None:
        pytest.skip("the simulator compiles kernels with g++ or clang++; neither is here")
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(tmp_path))


@pytest.fixture
def no_stray_frees():
    """For a test that compares cuda.memory_allocated() exactly: earlier
    tests' garbage is collected first, and the collector stays off until the
    test ends, so that it frees nothing of theirs between two readings."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.fixture
def rng(request):
    """A generator seeded from the test's name: random, but reproducible."""
    seed = sum(ord(c) * (i + 1) for i, c in enumerate(request.node.nodeid)) % 2**32
    return np.random.default_rng(seed)


def random_array(rng, shape, dtype):
    """Random data of a dtype, never all zeros."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def rel_error(got, ref):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    denom = np.linalg.norm(ref)
    return np.linalg.norm(got - ref) / (denom if denom > 0 else 1.0)


def matmul_error(got, A, B):
    """||got - A @ B|| / (||A|| ||B||): the error bound a dot product has,
    even where cancellation makes the product itself small."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    ref = A @ B
    scale = np.linalg.norm(A) * np.linalg.norm(B)
    return np.linalg.norm(np.asarray(got, dtype=np.float64) - ref) / (scale or 1.0)


_WITH_NVRTC = """
import sys
from pygpu import rawkernel
try:
    rawkernel.nvrtc_version()
except RuntimeError as exc:
    print(exc)
    sys.exit(3)
"""


def run_with_nvrtc(script, *args):
    """Runs `script` (Python) in a process of its own where the simulator does
    not stand in for NVRTC (no PYGPU_SIM* settings), after a check that NVRTC
    loads (else the test is skipped with the reason); its stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYGPU_SIM")}
    r = subprocess.run([sys.executable, "-c", _WITH_NVRTC + script, *args], env=env,
                       capture_output=True, text=True)
    if r.returncode == 3:
        pytest.skip(r.stdout.strip())
    assert r.returncode == 0, r.stderr[-4000:]
    return r.stdout
