"""Creation: arange, linspace, logspace, eye, identity, tri, tril, triu, diag,
diagonal, meshgrid, indices, and the *_like forms.

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads."""

__all__ = []
NUMPY = {}  # numpy function -> implementation (np.f(d) on DeviceArrays)
ATTRIBUTES = {}  # DeviceArray attribute name -> function(array) -> value
