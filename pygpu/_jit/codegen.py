"""From a typed Python function to CUDA C++.

A Translator walks the function's `ast` once per pass: each expression
gives its type (types.py's rules) and its C++ text together, and each
assignment unifies its variable's type; passes repeat until no variable's
type changes (Numba's unification of a variable's assignments), and the last
pass's text is the function. Every statement is preceded by a
`#line <n> "<file.py>"` directive, so that compiler messages, asserts and the
simulator's checking mode name the user's Python line. A Unit gathers what
one compiled module needs besides its kernel: the device functions the
kernel calls (translated for the argument types of each call), the structs
of its tuple types and its constant arrays.
"""

import ast
import builtins
import inspect
import linecache
import math
import textwrap

import numpy as np

from . import device
from . import types as T
from .errors import TypingError

# ---- the source of a Python function ---------------------------------------------


class FunctionSource:
    """A Python function's definition as ast, with where it came from."""

    def __init__(self, pyfunc):
        self.pyfunc = pyfunc
        self.name = pyfunc.__name__
        code = getattr(pyfunc, "__code__", None)
        if code is None:
            raise TypeError(f"cuda.jit compiles Python functions, not {pyfunc!r}")
        self.filename = inspect.getsourcefile(pyfunc) or code.co_filename
        try:
            found = _def_lines(pyfunc) if self.name != "<lambda>" else None
            lines, start = found or inspect.getsourcelines(pyfunc)
        except (OSError, TypeError) as exc:
            raise TypingError(f"cuda.jit needs the source of {self.name}() to compile it, "
                              f"and Python cannot find it ({exc}): define the function in "
                              "a file or a notebook cell", self.filename,
                              code.co_firstlineno) from None
        self.offset = start - 1
        try:
            tree = ast.parse(textwrap.dedent("".join(lines)))
        except SyntaxError:
            tree = ast.Module(body=[], type_ignores=[])  # a lambda inside a longer statement
        fdef = tree.body[0] if tree.body else None
        if self.name == "<lambda>":
            fdef = _lambda_def(tree, code, start)
        if not isinstance(fdef, ast.FunctionDef):
            raise TypingError(f"cuda.jit compiles functions defined with def, not "
                              f"{self.name}", self.filename, code.co_firstlineno)
        self.tree = fdef
        self.globals = pyfunc.__globals__
        self.closure = {}
        if pyfunc.__closure__:
            for name, cell in zip(code.co_freevars, pyfunc.__closure__, strict=True):
                try:
                    self.closure[name] = cell.cell_contents
                except ValueError:
                    pass
        self.lines = textwrap.dedent("".join(lines)).splitlines()

    def line(self, node):
        return getattr(node, "lineno", 1) + self.offset

    def text(self, node):
        i = getattr(node, "lineno", 1) - 1
        return self.lines[i].strip() if 0 <= i < len(self.lines) else ""

    def lookup(self, name):
        """(found, value) of a name the function reads but does not assign."""
        if name in self.closure:
            return True, self.closure[name]
        if name in self.globals:
            return True, self.globals[name]
        if hasattr(builtins, name):
            return True, getattr(builtins, name)
        return False, None


def _last_line(code):
    """The last source line of any instruction of code or of the code
    objects in it (nested functions, lambdas, comprehensions)."""
    last = code.co_firstlineno
    for _, end, _, _ in code.co_positions():
        if end is not None and end > last:
            last = end
    for const in code.co_consts:
        if hasattr(const, "co_positions"):
            last = max(last, _last_line(const))
    return last


def _def_lines(pyfunc):
    """(lines, first line number) of a function's definition, decorators
    included, as inspect.getsourcelines gives them, found from its code
    object's line table rather than by tokenizing (a tenth of the time: the
    first launch in a process pays it): from co_firstlineno to the last line
    an instruction comes from, then on over the lines indented deeper than
    the def (statements with no instructions, a trailing `pass`, comments).
    None where that does not parse as one def (inspect then finds it)."""
    code = pyfunc.__code__
    lines = linecache.getlines(code.co_filename, pyfunc.__globals__)
    first = code.co_firstlineno
    if not lines or first > len(lines):
        return None
    end = min(_last_line(code), len(lines))
    head = lines[first - 1]
    indent = len(head) - len(head.lstrip())
    while end < len(lines):
        text = lines[end]
        if text.strip() and len(text) - len(text.lstrip()) <= indent:
            break
        end += 1
    while end > first and not lines[end - 1].strip():
        end -= 1  # no trailing blank lines (inspect gives none either)
    block = lines[first - 1:end]
    try:
        tree = ast.parse(textwrap.dedent("".join(block)))
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or \
            tree.body[0].name != pyfunc.__name__:
        return None
    return block, first


def _lambda_def(tree, code, start):
    """A lambda of the parsed lines, as `def` returning its body: the one
    that starts on the code's first line and takes its arguments (None where
    that is not one lambda)."""
    names = list(code.co_varnames[:code.co_argcount])
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and
             n.lineno == code.co_firstlineno - start + 1 and
             [a.arg for a in n.args.args] == names]
    if len(found) != 1:
        return None
    lam = found[0]
    ret = ast.Return(value=lam.body)
    fdef = ast.FunctionDef(name="<lambda>", args=lam.args, body=[ret], decorator_list=[],
                           returns=None)
    for node in (ret, fdef):
        ast.copy_location(node, lam)
    return fdef


# ---- what one compiled module holds ---------------------------------------------


class Unit:
    """The pieces of one module: tuple structs, constant arrays, device
    functions, in an order where each is defined before use."""

    def __init__(self):
        self.structs = {}  # ctype -> definition
        self.consts = {}  # id(array) -> (array, name, definition)
        self.functions = []  # definitions, callees first
        self.device = {}  # (id(dispatcher), argtypes) -> (cname, return type)
        self.busy = {}  # the device functions being translated: key -> Translator
        self.keep = []  # device arrays the code holds the address of
        # where each assert is: (file, line, function, kind, condition, message);
        # an assert's id in the record is its index + 1
        self.asserts = []
        self.assert_ids = {}  # (function, line, column) -> its id
        self.barriers = []  # (file, line) of each barrier; its id is its index + 1
        self.failing = set()  # the device functions (C++ names) that may assert
        self.shared = {}  # C++ name of a shared array -> (file, line, Python name)

    def barrier_id(self, filename, line):
        """The id of the barrier at filename:line (its index in barriers + 1)."""
        try:
            return self.barriers.index((filename, line)) + 1
        except ValueError:
            self.barriers.append((filename, line))
            return len(self.barriers)

    def tuple_type(self, t):
        if t.ctype not in self.structs:
            for item in t.items:
                self.need(item)
            fields = " ".join(f"{x.ctype} f{i};" for i, x in enumerate(t.items))
            self.structs[t.ctype] = f"struct {t.ctype} {{ {fields} }};"
        return t

    def need(self, t):
        if isinstance(t, T.Tuple):
            self.tuple_type(t)

    def const_array(self, arr, where):
        key = id(arr)
        if key not in self.consts:
            try:
                t = T.Array(T.scalar(arr.dtype).dtype, arr.ndim, "C", readonly=True)
            except TypingError as exc:
                raise where.error(f"the constant array's {exc}") from None
            if arr.nbytes > 60000:
                raise where.error(f"a constant array holds at most 60000 bytes (CUDA's "
                                  f"constant memory is 64 KiB); this one holds {arr.nbytes}")
            flat = np.ascontiguousarray(arr).ravel()
            # complex numbers are stored as their parts, float16 ones as their
            # bits (pg::complex and pg::half have those layouts); the array
            # reads them through its element type
            store = flat
            if t.element.kind == "c":
                store = flat.view(flat.real.dtype)
            elif t.element.dtype.char == "e":
                store = flat.view(np.uint16)
            if store.dtype.kind == "f" and not np.isfinite(store).all():
                raise where.error("a constant array with inf or nan is not supported yet")
            st = T.scalar(store.dtype)
            name = f"pg_const_{len(self.consts)}"
            values = ", ".join(_literal(v, st) for v in store.tolist()) or "0"
            definition = (f"__constant__ {st.ctype} {name}[{max(store.size, 1)}] = "
                          f"{{{values}}};")
            self.consts[key] = (arr, name, t, definition)
        _, name, t, _ = self.consts[key]
        strides = ", ".join(str(s) for s in _c_strides(arr.shape, arr.itemsize)) or "0"
        shape = ", ".join(str(s) for s in arr.shape) or "0"
        return t, f"{t.ctype}{{({t.element.ctype} *){name}, {{{shape}}}, {{{strides}}}}}"

    def global_array(self, arr, where):
        """A device array the kernel names as a global: captured by its
        address, as Numba captures one (the kernel sees later writes to it;
        the compiled kernel keeps the array alive)."""
        from .. import asarray
        d = asarray(arr)
        try:
            t = T.Array(T.scalar(d.dtype).dtype, d.ndim, "A")
        except TypingError as exc:
            raise where.error(f"the global device array's {exc}") from None
        self.keep.append(d)
        shape = ", ".join(f"{n}LL" for n in d.shape) or "0LL"
        strides = ", ".join(f"{n}LL" for n in d.strides) or "0LL"
        return t, (f"{t.ctype}{{({t.element.ctype} *){d.ptr}ULL, {{{shape}}}, "
                   f"{{{strides}}}}}")

    def source(self):
        parts = ["#include <pygpu/jit.h>"]
        if any("pg::" in f for f in self.functions + list(self.structs.values())):
            parts.insert(0, "#include <pygpu/ufunc.h>")  # pg::complex
        parts += list(self.structs.values())
        parts += [c[3] for c in self.consts.values()]
        if self.asserts:
            parts.append("__device__ unsigned int pg_jit_assert_record[8];")
        if self.barriers:
            parts.append("#ifndef __CUDACC__\n__device__ unsigned int pg_jit_barrier_at[1024];"
                         "\n#endif")
        parts += self.functions
        return "\n".join(parts) + "\n"


