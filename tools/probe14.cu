// Issue 14's probes on a GPU, one program: what the benchmark's figures rest on.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 tools/probe14.cu -o /tmp/probe14 -lpthread
//   /tmp/probe14 launch|launch2|f32|f64|hints|host|host2|staging|register|ntcopy|ntstaging|wake|fused
//
// launch, launch2: host time of <<<>>> and cudaLaunchKernel (2 and 5 arguments,
//   one struct), cudaGetDevice, cudaGetLastError, in interleaved bursts of 256.
// f32, f64: add and add_one over 2^28 elements at blocks of 128, 256 and 1024
//   against the device copy: the "one block of E works" kernel, the same
//   arithmetic without the idle blocks, 16-byte packs at 4 to 64 elements a
//   thread, clusters; and empty kernels of the tutorials' grids.
// hints: cache hints on the loads and stores of the 16-byte-pack add.
// host, host2: fresh host memory: cudaMallocHost, faulting in with
//   MADV_POPULATE_WRITE or a write a page at 1 to 16 threads, with and without
//   huge pages, cudaHostRegister / Unregister, a register-and-copy pipeline.
// staging: pageable host to device through a ring of 4 page-locked pieces,
//   threads that meet after each piece against a pipeline.
// register: pageable memory registered (cudaHostRegister) in pieces from several
//   threads, each piece copied straight to or from it and unregistered once done;
//   host memcpy bandwidth and fault-in rates at 1 to 16 threads.
// ntcopy, ntstaging: a copy with stores that bypass the cache (AVX2 streaming stores)
//   against memcpy, into touched and into fresh memory; the staging probe with it.
// fused: device to host into fresh memory, T threads each copying 2 MiB units out
//   of the staging ring into their own huge pages (no separate faulting threads).
// wake: the staging probe with the pool's workers spinning, sleeping on a condition
//   variable (as pygpu's), or spinning 200 us before they sleep.
// Results are in docs/PERFORMANCE.md (issue 14's last round). Not built by
// setup.py; needs a GPU.
#include <algorithm>
#include <atomic>
#include <functional>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <pthread.h>
#include <string>
#include <sys/mman.h>
#include <thread>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__,       \
                   __LINE__);                                                          \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

__global__ void empty_kernel(float *p) {}

template <class T, int E>
__global__ void __launch_bounds__(1024) elems_idle(const T *a, const T *b, T s, T *out, int64_t n) {
    int64_t block = blockIdx.x;
    if (block % E != 0) return;
    int64_t per = blockDim.x, t = threadIdx.x;
    int64_t step = ((gridDim.x + E - 1) / E) * per * E;
    for (int64_t base = (block / E) * per * E + t; base < n; base += step) {
        T x[E];
#pragma unroll
        for (int u = 0; u < E; u++) {
            int64_t i = base + u * per;
            if (i < n) x[u] = a[i] + (b != nullptr ? b[i] : s);
        }
#pragma unroll
        for (int u = 0; u < E; u++) {
            int64_t i = base + u * per;
            if (i < n) out[i] = x[u];
        }
    }
}

// the same arithmetic with the idle blocks not launched: grid is ceil(G / E)
template <class T, int E>
__global__ void __launch_bounds__(1024) elems_dense(const T *a, const T *b, T s, T *out, int64_t n) {
    int64_t per = blockDim.x, t = threadIdx.x;
    int64_t step = (int64_t)gridDim.x * per * E;
    for (int64_t base = (int64_t)blockIdx.x * per * E + t; base < n; base += step) {
        T x[E];
#pragma unroll
        for (int u = 0; u < E; u++) {
            int64_t i = base + u * per;
            if (i < n) x[u] = a[i] + (b != nullptr ? b[i] : s);
        }
#pragma unroll
        for (int u = 0; u < E; u++) {
            int64_t i = base + u * per;
            if (i < n) out[i] = x[u];
        }
    }
}

template <class T> struct alignas(16) pack { T v[16 / sizeof(T)]; };

// pygpu's add_kernel (16-byte packs, U in flight), grid-stride
template <class T>
__global__ void pack_kernel(const T *a, const T *b, T s, T *out, int64_t n) {
    constexpr int V = 16 / sizeof(T), U = 4;
    const int64_t rank = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, count = (int64_t)gridDim.x * blockDim.x;
    const pack<T> *pa = (const pack<T> *)a, *pb = (const pack<T> *)b;
    pack<T> *po = (pack<T> *)out;
    const int64_t nv = n / V;
    int64_t i = rank;
    for (; i + (U - 1) * count < nv; i += U * count) {
        pack<T> x[U], y[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            x[u] = pa[i + u * count];
            if (pb != nullptr) y[u] = pb[i + u * count];
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
#pragma unroll
            for (int j = 0; j < V; j++) x[u].v[j] += pb != nullptr ? y[u].v[j] : s;
            po[i + u * count] = x[u];
        }
    }
    for (; i < nv; i += count) {
        pack<T> x = pa[i];
#pragma unroll
        for (int j = 0; j < V; j++) x.v[j] += pb != nullptr ? pb[i].v[j] : s;
        po[i] = x;
    }
    for (int64_t k = nv * V + rank; k < n; k += count) out[k] = a[k] + (b != nullptr ? b[k] : s);
}

