"""The types of a kernel written in Python, and Numba's rules for them.

Scalars are NumPy dtypes; arrays are (dtype, ndim, layout); tuples hold
types. The rules are Numba's where it differs from NumPy: integer
arithmetic is done in at least 64 bits (int32 + int32 is int64), a Python
int is int64 and a Python float float64 (float32 * 2.0 is float64), `/` of
integers is float64, and float ** int keeps the float's type.
"""

from dataclasses import dataclass

import numpy as np

from .errors import TypingError

_CTYPES = {
    "b": "signed char", "h": "short", "i": "int", "l": "long long", "q": "long long",
    "B": "unsigned char", "H": "unsigned short", "I": "unsigned int",
    "L": "unsigned long long", "Q": "unsigned long long",
    "f": "float", "d": "double", "?": "bool",
    "F": "pg::complex<float>", "D": "pg::complex<double>", "e": "pg::half",
}


class Type:
    """A type the translator knows."""

    ctype = None  # the C++ type, where the type has values


@dataclass(frozen=True)
class Scalar(Type):
    dtype: np.dtype

    @property
    def ctype(self):
        return _CTYPES[self.dtype.char]

    @property
    def kind(self):
        return self.dtype.kind  # b i u f

    @property
    def is_int(self):
        return self.dtype.kind in "iu"

    @property
    def is_float(self):
        return self.dtype.kind == "f"

    @property
    def is_complex(self):
        return self.dtype.kind == "c"

    @property
    def real(self):
        """The type of a complex value's parts (self for the others)."""
        return Scalar(np.dtype(np.float32 if self.dtype.char == "F" else np.float64)) \
            if self.is_complex else self

    @property
    def bits(self):
        return self.dtype.itemsize * 8

    def __str__(self):
        return "boolean" if self.kind == "b" else self.dtype.name


@dataclass(frozen=True)
class Array(Type):
    dtype: np.dtype
    ndim: int
    layout: str = "A"  # C, F or A (any)
    readonly: bool = False  # a constant array, a NumPy array not writeable: Numba's

    @property
    def element(self):
        return Scalar(self.dtype)

    @property
    def ctype(self):
        return f"pg_jit::array<{_CTYPES[self.dtype.char]}, {self.ndim}>"

    def __str__(self):
        return (f"{'readonly ' if self.readonly else ''}array({self.dtype.name}, "
                f"{self.ndim}d, {self.layout})")


@dataclass(frozen=True)
class Tuple(Type):
    items: tuple
    names: tuple = None  # a namedtuple's fields, read as attributes

    @property
    def ctype(self):
        return "pg_tuple_" + "_".join(_mangle(t) for t in self.items) if self.items else \
            "pg_tuple_empty"

    def __str__(self):
        return "(" + ", ".join(str(t) for t in self.items) + ("," if len(self.items) == 1
                                                              else "") + ")"


@dataclass(frozen=True)
class Void(Type):
    ctype = "void"

    def __str__(self):
        return "none"


@dataclass(frozen=True)
class StringLiteral(Type):
    """A str constant: only print() takes one."""

    value: str

    def __str__(self):
        return "str"


@dataclass(frozen=True)
class Global(Type):
    """A Python object the kernel names (a module, a function, cuda.grid):
    known at compile time, it has no value on the device."""

    obj: object

    def __hash__(self):
        return id(self.obj)

    def __eq__(self, other):
        return isinstance(other, Global) and other.obj is self.obj

    def __str__(self):
        return f"the Python object {self.obj!r}"


def _mangle(t):
    if isinstance(t, Scalar):
        return t.dtype.char
    if isinstance(t, Array):
        return f"A{t.dtype.char}{t.ndim}"
    if isinstance(t, Tuple):
        return "T" + "".join(_mangle(x) for x in t.items) + "E"
    raise TypeError(t)


boolean = Scalar(np.dtype(np.bool_))
int32 = Scalar(np.dtype(np.int32))
uint32 = Scalar(np.dtype(np.uint32))
int64 = Scalar(np.dtype(np.int64))
uint64 = Scalar(np.dtype(np.uint64))
float32 = Scalar(np.dtype(np.float32))
float64 = Scalar(np.dtype(np.float64))
complex128 = Scalar(np.dtype(np.complex128))
void = Void()

# what a kernel's scalars and arrays may be; float16 values compute in float32
DTYPES = tuple(np.dtype(c) for c in "?bhilqBHILQefdFD")


_SCALARS = {}


def scalar(dtype):
    found = _SCALARS.get(dtype)
    if found is not None:
        return found
    t = _scalar(dtype)
    try:
        _SCALARS[dtype] = t
    except TypeError:
        pass  # an unhashable spelling of a dtype
    return t


def _scalar(dtype):
    dtype = np.dtype(dtype)
    if dtype not in DTYPES:
        raise TypingError(f"{dtype} is not a type kernels take yet (they take bool, "
                          "integers, float16, float32, float64, complex64 and complex128)")
    # one name per type: numpy's long and longlong are both int64
    return Scalar(np.dtype(dtype.name))


