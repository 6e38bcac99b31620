"""pygpu's ufuncs: NumPy's semantics on DeviceArrays, with kernels from the op
table (table.py) made by the generator (codegen.py).

`pygpu.sin(d)`, `np.sin(d)` (through DeviceArray.__array_ufunc__) and the
operators that C does not do itself (`d / 2`, `-d`, `d ** 2`, `d & 3`, ...)
all come here. What NumPy decides, NumPy decides: the loop (type signature)
comes from `numpy.ufunc.resolve_dtypes`, with Python scalars passed as their
types so that NEP 50's rules hold (`np.float32(2) + d` and `2.0 * d` keep
NumPy's answers), and so do NumPy's errors for casting and broadcasting.
pygpu then casts array inputs whose dtype is not the loop's, picks a kernel
by layout (contiguous, or strided with up to codegen.MAX_DIMS folded axes)
and by which inputs are scalars, and writes outputs (through a temporary
where out= has another dtype, overlaps an input, or where= masks it).
"""

import math
import numbers

import numpy as np

from .. import _core
from .._core import DeviceArray
from . import codegen
from .table import ALIASES, DEVICE_TYPES, INTERNAL, KINDS, OPS, STANDARD, canonical

_PY_SCALARS = (int, float, complex)
_KWARGS = frozenset(("out", "where", "casting", "order", "dtype", "signature", "subok"))


def _host_array_error(name, x):
    return TypeError(
        f"{name}: one operand is a {type(x).__module__}.{type(x).__name__} in host memory; "
        "pygpu does not copy between host and device implicitly: copy it to the device "
        "first with pygpu.asarray(x) (or bring the DeviceArray to the host with "
        ".copy_to_host())")


def _dtype_error(name, dtype):
    """The C side's message (args.c), said by the C side: one wording."""
    try:
        _core.empty(0, dtype)
    except TypeError as exc:
        return TypeError(f"{name}: {exc}")
    return TypeError(f"{name}: pygpu does not support dtype {dtype} on the device")


def _operand(name, x):
    """A DeviceArray, a Python scalar (weak, NEP 50) or a NumPy scalar of a
    device dtype; None for a type pygpu leaves to others (NotImplemented)."""
    if isinstance(x, DeviceArray):
        return x
    if isinstance(x, bool):
        return np.bool_(x)
    if isinstance(x, np.generic) or (isinstance(x, np.ndarray) and x.ndim == 0):
        if isinstance(x, np.ndarray):
            x = x[()]
        if not isinstance(x, np.generic) or x.dtype.char not in DEVICE_TYPES:
            raise _dtype_error(name, x.dtype if isinstance(x, np.generic) else np.dtype(object))
        return x
    if isinstance(x, _PY_SCALARS):
        return x
    if isinstance(x, np.ndarray):
        raise _host_array_error(name, x)
    if isinstance(x, (list, tuple)):
        raise TypeError(f"{name}: one operand is a {type(x).__name__} (host data); copy it "
                        "to the device first with pygpu.asarray(x)")
    if isinstance(x, numbers.Number):  # Fraction, Decimal: NumPy's object dtype
        raise TypeError(f"{name}: one operand is a {type(x).__module__}."
                        f"{type(x).__qualname__}, which NumPy holds as dtype object; pygpu "
                        "does not support dtype object on the device (convert it with "
                        "float() or int() first)")
    return None


def _scalar_type(x):
    """What resolve_dtypes is given for a scalar: its dtype, or for a Python
    int, float or complex the type itself (a weak scalar)."""
    if isinstance(x, np.generic):
        return x.dtype
    for t in _PY_SCALARS:
        if isinstance(x, t):
            return t
    raise AssertionError(x)


