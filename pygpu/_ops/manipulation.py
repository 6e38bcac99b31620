"""Manipulation: concatenate, stack, split, flip, roll, squeeze, expand_dims,
broadcast_to, moveaxis, tile, repeat, pad, diff, cumulative_sum, ....

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads."""

__all__ = []
NUMPY = {}  # numpy function -> implementation (np.f(d) on DeviceArrays)
ATTRIBUTES = {}  # DeviceArray attribute name -> function(array) -> value