template <class K, class... A>
static float time_launch(K kernel, unsigned grid, unsigned block, int cluster, A... args) {
    cudaEvent_t s, e;
    CK(cudaEventCreate(&s));
    CK(cudaEventCreate(&e));
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.stream = 0;
    if (cluster > 1) {
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = cluster;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    auto go = [&] {
        if (cluster > 1) {
            CK(cudaLaunchKernelEx(&cfg, kernel, args...));
        } else {
            kernel<<<grid, block>>>(args...);
            CK(cudaGetLastError());
        }
    };
    go();
    CK(cudaDeviceSynchronize());
    std::vector<double> ts;
    for (int r = 0; r < 9; r++) {
        CK(cudaEventRecord(s));
        go();
        CK(cudaEventRecord(e));
        CK(cudaEventSynchronize(e));
        float ms;
        CK(cudaEventElapsedTime(&ms, s, e));
        ts.push_back(ms);
    }
    cudaEventDestroy(s);
    cudaEventDestroy(e);
    return (float)median(ts);
}

static float time_copy(void *dst, void *src, size_t bytes) {
    cudaEvent_t s, e;
    CK(cudaEventCreate(&s));
    CK(cudaEventCreate(&e));
    std::vector<double> ts;
    CK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
    for (int r = 0; r < 9; r++) {
        CK(cudaEventRecord(s));
        CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
        CK(cudaEventRecord(e));
        CK(cudaEventSynchronize(e));
        float ms;
        CK(cudaEventElapsedTime(&ms, s, e));
        ts.push_back(ms);
    }
    return (float)median(ts);
}

template <class T>
static void elementwise(const char *tname) {
    const int64_t n = (int64_t)1 << 28;
    const size_t bytes = n * sizeof(T);
    T *a, *b, *o;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMalloc(&o, bytes));
    CK(cudaMemset(a, 0, bytes));
    CK(cudaMemset(b, 0, bytes));
    double copy_gbs = 2.0 * bytes / time_copy(o, a, bytes) / 1e6;
    printf("%s copy %.0f GB/s\n", tname, copy_gbs);
    const int blocks_[] = {128, 256, 1024};
    for (int op = 0; op < 2; op++) { // 0 add, 1 add_one
        const T *pb = op == 0 ? b : nullptr;
        T *po = op == 0 ? o : a;
        double moved = (op == 0 ? 3.0 : 2.0) * bytes;
        for (int B : blocks_) {
            unsigned G = (unsigned)((n + B - 1) / B);
            auto report = [&](const char *name, float ms) {
                printf("%s %s B=%d %-22s %.3f ms %.0f GB/s %.3fx\n", tname, op == 0 ? "add" : "add_one", B, name, ms,
                       moved / ms / 1e6, moved / ms / 1e6 / copy_gbs);
            };
            report("idle E=4", time_launch(elems_idle<T, 4>, G, B, 1, (const T *)a, pb, (T)1, po, n));
            report("idle E=8", time_launch(elems_idle<T, 8>, G, B, 1, (const T *)a, pb, (T)1, po, n));
            report("idle E=2", time_launch(elems_idle<T, 2>, G, B, 1, (const T *)a, pb, (T)1, po, n));
            if (B == 128 && sizeof(T) == 4) {
                for (int c : {2, 4, 8})
                    report((std::string("idle E=4 cluster ") + std::to_string(c)).c_str(),
                           time_launch(elems_idle<T, 4>, G, B, c, (const T *)a, pb, (T)1, po, n));
            }
            report("dense E=1", time_launch(elems_dense<T, 1>, G, B, 1, (const T *)a, pb, (T)1, po, n));
            report("dense E=2", time_launch(elems_dense<T, 2>, (G + 1) / 2, B, 1, (const T *)a, pb, (T)1, po, n));
            report("dense E=4", time_launch(elems_dense<T, 4>, (G + 3) / 4, B, 1, (const T *)a, pb, (T)1, po, n));
            report("dense E=8", time_launch(elems_dense<T, 8>, (G + 7) / 8, B, 1, (const T *)a, pb, (T)1, po, n));
            report("dense E=16", time_launch(elems_dense<T, 16>, (G + 15) / 16, B, 1, (const T *)a, pb, (T)1, po, n));
            for (int per : {4, 8, 16, 32, 64}) {
                unsigned g = (unsigned)std::max<int64_t>(1, n / ((int64_t)per * B));
                report((std::string("pack, elems/thread ") + std::to_string(per)).c_str(),
                       time_launch(pack_kernel<T>, g, B, 1, (const T *)a, pb, (T)1, po, n));
            }
        }
    }
    // dispatch alone
    for (int B : {128, 256, 1024}) {
        unsigned G = (unsigned)((n + B - 1) / B);
        printf("%s empty B=%d G=%u %.3f ms\n", tname, B, G, time_launch(empty_kernel, G, B, 1, (float *)a));
        if (B == 128)
            for (int c : {2, 4, 8})
                printf("%s empty B=%d G=%u cluster %d %.3f ms\n", tname, B, G, c,
                       time_launch(empty_kernel, G, B, c, (float *)a));
    }
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(o));
}

// ---- launch host costs --------------------------------------------------------------
__global__ void k2(float *a, int n) {
    if (threadIdx.x < n) a[threadIdx.x] += 1;
}
__global__ void k5(const float *a, const float *b, float s, float *out, int64_t n) {
    if (threadIdx.x < n) out[threadIdx.x] = a[threadIdx.x] + (b ? b[threadIdx.x] : s);
}

template <class F> static double burst_us(F f, int burst = 256) {
    CK(cudaDeviceSynchronize());
    double t0 = now();
    for (int i = 0; i < burst; i++) f();
    double t = (now() - t0) / burst * 1e6;
    return t;
}

static void launch_costs() {
    float *d;
    CK(cudaMalloc(&d, 1024));
    const float *cd = d;
    float s = 1;
    int64_t n = 32;
    int n2 = 32;
    void *args5[] = {(void *)&cd, (void *)&cd, &s, (void *)&d, &n};
    void *args2[] = {(void *)&d, &n2};
    const char *names[] = {"<<<>>> 2 args",
                           "<<<>>> 5 args",
                           "<<<>>> 5 args + GetLastError",
                           "<<<>>> 5 args + GetDevice + GetLastError",
                           "cudaLaunchKernel 5 args",
                           "cudaLaunchKernel 5 args + GetDevice",
                           "cudaLaunchKernel 2 args",
                           "GetDevice alone",
                           "GetLastError alone",
                           "PeekAtLastError alone"};
    const int forms = 10;
    std::vector<std::vector<double>> res(forms);
    for (int round = 0; round < 200; round++) {
        for (int f = 0; f < forms; f++) {
            double us = 0;
            switch (f) {
            case 0: us = burst_us([&] { k2<<<1, 32>>>(d, 32); }); break;
            case 1: us = burst_us([&] { k5<<<1, 32>>>(cd, cd, 1.0f, d, 32); }); break;
            case 2: us = burst_us([&] { k5<<<1, 32>>>(cd, cd, 1.0f, d, 32); (void)cudaGetLastError(); }); break;
            case 3:
                us = burst_us([&] {
                    int dev;
                    (void)cudaGetDevice(&dev);
                    k5<<<1, 32>>>(cd, cd, 1.0f, d, 32);
                    (void)cudaGetLastError();
                });
                break;
            case 4: us = burst_us([&] { (void)cudaLaunchKernel((const void *)k5, dim3(1), dim3(32), args5, 0, 0); }); break;
            case 5:
                us = burst_us([&] {
                    int dev;
                    (void)cudaGetDevice(&dev);
                    (void)cudaLaunchKernel((const void *)k5, dim3(1), dim3(32), args5, 0, 0);
                });
                break;
            case 6: us = burst_us([&] { (void)cudaLaunchKernel((const void *)k2, dim3(1), dim3(32), args2, 0, 0); }); break;
            case 7: us = burst_us([&] { int dev; (void)cudaGetDevice(&dev); }, 4096); break;
            case 8: us = burst_us([&] { (void)cudaGetLastError(); }, 4096); break;
            case 9: us = burst_us([&] { (void)cudaPeekAtLastError(); }, 4096); break;
            }
            res[f].push_back(us);
        }
    }
    for (int f = 0; f < forms; f++) printf("launch %-45s %.4f us\n", names[f], median(res[f]));
    CK(cudaFree(d));
}

