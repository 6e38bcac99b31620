"""Issue 22's rows: the generated elementwise kernels (and, where they exist,
the reductions) against CuPy and PyTorch, as ratios to the device-to-device
copy's bandwidth measured in the same run; the host cost of one small call;
the first call of a new op with an empty cache and with the disk cache.

Bytes count each read and each write once: `sin(x)` of n float32 moves 8n.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

# the first call, timed whole; NVRTC's part of it (wall and the process's
# user CPU seconds) goes to the log beside it
FIRST_CALL = r"""
import resource, time, numpy as np, pygpu
from pygpu import _core
d = pygpu.asarray(np.arange(1024, dtype=np.{dtype}))
pygpu.cuda.synchronize()
nvrtc = [0.0, 0.0]
compile_ = _core._nvrtc_compile
def timed(*args):
    t0, u0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF).ru_utime
    try:
        return compile_(*args)
    finally:
        nvrtc[0] += time.perf_counter() - t0
        nvrtc[1] += resource.getrusage(resource.RUSAGE_SELF).ru_utime - u0
_core._nvrtc_compile = timed
t = time.perf_counter()
pygpu.{op}(d)
pygpu.cuda.synchronize()
print(f"{{time.perf_counter() - t}} {{nvrtc[0]}} {{nvrtc[1]}}")
"""


def _first_call_s(op, dtype, cache, env):
    r = subprocess.run([sys.executable, "-c", FIRST_CALL.format(op=op, dtype=dtype)],
                       capture_output=True, text=True,
                       env=dict(env, PYGPU_CACHE_DIR=cache), timeout=600)
    if r.returncode != 0:
        print(f"first call of {op} failed: {r.stderr[-400:]}", file=sys.stderr)
        return None
    total, nvrtc, user = (float(v) for v in r.stdout.strip().splitlines()[-1].split())
    print(f"  first call of {op} {dtype}: {total:.4f} s, of which NVRTC {nvrtc:.4f} s "
          f"({user:.4f} s of user CPU time)", file=sys.stderr, flush=True)
    return total


def first_call_rows(t, smoke):
    """A new op and dtype in a fresh process: compiled (empty cache), then
    loaded from the disk cache (median of 3 fresh processes each)."""
    env = dict(os.environ)
    compiles, cached = [], []
    for op, dtype in ([("sin", "float32"), ("arctan", "float64"),
                       ("cbrt", "float32")][:1 if smoke else 3]):
        with tempfile.TemporaryDirectory(prefix="pygpu-bench-cache-") as cache:
            compiles.append(_first_call_s(op, dtype, cache, env))
            cached.append(min(filter(None, [_first_call_s(op, dtype, cache, env)
                                            for _ in range(3)]), default=None))
    ok = [c for c in compiles if c is not None]
    okc = [c for c in cached if c is not None]
    t.add("compute.first_call", "first call of a new op and dtype, empty cache",
          "1024 elements", "s", "lower", {"pygpu": max(ok) if ok else None})
    t.add("compute.first_call.cached", "first call of an op, from the disk cache",
          "1024 elements", "ms", "lower", {"pygpu": max(okc) * 1e3 if okc else None})


FORMS = {"sin": ("sin", "sin", None), "div": ("x / 2", "divide", 2),
         "square": ("x ** 2", "power", 2)}


def _call(f, x, arg, out):
    return f(x, out=out) if arg is None else f(x, arg, out=out)


BURST = 4  # calls between a round's two events


def _burst(fn):
    def run():
        for _ in range(BURST):
            fn()
    return run


def _gbs(rounds, forms, nbytes, reps):
    """GB/s of each form (name -> fn) moving nbytes, and of the d2d copy
    (forms["d2d copy"], moving its own bytes: the pair (fn, bytes)), all
    timed in the same interleaved rounds: the ratio compares figures taken
    under the same GPU clocks (two separate medians a few seconds apart
    differ by up to 5% on an H100). Each round times BURST calls back to
    back, as a program makes them: the throughput, with the host's work for
    the next call under the GPU's work for this one (a lone call between two
    events also counts the host's microseconds before its kernel starts,
    which moved the 64 MB rows by 10-40% between hosts)."""
    copy_fn, copy_bytes = forms.pop("d2d copy")
    ms = rounds({k: _burst(f) for k, f in {"d2d copy": copy_fn, **forms}.items()}, reps)
    ms = {k: v / BURST for k, v in ms.items()}
    return ({k: nbytes / (v * 1e6) for k, v in ms.items() if k != "d2d copy"},
            {"d2d copy": copy_bytes / (ms["d2d copy"] * 1e6)})


def elementwise_rows(t, smoke, n, peers, rng, reps, rounds, absent):
    for dtype in (np.float32, np.float64):
        _elementwise(t, n, peers, rng.standard_normal(n).astype(dtype), reps, rounds, absent)


def _elementwise(t, n, peers, x, reps, rounds, absent):
    import pygpu

    cp, th = peers.get("cupy"), peers.get("torch")
    name = x.dtype.name
    dx = pygpu.asarray(x)
    dy = pygpu.empty_like(dx)
    moved = 2 * n * dx.itemsize
    cx = cp.asarray(x) if cp is not None else None
    cy = cp.empty_like(cx) if cp is not None else None
    tx = th.from_numpy(x).cuda() if th is not None else None
    ty = th.empty_like(tx) if th is not None else None
    for key, (label, ufunc, arg) in FORMS.items():
        forms = {"d2d copy": (lambda: dy.copy_to_device(dx), moved),
                 "pygpu": lambda u=ufunc, a=arg: _call(getattr(pygpu, u), dx, a, dy)}
        forms["pygpu"]()
        tail = x[-4096:]
        ref = getattr(np, ufunc)(tail) if arg is None else getattr(np, ufunc)(tail, arg)
        if not np.allclose(dy.copy_to_host()[-4096:], ref, rtol=1e-5, equal_nan=True):
            print(f"WARNING: {label} {name} result wrong", file=sys.stderr)
        if cp is not None:
            forms["CuPy"] = lambda u=ufunc, a=arg: _call(getattr(cp, u), cx, a, cy)
        if th is not None:
            tf = {"sin": th.sin, "divide": th.div, "power": th.pow}[ufunc]
            forms["PyTorch"] = lambda f=tf, a=arg: _call(f, tx, a, ty)
        vals, copy = _gbs(rounds, forms, moved, reps)
        absent(vals, "CuPy", "PyTorch")
        t.add(f"compute.{key}.{name}", f"{label}, read + write", f"{n} {name}", "GB/s",
              "higher", vals, copy)


def reduction_rows(t, smoke, n, side, peers, rng, reps, rounds, absent):
    """sum, max, argmax, mean of n float32 (GB/s read), sum over each axis of a
    side^2 matrix, cumsum (read + write), and the shapes where others fall off
    a cliff; each against the d2d copy of the same bytes, timed in the same
    rounds."""
    import pygpu

    cp, th = peers.get("cupy"), peers.get("torch")
    x = rng.standard_normal(n).astype(np.float32)
    dx = pygpu.asarray(x)
    dy = pygpu.empty_like(dx)
    cx = cp.asarray(x) if cp is not None else None
    tx = th.from_numpy(x).cuda() if th is not None else None
    read = 4 * n
    for key in ("sum", "max", "argmax", "mean"):
        forms = {"d2d copy": (lambda: dy.copy_to_device(dx), 2 * read),
                 "pygpu": lambda k=key: getattr(dx, k)()}
        got = float(getattr(dx, key)())
        want = float(getattr(x.astype(np.float64), key)())
        if abs(got - want) > 1e-3 * max(1.0, abs(want)) * (n ** 0.5 if key in ("sum",
                                                                             "mean") else 1):
            print(f"WARNING: {key} result {got} vs {want}", file=sys.stderr)
        if cp is not None:
            forms["CuPy"] = lambda k=key: getattr(cx, k)()
        if th is not None:
            forms["PyTorch"] = lambda k=key: getattr(tx, k)()
        vals, copy = _gbs(rounds, forms, read, reps)
        absent(vals, "CuPy", "PyTorch")
        t.add(f"compute.{key}", f"{key}, read", f"{n} float32", "GB/s", "higher", vals, copy)
    forms = {"d2d copy": (lambda: dy.copy_to_device(dx), 2 * read), "pygpu": lambda: dx.cumsum()}
    if not np.allclose(dx.cumsum().copy_to_host()[-4096:],
                       np.cumsum(x.astype(np.float64))[-4096:], rtol=1e-3, atol=1.0):
        print("WARNING: cumsum result wrong", file=sys.stderr)
    if cp is not None:
        forms["CuPy"] = lambda: cx.cumsum()
    if th is not None:
        forms["PyTorch"] = lambda: tx.cumsum(0)
    vals, copy = _gbs(rounds, forms, 2 * read, reps)
    absent(vals, "CuPy", "PyTorch")
    t.add("compute.cumsum", "cumsum, read + write", f"{n} float32", "GB/s", "higher", vals,
          copy)
    shapes = [("sum0", (side, side), lambda a: a.sum(axis=0), f"sum(axis=0) of {side}^2"),
              ("sum1", (side, side), lambda a: a.sum(axis=1), f"sum(axis=1) of {side}^2"),
              ("cliff.rows", (n // 256 * 256 // 2, 2), lambda a: a.sum(-1), "(n/2, 2).sum(-1)"),
              ("cliff.row", (1, n // 16), lambda a: a.sum(axis=1), "(1, n/16).sum(axis=1)"),
              ("cliff.cols", (n // 64, 4), lambda a: a.max(axis=0), "(n/64, 4).max(axis=0)")]
    for key, shape, f, label in shapes:
        h = rng.standard_normal(shape).astype(np.float32)
        dh = pygpu.asarray(h)
        dc = pygpu.empty_like(dh)
        forms = {"d2d copy": (lambda a=dh, c=dc: c.copy_to_device(a), 2 * h.nbytes),
                 "pygpu": lambda a=dh, g=f: g(a)}
        if not np.allclose(f(dh).copy_to_host(), f(h.astype(np.float64)), rtol=1e-3,
                           atol=1e-2):
            print(f"WARNING: {label} result wrong", file=sys.stderr)
        ch = None
        if cp is not None:
            ch = cp.asarray(h)
            forms["CuPy"] = lambda a=ch, g=f: g(a)
        vals, ref = _gbs(rounds, forms, h.nbytes, reps)
        absent(vals, "CuPy")
        t.add(f"compute.{key}", f"{label}, read", f"{shape[0]}x{shape[1]} float32", "GB/s",
              "higher", vals, ref)
        del dh, dc, ch


def host_cost_rows(t, smoke, peers, launch_us, absent):
    """Host microseconds of one call on 1024 elements (bursts, as launches)."""
    import pygpu

    cp, th = peers.get("cupy"), peers.get("torch")
    x = np.linspace(-1, 1, 1024, dtype=np.float32)
    d = pygpu.asarray(x)
    bursts = 5 if smoke else 100
    rows = {"sin": (lambda: np.sin(d), lambda c: np.sin(c) if cp is None else cp.sin(c),
                    lambda tt: tt.sin()),
            "div": (lambda: d / 2, lambda c: c / 2, lambda tt: tt / 2),
            "sum": (lambda: d.sum(), lambda c: c.sum(), lambda tt: tt.sum())}
    for key, (mine, cupy_form, torch_form) in rows.items():
        vals = {"pygpu": launch_us(mine, bursts=bursts)}
        if cp is not None:
            c = cp.asarray(x)
            vals["CuPy"] = launch_us(lambda c=c, f=cupy_form: f(c), bursts=bursts)
        if th is not None:
            tt = th.from_numpy(x).cuda()
            vals["PyTorch"] = launch_us(lambda tt=tt, f=torch_form: f(tt), bursts=bursts)
        absent(vals, "CuPy", "PyTorch")
        label = {"sin": "np.sin(d)", "div": "d / 2", "sum": "d.sum()"}[key]
        t.add(f"compute.host.{key}", f"{label}, host cost of one call", "1024 float32", "us",
              "lower", vals)


def main():
    """`python -m benchmarks.compute`: these rows alone, on a GPU."""
    from . import __main__ as bench
    from . import targets

    t = bench.Table(target_list=targets.load_targets())
    peers = bench.load_peers(False)
    rng = np.random.default_rng(0)

    only = sys.argv[1:]  # row groups: elementwise reductions host first
    if not only or "elementwise" in only:
        elementwise_rows(t, False, 1 << 28, peers, rng, 20, bench.gpu_ms_rounds, bench.absent)
    if not only or "reductions" in only:
        reduction_rows(t, False, 1 << 28, 16384, peers, rng, 20, bench.gpu_ms_rounds,
                       bench.absent)
    if not only or "host" in only:
        host_cost_rows(t, False, peers, bench.launch_us, bench.absent)
    if not only or "first" in only:
        first_call_rows(t, False)
    print(t.render())


if __name__ == "__main__":
    main()
