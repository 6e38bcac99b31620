"""Runs every prebuilt kernel at awkward sizes, for compute-sanitizer.

tools/sanitize.sh runs this under memcheck, racecheck, initcheck and
synccheck. Every output is checked against NumPy too, so a kernel that
the sanitizer passes but computes wrongly still fails.
"""

import sys

import numpy as np

import pygpu
from pygpu import cuda, kernels

SIZES = [1, 31, 33, 1025]
MATMUL = [(1, 1, 1), (31, 33, 1), (33, 31, 17), (17, 33, 65), (129, 1, 130), (65, 129, 33),
          (130, 257, 129)]


def check(ok, what):
    if not ok:
        print("WRONG:", what)
        sys.exit(1)


def main():
    rng = np.random.default_rng(0)
    launches = 0
    for dtype in (np.float32, np.float64, np.int32, np.int64):
        for n in SIZES:
            x = (rng.standard_normal(n) * 100).astype(dtype)
            y = (rng.standard_normal(n) * 100).astype(dtype)
            dx, dy = cuda.to_device(x), cuda.to_device(y)
            out = pygpu.zeros(n, dtype=dtype)
            for grid, block in [cuda.launch_config(n, 128), (1, 32), (3, (8, 4))]:
                kernels.add[grid, block](dx, dy, out)
                check(np.array_equal(out.copy_to_host(), x + y), f"add {dtype} {n}")
                kernels.add[grid, block](dx, dtype(3), out)
                check(np.array_equal(out.copy_to_host(), x + dtype(3)), f"add scalar {n}")
                d = cuda.to_device(x)
                kernels.add_one[grid, block](d)
                check(np.array_equal(d.copy_to_host(), x + 1), f"add_one {dtype} {n}")
                launches += 3
            # offset views: unaligned starts take the element-by-element path
            v = cuda.to_device(x)[1:]
            pygpu.add_one(v)
            check(np.array_equal(v.copy_to_host(), x[1:] + 1), f"add_one offset {n}")
            # strided copies and fills (copy_strided, fill)
            m = cuda.to_device(np.resize(x, (n, 3)))
            check(np.array_equal(m.T.copy().copy_to_host(), np.resize(x, (n, 3)).T),
                  f"copy_strided {n}")
            check((pygpu.full(n, 5, dtype=dtype).copy_to_host() == 5).all(), "fill")
            launches += 3
    for dtype, tol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        for m, k, n in MATMUL:
            A = rng.standard_normal((m, k)).astype(dtype)
            B = rng.standard_normal((k, n)).astype(dtype)
            ref = A.astype(np.float64) @ B
            dA, dB = cuda.to_device(A), cuda.to_device(B)
            for name, block in (("matmul_naive", (16, 16)), ("matmul_shared", (16, 16)),
                                ("matmul_shared", (32, 32)), ("matmul_tiled", 256)):
                C = pygpu.zeros((m, n), dtype=dtype)
                grid = (2, 3) if block != 256 else (1, 2)
                getattr(kernels, name)[grid, block](dA, dB, C)
                err = np.abs(C.copy_to_host() - ref).max() / (np.abs(ref).max() or 1)
                check(err <= tol * k, f"{name}{block} {dtype} {m}x{k}x{n}")
                launches += 1
    cuda.synchronize()
    print(f"all kernels correct: {launches} launches")


if __name__ == "__main__":
    main()
