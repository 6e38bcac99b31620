"""pygpu.linalg: NumPy's answers (numpy.linalg, the array API's linalg
extension), on the simulator's NumPy stand-in, on the cuSOLVER path run
against a NumPy stand-in for libcusolver (the simulator's device memory is
host memory, so a fake library can read and write what the real one would),
and on a GPU (marked gpu). cuSOLVER is loaded at first use only, through
pygpu/_libs.py's search, and its absence is said with how to install it."""

import ctypes
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import ON_SIMULATOR

import pygpu
from pygpu import _libs
from pygpu import linalg as la

RNG = np.random.default_rng(20251125)
TOL = {np.float32: 2e-4, np.float64: 1e-10, np.complex64: 2e-4, np.complex128: 1e-10}


def rand(shape, dtype=np.float64):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def well_conditioned(shape, dtype=np.float64):
    n = shape[-1]
    return (rand(shape, dtype) + 2 * n * np.eye(n)).astype(dtype)


def hermitian_pd(shape, dtype=np.float64):
    x = rand(shape, dtype)
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def close(got, want, dtype=np.float64, scale=1.0):
    if isinstance(got, pygpu.DeviceArray):
        got = got.copy_to_host()
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    tol = TOL.get(np.dtype(dtype).type, 1e-10) * scale
    err = np.max(np.abs(got.astype(np.complex128) - want), initial=0)
    assert err <= tol * max(1.0, np.max(np.abs(want), initial=0)), err


def d(x):
    return pygpu.asarray(x)


# ---- a NumPy stand-in for libcusolver, on the simulator's memory ------------------------------

def view(ptr, dtype, rows, cols, ld):
    """The column-major rows x cols matrix at ptr (leading dimension ld)."""
    dtype = np.dtype(dtype)
    nbytes = ((cols - 1) * ld + rows) * dtype.itemsize if rows and cols else 0
    buf = (ctypes.c_char * max(nbytes, 1)).from_address(ptr)
    return np.ndarray((rows, cols), dtype, buf, 0, (dtype.itemsize, ld * dtype.itemsize))


def vec(ptr, dtype, n):
    return view(ptr, dtype, n, 1, max(n, 1))[:, 0]


class FakeCusolver:
    """cuSOLVER's dense functions computed by NumPy on the pointers given,
    with cuSOLVER's column-major conventions and restrictions (gesvd needs
    m >= n), recording each call's name."""

    TYPES = {"S": np.float32, "D": np.float64, "C": np.complex64, "Z": np.complex128}

    def __init__(self):
        self.calls = []
        self.streams = []

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args):
            self.calls.append(name)
            return self._run(name, args)
        return call

    def _run(self, name, args):
        if name == "cusolverDnCreate":
            args[0]._obj.value = 1
            return 0
        if name == "cusolverDnSetStream":
            self.streams.append(args[1])
            return 0
        if name == "cusolverGetProperty":
            args[1]._obj.value = (12, 0, 4)[args[0]]
            return 0
        if name == "cusolverDnCreateParams":
            args[0]._obj.value = 2
            return 0
        if name == "cusolverDnDestroyParams":
            return 0
        if name == "cusolverDnXgeev_bufferSize":
            args[-2]._obj.value, args[-1]._obj.value = 16, 8
            return 0
        if name == "cusolverDnXgeev":
            return self.xgeev(*args[2:17], args[-1])
        t, op = name[len("cusolverDn")], name[len("cusolverDn") + 1:]
        dt = self.TYPES[t]
        if op.endswith("_bufferSize"):
            args[-1]._obj.value = 3
            return 0
        return getattr(self, op)(dt, *args[1:])

    def getrf(self, dt, m, n, a, lda, work, ipiv, info):
        A = view(a, dt, m, n, lda)
        piv = vec(ipiv, np.int32, min(m, n))
        code = 0
        for j in range(min(m, n)):
            p = j + int(np.argmax(np.abs(A[j:, j])))
            piv[j] = p + 1
            if p != j:
                A[[j, p], :] = A[[p, j], :]
            if A[j, j] == 0:
                code = code or j + 1
                continue
            A[j + 1:, j] /= A[j, j]
            A[j + 1:, j + 1:] -= np.outer(A[j + 1:, j], A[j, j + 1:])
        vec(info, np.int32, 1)[0] = code
        return 0

    def getrs(self, dt, trans, n, nrhs, a, lda, ipiv, b, ldb, info):
        LU = view(a, dt, n, n, lda)
        piv = vec(ipiv, np.int32, n)
        B = view(b, dt, n, nrhs, ldb)
        L = np.tril(LU, -1) + np.eye(n, dtype=dt)
        U = np.triu(LU)
        x = B.copy()
        if trans == 0:
            for i in range(n):
                p = piv[i] - 1
                x[[i, p], :] = x[[p, i], :]
            x = np.linalg.solve(U, np.linalg.solve(L, x))
        else:
            assert trans == 1
            x = np.linalg.solve(L.T, np.linalg.solve(U.T, x))
            for i in reversed(range(n)):
                p = piv[i] - 1
                x[[i, p], :] = x[[p, i], :]
        B[...] = x
        vec(info, np.int32, 1)[0] = 0
        return 0

    def potrf(self, dt, uplo, n, a, lda, work, lwork, info):
        A = view(a, dt, n, n, lda)
        if uplo == 0:
            full = np.tril(A) + np.conj(np.tril(A, -1)).T
        else:
            full = np.triu(A) + np.conj(np.triu(A, 1)).T
        try:
            L = np.linalg.cholesky(full)
        except np.linalg.LinAlgError:
            vec(info, np.int32, 1)[0] = 1
            return 0
        if uplo == 0:
            A[np.tril_indices(n)] = L[np.tril_indices(n)]
        else:
            U = np.conj(L).T
            A[np.triu_indices(n)] = U[np.triu_indices(n)]
        vec(info, np.int32, 1)[0] = 0
        return 0

    def geqrf(self, dt, m, n, a, lda, tau, work, lwork, info):
        A = view(a, dt, m, n, lda)
        h, t = np.linalg.qr(A.copy(), mode="raw")  # LAPACK's geqrf, transposed
        A[...] = h.T
        vec(tau, dt, min(m, n))[...] = t
        vec(info, np.int32, 1)[0] = 0
        return 0

    def orgqr(self, dt, m, n, k, a, lda, tau, work, lwork, info):
        A = view(a, dt, m, n, lda)
        t = vec(tau, dt, k)
        Q = np.eye(m, n, dtype=dt)
        for i in reversed(range(k)):
            v = np.zeros(m, dtype=dt)
            v[i] = 1
            v[i + 1:] = A[i + 1:, i]
            Q = Q - t[i] * np.outer(v, np.conj(v) @ Q)
        A[...] = Q
        vec(info, np.int32, 1)[0] = 0
        return 0

    ungqr = orgqr

    def gesvd(self, dt, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork,
              info):
        if m < n:
            return 3  # CUSOLVER_STATUS_INVALID_VALUE: gesvd needs m >= n
        A = view(a, dt, m, n, lda)
        sv = vec(s, np.finfo(dt).dtype, n)
        if jobu == b"N":
            sv[...] = np.linalg.svd(A, compute_uv=False)
        else:
            uu, ss, vh = np.linalg.svd(A, full_matrices=jobu == b"A")
            sv[...] = ss
            view(u, dt, m, uu.shape[1], ldu)[...] = uu
            assert jobvt == b"A"
            view(vt, dt, n, n, ldvt)[...] = vh
        vec(info, np.int32, 1)[0] = 0
        return 0

    def syevd(self, dt, jobz, uplo, n, a, lda, w, work, lwork, info):
        A = view(a, dt, n, n, lda)
        ww, vv = np.linalg.eigh(A, UPLO="L" if uplo == 0 else "U")
        vec(w, np.finfo(dt).dtype, n)[...] = ww
        if jobz == 1:
            A[...] = vv
        vec(info, np.int32, 1)[0] = 0
        return 0

    heevd = syevd

    XTYPES = {0: np.float32, 1: np.float64, 4: np.complex64, 5: np.complex128}

    def xgeev(self, jobvl, jobvr, n, ta, a, lda, tw, w, tvl, vl, ldvl, tvr, vr, ldvr, tc,
              info):
        """LAPACK's geev as cusolverDnXgeev gives it, every type one: for a
        real matrix W holds n real parts then n imaginary parts, and VR
        a conjugate pair's vectors as two real columns (real, imaginary)."""
        dt = self.XTYPES[ta]
        assert jobvl == 0 and ldvl >= 1 and ldvr >= 1 and tw == tvr == tc == ta
        ww, vv = np.linalg.eig(view(a, dt, n, n, lda))
        ww, vv = ww.astype(np.complex128), vv.astype(np.complex128)
        if np.dtype(dt).kind == "c":
            vec(w, dt, n)[...] = ww
            if jobvr:
                view(vr, dt, n, n, ldvr)[...] = vv
        else:
            vec(w, dt, 2 * n)[...] = np.concatenate([ww.real, ww.imag])
            if jobvr:
                V = view(vr, dt, n, n, ldvr)
                for j in range(n):
                    if ww[j].imag > 0:
                        V[:, j], V[:, j + 1] = vv[:, j].real, vv[:, j].imag
                    elif ww[j].imag == 0:
                        V[:, j] = vv[:, j].real
        vec(info, np.int32, 1)[0] = 0
        return 0


