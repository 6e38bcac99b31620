"""pygpu against raw CUDA C, CuPy, Numba, PyTorch and NumPy, in one run.

    python -m benchmarks            # full sizes, on a GPU (with the simulator rows)
    python -m benchmarks --smoke    # tiny sizes; runs on the simulator too (CI)
    python -m benchmarks --sim      # the simulator rows alone (CPU; any machine)
    python -m benchmarks --check [results.json]   # judge a run against targets.toml
    python -m benchmarks --plot bench.png --json bench.json --markdown bench.md
    python -m benchmarks --from results.json --markdown bench.md   # render a saved run

Prints one table: each measure, pygpu, each peer (or "absent"), and the
targets of benchmarks/targets.toml for the row with the figures they judge
and whether they are met. A full or --sim run saves every row, with the
machine, date and commit, to benchmarks/results/latest.json (and to --json
FILE), which --check reads. GPU times come from CUDA events around the region
(median of many repeats, after a warm-up); host launch cost is the median per
launch over bursts of 256 launches with a synchronize between bursts, taken
in interleaved rounds with raw C's bursts run in this same process;
transfers are wall-clock medians of synchronous copies. Ratios within one run
are the figures that count. See docs/PERFORMANCE.md.
"""

import argparse
import atexit
import ctypes
import functools
import json
import operator
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import api, compute, jit, sim, targets
from .tutorial import numba_kernels

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEERS = ["raw C", "CuPy", "Numba", "PyTorch", "NumPy"]


# ---- timing helpers ----------------------------------------------------------------

def median(xs):
    return statistics.median(xs)


def gpu_ms(fn, reps=20, warmup=2, budget_s=None):
    """Median milliseconds of fn() between two events on the default stream;
    with budget_s, fewer repeats (at least 3) once that many seconds are spent."""
    return gpu_ms_rounds({"fn": fn}, reps, warmup, budget_s)["fn"]


def gpu_ms_rounds(forms, rounds=10, warmup=2, budget_s=None):
    """Median milliseconds of each form (name -> fn) between two events on the
    default stream, in interleaved() rounds, so that every form sees the same
    GPU clocks (the same cuBLAS call, timed 10 times in a row a few seconds
    apart, moved by up to 10% between two runs on one H100)."""
    from pygpu import cuda

    a, b = cuda.event(), cuda.event()

    def timed(fn):
        def once(count):
            a.record(0)
            fn()
            b.record(0)
            b.synchronize()
            return a.elapsed_time(b)
        return once
    for fn in forms.values():
        for _ in range(warmup - 1):  # interleaved() runs one more
            fn()
    cuda.synchronize()
    return interleaved({name: timed(fn) for name, fn in forms.items()}, rounds, 1, budget_s)


def launch_us(fn, *args, bursts=100, burst=256):
    """Median host microseconds per fn(*args) over bursts, synchronizing between."""
    from pygpu import cuda

    for _ in range(burst):
        fn(*args)
    cuda.synchronize()
    per = []
    r = range(burst)
    for _ in range(bursts):
        t0 = time.perf_counter()
        for _ in r:
            fn(*args)
        per.append((time.perf_counter() - t0) / burst * 1e6)
        cuda.synchronize()
    return median(per)


def wall_ms(fn, reps=5, warmup=1):
    from pygpu import cuda

    for _ in range(warmup):
        fn()
    cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return median(times)


def interleaved(forms, rounds, burst, budget_s=None):
    """Median of each form's time over `rounds` rounds (with budget_s, fewer,
    at least 3, once that many seconds are spent).

    forms: name -> f(count), which synchronizes the device, runs one burst of
    `count` launches and returns its time (microseconds per launch for the
    launch forms; negative: failed).
    Each round runs one burst of every form, starting one form later than the
    round before, so that no form always follows the same one; host launch
    times drift by tens of percent within a run, and this way every form
    sees the same drift."""
    names = list(forms)
    for name in names:
        forms[name](burst)  # warm-up
    per = {name: [] for name in names}
    start = time.perf_counter()
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            per[name].append(forms[name](burst))
        if budget_s is not None and r >= 2 and time.perf_counter() - start > budget_s:
            break
    return {name: (None if min(xs) < 0 else median(xs)) for name, xs in per.items()}


def python_burst(loop):
    """A form for interleaved(): loop(range(count)) runs the launches."""
    from pygpu import cuda

    def burst(count):
        cuda.synchronize()
        r = range(count)
        t0 = time.perf_counter()
        loop(r)
        return (time.perf_counter() - t0) / count * 1e6
    return burst


# ---- peers -------------------------------------------------------------------------

def load_peers(smoke):
    peers = {}
    if smoke:
        return peers
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        peers["cupy"] = cupy
    except Exception as exc:  # noqa: BLE001
        print(f"CuPy absent: {exc}", file=sys.stderr)
    try:
        if not hasattr(np, "row_stack"):
            np.row_stack = np.vstack  # numba-cuda 0.30 still calls it (NumPy 2.5 removed it)
        from numba import cuda as ncuda

        if ncuda.is_available():
            peers["numba"] = ncuda
    except Exception as exc:  # noqa: BLE001
        print(f"Numba absent: {exc}", file=sys.stderr)
    try:
        import torch

        if torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            peers["torch"] = torch
    except Exception as exc:  # noqa: BLE001
        print(f"PyTorch absent: {exc}", file=sys.stderr)
    return peers


