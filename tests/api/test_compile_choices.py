"""The compile-time choices of sort.h, philox.h and index.h (each module's
_DEFINES, chosen by measurement and changed with _set_defines or the
PYGPU_*_DEFINES variables for experiments): every choice gives the same
answer, so that an experiment measures speed alone and the choices not taken
by default stay correct."""
import numpy as np
import pytest
from test_sorting import descending_order

import pygpu
from pygpu import random as prandom
from pygpu._ops import indexing, sorting

# the defaults before the H200 run of 2026-11-29, and the ones after it
SORT_CHOICES = [
    dict(PG_SORT_RANK=0, PG_SORT_MATCH=0, PG_SORT_THREADS=256, PG_SORT_ITEMS=15,
         PG_SORT_ITEMS_WIDE=15, PG_SORT_MIN_BLOCKS=4, PG_SORT_HIST_ITEMS=1,
         PG_SORT_HIST_BLOCKS=2),
    dict(PG_SORT_RANK=1, PG_SORT_MATCH=0, PG_SORT_THREADS=256, PG_SORT_ITEMS=15),
    dict(PG_SORT_RANK=1, PG_SORT_MATCH=1, PG_SORT_THREADS=384, PG_SORT_ITEMS=23,
         PG_SORT_ITEMS_WIDE=14, PG_SORT_MIN_BLOCKS=2, PG_SORT_HIST_ITEMS=16,
         PG_SORT_HIST_BLOCKS=4),
]


@pytest.fixture
def restore():
    saved = [(m, dict(m._DEFINES)) for m in (sorting, prandom, indexing)]
    yield
    for m, d in saved:
        m._set_defines(**d)


@pytest.mark.parametrize("choice", range(len(SORT_CHOICES)))
def test_every_sort_choice_sorts_as_numpy(restore, choice):
    sorting._set_defines(**SORT_CHOICES[choice])
    rng = np.random.default_rng(choice)
    n = 3 * 384 * 23 + 17  # several tiles of either choice, and a ragged last one
    f = rng.standard_normal(n).astype(np.float32)
    f[::97] = np.nan
    f[1::89] = 0.5  # ties: a stable sort keeps their order
    i = rng.integers(-2**40, 2**40, n)
    for x in (f, i, np.nan_to_num(f * 100).astype(np.int16)):
        d = pygpu.asarray(x)
        np.testing.assert_array_equal(pygpu.sort(d).copy_to_host(), np.sort(x, kind="stable"))
        np.testing.assert_array_equal(pygpu.argsort(d).copy_to_host(),
                                      np.argsort(x, kind="stable"))
        np.testing.assert_array_equal(pygpu.argsort(d, descending=True).copy_to_host(),
                                      descending_order(x))


@pytest.mark.parametrize("select", [0, 1])
def test_every_rng_choice_gives_the_same_bits(restore, select):
    prandom._set_defines(PG_RNG_SELECT=select)
    got = pygpu.random.default_rng(5).standard_normal(4099, dtype=np.float32).copy_to_host()
    prandom._set_defines(PG_RNG_SELECT=1 - select)
    want = pygpu.random.default_rng(5).standard_normal(4099, dtype=np.float32).copy_to_host()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("batch", [0, 1])
def test_every_mask_choice_selects_as_numpy(restore, batch):
    indexing._set_defines(PG_INDEX_BATCH=batch)
    rng = np.random.default_rng(batch)
    for dtype in (np.float32, np.float64, np.int8, np.complex128):
        x = rng.standard_normal(70001).astype(dtype)
        d = pygpu.asarray(x)
        m = x.real > 0.5
        np.testing.assert_array_equal(d[pygpu.asarray(m)].copy_to_host(), x[m])
