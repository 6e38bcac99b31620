"""Numba-CUDA's documentation examples and some of its own test kernels
(tests/jit/corpus/, each file naming its origin; BSD-2-Clause), unchanged
but for their import lines, run through pygpu.cuda.jit against NumPy; the
ones that do not run yet fail as docs/JIT.md says; and every C++ they made
compiles through NVRTC."""

import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from pygpu import cuda

sys.path.insert(0, str(Path(__file__).parent))
from conftest import run_with_nvrtc  # noqa: E402

CORPUS = Path(__file__).parent / "corpus"
_RAN = {}  # example -> its namespace, once per session


def _run(name, stop=None):
    """Runs corpus/<name>.py (up to the line that starts with `stop`, where
    given: the definitions without the launches) in a namespace of its own."""
    path = CORPUS / f"{name}.py"
    text = path.read_text()
    if stop is not None:
        text = text[:text.index("\n" + stop) + 1]
    ns = {"__name__": f"corpus_{name}", "__file__": str(path)}
    exec(compile(text, str(path), "exec"), ns)
    return ns


def _ran(name, stop=None):
    if name not in _RAN:
        _RAN[name] = _run(name, stop)
    return _RAN[name]


# -- the documentation's examples, run as they are, against NumPy -----------------


def test_vecadd():
    ns = _ran("doc_vecadd")
    a, b = ns["a"].copy_to_host(), ns["b"].copy_to_host()
    np.testing.assert_array_equal(ns["c"].copy_to_host(), a + b)


def test_matmul_and_fast_matmul_square_and_not():
    ns = _ran("doc_matmul")
    # the last run is the non-square product through shared memory
    assert ns["z_h"].shape == (5, 7)
    np.testing.assert_array_equal(ns["z_h"], ns["x_h"] @ ns["y_h"])


def test_shared_memory_tree_reduction():
    ns = _ran("doc_reduction")
    assert ns["a"].copy_to_host()[0] == np.arange(1024).sum()


def test_globals_are_captured_as_constants_when_the_kernel_compiles():
    ns = _ran("doc_globals_constant")
    # the second launch still sees TAX_RATE 0.08 and the first PRICES
    np.testing.assert_allclose(ns["d_totals"].copy_to_host(), [10.8, 54.0, 16.2, 64.8, 162.0])


def test_a_global_device_array_is_captured_by_its_address():
    ns = _ran("doc_globals_device_array")
    # the second launch sees the values copied into PRICES after the first
    np.testing.assert_array_equal(ns["d_totals"].copy_to_host(), [20, 50, 10, 30, 60])


def test_a_numpy_ufunc_of_arrays_in_a_kernel():
    ns = _ran("doc_ufunc")
    np.testing.assert_allclose(ns["r"], np.sin(ns["x"]), rtol=1e-6)
    assert np.all(ns["r"] != 0) or np.any(ns["x"] == 0)


def test_reduce_of_a_function_and_of_a_lambda():
    ns = _ran("rst_reduce")
    assert ns["got"] == ns["expect"] == 1234 * 1235 / 2
    # the page's last line makes the reduction of a lambda
    a = np.arange(1, 1001, dtype=np.float64)
    assert ns["sum_reduce"](a) == a.sum() and ns["sum_reduce"](a, init=5) == a.sum() + 5


def test_atomic_max_with_an_int_and_a_tuple_index():
    ns = _ran("rst_atomic_max")
    # the page's second example is the last: result[0, 1, 2] is the 3-d max
    assert ns["result"][0, 1, 2] == np.max(ns["arr"])
    assert np.count_nonzero(ns["result"]) == 1


def test_monte_carlo_pi_with_xoroshiro():
    ns = _ran("rst_random_pi")
    assert ns["out"].shape == (64 * 24,)
    assert abs(ns["out"].mean() - math.pi) < 5e-3
    assert len(np.unique(ns["out"])) > 100  # each thread draws its own numbers


