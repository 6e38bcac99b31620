"""The translations of @cuda.jit kernels, kept in the one disk cache.

A kernel's first launch in a new process translates its Python to CUDA C++
(about 1.5 ms for the seeds' add_one_kernel on an H200 host, a third of that
launch when the cubin comes from the cache) before the compile path finds the
cubin by that C++. The translation is a function of what this module keys it
by, so it is kept too: under a key made of

- the kernel's own lines (as codegen reads them), its file and first line
  (the #line directives name them), its C++ name and its options;
- every name in the ast of the kernel, and of each function it names (the
  FunctionSource the translator read: a Dispatcher's own, kept, not the
  file as it is now), found as the translator finds it (closure, globals,
  builtins): per name, its value described by what the translator reads of
  it (a module's name; a number's or a string's value, of exactly those
  types; an array's dtype, shape and bytes; another @cuda.jit function's
  own description, closure included, and so on). A value with no such
  description (a DeviceArray, whose address the C++ holds; an object of the
  user's class; a namedtuple, read by field name) keeps the kernel out of
  this cache;
- the argument types, and the identity of pygpu's Python files (the
  translator's version: rawkernel._tree_digest).

So an edit to one kernel, or to a device function or a constant it uses,
changes only the keys of the kernels that read it. A hit gives the C++ and
what the launches need of the translation (where the asserts, barriers and
shared arrays are in the Python); the C++ then goes through the compile path
and its cache as a translated kernel's does.
"""

import ast
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


def _function(src, fn, path):
    """A function's description from src, the FunctionSource the translator
    reads (a Dispatcher's own, made at its first use and kept: the key must
    not read a newer copy of the file than the translation did): its lines,
    where they are, its defaults, and the value of every name its ast reads,
    found as the translator finds it (closure, globals, builtins); None
    where one of those has no description. path: the functions being
    described (a call to itself is named, not described again)."""
    if id(fn) in path:
        return ("recursive", src.filename, src.offset)
    path.add(id(fn))
    try:
        scope = {}
        for name in sorted({n.id for n in ast.walk(src.tree) if isinstance(n, ast.Name)}):
            found, value = src.lookup(name)
            if not found:
                continue
            d = _value(value, path)
            if d is None:
                return None
            scope[name] = d
        defaults = _value(fn.__defaults__, path)
        if defaults is None and fn.__defaults__ is not None:
            return None
        return ("function", src.filename, src.offset, "\n".join(src.lines), scope, defaults)
    finally:
        path.discard(id(fn))


def _known(module):
    """Whether what a module holds is named by the key's versions: Python's
    own modules of numbers, NumPy's, pygpu's."""
    top = (module or "").partition(".")[0]
    return top in ("math", "cmath", "builtins", "numpy", "pygpu")


def _value(v, path):
    """What the translator reads of a value a kernel names, or None."""
    from .codegen import FunctionSource
    from .dispatcher import Dispatcher
    if v is None or type(v) in (bool, int, float, complex, str, bytes):
        # (exact types: a subclass's attributes, a namedtuple's fields, are
        # read by name and would be left out)
        return (type(v).__name__, repr(v))
    if type(v) is tuple:
        items = [_value(x, path) for x in v]
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
        f = _function(v.source, v.py_func, path)
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
        try:
            f = _function(FunctionSource(v), v, path)
        except Exception:  # noqa: BLE001 (no source to read: no key)
            return None
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
        f = _function(dispatcher.source, dispatcher.py_func, set())
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
