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

NVRTC is loaded the first time a kernel is compiled, never at import, and not
for a kernel found in the disk cache. Compiled code is cached on disk
(PYGPU_CACHE_DIR, default ~/.cache/pygpu), keyed by the source, the options,
the GPU architecture, pygpu's device headers and the NVRTC library's file (its
real path, size, modification time and inode: another NVRTC version is another
file) and the include folders with their headers. NVRTC gets the CUDA
toolkit's include folders (next to the NVRTC library, else $CUDA_HOME,
$CUDA_PATH, /usr/local/cuda, else NVIDIA's wheels: cooperative_groups.h,
cuda_fp16.h, cuda_runtime.h, cuda/std/...) and then pygpu's stand-ins for the
C library's headers (nvrtc_include/: stdio.h, assert.h, stdint.h, math.h, ...),
so that a kernel file written for nvcc compiles unchanged; a source whose
helper functions lack __device__ is compiled again with -default-device. A
kernel is found by its name whether it is extern "C" or a C++ function (by
its mangled name in the cubin); a template instance by its name expression.

On the simulator the source is compiled by the host C++ compiler (CXX, else
g++ or clang++ on PATH) into a shared object, against sim_prelude.h (next to
this file), which gives the CUDA dialect (docs/SIMULATOR.md lists it). Compiler
errors name the lines of your source; what the simulator cannot run (textures,
dynamic parallelism, CUB/CUTLASS, an inline PTX instruction other than the
special registers and plain arithmetic) is refused with a CompileError that
names it, as is a grid-wide sync (grid_group::sync()). The shared object is
cached on disk like a cubin, keyed by the source, the options, the compiler and the prelude. Of the
options, -D, -U, -I and -std= are passed to the compiler; the others are
NVRTC's and are left out. Each `__global__ void name(` of the source that is
not a template becomes a kernel that get_function finds; templates are found
by their name expressions.
"""

import ctypes
import functools
import glob
import hashlib
import os
import re
import shlex
import shutil
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from . import _cache, _core, _libs
from ._core import CompileError, HostArg

_nvrtc_version = None
# The NVRTC file the cache keys name (_libs.identity): the loaded one once NVRTC
# is loaded, before that the one a load would take (_predicted_nvrtc)
_nvrtc_file = None


def nvrtc_version():
    """Load NVRTC (once) and return its (major, minor) version."""
    global _nvrtc_version, _nvrtc_file
    if _nvrtc_version is None:
        refused, errors = [], []
        for path in _libs.nvrtc_candidates(refused):
            try:
                version = _core._nvrtc_load(path)
            except OSError as exc:
                errors.append(str(exc))
                continue
            where = _libs.record("nvrtc", path)
            _nvrtc_file = _libs.identity(where) or ("nvrtc", where, version)
            _nvrtc_version = version
            _remember_nvrtc(where)
            break
        else:
            raise RuntimeError(
                "NVRTC, which compiles CUDA C at run time, was not found: install the "
                "CUDA toolkit or the nvidia-cuda-nvrtc wheel, or set PYGPU_NVRTC to the "
                "absolute path of libnvrtc.so. Tried: " + "; ".join(refused + errors[-4:]))
    return _nvrtc_version


def _nvrtc_memo():
    """The cache entry that says which file the search for NVRTC ended at the
    last time it asked the loader for a bare soname, under this loader state."""
    return f"nvrtc-{_libs.loader_state('nvrtc', _core.__file__)}.where"


def _remember_nvrtc(where):
    """Note in the cache the file that loading NVRTC took (an absolute path),
    for the next process's _predicted_nvrtc."""
    if not os.path.isabs(where):
        return
    try:
        memo = _nvrtc_memo()
        if _cache.load(memo) != os.fsencode(where):
            _cache.store(memo, os.fsencode(where))
    except OSError:
        pass  # no cache to write: the next process loads NVRTC to learn it


def _predicted_nvrtc():
    """The identity of the file that loading NVRTC would take, without
    loading it (the search's first absolute path that is a file; past a bare
    soname, the file the loader gave last time under the same loader state,
    as noted in the cache), or None where that is not known. A wrong guess
    costs a compile, never a wrong kernel: a cubin is stored only under the
    NVRTC file that made it (compile_cuda)."""
    for path in _libs.nvrtc_candidates():
        if os.path.isabs(path):
            found = _libs.identity(path)
            if found is not None:
                return found
            continue  # no such file: the loader would go on, so does the guess
        memo = _cache.load(_nvrtc_memo())
        return _libs.identity(os.fsdecode(memo)) if memo else None
    return None


def _nvrtc_identity():
    """What the cache keys hold for the compiler: the NVRTC file, loaded or
    (cheaply) predicted; NVRTC is loaded only where no prediction can be had."""
    global _nvrtc_file
    if _nvrtc_file is None and _nvrtc_version is None:
        _nvrtc_file = _predicted_nvrtc()
    if _nvrtc_file is None:
        nvrtc_version()
    return _nvrtc_file


def _checked(source, options):
    """The options as a tuple of str (None: none); TypeError for a source or
    options of another type."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a str of CUDA C, not {type(source).__name__}")
    return _strings("options", options, "('-DN=4', '--use_fast_math')")


def _strings(what, value, example):
    """`value` (a str, a sequence of str, or None for none) as a tuple of str;
    TypeError naming `what` otherwise."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    try:
        items = tuple(value)
    except TypeError:
        raise TypeError(f"{what} must be a str or a sequence of str, e.g. {example}; "
                        f"got {type(value).__name__} {value!r:.80}") from None
    wrong = [item for item in items if not isinstance(item, str)]
    if wrong:
        raise TypeError(f"{what} must be strings, e.g. {example}; got "
                        f"{type(wrong[0]).__name__} {wrong[0]!r:.80}")
    return items


def _kernel_name(name, what="name"):
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"{what} must be a str naming a kernel of the source (e.g. "
                        f"'vectorAdd', or 'scale<float>' for a template); got "
                        f"{type(name).__name__} {name!r:.80}")
    return name


