"""The one disk cache of compiled code: cubins on a GPU, shared objects on the
simulator, and whatever else pygpu compiles. Everything that reads or writes a
compiled image goes through `load`, `load_path` and `store`.

What is trusted (docs/SECURITY.md):

- The cache directory is PYGPU_CACHE_DIR, else ~/.cache/pygpu. pygpu creates
  it, and any missing parent, with mode 0700; every file it writes is 0600,
  whatever the umask.
- Before an image is loaded, the file must be a regular file owned by the user
  (or root) and writable by no one else; its directory must pass the same test;
  and every directory above it, up to the user's home (or /), must be owned by
  the user or root and not writable by group or others unless it has the
  sticky bit (OpenSSH's StrictModes rule, with /tmp's exception). Where a check
  fails, pygpu warns once (UnsafeCacheWarning), saying what is unsafe and how to
  fix it, and uses a private temporary directory for the rest of the process.
- Every file ends with a trailer: a magic, the SHA-256 of the image and its
  length. A file that is truncated, or whose digest does not match, is never
  loaded: the caller compiles again and the file is rewritten. Files are
  written to a temporary name and renamed, so a crash mid-write leaves no
  half file under a name that is read.
"""

import atexit
import errno
import hashlib
import os
import shutil
import stat
import struct
import tempfile
import threading
import warnings
from pathlib import Path

_MAGIC = b"PGCACHE1"
_TRAILER = struct.Struct("<8s32sQ")  # magic, sha256 of the image, its length


class UnsafeCacheWarning(RuntimeWarning):
    """The cache directory, or a file in it, could be written by someone else:
    pygpu compiles into a private temporary directory instead."""


_lock = threading.Lock()
_private = None  # (pid, Path): this process's temporary cache, made on first need
_distrusted = {}  # configured directory -> why it is not used


def configured():
    """The directory the user asked for: PYGPU_CACHE_DIR, else ~/.cache/pygpu,
    made absolute."""
    value = os.environ.get("PYGPU_CACHE_DIR")
    return Path(os.path.abspath(value or Path.home() / ".cache" / "pygpu"))


def _owner_ok(st):
    return st.st_uid in (os.geteuid(), 0)


def _problem_with(path, st, what):
    """Why `path` (a file or the cache directory, as `st` says) may not be
    trusted, or None."""
    if not _owner_ok(st):
        return (f"{what} {path} is owned by uid {st.st_uid}, not by you (uid "
                f"{os.geteuid()}) or root")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (f"{what} {path} is writable by others (mode "
                f"{stat.S_IMODE(st.st_mode):04o}): run `chmod go-w {path}`"
                + ("" if what == "cached file" else f" (or `chmod 700 {path}`)"))
    return None


def _chain_problem(directory):
    """Why the directory, or one above it up to the user's home (or /), may
    not be trusted, or None. (os.path on strings: pathlib's objects cost more
    than the stat calls on every load.)"""
    real = os.path.realpath(directory)
    try:
        st = os.stat(real)
    except OSError as exc:
        return f"cache directory {directory} cannot be read: {exc.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return f"cache directory {directory} is not a directory"
    problem = _problem_with(real, st, "cache directory")
    if problem:
        return problem
    home = os.path.realpath(Path.home())
    stop = home if real == home or real.startswith(home.rstrip("/") + "/") else "/"
    parent = real
    while parent != stop and parent != "/":
        parent = os.path.dirname(parent)
        st = os.stat(parent)
        if not _owner_ok(st):
            return (f"{parent}, above the cache directory {directory}, is owned by uid "
                    f"{st.st_uid}, not by you or root: set PYGPU_CACHE_DIR to a "
                    "directory of your own")
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not st.st_mode & stat.S_ISVTX:
            return (f"{parent}, above the cache directory {directory}, is writable by "
                    f"others without the sticky bit (mode {stat.S_IMODE(st.st_mode):04o}), "
                    f"so anyone can replace what is under it: run `chmod go-w {parent}` "
                    "or set PYGPU_CACHE_DIR to a directory of your own")
    return None


