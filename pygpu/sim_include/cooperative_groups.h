/* pygpu's simulator: cooperative groups (cooperative_groups.h) over the
 * dialect's barriers and warp intrinsics (sim_dialect.h), with the GPU's
 * semantics: the thread block (this_thread_block, sync, thread_rank, ...),
 * tiles of a warp (tiled_partition<N> and tiled_partition(g, n) for n up to
 * 32, with their shuffles, votes and matches), coalesced_threads(),
 * labeled_partition and binary_partition, the grid (this_grid(): its ranks,
 * and sync() in a cooperative launch). A tile's or a group's intrinsics are
 * rendezvous of its lanes, checked as the warp intrinsics are. Not here:
 * multi-grid sync, memcpy_async, the shuffles of tiles larger than a warp.
 * cg::reduce is
 * cooperative_groups/reduce.h. Written for pygpu, after CUDA's documented
 * interface. */
#ifndef PYGPU_SIM_COOPERATIVE_GROUPS_H
#define PYGPU_SIM_COOPERATIVE_GROUPS_H

namespace cooperative_groups {

namespace pg_detail {
inline unsigned int
block_threads()
{
    return blockDim.x * blockDim.y * blockDim.z;
}
/* the lanes of the calling thread's warp that the block has */
inline unsigned int
warp_lanes()
{
    unsigned int first = pg_sim::ptx_rank() / 32 * 32, n = block_threads() - first;
    return n >= 32 ? 0xffffffffu : (1u << n) - 1;
}
/* the lane of the n-th (from 0) lane set in mask */
inline unsigned int
nth_lane(unsigned int mask, unsigned int n)
{
    for (unsigned int lane = 0; lane < 32; lane++) {
        if ((mask >> lane & 1) && n-- == 0) {
            return lane;
        }
    }
    return 32;
}
/* bits of a warp-wide mask, compacted to the ranks of the lanes in group */
inline unsigned int
compact(unsigned int bits, unsigned int group)
{
    unsigned int out = 0, rank = 0;
    for (unsigned int lane = 0; lane < 32; lane++) {
        if (group >> lane & 1) {
            out |= (bits >> lane & 1) << rank++;
        }
    }
    return out;
}
/* a shuffle of a value of any size: 8 bytes at a time, as CUDA's groups do */
template <class T, class F>
inline T
shfl_words(T var, F word)
{
    static_assert(std::is_trivially_copyable_v<T>,
                  "shuffled values are copied as bytes");
    if constexpr (sizeof(T) <= 8) {
        return word(var);
    }
    else {
        uint64_t w[(sizeof(T) + 7) / 8] = {};
        memcpy(w, &var, sizeof(T));
        for (uint64_t &x : w) {
            x = word(x);
        }
        T out;
        memcpy(&out, w, sizeof(T));
        return out;
    }
}
[[noreturn]] inline void
unsupported(const char *what)
{
    pg_sim::stop(PG_ERR_NOT_SUPPORTED, what);
}
} /* namespace pg_detail */

/* Any group: the whole block, or a set of lanes of one warp (mask). */
class thread_group {
  protected:
    bool block_;
    unsigned int mask_, size_, meta_rank_, meta_size_;

