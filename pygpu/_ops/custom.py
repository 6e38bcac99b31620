"""User kernels from C snippets, as CuPy's: ElementwiseKernel (typed in_params and
out_params, a C body, type placeholders, broadcasting, out=) and ReductionKernel
(map_expr, reduce_expr, post_map_expr, identity, axis, keepdims), built on the
op-table generator's templates and compile path.

An ElementwiseKernel is an op of its own for codegen.py (a name, its C code over
in0.../out0..., the one loop its call binds, the user's preamble): the kernels,
layouts, scalar masks, compile path and caches are the table's, and the call
goes through ufunc.py's broadcasting, casting and output allocation (_compute).
A ReductionKernel is a Reduction (table.py) of its own, registered in
reduction.CUSTOM for each binding of its types, and runs through reduction.py's
_reduce; with more than one input, map_expr is an ElementwiseKernel first.

An area of pygpu/_ops (see its __init__.py): __all__, NUMPY and ATTRIBUTES
are what the rest of pygpu reads."""

import contextlib
import hashlib
import math
import re
from dataclasses import dataclass

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from .. import _core
from .._core import DeviceArray
from . import codegen, reduction
from . import ufunc as _uf
from .table import DEVICE_TYPES, Reduction, canonical

__all__ = ["ElementwiseKernel", "ReductionKernel"]
NUMPY = {}  # numpy function -> implementation (np.f(d) on DeviceArrays)
ATTRIBUTES = {}  # DeviceArray attribute name -> function(array) -> value

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# C type names a reduce_type may be written in, as CuPy's are
_C_NAMES = {"bool": "?", "char": "b", "signed char": "b", "unsigned char": "B",
            "short": "h", "unsigned short": "H", "int": "i", "unsigned int": "I",
            "long": "q", "long long": "q", "unsigned long": "Q",
            "unsigned long long": "Q", "half": "e", "float16": "e", "float": "f",
            "double": "d", "complex<float>": "F", "complex<double>": "D"}


def _type_char(text):
    """A dtype's canonical character from a name NumPy knows ("float32",
    "double", "f4"), or None for a type placeholder (any other identifier,
    and every single capital letter, as T)."""
    if len(text) == 1 and text.isupper():
        return None
    try:
        d = np.dtype(text)
    except TypeError:
        return None
    if d.char not in DEVICE_TYPES:
        raise TypeError(f"pygpu has no device type {text!r} (dtype {d})")
    return canonical(d.char)


@dataclass(frozen=True)
class _Param:
    name: str
    char: str = None  # the fixed type's character, or None for a placeholder
    placeholder: str = None


def _params(text, what):
    """[_Param] of a CuPy parameter string: 'float32 x, T y'."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, not {type(text).__name__}")
    out = []
    for item in (t.strip() for t in text.split(",")):
        if not item and not text.strip():
            continue
        words = item.split()
        if len(words) == 3 and words[0] == "raw":
            raise NotImplementedError(f"{what}: raw parameters ({item!r}) are not supported "
                                      "by pygpu's ElementwiseKernel (use pygpu.RawKernel)")
        if len(words) != 2 or not _IDENT.match(words[1]):
            raise ValueError(f"{what}: cannot parse {item!r}: each parameter is "
                             "'<type> <name>' (as 'float32 x' or 'T x'), comma separated")
        kind, name = words
        char = _type_char(kind)
        if char is None:
            if not _IDENT.match(kind):
                raise ValueError(f"{what}: {kind!r} in {item!r} is neither a dtype name nor a "
                                 "type placeholder")
            out.append(_Param(name, placeholder=kind))
        else:
            out.append(_Param(name, char=char))
    return out


def _check_names(ins, outs):
    names = [p.name for p in ins + outs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"parameter {dup[0]!r} is declared twice")


def _scalar_char(x):
    """The type a scalar binds a placeholder to: a NumPy scalar's own, a Python
    scalar's default (int64, float64, complex128, bool)."""
    if isinstance(x, np.generic):
        return canonical(x.dtype.char)
    return canonical(np.dtype(type(x)).char)