def numba_int(*types):
    """Numba's integer result: at least 64 bits, signed if any operand is."""
    bits = max([64] + [t.bits for t in types if t.kind != "b"])
    signed = any(t.kind in "bi" for t in types)
    return scalar(f"{'int' if signed else 'uint'}{bits}")


def arithmetic(op, a, b):
    """The type of `a op b` for scalars a and b (op: Python's operator symbol)."""
    a, b = computing(a), computing(b)
    ints = a.kind in "biu" and b.kind in "biu"
    if (a.kind == "c" or b.kind == "c") and op in ("//", "%", "&", "|", "^", "<<", ">>"):
        raise TypingError(f"{op} of complex numbers is not defined")
    if op == "/":
        if ints:
            return float64
        return scalar(np.promote_types(_as_num(a).dtype, _as_num(b).dtype))
    if op in ("&", "|", "^") and a.kind == "b" and b.kind == "b":
        return boolean
    if op in ("&", "|", "^", "<<", ">>") and not ints:
        raise TypingError(f"{op} takes integers, not {a} and {b}")
    if ints:
        return numba_int(a, b)
    if op == "**" and a.is_float and b.kind in "biu":
        return a
    return scalar(np.promote_types(_as_num(a).dtype, _as_num(b).dtype))


def _as_num(t):
    return int64 if t.kind == "b" else float32 if t.dtype.char == "e" else t


def computing(t):
    """The type a value of type t computes in: float16 in float32 (as
    NumPy's float16 loops do), the others in their own."""
    return float32 if isinstance(t, Scalar) and t.dtype.char == "e" else t


def unify(a, b):
    """The type a variable assigned both a and b has (Numba's unification)."""
    if a == b:
        return a
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        if a.kind == "b" or b.kind == "b":
            return _as_num(b) if a.kind == "b" else _as_num(a)
        if a.is_int and b.is_int and a.kind == b.kind:
            return a if a.bits >= b.bits else b
        return scalar(np.promote_types(a.dtype, b.dtype))
    if isinstance(a, Tuple) and isinstance(b, Tuple) and len(a.items) == len(b.items):
        return Tuple(tuple(unify(x, y) for x, y in zip(a.items, b.items, strict=True)))
    if isinstance(a, Array) and isinstance(b, Array) and \
            (a.dtype, a.ndim) == (b.dtype, b.ndim):
        return Array(a.dtype, a.ndim, a.layout if a.layout == b.layout else "A",
                     a.readonly or b.readonly)
    return None


# ---- explicit signatures: Numba's strings, "void(float32[:, ::1], int64)" ------

_NAMES = {
    "boolean": "?", "bool_": "?", "b1": "?", "bool": "?",
    "int8": "b", "i1": "b", "int16": "h", "i2": "h", "int32": "i", "i4": "i",
    "int64": "q", "i8": "q", "intp": "q", "intc": "i",
    "uint8": "B", "u1": "B", "byte": "B", "uint16": "H", "u2": "H", "uint32": "I",
    "u4": "I", "uint64": "Q", "u8": "Q", "uintp": "Q", "uintc": "I",
    "float16": "e", "f2": "e", "float32": "f", "f4": "f", "float64": "d", "f8": "d",
    "double": "d", "float_": "d",
    "complex64": "F", "c8": "F", "complex128": "D", "c16": "D",
}


def parse_type(text):
    """One type of a signature: `float32`, `float32[:, :]`, `int64[::1]`."""
    text = text.strip()
    base, _, rest = text.partition("[")
    base = base.strip()
    if base not in _NAMES:
        raise TypingError(f"signature: unknown type {base!r} (use names such as "
                          "float32, int64, boolean)")
    dtype = np.dtype(_NAMES[base])
    if not rest:
        return scalar(dtype)
    axes = [a.strip().replace(" ", "") for a in rest.rstrip().rstrip("]").split(",")]
    if not all(a in (":", "::1") for a in axes):
        raise TypingError(f"signature: array type {text!r} must be like float32[:, :] "
                          "or float32[:, ::1]")
    layout = "A"
    if axes[-1] == "::1" and all(a == ":" for a in axes[:-1]):
        layout = "C"
    elif axes[0] == "::1" and all(a == ":" for a in axes[1:]) and len(axes) > 1:
        layout = "F"
    return Array(dtype, len(axes), layout)


def parse_signature(sig):
    """(argument types, return type or None) of a Numba signature string, or
    of a Numba signature object (by its str), or of a tuple of type strings."""
    if isinstance(sig, (tuple, list)):
        return tuple(parse_type(str(t)) for t in sig), None
    text = str(sig).strip()
    ret = None
    if "(" not in text:
        raise TypingError(f"signature {text!r} must be like 'void(float32[:], int64)'")
    head, _, args = text.partition("(")
    if head.strip() and head.strip() != "void" and head.strip() != "none":
        ret = parse_type(head)
    args = args.rstrip()
    if not args.endswith(")"):
        raise TypingError(f"signature {text!r} must end with ')'")
    parts, depth, cur = [], 0, ""
    for ch in args[:-1]:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += {"[": 1, "]": -1}.get(ch, 0)
        cur += ch
    if cur.strip():
        parts.append(cur)
    return tuple(parse_type(p) for p in parts if p.strip()), ret
