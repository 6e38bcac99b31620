"""Numba's type names, as `from numba.cuda import float32` and `from
numba.cuda.types import int32` give them: `pygpu.cuda.float32`,
`pygpu.cuda.types.int32`.

Each works where Numba's does in a kernel's program: as a dtype
(`cuda.shared.array(16, float32)`, `np.dtype(float32)`), as a cast in a
kernel (`float32(0.0)`), and in signatures (`float32[:, ::1]` is a C-order
2-d array, `void(float32[:], int64)` and `int64(int64)` signatures,
`(int32[:, ::1],)` a tuple of argument types). A signature is read by its
text, so `@cuda.jit(void(float32[:]))` and `@cuda.jit("void(float32[:])")`
are the same. On the host a type name called with a number converts it to
the NumPy scalar type (`float32(1.5)` is `np.float32(1.5)`).
"""

import numpy as np


def _axes(item):
    items = item if isinstance(item, tuple) else (item,)
    out = []
    for s in items:
        if not isinstance(s, slice) or s.start is not None or s.stop is not None or \
                s.step not in (None, 1):
            raise TypeError(f"an array type is written like float32[:, ::1], not with {s!r}")
        out.append("::1" if s.step == 1 else ":")
    return ", ".join(out)


class _Signature:
    """ret(args...): a signature, read by its text."""

    def __init__(self, ret, args):
        self.return_type = ret
        self.args = tuple(args)

    def __str__(self):
        return f"{self.return_type}({', '.join(str(a) for a in self.args)})"

    __repr__ = __str__


class _Named:
    """A type name: its text is what the signature parser reads."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    def __repr__(self):
        return self.name

    def __call__(self, *args):
        if all(isinstance(a, _Named) for a in args):
            return _Signature(self, args)
        return self._convert(*args)

    def _convert(self, *args):
        raise TypeError(f"{self.name} is not a value type")


class ScalarName(_Named):
    """A scalar type: a dtype, a cast, and the element of array types."""

    def __init__(self, name, dtype):
        super().__init__(name)
        self.dtype = np.dtype(dtype)

    def __getitem__(self, item):
        return ArrayName(f"{self.name}[{_axes(item)}]", self)

    def _convert(self, *args):
        return self.dtype.type(*args)


class ArrayName(_Named):
    """An array type, float32[:, ::1]."""

    def __init__(self, name, element):
        super().__init__(name)
        self.dtype = element.dtype


void = _Named("void")
none = void

_NAMES = {
    "boolean": "?", "b1": "?", "bool_": "?",
    "int8": "b", "int16": "h", "int32": "i", "int64": "q", "intp": "q", "intc": "i",
    "uint8": "B", "uint16": "H", "uint32": "I", "uint64": "Q", "uintp": "Q", "uintc": "I",
    "byte": "B", "i1": "b", "i2": "h", "i4": "i", "i8": "q",
    "u1": "B", "u2": "H", "u4": "I", "u8": "Q",
    "float16": "e", "float32": "f", "float64": "d", "double": "d", "f2": "e", "f4": "f",
    "f8": "d", "complex64": "F", "complex128": "D", "c8": "F", "c16": "D",
}
NAMES = tuple(_NAMES) + ("void", "none")

for _name, _char in _NAMES.items():
    globals()[_name] = ScalarName(_name, _char)