@pytest.fixture(params=["host", "cusolver"])
def path(request, monkeypatch):
    """Each test twice: NumPy on a host copy (the simulator's path), and the
    cuSOLVER path against FakeCusolver (on a GPU: the real library)."""
    if request.param == "cusolver" and ON_SIMULATOR:
        fake = FakeCusolver()
        monkeypatch.setattr(la, "_lib", fake)
        monkeypatch.setattr(la, "_handles", {})
        monkeypatch.setattr(la, "_host_path", lambda *arrays: any(a.size == 0 for a in arrays))
        return fake
    if request.param == "host" and not ON_SIMULATOR:
        monkeypatch.setattr(la, "_host_path", lambda *arrays: True)
    return None


DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


# ---- LU: inv, solve, det, slogdet ------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_inv_and_solve_match_numpy(path, dtype):
    a = well_conditioned((5, 5), dtype)
    b = rand((5, 3), dtype)
    v = rand(5, dtype)
    close(la.inv(d(a)), np.linalg.inv(a), dtype)
    close(la.solve(d(a), d(b)), np.linalg.solve(a, b), dtype)
    close(la.solve(d(a), d(v)), np.linalg.solve(a, v), dtype)
    if path is not None:
        assert f"cusolverDn{'SDCZ'[DTYPES.index(dtype)]}getrf" in path.calls


def test_inv_solve_batched_broadcast_and_non_contiguous(path):
    a = well_conditioned((2, 3, 4, 4))
    b = rand((3, 4, 2))
    close(la.inv(d(a)), np.linalg.inv(a))
    close(la.solve(d(a), d(b)), np.linalg.solve(a, b))
    close(la.solve(d(a), d(b[0, :, 0])), np.linalg.solve(a, b[0, :, 0]))
    at = d(np.ascontiguousarray(a[1]))
    close(la.inv(pygpu.matrix_transpose(at)), np.linalg.inv(np.swapaxes(a[1], -1, -2)))
    strided = pygpu.asarray(well_conditioned((8, 8)))[::2, ::2]
    close(la.inv(strided), np.linalg.inv(strided.copy_to_host()))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
def test_integer_and_bool_matrices_give_float64(path, dtype):
    a = (np.eye(3) * 2 + np.eye(3, k=1)).astype(dtype)
    close(la.inv(d(a)), np.linalg.inv(a))
    close(la.det(d(a)), np.linalg.det(a))


def test_singular_matrices_raise_and_have_zero_determinant(path):
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        la.inv(d(a))
    with pytest.raises(la.LinAlgError, match="Singular matrix"):
        la.solve(d(a), d(np.ones(2)))
    z = np.zeros((3, 3))
    close(la.det(d(z)), np.linalg.det(z))
    sign, logabs = la.slogdet(d(z))
    assert sign.item() == 0 and logabs.item() == -np.inf