// ---- fresh host memory for D2H ---------------------------------------------------------
static void populate(char *p, size_t n, int threads) {
    std::vector<std::thread> ts;
    size_t per = ((n + threads - 1) / threads + (2 << 20) - 1) & ~(size_t)((2 << 20) - 1);
    for (int t = 0; t < threads; t++) {
        size_t off = per * t;
        if (off >= n) break;
        size_t len = std::min(per, n - off);
        ts.emplace_back([=] {
            if (madvise(p + off, len, MADV_POPULATE_WRITE) != 0) {
                for (size_t i = 0; i < len; i += 4096) p[off + i] = 0;
            }
        });
    }
    for (auto &t : ts) t.join();
}

static char *fresh(size_t n) {
    size_t align = 2 << 20;
    char *raw = (char *)mmap(nullptr, n + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    char *p = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    madvise(p, n, MADV_HUGEPAGE);
    return p; // leaked tail/head: fine for an experiment (munmap below takes p)
}

static void host_d2h() {
    const size_t n = (size_t)1 << 30;
    char *dev;
    CK(cudaMalloc(&dev, n));
    CK(cudaMemset(dev, 1, n));
    // pinned
    {
        double t0 = now();
        void *h;
        CK(cudaMallocHost(&h, n));
        double talloc = now() - t0;
        CK(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));
        std::vector<double> ts;
        for (int r = 0; r < 5; r++) {
            t0 = now();
            CK(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));
            ts.push_back(now() - t0);
        }
        t0 = now();
        CK(cudaFreeHost(h));
        printf("host cudaMallocHost 1GiB %.1f ms, D2H into it %.1f GB/s, cudaFreeHost %.1f ms\n", talloc * 1e3,
               n / median(ts) / 1e9, (now() - t0) * 1e3);
    }
    // prefault rates
    for (int threads : {1, 4, 8, 12, 16}) {
        std::vector<double> ts;
        for (int r = 0; r < 3; r++) {
            char *p = fresh(n);
            double t0 = now();
            populate(p, n, threads);
            ts.push_back(now() - t0);
            munmap(p, n);
        }
        printf("host populate 1GiB, %d threads: %.1f ms (%.1f GB/s)\n", threads, median(ts) * 1e3,
               n / median(ts) / 1e9);
    }
    // register costs
    for (int pre : {0, 1}) {
        std::vector<double> treg, tcopy, tunreg;
        for (int r = 0; r < 3; r++) {
            char *p = fresh(n);
            if (pre) populate(p, n, 8);
            double t0 = now();
            cudaError_t e = cudaHostRegister(p, n, 0);
            if (e != cudaSuccess) {
                printf("host register failed: %s\n", cudaGetErrorString(e));
                munmap(p, n);
                return;
            }
            treg.push_back(now() - t0);
            t0 = now();
            CK(cudaMemcpy(p, dev, n, cudaMemcpyDeviceToHost));
            tcopy.push_back(now() - t0);
            t0 = now();
            CK(cudaHostUnregister(p));
            tunreg.push_back(now() - t0);
            munmap(p, n);
        }
        printf("host register 1GiB (prefaulted %d): register %.1f ms, D2H %.1f GB/s, unregister %.1f ms\n", pre,
               median(treg) * 1e3, n / median(tcopy) / 1e9, median(tunreg) * 1e3);
    }
    // pipelined: prefault ahead (T threads), register chunk, DMA chunk; unregister at end
    for (size_t chunk : {(size_t)32 << 20, (size_t)64 << 20, (size_t)128 << 20}) {
        for (int threads : {4, 8}) {
            std::vector<double> ts;
            for (int r = 0; r < 3; r++) {
                char *p = fresh(n);
                size_t chunks = n / chunk;
                double t0 = now();
                std::vector<std::thread> pool;
                std::atomic<size_t> next{0};
                std::vector<std::atomic<int>> done(chunks);
                for (auto &d : done) d = 0;
                for (int t = 0; t < threads; t++)
                    pool.emplace_back([&] {
                        for (;;) {
                            size_t c = next.fetch_add(1);
                            if (c >= chunks) return;
                            if (madvise(p + c * chunk, chunk, MADV_POPULATE_WRITE) != 0)
                                for (size_t i = 0; i < chunk; i += 4096) p[c * chunk + i] = 0;
                            done[c].store(1);
                        }
                    });
                for (size_t c = 0; c < chunks; c++) {
                    while (!done[c].load()) std::this_thread::yield();
                    CK(cudaHostRegister(p + c * chunk, chunk, 0));
                    CK(cudaMemcpyAsync(p + c * chunk, dev + c * chunk, chunk, cudaMemcpyDeviceToHost, 0));
                }
                CK(cudaStreamSynchronize(0));
                double tcopy = now() - t0;
                for (size_t c = 0; c < chunks; c++) CK(cudaHostUnregister(p + c * chunk));
                double tall = now() - t0;
                for (auto &t : pool) t.join();
                ts.push_back(tall);
                if (r == 0)
                    printf("host pipelined chunk %zu MiB threads %d: copy done %.1f ms, with unregister %.1f ms\n",
                           chunk >> 20, threads, tcopy * 1e3, tall * 1e3);
                munmap(p, n);
            }
            printf("host pipelined chunk %zu MiB threads %d: %.1f GB/s (median, unregister included)\n", chunk >> 20,
                   threads, n / median(ts) / 1e9);
        }
    }
    CK(cudaFree(dev));
}