  public:
    thread_group(bool block, unsigned int mask, unsigned int size,
                 unsigned int meta_rank = 0, unsigned int meta_size = 1)
        : block_(block), mask_(mask), size_(size), meta_rank_(meta_rank),
          meta_size_(meta_size)
    {
    }
    unsigned long long size() const
    {
        return size_;
    }
    unsigned long long num_threads() const
    {
        return size_;
    }
    unsigned long long thread_rank() const
    {
        if (block_) {
            return pg_sim::ptx_rank();
        }
        return (unsigned long long)__popc(mask_ & pg_sim::ptx_lanemask_lt());
    }
    void sync() const
    {
        if (block_) {
            __syncthreads();
        }
        else {
            __syncwarp(mask_);
        }
    }
    unsigned int get_type() const
    {
        return block_ ? 4u : 1u;
    }
};

class thread_block : public thread_group {
  public:
    thread_block() : thread_group(true, 0, pg_detail::block_threads())
    {
    }
    static void sync()
    {
        __syncthreads();
    }
    static unsigned int thread_rank()
    {
        return pg_sim::ptx_rank();
    }
    static unsigned int size()
    {
        return pg_detail::block_threads();
    }
    static unsigned int num_threads()
    {
        return pg_detail::block_threads();
    }
    static dim3 group_index()
    {
        return blockIdx;
    }
    static dim3 thread_index()
    {
        return threadIdx;
    }
    static dim3 group_dim()
    {
        return blockDim;
    }
    static dim3 dim_threads()
    {
        return blockDim;
    }
};

inline thread_block
this_thread_block()
{
    return thread_block();
}

/* The grid: its ranks and sizes, and its barrier. sync() needs a
 * cooperative launch (kernel[grid, block](..., cooperative=True), as
 * cudaLaunchCooperativeKernel): in a launch that is not, it stops the launch
 * with an error that says so, and is_valid() is false, as on a GPU. */
class grid_group {
  public:
    unsigned long long thread_rank() const
    {
        return (unsigned long long)block_rank() * pg_detail::block_threads() +
               pg_sim::ptx_rank();
    }
    unsigned long long num_threads() const
    {
        return (unsigned long long)num_blocks() * pg_detail::block_threads();
    }
    unsigned long long size() const
    {
        return num_threads();
    }
    unsigned long long block_rank() const
    {
        return blockIdx.x +
               (unsigned long long)gridDim.x *
                   (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    }
    unsigned long long num_blocks() const
    {
        return (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
    }
    dim3 block_index() const
    {
        return blockIdx;
    }
    dim3 dim_blocks() const
    {
        return gridDim;
    }
    dim3 group_dim() const
    {
        return gridDim;
    }
    bool is_valid() const
    {
        return pg_sim::grid_cooperative();
    }
    void sync() const
    {
        pg_sim::grid_sync();
    }
};

inline grid_group
this_grid()
{
    return grid_group();
}

/* the scratch memory of CUDA's tiles larger than a warp: nothing here */
template <unsigned int MaxBlockSize = 1024, unsigned int TileCommunicationSize = 8,
          unsigned int MaxWarps = 32>
struct block_tile_memory {
};
template <unsigned int MaxBlockSize, unsigned int C, unsigned int W>
inline thread_block
this_thread_block(block_tile_memory<MaxBlockSize, C, W> &)
{
    return thread_block();
}

/* Lanes of one warp: a tile (contiguous) or a coalesced group (any lanes);
 * ranks are the order of the lanes. */
class pg_warp_group : public thread_group {
  public:
    pg_warp_group(unsigned int mask, unsigned int meta_rank = 0,
                  unsigned int meta_size = 1)
        : thread_group(false, mask, (unsigned int)__popc(mask), meta_rank, meta_size)
    {
    }
    unsigned int size() const
    {
        return size_;
    }
    unsigned int num_threads() const
    {
        return size_;
    }
    unsigned int thread_rank() const
    {
        return (unsigned int)__popc(mask_ & pg_sim::ptx_lanemask_lt());
    }
    unsigned int meta_group_rank() const
    {
        return meta_rank_;
    }
    unsigned int meta_group_size() const
    {
        return meta_size_;
    }
    void sync() const
    {
        __syncwarp(mask_);
    }
    unsigned int pg_mask() const
    {
        return mask_;
    }
    template <class T> T shfl(T var, unsigned int src_rank) const
    {
        unsigned int lane = pg_detail::nth_lane(mask_, src_rank % size_);
        return pg_detail::shfl_words(
            var, [&](auto v) { return __shfl_sync(mask_, v, (int)lane); });
    }
    template <class T> T shfl_down(T var, unsigned int delta) const
    {
        unsigned int r = thread_rank() + delta;
        unsigned int lane =
            r < size_ ? pg_detail::nth_lane(mask_, r) : pg_sim::ptx_laneid();
        return pg_detail::shfl_words(
            var, [&](auto v) { return __shfl_sync(mask_, v, (int)lane); });
    }
    template <class T> T shfl_up(T var, unsigned int delta) const
    {
        unsigned int r = thread_rank();
        unsigned int lane =
            r >= delta ? pg_detail::nth_lane(mask_, r - delta) : pg_sim::ptx_laneid();
        return pg_detail::shfl_words(
            var, [&](auto v) { return __shfl_sync(mask_, v, (int)lane); });
    }
    template <class T> T shfl_xor(T var, unsigned int lane_mask) const
    {
        unsigned int r = thread_rank() ^ lane_mask;
        unsigned int lane =
            r < size_ ? pg_detail::nth_lane(mask_, r) : pg_sim::ptx_laneid();
        return pg_detail::shfl_words(
            var, [&](auto v) { return __shfl_sync(mask_, v, (int)lane); });
    }
    int any(int predicate) const
    {
        return __any_sync(mask_, predicate);
    }
    int all(int predicate) const
    {
        return __all_sync(mask_, predicate);
    }
    unsigned int ballot(int predicate) const
    {
        return pg_detail::compact(__ballot_sync(mask_, predicate), mask_);
    }
    template <class T> unsigned int match_any(T value) const
    {
        return pg_detail::compact(__match_any_sync(mask_, value), mask_);
    }
    template <class T> unsigned int match_all(T value, int &pred) const
    {
        return pg_detail::compact(__match_all_sync(mask_, value, &pred), mask_);
    }
};

class coalesced_group : public pg_warp_group {
  public:
    explicit coalesced_group(unsigned int mask) : pg_warp_group(mask)
    {
    }
};

/* the lanes of the warp running this call together (__activemask(), with
 * the caller's place in the source: a call is the macro below, so that each
 * call site is one; the function stays for using-declarations) */
inline coalesced_group
pg_coalesced_threads_at(const void *site)
{
    return coalesced_group(pg_sim_activemask_at(site));
}
inline coalesced_group
coalesced_threads()
{
    return pg_coalesced_threads_at(PG_SIM_SITE);
}

template <unsigned int Size, class ParentT = void> class thread_block_tile;

/* A tile larger than a warp (64 to 1024 threads of a block, ranks Size * k
 * to Size * k + Size - 1). Its sync is the block's barrier: on the simulator
 * every tile of the block must reach it together, else the launch stops with
 * the barrier's error (a GPU syncs each tile alone). */
template <unsigned int Size> class pg_block_tile : public thread_group {
  public:
    pg_block_tile(unsigned int meta_rank = 0, unsigned int meta_size = 1)
        : thread_group(true, 0, Size, meta_rank, meta_size)
    {
    }
    static constexpr unsigned int num_threads()
    {
        return Size;
    }
    static constexpr unsigned int size()
    {
        return Size;
    }
    unsigned int thread_rank() const
    {
        return pg_sim::ptx_rank() & (Size - 1);
    }
    unsigned int meta_group_rank() const
    {
        return meta_rank_;
    }
    unsigned int meta_group_size() const
    {
        return meta_size_;
    }
    void sync() const
    {
        __syncthreads();
    }
};

template <unsigned int Size> class pg_warp_tile;

/* A tile of Size threads, a power of two: up to 32, lanes Size * k to
 * Size * k + Size - 1 of a warp (pg_warp_tile); larger, pg_block_tile. */
template <unsigned int Size>
class thread_block_tile<Size, void>
    : public std::conditional_t<(Size > 32), pg_block_tile<Size>, pg_warp_tile<Size>> {
    static_assert(Size >= 1 && Size <= 1024 && (Size & (Size - 1)) == 0,
                  "a thread_block_tile has a power-of-two size up to 1024");
    typedef std::conditional_t<(Size > 32), pg_block_tile<Size>, pg_warp_tile<Size>>
        base;

  public:
    thread_block_tile(unsigned int meta_rank = 0, unsigned int meta_size = 1)
        : base(meta_rank, meta_size)
    {
    }
};

template <unsigned int Size> class pg_warp_tile : public pg_warp_group {
  protected:
    static unsigned int tile_mask()
    {
        unsigned int lane = pg_sim::ptx_laneid();
        unsigned int bits =
            Size == 32 ? 0xffffffffu : ((1u << Size) - 1) << (lane / Size * Size);
        return bits & pg_detail::warp_lanes();
    }

  public:
    pg_warp_tile(unsigned int meta_rank = 0, unsigned int meta_size = 1)
        : pg_warp_group(tile_mask(), meta_rank, meta_size)
    {
    }
    static constexpr unsigned int num_threads()
    {
        return Size;
    }
    static constexpr unsigned int size()
    {
        return Size;
    }
    unsigned int thread_rank() const
    {
        return pg_sim::ptx_rank() & (Size - 1);
    }
    template <class T> T shfl(T var, int src_rank) const
    {
        return pg_detail::shfl_words(
            var, [&](auto v) { return __shfl_sync(mask_, v, src_rank, (int)Size); });
    }
    template <class T> T shfl_down(T var, unsigned int delta) const
    {
        return pg_detail::shfl_words(
            var, [&](auto v) { return __shfl_down_sync(mask_, v, delta, (int)Size); });
    }
    template <class T> T shfl_up(T var, unsigned int delta) const
    {
        return pg_detail::shfl_words(
            var, [&](auto v) { return __shfl_up_sync(mask_, v, delta, (int)Size); });
    }
    template <class T> T shfl_xor(T var, unsigned int lane_mask) const
    {
        return pg_detail::shfl_words(var, [&](auto v) {
            return __shfl_xor_sync(mask_, v, (int)lane_mask, (int)Size);
        });
    }
};

template <unsigned int Size, class ParentT>
class thread_block_tile : public thread_block_tile<Size, void> {
  public:
    thread_block_tile(unsigned int meta_rank = 0, unsigned int meta_size = 1)
        : thread_block_tile<Size, void>(meta_rank, meta_size)
    {
    }
};

template <unsigned int Size, class ParentT>
inline thread_block_tile<Size, ParentT>
tiled_partition(const ParentT &parent)
{
    unsigned int rank = (unsigned int)parent.thread_rank();
    unsigned int n = (unsigned int)parent.num_threads();
    return thread_block_tile<Size, ParentT>(rank / Size, (n + Size - 1) / Size);
}

/* tiled_partition(parent, n): a tile of n lanes as a thread_group */
inline thread_group
tiled_partition(const thread_group &parent, unsigned int n)
{
    unsigned int rank = (unsigned int)parent.thread_rank();
    unsigned int size = (unsigned int)parent.num_threads();
    if (n == size && parent.get_type() == 4u) {
        return thread_group(true, 0, size);
    }
    if (n == 0 || n > 32 || (n & (n - 1)) != 0) {
        pg_detail::unsupported(
            "tiled_partition(group, n): pygpu's simulator runs tiles of "
            "a power-of-two size up to 32, or the whole block");
    }
    unsigned int lane = pg_sim::ptx_laneid();
    unsigned int bits = n == 32 ? 0xffffffffu : ((1u << n) - 1) << (lane / n * n);
    return pg_warp_group(bits & pg_detail::warp_lanes(), rank / n, (size + n - 1) / n);
}

/* the lanes of group g with the same label */
template <class Group>
inline coalesced_group
labeled_partition(const Group &g, int label)
{
    return coalesced_group(__match_any_sync(g.pg_mask(), label));
}

template <class Group>
inline coalesced_group
binary_partition(const Group &g, bool predicate)
{
    unsigned int mask = g.pg_mask(), yes = __ballot_sync(mask, predicate);
    return coalesced_group(predicate ? yes : mask & ~yes);
}

template <class Group>
inline void
sync(const Group &g)
{
    g.sync();
}
template <class Group>
inline auto
thread_rank(const Group &g) -> decltype(g.thread_rank())
{
    return g.thread_rank();
}
template <class Group>
inline auto
group_size(const Group &g) -> decltype(g.num_threads())
{
    return g.num_threads();
}

} /* namespace cooperative_groups */

/* cg::coalesced_threads() and coalesced_threads() (after a using) alike */
using cooperative_groups::pg_coalesced_threads_at;
#define coalesced_threads() pg_coalesced_threads_at(PG_SIM_SITE)

#endif /* PYGPU_SIM_COOPERATIVE_GROUPS_H */
