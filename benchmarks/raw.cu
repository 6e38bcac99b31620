// The raw CUDA C baseline for pygpu's benchmarks: what a C program gets from
// the CUDA runtime with no Python in the way. Built by `python -m benchmarks`
// twice:
//
// - as a program, run in a child process, which prints one JSON object:
//     raw [vector_n] [add_one_side] [transfer_bytes] [launch|peer]
// - with -DPG_RAW_LIB as a shared library (no main) that the benchmark loads
//   into its own process with ctypes, for the launch costs: raw C's bursts of
//   `<<<>>>` then run interleaved with pygpu's, round after round, in the same
//   process, on the same (primary) context. Each call of the pg_raw_* functions
//   below is one burst; the caller takes the medians.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(e_));           \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

__global__ void add_one_tiny(float *a, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] += 1.0f;
    }
}

__global__ void add_one4(float *a, long long n, float *b, float *c)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] += b[i] + c[i];
    }
}

// the kernels of the launch forms: 2, 3 and 4 arguments
__global__ void add3(float *a, const float *b, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] += b[i];
    }
}

__global__ void add4(const float *a, const float *b, float *out, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = a[i] + b[i];
    }
}

__global__ void vector_add(const float *a, const float *b, float *out, long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        out[i] = a[i] + b[i];
    }
}

__global__ void fill(float *a, long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        a[i] = (float)(i % 1000) * 0.001f;
    }
}

static double now_us()
{
    return std::chrono::duration<double, std::micro>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

inline double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median over bursts of `burst` launches of the host time per launch.
template <class F> static double launch_us(F launch, int bursts = 200, int burst = 256)
{
    std::vector<double> per;
    for (int b = 0; b < bursts; b++) {
        CHECK(cudaDeviceSynchronize());
        double t0 = now_us();
        for (int i = 0; i < burst; i++) {
            launch();
        }
        per.push_back((now_us() - t0) / burst);
    }
    CHECK(cudaDeviceSynchronize());
    return median(per);
}

// Median GPU milliseconds of f() between two events.
template <class F> static double gpu_ms(F f, int reps = 20)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    f();
    CHECK(cudaDeviceSynchronize());
    std::vector<double> t;
    for (int r = 0; r < reps; r++) {
        CHECK(cudaEventRecord(a));
        f();
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    return median(t);
}

// Median wall-clock milliseconds of a synchronous f().
template <class F> static double wall_ms(F f, int reps = 5)
{
    f();
    std::vector<double> t;
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        f();
        CHECK(cudaDeviceSynchronize());
        t.push_back((now_us() - t0) / 1e3);
    }
    return median(t);
}

#ifdef PG_RAW_LIB
// ---- the shared library: one burst per call ------------------------------------
// Every function synchronizes the device first, so that no burst pays for the
// work queued by the one before it (pygpu's bursts are timed the same way),
// and returns microseconds per launch, or -1 on a CUDA error (printed).

#define LIB_CHECK(call)                                                                \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "raw C: %s failed: %s\n", #call, cudaGetErrorName(e_));    \
            return -1.0;                                                               \
        }                                                                              \
    } while (0)

static float *lib_a, *lib_b, *lib_c;
static const long long lib_n = 32;

static void launch_form(int nargs)
{
    switch (nargs) {
    case 2:
        add_one_tiny<<<1, 32>>>(lib_a, lib_n);
        break;
    case 3:
        add3<<<1, 32>>>(lib_a, lib_b, lib_n);
        break;
    default:
        add4<<<1, 32>>>(lib_a, lib_b, lib_c, lib_n);
        break;
    }
}

// Device 0 made current, three arrays of 32 floats.
extern "C" double pg_raw_init(void)
{
    LIB_CHECK(cudaSetDevice(0));
    LIB_CHECK(cudaMalloc(&lib_a, 3 * lib_n * sizeof(float)));
    LIB_CHECK(cudaMemset(lib_a, 0, 3 * lib_n * sizeof(float)));
    lib_b = lib_a + lib_n;
    lib_c = lib_b + lib_n;
    cudaMemPool_t pool;
    LIB_CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
    unsigned long long threshold = ~0ULL;
    LIB_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    return 0.0;
}

