/* pygpu's device code for the generated kernels (pygpu/_ops): element types,
 * conversions between them, and each op with NumPy's semantics. The same
 * file compiles with NVRTC on a GPU and with the host C++ compiler on the
 * simulator (whose prelude supplies __device__ and the math library), so
 * the two give the same answers. No standard header is included: NVRTC has
 * none.
 *
 * Storage types are the C types of NumPy's dtypes (pg::half for float16,
 * pg::complex<T> for complex64/128). Each op is computed in a compute type:
 * float for float16 (as NumPy computes its float16 loops: in float, rounded
 * once to float16), the storage type otherwise. */
#ifndef PYGPU_UFUNC_H
#define PYGPU_UFUNC_H

#define PG_FN __device__ __forceinline__

namespace pg {

/* ---- traits ---------------------------------------------------------------- */
template <class T> struct traits {
    enum { integer = 0, is_signed = 1, bits = 0 };
    typedef T unsigned_type;
};
#define PG_INT_TRAITS(T, U, S, B)                                                      \
    template <> struct traits<T> {                                                     \
        enum { integer = 1, is_signed = S, bits = B };                                 \
        typedef U unsigned_type;                                                       \
    };
PG_INT_TRAITS(signed char, unsigned char, 1, 8)
PG_INT_TRAITS(unsigned char, unsigned char, 0, 8)
PG_INT_TRAITS(short, unsigned short, 1, 16)
PG_INT_TRAITS(unsigned short, unsigned short, 0, 16)
PG_INT_TRAITS(int, unsigned int, 1, 32)
PG_INT_TRAITS(unsigned int, unsigned int, 0, 32)
PG_INT_TRAITS(long long, unsigned long long, 1, 64)
PG_INT_TRAITS(unsigned long long, unsigned long long, 0, 64)
#undef PG_INT_TRAITS
template <> struct traits<bool> {
    enum { integer = 1, is_signed = 0, bits = 1 };
    typedef bool unsigned_type;
};

/* ---- float16: NumPy's conversions, written out ------------------------------ */
struct half {
    unsigned short bits;
};

PG_FN float
half_to_float(unsigned short h)
{
    unsigned int sign = (unsigned int)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu,
                 man = h & 0x3ffu, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    }
    else if (exp == 0) {
        if (man == 0) {
            bits = sign;
        }
        else {
            exp = 127 - 15 + 1;
            while (!(man & 0x400u)) {
                man <<= 1;
                exp--;
            }
            bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
        }
    }
    else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    return __uint_as_float(bits);
}

/* the nearest float16 to a double, ties to even (NumPy's npy_double_to_half);
 * a float converts exactly to double first, so this rounds a float once too */
PG_FN unsigned short
double_to_half(double d)
{
    unsigned long long x = (unsigned long long)__double_as_longlong(d);
    unsigned short sign = (unsigned short)((x >> 48) & 0x8000u);
    int exp = (int)((x >> 52) & 0x7ffu);
    unsigned long long man = x & 0xfffffffffffffull;
    if (exp == 0x7ff) {
        return man == 0 ? (unsigned short)(sign | 0x7c00u)
                        : (unsigned short)(sign | 0x7e00u | (unsigned short)(man >> 42));
    }
    int e = exp - 1023 + 15;
    if (e >= 0x1f) {
        return (unsigned short)(sign | 0x7c00u);
    }
    if (e <= 0) {
        if (e < -10) {
            return sign;
        }
        man |= 1ull << 52;
        int shift = 43 - e;
        unsigned long long h = man >> shift, rem = man & ((1ull << shift) - 1),
                           halfway = 1ull << (shift - 1);
        if (rem > halfway || (rem == halfway && (h & 1))) {
            h++;
        }
        return (unsigned short)(sign | h);
    }
    unsigned long long h = man >> 42, rem = man & ((1ull << 42) - 1),
                       halfway = 1ull << 41;
    unsigned short r = (unsigned short)(sign | ((unsigned)e << 10) | h);
    if (rem > halfway || (rem == halfway && (h & 1))) {
        r++;
    }
    return r;
}

/* ---- complex ------------------------------------------------------------------ */
template <class T> struct complex {
    T re, im;
};

/* four elements of 4 bytes, loaded and stored 16 bytes at once (the
 * generated contiguous kernels' packed path, codegen.py) */
template <class S> struct alignas(16) pack4 {
    S e[4];
};

/* ---- conversions between storage and compute types (NumPy's casts) ----------- */
template <class T> struct compute_of {
    typedef T type;
};
template <> struct compute_of<half> {
    typedef float type;
};

template <class To> struct conv {
    template <class From> PG_FN static To from(From v) { return (To)v; }
    PG_FN static To from(half v) { return (To)half_to_float(v.bits); }
    template <class R> PG_FN static To from(complex<R> v) { return (To)v.re; }
};
template <> struct conv<bool> {
    template <class From> PG_FN static bool from(From v) { return v != 0; }
    PG_FN static bool from(half v) { return (v.bits & 0x7fffu) != 0; }
    template <class R> PG_FN static bool from(complex<R> v) { return v.re != 0 || v.im != 0; }
};
template <> struct conv<half> {
    template <class From> PG_FN static half from(From v)
    {
        half h = {double_to_half((double)v)};
        return h;
    }
    PG_FN static half from(half v) { return v; }
    template <class R> PG_FN static half from(complex<R> v)
    {
        half h = {double_to_half((double)v.re)};
        return h;
    }
};
template <class R> struct conv<complex<R>> {
    template <class From> PG_FN static complex<R> from(From v)
    {
        complex<R> c = {(R)v, (R)0};
        return c;
    }
    PG_FN static complex<R> from(half v)
    {
        complex<R> c = {(R)half_to_float(v.bits), (R)0};
        return c;
    }
    template <class Q> PG_FN static complex<R> from(complex<Q> v)
    {
        complex<R> c = {(R)v.re, (R)v.im};
        return c;
    }
};
template <class To, class From>
PG_FN To
cast(From v)
{
    return conv<To>::from(v);
}