def _resolve(op, operands, outs, dtype, signature, casting):
    """(ins, outs) of the loop NumPy picks, as canonical type characters."""
    given = [x.dtype if isinstance(x, DeviceArray) else _scalar_type(x) for x in operands]
    given += [o.dtype if o is not None else None for o in outs]
    if dtype is not None:
        if signature is not None:
            raise TypeError("cannot specify both 'signature' and 'dtype'")
        signature = (None,) * op.nin + (np.dtype(dtype),) * op.nout
    extra = {} if signature is None else {"signature": signature}
    resolved = op.ufunc.resolve_dtypes(tuple(given), casting=casting, **extra)
    for d in resolved:
        if d.char not in DEVICE_TYPES:
            raise _dtype_error(op.like or op.name, d)
    ins = "".join(canonical(d.char) for d in resolved[:op.nin])
    outs_ = "".join(canonical(d.char) for d in resolved[op.nin:])
    if (ins, outs_) not in op.loops:
        raise TypeError(f"{op.like or op.name}: pygpu has no loop for {ins}->{outs_}")
    return ins, outs_


def _extent(a):
    """[lo, hi) of the bytes a DeviceArray spans."""
    lo = hi = a.ptr
    for n, s in zip(a.shape, a.strides, strict=True):
        if n == 0:
            return a.ptr, a.ptr
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + a.itemsize


def _unsafe_overlap(out, x):
    """Whether writing `out` element by element can change what is still to be
    read of `x`: they share memory, and not as the same elements in the same
    order."""
    if out.size == 0 or x.size == 0:
        return False
    lo1, hi1 = _extent(out)
    lo2, hi2 = _extent(x)
    if hi1 <= lo2 or hi2 <= lo1:
        return False
    return not (x.ptr == out.ptr and x.shape == out.shape and x.strides == out.strides
                and x.dtype == out.dtype)


def _byte_strides(a, shape):
    """a's strides seen in the broadcast `shape`: 0 on broadcast axes."""
    pad = len(shape) - a.ndim
    return [0 if i < pad or a.shape[i - pad] == 1 else a.strides[i - pad]
            for i in range(len(shape))]


def _fold(shape, strides):
    """Axes of length 1 dropped and neighbours folded where every operand
    steps through both as through one; (shape, strides per operand)."""
    dims = [(n, [s[i] for s in strides]) for i, n in enumerate(shape) if n != 1]
    out = []
    for n, st in dims:
        if out:
            m, prev = out[-1]
            if all(p == q * n for p, q in zip(prev, st, strict=True)):
                out[-1] = (m * n, st)
                continue
        out.append((n, st))
    return [n for n, _ in out], [[st[k] for _, st in out] for k in range(len(strides))]


def _kernel(op, loop, inputs, targets, shape):
    """(the bound launch, its arguments after the operands) for the layout of
    the operands; None where they have more than codegen.MAX_DIMS axes after
    folding."""
    n = math.prod(shape)
    ins, outs = loop
    arrays = [x for x in inputs if isinstance(x, DeviceArray)] + targets
    mask = "".join("a" if isinstance(x, DeviceArray) else "s" for x in inputs)
    dims, strides = _fold(shape, [_byte_strides(a, shape) for a in arrays])
    if len(dims) <= 1 and all(not st or st[0] == a.itemsize
                              for a, st in zip(arrays, strides, strict=True)):
        threads = codegen.threads("c", ins, outs, mask)
        grid = codegen.blocks("c", n, threads, codegen.per_thread(ins, outs, mask))
        return codegen.function(op, ins, outs, "c", mask)[grid, threads], (n,)
    if len(dims) <= codegen.MAX_DIMS:
        pad = codegen.MAX_DIMS - len(dims)
        dims = [1] * pad + dims
        flat = [s for st in strides for s in [0] * pad + st]
        grid = codegen.blocks("s", n, codegen.THREADS)
        return (codegen.function(op, ins, outs, "s", mask)[grid, codegen.THREADS],
                (n, *dims[1:], *flat))
    return None


