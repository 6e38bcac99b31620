"""@cuda.jit: a Python function that runs as a CUDA kernel (or, with
device=True, a function that kernels call).

The dispatcher types a launch's arguments (as Numba types them: a Python int
is int64, a float float64, arrays by dtype, dimensions and layout), finds or
makes the kernel compiled for those types (codegen.py writes CUDA C++, and
RawModule compiles it: NVRTC on a GPU, the host compiler on the simulator,
through the one disk cache), and launches it through the one launch path
(the compiled Function's kernel[grid, block]). An array reaches the kernel as
its address plus its shape and byte strides, which the kernel gathers into
pg_jit::array (pygpu/include/pygpu/jit.h). NumPy arrays are copied to the
device and back around the launch, as Numba does.
"""

import functools
import numbers
import re
import types

import numpy as np

from .. import _core
from . import (
    calls,  # noqa: F401 (the translator loads with the first @cuda.jit, not at its first launch)
    memo,
)
from . import types as T
from .codegen import FunctionSource, Translator, Unit
from .errors import TypingError


def _layout(a):
    if a.ndim <= 1 or a.is_c_contiguous():
        return "C" if a.is_c_contiguous() else "A"
    return "F" if a.is_f_contiguous() else "A"


def _host_layout(a):
    if a.flags.c_contiguous:
        return "C"
    return "F" if a.flags.f_contiguous else "A"


def _scalar_type(a):
    if isinstance(a, (bool, np.bool_)):
        return T.boolean
    if isinstance(a, int):
        if -2**63 <= a < 2**63:
            return T.int64
        if 0 <= a < 2**64:
            return T.uint64
        raise ValueError(f"the int {a} does not fit in 64 bits")
    if isinstance(a, float):
        return T.float64
    if isinstance(a, complex):
        return T.complex128
    if isinstance(a, np.generic):
        return T.scalar(a.dtype)
    return None


def _converter(t):
    """How an argument of type t is passed: None for an array (its address,
    shape and strides), its NumPy type for a scalar, a function that gives
    the items for a tuple (each item a parameter of its own)."""
    if isinstance(t, T.Array):
        return None
    if isinstance(t, T.Scalar):
        return t.dtype.type
    items = [_converter(x) for x in t.items]

    def flatten(value):
        out = []
        for v, conv in zip(value, items, strict=True):
            if conv is None:  # an array
                out.append(v)
                out += v.shape
                out += v.strides
            elif isinstance(conv, tuple):
                out += conv[0](v)
            else:
                out.append(conv(v))
        return out
    return (flatten,)


class _Compiled:
    """One kernel compiled for one tuple of argument types."""

    __slots__ = ("function", "argtypes", "dynamic_shared", "source", "converters",
                 "module", "unit", "record", "params")

    def __init__(self, function, argtypes, dynamic_shared, source, module, unit, params):
        self.function = function
        self.argtypes = argtypes
        self.dynamic_shared = dynamic_shared
        self.source = source
        # how each scalar argument is passed: as it is (int64 from a Python int,
        # float64 from a float, bool), or through its NumPy type
        self.converters = tuple(_converter(t) for t in argtypes)
        self.module = module
        self.unit = unit  # where its asserts, barriers and shared arrays are
        # the kernel's assert record (a DeviceArray view of the module's
        # pg_jit_assert_record), read after each launch; None without asserts
        self.record = (module.get_global("pg_jit_assert_record", np.uint32)
                       if unit.asserts else None)
        self.params = params  # C++ parameter index -> Python argument index


_DeviceArray = _core.DeviceArray
_get_device = _core.get_device
_AS_IS = object()  # a launch plan's mark: the argument passes as it is


def _as_is(conv, a):
    """Whether a scalar a passes to a parameter of conv's type unconverted:
    a Python int as int64, a float as float64, a bool as bool, a NumPy
    scalar of the parameter's type as it is."""
    tp = type(a)
    return (tp is conv or conv is np.int64 and tp is int or
            conv is np.float64 and tp is float or conv is np.bool_ and tp is bool)


def _c_params(argtypes):
    """For each C++ parameter of a kernel, the index of the Python argument
    it passes (an array passes its address, shape and strides; a tuple its
    items)."""
    out = []
    for i, t in enumerate(argtypes):
        out += [i] * _c_count(t)
    return out


def _c_count(t):
    if isinstance(t, T.Array):
        return 1 + 2 * t.ndim
    if isinstance(t, T.Tuple):
        return sum(_c_count(x) for x in t.items)
    return 1


