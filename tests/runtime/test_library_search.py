"""pygpu finds NVIDIA's libraries (NVRTC, cuBLAS) by absolute path or by the
loader's own search only: never in the current directory, through a relative
setting or a relative sys.path entry (issue 26). pygpu/_libs.py owns the
search; these tests plant libraries where it must not look, check that it
still finds NVIDIA's wheels in site-packages, and that what was loaded is
reported."""

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import textwrap

import pytest
from conftest import ON_SIMULATOR

import pygpu
from pygpu import _libs, cuda

SETTINGS = ("PYGPU_NVRTC", "PYGPU_CUBLAS", "CUDA_HOME", "CUDA_PATH")
# where a library planted in the current directory would sit, if it were searched
PLANTED = ("nvidia/cu13/lib/libnvrtc.so.13", "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
           "nvidia/cu13/lib/libcublas.so.13", "nvidia/cublas/lib/libcublas.so.13",
           "lib64/libnvrtc.so.13", "lib64/libcublas.so.13",
           "mine/libnvrtc.so.13", "mine/libcublas.so.13")
# the libraries planted in a fake site-packages, as NVIDIA's wheels lay them out
WHEELS = ("nvidia/cu13/lib/libnvrtc.so.13", "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
          "nvidia/cu13/lib/libcublas.so.13", "nvidia/cublas/lib/libcublas.so.12")


@pytest.fixture
def no_settings(monkeypatch):
    for var in SETTINGS:
        monkeypatch.delenv(var, raising=False)


def plant(root, paths, content=b""):
    for rel in paths:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def everything(tried=None):
    return list(_libs.nvrtc_candidates(tried)) + list(_libs.cublas_candidates(tried))


def assert_none_under(found, root):
    """Each candidate is absolute or a bare soname, and none lies under `root`."""
    root = os.path.realpath(root)
    for path in found:
        if os.path.isabs(path):
            assert not os.path.realpath(path).startswith(root + os.sep), path
        else:
            assert os.sep not in path, path


def only_absolute_sys_path():
    return os.pathsep.join(p for p in sys.path if os.path.isabs(p))


def compiler():
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler to build a shared object")
    return cc


