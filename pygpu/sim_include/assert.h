/* pygpu's simulator: assert() in a kernel stops the launch and raises
 * pygpu.KernelAssertionError, naming the kernel, block, thread, file and line
 * (sim_prelude.h). This header stands in for the C library's, which would
 * abort the process. */
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : pg_sim::assert_failed(#e, __FILE__, __LINE__, __func__))
#endif
