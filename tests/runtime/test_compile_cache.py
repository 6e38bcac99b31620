"""The GPU compile path's cache keys (rawkernel.compile_cuda): a kernel in the
disk cache is found without loading NVRTC, and is not found once another
NVRTC (another file), other device headers, or other options would compile it.

NVRTC is stood in for by fakes of _core's _nvrtc_load and _nvrtc_compile that
count their calls, so these run on the simulator and need no toolkit; each
"fresh process" is the module's per-process state set back to none.
"""

import os

import pytest

from pygpu import _cache, _libs, rawkernel

SRC = 'extern "C" __global__ void k(float *x) { x[0] = 1.0f; }'


class FakeNvrtc:
    def __init__(self, monkeypatch, loaded_from=None):
        self.loads, self.compiles = [], []
        self.loaded_from = loaded_from  # what the loader gives for a bare soname
        monkeypatch.setattr(rawkernel._core, "_nvrtc_load", self.load, raising=False)
        monkeypatch.setattr(rawkernel._core, "_nvrtc_compile", self.compile, raising=False)
        real_record = _libs.record
        monkeypatch.setattr(_libs, "record", lambda name, path: real_record(
            name, path if os.path.isabs(path) else self.loaded_from))

    def load(self, path):
        if not os.path.isabs(path) and self.loaded_from is None:
            raise OSError(f"cannot load {path}")
        self.loads.append(path)
        return (13, 0)

    def compile(self, source, name, options, names):
        self.compiles.append(options)
        return b"cubin of " + source.encode(), "", tuple(f"_Z{n}" for n in names)


