"""pygpu loads compiled code only from places no one else can write
(docs/SECURITY.md): the cache's modes, the ownership and permission checks
before a load, the integrity trailer.

The attacks run as a user would meet them: a kernel is compiled once, then
its cached image is replaced by a shared object whose constructor writes a
marker file (with a valid trailer, so that only the permission checks stand
in its way), and a fresh process builds the same kernel. The marker must never
appear, and the kernel must still give the right answer.
"""

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from pygpu import _cache

pytestmark = pytest.mark.skipif(not shutil.which("gcc"), reason="needs gcc for the planted objects")

SCALE = r"""
extern "C" __global__ void scale(float *x, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""

# A fresh process builds the kernel from the cache and runs it. It prints the
# result; the cache's warnings go to stderr.
CHILD = textwrap.dedent(f"""
    import numpy as np, pygpu
    k = pygpu.RawKernel({SCALE!r}, "scale")
    d = pygpu.asarray(np.arange(7, dtype=np.float32))
    k[1, 32](d, np.float32(3), d.size)
    print(d.copy_to_host().tolist())
""")
EXPECTED = str((np.arange(7, dtype=np.float32) * 3).tolist())


def _on_simulator():
    import pygpu

    return pygpu._core._host_modules()


def _child(cache, env_extra=None):
    env = dict(os.environ, PYGPU_CACHE_DIR=str(cache))
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          env=env, timeout=300)


def _planted(tmp_path, marker):
    """A shared object whose constructor writes `marker`, in the cache's file
    format (a valid trailer)."""
    src = tmp_path / "planted.c"
    src.write_text(textwrap.dedent(f"""
        #include <stdio.h>
        __attribute__((constructor)) static void planted(void) {{
            FILE *f = fopen("{marker}", "w");
            if (f) {{ fputs("planted code ran", f); fclose(f); }}
        }}
    """))
    so = tmp_path / "planted.so"
    subprocess.run(["gcc", "-shared", "-fPIC", str(src), "-o", str(so)], check=True)
    image = so.read_bytes()
    return image + _cache._TRAILER.pack(_cache._MAGIC, hashlib.sha256(image).digest(),
                                        len(image))


@pytest.fixture
def fresh_state(monkeypatch):
    """The cache module's per-process state, emptied for one test."""
    monkeypatch.setattr(_cache, "_distrusted", {})
    monkeypatch.setattr(_cache, "_private", None)


def _first_compile(cache):
    r = _child(cache)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == EXPECTED
    entries = [p for p in cache.iterdir() if p.suffix in (".so", ".cubin")]
    assert len(entries) == 1, entries
    return entries[0]


def _assert_not_run(r, marker, warned=True):
    assert not marker.exists(), "the planted code ran"
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == EXPECTED
    if warned:
        assert "UnsafeCacheWarning" in r.stderr, r.stderr
        assert "chmod" in r.stderr


needs_sim = pytest.mark.skipif("not _on_simulator()",
                               reason="plants a shared object: the simulator's images")


@needs_sim
def test_planted_object_in_a_world_writable_cache_never_runs(tmp_path):
    # The steps: compile once, copy the cache to a directory anyone can
    # write (a shared CI cache), replace the object, build again in a new process.
    private = tmp_path / "private"
    entry = _first_compile(private)
    shared = tmp_path / "shared"
    shutil.copytree(private, shared)
    os.chmod(shared, 0o777)
    marker = tmp_path / "marker"
    (shared / entry.name).write_bytes(_planted(tmp_path, marker))
    r = _child(shared)
    _assert_not_run(r, marker)
    assert "writable by others" in r.stderr and str(shared) in r.stderr


@needs_sim
def test_planted_object_in_a_world_writable_file_never_runs(tmp_path):
    cache = tmp_path / "cache"
    entry = _first_compile(cache)
    marker = tmp_path / "marker"
    entry.write_bytes(_planted(tmp_path, marker))
    os.chmod(entry, 0o666)
    r = _child(cache)
    _assert_not_run(r, marker)
    assert "cached file" in r.stderr and entry.name in r.stderr


@needs_sim
def test_directory_chain_writable_without_sticky_bit_is_not_trusted(tmp_path):
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    cache = open_dir / "cache"
    entry = _first_compile(cache)
    marker = tmp_path / "marker"
    entry.write_bytes(_planted(tmp_path, marker))
    os.chmod(open_dir, 0o777)  # anyone could rename cache/ and put their own there
    r = _child(cache)
    _assert_not_run(r, marker)
    assert "sticky" in r.stderr and str(open_dir) in r.stderr


