"""Kernels from the op table: CUDA C rendered from one template, compiled by
the one compile path (pygpu.rawkernel: NVRTC on a GPU, the host compiler on
the simulator) through the one disk cache (pygpu/_cache.py), and kept in
memory once loaded.

For one op and one loop (its type signature) there are kernels for each
layout class and each choice of which inputs are scalars:

- layout "c": every array operand contiguous in the loop's dtype, walked by a
  flat index; layout "s": any strides (negative, zero for broadcast axes), up
  to MAX_DIMS axes after folding, walked by coordinates;
- each input is an array ("a", by pointer) or a scalar ("s", by value, cast
  once); outputs are always arrays.

A compiled unit holds one kernel on a GPU (a first call compiles only what it
needs: NVRTC's time grows with the kernels, about 50 ms each for sin), and
every kernel of every loop of the op on the simulator (the host compiler's
start-up dominates there: one unit per op keeps the test suite's compiles
few).
"""

import itertools
import threading
from pathlib import Path

import numpy as np

from .. import _core
from .table import DEVICE_TYPES

MAX_DIMS = 4
UNROLL = 8  # elements a thread per step of the contiguous kernels (H200, 2^28 float32/64:
# 4 gave 0.90-0.99x the copy, 8 0.93-1.00x, 16 0.49-1.00x)
MAX_BLOCKS = 1 << 20
# NVRTC contracts a * b + c into one fused multiply-add unless told not to;
# the host compiler (and NumPy's C loops) round each operation, so without
# this a GPU's answers differ in the last bits and at the infinities (the
# table's code calls pg::fma where NumPy's loops fuse)
OPTIONS = ("--fmad=false",)
INCLUDE = Path(__file__).resolve().parent.parent / "include"

# a type character -> the name it has in kernel names
_TAGS = {"?": "b1", "b": "i1", "B": "u1", "h": "i2", "H": "u2", "i": "i4", "I": "u4",
         "q": "i8", "Q": "u8", "e": "f2", "f": "f4", "d": "f8", "F": "c8", "D": "c16"}


def storage(char):
    return DEVICE_TYPES[char]


def _itemsize(char):
    """Bytes of a type character's storage."""
    return np.dtype(char).itemsize


def compute(char):
    return "float" if char == "e" else DEVICE_TYPES[char]


def kernel_name(op, ins, outs, layout, mask):
    sig = "_".join(_TAGS[c] for c in ins) + "__" + "_".join(_TAGS[c] for c in outs)
    return f"pg_{op.name}__{sig}__{layout}{mask}"


def masks(nin):
    """Which inputs are scalars: 'aa', 'as', 'sa' (never all scalars)."""
    return ["".join(m) for m in itertools.product("as", repeat=nin) if "a" in m]


def _inputs(ins, mask, value):
    """The declaration of each of the element's inputs in0, in1, ...: a
    scalar's value cast once (s0, ...), an array's value(k) (a C expression)."""
    return [f"T{k} in{k} = s{k};" if mask[k] == "s" else f"T{k} in{k} = {value(k)};"
            for k in range(len(ins))]


