"""The functions a kernel may call, each typed and written as C++: the
builtins (range is the for loop's), math's and NumPy's scalar functions,
NumPy's scalar types as casts, pygpu.cuda's device functions, the
xoroshiro128+ generator, and device functions (@cuda.jit(device=True))."""

import ast
import builtins

import numpy as np

from . import device
from . import types as T
from .codegen import _MATH_FUNCS, _c_string, _cast, _literal
from .errors import TypingError
from .typenames import ScalarName


def _bind(tr, node, names, required=None, what=""):
    """{name: ast node} of a call's arguments, by position and keyword."""
    required = len(names) if required is None else required
    if len(node.args) > len(names):
        raise tr.error(node, f"{what} takes at most {len(names)} arguments")
    out = dict(zip(names, node.args, strict=False))
    for kw in node.keywords:
        if kw.arg not in names or kw.arg in out:
            raise tr.error(node, f"{what} has no argument {kw.arg!r} here")
        out[kw.arg] = kw.value
    missing = [n for n in names[:required] if n not in out]
    if missing:
        raise tr.error(node, f"{what} needs the argument{'s' if len(missing) > 1 else ''} "
                             f"{', '.join(missing)}")
    return out


def _positional(tr, node, lo, hi, what):
    if node.keywords:
        raise tr.error(node, f"{what} takes no keyword arguments in kernels")
    if not lo <= len(node.args) <= hi:
        n = f"{lo}" if lo == hi else f"{lo} to {hi}"
        raise tr.error(node, f"{what} takes {n} argument{'s' if hi != 1 else ''}")
    return node.args


def _dtype(tr, node):
    """A dtype argument known at compile time: np.float32, 'float32', a
    numba type (by its name)."""
    try:
        value = tr.const_value(node)
    except TypingError:
        t, _ = tr.expr(node)  # an array's .dtype
        if not isinstance(t, T.Global):
            raise
        value = t.obj
    try:
        if isinstance(value, str) or isinstance(value, np.dtype) or (
                isinstance(value, type) and issubclass(value, np.generic)):
            dt = np.dtype(value)
        else:
            dt = np.dtype(str(value))
        return T.scalar(dt)
    except (TypeError, TypingError) as exc:
        raise tr.error(node, f"{ast.unparse(node)} is not a dtype kernels take ({exc})") \
            from None


def _shape(tr, node):
    value = tr.const_value(node)
    shape = value if isinstance(value, tuple) else (value,)
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0
               for n in shape) or not shape:
        raise tr.error(node, f"an array's shape in a kernel is an int or a tuple of ints "
                             f"known at compile time, not {value!r}")
    return tuple(int(n) for n in shape)


def _array_literal(t, data, shape, strides):
    return (f"{t.ctype}{{{data}, {{{', '.join(shape)}}}, "
            f"{{{', '.join(str(s) for s in strides)}}}}}")


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


# ---- builtins -----------------------------------------------------------------------


def _min_max(tr, node, which):
    args = _positional(tr, node, 1, 64, f"{which}()")
    if len(args) == 1:
        raise tr.error(node, f"{which}() of one iterable is not supported in kernels: give "
                             "two or more numbers")
    items = [tr.scalar(a) for a in args]
    if any(t.kind == "c" for t, _ in items):
        raise tr.error(node, f"{which}() of complex numbers is not defined")
    r = items[0][0]
    for t, _ in items[1:]:
        r = T.unify(r, t) if r.kind == "b" and t.kind == "b" else T.arithmetic("+", r, t)
    code = _cast(items[0][1], items[0][0], r)
    for t, c in items[1:]:
        code = f"pg_jit::{which}2({code}, {_cast(c, t, r)})"
    return r, code


def _abs(tr, node):
    (a,) = _positional(tr, node, 1, 1, "abs()")
    t, code = tr.scalar(a)
    if t.dtype.char == "e":
        code, t = _cast(code, t, T.float32), T.float32
    if t.kind == "c":
        return t.real, f"pg::abs({code})"
    if t.is_float:
        return t, f"{'fabsf' if t.dtype.itemsize == 4 else 'fabs'}({code})"
    if t.kind == "b":
        return T.int64, _cast(code, t, T.int64)
    if t.kind == "u":
        return t, code
    tmp = f"({code})"
    return t, f"(({t.ctype})({tmp} < 0 ? -{tmp} : {tmp}))"


