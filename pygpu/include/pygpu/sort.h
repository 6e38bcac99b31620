/* pygpu's device code for sorting, searching and sets (pygpu/_ops/sorting.py):
 * an LSD radix sort (onesweep: one pass per 8-bit digit, tiles chained by
 * decoupled look-back) on keys that order as NumPy sorts, and the searches,
 * marks and counts built on the same keys. No standard header is included:
 * NVRTC has none.
 *
 * Keys. Every element is sorted as an unsigned integer U of its width (bool
 * and 1-byte types u8, 2-byte u16, 4-byte u32, 8-byte u64) whose order is
 * NumPy's: a mode says how the bits become the key (to_key): unsigned as
 * they are, signed with the sign bit flipped, bool 0 or 1, floats with the
 * sign flip of the IEEE order (negative numbers all bits inverted), every NaN
 * one key after +inf (NumPy sorts NaNs last, stably among themselves) and
 * -0.0 the key of 0.0 (equal, so kept in their order). Descending inverts
 * the key's bits, which keeps equal elements in their order (the standard's
 * stable descending sort: NaNs first). A complex number is three keys, most
 * significant first: its class (0 both parts numbers, 1 a NaN imaginary
 * part, 2 a NaN real part, 3 both NaN: NumPy's order R+Rj < R+nanj < nan+Rj <
 * nan+nanj), then the real part's key, then the imaginary part's (a NaN part's
 * key is 0: the class orders it).
 * ================================================================================ */
#ifndef PYGPU_SORT_H
#define PYGPU_SORT_H

#ifndef PG_FN
#define PG_FN __device__ __forceinline__
#endif