static void touch(char *p, size_t n, int threads) {
    std::vector<std::thread> ts;
    size_t per = ((n + threads - 1) / threads + 4095) & ~(size_t)4095;
    for (int t = 0; t < threads; t++) {
        size_t off = per * t;
        if (off >= n) break;
        size_t len = std::min(per, n - off);
        ts.emplace_back([=] { for (size_t i = 0; i < len; i += 4096) p[off + i] = 0; });
    }
    for (auto &t : ts) t.join();
}
static void par_memset(char *p, size_t n, int threads) {
    std::vector<std::thread> ts;
    size_t per = ((n + threads - 1) / threads + 4095) & ~(size_t)4095;
    for (int t = 0; t < threads; t++) {
        size_t off = per * t;
        if (off >= n) break;
        size_t len = std::min(per, n - off);
        ts.emplace_back([=] { memset(p + off, 1, len); });
    }
    for (auto &t : ts) t.join();
}
static void host2() {
    const size_t n = (size_t)1 << 30;
    for (int huge : {0, 1}) {
        for (int threads : {1, 2, 3, 4, 6, 8}) {
            std::vector<double> tp, tt, tm;
            for (int r = 0; r < 3; r++) {
                size_t align = 2 << 20;
                char *raw = (char *)mmap(nullptr, n + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                char *p = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
                madvise(p, n, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
                double t0 = now();
                populate(p, n, threads);
                tp.push_back(now() - t0);
                t0 = now();
                par_memset(p, n, threads);
                tm.push_back(now() - t0);
                munmap(raw, n + align);
                raw = (char *)mmap(nullptr, n + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                p = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
                madvise(p, n, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
                t0 = now();
                touch(p, n, threads);
                tt.push_back(now() - t0);
                munmap(raw, n + align);
            }
            printf("host2 huge %d threads %d: populate %.1f GB/s, touch %.1f GB/s, memset touched %.1f GB/s\n", huge,
                   threads, n / median(tp) / 1e9, n / median(tt) / 1e9, n / median(tm) / 1e9);
        }
    }
    {
        double t0 = now();
        char *p = (char *)mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        printf("host2 MAP_POPULATE 1GiB %.1f ms\n", (now() - t0) * 1e3);
        munmap(p, n);
    }
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "Huge") || strstr(line, "MemFree") || strstr(line, "MemTotal")) printf("meminfo %s", line);
    if (f) fclose(f);
}

template <int M> __device__ __forceinline__ float4 ld4(const float4 *p) {
    if (M == 1) return __ldcs(p);
    if (M == 2) return __ldg(p);
    if (M == 3) return __ldlu(p);
    return *p;
}
template <int M> __device__ __forceinline__ void st4(float4 *p, float4 v) {
    if (M == 1) __stcs(p, v);
    else if (M == 3) __stwt(p, v);
    else *p = v;
}
// f32 add with float4 packs, U in flight; LM/SM pick the cache hints
template <int LM, int SM, int U>
__global__ void packh(const float *a, const float *b, float *out, int64_t n) {
    const int64_t rank = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, count = (int64_t)gridDim.x * blockDim.x;
    const float4 *pa = (const float4 *)a, *pb = (const float4 *)b;
    float4 *po = (float4 *)out;
    const int64_t nv = n / 4;
    int64_t i = rank;
    for (; i + (U - 1) * count < nv; i += U * count) {
        float4 x[U], y[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            x[u] = ld4<LM>(pa + i + u * count);
            if (pb) y[u] = ld4<LM>(pb + i + u * count);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            float4 v = x[u];
            if (pb) { v.x += y[u].x; v.y += y[u].y; v.z += y[u].z; v.w += y[u].w; }
            else { v.x += 1; v.y += 1; v.z += 1; v.w += 1; }
            st4<SM>(po + i + u * count, v);
        }
    }
    for (; i < nv; i += count) {
        float4 v = ld4<LM>(pa + i);
        if (pb) { float4 w = ld4<LM>(pb + i); v.x += w.x; v.y += w.y; v.z += w.z; v.w += w.w; }
        else { v.x += 1; v.y += 1; v.z += 1; v.w += 1; }
        st4<SM>(po + i, v);
    }
}
static void hints() {
    const int64_t n = (int64_t)1 << 28;
    const size_t bytes = n * 4;
    float *a, *b, *o;
    CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes)); CK(cudaMalloc(&o, bytes));
    CK(cudaMemset(a, 0, bytes)); CK(cudaMemset(b, 0, bytes));
    double copy_gbs = 2.0 * bytes / time_copy(o, a, bytes) / 1e6;
    printf("hints copy %.0f GB/s\n", copy_gbs);
    for (int rep = 0; rep < 2; rep++)
    for (int op = 0; op < 2; op++) {
        const float *pb = op == 0 ? b : nullptr;
        float *po = op == 0 ? o : a;
        double moved = (op == 0 ? 3.0 : 2.0) * bytes;
        auto rep_ = [&](const char *name, float ms) {
            printf("hints %s %-28s %.3f ms %.0f GB/s %.3fx\n", op == 0 ? "add" : "add_one", name, ms, moved / ms / 1e6, moved / ms / 1e6 / copy_gbs);
        };
        for (int per : {8, 16}) {
            unsigned g = (unsigned)(n / (256 * per));
            std::string s = std::to_string(per);
            rep_(("plain/plain " + s).c_str(), time_launch(packh<0, 0, 4>, g, 256, 1, (const float *)a, pb, po, n));
            rep_(("cs/cs " + s).c_str(), time_launch(packh<1, 1, 4>, g, 256, 1, (const float *)a, pb, po, n));
            rep_(("cs/plain " + s).c_str(), time_launch(packh<1, 0, 4>, g, 256, 1, (const float *)a, pb, po, n));
            rep_(("plain/cs " + s).c_str(), time_launch(packh<0, 1, 4>, g, 256, 1, (const float *)a, pb, po, n));
            rep_(("ldg/plain " + s).c_str(), time_launch(packh<2, 0, 4>, g, 256, 1, (const float *)a, pb, po, n));
            rep_(("ldlu/cs " + s).c_str(), time_launch(packh<3, 1, 4>, g, 256, 1, (const float *)a, pb, po, n));
            rep_(("plain/wt " + s).c_str(), time_launch(packh<0, 3, 4>, g, 256, 1, (const float *)a, pb, po, n));
        }
        unsigned g = (unsigned)(n / (128 * 16));
        rep_("plain/plain 16 B=128", time_launch(packh<0, 0, 4>, g, 128, 1, (const float *)a, pb, po, n));
        rep_("cs/cs 16 B=128", time_launch(packh<1, 1, 4>, g, 128, 1, (const float *)a, pb, po, n));
        g = (unsigned)(n / (256 * 32));
        rep_("plain/plain 32 U=8", time_launch(packh<0, 0, 8>, g, 256, 1, (const float *)a, pb, po, n));
        rep_("cs/cs 32 U=8", time_launch(packh<1, 1, 8>, g, 256, 1, (const float *)a, pb, po, n));
    }
    CK(cudaFree(a)); CK(cudaFree(b)); CK(cudaFree(o));
}

