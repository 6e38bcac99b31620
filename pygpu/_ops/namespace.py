"""The array API namespace (version 2024.12): the dtypes, __array_namespace_info__,
isdtype, result_type, can_cast, finfo, iinfo, astype, and the standard's names
for NumPy's functions (acos, pow, concat, permute_dims, ...).

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads."""

__all__ = []
NUMPY = {}  # numpy function -> implementation (np.f(d) on DeviceArrays)
ATTRIBUTES = {}  # DeviceArray attribute name -> function(array) -> value