// Host time per `kernel<<<1, 32>>>(...)` with `nargs` (2, 3 or 4) arguments,
// over `count` launches; with `alloc`, each launch of 4 arguments writes into
// memory from cudaMallocAsync, freed by cudaFreeAsync after it (what `d + e`
// does: a new array each time, from a pool).
extern "C" double pg_raw_burst(int nargs, int count, int alloc)
{
    LIB_CHECK(cudaDeviceSynchronize());
    double t0 = now_us();
    if (alloc) {
        for (int i = 0; i < count; i++) {
            float *out;
            LIB_CHECK(cudaMallocAsync(&out, lib_n * sizeof(float), 0));
            add4<<<1, 32>>>(lib_a, lib_b, out, lib_n);
            LIB_CHECK(cudaFreeAsync(out, 0));
        }
    } else {
        for (int i = 0; i < count; i++) {
            launch_form(nargs);
        }
    }
    double t = (now_us() - t0) / count;
    LIB_CHECK(cudaGetLastError());
    return t;
}

// Wall time per launch of `count` launches of 2 arguments and a
// cudaDeviceSynchronize after them: what a CUDA graph of the same launches
// is compared to.
extern "C" double pg_raw_sync_burst(int count)
{
    LIB_CHECK(cudaDeviceSynchronize());
    double t0 = now_us();
    for (int i = 0; i < count; i++) {
        launch_form(2);
    }
    LIB_CHECK(cudaDeviceSynchronize());
    return (now_us() - t0) / count;
}

// The same `count` launches captured once into a CUDA graph (stream capture on
// a stream of its own); wall time per launch of one cudaGraphLaunch and a
// cudaDeviceSynchronize.
extern "C" double pg_raw_graph_burst(int count)
{
    static cudaGraphExec_t exec;
    static cudaStream_t stream;
    static int captured = -1;
    if (captured != count) {
        if (captured > 0) {
            LIB_CHECK(cudaGraphExecDestroy(exec));
        } else {
            LIB_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        }
        cudaGraph_t graph;
        LIB_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < count; i++) {
            add_one_tiny<<<1, 32, 0, stream>>>(lib_a, lib_n);
        }
        LIB_CHECK(cudaStreamEndCapture(stream, &graph));
        LIB_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        LIB_CHECK(cudaGraphDestroy(graph));
        captured = count;
    }
    LIB_CHECK(cudaDeviceSynchronize());
    double t0 = now_us();
    LIB_CHECK(cudaGraphLaunch(exec, stream));
    LIB_CHECK(cudaDeviceSynchronize());
    return (now_us() - t0) / count;
}

#else /* the program */