def _kernel(op, ins, outs, layout, mask):
    params, pre, body = [], [], []
    for k, c in enumerate(ins):
        if mask[k] == "s":
            params.append(f"{storage(c)} v{k}")
            pre.append(f"const T{k} s{k} = pg::cast<T{k}>(v{k});")
        elif layout == "c":
            params.append(f"const {storage(c)} *p{k}")
        else:
            params.append(f"const char *p{k}")
    for k, c in enumerate(outs):
        params.append(f"{storage(c)} *q{k}" if layout == "c" else f"char *q{k}")
    params.append("long long n")
    arrays = [f"p{k}" for k in range(len(ins)) if mask[k] == "a"] + \
        [f"q{k}" for k in range(len(outs))]
    if layout == "s":
        params += [f"long long d{j}" for j in range(1, MAX_DIMS)]
        params += [f"long long {a}s{j}" for a in arrays for j in range(MAX_DIMS)]
        body.append("long long r = i;")
        for j in range(MAX_DIMS - 1, 0, -1):
            body.append(f"const long long c{j} = r % d{j}; r /= d{j};")
        body.append("const long long c0 = r;")
        for a in arrays:
            terms = " + ".join(f"c{j} * {a}s{j}" for j in range(MAX_DIMS))
            body.append(f"const long long {a}o = {terms};")
    code = "{ " + op.code_for(ins, outs, mask) + " }"
    types = [f"typedef {compute(c)} T{k};" for k, c in enumerate(ins)] + \
            [f"typedef {compute(c)} R{k};" for k, c in enumerate(outs)]
    group, element = None, ""
    if layout == "c" and getattr(op, "grouped", False) and _packable(ins, outs, mask):
        group = kernel_name(op, ins, outs, layout, mask) + "_g"
        element = _group_function(group, ins, outs, mask, types, code)
    # the bound follows the threads the launch takes (threads()); kernels of
    # THREADS keep ptxas's own choice
    block = threads(layout, ins, outs, mask)
    bounds = f"__launch_bounds__({block}) " if block != THREADS else ""
    head = element + (
        f'extern "C" __global__ void {bounds}{kernel_name(op, ins, outs, layout, mask)}('
        f'{", ".join(params)})\n{{\n    {" ".join(types)}\n    {" ".join(pre)}\n')
    if layout == "c":
        return head + _contiguous_body(ins, outs, mask, code, arrays, group)
    body += _inputs(ins, mask, lambda k: f"pg::cast<T{k}>(*(const {storage(ins[k])} *)"
                                         f"(p{k} + p{k}o))")
    body += [f"R{k} out{k};" for k in range(len(outs))]
    body.append(code)
    for k, c in enumerate(outs):
        body.append(f"*({storage(c)} *)(q{k} + q{k}o) = pg::cast<{storage(c)}>(out{k});")
    inner = "\n        ".join(body)
    return (head + "    const long long step = (long long)gridDim.x * blockDim.x;\n"
            "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
            "i < n; i += step) {\n"
            f"        {inner}\n    }}\n}}\n")


# A contiguous kernel of 4-byte operands holds the element's code PACK *
# PACKS + 1 times on its 16-byte path and UNROLL times on the other: 25
# copies of sin inlined for float32, and NVRTC's time grows with them (H200
# host, in a process holding 6 GB: 0.501 s, 0.038 s with the 4 of a group
# function; power 0.290 s and 0.191 s; in fresh processes either way took
# 0.03-0.07 s, and 0.15-0.24 s on a just-built machine). Those kernels of
# a table op call one function, not inlined, that computes GROUP (== PACK)
# elements: the calls are few and a pack's elements still interleave
# (2^28 elements, the copy's rate: sin 0.986x -> 0.972x, x / 2 and x ** 2
# unchanged; gpu-logs/exp_ol.py, 2026-11-29). Kernels of 8-byte operands keep
# the code inlined (8 copies; grouped by 4, arctan float64 fell 0.957x ->
# 0.911x), and so do ops with code of their own (ElementwiseKernel, fuse:
# `i`, raw arrays).
GROUP = 4


