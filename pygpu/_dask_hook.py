"""Registers pygpu with Dask and distributed in any process that has both,
whichever of them is imported first, without importing either.

Dask and distributed find what to do with a type through dispatch tables
(`dask.utils.Dispatch`): how big it is (`sizeof`), how to join chunks
(`concatenate_lookup`), how to put it into frames (`dask_serialize`,
`cuda_serialize`) and how to take it out again. Each table accepts a lazy
entry for a top-level module name, called the first time an object of that
module's types is looked up. This file puts one for "pygpu" into every table
pygpu.dask fills; the entry imports pygpu.dask, which registers DeviceArray for
real. So a worker that receives a DeviceArray finds its deserializer with no
user code, even where pygpu was imported before distributed.

Tables of modules already imported get their entry at once; for the others a
finder at the head of `sys.meta_path` watches for exactly those module names,
runs the module's own loader, adds the entries, and leaves once every module
is seen. It finds nothing itself and costs one set lookup per import.
"""

import importlib
import importlib.abc
import sys

# module -> the dispatch tables in it that pygpu.dask registers DeviceArray in
TABLES = {
    "dask.sizeof": ("sizeof",),
    "dask.array.dispatch": ("concatenate_lookup", "take_lookup", "einsum_lookup",
                            "empty_lookup", "percentile_lookup", "to_numpy_dispatch",
                            "to_cupy_dispatch"),
    "distributed.protocol.serialize": ("dask_serialize", "dask_deserialize"),
    "distributed.protocol.cuda": ("cuda_serialize", "cuda_deserialize"),
}

_pending = set(TABLES)


def _register_pygpu():
    importlib.import_module("pygpu.dask").register()


def _add_lazy_entries(name, module):
    """Give each table of `module` its lazy entry for pygpu's types."""
    _pending.discard(name)
    for attr in TABLES[name]:
        table = getattr(module, attr, None)
        if table is not None and hasattr(table, "register_lazy"):
            table.register_lazy("pygpu", _register_pygpu)
    if not _pending and _finder in sys.meta_path:
        sys.meta_path.remove(_finder)


class _Loader(importlib.abc.Loader):
    """A watched module's own loader, followed by its lazy entries; the module
    keeps its own loader in `__loader__` and `__spec__`."""

    def __init__(self, loader, name):
        self._loader = loader
        self._name = name

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _add_lazy_entries(self._name, module)

    def __getattr__(self, attr):
        return getattr(self._loader, attr)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name not in _pending:
            return None
        rest = sys.meta_path[sys.meta_path.index(self) + 1:] if self in sys.meta_path else []
        for finder in rest:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, name)
        return spec


_finder = _Finder()


def install():
    """Called once by `import pygpu`."""
    for name in list(_pending):
        module = sys.modules.get(name)
        if module is not None:
            _add_lazy_entries(name, module)
    if _pending and _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