/* ---- float math: one name for float and double -------------------------------- */
#define PG_MATH1(name, f, d)                                                           \
    PG_FN float name(float x) { return ::f(x); }                                       \
    PG_FN double name(double x) { return ::d(x); }
#define PG_MATH2(name, f, d)                                                           \
    PG_FN float name(float x, float y) { return ::f(x, y); }                           \
    PG_FN double name(double x, double y) { return ::d(x, y); }
PG_MATH1(sin, sinf, sin)
PG_MATH1(cos, cosf, cos)
PG_MATH1(tan, tanf, tan)
PG_MATH1(arcsin, asinf, asin)
PG_MATH1(arccos, acosf, acos)
PG_MATH1(arctan, atanf, atan)
PG_MATH1(sinh, sinhf, sinh)
PG_MATH1(cosh, coshf, cosh)
PG_MATH1(tanh, tanhf, tanh)
PG_MATH1(arcsinh, asinhf, asinh)
PG_MATH1(arccosh, acoshf, acosh)
PG_MATH1(arctanh, atanhf, atanh)
PG_MATH1(exp, expf, exp)
PG_MATH1(exp2, exp2f, exp2)
PG_MATH1(expm1, expm1f, expm1)
PG_MATH1(log, logf, log)
PG_MATH1(log2, log2f, log2)
PG_MATH1(log10, log10f, log10)
PG_MATH1(log1p, log1pf, log1p)
PG_MATH1(sqrt, sqrtf, sqrt)
PG_MATH1(cbrt, cbrtf, cbrt)
PG_MATH1(fabs, fabsf, fabs)
PG_MATH1(floor, floorf, floor)
PG_MATH1(ceil, ceilf, ceil)
PG_MATH1(trunc, truncf, trunc)
PG_MATH1(rint, rintf, rint)
PG_MATH2(arctan2, atan2f, atan2)
PG_MATH2(hypot, hypotf, hypot)
PG_MATH2(fmod, fmodf, fmod)
PG_MATH2(copysign, copysignf, copysign)
PG_MATH2(nextafter, nextafterf, nextafter)
/* pow: x ** 2 as x * x (what NumPy's fast path for a scalar 2 gives, and
 * what pow returns correctly rounded anyway), without pow's cost */
PG_FN float pow(float x, float y) { return y == 2.0f ? x * x : ::powf(x, y); }
PG_FN double pow(double x, double y) { return y == 2.0 ? x * x : ::pow(x, y); }
/* NumPy's float32 and float64 power loops where the exponent is one scalar
 * (a stride of 0): -1, 0, 0.5, 1 and 2 give 1 / x, 1, sqrt(x), x and x * x,
 * so that (-0.0) ** 0.5 is -0.0 and (-inf) ** 0.5 NaN (pow gives +0, +inf) */
template <class T> PG_FN T pow_scalar_exponent(T x, T y)
{
    if (y == (T)-1) {
        return (T)1 / x;
    }
    if (y == (T)0) {
        return (T)1;
    }
    if (y == (T)0.5) {
        return sqrt(x);
    }
    if (y == (T)1) {
        return x;
    }
    return pow(x, y);
}
PG_FN float fma(float x, float y, float z) { return ::fmaf(x, y, z); }
PG_FN double fma(double x, double y, double z) { return ::fma(x, y, z); }
#undef PG_MATH1
#undef PG_MATH2

/* frexp, ldexp, modf for float and double */
PG_FN float frexp(float x, int *e) { return ::frexpf(x, e); }
PG_FN double frexp(double x, int *e) { return ::frexp(x, e); }
PG_FN float ldexp(float x, int e) { return ::ldexpf(x, e); }
PG_FN double ldexp(double x, int e) { return ::ldexp(x, e); }
PG_FN float modf(float x, float *i) { return ::modff(x, i); }
PG_FN double modf(double x, double *i) { return ::modf(x, i); }
/* an int64 exponent as an int: beyond int's range the answer is 0 or inf
 * anyway */
template <class T> PG_FN int clamp_int(T e)
{
    return e > (T)2147483647 ? 2147483647 : e < (T)(-2147483647 - 1) ? (-2147483647 - 1) : (int)e;
}

/* comparisons, with int64 against uint64 compared by value as NumPy does */
template <class A, class B> PG_FN bool eq(A a, B b) { return a == b; }
template <class A, class B> PG_FN bool lt(A a, B b) { return a < b; }
template <class A, class B> PG_FN bool le(A a, B b) { return a <= b; }
PG_FN bool eq(long long a, unsigned long long b) { return a >= 0 && (unsigned long long)a == b; }
PG_FN bool eq(unsigned long long a, long long b) { return eq(b, a); }
PG_FN bool lt(long long a, unsigned long long b) { return a < 0 || (unsigned long long)a < b; }
PG_FN bool lt(unsigned long long a, long long b) { return b >= 0 && a < (unsigned long long)b; }
PG_FN bool le(long long a, unsigned long long b) { return a < 0 || (unsigned long long)a <= b; }
PG_FN bool le(unsigned long long a, long long b) { return b >= 0 && a <= (unsigned long long)b; }

/* infinity and NaN from their bits: 1.0 / 0.0 is undefined behaviour in C++,
 * and NVRTC's front end takes it so (with -inf as max's identity, the
 * compiler dropped every load of complex64 max(axis=0) on an H200) */
template <class T> PG_FN T inf() { return (T)__longlong_as_double(0x7ff0000000000000LL); }
template <class T> PG_FN T nan() { return (T)__longlong_as_double(0x7ff8000000000000LL); }
template <class T> PG_FN bool is_nan(T x) { return x != x; }
template <class T> PG_FN bool is_inf(T x) { return x == inf<T>() || x == -inf<T>(); }
template <class T> PG_FN bool is_finite(T x) { return !is_nan(x) && !is_inf(x); }
PG_FN bool sign_bit(float x) { return (__float_as_uint(x) >> 31) != 0; }
PG_FN bool sign_bit(double x) { return __double_as_longlong(x) < 0; }

