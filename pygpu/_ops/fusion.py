"""Fused expressions: pygpu.fuse (a Python function over arrays and scalars:
operators, ufuncs, where, and a final reduction, compiled to one kernel) and
pygpu.vectorize (a scalar function with signatures), as cupy.fuse and
numba.vectorize(target="cuda").

The function is traced, not parsed: it is called once per signature of its
arguments' types with tracers (_Tracer), which record an expression DAG whose
nodes are ops of the op table (table.py), each typed by NumPy's rules
(numpy.ufunc.resolve_dtypes, Python scalars weak as NEP 50 says). The DAG is
then one op of the table's kind: its C code evaluates every node per element
with the table's code for the node's loop, so that the generator (codegen.py:
contiguous and strided layouts, scalars by value, UNROLL loads in flight),
the one compile path and its caches, and ufunc.py's broadcasting and launch
all serve it unchanged. `sin(x) * 2 + sqrt(abs(x))` reads x once and writes
once.

A final reduction (`.sum()`, `np.sum(e)`, `max`, `min`, `prod`, with axis,
dtype and keepdims, or `np.add.reduce(e)`) of an expression of one array is
one pass: the expression is the map of a Reduction (table.py) that
reduction.py's one template runs (`_map_reduce`). Otherwise (`mean`, `any`,
`all`, or an expression of several arrays or of scalar arguments, which the
reduction kernels cannot take) the fused elementwise kernel writes the
expression and pygpu's reduction reads it: two passes.

pygpu.vectorize(signatures)(f) picks the first signature that takes the
arguments by safe casting (numba.vectorize's rule), and traces f as fuse
does, on tracers of the signature's types, its result cast to the
signature's; a body the tracer cannot take (math.sin, `if` on a value)
becomes a device function of pygpu.cuda.jit (pygpu/_jit) applied by a
@cuda.jit kernel to the broadcast inputs, as Numba does.

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads."""

import functools
import hashlib
import math
import threading

import numpy as np

from .._core import DeviceArray
from . import ufunc as _uf
from .table import DEVICE_TYPES, OPS, Op, canonical

__all__ = ["fuse", "vectorize"]
NUMPY = {}  # numpy function -> implementation (np.f(d) on DeviceArrays)
ATTRIBUTES = {}  # DeviceArray attribute name -> function(array) -> value

_WEAK = {bool: "?", int: "q", float: "d", complex: "D"}  # a Python scalar's kernel type
_REDUCTIONS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
               "amax": np.max, "amin": np.min, "mean": np.mean, "any": np.any,
               "all": np.all}
_ARRAY_FUNCTIONS = {np.where: "where", **{f: n for n, f in _REDUCTIONS.items()}}


def _unsupported(what, hint=None):
    return TypeError(f"pygpu.fuse: {what} is not supported in a fused function; " + (
        hint or "it takes operators, numpy's ufuncs (numpy.sin, ...), numpy.where, "
        "astype, and one final reduction (sum, prod, max, min, mean, any, all)"))


class _Node:
    """One value of the trace: kind "arg" (the function's argument `index`),
    "const" (a constant `value`), "op" (`op` on `args` with `loop`), "cast",
    "where", or "reduce" (a final reduction: `name`, `kwargs`). `char` is its
    type; `weak` the Python type of a weak scalar (NEP 50), else None;
    `scalar` whether it is one value for every element (a constant, or an
    argument that is a scalar: an op's code may differ, table.Op.masked)."""

    __slots__ = ("kind", "char", "weak", "index", "value", "op", "loop", "args", "name",
                 "kwargs", "scalar", "exponent")

    def __init__(self, kind, char, weak=None, index=None, value=None, op=None, loop=None,
                 args=(), name=None, kwargs=None, scalar=False):
        self.kind, self.char, self.weak, self.index, self.value = kind, char, weak, index, value
        self.op, self.loop, self.args, self.name, self.kwargs = op, loop, args, name, kwargs
        self.scalar = scalar or kind == "const"
        self.exponent = False  # an argument that is an integer power's exponent


