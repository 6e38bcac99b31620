/* The CUDA runtime behind pg_backend. Compiled only when the CUDA toolkit was
 * found at build time; cudart is linked statically, so at run time only the
 * driver (libcuda.so.1) is needed, and its absence is an error code, not a
 * failed import. */
#include "runtime.h"

#ifdef PG_HAVE_CUDA
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

/* The runtime remembers a failed call's error until cudaGetLastError() reads
 * it, and a later launch would report it as its own: consume it here, so that
 * each call reports only its own error. Sticky errors stay regardless. */
static pg_err
ret(cudaError_t e)
{
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
    }
    return (pg_err)e;
}

static pg_err
cuda_device_count(int *count)
{
    pg_err err;
    *count = 0;
    err = ret(cudaGetDeviceCount(count));
    if (*count > PG_MAX_DEVICES) {
        *count = PG_MAX_DEVICES; /* pygpu uses the first PG_MAX_DEVICES */
    }
    return err;
}

static int
attr(int device, enum cudaDeviceAttr a, pg_err *err)
{
    int value = 0;
    cudaError_t e = cudaDeviceGetAttribute(&value, a, device);
    if (e != cudaSuccess && *err == PG_SUCCESS) {
        *err = ret(e);
    }
    return value;
}

static pg_err
cuda_get_props(int device, pg_device_props *p)
{
    struct cudaDeviceProp prop;
    pg_err err = ret(cudaGetDeviceProperties(&prop, device));
    if (err != PG_SUCCESS) {
        return err;
    }
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "%s", prop.name);
    p->total_memory = prop.totalGlobalMem;
    p->shared_memory_per_block = prop.sharedMemPerBlock;
    p->shared_memory_per_block_optin = prop.sharedMemPerBlockOptin;
    p->shared_memory_per_multiprocessor = prop.sharedMemPerMultiprocessor;
    p->total_constant_memory = prop.totalConstMem;
    p->major = attr(device, cudaDevAttrComputeCapabilityMajor, &err);
    p->minor = attr(device, cudaDevAttrComputeCapabilityMinor, &err);
    p->multiprocessor_count = attr(device, cudaDevAttrMultiProcessorCount, &err);
    p->warp_size = attr(device, cudaDevAttrWarpSize, &err);
    p->max_threads_per_block = attr(device, cudaDevAttrMaxThreadsPerBlock, &err);
    p->max_block_dim[0] = attr(device, cudaDevAttrMaxBlockDimX, &err);
    p->max_block_dim[1] = attr(device, cudaDevAttrMaxBlockDimY, &err);
    p->max_block_dim[2] = attr(device, cudaDevAttrMaxBlockDimZ, &err);
    p->max_grid_dim[0] = attr(device, cudaDevAttrMaxGridDimX, &err);
    p->max_grid_dim[1] = attr(device, cudaDevAttrMaxGridDimY, &err);
    p->max_grid_dim[2] = attr(device, cudaDevAttrMaxGridDimZ, &err);
    p->max_threads_per_multiprocessor =
        attr(device, cudaDevAttrMaxThreadsPerMultiProcessor, &err);
    p->registers_per_block = attr(device, cudaDevAttrMaxRegistersPerBlock, &err);
    p->l2_cache_size = attr(device, cudaDevAttrL2CacheSize, &err);
    p->clock_rate_khz = attr(device, cudaDevAttrClockRate, &err);
    p->memory_clock_rate_khz = attr(device, cudaDevAttrMemoryClockRate, &err);
    p->memory_bus_width = attr(device, cudaDevAttrGlobalMemoryBusWidth, &err);
    p->concurrent_kernels = attr(device, cudaDevAttrConcurrentKernels, &err);
    p->async_engine_count = attr(device, cudaDevAttrAsyncEngineCount, &err);
    p->unified_addressing = attr(device, cudaDevAttrUnifiedAddressing, &err);
    p->integrated = attr(device, cudaDevAttrIntegrated, &err);
    p->ecc_enabled = attr(device, cudaDevAttrEccEnabled, &err);
    p->cooperative_launch = attr(device, cudaDevAttrCooperativeLaunch, &err);
    p->memory_pools_supported = attr(device, cudaDevAttrMemoryPoolsSupported, &err);
    if (err == PG_SUCCESS) {
        err = ret(
            cudaDeviceGetPCIBusId(p->pci_bus_id, (int)sizeof(p->pci_bus_id), device));
    }
    return err;
}

static pg_err
cuda_set_device(int device)
{
    return ret(cudaSetDevice(device));
}

