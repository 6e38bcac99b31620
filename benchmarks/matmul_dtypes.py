"""Matrix products beside the main table's `matmul.at.<dtype>` rows (issue 14's
"a @ b within 0.98x of cuBLAS", already judged there): the same products into
a preallocated result (`pygpu.matmul(a, b, out=c)`, so that the ratio is the
call alone, no allocation), and float32 with TF32 allowed
(`pygpu.blas.set_allow_tf32(True)`) against PyTorch with `allow_tf32`.

Not wired into `python -m benchmarks` (benchmarks/__main__.py is edited
elsewhere). To wire it in, in run() of benchmarks/__main__.py, after
`matmul_rows(t, smoke, sizes, peers, rng)`:

    from .matmul_dtypes import rows as matmul_dtype_rows
    matmul_dtype_rows(t, smoke, sizes, peers, rng)

and, to judge them, targets in benchmarks/targets.toml such as

    [[target]]
    row = "matmul.out.float64"
    metric = "pygpu / CuPy cuBLAS"
    op = ">="
    threshold = 0.98
    issue = "14"

Run alone: `python -m benchmarks.matmul_dtypes [--smoke] [--m 4096]`.
"""

import argparse
import sys

import numpy as np

DTYPES = (np.float16, np.float32, np.float64, np.complex64, np.complex128)


def _data(rng, m, dtype):
    x = rng.standard_normal((m, m)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x += 1j * rng.standard_normal((m, m)).astype(dtype)
    return x


def _flop(m, dtype):
    return (8 if np.dtype(dtype).kind == "c" else 2) * m**3  # complex: 8 real FLOPs


def rows(t, smoke, sizes, peers, rng):
    """Rows matmul.out.<dtype> and matmul.tf32.float32 (TFLOP/s, higher is
    better): pygpu against CuPy's and PyTorch's cuBLAS, all into preallocated
    results; the line before them says what pygpu's @ runs in."""
    import pygpu

    from .__main__ import absent, gpu_ms

    m = sizes["mat"]
    mreps = 3 if smoke else 10
    cp, th = peers.get("cupy"), peers.get("torch")
    print(f"  matmul backend: {pygpu.blas.matmul_backend()}", flush=True)
    for dtype in DTYPES:
        name = np.dtype(dtype).name
        X, Y = _data(rng, m, dtype), _data(rng, m, dtype)
        vals = _measure(X, Y, dtype, m, mreps, gpu_ms, cp, th, tf32=False)
        absent(vals, "CuPy cuBLAS", "PyTorch cuBLAS")
        t.add(f"matmul.out.{name}", "matmul(a, b, out=c)", f"{m}^3 {name}", "TFLOP/s",
              "higher", vals)
    X, Y = _data(rng, m, np.float32), _data(rng, m, np.float32)
    vals = _measure(X, Y, np.float32, m, mreps, gpu_ms, None, th, tf32=True)
    absent(vals, "PyTorch cuBLAS")
    t.add("matmul.tf32.float32", "matmul(a, b, out=c), TF32 allowed", f"{m}^3 float32",
          "TFLOP/s", "higher", vals)


def _measure(X, Y, dtype, m, mreps, gpu_ms, cp, th, tf32):
    import pygpu

    def tf(ms):
        return _flop(m, dtype) / (ms * 1e9)

    vals = {}
    dX, dY = pygpu.asarray(X), pygpu.asarray(Y)
    dZ = pygpu.empty((m, m), dtype=dtype)
    previous = pygpu.blas.set_allow_tf32(tf32)
    try:
        vals["pygpu"] = tf(gpu_ms(lambda: pygpu.matmul(dX, dY, out=dZ), mreps))
    finally:
        pygpu.blas.set_allow_tf32(previous)
    if cp is not None:
        cX, cY = cp.asarray(X), cp.asarray(Y)
        cZ = cp.empty((m, m), dtype)
        vals["CuPy cuBLAS"] = tf(gpu_ms(lambda: cp.matmul(cX, cY, out=cZ), mreps))
    if th is not None:
        tX, tY = th.from_numpy(X).cuda(), th.from_numpy(Y).cuda()
        tZ = th.empty_like(tX)
        old = th.backends.cuda.matmul.allow_tf32
        th.backends.cuda.matmul.allow_tf32 = tf32
        try:
            vals["PyTorch cuBLAS"] = tf(gpu_ms(lambda: th.matmul(tX, tY, out=tZ), mreps))
        finally:
            th.backends.cuda.matmul.allow_tf32 = old
    return vals


def _main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.matmul_dtypes")
    p.add_argument("--m", type=int, default=4096, help="matrix side (default 4096)")
    p.add_argument("--smoke", action="store_true", help="tiny sizes, no peers")
    args = p.parse_args(argv)
    from . import __main__ as bench

    t = bench.Table(smoke=args.smoke)
    rows(t, args.smoke, {"mat": 64 if args.smoke else args.m}, bench.load_peers(args.smoke),
         np.random.default_rng(0))
    for r in t.rows:
        print(r["id"], r["size"], r["values"])
    return 0


if __name__ == "__main__":
    sys.exit(_main())