@pytest.mark.parametrize("name, printed", [
    ("rst_dynamic_shared_alias", "3.140000\n1078523331\n"),
    ("rst_dynamic_shared_views", "3.140000\n1\n"),
])
def test_dynamic_shared_memory_aliases_and_views_print_as_the_page_says(name, printed,
                                                                        capfd):
    _ran(name)
    assert capfd.readouterr().out.endswith(printed)


def test_increment_kernels_of_the_kernels_page():
    t = _ran("rst_increment_threadidx")["increment_by_one"]
    g = _ran("rst_increment_grid")["increment_by_one"]
    two = _ran("rst_increment_2d")["increment_a_2D_array"]
    an_array = np.zeros(1000)
    threadsperblock = 32
    blockspergrid = (an_array.size + (threadsperblock - 1)) // threadsperblock
    t[blockspergrid, threadsperblock](an_array)
    g[blockspergrid, threadsperblock](an_array)
    np.testing.assert_array_equal(an_array, 2)
    b = np.arange(37 * 45.0).reshape(37, 45)
    two[(3, 3), (16, 16)](b)
    np.testing.assert_array_equal(b, np.arange(37 * 45.0).reshape(37, 45) + 1)


def test_random_3d_kernel_on_a_smaller_grid():
    # the page's array is 701 x 900 x 719 with 2**21 states: too much for the
    # simulator; its kernel runs unchanged here on a smaller one
    ns = _ran("doc_random_3d", stop="# Array dimensions")
    states = ns["create_xoroshiro128p_states"](2 * 2 * 2 * 4 * 4 * 4, seed=1)
    arr = cuda.device_array((9, 10, 11), dtype=np.float32)
    ns["random_3d"][(2, 2, 2), (4, 4, 4)](arr, states)
    h = arr.copy_to_host()
    assert np.all((h >= 0) & (h <= 1)) and 0.4 < h.mean() < 0.6
    assert len(np.unique(h)) > 900


