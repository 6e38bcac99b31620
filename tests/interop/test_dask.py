"""pygpu on Dask: DeviceArrays as task results and chunks, moved between
workers by distributed, on the simulator (CI) and on GPUs.

The cluster tests run a `distributed.LocalCluster` of two worker processes;
on a machine with two GPUs, tests/test_multi_gpu.py runs the same jobs with
dask-cuda's LocalCUDACluster, one worker per GPU.
"""

import logging
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from conftest import matmul_error, random_array, rel_error

import pygpu
from pygpu import cuda

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
pgd = pytest.importorskip("pygpu.dask")

from dask.sizeof import sizeof  # noqa: E402
from distributed.protocol import deserialize, serialize  # noqa: E402

SCALE = r'''
extern "C" __global__ void scale_add(const float *x, float *y, float a, float b, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}
'''
scale_add = pygpu.RawKernel(SCALE, "scale_add")


def scaled(block):
    """A chunk task that launches a user's kernel: 2 x + 1."""
    out = pygpu.empty_like(block)
    n = block.size
    scale_add[max(1, (n + 255) // 256), 256](block, out, np.float32(2), np.float32(1), n)
    return out


def plus_one(block):
    """A chunk task that launches a prebuilt kernel, in place on a copy."""
    out = block.copy()
    blocks, threads = cuda.launch_config(out.shape, (16, 16))
    pygpu.kernels.add_one[blocks, threads](out)
    return out


def pipeline(host, chunks):
    """NumPy chunks -> device -> user kernel -> prebuilt kernel -> NumPy."""
    x = da.from_array(host, chunks=chunks)
    d = x.map_blocks(pygpu.asarray, meta=pygpu.empty((0, 0), np.float32))
    d = d.map_blocks(scaled, meta=d._meta)
    d = d.map_blocks(plus_one, meta=d._meta)
    return d, d.map_blocks(pygpu.asnumpy, meta=np.empty((0, 0), np.float32))


# registration


@pytest.mark.parametrize("first", ["pygpu", "distributed"])
def test_registration_needs_no_user_code_whichever_is_imported_first(first):
    code = f"""
import sys
import {first}
import {"distributed" if first == "pygpu" else "pygpu"}
import numpy as np, pygpu
assert "dask.array" not in sys.modules and "pygpu.dask" not in sys.modules
from dask.sizeof import sizeof
from distributed.protocol import serialize, deserialize
d = pygpu.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
assert sizeof(d) == 48, sizeof(d)
header, frames = serialize(d, serializers=("dask",))
assert header["serializer"] == "dask" and not any(
    hasattr(f, "__cuda_array_interface__") for f in frames)
header, frames = serialize(d, serializers=("cuda",))
assert header["serializer"] == "cuda"
assert (deserialize(header, frames).copy_to_host() == d.copy_to_host()).all()
import dask.array as da
assert da.concatenate([da.from_array(d)] * 2).compute().shape == (6, 4)
print("registered")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "registered" in r.stdout


def test_import_pygpu_imports_no_dask_and_leaves_no_finder_once_all_are_seen():
    code = """
import sys, pygpu
assert "dask" not in sys.modules
from pygpu import _dask_hook
assert _dask_hook._finder in sys.meta_path
import dask.array, distributed
assert _dask_hook._finder not in sys.meta_path, sys.meta_path
import dask.array.dispatch as d
assert d.concatenate_lookup.dispatch(pygpu.DeviceArray) is not None
assert dask.array.dispatch.__loader__.__class__.__name__ != "_Loader"
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]


def test_sizeof_counts_device_bytes_of_views_too(rng):
    d = pygpu.asarray(random_array(rng, (300, 200), np.float64))
    assert sizeof(d) == 300 * 200 * 8
    assert sizeof(d[:100, ::2]) == 100 * 100 * 8
    assert sizeof([d, d]) >= 2 * 300 * 200 * 8


# serialization

LAYOUTS = {
    "C": lambda a: a,
    "F": lambda a: np.asfortranarray(a),
    "strided view": lambda a: a[::2, 1:],
    "transposed": lambda a: a.T,
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "bool", "complex64",
                                   "float16", "uint64"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_dask_family_moves_host_frames_and_lands_on_the_current_device(rng, dtype, layout):
    host = random_array(rng, (7, 6), dtype)
    d = pygpu.asarray(host)
    if layout == "strided view":
        d, expected = d[::2, 1:], host[::2, 1:]
    elif layout == "transposed":
        d, expected = d.T, host.T
    else:
        d = pygpu.asarray(LAYOUTS[layout](host))
        expected = host
    header, frames = serialize(d, serializers=("dask",))
    assert header["serializer"] == "dask"
    assert all(isinstance(f, (bytes, bytearray, memoryview)) for f in frames)
    got = deserialize(header, frames)
    assert isinstance(got, pygpu.DeviceArray)
    assert got.dtype == d.dtype and got.shape == d.shape
    np.testing.assert_array_equal(got.copy_to_host(), expected)


@pytest.mark.skipif(len(cuda.gpus) < 2, reason="needs two devices")
def test_deserialized_array_lands_on_the_deserializing_threads_device(rng):
    with cuda.gpus[1]:
        d = pygpu.asarray(random_array(rng, (5, 5), np.float32))
    header, frames = serialize(d, serializers=("dask",))
    assert deserialize(header, frames).device.id == 0
    with cuda.gpus[1]:
        assert deserialize(header, frames).device.id == 1
    seen = []
    t = threading.Thread(target=lambda: seen.append(deserialize(header, frames).device.id))
    t.start()
    t.join()
    assert seen == [0]


@pytest.mark.parametrize("shape", [(0, 3), (5,), (4, 3, 2), ()])
def test_dask_family_edge_shapes(rng, shape):
    host = random_array(rng, shape, np.float32)
    got = deserialize(*serialize(pygpu.asarray(host), serializers=("dask",)))
    assert got.shape == host.shape
    np.testing.assert_array_equal(got.copy_to_host(), host)


def test_cuda_family_sends_one_device_frame_over_the_arrays_own_memory(rng):
    host = random_array(rng, (6, 5), np.float32)
    d = pygpu.asarray(host)
    header, frames = serialize(d, serializers=("cuda",))
    assert header["serializer"] == "cuda"
    (frame,) = frames
    cai = frame.__cuda_array_interface__
    assert cai["shape"] == (d.nbytes,) and cai["typestr"] == "|u1"
    assert cai["data"][0] == d.ptr  # no copy on the way out
    # what UCX does: receive into a fresh device buffer, hand it to the loader
    received = pygpu.empty(d.nbytes, np.uint8)
    received[...] = frame
    got = deserialize(header, [received])
    assert got.ptr == received.ptr  # no copy on the way in
    np.testing.assert_array_equal(got.copy_to_host(), host)
    del received, frames, frame
    np.testing.assert_array_equal(got.copy_to_host(), host)  # the array keeps its frame


def test_cuda_family_makes_non_contiguous_arrays_contiguous(rng):
    host = random_array(rng, (6, 8), np.float64)
    d = pygpu.asarray(host)[::2, ::3]
    header, frames = serialize(d, serializers=("cuda",))
    assert frames[0].nbytes == d.nbytes
    np.testing.assert_array_equal(deserialize(header, frames).copy_to_host(), host[::2, ::3])
    header, frames = serialize(pygpu.empty((0, 4), np.float32), serializers=("cuda",))
    assert deserialize(header, frames).shape == (0, 4)


def test_pickling_still_goes_through_the_host(rng):
    import pickle

    host = random_array(rng, (4, 4), np.int32)
    got = pickle.loads(pickle.dumps(pygpu.asarray(host), protocol=5))
    np.testing.assert_array_equal(got.copy_to_host(), host)


def test_kernels_pickle_for_tasks():
    import pickle

    import cloudpickle

    assert pickle.loads(cloudpickle.dumps(pygpu.kernels.add_one)) is pygpu.kernels.add_one
    k = pickle.loads(cloudpickle.dumps(scale_add))
    assert k is pickle.loads(pickle.dumps(scale_add))  # loaded once per process
    assert k.name == "scale_add" and k.param_sizes == scale_add.param_sizes


# dask.array on threads


def test_chunked_pipeline_on_threads_matches_numpy(rng):
    host = random_array(rng, (96, 80), np.float32)
    d, result = pipeline(host, (32, 40))
    assert isinstance(d._meta, pygpu.DeviceArray) and d._meta.dtype == np.float32
    assert "chunktype=pygpu.DeviceArray" in repr(d)
    assert isinstance(result._meta, np.ndarray)
    with dask.config.set(scheduler="threads", num_workers=2):
        got = result.compute()
        on_device = d.compute()  # chunks joined on the device
    assert isinstance(got, np.ndarray)
    assert rel_error(got, 2.0 * host.astype(np.float64) + 2.0) < 1e-6
    assert isinstance(on_device, pygpu.DeviceArray)
    np.testing.assert_array_equal(on_device.copy_to_host(), got)


def test_to_device_and_to_host_set_meta(rng):
    host = random_array(rng, (10, 12, 3), np.float64)
    d = pgd.to_device(da.from_array(host, chunks=(5, 6, 3)))
    assert isinstance(d._meta, pygpu.DeviceArray) and d._meta.ndim == 3
    h = pgd.to_host(d + 1)
    assert isinstance(h._meta, np.ndarray)
    with dask.config.set(scheduler="synchronous"):
        np.testing.assert_array_equal(h.compute(), host + 1)


def test_elementwise_slicing_rechunk_and_concatenate_stay_on_the_device(rng):
    a = random_array(rng, (40, 30), np.float32)
    b = random_array(rng, (40, 30), np.float32)
    x = pgd.to_device(da.from_array(a, chunks=(10, 15)))
    y = pgd.to_device(da.from_array(b, chunks=(20, 10)))
    exprs = {
        "x + y * 2": (x + y * 2, a + b * 2),
        "x[::3, 5:].T": (x[::3, 5:].T, a[::3, 5:].T),
        "rechunk": ((x - y).rechunk((40, 7)), a - b),
        "concatenate axis 1": (da.concatenate([x, y], axis=1), np.concatenate([a, b], 1)),
        "astype": (x.astype(np.float64), a.astype(np.float64)),
    }
    with dask.config.set(scheduler="synchronous"):
        for name, (expr, expected) in exprs.items():
            got = expr.compute()
            assert isinstance(got, pygpu.DeviceArray), name
            assert rel_error(got.copy_to_host(), expected) < 1e-6, name


def test_concatenate_follows_numpy(rng):
    a = pygpu.asarray(random_array(rng, (2, 3), np.int32))
    b = pygpu.asarray(random_array(rng, (2, 1), np.float32))
    got = pgd.concatenate([a, b], axis=-1)
    want = np.concatenate([a.copy_to_host(), b.copy_to_host()], axis=-1)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.copy_to_host(), want)
    np.testing.assert_array_equal(pgd.concatenate([a, a], axis=None).copy_to_host(),
                                  np.concatenate([a.copy_to_host()] * 2, axis=None))
    with pytest.raises(ValueError, match="along dimension 1"):
        pgd.concatenate([a, b])
    with pytest.raises(ValueError, match="same number of dimensions"):
        pgd.concatenate([a, a.ravel()])
    with pytest.raises(ValueError, match="out of bounds"):
        pgd.concatenate([a, a], axis=2)


@pytest.mark.skipif(len(cuda.gpus) < 2, reason="needs two devices")
def test_concatenate_builds_on_the_first_arrays_device(rng):
    with cuda.gpus[1]:
        a = pygpu.asarray(random_array(rng, (3, 2), np.float32))
    b = pygpu.asarray(random_array(rng, (1, 2), np.float32))
    got = pgd.concatenate([a, b])
    assert got.device.id == 1
    np.testing.assert_array_equal(got.copy_to_host(),
                                  np.concatenate([a.copy_to_host(), b.copy_to_host()]))


def test_operations_pygpu_lacks_raise_type_error(rng):
    host = random_array(rng, (8, 6), np.float32)
    d = pgd.to_device(da.from_array(host, chunks=(4, 3)))
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(TypeError, match="dask.array's einsum .* needs numpy.einsum"):
            da.einsum("ij->i", d).compute()
        # fancy indexing runs on the device, chunk by chunk
        got = d[:, [0, 2]].compute()
        np.testing.assert_array_equal(pygpu.asnumpy(got), host[:, [0, 2]])
        # NumPy's functions on the chunks are refused by name (NEP 18)
        with pytest.raises(TypeError, match="numpy.array is a NumPy function that "
                           "pygpu.DeviceArray does not support"):
            da.percentile(d[:, 0], 50).compute()


def test_reductions_and_ufuncs_compute_on_the_device(rng):
    # issue 22: a Dask array of DeviceArrays computes mean, std and ufuncs; each
    # chunk's work runs on the device (d.sum, np.sin, np.full_like, d[mask] = v)
    host = random_array(rng, (8, 6), np.float32)
    d = pgd.to_device(da.from_array(host, chunks=(4, 3)))
    cases = [(lambda x: x.sum(), host.sum()), (lambda x: x.max(axis=0), host.max(axis=0)),
             (lambda x: x.mean(), host.mean()), (lambda x: x.mean(axis=1), host.mean(axis=1)),
             (lambda x: x.std(), host.std()), (lambda x: x.var(axis=0, ddof=1),
                                               host.var(axis=0, ddof=1)),
             (lambda x: np.sin(x) * 2 + np.sqrt(np.abs(x)),
              np.sin(host) * 2 + np.sqrt(np.abs(host))),
             (lambda x: da.nanmean(x, axis=0), np.nanmean(host, axis=0)),
             (lambda x: x.cumsum(axis=0), host.cumsum(axis=0)),
             (lambda x: x @ x.T, host @ host.T)]
    with dask.config.set(scheduler="synchronous"):
        for f, want in cases:
            got = f(d).compute()
            assert isinstance(got, pygpu.DeviceArray)
            np.testing.assert_allclose(got.copy_to_host(), want, rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("chunks", [((8, 8), (6, 6), (5, 5)), ((8, 8), (4, 8), (5, 5)),
                                    ((16,), (6, 3, 3), (3, 7))])
def test_block_matmul_sums_partial_products(rng, chunks):
    (ra, ca), (rb, cb) = (chunks[0], chunks[1]), (chunks[1], chunks[2])
    A = random_array(rng, (sum(ra), sum(ca)), np.float32)
    B = random_array(rng, (sum(rb), sum(cb)), np.float32)
    a = pgd.to_device(da.from_array(A, chunks=(ra, ca)))
    b = pgd.to_device(da.from_array(B, chunks=(rb, cb)))
    c = pgd.matmul(a, b)
    assert isinstance(c._meta, pygpu.DeviceArray) and c.chunks == (ra, cb)
    graph = dict(c.__dask_graph__())
    partial = [k for k in graph if isinstance(k, tuple) and "partial" in k[0]]
    assert len(partial) == len(ra) * len(ca) * len(cb)  # one task per product
    with dask.config.set(scheduler="threads", num_workers=2):
        got = pgd.to_host(c).compute()
    assert matmul_error(got, A, B) < 1e-6


def test_block_matmul_refuses_what_does_not_multiply(rng):
    a = pgd.to_device(da.from_array(random_array(rng, (4, 3), np.float32), chunks=2))
    with pytest.raises(ValueError, match="columns must match"):
        pgd.matmul(a, a)
    with pytest.raises(ValueError, match="multiplies matrices"):
        pgd.matmul(a, a[0])


# a distributed cluster of two worker processes: distributed's LocalCluster,
# pygpu.dask.local_cluster (one worker per device, CUDA_VISIBLE_DEVICES set for
# each), and dask-cuda's LocalCUDACluster on two GPUs

GPUS = 0 if cuda.is_simulator() else len(cuda.gpus)


def _dask_cuda_cluster():
    if GPUS < 2:
        pytest.skip(f"dask-cuda's LocalCUDACluster needs two GPUs; this machine has {GPUS}")
    dask_cuda = pytest.importorskip("dask_cuda", reason="dask-cuda is not installed")
    return dask_cuda.LocalCUDACluster(n_workers=2, CUDA_VISIBLE_DEVICES="0,1",
                                      threads_per_worker=2, host="127.0.0.1",
                                      dashboard_address=None, memory_limit=0,
                                      silence_logs=logging.ERROR)


CLUSTERS = {
    "LocalCluster": lambda: distributed.LocalCluster(
        n_workers=2, threads_per_worker=2, processes=True, host="127.0.0.1",
        dashboard_address=None, silence_logs=logging.ERROR),
    "one worker per device": lambda: pgd.local_cluster(
        [0, 1] if len(cuda.gpus) >= 2 else [0, 0], threads_per_worker=2,
        silence_logs=logging.ERROR),
    "LocalCUDACluster": _dask_cuda_cluster,
}


@pytest.fixture(scope="module", params=list(CLUSTERS))
def client(request):
    with CLUSTERS[request.param]() as cluster, distributed.Client(cluster) as c:
        c.kind = request.param
        yield c


def test_cluster_runs_the_chunked_pipeline(client, rng):
    host = random_array(rng, (128, 96), np.float32)
    d, result = pipeline(host, (32, 48))
    got = client.compute(result).result()
    assert rel_error(got, 2.0 * host.astype(np.float64) + 2.0) < 1e-6
    # the workers are processes of their own, each with the hook installed
    info = client.run(lambda: (os.getpid(), "pygpu.dask" in sys.modules))
    assert len({pid for pid, _ in info.values()}) == 2
    assert all(registered for _, registered in info.values())


def test_cluster_block_matmul_moves_device_arrays_between_workers(client, rng):
    A = random_array(rng, (64, 48), np.float32)
    B = random_array(rng, (48, 40), np.float32)
    w0, w1 = sorted(client.scheduler_info()["workers"])
    a = client.persist(pgd.to_device(da.from_array(A, chunks=(32, 24))), workers=[w0])
    b = client.persist(pgd.to_device(da.from_array(B, chunks=(24, 20))), workers=[w1])
    distributed.wait([a, b])
    sizes = client.nbytes(summary=False)
    assert sizes[(a.name, 0, 0)] == 32 * 24 * 4  # the scheduler counts device bytes
    c = client.persist(pgd.matmul(a, b))
    got = client.compute(pgd.to_host(c)).result()
    assert matmul_error(got, A, B) < 1e-6
    # each product needs blocks of both workers: DeviceArrays crossed over
    log = client.run(lambda dask_worker: [
        (k, n) for t in dask_worker.transfer_incoming_log for k, n in t["keys"].items()])
    moved = {k: n for entries in log.values() for k, n in entries}
    inputs = {k: 4 * 32 * 24 for k in a.__dask_keys__()[0]}
    inputs |= {k: 4 * 24 * 20 for k in b.__dask_keys__()[0]}
    assert set(moved) & set(inputs)
    assert all(moved[k] == inputs[k] for k in set(moved) & set(inputs))
    # a DeviceArray result comes back to the client as one
    whole = client.compute(c).result()
    assert isinstance(whole, pygpu.DeviceArray)
    assert matmul_error(whole.copy_to_host(), A, B) < 1e-6


def test_cluster_tasks_each_start_on_device_0_of_their_thread(client):
    def on_device_1():
        with cuda.gpus[len(cuda.gpus) - 1]:  # a task that switches, and switches back
            return pygpu.zeros(3).device.id

    def where():
        return threading.get_ident(), cuda.get_current_device().id, pygpu.ones(2).device.id

    first = client.gather([client.submit(on_device_1, pure=False) for _ in range(4)])
    results = client.gather([client.submit(where, pure=False) for _ in range(16)])
    assert set(first) == {client.run(lambda: len(cuda.gpus)).popitem()[1] - 1}
    assert {(dev, made) for _, dev, made in results} == {(0, 0)}


def test_cluster_gives_each_worker_its_own_device(client):
    if client.kind == "LocalCluster":
        pytest.skip("LocalCluster does not assign devices")
    seen = client.run(lambda: (len(cuda.gpus), os.environ.get("CUDA_VISIBLE_DEVICES"),
                               cuda.get_current_device().pci_bus_id))
    if GPUS >= 2:
        assert len({bus for _, _, bus in seen.values()}) == 2  # two GPUs, one each
        assert len({env.split(",")[0] for _, env, _ in seen.values()}) == 2
    else:
        assert {n for n, _, _ in seen.values()} == {1}  # one (simulated) device each