def shared_object(tmp_path, name, source, *flags):
    """Build `source` (C) into tmp_path/name."""
    src = tmp_path / f"{name}.c"
    src.write_text(textwrap.dedent(source))
    out = tmp_path / name
    r = subprocess.run([compiler(), "-shared", "-fPIC", "-o", str(out), str(src), *flags],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


# ---- the current directory and relative settings are never searched --------------------

@pytest.mark.parametrize("entry", ["", ".", "nvidia/.."])
def test_a_relative_sys_path_entry_is_never_searched(entry, tmp_path, monkeypatch, no_settings):
    plant(tmp_path, PLANTED)
    monkeypatch.chdir(tmp_path)
    # a relative entry (the current directory under `python -c`), and an
    # absolute one that is not site-packages (a script's directory)
    monkeypatch.setattr(sys, "path", [entry, str(tmp_path), *sys.path])
    found = everything()
    assert found, "the search yields at least the loader's sonames"
    assert "libnvrtc.so.13" in found and "libcublas.so.13" in found
    assert_none_under(found, tmp_path)
    assert not any(p.startswith(("nvidia", "./", "lib64")) for p in found)


def test_relative_settings_are_refused_and_say_so(tmp_path, monkeypatch, no_settings):
    plant(tmp_path, PLANTED)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYGPU_NVRTC", "mine/libnvrtc.so.13")
    monkeypatch.setenv("PYGPU_CUBLAS", "libcublas.so.13")  # a bare name is not absolute
    monkeypatch.setenv("CUDA_HOME", ".")
    monkeypatch.setenv("CUDA_PATH", "lib64/..")
    tried = []
    found = everything(tried)
    assert_none_under(found, tmp_path)
    assert "mine/libnvrtc.so.13" not in found
    for var, value in [("PYGPU_NVRTC", "mine/libnvrtc.so.13"),
                       ("PYGPU_CUBLAS", "libcublas.so.13"),
                       ("CUDA_HOME", "."), ("CUDA_PATH", "lib64/..")]:
        assert f"{var}={value!r} was not used: it must be an absolute path" in tried


def test_an_absolute_setting_comes_first_and_zero_turns_a_library_off(
        tmp_path, monkeypatch, no_settings):
    mine = str(tmp_path / "libnvrtc.so.13")
    monkeypatch.setenv("PYGPU_NVRTC", mine)
    tried = []
    assert list(_libs.nvrtc_candidates(tried))[0] == mine and tried == []
    monkeypatch.setenv("PYGPU_CUBLAS", "0")
    assert list(_libs.cublas_candidates(tried)) == [] and tried == ["PYGPU_CUBLAS=0"]
    assert _libs.disabled("cublas") and not _libs.disabled("nvrtc")


def test_a_library_planted_in_the_current_directory_is_never_loaded(tmp_path):
    """A real shared object whose constructor writes a marker, planted wherever
    the old search looked (the current directory under `python -c`, relative
    settings): the search, and loading every candidate it gives, never runs it."""
    build = tmp_path / "build"
    build.mkdir()
    fake = shared_object(build, "planted.so", """
        #include <stdio.h>
        #include <stdlib.h>
        __attribute__((constructor)) static void planted(void)
        {
            const char *marker = getenv("PLANTED_MARKER");
            FILE *f = marker != NULL ? fopen(marker, "a") : NULL;
            if (f != NULL) {
                fputs("planted library ran\\n", f);
                fclose(f);
            }
        }
        """)
    cwd = tmp_path / "cwd"
    plant(cwd, PLANTED, fake.read_bytes())
    marker = tmp_path / "marker"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYGPU_SIM")}
    env.update(PLANTED_MARKER=str(marker), PYTHONPATH=only_absolute_sys_path(),
               PYGPU_NVRTC="mine/libnvrtc.so.13", PYGPU_CUBLAS="mine/libcublas.so.13",
               CUDA_HOME=".", CUDA_PATH="lib64/..")

    # the planted library is live: loaded by its relative path, it runs
    control = subprocess.run([sys.executable, "-c", "import ctypes; ctypes.CDLL("
                              "'nvidia/cu13/lib/libnvrtc.so.13')"],
                             cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert control.returncode == 0, control.stderr
    assert marker.read_text() == "planted library ran\n"
    marker.unlink()

    r = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import ctypes, json, sys
        import pygpu
        from pygpu import _libs, blas, rawkernel
        assert sys.path[0] == "", sys.path[:3]  # -c: the current directory is searched
        tried = []
        found = list(_libs.nvrtc_candidates(tried)) + list(_libs.cublas_candidates(tried))
        for path in found:  # load every candidate, not only the first that loads
            try:
                ctypes.CDLL(path)
            except OSError:
                pass
        try:  # and as pygpu loads them
            rawkernel.nvrtc_version()
        except (RuntimeError, NotImplementedError):
            pass
        try:
            blas.cublas_version()
        except pygpu.NoDeviceError:
            pass
        print(json.dumps({"found": found, "tried": tried}))
        """)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert not marker.exists(), "a library planted in the current directory was loaded"
    out = json.loads(r.stdout.splitlines()[-1])
    assert "libnvrtc.so.13" in out["found"] and "libcublas.so.13" in out["found"]
    assert_none_under(out["found"], cwd)
    assert "PYGPU_NVRTC='mine/libnvrtc.so.13' was not used: it must be an absolute path" \
        in out["tried"]


def test_cublas_is_looked_for_through_the_one_search_and_recorded(tmp_path, monkeypatch,
                                                                   no_settings):
    from pygpu import _core, blas
    plant(tmp_path, PLANTED)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    monkeypatch.setenv("PYGPU_CUBLAS", "mine/libcublas.so.13")
    monkeypatch.setattr(_libs, "_loaded", {})
    monkeypatch.setattr(blas, "_loaded", None)  # not tried yet in this process
    monkeypatch.setattr(blas, "_driver_major", lambda: None)
    monkeypatch.setattr(_core, "_blas_available", lambda: True)
    asked = []

    def fail(path):
        asked.append(path)
        raise OSError(f"cannot load cuBLAS from {path}: not this one")

    monkeypatch.setattr(_core, "_blas_load", fail)
    assert blas.cublas_path() is None
    assert asked == list(_libs.cublas_candidates()) and "libcublas.so.13" in asked
    assert_none_under(asked, tmp_path)
    why = blas.matmul_backend()
    assert "PYGPU_CUBLAS='mine/libcublas.so.13' was not used: it must be an absolute path" in why
    assert _libs.loaded() == {}

    mine = "/opt/mine/libcublas.so.13"
    monkeypatch.setenv("PYGPU_CUBLAS", mine)
    monkeypatch.setattr(blas, "_loaded", None)
    monkeypatch.setattr(_core, "_blas_load", lambda path: (13, 0, 2))  # the first it is given
    assert blas.cublas_path() == mine and _libs.loaded() == {"cublas": mine}
    assert blas.matmul_backend().startswith(f"cuBLAS 13.0.2 (loaded from {mine}")


# ---- NVIDIA's wheels in site-packages are still found ------------------------------------

@pytest.fixture
def site_packages(tmp_path, monkeypatch):
    """A fake site-packages holding NVIDIA's wheel layout, the only one the
    interpreter has (the user site off)."""
    where = tmp_path / "site-packages"
    plant(where, WHEELS)
    monkeypatch.setattr(site, "getsitepackages", lambda: [str(where)])
    monkeypatch.setattr(site, "ENABLE_USER_SITE", False)
    monkeypatch.setattr(sysconfig, "get_paths",
                        lambda *a, **k: {"purelib": str(where), "platlib": str(where)})
    return where


def test_wheels_in_site_packages_are_found(site_packages, no_settings):
    nvrtc, cublas = list(_libs.nvrtc_candidates()), list(_libs.cublas_candidates())
    for rel in WHEELS:
        assert str(site_packages / rel) in (nvrtc if "nvrtc" in rel else cublas), rel
    assert not any("cublas" in p for p in nvrtc) and not any("nvrtc" in p for p in cublas)
    assert _libs.site_dirs() == [str(site_packages)]


def test_the_order_is_setting_sonames_toolkit_wheels(site_packages, tmp_path, monkeypatch,
                                                     no_settings):
    home = tmp_path / "cuda"
    plant(home, ["lib64/libcublas.so.12", "lib64/libcublas.so.13",
                 "lib64/libcublas.so.13.1.0", "lib64/libcublas.so.9"])
    monkeypatch.setenv("PYGPU_CUBLAS", "/opt/mine/libcublas.so.13")
    monkeypatch.setenv("CUDA_HOME", str(home))
    found = list(_libs.cublas_candidates())
    assert found[:3] == ["/opt/mine/libcublas.so.13", "libcublas.so.13", "libcublas.so.12"]
    in_home = [p for p in found if p.startswith(str(home))]
    assert in_home == [str(home / "lib64" / f"libcublas.so.{v}")
                       for v in ("13.1.0", "13", "12", "9")]  # newest first
    wheels = [p for p in found if p.startswith(str(site_packages))]
    assert wheels == [str(site_packages / "nvidia/cu13/lib/libcublas.so.13"),
                      str(site_packages / "nvidia/cublas/lib/libcublas.so.12")]
    assert found.index(in_home[-1]) < found.index(wheels[0])
    assert len(found) == len(set(found))


def test_site_dirs_keep_only_absolute_ones(tmp_path, monkeypatch):
    where = str(tmp_path)
    monkeypatch.setattr(site, "getsitepackages", lambda: ["", ".", "lib/site", where, where])
    monkeypatch.setattr(site, "ENABLE_USER_SITE", True)
    monkeypatch.setattr(site, "getusersitepackages", lambda: "user/site")
    monkeypatch.setattr(sysconfig, "get_paths", lambda *a, **k: {"purelib": "", "platlib": "."})
    assert _libs.site_dirs() == [where]


# ---- what was loaded is reported -----------------------------------------------------------

def test_record_gives_the_file_the_loader_took_for_a_soname(tmp_path):
    libdir = tmp_path / "lib"
    libdir.mkdir()
    shared_object(libdir, "libpgfake.so.1.2.3", "int pgfake(void) { return 7; }\n",
                  "-Wl,-soname,libpgfake.so.1")
    (libdir / "libpgfake.so.1").symlink_to("libpgfake.so.1.2.3")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import ctypes
        from pygpu import _libs
        assert _libs.loaded() == {}
        print(_libs.record("ghost", "libghost.so.7"))  # not loaded: said as given
        assert ctypes.CDLL("libpgfake.so.1").pgfake() == 7
        print(_libs.record("pgfake", "libpgfake.so.1"))
        print(_libs.record("direct", "/opt/x/libdirect.so.2"))
        print(_libs.summary())
        """)], env=dict(os.environ, LD_LIBRARY_PATH=str(libdir),
                        PYTHONPATH=only_absolute_sys_path()),
        capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-3000:]
    real = os.path.realpath(libdir / "libpgfake.so.1.2.3")
    assert r.stdout.splitlines() == [
        "libghost.so.7", real, "/opt/x/libdirect.so.2",
        f"ghost libghost.so.7, pgfake {real}, direct /opt/x/libdirect.so.2"]