def _cuda_key(source, options, arch, compiler, name_expressions):
    folders = [o[2:] for o in options if o.startswith("-I") and len(o) > 2]
    return hashlib.sha256(repr((source, options, arch, compiler, _headers_digest(),
                                _nvrtc_headers_digest(), _toolkit_headers(options),
                                _own_headers(source, folders),
                                name_expressions)).encode()).hexdigest()


def _own_headers(source, folders, seen=None):
    """The source's own headers (#include "file" found in the -I folders,
    and theirs) as (path, sha256): a changed header is another cubin."""
    seen = {} if seen is None else seen
    for m in _QUOTED_INCLUDE.finditer(source):
        for folder in folders:
            path = os.path.join(folder, m.group(1))
            if os.path.isfile(path):
                if path not in seen:
                    data = Path(path).read_bytes()
                    seen[path] = hashlib.sha256(data).hexdigest()
                    _own_headers(data.decode(errors="replace"), folders, seen)
                break
    return tuple(sorted(seen.items()))


def _toolkit_includes(compiler):
    """The CUDA toolkit's include folders for NVRTC (cooperative_groups.h,
    cuda_fp16.h, cuda_runtime.h, ... and CCCL's cuda/std), best first: those
    next to the NVRTC file `compiler` names (a toolkit's lib64/../include,
    with its include/cccl; in NVIDIA's wheels, nvidia/*/include), else those
    of $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, else the wheels'."""
    def usable(folder):
        return any(os.path.isfile(os.path.join(folder, h))
                   for h in ("cuda_runtime.h", "cooperative_groups.h", "cuda_fp16.h"))

    def with_cccl(folders):
        out = []
        for f in folders:
            f = os.path.normpath(f)
            if f not in out and (usable(f) or os.path.isdir(os.path.join(f, "cuda", "std"))):
                out.append(f)
                if os.path.isdir(os.path.join(f, "cccl")):
                    out.append(os.path.join(f, "cccl"))
        return out

    real = compiler[0] if compiler and isinstance(compiler[0], str) else None
    if real and os.path.isabs(real):
        lib = os.path.dirname(real)
        near = [os.path.join(lib, "..", "include")]
        wheels = os.path.dirname(os.path.dirname(lib))
        if os.path.basename(wheels) == "nvidia":
            near += sorted(glob.glob(os.path.join(glob.escape(wheels), "*", "include")))
        if os.path.basename(lib) == "lib" and os.path.basename(
                os.path.dirname(os.path.dirname(lib))) == "targets":
            near.append(os.path.join(lib, "..", "..", "..", "include"))
        found = with_cccl(near)
        if any(usable(f) for f in found):
            return tuple(found)
    homes = [_libs._absolute("CUDA_HOME", None), _libs._absolute("CUDA_PATH", None),
             _libs.TOOLKIT]
    found = with_cccl([os.path.join(h, "include") for h in homes if h])
    if not found:
        found = with_cccl([f for where in _libs.site_dirs() for f in sorted(
            glob.glob(os.path.join(glob.escape(where), "nvidia", "*", "include")))])
    return tuple(found)


def _toolkit_headers(options):
    """What the key holds for the toolkit's headers: the identity (path,
    size, time, inode) of a header of each include folder given."""
    out = []
    for o in options:
        if o.startswith("--include-path="):
            folder = o.partition("=")[2]
            for h in ("cuda_runtime_api.h", "cuda_fp16.hpp", "cuda/std/version"):
                out.append(_libs.identity(os.path.join(folder, h)))
    return tuple(out)


# NVRTC's error when a kernel calls a function declared without __device__;
# such a source is compiled again with -default-device
_HOST_CALL = re.compile(r"calling a __host__ function\(|host functions are not allowed in JIT "
                        r"mode")


def _cached_cubin(key, name_expressions):
    """(cubin, "", lowered names) from the disk cache, or None."""
    image = _cache.load(f"{key}.cubin")
    if image is None:
        return None
    names = _cache.load(f"{key}.names") if name_expressions else b""
    lowered = names.decode().split("\n") if names else []
    return (image, "", lowered) if len(lowered) == len(name_expressions) else None


def compile_cuda(source, options=(), arch=None, name_expressions=()):
    """Compile CUDA C to a cubin for `arch` ("sm_90"; default: the current
    device's), through the disk cache. Returns (cubin bytes, NVRTC log, the
    lowered (mangled) name of each name expression)."""
    options = _checked(source, options)
    name_expressions = tuple(name_expressions)
    if arch is None:
        major, minor = _core.Device().compute_capability
        arch = f"sm_{major}{minor}"
    if not any(o.startswith(("-arch", "--gpu-architecture")) for o in options):
        options += (f"--gpu-architecture={arch}",)
    given = options + (f"--include-path={_INCLUDE}",)
    # the key names NVRTC by its file, predicted without loading it where a
    # load has not happened yet; a compile loads it, and the cubin is stored
    # under the file that made it
    compiler = _nvrtc_identity()
    options = _with_includes(given, compiler)
    key = _cuda_key(source, options, arch, compiler, name_expressions)
    found = _cached_cubin(key, name_expressions)
    if found is not None:
        return found
    nvrtc_version()
    if _nvrtc_file != compiler:  # the prediction was wrong: key by the loaded file
        options = _with_includes(given, _nvrtc_file)
        key = _cuda_key(source, options, arch, _nvrtc_file, name_expressions)
        found = _cached_cubin(key, name_expressions)
        if found is not None:
            return found
    try:
        image, log, lowered = _core._nvrtc_compile(source, "pygpu_kernel.cu", options,
                                                   name_expressions)
    except CompileError as exc:
        # helper functions without __device__ (from headers written for nvcc,
        # where the caller's file decides): NVRTC's -default-device makes them
        # device functions, as the kernel needs
        if "-default-device" in options or not _HOST_CALL.search(exc.log or ""):
            raise
        image, log, lowered = _core._nvrtc_compile(
            source, "pygpu_kernel.cu", options + ("-default-device",), name_expressions)
    if name_expressions:
        _cache.store(f"{key}.names", "\n".join(lowered).encode())
    _cache.store(f"{key}.cubin", image)
    return image, log, list(lowered)