@pytest.mark.parametrize("dtype", DTYPES)
def test_det_and_slogdet_match_numpy(path, dtype):
    a = rand((3, 4, 4), dtype)
    close(la.det(d(a)), np.linalg.det(a), dtype, 10)
    r = la.slogdet(d(a))
    want = np.linalg.slogdet(a)
    assert isinstance(r, la.SlogdetResult)
    close(r.sign, want.sign, dtype, 10)
    close(r.logabsdet, want.logabsdet, dtype, 10)


def test_empty_matrices_are_numpys(path):
    e = np.zeros((0, 0))
    close(la.inv(d(e)), np.linalg.inv(e))
    close(la.det(d(e)), np.linalg.det(e))
    close(la.det(d(np.zeros((2, 0, 0)))), np.linalg.det(np.zeros((2, 0, 0))))
    u, s, vh = la.svd(d(np.zeros((0, 3))))
    w = np.linalg.svd(np.zeros((0, 3)))
    assert (u.shape, s.shape, vh.shape) == (w.U.shape, w.S.shape, w.Vh.shape)


@pytest.mark.parametrize("fn", ["inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh"])
def test_bad_shapes_and_dtypes_raise_as_numpy(fn):
    f = getattr(la, fn)
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        f(d(np.ones(3)))
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        f(d(np.ones((2, 3))))
    with pytest.raises(TypeError, match="array type float16 is unsupported in linalg"):
        f(d(np.eye(2, dtype=np.float16)))
    with pytest.raises(TypeError, match="pygpu.asarray"):
        f(np.eye(2))
    with pytest.raises(TypeError, match="DeviceArray"):
        f(None)


def test_solve_says_what_does_not_fit():
    with pytest.raises(ValueError, match="3 rows"):
        la.solve(d(np.eye(2)), d(np.ones(3)))
    with pytest.raises(ValueError, match="0-d"):
        la.solve(d(np.eye(2)), d(np.float64(1)))


# ---- Cholesky, QR, SVD, eigh -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_matches_numpy_and_reads_one_triangle(path, dtype):
    a = hermitian_pd((2, 4, 4), dtype)
    close(la.cholesky(d(a)), np.linalg.cholesky(a), dtype, 10)
    close(la.cholesky(d(a), upper=True), np.linalg.cholesky(a, upper=True), dtype, 10)
    junk = a + np.triu(np.full((4, 4), 7.0), 1).astype(dtype)  # the other triangle unread
    close(la.cholesky(d(junk)), np.linalg.cholesky(a), dtype, 10)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        la.cholesky(d(-np.eye(3)))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3), (2, 3, 5)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_qr_reconstructs_and_matches_numpy(path, shape, dtype):
    a = rand(shape, dtype)
    for mode in ("reduced", "complete"):
        q, r = la.qr(d(a), mode=mode)
        wq, wr = np.linalg.qr(a, mode=mode)
        assert q.shape == wq.shape and r.shape == wr.shape and q.dtype == wq.dtype
        # unique up to the signs of R's diagonal: compare |R| and Q R
        close(abs(r), np.abs(wr), dtype, 10)
        close(q @ r, a, dtype, 10)
    close(abs(la.qr(d(a), mode="r")), np.abs(np.linalg.qr(a, mode="r")), dtype, 10)
    with pytest.raises(ValueError, match="Unrecognized mode"):
        la.qr(d(a), mode="full")


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (3, 4, 2), (3, 2, 4)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_reconstructs_and_matches_numpy(path, shape, dtype):
    a = rand(shape, dtype)
    want = np.linalg.svd(a)
    close(la.svdvals(d(a)), want.S, dtype, 10)
    close(la.svd(d(a), compute_uv=False), want.S, dtype, 10)
    for full in (True, False):
        r = la.svd(d(a), full_matrices=full)
        w = np.linalg.svd(a, full_matrices=full)
        assert isinstance(r, la.SVDResult)
        assert (r.U.shape, r.S.shape, r.Vh.shape) == (w.U.shape, w.S.shape, w.Vh.shape)
        assert r.U.dtype == w.U.dtype and r.S.dtype == w.S.dtype
        k = min(shape[-2:])
        u, s, vh = r.U.copy_to_host(), r.S.copy_to_host(), r.Vh.copy_to_host()
        rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
        close(rebuilt, a.astype(w.U.dtype), dtype, 10)
        eye = np.eye(u.shape[-1])
        close(np.conj(np.swapaxes(u, -1, -2)) @ u, np.broadcast_to(eye, u.shape[:-2] + eye.shape)
              .astype(u.dtype), dtype, 10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_numpy(path, dtype, uplo):
    a = hermitian_pd((2, 5, 5), dtype)
    junk = a + (np.triu(np.full((5, 5), 3.0), 1) if uplo == "L" else
                np.tril(np.full((5, 5), 3.0), -1)).astype(dtype)
    w, v = la.eigh(d(junk), UPLO=uplo)
    ww = np.linalg.eigvalsh(a)
    close(w, ww, dtype, 100)
    close(la.eigvalsh(d(junk), UPLO=uplo), ww, dtype, 100)
    vv = v.copy_to_host()
    close(a @ vv, vv * ww[..., None, :].astype(vv.dtype), dtype, 100)
    with pytest.raises(ValueError, match="UPLO"):
        la.eigh(d(a), UPLO="X")


def eig_check(a, w, v, dtype):
    """w and v are an eigendecomposition of each matrix of a, with NumPy's
    dtypes and shapes, the eigenvalues NumPy's (in any order) and the
    eigenvectors of unit norm."""
    want = np.linalg.eig(a)
    if v is not None:
        vv = v.copy_to_host()
        assert vv.dtype == want.eigenvectors.dtype and vv.shape == want.eigenvectors.shape
        close(a.astype(vv.dtype) @ vv, vv * w.copy_to_host()[..., None, :], dtype, 100)
        close(np.linalg.norm(vv, axis=-2), np.ones(vv.shape[:-1], _real_of(vv.dtype)), dtype, 10)
    ww = w.copy_to_host()
    assert ww.dtype == want.eigenvalues.dtype and ww.shape == want.eigenvalues.shape
    order = np.sort_complex if ww.dtype.kind == "c" else np.sort
    close(order(ww), order(want.eigenvalues), dtype, 100)


def _real_of(dtype):
    return np.finfo(dtype).dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_and_eigvals_match_numpy(path, dtype):
    a = rand((2, 3, 5, 5), dtype)  # complex eigenvalues, even for real matrices
    w, v = la.eig(d(a))
    assert isinstance(la.eig(d(a)), la.EigResult)
    assert v.dtype == np.linalg.eig(a).eigenvectors.dtype and v.shape == a.shape
    eig_check(a, w, v, dtype)
    eig_check(a, la.eigvals(d(a)), None, dtype)
    t = np.triu(rand((4, 4), dtype)) + np.diag(np.arange(4)).astype(dtype)  # real eigenvalues
    eig_check(t, *la.eig(d(t)), dtype)
    eig_check(t, la.eigvals(d(t)), None, dtype)
    if path is not None:
        assert "cusolverDnXgeev" in path.calls


def test_eig_results_are_real_only_where_the_whole_stack_is_real(path):
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])
    stack = np.stack([np.diag([1.0, 2.0]), rot])
    w, v = la.eig(d(stack))
    assert w.dtype == v.dtype == np.complex128  # NumPy's: one complex matrix decides
    eig_check(stack, w, v, np.float64)
    w, v = la.eig(d(np.diag([3, 1]).astype(np.int32)))
    # NumPy 2.5 gives complex results always (as the array API's 2025.12 eig);
    # 2.4 and before real ones where the whole stack's eigenvalues are real
    want = np.linalg.eig(np.diag([3, 1]).astype(np.int32))
    assert w.dtype == v.dtype == want.eigenvalues.dtype == want.eigenvectors.dtype
    close(w, np.linalg.eig(np.diag([3, 1])).eigenvalues)
    close(v, np.linalg.eig(np.diag([3, 1])).eigenvectors)
    w = la.eigvals(d(rot.astype(np.float32)))
    assert w.dtype == np.complex64
    close(np.sort_complex(w.copy_to_host()), np.array([-1j, 1j], np.complex64), np.float32)
    e = la.eig(d(np.zeros((2, 0, 0), np.float32)))
    want = np.linalg.eig(np.zeros((2, 0, 0), np.float32))
    assert e.eigenvalues.shape == (2, 0) and e.eigenvectors.shape == (2, 0, 0)
    assert e.eigenvalues.dtype == want.eigenvalues.dtype