def _is_constant(value):
    """Whether a local's value known at compile time may stand for it: a
    number or a tuple of numbers."""
    if isinstance(value, tuple):
        return all(_is_constant(v) for v in value)
    return isinstance(value, (int, float, bool, np.integer, np.floating))


def _tuple_leaves(t, prefix):
    """The kernel parameters a tuple argument comes as, depth first: a number
    as itself, an array as its address, extents and byte strides."""
    out = []
    for i, x in enumerate(t.items):
        name = f"{prefix}_{i}"
        if isinstance(x, T.Tuple):
            out += _tuple_leaves(x, name)
        elif isinstance(x, T.Array):
            out.append(f"{x.element.ctype} *{name}")
            out += [f"long long {name}_s{k}" for k in range(x.ndim)]
            out += [f"long long {name}_t{k}" for k in range(x.ndim)]
        else:
            out.append(f"{x.ctype} {name}")
    return out


def _tuple_init(t, prefix):
    parts = []
    for i, x in enumerate(t.items):
        name = f"{prefix}_{i}"
        if isinstance(x, T.Tuple):
            parts.append(_tuple_init(x, name))
        elif isinstance(x, T.Array):
            shape = ", ".join(f"{name}_s{k}" for k in range(x.ndim))
            strides = ", ".join(f"{name}_t{k}" for k in range(x.ndim))
            parts.append(f"{x.ctype}{{{name}, {{{shape}}}, {{{strides}}}}}")
        else:
            parts.append(name)
    return f"{t.ctype}{{{', '.join(parts)}}}"


def _is_device_array(value):
    from .. import _core
    return isinstance(value, _core.DeviceArray) or (
        hasattr(value, "__cuda_array_interface__") and not isinstance(value, type))


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _literal(value, t):
    """A Python number as a C++ literal of type t."""
    if t.kind == "c":
        value = complex(value)
        r = t.real
        return f"pg::mk<{r.ctype}>({_literal(value.real, r)}, {_literal(value.imag, r)})"
    if t.kind == "b":
        return "true" if value else "false"
    if t.dtype.char == "e":
        return f"pg::conv<pg::half>::from({_literal(value, T.float32)})"
    if t.is_int:
        value = int(value)
        if t.kind == "u" or value > 2**63 - 1:
            return f"{value}ULL"
        return f"{value}LL" if value != -2**63 else "(-9223372036854775807LL - 1)"
    value = float(value)
    if math.isnan(value):
        text = "pg_jit::nan64()"
    elif math.isinf(value):
        text = "pg_jit::inf64()" if value > 0 else "(-pg_jit::inf64())"
    else:
        text = repr(value)
        if "e" not in text and "." not in text:
            text += ".0"
        if t.dtype.itemsize == 4:
            return text + "f"
    return text if t.dtype.itemsize == 8 else f"((float){text})"


def _cast(code, have, want):
    if have == want:
        return code
    if isinstance(want, T.Scalar) and isinstance(have, T.Scalar):
        if want.kind == "c" or have.kind == "c" or "e" in (want.dtype.char,
                                                           have.dtype.char):
            return f"pg::conv<{want.ctype}>::from({code})"
        return f"(({want.ctype})({code}))"
    raise TypeError(f"cannot cast {have} to {want}")


_C_STRING_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _c_string(text):
    out = []
    for ch in text:
        if ch in _C_STRING_ESCAPES:
            out.append(_C_STRING_ESCAPES[ch])
        elif ord(ch) < 32 or ord(ch) > 126:
            out.append("".join(f"\\x{b:02x}\"\"" for b in ch.encode()))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


# ---- functions of math, numpy and the builtins ------------------------------------

# name -> (C function for double, for float, arguments, what it gives:
#          "float" the arguments' float type, "int" int64, "bool")
_MATH = {
    "sqrt": 1, "exp": 1, "expm1": 1, "log2": 1, "log10": 1, "log1p": 1,
    "sin": 1, "cos": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1, "sinh": 1, "cosh": 1,
    "tanh": 1, "asinh": 1, "acosh": 1, "atanh": 1, "erf": 1, "erfc": 1, "lgamma": 1,
    "fabs": 1, "atan2": 2, "hypot": 2, "copysign": 2, "fmod": 2, "pow": 2,
}
_MATH_FUNCS = {}
for _name in ("exp2", "cbrt"):  # Python 3.11's
    if hasattr(math, _name):
        _MATH[_name] = 1
for _name, _n in _MATH.items():
    _MATH_FUNCS[id(getattr(math, _name))] = (_name, _name + "f", _n, "float")
_MATH_FUNCS[id(math.gamma)] = ("tgamma", "tgammaf", 1, "float")
_MATH_FUNCS[id(math.floor)] = ("floor", "floorf", 1, "int")
_MATH_FUNCS[id(math.ceil)] = ("ceil", "ceilf", 1, "int")
_MATH_FUNCS[id(math.trunc)] = ("trunc", "truncf", 1, "int")
_MATH_FUNCS[id(math.isnan)] = ("pg_jit::isnan_", "pg_jit::isnan_", 1, "bool")
_MATH_FUNCS[id(math.isinf)] = ("pg_jit::isinf_", "pg_jit::isinf_", 1, "bool")
_MATH_FUNCS[id(math.isfinite)] = ("pg_jit::isfinite_", "pg_jit::isfinite_", 1, "bool")
_NUMPY_FUNCS = {
    "sqrt": "sqrt", "exp": "exp", "expm1": "expm1", "log": "log", "log2": "log2",
    "log10": "log10", "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan",
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "sinh": "sinh", "cosh": "cosh",
    "tanh": "tanh", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
    "fabs": "fabs", "arctan2": "atan2", "hypot": "hypot", "copysign": "copysign",
    "floor": "floor", "ceil": "ceil", "trunc": "trunc", "exp2": "exp2", "cbrt": "cbrt",
}
for _name, _c in _NUMPY_FUNCS.items():
    _MATH_FUNCS[id(getattr(np, _name))] = (_c, _c + "f", 2 if _c in (
        "atan2", "hypot", "copysign") else 1, "float")