def _with_includes(options, compiler):
    """The options and the include folders NVRTC gets: the CUDA toolkit's
    (_toolkit_includes), then pygpu's stand-ins for the C library's headers
    (nvrtc_include: <stdio.h>, <assert.h>, <stdint.h>, ... for device code)."""
    folders = (*_toolkit_includes(compiler), str(_NVRTC_INCLUDE))
    # nvcc includes cuda_runtime.h, and with it the C library's <math.h>,
    # before every file: its macros (M_PI, INFINITY, ...) are there for device
    # code without an #include, and so they are here
    return options + tuple(f"--include-path={f}" for f in folders) + (
        f"--pre-include={_NVRTC_INCLUDE / 'math.h'}",)


@functools.cache
def _nvrtc_headers_digest():
    return _tree_digest(_NVRTC_INCLUDE, "")


def _tree_digest(folder, suffix):
    """What every cache key holds for a folder of pygpu's own headers (those
    whose names end in suffix): each one's path in it and identity (size,
    modification time in ns, inode), as for the NVRTC file. An edit changes
    the time, so the key; reading and hashing them all instead cost a new
    process about 2 ms of its first cached kernel. A file written in the last
    few seconds is read (its time may not have moved yet: the clock that
    stamps files is coarse), as git does with its index."""
    found = []
    stack = [str(folder)]
    skip = len(stack[0]) + 1  # a path's part below folder (os.path.relpath's, faster)
    recent = time.time_ns() - 5_000_000_000
    while stack:
        with os.scandir(stack.pop()) as entries:
            for e in entries:
                if e.is_dir():
                    stack.append(e.path)
                elif e.name.endswith(suffix) and e.is_file():
                    st = e.stat()
                    content = ""
                    if st.st_mtime_ns >= recent or st.st_ctime_ns >= recent:
                        with open(e.path, "rb") as f:
                            content = hashlib.sha256(f.read()).hexdigest()
                    found.append((e.path[skip:], st.st_size,
                                  st.st_mtime_ns, st.st_ino, content))
    return hashlib.sha256(repr(sorted(found)).encode()).hexdigest()


_PRELUDE = Path(__file__).with_name("sim_prelude.h")
_NVRTC_INCLUDE = Path(__file__).with_name("nvrtc_include")
_SIM_INCLUDE = Path(__file__).with_name("sim_include")
# pygpu's device headers (<pygpu/ufunc.h>, ...): the generated kernels include
# them, and so may users' kernels, on both backends
_INCLUDE = Path(__file__).with_name("include")
_host_compilers = {}

# `extern __shared__ [__align__(n)] T name[];`, its qualifiers in any order
# (`extern T __shared__ name[];`): the launch's dynamic shared memory
# (sim_prelude.h's PG_SIM_DYNAMIC_SHARED)
_EXTERN_ARRAY = re.compile(
    r"((?:(?:__shared__|static|volatile|const|(?:__align__|alignas)\s*\((?:[^()]|\([^()]*\))*\))"
    r"\s+)*)\bextern\b([^;{}\"\[\]]*?)\b(\w+)\s*\[\s*\]\s*;")
_STATIC_WITH = re.compile(
    r"\bstatic\b(?=(?:\s+(?:volatile|const|__device__))*\s+__(?:shared|constant)__\b)"
    r"|(?<=__shared__)(?:\s+(?:volatile|const))*\s+static\b"
    r"|(?<=__constant__)(?:\s+(?:volatile|const|__device__))*\s+static\b")
_ALIGN = re.compile(r"\b(?:__align__|alignas)\s*\((?:[^()]|\([^()]*\))*\)")
# `[static] __shared__ T name[...]...;`: in the checking mode, a reference
# into the prelude's arena of static shared memory (one declarator, no
# attributes; others stay plain statics, unchecked)
_STATIC_SHARED = re.compile(
    r"(?:\bstatic\s+)?(?P<before>(?:\b(?:volatile|const)\s+)*)\b__shared__\s+"
    r"(?P<kind>[^;{}()\[\],=]+?)\s+(?P<name>\w+)\s*(?P<dims>(?:\[[^\];]*\]\s*)*);")
# `__global__ [__launch_bounds__(...)] [qualifiers] void name(`
_KERNEL = re.compile(
    r"\b__global__\s+(?:__launch_bounds__\s*\([^()]*\)\s*)?(?:\w+\s+)*?void\s+"
    r"(?:__launch_bounds__\s*\([^()]*\)\s*)?(\w+)\s*\(")
_TEMPLATE_BEFORE = re.compile(
    r'\btemplate\s*<[^{};]*>\s*(?:extern\s+"C"\s*)?(?:static\s+|inline\s+)*$')
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"' r"|'(?:[^'\\\n]|\\.)*'")

# What the simulator cannot run, refused before compiling: (pattern, what).
_REFUSED = [
    (re.compile(r"#\s*include\s*[<\"](?:cub|cutlass|cute|thrust)/"),
     "CUB, CUTLASS and Thrust headers"),
    (re.compile(r"\b(?:tex[123]D\w*|texCubemap\w*|tex1Dfetch|surf[123]D\w*)\s*[<(]"
                r"|\btexture\s*<|\bcuda(?:Texture|Surface)Object_t\b"),
     "textures and surfaces"),
    (re.compile(r"<<<"), "dynamic parallelism (a kernel launching kernels with <<<>>>)"),
]


def _version_of(command):
    try:
        r = subprocess.run([*command, "--version"], capture_output=True, text=True,
                           timeout=60)
        return (r.stdout.splitlines() or [""])[0]
    except (OSError, subprocess.SubprocessError) as exc:
        raise RuntimeError(f"the C++ compiler {command[0]} does not run: {exc}") from None


