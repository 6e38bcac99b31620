"""Matrix products in every dtype `@` takes: pygpu (cuBLAS underneath, where it
is loaded) against CuPy's and PyTorch's cuBLAS, in the same process.

Issue 14's target: float64, float16 and complex at 4096^3 within 0.98x of
cuBLAS, i.e. pygpu calls cuBLAS with no overhead of its own. float32 is
reported (and judged at 0.98x too: it is the same call); TF32 is measured in
a row of its own, with pygpu.blas.set_allow_tf32(True) and PyTorch's
allow_tf32 switched on for that row only.

Not wired into `python -m benchmarks` yet (benchmarks/__main__.py is being
edited elsewhere). To wire it in, add to run() in benchmarks/__main__.py,
after the "matrix multiply" block (where t, sizes, smoke, cp and th exist):

    from .matmul_dtypes import rows as matmul_dtype_rows
    matmul_dtype_rows(t, gpu_ms, m=sizes["mat"], smoke=smoke, cp=cp, th=th)

Run alone: `python -m benchmarks.matmul_dtypes [--m 4096]` prints the rows.
"""

import argparse
import sys

import numpy as np

DTYPES = ["float16", "float32", "float64", "complex64", "complex128"]
TARGET = 0.98


def _flops(m, dtype):
    # a complex multiply-add is four real multiplies and four adds
    return (8 if np.dtype(dtype).kind == "c" else 2) * m**3


def _data(rng, m, dtype):
    dtype = np.dtype(dtype)
    x = rng.standard_normal((m, m))
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal((m, m))
    return x.astype(dtype)


def rows(table, gpu_ms, m=4096, smoke=False, cp=None, th=None, seed=0):
    """Adds to `table` (benchmarks' Table) one row per dtype, plus float32 with
    TF32: pygpu `dX @ dY` into a preallocated result, CuPy's `matmul(out=)`
    and PyTorch's `matmul(out=)`, all timed with `gpu_ms` (CUDA events, median).
    The ratio is pygpu over the best cuBLAS peer; target >= 0.98x."""
    import pygpu

    backend = pygpu.blas.matmul_backend()
    print(f"  matmul backend: {backend}", flush=True)
    rng = np.random.default_rng(seed)
    reps = 3 if smoke else 10
    for name in DTYPES + ["float32 TF32"]:
        _row(table, gpu_ms, m, name, reps, rng, cp, th)


def _row(table, gpu_ms, m, name, reps, rng, cp, th):
    import pygpu

    dtype = name.split()[0]
    tf32 = name.endswith("TF32")
    X, Y = _data(rng, m, dtype), _data(rng, m, dtype)
    dX, dY = pygpu.asarray(X), pygpu.asarray(Y)
    dZ = pygpu.empty((m, m), dtype=dtype)

    def tflops(ms):
        return _flops(m, dtype) / (ms * 1e9)

    vals = {}
    previous = pygpu.blas.set_allow_tf32(tf32)
    try:
        vals["pygpu"] = tflops(gpu_ms(lambda: pygpu.matmul(dX, dY, out=dZ), reps))
        ref = X.astype(np.complex128) @ Y.astype(np.complex128)
        err = np.linalg.norm(dZ.copy_to_host() - ref) / (np.linalg.norm(X) *
                                                           np.linalg.norm(Y))
        bound = (1e-2 if tf32 else 2e-3 if dtype == "float16" else
                 2e-6 if dtype in ("float32", "complex64") else 1e-13)
        if err > bound:
            print(f"WARNING: matmul {name} error {err:.2e}", file=sys.stderr)
    finally:
        pygpu.blas.set_allow_tf32(previous)
    if cp is not None and not tf32:  # CuPy's TF32 is chosen at import (CUPY_TF32)
        cX, cY = cp.asarray(X), cp.asarray(Y)
        cZ = cp.empty((m, m), dtype)
        vals["CuPy cuBLAS"] = tflops(gpu_ms(lambda: cp.matmul(cX, cY, out=cZ), reps))
    if th is not None:
        tX, tY = th.from_numpy(X).cuda(), th.from_numpy(Y).cuda()
        tZ = th.empty_like(tX)
        old = th.backends.cuda.matmul.allow_tf32
        th.backends.cuda.matmul.allow_tf32 = tf32
        try:
            vals["PyTorch cuBLAS"] = tflops(gpu_ms(lambda: th.matmul(tX, tY, out=tZ), reps))
        finally:
            th.backends.cuda.matmul.allow_tf32 = old

    def check(v):
        peers = [x for k, x in v.items() if k != "pygpu" and x is not None]
        ratio = v["pygpu"] / max(peers)
        return f"{ratio:.3f}x cuBLAS", ratio >= TARGET

    table.add("matmul @ (cuBLAS)", f"{m}^3 {name}", "TFLOP/s", "higher", vals,
              f">= {TARGET}x cuBLAS", check)


def _main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.matmul_dtypes")
    p.add_argument("--m", type=int, default=4096, help="matrix side (default 4096)")
    p.add_argument("--smoke", action="store_true", help="tiny sizes, no peers")
    args = p.parse_args(argv)
    from . import __main__ as bench

    peers = bench.load_peers(args.smoke)
    t = bench.Table(judge=not args.smoke)
    rows(t, bench.gpu_ms, m=64 if args.smoke else args.m, smoke=args.smoke,
         cp=peers.get("cupy"), th=peers.get("torch"))
    print(t.render())


if __name__ == "__main__":
    sys.exit(_main())
