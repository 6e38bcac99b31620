"""Bad input to the operators (issue 22): every operand an operator, a
comparison, `in` or pygpu.add/subtract/multiply can be given either gets
NumPy's answer or a TypeError / ValueError / OverflowError that says what
is wrong; nothing crashes the interpreter, nothing answers Python's False
where NumPy answers element by element. Also the conversions (float(),
int(), complex()), copy_to_device(None), the *_like functions, and the
hand-over of the other operators and ufuncs to pygpu._ops.ufunc."""

import operator
import subprocess
import sys
import textwrap
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from conftest import random_array, rel_error

import pygpu
from pygpu import _core

ALLOWED = (TypeError, ValueError, OverflowError)
SENTINEL = object()  # one object(), so that NumPy and pygpu see the same


def scalar_of_type(t):
    """A value of each NumPy scalar type (np.sctypeDict's values)."""
    if issubclass(t, np.datetime64):
        return t(1, "s")
    if issubclass(t, np.timedelta64):
        return t(1, "s")
    if issubclass(t, np.str_):
        return t("a")
    if issubclass(t, np.bytes_):
        return t(b"a")
    if issubclass(t, np.void):
        return t(b"a")
    if t is np.object_:
        return np.array(1, dtype=object)  # np.object_(1) is the int 1 itself
    return t(1)


NUMPY_SCALARS = [scalar_of_type(t) for t in
                 sorted(set(np.sctypeDict.values()), key=lambda t: t.__name__)]
ODD_VALUES = [None, "a", b"a", [1, 2, 3], (1,), SENTINEL, 2**70, -2**70, float("nan"),
              1 + 2j, 1, 1.0, True, Fraction(1, 2), Decimal(1)]
VALUES = NUMPY_SCALARS + ODD_VALUES


def _iadd(a, x):
    a += x
    return a


def _isub(a, x):
    a -= x
    return a


def _imul(a, x):
    a *= x
    return a


# (name, on the host, on the device); `a` is the array, `x` the odd operand
OPS = [(name, f, f) for name, f in [
    ("a+x", lambda a, x: a + x), ("x+a", lambda a, x: x + a),
    ("a-x", lambda a, x: a - x), ("x-a", lambda a, x: x - a),
    ("a*x", lambda a, x: a * x), ("x*a", lambda a, x: x * a),
    ("a==x", operator.eq), ("a!=x", operator.ne), ("a<x", operator.lt),
    ("a<=x", operator.le), ("a>x", operator.gt), ("a>=x", operator.ge),
    ("x==a", lambda a, x: x == a), ("x!=a", lambda a, x: x != a),
    ("x<a", lambda a, x: x < a), ("x>=a", lambda a, x: x >= a),
    ("x in a", lambda a, x: x in a),
]] + [
    ("add(a, x)", np.add, pygpu.add), ("add(x, a)", lambda a, x: np.add(x, a),
                                       lambda a, x: pygpu.add(x, a)),
    ("subtract(a, x)", np.subtract, pygpu.subtract),
    ("multiply(a, x)", np.multiply, pygpu.multiply),
]
IN_PLACE = [("a+=x", _iadd), ("a-=x", _isub), ("a*=x", _imul)]


