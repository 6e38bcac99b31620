"""Search, sort and sets: sort, argsort, searchsorted, unique and unique_*,
isin, bincount, histogram, partition, argpartition, lexsort.

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads."""

__all__ = []
NUMPY = {}  # numpy function -> implementation (np.f(d) on DeviceArrays)
ATTRIBUTES = {}  # DeviceArray attribute name -> function(array) -> value
