"""The names a kernel written in Python uses on the device: cuda.grid,
cuda.threadIdx, cuda.shared.array, cuda.atomic.add, cuda.syncthreads, ...

They exist so that `from pygpu import cuda` gives them, the way Numba's
`numba.cuda` does, and the translator (codegen.py) knows each by identity.
On the host they do nothing but say so: calling one raises RuntimeError.
"""


class Intrinsic:
    """A function that runs only inside a kernel (or device function)
    compiled by @cuda.jit."""

    def __init__(self, name, doc):
        self.name = name
        self.__name__ = name.rsplit(".", 1)[-1]
        self.__qualname__ = name
        self.__doc__ = doc

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"cuda.{self.name}() runs only inside a kernel or device "
                           "function compiled with @cuda.jit, not in host Python")

    def __repr__(self):
        return f"<pygpu.cuda.{self.name}: a device function of @cuda.jit kernels>"


class Special:
    """A value known only on the device (cuda.threadIdx, cuda.laneid, ...)."""

    def __init__(self, name, doc):
        self.name = name
        self.__doc__ = doc

    def __getattr__(self, attr):
        if attr in ("x", "y", "z"):
            raise RuntimeError(f"cuda.{self.name}.{attr} has a value only inside a kernel "
                               "compiled with @cuda.jit, not in host Python")
        raise AttributeError(attr)

    def __repr__(self):
        return f"<pygpu.cuda.{self.name}: known only inside @cuda.jit kernels>"


class Namespace:
    """cuda.shared, cuda.local, cuda.const, cuda.atomic."""

    def __init__(self, name, doc, **members):
        self._name = name
        self.__doc__ = doc
        for k, v in members.items():
            setattr(self, k, v)

    def __repr__(self):
        return f"<pygpu.cuda.{self._name}: device functions of @cuda.jit kernels>"


def _fn(name, doc):
    return Intrinsic(name, doc)


threadIdx = Special("threadIdx", "This thread's index in its block (.x, .y, .z), int32.")
blockIdx = Special("blockIdx", "This block's index in the grid (.x, .y, .z), int32.")
blockDim = Special("blockDim", "The block's shape in threads (.x, .y, .z), int32.")
gridDim = Special("gridDim", "The grid's shape in blocks (.x, .y, .z), int32.")
laneid = Special("laneid", "This thread's lane in its warp (0 to 31), int32.")
warpsize = Special("warpsize", "The threads of a warp: 32.")

grid = _fn("grid", "grid(ndim): this thread's absolute index, an int64 (ndim 1) or a "
                   "tuple of ndim int64, x first.")
gridsize = _fn("gridsize", "gridsize(ndim): the grid's extent in threads, an int64 "
                           "(ndim 1) or a tuple, x first.")
syncthreads = _fn("syncthreads", "Wait until every thread of the block gets here.")
syncthreads_count = _fn("syncthreads_count", "syncthreads(), then the number of threads "
                                             "whose predicate was true.")
syncthreads_and = _fn("syncthreads_and", "syncthreads(), then 1 if the predicate was true "
                                         "in every thread, else 0.")
syncthreads_or = _fn("syncthreads_or", "syncthreads(), then 1 if the predicate was true "
                                       "in any thread, else 0.")
syncwarp = _fn("syncwarp", "syncwarp(mask=0xffffffff): wait for the warp's lanes.")
threadfence = _fn("threadfence", "A memory fence for the whole device.")
threadfence_block = _fn("threadfence_block", "A memory fence for the block.")
threadfence_system = _fn("threadfence_system", "A memory fence for the system.")
shfl_sync = _fn("shfl_sync", "shfl_sync(mask, value, src_lane): value from lane src_lane.")
shfl_up_sync = _fn("shfl_up_sync", "shfl_up_sync(mask, value, delta): from lane - delta.")
shfl_down_sync = _fn("shfl_down_sync", "shfl_down_sync(mask, value, delta): from lane + "
                                       "delta.")
