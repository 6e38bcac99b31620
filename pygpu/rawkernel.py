"""Your own kernels in CUDA C: RawKernel and RawModule, compiled by NVRTC.

    kernel = pygpu.RawKernel(r'''
    extern "C" __global__ void scale(float *x, float a, long long n) {
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= a;
    }''', "scale")
    kernel[blocks, threads](d, np.float32(2.0), d.size)

Arguments: DeviceArrays and objects with __cuda_array_interface__ pass as
pointers; NumPy scalars pass as their own type; a Python int passes as int64
and a Python float as float64. The count and byte size of every argument are
checked against the compiled kernel's parameters, and a mismatch raises
TypeError (so `float a` needs numpy.float32, `int n` numpy.int32).
`pygpu.In(a)`, `Out(a)` and `InOut(a)` pass a NumPy array: copied to the
device before the launch (In, InOut) and back after it (Out, InOut).

NVRTC is loaded the first time a kernel is compiled, never at import. Compiled
code is cached on disk (PYGPU_CACHE_DIR, default ~/.cache/pygpu), keyed by the
source, the options, the GPU architecture and the NVRTC version. Kernels must
be declared extern "C". On the simulator, compiling, loading and launching
raise NotImplementedError: its runtime has no compiler, and it runs only
pygpu's prebuilt kernels.
"""

import glob
import hashlib
import os
import sys
import tempfile
from pathlib import Path

from . import _core
from ._core import CompileError, HostArg

_nvrtc_version = None


def _nvrtc_candidates():
    yield from filter(None, [os.environ.get("PYGPU_NVRTC")])
    # the loader's own search first: LD_LIBRARY_PATH, ld.so.cache
    yield from ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so")
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    for home in filter(None, homes):
        for sub in ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"):
            yield from sorted(glob.glob(os.path.join(home, sub, "libnvrtc.so*")), reverse=True)
    for entry in sys.path:  # NVIDIA's wheels (nvidia-cuda-nvrtc)
        yield from sorted(glob.glob(os.path.join(entry, "nvidia", "*", "lib", "libnvrtc.so*")),
                          reverse=True)


def nvrtc_version():
    """Load NVRTC (once) and return its (major, minor) version."""
    global _nvrtc_version
    if _nvrtc_version is None:
        errors = []
        for path in _nvrtc_candidates():
            try:
                _nvrtc_version = _core._nvrtc_load(path)
                break
            except OSError as exc:
                errors.append(str(exc))
        else:
            raise RuntimeError(
                "NVRTC, which compiles CUDA C at run time, was not found: install the "
                "CUDA toolkit or the nvidia-cuda-nvrtc wheel, or set PYGPU_NVRTC to the "
                "path of libnvrtc.so. Tried: " + "; ".join(errors[-4:]))
    return _nvrtc_version


def _cache_dir():
    return Path(os.environ.get("PYGPU_CACHE_DIR") or Path.home() / ".cache" / "pygpu")


def compile_cuda(source, options=(), arch=None):
    """Compile CUDA C to a cubin for `arch` ("sm_90"; default: the current
    device's), through the disk cache. Returns (cubin bytes, NVRTC log)."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a str of CUDA C, not {type(source).__name__}")
    if isinstance(options, str):
        options = (options,)
    options = tuple(options)
    if not all(isinstance(o, str) for o in options):
        raise TypeError("options must be strings, e.g. ('-DN=4', '--use_fast_math')")
    if arch is None:
        major, minor = _core.Device().compute_capability
        arch = f"sm_{major}{minor}"
    if not any(o.startswith(("-arch", "--gpu-architecture")) for o in options):
        options += (f"--gpu-architecture={arch}",)
    version = nvrtc_version()
    key = hashlib.sha256(repr((source, options, arch, version)).encode()).hexdigest()
    path = _cache_dir() / f"{key}.cubin"
    try:
        return path.read_bytes(), ""
    except OSError:
        pass
    image, log = _core._nvrtc_compile(source, "pygpu_kernel.cu", options)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(image)
        os.replace(tmp, path)  # atomic: a concurrent reader sees all or nothing
    except OSError:
        pass  # an unwritable cache only costs a recompile
    return image, log


class RawModule:
    """CUDA C with one or more extern "C" kernels, compiled by NVRTC.

    `module.get_function(name)` gives a kernel to launch as
    `f[grid, block](args)`, `f[grid, block, stream]` or
    `f[grid, block, stream, shared_bytes]`.
    """

    def __init__(self, code, options=()):
        self.code = code
        self.options = tuple([options] if isinstance(options, str) else options)
        image, self.log = compile_cuda(code, self.options)
        self._module = _core.Module(image)

    def get_function(self, name):
        return self._module.get_function(name)


class RawKernel:
    """One extern "C" kernel `name` of CUDA C source, compiled by NVRTC."""

    def __init__(self, code, name, options=()):
        self.code = code
        self.name = name
        self.module = RawModule(code, options)
        self._function = self.module.get_function(name)

    def __getitem__(self, config):
        return self._function[config]

    @property
    def param_sizes(self):
        """Bytes of each parameter of the compiled kernel."""
        return self._function.param_sizes

    def __repr__(self):
        return f"<pygpu.RawKernel {self.name}>"


class In(HostArg):
    """A NumPy array the kernel reads: copied to the device before launching."""

    _mode = 1


class Out(HostArg):
    """A NumPy array the kernel writes: copied back after the kernel finishes."""

    _mode = 2


class InOut(HostArg):
    """A NumPy array the kernel reads and writes: copied there and back."""

    _mode = 3


__all__ = ["CompileError", "In", "InOut", "Out", "RawKernel", "RawModule", "compile_cuda",
           "nvrtc_version"]
