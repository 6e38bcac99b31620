"""pygpu.cuda exports its own names only (Numba's device-side names among
them), and refuses devices and blocks that do not exist."""

import types

import numpy as np
import pytest

from pygpu import cuda


def test_cuda_exports_its_own_names_and_numbas_random_module():
    leaked = [name for name, value in vars(cuda).items()
              if not name.startswith("_") and isinstance(value, types.ModuleType)
              and name not in ("random", "types")]
    assert leaked == []
    from pygpu.cuda.types import int32  # as numba.cuda.types
    assert int32 is cuda.int32 and cuda.types.float32 is cuda.float32
    assert not hasattr(cuda, "np") and not hasattr(cuda, "os")
    assert cuda.random.__name__ == "pygpu._jit.random"
    assert callable(cuda.random.create_xoroshiro128p_states)
    from pygpu.cuda.random import xoroshiro128p_uniform_float32  # as numba.cuda.random
    assert xoroshiro128p_uniform_float32 is cuda.random.xoroshiro128p_uniform_float32
    for name in ("jit", "grid", "gridsize", "threadIdx", "shared", "local", "const", "atomic",
                 "syncthreads", "shfl_down_sync", "ballot_sync", "laneid", "warpsize"):
        assert name in cuda.__all__ and hasattr(cuda, name), name
    assert sorted(n for n in dir(cuda) if not n.startswith("_")) == sorted(cuda.__all__)


def test_memory_allocated_of_a_device_that_does_not_exist_is_a_value_error():
    count = len(cuda.gpus)
    assert cuda.memory_allocated(count - 1) >= 0
    # the words of the C functions' device argument (csrc/base/args.c)
    with pytest.raises(ValueError, match=r"memory_allocated: device 99 does not exist: there "
                                         rf"(is|are) {count} devices? \(ids 0 to {count - 1}\)"):
        cuda.memory_allocated(99)
    with pytest.raises(ValueError, match="device -1 does not exist"):
        cuda.memory_allocated(-1)
    with pytest.raises(TypeError, match="device must be a pygpu.Device .* or a device id"):
        cuda.memory_allocated("0")
    assert cuda.memory_allocated(cuda.Device(0)) == cuda.memory_allocated(0)


@pytest.mark.parametrize("shape, threads, what", [
    ((10,), 2048, "2048 threads; CUDA devices allow at most 1024 per block"),
    ((10, 10), (64, 64), "4096 threads"),
    ((10, 10, 10), (1, 1, 128), "128 threads along z; CUDA devices allow at most 64"),
])
def test_launch_config_refuses_blocks_no_device_can_run(shape, threads, what):
    with pytest.raises(ValueError, match=what):
        cuda.launch_config(shape, threads)
    assert cuda.launch_config((10,), 1024) == (1, 1024)
    assert cuda.launch_config((100, 100), (32, 32)) == ((4, 4), (32, 32))


def test_device_side_names_raise_on_the_host():
    for call in (lambda: cuda.syncthreads(), lambda: cuda.atomic.add(np.zeros(1), 0, 1),
                 lambda: cuda.shared.array(4, np.float32),
                 lambda: cuda.random.xoroshiro128p_uniform_float32(None, 0)):
        with pytest.raises(RuntimeError, match="only inside a kernel"):
            call()
