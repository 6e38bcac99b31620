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
file). Kernels must be declared extern "C".

On the simulator the source is compiled by the host C++ compiler (CXX, else
g++ or clang++ on PATH) into a shared object, against sim_prelude.h (next to
this file), which gives the CUDA dialect (docs/SIMULATOR.md lists it). Compiler
errors name the lines of your source; what the simulator cannot run (inline
PTX, textures, grid-wide sync, dynamic parallelism, CUB/CUTLASS) is refused
with a CompileError that names it. The shared object is cached on disk like a
cubin, keyed by the source, the options, the compiler and the prelude. Of the
options, -D, -U, -I and -std= are passed to the compiler; the others are
NVRTC's and are left out. Each `__global__ void name(` of the source that is
not a template becomes a kernel that get_function finds; templates are found
by their name expressions.
"""

import functools
import hashlib
import os
import re
import shlex
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

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


def _cuda_key(source, options, arch, compiler, name_expressions):
    return hashlib.sha256(repr((source, options, arch, compiler, _headers_digest(),
                                name_expressions)).encode()).hexdigest()


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
    options += (f"--include-path={_INCLUDE}",)
    # the key names NVRTC by its file, predicted without loading it where a
    # load has not happened yet; a compile loads it, and the cubin is stored
    # under the file that made it
    compiler = _nvrtc_identity()
    key = _cuda_key(source, options, arch, compiler, name_expressions)
    found = _cached_cubin(key, name_expressions)
    if found is not None:
        return found
    nvrtc_version()
    if _nvrtc_file != compiler:  # the prediction was wrong: key by the loaded file
        key = _cuda_key(source, options, arch, _nvrtc_file, name_expressions)
        found = _cached_cubin(key, name_expressions)
        if found is not None:
            return found
    image, log, lowered = _core._nvrtc_compile(source, "pygpu_kernel.cu", options,
                                               name_expressions)
    if name_expressions:
        _cache.store(f"{key}.names", "\n".join(lowered).encode())
    _cache.store(f"{key}.cubin", image)
    return image, log, list(lowered)


_PRELUDE = Path(__file__).with_name("sim_prelude.h")
_SIM_INCLUDE = Path(__file__).with_name("sim_include")
# pygpu's device headers (<pygpu/ufunc.h>, ...): the generated kernels include
# them, and so may users' kernels, on both backends
_INCLUDE = Path(__file__).with_name("include")
_host_compilers = {}

# `extern __shared__ [__align__(n)] T name[];`: the launch's dynamic shared
# memory (sim_prelude.h's PG_SIM_DYNAMIC_SHARED), on the same line
_DYNAMIC_SHARED = re.compile(
    r"\bextern\s+__shared__\s+(?:__align__\s*\((?:[^()]|\([^()]*\))*\)\s*)?"
    r"([^;\[\]]*?)\s*\b(\w+)\s*\[\s*\]\s*;")
# `[static] __shared__ T name[...]...;`: in the checking mode, a reference
# into the prelude's arena of static shared memory (one declarator, no
# attributes; others stay plain statics, unchecked)
_STATIC_SHARED = re.compile(
    r"(?:\bstatic\s+)?\b__shared__\s+([^;{}()\[\],=]+?)\s+(\w+)\s*((?:\[[^\];]*\]\s*)*);")
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
    (re.compile(r"\b(?:this_grid|sync_grids)\s*\(|\bgrid_group\b"),
     "grid-wide cooperative sync (cooperative_groups::this_grid)"),
    (re.compile(r"#\s*include\s*[<\"]cooperative_groups"), "cooperative groups"),
    (re.compile(r"\b(?:asm|__asm__|__asm)\b(?:\s+volatile|\s+__volatile__)?\s*\("),
     "inline PTX (asm)"),
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


def _refuse_unsupported(source):
    """CompileError naming the first construct the simulator cannot run."""
    code = _COMMENT.sub(_blank, source)
    lines = code.splitlines()
    for pattern, what in _REFUSED:
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


def _static_shared(m):
    kind, name, dims = m.group(1).strip(), m.group(2), m.group(3).strip()
    t = f"__pg_shared_t_{name}"
    return (f"using {t} = {kind} {dims}; static {t} &{name} = *({t} *)pg_sim::check::"
            f'static_shared(sizeof({t}), alignof({t}), "{name}");')


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
    body = _DYNAMIC_SHARED.sub(r"PG_SIM_DYNAMIC_SHARED(\1, \2);", source)
    if check:
        body = _STATIC_SHARED.sub(_static_shared, body)
    exports = [(n, n, p) for n, (p, template) in kernels.items() if not template]
    for expr in name_expressions:
        base = expr.split("<")[0].strip()
        exports.append((expr, expr, kernels.get(base, ("", True))[0]))
    lines = "".join(
        f"static pg_sim::exporter pg_sim_export_{i}(pg_sim::describe("
        f"{_c_string(name)}, {_c_string(params)}, &{expr}));\n"
        for i, (name, expr, params) in enumerate(exports))
    return (f'#include "{_PRELUDE}"\n#line 1 "<kernel source>"\n{body}\n'
            f'#line 1 "<pygpu exports>"\n{lines}')


def _c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@functools.cache
def _headers_digest():
    """The digest of pygpu's device headers, part of every cache key."""
    h = hashlib.sha256()
    found = []
    for top, dirs, files in os.walk(_INCLUDE):  # os.walk: a tenth of rglob's time
        dirs.sort()
        found += [os.path.join(top, f) for f in files if f.endswith(".h")]
    for p in sorted(found, key=lambda p: Path(p).relative_to(_INCLUDE).parts):
        with open(p, "rb") as f:
            h.update(str(Path(p).relative_to(_INCLUDE)).encode() + b"\0" + f.read())
    return h.hexdigest()