def _pow(tr, node):
    a, b = _positional(tr, node, 2, 2, "pow() (with no modulus)")
    at, acode = tr.scalar(a)
    bt, bcode = tr.scalar(b)
    return tr.binop("**", at, acode, bt, bcode, node)


def _len(tr, node):
    (a,) = _positional(tr, node, 1, 1, "len()")
    t, code = tr.expr(a)
    if isinstance(t, T.Array):
        return T.int64, f"{code}.shape[0]"
    if isinstance(t, T.Tuple):
        return T.int64, f"{len(t.items)}LL"
    raise tr.error(node, f"len() of {t} is not supported in kernels")


def _to(target):
    def cast(tr, node):
        args = _positional(tr, node, 0, 1, f"{target}()")
        if not args:
            return target, _literal(0, target)
        t, code = tr.scalar(args[0])
        if target.kind == "b":
            return T.boolean, tr.truth(t, code, node)
        return target, _cast(code, t, target)
    return cast


def _complex(tr, node):
    args = _positional(tr, node, 0, 2, "complex()")
    items = [tr.scalar(a) for a in args]
    if any(t.kind == "c" for t, _ in items):
        raise tr.error(node, "complex() of complex numbers is not supported in kernels")
    parts = [_cast(c, t, T.float64) for t, c in items] + ["0.0"] * (2 - len(items))
    return T.complex128, f"pg::mk<double>({parts[0]}, {parts[1]})"


_CMATH = {"exp": "exp", "log": "log", "sqrt": "sqrt", "sin": "sin", "cos": "cos",
          "tan": "tan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asin": "arcsin",
          "acos": "arccos", "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh",
          "atanh": "arctanh"}


def _cmath(name):
    def call(tr, node):
        (a,) = _positional(tr, node, 1, 1, f"cmath.{name}()")
        t, code = tr.scalar(a)
        ct = t if t.kind == "c" else T.Scalar(np.dtype(
            np.complex64 if t == T.float32 else np.complex128))
        z = _cast(code, t, ct)
        if name == "phase":
            return ct.real, f"atan2(({z}).im, ({z}).re)"
        if name in ("isnan", "isinf", "isfinite"):
            f = {"isnan": "is_nan", "isinf": "is_inf", "isfinite": "is_finite"}[name]
            return T.boolean, f"pg::{f}({z})"
        return ct, f"pg::{_CMATH[name]}({z})"
    return call


def _round(tr, node):
    args = _positional(tr, node, 1, 1, "round() (with no ndigits)")
    t, code = tr.scalar(args[0])
    if t.dtype.char == "e":
        code, t = _cast(code, t, T.float32), T.float32
    if t.is_float:
        return T.int64, f"((long long){'rintf' if t.dtype.itemsize == 4 else 'rint'}({code}))"
    return t, code


def _print(tr, node):
    sep, end = " ", "\\n"
    for kw in node.keywords:
        value = tr.const_value(kw.value)
        if kw.arg not in ("sep", "end") or not isinstance(value, str):
            raise tr.error(node, "print() in kernels takes sep= and end= as str constants "
                                 "only")
        if kw.arg == "sep":
            sep = value
        else:
            end = _c_string(value)[1:-1]
    fmt, args = [], []
    for a in node.args:
        t, code = tr.expr(a)
        if isinstance(t, T.Global) and t.obj in (device.threadIdx, device.blockIdx,
                                                 device.blockDim, device.gridDim):
            # a dim3 prints as the tuple (x, y, z), as Numba's does
            name = t.obj.name
            t = tr.unit.tuple_type(T.Tuple((T.int32,) * 3))
            code = f"{t.ctype}{{" + ", ".join(f"(int){name}.{x}" for x in "xyz") + "}"
        if isinstance(t, T.StringLiteral):
            fmt.append(_c_string(t.value)[1:-1].replace("%", "%%"))
            continue
        _print_value(tr, node, t, code, fmt, args)
    text = _c_string(sep)[1:-1].replace("%", "%%").join(fmt) + end.replace("%", "%%")
    return T.void, f'printf("{text}"{"".join(", " + a for a in args)})'


