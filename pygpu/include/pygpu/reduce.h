/* pygpu's device code for the generated reductions and scans: built on
 * ufunc.h, included only by reduction kernels (so that an elementwise
 * kernel's first compile parses no more than it needs). */
#ifndef PYGPU_REDUCE_H
#define PYGPU_REDUCE_H

#include <pygpu/ufunc.h>

/* ================================================================================
 * Reductions and scans (pygpu/_ops/reduction.py)
 *
 * One reduction kernel and one scan kernel, each a template over a reduction
 * K (a struct that reduction.py renders from the table's Reduction entry and
 * one loop of its op: T the loop's compute type, A the accumulator, and
 * static identity(), map(x, r, aux, xo), combine(a, b), next(a, b) (a
 * combine where b's elements come after a's), post(a, k)), the input's
 * storage type and the output's.
 *
 * The problem is a strided view: output o = a * inner + b (two kept axes,
 * byte strides sa, sb in the input, oa, ob in the output, xa, xb in aux),
 * reduced along r (R elements, byte stride sr). A block is blockDim.x outputs
 * (x, adjacent b: coalesced when b is the contiguous axis) times blockDim.y
 * threads along r (y; coalesced when r is the contiguous axis), at most 256
 * threads, blockDim.y a power of two. gridDim.y blocks split r between them;
 * then each writes its partial (an A) to out[o * gridDim.y + blockIdx.y] and
 * a second launch reduces the partials (MAP false: the input is A, strides
 * in units of A).
 *
 * Each thread issues PG_REDUCE_UNROLL loads before it combines any (all in
 * flight at once; with VEC, where r is contiguous and every row 16-byte
 * aligned, PG_REDUCE_VEC_UNROLL loads of 16 bytes), combines them pairwise,
 * and about 64 elements so into a partial of its own before it joins the
 * thread's total (a sum's error grows as a blocked pairwise sum's). Then the
 * block's threads along y combine in a tree in shared memory, in a fixed
 * order: the answer does not depend on the schedule.
 * ================================================================================ */