static pg_err
cuda_get_device(int *device)
{
    return ret(cudaGetDevice(device));
}

static pg_err
cuda_mem_get_info(size_t *free_bytes, size_t *total_bytes)
{
    return ret(cudaMemGetInfo(free_bytes, total_bytes));
}

static pg_err
cuda_malloc(void **ptr, size_t size)
{
    return ret(cudaMalloc(ptr, size));
}

static pg_err
cuda_free(void *ptr)
{
    return ret(cudaFree(ptr));
}

/* What a capture cannot record is refused before the runtime sees it (an
 * illegal call would invalidate the capture): capture.c keeps the streams
 * under capture, for both backends alike. Synchronous copies and memsets
 * are refused on a capturing thread: they would run at once, on the legacy
 * stream, among work that is only recorded. */
static pg_err
cuda_memcpy(void *dst, const void *src, size_t size, int kind)
{
    if (pg_capture_thread()) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    enum cudaMemcpyKind k = kind == PG_MEMCPY_H2D   ? cudaMemcpyHostToDevice
                            : kind == PG_MEMCPY_D2H ? cudaMemcpyDeviceToHost
                                                    : cudaMemcpyDeviceToDevice;
    return ret(cudaMemcpy(dst, src, size, k));
}

static pg_err
cuda_memset(void *ptr, int value, size_t size)
{
    if (pg_capture_thread()) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return ret(cudaMemset(ptr, value, size));
}

/* the device, with a stream of it under capture, cannot be waited for */
static pg_err
cuda_synchronize(void)
{
    int device = 0;
    if (pg_capture_thread() ||
        (cudaGetDevice(&device) == cudaSuccess && pg_capture_device(device))) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return ret(cudaDeviceSynchronize());
}

static pg_err
cuda_stream_create(pg_stream *stream)
{
    return ret(cudaStreamCreateWithFlags((cudaStream_t *)stream, cudaStreamDefault));
}

static pg_err
cuda_stream_destroy(pg_stream stream)
{
    return ret(cudaStreamDestroy((cudaStream_t)stream));
}

static pg_err
cuda_stream_synchronize(pg_stream stream)
{
    if (pg_capture_thread() || pg_capture_stream(stream)) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return ret(cudaStreamSynchronize((cudaStream_t)stream));
}

static pg_err
cuda_stream_query(pg_stream stream)
{
    if (pg_capture_stream(stream)) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return ret(cudaStreamQuery((cudaStream_t)stream));
}

/* A stream under capture neither waits for events nor records them: a
 * capture records one stream's work alone (an event would fork other streams
 * into it, or tie it to work outside it). */
static pg_err
cuda_stream_wait_event(pg_stream stream, pg_event event)
{
    if (pg_capture_stream(stream)) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return ret(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0));
}

static pg_err
cuda_event_create(pg_event *event, int timing)
{
    return ret(cudaEventCreateWithFlags(
        (cudaEvent_t *)event, timing ? cudaEventDefault : cudaEventDisableTiming));
}

static pg_err
cuda_event_destroy(pg_event event)
{
    return ret(cudaEventDestroy((cudaEvent_t)event));
}

static pg_err
cuda_event_record(pg_event event, pg_stream stream)
{
    if (pg_capture_stream(stream)) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return ret(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream));
}

static pg_err
cuda_event_synchronize(pg_event event)
{
    if (pg_capture_thread()) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return ret(cudaEventSynchronize((cudaEvent_t)event));
}

static pg_err
cuda_event_query(pg_event event)
{
    return ret(cudaEventQuery((cudaEvent_t)event));
}

static pg_err
cuda_event_elapsed_ms(float *ms, pg_event start, pg_event end)
{
    return ret(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end));
}

/* On a stream under capture, only device-to-device copies are recorded: a
 * copy between host and device is refused, pageable or pinned. */
static pg_err
cuda_memcpy_async(void *dst, const void *src, size_t size, int kind, pg_stream stream)
{
    if (kind != PG_MEMCPY_D2D && pg_capture_stream(stream)) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    enum cudaMemcpyKind k = kind == PG_MEMCPY_H2D   ? cudaMemcpyHostToDevice
                            : kind == PG_MEMCPY_D2H ? cudaMemcpyDeviceToHost
                                                    : cudaMemcpyDeviceToDevice;
    return ret(cudaMemcpyAsync(dst, src, size, k, (cudaStream_t)stream));
}

static pg_err
cuda_memset_async(void *ptr, int value, size_t size, pg_stream stream)
{
    return ret(cudaMemsetAsync(ptr, value, size, (cudaStream_t)stream));
}