def _print_value(tr, node, t, code, fmt, args):
    """Appends the printf format and arguments of one value: a number, or a
    tuple as Python writes it, `(1, (2.000000, 3))`."""
    if isinstance(t, T.Tuple):
        parts = []
        for i, item in enumerate(t.items):
            _print_value(tr, node, item, f"({code}).f{i}", parts, args)
        fmt.append("(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")")
        return
    if isinstance(t, T.Scalar) and t.kind == "b":
        fmt.append("%s")
        args.append(f'(({code}) ? "True" : "False")')
    elif isinstance(t, T.Scalar) and t.kind == "i":
        fmt.append("%lld")
        args.append(f"((long long)({code}))")
    elif isinstance(t, T.Scalar) and t.kind == "u":
        fmt.append("%llu")
        args.append(f"((unsigned long long)({code}))")
    elif isinstance(t, T.Scalar) and t.kind == "c":
        raise tr.error(node, "print() of a complex number is not supported in kernels: "
                             "print its .real and .imag")
    elif isinstance(t, T.Scalar):
        fmt.append("%f")
        args.append(_cast(code, t, T.float64))
    else:
        raise tr.error(node, f"print() in kernels prints numbers, tuples of them and "
                             f"str constants, not {t}")


_BUILTINS = {
    builtins.min: lambda tr, node: _min_max(tr, node, "min"),
    builtins.max: lambda tr, node: _min_max(tr, node, "max"),
    builtins.abs: _abs, builtins.len: _len, builtins.int: _to(T.int64),
    builtins.float: _to(T.float64), builtins.bool: _to(T.boolean), builtins.round: _round,
    builtins.print: _print, builtins.complex: _complex, builtins.pow: _pow,
}


# ---- math ---------------------------------------------------------------------------


def _math(tr, node, spec, ufunc=False):
    c64, c32, n, gives = spec
    name = ast.unparse(node.func)
    if ufunc and (len(node.args) == n + 1 or node.keywords or any(
            isinstance(tr.expr(a)[0], T.Array) for a in node.args)):
        return _ufunc_of_arrays(tr, node, spec, name)
    args = _positional(tr, node, n, n, f"{name}()")
    items = [tr.scalar(a) for a in args]
    return _math_of(tr, node, spec, name, items)


def _ufunc_of_arrays(tr, node, spec, name):
    """np.sin(x, out), np.arctan2(y, x, out=r): the NumPy ufunc applied to
    each element of arrays of out's shape (or to numbers), written into out,
    as Numba's ufuncs in kernels (which make no new arrays there)."""
    n = spec[2]
    args = list(node.args)
    for kw in node.keywords:
        if kw.arg != "out":
            raise tr.error(node, f"{name}() in a kernel takes out= only, not {kw.arg}=")
        args.append(kw.value)
    if len(args) != n + 1:
        raise tr.error(node, f"{name}() of arrays in a kernel writes into an out array: "
                             f"give {n} input{'s' if n > 1 else ''} and out (kernels make "
                             "no new arrays)")
    ot, ocode = tr.value(args[-1])
    if not isinstance(ot, T.Array):
        raise tr.error(node, f"{name}(): out must be an array, not {ot}")
    k, o = "pg_k", "pg_o"
    items, setup = [], [f"const {ot.ctype} {o} = {ocode};"]
    for i, a in enumerate(args[:-1]):
        t, code = tr.value(a)
        tmp = f"pg_u{i}"
        if isinstance(t, T.Array):
            if t.ndim != ot.ndim:
                raise tr.error(node, f"{name}(): an input of {t.ndim} dimensions and out of "
                                     f"{ot.ndim}: broadcasting is not supported in kernels")
            setup.append(f"const {t.ctype} {tmp} = {code};")
            items.append((t.element, f"pg_jit::flat({tmp}, {k})"))
        elif isinstance(t, T.Scalar):
            setup.append(f"const {t.ctype} {tmp} = {code};")
            items.append((t, tmp))
        else:
            raise tr.error(node, f"{name}() takes arrays and numbers, not {t}")
    rt, rcode = _math_of(tr, node, spec, name, items)
    store = tr.convert(rcode, rt, ot.element, node)
    return T.void, (f"([&]() {{ {' '.join(setup)} const long long pg_n = pg_jit::size({o}); "
                    f"for (long long {k} = 0; {k} < pg_n; {k}++) pg_jit::flat({o}, {k}) = "
                    f"{store}; }})()")


