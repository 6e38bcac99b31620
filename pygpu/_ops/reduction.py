"""Reductions and scans on DeviceArrays: numpy.sum, mean, var, argmax, cumsum,
ufunc.reduce and ufunc.accumulate, ..., with NumPy's dtypes, errors and
answers, and kernels from the op table (table.py's REDUCTIONS, whose combining
code is that of an OPS entry or its own).

One mechanism does every reduction. The reduced axes fold into one axis r and
the kept axes into at most two, a (outer) and b (inner): the input is a
strided view [a, r, b] (any strides, negative too), and output o = a * inner +
b. Axes that do not fold so are copied first (`x.transpose(kept + reduced)
.copy()`). One kernel template (pg::reduce in pygpu/include/pygpu/ufunc.h)
serves every shape: a block is TB outputs (along b) times TR threads along r,
TB * TR <= 256 threads:

- r the contiguous axis (rows, full reductions): TR up to 256 threads share
  each output, reading consecutive elements, then a tree in shared memory;
  many short rows ((10**6, 2).sum(-1)) take a thread per output (TR 1);
- b the contiguous axis (sum(axis=0)): 32 adjacent outputs per block, so each
  warp reads 128 consecutive bytes, TR = 8 threads along r;
- too few outputs to fill the device ((1, 2**24).sum(1), a full sum,
  (2**24, 4).max(0)): gridDim.y blocks split r, each writes a partial
  (the accumulator: a float for float16, a value and index for argmax), and
  a second launch of the same template reduces them.

Each thread issues its loads before it combines any (16 bytes at a time
where r is contiguous and the rows aligned, "reduce_vec"). A reduction's
kernel is rendered per (Reduction, input dtype, loop dtype, output dtype) in
five variants: whole (one launch) and split (to the partials), each also
loading 16 bytes at a time, and final (partials to the output). Rows of at
most 4 elements take a thread each, 4 outputs a thread at once. Scans
(cumsum, accumulate) are a second template over the same view: a column per
thread, or a block scanning its chunk of r in shared memory; where several
rows are long they are cut into chunks whose totals (pg::reduce's split
variant), scanned (pg::scan over the totals), start each chunk. One long row
(a 1-d cumsum) is scanned in one pass: pg::scan_row's tiles, chained by
decoupled look-back.

What a call computes NumPy decides: the result dtype, and every error about
axis, dtype, out and initial, come from the same NumPy function called on a
stand-in of the input (its shape with each axis cut to one element), and an
empty input's whole answer comes from NumPy on an empty host array of its
shape (warnings, identities and errors included). The loop (accumulator)
dtype is NumPy's (`ufunc.resolve_dtypes(..., reduction=True)`; mean's float64
for integers and float32 for float16).

Units: on a GPU one unit holds the variants of one (Reduction, dtypes); on
the simulator, where the host compiler's start-up dominates, one unit holds
what a function (sum, mean, cumsum, ...) needs for every input dtype, and
functions that share kernels (mean, var, std; argmax, argmin) share it.
"""

import builtins as _b
import math
import re
import threading
import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from .. import _core
from .._core import DeviceArray
from . import codegen
from . import ufunc as _uf
from .table import ALIASES, DEVICE_TYPES, KINDS, OPS, REDUCTIONS, REORDERABLE, canonical

_NoValue = np._NoValue
_THREADS = 256
_MAX_GRID_X = 65535
_MAX_GRID_Y = 65535
_SMALL_R = 16  # rows this short take a thread each
_PER_THREAD = 64  # r is split between blocks only where each thread keeps this many
_WAVES = 2  # split r until the grid has this many waves of resident blocks (H200, 2^28
# float32 in one run: max 0.964x the copy with 4, 1.005x with 2; sum 1.009x and 1.028x; argmax
# 0.982x and 1.010x; 8 was slower still: gpu-logs/exp_red.py, 2026-11-29)
_VEC_MIN = 256  # rows at least this long load 16 bytes at a time where they can
_SHORT, _OUTPUTS = 4, 4  # PG_REDUCE_SHORT, PG_REDUCE_OUTPUTS in reduce.h
_ROWS_UNROLL = 4  # PG_REDUCE_ROWS_UNROLL
_SCAN_THREADS = 256  # PG_SCAN_THREADS in reduce.h
_SCAN_BYTES = 128  # PG_SCAN_BYTES: a thread's share of a tile (pg::scan_items)

_CHARS = tuple(dict.fromkeys(canonical(c) for c in DEVICE_TYPES))
_INEXACT = "".join(c for c in _CHARS if KINDS[c] in "fc")
_REAL = {c: canonical(np.dtype(c).type(0).real.dtype.char) for c in _CHARS if KINDS[c] == "c"}
_TAGS = codegen._TAGS

# The functions made of one op's reduction or scan: (template, the op whose loop
# NumPy picks, the Reduction); the nan* forms only for float and complex
# input (for the others they are the plain function), ufunc.reduce and
# ufunc.accumulate as "reduce:<op>" and "accumulate:<op>".
_OP_FUNCTIONS = {
    "sum": ("reduce", "add", "add"), "prod": ("reduce", "multiply", "multiply"),
    "max": ("reduce", "maximum", "maximum"), "min": ("reduce", "minimum", "minimum"),
    "any": ("reduce", "logical_or", "logical_or"),
    "all": ("reduce", "logical_and", "logical_and"),
    "nansum": ("reduce", "add", "nansum"), "nanprod": ("reduce", "multiply", "nanprod"),
    "nanmax": ("reduce", "fmax", "fmax"), "nanmin": ("reduce", "fmin", "fmin"),
    "cumsum": ("scan", "add", "add"), "cumprod": ("scan", "multiply", "multiply"),
    "nancumsum": ("scan", "add", "nansum"), "nancumprod": ("scan", "multiply", "nanprod"),
    **{f"reduce:{op}": ("reduce", op, op) for op in REORDERABLE},
    **{f"accumulate:{op}": ("scan", op, op) for op in REORDERABLE},
}


# ---- kernels ------------------------------------------------------------------

CUSTOM = {}  # name -> Reduction: the users' (custom.py's ReductionKernel), beside the table's


def _spec(name):
    """The Reduction of a name: the table's, or a user's (CUSTOM)."""
    spec = REDUCTIONS.get(name)
    return spec if spec is not None else CUSTOM[name]


def _acc_char(spec, loop):
    """The type character of a scalar accumulator (real for var's)."""
    return _REAL.get(loop, loop) if spec.acc == "real" else loop


def _itemsize(char):
    """The size of a type character's compute type (float for float16)."""
    return np.dtype("f" if char == "e" else char).itemsize


