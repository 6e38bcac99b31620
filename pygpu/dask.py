"""pygpu on Dask: DeviceArrays as task results, as chunks of dask arrays, and
as data that distributed moves between workers.

    import dask.array as da, numpy as np, pygpu, pygpu.dask
    x = da.from_array(np.random.rand(4096, 4096).astype(np.float32), chunks=2048)
    d = x.map_blocks(pygpu.asarray, meta=pygpu.empty((0, 0), np.float32))
    e = pygpu.dask.matmul(d, d)                       # partial products, summed
    r = e.map_blocks(pygpu.asnumpy, meta=np.empty((0, 0), np.float32)).compute()

What this registers for `pygpu.DeviceArray` (see docs/SCALING.md):

- `dask.sizeof`: the array's device bytes, so the scheduler and the workers'
  memory accounting count them.
- dask.array's dispatch: `concatenate` on the device (so `compute()`,
  `rechunk` and `da.concatenate` of device chunks give DeviceArrays),
  `empty`, and `to_backend("numpy")` / `to_backend("cupy")`. `take`,
  `einsum` and `percentile`, which need NumPy functions pygpu lacks, raise
  TypeError naming the operation (docs/SCALING.md lists what else fails).
- distributed's serializers: the "dask" family moves an array in one host
  frame (it lands on the receiving thread's current device), the "cuda" family
  in one device frame (a flat uint8 array with `__cuda_array_interface__`),
  for communication layers that move device memory (UCX). Pickling also works
  (through the host).

Importing this module registers everything at once. It need not be imported:
`import pygpu` leaves a lazy entry in each of those tables (pygpu/_dask_hook.py),
so a worker or client that meets a DeviceArray registers it by itself.
"""

import logging
import os
import sys

import numpy as np
from dask.sizeof import sizeof

import pygpu
from pygpu import DeviceArray
from pygpu._ops import functions as _functions

__all__ = ["concatenate", "local_cluster", "matmul", "register", "to_device", "to_host"]


def _sizeof(x):
    return int(x.nbytes)


# dask.array's dispatch


# numpy.concatenate for DeviceArrays: what dask.array uses to join chunks
# (`compute()`, `rechunk`, `da.concatenate`)
concatenate = _functions.concatenate


def _device_of(x):
    return x.device if isinstance(x, DeviceArray) else pygpu.cuda.get_current_device()


def _missing(operation, numpy_name):
    def refuse(*args, **kwargs):
        raise TypeError(
            f"dask.array's {operation} on chunks of pygpu.DeviceArray needs {numpy_name}, "
            "which pygpu does not provide. Move the chunks to the host first "
            "(x.map_blocks(pygpu.asnumpy, meta=numpy.empty((0,) * x.ndim, x.dtype))), or write "
            "the step as a map_blocks of pygpu operations and kernels")
    refuse.__name__ = f"pygpu_refuses_{numpy_name.rsplit('.', 1)[-1]}"
    return refuse


def _to_numpy(x, **kwargs):
    return pygpu.asnumpy(x)


def _to_cupy(x, **kwargs):
    import cupy

    return cupy.asarray(x)


def _register_array(dispatch):
    dispatch.concatenate_lookup.register(DeviceArray, concatenate)
    dispatch.empty_lookup.register(DeviceArray, pygpu.empty)
    dispatch.to_numpy_dispatch.register(DeviceArray, _to_numpy)
    dispatch.to_cupy_dispatch.register(DeviceArray, _to_cupy)
    # the element counts of mean, var and std, as device arrays (as for CuPy)
    from dask.array import backends

    dispatch.numel_lookup.register(DeviceArray, backends._numel_arraylike)
    dispatch.nannumel_lookup.register(DeviceArray, backends._nannumel)
    for table, operation, numpy_name in (
            ("take_lookup", "fancy indexing (x[[0, 2]], x[mask]) or take", "numpy.take"),
            ("einsum_lookup", "einsum", "numpy.einsum"),
            ("percentile_lookup", "percentile", "numpy.percentile")):
        getattr(dispatch, table).register(DeviceArray, _missing(operation, numpy_name))