namespace pg {

enum {
    SORT_UNSIGNED = 0,
    SORT_SIGNED = 1,
    SORT_FLOAT = 2,
    SORT_BOOL = 3,
    SORT_DESCENDING = 4
};

template <class U>
PG_FN U
sort_sign()
{
    return (U)((U)1 << (sizeof(U) * 8 - 1));
}
/* a float's exponent bits (all ones: inf and NaN) and NumPy's NaN */
template <class U>
PG_FN U
sort_inf_bits()
{
    return sizeof(U) == 2   ? (U)0x7c00u
           : sizeof(U) == 4 ? (U)0x7f800000u
                            : (U)(sizeof(U) == 8 ? 0x7ff0000000000000ull : 0xffull);
}
template <class U>
PG_FN U
sort_nan_bits()
{
    return sizeof(U) == 2   ? (U)0x7e00u
           : sizeof(U) == 4 ? (U)0x7fc00000u
                            : (U)(sizeof(U) == 8 ? 0x7ff8000000000000ull : 0xffull);
}
template <class U>
PG_FN bool
sort_is_nan(U b, int mode)
{
    return (mode & 3) == SORT_FLOAT && (U)(b & (U)~sort_sign<U>()) > sort_inf_bits<U>();
}

/* the bits b of an element as its key (mode: SORT_* kind, | SORT_DESCENDING) */
template <class U>
PG_FN U
to_key(U b, int mode)
{
    const U sign = sort_sign<U>();
    U k = b;
    switch (mode & 3) {
    case SORT_SIGNED: k = (U)(b ^ sign); break;
    case SORT_FLOAT:
        if (sort_is_nan(b, mode)) {
            k = (U) ~(U)0;
        }
        else if (b == sign) {
            k = sign; /* -0.0: the key of 0.0 */
        }
        else {
            k = (b & sign) ? (U)~b : (U)(b ^ sign);
        }
        break;
    case SORT_BOOL: k = (U)(b != 0); break;
    default: break;
    }
    return (mode & SORT_DESCENDING) ? (U)~k : k;
}

/* a key back to the element's bits (a NaN comes back as NumPy's NaN, 0.0 as
 * 0.0: sorting.py sorts keys alone only where that loses nothing) */
template <class U>
PG_FN U
from_key(U k, int mode)
{
    const U sign = sort_sign<U>();
    if (mode & SORT_DESCENDING) {
        k = (U)~k;
    }
    switch (mode & 3) {
    case SORT_SIGNED: return (U)(k ^ sign);
    case SORT_FLOAT:
        if (k == (U) ~(U)0) {
            return sort_nan_bits<U>();
        }
        return (k & sign) ? (U)(k ^ sign) : (U)~k;
    default: return k;
    }
}

/* ---- the radix sort ----------------------------------------------------------- */
/* Compile-time choices (sorting.py defines them all; these are its defaults):
 * PG_SORT_RANK 0: rank each warp's keys, then scan the warps' counts, then
 *   look back (the tile's counts are published after the ranking), 256
 *   threads; 1: early counts: the tile's digit histogram first (shared
 *   atomics), its counts published at once, the warps' first places scanned
 *   before the ranking (which then gives places in the tile), the look-back
 *   after the ranking (the tiles before have had the ranking's time to
 *   publish), any PG_SORT_THREADS >= 256.
 * PG_SORT_MATCH (RANK 1) 0: a warp's lanes of one digit by __match_any_sync;
 *   1: by eight ballots, one a bit of the digit.
 * PG_SORT_ITEMS keys a thread (PG_SORT_ITEMS_WIDE for 8-byte keys, RANK 1);
 * PG_SORT_MIN_BLOCKS blocks an SM for __launch_bounds__; PG_SORT_HIST_ITEMS
 * the histogram pass's loads in flight a thread (PG_SORT_HIST_BLOCKS, its
 * blocks an SM, is sorting.py's alone). */
#ifndef PG_SORT_RANK
#define PG_SORT_RANK 1
#endif
#ifndef PG_SORT_MATCH
#define PG_SORT_MATCH 1
#endif
#ifndef PG_SORT_THREADS
#define PG_SORT_THREADS 384 /* RANK 0: 256, a thread per digit */
#endif
#define PG_SORT_WARPS (PG_SORT_THREADS / 32)
#ifndef PG_SORT_ITEMS
#define PG_SORT_ITEMS 23 /* keys a thread */
#endif
#ifndef PG_SORT_ITEMS_WIDE
#define PG_SORT_ITEMS_WIDE 14
#endif
#ifndef PG_SORT_MIN_BLOCKS
#define PG_SORT_MIN_BLOCKS 2
#endif
#define PG_SORT_TILE (PG_SORT_THREADS * PG_SORT_ITEMS)
#ifndef PG_SORT_LOOKBACK
#define PG_SORT_LOOKBACK 4 /* tiles whose words a look-back step reads at once */
#endif
#ifndef PG_SORT_HIST_ITEMS
#define PG_SORT_HIST_ITEMS 16 /* the histogram pass's keys a thread a step */
#endif
#if PG_SORT_RANK == 0 && PG_SORT_THREADS != 256
#error "PG_SORT_RANK 0 takes a thread per digit: PG_SORT_THREADS 256"
#endif
#if PG_SORT_THREADS < 256 || PG_SORT_THREADS % 32 != 0
#error "PG_SORT_THREADS: a multiple of 32, at least 256 (a thread per digit)"
#endif

/* The histograms of every digit of the keys at once (the first read of the
 * input): hist[p * 256 + d] counts keys whose digit p (bits 8p..8p+7) is d;
 * hist[passes * 256] counts the elements a sort of keys alone would change
 * (-0.0, a NaN other than NumPy's), which then sorts indices. hist zeroed
 * by the caller; a grid-stride loop, shared counters per block. */
template <class U>
PG_FN void
sort_histogram(const U *in, long long n, int mode, unsigned long long *hist)
{
    enum { P = sizeof(U), COPIES = 4096 / (P * 256) };
    __shared__ unsigned int h[COPIES * P * 256];
    __shared__ unsigned int inexact;
    for (int i = threadIdx.x; i < COPIES * P * 256; i += blockDim.x) {
        h[i] = 0;
    }
    if (threadIdx.x == 0) {
        inexact = 0;
    }
    __syncthreads();
    /* lanes count into COPIES histograms (lane % COPIES): fewer lanes of a warp
     * meet at one counter where many keys share a digit */
    unsigned int *mine = h + (threadIdx.x % COPIES) * P * 256;
    unsigned int odd = 0;
#if PG_SORT_HIST_ITEMS > 1
    /* PG_SORT_HIST_ITEMS keys a thread a step, their loads in flight together */
    enum { HI = PG_SORT_HIST_ITEMS };
    const long long step = (long long)gridDim.x * blockDim.x * HI;
    for (long long i0 = (long long)blockIdx.x * blockDim.x * HI + threadIdx.x; i0 < n;
         i0 += step) {
        U bs[HI];
#pragma unroll
        for (int u = 0; u < HI; u++) {
            const long long i = i0 + (long long)u * blockDim.x;
            bs[u] = i < n ? in[i] : (U)0;
        }
#pragma unroll
        for (int u = 0; u < HI; u++) {
            if (i0 + (long long)u * blockDim.x < n) {
                const U b = bs[u];
                const U k = to_key(b, mode);
#pragma unroll
                for (int p = 0; p < P; p++) {
                    atomicAdd(&mine[p * 256 + (int)((k >> (8 * p)) & 0xff)], 1u);
                }
                if ((mode & 3) == SORT_FLOAT &&
                    (b == sort_sign<U>() ||
                     (sort_is_nan(b, mode) && b != sort_nan_bits<U>()))) {
                    odd++;
                }
            }
        }
    }
#else
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        const U b = in[i];
        const U k = to_key(b, mode);
#pragma unroll
        for (int p = 0; p < P; p++) {
            atomicAdd(&mine[p * 256 + (int)((k >> (8 * p)) & 0xff)], 1u);
        }
        if ((mode & 3) == SORT_FLOAT &&
            (b == sort_sign<U>() ||
             (sort_is_nan(b, mode) && b != sort_nan_bits<U>()))) {
            odd++;
        }
    }
#endif
    if (odd) {
        atomicAdd(&inexact, odd);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < P * 256; i += blockDim.x) {
        unsigned int c = 0;
        for (int j = 0; j < COPIES; j++) {
            c += h[j * P * 256 + i];
        }
        if (c) {
            atomicAdd(&hist[i], (unsigned long long)c);
        }
    }
    if (threadIdx.x == 0 && inexact) {
        atomicAdd(&hist[P * 256], (unsigned long long)inexact);
    }
}

