"""The one table of elementwise ops: every kernel the generator makes, every
pygpu ufunc, and every generated test reads it (docs/ARCHITECTURE.md,
"Generated kernels").

An entry gives an op's name (NumPy's), its C code, and how its results
compare with NumPy's. The rest comes from NumPy itself, so that pygpu's loops
are NumPy's: the number of inputs and outputs, and the type signatures in
NumPy's loop order (`ufunc.types`), kept where every type is one the device
has (DEVICE_TYPES). The reference is `numpy.<name>`.

The C code is one or more statements over `in0`, `in1`, ... (the inputs, in
their compute types: float for float16, else the dtype's C type) that set
`out0`, `out1`, ...; `T0`, `T1`, ... name the inputs' compute types and `R0`,
... the outputs'. The code may differ by the kind of the loop's first input
(b bool, i signed, u unsigned, f float, c complex) or for one loop ("ee->e"):
a dict from a key (a loop, or a string of kinds) to the code, the most
specific key winning. The device functions (pg::...) are in
pygpu/include/pygpu/ufunc.h.
"""

import functools
from dataclasses import dataclass, field

import numpy as np

# NumPy's type characters the device has, and their C storage types. 'l' and
# 'q' are both int64 on the platforms pygpu runs on: the loops are deduplicated
# by dtype, keeping NumPy's first.
DEVICE_TYPES = {
    "?": "bool", "b": "signed char", "B": "unsigned char", "h": "short",
    "H": "unsigned short", "i": "int", "I": "unsigned int", "l": "long long",
    "L": "unsigned long long", "q": "long long", "Q": "unsigned long long",
    "e": "pg::half", "f": "float", "d": "double",
    "F": "pg::complex<float>", "D": "pg::complex<double>",
}
KINDS = {"?": "b", **dict.fromkeys("bhilq", "i"), **dict.fromkeys("BHILQ", "u"),
         **dict.fromkeys("efd", "f"), **dict.fromkeys("FD", "c")}


@functools.cache
def canonical(char):
    """One character per dtype: 'l' -> 'q', 'L' -> 'Q'."""
    return np.dtype(char).char if char not in "lL" else {"l": "q", "L": "Q"}[char]


@dataclass(frozen=True)
class Op:
    name: str
    code: object  # str, or {key: str}: see the module's docstring
    exact: object = True  # False, or the kinds it is exact for ("biuf"): else the
    # answer may differ from NumPy's in the last bits (ulps)
    domain: tuple = None  # for tests: (low, high) of random inputs that make sense
    given: tuple = field(default=None, compare=False)  # its loops, where not NumPy's
    like: str = None  # the NumPy ufunc whose loops and dtype rules it has, if not its name
    # codegen: kernels of 4-byte operands compute through a function of
    # codegen.GROUP elements, not inlined (False: fuse's, inlined)
    grouped: bool = field(default=True, compare=False)
    # the code where the inputs are arrays and scalars as a mask says ("as": the
    # second input one scalar), for the loops NumPy computes otherwise there:
    # {mask: code (as `code`)}
    masked: dict = field(default=None, compare=False)

    @functools.cached_property
    def loops(self):
        """(in chars, out chars) of each loop: given, or NumPy's (numpy_loops),
        worked out at first use (85 ops at import took 10 ms)."""
        return self.given if self.given is not None else numpy_loops(self.like or self.name)

    @property
    def ufunc(self):
        return getattr(np, self.like or self.name)

    @property
    def nin(self):
        return len(self.loops[0][0])

    @property
    def nout(self):
        return len(self.loops[0][1])

    def exact_for(self, char):
        """Whether the loop whose first output is `char` gives NumPy's bits."""
        return self.exact is True or (isinstance(self.exact, str) and KINDS[char] in self.exact)

    def code_for(self, ins, outs, mask=None):
        """The C code of the loop (ins, outs), e.g. ("ff", "f"), where the
        inputs are arrays (a) and scalars (s) as mask says ("as")."""
        masked = self.masked.get(mask) if self.masked and mask else None
        if masked is not None:
            code = _pick(masked, ins, outs)
            if code is not None:
                return code
        code = _pick(self.code, ins, outs)
        if code is None:
            raise KeyError(f"{self.name}: no code for the loop {ins}->{outs}")
        return code


def _pick(code, ins, outs):
    """code (a str, or {key: str}: see the module's docstring) for the loop
    (ins, outs); None where no key fits."""
    if isinstance(code, str):
        return code
    loop = f"{ins}->{outs}"
    if loop in code:
        return code[loop]
    kind = KINDS[ins[0]]
    for key, c in code.items():
        if "->" not in key and kind in key:
            return c
    return None