def _math_of(tr, node, spec, name, items):
    c64, c32, n, gives = spec
    if any(t.kind == "c" for t, _ in items):
        raise tr.error(node, f"{name}() takes real numbers; for complex ones use cmath")
    if gives == "int" and items[0][0].kind in "iu":
        return items[0]  # math.floor of an int is itself
    ft = T.float32 if all(T.computing(t) == T.float32 for t, _ in items) else T.float64
    codes = ", ".join(_cast(c, t, ft) for t, c in items)
    call = f"{c32 if ft == T.float32 else c64}({codes})"
    if gives == "int":
        return T.int64, f"((long long){call})"
    if gives == "bool":
        return T.boolean, call
    return ft, call


def _log(tr, node):
    args = _positional(tr, node, 1, 2, "math.log()")
    items = [tr.scalar(a) for a in args]
    if any(t.kind == "c" for t, _ in items):
        raise tr.error(node, "math.log() takes real numbers; for complex ones use cmath.log")
    ft = T.float32 if all(t == T.float32 for t, _ in items) else T.float64
    f = "logf" if ft == T.float32 else "log"
    codes = [f"{f}({_cast(c, t, ft)})" for t, c in items]
    return ft, codes[0] if len(codes) == 1 else f"({codes[0]} / {codes[1]})"


def _angle(factor):
    def convert(tr, node):
        (a,) = _positional(tr, node, 1, 1, ast.unparse(node.func) + "()")
        t, code = tr.scalar(a)
        ft = T.computing(t) if t.is_float else T.float64
        return ft, f"({_cast(code, t, ft)} * {_literal(factor, ft)})"
    return convert


# ---- pygpu.cuda's device functions ------------------------------------------------------


def _grid(tr, node, size):
    (a,) = _positional(tr, node, 1, 1, "cuda.grid()" if not size else "cuda.gridsize()")
    n = tr.const_value(a)
    if n not in (1, 2, 3):
        raise tr.error(node, f"cuda.{'gridsize' if size else 'grid'}(ndim) takes 1, 2 or "
                             f"3, not {n!r}")
    axes = "xyz"[:n]
    if size:
        codes = [f"((long long)blockDim.{x} * gridDim.{x})" for x in axes]
    else:
        codes = [f"((long long)blockIdx.{x} * blockDim.{x} + threadIdx.{x})" for x in axes]
    if n == 1:
        return T.int64, codes[0]
    t = tr.unit.tuple_type(T.Tuple((T.int64,) * n))
    return t, f"{t.ctype}{{{', '.join(codes)}}}"


def _sync(name, gives=None):
    def call(tr, node):
        # on the simulator, each thread notes the barrier's line first, so that
        # a divergent barrier is reported with it (nothing on a GPU)
        at = f"PG_JIT_BARRIER_AT({tr.unit.barrier_id(tr.src.filename, tr.src.line(node))}u)"
        if gives is None:
            _positional(tr, node, 0, 0, f"cuda.{name}()")
            return T.void, f"({at}, __{name}())"
        (a,) = _positional(tr, node, 1, 1, f"cuda.{name}()")
        t, code = tr.scalar(a)
        return gives, f"({at}, __{name}({tr.truth(t, code, node)}))"
    return call


def _syncwarp(tr, node):
    args = _positional(tr, node, 0, 1, "cuda.syncwarp()")
    if not args:
        return T.void, "__syncwarp()"
    t, code = tr.scalar(args[0])
    return T.void, f"__syncwarp((unsigned int)({code}))"


_SHUFFLE_TYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64")


