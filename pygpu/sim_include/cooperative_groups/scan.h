/* pygpu's simulator: cg::inclusive_scan and cg::exclusive_scan over a tile
 * or a coalesced group, in the order of its ranks (op defaults to cg::plus). */
#ifndef PYGPU_SIM_COOPERATIVE_GROUPS_SCAN_H
#define PYGPU_SIM_COOPERATIVE_GROUPS_SCAN_H
#include "reduce.h"

namespace cooperative_groups {

template <class Group, class T, class Op = plus<T>>
inline T
inclusive_scan(const Group &g, T value, Op op = Op())
{
    unsigned int rank = g.thread_rank(), n = g.num_threads();
    T acc = value;
    for (unsigned int r = 0; r < n; r++) { /* each rank's value in turn */
        T v = g.shfl(value, r);
        if (r <= rank) {
            acc = r == 0 ? v : op(acc, v);
        }
    }
    return acc;
}

template <class Group, class T, class Op = plus<T>>
inline T
exclusive_scan(const Group &g, T value, Op op = Op())
{
    unsigned int rank = g.thread_rank(), n = g.num_threads();
    T acc = T();
    for (unsigned int r = 0; r < n; r++) { /* each rank's value in turn */
        T v = g.shfl(value, r);
        if (r < rank) {
            acc = r == 0 ? v : op(acc, v);
        }
    }
    return acc;
}

} /* namespace cooperative_groups */

#endif /* PYGPU_SIM_COOPERATIVE_GROUPS_SCAN_H */
