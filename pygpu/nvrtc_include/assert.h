/* pygpu: <assert.h> for NVRTC: assert() stops the kernel as nvcc's does
 * (__assertfail, which NVRTC declares). */
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, __func__, sizeof(char)))
#endif
