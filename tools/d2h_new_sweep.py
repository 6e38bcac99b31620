"""Device to host into a new array (issue 14, item 4), on a GPU: pygpu's own
memory (huge-page aligned, faulted in and filled a huge page per worker
thread) at several thread counts, against NumPy's memory (the path before),
copies into already-touched and into pinned memory, and host to device
pageable (which must stay >= 0.85x pinned). Every figure is a wall-clock
median, as in benchmarks/. With `grid`, instead: the staged copies (both
directions) over the copy threads, the size of a staged piece and how long
the threads spin between pieces.

    python tools/d2h_new_sweep.py [GiB, default 1] [repeats, default 7] [grid]
"""

import os
import platform
import statistics
import sys
import time

import numpy as np

from pygpu import _core, cuda


def wall(fn, reps):
    fn()
    cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return "absent"


def anon_huge_kib():
    for line in read("/proc/self/smaps_rollup").splitlines():
        if line.startswith("AnonHugePages:"):
            return int(line.split()[1])
    return -1


def main():
    n = int(float(sys.argv[1]) * 2**30) if len(sys.argv) > 1 else 2**30
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    thp = "/sys/kernel/mm/transparent_hugepage/"
    print(f"{platform.release()}, {os.cpu_count()} cpus, {cuda.get_current_device().name}")
    print(f"THP enabled: {read(thp + 'enabled')}; defrag: {read(thp + 'defrag')}")
    settings = _core._host_arrays()
    print(f"settings: {settings}")
    host = np.random.default_rng(0).integers(0, 255, n, dtype=np.uint8)
    d = cuda.to_device(host)
    gbs = lambda s: n / s / 1e9  # noqa: E731
    if len(sys.argv) > 3 and sys.argv[3] == "grid":
        grid(d, host, n, reps, settings, gbs)
        return
    pinned = cuda.pinned_array(n, np.uint8)
    touched = np.ones(n, np.uint8)
    into_touched = gbs(wall(lambda: d.copy_to_host(out=touched), reps))
    touched = None
    rows = [
        ("d2h pinned (out=pinned)", gbs(wall(lambda: d.copy_to_host(out=pinned), reps))),
        ("d2h into touched pageable (out=)", into_touched),
        ("h2d pageable (to_device)", gbs(wall(lambda: cuda.to_device(host), reps))),
        ("h2d pinned", gbs(wall(lambda: d.copy_to_device(pinned), reps))),
    ]
    for threads in (-1, 2, 4, 8, 12, 15, 16):
        s = _core._host_arrays(copy_threads=threads)
        label = ("d2h new array, default threads" if threads < 0
                 else f"d2h new array, {s['copy_threads']} threads")
        rows.append((label, gbs(wall(lambda: d.copy_to_host(), reps))))
    _core._host_arrays(copy_threads=-1)
    before = anon_huge_kib()
    h = d.copy_to_host()
    ok = np.array_equal(h[:: 4093], host[:: 4093]) and h[-1] == host[-1]
    huge = anon_huge_kib() - before
    t0 = time.perf_counter()
    del h
    freed_ms = (time.perf_counter() - t0) * 1e3
    _core._host_arrays(min_bytes=1 << 62)  # NumPy's memory: the path before
    before_gbs = gbs(wall(lambda: d.copy_to_host(), reps))
    rows.append(("d2h new array, NumPy's memory (before)", before_gbs))
    h = d.copy_to_host()
    t0 = time.perf_counter()
    del h
    numpy_freed_ms = (time.perf_counter() - t0) * 1e3
    _core._host_arrays(min_bytes=settings["min_bytes"])
    width = max(len(r[0]) for r in rows)
    for name, v in rows:
        print(f"{name:<{width}}  {v:8.2f} GB/s")
    pin_out, pin_in = rows[0][1], rows[3][1]
    new = rows[4][1]
    print(f"new array (default) / pinned: {new / pin_out:.2f}x (target >= 0.5x)")
    print(f"h2d pageable / pinned: {rows[2][1] / pin_in:.2f}x (target >= 0.85x)")
    print(f"result correct: {ok}; AnonHugePages of the new array: {huge // 1024} MiB; "
          f"freeing it: {freed_ms:.1f} ms (NumPy's: {numpy_freed_ms:.1f} ms)")


def grid(d, host, n, reps, settings, gbs):
    """The staged copies over their settings; one line each, best first by the
    new-array rate."""
    mib = 1 << 20
    pinned = cuda.pinned_array(n, np.uint8)
    pin_out = gbs(wall(lambda: d.copy_to_host(out=pinned), reps))
    pin_in = gbs(wall(lambda: d.copy_to_device(pinned), reps))
    pinned = None
    print(f"pinned: out {pin_out:.1f} GB/s, in {pin_in:.1f} GB/s")
    touched = np.ones(n, np.uint8)
    lines = []
    for stage in (2 * mib, 4 * mib, 8 * mib):
        for copiers in (8, 12, 15, 16):
            for spin in (0, 300000):
                s = _core._host_arrays(copy_threads=copiers, stage_bytes=stage, spin_ns=spin)
                new = gbs(wall(lambda: d.copy_to_host(), reps))
                into = gbs(wall(lambda: d.copy_to_host(out=touched), reps))
                h2d = gbs(wall(lambda: cuda.to_device(host), reps))
                lines.append((new, f"stage {stage // mib:2d} MiB, copy threads "
                              f"{s['copy_threads']:2d}, spin {spin // 1000:3d} us: new "
                              f"{new:5.1f} ({new / pin_out:.2f}x), touched {into:5.1f}, h2d "
                              f"pageable {h2d:5.1f} ({h2d / pin_in:.2f}x) GB/s"))
    _core._host_arrays(copy_threads=-1, stage_bytes=settings["stage_bytes"], spin_ns=-1)
    for _, line in sorted(lines, reverse=True):
        print(line)


if __name__ == "__main__":
    main()
