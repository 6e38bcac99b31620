"""Host to device pageable, measured after each stage of `python -m benchmarks`
(issue 14): the staged copy of 1 GiB into an existing array and through
`cuda.to_device` (the benchmark's form), with the pool's threads sleeping
between copies, on 6 copy threads, and a copy into a new array; fresh,
after loading the peers, after raw C's program and library, and after the
launch, bandwidth and matmul rows. On an H100 host, with the copy of each
piece waiting for all of its threads (before 16cc1f7), the staged copy fell
from 38 to 52 GB/s to 6.2 GB/s right after the launch rows; see
docs/PERFORMANCE.md. Needs a GPU; run from the repository's root:

    python tools/h2d_stages.py
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import benchmarks.__main__ as bench  # noqa: E402
from pygpu import _core, cuda  # noqa: E402

N = 1 << 30
SIZES = dict(vector=1 << 28, side=16384, mat=4096, transfer=1 << 30, alloc=1 << 20)


def rate(fn, reps=3):
    """GB/s: the benchmark's wall-clock median of a copy of N bytes."""
    return N / bench.wall_ms(fn, reps) / 1e6


def probe(tag, d, host):
    out = [f"h2d {rate(lambda: d.copy_to_device(host)):5.1f}",
           f"to_device {rate(lambda: cuda.to_device(host)):5.1f}"]
    _core._host_arrays(spin_ns=0)
    out.append(f"threads sleeping {rate(lambda: d.copy_to_device(host)):5.1f}")
    _core._host_arrays(spin_ns=-1, copy_threads=6)
    out.append(f"6 threads {rate(lambda: d.copy_to_device(host)):5.1f}")
    _core._host_arrays(copy_threads=-1)
    out.append(f"new array {rate(lambda: d.copy_to_host()):5.1f}")
    print(f"{tag:26s} " + ", ".join(out) + " GB/s", flush=True)


def main():
    rng = np.random.default_rng(0)
    host = rng.integers(0, 255, N, dtype=np.uint8)
    d = cuda.to_device(host)
    probe("fresh", d, host)
    peers = bench.load_peers(False)
    probe("peers loaded", d, host)
    exe, lib_path = bench.build_raw_c()
    raw = bench.raw_c(exe, SIZES)
    lib = bench.raw_lib(lib_path)
    probe("raw C run, library loaded", d, host)
    t = bench.Table()
    bench.launch_rows(t, False, exe, lib, peers, raw)
    probe("after the launch rows", d, host)
    bench.bandwidth_rows(t, False, SIZES, peers, raw, rng, 20)
    probe("after the bandwidth rows", d, host)
    bench.matmul_rows(t, False, SIZES, peers, rng)
    probe("after the matmul rows", d, host)


if __name__ == "__main__":
    main()
