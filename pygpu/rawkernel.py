"""Your own kernels in CUDA C: RawKernel and RawModule, compiled by NVRTC on a
GPU and by the host C++ compiler on the simulator.

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
be declared extern "C".

On the simulator the source is compiled by the host C++ compiler (CXX, else
g++ or clang++ on PATH) into a shared object, against sim_prelude.h (next to
this file), which gives the CUDA dialect: threadIdx, blockIdx, blockDim,
gridDim, dim3, __global__ and the other qualifiers, static and dynamic
(`extern __shared__`) shared memory, and __syncthreads(). Compiler errors
name the lines of your source. The shared object is cached on disk like a
cubin, keyed by the source, the options, the compiler and the prelude. Of the
options, -D, -U, -I and -std= are passed to the compiler; the others are
NVRTC's and are left out. Each `__global__ void name(` of the source that is
not a template becomes a kernel that get_function finds.
"""

import glob
import hashlib
import os
import re
import shlex
import shutil
import subprocess
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


def _checked(source, options):
    """The options as a tuple of str; TypeError for a source or options of
    another type."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a str of CUDA C, not {type(source).__name__}")
    if isinstance(options, str):
        options = (options,)
    options = tuple(options)
    if not all(isinstance(o, str) for o in options):
        raise TypeError("options must be strings, e.g. ('-DN=4', '--use_fast_math')")
    return options


def compile_cuda(source, options=(), arch=None):
    """Compile CUDA C to a cubin for `arch` ("sm_90"; default: the current
    device's), through the disk cache. Returns (cubin bytes, NVRTC log)."""
    options = _checked(source, options)
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
    _write_atomically(path, image)
    return image, log


_PRELUDE = Path(__file__).with_name("sim_prelude.h")
_host_compilers = {}

# `extern __shared__ [__align__(n)] T name[];`: the launch's dynamic shared
# memory (sim_prelude.h's PG_SIM_DYNAMIC_SHARED), on the same line
_DYNAMIC_SHARED = re.compile(
    r"\bextern\s+__shared__\s+(?:__align__\s*\((?:[^()]|\([^()]*\))*\)\s*)?"
    r"([^;\[\]]*?)\s*\b(\w+)\s*\[\s*\]\s*;")
# `__global__ [__launch_bounds__(...)] [qualifiers] void name(`
_KERNEL = re.compile(
    r"\b__global__\s+(?:__launch_bounds__\s*\([^()]*\)\s*)?(?:\w+\s+)*?void\s+"
    r"(?:__launch_bounds__\s*\([^()]*\)\s*)?(\w+)\s*\(")
_TEMPLATE_BEFORE = re.compile(r'>\s*(?:extern\s+"C"\s*)?(?:static\s+)?$')


def _write_atomically(path, data):
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)  # atomic: a concurrent reader sees all or nothing
    except OSError:
        pass  # an unwritable cache only costs a recompile


def host_compiler():
    """The host C++ compiler for the simulator: (command list, version line)."""
    cxx = os.environ.get("CXX")
    command = shlex.split(cxx) if cxx else None
    if not command:
        found = shutil.which("g++") or shutil.which("clang++")
        command = [found] if found else None
    if command is None or shutil.which(command[0]) is None:
        raise RuntimeError(
            "running your own CUDA C kernels on the simulator needs a C++ compiler: "
            "install g++ (e.g. apt install g++) or clang++, or set CXX to one"
            + (f"; CXX={cxx!r} was not found" if cxx else ""))
    key = tuple(command)
    if key not in _host_compilers:
        try:
            r = subprocess.run([*command, "--version"], capture_output=True, text=True,
                               timeout=60)
            version = (r.stdout.splitlines() or [""])[0]
        except (OSError, subprocess.SubprocessError) as exc:
            raise RuntimeError(f"the C++ compiler {command[0]} does not run: {exc}") from None
        _host_compilers[key] = (command, shutil.which(command[0]), version)
    return _host_compilers[key]