def _shfl(name):
    def call(tr, node):
        mask, value, lane = _positional(tr, node, 3, 3, f"cuda.{name}()")
        mt, mcode = tr.scalar(mask)
        vt, vcode = tr.scalar(value)
        lt, lcode = tr.scalar(lane)
        if vt.dtype.name not in _SHUFFLE_TYPES:
            raise tr.error(node, f"cuda.{name}() shuffles int32, int64, uint32, uint64, "
                                 f"float32 and float64 values, not {vt}")
        lane_type = "unsigned int" if name in ("shfl_up_sync", "shfl_down_sync") else "int"
        return vt, (f"__{name}((unsigned int)({mcode}), {vcode}, ({lane_type})({lcode}))")
    return call


def _vote(name, gives):
    def call(tr, node):
        mask, pred = _positional(tr, node, 2, 2, f"cuda.{name}()")
        mt, mcode = tr.scalar(mask)
        pt, pcode = tr.scalar(pred)
        code = f"__{name}((unsigned int)({mcode}), {tr.truth(pt, pcode, node)})"
        if name == "eq_sync":
            p = tr.truth(pt, pcode, node)
            code = (f"(__all_sync((unsigned int)({mcode}), {p}) || "
                    f"!__any_sync((unsigned int)({mcode}), {p}))")
        return gives, code if gives != T.boolean or name == "eq_sync" else f"({code} != 0)"
    return call


def _bits(name):
    def call(tr, node):
        (a,) = _positional(tr, node, 1, 1, f"cuda.{name}()")
        t, code = tr.scalar(a)
        if not t.is_int:
            raise tr.error(node, f"cuda.{name}() takes an integer, not {t}")
        wide = t.bits == 64
        if name == "brev":
            if wide:
                return T.uint64, f"__brevll((unsigned long long)({code}))"
            return T.uint32, f"__brev((unsigned int)({code}))"
        f = {"popc": "__popc", "clz": "__clz", "ffs": "__ffs"}[name]
        if wide:
            return T.int32, f"{f}ll(({'unsigned ' if name == 'popc' else ''}long long)({code}))"
        return T.int32, f"{f}(({'unsigned ' if name == 'popc' else ''}int)({code}))"
    return call


def _fma(tr, node):
    items = [tr.scalar(a) for a in _positional(tr, node, 3, 3, "cuda.fma()")]
    ft = T.float32 if all(t == T.float32 for t, _ in items) else T.float64
    f = "fmaf" if ft == T.float32 else "fma"
    return ft, f"{f}({', '.join(_cast(c, t, ft) for t, c in items)})"


def _cbrt(tr, node):
    (a,) = _positional(tr, node, 1, 1, "cuda.cbrt()")
    t, code = tr.scalar(a)
    ft = T.float32 if t == T.float32 else T.float64
    return ft, f"{'cbrtf' if ft == T.float32 else 'cbrt'}({_cast(code, t, ft)})"


def _selp(tr, node):
    p, a, b = _positional(tr, node, 3, 3, "cuda.selp()")
    pt, pcode = tr.scalar(p)
    at, acode = tr.scalar(a)
    bt, bcode = tr.scalar(b)
    r = T.unify(at, bt)
    return r, f"({tr.truth(pt, pcode, node)} ? {_cast(acode, at, r)} : {_cast(bcode, bt, r)})"