class _Tracer:
    """What a fused function sees for a value: operators, numpy's ufuncs
    (__array_ufunc__), numpy.where and the reductions (__array_function__),
    astype and the reduction methods record nodes; everything that needs a
    concrete value (bool(), float(), math.*, indexing) is a TypeError."""

    __slots__ = ("node",)
    __array_priority__ = 1000

    def __init__(self, node):
        self.node = node

    dtype = property(lambda self: np.dtype(self.node.char))

    # ---- ufuncs and the functions numpy dispatches ---------------------------------
    def __array_ufunc__(self, np_ufunc, method, *inputs, **kwargs):
        if method == "reduce" and np_ufunc.__name__ in ("add", "multiply", "maximum",
                                                        "minimum"):
            name = {"add": "sum", "multiply": "prod", "maximum": "max",
                    "minimum": "min"}[np_ufunc.__name__]
            if len(inputs) != 1:
                raise _unsupported(f"numpy.{np_ufunc.__name__}.reduce with these arguments")
            return _reduce(name, inputs[0], dict(kwargs, axis=kwargs.get("axis", 0)))
        if method != "__call__":
            raise _unsupported(f"numpy.{np_ufunc.__name__}.{method}")
        if kwargs:
            raise _unsupported(f"numpy.{np_ufunc.__name__} with {sorted(kwargs)[0]}=")
        return _apply(np_ufunc.__name__, inputs)

    def __array_function__(self, func, types, args, kwargs):
        name = _ARRAY_FUNCTIONS.get(func)
        if name is None:
            raise _unsupported(f"numpy.{func.__name__}")
        if name == "where":
            if len(args) != 3 or kwargs:
                raise _unsupported("numpy.where without x and y")
            return _where(*args)
        if len(args) > 2:
            raise _unsupported(f"numpy.{name} with positional arguments after axis")
        return _reduce(name, args[0], dict(kwargs, **({"axis": args[1]} if args[1:] else {})))

    # ---- methods --------------------------------------------------------------------
    def astype(self, dtype):
        char = _device_char(np.dtype(dtype))
        return _Tracer(_Node("cast", char, args=(self.node,)))

    def sum(self, axis=None, dtype=None, keepdims=False):
        return _reduce("sum", self, {"axis": axis, "dtype": dtype, "keepdims": keepdims})

    def prod(self, axis=None, dtype=None, keepdims=False):
        return _reduce("prod", self, {"axis": axis, "dtype": dtype, "keepdims": keepdims})

    def max(self, axis=None, keepdims=False):
        return _reduce("max", self, {"axis": axis, "keepdims": keepdims})

    def min(self, axis=None, keepdims=False):
        return _reduce("min", self, {"axis": axis, "keepdims": keepdims})

    def mean(self, axis=None, dtype=None, keepdims=False):
        return _reduce("mean", self, {"axis": axis, "dtype": dtype, "keepdims": keepdims})

    def any(self, axis=None, keepdims=False):
        return _reduce("any", self, {"axis": axis, "keepdims": keepdims})

    def all(self, axis=None, keepdims=False):
        return _reduce("all", self, {"axis": axis, "keepdims": keepdims})

    # ---- what needs a value ------------------------------------------------------------
    def __bool__(self):
        raise _unsupported("Python control flow (if, and, or, bool()) on a traced value",
                           "use numpy.where(condition, x, y)")

    def __float__(self):
        raise _unsupported("float(), int() or a math.* function on a traced value",
                           "use numpy's ufunc (numpy.sin, not math.sin)")

    __int__ = __index__ = __complex__ = __float__

    def __getitem__(self, key):
        raise _unsupported("indexing a traced value")

    def __iter__(self):
        raise _unsupported("iterating over a traced value")

    def __getattr__(self, name):
        if name.startswith("__"):  # protocols numpy and Python probe for
            raise AttributeError(name)
        raise _unsupported(f"the attribute {name!r} of a traced value")

    __hash__ = None


