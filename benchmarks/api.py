"""Issue 23's rows: the library functions users call by name (sort, argsort,
boolean-mask indexing, random numbers, FFT, inverse and solve) against CuPy
and PyTorch, timed in the same interleaved rounds (CUDA events around bursts
of BURST calls, as a program makes them; see compute.py's _gbs).

    python -m benchmarks.api [--smoke] [sort mask host random fft linalg]

What each row counts:
- sort, argsort of n float32 (uniform in [0, 1)): Mkeys/s, n / time of one
  call. PyTorch's torch.sort returns values and indices both.
- x[x > 0.5] of n float32 (uniform in [0, 1): half the elements kept): GB/s
  of x read, 4n / time of the whole expression (the comparison included);
  the same on 1024 elements: host microseconds a call (it synchronizes: the
  result's length comes from the device).
- Generator.random / standard_normal, n float32: GB/s written, 4n / time.
- fft of n complex64: GB/s of 16n bytes, the read of the input and the
  write of the output (8 bytes each an element), as the compute anchors of
  ../shared/PERF.md count them: CuPy's 868 GB/s for 2^24 is 0.31 ms a call.
- linalg.inv of an m x m float32 matrix (standard normal), linalg.solve of it
  with one right-hand side (a vector of m): ms a call.

GB/s rows carry the d2d copy of the same bytes, timed in the same rounds, as
a reference (`refs`, not a cell). A pygpu function that does not exist yet,
or fails, gives an absent figure (which misses its target) and one line on
stderr; each pygpu result is checked once against NumPy (WARNING on stderr).
"""

import sys

import numpy as np

BURST = 4  # calls between a round's two events (compute.py's)
BUDGET_S = 8  # seconds of timing a row, after 3 rounds (a slow form)
GROUPS = ("sort", "mask", "host", "random", "fft", "linalg")


def _try(who, what, fn):
    """(True, fn()) or, where it raises, (False, None) and one line on stderr."""
    try:
        return True, fn()
    except Exception as exc:  # noqa: BLE001
        msg = (str(exc).strip().splitlines() or [""])[0][:200]
        print(f"{who} {what} absent: {type(exc).__name__}: {msg}", file=sys.stderr)
        return False, None


def _burst(fn, count):
    def run():
        for _ in range(count):
            fn()
    return run


def _ms(rounds, forms, reps, burst=BURST, budget_s=BUDGET_S):
    """Median ms a call of each form (name -> fn), all timed in the same
    interleaved rounds of `burst` calls between two events."""
    if not forms:
        return {}
    try:
        ms = rounds({k: _burst(f, burst) for k, f in forms.items()}, reps, 2, budget_s)
    except Exception as exc:  # noqa: BLE001  (a form that ran once fails later)
        print(f"timing of {', '.join(forms)} failed: {type(exc).__name__}: "
              f"{(str(exc).strip().splitlines() or [''])[0][:200]}", file=sys.stderr)
        return dict.fromkeys(forms)
    return {k: None if v is None else v / burst for k, v in ms.items()}


def _candidates(what, mine, cupy_form, torch_form, peers):
    """The forms that ran once: name -> fn, and pygpu's first result (None
    where pygpu's is absent; mine None: absent, and already said)."""
    forms, got = {}, None
    if mine is not None:
        ok, got = _try("pygpu", what, mine)
        if ok:
            forms["pygpu"] = mine
    for name, key, form in (("CuPy", "cupy", cupy_form), ("PyTorch", "torch", torch_form)):
        if form is not None and peers.get(key) is not None and _try(name, what, form)[0]:
            forms[name] = form
    return forms, got


def _host(d):
    return d.copy_to_host() if hasattr(d, "copy_to_host") else np.asarray(d)


