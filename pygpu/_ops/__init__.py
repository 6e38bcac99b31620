"""Compute on device arrays: the op table (table.py), the kernel generator
(codegen.py) and NumPy's ufuncs on DeviceArrays (ufunc.py)."""