def build_raw_c():
    """Build benchmarks/raw.cu as a program and as a shared library (both at
    once); their paths, each None where it could not be built (no nvcc)."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists():
        print("raw C absent: no nvcc", file=sys.stderr)
        return None, None
    tmp = tempfile.mkdtemp(prefix="pygpu-bench-")
    atexit.register(shutil.rmtree, tmp, True)
    exe, lib = Path(tmp) / "raw", Path(tmp) / "libraw.so"
    common = [nvcc, "-O3", "-std=c++17", "-gencode", "arch=compute_90,code=sm_90",
              "-gencode", "arch=compute_80,code=sm_80", str(HERE / "raw.cu")]
    jobs = {exe: subprocess.Popen(common + ["-o", str(exe)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True),
            lib: subprocess.Popen(common + ["-DPG_RAW_LIB", "-shared", "-Xcompiler", "-fPIC",
                                            "-o", str(lib)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)}
    built = []
    for path, job in jobs.items():
        _, err = job.communicate()
        if job.returncode != 0:
            print(f"raw C: build of {path.name} failed:", err[-2000:], file=sys.stderr)
            built.append(None)
        else:
            built.append(path)
    return tuple(built)


def raw_c(exe, sizes, *mode):
    """Run the raw C program: {} if it cannot run."""
    if exe is None:
        return {}
    r = subprocess.run([str(exe), str(sizes["vector"]), str(sizes["side"]),
                        str(sizes["transfer"]), *mode], capture_output=True, text=True)
    if r.returncode != 0:
        print("raw C: run failed:", r.stderr[-2000:], file=sys.stderr)
        return {}
    return json.loads(r.stdout)


def raw_lib(path):
    """raw.cu's shared library, loaded into this process, or None."""
    if path is None:
        return None
    lib = ctypes.CDLL(str(path))
    for name, args in (("pg_raw_init", []), ("pg_raw_burst", [ctypes.c_int] * 3),
                       ("pg_raw_sync_burst", [ctypes.c_int]),
                       ("pg_raw_graph_burst", [ctypes.c_int])):
        getattr(lib, name).restype = ctypes.c_double
        getattr(lib, name).argtypes = args
    if lib.pg_raw_init() < 0:
        print("raw C (in process): could not start", file=sys.stderr)
        return None
    return lib


# ---- the table ---------------------------------------------------------------------

class Table:
    """The rows of one run; the targets of benchmarks/targets.toml judge them."""

    def __init__(self, smoke=False, simulator=False, target_list=None):
        self.rows = []
        self.smoke = smoke
        self.simulator = simulator
        self.targets = targets.load_targets() if target_list is None else target_list

    def add(self, row_id, measure, size, unit, better, values, refs=None):
        """values: name -> number or None (absent), the table's cells; refs: name
        -> number, figures that targets divide by (not shown as cells)."""
        row = dict(id=row_id, measure=measure, size=size, unit=unit, better=better,
                   values=values, refs=refs or {})
        row.update(self.judged(row))
        self.rows.append(row)
        print(f"  {measure} [{size}]: " + ", ".join(
            f"{k} {fmt(v)}" for k, v in values.items()), flush=True)

    def judged(self, row):
        """The row's target, ratio (the judged figures) and met cells."""
        mine = [t for t in self.targets if t["row"] == row["id"]]
        if not mine:
            return dict(target="", ratio="", met="")
        text = "; ".join(targets.describe(t, row["unit"]) for t in mine)
        if self.smoke:
            return dict(target=text, ratio="n/a", met="n/a (smoke)")
        if self.simulator and targets.section_of(row["id"]) != "sim":
            return dict(target=text, ratio="n/a", met="n/a (simulator)")
        figures, met = [], True
        for t in mine:
            value, why = targets.evaluate(t, row)
            if value is None:
                figures.append(f"n/a ({why})")
                met = met and t.get("absent") == "not run"  # a tool missing here
            else:
                figures.append(targets.measured(t, value, row["unit"]))
                met = met and targets.OPS[t["op"]](value, t["threshold"])
        return dict(target=text, ratio="; ".join(figures), met="yes" if met else "NO")

    def render(self):
        names = ["pygpu"] + PEERS
        head = ["measure", "size", "unit"] + names + ["pygpu vs target", "target", "met"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in self.rows:
            v = r["values"]
            cells = [r["measure"], r["size"], r["unit"]]
            for n in names:
                keys = [k for k in v if k == n or k.startswith(n + " ")]
                cells.append("; ".join(f"{fmt(v[k])}" + (f" ({k[len(n) + 1:]})"
                                                         if k != n else "")
                                       for k in keys) if keys else "absent")
            cells += [r["ratio"], r["target"], r["met"]]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)


def absent(values, *names):
    """values with each peer's figure that was not measured there as None, so
    that the row and the results say "absent"."""
    for name in names:
        values.setdefault(name, None)
    return values


def fmt(x):
    if x is None:
        return "absent"
    if isinstance(x, str):
        return x
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