def outcome(fn):
    """('ok', value) or ('raised', exception)."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return "ok", fn()
    except Exception as e:  # noqa: BLE001  (every exception is compared)
        return "raised", e


def host_value(v):
    return v.copy_to_host() if isinstance(v, pygpu.DeviceArray) else v


def same_answer(got, want):
    """None if the device's answer is NumPy's; else what differs."""
    got, want = np.asarray(host_value(got)), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"got {got.dtype}{got.shape}, NumPy {want.dtype}{want.shape}"
    if want.dtype.kind in "fc":
        ok = np.allclose(got, want, rtol=1e-6, atol=0, equal_nan=True)
    else:
        ok = np.array_equal(got, want)
    return None if ok else f"got {got!r}, NumPy {want!r}"


def must_answer(x):
    """Operands whose == and != must give NumPy's answer, not an error: the
    numbers of the device's dtypes, and what NumPy compares element by
    element with the same answer for each (None, strings, object())."""
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, (list, tuple)):
        return abs(x) < 2**63 if isinstance(x, int) else True
    if isinstance(x, np.generic) and np.dtype(type(x)).char in "?bhilqBHILQefdFD":
        return True
    return x is None or x is SENTINEL or isinstance(x, (str, bytes))


def check_case(name, host_fn, dev_fn, h, x, problems):
    d = pygpu.asarray(h)  # a fresh one: the in-place operators write it
    want = outcome(lambda: host_fn(h.copy(), x))
    got = outcome(lambda: dev_fn(d, x))
    label = f"{name} with a {h.dtype}{h.shape} array and x={x!r} ({type(x).__name__})"
    if got[0] == "raised":
        if not isinstance(got[1], ALLOWED):
            problems.append(f"{label}: raised {type(got[1]).__name__}: {got[1]}")
        elif want[0] == "ok" and name in ("a==x", "a!=x") and must_answer(x):
            problems.append(f"{label}: raised {type(got[1]).__name__}: {got[1]}; "
                            f"NumPy answers {want[1]!r}")
        return
    if want[0] == "raised":
        problems.append(f"{label}: NumPy raises {type(want[1]).__name__} ({want[1]}), "
                        f"pygpu answered {host_value(got[1])!r}")
        return
    diff = same_answer(got[1], want[1])
    if diff is not None:
        problems.append(f"{label}: {diff}")


ARRAYS = [(np.float32, (5,)), (np.int32, (5,)), (np.bool_, (5,)),
          (np.float32, ()), (np.int32, ()), (np.bool_, ())]


@pytest.mark.parametrize("dtype, shape", ARRAYS, ids=lambda v: str(v))
def test_fuzz_every_numpy_scalar_type_and_odd_value(rng, dtype, shape):
    h = random_array(rng, shape, dtype)
    if shape:
        h[0] = 1  # so that == 1 finds an element
    problems = []
    for x in VALUES:
        for name, host_fn, dev_fn in OPS:
            check_case(name, host_fn, dev_fn, h, x, problems)
        for name, fn in IN_PLACE:
            check_case(name, fn, fn, h, x, problems)
    assert not problems, f"{len(problems)} cases:\n" + "\n".join(problems[:40])


def test_longdouble_operands_raise_typeerror_naming_the_dtype():
    # these killed the interpreter (SIGSEGV): run them in a child, so that a
    # relapse fails this test instead of the whole run
    code = textwrap.dedent("""
        import numpy as np, pygpu
        d = pygpu.asarray(np.arange(1, 4, dtype=np.float32))
        cases = {
            "d + longdouble": lambda: d + np.longdouble(1),
            "longdouble + d": lambda: np.longdouble(1) + d,
            "d < clongdouble": lambda: d < np.clongdouble(1),
            "add(d, longdouble)": lambda: pygpu.add(d, np.longdouble(1)),
            "longdouble in d": lambda: np.longdouble(1) in d,
            "d == longdouble": lambda: d == np.longdouble(1),
            "int32 + timedelta64": lambda: d.astype(np.int32) + np.timedelta64(1, "s"),
        }
        for name, fn in cases.items():
            try:
                fn()
            except TypeError as e:
                print(name, "|", e)
            else:
                print(name, "| no error")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, f"the child died ({r.returncode}):\n{r.stderr[-3000:]}"
    lines = dict(line.split(" | ", 1) for line in r.stdout.splitlines())
    assert len(lines) == 7, r.stdout
    for name in ["d + longdouble", "longdouble + d", "add(d, longdouble)"]:
        assert "float128 (numpy.longdouble)" in lines[name], lines[name]
        assert "does not support" in lines[name] and "float32" in lines[name]
    assert "complex256 (numpy.clongdouble)" in lines["d < clongdouble"]
    assert "float128" in lines["longdouble in d"]
    assert "float128" in lines["d == longdouble"]
    assert "timedelta64" in lines["int32 + timedelta64"]
    for text in lines.values():
        assert "supported dtypes are" in text


@pytest.mark.parametrize("x", [None, "a", b"a", SENTINEL, np.str_("a"),
                               np.datetime64(1, "s")],
                         ids=lambda x: "object()" if x is SENTINEL else repr(x))