shfl_xor_sync = _fn("shfl_xor_sync", "shfl_xor_sync(mask, value, lane_mask): from lane ^ "
                                     "lane_mask.")
all_sync = _fn("all_sync", "all_sync(mask, predicate): nonzero if true in every lane.")
any_sync = _fn("any_sync", "any_sync(mask, predicate): nonzero if true in any lane.")
eq_sync = _fn("eq_sync", "eq_sync(mask, predicate): nonzero if equal in every lane.")
ballot_sync = _fn("ballot_sync", "ballot_sync(mask, predicate): a bit per lane, uint32.")
activemask = _fn("activemask", "activemask(): the lanes running now, uint32.")
lanemask_lt = _fn("lanemask_lt", "lanemask_lt(): the bits of the lanes below this one.")
popc = _fn("popc", "popc(x): the number of set bits.")
clz = _fn("clz", "clz(x): the number of leading zero bits.")
ffs = _fn("ffs", "ffs(x): the position of the lowest set bit, from 1 (0 for x == 0).")
brev = _fn("brev", "brev(x): the bits reversed.")
fma = _fn("fma", "fma(a, b, c): a * b + c, rounded once.")
cbrt = _fn("cbrt", "cbrt(x): the cube root.")
selp = _fn("selp", "selp(predicate, a, b): a if predicate else b.")

shared = Namespace("shared", "Shared memory of the block.", array=_fn(
    "shared.array", "shared.array(shape, dtype): an array in the block's shared memory; "
                    "a shape of 0 is the launch's dynamic shared memory."))
local = Namespace("local", "Memory of the thread.", array=_fn(
    "local.array", "local.array(shape, dtype): an array of the thread's own."))
const = Namespace("const", "Constant memory.", array_like=_fn(
    "const.array_like", "const.array_like(ndarray): the host array's values, in the "
                        "kernel's constant memory."))

_ATOMICS = {
    "add": "ary[idx] += val", "sub": "ary[idx] -= val", "max": "ary[idx] = max(ary[idx], val)",
    "min": "ary[idx] = min(ary[idx], val)",
    "nanmax": "ary[idx] = max(ary[idx], val), a NaN missing",
    "nanmin": "ary[idx] = min(ary[idx], val), a NaN missing",
    "exch": "ary[idx] = val", "and_": "ary[idx] &= val", "or_": "ary[idx] |= val",
    "xor": "ary[idx] ^= val",
    "inc": "ary[idx] = 0 if ary[idx] >= val else ary[idx] + 1",
    "dec": "ary[idx] = val if ary[idx] == 0 or ary[idx] > val else ary[idx] - 1",
}
atomic = Namespace("atomic", "Atomic operations on an array's element; each returns the "
                             "old value.",
                   **{k: _fn(f"atomic.{k}", f"atomic.{k}(ary, idx, val): {v}, atomically; "
                                             "returns the old value.")
                      for k, v in _ATOMICS.items()},
                   cas=_fn("atomic.cas", "atomic.cas(ary, idx, old, val): ary[idx] = val if "
                                         "it equals old; returns the old value."),
                   compare_and_swap=_fn("atomic.compare_and_swap",
                                        "compare_and_swap(ary, old, val): atomic.cas(ary, "
                                        "0, old, val)."))

ATOMICS = tuple(_ATOMICS) + ("cas", "compare_and_swap")

DEVICE_NAMES = (
    "threadIdx", "blockIdx", "blockDim", "gridDim", "laneid", "warpsize", "grid", "gridsize",
    "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or", "syncwarp",
    "threadfence", "threadfence_block", "threadfence_system", "shfl_sync", "shfl_up_sync",
    "shfl_down_sync", "shfl_xor_sync", "all_sync", "any_sync", "eq_sync", "ballot_sync",
    "activemask", "lanemask_lt", "popc", "clz", "ffs", "brev", "fma", "cbrt", "selp",
    "shared", "local", "const", "atomic",
)
