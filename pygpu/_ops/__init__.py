"""Compute on device arrays: the op table (table.py), the kernel generator
(codegen.py) and NumPy's ufuncs on DeviceArrays (ufunc.py), the reductions
(reduction.py), and the areas of NumPy's and the array API's functions built on
them.

Each area is one module of AREAS, with three names that the rest of pygpu
reads (so adding a function is its code plus one entry in its own module):

- ``__all__``: the names it adds to the ``pygpu`` namespace
  (``pygpu.arange``, found by pygpu/__init__.py's ``__getattr__``);
- ``NUMPY``: ``{numpy function: implementation}``, what ``np.sort(d)`` runs
  (DeviceArray.__array_function__, methods.py);
- ``ATTRIBUTES``: ``{name: function(array) -> value}``, DeviceArray's
  attributes written in Python (``d.sort``, ``d.mT``; array.c's getattro
  asks methods.attribute for a name the C type does not have). A method is
  ``method(f)``: the value is f bound to the array.

An area module is imported at the first name it may hold, never by
``import pygpu``, and does no device work at import.
"""

import types

AREAS = ("namespace", "indexing", "creation", "manipulation", "sorting", "custom", "fusion")


def method(f):
    """An ATTRIBUTES entry for a method: f(array, ...) bound to the array."""
    return lambda a: types.MethodType(f, a)


_merged = {}


def merged(what):
    """{name or function: value}: what (``NUMPY``, ``ATTRIBUTES``) of every
    area, the first area holding a key winning; ``"__all__"``: a dict of the
    names to their area module."""
    table = _merged.get(what)
    if table is None:
        import importlib

        table = {}
        for area in AREAS:
            mod = importlib.import_module(f"{__name__}.{area}")
            if what == "__all__":
                for name in mod.__all__:
                    table.setdefault(name, mod)
            else:
                for key, value in getattr(mod, what).items():
                    table.setdefault(key, value)
        if what == "NUMPY":  # np.linalg.*, np.fft.*, np.einsum (importing loads no library)
            for name in ("pygpu.linalg", "pygpu.fft"):
                table.update(importlib.import_module(name).NUMPY)
        _merged[what] = table
    return table