struct add_params { const float *a; const float *b; float s; float *out; int64_t n; };
__global__ void k1s(add_params p) {
    if (threadIdx.x < p.n) p.out[threadIdx.x] = p.a[threadIdx.x] + (p.b ? p.b[threadIdx.x] : p.s);
}
static void launch2() {
    float *d;
    CK(cudaMalloc(&d, 1024));
    const float *cd = d;
    float s = 1;
    int64_t n = 32;
    int n2 = 32;
    add_params ps = {cd, cd, 1.0f, d, 32};
    void *args5[] = {(void *)&cd, (void *)&cd, &s, (void *)&d, &n};
    void *args2[] = {(void *)&d, &n2};
    void *args1[] = {(void *)&ps};
    const char *names[] = {"<<<>>> 2 args", "cudaLaunchKernel 2 args", "cudaLaunchKernel 5 args", "cudaLaunchKernel 1 struct of 40 B"};
    std::vector<std::vector<double>> res(4);
    for (int round = 0; round < 300; round++) {
        res[0].push_back(burst_us([&] { k2<<<1, 32>>>(d, 32); }));
        res[1].push_back(burst_us([&] { (void)cudaLaunchKernel((const void *)k2, dim3(1), dim3(32), args2, 0, 0); }));
        res[2].push_back(burst_us([&] { (void)cudaLaunchKernel((const void *)k5, dim3(1), dim3(32), args5, 0, 0); }));
        res[3].push_back(burst_us([&] { (void)cudaLaunchKernel((const void *)k1s, dim3(1), dim3(32), args1, 0, 0); }));
    }
    for (int f = 0; f < 4; f++) printf("launch2 %-40s %.4f us\n", names[f], median(res[f]));
}

// the host copy the staging probes use: memcpy, or stores that bypass the cache
#include <immintrin.h>
__attribute__((target("avx2"))) static void *nt_copy(void *dst, const void *src, size_t n) {
    char *d = (char *)dst;
    const char *s = (const char *)src;
    size_t head = (32 - ((uintptr_t)d & 31)) & 31;
    if (head > n) head = n;
    memcpy(d, s, head);
    d += head; s += head; n -= head;
    for (; n >= 128; n -= 128, d += 128, s += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)s), b = _mm256_loadu_si256((const __m256i *)(s + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + 64)), e = _mm256_loadu_si256((const __m256i *)(s + 96));
        _mm256_stream_si256((__m256i *)d, a); _mm256_stream_si256((__m256i *)(d + 32), b);
        _mm256_stream_si256((__m256i *)(d + 64), c); _mm256_stream_si256((__m256i *)(d + 96), e);
    }
    memcpy(d, s, n);
    _mm_sfence();
    return dst;
}
static void *(*copy_fn)(void *, const void *, size_t) = memcpy;

