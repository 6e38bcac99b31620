"""pygpu.fft: numpy.fft's answers, on the simulator's NumPy stand-in, on the
cuFFT path run against a NumPy stand-in for libcufft (the simulator's device
memory is host memory), and on a GPU (marked gpu). cuFFT is loaded at first
use only, and its absence is said with how to install it."""

import ctypes
import os

import numpy as np
import pytest
from conftest import ON_SIMULATOR

import pygpu
from pygpu import _libs
from pygpu import fft as pf

RNG = np.random.default_rng(1125)


def rand(shape, dtype=np.float64):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def close(got, want, tol=None):
    got = got.copy_to_host() if isinstance(got, pygpu.DeviceArray) else got
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if tol is None:
        tol = 1e-4 if want.dtype in (np.complex64, np.float32, np.float16) else 1e-10
    if want.dtype == np.float16:
        tol = 1e-2
    err = np.max(np.abs(got.astype(np.complex128) - want), initial=0)
    assert err <= tol * max(1.0, np.max(np.abs(want), initial=0)), err


def d(x):
    return pygpu.asarray(x)


# ---- a NumPy stand-in for libcufft, on the simulator's memory ---------------------------------

def at(ptr, dtype, shape):
    dtype = np.dtype(dtype)
    nbytes = max(int(np.prod(shape)) * dtype.itemsize, 1)
    return np.ndarray(shape, dtype, (ctypes.c_char * nbytes).from_address(ptr))


class FakeCufft:
    """cuFFT's plans and transforms computed by NumPy on the pointers given
    (unscaled, as cuFFT's), the input of a complex-to-real transform
    overwritten as cuFFT may; records the calls."""

    TYPES = {0x29: ("c2c", np.complex64, np.complex64), 0x69: ("c2c", np.complex128,
                                                               np.complex128),
             0x2A: ("r2c", np.float32, np.complex64), 0x6A: ("r2c", np.float64, np.complex128),
             0x2C: ("c2r", np.complex64, np.float32), 0x6C: ("c2r", np.complex128, np.float64)}

    def __init__(self):
        self.calls, self.plans, self.destroyed, self.next = [], {}, [], 1
        self.work = {}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args):
            self.calls.append(name)
            return getattr(self, "_" + name[len("cufft"):])(*args)
        return call

    def _GetVersion(self, v):  # noqa: N802
        v._obj.value = 12000
        return 0

    def _Create(self, h):  # noqa: N802
        h._obj.value = self.next
        self.next += 1
        return 0

    def _SetAutoAllocation(self, h, on):  # noqa: N802
        assert on == 0
        return 0

    def _MakePlanMany64(self, h, rank, n, inembed, istride, idist, onembed, ostride,  # noqa: N802
                        odist, kind, batch, work):
        assert inembed is None and onembed is None  # contiguous layouts only
        self.plans[h] = (tuple(n[:rank]), kind, batch)
        work._obj.value = 256
        return 0

    def _SetWorkArea(self, h, ptr):  # noqa: N802
        self.work[h] = ptr
        return 0

    def _SetStream(self, h, stream):  # noqa: N802
        return 0

    def _Destroy(self, h):  # noqa: N802
        self.destroyed.append(h)
        return 0

    def _exec(self, h, i, o, direction=None):
        n, kind, batch = self.plans[h]
        assert self.work.get(h), "no work area set"
        what, tin, tout = self.TYPES[kind]
        axes = tuple(range(1, len(n) + 1))
        half = n[:-1] + (n[-1] // 2 + 1,)
        if what == "c2c":
            x = at(i, tin, (batch, *n))
            y = np.fft.fftn(x, axes=axes) if direction == -1 else \
                np.fft.ifftn(x, axes=axes) * np.prod(n)
            at(o, tout, (batch, *n))[...] = y
        elif what == "r2c":
            at(o, tout, (batch, *half))[...] = np.fft.rfftn(at(i, tin, (batch, *n)), axes=axes)
        else:
            x = at(i, tin, (batch, *half))
            at(o, tout, (batch, *n))[...] = np.fft.irfftn(x, s=n, axes=axes) * np.prod(n)
            x[...] = np.nan  # cuFFT may overwrite a complex-to-real input
        return 0

    def _ExecC2C(self, h, i, o, direction):  # noqa: N802
        return self._exec(h, i, o, direction)

    _ExecZ2Z = _ExecC2C

    def _ExecR2C(self, h, i, o):  # noqa: N802
        return self._exec(h, i, o)

    _ExecD2Z = _ExecC2R = _ExecZ2D = _ExecR2C


@pytest.fixture(params=["host", "cufft"])
def path(request, monkeypatch):
    """Each test twice: NumPy on a host copy (the simulator's path), and the
    cuFFT path against FakeCufft (on a GPU: the real library)."""
    if request.param == "cufft" and ON_SIMULATOR:
        fake = FakeCufft()
        monkeypatch.setattr(pf, "_lib", fake)
        monkeypatch.setattr(pf, "_plans", type(pf._plans)())
        monkeypatch.setattr(pf, "_host_path", lambda a: False)
        return fake
    if request.param == "host" and not ON_SIMULATOR:
        monkeypatch.setattr(pf, "_host_path", lambda a: True)
    return None


DTYPES = [np.float32, np.float64, np.complex64, np.complex128, np.int32, np.float16]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_fft_and_ifft_match_numpy(path, dtype, norm):
    x = rand((3, 8), dtype)
    for n in (None, 5, 12):
        close(pf.fft(d(x), n, norm=norm), np.fft.fft(x, n, norm=norm))
        close(pf.ifft(d(x), n, axis=0, norm=norm), np.fft.ifft(x, n, axis=0, norm=norm))
    if path is not None:
        assert any(c.startswith("cufftExec") for c in path.calls)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.float16])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_rfft_irfft_hfft_match_numpy(path, dtype, norm):
    x = rand((4, 10), dtype)
    for n in (None, 7, 16):
        close(pf.rfft(d(x), n, norm=norm), np.fft.rfft(x, n, norm=norm))
        close(pf.rfft(d(x), n, axis=0, norm=norm), np.fft.rfft(x, n, axis=0, norm=norm))
    c = np.fft.rfft(x).astype(np.complex64 if dtype in (np.float32, np.float16)
                              else np.complex128)
    c[:, 0] += 1j  # imaginary parts that the inverse ignores, as pocketfft
    for n in (None, 9, 18, 5):
        close(pf.irfft(d(c), n, norm=norm), np.fft.irfft(c, n, norm=norm))
        close(pf.hfft(d(c), n, norm=norm), np.fft.hfft(c, n, norm=norm))
        close(pf.irfft(d(c), n, axis=0, norm=norm), np.fft.irfft(c, n, axis=0, norm=norm))
    close(pf.ihfft(d(x), norm=norm), np.fft.ihfft(x, norm=norm))
    close(pf.irfft(d(x), norm=norm), np.fft.irfft(x, norm=norm))