@pytest.mark.parametrize("always", [True, False])
def test_eig_of_real_eigenvalues_is_complex_or_real_as_each_numpy_version(path, monkeypatch,
                                                                           always):
    """NumPy 2.5 (always complex) and 2.4 (real where the whole stack is): the
    cuSOLVER path follows the installed NumPy, tested here as either."""
    if path is None:
        pytest.skip("the host path is NumPy's own")
    monkeypatch.setattr(la, "_always_complex", [always])
    t = np.triu(rand((4, 4), np.float64)) + np.diag(np.arange(4.0))
    w, v = la.eig(d(t))
    assert w.dtype == v.dtype == (np.complex128 if always else np.float64)
    assert la.eigvals(d(t)).dtype == w.dtype
    close(np.sort(w.copy_to_host().real), np.sort(np.linalg.eigvals(t).real), np.float64)


@pytest.mark.parametrize("fn", ["eig", "eigvals"])
def test_eig_refuses_what_numpy_refuses(path, fn):
    f = getattr(la, fn)
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        f(d(np.ones(3)))
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        f(d(np.ones((2, 3))))
    with pytest.raises(np.linalg.LinAlgError, match="must not contain infs or NaNs"):
        f(d(np.array([[1.0, np.nan], [0.0, 1.0]])))
    with pytest.raises(TypeError, match="array type float16 is unsupported in linalg"):
        f(d(np.eye(2, dtype=np.float16)))
    with pytest.raises(TypeError, match="pygpu.asarray"):
        f(np.eye(2))


def test_eig_says_which_cusolver_it_needs(monkeypatch):
    if not ON_SIMULATOR:
        pytest.skip("runs against FakeCusolver on the simulator")

    class Old(FakeCusolver):  # a cuSOLVER from before CUDA 12.6
        def __getattr__(self, name):
            if name.startswith("cusolverDnXgeev"):
                raise AttributeError(name)
            return super().__getattr__(name)

    monkeypatch.setattr(la, "_lib", Old())
    monkeypatch.setattr(la, "_handles", {})
    monkeypatch.setattr(la, "_host_path", lambda *arrays: False)
    with pytest.raises(_libs.MissingLibraryError,
                       match=r"eigvals needs cusolverDnXgeev, which cuSOLVER has from version "
                             r"11.7 \(CUDA 12.6\)"):
        la.eigvals(d(np.eye(3)))
    close(la.inv(d(np.eye(3))), np.eye(3))  # the rest works


STACKED = {  # name: (pygpu's call, NumPy's, what to compare)
    "inv": (la.inv, np.linalg.inv), "det": (la.det, np.linalg.det),
    "slogdet": (lambda x: la.slogdet(x).logabsdet, lambda x: np.linalg.slogdet(x).logabsdet),
    "cholesky": (la.cholesky, np.linalg.cholesky),
    "qr": (lambda x: abs(la.qr(x).R), lambda x: np.abs(np.linalg.qr(x).R)),
    "svdvals": (la.svdvals, np.linalg.svdvals),
    "svd": (lambda x: la.svd(x, compute_uv=False), lambda x: np.linalg.svd(x, compute_uv=False)),
    "eigvalsh": (la.eigvalsh, np.linalg.eigvalsh),
    "eigh": (lambda x: la.eigh(x).eigenvalues, lambda x: np.linalg.eigh(x).eigenvalues),
    "eigvals": (lambda x: pygpu.sort(la.eigvals(x)), lambda x: np.sort(np.linalg.eigvals(x))),
    "pinv": (la.pinv, np.linalg.pinv), "matrix_rank": (la.matrix_rank, np.linalg.matrix_rank),
    "matrix_power": (lambda x: la.matrix_power(x, 3), lambda x: np.linalg.matrix_power(x, 3)),
    "matrix_norm": (lambda x: la.matrix_norm(x, ord=2), lambda x: np.linalg.matrix_norm(x, ord=2)),
    "solve": (lambda x: la.solve(x, pygpu.matrix_transpose(x)),
              lambda x: np.linalg.solve(x, np.swapaxes(x, -1, -2))),
}