def _launch(op, loop, inputs, targets, shape):
    if math.prod(shape) == 0:
        return
    kernel = _kernel(op, loop, inputs, targets, shape)
    if kernel is not None:
        launch, extra = kernel
        launch(*inputs, *targets, *extra)
        return
    for i in range(shape[0]):  # more axes than the kernels take: one launch per index
        sub = [x[i if x.shape[0] != 1 else 0]
               if isinstance(x, DeviceArray) and x.ndim == len(shape) else x
               for x in inputs]
        _launch(op, loop, sub, [t[i] for t in targets], shape[1:])


def _scalar_value(op, x, dtype):
    """A scalar operand as a NumPy scalar of the loop's dtype."""
    return np.asarray(x, dtype=dtype)[()] if not isinstance(x, np.generic) \
        else x.astype(dtype)


_COMPARISONS = frozenset(("equal", "not_equal", "less", "less_equal", "greater",
                          "greater_equal"))


def _device_of(arrays):
    devices = {a.device.id for a in arrays}
    if len(devices) > 1:
        raise ValueError("the arrays are on different devices "
                         f"({', '.join(map(str, sorted(devices)))}); copy them to one device "
                         "first (d.copy_to_device or cuda.to_device under "
                         "`with cuda.gpus[i]:`)")
    return arrays[0].device


def call(op, args, out=None, where=True, casting="same_kind", order="K", dtype=None,
         signature=None, subok=True):
    """op(*args, out=..., ...) with NumPy's semantics; NotImplemented where an
    operand is of a type pygpu leaves to others."""
    key = None
    if (where is True and dtype is None and signature is None and casting == "same_kind" and
            len(args) == op.nin):
        if out is None:
            key = _plan_key(op, args)
            target = None
        else:  # one output array (out=o, out=(o,)): a plan that writes into it
            target = out[0] if type(out) is tuple and len(out) == 1 else out
            key = _plan_key(op, args) if (type(target) is DeviceArray and op.nout == 1 and
                                          target.flags["WRITEABLE"]) else None
            if key is not None:
                key = (_OUT, key, (target.dtype, target.shape, target.strides,
                                   target.device.id))
        plan = _plans.get(key) if key is not None else None
        if plan is not None and _core.get_device() == plan[0]:
            try:
                res = plan[1](*args) if target is None else plan[1](target, *args)
                if res is not None:
                    return res
            except OverflowError:
                pass  # a scalar beyond the loop's type: the slow path says what NumPy says
    name = op.like or op.name
    if len(args) < op.nin or len(args) > op.nin + op.nout:
        raise TypeError(f"{name}() takes from {op.nin} to {op.nin + op.nout} positional "
                        f"arguments but {len(args)} were given")
    if len(args) > op.nin:
        if out is not None:
            raise TypeError("cannot specify 'out' as both a positional and keyword argument")
        out = args[op.nin:]
        args = args[:op.nin]
    outs = _outs(name, op.nout, out)
    operands = [_operand(name, x) for x in args]
    if any(x is None for x in operands):
        return NotImplemented
    if op.name in _C_LONG and any(type(x) is int and not -2**63 <= x < 2**63 for x in args):
        raise OverflowError("Python int too large to convert to C long")
    arrays = [x for x in operands if isinstance(x, DeviceArray)]
    if not arrays:  # scalars alone: a 0-d array of the first, as pygpu.asarray
        operands[0] = _core.asarray(np.asarray(operands[0]))
        arrays = [operands[0]]
        key = None  # a plan takes the operands as they come
    if where is not True:
        if isinstance(where, (bool, np.bool_)):
            where = bool(where)
        elif not isinstance(where, DeviceArray):
            if isinstance(where, np.ndarray):
                raise _host_array_error(name, where)
            raise TypeError(f"{name}: where must be a bool DeviceArray or a bool, not "
                            f"{type(where).__name__}")
        elif where.dtype != np.bool_:  # NumPy's words
            raise TypeError(f"Cannot cast array data from {where.dtype!r} to "
                            "dtype('bool') according to the rule 'safe'")
    device = _device_of(arrays + [o for o in outs if o is not None] +
                        ([where] if isinstance(where, DeviceArray) else []))
    for o in outs:
        if o is not None and not o.flags["WRITEABLE"]:
            raise ValueError("output array is read-only")
    ins, outs_ = _resolve(op, operands, outs, dtype, signature, casting)
    shape = _broadcast(arrays, outs)
    if isinstance(where, DeviceArray):
        np.broadcast_shapes(where.shape, shape)
    with device:
        return _compute(op, (ins, outs_), operands, outs, where, shape, key)