def _local_or_shared(space):
    def call(tr, node):
        args = _bind(tr, node, ("shape", "dtype"), what=f"cuda.{space}.array()")
        shape = _shape(tr, args["shape"])
        t0 = _dtype(tr, args["dtype"])
        at = T.Array(t0.dtype, len(shape), "C")
        n = int(np.prod(shape))
        store = f"pg_{space}_{getattr(node, 'lineno', 0)}_{getattr(node, 'col_offset', 0)}"
        if space == "shared":  # the checking mode's messages name it as Python does
            st = tr.stmt_node
            name = (st.targets[0].id if isinstance(st, ast.Assign) and st.value is node
                    and isinstance(st.targets[0], ast.Name) else None)
            tr.unit.shared[store] = (tr.src.filename, tr.src.line(node), name)
        if space == "shared" and n == 0:
            if len(shape) != 1:
                raise tr.error(node, "dynamic shared memory (a shape of 0) is 1-dimensional")
            tr.uses_dynamic_shared = True
            if not tr.dynamic_decl:
                tr.prologue.append("    extern __shared__ __align__(16) unsigned char "
                                   "pg_dynamic_shared[];")
                tr.dynamic_decl = True
            if not tr.kernel:
                raise tr.error(node, "dynamic shared memory in a device function is not "
                                     "supported yet: make the array in the kernel and pass it")
            size = f"(pg_dynamic_bytes / {t0.dtype.itemsize})"
            return at, _array_literal(at, f"({t0.ctype} *)pg_dynamic_shared", [size],
                                      (t0.dtype.itemsize,))
        if n == 0:
            raise tr.error(node, f"a {space} array of no elements")
        qual = "__shared__ " if space == "shared" else ""
        decl = f"    {qual}{t0.ctype} {store}[{n}];"
        if decl not in tr.prologue:
            tr.prologue.append(decl)
        return at, _array_literal(at, store, [f"{s}LL" for s in shape],
                                  _c_strides(shape, t0.dtype.itemsize))
    return call


def _const_array_like(tr, node):
    (a,) = _positional(tr, node, 1, 1, "cuda.const.array_like()")
    value = tr.const_value(a)
    if not isinstance(value, np.ndarray):
        raise tr.error(node, "cuda.const.array_like() takes a NumPy array known at compile "
                             "time (a module-level constant)")
    from .codegen import _Where
    return tr.unit.const_array(value, _Where(tr, node))


_INTS = ("int32", "uint32", "int64", "uint64")
_NUMBERS = _INTS + ("float32", "float64")
_ATOMIC_TYPES = {
    "add": _NUMBERS, "sub": _NUMBERS, "max": _NUMBERS, "min": _NUMBERS,
    "nanmax": _NUMBERS, "nanmin": _NUMBERS, "exch": _NUMBERS, "and_": _INTS,
    "or_": _INTS, "xor": _INTS, "inc": ("uint32", "uint64"), "dec": ("uint32", "uint64"),
    "cas": _INTS, "compare_and_swap": _INTS,
}


def _atomic(op):
    def call(tr, node):
        what = f"cuda.atomic.{op}()"
        if op == "cas":
            ary, idx, old, val = _positional(tr, node, 4, 4, what)
        elif op == "compare_and_swap":
            ary, old, val = _positional(tr, node, 3, 3, what)
            idx = None
        else:
            ary, idx, val = _positional(tr, node, 3, 3, what)
        at, acode = tr.value(ary)
        if not isinstance(at, T.Array):
            raise tr.error(node, f"{what} takes an array first, not {at}")
        tr.writable(at, node)
        if at.dtype.name not in _ATOMIC_TYPES[op]:
            allowed = ", ".join(_ATOMIC_TYPES[op])
            raise tr.error(node, f"{what} on {at.dtype.name} is not supported: it takes "
                                 f"{allowed}")
        if idx is None:
            idx_codes = ["0LL"] * at.ndim
        else:
            idx_codes = tr.indices(idx, node)
        if len(idx_codes) != at.ndim:
            raise tr.error(node, f"{what}: the array has {at.ndim} dimensions, and the index "
                                 f"gives {len(idx_codes)}")
        et = at.element
        name = _c_string(ast.unparse(ary))
        ptr = f"&PG_JIT_AT({name}, {acode}, {', '.join(idx_codes)})"
        vt, vcode = tr.scalar(val)
        if op in ("cas", "compare_and_swap"):
            ot, ocode = tr.scalar(old)
            return et, f"pg_jit::atomic_cas({ptr}, {_cast(ocode, ot, et)}, {_cast(vcode, vt, et)})"
        name = op.rstrip("_")
        return et, f"pg_jit::atomic_{name}({ptr}, {_cast(vcode, vt, et)})"
    return call


def _activemask(tr, node):
    _positional(tr, node, 0, 0, "cuda.activemask()")
    return T.uint32, "__activemask()"


def _lanemask_lt(tr, node):
    _positional(tr, node, 0, 0, "cuda.lanemask_lt()")
    return T.uint32, "((1u << pg_jit::laneid()) - 1u)"