@pytest.mark.parametrize("name", sorted(STACKED))
def test_every_matrix_function_takes_stacks_and_views_as_numpy(path, name):
    ours, numpys = STACKED[name]
    # symmetric positive definite (cholesky, eigh), with real eigenvalues (eigvals)
    a = hermitian_pd((2, 3, 4, 4))
    for x, ref in [(d(a), a), (pygpu.matrix_transpose(d(a))[:, ::-1], a[:, ::-1]),
                   (d(a)[1:, :, ::1], a[1:])]:
        close(ours(x), numpys(ref), scale=100)


# ---- built on them: lstsq, pinv, matrix_rank ---------------------------------------------------

@pytest.mark.parametrize("shape", [(6, 3), (3, 6), (4, 4)])
def test_lstsq_matches_numpy(path, shape):
    a = rand(shape)
    for b in (rand(shape[0]), rand((shape[0], 2))):
        x, res, rank, s = la.lstsq(d(a), d(b))
        wx, wres, wrank, ws = np.linalg.lstsq(a, b)
        close(x, wx)
        close(res, wres)
        assert rank == wrank and type(rank) is type(wrank)
        close(s, ws)
    rank_deficient = np.outer(rand(5), rand(3))
    x, res, rank, s = la.lstsq(d(rank_deficient), d(rand(5)))
    assert rank == 1 and res.shape == (0,)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_pinv_and_matrix_rank_match_numpy(path, dtype):
    a = rand((2, 5, 3), dtype)
    close(la.pinv(d(a)), np.linalg.pinv(a), dtype, 10)
    low = np.outer(rand(4), rand(4)).astype(dtype)
    # a rank-1 matrix: its other singular values are rounding, which NumPy's
    # default cut-off (1e-15 of the largest) keeps in float32 and inverts, so
    # the libraries' roundings decide the answer; a cut-off above them
    close(la.pinv(d(low), rtol=1e-4), np.linalg.pinv(low, rtol=1e-4), dtype, 100)
    close(la.pinv(d(a), rtol=None), np.linalg.pinv(a, rtol=None), dtype, 10)
    assert la.matrix_rank(d(low)).item() == 1
    close(la.matrix_rank(d(a)), np.linalg.matrix_rank(a))
    assert la.matrix_rank(d(np.zeros(3))) == 0 and la.matrix_rank(d(np.ones(3))) == 1
    with pytest.raises(ValueError, match="can't be both set"):
        la.pinv(d(a), 1e-3, rtol=1e-3)


@pytest.mark.parametrize("rtol", [np.array([0.5, 1e-3]), np.array([0.3]), np.array(0.2),
                                  np.array([0.5, 1e-3], np.float32)])
def test_pinv_and_matrix_rank_take_an_rtol_per_matrix(path, rtol):
    a = rand((2, 5, 3))
    close(la.pinv(d(a), rtol=d(rtol)), np.linalg.pinv(a, rtol=rtol), scale=10)
    close(la.pinv(d(a), d(rtol)), np.linalg.pinv(a, rtol), scale=10)
    close(la.matrix_rank(d(a), rtol=d(rtol)), np.linalg.matrix_rank(a, rtol=rtol))
    for empty in (np.zeros((2, 0, 3)), np.zeros((2, 3, 0), np.int32)):
        close(la.pinv(d(empty), rtol=d(rtol)), np.linalg.pinv(empty, rtol=rtol))
    close(la.pinv(d(np.zeros((0, 3, 3))), rtol=d(rtol[..., :0] if rtol.ndim else rtol)),
          np.linalg.pinv(np.zeros((0, 3, 3))))


def test_pinv_says_what_rtol_it_takes():
    a = d(rand((2, 3, 3)))
    with pytest.raises(ValueError, match=r"rtol of shape \(4, 2\) does not broadcast to the "
                       r"stack of matrices, shape \(2,\)"):
        la.pinv(a, rtol=d(np.ones((4, 2))))
    with pytest.raises(ValueError, match="does not broadcast"):
        la.matrix_rank(a, rtol=d(np.ones(3)))
    with pytest.raises(TypeError, match="host memory"):
        la.pinv(a, rtol=np.ones(2))
    with pytest.raises(TypeError, match="real floating-point array, not complex128"):
        la.pinv(a, rtol=d(np.ones(2, complex)))
    with pytest.raises(TypeError, match="real number or a DeviceArray, not str"):
        la.pinv(a, rtol="small")


# ---- norms and products (pygpu's own operations) -----------------------------------------------

@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms_match_numpy(ord):  # noqa: A002
    a = rand((3, 4, 5), np.complex128)
    close(la.norm(d(a), ord, axis=(1, 2)), np.linalg.norm(a, ord, axis=(1, 2)), scale=10)
    close(la.norm(d(a), ord, axis=(2, 0), keepdims=True),
          np.linalg.norm(a, ord, axis=(2, 0), keepdims=True), scale=10)
    close(la.matrix_norm(d(a), ord=ord if ord is not None else "fro"),
          np.linalg.matrix_norm(a, ord=ord if ord is not None else "fro"), scale=10)