def numpy_loops(name):
    """(ins, outs) of NumPy's loops for `name` whose types the device has, in
    NumPy's order, one per dtype signature, characters made canonical."""
    seen, loops = set(), []
    for t in getattr(np, name).types:
        ins, outs = t.split("->")
        if not all(c in DEVICE_TYPES for c in ins + outs):
            continue
        key = ("".join(canonical(c) for c in ins), "".join(canonical(c) for c in outs))
        if key not in seen:
            seen.add(key)
            loops.append(key)
    return tuple(loops)


_PI = "3.141592653589793238462643383279502884"

_UNARY_MATH = ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
               "arcsinh", "arccosh", "arctanh", "exp", "exp2", "expm1", "log", "log2",
               "log10", "log1p", "sqrt"]
_DOMAINS = {"arcsin": (-1, 1), "arccos": (-1, 1), "arctanh": (-0.99, 0.99),
            "arccosh": (1, 10), "log": (0.01, 100), "log2": (0.01, 100),
            "log10": (0.01, 100), "log1p": (-0.99, 100), "sqrt": (0, 100),
            "exp": (-20, 20), "exp2": (-20, 20), "expm1": (-20, 20), "sinh": (-20, 20),
            "cosh": (-20, 20)}

_ENTRIES = [
    *(Op(n, f"out0 = pg::{n}(in0);", exact=False, domain=_DOMAINS.get(n))
      for n in _UNARY_MATH),
    Op("cbrt", "out0 = pg::cbrt(in0);", exact=False),
    Op("arctan2", "out0 = pg::arctan2(in0, in1);", exact=False),
    Op("hypot", "out0 = pg::hypot(in0, in1);", exact=False),
    Op("logaddexp", "out0 = pg::logaddexp(in0, in1);", exact=False),
    Op("logaddexp2", "out0 = pg::logaddexp2(in0, in1);", exact=False),
    Op("power", {"iu": "out0 = pg::int_power(in0, in1);", "fc": "out0 = pg::pow(in0, in1);"},
       exact=False, domain=(0.1, 4),
       masked={"as": {"ff->f": "out0 = pg::pow_scalar_exponent(in0, in1);",
                      "dd->d": "out0 = pg::pow_scalar_exponent(in0, in1);"}}),
    Op("float_power", "out0 = pg::pow(in0, in1);", exact=False, domain=(0.1, 4)),
    Op("deg2rad", f"out0 = in0 * (T0)({_PI} / 180.0);", exact=False),
    Op("radians", f"out0 = in0 * (T0)({_PI} / 180.0);", exact=False),
    Op("rad2deg", f"out0 = in0 * (T0)(180.0 / {_PI});", exact=False),
    Op("degrees", f"out0 = in0 * (T0)(180.0 / {_PI});", exact=False),
    # arithmetic
    Op("add", {"b": "out0 = in0 || in1;", "iu": "out0 = pg::wrap_add(in0, in1);",
               "fc": "out0 = in0 + in1;"}),
    Op("subtract", {"iu": "out0 = pg::wrap_sub(in0, in1);", "fc": "out0 = in0 - in1;"}),
    Op("multiply", {"b": "out0 = in0 && in1;", "iu": "out0 = pg::wrap_mul(in0, in1);",
                    "f": "out0 = in0 * in1;", "c": "out0 = pg::mul_fused(in0, in1);"},
       exact="biuf"),
    Op("divide", "out0 = in0 / in1;", exact=False),
    Op("floor_divide", {"iu": "out0 = pg::int_floor_divide(in0, in1);",
                        "f": "T0 m; out0 = pg::float_divmod(in0, in1, &m);"}),
    Op("remainder", {"iu": "out0 = pg::int_remainder(in0, in1);",
                     "f": "pg::float_divmod(in0, in1, &out0);"}),
    Op("fmod", {"iu": "out0 = pg::int_fmod(in0, in1);", "f": "out0 = pg::fmod(in0, in1);"}),
    Op("divmod", {"iu": "out0 = pg::int_floor_divide(in0, in1); "
                        "out1 = pg::int_remainder(in0, in1);",
                  "f": "out0 = pg::float_divmod(in0, in1, &out1);"}),
    Op("negative", {"iu": "out0 = pg::wrap_neg(in0);", "fc": "out0 = -in0;"}),
    Op("positive", "out0 = in0;"),
    Op("absolute", {"b": "out0 = in0;", "iu": "out0 = pg::int_abs(in0);",
                    "f": "out0 = pg::fabs(in0);", "c": "out0 = pg::abs(in0);"},
       exact=False),
    Op("fabs", "out0 = pg::fabs(in0);"),
    Op("square", {"iu": "out0 = pg::wrap_mul(in0, in0);", "f": "out0 = in0 * in0;",
                  "c": "out0 = pg::mul_fused(in0, in0);"},
       exact="biuf"),
    Op("reciprocal", {"iu": "out0 = pg::int_reciprocal(in0);",
                      "f": "out0 = (T0)1 / in0;", "c": "out0 = pg::complex_reciprocal(in0);"},
       exact=False, domain=(1, 100)),
    Op("sign", {"i": "out0 = (T0)((in0 > 0) - (in0 < 0));", "u": "out0 = in0 > 0;",
                "f": "out0 = pg::float_sign(in0);", "c": "out0 = pg::complex_sign(in0);"},
       exact=False),
    Op("conjugate", {"biuf": "out0 = in0;", "c": "out0 = pg::conj(in0);"}),
    Op("heaviside", "out0 = pg::heaviside(in0, in1);"),
    Op("copysign", "out0 = pg::copysign(in0, in1);"),
    Op("nextafter", {"ee->e": "out0 = pg::half_nextafter(in0, in1);",
                     "f": "out0 = pg::nextafter(in0, in1);"}),
    Op("spacing", {"e->e": "out0 = pg::half_spacing(in0);", "f": "out0 = pg::spacing(in0);"}),
    Op("ldexp", "out0 = pg::ldexp(in0, pg::clamp_int(in1));"),
    Op("frexp", "int e; out0 = pg::frexp(in0, &e); out1 = e;"),
    Op("modf", "out0 = pg::modf(in0, &out1);"),
    # rounding
    Op("floor", {"biu": "out0 = in0;", "f": "out0 = pg::floor(in0);"}),
    Op("ceil", {"biu": "out0 = in0;", "f": "out0 = pg::ceil(in0);"}),
    Op("trunc", {"biu": "out0 = in0;", "f": "out0 = pg::trunc(in0);"}),
    Op("rint", "out0 = pg::rint(in0);"),
    # comparisons and extrema
    Op("equal", "out0 = pg::eq(in0, in1);"),
    Op("not_equal", "out0 = !pg::eq(in0, in1);"),
    Op("less", "out0 = pg::lt(in0, in1);"),
    Op("less_equal", "out0 = pg::le(in0, in1);"),
    Op("greater", "out0 = pg::lt(in1, in0);"),
    Op("greater_equal", "out0 = pg::le(in1, in0);"),
    # +0.0 against -0.0: NumPy's float32 and float64 loops give the second,
    # its float16 and complex loops the first (NumPy 2.4, every length)
    Op("maximum", {"ff->f": "out0 = pg::maximum_last(in0, in1);",
                   "dd->d": "out0 = pg::maximum_last(in0, in1);",
                   "biufc": "out0 = pg::maximum(in0, in1);"}),
    Op("minimum", {"ff->f": "out0 = pg::minimum_last(in0, in1);",
                   "dd->d": "out0 = pg::minimum_last(in0, in1);",
                   "biufc": "out0 = pg::minimum(in0, in1);"}),
    Op("fmax", "out0 = pg::fmax(in0, in1);"),
    Op("fmin", "out0 = pg::fmin(in0, in1);"),
    # predicates
    Op("isnan", {"biu": "out0 = false;", "fc": "out0 = pg::is_nan(in0);"}),
    Op("isinf", {"biu": "out0 = false;", "fc": "out0 = pg::is_inf(in0);"}),
    Op("isfinite", {"biu": "out0 = true;", "fc": "out0 = pg::is_finite(in0);"}),
    Op("signbit", "out0 = pg::sign_bit(in0);"),
    # logic
    Op("logical_and", "out0 = pg::cast<bool>(in0) && pg::cast<bool>(in1);"),
    Op("logical_or", "out0 = pg::cast<bool>(in0) || pg::cast<bool>(in1);"),
    Op("logical_xor", "out0 = pg::cast<bool>(in0) != pg::cast<bool>(in1);"),
    Op("logical_not", "out0 = !pg::cast<bool>(in0);"),
    # bits
    Op("bitwise_and", "out0 = (R0)(in0 & in1);"),
    Op("bitwise_or", "out0 = (R0)(in0 | in1);"),
    Op("bitwise_xor", "out0 = (R0)(in0 ^ in1);"),
    Op("invert", {"b": "out0 = !in0;", "iu": "out0 = (R0)~in0;"}),
    Op("left_shift", "out0 = pg::left_shift(in0, in1);"),
    Op("right_shift", "out0 = pg::right_shift(in0, in1);"),
    Op("bitwise_count", "out0 = pg::bit_count(in0);"),
    Op("gcd", "out0 = pg::gcd(in0, in1);"),
    Op("lcm", "out0 = pg::lcm(in0, in1);"),
]

