"""`python -m pygpu`: the device report, then a short demo checked against NumPy.

With no GPU it switches to the CPU simulator and says so.
"""

import argparse
import os
import sys
import time

import numpy as np


def _timed(fn, repeats):
    from pygpu import cuda

    fn()  # warm-up
    cuda.synchronize()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m pygpu",
        description="Report pygpu's devices, then run a short demo: a vector add and "
                    "three matrix products (naive and shared-memory kernels, and @, "
                    "which runs in cuBLAS where it is found), each timed and checked "
                    "against NumPy. The device report ends with what @ runs in and "
                    "the file of each NVIDIA library loaded (cuBLAS, NVRTC). "
                    "Without a GPU it runs on pygpu's CPU simulator, with smaller "
                    "sizes, and says so.",
        epilog="Exit status: 0 if every result matches NumPy, 1 if one does not or "
               "no usable device was found. Set PYGPU_SIMULATOR=1 to use the "
               "simulator even where a GPU is present.")
    p.add_argument("--version", action="version", version=_version())
    return p


def _version():
    import pygpu

    return f"pygpu {pygpu.__version__}"


def main(argv=None):
    _parser().parse_args(argv)
    import pygpu
    from pygpu import cuda

    print(f"pygpu {pygpu.__version__}, NumPy {np.__version__}, Python {sys.version.split()[0]}")
    if not cuda.is_available():
        if not pygpu._core.has_cuda():
            print("This pygpu was built without the CUDA toolkit.")
        else:
            try:
                pygpu._core.device_count()
            except pygpu.NoDeviceError as exc:
                print(f"No GPU: {exc.name}.")
        print("Running on pygpu's CPU simulator (as with PYGPU_SIMULATOR=1); "
              "timings below are CPU timings, not GPU ones.")
        os.environ["PYGPU_SIMULATOR"] = "1"
    if not cuda.detect():
        return 1
    v = pygpu._core.versions()
    print(f"backend: {v['backend']}, driver {v['driver']}, runtime {v['runtime']}")

    sim = cuda.is_simulator()
    rng = np.random.default_rng(0)
    ok = True

    n = 1 << (20 if sim else 24)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    da, db = cuda.to_device(a), cuda.to_device(b)
    out = pygpu.empty_like(da)
    blocks, threads = cuda.launch_config(n, 256)
    t = _timed(lambda: pygpu.kernels.add[blocks, threads](da, db, out), 3 if sim else 20)
    err = np.abs(out.copy_to_host() - (a.astype(np.float64) + b)).max()
    good = err <= 1e-6 * np.abs(a).max() * 4
    ok &= good
    print(f"vector add, {n} float32: {t * 1e3:.3f} ms, {12 * n / t / 1e9:.1f} GB/s, "
          f"max error vs NumPy {err:.2e} [{'ok' if good else 'WRONG'}]")

    m = 128 if sim else 1024
    A = rng.standard_normal((m, m), dtype=np.float32)
    B = rng.standard_normal((m, m), dtype=np.float32)
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    backend = "cuBLAS" if pygpu.blas.cublas_version() else "own kernels"
    for method in ("naive", "shared", "auto"):
        C = pygpu.matmul(dA, dB, method=method)
        t = _timed(lambda m=method, c=C: pygpu.matmul(dA, dB, method=m, out=c), 2 if sim else 10)
        rel = np.linalg.norm(C.copy_to_host() - ref) / np.linalg.norm(ref)
        good = rel < 1e-5
        ok &= good
        what = f"{method} ({backend})" if method == "auto" else method
        print(f"matmul {what:6s} {m}x{m} float32: {t * 1e3:.3f} ms, "
              f"{2 * m**3 / t / 1e12:.3f} TFLOP/s, relative error vs NumPy {rel:.2e} "
              f"[{'ok' if good else 'WRONG'}]")
    print("all results match NumPy" if ok else "SOME RESULTS ARE WRONG")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