# ---- the fast path: a plan per op and operands' dtypes, shapes and strides ------------
# What call() works out for one kind of call (the loop, the casts of scalars,
# the output, the kernel and its launch configuration) is kept, keyed by the
# operands' types, dtypes, shapes, strides and device, so that the next such
# call only converts its scalars, allocates its result and launches.

_plans = {}
_core._set_ufunc_plans(_plans)  # the operators and __array_ufunc__ replay them in C
_MAX_PLANS = 4096
_OUT = ("out",)  # the first item of a plan's key where the call names its output
_PY_TYPES = frozenset((bool, int, float, complex))


def _descr(x):
    t = type(x)
    if t is DeviceArray:
        return (x.dtype, x.shape, x.strides, x.device.id)
    if t in _PY_TYPES:
        return t
    if isinstance(x, np.generic):
        return x.dtype
    return None


# The C side replays a plan by the name of the operator (`d // e`) or of the
# NumPy ufunc (`np.floor_divide(d, e)`) (ops.c, replay_plan), which are the
# same name for a standard's op and NumPy's: neither keeps plans.
_UNPLANNED = frozenset((*STANDARD, *(op.name for op in STANDARD.values())))


# NumPy's logical ufuncs take a Python int as a C long: beyond int64 it is an
# OverflowError for every dtype (call checks; their plans take no int)
_C_LONG = frozenset(("logical_and", "logical_or", "logical_xor"))


def _plan_key(op, args):
    name = op.name
    if name in _UNPLANNED or (name in _C_LONG and int in map(type, args)):
        return None
    if len(args) == 1:
        a = _descr(args[0])
        return None if a is None else (name, a)
    if len(args) == 2:
        a, b = _descr(args[0]), _descr(args[1])
        return None if a is None or b is None else (name, a, b)
    key = (name, *map(_descr, args))
    return None if None in key else key


def _make_plan(key, op, loop, operands, inputs, targets, shape, given):
    """Keep what the next call of this kind needs (see above)."""
    if len(_plans) >= _MAX_PLANS:
        _plans.clear()
    ins, outs = loop
    converts = []
    for x, c in zip(operands, ins, strict=True):
        if isinstance(x, DeviceArray):
            if x.dtype != np.dtype(c):
                return  # cast first: not kept
            converts.append(None)
        else:
            converts.append(np.dtype(c).type)
    out_dtypes = [np.dtype(c) for c in outs]
    kernel = _kernel(op, loop, inputs, targets, shape) if math.prod(shape) else (None, ())
    if kernel is None:
        return
    launch, extra = kernel
    if key[0] is _OUT:
        if given[0] is not targets[0] or launch is None:
            return  # computed into a temporary first: not kept
        run = _runner_out(launch, extra, converts)
    else:
        run = _runner(launch, extra, converts, out_dtypes, shape)
    _plans[key] = (_core.get_device(), run)