def test_equality_with_non_numbers_is_elementwise_as_numpy(rng, x):
    h = random_array(rng, (2, 3), np.float32)
    d = pygpu.asarray(h)
    for op in (operator.eq, operator.ne):
        got = op(d, x)
        assert isinstance(got, pygpu.DeviceArray)
        assert got.dtype == np.bool_ and got.shape == h.shape
        np.testing.assert_array_equal(got.copy_to_host(), op(h, x))
        assert got.copy_to_host().all() == (op is operator.ne)
        # x first: the same, except where NumPy's scalar asks for d as an
        # ndarray itself (np.datetime64 does), which is d's explicit-copy error
        try:
            got = op(x, d)
        except TypeError as e:
            assert isinstance(x, np.datetime64) and "copy_to_host" in str(e)
        else:
            np.testing.assert_array_equal(got.copy_to_host(), op(x, h))
    assert (x in d) is (x in h) is False


def test_equality_of_a_0d_array_with_non_numbers():
    h = np.array(2.5, dtype=np.float32)
    d = pygpu.asarray(h)
    for x in ["a", None, SENTINEL]:
        for op in (operator.eq, operator.ne):
            got, want = op(d, x), op(h, x)
            assert isinstance(got, pygpu.DeviceArray) and got.shape == ()
            assert got.dtype == np.bool_ and got.copy_to_host()[()] == want


@pytest.mark.parametrize("x", [Decimal(1), Fraction(1, 2)], ids=repr)
def test_equality_numpy_decides_per_element_as_objects_is_a_typeerror(x):
    d = pygpu.asarray(np.arange(3, dtype=np.float32))
    with pytest.raises(TypeError, match=r"compares in object.*does not support dtype object"):
        d == x  # noqa: B015
    with pytest.raises(TypeError, match="object"):
        d != x  # noqa: B015


@pytest.mark.parametrize("x", [[1, 2, 3], (1, 2, 3), np.array([1, 2, 3]),
                               np.ones((3,), dtype=np.float32)],
                         ids=["list", "tuple", "int64 ndarray", "float32 ndarray"])
@pytest.mark.parametrize("op", ["==", "!=", "<", ">=", "+", "-", "*", "+="])
def test_host_data_operands_say_to_copy_explicitly(x, op):
    d = pygpu.asarray(np.arange(3, dtype=np.float32))
    code = f"d {op} x" if op != "+=" else "d += x"
    with pytest.raises(TypeError, match=r"host data: copy it to the device explicitly "
                                        r"with pygpu\.asarray"):
        exec(code, {"d": d, "x": x})
    if op != "+=" and isinstance(x, np.ndarray):  # the ndarray on the left: NEP 13
        with pytest.raises(TypeError, match=r"pygpu\.asarray"):
            exec(f"x {op} d", {"d": d, "x": x})
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(3, dtype=np.float32))


@pytest.mark.parametrize("n", [1, 3, 1000])
def test_ndarray_plus_device_array_names_asarray(n):
    # NumPy's own message was "Concatenation operation is not implemented";
    # both orders now come to DeviceArray.__array_ufunc__ / nb_add
    d = pygpu.zeros(n)
    with pytest.raises(TypeError, match=r"pygpu\.asarray"):
        np.ones(n) + d  # noqa: B018
    with pytest.raises(TypeError, match=r"pygpu\.asarray"):
        d + np.ones(n)  # noqa: B018
    with pytest.raises(TypeError, match=r"pygpu\.asarray"):
        np.add(np.ones(n), d)
    with pytest.raises(TypeError, match=r"pygpu\.asarray"):
        np.ones((n, n)) @ pygpu.zeros((n, n))  # noqa: B018


def test_numpy_ufuncs_of_the_c_operators_run_on_the_device(rng):
    h = random_array(rng, (4, 3), np.float32)
    d = pygpu.asarray(h)
    for got, want in [(np.float32(2) + d, np.float32(2) + h), (np.add(d, 1.5), h + 1.5),
                      (np.int8(3) * d, np.int8(3) * h), (np.subtract(2, d), 2 - h),
                      (np.float64(0.5) < d, np.float64(0.5) < h),
                      (np.matmul(d, d.T), h @ h.T)]:
        assert isinstance(got, pygpu.DeviceArray)
        assert got.dtype == want.dtype
        assert rel_error(got.copy_to_host(), want) < 1e-6
    out = pygpu.empty((4, 3), dtype=np.float32)
    assert np.multiply(d, d, out=out) is out
    np.testing.assert_allclose(out.copy_to_host(), h * h, rtol=1e-6)