@functools.cache
def _prelude_digest():
    h = hashlib.sha256(_PRELUDE.read_bytes())
    for p in sorted(_SIM_INCLUDE.glob("*.h")):
        h.update(p.name.encode() + p.read_bytes())
    h.update(_headers_digest().encode())
    return h.hexdigest()


def compile_host(source, options=(), check=False, name_expressions=()):
    """Compile CUDA C for the simulator with the host C++ compiler, through the
    disk cache (with check, instrumented for the checking mode). Returns (path
    of the shared object, compiler log)."""
    options = _checked(source, options)
    name_expressions = tuple(name_expressions)
    _refuse_unsupported(source)
    flags = [o for o in options if o.startswith(("-D", "-U", "-I", "-std="))]
    command, where, version = host_compiler(check)
    unit = _host_source(source, check, name_expressions)
    extra = (["-DPG_SIM_CHECK=1", "-fsanitize-coverage=func,trace-loads,trace-stores"]
             if check else [])
    flags = ["-std=c++17", "-O2", "-fPIC", "-shared", "-fno-exceptions",
             "-fno-threadsafe-statics", "-fvisibility=hidden", "-w", f"-I{_SIM_INCLUDE}",
             f"-I{_INCLUDE}",
             *extra, *flags]
    # the key: what the compiler gets (the unit, its flags, the prelude and its
    # headers) and which compiler
    key = hashlib.sha256(repr((unit, flags, where, version,
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
            exc = CompileError(f"the host C++ compiler ({command[0]}) could not compile "
                               "the kernel source; see .log")
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


class RawModule:
    """CUDA C with one or more kernels, compiled by NVRTC (on the simulator, by
    the host C++ compiler).

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
        self.options = tuple([options] if isinstance(options, str) else options)
        if isinstance(name_expressions, str):
            name_expressions = (name_expressions,)
        self.name_expressions = tuple(name_expressions)
        if not all(isinstance(e, str) for e in self.name_expressions):
            raise TypeError("name_expressions must be strings, e.g. ('scale<float>',)")
        self._lowered = {}
        if _core._host_modules():
            self.check = _check_setting(check)
            path, self.log = compile_host(code, self.options, self.check,
                                          self.name_expressions)
            self._module = _core.Module(os.fsencode(path) + b"\0")
        else:
            self.check = False
            image, self.log, lowered = compile_cuda(code, self.options,
                                                    name_expressions=self.name_expressions)
            self._lowered = dict(zip(self.name_expressions, lowered, strict=True))
            self._module = _core.Module(image)
            self._params = param_sizes(image)

    def get_function(self, name):
        name = self._lowered.get(name, name)
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
        self.name = name
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