@needs_sim
def test_a_sticky_parent_is_trusted_like_tmp(tmp_path, fresh_state, monkeypatch):
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    os.chmod(sticky, 0o1777)
    cache = sticky / "cache"
    entry = _first_compile(cache)
    r = _child(cache)
    assert r.returncode == 0 and r.stdout.strip() == EXPECTED
    assert "UnsafeCacheWarning" not in r.stderr
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(cache))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _cache.load_path(entry.name) == entry  # read from there, not recompiled


@needs_sim
def test_a_planted_object_with_a_wrong_digest_is_recompiled_not_loaded(tmp_path):
    cache = tmp_path / "cache"
    entry = _first_compile(cache)
    marker = tmp_path / "marker"
    planted = _planted(tmp_path, marker)
    good = entry.read_bytes()
    # the planted image under the real image's trailer: owner and modes are fine
    entry.write_bytes(planted[:-_cache._TRAILER.size] + good[-_cache._TRAILER.size:])
    os.chmod(entry, 0o600)
    r = _child(cache)
    _assert_not_run(r, marker, warned=False)
    assert entry.read_bytes() == good  # rewritten by the recompile


@needs_sim
def test_a_truncated_object_is_recompiled(tmp_path):
    cache = tmp_path / "cache"
    entry = _first_compile(cache)
    good = entry.read_bytes()
    for size in (0, 10, len(good) // 2, len(good) - 1):
        entry.write_bytes(good[:size])
        r = _child(cache)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == EXPECTED
        assert "UnsafeCacheWarning" not in r.stderr
        assert entry.read_bytes() == good


def test_the_cache_is_private_whatever_the_umask(tmp_path, fresh_state, monkeypatch):
    cache = tmp_path / "a" / "b" / "cache"
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(cache))
    old = os.umask(0)
    try:
        path = _cache.store("k.cubin", b"image bytes")
    finally:
        os.umask(old)
    assert path == cache / "k.cubin"
    for d in (tmp_path / "a", tmp_path / "a" / "b", cache):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700, d
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]  # no half files
    assert _cache.load("k.cubin") == b"image bytes"


@pytest.mark.parametrize("how", ["dir", "file", "chain", "symlink"])
def test_an_untrusted_image_is_not_read_and_the_process_goes_private(tmp_path, fresh_state,
                                                                     monkeypatch, how):
    # The GPU's images (cubins) take the same checks through load().
    top = tmp_path / "top"
    cache = top / "cache"
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(cache))
    _cache.store("k.cubin", b"cubin")
    if how == "dir":
        os.chmod(cache, 0o777)
    elif how == "file":
        os.chmod(cache / "k.cubin", 0o646)
    elif how == "chain":
        os.chmod(top, 0o775)
    else:
        (tmp_path / "elsewhere").write_bytes((cache / "k.cubin").read_bytes())
        (cache / "k.cubin").unlink()
        (cache / "k.cubin").symlink_to(tmp_path / "elsewhere")
    with pytest.warns(_cache.UnsafeCacheWarning, match="chmod|symbolic link"):
        assert _cache.load("k.cubin") is None
    private = _cache.directory()
    assert private != cache and stat.S_IMODE(os.stat(private).st_mode) == 0o700
    assert _cache.store("k.cubin", b"fresh") == private / "k.cubin"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once only
        assert _cache.load("k.cubin") == b"fresh"


def test_a_corrupt_image_reads_as_missing(tmp_path, fresh_state, monkeypatch):
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(tmp_path / "cache"))
    path = _cache.store("k.cubin", b"0123456789" * 100)
    data = path.read_bytes()
    for bad in (data[:-1], data[:5], b"", data[:100] + b"X" + data[101:],
                data[:-_cache._TRAILER.size]):
        path.write_bytes(bad)
        assert _cache.load("k.cubin") is None
    path.write_bytes(data)
    assert _cache.load("k.cubin") == b"0123456789" * 100


def test_an_unwritable_cache_still_works(tmp_path, fresh_state, monkeypatch):
    # What cannot be written in the cache (a read-only shared cache, a full
    # disk; here a directory in the way) is written to the private directory.
    cache = tmp_path / "cache"
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(cache))
    _cache.store("old.cubin", b"old")
    (cache / "new.cubin").mkdir()
    path = _cache.store("new.cubin", b"new")
    assert path.parent != cache and path.name == "new.cubin"
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert path.read_bytes()[:3] == b"new"
    assert _cache.load("old.cubin") == b"old"