def _binary(name, reflected=False):
    if reflected:
        return lambda self, other: _apply(name, (other, self))
    return lambda self, other: _apply(name, (self, other))


for _dunder, _name in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                       ("truediv", "divide"), ("floordiv", "floor_divide"),
                       ("mod", "remainder"), ("pow", "power"), ("and", "bitwise_and"),
                       ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                       ("lshift", "left_shift"), ("rshift", "right_shift")):
    setattr(_Tracer, f"__{_dunder}__", _binary(_name))
    setattr(_Tracer, f"__r{_dunder}__", _binary(_name, reflected=True))


def _power(self, other):
    """`x ** other`: NumPy's shortcuts for a Python int 2 or -1 or a Python
    float 0.5 (ufunc.power_shortcut), as the unfused expression runs."""
    unary = _uf.power_shortcut(self.node.char, other)
    return _apply(unary, (self,)) if unary is not None else _apply("power", (self, other))


_Tracer.__pow__ = _power
for _dunder, _name in (("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                       ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")):
    setattr(_Tracer, f"__{_dunder}__", _binary(_name))
for _dunder, _name in (("neg", "negative"), ("pos", "positive"), ("abs", "absolute"),
                       ("invert", "invert")):
    setattr(_Tracer, f"__{_dunder}__", lambda self, _n=_name: _apply(_n, (self,)))
del _dunder, _name


def _device_char(dtype):
    if dtype.char not in DEVICE_TYPES:
        raise TypeError(f"pygpu.fuse: pygpu does not support dtype {dtype} on the device")
    return canonical(dtype.char)


def _node_of(x):
    """The node of a tracer, or a constant's node (a weak Python scalar or a
    NumPy scalar of a device dtype)."""
    if isinstance(x, _Tracer):
        if x.node.kind == "reduce":
            raise _unsupported("an operation on the result of a reduction",
                               "a reduction must be the function's result")
        return x.node
    if isinstance(x, np.generic):  # before float: numpy.float64 is a float
        return _Node("const", _device_char(x.dtype), value=x)
    if isinstance(x, bool):
        return _Node("const", "?", value=x)
    if isinstance(x, (int, float, complex)):
        return _Node("const", _WEAK[type(x)], weak=type(x), value=x)
    if isinstance(x, DeviceArray):
        raise _unsupported("a DeviceArray that is not an argument (a closure's or a "
                           "global's); pass it as an argument")
    raise _unsupported(f"an operand of type {type(x).__name__}")


def _given(node):
    return node.weak if node.weak is not None else np.dtype(node.char)


def _apply(name, inputs):
    op = OPS.get(name)
    if op is None:
        raise _unsupported(f"numpy.{name}")
    if op.nout != 1:
        raise _unsupported(f"numpy.{name} (more than one output)")
    if len(inputs) != op.nin:
        raise TypeError(f"{name}() takes {op.nin} arguments, {len(inputs)} given")
    args = tuple(_node_of(x) for x in inputs)
    resolved = op.ufunc.resolve_dtypes(tuple(_given(a) for a in args) + (None,))
    chars = [_device_char(d) for d in resolved]
    loop = ("".join(chars[:op.nin]), "".join(chars[op.nin:]))
    if loop not in op.loops:
        raise TypeError(f"pygpu.fuse: {name} has no loop for {loop[0]}->{loop[1]}")
    if name == "power" and loop[0][1] in "bhiq":  # NumPy refuses negative exponents
        e = args[1]
        if e.kind == "const":
            _uf._refuse_negative_exponent(e.value)
        elif e.kind == "arg":
            e.exponent = True  # checked at each call (_run)
        else:
            raise _unsupported("an integer power whose exponent the function computes",
                               "pass the exponent as an argument, which is checked for "
                               "negative values as NumPy does")
    for a, c in zip(args, loop[0], strict=True):
        if a.weak is int and c in "bBhHiIqQ":
            if a.kind == "const":
                _check_int(a.value, c)
            else:  # an argument: checked at each call (_run)
                a.value = (a.value or "") + c
    return _Tracer(_Node("op", loop[1][0], op=op, loop=loop, args=args))