#if PG_SORT_RANK == 0
/* One pass of the stable LSD radix sort: keys (and values, with PAIRS) by
 * the digit at bit shift, from kin/vin to kout/vout.
 *
 * A block takes the next tile (a ticket from *counter: every tile it waits
 * for has started) of PG_SORT_TILE keys, each warp a run of 32 * ITEMS of
 * them, read 32 at a time (coalesced). Each warp ranks its keys in order:
 * the lanes holding the same digit (__match_any_sync) take consecutive
 * places after the warp's count of that digit so far. The warps' counts
 * are then scanned (thread d, digit d), giving each key its place among the
 * tile's keys of its digit; thread d publishes the tile's count of d
 * (flag 1), looks back over the tiles before it, adding their counts until
 * a tile's inclusive count is known (flag 2), and publishes its own
 * (state: a word per tile and digit, flag in the two high bits, zeroed by
 * the caller). The tile's keys are then put in digit order in shared memory
 * and written out from there, so that consecutive threads write consecutive
 * places of one digit; values follow the same way. offsets: the first place
 * of each digit in the whole output (the histogram's exclusive scan). The
 * first pass may read the elements' bits (in_mode: to_key) and a sort of keys
 * alone may write them back (out_mode: from_key, -1: keys not written);
 * vin null: the values are the indices. Values are int64, or 32-bit where
 * the caller knows they fit (wide: bit 0 vin's are int64, bit 1 vout's). */