def _threadfence(name):
    def call(tr, node):
        _positional(tr, node, 0, 0, f"cuda.{name}()")
        return T.void, f"__{name}()"
    return call


_DEVICE = {
    device.grid: lambda tr, node: _grid(tr, node, False),
    device.gridsize: lambda tr, node: _grid(tr, node, True),
    device.syncthreads: _sync("syncthreads"),
    device.syncthreads_count: _sync("syncthreads_count", T.int32),
    device.syncthreads_and: _sync("syncthreads_and", T.int32),
    device.syncthreads_or: _sync("syncthreads_or", T.int32),
    device.syncwarp: _syncwarp,
    device.threadfence: _threadfence("threadfence"),
    device.threadfence_block: _threadfence("threadfence_block"),
    device.threadfence_system: _threadfence("threadfence_system"),
    device.shfl_sync: _shfl("shfl_sync"), device.shfl_up_sync: _shfl("shfl_up_sync"),
    device.shfl_down_sync: _shfl("shfl_down_sync"),
    device.shfl_xor_sync: _shfl("shfl_xor_sync"),
    device.all_sync: _vote("all_sync", T.boolean), device.any_sync: _vote("any_sync",
                                                                          T.boolean),
    device.eq_sync: _vote("eq_sync", T.boolean),
    device.ballot_sync: _vote("ballot_sync", T.uint32),
    device.activemask: _activemask, device.lanemask_lt: _lanemask_lt,
    device.popc: _bits("popc"), device.clz: _bits("clz"), device.ffs: _bits("ffs"),
    device.brev: _bits("brev"), device.fma: _fma, device.cbrt: _cbrt, device.selp: _selp,
    device.shared.array: _local_or_shared("shared"),
    device.local.array: _local_or_shared("local"),
    device.const.array_like: _const_array_like,
}
for _op in device.ATOMICS:
    _DEVICE[getattr(device.atomic, _op)] = _atomic(_op)


# ---- the random numbers: pygpu.cuda.random ---------------------------------------------


def _xoroshiro(name):
    def call(tr, node):
        states, index = _positional(tr, node, 2, 2, f"{name}()")
        st, scode = tr.value(states)
        if not (isinstance(st, T.Array) and st.dtype == np.dtype(np.uint64) and
                st.ndim == 2):
            raise tr.error(node, f"{name}() takes the states that "
                                 "create_xoroshiro128p_states made (a 2-d uint64 array), "
                                 f"not {st}")
        it, icode = tr.scalar(index)
        if not it.is_int:
            raise tr.error(node, f"{name}(): the index must be an int, not {it}")
        gives = T.float32 if name.endswith("32") else T.float64
        return gives, f"pg_jit::{name}(&pg_jit::at({scode}, {icode}, 0LL))"
    return call


def _random_table():
    from . import random as r
    return {
        r.xoroshiro128p_uniform_float32: _xoroshiro("xoroshiro128p_uniform_float32"),
        r.xoroshiro128p_uniform_float64: _xoroshiro("xoroshiro128p_uniform_float64"),
        r.xoroshiro128p_normal_float32: _xoroshiro("xoroshiro128p_normal_float32"),
        r.xoroshiro128p_normal_float64: _xoroshiro("xoroshiro128p_normal_float64"),
    }


# ---- device functions -------------------------------------------------------------------


def _device_call(tr, disp, node):
    if node.keywords:
        raise tr.error(node, "device functions take positional arguments in kernels")
    # a function or a dtype (a Python object known at compile time) may be an
    # argument, as in Numba: the device function is compiled for it
    items = [tr.expr(a) if _compile_time_object(tr, a) else tr.value(a) for a in node.args]
    argtypes = tuple(t for t, _ in items)
    consts = tuple(_int_constant(tr, a) for a in node.args)
    cname, ret = disp._device_translate(tr.unit, argtypes, tr, node,
                                        consts if any(c is not None for c in consts) else None)
    if cname in tr.unit.failing:  # its assert may fail: the caller returns too
        tr.call_failed = True
        if not tr.kernel:
            tr.unit.failing.add(tr.cname)
    codes = [c for t, c in items if not isinstance(t, T.Global)]
    return ret, f"{cname}({', '.join(codes)})"


