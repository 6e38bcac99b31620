"""Where pygpu finds NVIDIA's libraries (NVRTC, cuBLAS, cuSOLVER, cuFFT), and which it loaded.

A library is looked for by absolute path or by bare soname only, never by a
path relative to the current directory, in this order:

- ``PYGPU_<NAME>`` (``PYGPU_NVRTC``, ``PYGPU_CUBLAS``): the absolute path of
  the library to use. A relative one is refused (the search goes on, and the
  list of what was tried says why); ``PYGPU_<NAME>=0`` turns the library off;
- the loader's own search (LD_LIBRARY_PATH, ld.so.cache): bare sonames such
  as libnvrtc.so.13;
- the CUDA toolkit: $CUDA_HOME and $CUDA_PATH (each only if it is an
  absolute path), then /usr/local/cuda: lib64, lib, targets/*/lib;
- NVIDIA's wheels (nvidia-cuda-nvrtc, nvidia-cublas, ...) in this
  interpreter's site-packages: site.getsitepackages(), the user site when it
  is enabled, sysconfig's purelib and platlib. Not the other sys.path
  entries: '' (the current directory under `python -c`, stdin and the REPL)
  and the script's directory are anyone's to write.

LIBRARIES is the one list of the libraries searched for; adding one is an
entry. `record()` notes the file each library was loaded from, and `loaded()`
and `summary()` say it (`cuda.detect()` and `python -m pygpu` print it).

`identity()` names a library file without loading it (its real path, size,
modification time, inode and device, from one stat), and `loader_state()`
digests what decides which file the loader gives for a bare soname: the disk
cache's keys hold these, so that a cached kernel is found without loading
NVRTC (tens of MB of relocations) and is not found once another NVRTC would
compile it.
"""

import glob
import hashlib
import os
import re
import site
import stat
import sys
import sysconfig
import threading
from typing import NamedTuple


class Library(NamedTuple):
    sonames: tuple  # what the loader searches for, best first
    wheels: tuple  # the folders under site-packages/nvidia/ whose lib/ may hold it


LIBRARIES = {
    "nvrtc": Library(("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"), ("*",)),
    "cublas": Library(("libcublas.so.13", "libcublas.so.12"), ("cu13", "cublas")),
    # CUDA 13 ships cuSOLVER 12 and cuFFT 12, CUDA 12 cuSOLVER 11 and cuFFT 11
    # (nvidia-cusolver-cu13 and nvidia-cufft-cu13 put them in nvidia/cu13/lib,
    # the cu12 wheels in nvidia/cusolver/lib and nvidia/cufft/lib)
    "cusolver": Library(("libcusolver.so.12", "libcusolver.so.11"), ("cu13", "cusolver")),
    "cufft": Library(("libcufft.so.12", "libcufft.so.11"), ("cu13", "cufft")),
}

TOOLKIT = "/usr/local/cuda"
TOOLKIT_LIBS = ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib")

_loaded = {}  # name -> the file it was loaded from, in the order loaded


def setting(name):
    """The name of the variable that gives lib<name>'s path: PYGPU_NVRTC."""
    return f"PYGPU_{name.upper()}"


def disabled(name):
    """Whether PYGPU_<NAME>=0 turns lib<name> off."""
    return os.environ.get(setting(name), "").strip() == "0"


def _absolute(var, tried):
    """$var if it is an absolute path; None if unset or not (saying so in `tried`)."""
    value = os.environ.get(var, "").strip()
    if value and not os.path.isabs(value):
        if tried is not None:
            tried.append(f"{var}={value!r} was not used: it must be an absolute path")
        return None
    return value or None


def site_dirs():
    """This interpreter's site-packages directories, where pip puts NVIDIA's
    wheels, as absolute paths: the user site first (when enabled), as in
    sys.path, then site.getsitepackages(), then sysconfig's purelib, platlib."""
    dirs = [site.getusersitepackages()] if site.ENABLE_USER_SITE is True else []
    dirs += site.getsitepackages()
    paths = sysconfig.get_paths()
    dirs += [paths["purelib"], paths["platlib"]]
    found = []
    for d in dirs:
        if d and os.path.isabs(d) and os.path.normpath(d) not in found:
            found.append(os.path.normpath(d))
    return found