def test_a_recursive_device_function_with_a_signature():
    fib = _ran("rst_recursion_fib")["fib"]

    @cuda.jit
    def fibs(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = fib(i)

    out = np.zeros(15, np.int64)
    fibs[1, 32](out)
    ref = [0, 1]
    while len(ref) < 15:
        ref.append(ref[-1] + ref[-2])
    np.testing.assert_array_equal(out, ref)
    _RAN["rst_recursion_fib"]["fibs"] = fibs  # for the NVRTC test


# -- Numba-CUDA's own test kernels (cudapy), against NumPy as those tests do --------


def test_cudapy_black_scholes_with_a_device_function_matches_numpy():
    ns = _ran("cudapy_blackscholes")
    rng = np.random.default_rng(5)
    n = 400
    s = ns["randfloat"](rng.random(n), 5.0, 30.0)
    x = ns["randfloat"](rng.random(n), 1.0, 100.0)
    t = ns["randfloat"](rng.random(n), 0.25, 10.0)
    call, put = np.zeros(n), -np.ones(n)
    ns["black_scholes"](call, put, s, x, t, ns["RISKFREE"], ns["VOLATILITY"])
    dcall, dput = cuda.to_device(np.zeros(n)), cuda.to_device(-np.ones(n))
    ns["black_scholes_cuda"][(n + 127) // 128, 128](dcall, dput, cuda.to_device(s),
                                                   cuda.to_device(x), cuda.to_device(t),
                                                   ns["RISKFREE"], ns["VOLATILITY"])
    np.testing.assert_allclose(dcall.copy_to_host(), call, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dput.copy_to_host(), put, rtol=1e-12, atol=1e-12)


def test_cudapy_jacobi_relaxation_and_its_block_max_error():
    ns = _ran("cudapy_laplace")
    tpb, n = ns["tpb"], 32
    rng = np.random.default_rng(6)
    a = rng.random((n, n))
    anew = np.zeros((n, n))
    err = np.zeros((n // tpb, n // tpb))
    ns["jocabi_relax_core"][(n // tpb, n // tpb), (tpb, tpb)](a, anew, err)
    ref = np.zeros((n, n))
    ref[1:-1, 1:-1] = 0.25 * (a[1:-1, 2:] + a[1:-1, :-2] + a[:-2, 1:-1] + a[2:, 1:-1])
    np.testing.assert_allclose(anew, ref, rtol=1e-15)
    diff = np.where(ref != 0, ref - a, 0.0)
    blocks = np.maximum(diff.reshape(2, tpb, 2, tpb).max(axis=(1, 3)), 0)
    np.testing.assert_array_equal(err, blocks)


def test_cudapy_shared_memory_matmul_with_a_signature():
    ns = _ran("cudapy_matmul")
    n, bpg, tpb = ns["n"], ns["bpg"], ns["tpb"]
    rng = np.random.default_rng(7)
    a = rng.random((n, n)).astype(np.float32)
    b = rng.random((n, n)).astype(np.float32)
    c = np.zeros_like(a)
    ns["cu_square_matrix_mul"][(bpg, bpg), (tpb, tpb)](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


@pytest.mark.parametrize("kernel", ["enumerator", "zipper", "enumerator_zipper",
                                    "zipper_enumerator"])
def test_cudapy_enumerate_and_zip(kernel):
    f = _ran("cudapy_iterators")[kernel]
    x = np.asarray((10, 9, 8, 7, 6))
    y = np.asarray((1, 2, 3, 4, 5))
    error = np.zeros(1, dtype=np.int32)
    if kernel == "enumerator":
        f[1, 1](x, error)
    else:
        f[1, 1](x, y, error)
    assert error[0] == 0  # each kernel writes 1 to 4 where an item or count is wrong


# -- the examples that do not run yet, failing as docs/JIT.md says ------------------


@pytest.mark.parametrize("name, error, match", [
    ("doc_laplace", cuda.TypingError, "cuda has no attribute 'cg'"),
    ("doc_sessionize", cuda.TypingError, "cuda has no attribute 'cg'"),
    ("doc_cg_grid_sync", cuda.TypingError, "cuda has no attribute 'cg'"),
    ("doc_cpointer", AttributeError, "CPointer"),
    ("doc_montecarlo", ImportError, "numba"),
    ("doc_cpu_gpu_compat", ImportError, "numba"),
])
def test_examples_that_do_not_run_yet_fail_as_documented(name, error, match):
    if name in ("doc_montecarlo", "doc_cpu_gpu_compat"):
        try:
            import numba  # noqa: F401
            pytest.skip("Numba is installed here: @numba.jit is not pygpu's to test")
        except ImportError:
            pass
    with pytest.raises(error, match=match):
        _run(name)
    assert name in (Path(__file__).parents[2] / "docs" / "JIT.md").read_text()


# -- everything above through NVRTC --------------------------------------------------

_NVRTC_SCRIPT = r"""
import pathlib, sys
from pygpu.rawkernel import compile_cuda
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.cu")):
    image, log, _ = compile_cuda(f.read_text(), arch="sm_90")
    assert image[:4] == b"\x7fELF", f.name
    print(f.stem, "ok")
"""


def test_every_corpus_kernel_compiles_through_nvrtc():
    from pygpu._jit import Dispatcher
    for name in ("doc_vecadd", "doc_matmul", "doc_reduction", "doc_globals_constant",
                 "doc_globals_device_array", "doc_ufunc", "rst_atomic_max", "rst_random_pi",
                 "cudapy_blackscholes", "cudapy_laplace", "cudapy_matmul"):
        _ran(name)
    sources = {}
    for name, ns in _RAN.items():
        for key, value in ns.items():
            if isinstance(value, Dispatcher) and not value.device:
                for i, src in enumerate(value.inspect_cuda().values()):
                    sources[f"{name}.{key}.{i}"] = src
    assert len(sources) >= 10, sorted(sources)  # more where the tests above ran first
    with tempfile.TemporaryDirectory() as tmp:
        for stem, src in sources.items():
            Path(tmp, stem + ".cu").write_text(src)
        out = run_with_nvrtc(_NVRTC_SCRIPT, tmp)
    assert out.count(" ok") == len(sources), out