def _check_int(value, char):
    """NumPy's OverflowError for a Python int that the loop's type cannot hold
    (NEP 50)."""
    info = np.iinfo(np.dtype(char))
    if not info.min <= value <= info.max:
        raise OverflowError(f"Python integer {value} out of bounds for {np.dtype(char)}")


def _where(cond, x, y):
    c, a, b = (_node_of(v) for v in (cond, x, y))
    char = _device_char(np.result_type(_given(a), _given(b)))
    return _Tracer(_Node("where", char, args=(c, a, b)))


def _reduce(name, x, kwargs):
    if not isinstance(x, _Tracer):
        raise _unsupported(f"numpy.{name} of a value that is not traced")
    node = _node_of(x)
    kwargs = {k: v for k, v in kwargs.items() if v is not None and v is not False}
    bad = set(kwargs) - {"axis", "dtype", "keepdims"}
    if bad:
        raise _unsupported(f"{name} with {sorted(bad)[0]}=")
    return _Tracer(_Node("reduce", node.char, args=(node,), name=name, kwargs=kwargs))


# ---- rendering ---------------------------------------------------------------------------

def _literal(node):
    """C source of a finite constant in its kernel type (storage)."""
    v, c = node.value, node.char
    if c == "?":
        return "true" if v else "false"
    if c in "bBhHiIqQ":
        return f"{int(v)}LL" if int(v) < 2 ** 63 else f"{int(v)}ULL"
    if c in "FD":
        v = complex(v)
        real = "double" if c == "D" else "float"
        return f"pg::complex<{real}>{{{float(v.real)!r}, {float(v.imag)!r}}}"
    return f"{float(v)!r}"


def _finite(node):
    v = node.value
    return not isinstance(v, (float, complex, np.inexact)) or np.isfinite(v)


def _render(result, leaves):
    """The C code (over in0, in1, ... as a table op's) of the DAG whose result
    node is `result`, and the leaves in kernel-input order: arguments, and
    constants that are not finite (passed by value). Every node is one
    block: its op's code with its own T/R typedefs and in/out variables."""
    from .codegen import compute, storage

    names, lines = {}, []
    for k, leaf in enumerate(leaves):
        lines.append(f"const T{k} a{k} = in{k};")
        names[id(leaf)] = f"a{k}"

    def visit(node):
        key = id(node)
        if key in names:
            return names[key]
        if node.kind == "const":
            return f"pg::cast<{storage(node.char)}>({_literal(node)})"
        args = [visit(a) for a in node.args]
        var = f"n{len(names)}"
        names[key] = var
        st = storage(node.char)
        if node.kind == "cast":
            lines.append(f"const {st} {var} = pg::cast<{st}>({args[0]});")
        elif node.kind == "where":
            lines.append(f"const {st} {var} = pg::cast<bool>({args[0]}) ? "
                         f"pg::cast<{st}>({args[1]}) : pg::cast<{st}>({args[2]});")
        else:
            ins, outs = node.loop
            mask = "".join("s" if a.scalar else "a" for a in node.args)
            head = " ".join([f"typedef {compute(c)} T{i};" for i, c in enumerate(ins)] +
                            [f"typedef {compute(outs[0])} R0;"] +
                            [f"T{i} in{i} = pg::cast<T{i}>({a});"
                             for i, a in enumerate(args)])
            code = node.op.code_for(ins, outs, mask)
            lines.append(f"{st} {var}; {{ {head} R0 out0; {{ {code} }} "
                         f"{var} = pg::cast<{st}>(out0); }}")
        return var

    last = visit(result)
    lines.append(f"out0 = pg::cast<R0>({last});")
    return "\n        ".join(lines)