def user_launches(shape, rows, cols):
    """The launches a user writes over rows * cols elements: label -> (grid, block).

    launch_config(shape)'s defaults, 1-D blocks with grid ceil(n / block), and
    the tutorials' 2-D blocks with grid ceil(cols / bx) x ceil(rows / by)."""
    from pygpu import cuda

    n = rows * cols
    forms = {"launch_config": cuda.launch_config(shape)}
    for b in (128, 256, 1024):
        forms[f"1-D {b}"] = (-(-n // b), b)
    for bx, by in ((16, 16), (32, 32)):
        forms[f"({bx},{by})"] = ((-(-cols // bx), -(-rows // by)), (bx, by))
    return forms


# The RawKernel of the launch forms: raw.cu's add3, compiled by pygpu.
ADD3_SOURCE = r"""
extern "C" __global__ void add3(float *a, const float *b, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] += b[i];
    }
}
"""
GRAPH_LAUNCHES = 256


# ---- the GPU rows ----------------------------------------------------------------------

def launch_rows(t, smoke, exe, lib, peers, raw):
    """Host cost of one launch, in every form a user writes, against raw C's
    `<<<>>>` with the same arguments; the CUDA graph replay."""
    import pygpu
    from pygpu import cuda

    cp, nb, th = peers.get("cupy"), peers.get("numba"), peers.get("torch")
    d = pygpu.zeros(32, dtype=np.float32)
    e = pygpu.zeros(32, dtype=np.float32)
    k = pygpu.kernels.add_one[1, 32]
    add_one_kernel, add_one = pygpu.kernels.add_one, pygpu.add_one
    try:
        rk = pygpu.RawKernel(ADD3_SOURCE, "add3")
    except Exception as exc:  # noqa: BLE001
        print(f"pygpu RawKernel absent: {type(exc).__name__}: {exc}", file=sys.stderr)
        rk = None

    # Raw C runs in this process: raw.cu built as a shared library, one ctypes
    # call per burst of 256 `<<<>>>` (the call costs well under 0.01 us a
    # launch), timed inside C. Its bursts take turns with pygpu's, round after
    # round, so that both see the same machine at the same moments (host launch
    # times drift by tens of percent within minutes, and between processes),
    # on the same context, with the same synchronize before each burst. The
    # program in its own process (raw.cu's main) is reported beside it, for
    # comparison with earlier runs.
    def configured(r):
        for _ in r:
            k(d)

    def one_expression(r):
        for _ in r:
            add_one_kernel[1, 32](d)

    def function(r):
        for _ in r:
            add_one(d)

    def operator_add(r, add=operator.add):
        for _ in r:
            add(d, e)

    def raw_kernel(r):
        for _ in r:
            rk[1, 32](d, e, 32)

    forms = {"pygpu k(d)": python_burst(configured),
             "pygpu kernels.add_one[g, b](d)": python_burst(one_expression),
             "pygpu add_one(d)": python_burst(function),
             "pygpu d + e": python_burst(operator_add)}
    if rk is not None:
        forms["pygpu RawKernel 3 args"] = python_burst(raw_kernel)
    if lib is not None:
        forms.update({"raw C 2 args": lambda c: lib.pg_raw_burst(2, c, 0),
                      "raw C 3 args": lambda c: lib.pg_raw_burst(3, c, 0),
                      "raw C 4 args": lambda c: lib.pg_raw_burst(4, c, 0),
                      "raw C 4 args + cudaMallocAsync": lambda c: lib.pg_raw_burst(4, c, 1)})
    vals = interleaved(forms, 5 if smoke else 150, 32 if smoke else 256)
    vals.setdefault("pygpu RawKernel 3 args", None)
    for name in ("raw C 2 args", "raw C 3 args", "raw C 4 args",
                 "raw C 4 args + cudaMallocAsync"):
        vals.setdefault(name, None)
    t.add("launch.forms", "launch forms, host time per call (interleaved rounds)",
          "32 float32", "us", "lower", vals)

    theirs = raw_c(exe, {"vector": 1, "side": 1, "transfer": 1}, "launch") if exe else {}
    tiny = {"pygpu": vals["pygpu k(d)"],
            "pygpu kernel[1, 32](a)": vals["pygpu kernels.add_one[g, b](d)"],
            "raw C": vals["raw C 2 args"],
            "raw C own process": theirs.get("launch_us")}
    if cp is not None:
        rkc = cp.RawKernel(r'''extern "C" __global__ void k(float *a, long long n) {
            long long i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1.0f; }''',
                           "k")
        ctiny = cp.zeros(32, dtype=cp.float32)
        tiny["CuPy RawKernel"] = launch_us(rkc, (1,), (32,), (ctiny, np.int64(32)))
        tiny["CuPy ufunc"] = launch_us(cp.add, ctiny, 1, ctiny)
    if nb is not None:
        ntiny = nb.to_device(np.zeros(32, np.float32))
        tiny["Numba"] = launch_us(numba_kernels(nb)["tiny"][1, 32], ntiny)
    if th is not None:
        ttiny = th.zeros(32, device="cuda")
        tiny["PyTorch add_"] = launch_us(ttiny.add_, 1)
    absent(tiny, "CuPy RawKernel", "CuPy ufunc", "Numba", "PyTorch add_")
    t.add("launch.tiny", "launch, host time per call", "tiny add_one", "us", "lower", tiny)

    def launch_sync():
        k(d)
        cuda.synchronize()
    vals = {"pygpu": launch_us(launch_sync, bursts=5 if smoke else 50, burst=20),
            "raw C": raw.get("launch_sync_us")}
    t.add("launch.sync", "launch + synchronize", "tiny add_one", "us", "lower", vals)

    # -- CUDA graph: capture N launches once, replay; per launch, replay and
    # synchronize against N `<<<>>>` and a synchronize (and raw C's own graph)
    n_launch = 16 if smoke else GRAPH_LAUNCHES
    vals = {"pygpu graph replay": None, "pygpu graph replay host part": None}
    graph = getattr(cuda, "graph", None)
    replay = None
    if graph is None:
        print("pygpu graph replay absent: pygpu.cuda.graph does not exist", file=sys.stderr)
    else:
        try:
            with graph() as g:
                for _ in range(n_launch):
                    k(d)
            cuda.synchronize()
            before = d.copy_to_host()
            g.replay()
            cuda.synchronize()
            if not np.array_equal(d.copy_to_host(), before + n_launch):
                print("WARNING: graph replay: wrong result", file=sys.stderr)
            replay = g.replay
        except Exception as exc:  # noqa: BLE001
            print(f"pygpu graph replay absent: {type(exc).__name__}: {exc}", file=sys.stderr)
    host_part = []

    def pygpu_graph(count):
        cuda.synchronize()
        t0 = time.perf_counter()
        replay()
        t1 = time.perf_counter()
        cuda.synchronize()
        host_part.append((t1 - t0) / count * 1e6)
        return (time.perf_counter() - t0) / count * 1e6
    forms = {}
    if replay is not None:
        forms["pygpu graph replay"] = pygpu_graph
    if lib is not None:
        forms["raw C <<<>>>"] = lambda c: lib.pg_raw_sync_burst(c)
        forms["raw C cudaGraphLaunch"] = lambda c: lib.pg_raw_graph_burst(c)
    if forms:
        vals.update(interleaved(forms, 5 if smoke else 100, n_launch))
    if host_part:
        vals["pygpu graph replay host part"] = median(host_part)
    for name in ("raw C <<<>>>", "raw C cudaGraphLaunch"):
        vals.setdefault(name, None)
    t.add("graph.replay", "CUDA graph replay, wall time per launch (replay + synchronize)",
          f"{n_launch} tiny add_one launches", "us", "lower", vals)


def bandwidth_rows(t, smoke, sizes, peers, raw, rng, reps):
    import pygpu
    from pygpu import cuda

    cp, nb, th = peers.get("cupy"), peers.get("numba"), peers.get("torch")
    n = sizes["vector"]
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    da, db = cuda.to_device(a), cuda.to_device(b)
    dc = pygpu.empty_like(da)
    gbs = lambda ms: 12 * n / (ms * 1e6)  # noqa: E731
    grid, block = cuda.launch_config(n)
    vals = {"pygpu": gbs(gpu_ms(lambda: pygpu.add(da, db, out=dc), reps)),
            "pygpu kernels.add[launch_config]": gbs(gpu_ms(
                lambda: pygpu.kernels.add[grid, block](da, db, dc), reps))}
    ok = np.array_equal(dc.copy_to_host()[-100000:], (a + b)[-100000:])
    vals.update({"pygpu d2d copy": 8 * n / (gpu_ms(lambda: dc.copy_to_device(da), reps) * 1e6),
                 "raw C": raw.get("add_gbs"), "raw C d2d copy": raw.get("d2d_gbs")})
    if cp is not None:
        ca, cb, cc = cp.asarray(a), cp.asarray(b), cp.empty(n, cp.float32)
        vals["CuPy"] = gbs(gpu_ms(lambda: cp.add(ca, cb, out=cc), reps))
        del ca, cb, cc
    if nb is not None:
        na, nb_, nc = nb.to_device(a), nb.to_device(b), nb.device_array(n, np.float32)
        kv = numba_kernels(nb)["vadd"]
        vals["Numba"] = gbs(gpu_ms(lambda: kv[(n + 255) // 256, 256](na, nb_, nc), reps))
        del na, nb_, nc
    if th is not None:
        ta, tb = th.from_numpy(a).cuda(), th.from_numpy(b).cuda()
        tc = th.empty_like(ta)
        vals["PyTorch"] = gbs(gpu_ms(lambda: th.add(ta, tb, out=tc), reps))
        del ta, tb, tc
    absent(vals, "CuPy", "Numba", "PyTorch")
    vals["NumPy"] = gbs(wall_ms(lambda: np.add(a, b, out=np.empty_like(a)), 3, 1))
    # every bandwidth row is judged against this one copy: raw C's, else pygpu's
    copy = {"d2d copy": vals["raw C d2d copy"] or vals["pygpu d2d copy"]}
    t.add("vector_add", "vector add, read + write", f"{n} float32", "GB/s", "higher", vals, copy)
    del da, db, dc
    if not ok:
        print("WARNING: vector add result wrong", file=sys.stderr)

    side = sizes["side"]
    A = rng.standard_normal((side, side), dtype=np.float32)
    dA = cuda.to_device(A)
    gbs2 = lambda ms: 8 * side * side / (ms * 1e6)  # noqa: E731
    g2, b2 = cuda.launch_config(dA.shape)
    vals = {"pygpu": gbs2(gpu_ms(lambda: pygpu.add_one(dA), reps)),
            "pygpu kernels.add_one[launch_config]": gbs2(gpu_ms(
                lambda: pygpu.kernels.add_one[g2, b2](dA), reps))}
    if cp is not None:
        cA = cp.asarray(A)

        def cp_add_one():
            cA.__iadd__(1)
        vals["CuPy"] = gbs2(gpu_ms(cp_add_one, reps))
        del cA
    if nb is not None:
        nA = nb.to_device(A)
        ka = numba_kernels(nb)["add_one"]
        grid_t = ((side + 15) // 16, (side + 15) // 16)
        vals["Numba"] = gbs2(gpu_ms(lambda: ka[grid_t, (16, 16)](nA), reps))
        del nA
    if th is not None:
        tA = th.from_numpy(A).cuda()
        vals["PyTorch"] = gbs2(gpu_ms(lambda: tA.add_(1), reps))
        del tA
    absent(vals, "CuPy", "Numba", "PyTorch")
    vals["NumPy"] = gbs2(wall_ms(lambda: np.add(A, 1, out=A), 3, 1))
    t.add("add_one", "add one in place, read + write", f"{side}^2 float32", "GB/s", "higher",
          vals, copy)
    del dA

    # -- add and add_one at the launches users write (fewer repeats: 36 figures)
    mreps = 3 if smoke else 10
    for dtype in (np.float32, np.float64, np.int32):
        name = np.dtype(dtype).name
        if np.dtype(dtype).kind == "f":
            x, y = a.astype(dtype), b.astype(dtype)
        else:
            x = rng.integers(-1000, 1000, n, dtype=dtype)
            y = rng.integers(-1000, 1000, n, dtype=dtype)
        dx, dy = cuda.to_device(x), cuda.to_device(y)
        dz = pygpu.empty_like(dx)
        moved = 3 * n * dx.itemsize
        vals = {}
        for label, (g, bl) in user_launches(n, n // side, side).items():
            k = pygpu.kernels.add[g, bl]
            vals[f"pygpu {label}"] = moved / (gpu_ms(lambda: k(dx, dy, dz), mreps) * 1e6)
            if not np.array_equal(dz.copy_to_host()[-100000:], (x + y)[-100000:]):
                print(f"WARNING: kernels.add[{label}] {name} result wrong", file=sys.stderr)
        t.add(f"add.any.{name}", "kernels.add[grid, block], any launch", f"{n} {name}", "GB/s",
              "higher", vals, copy)
        del dx, dy, dz
        X = x[:side * side].reshape(side, side)
        dX = cuda.to_device(X)
        moved = 2 * side * side * dX.itemsize
        vals = {}
        for label, (g, bl) in user_launches((side, side), side, side).items():
            k = pygpu.kernels.add_one[g, bl]
            dX.copy_to_device(X)
            k(dX)
            if not np.array_equal(dX.copy_to_host()[-16:], X[-16:] + 1):
                print(f"WARNING: kernels.add_one[{label}] {name} result wrong", file=sys.stderr)
            vals[f"pygpu {label}"] = moved / (gpu_ms(lambda: k(dX), mreps) * 1e6)
        t.add(f"add_one.any.{name}", "kernels.add_one[grid, block], any launch",
              f"{side}^2 {name}", "GB/s", "higher", vals, copy)
        del dX


def compute_rows(t, smoke, sizes, peers, rng, reps):
    """Issue 22's rows (benchmarks/compute.py)."""
    compute.elementwise_rows(t, smoke, sizes["vector"], peers, rng, reps, gpu_ms_rounds,
                             absent)
    compute.reduction_rows(t, smoke, sizes["vector"], sizes["side"], peers, rng, reps,
                           gpu_ms_rounds, absent)
    compute.host_cost_rows(t, smoke, peers, launch_us, absent)
    compute.first_call_rows(t, smoke)


def jit_rows(t, smoke, sizes, peers, lib, rng, reps):
    """Issue 24's rows: kernels written in Python (benchmarks/jit.py)."""
    jit.gpu_rows(t, smoke, sizes, peers, lib, rng, reps,
                 dict(interleaved=interleaved, python_burst=python_burst, launch_us=launch_us,
                      gpu_ms_rounds=gpu_ms_rounds, absent=absent))


def api_rows(t, smoke, peers, rng):
    """Issue 23's rows (benchmarks/api.py): sort, masks, random, FFT, inv/solve."""
    api.add_rows(t, smoke, peers, rng, gpu_ms_rounds, launch_us, absent)


def matmul_rows(t, smoke, sizes, peers, rng):
    import pygpu
    from pygpu import cuda

    cp, nb, th = peers.get("cupy"), peers.get("numba"), peers.get("torch")
    m = sizes["mat"]
    mreps = 3 if smoke else 10
    # pygpu's own kernels against Numba's tutorial kernels and cuBLAS
    for dtype in (np.float32, np.float64):
        X = rng.standard_normal((m, m)).astype(dtype)
        Y = rng.standard_normal((m, m)).astype(dtype)
        dX, dY = cuda.to_device(X), cuda.to_device(Y)
        dZ = pygpu.empty((m, m), dtype=dtype)
        tf = lambda ms: 2 * m**3 / (ms * 1e9)  # noqa: E731
        vals, forms = {}, {}
        for method in ("naive", "shared", "tiled"):
            try:
                pygpu.matmul(dX, dY, method=method, out=dZ)
            except (ValueError, TypeError):
                vals[f"pygpu {method}"] = None
                continue
            forms[f"pygpu {method}"] = lambda mm=method: pygpu.matmul(dX, dY, method=mm, out=dZ)
        if cp is not None:
            cX, cY = cp.asarray(X), cp.asarray(Y)
            cZ = cp.empty((m, m), dtype)
            forms["CuPy cuBLAS"] = lambda: cp.matmul(cX, cY, out=cZ)
        if nb is not None and dtype == np.float32:
            nX, nY = nb.to_device(X), nb.to_device(Y)
            nZ = nb.device_array((m, m), np.float32)
            kk = numba_kernels(nb)
            gridm = ((m + 15) // 16, (m + 15) // 16)
            forms["Numba naive"] = lambda: kk["matmul"][gridm, (16, 16)](nX, nY, nZ)
            forms["Numba shared"] = lambda: kk["fast_matmul"][gridm, (16, 16)](nX, nY, nZ)
        if th is not None:
            tX, tY = th.from_numpy(X).cuda(), th.from_numpy(Y).cuda()
            tZ = th.empty_like(tX)
            forms["PyTorch cuBLAS"] = lambda: th.matmul(tX, tY, out=tZ)
        vals.update({name: tf(ms) for name, ms in gpu_ms_rounds(forms, mreps).items()})
        del forms
        cX = cY = cZ = nX = nY = nZ = tX = tY = tZ = None  # noqa: F841 - the peers' memory goes
        absent(vals, "CuPy cuBLAS", "PyTorch cuBLAS",
               *(("Numba naive", "Numba shared") if dtype == np.float32 else ()))
        vals["NumPy"] = tf(wall_ms(lambda: X @ Y, 1, 1))
        name = np.dtype(dtype).name
        t.add(f"matmul.kernels.{name}", "matmul, pygpu.matmul(method=...)", f"{m}^3 {name}",
              "TFLOP/s", "higher", vals)
        del dX, dY, dZ

    # `a @ b` in every dtype against cuBLAS (CuPy's `a @ b`, PyTorch's). A
    # complex multiply-add is 8 real FLOPs: 8 m^3 for complex, 2 m^3 for real.
    for dtype in (np.float16, np.float32, np.float64, np.complex64, np.complex128):
        name = np.dtype(dtype).name
        X = rng.standard_normal((m, m)).astype(dtype)
        Y = rng.standard_normal((m, m)).astype(dtype)
        if np.dtype(dtype).kind == "c":
            X += 1j * rng.standard_normal((m, m)).astype(dtype)
            Y += 1j * rng.standard_normal((m, m)).astype(dtype)
        flop = (8 if np.dtype(dtype).kind == "c" else 2) * m**3
        tf = lambda ms: flop / (ms * 1e9)  # noqa: E731
        vals, forms = {"pygpu": None}, {}
        dX, dY = cuda.to_device(X), cuda.to_device(Y)
        wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
        ref = X[:16].astype(wide) @ Y.astype(wide)
        tol = {"float16": 1e-2, "float32": 1e-5, "complex64": 1e-5}.get(name, 1e-12)
        try:
            got = (dX @ dY).copy_to_host()[:16]
            err = np.linalg.norm(got.astype(wide) - ref) / np.linalg.norm(ref)
            if err > tol:
                print(f"WARNING: pygpu {name} a @ b: relative error {err:.2e}", file=sys.stderr)
            forms["pygpu"] = lambda: dX @ dY
        except (TypeError, ValueError, NotImplementedError) as exc:
            print(f"pygpu {name} a @ b absent: {type(exc).__name__}: {exc}", file=sys.stderr)
        if cp is not None:
            cX, cY = cp.asarray(X), cp.asarray(Y)
            forms["CuPy cuBLAS"] = lambda: cX @ cY
        if th is not None:
            tX, tY = th.from_numpy(X).cuda(), th.from_numpy(Y).cuda()
            forms["PyTorch cuBLAS"] = lambda: tX @ tY
        # budget: where cuBLAS is absent, pygpu's own kernel is slow in float64
        vals.update({n: tf(ms) for n, ms in gpu_ms_rounds(forms, mreps, budget_s=5).items()})
        del forms, dX, dY
        cX = cY = tX = tY = None  # noqa: F841 - the peers' memory goes
        absent(vals, "CuPy cuBLAS", "PyTorch cuBLAS")
        t.add(f"matmul.at.{name}", "matmul a @ b", f"{m}^3 {name}", "TFLOP/s", "higher", vals)


def transfer_rows(t, smoke, sizes, peers, raw, exe, rng):
    import pygpu
    from pygpu import cuda

    cp, nb, th = peers.get("cupy"), peers.get("numba"), peers.get("torch")
    nbytes = sizes["transfer"]
    host = rng.integers(0, 255, nbytes, dtype=np.uint8)
    gb = lambda ms: nbytes / (ms * 1e6)  # noqa: E731
    treps = 3 if smoke else 5
    dev_buf = cuda.to_device(host)
    vals_in = {"pygpu": gb(wall_ms(lambda: cuda.to_device(host), treps)),
               "raw C": raw.get("h2d_pageable_gbs")}
    vals_out = {"pygpu": gb(wall_ms(lambda: dev_buf.copy_to_host(), treps)),
                "raw C": raw.get("d2h_new_gbs"),
                "raw C (into touched memory)": raw.get("d2h_pageable_gbs")}
    assert np.array_equal(dev_buf.copy_to_host()[::4096], host[::4096])
    pinned = cuda.pinned_array(nbytes, np.uint8)
    pinned[:] = host
    vals_pin = {"pygpu in": gb(wall_ms(lambda: dev_buf.copy_to_device(pinned), treps)),
                "pygpu out": gb(wall_ms(lambda: dev_buf.copy_to_host(out=pinned), treps)),
                "raw C in": raw.get("h2d_pinned_gbs"), "raw C out": raw.get("d2h_pinned_gbs")}
    if cp is not None:
        vals_in["CuPy asarray"] = gb(wall_ms(lambda: cp.asarray(host), treps))
        cbuf = cp.asarray(host)
        vals_out["CuPy asnumpy"] = gb(wall_ms(lambda: cp.asnumpy(cbuf), treps))
        del cbuf
    if nb is not None:
        vals_in["Numba to_device"] = gb(wall_ms(lambda: nb.to_device(host), treps))
        nbuf = nb.to_device(host)
        vals_out["Numba copy_to_host"] = gb(wall_ms(lambda: nbuf.copy_to_host(), treps))
        del nbuf
    if th is not None:
        th_host = th.from_numpy(host)
        vals_in["PyTorch .cuda()"] = gb(wall_ms(lambda: th_host.cuda(), treps))
        tbuf = th_host.cuda()
        vals_out["PyTorch .cpu()"] = gb(wall_ms(lambda: tbuf.cpu(), treps))
        del tbuf
    absent(vals_in, "CuPy asarray", "Numba to_device", "PyTorch .cuda()")
    absent(vals_out, "CuPy asnumpy", "Numba copy_to_host", "PyTorch .cpu()")
    size_txt = f"{nbytes / 2**30:g} GiB" if nbytes >= 2**30 else f"{nbytes} B"
    # the pinned rate each way: raw C's cudaMemcpy, else pygpu's
    pin = {"pinned in": vals_pin["raw C in"] or vals_pin["pygpu in"],
           "pinned out": vals_pin["raw C out"] or vals_pin["pygpu out"]}
    t.add("h2d.pageable", "host to device, pageable", size_txt, "GB/s", "higher", vals_in, pin)
    t.add("d2h.new", "device to host, pageable, new array", size_txt, "GB/s", "higher",
          vals_out, pin)
    t.add("pinned", "pinned host <-> device", size_txt, "GB/s", "higher", vals_pin)
    del dev_buf, pinned

    # -- several devices -------------------------------------------------------------
    if len(cuda.gpus) >= 2:
        rawp = raw_c(exe, sizes, "peer")
        with cuda.gpus[1]:
            src1 = cuda.to_device(host)
        dst0 = pygpu.empty(nbytes, np.uint8)
        vals = {"pygpu": gb(wall_ms(lambda: dst0.copy_to_device(src1), treps)),
                "raw C cudaMemcpyPeer": rawp.get("peer_gbs")}
        assert np.array_equal(dst0.copy_to_host()[::4096], host[::4096])
        if cp is not None:
            with cp.cuda.Device(1):
                c1 = cp.asarray(host)
            with cp.cuda.Device(0):
                c0 = cp.empty(nbytes, cp.uint8)

            def cupy_peer():
                c0.data.copy_from_device(c1.data, nbytes)
                cp.cuda.Device(0).synchronize()
            vals["CuPy"] = gb(wall_ms(cupy_peer, treps))
            del c0, c1
        absent(vals, "CuPy")
        t.add("multi.peer_copy", "peer copy, device 1 to 0", size_txt, "GB/s", "higher", vals)
        del src1, dst0

        # two threads, each with its own device and job: little more than one job's time
        import threading
        m2 = 64 if smoke else 4096

        def job(device, reps=3 if smoke else 20):
            with cuda.gpus[device]:
                a = cuda.to_device(np.ones((m2, m2), np.float32))
                for _ in range(reps):
                    a = pygpu.matmul(a, a, method="tiled") * np.float32(1.0 / m2)
                cuda.synchronize()

        def both():
            ts = [threading.Thread(target=job, args=(i,)) for i in (0, 1)]
            for th_ in ts:
                th_.start()
            for th_ in ts:
                th_.join()
        job(0)
        job(1)
        one = wall_ms(lambda: job(0), 3)
        two = wall_ms(both, 3)
        t.add("multi.two_threads", "two threads on two GPUs, one job each",
              f"20 x {m2}^3 matmul", "ms", "lower",
              {"pygpu one job on one GPU": one, "pygpu two jobs on two GPUs": two})


def host_rows(t, smoke, sizes, peers, raw):
    import pygpu

    cp, nb, th = peers.get("cupy"), peers.get("numba"), peers.get("torch")
    na = sizes["alloc"]
    vals = {"pygpu": launch_us(pygpu.empty, na, np.uint8, bursts=5 if smoke else 100),
            "raw C cudaMalloc+cudaFree": raw.get("malloc_free_us"),
            "raw C cudaMallocAsync+cudaFreeAsync": raw.get("malloc_async_free_async_us")}
    if cp is not None:
        vals["CuPy"] = launch_us(cp.empty, na, cp.uint8)
    if nb is not None:
        vals["Numba"] = launch_us(nb.device_array, na, np.uint8, bursts=20)
    if th is not None:
        vals["PyTorch"] = launch_us(functools.partial(th.empty, dtype=th.uint8, device="cuda"),
                                    na)
    absent(vals, "CuPy", "Numba", "PyTorch")
    t.add("alloc", "allocate + free", f"{na} B", "us", "lower", vals)

    def import_s(mod):
        best_t = float("inf")
        env = dict(os.environ)
        for _ in range(3 if smoke else 10):
            r = subprocess.run([sys.executable, "-c",
                                f"import time; t=time.perf_counter(); import {mod}; "
                                "print(time.perf_counter()-t)"],
                               capture_output=True, text=True, env=env)
            if r.returncode != 0:
                return None
            best_t = min(best_t, float(r.stdout.strip()))
        return best_t * 1e3
    base = import_s("numpy")
    vals = {"pygpu": import_s("numpy, pygpu"), "NumPy": base}
    vals["CuPy"] = import_s("numpy, cupy") if cp is not None else None
    vals["Numba"] = import_s("numpy, numba.cuda") if peers.get("numba") else None
    vals["PyTorch"] = import_s("numpy, torch") if th is not None else None
    t.add("import", "import (with numpy)", "", "ms", "lower", vals)


# ---- one run ---------------------------------------------------------------------------

def run(args):
    """Run the benchmark: (Table, metadata)."""
    smoke = args.smoke
    from pygpu import cuda

    if args.sim:
        t = Table(smoke=smoke, simulator=True, target_list=targets.load_targets(args.targets))
        print(f"simulator rows on {cpu_name()}", flush=True)
        sim.add_rows(t, smoke)
        jit.sim_rows(t, smoke)
        return t, metadata(args, "pygpu simulator (CPU)", True, ["sim"], {}, {})

    if not cuda.is_available():
        if not smoke:
            sys.exit("no GPU: use --smoke to run the benchmark on the simulator, or --sim for "
                     "the simulator rows alone")
        os.environ["PYGPU_SIMULATOR"] = "1"
    simulator = cuda.is_simulator()
    dev = cuda.get_current_device()
    sizes = dict(vector=1 << 12, side=64, mat=48, transfer=1 << 20, alloc=1 << 20) if smoke \
        else dict(vector=1 << 28, side=16384, mat=4096, transfer=1 << 30, alloc=1 << 20)
    peers = load_peers(smoke)
    exe, lib_path = (None, None) if (smoke or simulator) else build_raw_c()
    raw = raw_c(exe, sizes)
    lib = raw_lib(lib_path)
    reps = 3 if smoke else 20
    rng = np.random.default_rng(0)
    t = Table(smoke=smoke, simulator=simulator, target_list=targets.load_targets(args.targets))
    print(f"device: {dev.name}; peers: "
          f"{', '.join(sorted(peers)) or 'none'}; raw C: {'yes' if raw else 'absent'}, "
          f"in process: {'yes' if lib else 'absent'}", flush=True)

    sections = ["gpu"] + (["multi"] if len(cuda.gpus) >= 2 else [])
    # SIGTERM (`timeout`) or Ctrl-C ends the run early with the rows measured so
    # far, which are saved and judged as usual: the rows not reached count as
    # not run
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        # the current round's rows first (issues 22-24), so that a run cut
        # short still judges them; each row measures its own references
        compute_rows(t, smoke, sizes, peers, rng, reps)
        api_rows(t, smoke, peers, np.random.default_rng(23))  # the rows after keep their data
        jit_rows(t, smoke, sizes, peers, lib, rng, reps)
        launch_rows(t, smoke, exe, lib, peers, raw)
        bandwidth_rows(t, smoke, sizes, peers, raw, rng, reps)
        matmul_rows(t, smoke, sizes, peers, rng)
        transfer_rows(t, smoke, sizes, peers, raw, exe, rng)
        host_rows(t, smoke, sizes, peers, raw)
        if not args.no_sim:
            sim.add_rows(t, smoke)
            jit.sim_rows(t, smoke)
            sections.append("sim")
    except KeyboardInterrupt:
        print(f"\nstopped early: {len(t.rows)} rows measured; the rest count as not run",
              flush=True)
        sections.append("partial")
    versions = {name: getattr(mod, "__version__", "?") for name, mod in
                (("CuPy", peers.get("cupy")), ("PyTorch", peers.get("torch"))) if mod}
    if peers.get("numba"):
        import numba

        versions["Numba"] = numba.__version__
    name = dev.name if "simulator" in dev.name or not simulator else dev.name + " (simulator)"
    return t, metadata(args, name, simulator,
                       sections, raw, versions)


def cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def git_commit():
    """The commit measured: PYGPU_BENCH_COMMIT where set (a copy of the tree
    without its .git), else git's HEAD, "+changes" if the tree differs from it."""
    if os.environ.get("PYGPU_BENCH_COMMIT"):
        return os.environ["PYGPU_BENCH_COMMIT"]
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if not sha:
        return "unknown"
    return sha + ("+changes" if dirty.strip() else "")


def metadata(args, device, simulator, sections, raw, versions):
    import pygpu

    return dict(format=1, device=device, simulator=simulator, smoke=bool(args.smoke),
                sections=sections, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                commit=git_commit(), pygpu=pygpu.__version__, numpy=np.__version__,
                python=sys.version.split()[0], cpu=cpu_name(), peers=versions, raw=raw)


def save(path, t, meta):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.parent == HERE / "results":
        (path.parent / ".gitignore").write_text("*\n")  # results stay out of git
    path.write_text(json.dumps(dict(meta, rows=t.rows), indent=1))


def load(path, target_list=None):
    """A saved run: (Table, metadata)."""
    data = json.loads(Path(path).read_text())
    rows = data.pop("rows")
    t = Table(smoke=data.get("smoke", False), simulator=data.get("simulator", False),
              target_list=target_list)
    for r in rows:
        r = dict(r)
        r.setdefault("id", "")
        r.setdefault("refs", {})
        r.update(t.judged(r))
        t.rows.append(r)
    return t, data


def header(meta):
    peers = ", ".join(f"{k} {v}" for k, v in meta.get("peers", {}).items())
    return (f"pygpu benchmark, {meta['device']}, {meta['date']}, commit {meta['commit']}, "
            f"pygpu {meta['pygpu']}, NumPy {meta['numpy']}, Python {meta['python']}"
            + (f", {peers}" if peers else "") + f"; CPU {meta['cpu']}")


def plot(t, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels, ratios = [], []
    for r in t.rows:
        if targets.section_of(r.get("id", "")) == "sim":
            continue  # thousands of times Numba's simulator: another scale
        v = r["values"]
        peers = {k: x for k, x in v.items() if x and not k.startswith("pygpu")
                 and not k.startswith("NumPy") and not k.startswith("raw C")}
        if not peers or not v.get("pygpu"):
            continue
        bestp = (max if r["better"] == "higher" else min)(peers.values())
        ratio = v["pygpu"] / bestp if r["better"] == "higher" else bestp / v["pygpu"]
        labels.append(f"{r['measure']}\n{r['size']}")
        ratios.append(ratio)
    if not labels:
        print(f"no plot: no row of this run has a peer to compare with ({path})")
        return False
    fig, ax = plt.subplots(figsize=(10, 0.5 + 0.6 * len(labels)))
    ax.barh(labels, ratios, color=["tab:green" if x >= 1 else "tab:red" for x in ratios])
    ax.axvline(1.0, color="black", lw=1)
    ax.set_xlabel("pygpu speed / best peer's (higher is better)")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def markdown(t, meta, plot_path=None):
    """The run as a section of docs/PERFORMANCE.md: where and when, the table,
    the plot, and the targets missed."""
    lines = [f"From `python -m benchmarks` on **{meta['device']}**, **{meta['date']}**, "
             f"commit **{meta['commit']}** (pygpu {meta['pygpu']}, NumPy {meta['numpy']}, "
             f"Python {meta['python']}; CPU {meta['cpu']}"
             + "".join(f", {k} {v}" for k, v in meta.get("peers", {}).items()) + ").", "",
             t.render(), ""]
    if plot_path:
        lines += [f"![pygpu speed over the best peer's, per measure]({plot_path})", ""]
    if not meta.get("smoke"):
        outcomes = targets.judge(t.targets, dict(meta, rows=t.rows))
        missed = [o for o in outcomes if o["status"] == "missed"]
        met = sum(o["status"] == "met" for o in outcomes)
        lines.append(f"Targets (benchmarks/targets.toml): {met} met, {len(missed)} missed"
                     + (":" if missed else "."))
        lines += [f"- `{o['target']['row']}`: {o['target']['metric']} = {o['text']} (target "
                  f"{o['target']['op']} {o['target']['threshold']:g})" for o in missed]
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="tiny sizes; the simulator is fine")
    p.add_argument("--sim", action="store_true",
                   help="only the simulator rows (CPU; runs on any machine)")
    p.add_argument("--no-sim", action="store_true", help="leave out the simulator rows")
    p.add_argument("--plot", metavar="PNG", help="write a bar chart of ratios to PNG")
    p.add_argument("--json", metavar="FILE", help="write every row and the run's machine, "
                   "date and commit to FILE (a full or --sim run also writes "
                   "benchmarks/results/latest.json)")
    p.add_argument("--markdown", metavar="FILE",
                   help="write the run as a section for docs/PERFORMANCE.md to FILE")
    p.add_argument("--check", metavar="RESULTS", nargs="?", const="",
                   help="run nothing: judge a saved run (default: the latest) against "
                   "benchmarks/targets.toml; exit 1 if a target is missed")
    p.add_argument("--targets", metavar="TOML", default=str(targets.TARGETS),
                   help="the targets (default: benchmarks/targets.toml)")
    p.add_argument("--from", dest="source", metavar="RESULTS",
                   help="run nothing: print (and plot, write) a saved run")
    args = p.parse_args(argv)
    if args.check is not None:
        return targets.check(args.check or None, args.targets)
    if args.source:
        t, meta = load(args.source, targets.load_targets(args.targets))
    else:
        t, meta = run(args)
        if not args.smoke:
            save(targets.LATEST, t, meta)
        if args.json:
            save(args.json, t, meta)
    print(f"\n{header(meta)}\n")
    print(t.render())
    if args.plot and plot(t, args.plot) is not False:
        print(f"plot written to {args.plot}")
    if args.markdown:
        Path(args.markdown).write_text(markdown(t, meta, args.plot))
        print(f"markdown written to {args.markdown}")
    if not args.source and not args.smoke:
        print(f"\nresults saved to {targets.LATEST}; `python -m benchmarks --check` judges them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