def host_compiler(check=False):
    """The host C++ compiler for the simulator: (command list, path, version
    line). CXX, else g++ or clang++ on PATH; the checking mode needs clang++
    (CXX if it is clang, else clang++ on PATH)."""
    cxx = os.environ.get("CXX")
    command = shlex.split(cxx) if cxx else None
    if check:
        if not (command and "clang" in os.path.basename(command[0])):
            found = shutil.which("clang++")
            command = [found] if found else None
        if command is None or shutil.which(command[0]) is None:
            raise RuntimeError(
                "the simulator's checking mode compiles kernels with clang++, which is "
                "not here: install clang (e.g. apt install clang), or set CXX to a "
                "clang++, or run without checking")
    elif not command:
        found = shutil.which("g++") or shutil.which("clang++")
        command = [found] if found else None
    if command is None or shutil.which(command[0]) is None:
        raise RuntimeError(
            "running your own CUDA C kernels on the simulator needs a C++ compiler: "
            "install g++ (e.g. apt install g++) or clang++, or set CXX to one"
            + (f"; CXX={cxx!r} was not found" if cxx else ""))
    key = tuple(command)
    if key not in _host_compilers:
        _host_compilers[key] = (command, shutil.which(command[0]), _version_of(command))
    return _host_compilers[key]


def _blank(match):
    """A comment or string literal as spaces, its newlines kept."""
    return re.sub(r"[^\n]", " ", match.group(0))


_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"[^\n]*$', re.M)


def _inlined(source, folders, depth=0):
    """The source with each `#include "file"` found in `folders` (the -I
    options) written in, between #line directives: what the simulator
    rewrites (extern __shared__, inline PTX) and exports (kernels) is then
    seen in a project's own headers too. Headers on the system's and
    pygpu's paths (<...>) stay includes."""
    if depth > 16 or not folders:
        return source

    def one(m):
        for folder in folders:
            path = Path(folder) / m.group(1)
            if path.is_file():
                text = _inlined(path.read_text(errors="replace"), folders, depth + 1)
                line = source.count("\n", 0, m.end()) + 2
                return (f'#line 1 "{path}"\n{text}\n'
                        f'#line {line} "<kernel source>"')
        return m.group(0)

    return _QUOTED_INCLUDE.sub(one, source)


def _refuse_unsupported(source):
    """CompileError naming the first construct the simulator cannot run."""
    code = _COMMENT.sub(_blank, source)
    lines = code.splitlines()
    # grid_group::sync() runs (in a cooperative launch); a multi-device grid's not
    grid_sync = re.compile(r"\bsync_grids\s*\(|\bthis_multi_grid\s*\(")
    refused = [*_REFUSED, (grid_sync, "multi-device grid sync (this_multi_grid, "
                           "sync_grids)")]
    for pattern, what in refused:
        text = code if pattern.pattern.startswith("#") else _STRING.sub(_blank, code)
        m = pattern.search(text)
        if m:
            line = text.count("\n", 0, m.start()) + 1
            exc = CompileError(
                f"pygpu's simulator cannot run {what}: line {line}: "
                f"{lines[line - 1].strip()!r}. The same source runs on a GPU (NVRTC); "
                "on the simulator, write it without that")
            exc.log = f"<kernel source>:{line}: {what} is not supported on the simulator"
            raise exc


def _params_of(source, start):
    """The parameter names of the function whose '(' is at source[start - 1],
    comma-separated ('' for unnamed ones)."""
    depth, i = 1, start
    while i < len(source) and depth:
        depth += {"(": 1, ")": -1}.get(source[i], 0)
        i += 1
    text, names, depth, part = source[start:i - 1], [], 0, ""
    for ch in text + ",":
        if ch == "," and depth == 0:
            part = part.split("=")[0].strip()
            part = re.sub(r"\[[^\]]*\]\s*$", "", part).strip()
            m = re.search(r"(?:[\w>*&\s])\s*\b([A-Za-z_]\w*)\s*$", part)
            names.append(m.group(1) if m and len(part.split()) > 1 or
                         (m and re.search(r"[*&]\s*\w+\s*$", part)) else "")
            part = ""
            continue
        depth += {"(": 1, "<": 1, "[": 1, ")": -1, ">": -1, "]": -1}.get(ch, 0)
        part += ch
    return ",".join(names) if text.strip() not in ("", "void") else ""


def _rewrite(source, pattern, replace):
    """`source` with each match of `pattern` in its code (comments blanked)
    replaced by replace(match), its line count kept."""
    code, out, at = _COMMENT.sub(_blank, source), [], 0
    for m in pattern.finditer(code):
        span = source[m.start():m.end()]
        out += [source[at:m.start()], replace(m), "\n" * span.count("\n")]
        at = m.end()
    return "".join(out) + source[at:]


# Inline PTX on the simulator: `asm [volatile] ("template" : outputs : inputs)`
# for the special registers and the plain mov and arithmetic forms, as C++;
# any other instruction is a CompileError naming it.
_ASM = re.compile(r"\b(?:asm|__asm__|__asm)\b(?:\s*(?:volatile|__volatile__))?\s*\(")
_PTX_TYPES = {"s32": "int", "u32": "unsigned int", "b32": "unsigned int",
              "s64": "long long", "u64": "unsigned long long", "b64": "unsigned long long",
              "f32": "float", "f64": "double", "s16": "short", "u16": "unsigned short",
              "b16": "unsigned short", "pred": "bool"}
_PTX_SREGS = {"laneid", "warpid", "lanemask_eq", "lanemask_lt", "lanemask_le",
              "lanemask_gt", "lanemask_ge", "clock", "clock64", "globaltimer", "smid",
              "nsmid", "nwarpid", "gridid"}
_PTX_DIMS = {"tid": "threadIdx", "ntid": "blockDim", "ctaid": "blockIdx",
             "nctaid": "gridDim"}