@pytest.mark.parametrize("ord", [None, 0, 1, 2, 3.5, -1, np.inf, -np.inf])
def test_vector_norms_match_numpy(ord):  # noqa: A002
    x = rand((4, 6), np.float32)
    close(la.norm(d(x), ord, axis=1), np.linalg.norm(x, ord, axis=1), np.float32, 10)
    close(la.vector_norm(d(x), ord=2 if ord is None else ord, axis=(0, 1), keepdims=True),
          np.linalg.vector_norm(x, ord=2 if ord is None else ord, axis=(0, 1), keepdims=True),
          np.float32, 10)
    close(la.vector_norm(d(x), ord=2 if ord is None else ord),
          np.linalg.vector_norm(x, ord=2 if ord is None else ord), np.float32, 10)


def test_norm_defaults_and_errors_are_numpys():
    i = np.arange(12).reshape(3, 4)
    close(la.norm(d(i)), np.linalg.norm(i))
    close(la.norm(d(i), keepdims=True), np.linalg.norm(i, keepdims=True))
    close(la.norm(d(i[0]), 2), np.linalg.norm(i[0], 2))
    with pytest.raises(ValueError, match="Invalid norm order 'fro' for vectors"):
        la.norm(d(i), "fro", axis=0)
    with pytest.raises(ValueError, match="Invalid norm order for matrices"):
        la.norm(d(i), 3)
    with pytest.raises(ValueError, match="Improper number of dimensions"):
        la.norm(d(np.ones((2, 2, 2))), 1)
    with pytest.raises(ValueError, match="Duplicate axes"):
        la.norm(d(i), axis=(0, 0))


def test_products_match_numpy():
    x, y = rand(4), rand(5)
    close(la.outer(d(x), d(y)), np.linalg.outer(x, y))
    with pytest.raises(ValueError, match="one-dimensional"):
        la.outer(d(np.ones((2, 2))), d(x))
    t, u = rand((3, 4, 5)), rand((4, 5, 2))
    close(la.tensordot(d(t), d(u)), np.linalg.tensordot(t, u))
    close(la.tensordot(d(t), d(u), axes=([1], [0])), np.tensordot(t, u, axes=([1], [0])))
    close(la.tensordot(d(x), d(y), axes=0), np.tensordot(x, y, axes=0))
    ti = RNG.integers(-9, 9, (3, 4)).astype(np.int32)
    close(la.tensordot(d(ti), d(ti.T.copy()), axes=1), np.tensordot(ti, ti.T, axes=1))
    with pytest.raises(ValueError, match="shape-mismatch"):
        la.tensordot(d(t), d(u), axes=1)
    # NumPy's reading of axes (np.linalg.tensordot), the namespace's product
    close(la.tensordot(d(t), d(u), axes=-1), np.linalg.tensordot(t, u, axes=-1))
    close(la.tensordot(d(t), d(u), axes=([-2, 2], [0, -2])),
          np.linalg.tensordot(t, u, axes=([-2, 2], [0, -2])))
    h = t.astype(np.float16)  # float16: products summed in float32, as the namespace's
    close(la.tensordot(d(h), d(u.astype(np.float16))), pygpu.tensordot(
        d(h), d(u.astype(np.float16))).copy_to_host(), np.float16)
    with pytest.raises(ValueError, match="duplicate axes are not allowed in tensordot"):
        la.tensordot(d(t), d(u), axes=([1, 1], [0, 0]))
    with pytest.raises(IndexError):
        la.tensordot(d(t), d(u), axes=([5], [0]))
    c = rand((3, 4), np.complex64)
    close(la.vecdot(d(c), d(c[0])), np.linalg.vecdot(c, c[0]), np.complex64)
    close(la.vecdot(d(t), d(t), axis=1), np.linalg.vecdot(t, t, axis=1))
    close(la.trace(d(t), offset=1), np.linalg.trace(t, offset=1))
    close(la.trace(d(ti), dtype=np.float32), np.linalg.trace(ti, dtype=np.float32))
    v, w = rand((2, 3, 4)), rand((3, 1))
    close(la.cross(d(v), d(w), axis=-2), np.linalg.cross(v, w, axis=-2))
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        la.cross(d(rand(2)), d(rand(3)))


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int32, np.bool_])
def test_array_api_matmul_transpose_and_diagonal_match_numpy(dtype):
    a = (rand((2, 3, 4)) * 3).astype(dtype)
    b = (rand((4, 5)) * 3).astype(dtype)
    v = (rand(4) * 3).astype(dtype)
    for x, y in [(a, b), (a, v), (v, b), (v, v), (b.T.copy(), a[0].T.copy())]:
        close(la.matmul(d(x), d(y)), np.linalg.matmul(x, y), dtype, 10)
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        la.matmul(d(a), d(a))
    close(la.matrix_transpose(d(a)), np.linalg.matrix_transpose(a))
    close(la.diagonal(d(a), offset=1), np.linalg.diagonal(a, offset=1))
    with pytest.raises(ValueError, match="at least 2-dimensional"):
        la.matrix_transpose(d(v))


def test_matrix_power_matches_numpy(path):
    a = well_conditioned((2, 3, 3)) / 6
    for n in (0, 1, 2, 3, 5, 8, -1, -3):
        close(la.matrix_power(d(a), n), np.linalg.matrix_power(a, n))
    i = np.array([[1, 1], [1, 0]], dtype=np.int64)
    close(la.matrix_power(d(i), 10), np.linalg.matrix_power(i, 10))
    with pytest.raises(TypeError, match="exponent must be an integer"):
        la.matrix_power(d(a), 1.5)


@pytest.mark.parametrize("subscripts,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ijk,jkl->il", [(2, 3, 4), (3, 4, 5)]),
    ("i,i", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]), ("ii", [(4, 4)]), ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ab,cb->ca", [(3, 4), (5, 4)]), ("ijk,ik->j", [(2, 3, 4), (2, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]), ("...ij,...jk", [(2, 1, 3, 4), (3, 4, 2)]),
    ("i...->...", [(3, 2, 2)]), ("...i,...i->...", [(2, 3), (1, 3)]),
])
def test_einsum_contractions_match_numpy(subscripts, shapes):
    ops = [rand(s) for s in shapes]
    close(la.einsum(subscripts, *map(d, ops)), np.einsum(subscripts, *ops), scale=10)