def _group_function(name, ins, outs, mask, types, code):
    """The C of `name`: GROUP elements of the loop from the array inputs'
    values (struct name_a) and the scalars (by value), returning the outputs
    (struct name_r). The kernel's typedefs are repeated in it."""
    arr = [k for k in range(len(ins)) if mask[k] == "a"]
    fields = " ".join(f"{compute(ins[k])} in{k}[{GROUP}];" for k in arr)
    results = " ".join(f"{compute(c)} out{k}[{GROUP}];" for k, c in enumerate(outs))
    params = ", ".join([f"{name}_a a_"] + [f"{compute(c)} s{k}" for k, c in enumerate(ins)
                                            if mask[k] == "s"])
    take = " ".join(_inputs(ins, mask, lambda k: f"a_.in{k}[e_]"))
    outs_ = " ".join(f"R{k} out{k};" for k in range(len(outs)))
    keep = " ".join(f"r_.out{k}[e_] = out{k};" for k in range(len(outs)))
    return (f"struct {name}_a {{ {fields} }};\nstruct {name}_r {{ {results} }};\n"
            f"static __device__ __noinline__ {name}_r {name}({params})\n{{\n"
            f"    {' '.join(types)}\n    {name}_r r_;\n#pragma unroll\n"
            f"    for (int e_ = 0; e_ < {GROUP}; e_++) {{ {take} {outs_} {code} {keep} }}\n"
            "    return r_;\n}\n")


def _group_call(name, ins, outs, mask, value, store, indent):
    """C that computes GROUP elements through the group function `name`:
    value(k, e) is input k's e-th value (its storage type), store(k, e, x)
    the statement keeping output k's e-th result x (its compute type)."""
    arr = [k for k in range(len(ins)) if mask[k] == "a"]
    fill = " ".join(f"a_.in{k}[e_] = pg::cast<T{k}>({value(k, 'e_')});" for k in arr)
    args = ", ".join(["a_"] + [f"s{k}" for k in range(len(ins)) if mask[k] == "s"])
    keep = " ".join(store(k, "e_", f"r_.out{k}[e_]") for k in range(len(outs)))
    pad = " " * indent
    return (f"{pad}{name}_a a_;\n#pragma unroll\n"
            f"{pad}for (int e_ = 0; e_ < {GROUP}; e_++) {{ {fill} }}\n"
            f"{pad}const {name}_r r_ = {name}({args});\n#pragma unroll\n"
            f"{pad}for (int e_ = 0; e_ < {GROUP}; e_++) {{ {keep} }}\n")


# contiguous kernels whose array operands all have 4 bytes (float32, int32)
# read and write 16 bytes at once where every array is 16-byte aligned: a
# thread takes PACKS packs of PACK, a block's width apart. H200, np.sin of
# 2^28 float32: 8 scalar loads a thread 0.92x the copy, two 16-byte packs
# 0.97x; pygpu.fuse of sin(x) * 2 + sqrt(abs(x)): two packs 0.89x, four
# 0.98x, one 0.75x, two with __launch_bounds__(256, 8) 0.92x (2026-11-29)
PACK = 4
PACKS = 4
# threads a block of those kernels (the others take THREADS): H200, 2^28
# float32 against the copy in one run: x / 2 0.982x with 256, 1.000x with
# 512; x ** 2 0.980x and 0.995x; sin 0.978x and 0.998x (2026-11-29, gpu-logs/exp_ew.py)
PACKED_THREADS = 512
THREADS = 256


def _packable(ins, outs, mask):
    """Whether a contiguous kernel has the 16-byte path: every array operand
    (mask "a") and every output of 4 bytes."""
    return all(_itemsize(c) == 4 for k, c in enumerate(ins) if mask[k] == "a") and \
        all(_itemsize(c) == 4 for c in outs)


def threads(layout, ins, outs, mask):
    """Threads a block of the kernel of this layout and these operand types."""
    return PACKED_THREADS if layout == "c" and _packable(ins, outs, mask) else THREADS


def per_thread(ins, outs, mask):
    """Elements a thread takes per step of the contiguous kernel of these
    operand types (the grid's size follows): PACKS packs of PACK on the
    16-byte path, else UNROLL."""
    return PACK * PACKS if _packable(ins, outs, mask) else UNROLL