namespace pg {

/* the extremes of each type: the start of max and min, which have no identity */
template <class T> struct limits {
    PG_FN static T lowest() { return -inf<T>(); }
    PG_FN static T highest() { return inf<T>(); }
    PG_FN static T nan_or_lowest() { return nan<T>(); }
    PG_FN static T nan_or_highest() { return nan<T>(); }
};
#define PG_INT_LIMITS(T, LO, HI)                                                       \
    template <> struct limits<T> {                                                     \
        PG_FN static T lowest() { return LO; }                                         \
        PG_FN static T highest() { return HI; }                                        \
        PG_FN static T nan_or_lowest() { return LO; }                                  \
        PG_FN static T nan_or_highest() { return HI; }                                 \
    };
PG_INT_LIMITS(bool, false, true)
PG_INT_LIMITS(signed char, (signed char)-128, (signed char)127)
PG_INT_LIMITS(unsigned char, (unsigned char)0, (unsigned char)255)
PG_INT_LIMITS(short, (short)-32768, (short)32767)
PG_INT_LIMITS(unsigned short, (unsigned short)0, (unsigned short)65535)
PG_INT_LIMITS(int, -2147483647 - 1, 2147483647)
PG_INT_LIMITS(unsigned int, 0u, 4294967295u)
PG_INT_LIMITS(long long, -9223372036854775807LL - 1, 9223372036854775807LL)
PG_INT_LIMITS(unsigned long long, 0ull, 18446744073709551615ull)
#undef PG_INT_LIMITS
template <class R> struct limits<complex<R>> {
    PG_FN static complex<R> lowest() { return mk(-inf<R>(), -inf<R>()); }
    PG_FN static complex<R> highest() { return mk(inf<R>(), inf<R>()); }
    PG_FN static complex<R> nan_or_lowest() { return mk(nan<R>(), nan<R>()); }
    PG_FN static complex<R> nan_or_highest() { return mk(nan<R>(), nan<R>()); }
};

template <class T> struct real_of {
    typedef T type;
};
template <class R> struct real_of<complex<R>> {
    typedef R type;
};
/* |x|^2: var's squared deviation (NumPy: re^2 + im^2 for complex) */
template <class T> PG_FN T abs2(T x) { return x * x; }
template <class R> PG_FN R abs2(complex<R> z) { return z.re * z.re + z.im * z.im; }
/* the element of aux (laid out like the output) that belongs to output o */
template <class T> PG_FN T aux_at(const char *aux, long long offset)
{
    return *(const T *)(aux + offset);
}

/* argmax and argmin: a value and its index along the axis. The identity is
 * the lowest (highest) value at index PG_ARG_NONE, after every index, so that
 * any element beats it, and nanargmax's NaNs become it (PG_ARG_NONE is left
 * where a slice has nothing else). */
#define PG_ARG_NONE 9223372036854775807LL
template <class T> struct arg {
    T v;
    long long i;
    PG_FN static arg at(T v, long long i)
    {
        arg a;
        a.v = v;
        a.i = i;
        return a;
    }
};
/* NumPy's argmax: the first NaN, else the first of the largest (one
 * predicate, then a select: no branches between a thread's loads) */
template <class T> PG_FN arg<T> arg_max(arg<T> a, arg<T> b)
{
    bool an = is_nan(a.v), bn = is_nan(b.v), first = b.i < a.i;
    bool take_b = bn ? (!an || first) : (!an && (a.v < b.v || (!(b.v < a.v) && first)));
    return take_b ? b : a;
}
template <class T> PG_FN arg<T> arg_min(arg<T> a, arg<T> b)
{
    bool an = is_nan(a.v), bn = is_nan(b.v), first = b.i < a.i;
    bool take_b = bn ? (!an || first) : (!an && (b.v < a.v || (!(a.v < b.v) && first)));
    return take_b ? b : a;
}
/* the same where b's elements all come after a's (a thread's own, in order):
 * a tie keeps a, with no index to compare */
template <class T> PG_FN arg<T> arg_max_next(arg<T> a, arg<T> b)
{
    return a.i == PG_ARG_NONE || (!is_nan(a.v) && (is_nan(b.v) || a.v < b.v)) ? b : a;
}
template <class T> PG_FN arg<T> arg_min_next(arg<T> a, arg<T> b)
{
    return a.i == PG_ARG_NONE || (!is_nan(a.v) && (is_nan(b.v) || b.v < a.v)) ? b : a;
}

/* nanmean and nanvar: a sum and how many numbers it has */
template <class T> struct counted {
    T v;
    long long n;
};
template <class T> PG_FN counted<T> counted_add(counted<T> a, counted<T> b)
{
    counted<T> c;
    c.v = a.v + b.v;
    c.n = a.n + b.n;
    return c;
}
template <class T> PG_FN counted<T> no_count()
{
    counted<T> c;
    c.v = cast<T>(0);
    c.n = 0;
    return c;
}
/* x, or nothing for a NaN */
template <class T, class X> PG_FN counted<T> count_number(X x)
{
    counted<T> c;
    c.v = is_nan(x) ? cast<T>(0) : cast<T>(x);
    c.n = is_nan(x) ? 0 : 1;
    return c;
}
/* |x - m|^2, or nothing for a NaN */
template <class T, class X> PG_FN counted<typename real_of<T>::type> nan_sqdev(X x, T m)
{
    typedef typename real_of<T>::type R;
    counted<R> c;
    c.v = is_nan(x) ? (R)0 : abs2(cast<T>(x) - m);
    c.n = is_nan(x) ? 0 : 1;
    return c;
}
/* nanvar's division: NaN where the degrees of freedom are not positive */
template <class R> PG_FN R dof_divide(counted<R> a, double ddof)
{
    double d = (double)a.n - ddof;
    return d > 0 ? (R)(a.v / (R)d) : nan<R>();
}

#ifndef PG_REDUCE_UNROLL
/* loads a thread has in flight (sum(axis=0) of 16384^2 float32 on an H100:
 * 4 0.85x the copy, 8 0.91x) */
#define PG_REDUCE_UNROLL 8
#endif
#ifndef PG_REDUCE_GROUPS
#define PG_REDUCE_GROUPS 16 /* unrolled steps combined before they join the total */
#endif
#ifndef PG_REDUCE_VEC_UNROLL
/* 16-byte loads a thread has in flight (a sum of 2^28 float32 on an H100:
 * 2 0.93x the copy, 4 1.00x) */
#define PG_REDUCE_VEC_UNROLL 4
#endif
#define PG_REDUCE_SHORT 4 /* rows this short (a thread each) ... */
#define PG_REDUCE_OUTPUTS 4 /* ... take this many outputs a thread at once */

/* 16 bytes of the input, loaded at once: 16 / sizeof(In) elements */
struct alignas(16) raw16 {
    unsigned int w[4];
};
template <class In> union pack16 {
    raw16 raw;
    In e[16 / sizeof(In)];
};
/* the pack's elements combined in order, the first at index r */
template <class K, class In>
PG_FN typename K::A reduce_pack(raw16 raw, long long r, const char *aux, long long xo)
{
    enum { V = 16 / sizeof(In) };
    pack16<In> w;
    w.raw = raw;
    typename K::A t = K::map(cast<typename compute_of<In>::type>(w.e[0]), r, aux, xo);
#pragma unroll
    for (int i = 1; i < V; i++) {
        t = K::next(t, K::map(cast<typename compute_of<In>::type>(w.e[i]), r + i, aux, xo));
    }
    return t;
}

/* what a thread loads of one element: the input's storage type (MAP), or a
 * partial result */
template <class K, class In, bool MAP> struct loaded {
    typedef In type;
};
template <class K, class In> struct loaded<K, In, false> {
    typedef typename K::A type;
};
/* the element as the reduction sees it: mapped (MAP), or as it is */
template <class K, class In, bool MAP>
PG_FN typename K::A reduce_take(typename loaded<K, In, MAP>::type v, long long r,
                                const char *aux, long long xo)
{
    if constexpr (MAP) {
        return K::map(cast<typename compute_of<In>::type>(v), r, aux, xo);
    }
    else {
        return v;
    }
}
template <class K, class In, bool MAP>
PG_FN typename K::A reduce_load(const char *q, long long r, const char *aux, long long xo)
{
    return reduce_take<K, In, MAP>(*(const typename loaded<K, In, MAP>::type *)q, r, aux, xo);
}

/* a thread's own elements, in the order of their indices (MAP); partials
 * of earlier launches interleave */
template <class K, bool MAP>
PG_FN typename K::A in_order(typename K::A a, typename K::A b)
{
    if constexpr (MAP) {
        return K::next(a, b);
    }
    else {
        return K::combine(a, b);
    }
}

/* o's place (a, b) in the kept dims [a, inner): no division where there is
 * one row of outputs (a short-row reduction divides for every output, and a
 * 64-bit division costs more than the loads), 32 bits where they suffice */
PG_FN void out_place(long long o, long long inner, long long n_out, long long &a, long long &b)
{
    if (inner >= n_out) {
        a = 0;
        b = o;
    }
    else if (((unsigned long long)o | (unsigned long long)inner) < (1ull << 32)) {
        a = (long long)((unsigned int)o / (unsigned int)inner);
        b = o - a * inner;
    }
    else {
        a = o / inner;
        b = o - a * inner;
    }
}

/* The reduction (the section's head says how): each thread issues its U
 * loads before it combines any, so that all are in flight at once. */
template <class K, class In, class Out, bool MAP, bool POST, bool VEC = false>
PG_FN void reduce(const char *in, char *out, const char *aux, long long n_out,
                  long long inner, long long R, long long sa, long long sb, long long sr,
                  long long oa, long long ob, long long xa, long long xb, double k)
{
    typedef typename K::A A;
    enum { U = PG_REDUCE_UNROLL };
    __shared__ A buf[256];
    const int tx = threadIdx.x, ty = threadIdx.y, TB = blockDim.x, TR = blockDim.y;
    /* strides in bytes (the partials' are given in elements) */
    const long long unit = MAP ? 1 : (long long)sizeof(A);
    const long long step = (long long)TR * gridDim.y, jump = step * sr * unit;
    if (MAP && TR == 1 && R <= PG_REDUCE_SHORT) {
        /* short rows, a thread an output: PG_REDUCE_OUTPUTS outputs a thread
         * at once, every load issued before any is combined */
        enum { OU = PG_REDUCE_OUTPUTS, RS = PG_REDUCE_SHORT };
        for (long long first = (long long)blockIdx.x * TB * OU + tx; first < n_out;
             first += (long long)gridDim.x * TB * OU) {
            typename loaded<K, In, MAP>::type w[OU][RS];
#pragma unroll
            for (int u = 0; u < OU; u++) {
                const long long o = first + (long long)u * TB;
                if (o < n_out) {
                    long long a, b;
                    out_place(o, inner, n_out, a, b);
                    const char *q = in + a * sa + b * sb;
#pragma unroll
                    for (int r = 0; r < RS; r++) {
                        if (r < R) {
                            w[u][r] = *(const typename loaded<K, In, MAP>::type *)(q + r * sr);
                        }
                    }
                }
            }
#pragma unroll
            for (int u = 0; u < OU; u++) {
                const long long o = first + (long long)u * TB;
                if (o < n_out) {
                    long long a, b;
                    out_place(o, inner, n_out, a, b);
                    const long long xo = a * xa + b * xb;
                    /* from the identity, as NumPy's reduce: the sum of [-0.0] is
                     * 0.0, gcd.reduce([-5]) 5 */
                    A acc = K::identity();
#pragma unroll
                    for (int r = 0; r < RS; r++) {
                        if (r < R) {
                            acc = K::next(acc, reduce_take<K, In, MAP>(w[u][r], r, aux, xo));
                        }
                    }
                    if constexpr (POST) {
                        *(Out *)(out + a * oa + b * ob) = cast<Out>(K::post(acc, k));
                    }
                    else {
                        ((A *)out)[(a * oa + b * ob) * gridDim.y + blockIdx.y] = acc;
                    }
                }
            }
        }
        return;
    }
    for (long long first = (long long)blockIdx.x * TB; first < n_out;
         first += (long long)gridDim.x * TB) {
        const long long o = first + tx;
        long long a, b;
        out_place(o, inner, n_out, a, b);
        const long long xo = a * xa + b * xb;
        A acc = K::identity();
        if (o < n_out) {
            long long r = (long long)blockIdx.y * TR + ty;
            const char *q = in + (a * sa + b * sb + r * sr) * unit;
            if constexpr (VEC) {
                /* r is contiguous and every row 16-byte aligned: the thread's
                 * elements are 16-byte packs (V elements each), then the tail */
                enum {
                    V = 16 / sizeof(In),
                    W = PG_REDUCE_VEC_UNROLL,
                    G = PG_REDUCE_GROUPS * U / (W * V) > 0 ? PG_REDUCE_GROUPS * U / (W * V) : 1
                };
                const long long rv_end = R / V, vjump = step * 16;
                long long rv = r;
                const char *qv = in + a * sa + b * sb + rv * 16;
                while (rv + (W - 1) * step < rv_end) {
                    A part = K::identity();
                    for (int g = 0; g < G && rv + (W - 1) * step < rv_end; g++) {
                        raw16 w[W];
                        A v[W];
#pragma unroll
                        for (int u = 0; u < W; u++) {
                            w[u] = *(const raw16 *)(qv + u * vjump);
                        }
#pragma unroll
                        for (int u = 0; u < W; u++) {
                            v[u] = reduce_pack<K, In>(w[u], (rv + u * step) * V, aux, xo);
                        }
#pragma unroll
                        for (int span = 1; span < W; span *= 2) {
#pragma unroll
                            for (int u = 0; u < W; u += 2 * span) {
                                v[u] = in_order<K, MAP>(v[u], v[u + span]);
                            }
                        }
                        part = in_order<K, MAP>(part, v[0]);
                        rv += W * step;
                        qv += W * vjump;
                    }
                    acc = in_order<K, MAP>(acc, part);
                }
                for (; rv < rv_end; rv += step, qv += vjump) {
                    acc = in_order<K, MAP>(acc,
                                     reduce_pack<K, In>(*(const raw16 *)qv, rv * V, aux, xo));
                }
                r = rv_end * V + (long long)blockIdx.y * TR + ty;
                q = in + a * sa + b * sb + r * sr;
            }
            while (!VEC && r + (U - 1) * step < R) {
                A part = K::identity();
                for (int g = 0; g < PG_REDUCE_GROUPS && r + (U - 1) * step < R; g++) {
                    typename loaded<K, In, MAP>::type w[U];
                    A v[U];
#pragma unroll
                    for (int u = 0; u < U; u++) {
                        w[u] = *(const typename loaded<K, In, MAP>::type *)(q + u * jump);
                    }
#pragma unroll
                    for (int u = 0; u < U; u++) {
                        v[u] = reduce_take<K, In, MAP>(w[u], r + u * step, aux, xo);
                    }
#pragma unroll
                    for (int span = 1; span < U; span *= 2) {
#pragma unroll
                        for (int u = 0; u < U; u += 2 * span) {
                            v[u] = in_order<K, MAP>(v[u], v[u + span]);
                        }
                    }
                    part = in_order<K, MAP>(part, v[0]);
                    r += U * step;
                    q += U * jump;
                }
                acc = in_order<K, MAP>(acc, part);
            }
            for (; r < R; r += step, q += jump) {
                acc = in_order<K, MAP>(acc, reduce_load<K, In, MAP>(q, r, aux, xo));
            }
        }
        if (TR > 1) {
            buf[ty * TB + tx] = acc;
            __syncthreads();
            for (int s = TR / 2; s > 0; s >>= 1) {
                if (ty < s) {
                    buf[ty * TB + tx] = K::combine(buf[ty * TB + tx], buf[(ty + s) * TB + tx]);
                }
                __syncthreads();
            }
            acc = buf[tx];
            __syncthreads();
        }
        if (ty == 0 && o < n_out) {
            if constexpr (POST) {
                *(Out *)(out + a * oa + b * ob) = cast<Out>(K::post(acc, k));
            }
            else {
                ((A *)out)[(a * oa + b * ob) * gridDim.y + blockIdx.y] = acc;
            }
        }
    }
}

/* The reduction over rows of outputs that lie side by side (b the contiguous
 * axis: sum(axis=0) of a C array), where b's run is a multiple of 16 bytes
 * and every row 16-byte aligned: a thread takes V = 16 / sizeof(In)
 * neighbouring outputs and loads their 16 bytes of a row at once, U rows in
 * flight, so that a warp reads 512 bytes of a row where one element a thread
 * reads 128. Otherwise as reduce (MAP: the input's elements; POST: the
 * outputs, else the partials of gridDim.y splits of r). */
template <class K, class In, class Out, bool POST>
PG_FN void reduce_cols(const char *in, char *out, const char *aux, long long n_out,
                       long long inner, long long R, long long sa, long long sb,
                       long long sr, long long oa, long long ob, long long xa,
                       long long xb, double k)
{
    typedef typename K::A A;
    typedef typename compute_of<In>::type C;
    enum { U = PG_REDUCE_UNROLL, V = 16 / sizeof(In) };
    __shared__ A buf[256 * V];
    const int tx = threadIdx.x, ty = threadIdx.y, TB = blockDim.x, TR = blockDim.y;
    const long long groups = n_out / V, ginner = inner / V;
    const long long step = (long long)TR * gridDim.y, jump = step * sr;
    for (long long first = (long long)blockIdx.x * TB; first < groups;
         first += (long long)gridDim.x * TB) {
        const long long g = first + tx;
        long long a, bg;
        out_place(g, ginner, groups, a, bg);
        const long long b = bg * V, xo = a * xa + b * xb;
        A acc[V];
#pragma unroll
        for (int v = 0; v < V; v++) {
            acc[v] = K::identity();
        }
        if (g < groups) {
            long long r = (long long)blockIdx.y * TR + ty;
            const char *q = in + a * sa + b * sb + r * sr;
            while (r + (U - 1) * step < R) {
                pack16<In> w[U];
#pragma unroll
                for (int u = 0; u < U; u++) {
                    w[u].raw = *(const raw16 *)(q + u * jump);
                }
#pragma unroll
                for (int u = 0; u < U; u++) {
#pragma unroll
                    for (int v = 0; v < V; v++) {
                        acc[v] = K::next(acc[v], K::map(cast<C>(w[u].e[v]), r + u * step,
                                                        aux, xo + v * xb));
                    }
                }
                r += U * step;
                q += U * jump;
            }
            for (; r < R; r += step, q += jump) {
                pack16<In> w;
                w.raw = *(const raw16 *)q;
#pragma unroll
                for (int v = 0; v < V; v++) {
                    acc[v] = K::next(acc[v], K::map(cast<C>(w.e[v]), r, aux, xo + v * xb));
                }
            }
        }
        if (TR > 1) {
#pragma unroll
            for (int v = 0; v < V; v++) {
                buf[(ty * TB + tx) * V + v] = acc[v];
            }
            __syncthreads();
            for (int s = TR / 2; s > 0; s >>= 1) {
                if (ty < s) {
#pragma unroll
                    for (int v = 0; v < V; v++) {
                        buf[(ty * TB + tx) * V + v] = K::combine(
                            buf[(ty * TB + tx) * V + v], buf[((ty + s) * TB + tx) * V + v]);
                    }
                }
                __syncthreads();
            }
#pragma unroll
            for (int v = 0; v < V; v++) {
                acc[v] = buf[tx * V + v];
            }
            __syncthreads();
        }
        if (ty == 0 && g < groups) {
#pragma unroll
            for (int v = 0; v < V; v++) {
                if constexpr (POST) {
                    *(Out *)(out + a * oa + (b + v) * ob) = cast<Out>(K::post(acc[v], k));
                }
                else {
                    ((A *)out)[(a * oa + (b + v) * ob) * gridDim.y + blockIdx.y] = acc[v];
                }
            }
        }
    }
}

/* Short rows back to back ((n, 2).sum(-1) of a C float32 array): R a power of
 * two with R * sizeof(In) dividing 16, so a 16-byte load holds P = V / R
 * whole rows. A thread loads PG_REDUCE_ROWS_UNROLL packs before it combines
 * any and writes their P outputs each; the input 16-byte aligned, one row of
 * outputs (a = 0), n_out a multiple of P (reduction.py checks). */
#ifndef PG_REDUCE_ROWS_UNROLL
#define PG_REDUCE_ROWS_UNROLL 4
#endif
template <class K, class In, class Out>
PG_FN void reduce_rows(const char *in, char *out, const char *aux, long long n_out,
                       long long inner, long long R, long long sa, long long sb,
                       long long sr, long long oa, long long ob, long long xa, long long xb,
                       double k)
{
    typedef typename K::A A;
    typedef typename compute_of<In>::type C;
    enum { V = 16 / sizeof(In), U = PG_REDUCE_ROWS_UNROLL };
    const int last = (int)R - 1, shift = R == 1 ? 0 : R == 2 ? 1 : R == 4 ? 2 : 3;
    const long long packs = n_out * R / V, stride = (long long)gridDim.x * blockDim.x;
    const raw16 *p = (const raw16 *)in;
    for (long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x; first < packs;
         first += stride * U) {
        pack16<In> w[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long i = first + u * stride;
            if (i < packs) {
                w[u].raw = p[i];
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long i = first + u * stride;
            if (i < packs) {
                A acc = K::identity();
#pragma unroll
                for (int e = 0; e < V; e++) {
                    const int j = e & last;
                    const long long o = i * (V >> shift) + (e >> shift);
                    const A x = K::map(cast<C>(w[u].e[e]), j, aux, o * xb);
                    acc = K::next(j == 0 ? K::identity() : acc, x);
                    if (j == last) {
                        *(Out *)(out + o * ob) = cast<Out>(K::post(acc, k));
                    }
                }
            }
        }
    }
}

/* The scan (cumsum, ufunc.accumulate): the same view and block shape, the
 * output strided along r too (or_). gridDim.y blocks take a chunk of r each
 * (chunk elements); a block starts from offsets[o * (gridDim.y - 1) + y - 1],
 * the combined totals of the chunks before it, which an earlier launch of
 * reduce and of scan over those totals made. Along y the block walks its
 * chunk blockDim.y elements at a time: a Hillis-Steele scan in shared memory,
 * plus the carry of the tiles before. With blockDim.y 1 each thread walks its
 * column alone. */
template <class K, class In, class Out, bool MAP, bool POST>
PG_FN void scan(const char *in, char *out, const char *offsets, long long n_out,
                long long inner, long long R, long long chunk, long long sa, long long sb,
                long long sr, long long oa, long long ob, long long or_)
{
    typedef typename K::A A;
    __shared__ A buf[256];
    const int tx = threadIdx.x, ty = threadIdx.y, TB = blockDim.x, TR = blockDim.y;
    const long long c = blockIdx.y, start = c * chunk;
    const long long end = R < start + chunk ? R : start + chunk;
    for (long long first = (long long)blockIdx.x * TB; first < n_out;
         first += (long long)gridDim.x * TB) {
        const long long o = first + tx;
        const bool live = o < n_out;
        const long long a = o / inner, b = o - a * inner;
        const long long unit = MAP ? 1 : (long long)sizeof(A);
        const long long ounit = POST ? 1 : (long long)sizeof(A);
        const char *p = in + (a * sa + b * sb) * unit;
        char *q = out + (a * oa + b * ob) * ounit;
        /* the first element of a row is itself (NumPy's accumulate copies it:
         * gcd.accumulate([-3]) is -3, add.accumulate([-0.0]) is -0.0) */
        bool fresh = c == 0;
        A carry = K::identity();
        if (live && c > 0) {
            carry = ((const A *)offsets)[o * (gridDim.y - 1) + c - 1];
        }
        if (TR == 1) {
            for (long long r = start; live && r < end; r++) {
                A v = reduce_load<K, In, MAP>(p + r * sr * unit, r, 0, 0);
                carry = fresh ? v : K::combine(carry, v);
                fresh = false;
                if constexpr (POST) {
                    *(Out *)(q + r * or_) = cast<Out>(K::post(carry, 0.0));
                }
                else {
                    ((A *)q)[r * or_] = carry;
                }
            }
            continue;
        }
        for (long long t = start; t < end; t += TR) {
            const long long r = t + ty;
            const bool here = live && r < end;
            buf[ty * TB + tx] =
                here ? reduce_load<K, In, MAP>(p + r * sr * unit, r, 0, 0) : K::identity();
            __syncthreads();
            for (int s = 1; s < TR; s <<= 1) {
                A before = ty >= s ? buf[(ty - s) * TB + tx] : K::identity();
                __syncthreads();
                if (ty >= s) {
                    buf[ty * TB + tx] = K::combine(before, buf[ty * TB + tx]);
                }
                __syncthreads();
            }
            if (here) {
                A v = fresh ? buf[ty * TB + tx] : K::combine(carry, buf[ty * TB + tx]);
                if constexpr (POST) {
                    *(Out *)(q + r * or_) = cast<Out>(K::post(v, 0.0));
                }
                else {
                    ((A *)q)[r * or_] = v;
                }
            }
            carry = fresh ? buf[(TR - 1) * TB + tx]
                          : K::combine(carry, buf[(TR - 1) * TB + tx]);
            fresh = false;
            __syncthreads();
        }
    }
}

/* A single-pass scan of one row (R elements, byte strides sr in, or_ out):
 * decoupled look-back (Merrill and Garland, "Single-pass Parallel Prefix
 * Scan with Decoupled Look-back", 2016). Each block takes the next tile of
 * scan_items<A> * PG_SCAN_THREADS elements (a ticket from state's counter, so
 * that tiles start in order and every tile it waits for has started), loads
 * it coalesced into shared memory, and each thread scans scan_items<A>
 * consecutive elements; the threads' totals are scanned in shared memory
 * (in each warp, then the warps').
 * Then thread 0 publishes the tile's total (flag 1), walks back over the
 * tiles before it, combining their totals until it meets one whose inclusive
 * prefix is known (flag 2), and publishes its own inclusive prefix. The row
 * is read once and written once. state: the ticket (8 bytes), then per
 * tile a flag (int) or, for an A of at most 4 bytes, a word of flag and value
 * (scan_word), all zero at the start; values: two A per tile (total,
 * inclusive prefix) where A is larger. Block size: 256 threads (a power of two). */
#ifndef PG_SCAN_THREADS
#define PG_SCAN_THREADS 256
#endif

/* a value another block wrote (after its __threadfence): read through
 * volatile bytes, whatever A is */
template <class A> PG_FN A load_published(const A *p)
{
    union {
        A a;
        unsigned char b[sizeof(A)];
    } u;
    const volatile unsigned char *q = (const volatile unsigned char *)p;
    for (unsigned i = 0; i < sizeof(A); i++) {
        u.b[i] = q[i];
    }
    return u.a;
}

/* a thread's elements: PG_SCAN_BYTES of the accumulator (128: 32 floats, 16
 * doubles, 8 complex doubles: 32 KB of shared memory a tile; on an H100, 256
 * threads of 128 bytes measured 0.81x the copy, 128 of 128 0.79x, 128 of 256
 * 0.72x, 64 of 512 0.55x; 40 floats a thread meet bank conflicts) */
#ifndef PG_SCAN_BYTES
#define PG_SCAN_BYTES 128
#endif
/* the blocks an SM keeps (__launch_bounds__ of the generated scan_row):
 * shared memory allows 6 of 256 threads. With a thread's loads all in
 * flight, ptxas's own choice for float32 is 56 registers, 4 blocks: cumsum
 * of 2^28 float32 on an H200 (gpu-logs/exp_scan.py, 2026-11-29) ran at
 * 0.63x the copy with 4 blocks, 0.69x with 5, 0.71x with 6 (40 registers,
 * a few bytes spilled), and 0.75x with 6 and 16-byte stores as well; the
 * loads in one loop with the stores, as before, 0.69x. The swizzled layout
 * (scan_layout) then measured 0.749x and 0.751x against the padded one's
 * 0.731x and 0.747x in the same run */
#ifndef PG_SCAN_MINB
#define PG_SCAN_MINB 6
#endif

template <class A> struct scan_items {
    enum { value = PG_SCAN_BYTES / (sizeof(A) <= 4 ? 4 : sizeof(A) <= 8 ? 8 : 16) };
};
/* Where element e of a tile (thread e / N's element e % N) is in shared
 * memory. 4-byte accumulators, 32 a thread: thread r's row of eight 16-byte
 * chunks, chunk c at c ^ (r & 7), so that eight threads reading a chunk of
 * their own rows at once, or writing the chunks of one row, meet eight
 * different sets of 4 banks: the threads' passes over their elements and the
 * 16-byte loads' and stores' copies read and write 16 bytes at a time.
 * Otherwise a pad word every 32: a thread's consecutive elements fall in
 * different banks. */
#ifndef PG_SCAN_SWIZZLE
#define PG_SCAN_SWIZZLE 1
#endif
template <class A, int N> struct scan_layout {
    enum {
        SWIZZLED = PG_SCAN_SWIZZLE && sizeof(A) == 4 && N == 32,
    };
    static PG_FN int at(int e)
    {
        if constexpr (SWIZZLED) {
            return (e & ~31) | ((((e >> 2) ^ (e >> 5)) & 7) << 2) | (e & 3);
        }
        else {
            return e + (e >> 5);
        }
    }
    /* at(e0 + u * STEP), with what is the same for every u worked out once */
    template <int STEP> static PG_FN int at_step(int e0, int u)
    {
        if constexpr (SWIZZLED ? STEP % 256 == 0 : STEP % 32 == 0) {
            return at(e0) + u * (SWIZZLED ? STEP : STEP + STEP / 32);
        }
        else {
            return at(e0 + u * STEP);
        }
    }
};
/* four 4-byte accumulators, read or written at once */
template <class A> union scan_quad {
    raw16 raw;
    A e[4];
};

/* An accumulator of at most 4 bytes travels with its flag in one 8-byte
 * word (value high, flag low): one store publishes both, one load reads
 * both, and no fence is needed between them. */
template <class A> PG_FN unsigned long long scan_word(A v, int flag)
{
    union {
        A a;
        unsigned int u;
    } c;
    c.u = 0;
    c.a = v;
    return ((unsigned long long)c.u << 32) | (unsigned int)flag;
}
template <class A> PG_FN A scan_word_value(unsigned long long w)
{
    union {
        A a;
        unsigned int u;
    } c;
    c.u = (unsigned int)(w >> 32);
    return c.a;
}

template <class K, class In, class Out>
PG_FN void scan_row(const char *in, char *out, char *state, char *values, long long R,
                    long long sr, long long or_)
{
    typedef typename K::A A;
    enum {
        N = scan_items<A>::value,
        T = PG_SCAN_THREADS,
        TILE = scan_items<A>::value * PG_SCAN_THREADS,
        WARPS = PG_SCAN_THREADS / 32
    };
    static_assert(T % 32 == 0, "PG_SCAN_THREADS: whole warps");
    typedef scan_layout<A, N> L;
    __shared__ __align__(16) A tile_buf[L::SWIZZLED ? TILE : TILE + TILE / 32];
    __shared__ A totals[T];
    __shared__ A warp_totals[WARPS];
    __shared__ A prefix;
    __shared__ A look[32];
    __shared__ long long ticket;
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    unsigned long long *counter = (unsigned long long *)state;
    volatile int *flags = (volatile int *)(state + 8);
    A *aggregates = (A *)values;
    const long long tiles = (R + TILE - 1) / TILE;
    A *inclusive = aggregates + tiles;
    if (t == 0) {
        ticket = (long long)atomicAdd(counter, 1ull);
    }
    __syncthreads();
    const long long tile = ticket, base = tile * TILE;
    /* into shared memory, every load of the thread issued before the first
     * store (in one loop, ptxas kept 4 to 11 loads in flight, and the tile's
     * load took several memory latencies): a whole tile of a contiguous row
     * 16 bytes at once, the VI elements from base + (u * T + t) * VI (a
     * chunk of the swizzled layout, stored at once, where VI is 4; element
     * by element where VI is more, or into the padded layout); otherwise
     * element base + u * T + t */
    enum { VI = 16 / sizeof(In) };
    if (N % VI == 0 && base + TILE <= R && sr == (long long)sizeof(In) &&
        ((unsigned long long)in & 15) == 0) {
        raw16 w[N / VI];
        const raw16 *p = (const raw16 *)(in + base * (long long)sizeof(In)) + t;
#pragma unroll
        for (int u = 0; u < N / VI; u++) {
            w[u] = p[u * T];
        }
#pragma unroll
        for (int u = 0; u < N / VI; u++) {
            pack16<In> v;
            v.raw = w[u];
            const int e = (u * T + t) * VI;
            A *q = tile_buf + L::template at_step<T * VI>(t * VI, u);
            if constexpr (L::SWIZZLED && VI == 4) { /* a chunk */
                scan_quad<A> a;
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    a.e[k] = reduce_take<K, In, true>(v.e[k], base + e + k, 0, 0);
                }
                *(raw16 *)q = a.raw;
            }
            else if constexpr (L::SWIZZLED) { /* more than a chunk */
#pragma unroll
                for (int k = 0; k < VI; k++) {
                    tile_buf[L::at(e + k)] = reduce_take<K, In, true>(v.e[k], base + e + k, 0, 0);
                }
            }
            else { /* L::at(e + k) is L::at(e) + k: VI divides into 32 */
#pragma unroll
                for (int k = 0; k < VI; k++) {
                    q[k] = reduce_take<K, In, true>(v.e[k], base + e + k, 0, 0);
                }
            }
        }
    }
    else {
        In v[N];
#pragma unroll
        for (int u = 0; u < N; u++) {
            const long long r = base + (long long)u * T + t;
            if (r < R) {
                v[u] = *(const In *)(in + r * sr);
            }
        }
#pragma unroll
        for (int u = 0; u < N; u++) {
            const long long r = base + (long long)u * T + t;
            tile_buf[L::template at_step<T>(t, u)] =
                r < R ? reduce_take<K, In, true>(v[u], r, 0, 0) : K::identity();
        }
    }
    __syncthreads();
    /* each thread's N consecutive elements: their total now, their scan once
     * the prefix is known (read again from shared memory: no registers for
     * the N elements; with them, 0.66x the copy on an H100, without 0.81x);
     * the threads' totals: scanned in each warp, then the warps' totals */
    if constexpr (L::SWIZZLED) {
        const raw16 *row = (const raw16 *)(tile_buf + t * N);
        scan_quad<A> a;
        a.raw = row[t & 7];
        A run = a.e[0];
#pragma unroll
        for (int c = 0; c < 8; c++) {
            if (c > 0) {
                a.raw = row[c ^ (t & 7)];
                run = K::combine(run, a.e[0]);
            }
#pragma unroll
            for (int k = 1; k < 4; k++) {
                run = K::combine(run, a.e[k]);
            }
        }
        totals[t] = run;
    }
    else {
        A run = tile_buf[L::at(t * N)];
#pragma unroll
        for (int j = 1; j < N; j++) {
            run = K::combine(run, tile_buf[L::at(t * N + j)]);
        }
        totals[t] = run;
    }
    __syncwarp();
    for (int s = 1; s < 32; s <<= 1) {
        A before = lane >= s ? totals[t - s] : K::identity();
        __syncwarp();
        if (lane >= s) {
            totals[t] = K::combine(before, totals[t]);
        }
        __syncwarp();
    }
    __syncthreads();
    if (t == 0) {
        A run = totals[31];
        warp_totals[0] = run;
        for (int w = 1; w < WARPS; w++) {
            run = K::combine(run, totals[w * 32 + 31]);
            warp_totals[w] = run;
        }
    }
    __syncthreads();
    /* the first warp publishes the tile's total, then looks back 32 tiles at
     * a time (a lane each, the nearest in lane 0) until a tile's inclusive
     * prefix is known: the windows' values combined in tile order */
    constexpr bool PACKED = sizeof(A) <= 4;
    volatile unsigned long long *words = (volatile unsigned long long *)(state + 8);
    if (t < 32) {
        const A total = warp_totals[WARPS - 1];
        if (tile == 0) {
            if (t == 0) {
                if constexpr (PACKED) {
                    words[0] = scan_word(total, 2);
                }
                else {
                    inclusive[0] = total;
                    __threadfence();
                    flags[0] = 2;
                }
            }
        }
        else {
            if (t == 0) {
                if constexpr (PACKED) {
                    words[tile] = scan_word(total, 1);
                }
                else {
                    aggregates[tile] = total;
                    __threadfence();
                    flags[tile] = 1;
                }
            }
            A acc = K::identity();
            bool have = false;
            for (long long hi = tile - 1;; hi -= 32) {
                const long long j = hi - t;
                int f = 0;
                if constexpr (PACKED) {
                    if (j >= 0) {
                        unsigned long long w;
                        while (((w = words[j]) & 3ull) == 0) {
                        }
                        f = (int)(w & 3ull);
                        look[t] = scan_word_value<A>(w);
                    }
                }
                else {
                    if (j >= 0) {
                        while ((f = flags[j]) == 0) {
                        }
                    }
                    __threadfence();
                    if (j >= 0) {
                        look[t] = load_published(f == 2 ? inclusive + j : aggregates + j);
                    }
                }
                const unsigned found = __ballot_sync(0xffffffffu, f == 2);
                __syncwarp();
                if (t == 0) {
                    /* lanes 0..last: the last one the earliest tile */
                    const int last = found ? __ffs((int)found) - 1 : 31;
                    A w = look[last];
                    for (int l = last - 1; l >= 0; l--) {
                        w = K::combine(w, look[l]);
                    }
                    acc = have ? K::combine(w, acc) : w;
                    have = true;
                }
                __syncwarp();
                if (found) {
                    break;
                }
            }
            if (t == 0) {
                prefix = acc;
                if constexpr (PACKED) {
                    words[tile] = scan_word(K::combine(acc, total), 2);
                }
                else {
                    inclusive[tile] = K::combine(acc, total);
                    __threadfence();
                    flags[tile] = 2;
                }
            }
        }
    }
    __syncthreads();
    /* what comes before this thread's elements: the tiles, warps and threads
     * before; nothing at all for the row's first element (NumPy's accumulate
     * copies it: add.accumulate([-0.0]) is -0.0) */
    bool any = tile > 0;
    A before = prefix;
    if (warp > 0) {
        before = any ? K::combine(before, warp_totals[warp - 1]) : warp_totals[warp - 1];
        any = true;
    }
    if (lane > 0) {
        before = any ? K::combine(before, totals[t - 1]) : totals[t - 1];
        any = true;
    }
    if constexpr (L::SWIZZLED) {
        raw16 *row = (raw16 *)(tile_buf + t * N);
        A run = before;
#pragma unroll
        for (int c = 0; c < 8; c++) {
            scan_quad<A> a;
            a.raw = row[c ^ (t & 7)];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                run = (c > 0 || k > 0 || any) ? K::combine(run, a.e[k]) : a.e[k];
                a.e[k] = run;
            }
            row[c ^ (t & 7)] = a.raw;
        }
    }
    else {
        A run = any ? K::combine(before, tile_buf[L::at(t * N)]) : tile_buf[L::at(t * N)];
        tile_buf[L::at(t * N)] = run;
#pragma unroll
        for (int j = 1; j < N; j++) {
            run = K::combine(run, tile_buf[L::at(t * N + j)]);
            tile_buf[L::at(t * N + j)] = run;
        }
    }
    __syncthreads();
    enum { VO = 16 / sizeof(Out) };
    if (N % VO == 0 && base + TILE <= R && or_ == (long long)sizeof(Out) &&
        ((unsigned long long)out & 15) == 0) {
        raw16 *p = (raw16 *)(out + base * (long long)sizeof(Out)) + t;
#pragma unroll
        for (int u = 0; u < N / VO; u++) {
            const A *q = tile_buf + L::template at_step<T * VO>(t * VO, u);
            pack16<Out> w;
            if constexpr (L::SWIZZLED && VO == 4) { /* a chunk */
                scan_quad<A> a;
                a.raw = *(const raw16 *)q;
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    w.e[k] = cast<Out>(K::post(a.e[k], 0.0));
                }
            }
            else if constexpr (L::SWIZZLED) { /* more than a chunk */
                const int e = (u * T + t) * VO;
#pragma unroll
                for (int k = 0; k < VO; k++) {
                    w.e[k] = cast<Out>(K::post(tile_buf[L::at(e + k)], 0.0));
                }
            }
            else { /* L::at(e + k) is L::at(e) + k: VO divides into 32 */
#pragma unroll
                for (int k = 0; k < VO; k++) {
                    w.e[k] = cast<Out>(K::post(q[k], 0.0));
                }
            }
            p[u * T] = w.raw;
        }
    }
    else {
#pragma unroll
        for (int u = 0; u < N; u++) {
            const long long r = base + (long long)u * T + t;
            if (r < R) {
                *(Out *)(out + r * or_) =
                    cast<Out>(K::post(tile_buf[L::template at_step<T>(t, u)], 0.0));
            }
        }
    }
}

} /* namespace pg */

#endif /* PYGPU_REDUCE_H */