int main(int argc, char **argv)
{
    long long n = argc > 1 ? atoll(argv[1]) : (1LL << 28);
    long long side = argc > 2 ? atoll(argv[2]) : 16384;
    size_t tbytes = argc > 3 ? (size_t)atoll(argv[3]) : ((size_t)1 << 30);
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    CHECK(cudaFree(0));

    float *tiny, *a, *b, *c;
    CHECK(cudaMalloc(&tiny, 32 * sizeof(float)));
    CHECK(cudaMemset(tiny, 0, 32 * sizeof(float)));
    double launch = launch_us([&] { add_one_tiny<<<1, 32>>>(tiny, 32); });
    double launch4 = launch_us([&] { add_one4<<<1, 32>>>(tiny, 32, tiny, tiny); });
    if (argc > 4 && std::string(argv[4]) == "peer") { /* device 1 -> device 0 */
        int count = 0, can01 = 0, can10 = 0;
        CHECK(cudaGetDeviceCount(&count));
        if (count < 2) {
            printf("{}\n");
            return 0;
        }
        char *d0, *d1;
        CHECK(cudaSetDevice(1));
        CHECK(cudaMalloc(&d1, tbytes));
        CHECK(cudaMemset(d1, 1, tbytes));
        CHECK(cudaDeviceCanAccessPeer(&can10, 1, 0));
        if (can10) {
            cudaDeviceEnablePeerAccess(0, 0);
        }
        CHECK(cudaSetDevice(0));
        CHECK(cudaMalloc(&d0, tbytes));
        CHECK(cudaDeviceCanAccessPeer(&can01, 0, 1));
        if (can01) {
            cudaDeviceEnablePeerAccess(1, 0);
        }
        (void)cudaGetLastError();
        double peer = wall_ms([&] { CHECK(cudaMemcpyPeer(d0, 0, d1, 1, tbytes)); });
        printf("{\"peer_gbs\": %.2f, \"peer_access\": %d}\n",
               (double)tbytes / 1e9 / (peer / 1e3), can01 && can10);
        return 0;
    }
    if (argc > 4 && std::string(argv[4]) == "launch") { /* the launch figures alone */
        printf("{\"launch_us\": %.3f, \"launch4_us\": %.3f}\n", launch, launch4);
        return 0;
    }
    std::vector<double> ls;
    for (int r = 0; r < 2000; r++) {
        double t0 = now_us();
        add_one_tiny<<<1, 32>>>(tiny, 32);
        CHECK(cudaDeviceSynchronize());
        ls.push_back(now_us() - t0);
    }
    double launch_sync = median(ls);

    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMalloc(&c, n * sizeof(float)));
    fill<<<4096, 256>>>(a, n);
    fill<<<4096, 256>>>(b, n);
    double copy_ms = gpu_ms([&] {
        CHECK(cudaMemcpyAsync(c, a, n * sizeof(float), cudaMemcpyDeviceToDevice));
    });
    int blocks = prop.multiProcessorCount * 8;
    double add_ms = gpu_ms([&] { vector_add<<<blocks, 256>>>(a, b, c, n); });
    CHECK(cudaGetLastError());
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));

    // transfers
    char *dev, *pageable, *pinned;
    CHECK(cudaMalloc(&dev, tbytes));
    pageable = (char *)malloc(tbytes);
    for (size_t i = 0; i < tbytes; i += 4096) {
        pageable[i] = (char)i;
    }
    CHECK(cudaMallocHost(&pinned, tbytes));
    double h2d_pageable = wall_ms([&] {
        CHECK(cudaMemcpy(dev, pageable, tbytes, cudaMemcpyHostToDevice));
    });
    double d2h_pageable = wall_ms([&] {
        CHECK(cudaMemcpy(pageable, dev, tbytes, cudaMemcpyDeviceToHost));
    });
    double h2d_pinned = wall_ms([&] {
        CHECK(cudaMemcpy(dev, pinned, tbytes, cudaMemcpyHostToDevice));
    });
    double d2h_pinned = wall_ms([&] {
        CHECK(cudaMemcpy(pinned, dev, tbytes, cudaMemcpyDeviceToHost));
    });
    // device to host into freshly allocated (untouched) host memory, as a new
    // numpy array would be
    std::vector<double> fresh;
    for (int r = 0; r < 3; r++) {
        char *h = (char *)malloc(tbytes);
        double t0 = now_us();
        CHECK(cudaMemcpy(h, dev, tbytes, cudaMemcpyDeviceToHost));
        fresh.push_back((now_us() - t0) / 1e3);
        free(h);
    }
    double d2h_new = median(fresh);
    CHECK(cudaFreeHost(pinned));
    free(pageable);
    CHECK(cudaFree(dev));

    // allocation of 1 MiB
    std::vector<double> al, al_async;
    for (int r = 0; r < 200; r++) {
        void *p;
        double t0 = now_us();
        for (int i = 0; i < 50; i++) {
            CHECK(cudaMalloc(&p, 1 << 20));
            CHECK(cudaFree(p));
        }
        al.push_back((now_us() - t0) / 50);
    }
    cudaMemPool_t pool;
    CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
    unsigned long long threshold = ~0ULL;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    for (int r = 0; r < 200; r++) {
        void *p;
        double t0 = now_us();
        for (int i = 0; i < 50; i++) {
            CHECK(cudaMallocAsync(&p, 1 << 20, 0));
            CHECK(cudaFreeAsync(p, 0));
        }
        al_async.push_back((now_us() - t0) / 50);
    }
    CHECK(cudaDeviceSynchronize());

    double gib = (double)tbytes / 1e9;
    printf("{\"device\": \"%s\", \"launch_us\": %.3f, \"launch4_us\": %.3f, "
           "\"launch_sync_us\": %.3f, \"d2d_gbs\": %.1f, \"add_gbs\": %.1f, "
           "\"h2d_pageable_gbs\": %.2f, \"d2h_pageable_gbs\": %.2f, "
           "\"d2h_new_gbs\": %.2f, \"h2d_pinned_gbs\": %.2f, \"d2h_pinned_gbs\": %.2f, "
           "\"malloc_free_us\": %.3f, \"malloc_async_free_async_us\": %.3f}\n",
           prop.name, launch, launch4, launch_sync,
           2.0 * n * sizeof(float) / (copy_ms * 1e6),
           3.0 * n * sizeof(float) / (add_ms * 1e6), gib / (h2d_pageable / 1e3),
           gib / (d2h_pageable / 1e3), gib / (d2h_new / 1e3), gib / (h2d_pinned / 1e3),
           gib / (d2h_pinned / 1e3), median(al), median(al_async));
    return 0;
}
#endif /* PG_RAW_LIB */