def _acc_size(spec, loop):
    """sizeof(A) on the device, for the buffer of partial results."""
    if spec.acc in ("T", "real"):
        return _itemsize(_acc_char(spec, loop))
    value = _itemsize(_REAL.get(loop, loop) if "real_of" in spec.acc else loop)
    return -(-value // 8) * 8 + 8  # {T v; long long i;}: pg::arg, pg::counted


def _functor(spec, loop):
    """The struct K that the kernel templates take: spec on the loop type."""
    acc_char = _acc_char(spec, loop)
    acc = codegen.compute(acc_char) if spec.acc in ("T", "real") else spec.acc
    m = "const T m = pg::aux_at<T>(aux, xo); " if re.search(r"\bm\b", spec.map) else ""
    return (f"struct K_{spec.name}_{_TAGS[loop]} {{\n"
            f"    typedef {codegen.compute(loop)} T;\n"
            f"    typedef {acc} A;\n"
            f"    PG_FN static A identity() {{ return {spec.identity_code()}; }}\n"
            "    template <class X>\n"
            "    PG_FN static A map(X x, long long r, const char *aux, long long xo)\n"
            f"    {{ {m}return {spec.map}; }}\n"
            "    PG_FN static A combine(A in0, A in1)\n"
            "    { typedef A T0; typedef A T1; typedef A R0; R0 out0; "
            f"{{ {spec.combine_code(acc_char)} }} return out0; }}\n"
            "    PG_FN static A next(A in0, A in1)\n"
            "    { typedef A T0; typedef A T1; typedef A R0; R0 out0; "
            f"{{ {spec.next or spec.combine_code(acc_char)} }} return out0; }}\n"
            f"    PG_FN static auto post(A a, double k) {{ return {spec.post}; }}\n"
            "};\n")


_PARAMS = {
    "reduce": ("const char *in, char *out, const char *aux, long long n_out, long long inner, "
               "long long R, long long sa, long long sb, long long sr, long long oa, "
               "long long ob, long long xa, long long xb, double k",
               "in, out, aux, n_out, inner, R, sa, sb, sr, oa, ob, xa, xb, k"),
    "scan": ("const char *in, char *out, const char *offsets, long long n_out, "
             "long long inner, long long R, long long chunk, long long sa, long long sb, "
             "long long sr, long long oa, long long ob, long long or_",
             "in, out, offsets, n_out, inner, R, chunk, sa, sb, sr, oa, ob, or_"),
    "scan_row": ("const char *in, char *out, char *state, char *values, long long R, "
                 "long long sr, long long or_", "in, out, state, values, R, sr, or_"),
}


def _name(kern):
    what, spec, ins, loop, outs = kern
    return (f"pg_{what}__{spec}__{_TAGS.get(ins, 'acc')}_{_TAGS[loop]}_"
            f"{_TAGS.get(outs, 'acc')}")


# Reductions whose input and loop type have at most 4 bytes (float32 sum, max,
# argmax, var; int32 counts) ask for 64 registers (4 blocks of 256 threads an
# SM): without the bound ptxas gives pg::reduce 96, two blocks an SM, and
# float32 max ran at 0.76x the copy on an H200. With it ptxas spills nothing
# for float32 and 8-12 bytes for int32 max; wider types spill hundreds of
# bytes at 64 and keep no bound.
_BOUNDS = f"__launch_bounds__({_THREADS}, 4) "


def _kernel(kern):
    what, spec, ins, loop, outs = kern
    storage_in = codegen.storage(ins) if ins else "char"
    storage_out = codegen.storage(outs) if outs else "char"
    bounds = _BOUNDS if (what.startswith("reduce") and _itemsize(loop) <= 4 and
                         (not ins or np.dtype(ins).itemsize <= 4)) else ""
    if what == "scan_row":
        params, args = _PARAMS[what]
        return (f'extern "C" __global__ void __launch_bounds__(PG_SCAN_THREADS, PG_SCAN_MINB) '
                f'{_name(kern)}({params})\n{{\n'
                f"    pg::scan_row<K_{spec}_{_TAGS[loop]}, {storage_in}, {storage_out}>"
                f"({args});\n}}\n")
    if what == "reduce_rows":  # pg::reduce_rows: whole short rows in a 16-byte load
        params, args = _PARAMS["reduce"]
        return (f'extern "C" __global__ void {bounds}{_name(kern)}({params})\n{{\n'
                f"    pg::reduce_rows<K_{spec}_{_TAGS[loop]}, {storage_in}, {storage_out}>"
                f"({args});\n}}\n")
    if what == "reduce_cols":  # pg::reduce_cols: 16 bytes of neighbouring outputs a load
        params, args = _PARAMS["reduce"]
        return (f'extern "C" __global__ void {bounds}{_name(kern)}({params})\n{{\n'
                f"    pg::reduce_cols<K_{spec}_{_TAGS[loop]}, {storage_in}, {storage_out}, "
                f"{'true' if outs else 'false'}>({args});\n}}\n")
    template = what.split("_")[0]  # "reduce_vec": pg::reduce loading 16 bytes at once
    params, args = _PARAMS[template]
    flags = ["true" if ins else "false", "true" if outs else "false"]
    if what == "reduce_vec":
        flags.append("true")
    return (f'extern "C" __global__ void {bounds}{_name(kern)}({params})\n{{\n'
            f"    pg::{template}<K_{spec}_{_TAGS[loop]}, {storage_in}, {storage_out}, "
            f"{', '.join(flags)}>({args});\n}}\n")


def render(kernels):
    """The CUDA C of a unit: each reduction struct once, then the kernels."""
    kernels = list(dict.fromkeys(kernels))
    functors = dict.fromkeys((k[1], k[3]) for k in kernels)
    preambles = dict.fromkeys(getattr(_spec(s), "preamble", "") for s, _ in functors)
    return "\n".join(["#include <pygpu/reduce.h>\n", *preambles] +  # a user's (custom.py)
                     [_functor(_spec(s), loop) for s, loop in functors] +
                     [_kernel(k) for k in kernels])


def _cols(ins, spec, loop):
    """Whether pg::reduce_cols takes an input of type ins: 4- and 8-byte
    elements (4 or 2 outputs a thread), accumulators of at most 16 bytes."""
    return np.dtype(ins).itemsize in (4, 8) and _acc_size(_spec(spec), loop) <= 16


def _variants(what, spec, ins, loop, outs):
    """The kernels one call of (what, spec, dtypes) may launch: a reduction
    whole, split (to partials) and final (partials to the output), the first
    two also loading 16 bytes at a time (for inputs of at most 8 bytes); a
    scan, the scan of chunk totals and the reduction that makes them."""
    if what == "reduce":
        vec = [("reduce_vec", spec, ins, loop, outs), ("reduce_vec", spec, ins, loop, "")] \
            if np.dtype(ins).itemsize <= 8 else []
        if _cols(ins, spec, loop):
            vec += [("reduce_cols", spec, ins, loop, outs), ("reduce_cols", spec, ins, loop, ""),
                    ("reduce_rows", spec, ins, loop, outs)]
        return [("reduce", spec, ins, loop, outs), ("reduce", spec, ins, loop, ""),
                ("reduce", spec, "", loop, outs), *vec]
    return [("scan", spec, ins, loop, outs), ("scan", spec, "", loop, ""),
            ("reduce", spec, ins, loop, ""), ("scan_row", spec, ins, loop, outs)]


_lock = threading.Lock()
_units = {}  # (device, a unit's kernels) -> RawModule
_functions = {}  # (device, kernel) -> Function
_unit_kernels = {}  # a unit's name -> the kernels it holds (simulator)


def _function(family, call, kern):
    """The kernel `kern` for the current device, one of the variants of `call`
    (what, Reduction, input, loop, output), compiled (or loaded from the
    caches) on first use: in a unit with the other variants on a GPU, with
    all that the unit of the function `family` holds on the simulator."""
    device = _core.get_device()
    f = _functions.get((device, kern))
    if f is not None:
        return f
    from ..rawkernel import RawModule

    group = tuple(_variants(*call))
    if _core._host_modules():
        unit = _UNIT_OF.get(family, family)
        if unit not in _unit_kernels:
            _unit_kernels[unit] = tuple(dict.fromkeys(
                k for t in _natural(unit) for k in _variants(*t)))
        if kern in _unit_kernels[unit]:
            group = _unit_kernels[unit]
    with _lock:
        unit = _units.get((device, group))
        if unit is None:
            unit = RawModule(render(group), options=codegen.OPTIONS, check=False)
            _units[(device, group)] = unit
    f = unit.get_function(_name(kern))
    _functions[(device, kern)] = f
    return f


# ---- dtype rules (NumPy's) -----------------------------------------------------

def _op_loop(opname, char, dtype=None, out_dtype=None):
    """The loop NumPy's opname.reduce (and .accumulate) runs on an input of type
    char: the accumulator's type character."""
    sig = {} if dtype is None else {"signature": (np.dtype(dtype), None, None)}
    d = OPS[opname].ufunc.resolve_dtypes((out_dtype, np.dtype(char), None), reduction=True,
                                         casting="unsafe", **sig)[0]
    if d.char not in DEVICE_TYPES:
        raise _uf._dtype_error(opname, d)
    return canonical(d.char)


def _mean_loop(char, dtype=None):
    """numpy.mean's accumulator: float64 for bool and integers, float32 for
    float16, else the input's type (or dtype)."""
    if dtype is not None:
        d = np.dtype(dtype)
        if d.char not in DEVICE_TYPES:
            raise _uf._dtype_error("mean", d)
        return canonical(d.char)
    return "d" if KINDS[char] in "biu" else "f" if char == "e" else char


def _real(char):
    return _REAL.get(char, char)


# On the simulator the functions that share kernels share a unit too.
_UNIT_FUNCTIONS = {"mean": ("mean", "var", "std"), "nanmean": ("nanmean", "nanvar", "nanstd"),
                   "argmax": ("argmax", "argmin"), "nanargmax": ("nanargmax", "nanargmin")}
_UNIT_OF = {**{f: u for u, fs in _UNIT_FUNCTIONS.items() for f in fs},
            "nanmax": "reduce:fmax", "nanmin": "reduce:fmin"}


def _natural(unit):
    """The kernels a unit holds on the simulator: those of its functions."""
    return [t for f in _UNIT_FUNCTIONS.get(unit, (unit,)) for t in _calls(f)]


def _calls(family):
    """What a function launches for each input type NumPy has a loop for:
    (template, Reduction, input, loop, output)."""
    out = []
    for c in _CHARS:
        if family.startswith("nan") and c not in _INEXACT:
            continue
        if family in _OP_FUNCTIONS:
            what, opname, spec = _OP_FUNCTIONS[family]
            try:
                loop = _op_loop(opname, c)
            except TypeError:
                continue
            out.append((what, spec, c, loop, loop))
        elif family == "count_nonzero":
            out.append(("reduce", "count_nonzero", c, "q", "q"))
        elif family in ("argmax", "argmin", "nanargmax", "nanargmin"):
            out.append(("reduce", family, c, c, "q"))
        elif family in ("mean", "nanmean"):
            loop = _mean_loop(c)
            out.append(("reduce", family, c, loop, "e" if c == "e" else loop))
        elif family in ("var", "std", "nanvar", "nanstd"):
            loop = _mean_loop(c)
            first = "nanmean" if family.startswith("nan") else "mean"
            out.append(("reduce", first, c, loop, _aux_char(loop)))
            out.append(("reduce", family, c, loop, "e" if c == "e" else _real(loop)))
    return out


def _aux_char(loop):
    """The type var's means are kept in: the loop's compute type."""
    return "f" if loop == "e" else loop


# ---- the view and the launches -----------------------------------------------------

def _pow2(n):
    return 1 << _b.max(0, int(n) - 1).bit_length()


def _fold(dims):
    """Neighbouring dims (n, stride, stride, ...) merged where every stride
    steps through both as through one."""
    out = []
    for d in dims:
        if out and _b.all(p == q * d[0] for p, q in zip(out[-1][1:], d[1:], strict=True)):
            out[-1] = (out[-1][0] * d[0], *d[1:])
        else:
            out.append(d)
    return out


def _folded(x, axes, ordered, kept_strides):
    """(kept dims, reduced dim) of x, or None where they do not fold to at most
    two and one. kept_strides: for each kept axis, the strides of the arrays
    written or read per output (output, aux)."""
    kept = [i for i in range(x.ndim) if i not in axes]
    k = [(x.shape[i], x.strides[i], *s) for i, s in zip(kept, kept_strides, strict=True)
         if x.shape[i] != 1]
    k = _fold(k)
    if len(k) > 2:
        k = _fold(sorted(k, key=lambda d: -abs(d[1])))
        if len(k) > 2:
            return None
    r = [(x.shape[i], x.strides[i]) for i in axes if x.shape[i] != 1]
    if not ordered:
        r = sorted(r, key=lambda d: -abs(d[1]))
    r = _fold(r)
    if len(r) > 1:
        return None
    return k, (r[0] if r else (1, 0))


def _view(x, axes, ordered, kept_strides, extra):
    """x (copied where its axes do not fold) and its folded view: two kept
    dims (n, stride in x, `extra` strides of the others) and the reduced
    (n, stride)."""
    v = _folded(x, axes, ordered, kept_strides)
    if v is None:
        kept = [i for i in range(x.ndim) if i not in axes]
        x = x.transpose(*kept, *axes).copy()
        axes = tuple(range(len(kept), x.ndim))
        v = _folded(x, axes, ordered, kept_strides)
    k, r = v
    if len(k) == 2 and abs(k[0][1]) < abs(k[1][1]):
        k = [k[1], k[0]]  # b: the kept axis with the smaller stride
    while len(k) < 2:
        k.insert(0, (1, 0) + (0,) * extra)
    return x, k, r


_sm_counts = {}


def _sm_count(device):
    n = _sm_counts.get(device.id)
    if n is None:
        n = _sm_counts[device.id] = device.multiprocessor_count
    return n


def _block(n_out, inner, R, sb, sr):
    """(TB, TR): outputs and threads along r of a block."""
    if inner > 1 and abs(sb) < abs(sr):  # b is the faster axis
        tb = _b.min(32, _pow2(inner))
        return tb, _b.min(_THREADS // tb, _pow2(R))
    if R <= _SMALL_R:
        return _b.min(_THREADS, _pow2(n_out)), 1
    tr = _b.min(_THREADS, _pow2(R))
    return _b.max(1, _b.min(_THREADS // tr, _pow2(n_out))), tr


def _splits(device, gx, R, tr, limit):
    """How many blocks split r."""
    want = _WAVES * _sm_count(device) * (2048 // _THREADS)
    if gx >= want or R < 2 * tr * _PER_THREAD:
        return 1
    return _b.max(1, _b.min(-(-want // gx), R // (tr * _PER_THREAD), limit))


def _grid(n_out, tb):
    return _b.min(-(-n_out // tb), _MAX_GRID_X)


def _go(trace, launch, *args):
    """Launch, and note the launch in trace (a list) where one is kept."""
    launch(*args)
    if trace is not None:
        trace.append((launch, args))


def _reduce(family, spec, x, axes, loop, outc, result, *, ordered=False, aux=None, k=0.0,
            trace=None):
    """result[...] = spec reduced over axes of x (result: the kept axes' shape,
    dtype outc); aux: an array laid out like result that map reads (var's
    means); ordered: the reduced axes keep their order (argmax's indices)."""
    if result.size and _b.any(x.shape[i] == 0 for i in axes):
        # nothing to reduce: each output is the identity, posted (a
        # ReductionKernel's), from a stand-in whose axes fold
        x = _core.empty((*(n for i, n in enumerate(x.shape) if i not in axes), 0), x.dtype)
        axes = (x.ndim - 1,)
    kept = [i for i in range(x.ndim) if i not in axes]
    strides = [(result.strides[j], aux.strides[j] if aux is not None else 0)
               for j in range(len(kept))]
    x, ((na, sa, oa, xa), (nb, sb, ob, xb)), (R, sr) = _view(x, axes, ordered, strides, 2)
    n_out = na * nb
    if n_out == 0:
        return result
    call = ("reduce", spec, canonical(x.dtype.char), loop, outc)
    size = x.itemsize
    v = 16 // size
    if (outc and na == 1 and 2 <= R <= _SHORT and R * size in (8, 16) and sr == size and
            sb == R * size and x.ptr % 16 == 0 and (n_out * R) % v == 0 and
            _cols(call[2], spec, loop)):
        # short rows back to back: 16 bytes hold v // R whole rows
        packs = n_out * R // v
        f = _function(family, call, ("reduce_rows", *call[1:]))
        grid = (_b.min(-(-packs // (_THREADS * _ROWS_UNROLL)), _MAX_GRID_X), 1)
        _go(trace, f[grid, (_THREADS, 1)], x, result, aux if aux is not None else x, n_out, nb,
            R, sa, sb, sr, oa, ob, xa, xb, np.float64(k))
        return result
    if (R > _SMALL_R and nb > 1 and sb == size and abs(sb) < abs(sr) and nb % v == 0 and
            x.ptr % 16 == 0 and sr % 16 == 0 and (na == 1 or sa % 16 == 0) and
            _cols(call[2], spec, loop)):
        # outputs side by side, rows aligned: a thread loads 16 bytes of v outputs
        first = "reduce_cols"
        tb = _b.min(32, _pow2(nb // v))
        tr = _THREADS // tb
        gx = _grid(n_out // v, tb)
    else:
        tb, tr = _block(n_out, nb, R, sb, sr)
        # short rows, a thread each: PG_REDUCE_OUTPUTS outputs a thread (reduce.h)
        gx = _grid(n_out, tb * (_OUTPUTS if tr == 1 and R <= _SHORT else 1))
        # rows contiguous and 16-byte aligned: the threads load 16 bytes at once
        first = "reduce_vec" if (sr == size and size <= 8 and tr > 1 and R >= _VEC_MIN and
                                 x.ptr % 16 == 0 and (na == 1 or sa % 16 == 0) and
                                 (nb == 1 or sb % 16 == 0)) else "reduce"
    # (a thread of reduce_cols loads v elements a row: its share of r counts
    # rows, _PER_THREAD // v of them; (n/64, 4).max(axis=0) of 2^24 float32
    # had 256 blocks, 2 an SM, and read at 0.47x the copy on an H200)
    gy = _splits(x.device, gx, R * v if first == "reduce_cols" else R, tr, _MAX_GRID_Y)
    auxp = aux if aux is not None else x
    k = np.float64(k)
    if gy == 1:
        f = _function(family, call, (first, *call[1:]))
        _go(trace, f[(gx, 1), (tb, tr)], x, result, auxp, n_out, nb, R, sa, sb, sr, oa, ob,
            xa, xb, k)
        return result
    # partials [n_out, gy] of the accumulator, then reduced along gy
    part = _core.empty((n_out * gy * _acc_size(_spec(spec), loop),), np.uint8)
    f = _function(family, call, (first, *call[1:4], ""))
    _go(trace, f[(gx, gy), (tb, tr)], x, part, auxp, n_out, nb, R, sa, sb, sr, nb, 1, xa, xb,
        k)
    tb, tr = _block(n_out, nb, gy, gy, 1)
    f = _function(family, call, call[:2] + ("",) + call[3:])
    _go(trace, f[(_grid(n_out, tb), 1), (tb, tr)], part, result, auxp, n_out, nb, gy, nb * gy,
        gy, 1, oa, ob, xa, xb, k)
    return result


def _scan(family, spec, x, axis, loop, result, trace=None):
    """result[...] = the inclusive scan of x along axis by spec (result: x's
    shape, dtype loop or another); trace as _reduce's (a buffer that must
    start zeroed is noted as (_ZEROED, (buffer,)))."""
    kept = [i for i in range(x.ndim) if i != axis]
    strides = [(result.strides[i],) for i in kept]
    x, ((na, sa, oa), (nb, sb, ob)), (R, sr) = _view(x, (axis,), True, strides, 1)
    so = result.strides[axis]
    n_out = na * nb
    if n_out == 0 or R == 0:
        return result
    call = ("scan", spec, canonical(x.dtype.char), loop, canonical(result.dtype.char))
    acc = _acc_size(_spec(spec), loop)
    tile = _SCAN_THREADS * (_SCAN_BYTES // (4 if acc <= 4 else 8 if acc <= 8 else 16))
    if n_out == 1 and R > tile:
        # one long row: one pass, the tiles chained by decoupled look-back
        tiles = -(-R // tile)
        # (pg::scan_row's state: flags and values in one word each where A fits 4 bytes)
        state = _core.zeros((8 + (8 if acc <= 4 else 4) * tiles,), np.uint8)
        if trace is not None:
            trace.append((_ZEROED, (state,)))
        values = state if acc <= 4 else _core.empty((2 * tiles * acc,), np.uint8)
        f = _function(family, call, ("scan_row", *call[1:]))
        _go(trace, f[(tiles, 1), (_SCAN_THREADS, 1)], x, result, state, values, R, sr, so)
        return result
    tb, tr = _block(n_out, nb, R, sb, sr)
    gx = _grid(n_out, tb)
    # long rows with few outputs: chunks of r, each started by the totals of
    # the chunks before it (outputs and chunks must fit the kernel's two axes)
    nc = _splits(x.device, gx, R, tr, _MAX_GRID_Y) if na == 1 or nb == 1 else 1
    chunk = R
    if nc > 1:
        chunk = -(-R // nc)
        chunk = -(-chunk // tr) * tr
        nc = -(-R // chunk)
    offsets = x
    if nc > 1:
        m = nc - 1  # the totals of all chunks but the last
        offsets = _core.empty((n_out * m * _acc_size(_spec(spec), loop),), np.uint8)
        if nb == 1:  # (output along a, chunk) -> totals[o * m + c]
            n2, inner2, sa2, sb2, oa2, ob2 = n_out * m, m, sa, chunk * sr, m, 1
        else:  # (chunk, output along b)
            n2, inner2, sa2, sb2, oa2, ob2 = n_out * m, nb, chunk * sr, sb, 1, m
        tb2, tr2 = _block(n2, inner2, chunk, sb2, sr)
        f = _function(family, call, ("reduce", spec, call[2], loop, ""))
        _go(trace, f[(_grid(n2, tb2), 1), (tb2, tr2)], x, offsets, x, n2, inner2, chunk, sa2,
            sb2, sr, oa2, ob2, 0, 0, np.float64(0))
        tb2, tr2 = _block(n_out, 1, m, 0, 1)
        f = _function(family, call, ("scan", spec, "", loop, ""))
        _go(trace, f[(_grid(n_out, tb2), 1), (tb2, tr2)], offsets, offsets, offsets, n_out, 1,
            m, m, m, 0, 1, m, 0, 1)
    f = _function(family, call, call)
    _go(trace, f[(gx, nc), (tb, tr)], x, result, offsets, n_out, nb, R, chunk, sa, sb, sr, oa,
        ob, so)
    return result


# ---- arguments ----------------------------------------------------------------------

def _array(name, a):
    if isinstance(a, DeviceArray):
        return a
    if isinstance(a, np.ndarray):
        raise _uf._host_array_error(name, a)
    raise TypeError(f"{name}: pygpu reduces DeviceArrays, not {type(a).__name__}")


def _check_out(name, out):
    if out is None:
        return None
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(f"{name}: out must be one array")
        out = out[0]
        if out is None:
            return None
    if not isinstance(out, DeviceArray):
        if isinstance(out, np.ndarray):
            raise _uf._host_array_error(name, out)
        raise TypeError(f"{name}: out must be a pygpu.DeviceArray, not {type(out).__name__}")
    if not out.flags["WRITEABLE"]:
        raise ValueError("output array is read-only")
    return out


def _where_arg(name, where, x):
    """where as True, False or a bool DeviceArray that broadcasts to x."""
    if where is True or where is False:
        return where
    if isinstance(where, np.bool_):
        return bool(where)
    if not isinstance(where, DeviceArray):
        if isinstance(where, np.ndarray):
            raise _uf._host_array_error(name, where)
        raise TypeError(f"{name}: where must be a bool DeviceArray or a bool, not "
                        f"{type(where).__name__}")
    if where.dtype != np.bool_:
        raise TypeError(f"{name}: where must be of dtype bool, not {where.dtype}")
    if np.broadcast_shapes(where.shape, x.shape) != x.shape:
        raise ValueError(f"{name}: where of shape {where.shape} does not broadcast to the "
                         f"array's shape {x.shape}")
    return where


def _standin(x):
    """A host array like x with each axis cut to one element (all of x if it is
    empty): what NumPy is asked about dtypes, axes and arguments."""
    if x.size == 0:
        return np.zeros(x.shape, x.dtype)
    return np.ones(tuple(_b.min(n, 1) for n in x.shape), x.dtype)


_answers = {}  # what _ask_numpy was asked -> NumPy's dtype
_MAX_ANSWERS = 4096


def _typed(v):
    if type(v) in (tuple, list):
        return type(v), tuple(_typed(i) for i in v)
    return type(v), v


def _ask_numpy(np_func, x, out, **kwargs):
    """NumPy's answer on x's stand-in: its dtype (and its errors), kept for
    the next call that asks the same."""
    standin = _standin(x)
    # each argument with its type: True == 1 == 1.0, and axis=True, axis=1.0
    # are errors where axis=1 is not
    key = (np_func, standin.dtype, standin.shape, out.dtype if out is not None else None,
           tuple(sorted((k, _typed(v)) for k, v in kwargs.items())))
    try:
        return _answers[key]
    except TypeError:  # an argument that is not hashable: ask every time
        key = None
    except KeyError:
        pass
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        r = np.asarray(np_func(standin, **kwargs))
        if out is not None:  # NumPy's casting rules for out=
            np_func(standin, out=np.empty(r.shape, out.dtype), **kwargs)
    if key is not None:
        if len(_answers) >= _MAX_ANSWERS:
            _answers.clear()
        _answers[key] = r.dtype
    return r.dtype


def _host_answer(np_func, x, out, where=True, **kwargs):
    """An empty input's answer: NumPy's, on an empty host array."""
    if isinstance(where, DeviceArray):
        kwargs["where"] = where.copy_to_host()
    elif where is not True:
        kwargs["where"] = where
    r = np.asarray(np_func(np.zeros(x.shape, x.dtype), **kwargs))
    if out is not None:
        _check_out_shape(np_func.__name__, out, r.shape)
        out[...] = _core.asarray(r) if r.size else out
        return out
    return _core.asarray(r)


def _check_out_shape(name, out, shape):
    if out.shape != tuple(shape):
        raise ValueError(f"{name}: out has shape {out.shape}; the result's shape is "
                         f"{tuple(shape)}")


def _axis_of(a, axis):
    """axis, but None for axis 0 (or -1) of a 0-d array, which NumPy's
    reductions (ufunc.reduce, count_nonzero, argmax, cumsum) take as all of
    it."""
    return None if a.ndim == 0 and type(axis) is int and axis in (0, -1) else axis


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(normalize_axis_tuple(axis, ndim)))


def _shapes(x, axes, keepdims):
    kept = tuple(n for i, n in enumerate(x.shape) if i not in axes)
    full = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    return kept, (full if keepdims else kept)


def _result(out, shape, dtype, x):
    """Where the kernel writes: out itself when it is C-contiguous of dtype and
    does not overlap the input x, else a new array."""
    if out is not None and out.dtype == dtype and out.flags["C_CONTIGUOUS"] and \
            not _uf._unsafe_overlap(out, x):
        return out.reshape(shape)
    return _core.empty(shape, dtype)


def _finish(res, out, shape):
    """res as the caller's shape, written into out where given."""
    res = res.reshape(shape)
    if out is None:
        return res
    if res.ptr != out.ptr or res.dtype != out.dtype:
        out[...] = res
    return out


# ---- ufunc.reduce and the functions made of it ------------------------------------

def _op_name(name):
    name = ALIASES.get(name, name)
    if name not in OPS:
        raise TypeError(f"pygpu: there is no ufunc {name!r}")
    if name not in REORDERABLE:
        raise TypeError(f"pygpu: {name}.reduce and {name}.accumulate are not supported "
                        f"(pygpu reduces in parallel, which only {', '.join(REORDERABLE)} "
                        "allow)")
    return name


def _fill_value(opname, loop, initial):
    """What a masked element is replaced by: the op's identity, else initial."""
    identity = OPS[opname].ufunc.identity
    value = identity if identity is not None else initial
    return np.array(value).astype(np.dtype(loop))[()]


def _op_reduce(family, np_func, a, axis, dtype, out, keepdims, initial, where):
    """A function of _OP_FUNCTIONS (a reduce) with NumPy's arguments."""
    _, opname, spec = _OP_FUNCTIONS[family]
    if initial is None:  # NumPy's reduce: None is no initial value
        initial = _NoValue
    key = None
    if out is None and initial is _NoValue and where is True:
        key, plan = _plan_for(family, a, axis, dtype, keepdims)
        if plan is not None:
            return plan(a)
    fname = family if ":" not in family else f"{opname}.reduce"
    a = _array(fname, a)
    axis = _axis_of(a, axis)
    out = _check_out(fname, out)
    masked = where is not True  # numpy.True_ too: NumPy's where array, all True
    where = _where_arg(fname, where, a)
    kwargs = {"axis": axis, "keepdims": keepdims}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if initial is not _NoValue:
        kwargs["initial"] = initial
    if a.size == 0:
        return _host_answer(np_func, a, out, where, **kwargs)
    rdt = _ask_numpy(np_func, a, out, **kwargs)
    if rdt.char not in DEVICE_TYPES:
        raise _uf._dtype_error(fname, rdt)
    axes = _axes(axis, a.ndim)
    loop = _op_loop(opname, a.dtype.char, dtype, out.dtype if out is not None else None)
    if masked and OPS[opname].ufunc.identity is None and initial is _NoValue:
        raise ValueError(f"reduction operation '{opname}' does not have an identity, so to "
                         "use a where mask one has to specify 'initial'")
    kept, shape = _shapes(a, axes, keepdims)
    if out is not None:
        _check_out_shape(fname, out, shape)
    with a.device:
        x = a
        if where is not True:
            fill = _fill_value(opname, loop, initial)
            if spec.startswith("nan") or spec in ("fmax", "fmin"):
                fill = np.array(np.nan).astype(np.dtype(loop))[()] \
                    if KINDS[loop] in "fc" else fill
            xs = x if x.dtype == np.dtype(loop) else x.astype(loop)
            x = _uf.where(where, xs, fill) if where is not False else \
                _core.full(x.shape, fill, dtype=np.dtype(loop))
        res = _result(out if initial is _NoValue else None, kept, np.dtype(loop), a)
        trace = [] if key is not None else None
        _reduce(family, spec, x, axes, loop, canonical(loop), res, trace=trace)
        if trace:
            _keep_plan(key, a, res, trace, rdt, shape)
        if initial is not _NoValue:
            _uf.call(OPS[opname], (res, np.array(initial, dtype=np.dtype(loop))[()]),
                     out=(res,))
        if res.dtype != rdt and out is None:
            res = res.astype(rdt)
        return _finish(res, out, shape)


# ---- the fast path: a plan per kind of call ------------------------------------------
# What _op_reduce works out for one kind of call (NumPy's dtypes, the view, the
# kernels and their launch configurations) is kept, keyed by the input's
# dtype, shape, strides and device and the call's arguments, so that the next
# such call only allocates its result (and partials) and launches. Kept only
# where the kernels read the input itself (not a copy or a view that starts
# elsewhere), as the trace of _reduce's launches says.

_plans = {}
_core._set_reduction_plans(_plans)  # d.sum(), d.max(), ... replay them in C
_MAX_PLANS = 4096


def _plain_args(axis, *args):
    """Whether a call's arguments are of the types that key a plan: a key
    compares them with ==, and True == 1 == 1.0 == numpy.True_, so that
    sum(dtype=True) would find sum(dtype=numpy.True_)'s plan and answer where
    NumPy raises (axis=0.0, axis=True likewise; axis=[0], which NumPy
    refuses, would find axis=(0,)'s)."""
    if not (axis is None or type(axis) is int or
            type(axis) is tuple and _b.all(type(i) is int for i in axis)):
        return False
    return _b.all(v is None or type(v) in (bool, str, np.dtype) or isinstance(v, type)
                  for v in args)


def _plan_for(family, a, axis, *args):
    """(the key of this kind of call, its plan or None); (None, None) where
    the call has no key (a is not a DeviceArray, an argument is unhashable)."""
    if type(a) is not DeviceArray or not _plain_args(axis, *args):
        return None, None
    # the address's place in 16 bytes: kernels that load 16 bytes at once
    # (reduce_vec, reduce_cols, reduce_rows) are chosen by it
    key = (family, a.dtype, a.shape, a.strides, a.device.id, a.ptr % 16,
           axis, *args)
    try:
        plan = _plans.get(key)
    except TypeError:
        return None, None
    if plan is not None and _core.get_device() == plan[0]:
        return key, plan[1]
    return key, None


_ZEROED = object()  # a trace's note that a buffer must start zeroed (_scan's)


def _keep_plan(key, a, res, trace, rdt, shape):
    parts = {}
    steps = []
    zeroed = {id(args[0]) for launch, args in trace if launch is _ZEROED}
    for launch, args in trace:
        if launch is _ZEROED:
            continue
        slots = []
        for v in args:
            if isinstance(v, DeviceArray):
                if v is res:
                    slots.append(("res", None))
                elif v.ptr == a.ptr and v.dtype == a.dtype:
                    slots.append(("in", None))
                elif v.dtype == np.uint8 and v.ndim == 1 and v is not a:
                    parts.setdefault(id(v), (len(parts), v.shape, id(v) in zeroed))
                    slots.append(("part", parts[id(v)][0]))
                else:
                    return  # a copy of the input, or another array: not kept
            else:
                slots.append(("value", v))
        steps.append((launch, slots))
    if len(_plans) >= _MAX_PLANS:
        _plans.clear()
    part_shapes = [(s, z) for _, s, z in sorted(parts.values())]
    res_shape, res_dtype = res.shape, res.dtype
    empty, zeros = _core.empty, _core.zeros
    # each launch's arguments as a list to copy, with the places of the input,
    # the result and the partials to fill in
    filled = [(launch, [v if kind == "value" else None for kind, v in slots],
               [i for i, (kind, _) in enumerate(slots) if kind == "in"],
               [i for i, (kind, _) in enumerate(slots) if kind == "res"],
               [(i, v) for i, (kind, v) in enumerate(slots) if kind == "part"])
              for launch, slots in steps]
    cast = res_dtype != rdt
    same_shape = tuple(res_shape) == tuple(shape)

    def run(x):
        r = empty(res_shape, res_dtype)
        ps = [(zeros if z else empty)(s, np.uint8) for s, z in part_shapes]
        for launch, args, ins, ress, partials in filled:
            args = args.copy()
            for i in ins:
                args[i] = x
            for i in ress:
                args[i] = r
            for i, v in partials:
                args[i] = ps[v]
            launch(*args)
        if cast:
            r = r.astype(rdt)
        return r if same_shape else r.reshape(shape)

    _plans[key] = (_core.get_device(), run)


def reduce(ufunc, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NoValue,
           where=True):
    """numpy.<ufunc>.reduce on a DeviceArray: ufunc is the op's name ("add",
    "maximum", ...). The default axis is 0, as NumPy's."""
    opname = _op_name(ufunc)
    np_func = getattr(np, opname).reduce
    return _op_reduce(f"reduce:{opname}", np_func, array, axis, dtype, out, keepdims, initial,
                      where)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """numpy.sum on the device: a 0-d DeviceArray for axis=None."""
    return _op_reduce("sum", np.sum, a, axis, dtype, out, keepdims, initial, where)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """numpy.prod on the device."""
    return _op_reduce("prod", np.prod, a, axis, dtype, out, keepdims, initial, where)


def max(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """numpy.max on the device (NaN propagates)."""
    return _op_reduce("max", np.max, a, axis, None, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """numpy.min on the device (NaN propagates)."""
    return _op_reduce("min", np.min, a, axis, None, out, keepdims, initial, where)


amax = max
amin = min


def any(a, axis=None, out=None, keepdims=False, *, where=True):
    """numpy.any on the device."""
    return _op_reduce("any", np.any, a, axis, None, out, keepdims, _NoValue, where)


def all(a, axis=None, out=None, keepdims=False, *, where=True):
    """numpy.all on the device."""
    return _op_reduce("all", np.all, a, axis, None, out, keepdims, _NoValue, where)


def _inexact(a):
    return isinstance(a, DeviceArray) and a.dtype.char in _INEXACT


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """numpy.nansum on the device: NaNs count as zero."""
    if not _inexact(a):
        return sum(a, axis, dtype, out, keepdims, initial, where)
    return _op_reduce("nansum", np.nansum, a, axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """numpy.nanprod on the device: NaNs count as one."""
    if not _inexact(a):
        return prod(a, axis, dtype, out, keepdims, initial, where)
    return _op_reduce("nanprod", np.nanprod, a, axis, dtype, out, keepdims, initial, where)


def nanmax(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """numpy.nanmax on the device: NaNs are skipped; NaN for an all-NaN slice
    (without NumPy's warning)."""
    if not _inexact(a):
        return max(a, axis, out, keepdims, initial, where)
    return _op_reduce("nanmax", np.nanmax, a, axis, None, out, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """numpy.nanmin on the device: NaNs are skipped."""
    if not _inexact(a):
        return min(a, axis, out, keepdims, initial, where)
    return _op_reduce("nanmin", np.nanmin, a, axis, None, out, keepdims, initial, where)


def count_nonzero(a, axis=None, *, keepdims=False):
    """numpy.count_nonzero on the device: an int64 DeviceArray (0-d for
    axis=None, where NumPy gives a Python int)."""
    a = _array("count_nonzero", a)
    axis = _axis_of(a, axis)
    if a.size == 0:
        return _core.asarray(np.asarray(np.count_nonzero(np.zeros(a.shape, a.dtype), axis=axis,
                                                         keepdims=keepdims), dtype=np.int64))
    _ask_numpy(np.count_nonzero, a, None, axis=axis, keepdims=keepdims)
    axes = _axes(axis, a.ndim)
    kept, shape = _shapes(a, axes, keepdims)
    with a.device:
        res = _core.empty(kept, np.int64)
        _reduce("count_nonzero", "count_nonzero", a, axes, "q", "q", res)
        return res.reshape(shape)


def ptp(a, axis=None, out=None, keepdims=False):
    """numpy.ptp on the device: max - min."""
    a = _array("ptp", a)
    out = _check_out("ptp", out)
    if a.size == 0:
        return _host_answer(np.ptp, a, out, axis=axis, keepdims=keepdims)
    # as NumPy's: the maximum into out (in out's dtype), less the minimum
    hi = max(a, axis, out, keepdims)
    lo = min(a, axis, None, keepdims)
    return _uf.call(OPS["subtract"], (hi, lo), out=None if out is None else (out,))


# ---- arg reductions ------------------------------------------------------------------

def _arg(family, fname, np_func, a, axis, out, keepdims):
    key = None
    if out is None:
        key, plan = _plan_for(family, a, axis, keepdims)
        if plan is not None:
            return plan(a)
    a = _array(fname, a)
    axis = _axis_of(a, axis)
    out = _check_out(fname, out)
    if a.size == 0:
        return _host_answer(np_func, a, out, axis=axis, keepdims=keepdims)
    _ask_numpy(np_func, a, out, axis=axis, keepdims=keepdims)  # out's dtype too
    if axis is None:
        x = a if a.flags["C_CONTIGUOUS"] else a.copy()
        x = x.reshape(-1)
        axes = (0,)
        shape = (1,) * a.ndim if keepdims else ()
    else:
        axes = (normalize_axis_index(axis, a.ndim),)
        x = a
        shape = _shapes(a, axes, keepdims)[1]
    if out is not None:
        _check_out_shape(fname, out, shape)
    kept = _shapes(x, axes, False)[0]
    c = canonical(a.dtype.char)
    with a.device:
        res = _result(out, kept, np.dtype(np.int64), a)
        trace = [] if key is not None else None
        _reduce(family, family, x, axes, c, "q", res, ordered=True, trace=trace)
        if trace:
            _keep_plan(key, a, res, trace, res.dtype, shape)
        return _finish(res, out, shape)


def argmax(a, axis=None, out=None, *, keepdims=False):
    """numpy.argmax on the device: the first maximum's index (a NaN's, the first,
    where there is one)."""
    return _arg("argmax", "argmax", np.argmax, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """numpy.argmin on the device."""
    return _arg("argmin", "argmin", np.argmin, a, axis, out, keepdims)


def _nanarg(family, fname, np_func, plain, a, axis, out, keepdims):
    if not _inexact(a):
        return plain(a, axis, out, keepdims=keepdims)
    res = _arg(family, fname, np_func, a, axis, out, keepdims)
    if res.size and bool(any(res == -1)):
        raise ValueError("All-NaN slice encountered")
    return res


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """numpy.nanargmax on the device: NaNs are skipped; an all-NaN slice raises
    NumPy's ValueError."""
    return _nanarg("nanargmax", "nanargmax", np.nanargmax, argmax, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """numpy.nanargmin on the device."""
    return _nanarg("nanargmin", "nanargmin", np.nanargmin, argmin, a, axis, out, keepdims)


# ---- mean, var, std ------------------------------------------------------------------------

def _counts(where, x, axes):
    """How many elements of x each output has under the mask where."""
    full = where.reshape((1,) * (x.ndim - where.ndim) + where.shape)
    cnt = count_nonzero(full, axis=axes)
    factor = math.prod(x.shape[i] for i in axes if full.shape[i] == 1)
    if factor != 1:
        cnt = _uf.call(OPS["multiply"], (cnt, factor))
    return cnt.reshape(tuple(n for i, n in enumerate(full.shape) if i not in axes))


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """numpy.mean on the device: float64 for integers, float32 accumulation for
    float16."""
    return _mean("mean", "mean", np.mean, a, axis, dtype, out, keepdims, where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """numpy.nanmean on the device: the mean of the numbers that are not NaN
    (NaN, without NumPy's warning, where there are none)."""
    if not _inexact(a):
        return mean(a, axis, dtype, out, keepdims, where=where)
    return _mean("nanmean", "nanmean", np.nanmean, a, axis, dtype, out, keepdims, where)


def _mean(family, fname, np_func, a, axis, dtype, out, keepdims, where):
    key = None
    if out is None and where is True:
        key, plan = _plan_for(family, a, axis, dtype, keepdims)
        if plan is not None:
            return plan(a)
    a = _array(fname, a)
    out = _check_out(fname, out)
    where = _where_arg(fname, where, a)
    kwargs = {"axis": axis, "keepdims": keepdims}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if a.size == 0:
        return _host_answer(np_func, a, out, where, **kwargs)
    rdt = _ask_numpy(np_func, a, out, **kwargs)
    if rdt.char not in DEVICE_TYPES:
        raise _uf._dtype_error(fname, rdt)
    axes = _axes(axis, a.ndim)
    kept, shape = _shapes(a, axes, keepdims)
    if out is not None:
        _check_out_shape(fname, out, shape)
    loop = _mean_loop(canonical(a.dtype.char), dtype)
    outc = canonical(rdt.char)
    with a.device:
        if where is True:
            res = _result(out, kept, rdt, a)
            trace = [] if key is not None else None
            _reduce(family, family, a, axes, loop, outc, res,
                    k=math.prod(a.shape[i] for i in axes), trace=trace)
            if trace:
                _keep_plan(key, a, res, trace, rdt, shape)
            return _finish(res, out, shape)
        if family == "nanmean":  # masked elements are NaNs, which nanmean skips
            fill = np.array(np.nan).astype(np.dtype(loop))[()]
            x = _masked(a, where, loop, fill)
            res = _result(out, kept, rdt, a)
            _reduce(family, family, x, axes, loop, outc, res)
            return _finish(res, out, shape)
        x = _masked(a, where, loop, np.zeros((), np.dtype(loop))[()])
        total = _core.empty(kept, np.dtype(loop))
        _reduce("sum", "add", x, axes, loop, loop, total)
        cnt = _counts(where, a, axes) if where is not False else 0
        _uf.call(OPS["divide"], (total, cnt), out=(total,), casting="unsafe")
        res = total if total.dtype == rdt else total.astype(rdt)
        return _finish(res, out, shape)


def _masked(a, where, loop, fill):
    xs = a if a.dtype == np.dtype(loop) else a.astype(loop)
    if where is False:
        return _core.full(a.shape, fill, dtype=np.dtype(loop))
    return _uf.where(where, xs, fill)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=_NoValue, correction=_NoValue):
    """numpy.var on the device, two passes (the mean, then the squared
    deviations); real for complex input."""
    return _var("var", np.var, a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=_NoValue, correction=_NoValue):
    """numpy.std on the device: the square root of var."""
    return _var("std", np.std, a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=_NoValue, correction=_NoValue):
    """numpy.nanvar on the device: NaNs are skipped; NaN where ddof leaves no
    degrees of freedom."""
    if not _inexact(a):
        return var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                   correction=correction)
    return _var("nanvar", np.nanvar, a, axis, dtype, out, ddof, keepdims, where, mean,
                correction)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=_NoValue, correction=_NoValue):
    """numpy.nanstd on the device."""
    if not _inexact(a):
        return std(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                   correction=correction)
    return _var("nanstd", np.nanstd, a, axis, dtype, out, ddof, keepdims, where, mean,
                correction)


def _var(family, np_func, a, axis, dtype, out, ddof, keepdims, where, mean_, correction):
    fname = np_func.__name__
    a = _array(fname, a)
    out = _check_out(fname, out)
    where = _where_arg(fname, where, a)
    if mean_ is not _NoValue and where is not True:
        raise TypeError(f"pygpu: {fname} with both mean= and where= is not supported yet")
    if correction is not _NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    kwargs = {"axis": axis, "keepdims": keepdims, "ddof": ddof}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if a.size == 0:
        if mean_ is not _NoValue:
            kwargs["mean"] = mean_.copy_to_host() if isinstance(mean_, DeviceArray) else mean_
        return _host_answer(np_func, a, out, where, **kwargs)
    centred = None
    if mean_ is not _NoValue:
        # NumPy's var(a, mean=m) is the mean of |a - m|^2: a - m on the device
        # (NumPy's broadcast and dtype), then var of that about zero
        with a.device:
            if family.startswith("nan"):  # NumPy subtracts into a copy of a: a's dtype
                centred = _uf.call(OPS["subtract"], (a, mean_),
                                   out=(_core.empty(a.shape, a.dtype),), casting="unsafe")
            else:
                centred = _uf.call(OPS["subtract"], (a, mean_))
        if centred is NotImplemented:
            raise TypeError(f"{fname}: mean must be a DeviceArray or a number, not "
                            f"{type(mean_).__name__}")
        if centred.shape != a.shape:
            raise ValueError(f"{fname}: mean of shape {np.shape(mean_)} broadcasts the "
                             f"array of shape {a.shape} to {centred.shape}")
    rdt = _ask_numpy(np_func, a if centred is None else centred, out,
                     **{**kwargs, "ddof": 0})
    if rdt.char not in DEVICE_TYPES:
        raise _uf._dtype_error(fname, rdt)
    axes = _axes(axis, a.ndim)
    kept, shape = _shapes(a, axes, keepdims)
    if out is not None:
        _check_out_shape(fname, out, shape)
    if centred is not None:
        a = centred
    loop = _mean_loop(canonical(a.dtype.char), dtype)
    outc = canonical(rdt.char)
    nan = family.startswith("nan")
    first = "nanmean" if nan else "mean"
    count = math.prod(a.shape[i] for i in axes)
    with a.device:
        x = a
        if where is not True and nan:
            x = _masked(a, where, loop, np.array(np.nan).astype(np.dtype(loop))[()])
        elif where is not True:
            return _var_where(family, a, axes, loop, rdt, ddof, where, out, kept, shape)
        if not nan and count - ddof <= 0:
            warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
        if centred is not None:  # about the given mean: a - mean, about zero
            m = _core.zeros(kept, np.dtype(_aux_char(loop)))
        else:
            m = _core.empty(kept, np.dtype(_aux_char(loop)))
            _reduce(family, first, x, axes, loop, _aux_char(loop), m, k=count)
        res = _result(out, kept, rdt, a)
        k = ddof if nan else _b.max(count - ddof, 0)
        _reduce(family, family, x, axes, loop, outc, res, aux=m, k=k)
        return _finish(res, out, shape)


def _var_where(family, a, axes, loop, rdt, ddof, where, out, kept, shape):
    """var and std under a where mask: the masked elements are replaced by
    their output's mean, so that they add nothing; then divided by the
    mask's counts."""
    full = tuple(1 if i in axes else n for i, n in enumerate(a.shape))
    m = mean(a, axis=axes, dtype=np.dtype(_aux_char(loop)), keepdims=True, where=where)
    xs = a if a.dtype == np.dtype(loop) else a.astype(loop)
    x = _uf.where(where, xs, m) if where is not False else \
        _core.full(a.shape, 0, dtype=np.dtype(loop))
    sq = _core.empty(kept, np.dtype(_real(_aux_char(loop))))
    _reduce("var_where", "var", x, axes, loop, canonical(sq.dtype.char), sq,
            aux=m.reshape(kept), k=1.0)
    cnt = _counts(where, a, axes) if where is not False else _core.zeros(kept, np.int64)
    dof = _uf.call(OPS["maximum"], (_uf.call(OPS["subtract"], (cnt, ddof)), 0))
    _uf.call(OPS["divide"], (sq, dof), out=(sq,), casting="unsafe")
    if family == "std":
        _uf.call(OPS["sqrt"], (sq,), out=(sq,))
    del full
    res = sq if sq.dtype == rdt else sq.astype(rdt)
    return _finish(res, out, shape)


# ---- scans ----------------------------------------------------------------------------------

def _accumulate(family, np_func, a, axis, dtype, out, flat):
    """A function of _OP_FUNCTIONS (a scan) with NumPy's arguments; flat: axis
    None scans the flattened array (cumsum), else NumPy checks axis."""
    _, opname, spec = _OP_FUNCTIONS[family]
    fname = family if ":" not in family else f"{opname}.accumulate"
    key = None
    if out is None:
        key, plan = _plan_for(family, a, axis, dtype)
        if plan is not None:
            return plan(a)
    a = _array(fname, a)
    if flat:
        axis = _axis_of(a, axis)
    out = _check_out(fname, out)
    kwargs = {"axis": axis}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if a.size == 0:
        return _host_answer(np_func, a, out, **kwargs)
    rdt = _ask_numpy(np_func, a, out, **kwargs)
    if rdt.char not in DEVICE_TYPES:
        raise _uf._dtype_error(fname, rdt)
    x = a
    if flat and axis is None:
        x = (a if a.flags["C_CONTIGUOUS"] else a.copy()).reshape(-1)
        axis = 0
    elif axis is None:  # ufunc.accumulate(a, axis=None): NumPy's axis 0 of a 1-d a
        axis = 0
    axis = normalize_axis_index(axis, x.ndim)
    if out is not None:
        _check_out_shape(fname, out, x.shape)
    # cumsum's accumulator is NumPy's sum's, unless out says another (NumPy's
    # accumulate resolves its loop with out's dtype)
    loop = canonical(rdt.char) if family.startswith(("cum", "nancum")) and out is None else \
        _op_loop(opname, a.dtype.char, dtype, out.dtype if out is not None else None)
    with a.device:
        res = _result(out, x.shape, np.dtype(loop), a)
        # a plan where the kernels read a itself (not a copy of it)
        trace = [] if key is not None and x.ptr == a.ptr and x.dtype == a.dtype else None
        _scan(family, spec, x, axis, loop, res, trace)
        if trace:
            _keep_plan(key, a, res, trace, rdt, x.shape)
        if res.dtype != rdt and out is None:
            res = res.astype(rdt)
        return _finish(res, out, x.shape)


def cumsum(a, axis=None, dtype=None, out=None):
    """numpy.cumsum on the device (axis=None: of the flattened array)."""
    return _accumulate("cumsum", np.cumsum, a, axis, dtype, out, True)


def cumprod(a, axis=None, dtype=None, out=None):
    """numpy.cumprod on the device."""
    return _accumulate("cumprod", np.cumprod, a, axis, dtype, out, True)


def nancumsum(a, axis=None, dtype=None, out=None):
    """numpy.nancumsum on the device: NaNs count as zero."""
    if not _inexact(a):
        return cumsum(a, axis, dtype, out)
    return _accumulate("nancumsum", np.nancumsum, a, axis, dtype, out, True)


def nancumprod(a, axis=None, dtype=None, out=None):
    """numpy.nancumprod on the device: NaNs count as one."""
    if not _inexact(a):
        return cumprod(a, axis, dtype, out)
    return _accumulate("nancumprod", np.nancumprod, a, axis, dtype, out, True)


def accumulate(ufunc, array, axis=0, dtype=None, out=None):
    """numpy.<ufunc>.accumulate on a DeviceArray (ufunc: the op's name)."""
    opname = _op_name(ufunc)
    return _accumulate(f"accumulate:{opname}", getattr(np, opname).accumulate, array, axis,
                       dtype, out, False)
