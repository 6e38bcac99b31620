"""Build pygpu._core: C files by the C compiler, csrc/kernels/kernels.cu twice
(nvcc for the GPU, the host C++ compiler for the simulator), cudart linked
statically. Before the kernels, the ops of the prebuilt elementwise kernel
are rendered from the op table (pygpu/_ops/prebuilt.py) into the build tree.

Environment:
  CUDA_HOME            the CUDA toolkit (else nvcc on PATH, else /usr/local/cuda)
  PYGPU_CUDA_ARCHS     compute capabilities to build, e.g. "80;86;89;90"
                       (machine code for each, plus PTX for the newest)
  PYGPU_NO_CUDA=1      build the simulator alone, even where a toolkit exists
"""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
CSRC = HERE / "csrc"
# csrc/ is laid out by layer (docs/ARCHITECTURE.md), top to bottom
C_SOURCES = {
    "types": ["module.c", "array.c", "device.c", "stream.c", "event.c", "graph.c",
              "pinned.c", "poolmod.c"],
    "ops": ["ops.c", "matmul.c"],
    "launch": ["rawkernel.c", "launch.c"],
    "arrays": ["interop.c", "copy.c", "elementwise.c", "core.c", "buffer.c"],
    "base": ["args.c", "context.c", "errors.c", "format.c"],
    "memory": ["pool.c", "transfer.c", "hostcopy.c"],
    "runtime": ["rt.c", "rt_cuda.c", "rt_nvrtc.c", "rt_cublas.c", "capture.c", "peer.c"],
    "simulator": ["rt_sim.c"],
}
# the folders whose headers are included by bare name ("pygpu.h", "runtime.h"),
# and the device headers' folder ("pygpu/sim_abi.h", "pygpu/ufunc.h"), which
# the kernels compiled at run time read too
DEVICE_INCLUDE = HERE / "pygpu" / "include"
INCLUDE_DIRS = [*(CSRC / d for d in ("base", "runtime", "simulator", "kernels")),
                DEVICE_INCLUDE]
KERNELS = CSRC / "kernels" / "kernels.cu"
OPS = HERE / "pygpu" / "_ops"

DEFAULT_ARCHS = "80;86;89;90"


def find_cuda():
    if os.environ.get("PYGPU_NO_CUDA", "") not in ("", "0"):
        return None
    candidates = []
    if os.environ.get("CUDA_HOME"):
        candidates.append(Path(os.environ["CUDA_HOME"]))
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(Path(nvcc).resolve().parent.parent)
    candidates.append(Path("/usr/local/cuda"))
    for home in candidates:
        if (home / "bin" / "nvcc").exists() and (home / "include" / "cuda_runtime.h").exists():
            return home
    return None


def cudart_static(home):
    for sub in ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"):
        lib = home / sub / "libcudart_static.a"
        if lib.exists():
            return lib
    return None


def gencode_flags():
    archs = [a.strip() for a in os.environ.get("PYGPU_CUDA_ARCHS", DEFAULT_ARCHS)
             .replace(",", ";").split(";") if a.strip()]
    if not archs:
        raise SystemExit("PYGPU_CUDA_ARCHS names no architecture")
    flags = []
    for a in archs:
        flags += ["-gencode", f"arch=compute_{a},code=sm_{a}"]
    newest = max(archs, key=lambda a: int("".join(c for c in a if c.isdigit())))
    flags += ["-gencode", f"arch=compute_{newest},code=compute_{newest}"]
    return flags


def include_flags(generated):
    return [f for d in [*INCLUDE_DIRS, generated] for f in ("-I", d)]


def load_by_path(name, path):
    """A module of pygpu by its file: importing the package needs pygpu._core,
    which is what is being built."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def generate(folder):
    """binary_ops.h, the prebuilt elementwise kernel's ops, from the op table;
    written only where it changed, so that its time stays the last build's."""
    table = load_by_path("_pygpu_build_table", OPS / "table.py")
    prebuilt = load_by_path("_pygpu_build_prebuilt", OPS / "prebuilt.py")
    text = prebuilt.render_binary(table)
    folder.mkdir(parents=True, exist_ok=True)
    header = folder / "binary_ops.h"
    if not header.exists() or header.read_text() != text:
        header.write_text(text)
        print(f"pygpu: wrote {header}", flush=True)


def run(cmd):
    print(" ".join(str(c) for c in cmd), flush=True)
    subprocess.check_call([str(c) for c in cmd])


class BuildExt(build_ext):
    def build_extension(self, ext):
        tmp = Path(self.build_temp)
        tmp.mkdir(parents=True, exist_ok=True)
        generated = tmp / "generated"
        generate(generated)
        cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or "c++"
        sim_obj = tmp / "kernels_sim.o"
        run([cxx, "-x", "c++", "-std=c++17", "-O2", "-fPIC", "-fno-exceptions",
             "-fno-rtti", "-fvisibility=hidden", "-Wall", "-Wno-unknown-pragmas",
             *os.environ.get("CXXFLAGS", "").split(), *include_flags(generated),
             "-c", KERNELS, "-o", sim_obj])
        ext.extra_objects = [str(sim_obj)]
        home = find_cuda()
        lib = cudart_static(home) if home else None
        if home and lib:
            cuda_obj = tmp / "kernels_cuda.o"
            run([home / "bin" / "nvcc", "-std=c++17", "-O3", "--threads", "0",
                 "-Xcompiler", "-fPIC", *include_flags(generated), *gencode_flags(),
                 "-c", KERNELS, "-o", cuda_obj])
            ext.extra_objects += [str(cuda_obj), str(lib)]
            ext.include_dirs.append(str(home / "include"))
            ext.define_macros.append(("PG_HAVE_CUDA", "1"))
            ext.libraries += ["dl", "pthread", "rt"]
            print(f"pygpu: building with CUDA from {home}", flush=True)
        else:
            print("pygpu: no CUDA toolkit found (looked at CUDA_HOME, nvcc on PATH, "
                  "/usr/local/cuda); building the CPU simulator alone. "
                  "Run with PYGPU_SIMULATOR=1.", flush=True)
        ext.libraries += ["stdc++", "dl"]
        super().build_extension(ext)


ext = Extension(
    "pygpu._core",
    sources=[f"csrc/{d}/{s}" for d, files in C_SOURCES.items() for s in files],
    include_dirs=[*map(str, INCLUDE_DIRS), numpy.get_include()],
    extra_compile_args=["-std=c11", "-O2", "-Wall", "-Wextra", "-Wmissing-prototypes",
                        "-Wno-missing-braces", "-Wno-missing-field-initializers"],
    depends=[*(str(p) for p in [*sorted(CSRC.glob("*/*")), *sorted(DEVICE_INCLUDE.glob("pygpu/*"))]
               if p.suffix in (".h", ".cu", ".def")),
             str(OPS / "table.py"), str(OPS / "prebuilt.py")],
)

setup(ext_modules=[ext], cmdclass={"build_ext": BuildExt})