def _bind(kname, ins, outs, operands, given_outs):
    """(in chars, out chars): fixed types as written, placeholders from the
    arrays' dtypes (every array of one placeholder must agree), then from
    the outputs given, then from scalars."""
    types = {}

    def take(p, char, where):
        have = types.get(p.placeholder)
        if have is None:
            types[p.placeholder] = char
        elif have != char:
            raise TypeError(f"{kname}: type is mismatched: {p.placeholder} is "
                            f"{np.dtype(have)} from an earlier argument, but {where} {p.name!r} "
                            f"is {np.dtype(char)}")
    for p, x in zip(ins, operands, strict=True):
        if p.placeholder and isinstance(x, DeviceArray):
            take(p, canonical(x.dtype.char), "the array")
    for p, o in zip(outs, given_outs, strict=True):
        if p.placeholder and o is not None:
            take(p, canonical(o.dtype.char), "the output")
    for p, x in zip(ins, operands, strict=True):
        if p.placeholder and not isinstance(x, DeviceArray) and p.placeholder not in types:
            types[p.placeholder] = _scalar_char(x)
    for p in outs:
        if p.placeholder and p.placeholder not in types:
            raise TypeError(f"{kname}: cannot determine the type of output {p.name!r}: its "
                            f"type placeholder {p.placeholder} is bound by no input; pass the "
                            "output array")
    for c in types.values():
        if c not in DEVICE_TYPES:
            raise _uf._dtype_error(kname, np.dtype(c))
    ins_ = "".join(p.char or types[p.placeholder] for p in ins)
    outs_ = "".join(p.char or types[p.placeholder] for p in outs)
    return ins_, outs_, types


def _typedefs(ins, outs, prefix_in="T", prefix_out="R"):
    """typedefs naming each placeholder as the compute type of its first
    parameter (`typedef T0 T;`)."""
    seen, out = set(), []
    for k, p in enumerate(ins):
        if p.placeholder and p.placeholder not in seen:
            seen.add(p.placeholder)
            out.append(f"typedef {prefix_in}{k} {p.placeholder};")
    for k, p in enumerate(outs):
        if p.placeholder and p.placeholder not in seen:
            seen.add(p.placeholder)
            out.append(f"typedef {prefix_out}{k} {p.placeholder};")
    return " ".join(out)