/* NumPy's npy_divmod for floats: the floor quotient and the remainder with
 * the divisor's sign */
template <class T>
PG_FN T
float_divmod(T a, T b, T *modulus)
{
    T mod = fmod(a, b);
    if (b == 0) {
        *modulus = mod;
        return a / b;
    }
    T div = (a - mod) / b;
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) {
            mod += b;
            div -= (T)1;
        }
    }
    else {
        mod = copysign((T)0, b);
    }
    T floordiv;
    if (div != 0) {
        floordiv = floor(div);
        if (div - floordiv > (T)0.5) {
            floordiv += (T)1;
        }
    }
    else {
        floordiv = copysign((T)0, a / b);
    }
    *modulus = mod;
    return floordiv;
}

/* the array API standard's floor division: NumPy's, but an infinity by a
 * finite number is an infinity and a finite number by an infinity a zero,
 * each signed as the quotient (NumPy: NaN, and -1 or 0 by floor) */
template <class T>
PG_FN T
std_floor_divide(T a, T b)
{
    if (is_inf(a) && is_finite(b)) {
        return sign_bit(a) != sign_bit(b) ? -inf<T>() : inf<T>();
    }
    if (is_finite(a) && is_inf(b)) {
        return sign_bit(a) != sign_bit(b) ? -(T)0 : (T)0;
    }
    T m;
    return float_divmod(a, b, &m);
}

/* ---- integer arithmetic, wrapping as NumPy's does ------------------------------ */
template <class T>
PG_FN T
wrap_add(T a, T b)
{
    return (T)((unsigned long long)a + (unsigned long long)b);
}
template <class T>
PG_FN T
wrap_sub(T a, T b)
{
    return (T)((unsigned long long)a - (unsigned long long)b);
}
template <class T>
PG_FN T
wrap_mul(T a, T b)
{
    return (T)((unsigned long long)a * (unsigned long long)b);
}
template <class T>
PG_FN T
wrap_neg(T a)
{
    return (T)(0ull - (unsigned long long)a);
}

/* floor division and Python's remainder; by zero: 0 (NumPy warns) */
template <class T>
PG_FN T
int_floor_divide(T a, T b)
{
    if (b == 0) {
        return 0;
    }
    if (traits<T>::is_signed) {
        if (b == (T)-1) {
            return wrap_neg(a); /* the minimum stays the minimum */
        }
        T q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) {
            q -= 1;
        }
        return q;
    }
    return a / b;
}
template <class T>
PG_FN T
int_remainder(T a, T b)
{
    if (b == 0) {
        return 0;
    }
    if (traits<T>::is_signed) {
        if (b == (T)-1) {
            return 0;
        }
        T r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) {
            r += b;
        }
        return r;
    }
    return a % b;
}
template <class T>
PG_FN T
int_fmod(T a, T b)
{
    if (b == 0 || (traits<T>::is_signed && b == (T)-1)) {
        return 0;
    }
    return a % b;
}
template <class T>
PG_FN T
int_power(T base, T exp)
{
    /* a negative exponent is refused on the host before the launch */
    T r = 1;
    unsigned long long e = (unsigned long long)exp;
    while (e) {
        if (e & 1) {
            r = wrap_mul(r, base);
        }
        base = wrap_mul(base, base);
        e >>= 1;
    }
    return r;
}
template <class T>
PG_FN T
left_shift(T a, T b)
{
    typedef typename traits<T>::unsigned_type U;
    if ((unsigned long long)b < (unsigned long long)traits<T>::bits) {
        return (T)(U)((U)a << (U)b);
    }
    return 0;
}
template <class T>
PG_FN T
right_shift(T a, T b)
{
    if ((unsigned long long)b < (unsigned long long)traits<T>::bits) {
        return (T)(a >> b);
    }
    return (traits<T>::is_signed && a < 0) ? (T)-1 : (T)0;
}
template <class T>
PG_FN T
int_abs(T a)
{
    return (traits<T>::is_signed && a < 0) ? wrap_neg(a) : a;
}
template <class T>
PG_FN T
gcd(T a, T b)
{
    typedef typename traits<T>::unsigned_type U;
    U x = (U)int_abs(a), y = (U)int_abs(b);
    while (y != 0) {
        U t = x % y;
        x = y;
        y = t;
    }
    return (T)x;
}
template <class T>
PG_FN T
lcm(T a, T b)
{
    T g = gcd(a, b);
    if (g == 0) {
        return 0;
    }
    return wrap_mul((T)(int_abs(a) / g), int_abs(b));
}
template <class T>
PG_FN unsigned char
bit_count(T a)
{
    unsigned long long v = (unsigned long long)int_abs(a);
    if (traits<T>::bits < 64) {
        v &= (1ull << traits<T>::bits) - 1;
    }
    unsigned char n = 0;
    while (v) {
        v &= v - 1;
        n++;
    }
    return n;
}