_PTX_OPS = {"add": "({a}) + ({b})", "sub": "({a}) - ({b})", "mul": "({a}) * ({b})",
            "div": "({a}) / ({b})", "rem": "({a}) % ({b})", "and": "({a}) & ({b})",
            "or": "({a}) | ({b})", "xor": "({a}) ^ ({b})", "shl": "({a}) << ({b})",
            "shr": "({a}) >> ({b})", "min": "min({a}, {b})", "max": "max({a}, {b})",
            "mad": "({a}) * ({b}) + ({c})", "fma": "fma({a}, {b}, {c})",
            "neg": "-({a})", "not": "~({a})", "abs": "abs({a})", "mov": "({a})",
            "cvt": "({a})"}


def _asm_parts(source, start):
    """The text inside the parentheses that open at source[start - 1], split
    at its top-level colons, and the index after the closing one."""
    parts, depth, i, part, text = [], 1, start, "", None
    while i < len(source):
        ch = source[i]
        if ch == '"':
            m = _STRING.match(source, i)
            part += m.group(0)
            i = m.end()
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                break
        if ch == ":" and depth == 1:
            parts.append(part)
            part = ""
        else:
            part += ch
        i += 1
    parts.append(part)
    text = parts[0]
    return text, parts[1:], i + 1


def _asm_operands(section):
    """The C++ expressions of a section of operands: '"=r"(x), "r"(y)'."""
    return [m.group(1) for m in re.finditer(
        r'"[^"]*"\s*\(((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)', section or "")]


def _ptx_statement(instruction, operands, line):
    """C++ for one PTX instruction, its operands %0, %1, ... being C++
    expressions; CompileError for an instruction not known here."""
    def fail():
        exc = CompileError(
            f"pygpu's simulator cannot run the inline PTX instruction {instruction!r} "
            f"(line {line}): it runs the special registers (%laneid, %warpid, "
            "%lanemask_*, %tid, %ctaid, %clock, ...) and mov, add, sub, mul, mad, "
            "min, max, and, or, xor, shl, shr, neg, not on plain types; the same "
            "source runs on a GPU (NVRTC)")
        exc.log = f"<kernel source>:{line}: inline PTX {instruction!r} is not supported"
        raise exc

    m = re.fullmatch(r"\s*([a-z0-9]+)((?:\.[a-z0-9]+)*)\s+(.*?)\s*", instruction, re.S)
    if not m:
        fail()
    op, suffixes, args = m.group(1), m.group(2).split(".")[1:], m.group(3)
    types = [t for t in suffixes if t in _PTX_TYPES]
    if op not in _PTX_OPS or not types or any(
            t not in _PTX_TYPES and t not in ("lo", "rn", "rz", "wide") for t in suffixes):
        fail()
    if op in ("cvt", "mul", "mad") and ("wide" in suffixes or (op == "mul" and "lo" not in
                                         suffixes and types[0][0] != "f")):
        fail()
    values = []
    for a in (x.strip() for x in args.split(",")):
        if re.fullmatch(r"%\d+", a) and int(a[1:]) < len(operands):
            values.append(f"({operands[int(a[1:])]})")
        elif a.startswith("%%") and a[2:] in _PTX_SREGS:
            values.append(f"pg_sim::ptx_{a[2:]}()")
        elif re.fullmatch(r"%%(n?tid|n?ctaid)\.[xyz]", a):
            reg, axis = a[2:].split(".")
            values.append(f"{_PTX_DIMS[reg]}.{axis}")
        elif re.fullmatch(r"-?(?:0[xX][0-9a-fA-F]+|\d+)[uU]?", a):
            values.append(a)
        else:
            fail()
    want = {"mad": 4, "fma": 4, "neg": 2, "not": 2, "abs": 2, "mov": 2, "cvt": 2}.get(op, 3)
    if len(values) != want or not re.fullmatch(r"\(.*\)", values[0]):
        fail()
    t = _PTX_TYPES[types[0]]
    expr = _PTX_OPS[op].format(**{k: f"({t}){v}" for k, v in zip("abc", values[1:],
                                                                   strict=False)})
    return f"{values[0]} = ({t})({expr})"


def _translate_asm(source):
    """The source with each inline PTX statement as C++ (_ptx_statement)."""
    code = _COMMENT.sub(_blank, source)
    out, at = [], 0
    for m in _ASM.finditer(_STRING.sub(_blank, code)):
        if m.start() < at:
            continue
        text, sections, end = _asm_parts(code, m.end())
        line = code.count("\n", 0, m.start()) + 1
        template = "".join(bytes(t[1:-1], "utf-8").decode("unicode_escape")
                           for t in re.findall(r'"(?:[^"\\]|\\.)*"', text))
        operands = _asm_operands(sections[0] if sections else "") + _asm_operands(
            sections[1] if len(sections) > 1 else "")
        statements = [_ptx_statement(i, operands, line)
                      for i in template.split(";") if i.strip()]
        span = source[m.start():end]
        out += [source[at:m.start()], "(" + ", ".join(statements or ["(void)0"]) + ")",
                "\n" * span.count("\n")]
        at = end
    return "".join(out) + source[at:]


def _dynamic_shared(m):
    words = _ALIGN.sub(" ", m.group(1) + " " + m.group(2))
    if not re.search(r"\b__shared__\b", words):
        return m.group(0)
    kind = " ".join(re.sub(r"\b(?:__shared__|static)\b", " ", words).split())
    return f"PG_SIM_DYNAMIC_SHARED({kind}, {m.group(3)});"


def _shared_parts(m):
    """A static __shared__ declaration's type (with the qualifiers written
    before __shared__: `volatile __shared__ float s[64]`), name and dimensions."""
    kind = " ".join((m.group("before") + " " + m.group("kind")).split())
    return kind, m.group("name"), m.group("dims").strip()


def _static_shared(m):
    """The checking mode's static __shared__ variable: a reference into its
    arena, with a red zone after it."""
    kind, name, dims = _shared_parts(m)
    t = f"__pg_shared_t_{name}"
    return (f"using {t} = {kind} {dims}; static {t} &{name} = *({t} *)pg_sim::check::"
            f'static_shared(sizeof({t}), alignof({t}), "{name}");')