# distributed's serializers


def _host_dumps(x):
    """The "dask" family: the bytes in host frames, by NumPy's serializer."""
    from distributed.protocol import dask_serialize

    host = x.copy_to_host()
    header, frames = dask_serialize.dispatch(np.ndarray)(host)
    return {"numpy": header}, frames


def _host_loads(header, frames):
    """Onto the current device of the thread that deserializes."""
    from distributed.protocol import dask_deserialize

    return pygpu.asarray(dask_deserialize.dispatch(np.ndarray)(header["numpy"], frames))


class _Interface:
    """`__cuda_array_interface__` over another object's device memory, which it
    keeps alive: how a frame and an array are seen as one another."""

    def __init__(self, owner, shape, typestr):
        self.owner = owner
        ptr = owner.__cuda_array_interface__["data"][0] if owner is not None else 0
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                         "data": (ptr, False), "strides": None,
                                         "version": 3}


def _device_dumps(x):
    """The "cuda" family: one device frame, a flat uint8 DeviceArray over the
    array's own memory (a C-ordered copy if the array is not C-ordered)."""
    if not x.is_c_contiguous():
        x = x.copy()
    header = {"shape": tuple(x.shape), "typestr": x.dtype.str}
    return header, [pygpu.asarray(_Interface(x if x.size else None, (x.nbytes,), "|u1"))]


def _device_loads(header, frames):
    """The array over the received device frame itself, no copy."""
    (frame,) = frames
    shape = tuple(header["shape"])
    if 0 in shape:
        return pygpu.empty(shape, header["typestr"])
    return pygpu.asarray(_Interface(frame, shape, header["typestr"]))


_done = set()


def register():
    """Register DeviceArray in the tables of every module of Dask and
    distributed imported so far (pygpu/_dask_hook.py calls it again for the
    ones imported later). Idempotent."""
    modules = sys.modules
    if "sizeof" not in _done:
        sizeof.register(DeviceArray, _sizeof)
        _done.add("sizeof")
    if "array" not in _done and "dask.array.dispatch" in modules:
        _register_array(modules["dask.array.dispatch"])
        _done.add("array")
    if "dask" not in _done and "distributed.protocol.serialize" in modules:
        ser = modules["distributed.protocol.serialize"]
        ser.dask_serialize.register(DeviceArray, _host_dumps)
        ser.dask_deserialize.register(DeviceArray, _host_loads)
        _done.add("dask")
    if "cuda" not in _done and "distributed.protocol.cuda" in modules:
        cuda = modules["distributed.protocol.cuda"]
        cuda.cuda_serialize.register(DeviceArray, _device_dumps)
        cuda.cuda_deserialize.register(DeviceArray, _device_loads)
        _done.add("cuda")


# dask.array helpers


def to_device(x):
    """`x.map_blocks(pygpu.asarray)` with its meta: a dask array of NumPy (or
    Zarr-like) chunks, each moved to the current device of the thread that
    runs the task."""
    return x.map_blocks(pygpu.asarray, dtype=x.dtype,
                        meta=pygpu.empty((0,) * x.ndim, x.dtype))


def to_host(x):
    """`x.map_blocks(pygpu.asnumpy)` with its meta: each chunk back to NumPy."""
    return x.map_blocks(pygpu.asnumpy, dtype=x.dtype, meta=np.empty((0,) * x.ndim, x.dtype))


def _add(*parts):
    total = parts[0]
    for p in parts[1:]:
        total = pygpu.add(total, p)
    return total