def _verify(what, right, got):
    """pygpu's first result, checked once: right(its host copy) -> (ok, why);
    WARNING on stderr where it is wrong (or the check itself fails on it)."""
    if got is None:
        return
    try:
        ok, why = right(_host(got))
    except Exception as exc:  # noqa: BLE001  (a result of the wrong kind)
        ok, why = False, f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"
    if not ok:
        print(f"WARNING: pygpu {what} result wrong" + (f" ({why})" if why else ""),
              file=sys.stderr)


def _release(peers):
    """Give the peers' cached device memory back between rows."""
    if peers.get("cupy") is not None:
        peers["cupy"].get_default_memory_pool().free_all_blocks()
    if peers.get("torch") is not None:
        peers["torch"].cuda.empty_cache()


def _add(t, row_id, label, size, unit, better, vals, refs, absent):
    vals = absent({"pygpu": vals.pop("pygpu", None), **vals}, "CuPy", "PyTorch")
    t.add(row_id, label, size, unit, better, vals, refs)


# ---- sort, argsort -----------------------------------------------------------------------

def sort_rows(t, smoke, n, peers, rng, reps, rounds, absent):
    import pygpu

    cp, th = peers.get("cupy"), peers.get("torch")
    x = rng.random(n, dtype=np.float32)
    want = np.sort(x)
    dx = pygpu.asarray(x)
    cx = cp.asarray(x) if cp is not None else None
    tx = th.from_numpy(x).cuda() if th is not None else None
    mkeys = lambda ms: None if ms is None else n / (ms * 1e3)  # noqa: E731

    forms, got = _candidates("sort", lambda: pygpu.sort(dx), lambda: cp.sort(cx),
                             lambda: th.sort(tx), peers)
    _verify("sort", lambda g: (g.shape == want.shape and np.array_equal(g, want), ""), got)
    del got
    ms = _ms(rounds, forms, reps)
    _add(t, "api.sort", "sort", f"{n} float32", "Mkeys/s", "higher",
         {k: mkeys(v) for k, v in ms.items()}, None, absent)

    forms, got = _candidates("argsort", lambda: pygpu.argsort(dx), lambda: cp.argsort(cx),
                             lambda: th.argsort(tx), peers)
    _verify("argsort", lambda i: (i.shape == x.shape and i.dtype.kind in "iu"
                                  and int(i.min()) >= 0 and int(i.max()) < n
                                  and np.array_equal(x[i], want)
                                  and int(i.sum()) == n * (n - 1) // 2, ""), got)
    del got
    ms = _ms(rounds, forms, reps)
    _add(t, "api.argsort", "argsort", f"{n} float32", "Mkeys/s", "higher",
         {k: mkeys(v) for k, v in ms.items()}, None, absent)


# ---- boolean mask --------------------------------------------------------------------------

def mask_rows(t, smoke, n, peers, rng, reps, rounds, absent):
    """x[x > 0.5] of n float32: GB/s of x read, against the d2d copy of x."""
    import pygpu

    cp, th = peers.get("cupy"), peers.get("torch")
    x = rng.random(n, dtype=np.float32)
    dx = pygpu.asarray(x)
    dy = pygpu.empty_like(dx)
    cx = cp.asarray(x) if cp is not None else None
    tx = th.from_numpy(x).cuda() if th is not None else None
    forms, got = _candidates("x[x > 0.5]", lambda: dx[dx > 0.5], lambda: cx[cx > 0.5],
                             lambda: tx[tx > 0.5], peers)
    _verify("x[x > 0.5]", lambda g: (np.array_equal(g, x[x > 0.5]), ""), got)
    del got
    ms = _ms(rounds, {"d2d copy": lambda: dy.copy_to_device(dx), **forms}, reps)
    copy = ms.pop("d2d copy")
    gbs = {k: None if v is None else 4 * n / (v * 1e6) for k, v in ms.items()}
    _add(t, "api.mask", "x[x > 0.5], GB/s of x read (half kept)", f"{n} float32", "GB/s",
         "higher", gbs, {"d2d copy": None if copy is None else 8 * n / (copy * 1e6)}, absent)


def mask_host_rows(t, smoke, peers, rng, launch_us, absent):
    """Host microseconds of one x[x > 0.5] on 1024 float32 (bursts, as launches)."""
    import pygpu

    cp, th = peers.get("cupy"), peers.get("torch")
    x = rng.random(1024, dtype=np.float32)
    d = pygpu.asarray(x)
    kw = dict(bursts=3, burst=16) if smoke else dict(bursts=20)
    ok, got = _try("pygpu", "x[x > 0.5]", lambda: d[d > 0.5])
    _verify("x[x > 0.5] (1024 elements)", lambda g: (np.array_equal(g, x[x > 0.5]), ""), got)
    forms = {"pygpu": (lambda: d[d > 0.5]) if ok else None}
    if cp is not None:
        c = cp.asarray(x)
        forms["CuPy"] = lambda: c[c > 0.5]
    if th is not None:
        tt = th.from_numpy(x).cuda()
        forms["PyTorch"] = lambda: tt[tt > 0.5]
    vals = {name: None if f is None else
            _try(name, "x[x > 0.5] (1024)", lambda f=f: launch_us(f, **kw))[1]
            for name, f in forms.items()}
    _add(t, "api.host.mask", "x[x > 0.5], host cost of one call", "1024 float32", "us",
         "lower", vals, None, absent)


# ---- random ----------------------------------------------------------------------------------

def _ks_ok(got, ref):
    """The two-sample Kolmogorov-Smirnov test: False only where the samples'
    distributions differ (a false alarm about once in 10^6 runs)."""
    a, b = np.sort(got.astype(np.float64)), np.sort(ref.astype(np.float64))
    grid = np.concatenate([a, b])
    d = np.max(np.abs(np.searchsorted(a, grid, "right") / a.size
                      - np.searchsorted(b, grid, "right") / b.size))
    return d < 2.7 * np.sqrt((a.size + b.size) / (a.size * b.size))


def random_rows(t, smoke, n, peers, rng, reps, rounds, absent):
    """Generator.random and standard_normal of n float32: GB/s written."""
    import pygpu

    cp, th = peers.get("cupy"), peers.get("torch")
    ok, gen = _try("pygpu", "random.default_rng", lambda: pygpu.random.default_rng(0))
    cg = cp.random.default_rng(0) if cp is not None else None
    tg = None
    if th is not None:
        tg = th.Generator(device="cuda")
        tg.manual_seed(0)
    dy = pygpu.empty(n, dtype=np.float32)
    dz = pygpu.empty_like(dy)
    sample = max(1, n // (1 << 20))  # every sample-th element: at most 2^20 of them
    rows = (("random", "random", lambda: th.rand(n, generator=tg, device="cuda"),
             lambda s: np.random.default_rng(1).random(s, dtype=np.float32),
             lambda v: v.min() >= 0 and v.max() < 1),
            ("standard_normal", "standard_normal",
             lambda: th.randn(n, generator=tg, device="cuda"),
             lambda s: np.random.default_rng(1).standard_normal(s, dtype=np.float32),
             lambda v: bool(np.isfinite(v).all())))
    for key, method, torch_form, numpy_form, sane in rows:
        mine = (lambda m=method: getattr(gen, m)(n, dtype=np.float32)) if ok else None
        cupy_form = (lambda m=method: getattr(cg, m)(n, dtype=cp.float32)) \
            if cg is not None else None
        forms, got = _candidates(f"Generator.{method}", mine, cupy_form, torch_form, peers)
        _verify(f"Generator.{method}",
                lambda v, sane=sane, numpy_form=numpy_form: (
                    v.dtype == np.float32 and v.shape == (n,) and sane(v)
                    and _ks_ok(v[::sample], numpy_form(v[::sample].size)), ""), got)
        del got
        ms = _ms(rounds, {"d2d copy": lambda: dz.copy_to_device(dy), **forms}, reps)
        copy = ms.pop("d2d copy")
        gbs = {k: None if v is None else 4 * n / (v * 1e6) for k, v in ms.items()}
        _add(t, f"api.{key}", f"Generator.{method}, GB/s written", f"{n} float32", "GB/s",
             "higher", gbs, {"d2d copy": None if copy is None else 8 * n / (copy * 1e6)},
             absent)


# ---- FFT ---------------------------------------------------------------------------------------

def fft_rows(t, smoke, n, peers, rng, reps, rounds, absent):
    """fft of n complex64: GB/s of 16n (read + write), against the d2d copy
    of the same bytes."""
    import pygpu

    cp, th = peers.get("cupy"), peers.get("torch")
    z = np.empty(n, np.complex64)
    z.real = rng.standard_normal(n, dtype=np.float32)
    z.imag = rng.standard_normal(n, dtype=np.float32)
    dz = pygpu.asarray(z)
    dw = pygpu.empty_like(dz)
    cz = cp.asarray(z) if cp is not None else None
    tz = th.from_numpy(z).cuda() if th is not None else None
    forms, got = _candidates("fft.fft", lambda: pygpu.fft.fft(dz), lambda: cp.fft.fft(cz),
                             lambda: th.fft.fft(tz), peers)

    def right(g):
        want = np.fft.fft(z.astype(np.complex128))
        err = np.linalg.norm(g - want) / np.linalg.norm(want)
        return g.dtype == np.complex64 and err < 1e-5, f"{g.dtype}, relative error {err:.2g}"
    _verify("fft.fft", right, got)
    del got
    ms = _ms(rounds, {"d2d copy": lambda: dw.copy_to_device(dz), **forms}, reps)
    copy = ms.pop("d2d copy")
    gbs = {k: None if v is None else 16 * n / (v * 1e6) for k, v in ms.items()}
    _add(t, "api.fft", "fft, read + write (16 bytes an element)", f"{n} complex64", "GB/s",
         "higher", gbs, {"d2d copy": None if copy is None else 16 * n / (copy * 1e6)}, absent)


# ---- linear algebra ----------------------------------------------------------------------------

def linalg_rows(t, smoke, m, peers, rng, reps, rounds, absent):
    """inv and solve (one right-hand side) of an m x m float32 matrix, ms a call."""
    import pygpu

    cp, th = peers.get("cupy"), peers.get("torch")
    A = rng.standard_normal((m, m), dtype=np.float32)
    b = rng.standard_normal(m, dtype=np.float32)
    A64 = A.astype(np.float64)
    normA = np.linalg.norm(A64)
    dA, db = pygpu.asarray(A), pygpu.asarray(b)
    cA, cb = (cp.asarray(A), cp.asarray(b)) if cp is not None else (None, None)
    tA, tb = (th.from_numpy(A).cuda(), th.from_numpy(b).cuda()) if th is not None \
        else (None, None)
    rows = np.unique(rng.integers(0, m, 8))

    forms, got = _candidates("linalg.inv", lambda: pygpu.linalg.inv(dA),
                             lambda: cp.linalg.inv(cA), lambda: th.linalg.inv(tA), peers)

    def inverse(X):  # backward error of sample rows: ||X[r] A - e_r|| / (||X[r]|| ||A||)
        if X.shape != A.shape or X.dtype != np.float32:
            return False, f"{X.dtype} {X.shape}"
        Xr = X[rows].astype(np.float64)
        err = (np.linalg.norm(Xr @ A64 - np.eye(m)[rows], axis=1)
               / (np.linalg.norm(Xr, axis=1) * normA)).max()
        # float32 LU with partial pivoting: n * eps bounds it (5e-4 at 4096);
        # 1e-5 flags a lost factorization, not rounding
        return err < 1e-5, f"backward error {err:.2g}"
    _verify("linalg.inv", inverse, got)
    del got
    ms = _ms(rounds, forms, reps, burst=1)
    _add(t, "api.inv", "linalg.inv", f"{m}x{m} float32", "ms", "lower", ms, None, absent)

    forms, got = _candidates("linalg.solve", lambda: pygpu.linalg.solve(dA, db),
                             lambda: cp.linalg.solve(cA, cb),
                             lambda: th.linalg.solve(tA, tb), peers)

    def solution(x):  # backward error: ||A x - b|| / (||A|| ||x|| + ||b||)
        if x.shape != b.shape or x.dtype != np.float32:
            return False, f"{x.dtype} {x.shape}"
        x64 = x.astype(np.float64)
        err = np.linalg.norm(A64 @ x64 - b) / (normA * np.linalg.norm(x64) + np.linalg.norm(b))
        # float32 LU with partial pivoting: n * eps bounds it (5e-4 at 4096);
        # 1e-5 flags a lost factorization, not rounding
        return err < 1e-5, f"backward error {err:.2g}"
    _verify("linalg.solve", solution, got)
    del got
    ms = _ms(rounds, forms, reps, burst=1)
    _add(t, "api.solve", "linalg.solve, one right-hand side", f"{m}x{m} float32, b {m}",
         "ms", "lower", ms, None, absent)


# ---- all of them --------------------------------------------------------------------------------

def sizes_for(smoke):
    if smoke:
        return dict(sort=1 << 12, mask=1 << 12, random=1 << 12, fft=1 << 12, linalg=48)
    return dict(sort=1 << 26, mask=1 << 28, random=1 << 28, fft=1 << 24, linalg=4096)


def add_rows(t, smoke, peers, rng, rounds, launch_us, absent, groups=GROUPS):
    """Issue 23's rows, those of `groups` (GROUPS: all). Sized for well under 90 s
    on an H100 (an estimate from the peers' times; BUDGET_S caps a slow row)."""
    sizes = sizes_for(smoke)
    reps = 3 if smoke else 20
    rows = {"sort": lambda: sort_rows(t, smoke, sizes["sort"], peers, rng, reps, rounds,
                                      absent),
            "mask": lambda: mask_rows(t, smoke, sizes["mask"], peers, rng, reps, rounds,
                                      absent),
            "host": lambda: mask_host_rows(t, smoke, peers, rng, launch_us, absent),
            "random": lambda: random_rows(t, smoke, sizes["random"], peers, rng, reps,
                                          rounds, absent),
            "fft": lambda: fft_rows(t, smoke, sizes["fft"], peers, rng, reps, rounds, absent),
            "linalg": lambda: linalg_rows(t, smoke, sizes["linalg"], peers, rng,
                                          3 if smoke else 10, rounds, absent)}
    for group, row in rows.items():
        if group in groups:
            row()
            _release(peers)  # the row's arrays are gone with its frame


def main(argv=None):
    """`python -m benchmarks.api [--smoke] [groups]`: these rows alone, on a GPU
    (--smoke: tiny sizes, no peers; the simulator is fine)."""
    import os

    from . import __main__ as bench
    from . import targets

    args = sys.argv[1:] if argv is None else argv
    smoke = "--smoke" in args
    only = [a for a in args if a != "--smoke"]
    unknown = set(only) - set(GROUPS)
    if unknown:
        sys.exit(f"unknown group {', '.join(sorted(unknown))}: the groups are "
                 f"{' '.join(GROUPS)}")
    from pygpu import cuda

    if not cuda.is_available():
        if not smoke:
            sys.exit("no GPU: use --smoke to run these rows on the simulator")
        os.environ["PYGPU_SIMULATOR"] = "1"
    t = bench.Table(smoke=smoke, simulator=cuda.is_simulator(),
                    target_list=targets.load_targets())
    add_rows(t, smoke, bench.load_peers(smoke), np.random.default_rng(0), bench.gpu_ms_rounds,
             bench.launch_us, bench.absent, only or GROUPS)
    print(t.render())


if __name__ == "__main__":
    main()