# Every op, by name (its loops NumPy's, worked out at first use).
OPS = {op.name: op for op in _ENTRIES}

# Kernels of NumPy's functions that are not ufuncs, with their loops given:
# numpy.where, and the real and imaginary parts of complex numbers.
_EVERY_TYPE = tuple(dict.fromkeys(canonical(c) for c in DEVICE_TYPES))
INTERNAL = {op.name: op for op in (
    Op("where", "out0 = in0 ? in1 : in2;", given=tuple((f"?{c}{c}", c) for c in _EVERY_TYPE)),
    Op("real", "out0 = in0.re;", given=(("F", "f"), ("D", "d"))),
    Op("imag", "out0 = in0.im;", given=(("F", "f"), ("D", "d"))),
)}

# The array API standard's versions of the ufuncs whose special values
# NumPy's differ from, by the ufunc's name: pygpu.floor_divide and the array
# object's `d // e`, `d //= e` run the standard's, np.floor_divide(d, e)
# NumPy's (docs/SEMANTICS.md, "The array API namespace"). The loops and dtype
# rules are NumPy's ufunc's; only the code differs.
STANDARD = {op.like: op for op in (
    # an infinity by a finite number is an infinity, a finite number by an
    # infinity a zero (NumPy: NaN, and -1 or 0 by floor)
    Op("floor_divide_standard", {"iu": OPS["floor_divide"].code["iu"],
                                 "f": "out0 = pg::std_floor_divide(in0, in1);"},
       like="floor_divide"),
    # exp(z) - 1 at infinite and NaN parts as exp's (C99 Annex G), 0 at 0
    # (NumPy: its formula, inf + NaN i for expm1(inf + 0i))
    Op("expm1_standard", {"f": "out0 = pg::expm1(in0);", "c": "out0 = pg::expm1_standard(in0);"},
       exact=False, domain=_DOMAINS["expm1"], like="expm1"),
    # tanh(+-inf + yi) for finite y is +-1 + 0i with the sign of y (NumPy, as
    # C99: the sign of sin(2y))
    Op("tanh_standard", {"f": "out0 = pg::tanh(in0);", "c": "out0 = pg::tanh_standard(in0);"},
       exact=False, like="tanh"),
)}