_MATH_FUNCS[id(np.isnan)] = _MATH_FUNCS[id(math.isnan)]
_MATH_FUNCS[id(np.isinf)] = _MATH_FUNCS[id(math.isinf)]
_MATH_FUNCS[id(np.isfinite)] = _MATH_FUNCS[id(math.isfinite)]

_BINOPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&",
    ast.BitOr: "|", ast.BitXor: "^",
}
_COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
            ast.NotEq: "!="}

_DIM3 = {id(device.threadIdx): "threadIdx", id(device.blockIdx): "blockIdx",
         id(device.blockDim): "blockDim", id(device.gridDim): "gridDim"}

_UNSUPPORTED_STATEMENTS = {
    ast.Try: "try/except", ast.With: "the with statement", ast.Raise: "raise",
    ast.FunctionDef: "a nested def", ast.ClassDef: "class", ast.Delete: "del",
    ast.Global: "global", ast.Nonlocal: "nonlocal", ast.Import: "import",
    ast.ImportFrom: "import", ast.AsyncFunctionDef: "async def",
    ast.AsyncFor: "async for", ast.AsyncWith: "async with",
}
if hasattr(ast, "Match"):
    _UNSUPPORTED_STATEMENTS[ast.Match] = "match"
if hasattr(ast, "TryStar"):
    _UNSUPPORTED_STATEMENTS[ast.TryStar] = "try/except*"


class _Untyped(Exception):
    """A variable read before any assignment to it was typed (a loop-carried
    one, assigned further down): the statement waits for the next pass."""

    def __init__(self, node, name):
        super().__init__(name)
        self.node, self.name = node, name


class _Where:
    """Where an error is: the node and the source, for messages."""

    def __init__(self, translator, node):
        self.t, self.node = translator, node

    def error(self, what):
        return self.t.error(self.node, what)


# ---- the translator ---------------------------------------------------------------


