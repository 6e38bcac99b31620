"""The translations of @cuda.jit kernels, kept in the one disk cache.

A kernel's first launch in a new process translates its Python to CUDA C++
(about 1.5 ms for the seeds' add_one_kernel on an H200 host, a third of that
launch when the cubin comes from the cache) before the compile path finds the
cubin by that C++. The translation is a function of what this module keys it
by, so it is kept too: under a key made of

- the kernel's own lines (as codegen reads them), its file and first line
  (the #line directives name them), its C++ name and its options;
- everything that the code of the kernel, and of each function it names,
  looks up by name: per name, its value described by what the translator
  reads of it (a module's name; a number's or a string's value; an array's
  dtype, shape and bytes; another @cuda.jit function's own key, and so on).
  A value with no such description (a DeviceArray, whose address the C++
  holds; an object of the user's class) keeps the kernel out of this cache;
- the argument types, and the identity of pygpu's Python files (the
  translator's version: rawkernel._tree_digest).

So an edit to one kernel, or to a device function or a constant it uses,
changes only the keys of the kernels that read it. A hit gives the C++ and
what the launches need of the translation (where the asserts, barriers and
shared arrays are in the Python); the C++ then goes through the compile path
and its cache as a translated kernel's does.
"""

import functools
import hashlib
import json
import sys
import types
from pathlib import Path

import numpy as np

from .. import _cache, _core

_PACKAGE = Path(__file__).resolve().parent.parent


@functools.cache
def _pygpu_digest():
    from ..rawkernel import _tree_digest
    return _tree_digest(_PACKAGE, ".py")


def _code_names(code, names):
    names.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, names)
    return names


def _function(fn, seen):
    """A Python function's description: its lines, where they are, and what
    its code looks up by name; None where one of those has none."""
    from .codegen import _def_lines
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    if code in seen:
        return ("seen", code.co_filename, code.co_firstlineno)
    seen.add(code)
    found = _def_lines(fn)
    if found is None:
        return None
    lines, start = found
    scope = {}
    glb, builtins = fn.__globals__, fn.__globals__.get("__builtins__", {})
    if isinstance(builtins, types.ModuleType):
        builtins = vars(builtins)
    for name in sorted(_code_names(code, set())):
        if name in glb:
            d = _value(glb[name], seen)
        elif name in builtins:
            d = ("builtin", name) if builtins[name] is getattr(
                sys.modules["builtins"], name, None) else None
        else:
            continue  # an attribute's name, not looked up by itself
        if d is None:
            return None
        scope[name] = d
    closure = {}
    for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=False):
        try:
            d = _value(cell.cell_contents, seen)
        except ValueError:  # an empty cell
            d = ("empty",)
        if d is None:
            return None
        closure[name] = d
    return ("function", code.co_filename, start, "".join(lines), scope, closure,
            _value(fn.__defaults__, seen))


def _known(module):
    """Whether what a module holds is named by the key's versions: Python's
    own modules of numbers, NumPy's, pygpu's."""
    top = (module or "").partition(".")[0]
    return top in ("math", "cmath", "builtins", "numpy", "pygpu")


def _value(v, seen):
    """What the translator reads of a value a kernel names, or None."""
    from .dispatcher import Dispatcher
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return (type(v).__name__, repr(v))
    if isinstance(v, tuple):
        items = [_value(x, seen) for x in v]
        return None if None in items else ("tuple", items)
    if isinstance(v, np.generic):
        return ("scalar", v.dtype.str, v.tobytes().hex())
    if isinstance(v, np.ndarray):
        if v.dtype.hasobject or v.nbytes > 1 << 20:
            return None
        return ("ndarray", v.dtype.str, v.shape,
                hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest())
    if isinstance(v, np.dtype):
        return ("dtype", v.str)
    if isinstance(v, types.ModuleType):
        # a module whose attributes are known by their versions; another
        # module's (the user's own: config.N) values would be left out
        return ("module", v.__name__) if _known(v.__name__) else None
    if isinstance(v, Dispatcher):
        f = _function(v.py_func, seen)
        return None if f is None else ("jit", f, v.device, repr(sorted(v.options.items())),
                                       repr(v._fixed), repr(getattr(v, "_returns", None)))
    if isinstance(v, type):
        return ("type", v.__module__, v.__qualname__) if _known(v.__module__) else None
    if isinstance(v, (types.BuiltinFunctionType, np.ufunc)):
        mod = getattr(v, "__module__", None) or "numpy"
        return ("callable", mod, v.__name__) if _known(mod) else None
    if isinstance(v, types.FunctionType):
        if v.__module__ and (v.__module__ == "pygpu" or v.__module__.startswith("pygpu.")):
            return ("pygpu", v.__module__, v.__qualname__)
        f = _function(v, seen)
        return None if f is None else ("python", f)
    mod = type(v).__module__ or ""
    if (mod == "pygpu" or mod.startswith("pygpu.")) and not isinstance(v, _core.DeviceArray) \
            and not hasattr(v, "__cuda_array_interface__"):
        # pygpu's own names (cuda.float32, cuda.local, cuda.atomic, ...): their
        # behaviour is pygpu's files', in the key
        return ("pygpu", mod, type(v).__qualname__, getattr(v, "__name__", None) or repr(v))
    return None


def key(dispatcher, argtypes):
    """The key of dispatcher's translation for argtypes, or None (see above)."""
    try:
        f = _function(dispatcher.py_func, set())
    except Exception:  # noqa: BLE001 (a value that cannot be described: no key)
        return None
    if f is None:
        return None
    text = repr((f, dispatcher._cname, repr(sorted(dispatcher.options.items())),
                 repr(argtypes), _pygpu_digest(), np.__version__, sys.version_info[:2]))
    return hashlib.sha256(text.encode()).hexdigest()


class Kept:
    """What the launches read of a translation's Unit, loaded from the cache."""

    def __init__(self, asserts, barriers, shared):
        self.asserts = asserts
        self.barriers = barriers
        self.shared = shared
        self.keep = []


def load(k):
    """(C++, whether it takes the dynamic shared memory's size, Kept) kept
    under k, or None."""
    image = _cache.load(f"{k}.jit.json")
    if image is None:
        return None
    try:
        d = json.loads(image)
        kept = Kept([tuple(a) for a in d["asserts"]], [tuple(b) for b in d["barriers"]],
                    {name: tuple(v) for name, v in d["shared"].items()})
        return d["source"], bool(d["dynamic_shared"]), kept
    except (ValueError, KeyError, TypeError):
        return None


def store(k, source, dynamic_shared, unit):
    """Keep a translation (none that holds a device array's address)."""
    if unit.keep:
        return
    try:
        image = json.dumps({"source": source, "dynamic_shared": bool(dynamic_shared),
                            "asserts": unit.asserts, "barriers": unit.barriers,
                            "shared": unit.shared}).encode()
    except (TypeError, ValueError):
        return
    try:
        _cache.store(f"{k}.jit.json", image)
    except OSError:
        pass
