"""Fused expressions: pygpu.fuse (a Python function over arrays and scalars:
operators, ufuncs, where, and a final reduction, compiled to one kernel) and
pygpu.vectorize (a scalar function with signatures), as cupy.fuse and
numba.vectorize(target="cuda").

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads."""

__all__ = []
NUMPY = {}  # numpy function -> implementation (np.f(d) on DeviceArrays)
ATTRIBUTES = {}  # DeviceArray attribute name -> function(array) -> value