class Dispatcher(_core._LaunchCache):
    """A function compiled by @cuda.jit. A kernel is launched as
    `kernel[grid, block](args)` (also `[grid, block, stream]` and
    `[grid, block, stream, shared_bytes]`) or `kernel.forall(n)(args)`; it
    compiles at its first launch for the types of its arguments, and again
    for other types. A device function (device=True) is called from kernels
    only. kernel[grid, block] is found in C (the base's _launches, which
    _configure fills)."""

    def __init__(self, pyfunc, device=False, signatures=None, options=None):
        if not callable(pyfunc) or not hasattr(pyfunc, "__code__"):
            raise TypeError(f"cuda.jit decorates a Python function, not {pyfunc!r}")
        functools.update_wrapper(self, pyfunc)
        self.py_func = pyfunc
        self.device = bool(device)
        self.options = dict(options or {})
        self._source = None
        self._kernels = {}
        # the types of a launch's arguments (DeviceArrays, scalars) -> (the
        # kernel compiled for them, how each passes: None where all as they are)
        self._fast = {}
        self._fixed = None
        self._captured = []  # device arrays the kernel reads as globals, kept alive
        self._cname = "pg_" + re.sub(r"\W", "_", pyfunc.__name__, flags=re.ASCII)
        if signatures is not None:
            if isinstance(signatures, (str,)) or not isinstance(signatures, (list,)):
                signatures = [signatures]
            fixed, returns = [], []
            for sig in signatures:
                args, ret = T.parse_signature(sig)
                if ret is not None and not self.device:
                    raise TypingError(f"a kernel returns nothing; signature {sig!r} gives "
                                      f"{ret}")
                fixed.append(args)
                returns.append(ret)
            self._fixed, self._returns = fixed, returns

    def __reduce__(self):
        # pickled by reference, as the module-level name it is (a Dask worker
        # imports the module and compiles the kernel there, through the cache)
        return self.__qualname__

    def __repr__(self):
        kind = "device function" if self.device else "kernel"
        return f"<pygpu.cuda.jit {kind} {self.__name__}>"

    @property
    def source(self):
        if self._source is None:
            self._source = FunctionSource(self.py_func)
        return self._source

    # -- compiling ----------------------------------------------------------------

    def _device_translate(self, unit, argtypes, caller, node, consts=None):
        """(C++ name, return type) of this device function for argtypes,
        translated into unit (once per unit and types)."""
        argtypes, ret = self._device_signature(argtypes, caller, node)
        # the arguments known at compile time (ints and tuples of them) are
        # constants in the function too (a shared array's shape), as Numba's
        # literal arguments are: one version per such value
        if consts is not None and any(k[:2] == (id(self), argtypes) for k in unit.busy):
            consts = None  # a call to itself: one version for all values
        key = (id(self), argtypes, consts)
        if key in unit.device:
            return unit.device[key]
        if key in unit.busy and next(reversed(unit.busy)) != key:
            chain = list(dict.fromkeys(re.sub(r"^pg_|_d\d+_\d+$", "", t.cname) + "()"
                                       for t in unit.busy.values()))
            chain.append(f"{self.__name__}()")
            raise caller.error(node, f"{self.__name__}() is called back from a device "
                                     f"function it calls (mutual recursion: "
                                     f"{' -> '.join(chain)}), which kernels do not support, "
                                     "as in Numba")
        if key in unit.busy:
            # a call to itself: its return type is the signature's, or what
            # its returns so far give (a `return` before the recursive call)
            inner = unit.busy[key]
            if ret is None and inner.ret is None:
                raise caller.error(node, f"{self.__name__}() calls itself before any of "
                                         "its returns gives its type: give it a signature, "
                                         "@cuda.jit('int64(int64)', device=True)")
            return inner.cname, ret or inner.ret
        cname = f"{self._cname}_d{len(unit.device)}_{len(unit.busy) + 1}"
        tr = Translator(self.source, argtypes, unit, kernel=False, cname=cname)
        tr.param_consts = consts or ()
        if ret is not None:
            tr.ret, tr.fixed_ret = ret, True
        unit.busy[key] = tr
        try:
            code = tr.translate()
        finally:
            del unit.busy[key]
        result = (cname, tr.ret or T.void)
        unit.functions.append(code)
        unit.device[key] = result
        return result

    def _device_signature(self, argtypes, caller, node):
        """(argument types, return type or None) of a call of this device
        function: the call's own types, or those of the signature it was
        given that takes as many arguments."""
        if self._fixed is None:
            return argtypes, None
        for sig, ret in zip(self._fixed, self._returns, strict=True):
            if len(sig) == len(argtypes) and all(
                    isinstance(w, T.Scalar) == isinstance(h, T.Scalar)
                    for w, h in zip(sig, argtypes, strict=True)):
                return sig, ret
        known = "; ".join("(" + ", ".join(str(t) for t in s) + ")" for s in self._fixed)
        raise caller.error(node, f"{self.__name__}() is called with ("
                                 f"{', '.join(str(t) for t in argtypes)}); its signatures: "
                                 f"{known}")

    def _translate(self, argtypes):
        """(CUDA C++, whether it takes the dynamic shared memory's size) of
        this kernel for argtypes."""
        return self._translate_unit(argtypes)[:2]

    def _translate_unit(self, argtypes):
        """_translate's two, and the Unit (where its asserts, barriers and
        shared arrays are)."""
        if self.device:
            raise TypeError(f"{self.__name__} is a device function: call it from a kernel")
        unit = Unit()
        tr = Translator(self.source, argtypes, unit, kernel=True, cname=self._cname)
        unit.functions.append(tr.translate())
        self._captured += unit.keep
        return unit.source(), tr.uses_dynamic_shared, unit

    def _compile(self, argtypes):
        from ..rawkernel import CompileError, RawModule

        # the translation from the disk cache (memo.py), else made (and kept
        # once it compiles)
        key = memo.key(self, argtypes)
        kept = memo.load(key) if key is not None else None
        source, dynamic_shared, unit = kept or self._translate_unit(argtypes)
        try:
            # check: the simulator's checking mode (None follows PYGPU_SIM_CHECK)
            module = RawModule(source, options=self._nvrtc_options(),
                               check=self.options.get("check"))
        except CompileError as exc:
            log = getattr(exc, "log", "")
            err = CompileError(f"the kernel {self.__name__}() did not compile for "
                               f"({', '.join(str(t) for t in argtypes)}); the compiler's "
                               f"messages name your Python lines:\n{log[-3000:]}")
            err.log = log
            raise err from None
        if key is not None and kept is None:
            memo.store(key, source, dynamic_shared, unit)
        compiled = _Compiled(module.get_function(self._cname), argtypes, dynamic_shared,
                             source, module, unit, _c_params(argtypes))
        self._kernels[(_core.get_device(), argtypes)] = compiled
        return compiled

    def _nvrtc_options(self):
        """NVRTC's options for Numba's: fastmath, lineinfo (the #line
        directives then reach the profilers: Python lines in Nsight),
        max_registers. The simulator's compiler ignores them."""
        opts = []
        if self.options.get("fastmath"):
            opts.append("--use_fast_math")
        if self.options.get("lineinfo"):
            opts.append("-lineinfo")
        if self.options.get("max_registers"):
            opts.append(f"--maxrregcount={int(self.options['max_registers'])}")
        return tuple(opts)

    def compile(self, signature):
        """Compile for a signature ("void(float32[:], int64)") now; returns
        the CUDA C++ made."""
        args, _ = T.parse_signature(signature)
        found = self._kernels.get((_core.get_device(), args)) or self._compile(args)
        return found.source

    def inspect_cuda(self, signature=None):
        """The CUDA C++ made for a signature ("void(float32[:, :])"), without
        compiling it; with none, {signature: C++} of what was compiled so far."""
        if signature is not None:
            args = T.parse_signature(signature)[0]
            # the source compiled for it (on any device), else translated now
            # (no device needed: the C++ for NVRTC on a machine without one)
            found = next((c for k, c in self._kernels.items() if k[1] == args), None)
            return found.source if found is not None else self._translate(args)[0]
        return {"(" + ", ".join(str(t) for t in k[1]) + ")": c.source
                for k, c in self._kernels.items()}

    @property
    def signatures(self):
        """The argument types compiled so far."""
        return list(dict.fromkeys(k[1] for k in self._kernels))

    # -- launching ------------------------------------------------------------------

    def _configure(self, config):
        """kernel[grid, block, ...] where _launches has no launch of config."""
        if self.device:
            raise TypeError(f"{self.__name__} is a device function: kernels call it; "
                            "it is not launched")
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise ValueError("launch a kernel as kernel[grid, block], kernel[grid, block, "
                             "stream] or kernel[grid, block, stream, shared_bytes]")
        launch = _Launch(self, config)
        # kept: (grid, block) of ints alone (no stream to keep alive; a dict
        # would find (1.0, 128), which the launch refuses, under (1, 128))
        if _core._plain_config(config) and len(self._launches) < 64:
            self._launches[config] = launch
        return launch

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """kernel.forall(n)(args): a launch of at least n threads in one
        dimension (cuda.grid(1) covers 0 to n - 1), as Numba's forall."""
        ntasks = int(ntasks)
        if ntasks < 0:
            raise ValueError(f"forall: ntasks must be >= 0, got {ntasks}")
        tpb = int(tpb) or 128
        blocks = max(1, -(-ntasks // tpb))
        return self[blocks, tpb, stream, sharedmem]

    def __call__(self, *args, **kwargs):
        if self.device:
            raise TypeError(f"{self.__name__} is a device function: it runs only when a "
                            "@cuda.jit kernel calls it")
        raise TypeError(f"launch the kernel {self.__name__} with a configuration: "
                        f"{self.__name__}[blocks, threads_per_block](...)")

    def _types(self, args):
        types, prepared, copies = [], [], []
        for i, a in enumerate(args):
            try:
                self._type_one(i, a, types, prepared, copies)
            except TypingError as exc:
                raise TypeError(f"{self.__name__}: argument {i}: {exc}") from None
        return tuple(types), prepared, copies

    def _type_one(self, i, a, types, prepared, copies):
        """Types argument i, a, and prepares what the launch passes."""
        if isinstance(a, _core.DeviceArray):
            types.append(T.Array(T.scalar(a.dtype).dtype, a.ndim, _layout(a)))
            prepared.append(a)
            return
        st = _scalar_type(a)
        if st is not None:
            types.append(st)
            prepared.append(a)
            return
        if isinstance(a, tuple):
            t, value = self._tuple_arg(a, copies)
            types.append(t)
            prepared.append(value)
            return
        if isinstance(a, np.ndarray):
            if a.dtype.kind not in "biufc":
                raise TypeError(f"{self.__name__}: argument {i} is an array of "
                                f"{a.dtype}, which kernels do not take yet")
            d = _core.to_device(a)
            copies.append((a, d))
            types.append(T.Array(T.scalar(a.dtype).dtype, a.ndim, _host_layout(a),
                                 readonly=not a.flags.writeable))
            prepared.append(d)
            return
        if hasattr(a, "__cuda_array_interface__") or hasattr(a, "__dlpack__"):
            from .. import asarray
            d = asarray(a)
            types.append(T.Array(T.scalar(d.dtype).dtype, d.ndim, _layout(d)))
            prepared.append(d)
            return
        raise TypeError(f"{self.__name__}: argument {i} is a {type(a).__name__}; "
                        "kernels take arrays (DeviceArray, NumPy, or any CUDA array "
                        "interface or DLPack array), bool, int, float and NumPy scalars")

    def _tuple_arg(self, a, copies):
        """(type, value to pass) of a tuple argument (a namedtuple too) of
        numbers, arrays and tuples of them: Numba's tuple type, passed item by
        item (a NumPy array in it is copied there and back, as one passed
        alone)."""
        items, values = [], []
        for v in a:
            if isinstance(v, tuple):
                t, v = self._tuple_arg(v, copies)
            elif _scalar_type(v) is not None:
                t = _scalar_type(v)
            else:
                one_types, one = [], []
                try:
                    self._type_one(0, v, one_types, one, copies)
                except TypeError:
                    raise TypeError(f"{self.__name__}: a tuple argument holds numbers, "
                                    f"arrays and tuples of them, not {type(v).__name__}") \
                        from None
                t, v = one_types[0], one[0]
            items.append(t)
            values.append(v)
        names = getattr(type(a), "_fields", None)
        return (T.Tuple(tuple(items), tuple(names) if names is not None else None),
                tuple(values))

    def _match_fixed(self, types):
        for sig in self._fixed:
            if len(sig) != len(types):
                continue
            ok = True
            for want, have in zip(sig, types, strict=True):
                if isinstance(want, T.Array):
                    ok = (isinstance(have, T.Array) and want.dtype == have.dtype and
                          want.ndim == have.ndim and want.layout in ("A", have.layout))
                else:
                    ok = isinstance(have, T.Scalar)
                if not ok:
                    break
            if ok:
                return sig
        given = ", ".join(str(t) for t in types)
        known = "; ".join("(" + ", ".join(str(t) for t in s) + ")" for s in self._fixed)
        raise TypeError(f"{self.__name__}: no signature matches the arguments ({given}); "
                        f"its signatures: {known}")

    def _launch(self, config, args, fast, bound=None):
        # the fast path: the arguments are DeviceArrays and Python or NumPy
        # scalars of types seen before (the key), passed as they are (an
        # array as its address, shape and strides) unless the plan converts;
        # _core._jit_call built the key and those arguments in C (None for
        # anything else). `bound` (the launch's) learns the plain ones.
        key, flat = (None, None) if fast is None else fast
        found = self._fast.get(key) if key is not None else None
        if found is not None:
            compiled, plan = found
            if plan is None and bound is not None and not compiled.dynamic_shared \
                    and compiled.record is None and len(bound) < 16:
                bound[key] = (compiled, compiled.function[config])
            if plan is not None:  # a scalar is converted to its parameter's type
                flat = []
                for a, how in zip(args, plan, strict=True):
                    if how is None:
                        flat.append(a)
                        flat += a.shape
                        flat += a.strides
                    else:
                        flat.append(a if how is _AS_IS else how(a))
            copies = ()
        else:
            types, prepared, copies = self._types(args)
            if self._fixed is not None:
                types = self._match_fixed(types)
            compiled = self._kernels.get((_get_device(), types))
            if compiled is None:
                compiled = self._compile(types)
            flat = []
            for a, conv in zip(prepared, compiled.converters, strict=True):
                if conv is None:
                    flat.append(a)
                    flat += a.shape
                    flat += a.strides
                elif type(conv) is tuple:
                    flat += conv[0](a)
                else:
                    flat.append(a if _as_is(conv, a) else conv(a))
            if key is not None:  # remember how these types pass
                plan = tuple(None if conv is None else _AS_IS if _as_is(conv, a) else conv
                             for a, conv in zip(args, compiled.converters, strict=True))
                self._fast[key] = (compiled, None if all(
                    how is None or how is _AS_IS for how in plan) else plan)
        if compiled.dynamic_shared:
            flat.append(int(config[3]) if len(config) == 4 else 0)
        try:
            compiled.function[config](*flat)
            if compiled.record is not None:
                _core.synchronize()  # only kernels with asserts wait for their end
        except _core.KernelError as exc:
            raise self._kernel_error(compiled, config, exc) from None
        if compiled.record is not None:
            record = compiled.record.copy_to_host()
            if record[0]:
                raise self._assertion(compiled, record) from None
        for host, d in copies:
            if host.flags.writeable:
                host[...] = d.copy_to_host()

    # -- what went wrong, in Python's terms ------------------------------------------

    def _assertion(self, compiled, record):
        """The KernelAssertionError of the assert that failed first (the
        record, read after the launch, names it, its thread and block);
        clears the record."""
        compiled.module.memcpy_to_symbol("pg_jit_assert_record", np.zeros(8, np.uint32))
        filename, line, function, in_kernel, test, message = \
            compiled.unit.asserts[int(record[0]) - 1]
        where = "" if in_kernel else f" (in device function {function}())"
        text = (f"kernel '{self.__name__}', block ({record[4]}, {record[5]}, {record[6]}), "
                f"thread ({record[1]}, {record[2]}, {record[3]}), {filename}:{line}{where}: "
                f"assert {test} failed" + (f": {message}" if message is not None else ""))
        exc = _core.KernelAssertionError(text)
        exc.code, exc.name = 710, "cudaErrorAssert"  # what CUDA's own assert gives
        return exc

    def _kernel_error(self, compiled, config, exc):
        """A launch's KernelError (from the simulator: the checking mode, a
        divergent barrier) in Python's terms: the kernel's Python name, its
        shared arrays by their Python names, an argument by its Python
        index, a barrier by its Python line; or the assert that failed first,
        where one did (its thread returned early, which may have caused the
        error)."""
        if compiled.record is not None:
            try:
                record = compiled.record.copy_to_host()
                if record[0]:
                    return self._assertion(compiled, record)
            except _core.CudaError:
                pass  # the context is gone (a GPU's fault): the error as it is
        text = str(exc)
        unit = compiled.unit
        text = text.replace(f"kernel '{self._cname}'", f"kernel '{self.__name__}'")
        text = text.replace(f"kernel {self._cname} ", f"kernel {self.__name__} ")

        def shared(m):
            filename, line, name = unit.shared.get(m.group(1), (None, None, None))
            if filename is None:
                return m.group(0)
            return (f"cuda.shared.array {name!r} (made at {filename}:{line})" if name else
                    f"the cuda.shared.array made at {filename}:{line}")
        text = re.sub(r"__shared__ '(pg_shared_\w+)'", shared, text)

        def param(m):
            k = int(m.group(1))
            if k >= len(compiled.params):
                return m.group(0)
            return f"(argument {compiled.params[k]} of {self.__name__}())"
        text = re.sub(r"\(parameter (\d+)\)", param, text)
        m = re.search(r"wait at __syncthreads\(\) \(the first, thread \((\d+), (\d+), "
                      r"(\d+)\)\)", text)
        if m and unit.barriers:
            at = self._barrier_of(compiled, config, [int(g) for g in m.groups()])
            if at is not None:
                text = text[:m.end()] + f" at {at[0]}:{at[1]}" + text[m.end():]
        new = type(exc)(text)
        for name in ("code", "name"):
            if hasattr(exc, name):
                setattr(new, name, getattr(exc, name))
        return new.with_traceback(exc.__traceback__)

    def _barrier_of(self, compiled, config, thread):
        """(file, line) of the barrier that thread waits at (the simulator
        notes it in pg_jit_barrier_at), or None where that is not known."""
        block = config[1]
        dims = ((tuple(block) + (1, 1))[:3] if isinstance(block, (tuple, list))
                else (block, 1, 1))
        rank = thread[0] + dims[0] * (thread[1] + dims[1] * thread[2])
        try:
            at = int(compiled.module.memcpy_from_symbol("pg_jit_barrier_at", np.uint32)
                     [rank])
        except (AttributeError, IndexError, _core.CudaError):
            return None  # a GPU's module has no such record
        return compiled.unit.barriers[at - 1] if 0 < at <= len(compiled.unit.barriers) \
            else None


def _Launch(dispatcher, config):
    """kernel[grid, block, ...]: call it with the kernel's arguments. A
    functools.partial of _core._jit_call, so that a launch of types seen
    before runs no Python: `bound` keeps {key of the arguments' types:
    (compiled, its function[config])} for the kernels that pass their
    arguments as they are, need no dynamic shared memory and have no asserts
    (_launch fills it); any other call goes to _launch."""
    bound = {}

    def error(compiled, exc):
        return dispatcher._kernel_error(compiled, config, exc)

    def slow(args, fast):
        dispatcher._launch(config, args, fast, bound)

    return functools.partial(_core._jit_call, bound, error, slow)


def jit(func_or_sig=None, device=False, **options):
    """Compile a Python function as a CUDA kernel (Numba's @cuda.jit).

        @cuda.jit
        def add_one(A):
            i, j = cuda.grid(2)
            if i < A.shape[0] and j < A.shape[1]:
                A[i, j] += 1

        add_one[blocks, threads](d_A)

    @cuda.jit(device=True) makes a device function, which kernels call.
    @cuda.jit("void(float32[:], int64)") (or a list of such signatures)
    fixes the argument types; without one, the kernel compiles at its first
    launch for the types it gets, and again for new types. docs/JIT.md lists
    the Python that kernels may use.
    """
    known = {"debug", "opt", "lineinfo", "fastmath", "cache", "inline", "link",
             "max_registers", "boundscheck", "check"}
    unknown = set(options) - known
    if unknown:
        raise TypeError(f"cuda.jit got unknown options {sorted(unknown)}")
    if callable(func_or_sig) and hasattr(func_or_sig, "__code__"):
        return Dispatcher(func_or_sig, device=device, options=options)
    if func_or_sig is None:
        return lambda f: Dispatcher(f, device=device, options=options)
    if isinstance(func_or_sig, (types.BuiltinFunctionType, numbers.Number)):
        raise TypeError(f"cuda.jit takes a Python function (def ...), or a signature string "
                        f"('void(float32[:], int64)') or a list of them, not {func_or_sig!r}")
    signatures = func_or_sig
    for sig in signatures if isinstance(signatures, list) else [signatures]:
        T.parse_signature(sig)  # a bad one fails here, at decoration
    return lambda f: Dispatcher(f, device=device, signatures=signatures, options=options)
