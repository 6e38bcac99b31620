"""The translations of @cuda.jit kernels in the disk cache (pygpu/_jit/memo.py):
a new process's first launch takes a kernel's C++ from the cache, and every
edit of what the translation reads (the kernel, a device function it calls,
a constant it names) gives another key. Each module here is written to the
same file and imported afresh, as a new process would after an edit."""

import importlib.util
import itertools
import linecache
import os

import numpy as np
import pytest

import pygpu
from pygpu._jit import memo

TEMPLATE = """
import math
import numpy as np
from pygpu import cuda

N = {n}
SCALE = np.float32({scale})
TABLE = np.array({table}, dtype=np.float32)


@cuda.jit(device=True)
def helper(i):
    return i * {factor}


@cuda.jit
def kernel(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = N + helper(i) + SCALE * TABLE[i % 3] + math.floor(0.5)


@cuda.jit
def other(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = {other}
"""

_names = itertools.count()


def load(path, **values):
    """The module of TEMPLATE with values, written to path and imported."""
    v = dict(n=3, factor=2, scale=1.5, table=[1, 2, 3], other=7)
    v.update(values)
    path.write_text(TEMPLATE.format(**v))
    os.utime(path, ns=(next(_names) * 10**9, next(_names) * 10**9))  # a new mtime
    linecache.checkcache(str(path))
    spec = importlib.util.spec_from_file_location(f"pg_memo_mod{next(_names)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(module, name="kernel"):
    d = pygpu.zeros(8, np.float32)
    getattr(module, name)[1, 32](d)
    return d.copy_to_host()


def expected(n=3, factor=2, scale=1.5, table=(1, 2, 3)):
    i = np.arange(8)
    return (n + i * factor + np.float32(scale) * np.asarray(table, np.float32)[i % 3]).astype(
        np.float32)


@pytest.fixture
def loads(monkeypatch):
    """Every memo.load's answer: the kept translation, or None."""
    seen = []
    original = memo.load

    def spy(k):
        found = original(k)
        seen.append(found is not None)
        return found
    monkeypatch.setattr(memo, "load", spy)
    return seen


def test_a_new_process_takes_the_kept_translation(tmp_path, own_kernel_cache, loads):
    path = tmp_path / "kernels_memo.py"
    np.testing.assert_array_equal(run(load(path)), expected())
    assert loads == [False]
    assert len(list(tmp_path.glob("*.jit.json"))) == 1
    np.testing.assert_array_equal(run(load(path)), expected())  # the same file again
    assert loads == [False, True]


@pytest.mark.parametrize("edit", [dict(n=5), dict(factor=3), dict(scale=2.5),
                                  dict(table=[4, 5, 6])])
def test_an_edit_of_what_the_kernel_reads_is_another_key(tmp_path, own_kernel_cache, loads,
                                                         edit):
    # a constant it names, the device function it calls, a NumPy scalar, an
    # array it reads as constants
    path = tmp_path / "kernels_memo.py"
    np.testing.assert_array_equal(run(load(path)), expected())
    np.testing.assert_array_equal(run(load(path, **edit)), expected(**edit))
    assert loads == [False, False]
    np.testing.assert_array_equal(run(load(path)), expected())  # and back: kept
    assert loads == [False, False, True]


def test_an_edit_of_another_kernel_keeps_this_ones(tmp_path, own_kernel_cache, loads):
    path = tmp_path / "kernels_memo.py"
    run(load(path))
    np.testing.assert_array_equal(run(load(path, other=9), "other"), np.full(8, 9, np.float32))
    np.testing.assert_array_equal(run(load(path, other=9)), expected())
    assert loads == [False, False, True]


def test_a_kernel_that_names_a_device_array_is_not_kept(tmp_path, own_kernel_cache, loads):
    # the C++ holds the array's address: a new process must translate again
    path = tmp_path / "kernels_memo_global.py"
    path.write_text(
        "from pygpu import cuda\n"
        "import numpy as np, pygpu\n"
        "G = pygpu.asarray(np.arange(8, dtype=np.float32))\n"
        "@cuda.jit\n"
        "def k(a):\n"
        "    i = cuda.grid(1)\n"
        "    if i < a.size:\n"
        "        a[i] = G[i] * 2\n")
    spec = importlib.util.spec_from_file_location("pg_memo_global", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    d = pygpu.zeros(8, np.float32)
    module.k[1, 32](d)
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(8, dtype=np.float32) * 2)
    assert loads == []  # no key
    assert not list(tmp_path.glob("*.jit.json"))


def test_a_user_module_or_object_gives_no_key():
    import types

    class Box:
        n = 3

    user = types.ModuleType("user_config")
    assert memo._value(user, set()) is None  # its attributes are not in the key
    assert memo._value(Box, set()) is None
    assert memo._value(Box(), set()) is None
    assert memo._value(np, set()) == ("module", "numpy")
    assert memo._value((1, 2.5, np.float32(2)), set()) is not None


FACTORY = """
from pygpu import cuda


def make(k):
    @cuda.jit(device=True)
    def f(x):
        return x + k
    return f


f1 = make(1)
f2 = make({k2})


@cuda.jit
def kernel(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = f1(i) * 100 + f2(i)
"""


def _import(path, text):
    path.write_text(text)
    os.utime(path, ns=(next(_names) * 10**9, next(_names) * 10**9))
    linecache.checkcache(str(path))
    spec = importlib.util.spec_from_file_location(f"pg_memo_mod{next(_names)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_device_functions_of_one_factory_are_each_described(tmp_path, own_kernel_cache, loads):
    # f1 and f2 share their code and differ in their closures: each one's
    # closure is in the key (not only the first one met)
    path = tmp_path / "kernels_memo_factory.py"
    i = np.arange(8)
    for k2 in (2, 3, 2):
        got = run(_import(path, FACTORY.format(k2=k2)))
        np.testing.assert_array_equal(got, ((i + 1) * 100 + i + k2).astype(np.float32))
    assert loads == [False, False, True]


def test_the_key_reads_the_source_the_translation_read(tmp_path, own_kernel_cache):
    # the file edited while the process runs (and linecache refreshed, as a
    # traceback does): the key of a later signature still describes the
    # lines that kernel was translated from
    from pygpu._jit import types as T
    path = tmp_path / "kernels_memo_edit.py"
    module = load(path)
    run(module)
    f32 = T.parse_signature("void(float32[:])")[0]
    f64 = T.parse_signature("void(float64[:])")[0]
    before = memo.key(module.kernel, f64)
    path.write_text(TEMPLATE.format(n=9, factor=2, scale=1.5, table=[1, 2, 3], other=7))
    os.utime(path, ns=(next(_names) * 10**9, next(_names) * 10**9))
    linecache.checkcache(str(path))
    assert memo.key(module.kernel, f64) == before
    assert memo.key(module.kernel, f32) != before


def test_subclasses_of_numbers_and_tuples_give_no_key():
    import collections
    Cfg = collections.namedtuple("Cfg", "n m")

    class Big(int):
        pass
    assert memo._value(Cfg(1, 2), set()) is None  # fields read by name
    assert memo._value(Big(3), set()) is None
    assert memo._value((1, 2), set()) == ("tuple", [("int", "1"), ("int", "2")])