static pg_err
cuda_can_access_peer(int device, int peer, int *can)
{
    *can = 0;
    return ret(cudaDeviceCanAccessPeer(can, device, peer));
}

/* cudaDeviceEnablePeerAccess acts for the current device: make `device`
 * current for the call, then restore the caller's. */
static pg_err
cuda_enable_peer_access(int device, int peer)
{
    int prev = 0;
    pg_err err = ret(cudaGetDevice(&prev));
    if (err != PG_SUCCESS) {
        return err;
    }
    if (prev != device && (err = ret(cudaSetDevice(device))) != PG_SUCCESS) {
        return err;
    }
    err = ret(cudaDeviceEnablePeerAccess(peer, 0));
    if (err == PG_ERR_PEER_ACCESS_ALREADY_ENABLED) {
        err = PG_SUCCESS;
    }
    if (prev != device) {
        pg_err back = ret(cudaSetDevice(prev));
        err = err != PG_SUCCESS ? err : back;
    }
    return err;
}

/* Not captured: a copy between devices orders the streams of both (copy.c),
 * which would join a stream of another device to the capture. */
static pg_err
cuda_memcpy_peer_async(void *dst, int dst_device, const void *src, int src_device,
                       size_t size, pg_stream stream)
{
    if (pg_capture_stream(stream)) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return ret(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, size,
                                   (cudaStream_t)stream));
}

static pg_err
cuda_host_alloc(void **ptr, size_t size)
{
    return ret(cudaHostAlloc(ptr, size, cudaHostAllocPortable));
}

static pg_err
cuda_host_free(void *ptr)
{
    return ret(cudaFreeHost(ptr));
}

static int
cuda_is_pinned(const void *ptr)
{
    struct cudaPointerAttributes attr;
    if (ret(cudaPointerGetAttributes(&attr, ptr)) != PG_SUCCESS) {
        return 0;
    }
    return attr.type == cudaMemoryTypeHost;
}

/* nothing on a GPU tracks which bytes were written */
static void
cuda_mark_unwritten(void *ptr)
{
    (void)ptr;
}

static int
cuda_pointer_device(const void *ptr)
{
    struct cudaPointerAttributes attr;
    if (ret(cudaPointerGetAttributes(&attr, ptr)) != PG_SUCCESS ||
        (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)) {
        return -1;
    }
    return attr.device;
}

/* The driver API, reached through the runtime's entry points (no link to
 * libcuda): CUresult values match cudaError_t's for the errors met here. */
typedef int (*cu_address_range_t)(unsigned long long *, size_t *, unsigned long long);
typedef int (*cu_module_load_t)(void **, const void *);
typedef int (*cu_module_unload_t)(void *);
typedef int (*cu_module_function_t)(void **, void *, const char *);
typedef int (*cu_module_global_t)(unsigned long long *, size_t *, void *, const char *);
typedef int (*cu_param_info_t)(void *, size_t, size_t *, size_t *);
typedef int (*cu_launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, void *, void **, void **);
typedef int (*cu_launch_cooperative_t)(void *, unsigned, unsigned, unsigned, unsigned,
                                       unsigned, unsigned, unsigned, void *, void **);
typedef int (*cu_occupancy_t)(int *, void *, int, size_t);

static void *
driver_fn(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult status;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12040, cudaEnableDefault,
                                         &status) != cudaSuccess ||
        status != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return fn;
}

/* The allocation that holds a device pointer (cuMemGetAddressRange): 1, the
 * extent unknown, where the driver cannot say; -1 for no device memory. */
static int
cuda_pointer_range(const void *ptr, void **base, size_t *size)
{
    static cu_address_range_t fn;
    unsigned long long b = 0;
    if (cuda_pointer_device(ptr) < 0) {
        return -1;
    }
    if (fn == NULL &&
        (fn = (cu_address_range_t)driver_fn("cuMemGetAddressRange")) == NULL) {
        return 1;
    }
    if (fn(&b, size, (unsigned long long)(uintptr_t)ptr) != 0) {
        return 1;
    }
    *base = (void *)(uintptr_t)b;
    return 0;
}

/* The entry point is the call pg_call_names gives for the operation `op`. */
#define DRIVER_CALL(type, op, ...)                                                     \
    do {                                                                               \
        static type fn_;                                                               \
        if (fn_ == NULL && (fn_ = (type)driver_fn(pg_call_names.op)) == NULL) {        \
            return PG_ERR_NOT_SUPPORTED;                                               \
        }                                                                              \
        return (pg_err)fn_(__VA_ARGS__);                                               \
    } while (0)

