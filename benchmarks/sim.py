"""The simulator rows (issue 13): CPU figures, measured on any machine.

- The tutorials' kernels (benchmarks/tutorial.py) written in CUDA C, run as
  pygpu.RawKernel on pygpu's simulator, unchecked (PYGPU_SIM_CHECK=0, the
  default; the checking mode's time beside it), against the same kernels
  written for Numba and run on Numba's CUDA simulator
  (NUMBA_ENABLE_CUDASIM=1).
- The first compile of a small kernel (a fresh PYGPU_CACHE_DIR) and its load
  from the disk cache, each in a fresh interpreter.
- pygpu's prebuilt kernels on the simulator at 128 x 128 (as
  docs/PERFORMANCE.md had them before issue 13).

Every side runs in a child process of its own, with its simulator forced
(PYGPU_SIMULATOR=1; NUMBA_ENABLE_CUDASIM=1 before numba is imported), so that
neither sees the other's imports or a GPU:

    python -m benchmarks.sim pygpu N      # JSON: ms per launch of each kernel
    python -m benchmarks.sim numba N
    python -m benchmarks.sim compile      # JSON: s to build a RawKernel
"""

import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ("vector_add", "add_one", "matmul_naive", "matmul_shared")
PREBUILT_SIDE = 128


def timed_ms(fn, sync, reps, budget_s, warmup=True):
    """(median ms of fn() + sync(), number of calls made): a warm-up call,
    then `reps` repeats, fewer once `budget_s` seconds are spent (at least one)."""
    if warmup:
        fn()
        sync()
    times = []
    start = time.perf_counter()
    while len(times) < reps and (not times or time.perf_counter() - start < budget_s):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), len(times) + warmup


def inputs(n):
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n), dtype=np.float32)
    B = rng.standard_normal((n, n), dtype=np.float32)
    return A, B


def check(name, calls, A, B, got, errors):
    """Note in errors if `got` is not what `calls` launches of kernel `name`
    ("checked name" too) give."""
    kernel = name.split()[-1]
    want = {"vector_add": A + B, "add_one": A + np.float32(calls)}.get(kernel)
    if want is None:
        want = A.astype(np.float64) @ B
    if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
        errors.append(f"{name}: wrong result")