def test_einsum_says_what_it_does_not_take():
    x = d(rand((2, 2)))
    with pytest.raises(NotImplementedError, match="interleaved"):
        la.einsum(x, [0, 1])
    with pytest.raises(ValueError, match="2 dimensions"):
        la.einsum("ijk,jk", x, x)
    with pytest.raises(ValueError, match="no '...' ellipsis"):
        la.einsum("...j->j", d(rand((2, 3, 4))))
    with pytest.raises(ValueError, match="sizes"):
        la.einsum("ij,jk", x, d(rand((3, 2))))


def test_numpy_functions_dispatch_through_the_numpy_table(monkeypatch):
    from pygpu._ops import methods

    monkeypatch.setattr(methods, "ARRAY_FUNCTIONS", {**methods.ARRAY_FUNCTIONS, **la.NUMPY})
    a = well_conditioned((3, 3))
    b = rand(3)
    close(np.linalg.solve(d(a), d(b)), np.linalg.solve(a, b))
    close(np.linalg.inv(d(a)), np.linalg.inv(a))
    close(np.linalg.norm(d(a)), np.linalg.norm(a))
    close(np.einsum("ij,j", d(a), d(b)), a @ b)
    assert all(getattr(la, f.__name__) is impl for f, impl in la.NUMPY.items())


# ---- cuSOLVER: loaded at first use, through the one search ---------------------------------

