"""Real kernels, unchanged: a corpus of CUDA C from public sample collections
(NVIDIA/cuda-samples, karpathy/llm.c dev/cuda), each file byte-for-byte as
in its repository (corpus/MANIFEST.json: repository, path, commit, licence,
sha256), compiled by pygpu (NVRTC on a GPU, the host C++ compiler on the
simulator) and checked against NumPy on random inputs.

"Unchanged" here: a kernel's source is its upstream file, or line ranges of
it (with line ranges of the headers it includes, such as llm.c's common.h),
concatenated; no line is edited or added. The ranges leave out what is host
code (main(), launchers with <<<>>>, cuBLAS setup, helper_cuda.h) and never
cut into a kernel or a device function. Options are -I (the sample's folder)
and -D only where the sample's build gives them. Each source compiles once
(module()) for all its kernels. Kernels that do not run here are in
docs/SIMULATOR.md, "Real kernels", with the reason."""

import functools
import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import ON_SIMULATOR, run_with_nvrtc

import pygpu
from pygpu import cuda

CORPUS = Path(__file__).with_name("corpus")
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())
SAMPLES = "cuda-samples/Samples/"
LLMC = "llm.c/dev/cuda/"
# llm.c's common.h without its host code (cuBLAS, error checks, random data)
COMMON = (LLMC + "common.h", "1-3,6-8,10-55,95-219")


def text(path, ranges=None):
    """The file's text, or the lines `ranges` ("1-39,41-54") of it."""
    data = (CORPUS / path).read_text()
    if ranges is None:
        return data
    lines = data.splitlines(keepends=True)
    out = []
    for part in ranges.split(","):
        first, _, last = part.partition("-")
        out += lines[int(first) - 1:int(last or first)]
    return "".join(out)


def source(*parts):
    """The source of parts: paths or (path, ranges)."""
    return "".join(text(*((p,) if isinstance(p, str) else p)) for p in parts)


@functools.cache
def module(parts, options=(), names=()):
    """The parts compiled once (a RawModule), with the name expressions `names`."""
    folders = {str((CORPUS / (p if isinstance(p, str) else p[0])).parent) for p in parts}
    options = tuple(f"-I{f}" for f in sorted(folders)) + tuple(options)
    return pygpu.RawModule(source(*parts), options=options, name_expressions=names)


def kernel(parts, name, options=(), names=()):
    return module(parts, tuple(options), tuple(names)).get_function(name)


def ints(rng, n, lo=0, hi=1000, dtype=np.int32):
    return rng.integers(lo, hi, n).astype(dtype)


