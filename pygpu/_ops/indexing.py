"""Indexing with integer arrays and boolean masks (getting and setting, with
NumPy's rules), and take, take_along_axis, put, nonzero, argwhere, flatnonzero,
compress, extract, place.

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads."""

__all__ = []
NUMPY = {}  # numpy function -> implementation (np.f(d) on DeviceArrays)
ATTRIBUTES = {}  # DeviceArray attribute name -> function(array) -> value