def _make(directory):
    """Create the directory and its missing parents with mode 0700."""
    missing = []
    for p in (directory, *directory.parents):
        if p.exists():
            break
        missing.append(p)
    for p in reversed(missing):
        try:
            os.mkdir(p, 0o700)
        except FileExistsError:
            continue
        os.chmod(p, 0o700)  # the umask may have taken bits away; never adds any


def _private_dir():
    """This process's own temporary cache (mkdtemp: 0700, a fresh name),
    removed at exit."""
    global _private
    with _lock:
        if _private is None or _private[0] != os.getpid():
            path = Path(tempfile.mkdtemp(prefix="pygpu-cache-"))
            _private = (os.getpid(), path)
            atexit.register(_remove_private, os.getpid(), path)
        return _private[1]


def _remove_private(pid, path):
    if os.getpid() == pid:  # not in a forked child
        shutil.rmtree(path, ignore_errors=True)


def _distrust(where, why):
    with _lock:
        if where in _distrusted:
            return
        _distrusted[where] = why
    warnings.warn(
        f"pygpu does not load compiled code from its cache: {why}. Anyone who can "
        "write there could make pygpu run their code. This process compiles into a "
        "private temporary directory instead (docs/SECURITY.md says how to share a "
        "cache safely).", UnsafeCacheWarning, stacklevel=4)


def directory():
    """The directory this process reads and writes: the configured one, made
    if missing, when it can be trusted; else the private temporary one (with a
    warning, once)."""
    where = configured()
    if where in _distrusted:
        return _private_dir()
    try:
        if not os.path.isdir(where):
            _make(where)
    except OSError:
        return _private_dir()  # cannot be made (read-only home, ...): nothing to warn of
    problem = _chain_problem(where)
    if problem:
        _distrust(where, problem)
        return _private_dir()
    return where


def _read(path, where):
    """The image in cache file `path`, checked; None where there is none, or
    it is truncated or corrupt."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            _distrust(where, f"cached file {path} is a symbolic link")
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            _distrust(where, f"cached file {path} is not a regular file")
            return None
        problem = _problem_with(path, st, "cached file")
        if problem:
            _distrust(where, problem)
            return None
        data = f.read()
    if len(data) < _TRAILER.size:
        return None
    magic, digest, length = _TRAILER.unpack_from(data, len(data) - _TRAILER.size)
    image = data[:-_TRAILER.size]
    if magic != _MAGIC or length != len(image) or hashlib.sha256(image).digest() != digest:
        return None
    return image


def _find(name):
    """(path, image) of a trusted, intact entry `name`, or None."""
    base = directory()
    path = base / name
    image = _read(path, base)
    return None if image is None else (path, image)


def load(name):
    """The image stored as `name` (e.g. "<key>.cubin"), or None: not there,
    not trusted, truncated or corrupt."""
    found = _find(name)
    return found[1] if found else None


def load_path(name):
    """The path of entry `name` for a loader that opens files itself (dlopen
    of a shared object: the trailer after the ELF image changes nothing for
    it), once its owner, mode, directories and digest were checked; or None."""
    found = _find(name)
    return found[0] if found else None


def _write(path, image):
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")  # 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(image)
            f.write(_TRAILER.pack(_MAGIC, hashlib.sha256(image).digest(), len(image)))
        os.replace(tmp, path)  # atomic: a reader sees the whole file or none
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def store(name, image):
    """Write `image` as entry `name` and return its path: in the cache
    directory, else (unwritable: a read-only shared cache, a full disk) in the
    private temporary one."""
    path = directory() / name
    try:
        _write(path, image)
    except OSError:
        path = _private_dir() / name
        _write(path, image)
    return path


__all__ = ["UnsafeCacheWarning", "configured", "directory", "load", "load_path", "store"]