def _runner_out(launch, extra, converts):
    """A plan's work where the call names its output: convert the scalars,
    launch into it; None (the slow path then) where an input overlaps the
    output other than as the same elements."""
    if converts == [None]:
        def run(o, a):
            if a is not o and _unsafe_overlap(o, a):
                return None
            launch(a, o, *extra)
            return o
        return run
    if len(converts) == 2 and converts[0] is None and converts[1] is not None:
        cb = converts[1]

        def run(o, a, b):
            if a is not o and _unsafe_overlap(o, a):
                return None
            launch(a, cb(b), o, *extra)
            return o
        return run

    def run(o, *args):
        ins = []
        for a, c in zip(args, converts, strict=True):
            if c is None:
                if a is not o and _unsafe_overlap(o, a):
                    return None
                ins.append(a)
            else:
                ins.append(c(a))
        launch(*ins, o, *extra)
        return o
    return run


def _runner(launch, extra, converts, out_dtypes, shape):
    """The plan's work: convert the scalars, allocate, launch. The common
    forms are written out: this is the hot path of every small operation."""
    empty = _core.empty
    if launch is None:  # no elements
        def run(*args):
            outs = tuple(empty(shape, dt) for dt in out_dtypes)
            return outs[0] if len(outs) == 1 else outs
        return run
    if len(out_dtypes) == 1:
        dt = out_dtypes[0]
        if converts == [None]:
            def run(a):
                o = empty(shape, dt)
                launch(a, o, *extra)
                return o
            return run
        if converts == [None, None]:
            def run(a, b):
                o = empty(shape, dt)
                launch(a, b, o, *extra)
                return o
            return run
        if len(converts) == 2 and converts[0] is None:
            cb = converts[1]

            def run(a, b):
                o = empty(shape, dt)
                launch(a, cb(b), o, *extra)
                return o
            return run
        if len(converts) == 2 and converts[1] is None:
            ca = converts[0]

            def run(a, b):
                o = empty(shape, dt)
                launch(ca(a), b, o, *extra)
                return o
            return run

    def run(*args):
        ins = [a if c is None else c(a) for a, c in zip(args, converts, strict=True)]
        outs = [empty(shape, dt) for dt in out_dtypes]
        launch(*ins, *outs, *extra)
        return outs[0] if len(outs) == 1 else tuple(outs)
    return run


def _shape_text(shape):
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _broadcast(arrays, outs):
    """The shape of the operation: the inputs broadcast together, which must
    then broadcast to the outputs' shape; NumPy's errors."""
    given = [o for o in outs if o is not None]
    try:
        shape = np.broadcast_shapes(*[a.shape for a in arrays])
        for o in given:
            np.broadcast_shapes(shape, o.shape)
    except ValueError:
        shapes = [a.shape for a in arrays] + [o.shape for o in given]
        raise ValueError("operands could not be broadcast together with shapes " +
                         " ".join(str(s).replace(" ", "") for s in shapes) + " ") from None
    for o in given:
        if np.broadcast_shapes(shape, o.shape) != o.shape:
            raise ValueError(f"non-broadcastable output operand with shape "
                             f"{_shape_text(o.shape)} doesn't match the broadcast shape "
                             f"{_shape_text(np.broadcast_shapes(shape, o.shape))}")
    return given[0].shape if given else shape


def _outs(name, nout, out):
    if out is None:
        return [None] * nout
    if not isinstance(out, tuple):
        out = (out,)
    if len(out) != nout:
        raise ValueError(f"{name}: the 'out' tuple must have exactly {nout} entries: one "
                         "per ufunc output")
    for o in out:
        if o is not None and not isinstance(o, DeviceArray):
            if isinstance(o, np.ndarray):
                raise _host_array_error(name, o)
            raise TypeError(f"{name}: out must be a pygpu.DeviceArray, not {type(o).__name__}")
    return list(out)