template <class U, class W, bool PAIRS>
PG_FN void
sort_pass(const U *kin, U *kout, const void *vin, void *vout, int wide, long long n,
          int shift, const unsigned long long *offsets, unsigned long long *counter,
          W *state, int in_mode, int out_mode)
{
    enum { T = PG_SORT_THREADS, ITEMS = PG_SORT_ITEMS, TILE = PG_SORT_TILE };
    const W AGGREGATE = (W)1 << (sizeof(W) * 8 - 2),
            INCLUSIVE = (W)2 << (sizeof(W) * 8 - 2), VALUE = AGGREGATE - 1;
    union tile_buffer {
        U k[TILE];
        long long v[PAIRS ? TILE : 1];
    };
    __shared__ tile_buffer buf;
    __shared__ unsigned int counts[PG_SORT_WARPS * 256];
    __shared__ unsigned int tile_start[256];
    __shared__ long long place[256];
    __shared__ unsigned int warp_sums[PG_SORT_WARPS];
    __shared__ long long ticket;
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    if (t == 0) {
        ticket = (long long)atomicAdd(counter, 1ull);
    }
    for (int i = t; i < PG_SORT_WARPS * 256; i += T) {
        counts[i] = 0;
    }
    __syncthreads();
    /* 32-bit places in the tile (from start) where they can be */
    const long long tile = ticket, start = tile * TILE, rest = n - start;
    const int count = rest < TILE ? (int)rest : TILE, first = warp * 32 * ITEMS + lane;
    const U *ktile = kin + start;
    U key[ITEMS];
    unsigned int rank[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const int i = first + j * 32;
        key[j] = i < count ? to_key(ktile[i], in_mode) : (U)0;
    }
    const unsigned int below = (1u << lane) - 1u;
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const bool valid = first + j * 32 < count;
        const unsigned int d = (unsigned int)(key[j] >> shift) & 0xffu;
        const unsigned int peers = __match_any_sync(0xffffffffu, valid ? d : 256u);
        const int leader = __ffs((int)peers) - 1;
        unsigned int c = 0;
        if (valid && lane == leader) {
            c = counts[warp * 256 + d];
            counts[warp * 256 + d] = c + (unsigned int)__popc(peers);
        }
        c = __shfl_sync(0xffffffffu, c, leader);
        rank[j] = c + (unsigned int)__popc(peers & below);
        __syncwarp();
    }
    __syncthreads();
    /* thread t: digit t. The warps' counts become each warp's first place
     * among the tile's keys of the digit. */
    unsigned int total = 0;
    for (int w = 0; w < PG_SORT_WARPS; w++) {
        const unsigned int c = counts[w * 256 + t];
        counts[w * 256 + t] = total;
        total += c;
    }
    /* the tiles before: decoupled look-back, a digit a thread, reading
     * PG_SORT_LOOKBACK tiles' words at once (their loads in flight together)
     * and taking them nearest first: counts are added up to the first
     * inclusive one; a word not yet published is read again */
    const volatile W *words = state;
    volatile W *mine = (volatile W *)(state + tile * 256 + t);
    long long before = 0;
    if (tile == 0) {
        *mine = INCLUSIVE | (W)total;
    }
    else {
        *mine = AGGREGATE | (W)total;
        bool done = false;
        for (long long j = tile - 1; !done;) {
            W w[PG_SORT_LOOKBACK];
#pragma unroll
            for (int u = 0; u < PG_SORT_LOOKBACK; u++) {
                /* before tile 0: an inclusive 0 (tile 0's word always is) */
                w[u] = j - u >= 0 ? words[(j - u) * 256 + t] : INCLUSIVE;
            }
            int used = 0;
#pragma unroll
            for (int u = 0; u < PG_SORT_LOOKBACK; u++) {
                if (!done && used == u && (w[u] & ~VALUE) != 0) {
                    before += (long long)(w[u] & VALUE);
                    done = (w[u] & INCLUSIVE) != 0;
                    used = u + 1;
                }
            }
            j -= used;
        }
        *mine = INCLUSIVE | (W)(before + total);
    }
    /* the tile's first place of each digit: an exclusive scan of the totals */
    unsigned int run = total;
#pragma unroll
    for (int s = 1; s < 32; s <<= 1) {
        const unsigned int x = __shfl_up_sync(0xffffffffu, run, s);
        if (lane >= s) {
            run += x;
        }
    }
    if (lane == 31) {
        warp_sums[warp] = run;
    }
    __syncthreads();
    for (int w = 0; w < warp; w++) {
        run += warp_sums[w];
    }
    tile_start[t] = run - total;
    place[t] = (long long)offsets[t] + before - (long long)(run - total);
    __syncthreads();
    /* the keys in digit order in shared memory, then out */
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        if (first + j * 32 < count) {
            const unsigned int d = (unsigned int)(key[j] >> shift) & 0xffu;
            rank[j] += tile_start[d] + counts[warp * 256 + d];
            buf.k[rank[j]] = key[j];
        }
    }
    __syncthreads();
    unsigned char digit[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const int i = t + j * T;
        if (i < count) {
            const U k = buf.k[i];
            digit[j] = (unsigned char)((k >> shift) & 0xff);
            if (out_mode >= 0) {
                kout[place[digit[j]] + i] = from_key(k, out_mode);
            }
        }
    }
    if (PAIRS) {
        __syncthreads();
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            const int i = first + j * 32;
            if (i < count) {
                buf.v[rank[j]] =
                    !vin         ? start + i
                    : (wide & 1) ? ((const long long *)vin)[start + i]
                                 : (long long)((const unsigned int *)vin)[start + i];
            }
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            const int i = t + j * T;
            if (i < count) {
                const long long at = place[digit[j]] + i;
                if (wide & 2) {
                    ((long long *)vout)[at] = buf.v[i];
                }
                else {
                    ((unsigned int *)vout)[at] = (unsigned int)buf.v[i];
                }
            }
        }
    }
}