def _guarded_shared(m):
    """Without checking, a static __shared__ variable is a reference into one
    mapping whose end is a page that is not there (the first declared at the
    end), so that a write past it faults as an illegal address instead of
    overwriting the module's other memory; a block of its size stays in the
    pg_sim_shared section, by which the module's static shared memory is
    counted (and more than 48 KiB refused) when it loads. One line."""
    kind, name, dims = _shared_parts(m)
    t = f"__pg_shared_t_{name}"
    return (f"using {t} = {kind} {dims}; __attribute__((section(\"pg_sim_shared\"), used)) "
            f"static char __pg_shared_size_{name}[sizeof({t})]; static {t} &{name} = "
            f"*({t} *)pg_sim::guarded_shared(sizeof({t}), alignof({t}));")


def _host_source(source, check=False, name_expressions=()):
    """The translation unit: the prelude, the source (its own line numbers),
    and an exporter for each kernel that is not a template and for each name
    expression."""
    code = _COMMENT.sub(_blank, source)
    kernels = {}
    for m in _KERNEL.finditer(code):
        name = m.group(1)
        if name not in kernels:
            kernels[name] = (_params_of(code, m.end()),
                             bool(_TEMPLATE_BEFORE.search(code[:m.start()])))
    body = _rewrite(_translate_asm(source), _EXTERN_ARRAY, _dynamic_shared)
    # __shared__ and __constant__ are `static` here: a `static` of the same
    # declaration goes (`static __shared__ T s[..]`, `__constant__ static ...`)
    body = _rewrite(body, _STATIC_WITH, lambda m: m.group(0).replace("static", "      "))
    body = _STATIC_SHARED.sub(_static_shared if check else _guarded_shared, body)
    exports = [(n, n, p) for n, (p, template) in kernels.items() if not template]
    for expr in name_expressions:
        base = expr.split("<")[0].strip()
        exports.append((expr, expr, kernels.get(base, ("", True))[0]))
    lines = "".join(
        f"static pg_sim::exporter pg_sim_export_{i}(pg_sim::describe("
        f"{_c_string(name)}, {_c_string(params)}, &{expr}));\n"
        for i, (name, expr, params) in enumerate(exports))
    found = "".join(f"    if (strcmp(name, {_c_string(v)}) == 0) {{\n"
                    f"        *size = sizeof({v});\n        return (void *)&{v};\n    }}\n"
                    for v in _module_variables(code))
    lines += ('extern "C" __attribute__((visibility("default"))) void *\n'
              "pg_sim_module_global(const char *name, size_t *size)\n{\n"
              f"{found}    return nullptr;\n}}\n")
    return (f'#include "{_PRELUDE}"\n#line 1 "<kernel source>"\n{body}\n'
            f'#line 1 "<pygpu exports>"\n{lines}')


def _module_variables(code):
    """The names of the __device__ and __constant__ variables that `code`
    (comments blanked) defines at file scope, for get_global: its file-scope
    statements, one pass."""
    code = re.sub(r"^[ \t]*#.*$", "", _STRING.sub(_blank, code), flags=re.M)
    names, depth, start, initializer = [], 0, 0, False

    def statement(text):
        if not re.search(r"\b(?:__device__|__constant__)\b", text) or re.search(
                r"\b(?:extern|template|typedef|using)\b", text):
            return
        head = _ALIGN.sub(" ", text.split("=")[0])
        if "(" in head:
            return  # a function
        head = re.sub(r"(?:\s*\[[^\]]*\])+\s*$", "", head.strip())
        m = re.search(r"\b([A-Za-z_]\w*)$", head)
        if m:
            names.append(m.group(1))

    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                initializer = "=" in code[start:i]
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0 and not initializer:
                start = i + 1  # a function's, struct's or namespace's body ended
        elif ch == ";" and depth == 0:
            statement(code[start:i])
            start = i + 1
    return list(dict.fromkeys(names))


def _c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@functools.cache
def _headers_digest():
    """pygpu's device headers (pygpu/include), part of every cache key."""
    return _tree_digest(_INCLUDE, ".h")


@functools.cache
def _prelude_digest():
    """The simulator's prelude, its stand-in headers and pygpu's (_tree_digest)."""
    st = os.stat(_PRELUDE)
    return hashlib.sha256(repr((st.st_size, st.st_mtime_ns, st.st_ino,
                                _tree_digest(_SIM_INCLUDE, ".h"),
                                _headers_digest())).encode()).hexdigest()


