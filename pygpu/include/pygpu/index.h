/* pygpu's device code for indexing (pygpu/_ops/indexing.py): mask
 * compaction (x[mask], nonzero, compress, extract), its inverse (x[mask] = v,
 * place) and the gather and scatter of integer-array indexing (x[i, j],
 * take, put), which check every index against its axis on the device.
 *
 * Masks are contiguous bytes (any nonzero byte is true), cut into tiles of
 * PG_INDEX_TILE elements: element base + j * THREADS + t of a tile is thread
 * t's j-th, so that each row j of a tile is read and written coalesced. Three
 * launches select in order, whatever the order of blocks: count (a count per
 * tile), scan (one block: the tiles' counts to exclusive offsets, the total
 * after them; skipped for one tile, whose offset is 0) and a compaction
 * (each element's place: its tile's offset, the counts of the rows and warps
 * before it in the tile, the lanes before it in its warp's ballot). A single
 * tile is selected in one launch, which also leaves its count (x[mask] into
 * an output of the tile's size). */
#ifndef PYGPU_INDEX_H
#define PYGPU_INDEX_H

#define PG_INDEX_FN __device__ __forceinline__
#define PG_INDEX_THREADS 256
#define PG_INDEX_ROWS 16
#define PG_INDEX_TILE (PG_INDEX_THREADS * PG_INDEX_ROWS)
#define PG_INDEX_SCAN_THREADS 1024
#define PG_INDEX_MAXDIMS 32 /* pygpu arrays' axes (PG_MAXDIMS) */
/* move's description: 2 + 3 axes' worth + per index array 3 + axes */
#define PG_INDEX_META                                                                  \
    (2 + 3 * PG_INDEX_MAXDIMS + PG_INDEX_MAXDIMS * (3 + PG_INDEX_MAXDIMS))