def _compute(op, loop, operands, outs, where, shape, plan_key=None):
    ins, outs_ = loop
    inputs = []
    try:
        for x, c in zip(operands, ins, strict=True):
            dt = np.dtype(c)
            if isinstance(x, DeviceArray):
                inputs.append(x if x.dtype == dt else x.astype(dt))
            else:
                inputs.append(_scalar_value(op, x, dt))
    except OverflowError:
        if op.name not in _COMPARISONS:
            raise
        return _constant_comparison(op, operands, outs, shape)
    if op.name == "power" and ins[1] in "bhiq" and math.prod(shape) and where is not False:
        _refuse_negative_exponent(inputs[1], where)
    arrays_in = [x for x in inputs if isinstance(x, DeviceArray)]
    targets = []
    for o, c in zip(outs, outs_, strict=True):
        dt = np.dtype(c)
        direct = (o is not None and o.dtype == dt and where is True and
                  not any(_unsafe_overlap(o, x) for x in arrays_in))
        targets.append(o if direct else _core.empty(shape, dt))
    if where is not False:
        _launch(op, loop, inputs, targets, shape)
    if plan_key is not None and not (op.name == "power" and ins[1] in "bhiq"):
        _make_plan(plan_key, op, loop, operands, inputs, targets, shape, outs)
    results = []
    for o, t in zip(outs, targets, strict=True):
        if o is None:
            results.append(t)
        elif o is not t:
            if where is True:
                o[...] = t
            elif where is not False:
                ch = canonical(o.dtype.char)
                _compute(WHERE, ("?" + ch + ch, ch), [where, t, o], [o], True, o.shape)
            results.append(o)
        else:
            results.append(o)
    return results[0] if len(results) == 1 else tuple(results)


def _refuse_negative_exponent(e, where=True):
    """NumPy's ValueError for an integer to a negative integer power, where
    an element is computed (where: True, or a bool DeviceArray)."""
    if isinstance(e, DeviceArray) or where is not True:
        negative = call(OPS["less"], (e, 0))
        if where is not True:
            negative = call(OPS["logical_and"], (negative, where))
        negative = negative.size and bool(np.any(negative.copy_to_host()))
    else:
        negative = e < 0
    if negative:
        raise ValueError("Integers to negative integer powers are not allowed.")


def _constant_comparison(op, operands, outs, shape):
    """A comparison with a Python int beyond the array's dtype: NumPy's answer
    is the same for every element."""
    stand_ins = [np.zeros((), x.dtype) if isinstance(x, DeviceArray) else x for x in operands]
    value = bool(op.ufunc(*stand_ins))
    result = _core.full(shape, value, dtype=np.bool_) if outs[0] is None else outs[0]
    if outs[0] is not None:
        result[...] = value
    return result


# add, subtract and multiply of two operands (with out= and stream=) are the C
# functions of pygpu._core, the fast path that + - * take too
_C_PATHS = {"add": _core.add, "subtract": _core.subtract, "multiply": _core.multiply}