// staged H2D: fork-join per chunk (pygpu now) against a pipeline where each
// worker copies its slice of chunk k and goes on to chunk k+1 as soon as that
// chunk's buffer is free; the submitter issues chunk k's DMA once all slices
// are in.
struct stage_exp {
    static const int R = 4;
    size_t chunk;
    char *buf[R];
    cudaEvent_t done[R];
    char *dev;
};
// a persistent-thread pool version of fork-join and of the pipeline. mode 0: the
// workers and the caller spin (yielding) between jobs; 1: they sleep on a condition
// variable (pygpu's pool); 2: they spin for up to 200 us, then sleep.
#include <condition_variable>
#include <mutex>
static int pool_mode = 0;
struct pool_exp {
    std::vector<std::thread> ts;
    std::atomic<long> gen{0};
    std::atomic<int> pending{0};
    std::atomic<bool> quit{false};
    std::function<void(int)> job;
    std::mutex m;
    std::condition_variable cv_start, cv_done;
    int n, mode;
    bool spin_until(std::function<bool()> ok) {
        if (mode == 1) return ok();
        double t0 = now();
        for (int i = 0;; i++) {
            if (ok()) return true;
            if (mode == 2 && (i & 63) == 0 && now() - t0 > 200e-6) return false;
            if (mode == 0) std::this_thread::yield(); else __builtin_ia32_pause();
        }
    }
    pool_exp(int n_) : n(n_), mode(pool_mode) {
        for (int t = 1; t < n; t++)
            ts.emplace_back([this, t] {
                long seen = 0;
                for (;;) {
                    if (!spin_until([&] { return gen.load() != seen || quit.load(); })) {
                        std::unique_lock<std::mutex> l(m);
                        cv_start.wait(l, [&] { return gen.load() != seen || quit.load(); });
                    }
                    if (quit.load()) return;
                    seen = gen.load();
                    job(t);
                    if (pending.fetch_sub(1) == 1 && mode != 0) { std::lock_guard<std::mutex> l(m); cv_done.notify_one(); }
                }
            });
    }
    void run(std::function<void(int)> j) {
        job = j;
        pending.store(n - 1);
        { std::lock_guard<std::mutex> l(m); gen.fetch_add(1); }
        if (mode != 0) cv_start.notify_all();
        job(0);
        if (!spin_until([&] { return pending.load() == 0; })) {
            std::unique_lock<std::mutex> l(m);
            cv_done.wait(l, [&] { return pending.load() == 0; });
        }
    }
    ~pool_exp() {
        { std::lock_guard<std::mutex> l(m); quit = true; }
        cv_start.notify_all();
        for (auto &t : ts) t.join();
    }
};
static double h2d_forkjoin_pool(stage_exp &S, pool_exp &P, const char *src, size_t n) {
    size_t chunks = n / S.chunk, per = S.chunk / P.n;
    double t0 = now();
    for (size_t k = 0; k < chunks; k++) {
        int b = k % S.R;
        if (k >= (size_t)S.R) CK(cudaEventSynchronize(S.done[b]));
        P.run([&](int t) { copy_fn(S.buf[b] + t * per, src + k * S.chunk + t * per, per); });
        CK(cudaMemcpyAsync(S.dev + k * S.chunk, S.buf[b], S.chunk, cudaMemcpyHostToDevice, 0));
        CK(cudaEventRecord(S.done[b], 0));
    }
    CK(cudaStreamSynchronize(0));
    return now() - t0;
}
static double h2d_pipeline_pool(stage_exp &S, pool_exp &P, const char *src, size_t n) {
    size_t chunks = n / S.chunk, per = S.chunk / P.n;
    std::vector<std::atomic<int>> filled(chunks);
    for (auto &f : filled) f = 0;
    std::atomic<long> free_upto{S.R - 1}; // chunks <= this may be filled
    double t0 = now();
    std::thread submit([&] {
        for (size_t k = 0; k < chunks; k++) {
            while (filled[k].load() < P.n) { std::this_thread::yield(); }
            int b = k % S.R;
            CK(cudaMemcpyAsync(S.dev + k * S.chunk, S.buf[b], S.chunk, cudaMemcpyHostToDevice, 0));
            CK(cudaEventRecord(S.done[b], 0));
            if (k + 1 >= (size_t)S.R) {
                // chunk k+1's buffer held chunk k+1-R: wait for its DMA
                CK(cudaEventSynchronize(S.done[(k + 1) % S.R]));
            }
            free_upto.store(k + S.R);
        }
    });
    P.run([&](int t) {
        for (size_t k = 0; k < chunks; k++) {
            while ((long)k > free_upto.load()) { std::this_thread::yield(); }
            copy_fn(S.buf[k % S.R] + t * per, src + k * S.chunk + t * per, per);
            filled[k].fetch_add(1);
        }
    });
    submit.join();
    CK(cudaStreamSynchronize(0));
    return now() - t0;
}
static void staging() {
    const size_t n = (size_t)1 << 30;
    char *src = (char *)malloc(n);
    memset(src, 7, n);
    char *dev;
    CK(cudaMalloc(&dev, n));
    void *pin;
    CK(cudaMallocHost(&pin, n));
    double tp = 1e9;
    for (int r = 0; r < 3; r++) { double t0 = now(); CK(cudaMemcpy(dev, pin, n, cudaMemcpyHostToDevice)); tp = std::min(tp, now() - t0); }
    printf("staging pinned h2d %.1f GB/s, copy %s\n", n / tp / 1e9, copy_fn == memcpy ? "memcpy" : "nt");
    for (size_t chunk : {(size_t)8 << 20, (size_t)16 << 20}) {
        stage_exp S;
        S.chunk = chunk;
        S.dev = dev;
        for (int b = 0; b < S.R; b++) { CK(cudaMallocHost(&S.buf[b], chunk)); CK(cudaEventCreateWithFlags(&S.done[b], cudaEventDisableTiming)); }
        for (int threads : {8, 12, 16}) {
            pool_exp P(threads);
            std::vector<double> a, b2, c;
            for (int r = 0; r < 5; r++) {
                a.push_back(h2d_forkjoin_pool(S, P, src, n));
                b2.push_back(h2d_pipeline_pool(S, P, src, n));
            }
            // memcpy alone, fork-join over the ring, no DMA
            size_t per = chunk / threads;
            for (int r = 0; r < 3; r++) {
                double t0 = now();
                for (size_t k = 0; k < n / chunk; k++) { int bb = k % S.R; P.run([&](int t) { copy_fn(S.buf[bb] + t * per, src + k * chunk + t * per, per); }); }
                c.push_back(now() - t0);
            }
            printf("staging chunk %zu MiB threads %d: fork-join %.1f GB/s, pipeline %.1f GB/s, memcpy alone %.1f GB/s (min-med over 5: fj %.1f-%.1f, pipe %.1f-%.1f)\n",
                   chunk >> 20, threads, n / median(a) / 1e9, n / median(b2) / 1e9, n / median(c) / 1e9,
                   n / *std::max_element(a.begin(), a.end()) / 1e9, n / *std::min_element(a.begin(), a.end()) / 1e9,
                   n / *std::max_element(b2.begin(), b2.end()) / 1e9, n / *std::min_element(b2.begin(), b2.end()) / 1e9);
        }
        for (int b = 0; b < S.R; b++) { cudaFreeHost(S.buf[b]); cudaEventDestroy(S.done[b]); }
    }
}