/* ---- complex arithmetic and math ------------------------------------------------ */
template <class T> PG_FN complex<T> mk(T re, T im)
{
    complex<T> c = {re, im};
    return c;
}
template <class T> PG_FN complex<T> operator+(complex<T> a, complex<T> b)
{
    return mk(a.re + b.re, a.im + b.im);
}
template <class T> PG_FN complex<T> operator-(complex<T> a, complex<T> b)
{
    return mk(a.re - b.re, a.im - b.im);
}
template <class T> PG_FN complex<T> operator-(complex<T> a) { return mk(-a.re, -a.im); }
template <class T> PG_FN complex<T> operator*(complex<T> a, complex<T> b)
{
    return mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
/* NumPy's complex product in its SIMD loops (multiply, square, on every
 * host with FMA: x86-64 with FMA3, AArch64): each part one fused
 * multiply-add, so that (3e38+3e38j)**2 has the rounding error of 3e38**2 as
 * its real part and (1e300+1e300j)**2 is -inf+inf j, not NaN+inf j. Explicit,
 * so that a GPU compiler's contraction cannot choose another pairing */
template <class T> PG_FN complex<T> mul_fused(complex<T> a, complex<T> b)
{
    return mk(fma(a.re, b.re, -(a.im * b.im)), fma(a.re, b.im, a.im * b.re));
}
/* Smith's algorithm, as NumPy's complex division */
template <class T> PG_FN complex<T> operator/(complex<T> a, complex<T> b)
{
    T abs_br = fabs(b.re), abs_bi = fabs(b.im);
    if (abs_br >= abs_bi) {
        if (abs_br == 0 && abs_bi == 0) {
            return mk(a.re / abs_br, a.im / abs_bi);
        }
        T rat = b.im / b.re, scl = (T)1 / (b.re + b.im * rat);
        return mk((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
    }
    T rat = b.re / b.im, scl = (T)1 / (b.im + b.re * rat);
    return mk((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}
template <class T> PG_FN bool operator==(complex<T> a, complex<T> b)
{
    return a.re == b.re && a.im == b.im;
}
template <class T> PG_FN bool operator!=(complex<T> a, complex<T> b) { return !(a == b); }
/* NumPy orders complex numbers lexicographically, and a NaN imaginary part
 * voids the order of the real parts (its CLT and CLE) */
template <class T> PG_FN bool operator<(complex<T> a, complex<T> b)
{
    return (a.re < b.re && !is_nan(a.im) && !is_nan(b.im)) || (a.re == b.re && a.im < b.im);
}
template <class T> PG_FN bool operator<=(complex<T> a, complex<T> b)
{
    return (a.re < b.re && !is_nan(a.im) && !is_nan(b.im)) || (a.re == b.re && a.im <= b.im);
}
template <class T> PG_FN bool operator>(complex<T> a, complex<T> b) { return b < a; }
template <class T> PG_FN bool operator>=(complex<T> a, complex<T> b) { return b <= a; }
template <class T> PG_FN bool operator!(complex<T> a) { return a.re == 0 && a.im == 0; }
template <class T> PG_FN bool is_nan(complex<T> a) { return is_nan(a.re) || is_nan(a.im); }
template <class T> PG_FN bool is_inf(complex<T> a) { return is_inf(a.re) || is_inf(a.im); }
template <class T> PG_FN bool is_finite(complex<T> a)
{
    return is_finite(a.re) && is_finite(a.im);
}
template <class T> PG_FN T abs(complex<T> a) { return hypot(a.re, a.im); }
template <class T> PG_FN complex<T> conj(complex<T> a) { return mk(a.re, -a.im); }
/* The elementary functions below give C99 Annex G's special values (NumPy's,
 * from npymath and the C library: FreeBSD's msun algorithms) at infinite and
 * NaN parts and signed zeros; the array API standard lists the same. */
template <class T> PG_FN complex<T> exp(complex<T> a)
{
    T x = a.re, y = a.im;
    if (y == 0) {
        return mk(exp(x), y); /* NaN + 0i too */
    }
    if (x == 0) {
        return mk(cos(y), sin(y));
    }
    if (!is_finite(y)) {
        if (is_finite(x)) {
            return mk(y - y, y - y);
        }
        if (x < 0) { /* exp(-inf + i inf or NaN) = 0 + 0i */
            return mk((T)0, is_nan(y) ? (T)0 : copysign((T)0, y));
        }
        return mk(x, y - y); /* +inf or NaN: inf + NaN i, NaN + NaN i */
    }
    if (x > (T)700) { /* exp(x) overflows before the product with cos, sin */
        T h = exp(x * (T)0.5);
        return mk(h * cos(y) * h, h * sin(y) * h);
    }
    T e = exp(x);
    return mk(e * cos(y), e * sin(y));
}
template <class T> PG_FN complex<T> log(complex<T> a)
{
    return mk(log(abs(a)), arctan2(a.im, a.re));
}
template <class T> PG_FN complex<T> sqrt(complex<T> a)
{
    /* the principal root, as C99's csqrt */
    if (a.re == 0 && a.im == 0) {
        return mk((T)0, a.im);
    }
    if (is_inf(a.im)) {
        return mk(inf<T>(), a.im);
    }
    if (is_nan(a.re)) {
        return mk(a.re, a.re);
    }
    if (is_inf(a.re)) {
        if (sign_bit(a.re)) {
            return mk(fabs(a.im - a.im), copysign(inf<T>(), a.im));
        }
        return mk(a.re, copysign(a.im - a.im, a.im));
    }
    /* near the largest finite numbers |re| + |z| overflows: the root of z/4, times 2 */
    T s = (fabs(a.re) > (T)1e300 || fabs(a.im) > (T)1e300) ? (T)0.25 : (T)1;
    T re = a.re * s, im = a.im * s;
    T t = sqrt((fabs(re) + hypot(re, im)) * (T)0.5);
    complex<T> r = re >= 0 ? mk(t, im / (2 * t)) : mk(fabs(im) / (2 * t), copysign(t, im));
    return s == 1 ? r : mk(r.re * 2, r.im * 2);
}
template <class T> PG_FN complex<T> sinh(complex<T> a)
{
    T x = a.re, y = a.im;
    if (is_finite(x) && is_finite(y)) {
        if (y == 0) {
            return mk(sinh(x), y);
        }
        if (fabs(x) > (T)700) { /* cosh(x) overflows before the product: e^|x| / 2 in halves */
            T e = exp(fabs(x) * (T)0.5), h = e * (T)0.5;
            return mk(copysign(h, x) * cos(y) * e, h * sin(y) * e);
        }
        return mk(sinh(x) * cos(y), cosh(x) * sin(y));
    }
    if (x == 0) { /* +-0 + i inf or NaN: +-0 + NaN i */
        return mk(x, y - y);
    }
    if (y == 0) { /* +-inf or NaN + +-0 i */
        return mk(x, y);
    }
    if (is_finite(x)) { /* x + i inf or NaN */
        return mk(y - y, y - y);
    }
    if (is_inf(x)) {
        if (!is_finite(y)) { /* +inf + NaN i, as NumPy's */
            return mk(x * x, y - y);
        }
        return mk(x * cos(y), inf<T>() * sin(y));
    }
    return mk(x, x); /* NaN + iy, y != 0 */
}
template <class T> PG_FN complex<T> cosh(complex<T> a)
{
    T x = a.re, y = a.im;
    if (is_finite(x) && is_finite(y)) {
        if (y == 0) {
            return mk(cosh(x), x * y);
        }
        if (fabs(x) > (T)700) { /* as sinh's */
            T e = exp(fabs(x) * (T)0.5), h = e * (T)0.5;
            return mk(h * cos(y) * e, copysign(h, x) * sin(y) * e);
        }
        return mk(cosh(x) * cos(y), sinh(x) * sin(y));
    }
    if (x == 0) { /* +-0 + i inf or NaN: NaN + 0i */
        return mk(y - y, (T)0);
    }
    if (y == 0) {
        if (is_nan(x)) {
            return mk(x, y);
        }
        return mk(inf<T>(), sign_bit(x) ? -y : y); /* +-inf +- 0i */
    }
    if (is_finite(x)) {
        return mk(y - y, y - y);
    }
    if (is_inf(x)) {
        if (!is_finite(y)) {
            return mk(inf<T>(), y - y);
        }
        return mk(inf<T>() * cos(y), x * sin(y));
    }
    return mk(x, x);
}
template <class T> PG_FN complex<T> tanh(complex<T> a)
{
    T x = a.re, y = a.im;
    if (!is_finite(x)) {
        if (is_nan(x)) { /* NaN + 0i, else NaN + NaN i */
            return mk(x, y == 0 ? y : x);
        }
        return mk(copysign((T)1, x), copysign((T)0, is_inf(y) ? y : sin(y) * cos(y)));
    }
    if (!is_finite(y)) { /* +-0 + NaN i for a zero x, else NaN + NaN i */
        return mk(x == 0 ? x : y - y, y - y);
    }
    if (fabs(x) >= (T)22) { /* tanh is +-1 to the last bit; the imaginary part tiny */
        T e = exp(-fabs(x));
        return mk(copysign((T)1, x), (T)4 * sin(y) * cos(y) * e * e);
    }
    /* Kahan's formula, as FreeBSD's ctanh */
    T t = tan(y), beta = (T)1 + t * t, s = sinh(x), rho = sqrt((T)1 + s * s);
    T den = (T)1 + beta * s * s;
    return mk((beta * rho * s) / den, t / den);
}
/* sin(z) = -i sinh(iz), cos(z) = cosh(iz), tan(z) = -i tanh(iz), as NumPy's */
template <class T> PG_FN complex<T> sin(complex<T> a)
{
    if (!is_finite(a.re) && is_inf(a.im)) { /* NaN + inf i, as NumPy's */
        return mk(a.re - a.re, inf<T>());
    }
    complex<T> t = sinh(mk(-a.im, a.re));
    return mk(t.im, -t.re);
}
template <class T> PG_FN complex<T> cos(complex<T> a) { return cosh(mk(-a.im, a.re)); }
template <class T> PG_FN complex<T> tan(complex<T> a)
{
    complex<T> t = tanh(mk(-a.im, a.re));
    return mk(t.im, -t.re);
}
/* Far from the origin (an infinity too; no NaN): log(2z) = log|z| + log 2 +
 * i arg(z), with no overflow on the way. The inverse functions below are
 * that plus terms of order 1/z^2. */
template <class T> PG_FN bool far_out(complex<T> z)
{
    const T big = (T)1e16; /* beyond it the terms in 1/z^2 are below double's last bit */
    return !is_nan(z.re) && !is_nan(z.im) && (fabs(z.re) > big || fabs(z.im) > big);
}
template <class T> PG_FN complex<T> log_twice(complex<T> z)
{
    T h = is_inf(z.re) || is_inf(z.im) ? inf<T>() : hypot(z.re, z.im);
    return mk(log(h) + (T)0.69314718055994530942, atan2(z.im, z.re));
}
/* The inverse functions are computed in the first quadrant (x, y >= +0),
 * where no formula crosses a branch cut, and the signs put back by their
 * symmetries, as FreeBSD's catrig.c: so a signed zero picks its side of a
 * cut as Annex G says. */
template <class T> PG_FN complex<T> arcsinh(complex<T> a)
{
    T x = a.re, y = a.im;
    if (is_nan(x) || is_nan(y)) {
        if (is_inf(x)) {
            return mk(x, y + y);
        }
        if (is_inf(y)) {
            return mk(fabs(y), x + x);
        }
        if (y == 0) {
            return mk(x + x, y);
        }
        return mk(nan<T>(), nan<T>());
    }
    if (x == 0 && fabs(y) <= 1) {
        /* the imaginary segment (arcsin's real one): i asin(y), exactly; the
         * formula below leaves a rounding's worth of real part on a GPU */
        return mk(x, asin(y));
    }
    /* log(z + sqrt(z^2 + 1)) */
    complex<T> z = mk(fabs(x), fabs(y));
    complex<T> r = far_out(z) ? log_twice(z) : log(z + sqrt(z * z + mk((T)1, (T)0)));
    return mk(copysign(r.re, x), copysign(r.im, y));
}
template <class T> PG_FN complex<T> arcsin(complex<T> a)
{
    if (is_inf(a.re) && is_nan(a.im)) { /* NaN + inf i, as NumPy's */
        return mk(a.im, inf<T>());
    }
    /* arcsin(z) = -i arcsinh(iz) */
    complex<T> t = arcsinh(mk(-a.im, a.re));
    return mk(t.im, -t.re);
}
template <class T> PG_FN complex<T> arccos(complex<T> a)
{
    const T pi_2 = (T)1.57079632679489661923, pi = (T)3.14159265358979323846;
    T x = a.re, y = a.im;
    if (is_nan(x) || is_nan(y)) {
        if (is_inf(x)) { /* NaN -+ inf i */
            return mk(y + y, -inf<T>());
        }
        if (is_inf(y)) {
            return mk(x + x, -y);
        }
        if (x == 0) {
            return mk(pi_2, y + y);
        }
        return mk(nan<T>(), nan<T>());
    }
    /* in the first quadrant: arccos(z) = pi/2 - arcsin(z), or, far out,
     * arg(z) - i log(2z); then arccos(-z) = pi - arccos(z), arccos(conj z) =
     * conj arccos(z) */
    complex<T> z = mk(fabs(x), fabs(y)), r;
    if (far_out(z)) {
        complex<T> l = log_twice(z);
        r = mk(l.im, -l.re);
    }
    else {
        complex<T> s = arcsinh(mk(-z.im, z.re)); /* i arcsin(z) */
        r = mk(pi_2 - s.im, -fabs(s.re));
    }
    if (sign_bit(x)) {
        r.re = pi - r.re;
    }
    return mk(r.re, sign_bit(y) ? -r.im : r.im);
}
template <class T> PG_FN complex<T> arccosh(complex<T> a)
{
    /* arccosh(z) = +-i arccos(z), the sign that makes the real part >= 0 */
    complex<T> w = arccos(a);
    if (is_nan(w.re) && is_nan(w.im)) {
        return mk(w.im, w.re);
    }
    if (is_nan(w.re)) { /* +-inf + NaN i, NaN + +-inf i */
        return mk(fabs(w.im), w.re);
    }
    if (is_nan(w.im)) { /* +-0 + NaN i: NaN + pi/2 i */
        return mk(w.im, w.re);
    }
    return mk(fabs(w.im), copysign(w.re, a.im));
}
template <class T> PG_FN complex<T> arctanh(complex<T> a)
{
    const T pi_2 = (T)1.57079632679489661923;
    T x = a.re, y = a.im;
    if (is_nan(x) || is_nan(y)) {
        if (is_inf(x)) {
            return mk(copysign((T)0, x), y + y);
        }
        if (is_inf(y)) {
            return mk((T)0, copysign(pi_2, y));
        }
        if (x == 0) {
            return mk(x, y + y);
        }
        return mk(nan<T>(), nan<T>());
    }
    complex<T> z = mk(fabs(x), fabs(y)), r;
    if (far_out(z)) { /* 1/z + i pi/2 */
        T re = (T)0;
        if (!is_inf(z.re) && !is_inf(z.im)) {
            /* re(1/z) = x / (x^2 + y^2), with no overflow on the way */
            T t = z.re >= z.im ? z.im / z.re : z.re / z.im;
            re = (z.re >= z.im ? (T)1 / z.re : t / z.im) / (1 + t * t);
        }
        r = mk(re, pi_2);
    }
    else { /* FreeBSD's: log1p(4x / ((1 - x)^2 + y^2)) / 4 + i atan2(2y, (1 - x)(1 + x) - y^2) / 2 */
        T d = (1 - z.re) * (1 - z.re) + z.im * z.im;
        r = mk(log1p(4 * z.re / d) * (T)0.25,
               atan2(2 * z.im, (1 - z.re) * (1 + z.re) - z.im * z.im) * (T)0.5);
    }
    return mk(copysign(r.re, x), copysign(r.im, y));
}
template <class T> PG_FN complex<T> arctan(complex<T> a)
{
    if (is_inf(a.re) && is_nan(a.im)) { /* +-pi/2 + 0i, as NumPy's */
        return mk(copysign((T)1.57079632679489661923, a.re), (T)0);
    }
    /* arctan(z) = -i arctanh(iz) */
    complex<T> t = arctanh(mk(-a.im, a.re));
    return mk(t.im, -t.re);
}
/* C99's complex product (Annex G.5.1, the C library's __muldc3): where the
 * plain formula gives NaN + NaN i from an infinite factor, the infinity */
template <class T> PG_FN complex<T> mul_annex_g(complex<T> p, complex<T> q)
{
    T a = p.re, b = p.im, c = q.re, d = q.im;
    T ac = a * c, bd = b * d, ad = a * d, bc = b * c;
    T x = ac - bd, y = ad + bc;
    if (is_nan(x) && is_nan(y)) {
        bool recalc = false;
        if (is_inf(a) || is_inf(b)) {
            a = copysign(is_inf(a) ? (T)1 : (T)0, a);
            b = copysign(is_inf(b) ? (T)1 : (T)0, b);
            c = is_nan(c) ? copysign((T)0, c) : c;
            d = is_nan(d) ? copysign((T)0, d) : d;
            recalc = true;
        }
        if (is_inf(c) || is_inf(d)) {
            c = copysign(is_inf(c) ? (T)1 : (T)0, c);
            d = copysign(is_inf(d) ? (T)1 : (T)0, d);
            a = is_nan(a) ? copysign((T)0, a) : a;
            b = is_nan(b) ? copysign((T)0, b) : b;
            recalc = true;
        }
        if (!recalc && (is_inf(ac) || is_inf(bd) || is_inf(ad) || is_inf(bc))) {
            a = is_nan(a) ? copysign((T)0, a) : a;
            b = is_nan(b) ? copysign((T)0, b) : b;
            c = is_nan(c) ? copysign((T)0, c) : c;
            d = is_nan(d) ? copysign((T)0, d) : d;
            recalc = true;
        }
        if (recalc) {
            x = inf<T>() * (a * c - b * d);
            y = inf<T>() * (a * d + b * c);
        }
    }
    return mk(x, y);
}
/* NumPy's npy_cpow: 1 for a zero exponent, 0 (or NaN) for a zero base,
 * integer exponents below 100 by products (1, 2, 3 unrolled), else the C
 * library's cpow, exp(b log a) with C99's product */
template <class T> PG_FN complex<T> pow(complex<T> a, complex<T> b)
{
    if (b.re == 0 && b.im == 0) {
        return mk((T)1, (T)0);
    }
    if (a.re == 0 && a.im == 0) {
        if (b.re > 0) {
            return mk((T)0, (T)0);
        }
        return mk(nan<T>(), nan<T>());
    }
    if (b.im == 0 && b.re == floor(b.re) && fabs(b.re) < 100) {
        long long n = (long long)b.re;
        if (n == 1) {
            return a;
        }
        if (n == 2) {
            return a * a;
        }
        if (n == 3) {
            return a * (a * a);
        }
        complex<T> r = mk((T)1, (T)0), x = a;
        unsigned long long m = n < 0 ? (unsigned long long)(-n) : (unsigned long long)n;
        while (m) {
            if (m & 1) {
                r = r * x;
            }
            m >>= 1;
            if (m) {
                x = x * x;
            }
        }
        return n < 0 ? mk((T)1, (T)0) / r : r;
    }
    return exp(mul_annex_g(b, log(a)));
}
template <class T> PG_FN complex<T> expm1(complex<T> a)
{
    return mk(expm1(a.re) * cos(a.im) - 2 * sin(a.im / 2) * sin(a.im / 2), exp(a.re) * sin(a.im));
}
/* the array API standard's expm1: exp's special values less 1 where a part
 * is infinite or NaN, +0 at +-0 + 0i (NumPy's formula above gives inf + NaN i
 * for inf + 0i, and -0 for -0 + 0i) */
template <class T> PG_FN complex<T> expm1_standard(complex<T> a)
{
    if (!is_finite(a.re) || !is_finite(a.im)) {
        complex<T> e = exp(a);
        return mk(e.re - 1, e.im);
    }
    if (a.re == 0 && a.im == 0) {
        return mk((T)0, a.im);
    }
    return expm1(a);
}
/* the array API standard's: tanh(+-inf + yi) for finite y is +-1 + 0i with the
 * sign of y (C99 and NumPy give the zero the sign of sin(2y)) */
template <class T> PG_FN complex<T> tanh_standard(complex<T> a)
{
    if (is_inf(a.re) && is_finite(a.im)) {
        return mk(copysign((T)1, a.re), copysign((T)0, a.im));
    }
    return tanh(a);
}
template <class T> PG_FN complex<T> log1p(complex<T> a)
{
    return log(mk((T)1 + a.re, a.im));
}
template <class T> PG_FN complex<T> exp2(complex<T> a)
{
    T ln2 = (T)0.693147180559945309417;
    return exp(mk(a.re * ln2, a.im * ln2));
}
template <class T> PG_FN complex<T> log2(complex<T> a)
{
    complex<T> l = log(a);
    T k = (T)1.44269504088896340736;
    return mk(l.re * k, l.im * k);
}
template <class T> PG_FN complex<T> log10(complex<T> a)
{
    complex<T> l = log(a);
    T k = (T)0.434294481903251827651;
    return mk(l.re * k, l.im * k);
}
template <class T> PG_FN complex<T> rint(complex<T> a) { return mk(rint(a.re), rint(a.im)); }

/* complex64's functions computed in complex128 and rounded once: the
 * formulas above lose bits to cancellation that float cannot spare */
#define PG_C64_VIA_C128(name)                                                          \
    PG_FN complex<float> name(complex<float> a)                                        \
    {                                                                                  \
        complex<double> r = name(mk((double)a.re, (double)a.im));                      \
        return mk((float)r.re, (float)r.im);                                           \
    }
PG_C64_VIA_C128(exp)
PG_C64_VIA_C128(log)
PG_C64_VIA_C128(sqrt)
PG_C64_VIA_C128(sin)
PG_C64_VIA_C128(cos)
PG_C64_VIA_C128(tan)
PG_C64_VIA_C128(sinh)
PG_C64_VIA_C128(cosh)
PG_C64_VIA_C128(tanh)
PG_C64_VIA_C128(arcsin)
PG_C64_VIA_C128(arccos)
PG_C64_VIA_C128(arctan)
PG_C64_VIA_C128(arcsinh)
PG_C64_VIA_C128(arccosh)
PG_C64_VIA_C128(arctanh)
PG_C64_VIA_C128(expm1)
PG_C64_VIA_C128(expm1_standard)
PG_C64_VIA_C128(log1p)
PG_C64_VIA_C128(exp2)
PG_C64_VIA_C128(log2)
PG_C64_VIA_C128(log10)
#undef PG_C64_VIA_C128
PG_FN complex<float> pow(complex<float> a, complex<float> b)
{
    if (b.im == 0 && b.re == floor(b.re) && fabs(b.re) < 100) {
        return pow<float>(a, b); /* NumPy's products, in float as NumPy's */
    }
    complex<double> r = pow(mk((double)a.re, (double)a.im), mk((double)b.re, (double)b.im));
    return mk((float)r.re, (float)r.im);
}

/* ---- ops that several dtypes share ------------------------------------------------ */
template <class T> PG_FN T maximum(T a, T b)
{
    if (is_nan(a)) {
        return a;
    }
    if (is_nan(b)) {
        return b;
    }
    return a >= b ? a : b;
}
template <class T> PG_FN T minimum(T a, T b)
{
    if (is_nan(a)) {
        return a;
    }
    if (is_nan(b)) {
        return b;
    }
    return a <= b ? a : b;
}
/* as maximum and minimum, but b where a and b compare equal (+0.0 and -0.0):
 * NumPy's float32 and float64 loops */
template <class T> PG_FN T maximum_last(T a, T b)
{
    if (is_nan(a)) {
        return a;
    }
    if (is_nan(b)) {
        return b;
    }
    return a > b ? a : b;
}
template <class T> PG_FN T minimum_last(T a, T b)
{
    if (is_nan(a)) {
        return a;
    }
    if (is_nan(b)) {
        return b;
    }
    return a < b ? a : b;
}
template <class T> PG_FN T fmax(T a, T b)
{
    if (is_nan(b)) {
        return a;
    }
    if (is_nan(a)) {
        return b;
    }
    return a >= b ? a : b;
}
template <class T> PG_FN T fmin(T a, T b)
{
    if (is_nan(b)) {
        return a;
    }
    if (is_nan(a)) {
        return b;
    }
    return a <= b ? a : b;
}
template <class T> PG_FN T float_sign(T a)
{
    return a > 0 ? (T)1 : a < 0 ? (T)-1 : a == 0 ? (T)0 : a;
}
template <class T> PG_FN complex<T> complex_sign(complex<T> a)
{
    /* NumPy 2's: z / |z|, 0 for 0, a unit for one infinite part (+0 the other) */
    T m = abs(a);
    if (is_nan(m)) {
        return mk(nan<T>(), nan<T>());
    }
    if (is_inf(m)) {
        if (is_inf(a.re)) {
            return is_inf(a.im) ? mk(nan<T>(), nan<T>()) : mk(a.re > 0 ? (T)1 : (T)-1, (T)0);
        }
        return mk((T)0, a.im > 0 ? (T)1 : (T)-1);
    }
    if (m == 0) {
        return mk((T)0, (T)0);
    }
    return mk(a.re / m, a.im / m);
}
/* NumPy's complex reciprocal: Smith's division of 1 by z */
template <class T> PG_FN complex<T> complex_reciprocal(complex<T> a)
{
    if (fabs(a.im) <= fabs(a.re)) {
        T r = a.im / a.re, d = a.re + a.im * r;
        return mk((T)1 / d, -r / d);
    }
    T r = a.re / a.im, d = a.re * r + a.im;
    return mk(r / d, (T)-1 / d);
}
template <class T> PG_FN T heaviside(T x, T h0)
{
    return is_nan(x) ? x : x < 0 ? (T)0 : x > 0 ? (T)1 : h0;
}
template <class T> PG_FN T logaddexp(T x, T y)
{
    if (x == y) {
        return x + log((T)2); /* the same infinity too */
    }
    T d = x - y;
    if (d > 0) {
        return x + log1p(exp(-d));
    }
    if (d <= 0) {
        return y + log1p(exp(d));
    }
    return d; /* nan */
}
template <class T> PG_FN T logaddexp2(T x, T y)
{
    T ln2 = (T)0.693147180559945309417;
    if (x == y) {
        return x + (T)1;
    }
    T d = x - y;
    if (d > 0) {
        return x + log1p(exp2(-d)) / ln2;
    }
    if (d <= 0) {
        return y + log1p(exp2(d)) / ln2;
    }
    return d;
}
/* float's logaddexp and logaddexp2 computed in double: near x == -y the
 * float formulas lose the result's low bits to cancellation */
PG_FN float logaddexp(float x, float y) { return (float)logaddexp((double)x, (double)y); }
PG_FN float logaddexp2(float x, float y) { return (float)logaddexp2((double)x, (double)y); }
template <class T> PG_FN T spacing(T x)
{
    if (is_inf(x)) {
        return nan<T>();
    }
    if (is_nan(x)) {
        return x;
    }
    if (x == (T)0) { /* NumPy: the smallest subnormal, positive for -0.0 too */
        return nextafter((T)0, inf<T>());
    }
    return nextafter(x, copysign(inf<T>(), x)) - x;
}
/* NumPy's integer reciprocal of 0 on x86: 1.0 / 0 converted as the CPU
 * does (the "integer indefinite", the lowest int32 or int64), 0 for the
 * narrower types and the unsigned ones */
template <class T> PG_FN T int_reciprocal(T x)
{
    if (x != 0) {
        return (T)(1 / x);
    }
    if ((T)-1 < (T)0 && sizeof(T) >= 4) {
        return (T)(1ull << (sizeof(T) * 8 - 1));
    }
    return (T)0;
}
/* float16's spacing as NumPy computes it, on the bits: always positive (the
 * gap above |x|, or below it for a negative power of two), inf at the
 * largest half, nan for inf and nan */
PG_FN float half_spacing(float x)
{
    unsigned short h = double_to_half((double)x);
    unsigned short e = h & 0x7c00u, m = h & 0x03ffu, r;
    if (e == 0x7c00u) {
        return nan<float>();
    }
    if (h == 0x7bffu) {
        return inf<float>();
    }
    if ((h & 0x8000u) && m == 0) {
        r = e > 0x2c00u ? (unsigned short)(e - 0x2c00u)
            : e > 0x0400u ? (unsigned short)(1u << ((e >> 10) - 2))
                          : (unsigned short)1u;
    }
    else {
        r = e > 0x2800u ? (unsigned short)(e - 0x2800u)
            : e > 0x0400u ? (unsigned short)(1u << ((e >> 10) - 1))
                          : (unsigned short)1u;
    }
    return half_to_float(r);
}
PG_FN float half_nextafter(float x, float y)
{
    unsigned short h = double_to_half((double)x), g = double_to_half((double)y);
    float fx = half_to_float(h), fy = half_to_float(g);
    if (is_nan(fx) || is_nan(fy)) {
        return fx + fy;
    }
    if (fx == fy) {
        return fx; /* NumPy's npy_half_nextafter: x (of +0 and -0, its sign) */
    }
    if (fx == 0) {
        return half_to_float((unsigned short)((g & 0x8000u) | 1u));
    }
    if ((fx < fy) == !(h & 0x8000u)) {
        h++;
    }
    else {
        h--;
    }
    return half_to_float(h);
}

} /* namespace pg */

#endif /* PYGPU_UFUNC_H */