def grids(n):
    """The tutorials' launches: (blocks, threads) for the vector of n * n and
    for the n x n matrices."""
    return ((n * n + 255) // 256, 256), (((n + 15) // 16, (n + 15) // 16), (16, 16))


# ---- the child processes ---------------------------------------------------------------

def worker_pygpu(n, reps, budget_s):
    import pygpu
    from pygpu import cuda

    from .tutorial import CUDA_SOURCE

    assert cuda.is_simulator(), "PYGPU_SIMULATOR=1 must be set"
    # unchecked (the default): the figures the target is about; the checking
    # mode (PYGPU_SIM_CHECK, every load and store checked) beside them
    module = pygpu.RawModule(CUDA_SOURCE, check=False)
    f = {name: module.get_function(name) for name in KERNELS}
    try:
        checked = pygpu.RawModule(CUDA_SOURCE, check=True)
        fc = {name: checked.get_function(name) for name in KERNELS}
    except Exception as exc:  # noqa: BLE001
        print(f"pygpu checked absent: {type(exc).__name__}: {exc}", file=sys.stderr)
        fc = None
    A, B = inputs(n)
    dA, dB, dC = cuda.to_device(A), cuda.to_device(B), pygpu.empty((n, n), np.float32)
    (vg, vb), (mg, mb) = grids(n)
    N, NN = np.int32(n), np.int32(n * n)
    sync = cuda.synchronize
    out, errors = {}, []
    a, b, c = dA.reshape(n * n), dB.reshape(n * n), dC.reshape(n * n)
    for mode, fs in (("", f), ("checked ", fc)):
        if fs is None:
            continue
        launches = {
            "vector_add": lambda fs=fs: fs["vector_add"][vg, vb](a, b, c, NN),
            "add_one": lambda fs=fs: fs["add_one"][mg, mb](dA, N, N),
            "matmul_naive": lambda fs=fs: fs["matmul_naive"][mg, mb](dA, dB, dC, N),
            "matmul_shared": lambda fs=fs: fs["matmul_shared"][mg, mb](dA, dB, dC, N),
        }
        for name, launch in launches.items():
            dA.copy_to_device(A)
            out[mode + name], calls = timed_ms(launch, sync, reps, budget_s)
            got = (dA if name == "add_one" else dC).copy_to_host()
            check(mode + name, calls, A, B, got, errors)
    # the prebuilt kernels, at the tutorial's size and at 128 x 128
    k = pygpu.kernels
    for side in (n, PREBUILT_SIDE):
        P, Q = inputs(side)
        dP, dQ, dR = cuda.to_device(P), cuda.to_device(Q), pygpu.empty((side, side), np.float32)
        g = ((side + 15) // 16, (side + 15) // 16)
        for name in ("add_one", "matmul_naive", "matmul_shared"):
            args = (dP,) if name == "add_one" else (dP, dQ, dR)
            launch = functools.partial(getattr(k, name)[g, (16, 16)], *args)
            out[f"prebuilt {name} {side}"] = timed_ms(launch, sync, reps, budget_s)[0]
    return dict(ms=out, errors=errors)


def worker_numba(n, reps, budget_s):
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack  # numba-cuda 0.30 still calls it (NumPy 2.5 removed it)
    try:
        import numba
        from numba import cuda
    except Exception as exc:  # noqa: BLE001
        return dict(absent=f"{type(exc).__name__}: {exc}")

    from .tutorial import numba_kernels

    kk = numba_kernels(cuda)
    A, B = inputs(n)
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    dC = cuda.device_array((n, n), np.float32)
    a, b, c = cuda.to_device(A.ravel()), cuda.to_device(B.ravel()), cuda.device_array(n * n,
                                                                                       np.float32)
    (vg, vb), (mg, mb) = grids(n)
    sync = cuda.synchronize
    launches = {
        "vector_add": lambda: kk["vadd"][vg, vb](a, b, c),
        "add_one": lambda: kk["add_one"][mg, mb](dA),
        "matmul_naive": lambda: kk["matmul"][mg, mb](dA, dB, dC),
        "matmul_shared": lambda: kk["fast_matmul"][mg, mb](dA, dB, dC),
    }
    # a warm-up of each kernel on one block of a 16 x 16 problem, then the
    # timed launches (Numba's simulator takes seconds at 64 x 64; its first
    # launch is no slower than the next)
    w = np.ones((16, 16), np.float32)
    dw, dz, dv = cuda.to_device(w), cuda.to_device(w), cuda.to_device(w.ravel())
    kk["vadd"][1, 256](dv, dv, dv)
    kk["add_one"][1, (16, 16)](dw)
    kk["matmul"][1, (16, 16)](dw, dw, dz)
    kk["fast_matmul"][1, (16, 16)](dw, dw, dz)
    out, errors = {}, []
    for name, launch in launches.items():
        dA.copy_to_device(A)
        out[name], calls = timed_ms(launch, sync, reps, budget_s, warmup=False)
        got = {"vector_add": c, "add_one": dA}.get(name, dC).copy_to_host().reshape(n, n)
        check(name, calls, A, B, got, errors)
    try:
        from importlib.metadata import version

        cuda_version = f", numba-cuda {version('numba-cuda')}"
    except Exception:  # noqa: BLE001
        cuda_version = ""
    return dict(ms=out, errors=errors, version=f"Numba {numba.__version__}{cuda_version}")


def worker_compile():
    """Seconds to build a RawKernel of a small kernel, the simulator started."""
    import pygpu

    from .tutorial import SMALL_SOURCE

    pygpu.zeros(1)  # the backend up, so the figure is the compile (or the load)
    t0 = time.perf_counter()
    k = pygpu.RawKernel(SMALL_SOURCE, "scale")
    seconds = time.perf_counter() - t0
    d = pygpu.zeros(100, np.float32) + np.float32(1.5)
    k[1, 128](d, np.float32(2.0), d.size)
    ok = bool(np.all(d.copy_to_host() == 3.0))
    return dict(s=seconds, errors=[] if ok else ["compiled kernel: wrong result"])


# ---- the parent: rows -------------------------------------------------------------------

def child(args, env_extra, timeout=900, module="benchmarks.sim"):
    """Run `python -m <module> args` with env_extra; its JSON, or None."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])), **env_extra)
    try:
        r = subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"simulator rows: `{' '.join(map(str, args))}` ran past {timeout} s",
              file=sys.stderr)
        return None
    if r.returncode != 0:
        print(f"simulator rows: `{' '.join(map(str, args))}` failed:\n{r.stderr[-3000:]}",
              file=sys.stderr)
        return None
    result = json.loads(r.stdout.strip().splitlines()[-1])
    for e in result.get("errors", []):
        print(f"WARNING: simulator rows, {args[0]}: {e}", file=sys.stderr)
    return result


def add_rows(t, smoke):
    """Add the simulator rows to the Table t."""
    n = 16 if smoke else 64
    # unchecked, threads in order (the defaults), whatever the caller has set
    sim_env = {"PYGPU_SIMULATOR": "1", "PYGPU_SIM_DEVICES": "1", "PYGPU_SIM_CHECK": "0",
               "PYGPU_SIM_SCHEDULE": "ordered"}
    with tempfile.TemporaryDirectory(prefix="pygpu-bench-cache-") as cache:
        ours = child(["pygpu", n, 3 if smoke else 20, 0.5 if smoke else 2.0],
                     dict(sim_env, PYGPU_CACHE_DIR=cache))
    theirs = child(["numba", n, 1 if smoke else 3, 0.0 if smoke else 1.0],
                   {"NUMBA_ENABLE_CUDASIM": "1"})
    ours_ms = (ours or {}).get("ms", {})
    theirs_ms = (theirs or {}).get("ms", {})
    if theirs and "absent" in theirs:
        print(f"Numba absent (simulator rows): {theirs['absent']}", file=sys.stderr)
    labels = {"vector_add": ("vector add", f"{n * n} float32"),
              "add_one": ("add one in place", f"{n}^2 float32"),
              "matmul_naive": ("matmul naive", f"{n}^3 float32"),
              "matmul_shared": ("matmul shared, 16 x 16 tiles", f"{n}^3 float32")}
    for name in KERNELS:
        measure, size = labels[name]
        vals = {"pygpu": ours_ms.get(name), "pygpu checked": ours_ms.get(f"checked {name}"),
                "Numba": theirs_ms.get(name)}
        if name != "vector_add":
            vals["pygpu prebuilt"] = ours_ms.get(f"prebuilt {name} {n}")
        t.add(f"sim.tutorial.{name}", f"simulator: {measure}, CUDA C RawKernel vs Numba", size,
              "ms", "lower", vals)

    # first compile in a fresh cache, then loads from it; each in a fresh interpreter
    compiles, loads = [], []
    with tempfile.TemporaryDirectory(prefix="pygpu-bench-cache-") as cache:
        for i in range(1 if smoke else 3):
            fresh = Path(cache) / f"fresh{i}"
            r = child(["compile"], dict(sim_env, PYGPU_CACHE_DIR=str(fresh)))
            compiles.append(r and r["s"])
        for _ in range(1 if smoke else 5):
            r = child(["compile"], dict(sim_env, PYGPU_CACHE_DIR=str(fresh)))
            loads.append(r and r["s"] * 1e3)
    med = lambda xs: None if None in xs else statistics.median(xs)  # noqa: E731
    t.add("sim.compile.first", "simulator: first compile of a small RawKernel",
          "fresh cache", "s", "lower", {"pygpu": med(compiles)})
    t.add("sim.compile.cached", "simulator: RawKernel loaded from the disk cache",
          "fresh process", "ms", "lower", {"pygpu": med(loads)})

    s = PREBUILT_SIDE
    for name in ("add_one", "matmul_naive", "matmul_shared"):
        t.add(f"sim.prebuilt.{name}", f"simulator: prebuilt kernels.{name}",
              f"{s}^2 float32" if name == "add_one" else f"{s}^3 float32", "ms", "lower",
              {"pygpu": ours_ms.get(f"prebuilt {name} {s}")})


def main(argv):
    what = argv[0]
    if what == "pygpu":
        result = worker_pygpu(int(argv[1]), int(argv[2]), float(argv[3]))
    elif what == "numba":
        result = worker_numba(int(argv[1]), int(argv[2]), float(argv[3]))
    elif what == "compile":
        result = worker_compile()
    else:
        raise SystemExit(f"usage: python -m benchmarks.sim pygpu|numba N REPS BUDGET | compile"
                         f" (not {what!r})")
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