def compile_host(source, options=(), check=False, name_expressions=()):
    """Compile CUDA C for the simulator with the host C++ compiler, through the
    disk cache (with check, instrumented for the checking mode). Returns (path
    of the shared object, compiler log)."""
    options = _checked(source, options)
    name_expressions = tuple(name_expressions)
    flags = [o for o in options if o.startswith(("-D", "-U", "-I", "-std="))]
    source = _inlined(source, [f[2:] for f in flags if f.startswith("-I") and len(f) > 2])
    _refuse_unsupported(source)
    command, where, version = host_compiler(check)
    unit = _host_source(source, check, name_expressions)
    # checking: instrumented loads and stores, and a line table, so that a
    # finding names the source line (#line honoured)
    extra = (["-DPG_SIM_CHECK=1", "-fsanitize-coverage=func,trace-loads,trace-stores",
              "-gline-tables-only"] if check else [])
    # -fwrapv: signed integers wrap on overflow, as on a GPU (and in kernels
    # written in Python, which keep Python's arithmetic where Numba does);
    # -fno-finite-loops: C++ lets the compiler drop a loop without side
    # effects (clang did: a kernel's `while (a[0] == 0) {}` returned at once),
    # where a GPU spins, and Ctrl-C stops the launch
    flags = ["-std=c++17", "-O2", "-fwrapv", "-fno-finite-loops", "-fPIC", "-shared",
             "-fno-exceptions",
             "-fno-threadsafe-statics", "-fvisibility=hidden", "-w", f"-I{_SIM_INCLUDE}",
             f"-I{_INCLUDE}",
             *extra, *flags]
    # the key: what the compiler gets (the unit, its flags, the prelude and its
    # headers) and which compiler
    key = hashlib.sha256(repr((unit, flags, tuple(command), where, version,
                               _prelude_digest())).encode()).hexdigest()
    path = _cache.load_path(f"{key}.so")
    if path is not None:
        return path, ""
    with tempfile.TemporaryDirectory(prefix="pygpu-") as tmp:
        src = Path(tmp) / "kernel.cpp"
        out = Path(tmp) / "kernel.so"
        src.write_text(unit)
        cmd = [*command, *flags, str(src), "-o", str(out)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            first = next((line for line in r.stderr.splitlines() if "error" in line), "")
            exc = CompileError(f"the host C++ compiler ({command[0]}) could not compile "
                               f"the kernel source: {first.strip()[:300]} (all of it in "
                               ".log)")
            exc.log = r.stderr
            raise exc
        path = _cache.store(f"{key}.so", out.read_bytes())
    return path, r.stderr


def _check_setting(check):
    """Whether kernels compile for the checking mode: the argument, else
    PYGPU_SIM_CHECK."""
    if check is None:
        value = os.environ.get("PYGPU_SIM_CHECK", "0").strip().lower()
        if value not in ("", "0", "1", "false", "true", "no", "yes", "off", "on"):
            raise ValueError(f"PYGPU_SIM_CHECK is {value!r}; give 1 (check) or 0")
        return value in ("1", "true", "yes", "on")
    return bool(check)


def param_sizes(image):
    """{kernel name: its parameters' sizes in bytes, in order} read from a
    cubin (an ELF image: each kernel's .nv.info.<name> section holds a
    KPARAM_INFO record a parameter), or {} for an image that is not one
    (PTX). This spares asking the driver (cuFuncGetParamInfo) one index past
    the last parameter, an API error under compute-sanitizer."""
    try:
        if image[:5] != b"\x7fELF\x02":
            return {}
        shoff, = struct.unpack_from("<Q", image, 0x28)
        entsize, count, names = struct.unpack_from("<HHH", image, 0x3A)
        heads = [struct.unpack_from("<IIQQQQ", image, shoff + i * entsize)
                 for i in range(count)]
        strings = heads[names][4]
        out = {}
        for name_at, _, _, _, at, size in heads:
            end = image.index(b"\0", strings + name_at)
            name = image[strings + name_at:end].decode()
            if not name.startswith(".nv.info."):
                continue
            found, i = {}, at
            while i < at + size:  # records: format, attribute, then a value
                fmt, attr = image[i], image[i + 1]
                if fmt == 4:  # a value of its own length
                    length, = struct.unpack_from("<H", image, i + 2)
                    if attr == 0x17:  # KPARAM_INFO: index, ordinal, offset, bits
                        _, ordinal, offset, bits = struct.unpack_from("<IHHI", image, i + 4)
                        found[ordinal] = (offset, (bits >> 18) & 0x3FFF)
                    i += 4 + length
                elif fmt in (2, 3):  # one or two bytes
                    i += 4
                elif fmt == 1:  # none
                    i += 2
                else:
                    return {}  # a format not known here: ask the driver
            if sorted(found) != list(range(len(found))):
                return {}
            end = 0  # each parameter after the one before, at its own alignment
            for k in range(len(found)):
                offset, size = found[k]
                if size == 0 or offset < end or offset % min(size & -size, 8):
                    return {}
                end = offset + size
            out[name[len(".nv.info."):]] = tuple(found[k][1] for k in range(len(found)))
        return out
    except (ValueError, IndexError, struct.error, UnicodeDecodeError):
        return {}


def kernel_names(image):
    """The names (as the cubin has them: mangled where not extern "C") of the
    kernels in a cubin: its .text.<name> sections; () for PTX."""
    try:
        if image[:5] != b"\x7fELF\x02":
            return ()
        shoff, = struct.unpack_from("<Q", image, 0x28)
        entsize, count, names = struct.unpack_from("<HHH", image, 0x3A)
        heads = [struct.unpack_from("<IIQQQQ", image, shoff + i * entsize)
                 for i in range(count)]
        strings = heads[names][4]
        out = []
        for name_at, *_ in heads:
            end = image.index(b"\0", strings + name_at)
            section = image[strings + name_at:end].decode()
            if section.startswith(".text."):
                out.append(section[len(".text."):])
        return tuple(out)
    except (ValueError, IndexError, struct.error, UnicodeDecodeError):
        return ()


_MANGLED = re.compile(r"_Z(\d+)")


def _mangled(name, names):
    """The kernel of `names` (a cubin's) that the C++ function `name` was
    compiled to (_Z<length><name><parameters>); `name` itself where none is
    (get_function then says it is not there). ValueError for an overloaded
    name or a template without a name expression."""
    plain, templates = [], []
    for n in names:
        m = _MANGLED.match(n)
        if m and n[m.end():m.end() + int(m.group(1))] == name:
            (templates if n[m.end() + len(name):].startswith("I") else plain).append(n)
    if len(plain) == 1:
        return plain[0]
    if len(plain) > 1:
        raise ValueError(f"the source has {len(plain)} kernels named {name!r} "
                         f"(overloads: {', '.join(plain)}); give the one you want as "
                         "its mangled name")
    if templates:
        raise ValueError(f"{name!r} is a template kernel: give the instance as a name "
                         f"expression, e.g. RawModule(code, name_expressions=['{name}"
                         f"<float>']) and get_function('{name}<float>')")
    return name


def _symbol_layout(name, size, dtype, shape):
    """(dtype, shape) of a view of a module variable of `size` bytes."""
    dtype = np.dtype(np.uint8 if dtype is None else dtype)
    if shape is None:
        shape = (size // dtype.itemsize,)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if int(np.prod(shape)) * dtype.itemsize > size:
        raise ValueError(f"{name!r} holds {size} bytes, not {shape} of {dtype}")
    return dtype, shape


class _Global:
    """__cuda_array_interface__ over a module variable; keeps the module loaded."""

    def __init__(self, module, address, shape, typestr):
        self.module = module
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                         "data": (address, False), "strides": None,
                                         "version": 3}


class RawModule:
    """CUDA C with one or more kernels, compiled by NVRTC (on the simulator, by
    the host C++ compiler).

    `module.memcpy_to_symbol(name, array)` and `memcpy_from_symbol(name,
    dtype)` set and read a __constant__ or __device__ variable of the source
    (cudaMemcpyToSymbol); `get_global(name, dtype)` is a DeviceArray view of
    one.

    `module.get_function(name)` gives a kernel to launch as
    `f[grid, block](args)`, `f[grid, block, stream]` or
    `f[grid, block, stream, shared_bytes]`. Kernels declared extern "C" are
    found by their name; a template kernel by a name expression given here,
    e.g. `RawModule(code, name_expressions=["scale<float>"])` and then
    `get_function("scale<float>")`.

    check: on the simulator, compile for the checking mode (every load and
    store checked, shared-memory races, ...; see docs/SIMULATOR.md): True,
    False, or None to follow PYGPU_SIM_CHECK. On a GPU it changes nothing
    (compute-sanitizer is the GPU's tool).
    """

    def __init__(self, code, options=(), name_expressions=(), check=None):
        self.code = code
        self.options = _checked(code, options)
        self.name_expressions = _strings("name_expressions", name_expressions,
                                         "('scale<float>',)")
        self._lowered = {}
        self._path = self._library = None
        if _core._host_modules():
            self.check = _check_setting(check)
            path, self.log = compile_host(code, self.options, self.check,
                                          self.name_expressions)
            self._module = _core.Module(os.fsencode(path) + b"\0")
            self._path = path
        else:
            self.check = False
            image, self.log, lowered = compile_cuda(code, self.options,
                                                    name_expressions=self.name_expressions)
            self._lowered = dict(zip(self.name_expressions, lowered, strict=True))
            self._module = _core.Module(image)
            self._params = param_sizes(image)
            self._names = kernel_names(image)

    def _global(self, name):
        """(address, bytes) of the module's __device__ or __constant__
        variable `name`: the backend's answer, or the simulator's module's."""
        if not isinstance(name, str):
            raise TypeError("name must be a str naming a __device__ or __constant__ "
                            f"variable of the source; got {type(name).__name__}")
        found = self._module.get_global(name)
        if found is None and self._path is not None:  # the simulator: ask the module
            if self._library is None:
                self._library = ctypes.CDLL(os.fspath(self._path))  # the loaded object
                self._library.pg_sim_module_global.restype = ctypes.c_void_p
                self._library.pg_sim_module_global.argtypes = (
                    ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t))
            size = ctypes.c_size_t(0)
            address = self._library.pg_sim_module_global(name.encode(), ctypes.byref(size))
            if not address:
                raise AttributeError(f"the module has no __device__ or __constant__ "
                                     f"variable named {name!r} at file scope")
            found = (address, size.value)
        return found

    def get_global(self, name, dtype=None, shape=None):
        """A DeviceArray over the module's __device__ or __constant__ variable
        `name`, a view (what is written there, the module's kernels read): its
        bytes, or `dtype` elements in `shape` (default: as many as it holds).
        As CuPy's RawModule.get_global; on the simulator too."""
        address, size = self._global(name)
        dtype, shape = _symbol_layout(name, size, dtype, shape)
        from . import asarray
        return asarray(_Global(self, address, shape, dtype.str))

    def memcpy_to_symbol(self, name, src, offset=0):
        """Copy `src` (a NumPy array, bytes, or a DeviceArray) into the module's
        __device__ or __constant__ variable `name`, from byte `offset`:
        cudaMemcpyToSymbol."""
        address, size = self._global(name)
        if hasattr(src, "copy_to_host"):
            src = src.copy_to_host()
        data = np.ascontiguousarray(src).reshape(-1).view(np.uint8)
        if not isinstance(offset, int) or offset < 0 or offset + data.size > size:
            raise ValueError(f"{name!r} holds {size} bytes; {data.size} bytes from byte "
                             f"offset {offset!r} do not fit")
        if self._path is not None:  # the simulator's memory is this process's
            from . import cuda
            cuda.synchronize()
            ctypes.memmove(address + offset, data.ctypes.data, data.size)
            return
        from . import asarray
        asarray(_Global(self, address + offset, (data.size,), "|u1")).copy_to_device(data)

    def memcpy_from_symbol(self, name, dtype=None, shape=None):
        """A NumPy array of the module's __device__ or __constant__ variable
        `name`: its bytes, or `dtype` elements in `shape` (cudaMemcpyFromSymbol)."""
        address, size = self._global(name)
        dtype, shape = _symbol_layout(name, size, dtype, shape)
        if self._path is not None:
            from . import cuda
            cuda.synchronize()
            count = int(np.prod(shape)) * dtype.itemsize
            return np.frombuffer(ctypes.string_at(address, count), dtype).reshape(shape)
        return self.get_global(name, dtype, shape).copy_to_host()

    def get_function(self, name):
        """The kernel `name`: extern "C", a C++ function (found by its
        mangled name), or a template instance given as a name expression."""
        name = self._lowered.get(_kernel_name(name), name)
        names = getattr(self, "_names", None)
        if names and name not in names:
            name = _mangled(name, names)
        sizes = getattr(self, "_params", None)
        if sizes and name in sizes:
            return self._module.get_function(name, sizes[name])
        return self._module.get_function(name)

    def __reduce__(self):
        # Pickled as its source: a worker process compiles it (disk cache) once.
        return _loaded_module, (self.code, self.options)


class RawKernel:
    """One kernel `name` of CUDA C source, compiled by NVRTC (on the simulator,
    by the host C++ compiler). A template kernel: give its name expression,
    e.g. RawKernel(code, "scale<float>")."""

    def __init__(self, code, name, options=(), check=None):
        self.code = code
        self.name = _kernel_name(name)
        self.module = RawModule(code, options, (name,) if "<" in name else (), check)
        self._function = self.module.get_function(name)

    def __getitem__(self, config):
        return self._function[config]

    @property
    def check(self):
        """Whether the kernel runs in the simulator's checking mode."""
        return self.module.check

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