def _host_source(source):
    """The translation unit: the prelude, the source (its own line numbers),
    and an export for each kernel that is not a template."""
    names = []
    for m in _KERNEL.finditer(source):
        if not _TEMPLATE_BEFORE.search(source[:m.start()]) and m.group(1) not in names:
            names.append(m.group(1))
    body = _DYNAMIC_SHARED.sub(r"PG_SIM_DYNAMIC_SHARED(\1, \2);", source)
    exports = "".join(f"PG_SIM_EXPORT({n})\n" for n in names)
    return (f'#include "{_PRELUDE}"\n#line 1 "<kernel source>"\n{body}\n'
            f'#line 1 "<pygpu exports>"\n{exports}')


def compile_host(source, options=()):
    """Compile CUDA C for the simulator with the host C++ compiler, through the
    disk cache. Returns (path of the shared object, compiler log)."""
    options = _checked(source, options)
    flags = [o for o in options if o.startswith(("-D", "-U", "-I", "-std="))]
    command, where, version = host_compiler()
    prelude = _PRELUDE.read_bytes()
    key = hashlib.sha256(repr((source, options, command, where, version,
                               hashlib.sha256(prelude).hexdigest())).encode()).hexdigest()
    path = _cache_dir() / f"{key}.so"
    if path.exists():
        return path, ""
    with tempfile.TemporaryDirectory(prefix="pygpu-") as tmp:
        src = Path(tmp) / "kernel.cpp"
        out = Path(tmp) / "kernel.so"
        src.write_text(_host_source(source))
        cmd = [*command, "-std=c++17", "-O2", "-fPIC", "-shared", "-fno-exceptions",
               "-fvisibility=hidden", "-w", *flags, str(src), "-o", str(out)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            exc = CompileError(f"the host C++ compiler ({command[0]}) could not compile "
                               "the kernel source; see .log")
            exc.log = r.stderr
            raise exc
        image = out.read_bytes()
        _write_atomically(path, image)
        if not path.exists():  # no cache: load it from a file of its own
            fd, name = tempfile.mkstemp(suffix=".so", prefix="pygpu-")
            with os.fdopen(fd, "wb") as f:
                f.write(image)
            path = Path(name)
    return path, r.stderr


class RawModule:
    """CUDA C with one or more extern "C" kernels, compiled by NVRTC (on the
    simulator, by the host C++ compiler).

    `module.get_function(name)` gives a kernel to launch as
    `f[grid, block](args)`, `f[grid, block, stream]` or
    `f[grid, block, stream, shared_bytes]`.
    """

    def __init__(self, code, options=()):
        self.code = code
        self.options = tuple([options] if isinstance(options, str) else options)
        if _core._host_modules():
            path, self.log = compile_host(code, self.options)
            self._module = _core.Module(os.fsencode(path) + b"\0")
        else:
            image, self.log = compile_cuda(code, self.options)
            self._module = _core.Module(image)

    def get_function(self, name):
        return self._module.get_function(name)

    def __reduce__(self):
        # Pickled as its source: a worker process compiles it (disk cache) once.
        return _loaded_module, (self.code, self.options)


class RawKernel:
    """One extern "C" kernel `name` of CUDA C source, compiled by NVRTC (on the
    simulator, by the host C++ compiler)."""

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

    def __reduce__(self):
        return _loaded_kernel, (self.code, self.name, self.module.options)

    def __repr__(self):
        return f"<pygpu.RawKernel {self.name}>"


# What unpickling made in this process, by source: a Dask worker unpickles a
# task's kernel for every task, and loads its module once.
_unpickled = {}


def _loaded_module(code, options):
    key = ("module", code, options)
    if key not in _unpickled:
        _unpickled[key] = RawModule(code, options)
    return _unpickled[key]


def _loaded_kernel(code, name, options):
    key = ("kernel", code, name, options)
    if key not in _unpickled:
        _unpickled[key] = RawKernel(code, name, options)
    return _unpickled[key]


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
           "compile_host", "nvrtc_version"]