def test_cusolver_is_searched_for_like_the_other_libraries(monkeypatch, tmp_path):
    for var in ("PYGPU_CUSOLVER", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    found = list(_libs.cusolver_candidates())
    assert found[:2] == ["libcusolver.so.12", "libcusolver.so.11"]
    assert all(os.path.isabs(p) or os.sep not in p for p in found)
    monkeypatch.setenv("PYGPU_CUSOLVER", "lib/libcusolver.so.12")
    tried = []
    assert "lib/libcusolver.so.12" not in list(_libs.cusolver_candidates(tried))
    assert "PYGPU_CUSOLVER='lib/libcusolver.so.12' was not used: it must be an absolute " \
           "path" in tried


def test_a_missing_cusolver_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(_libs, "_ctypes_libs", {})
    monkeypatch.setattr(la, "_lib", None)
    monkeypatch.setattr(la, "_host_path", lambda *arrays: False)
    monkeypatch.setattr(_libs, "candidates", lambda name, tried=None: iter(
        ["/nonexistent/libcusolver.so.12", "libpygpu-no-such-cusolver.so.12"]))
    with pytest.raises(_libs.MissingLibraryError) as e:
        la.inv(d(np.eye(2)))
    msg = str(e.value)
    assert "cuSOLVER" in msg and "nvidia-cusolver-cu13" in msg and "CUDA toolkit" in msg
    assert "PYGPU_CUSOLVER" in msg and "/nonexistent/libcusolver.so.12" in msg
    with pytest.raises(_libs.MissingLibraryError, match="nvidia-cusolver-cu13"):
        la.cusolver_version()  # said again, not retried
    # a cuSOLVER newer than the driver is passed over, and said so
    monkeypatch.setattr(_libs, "_ctypes_libs", {})
    monkeypatch.setattr(_libs, "_driver_major", lambda: 12)
    with pytest.raises(_libs.MissingLibraryError,
                       match="libcusolver.so.12: cuSOLVER 12 needs a CUDA 13 driver"):
        la.inv(d(np.eye(2)))
    monkeypatch.setattr(_libs, "_ctypes_libs", {})
    monkeypatch.setenv("PYGPU_CUSOLVER", "0")
    with pytest.raises(_libs.MissingLibraryError, match="PYGPU_CUSOLVER=0"):
        la.solve(d(np.eye(2)), d(np.ones(2)))


def test_importing_linalg_loads_no_nvidia_library():
    r = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import json, pygpu, pygpu.linalg, pygpu.fft
        from pygpu import _libs
        maps = open("/proc/self/maps").read()
        print(json.dumps({"loaded": _libs.loaded(), "cusolver": "libcusolver" in maps,
                          "cufft": "libcufft" in maps}))
        """)], capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.splitlines()[-1])
    assert out == {"loaded": {}, "cusolver": False, "cufft": False}


def test_the_cusolver_path_sets_the_stream_and_names_a_failed_call(monkeypatch):
    if not ON_SIMULATOR:
        pytest.skip("runs against FakeCusolver on the simulator")
    fake = FakeCusolver()
    monkeypatch.setattr(la, "_lib", fake)
    monkeypatch.setattr(la, "_handles", {})
    monkeypatch.setattr(la, "_host_path", lambda *arrays: False)
    s = pygpu.cuda.stream()
    with s:
        la.inv(d(np.eye(3)))
    assert fake.streams[-1] == s.ptr
    assert fake.calls[:3] == ["cusolverDnCreate", "cusolverDnSetStream",
                              "cusolverDnDgetrf_bufferSize"]
    monkeypatch.setattr(fake, "getrf", lambda *args: 6)
    with pytest.raises(pygpu.CudaError,
                       match="cusolverDnDgetrf failed: CUSOLVER_STATUS_EXECUTION_FAILED"):
        la.inv(d(np.eye(3)))
    monkeypatch.setattr(fake, "getrf", lambda *args: 2)
    with pytest.raises(pygpu.OutOfMemoryError, match="CUSOLVER_STATUS_ALLOC_FAILED"):
        la.det(d(np.eye(3)))
    assert la.cusolver_version() == (12, 0, 4)


HEADERS = "/usr/local/cuda/include"


def prototypes(*headers):
    """{function: [kind of each parameter]} from NVIDIA's headers: 'ptr' (a
    pointer, a handle, a stream), 'char', 'longlong' (long long, int64_t),
    'size' (size_t) or 'int' (ints, enums)."""
    import re

    text = ""
    for h in headers:
        path = os.path.join(HEADERS, h)
        if not os.path.exists(path):
            pytest.skip(f"no {path} to check against")
        with open(path) as f:
            text += re.sub(r"/\*.*?\*/|//[^\n]*", "", f.read(), flags=re.S)
    found = {}
    for name, params in re.findall(r"\b(cu\w+)\s*\(([^()]*)\)\s*;", text):
        kinds = []
        for p in params.split(","):
            p = p.strip()
            if "*" in p or re.match(
                    r"(const\s+)?(cusolverDnHandle_t|cusolverDnParams_t|cudaStream_t)\b", p):
                kinds.append("ptr")
            elif p.startswith("signed char"):
                kinds.append("char")
            elif p.startswith(("long long", "int64_t")):
                kinds.append("longlong")
            elif p.startswith("size_t"):
                kinds.append("size")
            elif p and p != "void":
                kinds.append("int")
        found[name] = kinds
    return found


def kind(ctype):
    if ctype in (ctypes.c_void_p,) or hasattr(ctype, "_type_") and ctype._type_ != "c" and \
            isinstance(ctype._type_, type):
        return "ptr"
    return {ctypes.c_char: "char", ctypes.c_longlong: "longlong", ctypes.c_int64: "longlong",
            ctypes.c_size_t: "size", ctypes.c_int: "int"}[ctype]


def test_the_declared_signatures_are_the_headers():
    declared = prototypes("cusolverDn.h", "cusolver_common.h")
    sigs = la._signatures()
    assert len(sigs) == 4 + 4 + 4 * 13
    for name, argtypes in sigs.items():
        assert name in declared, name
        assert [kind(t) for t in argtypes] == declared[name], name
    with open(os.path.join(HEADERS, "cublas_api.h")) as f:
        cublas = f.read()
    assert "CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1" in cublas
    assert "CUBLAS_OP_N = 0" in cublas and "CUBLAS_OP_T = 1" in cublas
    with open(os.path.join(HEADERS, "cusolver_common.h")) as f:
        common = f.read()
    assert "CUSOLVER_EIG_MODE_NOVECTOR = 0" in common and "CUSOLVER_EIG_MODE_VECTOR = 1" in common
    with open(os.path.join(HEADERS, "library_types.h")) as f:
        types = " ".join(f.read().split())
    for dtype, code in la._CUDA_TYPE.items():
        bits = 8 * np.finfo(dtype).dtype.itemsize
        name = f"CUDA_{'C' if dtype.kind == 'c' else 'R'}_{bits}F"
        assert f"{name} = {code}," in types, name
    for code, status in la._STATUS.items():
        assert f"{status} = {code}" in common or f"{status}={code}" in common, status


def test_the_real_libcusolver_has_every_function_declared(monkeypatch):
    monkeypatch.setattr(_libs, "_ctypes_libs", {})
    monkeypatch.setattr(_libs, "_loaded", {})
    monkeypatch.setattr(la, "_lib", None)
    try:
        lib = la._solver()  # declares each function: a missing one raises AttributeError
    except _libs.MissingLibraryError as e:
        pytest.skip(f"no cuSOLVER here: {e}")
    assert lib is la._lib and os.path.isabs(_libs.loaded()["cusolver"])
    if ON_SIMULATOR:
        assert la.cusolver_version()[0] >= 11  # cusolverGetProperty needs no device


# ---- on a GPU: the real cuSOLVER --------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_gpu_cusolver_matches_numpy(dtype):
    assert len(la.cusolver_version()) == 3
    assert "cusolver" in _libs.loaded()
    a = well_conditioned((64, 64), dtype)
    b = rand((64, 3), dtype)
    close(la.inv(d(a)), np.linalg.inv(a), dtype, 10)
    close(la.solve(d(a), d(b)), np.linalg.solve(a, b), dtype, 10)
    close(la.det(d(a / 64)), np.linalg.det(a / 64), dtype, 100)
    h = hermitian_pd((3, 16, 16), dtype)
    close(la.cholesky(d(h)), np.linalg.cholesky(h), dtype, 100)
    close(la.eigvalsh(d(h)), np.linalg.eigvalsh(h), dtype, 100)
    for shape in [(40, 24), (24, 40)]:
        x = rand(shape, dtype)
        close(la.svdvals(d(x)), np.linalg.svdvals(x), dtype, 100)
        u, s, vh = la.svd(d(x), full_matrices=False)
        close(u @ (pygpu.expand_dims(s, -1).astype(dtype) * vh), x, dtype, 100)
        q, r = la.qr(d(x))
        close(q @ r, x, dtype, 100)
    g = rand((2, 16, 16), dtype)  # general matrices: complex eigenvalues
    eig_check(g, *la.eig(d(g)), dtype)
    eig_check(g, la.eigvals(d(g)), None, dtype)
    t = np.triu(g[0]) + np.diag(np.arange(16)).astype(dtype)  # real eigenvalues
    eig_check(t, *la.eig(d(t)), dtype)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        la.inv(d(np.ones((4, 4), dtype)))


@pytest.mark.gpu
def test_gpu_inv_and_solve_of_large_matrices():
    a = well_conditioned((2048, 2048), np.float32)
    b = rand((2048, 4), np.float32)
    x = la.solve(d(a), d(b)).copy_to_host()
    assert np.linalg.norm(a.astype(np.float64) @ x - b) / np.linalg.norm(b) < 1e-4
    ai = la.inv(d(a)).copy_to_host()
    assert np.abs(ai.astype(np.float64) @ a - np.eye(2048)).max() < 1e-3


def test_norm_of_empty_arrays_is_numpys():
    for shape in ((0, 3), (2, 0), (0,)):
        for o in (None, np.inf, 1, 2, -np.inf, "fro", "nuc"):
            try:
                want = np.linalg.norm(np.zeros(shape), o)
            except (ValueError, np.linalg.LinAlgError) as exc:
                with pytest.raises(type(exc)):
                    pygpu.linalg.norm(pygpu.zeros(shape), o)
                continue
            got = pygpu.linalg.norm(pygpu.zeros(shape), o)
            assert got.copy_to_host()[()] == want, (shape, o)
