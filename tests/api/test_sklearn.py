"""A real client of the array API namespace: scikit-learn with
array_api_dispatch=True fits LinearDiscriminantAnalysis, PCA(svd_solver="full")
and Ridge(solver="svd"), and computes r2_score and accuracy_score, on
DeviceArrays; each gives DeviceArrays (or the same Python float) and NumPy's
answers, compared with the same calls on NumPy arrays. scikit-learn and
array-api-compat are the test-sklearn extra (pip install -e ".[test-sklearn]");
without scikit-learn these tests are skipped."""

import os

import numpy as np
import pytest

import pygpu

# scikit-learn's array API dispatch asks for SciPy's, which SciPy reads when it
# is first imported: set before scikit-learn (and so SciPy) is imported here.
os.environ["SCIPY_ARRAY_API"] = "1"
sklearn = pytest.importorskip("sklearn", minversion="1.6")
discriminant_analysis = pytest.importorskip("sklearn.discriminant_analysis")
decomposition = pytest.importorskip("sklearn.decomposition")
linear_model = pytest.importorskip("sklearn.linear_model")
metrics = pytest.importorskip("sklearn.metrics")

RNG = np.random.default_rng(20251125)
RTOL = 1e-10
# Entries near zero (a centred projection, a probability near 0 or 1) are
# compared at this absolute bound, scaled by the data's size (about 1 here).
ATOL = 1e-12

N, P = 90, 5
X = RNG.standard_normal((N, P))
X[:, 1] = 2.0 * X[:, 1] + 0.5 * X[:, 0]            # correlated, unequal scales
Y_CLASS = np.argmax(X[:, :3] + 0.7 * RNG.standard_normal((N, 3)), axis=1).astype(np.int64)
Y_REG = X @ RNG.standard_normal(P) + 0.3 + 0.1 * RNG.standard_normal(N)


@pytest.fixture
def dispatch():
    with sklearn.config_context(array_api_dispatch=True):
        yield


def dev(a):
    return pygpu.asarray(a)


def host(d):
    """d, a DeviceArray (as the array API asks of every array result), on the host."""
    assert isinstance(d, pygpu.DeviceArray), type(d)
    return d.copy_to_host()


def close(d, expected):
    np.testing.assert_allclose(host(d), expected, rtol=RTOL, atol=ATOL)


def test_linear_discriminant_analysis(dispatch):
    lda = discriminant_analysis.LinearDiscriminantAnalysis().fit(dev(X), dev(Y_CLASS))
    with sklearn.config_context(array_api_dispatch=False):
        ref = discriminant_analysis.LinearDiscriminantAnalysis().fit(X, Y_CLASS)
    close(lda.classes_, ref.classes_)
    close(lda.coef_, ref.coef_)
    close(lda.intercept_, ref.intercept_)
    close(lda.explained_variance_ratio_, ref.explained_variance_ratio_)
    close(lda.predict_proba(dev(X)), ref.predict_proba(X))
    # transform's axes come from an SVD: each column's sign is the library's
    # choice (cuSOLVER's and LAPACK's differ), so compare with the signs aligned
    got, want = host(lda.transform(dev(X))), ref.transform(X)
    np.testing.assert_allclose(got * np.sign(got[:1]) * np.sign(want[:1]), want, rtol=RTOL,
                               atol=ATOL)
    pred = lda.predict(dev(X))
    np.testing.assert_array_equal(host(pred), ref.predict(X))
    assert 0.5 < np.mean(host(pred) == Y_CLASS)    # it learned something


def test_pca_full(dispatch):
    pca = decomposition.PCA(n_components=3, svd_solver="full").fit(dev(X))
    with sklearn.config_context(array_api_dispatch=False):
        ref = decomposition.PCA(n_components=3, svd_solver="full").fit(X)
    # svd_flip fixes the signs from the data, so the components match as they are
    close(pca.components_, ref.components_)
    close(pca.mean_, ref.mean_)
    close(pca.explained_variance_, ref.explained_variance_)
    close(pca.explained_variance_ratio_, ref.explained_variance_ratio_)
    close(pca.singular_values_, ref.singular_values_)
    t = pca.transform(dev(X))
    close(t, ref.transform(X))
    close(pca.inverse_transform(t), ref.inverse_transform(ref.transform(X)))