def _digest(*parts):
    return hashlib.sha1("\0".join(map(str, parts)).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class _KernelOp:
    """What codegen.py reads of an op (table.py's Op): a user's kernel on the
    one loop a call bound."""
    name: str
    code: str
    loops: tuple
    preamble: str = ""

    def code_for(self, ins, outs, mask=None):
        return self.code


def _operand(kname, x):
    o = _uf._operand(kname, x)
    if o is None:
        raise TypeError(f"{kname}: pygpu takes DeviceArrays and scalars, not "
                        f"{type(x).__name__}")
    return o


class ElementwiseKernel:
    """A kernel over the elements of its broadcast arguments, from a C body,
    as cupy.ElementwiseKernel: `ElementwiseKernel('float32 x, float32 y',
    'float32 z', 'z = (x - y) * (x - y)', 'squared_diff')`.

    in_params and out_params are '<type> <name>' lists: a dtype name or a
    type placeholder (any other identifier, as T) bound at each call by the
    dtypes of the arrays passed for it (scalars bind it where no array does;
    outputs given bind it too). The operation is C over those names (inputs
    in their compute types: float for float16; outputs given hold their
    values, else each must be set), `i` (the index in the broadcast shape) and `_ind.size()`
    (the number of elements); preamble is C placed before the kernel.
    Called as `kernel(*inputs, *outputs, size=None)` (or out=): arrays of a
    fixed type's other dtype are cast (same_kind), scalars cast to the
    declared type (NEP 50: a Python scalar that does not fit is an error)."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True,
                 preamble="", no_return=False, return_tuple=False, loop_prep="",
                 after_loop="", options=()):
        if not isinstance(name, str) or not _IDENT.match(name):
            raise ValueError(f"kernel name {name!r} is not a C identifier")
        if not isinstance(operation, str):
            raise TypeError(f"operation must be a str, not {type(operation).__name__}")
        if loop_prep or after_loop:
            raise NotImplementedError("ElementwiseKernel: loop_prep and after_loop are not "
                                      "supported by pygpu")
        self.in_params = _params(in_params, "in_params")
        self.out_params = _params(out_params, "out_params")
        if not self.out_params:
            raise ValueError("ElementwiseKernel: out_params declares no output")
        _check_names(self.in_params, self.out_params)
        self.name = name
        self.operation = operation
        self.preamble = preamble
        self.reduce_dims = reduce_dims
        self.no_return = no_return
        self.return_tuple = return_tuple
        self.nin = len(self.in_params)
        self.nout = len(self.out_params)
        self.nargs = self.nin + self.nout
        self._id = f"{name}_{_digest(in_params, out_params, operation, preamble)}"
        self._ops = {}

    def __repr__(self):
        return f"<pygpu.ElementwiseKernel {self.name!r}>"

    def _code(self, first):
        """The op's C code; first: where the outputs' current values are among
        the inputs (outputs given: they are read too), or None."""
        ins, outs = self.in_params, self.out_params
        lines = [_typedefs(ins, outs)]
        lines += [f"const T{k} {p.name} = in{k};" for k, p in enumerate(ins)]
        lines += [f"R{k} {p.name};" if first is None else
                  f"R{k} {p.name} = pg::cast<R{k}>(in{first + k});" for k, p in enumerate(outs)]
        if "_ind" in self.operation:
            lines.append("struct { long long n_; PG_FN long long size() const "
                         "{ return n_; } } _ind = {n};")
        lines.append("{ " + self.operation + "\n; }")
        lines += [f"out{k} = {p.name};" for k, p in enumerate(outs)]
        return "\n".join(lines)

    def _op(self, loop, first):
        op = self._ops.get((loop, first))
        if op is None:
            name = self._id if first is None else f"{self._id}_io"
            op = self._ops[loop, first] = _KernelOp(name, self._code(first), (loop,),
                                                    self.preamble)
        return op

    def __call__(self, *args, size=None, out=None, **kwargs):
        kname = self.name
        bad = set(kwargs) - {"block_size", "shared_mem", "stream"}
        if bad:
            raise TypeError(f"{kname}() got an unexpected keyword argument {sorted(bad)[0]!r}")
        if len(args) not in (self.nin, self.nargs):
            raise TypeError(f"{kname}: wrong number of arguments: {len(args)} given, "
                            f"{self.nin} (inputs) or {self.nargs} (inputs and outputs) "
                            "expected")
        if len(args) > self.nin:
            if out is not None:
                raise TypeError(f"{kname}: outputs given both as arguments and as out=")
            out = args[self.nin:]
        outs = _uf._outs(kname, self.nout, out)
        operands = [_operand(kname, x) for x in args[:self.nin]]
        ins, outs_, _ = _bind(kname, self.in_params, self.out_params, operands, outs)
        for x, c, p in zip(operands, ins, self.in_params, strict=True):
            if isinstance(x, DeviceArray) and not np.can_cast(x.dtype, np.dtype(c), "same_kind"):
                raise TypeError(f"{kname}: cannot cast input {p.name!r} from {x.dtype} to "
                                f"{np.dtype(c)} (same_kind)")
        for o, c, p in zip(outs, outs_, self.out_params, strict=True):
            if o is not None and not np.can_cast(np.dtype(c), o.dtype, "same_kind"):
                raise TypeError(f"{kname}: cannot cast output {p.name!r} from {np.dtype(c)} "
                                f"to {o.dtype} (same_kind)")
            if o is not None and not o.flags["WRITEABLE"]:
                raise ValueError("output array is read-only")
        result = self._run(kname, ins, outs_, operands, outs, size)
        if self.no_return:
            return None
        if self.return_tuple and not isinstance(result, tuple):
            return (result,)
        return result

    def _run(self, kname, ins, outs_, operands, outs, size):
        if not self.in_params:  # a 0-d input no code reads: the kernels take at least one
            ins = "?"
            operands = [np.bool_(False)]
        arrays = [x for x in operands if isinstance(x, DeviceArray)]
        given = [o for o in outs if o is not None]
        if arrays or given:
            shape = _uf._broadcast(arrays, outs)
            if size is not None and size != math.prod(shape):
                raise ValueError(f"{kname}: size={size} but the arguments' shape is {shape}")
        elif size is None:
            raise ValueError(f"{kname}: loop size is undecided: pass an array or size=")
        else:
            shape = (int(size),)
        device = _uf._device_of(arrays + given) if arrays or given else \
            contextlib.nullcontext()
        with device:
            first = None
            if given:  # outputs given: their values are read too (inputs after the others)
                outs = [o if o is not None else _core.empty(shape, np.dtype(c))
                        for o, c in zip(outs, outs_, strict=True)]
                first, ins, operands = len(ins), ins + outs_, operands + outs
            elif not arrays:  # scalars alone: the first as a 0-d array (the kernels take one)
                operands = [_core.asarray(np.asarray(operands[0], dtype=np.dtype(ins[0]))),
                            *operands[1:]]
            return _uf._compute(self._op((ins, outs_), first), (ins, outs_), operands, outs,
                                True, shape)


@dataclass(frozen=True)
class _Reduction(Reduction):
    """A user's Reduction: the table's fields and C placed before it
    (reduction.render writes it once a unit)."""
    preamble: str = ""


class ReductionKernel:
    """A reduction from C snippets, as cupy.ReductionKernel:
    `ReductionKernel('T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', '0', 'l2norm')`.

    map_expr (over the inputs' names) is each element's contribution,
    reduce_expr combines two of them (`a`, `b`), identity is the value that
    combines with anything to give it back, post_map_expr sets the output
    from the total `a`. The accumulator is reduce_type (a dtype name, a C
    type name or a placeholder; by default the output's type). Called as
    `kernel(*inputs, out=None, axis=None, keepdims=False)`; inputs broadcast
    together (with more than one, map_expr is computed elementwise first)."""

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr,
                 identity, name="reduce_kernel", reduce_type=None, reduce_dims=True,
                 preamble="", options=()):
        if not isinstance(name, str) or not _IDENT.match(name):
            raise ValueError(f"kernel name {name!r} is not a C identifier")
        for what, v in (("map_expr", map_expr), ("reduce_expr", reduce_expr),
                        ("post_map_expr", post_map_expr)):
            if not isinstance(v, str):
                raise TypeError(f"{what} must be a str, not {type(v).__name__}")
        if identity is None:
            raise NotImplementedError("ReductionKernel: pygpu needs an identity")
        self.in_params = _params(in_params, "in_params")
        self.out_params = _params(out_params, "out_params")
        if not self.in_params:
            raise ValueError("ReductionKernel: in_params declares no input")
        if len(self.out_params) != 1:
            raise ValueError("ReductionKernel: out_params must declare exactly one output")
        _check_names(self.in_params, self.out_params)
        self.name, self.map_expr, self.reduce_expr = name, map_expr, reduce_expr
        self.post_map_expr, self.identity, self.preamble = post_map_expr, str(identity), preamble
        self.reduce_type = reduce_type
        self.reduce_dims = reduce_dims
        self.nin = len(self.in_params)
        self._id = f"custom_{name}_" + _digest(in_params, out_params, map_expr, reduce_expr,
                                               post_map_expr, identity, reduce_type, preamble)
        self._mappers = {}  # (ins, loop) -> the map as an ElementwiseKernel

    def __repr__(self):
        return f"<pygpu.ReductionKernel {self.name!r}>"

    def _reduce_char(self, types, outc):
        rt = self.reduce_type
        if rt is None:
            return outc
        rt = " ".join(str(rt).split()) if isinstance(rt, str) else rt
        if isinstance(rt, str) and rt in types:
            return types[rt]
        if isinstance(rt, str) and rt in _C_NAMES:
            return _C_NAMES[rt]
        try:
            d = np.dtype(rt)
        except TypeError:
            raise ValueError(f"{self.name}: reduce_type {rt!r} is neither a type nor a bound "
                             "placeholder") from None
        if d.char not in DEVICE_TYPES:
            raise _uf._dtype_error(self.name, d)
        return canonical(d.char)

    def _spec(self, ins, loop, outc, types):
        """The Reduction of one binding, registered in reduction.CUSTOM."""
        name = f"{self._id}_" + "_".join(codegen._TAGS[c] for c in ins + loop + outc)
        if name in reduction.CUSTOM:
            return name
        defs = " ".join(f"typedef {codegen.compute(c)} {t};" for t, c in types.items())
        if self.nin == 1:
            p, c = self.in_params[0], ins[0]
            ct = codegen.compute(c)
            mapping = (f"[&](const {ct} {p.name}) -> A {{ {defs} "
                       f"return pg::cast<A>({self.map_expr}); }}(pg::cast<{ct}>(x))")
        else:  # already mapped elementwise, in the accumulator's type
            mapping = "pg::cast<A>(x)"
        out = self.out_params[0]
        ot = codegen.compute(outc)
        post = (f"[&]() -> {ot} {{ {defs} typedef A _type_reduce; typedef {ot} _type_out; "
                f"_type_out {out.name} = _type_out(); "
                f"{{ {self.post_map_expr}\n; }} return {out.name}; }}()")
        combine = (f"{defs} typedef A _type_reduce; const A a = in0; const A b = in1; "
                   f"out0 = pg::cast<A>({self.reduce_expr});")
        reduction.CUSTOM[name] = _Reduction(name, combine=combine,
                                            identity=f"pg::cast<A>({self.identity})",
                                            map=mapping, post=post, preamble=self.preamble)
        return name

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None):
        kname = self.name
        if len(args) not in (self.nin, self.nin + 1):
            raise TypeError(f"{kname}: wrong number of arguments: {len(args)} given, "
                            f"{self.nin} (inputs) or {self.nin + 1} (inputs and output) "
                            "expected")
        if len(args) > self.nin:
            if out is not None:
                raise TypeError(f"{kname}: the output given both as an argument and as out=")
            out = args[self.nin]
        outs = _uf._outs(kname, 1, out)
        operands = [_operand(kname, x) for x in args[:self.nin]]
        ins, outc, types = _bind(kname, self.in_params, self.out_params, operands, outs)
        loop = self._reduce_char(types, outc)
        arrays = [x for x in operands if isinstance(x, DeviceArray)]
        if not arrays:
            operands[0] = _core.asarray(np.asarray(operands[0], dtype=np.dtype(ins[0])))
            arrays = operands[:1]
        with _uf._device_of(arrays + [o for o in outs if o is not None]):
            if self.nin == 1:
                x = operands[0]
                if x.dtype != np.dtype(ins[0]):
                    if not np.can_cast(x.dtype, np.dtype(ins[0]), "same_kind"):
                        raise TypeError(f"{kname}: cannot cast input "
                                        f"{self.in_params[0].name!r} from {x.dtype} to "
                                        f"{np.dtype(ins[0])} (same_kind)")
                    x = x.astype(np.dtype(ins[0]))
                xc = ins
            else:
                x = self._map(ins, loop, types)(*operands)
                xc = loop
            return self._finish(x, self._spec(xc, loop, outc, types), loop, outc, outs[0],
                                axis, keepdims)

    def _map(self, ins, loop, types):
        """The map as an ElementwiseKernel: inputs -> the accumulator's type."""
        k = self._mappers.get((ins, loop))
        if k is not None:
            return k
        params = ", ".join(f"{np.dtype(c).name} {p.name}"
                           for p, c in zip(self.in_params, ins, strict=True))
        defs = " ".join(f"typedef {codegen.compute(c)} {t};" for t, c in types.items())
        k = self._mappers[ins, loop] = ElementwiseKernel(
            params, f"{np.dtype(loop).name} _pg_mapped", f"{defs} _pg_mapped = {self.map_expr};",
            self.name, preamble=self.preamble)
        return k

    def _finish(self, x, spec, loop, outc, out, axis, keepdims):
        axes = tuple(range(x.ndim)) if axis is None else normalize_axis_tuple(axis, x.ndim)
        kept = tuple(n for i, n in enumerate(x.shape) if i not in axes)
        full = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
        if out is not None:
            if out.shape not in (kept, full if keepdims else kept):
                raise ValueError(f"{self.name}: out has shape {out.shape}, the result has "
                                 f"{full if keepdims else kept}")
            if out.dtype != np.dtype(outc):
                raise TypeError(f"{self.name}: out has dtype {out.dtype}, the result has "
                                f"{np.dtype(outc)}")
            target = out[tuple(0 if i in axes else slice(None) for i in range(x.ndim))] \
                if out.shape != kept else out
            reduction._reduce(spec, spec, x, axes, loop, outc, target)
            return out
        result = _core.empty(kept, np.dtype(outc))
        reduction._reduce(spec, spec, x, axes, loop, outc, result)
        return result.reshape(full) if keepdims else result