def test_loading_nvrtc_records_its_file(tmp_path):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import json
        from pygpu import _libs, rawkernel
        try:
            rawkernel.nvrtc_version()
        except (RuntimeError, NotImplementedError) as exc:  # none, or no CUDA build
            print(json.dumps({"skip": str(exc)}))
        else:
            print(json.dumps(_libs.loaded()))
        """)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("PYGPU_SIM")},
             "PYTHONPATH": only_absolute_sys_path()})
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.splitlines()[-1])
    if "skip" in out:
        pytest.skip(f"NVRTC cannot be loaded here: {out['skip']}")
    assert list(out) == ["nvrtc"]
    assert os.path.isabs(out["nvrtc"]) and os.path.isfile(out["nvrtc"])
    assert os.path.basename(out["nvrtc"]).startswith("libnvrtc")


def test_detect_prints_each_library_loaded(capsys, monkeypatch):
    monkeypatch.setattr(_libs, "_loaded", dict(_libs._loaded))  # as it was, after
    assert cuda.detect()
    line = capsys.readouterr().out.splitlines()[-1]
    assert line == f"libraries: {_libs.summary()}"
    cublas = pygpu.blas.cublas_path()  # detect() loads cuBLAS where it can
    if ON_SIMULATOR:
        assert cublas is None and line == "libraries: none loaded yet"
    elif cublas is not None:
        assert f"cublas {cublas}" in line and os.path.isabs(cublas)
    _libs.record("nvrtc", "/usr/local/cuda/lib64/libnvrtc.so.13")
    assert cuda.detect()
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith("libraries: ")
    assert "nvrtc /usr/local/cuda/lib64/libnvrtc.so.13" in line.split(": ", 1)[1].split(", ")


def test_python_dash_m_pygpu_prints_the_libraries():
    r = subprocess.run([sys.executable, "-m", "pygpu"], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ))
    assert r.returncode == 0, r.stderr[-3000:]
    lines = [line for line in r.stdout.splitlines() if line.startswith("libraries: ")]
    assert len(lines) == 1
    listed = lines[0].removeprefix("libraries: ")
    if listed != "none loaded yet":
        for entry in listed.split(", "):
            name, path = entry.split(" ", 1)
            assert name in _libs.LIBRARIES and os.path.isfile(path), entry