@pytest.mark.parametrize("axes,s", [(None, None), ((0, 2), None), ((-1, 0), (6, 3)),
                                    ((1,), (9,)), ((0, 1, 2), (3, 5, 6)), ((2, 2), None),
                                    ((0, 1, 2, 3), (2, 4, 4, 3))])
def test_nd_transforms_match_numpy(path, axes, s):
    x = rand((2, 4, 5, 6), np.complex128)
    r = rand((2, 4, 5, 6))
    kw = {"axes": axes, "s": s}
    close(pf.fftn(d(x), **kw), np.fft.fftn(x, **kw))
    close(pf.ifftn(d(x), norm="ortho", **kw), np.fft.ifftn(x, norm="ortho", **kw))
    close(pf.rfftn(d(r), **kw), np.fft.rfftn(r, **kw))
    close(pf.irfftn(d(x), **kw), np.fft.irfftn(x, **kw))


def test_2d_transforms_and_views_match_numpy(path):
    x = rand((6, 8, 10), np.complex64)
    close(pf.fft2(d(x)), np.fft.fft2(x))
    close(pf.ifft2(d(x), axes=(0, 2)), np.fft.ifft2(x, axes=(0, 2)))
    r = rand((6, 8, 10), np.float32)
    close(pf.rfft2(d(r)), np.fft.rfft2(r))
    close(pf.irfft2(d(x), s=(8, 7)), np.fft.irfft2(x, s=(8, 7)))
    view = d(x)[::2, 1:, ::-1]  # strided, offset, reversed
    close(pf.fft(view), np.fft.fft(x[::2, 1:, ::-1]))
    close(pf.fftn(pygpu.matrix_transpose(d(x))), np.fft.fftn(np.swapaxes(x, -1, -2)))


