"""Issue 24's rows: kernels written in Python (pygpu.cuda.jit).

- jit.launch: host cost of a @cuda.jit launch against raw C's `<<<>>>` with
  the same parameters (raw.cu's 3-argument launch: a pointer and two 8-byte
  integers, as the jit kernel's one array passes its address, extent and
  stride), in the same interleaved rounds as the launch forms; Numba's
  launch of the same Python beside it.
- jit.compile.first / jit.compile.cached: the first call of the seeds'
  add_one_kernel in a fresh process, with an empty cache (translate,
  compile, load) and with the disk cache it left (translate, load); only
  the call is timed, not `import pygpu`.
- jit.seed.<kernel>: each seed kernel (benchmarks/jit_kernels.py) written in
  Python against the same algorithm in CUDA C through pygpu.RawKernel and
  against Numba's compiled kernel (the same Python), GPU time from events,
  in interleaved rounds.
- jit.fuse: pygpu.fuse of `sin(x) * 2 + sqrt(abs(x))` against the
  device-to-device copy of the same bytes (read + write), and cupy.fuse.
- sim.jit.<kernel> (CPU): the seed kernels in Python on pygpu's simulator
  against the same Python on Numba's simulator (NUMBA_ENABLE_CUDASIM=1), each
  in a child process, as benchmarks/sim.py does for the tutorials:

    python -m benchmarks.jit first_call        # JSON: s of the first call
    python -m benchmarks.jit sim pygpu|numba N REPS BUDGET   # JSON: ms per launch
"""

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import compute, sim

HISTOGRAM_BINS = 256
HISTOGRAM_RANGE = (-4.0, 4.0)


# ---- the inputs and launches of each seed kernel ------------------------------------------

def seed_inputs(n, m, rng):
    """Host inputs for the seed kernels: n x n matrices (add_one_kernel, the
    matmuls) and m values (histogram, block_sum)."""
    return dict(A=rng.standard_normal((n, n)).astype(np.float32),
                B=rng.standard_normal((n, n)).astype(np.float32),
                x=rng.standard_normal(m))


def seed_reference(name, h):
    """NumPy's answer of one launch of `name` on the inputs h."""
    if name == "add_one_kernel":
        return h["A"] + np.float32(1)
    if name in ("matmul", "fast_matmul"):
        return h["A"].astype(np.float64) @ h["B"]
    if name == "histogram":  # the kernel's binning: the int of (x - lo) / width
        lo, hi = HISTOGRAM_RANGE
        b = ((h["x"] - lo) / ((hi - lo) / HISTOGRAM_BINS)).astype(np.int32)
        return np.bincount(b[(b >= 0) & (b < HISTOGRAM_BINS)], minlength=HISTOGRAM_BINS)
    return np.array([h["x"].sum()])