def _collect(result, nargs):
    """The DAG's leaves in kernel-input order: each argument it reads, then
    its non-finite constants."""
    args, consts, seen = {}, [], set()

    def walk(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        if node.kind == "arg":
            args[node.index] = node
        elif node.kind == "const" and not _finite(node):
            consts.append(node)
        for a in node.args:
            walk(a)

    walk(result)
    return [args[i] for i in sorted(args)] + consts


class _Kernel:
    """A traced signature: the fused op, its loop, where each kernel input
    comes from (an argument's index, or a constant), and the final
    reduction (name, kwargs) or None."""

    def __init__(self, result, nargs):
        self.reduction = None
        if result.kind == "reduce":
            self.reduction = (result.name, result.kwargs)
            result = result.args[0]
        if result.kind == "const":
            raise _unsupported("a function whose result does not depend on its arguments")
        leaves = _collect(result, nargs)
        self.sources = [("arg", leaf.index) if leaf.kind == "arg" else ("const", leaf.value)
                        for leaf in leaves]
        # Python int arguments and the integer types of the loops they meet
        self.ints = [(leaf.index, leaf.value) for leaf in leaves
                     if leaf.kind == "arg" and leaf.weak is int and leaf.value]
        # the arguments that are integer powers' exponents
        self.exponents = [leaf.index for leaf in leaves if leaf.kind == "arg" and leaf.exponent]
        code = _render(result, leaves)
        self.loop = ("".join(leaf.char for leaf in leaves), result.char)
        digest = hashlib.sha1(f"{self.loop}{code}".encode()).hexdigest()[:16]
        # inlined: a fused expression is the whole of its kernel's work, and
        # a call a group of 4 cost it 0.90x -> 0.87x the copy (H200,
        # sin(x) * 2 + sqrt(abs(x)), 2026-11-29)
        self.op = Op(f"fused_{digest}", code, given=(self.loop,), grouped=False)


# ---- fuse ------------------------------------------------------------------------------

def _descr(name, x):
    """What a kernel depends on of an argument: its kind and type."""
    if isinstance(x, DeviceArray):
        return ("a", canonical(x.dtype.char))
    if isinstance(x, np.generic):  # before float: numpy.float64 is a float
        return ("s", _device_char(x.dtype))
    if isinstance(x, bool):
        return ("s", "?")
    if isinstance(x, (int, float, complex)):
        return ("w", type(x))
    if isinstance(x, np.ndarray):
        raise _uf._host_array_error(name, x)
    raise TypeError(f"{name}: pygpu.fuse takes DeviceArrays and scalars, not "
                    f"{type(x).__name__}")


def _trace(func, descrs):
    tracers = []
    for k, (kind, t) in enumerate(descrs):
        if kind == "w":
            tracers.append(_Tracer(_Node("arg", _WEAK[t], weak=t, index=k, scalar=True)))
        else:
            tracers.append(_Tracer(_Node("arg", t, index=k, scalar=kind == "s")))
    try:
        result = func(*tracers)
    except TypeError as exc:  # pygpu's own functions take no tracers (ufunc.py's _operand)
        if "_Tracer" not in str(exc):
            raise
        raise _unsupported("a pygpu function (pygpu.sin, pygpu.where, ...) on a traced value",
                           "use numpy's (numpy.sin, numpy.where), which a fused function "
                           "traces") from exc
    if not isinstance(result, _Tracer):
        raise _unsupported(f"a result of type {type(result).__name__} (a fused function "
                           "returns one traced value)")
    return _Kernel(result.node, len(descrs))


_MAPPED = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}