def _version_key(path):
    """libx.so.13.1 sorts after libx.so.13, after libx.so.12.9, after libx.so."""
    return tuple(int(n) for n in re.findall(r"\d+", os.path.basename(path).partition(".so")[2]))


def _files(folder, name, sonames):
    """lib<name>.so.* in `folder`, newest first, then lib<name>.so if that is
    one of its sonames."""
    found = glob.glob(os.path.join(glob.escape(folder), f"lib{name}.so.*"))
    bare = os.path.join(folder, f"lib{name}.so")
    tail = [bare] if f"lib{name}.so" in sonames and os.path.exists(bare) else []
    return sorted(found, key=_version_key, reverse=True) + tail


def candidates(name, tried=None):
    """Where to look for lib<name> (a key of LIBRARIES), best first: each an
    absolute path or a bare soname, once. `tried`, a list, gets a line for
    each setting refused (relative, or PYGPU_<NAME>=0)."""
    sonames, wheels = LIBRARIES[name]
    var = setting(name)
    if disabled(name):
        if tried is not None:
            tried.append(f"{var}=0")
        return

    def wanted():
        yield _absolute(var, tried)
        yield from sonames
        homes = [_absolute("CUDA_HOME", tried), _absolute("CUDA_PATH", tried), TOOLKIT]
        for home in filter(None, homes):
            for sub in TOOLKIT_LIBS:
                yield from _files(os.path.join(home, sub), name, sonames)
        for where in site_dirs():
            for wheel in wheels:
                pattern = os.path.join(glob.escape(where), "nvidia", wheel, "lib")
                for folder in sorted(glob.glob(pattern)):
                    yield from _files(folder, name, sonames)

    seen = set()
    for path in wanted():
        # an absolute path, or a soname the loader searches for; never relative
        if path and (os.path.isabs(path) or os.sep not in path) and path not in seen:
            seen.add(path)
            yield path


def nvrtc_candidates(tried=None):
    """Where to look for NVRTC, best first (see candidates)."""
    return candidates("nvrtc", tried)


def cublas_candidates(tried=None):
    """Where to look for cuBLAS, best first (see candidates)."""
    return candidates("cublas", tried)


def cusolver_candidates(tried=None):
    """Where to look for cuSOLVER, best first (see candidates)."""
    return candidates("cusolver", tried)


def cufft_candidates(tried=None):
    """Where to look for cuFFT, best first (see candidates)."""
    return candidates("cufft", tried)


class MissingLibraryError(RuntimeError):
    """An NVIDIA library that an operation needs (cuSOLVER, cuFFT) was not
    found, or was turned off; the message says what was tried and how to
    install it."""


# how to get each library loaded by ctypes (pygpu.linalg, pygpu.fft)
INSTALL = {
    "cusolver": ("cuSOLVER", "pip install nvidia-cusolver-cu13 (or nvidia-cusolver-cu12 "
                             "with a CUDA 12 driver)"),
    "cufft": ("cuFFT", "pip install nvidia-cufft-cu13 (or nvidia-cufft-cu12 with a "
                       "CUDA 12 driver)"),
}
# the CUDA major version (of the driver) that a library's soname major needs,
# where it is not the same number: cuSOLVER 12 and cuFFT 12 come with CUDA 13
NEEDS_CUDA = {"cusolver": {12: 13, 11: 11}, "cufft": {12: 13, 11: 12, 10: 11}}
_ctypes_lock = threading.Lock()
_ctypes_libs = {}  # name -> ctypes.CDLL, or the MissingLibraryError raised


def load(name):
    """lib<name> (a key of INSTALL) as a ctypes.CDLL, loaded once per process
    from the first candidate that loads, and recorded; MissingLibraryError,
    naming the library and how to install it, where none does (raised again
    at each later call)."""
    found = _ctypes_libs.get(name)
    if found is None:
        with _ctypes_lock:
            found = _ctypes_libs.get(name)
            if found is None:
                found = _ctypes_libs[name] = _load_ctypes(name)
    if isinstance(found, MissingLibraryError):
        raise MissingLibraryError(str(found))
    return found