def floats(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def close(got, want, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=rtol, atol=atol)


i32, u32, f32 = np.int32, np.uint32, np.float32


@pytest.fixture
def rng():
    return np.random.default_rng(25)


def test_corpus_files_are_unchanged_from_their_repositories():
    for path, entry in MANIFEST["files"].items():
        data = (CORPUS / path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], path
        origin = MANIFEST["origins"][entry["origin"]]
        assert (CORPUS / origin["licence_file"]).exists()
        assert re.fullmatch(r"[0-9a-f]{40}", origin["commit"])


# ---- cuda-samples ------------------------------------------------------------------

VECTORADD_NVRTC = (SAMPLES + "0_Introduction/vectorAdd_nvrtc/vectorAdd_kernel.cu",)
VECTORADD = ((SAMPLES + "0_Introduction/vectorAdd/vectorAdd.cu", "1-39,41-54"),)
VECADD_DRV = (SAMPLES + "0_Introduction/simpleDrvRuntime/vectorAdd_kernel.cu",)


@pytest.mark.parametrize("parts, name", [(VECTORADD_NVRTC, "vectorAdd"),
                                         (VECTORADD, "vectorAdd"),
                                         (VECADD_DRV, "VecAdd_kernel")],
                         ids=["vectorAdd_nvrtc", "vectorAdd (C++ name)", "VecAdd_kernel"])
def test_vector_add_samples_add(rng, parts, name):
    n = 50000
    a, b = floats(rng, n), floats(rng, n)
    c = cuda.device_array(n, f32)
    kernel(parts, name)[(n + 255) // 256, 256](cuda.to_device(a), cuda.to_device(b), c, i32(n))
    close(c.copy_to_host(), a + b, rtol=0, atol=0)


MATMUL_NVRTC = (SAMPLES + "0_Introduction/matrixMul_nvrtc/matrixMul_kernel.cu",)
MATMUL_DRV = (SAMPLES + "0_Introduction/matrixMulDrv/matrixMul_kernel.cu",)
MATMUL = ((SAMPLES + "0_Introduction/matrixMul/matrixMul.cu", "1-44,53-126"),)


@pytest.mark.parametrize("parts, name, block, size", [
    (MATMUL_NVRTC, "matrixMulCUDA_block16", 16, np.int32),
    (MATMUL_NVRTC, "matrixMulCUDA_block32", 32, np.int32),
    (MATMUL_DRV, "matrixMul_bs8_64bit", 8, np.uint64),
    (MATMUL_DRV, "matrixMul_bs16_64bit", 16, np.uint64),
    (MATMUL_DRV, "matrixMul_bs32_64bit", 32, np.uint64),
    (MATMUL, "MatrixMulCUDA<16>", 16, np.int32),
    (MATMUL, "MatrixMulCUDA<32>", 32, np.int32),
], ids=lambda v: v if isinstance(v, str) else None)
def test_matrix_mul_samples_multiply(rng, parts, name, block, size):
    hA, wA, wB = 2 * block, 3 * block, 2 * block
    A, B = floats(rng, hA, wA), floats(rng, wA, wB)
    C = cuda.device_array((hA, wB), f32)
    names = (name,) if "<" in name else ()
    kernel(parts, name, names=names)[(wB // block, hA // block), (block, block)](
        C, cuda.to_device(A), cuda.to_device(B), size(wA), size(wB))
    close(C.copy_to_host(), A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)


REDUCTION = ((SAMPLES + "2_Concepts_and_Techniques/reduction/reduction_kernel.cu",
              "1-627,990-991"),)
REDUCTIONS = ["reduce0<int>", "reduce1<int>", "reduce2<int>", "reduce3<int>",
              "reduce4<int, 256>", "reduce5<int, 256>", "reduce6<int, 256, true>",
              "reduce6<int, 256, false>", "reduce7<int, 256, true>",
              "reduce7<int, 256, false>", "cg_reduce<int>",
              "multi_warp_cg_reduce<int, 256, 64>", "reduce6<float, 256, false>"]


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_sample_kernels_sum(rng, name):
    dtype = np.float32 if "float" in name else np.int32
    threads, blocks = 256, 8
    # reduce3 onwards read two elements a thread; the first three, one
    per_block = threads if re.match(r"reduce[012]<", name) else 2 * threads
    n = blocks * per_block - (0 if "true" in name or "<int>" in name else 37)
    if name.startswith(("cg_reduce", "reduce7", "multi_warp")):
        n = blocks * per_block * 3 - 5 * ("false" in name or "cg" in name)
    x = (rng.integers(-100, 100, n) if dtype == np.int32 else rng.standard_normal(n))
    x = x.astype(dtype)
    out = cuda.device_array(blocks, dtype)
    f = kernel(REDUCTION, name, names=REDUCTIONS)
    f[blocks, threads, 0, threads * x.itemsize](cuda.to_device(x), out, u32(n))
    got = out.copy_to_host()
    if n != blocks * per_block:  # a block's share is not a slice: the total
        close(got.sum(), x.astype(np.float64).sum(), rtol=1e-5, atol=1e-3)
    else:
        close(got, x.astype(np.float64).reshape(blocks, -1).sum(1), rtol=1e-5, atol=1e-3)


TRANSPOSE = ((SAMPLES + "6_Performance/transpose/transpose.cu", "1-43,50-58,63-65,69-297"),)


@pytest.mark.parametrize("name", ["copy", "copySharedMem", "transposeNaive",
                                  "transposeCoalesced", "transposeNoBankConflicts",
                                  "transposeDiagonal", "transposeFineGrained",
                                  "transposeCoarseGrained"])
def test_transpose_sample_kernels_transpose(rng, name):
    w, h = (64, 64) if name.endswith("Grained") else (96, 64)
    x = floats(rng, h, w)
    out = cuda.device_array(w * h, f32)
    kernel(TRANSPOSE, name)[(w // 32, h // 32), (32, 16)](out, cuda.to_device(x), i32(w),
                                                          i32(h))
    got = out.copy_to_host()
    if name.startswith("copy"):
        want = x.ravel()
    elif name.endswith("Grained"):  # the sample's partial transposes, of tiles
        tiles = x.reshape(h // 32, 32, w // 32, 32)
        axes = (0, 3, 2, 1) if "Fine" in name else (2, 1, 0, 3)
        want = tiles.transpose(axes).ravel()
    else:
        want = x.T.ravel()
    close(got, want, rtol=0, atol=0)


SCALARPROD = (SAMPLES + "2_Concepts_and_Techniques/scalarProd/scalarProd_kernel.cuh",)


def test_scalar_prod_sample_dots_vectors(rng):
    vectors, n = 16, 3000
    a, b = floats(rng, vectors, n), floats(rng, vectors, n)
    out = cuda.device_array(vectors, f32)
    kernel(SCALARPROD, "scalarProdGPU")[8, 256](out, cuda.to_device(a), cuda.to_device(b),
                                               i32(vectors), i32(n))
    close(out.copy_to_host(), (a.astype(np.float64) * b).sum(1), rtol=1e-4, atol=1e-4)


VOTE = (SAMPLES + "0_Introduction/simpleVoteIntrinsics/simpleVote_kernel.cuh",)


@pytest.mark.parametrize("name", ["VoteAnyKernel1", "VoteAllKernel2"])
def test_simple_vote_sample_any_and_all(rng, name):
    n = 128
    x = (rng.random(n) < 0.03).astype(np.uint32)
    x[32:64] = 1
    x[64:96] = 0
    out = cuda.device_array(n, np.uint32)
    kernel(VOTE, name)[1, n](cuda.to_device(x), out, i32(n))
    warps = x.reshape(-1, 32)
    want = warps.any(1) if "Any" in name else warps.all(1)
    np.testing.assert_array_equal(out.copy_to_host() != 0, np.repeat(want, 32))


def test_simple_vote_sample_directed_test():
    n = 96
    info = cuda.to_device(np.zeros(n * 3, np.bool_))
    kernel(VOTE, "VoteAnyKernel3")[1, n](info, i32(32))
    got = info.copy_to_host().reshape(n, 3)
    tx = np.arange(n)
    np.testing.assert_array_equal(got[:, 0], tx >= 32)
    np.testing.assert_array_equal(got[:, 1], tx >= 48)
    np.testing.assert_array_equal(got[:, 2], tx >= 64)


ATOMICS = (SAMPLES + "0_Introduction/simpleAtomicIntrinsics_nvrtc/"
           "simpleAtomicIntrinsics_kernel.cuh",)


def test_simple_atomic_intrinsics_sample():
    blocks, threads = 4, 32
    n = blocks * threads
    start = np.array([0, 0, 0, 0, 1 << 30, 0, 0, 0, 0xFF, 0, 0xFF], np.int32)
    g = cuda.to_device(start)
    kernel(ATOMICS, "testKernel")[blocks, threads](g)
    got = g.copy_to_host()
    tid = np.arange(n)
    assert got[0] == 10 * n and got[1] == -10 * n
    assert 0 <= got[2] < n and got[3] == n - 1 and got[4] == 0
    assert got[5] == n % 18
    dec = 0
    for _ in range(n):
        dec = 137 if dec == 0 or dec > 137 else dec - 1
    assert got[6] == dec
    assert 0 <= got[7] < n
    assert got[8] == np.bitwise_and.reduce(np.append(2 * tid + 7, 0xFF))
    assert got[9] == np.bitwise_or.reduce((1 << (tid % 32)).astype(np.int64)) - (1 << 32) \
        or got[9] == np.int32(-1)
    assert got[10] == 0xFF ^ np.bitwise_xor.reduce(tid)


BLACKSCHOLES = (SAMPLES + "5_Domain_Specific/BlackScholes_nvrtc/BlackScholes_kernel.cuh",)


def _black_scholes(S, X, T, R, V):
    from math import erf
    cnd = np.vectorize(lambda d: 0.5 * (1 + erf(d / math.sqrt(2))))
    sqrtT = np.sqrt(T)
    d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    call = S * cnd(d1) - X * np.exp(-R * T) * cnd(d2)
    put = X * np.exp(-R * T) * (1 - cnd(d2)) - S * (1 - cnd(d1))
    return call, put


def test_black_scholes_sample_prices_options(rng):
    n = 2000
    S = rng.uniform(5, 30, n).astype(f32)
    X = rng.uniform(1, 100, n).astype(f32)
    T = rng.uniform(0.25, 10, n).astype(f32)
    call, put = cuda.device_array(n, f32), cuda.device_array(n, f32)
    kernel(BLACKSCHOLES, "BlackScholesGPU")[(n // 2 + 127) // 128, 128](
        call, put, cuda.to_device(S), cuda.to_device(X), cuda.to_device(T), f32(0.02),
        f32(0.30), i32(n))
    want_call, want_put = _black_scholes(S.astype(np.float64), X, T, 0.02, 0.30)
    close(call.copy_to_host(), want_call, rtol=1e-4, atol=1e-4)
    close(put.copy_to_host(), want_put, rtol=1e-4, atol=1e-4)


INLINE_PTX = (SAMPLES + "2_Concepts_and_Techniques/inlinePTX_nvrtc/inlinePTX_kernel.cu",)


def test_inline_ptx_sample_reads_the_lane_id():
    n = 1000
    out = cuda.device_array(n, i32)
    kernel(INLINE_PTX, "sequence_gpu")[(n + 255) // 256, 256](out, i32(n))
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(n) % 32)


ASSERT = (SAMPLES + "0_Introduction/simpleAssert_nvrtc/simpleAssert_kernel.cu",)


def test_simple_assert_sample_passes_within_bounds():
    kernel(ASSERT, "testKernel")[2, 32](i32(64))
    cuda.synchronize()


@pytest.mark.skipif(not ON_SIMULATOR, reason="a failed assert ends a GPU's context")
def test_simple_assert_sample_raises_out_of_bounds():
    with pytest.raises(pygpu.KernelAssertionError, match="gtid < N"):
        kernel(ASSERT, "testKernel")[2, 32](i32(60))
        cuda.synchronize()


CLOCK = (SAMPLES + "0_Introduction/clock_nvrtc/clock_kernel.cu",)


def test_clock_sample_finds_the_minimum_in_each_block(rng):
    blocks, threads = 8, 64
    x = floats(rng, 2 * threads)
    out = cuda.device_array(blocks, f32)
    timer = cuda.device_array(2 * blocks, np.int64)
    # the sample reduces input[0:2 * threads] in every block
    kernel(CLOCK, "timedReduction")[blocks, threads, 0, 2 * threads * 4](
        cuda.to_device(x), out, timer)
    close(out.copy_to_host(), np.full(blocks, x.min()), rtol=0, atol=0)


HISTOGRAM = ((SAMPLES + "2_Concepts_and_Techniques/histogram/histogram256.cu",
              "1-34,36-126"),)


def test_histogram256_sample_counts_bytes(rng):
    partials, words = 16, 16 * 192 * 3
    data = rng.integers(0, 2**32, words, dtype=np.uint64).astype(np.uint32)
    partial = cuda.device_array(partials * 256, np.uint32)
    kernel(HISTOGRAM, "histogram256Kernel")[partials, 192](partial, cuda.to_device(data),
                                                           u32(words))
    hist = cuda.device_array(256, np.uint32)
    kernel(HISTOGRAM, "mergeHistogram256Kernel")[256, 256](hist, partial, u32(partials))
    want = np.bincount(data.view(np.uint8), minlength=256)
    np.testing.assert_array_equal(hist.copy_to_host(), want)


SCAN = ((SAMPLES + "2_Concepts_and_Techniques/scan/scan.cu", "1-31,33-168"),)


def _exclusive_scan(x, length):
    rows = x.reshape(-1, length).astype(np.uint64)
    return (np.cumsum(rows, 1) - rows).astype(np.uint32).ravel()


def test_scan_sample_short_arrays(rng):
    batch, length = 4, 1024
    x = rng.integers(0, 1000, batch * length).astype(np.uint32)
    out = cuda.device_array(x.size, np.uint32)
    kernel(SCAN, "scanExclusiveShared")[x.size // 1024, 256](out, cuda.to_device(x),
                                                             u32(length))
    np.testing.assert_array_equal(out.copy_to_host(), _exclusive_scan(x, length))


def test_scan_sample_large_arrays_in_three_kernels(rng):
    batch, length = 2, 8192
    x = rng.integers(0, 1000, batch * length).astype(np.uint32)
    src, dst = cuda.to_device(x), cuda.device_array(x.size, np.uint32)
    buf = cuda.device_array(x.size // 1024, np.uint32)
    kernel(SCAN, "scanExclusiveShared")[x.size // 1024, 256](dst, src, u32(1024))
    kernel(SCAN, "scanExclusiveShared2")[1, 256](buf, dst, src, u32(x.size // 1024),
                                                 u32(length // 1024))
    kernel(SCAN, "uniformUpdate")[x.size // 1024, 256](dst, buf)
    np.testing.assert_array_equal(dst.copy_to_host(), _exclusive_scan(x, length))


BITONIC = ((SAMPLES + "2_Concepts_and_Techniques/sortingNetworks/bitonicSort.cu",
            "1-33,35-213"),)


@pytest.mark.parametrize("length, batch", [(512, 4), (4096, 1)])
def test_bitonic_sort_sample_sorts_keys_and_values(rng, length, batch):
    keys = rng.integers(0, 2**32, batch * length, dtype=np.uint64).astype(np.uint32)
    values = np.arange(keys.size, dtype=np.uint32)
    dk, dv = cuda.device_array(keys.size, np.uint32), cuda.device_array(keys.size, np.uint32)
    sk, sv = cuda.to_device(keys), cuda.to_device(values)
    blocks, threads = keys.size // 1024, 512
    if length <= 1024:
        kernel(BITONIC, "bitonicSortShared")[blocks, threads](dk, dv, sk, sv, u32(length),
                                                              u32(1))
    else:  # the sample's bitonicSort() host loop
        kernel(BITONIC, "bitonicSortShared1")[blocks, threads](dk, dv, sk, sv)
        size = 2048
        while size <= length:
            stride = size // 2
            while stride > 0:
                if stride >= 1024:
                    kernel(BITONIC, "bitonicMergeGlobal")[keys.size // 512, 256](
                        dk, dv, dk, dv, u32(length), u32(size), u32(stride), u32(1))
                else:
                    kernel(BITONIC, "bitonicMergeShared")[blocks, threads](
                        dk, dv, dk, dv, u32(length), u32(size), u32(1))
                    break
                stride //= 2
            size *= 2
    got_k, got_v = dk.copy_to_host(), dv.copy_to_host()
    np.testing.assert_array_equal(got_k, np.sort(keys.reshape(batch, length), 1).ravel())
    np.testing.assert_array_equal(keys[got_v], got_k)


SHFL_SCAN = ((SAMPLES + "2_Concepts_and_Techniques/shfl_scan/shfl_scan.cu",
              "1-36,39-148"),)


def test_shfl_scan_sample_inclusive_scan(rng):
    block, blocks = 256, 32
    n = block * blocks
    x = rng.integers(0, 100, n).astype(np.int32)
    data, partial = cuda.to_device(x), cuda.device_array(blocks, i32)
    scan = kernel(SHFL_SCAN, "shfl_scan_test")
    scan[blocks, block, 0, block // 32 * 4](data, i32(32), partial)
    scan[1, blocks, 0, block // 32 * 4](partial, i32(32), cuda.device_array(1, i32))
    kernel(SHFL_SCAN, "uniform_add")[blocks - 1, block](data[block:], partial, i32(n))
    np.testing.assert_array_equal(data.copy_to_host(), np.cumsum(x))


BINARY_PARTITION = ((SAMPLES + "3_CUDA_Features/binaryPartitionCG/binaryPartitionCG.cu",
                     "1-47,49-52,59-99"),)


def test_binary_partition_cg_sample_counts_odds_and_sums(rng):
    blocks, threads = 4, 128
    n = blocks * threads * 3
    x = rng.integers(0, 50, n).astype(np.int32)
    odds, sums = cuda.to_device(np.zeros(1, i32)), cuda.to_device(np.zeros(2, i32))
    kernel(BINARY_PARTITION, "oddEvenCountAndSumCG")[blocks, threads](
        cuda.to_device(x), odds, sums, u32(n))
    assert odds.copy_to_host()[0] == (x % 2 == 1).sum()
    np.testing.assert_array_equal(sums.copy_to_host(),
                                  [x[x % 2 == 1].sum(), x[x % 2 == 0].sum()])


SIMPLE_CG = ((SAMPLES + "0_Introduction/simpleCooperativeGroups/simpleCooperativeGroups.cu",
              "1-147"),)


def test_simple_cooperative_groups_sample_prints_its_sums(capfd):
    threads = 64
    kernel(SIMPLE_CG, "cgkernel")[1, threads, 0, threads * 4]()
    cuda.synchronize()
    out = capfd.readouterr().out
    assert "Sum of all ranks 0..63 in threadBlockGroup is 2016 (expected 2016)" in out
    assert out.count("Sum of all ranks 0..15 in this tiledPartition16 group is 120 "
                     "(expected 120)") == threads // 16


# helper_cuda.h, helper_functions.h and the host's sSDKsample left out
MULTIBLOCK_CG = ((SAMPLES + "2_Concepts_and_Techniques/reductionMultiBlockCG/"
                  "reductionMultiBlockCG.cu", "1-63,66,68-143"),)


def test_reduction_multi_block_cg_sample_sums_in_one_cooperative_launch(rng):
    blocks, threads = 4, 128
    n = 1 << 14
    x = floats(rng, n)
    out = cuda.device_array(blocks, f32)
    kernel(MULTIBLOCK_CG, "reduceSinglePassMultiBlockCG")[
        blocks, threads, 0, threads * 8](cuda.to_device(x), out, u32(n), cooperative=True)
    close(out.copy_to_host()[0], x.astype(np.float64).sum(), rtol=1e-5, atol=1e-3)


THREADFENCE = ((SAMPLES + "2_Concepts_and_Techniques/threadFenceReduction/"
                "threadFenceReduction_kernel.cuh", "1-131,136-207,403"),)
THREADFENCE_NAMES = ("reduceMultiPass<128, false>", "reduceSinglePass<128, false>",
                     "reduceSinglePass<128, true>")


@pytest.mark.parametrize("name", THREADFENCE_NAMES)
def test_thread_fence_reduction_sample_sums(rng, name):
    blocks, threads = 8, 128
    n = blocks * threads * 2 * 3 - (0 if "true" in name else 11)
    x = floats(rng, n)
    out = cuda.device_array(blocks, f32)
    kernel(THREADFENCE, name, names=THREADFENCE_NAMES)[blocks, threads, 0, threads * 4](
        cuda.to_device(x), out, u32(n))
    got = out.copy_to_host()
    total = got.sum() if "Multi" in name else got[0]
    close(total, x.astype(np.float64).sum(), rtol=1e-5, atol=1e-3)


FWT = ((SAMPLES + "5_Domain_Specific/fastWalshTransform/fastWalshTransform_kernel.cuh",
        "1-148,171-183,186-187"),)


def _hadamard(n):
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h


def test_fast_walsh_transform_sample_in_one_and_two_kernels(rng):
    batches, log2n = 3, 8
    n = 1 << log2n
    x = floats(rng, batches, n)
    d = cuda.to_device(x)
    kernel(FWT, "fwtBatch1Kernel")[batches, n // 4, 0, n * 4](d, d, i32(log2n))
    close(d.copy_to_host(), x.astype(np.float64) @ _hadamard(n).T, rtol=1e-4, atol=1e-3)
    n = 1 << 12  # one radix-4 step (fwtBatch2Kernel), then 4 batches of 2**10
    y = floats(rng, n)
    d = cuda.to_device(y)
    kernel(FWT, "fwtBatch2Kernel")[(n // 1024, 1), 256](d, d, i32(n // 4))
    kernel(FWT, "fwtBatch1Kernel")[4, 256, 0, 1024 * 4](d, d, i32(10))
    close(d.copy_to_host(), _hadamard(n) @ y.astype(np.float64), rtol=1e-4, atol=1e-2)


def test_fast_walsh_transform_sample_modulates(rng):
    n = 5000
    a, b = floats(rng, n), floats(rng, n)
    d = cuda.to_device(a)
    kernel(FWT, "modulateKernel")[8, 256](d, cuda.to_device(b), i32(n))
    close(d.copy_to_host(), a * (b * np.float32(1 / n)), rtol=1e-6)


QUASIRANDOM = (SAMPLES + "5_Domain_Specific/quasirandomGenerator_nvrtc/"
               "quasirandomGenerator_kernel.cu",)


def test_quasirandom_sample_inverse_cnd(rng):
    from statistics import NormalDist
    n = 4000
    out = cuda.device_array(n, f32)
    kernel(QUASIRANDOM, "inverseCNDKernel")[16, 128](out, u32(n))
    distance = 0xFFFFFFFF // (n + 1)
    p = ((np.arange(n) + 1) * distance + 0.5) / 2.0**32
    want = [NormalDist().inv_cdf(v) for v in p]
    close(out.copy_to_host(), want, rtol=1e-4, atol=2e-4)


FP16 = ((SAMPLES + "0_Introduction/fp16ScalarProduct/fp16ScalarProduct.cu", "1-32,34-134"),)


@pytest.mark.parametrize("name", ["scalarProductKernel_intrinsics",
                                  "scalarProductKernel_native"])
def test_fp16_scalar_product_sample_in_half2(rng, name):
    blocks = threads = 128
    size = blocks * threads * 4
    a = rng.uniform(0, 1, (size, 2)).astype(np.float16)
    b = rng.uniform(0, 1, (size, 2)).astype(np.float16)
    out = cuda.device_array(blocks, f32)
    kernel(FP16, name)[blocks, threads](cuda.to_device(a.view(np.uint32)),
                                        cuda.to_device(b.view(np.uint32)), out, np.uint64(size))
    # the sample's loop starts at threadIdx.x + blockDim.x + blockIdx.x (sic)
    prod = (a.astype(np.float64) * b).sum(1)
    stride = blocks * threads
    want = [sum(prod[t + threads + blk::stride].sum() for t in range(threads))
            for blk in range(blocks)]
    close(out.copy_to_host(), want, rtol=2e-2)


CONVOLUTION = ((SAMPLES + "2_Concepts_and_Techniques/convolutionSeparable/"
                "convolutionSeparable.cu", "1-29,31-39,44-104,118-179"),)


def test_convolution_separable_sample_rows_then_columns(rng):
    W, H, R = 128, 64, 8
    image, taps = floats(rng, H, W), floats(rng, 2 * R + 1)
    m = module(CONVOLUTION)
    m.memcpy_to_symbol("c_Kernel", taps)  # the sample's setConvolutionKernel()
    np.testing.assert_array_equal(m.memcpy_from_symbol("c_Kernel", np.float32), taps)
    src, tmp, dst = cuda.to_device(image), cuda.device_array((H, W), f32), \
        cuda.device_array((H, W), f32)
    m.get_function("convolutionRowsKernel")[(W // 128, H // 4), (16, 4)](
        tmp, src, i32(W), i32(H), i32(W))
    m.get_function("convolutionColumnsKernel")[(W // 16, H // 64), (16, 8)](
        dst, tmp, i32(W), i32(H), i32(W))
    padded = np.pad(image.astype(np.float64), R)
    rows = sum(padded[R:-R, R + k:R + k + W] * taps[R - k] for k in range(-R, R + 1))
    padded = np.pad(rows, ((R, R), (0, 0)))
    want = sum(padded[R + k:R + k + H] * taps[R - k] for k in range(-R, R + 1))
    close(tmp.copy_to_host(), rows, rtol=1e-4, atol=1e-4)
    close(dst.copy_to_host(), want, rtol=1e-4, atol=1e-4)


WARP_AGGREGATED = ((SAMPLES + "3_CUDA_Features/warpAggregatedAtomicsCG/"
                    "warpAggregatedAtomicsCG.cu", "1-32,35-104,149-183"),)


def test_warp_aggregated_atomics_cg_sample_filters_and_buckets(rng):
    n, buckets = 4096, 7
    x = rng.integers(-5, 5, n).astype(np.int32)
    dst, nres = cuda.device_array(n, i32), cuda.to_device(np.zeros(1, i32))
    kernel(WARP_AGGREGATED, "filter_arr")[4, 128](dst, nres, cuda.to_device(x), i32(n))
    k = nres.copy_to_host()[0]
    assert k == (x > 0).sum()
    np.testing.assert_array_equal(np.sort(dst.copy_to_host()[:k]), np.sort(x[x > 0]))
    b = rng.integers(0, buckets + 2, n).astype(np.int32)
    values = rng.integers(-1000, 1000, n).astype(np.int32)
    maxes = cuda.to_device(np.full(buckets, -(2**31), i32))
    kernel(WARP_AGGREGATED, "calculateMaxInEachBuckets")[4, 128](
        cuda.to_device(b), cuda.to_device(values), maxes, i32(n), i32(buckets))
    np.testing.assert_array_equal(maxes.copy_to_host(),
                                  [values[b == j].max() for j in range(buckets)])


# the constants come from the sample's main file, which then includes the kernels
DWT_HAAR = ((SAMPLES + "5_Domain_Specific/dwtHaar1D/dwtHaar1D.cu", "1-92,97-104"),)


def test_dwt_haar_1d_sample_decomposes_a_signal(rng):
    bdim = 256
    n = 2 * bdim
    x = floats(rng, n)
    od = cuda.device_array(n, f32)
    kernel(DWT_HAAR, "initValue")[2, bdim](od, f32(0))
    approx = cuda.device_array(1, f32)
    kernel(DWT_HAAR, "dwtHaar1D")[1, bdim, 0, 3 * bdim * 4](
        cuda.to_device(x), od, approx, u32(int(math.log2(n))), u32(bdim), i32(bdim))
    a, want = x.astype(np.float64), np.zeros(n)
    while a.size > 1:  # Haar: details of each level at [len/2, len), then the rest
        d = (a[0::2] - a[1::2]) / math.sqrt(2)
        a = (a[0::2] + a[1::2]) / math.sqrt(2)
        want[d.size:2 * d.size] = d
    got = od.copy_to_host()
    close(got[1:], want[1:], rtol=1e-4, atol=1e-5)
    close(approx.copy_to_host(), a, rtol=1e-4, atol=1e-5)


# ---- llm.c dev/cuda (floatX is float: common.h's default) ---------------------------

GELU_FWD = (COMMON, (LLMC + "gelu_forward.cu", "29,41-67"))
GELU_BWD = (COMMON, (LLMC + "gelu_backward.cu", "29,44-81"))
RESIDUAL = (COMMON, (LLMC + "residual_forward.cu", "29-52"))
ENCODER_FWD = (COMMON, (LLMC + "encoder_forward.cu", "45-116"))
ENCODER_BWD = (COMMON, (LLMC + "encoder_backward.cu", "43-85"))
SOFTMAX = ((LLMC + "softmax_forward.cu", "34-35"), COMMON,
           (LLMC + "softmax_forward.cu", "96-564"))
LAYERNORM = ((LLMC + "layernorm_forward.cu", "28-29"), COMMON,
             (LLMC + "layernorm_forward.cu", "72-413"))
CROSSENTROPY = (COMMON, (LLMC + "crossentropy_forward.cu", "35-49"),
                (LLMC + "crossentropy_softmax_backward.cu", "38-58"))
ADAMW = (COMMON, (LLMC + "adamw.cu", "54-98"))
PERMUTE = (COMMON, (LLMC + "permute.cu", "98-116"))
MATMUL_FWD = (COMMON, (LLMC + "matmul_forward.cu", "52-167"))

GELU_S = math.sqrt(2 / math.pi)


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(GELU_S * (x + 0.044715 * x**3)))


def _gelu_grad(x):
    t = GELU_S * (x + 0.044715 * x**3)
    return (0.5 * (1 + np.tanh(t)) + x * 0.5 / np.cosh(t) ** 2 * GELU_S *
            (1 + 3 * 0.044715 * x * x))


def _launch_elementwise(parts, name, n, args, packed):
    per = 4 if packed else 1  # x128 holds 4 floats
    block = 128
    kernel(parts, name)[(n // per + block - 1) // block, block](*args, i32(n))


@pytest.mark.parametrize("name", ["gelu_forward_kernel1", "gelu_forward_kernel2"])
def test_llmc_gelu_forward(rng, name):
    n = 8 * 1000
    x = floats(rng, n)
    out = cuda.device_array(n, f32)
    _launch_elementwise(GELU_FWD, name, n, (out, cuda.to_device(x)), name.endswith("2"))
    close(out.copy_to_host(), _gelu(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["gelu_backward1", "gelu_backward2"])
def test_llmc_gelu_backward(rng, name):
    n = 8 * 1000
    x, dout = floats(rng, n), floats(rng, n)
    dinp = cuda.device_array(n, f32)
    _launch_elementwise(GELU_BWD, name, n, (dinp, cuda.to_device(x), cuda.to_device(dout)),
                        name.endswith("2"))
    close(dinp.copy_to_host(), _gelu_grad(x.astype(np.float64)) * dout, rtol=1e-4,
          atol=1e-5)


@pytest.mark.parametrize("name", ["residual_forward_kernel1", "residual_forward_kernel2"])
def test_llmc_residual_forward(rng, name):
    n = 4 * 999
    a, b = floats(rng, n), floats(rng, n)
    out = cuda.device_array(n, f32)
    _launch_elementwise(RESIDUAL, name, n, (out, cuda.to_device(a), cuda.to_device(b)),
                        name.endswith("2"))
    close(out.copy_to_host(), a + b, rtol=0, atol=0)


@pytest.mark.parametrize("name, per", [("encoder_forward_kernel1", "bt"),
                                       ("encoder_forward_kernel2", "btc"),
                                       ("encoder_forward_kernel3", "btc4")])
def test_llmc_encoder_forward(rng, name, per):
    B, T, C, V = 2, 16, 32, 50
    inp = rng.integers(0, V, (B, T)).astype(np.int32)
    wte, wpe = floats(rng, V, C), floats(rng, T, C)
    out = cuda.device_array(B * T * C, f32)
    n = {"bt": B * T, "btc": B * T * C, "btc4": B * T * C // 4}[per]
    kernel(ENCODER_FWD, name)[(n + 63) // 64, 64](out, cuda.to_device(inp), cuda.to_device(wte),
                                                 cuda.to_device(wpe), i32(B), i32(T), i32(C))
    close(out.copy_to_host(), (wte[inp] + wpe[None]).ravel(), rtol=0, atol=0)


@pytest.mark.parametrize("name", ["encoder_backward_kernel1", "encoder_backward_kernel2"])
def test_llmc_encoder_backward(rng, name):
    B, T, C, V = 2, 8, 32, 10
    inp = rng.integers(0, V, (B, T)).astype(np.int32)
    dout = floats(rng, B, T, C)
    dwte, dwpe = cuda.to_device(np.zeros((V, C), f32)), cuda.to_device(np.zeros((T, C), f32))
    n = B * T * C if name.endswith("1") else C
    kernel(ENCODER_BWD, name)[(n + 63) // 64, 64](dwte, dwpe, cuda.to_device(dout),
                                                 cuda.to_device(inp), i32(B), i32(T), i32(C))
    want_wte = np.zeros((V, C))
    np.add.at(want_wte, inp.ravel(), dout.reshape(-1, C))
    close(dwte.copy_to_host(), want_wte, rtol=1e-5, atol=1e-5)
    close(dwpe.copy_to_host(), dout.astype(np.float64).sum(0), rtol=1e-5, atol=1e-5)


# name: (grid from N rows, block, dynamic shared bytes from block)
SOFTMAXES = {
    "softmax_forward_kernel1": (lambda N: (N + 63) // 64, 64, lambda b: 0),
    "softmax_forward_kernel2": (lambda N: N, 128, lambda b: b * 4),
    "softmax_forward_kernel3": (lambda N: N, 32, lambda b: b * 4),
    "softmax_forward_kernel4": (lambda N: N, 128, lambda b: b // 32 * 4),
    "softmax_forward_online_kernel1": (lambda N: (N + 63) // 64, 64, lambda b: 0),
    "softmax_forward_online_kernel2": (lambda N: (N * 32 + 127) // 128, 128, lambda b: 0),
    "softmax_forward_kernel7": (lambda N: N, 128, lambda b: 2 * b // 32 * 4),
    "softmax_forward_online_kernel8": (lambda N: (N * 32 + 127) // 128, 128, lambda b: 0),
}


@pytest.mark.parametrize("name", list(SOFTMAXES))
def test_llmc_softmax_forward(rng, name):
    N, C = 24, 300
    x = floats(rng, N, C) * 3
    out = cuda.device_array((N, C), f32)
    grid, block, shared = SOFTMAXES[name]
    kernel(SOFTMAX, name)[grid(N), block, 0, shared(block)](out, cuda.to_device(x), i32(N),
                                                           i32(C))
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    close(out.copy_to_host(), e / e.sum(1, keepdims=True), rtol=1e-4, atol=1e-6)


def _layernorm(x, w, b):
    x = x.astype(np.float64)
    mean = x.mean(-1)
    rstd = 1 / np.sqrt(x.var(-1) + 1e-5)
    return (x - mean[..., None]) * rstd[..., None] * w + b, mean, rstd


@pytest.mark.parametrize("name", ["layernorm_forward_kernel1", "layernorm_forward2",
                                  "layernorm_forward_kernel3", "layernorm_forward_kernel4",
                                  "layernorm_forward_kernel5", "layernorm_forward_kernel6"])
def test_llmc_layernorm_forward(rng, name):
    B, T, C = 2, 12, 96
    N = B * T
    x, w, b = floats(rng, B, T, C) * 2 + 1, floats(rng, C), floats(rng, C)
    out = cuda.device_array((B, T, C), f32)
    mean, rstd = cuda.device_array(N, f32), cuda.device_array(N, f32)
    args = (cuda.to_device(x), cuda.to_device(w), cuda.to_device(b))
    f = functools.partial(kernel, LAYERNORM)
    if name == "layernorm_forward2":  # three kernels: mean, rstd, normalization
        block = 64
        f("mean_kernel")[N, block, 0, block * 4](mean, args[0], i32(N), i32(C), i32(block))
        f("rstd_kernel")[N, block, 0, block * 4](rstd, args[0], mean, i32(N), i32(C),
                                                i32(block))
        f("normalization_kernel")[(N * C + 255) // 256, 256](out, args[0], mean, rstd, *args[1:],
                                                            i32(B), i32(T), i32(C))
    elif name.endswith("1"):
        f(name)[(N + 31) // 32, 32](out, mean, rstd, *args, i32(N), i32(C))
    elif name.endswith(("3", "4")):
        f(name)[(N * 32 + 127) // 128, 128](out, mean, rstd, *args, i32(N), i32(C))
    elif name.endswith("5"):
        f(name)[N, 128](out, mean, rstd, *args, i32(N), i32(C))
    else:
        block_y = 4
        f(name)[(N + block_y - 1) // block_y, (32, block_y), 0, (2 + block_y) * C * 4](
            out, mean, rstd, *args, i32(N), i32(C))
    want, want_mean, want_rstd = _layernorm(x, w, b)
    close(out.copy_to_host(), want, rtol=1e-4, atol=1e-4)
    close(mean.copy_to_host(), want_mean.ravel(), rtol=1e-5, atol=1e-5)
    close(rstd.copy_to_host(), want_rstd.ravel(), rtol=1e-4, atol=1e-5)


def test_llmc_crossentropy_forward_and_softmax_backward(rng):
    B, T, V = 2, 8, 40
    logits = floats(rng, B, T, V)
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    targets = rng.integers(0, V, (B, T)).astype(np.int32)
    dprobs, dtargets = cuda.to_device(probs.astype(f32)), cuda.to_device(targets)
    losses = cuda.device_array((B, T), f32)
    kernel(CROSSENTROPY, "crossentropy_forward_kernel1")[1, 64](losses, dprobs, dtargets,
                                                                i32(B), i32(T), i32(V))
    p_target = np.take_along_axis(probs, targets[..., None], -1)[..., 0]
    close(losses.copy_to_host(), -np.log(p_target), rtol=1e-5, atol=1e-6)
    dlosses = floats(rng, B, T)
    dlogits = cuda.to_device(np.zeros((B, T, V), f32))
    kernel(CROSSENTROPY, "crossentropy_softmax_backward_kernel1")[(B * T * V + 127) // 128, 128](
        dlogits, cuda.to_device(dlosses), dprobs, dtargets, i32(B), i32(T), i32(V))
    want = (probs - np.eye(V)[targets]) * dlosses[..., None]
    close(dlogits.copy_to_host(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["adamw_kernel1", "adamw_kernel2"])
def test_llmc_adamw(rng, name):
    n = 3000
    params, grads = floats(rng, n), floats(rng, n)
    m, v = floats(rng, n) * 0.1, np.abs(floats(rng, n)) * 0.1
    lr, b1, b2, eps, wd, t = 1e-3, 0.9, 0.999, 1e-8, 0.01, 3
    dp, dm, dv = cuda.to_device(params), cuda.to_device(m), cuda.to_device(v)
    kernel(ADAMW, name)[(n + 127) // 128, 128](
        dp, cuda.to_device(grads), dm, dv, np.int64(n), f32(lr), f32(b1), f32(b2),
        f32(1 - b1**t), f32(1 - b2**t), f32(eps), f32(wd))
    m2 = b1 * m + (1 - b1) * grads.astype(np.float64)
    v2 = b2 * v + (1 - b2) * grads.astype(np.float64) ** 2
    want = params - lr * (m2 / (1 - b1**t) / (np.sqrt(v2 / (1 - b2**t)) + eps) + wd * params)
    close(dm.copy_to_host(), m2, rtol=1e-5, atol=1e-6)
    close(dv.copy_to_host(), v2, rtol=1e-5, atol=1e-7)
    close(dp.copy_to_host(), want, rtol=1e-5, atol=1e-6)


def test_llmc_permute(rng):
    d = (3, 5, 4, 6)
    x = floats(rng, *d)
    out = cuda.device_array(x.size, f32)
    kernel(PERMUTE, "permute_kernel")[(x.size + 127) // 128, 128](
        cuda.to_device(x), out, *(i32(k) for k in d))
    close(out.copy_to_host(), x.transpose(3, 2, 0, 1).ravel(), rtol=0, atol=0)


def test_llmc_matmul_forward_kernels(rng):
    BT, C, OC = 128, 64, 128
    inp, weight, bias = floats(rng, BT, C), floats(rng, OC, C), floats(rng, OC)
    want = inp.astype(np.float64) @ weight.T.astype(np.float64) + bias
    d = [cuda.to_device(a) for a in (inp, weight, bias)]
    out = cuda.device_array((BT, OC), f32)
    kernel(MATMUL_FWD, "matmul_forward_kernel1")[(BT // 16, OC // 16), (16, 16)](
        out, *d, i32(BT), i32(C), i32(OC))
    close(out.copy_to_host(), want, rtol=1e-4, atol=1e-4)
    out = cuda.to_device(np.zeros((BT, OC), f32))
    kernel(MATMUL_FWD, "matmul_forward_kernel4")[(BT // 128, OC // 128), (16, 16)](
        out, *d, i32(C), i32(OC))
    close(out.copy_to_host(), want, rtol=1e-4, atol=1e-4)
    out = cuda.to_device((inp.astype(np.float64) @ weight.T).astype(f32))
    kernel(MATMUL_FWD, "add_bias")[16, 128](out, d[2], i32(1), i32(BT), i32(OC))
    close(out.copy_to_host(), want, rtol=1e-4, atol=1e-4)


# ---- llm.c with floatX bfloat16, as its files define ENABLE_BF16 -------------------
# cuda_bf16.h from llmc/cuda_common.h (dev/cuda's files get it through cuBLAS's
# headers), then the file's own #define ENABLE_BF16, common.h, the kernels

BF16_HEADER = ("llm.c/llmc/cuda_common.h", "16")
GELU_FWD_BF16 = (BF16_HEADER, (LLMC + "gelu_forward.cu", "23"), *GELU_FWD)
RESIDUAL_BF16 = (BF16_HEADER, (LLMC + "residual_forward.cu", "17"), *RESIDUAL)
ENCODER_FWD_BF16 = (BF16_HEADER, (LLMC + "encoder_forward.cu", "22"), *ENCODER_FWD)


def bf16(x):
    """float32 -> bfloat16 bits (uint16), rounded to nearest even."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(bits):
    return (np.asarray(bits, np.uint32) << 16).view(np.float32)


@pytest.mark.parametrize("name", ["gelu_forward_kernel1", "gelu_forward_kernel2"])
def test_llmc_gelu_forward_in_bfloat16(rng, name):
    n = 8 * 1000
    x = bf16(floats(rng, n))
    out = cuda.device_array(n, np.uint16)
    per = 8 if name.endswith("2") else 1  # x128 holds 8 bfloat16
    kernel(GELU_FWD_BF16, name)[(n // per + 127) // 128, 128](out, cuda.to_device(x), i32(n))
    close(from_bf16(out.copy_to_host()), _gelu(from_bf16(x).astype(np.float64)),
          rtol=8e-3, atol=1e-3)


@pytest.mark.parametrize("name", ["residual_forward_kernel1", "residual_forward_kernel2"])
def test_llmc_residual_forward_in_bfloat16(rng, name):
    n = 8 * 999
    a, b = bf16(floats(rng, n)), bf16(floats(rng, n))
    out = cuda.device_array(n, np.uint16)
    per = 8 if name.endswith("2") else 1
    kernel(RESIDUAL_BF16, name)[(n // per + 127) // 128, 128](
        out, cuda.to_device(a), cuda.to_device(b), i32(n))
    want = bf16(from_bf16(a) + from_bf16(b))  # one rounding of the float sum
    np.testing.assert_array_equal(out.copy_to_host(), want)


def test_llmc_encoder_forward_in_bfloat16(rng):
    B, T, C, V = 2, 16, 32, 50
    inp = rng.integers(0, V, (B, T)).astype(np.int32)
    wte, wpe = bf16(floats(rng, V, C)), bf16(floats(rng, T, C))
    out = cuda.device_array(B * T * C, np.uint16)
    kernel(ENCODER_FWD_BF16, "encoder_forward_kernel3")[(B * T * C // 8 + 63) // 64, 64](
        out, cuda.to_device(inp), cuda.to_device(wte), cuda.to_device(wpe), i32(B), i32(T),
        i32(C))
    want = bf16(from_bf16(wte)[inp] + from_bf16(wpe)[None])
    np.testing.assert_array_equal(out.copy_to_host(), want.ravel())


# ---- every source through NVRTC ----------------------------------------------------

_NVRTC_CHECK = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
from pygpu.rawkernel import compile_cuda, kernel_names

def check(job):  # NVRTC runs without the GIL: a few at once
    name, src, options, names = job
    try:
        image, log, lowered = compile_cuda(src, options, arch="sm_90", name_expressions=names)
        return None if kernel_names(image) else f"{name}: no kernels in the cubin"
    except Exception as exc:
        return f"{name}: {exc}"[:2000]

with ThreadPoolExecutor(4) as pool:
    failed = [f for f in pool.map(check, json.load(open(sys.argv[1]))) if f]
print(json.dumps(failed))
"""


def _sources():
    """{constant name: parts} of every source above."""
    def is_parts(v):
        return isinstance(v, tuple) and v and all(
            isinstance(p, str) and p.startswith((SAMPLES, LLMC)) or
            isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in v)
    return {k: v for k, v in globals().items() if k.isupper() and is_parts(v)}


def test_corpus_compiles_through_nvrtc(tmp_path):
    names = {"REDUCTION": REDUCTIONS, "THREADFENCE": THREADFENCE_NAMES,
             "MATMUL": ["MatrixMulCUDA<16>", "MatrixMulCUDA<32>"]}
    jobs = []
    for key, parts in _sources().items():
        folders = sorted({str((CORPUS / (p if isinstance(p, str) else p[0])).parent)
                          for p in parts})
        jobs.append((key, source(*parts), [f"-I{f}" for f in folders], names.get(key, [])))
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    failed = json.loads(run_with_nvrtc(_NVRTC_CHECK, str(tmp_path / "jobs.json")))
    assert failed == [], "\n".join(failed)