def _int_constant(tr, node):
    """An argument's value where it is an int, a bool or a tuple of them
    known at compile time, else None."""
    def ints(v):
        return isinstance(v, int) or (isinstance(v, tuple) and all(ints(x) for x in v))
    try:
        value = tr.const_value(node)
    except TypingError:
        return None
    return value if ints(value) else None


def _compile_time_object(tr, node):
    """Whether an argument is a Python object with no value on the device
    that a device function may take: a function (a device function, a
    cuda.atomic function, math.sqrt, ...) or a dtype."""
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return False
    try:
        t, _ = tr.expr(node)
    except TypingError:
        return False
    if not isinstance(t, T.Global):
        return False
    obj = t.obj
    return callable(obj) or isinstance(obj, (np.dtype, ScalarName))


_TABLE = None
_NUMBA_CPU = {}  # id(a @numba.jit function) -> (it, its device function)


def _numba_jit_function(obj):
    """The device function of a @numba.jit (CPU) function, which Numba's
    kernels may call (its py_func, compiled as @cuda.jit(device=True)), or
    None for other objects."""
    found = _NUMBA_CPU.get(id(obj))
    if found is not None and found[0] is obj:
        return found[1]
    py = getattr(obj, "py_func", None)
    if not (type(obj).__module__.startswith("numba.") and hasattr(py, "__code__")):
        return None
    from .dispatcher import Dispatcher
    disp = Dispatcher(py, device=True)
    _NUMBA_CPU[id(obj)] = (obj, disp)
    return disp


def call(tr, obj, node):
    """The (type, C++) of a call of obj at node."""
    global _TABLE
    if _TABLE is None:
        table = {}
        for k, v in list(_BUILTINS.items()) + list(_DEVICE.items()) + list(
                _random_table().items()):
            table[id(k)] = (k, v)
        for k in (__import__("math").log, np.log):
            table[id(k)] = (k, _log)
        import cmath
        for name in list(_CMATH) + ["phase", "isnan", "isinf", "isfinite"]:
            k = getattr(cmath, name)
            table[id(k)] = (k, _cmath(name))
        for k in (__import__("math").radians, np.radians, np.deg2rad):
            table[id(k)] = (k, _angle(np.pi / 180))
        for k in (__import__("math").degrees, np.degrees, np.rad2deg):
            table[id(k)] = (k, _angle(180 / np.pi))
        _TABLE = table
    found = _TABLE.get(id(obj))
    if found is not None and found[0] is obj:
        return found[1](tr, node)
    spec = _MATH_FUNCS.get(id(obj))
    if spec is not None:
        return _math(tr, node, spec, ufunc=isinstance(obj, np.ufunc))
    if isinstance(obj, type) and issubclass(obj, (np.bool_, np.integer, np.floating,
                                                  np.complexfloating)):
        try:
            target = T.scalar(obj)
        except TypingError as exc:
            raise tr.error(node, str(exc)) from None
        return _to(target)(tr, node)
    if isinstance(obj, ScalarName):  # Numba's float32(x), from pygpu.cuda
        return _to(T.scalar(obj.dtype))(tr, node)
    from .dispatcher import Dispatcher
    if isinstance(obj, Dispatcher):
        if not obj.device:
            raise tr.error(node, f"{obj.__name__} is a kernel: a kernel calls device "
                                 "functions, made with @cuda.jit(device=True)")
        return _device_call(tr, obj, node)
    numba_cpu = _numba_jit_function(obj)
    if numba_cpu is not None:
        return _device_call(tr, numba_cpu, node)
    if obj is builtins.range:
        raise tr.error(node, "range() is supported as the iterable of a for loop only")
    if isinstance(obj, (device.Intrinsic,)):
        raise tr.error(node, f"cuda.{obj.name}() is not supported yet")
    if callable(obj) and hasattr(obj, "__code__"):
        raise tr.error(node, f"{getattr(obj, '__name__', obj)}() is a Python function: to "
                             "call it from a kernel, decorate it with "
                             "@cuda.jit(device=True)")
    raise tr.error(node, f"calling {obj!r} is not supported in kernels")
