"""Numba-style entry points: detect(), gpus, select_device(), to_device(), ...,
and kernels written in Python: @cuda.jit, with the device-side names they use
(cuda.grid, cuda.threadIdx, cuda.shared.array, cuda.atomic.add,
cuda.syncthreads, cuda.shfl_down_sync, ...) and cuda.random, Numba's
xoroshiro128+ generator (pygpu/_jit/, docs/JIT.md).

Nothing here creates a CUDA context at import; `is_available()` asks the driver
for its device count only. The module exports its own names only (the
modules it uses are imported under private names).
"""

import operator as _operator
import os as _os
import random as _random
import sys as _sys
from collections.abc import Sequence as _Sequence
from types import ModuleType as _types_module

import numpy as _np

from . import _core, _libs
from . import blas as _blas
from ._core import (
    Device,
    Event,
    Graph,
    NoDeviceError,
    Stream,
    current_stream,
    default_stream,
    device_array_like,
    is_pinned,
    pinned_array,
    synchronize,
    to_device,
)
from ._jit import random as random  # cuda.random: Numba's xoroshiro128+ API
from ._jit import typenames as _typenames
from ._jit.device import (
    activemask,
    all_sync,
    any_sync,
    atomic,
    ballot_sync,
    blockDim,
    blockIdx,
    brev,
    cbrt,
    clz,
    const,
    eq_sync,
    ffs,
    fma,
    grid,
    gridDim,
    gridsize,
    laneid,
    lanemask_lt,
    local,
    popc,
    selp,
    shared,
    shfl_down_sync,
    shfl_sync,
    shfl_up_sync,
    shfl_xor_sync,
    syncthreads,
    syncthreads_and,
    syncthreads_count,
    syncthreads_or,
    syncwarp,
    threadfence,
    threadfence_block,
    threadfence_system,
    threadIdx,
    warpsize,
)

# cuda.jit, cuda.reduce and cuda.TypingError: the translator is imported at
# their first use, so that `import pygpu` does not pay for it (PEP 562)
_JIT = {"jit": "dispatcher", "TypingError": "errors", "Reduce": "reduce", "reduce": "reduce"}


def __getattr__(name):
    where = _JIT.get(name)
    if where is None:
        raise AttributeError(f"module 'pygpu.cuda' has no attribute {name!r}")
    import importlib

    value = globals()[name] = getattr(importlib.import_module(f"pygpu._jit.{where}"), name)
    return value


def __dir__():
    return sorted(set(globals()) | set(_JIT))


def stream():
    """A new Stream on the current device (Numba's cuda.stream())."""
    return Stream()


def graph():
    """A CUDA graph, made by stream capture: `with cuda.graph() as g:` records
    the kernel launches, device-to-device copies and memsets that the block
    queues on this thread's current stream (a stream of the graph's own while
    the block runs), without running them; `g.replay()` then runs them all as
    one launch, asynchronously, as many times as asked. Copies between host and
    device, and waits, raise inside the block. Memory that the recorded work
    touches stays allocated while `g` lives (CuPy's and PyTorch's graphs ask
    the caller to keep their arrays alive instead)."""
    return Graph()


def event(timing=True):
    """A new Event (Numba's cuda.event()); timing=False makes a lighter one."""
    return Event(timing=timing)


def pinned_array_like(ary):
    """An uninitialized page-locked host array with ary's shape, dtype and order."""
    f = ary.flags["F_CONTIGUOUS"] and not ary.flags["C_CONTIGUOUS"]
    return pinned_array(ary.shape, ary.dtype, "F" if f else "C")


def is_available():
    """True if pygpu can run: a CUDA device is there, or the simulator is on."""
    return _core.is_available()


def is_simulator():
    """True if pygpu runs (or will run) on its CPU simulator (PYGPU_SIMULATOR=1)."""
    return _core.is_simulator()