static pg_err
cuda_module_load(void **module, const void *image)
{
    DRIVER_CALL(cu_module_load_t, module_load, module, image);
}

static pg_err
cuda_module_unload(void *module)
{
    DRIVER_CALL(cu_module_unload_t, module_unload, module);
}

static pg_err
cuda_module_function(void **function, void *module, const char *name)
{
    DRIVER_CALL(cu_module_function_t, module_function, function, module, name);
}

static pg_err
cuda_module_global(void **ptr, size_t *size, void *module, const char *name)
{
    DRIVER_CALL(cu_module_global_t, module_global, (unsigned long long *)ptr, size,
                module, name);
}

static pg_err
cuda_function_param(void *function, size_t index, size_t *offset, size_t *size)
{
    DRIVER_CALL(cu_param_info_t, function_param, function, index, offset, size);
}

static pg_err
cuda_launch_function(void *function, pg_dim3 grid, pg_dim3 block,
                     unsigned int shared_bytes, pg_stream stream, void **params)
{
    DRIVER_CALL(cu_launch_t, launch_function, function, grid.x, grid.y, grid.z, block.x,
                block.y, block.z, shared_bytes, stream, params, NULL);
}

static pg_err
cuda_launch_cooperative(void *function, pg_dim3 grid, pg_dim3 block,
                        unsigned int shared_bytes, pg_stream stream, void **params)
{
    DRIVER_CALL(cu_launch_cooperative_t, launch_cooperative, function, grid.x, grid.y,
                grid.z, block.x, block.y, block.z, shared_bytes, stream, params);
}

static pg_err
cuda_cooperative_max_blocks(void *function, pg_dim3 block, unsigned int shared_bytes,
                            int device, unsigned long long *blocks)
{
    static cu_occupancy_t fn;
    int per_sm = 0, sms = 0;
    pg_err err;
    *blocks = 0;
    if (fn == NULL && (fn = (cu_occupancy_t)driver_fn(
                           pg_call_names.cooperative_max_blocks)) == NULL) {
        return PG_ERR_NOT_SUPPORTED;
    }
    if ((err = (pg_err)fn(&per_sm, function, (int)(block.x * block.y * block.z),
                          shared_bytes)) != PG_SUCCESS ||
        (err = ret(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                          device))) != PG_SUCCESS) {
        return err;
    }
    *blocks = (unsigned long long)per_sm * (unsigned long long)sms;
    return PG_SUCCESS;
}

/* ---- CUDA graphs by stream capture ------------------------------------------ */

static pg_err
cuda_stream_create_nonblocking(pg_stream *stream)
{
    return ret(
        cudaStreamCreateWithFlags((cudaStream_t *)stream, cudaStreamNonBlocking));
}

/* Relaxed: pygpu's pool may call cudaMalloc while the thread captures (a
 * result allocated in the block), which the other modes forbid; what must
 * not happen during a capture is refused by the operations above. */
static pg_err
cuda_stream_begin_capture(pg_stream stream)
{
    int device = 0;
    pg_err err = ret(cudaGetDevice(&device));
    if (err != PG_SUCCESS || (err = pg_capture_begin(stream, device)) != PG_SUCCESS) {
        return err;
    }
    err =
        ret(cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeRelaxed));
    if (err != PG_SUCCESS) {
        pg_capture_end(stream);
    }
    return err;
}

/* Ends the capture whatever happened; *graph is NULL if it was invalidated. */
static pg_err
cuda_stream_end_capture(pg_stream stream, pg_graph *graph)
{
    cudaGraph_t g = NULL;
    pg_err err = ret(cudaStreamEndCapture((cudaStream_t)stream, &g));
    pg_capture_end(stream);
    if (err != PG_SUCCESS && g != NULL) {
        (void)cudaGraphDestroy(g);
        g = NULL;
    }
    *graph = g;
    return err;
}

static pg_err
cuda_graph_node_count(pg_graph graph, size_t *count)
{
    *count = 0;
    return ret(cudaGraphGetNodes((cudaGraph_t)graph, NULL, count));
}

static pg_err
cuda_graph_instantiate(pg_graph_exec *exec, pg_graph graph)
{
    return ret(
        cudaGraphInstantiateWithFlags((cudaGraphExec_t *)exec, (cudaGraph_t)graph, 0));
}

static pg_err
cuda_graph_destroy(pg_graph graph)
{
    return ret(cudaGraphDestroy((cudaGraph_t)graph));
}

/* A graph launched into a stream under capture would be a child graph of
 * that capture: refused, as on the simulator. */