// ---- registering pageable memory in pieces, from several threads --------------------
// Each piece: (fresh memory: fault it in,) cudaHostRegister it, DMA it, cudaHostUnregister
// it once its event has passed. `reg` threads fault and register pieces in order; the
// caller issues the copies in order; `unreg` threads unregister in order.
static double reg_pipeline(char *host, char *dev, size_t n, size_t chunk, int reg, int unreg,
                           bool d2h, bool fault, cudaStream_t s, std::vector<cudaEvent_t> &ev,
                           double *t_copy) {
    size_t chunks = (n + chunk - 1) / chunk;
    std::vector<std::atomic<int>> state(chunks);
    for (auto &x : state) x = 0;
    std::atomic<size_t> next_reg{0}, next_unreg{0};
    std::atomic<int> failed{0};
    double t0 = now();
    std::vector<std::thread> pool;
    for (int t = 0; t < reg; t++)
        pool.emplace_back([&] {
            for (;;) {
                size_t c = next_reg.fetch_add(1);
                if (c >= chunks) return;
                size_t len = std::min(chunk, n - c * chunk);
                char *p = host + c * chunk;
                if (fault)
                    for (size_t i = 0; i < len; i += 4096) {
                        char z = 0;
                        __atomic_compare_exchange_n(p + i, &z, (char)0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
                    }
                if (cudaHostRegister(p, len, 0) != cudaSuccess) failed = 1;
                state[c].store(1);
            }
        });
    for (int t = 0; t < unreg; t++)
        pool.emplace_back([&] {
            for (;;) {
                size_t c = next_unreg.fetch_add(1);
                if (c >= chunks) return;
                while (state[c].load() < 2) std::this_thread::yield();
                cudaEventSynchronize(ev[c]);
                if (cudaHostUnregister(host + c * chunk) != cudaSuccess) failed = 1;
            }
        });
    for (size_t c = 0; c < chunks; c++) {
        size_t len = std::min(chunk, n - c * chunk);
        while (state[c].load() < 1) std::this_thread::yield();
        if (d2h) CK(cudaMemcpyAsync(host + c * chunk, dev + c * chunk, len, cudaMemcpyDeviceToHost, s));
        else CK(cudaMemcpyAsync(dev + c * chunk, host + c * chunk, len, cudaMemcpyHostToDevice, s));
        CK(cudaEventRecord(ev[c], s));
        state[c].store(2);
    }
    CK(cudaStreamSynchronize(s));
    *t_copy = now() - t0;
    for (auto &t : pool) t.join();
    if (failed) printf("register: a call failed\n");
    return now() - t0;
}

static void par(int threads, size_t n, std::function<void(size_t, size_t)> fn) {
    std::vector<std::thread> ts;
    size_t per = ((n + threads - 1) / threads + (2 << 20) - 1) & ~(size_t)((2 << 20) - 1);
    for (int t = 0; t < threads; t++) {
        size_t off = per * t;
        if (off >= n) break;
        ts.emplace_back(fn, off, std::min(per, n - off));
    }
    for (auto &t : ts) t.join();
}

static void register_probe() {
    const size_t n = (size_t)1 << 30;
    char *dev;
    CK(cudaMalloc(&dev, n));
    CK(cudaMemset(dev, 1, n));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> ev(1024);
    for (auto &e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    void *pin;
    CK(cudaMallocHost(&pin, n));
    double tin = 1e9, tout = 1e9;
    for (int r = 0; r < 3; r++) {
        double t0 = now(); CK(cudaMemcpy(dev, pin, n, cudaMemcpyHostToDevice)); tin = std::min(tin, now() - t0);
        t0 = now(); CK(cudaMemcpy(pin, dev, n, cudaMemcpyDeviceToHost)); tout = std::min(tout, now() - t0);
    }
    CK(cudaFreeHost(pin));
    printf("reg pinned in %.1f GB/s, out %.1f GB/s\n", n / tin / 1e9, n / tout / 1e9);
    // host memory bandwidth: memcpy between two touched buffers; fault-in rate
    char *a = fresh(n), *b = fresh(n);
    par(16, n, [&](size_t o, size_t l) { memset(a + o, 3, l); memset(b + o, 4, l); });
    for (int t : {1, 4, 8, 12, 16}) {
        std::vector<double> ts;
        for (int r = 0; r < 3; r++) { double t0 = now(); par(t, n, [&](size_t o, size_t l) { memcpy(b + o, a + o, l); }); ts.push_back(now() - t0); }
        std::vector<double> tf;
        for (int r = 0; r < 3; r++) {
            char *f = fresh(n);
            double t0 = now();
            par(t, n, [&](size_t o, size_t l) { for (size_t i = 0; i < l; i += 4096) f[o + i] = 1; });
            tf.push_back(now() - t0);
            munmap(f, n);
        }
        printf("reg host memcpy %d threads %.1f GB/s; fault-in %.1f GB/s\n", t, n / median(ts) / 1e9, n / median(tf) / 1e9);
    }
    // registration alone, touched memory, in pieces from T threads; unregistration
    for (size_t chunk : {(size_t)16 << 20, (size_t)64 << 20}) {
        for (int t : {1, 2, 4, 8}) {
            size_t chunks = n / chunk;
            std::atomic<size_t> next{0};
            double t0 = now();
            { std::vector<std::thread> ts; for (int i = 0; i < t; i++) ts.emplace_back([&] { for (;;) { size_t c = next.fetch_add(1); if (c >= chunks) return; CK(cudaHostRegister(a + c * chunk, chunk, 0)); } }); for (auto &x : ts) x.join(); }
            double treg = now() - t0;
            next = 0;
            t0 = now();
            { std::vector<std::thread> ts; for (int i = 0; i < t; i++) ts.emplace_back([&] { for (;;) { size_t c = next.fetch_add(1); if (c >= chunks) return; CK(cudaHostUnregister(a + c * chunk)); } }); for (auto &x : ts) x.join(); }
            printf("reg register 1 GiB touched, %zu MiB pieces, %d threads: register %.1f ms, unregister %.1f ms\n", chunk >> 20, t, treg * 1e3, (now() - t0) * 1e3);
        }
    }
    // the pipelines
    for (size_t chunk : {(size_t)16 << 20, (size_t)32 << 20, (size_t)64 << 20}) {
        for (int reg : {2, 4, 8}) {
            for (int unreg : {1, 2, 4}) {
                std::vector<double> h2d, h2dc, d2h, d2hc;
                for (int r = 0; r < 3; r++) {
                    double tc;
                    h2d.push_back(reg_pipeline(a, dev, n, chunk, reg, unreg, false, false, s, ev, &tc));
                    h2dc.push_back(tc);
                    char *f = fresh(n);
                    d2h.push_back(reg_pipeline(f, dev, n, chunk, reg, unreg, true, true, s, ev, &tc));
                    d2hc.push_back(tc);
                    munmap(f, n);
                }
                printf("reg pipeline %zu MiB, %d reg, %d unreg: h2d touched %.1f GB/s (%.2fx pinned; copies done %.1f), "
                       "d2h fresh %.1f GB/s (%.2fx; copies done %.1f)\n",
                       chunk >> 20, reg, unreg, n / median(h2d) / 1e9, tin / median(h2d), n / median(h2dc) / 1e9,
                       n / median(d2h) / 1e9, tout / median(d2h), n / median(d2hc) / 1e9);
            }
        }
    }
}

// device to host into fresh memory, the copy out of the staging ring and the first
// touch of each huge page fused: the ring's pieces are cut into 2 MiB units, and
// each of T threads takes the next unit, waits for its piece's DMA, and copies it
// into its own huge page (faulting it in); a piece's buffer goes back to the DMA
// once all its units are out.
static double fused_d2h(char *dst, char *dev, size_t n, size_t piece, int R, int T,
                        std::vector<char *> &buf, std::vector<cudaEvent_t> &ev, cudaStream_t s) {
    const size_t U = (size_t)2 << 20, upp = piece / U, pieces = n / piece, units = n / U;
    std::vector<std::atomic<int>> issued(pieces), done(pieces);
    for (size_t k = 0; k < pieces; k++) { issued[k] = 0; done[k] = 0; }
    std::atomic<size_t> next{0};
    double t0 = now();
    std::vector<std::thread> ts;
    for (int t = 0; t < T; t++)
        ts.emplace_back([&] {
            for (;;) {
                size_t u = next.fetch_add(1);
                if (u >= units) return;
                size_t k = u / upp;
                while (!issued[k].load()) __builtin_ia32_pause();
                CK(cudaEventSynchronize(ev[k]));
                memcpy(dst + u * U, buf[k % R] + (u % upp) * U, U);
                done[k].fetch_add(1);
            }
        });
    for (size_t k = 0; k < pieces; k++) {
        if (k >= (size_t)R) while (done[k - R].load() < (int)upp) __builtin_ia32_pause();
        CK(cudaMemcpyAsync(buf[k % R], dev + k * piece, piece, cudaMemcpyDeviceToHost, s));
        CK(cudaEventRecord(ev[k], s));
        issued[k].store(1);
    }
    for (auto &t : ts) t.join();
    return now() - t0;
}

static void fused_probe() {
    const size_t n = (size_t)1 << 30;
    char *dev;
    CK(cudaMalloc(&dev, n));
    std::vector<unsigned char> pat(n);
    for (size_t i = 0; i < n; i++) pat[i] = (unsigned char)(i * 2654435761u >> 13);
    CK(cudaMemcpy(dev, pat.data(), n, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> ev(n / ((size_t)2 << 20));
    for (auto &e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    void *pin;
    CK(cudaMallocHost(&pin, n));
    double tout = 1e9;
    for (int r = 0; r < 3; r++) { double t0 = now(); CK(cudaMemcpy(pin, dev, n, cudaMemcpyDeviceToHost)); tout = std::min(tout, now() - t0); }
    CK(cudaFreeHost(pin));
    printf("fused pinned out %.1f GB/s; target 0.5x = %.1f GB/s\n", n / tout / 1e9, 0.5 * n / tout / 1e9);
    char *touched = fresh(n);
    memset(touched, 1, n);
    for (auto pr : {std::make_pair((size_t)8 << 20, 8), std::make_pair((size_t)16 << 20, 4), std::make_pair((size_t)4 << 20, 16)}) {
        std::vector<char *> buf(pr.second);
        for (auto &b : buf) CK(cudaMallocHost((void **)&b, pr.first));
        for (int T : {8, 12, 15, 16}) {
            std::vector<double> fr, to;
            bool ok = true;
            for (int r = 0; r < 5; r++) {
                char *f = fresh(n);
                fr.push_back(fused_d2h(f, dev, n, pr.first, pr.second, T, buf, ev, s));
                ok = ok && memcmp(f, pat.data(), n) == 0;
                munmap(f, n);
                to.push_back(fused_d2h(touched, dev, n, pr.first, pr.second, T, buf, ev, s));
            }
            printf("fused pieces %zu MiB x %d, %2d threads: fresh %.1f GB/s (%.2fx pinned, min-max %.1f-%.1f), touched %.1f GB/s (%.2fx)%s\n",
                   pr.first >> 20, pr.second, T, n / median(fr) / 1e9, tout / median(fr),
                   n / *std::max_element(fr.begin(), fr.end()) / 1e9, n / *std::min_element(fr.begin(), fr.end()) / 1e9,
                   n / median(to) / 1e9, tout / median(to), ok ? "" : " WRONG");
        }
        for (auto &b : buf) CK(cudaFreeHost(b));
    }
}

static void ntcopy_probe() {
    const size_t n = (size_t)1 << 30;
    char *a = fresh(n), *b = fresh(n);
    par(16, n, [&](size_t o, size_t l) { memset(a + o, 3, l); memset(b + o, 4, l); });
    for (int t : {4, 8, 12, 16}) {
        std::vector<double> m, nt, fm, fnt;
        for (int r = 0; r < 3; r++) {
            double t0 = now(); par(t, n, [&](size_t o, size_t l) { memcpy(b + o, a + o, l); }); m.push_back(now() - t0);
            t0 = now(); par(t, n, [&](size_t o, size_t l) { nt_copy(b + o, a + o, l); }); nt.push_back(now() - t0);
            char *f = fresh(n);
            t0 = now(); par(t, n, [&](size_t o, size_t l) { memcpy(f + o, a + o, l); }); fm.push_back(now() - t0);
            munmap(f, n);
            f = fresh(n);
            t0 = now(); par(t, n, [&](size_t o, size_t l) { nt_copy(f + o, a + o, l); }); fnt.push_back(now() - t0);
            if (memcmp(f, a, n) != 0) printf("nt copy wrong\n");
            munmap(f, n);
        }
        printf("nt %2d threads: touched memcpy %.1f, nt %.1f GB/s; into fresh memory memcpy %.1f, nt %.1f GB/s\n", t,
               n / median(m) / 1e9, n / median(nt) / 1e9, n / median(fm) / 1e9, n / median(fnt) / 1e9);
    }
    munmap(a, n);
    munmap(b, n);
}

int main(int argc, char **argv) {
    std::string what = argc > 1 ? argv[1] : "all";
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int clk = 0;
    cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
    printf("device %s, %d SMs, clock %d kHz\n", prop.name, prop.multiProcessorCount, clk);
    if (what == "all" || what == "launch") launch_costs();
    if (what == "all" || what == "host") host_d2h();
    if (what == "host2") host2();
    if (what == "hints") hints();
    if (what == "launch2") launch2();
    if (what == "staging") staging();
    if (what == "register") register_probe();
    if (what == "ntcopy") ntcopy_probe();
    if (what == "fused") fused_probe();
    if (what == "ntstaging") { copy_fn = nt_copy; staging(); }
    if (what == "wake") for (int m : {0, 1, 2}) { pool_mode = m; printf("pool mode %d\n", m); staging(); }
    if (what == "all" || what == "f32") elementwise<float>("f32");
    if (what == "all" || what == "f64") elementwise<double>("f64");
    return 0;
}