def _packed_body(ins, outs, mask, code, group):
    """The 16-byte path of a contiguous kernel of 4-byte operands (the caller
    checks the alignment): packs of PACK elements, PACKS a thread a block's
    width apart, all loads first; the tail past the last whole pack by the
    first threads of the grid. A pack's elements are computed by the group
    function `group` (PACK == GROUP) where there is one, else by the code
    inlined."""
    per = PACKS
    arr = [k for k in range(len(ins)) if mask[k] == "a"]
    loads = " ".join(f"pg::pack4<{storage(ins[k])}> v{k}[{per}];" for k in arr)
    fill = " ".join(f"v{k}[u] = ((const pg::pack4<{storage(ins[k])}> *)p{k})[j_];" for k in arr)
    outs_ = " ".join(f"R{k} out{k};" for k in range(len(outs)))
    decl = " ".join(f"pg::pack4<{storage(c)}> w{k};" for k, c in enumerate(outs))
    store = " ".join(f"((pg::pack4<{storage(c)}> *)q{k})[j_] = w{k};" for k, c in enumerate(outs))
    if group:
        pack = _group_call(group, ins, outs, mask, lambda k, e: f"v{k}[u].e[{e}]",
                           lambda k, e, x: f"w{k}.e[{e}] = pg::cast<{storage(outs[k])}>({x});",
                           20)
        tail = "{\n" + _group_call(group, ins, outs, mask, lambda k, e: f"p{k}[i]",
                                   lambda k, e, x: f"if ({e} == 0) q{k}[i] = "
                                                   f"pg::cast<{storage(outs[k])}>({x});",
                                   12) + "        }"
    else:
        take = " ".join(_inputs(ins, mask, lambda k: f"pg::cast<T{k}>(v{k}[u].e[e_])"))
        keep = " ".join(f"w{k}.e[e_] = pg::cast<{storage(c)}>(out{k});"
                        for k, c in enumerate(outs))
        pack = ("#pragma unroll\n"
                f"                    for (int e_ = 0; e_ < {PACK}; e_++) {{\n"
                f"                        const long long i = j_ * {PACK} + e_; (void)i; "
                f"{take} {outs_} {code} {keep} }}\n")
        tail_take = " ".join(_inputs(ins, mask, lambda k: f"pg::cast<T{k}>(p{k}[i])"))
        tail_store = " ".join(f"q{k}[i] = pg::cast<{storage(c)}>(out{k});"
                              for k, c in enumerate(outs))
        tail = f"{{ {tail_take} {outs_} {code} {tail_store} }}"
    return (f"        const long long np_ = n / {PACK};\n"
            f"        const long long step = (long long)gridDim.x * blockDim.x * {per};\n"
            f"        for (long long base = (long long)blockIdx.x * blockDim.x * {per} + "
            "threadIdx.x; base < np_; base += step) {\n"
            f"            {loads}\n"
            "#pragma unroll\n"
            f"            for (int u = 0; u < {per}; u++) {{\n"
            "                const long long j_ = base + (long long)u * blockDim.x;\n"
            f"                if (j_ < np_) {{ {fill} }}\n            }}\n"
            "#pragma unroll\n"
            f"            for (int u = 0; u < {per}; u++) {{\n"
            "                const long long j_ = base + (long long)u * blockDim.x;\n"
            f"                if (j_ < np_) {{\n                    {decl}\n"
            f"{pack}"
            f"                    {store}\n                }}\n            }}\n        }}\n"
            "        const long long i = np_ * "
            f"{PACK} + (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"        if (i < n) {tail}\n")


def _contiguous_body(ins, outs, mask, code, arrays, group):
    """UNROLL elements a thread, a block's width apart (coalesced): every load
    issued before the first result is computed, so that each thread has
    UNROLL loads in flight. Operands of 4 bytes take 16-byte packs where
    every array (`arrays`: the pointers' names) is aligned (_packed_body),
    these scalar loads elsewhere. With a group function, GROUP elements a
    call (the values past the end are zeros, computed and not stored)."""
    init = " = {}" if group else ""
    loads = [f"{storage(c)} v{k}[{UNROLL}]{init};" for k, c in enumerate(ins) if mask[k] == "a"]
    fill = " ".join(f"v{k}[u] = p{k}[i];" for k in range(len(ins)) if mask[k] == "a")
    outs_ = " ".join(f"R{k} out{k};" for k in range(len(outs)))
    packed = ""
    if _packable(ins, outs, mask):
        aligned = " | ".join(f"(unsigned long long){a}" for a in arrays)
        packed = (f"    if ((({aligned}) & 15) == 0) {{\n"
                  f"{_packed_body(ins, outs, mask, code, group)}        return;\n    }}\n")
    if group:
        call = _group_call(group, ins, outs, mask, lambda k, e: f"v{k}[g_ + {e}]",
                           lambda k, e, x: "{ const long long i = base + (long long)"
                                           f"(g_ + {e}) * blockDim.x; if (i < n) q{k}[i] = "
                                           f"pg::cast<{storage(outs[k])}>({x}); }}", 12)
        compute_ = ("#pragma unroll\n"
                    f"        for (int g_ = 0; g_ < {UNROLL}; g_ += {GROUP}) {{\n"
                    f"{call}        }}\n")
    else:
        take = " ".join(_inputs(ins, mask, lambda k: f"pg::cast<T{k}>(v{k}[u])"))
        store = " ".join(f"q{k}[i] = pg::cast<{storage(c)}>(out{k});" for k, c in enumerate(outs))
        compute_ = ("#pragma unroll\n"
                    f"        for (int u = 0; u < {UNROLL}; u++) {{\n"
                    "            const long long i = base + (long long)u * blockDim.x;\n"
                    f"            if (i < n) {{ {take} {outs_} {code} {store} }}\n        }}\n")
    return (packed +
            f"    const long long step = (long long)gridDim.x * blockDim.x * {UNROLL};\n"
            f"    for (long long base = (long long)blockIdx.x * blockDim.x * {UNROLL} + "
            "threadIdx.x; base < n; base += step) {\n"
            f"        {' '.join(loads)}\n"
            "#pragma unroll\n"
            f"        for (int u = 0; u < {UNROLL}; u++) {{\n"
            "            const long long i = base + (long long)u * blockDim.x;\n"
            f"            if (i < n) {{ {fill} }}\n        }}\n"
            f"{compute_}"
            "    }\n}\n")


def blocks(layout, n, threads, per=UNROLL):
    """The grid for n elements: enough blocks for one pass (`per` elements a
    thread on contiguous kernels: per_thread's), at most MAX_BLOCKS (the
    loops do the rest)."""
    per = threads * (per if layout == "c" else 1)
    return max(1, min(-(-n // per), MAX_BLOCKS))


def render(op, loops, only=None):
    """The CUDA C of a unit: every layout and scalar choice of each loop (or
    only the one (layout, mask))."""
    parts = ["#include <pygpu/ufunc.h>\n", getattr(op, "preamble", "")]  # a user's (custom.py)
    for ins, outs in loops:
        for layout in ("c", "s"):
            for mask in masks(len(ins)):
                if only is None or only == (layout, mask):
                    parts.append(_kernel(op, ins, outs, layout, mask))
    return "\n".join(parts)


_lock = threading.Lock()
_units = {}  # (device, op name, loops) -> RawModule
_functions = {}  # (device, op name, ins, outs, layout, mask) -> Function


def function(op, ins, outs, layout, mask):
    """The kernel for the current device, compiled (or loaded from the
    caches) on first use."""
    device = _core.get_device()
    key = (device, op.name, ins, outs, layout, mask)
    f = _functions.get(key)
    if f is not None:
        return f
    from ..rawkernel import RawModule

    if _core._host_modules():
        loops, only = op.loops, None
    else:
        loops, only = ((ins, outs),), (layout, mask)
    with _lock:
        unit = _units.get((device, op.name, loops, only))
        if unit is None:
            unit = RawModule(render(op, loops, only), options=OPTIONS, check=False)
            _units[(device, op.name, loops, only)] = unit
    f = unit.get_function(kernel_name(op, ins, outs, layout, mask))
    _functions[key] = f
    return f