# NumPy's other names for the same ufuncs (np.abs is np.absolute, ...)
ALIASES = {"abs": "absolute", "conj": "conjugate", "mod": "remainder",
           "true_divide": "divide", "bitwise_not": "invert", "bitwise_invert": "invert",
           "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
           "acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
           "atan": "arctan", "atanh": "arctanh", "atan2": "arctan2", "pow": "power"}


# ---- reductions --------------------------------------------------------------
# The reductions and scans (pygpu/_ops/reduction.py) come from this table too:
# each kernel is a Reduction below on one loop type T (the loop NumPy picks,
# e.g. int64 for the sum of int8), rendered into one kernel template
# (pygpu/include/pygpu/ufunc.h, "Reductions and scans").


@dataclass(frozen=True)
class Reduction:
    """How a reduction combines, as C code over the loop's compute type `T`
    and the accumulator `A`:

    - op: the entry of OPS whose code, on the loop (A, A) -> A, combines two
      partial results (`in0`, `in1` -> `out0`); or combine: that code itself,
      for accumulators of a type of their own (acc);
    - identity: what combines with anything to give it back; by default
      NumPy's identity of the op (`numpy.add.identity`), else (for ops without
      one, as maximum) a stand-in that no element can beat;
    - map: an element's contribution, from `x` (the element, cast to its
      compute type), `r` (its index along the reduced axis) and, for var,
      `m` (the mean of its output, read from the kernel's `aux`);
    - post: the result, from the total `a` and the launch's `k` (the count
      that mean divides by, or ddof);
    - acc: the accumulator's C type, from T ("real": T's real type);
    - next: the combining code where in1's elements all come after in0's (a
      thread's own elements, in order), where that is cheaper (argmax: a tie
      keeps in0 with no index to compare); by default the combining code.
    """
    name: str
    op: str = None
    combine: str = None
    identity: str = None
    map: str = "pg::cast<A>(x)"
    post: str = "a"
    acc: str = "T"
    next: str = None

    def combine_code(self, acc_char):
        """(in0, in1) -> out0 on the accumulator (whose type character, for an
        op's code, is acc_char)."""
        if self.combine is not None:
            return self.combine
        return OPS[self.op].code_for(acc_char * 2, acc_char)

    def identity_code(self):
        if self.identity is not None:
            return self.identity
        value = OPS[self.op].ufunc.identity
        if value is None:
            return _STAND_INS[self.op]
        return f"pg::cast<A>({str(value).lower() if isinstance(value, bool) else value})"