def seed_launches(to_device, zeros, kernels, h, raw=None):
    """name -> (launch, reset, result) for each seed kernel: launch() runs it
    once, reset() puts its output back to its start, result() gives the
    output as NumPy. kernels: name -> a @cuda.jit (pygpu's or Numba's)
    kernel; with raw (name -> RawKernel), the CUDA C kernels instead, with
    their C arguments."""
    n = h["A"].shape[0]
    m = h["x"].size
    g2 = ((n + 15) // 16, (n + 15) // 16), (16, 16)
    hist_grid = (min(1024, -(-m // 256)), 256)
    sum_grid = (-(-m // 64), 64)
    A, B, x = to_device(h["A"]), to_device(h["B"]), to_device(h["x"])
    C64, C32 = zeros((n, n), np.float64), zeros((n, n), np.float32)
    hist, total = zeros(HISTOGRAM_BINS, np.int32), zeros(1, np.float64)
    lo, hi = HISTOGRAM_RANGE

    def fill(d, value):
        return lambda: d.copy_to_device(np.full(d.shape, value, d.dtype) if np.isscalar(value)
                                        else value)
    out = {}
    if raw is None:
        k = kernels
        out["add_one_kernel"] = (lambda: k["add_one_kernel"][g2](A), fill(A, h["A"]), A)
        out["matmul"] = (lambda: k["matmul"][g2](A, B, C64), fill(C64, 0), C64)
        out["fast_matmul"] = (lambda: k["fast_matmul"][g2](A, B, C32), fill(C32, 0), C32)
        out["histogram"] = (lambda: k["histogram"][hist_grid](x, lo, hi, hist),
                            fill(hist, 0), hist)
        out["block_sum"] = (lambda: k["block_sum"][sum_grid](x, total), fill(total, 0), total)
    else:
        r = raw
        out["add_one_kernel"] = (lambda: r["add_one_kernel"][g2](A, n, n), fill(A, h["A"]), A)
        out["matmul"] = (lambda: r["matmul"][g2](A, B, C64, n), fill(C64, 0), C64)
        out["fast_matmul"] = (lambda: r["fast_matmul"][g2](A, B, C32, n), fill(C32, 0), C32)
        out["histogram"] = (lambda: r["histogram"][hist_grid](x, m, lo, hi, hist,
                                                               HISTOGRAM_BINS),
                            fill(hist, 0), hist)
        out["block_sum"] = (lambda: r["block_sum"][sum_grid](x, m, total), fill(total, 0), total)
    return {name: (launch, reset, lambda d=d: d.copy_to_host())
            for name, (launch, reset, d) in out.items()}


def right(name, got, h):
    """Whether one launch's output is NumPy's answer."""
    want = seed_reference(name, h)
    if name == "histogram":
        return np.array_equal(got, want)
    tol = 1e-4 if name in ("matmul", "fast_matmul") else 1e-9
    return np.allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max())))


def checked(label, name, form, h):
    """Reset, launch once, compare with NumPy (a WARNING where it differs)."""
    launch, reset, result = form
    reset()
    launch()
    ok = right(name, result(), h)
    if not ok:
        print(f"WARNING: {label} {name}: result differs from NumPy", file=sys.stderr)
    return ok


# ---- the GPU rows -------------------------------------------------------------------------

def launch_rows(t, smoke, peers, lib, interleaved, python_burst, launch_us, absent):
    """jit.launch: host microseconds per launch of a tiny @cuda.jit kernel."""
    import pygpu
    from pygpu import cuda

    from . import jit_kernels as K

    d = pygpu.zeros(32, dtype=np.float32)
    k = K.tiny[1, 32]
    k(d)  # compiled here, not in the rounds
    cuda.synchronize()
    tiny = K.tiny

    def configured(r):
        for _ in r:
            k(d)

    def one_expression(r):
        for _ in r:
            tiny[1, 32](d)

    forms = {"pygpu k(d)": python_burst(configured),
             "pygpu kernel[1, 32](d)": python_burst(one_expression)}
    if lib is not None:
        forms["raw C 3 args"] = lambda c: lib.pg_raw_burst(3, c, 0)
    vals = interleaved(forms, 5 if smoke else 150, 32 if smoke else 256)
    nb = peers.get("numba")
    if nb is not None:
        nk = K.numba_module(nb)["tiny"]
        nd = nb.to_device(np.zeros(32, np.float32))
        nk[1, 32](nd)
        vals["Numba kernel[1, 32](d)"] = launch_us(nk[1, 32], nd, bursts=5 if smoke else 100)
    absent(vals, "raw C 3 args", "Numba kernel[1, 32](d)")
    t.add("jit.launch", "@cuda.jit launch, host time per call (interleaved rounds)",
          "tiny add_one, 32 float32", "us", "lower", vals)


FIRST_CALL_CHILD = ("first_call",)


def first_call_rows(t, smoke):
    """The seeds' add_one_kernel's first call in a fresh process: an empty
    cache, then the disk cache it filled (median of fresh processes)."""
    compiles, loads = [], []
    with tempfile.TemporaryDirectory(prefix="pygpu-bench-cache-") as cache:
        for i in range(1 if smoke else 3):
            fresh = str(Path(cache) / f"fresh{i}")
            r = sim.child(FIRST_CALL_CHILD, {"PYGPU_CACHE_DIR": fresh},
                          module="benchmarks.jit")
            compiles.append(r and r["s"])
        for _ in range(1 if smoke else 5):
            r = sim.child(FIRST_CALL_CHILD, {"PYGPU_CACHE_DIR": fresh},
                          module="benchmarks.jit")
            loads.append(r and r["s"] * 1e3)
    med = lambda xs: None if None in xs else statistics.median(xs)  # noqa: E731
    t.add("jit.compile.first", "@cuda.jit first call of add_one_kernel, empty cache",
          "fresh process", "s", "lower", {"pygpu": med(compiles)})
    t.add("jit.compile.cached", "@cuda.jit first call of add_one_kernel, from the disk cache",
          "fresh process", "ms", "lower", {"pygpu": med(loads)})


def seed_rows(t, smoke, peers, gpu_ms_rounds, absent):
    """jit.seed.<kernel>: GPU ms of each seed kernel in Python, in CUDA C
    (RawKernel) and in Numba."""
    import pygpu

    from . import jit_kernels as K

    # (n, m): n x n matrices, m values
    sizes = {"add_one_kernel": (4096, 16), "matmul": (1024, 16), "fast_matmul": (2048, 16),
             "histogram": (16, 1 << 26), "block_sum": (16, 1 << 26)}
    if smoke:
        sizes = dict.fromkeys(sizes, (32, 4096))
    nb = peers.get("numba")
    nk = K.numba_module(nb) if nb is not None else None
    module = pygpu.RawModule(K.CUDA_SOURCE)
    raw = {name: module.get_function(name) for name in K.SEEDS}
    ours = {name: getattr(K, name) for name in K.SEEDS}
    rng = np.random.default_rng(24)
    labels = {"add_one_kernel": ("add_one_kernel, 2-D, cuda.grid(2)", "{n}^2 float32"),
              "matmul": ("matmul naive", "{n}^3 float32 (float64 sums)"),
              "fast_matmul": ("fast_matmul, shared memory 16 x 16 tiles", "{n}^3 float32"),
              "histogram": ("histogram, atomic adds, grid-stride", "{m} float64, 256 bins"),
              "block_sum": ("block reduction, shared tree + warp shuffles + atomic",
                            "{m} float64")}
    for name in K.SEEDS:
        n, m = sizes[name]
        h = seed_inputs(n, m, rng)
        forms = {"pygpu": seed_launches(pygpu.asarray, pygpu.zeros, ours, h)[name],
                 "pygpu RawKernel": seed_launches(pygpu.asarray, pygpu.zeros, None, h,
                                                  raw)[name]}
        if nk is not None:
            def nzeros(shape, dtype):
                return nb.to_device(np.zeros(shape, dtype))
            forms["Numba"] = seed_launches(nb.to_device, nzeros, nk, h)[name]
        for label, form in forms.items():
            checked(label, name, form, h)
        vals = gpu_ms_rounds({label: form[0] for label, form in forms.items()},
                             3 if smoke else 20)
        absent(vals, "Numba")
        measure, size = labels[name]
        t.add(f"jit.seed.{name}", f"@cuda.jit {measure}: Python vs CUDA C vs Numba",
              size.format(n=n, m=m), "ms", "lower", vals)
        del forms


def fuse_row(t, smoke, n, peers, rng, reps, rounds, absent):
    """jit.fuse: pygpu.fuse(sin(x) * 2 + sqrt(abs(x))) on n float32, GB/s
    (read + write) against the d2d copy."""
    import pygpu

    def expression(x):
        return np.sin(x) * 2 + np.sqrt(np.abs(x))

    fused = pygpu.fuse(expression)
    x = rng.standard_normal(n).astype(np.float32)
    dx = pygpu.asarray(x)
    dy = pygpu.empty_like(dx)
    tail = x[-4096:]
    want = np.sin(tail) * 2 + np.sqrt(np.abs(tail))
    if not np.allclose(fused(dx).copy_to_host()[-4096:], want, rtol=1e-5):
        print("WARNING: jit.fuse: result differs from NumPy", file=sys.stderr)
    moved = 2 * x.nbytes
    forms = {"d2d copy": (lambda: dy.copy_to_device(dx), moved), "pygpu": lambda: fused(dx)}
    cp = peers.get("cupy")
    if cp is not None:
        def cupy_expression(v):  # cupy.fuse names its kernel after the function: no lambda
            return cp.sin(v) * 2 + cp.sqrt(cp.abs(v))

        cfused = cp.fuse(cupy_expression)
        cx = cp.asarray(x)
        forms["CuPy"] = lambda: cfused(cx)
    vals, copy = compute._gbs(rounds, forms, moved, reps)
    absent(vals, "CuPy")
    t.add("jit.fuse", "pygpu.fuse: sin(x) * 2 + sqrt(abs(x)), read + write", f"{n} float32",
          "GB/s", "higher", vals, copy)


def gpu_rows(t, smoke, sizes, peers, lib, rng, reps, h):
    """All of issue 24's GPU rows; h: the helpers of benchmarks/__main__."""
    launch_rows(t, smoke, peers, lib, h["interleaved"], h["python_burst"], h["launch_us"],
                h["absent"])
    first_call_rows(t, smoke)
    seed_rows(t, smoke, peers, h["gpu_ms_rounds"], h["absent"])
    fuse_row(t, smoke, sizes["vector"], peers, rng, reps, h["gpu_ms_rounds"], h["absent"])


# ---- the simulator rows -------------------------------------------------------------------

def sim_rows(t, smoke):
    """sim.jit.<kernel>: ms per launch of each seed kernel in Python on
    pygpu's simulator and on Numba's."""
    n = 16 if smoke else 64
    sim_env = {"PYGPU_SIMULATOR": "1", "PYGPU_SIM_DEVICES": "1", "PYGPU_SIM_CHECK": "0",
               "PYGPU_SIM_SCHEDULE": "ordered"}
    with tempfile.TemporaryDirectory(prefix="pygpu-bench-cache-") as cache:
        ours = sim.child(["sim", "pygpu", n, 3 if smoke else 20, 0.5 if smoke else 2.0],
                         dict(sim_env, PYGPU_CACHE_DIR=cache), module="benchmarks.jit")
    theirs = sim.child(["sim", "numba", n, 1, 0.0 if smoke else 1.0],
                       {"NUMBA_ENABLE_CUDASIM": "1"}, module="benchmarks.jit")
    if theirs and "absent" in theirs:
        print(f"Numba absent (simulator jit rows): {theirs['absent']}", file=sys.stderr)
    for side, got in (("pygpu", ours), ("Numba", theirs)):
        for error in (got or {}).get("errors", []):
            print(f"simulator jit rows, {side}: {error}", file=sys.stderr)
    ours_ms = (ours or {}).get("ms", {})
    theirs_ms = (theirs or {}).get("ms", {})
    from .jit_kernels import SEEDS
    for name in SEEDS:
        size = f"{n}^2" if name == "add_one_kernel" else (
            f"{n}^3" if "matmul" in name else f"{n * n} values")
        t.add(f"sim.jit.{name}", f"simulator: @cuda.jit {name}, pygpu vs Numba's simulator",
              size, "ms", "lower", {"pygpu": ours_ms.get(name), "Numba": theirs_ms.get(name)})


def worker_sim(side, n, reps, budget_s):
    """ms per launch of each seed kernel in Python on one side's simulator."""
    from .jit_kernels import SEEDS
    if side == "numba":
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        if not hasattr(np, "row_stack"):
            np.row_stack = np.vstack  # numba-cuda 0.30 still calls it (NumPy 2.5 removed it)
        try:
            import numba  # noqa: F401
            from numba import cuda
        except Exception as exc:  # noqa: BLE001
            return dict(absent=f"{type(exc).__name__}: {exc}")
        from .jit_kernels import numba_module
        kernels = numba_module(cuda)

        def zeros(shape, dtype):
            return cuda.to_device(np.zeros(shape, dtype))
        to_device = cuda.to_device
    else:
        import pygpu
        from pygpu import cuda

        from . import jit_kernels as K
        assert cuda.is_simulator(), "PYGPU_SIMULATOR=1 must be set"
        kernels = {name: getattr(K, name) for name in K.SEEDS}
        zeros, to_device = pygpu.zeros, pygpu.asarray
    h = seed_inputs(n, n * n, np.random.default_rng(24))
    # each kernel on arrays of its own (add_one_kernel's launches change A)
    forms = {name: seed_launches(to_device, zeros, kernels, h)[name] for name in SEEDS}
    out, errors = {}, []
    for name, form in forms.items():
        try:
            if not checked(side, name, form, h):  # also the warm-up (pygpu: the compile)
                errors.append(f"{name}: wrong result")
                continue
        except Exception as exc:  # noqa: BLE001  (Numba's simulator lacks the warp shuffles)
            errors.append(f"{name}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        out[name] = sim.timed_ms(form[0], cuda.synchronize, reps, budget_s, warmup=False)[0]
    return dict(ms=out, errors=errors)


def worker_first_call():
    """Seconds of the first call of add_one_kernel in this fresh process."""
    import pygpu
    from pygpu import cuda

    from . import jit_kernels as K

    d = pygpu.zeros((64, 64), np.float32)
    cuda.synchronize()  # the backend up: the figure is the first call alone
    t0 = time.perf_counter()
    K.add_one_kernel[(4, 4), (16, 16)](d)
    cuda.synchronize()
    seconds = time.perf_counter() - t0
    ok = bool((d.copy_to_host() == 1).all())
    return dict(s=seconds, errors=[] if ok else ["add_one_kernel: wrong result"])


def main(argv):
    if argv[:1] == ["first_call"]:
        result = worker_first_call()
    elif argv[:1] == ["sim"] and len(argv) == 5 and argv[1] in ("pygpu", "numba"):
        result = worker_sim(argv[1], int(argv[2]), int(argv[3]), float(argv[4]))
    else:
        raise SystemExit("usage: python -m benchmarks.jit first_call | sim pygpu|numba N REPS "
                         f"BUDGET (not {' '.join(argv)!r})")
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