#else /* PG_SORT_RANK */

/* the lanes of a warp whose digit d is this lane's, among the lanes of vm
 * (those holding a key; a lane outside vm gets a mask it does not use) */
PG_FN unsigned int
sort_match(unsigned int d, bool valid, unsigned int vm)
{
#if PG_SORT_MATCH
    unsigned int m = vm;
#pragma unroll
    for (int b = 0; b < 8; b++) {
        const bool one = (d >> b) & 1u;
        const unsigned int v = __ballot_sync(0xffffffffu, one);
        m &= one ? v : ~v;
    }
    return m;
#else
    (void)vm;
    return __match_any_sync(0xffffffffu, valid ? d : 256u);
#endif
}

/* the values of a tile (RANK 1) through shared memory v in 32-bit words:
 * word R of ROUNDS (ROUNDS 2: 64-bit values, low word first), by the keys'
 * places in the tile (rank's low 24 bits) and the digits of the keys in
 * digit order (its high 8) */
template <class U, int R, int ROUNDS, int ITEMS>
PG_FN void
sort_values(unsigned int *v, const unsigned int (&rank)[ITEMS], const void *vin,
            void *vout, int wide, long long start, int count, bool full, int first,
            const long long *place)
{
    enum { T = PG_SORT_THREADS };
    const int t = threadIdx.x;
    __syncthreads();
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const int i = first + j * 32;
        if (full || i < count) {
            const long long x = !vin ? start + i
                                : (wide & 1)
                                    ? ((const long long *)vin)[start + i]
                                    : (long long)((const unsigned int *)vin)[start + i];
            v[rank[j] & 0xffffffu] = (unsigned int)((unsigned long long)x >> (32 * R));
        }
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const int i = t + j * T;
        if (full || i < count) {
            const long long at = place[rank[j] >> 24] + i;
            if (ROUNDS == 2) {
                ((unsigned int *)vout)[2 * at + R] = v[i];
            }
            else if (wide & 2) {
                ((long long *)vout)[at] = (long long)v[i];
            }
            else {
                ((unsigned int *)vout)[at] = v[i];
            }
        }
    }
}

/* both words of 64-bit values, out of line: the registers of the usual
 * pass (32-bit values) stay as they are */
template <class U, int ITEMS>
__device__ __noinline__ void
sort_values_wide(unsigned int *v, const unsigned int (&rank)[ITEMS], const void *vin,
                 void *vout, int wide, long long start, int count, bool full, int first,
                 const long long *place)
{
    sort_values<U, 0, 2, ITEMS>(v, rank, vin, vout, wide, start, count, full, first,
                                place);
    sort_values<U, 1, 2, ITEMS>(v, rank, vin, vout, wide, start, count, full, first,
                                place);
}

/* The same pass with early counts (PG_SORT_RANK 1), as above but ordered so
 * that the look-back waits less: the tile's keys are read (a warp a run of
 * 32 * ITEMS, 32 at a time), each warp counts its keys' digits in its own
 * shared histogram (atomics), then thread d (d < 256) scans the warps'
 * counts of digit d, publishes the tile's count (flag 1; tile 0 its
 * inclusive one) at once, and with the block's scan of the digits' totals
 * makes each warp's count its first place in the tile among keys of digit
 * d. The warps then rank their keys in order (the lanes holding one digit
 * take consecutive places after the warp's place so far, which the highest
 * of them advances by an atomic add), and only then does thread d look back
 * over the tiles before, whose counts have had the ranking's time to be
 * published. The keys go through shared memory in digit order, and are
 * written out from there; the values follow in 32-bit words (one round, or
 * two for 64-bit values where n >= 2^32: the values are indices below n). */