static pg_err
cuda_graph_launch(pg_graph_exec exec, pg_stream stream)
{
    if (pg_capture_stream(stream)) {
        return PG_ERR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return ret(cudaGraphLaunch((cudaGraphExec_t)exec, (cudaStream_t)stream));
}

/* Launches still running finish first; the runtime frees it after them. */
static pg_err
cuda_graph_exec_destroy(pg_graph_exec exec)
{
    return ret(cudaGraphExecDestroy((cudaGraphExec_t)exec));
}

static pg_err
cuda_get_last_error(void)
{
    return (pg_err)cudaGetLastError();
}

static const char *
cuda_error_name(pg_err err)
{
    return cudaGetErrorName((cudaError_t)err);
}

static const char *
cuda_error_string(pg_err err)
{
    return cudaGetErrorString((cudaError_t)err);
}

static int
cuda_driver_version(void)
{
    int v = 0;
    if (cudaDriverGetVersion(&v) != cudaSuccess) {
        return 0;
    }
    return v;
}

static int
cuda_runtime_version(void)
{
    int v = 0;
    if (cudaRuntimeGetVersion(&v) != cudaSuccess) {
        return 0;
    }
    return v;
}

static pg_err
cuda_ensure_context(void)
{
    /* the driver API needs the runtime's context: cudaFree(NULL) makes it */
    return ret(cudaFree(NULL));
}

static const pg_backend cuda_backend = {
    .name = "cuda",
    .caps = PG_CAP_STAGES_PAGEABLE | PG_CAP_STICKY_FAULTS | PG_CAP_RUNTIME_COMPILE |
            PG_CAP_FORK_UNSAFE,
    .ensure_context = cuda_ensure_context,
    .device_count = cuda_device_count,
    .get_props = cuda_get_props,
    .set_device = cuda_set_device,
    .get_device = cuda_get_device,
    .mem_get_info = cuda_mem_get_info,
    .malloc = cuda_malloc,
    .free = cuda_free,
    .memcpy = cuda_memcpy,
    .memset = cuda_memset,
    .synchronize = cuda_synchronize,
    .get_last_error = cuda_get_last_error,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_synchronize = cuda_stream_synchronize,
    .stream_query = cuda_stream_query,
    .stream_wait_event = cuda_stream_wait_event,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_synchronize = cuda_event_synchronize,
    .event_query = cuda_event_query,
    .event_elapsed_ms = cuda_event_elapsed_ms,
    .memcpy_async = cuda_memcpy_async,
    .memset_async = cuda_memset_async,
    .can_access_peer = cuda_can_access_peer,
    .enable_peer_access = cuda_enable_peer_access,
    .memcpy_peer_async = cuda_memcpy_peer_async,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .is_pinned = cuda_is_pinned,
    .pointer_device = cuda_pointer_device,
    .pointer_range = cuda_pointer_range,
    .mark_unwritten = cuda_mark_unwritten,
    .config_error = NULL,     /* no settings of its own */
    .access_fault = NULL,     /* a kernel that reaches too far faults */
    .kernel_fault = NULL,     /* a GPU's faults say no more than their code */
    .set_python_hooks = NULL, /* launches run on the GPU */
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .module_function = cuda_module_function,
    .module_global = cuda_module_global,
    .function_param = cuda_function_param,
    .launch_function = cuda_launch_function,
    .launch_cooperative = cuda_launch_cooperative,
    .cooperative_max_blocks = cuda_cooperative_max_blocks,
    .stream_create_nonblocking = cuda_stream_create_nonblocking,
    .stream_begin_capture = cuda_stream_begin_capture,
    .stream_end_capture = cuda_stream_end_capture,
    .graph_node_count = cuda_graph_node_count,
    .graph_instantiate = cuda_graph_instantiate,
    .graph_destroy = cuda_graph_destroy,
    .graph_launch = cuda_graph_launch,
    .graph_exec_destroy = cuda_graph_exec_destroy,
    .compiler_load = pg_nvrtc_load,
    .compile = pg_nvrtc_compile,
    .blas_load = pg_cublas_load,
    .blas_gemm = pg_cublas_gemm,
    .blas_release = pg_cublas_release,
    .error_name = cuda_error_name,
    .error_string = cuda_error_string,
    .driver_version = cuda_driver_version,
    .runtime_version = cuda_runtime_version,
    .kernels = &pg_cuda_kernels,
};

const pg_backend *const pg_cuda_backend = &cuda_backend;

#else /* no CUDA toolkit at build time: the simulator alone */

const pg_backend *const pg_cuda_backend = NULL;

#endif