@pytest.mark.parametrize("conv", [float, int, complex])
def test_conversions_take_0d_arrays_only_as_numpy_2(conv):
    h = np.array([2.5], dtype=np.float32)
    d = pygpu.asarray(h)
    with pytest.raises(TypeError) as numpy_error:
        conv(h)
    with pytest.raises(TypeError, match="only 0-dimensional arrays can be converted"):
        conv(d)
    assert "only 0-dimensional arrays" in str(numpy_error.value)
    with pytest.raises(TypeError, match="only 0-dimensional"):
        conv(pygpu.zeros((1, 1)))
    assert conv(d[0]) == conv(h[0]) == conv(np.float32(2.5))


INDEX_CASES = [np.array(v, dtype=t) for t in np.typecodes["AllInteger"]
               for v in (0, 7, np.iinfo(t).max, np.iinfo(t).min)]
INDEX_CASES += [np.array(True), np.array(2.0), np.array(1 + 2j, np.complex64),
                np.array(3.0, np.float16), np.array([3]), np.array([[3]]), np.zeros(0, int),
                np.array(2**63 + 5, np.uint64), np.array(np.nan), np.array(-2.5, np.float32)]


@pytest.mark.parametrize("h", INDEX_CASES, ids=lambda h: f"{h.dtype}{h.shape}")
def test_index_int_float_complex_bool_of_arrays_as_numpy_2(h):
    # operator.index takes 0-d integer arrays only (not bool), as NumPy's
    # __index__; int(), float(), complex(), bool() give NumPy's values and
    # exception types (NumPy 2: only 0-d arrays convert, bool takes size 1)
    d = pygpu.asarray(h)
    for conv in (operator.index, int, float, complex, bool):
        want, got = outcome(lambda c=conv: c(h)), outcome(lambda c=conv: c(d))
        assert got[0] == want[0], (conv, h, got, want)
        if want[0] == "ok":
            assert type(got[1]) is type(want[1]) and (got[1] == want[1] or got[1] != got[1])
        else:
            assert type(got[1]) is type(want[1]), (conv, h, got[1], want[1])
            if conv is operator.index:
                assert str(got[1]) == str(want[1])


def test_a_0d_integer_array_is_an_index_for_python_sequences():
    i = pygpu.asarray(np.array(2, np.int16))
    assert "abcdef"[i] == "c"
    assert list(range(10))[i:pygpu.asarray(np.array(5, np.uint8))] == [2, 3, 4]
    assert operator.index(pygpu.asarray(np.array(-(2**63)))) == -(2**63)
    assert operator.index(pygpu.asarray(np.array(2**64 - 1, np.uint64))) == 2**64 - 1
    assert hex(pygpu.asarray(np.array(255, np.int32))) == "0xff"
    with pytest.raises(TypeError, match="only integer scalar arrays"):
        [1, 2][pygpu.asarray(np.array(True))]
    with pytest.raises(TypeError, match="only integer scalar arrays"):
        range(pygpu.asarray(np.array([3])))


def test_a_0d_integer_array_never_repeats_a_sequence():
    # with __index__, str * d would be str repetition; NumPy multiplies
    # elementwise or refuses, and so does pygpu (host data: copy it first)
    import array

    d = pygpu.asarray(np.array(3, np.int32))
    for seq in ("ab", b"ab", bytearray(b"ab"), array.array("b", [1, 2])):
        for fn in (lambda s: s * d, lambda s: d * s, operator.imul):
            with pytest.raises(TypeError, match="multiply takes pygpu.DeviceArrays"):
                fn(seq, d) if fn is operator.imul else fn(seq)
    with pytest.raises(TypeError):
        np.array(3, np.int32) * "ab"   # NumPy's answer for str


def test_complex_of_a_0d_complex_array():
    h = np.array(1.5 - 2j, dtype=np.complex64)
    assert complex(pygpu.asarray(h)) == complex(h) == 1.5 - 2j