template <class U, class W, bool PAIRS>
PG_FN void
sort_pass(const U *kin, U *kout, const void *vin, void *vout, int wide, long long n,
          int shift, const unsigned long long *offsets, unsigned long long *counter,
          W *state, int in_mode, int out_mode)
{
    enum {
        T = PG_SORT_THREADS,
        WARPS = PG_SORT_WARPS,
        D = 256,
        ITEMS = sizeof(U) == 8 ? PG_SORT_ITEMS_WIDE : PG_SORT_ITEMS,
        TILE = T * ITEMS
    };
    const W AGGREGATE = (W)1 << (sizeof(W) * 8 - 2),
            INCLUSIVE = (W)2 << (sizeof(W) * 8 - 2), VALUE = AGGREGATE - 1;
    /* the warps' counts until the ranking ends, then the tile in digit order */
    union tile_buffer {
        unsigned int counts[WARPS * D];
        U k[TILE];
        unsigned int v[PAIRS ? TILE : 1];
    };
    __shared__ tile_buffer buf;
    __shared__ long long place[D];
    __shared__ unsigned int warp_sums[D / 32];
    __shared__ long long ticket;
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    if (t == 0) {
        ticket = (long long)atomicAdd(counter, 1ull);
    }
    for (int i = t; i < WARPS * D; i += T) {
        buf.counts[i] = 0;
    }
    __syncthreads();
    const long long tile = ticket, start = tile * TILE, rest = n - start;
    const int count = rest < TILE ? (int)rest : TILE, first = warp * 32 * ITEMS + lane;
    const bool full = count == TILE;
    const U *ktile = kin + start;
    U key[ITEMS];
    unsigned int rank[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const int i = first + j * 32;
        key[j] = full || i < count ? to_key(ktile[i], in_mode) : (U)0;
    }
    unsigned int *counts = buf.counts + warp * D;
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        if (full || first + j * 32 < count) {
            atomicAdd(&counts[(unsigned int)(key[j] >> shift) & 0xffu], 1u);
        }
    }
    __syncthreads();
    /* thread t < 256: digit t. The warps' counts become each warp's first
     * place among the tile's keys of the digit; the tile's count is published */
    volatile W *mine = (volatile W *)(state + tile * D + t);
    unsigned int total = 0, run = 0;
    if (t < D) {
        for (int w = 0; w < WARPS; w++) {
            const unsigned int c = buf.counts[w * D + t];
            buf.counts[w * D + t] = total;
            total += c;
        }
        *mine = (tile == 0 ? INCLUSIVE : AGGREGATE) | (W)total;
        run = total;
#pragma unroll
        for (int s = 1; s < 32; s <<= 1) {
            const unsigned int x = __shfl_up_sync(0xffffffffu, run, s);
            if (lane >= s) {
                run += x;
            }
        }
        if (lane == 31) {
            warp_sums[warp] = run;
        }
    }
    __syncthreads();
    unsigned int tile_first = 0;
    if (t < D) {
        for (int w = 0; w < warp; w++) {
            run += warp_sums[w];
        }
        tile_first = run - total;
        for (int w = 0; w < WARPS; w++) {
            buf.counts[w * D + t] += tile_first;
        }
    }
    __syncthreads();
    /* each key's place in the tile */
    const unsigned int below = (1u << lane) - 1u;
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const bool valid = full || first + j * 32 < count;
        const unsigned int vm = full ? 0xffffffffu : __ballot_sync(0xffffffffu, valid);
        const unsigned int d = (unsigned int)(key[j] >> shift) & 0xffu;
        const unsigned int peers = sort_match(d, valid, vm);
        const int leader = 31 - __clz((int)peers);
        unsigned int c = 0;
        if (valid && lane == leader) {
            c = atomicAdd(&counts[d], (unsigned int)__popc(peers));
        }
        c = __shfl_sync(0xffffffffu, c, leader & 31);
        rank[j] = c + (unsigned int)__popc(peers & below);
    }
    /* the tiles before: decoupled look-back, a digit a thread, reading
     * PG_SORT_LOOKBACK tiles' words at once, nearest first, adding counts up
     * to the first inclusive one; a word not yet published is read again */
    if (t < D) {
        long long before = 0;
        if (tile > 0) {
            const volatile W *words = state;
            bool done = false;
            for (long long j = tile - 1; !done;) {
                W w[PG_SORT_LOOKBACK];
#pragma unroll
                for (int u = 0; u < PG_SORT_LOOKBACK; u++) {
                    w[u] = j - u >= 0 ? words[(j - u) * D + t] : INCLUSIVE;
                }
                int used = 0;
#pragma unroll
                for (int u = 0; u < PG_SORT_LOOKBACK; u++) {
                    if (!done && used == u && (w[u] & ~VALUE) != 0) {
                        before += (long long)(w[u] & VALUE);
                        done = (w[u] & INCLUSIVE) != 0;
                        used = u + 1;
                    }
                }
                j -= used;
            }
            *mine = INCLUSIVE | (W)(before + total);
        }
        place[t] = (long long)offsets[t] + before - (long long)tile_first;
    }
    __syncthreads();
    /* the keys in digit order in shared memory, then out */
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        if (full || first + j * 32 < count) {
            buf.k[rank[j]] = key[j];
        }
    }
    __syncthreads();
    /* from here rank[j] holds, above bit 24, the digit of the tile's key
     * t + j * T (a tile is below 2^24 keys) */
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const int i = t + j * T;
        if (full || i < count) {
            const U k = buf.k[i];
            const unsigned int d = (unsigned int)(k >> shift) & 0xffu;
            rank[j] |= d << 24;
            if (out_mode >= 0) {
                kout[place[d] + i] = from_key(k, out_mode);
            }
        }
    }
    if (PAIRS) {
        if (n > 0xffffffffll) { /* 64-bit values: the low words, then the high */
            sort_values_wide<U, ITEMS>(buf.v, rank, vin, vout, wide, start, count, full,
                                       first, place);
        }
        else {
            sort_values<U, 0, 1, ITEMS>(buf.v, rank, vin, vout, wide, start, count,
                                        full, first, place);
        }
    }
}
#endif /* PG_SORT_RANK */