def matmul(a, b, *, split_every=2):
    """`a @ b` for 2-D dask arrays of DeviceArray chunks, by blocks: block
    (i, j) of the result is the sum over k of the partial products
    a[i, k] @ b[k, j]. Each partial product is a task of its own
    (`pygpu.matmul`), and they are summed in a tree of `pygpu.add` tasks
    (`split_every` at a time), so products run on any worker and only their
    results move. b is rechunked where its row chunks differ from a's column
    chunks."""
    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"pygpu.dask.matmul multiplies matrices; got {a.ndim}-d and "
                         f"{b.ndim}-d arrays")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: a is {a.shape[0]} x {a.shape[1]} and b is "
                         f"{b.shape[0]} x {b.shape[1]}; a's columns must match b's rows")
    if split_every < 2:
        raise ValueError(f"split_every must be at least 2, not {split_every}")
    if b.chunks[0] != a.chunks[1]:
        b = b.rechunk((a.chunks[1], b.chunks[1]))
    dtype = np.result_type(a.dtype, b.dtype)
    token = tokenize(a, b, split_every)
    name = f"pygpu-matmul-{token}"
    dsk = {}
    for i in range(len(a.chunks[0])):
        for j in range(len(b.chunks[1])):
            level = []
            for k in range(len(a.chunks[1])):
                key = (f"pygpu-matmul-partial-{token}", i, j, k)
                dsk[key] = (pygpu.matmul, (a.name, i, k), (b.name, k, j))
                level.append(key)
            depth = 0
            while len(level) > split_every:
                depth += 1
                groups = [level[s:s + split_every] for s in range(0, len(level), split_every)]
                level = []
                for g, group in enumerate(groups):
                    if len(group) == 1:
                        level.append(group[0])
                        continue
                    key = (f"pygpu-matmul-sum{depth}-{token}", i, j, g)
                    dsk[key] = (_add, *group)
                    level.append(key)
            dsk[(name, i, j)] = (_add, *level)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[a, b])
    meta = a._meta if a._meta.dtype == dtype else a._meta.astype(dtype)
    return da.Array(graph, name, chunks=(a.chunks[0], b.chunks[1]), meta=meta)


# one worker per device


def local_cluster(devices=None, *, threads_per_worker=1, memory_limit=0, dashboard=False,
                  host="127.0.0.1", silence_logs=logging.WARNING, **worker_options):
    """A `distributed` cluster on this machine with one worker process per
    device, as dask-cuda's LocalCUDACluster makes, with nothing but
    distributed: the worker of GPU i runs with `CUDA_VISIBLE_DEVICES` set to
    that GPU alone (counted within this process's own `CUDA_VISIBLE_DEVICES`,
    if set), so that its device 0 is its GPU; on the simulator each worker has
    one simulated device of its own. `devices` are device ids of this process
    (default: all; a device named twice gets two workers). Workers start with
    the 'spawn' method (distributed's default), so none inherits a CUDA
    context. `memory_limit=0` turns off the host-memory limit: device bytes
    are counted by `sizeof`, and a limit read from a VM's initial memory would
    spill them early. Use it as
    `with local_cluster() as cluster, distributed.Client(cluster) as client:`.
    The scheduler and the workers listen on `host` (this machine alone, by
    default).
    """
    from distributed import Nanny, Scheduler, SpecCluster

    if devices is None:
        devices = range(len(pygpu.cuda.gpus))
    devices = list(devices)
    if not devices:
        raise ValueError("local_cluster needs at least one device")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    visible = visible.split(",") if visible else None
    simulator = pygpu.cuda.is_simulator()
    extra_env = worker_options.pop("env", {})
    workers = {}
    for i, dev in enumerate(devices):
        if simulator:
            env = {"PYGPU_SIM_DEVICES": "1"}
        else:
            env = {"CUDA_VISIBLE_DEVICES": visible[dev].strip() if visible else str(dev)}
        options = {"nthreads": threads_per_worker, "memory_limit": memory_limit, "host": host,
                   "silence_logs": silence_logs,
                   "env": {**env, **extra_env}, **worker_options}
        workers[f"worker-{i}-device-{dev}"] = {"cls": Nanny, "options": options}
    scheduler = {"cls": Scheduler, "options": {
        "host": host, "dashboard": dashboard,
        "dashboard_address": f"{host}:0" if dashboard else None}}
    return SpecCluster(workers=workers, scheduler=scheduler, name="pygpu",
                       silence_logs=silence_logs)


register()
