/* pygpu's simulator: cg::reduce over a tile or a coalesced group, with
 * cg::plus, less (the smaller), greater (the larger), bit_and, bit_or and
 * bit_xor. A tile reduces by shuffles across halves (each lane gets the same
 * result); a coalesced group in the order of its ranks. */
#ifndef PYGPU_SIM_COOPERATIVE_GROUPS_REDUCE_H
#define PYGPU_SIM_COOPERATIVE_GROUPS_REDUCE_H
#include "../cooperative_groups.h"

namespace cooperative_groups {

template <class T> struct plus {
    T operator()(const T &a, const T &b) const
    {
        return a + b;
    }
};
template <class T> struct less {
    T operator()(const T &a, const T &b) const
    {
        return b < a ? b : a;
    }
};
template <class T> struct greater {
    T operator()(const T &a, const T &b) const
    {
        return a < b ? b : a;
    }
};
template <class T> struct bit_and {
    T operator()(const T &a, const T &b) const
    {
        return a & b;
    }
};
template <class T> struct bit_or {
    T operator()(const T &a, const T &b) const
    {
        return a | b;
    }
};
template <class T> struct bit_xor {
    T operator()(const T &a, const T &b) const
    {
        return a ^ b;
    }
};

template <unsigned int Size, class ParentT, class T, class Op>
inline T
reduce(const thread_block_tile<Size, ParentT> &g, T value, Op op)
{
    if constexpr (Size <= 32) {
        for (unsigned int d = Size / 2; d > 0; d /= 2) {
            value = op(value, g.shfl_xor(value, d));
        }
        return value;
    }
    else { /* through memory, between two of the block's barriers */
        static T scratch[1024];
        unsigned int rank = pg_sim::ptx_rank(), first = rank / Size * Size;
        scratch[rank] = value;
        __syncthreads();
        T acc = scratch[first];
        for (unsigned int r = 1; r < Size; r++) {
            acc = op(acc, scratch[first + r]);
        }
        __syncthreads();
        return acc;
    }
}

template <class T, class Op>
inline T
reduce(const coalesced_group &g, T value, Op op)
{
    /* each rank's value in turn (the groups of one partition take as many
     * rounds as they have lanes) */
    unsigned int n = g.num_threads();
    T acc = g.shfl(value, 0);
    for (unsigned int r = 1; r < n; r++) {
        acc = op(acc, g.shfl(value, r));
    }
    return acc;
}

} /* namespace cooperative_groups */

#endif /* PYGPU_SIM_COOPERATIVE_GROUPS_REDUCE_H */