# the start of the reductions of ops without an identity (NumPy starts from the
# first element; these give the same answer)
_STAND_INS = {"maximum": "pg::limits<A>::lowest()", "minimum": "pg::limits<A>::highest()",
              "fmax": "pg::limits<A>::nan_or_lowest()",
              "fmin": "pg::limits<A>::nan_or_highest()"}

# The ops whose ufunc.reduce and ufunc.accumulate pygpu has: those whose order
# of combining does not change the answer (a tree gives NumPy's bits).
REORDERABLE = ("add", "multiply", "maximum", "minimum", "fmax", "fmin", "logical_and",
               "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "gcd")

_ARG = "pg::arg<T>"
_ARG_LOW = "A::at(pg::limits<T>::lowest(), PG_ARG_NONE)"  # what every element beats
_ARG_HIGH = "A::at(pg::limits<T>::highest(), PG_ARG_NONE)"
_COUNTED = "pg::counted<T>"
_COUNTED_REAL = "pg::counted<typename pg::real_of<T>::type>"
_NAN_FREE = "pg::is_nan(x) ? pg::cast<A>({}) : pg::cast<A>(x)"

REDUCTIONS = {r.name: r for r in [
    *(Reduction(name, op=name) for name in REORDERABLE),
    Reduction("nansum", op="add", map=_NAN_FREE.format(0)),
    Reduction("nanprod", op="multiply", map=_NAN_FREE.format(1)),
    Reduction("count_nonzero", op="add", map="pg::cast<A>(pg::cast<bool>(x))"),
    Reduction("mean", op="add", post="a / pg::cast<A>(k)"),
    Reduction("var", op="add", acc="real", post="a / pg::cast<A>(k)",
              map="pg::abs2(pg::cast<T>(x) - m)"),
    # the square root in double, then A (an integer type with dtype=int8, ...:
    # NumPy's int8(sqrt(var)); sqrt(int) is ambiguous in C++; correctly rounded
    # for float and half, as a square root rounded twice from double is)
    Reduction("std", op="add", acc="real",
              post="pg::cast<A>(pg::sqrt(pg::cast<double>(a / pg::cast<A>(k))))",
              map="pg::abs2(pg::cast<T>(x) - m)"),
    Reduction("nanmean", combine="out0 = pg::counted_add(in0, in1);", acc=_COUNTED,
              identity="pg::no_count<T>()", map="pg::count_number<T>(x)",
              post="a.v / pg::cast<T>(a.n)"),
    Reduction("nanvar", combine="out0 = pg::counted_add(in0, in1);", acc=_COUNTED_REAL,
              identity="pg::no_count<typename pg::real_of<T>::type>()",
              map="pg::nan_sqdev<T>(x, m)", post="pg::dof_divide(a, k)"),
    Reduction("nanstd", combine="out0 = pg::counted_add(in0, in1);", acc=_COUNTED_REAL,
              identity="pg::no_count<typename pg::real_of<T>::type>()",
              map="pg::nan_sqdev<T>(x, m)", post="pg::sqrt(pg::dof_divide(a, k))"),
    Reduction("argmax", combine="out0 = pg::arg_max(in0, in1);", acc=_ARG,
              identity=_ARG_LOW, map="A::at(x, r)", post="a.i",
              next="out0 = pg::arg_max_next(in0, in1);"),
    Reduction("argmin", combine="out0 = pg::arg_min(in0, in1);", acc=_ARG,
              identity=_ARG_HIGH, map="A::at(x, r)", post="a.i",
              next="out0 = pg::arg_min_next(in0, in1);"),
    Reduction("nanargmax", combine="out0 = pg::arg_max(in0, in1);", acc=_ARG,
              identity=_ARG_LOW, map=f"pg::is_nan(x) ? {_ARG_LOW} : A::at(x, r)",
              post="a.i == PG_ARG_NONE ? -1LL : a.i",
              next="out0 = pg::arg_max_next(in0, in1);"),
    Reduction("nanargmin", combine="out0 = pg::arg_min(in0, in1);", acc=_ARG,
              identity=_ARG_HIGH, map=f"pg::is_nan(x) ? {_ARG_HIGH} : A::at(x, r)",
              post="a.i == PG_ARG_NONE ? -1LL : a.i",
              next="out0 = pg::arg_min_next(in0, in1);"),
]}