class ufunc:
    """A NumPy ufunc on DeviceArrays: `pygpu.sin(d)`, with NumPy's arguments
    (out=, where=, casting=, dtype=, signature=) and answers. `np.sin(d)` comes
    here too."""

    def __init__(self, op):
        self._op = op
        name = op.like or op.name
        self.__name__ = name
        self.__qualname__ = name
        self.__doc__ = (f"{name}(*args, out=None, where=True, casting='same_kind', "
                        f"dtype=None)\n\nnumpy.{name} on the device: NumPy's loops and "
                        + ("answers (docs/SEMANTICS.md lists where the last bits may differ)."
                           if op.like is None else
                           "the array API standard's special values (docs/SEMANTICS.md)."))

    nin = property(lambda self: self._op.nin)
    nout = property(lambda self: self._op.nout)
    nargs = property(lambda self: self._op.nin + self._op.nout)
    types = property(lambda self: [f"{i}->{o}" for i, o in self._op.loops])
    ntypes = property(lambda self: len(self._op.loops))

    def __call__(self, *args, **kwargs):
        c_path = _C_PATHS.get(self.__name__)
        if c_path is not None and len(args) == 2 and kwargs.keys() <= {"out", "stream"}:
            return c_path(*args, **kwargs)  # pygpu's C function (it takes stream=)
        bad = set(kwargs) - _KWARGS
        if bad:
            raise TypeError(f"{self.__name__}() got an unexpected keyword argument "
                            f"{sorted(bad)[0]!r}")
        r = call(self._op, args, **kwargs)
        if r is NotImplemented:
            bad = next(x for x in args if _operand(self.__name__, x) is None)
            raise TypeError(f"{self.__name__}: pygpu takes DeviceArrays and scalars, not "
                            f"{type(bad).__name__}")
        return r

    def __repr__(self):
        return f"<pygpu.ufunc '{self.__name__}'>"

    def _unsupported(self, method):
        raise TypeError(f"pygpu: {self.__name__}.{method} is not supported yet")

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False,
               initial=np._NoValue, where=True):
        """numpy.ufunc.reduce on a DeviceArray."""
        from . import reduction

        return reduction.reduce(self.__name__, array, axis, dtype, out, keepdims, initial,
                                where)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        """numpy.ufunc.accumulate on a DeviceArray."""
        from . import reduction

        return reduction.accumulate(self.__name__, array, axis, dtype, out)

    def outer(self, a, b, /, **kwargs):
        """numpy.ufunc.outer: op(a[i..., None...], b[j...]) over every pair,
        shape a.shape + b.shape."""
        return outer(self._op, a, b, kwargs)

    def at(self, *args, **kwargs):
        self._unsupported("at")

    def reduceat(self, *args, **kwargs):
        self._unsupported("reduceat")


WHERE = INTERNAL["where"]

UFUNCS = {name: ufunc(op) for name, op in OPS.items()}
UFUNCS.update({alias: UFUNCS[name] for alias, name in ALIASES.items()})
# the namespace's pygpu.floor_divide, pygpu.expm1: the standard's special values
STANDARD_UFUNCS = {name: ufunc(op) for name, op in STANDARD.items()}


def outer(op, a, b, kwargs):
    """op.outer(a, b, **kwargs): a gets b.ndim axes of length 1 after its
    own, then the ordinary call broadcasts (NumPy's answer, dtypes and
    errors; scalars count as 0-d arrays, typed as numpy.asarray types them)."""
    if op.nin != 2:
        raise ValueError("outer product only supported for binary functions")
    bad = set(kwargs) - _KWARGS
    if bad:
        raise TypeError(f"outer() got an unexpected keyword argument {sorted(bad)[0]!r}")
    ops = []
    for x in (a, b):
        if isinstance(x, DeviceArray):
            ops.append(x)
        elif isinstance(x, np.ndarray):
            raise _host_array_error(op.name, x)
        elif _operand(op.name, x) is None:
            raise TypeError(f"{op.name}.outer: pygpu takes DeviceArrays and scalars, not "
                            f"{type(x).__name__}")
        else:  # as numpy.asarray makes it: outer does not take Python scalars as weak
            ops.append(np.asarray(x)[()])
    nb = ops[1].ndim if isinstance(ops[1], DeviceArray) else 0
    if isinstance(ops[0], DeviceArray) and nb:
        ops[0] = ops[0][(...,) + (None,) * nb]
    r = call(op, tuple(ops), **kwargs)
    if r is NotImplemented:
        raise TypeError(f"{op.name}.outer: pygpu takes DeviceArrays and scalars")
    return r