@pytest.mark.parametrize("alpha", [1.0, [0.1, 10.0]], ids=["one-target", "two-targets"])
def test_ridge_svd(dispatch, alpha):
    y = Y_REG if np.ndim(alpha) == 0 else np.stack([Y_REG, -2.0 * Y_REG + 1.0], axis=1)
    ridge = linear_model.Ridge(alpha=alpha, solver="svd").fit(dev(X), dev(y))
    with sklearn.config_context(array_api_dispatch=False):
        ref = linear_model.Ridge(alpha=alpha, solver="svd").fit(X, y)
    close(ridge.coef_, ref.coef_)
    close(ridge.intercept_, ref.intercept_)
    close(ridge.predict(dev(X)), ref.predict(X))


def test_r2_score(dispatch):
    y_pred = Y_REG + 0.5 * RNG.standard_normal(N)
    got = metrics.r2_score(dev(Y_REG), dev(y_pred))
    with sklearn.config_context(array_api_dispatch=False):
        want = metrics.r2_score(Y_REG, y_pred)
    assert isinstance(got, float) and 0.5 < want < 1
    assert got == pytest.approx(want, rel=RTOL)
    y2, p2 = np.stack([Y_REG, 2 * Y_REG], axis=1), np.stack([y_pred, Y_REG], axis=1)
    w = RNG.uniform(0.5, 2.0, N)
    got = metrics.r2_score(dev(y2), dev(p2), sample_weight=dev(w), multioutput="raw_values")
    with sklearn.config_context(array_api_dispatch=False):
        want = metrics.r2_score(y2, p2, sample_weight=w, multioutput="raw_values")
    close(got, want)


def test_accuracy_score(dispatch):
    y_pred = np.where(RNG.uniform(size=N) < 0.3, (Y_CLASS + 1) % 3, Y_CLASS)
    w = RNG.uniform(0.5, 2.0, N)
    for kwargs in ({}, {"normalize": False}, {"sample_weight": w}):
        got = metrics.accuracy_score(dev(Y_CLASS), dev(y_pred),
                                     **{k: dev(v) if k == "sample_weight" else v
                                        for k, v in kwargs.items()})
        with sklearn.config_context(array_api_dispatch=False):
            want = metrics.accuracy_score(Y_CLASS, y_pred, **kwargs)
        assert isinstance(got, float) and 0.5 < want < N
        assert got == pytest.approx(want, rel=RTOL)


def test_namespace_is_pygpu(dispatch):
    """scikit-learn, and array-api-compat, find pygpu's own namespace through
    __array_namespace__ (no wrapper), and the array's device."""
    from sklearn.utils._array_api import get_namespace_and_device

    d = dev(X)
    xp, is_array_api, device = get_namespace_and_device(d)
    assert xp is pygpu and is_array_api
    assert device == d.device
    compat = pytest.importorskip("array_api_compat")
    assert compat.array_namespace(d, dev(Y_REG)) is pygpu
    assert compat.device(d) == d.device and compat.size(d) == N * P


def test_float32_stays_float32(dispatch):
    x32, y32 = X.astype(np.float32), Y_REG.astype(np.float32)
    ridge = linear_model.Ridge(solver="svd").fit(dev(x32), dev(y32))
    with sklearn.config_context(array_api_dispatch=False):
        ref = linear_model.Ridge(solver="svd").fit(x32, y32)
    pred = ridge.predict(dev(x32))
    assert ridge.coef_.dtype == pred.dtype == np.float32
    np.testing.assert_allclose(host(pred), ref.predict(x32), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(len(pygpu.cuda.gpus) < 2, reason="needs two devices (PYGPU_SIM_DEVICES=2)")
def test_arrays_on_a_second_device_stay_there(dispatch):
    """scikit-learn makes its arrays with device=device(X): they are made on X's device."""
    with pygpu.cuda.gpus[1]:
        x1, y1 = dev(X), dev(Y_REG)
    ridge = linear_model.Ridge(solver="svd").fit(x1, y1)
    z = decomposition.PCA(n_components=3, svd_solver="full").fit_transform(x1)
    with sklearn.config_context(array_api_dispatch=False):
        ref = linear_model.Ridge(solver="svd").fit(X, Y_REG)
        ref_z = decomposition.PCA(n_components=3, svd_solver="full").fit_transform(X)
    pred = ridge.predict(x1)
    assert pred.device.id == ridge.coef_.device.id == z.device.id == 1
    close(pred, ref.predict(X))
    close(z, ref_z)