def simulator_schedule(seed=None):
    """Set the order in which the simulator runs a kernel's threads and blocks;
    returns the previous setting.

    None (the default): in order, block after block, each block's threads by
    rank. An int: shuffled, seeded by it; each launch starts from the seed, so
    the same seed gives the same order. A kernel whose result depends on the
    order of its threads (a race: a missing __syncthreads(), a non-atomic
    update) gives different results under different seeds, instead of one
    result that hides the bug. The simulator's checking mode names such races
    in shared memory (RawKernel(..., check=True)). PYGPU_SIM_SCHEDULE sets it
    at import: "ordered", a seed, or "shuffle" (a random seed). Changes nothing
    on a GPU, whose order is its own.
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError(f"seed must be None or an int, not {type(seed).__name__}")
    return _core._sim_schedule(seed)


def _schedule_from_environment():
    value = _os.environ.get("PYGPU_SIM_SCHEDULE", "").strip().lower()
    if value in ("", "ordered", "none"):
        return
    if value == "shuffle":
        _core._sim_schedule(_random.SystemRandom().getrandbits(32))
        return
    try:
        seed = int(value, 0)
        if seed < 0:
            raise ValueError
    except ValueError:
        raise ValueError(f"PYGPU_SIM_SCHEDULE is {value!r}: give 'ordered', 'shuffle' or a "
                         "seed (a whole number >= 0)") from None
    _core._sim_schedule(seed)


def _gib(n):
    return f"{n / 2**30:.2f} GiB"


_UNSUPPORTED = "  [not supported: pygpu's kernels are built for compute capability 8.0+]"


def detect():
    """Print one line per device and return True if any supported device exists.

    Each line gives the index, name, compute capability, total and free memory
    and multiprocessor count; with two or more devices, a matrix says which
    pairs can have peer access; then what `@` runs in (cuBLAS, loaded here if
    it was not yet, or pygpu's own kernels, and why); the last line gives the
    file of each NVIDIA library loaded so far (NVRTC is loaded by the first
    kernel compiled on a GPU, not here). Without a device, it prints why.
    """
    try:
        count = _core.device_count()
    except NoDeviceError as exc:
        print(f"Found no CUDA device: {exc}")
        return False
    kind = "simulated device" if is_simulator() else "CUDA device"
    print(f"Found {count} {kind}{'s' if count != 1 else ''}")
    supported = False
    for i in range(count):
        dev = Device(i)
        free, total = dev.mem_info()
        major, minor = dev.compute_capability
        ok = major >= 8 or dev.is_simulator
        supported |= ok
        print(f"id {i}: {dev.name}  compute capability {major}.{minor}  "
              f"memory {_gib(total)} total, {_gib(free)} free  "
              f"{dev.multiprocessor_count} multiprocessors"
              f"{'' if ok else _UNSUPPORTED}")
    if count > 1:
        _print_peer_access(count)
    print(f"matmul: {_blas.matmul_backend()}")
    print(f"libraries: {_libs.summary()}")
    return supported


def _print_peer_access(count):
    """A matrix: row i, column j says whether kernels on device i can have
    access to device j's memory (cudaDeviceCanAccessPeer)."""
    width = len(str(count - 1)) + 4
    print("peer access (row: the device whose kernels read, column: the memory's device):")
    print(" " * width + "".join(f"{j:>{width}}" for j in range(count)))
    for i in range(count):
        cells = ("-" if i == j else "yes" if _core.peer_access(i, j) else "no"
                 for j in range(count))
        print(f"{i:>{width}}" + "".join(f"{c:>{width}}" for c in cells))


class _GPUList(_Sequence):
    """The devices, as Device objects: `cuda.gpus[0]`, `len(cuda.gpus)`."""

    def _count(self):
        try:
            return _core.device_count()
        except NoDeviceError:
            return 0

    def __len__(self):
        return self._count()

    def __getitem__(self, i):
        n = self._count()
        if isinstance(i, slice):
            return [Device(j) for j in range(n)[i]]
        if not isinstance(i, int) or isinstance(i, bool):
            raise TypeError(f"device index must be an int, not {type(i).__name__}")
        if not -n <= i < n:
            raise IndexError(f"device index {i} is out of range: there "
                             f"{'is' if n == 1 else 'are'} {n} device{'s' if n != 1 else ''}")
        return Device(i % n)

    @property
    def current(self):
        """The current device of this thread."""
        return Device()

    def __repr__(self):
        return f"<pygpu.cuda.gpus: {len(self)} device(s)>"


gpus = _GPUList()


def select_device(device_id):
    """Make device `device_id` current on this thread and return its Device."""
    return Device(device_id).select()


def get_current_device():
    """The current Device of this thread."""
    return Device()


def memory_allocated(device=None):
    """Bytes of device memory that live pygpu arrays hold on `device` (an
    index or a Device; default: the current device), as the memory pool
    counts them (rounded up to 512 bytes each). ValueError for a device that
    does not exist, in the words of the C functions' device argument."""
    from ._ops.namespace import device_id

    return _core.memory_allocated(device_id(device, "memory_allocated"))


def device_array(shape, dtype=float, strides=None, order="C", stream=None):
    """An uninitialized device array (Numba's signature; strides must be None)."""
    if strides is not None:
        raise ValueError("device_array(strides=...) is not supported; use order='C' or 'F'")
    return _core.empty(shape, dtype, order)


# what every CUDA device (compute capability 2.0 on) allows in a block
_MAX_THREADS = 1024
_MAX_BLOCK_DIM = (1024, 1024, 64)
_DEFAULT_THREADS = {1: 256, 2: (16, 16), 3: (8, 8, 4)}


def _int(v, what, func):
    """v as a Python int, as NumPy takes a shape: anything with __index__ but a bool."""
    if isinstance(v, (bool, _np.bool_)):
        raise TypeError(f"{func}: {what} must hold ints, not bool ({v!r})")
    try:
        return _operator.index(v)
    except TypeError:
        hint = (" (use // or math.ceil to get an int)"
                if isinstance(v, (float, _np.floating)) else "")
        raise TypeError(f"{func}: {what} must hold ints; '{type(v).__name__}' object "
                        f"cannot be interpreted as an integer{hint}") from None


def _ints(v, what, func):
    """An int or a sequence of ints (NumPy ints and integer arrays too) as a tuple."""
    if isinstance(v, (bool, _np.bool_, float, _np.floating)):
        return (_int(v, what, func),)  # raises, with a hint for a float
    try:
        return (_operator.index(v),)
    except TypeError:
        pass
    if isinstance(v, (str, bytes)):
        raise TypeError(f"{func}: {what} must be an int or a tuple of ints, got {v!r}")
    try:
        items = tuple(v)
    except TypeError:
        raise TypeError(f"{func}: {what} must be an int or a tuple of ints, not "
                        f"{type(v).__name__}") from None
    return tuple(_int(x, what, func) for x in items)


def launch_config(shape, threads_per_block=None):
    """Return (blocks_per_grid, threads_per_block) that cover `shape`.

    x is the last (contiguous) axis: for a 2-D shape (rows, cols) and threads
    (tx, ty), blocks is (ceil(cols / tx), ceil(rows / ty)). threads_per_block is
    an int for a 1-D shape, or a tuple with one entry per axis, x first;
    by default 256, (16, 16) or (8, 8, 4). Block counts are capped at the
    device's grid limits (pygpu's kernels loop over what a capped grid
    leaves). Use the result as kernel[blocks, threads](...). Like NumPy's
    shapes, both take Python or NumPy ints (anything with __index__ but a bool).
    """
    shape = _ints(shape, "shape", "launch_config")
    nd = len(shape)
    if not 1 <= nd <= 3:
        raise ValueError(f"launch_config covers 1 to 3 dimensions, got shape {shape}")
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions are not allowed: shape {shape}")
    if threads_per_block is None:
        threads_per_block = _DEFAULT_THREADS[nd]
    threads = _ints(threads_per_block, "threads_per_block", "launch_config")
    if len(threads) != nd:
        raise ValueError(f"threads_per_block {threads_per_block!r} must have one entry "
                         f"per axis of shape {shape} (x first)")
    if any(t < 1 for t in threads):
        raise ValueError(f"threads_per_block must hold ints >= 1, got {threads}")
    total = 1
    for t in threads:
        total *= t
    if total > _MAX_THREADS:
        raise ValueError(f"launch_config: a block of {threads_per_block!r} has {total} "
                         f"threads; CUDA devices allow at most {_MAX_THREADS} per block")
    for axis, (t, most) in enumerate(zip(threads, _MAX_BLOCK_DIM, strict=False)):
        if t > most:
            raise ValueError(f"launch_config: threads_per_block has {t} threads along "
                             f"{'xyz'[axis]}; CUDA devices allow at most {most} there")
    limits = (2**31 - 1, 65535, 65535)
    blocks = tuple(max(1, min(limits[i], -(-shape[nd - 1 - i] // threads[i])))
                   for i in range(nd))
    if nd == 1:
        return blocks[0], threads[0]
    return blocks, threads


_schedule_from_environment()
# `from pygpu.cuda.random import xoroshiro128p_uniform_float32`, as Numba's
# `from numba.cuda.random import ...`
_sys.modules.setdefault(__name__ + ".random", random)

# Numba's type names: `from pygpu.cuda import float32` and `from
# pygpu.cuda.types import int32`, as `from numba.cuda import float32` and
# `from numba.cuda.types import int32` (dtypes, casts in kernels, and
# signatures such as void(float32[:, ::1], int64))
types = _types_module(__name__ + ".types", "Numba's type names (pygpu/_jit/typenames.py).")
for _name in _typenames.NAMES:
    setattr(types, _name, getattr(_typenames, _name))
    globals().setdefault(_name, getattr(_typenames, _name))
_sys.modules.setdefault(__name__ + ".types", types)
del _name

__all__ = [
    "Device", "Event", "Graph", "NoDeviceError", "Stream", "activemask", "all_sync",
    "any_sync", "atomic", "ballot_sync", "blockDim", "blockIdx", "brev", "cbrt",
    "clz", "const", "current_stream", "default_stream", "detect", "device_array",
    "device_array_like", "eq_sync", "event", "ffs", "fma", "get_current_device",
    "gpus", "graph", "grid", "gridDim", "gridsize", "is_available", "is_pinned",
    "is_simulator", "laneid", "lanemask_lt", "launch_config", "local",
    "memory_allocated", "pinned_array", "pinned_array_like", "popc", "random",
    "select_device", "selp", "shared", "shfl_down_sync", "shfl_sync",
    "shfl_up_sync", "shfl_xor_sync", "simulator_schedule", "stream", "synchronize",
    "syncthreads", "syncthreads_and", "syncthreads_count", "syncthreads_or",
    "syncwarp", "threadIdx", "threadfence", "threadfence_block",
    "threadfence_system", "to_device", "types", "warpsize",
] + list(_JIT) + list(_typenames.NAMES)