def test_bool_of_a_size_1_array_follows_the_installed_numpy():
    for h in [np.array([0.0]), np.array([3.0]), np.array([[True]]), np.array(0)]:
        d = pygpu.asarray(h)
        want = outcome(lambda h=h: bool(h))
        got = outcome(lambda d=d: bool(d))
        assert got[0] == want[0]
        if want[0] == "ok":
            assert got[1] is want[1]
        else:
            assert type(got[1]) is type(want[1])
    with pytest.raises(ValueError, match="ambiguous"):
        bool(pygpu.zeros(2))
    with pytest.raises(ValueError, match="empty"):
        bool(pygpu.zeros(0))


def test_copy_to_device_of_none_is_a_typeerror(rng):
    h = random_array(rng, 4, np.float32)
    d = pygpu.asarray(h)
    with pytest.raises(TypeError, match="not None"):
        d.copy_to_device(None)
    with pytest.raises(TypeError, match="not None"):
        pygpu.cuda.to_device(None, to=d)
    np.testing.assert_array_equal(d.copy_to_host(), h)  # untouched
    d.copy_to_device(h[::-1].copy())
    np.testing.assert_array_equal(d.copy_to_host(), h[::-1])


LIKE = {"empty_like": np.empty_like, "zeros_like": np.zeros_like,
        "ones_like": np.ones_like}


@pytest.mark.parametrize("name", list(LIKE))
@pytest.mark.parametrize("proto", [3, 2.5, True, [1, 2], [[1.5, 2], [3, 4]],
                                   np.arange(6, dtype=np.int16).reshape(2, 3),
                                   np.zeros((3, 2), dtype=np.float32, order="F")],
                         ids=repr)
def test_like_functions_take_array_likes_as_numpy(name, proto):
    fn = getattr(_core, name)
    want = LIKE[name](proto)
    for dtype in [None, np.complex64]:
        got = fn(proto) if dtype is None else fn(proto, dtype=dtype)
        w = want if dtype is None else LIKE[name](proto, dtype=dtype)
        assert isinstance(got, pygpu.DeviceArray)
        assert got.shape == w.shape and got.dtype == w.dtype
        if name != "empty_like":
            np.testing.assert_array_equal(got.copy_to_host(), w)
    if isinstance(proto, np.ndarray) and proto.flags.f_contiguous and proto.ndim > 1:
        assert fn(proto).flags["F_CONTIGUOUS"]


@pytest.mark.parametrize("name", list(LIKE))
def test_like_functions_of_a_device_array(rng, name):
    d = pygpu.asarray(random_array(rng, (2, 5), np.int32))
    got = getattr(_core, name)(d)
    assert got.shape == (2, 5) and got.dtype == np.int32 and got.ptr != d.ptr
    if name != "empty_like":
        np.testing.assert_array_equal(got.copy_to_host(), LIKE[name](np.zeros((2, 5), np.int32)))
    assert getattr(_core, name)(d, dtype=np.float64).dtype == np.float64


@pytest.mark.parametrize("name", list(LIKE) + ["full_like"])
@pytest.mark.parametrize("proto, dtype", [(None, "object"), ("abc", "<U3"),
                                          (b"ab", "|S2"), ([None], "object")],
                         ids=["None", "str", "bytes", "list of None"])
def test_like_functions_name_a_dtype_the_device_lacks(name, proto, dtype):
    fn = getattr(_core, name)
    args = (proto, 1) if name == "full_like" else (proto,)
    assert getattr(np, name)(*args).dtype == np.dtype(dtype)
    with pytest.raises(TypeError, match=rf"dtype {dtype} \(numpy\.\w+\) on the device"):
        fn(*args)
    got = fn(*args, dtype=np.float32)  # a dtype given: only the shape is a's
    assert got.shape == np.shape(proto) and got.dtype == np.float32


def test_full_like_converts_the_value_as_numpy(rng):
    h = random_array(rng, (3, 4), np.int32)
    d = pygpu.asarray(h)
    for value, dtype in [(2.7, None), (7, np.uint8), (1 + 2j, np.complex64), (3, None)]:
        want = np.full_like(h, value, dtype=dtype)
        got = _core.full_like(d, value, dtype=dtype)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.copy_to_host(), want)
    np.testing.assert_array_equal(_core.full_like([1.5, 2.5], 7).copy_to_host(),
                                  np.full_like([1.5, 2.5], 7))