def _map_spec(kernel):
    """The name of the Reduction (table.py's REDUCTIONS, registered at first
    use) whose map is the kernel's expression."""
    from .codegen import compute
    from .table import REDUCTIONS, Reduction

    name = kernel.reduction[0]
    spec = f"{kernel.op.name}_{name}"
    if spec not in REDUCTIONS:
        body = (f"[&]() -> A {{ typedef X T0; typedef {compute(kernel.loop[1])} R0; "
                f"T0 in0 = x; R0 out0; {{ {kernel.op.code} }} return pg::cast<A>(out0); }}()")
        REDUCTIONS.setdefault(spec, Reduction(spec, op=_MAPPED[name], map=body))
    return spec


def _map_reduce(kernel, x):
    """The final reduction with the fused expression as its map: one pass,
    reading x (the expression's one array) and writing only the result, by
    reduction.py's _reduce on a Reduction of the table's kind registered
    under the kernel's name."""
    from . import reduction as R

    name, kwargs = kernel.reduction
    opname = _MAPPED[name]
    axis, dtype, keepdims = kwargs.get("axis"), kwargs.get("dtype"), kwargs.get("keepdims",
                                                                                False)
    fchar = kernel.loop[1]
    # NumPy's answer on a stand-in (each axis one element): the dtype, and the errors
    standin = np.zeros((1,) * x.ndim, np.dtype(fchar))
    rdt = np.asarray(_REDUCTIONS[name](standin, **kwargs)).dtype
    loop = R._op_loop(opname, fchar, dtype)
    spec = _map_spec(kernel)
    axes = R._axes(axis, x.ndim)
    kept, shape = R._shapes(x, axes, keepdims)
    with x.device:
        res = R._result(None, kept, np.dtype(loop), x)
        R._reduce(spec, spec, x, axes, loop, canonical(loop), res)
        if res.dtype != rdt:
            res = res.astype(rdt)
        return R._finish(res, None, shape)


def _run(kernel, args):
    operands = [args[v] if where == "arg" else v for where, v in kernel.sources]
    for index, chars in kernel.ints:
        for c in chars:
            _check_int(args[index], c)
    for index in kernel.exponents:
        _uf._refuse_negative_exponent(args[index])
    if (kernel.reduction is not None and kernel.reduction[0] in _MAPPED and
            len(operands) == 1 and isinstance(operands[0], DeviceArray) and
            operands[0].size > 0):
        return _map_reduce(kernel, operands[0])
    arrays = [x for x in operands if isinstance(x, DeviceArray)]
    shape = _uf._broadcast(arrays, [None])
    with _uf._device_of(arrays):
        r = _uf._compute(kernel.op, kernel.loop, operands, [None], True, shape)
    if kernel.reduction is not None:
        name, kwargs = kernel.reduction
        r = _REDUCTIONS[name](r, **kwargs)
    return r


class Fused:
    """A function compiled to one kernel per signature of its arguments'
    types (pygpu.fuse)."""

    def __init__(self, func, name=None):
        self.func = func
        functools.update_wrapper(self, func)
        self.__name__ = name or getattr(func, "__name__", "fused")
        self._kernels = {}
        self._lock = threading.Lock()

    def kernel(self, *args):
        """The traced kernel for these arguments (the cache's entry)."""
        descrs = tuple(_descr(self.__name__, x) for x in args)
        k = self._kernels.get(descrs)
        if k is None:
            with self._lock:
                k = self._kernels.get(descrs)
                if k is None:
                    k = self._kernels[descrs] = _trace(self.func, descrs)
        return k

    def source(self, *args):
        """The CUDA C of the kernels for these arguments."""
        from .codegen import render

        k = self.kernel(*args)
        return render(k.op, k.op.loops)

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{self.__name__}: a fused function takes positional "
                            "arguments only")
        if not any(isinstance(x, DeviceArray) for x in args):
            for x in args:
                _descr(self.__name__, x)
            return self.func(*args)  # scalars alone: Python computes it
        return _run(self.kernel(*args), args)

    def __repr__(self):
        return f"<pygpu.fuse {self.__name__}>"