def array_ufunc(np_ufunc, method, inputs, kwargs):
    """DeviceArray.__array_ufunc__ (NEP 13)."""
    name = np_ufunc.__name__
    out = kwargs.get("out")
    for x in (*inputs, *(out if isinstance(out, tuple) else (out,))):
        if type(x) is np.ndarray and x.ndim:  # h @= d, np.add(h, d): copy first
            raise _host_array_error(name, x)
    op = OPS.get(name)
    if op is None:
        raise TypeError(f"pygpu: numpy.{name} is not supported on DeviceArrays yet")
    if method in ("reduce", "accumulate"):
        from . import reduction

        out = kwargs.get("out")
        if isinstance(out, tuple):  # NEP 13 passes out= as a tuple
            kwargs = dict(kwargs, out=out[0] if len(out) == 1 else out)
        return getattr(reduction, method)(name, *inputs, **kwargs)
    if method == "outer":
        out = kwargs.get("out")
        if isinstance(out, tuple) and len(out) == 1:  # NEP 13 passes out= as a tuple
            kwargs = dict(kwargs, out=out[0])
        return outer(op, *inputs, kwargs)
    if method != "__call__":
        raise TypeError(f"pygpu: numpy.{name}.{method} is not supported on DeviceArrays yet")
    if not kwargs:
        return call(op, inputs)
    bad = set(kwargs) - _KWARGS
    if bad:
        raise TypeError(f"pygpu: numpy.{name} with {sorted(bad)[0]}= is not supported")
    return call(op, inputs, **kwargs)


_REFLECTABLE = frozenset(("divide", "floor_divide", "remainder", "power", "divmod",
                          "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
                          "right_shift"))


def operator(name, a, b, inplace):
    """A Python operator the C slots pass on: `a / b`, `-a` (b None), `a /= b`
    (inplace). NotImplemented lets Python try the other operand. The array
    API's array object defines them: `a // b` follows the standard
    (table.STANDARD)."""
    op = STANDARD.get(name) or OPS[name]
    if b is None and name not in _REFLECTABLE:
        return call(op, (a,), out=(a,)) if inplace else call(op, (a,))
    if inplace:
        return call(op, (a, b), out=(a,) * op.nout if op.nout == 1 else None)
    return call(op, (a, b))


def power_shortcut(char, exponent):
    """The unary op NumPy's `a ** exponent` runs for an array of dtype char,
    else None: a Python int 2 is square, and for float and complex arrays a
    Python int -1 reciprocal and a Python float 0.5 sqrt (ops.c,
    pg_python_power, for DeviceArrays; fusion's tracer)."""
    t = type(exponent)
    if t is int:
        if exponent == 2:
            return "square"
        return "reciprocal" if exponent == -1 and KINDS[char] in "fc" else None
    return "sqrt" if t is float and exponent == 0.5 and KINDS[char] in "fc" else None


def where(condition, x, y):
    """numpy.where(condition, x, y) on the device: x where condition is true,
    else y, broadcast together; the dtype is NumPy's result_type of x and y
    (NEP 50: a Python scalar takes the array's dtype)."""
    c = _operand("where", condition)
    xs = [_operand("where", v) for v in (x, y)]
    if c is None or any(v is None for v in xs):
        bad = next(v for v in (condition, x, y) if _operand("where", v) is None)
        raise TypeError(f"where takes DeviceArrays and scalars, not {type(bad).__name__}")
    dtype = np.result_type(*[v.dtype if isinstance(v, (DeviceArray, np.generic)) else v
                             for v in xs])
    if dtype.char not in DEVICE_TYPES:
        raise _dtype_error("where", dtype)
    ch = canonical(dtype.char)
    return apply(WHERE, ("?" + ch + ch, ch), [c, *xs])


def apply(op, loop, operands, out=None):
    """op's kernel for `loop` (ins, outs) on the operands (DeviceArrays and
    scalars, cast to the loop's types), broadcast together: for the table's
    INTERNAL ops, whose loop the caller picks."""
    arrays = [v for v in operands if isinstance(v, DeviceArray)]
    if not arrays:
        operands = [_core.asarray(np.asarray(operands[0])), *operands[1:]]
        arrays = operands[:1]
    outs = [out]
    shape = _broadcast(arrays, outs)
    with _device_of(arrays + [o for o in outs if o is not None]):
        return _compute(op, loop, operands, outs, True, shape)