/* ---- keys of elements, for searches and sets ------------------------------------ */

/* An element's key: a number's is k (c and i 0); a complex number's is
 * (c, k, i): its class, the real part's key, the imaginary part's. */
template <class U> struct sort_key {
    U c, k, i;
};
template <class U>
PG_FN bool
operator<(sort_key<U> a, sort_key<U> b)
{
    return a.c != b.c ? a.c < b.c : a.k != b.k ? a.k < b.k : a.i < b.i;
}
template <class U>
PG_FN bool
operator==(sort_key<U> a, sort_key<U> b)
{
    return a.c == b.c && a.k == b.k && a.i == b.i;
}

/* element e of p (bits; a complex element is two, real then imaginary) */
template <class U, bool C>
PG_FN sort_key<U>
key_at(const U *p, long long e, int mode)
{
    sort_key<U> s;
    if (!C) {
        s.c = 0;
        s.k = to_key(p[e], mode);
        s.i = 0;
        return s;
    }
    const U re = p[2 * e], im = p[2 * e + 1];
    const bool nr = sort_is_nan(re, mode), ni = sort_is_nan(im, mode);
    const U zero = (mode & SORT_DESCENDING) ? (U) ~(U)0 : (U)0;
    s.c = (U)((nr ? 2 : 0) + (ni ? 1 : 0));
    s.c = (mode & SORT_DESCENDING) ? (U)~s.c : s.c;
    s.k = nr ? zero : to_key(re, mode);
    s.i = ni ? zero : to_key(im, mode);
    return s;
}
template <class U, bool C>
PG_FN bool
nan_at(const U *p, long long e, int mode)
{
    return C ? sort_is_nan(p[2 * e], mode) || sort_is_nan(p[2 * e + 1], mode)
             : sort_is_nan(p[e], mode);
}
/* whether elements a and b of p and q are one value (np.unique's groups,
 * np.isin): keys equal, and NaNs one value only with equal_nan */
template <class U, bool C>
PG_FN bool
same_at(const U *p, long long a, const U *q, long long b, int mode, bool equal_nan)
{
    const bool na = nan_at<U, C>(p, a, mode), nb = nan_at<U, C>(q, b, mode);
    if (na || nb) {
        return na && nb && equal_nan;
    }
    return key_at<U, C>(p, a, mode) == key_at<U, C>(q, b, mode);
}

/* the first place in sorted a (n elements) where v could go: before every
 * element not less than v (left), or every element greater than v (right) */
template <class U, bool C>
PG_FN long long
search_sorted(const U *a, long long n, sort_key<U> v, int mode, bool right)
{
    long long lo = 0, hi = n;
    while (lo < hi) {
        const long long mid = lo + (hi - lo) / 2;
        const sort_key<U> m = key_at<U, C>(a, mid, mode);
        if (right ? !(v < m) : m < v) {
            lo = mid + 1;
        }
        else {
            hi = mid;
        }
    }
    return lo;
}

/* np.searchsorted: out[i] for each of the m elements of v */
template <class U, bool C>
PG_FN void
searchsorted(const U *a, long long n, const U *v, long long m, int mode, bool right,
             long long *out)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;
         i += step) {
        out[i] = search_sorted<U, C>(a, n, key_at<U, C>(v, i, mode), mode, right);
    }
}