def fuse(*args, kernel_name=None):
    """@pygpu.fuse, or @pygpu.fuse(kernel_name=...): the function, over
    DeviceArrays and scalars, compiled to one elementwise kernel (plus a
    final reduction), as cupy.fuse."""
    if args and callable(args[0]) and len(args) == 1:
        return Fused(args[0], kernel_name)
    if args:
        raise TypeError("pygpu.fuse takes a function (or kernel_name= only)")
    return lambda f: Fused(f, kernel_name)


# ---- vectorize ---------------------------------------------------------------------------

def _parse_signature(sig):
    """'float32(float32, float32)' (numba's spelling, NumPy dtype names) or
    (out dtype, (in dtypes...)) -> (in dtypes, out dtype)."""
    if isinstance(sig, str):
        s = sig.replace(" ", "")
        if not s.endswith(")") or "(" not in s:
            raise TypeError(f"pygpu.vectorize: signature {sig!r} is not 'out(in, ...)'")
        out, ins = s[:-1].split("(", 1)
        ins = [np.dtype(t) for t in ins.split(",") if t]
        return tuple(ins), np.dtype(out)
    out, ins = sig
    return tuple(np.dtype(t) for t in ins), np.dtype(out)


def _jit_kernel(dev, nin):
    """A @cuda.jit kernel applying the device function `dev` to nin flat
    inputs, each read at i * its step (0 for a scalar)."""
    from .._jit import device as cuda
    from .._jit.dispatcher import jit

    if nin == 1:
        def apply1(out, n, a, sa):
            i = cuda.grid(1)
            if i < n:
                out[i] = dev(a[i * sa])
        return jit(apply1)
    if nin == 2:
        def apply2(out, n, a, sa, b, sb):
            i = cuda.grid(1)
            if i < n:
                out[i] = dev(a[i * sa], b[i * sb])
        return jit(apply2)
    if nin == 3:
        def apply3(out, n, a, sa, b, sb, c, sc):
            i = cuda.grid(1)
            if i < n:
                out[i] = dev(a[i * sa], b[i * sb], c[i * sc])
        return jit(apply3)
    if nin == 4:
        def apply4(out, n, a, sa, b, sb, c, sc, d, sd):
            i = cuda.grid(1)
            if i < n:
                out[i] = dev(a[i * sa], b[i * sb], c[i * sc], d[i * sd])
        return jit(apply4)
    raise TypeError(f"pygpu.vectorize: a function of {nin} arguments that the tracer cannot "
                    "take (math.*, control flow) compiles through pygpu.cuda.jit, which "
                    "vectorize does for at most 4 arguments")