def test_pygpu_like_functions_follow_the_prototype():
    d = pygpu.asarray(np.arange(3.0))
    for name in ["empty_like", "zeros_like", "ones_like"]:
        r = getattr(pygpu, name)(d)
        assert r.device == d.device and r.shape == d.shape and r.dtype == d.dtype
    with pytest.raises(TypeError, match="dtype object"):
        pygpu.zeros_like(None)
    assert pygpu.ones_like([1, 2]).copy_to_host().tolist() == [1, 1]


# ---- the hand-over to pygpu._ops.ufunc ---------------------------------------------

STUB = textwrap.dedent("""
    import sys, types, numpy as np, pygpu
    calls = []
    stub = types.ModuleType("pygpu._ops.ufunc")
    def operator(name, a, b, inplace):
        calls.append(("operator", name, type(a).__name__, type(b).__name__, inplace))
        return "op:" + name
    def array_ufunc(ufunc, method, inputs, kwargs):
        calls.append(("array_ufunc", ufunc.__name__, method, len(inputs), kwargs))
        return "ufunc:" + ufunc.__name__
    stub.operator, stub.array_ufunc = operator, array_ufunc
    sys.modules["pygpu._ops.ufunc"] = stub
    d = pygpu.zeros(3)
""")


def run_with_stub(code):
    r = subprocess.run([sys.executable, "-c", STUB + textwrap.dedent(code)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_operators_without_a_c_path_go_to_the_python_side():
    out = run_with_stub("""
        results = [d / 2, 2 / d, d // 2, d % 2, divmod(d, 2), divmod(2, d), d ** 3,
                   2 ** d, -d, +d, abs(d), ~d, d & 1, 1 | d, d ^ 1, d << 1, d >> 1]
        print(results)
        e = d
        for stmt in ["e /= 2", "e //= 2", "e %= 2", "e **= 3", "e &= 1", "e |= 1",
                     "e ^= 1", "e <<= 1", "e >>= 1"]:
            e = d
            exec(stmt)
            print(e)
        try:
            pow(d, 2, 5)
        except TypeError as err:
            print("pow3", err)
        for c in calls:
            print(c)
    """)
    lines = out.splitlines()
    assert eval(lines[0]) == [  # noqa: S307
        "op:divide", "op:divide", "op:floor_divide", "op:remainder", "op:divmod",
        "op:divmod", "op:power", "op:power", "op:negative", "op:positive", "op:absolute",
        "op:invert", "op:bitwise_and", "op:bitwise_or", "op:bitwise_xor", "op:left_shift",
        "op:right_shift"]
    assert lines[1:10] == ["op:divide", "op:floor_divide", "op:remainder", "op:power",
                           "op:bitwise_and", "op:bitwise_or", "op:bitwise_xor",
                           "op:left_shift", "op:right_shift"]
    assert lines[10].startswith("pow3 unsupported operand type(s) for ** or pow()")
    calls = [eval(c) for c in lines[11:]]  # noqa: S307
    # the operands in Python's order, b None for the unary ones, inplace said
    assert calls[0] == ("operator", "divide", "DeviceArray", "int", False)
    assert calls[1] == ("operator", "divide", "int", "DeviceArray", False)
    assert calls[5] == ("operator", "divmod", "int", "DeviceArray", False)
    assert calls[7] == ("operator", "power", "int", "DeviceArray", False)
    assert calls[8] == ("operator", "negative", "DeviceArray", "NoneType", False)
    assert calls[11] == ("operator", "invert", "DeviceArray", "NoneType", False)
    assert [c[4] for c in calls[17:]] == [True] * 9
    assert [c[1] for c in calls[17:]] == ["divide", "floor_divide", "remainder", "power",
                                          "bitwise_and", "bitwise_or", "bitwise_xor",
                                          "left_shift", "right_shift"]
    assert len(calls) == 26


def test_power_takes_numpys_shortcuts():
    # NumPy's a ** 2 (a Python int) is square; for float and complex arrays
    # a ** -1 is reciprocal and a ** 0.5 sqrt; other exponents are power
    out = run_with_stub("""
        i = pygpu.zeros(3, dtype=np.int32)
        print([d ** 2, d ** -1, d ** 0.5, d ** 2.0, d ** True, d ** np.int64(2),
               d ** np.float64(0.5), d ** -1.0, i ** 2, i ** -1, i ** 0.5, 2 ** d])
        e = d
        e **= 2
        e = d
        e **= 0.5
        print(calls[-2:])
    """)
    lines = out.splitlines()
    assert eval(lines[0]) == [  # noqa: S307
        "op:square", "op:reciprocal", "op:sqrt", "op:power", "op:power", "op:power",
        "op:power", "op:power", "op:square", "op:power", "op:power", "op:power"]
    assert eval(lines[1]) == [("operator", "square", "DeviceArray", "NoneType", True),  # noqa: S307
                              ("operator", "sqrt", "DeviceArray", "NoneType", True)]


def test_ufuncs_without_a_c_path_go_to_array_ufunc_once_looked_up():
    out = run_with_stub("""
        print(np.sin(d), np.add(d, 1, where=True), np.add.reduce(d), np.negative(d))
        stub.array_ufunc = None  # looked up at the first use, and kept
        print(np.sqrt(d))
        print(np.add(d, 1).__class__.__name__, np.less(d, 1).__class__.__name__)
        for c in calls:
            print(c)
        import gc
        print(operator in gc.get_referents(pygpu._core) or "-",
              array_ufunc in gc.get_referents(pygpu._core))
    """)
    lines = out.splitlines()
    assert lines[0] == "ufunc:sin ufunc:add ufunc:add ufunc:negative"
    assert lines[1] == "ufunc:sqrt"
    assert lines[2] == "DeviceArray DeviceArray"  # the C path: not the Python side
    calls = [eval(c) for c in lines[3:8]]  # noqa: S307
    assert calls[0] == ("array_ufunc", "sin", "__call__", 1, {})
    assert calls[1] == ("array_ufunc", "add", "__call__", 2, {"where": True})
    assert calls[2] == ("array_ufunc", "add", "reduce", 1, {})
    assert len(lines) == 9
    # the module state holds the function, and the collector sees it there
    assert lines[8] == "- True"


def test_a_missing_python_side_is_an_import_error_and_not_remembered():
    r = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import sys, types, numpy as np, pygpu
        d = pygpu.zeros(3)
        sys.modules["pygpu._ops.ufunc"] = None  # as if it were not there
        for f in (lambda: d / 2, lambda: np.sin(d)):
            try:
                f()
            except ImportError as e:
                print("ImportError")
        del sys.modules["pygpu._ops.ufunc"]
        stub = types.ModuleType("pygpu._ops.ufunc")
        stub.operator = lambda name, a, b, inplace: name
        sys.modules["pygpu._ops.ufunc"] = stub
        print(d / 2)
        print((d + 1).__class__.__name__)  # the C operators never needed it
    """)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == ["ImportError", "ImportError", "divide", "DeviceArray"]


def test_an_operand_with_its_own_array_ufunc_gets_its_turn():
    class Other:
        __array_ufunc__ = None

        def __radd__(self, other):
            return "Other.__radd__"

        def __eq__(self, other):
            return "Other.__eq__"

        __hash__ = None

    d = pygpu.zeros(3)
    assert d + Other() == "Other.__radd__"
    assert (d == Other()) == "Other.__eq__"


def test_another_librarys_device_array_gets_its_turn_and_is_not_converted():
    class Foreign:
        # a device array of another library: NumPy must not be asked to convert
        # it (that would copy it to the host, or fail)
        __cuda_array_interface__ = property(lambda self: {})

        def __array__(self, *args, **kwargs):
            raise AssertionError("converted by NumPy")

        def __eq__(self, other):
            return "Foreign.__eq__"

        def __radd__(self, other):
            return "Foreign.__radd__"

        __hash__ = None

    d = pygpu.zeros(3)
    assert (d == Foreign()) == "Foreign.__eq__"
    assert d + Foreign() == "Foreign.__radd__"


def test_buffers_are_host_data_too():
    import array

    d = pygpu.asarray(np.arange(3, dtype=np.float32))
    with pytest.raises(TypeError, match=r"got array\.array \(host data: copy it to the "
                                        r"device explicitly with pygpu\.asarray"):
        d == array.array("f", [0, 1, 2])  # noqa: B015