def test_the_input_is_left_alone_and_out_is_filled(path):
    c = rand((4, 9), np.complex128)
    dc = d(c)
    pf.irfft(dc)
    pf.fft(dc)
    close(dc, c)
    out = pygpu.empty((4, 9), dtype="complex128")
    assert pf.fft(dc, out=out) is out
    close(out, np.fft.fft(c))


def test_plans_are_cached_and_old_ones_destroyed(monkeypatch):
    if not ON_SIMULATOR:
        pytest.skip("counts FakeCufft's plans on the simulator")
    fake = FakeCufft()
    monkeypatch.setattr(pf, "_lib", fake)
    monkeypatch.setattr(pf, "_plans", type(pf._plans)())
    monkeypatch.setattr(pf, "_host_path", lambda a: False)
    monkeypatch.setattr(pf, "PLAN_CACHE_SIZE", 3)
    x = d(rand(16, np.complex64))
    for _ in range(3):
        pf.fft(x)
        pf.ifft(x)
    assert fake.calls.count("cufftMakePlanMany64") == 1  # forward and inverse share one
    for n in (4, 5, 6, 7):
        pf.fft(x, n)
    assert fake.calls.count("cufftMakePlanMany64") == 5
    assert len(fake.destroyed) == 2 and len(pf._plans) == 3
    s = pygpu.cuda.stream()
    with s:
        pf.fft(x, 7)
    assert fake.calls[-3:] == ["cufftSetWorkArea", "cufftSetStream", "cufftExecC2C"]
    assert pf.cufft_version() == 12000


def test_bad_arguments_raise_as_numpy(path):
    x = d(rand(8))
    with pytest.raises(ValueError, match="Invalid norm value"):
        pf.fft(x, norm="sideways")
    with pytest.raises(ValueError, match=r"Invalid number of FFT data points \(0\)"):
        pf.fft(x, 0)
    with pytest.raises(IndexError):  # NumPy: IndexError; pygpu: AxisError, one of them
        pf.fft(x, axis=1)
    with pytest.raises(TypeError, match="real input"):
        pf.rfft(d(rand(8, np.complex64)))
    with pytest.raises(TypeError, match="pygpu.asarray"):
        pf.fft(np.ones(4))
    with pytest.raises(ValueError, match="Shape and axes"):
        pf.fftn(d(rand((2, 2))), s=(2,), axes=(0, 1))


def test_frequencies_and_shifts_match_numpy():
    close(pf.fftfreq(8, 0.5), np.fft.fftfreq(8, 0.5))
    close(pf.fftfreq(7, dtype=np.float32), np.fft.fftfreq(7).astype(np.float32))
    close(pf.rfftfreq(9, 2.0), np.fft.rfftfreq(9, 2.0))
    x = rand((5, 6))
    for axes in (None, 0, 1, (0, 1), [1]):
        close(pf.fftshift(d(x), axes), np.fft.fftshift(x, axes))
        close(pf.ifftshift(d(x), axes), np.fft.ifftshift(x, axes))


def test_numpy_functions_dispatch_through_the_numpy_table(monkeypatch):
    from pygpu._ops import methods

    monkeypatch.setattr(methods, "ARRAY_FUNCTIONS", {**methods.ARRAY_FUNCTIONS, **pf.NUMPY})
    x = rand((4, 6), np.complex64)
    close(np.fft.fft(d(x)), np.fft.fft(x))
    close(np.fft.irfftn(d(x)), np.fft.irfftn(x))
    close(np.fft.fftshift(d(x)), np.fft.fftshift(x))
    assert all(getattr(pf, f.__name__) is impl for f, impl in pf.NUMPY.items())


# ---- cuFFT: loaded at first use, through the one search --------------------------------------