def _load_ctypes(name):
    import ctypes

    label, pip = INSTALL[name]
    if disabled(name):
        return MissingLibraryError(f"{label} is turned off ({setting(name)}=0)")
    refused, errors = [], []
    driver = _driver_major()
    for path in candidates(name, refused):
        m = re.search(r"\.so\.(\d+)", os.path.basename(path))
        needs = NEEDS_CUDA.get(name, {}).get(int(m.group(1))) if m else None
        if driver is not None and needs is not None and needs > driver:
            errors.append(f"{path}: {label} {m.group(1)} needs a CUDA {needs} driver (this "
                          f"one runs CUDA {driver})")
            continue
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as exc:
            errors.append(str(exc) if os.path.isabs(path) else f"{path}: not found")
            continue
        record(name, path)
        return lib
    return MissingLibraryError(
        f"{label} (lib{name}.so) was not found: {pip}, or install the CUDA toolkit, or "
        f"set {setting(name)} to the absolute path of lib{name}.so. Tried: "
        + "; ".join(refused + errors[-4:]))


def _driver_major():
    """The CUDA major version the driver runs (13 for 13.0), or None (no
    driver, the simulator)."""
    try:
        from . import _core

        v = _core.versions().get("driver", 0)
    except Exception:  # noqa: BLE001  (no driver: nothing to filter by)
        return None
    return v // 1000 if v else None


def _mapped(soname):
    """The file this process mapped for `soname` (libnvrtc.so.13 may be
    /usr/local/cuda-13.0/lib/libnvrtc.so.13.0.88), from /proc/self/maps; None
    if none is, or the maps cannot be read."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) < 6:
                    continue
                file = fields[5].strip()
                base = os.path.basename(file)
                if os.path.isabs(file) and (base == soname or base.startswith(soname + ".")):
                    return file
    except OSError:
        pass
    return None


def record(name, path):
    """Note that lib<name> was loaded from `path`, what dlopen was given, and
    return the file: `path` if absolute, else the file the loader took for
    that soname (the soname itself where /proc/self/maps cannot tell)."""
    where = path if os.path.isabs(path) else _mapped(os.path.basename(path)) or path
    _loaded[name] = where
    return where


def loaded():
    """{name: file} of the NVIDIA libraries this process loaded, as loaded."""
    return dict(_loaded)


def summary():
    """One line: "nvrtc /usr/local/cuda/lib64/libnvrtc.so.13, cublas ...", or
    "none loaded yet"."""
    return ", ".join(f"{name} {path}" for name, path in _loaded.items()) or "none loaded yet"


def identity(path):
    """(real path, size, mtime in ns, inode, device) of the regular file that
    `path` (absolute) names after its symbolic links, from one stat: a new
    version of a library is another file, or the same path rewritten (a new
    size, time or inode). None where there is no such file."""
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except (OSError, ValueError):
        return None
    if not (os.path.isabs(real) and stat.S_ISREG(st.st_mode)):
        return None
    return (real, st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


def _stat_of(path):
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


def loader_state(name, caller):
    """A digest of what decides which file a search for lib<name> ends at when
    it asks the loader for a bare soname (dlopen from `caller`, the object that
    calls it): the settings the search reads (PYGPU_<NAME>, CUDA_HOME,
    CUDA_PATH, LD_LIBRARY_PATH), each LD_LIBRARY_PATH directory (a file added
    to one changes its time), /etc/ld.so.cache (ldconfig, which a toolkit's
    installer runs, rewrites it), the caller's file (its RUNPATH) and what
    decides this interpreter's site directories (its prefixes, the user
    site), without asking site for them (a millisecond on a first call).
    Equal digests: the same search, the same
    file, unless a directory of the search changed by itself, which the file's
    identity() after a real load then corrects."""
    env = os.environ
    library_path = env.get("LD_LIBRARY_PATH", "")
    state = (name, LIBRARIES[name], env.get(setting(name)), env.get("CUDA_HOME"),
             env.get("CUDA_PATH"), library_path,
             [(d, _stat_of(d)) for d in library_path.split(":")],
             _stat_of("/etc/ld.so.cache"), caller, _stat_of(caller), sys.prefix,
             sys.exec_prefix, sys.platlibdir, sys.version_info[:2], sys.flags.no_user_site,
             env.get("PYTHONUSERBASE"), env.get("HOME"))
    return hashlib.sha256(repr(state).encode()).hexdigest()
