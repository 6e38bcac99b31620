"""pygpu against raw CUDA C, CuPy, Numba, PyTorch and NumPy, in one run.

    python -m benchmarks            # full sizes, on a GPU
    python -m benchmarks --smoke    # tiny sizes; runs on the simulator too (CI)
    python -m benchmarks --plot bench.png --json bench.json

Prints one table: each measure, pygpu, each peer (or "absent"), the ratio of
pygpu to the best peer, and the target from issue 5 with whether it was met.
GPU times come from CUDA events around the region (median of many repeats,
after a warm-up); host launch cost is the median per launch over bursts of
256 launches with a synchronize between bursts; transfers are wall-clock
medians of synchronous copies. Ratios within one run are the figures that
count. See docs/PERFORMANCE.md.
"""

import argparse
import atexit
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PEERS = ["raw C", "CuPy", "Numba", "PyTorch", "NumPy"]


# ---- timing helpers ----------------------------------------------------------------

def median(xs):
    return statistics.median(xs)


def gpu_ms(fn, reps=20, warmup=2):
    """Median milliseconds of fn() between two events on the default stream."""
    from pygpu import cuda

    for _ in range(warmup):
        fn()
    cuda.synchronize()
    a, b = cuda.event(), cuda.event()
    times = []
    for _ in range(reps):
        a.record(0)
        fn()
        b.record(0)
        b.synchronize()
        times.append(a.elapsed_time(b))
    return median(times)


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
    """Build benchmarks/raw.cu; the executable's path, or None without nvcc."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists():
        return None
    tmp = tempfile.mkdtemp(prefix="pygpu-bench-")
    atexit.register(shutil.rmtree, tmp, True)
    exe = Path(tmp) / "raw"
    r = subprocess.run([nvcc, "-O3", "-std=c++17", "-gencode", "arch=compute_90,code=sm_90",
                        "-gencode", "arch=compute_80,code=sm_80", str(HERE / "raw.cu"), "-o",
                        str(exe)], capture_output=True, text=True)
    if r.returncode != 0:
        print("raw C: build failed:", r.stderr[-2000:], file=sys.stderr)
        return None
    return exe


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


NUMBA_KERNELS = {}


def numba_kernels(ncuda):
    """The tutorial kernels, as a Numba user writes them."""
    if NUMBA_KERNELS:
        return NUMBA_KERNELS
    from numba import float32

    TPB = 16

    @ncuda.jit
    def add_one(A):
        x, y = ncuda.grid(2)
        if x < A.shape[0] and y < A.shape[1]:
            A[x, y] += 1

    @ncuda.jit
    def vadd(a, b, out):
        i = ncuda.grid(1)
        if i < out.size:
            out[i] = a[i] + b[i]

    @ncuda.jit
    def tiny(a):
        i = ncuda.grid(1)
        if i < a.size:
            a[i] += 1

    @ncuda.jit
    def matmul(A, B, C):
        i, j = ncuda.grid(2)
        if i < C.shape[0] and j < C.shape[1]:
            tmp = 0.0
            for k in range(A.shape[1]):
                tmp += A[i, k] * B[k, j]
            C[i, j] = tmp

    @ncuda.jit
    def fast_matmul(A, B, C):
        sA = ncuda.shared.array(shape=(TPB, TPB), dtype=float32)
        sB = ncuda.shared.array(shape=(TPB, TPB), dtype=float32)
        x, y = ncuda.grid(2)
        tx = ncuda.threadIdx.x
        ty = ncuda.threadIdx.y
        bpg = ncuda.gridDim.x
        tmp = float32(0.0)
        for i in range(bpg):
            sA[ty, tx] = 0
            sB[ty, tx] = 0
            if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
                sA[ty, tx] = A[y, tx + i * TPB]
            if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
                sB[ty, tx] = B[ty + i * TPB, x]
            ncuda.syncthreads()
            for j in range(TPB):
                tmp += sA[ty, j] * sB[j, tx]
            ncuda.syncthreads()
        if y < C.shape[0] and x < C.shape[1]:
            C[y, x] = tmp

    NUMBA_KERNELS.update(add_one=add_one, vadd=vadd, tiny=tiny, matmul=matmul,
                         fast_matmul=fast_matmul)
    return NUMBA_KERNELS


# ---- the measures ----------------------------------------------------------------------

class Table:
    def __init__(self, judge=True):
        self.rows = []
        self.judge = judge  # no targets are judged on smoke sizes or the simulator

    def add(self, measure, size, unit, better, values, target=None, check=None):
        """values: name -> number or None; check(values) -> (ratio text, met)."""
        row = dict(measure=measure, size=size, unit=unit, better=better, values=values,
                   target=target or "", ratio="", met="")
        if check is not None and not self.judge:
            row["ratio"], row["met"] = "n/a", "n/a (smoke)"
        elif check is not None:
            try:
                ratio, met = check(values)
                row["ratio"], row["met"] = ratio, ("yes" if met else "NO")
            except (TypeError, ZeroDivisionError, KeyError):
                row["ratio"], row["met"] = "n/a", "n/a"
        self.rows.append(row)
        print(f"  {measure} [{size}]: " + ", ".join(
            f"{k} {fmt(v)}" for k, v in values.items()), flush=True)

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


def best(values, prefix, higher=True):
    xs = [v for k, v in values.items() if k.startswith(prefix) and v is not None]
    if not xs:
        return None
    return max(xs) if higher else min(xs)


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


def run(args):
    smoke = args.smoke
    import pygpu
    from pygpu import cuda

    if not cuda.is_available():
        if not smoke:
            sys.exit("no GPU: use --smoke to run the benchmark on the simulator")
        os.environ["PYGPU_SIMULATOR"] = "1"
    sim = cuda.is_simulator()
    dev = cuda.get_current_device()
    sizes = dict(vector=1 << 12, side=64, mat=48, transfer=1 << 20, alloc=1 << 20) if smoke \
        else dict(vector=1 << 28, side=16384, mat=4096, transfer=1 << 30, alloc=1 << 20)
    peers = load_peers(smoke)
    exe = None if (smoke or sim) else build_raw_c()
    raw = raw_c(exe, sizes)
    cp, nb, th = peers.get("cupy"), peers.get("numba"), peers.get("torch")
    reps = 3 if smoke else 20
    rng = np.random.default_rng(0)
    t = Table(judge=not (smoke or sim))
    print(f"device: {dev.name}{' (simulator)' if sim else ''}; peers: "
          f"{', '.join(sorted(peers)) or 'none'}; raw C: {'yes' if raw else 'absent'}",
          flush=True)

    # -- launch overhead ------------------------------------------------------------
    tiny = pygpu.zeros(32, dtype=np.float32)
    k = pygpu.kernels.add_one[1, 32]
    # Host launch times drift by tens of percent between runs, on both sides:
    # three rounds, raw C and pygpu in turn, and the median of each.
    rounds = 1 if smoke else 3
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(launch_us(k, tiny, bursts=5 if smoke else 100))
        theirs.append(raw_c(exe, sizes, "launch").get("launch_us") if exe else None)
    vals = {"pygpu": median(ours),
            "pygpu kernel[1, 32](a)": launch_us(lambda: pygpu.kernels.add_one[1, 32](tiny),
                                                bursts=5 if smoke else 100),
            "raw C": median(theirs) if None not in theirs else None}
    if cp is not None:
        rk = cp.RawKernel(r'''extern "C" __global__ void k(float *a, long long n) {
            long long i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1.0f; }''',
                          "k")
        ctiny = cp.zeros(32, dtype=cp.float32)
        vals["CuPy RawKernel"] = launch_us(rk, (1,), (32,), (ctiny, np.int64(32)))
        vals["CuPy ufunc"] = launch_us(cp.add, ctiny, 1, ctiny)
    if nb is not None:
        ntiny = nb.to_device(np.zeros(32, np.float32))
        kn = numba_kernels(nb)["tiny"]
        vals["Numba"] = launch_us(kn[1, 32], ntiny)
    if th is not None:
        ttiny = th.zeros(32, device="cuda")
        vals["PyTorch add_"] = launch_us(ttiny.add_, 1)
    t.add("launch, host time per call", "tiny add_one", "us", "lower", vals,
          "<= 1.15x raw C, < CuPy RawKernel",
          lambda v: (f"{v['pygpu'] / v['raw C']:.2f}x raw C",
                     v["pygpu"] <= 1.15 * v["raw C"] and v["pygpu"] < v["CuPy RawKernel"]))

    def launch_sync():
        k(tiny)
        cuda.synchronize()
    vals = {"pygpu": launch_us(launch_sync, bursts=5 if smoke else 50, burst=20),
            "raw C": raw.get("launch_sync_us")}
    t.add("launch + synchronize", "tiny add_one", "us", "lower", vals)

    # -- bandwidth -------------------------------------------------------------------
    n = sizes["vector"]
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    da, db = cuda.to_device(a), cuda.to_device(b)
    dc = pygpu.empty_like(da)
    gbs = lambda ms: 12 * n / (ms * 1e6)  # noqa: E731
    grid, block = cuda.launch_config(n, 256)
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
    vals["NumPy"] = gbs(wall_ms(lambda: np.add(a, b, out=np.empty_like(a)), 3, 1))
    copy_ref = vals["raw C d2d copy"] or vals["pygpu d2d copy"]
    t.add("vector add, read + write", f"{n} float32", "GB/s", "higher", vals,
          ">= 0.95x d2d copy, >= best peer",
          lambda v: (f"{v['pygpu'] / copy_ref:.2f}x copy",
                     v["pygpu"] >= 0.95 * copy_ref and v["pygpu"] >= max(
                         x for kk, x in v.items() if x and kk in ("CuPy", "Numba",
                                                                  "PyTorch", "raw C"))))
    del da, db, dc
    if not ok:
        print("WARNING: vector add result wrong", file=sys.stderr)

    side = sizes["side"]
    A = rng.standard_normal((side, side), dtype=np.float32)
    dA = cuda.to_device(A)
    gbs2 = lambda ms: 8 * side * side / (ms * 1e6)  # noqa: E731
    g2, b2 = cuda.launch_config(dA.shape, (16, 16))
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
    vals["NumPy"] = gbs2(wall_ms(lambda: np.add(A, 1, out=A), 3, 1))
    t.add("add one in place, read + write", f"{side}^2 float32", "GB/s", "higher", vals,
          ">= 0.95x d2d copy, >= best peer",
          lambda v: (f"{v['pygpu'] / copy_ref:.2f}x copy",
                     v["pygpu"] >= 0.95 * copy_ref and v["pygpu"] >= max(
                         x for kk, x in v.items() if x and kk in ("CuPy", "Numba", "PyTorch"))))
    del dA

    # -- add and add_one at the launches users write ----------------------------------
    # every figure of a row against the same d2d copy; the row's ratio is its worst
    def any_launch(v):
        worst = min((k for k in v if k.startswith("pygpu ")), key=v.get)
        return (f"{v[worst] / copy_ref:.2f}x copy (worst: {worst[6:]})",
                v[worst] >= 0.90 * copy_ref)

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
            vals[f"pygpu {label}"] = moved / (gpu_ms(lambda: k(dx, dy, dz), reps) * 1e6)
            if not np.array_equal(dz.copy_to_host()[-100000:], (x + y)[-100000:]):
                print(f"WARNING: kernels.add[{label}] {name} result wrong", file=sys.stderr)
        t.add("kernels.add[grid, block], any launch", f"{n} {name}", "GB/s", "higher", vals,
              ">= 0.90x d2d copy at each", any_launch)
        del dx, dy, dz
        dX = cuda.to_device(x[:side * side].reshape(side, side))
        moved = 2 * side * side * dX.itemsize
        vals = {}
        for label, (g, bl) in user_launches((side, side), side, side).items():
            k = pygpu.kernels.add_one[g, bl]
            vals[f"pygpu {label}"] = moved / (gpu_ms(lambda: k(dX), reps) * 1e6)
        t.add("kernels.add_one[grid, block], any launch", f"{side}^2 {name}", "GB/s",
              "higher", vals, ">= 0.90x d2d copy at each", any_launch)
        del dX

    # -- matrix multiply -----------------------------------------------------------------
    m = sizes["mat"]
    for dtype in (np.float32, np.float64):
        X = rng.standard_normal((m, m)).astype(dtype)
        Y = rng.standard_normal((m, m)).astype(dtype)
        dX, dY = cuda.to_device(X), cuda.to_device(Y)
        dZ = pygpu.empty((m, m), dtype=dtype)
        tf = lambda ms: 2 * m**3 / (ms * 1e9)  # noqa: E731
        mreps = 3 if smoke else 10
        vals = {}
        for method in ("naive", "shared", "tiled"):
            try:
                pygpu.matmul(dX, dY, method=method, out=dZ)
            except ValueError:
                vals[f"pygpu {method}"] = None
                continue
            vals[f"pygpu {method}"] = tf(gpu_ms(
                lambda mm=method: pygpu.matmul(dX, dY, method=mm, out=dZ), mreps))
        vals["pygpu"] = tf(gpu_ms(lambda: dX @ dY, mreps))
        ref = X.astype(np.float64) @ Y.astype(np.float64)
        err = np.linalg.norm((dX @ dY).copy_to_host() - ref) / np.linalg.norm(ref)
        if err > (1e-5 if dtype == np.float32 else 1e-12):
            print(f"WARNING: matmul error {err:.2e}", file=sys.stderr)
        if cp is not None:
            cX, cY = cp.asarray(X), cp.asarray(Y)
            cZ = cp.empty((m, m), dtype)
            vals["CuPy cuBLAS"] = tf(gpu_ms(lambda: cp.matmul(cX, cY, out=cZ), mreps))
            del cX, cY, cZ
        if nb is not None and dtype == np.float32:
            nX, nY = nb.to_device(X), nb.to_device(Y)
            nZ = nb.device_array((m, m), np.float32)
            kk = numba_kernels(nb)
            gridm = ((m + 15) // 16, (m + 15) // 16)
            vals["Numba naive"] = tf(gpu_ms(lambda: kk["matmul"][gridm, (16, 16)](nX, nY, nZ),
                                            3))
            vals["Numba shared"] = tf(gpu_ms(
                lambda: kk["fast_matmul"][gridm, (16, 16)](nX, nY, nZ), mreps))
            del nX, nY, nZ
        if th is not None:
            tX, tY = th.from_numpy(X).cuda(), th.from_numpy(Y).cuda()
            tZ = th.empty_like(tX)
            vals["PyTorch cuBLAS"] = tf(gpu_ms(lambda: th.matmul(tX, tY, out=tZ), mreps))
            del tX, tY, tZ
        vals["NumPy"] = tf(wall_ms(lambda: X @ Y, 1, 1))
        name = np.dtype(dtype).name
        if dtype == np.float32:
            def check(v):
                blas = best(v, "CuPy cuBLAS") or best(v, "PyTorch cuBLAS")
                r = (v["pygpu naive"] / v["Numba naive"], v["pygpu shared"] / v["Numba shared"],
                     (v["pygpu tiled"] or 0) / blas)
                return (f"naive {r[0]:.2f}x, shared {r[1]:.2f}x Numba; tiled {r[2]:.2f}x "
                        f"cuBLAS", r[0] >= 2 and r[1] >= 1.5 and r[2] >= 0.85)
            t.add("matmul", f"{m}^3 {name}", "TFLOP/s", "higher", vals,
                  "naive >= 2x, shared >= 1.5x Numba's; tiled >= 0.85x cuBLAS", check)
        else:
            t.add("matmul", f"{m}^3 {name}", "TFLOP/s", "higher", vals, "(reported)",
                  lambda v: (f"{v['pygpu'] / (best(v, 'CuPy') or best(v, 'PyTorch')):.2f}x "
                             "cuBLAS", True))
        del dX, dY, dZ

    # -- transfers -----------------------------------------------------------------------
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
    size_txt = f"{nbytes / 2**30:g} GiB" if nbytes >= 2**30 else f"{nbytes} B"
    t.add("host to device, pageable", size_txt, "GB/s", "higher", vals_in,
          ">= 2x CuPy asarray",
          lambda v: (f"{v['pygpu'] / v['CuPy asarray']:.2f}x CuPy",
                     v["pygpu"] >= 2 * v["CuPy asarray"]))
    t.add("device to host, pageable, new array", size_txt, "GB/s", "higher", vals_out,
          ">= 3x CuPy asnumpy",
          lambda v: (f"{v['pygpu'] / v['CuPy asnumpy']:.2f}x CuPy",
                     v["pygpu"] >= 3 * v["CuPy asnumpy"]))
    t.add("pinned host <-> device", size_txt, "GB/s", "higher", vals_pin,
          ">= 0.95x raw cudaMemcpy",
          lambda v: (f"in {v['pygpu in'] / v['raw C in']:.2f}x, out "
                     f"{v['pygpu out'] / v['raw C out']:.2f}x raw",
                     v["pygpu in"] >= 0.95 * v["raw C in"]
                     and v["pygpu out"] >= 0.95 * v["raw C out"]))
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
        t.add("peer copy, device 1 to 0", size_txt, "GB/s", "higher", vals,
              ">= 0.95x raw cudaMemcpyPeer",
              lambda v: (f"{v['pygpu'] / v['raw C cudaMemcpyPeer']:.2f}x raw",
                         v["pygpu"] >= 0.95 * v["raw C cudaMemcpyPeer"]))
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
        t.add("two threads on two GPUs, one job each", f"20 x {m2}^3 matmul", "ms", "lower",
              {"pygpu one job, one GPU": one, "pygpu two jobs, two GPUs": two},
              "<= 1.15x one job",
              lambda v: (f"{v['pygpu two jobs, two GPUs'] / v['pygpu one job, one GPU']:.2f}x "
                         "one job",
                         v["pygpu two jobs, two GPUs"] <= 1.15 * v["pygpu one job, one GPU"]))

    # -- allocation --------------------------------------------------------------------
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
    t.add("allocate + free", f"{na} B", "us", "lower", vals, "<= 0.5x CuPy",
          lambda v: (f"{v['pygpu'] / v['CuPy']:.2f}x CuPy", v["pygpu"] <= 0.5 * v["CuPy"]))

    # -- import --------------------------------------------------------------------------
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
    if not smoke:
        vals["CuPy"] = import_s("numpy, cupy") if cp is not None else None
        vals["Numba"] = import_s("numpy, numba.cuda") if nb is not None else None
        vals["PyTorch"] = import_s("numpy, torch") if th is not None else None
    t.add("import (with numpy)", "", "ms", "lower", vals, "<= numpy + 50 ms",
          lambda v: (f"+{v['pygpu'] - v['NumPy']:.0f} ms over numpy",
                     v["pygpu"] - v["NumPy"] <= 50))
    return t, dev, raw


def plot(t, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels, ratios = [], []
    for r in t.rows:
        v = r["values"]
        peers = {k: x for k, x in v.items() if x and not k.startswith("pygpu")
                 and not k.startswith("NumPy") and not k.startswith("raw C")}
        if not peers or not v.get("pygpu"):
            continue
        bestp = (max if r["better"] == "higher" else min)(peers.values())
        ratio = v["pygpu"] / bestp if r["better"] == "higher" else bestp / v["pygpu"]
        labels.append(f"{r['measure']}\n{r['size']}")
        ratios.append(ratio)
    fig, ax = plt.subplots(figsize=(10, 0.5 + 0.6 * len(labels)))
    ax.barh(labels, ratios, color=["tab:green" if x >= 1 else "tab:red" for x in ratios])
    ax.axvline(1.0, color="black", lw=1)
    ax.set_xlabel("pygpu speed / best peer's (higher is better)")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="tiny sizes; the simulator is fine")
    p.add_argument("--plot", metavar="PNG", help="write a bar chart of ratios to PNG")
    p.add_argument("--json", metavar="FILE", help="write the raw figures to FILE")
    args = p.parse_args(argv)
    t, dev, raw = run(args)
    import pygpu

    stamp = time.strftime("%Y-%m-%d")
    print(f"\npygpu benchmark, {dev.name}, {stamp}, pygpu {pygpu.__version__}, "
          f"NumPy {np.__version__}, Python {sys.version.split()[0]}\n")
    print(t.render())
    if args.json:
        Path(args.json).write_text(json.dumps(dict(device=dev.name, date=stamp, raw=raw,
                                                   rows=t.rows), indent=1))
    if args.plot:
        plot(t, args.plot)
        print(f"plot written to {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
