"""Scaling past one GPU: one job, the same code on 1 and on 2 GPUs.

    python -m benchmarks.scaling                      # ~2 x 40 GB, on 1 GPU, then on 2
    python -m benchmarks.scaling --total-gb 8 --gpus 2
    python -m benchmarks.scaling --smoke              # tiny, anywhere (the simulator too)

The job: two float32 operands X and Y of shape (rows, k), each half of
--total-gb, live in host memory in row chunks (--chunk-mb each), as chunks
read from Zarr or NumPy files would. Per chunk, a task on the GPU's worker
copies X_i and Y_i to its device (pageable memory, staged through pinned
buffers by pygpu), runs an elementwise kernel (X_i + Y_i, in place) and a
matmul with a k x n matrix W resident on that GPU, and copies the (rows_i, n)
result back into a host array made beforehand. Chunk i belongs to worker
i mod (number of GPUs); each worker makes its own chunks before the clock
starts, so "from host memory" is its own host memory, as with a local store.

One worker process per GPU (pygpu.dask.local_cluster, or dask-cuda's
LocalCUDACluster with --dask-cuda), one task at a time per worker. Each task
times its phases with device synchronization between them (host to device,
compute, device to host); the wall time runs from submitting the chunk tasks
to the last one's end. Speedup = wall time on 1 GPU / wall time on N.
"""

import argparse
import json
import logging
import sys
import time

import numpy as np

import pygpu
from pygpu import cuda

_worker_state = {}


def make_chunks(indices, rows, k, n, seed):
    """On a worker: its host chunks of X and Y (random, never zero), and the
    host arrays the results go to. Kept in this worker process."""
    rng = np.random.default_rng(seed)
    block = rng.standard_normal((min(rows, 4096), k), dtype=np.float32)
    chunks = {}
    for i in indices:
        x = np.empty((rows, k), np.float32)
        y = np.empty((rows, k), np.float32)
        for s in range(0, rows, block.shape[0]):
            part = slice(s, min(rows, s + block.shape[0]))
            np.multiply(block[:part.stop - part.start], np.float32(1 + i % 7), out=x[part])
            np.multiply(block[:part.stop - part.start], np.float32(-0.5 - i % 3), out=y[part])
            x[part, i % k] += np.float32(i)
        chunks[i] = (x, y, np.zeros((rows, n), np.float32))
    _worker_state["chunks"] = chunks
    _worker_state["W"] = None
    return len(chunks)


def _weights(k, n, seed):
    if _worker_state.get("W") is None:
        w = np.random.default_rng(seed + 1).standard_normal((k, n), dtype=np.float32)
        _worker_state["W"] = pygpu.asarray(w / np.float32(np.sqrt(k)))
    return _worker_state["W"]


def run_chunk(i, k, n, seed):
    """On a worker: one chunk through the GPU. Returns its phase times (s)."""
    x_host, y_host, out_host = _worker_state["chunks"][i]
    dev = cuda.get_current_device()
    w = _weights(k, n, seed)
    dev.synchronize()
    t0 = time.perf_counter()
    x = pygpu.asarray(x_host)
    y = pygpu.asarray(y_host)
    dev.synchronize()
    t1 = time.perf_counter()
    pygpu.add(x, y, out=x)  # the elementwise kernel
    r = pygpu.matmul(x, w)  # rows x k @ k x n
    dev.synchronize()
    t2 = time.perf_counter()
    r.copy_to_host(out=out_host)
    t3 = time.perf_counter()
    return {"h2d": t1 - t0, "compute": t2 - t1, "d2h": t3 - t2,
            "bytes_in": x_host.nbytes + y_host.nbytes, "bytes_out": out_host.nbytes}


def check_chunk(i, k, n, seed, rows=64):
    """On a worker: the first rows of chunk i's result against NumPy (float64)."""
    x_host, y_host, out_host = _worker_state["chunks"][i]
    w = _weights(k, n, seed).copy_to_host().astype(np.float64)
    ref = (x_host[:rows].astype(np.float64) + y_host[:rows]) @ w
    return float(np.linalg.norm(out_host[:rows] - ref) / (np.linalg.norm(ref) or 1.0))


def _cluster(n_gpus, dask_cuda):
    if dask_cuda:
        from dask_cuda import LocalCUDACluster

        return LocalCUDACluster(n_workers=n_gpus, CUDA_VISIBLE_DEVICES=list(range(n_gpus)),
                                threads_per_worker=1, host="127.0.0.1",
                                dashboard_address=None, memory_limit=0,
                                silence_logs=logging.ERROR)
    import pygpu.dask

    devices = list(range(n_gpus)) if len(cuda.gpus) >= n_gpus else [0] * n_gpus
    return pygpu.dask.local_cluster(devices, threads_per_worker=1, silence_logs=logging.ERROR)