class Vectorized:
    """A scalar function applied elementwise with NumPy's broadcasting, in one
    kernel per signature (pygpu.vectorize): traced as pygpu.fuse traces, else
    (math.*, control flow) compiled by pygpu.cuda.jit as a device function."""

    def __init__(self, func, signatures):
        self.func = func
        self.__name__ = getattr(func, "__name__", "vectorized")
        self.signatures = [_parse_signature(s) for s in signatures]
        for ins, out in self.signatures:
            for d in (*ins, out):
                _device_char(d)
        nin = {len(ins) for ins, _ in self.signatures}
        if len(nin) > 1:
            raise TypeError("pygpu.vectorize: signatures with different numbers of inputs")
        self._fused = {}
        functools.update_wrapper(self, func)

    def _pick(self, args):
        for ins, out in self.signatures:
            if len(ins) != len(args):
                continue
            ok = True
            for x, d in zip(args, ins, strict=True):
                if isinstance(x, DeviceArray) or isinstance(x, np.generic):
                    ok = ok and np.can_cast(x.dtype, d, "safe")
                elif isinstance(x, bool):
                    ok = ok and True
                elif isinstance(x, int):
                    ok = ok and d.kind in "iufc"
                elif isinstance(x, float):
                    ok = ok and d.kind in "fc"
                elif isinstance(x, complex):
                    ok = ok and d.kind == "c"
                else:
                    _descr(self.__name__, x)
            if ok:
                return ins, out
        types = ", ".join(str(x.dtype) if hasattr(x, "dtype") else type(x).__name__
                          for x in args)
        raise TypeError(f"{self.__name__}: no signature of the vectorized function takes "
                        f"({types}) (safe casting)")

    def __call__(self, *args):
        if not self.signatures:
            return self._lazy(*args)
        ins, out = self._pick(args)
        key = (ins, out)
        f = self._fused.get(key)
        if f is None:
            func = self.func

            def typed(*xs):
                xs = [x.astype(d) if isinstance(x, _Tracer) else d.type(x)
                      for x, d in zip(xs, ins, strict=True)]
                r = func(*xs)
                if not isinstance(r, _Tracer):
                    r = _Tracer(_node_of(r))
                return r.astype(out)

            f = self._fused[key] = Fused(typed, self.__name__)
        if not any(isinstance(x, DeviceArray) for x in args):
            raise TypeError(f"{self.__name__}: a vectorized function takes at least one "
                            "DeviceArray")
        if not isinstance(f, Fused):
            return self._jit_call(f, ins, out, args)
        try:
            return f(*args)
        except TypeError as exc:
            if "pygpu.fuse:" not in str(exc) or "traced value" not in str(exc):
                raise
        # the body needs values (math.sin, if): Numba's way, a device function
        # of pygpu.cuda.jit applied by a kernel
        from .._jit.dispatcher import Dispatcher

        dev = Dispatcher(self.func, device=True)
        f = self._fused[key] = _jit_kernel(dev, len(ins))
        return self._jit_call(f, ins, out, args)

    def _jit_call(self, kernel, ins, out, args):
        from .._core import empty
        from .manipulation import broadcast_to

        arrays = [x for x in args if isinstance(x, DeviceArray)]
        shape = _uf._broadcast(arrays, [None])
        n = math.prod(shape)
        flat = []
        with _uf._device_of(arrays):
            for x, d in zip(args, ins, strict=True):
                if isinstance(x, DeviceArray):
                    x = x if x.dtype == d else x.astype(d)
                    if x.shape != tuple(shape) or not x.flags["C_CONTIGUOUS"]:
                        x = broadcast_to(x, shape).copy()
                    flat += [x.reshape(-1), 1]
                else:
                    flat += [_uf._core.asarray(np.array([x], dtype=d)), 0]
            result = empty(n, out)
            if n:
                kernel[-(-n // 256), 256](result, n, *flat)
        return result.reshape(shape)

    def _lazy(self, *args):
        f = self._fused.get(None)
        if f is None:
            f = self._fused[None] = Fused(self.func, self.__name__)
        return f(*args)

    def __repr__(self):
        return f"<pygpu.vectorize {self.__name__}>"


def vectorize(signatures=None, target="cuda", **options):
    """@pygpu.vectorize(['float32(float32, float32)', ...]) as
    numba.vectorize(target="cuda"): the scalar function, applied elementwise
    with broadcasting, in one kernel. The first signature that takes the
    arguments by safe casting is used; without signatures the types are
    NumPy's (as pygpu.fuse)."""
    if callable(signatures):  # @pygpu.vectorize without arguments
        return Vectorized(signatures, [])
    if target not in ("cuda", "gpu"):
        raise TypeError(f"pygpu.vectorize: target {target!r} is not supported (only 'cuda')")
    if options:
        raise TypeError(f"pygpu.vectorize: option {sorted(options)[0]!r} is not supported")
    if isinstance(signatures, (str, tuple)):
        signatures = [signatures]
    return lambda f: Vectorized(f, list(signatures or []))

