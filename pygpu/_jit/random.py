"""Random numbers in @cuda.jit kernels, with Numba's API and algorithm
(numba.cuda.random): one xoroshiro128+ generator per thread.

    states = cuda.random.create_xoroshiro128p_states(n, seed=1)

    @cuda.jit
    def fill(states, out):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = cuda.random.xoroshiro128p_uniform_float32(states, i)

The first state comes from the seed through SplitMix64 (both of its words
get the same value, as in Numba), and state i is the first jumped 2**64
steps ahead i times, so that the threads' sequences do not overlap: the same
seed gives the same numbers as Numba's. The states are a DeviceArray of
shape (n, 2) and dtype uint64 (Numba's is n records of two uint64: pygpu
arrays have no record dtypes), with the same bytes.
"""

import numpy as np

from .. import _core
from .device import Intrinsic

xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)

_M64 = (1 << 64) - 1
_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)


def _splitmix64(seed):
    z = (seed + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & _M64


def _next(s0, s1):
    s1 ^= s0
    return _rotl(s0, 55) ^ s1 ^ ((s1 << 14) & _M64), _rotl(s1, 36)


def _jump(s0, s1):
    t0 = t1 = 0
    for word in _JUMP:
        for b in range(64):
            if (word >> b) & 1:
                t0 ^= s0
                t1 ^= s1
            s0, s1 = _next(s0, s1)
    return t0, t1


def _apply(columns, states):
    """The linear map whose column j (a (128, 2) uint64 array) is the image
    of bit j, applied to each row of states ((k, 2) uint64)."""
    out = np.zeros_like(states)
    one = np.uint64(1)
    for j in range(128):
        bit = (states[:, j // 64] >> np.uint64(j % 64)) & one
        out ^= bit[:, None] * columns[j]
    return out


_jump_columns = None


def _jump_matrix():
    global _jump_columns
    if _jump_columns is None:
        cols = np.zeros((128, 2), np.uint64)
        for j in range(128):
            s = (1 << j, 0) if j < 64 else (0, 1 << (j - 64))
            cols[j] = _jump(*s)
        _jump_columns = cols
    return _jump_columns


def _states(n, seed, subsequence_start):
    """Numba's states for n threads, on the host: (n, 2) uint64."""
    z = _splitmix64(int(seed) & _M64)
    s = (z, z)
    for _ in range(int(subsequence_start)):
        s = _jump(*s)
    out = np.zeros((n, 2), np.uint64)
    if n == 0:
        return out
    out[0] = s
    power, filled = _jump_matrix(), 1  # power is the jump taken `filled` times
    while filled < n:
        k = min(filled, n - filled)
        out[filled:filled + k] = _apply(power, out[:k])
        filled += k
        if filled < n:
            power = _apply(power, power)
    return out


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Fill states (create_xoroshiro128p_states's array, or any (n, 2)
    uint64 DeviceArray) for seed, as Numba's does."""
    if not (isinstance(states, _core.DeviceArray) and states.ndim == 2 and
            states.shape[1] == 2 and states.dtype == np.uint64):
        raise TypeError("init_xoroshiro128p_states takes a DeviceArray of shape (n, 2) and "
                        "dtype uint64")
    states.copy_to_device(_states(states.shape[0], seed, subsequence_start))


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A DeviceArray of n generator states (shape (n, 2), uint64) for seed:
    state i is for thread i, 2**64 steps after state i - 1."""
    n = int(n)
    if n < 0:
        raise ValueError(f"create_xoroshiro128p_states: n must be >= 0, got {n}")
    return _core.to_device(_states(n, seed, subsequence_start))


def _device(name, doc):
    return Intrinsic(f"random.{name}", doc)


xoroshiro128p_uniform_float32 = _device(
    "xoroshiro128p_uniform_float32", "(states, index): a float32 in [0, 1), advancing "
                                     "states[index].")
xoroshiro128p_uniform_float64 = _device(
    "xoroshiro128p_uniform_float64", "(states, index): a float64 in [0, 1), advancing "
                                     "states[index].")
xoroshiro128p_normal_float32 = _device(
    "xoroshiro128p_normal_float32", "(states, index): a float32 of the standard normal "
                                    "distribution (Box-Muller), advancing states[index].")
xoroshiro128p_normal_float64 = _device(
    "xoroshiro128p_normal_float64", "(states, index): a float64 of the standard normal "
                                    "distribution (Box-Muller), advancing states[index].")

__all__ = ["create_xoroshiro128p_states", "init_xoroshiro128p_states",
           "xoroshiro128p_dtype", "xoroshiro128p_normal_float32",
           "xoroshiro128p_normal_float64", "xoroshiro128p_uniform_float32",
           "xoroshiro128p_uniform_float64"]