/* np.isin: whether each of the m elements of x is one of sorted a's n */
template <class U, bool C>
PG_FN void
isin(const U *a, long long n, const U *x, long long m, int mode, bool invert, bool *out)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;
         i += step) {
        const long long at =
            search_sorted<U, C>(a, n, key_at<U, C>(x, i, mode), mode, false);
        const bool found = at < n && same_at<U, C>(a, at, x, i, mode, false);
        out[i] = found != invert;
    }
}

/* np.unique's groups: rest[i] 0 where sorted s's element i starts one, else 1
 * (a key: a stable sort by it puts the groups' starts first, in order) */
template <class U, bool C>
PG_FN void
unique_mark(const U *s, long long n, int mode, bool equal_nan, unsigned char *rest)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        rest[i] = i > 0 && same_at<U, C>(s, i - 1, s, i, mode, equal_nan);
    }
}

/* the smallest and largest keys of x (out: two keys, set to ~0 and 0 by the
 * caller) */
template <class U>
PG_FN void
key_range(const U *x, long long n, int mode, unsigned long long *out)
{
    unsigned long long lo = ~0ull, hi = 0;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        const unsigned long long k = to_key(x[i], mode);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    if (lo <= hi) {
        atomicMin(&out[0], lo);
        atomicMax(&out[1], hi);
    }
}

/* a complex array's three keys (class, real part, imaginary part) */
template <class U>
PG_FN void
complex_keys(const U *x, long long n, int mode, unsigned char *c, U *re, U *im)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        const sort_key<U> s = key_at<U, true>(x, i, mode);
        c[i] = (unsigned char)s.c;
        re[i] = s.k;
        im[i] = s.i;
    }
}

/* out[i] = in[idx[i]] (T: any type of the element's size) */
template <class T>
PG_FN void
gather(const T *in, const long long *idx, long long n, T *out)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        out[i] = in[idx[i]];
    }
}

/* an element of 16 bytes (complex128), for gather */
struct alignas(16) sort_bytes16 {
    unsigned long long lo, hi;
};

/* out[i] = i */
PG_FN void
sort_iota(long long *out, long long n)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        out[i] = i;
    }
}

/* rows of length m: the row of each flat index perm[i] (a key), or its place
 * in the row */
template <class K>
PG_FN void
sort_row_keys(const long long *perm, long long n, long long m, K *out)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        out[i] = (K)(perm[i] / m);
    }
}
PG_FN void
sort_in_rows(const long long *perm, long long n, long long m, long long *out)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        out[i] = perm[i] % m;
    }
}

/* np.unique from where each of the k groups starts in sorted order (starts):
 * how many each holds, and the group of each element of the input (perm:
 * the sorted order's input indices) */
PG_FN void
unique_counts(const long long *starts, long long k, long long n, long long *counts)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < k;
         g += step) {
        counts[g] = (g + 1 < k ? starts[g + 1] : n) - starts[g];
    }
}
PG_FN void
unique_inverse(const long long *starts, long long k, const long long *perm, long long n,
               long long *inverse)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        long long lo = 0, hi = k; /* the first start after i */
        while (lo < hi) {
            const long long mid = lo + (hi - lo) / 2;
            if (starts[mid] <= i) {
                lo = mid + 1;
            }
            else {
                hi = mid;
            }
        }
        inverse[perm[i]] = lo - 1;
    }
}

/* np.bincount: counts (no weights) or sums of weights per value of x */
PG_FN void
bincount(const long long *x, long long n, const double *w, unsigned long long *counts,
         double *sums)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        if (w) {
            atomicAdd(&sums[x[i]], w[i]);
        }
        else {
            atomicAdd(&counts[x[i]], 1ull);
        }
    }
}

/* np.histogram: bin b holds edges[b] <= x < edges[b + 1], the last bin its
 * right edge too; other values (and NaN) are in none */
PG_FN void
histogram(const double *x, long long n, const double *edges, long long bins,
          const double *w, unsigned long long *counts, double *sums)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        const double v = x[i];
        if (!(v >= edges[0] && v <= edges[bins])) {
            continue;
        }
        long long lo = 0, hi = bins + 1; /* the first edge greater than v */
        while (lo < hi) {
            const long long mid = lo + (hi - lo) / 2;
            if (edges[mid] <= v) {
                lo = mid + 1;
            }
            else {
                hi = mid;
            }
        }
        const long long b = lo - 1 < bins ? lo - 1 : bins - 1;
        if (w) {
            atomicAdd(&sums[b], w[i]);
        }
        else {
            atomicAdd(&counts[b], 1ull);
        }
    }
}

} /* namespace pg */

#endif /* PYGPU_SORT_H */
