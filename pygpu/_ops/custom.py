"""User kernels from C snippets, as CuPy's: ElementwiseKernel (typed in_params and
out_params, a C body, type placeholders, broadcasting, out=) and ReductionKernel
(map_expr, reduce_expr, post_map_expr, identity, axis, keepdims), built on the
op-table generator's templates and compile path.

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads."""

__all__ = []
NUMPY = {}  # numpy function -> implementation (np.f(d) on DeviceArrays)
ATTRIBUTES = {}  # DeviceArray attribute name -> function(array) -> value