class Translator:
    """One Python function, for one tuple of argument types, as C++."""

    MAX_PASSES = 30

    def __init__(self, source, argtypes, unit, kernel, cname):
        self.src = source
        self.argtypes = tuple(argtypes)
        self.unit = unit
        self.kernel = kernel
        self.cname = cname
        self.vars = {}
        self.ret = None
        self.fixed_ret = False  # the return type is a signature's
        self._constant_locals = None
        self.params = ()
        self.param_consts = ()  # per parameter, its value where the call's is constant
        self.uses_dynamic_shared = False
        self.call_failed = False  # the statement called a device function that may assert
        self.stmt_node = None  # the statement being translated

    # -- messages ---------------------------------------------------------------

    def error(self, node, what):
        line = self.src.line(node)
        kind = "kernel" if self.kernel else "device function"
        text = self.src.text(node)
        return TypingError(f"{self.src.filename}:{line}: in {kind} {self.src.name}(): {what}"
                           + (f"\n    {text}" if text else ""), self.src.filename, line)

    def _line(self, node):
        name = self.src.filename.replace("\\", "\\\\").replace('"', '\\"')
        return f'#line {self.src.line(node)} "{name}"'

    # -- the function -----------------------------------------------------------

    def translate(self):
        fdef = self.src.tree
        args = fdef.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
            raise self.error(fdef, "a kernel's parameters must be plain positional ones "
                                   "(no *args, **kwargs, keyword-only or default values)")
        names = [a.arg for a in args.args]
        if len(names) != len(self.argtypes):
            raise self.error(fdef, f"{self.src.name}() takes {len(names)} argument"
                                   f"{'s' if len(names) != 1 else ''}, "
                                   f"{len(self.argtypes)} given")
        self.params = names
        for n in ast.walk(fdef):  # their names would read as unassigned below
            if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                kind = {ast.ListComp: "a list comprehension", ast.SetComp: "a set comprehension",
                        ast.DictComp: "a dict comprehension",
                        ast.GeneratorExp: "a generator expression"}[type(n)]
                raise self.error(n, f"{kind} ({ast.unparse(n)}) is not supported in kernels: "
                                    "write the loop, into a cuda.local.array")
        self._check_assigned_before_use(fdef, set(names))
        if not self.kernel and any(isinstance(n, ast.Assert) for n in ast.walk(fdef)):
            self.unit.failing.add(self.cname)  # before the body: it may call itself
        for name, t in zip(names, self.argtypes, strict=True):
            self.unit.need(t)
            self.vars[name] = t
        for _ in range(self.MAX_PASSES):
            self.changed = False
            self.prologue = []
            self.counter = 0
            self.dynamic_decl = False
            self.waiting = []
            body = self.block(fdef.body, 1)
            if self.waiting and not self.changed:
                first = self.waiting[0]
                raise self.error(first.node, f"variable '{first.name}' is used before it "
                                             "is assigned")
            if not self.changed and not self.waiting:
                break
        else:
            raise self.error(fdef, "the types of the variables do not settle")
        if self.kernel and self.ret not in (None, T.void):
            raise self.error(fdef, "a kernel returns nothing (return a value from a "
                                   "device function, @cuda.jit(device=True))")
        return self.assemble(body)

    def assemble(self, body):
        decls = []
        for name, t in self.vars.items():
            if name in self.params:
                continue
            if isinstance(t, (T.Global, T.StringLiteral)):
                continue
            self.unit.need(t)
            decls.append(f"    {t.ctype} v_{name}{{}};")
        lines = [self._line(self.src.tree)]
        if self.kernel:
            params, setup = [], []
            for name, t in zip(self.params, self.argtypes, strict=True):
                if isinstance(t, T.Array):
                    n = t.ndim
                    # the pointer keeps the Python name where C++ allows it, so
                    # that the simulator's checking mode names the argument
                    pointer = name if _plain_c_name(name) else f"p_{name}"
                    params.append(f"{t.element.ctype} *{pointer}")
                    params += [f"long long p_{name}_s{k}" for k in range(n)]
                    params += [f"long long p_{name}_t{k}" for k in range(n)]
                    shape = ", ".join(f"p_{name}_s{k}" for k in range(n))
                    strides = ", ".join(f"p_{name}_t{k}" for k in range(n))
                    setup.append(f"    {t.ctype} v_{name} = {{{pointer}, {{{shape}}}, "
                                 f"{{{strides}}}}};")
                elif isinstance(t, T.Tuple):
                    # a tuple argument comes item by item (CUDA passes structs
                    # by value, but the launch path packs numbers one by one)
                    params += _tuple_leaves(t, f"p_{name}")
                    setup.append(f"    {t.ctype} v_{name} = {_tuple_init(t, f'p_{name}')};")
                else:
                    params.append(f"{t.ctype} v_{name}")
            if self.uses_dynamic_shared:
                params.append("long long pg_dynamic_bytes")
            lines.append(f'extern "C" __global__ void {self.cname}('
                         f'{", ".join(params)})\n{{')
            lines += setup
        else:
            ret = self.ret or T.void
            self.unit.need(ret)
            # an argument known at compile time (a function, a dtype) is no
            # parameter: the function is compiled for it
            params = [f"{t.ctype} v_{n}" for n, t in zip(self.params, self.argtypes,
                                                         strict=True)
                      if not isinstance(t, T.Global)]
            lines.append(f"__device__ {ret.ctype} {self.cname}({', '.join(params)})\n{{")
        lines += decls
        lines += self.prologue
        lines += body
        lines.append("}")
        return "\n".join(lines)

    # -- statements -------------------------------------------------------------

    def block(self, stmts, ind):
        out = []
        for s in stmts:
            try:
                out += self.stmt(s, ind)
            except _Untyped as wait:
                self.waiting.append(wait)
        return out

    def stmt(self, node, ind):
        outer, outer_node = self.call_failed, self.stmt_node
        self.call_failed, self.stmt_node = False, node
        try:
            out = self._stmt(node, ind)
            if self.call_failed:  # a device function's assert failed: return too
                out = out + [f"{'    ' * ind}{self.fail_check()}"]
        finally:
            self.call_failed, self.stmt_node = outer, outer_node
        return out

    def fail_return(self):
        """The return of a function whose assert (or callee's) failed."""
        if self.kernel or self.ret in (None, T.void):
            return "return;"
        return "return {};"

    def fail_check(self):
        return f"if (pg_jit::failed(pg_jit_assert_record)) {self.fail_return()}"

    def header_failed(self):
        """Whether the header just translated (an if's or while's test)
        called a device function that may assert; clears the flag."""
        found, self.call_failed = self.call_failed, False
        return found

    def _stmt(self, node, ind):
        pad = "    " * ind
        kind = type(node)
        if kind in _UNSUPPORTED_STATEMENTS:
            raise self.error(node, f"{_UNSUPPORTED_STATEMENTS[kind]} is not supported in "
                                   "kernels")
        head = [self._line(node)]
        if isinstance(node, ast.Expr):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return []  # a docstring
            t, code = self.expr(node.value)
            return head + [f"{pad}{code};"] if code else []
        if isinstance(node, ast.Pass):
            return []
        if isinstance(node, ast.Assign):
            t, code = self.expr(node.value)
            out = head
            if len(node.targets) > 1:
                tmp = self.temp()
                self.unit.need(t)
                out.append(f"{pad}{{ {self._ctype(t, node)} {tmp} = {code};")
                for target in node.targets:
                    out += self.assign(target, t, tmp, pad + "  ", node)
                out.append(f"{pad}}}")
                return out
            return out + self.assign(node.targets[0], t, code, pad, node)
        if isinstance(node, ast.AnnAssign):
            if node.value is None:
                return []
            t, code = self.expr(node.value)
            return head + self.assign(node.target, t, code, pad, node)
        if isinstance(node, ast.AugAssign):
            return head + self.augassign(node, pad)
        if isinstance(node, ast.If):
            known = self.known_test(node.test)
            if known is not None:  # Numba prunes a branch a constant rules out
                return self.block(node.body if known else node.orelse, ind)
            cond = self.test(node.test)
            if self.header_failed():  # the test first, then whether it failed
                cond = (f"bool pg_c = ({cond}); pg_jit::failed(pg_jit_assert_record)) "
                        f"{{ {self.fail_return()} }} else if (pg_c")
            out = head + [f"{pad}if ({cond}) {{"] + self.block(node.body, ind + 1)
            if node.orelse:
                out += [f"{pad}}} else {{"] + self.block(node.orelse, ind + 1)
            return out + [f"{pad}}}"]
        if isinstance(node, ast.While):
            if node.orelse:
                raise self.error(node, "while ... else is not supported in kernels")
            cond = self.test(node.test)
            if self.header_failed():  # the test, whether it failed, then the body
                return head + [f"{pad}for (;;) {{", f"{pad}    bool pg_c = ({cond});",
                               f"{pad}    {self.fail_check()}",
                               f"{pad}    if (!pg_c) break;"] + \
                    self.block(node.body, ind + 1) + [f"{pad}}}"]
            return head + [f"{pad}while ({cond}) {{"] + self.block(node.body, ind + 1) + \
                [f"{pad}}}"]
        if isinstance(node, ast.For):
            return head + self.for_loop(node, pad, ind)
        if isinstance(node, ast.Break):
            return head + [f"{pad}break;"]
        if isinstance(node, ast.Continue):
            return head + [f"{pad}continue;"]
        if isinstance(node, ast.Return):
            return head + self.return_(node, pad)
        if isinstance(node, ast.Assert):
            cond = self.test(node.test)
            if node.msg is not None:
                if not (isinstance(node.msg, ast.Constant) and isinstance(node.msg.value,
                                                                          str)):
                    raise self.error(node, "an assert's message must be a str constant")
            message = node.msg.value if node.msg is not None else None
            key = (self.cname, node.lineno, node.col_offset)
            if key not in self.unit.assert_ids:
                self.unit.asserts.append((self.src.filename, self.src.line(node),
                                          self.src.name, self.kernel,
                                          ast.unparse(node.test), message))
                self.unit.assert_ids[key] = len(self.unit.asserts)
            if not self.kernel:
                self.unit.failing.add(self.cname)
            return head + [f"{pad}if (!({cond})) {{ pg_jit::assert_failed("
                           f"pg_jit_assert_record, {self.unit.assert_ids[key]}u); "
                           f"{self.fail_return()} }}"]
        raise self.error(node, f"the statement {kind.__name__} is not supported in kernels")

    def known_test(self, test):
        """The truth of an if's test where it is a name or `not name` whose
        value is known at compile time (a constant, a constant argument of
        a device function), else None."""
        neg = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        node = test.operand if neg else test
        if not isinstance(node, (ast.Name, ast.Constant)):
            return None
        try:
            value = self.const_value(node)
        except TypingError:
            return None
        if not isinstance(value, (bool, int, float)):
            return None
        return (not value) if neg else bool(value)

    def temp(self):
        self.counter += 1
        return f"pg_t{self.counter}"

    def _ctype(self, t, node):
        if t.ctype is None or isinstance(t, T.Void):
            raise self.error(node, f"{t} has no value on the device")
        self.unit.need(t)
        return t.ctype

    def set_var(self, name, t, node):
        if isinstance(t, (T.Global, T.StringLiteral, T.Void)):
            raise self.error(node, f"variable '{name}' cannot hold {t} in a kernel")
        old = self.vars.get(name)
        if old is None:
            self.vars[name] = t
            self.changed = True
            return t
        new = T.unify(old, t)
        if new is None:
            raise self.error(node, f"variable '{name}' is assigned both {old} and {t}; a "
                                   "variable keeps one type in a kernel")
        if new != old:
            if name in self.params:
                raise self.error(node, f"parameter '{name}' is {old}, and is assigned {t}")
            self.vars[name] = new
            self.changed = True
        return new

    def assign(self, target, t, code, pad, node):
        if isinstance(target, ast.Name):
            vt = self.set_var(target.id, t, node)
            return [f"{pad}v_{target.id} = {self.convert(code, t, vt, node)};"]
        if isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(t, T.Tuple):
                raise self.error(node, f"cannot unpack {t} into {len(target.elts)} names")
            if len(t.items) != len(target.elts):
                raise self.error(node, f"cannot unpack a tuple of {len(t.items)} into "
                                       f"{len(target.elts)} names")
            tmp = self.temp()
            out = [f"{pad}{{ {self._ctype(t, node)} {tmp} = {code};"]
            for i, (elt, it) in enumerate(zip(target.elts, t.items, strict=True)):
                out += self.assign(elt, it, f"{tmp}.f{i}", pad + "  ", node)
            return out + [f"{pad}}}"]
        if isinstance(target, ast.Subscript):
            base_t, _ = self.value(target.value)
            self.writable(base_t, node)
            if isinstance(base_t, T.Array) and self._is_view(target.slice, base_t):
                return self.assign_view(target, t, code, pad, node)
            at, ref = self.element_ref(target)
            return [f"{pad}{ref} = {self.convert(code, t, at, node)};"]
        if isinstance(target, ast.Attribute):
            raise self.error(node, "assigning to an attribute is not supported in kernels")
        raise self.error(node, "this assignment target is not supported in kernels")

    def writable(self, t, node):
        """Numba's TypingError for a store into a readonly array."""
        if isinstance(t, T.Array) and t.readonly:
            raise self.error(node, f"cannot modify {t}: a constant array (a global NumPy "
                                   "array, cuda.const.array_like) or a NumPy array that is "
                                   "not writeable is read-only in kernels")

    def assign_view(self, target, t, code, pad, node):
        """a[1:] = x, a[i] = row: every element of the view gets the number,
        or the element of the array of the same shape (NumPy's assignment
        without broadcasting but of a number)."""
        vt, vcode = self.view(*self.value(target.value), target)
        v, k, n, src = self.temp(), self.temp(), self.temp(), self.temp()
        if isinstance(t, T.Array):
            if t.ndim != vt.ndim:
                raise self.error(node, f"assigning an array of {t.ndim} dimensions to a view "
                                       f"of {vt.ndim}: broadcasting is not supported in "
                                       "kernels")
            item = self.convert(f"pg_jit::flat({src}, {k})", t.element, vt.element, node)
        elif isinstance(t, T.Scalar):
            item = self.convert(src, t, vt.element, node)
        else:
            raise self.error(node, f"cannot assign {t} to an array's elements")
        c = "auto" if isinstance(t, T.Array) else f"const {t.ctype}"
        return [f"{pad}{{ const {vt.ctype} {v} = {vcode}; {c} {src} = {code}; "
                f"const long long {n} = pg_jit::size({v});",
                f"{pad}  for (long long {k} = 0; {k} < {n}; {k}++) "
                f"pg_jit::flat({v}, {k}) = {item}; }}"]

    def convert(self, code, have, want, node):
        if have == want:
            return code
        if isinstance(have, T.Scalar) and isinstance(want, T.Scalar):
            if have.kind == "c" and want.kind != "c":
                raise self.error(node, f"cannot convert {have} to {want} (take .real, "
                                       ".imag or abs() of it)")
            if want.kind == "b":
                return f"(({code}) != 0)"
            return _cast(code, have, want)
        if isinstance(have, T.Tuple) and isinstance(want, T.Tuple):
            tmp = f"({code})"
            items = ", ".join(self.convert(f"{tmp}.f{i}", h, w, node)
                              for i, (h, w) in enumerate(zip(have.items, want.items,
                                                             strict=True)))
            return f"{self._ctype(want, node)}{{{items}}}"
        if isinstance(have, T.Array) and isinstance(want, T.Array):
            return code  # one C++ type whatever the layout
        raise self.error(node, f"cannot convert {have} to {want}")

    def augassign(self, node, pad):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.error(node, f"the operator {type(node.op).__name__} is not supported")
        vt, vcode = self.expr(node.value)
        if isinstance(node.target, ast.Name):
            name = node.target.id
            if name not in self.vars:
                raise _Untyped(node, name)
            t = self.vars[name]
            rt, rcode = self.binop(op, t, f"v_{name}", vt, vcode, node)
            nt = self.set_var(name, rt, node)
            return [f"{pad}v_{name} = {self.convert(rcode, rt, nt, node)};"]
        if isinstance(node.target, ast.Subscript):
            et, ref = self.element_ref(node.target, store=True)
            tmp = self.temp()
            rt, rcode = self.binop(op, et, tmp, vt, vcode, node)
            return [f"{pad}{{ {et.ctype} &{tmp} = {ref}; {tmp} = "
                    f"{self.convert(rcode, rt, et, node)}; }}"]
        raise self.error(node, "this augmented assignment is not supported in kernels")

    def for_loop(self, node, pad, ind):
        if node.orelse:
            raise self.error(node, "for ... else is not supported in kernels")
        it = node.iter
        func = self.resolve_call(it) if isinstance(it, ast.Call) else None
        if func is not range:
            return self.for_each(node, pad, ind)
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "a for loop over range() has one name as its target")
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.error(node, "range() takes 1 to 3 positional arguments")
        parts = [self.expr(a) for a in it.args]
        for (t, _), a in zip(parts, it.args, strict=True):
            if not (isinstance(t, T.Scalar) and t.kind in "iub"):
                raise self.error(a, f"range() takes integers, not {t}")
        lt = T.numba_int(*[t for t, _ in parts])
        codes = [_cast(c, t, lt) for t, c in parts]
        start, stop, step = ("0LL", codes[0], "1LL") if len(codes) == 1 else \
            (codes[0], codes[1], "1LL") if len(codes) == 2 else codes
        step_value = None
        if len(it.args) == 3:
            try:
                step_value = self.const_value(it.args[2])
            except TypingError:
                step_value = None  # known at run time only
            if step_value == 0:
                raise self.error(it, "range() step must not be zero")
        else:
            step_value = 1
        vt = self.set_var(node.target.id, lt, node)
        k, n, s = self.temp(), self.temp(), self.temp()
        c = lt.ctype
        if isinstance(step_value, int):
            cond = f"{k} < {n}" if step_value > 0 else f"{k} > {n}"
        else:
            cond = f"({s} > 0 ? {k} < {n} : {k} > {n})"
        incr = f"{k} += {s}"
        if step_value not in (1, -1):
            # a step that would pass the stop ends the loop there, so that k
            # never overflows (range(0, 2**63 - 1, 2**62) runs twice, as
            # Python's): the distance left, in unsigned arithmetic
            u = "unsigned long long"
            fwd = f"({u}){n} - ({u}){k} > ({u}){s}"
            back = f"({u}){k} - ({u}){n} > 0ULL - ({u}){s}"
            more = (fwd if step_value > 0 else back) if isinstance(step_value, int) else \
                f"({s} > 0 ? {fwd} : {back})"
            incr = f"{k} = {more} ? ({c})({k} + {s}) : {n}"
        out = [f"{pad}{{ const {c} {n} = {stop}; const {c} {s} = {step};",
               f"{pad}for ({c} {k} = {start}; {cond}; {incr}) {{",
               f"{pad}    v_{node.target.id} = {_cast(k, lt, vt)};"]
        out += self.block(node.body, ind + 1)
        return out + [f"{pad}}} }}"]

    def for_each(self, node, pad, ind):
        """for x in array (its first axis, as Numba iterates: a 1-d array
        gives its elements, a 2-d one its rows), enumerate(...) and zip(...)
        of them: one loop over an index, to the shortest length."""
        setup, lengths = [], []
        k = self.temp()
        et, item = self.iterable(node.iter, k, setup, lengths)
        n = self.temp()
        shortest = lengths[0]
        for other in lengths[1:]:
            shortest = f"pg_jit::min2({shortest}, {other})"
        out = [f"{pad}{{ {' '.join(setup)} const long long {n} = {shortest};",
               f"{pad}for (long long {k} = 0; {k} < {n}; {k}++) {{"]
        out += self.assign(node.target, et, item, pad + "    ", node)
        out += self.block(node.body, ind + 1)
        return out + [f"{pad}}} }}"]

    def iterable(self, node, k, setup, lengths):
        """(type, C++) of item k of what a for loop goes over; its setup
        (each array evaluated once) and its length join setup and lengths."""
        func = self.resolve_call(node) if isinstance(node, ast.Call) else None
        if func is enumerate:
            args = node.args + [kw.value for kw in node.keywords if kw.arg == "start"]
            if not 1 <= len(args) <= 2 or len(node.keywords) > len(args) - len(node.args):
                raise self.error(node, "enumerate() takes an iterable and start")
            start = "0LL"
            if len(args) == 2:
                st, scode = self.scalar(args[1])
                if not st.is_int:
                    raise self.error(node, f"enumerate()'s start is an int, not {st}")
                start = _cast(scode, st, T.int64)
            it, icode = self.iterable(args[0], k, setup, lengths)
            t = self.unit.tuple_type(T.Tuple((T.int64, it)))
            return t, f"{t.ctype}{{({start}) + {k}, {icode}}}"
        if func is zip:
            if node.keywords or not node.args:
                raise self.error(node, "zip() in kernels takes iterables only")
            items = [self.iterable(a, k, setup, lengths) for a in node.args]
            t = self.unit.tuple_type(T.Tuple(tuple(i[0] for i in items)))
            return t, f"{t.ctype}{{{', '.join(i[1] for i in items)}}}"
        at, acode = self.value(node)
        if isinstance(at, T.Tuple) and at.items and all(
                isinstance(t, T.Scalar) and t == at.items[0] for t in at.items):
            # a tuple of one type: its items, through an array of them
            tup, a = self.temp(), self.temp()
            et = at.items[0]
            setup.append(f"const {at.ctype} {tup} = {acode}; const {et.ctype} {a}[] = {{"
                         + ", ".join(f"{tup}.f{i}" for i in range(len(at.items))) + "};")
            lengths.append(f"{len(at.items)}LL")
            return et, f"{a}[{k}]"
        if not isinstance(at, T.Array):
            raise self.error(node, f"a for loop in a kernel goes over range(...), an array, "
                                   f"a tuple of one type, enumerate() or zip() of them, "
                                   f"not {at}")
        a = self.temp()
        setup.append(f"const {at.ctype} {a} = {acode};")
        lengths.append(f"{a}.shape[0]")
        if at.ndim == 1:
            return at.element, f"pg_jit::at({a}, {k})"
        rest = ", ".join(["{1, 0LL, 0LL, 1LL, 0, 0}"] * (at.ndim - 1))
        return (T.Array(at.dtype, at.ndim - 1, "A", at.readonly),
                f"pg_jit::view<{at.ndim - 1}>({a}, {{{{0, {k}, 0LL, 1LL, 1, 0}}, {rest}}})")

    def return_(self, node, pad):
        if node.value is None or (isinstance(node.value, ast.Constant) and
                                  node.value.value is None):
            t, code = T.void, None
        else:
            t, code = self.expr(node.value)
            if self.kernel:
                raise self.error(node, "a kernel returns nothing (return a value from a "
                                       "device function, @cuda.jit(device=True))")
            if isinstance(t, (T.Global, T.StringLiteral)):
                raise self.error(node, f"a device function cannot return {t}")
        if self.fixed_ret:
            if (t == T.void) != (self.ret == T.void):
                raise self.error(node, f"the signature returns {self.ret}; this returns {t}")
        elif self.ret is None:
            self.ret = t
            self.changed = True
        elif self.ret != t:
            new = T.unify(self.ret, t) if t != T.void and self.ret != T.void else None
            if new is None:
                raise self.error(node, f"this function returns both {self.ret} and {t}")
            if new != self.ret:
                self.ret = new
                self.changed = True
        if code is None:
            return [f"{pad}return;"]
        return [f"{pad}return {self.convert(code, t, self.ret, node)};"]

    # -- expressions ------------------------------------------------------------

    def test(self, node):
        """An expression as a C++ condition (Python's truth)."""
        t, code = self.expr(node, test=True)
        return self.truth(t, code, node)

    def truth(self, t, code, node):
        if isinstance(t, T.Scalar):
            if t.kind == "c":
                return f"(!(!({code})))"
            if t.dtype.char == "e":
                return f"pg::conv<bool>::from({code})"
            return code if t.kind == "b" else f"(({code}) != 0)"
        raise self.error(node, f"the truth of {t} is not supported in kernels")

    def expr(self, node, test=False):
        method = getattr(self, "e_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"the expression {type(node).__name__} "
                                   f"({ast.unparse(node)}) is not supported in kernels")
        return method(node, test) if type(node) in (ast.BoolOp,) else method(node)

    def value(self, node):
        """An expression that must have a value on the device."""
        t, code = self.expr(node)
        if code is None or isinstance(t, (T.Global, T.StringLiteral, T.Void)):
            raise self.error(node, f"{ast.unparse(node)} is {t}, which has no value in a "
                                   "kernel")
        return t, code

    def scalar(self, node, what="a number"):
        t, code = self.value(node)
        if not isinstance(t, T.Scalar):
            raise self.error(node, f"{ast.unparse(node)} must be {what}, not {t}")
        return t, code

    def e_Constant(self, node):
        v = node.value
        if isinstance(v, bool):
            return T.boolean, "true" if v else "false"
        if isinstance(v, int):
            if -2**63 <= v < 2**63:
                return T.int64, _literal(v, T.int64)
            if 0 <= v < 2**64:
                return T.uint64, _literal(v, T.uint64)
            raise self.error(node, f"the int {v} does not fit in 64 bits")
        if isinstance(v, float):
            return T.float64, _literal(v, T.float64)
        if isinstance(v, complex):
            return T.complex128, _literal(v, T.complex128)
        if isinstance(v, str):
            return T.StringLiteral(v), None
        if v is None:
            return T.void, None
        raise self.error(node, f"the constant {v!r} ({type(v).__name__}) is not supported "
                               "in kernels")

    def e_Name(self, node):
        name = node.id
        if name in self.vars:
            t = self.vars[name]
            return t, None if isinstance(t, T.Global) else f"v_{name}"
        if self._assigned(name):
            raise _Untyped(node, name)
        found, value = self.src.lookup(name)
        if not found:
            raise self.error(node, f"name '{name}' is not defined")
        return self.global_value(value, node)

    def _check_assigned_before_use(self, fdef, params):
        """TypingError for a local read before any assignment to it, unless a
        loop around the read assigns it (a value carried to the next turn)."""
        parents, stores = {}, {}
        for node in ast.walk(fdef):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                stores.setdefault(node.id, []).append(node)
        for node in ast.walk(fdef):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)) or \
                    node.id in params or node.id not in stores:
                continue
            here = (node.lineno, node.col_offset)
            if any((s.lineno, s.col_offset) < here for s in stores[node.id]):
                continue
            up, carried = parents.get(node), False
            while up is not None and not carried:
                if isinstance(up, (ast.For, ast.While)):
                    carried = any(isinstance(n, ast.Name) and n.id == node.id and
                                  isinstance(n.ctx, ast.Store) for n in ast.walk(up))
                up = parents.get(up)
            if not carried:
                raise self.error(node, f"variable '{node.id}' is used before it is "
                                       "assigned")

    def _assigned(self, name):
        for n in ast.walk(self.src.tree):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
                return True
        return False

    def global_value(self, value, node):
        """A Python object the kernel names: a constant, or an object known at
        compile time."""
        if isinstance(value, (bool, np.bool_)):
            return T.boolean, "true" if value else "false"
        if isinstance(value, int):
            return self.e_Constant(ast.Constant(value=value, lineno=getattr(node, "lineno",
                                                                             1)))
        if isinstance(value, float):
            return T.float64, _literal(value, T.float64)
        if isinstance(value, complex):
            return T.complex128, _literal(value, T.complex128)
        if isinstance(value, (np.integer, np.floating, np.complexfloating)):
            try:
                t = T.scalar(value.dtype)
            except TypingError as exc:
                raise self.error(node, str(exc)) from None
            return t, f"(({t.ctype}){_literal(value.item(), t)})"
        if isinstance(value, np.ndarray):
            return self.unit.const_array(value, _Where(self, node))
        if _is_device_array(value):
            return self.unit.global_array(value, _Where(self, node))
        if isinstance(value, tuple) and all(isinstance(v, (int, float, bool, np.integer,
                                                           np.floating)) for v in value):
            items = [self.global_value(v, node) for v in value]
            t = self.unit.tuple_type(T.Tuple(tuple(i[0] for i in items)))
            return t, f"{t.ctype}{{{', '.join(i[1] for i in items)}}}"
        if value is device.laneid:
            return T.int32, "pg_jit::laneid()"
        if value is device.warpsize:
            return T.int32, "32"
        return T.Global(value), None

    def e_Attribute(self, node):
        base = node.value
        if isinstance(base, ast.Attribute) or isinstance(base, ast.Name):
            bt, bcode = self.expr(base)
        else:
            bt, bcode = self.value(base)
        attr = node.attr
        if isinstance(bt, T.Global):
            obj = bt.obj
            if id(obj) in _DIM3:
                if attr not in ("x", "y", "z"):
                    raise self.error(node, f"cuda.{_DIM3[id(obj)]} has x, y and z, not "
                                           f"{attr}")
                return T.int32, f"((int){_DIM3[id(obj)]}.{attr})"
            try:
                value = getattr(obj, attr)
            except AttributeError:
                raise self.error(node, f"{ast.unparse(base)} has no attribute '{attr}'") \
                    from None
            return self.global_value(value, node)
        if isinstance(bt, T.Array):
            if attr == "shape":
                t = self.unit.tuple_type(T.Tuple((T.int64,) * bt.ndim))
                items = ", ".join(f"{bcode}.shape[{k}]" for k in range(bt.ndim))
                return t, f"{t.ctype}{{{items}}}"
            if attr == "ndim":
                return T.int64, f"{bt.ndim}LL"
            if attr == "size":
                return T.int64, "(" + " * ".join(f"{bcode}.shape[{k}]"
                                                 for k in range(bt.ndim)) + ")"
            if attr == "dtype":
                return T.Global(bt.dtype.type), None
            raise self.error(node, f"the array attribute '{attr}' is not supported in "
                                   "kernels (shape, size, ndim and dtype are)")
        if isinstance(bt, T.Tuple) and bt.names is not None and attr in bt.names:
            k = bt.names.index(attr)
            return bt.items[k], f"({bcode}).f{k}"
        if isinstance(bt, T.Scalar) and attr in ("real", "imag"):
            if bt.kind == "c":
                return bt.real, f"({bcode}).{attr[:2]}"
            return bt, bcode if attr == "real" else _literal(0, bt)
        raise self.error(node, f"{t_name(bt)} has no attribute '{attr}' in kernels")

    def e_Tuple(self, node):
        items = [self.value(e) for e in node.elts]
        t = self.unit.tuple_type(T.Tuple(tuple(i[0] for i in items)))
        return t, f"{t.ctype}{{{', '.join(i[1] for i in items)}}}"

    def e_Subscript(self, node):
        base = node.value
        if isinstance(base, ast.Attribute) and base.attr == "shape":
            bt, bcode = self.value(base.value)
            if isinstance(bt, T.Array):
                k = self.const_index(node.slice, bt.ndim, node)
                return T.int64, f"{bcode}.shape[{k}]"
        bt, bcode = self.value(base) if not isinstance(base, ast.Name) else self.expr(base)
        if isinstance(bt, T.Array):
            if self._is_view(node.slice, bt):
                return self.view(bt, bcode, node)
            return self.element_ref(node)
        if isinstance(bt, T.Tuple):
            k = self.const_index(node.slice, len(bt.items), node)
            return bt.items[k], f"({bcode}).f{k}"
        raise self.error(node, f"indexing {t_name(bt)} is not supported in kernels")

    def const_index(self, index, n, node):
        k = self.const_value(index)
        if not isinstance(k, int) or isinstance(k, bool):
            raise self.error(node, "a tuple is indexed by a constant int in kernels")
        if not -n <= k < n:
            raise self.error(node, f"index {k} is out of range for {n} items")
        return k % n

    def element_ref(self, node, store=False):
        """(element type, C++ lvalue) of array[index]; store: it is written
        (a readonly array refuses it)."""
        at, acode = self.value(node.value)
        if not isinstance(at, T.Array):
            raise self.error(node, f"indexing {t_name(at)} is not supported in kernels")
        if store:
            self.writable(at, node)
        index = node.slice
        idx = self.indices(index, node)
        if len(idx) != at.ndim:
            raise self.error(node, f"the array has {at.ndim} dimension"
                                   f"{'s' if at.ndim != 1 else ''} and is indexed with "
                                   f"{len(idx)}: assigning to a slice or a row (an array "
                                   "expression) is not supported in kernels")
        name = _c_string(ast.unparse(node.value))
        return at.element, f"PG_JIT_AT({name}, {acode}, {', '.join(idx)})"

    def _is_view(self, index, at):
        elts = index.elts if isinstance(index, ast.Tuple) else [index]
        if any(isinstance(e, ast.Slice) for e in elts):
            return True
        count = 0
        for e in elts:
            t, _ = self.value(e)
            count += len(t.items) if isinstance(t, T.Tuple) else 1
        return count < at.ndim

    def view(self, at, acode, node):
        """(type, C++) of a[...] with slices or fewer indices than axes."""
        index = node.slice
        elts = index.elts if isinstance(index, ast.Tuple) else [index]
        sels = []
        for e in elts:
            if isinstance(e, ast.Slice):
                parts = []
                for part in (e.lower, e.upper, e.step):
                    if part is None:
                        parts.append(None)
                        continue
                    t, code = self.scalar(part, "an int")
                    if not t.is_int:
                        raise self.error(node, f"a slice's bounds are ints, not {t}")
                    parts.append(_cast(code, t, T.int64))
                if e.step is not None:
                    try:
                        if self.const_value(e.step) == 0:
                            raise self.error(node, "slice step cannot be zero")
                    except TypingError as exc:
                        if "cannot be zero" in str(exc):
                            raise
                lo, hi, step = parts
                sels.append(f"{{1, {lo or '0LL'}, {hi or '0LL'}, {step or '1LL'}, "
                            f"{int(lo is not None)}, {int(hi is not None)}}}")
                continue
            for code in self.indices(e, node):
                sels.append(f"{{0, (long long)({code}), 0LL, 1LL, 1, 0}}")
        if len(sels) > at.ndim:
            raise self.error(node, f"too many indices for an array of {at.ndim} "
                                   f"dimension{'s' if at.ndim != 1 else ''}")
        sels += ["{1, 0LL, 0LL, 1LL, 0, 0}"] * (at.ndim - len(sels))
        kept = sum(s.startswith("{1") for s in sels)
        if kept == 0:
            return self.element_ref(node)
        vt = T.Array(at.dtype, kept, "A", at.readonly)
        return vt, f"pg_jit::view<{kept}>({acode}, {{{', '.join(sels)}}})"

    def indices(self, index, node):
        if isinstance(index, ast.Slice) or (isinstance(index, ast.Tuple) and any(
                isinstance(e, ast.Slice) for e in index.elts)):
            raise self.error(node, "a slice here is not supported in kernels: index "
                                   "every axis with an int")
        elts = index.elts if isinstance(index, ast.Tuple) else [index]
        out = []
        for e in elts:
            t, code = self.value(e)
            if isinstance(t, T.Tuple):
                for i, it in enumerate(t.items):
                    if not (isinstance(it, T.Scalar) and it.is_int):
                        raise self.error(node, f"an array index must be an int, not {it}")
                    out.append(f"({code}).f{i}")
                continue
            if not (isinstance(t, T.Scalar) and t.is_int):
                raise self.error(node, f"an array index must be an int, not {t}")
            out.append(code)
        return out

    def const_value(self, node):
        """The value of an expression known at compile time (literals, the
        module's constants, tuples and arithmetic of them), or raises."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name) and node.id not in self.vars:
            found, value = self.src.lookup(node.id)
            if found:
                return value.item() if isinstance(value, np.generic) else value
        if isinstance(node, ast.Name) and node.id in self.params and self.param_consts:
            k = self.params.index(node.id)
            value = self.param_consts[k]
            if value is not None and node.id not in self._stored_names():
                return value
        if isinstance(node, ast.Name) and node.id in self.constant_locals():
            try:
                value = self.const_value(self.constant_locals()[node.id])
            except TypingError:
                value = None
            if _is_constant(value):
                return value
        if isinstance(node, ast.Attribute):
            base = self.const_value(node.value)
            try:
                return getattr(base, node.attr)
            except (AttributeError, RuntimeError):  # cuda.threadIdx.x has no value here
                pass
        if isinstance(node, ast.Tuple):
            return tuple(self.const_value(e) for e in node.elts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.const_value(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            a, b = self.const_value(node.left), self.const_value(node.right)
            import operator as o
            ops = {"+": o.add, "-": o.sub, "*": o.mul, "//": o.floordiv, "%": o.mod,
                   "**": o.pow, "/": o.truediv, "<<": o.lshift, ">>": o.rshift,
                   "&": o.and_, "|": o.or_, "^": o.xor}
            return ops[_BINOPS[type(node.op)]](a, b)
        raise self.error(node, f"{ast.unparse(node)} must be known at compile time (a "
                               "literal or a module-level constant)")

    def _stored_names(self):
        return {n.id for n in ast.walk(self.src.tree)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    def constant_locals(self):
        """{name: value's ast} of the locals assigned once, by a plain `name =
        value` outside loops, that are no parameter: `N = 100` then
        `cuda.shared.array(N, int32)` (Numba propagates such constants)."""
        if self._constant_locals is None:
            stores, single, loops = {}, {}, set()
            for node in ast.walk(self.src.tree):
                if isinstance(node, (ast.For, ast.While)):
                    loops.update(id(n) for n in ast.walk(node))
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    stores[node.id] = stores.get(node.id, 0) + 1
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                        isinstance(node.targets[0], ast.Name):
                    single[node.targets[0].id] = node
            self._constant_locals = {
                name: a.value for name, a in single.items()
                if stores[name] == 1 and name not in self.params and id(a) not in loops}
        return self._constant_locals

    def e_BinOp(self, node):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.error(node, f"the operator {type(node.op).__name__} is not "
                                   "supported in kernels")
        at, acode = self.scalar(node.left)
        bt, bcode = self.scalar(node.right)
        return self.binop(op, at, acode, bt, bcode, node)

    def binop(self, op, at, acode, bt, bcode, node):
        if not (isinstance(at, T.Scalar) and isinstance(bt, T.Scalar)):
            raise self.error(node, f"{op} of {at} and {bt} is not supported in kernels")
        try:
            r = T.arithmetic(op, at, bt)
        except TypingError as exc:
            raise self.error(node, str(exc)) from None
        if op == "**" and r.kind == "c":
            return r, f"pg::pow({_cast(acode, at, r)}, {_cast(bcode, bt, r)})"
        if op == "**":
            if r.is_int:
                return r, f"pg_jit::ipow({_cast(acode, at, r)}, {_cast(bcode, bt, r)})"
            f = "powf" if r.dtype.itemsize == 4 else "pow"
            return r, f"{f}({_cast(acode, at, r)}, {_cast(bcode, bt, r)})"
        a, b = _cast(acode, at, r), _cast(bcode, bt, r)
        if op == "//":
            return r, f"pg_jit::floordiv({a}, {b})"
        if op == "%":
            return r, f"pg_jit::mod({a}, {b})"
        if op in ("<<", ">>"):
            return r, f"pg_jit::{'shl' if op == '<<' else 'shr'}({a}, {b})"
        return r, f"({a} {op} {b})"

    def e_UnaryOp(self, node):
        t, code = self.scalar(node.operand)
        if t.dtype.char == "e" and not isinstance(node.op, ast.Not):
            code, t = _cast(code, t, T.float32), T.float32
        if isinstance(node.op, ast.Not):
            return T.boolean, f"(!{self.truth(t, code, node)})"
        if isinstance(node.op, (ast.USub, ast.UAdd)):
            r = T.numba_int(t) if t.kind in "biu" else t
            sign = "-" if isinstance(node.op, ast.USub) else "+"
            return r, f"({sign}{_cast(code, t, r)})"
        if isinstance(node.op, ast.Invert):
            if t.kind == "b":  # Numba's (and NumPy's): ~True is False
                return T.boolean, f"(!{code})"
            if t.kind not in "iu":
                raise self.error(node, f"~ takes an integer, not {t}")
            r = T.numba_int(t)
            return r, f"(~{_cast(code, t, r)})"
        raise self.error(node, "this unary operator is not supported in kernels")

    def e_Compare(self, node):
        parts = []
        left = self.scalar(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            sym = _COMPARE.get(type(op))
            if sym is None:
                raise self.error(node, f"the comparison {type(op).__name__} is not "
                                       "supported in kernels")
            right = self.scalar(right_node)
            (at, a), (bt, b) = left, right
            if (at.kind == "c" or bt.kind == "c") and sym not in ("==", "!="):
                raise self.error(node, f"complex numbers have no order ({sym})")
            if at.kind == "b" and bt.kind == "b":
                c = T.boolean
            elif at.kind in "biu" and bt.kind in "biu":
                c = T.numba_int(at, bt)
            else:
                c = T.arithmetic("+", at, bt)
            parts.append(f"({_cast(a, at, c)} {sym} {_cast(b, bt, c)})")
            left = right
        return T.boolean, "(" + " && ".join(parts) + ")"

    def e_BoolOp(self, node, test=False):
        items = [self.scalar(v) for v in node.values]
        if not test and not all(t.kind == "b" for t, _ in items):
            return self.boolop_value(node, items)
        sym = " && " if isinstance(node.op, ast.And) else " || "
        return T.boolean, "(" + sym.join(self.truth(t, c, node) for t, c in items) + ")"

    def boolop_value(self, node, items):
        """`a or b` / `a and b` as Python's value: the first operand that
        decides, converted to the operands' unified type (Numba's), each
        evaluated only where Python would (a lambda called in place)."""
        r = items[0][0]
        for t, _ in items[1:]:
            r = T.unify(r, t)
            if r is None:
                raise self.error(node, f"the operands of {type(node.op).__name__.lower()} "
                                       "have no common type")
        stop = "" if isinstance(node.op, ast.Or) else "!"
        body = []
        for i, (t, code) in enumerate(items):
            tmp = f"pg_b{i}"
            body.append(f"const {t.ctype} {tmp} = {code};")
            value = self.convert(tmp, t, r, node)
            if i == len(items) - 1:
                body.append(f"return {value};")
            else:
                body.append(f"if ({stop}{self.truth(t, tmp, node)}) return {value};")
        return r, f"([&]() -> {r.ctype} {{ {' '.join(body)} }})()"

    def e_IfExp(self, node):
        cond = self.test(node.test)
        at, a = self.value(node.body)
        bt, b = self.value(node.orelse)
        r = T.unify(at, bt)
        if r is None:
            raise self.error(node, f"the two values of ... if ... else ... are {at} and {bt}")
        return r, f"({cond} ? {self.convert(a, at, r, node)} : {self.convert(b, bt, r, node)})"

    # -- calls ----------------------------------------------------------------------

    def resolve_call(self, node):
        """The Python object a call's function names, or None."""
        f = node.func
        if isinstance(f, ast.Name) and f.id in self.vars:
            t = self.vars[f.id]  # a function passed to a device function
            return t.obj if isinstance(t, T.Global) else None
        if isinstance(f, (ast.Name, ast.Attribute)):
            t, _ = self.expr(f)
            return t.obj if isinstance(t, T.Global) else None
        return None

    def e_Call(self, node):
        from . import calls  # the table of functions a kernel may call
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "conjugate" and not node.args:
            t, code = self.expr(f.value)
            if isinstance(t, T.Scalar):
                return t, f"pg::conj({code})" if t.kind == "c" else code
        obj = self.resolve_call(node)
        if obj is None:
            raise self.error(node, f"{ast.unparse(node.func)} is not a function a kernel can "
                                   "call")
        return calls.call(self, obj, node)


_CPP_WORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
char16_t char32_t class compl concept const consteval constexpr constinit const_cast
continue co_await co_return co_yield decltype default delete do double dynamic_cast
else enum explicit export extern false float for friend goto if inline int long mutable
namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast requires return short signed sizeof static static_assert
static_cast struct switch template this thread_local throw true try typedef typeid
typename union unsigned using virtual void volatile wchar_t while xor xor_eq
threadIdx blockIdx blockDim gridDim warpSize dim3 uint3 printf assert main
""".split())


def _plain_c_name(name):
    """Whether a Python name can be a C++ parameter's name as it is."""
    return (name.isascii() and name.isidentifier() and name not in _CPP_WORDS and
            not name.startswith(("pg_", "p_", "v_", "_")) and not name.isupper())


def t_name(t):
    return str(t)
