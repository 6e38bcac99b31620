"""The areas of pygpu/_ops (creation, manipulation, indexing, sorting, the
array API's names): every name an area declares is reachable where users look
for it, and names no area has fail as Python's do."""

import numpy as np
import pytest

import pygpu
from pygpu._ops import AREAS, merged


def test_every_area_name_is_in_the_pygpu_namespace():
    names = merged("__all__")
    for name, module in names.items():
        assert getattr(pygpu, name) is getattr(module, name)
        assert name in pygpu.__all__
        assert name in dir(pygpu)


def test_every_numpy_entry_is_a_numpy_function_with_a_callable():
    for func, impl in merged("NUMPY").items():
        assert callable(impl)
        assert getattr(np, func.__name__, None) is func or func.__module__.startswith("numpy")


def test_every_attribute_is_found_on_an_array():
    d = pygpu.asarray(np.arange(6.0).reshape(2, 3))
    for name in merged("ATTRIBUTES"):
        assert hasattr(d, name), name


def test_a_missing_attribute_raises_attribute_error_naming_it():
    d = pygpu.asarray(np.arange(3.0))
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        d.no_such_name  # noqa: B018
    assert not hasattr(d, "no_such_name")
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        pygpu.no_such_name  # noqa: B018


def test_areas_are_modules_of_pygpu_ops():
    import importlib

    for area in AREAS:
        mod = importlib.import_module(f"pygpu._ops.{area}")
        assert isinstance(mod.__all__, list) and isinstance(mod.NUMPY, dict)
        assert isinstance(mod.ATTRIBUTES, dict)