def fresh_process(monkeypatch):
    monkeypatch.setattr(rawkernel, "_nvrtc_version", None)
    monkeypatch.setattr(rawkernel, "_nvrtc_file", None)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PYGPU_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("PYGPU_NVRTC", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(_libs, "_loaded", {})
    fresh_process(monkeypatch)
    return tmp_path / "cache"


def library(path, content=b"\x7fELF one version"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def test_a_cached_kernel_is_found_without_loading_nvrtc(cache, tmp_path, monkeypatch):
    lib = library(tmp_path / "cuda" / "libnvrtc.so.13")
    monkeypatch.setenv("PYGPU_NVRTC", str(lib))
    nvrtc = FakeNvrtc(monkeypatch)
    image, _, _ = rawkernel.compile_cuda(SRC, arch="sm_90")
    assert image == b"cubin of " + SRC.encode()
    assert (nvrtc.loads, len(nvrtc.compiles)) == ([str(lib)], 1)
    fresh_process(monkeypatch)
    assert rawkernel.compile_cuda(SRC, arch="sm_90")[0] == image
    assert (len(nvrtc.loads), len(nvrtc.compiles)) == (1, 1)  # neither loaded nor compiled
    assert rawkernel._nvrtc_version is None
    # in the same process, another arch or other options are other kernels
    rawkernel.compile_cuda(SRC, arch="sm_80")
    rawkernel.compile_cuda(SRC, options=("-DX=1",), arch="sm_90")
    assert (len(nvrtc.loads), len(nvrtc.compiles)) == (2, 3)


@pytest.mark.parametrize("change", ["rewritten", "same size, new time", "symlink retargeted"])
def test_another_nvrtc_file_is_another_key(cache, tmp_path, monkeypatch, change):
    real = library(tmp_path / "cuda" / "libnvrtc.so.13.0.1")
    link = tmp_path / "cuda" / "libnvrtc.so.13"
    link.symlink_to(real.name)
    monkeypatch.setenv("PYGPU_NVRTC", str(link))
    nvrtc = FakeNvrtc(monkeypatch)
    rawkernel.compile_cuda(SRC, arch="sm_90")
    fresh_process(monkeypatch)
    rawkernel.compile_cuda(SRC, arch="sm_90")
    assert len(nvrtc.compiles) == 1
    if change == "rewritten":
        library(real, b"\x7fELF another version, longer")
    elif change == "same size, new time":
        st = real.stat()
        os.utime(real, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    else:
        library(tmp_path / "cuda" / "libnvrtc.so.13.1.0", b"\x7fELF one version")
        link.unlink()
        link.symlink_to("libnvrtc.so.13.1.0")
    fresh_process(monkeypatch)
    rawkernel.compile_cuda(SRC, arch="sm_90")
    assert len(nvrtc.compiles) == 2, f"{change}: the old NVRTC's cubin was used"
    fresh_process(monkeypatch)
    rawkernel.compile_cuda(SRC, arch="sm_90")
    assert len(nvrtc.compiles) == 2


def test_a_bare_soname_is_found_again_through_the_cache(cache, tmp_path, monkeypatch):
    # no PYGPU_NVRTC: the search asks the loader for libnvrtc.so.13 first
    lib = library(tmp_path / "cuda-13.0" / "lib" / "libnvrtc.so.13")
    nvrtc = FakeNvrtc(monkeypatch, loaded_from=str(lib))
    rawkernel.compile_cuda(SRC, arch="sm_90")
    assert nvrtc.loads[0] == "libnvrtc.so.13" and _libs.loaded() == {"nvrtc": str(lib)}
    assert [p.suffix for p in cache.iterdir() if p.name.startswith("nvrtc-")] == [".where"]
    fresh_process(monkeypatch)
    rawkernel.compile_cuda(SRC, arch="sm_90")
    assert (len(nvrtc.loads), len(nvrtc.compiles)) == (1, 1)
    # the library rewritten in place: a new key, without asking the loader first
    library(lib, b"\x7fELF a newer build")
    fresh_process(monkeypatch)
    rawkernel.compile_cuda(SRC, arch="sm_90")
    assert (len(nvrtc.loads), len(nvrtc.compiles)) == (2, 2)


def test_another_loader_state_loads_nvrtc_to_learn_its_file(cache, tmp_path, monkeypatch):
    lib = library(tmp_path / "a" / "libnvrtc.so.13")
    other = library(tmp_path / "b" / "libnvrtc.so.13", b"\x7fELF another NVRTC")
    nvrtc = FakeNvrtc(monkeypatch, loaded_from=str(lib))
    rawkernel.compile_cuda(SRC, arch="sm_90")
    # LD_LIBRARY_PATH now puts another NVRTC first: the note from before is not used
    monkeypatch.setenv("LD_LIBRARY_PATH", str(other.parent))
    nvrtc.loaded_from = str(other)
    fresh_process(monkeypatch)
    rawkernel.compile_cuda(SRC, arch="sm_90")
    assert (len(nvrtc.loads), len(nvrtc.compiles)) == (2, 2)
    assert _libs.loaded() == {"nvrtc": str(other)}
    # and back: the first NVRTC's cubin is found once it is loaded again
    monkeypatch.delenv("LD_LIBRARY_PATH")
    nvrtc.loaded_from = str(lib)
    fresh_process(monkeypatch)
    rawkernel.compile_cuda(SRC, arch="sm_90")
    assert len(nvrtc.compiles) == 2


def test_a_wrong_guess_stores_under_the_nvrtc_that_compiled(cache, tmp_path, monkeypatch):
    lib = library(tmp_path / "a" / "libnvrtc.so.13")
    other = library(tmp_path / "b" / "libnvrtc.so.13", b"\x7fELF another NVRTC")
    nvrtc = FakeNvrtc(monkeypatch, loaded_from=str(lib))
    rawkernel.compile_cuda(SRC, arch="sm_90")
    # the loader now gives another file under the same loader state (a file
    # dropped into a directory of its search): the note names the old one
    nvrtc.loaded_from = str(other)
    fresh_process(monkeypatch)
    second = SRC.replace("1.0f", "2.0f")
    rawkernel.compile_cuda(second, arch="sm_90")  # guessed lib, missed, loaded other
    assert rawkernel._nvrtc_file == _libs.identity(other)
    fresh_process(monkeypatch)
    rawkernel.compile_cuda(second, arch="sm_90")  # the note now names other
    assert (len(nvrtc.loads), len(nvrtc.compiles)) == (2, 2)
    assert rawkernel._nvrtc_version is None


def test_changed_device_headers_are_another_key(cache, tmp_path, monkeypatch):
    include = tmp_path / "include"
    header = library(include / "pygpu" / "ufunc.h", b"// one\n")
    monkeypatch.setattr(rawkernel, "_INCLUDE", include)
    rawkernel._headers_digest.cache_clear()
    monkeypatch.setattr(rawkernel, "_headers_digest",
                        rawkernel._headers_digest.__wrapped__)
    monkeypatch.setenv("PYGPU_NVRTC", str(library(tmp_path / "libnvrtc.so.13")))
    nvrtc = FakeNvrtc(monkeypatch)
    rawkernel.compile_cuda(SRC, arch="sm_90")
    rawkernel.compile_cuda(SRC, arch="sm_90")
    assert len(nvrtc.compiles) == 1
    header.write_bytes(b"// two\n")
    rawkernel.compile_cuda(SRC, arch="sm_90")
    library(include / "pygpu" / "extra.h", b"// new\n")
    rawkernel.compile_cuda(SRC, arch="sm_90")
    assert len(nvrtc.compiles) == 3


def test_template_names_come_back_from_the_cache(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("PYGPU_NVRTC", str(library(tmp_path / "libnvrtc.so.13")))
    nvrtc = FakeNvrtc(monkeypatch)
    first = rawkernel.compile_cuda(SRC, arch="sm_90", name_expressions=("f<int>", "g"))
    fresh_process(monkeypatch)
    again = rawkernel.compile_cuda(SRC, arch="sm_90", name_expressions=("f<int>", "g"))
    assert again == (first[0], "", ["_Zf<int>", "_Zg"]) and len(nvrtc.compiles) == 1


def test_identity_names_the_real_file(tmp_path):
    real = library(tmp_path / "libx.so.1.2")
    (tmp_path / "libx.so.1").symlink_to(real.name)
    ident = _libs.identity(str(tmp_path / "libx.so.1"))
    st = real.stat()
    assert ident == (str(real), st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)
    assert _libs.identity(str(tmp_path / "missing.so")) is None
    assert _libs.identity(str(tmp_path)) is None  # a directory is no library


def test_loader_state_follows_the_search_settings(monkeypatch, tmp_path):
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    caller = library(tmp_path / "_core.so")
    base = _libs.loader_state("nvrtc", str(caller))
    assert _libs.loader_state("nvrtc", str(caller)) == base
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    with_path = _libs.loader_state("nvrtc", str(caller))
    assert with_path != base
    library(tmp_path / "libnvrtc.so.13")  # a file added to a searched directory
    os.utime(tmp_path, ns=(0, tmp_path.stat().st_mtime_ns + 10**9))
    assert _libs.loader_state("nvrtc", str(caller)) != with_path
    monkeypatch.delenv("LD_LIBRARY_PATH")
    for var, value in (("CUDA_HOME", "/opt/cuda"), ("PYGPU_NVRTC", "/x/libnvrtc.so")):
        monkeypatch.setenv(var, value)
        assert _libs.loader_state("nvrtc", str(caller)) != base
        monkeypatch.delenv(var)
    library(caller, b"rebuilt, another RUNPATH")
    assert _libs.loader_state("nvrtc", str(caller)) != base


def test_the_note_is_read_through_the_checked_cache(cache, tmp_path, monkeypatch):
    lib = library(tmp_path / "a" / "libnvrtc.so.13")
    nvrtc = FakeNvrtc(monkeypatch, loaded_from=str(lib))
    rawkernel.compile_cuda(SRC, arch="sm_90")
    note = next(cache.glob("nvrtc-*.where"))
    assert _cache.load(note.name) == os.fsencode(lib)
    note.write_bytes(b"garbage without a trailer")  # not trusted: NVRTC is loaded
    fresh_process(monkeypatch)
    rawkernel.compile_cuda(SRC, arch="sm_90")
    assert (len(nvrtc.loads), len(nvrtc.compiles)) == (2, 1)
    assert _cache.load(note.name) == os.fsencode(lib)  # and the note written again