namespace pg {
namespace index {

enum {
    THREADS = PG_INDEX_THREADS,
    ROWS = PG_INDEX_ROWS,
    TILE = PG_INDEX_TILE,
    WARPS = PG_INDEX_THREADS / 32
};

/* an element moved as its bytes */
struct alignas(16) b16 {
    unsigned long long lo, hi;
};
template <int S> struct word;
template <> struct word<1> {
    typedef unsigned char type;
};
template <> struct word<2> {
    typedef unsigned short type;
};
template <> struct word<4> {
    typedef unsigned int type;
};
template <> struct word<8> {
    typedef unsigned long long type;
};
template <> struct word<16> {
    typedef b16 type;
};

PG_INDEX_FN int
warp_sum(int v)
{
    for (int s = 16; s > 0; s >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, s);
    }
    return v;
}

/* the nonzero bytes of a word */
PG_INDEX_FN int
nonzero_bytes(unsigned int w)
{
    return __popc((((w & 0x7f7f7f7fu) + 0x7f7f7f7fu) | w) & 0x80808080u);
}

/* r / m and r % m (m > 0), in 32 bits where both fit (an H100 divides 64-bit
 * integers in software) */
PG_INDEX_FN long long
split(long long &r, long long m)
{
    if ((unsigned long long)(r | m) <= 0xffffffffull) {
        const unsigned int q = (unsigned int)r / (unsigned int)m;
        const long long c = (long long)((unsigned int)r - q * (unsigned int)m);
        r = q;
        return c;
    }
    const long long c = r % m;
    r /= m;
    return c;
}

/* counts[tile]: the nonzero bytes of each tile of mask[0, n) */
PG_INDEX_FN void
count(const unsigned char *mask, long long n, long long *counts)
{
    __shared__ int warps[WARPS];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const bool aligned = ((unsigned long long)mask & 15) == 0;
    for (long long tile = blockIdx.x; tile * TILE < n; tile += gridDim.x) {
        const long long base = tile * TILE;
        int c = 0;
        if (aligned && base + TILE <= n) { /* 16 bytes a thread, coalesced */
            const uint4 v = ((const uint4 *)(mask + base))[t];
            c = nonzero_bytes(v.x) + nonzero_bytes(v.y) + nonzero_bytes(v.z) +
                nonzero_bytes(v.w);
        }
        else {
            for (int j = 0; j < ROWS; j++) {
                const long long e = base + (long long)j * THREADS + t;
                c += e < n && mask[e] != 0;
            }
        }
        c = warp_sum(c);
        if (lane == 0) {
            warps[warp] = c;
        }
        __syncthreads();
        if (t == 0) {
            long long total = 0;
            for (int w = 0; w < WARPS; w++) {
                total += warps[w];
            }
            counts[tile] = total;
        }
        __syncthreads();
    }
}

/* counts[0, tiles) to exclusive offsets in place, the total to counts[tiles]:
 * one block of PG_INDEX_SCAN_THREADS threads, a run of tiles each */
PG_INDEX_FN void
scan(long long *counts, long long tiles)
{
    __shared__ long long sums[PG_INDEX_SCAN_THREADS];
    const int t = threadIdx.x;
    const long long run = (tiles + PG_INDEX_SCAN_THREADS - 1) / PG_INDEX_SCAN_THREADS;
    const long long lo = t * run < tiles ? t * run : tiles;
    const long long hi = lo + run < tiles ? lo + run : tiles;
    long long s = 0;
#pragma unroll 8
    for (long long i = lo; i < hi; i++) {
        s += counts[i];
    }
    sums[t] = s;
    __syncthreads();
    for (int d = 1; d < PG_INDEX_SCAN_THREADS; d <<= 1) { /* inclusive, Hillis-Steele */
        const long long before = t >= d ? sums[t - d] : 0;
        __syncthreads();
        sums[t] += before;
        __syncthreads();
    }
    long long at = sums[t] - s;
    for (long long i = lo; i < hi; i++) {
        const long long c = counts[i];
        counts[i] = at;
        at += c;
    }
    if (t == PG_INDEX_SCAN_THREADS - 1) {
        counts[tiles] = sums[t];
    }
}

/* scan's work with its loads in flight together (PG_INDEX_SCAN_BATCH of a
 * thread's run at once, where scan's loop reads one after another) and the
 * block's sum by warp shuffles; the total also to *total where not NULL (a
 * page-locked word the host reads after a wait, rather than a copy) */
#ifndef PG_INDEX_SCAN_BATCH
#define PG_INDEX_SCAN_BATCH 8
#endif
PG_INDEX_FN void
scan_batched(long long *counts, long long tiles, long long *total)
{
    enum { B = PG_INDEX_SCAN_BATCH, SW = PG_INDEX_SCAN_THREADS / 32 };
    __shared__ long long warp_sums[SW];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const long long run = (tiles + PG_INDEX_SCAN_THREADS - 1) / PG_INDEX_SCAN_THREADS;
    const long long lo = t * run < tiles ? t * run : tiles;
    const long long hi = lo + run < tiles ? lo + run : tiles;
    long long s = 0;
    for (long long i = lo; i < hi; i += B) {
        long long c[B];
#pragma unroll
        for (int u = 0; u < B; u++) {
            c[u] = i + u < hi ? counts[i + u] : 0;
        }
#pragma unroll
        for (int u = 0; u < B; u++) {
            s += c[u];
        }
    }
    long long inclusive = s; /* the runs' sums, scanned: in the warp, then its warps */
    for (int d = 1; d < 32; d <<= 1) {
        const long long v = __shfl_up_sync(0xffffffffu, inclusive, d);
        inclusive += lane >= d ? v : 0;
    }
    if (lane == 31) {
        warp_sums[warp] = inclusive;
    }
    __syncthreads();
    for (int w = 0; w < warp; w++) {
        inclusive += warp_sums[w];
    }
    long long at = inclusive - s;
    for (long long i = lo; i < hi; i += B) {
        long long c[B];
#pragma unroll
        for (int u = 0; u < B; u++) {
            c[u] = i + u < hi ? counts[i + u] : 0;
        }
#pragma unroll
        for (int u = 0; u < B; u++) {
            if (i + u < hi) {
                counts[i + u] = at;
            }
            at += c[u];
        }
    }
    if (t == PG_INDEX_SCAN_THREADS - 1) {
        counts[tiles] = inclusive;
        if (total != 0) {
            *total = inclusive;
        }
    }
}

/* out[place] = x[e]: x[mask] */
template <class T> struct take_values {
    const T *x;
    T *out;
    PG_INDEX_FN void operator()(long long e, long long place) const
    {
        out[place] = x[e];
    }
};

/* select's emits of a tile's rows: element base + j * THREADS + t where its
 * bit of ballots[j] is set, at start + its row's and warp's place (before)
 * + the lanes before it */
template <class Emit>
PG_INDEX_FN void
emit_rows(const Emit &emit, const unsigned int (&ballots)[ROWS], long long base,
          long long start, const int *before, int t, int lane, int warp)
{
    const unsigned int lower = (1u << lane) - 1u;
#pragma unroll
    for (int j = 0; j < ROWS; j++) {
        if (ballots[j] >> lane & 1u) {
            emit(base + (long long)j * THREADS + t,
                 start + before[j * WARPS + warp] + __popc(ballots[j] & lower));
        }
    }
}
/* x[mask]'s: PG_INDEX_BATCH 1 reads the rows' elements first, their loads in
 * flight together (a store to out between two loads of x would keep the
 * compiler from moving the second before it: the two may overlap, for all
 * it knows), then writes them */
#ifndef PG_INDEX_BATCH
#define PG_INDEX_BATCH 1
#endif
template <class T>
PG_INDEX_FN void
emit_rows(const take_values<T> &emit, const unsigned int (&ballots)[ROWS],
          long long base, long long start, const int *before, int t, int lane, int warp)
{
    const unsigned int lower = (1u << lane) - 1u;
    if (PG_INDEX_BATCH && sizeof(T) <= 8) {
        T v[ROWS];
#pragma unroll
        for (int j = 0; j < ROWS; j++) {
            if (ballots[j] >> lane & 1u) {
                v[j] = emit.x[base + (long long)j * THREADS + t];
            }
        }
#pragma unroll
        for (int j = 0; j < ROWS; j++) {
            if (ballots[j] >> lane & 1u) {
                emit.out[start + before[j * WARPS + warp] +
                         __popc(ballots[j] & lower)] = v[j];
            }
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < ROWS; j++) {
        if (ballots[j] >> lane & 1u) {
            emit(base + (long long)j * THREADS + t,
                 start + before[j * WARPS + warp] + __popc(ballots[j] & lower));
        }
    }
}

/* Each true element e of mask[0, n) in order: emit(e, its place). offsets:
 * the tiles' exclusive offsets (NULL for one tile). total (one tile only, so
 * one block: count and select in one launch), where not NULL: the number of
 * true elements. */
template <class Emit>
PG_INDEX_FN void
select(const unsigned char *mask, long long n, const long long *offsets, Emit emit,
       long long *total = 0)
{
    __shared__ int before[ROWS * WARPS];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    for (long long tile = blockIdx.x; tile * TILE < n; tile += gridDim.x) {
        const long long base = tile * TILE;
        unsigned int ballots[ROWS];
#pragma unroll
        for (int j = 0; j < ROWS; j++) {
            const long long e = base + (long long)j * THREADS + t;
            ballots[j] = __ballot_sync(0xffffffffu, e < n && mask[e] != 0);
            if (lane == 0) {
                before[j * WARPS + warp] = __popc(ballots[j]);
            }
        }
        __syncthreads();
        if (warp == 0) { /* the ROWS * WARPS counts, in element order, to offsets */
            enum { PER = ROWS * WARPS / 32 };
            int mine[PER], s = 0;
#pragma unroll
            for (int u = 0; u < PER; u++) {
                mine[u] = before[lane * PER + u];
                s += mine[u];
            }
            int inclusive = s;
            for (int d = 1; d < 32; d <<= 1) {
                const int v = __shfl_up_sync(0xffffffffu, inclusive, d);
                inclusive += lane >= d ? v : 0;
            }
            int at = inclusive - s;
#pragma unroll
            for (int u = 0; u < PER; u++) {
                before[lane * PER + u] = at;
                at += mine[u];
            }
            if (total != 0 && lane == 31) { /* the last lane's end: the tile's count */
                *total = at;
            }
        }
        __syncthreads();
        const long long start = offsets == 0 ? 0 : offsets[tile];
        emit_rows(emit, ballots, base, start, before, t, lane, warp);
        __syncthreads();
    }
}

/* x[e] = v[place % nv]: x[mask] = v, place */
template <class T> struct put_values {
    T *x;
    const T *v;
    long long nv;
    PG_INDEX_FN void operator()(long long e, long long place) const
    {
        x[e] = v[nv == 1 ? 0 : place % nv];
    }
};

/* out[k * count + place] = coordinate k of e in a C-ordered shape (nd axes):
 * nonzero */
struct coordinates {
    long long *out;
    long long count;
    const long long *shape;
    int nd;
    PG_INDEX_FN void operator()(long long e, long long place) const
    {
        for (int k = nd - 1; k > 0; k--) {
            out[k * count + place] = split(e, shape[k]);
        }
        out[place] = e;
    }
};

/* Integer-array indexing, gathering (PUT false: out[i] = src[offset of i])
 * or scattering (PUT true: src[offset of i] = values[i]); i runs over the
 * result in C order. meta (long longs), for nd axes of the result and k
 * index arrays:
 *   nd, k, shape[nd], stride of src[nd] (bytes; 0 on the index arrays'
 *   axes), stride of values[nd] (bytes; PUT only),
 *   then for each index array: the size of the axis it indexes, that axis's
 *   stride in src (bytes), the array's address less that of idx (bytes), its
 *   strides along the result's axes[nd] (elements; 0 elsewhere).
 * An index below 0 counts from the end; one outside the axis moves nothing
 * and leaves in *error the complement of the smallest i * k + (its array)
 * (atomicMax on a zeroed word: 0 is no error). WRITE false (with PUT): the
 * indices checked, nothing moved, so that a scatter can be refused before
 * it writes anything, as NumPy's is. */
template <int S, class I, bool PUT, bool WRITE = true>
PG_INDEX_FN void
move(char *src, char *other, const char *idx, const long long *meta_in, long long n,
     unsigned long long *error)
{
    typedef typename word<S>::type W;
    __shared__ long long meta[PG_INDEX_META];
    {
        const int nd = (int)meta_in[0], nk = (int)meta_in[1];
        const int size = 2 + 3 * nd + nk * (3 + nd);
        for (int j = threadIdx.x; j < size; j += blockDim.x) {
            meta[j] = meta_in[j];
        }
        __syncthreads();
    }
    const int nd = (int)meta[0], nk = (int)meta[1];
    const long long *shape = meta + 2, *sstride = shape + nd, *vstride = sstride + nd;
    const long long *arrays = vstride + nd, *first = arrays + 3;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        long long c[PG_INDEX_MAXDIMS]; /* the coordinates, for a second index array */
        long long r = i, so = 0, vo = 0, io = 0;
        for (int d = nd - 1; d >= 0; d--) {
            /* what is left at the first axis is below its length */
            const long long cd = d > 0 ? split(r, shape[d]) : r;
            so += cd * sstride[d];
            vo += cd * vstride[d];
            io += cd * first[d];
            if (nk > 1) {
                c[d] = cd;
            }
        }
        bool ok = true;
        for (int k = 0; k < nk; k++) {
            const long long *a = arrays + k * (3 + nd);
            if (k > 0) {
                io = 0;
                for (int d = 0; d < nd; d++) {
                    io += c[d] * a[3 + d];
                }
            }
            long long v = (long long)((const I *)(idx + a[2]))[io];
            const long long size = a[0];
            if (v < 0) {
                v += size;
            }
            if (v < 0 || v >= size) {
                atomicMax(error, ~(unsigned long long)(i * nk + k));
                ok = false;
                break;
            }
            so += v * a[1];
        }
        if (PUT) {
            if (WRITE && ok) {
                *(W *)(src + so) = *(const W *)(other + vo);
            }
        }
        else {
            W w = W();
            if (ok) {
                w = *(const W *)(src + so);
            }
            ((W *)other)[i] = w;
        }
    }
}

} /* namespace index */
} /* namespace pg */

#endif