def run(n_gpus, args, rows, n_chunks):
    from distributed import Client

    # tasks refer to this file as benchmarks.scaling (not __main__), so that each
    # worker imports it once and its chunks stay in that module's _worker_state
    from benchmarks import scaling as job

    with _cluster(n_gpus, args.dask_cuda) as cluster, Client(cluster) as client:
        workers = sorted(client.scheduler_info()["workers"])
        mine = {w: [i for i in range(n_chunks) if i % len(workers) == j]
                for j, w in enumerate(workers)}
        t = time.perf_counter()
        made = [client.submit(job.make_chunks, mine[w], rows, args.k, args.n, args.seed,
                              workers=[w], pure=False) for w in workers]
        assert sum(client.gather(made)) == n_chunks
        setup = time.perf_counter() - t
        # warm-up: each worker's first chunk once through, untimed
        client.gather([client.submit(job.run_chunk, mine[w][0], args.k, args.n, args.seed,
                                     workers=[w], pure=False) for w in workers if mine[w]])
        t = time.perf_counter()
        futures = [client.submit(job.run_chunk, i, args.k, args.n, args.seed,
                                 workers=[w], pure=False) for w in workers for i in mine[w]]
        times = client.gather(futures)
        wall = time.perf_counter() - t
        errors = client.gather([client.submit(job.check_chunk, mine[w][-1], args.k, args.n,
                                              args.seed, workers=[w], pure=False)
                                for w in workers if mine[w]])
    total = {key: sum(t[key] for t in times) for key in times[0]}
    return {"gpus": n_gpus, "chunks": n_chunks, "wall_s": wall, "setup_s": setup,
            "h2d_s": total["h2d"], "compute_s": total["compute"], "d2h_s": total["d2h"],
            "gb_in": total["bytes_in"] / 1e9, "gb_out": total["bytes_out"] / 1e9,
            "max_rel_error": max(errors)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--total-gb", type=float, default=80.0,
                   help="host input, both operands together, in GB (default 80: 2 x 40 GB)")
    p.add_argument("--chunk-mb", type=float, default=1024.0,
                   help="one operand's chunk, in MiB (default 1024)")
    p.add_argument("--k", type=int, default=1024, help="columns of X and Y, rows of W")
    p.add_argument("--n", type=int, default=256, help="columns of W and of the result")
    p.add_argument("--gpus", default="1,2", help="GPU counts to run, e.g. 1,2")
    p.add_argument("--dask-cuda", action="store_true",
                   help="dask-cuda's LocalCUDACluster instead of pygpu.dask.local_cluster")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="write the rows here too")
    p.add_argument("--smoke", action="store_true", help="tiny sizes, for the test suite")
    args = p.parse_args(argv)
    if args.smoke:
        args.total_gb, args.chunk_mb, args.k, args.n = 0.004, 0.25, 64, 16
    counts = [int(c) for c in args.gpus.split(",")]
    rows = max(1, int(args.chunk_mb * 2**20 // (4 * args.k)))
    n_chunks = max(max(counts), round(args.total_gb * 1e9 / (2 * rows * args.k * 4)))
    kind = "simulator" if cuda.is_simulator() else cuda.get_current_device().name
    print(f"pygpu {pygpu.__version__} on {len(cuda.gpus)} x {kind}; {n_chunks} chunks of "
          f"2 x ({rows} x {args.k}) float32, W {args.k} x {args.n}; "
          f"{'dask-cuda LocalCUDACluster' if args.dask_cuda else 'pygpu.dask.local_cluster'}",
          flush=True)
    if not cuda.is_simulator() and max(counts) > len(cuda.gpus):
        sys.exit(f"asked for {max(counts)} GPUs; this machine has {len(cuda.gpus)}")
    rows_out = []
    for c in counts:
        rows_out.append(run(c, args, rows, n_chunks))
        print(f"  {c} GPU(s) done: {rows_out[-1]['wall_s']:.2f} s", flush=True)
    one = next((r["wall_s"] for r in rows_out if r["gpus"] == 1), None)
    print()
    print("| GPUs | chunks | GB in | wall s | host->device s | compute s | device->host s "
          "| GB/s in | speedup | rel. error |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows_out:
        r["speedup"] = one / r["wall_s"] if one is not None else None
        speed = f"{r['speedup']:.2f}x" if r["speedup"] is not None else "-"
        print(f"| {r['gpus']} | {r['chunks']} | {r['gb_in']:.3g} | {r['wall_s']:.3g} "
              f"| {r['h2d_s']:.3g} | {r['compute_s']:.3g} | {r['d2h_s']:.3g} "
              f"| {r['gb_in'] / r['wall_s']:.3g} | {speed} | {r['max_rel_error']:.1e} |")
    print("\nphase times are summed over the tasks of all GPUs (each GPU runs one task at "
          "a time); wall s is the job's elapsed time")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": kind, "rows": rows_out, "args": vars(args)}, f, indent=1)
    if max(r["max_rel_error"] for r in rows_out) > 1e-4:
        sys.exit("the results do not match NumPy")


if __name__ == "__main__":
    main()