def test_cufft_is_searched_for_like_the_other_libraries(monkeypatch):
    for var in ("PYGPU_CUFFT", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    found = list(_libs.cufft_candidates())
    assert found[:2] == ["libcufft.so.12", "libcufft.so.11"]
    assert all(os.path.isabs(p) or os.sep not in p for p in found)
    assert not any("cufftw" in p for p in found)


def test_a_missing_cufft_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(_libs, "_ctypes_libs", {})
    monkeypatch.setattr(pf, "_lib", None)
    monkeypatch.setattr(pf, "_host_path", lambda a: False)
    monkeypatch.setattr(_libs, "candidates", lambda name, tried=None: iter(
        ["/nonexistent/libcufft.so.12"]))
    with pytest.raises(_libs.MissingLibraryError) as e:
        pf.fft(d(rand(8, np.complex64)))
    msg = str(e.value)
    assert "cuFFT" in msg and "nvidia-cufft-cu13" in msg and "CUDA toolkit" in msg
    assert "PYGPU_CUFFT" in msg and "/nonexistent/libcufft.so.12" in msg


def test_the_declared_signatures_are_the_header():
    import re

    path = "/usr/local/cuda/include/cufft.h"
    if not os.path.exists(path):
        pytest.skip(f"no {path} to check against")
    with open(path) as f:
        text = re.sub(r"/\*.*?\*/|//[^\n]*", "", f.read(), flags=re.S)
    declared = {}
    for name, params in re.findall(r"\b(cufft\w+)\s*\(([^()]*)\)\s*;", text):
        declared[name] = ["ptr" if "*" in p or "cudaStream_t" in p else
                          "longlong" if p.strip().startswith("long long") else "int"
                          for p in params.split(",") if p.strip() not in ("", "void")]
    for name, argtypes in pf._SIGNATURES.items():
        kinds = ["ptr" if t is ctypes.c_void_p or (hasattr(t, "_type_") and
                                                   isinstance(t._type_, type)) else
                 "longlong" if t is ctypes.c_longlong else "int" for t in argtypes]
        assert kinds == declared[name], name
    for name, value in [("CUFFT_R2C", pf._R2C), ("CUFFT_C2R", pf._C2R), ("CUFFT_C2C", pf._C2C),
                        ("CUFFT_D2Z", pf._D2Z), ("CUFFT_Z2D", pf._Z2D), ("CUFFT_Z2Z", pf._Z2Z)]:
        assert re.search(rf"{name}\s*=\s*{value:#x}\b", text, re.I), name
    assert re.search(r"#define CUFFT_FORWARD -1\b", text) and \
        re.search(r"#define CUFFT_INVERSE\s+1\b", text)
    for code, label in pf._RESULT.items():
        assert re.search(rf"{label}\s*=\s*{code:#x}\b", text, re.I), label


def test_the_real_libcufft_has_every_function_declared(monkeypatch):
    monkeypatch.setattr(_libs, "_ctypes_libs", {})
    monkeypatch.setattr(_libs, "_loaded", {})
    monkeypatch.setattr(pf, "_lib", None)
    try:
        pf._cufft()  # declares each function: a missing one raises AttributeError
    except _libs.MissingLibraryError as e:
        pytest.skip(f"no cuFFT here: {e}")
    assert os.path.isabs(_libs.loaded()["cufft"])
    assert pf.cufft_version() >= 10000  # cufftGetVersion needs no device


# ---- on a GPU: the real cuFFT -------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64, np.complex128])
def test_gpu_cufft_matches_numpy(dtype):
    assert pf.cufft_version() >= 10000
    assert "cufft" in _libs.loaded()
    x = rand((8, 64, 48), dtype)
    close(pf.fft(d(x)), np.fft.fft(x))
    close(pf.ifftn(d(x), axes=(0, 2)), np.fft.ifftn(x, axes=(0, 2)))
    close(pf.fftn(d(x), s=(4, 30, 17)), np.fft.fftn(x, s=(4, 30, 17)))
    if x.dtype.kind == "f":
        close(pf.rfftn(d(x)), np.fft.rfftn(x))
        close(pf.rfft(d(x), axis=1), np.fft.rfft(x, axis=1))
    c = np.fft.rfft(x.real).astype(np.complex64 if x.real.dtype == np.float32 else
                                   np.complex128)
    close(pf.irfft(d(c), 95), np.fft.irfft(c, 95))
    c[..., 0] += 1j  # imaginary parts NumPy ignores
    close(pf.irfft(d(c)), np.fft.irfft(c))
    close(pf.irfftn(d(c)), np.fft.irfftn(c))
    close(pf.hfft(d(c), norm="ortho"), np.fft.hfft(c, norm="ortho"))


@pytest.mark.gpu
def test_gpu_large_fft_matches_numpy():
    x = rand(1 << 22, np.complex64)
    close(pf.fft(d(x)), np.fft.fft(x), 1e-3)
